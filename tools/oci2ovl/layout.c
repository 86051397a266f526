// SPDX-License-Identifier: GPL-2.0
/*
 * Reading an OCI image layout: index.json -> (nested index ->) manifest ->
 * config and layer descriptors. Every JSON blob is checked against its
 * descriptor (size, then digest) before it is parsed; JSON is parsed with
 * duplicate keys refused and a size cap (LFS_MAX_JSON). Blobs are opened
 * beneath the layout directory, never through a symlink.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

#define LFS_MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define LFS_MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define LFS_MT_DOCKER_LIST \
	"application/vnd.docker.distribution.manifest.list.v2+json"
#define LFS_MT_DOCKER_MANIFEST \
	"application/vnd.docker.distribution.manifest.v2+json"
#define LFS_REF_NAME "org.opencontainers.image.ref.name"

/* layer media types and their compression */
static const struct {
	const char *mt;
	enum lfs_compression comp;
} lfs_layer_types[] = {
	{ "application/vnd.oci.image.layer.v1.tar", LFS_COMP_NONE },
	{ "application/vnd.oci.image.layer.v1.tar+gzip", LFS_COMP_GZIP },
	{ "application/vnd.oci.image.layer.v1.tar+zstd", LFS_COMP_ZSTD },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar",
	  LFS_COMP_NONE },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
	  LFS_COMP_GZIP },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
	  LFS_COMP_ZSTD },
	{ "application/vnd.docker.image.rootfs.diff.tar", LFS_COMP_NONE },
	{ "application/vnd.docker.image.rootfs.diff.tar.gzip", LFS_COMP_GZIP },
	{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
	  LFS_COMP_GZIP },
};

int lfs_media_type_compression(const char *mt, enum lfs_compression *comp)
{
	size_t i;

	for (i = 0; i < sizeof(lfs_layer_types) / sizeof(lfs_layer_types[0]);
	     i++) {
		if (!strcmp(mt, lfs_layer_types[i].mt)) {
			*comp = lfs_layer_types[i].comp;
			return 0;
		}
	}
	return -ENOENT;
}

/* "oci:DIR:TAG" or "DIR:TAG" */
int lfs_layout_parse_ref(const char *ref, char **dir, char **tag)
{
	const char *colon;

	if (!strncmp(ref, "oci:", 4))
		ref += 4;
	colon = strrchr(ref, ':');
	if (!colon || colon == ref || !colon[1] || strchr(colon + 1, '/'))
		return -EINVAL;
	*dir = strndup(ref, colon - ref);
	*tag = strdup(colon + 1);
	if (!*dir || !*tag) {
		free(*dir);
		free(*tag);
		return -ENOMEM;
	}
	return 0;
}

/**
 * lfs_json_parse() - parse one JSON object, refusing duplicate keys
 * @what: names the document in messages
 *
 * Return: 0, or -LFS_EREFUSED with a message naming the line and column.
 */
int lfs_json_parse(const char *what, const char *buf, size_t len, json_t **out)
{
	json_error_t jerr;
	json_t *j;

	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j)
		return lfs_refuse(
			NULL, NULL,
			"%s: malformed JSON at line %d, column %d: %s", what,
			jerr.line, jerr.column, jerr.text);
	if (!json_is_object(j)) {
		json_decref(j);
		return lfs_refuse(NULL, NULL, "%s: not a JSON object", what);
	}
	*out = j;
	return 0;
}

/* a descriptor's mediaType, digest and size, checked */
static int lfs_desc_parse(json_t *d, const char *what, const char **mt,
			  const char **digest, uint64_t *size)
{
	json_t *jmt = json_object_get(d, "mediaType");
	json_t *jd = json_object_get(d, "digest");
	json_t *js = json_object_get(d, "size");

	if (!json_is_object(d) || !json_is_string(jd) || !json_is_integer(js) ||
	    (jmt && !json_is_string(jmt)))
		return lfs_refuse(
			NULL, NULL,
			"%s: descriptor lacks a string digest or an integer size",
			what);
	if (!lfs_digest_valid(json_string_value(jd)))
		return lfs_refuse(
			NULL, NULL,
			"%s: digest \"%.80s\" is not sha256:<64 hex digits>",
			what, json_string_value(jd));
	if (json_integer_value(js) < 0)
		return lfs_refuse(NULL, NULL, "%s: negative size", what);
	*mt = jmt ? json_string_value(jmt) : "";
	*digest = json_string_value(jd);
	*size = json_integer_value(js);
	return 0;
}

/* open blobs/sha256/HEX under the layout, a regular file only */
int lfs_layout_open_blob(int dirfd, const char *digest)
{
	char path[16 + LFS_SHA256_HEX];
	struct stat stb;
	int fd;

	snprintf(path, sizeof(path), "blobs/sha256/%s", digest + 7);
	fd = lfs_openat2(dirfd, path, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &stb) || !S_ISREG(stb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* read, verify and parse a JSON blob */
static int lfs_read_json_blob(int dirfd, const char *what, const char *digest,
			      uint64_t size, json_t **out)
{
	char label[128];
	char *buf;
	ssize_t r;
	size_t got = 0;
	int fd, err;

	snprintf(label, sizeof(label), "%s %s", what, digest);
	if (size > LFS_MAX_JSON)
		return lfs_refuse(NULL, NULL,
				  "%s: declared size %llu exceeds %u bytes",
				  label, (unsigned long long)size,
				  LFS_MAX_JSON);
	fd = lfs_layout_open_blob(dirfd, digest);
	if (fd < 0) {
		lfs_err("%s: cannot open blob: %s", label, strerror(-fd));
		return fd;
	}
	err = lfs_verify_blob_fd(fd, label, digest, size);
	if (err)
		goto out_close;
	err = -ENOMEM;
	buf = malloc(size + 1);
	if (!buf)
		goto out_close;
	while (got < size) {
		r = read(fd, buf + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			err = r ? -errno : -EIO;
			free(buf);
			goto out_close;
		}
		got += r;
	}
	err = lfs_json_parse(label, buf, size, out);
	free(buf);
out_close:
	close(fd);
	return err;
}

static bool lfs_is_index_type(const char *mt)
{
	return !strcmp(mt, LFS_MT_OCI_INDEX) || !strcmp(mt, LFS_MT_DOCKER_LIST);
}

static bool lfs_is_manifest_type(const char *mt)
{
	return !strcmp(mt, LFS_MT_OCI_MANIFEST) ||
	       !strcmp(mt, LFS_MT_DOCKER_MANIFEST);
}

/* does descriptor @d's platform (if any) match "os/arch[/variant]"? */
static bool lfs_platform_match(json_t *d, const char *platform)
{
	json_t *p = json_object_get(d, "platform");
	const char *os, *arch, *variant;
	char want[128];
	char *wos, *warch, *wvar;

	if (!p)
		return true;
	os = json_string_value(json_object_get(p, "os"));
	arch = json_string_value(json_object_get(p, "architecture"));
	variant = json_string_value(json_object_get(p, "variant"));
	snprintf(want, sizeof(want), "%s", platform);
	wos = strtok(want, "/");
	warch = strtok(NULL, "/");
	wvar = strtok(NULL, "/");
	if (!os || !arch || !wos || !warch)
		return false;
	if (strcmp(os, wos) || strcmp(arch, warch))
		return false;
	return !wvar || (variant && !strcmp(variant, wvar));
}

/*
 * Among @manifests (a JSON array of descriptors), pick the manifest for
 * @platform, descending into nested indexes; @tag, if set, first narrows
 * the list to the descriptors annotated with that name.
 */
static int lfs_select_manifest(int dirfd, json_t *manifests, const char *tag,
			       const char *platform, int depth, json_t **out,
			       char *digest_out)
{
	size_t i, matches = 0;
	json_t *d;
	int err;

	if (!json_is_array(manifests))
		return lfs_refuse(NULL, NULL,
				  "index: \"manifests\" is not an array");
	json_array_foreach(manifests, i, d)
	{
		const char *mt, *digest, *name;
		uint64_t size;
		json_t *sub;

		name = json_string_value(json_object_get(
			json_object_get(d, "annotations"), LFS_REF_NAME));
		if (tag && (!name || strcmp(name, tag)))
			continue;
		matches++;
		if (!lfs_platform_match(d, platform))
			continue;
		err = lfs_desc_parse(d, "index entry", &mt, &digest, &size);
		if (err)
			return err;
		if (lfs_is_manifest_type(mt)) {
			err = lfs_read_json_blob(dirfd, "manifest", digest,
						 size, out);
			if (!err)
				strcpy(digest_out, digest);
			return err;
		}
		if (!lfs_is_index_type(mt))
			return lfs_refuse(
				NULL, NULL,
				"index entry %s: unsupported media type \"%.80s\"",
				digest, mt);
		if (depth >= LFS_MAX_INDEX_DEPTH)
			return lfs_refuse(NULL, NULL,
					  "index %s: nested more than %d deep",
					  digest, LFS_MAX_INDEX_DEPTH);
		err = lfs_read_json_blob(dirfd, "index", digest, size, &sub);
		if (err)
			return err;
		err = lfs_select_manifest(dirfd,
					  json_object_get(sub, "manifests"),
					  NULL, platform, depth + 1, out,
					  digest_out);
		json_decref(sub);
		return err;
	}
	if (tag && !matches) {
		lfs_err("no image tagged \"%s\" in the layout", tag);
		return -ENOENT;
	}
	lfs_err("no manifest for platform %s", platform);
	return -ENOENT;
}

static int lfs_parse_layers(int dirfd, json_t *manifest, json_t *config,
			    struct lfs_image *img)
{
	json_t *layers = json_object_get(manifest, "layers");
	json_t *rootfs = json_object_get(config, "rootfs");
	json_t *diff_ids = json_object_get(rootfs, "diff_ids");
	json_t *d;
	size_t i;
	int err;

	(void)dirfd;
	if (!json_is_array(layers))
		return lfs_refuse(NULL, NULL,
				  "manifest %s: \"layers\" is not an array",
				  img->manifest_digest);
	if (!json_is_object(rootfs) || !json_is_array(diff_ids) ||
	    strcmp(json_string_value(json_object_get(rootfs, "type")) ?: "",
		   "layers"))
		return lfs_refuse(
			NULL, NULL,
			"config %s: no rootfs of type \"layers\" with diff_ids",
			img->config_digest);
	if (json_array_size(layers) != json_array_size(diff_ids))
		return lfs_refuse(NULL, NULL,
				  "config %s: %zu diff_ids for %zu layers",
				  img->config_digest, json_array_size(diff_ids),
				  json_array_size(layers));
	if (json_array_size(layers) > LFS_MAX_LAYERS)
		return lfs_refuse(NULL, NULL,
				  "manifest %s: more than %d layers",
				  img->manifest_digest, LFS_MAX_LAYERS);
	img->layers = calloc(json_array_size(layers) + 1, sizeof(*img->layers));
	if (!img->layers)
		return -ENOMEM;
	json_array_foreach(layers, i, d)
	{
		struct lfs_layer_desc *l = &img->layers[i];
		const char *mt, *digest, *diff;
		char what[32];

		snprintf(what, sizeof(what), "layer %zu", i);
		err = lfs_desc_parse(d, what, &mt, &digest, &l->size);
		if (err)
			return err;
		img->nlayers = i + 1;
		l->media_type = strdup(mt);
		if (!l->media_type)
			return -ENOMEM;
		if (lfs_media_type_compression(mt, &l->comp))
			return lfs_refuse(
				digest, NULL,
				"unsupported layer media type \"%.80s\"", mt);
		diff = json_string_value(json_array_get(diff_ids, i));
		if (!diff || !lfs_digest_valid(diff))
			return lfs_refuse(
				digest, NULL,
				"config diff_id %zu is not sha256:<64 hex digits>",
				i);
		strcpy(l->digest, digest);
		strcpy(l->diff_id, diff);
	}
	return 0;
}

/* a top-level JSON file of the layout: oci-layout, index.json */
static int lfs_read_layout_json(int dirfd, const char *dir, const char *name,
				json_t **out)
{
	size_t len;
	char *buf;
	int err;

	err = lfs_read_file_at(dirfd, name, LFS_MAX_JSON, &buf, &len);
	if (err) {
		lfs_err("%s/%s: %s", dir, name, strerror(-err));
		return err;
	}
	err = lfs_json_parse(name, buf, len, out);
	free(buf);
	return err;
}

/**
 * lfs_layout_resolve() - find, verify and parse the image @tag in @dir
 * @platform: "os/arch[/variant]" picked from a multi-platform index
 * @img: filled in; release with lfs_image_release() even on failure
 *
 * Return: 0, -LFS_EREFUSED (message printed), or -errno.
 */
int lfs_layout_resolve(const char *dir, const char *tag, const char *platform,
		       struct lfs_image *img)
{
	json_t *index = NULL, *layout = NULL, *manifest = NULL, *cdesc;
	const char *mt, *digest;
	uint64_t size;
	int dirfd, err;

	memset(img, 0, sizeof(*img));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = -errno;
		lfs_err("%s: %s", dir, strerror(errno));
		return err;
	}
	err = lfs_read_layout_json(dirfd, dir, "oci-layout", &layout);
	if (err)
		goto out;
	if (!json_is_string(json_object_get(layout, "imageLayoutVersion"))) {
		err = lfs_refuse(NULL, NULL,
				 "oci-layout: no imageLayoutVersion");
		goto out;
	}
	err = lfs_read_layout_json(dirfd, dir, "index.json", &index);
	if (err)
		goto out;
	err = lfs_select_manifest(dirfd, json_object_get(index, "manifests"),
				  tag, platform, 0, &manifest,
				  img->manifest_digest);
	if (err)
		goto out;
	if (json_integer_value(json_object_get(manifest, "schemaVersion")) !=
	    2) {
		err = lfs_refuse(NULL, NULL,
				 "manifest %s: schemaVersion is not 2",
				 img->manifest_digest);
		goto out;
	}
	cdesc = json_object_get(manifest, "config");
	err = lfs_desc_parse(cdesc, "config descriptor", &mt, &digest, &size);
	if (err)
		goto out;
	strcpy(img->config_digest, digest);
	err = lfs_read_json_blob(dirfd, "config", digest, size, &img->config);
	if (err)
		goto out;
	err = lfs_parse_layers(dirfd, manifest, img->config, img);
out:
	json_decref(manifest);
	json_decref(index);
	json_decref(layout);
	close(dirfd);
	return err;
}

void lfs_image_release(struct lfs_image *img)
{
	size_t i;

	for (i = 0; i < img->nlayers; i++)
		free(img->layers[i].media_type);
	free(img->layers);
	json_decref(img->config);
	memset(img, 0, sizeof(*img));
}
