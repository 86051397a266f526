// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs-mount: mount a layerfs from any number of layers through the new
 * mount API (fsopen, fsconfig with one "lowerdir+" per layer, fsmount,
 * move_mount), so the one-page limit of mount(2) options does not apply.
 *
 * Also serves as mount.layerfs (mount(8) runs "mount.layerfs SOURCE TARGET
 * -o OPTIONS") and as a container engine's mount program ("PROG -o
 * OPTIONS TARGET").  See usage() for the options.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include "uapi/layerfs.h"

#define LFS_MOUNT_VERSION "0.1"

/* exit codes, as mount(8) documents them */
enum {
	LFS_EX_OK = 0,
	LFS_EX_USAGE = 1,
	LFS_EX_SYSERR = 2,
	LFS_EX_FAIL = 32,
};

struct lfs_mount {
	char **lower;		/* layers, top first */
	size_t nr_lower;
	size_t cap_lower;
	char **key;		/* other fsconfig parameters, in order */
	char **val;		/* their values, NULL for flags */
	size_t nr_opt;
	size_t cap_opt;
	unsigned int attr;	/* MOUNT_ATTR_* for fsmount */
	bool verbose;
	bool fake;
	const char *prog;
};

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s [OPTIONS] TARGET\n"
		"       %s SOURCE TARGET [-o OPTIONS]   (as mount.layerfs)\n"
		"\n"
		"Mount layerfs on TARGET from any number of layers.\n"
		"\n"
		"  -o OPTIONS        comma-separated mount options, as for overlay:\n"
		"                    lowerdir=TOP:...:BOTTOM (\\: \\, \\\\ escape),\n"
		"                    upperdir=DIR, workdir=DIR, ro, rw, nosuid,\n"
		"                    nodev, noexec, noatime; others go to the kernel\n"
		"  -l, --lower DIR   add a lower layer below those given so far\n"
		"  -L, --lower-file FILE\n"
		"                    add the layers listed in FILE, one per line,\n"
		"                    top first (\"-\" reads standard input)\n"
		"  -r, --read-only   mount read-only\n"
		"  -v, --verbose     say what is done\n"
		"  -f, --fake        check the options, mount nothing\n"
		"  -n, -s            accepted for mount(8), ignored\n"
		"      --version     print the version\n"
		"  -h, --help        this text\n"
		"\n"
		"Relative layer paths resolve against the working directory.\n"
		"Exit status: 0 mounted, 1 bad usage, 2 system error, 32 mount failed.\n",
		prog, prog);
}

static int lfs_grow(void ***arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

static int lfs_add_lower(struct lfs_mount *m, const char *dir)
{
	char *copy;

	if (!*dir) {
		fprintf(stderr, "%s: empty layer path\n", m->prog);
		return -EINVAL;
	}
	if (lfs_grow((void ***)&m->lower, &m->cap_lower, m->nr_lower + 1,
		     sizeof(*m->lower)))
		return -ENOMEM;
	copy = strdup(dir);
	if (!copy)
		return -ENOMEM;
	m->lower[m->nr_lower++] = copy;
	return 0;
}

static int lfs_add_opt(struct lfs_mount *m, const char *key, const char *val)
{
	if (lfs_grow((void ***)&m->key, &m->cap_opt, m->nr_opt + 1,
		     sizeof(*m->key)))
		return -ENOMEM;
	/* key and val grow together: val has the same capacity */
	m->val = realloc(m->val, m->cap_opt * sizeof(*m->val));
	if (!m->val)
		return -ENOMEM;
	m->key[m->nr_opt] = strdup(key);
	m->val[m->nr_opt] = val ? strdup(val) : NULL;
	if (!m->key[m->nr_opt] || (val && !m->val[m->nr_opt]))
		return -ENOMEM;
	m->nr_opt++;
	return 0;
}

/* Split "A:B\:C" at unescaped colons, undoing the escapes. */
static int lfs_add_lowerdir_list(struct lfs_mount *m, char *list)
{
	char *start = list, *in = list, *out = list;
	int err;

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
		err = lfs_add_lower(m, start);
		if (err || c == '\0')
			return err;
		start = out = in;
	}
}

struct lfs_attr_name {
	const char *name;
	unsigned int set;
	unsigned int clear;
};

static const struct lfs_attr_name lfs_attrs[] = {
	{ "ro", MOUNT_ATTR_RDONLY, 0 },
	{ "rw", 0, MOUNT_ATTR_RDONLY },
	{ "nosuid", MOUNT_ATTR_NOSUID, 0 },
	{ "suid", 0, MOUNT_ATTR_NOSUID },
	{ "nodev", MOUNT_ATTR_NODEV, 0 },
	{ "dev", 0, MOUNT_ATTR_NODEV },
	{ "noexec", MOUNT_ATTR_NOEXEC, 0 },
	{ "exec", 0, MOUNT_ATTR_NOEXEC },
	{ "noatime", MOUNT_ATTR_NOATIME, 0 },
	{ "relatime", MOUNT_ATTR_RELATIME, 0 },
	{ "nodiratime", MOUNT_ATTR_NODIRATIME, 0 },
	{ "defaults", 0, 0 },
	{ "auto", 0, 0 },
	{ "noauto", 0, 0 },
	{ "user", 0, 0 },
	{ "nouser", 0, 0 },
	{ "_netdev", 0, 0 },
};

/* A mount attribute rather than a filesystem option? */
static bool lfs_mount_attr(struct lfs_mount *m, const char *opt)
{
	size_t i;

	for (i = 0; i < sizeof(lfs_attrs) / sizeof(lfs_attrs[0]); i++) {
		if (strcmp(opt, lfs_attrs[i].name))
			continue;
		m->attr = (m->attr | lfs_attrs[i].set) & ~lfs_attrs[i].clear;
		return true;
	}
	/* x-* options are for userspace helpers, never the kernel */
	return !strncmp(opt, "x-", 2);
}

/* Parse "-o" options: comma-separated, backslash escapes the next char. */
static int lfs_parse_options(struct lfs_mount *m, char *opts)
{
	char *start = opts, *in = opts;
	int err;

	for (;; in++) {
		char c = *in;
		char *eq;

		if (c == '\\' && in[1]) {
			in++;
			continue;
		}
		if (c != ',' && c != '\0')
			continue;
		*in = '\0';
		if (*start && !lfs_mount_attr(m, start)) {
			eq = strchr(start, '=');
			if (eq)
				*eq++ = '\0';
			if (!strcmp(start, "lowerdir") && eq)
				err = lfs_add_lowerdir_list(m, eq);
			else if (!strcmp(start, "lowerdir+") && eq)
				err = lfs_add_lower(m, eq);
			else
				err = lfs_add_opt(m, start, eq);
			if (err)
				return err;
		}
		if (c == '\0')
			return 0;
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
		fprintf(stderr, "%s: %s: %s\n", m->prog, path, strerror(errno));
		return -errno;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		err = lfs_add_lower(m, line);
		if (err)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return err;
}

/* Print what the kernel said about the configuration. */
static void lfs_print_fc_log(struct lfs_mount *m, int fsfd)
{
	char buf[1024];
	ssize_t n;

	while ((n = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		if (n && buf[n - 1] == '\n')
			buf[--n] = '\0';
		/* "e layerfs: ..." -> "layerfs: ..." */
		fprintf(stderr, "%s: %s\n", m->prog, n > 2 ? buf + 2 : buf);
	}
}

static int lfs_config(struct lfs_mount *m, int fsfd, unsigned int cmd,
		      const char *key, const char *val)
{
	if (m->verbose)
		fprintf(stderr, "%s: fsconfig %s%s%s\n", m->prog, key,
			val ? "=" : "", val ? val : "");
	if (fsconfig(fsfd, cmd, key, val, 0) == 0)
		return 0;
	fprintf(stderr, "%s: %s%s%s: %s\n", m->prog, key, val ? "=" : "",
		val ? val : "", strerror(errno));
	lfs_print_fc_log(m, fsfd);
	return -1;
}

static int lfs_do_mount(struct lfs_mount *m, const char *source,
			const char *target)
{
	int fsfd, mfd = -1, ret = LFS_EX_FAIL;
	size_t i;

	fsfd = fsopen(LFS_FSTYPE, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		fprintf(stderr, "%s: fsopen(%s): %s%s\n", m->prog, LFS_FSTYPE,
			strerror(errno),
			errno == ENODEV ? " (is the layerfs module loaded?)" : "");
		return LFS_EX_FAIL;
	}
	if (lfs_config(m, fsfd, FSCONFIG_SET_STRING, "source", source))
		goto out;
	for (i = 0; i < m->nr_lower; i++)
		if (lfs_config(m, fsfd, FSCONFIG_SET_STRING, "lowerdir+",
			       m->lower[i]))
			goto out;
	for (i = 0; i < m->nr_opt; i++) {
		unsigned int cmd = m->val[i] ? FSCONFIG_SET_STRING :
					       FSCONFIG_SET_FLAG;

		if (lfs_config(m, fsfd, cmd, m->key[i], m->val[i]))
			goto out;
	}
	if (m->attr & MOUNT_ATTR_RDONLY)
		if (lfs_config(m, fsfd, FSCONFIG_SET_FLAG, "ro", NULL))
			goto out;
	if (m->fake) {
		ret = LFS_EX_OK;
		goto out;
	}
	if (lfs_config(m, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL))
		goto out;
	mfd = fsmount(fsfd, FSMOUNT_CLOEXEC, m->attr);
	if (mfd < 0) {
		fprintf(stderr, "%s: fsmount: %s\n", m->prog, strerror(errno));
		lfs_print_fc_log(m, fsfd);
		goto out;
	}
	if (move_mount(mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH)) {
		fprintf(stderr, "%s: %s: %s\n", m->prog, target, strerror(errno));
		goto out;
	}
	if (m->verbose)
		fprintf(stderr, "%s: mounted %zu layers on %s\n", m->prog,
			m->nr_lower, target);
	ret = LFS_EX_OK;
out:
	if (mfd >= 0)
		close(mfd);
	close(fsfd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "lower", required_argument, NULL, 'l' },
		{ "lower-file", required_argument, NULL, 'L' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "fake", no_argument, NULL, 'f' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lfs_mount m = { .prog = "layerfs-mount" };
	const char *source = "layerfs", *target;
	char *base = strrchr(argv[0], '/');
	int c, err = 0;

	m.prog = base ? base + 1 : argv[0];
	while ((c = getopt_long(argc, argv, "o:l:L:rvfnsN:t:h", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'o':
			err = lfs_parse_options(&m, optarg);
			break;
		case 'l':
			err = lfs_add_lower(&m, optarg);
			break;
		case 'L':
			err = lfs_read_lower_file(&m, optarg);
			break;
		case 'r':
			m.attr |= MOUNT_ATTR_RDONLY;
			break;
		case 'v':
			m.verbose = true;
			break;
		case 'f':
			m.fake = true;
			break;
		case 'n':
		case 's':
		case 't':
			break;
		case 'N':
			fprintf(stderr, "%s: -N is not supported\n", m.prog);
			return LFS_EX_USAGE;
		case 'V':
			printf("%s %s\n", m.prog, LFS_MOUNT_VERSION);
			return LFS_EX_OK;
		case 'h':
			usage(stdout, m.prog);
			return LFS_EX_OK;
		default:
			usage(stderr, m.prog);
			return LFS_EX_USAGE;
		}
		if (err == -ENOMEM) {
			fprintf(stderr, "%s: out of memory\n", m.prog);
			return LFS_EX_SYSERR;
		}
		if (err)
			return LFS_EX_USAGE;
	}

	if (argc - optind == 2) {
		source = argv[optind];
		target = argv[optind + 1];
	} else if (argc - optind == 1) {
		target = argv[optind];
	} else {
		usage(stderr, m.prog);
		return LFS_EX_USAGE;
	}
	if (!m.nr_lower) {
		fprintf(stderr, "%s: no lower layer given\n", m.prog);
		return LFS_EX_USAGE;
	}
	return lfs_do_mount(&m, source, target);
}
