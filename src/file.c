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
#include "layerfs.h"

/* flags that made sense for the layerfs open but not for the real one */
#define LFS_OPEN_STRIP	(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC)

/*
 * The real inode comes from the layerfs inode, not from the file's dentry:
 * when layerfs is stacked on layerfs, the lower one is opened with the
 * upper one's path.
 */
static struct file *lfs_open_real(struct file *file)
{
	struct inode *inode = file_inode(file);
	int flags = (file->f_flags & ~LFS_OPEN_STRIP) | O_NOATIME;
	struct user_namespace *real_userns = mnt_user_ns(lfs_real_layer(inode)->mnt);
	struct inode *real = lfs_real_inode(inode);
	const struct cred *old_cred;
	struct file *realfile;
	int acc_mode = ACC_MODE(flags);
	int err;

	if (flags & O_APPEND)
		acc_mode |= MAY_APPEND;

	old_cred = lfs_override_creds(inode->i_sb);
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

/* Opening a lower file for writing, or to truncate it, copies it up. */
static int lfs_open_copy_up(struct file *file)
{
	struct dentry *dentry = file->f_path.dentry;
	unsigned int flags = 0;
	int err;

	if (!(file->f_mode & FMODE_WRITE) && !(file->f_flags & O_TRUNC))
		return 0;
	if (lfs_upper(dentry))
		return 0;
	/* a layerfs used as a lower layer is only ever read */
	if (WARN_ON_ONCE(dentry->d_sb != file_inode(file)->i_sb))
		return -EROFS;
	if (file->f_flags & O_TRUNC)
		flags |= LFS_CU_NODATA;
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up_flags(dentry, flags);
	lfs_drop_write(dentry);
	return err;
}

static int lfs_open(struct inode *inode, struct file *file)
{
	struct file *realfile;
	int err;

	err = lfs_open_copy_up(file);
	if (err)
		return err;
	realfile = lfs_open_real(file);
	if (IS_ERR(realfile))
		return PTR_ERR(realfile);
	file->private_data = realfile;
	return 0;
}

static int lfs_release(struct inode *inode, struct file *file)
{
	fput(file->private_data);
	return 0;
}

static struct file *lfs_real_file(const struct file *file)
{
	return file->private_data;
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
 * Reads complete synchronously, also for AIO: the real file does the I/O
 * and the result is returned as a completed request.
 */
static ssize_t lfs_read_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *realfile = lfs_real_file(file);
	const struct cred *old_cred;
	ssize_t ret;

	ret = lfs_iter_check(iocb, iter, realfile);
	if (ret)
		return ret < 0 ? ret : 0;

	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = vfs_iter_read(realfile, iter, &iocb->ki_pos,
			    lfs_iocb_to_rwf(iocb->ki_flags));
	revert_creds(old_cred);
	return ret;
}

/*
 * Writes go to the real file of the upper layer.  The caller's rights
 * decide what a write clears (set-id bits, capabilities), as on any
 * filesystem: file_remove_privs() on the layerfs file, which reaches the
 * upper object through lfs_setattr().
 */
static ssize_t lfs_write_iter(struct kiocb *iocb, struct iov_iter *iter)
{
	struct file *file = iocb->ki_filp;
	struct file *realfile = lfs_real_file(file);
	struct inode *inode = file_inode(file);
	const struct cred *old_cred;
	ssize_t ret;

	ret = lfs_iter_check(iocb, iter, realfile);
	if (ret)
		return ret < 0 ? ret : 0;

	inode_lock(inode);
	ret = file_remove_privs(file);
	if (ret)
		goto out_unlock;
	old_cred = lfs_override_creds(inode->i_sb);
	file_start_write(realfile);
	ret = vfs_iter_write(realfile, iter, &iocb->ki_pos,
			     lfs_iocb_to_rwf(iocb->ki_flags));
	file_end_write(realfile);
	revert_creds(old_cred);
	lfs_copy_attr(inode, file_inode(realfile));
out_unlock:
	inode_unlock(inode);
	return ret;
}

static long lfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len)
{
	struct file *realfile = lfs_real_file(file);
	struct inode *inode = file_inode(file);
	const struct cred *old_cred;
	long ret;

	inode_lock(inode);
	ret = file_remove_privs(file);
	if (!ret) {
		old_cred = lfs_override_creds(inode->i_sb);
		ret = vfs_fallocate(realfile, mode, offset, len);
		revert_creds(old_cred);
		lfs_copy_attr(inode, file_inode(realfile));
	}
	inode_unlock(inode);
	return ret;
}

static loff_t lfs_llseek(struct file *file, loff_t offset, int whence)
{
	struct file *realfile = lfs_real_file(file);
	struct inode *inode = file_inode(file);
	loff_t ret;

	/* the file position lives in the layerfs file; lend it to the real one */
	inode_lock(inode);
	realfile->f_pos = file->f_pos;
	ret = vfs_llseek(realfile, offset, whence);
	file->f_pos = realfile->f_pos;
	inode_unlock(inode);
	return ret;
}

static int lfs_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct file *realfile = lfs_real_file(file);
	const struct cred *old_cred;
	int ret;

	if (!realfile->f_op->mmap)
		return -ENODEV;
	if (WARN_ON_ONCE(file != vma->vm_file))
		return -EIO;

	/* the mapping belongs to the real file from here on */
	vma_set_file(vma, realfile);
	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = call_mmap(vma->vm_file, vma);
	revert_creds(old_cred);
	return ret;
}

static int lfs_fadvise(struct file *file, loff_t offset, loff_t len, int advice)
{
	struct file *realfile = lfs_real_file(file);
	const struct cred *old_cred;
	int ret;

	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = vfs_fadvise(realfile, offset, len, advice);
	revert_creds(old_cred);
	return ret;
}

static int lfs_fsync(struct file *file, loff_t start, loff_t end, int datasync)
{
	struct file *realfile = lfs_real_file(file);
	const struct cred *old_cred;
	int ret;

	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	ret = vfs_fsync_range(realfile, start, end, datasync);
	revert_creds(old_cred);
	return ret;
}

static int lfs_flush(struct file *file, fl_owner_t id)
{
	struct file *realfile = lfs_real_file(file);
	const struct cred *old_cred;
	int ret = 0;

	if (realfile->f_op->flush) {
		old_cred = lfs_override_creds(file_inode(file)->i_sb);
		ret = realfile->f_op->flush(realfile, id);
		revert_creds(old_cred);
	}
	return ret;
}

const struct file_operations lfs_file_operations = {
	.open		= lfs_open,
	.release	= lfs_release,
	.llseek		= lfs_llseek,
	.read_iter	= lfs_read_iter,
	.write_iter	= lfs_write_iter,
	.fallocate	= lfs_fallocate,
	.splice_write	= iter_file_splice_write,
	.mmap		= lfs_mmap,
	.fadvise	= lfs_fadvise,
	.fsync		= lfs_fsync,
	.flush		= lfs_flush,
	.splice_read	= generic_file_splice_read,
};
