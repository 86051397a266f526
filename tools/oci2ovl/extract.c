// SPDX-License-Identifier: GPL-2.0
/*
 * Hardened extraction of one layer blob into one empty directory.
 *
 * Two readers are chained: the outer one only decompresses (gzip.c for
 * gzip, which checks every member to its trailer and refuses what follows
 * the last; a libarchive filter with the "raw" format for zstd and plain
 * tar), the inner one, libarchive's, parses tar from what the outer one
 * yields. Every decompressed byte passes through lfs_tar_read() exactly
 * once, which hashes it for the diff_id, counts it against --max-bytes
 * (a decompression bomb is stopped while it streams, nothing is ever held
 * in memory whole) and feeds it to tarframe.c, whose reading of the tar
 * structure every entry must agree with. A zero-length blob is the empty
 * tar stream, an empty layer, whatever its media type (containerd's
 * reading; its diff_id is the digest of nothing).
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
 *  - its parent is looked up in the set of paths this layer created
 *    (pathset.c): a symlink or a non-directory on the way is refused,
 *    missing parents are created as directories (0755, root);
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
 * Directory times are set last, deepest first, since creating children
 * changes them.
 *
 * Xattrs come from pax records (SCHILY.xattr.*, LIBARCHIVE.xattr.*). In
 * pax an empty value deletes its keyword, so an empty xattr is never
 * written; one name given twice with different values is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "oci2ovl.h"

#define LFS_BUF_SIZE (1 << 16)

/* a directory whose times are set at the end */
struct lfs_dir_time {
	char *path; /* normalised, "" for the root */
	struct timespec ts[2]; /* atime, mtime */
};

/* the state of one layer's extraction */
struct lfs_xstate {
	const struct lfs_extract_opts *o;
	int rootfd; /* the layer directory */
	int blobfd; /* the compressed blob */
	struct archive *outer; /* decompressor (zstd, none) */
	struct lfs_gzip *gz; /* decompressor (gzip) */
	bool outer_empty; /* the outer reader found no data at all */
	struct archive *inner; /* tar reader */
	struct lfs_tarframe *frame; /* the tar structure, read on its own */
	struct lfs_sha256 *diff; /* over the decompressed stream */
	uint64_t expanded; /* decompressed bytes so far */
	bool over_limit; /* expanded passed max_bytes (for the image: image_over) */
	bool image_over;
	bool stream_failed; /* outer reader reported an error */
	bool not_gzip; /* ... because the blob is not gzip */
	char stream_msg[256]; /* ... and what it said */
	struct lfs_usage used; /* by this layer; its bytes are expanded */
	struct lfs_pathset *set; /* what this layer created */
	struct lfs_dir_time *dirs; /* times to set at the end */
	size_t ndirs, capdirs;
	struct timespec last_progress;
	unsigned char inbuf[LFS_BUF_SIZE];
	unsigned char midbuf[LFS_BUF_SIZE];
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

/* decompressed bytes into x->midbuf: their count, 0 at the end, -1 */
static la_ssize_t lfs_decompress(struct lfs_xstate *x)
{
	const char *why = NULL;
	la_ssize_t r;

	if (x->gz) {
		r = lfs_gzip_read(x->gz, x->midbuf, sizeof(x->midbuf),
				  lfs_blob_fill, x, &why);
		if (r >= 0)
			return r;
		x->not_gzip = r == -EMEDIUMTYPE;
		snprintf(x->stream_msg, sizeof(x->stream_msg), "%s",
			 r == -EINVAL ? why : strerror(-r));
	} else if (x->outer_empty) {
		return 0;
	} else {
		r = archive_read_data(x->outer, x->midbuf, sizeof(x->midbuf));
		if (r >= 0)
			return r;
		snprintf(x->stream_msg, sizeof(x->stream_msg), "%s",
			 archive_error_string(x->outer) ?: "read error");
	}
	x->stream_failed = true;
	return -1;
}

/* inner reader's source: the outer reader's decompressed data */
static la_ssize_t lfs_tar_read(struct archive *a, void *data, const void **buf)
{
	struct lfs_xstate *x = data;
	la_ssize_t r;

	r = lfs_decompress(x);
	if (r < 0) {
		archive_set_error(a, EIO, "%s", x->stream_msg);
		return -1;
	}
	if (lfs_account(x, x->midbuf, r)) {
		archive_set_error(a, EFBIG, "expansion limit");
		return -1;
	}
	*buf = x->midbuf;
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
				  "bad compressed stream: %s", x->stream_msg);
	return lfs_refuse(x->o->layer_name, entry, "bad tar stream: %s",
			  archive_error_string(x->inner) ?: "read error");
}

static int lfs_entry_err(struct lfs_xstate *x, const char *entry,
			 const char *what, int err)
{
	char buf[512];

	lfs_err("layer %s: entry \"%s\": %s: %s", x->o->layer_name,
		lfs_escape_name(entry, buf, sizeof(buf)), what, strerror(-err));
	return err;
}

/* split "a/b/c" into its parent "a/b" (in @buf) and "c" */
static const char *lfs_split(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		buf[0] = '\0';
		return path;
	}
	snprintf(buf, len, "%.*s", (int)(slash - path), path);
	return slash + 1;
}

static int lfs_kind_refusal(struct lfs_xstate *x, const char *raw, int kind)
{
	if (kind == LFS_NODE_SYMLINK)
		return lfs_refuse(x->o->layer_name, raw,
				  "path goes through a symlink");
	return lfs_refuse(x->o->layer_name, raw, "parent is not a directory");
}

/*
 * lfs_open_parent() - open the directory that will hold @path
 *
 * With @create, missing parents are made (as implicit directories) and a
 * parent this layer whited out is replaced by an opaque directory.
 *
 * Return: an O_PATH directory fd (the caller closes it), or -errno /
 * -LFS_EREFUSED.
 */
static int lfs_open_parent(struct lfs_xstate *x, const char *path,
			   const char *raw, bool create)
{
	char pre[PATH_MAX + 1];
	const char *p, *c;
	size_t node = LFS_PATHSET_ROOT;
	int fd, nfd, kind, err;
	bool slow = false;

	/* fast path: every parent is a directory this layer has */
	for (c = path; (p = strchr(c, '/')); c = p + 1) {
		node = lfs_pathset_child(x->set, node, c, p - c);
		kind = lfs_pathset_kind(x->set, node);
		if (kind == LFS_NODE_DIR || kind == LFS_NODE_IMPLICIT_DIR)
			continue;
		if (kind == LFS_NODE_FILE || kind == LFS_NODE_SYMLINK)
			return lfs_kind_refusal(x, raw, kind);
		if (!create)
			return -ENOENT;
		slow = true;
	}
	if (!slow) {
		lfs_split(path, pre, sizeof(pre));
		fd = lfs_openat2(x->rootfd, *pre ? pre : ".",
				 O_PATH | O_DIRECTORY, 0);
		if (fd == -ELOOP || fd == -EXDEV)
			return lfs_refuse(x->o->layer_name, raw,
					  "path goes through a symlink");
		return fd < 0 ? lfs_entry_err(x, raw, "open parent", fd) : fd;
	}

	/* slow path: one component at a time, creating what is missing */
	fd = lfs_openat2(x->rootfd, ".", O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return fd;
	node = LFS_PATHSET_ROOT;
	for (c = path; (p = strchr(c, '/')); c = p + 1) {
		size_t parent = node;
		char comp[NAME_MAX + 1];

		/* components are at most NAME_MAX (path.c) */
		snprintf(comp, sizeof(comp), "%.*s", (int)(p - c), c);
		node = lfs_pathset_child(x->set, parent, c, p - c);
		kind = lfs_pathset_kind(x->set, node);
		err = 0;
		if (kind == LFS_NODE_WHITEOUT) {
			/* a whited-out name re-created as a directory */
			if (unlinkat(fd, comp, 0) || mkdirat(fd, comp, 0755))
				err = -errno;
			if (!err)
				err = lfs_make_opaque(fd, comp, x->o->fmt);
		} else if (kind == -ENOENT) {
			if (mkdirat(fd, comp, 0755))
				err = -errno;
		}
		if (!err && kind != LFS_NODE_DIR)
			err = lfs_pathset_add(x->set, parent, c, p - c,
					      LFS_NODE_IMPLICIT_DIR, &node);
		if (err) {
			close(fd);
			return lfs_entry_err(x, raw, "create parent", err);
		}
		nfd = lfs_openat2(fd, comp, O_PATH | O_DIRECTORY, 0);
		close(fd);
		if (nfd == -ELOOP || nfd == -EXDEV)
			return lfs_refuse(x->o->layer_name, raw,
					  "path goes through a symlink");
		if (nfd < 0)
			return lfs_entry_err(x, raw, "open parent", nfd);
		fd = nfd;
	}
	return fd;
}

static int lfs_defer_dir_time(struct lfs_xstate *x, const char *path,
			      struct archive_entry *ae)
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
	d = &x->dirs[x->ndirs];
	d->path = strdup(path);
	if (!d->path)
		return -ENOMEM;
	d->ts[1].tv_sec = archive_entry_mtime(ae);
	d->ts[1].tv_nsec = archive_entry_mtime_nsec(ae);
	d->ts[0] = d->ts[1];
	if (archive_entry_atime_is_set(ae)) {
		d->ts[0].tv_sec = archive_entry_atime(ae);
		d->ts[0].tv_nsec = archive_entry_atime_nsec(ae);
	}
	x->ndirs++;
	return 0;
}

static int lfs_set_dir_times(struct lfs_xstate *x)
{
	char parent[PATH_MAX + 1];
	size_t i;
	int err = 0;

	for (i = x->ndirs; i-- > 0;) {
		struct lfs_dir_time *d = &x->dirs[i];
		const char *base;
		int pfd;

		if (!*d->path) {
			if (futimens(x->rootfd, d->ts))
				return -errno;
			continue;
		}
		base = lfs_split(d->path, parent, sizeof(parent));
		pfd = lfs_openat2(x->rootfd, *parent ? parent : ".",
				  O_PATH | O_DIRECTORY, 0);
		if (pfd < 0)
			return pfd;
		if (utimensat(pfd, base, d->ts, AT_SYMLINK_NOFOLLOW))
			err = -errno;
		close(pfd);
		if (err)
			return err;
	}
	return 0;
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

/*
 * An entry's xattrs, through @fd or by name in @pfd. libarchive lists a
 * record of each of SCHILY.xattr.NAME and LIBARCHIVE.xattr.NAME (bsdtar
 * writes both); an empty value deletes its pax keyword, so it is not an
 * xattr; a name whose records disagree is refused.
 */
static int lfs_apply_xattrs(struct lfs_xstate *x, struct archive_entry *ae,
			    const char *raw, int pfd, const char *base, int fd)
{
	struct lfs_xattr *v;
	char ebuf[512];
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
				lfs_escape_name(v[i].name, ebuf, sizeof(ebuf)));
			break;
		}
		if (!v[i].len)
			continue;
		if (lfs_xattr_is_overlay(v[i].name)) {
			lfs_warn(
				"layer %s: entry \"%s\": xattr %s dropped (overlay markers are never taken from a layer)",
				x->o->layer_name,
				lfs_escape_name(raw, ebuf, sizeof(ebuf)),
				v[i].name);
			continue;
		}
		if (fd >= 0)
			err = fsetxattr(fd, v[i].name, v[i].val, v[i].len, 0) ?
				      -errno :
				      0;
		else
			err = lfs_setxattr_at(pfd, base, v[i].name, v[i].val,
					      v[i].len);
		if (err) {
			snprintf(ebuf, sizeof(ebuf), "set xattr %s", v[i].name);
			err = lfs_entry_err(x, raw, ebuf, err);
		}
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
			  const char *path)
{
	mode_t ft = archive_entry_filetype(ae);
	int err;

	if (fd >= 0 ? fchown(fd, archive_entry_uid(ae), archive_entry_gid(ae)) :
		      fchownat(pfd, base, archive_entry_uid(ae),
			       archive_entry_gid(ae), AT_SYMLINK_NOFOLLOW))
		return lfs_entry_err(x, raw, "chown", -errno);
	if (ft != AE_IFLNK &&
	    (fd >= 0 ? fchmod(fd, archive_entry_perm(ae)) :
		       fchmodat(pfd, base, archive_entry_perm(ae), 0)))
		return lfs_entry_err(x, raw, "chmod", -errno);

	err = lfs_apply_xattrs(x, ae, raw, pfd, base, fd);
	if (err)
		return err;

	if (ft == AE_IFDIR)
		return lfs_defer_dir_time(x, path, ae);
	{
		struct timespec ts[2];

		ts[1].tv_sec = archive_entry_mtime(ae);
		ts[1].tv_nsec = archive_entry_mtime_nsec(ae);
		ts[0] = ts[1];
		if (archive_entry_atime_is_set(ae)) {
			ts[0].tv_sec = archive_entry_atime(ae);
			ts[0].tv_nsec = archive_entry_atime_nsec(ae);
		}
		if (fd >= 0 ? futimens(fd, ts) :
			      utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW))
			return lfs_entry_err(x, raw, "set times", -errno);
	}
	return 0;
}

/* copy a regular file's data, sparse holes included */
static int lfs_write_data(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, int fd)
{
	const void *buf;
	size_t size;
	la_int64_t off;
	int r;

	for (;;) {
		r = archive_read_data_block(x->inner, &buf, &size, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			return lfs_stream_error(x, raw);
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

static int lfs_make_hardlink(struct lfs_xstate *x, const char *raw,
			     const char *link, int pfd, const char *base,
			     const char *path)
{
	char tparent[PATH_MAX + 1];
	const char *rule, *tbase;
	char *target;
	int kind, tpfd, err;

	err = lfs_path_normalize(link, &x->o->lim, &target, &rule);
	if (err == -LFS_EREFUSED)
		return lfs_refuse(x->o->layer_name, raw, "hard link: %s", rule);
	if (err)
		return err;
	kind = lfs_pathset_lookup(x->set, target);
	if (kind != LFS_NODE_FILE && kind != LFS_NODE_SYMLINK) {
		free(target);
		return lfs_refuse(
			x->o->layer_name, raw,
			"hard link target is not an earlier entry of this layer");
	}
	tbase = lfs_split(target, tparent, sizeof(tparent));
	tpfd = lfs_open_parent(x, target, raw, false);
	err = tpfd;
	if (tpfd >= 0) {
		err = linkat(tpfd, tbase, pfd, base, 0) ? -errno : 0;
		close(tpfd);
		if (err)
			err = lfs_entry_err(x, raw, "link", err);
		else
			err = lfs_pathset_set(x->set, path, kind);
	}
	free(target);
	return err;
}

static int lfs_make_node(struct lfs_xstate *x, struct archive_entry *ae,
			 const char *raw, const char *path, int pfd,
			 const char *base)
{
	mode_t ft = archive_entry_filetype(ae);
	enum lfs_node_kind kind = LFS_NODE_FILE;
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
		err = lfs_write_data(x, ae, raw, fd);
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
		if (archive_entry_rdev(ae) == 0)
			return lfs_refuse(
				x->o->layer_name, raw,
				"0/0 character device is an overlay whiteout marker");
		/* fall through */
	case AE_IFBLK:
	case AE_IFIFO:
		if (mknodat(pfd, base, ft | 0600, archive_entry_rdev(ae)))
			return lfs_entry_err(x, raw, "mknod", -errno);
		break;
	case AE_IFSOCK:
		lfs_warn("layer %s: entry \"%s\": socket skipped",
			 x->o->layer_name, path);
		return 0;
	default:
		return lfs_refuse(x->o->layer_name, raw,
				  "unknown entry type 0%o", (unsigned int)ft);
	}
	err = lfs_pathset_set(x->set, path, kind);
	if (!err)
		err = lfs_apply_meta(x, ae, raw, pfd, base, fd, path);
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* a directory entry for a directory that already exists: take its metadata */
static int lfs_update_dir(struct lfs_xstate *x, struct archive_entry *ae,
			  const char *raw, const char *path)
{
	char parent[PATH_MAX + 1];
	const char *base;
	int pfd = -1, fd, err;

	if (!*path) {
		fd = x->rootfd;
	} else {
		base = lfs_split(path, parent, sizeof(parent));
		pfd = lfs_open_parent(x, path, raw, false);
		if (pfd < 0)
			return pfd;
		fd = lfs_openat2(pfd, base, O_RDONLY | O_DIRECTORY, 0);
		close(pfd);
		if (fd < 0)
			return lfs_entry_err(x, raw, "open", fd);
	}
	err = lfs_apply_meta(x, ae, raw, -1, NULL, fd, path);
	if (!err)
		err = lfs_pathset_set(x->set, path, LFS_NODE_DIR);
	if (fd != x->rootfd)
		close(fd);
	return err;
}

/* is a parent of @path a regular file, device or fifo of this layer? */
static bool lfs_under_file(struct lfs_xstate *x, const char *path)
{
	size_t node = LFS_PATHSET_ROOT;
	const char *p, *c;

	for (c = path; (p = strchr(c, '/')); c = p + 1) {
		node = lfs_pathset_child(x->set, node, c, p - c);
		if (lfs_pathset_kind(x->set, node) == LFS_NODE_FILE)
			return true;
	}
	return false;
}

/* a ".wh.NAME" entry hiding @target, or a ".wh..wh..opq" in @target */
static int lfs_do_whiteout(struct lfs_xstate *x, const char *raw,
			   const char *target, int wh)
{
	char parent[PATH_MAX + 1];
	const char *base;
	int kind = lfs_pathset_lookup(x->set, target), pfd, err;

	if (wh == LFS_WH_KIND_FILE && kind == LFS_NODE_WHITEOUT)
		return lfs_refuse(x->o->layer_name, raw, "duplicate entry");
	/*
	 * Under a non-directory of this layer a whiteout has nothing left
	 * to hide (umoci writes such whiteouts for the children of a
	 * directory it replaced by a file): ignore it. A symlink on the
	 * way is still refused, by lfs_open_parent().
	 */
	if (lfs_under_file(x, target))
		return 0;
	/* same-layer entries are not hidden; a directory was re-created */
	if (wh == LFS_WH_KIND_FILE &&
	    (kind == LFS_NODE_FILE || kind == LFS_NODE_SYMLINK))
		return 0;
	if (wh == LFS_WH_KIND_OPAQUE && kind == LFS_NODE_FILE)
		return 0;
	if (wh == LFS_WH_KIND_OPAQUE && kind == LFS_NODE_SYMLINK)
		return lfs_kind_refusal(x, raw, kind);
	if (wh == LFS_WH_KIND_OPAQUE && !*target)
		return lfs_make_opaque(x->rootfd, "", x->o->fmt);

	base = lfs_split(target, parent, sizeof(parent));
	pfd = lfs_open_parent(x, target, raw, true);
	if (pfd < 0)
		return pfd;
	if (kind == LFS_NODE_DIR || kind == LFS_NODE_IMPLICIT_DIR) {
		err = lfs_make_opaque(pfd, base, x->o->fmt);
	} else if (wh == LFS_WH_KIND_OPAQUE) {
		/* the marker's directory: make it if it is not there */
		err = 0;
		if (kind == LFS_NODE_WHITEOUT && unlinkat(pfd, base, 0))
			err = -errno;
		if (!err && mkdirat(pfd, base, 0755))
			err = -errno;
		if (!err)
			err = lfs_pathset_set(x->set, target,
					      LFS_NODE_IMPLICIT_DIR);
		if (!err)
			err = lfs_make_opaque(pfd, base, x->o->fmt);
	} else {
		err = lfs_make_whiteout(pfd, base, x->o->fmt);
		if (!err)
			err = lfs_pathset_set(x->set, target,
					      LFS_NODE_WHITEOUT);
	}
	close(pfd);
	return err < 0 && err != -LFS_EREFUSED ?
		       lfs_entry_err(x, raw, "whiteout", err) :
		       err;
}

static int lfs_extract_entry(struct lfs_xstate *x, struct archive_entry *ae)
{
	const char *raw = archive_entry_pathname(ae), *rule, *base, *link;
	char parent[PATH_MAX + 1];
	char *path = NULL, *target = NULL;
	bool isdir = archive_entry_filetype(ae) == AE_IFDIR;
	int kind, wh, pfd, err;

	if (!raw)
		return lfs_refuse(x->o->layer_name, "", "entry without a name");
	err = lfs_path_normalize(raw, &x->o->lim, &path, &rule);
	if (err == -LFS_EREFUSED)
		return lfs_refuse(x->o->layer_name, raw, "%s", rule);
	if (err)
		return err;
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
		err = lfs_do_whiteout(x, raw, target, wh);
		goto out;
	}

	link = archive_entry_hardlink(ae);
	if (link)
		isdir = false;
	kind = lfs_pathset_lookup(x->set, path);
	if (!*path) {
		if (!isdir)
			err = lfs_refuse(x->o->layer_name, raw,
					 "layer root is not a directory");
		else if (kind == LFS_NODE_DIR)
			err = lfs_refuse(x->o->layer_name, raw,
					 "duplicate entry");
		else
			err = lfs_update_dir(x, ae, raw, path);
		goto out;
	}
	if (kind == LFS_NODE_IMPLICIT_DIR && isdir) {
		err = lfs_update_dir(x, ae, raw, path);
		goto out;
	}
	if (kind >= 0 && kind != LFS_NODE_WHITEOUT) {
		err = lfs_refuse(x->o->layer_name, raw, "duplicate entry");
		goto out;
	}

	base = lfs_split(path, parent, sizeof(parent));
	pfd = lfs_open_parent(x, path, raw, true);
	if (pfd < 0) {
		err = pfd;
		goto out;
	}
	/* an entry replaces this layer's whiteout of the same name */
	if (kind == LFS_NODE_WHITEOUT && unlinkat(pfd, base, 0))
		err = lfs_entry_err(x, raw, "unlink whiteout", -errno);
	if (!err && link)
		err = lfs_make_hardlink(x, raw, link, pfd, base, path);
	else if (!err)
		err = lfs_make_node(x, ae, raw, path, pfd, base);
	if (!err && kind == LFS_NODE_WHITEOUT && isdir)
		err = lfs_make_opaque(pfd, base, x->o->fmt);
	close(pfd);
out:
	free(path);
	free(target);
	return err;
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
		return lfs_refuse(
			x->o->layer_name, NULL, "bad compressed stream: %s",
			archive_error_string(x->outer) ?: "read error");
	code = archive_filter_code(x->outer, 0);
	if (code != want)
		return lfs_refuse(x->o->layer_name, NULL,
				  "blob is %s, not what its media type says",
				  archive_filter_name(x->outer, 0));
inner:
	archive_read_support_format_tar(x->inner);
	archive_read_support_format_empty(x->inner);
	if (archive_read_open(x->inner, x, NULL, lfs_tar_read, NULL))
		return lfs_stream_error(x, NULL);
	return 0;
}

/* read what the tar reader left (end blocks, padding) for the diff_id */
static int lfs_drain(struct lfs_xstate *x)
{
	la_ssize_t r;

	while ((r = lfs_decompress(x)) > 0)
		if (lfs_account(x, x->midbuf, r))
			return lfs_stream_error(x, NULL);
	return r < 0 ? lfs_stream_error(x, NULL) : 0;
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
	uint64_t names, xattrs = 0;
	struct lfs_tar_frame f;
	const void *val;
	size_t len;
	int err;

	if (lfs_tarframe_entry(x->frame, archive_read_header_position(x->inner),
			       &f, &rule))
		return lfs_refuse(o->layer_name, raw, "%s", rule);
	if (f.size && (archive_entry_hardlink(ae) ||
		       archive_entry_filetype(ae) != AE_IFREG))
		return lfs_refuse(
			o->layer_name, raw,
			"%s entry declares %llu bytes of data, and its type has none",
			lfs_header_only_name(f.type, ae),
			(unsigned long long)f.size);
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
	size_t i;
	int r, err;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->o = o;
	x->rootfd = rootfd;
	x->blobfd = blobfd;
	err = -ENOMEM;
	x->diff = lfs_sha256_new();
	x->set = lfs_pathset_new();
	x->frame = lfs_tarframe_new();
	if (!x->diff || !x->set || !x->frame)
		goto out;
	err = fchmod(rootfd, 0755) ? -errno : 0;
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
				 archive_error_string(x->inner));
		err = lfs_check_entry(x, ae);
		if (!err)
			err = lfs_extract_entry(x, ae);
		if (!err && lfs_pathset_count(x->set) > o->lim.max_entries)
			err = lfs_refuse(
				o->layer_name, archive_entry_pathname(ae),
				"more than %llu paths, with the parents they imply (--max-entries)",
				(unsigned long long)o->lim.max_entries);
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
	err = lfs_set_dir_times(x);
	if (err)
		lfs_err("layer %s: setting directory times: %s", o->layer_name,
			strerror(-err));
	if (!err && o->image) {
		o->image->entries += x->used.entries;
		o->image->bytes += x->expanded;
		o->image->names += x->used.names;
		o->image->xattrs += x->used.xattrs;
	}
	lfs_progress_show(x, true);
out:
	if (x->inner)
		archive_read_free(x->inner);
	if (x->outer)
		archive_read_free(x->outer);
	lfs_gzip_free(x->gz);
	lfs_tarframe_free(x->frame);
	for (i = 0; i < x->ndirs; i++)
		free(x->dirs[i].path);
	free(x->dirs);
	lfs_pathset_free(x->set);
	lfs_sha256_free(x->diff);
	free(x);
	return err;
}
