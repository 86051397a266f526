// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs-mount: mount a layerfs from any number of layers through the new
 * mount API (fsopen, fsconfig with one "lowerdir+" per layer, fsmount,
 * move_mount), so the one-page limit of mount(2) options does not apply.
 *
 * The same program answers three callers:
 *
 *   layerfs-mount [-l DIR]... [-L FILE] [-o OPTIONS] TARGET
 *	by hand or from scripts;
 *   mount.layerfs SOURCE TARGET [-sfnvr] [-N NS] [-o OPTIONS]
 *	mount(8) runs /sbin/mount.layerfs for "mount -t layerfs";
 *   PROG -o lowerdir=...,upperdir=...,workdir=...[,volatile] TARGET
 *	a container engine's mount program (containers-storage's overlay
 *	driver with mount_program set), run in the driver's home
 *	directory; also "PROG --version"; with uidmapping= and
 *	gidmapping= (as containers-storage gives fuse-overlayfs) the mount
 *	is idmapped (see lfs_idmap_mount());
 *   layerfs-mount --commit [-v] MOUNTPOINT
 *	before the upper layer of a mount becomes a lower layer: every
 *	name of a file that was changed through another name gets its own
 *	link in the upper layer (see lfs_commit()).
 *
 * Options are parsed as overlayfs parses them: comma-separated, a backslash
 * escapes the next character ("\,", "\:", "\\").  Relative paths resolve
 * against the working directory here, before anything else happens.  The
 * program mounts in the foreground and exits: nothing stays behind holding
 * the caller's stdout or stderr.  Errors go to stderr with what the kernel
 * logged on the fs_context.  Exit status as mount(8) documents: 0 mounted,
 * 1 bad usage or no permission, 2 system error, 32 mount failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include "uapi/layerfs.h"

#define LFS_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#ifndef LFS_VERSION
#define LFS_VERSION "0.1"
#endif

/* exit status, as mount(8) documents it */
enum {
	LFS_EX_OK = 0,
	LFS_EX_USAGE = 1,	/* bad invocation or permissions */
	LFS_EX_SYSERR = 2,	/* out of memory, cannot get the cwd, ... */
	LFS_EX_FAIL = 32,	/* the mount failed (options, layers, kernel) */
};

/* one filesystem parameter for fsconfig, in the order given */
struct lfs_param {
	char *key;
	char *val;		/* NULL: a flag */
};

struct lfs_mount {
	const char *prog;	/* our name, for messages */
	char *cwd;		/* relative paths resolve against it */
	size_t nr_lower;	/* "lowerdir+" parameters among them */
	bool lower_listed;	/* a lowerdir= list was given */
	struct lfs_param *param; /* fsconfig parameters, in order */
	size_t nr_param;
	size_t cap_param;
	unsigned int attr_set;	/* MOUNT_ATTR_* to set on the mount */
	unsigned int attr_clr;	/* and to clear (remount) */
	bool remount;		/* reconfigure the mount at TARGET */
	bool verbose;		/* -v: say what is done */
	bool fake;		/* -f: check, do not mount */
	bool dry_run;		/* --dry-run: print the plan, call nothing */
	bool sloppy;		/* -s: skip options the kernel does not know */
	bool commit;		/* --commit: link up names, mount nothing */
	bool by_fd;		/* --by-fd: directories as descriptors */
	const char *ns;		/* -N: mount namespace, a pid or a path */
	char *uid_map;		/* uidmapping=, as /proc/PID/uid_map text */
	char *gid_map;		/* gidmapping=, as /proc/PID/gid_map text */
	int userns;		/* the idmapping's user namespace, or -1 */
};

static void lfs_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [OPTIONS] TARGET\n"
		"       %s SOURCE TARGET [-sfnvr] [-N NS] [-o OPTIONS]\n"
		"       %s --commit [-v] [-N NS] MOUNTPOINT\n"
		"\n"
		"Mount layerfs on TARGET from any number of layers (installed as\n"
		"/sbin/mount.layerfs for mount(8), and usable as a container\n"
		"engine's overlay mount_program).\n"
		"\n"
		"  -o OPTIONS        comma-separated mount options, as for overlay:\n"
		"                    lowerdir=TOP:...:BOTTOM, upperdir=DIR,\n"
		"                    workdir=DIR (\\: \\, \\\\ escape), ro, rw, nosuid,\n"
		"                    nodev, noexec, noatime, remount, ...; x-*\n"
		"                    options are dropped; others (volatile,\n"
		"                    redirect_dir=, ...) go to the kernel;\n"
		"                    uidmapping=ID:MOUNTID:COUNT[:...] and\n"
		"                    gidmapping= (both) idmap the mount: ID on\n"
		"                    disk shows as MOUNTID, as with fuse-overlayfs\n"
		"  -l, --lower DIR   add a lower layer below those given so far\n"
		"  -L, --lower-file FILE\n"
		"                    add the layers listed in FILE, one per line,\n"
		"                    top first (\"-\" reads standard input)\n"
		"  -r, --read-only   mount read-only\n"
		"  -N, --namespace NS  mount in the mount namespace of pid NS, or\n"
		"                    of the namespace file NS\n"
		"  -s                sloppy: skip options the kernel does not know\n"
		"  -f, --fake        check the options with the kernel, mount nothing\n"
		"      --by-fd       give the kernel each layer, upperdir and\n"
		"                    workdir as a descriptor (FSCONFIG_SET_FD of\n"
		"                    an open directory), not as a path\n"
		"      --dry-run     print the fsconfig calls and mount attributes\n"
		"                    that would be made, make none\n"
		"      --commit      on the layerfs mount MOUNTPOINT, give every name\n"
		"                    of a file changed through another of its names\n"
		"                    its own link in the upper layer, so that the\n"
		"                    upper layer shows the same tree as a lower one\n"
		"  -v, --verbose     say what is done\n"
		"  -n                accepted for mount(8) (no mtab), ignored\n"
		"  -V, --version     print the version\n"
		"  -h, --help        this text\n"
		"\n"
		"Relative paths resolve against the working directory.\n"
		"Exit status: 0 mounted, 1 bad usage or no permission,\n"
		"2 system error, 32 mount failed; with --commit: 0 done,\n"
		"1 bad usage, not a layerfs mount or no permission, 2 system\n"
		"error, 32 a name could not be linked up.\n",
		prog, prog, prog);
}

/* Make room for @need entries of @size bytes in *@arr. */
static int lfs_grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **p = arr;
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* Undo backslash escapes in place: "\x" becomes "x". */
static void lfs_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*out++ = *s;
	}
	*out = '\0';
}

/*
 * A malloc'ed copy of @s with backslashes escaped: the kernel undoes
 * escapes in upperdir= and workdir= values, from fsconfig(2) too, as
 * overlayfs does.
 */
static char *lfs_escape_backslash(const char *s)
{
	char *out = malloc(2 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* A malloc'ed absolute form of @path: relative ones join the cwd. */
static char *lfs_abspath(struct lfs_mount *m, const char *path)
{
	char *abs;

	if (path[0] == '/')
		return strdup(path);
	if (!m->cwd) {
		m->cwd = getcwd(NULL, 0);
		if (!m->cwd)
			return NULL;
	}
	if (asprintf(&abs, "%s%s%s", m->cwd,
		     m->cwd[strlen(m->cwd) - 1] == '/' ? "" : "/", path) < 0)
		return NULL;
	return abs;
}

static int lfs_add_param(struct lfs_mount *m, const char *key,
			 const char *val)
{
	struct lfs_param *p;

	if (lfs_grow(&m->param, &m->cap_param, m->nr_param + 1,
		     sizeof(*m->param)))
		return -ENOMEM;
	p = &m->param[m->nr_param];
	p->key = strdup(key);
	p->val = val ? strdup(val) : NULL;
	if (!p->key || (val && !p->val)) {
		free(p->key);
		free(p->val);
		return -ENOMEM;
	}
	m->nr_param++;
	return 0;
}

/*
 * One more layer below those given so far: "lowerdir+", or "datadir+"
 * for a data-only one, absolute.
 */
static int lfs_add_layer(struct lfs_mount *m, const char *dir,
			 const char *from, const char *key)
{
	char *abs;
	int err;

	if (!*dir) {
		fprintf(stderr, "%s: %s: layer %zu is an empty path\n", m->prog,
			from, m->nr_lower + 1);
		return -EINVAL;
	}
	abs = lfs_abspath(m, dir);
	if (!abs)
		return -errno;
	err = lfs_add_param(m, key, abs);
	free(abs);
	if (!err)
		m->nr_lower++;
	return err;
}

static int lfs_add_lower(struct lfs_mount *m, const char *dir,
			 const char *from)
{
	return lfs_add_layer(m, dir, from, "lowerdir+");
}

/*
 * Split a lowerdir= value at unescaped colons, undoing the escapes.  The
 * layers after a "::" are data-only ("datadir+"); the kernel refuses
 * what the list gets wrong (a ':' between two of them: a "lowerdir+"
 * after a "datadir+").
 */
static int lfs_add_lowerdir_list(struct lfs_mount *m, char *list)
{
	char *start = list, *in = list, *out = list;
	const char *key = "lowerdir+";
	int err;

	if (m->lower_listed) {
		fprintf(stderr, "%s: lowerdir= given twice\n", m->prog);
		return -EINVAL;
	}
	m->lower_listed = true;
	for (;;) {
		char c = *in++;

		if (c == '\\' && *in) {
			*out++ = *in++;
			continue;
		}
		if (c != ':' && c != '\0') {
			*out++ = c;
			continue;
		}
		*out = '\0';
		err = lfs_add_layer(m, start, "lowerdir=", key);
		if (err || c == '\0')
			return err;
		if (*in == ':') {
			in++;
			key = "datadir+";
		} else if (!strcmp(key, "datadir+")) {
			key = "lowerdir+";
		}
		start = in;
		out = in;
	}
}

/*
 * upperdir= and workdir=: unescaped and made absolute, then with their
 * backslashes escaped again for the kernel (lfs_escape_backslash())
 */
static int lfs_add_dir_param(struct lfs_mount *m, const char *key, char *val)
{
	char *abs, *esc;
	int err;

	lfs_unescape(val);
	if (!*val) {
		fprintf(stderr, "%s: %s=: empty path\n", m->prog, key);
		return -EINVAL;
	}
	abs = lfs_abspath(m, val);
	if (!abs)
		return -errno;
	esc = lfs_escape_backslash(abs);
	free(abs);
	if (!esc)
		return -ENOMEM;
	err = lfs_add_param(m, key, esc);
	free(esc);
	return err;
}

struct lfs_attr_name {
	const char *name;
	unsigned int set;	/* MOUNT_ATTR_* it sets */
	unsigned int mask;	/* the bits it decides */
};

/* options that are mount attributes, not filesystem parameters */
static const struct lfs_attr_name lfs_attrs[] = {
	{ "ro", MOUNT_ATTR_RDONLY, MOUNT_ATTR_RDONLY },
	{ "rw", 0, MOUNT_ATTR_RDONLY },
	{ "nosuid", MOUNT_ATTR_NOSUID, MOUNT_ATTR_NOSUID },
	{ "suid", 0, MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV, MOUNT_ATTR_NODEV },
	{ "dev", 0, MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC, MOUNT_ATTR_NOEXEC },
	{ "exec", 0, MOUNT_ATTR_NOEXEC },
	{ "nosymfollow", MOUNT_ATTR_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
	{ "symfollow", 0, MOUNT_ATTR_NOSYMFOLLOW },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME, MOUNT_ATTR_NODIRATIME },
	{ "diratime", 0, MOUNT_ATTR_NODIRATIME },
	{ "noatime", MOUNT_ATTR_NOATIME, MOUNT_ATTR__ATIME },
	{ "relatime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
	{ "strictatime", MOUNT_ATTR_STRICTATIME, MOUNT_ATTR__ATIME },
	{ "atime", MOUNT_ATTR_RELATIME, MOUNT_ATTR__ATIME },
};

/* mount(8)'s own options (fstab), meaningless to the kernel */
static const char *const lfs_userspace_opts[] = {
	"defaults", "auto", "noauto", "user", "nouser", "users", "owner",
	"group", "_netdev", "nofail", "comment",
};

static bool lfs_userspace_opt(const char *opt)
{
	size_t i, len = strcspn(opt, "=");

	/* x-*: for userspace helpers; X-*: for mount(8) itself */
	if (!strncmp(opt, "x-", 2) || !strncmp(opt, "X-", 2))
		return true;
	for (i = 0; i < LFS_ARRAY_SIZE(lfs_userspace_opts); i++)
		if (strlen(lfs_userspace_opts[i]) == len &&
		    !strncmp(opt, lfs_userspace_opts[i], len))
			return true;
	return false;
}

/* A mount attribute: note it in m->attr_set/attr_clr. */
static bool lfs_mount_attr(struct lfs_mount *m, const char *opt)
{
	size_t i;

	for (i = 0; i < LFS_ARRAY_SIZE(lfs_attrs); i++) {
		const struct lfs_attr_name *a = &lfs_attrs[i];

		if (strcmp(opt, a->name))
			continue;
		m->attr_set = (m->attr_set & ~a->mask) | a->set;
		m->attr_clr |= a->mask;
		return true;
	}
	return false;
}

/* the most lines a uid_map or gid_map takes (UID_GID_MAP_MAX_EXTENTS) */
#define LFS_IDMAP_MAX_EXTENTS	340
/* a uid_map write of a page or more fails (E2BIG would say nothing) */
#define LFS_IDMAP_MAX_TEXT	4096

/* One number of a mapping: decimal, below 2^32 - 1 (-1 is no id). */
static int lfs_idmap_number(const char *s, unsigned long long *n)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*n = strtoull(s, &end, 10);
	if (errno || *end || *n >= 0xffffffffULL)
		return -1;
	return 0;
}

/*
 * uidmapping= or gidmapping=: triples ID:MOUNTID:COUNT, all joined by
 * colons, as containers-storage gives them to fuse-overlayfs (since
 * 2020 with a colon before the first: the only empty field taken, as
 * one empty in the middle would shift the triples): COUNT ids from ID
 * on, as the layers hold them, show through the mount as MOUNTID on, ids of the namespace this program runs in.  That is what
 * a line "ID MOUNTID COUNT" of the idmapping's uid_map says.  Returns
 * the map's text in *@map, or -EINVAL after a message.
 */
static int lfs_parse_idmapping(struct lfs_mount *m, const char *key,
			       char *val, char **map)
{
	static const char triples[] = "not ID:MOUNTID:COUNT triples of decimal ids";
	unsigned long long id[3];
	size_t nr = 0, len = 0;
	char *text, *copy, *tok, *save = NULL;
	const char *why = triples;
	int err = -EINVAL;

	lfs_unescape(val);
	/* each line no longer than its triple, with a newline */
	text = malloc(strlen(val) + LFS_IDMAP_MAX_EXTENTS + 2);
	copy = strdup(val);
	if (!text || !copy) {
		err = -ENOMEM;
		goto out;
	}
	if (*map) {
		why = "given twice";
		goto bad;
	}
	/* containers-storage since 2020 starts the list with a colon */
	save = copy + (*copy == ':');
	while ((tok = strsep(&save, ":"))) {
		if (!*tok && *copy)
			why = "an empty field (only the first may be, as containers-storage writes it)";
		if (lfs_idmap_number(tok, &id[nr % 3]))
			goto bad;
		if (++nr % 3)
			continue;
		why = "a range of no ids, or past 4294967294";
		if (!id[2] || id[0] + id[2] > 0xffffffffULL ||
		    id[1] + id[2] > 0xffffffffULL)
			goto bad;
		why = "more than 340 ranges";
		if (nr / 3 > LFS_IDMAP_MAX_EXTENTS)
			goto bad;
		why = triples;
		len += sprintf(text + len, "%llu %llu %llu\n", id[0], id[1],
			       id[2]);
	}
	if (!nr || nr % 3)
		goto bad;
	why = "the map text is 4096 bytes or more, which the kernel refuses";
	if (len >= LFS_IDMAP_MAX_TEXT)
		goto bad;
	*map = text;
	text = NULL;
	err = 0;
	goto out;
bad:
	fprintf(stderr, "%s: %s=%s: %s\n", m->prog, key, val, why);
out:
	free(copy);
	free(text);
	return err;
}

/*
 * Does this program run in a user namespace of its own (rootless podman's),
 * where every id it maps belongs to the user who made the namespace?  The
 * initial namespace maps all ids onto themselves in one line.
 */
static bool lfs_in_user_ns(void)
{
	unsigned long long in, out, count;
	bool initial = false;
	FILE *f = fopen("/proc/self/uid_map", "re");

	if (!f)
		return false;
	if (fscanf(f, "%llu %llu %llu", &in, &out, &count) == 3)
		initial = !in && !out && count == 0xffffffffULL;
	fclose(f);
	return !initial;
}

/*
 * The mapping's line for the caller's own id @self, where the mapping
 * names it nowhere as a MOUNTID: objects the caller makes through the
 * mount are then stored as the overflow id 65534 where the map leaves it
 * free (else as the first id past the map), not refused with EOVERFLOW.
 * That is podman's --userns=auto: podman makes the container's /etc/mtab
 * and mount points as itself before the container's namespace exists,
 * and its own id is none of the container's.  Only in a user namespace,
 * whose ids are all its maker's; in the initial one an id past the map
 * may be another user's.  Returns 0, or -ENOMEM.
 */
static int lfs_idmap_add_caller(char **map, unsigned long long self)
{
	unsigned long long in, out, count, spare = 65534, end = 0;
	bool spare_used = false;
	size_t len = strlen(*map), lines = 0;
	const char *p;
	char *text;

	for (p = *map; sscanf(p, "%llu %llu %llu", &in, &out, &count) == 3;
	     p = strchr(p, '\n') + 1, lines++) {
		if (self >= out && self - out < count)
			return 0;
		spare_used |= spare >= in && spare - in < count;
		if (in + count > end)
			end = in + count;
	}
	if (spare_used)
		spare = end;
	/* no room: the kernel's EOVERFLOW stays the answer */
	if (spare >= 0xffffffffULL || lines >= LFS_IDMAP_MAX_EXTENTS ||
	    len + 3 * 11 >= LFS_IDMAP_MAX_TEXT)
		return 0;
	text = realloc(*map, len + 3 * 11 + 1);
	if (!text)
		return -ENOMEM;
	sprintf(text + len, "%llu %llu 1\n", spare, self);
	*map = text;
	return 0;
}

/* One option of a -o list, escapes still in. */
static int lfs_parse_option(struct lfs_mount *m, char *opt)
{
	char *eq;

	if (!*opt || lfs_userspace_opt(opt) || lfs_mount_attr(m, opt))
		return 0;
	if (!strcmp(opt, "remount")) {
		m->remount = true;
		return 0;
	}
	eq = strchr(opt, '=');
	if (eq)
		*eq++ = '\0';
	if (!strcmp(opt, "lowerdir") && eq)
		return lfs_add_lowerdir_list(m, eq);
	if (!strcmp(opt, "lowerdir+") && eq) {
		lfs_unescape(eq);
		return lfs_add_lower(m, eq, "lowerdir+=");
	}
	if (!strcmp(opt, "datadir+") && eq) {
		lfs_unescape(eq);
		return lfs_add_layer(m, eq, "datadir+=", "datadir+");
	}
	if ((!strcmp(opt, "upperdir") || !strcmp(opt, "workdir")) && eq)
		return lfs_add_dir_param(m, opt, eq);
	if (!strcmp(opt, "uidmapping") && eq)
		return lfs_parse_idmapping(m, opt, eq, &m->uid_map);
	if (!strcmp(opt, "gidmapping") && eq)
		return lfs_parse_idmapping(m, opt, eq, &m->gid_map);
	lfs_unescape(opt);
	if (eq) {
		size_t len = strlen(eq);

		/* a quoted value goes to the kernel without its quotes */
		if (len >= 2 && eq[0] == '"' && eq[len - 1] == '"') {
			eq[len - 1] = '\0';
			eq++;
		}
		lfs_unescape(eq);
	}
	return lfs_add_param(m, opt, eq);
}

/*
 * Parse a -o list: comma-separated, a backslash escapes the next char,
 * and commas inside double quotes do not split (context="a,b", as
 * mount(8) writes SELinux contexts).
 */
static int lfs_parse_options(struct lfs_mount *m, char *opts)
{
	char *start = opts, *in = opts;
	bool quoted = false;
	int err;

	for (;; in++) {
		char c = *in;

		if (c == '\\' && in[1]) {
			in++;
			continue;
		}
		if (c == '"')
			quoted = !quoted;
		if ((c != ',' || quoted) && c != '\0')
			continue;
		*in = '\0';
		err = lfs_parse_option(m, start);
		if (err || c == '\0')
			return err;
		start = in + 1;
	}
}

static int lfs_read_lower_file(struct lfs_mount *m, const char *path)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	if (!f) {
		err = -errno;
		fprintf(stderr, "%s: %s: %s\n", m->prog, path, strerror(errno));
		return err;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		err = lfs_add_lower(m, line, path);
		if (err)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return err;
}

/*
 * Print what the kernel logged on the fs_context: one message per read,
 * "e "/"w "/"i " then the text (which names the filesystem).
 */
static void lfs_print_fc_log(struct lfs_mount *m, int fsfd)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		const char *kind = "";

		buf[n] = '\0';
		if (buf[n - 1] == '\n')
			buf[--n] = '\0';
		if (n > 2 && buf[1] == ' ') {
			kind = buf[0] == 'w' ? "warning: " :
			       buf[0] == 'i' ? "info: " : "";
			memmove(buf, buf + 2, n - 1);
		}
		fprintf(stderr, "%s: kernel: %s%s\n", m->prog, kind, buf);
	}
}

/* A parameter the kernel refused: under -s, an unknown one is skipped. */
static bool lfs_sloppy_skip(struct lfs_mount *m, int fsfd, int err,
			    const char *key)
{
	char buf[512];
	ssize_t n;

	if (!m->sloppy || err != EINVAL)
		return false;
	/* the message says why; only "Unknown parameter" may be skipped */
	n = read(fsfd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (!strstr(buf, "Unknown parameter")) {
		fprintf(stderr, "%s: kernel: %s", m->prog, n > 2 ? buf + 2 : buf);
		return false;
	}
	if (m->verbose)
		fprintf(stderr, "%s: %s: unknown to the kernel, skipped (-s)\n",
			m->prog, key);
	return true;
}

static int lfs_config(struct lfs_mount *m, int fsfd, unsigned int cmd,
		      const char *key, const char *val)
{
	int err;

	if (m->verbose && key)
		fprintf(stderr, "%s: fsconfig %s%s%s\n", m->prog, key,
			val ? "=" : "", val ? val : "");
	if (fsconfig(fsfd, cmd, key, val, 0) == 0)
		return 0;
	err = errno;
	if (key && cmd != FSCONFIG_CMD_CREATE &&
	    lfs_sloppy_skip(m, fsfd, err, key))
		return 0;
	if (key)
		fprintf(stderr, "%s: %s%s%s: %s\n", m->prog, key,
			val ? "=" : "", val ? val : "", strerror(err));
	else
		fprintf(stderr, "%s: %s: %s\n", m->prog,
			cmd == FSCONFIG_CMD_CREATE ? "creating the superblock" :
			"reconfiguring", strerror(err));
	lfs_print_fc_log(m, fsfd);
	errno = err;
	return -err;
}

/*
 * containers-storage runs its mount program in the overlay driver's home
 * directory, and records there, in .has-mount-program, that a mount
 * program is in use: then it extracted every layer in the AUFS whiteout
 * format (.wh.NAME files, .wh..wh..opq markers) and reads containers'
 * deletions back in that format.  Such a store needs whiteout=aufs on
 * every mount, and the engine does not always say so: it drops the
 * storage.conf mountopt whenever it asks for options of its own (the
 * read-only mounts "podman diff" and "podman commit" compare).  So in
 * such a directory whiteout=aufs is the default.
 */
static bool lfs_cwd_is_aufs_store(void)
{
	char buf[8];
	ssize_t n;
	int fd;

	fd = open(".has-mount-program", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n >= 4 && !memcmp(buf, "true", 4) && (n == 4 || buf[4] == '\n');
}

/* Is a parameter with this key given? */
static bool lfs_has_param(const struct lfs_mount *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nr_param; i++)
		if (!strcmp(m->param[i].key, key))
			return true;
	return false;
}

/* Put whiteout=aufs first, as a mountopt would be, unless one was given. */
static int lfs_default_whiteout(struct lfs_mount *m)
{
	struct lfs_param first;
	int err;

	if (lfs_has_param(m, "whiteout") || !lfs_cwd_is_aufs_store())
		return 0;
	err = lfs_add_param(m, "whiteout", "aufs");
	if (err)
		return err;
	first = m->param[m->nr_param - 1];
	memmove(&m->param[1], &m->param[0], (m->nr_param - 1) * sizeof(first));
	m->param[0] = first;
	if (m->verbose)
		fprintf(stderr, "%s: %s: whiteout=aufs\n", m->prog,
			"a containers-storage home with a mount program");
	return 0;
}

/*
 * Is the directory at @path out of reach of every user but root, so that
 * none can change what a layer there holds?  Every directory from "/"
 * down is root's, and writable by no one else unless sticky (then no one
 * else may move root's entries in it), until one that no one else may
 * search (group and other without x; with an ACL the group bits are its
 * mask, so a named entry is no wider): nothing below it is reachable.
 * A path that never reaches such a directory is not private: its layer's
 * own files could be anyone's.
 */
static bool lfs_dir_root_only(const char *dir, bool *closed)
{
	struct stat st;

	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0)
		return false;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return false;
	*closed = !(st.st_mode & (S_IXGRP | S_IXOTH));
	return true;
}

static bool lfs_path_private(const char *path)
{
	char *real = realpath(path, NULL);
	bool closed = false, ok;
	size_t i;

	if (!real)
		return false;
	ok = lfs_dir_root_only("/", &closed);
	/* then "/a", "/a/b", ...: each prefix that ends a name */
	for (i = 1; ok && !closed && real[i]; i++) {
		char c = real[i + 1];

		if (c != '/' && c != '\0')
			continue;
		real[i + 1] = '\0';
		ok = lfs_dir_root_only(real, &closed);
		real[i + 1] = c;
	}
	free(real);
	return ok && closed;
}

/*
 * metacopy=on for a writable mount whose layers no one but root can
 * change (lfs_path_private()), unless the options decide metacopy
 * (metacopy=, verity=) or forbid it (userxattr, redirect_dir=nofollow),
 * or the mount is made in another namespace (-N), or in a user
 * namespace (userxattr there).  The kernel's default stays overlay's,
 * off: a metacopy file's data is the layer's file below, read when it
 * is used, so a user who could rewrite that file would rewrite what a
 * chown or chmod through the mount (to root, set-uid) made of it.  A
 * container engine's layers (containers-storage's home, oci2ovl's
 * store: 0700) are root's alone, and there chown -R copies no data.
 */
static int lfs_default_metacopy(struct lfs_mount *m)
{
	size_t i;

	if (m->ns || lfs_in_user_ns() || !lfs_has_param(m, "upperdir") ||
	    lfs_has_param(m, "metacopy") || lfs_has_param(m, "verity") ||
	    lfs_has_param(m, "userxattr"))
		return 0;
	for (i = 0; i < m->nr_param; i++) {
		const struct lfs_param *p = &m->param[i];

		if (!strcmp(p->key, "redirect_dir") && p->val &&
		    !strcmp(p->val, "nofollow"))
			return 0;
		if ((!strcmp(p->key, "lowerdir+") || !strcmp(p->key, "datadir+")) &&
		    !lfs_path_private(p->val)) {
			if (m->verbose)
				fprintf(stderr, "%s: %s: not root's alone: metacopy stays off\n",
					m->prog, p->val);
			return 0;
		}
	}
	if (m->verbose)
		fprintf(stderr, "%s: %s: metacopy=on\n", m->prog,
			"every layer is root's alone");
	return lfs_add_param(m, "metacopy", "on");
}

/* Whether a parameter goes to the kernel: on a remount, layers cannot change. */
static bool lfs_param_for(struct lfs_mount *m, const struct lfs_param *p)
{
	return !m->remount || (strcmp(p->key, "lowerdir+") &&
			       strcmp(p->key, "datadir+") &&
			       strcmp(p->key, "upperdir") &&
			       strcmp(p->key, "workdir"));
}

/* Whether a parameter names a directory, which --by-fd passes open. */
static bool lfs_param_is_dir(const struct lfs_param *p)
{
	return p->val && (!strcmp(p->key, "lowerdir+") ||
			  !strcmp(p->key, "datadir+") ||
			  !strcmp(p->key, "upperdir") ||
			  !strcmp(p->key, "workdir"));
}

/*
 * --by-fd: the directory of @p opened here, where a path would be
 * resolved (after -N's setns()), and given to the kernel open.  For
 * reading: fsconfig() takes no O_PATH descriptor (EBADF).
 */
static int lfs_config_fd(struct lfs_mount *m, int fsfd,
			 const struct lfs_param *p)
{
	char *path = strdup(p->val);
	int fd, err;

	if (!path)
		return -ENOMEM;
	/* upperdir= and workdir= carry escaped backslashes for the kernel */
	if (strcmp(p->key, "lowerdir+") && strcmp(p->key, "datadir+"))
		lfs_unescape(path);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fprintf(stderr, "%s: %s=%s: %s\n", m->prog, p->key, path,
			strerror(err));
		free(path);
		return -err;
	}
	if (m->verbose)
		fprintf(stderr, "%s: fsconfig %s=<descriptor of %s>\n", m->prog,
			p->key, path);
	err = 0;
	if (fsconfig(fsfd, FSCONFIG_SET_FD, p->key, NULL, fd)) {
		err = errno;
		fprintf(stderr, "%s: %s=<descriptor of %s>: %s\n", m->prog,
			p->key, path, strerror(err));
		lfs_print_fc_log(m, fsfd);
	}
	close(fd);
	free(path);
	return -err;
}

/* The parameters in order, then "ro" or "rw" if one was given. */
static int lfs_config_params(struct lfs_mount *m, int fsfd)
{
	size_t i;
	int err;

	for (i = 0; i < m->nr_param; i++) {
		const struct lfs_param *p = &m->param[i];

		if (!lfs_param_for(m, p))
			continue;
		if (m->by_fd && lfs_param_is_dir(p))
			err = lfs_config_fd(m, fsfd, p);
		else
			err = lfs_config(m, fsfd, p->val ? FSCONFIG_SET_STRING :
					 FSCONFIG_SET_FLAG, p->key, p->val);
		if (err)
			return err;
	}
	if (m->attr_clr & MOUNT_ATTR_RDONLY)
		return lfs_config(m, fsfd, FSCONFIG_SET_FLAG,
				  m->attr_set & MOUNT_ATTR_RDONLY ? "ro" : "rw",
				  NULL);
	return 0;
}

/* a uid_map text on one line: its newlines as commas, in place */
static const char *lfs_oneline(char *map)
{
	char *c;

	for (c = map; *c; c++)
		if (*c == '\n' && c[1])
			*c = ',';
	if (c > map && c[-1] == '\n')
		c[-1] = '\0';
	return map;
}

/*
 * --dry-run: what would be asked of the kernel, one call a line, in
 * order.  Lets the option parsing be tested where layerfs is not loaded.
 */
static void lfs_print_plan(struct lfs_mount *m, const char *source,
			   const char *target)
{
	size_t i;

	if (!m->remount)
		printf("fsconfig source=%s\n", source);
	for (i = 0; i < m->nr_param; i++) {
		const struct lfs_param *p = &m->param[i];

		if (!lfs_param_for(m, p))
			continue;
		if (m->by_fd && lfs_param_is_dir(p))
			printf("fsconfig %s=<descriptor of %s>\n", p->key, p->val);
		else
			printf("fsconfig %s%s%s\n", p->key, p->val ? "=" : "",
			       p->val ? p->val : "");
	}
	if (m->attr_clr & MOUNT_ATTR_RDONLY)
		printf("fsconfig %s\n",
		       m->attr_set & MOUNT_ATTR_RDONLY ? "ro" : "rw");
	if (m->uid_map)
		printf("idmap uid_map=%s gid_map=%s\n",
		       lfs_oneline(m->uid_map), lfs_oneline(m->gid_map));
	printf("%s %s attr_set=0x%x attr_clr=0x%x\n",
	       m->remount ? "mount_setattr" : "move_mount", target,
	       m->attr_set, m->remount ? m->attr_clr : 0);
}

/* errno of a failed fsopen/fspick: is it the caller's lack of privilege? */
static int lfs_exit_for(int err)
{
	return err == EPERM ? LFS_EX_USAGE :
	       err == ENOMEM ? LFS_EX_SYSERR : LFS_EX_FAIL;
}

/* write @map to /proc/@pid/@file: 0 or -errno */
static int lfs_write_idmap(pid_t pid, const char *file, const char *map)
{
	char path[64];
	ssize_t len = strlen(map);
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, map, len) != len)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

/*
 * The idmapping as a user namespace descriptor: a child unshares a user
 * namespace and waits (on @done) while this process writes its maps, as
 * the namespace's parent, and opens it.  Returns the descriptor, or -1
 * after a message.
 */
static int lfs_idmap_userns(const struct lfs_mount *m)
{
	int ready[2] = { -1, -1 }, done[2] = { -1, -1 }, fd = -1, err;
	char path[64], c = 0;
	pid_t pid = -1;

	if (pipe2(ready, O_CLOEXEC) || pipe2(done, O_CLOEXEC))
		goto out_sys;
	pid = fork();
	if (pid < 0)
		goto out_sys;
	if (!pid) {
		close(ready[0]);
		close(done[1]);
		c = unshare(CLONE_NEWUSER) ? errno : 0;
		if (write(ready[1], &c, 1) != 1 || c)
			_exit(1);
		/* until the parent closes its end */
		_exit(read(done[0], &c, 1) < 0);
	}
	close(ready[1]);
	ready[1] = -1;
	close(done[0]);
	done[0] = -1;
	if (read(ready[0], &c, 1) != 1 || c) {
		errno = c ? c : ECHILD;
		fprintf(stderr, "%s: idmapping: cannot make a user namespace: %s\n",
			m->prog, strerror(errno));
		goto out;
	}
	err = lfs_write_idmap(pid, "uid_map", m->uid_map);
	if (err) {
		fprintf(stderr, "%s: uidmapping=: the kernel refuses the mapping (ranges that overlap, or a MOUNTID that is no id here?): %s\n",
			m->prog, strerror(-err));
		goto out;
	}
	err = lfs_write_idmap(pid, "gid_map", m->gid_map);
	if (err) {
		fprintf(stderr, "%s: gidmapping=: the kernel refuses the mapping (ranges that overlap, or a MOUNTID that is no id here?): %s\n",
			m->prog, strerror(-err));
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto out_sys;
	goto out;
out_sys:
	fprintf(stderr, "%s: idmapping: %s\n", m->prog, strerror(errno));
out:
	if (done[1] >= 0)
		close(done[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	if (ready[0] >= 0)
		close(ready[0]);
	if (ready[1] >= 0)
		close(ready[1]);
	if (done[0] >= 0)
		close(done[0]);
	return fd;
}

/*
 * uidmapping=, gidmapping=: idmap the detached mount @mfd before it is
 * attached (an attached mount cannot be idmapped), with the namespace
 * lfs_idmap_userns() made.  The kernel allows it to root of the user
 * namespace that mounted layerfs, so this works as root and as root of
 * a rootless engine's namespace alike.  Returns 0, or -1 after a
 * message (nothing is attached then).
 */
static int lfs_idmap_mount(struct lfs_mount *m, int mfd)
{
	struct mount_attr attr = {
		.attr_set = MOUNT_ATTR_IDMAP,
		.userns_fd = m->userns,
	};
	int err = 0;

	if (mount_setattr(mfd, "", AT_EMPTY_PATH, &attr, sizeof(attr))) {
		fprintf(stderr, "%s: idmapping the mount: %s\n", m->prog,
			strerror(errno));
		err = -1;
	}
	close(m->userns);
	m->userns = -1;
	return err;
}

/* A new mount: returns an exit status. */
static int lfs_mount_new(struct lfs_mount *m, const char *source,
			 const char *target)
{
	int fsfd, mfd = -1, ret = LFS_EX_FAIL;

	fsfd = fsopen(LFS_FSTYPE, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		fprintf(stderr, "%s: fsopen(%s): %s%s\n", m->prog, LFS_FSTYPE,
			strerror(errno),
			errno == ENODEV ? " (is the layerfs module loaded?)" : "");
		return lfs_exit_for(errno);
	}
	if (lfs_config(m, fsfd, FSCONFIG_SET_STRING, "source", source))
		goto out;
	if (lfs_config_params(m, fsfd))
		goto out;
	if (m->fake) {
		ret = LFS_EX_OK;
		goto out;
	}
	if (lfs_config(m, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL))
		goto out;
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, m->attr_set);
	if (mfd < 0) {
		fprintf(stderr, "%s: fsmount: %s\n", m->prog, strerror(errno));
		lfs_print_fc_log(m, fsfd);
		goto out;
	}
	if (m->uid_map && lfs_idmap_mount(m, mfd))
		goto out;
	if (move_mount(mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH)) {
		fprintf(stderr, "%s: %s: cannot mount here: %s\n", m->prog,
			target, strerror(errno));
		goto out;
	}
	if (m->verbose)
		fprintf(stderr, "%s: mounted %zu layer%s on %s\n", m->prog,
			m->nr_lower, m->nr_lower == 1 ? "" : "s", target);
	ret = LFS_EX_OK;
out:
	if (mfd >= 0)
		close(mfd);
	close(fsfd);
	return ret;
}

/*
 * -o remount: the superblock's flags through fspick and reconfigure, then
 * the mount's attributes.  Layers cannot change; they are not sent.
 */
static int lfs_remount(struct lfs_mount *m, const char *target)
{
	struct mount_attr attr = {
		.attr_set = m->attr_set,
		.attr_clr = m->attr_clr,
	};
	int fd, ret = LFS_EX_FAIL;

	if (m->nr_lower && m->verbose)
		fprintf(stderr, "%s: remount: layers cannot change, ignored\n",
			m->prog);
	fd = fspick(AT_FDCWD, target, FSPICK_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", m->prog, target, strerror(errno));
		return lfs_exit_for(errno);
	}
	if (lfs_config_params(m, fd))
		goto out;
	if (m->fake) {
		ret = LFS_EX_OK;
		goto out;
	}
	if (lfs_config(m, fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL))
		goto out;
	/* relatime is 0 in the atime field: clear the field to set it */
	if (attr.attr_clr &&
	    mount_setattr(AT_FDCWD, target, 0, &attr, sizeof(attr))) {
		fprintf(stderr, "%s: %s: setting mount attributes: %s\n",
			m->prog, target, strerror(errno));
		goto out;
	}
	ret = LFS_EX_OK;
out:
	close(fd);
	return ret;
}

/* -N: enter the mount namespace of a pid, or of a namespace file. */
static int lfs_enter_ns(struct lfs_mount *m)
{
	char path[64];
	const char *p = m->ns;
	int fd, err;

	if (strspn(m->ns, "0123456789") == strlen(m->ns)) {
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", m->ns);
		p = path;
	}
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNS)) {
		err = -errno;
		fprintf(stderr, "%s: namespace %s: %s\n", m->prog, p,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * ---- --commit ----
 *
 * A lower object with several names, changed through one of them, shows
 * the change under all of them, but the upper layer holds only the names
 * that were changed, renamed or removed: the others reach the copy
 * through the hard-link index in the work directory, which is part of no
 * layer.  LFS_IOC_LINK_UP_AT, on a directory with a name in it, gives
 * such a name its own link in the upper layer.  --commit calls it on
 * every name of the mount that is not a directory, whatever its type
 * (symlinks, devices and fifos can have several names too) and link
 * count (a name can show an indexed copy with a link count of 1), so
 * that the upper layer, as the next mount's top lower layer, shows the
 * tree the mount showed.
 *
 * The tree may be hostile (a container's) and this runs as root: it is
 * walked by file descriptor, one directory open at a time and its parents
 * reached again through ".." and checked by inode, so that neither the
 * depth nor the length of paths is bounded; it never follows a symlink
 * and opens nothing but directories: each name is first opened O_PATH
 * (no open of the object itself) to learn its type, and a name that is
 * not a directory is linked up by name, through the directory, where the
 * kernel looks it up without following it.  The walk goes over a
 * detached copy of the mount (open_tree), which has no mounts on it, so
 * that no mount (a container's /dev, a volume) hides names from it.
 */

/* a directory on the way from the root to the one being read */
struct lfs_dir {
	char *name;		/* its name in its parent; NULL for the root */
	char *names;		/* its entries, each NUL-terminated */
	size_t len;		/* bytes in names */
	size_t pos;		/* offset in names of the next entry */
	dev_t dev;		/* st_dev and st_ino, checked when the walk */
	ino_t ino;		/* comes back to it through ".." */
};

struct lfs_commit {
	const char *prog;	/* our name, for messages */
	const char *target;	/* the mount point, as given */
	__u64 mnt_id;		/* statx() mount id of the mount */
	bool has_mnt_id;	/* the kernel gave one (5.8 and later) */
	dev_t dev;		/* st_dev of the mount */
	struct lfs_dir *dirs;	/* [0] the root .. [depth - 1] the current */
	size_t depth;
	size_t cap;
	size_t nr_dirs;		/* directories read */
	size_t nr_names;	/* names but directories tried */
	size_t nr_linked;	/* names linked up */
	size_t nr_failed;	/* objects that could not be done */
	int status;		/* exit status so far */
};

/* "TARGET/a/b/NAME" for messages (@name NULL: the current directory). */
static char *lfs_commit_path(const struct lfs_commit *c, const char *name)
{
	size_t i, len = strlen(c->target) + 1;
	char *path, *p;

	for (i = 1; i < c->depth; i++)
		len += strlen(c->dirs[i].name) + 1;
	len += name ? strlen(name) + 1 : 0;
	path = malloc(len);
	if (!path)
		return NULL;
	p = stpcpy(path, c->target);
	for (i = 1; i < c->depth; i++)
		p = stpcpy(stpcpy(p, "/"), c->dirs[i].name);
	if (name)
		stpcpy(stpcpy(p, "/"), name);
	return path;
}

/* A message about @name of the current directory, with @err's text. */
static void lfs_commit_error(struct lfs_commit *c, const char *name,
			     const char *what, int err, const char *hint)
{
	char *path = lfs_commit_path(c, name);

	fprintf(stderr, "%s: %s: %s: %s%s\n", c->prog,
		path ? path : c->target, what, strerror(err), hint);
	free(path);
}

/* Every entry of directory @fd but "." and ".." into @d's names. */
static int lfs_read_names(int fd, struct lfs_dir *d)
{
	size_t cap = 0;
	struct dirent *de;
	DIR *dir;
	int err = 0;

	fd = dup(fd);
	if (fd < 0)
		return -errno;
	dir = fdopendir(fd);
	if (!dir) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		size_t n;

		errno = 0;
		de = readdir(dir);
		if (!de) {
			err = -errno;
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n = strlen(de->d_name) + 1;
		if (lfs_grow(&d->names, &cap, d->len + n, 1)) {
			err = -ENOMEM;
			break;
		}
		memcpy(d->names + d->len, de->d_name, n);
		d->len += n;
	}
	closedir(dir);
	return err;
}

/*
 * Enter directory @fd, named @name in the current one (NULL: the root):
 * read its entries.  0; -ENOMEM; or -1 when it cannot be entered (said
 * and counted).  @fd stays the caller's.
 */
static int lfs_commit_push(struct lfs_commit *c, int fd, const char *name)
{
	struct lfs_dir *d;
	struct stat st;
	int err;

	if (fstat(fd, &st)) {
		lfs_commit_error(c, name, "fstat", errno, "");
		c->nr_failed++;
		return -1;
	}
	if (lfs_grow(&c->dirs, &c->cap, c->depth + 1, sizeof(*c->dirs)))
		return -ENOMEM;
	d = &c->dirs[c->depth];
	memset(d, 0, sizeof(*d));
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	if (name) {
		d->name = strdup(name);
		if (!d->name)
			return -ENOMEM;
	}
	c->depth++;
	c->nr_dirs++;
	err = lfs_read_names(fd, d);
	if (err == -ENOMEM)
		return err;
	if (err) {
		/* the entries read so far are still visited */
		lfs_commit_error(c, NULL, "reading the directory", -err, "");
		c->nr_failed++;
	}
	return 0;
}

static void lfs_commit_pop(struct lfs_commit *c)
{
	struct lfs_dir *d = &c->dirs[--c->depth];

	free(d->name);
	free(d->names);
}

/*
 * Back from the current directory, open as *@fd, to its parent: through
 * "..", which must be the directory the walk came from.  On success *@fd
 * is the parent, open.
 */
static int lfs_commit_up(struct lfs_commit *c, int *fd)
{
	const struct lfs_dir *parent = &c->dirs[c->depth - 2];
	struct stat st;
	int pfd;

	pfd = openat(*fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		lfs_commit_error(c, NULL, "opening its parent again", errno,
				 "");
		return -1;
	}
	if (fstat(pfd, &st) || st.st_dev != parent->dev ||
	    st.st_ino != parent->ino) {
		lfs_commit_error(c, NULL, "opening its parent again", ESTALE,
				 " (moved during the walk)");
		close(pfd);
		return -1;
	}
	close(*fd);
	*fd = pfd;
	lfs_commit_pop(c);
	return 0;
}

/*
 * Name @name of the current directory, open as @dfd, is not a directory:
 * link it up.  0, or -1 when the walk must stop (no permission, read-only
 * mount, a module without the ioctl).
 */
static int lfs_commit_name(struct lfs_commit *c, int dfd, const char *name)
{
	struct lfs_link_up_at req = {
		.name = (uintptr_t)name,
		.namelen = strlen(name),
	};
	int ret, err;

	c->nr_names++;
	ret = ioctl(dfd, LFS_IOC_LINK_UP_AT, &req);
	if (ret >= 0) {
		if (ret == 1)
			c->nr_linked++;
		return 0;
	}
	err = errno;
	if (err == ENOENT)	/* gone since the directory was read */
		return 0;
	lfs_commit_error(c, name, "linking up", err,
			 err == EPERM ? " (needs CAP_SYS_ADMIN)" :
			 err == ENOTTY ? " (a layerfs module without LFS_IOC_LINK_UP_AT)" :
			 "");
	c->nr_failed++;
	if (err == EPERM) {
		c->status = LFS_EX_USAGE;
		return -1;
	}
	return err == EROFS || err == ENOTTY ? -1 : 0;
}

/*
 * Entry @name of the current directory @dfd: a directory of this mount is
 * entered (*@dfd becomes it), anything but a directory is linked up (also
 * under a mount on it), a directory of another mount is left alone.  0, or
 * -1 to stop the walk.
 */
static int lfs_commit_entry(struct lfs_commit *c, int *dfd, const char *name)
{
	struct statx stx;
	int pfd, fd, ret = 0;

	pfd = openat(*dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0) {
		if (errno == ENOENT)	/* gone since the directory was read */
			return 0;
		lfs_commit_error(c, name, "opening", errno, "");
		c->nr_failed++;
		return 0;
	}
	if (statx(pfd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		  STATX_TYPE | STATX_INO | STATX_MNT_ID, &stx)) {
		lfs_commit_error(c, name, "statx", errno, "");
		c->nr_failed++;
		goto out;
	}
	/* not a directory: the ioctl looks the name up in *@dfd */
	if (!S_ISDIR(stx.stx_mode)) {
		ret = lfs_commit_name(c, *dfd, name);
		goto out;
	}
	/* the copy of the mount has no mounts on it: never entered */
	if (makedev(stx.stx_dev_major, stx.stx_dev_minor) != c->dev ||
	    (c->has_mnt_id && (!(stx.stx_mask & STATX_MNT_ID) ||
			       stx.stx_mnt_id != c->mnt_id))) {
		lfs_commit_error(c, name, "not walked", EXDEV,
				 " (another mount on it)");
		c->nr_failed++;
		goto out;
	}
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		lfs_commit_error(c, name, "opening", errno, "");
		c->nr_failed++;
		goto out;
	}
	ret = lfs_commit_push(c, fd, name);
	if (ret) {
		close(fd);
		if (ret != -ENOMEM)
			ret = 0;
		goto out;
	}
	close(*dfd);
	*dfd = fd;
out:
	close(pfd);
	return ret;
}

/* The walk from the root, open as @fd (closed here): 0, -1 or -ENOMEM. */
static int lfs_commit_walk(struct lfs_commit *c, int fd)
{
	int err;

	err = lfs_commit_push(c, fd, NULL);
	while (!err) {
		struct lfs_dir *d = &c->dirs[c->depth - 1];
		const char *name;

		if (d->pos == d->len) {
			if (c->depth == 1)
				break;
			err = lfs_commit_up(c, &fd);
			continue;
		}
		name = d->names + d->pos;
		d->pos += strlen(name) + 1;
		err = lfs_commit_entry(c, &fd, name);
	}
	while (c->depth)
		lfs_commit_pop(c);
	free(c->dirs);
	close(fd);
	return err;
}

/*
 * The walk goes over a detached copy of the mount @fd (closed here), made
 * without the mounts on it: no mount, a container's or any other, can
 * hide a directory of the layerfs from it.  Returns the copy's root, open,
 * its statx in @stx; or minus an exit status, said.
 */
static int lfs_commit_clone(const struct lfs_mount *m, const char *target,
			    int fd, struct statx *stx)
{
	int tfd, err;

	tfd = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			AT_EMPTY_PATH);
	err = errno;
	close(fd);
	if (tfd < 0) {
		fprintf(stderr, "%s: %s: cloning the mount to walk it: %s%s\n",
			m->prog, target, strerror(err),
			err == EPERM ? " (needs CAP_SYS_ADMIN)" : "");
		return err == EPERM ? -LFS_EX_USAGE : -LFS_EX_SYSERR;
	}
	/* an O_PATH fd: its root opened for reading keeps the copy alive */
	fd = openat(tfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	close(tfd);
	if (fd < 0 || statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, stx)) {
		fprintf(stderr, "%s: %s: %s\n", m->prog, target,
			strerror(fd < 0 ? err : errno));
		if (fd >= 0)
			close(fd);
		return -LFS_EX_SYSERR;
	}
	return fd;
}

/*
 * --commit: MOUNTPOINT must be the root of a writable layerfs mount.
 * Returns an exit status.
 */
static int lfs_commit(struct lfs_mount *m, const char *target)
{
	struct lfs_commit c = {
		.prog = m->prog,
		.target = target,
		.status = LFS_EX_OK,
	};
	struct statvfs svfs;
	struct statx stx;
	struct statfs sfs;
	int fd, err;

	fd = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", m->prog, target, strerror(errno));
		return LFS_EX_USAGE;
	}
	if (fstatfs(fd, &sfs) || fstatvfs(fd, &svfs) ||
	    statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_MNT_ID, &stx)) {
		fprintf(stderr, "%s: %s: %s\n", m->prog, target, strerror(errno));
		close(fd);
		return LFS_EX_SYSERR;
	}
	if (sfs.f_type != LFS_SUPER_MAGIC) {
		fprintf(stderr, "%s: %s: not a layerfs mount (filesystem type 0x%lx)\n",
			m->prog, target, (unsigned long)sfs.f_type);
		close(fd);
		return LFS_EX_USAGE;
	}
	if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    !(stx.stx_attributes & STATX_ATTR_MOUNT_ROOT)) {
		fprintf(stderr, "%s: %s: not the root of a layerfs mount: a commit walks the whole mount\n",
			m->prog, target);
		close(fd);
		return LFS_EX_USAGE;
	}
	if (svfs.f_flag & ST_RDONLY) {
		fprintf(stderr, "%s: %s: mounted read-only: no name can be linked up\n",
			m->prog, target);
		close(fd);
		return LFS_EX_FAIL;
	}
	fd = lfs_commit_clone(m, target, fd, &stx);
	if (fd < 0)
		return -fd;
	c.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	c.has_mnt_id = stx.stx_mask & STATX_MNT_ID;
	c.mnt_id = stx.stx_mnt_id;
	err = lfs_commit_walk(&c, fd);
	if (err == -ENOMEM) {
		fprintf(stderr, "%s: out of memory\n", m->prog);
		return LFS_EX_SYSERR;
	}
	if (m->verbose)
		fprintf(stderr, "%s: %s: %zu names in %zu directories; linked up: %zu; failed: %zu\n",
			m->prog, target, c.nr_names, c.nr_dirs, c.nr_linked,
			c.nr_failed);
	if (c.status != LFS_EX_OK)
		return c.status;
	return c.nr_failed || err ? LFS_EX_FAIL : LFS_EX_OK;
}

/* --commit takes one operand, and of the options only -v and -N. */
static int lfs_commit_usage(const struct lfs_mount *m, int nr_pos)
{
	if (nr_pos != 1) {
		fprintf(stderr, "%s: --commit takes one MOUNTPOINT\n", m->prog);
		return -EINVAL;
	}
	if (m->nr_param || m->nr_lower || m->attr_clr || m->remount ||
	    m->fake || m->dry_run || m->sloppy) {
		fprintf(stderr, "%s: --commit takes no layers, options, -f, -s or --dry-run: it mounts nothing\n",
			m->prog);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lower", required_argument, NULL, 'l' },
		{ "lower-file", required_argument, NULL, 'L' },
		{ "options", required_argument, NULL, 'o' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "namespace", required_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "fake", no_argument, NULL, 'f' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "commit", no_argument, NULL, 'C' },
		{ "by-fd", no_argument, NULL, 'F' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lfs_mount m = { .userns = -1 };
	const char *pos[2], *source = "layerfs", *target;
	char *base = strrchr(argv[0], '/');
	int c, err = 0, nr_pos = 0;

	m.prog = base ? base + 1 : argv[0];
	/*
	 * "-" first: operands come back as option 1 in order, wherever they
	 * are, so "SOURCE TARGET -o OPTS" parses as mount(8) passes it even
	 * under POSIXLY_CORRECT.
	 */
	while ((c = getopt_long(argc, argv, "-o:l:L:rN:vfnst:Vh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 1:
			if (nr_pos == 2) {
				fprintf(stderr, "%s: %s: one operand too many\n",
					m.prog, optarg);
				return LFS_EX_USAGE;
			}
			pos[nr_pos++] = optarg;
			break;
		case 'o':
			err = lfs_parse_options(&m, optarg);
			break;
		case 'l':
			err = lfs_add_lower(&m, optarg, "--lower");
			break;
		case 'L':
			err = lfs_read_lower_file(&m, optarg);
			break;
		case 'r':
			lfs_mount_attr(&m, "ro");
			break;
		case 'N':
			m.ns = optarg;
			break;
		case 'v':
			m.verbose = true;
			break;
		case 'f':
			m.fake = true;
			break;
		case 's':
			m.sloppy = true;
			break;
		case 'D':
			m.dry_run = true;
			break;
		case 'C':
			m.commit = true;
			break;
		case 'F':
			m.by_fd = true;
			break;
		case 'n':	/* no mtab: there is none to write */
		case 't':	/* mount(8)'s type.subtype: we are layerfs */
			break;
		case 'V':
			printf("%s %s\n", m.prog, LFS_VERSION);
			return LFS_EX_OK;
		case 'h':
			lfs_usage(stdout, m.prog);
			return LFS_EX_OK;
		default:
			lfs_usage(stderr, m.prog);
			return LFS_EX_USAGE;
		}
		if (err == -ENOMEM) {
			fprintf(stderr, "%s: out of memory\n", m.prog);
			return LFS_EX_SYSERR;
		}
		if (err == -EINVAL)
			return LFS_EX_FAIL;
		if (err) {
			/* getcwd() failed, or -L could not read its file */
			if (c != 'L')
				fprintf(stderr, "%s: %s\n", m.prog, strerror(-err));
			return c == 'L' ? LFS_EX_USAGE : LFS_EX_SYSERR;
		}
	}

	if (nr_pos == 0) {
		if (m.commit)
			lfs_commit_usage(&m, nr_pos);
		else
			lfs_usage(stderr, m.prog);
		return LFS_EX_USAGE;
	}
	target = pos[nr_pos - 1];
	if (nr_pos == 2)
		source = pos[0];
	if (m.commit) {
		if (lfs_commit_usage(&m, nr_pos))
			return LFS_EX_USAGE;
	} else if (!m.remount && !m.nr_lower) {
		fprintf(stderr, "%s: no lower layer given\n", m.prog);
		return LFS_EX_FAIL;
	}
	if (!m.commit && !m.remount &&
	    (lfs_default_whiteout(&m) || lfs_default_metacopy(&m))) {
		fprintf(stderr, "%s: out of memory\n", m.prog);
		return LFS_EX_SYSERR;
	}
	if (!m.uid_map != !m.gid_map) {
		fprintf(stderr, "%s: uidmapping= and gidmapping= go together\n",
			m.prog);
		return LFS_EX_FAIL;
	}
	if (m.uid_map && (m.remount || m.commit)) {
		fprintf(stderr, "%s: uidmapping=, gidmapping=: only for a new mount (a mount keeps its idmapping)\n",
			m.prog);
		return LFS_EX_FAIL;
	}
	if (m.uid_map && lfs_in_user_ns() &&
	    (lfs_idmap_add_caller(&m.uid_map, geteuid()) ||
	     lfs_idmap_add_caller(&m.gid_map, getegid()))) {
		fprintf(stderr, "%s: out of memory\n", m.prog);
		return LFS_EX_SYSERR;
	}
	if (m.dry_run) {
		lfs_print_plan(&m, source, target);
		return LFS_EX_OK;
	}
	/*
	 * The idmapping's namespace is made before -N is entered: its maps
	 * are written through this process's /proc, which after setns()
	 * may be another pid namespace's, where the child's pid can name
	 * another process (one that made a user namespace to receive them).
	 */
	if (m.uid_map && !m.fake) {
		m.userns = lfs_idmap_userns(&m);
		if (m.userns < 0)
			return LFS_EX_FAIL;
	}
	if (m.ns) {
		/* setns() moves the cwd to the namespace's root */
		target = lfs_abspath(&m, target);
		if (!target) {
			fprintf(stderr, "%s: %s\n", m.prog, strerror(errno));
			return LFS_EX_SYSERR;
		}
		if (lfs_enter_ns(&m))
			return LFS_EX_FAIL;
	}
	if (m.commit)
		return lfs_commit(&m, target);
	return m.remount ? lfs_remount(&m, target) :
			   lfs_mount_new(&m, source, target);
}
