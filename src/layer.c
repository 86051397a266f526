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
#include <linux/hash.h>
#include <linux/log2.h>
#include "layerfs.h"

static int lfs_config_grow(struct lfs_config *cfg)
{
	unsigned int cap = cfg->cap_lower ? 2 * cfg->cap_lower : 8;
	struct path *lower;
	char **names;

	cap = min_t(unsigned int, cap, LFS_MAX_LAYERS);
	lower = kvmalloc_array(cap, sizeof(*lower), GFP_KERNEL);
	names = kvmalloc_array(cap, sizeof(*names), GFP_KERNEL);
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

/* Things a layer cannot be: case-folding, automounts, and the like. */
static const char *lfs_unfit_layer(const struct path *path)
{
	const struct dentry *d = path->dentry;

	if (d->d_flags & (DCACHE_OP_HASH | DCACHE_OP_COMPARE))
		return "filesystem with case-insensitive or custom name matching";
	if (d->d_flags & (DCACHE_NEED_AUTOMOUNT | DCACHE_MANAGE_TRANSIT))
		return "automount point";
	return NULL;
}

/**
 * lfs_config_add_lower - resolve one lower layer and append it
 * @fc: the mount context
 * @name: the path, as given (relative paths resolve against the caller's
 *	cwd)
 *
 * Return: 0, or -errno with a message in the fs_context log.
 */
int lfs_config_add_lower(struct fs_context *fc, const char *name)
{
	struct lfs_config *cfg = fc->fs_private;
	struct path path;
	const char *unfit;
	char *buf, *abs;
	int err;

	if (cfg->nr_lower >= LFS_MAX_LAYERS)
		return lfs_inval(fc, "too many lower layers (at most %u)",
				 LFS_MAX_LAYERS);
	if (cfg->nr_lower == cfg->cap_lower) {
		err = lfs_config_grow(cfg);
		if (err)
			return err;
	}

	err = kern_path(name, LOOKUP_FOLLOW, &path);
	if (err) {
		lfs_err(fc, "lower layer \"%s\": cannot resolve (%d)", name, err);
		return err;
	}
	err = -ENOTDIR;
	if (!d_is_dir(path.dentry)) {
		lfs_err(fc, "lower layer \"%s\": not a directory", name);
		goto out_put;
	}
	err = -EINVAL;
	unfit = lfs_unfit_layer(&path);
	if (unfit) {
		lfs_err(fc, "lower layer \"%s\": %s cannot be a layer", name, unfit);
		goto out_put;
	}

	err = -ENOMEM;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		goto out_put;
	abs = d_path(&path, buf, PATH_MAX);
	if (IS_ERR(abs)) {
		err = PTR_ERR(abs);
		lfs_err(fc, "lower layer \"%s\": no absolute path (%d)", name, err);
		kfree(buf);
		goto out_put;
	}
	abs = kstrdup(abs, GFP_KERNEL);
	kfree(buf);
	if (!abs)
		goto out_put;

	cfg->lower[cfg->nr_lower] = path;
	cfg->lower_name[cfg->nr_lower] = abs;
	cfg->nr_lower++;
	return 0;

out_put:
	path_put(&path);
	return err;
}

void lfs_config_free(struct lfs_config *cfg)
{
	unsigned int i;

	for (i = 0; i < cfg->nr_lower; i++) {
		path_put(&cfg->lower[i]);
		kfree(cfg->lower_name[i]);
	}
	kvfree(cfg->lower);
	kvfree(cfg->lower_name);
	cfg->lower = NULL;
	cfg->lower_name = NULL;
	cfg->nr_lower = 0;
	cfg->cap_lower = 0;
}

/*
 * The private clone of @mnt, made on first use.  Layers on one mount share
 * a clone, so a 4096-layer image stored on one filesystem costs one clone.
 * The clone is rooted at the mount's root so that every layer's dentry
 * lies inside it.
 */
static struct vfsmount *lfs_layer_clone(struct fs_context *fc,
					struct lfs_sb *sbi,
					struct vfsmount **orig,
					const struct path *path,
					const char *name)
{
	struct path root = { .mnt = path->mnt, .dentry = path->mnt->mnt_root };
	struct vfsmount *clone;
	unsigned int i;

	for (i = 0; i < sbi->nr_mnts; i++)
		if (orig[i] == path->mnt)
			return sbi->mnts[i];

	clone = clone_private_mount(&root);
	if (IS_ERR(clone)) {
		lfs_err(fc, "lower layer \"%s\": cannot clone its mount (%ld)",
			name, PTR_ERR(clone));
		return clone;
	}
	/* lower layers are never written, nor their atimes updated */
	clone->mnt_flags |= MNT_READONLY | MNT_NOATIME;
	orig[sbi->nr_mnts] = path->mnt;
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

/* A set of layer root dentries, open addressing, for the overlap check. */
struct lfs_rootset {
	struct dentry **slot;
	unsigned int mask;
};

static struct dentry **lfs_rootset_find(struct lfs_rootset *set,
					const struct dentry *d)
{
	unsigned int i = hash_ptr(d, 32) & set->mask;

	while (set->slot[i] && set->slot[i] != d)
		i = (i + 1) & set->mask;
	return &set->slot[i];
}

/*
 * No layer may lie inside another (ELOOP): each layer's ancestors, up to
 * the root of its filesystem, must not be layers.  The same directory
 * given twice is not an overlap; it only repeats itself in the stack.
 * Submounts never matter: a private clone carries no submounts.
 */
static int lfs_check_overlaps(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct lfs_rootset set;
	unsigned int i, size;
	int err = 0;

	size = roundup_pow_of_two(2 * sbi->nr_layers);
	set.slot = kvcalloc(size, sizeof(*set.slot), GFP_KERNEL);
	if (!set.slot)
		return -ENOMEM;
	set.mask = size - 1;
	for (i = 0; i < sbi->nr_layers; i++)
		*lfs_rootset_find(&set, sbi->layers[i].root) = sbi->layers[i].root;

	for (i = 0; i < sbi->nr_layers && !err; i++) {
		struct dentry *d = dget(sbi->layers[i].root);

		while (!IS_ROOT(d)) {
			struct dentry *parent = dget_parent(d);

			dput(d);
			d = parent;
			if (*lfs_rootset_find(&set, d)) {
				unsigned int j;

				for (j = 0; sbi->layers[j].root != d; j++)
					;
				lfs_err(fc, "lower layer \"%s\" is inside lower layer \"%s\"",
					sbi->layers[i].name, sbi->layers[j].name);
				err = -ELOOP;
				break;
			}
		}
		dput(d);
	}
	kvfree(set.slot);
	return err;
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

	sbi->layers = kvcalloc(n, sizeof(*sbi->layers), GFP_KERNEL);
	sbi->mnts = kvcalloc(n, sizeof(*sbi->mnts), GFP_KERNEL);
	orig = kvcalloc(n, sizeof(*orig), GFP_KERNEL);
	fs = kvcalloc(n, sizeof(*fs), GFP_KERNEL);
	if (!sbi->layers || !sbi->mnts || !orig || !fs)
		goto out;

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
		layer->idx = i;
		layer->fsid = lfs_layer_fsid(fs, &sbi->nr_fsid, path->dentry->d_sb);
		/* the name moves from the config to the layer */
		layer->name = cfg->lower_name[i];
		cfg->lower_name[i] = NULL;
		sbi->nr_layers++;
	}

	/*
	 * Objects on different filesystems may share inode numbers; the
	 * filesystem's index goes in the top bits to keep st_ino unique.
	 */
	bits = sbi->nr_fsid > 1 ? ilog2(sbi->nr_fsid - 1) + 1 : 0;
	sbi->xino_shift = 64 - bits;

	err = lfs_check_overlaps(fc, sbi);
out:
	kvfree(orig);
	kvfree(fs);
	return err;
}

void lfs_layers_free(struct lfs_sb *sbi)
{
	unsigned int i;

	for (i = 0; i < sbi->nr_layers; i++) {
		dput(sbi->layers[i].root);
		kfree(sbi->layers[i].name);
	}
	if (sbi->nr_mnts)
		kern_unmount_array(sbi->mnts, sbi->nr_mnts);
	kvfree(sbi->layers);
	kvfree(sbi->mnts);
	sbi->layers = NULL;
	sbi->mnts = NULL;
	sbi->nr_layers = 0;
	sbi->nr_mnts = 0;
}
