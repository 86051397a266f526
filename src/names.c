// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: a hash table of directory entry names, for merged listings
 * (readdir.c) and name indexes (nameindex.c).
 *
 * Entries are allocated from the table's own arena, in chunks, and are
 * freed all at once with the table.  An entry is a caller's structure
 * that starts with a struct lfs_name; its name is stored right after it.
 * The table grows as names are added, so it costs time linear in the
 * names.  No locking: a table is built by one task and then only read.
 */
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hash.h>
#include "layerfs.h"

/*
 * Entries are carved out of chunks: the first of LFS_NAMES_CHUNK_MIN
 * bytes, each next one twice the last, up to LFS_NAMES_CHUNK_MAX (sizes
 * with the header, powers of two as kmalloc's are): most directories
 * are small, and a kept listing holds its chunks as long as it is kept.
 */
#define LFS_NAMES_CHUNK_MIN	1024
#define LFS_NAMES_CHUNK_MAX	(32 * 1024)

struct lfs_name_chunk {
	struct lfs_name_chunk *next;
	size_t used;
	size_t size;			/* of data[] */
	char data[];
};

/* the size, with its header, of the chunk after @last (or the first) */
static size_t lfs_nametab_chunk_size(const struct lfs_name_chunk *last,
				     size_t need)
{
	size_t total = LFS_NAMES_CHUNK_MIN;

	if (last)
		total = min_t(size_t, 2 * (sizeof(*last) + last->size),
			      LFS_NAMES_CHUNK_MAX);
	while (total - sizeof(*last) < need)
		total *= 2;
	return total;
}

static int lfs_nametab_rehash(struct lfs_nametab *t, unsigned int bits)
{
	struct lfs_name **hash, **old = t->hash;
	unsigned int i, nr = 1U << bits;

	hash = kvcalloc(nr, sizeof(*hash), GFP_KERNEL_ACCOUNT);
	if (!hash)
		return -ENOMEM;
	for (i = 0; old && i < (1U << t->bits); i++) {
		struct lfs_name *n = old[i], *next;

		for (; n; n = next) {
			unsigned int b = hash_32(n->hash, bits);

			next = n->next;
			n->next = hash[b];
			hash[b] = n;
		}
	}
	if (old)
		t->bytes -= sizeof(*old) << t->bits;
	kvfree(old);
	t->bytes += sizeof(*hash) * nr;
	t->hash = hash;
	t->bits = bits;
	return 0;
}

/**
 * lfs_nametab_init - an empty table
 * @t: the table
 * @bits: log2 of the initial number of buckets
 *
 * Return: 0 or -ENOMEM.
 */
int lfs_nametab_init(struct lfs_nametab *t, unsigned int bits)
{
	memset(t, 0, sizeof(*t));
	return lfs_nametab_rehash(t, bits);
}

/**
 * lfs_nametab_destroy - free a table and every entry in it
 * @t: the table (initialised, or zeroed)
 */
void lfs_nametab_destroy(struct lfs_nametab *t)
{
	struct lfs_name_chunk *c, *next;

	for (c = t->chunks; c; c = next) {
		next = c->next;
		kvfree(c);
	}
	kvfree(t->hash);
	memset(t, 0, sizeof(*t));
}

/**
 * lfs_nametab_find - the entry of a name
 * @t: the table
 * @name: the name (not NUL-terminated)
 * @len: its length
 * @hash: full_name_hash(NULL, @name, @len)
 *
 * Return: the entry, or NULL.
 */
struct lfs_name *lfs_nametab_find(const struct lfs_nametab *t,
				  const char *name, unsigned int len, u32 hash)
{
	struct lfs_name *n = t->hash[hash_32(hash, t->bits)];

	for (; n; n = n->next)
		if (n->hash == hash && n->len == len && !memcmp(n->name, name, len))
			return n;
	return NULL;
}

static void *lfs_nametab_alloc(struct lfs_nametab *t, size_t size)
{
	struct lfs_name_chunk *c = t->chunks;
	size_t total;
	void *p;

	size = ALIGN(size, 8);
	/* unreachable: no filesystem lists names that long (FUSE: 1 KiB) */
	if (WARN_ON_ONCE(size > LFS_NAMES_CHUNK_MAX - sizeof(*c)))
		return NULL;
	if (!c || c->used + size > c->size) {
		total = lfs_nametab_chunk_size(c, size);
		c = kvmalloc(total, GFP_KERNEL_ACCOUNT);
		if (!c)
			return NULL;
		t->bytes += total;
		c->used = 0;
		c->size = total - sizeof(*c);
		c->next = t->chunks;
		t->chunks = c;
	}
	p = c->data + c->used;
	c->used += size;
	return p;
}

/**
 * lfs_nametab_add - hash in a new entry for a name not in the table
 * @t: the table
 * @size: the size of the caller's entry, which starts with a struct lfs_name
 * @name: the name
 * @len: its length (at most NAME_MAX)
 * @hash: full_name_hash(NULL, @name, @len)
 *
 * Return: the entry, its struct lfs_name filled in and the rest zeroed,
 * or NULL when out of memory.
 */
void *lfs_nametab_add(struct lfs_nametab *t, size_t size, const char *name,
		      unsigned int len, u32 hash)
{
	struct lfs_name *n;
	unsigned int b;
	char *copy;

	if (t->count >= (2U << t->bits) && lfs_nametab_rehash(t, t->bits + 1))
		return NULL;
	n = lfs_nametab_alloc(t, size + len);
	if (!n)
		return NULL;
	memset(n, 0, size);
	copy = (char *)n + size;
	memcpy(copy, name, len);
	n->name = copy;
	n->len = len;
	n->hash = hash;
	b = hash_32(hash, t->bits);
	n->next = t->hash[b];
	t->hash[b] = n;
	t->count++;
	return n;
}
