// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: merged directory listing.
 *
 * A listing is built by reading each layer that holds the directory in
 * turn, top first; a name is kept the first time it is seen, and
 * whiteouts hide the name (and themselves) in the layers below.
 *
 * The listing is kept with the directory's entry and served to every
 * open and every reader: it is never changed once built, so readers
 * share it without a lock.  Any change of the directory's names through
 * the mount, successful or not, takes it from the entry
 * (lfs_dir_changed()); opens that hold it keep reading it, and the next
 * open, or a rewinddir(), gets a new one.  Positions are indexes into a
 * listing, so they stay put for telldir()/seekdir() and are the same in
 * every open of one listing.
 *
 * The lower layers do not change while mounted.  A change made to the
 * upper directory outside the mount is undefined, as in the kernel's
 * overlay, but a kept listing still notices most of them: it records
 * the upper directory's change and modification times when it is built,
 * and is not served once they moved (times have the filesystem's clock
 * granularity, so a change in the same tick as the build can be missed).
 * rmdir's emptiness check never uses a kept listing.
 *
 * Memory is charged to the memory cgroup of the task that built the
 * listing and is reclaimable: the shrinker is memory-cgroup aware and
 * frees kept listings least recently opened first.
 *
 * Names are hashed for de-duplication, so a directory of many entries in
 * many layers costs time linear in the entries read.
 *
 * With whiteout=aufs, names under ".wh." are never listed; once a layer
 * is read, each of its ".wh.NAME" hides NAME in the layers below (but not
 * a NAME of the same layer).
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/refcount.h>
#include <linux/shrinker.h>
#include <linux/list_lru.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/stringhash.h>
#include "layerfs.h"

/* one name in a merged listing */
struct lfs_dirent {
	struct lfs_name n;		/* first: the name, hashed */
	u64 ino;			/* d_ino to report */
	unsigned char type;		/* DT_* */
	bool whiteout;			/* hides the name; never listed */
	bool check;			/* may be a whiteout: look it up */
	bool aufs;			/* ".wh.NAME": hides NAME below this layer */
	bool lower_ino;			/* merged upper directory: d_ino from below */
};

struct lfs_listing {
	struct lfs_nametab names;	/* every name seen, whiteouts included */
	struct lfs_dirent **order;	/* visible entries in listing order */
	unsigned int count;		/* entries in @order */
	unsigned int cap;		/* room in @order */
	/* the entry's, lfs_rd_lru's while on it, and each reader's */
	refcount_t ref;
	/* on lfs_rd_lru while kept, and maybe a while after (list_lru's lock) */
	struct list_head lru;
	struct list_head dispose;	/* the shrinker's, once off lfs_rd_lru */
	unsigned int shrunk_refs;	/* references the shrinker took over */
	struct lfs_dir_entry *owner;	/* the entry keeping it: lfs_rd_lock */
	struct timespec64 upper_ctime;	/* the upper directory's, at build */
	struct timespec64 upper_mtime;	/* (zero: it had none) */
	size_t bytes;			/* memory held */
};

/*
 * lfs_rd_lock: a leaf lock, taken in name operations, copy-up, d_release
 * and the shrinker, inside the list_lru's own lock there; nothing is
 * allocated and no list_lru call made under it.  It guards each entry's
 * listing and listing_gen and each kept listing's owner.
 *
 * A kept listing is on lfs_rd_lru, which holds a reference of its own:
 * whoever takes it off (list_lru_del() returning true, or the shrinker)
 * drops that.  It is put on after lfs_rd_lock is released, so an entry
 * may drop it in between: then it waits on lfs_rd_lru, with no owner,
 * for the shrinker.
 */
static DEFINE_SPINLOCK(lfs_rd_lock);
/* kept listings, per memory cgroup and node (list_lru's lock) */
static struct list_lru lfs_rd_lru;
/* lfs_rd_lru may be used: set once the shrinker is registered */
static bool lfs_rd_ready;
static struct kmem_cache *lfs_listing_cachep;
/* pages the kept listings hold, and listings built (debugfs) */
static atomic_long_t lfs_rd_pages = ATOMIC_LONG_INIT(0);
static atomic_long_t lfs_rd_builds = ATOMIC_LONG_INIT(0);

/* a listing's name table: its smallest size, and the largest to start at */
#define LFS_RD_MIN_BITS		6
#define LFS_RD_MAX_START_BITS	12
/* directory bytes taken to hold one name, for the table's start */
#define LFS_RD_BYTES_PER_NAME	64

/* per open directory */
struct lfs_dir_file {
	struct lfs_listing *listing;	/* built on first read, NULL after rewind */
};

static void lfs_listing_free(struct lfs_listing *l)
{
	if (!l)
		return;
	lfs_nametab_destroy(&l->names);
	kvfree(l->order);
	kmem_cache_free(lfs_listing_cachep, l);
}

static void lfs_listing_put(struct lfs_listing *l)
{
	if (l && refcount_dec_and_test(&l->ref))
		lfs_listing_free(l);
}

static int lfs_listing_append(struct lfs_listing *l, struct lfs_dirent *d)
{
	if (l->count == l->cap) {
		unsigned int cap = l->cap ? 2 * l->cap : 64;
		struct lfs_dirent **order;

		/* no wrap to a small cap */
		if (l->cap >= UINT_MAX / 2)
			return -ENOMEM;
		order = kvmalloc_array(cap, sizeof(*order), GFP_KERNEL_ACCOUNT);
		if (!order)
			return -ENOMEM;
		if (l->count)
			memcpy(order, l->order, l->count * sizeof(*order));
		kvfree(l->order);
		l->order = order;
		l->cap = cap;
	}
	l->order[l->count++] = d;
	return 0;
}

/* state while reading one layer's instance of the directory */
struct lfs_rd_ctx {
	struct dir_context ctx;
	struct lfs_listing *listing;
	const struct lfs_sb *sbi;
	/* the instance being read: a part of the entry, or the upper one */
	struct lfs_real *real;
	unsigned int emitted;		/* entries seen by this iterate call */
	int err;
};

/*
 * Must the name be looked up?  When it may be a whiteout, and in the
 * upper layer always: a copied-up object shows its lower original's
 * inode number.
 */
static bool lfs_rd_needs_check(const struct lfs_rd_ctx *rd, unsigned int type)
{
	unsigned int dir_flags = READ_ONCE(rd->real->flags);

	if (rd->real->layer == rd->sbi->upper)
		return true;
	switch (type) {
	case DT_CHR:
	case DT_LNK:
	case DT_UNKNOWN:
		return true;
	case DT_REG:
		/* a marker not read yet is read after the layer's read */
		return dir_flags & (LFS_REAL_XWHITEOUTS | LFS_REAL_XUNREAD);
	}
	return false;
}

/*
 * Is @d, marked by lfs_rd_needs_check(), still to be looked up?  A
 * regular file of a lower layer may have been a candidate only because
 * its directory's marker was not read (LFS_REAL_XUNREAD), which is read
 * now, outside the real directory's lock, once for the part
 * (lfs_real_flags()): a directory without regular files has it read by
 * nothing.
 */
static bool lfs_rd_still_check(const struct lfs_sb *sbi,
			       const struct lfs_dirent *d, struct lfs_real *r)
{
	return r->layer == sbi->upper || d->type != DT_REG ||
	       (lfs_real_flags(sbi, r) & LFS_REAL_XWHITEOUTS);
}

/*
 * @d, listed by a layer above, is a merged directory of the upper layer on
 * a mount that reads no origin (lfs_rd_upper_dir()): it shows the number
 * of its first lower instance, as lfs_make_key() gives the directory
 * itself.  The first layer below that holds the name decides: a
 * directory there is that instance; anything else (a whiteout, a file)
 * means the directory has none.  A name of unknown type keeps the upper
 * number.
 */
static void lfs_rd_lower_ino(const struct lfs_rd_ctx *rd, struct lfs_dirent *d,
			     u64 ino, unsigned int type)
{
	if (!d->lower_ino)
		return;
	d->lower_ino = false;
	if (type == DT_DIR)
		d->ino = lfs_ino(rd->sbi, rd->real->layer, ino);
}

static bool lfs_rd_actor(struct dir_context *ctx, const char *name, int len,
			 loff_t offset, u64 ino, unsigned int type)
{
	struct lfs_rd_ctx *rd = container_of(ctx, struct lfs_rd_ctx, ctx);
	struct lfs_listing *l = rd->listing;
	unsigned int hash;
	struct lfs_dirent *d;

	rd->emitted++;
	if (len <= 2 && name[0] == '.' && (len == 1 || name[1] == '.'))
		return true;

	hash = full_name_hash(NULL, name, len);
	d = (struct lfs_dirent *)lfs_nametab_find(&l->names, name, len, hash);
	if (d) {
		/* a layer above has the name */
		lfs_rd_lower_ino(rd, d, ino, type);
		return true;
	}

	d = lfs_nametab_add(&l->names, sizeof(*d), name, len, hash);
	if (!d) {
		rd->err = -ENOMEM;
		return false;
	}
	if (lfs_aufs(rd->sbi) && lfs_is_aufs_name(name, len)) {
		/* acted on by lfs_rd_check_layer(), then dropped */
		d->aufs = true;
		d->whiteout = true;
		rd->err = lfs_listing_append(l, d);
		return !rd->err;
	}
	d->type = type;
	d->ino = lfs_ino(rd->sbi, rd->real->layer, ino);
	d->check = lfs_rd_needs_check(rd, type);

	rd->err = lfs_listing_append(l, d);
	return !rd->err;
}

/*
 * An aufs whiteout ".wh.NAME" of the layer just read: NAME, unless this
 * layer or one above holds it, is hidden from the layers below.
 */
static int lfs_rd_aufs_hide(struct lfs_listing *l, const struct lfs_dirent *wh)
{
	const unsigned int plen = sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;
	const char *name = wh->n.name + plen;
	unsigned int len = wh->n.len - plen;
	struct lfs_dirent *d;
	u32 hash;

	/* markers and aufs's own names: nothing to hide */
	if (!len || lfs_is_aufs_name(name, len))
		return 0;
	hash = full_name_hash(NULL, name, len);
	d = (struct lfs_dirent *)lfs_nametab_find(&l->names, name, len, hash);
	if (d) {
		/* the directory has no lower instance below this layer */
		d->lower_ino = false;
		return 0;
	}
	d = lfs_nametab_add(&l->names, sizeof(*d), name, len, hash);
	if (!d)
		return -ENOMEM;
	d->whiteout = true;
	return 0;
}

/*
 * d_ino of @d, a name of the upper layer, as stat shows it
 * (lfs_make_key()): a copy's origin; without one (a mount that reads no
 * origin, userxattr, or an upper directory made outside the mount), for
 * a directory that is not opaque, the number of its first lower
 * instance, found as the lower layers are read (lfs_rd_lower_ino()).
 * Caller runs as the mounter.
 */
static void lfs_rd_upper_ino(const struct lfs_sb *sbi, struct lfs_dirent *d,
			     struct dentry *real)
{
	struct lfs_origin origin;
	unsigned int flags;

	if (lfs_use_origin(sbi) && !lfs_read_origin(sbi, real, &origin)) {
		d->ino = le64_to_cpu(origin.ino);
		return;
	}
	d->lower_ino = d_is_dir(real) &&
		       !lfs_dir_marker(sbi, sbi->upper, real, &flags);
}

/*
 * After a layer is read (its lock released), look up the new names that
 * may be whiteouts.  A whiteout stays hashed, to hide the name below, but
 * leaves the listing; a name of unknown type learns its type.  aufs
 * whiteouts act now, when every name of their layer is known.
 */
static int lfs_rd_check_layer(const struct lfs_sb *sbi, struct lfs_listing *l,
			      unsigned int from, struct lfs_real *r)
{
	unsigned int i, out = from;

	for (i = from; i < l->count; i++) {
		struct lfs_dirent *d = l->order[i];
		struct dentry *real;

		if (d->aufs) {
			int err = lfs_rd_aufs_hide(l, d);

			if (err)
				return err;
		} else if (d->check && lfs_rd_still_check(sbi, d, r)) {
			real = lookup_one_unlocked(mnt_user_ns(r->layer->mnt),
						   d->n.name, r->dentry, d->n.len);
			if (IS_ERR(real))
				return PTR_ERR(real);
			if (d_is_positive(real)) {
				d->whiteout = lfs_is_whiteout(sbi, r->layer, real,
							      lfs_parent_flags(sbi, r, real));
				if (d->type == DT_UNKNOWN)
					d->type = fs_umode_to_dtype(d_inode(real)->i_mode);
				if (!d->whiteout && r->layer == sbi->upper)
					lfs_rd_upper_ino(sbi, d, real);
			} else {
				/* vanished from a layer that must not change */
				d->whiteout = true;
			}
			dput(real);
		}
		if (!d->whiteout)
			l->order[out++] = d;
	}
	l->count = out;
	return 0;
}

/*
 * Read one instance into the listing.  Every instance must be readable
 * by the mounter, not only the top one that lfs_permission() checked at
 * open: a listing shows no names of a directory the mounter could not
 * list itself, and fails with -EACCES as overlayfs's does.  Caller runs
 * as the mounter.
 */
static int lfs_rd_read_layer(struct lfs_rd_ctx *rd, struct lfs_real *r)
{
	struct path path = { .mnt = r->layer->mnt, .dentry = r->dentry };
	unsigned int from = rd->listing->count;
	struct file *realfile;
	int err;

	err = lfs_real_may_read(&path);
	if (err)
		return err;
	/* the layerfs directory's atime is what counts: lfs_update_time() */
	realfile = dentry_open(&path, O_RDONLY | O_DIRECTORY | O_LARGEFILE |
			       O_NOATIME, current_cred());
	if (IS_ERR(realfile))
		return PTR_ERR(realfile);

	rd->real = r;
	rd->ctx.pos = 0;
	do {
		rd->emitted = 0;
		rd->err = 0;
		err = iterate_dir(realfile, &rd->ctx);
		if (!err)
			err = rd->err;
	} while (!err && rd->emitted);
	fput(realfile);
	if (err)
		return err;
	return lfs_rd_check_layer(rd->sbi, rd->listing, from, r);
}

/* the upper directory's change and modification times, or zero */
static void lfs_listing_upper_times(const struct dentry *upper,
				    struct timespec64 *ctime,
				    struct timespec64 *mtime)
{
	const struct inode *inode = upper ? d_inode(upper) : NULL;

	*ctime = (struct timespec64){};
	*mtime = (struct timespec64){};
	if (!inode)
		return;
	/* read without its lock: a torn read only costs a rebuild */
	ctime->tv_sec = READ_ONCE(inode->i_ctime.tv_sec);
	ctime->tv_nsec = READ_ONCE(inode->i_ctime.tv_nsec);
	mtime->tv_sec = READ_ONCE(inode->i_mtime.tv_sec);
	mtime->tv_nsec = READ_ONCE(inode->i_mtime.tv_nsec);
}

/* Did the upper directory change since @l was built (outside the mount)? */
static bool lfs_listing_stale(const struct lfs_listing *l,
			      const struct dentry *upper)
{
	struct timespec64 ctime, mtime;

	lfs_listing_upper_times(upper, &ctime, &mtime);
	return !timespec64_equal(&ctime, &l->upper_ctime) ||
	       !timespec64_equal(&mtime, &l->upper_mtime);
}

/*
 * The size to start a listing's name table at, from the size of the
 * directory's largest instance: a directory's i_size grows with its
 * entries (ext4: blocks of entries of 12 bytes or more, tmpfs: 20 a
 * name), so a large one starts near the buckets it will need instead of
 * doubling up to them from the smallest table, rehashing every name each
 * time (2% of a cold readdir of the debian tree).  The listing holds at
 * least the names of its largest instance, and the estimate takes a name
 * to fill 64 bytes, more than most take, so that a directory of one
 * block (most of them, with a few names) keeps the smallest table, and a
 * directory in many layers starts no larger than one of them needs: a
 * kept listing must not hold memory its names do not use.  A size that
 * says more (a directory whose entries were removed keeps its size, a
 * FUSE server says what it likes) is capped: above the cap the table
 * doubles as before.
 */
static unsigned int lfs_listing_hash_bits(const struct lfs_sb *sbi,
					  const struct lfs_entry *e,
					  struct dentry *upper)
{
	unsigned int i, n = lfs_nr_instances(e, upper);
	u64 size, names = 1;
	struct lfs_real r;

	for (i = 0; i < n; i++) {
		lfs_instance(sbi, e, upper, i, &r);
		/* (a negative size from a FUSE server: the cap) */
		size = i_size_read(d_inode(r.dentry));
		/* at most two names a bucket before the table doubles */
		names = max(names, div_u64(size, 2 * LFS_RD_BYTES_PER_NAME));
	}
	return clamp_t(unsigned int, order_base_2(names), LFS_RD_MIN_BITS,
		       LFS_RD_MAX_START_BITS);
}

static struct lfs_listing *lfs_listing_build(struct dentry *dentry)
{
	struct lfs_entry *e = LFS_E(dentry);
	struct dentry *upper = lfs_upper(dentry);
	struct lfs_rd_ctx rd = {
		.ctx.actor = lfs_rd_actor,
		.sbi = LFS_SB(dentry->d_sb),
	};
	const struct cred *old_cred;
	struct lfs_listing *l;
	struct lfs_real r;
	unsigned int i;
	int err;

	/* its memory cgroup gets a list on lfs_rd_lru (SLAB_ACCOUNT) */
	l = kmem_cache_alloc_lru(lfs_listing_cachep, &lfs_rd_lru,
				 GFP_KERNEL | __GFP_ZERO);
	if (!l)
		return ERR_PTR(-ENOMEM);
	refcount_set(&l->ref, 1);
	INIT_LIST_HEAD(&l->lru);
	err = lfs_nametab_init(&l->names,
			       lfs_listing_hash_bits(rd.sbi, e, upper));
	if (err)
		goto out_free;
	rd.listing = l;
	/* before the layers are read: a change after this moves them */
	lfs_listing_upper_times(upper, &l->upper_ctime, &l->upper_mtime);

	old_cred = lfs_override_creds(dentry->d_sb);
	for (i = 0; i < lfs_nr_instances(e, upper) && !err; i++) {
		struct lfs_real *part = &r;

		/* a lower part itself, whose flags may be filled in */
		if (upper && !i)
			lfs_instance(rd.sbi, e, upper, i, &r);
		else
			part = &e->real[upper ? i - 1 : i];
		err = lfs_rd_read_layer(&rd, part);
	}
	revert_creds(old_cred);
	if (err)
		goto out_free;
	l->bytes = sizeof(*l) + l->names.bytes + l->cap * sizeof(*l->order);
	atomic_long_inc(&lfs_rd_builds);
	return l;

out_free:
	lfs_listing_free(l);
	return ERR_PTR(err);
}

static unsigned long lfs_listing_pages(const struct lfs_listing *l)
{
	return DIV_ROUND_UP(l->bytes, PAGE_SIZE);
}

/*
 * Take @l from its entry.  Caller holds lfs_rd_lock, and then owns the
 * entry's reference: lfs_listing_discard() after the unlock.
 */
static void lfs_listing_detach_locked(struct lfs_listing *l)
{
	lockdep_assert_held(&lfs_rd_lock);
	l->owner->listing = NULL;
	l->owner = NULL;
	atomic_long_sub(lfs_listing_pages(l), &lfs_rd_pages);
}

/* A detached listing: off lfs_rd_lru, and the entry's reference put. */
static void lfs_listing_discard(struct lfs_listing *l)
{
	if (!l)
		return;
	if (list_lru_del(&lfs_rd_lru, &l->lru))
		lfs_listing_put(l);
	lfs_listing_put(l);
}

/* Take the listing @e keeps, if any, from it, and put it. */
static void lfs_listing_drop(struct lfs_dir_entry *e, bool changed)
{
	struct lfs_listing *l;

	spin_lock(&lfs_rd_lock);
	if (changed)
		e->listing_gen++;
	l = e->listing;
	if (l)
		lfs_listing_detach_locked(l);
	spin_unlock(&lfs_rd_lock);
	lfs_listing_discard(l);
}

/*
 * Keep @l with @e, unless the directory changed since @gen was read or
 * another reader kept one first.  Caller holds lfs_rd_lock, and puts a
 * kept listing on lfs_rd_lru after the unlock, with the reference taken
 * here for it.
 */
static bool lfs_listing_keep_locked(struct lfs_dir_entry *e,
				    struct lfs_listing *l, u64 gen)
{
	lockdep_assert_held(&lfs_rd_lock);
	if (e->listing || e->listing_gen != gen)
		return false;
	/* the entry's and lfs_rd_lru's */
	refcount_add(2, &l->ref);
	l->owner = e;
	e->listing = l;
	atomic_long_add(lfs_listing_pages(l), &lfs_rd_pages);
	return true;
}

/*
 * lfs_listing_get - the listing of a directory, kept or built
 * @dentry: the layerfs directory
 *
 * Return: a referenced listing (lfs_listing_put()), or an ERR_PTR.
 */
static struct lfs_listing *lfs_listing_get(struct dentry *dentry)
{
	struct lfs_dir_entry *e = lfs_dir_entry(LFS_E(dentry));
	struct lfs_listing *l, *stale = NULL;
	bool kept;
	u64 gen;

	/* a directory's entry is a struct lfs_dir_entry */
	if (WARN_ON_ONCE(!e))
		return lfs_listing_build(dentry);
	spin_lock(&lfs_rd_lock);
	l = e->listing;
	if (l && lfs_listing_stale(l, lfs_upper(dentry))) {
		/* changed outside the mount: built again below */
		lfs_listing_detach_locked(l);
		e->listing_gen++;
		stale = l;
		l = NULL;
	} else if (l) {
		refcount_inc(&l->ref);
	}
	gen = e->listing_gen;
	spin_unlock(&lfs_rd_lock);
	lfs_listing_discard(stale);
	if (l) {
		/* least recently opened first, unless it just went */
		if (list_lru_del(&lfs_rd_lru, &l->lru))
			list_lru_add(&lfs_rd_lru, &l->lru);
		return l;
	}

	l = lfs_listing_build(dentry);
	if (IS_ERR(l))
		return l;
	spin_lock(&lfs_rd_lock);
	kept = lfs_listing_keep_locked(e, l, gen);
	spin_unlock(&lfs_rd_lock);
	if (kept)
		list_lru_add(&lfs_rd_lru, &l->lru);
	return l;
}

/**
 * lfs_dir_changed - a name of the directory changed through the mount
 * @dir: the layerfs directory
 *
 * Called after every change of its names, or of the markers that decide
 * them, whether or not the operation succeeded, and after a copy-up that
 * changes a name's d_ino (userxattr): the next open reads the layers
 * again.  Called after the change, so that a listing built across it is
 * not kept (listing_gen); operations on names hold the directory's
 * i_rwsem, copy-up holds only the object's lock.
 */
void lfs_dir_changed(struct dentry *dir)
{
	struct lfs_dir_entry *de = lfs_dir_entry(LFS_E(dir));

	if (de)
		lfs_listing_drop(de, true);
}

/**
 * lfs_listing_release - drop a directory entry's kept listing, as it goes
 * @de: the entry
 */
void lfs_listing_release(struct lfs_dir_entry *de)
{
	if (READ_ONCE(de->listing))
		lfs_listing_drop(de, false);
}

static int lfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct lfs_dir_file *df = file->private_data;
	struct lfs_listing *l;

	if (!dir_emit_dots(file, ctx))
		return 0;

	if (!df->listing) {
		l = lfs_listing_get(file->f_path.dentry);
		if (IS_ERR(l))
			return PTR_ERR(l);
		df->listing = l;
	}
	l = df->listing;

	while (ctx->pos - 2 < l->count) {
		struct lfs_dirent *d = l->order[ctx->pos - 2];

		if (!dir_emit(ctx, d->n.name, d->n.len, d->ino, d->type))
			break;
		ctx->pos++;
	}
	return 0;
}

static loff_t lfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct lfs_dir_file *df = file->private_data;
	loff_t pos;

	switch (whence) {
	case SEEK_SET:
		pos = offset;
		break;
	case SEEK_CUR:
		pos = file->f_pos + offset;
		break;
	default:
		return -EINVAL;
	}
	if (pos < 0)
		return -EINVAL;
	if (pos != file->f_pos) {
		file->f_pos = pos;
		file->f_version = 0;
	}
	/* rewinddir(): the next read sees the directory as it is now */
	if (pos == 0) {
		lfs_listing_put(df->listing);
		df->listing = NULL;
	}
	return pos;
}

static int lfs_dir_open(struct inode *inode, struct file *file)
{
	struct lfs_dir_file *df;

	df = kzalloc(sizeof(*df), GFP_KERNEL_ACCOUNT);
	if (!df)
		return -ENOMEM;
	file->private_data = df;
	return 0;
}

static int lfs_dir_release(struct inode *inode, struct file *file)
{
	struct lfs_dir_file *df = file->private_data;

	lfs_listing_put(df->listing);
	kfree(df);
	return 0;
}

/**
 * lfs_dir_check_empty - may this merged directory be removed?
 * @dentry: a layerfs directory
 *
 * Reads the layers afresh, never a kept listing: what it says decides
 * whether the upper directory is removed with what it holds.
 *
 * Return: 0 when no layer shows anything in it (whiteouts do not count),
 * -ENOTEMPTY, or -errno.
 */
int lfs_dir_check_empty(struct dentry *dentry)
{
	struct lfs_listing *l;
	int err;

	l = lfs_listing_build(dentry);
	if (IS_ERR(l))
		return PTR_ERR(l);
	err = l->count ? -ENOTEMPTY : 0;
	lfs_listing_put(l);
	return err;
}

/*
 * fsync of a directory reaches its upper directory, if it has one, but
 * on a volatile mount (lfs_sync_status()).
 */
static int lfs_dir_fsync(struct file *file, loff_t start, loff_t end,
			 int datasync)
{
	struct dentry *upper = lfs_upper(file->f_path.dentry);
	struct lfs_sb *sbi = LFS_SB(file_inode(file)->i_sb);
	const struct cred *old_cred;
	struct file *realfile;
	struct path path;
	int err;

	if (!upper)
		return 0;
	err = lfs_sync_status(sbi);
	if (err <= 0)
		return err;
	path.mnt = sbi->upper->mnt;
	path.dentry = upper;
	old_cred = lfs_override_creds(file_inode(file)->i_sb);
	realfile = dentry_open(&path, O_RDONLY | O_DIRECTORY, current_cred());
	err = PTR_ERR_OR_ZERO(realfile);
	if (!err) {
		err = vfs_fsync_range(realfile, start, end, datasync);
		fput(realfile);
	}
	revert_creds(old_cred);
	return err;
}

const struct file_operations lfs_dir_operations = {
	.open		= lfs_dir_open,
	.release	= lfs_dir_release,
	.llseek		= lfs_dir_llseek,
	.read		= generic_read_dir,
	.iterate_shared	= lfs_iterate,
	.fsync		= lfs_dir_fsync,
	.unlocked_ioctl	= lfs_dir_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static unsigned long lfs_rd_count(struct shrinker *s, struct shrink_control *sc)
{
	/* smp_store_release() in lfs_rd_init() */
	if (!smp_load_acquire(&lfs_rd_ready))
		return 0;
	return list_lru_shrink_count(&lfs_rd_lru, sc);
}

/*
 * A listing the shrinker came to, under the list_lru's lock: taken off
 * lfs_rd_lru, with its reference, and from its entry, if it still has
 * one, with the entry's; onto @arg, to be put.
 */
static enum lru_status lfs_rd_isolate(struct list_head *item,
				      struct list_lru_one *lru,
				      spinlock_t *lru_lock, void *arg)
{
	struct lfs_listing *l = container_of(item, struct lfs_listing, lru);
	struct list_head *dispose = arg;

	list_lru_isolate(lru, item);
	l->shrunk_refs = 1;
	spin_lock(&lfs_rd_lock);
	if (l->owner) {
		lfs_listing_detach_locked(l);
		l->shrunk_refs++;
	}
	spin_unlock(&lfs_rd_lock);
	list_add(&l->dispose, dispose);
	return LRU_REMOVED;
}

/* Put what lfs_rd_isolate() took, out of the list_lru's lock. */
static void lfs_rd_dispose(struct list_head *dispose)
{
	struct lfs_listing *l, *next;

	list_for_each_entry_safe(l, next, dispose, dispose) {
		list_del(&l->dispose);
		if (refcount_sub_and_test(l->shrunk_refs, &l->ref))
			lfs_listing_free(l);
	}
}

static unsigned long lfs_rd_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed;
	LIST_HEAD(dispose);

	/* smp_store_release() in lfs_rd_init() */
	if (!smp_load_acquire(&lfs_rd_ready))
		return SHRINK_STOP;
	freed = list_lru_shrink_walk(&lfs_rd_lru, sc, lfs_rd_isolate, &dispose);
	lfs_rd_dispose(&dispose);
	return freed;
}

static struct shrinker lfs_rd_shrinker = {
	.count_objects	= lfs_rd_count,
	.scan_objects	= lfs_rd_scan,
	.seeks		= DEFAULT_SEEKS,
	.flags		= SHRINKER_MEMCG_AWARE | SHRINKER_NUMA_AWARE,
};

/* debugfs layerfs/listings: what the kept listings of all mounts hold */
static int lfs_rd_stats_show(struct seq_file *m, void *v)
{
	seq_printf(m, "kept %lu\npages %ld\nbuilt %ld\n",
		   list_lru_count(&lfs_rd_lru), atomic_long_read(&lfs_rd_pages),
		   atomic_long_read(&lfs_rd_builds));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lfs_rd_stats);

int lfs_rd_init(struct dentry *debugfs)
{
	int err;

	lfs_listing_cachep = KMEM_CACHE(lfs_listing,
					SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT);
	if (!lfs_listing_cachep)
		return -ENOMEM;
	/* the shrinker's id, which a memory-cgroup aware list_lru needs */
	err = register_shrinker(&lfs_rd_shrinker, "layerfs-listing");
	if (err)
		goto out_cache;
	err = list_lru_init_memcg(&lfs_rd_lru, &lfs_rd_shrinker);
	if (err)
		goto out_shrinker;
	/* the shrinker's callbacks see lfs_rd_lru ready */
	smp_store_release(&lfs_rd_ready, true);
	debugfs_create_file("listings", 0444, debugfs, NULL, &lfs_rd_stats_fops);
	return 0;

out_shrinker:
	unregister_shrinker(&lfs_rd_shrinker);
out_cache:
	kmem_cache_destroy(lfs_listing_cachep);
	return err;
}

/*
 * After every mount went: no listing is kept or read any more, but one
 * dropped while it was put on lfs_rd_lru may still wait there.
 */
void lfs_rd_exit(void)
{
	LIST_HEAD(dispose);

	unregister_shrinker(&lfs_rd_shrinker);
	list_lru_walk(&lfs_rd_lru, lfs_rd_isolate, &dispose, ULONG_MAX);
	lfs_rd_dispose(&dispose);
	list_lru_destroy(&lfs_rd_lru);
	kmem_cache_destroy(lfs_listing_cachep);
}
