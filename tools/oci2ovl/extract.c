// SPDX-License-Identifier: GPL-2.0
/*
 * Hardened extraction of one layer blob into one empty directory.
 *
 * Two readers are chained: the outer one only decompresses (gzip.c for
 * gzip, which checks every member to its trailer and refuses what follows
 * the last; a libarchive filter with the "raw" format for zstd and plain
 * tar), the inner one, libarchive's, parses tar from what the outer one
 * yields. The outer one runs on a thread of its own (ahead.c), at most
 * LFS_AHEAD_BUFS buffers ahead. Every decompressed byte passes through
 * lfs_next_data() exactly once, in order, which hashes it for the
 * diff_id, counts it against --max-bytes (a decompression bomb is stopped
 * while it streams, nothing is ever held in memory whole) and feeds it to
 * tarframe.c, whose reading of the tar structure every entry must agree
 * with. A regular file's data is hashed as it is written, for the tree
 * manifest (o->sums, tree.c). A zero-length blob is the empty tar stream,
 * an empty layer, whatever its media type (containerd's reading; its
 * diff_id is the digest of nothing).
 *
 * Before an entry touches the disk, its header is checked: owner ids are
 * at most 2^32 - 2 ((uid_t)-1 means "unchanged" to chown()), a
 * header-only type declares no data, and the entries, names and xattrs of
 * the layer, and of the image so far, stay within --max-entries,
 * --max-names and --max-xattrs. Paths are walked a component at a time
 * in the path set, so an entry costs the length of its path whatever its
 * depth.
 *
 * Each entry is confined to the layer root:
 *  - its name is normalised lexically (path.c): ".." is refused, "/" is
 *    dropped;
 *  - its parent is resolved in the merged view of this layer over the
 *    image's layers below (lfs_resolve()), inside the image root: a
 *    symlink on the way is followed there (bounded), a non-directory is
 *    refused, a missing parent is made as an implicit directory with the
 *    attributes of the directory below (lfs_make_implicit());
 *  - the parent is then opened with openat2(RESOLVE_BENEATH |
 *    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV), and
 *    the entry is created in it with *at() calls on a single name, with
 *    O_EXCL/O_NOFOLLOW: nothing is ever written through a symlink;
 *  - a hard link must name an earlier non-directory entry of this layer;
 *  - a second entry for one path is refused (image-spec: "MUST NOT"),
 *    except a directory entry for a parent created implicitly, and an
 *    entry for a path this layer whited out (the entry replaces the
 *    whiteout; a directory then becomes opaque, since it was re-created).
 *
 * Directory times are set last, since creating children changes them.
 *
 * Xattrs come from pax records (SCHILY.xattr.*, LIBARCHIVE.xattr.*). In
 * pax an empty value deletes its keyword, so an empty xattr is never
 * written; one name given twice with different values is refused. Each
 * is then ruled on as the kernel would rule on it on any filesystem
 * (lfs_xattr_rule()): one no file of the entry's type can carry is
 * dropped with a warning, a malformed one refuses the layer. Device
 * numbers mknod(2) cannot take are refused before anything is made.
 *
 * aufs's metadata at the layer root (.wh..wh.plnk, .wh..wh.aufs,
 * .wh..wh.orph) is skipped, as docker skips it; hard links into its
 * pseudo-link directory link to the files kept there (lfs_aufs_entry()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

#define LFS_BUF_SIZE (1 << 16)
/*
 * decompressed data, read ahead on a thread of its own (ahead.c): this
 * many buffers of this size at most
 */
#define LFS_AHEAD_BUFS 4
#define LFS_AHEAD_SIZE (1 << 17)

/* symlinks followed resolving one path, as the kernel's MAXSYMLINKS */
#define LFS_MAX_SYMLINKS 40
#define LFS_STR_(v) #v
#define LFS_STR(v) LFS_STR_(v)
#define LFS_LOOP_RULE \
	"more than " LFS_STR(LFS_MAX_SYMLINKS) " symlinks on the way, the last"
/* what is left of a path being resolved, symlink targets spliced in */
#define LFS_REST_MAX (2 * PATH_MAX)
/* an implicit directory nothing below has: fixed, no umask, no clock */
#define LFS_IMPLICIT_MODE 0755
#define LFS_IMPLICIT_TIME 0
/* struct lfs_pnode.flags beyond LFS_PN_OPAQUE */
#define LFS_PN_COPIED 0x2 /* an implicit directory took xattrs from below */

enum lfs_res_mode {
	LFS_RES_CREATE, /* make missing parents (entries, whiteouts) */
	LFS_RES_LOOKUP, /* make nothing (hard link targets) */
};

/* where a walk through the merged view is (lfs_resolve()) */
struct lfs_walk {
	struct lfs_pnode *node; /* a directory of the merged view */
	int fd; /* its fd in this layer, or -1 */
	struct lfs_pnode *blocker; /* the non-directory that stopped it */
};

/* a directory whose times are set at the end */
struct lfs_dir_time {
	struct lfs_pnode *node;
	struct timespec ts[2]; /* atime, mtime */
};

/* why an xattr is dropped, counted per layer (lfs_xattr_rule()) */
enum lfs_xattr_drop {
	LFS_DROP_NAMESPACE,
	LFS_DROP_USER_TYPE,
	LFS_DROP_ACL_SYMLINK,
	LFS_DROP_ACL_DEFAULT,
	LFS_DROP_NR,
};

/* the state of one layer's extraction */
struct lfs_xstate {
	const struct lfs_extract_opts *o;
	int rootfd; /* the layer directory */
	int blobfd; /* the compressed blob */
	struct archive *outer; /* decompressor (zstd, none) */
	struct lfs_gzip *gz; /* decompressor (gzip) */
	bool outer_empty; /* the outer reader found no data at all */
	struct lfs_ahead *ahead; /* runs the decompressor, on its thread */
	/* the decompressor's, on its thread: why it stopped (an error) */
	bool dec_not_gzip;
	char dec_msg[256];
	struct archive *inner; /* tar reader */
	struct lfs_tarframe *frame; /* the tar structure, read on its own */
	struct lfs_sha256 *diff; /* over the decompressed stream */
	struct lfs_sha256 *fsum; /* over a file's data, for o->sums */
	uint64_t expanded; /* decompressed bytes so far */
	bool over_limit; /* expanded passed max_bytes (for the image: image_over) */
	bool image_over;
	bool stream_failed; /* outer reader reported an error */
	bool not_gzip; /* ... because the blob is not gzip */
	char stream_msg[256]; /* ... and what it said */
	struct lfs_usage used; /* by this layer; its bytes are expanded */
	struct lfs_pathset *set; /* what this layer met */
	struct lfs_dir_time *dirs; /* times to set at the end */
	size_t ndirs, capdirs;
	struct lfs_pnode *lc_node; /* the lower cursor: a node below ... */
	int *lc_fd; /* ... open in each layer of its stack (O_PATH) */
	bool depends; /* a path was looked up below */
	const struct lfs_pnode *pc_node; /* lfs_node_open()'s last ... */
	int pc_fd; /* ... and its fd */
	char rest[2][LFS_REST_MAX]; /* lfs_resolve()'s buffers */
	uint64_t drops[LFS_DROP_NR]; /* xattrs dropped, by reason */
	uint64_t aufs_skipped; /* entries of aufs's metadata skipped */
	struct timespec last_progress;
	unsigned char inbuf[LFS_BUF_SIZE]; /* the decompressor's */
};

static void lfs_progress_show(struct lfs_xstate *x, bool force)
{
	struct lfs_progress *p = x->o->progress;
	struct timespec now;

	if (!p || !p->enabled)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!force && (now.tv_sec - x->last_progress.tv_sec) * 1000000000L +
				      now.tv_nsec - x->last_progress.tv_nsec <
			      100000000L)
		return;
	x->last_progress = now;
	fprintf(stderr, "\r%s: layer %u/%u %.19s: %.1f of %.1f MiB", LFS_PROG,
		p->index, p->count, x->o->layer_name, p->done / 1048576.0,
		p->total / 1048576.0);
	if (force)
		fputc('\n', stderr);
}

/* the next bytes of the blob file: their count, 0 at its end, or -errno */
static ssize_t lfs_blob_fill(void *data, const void **buf)
{
	struct lfs_xstate *x = data;
	ssize_t r;

	do
		r = read(x->blobfd, x->inbuf, sizeof(x->inbuf));
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (x->o->progress) {
		x->o->progress->done += r;
		lfs_progress_show(x, false);
	}
	*buf = x->inbuf;
	return r;
}

/* outer reader's source: the blob file */
static la_ssize_t lfs_blob_read(struct archive *a, void *data, const void **buf)
{
	ssize_t r = lfs_blob_fill(data, buf);

	if (r < 0) {
		archive_set_error(a, -r, "reading the blob");
		return -1;
	}
	return r;
}

/*
 * account for decompressed bytes: the diff_id, the expansion limit (of
 * the layer and of the image), the tar structure
 */
static int lfs_account(struct lfs_xstate *x, const void *buf, size_t n)
{
	uint64_t before = x->o->image ? x->o->image->bytes : 0;

	x->expanded += n;
	if (x->expanded > x->o->lim.max_bytes ||
	    before + x->expanded > x->o->lim.max_bytes) {
		x->over_limit = true;
		x->image_over = x->expanded <= x->o->lim.max_bytes;
		return -1;
	}
	lfs_sha256_update(x->diff, buf, n);
	lfs_tarframe_feed(x->frame, buf, n);
	return 0;
}

/*
 * The decompressor, on the read-ahead's thread (lfs_ahead_new()): the
 * next decompressed bytes into @buf, their count, 0 at the end, or -1,
 * why in x->dec_*. It uses the blob, x->gz or x->outer, x->inbuf and the
 * progress, and nothing else of @ctx.
 */
static ssize_t lfs_decompress(void *ctx, void *buf, size_t len)
{
	struct lfs_xstate *x = ctx;
	const char *why = NULL;
	ssize_t r;

	if (x->gz) {
		r = lfs_gzip_read(x->gz, buf, len, lfs_blob_fill, x, &why);
		if (r >= 0)
			return r;
		x->dec_not_gzip = r == -EMEDIUMTYPE;
		snprintf(x->dec_msg, sizeof(x->dec_msg), "%s",
			 r == -EINVAL ? why : strerror(-r));
	} else if (x->outer_empty) {
		return 0;
	} else {
		r = archive_read_data(x->outer, buf, len);
		if (r >= 0)
			return r;
		snprintf(x->dec_msg, sizeof(x->dec_msg), "%s",
			 archive_error_string(x->outer) ?: "read error");
	}
	return -1;
}

/*
 * The next decompressed bytes, in order, each once: their count, with
 * *@buf pointing at them until the next call; 0 at the end; -1 if the
 * stream failed (x->stream_*) or passed a limit (x->over_limit).
 */
static ssize_t lfs_next_data(struct lfs_xstate *x, const void **buf)
{
	ssize_t r = lfs_ahead_next(x->ahead, buf);

	if (r < 0) {
		/* the decompressor stopped: its state is ours to read */
		x->stream_failed = true;
		x->not_gzip = x->dec_not_gzip;
		memcpy(x->stream_msg, x->dec_msg, sizeof(x->stream_msg));
		return -1;
	}
	return r && lfs_account(x, *buf, r) ? -1 : r;
}

/* inner reader's source: the outer reader's decompressed data */
static la_ssize_t lfs_tar_read(struct archive *a, void *data, const void **buf)
{
	struct lfs_xstate *x = data;
	ssize_t r = lfs_next_data(x, buf);

	if (r < 0)
		archive_set_error(a, x->over_limit ? EFBIG : EIO, "%s",
				  x->over_limit ? "expansion limit" :
						  x->stream_msg);
	return r;
}

/* report why reading stopped, giving stream errors precedence */
static int lfs_stream_error(struct lfs_xstate *x, const char *entry)
{
	if (x->over_limit)
		return lfs_refuse(x->o->layer_name, entry,
				  "%s expands beyond %llu bytes (--max-bytes)",
				  x->image_over ? "image" : "layer",
				  (unsigned long long)x->o->lim.max_bytes);
	if (x->not_gzip)
		return lfs_refuse(
			x->o->layer_name, NULL,
			"blob is not gzip, not what its media type says");
	if (x->stream_failed)
		return lfs_refuse(x->o->layer_name, entry,
				  "bad compressed stream: %s",
				  lfs_esc(x->stream_msg));
	return lfs_refuse(x->o->layer_name, entry, "bad tar stream: %s",
			  lfs_esc(archive_error_string(x->inner) ?:
					  "read error"));
}

static int lfs_entry_err(struct lfs_xstate *x, const char *entry,
			 const char *what, int err)
{
	char buf[512];

	lfs_err("layer %s: entry \"%s\": %s: %s", x->o->layer_name,
		lfs_escape_name(entry, buf, sizeof(buf)), what, strerror(-err));
	return err;
}

/* a system error setting xattr @name of @entry */
static int lfs_xattr_err(struct lfs_xstate *x, const char *entry,
			 const char *name, int err)
{
	char what[600]; /* "set xattr " and an lfs_esc() result */

	snprintf(what, sizeof(what), "set xattr %s", lfs_esc(name));
	return lfs_entry_err(x, entry, what, err);
}

/*
 * An O_PATH fd of directory @n of this layer. The last one opened is kept,
 * and a path below it is opened from it: entries come grouped by
 * directory, and a deep path would cost a deep walk each time. (A node
 * never leaves the tree, nor its directory the disk.)
 */
static int lfs_node_open(struct lfs_xstate *x, const struct lfs_pnode *n)
{
	const struct lfs_pnode *a = n;
	char p[PATH_MAX], *rel = p;
	int fd, dirfd = x->rootfd, err;

	if (x->pc_node)
		while (a && a != x->pc_node && a->plen > x->pc_node->plen)
			a = a->parent;
	if (n != x->pc_node) {
		err = lfs_pnode_path(n, p, sizeof(p));
		if (err)
			return err;
		if (a && a == x->pc_node) {
			/* below the last one: only the rest of the path */
			dirfd = x->pc_fd;
			rel = p + a->plen + (a->plen ? 1 : 0);
		}
		fd = lfs_openat2(dirfd, *rel ? rel : ".", O_PATH | O_DIRECTORY,
				 0);
		if (fd < 0)
			return fd;
		if (x->pc_node)
			close(x->pc_fd);
		x->pc_node = n;
		x->pc_fd = fd;
	}
	fd = fcntl(x->pc_fd, F_DUPFD_CLOEXEC, 0);
	return fd < 0 ? -errno : fd;
}

/* "this layer", or "layer sha256:..." of the lower layer that has @n */
static const char *lfs_node_owner(struct lfs_xstate *x,
				  const struct lfs_pnode *n, char *buf,
				  size_t len)
{
	if (n->kind != LFS_NODE_NONE)
		return "this layer";
	snprintf(buf, len, "layer %s", x->o->lower_names[n->below_layer]);
	return buf;
}

/* refuse @raw for @rule, naming @n (a symlink or a non-directory) */
static int lfs_refuse_node(struct lfs_xstate *x, const char *raw,
			   const struct lfs_pnode *n, const char *rule)
{
	char p[PATH_MAX], e[512], own[LFS_DIGEST_LEN + 16];

	if (!n)
		return lfs_refuse(x->o->layer_name, raw, "%s", rule);
	if (lfs_pnode_path(n, p, sizeof(p)))
		snprintf(p, sizeof(p), "%s", n->name);
	return lfs_refuse(x->o->layer_name, raw, "%s \"%s\" (%s)", rule,
			  lfs_escape_name(p, e, sizeof(e)),
			  lfs_node_owner(x, n, own, sizeof(own)));
}

/* close the lower cursor */
static void lfs_lc_close(struct lfs_xstate *x)
{
	uint32_t j;

	if (!x->lc_node)
		return;
	for (j = 0; j < x->lc_node->nstack; j++)
		close(x->lc_fd[j]);
	x->lc_node = NULL;
}

/* put the lower cursor on @n (LFS_BELOW_DIR): open it in its layers */
static int lfs_lc_open(struct lfs_xstate *x, struct lfs_pnode *n)
{
	char p[PATH_MAX];
	uint32_t j;
	int fd, err;

	if (x->lc_node == n)
		return 0;
	lfs_lc_close(x);
	err = lfs_pnode_path(n, p, sizeof(p));
	if (err)
		return err;
	for (j = 0; j < n->nstack; j++) {
		fd = lfs_openat2(x->o->lower_fds[n->stack[j]], *p ? p : ".",
				 O_PATH | O_DIRECTORY, 0);
		if (fd < 0) {
			while (j--)
				close(x->lc_fd[j]);
			return fd;
		}
		x->lc_fd[j] = fd;
	}
	x->lc_node = n;
	return 0;
}

/* the root below: every lower layer, down to the first opaque root */
static int lfs_below_root(struct lfs_xstate *x, struct lfs_pnode *root)
{
	size_t i;

	root->below = LFS_BELOW_ABSENT;
	if (!x->o->nlower)
		return 0;
	root->stack = calloc(x->o->nlower, sizeof(*root->stack));
	if (!root->stack)
		return -ENOMEM;
	for (i = 0; i < x->o->nlower; i++) {
		root->stack[root->nstack++] = i;
		if (lfs_is_opaque_at(x->o->lower_fds[i], ""))
			break;
	}
	root->below = LFS_BELOW_DIR;
	return 0;
}

/*
 * lfs_below_child() - what the layers below have at @c, a child of @p
 *
 * As overlay looks a name up: top layer first, a whiteout ends the
 * search, directories merge down to an opaque one, a non-directory counts
 * only if no directory is above it. Nothing is below a directory of this
 * layer that is opaque or stands on a non-directory. Leaves the lower
 * cursor on @c when it is a directory below.
 */
static int lfs_below_child(struct lfs_xstate *x, struct lfs_pnode *p,
			   struct lfs_pnode *c)
{
	uint32_t *stack, n = 0, j;
	char t[PATH_MAX];
	struct stat st;
	int *fds, err = 0;
	ssize_t r;

	c->below = LFS_BELOW_ABSENT;
	if (p->below != LFS_BELOW_DIR || (p->flags & LFS_PN_OPAQUE))
		return 0;
	err = lfs_lc_open(x, p);
	if (err)
		return err;
	stack = malloc(p->nstack * sizeof(*stack));
	fds = malloc(p->nstack * sizeof(*fds));
	if (!stack || !fds) {
		err = -ENOMEM;
		goto out;
	}
	for (j = 0; j < p->nstack; j++) {
		int pfd = x->lc_fd[j], fd;

		if (fstatat(pfd, c->name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue;
			err = -errno;
			goto out;
		}
		if (lfs_is_whiteout_at(pfd, c->name, &st, x->o->fmt))
			break;
		if (S_ISDIR(st.st_mode)) {
			fd = openat(pfd, c->name,
				    O_PATH | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC);
			if (fd < 0) {
				err = -errno;
				goto out;
			}
			fds[n] = fd;
			stack[n++] = p->stack[j];
			if (lfs_is_opaque_at(pfd, c->name))
				break;
			continue;
		}
		if (n)
			break; /* a directory above hides it */
		c->below_layer = p->stack[j];
		c->below = LFS_BELOW_OTHER;
		if (!S_ISLNK(st.st_mode))
			goto out;
		r = readlinkat(pfd, c->name, t, sizeof(t) - 1);
		if (r < 0) {
			err = -errno;
			goto out;
		}
		t[r] = '\0';
		free(c->link);
		c->link = strdup(t);
		if (!c->link)
			err = -ENOMEM;
		c->below = LFS_BELOW_SYMLINK;
		goto out;
	}
	if (n) {
		c->below = LFS_BELOW_DIR;
		c->stack = stack;
		c->nstack = n;
		stack = NULL;
		lfs_lc_close(x);
		memcpy(x->lc_fd, fds, n * sizeof(*fds));
		x->lc_node = c;
		n = 0;
	}
out:
	while (n)
		close(fds[--n]);
	free(fds);
	free(stack);
	return err;
}

/* make sure @n->below is known: look up the unknown part of its path */
static int lfs_below_of(struct lfs_xstate *x, struct lfs_pnode *n)
{
	struct lfs_pnode **chain, *a;
	size_t k = 0, i;
	int err = 0;

	/* the root's is set before the first entry */
	for (a = n; a->below == LFS_BELOW_UNKNOWN; a = a->parent)
		k++;
	if (!k)
		return 0;
	chain = malloc(k * sizeof(*chain));
	if (!chain)
		return -ENOMEM;
	for (a = n, i = k; i; a = a->parent)
		chain[--i] = a;
	for (i = 0; !err && i < k; i++)
		err = lfs_below_child(x, chain[i]->parent, chain[i]);
	free(chain);
	return err;
}

/* a directory whose times are set at the end */
static int lfs_defer_dir_time(struct lfs_xstate *x, struct lfs_pnode *node,
			      const struct timespec ts[2])
{
	struct lfs_dir_time *d;

	if (x->ndirs == x->capdirs) {
		size_t cap = x->capdirs ? 2 * x->capdirs : 64;

		d = realloc(x->dirs, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		x->dirs = d;
		x->capdirs = cap;
	}
	d = &x->dirs[x->ndirs++];
	d->node = node;
	d->ts[0] = ts[0];
	d->ts[1] = ts[1];
	return 0;
}

/*
 * Directory times, once every child is written: in the order they were
 * recorded, so that a directory's own entry, coming after its implicit
 * creation, has the last word. Setting one directory's times changes no
 * other's.
 */
static int lfs_set_dir_times(struct lfs_xstate *x)
{
	size_t i;
	int err = 0;

	for (i = 0; i < x->ndirs; i++) {
		struct lfs_dir_time *d = &x->dirs[i];
		int pfd;

		if (!d->node->parent) {
			if (futimens(x->rootfd, d->ts))
				return -errno;
			continue;
		}
		pfd = lfs_node_open(x, d->node->parent);
		if (pfd < 0)
			return pfd;
		if (utimensat(pfd, d->node->name, d->ts, AT_SYMLINK_NOFOLLOW))
			err = -errno;
		close(pfd);
		if (err)
			return err;
	}
	return 0;
}

/* xattrs of directory @src (O_PATH) onto @dst, but overlay markers */
static int lfs_copy_xattrs(int src, int dst)
{
	char *names = NULL, *val = NULL, *name;
	ssize_t n, v;
	int fd, err = 0;

	fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = flistxattr(fd, NULL, 0);
	if (n <= 0) {
		err = n < 0 && errno != ENOTSUP ? -errno : 0;
		goto out;
	}
	names = malloc(n);
	val = malloc(XATTR_SIZE_MAX);
	if (!names || !val) {
		err = -ENOMEM;
		goto out;
	}
	n = flistxattr(fd, names, n);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	for (name = names; name < names + n; name += strlen(name) + 1) {
		if (lfs_xattr_is_overlay(name))
			continue;
		v = fgetxattr(fd, name, val, XATTR_SIZE_MAX);
		if (v < 0 || fsetxattr(dst, name, val, v, 0)) {
			err = -errno;
			break;
		}
	}
out:
	free(val);
	free(names);
	close(fd);
	return err;
}

/* refuse @raw: the layer's paths, implied parents included, are too many */
static int lfs_refuse_paths(struct lfs_xstate *x, const char *raw)
{
	return lfs_refuse(
		x->o->layer_name, raw,
		"more than %llu paths, with the parents they imply (--max-entries)",
		(unsigned long long)x->o->lim.max_entries);
}

/*
 * lfs_make_implicit() - make @c, a child of the walk's directory, as a
 * directory of this layer that no entry named (yet); the walk moves in
 *
 * It takes what the merged view below has at its path: mode, owner,
 * times and xattrs (overlay markers excepted), as containerd copies a
 * lower directory into a parent it makes, so that it does not hide the
 * lower one's attributes. Where nothing below is a directory it is
 * LFS_IMPLICIT_MODE, root:root, LFS_IMPLICIT_TIME (no umask, no clock).
 * Replacing a whiteout this layer wrote, it is opaque and takes the
 * defaults (the whiteout hides what is below).
 */
static int lfs_make_implicit(struct lfs_xstate *x, const char *raw,
			     struct lfs_walk *w, struct lfs_pnode *c)
{
	struct timespec ts[2] = { { LFS_IMPLICIT_TIME, 0 },
				  { LFS_IMPLICIT_TIME, 0 } };
	bool replace = c->kind == LFS_NODE_WHITEOUT;
	struct stat st;
	int fd, err = 0;

	/* a new path of the layer is counted before it is made */
	if (!replace && lfs_pathset_count(x->set) >= x->o->lim.max_entries)
		return lfs_refuse_paths(x, raw);
	if (w->fd < 0) {
		w->fd = lfs_node_open(x, w->node);
		if (w->fd < 0)
			return w->fd;
	}
	if (replace && unlinkat(w->fd, c->name, 0))
		return -errno;
	if (mkdirat(w->fd, c->name, 0700))
		return -errno;
	fd = lfs_openat2(w->fd, c->name, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	lfs_pathset_mark(x->set, c, LFS_NODE_IMPLICIT_DIR);
	if (replace) {
		c->flags |= LFS_PN_OPAQUE;
		err = lfs_make_opaque(fd, "", x->o->fmt);
	}
	if (!err && !replace && c->below == LFS_BELOW_DIR) {
		c->flags |= LFS_PN_COPIED;
		err = lfs_lc_open(x, c);
		if (!err && fstat(x->lc_fd[0], &st))
			err = -errno;
		if (!err && (fchown(fd, st.st_uid, st.st_gid) ||
			     fchmod(fd, st.st_mode & 07777)))
			err = -errno;
		if (!err)
			err = lfs_copy_xattrs(x->lc_fd[0], fd);
		if (!err) {
			ts[0] = st.st_atim;
			ts[1] = st.st_mtim;
		}
	} else if (!err &&
		   (fchown(fd, 0, 0) || fchmod(fd, LFS_IMPLICIT_MODE))) {
		err = -errno;
	}
	if (!err)
		err = lfs_defer_dir_time(x, c, ts);
	if (err) {
		close(fd);
		return err;
	}
	close(w->fd);
	w->fd = fd;
	w->node = c;
	return 0;
}

/* the walk moves into @c, a directory of this layer or (lookup) below */
static int lfs_walk_down(struct lfs_walk *w, struct lfs_pnode *c)
{
	int fd;

	w->node = c;
	if (w->fd < 0)
		return 0;
	fd = lfs_openat2(w->fd, c->name, O_PATH | O_DIRECTORY, 0);
	close(w->fd);
	w->fd = fd < 0 ? -1 : fd;
	return fd < 0 ? fd : 0;
}

/* the walk jumps to @n: its fd is opened again when needed */
static void lfs_walk_jump(struct lfs_walk *w, struct lfs_pnode *n)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
	w->node = n;
}

/*
 * lfs_resolve() - find the directory that holds @path's last component,
 * in the merged view of this layer over the layers below
 * @path: a normalised entry path, not the root
 * @mode: LFS_RES_CREATE: make what is missing; LFS_RES_LOOKUP: nothing
 * @w: out: the directory's node and (creating) an fd of it
 *
 * Every component but the last is resolved as in the mounted image, but
 * inside the image's root: a symlink (of this layer or below) is
 * followed, an absolute target starts again at the root and ".." stops at
 * it; at most LFS_MAX_SYMLINKS symlinks are followed. This is a walk of
 * the tree (pathset.c) and of the lower layers' directories; the layer on
 * disk only ever gets directories, so the openat2(RESOLVE_NO_SYMLINKS)
 * of each syscall stays a second line of defence. Creating, a component
 * this layer lacks becomes an implicit directory (lfs_make_implicit()).
 *
 * Return: 0; 1 when a non-directory is on the way (@w->blocker); -ENOENT
 * (lookup: not in this layer); -LFS_EREFUSED (printed) or -errno. @w->fd
 * is closed on any return but 0.
 */
static int lfs_resolve(struct lfs_xstate *x, const char *path, const char *raw,
		       enum lfs_res_mode mode, struct lfs_walk *w)
{
	char *rest = x->rest[0], *spare = x->rest[1], *p;
	const char *last = strrchr(path, '/');
	struct lfs_pnode *c, *via = NULL;
	unsigned int links = 0;
	int err = 0;

	w->node = lfs_pathset_root(x->set);
	w->fd = -1;
	w->blocker = NULL;
	if (strlen(path) >= PATH_MAX)
		return lfs_refuse(x->o->layer_name, raw, "path too long");
	if (last) {
		memcpy(rest, path, last - path);
		rest[last - path] = '\0';
	} else {
		rest[0] = '\0';
	}
	for (p = rest; *p && !err;) {
		size_t n = strcspn(p, "/"), tl;
		char *next = p + n + (p[n] == '/');

		if (!n || (n == 1 && p[0] == '.')) {
			p = next;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (w->node->parent)
				lfs_walk_jump(w, w->node->parent);
			p = next;
			continue;
		}
		if (n > NAME_MAX) {
			err = lfs_refuse_node(x, raw, via,
					      "name too long through symlink");
			break;
		}
		if (n >= 4 && !memcmp(p, LFS_AUFS_WHITEOUT_PREFIX, 4)) {
			err = lfs_refuse_node(x, raw, via,
					      "whiteout name through symlink");
			break;
		}
		c = lfs_pathset_add(x->set, w->node, p, n);
		if (!c) {
			err = -ENOMEM;
			break;
		}
		if (c->plen > x->o->lim.max_path || c->plen >= PATH_MAX) {
			err = lfs_refuse_node(x, raw, via,
					      "path too long through symlink");
			break;
		}
		if (c->kind == LFS_NODE_NONE) {
			/* not in this layer: what is below decides */
			x->depends = true;
			err = lfs_below_of(x, c);
			if (err)
				break;
		}
		if (c->kind == LFS_NODE_DIR ||
		    c->kind == LFS_NODE_IMPLICIT_DIR) {
			err = lfs_walk_down(w, c);
		} else if (c->kind == LFS_NODE_SYMLINK ||
			   (c->kind == LFS_NODE_NONE &&
			    c->below == LFS_BELOW_SYMLINK)) {
			via = c;
			if (++links > LFS_MAX_SYMLINKS) {
				err = lfs_refuse_node(x, raw, c, LFS_LOOP_RULE);
				break;
			}
			tl = strlen(c->link);
			if (tl + 1 + strlen(next) >= LFS_REST_MAX) {
				err = lfs_refuse_node(
					x, raw, c,
					"path too long through symlink");
				break;
			}
			memcpy(spare, c->link, tl);
			spare[tl] = '/';
			strcpy(spare + tl + 1, next);
			next = spare;
			spare = rest;
			rest = next;
			if (c->link[0] == '/')
				lfs_walk_jump(w, lfs_pathset_root(x->set));
		} else if (c->kind == LFS_NODE_FILE ||
			   (c->kind == LFS_NODE_NONE &&
			    c->below == LFS_BELOW_OTHER)) {
			w->blocker = c;
			err = 1;
		} else if (mode == LFS_RES_LOOKUP) {
			/* a directory only below: nothing of this layer */
			if (c->kind != LFS_NODE_NONE ||
			    c->below != LFS_BELOW_DIR)
				err = -ENOENT;
			else
				lfs_walk_jump(w, c);
		} else {
			/* this layer's whiteout, nothing, or a dir below */
			err = lfs_make_implicit(x, raw, w, c);
		}
		p = next;
	}
	if (!err && mode == LFS_RES_CREATE && w->fd < 0) {
		w->fd = lfs_node_open(x, w->node);
		if (w->fd < 0)
			err = w->fd;
	}
	if (err && w->fd >= 0) {
		close(w->fd);
		w->fd = -1;
	}
	if (err < 0 && err != -LFS_EREFUSED &&
	    !(mode == LFS_RES_LOOKUP && err == -ENOENT))
		err = lfs_entry_err(x, raw, "resolve parent", err);
	return err;
}

/* one xattr of an entry, as libarchive lists them */
struct lfs_xattr {
	const char *name;
	const void *val;
	size_t len;
};

/* by name, then by value */
static int lfs_xattr_cmp(const void *a, const void *b)
{
	const struct lfs_xattr *u = a, *v = b;
	int r = strcmp(u->name, v->name);

	if (r)
		return r;
	if (u->len != v->len)
		return u->len < v->len ? -1 : 1;
	return u->len ? memcmp(u->val, v->val, u->len) : 0;
}

/* a little-endian field of an xattr value */
static uint32_t lfs_le(const unsigned char *p, size_t n)
{
	uint32_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* security.capability (linux/capability.h): revision 2, or 3 with a root */
#define LFS_CAP_REVISION_MASK 0xff000000u
#define LFS_CAP_REVISION_2 0x02000000u
#define LFS_CAP_REVISION_3 0x03000000u
#define LFS_CAP_SZ_2 20
#define LFS_CAP_SZ_3 24

/*
 * A file capability the kernel takes (cap_convert_nscap()): revision 2 in
 * 20 bytes, or revision 3 in 24 bytes whose root uid is one ((uid_t)-1 is
 * none). Revision 1 is no longer written by the kernel, nor taken.
 */
static bool lfs_fcap_valid(const unsigned char *v, size_t len)
{
	uint32_t rev = len >= 4 ? lfs_le(v, 4) & LFS_CAP_REVISION_MASK : 0;

	if (len == LFS_CAP_SZ_2)
		return rev == LFS_CAP_REVISION_2;
	return len == LFS_CAP_SZ_3 && rev == LFS_CAP_REVISION_3 &&
	       lfs_le(v + 20, 4) != UINT32_MAX;
}

/* POSIX ACL tags, in the order an ACL lists them (linux/posix_acl.h) */
enum {
	LFS_ACL_USER_OBJ = 0x01,
	LFS_ACL_USER = 0x02,
	LFS_ACL_GROUP_OBJ = 0x04,
	LFS_ACL_GROUP = 0x08,
	LFS_ACL_MASK = 0x10,
	LFS_ACL_OTHER = 0x20,
};

/*
 * A POSIX ACL xattr the kernel takes (posix_acl_from_xattr(), then
 * posix_acl_valid()): a version 2 header and 8-byte entries (tag, perm,
 * id); the owner's entry, named users, the group's entry, named groups,
 * the mask (required with named entries), the others' entry, in this
 * order; permissions rwx only; a named entry's id is not (uid_t)-1. No
 * entries at all is no ACL, which the kernel takes too.
 */
static bool lfs_acl_valid(const unsigned char *v, size_t len)
{
	unsigned int state = LFS_ACL_USER_OBJ;
	bool named = false;
	size_t off;

	if (len < 4 || (len - 4) % 8 || lfs_le(v, 4) != 2)
		return false;
	if (len == 4)
		return true;
	for (off = 4; off < len; off += 8) {
		uint32_t tag = lfs_le(v + off, 2), id = lfs_le(v + off + 4, 4);

		if (lfs_le(v + off + 2, 2) & ~7u)
			return false;
		switch (tag) {
		case LFS_ACL_USER_OBJ:
			if (state != LFS_ACL_USER_OBJ)
				return false;
			state = LFS_ACL_USER;
			break;
		case LFS_ACL_GROUP_OBJ:
			if (state != LFS_ACL_USER)
				return false;
			state = LFS_ACL_GROUP;
			break;
		case LFS_ACL_USER:
		case LFS_ACL_GROUP:
			if (state != tag || id == UINT32_MAX)
				return false;
			named = true;
			break;
		case LFS_ACL_MASK:
			if (state != LFS_ACL_GROUP)
				return false;
			state = LFS_ACL_OTHER;
			break;
		case LFS_ACL_OTHER:
			if (state != LFS_ACL_OTHER &&
			    (state != LFS_ACL_GROUP || named))
				return false;
			state = 0;
			break;
		default:
			return false;
		}
	}
	return state == 0;
}

/* what becomes of one xattr of a layer entry (lfs_xattr_rule()) */
enum lfs_xattr_fate {
	LFS_XATTR_SET,
	LFS_XATTR_DROP, /* not written, with a warning */
	LFS_XATTR_REFUSE, /* the layer is refused */
};

static const char *const lfs_xattr_drop_rule[LFS_DROP_NR] = {
	[LFS_DROP_NAMESPACE] =
		"not in a namespace Linux stores: user., trusted., security., system.posix_acl_access, system.posix_acl_default",
	[LFS_DROP_USER_TYPE] =
		"user.* xattrs exist only on regular files and directories",
	[LFS_DROP_ACL_SYMLINK] = "symlinks have no ACLs",
	[LFS_DROP_ACL_DEFAULT] = "only directories have default ACLs",
};

#define LFS_ACL_ACCESS "system.posix_acl_access"
#define LFS_ACL_DEFAULT "system.posix_acl_default"

/*
 * lfs_xattr_rule() - may xattr @a of an entry of type @ft be written?
 * @drop: for LFS_XATTR_DROP, why (enum lfs_xattr_drop)
 * @rule: for LFS_XATTR_REFUSE, the rule
 *
 * Decided before the kernel is asked, as the kernel decides it on every
 * filesystem (fs/xattr.c, fs/posix_acl.c, security/commoncap.c), so that
 * what the image says, not the store's filesystem, makes the outcome.
 * An xattr no Linux file of that type can carry is dropped with a
 * warning, as containerd and umoci drop it (the merged view is then what
 * any Linux runtime shows); one that a file could carry but that is
 * malformed refuses the layer.
 */
static enum lfs_xattr_fate lfs_xattr_rule(const struct lfs_xattr *a,
					  mode_t ft, unsigned int *drop,
					  const char **rule)
{
	static const char *const ns[] = { "user.", "trusted.", "security." };
	size_t n = strlen(a->name), i;

	if (!n) {
		*rule = "xattr with an empty name";
		return LFS_XATTR_REFUSE;
	}
	if (n > XATTR_NAME_MAX) {
		*rule = "name longer than " LFS_STR(XATTR_NAME_MAX) " bytes";
		return LFS_XATTR_REFUSE;
	}
	if (a->len > XATTR_SIZE_MAX) {
		*rule = "value longer than " LFS_STR(XATTR_SIZE_MAX) " bytes";
		return LFS_XATTR_REFUSE;
	}
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		size_t pl = strlen(ns[i]);

		if (strncmp(a->name, ns[i], pl))
			continue;
		if (n == pl) {
			*rule = "the name is only a namespace prefix";
			return LFS_XATTR_REFUSE;
		}
		if (i == 0 && ft != AE_IFREG && ft != AE_IFDIR) {
			*drop = LFS_DROP_USER_TYPE;
			return LFS_XATTR_DROP;
		}
		if (!strcmp(a->name, "security.capability") &&
		    !lfs_fcap_valid(a->val, a->len)) {
			*rule = "not a file capability of revision 2 or 3";
			return LFS_XATTR_REFUSE;
		}
		return LFS_XATTR_SET;
	}
	if (strcmp(a->name, LFS_ACL_ACCESS) && strcmp(a->name, LFS_ACL_DEFAULT)) {
		*drop = LFS_DROP_NAMESPACE;
		return LFS_XATTR_DROP;
	}
	if (ft == AE_IFLNK) {
		*drop = LFS_DROP_ACL_SYMLINK;
		return LFS_XATTR_DROP;
	}
	if (ft != AE_IFDIR && !strcmp(a->name, LFS_ACL_DEFAULT)) {
		*drop = LFS_DROP_ACL_DEFAULT;
		return LFS_XATTR_DROP;
	}
	if (!lfs_acl_valid(a->val, a->len)) {
		*rule = "not a valid POSIX ACL";
		return LFS_XATTR_REFUSE;
	}
	return LFS_XATTR_SET;
}

/*
 * warn of a dropped xattr: the first of each reason in a layer with its
 * entry and name, the others counted (lfs_xattr_drops_report())
 */
static void lfs_xattr_dropped(struct lfs_xstate *x, const char *raw,
			      const char *name, unsigned int why)
{
	if (x->drops[why]++)
		return;
	lfs_warn("layer %s: entry \"%s\": xattr %s dropped (%s)",
		 x->o->layer_name, lfs_esc(raw), lfs_esc(name),
		 lfs_xattr_drop_rule[why]);
}

/* at the end of a layer: how many more xattrs were dropped, and why */
static void lfs_xattr_drops_report(struct lfs_xstate *x)
{
	unsigned int i;

	for (i = 0; i < LFS_DROP_NR; i++)
		if (x->drops[i] > 1)
			lfs_warn("layer %s: %llu more xattr%s dropped (%s)",
				 x->o->layer_name,
				 (unsigned long long)x->drops[i] - 1,
				 x->drops[i] > 2 ? "s" : "",
				 lfs_xattr_drop_rule[i]);
}

/*
 * An entry's xattrs, through @fd or by name in @pfd; @ft is the entry's
 * type. libarchive lists a record of each of SCHILY.xattr.NAME and
 * LIBARCHIVE.xattr.NAME (bsdtar writes both); an empty value deletes its
 * pax keyword, so it is not an xattr; a name whose records disagree is
 * refused; then lfs_xattr_rule() decides. EINVAL from the kernel after
 * that is its verdict on a value (an LSM's label, say): a refusal too.
 */
static int lfs_apply_xattrs(struct lfs_xstate *x, struct archive_entry *ae,
			    const char *raw, int pfd, const char *base, int fd,
			    mode_t ft)
{
	struct lfs_xattr *v;
	const char *rule;
	unsigned int why;
	size_t n, i, j;
	int err = 0;

	n = archive_entry_xattr_reset(ae);
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n && archive_entry_xattr_next(ae, &v[i].name, &v[i].val,
						      &v[i].len) == ARCHIVE_OK;
	     i++)
		;
	n = i;
	qsort(v, n, sizeof(*v), lfs_xattr_cmp);
	for (i = 0; i < n && !err; i = j) {
		for (j = i + 1; j < n && !strcmp(v[j].name, v[i].name); j++)
			if (lfs_xattr_cmp(&v[i], &v[j]))
				break;
		if (j < n && !strcmp(v[j].name, v[i].name)) {
			err = lfs_refuse(
				x->o->layer_name, raw,
				"xattr %s given twice, with different values",
				lfs_esc(v[i].name));
			break;
		}
		if (!v[i].len)
			continue;
		if (lfs_xattr_is_overlay(v[i].name)) {
			lfs_warn(
				"layer %s: entry \"%s\": xattr %s dropped (overlay markers are never taken from a layer)",
				x->o->layer_name, lfs_esc(raw),
				lfs_esc(v[i].name));
			continue;
		}
		switch (lfs_xattr_rule(&v[i], ft, &why, &rule)) {
		case LFS_XATTR_DROP:
			lfs_xattr_dropped(x, raw, v[i].name, why);
			continue;
		case LFS_XATTR_REFUSE:
			if (*v[i].name)
				err = lfs_refuse(x->o->layer_name, raw,
						 "xattr %s: %s",
						 lfs_esc(v[i].name), rule);
			else
				err = lfs_refuse(x->o->layer_name, raw, "%s",
						 rule);
			continue;
		case LFS_XATTR_SET:
			break;
		}
		if (fd >= 0)
			err = fsetxattr(fd, v[i].name, v[i].val, v[i].len, 0) ?
				      -errno :
				      0;
		else
			err = lfs_setxattr_at(pfd, base, v[i].name, v[i].val,
					      v[i].len);
		if (err == -EINVAL)
			err = lfs_refuse(x->o->layer_name, raw,
					 "xattr %s: the kernel refuses its value (%s)",
					 lfs_esc(v[i].name), strerror(EINVAL));
		else if (err)
			err = lfs_xattr_err(x, raw, v[i].name, err);
	}
	free(v);
	return err;
}

/*
 * Owner, mode, xattrs and (for non-directories) times of a new object:
 * through @fd when there is one, else by name in @pfd without following.
 * Owner first, since chown() clears set-uid bits and capabilities.
 */
static int lfs_apply_meta(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, int pfd, const char *base, int fd,
			  struct lfs_pnode *node)
{
	mode_t ft = archive_entry_filetype(ae);
	struct timespec ts[2];
	int err;

	if (fd >= 0 ? fchown(fd, archive_entry_uid(ae), archive_entry_gid(ae)) :
		      fchownat(pfd, base, archive_entry_uid(ae),
			       archive_entry_gid(ae), AT_SYMLINK_NOFOLLOW))
		return lfs_entry_err(x, raw, "chown", -errno);
	if (ft != AE_IFLNK &&
	    (fd >= 0 ? fchmod(fd, archive_entry_perm(ae)) :
		       fchmodat(pfd, base, archive_entry_perm(ae), 0)))
		return lfs_entry_err(x, raw, "chmod", -errno);

	err = lfs_apply_xattrs(x, ae, raw, pfd, base, fd, ft);
	if (err)
		return err;

	ts[1].tv_sec = archive_entry_mtime(ae);
	ts[1].tv_nsec = archive_entry_mtime_nsec(ae);
	ts[0] = ts[1];
	if (archive_entry_atime_is_set(ae)) {
		ts[0].tv_sec = archive_entry_atime(ae);
		ts[0].tv_nsec = archive_entry_atime_nsec(ae);
	}
	if (ft == AE_IFDIR)
		return lfs_defer_dir_time(x, node, ts);
	if (fd >= 0 ? futimens(fd, ts) :
		      utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW))
		return lfs_entry_err(x, raw, "set times", -errno);
	return 0;
}

/*
 * Record in o->sums what the regular file in @fd holds: the SHA-256 of
 * its data, if @hashed (the data was hashed in order, from offset 0,
 * @len bytes in all) and that is the whole file, else that it is not
 * known (the manifest's walk then reads it). Every regular file a layer
 * writes is recorded, so a record of an inode number used before is
 * replaced.
 */
static int lfs_record_sum(struct lfs_xstate *x, const char *raw, int fd,
			  bool hashed, uint64_t len)
{
	unsigned char md[32];
	struct stat st;

	if (fstat(fd, &st))
		return lfs_entry_err(x, raw, "stat", -errno);
	hashed = hashed && (uint64_t)st.st_size == len;
	if (hashed)
		lfs_sha256_final_raw(x->fsum, md);
	if (lfs_filesums_set(x->o->sums, st.st_dev, st.st_ino, st.st_size,
			     hashed ? md : NULL))
		return -ENOMEM;
	return 0;
}

/*
 * copy a regular file's data into @fd, sparse holes included, hashing it
 * in x->fsum as it goes (while it comes in order, without holes): @hashed
 * says whether it did, @len how many bytes
 */
static int lfs_copy_data(struct lfs_xstate *x, struct archive_entry *ae,
			 const char *raw, int fd, bool *hashed, uint64_t *len)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	*hashed = (x->o->sums || x->o->objects) && !lfs_sha256_reset(x->fsum);
	*len = 0;
	for (;;) {
		r = archive_read_data_block(x->inner, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return lfs_stream_error(x, raw);
		if (*hashed && off >= 0 && (uint64_t)off == *len &&
		    !lfs_sha256_update(x->fsum, buf, size))
			*len += size;
		else
			*hashed = false;
		while (size) {
			ssize_t w = pwrite(fd, buf, size, off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return lfs_entry_err(x, raw, "write", -errno);
			buf = (const char *)buf + w;
			size -= w;
			off += w;
		}
	}
	if (archive_entry_size_is_set(ae) &&
	    ftruncate(fd, archive_entry_size(ae)))
		return lfs_entry_err(x, raw, "truncate", -errno);
	return 0;
}

/* a regular file's data into the layer's file @fd, its digest recorded */
static int lfs_write_data(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, int fd)
{
	uint64_t len;
	bool hashed;
	int err;

	err = lfs_copy_data(x, ae, raw, fd, &hashed, &len);
	if (err)
		return err;
	return x->o->sums ? lfs_record_sum(x, raw, fd, hashed, len) : 0;
}

/*
 * lfs_write_object() - a regular file's data into an object (objects.c)
 * @fd: the layer's file, left a sparse file of the data's size
 * @ref: gets the object and the metacopy value; ref->hex "" for a file
 *	 without data, which stays an ordinary empty file
 *
 * The markers are set by the caller once the entry's own metadata is.
 */
static int lfs_write_object(struct lfs_xstate *x, struct archive_entry *ae,
			    const char *raw, int fd, struct lfs_objref *ref)
{
	unsigned char md[32];
	struct stat st;
	uint64_t len;
	bool hashed;
	char name[32];
	int ofd, err;

	ref->hex[0] = '\0';
	ofd = lfs_objects_create(x->o->objects, name, sizeof(name));
	if (ofd < 0)
		return lfs_entry_err(x, raw, "create its object", ofd);
	err = lfs_copy_data(x, ae, raw, ofd, &hashed, &len);
	if (!err && fstat(ofd, &st))
		err = lfs_entry_err(x, raw, "stat its object", -errno);
	if (err || !st.st_size) {
		close(ofd);
		lfs_objects_discard(x->o->objects, name);
		if (err || !x->o->sums)
			return err;
		return lfs_record_sum(x, raw, fd, hashed, len);
	}
	hashed = hashed && (uint64_t)st.st_size == len;
	if (hashed)
		lfs_sha256_final_raw(x->fsum, md);
	err = lfs_objects_add(x->o->objects, ofd, name, hashed ? md : NULL,
			      st.st_size, ref);
	if (err)
		return lfs_entry_err(x, raw, "store its object", err);
	if (ftruncate(fd, st.st_size))
		return lfs_entry_err(x, raw, "truncate", -errno);
	if (!x->o->sums)
		return 0;
	/* the layer's file stands for the object's content */
	for (len = 0; len < 32; len++)
		sscanf(ref->hex + 2 * len, "%2hhx", &md[len]);
	if (fstat(fd, &st))
		return lfs_entry_err(x, raw, "stat", -errno);
	return lfs_filesums_set(x->o->sums, st.st_dev, st.st_ino, st.st_size,
				md) ?
		       -ENOMEM :
		       0;
}

/*
 * aufs's own files at a branch root: its pseudo-links (hard links that
 * span branches), its whiteout base and its orphans. docker's aufs driver
 * leaves them out of the layers it writes; layers of early docker
 * versions carry them.
 */
#define LFS_AUFS_PLNK LFS_AUFS_META_PREFIX "plnk"
static const char *const lfs_aufs_meta[] = {
	LFS_AUFS_PLNK,
	LFS_AUFS_META_PREFIX "aufs",
	LFS_AUFS_META_PREFIX "orph",
};
#define LFS_AUFS_RULE \
	"aufs's own .wh..wh.plnk, .wh..wh.aufs, .wh..wh.orph at the layer root"

/* is normalised @path one of aufs's metadata names, or below one? */
static bool lfs_is_aufs_meta(const char *path)
{
	size_t n = strcspn(path, "/"), i;

	for (i = 0; i < sizeof(lfs_aufs_meta) / sizeof(lfs_aufs_meta[0]); i++)
		if (strlen(lfs_aufs_meta[i]) == n &&
		    !memcmp(path, lfs_aufs_meta[i], n))
			return true;
	return false;
}

/* the pseudo-link @path (".wh..wh.plnk/NAME") kept aside, or NULL */
static struct lfs_pnode *lfs_plnk_get(struct lfs_xstate *x, const char *path)
{
	const size_t dl = sizeof(LFS_AUFS_PLNK) - 1;
	struct lfs_pnode *d;

	if (strncmp(path, LFS_AUFS_PLNK "/", dl + 1) || strchr(path + dl + 1, '/'))
		return NULL;
	d = lfs_pathset_get(x->set, lfs_pathset_root(x->set), path, dl);
	return d ? lfs_pathset_get(x->set, d, path + dl + 1,
				   strlen(path + dl + 1)) :
		   NULL;
}

static int lfs_make_hardlink(struct lfs_xstate *x, const char *raw,
			     const char *link, struct lfs_pnode *node, int pfd)
{
	const char *rule, *tbase;
	struct lfs_pnode *t = NULL;
	struct lfs_walk tw;
	char *target;
	int tpfd, err;

	err = lfs_path_normalize(link, &x->o->lim, &target, &rule);
	if (err == -LFS_EREFUSED)
		return lfs_refuse(x->o->layer_name, raw, "hard link: %s", rule);
	if (err)
		return err;
	if (lfs_is_aufs_meta(target)) {
		/* an aufs pseudo-link: a file kept aside (lfs_aufs_entry()) */
		t = lfs_plnk_get(x, target);
		tw.node = t ? t->parent : NULL;
	} else {
		/* the target's parents resolve as an entry's do, making nothing */
		err = *target ?
			      lfs_resolve(x, target, raw, LFS_RES_LOOKUP, &tw) :
			      -ENOENT;
		if (!err) {
			tbase = strrchr(target, '/');
			tbase = tbase ? tbase + 1 : target;
			t = lfs_pathset_get(x->set, tw.node, tbase,
					    strlen(tbase));
		}
	}
	if ((!err || err == 1 || err == -ENOENT) &&
	    (!t || (t->kind != LFS_NODE_FILE && t->kind != LFS_NODE_SYMLINK)))
		err = lfs_refuse(
			x->o->layer_name, raw,
			"hard link target is not an earlier entry of this layer");
	free(target);
	if (err)
		return err;
	tpfd = lfs_node_open(x, tw.node);
	if (tpfd < 0)
		return lfs_entry_err(x, raw, "open link target", tpfd);
	err = linkat(tpfd, t->name, pfd, node->name, 0) ? -errno : 0;
	close(tpfd);
	if (err)
		return lfs_entry_err(x, raw, "link", err);
	lfs_pathset_mark(x->set, node, t->kind);
	if (t->kind == LFS_NODE_SYMLINK) {
		free(node->link);
		node->link = strdup(t->link);
		if (!node->link)
			return -ENOMEM;
	}
	return 0;
}

static int lfs_make_node(struct lfs_xstate *x, struct archive_entry *ae,
			 const char *raw, int pfd, struct lfs_pnode *node)
{
	const char *base = node->name;
	mode_t ft = archive_entry_filetype(ae);
	enum lfs_node_kind kind = LFS_NODE_FILE;
	struct lfs_objref ref = { .hex = "" };
	int fd = -1, err;

	switch (ft) {
	case AE_IFREG:
		if (archive_entry_size(ae) < 0 ||
		    (uint64_t)archive_entry_size(ae) > x->o->lim.max_bytes)
			return lfs_refuse(
				x->o->layer_name, raw,
				"declared size %lld exceeds the expansion limit %llu (--max-bytes)",
				(long long)archive_entry_size(ae),
				(unsigned long long)x->o->lim.max_bytes);
		fd = lfs_openat2(pfd, base,
				 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
				 0600);
		if (fd < 0)
			return lfs_entry_err(x, raw, "create", fd);
		err = x->o->objects ? lfs_write_object(x, ae, raw, fd, &ref) :
				      lfs_write_data(x, ae, raw, fd);
		if (err)
			goto out;
		break;
	case AE_IFDIR:
		kind = LFS_NODE_DIR;
		if (mkdirat(pfd, base, 0700))
			return lfs_entry_err(x, raw, "mkdir", -errno);
		fd = lfs_openat2(pfd, base, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return lfs_entry_err(x, raw, "open", fd);
		break;
	case AE_IFLNK: {
		const char *t = archive_entry_symlink(ae);

		kind = LFS_NODE_SYMLINK;
		if (!t || !*t)
			return lfs_refuse(x->o->layer_name, raw,
					  "symlink without a target");
		if (strlen(t) >= PATH_MAX)
			return lfs_refuse(x->o->layer_name, raw,
					  "symlink target too long");
		if (symlinkat(t, pfd, base))
			return lfs_entry_err(x, raw, "symlink", -errno);
		break;
	}
	case AE_IFCHR:
		/* overlay reads a 0/0 char device as a whiteout marker */
		if (!archive_entry_rdevmajor(ae) && !archive_entry_rdevminor(ae))
			return lfs_refuse(
				x->o->layer_name, raw,
				"0/0 character device is an overlay whiteout marker");
		/* fall through */
	case AE_IFBLK:
	case AE_IFIFO:
		/* the numbers are in range (lfs_check_entry()); a fifo has none */
		if (mknodat(pfd, base, ft | 0600,
			    ft == AE_IFIFO ?
				    0 :
				    makedev(archive_entry_rdevmajor(ae),
					    archive_entry_rdevminor(ae))))
			return lfs_entry_err(x, raw, "mknod", -errno);
		break;
	case AE_IFSOCK:
		lfs_warn("layer %s: entry \"%s\": socket skipped",
			 x->o->layer_name, lfs_esc(raw));
		return 0;
	default:
		return lfs_refuse(x->o->layer_name, raw,
				  "unknown entry type 0%o", (unsigned int)ft);
	}
	lfs_pathset_mark(x->set, node, kind);
	err = 0;
	if (kind == LFS_NODE_SYMLINK) {
		free(node->link);
		node->link = strdup(archive_entry_symlink(ae));
		if (!node->link)
			err = -ENOMEM;
	}
	if (!err)
		err = lfs_apply_meta(x, ae, raw, pfd, base, fd, node);
	/* after the image's xattrs: these come from oci2ovl, never a tar */
	if (!err && *ref.hex) {
		err = lfs_objects_mark(fd, &ref);
		if (err)
			err = lfs_entry_err(x, raw, "point at its object", err);
	}
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * lfs_aufs_entry() - an entry of aufs's metadata (@path, normalised):
 * skipped, with a warning for the first of a layer (the others are
 * counted), as docker skips them. A regular file right in .wh..wh.plnk
 * is kept aside for hard links to name it, as docker keeps it: made in
 * a directory of that name in the layer, which lfs_aufs_end() removes;
 * what links to it stays.
 */
static int lfs_aufs_entry(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, const char *path)
{
	const size_t dl = sizeof(LFS_AUFS_PLNK) - 1;
	struct lfs_pnode *d, *c;
	const char *name;
	int pfd, err;

	if (!x->aufs_skipped++)
		lfs_warn("layer %s: entry \"%s\": skipped (%s)",
			 x->o->layer_name, lfs_esc(raw), LFS_AUFS_RULE);
	if (strncmp(path, LFS_AUFS_PLNK "/", dl + 1) ||
	    strchr(path + dl + 1, '/') || archive_entry_hardlink(ae) ||
	    archive_entry_filetype(ae) != AE_IFREG)
		return 0;
	name = path + dl + 1;
	d = lfs_pathset_add(x->set, lfs_pathset_root(x->set), path, dl);
	if (!d)
		return -ENOMEM;
	if (d->kind == LFS_NODE_NONE) {
		if (mkdirat(x->rootfd, LFS_AUFS_PLNK, 0700))
			return lfs_entry_err(x, raw, "mkdir", -errno);
		d->below = LFS_BELOW_ABSENT;
		lfs_pathset_mark(x->set, d, LFS_NODE_IMPLICIT_DIR);
	}
	c = lfs_pathset_add(x->set, d, name, strlen(name));
	if (!c)
		return -ENOMEM;
	if (c->kind != LFS_NODE_NONE)
		return lfs_refuse(x->o->layer_name, raw, "duplicate entry");
	pfd = lfs_node_open(x, d);
	if (pfd < 0)
		return lfs_entry_err(x, raw, "open", pfd);
	err = lfs_make_node(x, ae, raw, pfd, c);
	close(pfd);
	return err;
}

/* at the end of a layer: the pseudo-links kept aside go, and a count */
static int lfs_aufs_end(struct lfs_xstate *x)
{
	struct lfs_pnode *d;

	if (x->aufs_skipped > 1)
		lfs_warn("layer %s: %llu more %s skipped (%s)",
			 x->o->layer_name,
			 (unsigned long long)x->aufs_skipped - 1,
			 x->aufs_skipped > 2 ? "entries" : "entry",
			 LFS_AUFS_RULE);
	d = lfs_pathset_get(x->set, lfs_pathset_root(x->set), LFS_AUFS_PLNK,
			    sizeof(LFS_AUFS_PLNK) - 1);
	if (!d || d->kind == LFS_NODE_NONE)
		return 0;
	if (x->pc_node) {
		close(x->pc_fd);
		x->pc_node = NULL;
	}
	return lfs_rm_tree_at(x->rootfd, LFS_AUFS_PLNK);
}

/* remove the xattrs an implicit directory copied from below */
static int lfs_drop_copied_xattrs(int fd)
{
	char *names, *name;
	ssize_t n;
	int err = 0;

	n = flistxattr(fd, NULL, 0);
	if (n <= 0)
		return n < 0 && errno != ENOTSUP ? -errno : 0;
	names = malloc(n);
	if (!names)
		return -ENOMEM;
	n = flistxattr(fd, names, n);
	if (n < 0)
		err = -errno;
	for (name = names; !err && name < names + n; name += strlen(name) + 1)
		if (!lfs_xattr_is_overlay(name) && fremovexattr(fd, name) &&
		    errno != ENODATA)
			err = -errno;
	free(names);
	return err;
}

/*
 * A directory entry for a directory this layer made implicitly: whenever
 * it comes, its mode, owner, xattrs (replacing any copied from below) and
 * times are the entry's. An opaque marker stays.
 */
static int lfs_update_dir(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, struct lfs_pnode *node, int pfd)
{
	int fd, err = 0;

	if (!node->parent) {
		fd = x->rootfd;
	} else {
		fd = lfs_openat2(pfd, node->name, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return lfs_entry_err(x, raw, "open", fd);
	}
	if (node->flags & LFS_PN_COPIED) {
		err = lfs_drop_copied_xattrs(fd);
		if (err)
			err = lfs_entry_err(x, raw, "remove xattrs", err);
	}
	if (!err)
		err = lfs_apply_meta(x, ae, raw, -1, NULL, fd, node);
	if (!err)
		lfs_pathset_mark(x->set, node, LFS_NODE_DIR);
	if (fd != x->rootfd)
		close(fd);
	return err;
}

/*
 * A ".wh.NAME" entry (@wh LFS_WH_KIND_FILE), or a ".wh..wh..opq" one
 * (LFS_WH_KIND_OPAQUE); @path is the entry's normalised path. Its
 * directory is resolved as an entry's parent is (lfs_resolve()).
 */
static int lfs_do_whiteout(struct lfs_xstate *x, const char *raw,
			   const char *path, int wh)
{
	const char *name = strrchr(path, '/');
	struct lfs_pnode *c;
	struct lfs_walk w;
	int err;

	err = lfs_resolve(x, path, raw, LFS_RES_CREATE, &w);
	/*
	 * Under a non-directory a whiteout has nothing left to hide (umoci
	 * writes such whiteouts for the children of a directory it replaced
	 * by a file): ignore it.
	 */
	if (err == 1)
		return 0;
	if (err)
		return err;
	if (wh == LFS_WH_KIND_OPAQUE) {
		c = w.node;
		err = c->parent ? lfs_make_opaque(w.fd, ".", x->o->fmt) :
				  lfs_make_opaque(x->rootfd, "", x->o->fmt);
		c->flags |= LFS_PN_OPAQUE;
		goto out;
	}
	name = (name ? name + 1 : path) + strlen(LFS_AUFS_WHITEOUT_PREFIX);
	c = lfs_pathset_add(x->set, w.node, name, strlen(name));
	if (!c) {
		err = -ENOMEM;
		goto out;
	}
	switch (c->kind) {
	case LFS_NODE_WHITEOUT:
		err = lfs_refuse(x->o->layer_name, raw, "duplicate entry");
		break;
	case LFS_NODE_FILE:
	case LFS_NODE_SYMLINK:
		/* same-layer entries are not hidden */
		break;
	case LFS_NODE_DIR:
	case LFS_NODE_IMPLICIT_DIR:
		/* a directory of this layer was re-created */
		err = lfs_make_opaque(w.fd, c->name, x->o->fmt);
		c->flags |= LFS_PN_OPAQUE;
		break;
	default:
		err = lfs_make_whiteout(w.fd, c->name, x->o->fmt);
		if (!err)
			lfs_pathset_mark(x->set, c, LFS_NODE_WHITEOUT);
		break;
	}
out:
	close(w.fd);
	return err < 0 && err != -LFS_EREFUSED ?
		       lfs_entry_err(x, raw, "whiteout", err) :
		       err;
}

/* refuse a second entry for @c, naming where symlinks led @path */
static int lfs_refuse_duplicate(struct lfs_xstate *x, const char *raw,
				const char *path, const struct lfs_pnode *c)
{
	char p[PATH_MAX], e[512];

	if (lfs_pnode_path(c, p, sizeof(p)) || !strcmp(p, path))
		return lfs_refuse(x->o->layer_name, raw, "duplicate entry");
	return lfs_refuse(x->o->layer_name, raw,
			  "duplicate entry (through symlinks: \"%s\")",
			  lfs_escape_name(p, e, sizeof(e)));
}

/* refuse an entry whose parent is @b, a non-directory */
static int lfs_refuse_blocked(struct lfs_xstate *x, const char *raw,
			      const struct lfs_pnode *b)
{
	return lfs_refuse_node(x, raw, b, "parent is not a directory:");
}

static int lfs_extract_entry(struct lfs_xstate *x, struct archive_entry *ae)
{
	const char *raw = archive_entry_pathname(ae), *rule, *base, *link;
	char *path = NULL, *target = NULL;
	bool isdir = archive_entry_filetype(ae) == AE_IFDIR;
	struct lfs_pnode *c;
	struct lfs_walk w;
	int kind, wh, err;

	if (!raw)
		return lfs_refuse(x->o->layer_name, "", "entry without a name");
	err = lfs_path_normalize(raw, &x->o->lim, &path, &rule);
	if (err == -LFS_EREFUSED)
		return lfs_refuse(x->o->layer_name, raw, "%s", rule);
	if (err)
		return err;
	if (lfs_is_aufs_meta(path)) {
		err = lfs_aufs_entry(x, ae, raw, path);
		goto out;
	}
	wh = lfs_whiteout_classify(path, &target, &rule);
	if (wh == -LFS_EREFUSED) {
		err = lfs_refuse(x->o->layer_name, raw, "%s", rule);
		goto out;
	}
	if (wh < 0) {
		err = wh;
		goto out;
	}
	if (wh != LFS_WH_KIND_NONE) {
		err = lfs_do_whiteout(x, raw, path, wh);
		goto out;
	}

	link = archive_entry_hardlink(ae);
	if (link)
		isdir = false;
	if (!*path) {
		c = lfs_pathset_root(x->set);
		if (!isdir)
			err = lfs_refuse(x->o->layer_name, raw,
					 "layer root is not a directory");
		else if (c->kind == LFS_NODE_DIR)
			err = lfs_refuse(x->o->layer_name, raw,
					 "duplicate entry");
		else
			err = lfs_update_dir(x, ae, raw, c, -1);
		goto out;
	}

	err = lfs_resolve(x, path, raw, LFS_RES_CREATE, &w);
	if (err == 1)
		err = lfs_refuse_blocked(x, raw, w.blocker);
	if (err)
		goto out;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	c = lfs_pathset_add(x->set, w.node, base, strlen(base));
	kind = c ? c->kind : LFS_NODE_NONE;
	if (!c)
		err = -ENOMEM;
	else if (c->plen >= PATH_MAX || c->plen > x->o->lim.max_path)
		err = lfs_refuse(x->o->layer_name, raw,
				 "path too long through symlink");
	else if (kind == LFS_NODE_IMPLICIT_DIR && isdir)
		err = lfs_update_dir(x, ae, raw, c, w.fd);
	else if (kind != LFS_NODE_NONE && kind != LFS_NODE_WHITEOUT)
		err = lfs_refuse_duplicate(x, raw, path, c);
	/* an entry replaces this layer's whiteout of the same name */
	else if (kind == LFS_NODE_WHITEOUT && unlinkat(w.fd, base, 0))
		err = lfs_entry_err(x, raw, "unlink whiteout", -errno);
	else if (link)
		err = lfs_make_hardlink(x, raw, link, c, w.fd);
	else
		err = lfs_make_node(x, ae, raw, w.fd, c);
	if (!err && kind == LFS_NODE_WHITEOUT && isdir) {
		err = lfs_make_opaque(w.fd, base, x->o->fmt);
		c->flags |= LFS_PN_OPAQUE;
	}
	close(w.fd);
out:
	free(path);
	free(target);
	return err;
}

/*
 * The layer root, before any entry: LFS_IMPLICIT_MODE, root:root and
 * LFS_IMPLICIT_TIME unless a "./" entry says otherwise. (Unlike other
 * implicit directories it takes nothing from below: so a layer without
 * implicit parents is the same on any base, and containerd also ignores
 * the root entry.)
 */
static int lfs_layer_root(struct lfs_xstate *x)
{
	static const struct timespec ts[2] = { { LFS_IMPLICIT_TIME, 0 },
					       { LFS_IMPLICIT_TIME, 0 } };
	struct lfs_pnode *root = lfs_pathset_root(x->set);

	if (fchown(x->rootfd, 0, 0) || fchmod(x->rootfd, LFS_IMPLICIT_MODE))
		return -errno;
	lfs_pathset_mark(x->set, root, LFS_NODE_IMPLICIT_DIR);
	return lfs_below_root(x, root) ?: lfs_defer_dir_time(x, root, ts);
}

static int lfs_open_readers(struct lfs_xstate *x)
{
	struct archive_entry *ae;
	int code, want, r;

	x->inner = archive_read_new();
	if (!x->inner)
		return -ENOMEM;
	if (x->o->comp == LFS_COMP_GZIP) {
		x->gz = lfs_gzip_new();
		if (!x->gz)
			return -ENOMEM;
		goto inner;
	}
	x->outer = archive_read_new();
	if (!x->outer)
		return -ENOMEM;
	r = ARCHIVE_OK;
	want = ARCHIVE_FILTER_NONE;
	if (x->o->comp == LFS_COMP_ZSTD) {
		r = archive_read_support_filter_zstd(x->outer);
		want = ARCHIVE_FILTER_ZSTD;
	}
	if (r != ARCHIVE_OK) {
		lfs_err("layer %s: libarchive lacks built-in support for this compression",
			x->o->layer_name);
		return -ENOTSUP;
	}
	archive_read_support_format_raw(x->outer);
	/* a stream of no data at all is the empty tar stream */
	archive_read_support_format_empty(x->outer);
	r = ARCHIVE_FATAL;
	if (!archive_read_open(x->outer, x, NULL, lfs_blob_read, NULL))
		r = archive_read_next_header(x->outer, &ae);
	x->outer_empty = r == ARCHIVE_EOF;
	if (r != ARCHIVE_OK && r != ARCHIVE_EOF)
		return lfs_refuse(x->o->layer_name, NULL,
				  "bad compressed stream: %s",
				  lfs_esc(archive_error_string(x->outer) ?:
						  "read error"));
	code = archive_filter_code(x->outer, 0);
	if (code != want)
		return lfs_refuse(x->o->layer_name, NULL,
				  "blob is %s, not what its media type says",
				  archive_filter_name(x->outer, 0));
inner:
	/* decompression runs ahead, on its own thread */
	x->ahead = lfs_ahead_new(LFS_AHEAD_BUFS, LFS_AHEAD_SIZE, lfs_decompress,
				 x, true);
	if (!x->ahead)
		return -ENOMEM;
	archive_read_support_format_tar(x->inner);
	archive_read_support_format_empty(x->inner);
	if (archive_read_open(x->inner, x, NULL, lfs_tar_read, NULL))
		return lfs_stream_error(x, NULL);
	return 0;
}

/*
 * read what the tar reader left (end blocks, padding) for the diff_id,
 * and stop the decompressor's thread
 */
static int lfs_drain(struct lfs_xstate *x)
{
	const void *buf;
	ssize_t r;

	while ((r = lfs_next_data(x, &buf)) > 0)
		;
	if (r < 0)
		return lfs_stream_error(x, NULL);
	lfs_ahead_free(x->ahead);
	x->ahead = NULL;
	return 0;
}

/* the name of a type that has no data, for messages */
static const char *lfs_header_only_name(char type, struct archive_entry *ae)
{
	switch (type) {
	case '2':
		return "symlink";
	case '3':
		return "character device";
	case '4':
		return "block device";
	case '5':
		return "directory";
	case '6':
		return "fifo";
	}
	return archive_entry_filetype(ae) == AE_IFDIR ? "directory" :
							"hard link";
}

/* add @n to a total of the layer and of the image; refuse past @max */
static int lfs_add_usage(struct lfs_xstate *x, const char *raw, uint64_t *used,
			 uint64_t image, uint64_t n, uint64_t max,
			 const char *what, const char *opt)
{
	*used += n;
	if (*used > max)
		return lfs_refuse(x->o->layer_name, raw,
				  "more than %llu %s (%s)",
				  (unsigned long long)max, what, opt);
	if (image + *used > max)
		return lfs_refuse(x->o->layer_name, raw,
				  "more than %llu %s in the image (%s)",
				  (unsigned long long)max, what, opt);
	return 0;
}

/* an owner id chown() takes as one: (uid_t)-1 means "unchanged" */
#define LFS_MAX_ID ((la_int64_t)UINT32_MAX - 1)
/*
 * Device numbers mknod(2) takes: it passes them to the kernel in 32 bits,
 * 12 of major and 20 of minor (new_encode_dev(); glibc refuses larger
 * ones, and makedev() and libarchive cut them to 32 bits each)
 */
#define LFS_MAX_MAJOR 0xfffu
#define LFS_MAX_MINOR 0xfffffu

/*
 * lfs_check_entry() - an entry's header, before the entry touches the disk:
 * its place in the tar structure, its owner, and what it adds to the
 * totals of the layer and the image
 */
static int lfs_check_entry(struct lfs_xstate *x, struct archive_entry *ae)
{
	const struct lfs_extract_opts *o = x->o;
	const struct lfs_usage *img = o->image;
	const char *raw = archive_entry_pathname(ae) ?: "", *rule, *name;
	la_int64_t uid = archive_entry_uid(ae), gid = archive_entry_gid(ae);
	mode_t ft = archive_entry_filetype(ae);
	uint64_t names, xattrs = 0;
	struct lfs_tar_frame f;
	const void *val;
	size_t len;
	int err;

	if (lfs_tarframe_entry(x->frame, archive_read_header_position(x->inner),
			       &f, &rule))
		return lfs_refuse(o->layer_name, raw, "%s", rule);
	if (f.size && (archive_entry_hardlink(ae) || ft != AE_IFREG))
		return lfs_refuse(
			o->layer_name, raw,
			"%s entry declares %llu bytes of data, and its type has none",
			lfs_header_only_name(f.type, ae),
			(unsigned long long)f.size);
	if ((ft == AE_IFCHR || ft == AE_IFBLK) && !archive_entry_hardlink(ae) &&
	    (archive_entry_rdevmajor(ae) > LFS_MAX_MAJOR ||
	     archive_entry_rdevminor(ae) > LFS_MAX_MINOR))
		return lfs_refuse(
			o->layer_name, raw,
			"device number %llu:%llu is out of range (major 0 to %u, minor 0 to %u)",
			(unsigned long long)archive_entry_rdevmajor(ae),
			(unsigned long long)archive_entry_rdevminor(ae),
			LFS_MAX_MAJOR, LFS_MAX_MINOR);
	if (uid < 0 || uid > LFS_MAX_ID || gid < 0 || gid > LFS_MAX_ID)
		return lfs_refuse(
			o->layer_name, raw,
			"%s %lld is out of range (0 to %lld)",
			uid < 0 || uid > LFS_MAX_ID ? "uid" : "gid",
			(long long)(uid < 0 || uid > LFS_MAX_ID ? uid : gid),
			(long long)LFS_MAX_ID);

	names = strlen(raw) + strlen(archive_entry_symlink(ae) ?: "") +
		strlen(archive_entry_hardlink(ae) ?: "");
	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &name, &val, &len) == ARCHIVE_OK)
		xattrs += strlen(name) + len;
	err = lfs_add_usage(x, raw, &x->used.entries, img ? img->entries : 0, 1,
			    o->lim.max_entries, "entries", "--max-entries");
	if (!err)
		err = lfs_add_usage(x, raw, &x->used.names,
				    img ? img->names : 0, names,
				    o->lim.max_names, "bytes of entry names",
				    "--max-names");
	if (!err)
		err = lfs_add_usage(x, raw, &x->used.xattrs,
				    img ? img->xattrs : 0, xattrs,
				    o->lim.max_xattrs, "bytes of xattrs",
				    "--max-xattrs");
	return err;
}

/**
 * lfs_extract_layer() - unpack one layer blob into an empty directory
 * @blobfd: the blob, already verified against its descriptor
 * @rootfd: the empty layer directory
 * @o: limits, whiteout format, names for messages, the expected diff_id
 *
 * Return: 0, -LFS_EREFUSED (message printed), or -errno. On failure the
 * directory holds a partial layer, which the caller removes.
 */
int lfs_extract_layer(int blobfd, int rootfd, const struct lfs_extract_opts *o)
{
	char got[LFS_DIGEST_LEN + 1];
	struct archive_entry *ae;
	struct lfs_xstate *x;
	const char *rule;
	struct stat stb;
	int r, err;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->o = o;
	x->rootfd = rootfd;
	x->blobfd = blobfd;
	err = -ENOMEM;
	x->diff = lfs_sha256_new();
	x->fsum = o->sums ? lfs_sha256_new() : NULL;
	x->set = lfs_pathset_new();
	x->frame = lfs_tarframe_new();
	x->lc_fd = calloc(o->nlower + 1, sizeof(*x->lc_fd));
	if (!x->diff || (o->sums && !x->fsum) || !x->set || !x->frame ||
	    !x->lc_fd)
		goto out;
	err = lfs_layer_root(x);
	if (err)
		goto out;
	if (fstat(blobfd, &stb)) {
		err = -errno;
		goto out;
	}
	/* a zero-length blob is the empty tar stream, whatever its type */
	if (S_ISREG(stb.st_mode) && !stb.st_size)
		goto end_of_stream;
	err = lfs_open_readers(x);
	if (err)
		goto out;

	for (;;) {
		r = archive_read_next_header(x->inner, &ae);
		if (r == ARCHIVE_EOF)
			break;
		/* ARCHIVE_RETRY: a damaged header, which libarchive would skip */
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			err = lfs_stream_error(x, NULL);
			goto out;
		}
		if (r == ARCHIVE_WARN)
			lfs_warn("layer %s: %s", o->layer_name,
				 lfs_esc(archive_error_string(x->inner)));
		err = lfs_check_entry(x, ae);
		if (!err)
			err = lfs_extract_entry(x, ae);
		if (!err && lfs_pathset_count(x->set) > o->lim.max_entries)
			err = lfs_refuse_paths(x, archive_entry_pathname(ae));
		if (err)
			goto out;
	}
	err = lfs_drain(x);
	if (err)
		goto out;
end_of_stream:
	if (lfs_tarframe_finish(x->frame, &rule)) {
		err = lfs_refuse(o->layer_name, NULL, "%s", rule);
		goto out;
	}
	lfs_sha256_final(x->diff, got);
	if (o->diff_id && strcmp(got, o->diff_id)) {
		err = lfs_refuse(o->layer_name, NULL,
				 "diff_id %s differs from the config's %s", got,
				 o->diff_id);
		goto out;
	}
	err = lfs_aufs_end(x);
	if (err) {
		lfs_err("layer %s: removing %s: %s", o->layer_name,
			LFS_AUFS_PLNK, strerror(-err));
		goto out;
	}
	err = lfs_set_dir_times(x);
	if (err)
		lfs_err("layer %s: setting directory times: %s", o->layer_name,
			strerror(-err));
	if (!err && o->depends_below)
		*o->depends_below = x->depends;
	if (!err && o->image) {
		o->image->entries += x->used.entries;
		o->image->bytes += x->expanded;
		o->image->names += x->used.names;
		o->image->xattrs += x->used.xattrs;
	}
	lfs_xattr_drops_report(x);
	lfs_progress_show(x, true);
out:
	/* the decompressor's thread stops before what it uses goes */
	lfs_ahead_free(x->ahead);
	if (x->pc_node)
		close(x->pc_fd);
	lfs_lc_close(x);
	free(x->lc_fd);
	if (x->inner)
		archive_read_free(x->inner);
	if (x->outer)
		archive_read_free(x->outer);
	lfs_gzip_free(x->gz);
	lfs_tarframe_free(x->frame);
	free(x->dirs);
	lfs_pathset_free(x->set);
	lfs_sha256_free(x->diff);
	lfs_sha256_free(x->fsum);
	free(x);
	return err;
}
