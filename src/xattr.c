// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: extended attributes and POSIX ACLs, read from the top-most
 * real object.  The names under LFS_XATTR_PREFIX are layerfs's own
 * markers: hidden from getxattr and listxattr.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/xattr.h>
#include <linux/posix_acl.h>
#include <linux/slab.h>
#include "layerfs.h"

/**
 * lfs_is_private_xattr - is @name one of layerfs's markers?
 * @name: a full xattr name
 */
bool lfs_is_private_xattr(const char *name)
{
	return !strncmp(name, LFS_XATTR_PREFIX, sizeof(LFS_XATTR_PREFIX) - 1);
}

static int lfs_xattr_get(const struct xattr_handler *handler,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, void *buffer, size_t size)
{
	const struct cred *old_cred;
	struct path real;
	int ret;

	if (lfs_is_private_xattr(name))
		return -ENODATA;

	lfs_top_path(dentry, &real);
	old_cred = lfs_override_creds(dentry->d_sb);
	ret = vfs_getxattr(mnt_user_ns(real.mnt), real.dentry, name, buffer, size);
	revert_creds(old_cred);
	return ret;
}

/* Setting or removing (@value NULL) an xattr copies the object up first. */
static int lfs_xattr_set(const struct xattr_handler *handler,
			 struct user_namespace *mnt_userns,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, const void *value, size_t size,
			 int flags)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	const struct cred *old_cred;
	struct dentry *upper;
	int err;

	if (lfs_is_private_xattr(name))
		return -EPERM;
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up(dentry);
	if (err)
		goto out_drop;
	upper = lfs_upper(dentry);
	old_cred = lfs_override_creds(dentry->d_sb);
	if (value)
		err = vfs_setxattr(mnt_user_ns(sbi->upper->mnt), upper, name,
				   value, size, flags);
	else
		err = vfs_removexattr(mnt_user_ns(sbi->upper->mnt), upper, name);
	revert_creds(old_cred);

	/* ACLs and capabilities may have changed the mode */
	lfs_copy_attr(inode, d_inode(upper));
	forget_all_cached_acls(inode);
out_drop:
	lfs_drop_write(dentry);
	return err;
}

/* Every name, passed through to the real object. */
static const struct xattr_handler lfs_xattr_handler = {
	.prefix	= "",
	.get	= lfs_xattr_get,
	.set	= lfs_xattr_set,
};

const struct xattr_handler *lfs_xattr_handlers[] = {
	&lfs_xattr_handler,
	NULL
};

/* Remove the private names from a listxattr buffer; returns the new length. */
static ssize_t lfs_filter_xattr_list(char *list, ssize_t len)
{
	char *in = list, *out = list;

	while (in < list + len) {
		size_t n = strnlen(in, list + len - in) + 1;

		if (!lfs_is_private_xattr(in)) {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	return out - list;
}

ssize_t lfs_listxattr(struct dentry *dentry, char *list, size_t size)
{
	struct dentry *real = lfs_top_dentry(dentry);
	const struct cred *old_cred;
	ssize_t len;

	old_cred = lfs_override_creds(dentry->d_sb);
	len = vfs_listxattr(real, list, size);
	revert_creds(old_cred);
	/* with no buffer, the real length is an upper bound: good enough */
	if (len <= 0 || !size)
		return len;
	return lfs_filter_xattr_list(list, len);
}

struct posix_acl *lfs_get_acl(struct inode *inode, int type, bool rcu)
{
	struct inode *real = lfs_real_inode(inode);
	const struct cred *old_cred;
	struct posix_acl *acl;

	if (!IS_POSIXACL(real))
		return NULL;
	if (rcu)
		return get_cached_acl_rcu(real, type);

	old_cred = lfs_override_creds(inode->i_sb);
	acl = get_acl(real, type);
	revert_creds(old_cred);
	return acl;
}
