// SPDX-License-Identifier: GPL-2.0
/*
 * The layer store:
 *
 *   STORE/lock              flock(2): shared by every run that reads or
 *                           imports, exclusive for gc
 *   STORE/whiteout          "native" or "chardev": the layers' format
 *   STORE/layers/HEX/       one layer, named by its diff_id's hex or, if
 *                           it depends on the layers below, by its chain
 *                           key's (import.c) (0700)
 *   STORE/images/NAME.json  one image: its layers top-first, digests, config
 *   STORE/tmp/              layers being extracted, pulls (0700)
 *
 * A layer appears in layers/ only by rename(RENAME_NOREPLACE) of a complete,
 * verified, synced directory from tmp/; an image record only by rename of a
 * synced file. So readers never see a partial layer or record, and two
 * imports of one layer race harmlessly: the second rename fails, its copy is
 * removed. gc, holding the lock exclusively, is the only run that deletes
 * layers and the leftovers of interrupted runs in tmp/.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci2ovl.h"

/* mkdir -p */
static int lfs_mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	char *p;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

static int lfs_store_read_format(struct lfs_store *st)
{
	char *buf;
	size_t len;
	int err;

	err = lfs_read_file_at(st->dirfd, "whiteout", 64, &buf, &len);
	if (err == -ENOENT)
		return 0;
	if (err)
		return err;
	buf[strcspn(buf, "\n")] = '\0';
	err = lfs_whiteout_fmt_parse(buf, &st->fmt);
	free(buf);
	if (err) {
		lfs_err("store %s: unknown layer format in %s/whiteout",
			st->path, st->path);
		return err;
	}
	st->fmt_known = true;
	return 0;
}

/**
 * lfs_store_open() - open (or create) the store and take its lock
 * @create: create the store if it is not there
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
	if (create &&
	    ((mkdirat(st->dirfd, "layers", 0700) && errno != EEXIST) ||
	     (mkdirat(st->dirfd, "images", 0755) && errno != EEXIST) ||
	     (mkdirat(st->dirfd, "tmp", 0700) && errno != EEXIST))) {
		err = -errno;
		goto fail;
	}
	st->lockfd = openat(
		st->dirfd, "lock",
		(create ? O_CREAT : 0) | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->lockfd < 0) {
		err = -errno;
		goto fail;
	}
	if (flock(st->lockfd, exclusive ? LOCK_EX : LOCK_SH)) {
		err = -errno;
		goto fail;
	}
	err = lfs_store_read_format(st);
	if (err)
		goto fail;
	return 0;
fail:
	if (err != -ENOENT || create)
		lfs_err("store %s: %s", path, strerror(-err));
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

/* record the store's whiteout format on first use; it never changes */
int lfs_store_set_format(struct lfs_store *st, enum lfs_whiteout_fmt fmt)
{
	const char *name = lfs_whiteout_fmt_name(fmt);
	char line[16];
	int fd, err = 0;

	if (st->fmt_known)
		return st->fmt == fmt ? 0 : -EINVAL;
	fd = openat(st->dirfd, "whiteout",
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST) {
		/* a concurrent first import won the race */
		err = lfs_store_read_format(st);
		return err ? err : (st->fmt == fmt ? 0 : -EINVAL);
	}
	if (fd < 0)
		return -errno;
	snprintf(line, sizeof(line), "%s\n", name);
	if (write(fd, line, strlen(line)) != (ssize_t)strlen(line) || fsync(fd))
		err = -errno;
	close(fd);
	if (!err) {
		st->fmt = fmt;
		st->fmt_known = true;
	}
	return err;
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

/* move a finished layer into layers/; a copy already there wins */
int lfs_store_commit_layer(struct lfs_store *st, const char *tmpname,
			   const char *diff_id)
{
	char rel[16 + LFS_SHA256_HEX];

	snprintf(rel, sizeof(rel), "layers/%s", diff_id + 7);
	if (!renameat2(st->dirfd, tmpname, st->dirfd, rel, RENAME_NOREPLACE))
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return -errno;
	return lfs_rm_tree_at(st->dirfd, tmpname);
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

/* images/NAME.json: layers top-first */
int lfs_store_write_image(struct lfs_store *st, const char *name,
			  const struct lfs_image *img)
{
	json_t *rec, *layers;
	char rel[PATH_MAX];
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
	snprintf(rel, sizeof(rel), "images/%s.json", name);
	err = lfs_write_file_atomic(st->dirfd, rel, text, strlen(text));
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
			lfs_err("store %s: layer %s is missing", st->path,
				diff);
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
	int fd;

	fd = openat(st->dirfd, "images", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
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
				 st->path, names[i]);
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

int lfs_store_rm_image(struct lfs_store *st, const char *name)
{
	char rel[PATH_MAX];

	if (!lfs_valid_image_name(name))
		return -EINVAL;
	snprintf(rel, sizeof(rel), "images/%s.json", name);
	return unlinkat(st->dirfd, rel, 0) ? -errno : 0;
}

/* remove every entry of @sub not in @keep (NULL: remove all) */
static int lfs_gc_dir(struct lfs_store *st, const char *sub, json_t *keep,
		      unsigned int *removed)
{
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = openat(st->dirfd, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (keep && json_object_get(keep, de->d_name))
			continue;
		err = lfs_rm_tree_at(fd, de->d_name);
		if (err)
			break;
		(*removed)++;
	}
	closedir(d);
	return err;
}

/**
 * lfs_store_gc() - remove layers no image refers to, and tmp/ leftovers
 *
 * Caller must hold the store lock exclusively. Stops, removing nothing,
 * if any image record cannot be read: its layers might be in use.
 */
int lfs_store_gc(struct lfs_store *st, unsigned int *removed)
{
	json_t *keep = json_object(), *rec, *l;
	char **names;
	size_t n, i, j;
	int err;

	if (!keep)
		return -ENOMEM;
	err = lfs_store_names(st, &names, &n);
	if (err)
		goto out;
	for (i = 0; i < n && !err; i++) {
		err = lfs_store_read_image(st, names[i], &rec);
		if (err) {
			lfs_err("store %s: image %s: unreadable record; nothing removed",
				st->path, names[i]);
			break;
		}
		json_array_foreach(json_object_get(rec, "layers"), j, l)
		{
			const char *diff = lfs_store_layer_key(l);

			if (diff)
				json_object_set_new(keep, diff + 7,
						    json_true());
		}
		json_decref(rec);
	}
	lfs_free_names(names, n);
	*removed = 0;
	if (!err)
		err = lfs_gc_dir(st, "layers", keep, removed);
	if (!err)
		err = lfs_gc_dir(st, "tmp", NULL, removed);
out:
	json_decref(keep);
	return err;
}
