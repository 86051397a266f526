// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: ioctls (uapi/layerfs.h).
 *
 * LFS_IOC_LINK_UP on an open regular file, and LFS_IOC_LINK_UP_AT on an
 * open directory with a name in it, give a name of a lower object with
 * several links its own link to the copy that the hard-link index holds,
 * as a change through the name would.  layerfs-mount --commit calls them
 * on every name before the upper layer becomes a lower one.
 *
 * Both are only for CAP_SYS_ADMIN: they write to the upper layer (the
 * name's parents are copied up) for a caller who may only have read the
 * object.  A read-only mount, or a mount of read-only layers, gives
 * -EROFS whether or not the name needed anything: the layers under a
 * read-only mount are not written.  The link is made by lfs_copy_up(),
 * as the mounter, only when the object's inode already has a copy in the
 * index and the name has none of its own; so the mount shows no change
 * but what copying up the parents does (a merged directory's link count
 * and size).
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/namei.h>
#include <linux/uaccess.h>
#include "layerfs.h"

/*
 * Link up @dentry, a name on the mount whose write access the caller
 * holds.  Return: 1 if it was linked up, 0 if it needed nothing, or -errno.
 */
static int lfs_link_up_dentry(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	int err;

	if (!inode || d_is_dir(dentry) || lfs_upper(dentry) ||
	    !lfs_i_upper(inode) ||
	    !test_bit(LFS_I_INDEXED, &LFS_I(inode)->flags))
		return 0;
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up(dentry);
	lfs_drop_write(dentry);
	return err ? err : 1;
}

/* LFS_IOC_LINK_UP: the name the regular file was opened by */
static long lfs_ioc_link_up(struct file *file)
{
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	err = mnt_want_write_file(file);
	if (err)
		return err;
	err = lfs_link_up_dentry(file->f_path.dentry);
	mnt_drop_write_file(file);
	return err;
}

long lfs_file_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case LFS_IOC_LINK_UP:
		return lfs_ioc_link_up(file);
	}
	return -ENOIOCTLCMD;
}

/*
 * The name of an LFS_IOC_LINK_UP_AT request, copied in and checked: one
 * path component, not "." or "..".  Return: the name (kfree() it), or an
 * ERR_PTR.
 */
static char *lfs_link_up_at_name(const struct lfs_link_up_at *req)
{
	char *name;

	if (req->flags || req->reserved)
		return ERR_PTR(-EINVAL);
	if (!req->namelen)
		return ERR_PTR(-EINVAL);
	if (req->namelen > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	name = memdup_user_nul(u64_to_user_ptr(req->name), req->namelen);
	if (IS_ERR(name))
		return name;
	if (strlen(name) != req->namelen || strchr(name, '/') ||
	    !strcmp(name, ".") || !strcmp(name, "..")) {
		kfree(name);
		return ERR_PTR(-EINVAL);
	}
	return name;
}

/* LFS_IOC_LINK_UP_AT: a name in the open directory, of any type */
static long lfs_ioc_link_up_at(struct file *file, void __user *argp)
{
	struct lfs_link_up_at req;
	struct dentry *dentry;
	char *name;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, argp, sizeof(req)))
		return -EFAULT;
	name = lfs_link_up_at_name(&req);
	if (IS_ERR(name))
		return PTR_ERR(name);
	err = mnt_want_write_file(file);
	if (err)
		goto out_free;
	/* a lookup on our own directory, as the caller: no mount is crossed */
	dentry = lookup_one_unlocked(file_mnt_user_ns(file), name,
				     file->f_path.dentry, req.namelen);
	err = PTR_ERR_OR_ZERO(dentry);
	if (err)
		goto out_drop;
	err = d_is_negative(dentry) ? -ENOENT : lfs_link_up_dentry(dentry);
	dput(dentry);
out_drop:
	mnt_drop_write_file(file);
out_free:
	kfree(name);
	return err;
}

long lfs_dir_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case LFS_IOC_LINK_UP_AT:
		return lfs_ioc_link_up_at(file, (void __user *)arg);
	}
	return -ENOIOCTLCMD;
}
