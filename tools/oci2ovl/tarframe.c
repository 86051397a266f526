// SPDX-License-Identifier: GPL-2.0
/*
 * The block structure of a layer's tar stream, read on its own.
 *
 * libarchive parses the entries. Every decompressed byte it is given is
 * also fed here (lfs_tar_read() in extract.c), and read with the rules of
 * Go's archive/tar, the reader containerd unpacks layers with: for each
 * entry, where its first header starts and how many data bytes its
 * headers declare. extract.c checks each entry libarchive returns
 * against that reading:
 *
 *  - the entry must start where this reading says the next one starts.
 *    Readers that disagree on where an entry's data ends read different
 *    entries from one stream (data smuggled as headers, headers hidden as
 *    data); any disagreement is refused;
 *  - a header-only type (hard link, symlink, device, directory, fifo)
 *    must declare no data: Go and libarchive ignore such a size (mostly:
 *    libarchive honours it on a pax hard link) and read the data blocks
 *    as headers, while other readers skip them;
 *  - only files, links, devices, directories, fifos, GNU sparse files and
 *    the pax ('x', 'g') and GNU ('L', 'K') extension headers are known;
 *    another type flag is refused, as containerd refuses it;
 *  - after the end-of-archive block only zero bytes may follow (the
 *    padding of the last record). Anything else there is seen by readers
 *    that go on past the end (tar -i) and by nobody else.
 *
 * An extension header, like Go's and libarchive's, is at most 1 MiB, so
 * this never holds more than one of them in memory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oci2ovl.h"

#define LFS_TAR_BLOCK 512
#define LFS_TAR_MAX_SPECIAL (1 << 20)

enum lfs_tf_state {
	LFS_TF_HEADER, /* gathering a header block */
	LFS_TF_SKIP, /* skipping data and its padding */
	LFS_TF_PAX, /* gathering the records of a pax 'x' header */
	LFS_TF_SPARSE, /* gathering a GNU sparse extension block */
	LFS_TF_END, /* past the end-of-archive block: zeros only */
	LFS_TF_ERROR, /* stopped; rule says why */
};

struct lfs_tarframe {
	enum lfs_tf_state state;
	uint64_t off; /* bytes fed so far */
	unsigned char blk[LFS_TAR_BLOCK]; /* the block being gathered */
	size_t fill; /* ... its bytes so far */
	uint64_t skip; /* SKIP: bytes left */
	uint64_t after; /* PAX, SPARSE: bytes to skip once gathered */
	char *pax; /* PAX: the records */
	size_t paxlen, paxwant, paxcap;
	bool in_entry; /* extension headers of the next entry were read */
	bool only_global; /* ... and all of them were 'g' headers */
	uint64_t start; /* offset of the next entry's first header */
	int64_t pax_size; /* "size" of its last 'x' header, or -1 */
	struct lfs_tar_frame *q; /* entries read and not yet claimed */
	size_t qhead, qlen, qcap;
	const char *rule; /* ERROR: why */
	char rulebuf[64];
};

struct lfs_tarframe *lfs_tarframe_new(void)
{
	struct lfs_tarframe *t = calloc(1, sizeof(*t));

	if (t)
		t->pax_size = -1;
	return t;
}

void lfs_tarframe_free(struct lfs_tarframe *t)
{
	if (!t)
		return;
	free(t->pax);
	free(t->q);
	free(t);
}

static void lfs_tf_stop(struct lfs_tarframe *t, const char *rule)
{
	t->state = LFS_TF_ERROR;
	t->rule = rule;
}

static uint64_t lfs_tf_padded(uint64_t n)
{
	return n + (LFS_TAR_BLOCK - n % LFS_TAR_BLOCK) % LFS_TAR_BLOCK;
}

/* an octal field: digits between leading and trailing spaces or NULs */
static bool lfs_tf_octal(const unsigned char *f, size_t n, uint64_t *out)
{
	size_t i = 0, end = n;
	uint64_t v = 0;

	while (i < end && (f[i] == ' ' || !f[i]))
		i++;
	while (end > i && (f[end - 1] == ' ' || !f[end - 1]))
		end--;
	for (; i < end; i++) {
		if (f[i] < '0' || f[i] > '7' || v >> 60)
			return false;
		v = v * 8 + (f[i] - '0');
	}
	*out = v;
	return true;
}

/* a numeric field: octal, or base-256 (a non-negative one) */
static bool lfs_tf_number(const unsigned char *f, size_t n, uint64_t *out)
{
	uint64_t v;
	size_t i;

	if (!(f[0] & 0x80))
		return lfs_tf_octal(f, n, out);
	if (f[0] & 0x40)
		return false;
	v = f[0] & 0x3f;
	for (i = 1; i < n; i++) {
		if (v >> 55)
			return false;
		v = v << 8 | f[i];
	}
	*out = v;
	return true;
}

/* the stored checksum is the sum of the block's bytes, unsigned or signed */
static bool lfs_tf_checksum_ok(const unsigned char *b)
{
	int64_t s = 0, u = 0;
	uint64_t want;
	size_t i;

	for (i = 0; i < LFS_TAR_BLOCK; i++) {
		unsigned char c = i >= 148 && i < 156 ? ' ' : b[i];

		u += c;
		s += (signed char)c;
	}
	return lfs_tf_octal(b + 148, 8, &want) &&
	       ((int64_t)want == u || (int64_t)want == s);
}

static bool lfs_tf_zero(const unsigned char *b, size_t n)
{
	return !b[0] && !memcmp(b, b + 1, n - 1);
}

/*
 * The records of a pax 'x' header: "LEN KEY=VALUE\n", LEN counting the
 * whole record. A later 'x' header replaces an earlier one whole, and an
 * empty value keeps the header's own field (Go's reading).
 */
static bool lfs_tf_pax(struct lfs_tarframe *t)
{
	const char *p = t->pax, *end = t->pax + t->paxlen;

	t->pax_size = -1;
	while (p < end) {
		const char *q = p, *key, *eq, *val, *rec_end;
		uint64_t n = 0, v = 0;

		while (q < end && *q >= '0' && *q <= '9' && n <= t->paxlen)
			n = n * 10 + (*q++ - '0');
		if (q == p || q == end || *q != ' ' ||
		    n > (uint64_t)(end - p) || n < (uint64_t)(q - p) + 2)
			return false;
		rec_end = p + n;
		if (rec_end[-1] != '\n')
			return false;
		key = q + 1;
		eq = memchr(key, '=', rec_end - 1 - key);
		if (!eq || eq == key)
			return false;
		val = eq + 1;
		if (eq - key == 4 && !memcmp(key, "size", 4) &&
		    val < rec_end - 1) {
			for (q = val; q < rec_end - 1; q++) {
				if (*q < '0' || *q > '9' || v >> 59)
					return false;
				v = v * 10 + (*q - '0');
			}
			t->pax_size = v;
		}
		p = rec_end;
	}
	return true;
}

/* after a header or an extension: skip @n bytes, then a header */
static void lfs_tf_then_skip(struct lfs_tarframe *t, uint64_t n)
{
	t->skip = n;
	t->state = n ? LFS_TF_SKIP : LFS_TF_HEADER;
}

/* the records of an 'x' header are in: read them, skip the padding */
static void lfs_tf_pax_done(struct lfs_tarframe *t)
{
	if (lfs_tf_pax(t))
		lfs_tf_then_skip(t, t->after);
	else
		lfs_tf_stop(t, "malformed pax extended header");
}

/* queue the entry whose main header was just read */
static bool lfs_tf_push(struct lfs_tarframe *t, uint64_t size, char type)
{
	if (t->qhead + t->qlen == t->qcap) {
		if (t->qhead) {
			memmove(t->q, t->q + t->qhead, t->qlen * sizeof(*t->q));
			t->qhead = 0;
		} else {
			size_t cap = t->qcap ? 2 * t->qcap : 64;
			struct lfs_tar_frame *q =
				realloc(t->q, cap * sizeof(*q));

			if (!q)
				return false;
			t->q = q;
			t->qcap = cap;
		}
	}
	t->q[t->qhead + t->qlen++] = (struct lfs_tar_frame){
		.start = t->start,
		.size = size,
		.type = type,
	};
	t->in_entry = false;
	t->pax_size = -1;
	return true;
}

/* an extension header of @hsize bytes: 'x' records are read, others skipped */
static const char *lfs_tf_extension(struct lfs_tarframe *t, char type,
				    uint64_t hsize)
{
	if (hsize > LFS_TAR_MAX_SPECIAL)
		return "tar extension header larger than 1 MiB";
	if (type == 'g') {
		/* Go reads it as an entry of its own, which ends the last 'x' */
		t->pax_size = -1;
	} else {
		t->only_global = false;
	}
	if (type != 'x') {
		lfs_tf_then_skip(t, lfs_tf_padded(hsize));
		return NULL;
	}
	if (hsize > t->paxcap) {
		char *p = realloc(t->pax, hsize);

		if (!p)
			return "out of memory";
		t->pax = p;
		t->paxcap = hsize;
	}
	t->paxlen = 0;
	t->paxwant = hsize;
	t->after = lfs_tf_padded(hsize) - hsize;
	t->state = LFS_TF_PAX;
	if (!hsize)
		lfs_tf_pax_done(t);
	return NULL;
}

/*
 * A complete header block, which ended at t->off.
 * Return: NULL, or the rule it breaks.
 */
static const char *lfs_tf_header(struct lfs_tarframe *t)
{
	const unsigned char *b = t->blk;
	char type = b[156];
	uint64_t hsize, size;

	if (lfs_tf_zero(b, LFS_TAR_BLOCK)) {
		if (t->in_entry && !t->only_global)
			return "tar extension header without an entry";
		t->state = LFS_TF_END;
		return NULL;
	}
	if (!lfs_tf_checksum_ok(b))
		return "bad tar header checksum";
	if (!lfs_tf_number(b + 124, 12, &hsize))
		return "bad size field in a tar header";
	if (!t->in_entry) {
		t->in_entry = true;
		t->only_global = true;
		t->start = t->off - LFS_TAR_BLOCK;
	}
	size = t->pax_size >= 0 ? (uint64_t)t->pax_size : hsize;
	switch (type) {
	case 'x':
	case 'g':
	case 'L':
	case 'K':
		return lfs_tf_extension(t, type, hsize);
	case '0':
	case '\0':
	case '7':
		if (!lfs_tf_push(t, size, type))
			return "out of memory";
		lfs_tf_then_skip(t, lfs_tf_padded(size));
		return NULL;
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
		/* header-only: readers ignore the size; extract.c refuses one */
		return lfs_tf_push(t, size, type) ? NULL : "out of memory";
	case 'S':
		if (memcmp(b + 257, "ustar  ", 8))
			return "GNU sparse entry in a header that is not GNU's";
		if (!lfs_tf_push(t, size, type))
			return "out of memory";
		t->after = lfs_tf_padded(size);
		if (b[482])
			t->state = LFS_TF_SPARSE;
		else
			lfs_tf_then_skip(t, t->after);
		return NULL;
	default:
		if (type > ' ' && type < 0x7f)
			snprintf(t->rulebuf, sizeof(t->rulebuf),
				 "unsupported tar entry type '%c'", type);
		else
			snprintf(t->rulebuf, sizeof(t->rulebuf),
				 "unsupported tar entry type 0x%02x",
				 (unsigned char)type);
		return t->rulebuf;
	}
}

/**
 * lfs_tarframe_feed() - read the next @len bytes of the tar stream
 *
 * A stream that breaks the rules stops the reading; lfs_tarframe_entry()
 * and lfs_tarframe_finish() then say why.
 */
void lfs_tarframe_feed(struct lfs_tarframe *t, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	while (len) {
		size_t n;

		switch (t->state) {
		case LFS_TF_ERROR:
			return;
		case LFS_TF_END:
			if (!lfs_tf_zero(p, len))
				lfs_tf_stop(
					t,
					"data after the tar end-of-archive marker");
			t->off += len;
			return;
		case LFS_TF_SKIP:
			n = len < t->skip ? len : t->skip;
			t->skip -= n;
			if (!t->skip)
				t->state = LFS_TF_HEADER;
			break;
		case LFS_TF_PAX:
			n = len < t->paxwant - t->paxlen ?
				    len :
				    t->paxwant - t->paxlen;
			memcpy(t->pax + t->paxlen, p, n);
			t->paxlen += n;
			if (t->paxlen == t->paxwant)
				lfs_tf_pax_done(t);
			break;
		default: /* HEADER, SPARSE: a block */
			n = len < LFS_TAR_BLOCK - t->fill ?
				    len :
				    LFS_TAR_BLOCK - t->fill;
			memcpy(t->blk + t->fill, p, n);
			t->fill += n;
			break;
		}
		t->off += n;
		p += n;
		len -= n;
		if (t->fill < LFS_TAR_BLOCK)
			continue;
		t->fill = 0;
		if (t->state == LFS_TF_HEADER) {
			const char *rule = lfs_tf_header(t);

			if (rule)
				lfs_tf_stop(t, rule);
		} else if (!t->blk[504]) /* the last sparse extension block */
			lfs_tf_then_skip(t, t->after);
	}
}

/**
 * lfs_tarframe_entry() - claim the next entry, which libarchive read at @pos
 * @f: set to its frame
 * @rule: on refusal, the rule broken
 *
 * Return: 0, or -LFS_EREFUSED when this reading has no entry at @pos.
 */
int lfs_tarframe_entry(struct lfs_tarframe *t, uint64_t pos,
		       struct lfs_tar_frame *f, const char **rule)
{
	if (!t->qlen) {
		*rule = t->state == LFS_TF_ERROR ?
				t->rule :
				"tar headers do not line up with the data sizes they declare";
		return -LFS_EREFUSED;
	}
	*f = t->q[t->qhead++];
	if (!--t->qlen)
		t->qhead = 0;
	if (f->start != pos) {
		*rule = "tar headers do not line up with the data sizes they declare";
		return -LFS_EREFUSED;
	}
	return 0;
}

/**
 * lfs_tarframe_finish() - the whole stream was fed: did it end well?
 *
 * It ends at the end-of-archive block (then zeros), or at a block
 * boundary outside an entry (some writers leave the marker out), with
 * every entry claimed.
 *
 * Return: 0, or -LFS_EREFUSED with @rule set.
 */
int lfs_tarframe_finish(struct lfs_tarframe *t, const char **rule)
{
	if (t->state == LFS_TF_ERROR)
		*rule = t->rule;
	else if (t->state != LFS_TF_END &&
		 (t->state != LFS_TF_HEADER || t->fill || t->in_entry))
		*rule = "tar stream ends inside an entry";
	else if (t->qlen)
		*rule = "tar headers do not line up with the data sizes they declare";
	else
		return 0;
	return -LFS_EREFUSED;
}
