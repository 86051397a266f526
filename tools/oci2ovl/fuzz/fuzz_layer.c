// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: one layer blob through lfs_extract_layer() (decompression,
 * the tar reader, path and whiteout rules, the entries made on disk) into
 * a fresh directory of the scratch, then removed.
 *
 * Input: one flags byte, then the blob.
 *   bits 0-1  0: a tar, given uncompressed
 *             1: a tar, gzip-compressed here (so that the tar is fuzzed
 *                through the gzip path)
 *             2: a gzip blob as it is (the fuzzer mutates the stream)
 *             3: a zstd blob as it is
 *   bit 2     chardev whiteouts (else native)
 *   bit 3     modes 0 and 1: the tar as it is; else its header checksums
 *             and PAX record lengths are made right first, so that a
 *             mutated header reaches the code behind the tar reader
 *   bits 4-5  limits: see lfs_presets[]
 *   bit 6     check a diff_id: the tar's digest (modes 0 and 1), the
 *             blob's (modes 2 and 3: a mismatch)
 *   bit 7     the media type lies: gzip and zstd swapped, none and gzip
 *             swapped
 * The blob is handed over in a memfd: no file, nothing to remove.
 *
 * After a successful extraction the layer must carry no overlay xattr
 * but the markers oci2ovl writes itself (a whiteout's on a symlink to
 * LFS_WHITEOUT_TARGET, an opaque directory's); then fuzz.c's checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <zlib.h>

#include "fuzz.h"
#include "uapi/layerfs.h"

#define LFS_F_MODE 0x03
#define LFS_F_CHARDEV 0x04
#define LFS_F_RAW 0x08
#define LFS_F_LIMITS(f) (((f) >> 4) & 3)
#define LFS_F_DIFF_ID 0x40
#define LFS_F_LIE 0x80

enum { LFS_M_TAR, LFS_M_TAR_GZIP, LFS_M_GZIP, LFS_M_ZSTD };

static const struct lfs_limits lfs_presets[4] = {
	{ .max_entries = 4096, .max_bytes = 2 << 20, .max_path = PATH_MAX - 1,
	  .max_names = 1 << 20, .max_xattrs = 1 << 20 },
	/* the crafted corpus's --max-entries 10 --max-bytes 1M --max-path 100 */
	{ .max_entries = 10, .max_bytes = 1 << 20, .max_path = 100,
	  .max_names = 64 << 10, .max_xattrs = 64 << 10 },
	{ .max_entries = 64, .max_bytes = 64 << 10, .max_path = 255,
	  .max_names = 4096, .max_xattrs = 4096 },
	{ .max_entries = 1, .max_bytes = 512, .max_path = 8, .max_names = 64,
	  .max_xattrs = 64 },
};

/* a growing output buffer */
struct lfs_buf {
	uint8_t *p;
	size_t len, cap;
};

static void lfs_buf_put(struct lfs_buf *b, const void *data, size_t n)
{
	if (!n)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;

		while (cap < b->len + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			lfs_fuzz_fail("out of memory");
		b->cap = cap;
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
}

static void lfs_buf_pad(struct lfs_buf *b)
{
	static const uint8_t zero[512];

	if (b->len % 512)
		lfs_buf_put(b, zero, 512 - b->len % 512);
}

/* a tar size field: octal digits, or base-256 with the high bit set */
static uint64_t lfs_tar_size(const uint8_t *f, size_t n)
{
	uint64_t v = 0;
	size_t i = 0;

	if (f[0] & 0x80) {
		for (i = 1; i < n; i++) {
			if (v >> 50)
				return UINT64_MAX;
			v = v << 8 | f[i];
		}
		return (f[0] & 0x40) ? UINT64_MAX : v;
	}
	while (i < n && (f[i] == ' ' || f[i] == '\0'))
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v >> 60)
			return UINT64_MAX;
		v = v << 3 | (f[i] - '0');
	}
	return v;
}

static void lfs_tar_checksum(uint8_t *h)
{
	unsigned int sum = 0, i;

	memset(h + 148, ' ', 8);
	for (i = 0; i < 512; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum & 0777777);
	h[155] = ' ';
}

/*
 * The records of a PAX header, "LEN key=value\n" each, with every LEN
 * made right: a record whose LEN already ends it at a '\n' is kept (its
 * value may hold newlines), else it ends at the next '\n'.
 */
static void lfs_pax_fixup(const uint8_t *d, size_t n, struct lfs_buf *out)
{
	size_t pos = 0;

	while (pos < n) {
		size_t i = pos, len = 0, end, body, want, digits;
		const uint8_t *nl;
		char num[24];

		while (i < n && i - pos < 12 && d[i] >= '0' && d[i] <= '9')
			len = len * 10 + (d[i++] - '0');
		if (i > pos && i < n && d[i] == ' ' && len > i - pos + 1 &&
		    len <= n - pos && d[pos + len - 1] == '\n') {
			lfs_buf_put(out, d + pos, len);
			pos += len;
			continue;
		}
		/* no usable LEN: the record is the text up to the next '\n' */
		body = (i > pos && i < n && d[i] == ' ') ? i + 1 : pos;
		nl = memchr(d + body, '\n', n - body);
		end = nl ? (size_t)(nl - d) : n;
		want = end - body + 2; /* ' ' and '\n' */
		for (digits = 1; snprintf(num, sizeof(num), "%zu",
					  want + digits) != (int)digits;)
			digits++;
		lfs_buf_put(out, num, digits);
		lfs_buf_put(out, " ", 1);
		lfs_buf_put(out, d + body, end - body);
		lfs_buf_put(out, "\n", 1);
		pos = nl ? end + 1 : n;
	}
}

/*
 * Make a mutated tar readable past its headers: each header's checksum
 * recomputed, PAX records' lengths (and so the PAX header's size) made
 * right. Stops fixing at a zero block or a size that runs off the end;
 * what follows is copied as it is.
 */
static void lfs_tar_fixup(const uint8_t *in, size_t n, struct lfs_buf *out)
{
	static const uint8_t zero[512];
	size_t pos = 0;

	while (n - pos >= 512 && memcmp(in + pos, zero, 512)) {
		uint8_t h[512];
		uint64_t size;
		size_t avail = n - pos - 512, take;

		memcpy(h, in + pos, 512);
		size = lfs_tar_size(h + 124, 12);
		if ((h[156] == 'x' || h[156] == 'g') && size <= avail &&
		    size <= 65536) {
			struct lfs_buf pax = { 0 };

			lfs_pax_fixup(in + pos + 512, size, &pax);
			snprintf((char *)h + 124, 12, "%011zo", pax.len);
			lfs_tar_checksum(h);
			lfs_buf_put(out, h, 512);
			if (pax.len)
				lfs_buf_put(out, pax.p, pax.len);
			lfs_buf_pad(out);
			free(pax.p);
			pos += 512 + ((size + 511) & ~(uint64_t)511);
			if (pos > n)
				return;
			continue;
		}
		lfs_tar_checksum(h);
		lfs_buf_put(out, h, 512);
		pos += 512;
		if (size > avail)
			break;
		take = (size + 511) & ~(uint64_t)511;
		if (take > avail)
			take = avail;
		lfs_buf_put(out, in + pos, take);
		pos += take;
	}
	if (pos < n)
		lfs_buf_put(out, in + pos, n - pos);
}

static void lfs_gzip(const uint8_t *in, size_t n, struct lfs_buf *out)
{
	z_stream zs = { 0 };
	uLong bound;

	if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		lfs_fuzz_fail("deflateInit2 failed");
	bound = deflateBound(&zs, n) + 32;
	out->p = malloc(bound);
	if (!out->p)
		lfs_fuzz_fail("out of memory");
	out->cap = bound;
	zs.next_in = (Bytef *)in;
	zs.avail_in = n;
	zs.next_out = out->p;
	zs.avail_out = bound;
	if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
		lfs_fuzz_fail("deflate did not finish");
	out->len = zs.total_out;
	deflateEnd(&zs);
}

/* the layer may carry overlay xattrs only as oci2ovl's own markers */
static void lfs_check_xattrs(int dirfd, const char *name, const char *rel,
			     const struct stat *st, enum lfs_whiteout_fmt fmt)
{
	char path[64 + NAME_MAX], names[8192], target[64];
	const char *x;
	ssize_t n, t;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	n = llistxattr(path, names, sizeof(names));
	if (n < 0)
		lfs_fuzz_fail("llistxattr %s: %s", rel, strerror(errno));
	for (x = names; x < names + n; x += strlen(x) + 1) {
		if (!lfs_xattr_is_overlay(x))
			continue;
		if (!strcmp(x, LFS_XATTR_OPAQUE) && S_ISDIR(st->st_mode))
			continue;
		if (!strcmp(x, LFS_XATTR_WHITEOUT) && fmt == LFS_WH_NATIVE &&
		    S_ISLNK(st->st_mode)) {
			t = readlinkat(dirfd, name, target, sizeof(target) - 1);
			if (t == sizeof(LFS_WHITEOUT_TARGET) - 1 &&
			    !memcmp(target, LFS_WHITEOUT_TARGET, t))
				continue;
		}
		lfs_fuzz_fail("layer entry \"%s\" carries the overlay xattr %s",
			      rel, x);
	}
}

static void lfs_walk(int dirfd, const char *rel, enum lfs_whiteout_fmt fmt,
		     int depth)
{
	char buf[4096], sub[PATH_MAX];
	long n, off;

	if (depth > PATH_MAX / 2)
		lfs_fuzz_fail("layer deeper than a path can be: %s", rel);
	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			struct stat st;
			int fd;

			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", rel, de->d_name);
			if (fstatat(dirfd, de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW))
				lfs_fuzz_fail("stat %s: %s", sub,
					      strerror(errno));
			lfs_check_xattrs(dirfd, de->d_name, sub, &st, fmt);
			if (!S_ISDIR(st.st_mode))
				continue;
			fd = openat(dirfd, de->d_name,
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
			if (fd < 0)
				lfs_fuzz_fail("open %s: %s", sub,
					      strerror(errno));
			lfs_walk(fd, sub, fmt, depth + 1);
			close(fd);
		}
	}
	if (n < 0)
		lfs_fuzz_fail("read directory %s: %s", rel, strerror(errno));
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (lfs_fuzz_init("layer"))
		exit(1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum lfs_compression lie[] = {
		[LFS_COMP_NONE] = LFS_COMP_GZIP,
		[LFS_COMP_GZIP] = LFS_COMP_ZSTD,
		[LFS_COMP_ZSTD] = LFS_COMP_GZIP,
	};
	char diff_id[LFS_DIGEST_LEN + 1];
	struct lfs_extract_opts o = { .layer_name = "sha256:fuzz" };
	struct lfs_buf tar = { 0 }, blob = { 0 };
	const uint8_t *b;
	size_t n, done;
	uint8_t flags;
	int blobfd, rootfd, err;

	if (!size)
		return 0;
	lfs_fuzz_begin();
	flags = data[0];
	data++;
	size--;
	o.lim = lfs_presets[LFS_F_LIMITS(flags)];
	o.fmt = (flags & LFS_F_CHARDEV) ? LFS_WH_CHARDEV : LFS_WH_NATIVE;

	b = data;
	n = size;
	switch (flags & LFS_F_MODE) {
	case LFS_M_TAR:
	case LFS_M_TAR_GZIP:
		if (!(flags & LFS_F_RAW)) {
			lfs_tar_fixup(data, size, &tar);
			b = tar.p;
			n = tar.len;
		}
		lfs_digest_buf(b, n, diff_id);
		o.comp = LFS_COMP_NONE;
		if ((flags & LFS_F_MODE) == LFS_M_TAR_GZIP) {
			lfs_gzip(b, n, &blob);
			b = blob.p;
			n = blob.len;
			o.comp = LFS_COMP_GZIP;
		}
		break;
	case LFS_M_GZIP:
		o.comp = LFS_COMP_GZIP;
		lfs_digest_buf(b, n, diff_id);
		break;
	default:
		o.comp = LFS_COMP_ZSTD;
		lfs_digest_buf(b, n, diff_id);
		break;
	}
	if (flags & LFS_F_DIFF_ID)
		o.diff_id = diff_id;
	if (flags & LFS_F_LIE)
		o.comp = lie[o.comp];

	blobfd = memfd_create("oci2ovl-fuzz-blob", MFD_CLOEXEC);
	if (blobfd < 0)
		lfs_fuzz_fail("memfd_create: %s", strerror(errno));
	for (done = 0; done < n;) {
		ssize_t w = write(blobfd, b + done, n - done);

		if (w <= 0)
			lfs_fuzz_fail("write memfd: %s", strerror(errno));
		done += w;
	}
	if (lseek(blobfd, 0, SEEK_SET))
		lfs_fuzz_fail("lseek memfd: %s", strerror(errno));
	free(tar.p);
	free(blob.p);

	if (mkdirat(lfs_fuzz_scratchfd, "layer", 0700))
		lfs_fuzz_fail("mkdir %s/layer: %s", lfs_fuzz_scratch,
			      strerror(errno));
	rootfd = openat(lfs_fuzz_scratchfd, "layer",
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		lfs_fuzz_fail("open %s/layer: %s", lfs_fuzz_scratch,
			      strerror(errno));

	lfs_fuzz_mute();
	err = lfs_extract_layer(blobfd, rootfd, &o);
	lfs_fuzz_unmute();
	close(blobfd);
	lfs_fuzz_check_result("lfs_extract_layer", err);
	if (!err)
		lfs_walk(rootfd, "", o.fmt, 0);
	close(rootfd);
	err = lfs_rm_tree_at(lfs_fuzz_scratchfd, "layer");
	if (err)
		lfs_fuzz_fail("cannot remove the layer: %s", strerror(-err));
	lfs_fuzz_check_clean("layer");
	return 0;
}
