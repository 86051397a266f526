// SPDX-License-Identifier: GPL-2.0
/*
 * oci2ovl: command line. Parses options, runs one command, maps its
 * result to an exit status (see docs/oci2ovl.1). Only main() exits.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "oci2ovl.h"

/* what the command line asked for */
struct lfs_cli {
	const char *store;
	const char *name;
	const char *platform;
	const char *whiteout; /* NULL: the store's, else native */
	const char *upper;
	const char *work;
	const char *fstype;
	bool json;
	bool print;
	bool sync;
	bool replace;
	bool force;
	bool dry_run;
	bool all;
	bool objects; /* --objects */
	struct lfs_limits lim;
	unsigned int given; /* LFS_OPT_* bits seen */
	char **args; /* positional, command first */
	int nargs;
};

enum {
	LFS_OPT_STORE = 1 << 0,
	LFS_OPT_NAME = 1 << 1,
	LFS_OPT_PLATFORM = 1 << 2,
	LFS_OPT_WHITEOUT = 1 << 3,
	LFS_OPT_JSON = 1 << 4,
	LFS_OPT_UPPER = 1 << 5,
	LFS_OPT_WORK = 1 << 6,
	LFS_OPT_PRINT = 1 << 7,
	LFS_OPT_FSTYPE = 1 << 8,
	LFS_OPT_LIMITS = 1 << 9,
	LFS_OPT_NOSYNC = 1 << 10,
	LFS_OPT_REPLACE = 1 << 11,
	LFS_OPT_FORCE = 1 << 12,
	LFS_OPT_DRY_RUN = 1 << 13,
	LFS_OPT_ALL = 1 << 14,
	LFS_OPT_OBJECTS = 1 << 15,
};

#define LFS_OPTS_IMPORT                                                        \
	(LFS_OPT_NAME | LFS_OPT_PLATFORM | LFS_OPT_WHITEOUT | LFS_OPT_LIMITS | \
	 LFS_OPT_NOSYNC | LFS_OPT_REPLACE | LFS_OPT_OBJECTS)

static const char lfs_usage[] =
	"Usage: oci2ovl [--store DIR] COMMAND [OPTION...] [ARG...]\n"
	"\n"
	"Commands:\n"
	"  import [oci:]DIR:TAG   unpack an OCI image layout into the store\n"
	"      [--name NAME] [--platform OS/ARCH[/VARIANT]] [--whiteout native|chardev]\n"
	"      [--max-entries N] [--max-bytes SIZE] [--max-path N]\n"
	"      [--max-names SIZE] [--max-xattrs SIZE] [--no-sync] [--replace]\n"
	"      [--objects]        (a new store: files' data stored once, in objects/)\n"
	"  pull REF               skopeo copy REF (any transport), then import\n"
	"      (same options as import)\n"
	"  list [--json]          images in the store\n"
	"  layers IMAGE [--json]  an image's layer directories, top layer first\n"
	"  config IMAGE           an image's config JSON\n"
	"  rm IMAGE [--force]     remove an image (its layers stay until gc)\n"
	"  gc [--dry-run]         remove layers no image or mount uses, and leftovers\n"
	"  mount IMAGE TARGET [--upper DIR [--work DIR]] [--fstype layerfs|overlay]\n"
	"  mount IMAGE --print    print only the lowerdir= option\n"
	"  umount TARGET          unmount an image and drop its lease\n"
	"  verify IMAGE|--all     check layer directories against their tree manifests\n"
	"\n"
	"Options:\n"
	"  --store DIR    the layer store (default $OCI2OVL_STORE, else " LFS_DEFAULT_STORE
	")\n"
	"  -h, --help     this text\n"
	"  -V, --version  the version\n"
	"\n"
	"Exit status: 0 ok, 1 failure, 2 usage error, 3 input refused\n"
	"(verification failed or a hostile entry), 4 in use or name taken.\n"
	"See oci2ovl(1).\n";

static const struct option lfs_options[] = {
	{ "store", required_argument, NULL, 's' },
	{ "name", required_argument, NULL, 'n' },
	{ "platform", required_argument, NULL, 'p' },
	{ "whiteout", required_argument, NULL, 'w' },
	{ "json", no_argument, NULL, 'j' },
	{ "upper", required_argument, NULL, 'u' },
	{ "work", required_argument, NULL, 'W' },
	{ "print", no_argument, NULL, 'P' },
	{ "fstype", required_argument, NULL, 't' },
	{ "max-entries", required_argument, NULL, 'E' },
	{ "max-bytes", required_argument, NULL, 'B' },
	{ "max-path", required_argument, NULL, 'L' },
	{ "max-names", required_argument, NULL, 'N' },
	{ "max-xattrs", required_argument, NULL, 'X' },
	{ "no-sync", no_argument, NULL, 'S' },
	{ "replace", no_argument, NULL, 'R' },
	{ "force", no_argument, NULL, 'F' },
	{ "dry-run", no_argument, NULL, 'D' },
	{ "all", no_argument, NULL, 'A' },
	{ "objects", no_argument, NULL, 'O' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{}
};

/* a usage error; @arg, from the command line, is printed escaped */
static int lfs_usage_error(const char *fmt, const char *arg)
	__attribute__((format(printf, 1, 0)));

static int lfs_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", LFS_PROG);
	fprintf(stderr, fmt, lfs_esc(arg));
	fprintf(stderr, "\nTry '%s --help'.\n", LFS_PROG);
	return LFS_EXIT_USAGE;
}

/*
 * getopt_long()'s error, which it would print as it is: @opt is what it
 * returned (':' an option without its argument, '?' any other); the
 * option is argv[optind - 1], or the short one in optopt
 */
static int lfs_option_error(int opt, char **argv)
{
	char s[3] = { '-', (char)optopt, '\0' };
	const char *a = argv[optind - 1];

	if (opt == ':')
		return lfs_usage_error("option \"%s\" needs an argument", a);
	if (optopt > 0 && optopt < 0x100 && strncmp(a, "--", 2))
		a = s;
	return lfs_usage_error("bad option \"%s\"", a);
}

static int lfs_exit_code(int err)
{
	if (!err)
		return LFS_EXIT_OK;
	if (err == -LFS_ECONFLICT)
		return LFS_EXIT_CONFLICT;
	return err == -LFS_EREFUSED ? LFS_EXIT_REFUSED : LFS_EXIT_FAIL;
}

/* Return: -1 to go on, else an exit status */
static int lfs_parse(int argc, char **argv, struct lfs_cli *c)
{
	uint64_t v;
	int opt;

	c->store = getenv("OCI2OVL_STORE");
	if (!c->store || !*c->store)
		c->store = LFS_DEFAULT_STORE;
	c->platform = LFS_DEFAULT_PLATFORM;
	c->fstype = "layerfs";
	c->sync = true;
	c->lim.max_entries = 1000000;
	c->lim.max_bytes = 64ull << 30;
	c->lim.max_path = PATH_MAX - 1;
	c->lim.max_names = 256ull << 20;
	c->lim.max_xattrs = 256ull << 20;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hV", lfs_options, NULL)) !=
	       -1) {
		switch (opt) {
		case 's':
			c->store = optarg;
			c->given |= LFS_OPT_STORE;
			break;
		case 'n':
			c->name = optarg;
			c->given |= LFS_OPT_NAME;
			break;
		case 'p':
			c->platform = optarg;
			c->given |= LFS_OPT_PLATFORM;
			break;
		case 'w':
			c->whiteout = optarg;
			c->given |= LFS_OPT_WHITEOUT;
			break;
		case 'j':
			c->json = true;
			c->given |= LFS_OPT_JSON;
			break;
		case 'u':
			c->upper = optarg;
			c->given |= LFS_OPT_UPPER;
			break;
		case 'W':
			c->work = optarg;
			c->given |= LFS_OPT_WORK;
			break;
		case 'P':
			c->print = true;
			c->given |= LFS_OPT_PRINT;
			break;
		case 't':
			c->fstype = optarg;
			c->given |= LFS_OPT_FSTYPE;
			break;
		case 'S':
			c->sync = false;
			c->given |= LFS_OPT_NOSYNC;
			break;
		case 'R':
			c->replace = true;
			c->given |= LFS_OPT_REPLACE;
			break;
		case 'F':
			c->force = true;
			c->given |= LFS_OPT_FORCE;
			break;
		case 'D':
			c->dry_run = true;
			c->given |= LFS_OPT_DRY_RUN;
			break;
		case 'A':
			c->all = true;
			c->given |= LFS_OPT_ALL;
			break;
		case 'O':
			c->objects = true;
			c->given |= LFS_OPT_OBJECTS;
			break;
		case 'E':
		case 'B':
		case 'L':
		case 'N':
		case 'X':
			if (lfs_parse_size(optarg, &v) || !v ||
			    (opt == 'L' && v >= PATH_MAX))
				return lfs_usage_error("bad limit \"%s\"",
						       optarg);
			if (opt == 'E')
				c->lim.max_entries = v;
			else if (opt == 'B')
				c->lim.max_bytes = v;
			else if (opt == 'N')
				c->lim.max_names = v;
			else if (opt == 'X')
				c->lim.max_xattrs = v;
			else
				c->lim.max_path = v;
			c->given |= LFS_OPT_LIMITS;
			break;
		case 'h':
			fputs(lfs_usage, stdout);
			return LFS_EXIT_OK;
		case 'V':
			printf("%s %s\n", LFS_PROG, LFS_VERSION);
			return LFS_EXIT_OK;
		default:
			return lfs_option_error(opt, argv);
		}
	}
	c->args = argv + optind;
	c->nargs = argc - optind;
	if (!c->nargs)
		return lfs_usage_error("%s", "no command given");
	return -1;
}

/* check the positional count and that only @allowed options were given */
static int lfs_check(const struct lfs_cli *c, int min, int max,
		     unsigned int allowed)
{
	if (c->given & ~(allowed | LFS_OPT_STORE))
		return lfs_usage_error("an option given does not apply to %s",
				       c->args[0]);
	if (c->nargs - 1 < min || c->nargs - 1 > max)
		return lfs_usage_error("wrong number of arguments to %s",
				       c->args[0]);
	return -1;
}

static void lfs_print_json(json_t *j)
{
	json_dumpf(j, stdout, JSON_INDENT(1));
	putchar('\n');
}

/* a record from a shared-locked store; Return: exit status, -1 on success */
static int lfs_open_image(const struct lfs_cli *c, struct lfs_store *st,
			  json_t **rec)
{
	const char *name = c->args[1];
	int err;

	if (!lfs_valid_image_name(name))
		return lfs_usage_error("bad image name \"%s\"", name);
	err = lfs_store_open(st, c->store, false, false);
	if (err == -ENOENT) {
		lfs_err("no store at %s", lfs_esc(c->store));
		return LFS_EXIT_FAIL;
	}
	if (err)
		return LFS_EXIT_FAIL;
	err = lfs_store_read_image(st, name, rec);
	if (err) {
		if (err != -LFS_EREFUSED)
			lfs_err("image %s: %s", lfs_esc(name),
				err == -ENOENT ? "not in the store" :
						 strerror(-err));
		lfs_store_close(st);
		return LFS_EXIT_FAIL;
	}
	return -1;
}

/* default name for pull: the last path element of REF */
static char *lfs_pull_name(const char *ref)
{
	const char *p = strrchr(ref, '/');
	char *name, *q;

	p = p ? p + 1 : (strchr(ref, ':') ? strchr(ref, ':') + 1 : ref);
	name = strdup(p);
	if (!name)
		return NULL;
	for (q = name; *q; q++)
		if (!strchr("._:@+-", *q) &&
		    !((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9')))
			*q = '_';
	return name;
}

static int lfs_cmd_import(struct lfs_cli *c, bool pull)
{
	struct lfs_objstats stats = { 0 };
	struct lfs_import_opts o = {
		.stats = &stats,
		.platform = c->platform,
		.lim = c->lim,
		.sync = c->sync,
		.replace = c->replace,
	};
	char *dir = NULL, *tag = NULL, *defname = NULL;
	struct lfs_store st;
	int r, err;

	r = lfs_check(c, 1, 1, LFS_OPTS_IMPORT);
	if (r >= 0)
		return r;
	if (c->whiteout && lfs_whiteout_fmt_parse(c->whiteout, &o.fmt))
		return lfs_usage_error(
			"--whiteout is native or chardev, not \"%s\"",
			c->whiteout);
	if (!pull && lfs_layout_parse_ref(c->args[1], &dir, &tag))
		return lfs_usage_error("\"%s\" is not [oci:]DIR:TAG",
				       c->args[1]);
	defname = pull ? lfs_pull_name(c->args[1]) : strdup(tag);
	o.name = c->name ?: defname;
	r = LFS_EXIT_USAGE;
	if (!o.name || !lfs_valid_image_name(o.name)) {
		lfs_usage_error("bad image name \"%s\"; give --name",
				o.name ?: "");
		goto out;
	}
	r = LFS_EXIT_FAIL;
	if (lfs_store_open(&st, c->store, true, false))
		goto out;
	if (!c->whiteout)
		o.fmt = st.fmt_known ? st.fmt : LFS_WH_NATIVE;
	/* without --objects, the store's data format */
	o.objects = c->objects || (st.data_known && st.objects);
	if (st.fmt_known && st.fmt != o.fmt) {
		lfs_err("store %s holds %s layers; use another store for %s",
			lfs_esc(st.path), lfs_whiteout_fmt_name(st.fmt),
			lfs_whiteout_fmt_name(o.fmt));
		r = LFS_EXIT_USAGE;
	} else if (st.data_known && st.objects != o.objects) {
		lfs_err("store %s holds inline layers; use another store for --objects",
			lfs_esc(st.path));
		r = LFS_EXIT_USAGE;
	} else {
		st.sync = c->sync;
		err = pull ? lfs_pull(&st, c->args[1], &o) :
			     lfs_import(&st, dir, tag, &o);
		r = lfs_exit_code(err);
		/* a concurrent first import chose the other format */
		if (err && ((st.fmt_known && st.fmt != o.fmt) ||
			    (st.data_known && st.objects != o.objects)))
			r = LFS_EXIT_USAGE;
	}
	lfs_store_close(&st);
out:
	free(dir);
	free(tag);
	free(defname);
	return r;
}

static int lfs_cmd_list(struct lfs_cli *c)
{
	struct lfs_store st;
	json_t *list, *e;
	size_t i;
	int r, err;

	r = lfs_check(c, 0, 0, LFS_OPT_JSON);
	if (r >= 0)
		return r;
	err = lfs_store_open(&st, c->store, false, false);
	if (err == -ENOENT) {
		list = json_array();
	} else if (err) {
		return LFS_EXIT_FAIL;
	} else {
		err = lfs_store_list(&st, &list);
		lfs_store_close(&st);
		if (err)
			return lfs_exit_code(err);
	}
	if (c->json) {
		lfs_print_json(list);
	} else {
		json_array_foreach(list, i, e) printf(
			"%s\t%lld\t%s\n",
			json_string_value(json_object_get(e, "name")),
			(long long)json_integer_value(
				json_object_get(e, "layers")),
			json_string_value(json_object_get(e, "manifest_digest")) ?:
				"-");
	}
	json_decref(list);
	return LFS_EXIT_OK;
}

static int lfs_cmd_layers(struct lfs_cli *c)
{
	struct lfs_store st;
	json_t *rec, *l;
	char **dirs;
	size_t n, i;
	int r, err;

	r = lfs_check(c, 1, 1, LFS_OPT_JSON);
	if (r >= 0)
		return r;
	r = lfs_open_image(c, &st, &rec);
	if (r >= 0)
		return r;
	err = lfs_store_image_layer_dirs(&st, rec, &dirs, &n);
	if (!err) {
		if (c->json) {
			json_t *out = json_array();

			json_array_foreach(json_object_get(rec, "layers"), i, l)
			{
				json_t *o = json_deep_copy(l);

				json_object_set_new(o, "dir",
						    json_string(dirs[i]));
				json_array_append_new(out, o);
			}
			lfs_print_json(out);
			json_decref(out);
		} else {
			for (i = 0; i < n; i++)
				printf("%s\n", dirs[i]);
		}
		for (i = 0; i < n; i++)
			free(dirs[i]);
		free(dirs);
	}
	json_decref(rec);
	lfs_store_close(&st);
	return lfs_exit_code(err);
}

static int lfs_cmd_config(struct lfs_cli *c)
{
	struct lfs_store st;
	json_t *rec;
	int r;

	r = lfs_check(c, 1, 1, 0);
	if (r >= 0)
		return r;
	r = lfs_open_image(c, &st, &rec);
	if (r >= 0)
		return r;
	lfs_print_json(json_object_get(rec, "config"));
	json_decref(rec);
	lfs_store_close(&st);
	return LFS_EXIT_OK;
}

static int lfs_cmd_rm(struct lfs_cli *c)
{
	struct lfs_store st;
	int r, err;

	r = lfs_check(c, 1, 1, LFS_OPT_FORCE);
	if (r >= 0)
		return r;
	if (!lfs_valid_image_name(c->args[1]))
		return lfs_usage_error("bad image name \"%s\"", c->args[1]);
	if (lfs_store_open(&st, c->store, false, false))
		return LFS_EXIT_FAIL;
	err = lfs_store_rm_image(&st, c->args[1], c->force);
	if (err && err != -LFS_ECONFLICT)
		lfs_err("image %s: %s", lfs_esc(c->args[1]),
			err == -ENOENT ? "not in the store" : strerror(-err));
	lfs_store_close(&st);
	return lfs_exit_code(err);
}

static int lfs_cmd_gc(struct lfs_cli *c)
{
	unsigned int removed = 0;
	struct lfs_store st;
	int r, err;

	r = lfs_check(c, 0, 0, LFS_OPT_DRY_RUN);
	if (r >= 0)
		return r;
	err = lfs_store_open(&st, c->store, false, true);
	if (err == -ENOENT)
		return LFS_EXIT_OK;
	if (err)
		return LFS_EXIT_FAIL;
	err = lfs_store_gc(&st, c->dry_run, &removed);
	if (err)
		lfs_err("gc %s: %s", lfs_esc(st.path), strerror(-err));
	else if (isatty(STDERR_FILENO))
		fprintf(stderr, "%s: %s %u\n", LFS_PROG,
			c->dry_run ? "would remove" : "removed", removed);
	lfs_store_close(&st);
	return lfs_exit_code(err);
}

/* drop a layer that appears again lower down: the upper copy shadows it */
static size_t lfs_dedupe(char **dirs, size_t n)
{
	size_t i, j, k = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < k && strcmp(dirs[j], dirs[i]); j++)
			;
		if (j < k)
			free(dirs[i]);
		else
			dirs[k++] = dirs[i];
	}
	return k;
}

/* lease, mount, or drop the lease again; caller holds the meta lock */
static int lfs_mount_leased(struct lfs_store *st, const char *name,
			    json_t *rec, char **dirs, size_t n,
			    const char *target, struct lfs_mount_opts *o)
{
	json_t *lease;
	char *tgt;
	int err;

	tgt = realpath(target, NULL);
	if (!tgt) {
		err = -errno;
		lfs_err("mount: %s: %s", lfs_esc(target), strerror(errno));
		return err;
	}
	lease = lfs_lease_make(name, rec, tgt, lfs_mount_fstype(o));
	if (!lease) {
		err = -errno;
		free(tgt);
		return err;
	}
	err = lfs_lease_add(st, lease);
	if (err) {
		lfs_err("store %s: cannot record the mount: %s", lfs_esc(st->path),
			strerror(-err));
		goto out;
	}
	lfs_test_point("lease-added");
	o->source = lfs_lease_source(lease);
	err = lfs_mount_image(dirs, n, tgt, o);
	if (err)
		lfs_lease_drop(st, lease);
out:
	json_decref(lease);
	free(tgt);
	return err;
}

/*
 * An image of an objects store: its objects as a data-only layer, and
 * verity=require when every metacopy file of its layers carries an
 * fs-verity digest (verity=on when some do), as docs/oci2ovl.md says.
 */
static int lfs_mount_objects(struct lfs_store *st, char *const *dirs,
			     size_t n, struct lfs_mount_opts *o, char **datadir)
{
	uint64_t pointers, digests;
	int err;

	err = lfs_objects_count(dirs, n, &pointers, &digests);
	if (err) {
		lfs_err("store %s: cannot read the layers' object pointers: %s",
			lfs_esc(st->path), strerror(-err));
		return err;
	}
	if (asprintf(datadir, "%s/objects", st->path) < 0) {
		*datadir = NULL;
		return -ENOMEM;
	}
	o->datadir = *datadir;
	if (pointers && digests == pointers)
		o->verity = "require";
	else if (digests)
		o->verity = "on";
	return 0;
}

static int lfs_cmd_mount(struct lfs_cli *c)
{
	struct lfs_mount_opts o = {
		.fstype = c->fstype,
		.upper = c->upper,
		.work = c->work,
		.print_only = c->print,
	};
	struct lfs_store st;
	bool locked = false;
	char *datadir = NULL;
	json_t *rec;
	char **dirs;
	size_t n, i;
	int r, err;

	r = lfs_check(c, c->print ? 1 : 2, c->print ? 2 : 2,
		      LFS_OPT_UPPER | LFS_OPT_WORK | LFS_OPT_PRINT |
			      LFS_OPT_FSTYPE);
	if (r >= 0)
		return r;
	if (c->work && !c->upper)
		return lfs_usage_error("%s", "--work needs --upper");
	if (strcmp(c->fstype, "layerfs") && strcmp(c->fstype, "overlay"))
		return lfs_usage_error(
			"--fstype is layerfs or overlay, not \"%s\"",
			c->fstype);
	r = lfs_open_image(c, &st, &rec);
	if (r >= 0)
		return r;
	r = LFS_EXIT_USAGE;
	if (!strcmp(c->fstype, "overlay") && st.fmt != LFS_WH_CHARDEV) {
		lfs_err("store %s holds native whiteouts, which overlay does not read; import with --whiteout=chardev into another store",
			lfs_esc(st.path));
		goto out;
	}
	r = LFS_EXIT_FAIL;
	if (!c->print) {
		/* the record again under the meta lock: rm waits for us */
		json_decref(rec);
		rec = NULL;
		if (lfs_store_meta_lock(&st))
			goto out;
		locked = true;
		err = lfs_store_read_image(&st, c->args[1], &rec);
		if (err) {
			lfs_err("image %s: %s", lfs_esc(c->args[1]),
				err == -ENOENT ? "not in the store" :
						 strerror(-err));
			goto out;
		}
	}
	err = lfs_store_image_layer_dirs(&st, rec, &dirs, &n);
	if (!err) {
		n = lfs_dedupe(dirs, n);
		if (st.data_known && st.objects)
			err = lfs_mount_objects(&st, dirs, n, &o, &datadir);
	}
	if (!err) {
		if (c->print)
			err = lfs_mount_image(dirs, n, NULL, &o);
		else
			err = lfs_mount_leased(&st, c->args[1], rec, dirs, n,
					       c->args[2], &o);
		for (i = 0; i < n; i++)
			free(dirs[i]);
		free(dirs);
	}
	r = lfs_exit_code(err);
out:
	free(datadir);
	if (locked)
		lfs_store_meta_unlock(&st);
	json_decref(rec);
	lfs_store_close(&st);
	return r;
}

/*
 * umount TARGET: of the leases on TARGET, drop the stale ones, and
 * unmount the live one that is the topmost mount there, then drop it.
 */
static int lfs_cmd_umount(struct lfs_cli *c)
{
	char desc[PATH_MAX + 600];
	json_t *leases = NULL, *lease;
	unsigned int stale = 0, live = 0, done = 0;
	struct lfs_store st;
	const char *why;
	char *tgt = NULL;
	int r, err, top, id;
	size_t i;

	r = lfs_check(c, 1, 1, 0);
	if (r >= 0)
		return r;
	err = lfs_store_open(&st, c->store, false, false);
	if (err == -ENOENT)
		lfs_err("no store at %s", lfs_esc(c->store));
	if (err)
		return LFS_EXIT_FAIL;
	r = LFS_EXIT_FAIL;
	if (lfs_store_meta_lock(&st))
		goto out_close;
	tgt = realpath(c->args[1], NULL);
	if (!tgt) {
		lfs_err("umount %s: %s", lfs_esc(c->args[1]), strerror(errno));
		goto out;
	}
	if (lfs_leases_read(&st, &leases))
		goto out;
	top = lfs_mount_id(tgt);
	err = 0;
	json_array_foreach(leases, i, lease)
	{
		if (err || done ||
		    strcmp(json_string_value(json_object_get(lease, "target")),
			   tgt))
			continue;
		lfs_lease_describe(lease, desc, sizeof(desc));
		err = lfs_lease_check(lease, &id, &why);
		if (err < 0)
			break;
		if (!err) {
			lfs_err("%s: %s; its lease dropped", desc, why);
			err = lfs_lease_drop(&st, lease);
			stale++;
			continue;
		}
		err = 0;
		live++;
		if (id < 0 || id != top)
			continue;
		err = lfs_umount(tgt);
		if (!err)
			err = lfs_lease_drop(&st, lease);
		done++;
	}
	if (err) {
		r = lfs_exit_code(err);
	} else if (done) {
		r = LFS_EXIT_OK;
	} else if (live) {
		lfs_err("umount %s: its oci2ovl mount is not the topmost mount there, or is in another mount namespace; not unmounted",
			lfs_esc(tgt));
		r = LFS_EXIT_CONFLICT;
	} else if (stale) {
		r = LFS_EXIT_OK;
	} else {
		lfs_err("umount %s: no oci2ovl mount there", lfs_esc(tgt));
	}
out:
	json_decref(leases);
	free(tgt);
	lfs_store_meta_unlock(&st);
out_close:
	lfs_store_close(&st);
	return r;
}

/* the store keys to verify: an image's (each once), or every layer's */
static int lfs_verify_list(const struct lfs_cli *c, struct lfs_store *st,
			   json_t **out)
{
	json_t *list = json_array(), *rec, *l;
	struct dirent *de;
	size_t i, j;
	DIR *d;
	int err;

	if (!list)
		return -ENOMEM;
	*out = list;
	if (!c->all) {
		err = lfs_store_read_image(st, c->args[1], &rec);
		if (err) {
			lfs_err("image %s: %s", lfs_esc(c->args[1]),
				err == -ENOENT ? "not in the store" :
						 strerror(-err));
			return err;
		}
		json_array_foreach(json_object_get(rec, "layers"), i, l)
		{
			const char *k = lfs_store_layer_key(l);

			if (!k) {
				lfs_err("image %s: a layer without a store key or diff_id",
					lfs_esc(c->args[1]));
				json_decref(rec);
				return -EINVAL;
			}
			for (j = 0; j < json_array_size(list); j++)
				if (!strcmp(json_string_value(
						    json_array_get(list, j)),
					    k))
					break;
			if (j == json_array_size(list))
				json_array_append_new(list, json_string(k));
		}
		json_decref(rec);
		return 0;
	}
	d = lfs_store_opendir(st, "layers");
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char diff[8 + sizeof(de->d_name)];

		if (de->d_name[0] == '.')
			continue;
		snprintf(diff, sizeof(diff), "sha256:%s", de->d_name);
		if (!lfs_digest_valid(diff)) {
			char ebuf[512];

			lfs_err("store %s: layers/%s: not a layer name",
				lfs_esc(st->path),
				lfs_escape_name(de->d_name, ebuf, sizeof(ebuf)));
			continue;
		}
		json_array_append_new(list, json_string(diff));
	}
	closedir(d);
	return 0;
}

static int lfs_diff_cmp(const void *a, const void *b)
{
	return strcmp(json_string_value(*(json_t *const *)a),
		      json_string_value(*(json_t *const *)b));
}

/*
 * verify IMAGE|--all: every layer against its tree manifest; a line per
 * layer on stdout, each difference on stderr.
 */
static int lfs_cmd_verify(struct lfs_cli *c)
{
	unsigned long diffs, total = 0;
	struct lfs_store st;
	json_t *list = NULL;
	json_t **v;
	size_t i, n;
	int r, err;

	r = lfs_check(c, c->all ? 0 : 1, c->all ? 0 : 1, LFS_OPT_ALL);
	if (r >= 0)
		return r;
	if (!c->all && !lfs_valid_image_name(c->args[1]))
		return lfs_usage_error("bad image name \"%s\"", c->args[1]);
	err = lfs_store_open(&st, c->store, false, false);
	if (err == -ENOENT)
		lfs_err("no store at %s", lfs_esc(c->store));
	if (err)
		return LFS_EXIT_FAIL;
	err = lfs_verify_list(c, &st, &list);
	n = json_array_size(list);
	v = calloc(n + 1, sizeof(*v));
	if (!err && !v)
		err = -ENOMEM;
	for (i = 0; !err && i < n; i++)
		v[i] = json_array_get(list, i);
	if (!err && c->all)
		qsort(v, n, sizeof(*v), lfs_diff_cmp);
	for (i = 0; !err && i < n; i++) {
		const char *diff = json_string_value(v[i]);

		err = lfs_tree_verify(&st, diff, &diffs);
		if (err)
			break;
		if (diffs)
			printf("%s: %lu difference%s\n", diff, diffs,
			       diffs == 1 ? "" : "s");
		else
			printf("%s: ok\n", diff);
		total += diffs;
	}
	free(v);
	json_decref(list);
	lfs_store_close(&st);
	if (err)
		return lfs_exit_code(err == -LFS_EREFUSED ? -EIO : err);
	return total ? LFS_EXIT_REFUSED : LFS_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct lfs_cli c = {};
	struct rlimit rl;
	const char *cmd;
	int r;

	/* PAX names are UTF-8; let libarchive hand them over unchanged */
	setlocale(LC_CTYPE, "C.UTF-8");
	/* removing a deep tree keeps one fd per level */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	r = lfs_parse(argc, argv, &c);
	if (r >= 0)
		return r;
	cmd = c.args[0];
	if (!strcmp(cmd, "import"))
		r = lfs_cmd_import(&c, false);
	else if (!strcmp(cmd, "pull"))
		r = lfs_cmd_import(&c, true);
	else if (!strcmp(cmd, "list"))
		r = lfs_cmd_list(&c);
	else if (!strcmp(cmd, "layers"))
		r = lfs_cmd_layers(&c);
	else if (!strcmp(cmd, "config"))
		r = lfs_cmd_config(&c);
	else if (!strcmp(cmd, "rm"))
		r = lfs_cmd_rm(&c);
	else if (!strcmp(cmd, "gc"))
		r = lfs_cmd_gc(&c);
	else if (!strcmp(cmd, "mount"))
		r = lfs_cmd_mount(&c);
	else if (!strcmp(cmd, "umount"))
		r = lfs_cmd_umount(&c);
	else if (!strcmp(cmd, "verify"))
		r = lfs_cmd_verify(&c);
	else
		r = lfs_usage_error("unknown command \"%s\"", cmd);
	if (fflush(stdout) && r == LFS_EXIT_OK)
		r = LFS_EXIT_FAIL;
	return r;
}
