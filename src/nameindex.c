// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: the name index of a merged directory with many lower parts.
 *
 * A lookup walks the lower instances of the parent directory top-down.
 * In a deep stack most of those instances do not hold the name, and a
 * miss (PATH and library searches) visits every one of them.  The index
 * records, for each name of any lower instance, which instances hold it
 * (positions in the entry's real[], top first).  The walk then visits
 * only those, with the same rules for whiteouts and opaque directories,
 * so it gives the same answer as the full walk; a name in no instance
 * costs one hash probe.
 *
 * With whiteout=aufs, an entry ".wh.NAME" is recorded as NAME's whiteout
 * in its instance, and the walk takes it from the index, without a
 * lookup; names under the prefix are never looked up through the mount.
 *
 * The index is built from a readdir of every lower instance, once the
 * directory's walks without it have cost about as much as that (or at
 * the first lookup, with nameindex=eager), and belongs to the
 * directory's lfs_entry.
 * Lower layers do not change while mounted, so it never goes stale; the
 * upper layer, which does change, is always looked up directly.
 *
 * Memory is reclaimable: a shrinker frees indexes, oldest first, and the
 * next lookup in such a directory builds one again.  A directory with
 * more than LFS_NI_MAX_NAMES names gets none and is walked in full, as
 * does one with a lower instance that the mounter may not read: the index
 * holds only names the mounter could list.
 *
 * Lifetime: the entry holds one reference; a lookup takes one under RCU
 * for as long as it walks.  The shrinker and lfs_entry_free() detach the
 * index from its entry under lfs_ni_lock and drop the entry's reference.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/hash.h>
#include <linux/stringhash.h>
#include <linux/shrinker.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/rculist.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include "layerfs.h"

/* directories with fewer lower instances are walked in full */
#define LFS_NI_MIN_INSTANCES	4
/* walked instances, per instance, that make a directory worth an index */
#define LFS_NI_BUILD_AFTER	2
/* a directory with more names than this is walked in full */
#define LFS_NI_MAX_NAMES	SZ_1M
/* end of an occurrence list */
#define LFS_NI_END		U32_MAX

/* one name, and the list of the instances that hold it */
struct lfs_ni_name {
	struct lfs_name n;		/* first: the name, hashed */
	u32 first;			/* first occurrence (index into occ[]) */
	u32 last;			/* last occurrence, to append */
};

/* one instance holding a name, or its aufs whiteout, or both */
struct lfs_ni_occ {
	u32 next;			/* next occurrence of the name, or LFS_NI_END */
	u32 pos : 30;			/* index into the entry's real[] */
	u32 holds : 2;			/* LFS_NI_NAME, LFS_NI_WH */
};

struct lfs_nindex {
	refcount_t ref;
	struct rcu_head rcu;
	struct list_head lru;		/* on lfs_ni_lru while attached */
	struct lfs_dir_entry *owner;	/* the entry it is attached to */
	size_t bytes;			/* memory held, when attached */
	struct lfs_nametab names;
	struct lfs_ni_occ *occ;
	u32 nr_occ;
	u32 cap_occ;
};

/* attached indexes, oldest first, how many, and the memory they hold */
static DEFINE_SPINLOCK(lfs_ni_lock);
static LIST_HEAD(lfs_ni_lru);
static unsigned long lfs_ni_attached_nr;
static unsigned long lfs_ni_pages;
/* indexes built since the module was loaded (debugfs) */
static atomic_long_t lfs_ni_builds = ATOMIC_LONG_INIT(0);

static void lfs_ni_free(struct lfs_nindex *ni)
{
	lfs_nametab_destroy(&ni->names);
	kvfree(ni->occ);
	/* a lookup may still be testing the reference count */
	kfree_rcu(ni, rcu);
}

static void lfs_ni_put(struct lfs_nindex *ni)
{
	if (ni && refcount_dec_and_test(&ni->ref))
		lfs_ni_free(ni);
}

static struct lfs_ni_name *lfs_ni_lookup(const struct lfs_nindex *ni,
					 const char *name, unsigned int len,
					 u32 hash)
{
	struct lfs_name *n = lfs_nametab_find(&ni->names, name, len, hash);

	return n ? container_of(n, struct lfs_ni_name, n) : NULL;
}

static int lfs_ni_add_occ(struct lfs_nindex *ni, struct lfs_ni_name *n,
			  unsigned int pos, unsigned int holds)
{
	struct lfs_ni_occ *occ;

	/* the name and its whiteout in one instance: one occurrence */
	if (n->first != LFS_NI_END && ni->occ[n->last].pos == pos) {
		ni->occ[n->last].holds |= holds;
		return 0;
	}
	if (ni->nr_occ == ni->cap_occ) {
		u32 cap = ni->cap_occ ? 2 * ni->cap_occ : 256;

		/* positions are u32, LFS_NI_END is none: no wrap to a small cap */
		if (ni->cap_occ >= LFS_NI_END / 2)
			return -ENOMEM;
		occ = kvmalloc_array(cap, sizeof(*occ), GFP_KERNEL_ACCOUNT);
		if (!occ)
			return -ENOMEM;
		if (ni->nr_occ)
			memcpy(occ, ni->occ, ni->nr_occ * sizeof(*occ));
		kvfree(ni->occ);
		ni->occ = occ;
		ni->cap_occ = cap;
	}
	occ = &ni->occ[ni->nr_occ];
	occ->next = LFS_NI_END;
	occ->pos = pos;
	occ->holds = holds;
	if (n->first == LFS_NI_END)
		n->first = ni->nr_occ;
	else
		ni->occ[n->last].next = ni->nr_occ;
	n->last = ni->nr_occ++;
	return 0;
}

/* the names of one lower instance, read into the index */
struct lfs_ni_reader {
	struct dir_context ctx;
	struct lfs_nindex *ni;
	unsigned int pos;		/* the instance being read */
	unsigned int emitted;		/* names seen by this iterate call */
	bool aufs;			/* ".wh.NAME" is NAME's whiteout */
	int err;
};

static bool lfs_ni_actor(struct dir_context *ctx, const char *name, int len,
			 loff_t offset, u64 ino, unsigned int type)
{
	struct lfs_ni_reader *r = container_of(ctx, struct lfs_ni_reader, ctx);
	struct lfs_nindex *ni = r->ni;
	unsigned int holds = LFS_NI_NAME;
	struct lfs_ni_name *n;
	u32 hash;

	r->emitted++;
	if (len <= 2 && name[0] == '.' && (len == 1 || name[1] == '.'))
		return true;
	if (r->aufs && lfs_is_aufs_name(name, len)) {
		name += sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;
		len -= sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;
		/* markers and aufs's own names hide nothing one looks up */
		if (!len || lfs_is_aufs_name(name, len))
			return true;
		holds = LFS_NI_WH;
	}

	hash = full_name_hash(NULL, name, len);
	n = lfs_ni_lookup(ni, name, len, hash);
	if (!n) {
		if (ni->names.count >= LFS_NI_MAX_NAMES) {
			r->err = -E2BIG;
			return false;
		}
		n = lfs_nametab_add(&ni->names, sizeof(*n), name, len, hash);
		if (!n) {
			r->err = -ENOMEM;
			return false;
		}
		n->first = LFS_NI_END;
	}
	r->err = lfs_ni_add_occ(ni, n, r->pos, holds);
	return !r->err;
}

/*
 * Read one lower instance into the index, if the mounter may read it
 * (lfs_real_may_read()): an index of names the mounter could not list
 * would answer lookups that the walk, which searches each instance as
 * the mounter, refuses.  Caller runs as the mounter.
 */
static int lfs_ni_read_instance(struct lfs_nindex *ni, const struct lfs_real *real,
				unsigned int pos, bool aufs)
{
	struct path path = { .mnt = real->layer->mnt, .dentry = real->dentry };
	struct lfs_ni_reader r = {
		.ctx.actor = lfs_ni_actor,
		.ni = ni,
		.pos = pos,
		.aufs = aufs,
	};
	struct file *file;
	int err;

	err = lfs_real_may_read(&path);
	if (err)
		return err;
	file = dentry_open(&path, O_RDONLY | O_DIRECTORY | O_LARGEFILE,
			   current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	do {
		r.emitted = 0;
		err = iterate_dir(file, &r.ctx);
		if (!err)
			err = r.err;
	} while (!err && r.emitted);
	fput(file);
	return err;
}

/* Read every lower instance of @e.  Caller runs as the mounter. */
static struct lfs_nindex *lfs_ni_build(const struct lfs_sb *sbi,
				       struct lfs_entry *e)
{
	struct lfs_nindex *ni;
	unsigned int i;
	int err;

	ni = kzalloc(sizeof(*ni), GFP_KERNEL_ACCOUNT);
	if (!ni)
		return ERR_PTR(-ENOMEM);
	refcount_set(&ni->ref, 1);
	INIT_LIST_HEAD(&ni->lru);
	err = lfs_nametab_init(&ni->names, 8);
	for (i = 0; !err && i < e->nr; i++)
		err = lfs_ni_read_instance(ni, &e->real[i], i, lfs_aufs(sbi));
	if (err) {
		lfs_ni_put(ni);
		return ERR_PTR(err);
	}
	ni->bytes = sizeof(*ni) + ni->names.bytes +
		    ni->cap_occ * sizeof(*ni->occ);
	atomic_long_inc(&lfs_ni_builds);
	return ni;
}

/*
 * Attach @ni to @e, or take the index another lookup attached first.
 * Return: a referenced index.
 */
static struct lfs_nindex *lfs_ni_attach(struct lfs_dir_entry *de,
					struct lfs_nindex *ni)
{
	struct lfs_nindex *cur;

	spin_lock(&lfs_ni_lock);
	cur = rcu_dereference_protected(de->nindex, lockdep_is_held(&lfs_ni_lock));
	if (cur) {
		refcount_inc(&cur->ref);
	} else {
		ni->owner = de;
		list_add_tail(&ni->lru, &lfs_ni_lru);
		lfs_ni_attached_nr++;
		lfs_ni_pages += DIV_ROUND_UP(ni->bytes, PAGE_SIZE);
		/* the entry's reference, and the caller's */
		refcount_inc(&ni->ref);
		rcu_assign_pointer(de->nindex, ni);
	}
	spin_unlock(&lfs_ni_lock);
	if (cur) {
		lfs_ni_put(ni);
		return cur;
	}
	return ni;
}

/*
 * Detach @ni from its entry, which must walk again as much as at first
 * before it builds another.  Caller holds lfs_ni_lock.
 */
static void lfs_ni_detach_locked(struct lfs_nindex *ni)
{
	lockdep_assert_held(&lfs_ni_lock);
	WRITE_ONCE(ni->owner->walked, 0);
	rcu_assign_pointer(ni->owner->nindex, NULL);
	ni->owner = NULL;
	list_del_init(&ni->lru);
	lfs_ni_attached_nr--;
	lfs_ni_pages -= DIV_ROUND_UP(ni->bytes, PAGE_SIZE);
}

/**
 * lfs_ni_release - drop a directory entry's index, as the entry goes
 * @de: the entry
 */
void lfs_ni_release(struct lfs_dir_entry *de)
{
	struct lfs_nindex *ni;

	if (!rcu_access_pointer(de->nindex))
		return;
	spin_lock(&lfs_ni_lock);
	ni = rcu_dereference_protected(de->nindex, lockdep_is_held(&lfs_ni_lock));
	if (ni)
		lfs_ni_detach_locked(ni);
	spin_unlock(&lfs_ni_lock);
	lfs_ni_put(ni);
}

/*
 * Is a directory worth an index now?  Building one reads every lower
 * instance, which costs about as much as a few full walks of them.  So
 * by default (nameindex=on) a directory gets one once walks without it
 * have visited LFS_NI_BUILD_AFTER times as many instances as it has: a
 * directory looked up a few times, or whose names are found near the
 * top, never pays for a build.  nameindex=eager builds at the first
 * lookup.
 */
static bool lfs_ni_wanted(const struct lfs_sb *sbi,
			  const struct lfs_dir_entry *de)
{
	const struct lfs_entry *e = &de->e;

	if (sbi->nameindex == LFS_NAMEINDEX_OFF ||
	    e->nr < LFS_NI_MIN_INSTANCES || test_bit(LFS_E_NO_INDEX, &e->flags))
		return false;
	return sbi->nameindex == LFS_NAMEINDEX_EAGER ||
	       READ_ONCE(de->walked) >= LFS_NI_BUILD_AFTER * e->nr;
}

/*
 * Does a failed build mean the directory never gets an index?  Too many
 * names; or an instance the mounter may not read, which stays so (the
 * mounter's credentials are fixed, the lower layers do not change): its
 * directory is walked in full, each instance searched as the mounter,
 * which gives overlayfs's answers.
 */
static bool lfs_ni_never(long err)
{
	return err == -E2BIG || err == -EACCES || err == -EPERM;
}

/* the index attached to @e, referenced, or NULL */
static struct lfs_nindex *lfs_ni_attached(struct lfs_dir_entry *de)
{
	struct lfs_nindex *ni;

	rcu_read_lock();
	ni = rcu_dereference(de->nindex);
	if (ni && !refcount_inc_not_zero(&ni->ref))
		ni = NULL;
	rcu_read_unlock();
	return ni;
}

/* the name index of a directory, built if it is wanted; or NULL */
static struct lfs_nindex *lfs_ni_get(const struct lfs_sb *sbi,
				     struct lfs_dir_entry *de)
{
	struct lfs_nindex *ni;

	if (!rcu_access_pointer(de->nindex) && !lfs_ni_wanted(sbi, de))
		return NULL;
	ni = lfs_ni_attached(de);
	if (ni)
		return ni;

	ni = lfs_ni_build(sbi, &de->e);
	if (IS_ERR(ni)) {
		if (lfs_ni_never(PTR_ERR(ni)))
			set_bit(LFS_E_NO_INDEX, &de->e.flags);
		/* else: walk in full this time, try again next time */
		return NULL;
	}
	return lfs_ni_attach(de, ni);
}

/**
 * lfs_ni_start - begin a walk of a directory's lower instances
 * @c: the cursor
 * @sbi: the superblock info
 * @e: the directory's entry
 *
 * The walk uses the directory's name index if it has one or it is time
 * to build one.  Caller runs as the mounter, and ends the walk with
 * lfs_ni_end().
 */
void lfs_ni_start(struct lfs_ni_cursor *c, const struct lfs_sb *sbi,
		  struct lfs_entry *e)
{
	struct lfs_dir_entry *de = lfs_dir_entry(e);

	*c = (struct lfs_ni_cursor){ .e = e };
	/* only directories are walked; an index is theirs */
	if (!WARN_ON_ONCE(!de))
		c->ni = lfs_ni_get(sbi, de);
}

/**
 * lfs_ni_end - end a walk
 * @c: the cursor
 *
 * A walk without an index counts what it visited towards building one.
 * The count is a heuristic: racing walks may lose an update.
 */
void lfs_ni_end(struct lfs_ni_cursor *c)
{
	struct lfs_dir_entry *de = lfs_dir_entry(c->e);

	if (c->ni)
		lfs_ni_put(c->ni);
	else if (de && c->visited &&
		 READ_ONCE(de->walked) < UINT_MAX - c->visited)
		WRITE_ONCE(de->walked, READ_ONCE(de->walked) + c->visited);
	c->ni = NULL;
}

/**
 * lfs_ni_first - the first lower instance to visit for a name
 * @c: the cursor, from lfs_ni_start()
 * @nr: the number of instances
 * @name: the name
 *
 * Return: a position in the entry's real[], or @nr when none holds it.
 */
unsigned int lfs_ni_first(struct lfs_ni_cursor *c, unsigned int nr,
			  const struct qstr *name)
{
	struct lfs_ni_name *n;

	if (!c->ni) {
		c->visited = nr ? 1 : 0;
		return 0;
	}
	n = lfs_ni_lookup(c->ni, name->name, name->len,
			  full_name_hash(NULL, name->name, name->len));
	c->occ = n ? n->first : LFS_NI_END;
	return c->occ == LFS_NI_END ? nr : c->ni->occ[c->occ].pos;
}

/**
 * lfs_ni_next - the next lower instance to visit
 * @c: the cursor
 * @nr: the number of instances
 * @pos: the position just visited
 *
 * Return: a position, or @nr when there are no more.
 */
unsigned int lfs_ni_next(struct lfs_ni_cursor *c, unsigned int nr,
			 unsigned int pos)
{
	if (!c->ni) {
		if (pos + 1 < nr)
			c->visited++;
		return pos + 1;
	}
	c->occ = c->ni->occ[c->occ].next;
	return c->occ == LFS_NI_END ? nr : c->ni->occ[c->occ].pos;
}

/**
 * lfs_ni_seek - the first instance at or after a position to visit
 * @c: the cursor, from lfs_ni_start()
 * @nr: the number of instances
 * @name: the name
 * @from: the position
 *
 * For a walk whose name changed on the way (a redirect).
 * Return: a position in the entry's real[], or @nr when none holds it.
 */
unsigned int lfs_ni_seek(struct lfs_ni_cursor *c, unsigned int nr,
			 const struct qstr *name, unsigned int from)
{
	unsigned int pos;

	if (!c->ni) {
		if (from < nr)
			c->visited++;
		return min(from, nr);
	}
	for (pos = lfs_ni_first(c, nr, name); pos < from;
	     pos = lfs_ni_next(c, nr, pos))
		;
	return pos;
}

/**
 * lfs_ni_holds - what the instance a walk is at holds of the name
 * @c: the cursor, at an instance (from lfs_ni_first() or lfs_ni_next())
 *
 * Return: LFS_NI_NAME and/or LFS_NI_WH; without an index, both (the walk
 * must look).
 */
unsigned int lfs_ni_holds(const struct lfs_ni_cursor *c)
{
	if (!c->ni)
		return LFS_NI_NAME | LFS_NI_WH;
	return c->ni->occ[c->occ].holds;
}

static unsigned long lfs_ni_count(struct shrinker *s, struct shrink_control *sc)
{
	return READ_ONCE(lfs_ni_pages);
}

static unsigned long lfs_ni_scan(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed = 0;
	LIST_HEAD(dispose);
	struct lfs_nindex *ni, *next;

	spin_lock(&lfs_ni_lock);
	while (freed < sc->nr_to_scan && !list_empty(&lfs_ni_lru)) {
		ni = list_first_entry(&lfs_ni_lru, struct lfs_nindex, lru);
		freed += DIV_ROUND_UP(ni->bytes, PAGE_SIZE);
		lfs_ni_detach_locked(ni);
		list_add(&ni->lru, &dispose);
	}
	spin_unlock(&lfs_ni_lock);
	list_for_each_entry_safe(ni, next, &dispose, lru) {
		list_del(&ni->lru);
		lfs_ni_put(ni);
	}
	return freed;
}

static struct shrinker lfs_ni_shrinker = {
	.count_objects	= lfs_ni_count,
	.scan_objects	= lfs_ni_scan,
	.seeks		= DEFAULT_SEEKS,
};

/* debugfs layerfs/nameindex: what the indexes of all mounts hold */
static int lfs_ni_stats_show(struct seq_file *m, void *v)
{
	unsigned long nr, pages;

	spin_lock(&lfs_ni_lock);
	nr = lfs_ni_attached_nr;
	pages = lfs_ni_pages;
	spin_unlock(&lfs_ni_lock);
	seq_printf(m, "attached %lu\npages %lu\nbuilt %ld\n", nr, pages,
		   atomic_long_read(&lfs_ni_builds));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(lfs_ni_stats);

int lfs_ni_init(struct dentry *debugfs)
{
	int err;

	/* an instance's position fits struct lfs_ni_occ */
	BUILD_BUG_ON(LFS_MAX_LAYERS >= (1U << 30));
	err = register_shrinker(&lfs_ni_shrinker, "layerfs-nameindex");
	if (err)
		return err;
	/* statistics only: without debugfs the module works the same */
	debugfs_create_file("nameindex", 0444, debugfs, NULL,
			    &lfs_ni_stats_fops);
	return 0;
}

void lfs_ni_exit(void)
{
	unregister_shrinker(&lfs_ni_shrinker);
}
