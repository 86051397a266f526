// SPDX-License-Identifier: GPL-2.0
/*
 * gzip layer blobs, decompressed with zlib and checked to the last byte.
 *
 * libarchive's gzip filter checks neither a member's CRC-32 nor its
 * length, and it ends quietly at the first bytes that do not start a
 * member, so whatever follows the stream is never seen. A blob is read
 * here the way Go's compress/gzip reads it (containerd's decompressor,
 * when unpigz is not installed):
 *
 *  - it starts with a gzip member;
 *  - each member's CRC-32 and length are checked;
 *  - members may follow one another (RFC 1952 makes a gzip file a series
 *    of members; Go, gzip(1) and unpigz read them all), and their data is
 *    the concatenation;
 *  - anything else after the last member (garbage, zero padding, a
 *    truncated member) is an error, as it is for Go's reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "oci2ovl.h"

struct lfs_gzip {
	z_stream zs; /* inflateInit2()ed for gzip members */
	bool started; /* the first member's header was seen */
	bool member_end; /* the last member ended with its trailer */
	bool eof; /* the input ended */
};

struct lfs_gzip *lfs_gzip_new(void)
{
	struct lfs_gzip *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	/* 16 + window bits: a gzip header and trailer, not a zlib one */
	if (inflateInit2(&z->zs, 16 + MAX_WBITS) != Z_OK) {
		free(z);
		errno = ENOMEM;
		return NULL;
	}
	return z;
}

void lfs_gzip_free(struct lfs_gzip *z)
{
	if (!z)
		return;
	inflateEnd(&z->zs);
	free(z);
}

/**
 * lfs_gzip_read() - decompress up to @len bytes into @out
 * @fill: gives the next compressed bytes: their count, 0 at the end of
 *        the blob, or -errno
 * @why: on -EINVAL, what is wrong with the stream
 *
 * Return: the bytes written (short only at the end), 0 at the end of the
 * last member, -EMEDIUMTYPE if the blob does not start as gzip, -EINVAL
 * for a bad stream (@why set), or an error from @fill.
 */
ssize_t lfs_gzip_read(struct lfs_gzip *z, void *out, size_t len,
		      ssize_t (*fill)(void *ctx, const void **buf), void *ctx,
		      const char **why)
{
	z_stream *zs = &z->zs;
	int ret;

	zs->next_out = out;
	zs->avail_out = len > UINT_MAX ? UINT_MAX : len;
	while (zs->avail_out) {
		if (!zs->avail_in && !z->eof) {
			const void *buf;
			ssize_t n = fill(ctx, &buf);

			if (n < 0)
				return n;
			if (!n)
				z->eof = true;
			zs->next_in = (unsigned char *)buf;
			zs->avail_in = n;
			continue;
		}
		if (!z->started) {
			if (zs->avail_in < 2 || zs->next_in[0] != 0x1f ||
			    zs->next_in[1] != 0x8b)
				return -EMEDIUMTYPE;
			z->started = true;
		}
		if (z->member_end) {
			if (!zs->avail_in)
				break;
			/* the next member, or whatever follows the last */
			if (zs->next_in[0] != 0x1f) {
				*why = "data after the end of the gzip stream";
				return -EINVAL;
			}
			inflateReset(zs);
			z->member_end = false;
		}
		if (!zs->avail_in) {
			*why = "truncated gzip stream";
			return -EINVAL;
		}
		ret = inflate(zs, Z_NO_FLUSH);
		if (ret == Z_STREAM_END)
			z->member_end = true;
		else if (ret != Z_OK && (ret != Z_BUF_ERROR || zs->avail_in)) {
			*why = zs->msg ?: "gzip decompression failed";
			return -EINVAL;
		}
	}
	return (unsigned char *)zs->next_out - (unsigned char *)out;
}
