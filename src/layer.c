// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: building and releasing the layer stack.
 *
 * Mount parameters resolve each lower path as they arrive (so fsconfig()
 * callers learn of a bad layer at once); fill_super then turns the list
 * into layers: validated, checked for overlaps, and reached through
 * private read-only clones of their mounts, one clone per distinct mount.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/log2.h>
#include "layerfs.h"

static int lfs_config_grow(struct lfs_config *cfg)
{
	unsigned int cap = cfg->cap_lower ? 2 * cfg->cap_lower : 8;
	struct path *lower;
	char **names;

	cap = min_t(unsigned int, cap, LFS_MAX_LAYERS);
	lower = kvmalloc_array(cap, sizeof(*lower), GFP_KERNEL_ACCOUNT);
	names = kvmalloc_array(cap, sizeof(*names), GFP_KERNEL_ACCOUNT);
	if (!lower || !names) {
		kvfree(lower);
		kvfree(names);
		return -ENOMEM;
	}
	if (cfg->nr_lower) {
		memcpy(lower, cfg->lower, cfg->nr_lower * sizeof(*lower));
		memcpy(names, cfg->lower_name, cfg->nr_lower * sizeof(*names));
	}
	kvfree(cfg->lower);
	kvfree(cfg->lower_name);
	cfg->lower = lower;
	cfg->lower_name = names;
	cfg->cap_lower = cap;
	return 0;
}

/*
 * Things a layer cannot be: case-folding, automounts, and the like.  An
 * idmapped mount may be one: layerfs shows its objects' owners, and
 * writes new ones, through the layer mount's idmapping, as the real
 * filesystem checks them (lfs_copy_attr(), lfs_real_userns()).
 */
static const char *lfs_unfit_layer(const struct path *path)
{
	const struct dentry *d = path->dentry;

	if (d->d_flags & (DCACHE_OP_HASH | DCACHE_OP_COMPARE))
		return "filesystem with case-insensitive or custom name matching";
	if (d->d_flags & (DCACHE_NEED_AUTOMOUNT | DCACHE_MANAGE_TRANSIT))
		return "automount point";
	return NULL;
}

/* What a layer or the upper directory became, for /proc/mounts. */
static char *lfs_abs_path(const struct path *path)
{
	char *buf, *p;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	p = d_path(path, buf, PATH_MAX);
	if (!IS_ERR(p))
		p = kstrdup(p, GFP_KERNEL_ACCOUNT) ?: ERR_PTR(-ENOMEM);
	kfree(buf);
	return p;
}

/*
 * The path of @dir: resolved from the caller's view of the name, as a
 * lookup of it would be, or the one its descriptor was opened on (who
 * holds it could reach the directory by it anyway).
 */
static int lfs_dir_arg_path(const struct lfs_dir_arg *dir, struct path *path)
{
	if (dir->file) {
		*path = dir->file->f_path;
		path_get(path);
		return 0;
	}
	return kern_path(dir->name, LOOKUP_FOLLOW, path);
}

/*
 * Resolve a directory given to the mount: a lower layer, upperdir or
 * workdir (@what, for the messages).  On success @path holds a reference
 * and @abs the absolute path /proc/mounts shows; on failure both are
 * left empty.
 */
static int lfs_resolve_dir(struct fs_context *fc, const char *what,
			   const struct lfs_dir_arg *dir, struct path *path,
			   char **abs)
{
	const char *unfit, *shown, *by;
	int err;

	err = lfs_dir_arg_path(dir, path);
	if (err) {
		lfs_err(fc, "%s \"%s\": cannot resolve (%d)", what, dir->name, err);
		goto out_clear;
	}
	*abs = lfs_abs_path(path);
	if (IS_ERR(*abs)) {
		err = PTR_ERR(*abs);
		lfs_err(fc, "%s \"%s\": no absolute path (%d)", what,
			dir->file ? "(by descriptor)" : dir->name, err);
		goto out_put;
	}
	/* a descriptor's messages name the path it was opened on */
	shown = dir->file ? *abs : dir->name;
	by = dir->file ? " (by descriptor)" : "";
	err = -ENOTDIR;
	if (!d_is_dir(path->dentry)) {
		lfs_err(fc, "%s \"%s\"%s: not a directory", what, shown, by);
		goto out_free;
	}
	err = -EINVAL;
	unfit = lfs_unfit_layer(path);
	if (unfit) {
		lfs_err(fc, "%s \"%s\"%s: %s cannot be %s", what, shown, by,
			unfit, strstr(what, "layer") ? "a layer" : "used");
		goto out_free;
	}
	return 0;

out_free:
	kfree(*abs);
out_put:
	*abs = NULL;
	path_put(path);
out_clear:
	path->mnt = NULL;
	path->dentry = NULL;
	return err;
}

/**
 * lfs_config_add_lower - resolve one lower layer and append it
 * @fc: the mount context
 * @dir: the layer, by path or by file descriptor
 *
 * Return: 0, or -errno with a message in the fs_context log.
 */
int lfs_config_add_lower(struct fs_context *fc, const struct lfs_dir_arg *dir)
{
	struct lfs_config *cfg = fc->fs_private;
	const char *what = dir->data_only ? "data-only layer" : "lower layer";
	int err;

	/* lowerdir= and the fsconfig keys check their own order first */
	if (!dir->data_only && cfg->nr_data)
		return lfs_inval(fc, "lower layer \"%s\": cannot follow a data-only layer",
				 dir->file ? "(by descriptor)" : dir->name);
	if (cfg->nr_lower >= LFS_MAX_LAYERS)
		return lfs_inval(fc, "too many lower layers (at most %u)",
				 LFS_MAX_LAYERS);
	if (fc->user_ns != &init_user_ns &&
	    cfg->nr_lower >= LFS_MAX_USERNS_LAYERS)
		return lfs_inval(fc, "too many lower layers in a user namespace (at most %u)",
				 LFS_MAX_USERNS_LAYERS);
	if (cfg->nr_lower == cfg->cap_lower) {
		err = lfs_config_grow(cfg);
		if (err)
			return err;
	}
	err = lfs_resolve_dir(fc, what, dir, &cfg->lower[cfg->nr_lower],
			      &cfg->lower_name[cfg->nr_lower]);
	if (err)
		return err;
	cfg->nr_lower++;
	if (dir->data_only)
		cfg->nr_data++;
	return 0;
}

void lfs_config_free(struct lfs_config *cfg)
{
	unsigned int i;

	if (cfg->upper.mnt)
		path_put(&cfg->upper);
	if (cfg->work.mnt)
		path_put(&cfg->work);
	kfree(cfg->upper_name);
	kfree(cfg->work_name);
	cfg->upper.mnt = NULL;
	cfg->work.mnt = NULL;
	cfg->upper_name = NULL;
	cfg->work_name = NULL;

	for (i = 0; i < cfg->nr_lower; i++) {
		path_put(&cfg->lower[i]);
		kfree(cfg->lower_name[i]);
	}
	kvfree(cfg->lower);
	kvfree(cfg->lower_name);
	cfg->lower = NULL;
	cfg->lower_name = NULL;
	cfg->nr_lower = 0;
	cfg->nr_data = 0;
	cfg->cap_lower = 0;
}

/*
 * A private clone of @path's mount, rooted at the mount's root so that
 * every directory of that mount lies inside it and one clone serves all
 * the layers on it (*@whole true).  A mount with locked submounts (what a
 * user namespace inherits: `unshare -Urm` locks every mount below /)
 * cannot be cloned whole, for the clone would uncover what they hide;
 * @path's own directory may still be, where no locked mount lies below
 * it (*@whole false: the clone serves @path alone).
 */
static struct vfsmount *lfs_clone_mount(const struct path *path, bool *whole)
{
	struct path root = { .mnt = path->mnt, .dentry = path->mnt->mnt_root };
	struct vfsmount *clone;

	*whole = true;
	clone = clone_private_mount(&root);
	if (!IS_ERR(clone) || path->dentry == root.dentry)
		return clone;
	*whole = false;
	return clone_private_mount(path);
}

/*
 * The private clone a lower layer is reached through: made on first use,
 * shared by the layers on one mount (so a 4096-layer image stored on one
 * filesystem costs one clone) where the mount can be cloned whole.
 */
static struct vfsmount *lfs_layer_clone(struct fs_context *fc,
					struct lfs_sb *sbi,
					struct vfsmount **orig,
					const struct path *path,
					const char *name)
{
	struct vfsmount *clone;
	unsigned int i;
	bool whole;

	for (i = 0; i < sbi->nr_mnts; i++)
		if (orig[i] == path->mnt)
			return sbi->mnts[i];

	clone = lfs_clone_mount(path, &whole);
	if (IS_ERR(clone)) {
		lfs_err(fc, "lower layer \"%s\": cannot clone its mount or its directory (%ld)",
			name, PTR_ERR(clone));
		return clone;
	}
	/* lower layers are never written, nor their atimes updated */
	clone->mnt_flags |= MNT_READONLY | MNT_NOATIME;
	/* a clone of one directory is not found for another */
	orig[sbi->nr_mnts] = whole ? path->mnt : NULL;
	sbi->mnts[sbi->nr_mnts++] = clone;
	return clone;
}

static unsigned int lfs_layer_fsid(struct super_block **fs, unsigned int *nr_fs,
				   struct super_block *sb)
{
	unsigned int i;

	for (i = 0; i < *nr_fs; i++)
		if (fs[i] == sb)
			return i;
	fs[*nr_fs] = sb;
	return (*nr_fs)++;
}

/* what a layer is called in messages */
static const char *lfs_layer_kind(const struct lfs_layer *layer)
{
	return layer->data_only ? "data-only layer" : "lower layer";
}

/*
 * No layer may lie inside another (ELOOP): each layer's ancestors, up to
 * the root of its filesystem, must not be layers (the traps hold the
 * layers' roots, and nothing else yet).  The same directory given twice
 * is not an overlap; it only repeats itself in the stack.  Submounts
 * never matter: a private clone carries no submounts.
 */
static int lfs_check_overlaps(struct fs_context *fc, struct lfs_sb *sbi)
{
	unsigned int i;
	int err = 0;

	for (i = 0; i < lfs_nr_all_layers(sbi) && !err; i++) {
		struct dentry *d = dget(sbi->layers[i].root);

		while (!IS_ROOT(d)) {
			struct dentry *parent = dget_parent(d);

			dput(d);
			d = parent;
			if (lfs_ptrset_has(&sbi->traps, d_inode(d))) {
				unsigned int j;

				for (j = 0; d_inode(sbi->layers[j].root) != d_inode(d); j++)
					;
				lfs_err(fc, "%s \"%s\" is inside %s \"%s\"",
					lfs_layer_kind(&sbi->layers[i]),
					sbi->layers[i].name,
					lfs_layer_kind(&sbi->layers[j]),
					sbi->layers[j].name);
				err = -ELOOP;
				break;
			}
		}
		dput(d);
	}
	return err;
}

/*
 * A data-only layer given again as another layer (lowerdir=L::L): its
 * data pointers could then name any file of a regular layer, and two
 * data-only layers alike add nothing.  Refused as overlay refuses a
 * repeated layer (ELOOP); regular layers may repeat (see above).
 */
static int lfs_check_data_repeats(struct fs_context *fc,
				  const struct lfs_sb *sbi)
{
	unsigned int i, j;

	for (i = sbi->nr_layers; i < lfs_nr_all_layers(sbi); i++) {
		for (j = 0; j < i; j++) {
			if (d_inode(sbi->layers[j].root) !=
			    d_inode(sbi->layers[i].root))
				continue;
			lfs_err(fc, "data-only layer \"%s\" is also %s \"%s\"",
				sbi->layers[i].name,
				lfs_layer_kind(&sbi->layers[j]),
				sbi->layers[j].name);
			return -ELOOP;
		}
	}
	return 0;
}

/**
 * lfs_layers_build - turn the resolved lower paths into the layer stack
 * @fc: the mount context, whose config is consumed
 * @sbi: the superblock info to fill
 *
 * Return: 0, or -errno after logging why; partial state is released by
 * lfs_layers_free().
 */
int lfs_layers_build(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct lfs_config *cfg = fc->fs_private;
	unsigned int n = cfg->nr_lower, i, bits;
	struct super_block **fs = NULL;
	struct vfsmount **orig = NULL;
	int err = -ENOMEM;

	sbi->layers = kvcalloc(n, sizeof(*sbi->layers), GFP_KERNEL_ACCOUNT);
	sbi->mnts = kvcalloc(n, sizeof(*sbi->mnts), GFP_KERNEL_ACCOUNT);
	orig = kvcalloc(n, sizeof(*orig), GFP_KERNEL);
	fs = kvcalloc(n + 1, sizeof(*fs), GFP_KERNEL);
	if (!sbi->layers || !sbi->mnts || !orig || !fs)
		goto out;
	err = lfs_ptrset_init(&sbi->traps, n + LFS_NR_UPPER_TRAPS);
	if (err)
		goto out;
	/* the upper filesystem is index 0: new objects keep their numbers */
	if (cfg->upper.mnt)
		lfs_layer_fsid(fs, &sbi->nr_fsid, cfg->upper.dentry->d_sb);

	for (i = 0; i < n; i++) {
		struct lfs_layer *layer = &sbi->layers[i];
		const struct path *path = &cfg->lower[i];
		struct vfsmount *mnt;

		mnt = lfs_layer_clone(fc, sbi, orig, path, cfg->lower_name[i]);
		if (IS_ERR(mnt)) {
			err = PTR_ERR(mnt);
			goto out;
		}
		layer->mnt = mnt;
		layer->root = dget(path->dentry);
		lfs_ptrset_add(&sbi->traps, d_inode(layer->root));
		layer->idx = i;
		/*
		 * st_ino is never a data-only layer's (a metacopy file shows
		 * its own): its filesystem takes no bits of it
		 */
		layer->data_only = i >= n - cfg->nr_data;
		if (!layer->data_only)
			layer->fsid = lfs_layer_fsid(fs, &sbi->nr_fsid,
						     path->dentry->d_sb);
		/* the name moves from the config to the layer */
		layer->name = cfg->lower_name[i];
		cfg->lower_name[i] = NULL;
		sbi->nr_layers++;
	}
	/* the data-only layers follow the regular ones in @layers */
	sbi->nr_data = cfg->nr_data;
	sbi->nr_layers -= cfg->nr_data;

	/*
	 * Objects on different filesystems may share inode numbers; the
	 * filesystem's index goes in the top bits to keep st_ino unique.
	 */
	bits = sbi->nr_fsid > 1 ? ilog2(sbi->nr_fsid - 1) + 1 : 0;
	sbi->xino_shift = 64 - bits;

	err = lfs_check_overlaps(fc, sbi);
	if (!err)
		err = lfs_check_data_repeats(fc, sbi);
	sbi->upper_layer.fsid = 0;
out:
	kvfree(orig);
	kvfree(fs);
	return err;
}

void lfs_layers_free(struct lfs_sb *sbi)
{
	unsigned int i;

	for (i = 0; i < lfs_nr_all_layers(sbi); i++) {
		dput(sbi->layers[i].root);
		kfree(sbi->layers[i].name);
	}
	if (sbi->nr_mnts)
		kern_unmount_array(sbi->mnts, sbi->nr_mnts);
	kvfree(sbi->layers);
	kvfree(sbi->mnts);
	lfs_ptrset_free(&sbi->traps);
	sbi->layers = NULL;
	sbi->mnts = NULL;
	sbi->nr_layers = 0;
	sbi->nr_data = 0;
	sbi->nr_mnts = 0;
}

/* upperdir= and workdir= */

/**
 * lfs_config_set_upper - resolve upperdir= or workdir=
 * @fc: the mount context
 * @key: "upperdir" or "workdir"
 * @dir: the directory, by path or by file descriptor
 *
 * Return: 0, or -errno with a message in the fs_context log.
 */
int lfs_config_set_upper(struct fs_context *fc, const char *key,
			 const struct lfs_dir_arg *dir)
{
	struct lfs_config *cfg = fc->fs_private;
	bool upper = !strcmp(key, "upperdir");
	struct path *path = upper ? &cfg->upper : &cfg->work;
	char **abs = upper ? &cfg->upper_name : &cfg->work_name;

	if (path->mnt)
		return lfs_inval(fc, "%s= given twice", key);
	return lfs_resolve_dir(fc, key, dir, path, abs);
}

/*
 * One mount at a time may own an upper or work directory: the inode flag
 * upstream overlayfs uses for the same purpose, so that neither can take
 * a directory the other is using.
 */
static bool lfs_inuse_trylock(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	bool locked = false;

	spin_lock(&inode->i_lock);
	if (!(inode->i_state & I_OVL_INUSE)) {
		inode->i_state |= I_OVL_INUSE;
		locked = true;
	}
	spin_unlock(&inode->i_lock);
	return locked;
}

static void lfs_inuse_unlock(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);

	spin_lock(&inode->i_lock);
	inode->i_state &= ~I_OVL_INUSE;
	spin_unlock(&inode->i_lock);
}

/* Neither directory may lie inside the other, nor inside or around a layer. */
static int lfs_check_upper_overlaps(struct fs_context *fc, struct lfs_sb *sbi,
				    const struct lfs_config *cfg)
{
	struct dentry *upper = cfg->upper.dentry, *work = cfg->work.dentry;
	unsigned int i;

	if (upper == work)
		return lfs_inval(fc, "upperdir and workdir are the same directory");
	if (is_subdir(work, upper) || is_subdir(upper, work))
		return lfs_inval(fc, "upperdir and workdir must not be inside one another");
	for (i = 0; i < lfs_nr_all_layers(sbi); i++) {
		struct dentry *root = sbi->layers[i].root;

		if (root->d_sb != upper->d_sb)
			continue;
		if (is_subdir(upper, root) || is_subdir(root, upper) ||
		    is_subdir(work, root) || is_subdir(root, work)) {
			lfs_err(fc, "upperdir or workdir overlaps %s \"%s\"",
				lfs_layer_kind(&sbi->layers[i]),
				sbi->layers[i].name);
			return -ELOOP;
		}
	}
	return 0;
}

static int lfs_check_upper_fs(struct fs_context *fc, const struct lfs_config *cfg)
{
	struct super_block *usb = cfg->upper.dentry->d_sb;

	if (cfg->upper.mnt != cfg->work.mnt)
		return lfs_inval(fc, "upperdir and workdir must be on the same mount");
	if (usb->s_stack_depth)
		return lfs_inval(fc, "upperdir: stacking filesystem %s cannot be upper",
				 usb->s_type->name);
	if (__mnt_is_readonly(cfg->upper.mnt)) {
		lfs_err(fc, "upperdir \"%s\": read-only filesystem", cfg->upper_name);
		return -EROFS;
	}
	return 0;
}

/*
 * The mounter (current, at fill_super) must be able to make and remove
 * names in the upper and work directories, checked through the mount
 * they were given on, before either is marked in use or anything is made
 * in them: a mount that could not write there would fail later, after
 * work/ was made, and leave it behind.
 */
static int lfs_check_upper_access(struct fs_context *fc, const char *key,
				  const struct path *dir, const char *name)
{
	int err;

	err = inode_permission(mnt_user_ns(dir->mnt), d_inode(dir->dentry),
			       MAY_WRITE | MAY_EXEC);
	if (err)
		lfs_err(fc, "%s \"%s\": the mounter may not write there (%d)",
			key, name, err);
	return err;
}

/*
 * The upper root and the work directories join the traps (struct
 * lfs_sb): the mounter may move any of them into a layer it owns, and
 * the upper root into the upper layer itself.
 */
static void lfs_upper_traps(struct lfs_sb *sbi)
{
	struct dentry *dirs[LFS_NR_UPPER_TRAPS] = {
		sbi->upper->root, sbi->workdir, sbi->work, sbi->index,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(dirs); i++)
		if (dirs[i])
			lfs_ptrset_add(&sbi->traps, d_inode(dirs[i]));
}

/**
 * lfs_upper_build - take the upper and work directories
 * @fc: the mount context, whose upper and work paths are consumed
 * @sbi: the superblock info, with its lower layers built
 *
 * Return: 0 (also when there is no upper layer), or -errno after logging
 * why; partial state is released by lfs_upper_free().
 */
int lfs_upper_build(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct lfs_config *cfg = fc->fs_private;
	struct vfsmount *mnt;
	bool whole;
	int err;

	if (!cfg->upper.mnt && !cfg->work.mnt)
		return 0;
	if (!cfg->upper.mnt)
		return lfs_inval(fc, "workdir= needs upperdir=");
	if (!cfg->work.mnt)
		return lfs_inval(fc, "upperdir= needs workdir=");
	err = lfs_check_upper_fs(fc, cfg);
	if (err)
		return err;
	err = lfs_check_upper_overlaps(fc, sbi, cfg);
	if (err)
		return err;
	err = lfs_check_upper_access(fc, "upperdir", &cfg->upper, cfg->upper_name);
	if (!err)
		err = lfs_check_upper_access(fc, "workdir", &cfg->work, cfg->work_name);
	if (err)
		return err;

	if (!lfs_inuse_trylock(cfg->upper.dentry)) {
		lfs_err(fc, "upperdir \"%s\" is in use by another mount",
			cfg->upper_name);
		return -EBUSY;
	}
	sbi->upper_layer.root = dget(cfg->upper.dentry);
	if (!lfs_inuse_trylock(cfg->work.dentry)) {
		lfs_err(fc, "workdir \"%s\" is in use by another mount",
			cfg->work_name);
		return -EBUSY;
	}
	sbi->workdir = dget(cfg->work.dentry);

	/* workdir is on the same mount: reached through this clone too */
	mnt = lfs_clone_mount(&cfg->upper, &whole);
	if (IS_ERR(mnt)) {
		lfs_err(fc, "upperdir \"%s\": cannot clone its mount or its directory (%ld)",
			cfg->upper_name, PTR_ERR(mnt));
		return PTR_ERR(mnt);
	}
	/* atime follows the layerfs mount's rules alone (lfs_update_time()) */
	mnt->mnt_flags &= ~(MNT_NOATIME | MNT_NODIRATIME | MNT_RELATIME);
	sbi->upper_layer.mnt = mnt;
	sbi->upper_layer.name = cfg->upper_name;
	cfg->upper_name = NULL;
	sbi->work_name = cfg->work_name;
	cfg->work_name = NULL;
	sbi->upper = &sbi->upper_layer;

	err = lfs_work_prepare(fc, sbi);
	if (err)
		return err;
	lfs_upper_traps(sbi);
	return 0;
}

void lfs_upper_free(struct lfs_sb *sbi)
{
	struct lfs_layer *upper = &sbi->upper_layer;

	dput(sbi->index);
	dput(sbi->work);
	if (sbi->workdir) {
		lfs_inuse_unlock(sbi->workdir);
		dput(sbi->workdir);
	}
	if (upper->root) {
		lfs_inuse_unlock(upper->root);
		dput(upper->root);
	}
	if (upper->mnt)
		kern_unmount(upper->mnt);
	kfree(upper->name);
	kfree(sbi->work_name);
	sbi->upper = NULL;
}
