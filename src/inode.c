// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: inodes, getattr, permission, symlinks.
 *
 * A layerfs inode mirrors the top-most real object behind it.  Non-
 * directories are hashed by their real inode, so hard links in a layer
 * stay one inode here; directories are not shared, since what a merged
 * directory holds depends on where it stands.
 *
 * Inode numbers: the real inode number of the top-most object, with the
 * index of its filesystem in the top bits when the layers span several
 * filesystems (see lfs_ino()).  readdir reports the same numbers.
 *
 * Permission model: the caller is checked against the layerfs inode (the
 * real object's owner, mode and ACLs), and the mounter against the real
 * inode, whose access then happens with the mounter's credentials.
 * Nobody gets through layerfs what the real object would refuse them.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/posix_acl.h>
#include <linux/xattr.h>
#include "layerfs.h"

static struct lock_class_key lfs_i_mutex_key[FILESYSTEM_MAX_STACK_DEPTH];
static struct lock_class_key lfs_i_mutex_dir_key[FILESYSTEM_MAX_STACK_DEPTH];

/*
 * A layerfs inode's i_rwsem is taken above the real inode's, which may be
 * a layerfs inode of the mount below: give each stacking depth its own
 * lockdep class.
 */
static void lfs_lockdep_annotate(struct inode *inode)
{
	int depth = inode->i_sb->s_stack_depth - 1;

	if (WARN_ON_ONCE(depth < 0 || depth >= FILESYSTEM_MAX_STACK_DEPTH))
		depth = 0;
	if (S_ISDIR(inode->i_mode))
		lockdep_set_class(&inode->i_rwsem, &lfs_i_mutex_dir_key[depth]);
	else
		lockdep_set_class(&inode->i_rwsem, &lfs_i_mutex_key[depth]);
}

/* Copy what stat and permission checks read from the real inode. */
static void lfs_copy_attr(struct inode *inode, const struct inode *real)
{
	inode->i_uid = real->i_uid;
	inode->i_gid = real->i_gid;
	inode->i_mode = real->i_mode;
	inode->i_atime = real->i_atime;
	inode->i_mtime = real->i_mtime;
	inode->i_ctime = real->i_ctime;
	i_size_write(inode, i_size_read(real));
}

static const struct address_space_operations lfs_aops = {
	/* lets O_DIRECT opens through; the real file does the I/O */
	.direct_IO	= noop_direct_IO,
};

static void lfs_inode_init(struct inode *inode, struct lfs_entry *e)
{
	struct lfs_inode *li = LFS_I(inode);
	struct inode *real = d_inode(e->real[0].dentry);

	li->real = real;
	ihold(real);
	li->layer = e->real[0].layer;
	inode->i_ino = lfs_ino(LFS_SB(inode->i_sb), li->layer, real->i_ino);
	lfs_copy_attr(inode, real);
	set_nlink(inode, real->i_nlink);
	inode->i_flags |= S_NOATIME | S_NOCMTIME;

	switch (real->i_mode & S_IFMT) {
	case S_IFDIR:
		inode->i_op = &lfs_dir_inode_operations;
		inode->i_fop = &lfs_dir_operations;
		break;
	case S_IFREG:
		inode->i_op = &lfs_file_inode_operations;
		inode->i_fop = &lfs_file_operations;
		inode->i_mapping->a_ops = &lfs_aops;
		break;
	case S_IFLNK:
		inode->i_op = &lfs_symlink_inode_operations;
		break;
	default:
		inode->i_op = &lfs_special_inode_operations;
		init_special_inode(inode, real->i_mode, real->i_rdev);
		break;
	}
	lfs_lockdep_annotate(inode);
}

static int lfs_inode_test(struct inode *inode, void *data)
{
	return LFS_I(inode)->real == data;
}

static int lfs_inode_set(struct inode *inode, void *data)
{
	/* lfs_inode_init() fills in the rest once the inode is hashed */
	LFS_I(inode)->real = data;
	return 0;
}

/**
 * lfs_get_inode - the layerfs inode for an entry's top-most real object
 * @sb: the layerfs superblock
 * @e: the entry, with at least one real object
 *
 * Return: a referenced inode, or an ERR_PTR.
 */
struct inode *lfs_get_inode(struct super_block *sb, struct lfs_entry *e)
{
	struct inode *real = d_inode(e->real[0].dentry);
	struct inode *inode;

	if (S_ISDIR(real->i_mode)) {
		inode = new_inode(sb);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		lfs_inode_init(inode, e);
		return inode;
	}

	inode = iget5_locked(sb, (unsigned long)real, lfs_inode_test,
			     lfs_inode_set, real);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (inode->i_state & I_NEW) {
		lfs_inode_init(inode, e);
		unlock_new_inode(inode);
	}
	return inode;
}

void lfs_evict_inode(struct inode *inode)
{
	struct lfs_inode *li = LFS_I(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	iput(li->real);
	li->real = NULL;
}

static int lfs_getattr(struct user_namespace *mnt_userns,
		       const struct path *path, struct kstat *stat,
		       u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	struct path realpath;
	int err;

	lfs_top_path(dentry, &realpath);
	old_cred = lfs_override_creds(inode->i_sb);
	err = vfs_getattr(&realpath, stat, request_mask, flags);
	revert_creds(old_cred);
	if (err)
		return err;

	stat->dev = inode->i_sb->s_dev;
	stat->ino = inode->i_ino;
	/* a merged directory's link count means nothing: say "unknown" */
	if (S_ISDIR(inode->i_mode) && LFS_E(dentry)->nr > 1)
		stat->nlink = 1;
	return 0;
}

static int lfs_permission(struct user_namespace *mnt_userns,
			  struct inode *inode, int mask)
{
	struct lfs_inode *li = LFS_I(inode);
	struct inode *real = li->real;
	const struct cred *old_cred;
	int err;

	if (!real)
		return -ECHILD;

	/* the caller, against what layerfs shows */
	err = generic_permission(&init_user_ns, inode, mask);
	if (err)
		return err;

	/* the mounter, against the real object; lower objects are never written */
	old_cred = lfs_override_creds(inode->i_sb);
	err = inode_permission(mnt_user_ns(li->layer->mnt), real,
			       mask & ~(MAY_WRITE | MAY_APPEND));
	revert_creds(old_cred);
	return err;
}

static const char *lfs_get_link(struct dentry *dentry, struct inode *inode,
				struct delayed_call *done)
{
	const struct cred *old_cred;
	const char *link;

	if (!dentry)
		return ERR_PTR(-ECHILD);

	old_cred = lfs_override_creds(inode->i_sb);
	link = vfs_get_link(lfs_top_dentry(dentry), done);
	revert_creds(old_cred);
	return link;
}

const struct inode_operations lfs_dir_inode_operations = {
	.lookup		= lfs_lookup,
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
};

const struct inode_operations lfs_file_inode_operations = {
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
};

const struct inode_operations lfs_symlink_inode_operations = {
	.get_link	= lfs_get_link,
	.getattr	= lfs_getattr,
	.listxattr	= lfs_listxattr,
};

const struct inode_operations lfs_special_inode_operations = {
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
};
