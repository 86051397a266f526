// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: lookup, the top-down walk through the layers that hold a
 * directory, with whiteouts and opaque directories.
 *
 * With whiteout=aufs every layer (the upper one too) may also say it by
 * name: ".wh.NAME" in a directory hides NAME in the layers below, and
 * ".wh..wh..opq" makes its directory opaque.  A whiteout hides only what
 * is below it: a layer that holds both NAME and ".wh.NAME" shows its
 * NAME, as the only part of it (the OCI image format's rule).
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/xattr.h>
#include <linux/slab.h>
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

/*
 * Look @name up in @dir, a directory of @layer.  Returns the real dentry
 * (positive), NULL when the layer has no such name, or an error.
 */
static struct dentry *lfs_lookup_in(const struct lfs_layer *layer,
				    struct dentry *dir, const struct qstr *name)
{
	struct dentry *real;

	real = lookup_one_unlocked(mnt_user_ns(layer->mnt), name->name, dir,
				   name->len);
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

/* @name in one layer's instance of the parent, as lfs_lookup_in() */
static struct dentry *lfs_lookup_layer(const struct lfs_real *parent,
				       const struct qstr *name)
{
	return lfs_lookup_in(parent->layer, parent->dentry, name);
}

/* Does @dir, a directory of @layer, hold @name?  1, 0 or -errno. */
static int lfs_layer_holds(const struct lfs_layer *layer, struct dentry *dir,
			   const struct qstr *name)
{
	struct dentry *real;

	if (!name->len)
		return 0;
	real = lfs_lookup_in(layer, dir, name);
	if (IS_ERR(real))
		return PTR_ERR(real);
	dput(real);
	return real ? 1 : 0;
}

/**
 * lfs_aufs_wh_name - the name of a name's aufs whiteout, ".wh.NAME"
 * @name: the name
 * @wh: set to the whiteout's name (free wh->name with kfree()), or to an
 *	empty name when @name is too long to have one
 *
 * Return: 0 or -ENOMEM.
 */
int lfs_aufs_wh_name(const struct qstr *name, struct qstr *wh)
{
	const unsigned int plen = sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;
	char *buf;

	*wh = (struct qstr)QSTR_INIT(NULL, 0);
	if (name->len + plen > NAME_MAX)
		return 0;
	buf = kmalloc(name->len + plen, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, LFS_AUFS_WHITEOUT_PREFIX, plen);
	memcpy(buf + plen, name->name, name->len);
	*wh = (struct qstr)QSTR_INIT(buf, name->len + plen);
	return 0;
}

/* The aufs whiteout name to look for with @name, when the mount reads them. */
static int lfs_walk_wh_name(const struct lfs_sb *sbi, const struct qstr *name,
			    struct qstr *wh)
{
	if (!lfs_aufs(sbi)) {
		*wh = (struct qstr)QSTR_INIT(NULL, 0);
		return 0;
	}
	return lfs_aufs_wh_name(name, wh);
}

/**
 * lfs_dir_marker - is a real directory opaque?
 * @sbi: the superblock info
 * @layer: the layer @real lives in
 * @real: a real directory
 * @flags: set to LFS_REAL_XWHITEOUTS when the opaque xattr is "x"
 *
 * Opaque: the xattr is "y", or, with whiteout=aufs, the directory holds
 * LFS_AUFS_OPAQUE_NAME.  Caller must run with the mounter's credentials.
 * Return: 1 if the directory is opaque, 0 if not, or -errno.
 */
int lfs_dir_marker(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		   struct dentry *real, unsigned int *flags)
{
	static const struct qstr opq = QSTR_INIT(LFS_AUFS_OPAQUE_NAME,
						 sizeof(LFS_AUFS_OPAQUE_NAME) - 1);
	char val[2];
	int len;

	*flags = 0;
	len = lfs_real_getxattr(layer, real, LFS_XATTR_OPAQUE, val, sizeof(val));
	if (len == 1 && val[0] == 'x')
		*flags = LFS_REAL_XWHITEOUTS;
	if (len == 1 && val[0] == LFS_XATTR_TRUE[0])
		return 1;
	if (!lfs_aufs(sbi))
		return 0;
	return lfs_layer_holds(layer, real, &opq);
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

/* Room for a few real objects on the stack, to size the entry exactly. */
#define LFS_WALK_ONSTACK	8

struct lfs_walk_buf {
	struct lfs_entry e;
	struct lfs_real real[LFS_WALK_ONSTACK];
};

/*
 * The lower objects a walk collects.  Most names are found in one layer
 * or a few, so the room starts small and doubles when a directory merges
 * more: a lookup costs what it finds, not the depth of its parent.
 * @e starts as @buf (the caller's, on its stack) or on the heap
 * (lfs_parts_alloc()); the caller frees what @e is in the end.
 */
struct lfs_parts {
	struct lfs_entry *e;
	unsigned int room;		/* slots in e->real[] */
	struct lfs_entry *buf;		/* the caller's buffer, or NULL */
};

static int lfs_parts_alloc(struct lfs_parts *p)
{
	p->buf = NULL;
	p->room = LFS_WALK_ONSTACK;
	p->e = lfs_entry_alloc(p->room);
	return p->e ? 0 : -ENOMEM;
}

/* Append a real object; the parts take over the reference to @real. */
static int lfs_parts_add(struct lfs_parts *p, struct dentry *real,
			 struct lfs_layer *layer, unsigned int flags)
{
	struct lfs_entry *e = p->e;

	if (e->nr == p->room) {
		e = lfs_entry_alloc(2 * p->room);
		if (!e)
			return -ENOMEM;
		e->upper = p->e->upper;
		e->flags = p->e->flags;
		e->nr = p->e->nr;
		memcpy(e->real, p->e->real, e->nr * sizeof(e->real[0]));
		if (p->e != p->buf)
			kvfree(p->e);
		p->e = e;
		p->room *= 2;
	}
	e->real[e->nr].dentry = real;
	e->real[e->nr].layer = layer;
	e->real[e->nr].flags = flags;
	e->nr++;
	return 0;
}

/*
 * One instance of the parent during a walk: the object named @name there
 * (*@realp, NULL if none), and whether its aufs whiteout @wh is there too
 * (only looked for when it can matter: beside nothing or a directory).
 * @holds says what the name index knows the instance holds.
 * Return: 1 if the whiteout is there, 0 if not, or -errno.
 */
static int lfs_walk_instance(const struct lfs_ni_cursor *c,
			     const struct lfs_real *parent,
			     const struct qstr *name, const struct qstr *wh,
			     struct dentry **realp)
{
	unsigned int holds = lfs_ni_holds(c);
	struct dentry *real = NULL;
	int hidden = 0;

	if (holds & LFS_NI_NAME) {
		real = lfs_lookup_layer(parent, name);
		if (IS_ERR(real))
			return PTR_ERR(real);
	}
	if (wh->len && (holds & LFS_NI_WH) && (!real || d_is_dir(real))) {
		/* the index read the layer, which does not change */
		hidden = c->ni ? 1 : lfs_layer_holds(parent->layer, parent->dentry, wh);
		if (hidden < 0) {
			dput(real);
			return hidden;
		}
	}
	*realp = real;
	return hidden;
}

/*
 * The walk through the lower layers: visit the parent's lower instances
 * top-down.  The first object found decides (unless @below_dir: a
 * directory was found above): a whiteout ends the walk with nothing, a
 * non-directory is the answer on its own, a directory collects the same
 * name from the layers below until one is opaque or holds a non-directory.
 * @wh is the aufs whiteout's name, or empty.
 */
static int lfs_lookup_lowers(const struct lfs_sb *sbi, struct lfs_entry *pe,
			     const struct qstr *name, const struct qstr *wh,
			     struct lfs_parts *p, bool below_dir)
{
	struct lfs_ni_cursor c;
	unsigned int i;
	int err = 0;

	p->e->nr = 0;
	lfs_ni_start(&c, sbi, pe);
	for (i = lfs_ni_first(&c, pe->nr, name); i < pe->nr;
	     i = lfs_ni_next(&c, pe->nr, i)) {
		const struct lfs_real *parent = &pe->real[i];
		bool first = !below_dir && !p->e->nr;
		struct dentry *real;
		unsigned int flags = 0;
		int opaque = 0, hidden;

		hidden = lfs_walk_instance(&c, parent, name, wh, &real);
		if (hidden < 0) {
			err = hidden;
			break;
		}
		if (!real) {
			/* an aufs whiteout: nothing, or the end of the merge */
			if (hidden)
				break;
			continue;
		}
		if (first && lfs_is_whiteout(parent->layer, real, parent->flags)) {
			dput(real);
			break;
		}
		if (!first && !d_is_dir(real)) {
			/* below a directory, a non-directory ends the merge */
			dput(real);
			break;
		}
		if (d_is_dir(real)) {
			opaque = lfs_dir_marker(sbi, parent->layer, real, &flags);
			if (opaque < 0) {
				err = opaque;
				dput(real);
				break;
			}
		}
		err = lfs_parts_add(p, real, parent->layer, flags);
		if (err) {
			dput(real);
			break;
		}
		/* beside its own whiteout, a directory is the last part */
		if (!d_is_dir(real) || opaque || hidden)
			break;
	}
	lfs_ni_end(&c);
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
	struct lfs_entry *root = LFS_E(sb->s_root), *cur = NULL;
	const struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_parts next;
	struct qstr wh;
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
		err = lfs_parts_alloc(&next);
		if (err)
			break;
		/* a passing entry: not worth an index */
		set_bit(LFS_E_NO_INDEX, &next.e->flags);
		err = lfs_walk_wh_name(sbi, &name, &wh);
		if (!err)
			err = lfs_lookup_lowers(sbi, cur ? cur : root, &name, &wh,
						&next, false);
		kfree(wh.name);
		lfs_entry_free(cur);
		cur = next.e;
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
	struct lfs_parts parts;
	struct lfs_entry *e;
	struct qstr name, wh;
	int err;

	if (redirect[0] == '/')
		return lfs_lookup_abs_redirect(sb, redirect);
	name = (struct qstr)QSTR_INIT(redirect, strlen(redirect));
	if (strchr(redirect, '/'))
		return ERR_PTR(-EIO);
	if (lfs_parts_alloc(&parts))
		return ERR_PTR(-ENOMEM);
	err = lfs_walk_wh_name(LFS_SB(sb), &name, &wh);
	if (!err)
		err = lfs_lookup_lowers(LFS_SB(sb), pe, &name, &wh, &parts, false);
	kfree(wh.name);
	e = parts.e;
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
	struct lfs_parts parts;		/* lower objects; parts.e->upper too */
	struct lfs_entry *redirected;	/* lower objects found by a redirect */
};

/*
 * The upper layer first: a whiteout there hides everything, a non-
 * directory or an opaque directory stands alone, a redirect says where
 * the lower parts are.  Then the lower layers.  @wh is the aufs
 * whiteout's name, or empty.
 */
static int lfs_lookup_walk(struct super_block *sb, struct lfs_entry *pe,
			   struct dentry *pupper, const struct qstr *name,
			   const struct qstr *wh, struct lfs_walk *w)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_entry *e = w->parts.e;
	struct lfs_ni_cursor all = {};
	struct dentry *upper = NULL;
	unsigned int flags;
	int hidden = 0, opaque;
	char *redirect;

	e->upper = NULL;
	e->nr = 0;
	if (pupper) {
		struct lfs_real parent = {
			.dentry = pupper,
			.layer = sbi->upper,
		};

		hidden = lfs_walk_instance(&all, &parent, name, wh, &upper);
		if (hidden < 0)
			return hidden;
	}
	if (!upper && hidden)
		return 0;	/* an aufs whiteout */
	if (upper) {
		if (lfs_is_whiteout(sbi->upper, upper, 0)) {
			dput(upper);
			return 0;
		}
		e->upper = upper;
		if (!d_is_dir(upper) || hidden)
			return 0;
		opaque = lfs_dir_marker(sbi, sbi->upper, upper, &flags);
		if (opaque)
			return opaque < 0 ? opaque : 0;
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
	return lfs_lookup_lowers(sbi, pe, name, wh, &w->parts, upper);
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
	const struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct lfs_ni_cursor c;
	int positive, hidden;
	unsigned int i;
	struct qstr wh;

	lockdep_assert_held(&d_inode(dentry->d_parent)->i_rwsem);
	positive = lfs_walk_wh_name(sbi, &dentry->d_name, &wh);
	if (positive)
		return positive;
	lfs_ni_start(&c, sbi, pe);
	for (i = lfs_ni_first(&c, pe->nr, &dentry->d_name); i < pe->nr;
	     i = lfs_ni_next(&c, pe->nr, i)) {
		const struct lfs_real *parent = &pe->real[i];
		struct dentry *real;

		hidden = lfs_walk_instance(&c, parent, &dentry->d_name, &wh, &real);
		if (hidden < 0) {
			positive = hidden;
			break;
		}
		if (real) {
			positive = !lfs_is_whiteout(parent->layer, real, parent->flags);
			dput(real);
			break;
		}
		if (hidden)
			break;
	}
	lfs_ni_end(&c);
	kfree(wh.name);
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

/* The exact-size entry the dentry keeps; takes the walk's references. */
static struct lfs_entry *lfs_walk_result(struct lfs_walk *w)
{
	struct lfs_entry *src = w->redirected ? w->redirected : w->parts.e;
	struct lfs_entry *e;

	e = lfs_entry_alloc(src->nr);
	if (!e)
		return NULL;
	memcpy(e->real, src->real, src->nr * sizeof(e->real[0]));
	e->nr = src->nr;
	src->nr = 0;
	e->upper = w->parts.e->upper;
	w->parts.e->upper = NULL;
	return e;
}

struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags)
{
	struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct super_block *sb = dir->i_sb;
	struct lfs_walk_buf onstack = {};
	struct lfs_walk w = {
		.parts.e = &onstack.e,
		.parts.room = LFS_WALK_ONSTACK,
		.parts.buf = &onstack.e,
	};
	struct dentry *index = NULL;
	struct lfs_entry *e = NULL;
	const struct cred *old_cred;
	struct inode *inode;
	struct qstr wh;
	int err;

	/* aufs's names are its whiteouts and markers: never shown */
	if (lfs_aufs(LFS_SB(sb)) &&
	    lfs_is_aufs_name(dentry->d_name.name, dentry->d_name.len))
		return d_splice_alias(NULL, dentry);
	err = lfs_walk_wh_name(LFS_SB(sb), &dentry->d_name, &wh);
	if (err)
		return ERR_PTR(err);
	old_cred = lfs_override_creds(sb);
	err = lfs_lookup_walk(sb, pe, lfs_upper(dentry->d_parent),
			      &dentry->d_name, &wh, &w);
	if (!err && (w.parts.e->upper || w.parts.e->nr ||
		     (w.redirected && w.redirected->nr))) {
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

	kfree(wh.name);
	lfs_entry_free(w.redirected);
	dput(w.parts.e->upper);
	w.parts.e->upper = NULL;
	if (w.parts.e == &onstack.e)
		lfs_entry_put_lowers(w.parts.e);
	else
		lfs_entry_free(w.parts.e);
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
