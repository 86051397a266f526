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

/**
 * lfs_read_origin - read the origin marker of an upper object
 * @upper: the upper dentry
 * @origin: filled in
 *
 * Caller must run with the mounter's credentials.
 * Return: 0, or -ENODATA when there is no valid marker.
 */
int lfs_read_origin(struct dentry *upper, struct lfs_origin *origin)
{
	int len;

	len = vfs_getxattr(&init_user_ns, upper, LFS_XATTR_ORIGIN, origin,
			   sizeof(*origin));
	if (len != sizeof(*origin) || origin->version != LFS_ORIGIN_V1)
		return -ENODATA;
	return 0;
}

/*
 * The walk through the lower layers: visit the parent's lower instances
 * top-down.  The first object found decides (unless @below_dir: a
 * directory was found above): a whiteout ends the walk with nothing, a
 * non-directory is the answer on its own, a directory collects the same
 * name from the layers below until one is opaque or holds a non-directory.
 */
static int lfs_lookup_lowers(const struct lfs_sb *sbi, struct lfs_entry *pe,
			     const struct qstr *name, struct lfs_entry *e,
			     bool below_dir)
{
	struct lfs_ni_cursor c = { .ni = lfs_ni_get(sbi, pe) };
	unsigned int i;
	int err = 0;

	e->nr = 0;
	for (i = lfs_ni_first(&c, pe->nr, name); i < pe->nr;
	     i = lfs_ni_next(&c, pe->nr, i)) {
		const struct lfs_real *parent = &pe->real[i];
		bool first = !below_dir && !e->nr;
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
		if (first && lfs_is_whiteout(parent->layer, real, parent->flags)) {
			dput(real);
			break;
		}
		if (!first && !d_is_dir(real)) {
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
	lfs_ni_put(c.ni);
	return err;
}

static void lfs_entry_put_lowers(struct lfs_entry *e)
{
	while (e->nr)
		dput(e->real[--e->nr].dentry);
}

/*
 * An absolute redirect: the lower parts of the directory are what the
 * lower layers alone show at @path.  Walk it from the lower roots.
 * Return: a new entry (possibly with no lower objects), or an ERR_PTR.
 */
static struct lfs_entry *lfs_lookup_abs_redirect(struct super_block *sb,
						 const char *path)
{
	struct lfs_entry *root = LFS_E(sb->s_root), *cur = NULL, *next;
	const struct lfs_sb *sbi = LFS_SB(sb);
	unsigned int nr = sbi->nr_layers;
	int err = 0;

	while (*path) {
		const char *end = strchrnul(path, '/');
		struct qstr name = QSTR_INIT(path, end - path);

		path = *end ? end + 1 : end;
		if (!name.len)
			continue;
		if (name.name[0] == '.' &&
		    (name.len == 1 || (name.len == 2 && name.name[1] == '.'))) {
			err = -EINVAL;
			break;
		}
		next = lfs_entry_alloc(nr);
		if (!next) {
			err = -ENOMEM;
			break;
		}
		/* a passing entry: not worth an index */
		set_bit(LFS_E_NO_INDEX, &next->flags);
		err = lfs_lookup_lowers(sbi, cur ? cur : root, &name, next, false);
		lfs_entry_free(cur);
		cur = next;
		if (err)
			break;
		if (!cur->nr || !d_is_dir(cur->real[0].dentry)) {
			lfs_entry_put_lowers(cur);
			break;
		}
	}
	if (!err && !cur)
		err = -EINVAL;	/* "/" cannot be moved */
	if (err) {
		lfs_entry_free(cur);
		return ERR_PTR(err);
	}
	return cur;
}

/*
 * Read an upper directory's redirect, if any.
 * Return: the path (kfree() it), NULL when there is none, or an ERR_PTR.
 */
static char *lfs_read_redirect(struct lfs_sb *sbi, struct dentry *upper)
{
	char *buf;
	int len;

	len = lfs_real_getxattr(sbi->upper, upper, LFS_XATTR_REDIRECT, NULL, 0);
	if (len == -ENODATA || len == -EOPNOTSUPP)
		return NULL;
	if (len < 0)
		return ERR_PTR(len);
	if (!len || len >= PATH_MAX)
		return ERR_PTR(-EIO);
	buf = kmalloc(len + 1, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	len = lfs_real_getxattr(sbi->upper, upper, LFS_XATTR_REDIRECT, buf, len);
	if (len <= 0 || memchr(buf, '\0', len)) {
		kfree(buf);
		return ERR_PTR(len < 0 ? len : -EIO);
	}
	buf[len] = '\0';
	return buf;
}

/*
 * The lower parts of a redirected upper directory: an absolute path is
 * walked from the lower roots, a relative one is a name in the parent.
 * Return: a new entry, or an ERR_PTR.
 */
static struct lfs_entry *lfs_lookup_redirect(struct super_block *sb,
					     struct lfs_entry *pe,
					     const char *redirect)
{
	struct lfs_entry *e;
	struct qstr name;
	int err;

	if (redirect[0] == '/')
		return lfs_lookup_abs_redirect(sb, redirect);
	name = (struct qstr)QSTR_INIT(redirect, strlen(redirect));
	if (strchr(redirect, '/'))
		return ERR_PTR(-EIO);
	e = lfs_entry_alloc(max(pe->nr, 1U));
	if (!e)
		return ERR_PTR(-ENOMEM);
	err = lfs_lookup_lowers(LFS_SB(sb), pe, &name, e, false);
	if (!err && e->nr && !d_is_dir(e->real[0].dentry))
		lfs_entry_put_lowers(e);
	if (err) {
		lfs_entry_free(e);
		return ERR_PTR(err);
	}
	return e;
}

/* the walk's result: an upper object and lower ones */
struct lfs_walk {
	struct lfs_entry *e;		/* lower objects; e->upper too */
	struct lfs_entry *redirected;	/* lower objects found by a redirect */
};

/*
 * The upper layer first: a whiteout there hides everything, a non-
 * directory or an opaque directory stands alone, a redirect says where
 * the lower parts are.  Then the lower layers.
 */
static int lfs_lookup_walk(struct super_block *sb, struct lfs_entry *pe,
			   struct dentry *pupper, const struct qstr *name,
			   struct lfs_walk *w)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_entry *e = w->e;
	struct dentry *upper = NULL;
	unsigned int flags;
	char *redirect;

	e->upper = NULL;
	e->nr = 0;
	if (pupper) {
		struct lfs_real parent = {
			.dentry = pupper,
			.layer = sbi->upper,
		};

		upper = lfs_lookup_layer(&parent, name);
		if (IS_ERR(upper))
			return PTR_ERR(upper);
	}
	if (upper) {
		if (lfs_is_whiteout(sbi->upper, upper, 0)) {
			dput(upper);
			return 0;
		}
		e->upper = upper;
		if (!d_is_dir(upper) || lfs_dir_marker(sbi->upper, upper, &flags))
			return 0;
		redirect = lfs_read_redirect(sbi, upper);
		if (IS_ERR(redirect))
			return PTR_ERR(redirect);
		if (redirect) {
			w->redirected = lfs_lookup_redirect(sb, pe, redirect);
			kfree(redirect);
			if (IS_ERR(w->redirected)) {
				int err = PTR_ERR(w->redirected);

				w->redirected = NULL;
				pr_warn_ratelimited("%pd: bad redirect on the upper directory (%d)\n",
						    upper, err);
				return err;
			}
			return 0;
		}
	}
	return lfs_lookup_lowers(sbi, pe, name, e, upper);
}

/**
 * lfs_lower_positive - does a lower layer show this name?
 * @dentry: a layerfs dentry; caller holds its parent's lock
 *
 * Then removing or replacing the name needs a whiteout, and a new
 * directory there must be opaque.  Caller must run with the mounter's
 * credentials.
 * Return: 1 if so, 0 if not, or -errno.
 */
int lfs_lower_positive(struct dentry *dentry)
{
	struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct lfs_ni_cursor c = { .ni = lfs_ni_get(LFS_SB(dentry->d_sb), pe) };
	int positive = 0;
	unsigned int i;

	for (i = lfs_ni_first(&c, pe->nr, &dentry->d_name); i < pe->nr;
	     i = lfs_ni_next(&c, pe->nr, i)) {
		const struct lfs_real *parent = &pe->real[i];
		struct dentry *real;

		real = lfs_lookup_layer(parent, &dentry->d_name);
		if (IS_ERR(real)) {
			positive = PTR_ERR(real);
			break;
		}
		if (!real)
			continue;
		positive = !lfs_is_whiteout(parent->layer, real, parent->flags);
		dput(real);
		break;
	}
	lfs_ni_put(c.ni);
	return positive;
}

/*
 * A lower file with several links may already have a copy: its other
 * names then show the copy, found in the index.
 */
static struct dentry *lfs_lookup_index(struct super_block *sb,
				       const struct lfs_entry *e)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	const struct lfs_real *r = &e->real[0];
	struct inode *lower;

	if (!sbi->upper || e->upper || e->nr != 1)
		return NULL;
	lower = d_inode(r->dentry);
	if (!S_ISREG(lower->i_mode) || lower->i_nlink < 2)
		return NULL;
	return lfs_index_lookup(sbi, lfs_ino(sbi, r->layer, lower->i_ino), lower);
}

/* Room for a few real objects on the stack, to size the entry exactly. */
#define LFS_WALK_ONSTACK	8

struct lfs_walk_buf {
	struct lfs_entry e;
	struct lfs_real real[LFS_WALK_ONSTACK];
};

/* The exact-size entry the dentry keeps; takes the walk's references. */
static struct lfs_entry *lfs_walk_result(struct lfs_walk *w)
{
	struct lfs_entry *src = w->redirected ? w->redirected : w->e;
	struct lfs_entry *e;

	e = lfs_entry_alloc(src->nr);
	if (!e)
		return NULL;
	memcpy(e->real, src->real, src->nr * sizeof(e->real[0]));
	e->nr = src->nr;
	src->nr = 0;
	e->upper = w->e->upper;
	w->e->upper = NULL;
	return e;
}

struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags)
{
	struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct super_block *sb = dir->i_sb;
	struct lfs_walk_buf onstack;
	struct lfs_walk w = { .e = &onstack.e };
	struct dentry *index = NULL;
	struct lfs_entry *e = NULL;
	const struct cred *old_cred;
	struct inode *inode;
	int err;

	if (pe->nr > LFS_WALK_ONSTACK) {
		w.e = lfs_entry_alloc(pe->nr);
		if (!w.e)
			return ERR_PTR(-ENOMEM);
	}

	old_cred = lfs_override_creds(sb);
	err = lfs_lookup_walk(sb, pe, lfs_upper(dentry->d_parent),
			      &dentry->d_name, &w);
	if (!err && (w.e->upper || w.e->nr || (w.redirected && w.redirected->nr))) {
		e = lfs_walk_result(&w);
		if (!e)
			err = -ENOMEM;
	}
	if (e) {
		index = lfs_lookup_index(sb, e);
		if (IS_ERR(index)) {
			err = PTR_ERR(index);
			index = NULL;
		}
	}
	revert_creds(old_cred);

	lfs_entry_free(w.redirected);
	dput(w.e->upper);
	w.e->upper = NULL;
	if (w.e == &onstack.e)
		lfs_entry_put_lowers(w.e);
	else
		lfs_entry_free(w.e);
	if (err)
		goto out_free;
	if (!e)
		return d_splice_alias(NULL, dentry);

	inode = lfs_get_inode(sb, e, index);
	dput(index);
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
