// SPDX-License-Identifier: GPL-2.0
/*
 * The set of paths one layer has created so far, with what each is.
 *
 * A layer is extracted into a fresh empty directory, so this set is the
 * whole truth about what is on disk: it tells a duplicate entry from an
 * implicit parent, a symlink in the middle of a path, a hard link to
 * something that is not in the layer.
 *
 * The set is a tree: a node is one path component under its parent node,
 * found by hashing (parent, name) into an open-addressed table (FNV-1a).
 * Walking a path, or each of its prefixes in turn (lfs_pathset_child()),
 * costs the length of the path whatever its depth, and a path holds only
 * its last component in memory: a layer of deep paths costs no more than
 * its names. A node that is only the prefix of a path that was set has no
 * kind, and is not in the set.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "oci2ovl.h"

#define LFS_NO_KIND (-1)

struct lfs_pathset_node {
	size_t name; /* offset of the name in the set's names */
	uint32_t parent; /* index of the parent node; the root's is UINT32_MAX */
	uint16_t len; /* of the name, at most NAME_MAX */
	int8_t kind; /* enum lfs_node_kind, or LFS_NO_KIND */
};

struct lfs_pathset {
	struct lfs_pathset_node *nodes; /* node 0 is the root, "" */
	size_t nnodes, capnodes;
	char *names; /* every node's name, one after the other */
	size_t namelen, capnames;
	uint32_t *slots; /* node index + 1; 0: free */
	size_t cap; /* slots, a power of two, kept above 2 * nnodes */
	size_t count; /* nodes with a kind */
};

static size_t lfs_pathset_hash(size_t parent, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < sizeof(uint32_t); i++)
		h = (h ^ ((parent >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return (size_t)h;
}

struct lfs_pathset *lfs_pathset_new(void)
{
	struct lfs_pathset *set = calloc(1, sizeof(*set));

	if (!set)
		return NULL;
	set->cap = 64;
	set->capnodes = 32;
	set->slots = calloc(set->cap, sizeof(*set->slots));
	set->nodes = malloc(set->capnodes * sizeof(*set->nodes));
	if (!set->slots || !set->nodes) {
		lfs_pathset_free(set);
		return NULL;
	}
	set->nodes[0] = (struct lfs_pathset_node){ .parent = UINT32_MAX,
						   .kind = LFS_NO_KIND };
	set->nnodes = 1;
	return set;
}

void lfs_pathset_free(struct lfs_pathset *set)
{
	if (!set)
		return;
	free(set->slots);
	free(set->nodes);
	free(set->names);
	free(set);
}

/* the slot of (@parent, @name), or the free slot where it would go */
static uint32_t *lfs_pathset_slot(const struct lfs_pathset *set, size_t parent,
				  const char *name, size_t len)
{
	size_t i = lfs_pathset_hash(parent, name, len) & (set->cap - 1);

	for (;; i = (i + 1) & (set->cap - 1)) {
		const struct lfs_pathset_node *n;

		if (!set->slots[i])
			return &set->slots[i];
		n = &set->nodes[set->slots[i] - 1];
		if (n->parent == parent && n->len == len &&
		    !memcmp(set->names + n->name, name, len))
			return &set->slots[i];
	}
}

/**
 * lfs_pathset_child() - the node of @name under @node
 * @node: LFS_PATHSET_ROOT, a node from an earlier call, or LFS_PATHSET_NONE
 *
 * Return: the node, or LFS_PATHSET_NONE when no path set goes through it.
 */
size_t lfs_pathset_child(const struct lfs_pathset *set, size_t node,
			 const char *name, size_t len)
{
	uint32_t *s;

	if (node == LFS_PATHSET_NONE)
		return LFS_PATHSET_NONE;
	s = lfs_pathset_slot(set, node, name, len);
	return *s ? *s - 1 : LFS_PATHSET_NONE;
}

/* Return: the enum lfs_node_kind of @node, or -ENOENT */
int lfs_pathset_kind(const struct lfs_pathset *set, size_t node)
{
	if (node == LFS_PATHSET_NONE || set->nodes[node].kind == LFS_NO_KIND)
		return -ENOENT;
	return set->nodes[node].kind;
}

static int lfs_pathset_grow(struct lfs_pathset *set)
{
	uint32_t *old = set->slots;
	size_t oldcap = set->cap, i;

	set->slots = calloc(2 * oldcap, sizeof(*set->slots));
	if (!set->slots) {
		set->slots = old;
		return -ENOMEM;
	}
	set->cap = 2 * oldcap;
	for (i = 0; i < oldcap; i++) {
		const struct lfs_pathset_node *n;

		if (!old[i])
			continue;
		n = &set->nodes[old[i] - 1];
		*lfs_pathset_slot(set, n->parent, set->names + n->name,
				  n->len) = old[i];
	}
	free(old);
	return 0;
}

/* room for one more node and @len more name bytes */
static int lfs_pathset_reserve(struct lfs_pathset *set, size_t len)
{
	if (set->nnodes >= UINT32_MAX - 1 || len > UINT16_MAX)
		return -ENOMEM;
	if ((set->nnodes + 1) * 2 > set->cap && lfs_pathset_grow(set))
		return -ENOMEM;
	if (set->nnodes == set->capnodes) {
		size_t cap = 2 * set->capnodes;
		struct lfs_pathset_node *n;

		n = realloc(set->nodes, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		set->nodes = n;
		set->capnodes = cap;
	}
	if (set->namelen + len > set->capnames) {
		size_t cap = set->capnames ? 2 * set->capnames : 4096;
		char *p;

		while (cap < set->namelen + len)
			cap *= 2;
		p = realloc(set->names, cap);
		if (!p)
			return -ENOMEM;
		set->names = p;
		set->capnames = cap;
	}
	return 0;
}

/* the node of @name under @node, made (without a kind) if it is missing */
static int lfs_pathset_make(struct lfs_pathset *set, size_t node,
			    const char *name, size_t len, size_t *child)
{
	uint32_t *s;
	int err;

	s = lfs_pathset_slot(set, node, name, len);
	if (*s) {
		*child = *s - 1;
		return 0;
	}
	err = lfs_pathset_reserve(set, len);
	if (err)
		return err;
	/* the table may have grown: find the free slot again */
	s = lfs_pathset_slot(set, node, name, len);
	memcpy(set->names + set->namelen, name, len);
	set->nodes[set->nnodes] = (struct lfs_pathset_node){
		.name = set->namelen,
		.parent = node,
		.len = len,
		.kind = LFS_NO_KIND,
	};
	set->namelen += len;
	*child = set->nnodes++;
	*s = *child + 1;
	return 0;
}

static void lfs_pathset_mark(struct lfs_pathset *set, size_t node,
			     enum lfs_node_kind kind)
{
	if (set->nodes[node].kind == LFS_NO_KIND)
		set->count++;
	set->nodes[node].kind = kind;
}

/**
 * lfs_pathset_add() - set @name under @node to @kind (add it or change it)
 * @child: if not NULL, set to the node of @name
 *
 * Return: 0 or -ENOMEM.
 */
int lfs_pathset_add(struct lfs_pathset *set, size_t node, const char *name,
		    size_t len, enum lfs_node_kind kind, size_t *child)
{
	size_t c;
	int err;

	err = lfs_pathset_make(set, node, name, len, &c);
	if (err)
		return err;
	lfs_pathset_mark(set, c, kind);
	if (child)
		*child = c;
	return 0;
}

/* Return: the enum lfs_node_kind of @path, or -ENOENT */
int lfs_pathset_lookup(const struct lfs_pathset *set, const char *path)
{
	size_t node = LFS_PATHSET_ROOT;
	const char *c = path, *p;

	if (*path) {
		for (p = strchr(c, '/'); p; c = p + 1, p = strchr(c, '/'))
			node = lfs_pathset_child(set, node, c, p - c);
		node = lfs_pathset_child(set, node, c, strlen(c));
	}
	return lfs_pathset_kind(set, node);
}

/* add @path or change its kind */
int lfs_pathset_set(struct lfs_pathset *set, const char *path,
		    enum lfs_node_kind kind)
{
	size_t node = LFS_PATHSET_ROOT;
	const char *c = path, *p;
	int err;

	if (*path) {
		for (p = strchr(c, '/'); p; c = p + 1, p = strchr(c, '/')) {
			err = lfs_pathset_make(set, node, c, p - c, &node);
			if (err)
				return err;
		}
		err = lfs_pathset_make(set, node, c, strlen(c), &node);
		if (err)
			return err;
	}
	lfs_pathset_mark(set, node, kind);
	return 0;
}

size_t lfs_pathset_count(const struct lfs_pathset *set)
{
	return set->count;
}
