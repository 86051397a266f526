// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: an OCI image layout through lfs_layout_resolve() (the
 * JSON parser and the rules on oci-layout, index.json, nested indexes,
 * manifests and configs), written into the scratch, then removed.
 *
 * Input: sections separated by the line "--" ("\n--\n"):
 *   0     "TAG PLATFORM": the tag to resolve ("-": none) and the
 *         platform (default linux/amd64)
 *   1     index.json
 *   2..9  blobs, each written as blobs/sha256/<its digest>
 * In every section, "@Dk" and "@Sk" (k a digit) stand for the digest
 * ("sha256:...") and the size of section k, if k comes after the section
 * (so that the references form no loop); else they stay as they are.
 * Sections are filled in from the last one, so a mutated blob still
 * verifies against the descriptor that points at it, and the fuzzer gets
 * past the digest checks to the rules behind them.
 *
 * When lfs_layout_resolve() accepts the layout, the image it returns
 * must be one oci2ovl can use: valid digests and diff_ids, a known layer
 * media type with its compression, at most LFS_MAX_LAYERS layers, a
 * config object. Then fuzz.c's checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "uapi/layerfs.h"

#define LFS_SEP "\n--\n"
#define LFS_MAX_SECTIONS 10

struct lfs_section {
	const uint8_t *in; /* as given */
	size_t inlen;
	char *out; /* placeholders filled in */
	size_t outlen;
	char digest[LFS_DIGEST_LEN + 1];
};

static void lfs_write_all(int dirfd, const char *name, const void *buf,
			  size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			0644);
	size_t done = 0;

	if (fd < 0 && errno == EEXIST)
		return; /* two sections with the same bytes */
	if (fd < 0)
		lfs_fuzz_fail("create %s: %s", name, strerror(errno));
	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w <= 0)
			lfs_fuzz_fail("write %s: %s", name, strerror(errno));
		done += w;
	}
	close(fd);
}

/* section @i with "@Dk"/"@Sk" of the sections after it filled in */
static void lfs_fill(struct lfs_section *s, int i, int n)
{
	const uint8_t *p = s[i].in, *end = p + s[i].inlen;
	size_t cap = s[i].inlen + 1, len = 0;
	char *out = malloc(cap);

	if (!out)
		lfs_fuzz_fail("out of memory");
	while (p < end) {
		char rep[LFS_DIGEST_LEN + 1];
		const char *r = NULL;
		size_t rlen = 0, skip = 1;

		if (end - p >= 3 && p[0] == '@' &&
		    (p[1] == 'D' || p[1] == 'S') && p[2] >= '0' &&
		    p[2] <= '9' && p[2] - '0' > i && p[2] - '0' < n) {
			const struct lfs_section *t = &s[p[2] - '0'];

			if (p[1] == 'D') {
				r = t->digest;
			} else {
				snprintf(rep, sizeof(rep), "%zu", t->outlen);
				r = rep;
			}
			rlen = strlen(r);
			skip = 3;
		} else {
			r = (const char *)p;
			rlen = 1;
		}
		if (len + rlen + 1 > cap) {
			while (len + rlen + 1 > cap)
				cap *= 2;
			out = realloc(out, cap);
			if (!out)
				lfs_fuzz_fail("out of memory");
		}
		memcpy(out + len, r, rlen);
		len += rlen;
		p += skip;
	}
	out[len] = '\0';
	s[i].out = out;
	s[i].outlen = len;
	lfs_digest_buf(out, len, s[i].digest);
}

static void lfs_check_image(const struct lfs_image *img)
{
	enum lfs_compression comp;
	size_t i;

	if (!lfs_digest_valid(img->manifest_digest) ||
	    !lfs_digest_valid(img->config_digest))
		lfs_fuzz_fail(
			"accepted image with manifest \"%.80s\", config \"%.80s\"",
			img->manifest_digest, img->config_digest);
	if (!json_is_object(img->config))
		lfs_fuzz_fail("accepted image without a config object");
	if (img->nlayers > LFS_MAX_LAYERS || (img->nlayers && !img->layers))
		lfs_fuzz_fail("accepted image with %zu layers", img->nlayers);
	for (i = 0; i < img->nlayers; i++) {
		const struct lfs_layer_desc *l = &img->layers[i];

		if (!lfs_digest_valid(l->digest) ||
		    !lfs_digest_valid(l->diff_id))
			lfs_fuzz_fail(
				"accepted layer %zu with digest \"%.80s\", diff_id \"%.80s\"",
				i, l->digest, l->diff_id);
		if (!l->media_type ||
		    lfs_media_type_compression(l->media_type, &comp) ||
		    comp != l->comp)
			lfs_fuzz_fail(
				"accepted layer %zu of media type \"%.80s\"", i,
				l->media_type ?: "(null)");
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (lfs_fuzz_init("json"))
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lfs_section s[LFS_MAX_SECTIONS] = { 0 };
	char params[160], layout[PATH_MAX + 16], name[16 + LFS_SHA256_HEX];
	char *tag, *platform, *save;
	const uint8_t *p = data, *end = data + size;
	struct lfs_image img;
	int n = 0, i, dirfd, err;

	/* split into sections */
	while (n < LFS_MAX_SECTIONS) {
		const uint8_t *sep = memmem(p, end - p, LFS_SEP, 4);

		s[n].in = p;
		s[n].inlen = (sep && n < LFS_MAX_SECTIONS - 1 ? sep : end) - p;
		n++;
		if (!sep || n == LFS_MAX_SECTIONS)
			break;
		p = sep + 4;
	}
	if (n < 2)
		return 0;
	lfs_fuzz_begin();
	for (i = n - 1; i >= 1; i--)
		lfs_fill(s, i, n);

	snprintf(params, sizeof(params), "%.*s",
		 (int)(s[0].inlen < 128 ? s[0].inlen : 128),
		 (const char *)s[0].in);
	params[strcspn(params, "\n")] = '\0';
	tag = strtok_r(params, " ", &save);
	platform = strtok_r(NULL, " ", &save);
	if (tag && !strcmp(tag, "-"))
		tag = NULL;
	if (!platform)
		platform = LFS_DEFAULT_PLATFORM;

	if (mkdirat(lfs_fuzz_scratchfd, "layout", 0700))
		lfs_fuzz_fail("mkdir layout: %s", strerror(errno));
	dirfd = openat(lfs_fuzz_scratchfd, "layout",
		       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || mkdirat(dirfd, "blobs", 0700) ||
	    mkdirat(dirfd, "blobs/sha256", 0700))
		lfs_fuzz_fail("make the layout: %s", strerror(errno));
	lfs_write_all(dirfd, "oci-layout", "{\"imageLayoutVersion\":\"1.0.0\"}",
		      30);
	lfs_write_all(dirfd, "index.json", s[1].out, s[1].outlen);
	for (i = 2; i < n; i++) {
		snprintf(name, sizeof(name), "blobs/sha256/%s",
			 s[i].digest + 7);
		lfs_write_all(dirfd, name, s[i].out, s[i].outlen);
	}
	close(dirfd);
	for (i = 1; i < n; i++)
		free(s[i].out);

	snprintf(layout, sizeof(layout), "%s/layout", lfs_fuzz_scratch);
	lfs_fuzz_mute();
	err = lfs_layout_resolve(layout, tag, platform, &img);
	lfs_fuzz_unmute();
	/* -ENOENT: no image of that tag or platform, or a blob not there */
	lfs_fuzz_check_result("lfs_layout_resolve", err == -ENOENT ? 0 : err);
	if (!err)
		lfs_check_image(&img);
	lfs_image_release(&img);

	err = lfs_rm_tree_at(lfs_fuzz_scratchfd, "layout");
	if (err)
		lfs_fuzz_fail("cannot remove the layout: %s", strerror(-err));
	lfs_fuzz_check_clean("json");
	return 0;
}
