// SPDX-License-Identifier: GPL-2.0
/*
 * The tree of paths one layer has met so far, with what each is.
 *
 * A layer is extracted into a fresh empty directory, so this tree is the
 * whole truth about what is on disk: it tells a duplicate entry from an
 * implicit parent, a symlink in the middle of a path, a hard link to
 * something that is not in the layer. A node also caches what the layers
 * below have at its path (extract.c), so each lower path is looked up once.
 *
 * Nodes are keyed by (parent node, name) in one open-addressing table
 * (FNV-1a), so walking a path costs one hash of each component: linear in
 * the path length, however deep it is, and a node holds its last
 * component only. A node's path is rebuilt from its parents when a
 * syscall needs it.
 *
 * A node only looked up, or only passed through, has no kind
 * (LFS_NODE_NONE): it is not a path of the layer. lfs_pathset_count()
 * counts the paths of the layer, entries and the parents they imply, for
 * --max-entries.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "oci2ovl.h"

struct lfs_pathset {
	struct lfs_pnode **slots; /* NULL: free */
	size_t cap; /* a power of two */
	size_t used; /* used slots, kept below cap / 2 */
	size_t count; /* nodes with a kind, the root aside */
	struct lfs_pnode *root; /* the layer root, not in slots */
};

static size_t lfs_pathset_hash(const struct lfs_pnode *parent, const char *s,
			       size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uintptr_t)parent;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (size_t)(h ^ (h >> 29));
}

static struct lfs_pnode *lfs_pnode_new(struct lfs_pnode *parent,
				       const char *name, size_t len)
{
	struct lfs_pnode *n = calloc(1, sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	n->parent = parent;
	n->namelen = len;
	n->plen = parent ? parent->plen + (parent->plen ? 1 : 0) + len : 0;
	memcpy(n->name, name, len);
	return n;
}

static void lfs_pnode_free(struct lfs_pnode *n)
{
	free(n->link);
	free(n->stack);
	free(n);
}

struct lfs_pathset *lfs_pathset_new(void)
{
	struct lfs_pathset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->cap = 64;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	set->root = lfs_pnode_new(NULL, "", 0);
	if (!set->slots || !set->root) {
		free(set->slots);
		free(set->root);
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
		if (set->slots[i])
			lfs_pnode_free(set->slots[i]);
	free(set->slots);
	lfs_pnode_free(set->root);
	free(set);
}

struct lfs_pnode *lfs_pathset_root(struct lfs_pathset *set)
{
	return set->root;
}

/* the slot of (@parent, @name): the node's, or the free one to use */
static struct lfs_pnode **lfs_pathset_slot(const struct lfs_pathset *set,
					   const struct lfs_pnode *parent,
					   const char *name, size_t len)
{
	size_t i = lfs_pathset_hash(parent, name, len) & (set->cap - 1);
	struct lfs_pnode *n;

	while ((n = set->slots[i]) &&
	       !(n->parent == parent && n->namelen == len &&
		 !memcmp(n->name, name, len)))
		i = (i + 1) & (set->cap - 1);
	return &set->slots[i];
}

/* the child @name (@len bytes, no '/') of @parent, or NULL */
struct lfs_pnode *lfs_pathset_get(const struct lfs_pathset *set,
				  const struct lfs_pnode *parent,
				  const char *name, size_t len)
{
	return *lfs_pathset_slot(set, parent, name, len);
}

static int lfs_pathset_grow(struct lfs_pathset *set)
{
	struct lfs_pnode **old = set->slots;
	size_t oldcap = set->cap, i;

	set->slots = calloc(2 * oldcap, sizeof(*set->slots));
	if (!set->slots) {
		set->slots = old;
		return -ENOMEM;
	}
	set->cap = 2 * oldcap;
	for (i = 0; i < oldcap; i++)
		if (old[i])
			*lfs_pathset_slot(set, old[i]->parent, old[i]->name,
					  old[i]->namelen) = old[i];
	free(old);
	return 0;
}

/*
 * lfs_pathset_add() - the child @name of @parent, made (LFS_NODE_NONE,
 * below unknown) if it is not there
 *
 * Return: the node, or NULL with errno set (ENOMEM).
 */
struct lfs_pnode *lfs_pathset_add(struct lfs_pathset *set,
				  struct lfs_pnode *parent, const char *name,
				  size_t len)
{
	struct lfs_pnode **s = lfs_pathset_slot(set, parent, name, len);

	if (*s)
		return *s;
	if ((set->used + 1) * 2 > set->cap) {
		if (lfs_pathset_grow(set)) {
			errno = ENOMEM;
			return NULL;
		}
		s = lfs_pathset_slot(set, parent, name, len);
	}
	*s = lfs_pnode_new(parent, name, len);
	if (!*s) {
		errno = ENOMEM;
		return NULL;
	}
	set->used++;
	return *s;
}

/*
 * lfs_pathset_mark() - give @n @kind: a node of another kind than
 * LFS_NODE_NONE is a path of the layer (the root always is, uncounted)
 */
void lfs_pathset_mark(struct lfs_pathset *set, struct lfs_pnode *n,
		      enum lfs_node_kind kind)
{
	if (n->parent && n->kind == LFS_NODE_NONE && kind != LFS_NODE_NONE)
		set->count++;
	else if (n->parent && n->kind != LFS_NODE_NONE && kind == LFS_NODE_NONE)
		set->count--;
	n->kind = kind;
}

/* Return: the paths of the layer (nodes with a kind), the root aside */
size_t lfs_pathset_count(const struct lfs_pathset *set)
{
	return set->count;
}

/*
 * lfs_pnode_path() - write @n's path ("a/b/c", "" for the root) to @buf
 *
 * Return: 0, or -ENAMETOOLONG if it does not fit in @len bytes.
 */
int lfs_pnode_path(const struct lfs_pnode *n, char *buf, size_t len)
{
	size_t pos = n->plen;

	if (pos >= len)
		return -ENAMETOOLONG;
	buf[pos] = '\0';
	for (; n->parent; n = n->parent) {
		pos -= n->namelen;
		memcpy(buf + pos, n->name, n->namelen);
		if (pos)
			buf[--pos] = '/';
	}
	return 0;
}
