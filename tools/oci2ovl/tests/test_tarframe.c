// SPDX-License-Identifier: GPL-2.0
/* tarframe.c: its reading of a tar stream agrees with libarchive's */
#include "unit.h"

struct lfs_bytes {
	unsigned char *b;
	size_t n;
};

/* a pax tar of files of sizes around the block size, long names, links */
static struct lfs_bytes lfs_sample_tar(void)
{
	static const size_t sizes[] = { 0, 1, 511, 512, 513, 70000 };
	struct lfs_test_tar t;
	struct lfs_bytes out;
	struct archive_entry *e;
	char name[300], *data;
	struct stat stb;
	size_t i;
	int fd;

	lfs_tar_begin(&t);
	lfs_tar_add(&t, "d/", AE_IFDIR, 0755, NULL, NULL, NULL);
	data = malloc(70001);
	memset(data, 'z', 70000);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		data[sizes[i]] = '\0';
		snprintf(name, sizeof(name), "d/%0*zu", (int)(40 + 40 * i), i);
		lfs_tar_add(&t, name, AE_IFREG, 0644, data, NULL, NULL);
		data[sizes[i]] = 'z';
	}
	free(data);
	lfs_tar_add(&t, "d/s", AE_IFLNK, 0777, NULL, "0", NULL);
	lfs_tar_add(&t, "d/h", AE_IFREG, 0644, NULL, NULL, "d/s");
	e = archive_entry_new();
	archive_entry_set_pathname(e, "x");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_xattr_add_entry(e, "user.a", "value", 5);
	assert_int_equal(archive_write_header(t.a, e), ARCHIVE_OK);
	archive_entry_free(e);
	fd = lfs_tar_end(&t);
	assert_int_equal(fstat(fd, &stb), 0);
	out.n = stb.st_size;
	out.b = malloc(out.n + 1024);
	assert_int_equal(pread(fd, out.b, out.n, 0), (ssize_t)out.n);
	close(fd);
	return out;
}

/* where libarchive reads each entry's headers; Return: the count */
static size_t lfs_positions(const struct lfs_bytes *tar, uint64_t *pos,
			    size_t max)
{
	struct archive *a = archive_read_new();
	struct archive_entry *e;
	size_t n = 0;

	archive_read_support_format_tar(a);
	assert_int_equal(archive_read_open_memory(a, tar->b, tar->n),
			 ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		assert_true(n < max);
		pos[n++] = archive_read_header_position(a);
	}
	archive_read_free(a);
	return n;
}

/* feed @tar in pieces of @chunk bytes (0: of 1 to 1000, at random) */
static struct lfs_tarframe *lfs_feed(const struct lfs_bytes *tar, size_t chunk)
{
	struct lfs_tarframe *t = lfs_tarframe_new();
	unsigned int seed = 14;
	size_t off, n;

	for (off = 0; off < tar->n; off += n) {
		n = chunk ? chunk : 1 + (size_t)rand_r(&seed) % 1000;
		if (n > tar->n - off)
			n = tar->n - off;
		lfs_tarframe_feed(t, tar->b + off, n);
	}
	return t;
}

static void test_every_chunking_reads_the_entries_libarchive_reads(void **state)
{
	static const size_t chunks[] = { 0, 1, 7, 512, 4096, 1 << 20 };
	struct lfs_bytes tar = lfs_sample_tar();
	uint64_t pos[32];
	size_t n = lfs_positions(&tar, pos, 32), i, j;

	(void)state;
	assert_int_equal(n, 10);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		struct lfs_tarframe *t = lfs_feed(&tar, chunks[i]);
		struct lfs_tar_frame f;
		const char *rule = NULL;

		for (j = 0; j < n; j++) {
			assert_int_equal(
				lfs_tarframe_entry(t, pos[j], &f, &rule), 0);
			/* d/, then the files of 0, 1, 511, 512, 513, 70000 */
			if (j == 6)
				assert_int_equal(f.size, 70000);
			if (j == 0 || j == 7)
				assert_int_equal(f.size, 0);
		}
		assert_int_equal(lfs_tarframe_entry(t, tar.n, &f, &rule),
				 -LFS_EREFUSED);
		assert_int_equal(lfs_tarframe_finish(t, &rule), 0);
		lfs_tarframe_free(t);
	}
	free(tar.b);
}

static void test_an_entry_out_of_place_is_refused(void **state)
{
	struct lfs_bytes tar = lfs_sample_tar();
	struct lfs_tarframe *t = lfs_feed(&tar, 0);
	uint64_t pos[32];
	struct lfs_tar_frame f;
	const char *rule = NULL;

	(void)state;
	lfs_positions(&tar, pos, 32);
	assert_int_equal(lfs_tarframe_entry(t, pos[0], &f, &rule), 0);
	assert_int_equal(lfs_tarframe_entry(t, pos[1] + 512, &f, &rule),
			 -LFS_EREFUSED);
	assert_non_null(strstr(rule, "do not line up"));
	lfs_tarframe_free(t);
	free(tar.b);
}

static void test_only_zeros_may_follow_the_end_marker(void **state)
{
	struct lfs_bytes tar = lfs_sample_tar();
	struct lfs_tarframe *t;
	uint64_t pos[32];
	struct lfs_tar_frame f;
	const char *rule = NULL;
	size_t n = lfs_positions(&tar, pos, 32), i;

	(void)state;
	memset(tar.b + tar.n, 0, 1024);
	tar.n += 1024;
	t = lfs_feed(&tar, 0);
	for (i = 0; i < n; i++)
		assert_int_equal(lfs_tarframe_entry(t, pos[i], &f, &rule), 0);
	assert_int_equal(lfs_tarframe_finish(t, &rule), 0);
	lfs_tarframe_free(t);

	tar.b[tar.n - 1] = 'x';
	t = lfs_feed(&tar, 0);
	for (i = 0; i < n; i++)
		assert_int_equal(lfs_tarframe_entry(t, pos[i], &f, &rule), 0);
	assert_int_equal(lfs_tarframe_finish(t, &rule), -LFS_EREFUSED);
	assert_string_equal(rule, "data after the tar end-of-archive marker");
	lfs_tarframe_free(t);
	free(tar.b);
}

static void test_a_stream_cut_inside_an_entry_is_refused(void **state)
{
	struct lfs_bytes tar = lfs_sample_tar();
	uint64_t pos[32];
	const char *rule = NULL;
	struct lfs_tarframe *t;

	(void)state;
	lfs_positions(&tar, pos, 32);
	/* inside the data of the 70000-byte file, then on its header */
	tar.n = pos[6] + 512 + 10000;
	t = lfs_feed(&tar, 0);
	assert_int_equal(lfs_tarframe_finish(t, &rule), -LFS_EREFUSED);
	assert_string_equal(rule, "tar stream ends inside an entry");
	lfs_tarframe_free(t);
	tar.n = pos[6] + 100;
	t = lfs_feed(&tar, 0);
	assert_int_equal(lfs_tarframe_finish(t, &rule), -LFS_EREFUSED);
	lfs_tarframe_free(t);
	free(tar.b);
}

static void test_a_header_with_a_bad_checksum_stops_the_reading(void **state)
{
	struct lfs_bytes tar = lfs_sample_tar();
	uint64_t pos[32];
	const char *rule = NULL;
	struct lfs_tar_frame f;
	struct lfs_tarframe *t;

	(void)state;
	lfs_positions(&tar, pos, 32);
	tar.b[pos[1] + 100] ^= 1; /* the mode field of the first file */
	t = lfs_feed(&tar, 0);
	assert_int_equal(lfs_tarframe_entry(t, pos[0], &f, &rule), 0);
	assert_int_equal(lfs_tarframe_entry(t, pos[1], &f, &rule),
			 -LFS_EREFUSED);
	assert_string_equal(rule, "bad tar header checksum");
	lfs_tarframe_free(t);
	free(tar.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(
			test_every_chunking_reads_the_entries_libarchive_reads),
		cmocka_unit_test(test_an_entry_out_of_place_is_refused),
		cmocka_unit_test(test_only_zeros_may_follow_the_end_marker),
		cmocka_unit_test(test_a_stream_cut_inside_an_entry_is_refused),
		cmocka_unit_test(
			test_a_header_with_a_bad_checksum_stops_the_reading),
	};

	return cmocka_run_group_tests_name("tarframe", tests, NULL, NULL);
}
