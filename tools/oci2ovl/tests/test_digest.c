// SPDX-License-Identifier: GPL-2.0
/* digests, blob verification, sizes */
#include "unit.h"

#define ABC_SHA256 \
	"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

static int lfs_blob(const char *data)
{
	FILE *f = tmpfile();
	int fd;

	assert_non_null(f);
	fputs(data, f);
	fflush(f);
	fd = dup(fileno(f));
	fclose(f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static void test_sha256_of_abc_is_the_fips_vector(void **state)
{
	char d[LFS_DIGEST_LEN + 1];

	(void)state;
	assert_int_equal(lfs_digest_buf("abc", 3, d), 0);
	assert_string_equal(d, ABC_SHA256);
}

static void test_only_sha256_hex_digests_are_valid(void **state)
{
	(void)state;
	assert_true(lfs_digest_valid(ABC_SHA256));
	assert_false(lfs_digest_valid("sha256:../../../../etc/passwd"));
	assert_false(lfs_digest_valid(
		"sha512:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
	assert_false(lfs_digest_valid(
		"sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
	assert_false(lfs_digest_valid(
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015a"));
	assert_false(lfs_digest_valid(
		"sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad0"));
}

static void test_matching_blob_verifies_and_is_rewound(void **state)
{
	char c;
	int fd = lfs_blob("abc");

	(void)state;
	assert_int_equal(lfs_verify_blob_fd(fd, "t", ABC_SHA256, 3), 0);
	assert_int_equal(read(fd, &c, 1), 1);
	assert_int_equal(c, 'a');
	close(fd);
}

static void test_blob_with_wrong_digest_or_size_is_refused(void **state)
{
	int fd;

	(void)state;
	fd = lfs_blob("abd");
	assert_int_equal(lfs_verify_blob_fd(fd, "t", ABC_SHA256, 3),
			 -LFS_EREFUSED);
	close(fd);
	fd = lfs_blob("abc");
	assert_int_equal(lfs_verify_blob_fd(fd, "t", ABC_SHA256, 2),
			 -LFS_EREFUSED);
	close(fd);
	fd = lfs_blob("abc");
	assert_int_equal(lfs_verify_blob_fd(fd, "t", ABC_SHA256, 4),
			 -LFS_EREFUSED);
	close(fd);
}

static void test_sizes_parse_with_suffixes(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(lfs_parse_size("123", &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(lfs_parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(lfs_parse_size("2G", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(lfs_parse_size("1x", &v), -EINVAL);
	assert_int_equal(lfs_parse_size("-1", &v), -EINVAL);
	assert_int_equal(lfs_parse_size("", &v), -EINVAL);
	assert_int_equal(lfs_parse_size("99999999999T", &v), -ERANGE);
}

static void test_json_with_duplicate_keys_is_refused(void **state)
{
	json_t *j;

	(void)state;
	assert_int_equal(lfs_json_parse("t", "{\"a\":1}", 7, &j), 0);
	json_decref(j);
	assert_int_equal(lfs_json_parse("t", "{\"a\":1,\"a\":2}", 13, &j),
			 -LFS_EREFUSED);
	assert_int_equal(lfs_json_parse("t", "{\"a\":", 5, &j), -LFS_EREFUSED);
	assert_int_equal(lfs_json_parse("t", "[1]", 3, &j), -LFS_EREFUSED);
}

static void test_layer_media_types_map_to_compressions(void **state)
{
	enum lfs_compression c;

	(void)state;
	assert_int_equal(lfs_media_type_compression(
				 "application/vnd.oci.image.layer.v1.tar+zstd",
				 &c),
			 0);
	assert_int_equal(c, LFS_COMP_ZSTD);
	assert_int_equal(
		lfs_media_type_compression(
			"application/vnd.docker.image.rootfs.diff.tar.gzip",
			&c),
		0);
	assert_int_equal(c, LFS_COMP_GZIP);
	assert_int_equal(lfs_media_type_compression(
				 "application/vnd.oci.image.layer.v1.tar", &c),
			 0);
	assert_int_equal(c, LFS_COMP_NONE);
	assert_int_equal(lfs_media_type_compression("application/x-foo", &c),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha256_of_abc_is_the_fips_vector),
		cmocka_unit_test(test_only_sha256_hex_digests_are_valid),
		cmocka_unit_test(test_matching_blob_verifies_and_is_rewound),
		cmocka_unit_test(
			test_blob_with_wrong_digest_or_size_is_refused),
		cmocka_unit_test(test_sizes_parse_with_suffixes),
		cmocka_unit_test(test_json_with_duplicate_keys_is_refused),
		cmocka_unit_test(test_layer_media_types_map_to_compressions),
	};

	return cmocka_run_group_tests_name("digest", tests, NULL, NULL);
}
