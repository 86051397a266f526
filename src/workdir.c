// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: the work directory.
 *
 * workdir= holds two directories of layerfs's own, on the upper
 * filesystem:
 *   work/   scratch space: new objects are built here under temporary
 *           names ("#<n>") and renamed into the upper layer when complete,
 *           and removed directories pass through here on their way out.
 *           Whatever is left in it (a crash) is removed at the next mount,
 *           but work/incompat/: a mark there (a volatile mount's) refuses
 *           the mount until the user removes it.
 *   index/  the hard-link index: for each lower object with several links
 *           that was copied up, a hard link to the copy, named by the
 *           st_ino layerfs shows for it (16 hex digits).  The other names
 *           of that object find their copy here (see copy_up.c).  It
 *           serves one upper directory (LFS_XATTR_INDEX_UPPER), and an
 *           entry no name uses any more is removed at mount.
 *
 * Everything here runs with the mounter's credentials.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/xattr.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include "layerfs.h"

/* how deep a tree left in work/ may be; deeper leftovers stay, with a warning */
#define LFS_WORK_MAX_DEPTH	4

/* names of one real directory, each as a type byte, the name and a NUL */
struct lfs_names {
	struct dir_context ctx;
	char *buf;
	size_t used;
	size_t cap;
	unsigned int count;
	int err;
};

static bool lfs_names_actor(struct dir_context *ctx, const char *name, int len,
			    loff_t offset, u64 ino, unsigned int type)
{
	struct lfs_names *n = container_of(ctx, struct lfs_names, ctx);

	if (len <= 2 && name[0] == '.' && (len == 1 || name[1] == '.'))
		return true;
	if (n->used + len + 2 > n->cap) {
		size_t cap = max_t(size_t, 2 * n->cap, 4096);
		char *buf = kvmalloc(cap, GFP_KERNEL);

		if (!buf) {
			n->err = -ENOMEM;
			return false;
		}
		if (n->used)
			memcpy(buf, n->buf, n->used);
		kvfree(n->buf);
		n->buf = buf;
		n->cap = cap;
	}
	n->buf[n->used++] = type;
	memcpy(n->buf + n->used, name, len);
	n->used += len;
	n->buf[n->used++] = '\0';
	n->count++;
	return true;
}

/* Read every name of a real directory.  Free @n->buf with kvfree(). */
static int lfs_read_names(struct vfsmount *mnt, struct dentry *dir,
			  struct lfs_names *n)
{
	struct path path = { .mnt = mnt, .dentry = dir };
	struct file *file;
	int err;

	memset(n, 0, sizeof(*n));
	n->ctx.actor = lfs_names_actor;
	file = dentry_open(&path, O_RDONLY | O_DIRECTORY | O_LARGEFILE,
			   current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	err = iterate_dir(file, &n->ctx);
	fput(file);
	if (!err)
		err = n->err;
	if (err) {
		kvfree(n->buf);
		n->buf = NULL;
	}
	return err;
}

/* the next record after @rec in a names buffer, or NULL */
static const char *lfs_names_next(const struct lfs_names *n, const char *rec)
{
	rec = rec ? rec + strlen(rec + 1) + 2 : n->buf;
	return rec < n->buf + n->used ? rec : NULL;
}

static int lfs_remove_tree(struct lfs_sb *sbi, struct dentry *dir, int depth);

/*
 * Unlink or rmdir @child of @dir (locked).  The extra reference keeps
 * the dentry positive (d_delete() only unhashes it): a layerfs entry or
 * inode may still point at it, and must still find the inode there.
 */
int lfs_unlink_real(struct user_namespace *userns, struct dentry *dir,
		    struct dentry *child)
{
	int err;

	dget(child);
	if (d_is_dir(child))
		err = vfs_rmdir(userns, d_inode(dir), child);
	else
		err = vfs_unlink(userns, d_inode(dir), child, NULL);
	dput(child);
	return err;
}

/*
 * Remove one child of a real directory.  Caller holds @dir's i_rwsem;
 * for a directory it is dropped while the subtree is emptied, and the
 * child is looked up again.
 */
static int lfs_remove_child(struct lfs_sb *sbi, struct dentry *dir,
			    struct dentry *child, int depth)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	int err;

	lockdep_assert_held(&d_inode(dir)->i_rwsem);
	/*
	 * Something is mounted on it, maybe in another namespace, where it
	 * covers what the mounter may not see: the clone of the upper mount
	 * has no submounts, and would reach under it.
	 */
	if (d_mountpoint(child))
		return -EBUSY;
	if (d_is_dir(child)) {
		if (depth >= LFS_WORK_MAX_DEPTH)
			return -ELOOP;
		inode_unlock(d_inode(dir));
		err = lfs_remove_tree(sbi, child, depth + 1);
		inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
		if (err)
			return err;
		if (child->d_parent != dir || d_unhashed(child))
			return -ESTALE;
	}
	return lfs_unlink_real(userns, dir, child);
}

/* lfs_walk_children()'s callback, its argument, and how @dir is locked */
struct lfs_child_walk {
	int (*fn)(struct lfs_sb *sbi, struct dentry *dir, struct dentry *child,
		  unsigned char type, void *arg);
	void *arg;
	unsigned int subclass;		/* of @dir's i_rwsem: I_MUTEX_* */
};

/*
 * Call @walk->fn on every positive child of the real directory @dir of the
 * upper filesystem, @dir's i_rwsem held (it may drop and retake it), the
 * names read first; stop at the first error.  @type is the child's
 * d_type as readdir gave it.  An empty directory is not locked.
 */
static int lfs_walk_children(struct lfs_sb *sbi, struct dentry *dir,
			     const struct lfs_child_walk *walk)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct lfs_names names;
	const char *rec = NULL;
	int err;

	err = lfs_read_names(sbi->upper->mnt, dir, &names);
	if (err || !names.count)
		goto out;
	inode_lock_nested(d_inode(dir), walk->subclass);
	while (!err && (rec = lfs_names_next(&names, rec))) {
		struct dentry *child;

		child = lookup_one(userns, rec + 1, dir, strlen(rec + 1));
		if (IS_ERR(child)) {
			err = PTR_ERR(child);
			break;
		}
		if (d_is_positive(child))
			err = walk->fn(sbi, dir, child, rec[0], walk->arg);
		dput(child);
	}
	inode_unlock(d_inode(dir));
out:
	kvfree(names.buf);
	return err;
}

/* lfs_remove_child() for lfs_walk_children(): @arg points at the depth */
static int lfs_remove_child_fn(struct lfs_sb *sbi, struct dentry *dir,
			       struct dentry *child, unsigned char type,
			       void *arg)
{
	return lfs_remove_child(sbi, dir, child, *(int *)arg);
}

/* Empty a real directory of the upper filesystem, recursively. */
static int lfs_remove_tree(struct lfs_sb *sbi, struct dentry *dir, int depth)
{
	const struct lfs_child_walk walk = {
		.fn = lfs_remove_child_fn, .arg = &depth,
		.subclass = I_MUTEX_PARENT,
	};

	return lfs_walk_children(sbi, dir, &walk);
}

/*
 * @parent/@name, made as @nw if missing.  Caller holds write access to
 * the upper mount.
 */
static struct dentry *lfs_work_child(struct lfs_sb *sbi, struct dentry *parent,
				     const char *name, const struct lfs_new *nw)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *dir = d_inode(parent);
	struct dentry *d;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	d = lookup_one(userns, name, parent, strlen(name));
	if (IS_ERR(d))
		goto out_unlock;
	if (d_is_negative(d)) {
		d = lfs_create_real(sbi, parent, d, nw);
	} else if ((d_inode(d)->i_mode ^ nw->mode) & S_IFMT) {
		dput(d);
		d = ERR_PTR(d_is_dir(d) ? -EISDIR : -ENOTDIR);
	}
out_unlock:
	inode_unlock(dir);
	return d;
}

/*
 * work/ or index/ as found may have another owner, a wider mode or ACLs:
 * a default ACL (inherited from workdir=, or set there) would pass on to
 * every object built in it, and a directory others may write would let
 * them swap objects being built.  They become the mounter's, mode 0700,
 * without ACLs, as overlay makes its work/ anew.  @d is not locked.
 */
static int lfs_work_secure(struct lfs_sb *sbi, struct dentry *d)
{
	static const char *const acls[] = {
		XATTR_NAME_POSIX_ACL_DEFAULT, XATTR_NAME_POSIX_ACL_ACCESS,
	};
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *inode = d_inode(d);
	struct iattr attr = { .ia_valid = ATTR_MODE, .ia_mode = S_IFDIR | 0700 };
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(acls); i++) {
		err = vfs_removexattr(userns, d, acls[i]);
		if (err && err != -ENODATA && err != -EOPNOTSUPP)
			return err;
	}
	/* its owners as the upper mount shows them, as it takes new ones */
	if (!vfsuid_eq_kuid(i_uid_into_vfsuid(userns, inode), current_fsuid()) ||
	    !vfsgid_eq_kgid(i_gid_into_vfsgid(userns, inode), current_fsgid())) {
		attr.ia_valid |= ATTR_UID | ATTR_GID;
		attr.ia_vfsuid = VFSUIDT_INIT(current_fsuid());
		attr.ia_vfsgid = VFSGIDT_INIT(current_fsgid());
	} else if ((inode->i_mode & 07777) == 0700) {
		return 0;
	}
	inode_lock(inode);
	err = notify_change(userns, d, &attr, NULL);
	inode_unlock(inode);
	return err;
}

/* workdir=/@name, made if missing, the mounter's alone */
static struct dentry *lfs_work_subdir(struct fs_context *fc, struct lfs_sb *sbi,
				      const char *name)
{
	struct lfs_new nw = { .mode = S_IFDIR | 0700 };
	struct dentry *d;
	int err;

	d = lfs_work_child(sbi, sbi->workdir, name, &nw);
	if (IS_ERR(d)) {
		lfs_err(fc, "workdir \"%s\": cannot make %s/ (%ld)",
			sbi->work_name, name, PTR_ERR(d));
		return d;
	}
	err = lfs_work_secure(sbi, d);
	if (err) {
		lfs_err(fc, "workdir \"%s\": cannot make %s/ the mounter's alone, mode 0700 without ACLs (%d)",
			sbi->work_name, name, err);
		dput(d);
		return ERR_PTR(err);
	}
	return d;
}

/*
 * Before work/ is emptied: work/incompat/ holding anything refuses the
 * mount (-EINVAL), as on overlay.  Only a volatile mount makes an entry
 * there (lfs_work_mark_volatile()): what it wrote may not have reached
 * the disk, and only the user can tell whether the upper layer is whole.
 */
static int lfs_work_check_incompat(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct lfs_names names;
	struct dentry *d;
	int err;

	d = lookup_one_unlocked(mnt_user_ns(sbi->upper->mnt), LFS_INCOMPAT_NAME,
				sbi->work, strlen(LFS_INCOMPAT_NAME));
	if (IS_ERR(d)) {
		lfs_err(fc, "workdir \"%s\": cannot look up %s/%s (%ld)",
			sbi->work_name, LFS_WORK_NAME, LFS_INCOMPAT_NAME,
			PTR_ERR(d));
		return PTR_ERR(d);
	}
	/* anything else by that name is a leftover, emptied with the rest */
	err = 0;
	if (!d_is_dir(d))
		goto out;
	err = lfs_read_names(sbi->upper->mnt, d, &names);
	if (err) {
		lfs_err(fc, "workdir \"%s\": cannot read %s/%s (%d)",
			sbi->work_name, LFS_WORK_NAME, LFS_INCOMPAT_NAME, err);
		goto out;
	}
	if (names.count) {
		const char *feature = names.buf + 1;

		if (!strcmp(feature, LFS_INCOMPAT_VOLATILE))
			lfs_err(fc, "workdir \"%s\": %s/%s/%s: the upper layer was mounted volatile, its writes may not have reached the disk; remove that directory to mount it again",
				sbi->work_name, LFS_WORK_NAME, LFS_INCOMPAT_NAME,
				feature);
		else
			lfs_err(fc, "workdir \"%s\": %s/%s/%s: an incompatible feature is marked; remove that entry to mount it",
				sbi->work_name, LFS_WORK_NAME, LFS_INCOMPAT_NAME,
				feature);
		err = -EINVAL;
	}
	kvfree(names.buf);
out:
	dput(d);
	return err;
}

/*
 * A volatile mount marks work/ as overlay's does, with
 * incompat/volatile/dirty, which stays after umount: until the user
 * removes it, no mount takes the pair (lfs_work_check_incompat()).
 */
static int lfs_work_mark_volatile(struct fs_context *fc, struct lfs_sb *sbi)
{
	static const char *const path[] = {
		LFS_INCOMPAT_NAME, LFS_INCOMPAT_VOLATILE, LFS_VOLATILE_DIRTY,
	};
	struct lfs_new dir = { .mode = S_IFDIR | 0700 };
	struct lfs_new file = { .mode = S_IFREG | 0600 };
	struct dentry *d = dget(sbi->work), *child;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(path); i++) {
		child = lfs_work_child(sbi, d, path[i],
				       i + 1 < ARRAY_SIZE(path) ? &dir : &file);
		dput(d);
		if (IS_ERR(child)) {
			lfs_err(fc, "workdir \"%s\": cannot make the volatile mark %s/%s/%s/%s (%ld)",
				sbi->work_name, LFS_WORK_NAME, path[0], path[1],
				path[2], PTR_ERR(child));
			return PTR_ERR(child);
		}
		d = child;
	}
	dput(d);
	return 0;
}

/*
 * index/ serves one upper directory (LFS_XATTR_INDEX_UPPER): its entries
 * are links to that directory's copies, which a mount of another upper
 * directory with this workdir would show as its own and link into it.
 * An index/ without the mark (new, or an older module's) takes this one.
 */
static int lfs_index_claim(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct inode *root = d_inode(sbi->upper->root);
	struct lfs_index_upper want = {
		.version = LFS_INDEX_UPPER_V1,
		.generation = cpu_to_le32(root->i_generation),
		.ino = cpu_to_le64(root->i_ino),
	}, got;
	ssize_t len;

	memcpy(want.uuid, &root->i_sb->s_uuid, sizeof(want.uuid));
	len = lfs_get_marker(sbi, sbi->upper, sbi->index, LFS_XA_INDEX_UPPER,
			     &got, sizeof(got));
	if (len == -ENODATA)
		len = lfs_set_marker(sbi, sbi->index, LFS_XA_INDEX_UPPER,
				     &want, sizeof(want));
	else if (len == sizeof(got) && !memcmp(&got, &want, sizeof(got)))
		len = 0;
	else if (len >= 0 || len == -ERANGE)
		len = -ESTALE;
	if (len == -ESTALE)
		lfs_err(fc, "workdir \"%s\": its %s/ belongs to another upper directory; give upperdir \"%s\" a workdir of its own (or remove %s/: hard links copied up so far then stay separate copies)",
			sbi->work_name, LFS_INDEX_NAME, sbi->upper->name,
			LFS_INDEX_NAME);
	else if (len)
		lfs_err(fc, "workdir \"%s\": cannot read or mark %s/ (%zd)",
			sbi->work_name, LFS_INDEX_NAME, len);
	return len;
}

/*
 * An index entry no name uses any more: only index/ links the copy, and
 * no lower name is left to show it (every one was linked up, then went).
 */
static bool lfs_index_orphan(const struct lfs_sb *sbi, struct dentry *d)
{
	struct lfs_origin origin;
	unsigned int lower_links;

	if (d_is_negative(d) || d_is_dir(d) || d_inode(d)->i_nlink != 1 ||
	    lfs_read_origin(sbi, d, &origin) ||
	    !(origin.flags & LFS_ORIGIN_INDEXED))
		return false;
	return !lfs_read_lower_links(sbi, d, &lower_links) && !lower_links;
}

/* unlink @d, an entry of index/, if lfs_index_orphan() */
static int lfs_index_drop_orphan(struct lfs_sb *sbi, struct dentry *dir,
				 struct dentry *d, unsigned char type,
				 void *arg)
{
	if (type == DT_DIR || !lfs_index_orphan(sbi, d))
		return 0;
	return lfs_unlink_real(mnt_user_ns(sbi->upper->mnt), dir, d);
}

/* remove the index entries no name uses any more (lfs_index_orphan()) */
static int lfs_index_cleanup(struct fs_context *fc, struct lfs_sb *sbi)
{
	static const struct lfs_child_walk walk = {
		.fn = lfs_index_drop_orphan, .subclass = I_MUTEX_PARENT,
	};
	int err;

	err = lfs_walk_children(sbi, sbi->index, &walk);
	if (err)
		lfs_err(fc, "workdir \"%s\": cannot remove the unused entries of %s/ (%d)",
			sbi->work_name, LFS_INDEX_NAME, err);
	return err;
}

/*
 * index/, the hard-link index, claimed for this upper directory and
 * rid of its unused entries.  A userxattr mount has none: its entries
 * are matched by origin markers, which such a mount does not read
 * (lfs_use_origin()); an index/ that a mount without userxattr made
 * stays as it is.
 */
static int lfs_index_prepare(struct fs_context *fc, struct lfs_sb *sbi)
{
	int err;

	if (!lfs_use_origin(sbi))
		return 0;
	sbi->index = lfs_work_subdir(fc, sbi, LFS_INDEX_NAME);
	if (IS_ERR(sbi->index)) {
		err = PTR_ERR(sbi->index);
		sbi->index = NULL;
		return err;
	}
	err = lfs_index_claim(fc, sbi);
	if (!err)
		err = lfs_index_cleanup(fc, sbi);
	return err;
}

/*
 * xattrs under the mount's prefix carry every marker: the upper
 * filesystem must keep them (tmpfs keeps no user.* xattrs before 6.6)
 */
static int lfs_probe_xattr(struct fs_context *fc, struct lfs_sb *sbi)
{
	int err;

	err = lfs_set_marker(sbi, sbi->work, LFS_XA_PROBE, LFS_XATTR_TRUE, 1);
	if (!err)
		err = lfs_remove_marker(sbi, sbi->work, LFS_XA_PROBE);
	if (err)
		lfs_err(fc, "upperdir \"%s\": the filesystem does not keep %s* xattrs (%d)",
			sbi->upper->name, sbi->xattr->prefix, err);
	return err ? -EINVAL : 0;
}

/* readdir must say what type each name is, or whiteouts cost a lookup each */
static int lfs_probe_dtype(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct lfs_new nw = { .mode = S_IFREG | 0600 };
	struct lfs_names names;
	const char *rec = NULL;
	struct dentry *tmp;
	bool typed = false;
	int err;

	tmp = lfs_work_create(sbi, &nw);
	if (IS_ERR(tmp))
		return PTR_ERR(tmp);
	err = lfs_read_names(sbi->upper->mnt, sbi->work, &names);
	while (!err && (rec = lfs_names_next(&names, rec)))
		typed |= rec[0] == DT_REG;
	if (!err)
		kvfree(names.buf);
	lfs_work_remove(sbi, tmp);
	dput(tmp);
	if (!err && !typed) {
		lfs_err(fc, "upperdir \"%s\": the filesystem does not report file types (d_type)",
			sbi->upper->name);
		err = -EINVAL;
	}
	return err;
}

/**
 * lfs_work_prepare - set up work/ and index/ at mount
 * @fc: the mount context
 * @sbi: the superblock info, with its upper layer taken
 *
 * Return: 0, or -errno after logging why.
 */
int lfs_work_prepare(struct fs_context *fc, struct lfs_sb *sbi)
{
	struct super_block *usb = sbi->upper->mnt->mnt_sb;
	int err;

	/*
	 * A volatile mount's syncs fail once the upper filesystem meets a
	 * writeback error (lfs_sync_status()); one it has not reported yet
	 * would fail them from the start.
	 */
	if (sbi->volatile_mount) {
		sbi->upper_wb_err = errseq_sample(&usb->s_wb_err);
		if (errseq_check(&usb->s_wb_err, sbi->upper_wb_err)) {
			lfs_err(fc, "upperdir \"%s\": volatile: the filesystem has a writeback error not reported yet; sync it (syncfs) first",
				sbi->upper->name);
			return -EIO;
		}
	}
	err = mnt_want_write(sbi->upper->mnt);
	if (err) {
		lfs_err(fc, "upperdir \"%s\": not writable (%d)", sbi->upper->name, err);
		return err;
	}
	sbi->work = lfs_work_subdir(fc, sbi, LFS_WORK_NAME);
	if (IS_ERR(sbi->work)) {
		err = PTR_ERR(sbi->work);
		sbi->work = NULL;
		goto out;
	}
	err = lfs_work_check_incompat(fc, sbi);
	if (err)
		goto out;
	err = lfs_remove_tree(sbi, sbi->work, 0);
	if (err) {
		lfs_err(fc, "workdir \"%s\": cannot empty %s/ (%d)",
			sbi->work_name, LFS_WORK_NAME, err);
		goto out;
	}
	err = lfs_probe_xattr(fc, sbi);
	if (!err)
		err = lfs_probe_dtype(fc, sbi);
	if (!err)
		err = lfs_index_prepare(fc, sbi);
	if (!err && sbi->volatile_mount)
		err = lfs_work_mark_volatile(fc, sbi);
out:
	mnt_drop_write(sbi->upper->mnt);
	return err;
}

/**
 * lfs_create_real - make an object in the upper filesystem
 * @sbi: the superblock info
 * @parent: the real directory, locked by the caller
 * @d: a negative dentry in @parent; consumed
 * @nw: what to make
 *
 * The owner is the current fsuid/fsgid.  Caller holds write access to
 * the upper mount.
 * Return: the new positive dentry, or an ERR_PTR.
 */
struct dentry *lfs_create_real(struct lfs_sb *sbi, struct dentry *parent,
			       struct dentry *d, const struct lfs_new *nw)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *dir = d_inode(parent);
	struct dentry *again;
	int err;

	if (nw->link_to) {
		err = vfs_link(nw->link_to, userns, dir, d, NULL);
	} else {
		switch (nw->mode & S_IFMT) {
		case S_IFREG:
			err = vfs_create(userns, dir, d, nw->mode, true);
			break;
		case S_IFDIR:
			err = vfs_mkdir(userns, dir, d, nw->mode);
			break;
		case S_IFLNK:
			err = vfs_symlink(userns, dir, d, nw->symlink);
			break;
		default:
			err = vfs_mknod(userns, dir, d, nw->mode, nw->rdev);
			break;
		}
	}
	if (!err && (d_unhashed(d) || d_is_negative(d))) {
		/* some filesystems leave the new dentry unhashed */
		again = lookup_one(userns, d->d_name.name, parent, d->d_name.len);
		dput(d);
		d = again;
		if (IS_ERR(d))
			return d;
		if (d_is_negative(d))
			err = -EIO;
	}
	if (err) {
		dput(d);
		return ERR_PTR(err);
	}
	return d;
}

/**
 * lfs_work_create - a new object in work/, under a temporary name
 * @sbi: the superblock info
 * @nw: what to make
 *
 * As lfs_create_real().
 * Return: the new positive dentry, or an ERR_PTR.
 */
struct dentry *lfs_work_create(struct lfs_sb *sbi, const struct lfs_new *nw)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	struct inode *dir = d_inode(sbi->work);
	char name[24];
	struct dentry *d;

	snprintf(name, sizeof(name), "#%lx",
		 (unsigned long)atomic_long_inc_return(&sbi->tmp_seq));
	inode_lock_nested(dir, I_MUTEX_PARENT);
	d = lookup_one(userns, name, sbi->work, strlen(name));
	if (!IS_ERR(d) && d_is_positive(d)) {
		dput(d);
		d = ERR_PTR(-EEXIST);
	}
	if (!IS_ERR(d))
		d = lfs_create_real(sbi, sbi->work, d, nw);
	inode_unlock(dir);
	return d;
}

/**
 * lfs_work_whiteout - a whiteout in work/, to be renamed into place
 * @sbi: the superblock info
 *
 * A native one, or with whiteout=chardev a character device 0/0.
 * Return: the whiteout's dentry, or an ERR_PTR.
 */
struct dentry *lfs_work_whiteout(struct lfs_sb *sbi)
{
	struct lfs_new nw = {
		.mode = S_IFLNK | 0777,
		.symlink = LFS_WHITEOUT_TARGET,
	};
	struct lfs_new chardev = {
		.mode = S_IFCHR,
		.rdev = WHITEOUT_DEV,
	};
	struct dentry *wh;
	int err;

	if (sbi->whiteout == LFS_WH_CHARDEV)
		return lfs_work_create(sbi, &chardev);
	wh = lfs_work_create(sbi, &nw);
	if (IS_ERR(wh))
		return wh;
	err = lfs_set_marker(sbi, wh, LFS_XA_WHITEOUT, LFS_XATTR_TRUE, 1);
	if (err) {
		lfs_work_remove(sbi, wh);
		dput(wh);
		return ERR_PTR(err);
	}
	return wh;
}

/**
 * lfs_work_remove - remove an object from work/, with what it holds
 * @sbi: the superblock info
 * @victim: a dentry in work/
 *
 * Failure only leaves the object for the next mount to remove.
 */
void lfs_work_remove(struct lfs_sb *sbi, struct dentry *victim)
{
	struct inode *dir = d_inode(sbi->work);
	int err = 0;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	if (victim->d_parent == sbi->work && d_is_positive(victim) &&
	    !d_unhashed(victim))
		err = lfs_remove_child(sbi, sbi->work, victim, 0);
	inode_unlock(dir);
	if (err)
		pr_warn_ratelimited("cannot remove %pd from the work directory (%d); the next mount will\n",
				    victim, err);
}

/**
 * lfs_set_xattr - set one of layerfs's markers on an upper object
 * @sbi: the superblock info
 * @upper: the upper object
 * @name: the xattr
 * @value: its value
 * @size: the value's length
 *
 * Caller runs as the mounter.
 */
int lfs_set_xattr(struct lfs_sb *sbi, struct dentry *upper, const char *name,
		  const void *value, size_t size)
{
	return vfs_setxattr(mnt_user_ns(sbi->upper->mnt), upper, name, value,
			    size, 0);
}

/**
 * lfs_set_marker - set one of the mount's markers on an upper object
 * @sbi: the superblock info: the marker's name (lfs_xattr_name())
 * @upper: the upper object
 * @xa: the marker
 * @value: its value
 * @size: the value's length
 *
 * Caller runs as the mounter.
 */
int lfs_set_marker(struct lfs_sb *sbi, struct dentry *upper, enum lfs_xattr xa,
		   const void *value, size_t size)
{
	return lfs_set_xattr(sbi, upper, lfs_xattr_name(sbi, xa), value, size);
}

/**
 * lfs_remove_marker - remove one of the mount's markers from an upper object
 * @sbi: the superblock info
 * @upper: the upper object
 * @xa: the marker
 *
 * Caller runs as the mounter.  Return: 0, or -errno (-ENODATA: none).
 */
int lfs_remove_marker(struct lfs_sb *sbi, struct dentry *upper,
		      enum lfs_xattr xa)
{
	return vfs_removexattr(mnt_user_ns(sbi->upper->mnt), upper,
			       lfs_xattr_name(sbi, xa));
}

/* lfs_clear_whiteouts()'s step: a whiteout goes, anything else stops it */
static int lfs_clear_whiteout(struct lfs_sb *sbi, struct dentry *dir,
			      struct dentry *child, unsigned char type,
			      void *arg)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	const struct qstr *name = &child->d_name;

	if (lfs_aufs(sbi) && lfs_is_aufs_name(name->name, name->len))
		return lfs_unlink_real(userns, dir, child);
	if (lfs_is_whiteout(sbi, sbi->upper, child, 0))
		return vfs_unlink(userns, d_inode(dir), child, NULL);
	return -ENOTEMPTY;
}

/**
 * lfs_clear_whiteouts - remove the whiteouts of an upper directory
 * @sbi: the superblock info
 * @upperdir: the directory, not locked
 *
 * Used before a merged directory that looks empty is removed or replaced.
 * With whiteout=aufs, every ".wh." name goes too (whiteouts, the opaque
 * marker).  Caller holds the layerfs directory's lock, so nothing is
 * added meanwhile.
 * Return: 0, -ENOTEMPTY if it holds anything but whiteouts, or -errno.
 */
int lfs_clear_whiteouts(struct lfs_sb *sbi, struct dentry *upperdir)
{
	static const struct lfs_child_walk walk = {
		.fn = lfs_clear_whiteout, .subclass = I_MUTEX_CHILD,
	};

	return lfs_walk_children(sbi, upperdir, &walk);
}

/**
 * lfs_aufs_mark - make an aufs marker in an upper directory
 * @sbi: the superblock info
 * @dir: the upper directory (or one being built in work/), not locked
 * @name: the marker: ".wh.NAME" or LFS_AUFS_OPAQUE_NAME
 *
 * An empty regular file of LFS_AUFS_MARKER_MODE, owned by the mounter as
 * every marker is.  One that is there already is kept.  Caller holds
 * write access to the upper layer.
 * Return: 0, or -errno.
 */
int lfs_aufs_mark(struct lfs_sb *sbi, struct dentry *dir,
		  const struct qstr *name)
{
	struct lfs_new nw = { .mode = S_IFREG | LFS_AUFS_MARKER_MODE };
	const struct cred *old_cred;
	struct dentry *d;

	old_cred = override_creds(sbi->creator_cred);
	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	d = lookup_one(mnt_user_ns(sbi->upper->mnt), name->name, dir, name->len);
	if (!IS_ERR(d) && d_is_negative(d))
		d = lfs_create_real(sbi, dir, d, &nw);
	inode_unlock(d_inode(dir));
	revert_creds(old_cred);
	if (IS_ERR(d))
		return PTR_ERR(d);
	dput(d);
	return 0;
}

/**
 * lfs_aufs_unmark - remove an aufs marker from an upper directory
 * @sbi: the superblock info
 * @dir: the upper directory, not locked
 * @name: the marker
 *
 * Nothing to do when it is not there.  Caller holds write access to the
 * upper layer.
 * Return: 0, or -errno.
 */
int lfs_aufs_unmark(struct lfs_sb *sbi, struct dentry *dir,
		    const struct qstr *name)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	const struct cred *old_cred;
	struct dentry *d;
	int err;

	old_cred = override_creds(sbi->creator_cred);
	inode_lock_nested(d_inode(dir), I_MUTEX_PARENT);
	d = lookup_one(userns, name->name, dir, name->len);
	err = PTR_ERR_OR_ZERO(d);
	if (!err && d_is_positive(d))
		err = lfs_unlink_real(userns, dir, d);
	if (!IS_ERR(d))
		dput(d);
	inode_unlock(d_inode(dir));
	revert_creds(old_cred);
	return err;
}

/**
 * lfs_index_name - the index entry's name for a lower object
 * @ino: the st_ino layerfs shows for it
 * @buf: room for LFS_INDEX_NAMELEN bytes
 */
void lfs_index_name(u64 ino, char *buf)
{
	snprintf(buf, LFS_INDEX_NAMELEN, "%016llx", ino);
}

/*
 * Index entry @d is the copy of @lower, which layerfs shows as @ino: its
 * origin marker says so (written when the copy was indexed), and it is
 * an object of the same type, of the same device number for a device.
 * An entry made for another lower stack whose numbers happen to match
 * is not (squashfs, erofs and isofs have no generations): a lower file
 * must never show another type's object.
 */
static bool lfs_index_matches(const struct lfs_sb *sbi, struct dentry *d,
			      u64 ino, const struct inode *lower)
{
	struct inode *copy = d_inode(d);
	struct lfs_origin origin;

	if (!copy || d_is_dir(d) || lfs_read_origin(sbi, d, &origin))
		return false;
	if (!(origin.flags & LFS_ORIGIN_INDEXED) ||
	    le64_to_cpu(origin.ino) != ino ||
	    le64_to_cpu(origin.real_ino) != lower->i_ino ||
	    le32_to_cpu(origin.generation) != lower->i_generation)
		return false;
	if (inode_wrong_type(copy, lower->i_mode) ||
	    ((S_ISCHR(lower->i_mode) || S_ISBLK(lower->i_mode)) &&
	     copy->i_rdev != lower->i_rdev)) {
		pr_warn_ratelimited("index entry %pd: not the copy of its lower object (type or device differs): ignored\n",
				    d);
		return false;
	}
	return true;
}

/* index/'s entry for the object shown as @ino, maybe negative, or an ERR_PTR */
static struct dentry *lfs_index_entry(struct lfs_sb *sbi, u64 ino)
{
	char name[LFS_INDEX_NAMELEN];

	lfs_index_name(ino, name);
	return lookup_one_unlocked(mnt_user_ns(sbi->upper->mnt), name,
				   sbi->index, strlen(name));
}

/**
 * lfs_index_holds - is @upper the index's copy of the object shown as @ino?
 * @sbi: the superblock info
 * @ino: the st_ino its origin marker records
 * @upper: an upper object
 *
 * Caller runs as the mounter.
 */
bool lfs_index_holds(struct lfs_sb *sbi, u64 ino, struct dentry *upper)
{
	struct dentry *d;
	bool holds;

	if (!sbi->index)
		return false;
	d = lfs_index_entry(sbi, ino);
	if (IS_ERR(d))
		return false;
	holds = d_inode(d) == d_inode(upper);
	dput(d);
	return holds;
}

/**
 * lfs_index_lookup - find the copy of a lower object with several links
 * @sbi: the superblock info
 * @ino: the st_ino layerfs shows for the lower object
 * @lower: the lower inode, to check the entry really is its copy
 *
 * Caller runs as the mounter.
 * Return: the upper copy's index dentry, NULL if there is none (or the
 * entry is stale: it was made for another lower stack), or an ERR_PTR.
 */
struct dentry *lfs_index_lookup(struct lfs_sb *sbi, u64 ino,
				const struct inode *lower)
{
	struct dentry *d;

	d = lfs_index_entry(sbi, ino);
	if (IS_ERR(d))
		return PTR_ERR(d) == -ENOENT ? NULL : d;
	if (lfs_index_matches(sbi, d, ino, lower))
		return d;
	dput(d);
	return NULL;
}
