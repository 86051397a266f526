// SPDX-License-Identifier: GPL-2.0
/*
 * The layer store:
 *
 *   STORE/lock              flock(2): shared by every run that reads or
 *                           imports, exclusive for gc; it has no content
 *   STORE/whiteout          "native\n" or "chardev\n": the layers' format
 *   STORE/data              "inline\n" or "objects\n": where regular
 *                           files' data is (objects.c); a store with a
 *                           whiteout file and no data file is inline
 *   STORE/objects/XX/REST   the objects of an "objects" store (objects.c)
 *   STORE/layers/HEX/       one layer, named by its store key's hex: its
 *                           diff_id's or, if it depends on the layers
 *                           below, its chain key's (import.c) (0700)
 *   STORE/images/NAME.json  one image: its layers top-first, digests, config
 *   STORE/tmp/              layers being extracted, pulls, files about to
 *                           be published (0700)
 *   STORE/leases/ID.json    one live mount of an image (lease.c)
 *   STORE/trees/HEX         the tree manifest of layers/HEX (tree.c)
 *
 * Creating the store is idempotent and crash-safe: the directories come
 * first (mkdir, EEXIST is fine), the lock file last, so a store without
 * its lock is not there yet for readers, and the next import completes
 * it. The lock needs no content.
 *
 * Every file with content appears by rename (or link) of a complete file
 * written and fsynced in tmp/, and every rename or link that publishes is
 * followed by an fsync of the directory it publishes into (lfs_store_sync
 * says which, --no-sync skips both). A layer appears in layers/ only by
 * rename(RENAME_NOREPLACE) of a complete, verified, synced directory from
 * tmp/. So readers never see a partial layer, record or format file, and
 * two imports of one layer race harmlessly: the second rename fails, its
 * copy is removed. gc, holding the lock exclusively, is the only run that
 * deletes layers and the leftovers of interrupted runs in tmp/.
 *
 * Decisions that read the store and then change it (the whiteout format
 * of a new store, whether a record may be replaced or removed, a lease
 * and its mount) are made under the meta lock, flock(LOCK_EX) of the
 * store directory itself, held for a few syscalls (a mount(2)) by a run
 * that already holds STORE/lock shared. Like STORE/lock it goes with the
 * process.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci2ovl.h"

/**
 * lfs_test_point() - a point where the tests kill or pause a run
 *
 * OCI2OVL_TEST_CRASH=POINT kills the process with SIGKILL at @point (a
 * crash at the worst moment), OCI2OVL_TEST_PAUSE=POINT sleeps 0.3 s there
 * (so that concurrent runs look at the store in that window). Neither
 * changes what the run does otherwise. See docs/oci2ovl.md, Tests.
 */
void lfs_test_point(const char *point)
{
	const char *crash = getenv("OCI2OVL_TEST_CRASH");
	const char *pause = getenv("OCI2OVL_TEST_PAUSE");
	struct timespec ts = { 0, 300000000L };

	if (pause && !strcmp(pause, point))
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	if (crash && !strcmp(crash, point))
		raise(SIGKILL);
}

/* fsync the directory @path (relative to @dirfd) */
static int lfs_fsync_dir_at(int dirfd, const char *path)
{
	int fd, err = 0;

	fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

/* fsync a directory under the store ("" for the store itself) */
int lfs_store_sync_dir(const struct lfs_store *st, const char *sub)
{
	return st->sync ? lfs_fsync_dir_at(st->dirfd, *sub ? sub : ".") : 0;
}

/* a directory of the store, to read; NULL with errno set */
DIR *lfs_store_opendir(const struct lfs_store *st, const char *sub)
{
	return lfs_fdopendir(
		openat(st->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

/* the meta lock: see the head of this file */
int lfs_store_meta_lock(struct lfs_store *st)
{
	while (flock(st->dirfd, LOCK_EX))
		if (errno != EINTR)
			return -errno;
	return 0;
}

void lfs_store_meta_unlock(struct lfs_store *st)
{
	flock(st->dirfd, LOCK_UN);
}

/* create a file tmp/NAME.XXXXXX for lfs_store_publish(); @rel gets its name */
static int lfs_store_mkstemp(struct lfs_store *st, char *rel, size_t len)
{
	char *full;
	int fd, err = 0;

	if (asprintf(&full, "%s/tmp/publish.XXXXXX", st->path) < 0)
		return -ENOMEM;
	fd = mkostemp(full, O_CLOEXEC);
	if (fd < 0)
		err = -errno;
	else
		snprintf(rel, len, "tmp/%s", strrchr(full, '/') + 1);
	free(full);
	return fd < 0 ? err : fd;
}

/*
 * lfs_store_publish() - make @dir/@name hold @data, atomically
 * @dir: a directory of the store, "" for the store itself
 * @replace: replace a file already there; else -EEXIST if there is one
 *
 * Writes and fsyncs a file in tmp/, renames it (or, without @replace,
 * links it: a link never replaces) to its place and fsyncs @dir. A crash
 * at any point leaves the old file or the new one, and maybe a file in
 * tmp/ for gc. Test point "publish-DIR" ("publish-NAME" in the store
 * itself): written, not yet in place.
 */
int lfs_store_publish(struct lfs_store *st, const char *dir, const char *name,
		      const char *data, size_t len, bool replace)
{
	char tmp[64], dst[PATH_MAX], point[PATH_MAX];
	int fd, err;

	if (snprintf(dst, sizeof(dst), "%s%s%s", dir, *dir ? "/" : "",
		     name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	fd = lfs_store_mkstemp(st, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	if (fchmod(fd, 0644))
		goto out_errno;
	if (lfs_write_full(fd, data, len))
		goto out_errno;
	if (st->sync && fsync(fd))
		goto out_errno;
	close(fd);
	fd = -1;
	snprintf(point, sizeof(point), "publish-%s", *dir ? dir : name);
	lfs_test_point(point);
	if (replace ? renameat(st->dirfd, tmp, st->dirfd, dst) :
		      linkat(st->dirfd, tmp, st->dirfd, dst, 0))
		goto out_errno;
	if (!replace)
		unlinkat(st->dirfd, tmp, 0);
	return lfs_store_sync_dir(st, dir);
out_errno:
	err = -errno;
	if (fd >= 0)
		close(fd);
	unlinkat(st->dirfd, tmp, 0);
	return err;
}

/* fsync the directory that holds @path */
static int lfs_sync_parent(const char *path)
{
	char buf[PATH_MAX], *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	slash = strrchr(buf, '/');
	if (slash == buf)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(buf, ".");
	return lfs_fsync_dir_at(AT_FDCWD, buf);
}

/* mkdir -p; each directory made is synced into its parent */
static int lfs_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1;; p++) {
		bool last = !*p;

		if (*p && *p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, last ? mode : 0755)) {
			if (errno != EEXIST)
				return -errno;
		} else if (lfs_sync_parent(buf)) {
			return -errno;
		}
		if (last)
			return 0;
		*p = '/';
	}
}

/* the subdirectories of a store, made by its first import */
static const struct {
	const char *name;
	mode_t mode;
} lfs_store_dirs[] = {
	{ "layers", 0700 },
	{ "images", 0755 },
	{ "tmp", 0700 },
	{ "leases", 0700 },
	{ "trees", 0700 },
};

/*
 * Make what is missing of the store in @st->dirfd: its directories, then
 * its lock file, each synced into the store directory. A crash in
 * between leaves a store without its lock (not there for readers) that
 * the next import completes.
 */
static int lfs_store_complete(struct lfs_store *st)
{
	bool made = false;
	size_t i;
	int fd;

	for (i = 0; i < sizeof(lfs_store_dirs) / sizeof(lfs_store_dirs[0]);
	     i++) {
		if (!mkdirat(st->dirfd, lfs_store_dirs[i].name,
			     lfs_store_dirs[i].mode))
			made = true;
		else if (errno != EEXIST)
			return -errno;
	}
	if (made && lfs_store_sync_dir(st, ""))
		return -errno;
	fd = openat(st->dirfd, "lock",
		    O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 : -errno;
	close(fd);
	return lfs_store_sync_dir(st, "");
}

/*
 * The one line of the store's file @name, without its newline, into
 * @line (to free). A file without its final newline (empty, or part of a
 * word) is what a crash between creating and writing it left: @line
 * NULL, nothing recorded yet. Return: 0, -ENOENT if it is missing, or
 * -errno.
 */
static int lfs_store_read_line(struct lfs_store *st, const char *name,
			       char **line)
{
	size_t len;
	char *buf;
	int err;

	*line = NULL;
	err = lfs_read_file_at(st->dirfd, name, 64, &buf, &len);
	if (err)
		return err;
	if (!len || buf[len - 1] != '\n') {
		free(buf);
		return 0;
	}
	buf[len - 1] = '\0';
	*line = buf;
	return 0;
}

/*
 * Read STORE/whiteout. A file without its final newline (empty, or part
 * of a word) is what an earlier version left when it crashed, or a
 * concurrent first import was, between creating and writing it: the
 * format is not recorded yet, and lfs_store_set_format() writes it.
 */
static int lfs_store_read_format(struct lfs_store *st)
{
	char *buf;
	int err;

	st->fmt_known = false;
	err = lfs_store_read_line(st, "whiteout", &buf);
	if (err == -ENOENT)
		return 0;
	if (err || !buf)
		return err;
	err = lfs_whiteout_fmt_parse(buf, &st->fmt);
	free(buf);
	if (err) {
		lfs_err("store %s: unknown layer format in %s/whiteout",
			lfs_esc(st->path), lfs_esc(st->path));
		return err;
	}
	st->fmt_known = true;
	return 0;
}

/*
 * Read STORE/data, the data format: "objects" (objects.c) or "inline".
 * Missing in a store whose whiteout format is known: a store of an
 * oci2ovl before objects, inline. A torn file (no final newline) is not
 * recorded yet, as for the whiteout format.
 */
static int lfs_store_read_data(struct lfs_store *st)
{
	char *buf;
	int err;

	st->data_known = false;
	st->objects = false;
	err = lfs_store_read_line(st, "data", &buf);
	if (err == -ENOENT) {
		st->data_known = st->fmt_known;
		return 0;
	}
	if (err || !buf)
		return err;
	if (!strcmp(buf, "objects"))
		st->objects = true;
	else if (strcmp(buf, "inline"))
		err = -EINVAL;
	free(buf);
	if (err) {
		lfs_err("store %s: unknown data format in %s/data",
			lfs_esc(st->path), lfs_esc(st->path));
		return err;
	}
	st->data_known = true;
	return 0;
}

/**
 * lfs_store_open() - open (or create) the store and take its lock
 * @create: create the store if it is not there, or complete it
 * @exclusive: lock exclusively (gc), else shared
 *
 * Return: 0 or -errno (-ENOENT: no store and !@create).
 */
int lfs_store_open(struct lfs_store *st, const char *path, bool create,
		   bool exclusive)
{
	int err;

	memset(st, 0, sizeof(*st));
	st->dirfd = -1;
	st->lockfd = -1;
	st->sync = true;
	if (create) {
		err = lfs_mkdir_p(path, 0755);
		if (err)
			goto fail;
	}
	st->path = realpath(path, NULL);
	if (!st->path) {
		err = -errno;
		goto fail;
	}
	st->dirfd = open(st->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	if (create) {
		err = lfs_store_complete(st);
		if (err)
			goto fail;
	}
	st->lockfd = openat(st->dirfd, "lock",
			    O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (st->lockfd < 0) {
		err = -errno;
		goto fail;
	}
	while (flock(st->lockfd, exclusive ? LOCK_EX : LOCK_SH))
		if (errno != EINTR) {
			err = -errno;
			goto fail;
		}
	err = lfs_store_read_format(st);
	if (!err)
		err = lfs_store_read_data(st);
	if (err)
		goto fail;
	return 0;
fail:
	if (err != -ENOENT || create)
		lfs_err("store %s: %s", lfs_esc(path), strerror(-err));
	lfs_store_close(st);
	return err;
}

void lfs_store_close(struct lfs_store *st)
{
	if (st->lockfd >= 0)
		close(st->lockfd);
	if (st->dirfd >= 0)
		close(st->dirfd);
	free(st->path);
	st->path = NULL;
	st->dirfd = -1;
	st->lockfd = -1;
}

/*
 * lfs_store_set_format() - record the store's formats on first use
 * @fmt: the whiteout format
 * @objects: the data format: objects (objects.c), else inline
 *
 * Under the meta lock, so that of concurrent first imports exactly one
 * decides; each file is published whole (lfs_store_publish), replacing a
 * torn one (test points "publish-data", "publish-whiteout"): the data
 * format first, since a store with a whiteout file and no data file is
 * an inline one. The formats never change.
 *
 * Return: 0, -EINVAL if the store holds another format, or -errno.
 */
int lfs_store_set_format(struct lfs_store *st, enum lfs_whiteout_fmt fmt,
			 bool objects)
{
	char line[16];
	int err;

	if (st->fmt_known && st->data_known)
		return st->fmt == fmt && st->objects == objects ? 0 : -EINVAL;
	err = lfs_store_meta_lock(st);
	if (err)
		return err;
	err = lfs_store_read_format(st);
	if (!err)
		err = lfs_store_read_data(st);
	if (!err && !st->data_known) {
		snprintf(line, sizeof(line), "%s\n",
			 objects ? "objects" : "inline");
		err = lfs_store_publish(st, "", "data", line, strlen(line),
					true);
		if (!err) {
			st->objects = objects;
			st->data_known = true;
		}
	}
	if (!err && !st->fmt_known) {
		snprintf(line, sizeof(line), "%s\n", lfs_whiteout_fmt_name(fmt));
		err = lfs_store_publish(st, "", "whiteout", line, strlen(line),
					true);
		if (!err) {
			st->fmt = fmt;
			st->fmt_known = true;
		}
	}
	lfs_store_meta_unlock(st);
	if (err)
		return err;
	return st->fmt == fmt && st->objects == objects ? 0 : -EINVAL;
}

int lfs_store_layer_dir(const struct lfs_store *st, const char *diff_id,
			char **out)
{
	return asprintf(out, "%s/layers/%s", st->path, diff_id + 7) < 0 ?
		       -ENOMEM :
		       0;
}

bool lfs_store_has_layer(const struct lfs_store *st, const char *diff_id)
{
	char rel[16 + LFS_SHA256_HEX];
	struct stat stb;

	snprintf(rel, sizeof(rel), "layers/%s", diff_id + 7);
	return !fstatat(st->dirfd, rel, &stb, AT_SYMLINK_NOFOLLOW) &&
	       S_ISDIR(stb.st_mode);
}

/* make a directory tmp/PREFIX.XXXXXX; @name gets its store-relative path */
int lfs_store_mktemp(struct lfs_store *st, const char *prefix, char **name)
{
	char *full;
	int err = 0;

	if (asprintf(&full, "%s/tmp/%s.XXXXXX", st->path, prefix) < 0)
		return -ENOMEM;
	if (!mkdtemp(full))
		err = -errno;
	else if (asprintf(name, "tmp/%s", strrchr(full, '/') + 1) < 0)
		err = -ENOMEM;
	free(full);
	return err;
}

/*
 * lfs_store_commit_layer() - move a finished layer into layers/
 *
 * Writes its tree manifest beside it in tmp/ first, then renames the
 * layer, syncs layers/ (test point "layer-renamed": in place, not yet
 * synced) and moves the manifest to trees/. A copy already there wins and
 * ours is removed, with its manifest. @sums: the file digests the
 * extraction of @tmpname recorded, or NULL. The caller synced the layer's
 * files (syncfs) unless --no-sync, and removes @tmpname if this fails.
 */
int lfs_store_commit_layer(struct lfs_store *st, const char *tmpname,
			   const char *diff_id, const struct lfs_filesums *sums)
{
	char rel[16 + LFS_SHA256_HEX], tree[PATH_MAX];
	int err;

	snprintf(rel, sizeof(rel), "layers/%s", diff_id + 7);
	snprintf(tree, sizeof(tree), "%s.tree", tmpname);
	err = lfs_tree_write(st, tmpname, diff_id, sums);
	if (err) {
		lfs_err("layer %s: cannot write its tree manifest: %s", diff_id,
			strerror(-err));
		return err;
	}
	if (renameat2(st->dirfd, tmpname, st->dirfd, rel, RENAME_NOREPLACE)) {
		err = -errno;
		unlinkat(st->dirfd, tree, 0);
		if (err != -EEXIST && err != -ENOTEMPTY)
			return err;
		return lfs_rm_tree_at(st->dirfd, tmpname);
	}
	lfs_test_point("layer-renamed");
	err = lfs_store_sync_dir(st, "layers");
	if (!err)
		err = lfs_tree_publish(st, tmpname, diff_id);
	return err;
}

static json_t *lfs_layer_json(const struct lfs_layer_desc *l)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:s}", "diff_id", l->diff_id,
			 "digest", l->digest, "media_type", l->media_type,
			 "size", (json_int_t)l->size, "store_key",
			 *l->key ? l->key : l->diff_id);
}

/**
 * lfs_store_layer_key() - the name of a record's layer in layers/
 *
 * Its "store_key": the diff_id, or the chain key of a layer whose
 * extraction depended on the layers below it (import.c). Records written
 * before store keys existed name their layers by "diff_id".
 *
 * Return: a digest, or NULL if the record has none valid.
 */
const char *lfs_store_layer_key(json_t *layer)
{
	const char *k = json_string_value(json_object_get(layer, "store_key"));

	if (!k)
		k = json_string_value(json_object_get(layer, "diff_id"));
	return k && lfs_digest_valid(k) ? k : NULL;
}

/*
 * lfs_store_check_name() - may an import of @img be recorded as @name?
 *
 * Yes if there is no image of that name, if it is the same image (the
 * same manifest digest: importing it again changes nothing), or with
 * @replace. Else prints why and returns -LFS_ECONFLICT.
 */
int lfs_store_check_name(struct lfs_store *st, const char *name,
			 const struct lfs_image *img, bool replace)
{
	const char *old;
	json_t *rec;
	int err;

	if (replace)
		return 0;
	err = lfs_store_read_image(st, name, &rec);
	if (err == -ENOENT)
		return 0;
	if (err) {
		lfs_err("store %s: image %s: unreadable record; give --replace to replace it",
			lfs_esc(st->path), lfs_esc(name));
		return err;
	}
	old = json_string_value(json_object_get(rec, "manifest_digest"));
	err = 0;
	if (!old || strcmp(old, img->manifest_digest)) {
		lfs_err("store %s: image %s exists (manifest %s); give --replace to replace it, or another --name",
			lfs_esc(st->path), lfs_esc(name), lfs_esc(old ?: "unknown"));
		err = -LFS_ECONFLICT;
	}
	json_decref(rec);
	return err;
}

/*
 * lfs_store_write_image() - publish images/NAME.json, layers top-first
 *
 * Under the meta lock, as lfs_store_publish() does; without @replace only
 * if lfs_store_check_name() allows it then. A replaced image's layers stay
 * while a lease names them (gc keeps them); a note says so.
 */
int lfs_store_write_image(struct lfs_store *st, const char *name,
			  const struct lfs_image *img, bool replace)
{
	json_t *rec, *layers, *live = NULL, *lease;
	char rel[PATH_MAX], desc[PATH_MAX + 600];
	char *text;
	size_t i;
	int err;

	layers = json_array();
	if (!layers)
		return -ENOMEM;
	for (i = img->nlayers; i-- > 0;)
		json_array_append_new(layers, lfs_layer_json(&img->layers[i]));
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o, s:O}", "name", name,
			"layer_order", "top-first", "whiteout",
			lfs_whiteout_fmt_name(st->fmt), "manifest_digest",
			img->manifest_digest, "config_digest",
			img->config_digest, "layers", layers, "config",
			img->config);
	if (!rec)
		return -ENOMEM;
	text = json_dumps(rec, JSON_INDENT(1) | JSON_SORT_KEYS);
	json_decref(rec);
	if (!text)
		return -ENOMEM;
	snprintf(rel, sizeof(rel), "%s.json", name);
	err = lfs_store_meta_lock(st);
	if (err)
		goto out_free;
	err = lfs_store_check_name(st, name, img, replace);
	if (!err && replace)
		err = lfs_leases_live(st, name, false, &live, NULL);
	if (!err)
		err = lfs_store_publish(st, "images", rel, text, strlen(text),
					true);
	lfs_store_meta_unlock(st);
	if (!err && live) {
		json_array_foreach(live, i, lease)
		{
			const char *md = json_string_value(
				json_object_get(lease, "manifest_digest"));

			if (md && !strcmp(md, img->manifest_digest))
				continue;
			lfs_err("image %s replaced; the old one's layers stay while it is mounted on \"%s\"",
				lfs_esc(name),
				lfs_lease_target(lease, desc, sizeof(desc)));
		}
	}
	json_decref(live);
out_free:
	free(text);
	return err;
}

int lfs_store_read_image(struct lfs_store *st, const char *name, json_t **out)
{
	char rel[PATH_MAX];
	size_t len;
	char *buf;
	int err;

	if (!lfs_valid_image_name(name))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "images/%s.json", name);
	err = lfs_read_file_at(st->dirfd, rel, 16 * LFS_MAX_JSON, &buf, &len);
	if (err)
		return err;
	err = lfs_json_parse(rel, buf, len, out);
	free(buf);
	return err;
}

/* the layer directories of a record, top-first; every one must exist */
int lfs_store_image_layer_dirs(struct lfs_store *st, json_t *rec, char ***dirs,
			       size_t *n)
{
	json_t *layers = json_object_get(rec, "layers"), *l;
	char **d;
	size_t i;
	int err = 0;

	if (!json_is_array(layers))
		return -EINVAL;
	d = calloc(json_array_size(layers) + 1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	json_array_foreach(layers, i, l)
	{
		const char *diff = lfs_store_layer_key(l);

		if (!diff) {
			err = -EINVAL;
			break;
		}
		if (!lfs_store_has_layer(st, diff)) {
			lfs_err("store %s: layer %s is missing",
				lfs_esc(st->path), lfs_esc(diff));
			err = -ENOENT;
			break;
		}
		err = lfs_store_layer_dir(st, diff, &d[i]);
		if (err)
			break;
	}
	if (err) {
		for (i = 0; d[i]; i++)
			free(d[i]);
		free(d);
		return err;
	}
	*dirs = d;
	*n = json_array_size(layers);
	return 0;
}

static int lfs_name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* image names (from images/NAME.json), sorted */
static int lfs_store_names(struct lfs_store *st, char ***names, size_t *n)
{
	struct dirent *de;
	char **v = NULL;
	size_t cnt = 0;
	DIR *d;

	d = lfs_store_opendir(st, "images");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char **nv;

		if (de->d_name[0] == '.' || len < 6 ||
		    strcmp(de->d_name + len - 5, ".json"))
			continue;
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		v[cnt] = strndup(de->d_name, len - 5);
		if (v[cnt])
			cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), lfs_name_cmp);
	*names = v;
	*n = cnt;
	return 0;
}

static void lfs_free_names(char **names, size_t n)
{
	while (n)
		free(names[--n]);
	free(names);
}

/* [{name, manifest_digest, config_digest, layers: count}] */
int lfs_store_list(struct lfs_store *st, json_t **out)
{
	char **names;
	json_t *arr;
	size_t n, i;
	int err;

	err = lfs_store_names(st, &names, &n);
	if (err)
		return err;
	arr = json_array();
	for (i = 0; arr && i < n; i++) {
		json_t *rec;

		if (lfs_store_read_image(st, names[i], &rec)) {
			lfs_warn("store %s: image %s: unreadable record",
				 lfs_esc(st->path), lfs_esc(names[i]));
			continue;
		}
		json_array_append_new(
			arr,
			json_pack("{s:s, s:O?, s:O?, s:I}", "name", names[i],
				  "manifest_digest",
				  json_object_get(rec, "manifest_digest"),
				  "config_digest",
				  json_object_get(rec, "config_digest"),
				  "layers",
				  (json_int_t)json_array_size(
					  json_object_get(rec, "layers"))));
		json_decref(rec);
	}
	lfs_free_names(names, n);
	if (!arr)
		return -ENOMEM;
	*out = arr;
	return 0;
}

/**
 * lfs_store_rm_image() - remove image @name's record
 * @force: even if a live mount uses it (its layers stay while it does)
 *
 * Under the meta lock. Stale leases of the image are dropped.
 *
 * Return: 0, -ENOENT (no such image), -LFS_ECONFLICT (in use; the
 * mounts printed) or -errno.
 */
int lfs_store_rm_image(struct lfs_store *st, const char *name, bool force)
{
	char rel[PATH_MAX], desc[PATH_MAX + 600];
	json_t *live, *lease;
	struct stat stb;
	size_t i;
	int err;

	if (!lfs_valid_image_name(name))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "images/%s.json", name);
	err = lfs_store_meta_lock(st);
	if (err)
		return err;
	if (fstatat(st->dirfd, rel, &stb, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		goto out;
	}
	err = lfs_leases_live(st, name, false, &live, NULL);
	if (err)
		goto out;
	json_array_foreach(live, i, lease)
	{
		lfs_err("image %s is in use: mounted on \"%s\"%s", lfs_esc(name),
			lfs_lease_target(lease, desc, sizeof(desc)),
			force ? "; removed all the same, its layers stay until it is unmounted" :
				"");
	}
	if (json_array_size(live) && !force) {
		lfs_err("image %s: not removed; 'oci2ovl umount' it first, or rm --force",
			lfs_esc(name));
		err = -LFS_ECONFLICT;
	}
	json_decref(live);
	if (err)
		goto out;
	if (unlinkat(st->dirfd, rel, 0))
		err = -errno;
	else
		err = lfs_store_sync_dir(st, "images");
out:
	lfs_store_meta_unlock(st);
	return err;
}

/*
 * Remove every entry of @sub not in @keep (NULL: remove all); in a dry
 * run list them ("SUB/NAME") on stdout instead.
 */
static int lfs_gc_dir(struct lfs_store *st, const char *sub, json_t *keep,
		      bool dry_run, unsigned int *removed)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = lfs_store_opendir(st, sub);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char ebuf[512];

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (keep && json_object_get(keep, de->d_name))
			continue;
		if (dry_run) {
			printf("%s/%s\n", sub,
			       lfs_escape_name(de->d_name, ebuf, sizeof(ebuf)));
		} else {
			err = lfs_rm_tree_at(dirfd(d), de->d_name);
			if (err)
				break;
		}
		(*removed)++;
	}
	closedir(d);
	return err;
}

/*
 * add the store key hex of every layer of @layers (records': their
 * lfs_store_layer_key(); leases': the keys themselves)
 */
static void lfs_gc_keep(json_t *keep, json_t *layers, bool lease)
{
	json_t *l;
	size_t j;

	json_array_foreach(layers, j, l)
	{
		const char *diff = lease ? json_string_value(l) :
					   lfs_store_layer_key(l);

		if (diff && strlen(diff) == LFS_DIGEST_LEN &&
		    !json_object_get(keep, diff + 7))
			json_object_set_new(keep, diff + 7, json_true());
	}
}

/**
 * lfs_store_gc() - remove layers no image or live mount uses, stale
 * leases, and tmp/ leftovers
 * @dry_run: remove nothing; list what would go on stdout
 * @removed: gets the number of layers and leftovers removed (or listed)
 *
 * Caller must hold the store lock exclusively. Stops, removing nothing,
 * if any image record or lease cannot be read: its layers might be in
 * use. Layers kept only for a live mount are named on stderr.
 */
int lfs_store_gc(struct lfs_store *st, bool dry_run, unsigned int *removed)
{
	json_t *keep = json_object(), *rec, *live = NULL, *lease, *l;
	char desc[PATH_MAX + 600];
	unsigned int stale;
	char **names;
	size_t n, i, j;
	int err;

	*removed = 0;
	if (!keep)
		return -ENOMEM;
	err = lfs_store_names(st, &names, &n);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		err = lfs_store_read_image(st, names[i], &rec);
		if (err) {
			lfs_err("store %s: image %s: unreadable record; nothing removed",
				lfs_esc(st->path), lfs_esc(names[i]));
			break;
		}
		lfs_gc_keep(keep, json_object_get(rec, "layers"), false);
		json_decref(rec);
	}
	lfs_free_names(names, n);
	if (err)
		goto out;
	err = lfs_leases_live(st, NULL, dry_run, &live, &stale);
	if (err) {
		lfs_err("store %s: cannot tell which mounts are live; nothing removed",
			lfs_esc(st->path));
		goto out;
	}
	json_array_foreach(live, i, lease)
	{
		json_array_foreach(json_object_get(lease, "layers"), j, l)
		{
			const char *diff = json_string_value(l);

			if (!diff || strlen(diff) != LFS_DIGEST_LEN ||
			    json_object_get(keep, diff + 7))
				continue;
			lfs_err("gc: layer %s kept: %s", lfs_esc(diff),
				lfs_lease_describe(lease, desc, sizeof(desc)));
		}
		lfs_gc_keep(keep, json_object_get(lease, "layers"), true);
	}
	*removed += stale;
	/* manifests that a crash left in tmp/ first, then layers, then theirs */
	if (!dry_run)
		err = lfs_tree_repair(st);
	if (!err)
		err = lfs_gc_dir(st, "layers", keep, dry_run, removed);
	if (!err)
		err = lfs_gc_dir(st, "trees", keep, dry_run, removed);
	if (!err)
		err = lfs_gc_dir(st, "tmp", NULL, dry_run, removed);
	if (!err && !dry_run)
		err = lfs_store_sync_dir(st, "layers");
	/* the layers left decide which objects stay */
	if (!err)
		err = lfs_objects_gc(st, keep, dry_run, removed);
out:
	json_decref(live);
	json_decref(keep);
	return err;
}
