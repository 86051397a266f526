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
 * the mount (lfs_dir_changed(), under the directory's i_rwsem, which
 * readers hold shared) takes it from the entry; opens that hold it keep
 * reading it, and the next open, or a rewinddir(), gets a new one.
 * Positions are indexes into a listing, so they stay put for
 * telldir()/seekdir() and are the same in every open of one listing.
 * The lower layers do not change while mounted and changes to the upper
 * layer outside the mount are not seen, as in the kernel's overlay.
 * Memory is reclaimable: a shrinker frees kept listings, least recently
 * opened first.
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
	refcount_t ref;			/* the entry's, and each reader's */
	struct list_head lru;		/* on lfs_rd_lru while kept: lfs_rd_lock */
	struct lfs_entry *owner;	/* the entry keeping it: lfs_rd_lock */
	size_t bytes;			/* memory held */
};

/* kept listings, least recently opened first, and the pages they hold */
static DEFINE_SPINLOCK(lfs_rd_lock);
static LIST_HEAD(lfs_rd_lru);
static unsigned long lfs_rd_kept_nr;
static unsigned long lfs_rd_pages;
/* listings built since the module was loaded (debugfs) */
static atomic_long_t lfs_rd_builds = ATOMIC_LONG_INIT(0);

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
	kfree(l);
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
	const struct lfs_real *real;	/* the instance being read */
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
	unsigned int dir_flags = rd->real->flags;

	if (rd->real->layer == rd->sbi->upper)
		return true;
	switch (type) {
	case DT_CHR:
	case DT_LNK:
	case DT_UNKNOWN:
		return true;
	case DT_REG:
		return dir_flags & LFS_REAL_XWHITEOUTS;
	}
	return false;
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
 * (lfs_make_key()): a copy's origin, or on a mount that reads no origin
 * (userxattr), for a directory that is not opaque, the number of its
 * first lower instance, found as the lower layers are read
 * (lfs_rd_lower_ino()).  Caller runs as the mounter.
 */
static void lfs_rd_upper_ino(const struct lfs_sb *sbi, struct lfs_dirent *d,
			     struct dentry *real)
{
	struct lfs_origin origin;
	unsigned int flags;

	if (lfs_use_origin(sbi)) {
		if (!lfs_read_origin(sbi, real, &origin))
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
			      unsigned int from, const struct lfs_real *r)
{
	unsigned int i, out = from;

	for (i = from; i < l->count; i++) {
		struct lfs_dirent *d = l->order[i];
		struct dentry *real;

		if (d->aufs) {
			int err = lfs_rd_aufs_hide(l, d);

			if (err)
				return err;
		} else if (d->check) {
			real = lookup_one_unlocked(mnt_user_ns(r->layer->mnt),
						   d->n.name, r->dentry, d->n.len);
			if (IS_ERR(real))
				return PTR_ERR(real);
			if (d_is_positive(real)) {
				d->whiteout = lfs_is_whiteout(sbi, r->layer, real, r->flags);
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

static int lfs_rd_read_layer(struct lfs_rd_ctx *rd, const struct lfs_real *r)
{
	struct path path = { .mnt = r->layer->mnt, .dentry = r->dentry };
	unsigned int from = rd->listing->count;
	struct file *realfile;
	int err;

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

static struct lfs_listing *lfs_listing_build(struct dentry *dentry)
{
	const struct lfs_entry *e = LFS_E(dentry);
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

	l = kzalloc(sizeof(*l), GFP_KERNEL_ACCOUNT);
	if (!l)
		return ERR_PTR(-ENOMEM);
	refcount_set(&l->ref, 1);
	INIT_LIST_HEAD(&l->lru);
	err = lfs_nametab_init(&l->names, 6);
	if (err)
		goto out_free;
	rd.listing = l;

	old_cred = lfs_override_creds(dentry->d_sb);
	for (i = 0; i < lfs_nr_instances(e, upper) && !err; i++) {
		lfs_instance(rd.sbi, e, upper, i, &r);
		err = lfs_rd_read_layer(&rd, &r);
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

/* Take @l from its entry.  Caller holds lfs_rd_lock. */
static void lfs_listing_detach_locked(struct lfs_listing *l)
{
	lockdep_assert_held(&lfs_rd_lock);
	l->owner->listing = NULL;
	l->owner = NULL;
	list_del_init(&l->lru);
	lfs_rd_kept_nr--;
	lfs_rd_pages -= DIV_ROUND_UP(l->bytes, PAGE_SIZE);
}

/*
 * Keep @l with @e, unless the directory changed since @gen was read or
 * another reader kept one first.  Caller holds lfs_rd_lock.
 */
static void lfs_listing_keep_locked(struct lfs_entry *e, struct lfs_listing *l,
				    unsigned long gen)
{
	lockdep_assert_held(&lfs_rd_lock);
	if (e->listing || e->listing_gen != gen)
		return;
	refcount_inc(&l->ref);
	l->owner = e;
	e->listing = l;
	list_add_tail(&l->lru, &lfs_rd_lru);
	lfs_rd_kept_nr++;
	lfs_rd_pages += DIV_ROUND_UP(l->bytes, PAGE_SIZE);
}

/*
 * lfs_listing_get - the listing of a directory, kept or built
 * @dentry: the layerfs directory
 *
 * Return: a referenced listing (lfs_listing_put()), or an ERR_PTR.
 */
static struct lfs_listing *lfs_listing_get(struct dentry *dentry)
{
	struct lfs_entry *e = LFS_E(dentry);
	struct lfs_listing *l;
	unsigned long gen;

	spin_lock(&lfs_rd_lock);
	l = e->listing;
	if (l) {
		refcount_inc(&l->ref);
		list_move_tail(&l->lru, &lfs_rd_lru);
	}
	gen = e->listing_gen;
	spin_unlock(&lfs_rd_lock);
	if (l)
		return l;

	l = lfs_listing_build(dentry);
	if (IS_ERR(l))
		return l;
	spin_lock(&lfs_rd_lock);
	lfs_listing_keep_locked(e, l, gen);
	spin_unlock(&lfs_rd_lock);
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
	struct lfs_entry *e = LFS_E(dir);
	struct lfs_listing *l;

	if (!e)
		return;
	spin_lock(&lfs_rd_lock);
	e->listing_gen++;
	l = e->listing;
	if (l)
		lfs_listing_detach_locked(l);
	spin_unlock(&lfs_rd_lock);
	lfs_listing_put(l);
}

/**
 * lfs_listing_release - drop an entry's kept listing, as the entry goes
 * @e: the entry
 */
void lfs_listing_release(struct lfs_entry *e)
{
	struct lfs_listing *l;

	if (!READ_ONCE(e->listing))
		return;
	spin_lock(&lfs_rd_lock);
	l = e->listing;
	if (l)
		lfs_listing_detach_locked(l);
	spin_unlock(&lfs_rd_lock);
	lfs_listing_put(l);
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
 * Return: 0 when no layer shows anything in it (whiteouts do not count),
 * -ENOTEMPTY, or -errno.
 */
int lfs_dir_check_empty(struct dentry *dentry)
{
	struct lfs_listing *l;
	int err;

	l = lfs_listing_get(dentry);
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
	return READ_ONCE(lfs_rd_pages);
}

static unsigned long lfs_rd_scan(struct shrinker *s, struct shrink_control *sc)
{
	struct lfs_listing *l, *next;
	unsigned long freed = 0;
	LIST_HEAD(dispose);

	spin_lock(&lfs_rd_lock);
	while (freed < sc->nr_to_scan && !list_empty(&lfs_rd_lru)) {
		l = list_first_entry(&lfs_rd_lru, struct lfs_listing, lru);
		freed += DIV_ROUND_UP(l->bytes, PAGE_SIZE);
		lfs_listing_detach_locked(l);
		list_add(&l->lru, &dispose);
	}
	spin_unlock(&lfs_rd_lock);
	list_for_each_entry_safe(l, next, &dispose, lru) {
		list_del(&l->lru);
		lfs_listing_put(l);
	}
	return freed;
}

static struct shrinker lfs_rd_shrinker = {
	.count_objects	= lfs_rd_count,
	.scan_objects	= lfs_rd_scan,
	.seeks		= DEFAULT_SEEKS,
};

/* debugfs layerfs/listings: what the kept listings of all mounts hold */
static int lfs_rd_stats_show(struct seq_file *m, void *v)
{
	unsigned long nr, pages;

	spin_lock(&lfs_rd_lock);
	nr = lfs_rd_kept_nr;
	pages = lfs_rd_pages;
	spin_unlock(&lfs_rd_lock);
	seq_printf(m, "kept %lu\npages %lu\nbuilt %ld\n", nr, pages,
		   atomic_long_read(&lfs_rd_builds));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lfs_rd_stats);

int lfs_rd_init(struct dentry *debugfs)
{
	int err;

	err = register_shrinker(&lfs_rd_shrinker, "layerfs-listing");
	if (!err)
		debugfs_create_file("listings", 0444, debugfs, NULL,
				    &lfs_rd_stats_fops);
	return err;
}

void lfs_rd_exit(void)
{
	unregister_shrinker(&lfs_rd_shrinker);
}
