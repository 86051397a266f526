// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: extended attributes and POSIX ACLs.
 *
 * Reads come from the top-most real object, writes go to its upper copy
 * (made first); both run with the mounter's credentials.  The caller is
 * checked before, on the layerfs inode with the caller's credentials:
 *
 *  - by the VFS for every name (xattr_permission(): write access for
 *    user.*, CAP_SYS_ADMIN for trusted.*, no change to an append-only or
 *    immutable inode) and by the security hooks (CAP_SYS_ADMIN for
 *    security.*, CAP_SETFCAP for security.capability);
 *  - here for the other system.* names, which the VFS leaves to the
 *    filesystem: the owner (or CAP_FOWNER) only, before any copy-up;
 *  - here for the POSIX ACLs, whose rules the VFS leaves to the
 *    filesystem: only the owner (or CAP_FOWNER) sets them, a default ACL
 *    only on a directory, and setting an access ACL drops S_ISGID when
 *    the caller could not have set it, which the real filesystem, acting
 *    for the mounter, would not do.
 *
 * The names under the mount's marker prefix (lfs_xattr_ns(): trusted.overlay.,
 * or user.overlay. with userxattr) are layerfs's own markers: hidden
 * from getxattr and listxattr, refused to setxattr.  Names under the
 * other prefix are data like any other.  listxattr leaves out the other
 * trusted.* names for callers who could not read them.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/xattr.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include "layerfs.h"

/* the default namespace, and userxattr's; by enum lfs_xattr */
static const struct lfs_xattr_ns lfs_xattr_trusted = {
	.prefix		= LFS_XATTR_PREFIX,
	.prefix_len	= sizeof(LFS_XATTR_PREFIX) - 1,
	.name		= {
		[LFS_XA_WHITEOUT] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_WHITEOUT,
		[LFS_XA_OPAQUE] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_OPAQUE,
		[LFS_XA_REDIRECT] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_REDIRECT,
		[LFS_XA_ORIGIN] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_ORIGIN,
		[LFS_XA_LOWER_LINKS] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_LOWER_LINKS,
		[LFS_XA_PROTATTR] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_PROTATTR,
		[LFS_XA_INDEX_UPPER] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_INDEX_UPPER,
		[LFS_XA_PROBE] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_PROBE,
		[LFS_XA_METACOPY] = LFS_XATTR_PREFIX LFS_XATTR_SUFFIX_METACOPY,
	},
};

static const struct lfs_xattr_ns lfs_xattr_user = {
	.prefix		= LFS_XATTR_USER_PREFIX,
	.prefix_len	= sizeof(LFS_XATTR_USER_PREFIX) - 1,
	.name		= {
		[LFS_XA_WHITEOUT] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_WHITEOUT,
		[LFS_XA_OPAQUE] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_OPAQUE,
		[LFS_XA_REDIRECT] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_REDIRECT,
		[LFS_XA_ORIGIN] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_ORIGIN,
		[LFS_XA_LOWER_LINKS] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_LOWER_LINKS,
		[LFS_XA_PROTATTR] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_PROTATTR,
		[LFS_XA_INDEX_UPPER] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_INDEX_UPPER,
		[LFS_XA_PROBE] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_PROBE,
		[LFS_XA_METACOPY] = LFS_XATTR_USER_PREFIX LFS_XATTR_SUFFIX_METACOPY,
	},
};

/**
 * lfs_xattr_ns - the markers' names for a mount
 * @userxattr: the mount has the userxattr option
 *
 * Return: the table lfs_xattr_name() reads, kept in lfs_sb.xattr.
 */
const struct lfs_xattr_ns *lfs_xattr_ns(bool userxattr)
{
	/* uapi spells the trusted names out for the tools: the same names */
	BUILD_BUG_ON(strcmp(LFS_XATTR_WHITEOUT, lfs_xattr_trusted.name[LFS_XA_WHITEOUT]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_OPAQUE, lfs_xattr_trusted.name[LFS_XA_OPAQUE]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_REDIRECT, lfs_xattr_trusted.name[LFS_XA_REDIRECT]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_ORIGIN, lfs_xattr_trusted.name[LFS_XA_ORIGIN]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_LOWER_LINKS,
			    lfs_xattr_trusted.name[LFS_XA_LOWER_LINKS]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_PROTATTR, lfs_xattr_trusted.name[LFS_XA_PROTATTR]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_INDEX_UPPER,
			    lfs_xattr_trusted.name[LFS_XA_INDEX_UPPER]));
	BUILD_BUG_ON(strcmp(LFS_XATTR_METACOPY, lfs_xattr_trusted.name[LFS_XA_METACOPY]));
	return userxattr ? &lfs_xattr_user : &lfs_xattr_trusted;
}

/**
 * lfs_is_private_xattr - is @name one of this mount's markers?
 * @sbi: the superblock info
 * @name: a full xattr name
 */
bool lfs_is_private_xattr(const struct lfs_sb *sbi, const char *name)
{
	return !strncmp(name, sbi->xattr->prefix, sbi->xattr->prefix_len);
}

/* Read @name of the top-most real object, as the mounter. */
static int lfs_real_xattr_get(struct dentry *dentry, const char *name,
			      void *buffer, size_t size)
{
	const struct cred *old_cred;
	struct path real;
	int ret;

	lfs_top_path(dentry, &real);
	old_cred = lfs_override_creds(dentry->d_sb);
	ret = vfs_getxattr(mnt_user_ns(real.mnt), real.dentry, name, buffer,
			   size);
	revert_creds(old_cred);
	return ret;
}

/* As the mounter: drop S_ISGID of an upper object. */
static int lfs_upper_kill_sgid(struct lfs_sb *sbi, struct dentry *upper)
{
	struct iattr attr = { .ia_valid = ATTR_KILL_SGID };
	int err;

	inode_lock(d_inode(upper));
	err = notify_change(mnt_user_ns(sbi->upper->mnt), upper, &attr, NULL);
	inode_unlock(d_inode(upper));
	return err;
}

/*
 * Set, or remove (@value NULL), @name on the upper copy of @dentry, made
 * first; with @kill_sgid, drop S_ISGID before.  Runs as the mounter: the
 * caller was checked on the layerfs inode.  Caller holds the layerfs
 * inode's i_rwsem (vfs_setxattr(), vfs_removexattr()).
 */
static int lfs_xattr_change(struct dentry *dentry, struct inode *inode,
			    const char *name, const void *value, size_t size,
			    int flags, bool kill_sgid)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct user_namespace *userns;
	const struct cred *old_cred;
	struct dentry *upper;
	int err;

	lockdep_assert_held(&inode->i_rwsem);
	err = lfs_want_write(dentry);
	if (err)
		return err;

	/*
	 * Removing what the lower object does not have changes nothing:
	 * no copy-up, and ENODATA (for an ACL too, as the kernel's overlay
	 * answers, though ext4 and tmpfs remove a missing ACL without a
	 * word).
	 */
	if (!value && !lfs_i_upper(inode)) {
		err = lfs_real_xattr_get(dentry, name, NULL, 0);
		if (err < 0)
			goto out_drop;
	}

	err = lfs_copy_up_flags(dentry, LFS_CU_METADATA);
	if (err)
		goto out_drop;
	upper = lfs_upper(dentry);
	userns = mnt_user_ns(sbi->upper->mnt);
	old_cred = lfs_override_creds(dentry->d_sb);
	if (kill_sgid)
		err = lfs_upper_kill_sgid(sbi, upper);
	if (!err && value)
		err = vfs_setxattr(userns, upper, name, value, size, flags);
	else if (!err)
		err = vfs_removexattr(userns, upper, name);
	revert_creds(old_cred);

	/* ACLs and capabilities may have changed the mode and ctime */
	lfs_copy_attr(inode, d_inode(upper));
	forget_all_cached_acls(inode);
out_drop:
	lfs_drop_write(dentry);
	return err;
}

/*
 * The markers are layerfs's own, never the caller's: not supported
 * through the mount, to read, set or remove, as on the kernel's overlay
 * (scripts tell a marker-keeping filesystem by that errno).
 */
static int lfs_xattr_get(const struct xattr_handler *handler,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, void *buffer, size_t size)
{
	if (lfs_is_private_xattr(LFS_SB(dentry->d_sb), name))
		return -EOPNOTSUPP;
	return lfs_real_xattr_get(dentry, name, buffer, size);
}

/* The VFS and the security hooks have checked the caller for @name. */
static int lfs_xattr_set(const struct xattr_handler *handler,
			 struct user_namespace *mnt_userns,
			 struct dentry *dentry, struct inode *inode,
			 const char *name, const void *value, size_t size,
			 int flags)
{
	if (lfs_is_private_xattr(LFS_SB(dentry->d_sb), name))
		return -EOPNOTSUPP;
	/*
	 * The VFS checks nothing for system.* names but the ACLs', which
	 * have handlers of their own: the real filesystem checks the
	 * mounter.  Only the owner may ask, before anything is copied up.
	 */
	if (!strncmp(name, XATTR_SYSTEM_PREFIX, XATTR_SYSTEM_PREFIX_LEN) &&
	    !inode_owner_or_capable(mnt_userns, inode))
		return -EPERM;
	return lfs_xattr_change(dentry, inode, name, value, size, flags,
				false);
}

static int lfs_acl_xattr_get(const struct xattr_handler *handler,
			     struct dentry *dentry, struct inode *inode,
			     const char *name, void *buffer, size_t size)
{
	return lfs_real_xattr_get(dentry, handler->name, buffer, size);
}

/*
 * Can the upper layer hold POSIX ACLs for @inode?  The mount has an
 * upper layer (the VFS refused the write to a read-only mount).
 */
static bool lfs_upper_has_acls(struct inode *inode)
{
	struct lfs_sb *sbi = LFS_SB(inode->i_sb);
	struct dentry *upper = lfs_i_upper(inode);

	if (!sbi->upper || !IS_POSIXACL(d_inode(sbi->upper->root)))
		return false;
	return !upper || d_inode(upper)->i_op->set_acl;
}

/*
 * An ACL set through an idmapped layerfs mount names its ids in the
 * mount's view; the upper object takes them in the filesystem's view,
 * the one @acl holds (vfs_set_acl_prepare()).  Return: the value to
 * store, @value itself or a buffer for the caller to kfree(), or an
 * ERR_PTR.
 */
static const void *lfs_acl_value_to_fs(struct user_namespace *mnt_userns,
				       struct inode *inode,
				       const struct posix_acl *acl,
				       const void *value, size_t *size)
{
	void *buf;
	int err;

	if (!acl || no_idmapping(mnt_userns, i_user_ns(inode)))
		return value;
	*size = posix_acl_xattr_size(acl->a_count);
	buf = kmalloc(*size, GFP_KERNEL);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	err = posix_acl_to_xattr(&init_user_ns, acl, buf, *size);
	if (err < 0) {
		kfree(buf);
		return ERR_PTR(err);
	}
	return buf;
}

/*
 * Set or remove an ACL: the caller is checked here, with the caller's
 * credentials on the layerfs inode through the mount's idmapping, as
 * set_posix_acl() checks on a plain filesystem; the ACL is parsed and
 * checked before any copy-up.
 */
static int lfs_acl_xattr_set(const struct xattr_handler *handler,
			     struct user_namespace *mnt_userns,
			     struct dentry *dentry, struct inode *inode,
			     const char *name, const void *value, size_t size,
			     int flags)
{
	struct posix_acl *acl = NULL;
	int type = handler->flags;
	const void *fs_value;
	bool kill_sgid;
	int err;

	if (!IS_ENABLED(CONFIG_FS_POSIX_ACL) || S_ISLNK(inode->i_mode))
		return -EOPNOTSUPP;
	if (value) {
		acl = vfs_set_acl_prepare(mnt_userns, i_user_ns(inode), value,
					  size);
		if (IS_ERR(acl))
			return PTR_ERR(acl);
	}

	err = -EOPNOTSUPP;
	if (!lfs_upper_has_acls(inode))
		goto out_release;
	if (type == ACL_TYPE_DEFAULT && !S_ISDIR(inode->i_mode)) {
		err = acl ? -EACCES : 0;
		goto out_release;
	}
	err = -EPERM;
	if (!inode_owner_or_capable(mnt_userns, inode))
		goto out_release;
	/*
	 * Every id must map into the namespace that mounted us (unmapped
	 * ones came in as -1): the upper filesystem, acting for the
	 * mounter, would store what the mounter cannot name.
	 */
	if (acl) {
		err = posix_acl_valid(inode->i_sb->s_user_ns, acl);
		if (err)
			goto out_release;
	}

	/* what posix_acl_update_mode() would decide for the caller */
	kill_sgid = type == ACL_TYPE_ACCESS && acl &&
		    (inode->i_mode & S_ISGID) &&
		    !vfsgid_in_group_p(i_gid_into_vfsgid(mnt_userns, inode)) &&
		    !capable_wrt_inode_uidgid(mnt_userns, inode, CAP_FSETID);
	fs_value = lfs_acl_value_to_fs(mnt_userns, inode, acl, value, &size);
	err = PTR_ERR_OR_ZERO(fs_value);
	if (err)
		goto out_release;
	err = lfs_xattr_change(dentry, inode, handler->name, fs_value, size,
			       flags, kill_sgid);
	if (fs_value != value)
		kfree(fs_value);
out_release:
	posix_acl_release(acl);
	return err;
}

static const struct xattr_handler lfs_acl_access_xattr_handler = {
	.name	= XATTR_NAME_POSIX_ACL_ACCESS,
	.flags	= ACL_TYPE_ACCESS,
	.get	= lfs_acl_xattr_get,
	.set	= lfs_acl_xattr_set,
};

static const struct xattr_handler lfs_acl_default_xattr_handler = {
	.name	= XATTR_NAME_POSIX_ACL_DEFAULT,
	.flags	= ACL_TYPE_DEFAULT,
	.get	= lfs_acl_xattr_get,
	.set	= lfs_acl_xattr_set,
};

/* Every other name, passed through to the real object. */
static const struct xattr_handler lfs_xattr_handler = {
	.prefix	= "",
	.get	= lfs_xattr_get,
	.set	= lfs_xattr_set,
};

const struct xattr_handler *lfs_xattr_handlers[] = {
	&lfs_acl_access_xattr_handler,
	&lfs_acl_default_xattr_handler,
	&lfs_xattr_handler,
	NULL
};

/*
 * Remove from a listxattr buffer the mount's markers, and the trusted.*
 * names unless @trusted; returns the new length.
 */
static ssize_t lfs_filter_xattr_list(const struct lfs_sb *sbi, char *list,
				     ssize_t len, bool trusted)
{
	char *in = list, *out = list;

	while (in < list + len) {
		size_t n = strnlen(in, list + len - in) + 1;

		if (!lfs_is_private_xattr(sbi, in) &&
		    (trusted || strncmp(in, XATTR_TRUSTED_PREFIX,
					XATTR_TRUSTED_PREFIX_LEN))) {
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	return out - list;
}

/*
 * Lists the real object's names as the mounter, then leaves out what the
 * caller could not read: trusted.* without CAP_SYS_ADMIN, as
 * xattr_permission() decides for getxattr.
 */
ssize_t lfs_listxattr(struct dentry *dentry, char *list, size_t size)
{
	struct dentry *real = lfs_top_dentry(dentry);
	bool trusted = ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
	const struct cred *old_cred;
	ssize_t len;

	old_cred = lfs_override_creds(dentry->d_sb);
	len = vfs_listxattr(real, list, size);
	revert_creds(old_cred);
	/* with no buffer, the real length is an upper bound: good enough */
	if (len <= 0 || !size)
		return len;
	return lfs_filter_xattr_list(LFS_SB(dentry->d_sb), list, len, trusted);
}

/*
 * An ACL of a real object seen through an idmapped layer mount names its
 * users and groups as that mount shows them, as the object's owners do
 * (lfs_copy_attr()).  The real filesystem caches its ACL for everyone:
 * the mapped one is a copy.  Return: the copy (@acl released), or an
 * ERR_PTR.
 */
static struct posix_acl *lfs_acl_into_layer(struct user_namespace *userns,
					    const struct inode *real,
					    struct posix_acl *acl)
{
	struct user_namespace *fs_userns = i_user_ns(real);
	struct posix_acl *copy;
	unsigned int i;

	copy = posix_acl_clone(acl, GFP_KERNEL);
	posix_acl_release(acl);
	if (!copy)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < copy->a_count; i++) {
		struct posix_acl_entry *pe = &copy->a_entries[i];

		if (pe->e_tag == ACL_USER)
			pe->e_uid = vfsuid_into_kuid(make_vfsuid(userns, fs_userns,
								 pe->e_uid));
		else if (pe->e_tag == ACL_GROUP)
			pe->e_gid = vfsgid_into_kgid(make_vfsgid(userns, fs_userns,
								 pe->e_gid));
	}
	return copy;
}

struct posix_acl *lfs_get_acl(struct inode *inode, int type, bool rcu)
{
	struct inode *real = lfs_real_inode(inode);
	struct user_namespace *userns;
	const struct cred *old_cred;
	struct posix_acl *acl;

	if (!real)
		return rcu ? ERR_PTR(-ECHILD) : NULL;
	if (!IS_POSIXACL(real))
		return NULL;
	userns = lfs_real_userns(inode, real);
	if (rcu) {
		/* a mapped copy is made outside the RCU walk */
		if (userns != &init_user_ns)
			return ERR_PTR(-ECHILD);
		return get_cached_acl_rcu(real, type);
	}

	old_cred = lfs_override_creds(inode->i_sb);
	acl = get_acl(real, type);
	revert_creds(old_cred);
	if (userns == &init_user_ns || IS_ERR_OR_NULL(acl))
		return acl;
	return lfs_acl_into_layer(userns, real, acl);
}
