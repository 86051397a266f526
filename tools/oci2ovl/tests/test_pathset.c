// SPDX-License-Identifier: GPL-2.0
/* the path set: a tree of components that answers as a set of paths */
#include "unit.h"

/*
 * the node of @path ("" the root), walked a component at a time; @make:
 * add what is missing (without a kind), else NULL when it is missing
 */
static struct lfs_pnode *lfs_test_walk(struct lfs_pathset *set,
				       const char *path, bool make)
{
	struct lfs_pnode *n = lfs_pathset_root(set);
	const char *c = path, *p;

	while (*c && n) {
		p = strchrnul(c, '/');
		n = make ? lfs_pathset_add(set, n, c, p - c) :
			   lfs_pathset_get(set, n, c, p - c);
		c = *p ? p + 1 : p;
	}
	return n;
}

/* Return: the kind of @path, or -ENOENT when it is not a path of the set */
static int lfs_test_lookup(struct lfs_pathset *set, const char *path)
{
	struct lfs_pnode *n = lfs_test_walk(set, path, false);

	return n && n->kind != LFS_NODE_NONE ? n->kind : -ENOENT;
}

static void lfs_test_set(struct lfs_pathset *set, const char *path,
			 enum lfs_node_kind kind)
{
	struct lfs_pnode *n = lfs_test_walk(set, path, true);

	assert_non_null(n);
	lfs_pathset_mark(set, n, kind);
}

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
	char buf[64];
	int i, j;

	(void)state;
	assert_non_null(set);
	for (i = 0; i < N; i++) {
		lfs_random_path(paths[i], sizeof(paths[i]), &seed);
		kinds[i] = LFS_NODE_IMPLICIT_DIR +
			   rand_r(&seed) % LFS_NODE_WHITEOUT;
		lfs_test_set(set, paths[i], kinds[i]);
	}
	/* the last kind set for a path is its kind; a prefix only is none */
	for (i = 0; i < N; i++) {
		int want = kinds[i];

		for (j = i + 1; j < N; j++)
			if (!strcmp(paths[j], paths[i]))
				want = kinds[j];
		assert_int_equal(lfs_test_lookup(set, paths[i]), want);
		/* a node knows its path */
		assert_int_equal(
			lfs_pnode_path(lfs_test_walk(set, paths[i], false), buf,
				       sizeof(buf)),
			0);
		assert_string_equal(buf, paths[i]);
		for (j = 0; j < i && strcmp(paths[j], paths[i]); j++)
			;
		distinct += j == i;
	}
	assert_int_equal(lfs_pathset_count(set), distinct);
	assert_int_equal(lfs_test_lookup(set, "nowhere"), -ENOENT);
	assert_int_equal(lfs_test_lookup(set, "a/b/ab/usr/lib/x/a"), -ENOENT);
	assert_int_equal(lfs_test_lookup(set, ""), -ENOENT);
	lfs_pathset_free(set);
}

static void test_a_prefix_of_a_set_path_is_not_in_the_set(void **state)
{
	struct lfs_pathset *set = lfs_pathset_new();

	(void)state;
	lfs_test_set(set, "a/b/c", LFS_NODE_FILE);
	assert_int_equal(lfs_test_lookup(set, "a"), -ENOENT);
	assert_int_equal(lfs_test_lookup(set, "a/b"), -ENOENT);
	assert_int_equal(lfs_test_lookup(set, "a/b/c"), LFS_NODE_FILE);
	assert_int_equal(lfs_test_lookup(set, "a/b/c/d"), -ENOENT);
	assert_int_equal(lfs_test_lookup(set, "a/bc"), -ENOENT);
	assert_int_equal(lfs_pathset_count(set), 1);
	/* a path only looked up (made without a kind) is not counted */
	assert_non_null(lfs_test_walk(set, "a/b/d/e", true));
	assert_int_equal(lfs_test_lookup(set, "a/b/d/e"), -ENOENT);
	assert_int_equal(lfs_pathset_count(set), 1);
	/* the root is the layer directory: it has a kind, it is not counted */
	lfs_test_set(set, "", LFS_NODE_DIR);
	assert_int_equal(lfs_test_lookup(set, ""), LFS_NODE_DIR);
	assert_int_equal(lfs_pathset_count(set), 1);
	/* a kind changed is one path still; a kind taken away, none */
	lfs_test_set(set, "a/b/c", LFS_NODE_WHITEOUT);
	assert_int_equal(lfs_pathset_count(set), 1);
	lfs_test_set(set, "a/b/c", LFS_NODE_NONE);
	assert_int_equal(lfs_test_lookup(set, "a/b/c"), -ENOENT);
	assert_int_equal(lfs_pathset_count(set), 0);
	lfs_pathset_free(set);
}

static void test_a_walk_by_component_meets_the_paths_set(void **state)
{
	struct lfs_pathset *set = lfs_pathset_new();
	struct lfs_pnode *root = lfs_pathset_root(set), *n, *m;

	(void)state;
	lfs_test_set(set, "usr/lib", LFS_NODE_DIR);
	n = lfs_pathset_get(set, root, "usr", 3);
	assert_non_null(n);
	assert_ptr_equal(n->parent, root);
	assert_int_equal(n->kind, LFS_NODE_NONE);
	/* a name is its bytes, not a prefix of them */
	assert_null(lfs_pathset_get(set, n, "li", 2));
	assert_null(lfs_pathset_get(set, root, "lib", 3));
	m = lfs_pathset_get(set, n, "lib/x", 3);
	assert_non_null(m);
	assert_int_equal(m->kind, LFS_NODE_DIR);
	assert_int_equal(m->plen, strlen("usr/lib"));
	/* adding what is there gives the node back, kind untouched */
	assert_ptr_equal(lfs_pathset_add(set, root, "usr", 3), n);
	assert_ptr_equal(lfs_pathset_add(set, n, "lib", 3), m);
	assert_int_equal(m->kind, LFS_NODE_DIR);
	lfs_pathset_mark(set, n, LFS_NODE_IMPLICIT_DIR);
	assert_int_equal(lfs_test_lookup(set, "usr"), LFS_NODE_IMPLICIT_DIR);
	m = lfs_pathset_add(set, n, "bin", 3);
	assert_non_null(m);
	lfs_pathset_mark(set, m, LFS_NODE_SYMLINK);
	assert_int_equal(lfs_test_lookup(set, "usr/bin"), LFS_NODE_SYMLINK);
	assert_int_equal(lfs_pathset_count(set), 3);
	lfs_pathset_free(set);
}

static void test_deep_paths_hold_one_node_a_component(void **state)
{
	char *path = malloc(2 * 2000 + 16), *back = malloc(2 * 2000 + 16);
	struct lfs_pathset *set = lfs_pathset_new();
	struct lfs_pnode *node = lfs_pathset_root(set), *f;
	int i;

	(void)state;
	for (i = 0; i < 2000; i++)
		memcpy(path + 2 * i, "d/", 2);
	for (i = 0; i < 1000; i++) {
		sprintf(path + 4000, "f%d", i);
		lfs_test_set(set, path, LFS_NODE_FILE);
	}
	assert_int_equal(lfs_pathset_count(set), 1000);
	/* one chain of 2000 nodes named "d", each under the one before */
	for (i = 0; i < 2000; i++) {
		struct lfs_pnode *c = lfs_pathset_get(set, node, "d", 1);

		assert_non_null(c);
		assert_ptr_equal(c->parent, node);
		assert_int_equal(c->namelen, 1);
		assert_int_equal(c->plen, 2 * i + 1);
		node = c;
	}
	assert_null(lfs_pathset_get(set, node, "d", 1));
	f = lfs_pathset_get(set, node, "f999", 4);
	assert_non_null(f);
	assert_int_equal(f->kind, LFS_NODE_FILE);
	assert_int_equal(lfs_pnode_path(f, back, 2 * 2000 + 16), 0);
	assert_string_equal(back, path);
	/* a buffer one byte short is refused, not overrun */
	assert_int_equal(lfs_pnode_path(f, back, strlen(path)), -ENAMETOOLONG);
	free(back);
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
