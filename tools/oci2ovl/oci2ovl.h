/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oci2ovl: OCI image layers to layerfs/overlay layer directories.
 *
 * Conventions: helpers return 0 (or a count) on success and -errno on
 * failure. -EBADMSG is reserved for "the input breaks a rule" (a
 * verification failure or a hostile entry); the message naming the layer,
 * the entry and the rule has then already been printed. Only main() exits.
 */
#ifndef OCI2OVL_H
#define OCI2OVL_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <jansson.h>

#define LFS_PROG "oci2ovl"
#define LFS_VERSION "0.1"

/* exit statuses, see docs/oci2ovl.1 */
#define LFS_EXIT_OK 0
#define LFS_EXIT_FAIL 1
#define LFS_EXIT_USAGE 2
#define LFS_EXIT_REFUSED 3
#define LFS_EXIT_CONFLICT 4

/* the errno that means "refused: the input breaks a rule" */
#define LFS_EREFUSED EBADMSG
/* the errno that means "in use, or the name is taken" (message printed) */
#define LFS_ECONFLICT EBUSY

#define LFS_DEFAULT_STORE "/var/lib/oci2ovl"
#define LFS_DEFAULT_PLATFORM "linux/amd64"
/* JSON documents (index, manifest, config) larger than this are refused */
#define LFS_MAX_JSON (4u << 20)
/* nested image indexes deeper than this are refused */
#define LFS_MAX_INDEX_DEPTH 4

#define LFS_SHA256_HEX 64
/* "sha256:" + 64 hex digits */
#define LFS_DIGEST_LEN (7 + LFS_SHA256_HEX)

/*
 * limits on what an import unpacks, set by --max-*: each bounds every
 * layer, and the sum over the layers of the image that one import unpacks
 */
struct lfs_limits {
	uint64_t max_entries; /* tar entries; a layer's paths with their parents */
	uint64_t max_bytes; /* decompressed tar stream bytes */
	uint64_t max_path; /* bytes of a normalised entry path (one entry) */
	uint64_t max_names; /* bytes of entry names and link targets */
	uint64_t max_xattrs; /* bytes of xattr names and values */
};

/* what unpacking used so far, counted against struct lfs_limits */
struct lfs_usage {
	uint64_t entries; /* tar entries */
	uint64_t bytes; /* decompressed tar stream bytes */
	uint64_t names; /* bytes of entry names and link targets */
	uint64_t xattrs; /* bytes of xattr names and values */
};

/* how whiteouts and opaque directories are written */
enum lfs_whiteout_fmt {
	LFS_WH_NATIVE, /* symlink to LFS_WHITEOUT_TARGET + xattr */
	LFS_WH_CHARDEV, /* 0/0 character device (kernel overlay) */
};

/* what a tar entry name means under the OCI whiteout rules */
enum lfs_wh_kind {
	LFS_WH_KIND_NONE, /* an ordinary entry */
	LFS_WH_KIND_FILE, /* .wh.NAME: hide NAME of lower layers */
	LFS_WH_KIND_OPAQUE, /* .wh..wh..opq: hide the lower directory */
};

/* compression of a layer blob, from its media type */
enum lfs_compression {
	LFS_COMP_NONE,
	LFS_COMP_GZIP,
	LFS_COMP_ZSTD,
};

/* one layer of an image, as the manifest and config describe it */
struct lfs_layer_desc {
	char digest[LFS_DIGEST_LEN + 1]; /* blob digest */
	char diff_id[LFS_DIGEST_LEN + 1]; /* digest of the tar */
	char *media_type; /* owned */
	uint64_t size; /* blob size */
	enum lfs_compression comp;
	char key[LFS_DIGEST_LEN + 1]; /* its directory in the store, set by
				       * import: diff_id or chain key */
};

/* an image resolved from a layout: manifest, config and layers */
struct lfs_image {
	char manifest_digest[LFS_DIGEST_LEN + 1];
	char config_digest[LFS_DIGEST_LEN + 1];
	json_t *config; /* parsed config (owned reference) */
	size_t nlayers;
	struct lfs_layer_desc *layers; /* bottom layer first, as in OCI */
};

/* util.c */
void lfs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void lfs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int lfs_refuse(const char *layer, const char *entry, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
char *lfs_escape_name(const char *s, char *buf, size_t len);
const char *lfs_esc(const char *s);
int lfs_parse_size(const char *s, uint64_t *out);
bool lfs_valid_image_name(const char *name);
int lfs_rm_tree_at(int dirfd, const char *name);
int lfs_read_file_at(int dirfd, const char *path, size_t max, char **buf,
		     size_t *len);
int lfs_write_full(int fd, const char *data, size_t len);
int lfs_write_file_atomic(int dirfd, const char *name, const char *data,
			  size_t len);
int lfs_openat2(int dirfd, const char *path, int flags, mode_t mode);
int lfs_setxattr_at(int dirfd, const char *name, const char *key,
		    const void *val, size_t len);
char *lfs_shell_quote(const char *s);
DIR *lfs_fdopendir(int fd);
DIR *lfs_opendir_dup(int dirfd);

/* digest.c */
struct lfs_sha256;
struct lfs_sha256 *lfs_sha256_new(void);
int lfs_sha256_update(struct lfs_sha256 *h, const void *buf, size_t len);
void lfs_sha256_final(struct lfs_sha256 *h, char out[LFS_DIGEST_LEN + 1]);
int lfs_sha256_reset(struct lfs_sha256 *h);
void lfs_sha256_final_raw(struct lfs_sha256 *h, unsigned char md[32]);
void lfs_hex(const unsigned char *b, size_t n, char *out);
void lfs_sha256_free(struct lfs_sha256 *h);
bool lfs_digest_valid(const char *digest);
int lfs_digest_buf(const void *buf, size_t len, char out[LFS_DIGEST_LEN + 1]);
int lfs_verify_blob_fd(int fd, const char *what, const char *digest,
		       uint64_t size);

/* path.c */
int lfs_path_normalize(const char *in, const struct lfs_limits *lim, char **out,
		       const char **rule);

/* whiteout.c */
int lfs_whiteout_classify(const char *path, char **target, const char **rule);
bool lfs_xattr_is_overlay(const char *name);
int lfs_make_whiteout(int dirfd, const char *name, enum lfs_whiteout_fmt fmt);
int lfs_make_opaque(int dirfd, const char *name, enum lfs_whiteout_fmt fmt);
bool lfs_is_whiteout_at(int dirfd, const char *name, const struct stat *st,
			enum lfs_whiteout_fmt fmt);
bool lfs_is_opaque_at(int dirfd, const char *name);
int lfs_whiteout_fmt_parse(const char *s, enum lfs_whiteout_fmt *fmt);
const char *lfs_whiteout_fmt_name(enum lfs_whiteout_fmt fmt);

/* pathset.c: the paths one layer has met so far (a tree) */
enum lfs_node_kind {
	LFS_NODE_NONE, /* nothing of this layer (a path only looked up) */
	LFS_NODE_IMPLICIT_DIR, /* a parent no entry named (yet) */
	LFS_NODE_DIR, /* a directory entry */
	LFS_NODE_FILE, /* regular file, device, fifo */
	LFS_NODE_SYMLINK,
	LFS_NODE_WHITEOUT, /* a whiteout this layer wrote */
};

/* what the layers below this one have at a path, in their merged view */
enum lfs_below {
	LFS_BELOW_UNKNOWN, /* not looked up yet */
	LFS_BELOW_ABSENT, /* nothing: missing, whited out, or hidden */
	LFS_BELOW_DIR, /* a directory, in the layers of ->stack */
	LFS_BELOW_SYMLINK, /* a symlink of layer ->below_layer to ->link */
	LFS_BELOW_OTHER, /* another non-directory, of layer ->below_layer */
};

#define LFS_PN_OPAQUE 0x1 /* this layer made the directory opaque */

/* one path of the tree; the root's parent is NULL and its name "" */
struct lfs_pnode {
	struct lfs_pnode *parent;
	char *link; /* the target that counts: this layer's symlink, else
		     * the one below (LFS_BELOW_SYMLINK); owned */
	uint32_t *stack; /* LFS_BELOW_DIR: indexes into the lower layers
			  * (0 = just below) holding the directory, top
			  * first, cut after an opaque one; owned */
	uint32_t nstack;
	uint32_t below_layer; /* LFS_BELOW_SYMLINK, LFS_BELOW_OTHER */
	uint32_t plen; /* length of the path */
	uint16_t namelen;
	uint8_t kind; /* enum lfs_node_kind, set by lfs_pathset_mark() */
	uint8_t below; /* enum lfs_below */
	uint8_t flags; /* LFS_PN_* */
	char name[]; /* no '/' */
};

struct lfs_pathset;
struct lfs_pathset *lfs_pathset_new(void);
void lfs_pathset_free(struct lfs_pathset *set);
struct lfs_pnode *lfs_pathset_root(struct lfs_pathset *set);
struct lfs_pnode *lfs_pathset_get(const struct lfs_pathset *set,
				  const struct lfs_pnode *parent,
				  const char *name, size_t len);
struct lfs_pnode *lfs_pathset_add(struct lfs_pathset *set,
				  struct lfs_pnode *parent, const char *name,
				  size_t len);
size_t lfs_pathset_count(const struct lfs_pathset *set);
int lfs_pnode_path(const struct lfs_pnode *n, char *buf, size_t len);
void lfs_pathset_mark(struct lfs_pathset *set, struct lfs_pnode *n,
		      enum lfs_node_kind kind);

/* gzip.c: gzip members, checked to the last byte */
struct lfs_gzip;
struct lfs_gzip *lfs_gzip_new(void);
void lfs_gzip_free(struct lfs_gzip *z);
ssize_t lfs_gzip_read(struct lfs_gzip *z, void *out, size_t len,
		      ssize_t (*fill)(void *ctx, const void **buf), void *ctx,
		      const char **why);

/* ahead.c: a producer filling buffers ahead of its consumer, on a thread */
typedef ssize_t (*lfs_ahead_fill_fn)(void *ctx, void *buf, size_t len);
struct lfs_ahead;
struct lfs_ahead *lfs_ahead_new(size_t nbufs, size_t size,
				lfs_ahead_fill_fn fill, void *ctx, bool thread);
ssize_t lfs_ahead_next(struct lfs_ahead *a, const void **buf);
void lfs_ahead_free(struct lfs_ahead *a);

/* tarframe.c: the block structure of a tar stream, read on its own */
struct lfs_tar_frame {
	uint64_t start; /* offset of its first header (extensions included) */
	uint64_t size; /* data bytes its headers declare */
	char type; /* the type flag of its main header */
};

struct lfs_tarframe;
struct lfs_tarframe *lfs_tarframe_new(void);
void lfs_tarframe_free(struct lfs_tarframe *t);
void lfs_tarframe_feed(struct lfs_tarframe *t, const void *buf, size_t len);
int lfs_tarframe_entry(struct lfs_tarframe *t, uint64_t pos,
		       struct lfs_tar_frame *f, const char **rule);
int lfs_tarframe_finish(struct lfs_tarframe *t, const char **rule);

/* extract.c */
struct lfs_progress {
	unsigned int index; /* 1-based layer number */
	unsigned int count; /* layers to unpack */
	uint64_t total; /* blob bytes */
	uint64_t done; /* blob bytes read */
	bool enabled; /* stderr is a terminal */
};

struct lfs_extract_opts {
	struct lfs_limits lim;
	enum lfs_whiteout_fmt fmt;
	const char *layer_name; /* for messages: the blob digest */
	const char *diff_id; /* expected, NULL: not checked */
	enum lfs_compression comp;
	struct lfs_progress *progress; /* NULL: none */
	/* the image's layers unpacked so far, added to on success; NULL: none */
	struct lfs_usage *image;
	/*
	 * The image's layers below this one, just below first: O_PATH
	 * directory fds and names for messages. Paths this layer does not
	 * create are looked up in them (implicit parents, symlinks).
	 */
	const int *lower_fds;
	const char *const *lower_names;
	size_t nlower;
	/* out: the result depends on the layers below (NULL: not asked) */
	bool *depends_below;
	/* out: the digests of the regular files written (NULL: not asked) */
	struct lfs_filesums *sums;
	/* regular files' data goes there (objects.c); NULL: into the layer */
	struct lfs_objects *objects;
};

int lfs_extract_layer(int blobfd, int rootfd, const struct lfs_extract_opts *o);

/* layout.c */
int lfs_layout_parse_ref(const char *ref, char **dir, char **tag);
int lfs_layout_open_blob(int dirfd, const char *digest);
int lfs_layout_resolve(const char *dir, const char *tag, const char *platform,
		       struct lfs_image *img);
void lfs_image_release(struct lfs_image *img);
int lfs_media_type_compression(const char *mt, enum lfs_compression *comp);
int lfs_json_parse(const char *what, const char *buf, size_t len, json_t **out);

/* store.c */
struct lfs_store {
	char *path; /* the store directory */
	int dirfd; /* open on it */
	int lockfd; /* the lock file, flock()ed */
	enum lfs_whiteout_fmt fmt;
	bool fmt_known; /* a layer format was recorded */
	bool objects; /* the data format: objects (objects.c), else inline */
	bool data_known; /* a data format was recorded (or implied) */
	bool sync; /* fsync what is published (not with --no-sync) */
};

void lfs_test_point(const char *point);
int lfs_store_sync_dir(const struct lfs_store *st, const char *sub);
DIR *lfs_store_opendir(const struct lfs_store *st, const char *sub);
int lfs_store_meta_lock(struct lfs_store *st);
void lfs_store_meta_unlock(struct lfs_store *st);
int lfs_store_publish(struct lfs_store *st, const char *dir, const char *name,
		      const char *data, size_t len, bool replace);

int lfs_store_open(struct lfs_store *st, const char *path, bool create,
		   bool exclusive);
void lfs_store_close(struct lfs_store *st);
int lfs_store_set_format(struct lfs_store *st, enum lfs_whiteout_fmt fmt,
			 bool objects);
int lfs_store_layer_dir(const struct lfs_store *st, const char *diff_id,
			char **out);
bool lfs_store_has_layer(const struct lfs_store *st, const char *diff_id);
int lfs_store_commit_layer(struct lfs_store *st, const char *tmpname,
			   const char *diff_id,
			   const struct lfs_filesums *sums);
int lfs_store_mktemp(struct lfs_store *st, const char *prefix, char **name);
int lfs_store_check_name(struct lfs_store *st, const char *name,
			 const struct lfs_image *img, bool replace);
int lfs_store_write_image(struct lfs_store *st, const char *name,
			  const struct lfs_image *img, bool replace);
int lfs_store_read_image(struct lfs_store *st, const char *name, json_t **out);
const char *lfs_store_layer_key(json_t *layer);
int lfs_store_image_layer_dirs(struct lfs_store *st, json_t *rec, char ***dirs,
			       size_t *n);
int lfs_store_list(struct lfs_store *st, json_t **out);
int lfs_store_rm_image(struct lfs_store *st, const char *name, bool force);
int lfs_store_gc(struct lfs_store *st, bool dry_run, unsigned int *removed);

/* tree.c */
struct lfs_filesums;
struct lfs_filesums *lfs_filesums_new(void);
void lfs_filesums_free(struct lfs_filesums *s);
int lfs_filesums_set(struct lfs_filesums *s, dev_t dev, ino_t ino,
		     uint64_t size, const unsigned char *md);
bool lfs_filesums_get(const struct lfs_filesums *s, const struct stat *st,
		      char hex[LFS_SHA256_HEX + 1]);
int lfs_tree_write(struct lfs_store *st, const char *tmpname,
		   const char *diff_id, const struct lfs_filesums *sums);
int lfs_tree_publish(struct lfs_store *st, const char *tmpname,
		     const char *diff_id);
int lfs_tree_repair(struct lfs_store *st);
int lfs_tree_verify(struct lfs_store *st, const char *diff_id,
		    unsigned long *diffs);

/* objects.c: regular files' data stored once, by its SHA-256 */
/* the largest metacopy value: version, len, flags, algo, a SHA-512 digest */
#define LFS_METACOPY_MAX (4 + 64)

/* a metacopy file's object */
struct lfs_objref {
	char hex[LFS_SHA256_HEX + 1]; /* the object: objects/XX/REST */
	unsigned char mc[LFS_METACOPY_MAX]; /* trusted.overlay.metacopy */
	size_t mlen; /* its length: 0, no digest */
};

/* what an import did with objects */
struct lfs_objstats {
	uint64_t written; /* new objects */
	uint64_t reused; /* files whose object was there */
	uint64_t bytes; /* in the new objects */
	uint64_t verity; /* new objects with fs-verity */
	int verity_off; /* why fs-verity is off (EOPNOTSUPP, ENOTTY), or 0 */
};

struct lfs_objects;
int lfs_objects_begin(struct lfs_store *st, struct lfs_objstats *stats,
		      struct lfs_objects **out);
void lfs_objects_end(struct lfs_objects *o);
int lfs_objects_create(struct lfs_objects *o, char *name, size_t len);
void lfs_objects_discard(struct lfs_objects *o, const char *name);
int lfs_objects_add(struct lfs_objects *o, int fd, const char *name,
		    const unsigned char *md, uint64_t size,
		    struct lfs_objref *ref);
int lfs_objects_mark(int fd, const struct lfs_objref *ref);
int lfs_objects_publish(struct lfs_objects *o);
int lfs_object_measure(int fd, unsigned char *mc, size_t *mlen);
int lfs_object_pointer_at(int dirfd, const char *name, struct lfs_objref *ref,
			  const char **why);
int lfs_object_check(int objfd, const struct lfs_objref *ref, uint64_t size,
		     bool hash, char *buf, size_t len, const char **why);
int lfs_objects_count(char *const *dirs, size_t n, uint64_t *pointers,
		      uint64_t *digests);
int lfs_objects_gc(struct lfs_store *st, json_t *keep, bool dry_run,
		   unsigned int *removed);

/* lease.c */
json_t *lfs_lease_make(const char *name, json_t *rec, const char *target,
		       const char *fstype);
const char *lfs_lease_source(json_t *lease);
int lfs_lease_add(struct lfs_store *st, json_t *lease);
int lfs_lease_drop(struct lfs_store *st, json_t *lease);
int lfs_leases_read(struct lfs_store *st, json_t **out);
int lfs_lease_check(json_t *lease, int *mnt_id, const char **why);
const char *lfs_lease_target(json_t *lease, char *buf, size_t len);
const char *lfs_lease_describe(json_t *lease, char *buf, size_t len);
int lfs_leases_live(struct lfs_store *st, const char *image, bool dry_run,
		    json_t **out, unsigned int *stale);

/* import.c */
struct lfs_import_opts {
	const char *name; /* image name in the store */
	const char *platform; /* os/arch[/variant] */
	struct lfs_limits lim;
	enum lfs_whiteout_fmt fmt;
	bool sync; /* syncfs() before committing */
	bool replace; /* replace an image of that name */
	bool objects; /* data into objects/ (the store's data format) */
	struct lfs_objstats *stats; /* out: what objects.c did */
};

int lfs_import(struct lfs_store *st, const char *layout_dir, const char *tag,
	       const struct lfs_import_opts *o);
int lfs_pull(struct lfs_store *st, const char *ref,
	     const struct lfs_import_opts *o);

/* mount.c */
struct lfs_mount_opts {
	const char *fstype; /* "layerfs" or "overlay" */
	const char *upper; /* NULL: read-only */
	const char *work; /* NULL: default next to upper */
	const char *source; /* the mount source, names the lease */
	bool print_only; /* --print */
	const char *datadir; /* the data-only layer (STORE/objects), or NULL */
	const char *verity; /* "on", "require", or NULL: not given */
};

char *lfs_lowerdir_string(char *const *dirs, size_t n);
char *lfs_escape_option(const char *s);
const char *lfs_mount_fstype(const struct lfs_mount_opts *o);
int lfs_mount_image(char *const *dirs, size_t n, const char *target,
		    const struct lfs_mount_opts *o);
int lfs_umount(const char *target);
int lfs_mount_id(const char *path);

#endif /* OCI2OVL_H */
