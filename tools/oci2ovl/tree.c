// SPDX-License-Identifier: GPL-2.0
/*
 * Tree manifests: what a layer directory held when it was imported, and
 * `oci2ovl verify`, which walks it again and reports every difference.
 *
 *   STORE/trees/HEX         the manifest of layers/HEX (0700 directory)
 *
 * A manifest is text. The first line is "oci2ovl-tree 1 sha256:HEX
 * ino=N" (N: the inode number of the layer's root directory, which a
 * rename keeps); then one line per entry, in the order of a walk that
 * takes the names of each directory sorted bytewise, a directory before
 * its entries:
 *
 *   PATH type=T mode=OOOO uid=U gid=G [size=N sha256=HEX | link=PATH |
 *        target=TARGET | rdev=MAJ:MIN] [x.NAME=HEXVALUE ...]
 *
 * PATH is "." for the layer root, else relative to it. T is one of
 * f d l c b p s. A regular file whose inode an earlier entry of the walk
 * has is "link=" that entry (a hard link), else its size and SHA-256. An
 * xattr is "x." its name, "=" and its value in hex, names sorted. In
 * PATH, TARGET and NAME every byte outside '!'..'~', and '%' and '=',
 * is written %XX, so a line splits at spaces and a field at its first
 * '='. Times are not recorded: a directory that no entry named gets the
 * import's time, and a directory's size is the filesystem's business.
 *
 * The manifest is written by lfs_store_commit_layer() from the finished
 * layer, to tmp/NAME.tree beside the layer's tmp/NAME, and renamed to
 * trees/HEX after the layer's own rename won; a crash between the two
 * renames leaves a layer without its manifest, and the candidate in tmp/,
 * which gc then moves into place if its ino= is the layer's (the copy
 * that won), and verify reads from tmp/ meanwhile.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

#define LFS_TREE_MAGIC "oci2ovl-tree 1 "
#define LFS_TREE_BUF (1 << 16)

/* a growing string */
struct lfs_str {
	char *p;
	size_t len, cap;
};

static int lfs_str_grow(struct lfs_str *s, size_t more)
{
	char *np;
	size_t cap;

	if (s->len + more + 1 <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 256;
	while (cap < s->len + more + 1)
		cap *= 2;
	np = realloc(s->p, cap);
	if (!np)
		return -ENOMEM;
	s->p = np;
	s->cap = cap;
	return 0;
}

static int lfs_str_add(struct lfs_str *s, const void *buf, size_t n)
{
	if (lfs_str_grow(s, n))
		return -ENOMEM;
	memcpy(s->p + s->len, buf, n);
	s->len += n;
	s->p[s->len] = '\0';
	return 0;
}

static int lfs_str_printf(struct lfs_str *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int lfs_str_printf(struct lfs_str *s, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(buf))
		return -EINVAL;
	return lfs_str_add(s, buf, n);
}

/* @n bytes of @b, every byte outside '!'..'~', and '%' '=', as %XX */
static int lfs_str_esc(struct lfs_str *s, const char *b, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	if (lfs_str_grow(s, 3 * n))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char c = b[i];

		if (c > ' ' && c < 0x7f && c != '%' && c != '=') {
			s->p[s->len++] = c;
		} else {
			s->p[s->len++] = '%';
			s->p[s->len++] = hex[c >> 4];
			s->p[s->len++] = hex[c & 15];
		}
	}
	s->p[s->len] = '\0';
	return 0;
}

static int lfs_str_hex(struct lfs_str *s, const unsigned char *b, size_t n)
{
	if (lfs_str_grow(s, 2 * n))
		return -ENOMEM;
	lfs_hex(b, n, s->p + s->len);
	s->len += 2 * n;
	return 0;
}

/*
 * The digests of the regular files an extraction wrote (extract.c),
 * computed from the data as it was written, so that the manifest of the
 * new layer need not read every file again. Keyed by inode: a hard link
 * shares its file's, and an extraction records every regular file it
 * creates, so an inode number used again within the layer (after an
 * unlink) gets the new file's record. A record counts only for a file of
 * the same device, inode and size, and only for the layer directory its
 * extraction wrote; any other file of the walk is read and hashed.
 *
 * 48 bytes a file, in chunks (no copy as it grows), and a 32-bit index
 * at most half full: a layer of a million files costs 56 MiB at most.
 */
struct lfs_filesum {
	uint64_t ino;
	uint64_t size; /* LFS_SUM_UNKNOWN: no digest, the walk reads it */
	unsigned char md[32];
};

#define LFS_SUM_UNKNOWN (1ull << 63)
#define LFS_SUMS_CHUNK 4096

struct lfs_filesums {
	struct lfs_filesum **chunks; /* LFS_SUMS_CHUNK records each */
	size_t n, nchunks;
	uint32_t *slot; /* 0: free, else record number + 1 */
	size_t cap; /* slots: a power of two, at least twice n */
	uint64_t dev; /* of every record */
	bool mixed; /* records of two devices: none counts */
};

struct lfs_filesums *lfs_filesums_new(void)
{
	return calloc(1, sizeof(struct lfs_filesums));
}

void lfs_filesums_free(struct lfs_filesums *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nchunks; i++)
		free(s->chunks[i]);
	free(s->chunks);
	free(s->slot);
	free(s);
}

static struct lfs_filesum *lfs_filesum_rec(const struct lfs_filesums *s,
					   uint32_t i)
{
	return &s->chunks[i / LFS_SUMS_CHUNK][i % LFS_SUMS_CHUNK];
}

/* the slot of @ino: its record's, or the free one where it would go */
static size_t lfs_filesum_slot(const struct lfs_filesums *s, uint64_t ino)
{
	uint64_t h = ino * 0x9e3779b97f4a7c15ull;
	size_t i = (h ^ h >> 29) & (s->cap - 1);

	while (s->slot[i] && lfs_filesum_rec(s, s->slot[i] - 1)->ino != ino)
		i = (i + 1) & (s->cap - 1);
	return i;
}

/* room for one more record: a chunk, and an index at most half full */
static int lfs_filesums_grow(struct lfs_filesums *s)
{
	struct lfs_filesum **nc;
	uint32_t *ns, *old = s->slot;
	size_t cap = s->cap, i;
	uint64_t ino;

	if (s->n == UINT32_MAX - 1)
		return -ENOMEM;
	if (s->n == s->nchunks * LFS_SUMS_CHUNK) {
		nc = realloc(s->chunks, (s->nchunks + 1) * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		s->chunks = nc;
		nc[s->nchunks] = malloc(LFS_SUMS_CHUNK * sizeof(**nc));
		if (!nc[s->nchunks])
			return -ENOMEM;
		s->nchunks++;
	}
	if (2 * (s->n + 1) <= s->cap)
		return 0;
	ns = calloc(cap ? 2 * cap : 1024, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	s->slot = ns;
	s->cap = cap ? 2 * cap : 1024;
	for (i = 0; i < cap; i++) {
		if (!old[i])
			continue;
		ino = lfs_filesum_rec(s, old[i] - 1)->ino;
		s->slot[lfs_filesum_slot(s, ino)] = old[i];
	}
	free(old);
	return 0;
}

/**
 * lfs_filesums_set() - record what the regular file at @dev:@ino holds
 * @size: its size, the bytes @md is the SHA-256 of
 * @md: the digest, or NULL: not known (the walk reads the file)
 *
 * Replaces the inode's earlier record. Return: 0 or -ENOMEM.
 */
int lfs_filesums_set(struct lfs_filesums *s, dev_t dev, ino_t ino,
		     uint64_t size, const unsigned char *md)
{
	struct lfs_filesum *e;
	size_t i;

	if (!s->n && !s->cap)
		s->dev = dev;
	if (s->dev != (uint64_t)dev)
		s->mixed = true;
	if (lfs_filesums_grow(s))
		return -ENOMEM;
	i = lfs_filesum_slot(s, ino);
	if (!s->slot[i])
		s->slot[i] = ++s->n;
	e = lfs_filesum_rec(s, s->slot[i] - 1);
	e->ino = ino;
	e->size = md && size < LFS_SUM_UNKNOWN ? size : LFS_SUM_UNKNOWN;
	if (md)
		memcpy(e->md, md, sizeof(e->md));
	return 0;
}

/* the recorded digest of the file @st describes, into @hex; or false */
bool lfs_filesums_get(const struct lfs_filesums *s, const struct stat *st,
		      char hex[LFS_SHA256_HEX + 1])
{
	const struct lfs_filesum *e;
	size_t i;

	if (!s || !s->n || s->mixed || s->dev != (uint64_t)st->st_dev)
		return false;
	i = lfs_filesum_slot(s, st->st_ino);
	if (!s->slot[i])
		return false;
	e = lfs_filesum_rec(s, s->slot[i] - 1);
	if (e->size == LFS_SUM_UNKNOWN || e->size != (uint64_t)st->st_size)
		return false;
	lfs_hex(e->md, sizeof(e->md), hex);
	return true;
}

/* one walk of a layer directory; each entry's line goes to @emit */
struct lfs_walk {
	int (*emit)(struct lfs_walk *w, const char *line, size_t pathlen);
	void *ctx; /* the emitter's */
	const struct lfs_filesums *sums; /* NULL: every file is read */
	int objfd; /* STORE/objects, or -1 */
	/* a pointer that does not hold (NULL: an error, -EIO) */
	void (*report)(struct lfs_walk *w, const char *path, size_t pathlen,
		       const char *msg);
	json_t *inodes; /* "dev:ino" -> the escaped path first seen */
	struct lfs_str line; /* the entry being described */
	char path[PATH_MAX + NAME_MAX + 2]; /* its raw path */
	unsigned char buf[LFS_TREE_BUF];
};

static int lfs_name_sort(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* the SHA-256 of the regular file open in @fd, its hex into @out */
static int lfs_walk_hash(struct lfs_walk *w, int fd,
			 char out[LFS_SHA256_HEX + 1])
{
	unsigned char md[32];
	struct lfs_sha256 *h;
	int err = 0;
	ssize_t r;

	h = lfs_sha256_new();
	if (!h)
		return -ENOMEM;
	while ((r = read(fd, w->buf, sizeof(w->buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		lfs_sha256_update(h, w->buf, r);
	}
	if (!err) {
		lfs_sha256_final_raw(h, md);
		lfs_hex(md, sizeof(md), out);
	}
	lfs_sha256_free(h);
	return err;
}

/*
 * The xattrs of an entry: through @fd when it is open (files,
 * directories), else of @name in @dirfd, never following it.
 */
static ssize_t lfs_xlist(int fd, const char *p, char *buf, size_t len)
{
	return fd >= 0 ? flistxattr(fd, buf, len) : llistxattr(p, buf, len);
}

static ssize_t lfs_xget(int fd, const char *p, const char *name, void *buf,
			size_t len)
{
	return fd >= 0 ? fgetxattr(fd, name, buf, len) :
			 lgetxattr(p, name, buf, len);
}

/*
 * " x.NAME=HEX" for every xattr of the entry, names sorted; @pointer:
 * but the two markers of a file that points at an object
 */
static int lfs_walk_xattrs(struct lfs_walk *w, int fd, int dirfd,
			   const char *name, bool pointer)
{
	char p[64 + NAME_MAX + 2], *list = NULL, **names = NULL, *q;
	unsigned char *val = NULL;
	ssize_t len, vlen;
	size_t n = 0, i;
	int err = 0;

	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dirfd, name);
	len = lfs_xlist(fd, p, NULL, 0);
	if (len < 0)
		return errno == ENOTSUP ? 0 : -errno;
	if (!len)
		return 0;
	list = malloc(len);
	if (!list)
		return -ENOMEM;
	len = lfs_xlist(fd, p, list, len);
	if (len < 0) {
		err = -errno;
		goto out;
	}
	for (q = list; q < list + len; q += strlen(q) + 1)
		n++;
	names = calloc(n, sizeof(*names));
	if (!names) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0, q = list; q < list + len; q += strlen(q) + 1)
		names[i++] = q;
	qsort(names, n, sizeof(*names), lfs_name_sort);
	for (i = 0; i < n && !err; i++) {
		if (pointer && (!strcmp(names[i], LFS_XATTR_METACOPY) ||
				!strcmp(names[i], LFS_XATTR_REDIRECT)))
			continue;
		vlen = lfs_xget(fd, p, names[i], NULL, 0);
		if (vlen < 0) {
			err = -errno;
			break;
		}
		free(val);
		val = malloc(vlen + 1);
		if (!val) {
			err = -ENOMEM;
			break;
		}
		vlen = lfs_xget(fd, p, names[i], val, vlen);
		if (vlen < 0) {
			err = -errno;
			break;
		}
		err = lfs_str_add(&w->line, " x.", 3);
		if (!err)
			err = lfs_str_esc(&w->line, names[i], strlen(names[i]));
		if (!err)
			err = lfs_str_add(&w->line, "=", 1);
		if (!err)
			err = lfs_str_hex(&w->line, val, vlen);
	}
out:
	free(val);
	free(names);
	free(list);
	return err;
}

static char lfs_type_char(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return 'f';
	case S_IFDIR:
		return 'd';
	case S_IFLNK:
		return 'l';
	case S_IFCHR:
		return 'c';
	case S_IFBLK:
		return 'b';
	case S_IFIFO:
		return 'p';
	default:
		return 's';
	}
}

static int lfs_walk_dir(struct lfs_walk *w, int dirfd, size_t plen);

/* what is wrong with a pointer: reported, or at import an error */
static int lfs_walk_problem(struct lfs_walk *w, size_t pathlen,
			    const char *msg)
{
	if (w->report) {
		w->report(w, w->line.p, pathlen, msg);
		return 0;
	}
	lfs_err("entry \"%.*s\": %s", (int)pathlen, w->line.p, msg);
	return -EIO;
}

/*
 * The content of the regular file @name of @dirfd: its own data, or,
 * for a metacopy file that points at an object (objects.c), the
 * object's, which must be what the pointer's name and marker say (size,
 * SHA-256, fs-verity digest). Its hex into @digest; @pointer: it points.
 */
static int lfs_walk_content(struct lfs_walk *w, int fd, int dirfd,
			    const char *name, const struct stat *st,
			    size_t pathlen, char digest[LFS_SHA256_HEX + 1],
			    bool *pointer)
{
	struct lfs_objref ref;
	const char *why;
	char msg[160];
	bool known;
	int r;

	*pointer = false;
	known = lfs_filesums_get(w->sums, st, digest);
	r = lfs_object_pointer_at(dirfd, name, &ref, &why);
	if (r == -LFS_EREFUSED) {
		r = lfs_walk_problem(w, pathlen, why);
		if (r)
			return r;
	} else if (r < 0) {
		return r;
	} else if (r == 1) {
		*pointer = true;
		if (known && strcmp(digest, ref.hex))
			return lfs_walk_problem(w, pathlen,
						"points at an object of other content");
		r = lfs_object_check(w->objfd, &ref, st->st_size, !known, msg,
				     sizeof(msg), &why);
		if (r < 0)
			return r;
		if (r)
			r = lfs_walk_problem(w, pathlen, why);
		memcpy(digest, ref.hex, sizeof(ref.hex));
		return r;
	}
	return known ? 0 : lfs_walk_hash(w, fd, digest);
}

/*
 * Open a regular file or a directory of the walk, and check that it is
 * still the entry that fstatat() saw (a layer changed under the walk).
 */
static int lfs_walk_open(int dirfd, const char *name, const struct stat *st)
{
	struct stat now;
	int fd;

	fd = openat(dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC |
			    (S_ISDIR(st->st_mode) ? O_DIRECTORY : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) || now.st_ino != st->st_ino ||
	    now.st_dev != st->st_dev ||
	    (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * Describe the entry @name of @dirfd (whose path is w->path, @plen bytes
 * long; "" and 0 for the root, @dirfd itself) and recurse into a
 * directory.
 */
static int lfs_walk_entry(struct lfs_walk *w, int dirfd, const char *name,
			  size_t plen)
{
	char digest[LFS_SHA256_HEX + 1], key[48];
	bool pointer = false;
	int err, fd = -1;
	struct stat st;
	size_t pathlen;
	json_t *first;

	if (*name ? fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) :
		    fstat(dirfd, &st))
		return -errno;
	if (!*name) {
		fd = dup(dirfd);
		if (fd < 0)
			return -errno;
	} else if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
		fd = lfs_walk_open(dirfd, name, &st);
		if (fd < 0)
			return fd;
	}
	w->line.len = 0;
	err = plen ? lfs_str_esc(&w->line, w->path, plen) :
		     lfs_str_add(&w->line, ".", 1);
	pathlen = w->line.len;
	if (!err)
		err = lfs_str_printf(&w->line,
				     " type=%c mode=%04o uid=%u gid=%u",
				     lfs_type_char(st.st_mode),
				     st.st_mode & 07777, st.st_uid, st.st_gid);
	if (err)
		goto out;
	if (S_ISREG(st.st_mode)) {
		snprintf(key, sizeof(key), "%llu:%llu",
			 (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino);
		first = st.st_nlink > 1 ? json_object_get(w->inodes, key) :
					  NULL;
		if (first) {
			struct lfs_objref ref;
			const char *why;

			/* its markers were checked at its first name */
			pointer = lfs_object_pointer_at(dirfd, name, &ref,
							&why) == 1;
			err = lfs_str_add(&w->line, " link=", 6);
			if (!err)
				err = lfs_str_add(&w->line,
						  json_string_value(first),
						  strlen(json_string_value(first)));
		} else {
			if (st.st_nlink > 1)
				json_object_set_new(
					w->inodes, key,
					json_stringn(w->line.p, pathlen));
			err = lfs_walk_content(w, fd, dirfd, name, &st,
					       pathlen, digest, &pointer);
			if (!err)
				err = lfs_str_printf(&w->line,
						     " size=%lld sha256=",
						     (long long)st.st_size);
			if (!err)
				err = lfs_str_add(&w->line, digest,
						  LFS_SHA256_HEX);
		}
	} else if (S_ISLNK(st.st_mode)) {
		/* not on the stack: a walk recurses once per directory level */
		char *target = (char *)w->buf;
		ssize_t n = readlinkat(dirfd, name, target, PATH_MAX);

		if (n < 0) {
			err = -errno;
			goto out;
		}
		err = lfs_str_add(&w->line, " target=", 8);
		if (!err)
			err = lfs_str_esc(&w->line, target, n);
	} else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
		err = lfs_str_printf(&w->line, " rdev=%u:%u",
				     major(st.st_rdev), minor(st.st_rdev));
	}
	if (!err)
		err = lfs_walk_xattrs(w, fd, dirfd, name, pointer);
	if (!err)
		err = w->emit(w, w->line.p, pathlen);
	if (!err && S_ISDIR(st.st_mode))
		err = lfs_walk_dir(w, fd, plen);
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* the entries of directory @dirfd, sorted, each with its path in w->path */
static int lfs_walk_dir(struct lfs_walk *w, int dirfd, size_t plen)
{
	char **names = NULL, **nv;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = lfs_opendir_dup(dirfd);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			nv = realloc(names, cap * sizeof(*names));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			names = nv;
		}
		names[n] = strdup(de->d_name);
		if (!names[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), lfs_name_sort);
	for (i = 0; i < n && !err; i++) {
		size_t nlen = strlen(names[i]);
		size_t sub = plen + (plen ? 1 : 0) + nlen;

		if (sub >= sizeof(w->path)) {
			err = -ENAMETOOLONG;
			break;
		}
		if (plen)
			w->path[plen] = '/';
		memcpy(w->path + sub - nlen, names[i], nlen + 1);
		err = lfs_walk_entry(w, dirfd, names[i], sub);
		w->path[plen] = '\0';
	}
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return err;
}

/*
 * walk the layer in @rootfd, handing each line to @emit; @sums: the
 * digests its extraction recorded, or NULL
 */
static int lfs_walk(int rootfd,
		    int (*emit)(struct lfs_walk *w, const char *line,
				size_t pathlen),
		    void *ctx, const struct lfs_filesums *sums,
		    struct lfs_store *st,
		    void (*report)(struct lfs_walk *w, const char *path,
				   size_t pathlen, const char *msg))
{
	struct lfs_walk *w;
	int err;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->emit = emit;
	w->ctx = ctx;
	w->sums = sums;
	w->report = report;
	w->objfd = openat(st->dirfd, "objects",
			  O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	w->inodes = json_object();
	err = w->inodes ? lfs_walk_entry(w, rootfd, "", 0) : -ENOMEM;
	json_decref(w->inodes);
	if (w->objfd >= 0)
		close(w->objfd);
	free(w->line.p);
	free(w);
	return err;
}

static int lfs_emit_file(struct lfs_walk *w, const char *line, size_t pathlen)
{
	(void)pathlen;
	return fprintf(w->ctx, "%s\n", line) < 0 ? -EIO : 0;
}

/*
 * lfs_tree_write() - write the manifest of the layer directory @tmpname
 * (store-relative, in tmp/) to @tmpname.tree, synced
 * @sums: the file digests of the extraction that wrote @tmpname, or NULL
 */
int lfs_tree_write(struct lfs_store *st, const char *tmpname,
		   const char *diff_id, const struct lfs_filesums *sums)
{
	char rel[PATH_MAX];
	struct stat stb;
	int rootfd, fd, err;
	FILE *f;

	snprintf(rel, sizeof(rel), "%s.tree", tmpname);
	rootfd = openat(st->dirfd, tmpname,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	if (fstat(rootfd, &stb)) {
		err = -errno;
		goto out_root;
	}
	fd = openat(st->dirfd, rel,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out_root;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
		goto out_unlink;
	}
	err = 0;
	if (fprintf(f, LFS_TREE_MAGIC "%s ino=%llu\n", diff_id,
		    (unsigned long long)stb.st_ino) < 0)
		err = -EIO;
	if (!err)
		err = lfs_walk(rootfd, lfs_emit_file, f, sums, st, NULL);
	if (fflush(f) && !err)
		err = -errno;
	if (!err && st->sync && fsync(fileno(f)))
		err = -errno;
	if (fclose(f) && !err)
		err = -errno;
	if (!err)
		goto out_root;
out_unlink:
	unlinkat(st->dirfd, rel, 0);
out_root:
	close(rootfd);
	return err;
}

/*
 * Read a manifest file: its header's diff_id must be @diff_id; @ino gets
 * the header's root inode. Return: 0 and the text in @buf, or -errno.
 */
static int lfs_tree_read(int dirfd, const char *rel, const char *diff_id,
			 char **buf, size_t *len, unsigned long long *ino)
{
	char want[LFS_DIGEST_LEN + 32];
	int err;

	err = lfs_read_file_at(dirfd, rel, SIZE_MAX / 2, buf, len);
	if (err)
		return err;
	snprintf(want, sizeof(want), LFS_TREE_MAGIC "%s ino=", diff_id);
	if (strncmp(*buf, want, strlen(want)) ||
	    sscanf(*buf + strlen(want), "%llu", ino) != 1) {
		free(*buf);
		return -EINVAL;
	}
	return 0;
}

/*
 * lfs_tree_candidate() - find the manifest candidate in tmp/ of a layer
 * that has none in trees/: its header names the layer and the inode of its
 * root. Return: 0 and its store-relative name in @rel, or -ENOENT.
 */
static int lfs_tree_candidate(struct lfs_store *st, const char *diff_id,
			      char *rel, size_t len)
{
	char layer[16 + LFS_SHA256_HEX];
	unsigned long long ino;
	struct stat stb;
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	snprintf(layer, sizeof(layer), "layers/%s", diff_id + 7);
	if (fstatat(st->dirfd, layer, &stb, AT_SYMLINK_NOFOLLOW))
		return -errno;
	d = lfs_store_opendir(st, "tmp");
	if (!d)
		return -errno;
	while (err && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		size_t blen;
		char *buf;

		/* named after the diff_id, the header names the store key */
		if (n < 5 || strcmp(de->d_name + n - 5, ".tree"))
			continue;
		if (lfs_tree_read(dirfd(d), de->d_name, diff_id, &buf, &blen,
				  &ino))
			continue;
		free(buf);
		if (ino == (unsigned long long)stb.st_ino) {
			snprintf(rel, len, "tmp/%s", de->d_name);
			err = 0;
		}
	}
	closedir(d);
	return err;
}

/**
 * lfs_tree_publish() - move the manifest of a layer just renamed into
 * layers/ from tmp/@tmpname.tree to trees/HEX, and sync trees/
 */
int lfs_tree_publish(struct lfs_store *st, const char *tmpname,
		     const char *diff_id)
{
	char from[PATH_MAX], to[16 + LFS_SHA256_HEX];

	if (mkdirat(st->dirfd, "trees", 0700) && errno != EEXIST)
		return -errno;
	snprintf(from, sizeof(from), "%s.tree", tmpname);
	snprintf(to, sizeof(to), "trees/%s", diff_id + 7);
	if (renameat(st->dirfd, from, st->dirfd, to))
		return -errno;
	return lfs_store_sync_dir(st, "trees");
}

/**
 * lfs_tree_repair() - give every layer without a manifest its candidate
 * from tmp/ (what a crash between the two renames left)
 *
 * Caller holds the store lock exclusively (gc), before tmp/ is emptied.
 */
int lfs_tree_repair(struct lfs_store *st)
{
	char rel[PATH_MAX], to[16 + LFS_SHA256_HEX], diff[LFS_DIGEST_LEN + 1];
	struct dirent *de;
	struct stat stb;
	bool moved = false;
	int err = 0;
	DIR *d;

	d = lfs_store_opendir(st, "layers");
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!err && (de = readdir(d))) {
		if (strlen(de->d_name) != LFS_SHA256_HEX)
			continue;
		snprintf(to, sizeof(to), "trees/%s", de->d_name);
		if (!fstatat(st->dirfd, to, &stb, AT_SYMLINK_NOFOLLOW))
			continue;
		snprintf(diff, sizeof(diff), "sha256:%s", de->d_name);
		if (lfs_tree_candidate(st, diff, rel, sizeof(rel)))
			continue;
		if (mkdirat(st->dirfd, "trees", 0700) && errno != EEXIST)
			err = -errno;
		else if (renameat(st->dirfd, rel, st->dirfd, to))
			err = -errno;
		else
			moved = true;
	}
	closedir(d);
	if (!err && moved)
		err = lfs_store_sync_dir(st, "trees");
	return err;
}

/* a field of a manifest line: "key=value", or the path (no '=') */
struct lfs_field {
	const char *key, *val;
	size_t klen, vlen;
};

/* split the fields of @line after its path; Return: their number */
static size_t lfs_fields(const char *line, struct lfs_field *f, size_t max)
{
	const char *p = strchr(line, ' '), *end, *eq;
	size_t n = 0;

	while (p && *p == ' ' && n < max) {
		p++;
		end = strchr(p, ' ');
		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', end - p);
		if (eq) {
			f[n].key = p;
			f[n].klen = eq - p;
			f[n].val = eq + 1;
			f[n].vlen = end - eq - 1;
			n++;
		}
		p = end;
	}
	return n;
}

#define LFS_MAX_FIELDS 1024

/* the state of a verify of one layer */
struct lfs_verify {
	const char *layer; /* "sha256:HEX", for messages */
	json_t *index; /* escaped path -> line number in @lines */
	char **lines; /* the manifest's entry lines */
	size_t nlines;
	bool *seen; /* lines the walk found */
	unsigned long diffs;
	struct lfs_field a[LFS_MAX_FIELDS], b[LFS_MAX_FIELDS];
};

static void lfs_verify_report(struct lfs_verify *v, const char *path,
			      size_t plen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void lfs_verify_report(struct lfs_verify *v, const char *path,
			      size_t plen, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* the path is escaped already: printable, no quote */
	lfs_err("layer %s: entry \"%.*s\": %s", v->layer, (int)plen, path, msg);
	v->diffs++;
}

/* "xattr NAME" for x.NAME, else the key */
static void lfs_field_name(const struct lfs_field *f, char *buf, size_t len)
{
	if (f->klen > 2 && !strncmp(f->key, "x.", 2))
		snprintf(buf, len, "xattr %.*s", (int)f->klen - 2, f->key + 2);
	else
		snprintf(buf, len, "%.*s", (int)f->klen, f->key);
}

static const struct lfs_field *lfs_field_find(const struct lfs_field *f,
					      size_t n,
					      const struct lfs_field *k)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (f[i].klen == k->klen && !memcmp(f[i].key, k->key, k->klen))
			return &f[i];
	return NULL;
}

/* a pointer whose object does not hold what it says */
static void lfs_verify_pointer(struct lfs_walk *w, const char *path,
			       size_t pathlen, const char *msg)
{
	lfs_verify_report(w->ctx, path, pathlen, "%s", msg);
}

/* compare the walk's line of one entry with the manifest's */
static int lfs_emit_verify(struct lfs_walk *w, const char *line,
			   size_t pathlen)
{
	struct lfs_verify *v = w->ctx;
	const struct lfs_field *o;
	char name[300];
	size_t na, nb, i, idx;
	json_t *j;
	char *path;

	path = strndup(line, pathlen);
	if (!path)
		return -ENOMEM;
	j = json_object_get(v->index, path);
	free(path);
	if (!j) {
		lfs_verify_report(v, line, pathlen, "not in the tree manifest");
		return 0;
	}
	idx = json_integer_value(j);
	v->seen[idx] = true;
	if (!strcmp(v->lines[idx], line))
		return 0;
	/* a: recorded, b: now */
	na = lfs_fields(v->lines[idx], v->a, LFS_MAX_FIELDS);
	nb = lfs_fields(line, v->b, LFS_MAX_FIELDS);
	for (i = 0; i < na; i++) {
		lfs_field_name(&v->a[i], name, sizeof(name));
		o = lfs_field_find(v->b, nb, &v->a[i]);
		if (!o)
			lfs_verify_report(v, line, pathlen,
					  "%s missing, recorded %.*s", name,
					  (int)v->a[i].vlen, v->a[i].val);
		else if (o->vlen != v->a[i].vlen ||
			 memcmp(o->val, v->a[i].val, o->vlen))
			lfs_verify_report(v, line, pathlen,
					  "%s %.*s, recorded %.*s", name,
					  (int)o->vlen, o->val,
					  (int)v->a[i].vlen, v->a[i].val);
	}
	for (i = 0; i < nb; i++) {
		if (lfs_field_find(v->a, na, &v->b[i]))
			continue;
		lfs_field_name(&v->b[i], name, sizeof(name));
		lfs_verify_report(v, line, pathlen, "%s %.*s, not recorded",
				  name, (int)v->b[i].vlen, v->b[i].val);
	}
	return 0;
}

/*
 * lfs_tree_verify() - walk layers/HEX and compare it with its manifest
 * @diffs: gets the number of differences reported (on stderr)
 *
 * Return: 0 (differences or not), or -errno if the layer or its
 * manifest cannot be read (reported, and counted as a difference where
 * it is the store's fault: a layer or manifest missing).
 */
int lfs_tree_verify(struct lfs_store *st, const char *diff_id,
		    unsigned long *diffs)
{
	char rel[PATH_MAX], layer[16 + LFS_SHA256_HEX];
	struct lfs_verify v = { .layer = diff_id };
	unsigned long long ino;
	char *buf = NULL, *p, *nl, *sp;
	size_t len, i;
	int rootfd, err;

	*diffs = 0;
	snprintf(layer, sizeof(layer), "layers/%s", diff_id + 7);
	rootfd = openat(st->dirfd, layer,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0) {
		err = -errno;
		lfs_err("layer %s: %s", diff_id,
			err == -ENOENT ? "missing from the store" :
					 strerror(-err));
		*diffs = 1;
		return 0;
	}
	snprintf(rel, sizeof(rel), "trees/%s", diff_id + 7);
	err = lfs_tree_read(st->dirfd, rel, diff_id, &buf, &len, &ino);
	if (err == -ENOENT &&
	    !lfs_tree_candidate(st, diff_id, rel, sizeof(rel)))
		err = lfs_tree_read(st->dirfd, rel, diff_id, &buf, &len, &ino);
	if (err) {
		lfs_err("layer %s: %s", diff_id,
			err == -ENOENT ?
				"no tree manifest (imported by an oci2ovl without verify, or its import was killed): it cannot be verified" :
				err == -EINVAL ? "the tree manifest is not one" :
						 strerror(-err));
		*diffs = 1;
		close(rootfd);
		return 0;
	}
	err = -ENOMEM;
	v.index = json_object();
	if (!v.index)
		goto out;
	/* the lines after the header, each indexed by its path */
	p = strchr(buf, '\n');
	for (p = p ? p + 1 : buf + len; *p; p = nl + 1) {
		char **nv;

		nl = strchr(p, '\n');
		if (!nl)
			break;
		*nl = '\0';
		nv = realloc(v.lines, (v.nlines + 1) * sizeof(*v.lines));
		if (!nv)
			goto out;
		v.lines = nv;
		v.lines[v.nlines] = p;
		sp = strchr(p, ' ');
		if (sp)
			*sp = '\0';
		json_object_set_new(v.index, p, json_integer(v.nlines));
		if (sp)
			*sp = ' ';
		v.nlines++;
	}
	v.seen = calloc(v.nlines + 1, sizeof(*v.seen));
	if (!v.seen)
		goto out;
	err = lfs_walk(rootfd, lfs_emit_verify, &v, NULL, st,
		       lfs_verify_pointer);
	if (err) {
		lfs_err("layer %s: %s", diff_id, strerror(-err));
		goto out;
	}
	for (i = 0; i < v.nlines; i++)
		if (!v.seen[i])
			lfs_verify_report(&v, v.lines[i],
					  strchrnul(v.lines[i], ' ') - v.lines[i],
					  "missing");
	*diffs = v.diffs;
out:
	json_decref(v.index);
	free(v.seen);
	free(v.lines);
	free(buf);
	close(rootfd);
	return err;
}
