/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layerfs: a stack of read-only lower directories under an optional
 * writable upper directory, presented as one tree.
 *
 * Lock order, outermost first (the one place it is written down):
 *   layerfs directory i_rwsem (taken by the VFS)
 *     lfs_inode.lock
 *       real directory i_rwsem (taken by lookup_one_unlocked() and friends)
 * No layerfs lock is ever taken while a real inode's lock is held.
 */
#ifndef _LAYERFS_H
#define _LAYERFS_H

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/cred.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include "uapi/layerfs.h"

#define LFS_SUPER_MAGIC		0x6c617966	/* "layf" */

/*
 * One lower layer: a directory on some filesystem, reached through a
 * private read-only clone of the mount it lives on.  Immutable after
 * fill_super.
 */
struct lfs_layer {
	struct vfsmount *mnt;		/* private clone, shared by layers on one mount */
	struct dentry *root;		/* the layer's directory */
	unsigned int idx;		/* position in the stack, 0 = top */
	unsigned int fsid;		/* index of the layer's filesystem, for st_ino */
	char *name;			/* absolute path given at mount, for messages */
};

/* Mount configuration collected by the fs_context before fill_super. */
struct lfs_config {
	struct path *lower;		/* resolved lower paths, top first */
	char **lower_name;		/* their absolute names */
	unsigned int nr_lower;		/* entries used */
	unsigned int cap_lower;		/* entries allocated */
	bool lower_appended;		/* "lowerdir+" was used */
	bool lower_listed;		/* "lowerdir" was used */
};

/* Per-superblock state.  Immutable after fill_super. */
struct lfs_sb {
	struct lfs_layer *layers;	/* lower layers, top first */
	unsigned int nr_layers;		/* number of lower layers */
	struct vfsmount **mnts;		/* distinct private clones */
	unsigned int nr_mnts;		/* number of distinct clones */
	unsigned int nr_fsid;		/* distinct filesystems under the layers */
	unsigned int xino_shift;	/* st_ino = real ino | fsid << xino_shift */
	const struct cred *creator_cred; /* the mounter's credentials */
};

/* One real object behind a layerfs dentry: a dentry in a layer. */
struct lfs_real {
	struct dentry *dentry;		/* the real dentry (a reference) */
	struct lfs_layer *layer;	/* the layer it lives in */
	unsigned int flags;		/* LFS_REAL_* */
};

/* a directory whose zero-size regular files may be whiteouts */
#define LFS_REAL_XWHITEOUTS	0x1

/*
 * What a layerfs dentry stands for: its real objects, top first.  A
 * non-directory has exactly one; a merged directory has one for each
 * layer that holds it, down to the first opaque one.  Immutable once the
 * dentry is instantiated; freed with the dentry.
 */
struct lfs_entry {
	unsigned int nr;		/* number of real objects */
	struct lfs_real real[];		/* top first */
};

/* Per-inode state. */
struct lfs_inode {
	struct inode *real;		/* top-most real inode (a reference) */
	struct lfs_layer *layer;	/* the layer @real lives in */
	struct inode vfs_inode;
};

static inline struct lfs_sb *LFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct lfs_inode *LFS_I(const struct inode *inode)
{
	return container_of(inode, struct lfs_inode, vfs_inode);
}

static inline struct lfs_entry *LFS_E(const struct dentry *dentry)
{
	return dentry->d_fsdata;
}

/* the top-most real dentry of a positive layerfs dentry */
static inline struct dentry *lfs_top_dentry(const struct dentry *dentry)
{
	return LFS_E(dentry)->real[0].dentry;
}

static inline void lfs_top_path(const struct dentry *dentry, struct path *path)
{
	const struct lfs_real *r = &LFS_E(dentry)->real[0];

	path->mnt = r->layer->mnt;
	path->dentry = r->dentry;
}

/* super.c */
extern const struct dentry_operations lfs_dentry_operations;

/* layer.c */
int lfs_config_add_lower(struct fs_context *fc, const char *name);
void lfs_config_free(struct lfs_config *cfg);
int lfs_layers_build(struct fs_context *fc, struct lfs_sb *sbi);
void lfs_layers_free(struct lfs_sb *sbi);

/* namei.c */
struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags);
bool lfs_is_whiteout(const struct lfs_layer *layer, struct dentry *real,
		     unsigned int parent_flags);
int lfs_dir_marker(const struct lfs_layer *layer, struct dentry *real,
		   unsigned int *flags);

/* inode.c */
extern const struct inode_operations lfs_file_inode_operations;
extern const struct inode_operations lfs_symlink_inode_operations;
extern const struct inode_operations lfs_special_inode_operations;
extern const struct inode_operations lfs_dir_inode_operations;
struct inode *lfs_alloc_inode(struct super_block *sb);
void lfs_free_inode(struct inode *inode);
void lfs_evict_inode(struct inode *inode);
struct inode *lfs_get_inode(struct super_block *sb, struct lfs_entry *e);
u64 lfs_ino(const struct lfs_sb *sbi, const struct lfs_layer *layer,
	    u64 real_ino);

/* readdir.c */
extern const struct file_operations lfs_dir_operations;

/* file.c */
extern const struct file_operations lfs_file_operations;

/* xattr.c */
extern const struct xattr_handler *lfs_xattr_handlers[];
ssize_t lfs_listxattr(struct dentry *dentry, char *list, size_t size);
struct posix_acl *lfs_get_acl(struct inode *inode, int type, bool rcu);
bool lfs_is_private_xattr(const char *name);

/* util.c */
__printf(2, 3) void lfs_err(struct fs_context *fc, const char *fmt, ...);
/* lfs_err() for an invalid configuration; evaluates to -EINVAL */
#define lfs_inval(fc, fmt, ...)	({ lfs_err(fc, fmt, ##__VA_ARGS__); -EINVAL; })
const struct cred *lfs_override_creds(struct super_block *sb);
struct lfs_entry *lfs_entry_alloc(unsigned int nr);
void lfs_entry_free(struct lfs_entry *e);
int lfs_real_getxattr(const struct lfs_layer *layer, struct dentry *real,
		      const char *name, char *buf, size_t size);

#endif /* _LAYERFS_H */
