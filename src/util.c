// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: small helpers shared by several files.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/xattr.h>
#include "layerfs.h"

static void lfs_verr(struct fs_context *fc, struct va_format *vaf)
{
	/* mount(2) has no log: logfc() prints to the kernel log then */
	if (fc->log.log)
		pr_err_ratelimited("layerfs: %pV\n", vaf);
	errorfc(fc, "%pV", vaf);
}

/**
 * lfs_err - explain why a mount is refused
 * @fc: the mount context
 * @fmt: printf format of the message
 *
 * The message goes to the caller through the fs_context log (fsconfig()
 * users read it there) and, rate-limited, to the kernel log.
 */
void lfs_err(struct fs_context *fc, const char *fmt, ...)
{
	struct va_format vaf = { .fmt = fmt };
	va_list args;

	va_start(args, fmt);
	vaf.va = &args;
	lfs_verr(fc, &vaf);
	va_end(args);
}

/**
 * lfs_info - say how a mount takes an option that it accepts
 * @fc: the mount context
 * @fmt: printf format of the message
 *
 * As lfs_err(), at the info level: the mount goes ahead.
 */
void lfs_info(struct fs_context *fc, const char *fmt, ...)
{
	struct va_format vaf = { .fmt = fmt };
	va_list args;

	va_start(args, fmt);
	vaf.va = &args;
	if (fc->log.log)
		pr_info_ratelimited("layerfs: %pV\n", &vaf);
	infofc(fc, "%pV", &vaf);
	va_end(args);
}

/**
 * lfs_override_creds - act on real objects as the mounter
 * @sb: the layerfs superblock
 *
 * Return: the caller's credentials, for revert_creds().
 */
const struct cred *lfs_override_creds(struct super_block *sb)
{
	return override_creds(LFS_SB(sb)->creator_cred);
}

/**
 * lfs_override_creds_as_caller - create objects owned by the caller
 * @mnt_userns: the idmapping of the layerfs mount the caller came through
 * @dentry: the layerfs dentry the new object is made for
 * @mode: the new object's type and permissions
 * @old: set to the caller's credentials, for lfs_revert_creds_as_caller()
 *
 * The mounter's credentials, with the caller's fsuid and fsgid: the
 * upper filesystem then gives a new object the caller as its owner
 * (and applies its own group inheritance), while the mounter's rights
 * let the creation through.  In a set-group-ID directory the fsgid is
 * the directory's group, which an object made in work/ (where nothing
 * is inherited) must have too.  An LSM sees the caller's credentials and
 * may label the new ones (security_dentry_create_files_as), as it does
 * under overlayfs.  On an idmapped layerfs mount the owner is the
 * caller's fsuid and fsgid mapped through the mount's idmapping into the
 * filesystem's view, as inode_init_owner() gives it on any filesystem;
 * the VFS refused the creation (EOVERFLOW) if they have no mapping there.
 */
int lfs_override_creds_as_caller(struct user_namespace *mnt_userns,
				 struct dentry *dentry, umode_t mode,
				 const struct cred **old)
{
	struct user_namespace *fs_userns = dentry->d_sb->s_user_ns;
	kuid_t fsuid = mapped_fsuid(mnt_userns, fs_userns);
	kgid_t fsgid = mapped_fsgid(mnt_userns, fs_userns);
	struct cred *cred;
	int err;

	/* unreachable: may_create() and vfs_tmpfile() checked the mapping */
	if (WARN_ON_ONCE(!uid_valid(fsuid) || !gid_valid(fsgid)))
		return -EOVERFLOW;

	/* a copy of the mounter's credentials */
	*old = lfs_override_creds(dentry->d_sb);
	cred = prepare_creds();
	revert_creds(*old);
	if (!cred)
		return -ENOMEM;
	cred->fsuid = fsuid;
	cred->fsgid = fsgid;
	/*
	 * d_parent is stable: the caller holds the parent's i_rwsem, or
	 * @dentry is an O_TMPFILE one, which nothing can move
	 */
	if (d_inode(dentry->d_parent)->i_mode & S_ISGID)
		cred->fsgid = d_inode(dentry->d_parent)->i_gid;
	err = security_dentry_create_files_as(dentry, mode, &dentry->d_name,
					      current_cred(), cred);
	if (err) {
		put_cred(cred);
		return err;
	}
	*old = override_creds(cred);
	put_cred(cred);
	return 0;
}

void lfs_revert_creds_as_caller(const struct cred *old)
{
	revert_creds(old);
}

/**
 * lfs_real_may_read - may the mounter read a real object's content?
 * @path: the real object, on its layer's mount
 *
 * Before layerfs reads a real file's data (copy-up) or a real
 * directory's names (a merged listing, the name index) with
 * dentry_open(), which checks nothing, it asks what overlayfs asks
 * before it opens such an object: read access for the mounter, through
 * the layer mount's idmapping.  The mount then never shows what its
 * mounter could not read itself.  Caller runs as the mounter.
 *
 * Return: 0, or -errno (-EACCES).
 */
int lfs_real_may_read(const struct path *path)
{
	return inode_permission(mnt_user_ns(path->mnt), d_inode(path->dentry),
				MAY_OPEN | MAY_READ);
}

/**
 * lfs_instance - one real instance of a (directory) entry
 * @sbi: the superblock info
 * @e: the entry
 * @upper: the entry's upper object as read once by the caller, or NULL
 * @i: which: 0 is @upper when there is one, then the lower objects
 * @out: filled in
 */
void lfs_instance(const struct lfs_sb *sbi, const struct lfs_entry *e,
		  struct dentry *upper, unsigned int i, struct lfs_real *out)
{
	if (upper) {
		if (!i) {
			out->dentry = upper;
			out->layer = sbi->upper;
			out->flags = 0;
			return;
		}
		i--;
	}
	*out = e->real[i];
}

/**
 * lfs_entry_alloc - an empty entry with room for @nr real objects
 * @nr: how many real objects it may hold
 * @dir: a directory's entry, with a struct lfs_dir_entry around it
 */
struct lfs_entry *lfs_entry_alloc(unsigned int nr, bool dir)
{
	struct lfs_dir_entry *de;
	struct lfs_entry *e;

	/* charged to the memory cgroup that looks it up, as the dentry is */
	if (!dir)
		return kvzalloc(struct_size(e, real, nr), GFP_KERNEL_ACCOUNT);
	de = kvzalloc(struct_size(de, e.real, nr), GFP_KERNEL_ACCOUNT);
	if (!de)
		return NULL;
	de->e.dir = true;
	return &de->e;
}

/**
 * lfs_entry_free - drop an entry's real dentries and free it
 * @e: the entry, or NULL
 */
void lfs_entry_free(struct lfs_entry *e)
{
	struct lfs_dir_entry *de = lfs_dir_entry(e);
	unsigned int i;

	if (!e)
		return;
	if (de) {
		lfs_ni_release(de);
		lfs_listing_release(de);
	}
	dput(e->upper);
	for (i = 0; i < e->nr; i++)
		dput(e->real[i].dentry);
	kvfree(de ? (void *)de : e);
}

/**
 * lfs_get_marker - read one of the mount's markers on a real object
 * @sbi: the superblock info: the marker's name (lfs_xattr_name())
 * @layer: the layer @real lives in
 * @real: the real dentry, positive
 * @xa: the marker
 * @buf: where the value goes
 * @size: room in @buf
 *
 * Caller must run with the mounter's credentials.
 * Return: the value's length, or -errno (-ENODATA when absent).
 */
int lfs_get_marker(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		   struct dentry *real, enum lfs_xattr xa, void *buf,
		   size_t size)
{
	return vfs_getxattr(mnt_user_ns(layer->mnt), real,
			    lfs_xattr_name(sbi, xa), buf, size);
}

/**
 * lfs_ino - the inode number layerfs shows for a real object
 * @sbi: the superblock info
 * @layer: the layer the object lives in
 * @real_ino: its inode number there
 *
 * Layers on one filesystem keep their inode numbers.  With several
 * filesystems, the filesystem's index goes in the top bits; a real number
 * that already uses those bits is kept as it is (and may then collide),
 * with a warning.
 */
u64 lfs_ino(const struct lfs_sb *sbi, const struct lfs_layer *layer,
	    u64 real_ino)
{
	if (!layer->fsid)
		return real_ino;
	if (real_ino >> sbi->xino_shift) {
		pr_warn_once("layerfs: inode number %llu of layer \"%s\" too large to keep st_ino unique\n",
			     real_ino, layer->name);
		return real_ino;
	}
	return real_ino | ((u64)layer->fsid << sbi->xino_shift);
}

/**
 * lfs_sync_status - may a sync of the upper layer be skipped?
 * @sbi: the superblock info
 *
 * Return: 1 when the sync must be done (the mount is not volatile); for
 * a volatile mount 0, or the writeback error the upper filesystem met
 * since the mount (each sync from then on reports it: what the mount
 * wrote may be lost, and nothing the mount does can tell).
 */
int lfs_sync_status(const struct lfs_sb *sbi)
{
	if (lfs_should_sync(sbi))
		return 1;
	return errseq_check(&sbi->upper->mnt->mnt_sb->s_wb_err,
			    sbi->upper_wb_err);
}

/**
 * lfs_ptrset_init - an empty set with room for @nr pointers
 * @set: the set
 * @nr: how many pointers it will hold, at least 1
 *
 * Open addressing, at most half full, charged to the caller's memory
 * cgroup (a mount's sets live as long as it does).
 * Return: 0 or -ENOMEM.
 */
int lfs_ptrset_init(struct lfs_ptrset *set, unsigned int nr)
{
	unsigned int size = roundup_pow_of_two(2 * max(nr, 1U));

	set->slot = kvcalloc(size, sizeof(*set->slot), GFP_KERNEL_ACCOUNT);
	if (!set->slot)
		return -ENOMEM;
	set->mask = size - 1;
	return 0;
}

/* @p's slot in @set: the one that holds it, or the free one it would take */
static const void **lfs_ptrset_slot(const struct lfs_ptrset *set,
				    const void *p)
{
	unsigned int i = hash_ptr(p, 32) & set->mask;

	while (set->slot[i] && set->slot[i] != p)
		i = (i + 1) & set->mask;
	return &set->slot[i];
}

/**
 * lfs_ptrset_add - put @p in @set (once, however often it is added)
 * @set: the set, with room left (lfs_ptrset_init())
 * @p: the pointer, not NULL
 */
void lfs_ptrset_add(struct lfs_ptrset *set, const void *p)
{
	*lfs_ptrset_slot(set, p) = p;
}

/**
 * lfs_ptrset_has - is @p in @set?
 * @set: the set (one never initialised holds nothing)
 * @p: the pointer
 */
bool lfs_ptrset_has(const struct lfs_ptrset *set, const void *p)
{
	return set->slot && *lfs_ptrset_slot(set, p);
}

/**
 * lfs_ptrset_free - free @set's room; it holds nothing after
 * @set: the set
 */
void lfs_ptrset_free(struct lfs_ptrset *set)
{
	kvfree(set->slot);
	set->slot = NULL;
	set->mask = 0;
}
