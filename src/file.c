// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: regular files.  Opening a layerfs file opens the real file
 * behind it, with the mounter's credentials, and every operation is passed
 * to that real file.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/fadvise.h>
#include <linux/fiemap.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include "layerfs.h"

/* flags that made sense for the layerfs open but not for the real one */
#define LFS_OPEN_STRIP	(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC)

/*
 * The flags fcntl(F_SETFL) may change on a layerfs file that the real
 * file must follow.  O_NOATIME is not among them: the real file is
 * opened with it whenever the mounter may, and layerfs itself updates
 * the upper file's atime (lfs_file_accessed()).
 */
#define LFS_SETFL_MASK	(O_APPEND | O_NONBLOCK | O_NDELAY | O_DIRECT)

/*
 * What a layerfs file holds.  @real is the file opened at open() on the
 * real inode of that moment.  When that was a lower file and the inode
 * has been copied up since, the upper file is opened at first use and
 * kept in @upper, which is set once (cmpxchg) and read with an acquire;
 * both live until release, so an operation borrows them without taking
 * a reference of its own.
 */
struct lfs_file {
	struct file *real;		/* the real file opened at open() */
	struct file *upper;		/* the upper file opened after a copy-up */
};

/*
 * Open @real, of @layer, for the layerfs @file.  The mounter must be
 * allowed to open it, with the caller's access mode.  The real file's
 * f_path is the layerfs path (the real inode comes from the layerfs
 * inode, not from the file's dentry: when layerfs is stacked on layerfs,
 * the lower one is opened with the upper one's path, and finds its own
 * dentry with lfs_file_dentry()).
 */
static struct file *lfs_open_real(struct file *file, struct inode *real,
				  struct lfs_layer *layer)
{
	struct user_namespace *real_userns = mnt_user_ns(layer->mnt);
	int flags = (file->f_flags & ~LFS_OPEN_STRIP) | O_NOATIME;
	const struct cred *old_cred;
	struct file *realfile;
	int acc_mode = ACC_MODE(flags);
	int err;

	if (flags & O_APPEND)
		acc_mode |= MAY_APPEND;
	/* a volatile mount's writes never wait for the disk */
	if (!lfs_should_sync(LFS_SB(file_inode(file)->i_sb)))
		flags &= ~(__O_SYNC | O_DSYNC);

	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	err = inode_permission(real_userns, real, MAY_OPEN | acc_mode);
	if (err) {
		realfile = ERR_PTR(err);
	} else {
		if (!inode_owner_or_capable(real_userns, real))
			flags &= ~O_NOATIME;
		realfile = open_with_fake_path(&file->f_path, flags, real,
					       current_cred());
	}
	revert_creds(old_cred);
	return realfile;
}

/**
 * lfs_file_dentry - the layerfs dentry of an open layerfs file
 * @file: a layerfs file, in its open or later
 *
 * A filesystem stacked on this one (overlay; layerfs over layerfs, see
 * lfs_open_real()) opens our inode with a path of its own, so
 * f_path.dentry may be that filesystem's dentry, whose d_fsdata and
 * superblock are not ours: nothing of ours is ever read through it.
 * file_dentry() asks the filesystem above (its d_real) for ours.
 *
 * Return: our dentry, or ERR_PTR(-EIO) if the answer is not one of ours.
 */
static struct dentry *lfs_file_dentry(const struct file *file)
{
	struct inode *inode = file_inode(file);
	struct dentry *dentry = file_dentry(file);

	/*
	 * d_real gives a dentry of the inode asked about; a filesystem above
	 * that answers otherwise is refused without a WARN, which a user who
	 * stacks mounts could otherwise raise at will.
	 */
	if (dentry->d_sb != inode->i_sb || d_inode(dentry) != inode) {
		pr_warn_ratelimited("%pd2: the filesystem stacked above gave another file for this one\n",
				    file->f_path.dentry);
		return ERR_PTR(-EIO);
	}
	return dentry;
}

/*
 * Opening a lower file for writing, or to truncate it, copies it up; a
 * metacopy file gets its data.
 */
static int lfs_open_copy_up(struct file *file)
{
	struct dentry *dentry;
	unsigned int flags = 0;
	int err;

	if (!(file->f_mode & FMODE_WRITE) && !(file->f_flags & O_TRUNC))
		return 0;
	dentry = lfs_file_dentry(file);
	if (IS_ERR(dentry))
		return PTR_ERR(dentry);
	if (lfs_upper(dentry) && !lfs_i_metacopy(d_inode(dentry)))
		return 0;
	if (file->f_flags & O_TRUNC)
		flags |= LFS_CU_NODATA;
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up_flags(dentry, flags);
	lfs_drop_write(dentry);
	return err;
}

/*
 * The data of a metacopy file, opened and checked (verity.c).  NULL when
 * the inode got its data in the upper file meanwhile, unchecked (a whole
 * copy-up that copied no data: O_TRUNC, a size of 0): open that instead.
 */
static struct file *lfs_open_data(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct dentry *dentry;
	struct file *realfile;
	struct path data;
	int err;

	dentry = lfs_file_dentry(file);
	if (IS_ERR(dentry))
		return ERR_CAST(dentry);
	lfs_data_path(inode, &data);
	realfile = lfs_open_real(file, d_inode(data.dentry),
				 LFS_I(inode)->data_layer);
	if (IS_ERR(realfile))
		return realfile;
	err = lfs_verity_check_file(dentry, realfile);
	if (!err)
		return realfile;
	fput(realfile);
	return err > 0 ? NULL : ERR_PTR(err);
}

/*
 * The real file a new open of @file reads: a metacopy file's data,
 * below, opened for reading only (an open for writing gave it its data)
 * and checked against the digest its marker records (verity=); else the
 * upper file, else the lower one.  One load of each: the inode and its
 * layer must agree.  Every real file is opened with the mounter's
 * credentials.
 */
static struct file *lfs_open_top(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct file *realfile;
	struct dentry *upper;

	if (lfs_i_metacopy(inode)) {
		realfile = lfs_open_data(file);
		if (realfile)
			return realfile;
	}
	/*
	 * Set before a copy-up clears LFS_I_METACOPY (the barrier before
	 * clear_bit()): a flag seen clear must not be read after the upper.
	 */
	smp_rmb();
	upper = lfs_i_upper(inode);
	if (upper)
		return lfs_open_real(file, d_inode(upper),
				     LFS_SB(inode->i_sb)->upper);
	return lfs_open_real(file, LFS_I(inode)->lower, LFS_I(inode)->layer);
}

static int lfs_open(struct inode *inode, struct file *file)
{
	struct file *realfile;
	struct lfs_file *lf;
	int err;

	err = lfs_open_copy_up(file);
	if (err)
		return err;
	lf = kzalloc(sizeof(*lf), GFP_KERNEL);
	if (!lf)
		return -ENOMEM;
	realfile = lfs_open_top(file);
	if (IS_ERR(realfile)) {
		kfree(lf);
		return PTR_ERR(realfile);
	}
	lf->real = realfile;
	file->private_data = lf;
	return 0;
}

static int lfs_release(struct inode *inode, struct file *file)
{
	struct lfs_file *lf = file->private_data;

	if (lf->upper)
		fput(lf->upper);
	fput(lf->real);
	kfree(lf);
	return 0;
}

/* the real file last opened for @file, without opening one */
static struct file *lfs_real_file_last(const struct file *file)
{
	struct lfs_file *lf = file->private_data;
	/* pairs with the cmpxchg_release() in lfs_real_file_upper() */
	struct file *upper = smp_load_acquire(&lf->upper);

	return upper ? upper : lf->real;
}

/*
 * The upper file of a layerfs file opened before its inode was copied
 * up: opened once, by whichever operation first needs it; a racing
 * opener's file is dropped.
 */
static struct file *lfs_real_file_upper(struct file *file, struct dentry *upper)
{
	struct lfs_file *lf = file->private_data;
	struct file *realfile, *old;

	realfile = lfs_open_real(file, d_inode(upper),
				 LFS_SB(file_inode(file)->i_sb)->upper);
	if (IS_ERR(realfile))
		return realfile;
	/* pairs with the acquire in lfs_real_file_last() */
	old = cmpxchg_release(&lf->upper, NULL, realfile);
	if (old) {
		fput(realfile);
		return old;
	}
	return realfile;
}

/*
 * Make the real file follow what fcntl(F_SETFL) changed on the layerfs
 * file, with the checks setfl() made on the layerfs file repeated for
 * the real one.
 */
static int lfs_real_setfl(struct file *realfile, unsigned int flags)
{
	int err;

	flags &= LFS_SETFL_MASK;
	if (((flags ^ realfile->f_flags) & O_APPEND) &&
	    IS_APPEND(file_inode(realfile)))
		return -EPERM;
	if ((flags & O_DIRECT) && !(realfile->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	if (realfile->f_op->check_flags) {
		err = realfile->f_op->check_flags(flags);
		if (err)
			return err;
	}
	spin_lock(&realfile->f_lock);
	realfile->f_flags = (realfile->f_flags & ~LFS_SETFL_MASK) | flags;
	realfile->f_iocb_flags = iocb_flags(realfile);
	spin_unlock(&realfile->f_lock);
	return 0;
}

/**
 * lfs_real_file - the real file an operation on a layerfs file acts on
 * @file: the layerfs file
 * @realp: set to the real file, which lives as long as @file
 *
 * The file of the inode's real inode of now: the upper one if the inode
 * was copied up after @file was opened, or if the upper copy got its
 * data since (a metacopy file).  Its F_SETFL flags are brought in line
 * with @file's first.
 *
 * Return: 0 or -errno.
 */
static int lfs_real_file(struct file *file, struct file **realp)
{
	struct inode *inode = file_inode(file);
	struct file *realfile = lfs_real_file_last(file);
	struct dentry *upper = lfs_i_upper(inode);

	if (unlikely(upper && file_inode(realfile) != d_inode(upper) &&
		     !lfs_i_metacopy(inode))) {
		realfile = lfs_real_file_upper(file, upper);
		if (IS_ERR(realfile))
			return PTR_ERR(realfile);
	}
	if (unlikely((file->f_flags ^ realfile->f_flags) & LFS_SETFL_MASK)) {
		int err = lfs_real_setfl(realfile, file->f_flags);

		if (err)
			return err;
	}
	*realp = realfile;
	return 0;
}

/* The RWF_* flags that carry an iocb's per-call flags to the real file. */
static rwf_t lfs_iocb_to_rwf(int ki_flags)
{
	rwf_t flags = 0;

	if (ki_flags & IOCB_NOWAIT)
		flags |= RWF_NOWAIT;
	if (ki_flags & IOCB_HIPRI)
		flags |= RWF_HIPRI;
	if (ki_flags & IOCB_DSYNC)
		flags |= RWF_DSYNC;
	if (ki_flags & IOCB_SYNC)
		flags |= RWF_SYNC;
	/* pwritev2(RWF_APPEND) on a file opened without O_APPEND */
	if (ki_flags & IOCB_APPEND)
		flags |= RWF_APPEND;
	return flags;
}

/*
 * Before passing an I/O to the real file: 1 when there is nothing to do,
 * -EINVAL for O_DIRECT the real file cannot do, else 0.
 */
static int lfs_iter_check(const struct kiocb *iocb, const struct iov_iter *iter,
			  const struct file *realfile)
{
	if (!iov_iter_count(iter))
		return 1;
	if ((iocb->ki_flags & IOCB_DIRECT) &&
	    !(realfile->f_mode & FMODE_CAN_ODIRECT))
		return -EINVAL;
	return 0;
}

/*
 * Access time, as the kernel's overlay keeps it: a read or mmap of a file
 * that has an upper object updates the upper object's atime, by the rules
 * of the layerfs mount (relatime, noatime, strictatime, read-only; see
 * atime_needs_update()), which compare the layerfs inode's times: bring
 * them up to date first.  Lower objects keep theirs.
 */
static void lfs_file_accessed(struct file *file)
{
	struct inode *inode = file_inode(file);
	struct dentry *upper;

	if (file->f_flags & O_NOATIME)
		return;
	upper = lfs_i_upper(inode);
	if (!upper)
		return;
	inode->i_mtime = d_inode(upper)->i_mtime;
	inode->i_ctime = d_inode(upper)->i_ctime;
	/*
	 * f_path's own inode: ours, or under a stacking filesystem that
	 * filesystem's, through its own ->update_time (it keeps its atime)
	 */
	touch_atime(&file->f_path);
}

/**
 * lfs_update_time - update the atime of a layerfs object
 * @inode: the layerfs inode
 * @now: the time (the upper filesystem takes its own)
 * @flags: S_ATIME and the like; only S_ATIME reaches here (S_NOCMTIME)
 *
 * Called by touch_atime() on a layerfs path once the layerfs mount's
 * rules said yes.  The upper object's atime is set, as the mounter, on
 * the upper layer's private mount, which has no atime rules of its own;
 * a lower object keeps its own (the layerfs inode notes @now).
 *
 * Return: 0.
 */
int lfs_update_time(struct inode *inode, struct timespec64 *now, int flags)
{
	struct dentry *upper = lfs_i_upper(inode);
	const struct cred *old_cred;
	struct path path;

	if (!(flags & S_ATIME))
		return 0;
	/*
	 * A lower object keeps its atime; the layerfs inode takes @now, so
	 * that relatime does not ask again at every access (a path walk
	 * through a lower symlink would leave RCU mode each time)
	 */
	if (!upper) {
		inode->i_atime = *now;
		return 0;
	}
	path.mnt = LFS_SB(inode->i_sb)->upper->mnt;
	path.dentry = upper;
	old_cred = lfs_override_creds(inode->i_sb);
	touch_atime(&path);
	revert_creds(old_cred);
	inode->i_atime = d_inode(upper)->i_atime;
	return 0;
}

/*
 * Reads complete synchronously, also for AIO: the real file does the I/O
 * and the result is returned as a completed request.  As the mounter.
 */
static ssize_t lfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	const struct cred *old_cred;
	struct file *realfile;
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;
	ret = lfs_real_file(file, &realfile);
	if (ret)
		return ret;
	ret = lfs_iter_check(iocb, iter, realfile);
	if (ret)
		return ret;

	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = vfs_iter_read(realfile, iter, &iocb->ki_pos,
			    lfs_iocb_to_rwf(iocb->ki_flags));
	revert_creds(old_cred);
	lfs_file_accessed(file);
	return ret;
}

/*
 * The start of a write to a layerfs file: its inode locked, what the
 * caller's write clears cleared (file_remove_privs() on the layerfs file,
 * with the caller's rights), and the real file to write.  On success the
 * caller unlocks the inode.
 */
static int lfs_write_start(struct file *file, struct file **realp)
{
	struct inode *inode = file_inode(file);
	int err;

	inode_lock(inode);
	err = file_remove_privs(file);
	if (!err)
		err = lfs_real_file(file, realp);
	if (err)
		inode_unlock(inode);
	return err;
}

/*
 * Writes go to the real file of the upper layer, as the mounter.  The
 * caller's rights decide what a write clears (set-id bits, capabilities),
 * as on any filesystem: file_remove_privs() on the layerfs file, which
 * reaches the upper object through lfs_setattr().  On a volatile mount
 * a synchronous write is an ordinary one.
 */
static ssize_t lfs_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct inode *inode = file_inode(file);
	int ki_flags = iocb->ki_flags;
	const struct cred *old_cred;
	struct file *realfile;
	ssize_t ret;

	if (!iov_iter_count(iter))
		return 0;
	/* RWF_SYNC and RWF_DSYNC too (and see lfs_open_real()) */
	if (!lfs_should_sync(LFS_SB(inode->i_sb)))
		ki_flags &= ~(IOCB_DSYNC | IOCB_SYNC);

	ret = lfs_write_start(file, &realfile);
	if (ret)
		return ret;
	ret = lfs_iter_check(iocb, iter, realfile);
	if (ret)
		goto out_unlock;
	old_cred = lfs_override_creds(inode->i_sb);
	file_start_write(realfile);
	ret = vfs_iter_write(realfile, iter, &iocb->ki_pos,
			     lfs_iocb_to_rwf(ki_flags));
	file_end_write(realfile);
	revert_creds(old_cred);
	lfs_copy_attr(inode, file_inode(realfile));
out_unlock:
	inode_unlock(inode);
	return ret;
}

/*
 * Splicing into a layerfs file is a splice into the real file, as the
 * mounter.  The generic iter_file_splice_write() on the layerfs file
 * would take the pipe lock, then (in lfs_write_iter()) the upper
 * filesystem's freeze protection, which a splice into the upper file
 * takes the other way round.  Here the order is that of any write:
 * layerfs inode, upper sb_writers, pipe, upper inode.
 */
static ssize_t lfs_splice_write(struct pipe_inode_info *pipe, struct file *out,
				loff_t *ppos, size_t len, unsigned int flags)
{
	struct inode *inode = file_inode(out);
	const struct cred *old_cred;
	struct file *realfile;
	ssize_t ret;

	ret = lfs_write_start(out, &realfile);
	if (ret)
		return ret;
	old_cred = lfs_override_creds(inode->i_sb);
	file_start_write(realfile);
	ret = iter_file_splice_write(pipe, realfile, ppos, len, flags);
	file_end_write(realfile);
	revert_creds(old_cred);
	lfs_copy_attr(inode, file_inode(realfile));
	inode_unlock(inode);
	return ret;
}

/* As the mounter, on the upper file; the caller's rights clear privileges. */
static long lfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(file);
	const struct cred *old_cred;
	struct file *realfile;
	long ret;

	ret = lfs_write_start(file, &realfile);
	if (ret)
		return ret;
	old_cred = lfs_override_creds(inode->i_sb);
	ret = vfs_fallocate(realfile, mode, offset, len);
	revert_creds(old_cred);
	lfs_copy_attr(inode, file_inode(realfile));
	inode_unlock(inode);
	return ret;
}

/* As the mounter; SEEK_DATA and SEEK_HOLE are the real file's to answer. */
static loff_t lfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct inode *inode = file_inode(file);
	const struct cred *old_cred;
	struct file *realfile;
	loff_t ret;

	ret = lfs_real_file(file, &realfile);
	if (ret)
		return ret;

	/*
	 * The file position lives in the layerfs file; lend it to the real
	 * one, under the inode's copy-up lock, not its i_rwsem: a copy-up
	 * through a mount stacked on this one seeks this file with the
	 * outer inode's copy-up lock held, and an outer copy-up lock comes
	 * before an inner one (per-depth classes), while i_rwsem comes
	 * before the upper's sb_writers and that before any copy-up lock.
	 */
	mutex_lock(&LFS_I(inode)->lock);
	realfile->f_pos = file->f_pos;
	old_cred = lfs_override_creds(inode->i_sb);
	ret = vfs_llseek(realfile, offset, whence);
	revert_creds(old_cred);
	file->f_pos = realfile->f_pos;
	mutex_unlock(&LFS_I(inode)->lock);
	return ret;
}

/*
 * The mapping belongs to the real file, as the mounter.  mmap_lock is
 * held: no real file is opened here, the one last opened is mapped (the
 * lower file, if the copy-up came after the last read or write).
 */
static int lfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *realfile = lfs_real_file_last(file);
	const struct cred *old_cred;
	int ret;

	if (!realfile->f_op->mmap)
		return -ENODEV;
	/* unreachable: mmap_region() gives the vma the file it maps */
	if (WARN_ON_ONCE(file != vma->vm_file))
		return -EIO;

	vma_set_file(vma, realfile);
	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = call_mmap(vma->vm_file, vma);
	revert_creds(old_cred);
	lfs_file_accessed(file);
	return ret;
}

static int lfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	const struct cred *old_cred;
	struct file *realfile;
	int ret;

	ret = lfs_real_file(file, &realfile);
	if (ret)
		return ret;
	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = vfs_fadvise(realfile, offset, len, advice);
	revert_creds(old_cred);
	return ret;
}

/*
 * Only the upper file is synced, as the mounter: a lower file is never
 * written, and its filesystem may have no fsync at all (erofs, squashfs).
 * A volatile mount syncs nothing (lfs_sync_status()).
 */
static int lfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct inode *inode = file_inode(file);
	struct dentry *upper = lfs_i_upper(inode);
	const struct cred *old_cred;
	struct file *realfile;
	int ret;

	if (!upper)
		return 0;
	ret = lfs_sync_status(LFS_SB(inode->i_sb));
	if (ret <= 0)
		return ret;
	ret = lfs_real_file(file, &realfile);
	if (ret)
		return ret;
	if (file_inode(realfile) != d_inode(upper))
		return 0;
	old_cred = lfs_override_creds(inode->i_sb);
	ret = vfs_fsync_range(realfile, start, end, datasync);
	revert_creds(old_cred);
	return ret;
}

/* Each real file this file opened is flushed, as the mounter. */
static int lfs_flush(struct file *file, fl_owner_t id)
{
	struct lfs_file *lf = file->private_data;
	struct file *real[2];
	const struct cred *old_cred;
	int ret = 0, err;
	unsigned int i;

	real[0] = lf->real;
	/* pairs with the cmpxchg_release() in lfs_real_file_upper() */
	real[1] = smp_load_acquire(&lf->upper);
	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	for (i = 0; i < ARRAY_SIZE(real); i++) {
		if (!real[i] || !real[i]->f_op->flush)
			continue;
		err = real[i]->f_op->flush(real[i], id);
		if (err && !ret)
			ret = err;
	}
	revert_creds(old_cred);
	return ret;
}

/**
 * lfs_fiemap - the extent map of the real inode
 * @inode: the layerfs inode
 * @fieinfo: the request, filled in by the real filesystem
 * @start: first byte asked for
 * @len: bytes asked for
 *
 * As the mounter: FS_IOC_FIEMAP needs no more than an open file, and the
 * caller has one on the layerfs inode.  A metacopy file's extents are its
 * data's, asked for only when the mounter may read the data now
 * (lfs_data_may_read(), -EACCES): FIEMAP acts on the inode, not on the
 * caller's open file, so it does not lean on what that open checked.
 *
 * Return: 0 or -errno; -EOPNOTSUPP where the real filesystem has no map.
 */
int lfs_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
	       u64 start, u64 len)
{
	struct inode *real = lfs_real_inode(inode);
	const struct cred *old_cred;
	struct path data;
	int err;

	old_cred = lfs_override_creds(inode->i_sb);
	if (lfs_i_metacopy(inode)) {
		err = lfs_data_may_read(inode, &data);
		if (err)
			goto out;
		real = d_inode(data.dentry);
	}
	err = -EOPNOTSUPP;
	if (real->i_op->fiemap)
		err = real->i_op->fiemap(real, fieinfo, start, len);
out:
	revert_creds(old_cred);
	return err;
}

enum lfs_copy_op {
	LFS_COPY,			/* copy_file_range() */
	LFS_CLONE,			/* FICLONE, FICLONERANGE */
	LFS_DEDUPE,			/* FIDEDUPERANGE */
};

/*
 * copy_file_range() and the remaps between two layerfs files are those
 * between their real files, as the mounter of the destination; the real
 * filesystems refuse what they cannot do (EXDEV across filesystems, for
 * a lower file on another one than the upper layer).  The destination is
 * open for writing, so it was copied up at open.  The VFS checked the
 * caller's access to both layerfs files; across two layerfs mounts the
 * source's mounter must be able to read the source as well.
 */
static loff_t lfs_copyfile(struct file *file_in, loff_t pos_in,
			   struct file *file_out, loff_t pos_out,
			   loff_t len, unsigned int flags, enum lfs_copy_op op)
{
	struct inode *inode_in = file_inode(file_in);
	struct inode *inode_out = file_inode(file_out);
	struct file *real_in, *real_out;
	const struct cred *old_cred;
	loff_t ret;

	inode_lock(inode_out);
	if (op != LFS_DEDUPE) {
		ret = file_remove_privs(file_out);
		if (ret)
			goto out_unlock;
	}
	ret = lfs_real_file(file_out, &real_out);
	if (ret)
		goto out_unlock;
	ret = lfs_real_file(file_in, &real_in);
	if (ret)
		goto out_unlock;

	if (unlikely(inode_in->i_sb != inode_out->i_sb)) {
		old_cred = lfs_override_creds(inode_in->i_sb);
		ret = rw_verify_area(READ, real_in, &pos_in, len);
		revert_creds(old_cred);
		if (ret)
			goto out_unlock;
	}

	old_cred = lfs_override_creds(inode_out->i_sb);
	switch (op) {
	case LFS_COPY:
		ret = vfs_copy_file_range(real_in, pos_in, real_out, pos_out,
					  len, flags);
		break;
	case LFS_CLONE:
		ret = vfs_clone_file_range(real_in, pos_in, real_out, pos_out,
					   len, flags);
		break;
	case LFS_DEDUPE:
		ret = vfs_dedupe_file_range_one(real_in, pos_in, real_out,
						pos_out, len, flags);
		break;
	}
	revert_creds(old_cred);
	lfs_copy_attr(inode_out, file_inode(real_out));
out_unlock:
	inode_unlock(inode_out);
	return ret;
}

static ssize_t lfs_copy_file_range(struct file *file_in, loff_t pos_in,
				   struct file *file_out, loff_t pos_out,
				   size_t len, unsigned int flags)
{
	return lfs_copyfile(file_in, pos_in, file_out, pos_out, len, flags,
			    LFS_COPY);
}

static loff_t lfs_remap_file_range(struct file *file_in, loff_t pos_in,
				   struct file *file_out, loff_t pos_out,
				   loff_t len, unsigned int remap_flags)
{
	enum lfs_copy_op op;

	if (remap_flags & ~(REMAP_FILE_DEDUP | REMAP_FILE_ADVISORY))
		return -EINVAL;
	op = remap_flags & REMAP_FILE_DEDUP ? LFS_DEDUPE : LFS_CLONE;
	/*
	 * Deduplicating a lower file would copy it up: the data would be
	 * doubled, not shared.  Nor a metacopy file on either side: its
	 * real file is the lower data, which a dedupe into it would remap
	 * (on a filesystem shared with the upper) past the layer's
	 * read-only mount, as the VFS lets a dedupe use a file opened
	 * read-only.
	 */
	if (op == LFS_DEDUPE && (!lfs_i_upper(file_inode(file_in)) ||
				 !lfs_i_upper(file_inode(file_out)) ||
				 lfs_i_metacopy(file_inode(file_in)) ||
				 lfs_i_metacopy(file_inode(file_out))))
		return -EPERM;
	return lfs_copyfile(file_in, pos_in, file_out, pos_out, len,
			    remap_flags, op);
}

const struct file_operations lfs_file_operations = {
	.open			= lfs_open,
	.release		= lfs_release,
	.llseek			= lfs_llseek,
	.read_iter		= lfs_read_iter,
	.write_iter		= lfs_write_iter,
	.fallocate		= lfs_fallocate,
	.mmap			= lfs_mmap,
	.fadvise		= lfs_fadvise,
	.fsync			= lfs_fsync,
	.flush			= lfs_flush,
	.splice_read		= generic_file_splice_read,
	.splice_write		= lfs_splice_write,
	.copy_file_range	= lfs_copy_file_range,
	.remap_file_range	= lfs_remap_file_range,
	.unlocked_ioctl		= lfs_file_ioctl,
	.compat_ioctl		= compat_ptr_ioctl,
};
