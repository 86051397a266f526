// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: namespace operations: create, mkdir, mknod, symlink, link,
 * O_TMPFILE, unlink, rmdir, rename.
 *
 * Every change happens in the upper layer, after the parent directories
 * were copied up.  A name that a lower layer shows is hidden by a native
 * whiteout (a symlink to LFS_WHITEOUT_TARGET marked with the whiteout
 * xattr).  Objects that replace a whiteout, and directories that must be
 * opaque, are built in work/ and renamed into place, so that no moment
 * shows the lower object again or a half-made one.  A directory that has
 * lower parts and moves records where they are in a redirect xattr: the
 * absolute path, from the layerfs root, of the place it was first moved
 * from.
 *
 * With whiteout=chardev the whiteouts are character devices 0/0.  With
 * whiteout=aufs they are other names: ".wh.NAME" hides NAME, and an opaque
 * directory holds ".wh..wh..opq".  A removal then makes the whiteout
 * first and removes the upper object second; a creation makes the object
 * first and removes the whiteout second.  Between the two steps both
 * names exist, and NAME shows as it was before the first step or after
 * the second, since a whiteout only hides what is below its layer.  The
 * format cannot say where a moved directory's lower parts are, so such a
 * directory is not moved (EXDEV, as overlayfs without redirect_dir, and
 * as layerfs with redirect_dir= other than on), and the ".wh." names
 * cannot be made through the mount (EINVAL).
 *
 * The VFS holds the layerfs directories' i_rwsem; the upper directories'
 * are taken here, one parent or a lock_rename() pair at a time.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/xattr.h>
#include <linux/posix_acl.h>
#include <linux/posix_acl_xattr.h>
#include <linux/slab.h>
#include "layerfs.h"

static struct user_namespace *lfs_upper_userns(struct super_block *sb)
{
	return mnt_user_ns(LFS_SB(sb)->upper->mnt);
}

/* With whiteout=aufs, the ".wh." names are the format's: not for users. */
static int lfs_check_new_name(struct dentry *dentry)
{
	const struct qstr *name = &dentry->d_name;

	if (lfs_aufs(LFS_SB(dentry->d_sb)) &&
	    lfs_is_aufs_name(name->name, name->len))
		return -EINVAL;
	return 0;
}

/* Make an upper directory opaque, in the mount's whiteout format. */
static int lfs_set_opaque(struct lfs_sb *sbi, struct dentry *upper)
{
	static const struct qstr opq = QSTR_INIT(LFS_AUFS_OPAQUE_NAME,
						 sizeof(LFS_AUFS_OPAQUE_NAME) - 1);

	if (lfs_aufs(sbi))
		return lfs_aufs_mark(sbi, upper, &opq);
	return lfs_set_marker(sbi, upper, LFS_XA_OPAQUE, LFS_XATTR_TRUE, 1);
}

/*
 * whiteout=aufs: @name in @upperdir was just made; its whiteout, if any,
 * goes.  The name already shows the new object, so a failure here only
 * leaves a whiteout that hides nothing more than the object does.
 */
static void lfs_aufs_unwhiteout(struct lfs_sb *sbi, struct dentry *upperdir,
				const struct qstr *name)
{
	struct qstr wh;
	int err;

	if (!lfs_aufs(sbi))
		return;
	err = lfs_aufs_wh_name(name, &wh);
	if (!err && wh.len)
		err = lfs_aufs_unmark(sbi, upperdir, &wh);
	kfree(wh.name);
	if (err)
		pr_warn_ratelimited("%pd: cannot remove the whiteout of %.*s (%d)\n",
				    upperdir, name->len, name->name, err);
}

/*
 * Move a complete object from work/ to @name in @upperdir, replacing a
 * whiteout there (a directory is exchanged with it, the whiteout then
 * removed from work/).
 * Return: the object's new upper dentry, or an ERR_PTR.
 */
static struct dentry *lfs_install(struct lfs_sb *sbi, struct dentry *temp,
				  struct dentry *upperdir, const struct qstr *name)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct dentry *work = sbi->work, *trap, *target, *upper;
	struct renamedata rd = {
		.old_mnt_userns = userns,
		.new_mnt_userns = userns,
		.old_dir = d_inode(work),
		.old_dentry = temp,
		.new_dir = d_inode(upperdir),
	};
	bool exchanged = false;
	int err;

	trap = lock_rename(work, upperdir);
	target = lookup_one(userns, name->name, upperdir, name->len);
	err = PTR_ERR_OR_ZERO(target);
	if (err)
		goto out_unlock;
	err = -EEXIST;
	if (target == trap ||
	    (d_is_positive(target) && !lfs_is_whiteout(sbi, sbi->upper, target, 0)))
		goto out_target;
	if (d_is_dir(temp) && d_is_positive(target)) {
		rd.flags = RENAME_EXCHANGE;
		exchanged = true;
	}
	rd.new_dentry = target;
	err = vfs_rename(&rd);
	if (err || !exchanged)
		goto out_target;
	unlock_rename(work, upperdir);
	/* the dentries were exchanged: the whiteout is in work/ now */
	lfs_work_remove(sbi, target);
	dput(target);
	goto out_lookup;
out_target:
	dput(target);
out_unlock:
	unlock_rename(work, upperdir);
	if (err)
		return ERR_PTR(err);
out_lookup:
	/* the owner of the upper layer may have put another object there */
	upper = lookup_one_unlocked(userns, name->name, upperdir, name->len);
	if (!IS_ERR(upper) && d_inode(upper) != d_inode(temp)) {
		pr_warn_ratelimited("%pd: the upper layer changed under a new object\n",
				    upper);
		dput(upper);
		upper = ERR_PTR(-EIO);
	}
	return upper;
}

/* Set @acl, if any, as xattr @name of an upper object.  As the mounter. */
static int lfs_set_upper_acl(struct lfs_sb *sbi, struct dentry *upper,
			     const char *name, const struct posix_acl *acl)
{
	size_t size;
	void *buf;
	int err;

	if (!acl)
		return 0;
	size = posix_acl_xattr_size(acl->a_count);
	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = posix_acl_to_xattr(&init_user_ns, acl, buf, size);
	if (err >= 0)
		err = lfs_set_xattr(sbi, upper, name, buf, size);
	kfree(buf);
	return err;
}

/*
 * A new object made in work/, to be renamed to @dentry's name in the
 * upper directory, must come out as the upper filesystem would have made
 * it in that directory: with the access and default ACLs inherited from
 * the directory's default ACL and its mode masked by that ACL rather than
 * by the umask, and, in a set-group-ID directory, a new directory
 * set-group-ID too (the group comes from the credentials:
 * lfs_override_creds_as_caller()).  work/ has neither, so both are worked
 * out on the layerfs directory, whose ACLs are those of the upper one
 * (copied up), and given to the object once made, as the kernel's overlay
 * does.  A hard link is an old object: nothing to give.  Runs as the
 * mounter with the caller's fsuid and fsgid (a hard link: the mounter's).
 * Return: the new dentry in work/, or an ERR_PTR.
 */
static struct dentry *lfs_work_create_for(struct lfs_sb *sbi, struct dentry *dentry,
					  const struct lfs_new *nw)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *dir = d_inode(dentry->d_parent);
	struct posix_acl *acl = NULL, *default_acl = NULL;
	struct iattr attr = { .ia_valid = ATTR_MODE };
	struct lfs_new made = *nw;
	struct dentry *temp;
	struct inode *inode;
	int err;

	if (nw->link_to)
		return lfs_work_create(sbi, nw);
	if (S_ISDIR(made.mode) && (dir->i_mode & S_ISGID))
		made.mode |= S_ISGID;
	err = posix_acl_create(dir, &made.mode, &default_acl, &acl);
	if (err)
		return ERR_PTR(err);
	temp = lfs_work_create(sbi, &made);
	if (IS_ERR(temp))
		goto out_release;

	/* work/ applied the umask and no set-group-ID */
	inode = d_inode(temp);
	err = 0;
	if (!S_ISLNK(made.mode) && inode->i_mode != made.mode) {
		attr.ia_mode = made.mode;
		inode_lock(inode);
		err = notify_change(userns, temp, &attr, NULL);
		inode_unlock(inode);
	}
	if (!err)
		err = lfs_set_upper_acl(sbi, temp, XATTR_NAME_POSIX_ACL_ACCESS, acl);
	if (!err)
		err = lfs_set_upper_acl(sbi, temp, XATTR_NAME_POSIX_ACL_DEFAULT,
					default_acl);
	if (err) {
		lfs_work_remove(sbi, temp);
		dput(temp);
		temp = ERR_PTR(err);
	}
out_release:
	posix_acl_release(acl);
	posix_acl_release(default_acl);
	return temp;
}

/*
 * Make @nw at @dentry's name in the upper directory.  Built in place when
 * nothing is in the way; built in work/ and renamed in when it replaces a
 * whiteout or is a directory that must hide lower ones (opaque).
 * Return: the new upper dentry, or an ERR_PTR.
 */
static struct dentry *lfs_make_upper(struct dentry *dentry, struct dentry *upperdir,
				     const struct lfs_new *nw)
{
	struct super_block *sb = dentry->d_sb;
	struct lfs_sb *sbi = LFS_SB(sb);
	struct inode *dir = d_inode(upperdir);
	const struct qstr *name = &dentry->d_name;
	struct dentry *target, *temp, *upper;
	bool opaque = nw->opaque;
	int err;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	target = lookup_one(lfs_upper_userns(sb), name->name, upperdir, name->len);
	if (IS_ERR(target))
		goto out_unlock;
	if (d_is_negative(target) && !opaque) {
		target = lfs_create_real(sbi, upperdir, target, nw);
		goto out_unlock;
	}
	if (d_is_positive(target) && !lfs_is_whiteout(sbi, sbi->upper, target, 0)) {
		/* the upper layer changed under the mount */
		dput(target);
		target = ERR_PTR(-EEXIST);
		goto out_unlock;
	}
	dput(target);
	target = NULL;
out_unlock:
	inode_unlock(dir);
	if (target) {
		upper = target;
		goto out;
	}

	temp = lfs_work_create_for(sbi, dentry, nw);
	if (IS_ERR(temp))
		return temp;
	err = 0;
	if (opaque)
		err = lfs_set_opaque(sbi, temp);
	upper = err ? ERR_PTR(err) : lfs_install(sbi, temp, upperdir, name);
	if (IS_ERR(upper))
		lfs_work_remove(sbi, temp);
	dput(temp);
out:
	if (!IS_ERR(upper))
		lfs_aufs_unwhiteout(sbi, upperdir, name);
	return upper;
}

/* Give a negative layerfs dentry its new upper object and inode. */
static int lfs_instantiate(struct dentry *dentry, struct dentry *upper,
			   struct inode *link_inode)
{
	struct lfs_entry *e;
	struct inode *inode;

	e = lfs_entry_alloc(0, d_is_dir(upper));
	if (!e) {
		dput(upper);
		return -ENOMEM;
	}
	e->upper = upper;
	if (link_inode) {
		inode = link_inode;
		ihold(inode);
		lfs_update_nlink(inode);
	} else {
		inode = lfs_get_inode(dentry->d_sb, e, NULL);
		if (IS_ERR(inode)) {
			lfs_entry_free(e);
			return PTR_ERR(inode);
		}
	}
	/* a dentry that held something earlier may keep its old entry */
	lfs_entry_free(dentry->d_fsdata);
	dentry->d_fsdata = e;
	d_instantiate(dentry, inode);
	return 0;
}

/*
 * Write access to the upper layer, and the parent copied up.  On success
 * the caller ends with lfs_drop_write().
 */
static int lfs_want_write_parent(struct dentry *dentry)
{
	int err;

	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up(dentry->d_parent);
	if (err)
		lfs_drop_write(dentry);
	return err;
}

/* Caller holds write access to the upper layer. */
static int lfs_create_object(struct inode *dir, struct dentry *dentry,
			     struct lfs_new *nw, struct inode *link_inode)
{
	struct dentry *parent = dentry->d_parent, *upper;
	const struct cred *old_cred;
	int err;

	err = lfs_copy_up(parent);
	if (err)
		return err;
	/*
	 * A link makes no new owner: the mounter's own ids, which the upper
	 * mount maps (else the mount was refused), not the caller's, which
	 * an idmapped upper mount may not map, as overlay does
	 */
	if (nw->link_to) {
		old_cred = lfs_override_creds(dentry->d_sb);
	} else {
		err = lfs_override_creds_as_caller(nw->mnt_userns, dentry,
						   nw->mode, &old_cred);
		if (err)
			return err;
	}
	upper = lfs_make_upper(dentry, lfs_upper(parent), nw);
	revert_creds(old_cred);
	lfs_dir_changed(parent);
	err = PTR_ERR_OR_ZERO(upper);
	if (!err)
		err = lfs_instantiate(dentry, upper, link_inode);
	if (!err)
		lfs_copy_attr(dir, d_inode(lfs_upper(parent)));
	return err;
}

/*
 * Does a lower layer show the name (1, or 0, or -errno)?  Asked as the
 * mounter, before write access to the upper layer is taken, as every
 * look at the lower layers of a write operation is: a lower layer may be
 * a stacked mount, whose directory locks rank above the sb_writers of
 * its upper filesystem (its own create takes them in that order), and
 * that filesystem may be ours.
 */
static int lfs_lower_shows(struct dentry *dentry)
{
	const struct cred *old_cred;
	int lower;

	old_cred = lfs_override_creds(dentry->d_sb);
	lower = lfs_lower_positive(dentry);
	revert_creds(old_cred);
	return lower;
}

/* As lfs_lower_shows(): may the directory go, is it empty? */
static int lfs_check_empty(struct dentry *dentry)
{
	const struct cred *old_cred;
	int err;

	old_cred = lfs_override_creds(dentry->d_sb);
	err = lfs_dir_check_empty(dentry);
	revert_creds(old_cred);
	return err;
}

static int lfs_create_new(struct inode *dir, struct dentry *dentry,
			  struct lfs_new *nw)
{
	int err;

	err = lfs_check_new_name(dentry);
	if (err)
		return err;
	/* a new directory hides what a lower layer shows at its name */
	if (S_ISDIR(nw->mode)) {
		err = lfs_lower_shows(dentry);
		if (err < 0)
			return err;
		nw->opaque = err;
	}
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_create_object(dir, dentry, nw, NULL);
	lfs_drop_write(dentry);
	return err;
}

int lfs_create(struct user_namespace *mnt_userns, struct inode *dir,
	       struct dentry *dentry, umode_t mode, bool excl)
{
	struct lfs_new nw = {
		.mode = (mode & 07777) | S_IFREG,
		.mnt_userns = mnt_userns,
	};

	return lfs_create_new(dir, dentry, &nw);
}

int lfs_mkdir(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry, umode_t mode)
{
	struct lfs_new nw = {
		.mode = (mode & 07777) | S_IFDIR,
		.mnt_userns = mnt_userns,
	};

	return lfs_create_new(dir, dentry, &nw);
}

int lfs_mknod(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry, umode_t mode, dev_t rdev)
{
	struct lfs_new nw = {
		.mode = mode,
		.rdev = rdev,
		.mnt_userns = mnt_userns,
	};

	/* a 0/0 character device is a whiteout to upstream overlayfs */
	if (S_ISCHR(mode) && rdev == WHITEOUT_DEV)
		return -EPERM;
	return lfs_create_new(dir, dentry, &nw);
}

int lfs_symlink(struct user_namespace *mnt_userns, struct inode *dir,
		struct dentry *dentry, const char *link)
{
	struct lfs_new nw = {
		.mode = S_IFLNK | 0777,
		.symlink = link,
		.mnt_userns = mnt_userns,
	};

	return lfs_create_new(dir, dentry, &nw);
}

/*
 * 6.1 passes ->link() no idmapping: the VFS checked the caller through it
 * (may_linkat()), and a link makes no new object to own, so the upper
 * link is made as the mounter (lfs_create_object()).
 */
int lfs_link(struct dentry *old, struct inode *dir, struct dentry *new)
{
	struct lfs_new nw = {
		.mode = d_inode(old)->i_mode,
	};
	int err;

	/* before the copy-up, which would be for nothing */
	err = lfs_check_new_name(new);
	if (err)
		return err;
	err = lfs_want_write(new);
	if (err)
		return err;
	err = lfs_copy_up(old);
	if (!err) {
		nw.link_to = lfs_upper(old);
		err = lfs_create_object(dir, new, &nw, d_inode(old));
	}
	lfs_drop_write(new);
	return err;
}

int lfs_tmpfile(struct user_namespace *mnt_userns, struct inode *dir,
		struct file *file, umode_t mode)
{
	struct dentry *dentry = file->f_path.dentry;
	struct dentry *parent = dentry->d_parent;
	struct lfs_sb *sbi = LFS_SB(dir->i_sb);
	const struct cred *old_cred;
	struct file *realfile;
	struct path upperdir;
	struct lfs_entry *e;
	struct inode *inode;
	int err;

	err = lfs_want_write_parent(dentry);
	if (err)
		return err;
	upperdir.mnt = sbi->upper->mnt;
	upperdir.dentry = lfs_upper(parent);
	err = lfs_override_creds_as_caller(mnt_userns, dentry,
					   (mode & 07777) | S_IFREG, &old_cred);
	if (err)
		goto out_drop;
	realfile = vfs_tmpfile_open(mnt_user_ns(sbi->upper->mnt), &upperdir,
				    (mode & 07777) | S_IFREG, O_RDWR,
				    current_cred());
	lfs_revert_creds_as_caller(old_cred);
	err = PTR_ERR_OR_ZERO(realfile);
	if (err)
		goto out_drop;

	err = -ENOMEM;
	e = lfs_entry_alloc(0, false);
	if (!e)
		goto out_fput;
	e->upper = dget(realfile->f_path.dentry);
	inode = lfs_get_inode(dir->i_sb, e, NULL);
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		lfs_entry_free(e);
		goto out_fput;
	}
	dentry->d_fsdata = e;
	/* d_tmpfile() drops the one link a new file starts with */
	set_nlink(inode, 1);
	d_tmpfile(file, inode);
	err = finish_open_simple(file, 0);
out_fput:
	fput(realfile);
out_drop:
	lfs_drop_write(dentry);
	return err;
}

/* Rename @old in @olddir to @target in @newdir.  Both directories locked. */
static int lfs_do_rename(struct user_namespace *userns, struct dentry *olddir,
			 struct dentry *old, struct dentry *newdir,
			 struct dentry *target, unsigned int flags)
{
	struct renamedata rd = {
		.old_mnt_userns = userns,
		.old_dir = d_inode(olddir),
		.old_dentry = old,
		.new_mnt_userns = userns,
		.new_dir = d_inode(newdir),
		.new_dentry = target,
		.flags = flags,
	};

	return vfs_rename(&rd);
}

/*
 * Put a whiteout at @name in @upperdir, replacing the upper object
 * @upper there (or nothing, when @upper is NULL).  A replaced directory
 * leaves through work/.
 */
static int lfs_whiteout_name(struct lfs_sb *sbi, struct dentry *upperdir,
			     const struct qstr *name, struct dentry *upper)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct dentry *wh, *trap, *target;
	unsigned int flags = 0;
	int err;

	wh = lfs_work_whiteout(sbi);
	if (IS_ERR(wh))
		return PTR_ERR(wh);
	trap = lock_rename(sbi->work, upperdir);
	target = lookup_one(userns, name->name, upperdir, name->len);
	err = PTR_ERR_OR_ZERO(target);
	if (err)
		goto out_unlock;
	err = -ESTALE;
	if (target == trap || (upper && target != upper) ||
	    (!upper && d_is_positive(target)))
		goto out_target;
	if (upper && d_is_dir(upper))
		flags = RENAME_EXCHANGE;
	err = lfs_do_rename(userns, sbi->work, wh, upperdir, target, flags);
out_target:
	dput(target);
out_unlock:
	unlock_rename(sbi->work, upperdir);
	if (err || flags) {
		/* on success, the replaced directory, now with the temporary name */
		lfs_work_remove(sbi, err ? wh : upper);
	}
	dput(wh);
	return err;
}

/* Remove an upper object that nothing below needs hidden. */
static int lfs_remove_upper(struct lfs_sb *sbi, struct dentry *upperdir,
			    struct dentry *upper)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *dir = d_inode(upperdir);
	int err;

	if (d_is_dir(upper)) {
		err = lfs_clear_whiteouts(sbi, upper);
		if (err)
			return err;
	}
	inode_lock_nested(dir, I_MUTEX_PARENT);
	err = -ESTALE;
	if (upper->d_parent == upperdir && !d_unhashed(upper))
		err = lfs_unlink_real(userns, upperdir, upper);
	inode_unlock(dir);
	return err;
}

/*
 * whiteout=aufs: ".wh.NAME" in @upperdir, then the upper object @upper
 * (if any) goes.  Between the two, NAME shows as it was.
 */
static int lfs_aufs_whiteout_name(struct lfs_sb *sbi, struct dentry *upperdir,
				  const struct qstr *name, struct dentry *upper)
{
	struct qstr wh;
	int err;

	err = lfs_aufs_wh_name(name, &wh);
	if (err)
		return err;
	/* the name is too long for aufs to hide it */
	err = wh.len ? lfs_aufs_mark(sbi, upperdir, &wh) : -ENAMETOOLONG;
	kfree(wh.name);
	if (!err && upper)
		err = lfs_remove_upper(sbi, upperdir, upper);
	return err;
}

/* Hide @name in @upperdir, in the mount's whiteout format. */
static int lfs_hide_name(struct lfs_sb *sbi, struct dentry *upperdir,
			 const struct qstr *name, struct dentry *upper)
{
	if (lfs_aufs(sbi))
		return lfs_aufs_whiteout_name(sbi, upperdir, name, upper);
	return lfs_whiteout_name(sbi, upperdir, name, upper);
}

/* @inode lost a name */
static void lfs_name_removed(struct inode *inode)
{
	if (S_ISDIR(inode->i_mode))
		clear_nlink(inode);
	else if (lfs_i_upper(inode))
		lfs_update_nlink(inode);
	else if (inode->i_nlink)
		drop_nlink(inode);
}

static int lfs_remove(struct inode *dir, struct dentry *dentry, bool is_dir)
{
	struct lfs_sb *sbi = LFS_SB(dir->i_sb);
	struct dentry *parent = dentry->d_parent, *upper;
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	int err, lower;

	/* the lower layers first (see lfs_lower_shows()) */
	if (is_dir) {
		err = lfs_check_empty(dentry);
		if (err)
			return err;
	}
	lower = lfs_lower_shows(dentry);
	if (lower < 0)
		return lower;

	err = lfs_want_write_parent(dentry);
	if (err)
		return err;
	if (!is_dir) {
		err = lfs_copy_up_hardlink(dentry);
		if (err)
			goto out_drop;
	}
	old_cred = lfs_override_creds(dir->i_sb);
	/* no copy-up of this file (through an open) may slip in meanwhile */
	if (!is_dir)
		mutex_lock(&LFS_I(inode)->lock);
	upper = lfs_upper(dentry);
	if (lower)
		err = lfs_hide_name(sbi, lfs_upper(parent), &dentry->d_name, upper);
	else if (upper)
		err = lfs_remove_upper(sbi, lfs_upper(parent), upper);
	else
		err = -ESTALE;	/* neither layer holds it any more */
	/*
	 * The next lookup of this name walks the layers again; and a copy-up
	 * through a file still open on it, which waits for the lock, finds
	 * it unhashed and leaves its copy unlinked (lfs_cu_install()), even
	 * where no upper object holds the name (an aufs whiteout is another).
	 */
	if (!err)
		d_drop(dentry);
	if (!is_dir)
		mutex_unlock(&LFS_I(inode)->lock);
	revert_creds(old_cred);
	/* a directory's whiteouts may be gone even where this failed */
	lfs_dir_changed(parent);
	if (is_dir)
		lfs_dir_changed(dentry);
	if (!err) {
		lfs_name_removed(inode);
		lfs_copy_attr(dir, d_inode(lfs_upper(parent)));
	}
out_drop:
	lfs_drop_write(dentry);
	return err;
}

int lfs_unlink(struct inode *dir, struct dentry *dentry)
{
	return lfs_remove(dir, dentry, false);
}

int lfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	return lfs_remove(dir, dentry, true);
}

/*
 * Put @len bytes of @s in front of the path being built backwards at *@p.
 * @s may be in @buf too (a redirect read to its start): memmove.
 */
static int lfs_path_prepend(char *buf, char **p, const char *s, size_t len)
{
	if (*p - buf < len + 1)
		return -ENAMETOOLONG;
	*p -= len;
	memmove(*p, s, len);
	*--*p = '/';
	return 0;
}

/*
 * Where a directory's lower parts are, as an absolute path in the lower
 * layers: its own name under its parent's, up to the first ancestor that
 * says (by a redirect) where its own parts are.  Caller runs as the
 * mounter and holds @dentry's parent's i_rwsem (and for a move to another
 * directory the rename mutex); an ancestor may still be renamed within its
 * own directory meanwhile, which takes neither: names are read as
 * snapshots.
 * Return: a pointer into @buf, or an ERR_PTR.
 */
static char *lfs_lower_path(struct lfs_sb *sbi, struct dentry *dentry, char *buf)
{
	char *p = buf + PATH_MAX - 1, *redirect = buf;
	struct dentry *d = dget(dentry);
	int err = 0;

	lockdep_assert_held(&d_inode(dentry->d_parent)->i_rwsem);
	*p = '\0';
	while (!err && !IS_ROOT(d)) {
		struct dentry *upper = lfs_upper(d), *parent;
		int len = 0;

		/*
		 * The path so far is at the end of buf; the redirect goes
		 * first, where there is room for it and its '/' (a size of
		 * 0 would only ask for the value's length).
		 */
		if (p - buf < 2) {
			err = -ENAMETOOLONG;
			break;
		}
		if (upper)
			len = lfs_get_marker(sbi, sbi->upper, upper,
					     LFS_XA_REDIRECT, redirect,
					     p - buf - 1);
		if (len > 0 && !lfs_redirect_valid(redirect, len)) {
			/* its owner changed it since the lookup read it */
			pr_warn_ratelimited("%pd: invalid redirect in the upper layer\n",
					    upper);
			err = -EIO;
			break;
		}
		if (len > 0) {
			if (redirect[0] == '/') {
				/* absolute: the rest of the way up is known */
				if (len > 1)
					err = lfs_path_prepend(buf, &p, redirect + 1,
							       len - 1);
				break;
			}
			err = lfs_path_prepend(buf, &p, redirect, len);
		} else {
			struct name_snapshot name;

			take_dentry_name_snapshot(&name, d);
			err = lfs_path_prepend(buf, &p, name.name.name,
					       name.name.len);
			release_dentry_name_snapshot(&name);
		}
		parent = dget_parent(d);
		dput(d);
		d = parent;
	}
	dput(d);
	if (err)
		return ERR_PTR(err);
	return *p ? p : ERR_PTR(-EINVAL);
}

/*
 * A directory with lower parts keeps them when it moves: record where
 * they are, unless it already says so with an absolute redirect.
 */
static int lfs_set_redirect(struct lfs_sb *sbi, struct dentry *dentry)
{
	struct dentry *upper = lfs_upper(dentry);
	char *buf, *path;
	int err;

	if (!LFS_E(dentry)->nr)
		return 0;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	err = lfs_get_marker(sbi, sbi->upper, upper, LFS_XA_REDIRECT, buf,
			     PATH_MAX);
	if (err > 0 && buf[0] == '/') {
		err = 0;
		goto out;
	}
	path = lfs_lower_path(sbi, dentry, buf);
	err = PTR_ERR_OR_ZERO(path);
	if (!err)
		err = lfs_set_marker(sbi, upper, LFS_XA_REDIRECT, path,
				     strlen(path));
out:
	kfree(buf);
	return err;
}

/*
 * A directory without lower parts that arrives where a lower layer shows
 * the name (@dest_lower) must hide it.
 */
static int lfs_rename_opaque(struct lfs_sb *sbi, struct dentry *moving,
			     int dest_lower)
{
	if (!d_is_dir(moving) || LFS_E(moving)->nr || !dest_lower)
		return 0;
	return lfs_set_opaque(sbi, lfs_upper(moving));
}

/*
 * What a rename needs to know of the lower layers, asked before write
 * access is taken (see lfs_lower_shows()): that a directory it replaces
 * is empty; whether they show the old name (*@old_lower: a whiteout then
 * hides it, or a directory exchanged there must be opaque) and the new
 * one (*@new_lower: a directory arriving there must be opaque).  Each is
 * only asked when the rename needs it.
 */
static int lfs_rename_lowers(struct dentry *old, struct dentry *new,
			     unsigned int flags, int *old_lower, int *new_lower)
{
	bool exchange = flags & RENAME_EXCHANGE;
	int err;

	*old_lower = 0;
	*new_lower = 0;
	if (!exchange && d_is_dir(new)) {
		err = lfs_check_empty(new);
		if (err)
			return err;
	}
	if (!exchange || (d_is_dir(new) && !LFS_E(new)->nr)) {
		*old_lower = lfs_lower_shows(old);
		if (*old_lower < 0)
			return *old_lower;
	}
	if (d_is_dir(old) && !LFS_E(old)->nr) {
		*new_lower = lfs_lower_shows(new);
		if (*new_lower < 0)
			return *new_lower;
	}
	return 0;
}

/* Copy up what a rename needs, and check that it may go ahead. */
static int lfs_rename_prepare(struct dentry *old, struct dentry *new,
			      unsigned int flags)
{
	const struct cred *old_cred;
	int err;

	err = lfs_copy_up(old);
	if (!err)
		err = lfs_copy_up(new->d_parent);
	if (!err && (flags & RENAME_EXCHANGE))
		err = lfs_copy_up(new);
	if (err || (flags & RENAME_EXCHANGE) || d_is_negative(new))
		return err;
	if (!d_is_dir(new))
		return lfs_copy_up_hardlink(new);
	/* lfs_rename_lowers() found it empty */
	if (!lfs_upper(new))
		return 0;
	old_cred = lfs_override_creds(new->d_sb);
	err = lfs_clear_whiteouts(LFS_SB(new->d_sb), lfs_upper(new));
	revert_creds(old_cred);
	return err;
}

/* The rename itself, in the upper layer. */
static int lfs_rename_upper(struct lfs_sb *sbi, struct dentry *old,
			    struct dentry *new, unsigned int flags,
			    bool *whiteout_left)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct dentry *olddir = lfs_upper(old->d_parent);
	struct dentry *newdir = lfs_upper(new->d_parent);
	struct dentry *upper = lfs_upper(old), *trap, *target;
	int err;

	*whiteout_left = false;
	trap = lock_rename(olddir, newdir);
	err = -ESTALE;
	if (upper->d_parent != olddir || d_unhashed(upper) || upper == trap)
		goto out_unlock;
	target = lookup_one(userns, new->d_name.name, newdir, new->d_name.len);
	err = PTR_ERR_OR_ZERO(target);
	if (err)
		goto out_unlock;
	err = -ESTALE;
	if (target == trap)
		goto out_target;
	if (flags & RENAME_EXCHANGE) {
		if (target != lfs_upper(new))
			goto out_target;
	} else if (d_is_positive(target) &&
		   lfs_is_whiteout(sbi, sbi->upper, target, 0)) {
		/* swap with the whiteout: it then hides the old name */
		flags |= RENAME_EXCHANGE;
		*whiteout_left = true;
	} else if (d_is_positive(target) && target != lfs_upper(new)) {
		goto out_target;
	}
	flags &= ~RENAME_NOREPLACE;
	err = lfs_do_rename(userns, olddir, upper, newdir, target, flags);
out_target:
	dput(target);
out_unlock:
	unlock_rename(olddir, newdir);
	return err;
}

/* After a rename, the old name: hidden if a lower layer shows it. */
static int lfs_rename_fix_old(struct lfs_sb *sbi, struct dentry *olddir,
			      const struct qstr *name, int lower,
			      bool whiteout_left)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct dentry *wh;
	int err = 0;

	if (lower && !whiteout_left)
		return lfs_hide_name(sbi, olddir, name, NULL);
	if (lower || !whiteout_left)
		return 0;
	/* a whiteout nobody needs: remove it */
	inode_lock_nested(d_inode(olddir), I_MUTEX_PARENT);
	wh = lookup_one(userns, name->name, olddir, name->len);
	if (!IS_ERR(wh)) {
		if (d_is_positive(wh) && lfs_is_whiteout(sbi, sbi->upper, wh, 0))
			err = vfs_unlink(userns, d_inode(olddir), wh, NULL);
		dput(wh);
	}
	inode_unlock(d_inode(olddir));
	return err;
}

/*
 * A directory with lower parts moves only with a redirect that says where
 * they are (lfs_set_redirect()): not with whiteout=aufs, whose format has
 * none, nor unless redirect_dir=on.  Else rename gives EXDEV, as overlayfs
 * without redirect_dir, and mv(1) copies the tree instead.
 */
static bool lfs_dir_may_move(const struct lfs_sb *sbi, struct dentry *dentry)
{
	if (!d_is_dir(dentry) || !LFS_E(dentry)->nr)
		return true;
	return !lfs_aufs(sbi) && lfs_redirect_create(sbi);
}

int lfs_rename(struct user_namespace *mnt_userns, struct inode *olddir,
	       struct dentry *old, struct inode *newdir, struct dentry *new,
	       unsigned int flags)
{
	struct lfs_sb *sbi = LFS_SB(old->d_sb);
	struct inode *victim = d_inode(new);
	bool victim_locked = victim && !S_ISDIR(victim->i_mode) &&
			     !(flags & RENAME_EXCHANGE);
	const struct cred *old_cred;
	int err, lower, new_lower;
	struct qstr oldname;
	bool whiteout_left;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	err = lfs_check_new_name(new);
	if (err)
		return err;
	if (!lfs_dir_may_move(sbi, old) ||
	    ((flags & RENAME_EXCHANGE) && !lfs_dir_may_move(sbi, new)))
		return -EXDEV;
	err = lfs_rename_lowers(old, new, flags, &lower, &new_lower);
	if (err)
		return err;
	err = lfs_want_write(old);
	if (err)
		return err;
	err = lfs_rename_prepare(old, new, flags);
	if (err)
		goto out_changed;

	old_cred = lfs_override_creds(old->d_sb);
	if (d_is_dir(old))
		err = lfs_set_redirect(sbi, old);
	if (!err && (flags & RENAME_EXCHANGE) && d_is_dir(new))
		err = lfs_set_redirect(sbi, new);
	if (!err)
		err = lfs_rename_opaque(sbi, old, new_lower);
	if (!err && (flags & RENAME_EXCHANGE))
		err = lfs_rename_opaque(sbi, new, lower);
	if (err)
		goto out_revert;

	oldname = old->d_name;
	/* a file replaced here must not be copied up meanwhile */
	if (victim_locked)
		mutex_lock(&LFS_I(victim)->lock);
	err = lfs_rename_upper(sbi, old, new, flags, &whiteout_left);
	if (victim_locked)
		mutex_unlock(&LFS_I(victim)->lock);
	if (!err)
		err = lfs_rename_fix_old(sbi, lfs_upper(old->d_parent), &oldname,
					 flags & RENAME_EXCHANGE ? 0 : lower,
					 whiteout_left);
	if (!err && !(flags & RENAME_EXCHANGE))
		lfs_aufs_unwhiteout(sbi, lfs_upper(new->d_parent), &new->d_name);
out_revert:
	revert_creds(old_cred);
out_changed:
	/*
	 * Markers, or a replaced directory's whiteouts, may have changed even
	 * where the rename failed.
	 */
	lfs_dir_changed(old->d_parent);
	lfs_dir_changed(new->d_parent);
	if (d_is_dir(old))
		lfs_dir_changed(old);
	if (d_is_dir(new))
		lfs_dir_changed(new);
	if (!err && victim && !(flags & RENAME_EXCHANGE))
		lfs_name_removed(victim);
	if (!err) {
		lfs_copy_attr(olddir, d_inode(lfs_upper(old->d_parent)));
		lfs_copy_attr(newdir, d_inode(lfs_upper(new->d_parent)));
	}
	lfs_drop_write(old);
	return err;
}
