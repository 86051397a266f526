/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layerfs: a stack of read-only lower directories under an optional
 * writable upper directory, presented as one tree.
 *
 * Lock order, outermost first (the one place it is written down):
 *   layerfs i_rwsem (taken by the VFS)
 *     lfs_inode.lock (copy-up; never two at once: parents are copied up
 *                     before a child's lock is taken; llseek)
 *       upper filesystem's s_vfs_rename_mutex (lock_rename())
 *         real directory i_rwsem (parent before child, as the VFS does)
 * lfs_rd_lock (readdir.c, kept listings) and lfs_ni_lock (nameindex.c)
 * are leaves: nothing else is taken under them, but the list_lru's own
 * lock under lfs_rd_lock.
 * No layerfs lock is ever taken while a real inode's lock is held, but
 * when the real inode is itself a layerfs one (a mount stacked on
 * another): an outer mount's lfs_inode.lock comes before the inner
 * mount's lfs_inode.lock, which a copy-up's llseek of the inner file
 * takes.  Each stacking depth has its own lockdep classes.
 * Write access to the upper mount (its sb_writers) is taken after the
 * lower directories were looked into: a write operation looks a name up
 * in them, or lists one, first.  A lower layer may be a stacked mount,
 * whose create takes its directory's i_rwsem and then the sb_writers of
 * its upper filesystem, which may be the same as ours (lockdep's
 * sb_writers classes are per filesystem type).  Reading a lower file's
 * data and attributes under our sb_writers (copy-up) takes no directory
 * lock of the mount below, only its copy-up lock in llseek, which that
 * mount itself takes after its own sb_writers.
 */
#ifndef _LAYERFS_H
#define _LAYERFS_H

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/cred.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include "uapi/layerfs.h"

/* whiteout=: the format of whiteouts and opaque directories (uapi/layerfs.h) */
enum lfs_whiteout_format {
	LFS_WH_NATIVE,			/* symlink + xattr; opaque xattr */
	LFS_WH_CHARDEV,			/* character device 0/0; opaque xattr */
	LFS_WH_AUFS,			/* ".wh.NAME", ".wh..wh..opq", in every layer */
};

/* nameindex=: when a deep directory gets its name index (nameindex.c) */
enum lfs_nameindex_mode {
	LFS_NAMEINDEX_ON,		/* once walks have cost about a build */
	LFS_NAMEINDEX_OFF,		/* never: every lookup walks */
	LFS_NAMEINDEX_EAGER,		/* at the first lookup */
};

/*
 * redirect_dir=: whether a merged directory that moves records where its
 * lower parts are, and whether such records are followed in lookups.
 */
enum lfs_redirect_mode {
	LFS_REDIRECT_ON,		/* written and followed (the default) */
	LFS_REDIRECT_FOLLOW,		/* followed; merged directories do not move */
	LFS_REDIRECT_NOFOLLOW,		/* neither: a lookup that meets one fails */
};

/* verity=: the fs-verity digests of metacopy files (uapi: LFS_OPT_VERITY) */
enum lfs_verity_mode {
	LFS_VERITY_OFF,			/* digests ignored (the default) */
	LFS_VERITY_ON,			/* a recorded digest is checked */
	LFS_VERITY_REQUIRE,		/* and every metacopy file has one */
};

/*
 * layerfs's markers.  Each mount keeps them under one prefix,
 * LFS_XATTR_PREFIX or, with userxattr, LFS_XATTR_USER_PREFIX:
 * lfs_xattr_name() gives a marker's full name on a mount.
 */
enum lfs_xattr {
	LFS_XA_WHITEOUT,		/* a whiteout (uapi: LFS_XATTR_SUFFIX_*) */
	LFS_XA_OPAQUE,			/* an opaque directory, "y"; "x": xattr whiteouts */
	LFS_XA_REDIRECT,		/* where a moved directory's lower parts are */
	LFS_XA_ORIGIN,			/* a copy's lower original */
	LFS_XA_LOWER_LINKS,		/* an indexed copy's names still only below */
	LFS_XA_PROTATTR,		/* an upper object's append-only, immutable */
	LFS_XA_INDEX_UPPER,		/* the upper directory index/ serves */
	LFS_XA_PROBE,			/* set and removed at mount */
	LFS_XA_METACOPY,		/* a regular file whose data is below */
	LFS_XA_NR
};

/* One namespace of markers: its prefix and every marker's full name. */
struct lfs_xattr_ns {
	const char *prefix;		/* "trusted.overlay." or "user.overlay." */
	size_t prefix_len;		/* strlen(@prefix) */
	const char *name[LFS_XA_NR];	/* @prefix and each marker's suffix */
};

/*
 * One lower layer: a directory on some filesystem, reached through a
 * private read-only clone of the mount it lives on.  Immutable after
 * fill_super.
 */
struct lfs_layer {
	struct vfsmount *mnt;		/* private clone, shared by layers on one mount */
	struct dentry *root;		/* the layer's directory */
	unsigned int idx;		/* position in the stack, 0 = top */
	unsigned int fsid;		/* index of the layer's filesystem, for st_ino */
	char *name;			/* absolute path given at mount, for messages */
	/*
	 * a data-only layer (lowerdir=...::D, datadir+): never merged,
	 * listed or looked up by name, reached only through a lower
	 * metacopy file's data pointer (lfs_data_lookup()); @fsid unused
	 */
	bool data_only;
};

/* A set of pointers (lfs_ptrset_*() in util.c) */
struct lfs_ptrset {
	const void **slot;		/* a power of two of them; NULL: free */
	unsigned int mask;		/* number of slots - 1 */
};

/* traps the upper layer adds: its root, workdir=, work/, index/ */
#define LFS_NR_UPPER_TRAPS	4

/* Mount configuration collected by the fs_context before fill_super. */
struct lfs_config {
	struct path upper;		/* upperdir=, resolved; mnt NULL if absent */
	struct path work;		/* workdir=, resolved; mnt NULL if absent */
	char *upper_name;		/* upperdir= as an absolute path */
	char *work_name;		/* workdir= as an absolute path */
	struct path *lower;		/* resolved lower paths, top first */
	char **lower_name;		/* their absolute names */
	unsigned int nr_lower;		/* entries used */
	unsigned int cap_lower;		/* entries allocated */
	unsigned int nr_data;		/* the last of them that are data-only */
	bool lower_appended;		/* "lowerdir+" or "datadir+" was used */
	bool lower_listed;		/* "lowerdir" was used */
	enum lfs_nameindex_mode nameindex; /* "nameindex=" */
	bool whiteout_given;		/* "whiteout=" was given */
	enum lfs_whiteout_format whiteout; /* its value */
	unsigned int given;		/* BIT(enum lfs_param) of each given (super.c) */
	enum lfs_redirect_mode redirect; /* "redirect_dir=" */
	bool index;			/* "index=": its value, when given */
	bool metacopy;			/* "metacopy=": its value, when given */
	enum lfs_verity_mode verity;	/* "verity=" */
	bool metacopy_by_verity;	/* metacopy on from verity=, not given */
};

/* Per-superblock state.  Immutable after fill_super. */
struct lfs_sb {
	struct lfs_layer *upper;	/* &upper_layer, or NULL: read-only */
	struct lfs_layer upper_layer;	/* the upper directory, mnt writable */
	struct dentry *workdir;		/* workdir= itself (in use, marked) */
	struct dentry *work;		/* workdir=/work: copy-up scratch */
	struct dentry *index;		/* workdir=/index: hard-link index */
	char *work_name;		/* workdir= as given, for show_options */
	atomic_long_t tmp_seq;		/* names temporary objects in @work */
	/* lower layers, top first, then the data-only layers in mount order */
	struct lfs_layer *layers;
	unsigned int nr_layers;		/* number of regular lower layers */
	unsigned int nr_data;		/* data-only layers, after them in @layers */
	struct vfsmount **mnts;		/* distinct private clones */
	unsigned int nr_mnts;		/* number of distinct clones */
	unsigned int nr_fsid;		/* distinct filesystems under the layers */
	unsigned int xino_shift;	/* st_ino = real ino | fsid << xino_shift */
	/*
	 * The inodes of every layer's root, the upper root and the work
	 * directories: a real lookup that lands on one fails (ELOOP,
	 * lfs_is_trap()).  Filled at mount, then only read.
	 */
	struct lfs_ptrset traps;
	const struct cred *creator_cred; /* the mounter's credentials */
	/*
	 * @creator_cred with CAP_SYS_RESOURCE, for what needs it of both the
	 * caller and the mounter (chattr +j); NULL if the mounter lacked it
	 */
	const struct cred *resource_cred;
	enum lfs_nameindex_mode nameindex; /* name indexes for deep directories */
	enum lfs_whiteout_format whiteout; /* whiteout= */
	enum lfs_redirect_mode redirect; /* redirect_dir= */
	bool userxattr;			/* userxattr: markers are user.overlay.* */
	bool metacopy;			/* metacopy=on: see lfs_metacopy() */
	enum lfs_verity_mode verity;	/* verity=: see verity.c */
	const struct lfs_xattr_ns *xattr; /* the markers' names (lfs_xattr_name()) */
	unsigned int given;		/* lfs_config.given: what show_options shows */
	bool volatile_mount;		/* volatile: no sync reaches the upper layer */
	errseq_t upper_wb_err;		/* volatile: the upper's s_wb_err at mount */
};

/* every layer in sbi->layers: the regular lower ones and the data-only ones */
static inline unsigned int lfs_nr_all_layers(const struct lfs_sb *sbi)
{
	return sbi->nr_layers + sbi->nr_data;
}

/* Are redirects met in a lookup followed? */
static inline bool lfs_redirect_follow(const struct lfs_sb *sbi)
{
	return sbi->redirect != LFS_REDIRECT_NOFOLLOW;
}

/* Does a merged directory that moves get a redirect (else EXDEV)? */
static inline bool lfs_redirect_create(const struct lfs_sb *sbi)
{
	return sbi->redirect == LFS_REDIRECT_ON;
}

/*
 * metacopy=on (off unless given, with userxattr too): do metadata
 * changes of a lower regular file copy up its metadata only, and are
 * metacopy files met in a lookup followed to their data below (read
 * only when the mounter may: lfs_data_may_read())?  With metacopy=off
 * a lookup that meets one fails (EPERM).
 */
static inline bool lfs_metacopy(const struct lfs_sb *sbi)
{
	return sbi->metacopy;
}

/*
 * Are origin markers written at copy-up and read at lookup?  Not with
 * userxattr: whoever owns the layers writes user.* xattrs, and an origin
 * would let a copy take another object's st_ino and join its inode
 * (lfs_make_key()).  Copies then show their own inode number.
 */
static inline bool lfs_use_origin(const struct lfs_sb *sbi)
{
	return !sbi->userxattr;
}

/*
 * Does a copy-up break a lower hard link?  When the mount can copy up
 * and has no hard-link index (userxattr), a lower non-directory with
 * several names is copied up for the one name written through, and the
 * others keep showing the lower object.  Their layerfs inodes must not
 * be shared then, or a name would show (and link to) a copy that is not
 * its own, which its unlink may leave without a link.
 */
static inline bool lfs_copy_up_breaks_links(const struct lfs_sb *sbi,
					    const struct inode *lower)
{
	return sbi->upper && !sbi->index && !S_ISDIR(lower->i_mode) &&
	       lower->i_nlink > 1;
}

/* A marker's full name on this mount. */
static inline const char *lfs_xattr_name(const struct lfs_sb *sbi,
					 enum lfs_xattr xa)
{
	return sbi->xattr->name[xa];
}

/* Do syncs reach the upper layer (the mount is not volatile)? */
static inline bool lfs_should_sync(const struct lfs_sb *sbi)
{
	return !sbi->volatile_mount;
}

/* whiteout=aufs: ".wh." names are whiteouts and markers in every layer */
static inline bool lfs_aufs(const struct lfs_sb *sbi)
{
	return sbi->whiteout == LFS_WH_AUFS;
}

/* Does the name start with LFS_AUFS_WHITEOUT_PREFIX? */
static inline bool lfs_is_aufs_name(const char *name, unsigned int len)
{
	const unsigned int plen = sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;

	return len >= plen && !memcmp(name, LFS_AUFS_WHITEOUT_PREFIX, plen);
}

/* One real object behind a layerfs dentry: a dentry in a layer. */
struct lfs_real {
	struct dentry *dentry;		/* the real dentry (a reference) */
	struct lfs_layer *layer;	/* the layer it lives in */
	unsigned int flags;		/* LFS_REAL_* */
};

/* a directory whose zero-size regular files may be whiteouts */
#define LFS_REAL_XWHITEOUTS	0x1
/*
 * a directory whose marker was not read yet, so LFS_REAL_XWHITEOUTS is
 * not known: a bottom-layer part (lfs_real_flags())
 */
#define LFS_REAL_XUNREAD	0x2

/*
 * What a layerfs dentry stands for: its upper object, if any, and its
 * lower objects, top first.  A non-directory has at most one lower
 * object; a merged directory has one for each lower layer that holds it,
 * down to the first opaque one (or those its redirect names).  @real[] is
 * immutable once the dentry is instantiated, but for a part's
 * LFS_REAL_XUNREAD, replaced once by what its marker says
 * (lfs_real_flags()); @upper is set once, by creation or copy-up, and
 * read with lfs_upper().  Freed with the dentry.
 * A directory's entry is the tail of a struct lfs_dir_entry (@dir), so
 * that the many non-directories do not carry what only directories need.
 */
struct lfs_entry {
	struct dentry *upper;		/* upper object (a reference) or NULL */
	unsigned long flags;		/* LFS_E_* */
	unsigned int nr;		/* number of lower objects */
	bool dir;			/* in a struct lfs_dir_entry */
	struct lfs_real real[];		/* lower objects, top first */
};

/* A directory's entry, and what only a directory keeps with it. */
struct lfs_dir_entry {
	struct lfs_nindex __rcu *nindex; /* its name index, or NULL */
	/* its merged listing, kept for every open: lfs_rd_lock */
	struct lfs_listing *listing;
	/* changes of its names through the mount: lfs_rd_lock */
	u64 listing_gen;
	unsigned int walked;		/* parts walked without a name index */
	struct lfs_entry e;		/* last: e.real[] follows */
};

/* the directory part of @e, or NULL if @e is not a directory's */
static inline struct lfs_dir_entry *lfs_dir_entry(const struct lfs_entry *e)
{
	if (!e || !e->dir)
		return NULL;
	return container_of((struct lfs_entry *)e, struct lfs_dir_entry, e);
}

/*
 * the directory gets no name index: too many names, a lower instance the
 * mounter may not read, or a passing entry
 */
#define LFS_E_NO_INDEX		0

/*
 * Per-inode state.  Directories have one inode per dentry; non-
 * directories are shared by hard links (see lfs_get_inode()).
 */
struct lfs_inode {
	struct dentry *upper;		/* an upper alias, set once: lfs_i_upper() */
	struct inode *lower;		/* top-most lower inode, or NULL (a reference) */
	struct lfs_layer *layer;	/* the layer @lower lives in */
	unsigned long flags;		/* LFS_I_* */
	unsigned int lower_links;	/* LFS_I_INDEXED: see LFS_XATTR_LOWER_LINKS */
	/*
	 * LFS_I_METACOPY: the real object that holds the data (a
	 * reference), and its layer; set once, before the flag
	 */
	struct dentry *data;
	struct lfs_layer *data_layer;
	/* serializes copy-up of this inode, and llseek's lending of f_pos */
	struct mutex lock;
	struct inode vfs_inode;
};

/* the inode is keyed by st_ino (it has a lower origin), not by pointer */
#define LFS_I_BY_INO		0
/*
 * the upper object is linked in the hard-link index; @lower_links is
 * valid (set before @upper is published, changed under @lock)
 */
#define LFS_I_INDEXED		1
/* the upper object is append-only, immutable: see LFS_XA_PROTATTR */
#define LFS_I_PROT_APPEND	2
#define LFS_I_PROT_IMMUTABLE	3
/*
 * a regular file whose data is not in its top-most object (a metacopy
 * file: LFS_XATTR_METACOPY): it is in @data.  Set before the inode or
 * its metadata-only copy is published, cleared once (under @lock) when
 * the data copy-up has filled the upper object.
 */
#define LFS_I_METACOPY		4
/*
 * verity=on|require: the data of this metacopy file was found to be the
 * fs-verity file its top metacopy file's digest names (verity.c).  Set
 * once; @data never changes and an fs-verity file's data cannot.
 */
#define LFS_I_VERIFIED		5

static inline struct lfs_sb *LFS_SB(const struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct lfs_inode *LFS_I(const struct inode *inode)
{
	return container_of(inode, struct lfs_inode, vfs_inode);
}

static inline struct lfs_entry *LFS_E(const struct dentry *dentry)
{
	return dentry->d_fsdata;
}

/* a dentry's upper object, NULL until it has one; pairs with lfs_set_upper() */
static inline struct dentry *lfs_upper(const struct dentry *dentry)
{
	const struct lfs_entry *e = LFS_E(dentry);

	/* pairs with the release in lfs_set_upper() */
	return e ? smp_load_acquire(&e->upper) : NULL;
}

/* an inode's upper object (any alias), NULL until it has one */
static inline struct dentry *lfs_i_upper(const struct inode *inode)
{
	/* pairs with the release in lfs_inode_set_upper() */
	return smp_load_acquire(&LFS_I(inode)->upper);
}

/* Is the inode's data elsewhere than in its top-most object? */
static inline bool lfs_i_metacopy(const struct inode *inode)
{
	/* pairs with the barrier before clear_bit() in lfs_copy_up_data() */
	return test_bit(LFS_I_METACOPY, &LFS_I(inode)->flags);
}

/* the real inode behind a layerfs inode: upper if there is one */
static inline struct inode *lfs_real_inode(const struct inode *inode)
{
	struct dentry *upper = lfs_i_upper(inode);

	return upper ? d_inode(upper) : LFS_I(inode)->lower;
}

/* the layer the real inode lives in */
static inline struct lfs_layer *lfs_real_layer(const struct inode *inode)
{
	return lfs_i_upper(inode) ? LFS_SB(inode->i_sb)->upper : LFS_I(inode)->layer;
}

/*
 * The real object a positive layerfs dentry shows: its own upper, else
 * its inode's upper (a hard link copied up through another name), else
 * its top-most lower object.
 */
/*
 * Is a lookup's entry a lower metacopy file: no upper object, its first
 * part a regular file and its data the following, last one?  (Only a
 * metacopy file gives a non-directory more than one part.)
 */
static inline bool lfs_entry_lower_metacopy(const struct lfs_entry *e)
{
	return !e->upper && e->nr == 2 && d_is_reg(e->real[0].dentry);
}

static inline void lfs_top_path(const struct dentry *dentry, struct path *path)
{
	const struct lfs_entry *e = LFS_E(dentry);
	struct dentry *upper = lfs_upper(dentry);

	if (!upper)
		upper = lfs_i_upper(d_inode(dentry));
	if (upper) {
		path->mnt = LFS_SB(dentry->d_sb)->upper->mnt;
		path->dentry = upper;
	} else {
		path->mnt = e->real[0].layer->mnt;
		path->dentry = e->real[0].dentry;
	}
}

static inline struct dentry *lfs_top_dentry(const struct dentry *dentry)
{
	struct path path;

	lfs_top_path(dentry, &path);
	return path.dentry;
}

/* one instance of a directory: the upper (i == 0 when @upper) or a lower */
static inline unsigned int lfs_nr_instances(const struct lfs_entry *e,
					    const struct dentry *upper)
{
	return e->nr + (upper ? 1 : 0);
}

void lfs_instance(const struct lfs_sb *sbi, const struct lfs_entry *e,
		  struct dentry *upper, unsigned int i, struct lfs_real *out);

/* names.c: a hash table of names */
struct lfs_name {
	struct lfs_name *next;		/* hash chain */
	u32 hash;			/* full_name_hash() */
	u16 len;			/* name length */
	const char *name;		/* not NUL-terminated */
};

struct lfs_name_chunk;

struct lfs_nametab {
	struct lfs_name **hash;		/* buckets */
	unsigned int bits;		/* log2 of the number of buckets */
	unsigned int count;		/* names in the table */
	struct lfs_name_chunk *chunks;	/* where the entries live */
	size_t bytes;			/* memory held */
};

int lfs_nametab_init(struct lfs_nametab *t, unsigned int bits);
void lfs_nametab_destroy(struct lfs_nametab *t);
struct lfs_name *lfs_nametab_find(const struct lfs_nametab *t,
				  const char *name, unsigned int len, u32 hash);
void *lfs_nametab_add(struct lfs_nametab *t, size_t size, const char *name,
		      unsigned int len, u32 hash);

/* nameindex.c */
struct lfs_nindex;

/* where a walk guided by a name index is */
struct lfs_ni_cursor {
	struct lfs_nindex *ni;		/* NULL: visit every instance */
	struct lfs_entry *e;		/* the directory walked */
	unsigned int visited;		/* instances visited without @ni */
	u32 occ;
};

/* what an instance holds of a name (lfs_ni_holds()) */
#define LFS_NI_NAME	0x1		/* the name itself */
#define LFS_NI_WH	0x2		/* its aufs whiteout, ".wh.NAME" */

void lfs_ni_start(struct lfs_ni_cursor *c, const struct lfs_sb *sbi,
		  struct lfs_entry *e);
void lfs_ni_end(struct lfs_ni_cursor *c);
void lfs_ni_release(struct lfs_dir_entry *de);
unsigned int lfs_ni_first(struct lfs_ni_cursor *c, unsigned int nr,
			  const struct qstr *name);
unsigned int lfs_ni_next(struct lfs_ni_cursor *c, unsigned int nr,
			 unsigned int pos);
unsigned int lfs_ni_seek(struct lfs_ni_cursor *c, unsigned int nr,
			 const struct qstr *name, unsigned int from);
unsigned int lfs_ni_holds(const struct lfs_ni_cursor *c);
int lfs_ni_init(struct dentry *debugfs);
void lfs_ni_exit(void);

/* super.c */

/* layer.c */
/*
 * A directory given to the mount: by path (mount(2), FSCONFIG_SET_STRING)
 * or by an open file (FSCONFIG_SET_FD), one of the two.
 */
struct lfs_dir_arg {
	const char *name;
	struct file *file;
	bool data_only;			/* a data-only layer (lfs_layer) */
};

int lfs_config_add_lower(struct fs_context *fc, const struct lfs_dir_arg *dir);
int lfs_config_set_upper(struct fs_context *fc, const char *key,
			 const struct lfs_dir_arg *dir);
int lfs_upper_build(struct fs_context *fc, struct lfs_sb *sbi);
void lfs_upper_free(struct lfs_sb *sbi);
void lfs_config_free(struct lfs_config *cfg);
int lfs_layers_build(struct fs_context *fc, struct lfs_sb *sbi);
void lfs_layers_free(struct lfs_sb *sbi);

/* namei.c */
struct dentry *lfs_lookup(struct inode *dir, struct dentry *dentry,
			  unsigned int flags);
bool lfs_is_whiteout(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		     struct dentry *real, unsigned int parent_flags);
int lfs_dir_marker(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		   struct dentry *real, unsigned int *flags);
unsigned int lfs_real_flags(const struct lfs_sb *sbi, struct lfs_real *r);
unsigned int lfs_parent_flags(const struct lfs_sb *sbi, struct lfs_real *parent,
			      struct dentry *real);
int lfs_aufs_wh_name(const struct qstr *name, struct qstr *wh);
int lfs_lower_positive(struct dentry *dentry);
struct dentry *lfs_lookup_upper_child(struct dentry *parent,
				      const struct qstr *name);
int lfs_read_origin(const struct lfs_sb *sbi, struct dentry *upper,
		    struct lfs_origin *origin);
bool lfs_redirect_valid(const char *s, size_t len);
/* lfs_check_metacopy(): a lower metacopy file whose data pointer leads to a data-only layer */
#define LFS_MC_POINTER	2
int lfs_check_metacopy(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		       struct dentry *real);

/* dir.c */
int lfs_create(struct user_namespace *mnt_userns, struct inode *dir,
	       struct dentry *dentry, umode_t mode, bool excl);
int lfs_mkdir(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry, umode_t mode);
int lfs_mknod(struct user_namespace *mnt_userns, struct inode *dir,
	      struct dentry *dentry, umode_t mode, dev_t rdev);
int lfs_symlink(struct user_namespace *mnt_userns, struct inode *dir,
		struct dentry *dentry, const char *link);
int lfs_link(struct dentry *old, struct inode *dir, struct dentry *new);
int lfs_unlink(struct inode *dir, struct dentry *dentry);
int lfs_rmdir(struct inode *dir, struct dentry *dentry);
int lfs_rename(struct user_namespace *mnt_userns, struct inode *olddir,
	       struct dentry *old, struct inode *newdir, struct dentry *new,
	       unsigned int flags);
int lfs_tmpfile(struct user_namespace *mnt_userns, struct inode *dir,
		struct file *file, umode_t mode);

/* copy_up.c */
#define LFS_CU_NODATA	0x1	/* the data is about to be truncated away */
#define LFS_CU_METADATA	0x2	/* only metadata changes: data may stay below */
int lfs_copy_up(struct dentry *dentry);
int lfs_copy_up_flags(struct dentry *dentry, unsigned int flags);
int lfs_copy_up_hardlink(struct dentry *dentry);
void lfs_set_upper(struct dentry *dentry, struct dentry *upper);
int lfs_want_write(struct dentry *dentry);
void lfs_drop_write(struct dentry *dentry);

/* workdir.c */

/* what to make in the upper layer: a new object of @mode, or a link */
struct lfs_new {
	umode_t mode;			/* type and permissions */
	dev_t rdev;			/* device number */
	const char *symlink;		/* symlink target */
	struct dentry *link_to;		/* upper object to hard-link instead */
	bool opaque;			/* a directory that must hide lower ones */
	/* the layerfs mount's idmapping, for the new object's owner */
	struct user_namespace *mnt_userns;
};

int lfs_work_prepare(struct fs_context *fc, struct lfs_sb *sbi);
struct dentry *lfs_create_real(struct lfs_sb *sbi, struct dentry *parent,
			       struct dentry *d, const struct lfs_new *nw);
struct dentry *lfs_work_create(struct lfs_sb *sbi, const struct lfs_new *nw);
struct dentry *lfs_work_whiteout(struct lfs_sb *sbi);
void lfs_work_remove(struct lfs_sb *sbi, struct dentry *victim);
int lfs_unlink_real(struct user_namespace *userns, struct dentry *dir,
		    struct dentry *child);
void lfs_index_name(u64 ino, char *buf);
#define LFS_INDEX_NAMELEN	17
bool lfs_index_holds(struct lfs_sb *sbi, u64 ino, struct dentry *upper);
struct dentry *lfs_index_lookup(struct lfs_sb *sbi, u64 ino,
				const struct inode *lower);
int lfs_set_xattr(struct lfs_sb *sbi, struct dentry *upper, const char *name,
		  const void *value, size_t size);
int lfs_set_marker(struct lfs_sb *sbi, struct dentry *upper, enum lfs_xattr xa,
		   const void *value, size_t size);
int lfs_remove_marker(struct lfs_sb *sbi, struct dentry *upper,
		      enum lfs_xattr xa);
int lfs_clear_whiteouts(struct lfs_sb *sbi, struct dentry *upperdir);
int lfs_aufs_mark(struct lfs_sb *sbi, struct dentry *dir,
		  const struct qstr *name);
int lfs_aufs_unmark(struct lfs_sb *sbi, struct dentry *dir,
		    const struct qstr *name);
/* inode.c */
extern const struct inode_operations lfs_file_inode_operations;
extern const struct inode_operations lfs_symlink_inode_operations;
extern const struct inode_operations lfs_special_inode_operations;
extern const struct inode_operations lfs_dir_inode_operations;
struct inode *lfs_alloc_inode(struct super_block *sb);
void lfs_free_inode(struct inode *inode);
void lfs_evict_inode(struct inode *inode);
struct inode *lfs_get_inode(struct super_block *sb, struct lfs_entry *e,
			    struct dentry *index);
void lfs_inode_set_upper(struct inode *inode, struct dentry *upper);
void lfs_inode_set_indexed(struct inode *inode, unsigned int lower_links);
void lfs_inode_set_data(struct inode *inode, struct dentry *data,
			struct lfs_layer *layer);
void lfs_inode_clear_metacopy(struct inode *inode);
void lfs_data_path(const struct inode *inode, struct path *path);
int lfs_data_may_read(const struct inode *inode, struct path *data);
unsigned int lfs_nlink(const struct inode *inode, unsigned int real_nlink);
void lfs_update_nlink(struct inode *inode);
int lfs_read_lower_links(const struct lfs_sb *sbi, struct dentry *upper,
			 unsigned int *lower_links);
struct user_namespace *lfs_real_userns(const struct inode *inode,
				       const struct inode *real);
void lfs_copy_attr(struct inode *inode, const struct inode *real);
int lfs_setattr(struct user_namespace *mnt_userns, struct dentry *dentry,
		struct iattr *attr);
struct fileattr;
int lfs_real_fileattr_get(const struct path *real, struct fileattr *fa);
int lfs_real_fileattr_set(const struct path *real, struct fileattr *fa);
int lfs_write_protattr(struct inode *inode, struct dentry *upper,
		       u32 fs_flags);
u64 lfs_ino(const struct lfs_sb *sbi, const struct lfs_layer *layer,
	    u64 real_ino);

/* readdir.c */
extern const struct file_operations lfs_dir_operations;
int lfs_dir_check_empty(struct dentry *dentry);
void lfs_dir_changed(struct dentry *dir);
void lfs_listing_release(struct lfs_dir_entry *de);
int lfs_rd_init(struct dentry *debugfs);
void lfs_rd_exit(void);

/* file.c */
extern const struct file_operations lfs_file_operations;
int lfs_update_time(struct inode *inode, struct timespec64 *now, int flags);
struct fiemap_extent_info;
int lfs_fiemap(struct inode *inode, struct fiemap_extent_info *fieinfo,
	       u64 start, u64 len);

/* ioctl.c */
long lfs_file_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long lfs_dir_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* xattr.c */
extern const struct xattr_handler *lfs_xattr_handlers[];
ssize_t lfs_listxattr(struct dentry *dentry, char *list, size_t size);
struct posix_acl *lfs_get_acl(struct inode *inode, int type, bool rcu);
const struct lfs_xattr_ns *lfs_xattr_ns(bool userxattr);
bool lfs_is_private_xattr(const struct lfs_sb *sbi, const char *name);

/* verity.c */
struct fsverity_operations;

/* the fs-verity operations of a real filesystem, if it has any */
static inline const struct fsverity_operations *
lfs_s_vop(const struct super_block *sb)
{
#ifdef CONFIG_FS_VERITY
	return sb->s_vop;
#else
	return NULL;
#endif
}

int lfs_read_metacopy(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		      struct dentry *real, struct lfs_metacopy *mc);
int lfs_verity_file_digest(struct file *realfile, struct lfs_metacopy *mc);
int lfs_verity_check_file(struct dentry *dentry, struct file *data);
int lfs_verity_check_path(struct dentry *dentry, const struct path *data);
void lfs_verity_exit(void);
int lfs_verity_metacopy(struct dentry *dentry, const struct path *lower,
			const struct lfs_layer *layer, const struct path *data,
			struct lfs_metacopy *mc);

/* util.c */
__printf(2, 3) void lfs_err(struct fs_context *fc, const char *fmt, ...);
__printf(2, 3) void lfs_info(struct fs_context *fc, const char *fmt, ...);
/* lfs_err() for an invalid configuration; evaluates to -EINVAL */
#define lfs_inval(fc, fmt, ...)	({ lfs_err(fc, fmt, ##__VA_ARGS__); -EINVAL; })
const struct cred *lfs_override_creds(struct super_block *sb);
int lfs_override_creds_as_caller(struct user_namespace *mnt_userns,
				 struct dentry *dentry, umode_t mode,
				 const struct cred **old);
void lfs_revert_creds_as_caller(const struct cred *old);
int lfs_real_may_read(const struct path *path);
struct lfs_entry *lfs_entry_alloc(unsigned int nr, bool dir);
void lfs_entry_free(struct lfs_entry *e);
int lfs_get_marker(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		   struct dentry *real, enum lfs_xattr xa, void *buf,
		   size_t size);
int lfs_sync_status(const struct lfs_sb *sbi);
int lfs_ptrset_init(struct lfs_ptrset *set, unsigned int nr);
void lfs_ptrset_add(struct lfs_ptrset *set, const void *p);
bool lfs_ptrset_has(const struct lfs_ptrset *set, const void *p);
void lfs_ptrset_free(struct lfs_ptrset *set);

#endif /* _LAYERFS_H */
