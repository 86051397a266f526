// SPDX-License-Identifier: GPL-2.0
/*
 * The object store: every regular file's data stored once, by its SHA-256.
 *
 *   STORE/objects/XX/REST   the data whose SHA-256 is XXREST (hex, split
 *                           2/62); 0700 directories, files 0444 root
 *
 * In a store of the "objects" format (store.c, chosen by its first import)
 * the extraction (extract.c) writes each regular file's data into a new
 * file of tmp/objects.XXXXXX/ instead of the layer, and the layer's file
 * becomes a metacopy file in the format of overlay (Linux 6.6) and
 * layerfs: a sparse file of the data's size, with its own owner, mode,
 * times and xattrs, and two markers that only oci2ovl writes (the image's
 * own overlay xattrs are dropped at extraction):
 *
 *   trusted.overlay.metacopy  empty, or { u8 version 0, u8 len (4 + the
 *                             digest's size, the value's length), u8
 *                             flags 0, u8 algo (FS_VERITY_HASH_ALG_*),
 *                             digest[] }: the object's fs-verity digest,
 *                             when the object has fs-verity
 *   trusted.overlay.redirect  "/XX/REST": the object, in the data-only
 *                             layer STORE/objects
 *
 * An object is published only by a write that hashed what it wrote: the
 * file is written in tmp/, hashed as it is written (or read back when its
 * data came with holes), fs-verity is enabled on it where the filesystem
 * supports it, and once the layer's diff_id matched and syncfs() wrote it
 * out, it is renamed into objects/XX/REST and the directory synced
 * (lfs_objects_publish()), before the layer is committed. An object that
 * is there already is reused only if its content hashes to its name;
 * else it is replaced. gc (holding the store lock exclusively) removes the
 * objects no layer of the store points at; verify (tree.c) checks each
 * pointer's object.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/fsverity.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

#define LFS_OBJ_BUF (1 << 16)
/* fs-verity's Merkle tree block size: the page size of every arch we run */
#define LFS_VERITY_BLOCK 4096

/* the objects of one layer's import, not published yet */
struct lfs_objects {
	struct lfs_store *st;
	char *tmp; /* tmp/objects.XXXXXX, store-relative */
	int tmpfd; /* open on it */
	json_t *pending; /* hex -> true (replace) / false (new) */
	json_t *markers; /* hex -> the metacopy value, hex-encoded */
	unsigned long seq; /* names the files being written */
	struct lfs_objstats *stats; /* the caller's, else @own */
	struct lfs_objstats own;
	unsigned char buf[LFS_OBJ_BUF];
};

/* "XX/REST" of @hex into @rel (at least 66 bytes) */
static void lfs_object_rel(const char *hex, char *rel, size_t len)
{
	snprintf(rel, len, "%.2s/%s", hex, hex + 2);
}

static bool lfs_is_hex64(const char *s, size_t n)
{
	size_t i;

	if (n != LFS_SHA256_HEX)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* the SHA-256 of what @fd holds, from offset 0 to its end */
static int lfs_object_hash(int fd, unsigned char *buf, size_t len,
			   unsigned char md[32])
{
	struct lfs_sha256 *h;
	off_t off = 0;
	ssize_t r;
	int err = 0;

	h = lfs_sha256_new();
	if (!h)
		return -ENOMEM;
	while ((r = pread(fd, buf, len, off)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		lfs_sha256_update(h, buf, r);
		off += r;
	}
	if (!err)
		lfs_sha256_final_raw(h, md);
	lfs_sha256_free(h);
	return err;
}

/*
 * The metacopy value for the file open in @fd: with its fs-verity digest
 * if it has one (FS_IOC_MEASURE_VERITY), else empty. @mc gets at most
 * LFS_METACOPY_MAX bytes, @mlen their number. Return: 0, or -errno other
 * than "no fs-verity here".
 */
int lfs_object_measure(int fd, unsigned char *mc, size_t *mlen)
{
	/* struct fsverity_digest and room for its digest[] */
	uint64_t buf[(sizeof(struct fsverity_digest) + 64) / 8 + 1];
	struct fsverity_digest *d = (struct fsverity_digest *)buf;

	*mlen = 0;
	memset(buf, 0, sizeof(buf));
	d->digest_size = 64;
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, d)) {
		if (errno == ENODATA || errno == EOPNOTSUPP ||
		    errno == ENOTTY || errno == EINVAL)
			return 0;
		return -errno;
	}
	if (d->digest_size > 64 || !d->digest_size ||
	    d->digest_algorithm > 255)
		return -EIO;
	mc[0] = 0; /* version */
	mc[1] = 4 + d->digest_size; /* len */
	mc[2] = 0; /* flags */
	mc[3] = d->digest_algorithm;
	memcpy(mc + 4, d->digest, d->digest_size);
	*mlen = 4 + d->digest_size;
	return 0;
}

/*
 * Enable fs-verity on the object @name of the tmp directory (no writer
 * may hold it open). The first "not supported here" (EOPNOTSUPP, ENOTTY)
 * turns it off for the rest of the import, and is counted.
 */
static int lfs_object_enable_verity(struct lfs_objects *o, const char *name)
{
	struct fsverity_enable_arg arg = {
		.version = 1,
		.hash_algorithm = FS_VERITY_HASH_ALG_SHA256,
		.block_size = LFS_VERITY_BLOCK,
	};
	int fd, err = 0;

	if (o->stats->verity_off)
		return 0;
	fd = openat(o->tmpfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg) && errno != EEXIST) {
		if (errno == EOPNOTSUPP || errno == ENOTTY) {
			o->stats->verity_off = errno;
		} else {
			err = -errno;
		}
	}
	close(fd);
	return err;
}

/**
 * lfs_objects_begin() - start the objects of one layer's import
 * @stats: counts what was done (NULL: not asked)
 *
 * Caller holds the store lock shared. Return: 0 or -errno.
 */
int lfs_objects_begin(struct lfs_store *st, struct lfs_objstats *stats,
		      struct lfs_objects **out)
{
	struct lfs_objects *o;
	int err;

	o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	o->st = st;
	o->stats = stats ? stats : &o->own;
	o->tmpfd = -1;
	o->pending = json_object();
	o->markers = json_object();
	err = -ENOMEM;
	if (!o->pending || !o->markers)
		goto fail;
	err = lfs_store_mktemp(st, "objects", &o->tmp);
	if (err)
		goto fail;
	o->tmpfd = openat(st->dirfd, o->tmp,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o->tmpfd < 0) {
		err = -errno;
		goto fail;
	}
	*out = o;
	return 0;
fail:
	lfs_objects_end(o);
	return err;
}

/* remove what was not published, and free @o */
void lfs_objects_end(struct lfs_objects *o)
{
	if (!o)
		return;
	if (o->tmpfd >= 0)
		close(o->tmpfd);
	if (o->tmp)
		lfs_rm_tree_at(o->st->dirfd, o->tmp);
	free(o->tmp);
	json_decref(o->pending);
	json_decref(o->markers);
	free(o);
}

/**
 * lfs_objects_create() - a new file for a regular file's data
 * @name: gets its name in the tmp directory (at least 32 bytes)
 *
 * Return: an fd open for reading and writing, or -errno.
 */
int lfs_objects_create(struct lfs_objects *o, char *name, size_t len)
{
	int fd;

	snprintf(name, len, "w.%lu", o->seq++);
	fd = openat(o->tmpfd, name,
		    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	return fd < 0 ? -errno : fd;
}

/* drop the file @name of lfs_objects_create() (the entry failed) */
void lfs_objects_discard(struct lfs_objects *o, const char *name)
{
	unlinkat(o->tmpfd, name, 0);
}

/*
 * Is objects/@rel there with the content @hex names? Return: 1 and its
 * metacopy value if so, 0 if it is missing or holds something else (it
 * is then replaced; a note says so), -errno.
 */
static int lfs_object_existing(struct lfs_objects *o, const char *hex,
				const char *rel, struct lfs_objref *ref)
{
	unsigned char md[32];
	char got[LFS_SHA256_HEX + 1], path[96];
	struct stat stb;
	int fd, err;

	snprintf(path, sizeof(path), "objects/%s", rel);
	fd = lfs_openat2(o->st->dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK,
			 0);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return fd;
	err = fstat(fd, &stb) ? -errno : 0;
	if (!err && !S_ISREG(stb.st_mode)) {
		lfs_warn("store %s: %s is not a regular file; replaced",
			 lfs_esc(o->st->path), path);
		err = -EEXIST;
	}
	if (!err)
		err = lfs_object_hash(fd, o->buf, sizeof(o->buf), md);
	if (!err) {
		lfs_hex(md, sizeof(md), got);
		if (strcmp(got, hex)) {
			lfs_warn("store %s: %s holds other content (sha256 %s); replaced",
				 lfs_esc(o->st->path), path, got);
			err = -EEXIST;
		}
	}
	if (!err)
		err = lfs_object_measure(fd, ref->mc, &ref->mlen);
	close(fd);
	if (err == -EEXIST)
		return 0;
	return err ? err : 1;
}

/* hex-encode @n bytes of @b as a new JSON string */
static json_t *lfs_json_hex(const unsigned char *b, size_t n)
{
	char buf[2 * LFS_METACOPY_MAX + 1];

	lfs_hex(b, n, buf);
	buf[2 * n] = '\0';
	return json_string(buf);
}

static void lfs_unhex(const char *s, unsigned char *b, size_t *n)
{
	size_t i, len = strlen(s) / 2;

	for (i = 0; i < len && i < LFS_METACOPY_MAX; i++)
		sscanf(s + 2 * i, "%2hhx", &b[i]);
	*n = i;
}

/**
 * lfs_objects_add() - the data written in @fd (file @name) as an object
 * @md: its SHA-256 if hashed as written, else NULL (read back here)
 * @ref: gets the object's name and the metacopy value
 *
 * Closes @fd. An object of this content already written by this layer,
 * or in objects/ with the content its name says, is used and @name
 * dropped; else @name becomes the pending object (fs-verity enabled).
 *
 * Return: 0 or -errno.
 */
int lfs_objects_add(struct lfs_objects *o, int fd, const char *name,
		    const unsigned char *md, uint64_t size,
		    struct lfs_objref *ref)
{
	unsigned char own[32];
	char rel[80];
	json_t *mj;
	int err = 0;

	if (!md) {
		err = lfs_object_hash(fd, o->buf, sizeof(o->buf), own);
		md = own;
	}
	close(fd);
	if (err)
		goto drop;
	lfs_hex(md, 32, ref->hex);
	ref->hex[LFS_SHA256_HEX] = '\0';
	ref->mlen = 0;
	mj = json_object_get(o->markers, ref->hex);
	if (mj) {
		lfs_unhex(json_string_value(mj), ref->mc, &ref->mlen);
		o->stats->reused++;
		goto drop;
	}
	lfs_object_rel(ref->hex, rel, sizeof(rel));
	err = lfs_object_existing(o, ref->hex, rel, ref);
	if (err < 0)
		goto drop;
	if (err == 1) {
		err = 0;
		o->stats->reused++;
	} else {
		if (renameat(o->tmpfd, name, o->tmpfd, ref->hex))
			goto drop_errno;
		err = lfs_object_enable_verity(o, ref->hex);
		if (!err) {
			fd = openat(o->tmpfd, ref->hex,
				    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				return -errno;
			err = lfs_object_measure(fd, ref->mc, &ref->mlen);
			close(fd);
		}
		if (err)
			return err;
		json_object_set_new(o->pending, ref->hex, json_true());
		o->stats->written++;
		o->stats->bytes += size;
		if (ref->mlen)
			o->stats->verity++;
		return json_object_set_new(o->markers, ref->hex,
					   lfs_json_hex(ref->mc, ref->mlen)) ?
			       -ENOMEM :
			       0;
	}
	err = json_object_set_new(o->markers, ref->hex,
				  lfs_json_hex(ref->mc, ref->mlen)) ?
		      -ENOMEM :
		      0;
	goto drop;
drop_errno:
	err = -errno;
drop:
	unlinkat(o->tmpfd, name, 0);
	return err;
}

/**
 * lfs_objects_mark() - make the layer's file @fd point at @ref's object
 *
 * Its data must be gone already (a sparse file of the data's size).
 */
int lfs_objects_mark(int fd, const struct lfs_objref *ref)
{
	char redirect[LFS_SHA256_HEX + 3];

	snprintf(redirect, sizeof(redirect), "/%.2s/%s", ref->hex,
		 ref->hex + 2);
	if (fsetxattr(fd, LFS_XATTR_METACOPY, ref->mc, ref->mlen, 0) ||
	    fsetxattr(fd, LFS_XATTR_REDIRECT, redirect, strlen(redirect), 0))
		return -errno;
	return 0;
}

/**
 * lfs_objects_publish() - move the layer's new objects into objects/
 *
 * After the layer's diff_id matched and its files (these included) were
 * synced. Each object is renamed to objects/XX/REST (replacing one that
 * held other content), then objects/ and each XX/ it touched are synced.
 * Test point "objects-published": in place, not yet synced.
 */
int lfs_objects_publish(struct lfs_objects *o)
{
	struct lfs_store *st = o->st;
	const char *hex;
	json_t *synced, *v;
	char rel[96];
	int err = 0;

	synced = json_object();
	if (!synced)
		return -ENOMEM;
	if (mkdirat(st->dirfd, "objects", 0700)) {
		if (errno != EEXIST) {
			err = -errno;
			goto out;
		}
	} else {
		err = lfs_store_sync_dir(st, "");
	}
	json_object_foreach(o->pending, hex, v)
	{
		snprintf(rel, sizeof(rel), "objects/%.2s", hex);
		if (mkdirat(st->dirfd, rel, 0700)) {
			if (errno != EEXIST) {
				err = -errno;
				break;
			}
		} else {
			json_object_set_new(synced, "objects", json_true());
		}
		json_object_set_new(synced, rel, json_true());
		snprintf(rel, sizeof(rel), "objects/%.2s/%s", hex, hex + 2);
		if (renameat(o->tmpfd, hex, st->dirfd, rel)) {
			err = -errno;
			break;
		}
	}
	lfs_test_point("objects-published");
	json_object_foreach(synced, hex, v)
	{
		if (!err)
			err = lfs_store_sync_dir(st, hex);
	}
out:
	json_decref(synced);
	if (err)
		lfs_err("store %s: cannot publish objects: %s",
			lfs_esc(st->path), strerror(-err));
	return err;
}

/**
 * lfs_object_pointer_at() - does the regular file @name of @dirfd point
 * at an object?
 * @ref: gets the object's name and the metacopy value
 * @why: on -LFS_EREFUSED, what is wrong with the markers
 *
 * Return: 1 if it has a redirect (and both markers are well formed), 0
 * if it has no redirect, -LFS_EREFUSED if they are malformed, -errno.
 */
int lfs_object_pointer_at(int dirfd, const char *name, struct lfs_objref *ref,
			  const char **why)
{
	char p[64 + NAME_MAX + 2], redirect[LFS_SHA256_HEX + 8];
	ssize_t n;

	if (*name)
		snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dirfd, name);
	else
		snprintf(p, sizeof(p), "/proc/self/fd/%d", dirfd);
	n = lgetxattr(p, LFS_XATTR_REDIRECT, redirect, sizeof(redirect));
	if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
		return 0;
	if (n < 0 && errno != ERANGE)
		return -errno;
	*why = "redirect is not the name of an object (/XX/ and 62 hex digits)";
	if (n != LFS_SHA256_HEX + 2 || redirect[0] != '/' || redirect[3] != '/')
		return -LFS_EREFUSED;
	memcpy(ref->hex, redirect + 1, 2);
	memcpy(ref->hex + 2, redirect + 4, LFS_SHA256_HEX - 2);
	ref->hex[LFS_SHA256_HEX] = '\0';
	if (!lfs_is_hex64(ref->hex, strlen(ref->hex)))
		return -LFS_EREFUSED;
	n = lgetxattr(p, LFS_XATTR_METACOPY, ref->mc, sizeof(ref->mc));
	*why = "redirect without a metacopy marker";
	if (n < 0 && (errno == ENODATA || errno == ENOTSUP))
		return -LFS_EREFUSED;
	*why = "metacopy marker not understood";
	if (n < 0 && errno == ERANGE)
		return -LFS_EREFUSED;
	if (n < 0)
		return -errno;
	ref->mlen = n;
	if (n && (n < 4 || ref->mc[0] != 0 || ref->mc[1] != n ||
		  ref->mc[2] != 0 ||
		  !((ref->mc[3] == FS_VERITY_HASH_ALG_SHA256 && n == 36) ||
		    (ref->mc[3] == FS_VERITY_HASH_ALG_SHA512 && n == 68) ||
		    (ref->mc[3] == 0 && n == 4))))
		return -LFS_EREFUSED;
	if (n == 4)
		ref->mlen = 0; /* the struct without a digest: as empty */
	return 1;
}

/**
 * lfs_object_check() - does objects/@ref's object hold what @ref says?
 * @objfd: STORE/objects, or -1 if the store has none
 * @size: the metacopy file's size, which the object's must be
 * @hash: hash the object's content (else only its size and fs-verity)
 * @why: on 1, what is wrong (a static string or @buf)
 *
 * Return: 0 if it matches, 1 if not (@why says how), -errno.
 */
int lfs_object_check(int objfd, const struct lfs_objref *ref, uint64_t size,
		     bool hash, char *buf, size_t len, const char **why)
{
	unsigned char md[32], mc[LFS_METACOPY_MAX], *io;
	char rel[80], got[LFS_SHA256_HEX + 1];
	struct stat stb;
	size_t mlen;
	int fd, err;

	*why = "its object is missing";
	if (objfd < 0)
		return 1;
	lfs_object_rel(ref->hex, rel, sizeof(rel));
	fd = lfs_openat2(objfd, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd == -ENOENT || fd == -ELOOP || fd == -ENOTDIR)
		return 1;
	if (fd < 0)
		return fd;
	err = 1;
	*why = "its object is not a regular file";
	if (fstat(fd, &stb)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(stb.st_mode))
		goto out;
	if ((uint64_t)stb.st_size != size) {
		snprintf(buf, len, "its object holds %llu bytes, the file %llu",
			 (unsigned long long)stb.st_size,
			 (unsigned long long)size);
		*why = buf;
		goto out;
	}
	if (hash) {
		io = malloc(LFS_OBJ_BUF);
		if (!io) {
			err = -ENOMEM;
			goto out;
		}
		err = lfs_object_hash(fd, io, LFS_OBJ_BUF, md);
		free(io);
		if (err == -EIO) {
			/* fs-verity refused a block: the data changed */
			*why = "its object cannot be read (EIO: fs-verity found it changed?)";
			err = 1;
			goto out;
		}
		if (err)
			goto out;
		lfs_hex(md, sizeof(md), got);
		err = 1;
		if (strcmp(got, ref->hex)) {
			snprintf(buf, len, "its object holds other content (sha256 %s)",
				 got);
			*why = buf;
			goto out;
		}
	}
	err = lfs_object_measure(fd, mc, &mlen);
	if (err)
		goto out;
	err = 1;
	if (mlen != ref->mlen || memcmp(mc, ref->mc, mlen)) {
		*why = !ref->mlen ? "its object has fs-verity, the metacopy marker no digest" :
		       !mlen	  ? "its object has no fs-verity, the metacopy marker a digest" :
				    "its object's fs-verity digest differs from the metacopy marker's";
		goto out;
	}
	err = 0;
out:
	close(fd);
	return err;
}

/*
 * The pointers of the layer directory @dirfd and below, each handed to
 * @fn. One fd a level, as the tree walk (tree.c).
 */
static int lfs_objects_walk(int dirfd,
			    int (*fn)(void *ctx, const struct lfs_objref *ref),
			    void *ctx)
{
	struct lfs_objref ref;
	struct dirent *de;
	const char *why;
	int err = 0;
	DIR *d;

	d = lfs_opendir_dup(dirfd);
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		unsigned char type = de->d_type;
		struct stat stb;
		int sub;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd, de->d_name, &stb,
				    AT_SYMLINK_NOFOLLOW)) {
				err = -errno;
				break;
			}
			type = S_ISDIR(stb.st_mode) ? DT_DIR :
			       S_ISREG(stb.st_mode) ? DT_REG :
						      DT_UNKNOWN;
		}
		if (type == DT_DIR) {
			sub = openat(dirfd, de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);
			if (sub < 0) {
				err = -errno;
				break;
			}
			err = lfs_objects_walk(sub, fn, ctx);
			close(sub);
		} else if (type == DT_REG) {
			err = lfs_object_pointer_at(dirfd, de->d_name, &ref,
						    &why);
			if (err == 1)
				err = fn(ctx, &ref);
			else if (err == -LFS_EREFUSED)
				err = 0; /* verify reports it; not ours */
		}
	}
	closedir(d);
	return err;
}

/* add @ref's object to the set @ctx */
static int lfs_objects_refer(void *ctx, const struct lfs_objref *ref)
{
	json_t *set = ctx;

	if (json_object_get(set, ref->hex))
		return 0;
	return json_object_set_new(set, ref->hex, json_true()) ? -ENOMEM : 0;
}

/* count pointers, and those with a digest, in @ctx (two uint64_t) */
static int lfs_objects_tally(void *ctx, const struct lfs_objref *ref)
{
	uint64_t *n = ctx;

	n[0]++;
	if (ref->mlen)
		n[1]++;
	return 0;
}

/**
 * lfs_objects_count() - the pointers of layer directories @dirs
 * @pointers: gets the number of metacopy files that point at an object
 * @digests: ... and how many of them carry an fs-verity digest
 */
int lfs_objects_count(char *const *dirs, size_t n, uint64_t *pointers,
		      uint64_t *digests)
{
	uint64_t cnt[2] = { 0, 0 };
	size_t i;
	int fd, err = 0;

	for (i = 0; i < n && !err; i++) {
		fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
		if (fd < 0)
			return -errno;
		err = lfs_objects_walk(fd, lfs_objects_tally, cnt);
		close(fd);
	}
	*pointers = cnt[0];
	*digests = cnt[1];
	return err;
}

/**
 * lfs_objects_gc() - remove the objects no layer in @keep points at
 * @keep: the store keys' hex of the layers that stay
 *
 * Caller holds the store lock exclusively and removed the other layers
 * (or, in a dry run, will not). Every kept layer is walked first: if one
 * cannot be read, nothing is removed. Removed (or listed) objects are
 * "objects/XX/REST" on stdout in a dry run, and added to @removed.
 */
int lfs_objects_gc(struct lfs_store *st, json_t *keep, bool dry_run,
		   unsigned int *removed)
{
	json_t *refs, *v;
	struct dirent *de, *fe;
	const char *hex;
	int objfd, fd, err = 0;
	char rel[80], name[LFS_SHA256_HEX + 1];
	DIR *d, *f;

	objfd = openat(st->dirfd, "objects",
		       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (objfd < 0)
		return errno == ENOENT ? 0 : -errno;
	refs = json_object();
	if (!refs) {
		close(objfd);
		return -ENOMEM;
	}
	json_object_foreach(keep, hex, v)
	{
		snprintf(rel, sizeof(rel), "layers/%s", hex);
		fd = openat(st->dirfd, rel,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0) {
			err = -errno;
			break;
		}
		err = lfs_objects_walk(fd, lfs_objects_refer, refs);
		close(fd);
		if (err)
			break;
	}
	if (err) {
		lfs_err("store %s: cannot read the layers' object pointers (%s); no object removed",
			lfs_esc(st->path), strerror(-err));
		goto out;
	}
	d = lfs_opendir_dup(objfd);
	if (!d) {
		err = -errno;
		goto out;
	}
	while (!err && (de = readdir(d))) {
		if (strlen(de->d_name) != 2 || de->d_name[0] == '.')
			continue;
		f = lfs_fdopendir(openat(objfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC));
		if (!f)
			continue;
		while ((fe = readdir(f))) {
			if (fe->d_name[0] == '.' ||
			    strlen(fe->d_name) != LFS_SHA256_HEX - 2)
				continue;
			snprintf(name, sizeof(name), "%s%s", de->d_name,
				 fe->d_name);
			if (lfs_is_hex64(name, strlen(name)) &&
			    json_object_get(refs, name))
				continue;
			if (dry_run) {
				printf("objects/%s/%s\n", de->d_name,
				       fe->d_name);
			} else if (unlinkat(dirfd(f), fe->d_name, 0) &&
				   errno != ENOENT) {
				err = -errno;
				break;
			}
			(*removed)++;
		}
		if (!err && !dry_run && st->sync && fsync(dirfd(f)))
			err = -errno;
		closedir(f);
	}
	closedir(d);
out:
	json_decref(refs);
	close(objfd);
	return err;
}
