// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: copy-up.
 *
 * Before anything changes an object that lives in a lower layer, the
 * object is copied to the upper layer, its parent directories first.
 * The sequence for one object:
 *
 *   1. take the layerfs inode's copy-up lock (lfs_inode.lock); if another
 *      task copied the object up meanwhile, stop;
 *   2. as the mounter, check that the mounter may read the data to copy
 *      and can map the owner (lfs_cu_prepare()), then build the copy in
 *      work/ under a temporary name:
 *      data (sparse holes kept; cloned where the filesystem shares
 *      extents, else spliced in 1 MiB chunks, between which a fatal
 *      signal aborts), owner, xattrs (ACLs, capabilities), inode
 *      flags, the origin marker, mode, times;
 *   3. for a non-directory with several links, link the copy into index/
 *      so that its other names find it;
 *   4. lock_rename(work/, upper parent) and rename the copy into place;
 *   5. publish the upper dentry in the layerfs dentry and inode.
 *
 * Until step 4 the upper layer does not show the copy, so a crash leaves
 * the lower object visible; after it the copy is complete.  Leftovers in
 * work/ are removed at the next mount.  A name whose inode already has a
 * copy (another link of the same lower file) is linked to it instead.
 *
 * Metadata-only copy-up (metacopy=on): a change of a lower regular
 * file's metadata alone (chmod, chown, utimes, xattrs and ACLs, chattr)
 * copies it up as above without its data: the copy has the data's size
 * as a hole and the metacopy marker (LFS_XATTR_METACOPY), and reads go
 * on to the data below, which the lookup finds by the same path.  Files
 * with several links (the index) and empty files are copied whole.  The
 * data follows when something needs it in the upper layer (an open for
 * write, a truncate, a rename or link of the file: lfs_copy_up() but
 * with LFS_CU_METADATA): lfs_copy_up_data() fills the copy in place,
 * syncs it, and removes the marker last, so that a crash in the middle
 * leaves a metacopy file whose data is still below.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/xattr.h>
#include <linux/fileattr.h>
#include <linux/security.h>
#include <linux/splice.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/sched/signal.h>
#include "layerfs.h"

/* data is copied in chunks of this size, checking for signals between */
#define LFS_CU_CHUNK	SZ_1M

/* what one copy-up needs to know */
struct lfs_cu {
	struct lfs_sb *sbi;
	struct dentry *dentry;		/* the layerfs dentry */
	struct path lower;		/* its top-most lower object */
	struct path data;		/* the lower object with its data */
	struct lfs_layer *data_layer;	/* the layer of @data */
	struct kstat stat;		/* the lower object's attributes */
	struct dentry *upperparent;	/* where the copy goes */
	struct kstat pstat;		/* its times before the copy-up */
	struct dentry *temp;		/* the copy, in work/ */
	bool indexed;			/* link the copy into index/ */
	bool metacopy;			/* copy the metadata only */
	struct lfs_metacopy mc;		/* @metacopy: the copy's marker */
	unsigned int flags;		/* LFS_CU_* */
};

/**
 * lfs_want_write - get write access to the upper layer
 * @dentry: any layerfs dentry of the mount
 *
 * Return: 0, or -EROFS when there is no upper layer.
 */
int lfs_want_write(struct dentry *dentry)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);

	if (!sbi->upper)
		return -EROFS;
	return mnt_want_write(sbi->upper->mnt);
}

void lfs_drop_write(struct dentry *dentry)
{
	mnt_drop_write(LFS_SB(dentry->d_sb)->upper->mnt);
}

/**
 * lfs_set_upper - publish a dentry's upper object
 * @dentry: the layerfs dentry, with an entry
 * @upper: the upper dentry; the reference moves to the entry
 *
 * Pairs with the acquire in lfs_upper().  Caller makes sure only one
 * upper is ever set (the copy-up lock, or the VFS's directory lock for a
 * new name).
 */
void lfs_set_upper(struct dentry *dentry, struct dentry *upper)
{
	struct lfs_entry *e = LFS_E(dentry);

	/* unreachable: callers saw no upper under the lock that orders them */
	if (WARN_ON_ONCE(e->upper)) {
		dput(upper);
		return;
	}
	/* the upper dentry is complete before readers can see it */
	smp_store_release(&e->upper, upper);
}

/* As the mounter, through the upper layer's mount (and its idmapping). */
static int lfs_cu_setattr(struct lfs_sb *sbi, struct dentry *upper,
			  struct iattr *attr)
{
	struct inode *inode = d_inode(upper);
	int err;

	inode_lock(inode);
	err = notify_change(mnt_user_ns(sbi->upper->mnt), upper, attr, NULL);
	inode_unlock(inode);
	return err;
}

/*
 * Copy [pos, end) of the lower file, in chunks; holes are not written.
 * Caller holds write access to the upper mount (sb_writers): so
 * do_splice_direct(), not vfs_copy_file_range(), which would take it
 * again (and cannot cross filesystems in 6.1 anyway).
 */
static int lfs_cu_copy_range(struct file *in, struct file *out, loff_t pos,
			     loff_t end)
{
	while (pos < end) {
		size_t len = min_t(loff_t, end - pos, LFS_CU_CHUNK);
		loff_t in_pos = pos, out_pos = pos;
		long n;

		if (fatal_signal_pending(current))
			return -EINTR;
		n = do_splice_direct(in, &in_pos, out, &out_pos, len, 0);
		if (n < 0)
			return n;
		if (!n)
			return -EIO;	/* the lower file is shorter than it said */
		pos += n;
		cond_resched();
	}
	return 0;
}

/*
 * Copy @size bytes of the data of the regular file @src into the upper
 * regular file @dst, keeping holes.  The caller checked that the mounter
 * may read @src.
 */
static int lfs_cu_copy_file(struct lfs_sb *sbi, const struct path *src,
			    struct dentry *dst, loff_t size)
{
	struct path temp = { .mnt = sbi->upper->mnt, .dentry = dst };
	struct iattr attr = { .ia_valid = ATTR_SIZE, .ia_size = size };
	struct file *in, *out;
	loff_t pos = 0;
	int err;

	err = lfs_cu_setattr(sbi, dst, &attr);
	if (err)
		return err;
	in = dentry_open(src, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(in))
		return PTR_ERR(in);
	out = dentry_open(&temp, O_WRONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(out)) {
		err = PTR_ERR(out);
		goto out_in;
	}

	/* a filesystem that shares extents does it all at once */
	if (do_clone_file_range(in, 0, out, 0, size, 0) == size)
		goto out_out;

	while (pos < size) {
		loff_t data, hole;

		data = vfs_llseek(in, pos, SEEK_DATA);
		if (data == -ENXIO)
			break;		/* a hole up to the end */
		if (data < 0) {
			/* no SEEK_DATA: copy it all */
			data = pos;
			hole = size;
		} else {
			hole = vfs_llseek(in, data, SEEK_HOLE);
			if (hole < 0 || hole > size)
				hole = size;
		}
		err = lfs_cu_copy_range(in, out, data, hole);
		if (err)
			break;
		pos = hole;
	}
	/* the copy is complete on disk before it shows (but when volatile) */
	if (!err && lfs_should_sync(sbi))
		err = vfs_fsync(out, 0);
out_out:
	fput(out);
out_in:
	fput(in);
	return err;
}

/* The data of a regular file, from the lower object that holds it. */
static int lfs_cu_copy_data(struct lfs_cu *cu)
{
	return lfs_cu_copy_file(cu->sbi, &cu->data, cu->temp, cu->stat.size);
}

/*
 * A metadata-only copy: the data's size, as a hole, and the marker that
 * says the data is below, with the data's digest if there is one
 * (lfs_verity_metacopy()); empty without, as layerfs always wrote it.
 */
static int lfs_cu_make_metacopy(struct lfs_cu *cu)
{
	struct iattr attr = { .ia_valid = ATTR_SIZE, .ia_size = cu->stat.size };
	int err;

	err = lfs_cu_setattr(cu->sbi, cu->temp, &attr);
	if (err)
		return err;
	if (!cu->mc.digest_algo)
		return lfs_set_marker(cu->sbi, cu->temp, LFS_XA_METACOPY, "", 0);
	return lfs_set_marker(cu->sbi, cu->temp, LFS_XA_METACOPY, &cu->mc,
			      cu->mc.len);
}

/* Copy one xattr; the upper filesystem may not know some namespaces. */
static int lfs_cu_copy_xattr(struct lfs_cu *cu, const char *name)
{
	struct user_namespace *luserns = mnt_user_ns(cu->lower.mnt);
	ssize_t size;
	void *value;
	int err;

	err = security_inode_copy_up_xattr(name);
	if (err < 0 && err != -EOPNOTSUPP)
		return err;
	if (err == 1)
		return 0;	/* the LSM says: do not copy */

	size = vfs_getxattr(luserns, cu->lower.dentry, name, NULL, 0);
	if (size == -ENODATA)
		return 0;
	if (size < 0)
		return size;
	value = kvmalloc(size ? size : 1, GFP_KERNEL);
	if (!value)
		return -ENOMEM;
	size = vfs_getxattr(luserns, cu->lower.dentry, name, value, size);
	err = size;
	if (size >= 0)
		err = lfs_set_xattr(cu->sbi, cu->temp, name, value, size);
	kvfree(value);
	if (err == -EOPNOTSUPP) {
		pr_warn_ratelimited("copy-up of %pd: xattr %s not kept: the upper filesystem does not support it\n",
				    cu->dentry, name);
		err = 0;
	}
	return err;
}

static int lfs_cu_copy_xattrs(struct lfs_cu *cu)
{
	ssize_t len, size;
	char *list, *name;
	int err = 0;

	size = vfs_listxattr(cu->lower.dentry, NULL, 0);
	if (size <= 0)
		return size == -EOPNOTSUPP ? 0 : size;
	list = kvmalloc(size, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	len = vfs_listxattr(cu->lower.dentry, list, size);
	if (len < 0) {
		err = len;
		goto out;
	}
	for (name = list; !err && name < list + len; name += strlen(name) + 1) {
		/* markers are not copied: the copy gets the mount's own anew */
		if (lfs_is_private_xattr(cu->sbi, name))
			continue;
		err = lfs_cu_copy_xattr(cu, name);
	}
out:
	kvfree(list);
	return err;
}

static int lfs_cu_set_origin(struct lfs_cu *cu)
{
	struct inode *lower = d_inode(cu->lower.dentry);
	struct lfs_origin origin = {
		.version = LFS_ORIGIN_V1,
		.flags = cu->indexed ? LFS_ORIGIN_INDEXED : 0,
		.nlink = cpu_to_le16(min_t(unsigned int, cu->stat.nlink, U16_MAX)),
		.generation = cpu_to_le32(lower->i_generation),
		.ino = cpu_to_le64(d_inode(cu->dentry)->i_ino),
		.real_ino = cpu_to_le64(lower->i_ino),
	};

	return lfs_set_marker(cu->sbi, cu->temp, LFS_XA_ORIGIN, &origin,
			      sizeof(origin));
}

/* Record how many names of an indexed copy are still only below. */
static int lfs_write_lower_links(struct lfs_sb *sbi, struct dentry *upper,
				 unsigned int lower_links)
{
	__le32 val = cpu_to_le32(lower_links);

	return lfs_set_marker(sbi, upper, LFS_XA_LOWER_LINKS, &val,
			      sizeof(val));
}

/* the fileattr flags a copy keeps on its inode */
#define LFS_CU_FS_FLAGS		(FS_SYNC_FL | FS_NOATIME_FL)

/*
 * Keep the flags of a regular file or directory: sync and noatime on the
 * copy; append-only and immutable in its marker (the copy so flagged
 * could not be renamed into place, nor a child's copy into it).  When
 * the lower filesystem has no such flags, there are none to keep; when
 * the upper one has none, sync and noatime are lost.
 */
static int lfs_cu_copy_fileattr(struct lfs_cu *cu)
{
	struct path temp = { .mnt = cu->sbi->upper->mnt, .dentry = cu->temp };
	struct fileattr lfa = { .flags_valid = true };
	struct fileattr ufa = { .flags_valid = true };
	int err;

	if (!S_ISREG(cu->stat.mode) && !S_ISDIR(cu->stat.mode))
		return 0;
	err = lfs_real_fileattr_get(&cu->lower, &lfa);
	if (err == -ENOTTY || err == -EINVAL)
		return 0;
	if (err)
		return err;
	if (lfa.flags & (FS_APPEND_FL | FS_IMMUTABLE_FL)) {
		err = lfs_write_protattr(d_inode(cu->dentry), cu->temp,
					 lfa.flags);
		if (err)
			return err;
	}
	if (!(lfa.flags & LFS_CU_FS_FLAGS))
		return 0;
	err = lfs_real_fileattr_get(&temp, &ufa);
	if (err == -ENOTTY || err == -EINVAL) {
		pr_warn_ratelimited("copy-up of %pd: flags %#x not kept: the upper filesystem has none\n",
				    cu->dentry, lfa.flags & LFS_CU_FS_FLAGS);
		return 0;
	}
	if (err)
		return err;
	fileattr_fill_flags(&ufa, (ufa.flags & ~LFS_CU_FS_FLAGS) |
			    (lfa.flags & LFS_CU_FS_FLAGS));
	return lfs_real_fileattr_set(&temp, &ufa);
}

/*
 * Owner first (it clears set-id bits and capabilities), then the rest.
 * The owner is the one the lower layer's mount shows (its idmapping
 * applied by vfs_getattr()); it goes through the upper layer's mount,
 * whose idmapping maps it back (lfs_cu_check_ids() checked that it can).
 */
static int lfs_cu_copy_attrs(struct lfs_cu *cu)
{
	struct iattr attr = {
		.ia_valid = ATTR_UID | ATTR_GID,
		.ia_vfsuid = VFSUIDT_INIT(cu->stat.uid),
		.ia_vfsgid = VFSGIDT_INIT(cu->stat.gid),
	};
	int err;

	err = lfs_cu_setattr(cu->sbi, cu->temp, &attr);
	if (!err)
		err = lfs_cu_copy_xattrs(cu);
	if (!err)
		err = lfs_cu_copy_fileattr(cu);
	if (!err && lfs_use_origin(cu->sbi))
		err = lfs_cu_set_origin(cu);
	if (!err && cu->indexed)
		err = lfs_write_lower_links(cu->sbi, cu->temp,
					    cu->stat.nlink - 1);
	if (!err && !S_ISLNK(cu->stat.mode)) {
		attr.ia_valid = ATTR_MODE;
		attr.ia_mode = cu->stat.mode;
		err = lfs_cu_setattr(cu->sbi, cu->temp, &attr);
	}
	if (!err) {
		attr.ia_valid = ATTR_ATIME | ATTR_MTIME | ATTR_ATIME_SET |
				ATTR_MTIME_SET;
		attr.ia_atime = cu->stat.atime;
		attr.ia_mtime = cu->stat.mtime;
		err = lfs_cu_setattr(cu->sbi, cu->temp, &attr);
	}
	return err;
}

/*
 * Lock index/ and look up the entry of the object being copied up, whose
 * name goes into @name (LFS_INDEX_NAMELEN).  The caller unlocks index/.
 */
static struct dentry *lfs_cu_index_entry(struct lfs_cu *cu, char *name)
{
	lfs_index_name(d_inode(cu->dentry)->i_ino, name);
	inode_lock_nested(d_inode(cu->sbi->index), I_MUTEX_PARENT);
	return lookup_one(mnt_user_ns(cu->sbi->upper->mnt), name,
			  cu->sbi->index, strlen(name));
}

/* Link the copy into index/, replacing a stale entry of the same name. */
static int lfs_cu_link_index(struct lfs_cu *cu)
{
	struct user_namespace *userns = mnt_user_ns(cu->sbi->upper->mnt);
	struct inode *dir = d_inode(cu->sbi->index);
	char name[LFS_INDEX_NAMELEN];
	struct dentry *d;
	int err;

	d = lfs_cu_index_entry(cu, name);
	err = PTR_ERR_OR_ZERO(d);
	if (err)
		goto out_unlock;
	if (d_is_positive(d)) {
		err = vfs_unlink(userns, dir, d, NULL);
		dput(d);
		if (err)
			goto out_unlock;
		d = lookup_one(userns, name, cu->sbi->index, strlen(name));
		err = PTR_ERR_OR_ZERO(d);
		if (err)
			goto out_unlock;
	}
	err = vfs_link(cu->temp, userns, dir, d, NULL);
	dput(d);
out_unlock:
	inode_unlock(dir);
	return err;
}

/*
 * The copy could not be put in place: take its index entry back, so that
 * no other name of the object links to a copy that no name holds (and
 * whose count of lower names would be one short).  Best effort: an entry
 * left behind is that of a copy of the same object, made again and
 * linked over it by the next copy-up.
 */
static void lfs_cu_unlink_index(struct lfs_cu *cu)
{
	struct inode *dir = d_inode(cu->sbi->index);
	char name[LFS_INDEX_NAMELEN];
	struct dentry *d;

	d = lfs_cu_index_entry(cu, name);
	if (!IS_ERR(d)) {
		if (d_inode(d) == d_inode(cu->temp))
			vfs_unlink(mnt_user_ns(cu->sbi->upper->mnt), dir, d,
				   NULL);
		dput(d);
	}
	inode_unlock(dir);
}

/*
 * The name was taken while the copy was made: a rename or unlink in the
 * parent made this dentry a dead one (an open file may still use it).
 * Keep the copy as the unlinked object it now is, as any filesystem
 * would, by unlinking it from work/.  A directory cannot be kept so.
 */
static struct dentry *lfs_cu_orphan(struct lfs_cu *cu)
{
	struct user_namespace *userns = mnt_user_ns(cu->sbi->upper->mnt);
	struct inode *dir = d_inode(cu->sbi->work);
	int err = -ENOENT;

	if (d_is_dir(cu->temp))
		return ERR_PTR(err);
	inode_lock_nested(dir, I_MUTEX_PARENT);
	if (cu->temp->d_parent == cu->sbi->work)
		err = lfs_unlink_real(userns, cu->sbi->work, cu->temp);
	inode_unlock(dir);
	if (err)
		return ERR_PTR(err);
	return dget(cu->temp);
}

/*
 * The copy went into a directory whose entries the caller did not change,
 * as far as the mount shows: give the directory back the times it had
 * before (best effort, as overlayfs does).  Caller runs as the mounter and
 * holds the directory's i_rwsem.
 */
static void lfs_cu_keep_parent_times(struct lfs_cu *cu)
{
	struct iattr attr = {
		.ia_valid = ATTR_ATIME | ATTR_MTIME | ATTR_ATIME_SET |
			    ATTR_MTIME_SET,
		.ia_atime = cu->pstat.atime,
		.ia_mtime = cu->pstat.mtime,
	};

	lockdep_assert_held(&d_inode(cu->upperparent)->i_rwsem);
	if (cu->pstat.result_mask & STATX_MTIME)
		notify_change(mnt_user_ns(cu->sbi->upper->mnt),
			      cu->upperparent, &attr, NULL);
}

/*
 * Rename the complete copy from work/ to its place in the upper layer.
 * Return: the upper dentry, or an ERR_PTR.
 */
static struct dentry *lfs_cu_install(struct lfs_cu *cu)
{
	struct user_namespace *userns = mnt_user_ns(cu->sbi->upper->mnt);
	struct dentry *work = cu->sbi->work, *trap, *target, *upper;
	const struct qstr *name = &cu->dentry->d_name;
	struct renamedata rd = {
		.old_mnt_userns = userns,
		.new_mnt_userns = userns,
	};
	bool taken = false;
	int err;

	trap = lock_rename(work, cu->upperparent);
	err = -EIO;
	if (trap == cu->temp || cu->temp->d_parent != work)
		goto out_unlock;
	target = lookup_one(userns, name->name, cu->upperparent, name->len);
	err = PTR_ERR_OR_ZERO(target);
	if (err)
		goto out_unlock;
	/* the name went, or holds another object, since the copy-up began */
	if (d_is_positive(target) || target == trap || d_unhashed(cu->dentry)) {
		taken = true;
		goto out_target;
	}

	rd.old_dir = d_inode(work);
	rd.old_dentry = cu->temp;
	rd.new_dir = d_inode(cu->upperparent);
	rd.new_dentry = target;
	err = vfs_rename(&rd);
	if (!err)
		lfs_cu_keep_parent_times(cu);
out_target:
	dput(target);
out_unlock:
	unlock_rename(work, cu->upperparent);
	if (taken)
		return lfs_cu_orphan(cu);
	if (err)
		return ERR_PTR(err);
	/*
	 * Local filesystems move the dentry; look it up where it now is.
	 * Whoever owns the upper layer may have put another object there
	 * since (of another type, too): it is not the copy.
	 */
	upper = lookup_one_unlocked(userns, name->name, cu->upperparent, name->len);
	if (!IS_ERR(upper) && d_inode(upper) != d_inode(cu->temp)) {
		pr_warn_ratelimited("copy-up of %pd: the upper layer changed under the copy\n",
				    cu->dentry);
		dput(upper);
		upper = ERR_PTR(-EIO);
	}
	return upper;
}

/* Does the copy take the lower file's data (lfs_cu_copy_data())? */
static bool lfs_cu_has_data(const struct lfs_cu *cu)
{
	return S_ISREG(cu->stat.mode) && !(cu->flags & LFS_CU_NODATA) &&
	       cu->stat.size && !cu->metacopy;
}

/*
 * The copy is owned by the lower object's owner and group, as the
 * mounter sees them: refuse an object whose uid or gid has no mapping in
 * the mounter's user namespace (overlayfs's answer to CVE-2023-0386: a
 * set-user-ID file of an owner the mounter cannot name, served by a
 * layer the mounter controls, must not become one in the upper layer).
 * In the initial user namespace every id has a mapping.  Caller runs as
 * the mounter, so current_user_ns() is the mounter's.
 */
static int lfs_cu_check_ids(const struct lfs_cu *cu)
{
	struct user_namespace *upper_userns = mnt_user_ns(cu->sbi->upper->mnt);
	struct user_namespace *fs_userns = cu->sbi->upper->mnt->mnt_sb->s_user_ns;

	if (!kuid_has_mapping(current_user_ns(), cu->stat.uid) ||
	    !kgid_has_mapping(current_user_ns(), cu->stat.gid))
		return -EOVERFLOW;
	/* and the upper mount's idmapping must have a place for them */
	if (!vfsuid_has_fsmapping(upper_userns, fs_userns,
				  VFSUIDT_INIT(cu->stat.uid)) ||
	    !vfsgid_has_fsmapping(upper_userns, fs_userns,
				  VFSGIDT_INIT(cu->stat.gid)))
		return -EOVERFLOW;
	return 0;
}

/*
 * verity= (verity.c): the marker a metadata-only copy gets, or a whole
 * copy instead (verity=require, data without fs-verity); the data a
 * whole copy of a lower metacopy file reads is checked against its
 * digest first.  Caller runs as the mounter, who may read the data.
 */
static int lfs_cu_verity(struct lfs_cu *cu, const struct lfs_layer *layer)
{
	int err;

	if (cu->metacopy) {
		err = lfs_verity_metacopy(cu->dentry, &cu->lower, layer,
					  &cu->data, &cu->mc);
		if (err <= 0)
			return err;
		cu->metacopy = false;
	}
	if (lfs_cu_has_data(cu) && cu->data.dentry != cu->lower.dentry)
		return lfs_verity_check_path(cu->dentry, &cu->data);
	return 0;
}

/*
 * The object's lower original, and what the copy must be made of.  The
 * checks that may refuse the copy-up come here, before anything is made
 * in work/: the owner's mapping, and for data to copy (now, or later
 * for a metadata-only copy), the mounter's read access to the lower file
 * (lfs_real_may_read(); dentry_open() in lfs_cu_copy_data() checks
 * nothing).  Caller runs as the mounter.
 */
static int lfs_cu_prepare(struct lfs_cu *cu)
{
	const struct lfs_entry *e = LFS_E(cu->dentry);
	const struct lfs_real *data = &e->real[e->nr - 1];
	int err;

	cu->lower.mnt = e->real[0].layer->mnt;
	cu->lower.dentry = e->real[0].dentry;
	/* a lower metacopy file's data is in its entry's last object */
	cu->data.mnt = data->layer->mnt;
	cu->data.dentry = data->dentry;
	cu->data_layer = data->layer;
	err = vfs_getattr(&cu->lower, &cu->stat, STATX_BASIC_STATS,
			  AT_STATX_SYNC_AS_STAT);
	if (err)
		return err;
	err = lfs_cu_check_ids(cu);
	if (err)
		return err;
	/*
	 * Any non-directory may have several names: symlinks, devices,
	 * fifos and sockets too, not only regular files.
	 */
	cu->indexed = cu->sbi->index && !S_ISDIR(cu->stat.mode) &&
		      cu->stat.nlink > 1;
	/*
	 * A file with several links is copied whole: its copy is in the
	 * index, which a metacopy file would have to keep in step.
	 */
	cu->metacopy = (cu->flags & LFS_CU_METADATA) &&
		       lfs_metacopy(cu->sbi) && S_ISREG(cu->stat.mode) &&
		       cu->stat.size && !cu->indexed;
	/*
	 * A metadata-only copy reads no data now, but will at its data
	 * copy-up, and lets reads through to it: it asks what a whole
	 * copy would, so that neither depends on metacopy=.  So does any
	 * copy-up of a lower metacopy file, even one that takes no data
	 * (O_TRUNC): its marker, which the layer's owner may have forged
	 * (userxattr), points at @data, and a copy made of it is the
	 * mounter's use of that pointer (lfs_data_may_read()).
	 */
	if (lfs_cu_has_data(cu) || cu->metacopy ||
	    (S_ISREG(cu->stat.mode) && cu->data.dentry != cu->lower.dentry)) {
		err = lfs_real_may_read(&cu->data);
		if (err)
			return err;
	}
	return lfs_cu_verity(cu, e->real[0].layer);
}

/*
 * Make the temporary object in W/work as the mounter, or as what a
 * security module makes of the mounter's credentials for a copy of this
 * object (security_inode_copy_up, asked as overlayfs asks it: for the
 * creation only; the copy itself runs as the mounter).
 */
static struct dentry *lfs_cu_work_create(struct lfs_cu *cu,
					 const struct lfs_new *nw)
{
	struct cred *lsm_cred = NULL;
	const struct cred *old;
	struct dentry *temp;
	int err;

	err = security_inode_copy_up(cu->dentry, &lsm_cred);
	if (err < 0) {
		if (lsm_cred)
			put_cred(lsm_cred);
		return ERR_PTR(err);
	}
	if (!lsm_cred)
		return lfs_work_create(cu->sbi, nw);
	old = override_creds(lsm_cred);
	temp = lfs_work_create(cu->sbi, nw);
	revert_creds(old);
	put_cred(lsm_cred);
	return temp;
}

static struct dentry *lfs_cu_make_temp(struct lfs_cu *cu)
{
	umode_t type = cu->stat.mode & S_IFMT;
	struct lfs_new nw = { .mode = type | 0600, .rdev = cu->stat.rdev };
	DEFINE_DELAYED_CALL(done);
	struct dentry *temp;

	switch (type) {
	case S_IFREG:
	case S_IFDIR:
		nw.mode = type | 0700;
		break;
	case S_IFLNK:
		nw.mode = S_IFLNK | 0777;
		nw.symlink = vfs_get_link(cu->lower.dentry, &done);
		if (IS_ERR(nw.symlink))
			return ERR_CAST(nw.symlink);
		break;
	}
	temp = lfs_cu_work_create(cu, &nw);
	do_delayed_call(&done);
	return temp;
}

/* Steps 2-4 for an object without any upper copy. */
static struct dentry *lfs_cu_copy(struct lfs_cu *cu)
{
	struct dentry *upper;
	int err;

	err = lfs_cu_prepare(cu);
	if (err)
		return ERR_PTR(err);
	cu->temp = lfs_cu_make_temp(cu);
	if (IS_ERR(cu->temp))
		return cu->temp;

	err = 0;
	if (lfs_cu_has_data(cu))
		err = lfs_cu_copy_data(cu);
	else if (cu->metacopy)
		err = lfs_cu_make_metacopy(cu);
	if (!err)
		err = lfs_cu_copy_attrs(cu);
	if (!err && cu->indexed)
		err = lfs_cu_link_index(cu);
	if (err) {
		upper = ERR_PTR(err);
		goto out_remove;
	}
	upper = lfs_cu_install(cu);
	if (!IS_ERR(upper))
		goto out;
	if (cu->indexed)
		lfs_cu_unlink_index(cu);
out_remove:
	lfs_work_remove(cu->sbi, cu->temp);
out:
	dput(cu->temp);
	return upper;
}

/* Another name of this inode has a copy: link this name to it. */
static struct dentry *lfs_cu_link_up(struct lfs_cu *cu, struct dentry *copy)
{
	struct user_namespace *userns = mnt_user_ns(cu->sbi->upper->mnt);
	const struct qstr *name = &cu->dentry->d_name;
	struct inode *dir = d_inode(cu->upperparent);
	struct dentry *target;
	int err;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	target = lookup_one(userns, name->name, cu->upperparent, name->len);
	if (IS_ERR(target))
		goto out_unlock;
	if (d_is_positive(target) || d_unhashed(cu->dentry)) {
		/* the name was taken or went meanwhile (see lfs_cu_install()) */
		dput(target);
		target = dget(copy);
		goto out_unlock;
	}
	err = vfs_link(copy, userns, dir, target, NULL);
	if (!err && d_is_negative(target))
		err = -EIO;
	if (!err)
		lfs_cu_keep_parent_times(cu);
	if (err) {
		dput(target);
		target = ERR_PTR(err);
	}
out_unlock:
	inode_unlock(dir);
	return target;
}

/*
 * A lower name of an indexed copy was linked up: one name fewer is only
 * below.  Caller holds the inode's copy-up lock and runs as the mounter.
 * A crash before the marker is written leaves the count one too high.
 */
static void lfs_count_link_up(struct lfs_cu *cu, struct dentry *copy)
{
	struct inode *inode = d_inode(cu->dentry);
	struct lfs_inode *li = LFS_I(inode);
	unsigned int left = READ_ONCE(li->lower_links);
	int err;

	lockdep_assert_held(&li->lock);
	if (!test_bit(LFS_I_INDEXED, &li->flags) || !left)
		return;
	err = lfs_write_lower_links(cu->sbi, copy, left - 1);
	if (err)
		pr_warn_ratelimited("%pd: cannot record its link count (%d)\n",
				    cu->dentry, err);
	WRITE_ONCE(li->lower_links, left - 1);
}

/* Note the upper parent's times, to keep them (lfs_cu_keep_parent_times()). */
static void lfs_cu_parent_times(struct lfs_cu *cu)
{
	struct path parent = {
		.mnt = cu->sbi->upper->mnt,
		.dentry = cu->upperparent,
	};

	if (vfs_getattr(&parent, &cu->pstat, STATX_ATIME | STATX_MTIME,
			AT_STATX_SYNC_AS_STAT))
		cu->pstat.result_mask = 0;
}

/*
 * Copy up one object whose parent has an upper directory.
 * Return: 0, -EAGAIN if the parent has none (it moved meanwhile), or -errno.
 */
static int lfs_copy_up_one(struct dentry *dentry, unsigned int flags)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	struct lfs_cu cu = {
		.sbi = LFS_SB(dentry->d_sb),
		.dentry = dentry,
		.flags = flags,
	};
	const struct cred *old_cred;
	struct dentry *parent, *upper, *copy;
	int err = 0;

	mutex_lock(&li->lock);
	if (lfs_upper(dentry))
		goto out_unlock;
	parent = dget_parent(dentry);
	cu.upperparent = lfs_upper(parent);
	err = -EAGAIN;
	if (!cu.upperparent)
		goto out_dput;

	old_cred = lfs_override_creds(dentry->d_sb);
	lfs_cu_parent_times(&cu);
	copy = S_ISDIR(inode->i_mode) ? NULL : lfs_i_upper(inode);
	if (copy) {
		upper = lfs_cu_link_up(&cu, copy);
		if (!IS_ERR(upper) && upper != copy)
			lfs_count_link_up(&cu, copy);
	} else {
		upper = lfs_cu_copy(&cu);
		if (!IS_ERR(upper) && cu.indexed)
			lfs_inode_set_indexed(inode, cu.stat.nlink - 1);
		/* where the data is, before the copy is published */
		if (!IS_ERR(upper) && cu.metacopy)
			lfs_inode_set_data(inode, cu.data.dentry, cu.data_layer);
	}
	revert_creds(old_cred);
	/*
	 * Without origin markers a copy lists its own d_ino; and the copy
	 * may be in place even where a step after it failed.
	 */
	if (!lfs_use_origin(cu.sbi))
		lfs_dir_changed(parent);

	err = PTR_ERR_OR_ZERO(upper);
	if (!err) {
		lfs_inode_set_upper(inode, upper);
		lfs_set_upper(dentry, upper);
		/* a lower metacopy file copied whole: the upper has the data */
		if (!cu.metacopy && lfs_i_metacopy(inode))
			lfs_inode_clear_metacopy(inode);
	}
out_dput:
	dput(parent);
out_unlock:
	mutex_unlock(&li->lock);
	return err;
}

/*
 * The upper copy's file capability, which writing its data clears
 * (security_inode_killpriv()): read to be set again.  *@value is NULL
 * when there is none.
 */
static ssize_t lfs_cu_get_caps(struct lfs_sb *sbi, struct dentry *upper,
			       void **value)
{
	struct user_namespace *userns = mnt_user_ns(sbi->upper->mnt);
	ssize_t size;

	*value = NULL;
	size = vfs_getxattr(userns, upper, XATTR_NAME_CAPS, NULL, 0);
	if (size == -ENODATA || size == -EOPNOTSUPP)
		return 0;
	if (size <= 0)
		return size;
	*value = kmalloc(size, GFP_KERNEL);
	if (!*value)
		return -ENOMEM;
	size = vfs_getxattr(userns, upper, XATTR_NAME_CAPS, *value, size);
	if (size < 0) {
		kfree(*value);
		*value = NULL;
	}
	return size;
}

/*
 * Fill the upper metacopy file @upper of @dentry with its data from
 * @data, as the mounter, once the data passed the digest check
 * (verity=), then give it back what writing it changed (its file
 * capability and times) and remove the marker: last, so that until then
 * the file is a whole metacopy file, whose data is below.  The mode is
 * not put back: a set-user-ID bit the mounter's write dropped stays
 * dropped (as overlay), where putting it back could undo a chown that
 * ran during the fill and cleared it.
 */
static int lfs_cu_fill(struct dentry *dentry, struct dentry *upper,
		       const struct path *data)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct path upath = { .mnt = sbi->upper->mnt, .dentry = upper };
	struct kstat ustat, dstat;
	struct iattr attr;
	ssize_t caps_size;
	void *caps;
	int err;

	err = vfs_getattr(&upath, &ustat, STATX_BASIC_STATS,
			  AT_STATX_SYNC_AS_STAT);
	if (!err)
		err = vfs_getattr(data, &dstat, STATX_SIZE,
				  AT_STATX_SYNC_AS_STAT);
	if (!err)
		err = lfs_real_may_read(data);
	/* the data must be what the upper marker's digest says (verity=) */
	if (!err)
		err = lfs_verity_check_path(dentry, data);
	if (err)
		return err;
	caps_size = lfs_cu_get_caps(sbi, upper, &caps);
	if (caps_size < 0)
		return caps_size;
	/* the size reads showed: the data's own */
	err = lfs_cu_copy_file(sbi, data, upper, dstat.size);
	if (!err && caps)
		err = lfs_set_xattr(sbi, upper, XATTR_NAME_CAPS, caps,
				    caps_size);
	if (!err) {
		attr.ia_valid = ATTR_ATIME | ATTR_MTIME | ATTR_ATIME_SET |
				ATTR_MTIME_SET;
		attr.ia_atime = ustat.atime;
		attr.ia_mtime = ustat.mtime;
		err = lfs_cu_setattr(sbi, upper, &attr);
	}
	if (!err)
		err = lfs_remove_marker(sbi, upper, LFS_XA_METACOPY);
	kfree(caps);
	return err;
}

/*
 * The data copy-up of a metacopy file: its upper copy is filled in
 * place (lfs_cu_fill()).  A lower metacopy file without an upper copy
 * gets a whole one instead, from lfs_copy_up_flags().
 * Caller holds write access to the upper layer.
 */
static int lfs_copy_up_data(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	const struct cred *old_cred;
	struct dentry *upper;
	struct path data;
	int err = 0;

	mutex_lock(&li->lock);
	upper = lfs_i_upper(inode);
	if (!upper || !lfs_i_metacopy(inode))
		goto out_unlock;
	lfs_data_path(inode, &data);
	old_cred = lfs_override_creds(dentry->d_sb);
	err = lfs_cu_fill(dentry, upper, &data);
	revert_creds(old_cred);
	if (!err)
		lfs_inode_clear_metacopy(inode);
	lfs_copy_attr(inode, d_inode(upper));
out_unlock:
	mutex_unlock(&li->lock);
	return err;
}

/**
 * lfs_copy_up_flags - give a dentry an upper object, parents first
 * @dentry: a positive layerfs dentry
 * @flags: LFS_CU_* for the object itself
 *
 * Without LFS_CU_METADATA, a metacopy file gets its data too.
 * Caller holds write access to the upper layer (lfs_want_write()).
 * Return: 0, or -errno.
 */
int lfs_copy_up_flags(struct dentry *dentry, unsigned int flags)
{
	int retries = 0;

	if (!LFS_SB(dentry->d_sb)->upper)
		return -EROFS;
	while (!lfs_upper(dentry)) {
		struct dentry *next = dget(dentry), *parent;
		int err;

		/* the top-most ancestor still without an upper directory */
		for (;;) {
			parent = dget_parent(next);
			if (lfs_upper(parent))
				break;
			dput(next);
			next = parent;
		}
		dput(parent);
		err = lfs_copy_up_one(next, next == dentry ? flags : 0);
		dput(next);
		if (err == -EAGAIN && ++retries < 100)
			continue;
		if (err)
			return err;
	}
	if (!(flags & LFS_CU_METADATA) && lfs_i_metacopy(d_inode(dentry)))
		return lfs_copy_up_data(dentry);
	return 0;
}

int lfs_copy_up(struct dentry *dentry)
{
	return lfs_copy_up_flags(dentry, 0);
}

/**
 * lfs_copy_up_hardlink - link up a name of a lower object with several links
 * @dentry: a positive layerfs dentry about to lose its name
 *
 * Before a name of such an object (any type but a directory) goes, its
 * inode gets a copy in the index
 * and the name a link to it, so that the index's count of lower names
 * stays true (see LFS_XATTR_LOWER_LINKS in uapi).  Other objects, and
 * every object of a mount without the index (userxattr), need nothing.
 * Caller holds write access to the upper layer.
 * Return: 0, or -errno.
 */
int lfs_copy_up_hardlink(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);

	if (S_ISDIR(inode->i_mode) || lfs_upper(dentry) || !LFS_E(dentry)->nr ||
	    !LFS_SB(dentry->d_sb)->index)
		return 0;
	if (!test_bit(LFS_I_INDEXED, &li->flags) &&
	    (!li->lower || li->lower->i_nlink < 2))
		return 0;
	return lfs_copy_up(dentry);
}
