// SPDX-License-Identifier: GPL-2.0
/* whiteout names and their conversion to layerfs/overlay markers */
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#include "unit.h"
#include "uapi/layerfs.h"

static void lfs_expect_kind(const char *path, int kind, const char *target)
{
	const char *rule = NULL;
	char *t = NULL;

	assert_int_equal(lfs_whiteout_classify(path, &t, &rule), kind);
	if (target)
		assert_string_equal(t, target);
	else
		assert_null(t);
	free(t);
}

static void lfs_expect_rule(const char *path, const char *rule_want)
{
	const char *rule = NULL;
	char *t = NULL;

	assert_int_equal(lfs_whiteout_classify(path, &t, &rule), -LFS_EREFUSED);
	assert_string_equal(rule, rule_want);
}

static void test_whiteout_names_are_classified(void **state)
{
	(void)state;
	lfs_expect_kind("etc/passwd", LFS_WH_KIND_NONE, NULL);
	lfs_expect_kind("etc/.wh.passwd", LFS_WH_KIND_FILE, "etc/passwd");
	lfs_expect_kind(".wh.etc", LFS_WH_KIND_FILE, "etc");
	lfs_expect_kind("a/b/.wh..wh..opq", LFS_WH_KIND_OPAQUE, "a/b");
	lfs_expect_kind(".wh..wh..opq", LFS_WH_KIND_OPAQUE, "");
	lfs_expect_kind("etc/x.wh.y", LFS_WH_KIND_NONE, NULL);
	lfs_expect_kind("etc/.wh.a.b", LFS_WH_KIND_FILE, "etc/a.b");
}

static void test_whiteouts_that_leave_their_directory_are_refused(void **state)
{
	(void)state;
	lfs_expect_rule("a/b/.wh..", "whiteout leaves its directory");
	lfs_expect_rule("a/b/.wh...", "whiteout leaves its directory");
	lfs_expect_rule(".wh.", "whiteout leaves its directory");
	lfs_expect_rule("a/.wh..wh.plnk", "reserved whiteout name");
	lfs_expect_rule(".wh.a/b", "path goes through a whiteout");
	lfs_expect_rule("a/.wh..wh..opq/b", "path goes through a whiteout");
}

static void test_overlay_xattrs_are_recognised(void **state)
{
	(void)state;
	assert_true(lfs_xattr_is_overlay("trusted.overlay.opaque"));
	assert_true(lfs_xattr_is_overlay("trusted.overlay.redirect"));
	assert_true(lfs_xattr_is_overlay("user.overlay.opaque"));
	assert_false(lfs_xattr_is_overlay("trusted.overlayx"));
	assert_false(lfs_xattr_is_overlay("user.comment"));
	assert_false(lfs_xattr_is_overlay("security.capability"));
}

static void test_native_whiteout_is_a_marked_symlink(void **state)
{
	char dir[256], buf[64], p[300];
	ssize_t n;
	int fd;

	(void)state;
	fd = lfs_test_tmpdir(dir, sizeof(dir));
	assert_int_equal(lfs_make_whiteout(fd, "gone", LFS_WH_NATIVE), 0);
	n = readlinkat(fd, "gone", buf, sizeof(buf));
	assert_int_equal(n, strlen(LFS_WHITEOUT_TARGET));
	assert_memory_equal(buf, LFS_WHITEOUT_TARGET, n);
	snprintf(p, sizeof(p), "%s/gone", dir);
	n = lgetxattr(p, LFS_XATTR_WHITEOUT, buf, sizeof(buf));
	assert_int_equal(n, 1);
	assert_memory_equal(buf, LFS_XATTR_TRUE, 1);
	/* a second one of the same name fails, nothing is replaced */
	assert_int_equal(lfs_make_whiteout(fd, "gone", LFS_WH_NATIVE), -EEXIST);
	lfs_test_rmdir(fd, dir);
}

static void test_chardev_whiteout_is_a_0_0_device(void **state)
{
	struct stat stb;
	char dir[256];
	int fd;

	(void)state;
	fd = lfs_test_tmpdir(dir, sizeof(dir));
	assert_int_equal(lfs_make_whiteout(fd, "gone", LFS_WH_CHARDEV), 0);
	assert_int_equal(fstatat(fd, "gone", &stb, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISCHR(stb.st_mode));
	assert_int_equal(stb.st_rdev, makedev(0, 0));
	lfs_test_rmdir(fd, dir);
}

static void test_opaque_marks_the_directory_not_a_symlink_target(void **state)
{
	char dir[256], buf[8], p[300];
	int fd;

	(void)state;
	fd = lfs_test_tmpdir(dir, sizeof(dir));
	assert_int_equal(mkdirat(fd, "d", 0755), 0);
	assert_int_equal(lfs_make_opaque(fd, "d", LFS_WH_NATIVE), 0);
	snprintf(p, sizeof(p), "%s/d", dir);
	assert_int_equal(lgetxattr(p, LFS_XATTR_OPAQUE, buf, sizeof(buf)), 1);
	/* a symlink to d: the xattr lands on the link (or fails), never on d's target */
	assert_int_equal(mkdirat(fd, "t", 0755), 0);
	assert_int_equal(symlinkat("t", fd, "s"), 0);
	lfs_make_opaque(fd, "s", LFS_WH_NATIVE);
	snprintf(p, sizeof(p), "%s/t", dir);
	assert_int_equal(lgetxattr(p, LFS_XATTR_OPAQUE, buf, sizeof(buf)), -1);
	lfs_test_rmdir(fd, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_whiteout_names_are_classified),
		cmocka_unit_test(
			test_whiteouts_that_leave_their_directory_are_refused),
		cmocka_unit_test(test_overlay_xattrs_are_recognised),
		cmocka_unit_test(test_native_whiteout_is_a_marked_symlink),
		cmocka_unit_test(test_chardev_whiteout_is_a_0_0_device),
		cmocka_unit_test(
			test_opaque_marks_the_directory_not_a_symlink_target),
	};

	return cmocka_run_group_tests_name("whiteout", tests, NULL, NULL);
}
