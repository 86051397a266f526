// SPDX-License-Identifier: GPL-2.0
/*
 * import and pull: layout -> verified layers in the store -> image record.
 *
 * Per layer: if layers/HEX exists, HEX being its chain key or its diff_id
 * (see lfs_chain_key()), it is reused. Else the blob's size and digest
 * are checked against the manifest before anything is decompressed;
 * it is extracted into a fresh tmp/ directory, whose diff_id is checked
 * against the config; the directory is synced and renamed into layers/.
 * Any failure removes the temporary directory, so nothing of a refused
 * layer is kept. The record is written last, when every layer is in place.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci2ovl.h"

extern char **environ;

/* the image's layers below the one being imported, just below first */
struct lfs_lower {
	const int *fds;
	const char *const *names;
	size_t n;
};

/*
 * lfs_import_layer() - verify and extract @l, commit it as layers/@l->key
 * @chain: its chain key, the key if the extraction depends on @lower
 */
static int lfs_import_layer(struct lfs_store *st, int layoutfd,
			    struct lfs_layer_desc *l,
			    const struct lfs_import_opts *o,
			    struct lfs_progress *prog, struct lfs_usage *used,
			    const struct lfs_lower *lower, const char *chain)
{
	bool depends = false;
	struct lfs_extract_opts xo = {
		.lim = o->lim,
		.fmt = st->fmt,
		.layer_name = l->digest,
		.diff_id = l->diff_id,
		.comp = l->comp,
		.progress = prog,
		.image = used,
		.lower_fds = lower->fds,
		.lower_names = lower->names,
		.nlower = lower->n,
		.depends_below = &depends,
	};
	struct lfs_objects *objs = NULL;
	char *tmp = NULL;
	int blobfd, rootfd, err;

	xo.sums = lfs_filesums_new();
	if (!xo.sums)
		return -ENOMEM;
	if (o->objects) {
		err = lfs_objects_begin(st, o->stats, &objs);
		if (err) {
			lfs_filesums_free(xo.sums);
			return err;
		}
		xo.objects = objs;
	}
	blobfd = lfs_layout_open_blob(layoutfd, l->digest);
	if (blobfd < 0) {
		lfs_err("layer %s: cannot open blob: %s", l->digest,
			strerror(-blobfd));
		lfs_filesums_free(xo.sums);
		return blobfd;
	}
	err = lfs_verify_blob_fd(blobfd, l->digest, l->digest, l->size);
	if (err)
		goto out_blob;
	err = lfs_store_mktemp(st, l->diff_id + 7, &tmp);
	if (err)
		goto out_blob;
	rootfd = openat(st->dirfd, tmp,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0) {
		err = -errno;
		goto out_rm;
	}
	err = lfs_extract_layer(blobfd, rootfd, &xo);
	/* the layer and its new objects, on one filesystem */
	if (!err && o->sync && syncfs(rootfd))
		err = -errno;
	close(rootfd);
	/* the objects before the layer that points at them */
	if (!err && objs)
		err = lfs_objects_publish(objs);
	if (!err) {
		snprintf(l->key, sizeof(l->key), "%s",
			 depends ? chain : l->diff_id);
		err = lfs_store_commit_layer(st, tmp, l->key, xo.sums);
	}
	if (!err)
		goto out_free;
out_rm:
	lfs_rm_tree_at(st->dirfd, tmp);
out_free:
	free(tmp);
out_blob:
	close(blobfd);
	lfs_filesums_free(xo.sums);
	lfs_objects_end(objs);
	return err;
}

/*
 * The chain key of a layer: sha256 of the text "PREV DIFF_ID", PREV being
 * the chain key of the layer below ("" for the first), as containerd's
 * ChainID but never equal to a diff_id. A layer whose extraction looked
 * below it (an implicit parent, a path this layer does not make) is stored
 * under its chain key, so that another image with other layers below
 * never reuses it; any other layer under its diff_id, shared by all.
 */
static int lfs_chain_key(const char *prev, const char *diff_id,
			 char out[LFS_DIGEST_LEN + 1])
{
	char text[2 * LFS_DIGEST_LEN + 2];
	int n = snprintf(text, sizeof(text), "%s %s", prev, diff_id);

	return lfs_digest_buf(text, n, out);
}

/* room for a descriptor of every layer of a deep image, and some */
static void lfs_raise_nofile(size_t want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = want < rl.rlim_max ? want : rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/**
 * lfs_import() - import image @tag of the layout @layout_dir as @o->name
 *
 * Caller holds the store lock shared.
 *
 * Return: 0, -LFS_EREFUSED (message printed), or -errno.
 */
int lfs_import(struct lfs_store *st, const char *layout_dir, const char *tag,
	       const struct lfs_import_opts *o)
{
	struct lfs_progress prog = { .enabled = isatty(STDERR_FILENO) };
	struct lfs_usage used = { 0 }; /* by the layers unpacked so far */
	char chain[LFS_DIGEST_LEN + 1] = "";
	const char **names = NULL;
	struct lfs_image img;
	size_t i, nopen = 0;
	int layoutfd, err, *fds = NULL;

	err = lfs_layout_resolve(layout_dir, tag, o->platform, &img);
	if (err)
		goto out;
	/* before any work; checked again when the record is published */
	err = lfs_store_check_name(st, o->name, &img, o->replace);
	if (err)
		goto out;
	err = lfs_store_set_format(st, o->fmt, o->objects);
	if (err == -EINVAL && st->fmt != o->fmt)
		lfs_err("store %s holds %s layers; use another store for %s",
			lfs_esc(st->path), lfs_whiteout_fmt_name(st->fmt),
			lfs_whiteout_fmt_name(o->fmt));
	else if (err == -EINVAL)
		lfs_err("store %s holds %s layers; use another store for %s",
			lfs_esc(st->path), st->objects ? "objects" : "inline",
			o->objects ? "--objects" : "inline layers");
	if (err)
		goto out;
	layoutfd = open(layout_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (layoutfd < 0) {
		err = -errno;
		goto out;
	}
	/*
	 * Layer i's directory fd and name at [nlayers - 1 - i]: the layers
	 * below layer i are then [nlayers - i ...], just below first.
	 */
	err = -ENOMEM;
	fds = malloc(img.nlayers * sizeof(*fds));
	names = calloc(img.nlayers, sizeof(*names));
	if (!fds || !names)
		goto out_close;
	lfs_raise_nofile(2 * img.nlayers + 64);
	err = 0;
	prog.count = img.nlayers;
	for (i = 0; i < img.nlayers && !err; i++) {
		struct lfs_layer_desc *l = &img.layers[i];
		size_t at = img.nlayers - 1 - i;
		struct lfs_lower lower = { fds + at + 1, names + at + 1, i };
		char rel[16 + LFS_SHA256_HEX];

		err = lfs_chain_key(chain, l->diff_id, chain);
		if (err)
			break;
		prog.index = i + 1;
		prog.total = l->size;
		prog.done = 0;
		if (lfs_store_has_layer(st, chain) ||
		    lfs_store_has_layer(st, l->diff_id)) {
			snprintf(l->key, sizeof(l->key), "%s",
				 lfs_store_has_layer(st, chain) ? chain :
								  l->diff_id);
			if (prog.enabled)
				fprintf(stderr,
					"%s: layer %zu/%zu %.19s: in the store\n",
					LFS_PROG, i + 1, img.nlayers,
					l->digest);
		} else {
			err = lfs_import_layer(st, layoutfd, l, o, &prog, &used,
					       &lower, chain);
			if (err)
				break;
		}
		snprintf(rel, sizeof(rel), "layers/%s", l->key + 7);
		fds[at] = openat(st->dirfd, rel,
				 O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fds[at] < 0) {
			err = -errno;
			break;
		}
		names[at] = l->digest;
		nopen++;
	}
out_close:
	while (nopen)
		close(fds[img.nlayers - nopen--]);
	free(fds);
	free(names);
	close(layoutfd);
	if (!err)
		err = lfs_store_write_image(st, o->name, &img, o->replace);
	if (!err && o->objects && o->stats && o->stats->verity_off)
		lfs_warn("store %s: objects stored without fs-verity: its filesystem does not support it (%s)",
			 lfs_esc(st->path), strerror(o->stats->verity_off));
	if (err && err != -LFS_EREFUSED && err != -LFS_ECONFLICT)
		lfs_err("import %s:%s: %s", lfs_esc(layout_dir), lfs_esc(tag),
			strerror(-err));
out:
	lfs_image_release(&img);
	return err;
}

/* run argv, wait; 0 when it exits 0 */
static int lfs_run(char *const argv[])
{
	pid_t pid;
	int st, err;

	err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (err) {
		lfs_err("cannot run %s: %s", argv[0], strerror(err));
		return -err;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		lfs_err("%s failed (status %d)", argv[0],
			WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
		return -EIO;
	}
	return 0;
}

/**
 * lfs_pull() - skopeo copy @ref into a temporary layout, then import it
 *
 * Caller holds the store lock shared, so gc leaves the layout alone.
 */
int lfs_pull(struct lfs_store *st, const char *ref,
	     const struct lfs_import_opts *o)
{
	char *tmp, *dir = NULL, *dest = NULL;
	int err;

	err = lfs_store_mktemp(st, "pull", &tmp);
	if (err)
		return err;
	err = -ENOMEM;
	if (asprintf(&dir, "%s/%s", st->path, tmp) < 0) {
		dir = NULL;
		goto out;
	}
	if (asprintf(&dest, "oci:%s:latest", dir) < 0) {
		dest = NULL;
		goto out;
	}
	{
		char *argv[] = { "skopeo",    "copy", "--quiet",
				 (char *)ref, dest,   NULL };

		if (isatty(STDERR_FILENO))
			argv[2] = "--retry-times=1";
		err = lfs_run(argv);
	}
	if (!err)
		err = lfs_import(st, dir, "latest", o);
out:
	lfs_rm_tree_at(st->dirfd, tmp);
	free(dest);
	free(dir);
	free(tmp);
	return err;
}
