// SPDX-License-Identifier: GPL-2.0
/*
 * SHA-256 digests (OpenSSL libcrypto) and blob verification.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "oci2ovl.h"

struct lfs_sha256 {
	EVP_MD_CTX *ctx; /* an initialised SHA-256 context */
};

/*
 * SHA-256 fetched once: EVP_sha256() is fetched again by every
 * EVP_DigestInit_ex(), and a tree manifest starts one digest per file
 */
static pthread_once_t lfs_sha256_once = PTHREAD_ONCE_INIT;
static EVP_MD *lfs_sha256_md;

static void lfs_sha256_fetch(void)
{
	lfs_sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
}

static const EVP_MD *lfs_sha256_type(void)
{
	pthread_once(&lfs_sha256_once, lfs_sha256_fetch);
	return lfs_sha256_md ?: EVP_sha256();
}

struct lfs_sha256 *lfs_sha256_new(void)
{
	struct lfs_sha256 *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || lfs_sha256_reset(h)) {
		lfs_sha256_free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

/* start over: the digest of nothing so far */
int lfs_sha256_reset(struct lfs_sha256 *h)
{
	return EVP_DigestInit_ex(h->ctx, lfs_sha256_type(), NULL) ? 0 : -EIO;
}

int lfs_sha256_update(struct lfs_sha256 *h, const void *buf, size_t len)
{
	return EVP_DigestUpdate(h->ctx, buf, len) ? 0 : -EIO;
}

/* the 32 bytes of the digest; @h is then reset before another use */
void lfs_sha256_final_raw(struct lfs_sha256 *h, unsigned char md[32])
{
	unsigned int n = 0;

	EVP_DigestFinal_ex(h->ctx, md, &n);
}

/* @n bytes of @b in lower-case hex, and a NUL, into @out */
void lfs_hex(const unsigned char *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* writes "sha256:<64 hex>" */
void lfs_sha256_final(struct lfs_sha256 *h, char out[LFS_DIGEST_LEN + 1])
{
	unsigned char md[32];

	lfs_sha256_final_raw(h, md);
	memcpy(out, "sha256:", 7);
	lfs_hex(md, 32, out + 7);
}

void lfs_sha256_free(struct lfs_sha256 *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

/*
 * lfs_digest_valid() - is @digest "sha256:" and 64 lower-case hex digits?
 *
 * Digests become file names (blobs/sha256/HEX, layers/HEX), so nothing
 * else is accepted: no other algorithm, no separators, no "..".
 */
bool lfs_digest_valid(const char *digest)
{
	size_t i;

	if (strncmp(digest, "sha256:", 7) || strlen(digest) != LFS_DIGEST_LEN)
		return false;
	for (i = 7; i < LFS_DIGEST_LEN; i++)
		if (!strchr("0123456789abcdef", digest[i]))
			return false;
	return true;
}

int lfs_digest_buf(const void *buf, size_t len, char out[LFS_DIGEST_LEN + 1])
{
	struct lfs_sha256 *h = lfs_sha256_new();

	if (!h)
		return -ENOMEM;
	lfs_sha256_update(h, buf, len);
	lfs_sha256_final(h, out);
	lfs_sha256_free(h);
	return 0;
}

/**
 * lfs_verify_blob_fd() - check a blob's size and digest before using it
 * @fd: the blob, read from its current offset to EOF, then rewound
 * @what: names the blob in messages
 * @digest: expected digest
 * @size: expected size in bytes
 *
 * Reads at most @size + 1 bytes, so a blob that grows without end (or a
 * huge one) cannot keep us busy past its declared size.
 *
 * Return: 0, -LFS_EREFUSED on a mismatch, or -errno.
 */
int lfs_verify_blob_fd(int fd, const char *what, const char *digest,
		       uint64_t size)
{
	char got[LFS_DIGEST_LEN + 1];
	struct lfs_sha256 *h;
	static char buf[1 << 16];
	uint64_t total = 0;
	ssize_t r;
	int err = 0;

	h = lfs_sha256_new();
	if (!h)
		return -ENOMEM;
	for (;;) {
		size_t want = sizeof(buf);

		if (size + 1 - total < want)
			want = size + 1 - total;
		r = read(fd, buf, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (r == 0)
			break;
		lfs_sha256_update(h, buf, r);
		total += r;
		if (total > size)
			break;
	}
	if (total > size) {
		err = lfs_refuse(what, NULL,
				 "blob is larger than the manifest's size %llu",
				 (unsigned long long)size);
		goto out;
	}
	if (total != size) {
		err = lfs_refuse(
			what, NULL,
			"blob size %llu differs from the manifest's %llu",
			(unsigned long long)total, (unsigned long long)size);
		goto out;
	}
	lfs_sha256_final(h, got);
	if (strcmp(got, digest)) {
		err = lfs_refuse(what, NULL,
				 "blob digest %s differs from the manifest's",
				 got);
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) < 0)
		err = -errno;
out:
	lfs_sha256_free(h);
	return err;
}
