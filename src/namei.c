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

/* Is this marker of @real set to "y"? */
static bool lfs_marker_is_set(const struct lfs_sb *sbi,
			      const struct lfs_layer *layer,
			      struct dentry *real, enum lfs_xattr xa)
{
	char val[2];
	int len;

	len = lfs_get_marker(sbi, layer, real, xa, val, sizeof(val));
	return len == 1 && val[0] == LFS_XATTR_TRUE[0];
}

/* A symlink to LFS_WHITEOUT_TARGET carrying the whiteout xattr. */
static bool lfs_is_native_whiteout(const struct lfs_sb *sbi,
				   const struct lfs_layer *layer,
				   struct dentry *real)
{
	DEFINE_DELAYED_CALL(done);
	const char *target;
	bool match;

	if (i_size_read(d_inode(real)) != sizeof(LFS_WHITEOUT_TARGET) - 1)
		return false;
	if (!lfs_marker_is_set(sbi, layer, real, LFS_XA_WHITEOUT))
		return false;
	target = vfs_get_link(real, &done);
	match = !IS_ERR(target) && !strcmp(target, LFS_WHITEOUT_TARGET);
	do_delayed_call(&done);
	return match;
}

/**
 * lfs_is_whiteout - does this real object hide the name in lower layers?
 * @sbi: the superblock info: the markers' names
 * @layer: the layer @real lives in
 * @real: a positive real dentry
 * @parent_flags: LFS_REAL_* flags of its parent directory's instance,
 *	read (lfs_real_flags())
 *
 * Three forms: the native symlink, upstream overlayfs's 0/0 character
 * device, and upstream's zero-size regular file with the whiteout xattr
 * in a directory marked for them (opaque xattr "x"), the xattrs under
 * the mount's prefix.  The native form cannot carry user.* xattrs, which
 * the kernel allows only on regular files and directories: a userxattr
 * mount meets none.
 * Caller must run with the mounter's credentials.
 */
bool lfs_is_whiteout(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		     struct dentry *real, unsigned int parent_flags)
{
	struct inode *inode = d_inode(real);

	switch (inode->i_mode & S_IFMT) {
	case S_IFCHR:
		return inode->i_rdev == WHITEOUT_DEV;
	case S_IFLNK:
		return lfs_is_native_whiteout(sbi, layer, real);
	case S_IFREG:
		return (parent_flags & LFS_REAL_XWHITEOUTS) &&
		       i_size_read(inode) == 0 &&
		       lfs_marker_is_set(sbi, layer, real, LFS_XA_WHITEOUT);
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

	/*
	 * Never reached while a directory's real objects are directories;
	 * a mix-up (the upper layer's owner racing an install) must fail
	 * here: 6.1's lookup_one() calls ->lookup unchecked.
	 */
	if (unlikely(!d_can_lookup(dir))) {
		pr_warn_ratelimited("%pd: a directory's real object is not one\n",
				    dir);
		return ERR_PTR(-EIO);
	}
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
	len = lfs_get_marker(sbi, layer, real, LFS_XA_OPAQUE, val, sizeof(val));
	if (len == 1 && val[0] == 'x')
		*flags = LFS_REAL_XWHITEOUTS;
	if (len == 1 && val[0] == LFS_XATTR_TRUE[0])
		return 1;
	if (!lfs_aufs(sbi))
		return 0;
	return lfs_layer_holds(layer, real, &opq);
}

/*
 * Is @layer the bottom regular lower layer, below which nothing lies?
 * (Data-only layers come after it, and are never walked.)
 */
static bool lfs_bottom_layer(const struct lfs_sb *sbi,
			     const struct lfs_layer *layer)
{
	return layer != sbi->upper && layer->idx + 1 == sbi->nr_layers;
}

/*
 * The markers of @real, a directory a walk found in @layer: whether it
 * is opaque (lfs_dir_marker()), and its flags.  In the bottom layer an
 * opaque directory hides nothing, so nothing is read there: only the
 * "x" of its marker could matter, to its empty regular files, and
 * lfs_real_flags() reads it when one of them is met or the directory
 * is listed (LFS_REAL_XUNREAD).  That is one xattr read less for most
 * directories of an image, whose base layer holds them.
 */
static int lfs_walk_dir_marker(const struct lfs_sb *sbi,
			       const struct lfs_layer *layer,
			       struct dentry *real, unsigned int *flags)
{
	if (lfs_bottom_layer(sbi, layer)) {
		*flags = LFS_REAL_XUNREAD;
		return 0;
	}
	return lfs_dir_marker(sbi, layer, real, flags);
}

/*
 * Does a failed read of a directory's marker say for good that it has
 * none (absent, not supported, too long to be "x", not allowed)?  Other
 * errors (-EINTR from a FUSE layer, -ENOMEM, -EIO) may not come again.
 */
static bool lfs_marker_error_final(int err)
{
	return err == -ENODATA || err == -EOPNOTSUPP || err == -ERANGE ||
	       err == -EACCES || err == -EPERM;
}

/**
 * lfs_real_flags - the flags of a directory instance, its marker read
 * @sbi: the superblock info
 * @r: the instance; when it is a part of an entry, its flags are filled
 *	in there, once
 *
 * A lookup leaves a bottom-layer directory's marker unread
 * (lfs_walk_dir_marker()); it is read here, the first time the flags
 * are needed.  The first answer stored stays (cmpxchg), so racing
 * callers cannot change what others already used.  A marker that cannot
 * be read gives no flag, as in lfs_dir_marker(), but only a final error
 * (lfs_marker_error_final()) is stored: after another, the next caller
 * reads again, so that a reader who forces a passing error (a signal to
 * itself) does not decide for every other user.  Caller must run with
 * the mounter's credentials.
 * Return: LFS_REAL_* flags, LFS_REAL_XUNREAD never among them.
 */
unsigned int lfs_real_flags(const struct lfs_sb *sbi, struct lfs_real *r)
{
	unsigned int flags = READ_ONCE(r->flags), old;
	char val[2];
	int len;

	if (!(flags & LFS_REAL_XUNREAD))
		return flags;
	len = lfs_get_marker(sbi, r->layer, r->dentry, LFS_XA_OPAQUE, val,
			     sizeof(val));
	if (len < 0 && !lfs_marker_error_final(len))
		return 0;
	flags = len == 1 && val[0] == 'x' ? LFS_REAL_XWHITEOUTS : 0;
	old = cmpxchg(&r->flags, LFS_REAL_XUNREAD, flags);
	return old == LFS_REAL_XUNREAD ? flags : old;
}

/**
 * lfs_parent_flags - the flags lfs_is_whiteout() reads for an object
 * @sbi: the superblock info
 * @parent: the directory instance @real was found in
 * @real: a positive real dentry
 *
 * They decide only for an empty regular file, so only for one is an
 * unread marker read (lfs_real_flags()).  Caller must run with the
 * mounter's credentials.
 */
unsigned int lfs_parent_flags(const struct lfs_sb *sbi, struct lfs_real *parent,
			      struct dentry *real)
{
	if (d_is_reg(real) && !i_size_read(d_inode(real)))
		return lfs_real_flags(sbi, parent);
	return READ_ONCE(parent->flags) & ~LFS_REAL_XUNREAD;
}

/**
 * lfs_read_origin - read the origin marker of an upper object
 * @sbi: the superblock info
 * @upper: the upper dentry
 * @origin: filled in
 *
 * Caller must run with the mounter's credentials.
 * Return: 0, or -ENODATA when there is no valid marker, or the mount
 * does not read them (userxattr: lfs_use_origin()).
 */
int lfs_read_origin(const struct lfs_sb *sbi, struct dentry *upper,
		    struct lfs_origin *origin)
{
	int len;

	if (!lfs_use_origin(sbi))
		return -ENODATA;
	len = lfs_get_marker(sbi, sbi->upper, upper, LFS_XA_ORIGIN, origin,
			     sizeof(*origin));
	if (len != sizeof(*origin) || origin->version != LFS_ORIGIN_V1)
		return -ENODATA;
	return 0;
}

/*
 * A metacopy file's redirect is its data pointer (overlay 6.5's format):
 * a path in the data-only layers, followed only from a lower layer of a
 * mount that has them.  In the upper layer (layerfs never writes one
 * there: a forged one), or on a mount without data-only layers (overlay's
 * renamed metacopy file, whose data layerfs does not look for where the
 * redirect says), the lookup fails rather than show other data.
 * Return: LFS_MC_POINTER, 1 for a metacopy file without one, or -errno.
 */
static int lfs_check_data_pointer(const struct lfs_sb *sbi,
				  const struct lfs_layer *layer,
				  struct dentry *real)
{
	int len;

	len = lfs_get_marker(sbi, layer, real, LFS_XA_REDIRECT, NULL, 0);
	if (len == -ENODATA || len == -EOPNOTSUPP)
		return 1;
	if (len >= 0 && layer != sbi->upper && sbi->nr_data)
		return LFS_MC_POINTER;
	if (len < 0)
		return len;
	pr_warn_ratelimited("%pd2: metacopy file with a redirect in layer \"%s\": not followed\n",
			    real, layer->name);
	return -EIO;
}

/**
 * lfs_check_metacopy - is a real regular file a metacopy file?
 * @sbi: the superblock info
 * @layer: the layer @real lives in
 * @real: a positive real dentry
 *
 * A metacopy file (LFS_XATTR_METACOPY in uapi) is followed to its data
 * below only on a mount with metacopy=on; with metacopy=off the lookup
 * that meets one fails, as overlay's does.  Anything but the empty value
 * or a struct lfs_metacopy (lfs_read_metacopy(): a digest for verity=) is
 * not understood (EIO).  A redirect on it is a data pointer, followed
 * only where lfs_check_data_pointer() says.  Caller must run with the
 * mounter's credentials.
 * Return: LFS_MC_POINTER if it is one with a data pointer, 1 if one
 * without, 0 if not, or -errno.
 */
int lfs_check_metacopy(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		       struct dentry *real)
{
	int len;

	if (!d_is_reg(real))
		return 0;
	len = lfs_get_marker(sbi, layer, real, LFS_XA_METACOPY, NULL, 0);
	if (len == -ENODATA || len == -EOPNOTSUPP)
		return 0;
	/*
	 * A user.* xattr of a file the mounter may not read gives EACCES:
	 * not a metacopy file, as overlay takes it (the mounter can open
	 * nothing of it anyway); a lookup of it must not fail.
	 */
	if (len == -EACCES && sbi->userxattr)
		return 0;
	if (len < 0)
		return len;
	if (!lfs_metacopy(sbi)) {
		pr_warn_ratelimited("%pd2: refusing to follow a metacopy file in layer \"%s\" (metacopy=off)\n",
				    real, layer->name);
		return -EPERM;
	}
	if (len) {
		struct lfs_metacopy mc;

		/* a digest (verity.c) or not understood: EIO */
		len = lfs_read_metacopy(sbi, layer, real, &mc);
		if (len)
			return len == -ENODATA ? -EIO : len;
	}
	return lfs_check_data_pointer(sbi, layer, real);
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
 * @e starts as @buf, the caller's, on its stack; the caller frees what
 * @e is in the end.
 */
struct lfs_parts {
	struct lfs_entry *e;
	unsigned int room;		/* slots in e->real[] */
	struct lfs_entry *buf;		/* the caller's buffer, or NULL */
};

/* Append a real object; the parts take over the reference to @real. */
static int lfs_parts_add(struct lfs_parts *p, struct dentry *real,
			 struct lfs_layer *layer, unsigned int flags)
{
	struct lfs_entry *e = p->e;

	if (e->nr == p->room) {
		/* a walk's scratch: the kept entry is lfs_walk_result()'s */
		e = lfs_entry_alloc(2 * p->room, false);
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
 * Is @real, found in @layer, a trap (struct lfs_sb): the root of a layer,
 * the upper root or a work directory, moved where a lookup meets it (the
 * mounter may own all of them)?  Reached through the mount, it would let
 * the mount loop into itself or show work/.
 */
static bool lfs_is_trap(const struct lfs_sb *sbi,
			const struct lfs_layer *layer, struct dentry *real)
{
	if (!d_is_dir(real) || !lfs_ptrset_has(&sbi->traps, d_inode(real)))
		return false;
	pr_warn_ratelimited("layer \"%s\": %pd2 is the root of a layer or a work directory: refused (ELOOP)\n",
			    layer->name, real);
	return true;
}

/*
 * One instance of the parent during a walk: the object named @name there
 * (*@realp, NULL if none), and whether its aufs whiteout @wh is there too
 * (only looked for when it can matter: beside nothing or a directory).
 * @holds says what the name index knows the instance holds.  Every real
 * object a walk finds is found here, so the traps are checked here.
 * Return: 1 if the whiteout is there, 0 if not, or -errno.
 */
static int lfs_walk_instance(const struct lfs_sb *sbi,
			     const struct lfs_ni_cursor *c,
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
		if (real && lfs_is_trap(sbi, parent->layer, real)) {
			dput(real);
			return -ELOOP;
		}
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

static void lfs_entry_put_lowers(struct lfs_entry *e)
{
	while (e->nr)
		dput(e->real[--e->nr].dentry);
}

/* "." or ".."? */
static bool lfs_is_dot_name(const char *s, size_t len)
{
	return s[0] == '.' && (len == 1 || (len == 2 && s[1] == '.'));
}

/*
 * Is @s (@len bytes) a redirect layerfs can follow?  Absolute: "/" and
 * one or more names, each separated by one '/'.  Relative: one name.  No
 * name is empty, "." or "..", or longer than NAME_MAX: a redirect never
 * leads out of the layers' roots.
 */
bool lfs_redirect_valid(const char *s, size_t len)
{
	const char *end = s + len, *c;
	bool abs = len && s[0] == '/';

	if (!len || memchr(s, '\0', len))
		return false;
	if (abs)
		s++;
	do {
		c = memchr(s, '/', end - s);
		if (!c)
			c = end;
		else if (!abs)
			return false;
		if (c == s || c - s > NAME_MAX || lfs_is_dot_name(s, c - s))
			return false;
		s = c + 1;
	} while (c != end);
	return true;
}

/*
 * The redirect marker of @real, whose length was @len (more than 0, less
 * than PATH_MAX) when it was asked, read whole.  It may have shrunk since.
 * Return: the path (kfree() it), NULL when it is not a valid one
 * (lfs_redirect_valid(); with @abs, an absolute one), or an ERR_PTR.
 */
static char *lfs_read_redirect(const struct lfs_sb *sbi,
			       const struct lfs_layer *layer,
			       struct dentry *real, int len, bool abs)
{
	char *buf = kmalloc(len + 1, GFP_KERNEL);

	if (!buf)
		return ERR_PTR(-ENOMEM);
	len = lfs_get_marker(sbi, layer, real, LFS_XA_REDIRECT, buf, len);
	if (len < 0) {
		kfree(buf);
		return ERR_PTR(len);
	}
	if (len && (!abs || (len >= 2 && buf[0] == '/')) &&
	    lfs_redirect_valid(buf, len)) {
		buf[len] = '\0';
		return buf;
	}
	kfree(buf);
	return NULL;
}

/**
 * lfs_get_redirect - read a directory's redirect, if it has one
 * @sbi: the superblock info
 * @layer: the layer @real lives in (the upper one or a lower one)
 * @real: a real directory
 *
 * A redirect in the bottom layer would lead nowhere: it is not read.
 * With redirect_dir=nofollow every other one is refused (EPERM): a
 * redirect works like a symlink into the layers below without their
 * permission checks, which a mounter of layers it does not trust may
 * turn off.  One that is not valid (lfs_redirect_valid()) makes the
 * lookup fail.  Caller must run with the mounter's credentials.
 * Return: the path (kfree() it), NULL when there is none, or an ERR_PTR.
 */
static char *lfs_get_redirect(const struct lfs_sb *sbi,
			      const struct lfs_layer *layer, struct dentry *real)
{
	char *buf;
	int len;

	/* nothing lies below the bottom layer: no read */
	if (lfs_bottom_layer(sbi, layer))
		return NULL;
	len = lfs_get_marker(sbi, layer, real, LFS_XA_REDIRECT, NULL, 0);
	if (len == -ENODATA || len == -EOPNOTSUPP)
		return NULL;
	if (len < 0)
		return ERR_PTR(len);
	if (!lfs_redirect_follow(sbi)) {
		pr_warn_ratelimited("%pd: refusing to follow a redirect (redirect_dir=nofollow)\n",
				    real);
		return ERR_PTR(-EPERM);
	}
	if (!len || len >= PATH_MAX)
		goto invalid;
	buf = lfs_read_redirect(sbi, layer, real, len, false);
	if (buf)
		return buf;
invalid:
	pr_warn_ratelimited("%pd: invalid redirect in layer %u\n", real,
			    layer->idx);
	return ERR_PTR(-EIO);
}

/*
 * The walk through the lower layers, top-down, as overlayfs walks them:
 * it looks for a name in the parent's instances, until a redirect says
 * where the rest is.  A relative redirect is another name in the same
 * parent; an absolute one is a path from the root of each layer below
 * the one it was read in, walked in that layer (lfs_walk_path()).  A
 * redirect read on a directory on that path changes it for the layers
 * below too.  Every change keeps the tail of the path still to walk.
 */
struct lfs_lwalk {
	struct super_block *sb;
	struct lfs_entry *pe;		/* instances walked: the parent's or the root's */
	struct lfs_ni_cursor c;		/* over @pe, for the first name of @name */
	char *buf;			/* @name's storage once a redirect changed it */
	struct qstr name;		/* a name, or an absolute path "/a/b" */
	unsigned int last;		/* offset of @name's last name */
	struct qstr wh;			/* the last name's aufs whiteout, or empty */
	unsigned int from;		/* where to go on after a change */
	bool changed;			/* @name or @pe changed in this layer */
	bool stop;			/* the layer walked is the last one */
};

static bool lfs_lwalk_abs(const struct lfs_lwalk *w)
{
	return w->name.name[0] == '/';
}

/* the last name of @name: looked up in the instance the walk reached */
static struct qstr lfs_lwalk_last(const struct lfs_lwalk *w)
{
	return (struct qstr)QSTR_INIT(w->name.name + w->last,
				      w->name.len - w->last);
}

/*
 * The first position at or after @from in @pe that may hold the walk's
 * first name (the name, or a path's first name, in the root).
 */
static unsigned int lfs_lwalk_seek(struct lfs_lwalk *w, unsigned int from)
{
	struct qstr key = w->name;

	if (lfs_lwalk_abs(w)) {
		const char *s = key.name + 1, *end = strchrnul(s, '/');

		key = (struct qstr)QSTR_INIT(s, end - s);
	}
	w->changed = false;
	return lfs_ni_seek(&w->c, w->pe->nr, &key, from);
}

/* @name is new: where its last name starts, and that name's whiteout */
static int lfs_lwalk_renamed(struct lfs_lwalk *w)
{
	struct qstr last;

	w->last = lfs_lwalk_abs(w) ? strrchr(w->buf, '/') + 1 - w->buf : 0;
	last = lfs_lwalk_last(w);
	kfree(w->wh.name);
	return lfs_walk_wh_name(LFS_SB(w->sb), &last, &w->wh);
}

/*
 * Follow @redirect, read on the directory that @name's bytes [@start,
 * @end) name.  The layers below go on at position @from of the parent's
 * instances (relative) or of the root's (absolute), with what is left of
 * the path after that directory.
 */
static int lfs_lwalk_redirect(struct lfs_lwalk *w, const char *redirect,
			      unsigned int start, unsigned int end,
			      unsigned int from)
{
	size_t rlen = strlen(redirect), head, tail = w->name.len - end;
	struct super_block *sb = w->sb;
	char *buf;

	head = redirect[0] == '/' ? 0 : start;
	if (head + rlen + tail >= PATH_MAX) {
		pr_warn_ratelimited("a redirect (%s) makes a path too long\n",
				    redirect);
		return -EIO;
	}
	buf = kmalloc(head + rlen + tail + 1, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, w->name.name, head);
	memcpy(buf + head, redirect, rlen);
	memcpy(buf + head + rlen, w->name.name + end, tail);
	buf[head + rlen + tail] = '\0';
	kfree(w->buf);
	w->buf = buf;
	w->name = (struct qstr)QSTR_INIT(buf, head + rlen + tail);
	if (redirect[0] == '/') {
		w->stop = false;
		if (w->pe != LFS_E(sb->s_root)) {
			lfs_ni_end(&w->c);
			w->pe = LFS_E(sb->s_root);
			lfs_ni_start(&w->c, LFS_SB(sb), w->pe);
		}
	}
	w->from = from;
	w->changed = true;
	return lfs_lwalk_renamed(w);
}

/*
 * One directory on the way down a path, @name in @at: a whiteout or a
 * non-directory ends the walk for this layer and every layer below (0);
 * an opaque directory, or one beside its aufs whiteout, makes this layer
 * the last; a redirect on it changes the path for the layers below.
 * @c is the cursor that knows what @at holds of @name.
 * Return: 1 and the directory in *@next (its instance, a reference), 0,
 * or -errno.
 */
static int lfs_walk_path_step(struct lfs_lwalk *w, const struct lfs_ni_cursor *c,
			      const struct lfs_real *at, const struct qstr *name,
			      unsigned int end, struct lfs_real *next)
{
	const struct lfs_sb *sbi = LFS_SB(w->sb);
	struct dentry *real;
	unsigned int flags;
	char *redirect;
	struct qstr wh;
	int hidden, opaque;

	hidden = lfs_walk_wh_name(sbi, name, &wh);
	if (!hidden)
		hidden = lfs_walk_instance(sbi, c, at, name, &wh, &real);
	kfree(wh.name);
	if (hidden < 0)
		return hidden;
	if (!real) {
		w->stop |= hidden;
		return 0;
	}
	if (!d_is_dir(real)) {
		/* a whiteout too */
		dput(real);
		w->stop = true;
		return 0;
	}
	opaque = lfs_walk_dir_marker(sbi, at->layer, real, &flags);
	if (opaque < 0)
		goto out_err;
	if (opaque || hidden) {
		w->stop = true;
	} else {
		redirect = lfs_get_redirect(sbi, at->layer, real);
		opaque = PTR_ERR_OR_ZERO(redirect);
		if (redirect && !opaque) {
			opaque = lfs_lwalk_redirect(w, redirect,
						    (const char *)name->name - w->buf,
						    end, at->layer->idx + 1);
			kfree(redirect);
		}
		if (opaque)
			goto out_err;
	}
	*next = (struct lfs_real){ .dentry = real, .layer = at->layer,
				   .flags = flags };
	return 1;

out_err:
	dput(real);
	return opaque;
}

/*
 * An absolute path in one layer: walk its directories from the layer's
 * root (@root) down to the one that should hold the last name, which
 * becomes *@dir.
 * Return: 1 and *@dir (a reference), 0 when the layer does not hold the
 * path, or -errno.
 */
static int lfs_walk_path(struct lfs_lwalk *w, const struct lfs_real *root,
			 struct lfs_real *dir)
{
	/* the tail still to walk, from its '/': a change keeps it */
	size_t tail = w->name.len;
	struct lfs_ni_cursor all = {};
	struct lfs_real at = *root;
	int found = 1;

	dget(at.dentry);
	for (;;) {
		/* an absolute path is always in @buf */
		const char *s = w->buf + w->name.len - tail + 1;
		const char *end = strchrnul(s, '/');
		struct qstr name = QSTR_INIT(s, end - s);
		struct lfs_real next;

		if (!*end)
			break;
		tail = w->buf + w->name.len - end;
		/* the cursor knows what the root holds of the first name */
		found = lfs_walk_path_step(w, at.dentry == root->dentry ? &w->c : &all,
					   &at, &name, end - w->buf, &next);
		dput(at.dentry);
		if (found <= 0)
			return found;
		at = next;
	}
	*dir = at;
	return 1;
}

/*
 * The object the walk finds in one lower instance, @inst, of the parent
 * or the root: the last name in the instance the walk reaches from it.
 * Sets *@realp (NULL if none) and *@at, the instance it was found in (a
 * reference in *@held when the walk went down a path).
 * Return: 1 if the name's aufs whiteout is there too, 0 if not, or -errno.
 */
static int lfs_lwalk_layer(struct lfs_lwalk *w, const struct lfs_real *inst,
			   struct lfs_real *at, struct dentry **held,
			   struct dentry **realp)
{
	struct lfs_ni_cursor all = {};
	struct qstr last;
	int found;

	*held = NULL;
	*realp = NULL;
	*at = *inst;
	if (lfs_lwalk_abs(w)) {
		found = lfs_walk_path(w, inst, at);
		if (found <= 0)
			return found;
		*held = at->dentry;
	}
	last = lfs_lwalk_last(w);
	return lfs_walk_instance(LFS_SB(w->sb),
				 at->dentry == inst->dentry ? &w->c : &all, at,
				 &last, &w->wh, realp);
}

/* what the walk through the lower layers looks for */
enum lfs_lwant {
	LFS_LW_ANY,			/* whatever the name shows */
	LFS_LW_BELOW_DIR,		/* directories below a directory found above */
	LFS_LW_DATA,			/* the data of a metacopy file found above */
};

/*
 * A lower metacopy file's data pointer (lfs_check_data_pointer()): an
 * absolute path, every name in it a real name (lfs_redirect_valid(): no
 * empty one, no "." or ".."), so that it cannot lead out of the data-only
 * layers' roots.
 * Return: the path (kfree() it), or an ERR_PTR (-EIO: not a valid one).
 */
static char *lfs_read_data_pointer(const struct lfs_sb *sbi,
				   const struct lfs_layer *layer,
				   struct dentry *real)
{
	char *buf;
	int len;

	len = lfs_get_marker(sbi, layer, real, LFS_XA_REDIRECT, NULL, 0);
	if (len < 0)
		return ERR_PTR(len);
	if (len < 2 || len >= PATH_MAX)
		goto invalid;
	buf = lfs_read_redirect(sbi, layer, real, len, true);
	if (buf)
		return buf;
invalid:
	pr_warn_ratelimited("%pd2: invalid data pointer in layer \"%s\"\n",
			    real, layer->name);
	return ERR_PTR(-EIO);
}

/*
 * Is @real, at a data pointer's path in a data-only layer, data: a
 * regular file without a metacopy marker?  A user.* marker the mounter
 * may not read (EACCES) is taken as none, as lfs_check_metacopy() takes
 * it: the data is then used only if the mounter may read it, asked at
 * each use (lfs_data_may_read()).
 * Return: 1 if so, 0 if not, or -errno.
 */
static int lfs_data_is_plain(const struct lfs_sb *sbi,
			     const struct lfs_layer *layer, struct dentry *real)
{
	int len;

	if (!d_is_reg(real))
		return 0;
	len = lfs_get_marker(sbi, layer, real, LFS_XA_METACOPY, NULL, 0);
	if (len == -ENODATA || len == -EOPNOTSUPP ||
	    (len == -EACCES && sbi->userxattr))
		return 1;
	return len < 0 ? len : 0;
}

/*
 * A data pointer's @path in one data-only layer: each name but the last
 * a directory (a symlink is not one, so none is followed; nor is a
 * trap), the last data (lfs_data_is_plain()).  Looked up as the mounter
 * (the caller's credentials), through the layer's idmapping.
 * Return: 1 and *@datap (a reference), 0 when the layer does not hold
 * the data, or -errno.
 */
static int lfs_data_in_layer(const struct lfs_sb *sbi,
			     const struct lfs_layer *layer, const char *path,
			     struct dentry **datap)
{
	struct dentry *dir = dget(layer->root), *real;
	const char *s = path + 1, *end;
	int ret;

	for (;;) {
		struct qstr name;

		end = strchrnul(s, '/');
		name = (struct qstr)QSTR_INIT(s, end - s);
		real = lfs_lookup_in(layer, dir, &name);
		dput(dir);
		if (IS_ERR_OR_NULL(real))
			return PTR_ERR_OR_ZERO(real);
		if (!*end)
			break;
		if (!d_is_dir(real) || lfs_is_trap(sbi, layer, real)) {
			ret = d_is_dir(real) ? -ELOOP : 0;
			dput(real);
			return ret;
		}
		dir = real;
		s = end + 1;
	}
	ret = lfs_data_is_plain(sbi, layer, real);
	if (ret <= 0) {
		dput(real);
		return ret;
	}
	*datap = real;
	return 1;
}

/*
 * Follow the data pointer of @mc, a metacopy file of the lower layer
 * @layer: the data is the first object at its path, in the data-only
 * layers in mount order, that is data.  A layer that cannot tell (a
 * directory the mounter may not search, a marker it cannot read) does
 * not hide a copy in the next one, as overlay tries every data-only
 * layer; only running out of memory stops the search.  None holds it:
 * the last such error, else EIO, as a metacopy file without data below.
 * Caller runs as the mounter.
 * Return: 0 and *@at (a reference to the data, and its layer), or -errno.
 */
static int lfs_data_lookup(const struct lfs_sb *sbi,
			   const struct lfs_layer *layer, struct dentry *mc,
			   struct lfs_real *at)
{
	struct dentry *data = NULL;
	unsigned int i;
	int found = 0, err = -EIO;
	char *path;

	path = lfs_read_data_pointer(sbi, layer, mc);
	if (IS_ERR(path))
		return PTR_ERR(path);
	for (i = sbi->nr_layers; i < lfs_nr_all_layers(sbi); i++) {
		found = lfs_data_in_layer(sbi, &sbi->layers[i], path, &data);
		if (found > 0 || found == -ENOMEM)
			break;
		if (found < 0)
			err = found;
	}
	if (found > 0) {
		*at = (struct lfs_real){ .dentry = data,
					 .layer = &sbi->layers[i] };
		err = 0;
	} else if (found == -ENOMEM) {
		err = found;
	} else {
		pr_warn_ratelimited("%pd2: metacopy file in layer \"%s\" without data: %s is in no data-only layer (%d)\n",
				    mc, layer->name, path, err);
	}
	kfree(path);
	return err;
}

/*
 * Looking for a metacopy file's data, *@realp was found in @at (or
 * nothing, NULL): a regular file without the marker is the data (1);
 * another metacopy file is passed (0: walk on), but one with a data
 * pointer, which leads to the data (1, *@realp and @at the data's);
 * anything else, a whiteout too, means the layers below show no data for
 * the name (-ENODATA).
 */
static int lfs_lwalk_data(const struct lfs_sb *sbi, struct lfs_real *at,
			  struct dentry **realp)
{
	struct dentry *real = *realp;
	int mc;

	if (!real)
		return 0;
	if (!d_is_reg(real) || lfs_is_whiteout(sbi, at->layer, real, at->flags))
		return -ENODATA;
	mc = lfs_check_metacopy(sbi, at->layer, real);
	if (mc == LFS_MC_POINTER) {
		mc = lfs_data_lookup(sbi, at->layer, real, at);
		if (mc)
			return mc;
		dput(real);
		*realp = at->dentry;
		return 1;
	}
	if (mc < 0)
		return mc;
	return !mc;
}

/*
 * A metacopy file whose data was found: @data, below the upper one, else
 * below the first part of @e.
 *
 * Its size is its data's: a metadata-only copy-up gives it that size, a
 * change of size copies the data up first, and composefs writes each
 * pointer file with its object's size.  Another size means the layers
 * below changed since the copy-up (another file at that path now), or a
 * marker was forged: what the file would show is not what the mount
 * showed when it was made, so it is not shown (EIO, as a missing data).
 *
 * Under userxattr there is no index and no copy-up of a hard link as a
 * metacopy file, so a metacopy file with several names is forged; its
 * names would share one inode and so the data found below whichever was
 * looked up first, not each its own: not followed (EIO) either.
 */
static int lfs_check_metacopy_data(const struct lfs_sb *sbi,
				   const struct lfs_entry *e,
				   struct dentry *data)
{
	struct dentry *mc = e->upper ? e->upper : e->real[0].dentry;
	unsigned int nlink = d_inode(mc)->i_nlink;
	loff_t size = i_size_read(d_inode(mc));
	loff_t data_size = i_size_read(d_inode(data));

	if (size != data_size) {
		pr_warn_ratelimited("%pd2: metacopy file of %lld bytes over data of %lld (stale or forged): not followed\n",
				    mc, size, data_size);
		return -EIO;
	}
	if (nlink <= 1 || !sbi->userxattr)
		return 0;
	pr_warn_ratelimited("%pd2: metacopy file of %u links: not followed\n",
			    mc, nlink);
	return -EIO;
}

/*
 * A lower metacopy file with a data pointer, @mc found in @at and the
 * last of @p: its data, from the data-only layers, joins @p after it.
 */
static int lfs_parts_add_pointed(const struct lfs_sb *sbi,
				 struct lfs_parts *p, const struct lfs_real *at,
				 struct dentry *mc)
{
	struct lfs_real data;
	int err;

	err = lfs_data_lookup(sbi, at->layer, mc, &data);
	if (err)
		return err;
	err = lfs_check_metacopy_data(sbi, p->e, data.dentry);
	if (!err)
		err = lfs_parts_add(p, data.dentry, data.layer, 0);
	if (err)
		dput(data.dentry);
	return err;
}

/*
 * The walk through the lower layers (struct lfs_lwalk).  The first object
 * found decides (for LFS_LW_ANY): a whiteout ends the walk with nothing,
 * a non-directory is the answer on its own, a directory collects the same
 * name from the layers below until one is opaque or holds a non-directory.
 * A metacopy file is followed down to its data, the first regular file
 * without the marker below it (LFS_LW_DATA: the walk finds only that), or
 * where its data pointer leads, in the data-only layers (a metacopy file
 * with one ends the walk); an entry holds both.  @redirect is the upper directory's, or NULL.
 */
static int lfs_lookup_lowers(struct super_block *sb, struct lfs_entry *pe,
			     const struct qstr *name, const char *redirect,
			     struct lfs_parts *p, enum lfs_lwant want)
{
	const struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_lwalk w = { .sb = sb, .pe = pe, .name = *name };
	bool below_dir = want == LFS_LW_BELOW_DIR;
	bool data = want == LFS_LW_DATA;
	unsigned int i;
	int err;

	p->e->nr = 0;
	lfs_ni_start(&w.c, sbi, pe);
	if (redirect)
		err = lfs_lwalk_redirect(&w, redirect, 0, name->len, 0);
	else
		err = lfs_lwalk_renamed(&w);
	for (i = lfs_lwalk_seek(&w, 0); !err && i < w.pe->nr;
	     i = w.changed ? lfs_lwalk_seek(&w, w.from) :
			     lfs_ni_next(&w.c, w.pe->nr, i)) {
		bool first = !below_dir && !p->e->nr;
		struct dentry *real, *held;
		struct lfs_real at;
		unsigned int flags = 0;
		int opaque = 0, hidden, mc;

		hidden = lfs_lwalk_layer(&w, &w.pe->real[i], &at, &held, &real);
		if (hidden < 0) {
			err = hidden;
			dput(held);
			break;
		}
		/* (@real pins the instance, @held's, that it was found in) */
		if (real)
			at.flags = lfs_parent_flags(sbi, held ? &at : &w.pe->real[i],
						    real);
		dput(held);
		if (data) {
			err = lfs_lwalk_data(sbi, &at, &real);
			if (err <= 0) {
				dput(real);
				if (err || hidden || w.stop)
					break;
				continue;
			}
			err = lfs_check_metacopy_data(sbi, p->e, real);
			if (!err)
				err = lfs_parts_add(p, real, at.layer, 0);
			if (err)
				dput(real);
			data = false;
			break;
		}
		if (real && first && lfs_is_whiteout(sbi, at.layer, real, at.flags)) {
			dput(real);
			real = NULL;
			hidden = 1;
		} else if (real && !first && !d_is_dir(real)) {
			/* below a directory, a non-directory ends the merge */
			dput(real);
			real = NULL;
			hidden = 1;
		}
		if (!real) {
			/* a whiteout: nothing, or the end of the merge */
			if (hidden || w.stop)
				break;
			continue;
		}
		if (d_is_dir(real)) {
			opaque = lfs_walk_dir_marker(sbi, at.layer, real, &flags);
			if (opaque < 0) {
				err = opaque;
				dput(real);
				break;
			}
		}
		/* a metacopy file: its data is further down, or pointed at */
		mc = 0;
		if (first && d_is_reg(real)) {
			mc = lfs_check_metacopy(sbi, at.layer, real);
			if (mc < 0) {
				err = mc;
				dput(real);
				break;
			}
			data = mc;
		}
		err = lfs_parts_add(p, real, at.layer, flags);
		if (err) {
			dput(real);
			break;
		}
		if (mc == LFS_MC_POINTER) {
			err = lfs_parts_add_pointed(sbi, p, &at, real);
			data = false;
			break;
		}
		if (data && !hidden && !w.stop)
			continue;
		/* beside its own whiteout, a directory is the last part */
		if (!d_is_dir(real) || opaque || hidden)
			break;
		redirect = lfs_get_redirect(sbi, at.layer, real);
		if (IS_ERR(redirect)) {
			err = PTR_ERR(redirect);
			break;
		}
		if (redirect) {
			err = lfs_lwalk_redirect(&w, redirect, w.last, w.name.len,
						 redirect[0] == '/' ?
						 at.layer->idx + 1 : i + 1);
			kfree(redirect);
		}
		if (w.stop)
			break;
	}
	lfs_ni_end(&w.c);
	kfree(w.wh.name);
	kfree(w.buf);
	/* a metacopy file without data below: overlay's answer, EIO */
	if ((!err && data) || err == -ENODATA) {
		pr_warn_ratelimited("%.*s: metacopy file without data below\n",
				    name->len, name->name);
		err = -EIO;
	}
	return err;
}

/*
 * The upper layer first: a whiteout there hides everything, a non-
 * directory or an opaque directory stands alone, a redirect says where
 * the lower parts are.  Then the lower layers.  @wh is the aufs
 * whiteout's name, or empty.  The lower objects go in @p, the upper one
 * in p->e->upper.
 */
static int lfs_lookup_walk(struct super_block *sb, struct lfs_entry *pe,
			   struct dentry *pupper, const struct qstr *name,
			   const struct qstr *wh, struct lfs_parts *p)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_entry *e = p->e;
	struct lfs_ni_cursor all = {};
	struct dentry *upper = NULL;
	char *redirect = NULL;
	unsigned int flags;
	int hidden = 0, opaque;

	e->upper = NULL;
	e->nr = 0;
	if (pupper) {
		struct lfs_real parent = {
			.dentry = pupper,
			.layer = sbi->upper,
		};

		hidden = lfs_walk_instance(sbi, &all, &parent, name, wh, &upper);
		if (hidden < 0)
			return hidden;
	}
	if (!upper && hidden)
		return 0;	/* an aufs whiteout */
	if (upper) {
		if (lfs_is_whiteout(sbi, sbi->upper, upper, 0)) {
			dput(upper);
			return 0;
		}
		e->upper = upper;
		opaque = lfs_check_metacopy(sbi, sbi->upper, upper);
		/* its data is below an aufs whiteout of its own name: forged */
		if (opaque > 0 && hidden)
			return -EIO;
		if (opaque)
			return opaque < 0 ? opaque :
			       lfs_lookup_lowers(sb, pe, name, NULL, p, LFS_LW_DATA);
		if (!d_is_dir(upper) || hidden)
			return 0;
		opaque = lfs_dir_marker(sbi, sbi->upper, upper, &flags);
		if (opaque)
			return opaque < 0 ? opaque : 0;
		redirect = lfs_get_redirect(sbi, sbi->upper, upper);
		if (IS_ERR(redirect))
			return PTR_ERR(redirect);
	}
	opaque = lfs_lookup_lowers(sb, pe, name, redirect, p,
				   upper ? LFS_LW_BELOW_DIR : LFS_LW_ANY);
	kfree(redirect);
	return opaque;
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
		struct lfs_real *parent = &pe->real[i];
		struct dentry *real;

		hidden = lfs_walk_instance(sbi, &c, parent, &dentry->d_name, &wh, &real);
		if (hidden < 0) {
			positive = hidden;
			break;
		}
		if (real) {
			positive = !lfs_is_whiteout(sbi, parent->layer, real,
						    lfs_parent_flags(sbi, parent, real));
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
 * A lower non-directory with several links may already have a copy: its
 * other names then show the copy, found in the index.  A lower metacopy
 * file's entry holds its data too, after it (below, or in a data-only
 * layer): its names share the metacopy file, the first part, which keys
 * the index as the copy-up keyed it (lfs_cu_prepare()).
 */
static struct dentry *lfs_lookup_index(struct super_block *sb,
				       const struct lfs_entry *e)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	const struct lfs_real *r = &e->real[0];
	struct inode *lower;

	if (!sbi->index || e->upper ||
	    (e->nr != 1 && !lfs_entry_lower_metacopy(e)))
		return NULL;
	lower = d_inode(r->dentry);
	if (S_ISDIR(lower->i_mode) || lower->i_nlink < 2)
		return NULL;
	return lfs_index_lookup(sbi, lfs_ino(sbi, r->layer, lower->i_ino), lower);
}

/* Does the walk's result show a directory (lfs_get_inode()'s type)? */
static bool lfs_walk_is_dir(const struct lfs_entry *e)
{
	if (e->upper)
		return d_is_dir(e->upper);
	return e->nr && d_is_dir(e->real[0].dentry);
}

/* The exact-size entry the dentry keeps; takes the walk's references. */
static struct lfs_entry *lfs_walk_result(struct lfs_parts *p)
{
	struct lfs_entry *src = p->e;
	struct lfs_entry *e;

	e = lfs_entry_alloc(src->nr, lfs_walk_is_dir(src));
	if (!e)
		return NULL;
	memcpy(e->real, src->real, src->nr * sizeof(e->real[0]));
	e->nr = src->nr;
	src->nr = 0;
	e->upper = src->upper;
	src->upper = NULL;
	return e;
}

struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags)
{
	struct lfs_entry *pe = LFS_E(dentry->d_parent);
	struct super_block *sb = dir->i_sb;
	struct lfs_walk_buf onstack = {};
	struct lfs_parts w = {
		.e = &onstack.e,
		.room = LFS_WALK_ONSTACK,
		.buf = &onstack.e,
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
	if (!err && (w.e->upper || w.e->nr)) {
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
