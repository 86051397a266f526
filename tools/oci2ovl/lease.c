// SPDX-License-Identifier: GPL-2.0
/*
 * Mount leases: what a live mount of an image uses, so that gc and rm
 * leave it alone.
 *
 *   STORE/leases/ID.json   one mount: {id, image, manifest_digest, target,
 *                          source, fstype, mntns, pidns, layers (store keys,
 *                          top first), time}
 *
 * `oci2ovl mount` publishes a lease, then mounts with the mount source
 * "oci2ovl:IMAGE:ID" (fsconfig "source", or mount(2)'s first argument),
 * under the meta lock. A lease is live while the mount namespace it was
 * made in shows, in its mountinfo, a mount of that source and filesystem
 * type on that target: the ID is random, so the source names this one
 * mount, of these layers. Else it is stale: the mount was unmounted (by
 * `oci2ovl umount`, umount(8), a reboot), or its namespace is gone. Runs
 * that decide on leases (mount, umount, rm, import) hold the meta lock,
 * gc the store lock exclusively; so no run sees a lease whose mount is
 * not made yet, and a stale lease can be dropped by whoever finds it.
 *
 * Another mount namespace is read through /proc/PID/mountinfo of a
 * process in it. If no process is in it, it is gone (unless pinned by an
 * nsfs bind mount, which we cannot see) -- when we see every process of
 * the pid namespace the lease was made in; otherwise the lease cannot be
 * checked and is kept.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci2ovl.h"

#define LFS_LEASE_ID_LEN 32 /* hex digits */

static const char *lfs_lease_str(json_t *lease, const char *key)
{
	return json_string_value(json_object_get(lease, key)) ?: "";
}

/* "mnt:[4026531840]" for @what = "mnt" */
static int lfs_own_ns(const char *what, char *buf, size_t len)
{
	char p[32];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/ns/%s", what);
	n = readlink(p, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

static bool lfs_valid_lease_id(const char *id)
{
	size_t i;

	for (i = 0; id[i]; i++)
		if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
			return false;
	return i == LFS_LEASE_ID_LEN;
}

/**
 * lfs_lease_make() - a new lease for a mount of image @name on @target
 * @rec: the image record (its layers and manifest digest)
 * @target: the absolute, resolved mount point
 * @fstype: the filesystem type the mount will have
 *
 * Return: the lease (the caller owns it), NULL with errno set.
 */
json_t *lfs_lease_make(const char *name, json_t *rec, const char *target,
		       const char *fstype)
{
	unsigned char rnd[LFS_LEASE_ID_LEN / 2];
	char id[LFS_LEASE_ID_LEN + 1], mntns[64], pidns[64], *source;
	json_t *layers, *l, *lease;
	size_t i;

	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return NULL;
	for (i = 0; i < sizeof(rnd); i++)
		sprintf(id + 2 * i, "%02x", rnd[i]);
	if (lfs_own_ns("mnt", mntns, sizeof(mntns)) ||
	    lfs_own_ns("pid", pidns, sizeof(pidns)))
		return NULL;
	layers = json_array();
	if (!layers)
		goto nomem;
	json_array_foreach(json_object_get(rec, "layers"), i, l)
	{
		const char *k = lfs_store_layer_key(l);

		json_array_append_new(layers, k ? json_string(k) : json_null());
	}
	if (asprintf(&source, "oci2ovl:%s:%s", name, id) < 0) {
		json_decref(layers);
		goto nomem;
	}
	lease = json_pack("{s:s, s:s, s:O?, s:s, s:s, s:s, s:s, s:s, s:o, s:I}",
			  "id", id, "image", name, "manifest_digest",
			  json_object_get(rec, "manifest_digest"), "target",
			  target, "source", source, "fstype", fstype, "mntns",
			  mntns, "pidns", pidns, "layers", layers, "time",
			  (json_int_t)time(NULL));
	free(source);
	if (lease)
		return lease;
nomem:
	errno = ENOMEM;
	return NULL;
}

const char *lfs_lease_source(json_t *lease)
{
	return lfs_lease_str(lease, "source");
}

/* publish leases/ID.json (test point "publish-leases"); never replaces */
int lfs_lease_add(struct lfs_store *st, json_t *lease)
{
	char name[LFS_LEASE_ID_LEN + 8];
	char *text;
	int err;

	if (mkdirat(st->dirfd, "leases", 0700) && errno != EEXIST)
		return -errno;
	text = json_dumps(lease, JSON_INDENT(1) | JSON_SORT_KEYS);
	if (!text)
		return -ENOMEM;
	snprintf(name, sizeof(name), "%s.json", lfs_lease_str(lease, "id"));
	err = lfs_store_publish(st, "leases", name, text, strlen(text), false);
	free(text);
	return err;
}

/* remove leases/ID.json and sync leases/; a lease already gone is fine */
int lfs_lease_drop(struct lfs_store *st, json_t *lease)
{
	char rel[LFS_LEASE_ID_LEN + 16];

	snprintf(rel, sizeof(rel), "leases/%s.json", lfs_lease_str(lease, "id"));
	if (unlinkat(st->dirfd, rel, 0) && errno != ENOENT)
		return -errno;
	return lfs_store_sync_dir(st, "leases");
}

/**
 * lfs_leases_read() - every lease of the store, sorted by ID
 *
 * Return: 0 and an array in @out, or -errno; a lease that cannot be read
 * or is not a lease is an error (its message printed): its layers might
 * be in use.
 */
int lfs_leases_read(struct lfs_store *st, json_t **out)
{
	json_t *arr, *lease;
	struct dirent *de;
	int err = 0;
	DIR *d;

	arr = json_array();
	if (!arr)
		return -ENOMEM;
	d = lfs_store_opendir(st, "leases");
	if (!d) {
		if (errno == ENOENT) {
			*out = arr;
			return 0;
		}
		json_decref(arr);
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char id[LFS_LEASE_ID_LEN + 1], ebuf[512];
		char *buf;

		if (de->d_name[0] == '.')
			continue;
		err = -EINVAL;
		if (len != LFS_LEASE_ID_LEN + 5 ||
		    strcmp(de->d_name + LFS_LEASE_ID_LEN, ".json"))
			goto bad;
		snprintf(id, sizeof(id), "%.*s", LFS_LEASE_ID_LEN, de->d_name);
		if (!lfs_valid_lease_id(id))
			goto bad;
		err = lfs_read_file_at(dirfd(d), de->d_name, LFS_MAX_JSON, &buf,
				       &len);
		if (err)
			goto bad;
		err = lfs_json_parse(de->d_name, buf, len, &lease);
		free(buf);
		if (err) {
			err = -EINVAL;
			goto bad;
		}
		if (strcmp(lfs_lease_str(lease, "id"), id) ||
		    !json_is_array(json_object_get(lease, "layers")) ||
		    !*lfs_lease_str(lease, "target") ||
		    !*lfs_lease_str(lease, "source") ||
		    !*lfs_lease_str(lease, "mntns")) {
			json_decref(lease);
			err = -EINVAL;
			goto bad;
		}
		json_array_append_new(arr, lease);
		continue;
bad:
		lfs_err("store %s: lease %s: unreadable (%s)", lfs_esc(st->path),
			lfs_escape_name(de->d_name, ebuf, sizeof(ebuf)),
			strerror(-err));
	}
	closedir(d);
	if (err) {
		json_decref(arr);
		return err;
	}
	*out = arr;
	return 0;
}

/* undo mountinfo's octal escapes (\040 for a space ...) in place */
static void lfs_unoctal(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0');
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/*
 * lfs_mountinfo_find() - the mount ID of a mount of @source, type
 * @fstype, on @target in the mountinfo file @path
 *
 * Return: the mount ID (>= 0), -ENOENT if there is none, or -errno.
 */
static int lfs_mountinfo_find(const char *path, const char *target,
			      const char *source, const char *fstype)
{
	char *line = NULL;
	size_t cap = 0;
	int found = -ENOENT;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (found < 0 && getline(&line, &cap, f) > 0) {
		char *field[5], *sep, *fs, *src, *save;
		int i, id;

		line[strcspn(line, "\n")] = '\0';
		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		save = NULL;
		for (i = 0; i < 5; i++) {
			field[i] = strtok_r(i ? NULL : line, " ", &save);
			if (!field[i])
				break;
		}
		if (i < 5)
			continue;
		save = NULL;
		fs = strtok_r(sep + 3, " ", &save);
		src = strtok_r(NULL, " ", &save);
		if (!fs || !src)
			continue;
		lfs_unoctal(field[4]);
		lfs_unoctal(src);
		id = atoi(field[0]);
		if (!strcmp(field[4], target) && !strcmp(src, source) &&
		    !strcmp(fs, fstype))
			found = id;
	}
	free(line);
	fclose(f);
	return found;
}

/*
 * The mountinfo of mount namespace @ns: ours, or that of a process in it
 * (in @buf). Return: 0, -ENOENT if no process we can see is in it.
 */
static int lfs_ns_mountinfo(const char *ns, char *buf, size_t len)
{
	char own[64], link[64], p[64];
	struct dirent *de;
	int err = -ENOENT;
	DIR *d;

	if (lfs_own_ns("mnt", own, sizeof(own)))
		return -errno;
	if (!strcmp(own, ns)) {
		snprintf(buf, len, "/proc/self/mountinfo");
		return 0;
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		long pid;
		char *end;
		ssize_t n;

		pid = strtol(de->d_name, &end, 10);
		if (!isdigit((unsigned char)de->d_name[0]) || *end || pid <= 0)
			continue;
		snprintf(p, sizeof(p), "/proc/%ld/ns/mnt", pid);
		n = readlink(p, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, ns)) {
			snprintf(buf, len, "/proc/%ld/mountinfo", pid);
			err = 0;
			break;
		}
	}
	closedir(d);
	return err;
}

/**
 * lfs_lease_check() - is the mount of @lease still there?
 * @mnt_id: if not NULL, gets the mount's ID (in our namespace only, else -1)
 * @why: for a stale lease, why; for a live one that cannot be checked, why
 *
 * Return: 1 live (or cannot be checked), 0 stale, -errno.
 */
int lfs_lease_check(json_t *lease, int *mnt_id, const char **why)
{
	const char *ns = lfs_lease_str(lease, "mntns");
	char mi[64], own[64];
	int id, err;

	*why = NULL;
	if (mnt_id)
		*mnt_id = -1;
	err = lfs_ns_mountinfo(ns, mi, sizeof(mi));
	if (err == -ENOENT) {
		if (lfs_own_ns("pid", own, sizeof(own)))
			return -errno;
		if (strcmp(own, lfs_lease_str(lease, "pidns"))) {
			*why = "made in a mount namespace that this pid namespace cannot see";
			return 1;
		}
		*why = "its mount namespace is gone";
		return 0;
	}
	if (err)
		return err;
	id = lfs_mountinfo_find(mi, lfs_lease_str(lease, "target"),
				lfs_lease_source(lease),
				lfs_lease_str(lease, "fstype"));
	if (id == -ENOENT) {
		*why = "not mounted";
		return 0;
	}
	if (id < 0)
		return id;
	if (mnt_id && !strcmp(mi, "/proc/self/mountinfo"))
		*mnt_id = id;
	return 1;
}

/* the lease's mount point, escaped, for messages */
const char *lfs_lease_target(json_t *lease, char *buf, size_t len)
{
	return lfs_escape_name(lfs_lease_str(lease, "target"), buf, len);
}

/* "image NAME mounted on "TARGET"" for messages, escaped */
const char *lfs_lease_describe(json_t *lease, char *buf, size_t len)
{
	char t[PATH_MAX], n[512];

	snprintf(buf, len, "image %s mounted on \"%s\"",
		 lfs_escape_name(lfs_lease_str(lease, "image"), n, sizeof(n)),
		 lfs_lease_target(lease, t, sizeof(t)));
	return buf;
}

/**
 * lfs_leases_live() - the live leases, dropping (unless @dry_run) stale ones
 * @image: only leases of this image, NULL: all
 * @stale: if not NULL, gets the number of stale leases found
 *
 * Caller holds the meta lock, or the store lock exclusively. A stale
 * lease is reported on stderr when it is dropped; in a dry run it is
 * listed on stdout as "leases/ID.json".
 *
 * Return: 0 and an array in @out, or -errno.
 */
int lfs_leases_live(struct lfs_store *st, const char *image, bool dry_run,
		    json_t **out, unsigned int *stale)
{
	json_t *all, *live, *lease;
	char desc[PATH_MAX + 600];
	const char *why;
	size_t i;
	int err, r;

	if (stale)
		*stale = 0;
	err = lfs_leases_read(st, &all);
	if (err)
		return err;
	live = json_array();
	if (!live) {
		json_decref(all);
		return -ENOMEM;
	}
	json_array_foreach(all, i, lease)
	{
		if (image && strcmp(lfs_lease_str(lease, "image"), image))
			continue;
		r = lfs_lease_check(lease, NULL, &why);
		if (r < 0) {
			err = r;
			break;
		}
		if (r) {
			json_array_append(live, lease);
			continue;
		}
		if (stale)
			(*stale)++;
		if (dry_run) {
			printf("leases/%s.json\n", lfs_lease_str(lease, "id"));
			continue;
		}
		err = lfs_lease_drop(st, lease);
		if (err)
			break;
		lfs_err("dropped the lease of %s: %s",
			lfs_lease_describe(lease, desc, sizeof(desc)), why);
	}
	json_decref(all);
	if (err) {
		json_decref(live);
		return err;
	}
	*out = live;
	return 0;
}
