// SPDX-License-Identifier: GPL-2.0
/* path normalisation: what an entry name may be */
#include "unit.h"

static void lfs_expect_ok(const char *in, const char *want)
{
	const char *rule = NULL;
	char *out = NULL;

	assert_int_equal(lfs_path_normalize(in, &lfs_test_lim, &out, &rule), 0);
	assert_string_equal(out, want);
	free(out);
}

static void lfs_expect_refused(const char *in, const struct lfs_limits *lim,
			       const char *rule_want)
{
	const char *rule = NULL;
	char *out = NULL;

	assert_int_equal(lfs_path_normalize(in, lim, &out, &rule),
			 -LFS_EREFUSED);
	assert_null(out);
	assert_string_equal(rule, rule_want);
}

static void test_plain_and_dot_forms_normalise(void **state)
{
	(void)state;
	lfs_expect_ok("etc/passwd", "etc/passwd");
	lfs_expect_ok("./etc/passwd", "etc/passwd");
	lfs_expect_ok("etc//./passwd", "etc/passwd");
	lfs_expect_ok("etc/", "etc");
	lfs_expect_ok("./", "");
	lfs_expect_ok(".", "");
	lfs_expect_ok("...", "...");
	lfs_expect_ok("..a/b..", "..a/b..");
}

static void test_absolute_paths_become_relative(void **state)
{
	(void)state;
	lfs_expect_ok("/etc/passwd", "etc/passwd");
	lfs_expect_ok("///etc//passwd", "etc/passwd");
	lfs_expect_ok("/", "");
}

static void test_dotdot_anywhere_is_refused(void **state)
{
	(void)state;
	lfs_expect_refused("../etc/passwd", &lfs_test_lim,
			   "path leaves the layer");
	lfs_expect_refused("a/../../b", &lfs_test_lim, "path leaves the layer");
	lfs_expect_refused("a/../b", &lfs_test_lim, "path leaves the layer");
	lfs_expect_refused("/..", &lfs_test_lim, "path leaves the layer");
	lfs_expect_refused("a/..", &lfs_test_lim, "path leaves the layer");
}

static void test_long_names_and_paths_are_refused(void **state)
{
	struct lfs_limits lim = lfs_test_lim;
	char name[300];

	(void)state;
	memset(name, 'n', 256);
	name[256] = '\0';
	lfs_expect_refused(name, &lfs_test_lim, "name too long");
	name[255] = '\0';
	lfs_expect_ok(name, name);
	lim.max_path = 10;
	lfs_expect_refused("abcde/fghij", &lim, "path too long");
	lfs_expect_ok("./abcde/fghi/", "abcde/fghi");
}

static void test_image_names_are_file_names(void **state)
{
	(void)state;
	assert_true(lfs_valid_image_name("alpine:3.19"));
	assert_true(lfs_valid_image_name("a_b-c.d@sha"));
	assert_false(lfs_valid_image_name(""));
	assert_false(lfs_valid_image_name(".hidden"));
	assert_false(lfs_valid_image_name("a/b"));
	assert_false(lfs_valid_image_name(".."));
	assert_false(lfs_valid_image_name("-x"));
}

static void test_layout_refs_split_at_the_last_colon(void **state)
{
	char *dir, *tag;

	(void)state;
	assert_int_equal(lfs_layout_parse_ref("oci:/a:b/c:latest", &dir, &tag),
			 0);
	assert_string_equal(dir, "/a:b/c");
	assert_string_equal(tag, "latest");
	free(dir);
	free(tag);
	assert_int_equal(lfs_layout_parse_ref("dir", &dir, &tag), -EINVAL);
	assert_int_equal(lfs_layout_parse_ref("dir:", &dir, &tag), -EINVAL);
	assert_int_equal(lfs_layout_parse_ref("a:b/c", &dir, &tag), -EINVAL);
}

static void test_lowerdir_strings_escape_separators(void **state)
{
	char *dirs[] = { "/s/a", "/s/b:c,d\\e" };
	char *s;

	(void)state;
	s = lfs_lowerdir_string(dirs, 2);
	assert_string_equal(s, "lowerdir=/s/a:/s/b\\:c\\,d\\\\e");
	free(s);
	s = lfs_shell_quote("it's");
	assert_string_equal(s, "'it'\\''s'");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_and_dot_forms_normalise),
		cmocka_unit_test(test_absolute_paths_become_relative),
		cmocka_unit_test(test_dotdot_anywhere_is_refused),
		cmocka_unit_test(test_long_names_and_paths_are_refused),
		cmocka_unit_test(test_image_names_are_file_names),
		cmocka_unit_test(test_layout_refs_split_at_the_last_colon),
		cmocka_unit_test(test_lowerdir_strings_escape_separators),
	};

	return cmocka_run_group_tests_name("path", tests, NULL, NULL);
}
