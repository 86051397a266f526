// SPDX-License-Identifier: GPL-2.0
/*
 * The set of paths one layer has created so far, with what each is.
 *
 * A layer is extracted into a fresh empty directory, so this set is the
 * whole truth about what is on disk: it tells a duplicate entry from an
 * implicit parent, a symlink in the middle of a path, a hard link to
 * something that is not in the layer. Open addressing, FNV-1a.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci2ovl.h"

struct lfs_pathset_slot {
	char *key; /* normalised path, owned; NULL: free */
	enum lfs_node_kind kind;
};

struct lfs_pathset {
	struct lfs_pathset_slot *slots;
	size_t cap; /* a power of two */
	size_t count; /* used slots, kept below cap / 2 */
};

static size_t lfs_pathset_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)h;
}

struct lfs_pathset *lfs_pathset_new(void)
{
	struct lfs_pathset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->cap = 64;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	if (!set->slots) {
		free(set);
		return NULL;
	}
	return set;
}

void lfs_pathset_free(struct lfs_pathset *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->cap; i++)
		free(set->slots[i].key);
	free(set->slots);
	free(set);
}

static struct lfs_pathset_slot *lfs_pathset_find(const struct lfs_pathset *set,
						 const char *path)
{
	size_t i = lfs_pathset_hash(path) & (set->cap - 1);

	while (set->slots[i].key && strcmp(set->slots[i].key, path))
		i = (i + 1) & (set->cap - 1);
	return &set->slots[i];
}

/* Return: the enum lfs_node_kind of @path, or -ENOENT */
int lfs_pathset_lookup(const struct lfs_pathset *set, const char *path)
{
	struct lfs_pathset_slot *s = lfs_pathset_find(set, path);

	return s->key ? (int)s->kind : -ENOENT;
}

static int lfs_pathset_grow(struct lfs_pathset *set)
{
	struct lfs_pathset old = *set;
	size_t i;

	set->cap *= 2;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	if (!set->slots) {
		*set = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*lfs_pathset_find(set, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

/* add @path or change its kind */
int lfs_pathset_set(struct lfs_pathset *set, const char *path,
		    enum lfs_node_kind kind)
{
	struct lfs_pathset_slot *s;
	int err;

	if ((set->count + 1) * 2 > set->cap) {
		err = lfs_pathset_grow(set);
		if (err)
			return err;
	}
	s = lfs_pathset_find(set, path);
	if (!s->key) {
		s->key = strdup(path);
		if (!s->key)
			return -ENOMEM;
		set->count++;
	}
	s->kind = kind;
	return 0;
}

size_t lfs_pathset_count(const struct lfs_pathset *set)
{
	return set->count;
}
