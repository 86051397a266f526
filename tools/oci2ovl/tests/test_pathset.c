// SPDX-License-Identifier: GPL-2.0
/* the path set: a tree of components that answers as a set of paths */
#include "unit.h"

/* a path of 1..6 components drawn from a few short names */
static void lfs_random_path(char *buf, size_t len, unsigned int *seed)
{
	static const char *const names[] = { "a", "b", "ab", "usr", "lib", "x" };
	int depth = 1 + rand_r(seed) % 6, i;

	buf[0] = '\0';
	for (i = 0; i < depth; i++) {
		if (i)
			strncat(buf, "/", len - strlen(buf) - 1);
		strncat(buf, names[rand_r(seed) % 6], len - strlen(buf) - 1);
	}
}

static void test_the_set_answers_as_a_list_of_paths_would(void **state)
{
	enum { N = 3000 };
	static char paths[N][64];
	static int kinds[N];
	struct lfs_pathset *set = lfs_pathset_new();
	unsigned int seed = 23;
	size_t distinct = 0;
	int i, j;

	(void)state;
	assert_non_null(set);
	for (i = 0; i < N; i++) {
		lfs_random_path(paths[i], sizeof(paths[i]), &seed);
		kinds[i] = rand_r(&seed) % (LFS_NODE_WHITEOUT + 1);
		assert_int_equal(lfs_pathset_set(set, paths[i], kinds[i]), 0);
	}
	/* the last kind set for a path is its kind; a prefix only is none */
	for (i = 0; i < N; i++) {
		int want = kinds[i];

		for (j = i + 1; j < N; j++)
			if (!strcmp(paths[j], paths[i]))
				want = kinds[j];
		assert_int_equal(lfs_pathset_lookup(set, paths[i]), want);
		for (j = 0; j < i && strcmp(paths[j], paths[i]); j++)
			;
		distinct += j == i;
	}
	assert_int_equal(lfs_pathset_count(set), distinct);
	assert_int_equal(lfs_pathset_lookup(set, "nowhere"), -ENOENT);
	assert_int_equal(lfs_pathset_lookup(set, "a/b/ab/usr/lib/x/a"),
			 -ENOENT);
	assert_int_equal(lfs_pathset_lookup(set, ""), -ENOENT);
	lfs_pathset_free(set);
}

static void test_a_prefix_of_a_set_path_is_not_in_the_set(void **state)
{
	struct lfs_pathset *set = lfs_pathset_new();

	(void)state;
	assert_int_equal(lfs_pathset_set(set, "a/b/c", LFS_NODE_FILE), 0);
	assert_int_equal(lfs_pathset_lookup(set, "a"), -ENOENT);
	assert_int_equal(lfs_pathset_lookup(set, "a/b"), -ENOENT);
	assert_int_equal(lfs_pathset_lookup(set, "a/b/c"), LFS_NODE_FILE);
	assert_int_equal(lfs_pathset_lookup(set, "a/b/c/d"), -ENOENT);
	assert_int_equal(lfs_pathset_lookup(set, "a/bc"), -ENOENT);
	assert_int_equal(lfs_pathset_count(set), 1);
	assert_int_equal(lfs_pathset_set(set, "", LFS_NODE_DIR), 0);
	assert_int_equal(lfs_pathset_lookup(set, ""), LFS_NODE_DIR);
	assert_int_equal(lfs_pathset_count(set), 2);
	lfs_pathset_free(set);
}

static void test_a_walk_by_component_meets_the_paths_set(void **state)
{
	struct lfs_pathset *set = lfs_pathset_new();
	size_t n, m;

	(void)state;
	assert_int_equal(lfs_pathset_set(set, "usr/lib", LFS_NODE_DIR), 0);
	n = lfs_pathset_child(set, LFS_PATHSET_ROOT, "usr", 3);
	assert_int_not_equal(n, LFS_PATHSET_NONE);
	assert_int_equal(lfs_pathset_kind(set, n), -ENOENT);
	/* a name is its bytes, not a prefix of them */
	assert_int_equal(lfs_pathset_child(set, n, "li", 2), LFS_PATHSET_NONE);
	m = lfs_pathset_child(set, n, "lib/x", 3);
	assert_int_equal(lfs_pathset_kind(set, m), LFS_NODE_DIR);
	assert_int_equal(lfs_pathset_child(set, LFS_PATHSET_NONE, "a", 1),
			 LFS_PATHSET_NONE);
	assert_int_equal(lfs_pathset_kind(set, LFS_PATHSET_NONE), -ENOENT);
	/* add under a node: "usr" becomes a path of the set */
	assert_int_equal(lfs_pathset_add(set, LFS_PATHSET_ROOT, "usr", 3,
					 LFS_NODE_IMPLICIT_DIR, &m),
			 0);
	assert_int_equal(m, n);
	assert_int_equal(lfs_pathset_lookup(set, "usr"), LFS_NODE_IMPLICIT_DIR);
	assert_int_equal(
		lfs_pathset_add(set, n, "bin", 3, LFS_NODE_SYMLINK, NULL), 0);
	assert_int_equal(lfs_pathset_lookup(set, "usr/bin"), LFS_NODE_SYMLINK);
	assert_int_equal(lfs_pathset_count(set), 3);
	lfs_pathset_free(set);
}

static void test_deep_paths_hold_one_node_a_component(void **state)
{
	char *path = malloc(2 * 2000 + 16);
	struct lfs_pathset *set = lfs_pathset_new();
	size_t node = LFS_PATHSET_ROOT;
	int i;

	(void)state;
	for (i = 0; i < 2000; i++)
		memcpy(path + 2 * i, "d/", 2);
	for (i = 0; i < 1000; i++) {
		sprintf(path + 4000, "f%d", i);
		assert_int_equal(lfs_pathset_set(set, path, LFS_NODE_FILE), 0);
	}
	assert_int_equal(lfs_pathset_count(set), 1000);
	for (i = 0; i < 2000; i++) {
		node = lfs_pathset_child(set, node, "d", 1);
		assert_int_not_equal(node, LFS_PATHSET_NONE);
	}
	/* 2000 directories and 1000 files: node numbers are dense */
	assert_int_equal(
		lfs_pathset_kind(set, lfs_pathset_child(set, node, "f999", 4)),
		LFS_NODE_FILE);
	assert_int_equal(lfs_pathset_child(set, node, "f999", 4), 3000);
	free(path);
	lfs_pathset_free(set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_set_answers_as_a_list_of_paths_would),
		cmocka_unit_test(test_a_prefix_of_a_set_path_is_not_in_the_set),
		cmocka_unit_test(test_a_walk_by_component_meets_the_paths_set),
		cmocka_unit_test(test_deep_paths_hold_one_node_a_component),
	};

	return cmocka_run_group_tests_name("pathset", tests, NULL, NULL);
}
