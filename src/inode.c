// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: inodes, getattr, permission, symlinks.
 *
 * A layerfs inode mirrors the top-most real object behind it.  Non-
 * directories are hashed by their real inode, so hard links in a layer
 * stay one inode here; directories are not shared, since what a merged
 * directory holds depends on where it stands.
 *
 * Inode numbers: the real inode number of the lower original (kept in
 * the origin marker once copied up, but with userxattr), or of the upper
 * object for what was made there or copied up with userxattr, with the
 * index of its filesystem in the top bits when the layers span several
 * filesystems (see lfs_ino()).  readdir reports the same numbers.
 *
 * Permission model: the caller is checked against the layerfs inode (the
 * real object's owner, mode and ACLs), and the mounter against the real
 * inode, whose access then happens with the mounter's credentials.
 * Nobody gets through layerfs what the real object would refuse them;
 * writes to a lower object go to its copy in the upper layer.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/namei.h>
#include <linux/posix_acl.h>
#include <linux/xattr.h>
#include <linux/fileattr.h>
#include <linux/security.h>
#include "layerfs.h"

static struct lock_class_key lfs_i_mutex_key[FILESYSTEM_MAX_STACK_DEPTH];
static struct lock_class_key lfs_i_mutex_dir_key[FILESYSTEM_MAX_STACK_DEPTH];
static struct lock_class_key lfs_i_copy_up_key[FILESYSTEM_MAX_STACK_DEPTH];

/*
 * A layerfs inode's i_rwsem and copy-up lock are taken above the real
 * inode's locks, which may be those of a layerfs inode of the mount
 * below (a copy-up through an outer mount reads and seeks the inner
 * mount's file under the outer copy-up lock, while a write through the
 * inner mount takes its own copy-up lock under its i_rwsem): give each
 * stacking depth its own lockdep classes.
 */
static void lfs_lockdep_annotate(struct inode *inode)
{
	int depth = inode->i_sb->s_stack_depth - 1;

	/* lfs_fill_super() refused a deeper stack: unreachable */
	if (WARN_ON_ONCE(depth < 0 || depth >= FILESYSTEM_MAX_STACK_DEPTH))
		depth = 0;
	if (S_ISDIR(inode->i_mode))
		lockdep_set_class(&inode->i_rwsem, &lfs_i_mutex_dir_key[depth]);
	else
		lockdep_set_class(&inode->i_rwsem, &lfs_i_mutex_key[depth]);
	lockdep_set_class(&LFS_I(inode)->lock, &lfs_i_copy_up_key[depth]);
}

/*
 * The inode flags of the real inode that the VFS reads on the layerfs
 * inode: append-only and immutable (checked by open, setattr, xattr,
 * link, unlink and rename), sync.  S_NOATIME is always set here: the
 * real file keeps the times.  An upper object is made append-only or
 * immutable by its LFS_XATTR_PROTATTR marker, not by its own flags.
 */
#define LFS_REAL_I_FLAGS	(S_SYNC | S_APPEND | S_IMMUTABLE)

/* the flags the upper object's marker gives, as i_flags */
static unsigned int lfs_prot_i_flags(const struct inode *inode)
{
	const struct lfs_inode *li = LFS_I(inode);

	return (test_bit(LFS_I_PROT_APPEND, &li->flags) ? S_APPEND : 0) |
	       (test_bit(LFS_I_PROT_IMMUTABLE, &li->flags) ? S_IMMUTABLE : 0);
}

static void lfs_set_prot(struct inode *inode, unsigned int iflags)
{
	struct lfs_inode *li = LFS_I(inode);

	assign_bit(LFS_I_PROT_APPEND, &li->flags, iflags & S_APPEND);
	assign_bit(LFS_I_PROT_IMMUTABLE, &li->flags, iflags & S_IMMUTABLE);
}

/**
 * lfs_real_userns - the idmapping of the mount a real inode is seen through
 * @inode: the layerfs inode
 * @real: its lower inode, or its upper one
 *
 * layerfs shows a layer's objects as the layer's mount shows them: with
 * their owners mapped through that mount's idmapping.
 */
struct user_namespace *lfs_real_userns(const struct inode *inode,
				       const struct inode *real)
{
	const struct lfs_inode *li = LFS_I(inode);
	const struct lfs_sb *sbi = LFS_SB(inode->i_sb);

	if (real == li->lower && li->layer)
		return mnt_user_ns(li->layer->mnt);
	if (sbi->upper)
		return mnt_user_ns(sbi->upper->mnt);
	/* unreachable: an inode with no upper layer has a lower one */
	WARN_ON_ONCE(1);
	return &init_user_ns;
}

/**
 * lfs_copy_attr - copy what stat and permission checks read
 * @inode: the layerfs inode
 * @real: the real inode behind it
 *
 * The owners are the ones the real object's layer mount shows (mapped
 * through an idmapped layer): layerfs checks callers against them, and
 * writes them back to the upper layer through its mount likewise.
 */
void lfs_copy_attr(struct inode *inode, const struct inode *real)
{
	struct user_namespace *userns = lfs_real_userns(inode, real);
	unsigned int flags = real->i_flags & LFS_REAL_I_FLAGS;

	inode->i_uid = vfsuid_into_kuid(i_uid_into_vfsuid(userns, real));
	inode->i_gid = vfsgid_into_kgid(i_gid_into_vfsgid(userns, real));
	/*
	 * The type is the key's (lfs_inode_set()): never changed here.
	 * Unreachable: every real object an inode is given is of its type
	 * (lfs_inode_test(), lfs_index_matches(), and the install of a copy
	 * or a new object checks that the upper name is still it).
	 */
	if (WARN_ON_ONCE(inode_wrong_type(inode, real->i_mode)))
		inode->i_mode = (inode->i_mode & S_IFMT) | (real->i_mode & ~S_IFMT);
	else
		inode->i_mode = real->i_mode;
	inode->i_atime = real->i_atime;
	inode->i_mtime = real->i_mtime;
	inode->i_ctime = real->i_ctime;
	i_size_write(inode, i_size_read(real));
	if (lfs_i_upper(inode))
		flags |= lfs_prot_i_flags(inode);
	inode_set_flags(inode, flags, LFS_REAL_I_FLAGS);
}

/*
 * The flags the protattr marker (LFS_XATTR_PROTATTR in uapi) of an upper
 * object gives, as i_flags; 0 without a marker.  A marker that cannot be
 * read or makes no sense (only the mounter writes it) fails closed:
 * append-only and immutable.  Caller runs as the mounter.
 */
static unsigned int lfs_read_protattr(const struct lfs_sb *sbi,
				      struct dentry *upper)
{
	unsigned int flags = 0;
	char buf[8];
	ssize_t len, i;

	len = lfs_get_marker(sbi, sbi->upper, upper, LFS_XA_PROTATTR, buf,
			     sizeof(buf));
	if (len == -ENODATA || len == -EOPNOTSUPP)
		return 0;
	for (i = 0; i < len; i++) {
		if (buf[i] == 'a')
			flags |= S_APPEND;
		else if (buf[i] == 'i')
			flags |= S_IMMUTABLE;
		else
			break;
	}
	if (len < 0 || i < len) {
		pr_warn_ratelimited("%pd: bad %s marker (%zd): append-only and immutable\n",
				    upper, lfs_xattr_name(sbi, LFS_XA_PROTATTR), len);
		return S_APPEND | S_IMMUTABLE;
	}
	return flags;
}

/**
 * lfs_write_protattr - record an upper object's append-only and immutable
 * @inode: the layerfs inode
 * @upper: its upper object, or the copy being made of it
 * @fs_flags: FS_APPEND_FL and FS_IMMUTABLE_FL, as fileattr gives them
 *
 * Caller runs as the mounter, with write access to the upper layer.
 * Return: 0, or -errno.
 */
int lfs_write_protattr(struct inode *inode, struct dentry *upper,
		       u32 fs_flags)
{
	struct lfs_sb *sbi = LFS_SB(inode->i_sb);
	unsigned int iflags = 0;
	char buf[2];
	int len = 0, err = 0;

	if (fs_flags & FS_APPEND_FL) {
		buf[len++] = 'a';
		iflags |= S_APPEND;
	}
	if (fs_flags & FS_IMMUTABLE_FL) {
		buf[len++] = 'i';
		iflags |= S_IMMUTABLE;
	}
	if (len) {
		err = lfs_set_marker(sbi, upper, LFS_XA_PROTATTR, buf, len);
	} else {
		/* also a marker the inode has not read */
		err = lfs_remove_marker(sbi, upper, LFS_XA_PROTATTR);
		if (err == -ENODATA || err == -EOPNOTSUPP)
			err = 0;
	}
	if (!err)
		lfs_set_prot(inode, iflags);
	return err;
}

static const struct address_space_operations lfs_aops = {
	/* lets O_DIRECT opens through; the real file does the I/O */
	.direct_IO	= noop_direct_IO,
};

/*
 * On a mount that reads no origin marker (userxattr: lfs_use_origin()),
 * a later lookup finds a copy by its upper inode alone (lfs_make_key()):
 * a cached inode of a non-directory moves to that key when it gets its
 * copy, before the copy can have a second name, so that every name of
 * the copy shares the one inode (its flags, mode, locks).  Directories
 * are never hashed.
 */
static void lfs_inode_rehash_copy(struct inode *inode, struct dentry *upper)
{
	if (lfs_use_origin(LFS_SB(inode->i_sb)) || S_ISDIR(inode->i_mode))
		return;
	remove_inode_hash(inode);
	clear_bit(LFS_I_BY_INO, &LFS_I(inode)->flags);
	__insert_inode_hash(inode, (unsigned long)d_inode(upper));
}

/**
 * lfs_inode_set_upper - give an inode its upper object
 * @inode: the layerfs inode
 * @upper: an upper dentry of the object (the caller keeps its reference)
 *
 * Set once: a later call (another name of the same copy) changes nothing.
 */
void lfs_inode_set_upper(struct inode *inode, struct dentry *upper)
{
	struct lfs_inode *li = LFS_I(inode);
	bool first = false;

	spin_lock(&inode->i_lock);
	if (!li->upper) {
		/* publish a complete dentry; pairs with lfs_i_upper() */
		smp_store_release(&li->upper, dget(upper));
		first = true;
	}
	spin_unlock(&inode->i_lock);
	if (first)
		lfs_inode_rehash_copy(inode, upper);
	lfs_copy_attr(inode, d_inode(upper));
	lfs_update_nlink(inode);
}

/**
 * lfs_inode_set_indexed - mark an inode's copy as one in the index
 * @inode: the layerfs inode, before its upper is published
 * @lower_links: its lower names not yet in the upper layer
 *
 * Set once; later calls (another name's lookup) change nothing.
 */
void lfs_inode_set_indexed(struct inode *inode, unsigned int lower_links)
{
	struct lfs_inode *li = LFS_I(inode);

	spin_lock(&inode->i_lock);
	if (!test_bit(LFS_I_INDEXED, &li->flags)) {
		WRITE_ONCE(li->lower_links, lower_links);
		/* the count is there before the flag; pairs with lfs_nlink() */
		smp_mb__before_atomic();
		set_bit(LFS_I_INDEXED, &li->flags);
	}
	spin_unlock(&inode->i_lock);
}

/**
 * lfs_inode_set_data - note where a metacopy file's data is
 * @inode: the layerfs inode of a regular file, before the metacopy
 *	object (its upper copy or its lower entry) is published
 * @data: the real object with the data (the caller keeps its reference)
 * @layer: the layer of @data
 *
 * Set once; later calls change nothing.
 */
void lfs_inode_set_data(struct inode *inode, struct dentry *data,
			struct lfs_layer *layer)
{
	struct lfs_inode *li = LFS_I(inode);

	spin_lock(&inode->i_lock);
	if (!li->data) {
		li->data = dget(data);
		li->data_layer = layer;
		/* @data is there before the flag; pairs with lfs_data_path() */
		smp_mb__before_atomic();
		set_bit(LFS_I_METACOPY, &li->flags);
	}
	spin_unlock(&inode->i_lock);
}

/**
 * lfs_inode_clear_metacopy - the upper object has the data now
 * @inode: the layerfs inode
 *
 * Caller holds the inode's copy-up lock.  Readers that still see the
 * flag read the data below, the same bytes, until the next write, which
 * opens the upper file (lfs_real_file()).
 */
void lfs_inode_clear_metacopy(struct inode *inode)
{
	struct lfs_inode *li = LFS_I(inode);

	lockdep_assert_held(&li->lock);
	/* the data is in the upper object before the flag goes */
	smp_mb__before_atomic();
	clear_bit(LFS_I_METACOPY, &li->flags);
}

/**
 * lfs_data_path - where a metacopy file's data is
 * @inode: the layerfs inode, which the caller saw lfs_i_metacopy()
 * @path: filled in
 */
void lfs_data_path(const struct inode *inode, struct path *path)
{
	const struct lfs_inode *li = LFS_I(inode);

	/* the flag was set after @data; pairs with lfs_inode_set_data() */
	smp_rmb();
	path->mnt = li->data_layer->mnt;
	path->dentry = li->data;
}

/**
 * lfs_data_may_read - may the mounter read a metacopy file's data now?
 * @inode: the layerfs inode, which the caller saw lfs_i_metacopy()
 * @data: filled in with where the data is
 *
 * A metacopy file's data is found by the path alone, below a file whose
 * marker the layer's owner may have written (userxattr: anyone who can
 * write the file).  So every use of the data that does not open it with
 * its own check (the extent map, st_blocks) asks first, with the
 * mounter's credentials and through the data layer's idmapping, what an
 * open would ask: read access (lfs_real_may_read()).  Asked at each use,
 * not at lookup, so that a data file whose mode changed since is judged
 * by its mode of now.  A forged marker then shows nothing the mounter
 * could not read without layerfs (docs/security.md, "Metadata-only
 * copy-up under userxattr").
 * Caller runs as the mounter.
 *
 * Return: 0, or -errno (-EACCES).
 */
int lfs_data_may_read(const struct inode *inode, struct path *data)
{
	lfs_data_path(inode, data);
	return lfs_real_may_read(data);
}

/**
 * lfs_nlink - the link count layerfs shows
 * @inode: the layerfs inode
 * @real_nlink: the link count of the real inode behind it
 *
 * The copy of a lower file with several links has one link in the index,
 * which is not a name, and the lower names not linked up yet are names.
 */
unsigned int lfs_nlink(const struct inode *inode, unsigned int real_nlink)
{
	const struct lfs_inode *li = LFS_I(inode);

	if (!test_bit(LFS_I_INDEXED, &li->flags) || !lfs_i_upper(inode))
		return real_nlink;
	/* the count was set before the flag: lfs_inode_set_indexed() */
	smp_rmb();
	/* the lower count comes from a layer's own number: never wrap */
	return min_t(u64, (u64)(real_nlink ? real_nlink - 1 : 0) +
			  READ_ONCE(li->lower_links), U32_MAX);
}

/* i_nlink from the real inode, after a change of names */
void lfs_update_nlink(struct inode *inode)
{
	set_nlink(inode, lfs_nlink(inode, lfs_real_inode(inode)->i_nlink));
}

/**
 * lfs_read_lower_links - read the lowerlinks marker of an indexed copy
 * @sbi: the superblock info
 * @upper: the copy
 * @lower_links: filled in; 0 when the marker is missing or bad
 *
 * Caller runs as the mounter.
 */
int lfs_read_lower_links(const struct lfs_sb *sbi, struct dentry *upper,
			 unsigned int *lower_links)
{
	__le32 val;
	ssize_t len;

	*lower_links = 0;
	len = lfs_get_marker(sbi, sbi->upper, upper, LFS_XA_LOWER_LINKS, &val,
			     sizeof(val));
	if (len < 0)
		return len;
	if (len != sizeof(val))
		return -EINVAL;
	*lower_links = le32_to_cpu(val);
	return 0;
}

/* how a non-directory is found in the inode cache */
struct lfs_ikey {
	umode_t type;			/* S_IFMT of the object */
	bool by_ino;			/* by st_ino: it has a lower origin */
	u64 ino;			/* st_ino */
	struct inode *lower;		/* its lower inode, when known */
	struct dentry *upper;		/* its upper object, when known */
	bool indexed;			/* the upper object is the index's copy */
	unsigned int lower_links;	/* then: see LFS_XATTR_LOWER_LINKS */
	unsigned int prot;		/* i_flags from LFS_XATTR_PROTATTR */
	u64 real_ino;			/* an upper copy: its origin's own */
	u32 generation;			/* ino and generation */
	bool metacopy;			/* a metacopy file: data in e->real[nr - 1] */
};

static void lfs_inode_init(struct inode *inode, const struct lfs_entry *e,
			   const struct lfs_ikey *key)
{
	struct lfs_inode *li = LFS_I(inode);
	struct inode *real;

	if (e->nr) {
		if (!li->lower) {
			li->lower = d_inode(e->real[0].dentry);
			ihold(li->lower);
		}
		li->layer = e->real[0].layer;
	}
	if (key->metacopy)
		lfs_inode_set_data(inode, e->real[e->nr - 1].dentry,
				   e->real[e->nr - 1].layer);
	if (key->upper && !li->upper)
		li->upper = dget(key->upper);
	if (key->upper)
		lfs_set_prot(inode, key->prot);
	if (key->indexed)
		lfs_inode_set_indexed(inode, key->lower_links);
	real = lfs_real_inode(inode);
	inode->i_ino = key->ino;
	lfs_copy_attr(inode, real);
	lfs_update_nlink(inode);
	inode->i_flags |= S_NOCMTIME;

	switch (real->i_mode & S_IFMT) {
	case S_IFDIR:
		inode->i_op = &lfs_dir_inode_operations;
		inode->i_fop = &lfs_dir_operations;
		break;
	case S_IFREG:
		inode->i_op = &lfs_file_inode_operations;
		inode->i_fop = &lfs_file_operations;
		inode->i_mapping->a_ops = &lfs_aops;
		break;
	case S_IFLNK:
		inode->i_op = &lfs_symlink_inode_operations;
		break;
	default:
		inode->i_op = &lfs_special_inode_operations;
		init_special_inode(inode, real->i_mode, real->i_rdev);
		break;
	}
	lfs_lockdep_annotate(inode);
}

/*
 * Whether a cached inode keyed by st_ino is the object @key describes.
 * Numbers kept as they were may collide, and an upper layer may hold
 * several copies of one lower object that are not one object (a hard
 * link broken by a copy made without the index, or an index entry lost):
 * an inode stands for one upper object and one lower object, and is
 * shared only where both agree.
 */
static bool lfs_inode_same_object(const struct lfs_inode *li,
				  const struct dentry *upper,
				  const struct lfs_ikey *key)
{
	if (key->upper && upper)
		return d_inode(key->upper) == d_inode(upper);
	if (key->lower)
		return key->lower == li->lower;
	/* an upper copy meets its lower object: only the index's copy joins */
	return key->indexed && li->lower &&
	       li->lower->i_ino == key->real_ino &&
	       li->lower->i_generation == key->generation;
}

/* Called under inode_hash_lock, also for an inode lfs_inode_init() fills */
static int lfs_inode_test(struct inode *inode, void *data)
{
	const struct lfs_ikey *key = data;
	struct lfs_inode *li = LFS_I(inode);
	struct dentry *upper = lfs_i_upper(inode);

	/*
	 * Numbers may collide (an origin from another stack, numbers kept
	 * as they were): an object never takes an inode of another type,
	 * whose operations and i_rdev are those of that type.
	 */
	if (inode_wrong_type(inode, key->type))
		return 0;
	if (test_bit(LFS_I_BY_INO, &li->flags) != key->by_ino)
		return 0;
	/* a lower object whose links a copy-up breaks is never shared */
	if (!key->by_ino)
		return upper && key->upper &&
		       d_inode(upper) == d_inode(key->upper);
	return inode->i_ino == key->ino && lfs_inode_same_object(li, upper, key);
}

static int lfs_inode_set(struct inode *inode, void *data)
{
	const struct lfs_ikey *key = data;
	struct lfs_inode *li = LFS_I(inode);

	/*
	 * What lfs_inode_test() reads, before the inode is hashed;
	 * lfs_inode_init() does the rest.
	 */
	inode->i_mode = key->type;
	inode->i_ino = key->ino;
	if (key->by_ino)
		set_bit(LFS_I_BY_INO, &li->flags);
	if (key->lower) {
		li->lower = key->lower;
		ihold(li->lower);
	}
	if (key->upper)
		li->upper = dget(key->upper);
	return 0;
}

/*
 * An upper copy whose origin says it is in the index counts as the
 * index's copy only if the index's entry is that object: an entry lost,
 * or a copy of the same lower object made beside it, leaves a copy of
 * its own.  Caller runs as the mounter.
 */
static bool lfs_origin_indexed(struct lfs_sb *sbi,
			       const struct lfs_origin *origin,
			       struct dentry *upper)
{
	return (origin->flags & LFS_ORIGIN_INDEXED) &&
	       lfs_index_holds(sbi, le64_to_cpu(origin->ino), upper);
}

/*
 * st_ino, and how the inode cache finds the object.  Objects that came
 * from a lower layer keep the number of their lower original, also once
 * copied up (the origin marker remembers it); objects made in the upper
 * layer have their own, and so have copies of non-directories on a mount
 * that reads no origin marker (userxattr: lfs_use_origin()).  A merged
 * directory is found by its path in every layer (no redirect is followed
 * there), so it keeps its lower number on every mount.  An object of a
 * data-only layer is never an identity: many metacopy files may point at
 * it, so an upper one without an origin there has its own number.
 */
static void lfs_make_key(struct super_block *sb, const struct lfs_entry *e,
			 struct dentry *index, struct lfs_ikey *key)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_origin origin;
	const struct cred *old_cred;
	int err = -ENODATA;

	memset(key, 0, sizeof(*key));
	key->upper = e->upper ? e->upper : index;
	key->indexed = !!index;
	if (key->upper) {
		old_cred = lfs_override_creds(sb);
		if (e->upper)
			err = lfs_read_origin(sbi, e->upper, &origin);
		if (!err)
			key->indexed = lfs_origin_indexed(sbi, &origin, e->upper);
		if (key->indexed)
			lfs_read_lower_links(sbi, key->upper, &key->lower_links);
		key->prot = lfs_read_protattr(sbi, key->upper);
		revert_creds(old_cred);
	}
	if (!err) {
		key->by_ino = true;
		key->ino = le64_to_cpu(origin.ino);
		key->real_ino = le64_to_cpu(origin.real_ino);
		key->generation = le32_to_cpu(origin.generation);
	} else if (e->nr && !e->real[0].layer->data_only &&
		   (lfs_use_origin(sbi) || !e->upper || d_is_dir(e->upper))) {
		key->lower = d_inode(e->real[0].dentry);
		key->by_ino = !lfs_copy_up_breaks_links(sbi, key->lower);
		key->ino = lfs_ino(sbi, e->real[0].layer, key->lower->i_ino);
	} else {
		key->ino = lfs_ino(sbi, sbi->upper, d_inode(e->upper)->i_ino);
	}
	if (e->upper && e->nr)
		key->lower = d_inode(e->real[0].dentry);
	/*
	 * A lookup gives a regular file more than its top-most object only
	 * when that is a metacopy file: then the last one has the data.
	 * The index's copy of a lower one has its data (a file with several
	 * links is copied whole: lfs_cu_prepare()).
	 */
	key->metacopy = !index &&
			!d_is_dir(e->upper ? e->upper : e->real[0].dentry) &&
			e->nr > (e->upper ? 0 : 1);
}

/**
 * lfs_get_inode - the layerfs inode for an entry
 * @sb: the layerfs superblock
 * @e: the entry, with an upper or at least one lower object
 * @index: the copy of a lower file with several links, from the index, or
 *	NULL
 *
 * Return: a referenced inode, or an ERR_PTR.
 */
struct inode *lfs_get_inode(struct super_block *sb, struct lfs_entry *e,
			    struct dentry *index)
{
	struct dentry *top = e->upper ? e->upper : e->real[0].dentry;
	struct lfs_ikey key;
	struct inode *inode;

	lfs_make_key(sb, e, index, &key);
	key.type = d_inode(top)->i_mode & S_IFMT;
	if (d_is_dir(top)) {
		inode = new_inode(sb);
		if (!inode)
			return ERR_PTR(-ENOMEM);
		inode->i_mode = key.type;
		lfs_inode_init(inode, e, &key);
		return inode;
	}

	inode = iget5_locked(sb, key.by_ino ? key.ino : (unsigned long)d_inode(top),
			     lfs_inode_test, lfs_inode_set, &key);
	if (!inode)
		return ERR_PTR(-ENOMEM);
	if (inode->i_state & I_NEW) {
		lfs_inode_init(inode, e, &key);
		unlock_new_inode(inode);
	} else if (key.upper && !lfs_i_upper(inode)) {
		/* another name was copied up, in an earlier mount */
		if (key.indexed)
			lfs_inode_set_indexed(inode, key.lower_links);
		lfs_set_prot(inode, key.prot);
		lfs_inode_set_upper(inode, key.upper);
	}
	return inode;
}

void lfs_evict_inode(struct inode *inode)
{
	struct lfs_inode *li = LFS_I(inode);

	truncate_inode_pages_final(&inode->i_data);
	clear_inode(inode);
	iput(li->lower);
	dput(li->upper);
	dput(li->data);
	li->lower = NULL;
	li->upper = NULL;
	li->data = NULL;
}

/*
 * st_ino: the inode's number.  On a mount that keeps no origin markers
 * (userxattr), a non-directory with an upper copy shows the copy's number
 * from the copy-up on, as readdir and a later lookup do.
 */
static u64 lfs_stat_ino(struct inode *inode)
{
	struct lfs_sb *sbi = LFS_SB(inode->i_sb);
	struct dentry *upper = lfs_i_upper(inode);

	if (lfs_use_origin(sbi) || !upper || S_ISDIR(inode->i_mode))
		return inode->i_ino;
	return lfs_ino(sbi, sbi->upper, d_inode(upper)->i_ino);
}

/*
 * A metacopy file takes its metadata from the object that has them and
 * its block count from the data, as overlay shows it: what du(1) should
 * count is the data.  As the mounter, and only from data the mounter may
 * read (lfs_data_may_read()): else (or when that cannot be told)
 * st_blocks stays the metacopy file's own, and stat succeeds as on any
 * file the caller cannot read.
 */
static int lfs_getattr_data(struct inode *inode, struct kstat *stat,
			    u32 request_mask, unsigned int flags)
{
	const struct cred *old_cred;
	struct kstat dstat;
	struct path data;
	int err;

	if (!(request_mask & STATX_BLOCKS))
		return 0;
	old_cred = lfs_override_creds(inode->i_sb);
	err = lfs_data_may_read(inode, &data);
	if (err) {
		revert_creds(old_cred);
		return 0;
	}
	err = vfs_getattr(&data, &dstat, STATX_BLOCKS, flags);
	revert_creds(old_cred);
	if (err)
		return err;
	stat->blocks = dstat.blocks;
	return 0;
}

static int lfs_getattr(struct user_namespace *mnt_userns,
		       const struct path *path, struct kstat *stat,
		       u32 request_mask, unsigned int flags)
{
	struct dentry *dentry = path->dentry;
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	struct path realpath;
	int err;

	lfs_top_path(dentry, &realpath);
	old_cred = lfs_override_creds(inode->i_sb);
	err = vfs_getattr(&realpath, stat, request_mask, flags);
	revert_creds(old_cred);
	if (err)
		return err;

	/* the owners in the filesystem's view, as this mount shows them */
	stat->uid = vfsuid_into_kuid(make_vfsuid(mnt_userns, i_user_ns(inode),
						 stat->uid));
	stat->gid = vfsgid_into_kgid(make_vfsgid(mnt_userns, i_user_ns(inode),
						 stat->gid));
	if (lfs_i_metacopy(inode)) {
		err = lfs_getattr_data(inode, stat, request_mask, flags);
		if (err)
			return err;
	}
	stat->dev = inode->i_sb->s_dev;
	stat->ino = lfs_stat_ino(inode);
	if (S_ISDIR(inode->i_mode)) {
		/* a merged directory's link count means nothing: "unknown" */
		if (LFS_E(dentry)->nr > (lfs_upper(dentry) ? 0 : 1))
			stat->nlink = 1;
	} else {
		stat->nlink = lfs_nlink(inode, stat->nlink);
	}
	return 0;
}

/*
 * What the mounter is asked for on a lower object, for a caller who asked
 * @mask.  A lower object is never written: a write goes to its upper
 * copy, which the mounter makes by reading the object, so read access
 * counts in place of write access (as overlayfs asks), and an object the
 * mounter cannot read fails here, before any copy-up.  A special file
 * is not copied up for a write: the device or fifo itself is written,
 * so write access counts as asked.
 */
static int lfs_lower_mask(const struct inode *real, int mask)
{
	if (special_file(real->i_mode) || !(mask & MAY_WRITE))
		return mask;
	return (mask & ~(MAY_WRITE | MAY_APPEND)) | MAY_READ;
}

static int lfs_permission(struct user_namespace *mnt_userns,
			  struct inode *inode, int mask)
{
	struct dentry *upper = lfs_i_upper(inode);
	struct inode *real = upper ? d_inode(upper) : LFS_I(inode)->lower;
	struct user_namespace *real_userns;
	const struct cred *old_cred;
	int err;

	if (!real)
		return -ECHILD;

	/* the caller, against what layerfs shows through its mount */
	err = generic_permission(mnt_userns, inode, mask);
	if (err)
		return err;

	/* the mounter, against the real object */
	if (upper) {
		real_userns = mnt_user_ns(LFS_SB(inode->i_sb)->upper->mnt);
	} else {
		real_userns = mnt_user_ns(LFS_I(inode)->layer->mnt);
		mask = lfs_lower_mask(real, mask);
	}
	old_cred = lfs_override_creds(inode->i_sb);
	err = inode_permission(real_userns, real, mask);
	revert_creds(old_cred);
	return err;
}

/*
 * A new owner arrives in the layerfs mount's view (ia_vfsuid, ia_vfsgid);
 * the upper object takes it in layerfs's view, which is what the upper
 * mount shows (layerfs's inodes hold the owners layer mounts show): it
 * goes to notify_change() through that mount, which maps it back to the
 * upper filesystem's view (EOVERFLOW where the upper mount's idmapping
 * has no place for it).  notify_change() on layerfs checked that it maps
 * into layerfs's view.
 */
static void lfs_attr_owner_to_fs(struct user_namespace *mnt_userns,
				 struct inode *inode, struct iattr *attr)
{
	struct user_namespace *fs_userns = i_user_ns(inode);

	if (attr->ia_valid & ATTR_UID)
		attr->ia_vfsuid = VFSUIDT_INIT(from_vfsuid(mnt_userns, fs_userns,
							   attr->ia_vfsuid));
	if (attr->ia_valid & ATTR_GID)
		attr->ia_vfsgid = VFSGIDT_INIT(from_vfsgid(mnt_userns, fs_userns,
							   attr->ia_vfsgid));
}

/*
 * Does a new owner, in layerfs's view, map through the upper mount into
 * the upper filesystem?  notify_change() on the upper copy would refuse
 * it (EOVERFLOW), but only once the object is copied up: asked first, a
 * refused chown leaves the upper layer as it was.  Caller holds write
 * access to the upper layer (so there is one).
 */
static bool lfs_upper_maps_owner(struct super_block *sb,
				 const struct iattr *attr)
{
	struct vfsmount *mnt = LFS_SB(sb)->upper->mnt;
	struct user_namespace *mnt_userns = mnt_user_ns(mnt);
	struct user_namespace *fs_userns = mnt->mnt_sb->s_user_ns;

	if ((attr->ia_valid & ATTR_UID) &&
	    !vfsuid_has_fsmapping(mnt_userns, fs_userns, attr->ia_vfsuid))
		return false;
	if ((attr->ia_valid & ATTR_GID) &&
	    !vfsgid_has_fsmapping(mnt_userns, fs_userns, attr->ia_vfsgid))
		return false;
	return true;
}

/*
 * Attributes change in the upper layer, after a copy-up.  The caller is
 * checked by setattr_prepare() on the layerfs inode, with the caller's
 * credentials, through the layerfs mount's idmapping; the upper copy
 * then changes as the mounter, as prepared (setattr_prepare() drops
 * S_ISGID from a mode that the caller may not give, which the mounter's
 * rights would keep), with a new owner mapped into the filesystem's view.
 */
int lfs_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	unsigned int cu_flags = 0;
	struct iattr real_attr;
	struct dentry *upper;
	int err;

	err = setattr_prepare(mnt_userns, dentry, attr);
	if (err)
		return err;
	real_attr = *attr;
	lfs_attr_owner_to_fs(mnt_userns, inode, &real_attr);
	if ((attr->ia_valid & ATTR_SIZE) && !attr->ia_size)
		cu_flags |= LFS_CU_NODATA;
	if (!(attr->ia_valid & ATTR_SIZE))
		cu_flags |= LFS_CU_METADATA;
	/*
	 * A truncation to 0 copies no data up, so the copy is empty already
	 * and its filesystem sees no size change, for which truncate(2) asks
	 * it to set the times: ask for them here.
	 */
	if ((cu_flags & LFS_CU_NODATA) && !lfs_i_upper(inode) &&
	    i_size_read(inode))
		real_attr.ia_valid |= ATTR_MTIME | ATTR_CTIME;
	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = -EOVERFLOW;
	if (!lfs_upper_maps_owner(inode->i_sb, &real_attr))
		goto out_drop;
	err = lfs_copy_up_flags(dentry, cu_flags);
	if (err)
		goto out_drop;

	/* the real object works out set-id clearing from its own mode */
	if (real_attr.ia_valid & (ATTR_KILL_SUID | ATTR_KILL_SGID))
		real_attr.ia_valid &= ~ATTR_MODE;
	/*
	 * The real object has its own open file, not the layerfs one, and
	 * was not opened with O_TRUNC: a filesystem must not take the size
	 * change for done by the open (fuse would).
	 */
	real_attr.ia_valid &= ~(ATTR_FILE | ATTR_OPEN);
	real_attr.ia_file = NULL;

	upper = lfs_upper(dentry);
	old_cred = lfs_override_creds(inode->i_sb);
	inode_lock(d_inode(upper));
	err = notify_change(mnt_user_ns(LFS_SB(inode->i_sb)->upper->mnt),
			    upper, &real_attr, NULL);
	inode_unlock(d_inode(upper));
	revert_creds(old_cred);

	lfs_copy_attr(inode, d_inode(upper));
	if (attr->ia_valid & ATTR_MODE)
		forget_all_cached_acls(inode);
out_drop:
	lfs_drop_write(dentry);
	return err;
}

/*
 * The security module's say on the mounter's fileattr ioctl of a real
 * object: its hook wants a file, so the object is opened for it.
 * Caller runs as the mounter.
 */
static int lfs_real_fileattr_allowed(const struct path *real,
				     const struct fileattr *fa, bool set)
{
	unsigned int cmd;
	struct file *file;
	int err;

	if (set)
		cmd = fa->fsx_valid ? FS_IOC_FSSETXATTR : FS_IOC_SETFLAGS;
	else
		cmd = fa->fsx_valid ? FS_IOC_FSGETXATTR : FS_IOC_GETFLAGS;
	file = dentry_open(real, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	err = security_file_ioctl(file, cmd, 0);
	fput(file);
	return err;
}

/**
 * lfs_real_fileattr_get - read the fileattr flags of a real object
 * @real: the real object
 * @fa: filled in; @fa->fsx_valid or @fa->flags_valid says which kind
 *
 * Caller runs as the mounter.
 * Return: 0, -ENOTTY when the filesystem has no such flags, or -errno.
 */
int lfs_real_fileattr_get(const struct path *real, struct fileattr *fa)
{
	int err;

	/* not worth an open */
	if (!d_inode(real->dentry)->i_op->fileattr_get)
		return -ENOTTY;
	err = lfs_real_fileattr_allowed(real, fa, false);
	if (err)
		return err;
	err = vfs_fileattr_get(real->dentry, fa);
	return err == -ENOIOCTLCMD ? -ENOTTY : err;
}

/**
 * lfs_real_fileattr_set - change the fileattr flags of a real object
 * @real: the real object, in the upper layer
 * @fa: the new flags
 *
 * Caller runs as the mounter and holds write access to the upper layer.
 * Return: 0, -ENOTTY when the filesystem has no such flags, or -errno.
 */
int lfs_real_fileattr_set(const struct path *real, struct fileattr *fa)
{
	int err;

	if (!d_inode(real->dentry)->i_op->fileattr_set)
		return -ENOTTY;
	err = lfs_real_fileattr_allowed(real, fa, true);
	if (err)
		return err;
	return vfs_fileattr_set(mnt_user_ns(real->mnt), real->dentry, fa);
}

/*
 * lsattr: the top-most real object's flags, read as the mounter, and an
 * upper object's append-only and immutable from its marker.
 */
static int lfs_fileattr_get(struct dentry *dentry, struct fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	struct path real;
	unsigned int prot;
	int err;

	lfs_top_path(dentry, &real);
	old_cred = lfs_override_creds(dentry->d_sb);
	err = lfs_real_fileattr_get(&real, fa);
	revert_creds(old_cred);
	if (err || !lfs_i_upper(inode))
		return err;
	prot = lfs_prot_i_flags(inode);
	if (prot & S_APPEND) {
		fa->flags |= FS_APPEND_FL;
		fa->fsx_xflags |= FS_XFLAG_APPEND;
	}
	if (prot & S_IMMUTABLE) {
		fa->flags |= FS_IMMUTABLE_FL;
		fa->fsx_xflags |= FS_XFLAG_IMMUTABLE;
	}
	return 0;
}

/*
 * The VFS checked the caller against the flags lsattr showed: a lower
 * object's, when there was no upper copy yet.  The copy made since may
 * have others (a project and PROJINHERIT from its upper parent), and the
 * real filesystem checks the mounter, not the caller: repeat, for the
 * caller, what needs more than ownership, against the upper copy's flags
 * (read as the mounter).  Caller runs with the caller's credentials.
 * *@resource tells whether the change needs CAP_SYS_RESOURCE (the caller
 * has it then).
 */
static int lfs_fileattr_check_upper(struct super_block *sb,
				    const struct path *upper,
				    const struct fileattr *fa, bool *resource)
{
	struct fileattr old = {
		.flags_valid = fa->flags_valid,
		.fsx_valid = fa->fsx_valid,
	};
	const struct cred *old_cred;
	int err;

	*resource = false;
	old_cred = lfs_override_creds(sb);
	err = lfs_real_fileattr_get(upper, &old);
	revert_creds(old_cred);
	if (err)
		return err == -ENOTTY ? 0 : err;
	/* as fileattr_set_prepare(): a project changes in the first namespace only */
	if (fa->fsx_valid && current_user_ns() != &init_user_ns &&
	    (fa->fsx_projid != old.fsx_projid ||
	     ((fa->fsx_xflags ^ old.fsx_xflags) & FS_XFLAG_PROJINHERIT)))
		return -EINVAL;
	/* as ext4: data journalling is a resource */
	*resource = (fa->flags ^ old.flags) & FS_JOURNAL_DATA_FL;
	if (*resource && !capable(CAP_SYS_RESOURCE))
		return -EPERM;
	return 0;
}

/*
 * The credentials a real change runs with: the mounter's, and where it
 * needs CAP_SYS_RESOURCE (the caller checked for it), the mounter's with
 * it if the mounter had it, else without (the real filesystem refuses).
 */
static const struct cred *lfs_override_resource_creds(struct super_block *sb,
						      bool resource)
{
	const struct cred *cred = LFS_SB(sb)->resource_cred;

	if (resource && cred)
		return override_creds(cred);
	return lfs_override_creds(sb);
}

/*
 * chattr: the flags change on the upper copy, as the mounter; append-only
 * and immutable go to its marker instead (and off the upper inode), the
 * marker first, so that a failure leaves the object no less protected.
 * The VFS has checked the caller on the layerfs inode, with the caller's
 * credentials (vfs_fileattr_set(): the owner or CAP_FOWNER, and
 * CAP_LINUX_IMMUTABLE to change append-only or immutable) and holds its
 * i_rwsem; lfs_fileattr_check_upper() checks the rest.
 */
static int lfs_fileattr_set(struct user_namespace *mnt_userns,
			    struct dentry *dentry, struct fileattr *fa)
{
	struct inode *inode = d_inode(dentry);
	u32 prot = fa->flags & (FS_APPEND_FL | FS_IMMUTABLE_FL);
	const struct cred *old_cred;
	struct path upper;
	bool resource;
	int err;

	err = lfs_want_write(dentry);
	if (err)
		return err;
	err = lfs_copy_up_flags(dentry, LFS_CU_METADATA);
	if (err)
		goto out_drop;

	upper.mnt = LFS_SB(dentry->d_sb)->upper->mnt;
	upper.dentry = lfs_upper(dentry);
	err = lfs_fileattr_check_upper(dentry->d_sb, &upper, fa, &resource);
	if (err)
		goto out_drop;
	fa->flags &= ~(FS_APPEND_FL | FS_IMMUTABLE_FL);
	fa->fsx_xflags &= ~(FS_XFLAG_APPEND | FS_XFLAG_IMMUTABLE);
	old_cred = lfs_override_resource_creds(dentry->d_sb, resource);
	err = lfs_write_protattr(inode, upper.dentry, prot);
	if (!err)
		err = lfs_real_fileattr_set(&upper, fa);
	revert_creds(old_cred);
	/* the flags and ctime */
	lfs_copy_attr(inode, d_inode(upper.dentry));
out_drop:
	lfs_drop_write(dentry);
	return err;
}

static const char *lfs_get_link(struct dentry *dentry, struct inode *inode,
				struct delayed_call *done)
{
	const struct cred *old_cred;
	const char *link;

	if (!dentry)
		return ERR_PTR(-ECHILD);

	old_cred = lfs_override_creds(inode->i_sb);
	link = vfs_get_link(lfs_top_dentry(dentry), done);
	revert_creds(old_cred);
	return link;
}

const struct inode_operations lfs_dir_inode_operations = {
	.lookup		= lfs_lookup,
	.create		= lfs_create,
	.mkdir		= lfs_mkdir,
	.mknod		= lfs_mknod,
	.symlink	= lfs_symlink,
	.link		= lfs_link,
	.unlink		= lfs_unlink,
	.rmdir		= lfs_rmdir,
	.rename		= lfs_rename,
	.tmpfile	= lfs_tmpfile,
	.setattr	= lfs_setattr,
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
	.update_time	= lfs_update_time,
	.fileattr_get	= lfs_fileattr_get,
	.fileattr_set	= lfs_fileattr_set,
};

const struct inode_operations lfs_file_inode_operations = {
	.setattr	= lfs_setattr,
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
	.update_time	= lfs_update_time,
	.fiemap		= lfs_fiemap,
	.fileattr_get	= lfs_fileattr_get,
	.fileattr_set	= lfs_fileattr_set,
};

const struct inode_operations lfs_symlink_inode_operations = {
	.get_link	= lfs_get_link,
	.setattr	= lfs_setattr,
	.getattr	= lfs_getattr,
	.listxattr	= lfs_listxattr,
	.update_time	= lfs_update_time,
};

const struct inode_operations lfs_special_inode_operations = {
	.setattr	= lfs_setattr,
	.getattr	= lfs_getattr,
	.permission	= lfs_permission,
	.listxattr	= lfs_listxattr,
	.get_acl	= lfs_get_acl,
	.update_time	= lfs_update_time,
};
