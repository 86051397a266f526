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
#define LFS_MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define LFS_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
#define LFS_REF_NAME "org.opencontainers.image.ref.name"
/* manifests and indexes one import may read, a bound on index fan-out */
#define LFS_MAX_JSON_DOCS 64

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
			jerr.line, jerr.column, lfs_esc(jerr.text));
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
			"%s: digest \"%s\" is not sha256:<64 hex digits>", what,
			lfs_esc(json_string_value(jd)));
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

/*
 * lfs_layout_read() - read a regular file of the layout whole, in one pass
 * @cap: read at most this many bytes; a file that holds more is cut there,
 *	so *@len == @cap tells a caller whose limit is @cap - 1 that it was
 *	too large
 *
 * The file is opened beneath the layout, never through a symlink, and read
 * to its end (not to the size fstat() gave: a file that grows meanwhile is
 * still bounded by @cap). The caller checks, hashes and parses exactly
 * these bytes, and frees *@buf.
 */
static int lfs_layout_read(int dirfd, const char *path, size_t cap, char **buf,
			   size_t *len)
{
	size_t got = 0, room;
	struct stat stb;
	char *b, *nb;
	ssize_t r;
	int fd, err;

	fd = lfs_openat2(dirfd, path, O_RDONLY | O_NONBLOCK, 0);
	if (fd < 0)
		return fd;
	err = -errno;
	if (fstat(fd, &stb))
		goto out_close;
	err = -EINVAL;
	if (!S_ISREG(stb.st_mode))
		goto out_close;
	room = (uint64_t)stb.st_size < cap ? (size_t)stb.st_size + 1 : cap;
	err = -ENOMEM;
	b = malloc(room);
	if (!b)
		goto out_close;
	for (;;) {
		if (got == room) {
			if (room == cap)
				break;
			room = room > cap / 2 ? cap : 2 * room;
			nb = realloc(b, room);
			if (!nb)
				goto out_free;
			b = nb;
		}
		r = read(fd, b + got, room - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out_free;
		}
		if (r == 0)
			break;
		got += r;
	}
	*buf = b;
	*len = got;
	err = 0;
	goto out_close;
out_free:
	free(b);
out_close:
	close(fd);
	return err;
}

/*
 * lfs_read_json_blob() - read, verify and parse a JSON blob
 * @label: names it in messages ("manifest sha256:...")
 *
 * The blob is read once, at most @size + 1 bytes; its size and digest are
 * checked on those bytes, and those same bytes are parsed.
 */
static int lfs_read_json_blob(int dirfd, const char *label, const char *digest,
			      uint64_t size, json_t **out)
{
	char path[16 + LFS_SHA256_HEX], got[LFS_DIGEST_LEN + 1];
	size_t len;
	char *buf;
	int err;

	if (size > LFS_MAX_JSON)
		return lfs_refuse(NULL, NULL,
				  "%s: declared size %llu exceeds %u bytes",
				  label, (unsigned long long)size,
				  LFS_MAX_JSON);
	snprintf(path, sizeof(path), "blobs/sha256/%s", digest + 7);
	err = lfs_layout_read(dirfd, path, size + 1, &buf, &len);
	if (err) {
		lfs_err("%s: cannot open blob: %s", label, strerror(-err));
		return err;
	}
	if (len > size)
		err = lfs_refuse(
			NULL, NULL,
			"%s: blob is larger than its descriptor's size %llu",
			label, (unsigned long long)size);
	else if (len < size)
		err = lfs_refuse(
			NULL, NULL,
			"%s: blob size %zu differs from its descriptor's %llu",
			label, len, (unsigned long long)size);
	else
		err = lfs_digest_buf(buf, len, got);
	if (!err && strcmp(got, digest))
		err = lfs_refuse(
			NULL, NULL,
			"%s: blob digest %s differs from its descriptor's",
			label, got);
	if (!err)
		err = lfs_json_parse(label, buf, len, out);
	free(buf);
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

static bool lfs_is_config_type(const char *mt)
{
	return !strcmp(mt, LFS_MT_OCI_CONFIG) ||
	       !strcmp(mt, LFS_MT_DOCKER_CONFIG);
}

/*
 * lfs_check_doc_type() - a manifest or index is what the descriptor that
 * points at it says, and nothing else (CVE-2021-41190)
 * @mt: the descriptor's media type
 * @whose: names @mt in messages ("its descriptor's")
 *
 * The document's own mediaType, if it has one, must be @mt; a manifest
 * must not carry "manifests", an index neither "layers" nor "config", so
 * that no reader can take the bytes for the other kind.
 */
static int lfs_check_doc_type(json_t *doc, const char *label, const char *mt,
			      const char *whose, bool index)
{
	json_t *jmt = json_object_get(doc, "mediaType");

	if (jmt && !json_is_string(jmt))
		return lfs_refuse(NULL, NULL,
				  "%s: \"mediaType\" is not a string", label);
	if (jmt && strcmp(json_string_value(jmt), mt))
		return lfs_refuse(
			NULL, NULL,
			"%s: its mediaType \"%s\" differs from %s \"%s\"",
			label, lfs_esc(json_string_value(jmt)), whose,
			lfs_esc(mt));
	if (index &&
	    (json_object_get(doc, "layers") || json_object_get(doc, "config")))
		return lfs_refuse(
			NULL, NULL,
			"%s: an index must not carry \"layers\" or \"config\"",
			label);
	if (!index && json_object_get(doc, "manifests"))
		return lfs_refuse(NULL, NULL,
				  "%s: a manifest must not carry \"manifests\"",
				  label);
	return 0;
}

/* "os/arch[/variant]" of a descriptor's platform, or NULL */
static const char *lfs_platform_of(json_t *d, char *buf, size_t len)
{
	json_t *p = json_object_get(d, "platform");
	const char *os, *arch, *variant;

	os = json_string_value(json_object_get(p, "os"));
	arch = json_string_value(json_object_get(p, "architecture"));
	variant = json_string_value(json_object_get(p, "variant"));
	if (!os || !arch)
		return NULL;
	snprintf(buf, len, "%s/%s%s%s", os, arch, variant ? "/" : "",
		 variant ?: "");
	return buf;
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

/* one image selection: where it reads, what it found, what it passed by */
struct lfs_select {
	int dirfd;
	const char *platform;
	unsigned int docs; /* JSON blobs read so far */
	unsigned int skipped; /* unknown media types, artifacts */
	char others[256]; /* platforms of the image entries passed by */
	char why[320]; /* why the first manifest passed by is no image */
	json_t *manifest; /* the choice */
	char digest[LFS_DIGEST_LEN + 1];
};

/* remember a platform that did not match, for the message */
static void lfs_select_note_platform(struct lfs_select *s, json_t *d)
{
	char buf[128], esc[160];
	size_t n = strlen(s->others);
	const char *p = lfs_platform_of(d, buf, sizeof(buf));

	lfs_escape_name(p ?: "?", esc, sizeof(esc));
	if (strstr(s->others, esc))
		return;
	snprintf(s->others + n, sizeof(s->others) - n, "%s%s", n ? ", " : "",
		 esc);
}

/*
 * Is @m, a manifest, a container image? Not when it is an artifact
 * (artifactType) or its config has a media type we do not know: the spec
 * forbids parsing such a config. Return: NULL, or why not.
 */
static const char *lfs_manifest_not_image(json_t *m, char *why, size_t len)
{
	json_t *cfg = json_object_get(m, "config");
	const char *cmt = json_string_value(json_object_get(cfg, "mediaType"));

	if (json_object_get(m, "artifactType")) {
		snprintf(why, len, "an artifact (artifactType \"%s\")",
			 lfs_esc(json_string_value(
				 json_object_get(m, "artifactType"))));
		return why;
	}
	if (!cmt || !lfs_is_config_type(cmt)) {
		snprintf(why, len, "config media type \"%s\" is not an image's",
			 lfs_esc(cmt ?: ""));
		return why;
	}
	return NULL;
}

static int lfs_select_in(struct lfs_select *s, json_t *manifests,
			 const char *label, const char *tag, int depth);

/*
 * lfs_select_entry() - consider one descriptor of an index
 *
 * Return: 0, chosen (s->manifest set); 1, passed by: an unknown media type,
 * an artifact, another platform, or an index with nothing for us; or
 * -LFS_EREFUSED / -errno.
 */
static int lfs_select_entry(struct lfs_select *s, json_t *d, int depth)
{
	const char *mt, *digest;
	char label[96], why[160];
	json_t *doc;
	uint64_t size;
	bool index;
	int err;

	if (!json_is_object(d))
		return lfs_refuse(NULL, NULL, "index entry: not a JSON object");
	/* skip what we do not know (image-spec: MUST NOT generate an error) */
	mt = json_string_value(json_object_get(d, "mediaType"));
	if (!mt || (!lfs_is_manifest_type(mt) && !lfs_is_index_type(mt)) ||
	    json_object_get(d, "artifactType")) {
		s->skipped++;
		return 1;
	}
	if (!lfs_platform_match(d, s->platform)) {
		lfs_select_note_platform(s, d);
		return 1;
	}
	err = lfs_desc_parse(d, "index entry", &mt, &digest, &size);
	if (err)
		return err;
	index = lfs_is_index_type(mt);
	snprintf(label, sizeof(label), "%s %s", index ? "index" : "manifest",
		 digest);
	if (index && depth >= LFS_MAX_INDEX_DEPTH)
		return lfs_refuse(NULL, NULL, "%s: nested more than %d deep",
				  label, LFS_MAX_INDEX_DEPTH);
	if (++s->docs > LFS_MAX_JSON_DOCS)
		return lfs_refuse(
			NULL, NULL,
			"%s: more than %d manifests and indexes to read", label,
			LFS_MAX_JSON_DOCS);
	err = lfs_read_json_blob(s->dirfd, label, digest, size, &doc);
	if (err)
		return err;
	err = lfs_check_doc_type(doc, label, mt, "its descriptor's", index);
	if (err)
		goto out;
	if (index) {
		err = lfs_select_in(s, json_object_get(doc, "manifests"), label,
				    NULL, depth + 1);
		goto out;
	}
	if (lfs_manifest_not_image(doc, why, sizeof(why))) {
		if (!s->why[0])
			snprintf(s->why, sizeof(s->why), "%s: %s", label, why);
		s->skipped++;
		err = 1;
		goto out;
	}
	s->manifest = doc;
	strcpy(s->digest, digest);
	return 0;
out:
	json_decref(doc);
	return err;
}

/*
 * lfs_select_in() - pick, among @manifests (an index's), the manifest for
 * s->platform, descending into nested indexes; @tag, if set, first narrows
 * the list to the descriptors annotated with that name
 *
 * Return: 0 (s->manifest set), 1 (nothing usable here), or an error.
 */
static int lfs_select_in(struct lfs_select *s, json_t *manifests,
			 const char *label, const char *tag, int depth)
{
	size_t i;
	json_t *d;
	int err;

	if (!json_is_array(manifests))
		return lfs_refuse(NULL, NULL,
				  "%s: \"manifests\" is not an array", label);
	json_array_foreach(manifests, i, d)
	{
		const char *name = json_string_value(json_object_get(
			json_object_get(d, "annotations"), LFS_REF_NAME));

		if (tag && (!name || strcmp(name, tag)))
			continue;
		err = lfs_select_entry(s, d, depth);
		if (err <= 0)
			return err;
	}
	return 1;
}

/* a descriptor we would use: a manifest or index type, not an artifact */
static bool lfs_desc_known(json_t *d)
{
	const char *mt = json_string_value(json_object_get(d, "mediaType"));

	return mt && (lfs_is_manifest_type(mt) || lfs_is_index_type(mt)) &&
	       !json_object_get(d, "artifactType");
}

/*
 * lfs_check_tag() - @tag must name one descriptor of index.json: the
 * same descriptor listed twice is fine, two different ones (digest, size
 * or media type) are refused rather than one picked. Entries we skip
 * (unknown media types, artifacts) do not count.
 *
 * Return: 0 or -LFS_EREFUSED.
 */
static int lfs_check_tag(json_t *manifests, const char *tag)
{
	static const char *const keys[] = { "digest", "size", "mediaType" };
	json_t *first = NULL, *d;
	const char *d1, *d2;
	size_t i, k;

	json_array_foreach(manifests, i, d)
	{
		const char *name = json_string_value(json_object_get(
			json_object_get(d, "annotations"), LFS_REF_NAME));

		if (!name || strcmp(name, tag) || !lfs_desc_known(d))
			continue;
		if (!first) {
			first = d;
			continue;
		}
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (json_object_get(first, keys[k]) !=
				    json_object_get(d, keys[k]) &&
			    !json_equal(json_object_get(first, keys[k]),
					json_object_get(d, keys[k])))
				break;
		if (k == sizeof(keys) / sizeof(keys[0]))
			continue;
		d1 = json_string_value(json_object_get(first, "digest"));
		d2 = json_string_value(json_object_get(d, "digest"));
		if (d1 && d2 && !strcmp(d1, d2))
			return lfs_refuse(
				NULL, NULL,
				"index.json: tag \"%s\" names two different descriptors (%s with another size or media type)",
				lfs_esc(tag), lfs_esc(d1));
		return lfs_refuse(
			NULL, NULL,
			"index.json: tag \"%s\" names two different descriptors (%s and %s)",
			lfs_esc(tag), lfs_esc(d1), lfs_esc(d2));
	}
	return 0;
}

/* does index.json have an entry, of any kind, tagged @tag? */
static bool lfs_has_tag(json_t *manifests, const char *tag)
{
	size_t i;
	json_t *d;

	json_array_foreach(manifests, i, d)
	{
		const char *name = json_string_value(json_object_get(
			json_object_get(d, "annotations"), LFS_REF_NAME));

		if (name && !strcmp(name, tag))
			return true;
	}
	return false;
}

/*
 * lfs_select_manifest() - the manifest of image @tag for @platform, from
 * the layout's index.json
 *
 * Return: 0, -ENOENT (no such tag, message printed), -LFS_EREFUSED (the
 * tag names nothing we can use, or breaks a rule), or -errno.
 */
static int lfs_select_manifest(int dirfd, json_t *index, const char *tag,
			       const char *platform, json_t **out,
			       char *digest_out)
{
	json_t *manifests = json_object_get(index, "manifests");
	struct lfs_select s = { .dirfd = dirfd, .platform = platform };
	char more[704] = "";
	int err;

	if (!json_is_array(manifests))
		return lfs_refuse(NULL, NULL,
				  "index.json: \"manifests\" is not an array");
	if (!lfs_has_tag(manifests, tag)) {
		lfs_err("no image tagged \"%s\" in the layout", lfs_esc(tag));
		return -ENOENT;
	}
	err = lfs_check_tag(manifests, tag);
	if (err)
		return err;
	err = lfs_select_in(&s, manifests, "index.json", tag, 0);
	if (err < 0)
		return err;
	if (err == 0) {
		*out = s.manifest;
		strcpy(digest_out, s.digest);
		return 0;
	}
	if (s.skipped)
		snprintf(more, sizeof(more), "skipped %u %s", s.skipped,
			 s.skipped == 1 ?
				 "entry of another media type or an artifact" :
				 "entries of other media types or artifacts");
	if (s.why[0])
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
			 "; %s", s.why);
	if (s.others[0])
		snprintf(more + strlen(more), sizeof(more) - strlen(more),
			 "%sother platforms: %s", s.skipped ? "; " : "",
			 s.others);
	return lfs_refuse(
		NULL, NULL,
		"image \"%s\": no image manifest for platform %s%s%s%s",
		lfs_esc(tag), lfs_esc(platform), more[0] ? " (" : "", more,
		more[0] ? ")" : "");
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
			return lfs_refuse(digest, NULL,
					  "unsupported layer media type \"%s\"",
					  lfs_esc(mt));
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

/*
 * lfs_read_layout_json() - a top-level JSON file of the layout (oci-layout,
 * index.json): not content-addressed, but read as blobs are, once, beneath
 * the layout and never through a symlink, at most LFS_MAX_JSON bytes
 */
static int lfs_read_layout_json(int dirfd, const char *dir, const char *name,
				json_t **out)
{
	size_t len;
	char *buf;
	int err;

	err = lfs_layout_read(dirfd, name, LFS_MAX_JSON + 1, &buf, &len);
	if (err) {
		lfs_err("%s/%s: %s", lfs_esc(dir), name,
			err == -ELOOP ? "a symlink (not followed)" :
					strerror(-err));
		return err;
	}
	if (len > LFS_MAX_JSON)
		err = lfs_refuse(NULL, NULL, "%s: larger than %u bytes", name,
				 LFS_MAX_JSON);
	else
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
	char label[96];
	uint64_t size;
	int dirfd, err;

	memset(img, 0, sizeof(*img));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		err = -errno;
		lfs_err("%s: %s", lfs_esc(dir), strerror(errno));
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
	/* index.json is an image index, and only that */
	err = lfs_check_doc_type(index, "index.json", LFS_MT_OCI_INDEX,
				 "the image index type", true);
	if (err)
		goto out;
	err = lfs_select_manifest(dirfd, index, tag, platform, &manifest,
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
	snprintf(label, sizeof(label), "config %s", digest);
	err = lfs_read_json_blob(dirfd, label, digest, size, &img->config);
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
