// SPDX-License-Identifier: GPL-2.0
/* extraction of small in-memory layers: rules and limits */
#include <sys/xattr.h>

#include "unit.h"
#include "uapi/layerfs.h"

struct lfs_fixture {
	char dir[256]; /* scratch: layer/ and outside/ */
	int rootfd; /* scratch/layer */
	int outfd; /* scratch/outside, must stay empty */
	struct lfs_test_tar t;
	struct lfs_extract_opts o;
};

static int lfs_setup(void **state)
{
	struct lfs_fixture *f = calloc(1, sizeof(*f));
	int fd;

	fd = lfs_test_tmpdir(f->dir, sizeof(f->dir));
	assert_int_equal(mkdirat(fd, "layer", 0700), 0);
	assert_int_equal(mkdirat(fd, "outside", 0700), 0);
	f->rootfd = openat(fd, "layer", O_RDONLY | O_DIRECTORY);
	f->outfd = openat(fd, "outside", O_RDONLY | O_DIRECTORY);
	close(fd);
	f->o.lim = lfs_test_lim;
	f->o.fmt = LFS_WH_NATIVE;
	f->o.layer_name = "sha256:test";
	f->o.comp = LFS_COMP_NONE;
	lfs_tar_begin(&f->t);
	*state = f;
	return 0;
}

static int lfs_teardown(void **state)
{
	struct lfs_fixture *f = *state;

	close(f->rootfd);
	close(f->outfd);
	assert_int_equal(lfs_rm_tree_at(AT_FDCWD, f->dir), 0);
	free(f);
	return 0;
}

static int lfs_run(struct lfs_fixture *f)
{
	int fd = lfs_tar_end(&f->t), err;

	err = lfs_extract_layer(fd, f->rootfd, &f->o);
	close(fd);
	return err;
}

static bool lfs_exists(int dirfd, const char *path)
{
	struct stat stb;

	return !fstatat(dirfd, path, &stb, AT_SYMLINK_NOFOLLOW);
}

static void lfs_assert_outside_empty(struct lfs_fixture *f)
{
	char p[300];
	struct stat stb;

	snprintf(p, sizeof(p), "%s/outside", f->dir);
	assert_int_equal(stat(p, &stb), 0);
	assert_int_equal(stb.st_nlink, 2);
	assert_false(lfs_exists(f->outfd, "pwned"));
}

static void test_a_good_layer_keeps_types_links_and_markers(void **state)
{
	struct lfs_fixture *f = *state;
	struct stat a, b;
	char buf[64], p[300];

	lfs_tar_add(&f->t, "./d/", AE_IFDIR, 0750, NULL, NULL, NULL);
	lfs_tar_add(&f->t, "d/file", AE_IFREG, 04755, "hello", NULL, NULL);
	lfs_tar_add(&f->t, "d/hard", AE_IFREG, 0644, NULL, NULL, "d/file");
	lfs_tar_add(&f->t, "d/sym", AE_IFLNK, 0777, NULL, "/etc/passwd", NULL);
	lfs_tar_add(&f->t, "d/.wh.gone", AE_IFREG, 0644, NULL, NULL, NULL);
	lfs_tar_add(&f->t, "e/.wh..wh..opq", AE_IFREG, 0644, NULL, NULL, NULL);
	assert_int_equal(lfs_run(f), 0);

	assert_int_equal(fstatat(f->rootfd, "d/file", &a, 0), 0);
	assert_int_equal(a.st_mode & 07777, 04755);
	assert_int_equal(a.st_size, 5);
	assert_int_equal(a.st_mtime, 1700000000);
	assert_int_equal(fstatat(f->rootfd, "d/hard", &b, 0), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	assert_int_equal(fstatat(f->rootfd, "d", &a, 0), 0);
	assert_int_equal(a.st_mode & 07777, 0750);
	assert_int_equal(a.st_mtime, 1700000000);
	assert_int_equal(readlinkat(f->rootfd, "d/sym", buf, sizeof(buf)), 11);
	assert_int_equal(readlinkat(f->rootfd, "d/gone", buf, sizeof(buf)),
			 strlen(LFS_WHITEOUT_TARGET));
	snprintf(p, sizeof(p), "%s/layer/e", f->dir);
	assert_int_equal(lgetxattr(p, LFS_XATTR_OPAQUE, buf, sizeof(buf)), 1);
	assert_false(lfs_exists(f->rootfd, "d/.wh.gone"));
	assert_false(lfs_exists(f->rootfd, "e/.wh..wh..opq"));
}

static void test_whiteout_then_directory_makes_it_opaque(void **state)
{
	struct lfs_fixture *f = *state;
	char buf[8], p[300];
	struct stat stb;

	lfs_tar_add(&f->t, ".wh.d", AE_IFREG, 0644, NULL, NULL, NULL);
	lfs_tar_add(&f->t, "d/", AE_IFDIR, 0755, NULL, NULL, NULL);
	lfs_tar_add(&f->t, ".wh.x", AE_IFREG, 0644, NULL, NULL, NULL);
	lfs_tar_add(&f->t, "x", AE_IFREG, 0644, "new", NULL, NULL);
	assert_int_equal(lfs_run(f), 0);
	snprintf(p, sizeof(p), "%s/layer/d", f->dir);
	assert_int_equal(lgetxattr(p, LFS_XATTR_OPAQUE, buf, sizeof(buf)), 1);
	assert_int_equal(fstatat(f->rootfd, "x", &stb, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISREG(stb.st_mode));
}

/* a symlink on the way resolves inside the layer, never outside it */
static void test_writing_through_an_absolute_symlink_stays_inside(void **state)
{
	struct lfs_fixture *f = *state;
	char target[300], inside[320];
	struct stat stb;

	snprintf(target, sizeof(target), "%s/outside", f->dir);
	lfs_tar_add(&f->t, "esc", AE_IFLNK, 0777, NULL, target, NULL);
	lfs_tar_add(&f->t, "esc/pwned", AE_IFREG, 0644, "x", NULL, NULL);
	assert_int_equal(lfs_run(f), 0);
	lfs_assert_outside_empty(f);
	/* the target taken from the layer root, the symlink kept */
	snprintf(inside, sizeof(inside), "%s/pwned", target + 1);
	assert_int_equal(fstatat(f->rootfd, inside, &stb, AT_SYMLINK_NOFOLLOW),
			 0);
	assert_true(S_ISREG(stb.st_mode));
	assert_int_equal(fstatat(f->rootfd, "esc", &stb, AT_SYMLINK_NOFOLLOW),
			 0);
	assert_true(S_ISLNK(stb.st_mode));
}

static void test_relative_symlink_escape_stops_at_the_root(void **state)
{
	struct lfs_fixture *f = *state;
	struct stat stb;

	lfs_tar_add(&f->t, "d/esc", AE_IFLNK, 0777, NULL, "../../../outside",
		    NULL);
	lfs_tar_add(&f->t, "d/esc/pwned", AE_IFREG, 0644, "x", NULL, NULL);
	assert_int_equal(lfs_run(f), 0);
	lfs_assert_outside_empty(f);
	assert_int_equal(fstatat(f->rootfd, "outside/pwned", &stb,
				 AT_SYMLINK_NOFOLLOW),
			 0);
	assert_true(S_ISREG(stb.st_mode));
}

static void test_a_symlink_loop_is_refused(void **state)
{
	struct lfs_fixture *f = *state;

	lfs_tar_add(&f->t, "a", AE_IFLNK, 0777, NULL, "b/x", NULL);
	lfs_tar_add(&f->t, "b", AE_IFLNK, 0777, NULL, "/a", NULL);
	lfs_tar_add(&f->t, "a/f", AE_IFREG, 0644, "x", NULL, NULL);
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
	assert_false(lfs_exists(f->rootfd, "b/x"));
}

static void test_dotdot_entry_is_refused(void **state)
{
	struct lfs_fixture *f = *state;

	lfs_tar_add(&f->t, "../outside/pwned", AE_IFREG, 0644, "x", NULL, NULL);
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
	lfs_assert_outside_empty(f);
}

static void test_hard_link_to_outside_is_refused(void **state)
{
	struct lfs_fixture *f = *state;
	char target[300];

	assert_int_equal(mknodat(f->outfd, "secret", S_IFREG | 0600, 0), 0);
	snprintf(target, sizeof(target), "%s/outside/secret", f->dir);
	lfs_tar_add(&f->t, "h", AE_IFREG, 0644, NULL, NULL, target);
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
	assert_false(lfs_exists(f->rootfd, "h"));
	assert_int_equal(unlinkat(f->outfd, "secret", 0), 0);
}

static void test_duplicate_entries_are_refused(void **state)
{
	struct lfs_fixture *f = *state;

	lfs_tar_add(&f->t, "etc/x", AE_IFREG, 0644, "first", NULL, NULL);
	lfs_tar_add(&f->t, "./etc/x", AE_IFREG, 0644, "second", NULL, NULL);
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
}

static void test_implicit_parent_then_its_entry_is_not_a_duplicate(void **state)
{
	struct lfs_fixture *f = *state;
	struct stat stb;

	lfs_tar_add(&f->t, "a/b/c", AE_IFREG, 0644, "x", NULL, NULL);
	lfs_tar_add(&f->t, "a/", AE_IFDIR, 0700, NULL, NULL, NULL);
	assert_int_equal(lfs_run(f), 0);
	assert_int_equal(fstatat(f->rootfd, "a", &stb, 0), 0);
	assert_int_equal(stb.st_mode & 07777, 0700);
	assert_int_equal(fstatat(f->rootfd, "a/b", &stb, 0), 0);
	assert_int_equal(stb.st_mode & 07777, 0755);
}

/* files f0 .. f(n-1), extracted with max_entries 5 */
static int lfs_run_n_files(struct lfs_fixture *f, int n)
{
	char name[16];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		lfs_tar_add(&f->t, name, AE_IFREG, 0644, "x", NULL, NULL);
	}
	f->o.lim.max_entries = 5;
	return lfs_run(f);
}

static void test_entry_limit_is_enforced(void **state)
{
	struct lfs_fixture *f = *state;

	assert_int_equal(lfs_run_n_files(f, 6), -LFS_EREFUSED);
	assert_false(lfs_exists(f->rootfd, "f5"));
}

static void test_entry_limit_allows_exactly_the_limit(void **state)
{
	struct lfs_fixture *f = *state;

	assert_int_equal(lfs_run_n_files(f, 5), 0);
	assert_true(lfs_exists(f->rootfd, "f4"));
}

static void test_expansion_limit_stops_a_large_file(void **state)
{
	struct lfs_fixture *f = *state;
	char *big = malloc(8193);

	memset(big, 'z', 8192);
	big[8192] = '\0';
	lfs_tar_add(&f->t, "big", AE_IFREG, 0644, big, NULL, NULL);
	free(big);
	f->o.lim.max_bytes = 4096;
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
}

static void test_path_limit_is_enforced(void **state)
{
	struct lfs_fixture *f = *state;

	lfs_tar_add(&f->t, "aaaaaaaaaa/bbbbbbbbbb/c", AE_IFREG, 0644, "x", NULL,
		    NULL);
	f->o.lim.max_path = 20;
	assert_int_equal(lfs_run(f), -LFS_EREFUSED);
	assert_false(lfs_exists(f->rootfd, "aaaaaaaaaa/bbbbbbbbbb/c"));
}

static void test_diff_id_is_checked(void **state)
{
	struct lfs_fixture *f = *state;
	char want[LFS_DIGEST_LEN + 1];
	struct lfs_sha256 *h;
	char buf[4096];
	ssize_t n;
	int fd;

	lfs_tar_add(&f->t, "x", AE_IFREG, 0644, "data", NULL, NULL);
	fd = lfs_tar_end(&f->t);
	h = lfs_sha256_new();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		lfs_sha256_update(h, buf, n);
	lfs_sha256_final(h, want);
	lfs_sha256_free(h);

	lseek(fd, 0, SEEK_SET);
	f->o.diff_id = want;
	assert_int_equal(lfs_extract_layer(fd, f->rootfd, &f->o), 0);
	assert_int_equal(lfs_rm_tree_at(f->rootfd, "x"), 0);
	lseek(fd, 0, SEEK_SET);
	want[10] ^= 1;
	assert_int_equal(lfs_extract_layer(fd, f->rootfd, &f->o),
			 -LFS_EREFUSED);
	close(fd);
}

static void test_overlay_xattrs_in_a_layer_are_dropped(void **state)
{
	struct lfs_fixture *f = *state;
	struct archive_entry *e = archive_entry_new();
	char p[300], buf[8];

	archive_entry_set_pathname(e, "d");
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	archive_entry_xattr_add_entry(e, "trusted.overlay.opaque", "y", 1);
	archive_entry_xattr_add_entry(e, "user.keep", "k", 1);
	assert_int_equal(archive_write_header(f->t.a, e), ARCHIVE_OK);
	archive_entry_free(e);
	assert_int_equal(lfs_run(f), 0);
	snprintf(p, sizeof(p), "%s/layer/d", f->dir);
	assert_int_equal(
		lgetxattr(p, "trusted.overlay.opaque", buf, sizeof(buf)), -1);
	assert_int_equal(lgetxattr(p, "user.keep", buf, sizeof(buf)), 1);
}

/* the SHA-256 of the file at @path of the layer, read back, in hex */
static void lfs_file_hex(struct lfs_fixture *f, const char *path,
			 char out[LFS_SHA256_HEX + 1])
{
	char d[LFS_DIGEST_LEN + 1], buf[4096];
	struct lfs_sha256 *h = lfs_sha256_new();
	int fd = openat(f->rootfd, path, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		lfs_sha256_update(h, buf, n);
	close(fd);
	lfs_sha256_final(h, d);
	lfs_sha256_free(h);
	strcpy(out, d + 7);
}

/* @path's recorded digest, which must be the one of its data read back */
static void lfs_assert_sum(struct lfs_fixture *f, const char *path)
{
	char got[LFS_SHA256_HEX + 1], want[LFS_SHA256_HEX + 1];
	struct stat stb;

	assert_int_equal(fstatat(f->rootfd, path, &stb, AT_SYMLINK_NOFOLLOW),
			 0);
	assert_true(lfs_filesums_get(f->o.sums, &stb, got));
	lfs_file_hex(f, path, want);
	assert_string_equal(got, want);
}

static void test_file_digests_are_recorded_as_the_data_is_written(void **state)
{
	struct lfs_fixture *f = *state;
	char big[200001], hex[LFS_SHA256_HEX + 1];
	struct stat stb;
	size_t i;

	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = 'a' + i % 23;
	big[sizeof(big) - 1] = '\0';
	f->o.lim.max_bytes = 1 << 22;
	f->o.sums = lfs_filesums_new();
	assert_non_null(f->o.sums);
	lfs_tar_add(&f->t, "abc", AE_IFREG, 0644, "abc", NULL, NULL);
	lfs_tar_add(&f->t, "empty", AE_IFREG, 0600, NULL, NULL, NULL);
	lfs_tar_add(&f->t, "d/big", AE_IFREG, 0644, big, NULL, NULL);
	lfs_tar_add(&f->t, "d/hard", AE_IFREG, 0644, NULL, NULL, "abc");
	lfs_tar_add(&f->t, "d/sym", AE_IFLNK, 0777, NULL, "abc", NULL);
	assert_int_equal(lfs_run(f), 0);

	lfs_assert_sum(f, "abc");
	assert_true(lfs_filesums_get(f->o.sums, &(struct stat){ 0 }, hex) ==
		    false);
	assert_int_equal(fstatat(f->rootfd, "abc", &stb, 0), 0);
	lfs_filesums_get(f->o.sums, &stb, hex);
	assert_string_equal(
		hex,
		"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	lfs_assert_sum(f, "empty");
	lfs_assert_sum(f, "d/big");
	lfs_assert_sum(f, "d/hard");
	/* a record is for that size only */
	stb.st_size++;
	assert_false(lfs_filesums_get(f->o.sums, &stb, hex));
	/* nor for what is not a file the extraction wrote */
	assert_int_equal(fstatat(f->rootfd, "d", &stb, 0), 0);
	assert_false(lfs_filesums_get(f->o.sums, &stb, hex));
	lfs_filesums_free(f->o.sums);
}

/* a file with a hole: its data comes in two pieces, not in one run */
static void test_a_sparse_file_is_left_to_the_walk(void **state)
{
	struct lfs_fixture *f = *state;
	struct archive_entry *e = archive_entry_new();
	char data[8192], hex[LFS_SHA256_HEX + 1];
	struct stat stb;
	ssize_t n;

	memset(data, 'x', sizeof(data));
	f->o.sums = lfs_filesums_new();
	archive_entry_set_pathname(e, "sparse");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, 3 * 4096);
	archive_entry_sparse_add_entry(e, 0, 4096);
	archive_entry_sparse_add_entry(e, 2 * 4096, 4096);
	assert_int_equal(archive_write_header(f->t.a, e), ARCHIVE_OK);
	archive_entry_free(e);
	n = archive_write_data(f->t.a, data, 4096);
	assert_int_equal(n, 4096);
	memset(data, 0, 4096);
	assert_true(archive_write_data(f->t.a, data, 4096) >= 0);
	memset(data, 'y', 4096);
	assert_true(archive_write_data(f->t.a, data, 4096) >= 0);
	lfs_tar_add(&f->t, "after", AE_IFREG, 0644, "after", NULL, NULL);
	assert_int_equal(lfs_run(f), 0);

	assert_int_equal(fstatat(f->rootfd, "sparse", &stb, 0), 0);
	assert_int_equal(stb.st_size, 3 * 4096);
	assert_false(lfs_filesums_get(f->o.sums, &stb, hex));
	lfs_assert_sum(f, "after");
	lfs_filesums_free(f->o.sums);
}

/* the table itself: many records, replaced ones, unknown ones, devices */
static void test_file_digest_records_are_kept_by_inode(void **state)
{
	struct lfs_filesums *s = lfs_filesums_new();
	unsigned char md[32];
	char hex[LFS_SHA256_HEX + 1], want[LFS_SHA256_HEX + 1];
	struct stat st = { .st_dev = 7 };
	uint64_t i;

	(void)state;
	assert_non_null(s);
	assert_false(lfs_filesums_get(s, &st, hex));
	/* 20000 inodes, spread and clustered, past chunks and index growth */
	for (i = 0; i < 20000; i++) {
		memset(md, 0, sizeof(md));
		memcpy(md, &i, sizeof(i));
		assert_int_equal(lfs_filesums_set(s, 7, i % 2 ? i << 20 : i,
						  i * 3, md),
				 0);
	}
	/* a number used again: the new file's record; one not known */
	md[0] = 0xee;
	assert_int_equal(lfs_filesums_set(s, 7, 42, 5, md), 0);
	assert_int_equal(lfs_filesums_set(s, 7, 44, 132, NULL), 0);
	for (i = 0; i < 20000; i++) {
		st.st_ino = i % 2 ? i << 20 : i;
		st.st_size = i * 3;
		if (i == 42 || i == 44) {
			assert_false(lfs_filesums_get(s, &st, hex));
			continue;
		}
		assert_true(lfs_filesums_get(s, &st, hex));
		memset(md, 0, sizeof(md));
		memcpy(md, &i, sizeof(i));
		lfs_hex(md, sizeof(md), want);
		assert_string_equal(hex, want);
		/* another size, another device: no */
		st.st_size++;
		assert_false(lfs_filesums_get(s, &st, hex));
		st.st_size--;
		st.st_dev = 8;
		assert_false(lfs_filesums_get(s, &st, hex));
		st.st_dev = 7;
	}
	st.st_ino = 42;
	st.st_size = 5;
	assert_true(lfs_filesums_get(s, &st, hex));
	assert_memory_equal(hex, "ee", 2);
	st.st_ino = 20001;
	assert_false(lfs_filesums_get(s, &st, hex));
	/* a record of another device: none counts any more */
	assert_int_equal(lfs_filesums_set(s, 8, 1, 1, md), 0);
	st.st_ino = 42;
	assert_false(lfs_filesums_get(s, &st, hex));
	lfs_filesums_free(s);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, lfs_setup, lfs_teardown)
	const struct CMUnitTest tests[] = {
		T(test_a_good_layer_keeps_types_links_and_markers),
		T(test_whiteout_then_directory_makes_it_opaque),
		T(test_writing_through_an_absolute_symlink_stays_inside),
		T(test_relative_symlink_escape_stops_at_the_root),
		T(test_a_symlink_loop_is_refused),
		T(test_dotdot_entry_is_refused),
		T(test_hard_link_to_outside_is_refused),
		T(test_duplicate_entries_are_refused),
		T(test_implicit_parent_then_its_entry_is_not_a_duplicate),
		T(test_entry_limit_is_enforced),
		T(test_entry_limit_allows_exactly_the_limit),
		T(test_expansion_limit_stops_a_large_file),
		T(test_path_limit_is_enforced),
		T(test_diff_id_is_checked),
		T(test_overlay_xattrs_in_a_layer_are_dropped),
		T(test_file_digests_are_recorded_as_the_data_is_written),
		T(test_a_sparse_file_is_left_to_the_walk),
		cmocka_unit_test(test_file_digest_records_are_kept_by_inode),
	};

	return cmocka_run_group_tests_name("extract", tests, NULL, NULL);
}
