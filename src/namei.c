// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: lookup, the top-down walk through the layers that hold a
 * directory, with whiteouts and opaque directories.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/xattr.h>
#include "layerfs.h"

/* Is this marker xattr of @real set to "y"? */
static bool lfs_marker_is_set(const struct lfs_layer *layer,
			      struct dentry *real, const char *name)
{
	char val[2];
	int len;

	len = lfs_real_getxattr(layer, real, name, val, sizeof(val));
	return len == 1 && val[0] == LFS_XATTR_TRUE[0];
}

/* A symlink to LFS_WHITEOUT_TARGET carrying the whiteout xattr. */
static bool lfs_is_native_whiteout(const struct lfs_layer *layer,
				   struct dentry *real)
{
	DEFINE_DELAYED_CALL(done);
	const char *target;
	bool match;

	if (i_size_read(d_inode(real)) != sizeof(LFS_WHITEOUT_TARGET) - 1)
		return false;
	if (!lfs_marker_is_set(layer, real, LFS_XATTR_WHITEOUT))
		return false;
	target = vfs_get_link(real, &done);
	match = !IS_ERR(target) && !strcmp(target, LFS_WHITEOUT_TARGET);
	do_delayed_call(&done);
	return match;
}

/**
 * lfs_is_whiteout - does this real object hide the name in lower layers?
 * @layer: the layer @real lives in
 * @real: a positive real dentry
 * @parent_flags: LFS_REAL_* flags of its parent directory's instance
 *
 * Three forms: the native symlink, upstream overlayfs's 0/0 character
 * device, and upstream's zero-size regular file with the whiteout xattr
 * in a directory marked for them (opaque xattr "x").
 * Caller must run with the mounter's credentials.
 */
bool lfs_is_whiteout(const struct lfs_layer *layer, struct dentry *real,
		     unsigned int parent_flags)
{
	struct inode *inode = d_inode(real);

	switch (inode->i_mode & S_IFMT) {
	case S_IFCHR:
		return inode->i_rdev == WHITEOUT_DEV;
	case S_IFLNK:
		return lfs_is_native_whiteout(layer, real);
	case S_IFREG:
		return (parent_flags & LFS_REAL_XWHITEOUTS) &&
		       i_size_read(inode) == 0 &&
		       lfs_marker_is_set(layer, real, LFS_XATTR_WHITEOUT);
	}
	return false;
}

/**
 * lfs_dir_marker - read a real directory's opaque marker
 * @layer: the layer @real lives in
 * @real: a real directory
 * @flags: set to LFS_REAL_XWHITEOUTS when the marker is "x"
 *
 * Caller must run with the mounter's credentials.
 * Return: 1 if the directory is opaque ("y"), else 0.
 */
int lfs_dir_marker(const struct lfs_layer *layer, struct dentry *real,
		   unsigned int *flags)
{
	char val[2];
	int len;

	*flags = 0;
	len = lfs_real_getxattr(layer, real, LFS_XATTR_OPAQUE, val, sizeof(val));
	if (len != 1)
		return 0;
	if (val[0] == 'x')
		*flags = LFS_REAL_XWHITEOUTS;
	return val[0] == LFS_XATTR_TRUE[0];
}

/*
 * Look @name up in one layer's instance of the parent.  Returns the real
 * dentry (positive), NULL when the layer has no such name, or an error.
 */
static struct dentry *lfs_lookup_layer(const struct lfs_real *parent,
				       const struct qstr *name)
{
	struct dentry *real;

	real = lookup_one_unlocked(mnt_user_ns(parent->layer->mnt), name->name,
				   parent->dentry, name->len);
	if (IS_ERR(real)) {
		/* a name the real filesystem refuses simply is not there */
		if (PTR_ERR(real) == -ENOENT)
			return NULL;
		return real;
	}
	if (d_is_negative(real)) {
		dput(real);
		return NULL;
	}
	return real;
}

/*
 * The walk: visit the parent's layers top-down.  The first object found
 * decides: a whiteout ends the walk with nothing, a non-directory is the
 * answer on its own, a directory collects the same name from the layers
 * below until one is opaque or holds a non-directory.
 */
static int lfs_lookup_walk(const struct lfs_entry *pe, const struct qstr *name,
			   struct lfs_entry *e)
{
	unsigned int i;
	int err = 0;

	e->nr = 0;
	for (i = 0; i < pe->nr; i++) {
		const struct lfs_real *parent = &pe->real[i];
		struct dentry *real;
		unsigned int flags = 0;
		int opaque = 0;

		real = lfs_lookup_layer(parent, name);
		if (IS_ERR(real)) {
			err = PTR_ERR(real);
			break;
		}
		if (!real)
			continue;
		if (!e->nr && lfs_is_whiteout(parent->layer, real, parent->flags)) {
			dput(real);
			break;
		}
		if (e->nr && !d_is_dir(real)) {
			/* below a directory, a non-directory ends the merge */
			dput(real);
			break;
		}
		if (d_is_dir(real))
			opaque = lfs_dir_marker(parent->layer, real, &flags);
		e->real[e->nr].dentry = real;
		e->real[e->nr].layer = parent->layer;
		e->real[e->nr].flags = flags;
		e->nr++;
		if (!d_is_dir(real) || opaque)
			break;
	}
	return err;
}

/* Room for a few real objects on the stack, to size the entry exactly. */
#define LFS_WALK_ONSTACK	8

struct lfs_walk_buf {
	struct lfs_entry e;
	struct lfs_real real[LFS_WALK_ONSTACK];
};

struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags)
{
	const struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct super_block *sb = dir->i_sb;
	struct lfs_walk_buf onstack;
	struct lfs_entry *walk = &onstack.e, *e;
	const struct cred *old_cred;
	struct inode *inode;
	int err;

	if (pe->nr > LFS_WALK_ONSTACK) {
		walk = lfs_entry_alloc(pe->nr);
		if (!walk)
			return ERR_PTR(-ENOMEM);
	}

	old_cred = lfs_override_creds(sb);
	err = lfs_lookup_walk(pe, &dentry->d_name, walk);
	revert_creds(old_cred);

	e = NULL;
	if (!err && walk->nr) {
		e = lfs_entry_alloc(walk->nr);
		if (e) {
			memcpy(e->real, walk->real, walk->nr * sizeof(e->real[0]));
			e->nr = walk->nr;
			walk->nr = 0;
		} else {
			err = -ENOMEM;
		}
	}
	if (walk == &onstack.e) {
		while (walk->nr)
			dput(walk->real[--walk->nr].dentry);
	} else {
		lfs_entry_free(walk);
	}
	if (err)
		return ERR_PTR(err);
	if (!e)
		return d_splice_alias(NULL, dentry);

	inode = lfs_get_inode(sb, e);
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto out_free;
	}
	dentry->d_fsdata = e;
	return d_splice_alias(inode, dentry);

out_free:
	lfs_entry_free(e);
	return ERR_PTR(err);
}
