// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-fuzz: hostile layers, built by an unprivileged user and mounted in
 * a user namespace of its own (issue #26, tests/bats/86-fuzz.bats).
 *
 *   lfs-fuzz [OPTIONS] DIR
 *     --seed N          the run's seed (default: from the clock); round R
 *                       runs on a seed derived from N and R, printed
 *     --replay S        run one round on round seed S (as printed)
 *     --seconds S       rounds until S seconds have passed
 *     --rounds N        at most N rounds (without either: 60 seconds)
 *     --uid U           the unprivileged user (default 1000)
 *     --fstype T        layerfs (default) or overlay
 *     --round-timeout S a round that takes longer has hung (default 300)
 *     --fake-violation  the oracle rejects one good read a round (shows
 *                       that a violation fails the run)
 *     --trusted         root's layers instead: the child stays root (a
 *                       mount namespace of its own only), the markers
 *                       are trusted.overlay.* and the options those that
 *                       read more of them (redirect_dir=on, index=on):
 *                       the origin, index and redirect parsers, which
 *                       userxattr never reaches; index/ entries named
 *                       after lower objects, with matching origins;
 *                       no secrets
 *     -v                every operation and its result
 *
 * Started as root on DIR (ext4, so that user.* xattrs stay; with
 * ea_inode for values up to 64 KiB).  Each round forks a child that, as
 * root, makes the round's directory and a few "secrets" (files of an
 * owner the namespace does not map, mode 0600, and a directory of
 * mode 0700 of that owner), then takes the user's ids for good, enters a
 * new user and mount namespace in which it is root (the user mapped to
 * 0, nothing else mapped), and there:
 *
 *  - builds 1 to LFZ_MAX_LAYERS lower layers, and at random an upper and
 *    a work directory: directories, files, symlinks (loops, targets of
 *    PATH_MAX bytes, absolute ones into other layers), fifos, sockets,
 *    0/0 character devices, hard links across layers, names of 1 and 255
 *    bytes with odd bytes, and user.overlay.* markers of every name in
 *    uapi/layerfs.h (and others) with hostile values: redirects to "/",
 *    "..", itself, its parent, another layer, loops of two directories;
 *    origin and index blobs with a valid header and wrong fields; link
 *    counts; two objects that redirect to each other; garbage of 0 to
 *    64 KiB;
 *  - mounts them with random options, by path or by descriptor
 *    (FSCONFIG_SET_FD), walks the mount (lstat, getdents64 with small
 *    buffers, readlink, open and read, listxattr and getxattr), makes
 *    random changes (create, mkdir, symlink, mknod, unlink, rmdir, rename
 *    with RENAME_NOREPLACE, RENAME_EXCHANGE and RENAME_WHITEOUT, link,
 *    chmod, truncate, setxattr, removexattr, writes that copy up; a round
 *    in four first changes its lower layers under the mount, and may
 *    move a layer's root or the work directory into a layer), walks
 *    again, unmounts, and mounts again (the same stack, or the upper as
 *    the top lower layer) to read what the upper layer kept.
 *
 * Errors of operations are expected and counted by class.  The oracle:
 *
 *  - every regular file's content is made of 16-byte records
 *    "@RRRRRR.IIIIIII\n" (round, id of a record given out this round);
 *    the fuzzer writes only whole records at record offsets, so all data
 *    read through the mount is records of this round, zeros (holes) or
 *    a record's beginning followed by zeros (truncate): anything else
 *    (a secret, stale or foreign memory) is a violation;
 *  - the secrets hold "!SECRET"; the user cannot read them without the
 *    mount (checked each round), so no read through it may show them;
 *  - listxattr and getxattr through the mount never show a marker
 *    (user.overlay.*, which layerfs hides with userxattr).
 *
 * Each violation is printed as "lfs-fuzz: round R seed S: VIOLATION: ...".
 * A round runs under an alarm; a round that does not end, or whose child
 * dies of a signal, fails the run.  The end: a summary of rounds,
 * mounts, operations and errno classes.  Exit status 0 when clean, 1 on
 * any violation, hang or crash, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <getopt.h>
#include <limits.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <linux/openat2.h>

#include "uapi/layerfs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define LFZ_MAX_LAYERS		4	/* lower layers a round builds */
#define LFZ_MAX_ENTRIES		24	/* objects a layer gets, at most */
#define LFZ_MAX_DEPTH		3	/* directory depth in a layer */
#define LFZ_MAX_PATHS		512	/* paths a round remembers */
#define LFZ_WALK_MAX		1500	/* entries one walk visits */
#define LFZ_OPS_MAX		60	/* changes through a mount */
#define LFZ_REC			16	/* bytes of a content record */
#define LFZ_READ_MAX		(64 * 1024)
#define LFZ_XATTR_MAX		(64 * 1024)
#define LFZ_ERRNO_MAX		134
#define LFZ_SECRET		"!SECRET"

/* what a round counts, in memory the child shares with the parent */
enum lfz_op {
	LFZ_OP_BUILD, LFZ_OP_MARK, LFZ_OP_MOUNT, LFZ_OP_STAT, LFZ_OP_GETDENTS,
	LFZ_OP_READLINK, LFZ_OP_READ, LFZ_OP_XATTR, LFZ_OP_CREATE,
	LFZ_OP_MKDIR, LFZ_OP_SYMLINK, LFZ_OP_MKNOD, LFZ_OP_UNLINK,
	LFZ_OP_RMDIR, LFZ_OP_RENAME, LFZ_OP_LINK, LFZ_OP_CHMOD,
	LFZ_OP_TRUNCATE, LFZ_OP_SETXATTR, LFZ_OP_WRITE, LFZ_OP_UMOUNT,
	LFZ_OP_NR
};

static const char *const lfz_op_names[LFZ_OP_NR] = {
	"build", "mark", "mount", "stat", "getdents", "readlink", "read",
	"xattr", "create", "mkdir", "symlink", "mknod", "unlink", "rmdir",
	"rename", "link", "chmod", "truncate", "setxattr", "write", "umount",
};

struct lfz_stats {
	unsigned long rounds;		/* rounds ended */
	unsigned long ok[LFZ_OP_NR];	/* operations that succeeded */
	unsigned long err[LFZ_OP_NR];	/* ... that failed */
	unsigned long errnos[LFZ_ERRNO_MAX + 1]; /* failures by errno */
	unsigned long violations;	/* oracle violations */
	unsigned long reads_checked;	/* reads the oracle judged */
};

/* the options */
struct lfz_opts {
	uint64_t seed;
	bool replay;
	long seconds;
	long rounds;
	uid_t uid;
	const char *fstype;
	long round_timeout;
	bool fake;
	bool trusted;
	bool verbose;
	const char *dir;
};

/* the markers' prefix of the mode the run is in */
static const char *lfz_prefix(const struct lfz_opts *o)
{
	return o->trusted ? LFS_XATTR_PREFIX : LFS_XATTR_USER_PREFIX;
}

/* one round, in the child */
struct lfz_round {
	uint64_t rng;			/* splitmix64 state */
	uint64_t seed;			/* the round's seed, for messages */
	unsigned int id;		/* round number, in the records */
	const struct lfz_opts *o;
	struct lfz_stats *st;
	char dir[256];			/* the round's directory */
	int nr_layers;
	bool upper;			/* an upper and a work directory */
	unsigned int next_rec;		/* records given out */
	bool fake_done;			/* --fake-violation: given */
	char *paths[LFZ_MAX_PATHS];	/* relative to the round's directory */
	int nr_paths;
	char *mpaths[LFZ_MAX_PATHS];	/* relative to the mount, last walk */
	int nr_mpaths;
	int mntfd;			/* the mount's root, or -1 */
	char moved[2][PATH_MAX];	/* a layer's root moved from, to */
	int walked;			/* entries this walk visited */
	char buf[LFZ_READ_MAX + LFZ_REC];
};

static uint64_t lfz_next(struct lfz_round *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* a number in [0, n) */
static unsigned int lfz_rand(struct lfz_round *r, unsigned int n)
{
	return n ? lfz_next(r) % n : 0;
}

/* true one time in n */
static bool lfz_one_in(struct lfz_round *r, unsigned int n)
{
	return lfz_rand(r, n) == 0;
}

/* a violation, its odd bytes as \xNN (names hold any byte) */
__attribute__((format(printf, 2, 3)))
static void lfz_violation(struct lfz_round *r, const char *fmt, ...)
{
	char msg[1024];
	const unsigned char *c;
	va_list ap;

	r->st->violations++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("lfs-fuzz: round %u seed %llu: VIOLATION: ", r->id,
	       (unsigned long long)r->seed);
	for (c = (const unsigned char *)msg; *c; c++) {
		if (*c < 0x20 || *c >= 0x7f || *c == '\\')
			printf("\\x%02x", *c);
		else
			putchar(*c);
	}
	putchar('\n');
	fflush(stdout);
}

/* count the result of one operation: @ret < 0 with errno set failed */
static long lfz_count(struct lfz_round *r, enum lfz_op op, long ret,
		      const char *what)
{
	int e = errno;

	if (ret < 0) {
		r->st->err[op]++;
		r->st->errnos[e > 0 && e <= LFZ_ERRNO_MAX ? e : 0]++;
	} else {
		r->st->ok[op]++;
	}
	if (r->o->verbose)
		printf("  %s %s: %s\n", lfz_op_names[op], what,
		       ret < 0 ? strerror(e) : "ok");
	errno = e;
	return ret;
}

/* ---- names, values, contents ---- */

/* a name for a new object: short, 255 bytes, odd bytes, marker-like */
static void lfz_name(struct lfz_round *r, char *name)
{
	static const char *const fixed[] = {
		"a", "b", "d", "x", ".wh.a", ".wh..wh..opq", ".wh..wh.plnk",
		"work", "index", "incompat", "..a", "...", " ", "#0",
		LFS_WHITEOUT_TARGET,
	};
	unsigned int i, len;

	switch (lfz_rand(r, 6)) {
	case 0:
		len = lfz_one_in(r, 2) ? NAME_MAX : 1 + lfz_rand(r, NAME_MAX);
		for (i = 0; i < len; i++)
			name[i] = 'a' + lfz_rand(r, 3);
		name[len] = 0;
		break;
	case 1:
		len = 1 + lfz_rand(r, 12);
		for (i = 0; i < len; i++) {
			do
				name[i] = (char)(1 + lfz_rand(r, 255));
			while (name[i] == '/');
		}
		name[len] = 0;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			strcpy(name, "dots");
		break;
	case 2:
		strcpy(name, fixed[lfz_rand(r, ARRAY_SIZE(fixed))]);
		break;
	default:
		name[0] = 'a' + lfz_rand(r, 6);
		name[1] = 0;
		break;
	}
}

/* one content record, of a new id */
static void lfz_record(struct lfz_round *r, char *rec)
{
	char tmp[LFZ_REC + 1];

	snprintf(tmp, sizeof(tmp), "@%06x.%07x\n",
		 (unsigned int)(r->seed & 0xffffff), r->next_rec++ & 0xfffffff);
	memcpy(rec, tmp, LFZ_REC);
}

/* @n records into @buf */
static size_t lfz_records(struct lfz_round *r, char *buf, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		lfz_record(r, buf + i * LFZ_REC);
	return (size_t)n * LFZ_REC;
}

/* whether @c, at place @i of a record, fits the format */
static bool lfz_rec_char(unsigned int i, char c, const char *round_hex)
{
	if (i == 0)
		return c == '@';
	if (i <= 6)
		return c == round_hex[i - 1];
	if (i == 7)
		return c == '.';
	if (i == 15)
		return c == '\n';
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/*
 * The oracle on @len bytes read from offset 0 of @what: records of this
 * round whose ids were given out, zeros, a record's beginning and zeros.
 */
static void lfz_check_data(struct lfz_round *r, const char *what,
			   const char *data, size_t len)
{
	char round_hex[8];
	size_t b;

	r->st->reads_checked++;
	if (memmem(data, len, LFZ_SECRET, sizeof(LFZ_SECRET) - 1)) {
		lfz_violation(r, "%s: read shows a secret the user cannot read",
			      what);
		return;
	}
	if (r->o->fake && !r->fake_done && len) {
		r->fake_done = true;
		lfz_violation(r, "%s: --fake-violation", what);
		return;
	}
	snprintf(round_hex, sizeof(round_hex), "%06x",
		 (unsigned int)(r->seed & 0xffffff));
	for (b = 0; b < len; b += LFZ_REC) {
		size_t n = len - b < LFZ_REC ? len - b : LFZ_REC;
		const char *p = data + b;
		unsigned int i = 0, id;

		while (i < n && p[i] && lfz_rec_char(i, p[i], round_hex))
			i++;
		if (i == LFZ_REC) {
			if (sscanf(p + 8, "%7x", &id) == 1 && id < r->next_rec)
				continue;
			lfz_violation(r, "%s: record at %zu names id %.7s, never given out",
				      what, b, p + 8);
			return;
		}
		while (i < n && !p[i])
			i++;
		if (i < n) {
			lfz_violation(r, "%s: byte %zu (0x%02x) is no record, hole or cut record",
				      what, b + i, (unsigned char)p[i]);
			return;
		}
	}
}

/* a redirect or symlink target: well-formed but hostile, or garbage */
static size_t lfz_target(struct lfz_round *r, char *buf, size_t max)
{
	static const char *const fixed[] = {
		"/", "..", ".", "/a", "/d", "a", "../a", "/../..", "//a//b",
		"/a/../b", "a/b/c", LFS_WHITEOUT_TARGET, "/L0", "../../L1/d",
	};
	size_t len, i;

	switch (lfz_rand(r, 5)) {
	case 0:
		/* an absolute path into a layer of this round */
		return snprintf(buf, max, "%s/L%u/%s", r->dir,
				lfz_rand(r, LFZ_MAX_LAYERS),
				r->nr_paths ? r->paths[lfz_rand(r, r->nr_paths)] : "a");
	case 1:
		/* PATH_MAX bytes, or one less */
		len = PATH_MAX - 1 - lfz_rand(r, 2);
		if (len > max - 1)
			len = max - 1;
		for (i = 0; i < len; i++)
			buf[i] = i % 2 ? '/' : 'a' + lfz_rand(r, 2);
		buf[len] = 0;
		return len;
	case 2:
		/* one of the paths built, itself or its parent */
		if (r->nr_paths)
			return snprintf(buf, max, "%s%s",
					lfz_one_in(r, 2) ? "/" : "",
					r->paths[lfz_rand(r, r->nr_paths)]);
		/* fall through */
	default:
		return snprintf(buf, max, "%s",
				fixed[lfz_rand(r, ARRAY_SIZE(fixed))]);
	}
}

/* ---- building layers ---- */

static void lfz_remember(char **list, int *nr, const char *path)
{
	char *p;

	if (*nr >= LFZ_MAX_PATHS)
		return;
	p = strdup(path);
	if (p)
		list[(*nr)++] = p;
}

static void lfz_forget(char **list, int *nr)
{
	while (*nr > 0)
		free(list[--*nr]);
}

/*
 * Half the time, an origin that names a real object of the round, so
 * that the parser gets past its first checks: its inode number as the
 * real one, and as the one shown or a made-up one.
 */
static void lfz_real_origin(struct lfz_round *r, struct lfs_origin *o)
{
	char full[PATH_MAX * 2];
	struct stat st;

	if (!r->nr_paths || lfz_one_in(r, 2))
		return;
	snprintf(full, sizeof(full), "%s/%s", r->dir,
		 r->paths[lfz_rand(r, r->nr_paths)]);
	if (lstat(full, &st))
		return;
	o->real_ino = st.st_ino;
	if (lfz_one_in(r, 2))
		o->ino = st.st_ino;
	o->nlink = st.st_nlink + lfz_rand(r, 3) - 1;
}

/* a hostile value for marker @suffix, into r->buf; its length */
static size_t lfz_marker_value(struct lfz_round *r, const char *suffix)
{
	char *v = r->buf;
	size_t len, i;

	if (lfz_one_in(r, 4)) {
		/* garbage, mostly small, sometimes up to 64 KiB */
		len = lfz_one_in(r, 6) ? lfz_rand(r, LFZ_XATTR_MAX + 1) :
					 lfz_rand(r, 40);
		for (i = 0; i < len; i++)
			v[i] = (char)lfz_next(r);
		return len;
	}
	if (!strcmp(suffix, LFS_XATTR_SUFFIX_REDIRECT))
		return lfz_target(r, v, LFZ_XATTR_MAX) + lfz_rand(r, 2);
	if (!strcmp(suffix, LFS_XATTR_SUFFIX_ORIGIN)) {
		struct lfs_origin o = {
			.version = lfz_one_in(r, 4) ? lfz_rand(r, 256) : LFS_ORIGIN_V1,
			.flags = lfz_rand(r, 256),
			.nlink = lfz_rand(r, 3) ? (uint16_t)lfz_rand(r, 4) : 0xffff,
			.generation = (uint32_t)lfz_next(r),
			.ino = lfz_one_in(r, 2) ? lfz_rand(r, 64) : lfz_next(r),
			.real_ino = lfz_one_in(r, 2) ? lfz_rand(r, 64) : lfz_next(r),
		};

		lfz_real_origin(r, &o);
		memcpy(v, &o, sizeof(o));
		return lfz_one_in(r, 4) ? lfz_rand(r, sizeof(o) + 8) : sizeof(o);
	}
	if (!strcmp(suffix, LFS_XATTR_SUFFIX_LOWER_LINKS)) {
		static const uint32_t counts[] = { 0, 1, 2, 0xffff, 0x7fffffff,
						   0xffffffff };
		uint32_t c = counts[lfz_rand(r, ARRAY_SIZE(counts))];

		memcpy(v, &c, sizeof(c));
		return lfz_one_in(r, 4) ? lfz_rand(r, 9) : sizeof(c);
	}
	if (!strcmp(suffix, LFS_XATTR_SUFFIX_INDEX_UPPER)) {
		struct lfs_index_upper u = {
			.version = lfz_one_in(r, 4) ? 2 : LFS_INDEX_UPPER_V1,
			.generation = (uint32_t)lfz_next(r),
			.ino = lfz_rand(r, 64),
		};

		memset(u.uuid, (int)lfz_rand(r, 256), sizeof(u.uuid));
		memcpy(v, &u, sizeof(u));
		return lfz_one_in(r, 4) ? lfz_rand(r, sizeof(u) + 8) : sizeof(u);
	}
	if (!strcmp(suffix, LFS_XATTR_SUFFIX_PROTATTR)) {
		static const char *const pa[] = { "a", "i", "ai", "ia", "x",
						  "aaaaaaaaaaaaaaaaaaaaa", "" };

		return sprintf(v, "%s", pa[lfz_rand(r, ARRAY_SIZE(pa))]);
	}
	/* whiteout, opaque, probe and the unknown ones: "y", "x", "" ... */
	switch (lfz_rand(r, 5)) {
	case 4:
		/* an opaque "x": whiteouts marked by xattr inside */
		v[0] = 'x';
		return 1;
	case 0:
		return 0;
	case 1:
		v[0] = 'y';
		v[1] = 0;
		return 1 + lfz_rand(r, 2);
	case 2:
		memset(v, 'y', 8);
		return 8;
	default:
		v[0] = 'n';
		return 1;
	}
}

/* set random markers on @path (relative to the round's directory) */
static void lfz_mark(struct lfz_round *r, const char *path)
{
	static const char *const suffixes[] = {
		LFS_XATTR_SUFFIX_WHITEOUT, LFS_XATTR_SUFFIX_OPAQUE,
		LFS_XATTR_SUFFIX_REDIRECT, LFS_XATTR_SUFFIX_ORIGIN,
		LFS_XATTR_SUFFIX_LOWER_LINKS, LFS_XATTR_SUFFIX_PROTATTR,
		LFS_XATTR_SUFFIX_INDEX_UPPER, LFS_XATTR_SUFFIX_PROBE,
		"metacopy", "origin", "impure", "nlink", "upper", "uuid", "",
	};
	char full[PATH_MAX * 2], name[64];
	unsigned int n = lfz_rand(r, 4);
	size_t len;

	snprintf(full, sizeof(full), "%s/%s", r->dir, path);
	while (n--) {
		const char *s = suffixes[lfz_rand(r, ARRAY_SIZE(suffixes))];

		snprintf(name, sizeof(name), "%s%s", lfz_prefix(r->o), s);
		len = lfz_marker_value(r, s);
		lfz_count(r, LFZ_OP_MARK,
			  lsetxattr(full, name, r->buf, len, 0), name);
	}
	if (lfz_one_in(r, 8))
		lfz_count(r, LFZ_OP_MARK,
			  lsetxattr(full, "user.data", "v", 1, 0), "user.data");
}

/* @rel (below the round) as a path from its layer's root: "/a/b" */
static const char *lfz_in_layer(const char *rel)
{
	const char *slash = strchr(rel, '/');

	return slash ? slash : "/";
}

/*
 * Redirects that loop: two objects that redirect to each other, by their
 * paths in their layers, or one to itself.
 */
static void lfz_redirect_loop(struct lfz_round *r)
{
	const char *a, *b;
	char full[PATH_MAX * 2], name[64];

	if (r->nr_paths < 2)
		return;
	a = r->paths[lfz_rand(r, r->nr_paths)];
	b = lfz_one_in(r, 3) ? a : r->paths[lfz_rand(r, r->nr_paths)];
	snprintf(name, sizeof(name), "%s%s", lfz_prefix(r->o),
		 LFS_XATTR_SUFFIX_REDIRECT);
	snprintf(full, sizeof(full), "%s/%s", r->dir, a);
	lfz_count(r, LFZ_OP_MARK, lsetxattr(full, name, lfz_in_layer(b),
					    strlen(lfz_in_layer(b)), 0), a);
	snprintf(full, sizeof(full), "%s/%s", r->dir, b);
	lfz_count(r, LFZ_OP_MARK, lsetxattr(full, name, lfz_in_layer(a),
					    strlen(lfz_in_layer(a)), 0), b);
}

/* a regular file of @n records at @full */
static int lfz_write_file(struct lfz_round *r, const char *full, int flags,
			  mode_t mode)
{
	unsigned int n = lfz_one_in(r, 5) ? 0 : 1 + lfz_rand(r, 40);
	size_t len = lfz_records(r, r->buf, n);
	int fd, err = 0;

	fd = open(full, flags | O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
		  mode);
	if (fd < 0)
		return -1;
	if (len && write(fd, r->buf, len) < 0)
		err = -1;
	close(fd);
	return err;
}

/* a unix socket bound at @full */
static int lfz_socket(const char *full)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(full) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, full);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	err = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);
	return err;
}

/* one new object in layer directory @layer (a path below the round) */
static void lfz_build_one(struct lfz_round *r, char (*dirs)[PATH_MAX],
			  int *nr_dirs)
{
	char name[NAME_MAX + 1], rel[PATH_MAX], full[PATH_MAX * 2];
	char *target = r->buf;
	const char *parent = dirs[lfz_rand(r, *nr_dirs)];
	int depth = 0;
	const char *c;
	long ret;

	for (c = parent; *c; c++)
		depth += *c == '/';

	lfz_name(r, name);
	if (snprintf(rel, sizeof(rel), "%s/%s", parent, name) >= (int)sizeof(rel))
		return;
	snprintf(full, sizeof(full), "%s/%s", r->dir, rel);
	switch (lfz_rand(r, 10)) {
	case 0:
	case 1:
		ret = lfz_write_file(r, full, O_CREAT | O_EXCL, 0644);
		break;
	case 2:
	case 3:
		ret = mkdir(full, 0755);
		if (!ret && *nr_dirs < 16 && depth < LFZ_MAX_DEPTH)
			strcpy(dirs[(*nr_dirs)++], rel);
		break;
	case 4:
		lfz_target(r, target, PATH_MAX);
		ret = symlink(target, full);
		break;
	case 5:
		ret = mknod(full, S_IFCHR | 0644, makedev(0, 0));
		break;
	case 6:
		ret = lfz_one_in(r, 2) ? mkfifo(full, 0644) : lfz_socket(full);
		break;
	case 7: {
		/* a hard link of an object of any layer (same filesystem) */
		char old[PATH_MAX * 2];

		if (!r->nr_paths)
			return;
		snprintf(old, sizeof(old), "%s/%s", r->dir,
			 r->paths[lfz_rand(r, r->nr_paths)]);
		ret = link(old, full);
		break;
	}
	case 8:
		/*
		 * Devices the user may not make (EPERM): made with --trusted,
		 * so numbers that reach no disk (a block device 7:0 is the
		 * loop device the layers are on: writes through it corrupt
		 * them): no such block device, and /dev/zero
		 */
		if (lfz_one_in(r, 2))
			ret = mknod(full, S_IFBLK | 0644, makedev(0, 1));
		else
			ret = mknod(full, S_IFCHR | 0644, makedev(1, 5));
		break;
	default:
		/* a loop of two symlinks, or one to itself */
		ret = symlink(lfz_one_in(r, 2) ? name : "b", full);
		break;
	}
	if (lfz_count(r, LFZ_OP_BUILD, ret, rel) < 0)
		return;
	lfz_remember(r->paths, &r->nr_paths, rel);
	if (lfz_one_in(r, 2))
		lfz_mark(r, rel);
}

/* layer @layer (relative to the round): random objects and markers */
static void lfz_build_layer(struct lfz_round *r, const char *layer)
{
	static char dirs[16][PATH_MAX];
	int nr_dirs = 1, n = lfz_rand(r, LFZ_MAX_ENTRIES + 1);

	strcpy(dirs[0], layer);
	while (n--)
		lfz_build_one(r, dirs, &nr_dirs);
	if (lfz_one_in(r, 4))
		lfz_mark(r, layer);
}

/*
 * Junk where the mount keeps its own things: the work directory, its
 * index (with a marker naming some upper directory) and its incompat/.
 */
static void lfz_work_parts(struct lfz_round *r)
{
	static const char *const parts[] = { "w/" LFS_WORK_NAME,
					     "w/" LFS_INDEX_NAME,
					     "w/" LFS_WORK_NAME "/" LFS_INCOMPAT_NAME };
	char full[PATH_MAX * 2];
	unsigned int i;

	if (lfz_one_in(r, 2))
		lfz_build_layer(r, "w");
	for (i = 0; i < ARRAY_SIZE(parts); i++) {
		if (!lfz_one_in(r, 3))
			continue;
		snprintf(full, sizeof(full), "%s/%s", r->dir, parts[i]);
		if (lfz_count(r, LFZ_OP_BUILD, mkdir(full, 0755), parts[i]) < 0)
			continue;
		lfz_build_layer(r, parts[i]);
	}
}

/*
 * An origin marker that says @full (made at @real) is the index's copy of
 * @real: what a copy-up of a lower object with several links writes.
 */
static void lfz_index_origin(struct lfz_round *r, const char *full,
			     const struct stat *real, const char *real_path)
{
	struct lfs_origin o = {
		.version = LFS_ORIGIN_V1,
		.flags = LFS_ORIGIN_INDEXED,
		.nlink = real->st_nlink,
		.ino = real->st_ino,
		.real_ino = real->st_ino,
	};
	uint32_t links = lfz_rand(r, 3);
	int gen = 0, fd;

	fd = open(real_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		ioctl(fd, FS_IOC_GETVERSION, &gen);
		close(fd);
	}
	o.generation = gen;
	lfz_count(r, LFZ_OP_MARK, lsetxattr(full, LFS_XATTR_ORIGIN, &o,
					    sizeof(o), 0), full);
	lfz_count(r, LFZ_OP_MARK, lsetxattr(full, LFS_XATTR_LOWER_LINKS, &links,
					    sizeof(links), 0), full);
}

/*
 * --trusted: index/ entries under the names of real lower objects
 * (index/%016llx of the inode number), with an origin that matches: a
 * hard link to the lower object itself, a copy of another type, or a
 * plain copy.  index=on then takes them for the copies of those objects.
 */
static void lfz_index_entries(struct lfz_round *r)
{
	char full[PATH_MAX * 2], real_path[PATH_MAX * 2];
	int n = 1 + lfz_rand(r, 4);
	struct stat st;
	long ret;

	snprintf(full, sizeof(full), "%s/w/" LFS_INDEX_NAME, r->dir);
	mkdir(full, 0700);
	while (n-- && r->nr_paths) {
		snprintf(real_path, sizeof(real_path), "%s/%s", r->dir,
			 r->paths[lfz_rand(r, r->nr_paths)]);
		if (lstat(real_path, &st) || S_ISDIR(st.st_mode))
			continue;
		snprintf(full, sizeof(full), "%s/w/%s/%016llx", r->dir,
			 LFS_INDEX_NAME, (unsigned long long)st.st_ino);
		switch (lfz_rand(r, 4)) {
		case 0:
			ret = link(real_path, full);
			break;
		case 1:
			ret = mkdir(full, 0755);
			break;
		case 2:
			ret = symlink("a", full);
			break;
		default:
			ret = lfz_write_file(r, full, O_CREAT | O_EXCL, 0644);
			break;
		}
		if (lfz_count(r, LFZ_OP_BUILD, ret, "index entry") >= 0)
			lfz_index_origin(r, full, &st, real_path);
	}
}

/* ---- the round's set-up as root: secrets ---- */

/* a file @rel of content LFZ_SECRET, owned by root, mode @mode */
static int lfz_secret_file(struct lfz_round *r, const char *rel, mode_t mode)
{
	char full[PATH_MAX * 2];
	int fd, err = 0;

	snprintf(full, sizeof(full), "%s/%s", r->dir, rel);
	fd = open(full, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	if (write(fd, LFZ_SECRET "-secret-secret-\n", 23) != 23 ||
	    fchmod(fd, mode))
		err = -1;
	close(fd);
	if (!err)
		lfz_remember(r->paths, &r->nr_paths, rel);
	return err;
}

/*
 * As root, before the ids are dropped: the layer directories (the user's)
 * and in them objects of root that the user cannot read: a file of mode
 * 0600, a hard link to it in another layer, a directory of mode 0700 with
 * a readable file in it, and the same in the upper directory.
 */
static int lfz_root_setup(struct lfz_round *r)
{
	char full[PATH_MAX * 2];
	int i, err = 0;

	if (mkdir(r->dir, 0755))
		return -1;
	for (i = 0; i < r->nr_layers; i++) {
		snprintf(full, sizeof(full), "%s/L%d", r->dir, i);
		err |= mkdir(full, 0755);
	}
	for (i = 0; i < 3; i++) {
		static const char *const d[] = { "u", "w", "mnt" };

		snprintf(full, sizeof(full), "%s/%s", r->dir, d[i]);
		err |= mkdir(full, 0755);
	}
	if (err)
		return -1;
	if (r->o->trusted)
		goto chown;
	i = lfz_rand(r, r->nr_layers);
	snprintf(full, sizeof(full), "L%d/s", i);
	err |= lfz_secret_file(r, full, 0600);
	if (r->nr_layers > 1) {
		char old[PATH_MAX * 2], new[PATH_MAX * 2];

		snprintf(old, sizeof(old), "%s/L%d/s", r->dir, i);
		snprintf(new, sizeof(new), "%s/L%d/t", r->dir, (i + 1) % r->nr_layers);
		err |= link(old, new);
		lfz_remember(r->paths, &r->nr_paths, new + strlen(r->dir) + 1);
	}
	i = lfz_rand(r, r->nr_layers);
	snprintf(full, sizeof(full), "%s/L%d/p", r->dir, i);
	err |= mkdir(full, 0700);
	snprintf(full, sizeof(full), "L%d/p/f", i);
	err |= lfz_secret_file(r, full, 0644);
	err |= lfz_secret_file(r, "u/s", 0600);
chown:
	/* the rest is the user's */
	err |= chown(r->dir, r->o->uid, r->o->uid);
	for (i = 0; i < r->nr_layers; i++) {
		snprintf(full, sizeof(full), "%s/L%d", r->dir, i);
		err |= chown(full, r->o->uid, r->o->uid);
	}
	for (i = 0; i < 3; i++) {
		static const char *const d[] = { "u", "w", "mnt" };

		snprintf(full, sizeof(full), "%s/%s", r->dir, d[i]);
		err |= chown(full, r->o->uid, r->o->uid);
	}
	return err ? -1 : 0;
}

/* write @s to /proc/self/@file */
static int lfz_proc_write(const char *file, const char *s)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		err = -1;
	close(fd);
	return err;
}

/*
 * Take the user's ids for good, then a user namespace in which the user
 * is root (mapped to 0, nothing else mapped) and a mount namespace.
 */
static int lfz_enter_userns(const struct lfz_opts *o)
{
	char map[64];

	if (setgroups(0, NULL) || setresgid(o->uid, o->uid, o->uid) ||
	    setresuid(o->uid, o->uid, o->uid))
		return -1;
	/* /proc/self/ stays ours to write the maps to */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ||
	    unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", o->uid);
	if (lfz_proc_write("setgroups", "deny") ||
	    lfz_proc_write("uid_map", map) || lfz_proc_write("gid_map", map))
		return -1;
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* ---- mounting ---- */

/* one random option of those layerfs knows, right or wrong here */
static const char *lfz_option(struct lfz_round *r)
{
	static const char *const opts[] = {
		"whiteout=chardev", "whiteout=aufs", "whiteout=native",
		"redirect_dir=nofollow", "redirect_dir=on", "index=off",
		"index=on", "xino=on", "xino=off", "xino=auto", "metacopy=off",
		"metacopy=on", "nameindex=on", "nameindex=off",
		"nameindex=eager", "uuid=on", "uuid=off",
		"default_permissions", "volatile", "nfs_export=off",
		"userxattr",	/* last: --trusted leaves it out */
	};
	/* --trusted: what reads more markers, rather than userxattr */
	static const char *const trusted[] = {
		"redirect_dir=on", "redirect_dir=follow", "index=on",
		"nfs_export=on", "whiteout=native", "whiteout=aufs",
		"nameindex=eager", "xino=on",
	};

	if (r->o->trusted && lfz_one_in(r, 2))
		return trusted[lfz_rand(r, ARRAY_SIZE(trusted))];
	if (r->o->trusted)
		return opts[lfz_rand(r, ARRAY_SIZE(opts) - 1)];
	return opts[lfz_rand(r, ARRAY_SIZE(opts))];
}

static int lfz_fsconfig_dir(struct lfz_round *r, int fsfd, const char *key,
			    const char *path, bool by_fd)
{
	int fd, ret;

	if (!by_fd)
		return syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, key,
			       path, 0);
	fd = open(path, (lfz_one_in(r, 20) ? O_PATH : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FD, key, NULL, fd);
	close(fd);
	return ret;
}

/* the lower layers' paths, top first: @top_upper puts u on top */
static int lfz_lower(struct lfz_round *r, bool top_upper, char (*lower)[PATH_MAX])
{
	int i, n = 0;

	if (top_upper)
		snprintf(lower[n++], PATH_MAX, "%s/u", r->dir);
	for (i = 0; i < r->nr_layers; i++)
		snprintf(lower[n++], PATH_MAX, "%s/L%d", r->dir, i);
	return n;
}

/* fsopen, fsconfig, fsmount, move_mount; 0 or -1 */
static int lfz_mount_api(struct lfz_round *r, bool top_upper, bool upper)
{
	char lower[LFZ_MAX_LAYERS + 1][PATH_MAX], path[PATH_MAX];
	bool by_fd = lfz_one_in(r, 2);
	int fsfd, mfd, i, n, ret = -1;

	fsfd = syscall(SYS_fsopen, r->o->fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0)
		return -1;
	n = lfz_lower(r, top_upper, lower);
	for (i = 0; i < n; i++)
		if (lfz_fsconfig_dir(r, fsfd, "lowerdir+", lower[i], by_fd))
			goto out;
	if (upper) {
		snprintf(path, sizeof(path), "%s/u", r->dir);
		if (lfz_fsconfig_dir(r, fsfd, "upperdir", path, by_fd))
			goto out;
		snprintf(path, sizeof(path), "%s/w", r->dir);
		if (lfz_fsconfig_dir(r, fsfd, "workdir", path, by_fd))
			goto out;
	}
	/* overlay wants it in a user namespace; layerfs forces it there */
	if (strcmp(r->o->fstype, LFS_FSTYPE) && !r->o->trusted)
		syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "userxattr",
			NULL, 0);
	for (i = lfz_rand(r, 3); i > 0; i--) {
		const char *opt = lfz_option(r);
		const char *eq = strchr(opt, '=');

		if (eq) {
			char key[32];

			snprintf(key, sizeof(key), "%.*s", (int)(eq - opt), opt);
			syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, key,
				eq + 1, 0);
		} else {
			syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, opt,
				NULL, 0);
		}
	}
	if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		goto out;
	mfd = syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0)
		goto out;
	snprintf(path, sizeof(path), "%s/mnt", r->dir);
	ret = syscall(SYS_move_mount, mfd, "", AT_FDCWD, path,
		      MOVE_MOUNT_F_EMPTY_PATH);
	close(mfd);
out:
	close(fsfd);
	return ret;
}

/* mount(2) with an option string */
static int lfz_mount_str(struct lfz_round *r, bool top_upper, bool upper)
{
	char lower[LFZ_MAX_LAYERS + 1][PATH_MAX], path[PATH_MAX];
	static char data[(LFZ_MAX_LAYERS + 3) * PATH_MAX + 256];
	int i, n, len;

	n = lfz_lower(r, top_upper, lower);
	len = snprintf(data, sizeof(data), "lowerdir=");
	for (i = 0; i < n; i++)
		len += snprintf(data + len, sizeof(data) - len, "%s%s",
				i ? ":" : "", lower[i]);
	if (upper)
		len += snprintf(data + len, sizeof(data) - len,
				",upperdir=%s/u,workdir=%s/w", r->dir, r->dir);
	if (strcmp(r->o->fstype, LFS_FSTYPE) && !r->o->trusted)
		len += snprintf(data + len, sizeof(data) - len, ",userxattr");
	for (i = lfz_rand(r, 3); i > 0; i--)
		len += snprintf(data + len, sizeof(data) - len, ",%s",
				lfz_option(r));
	snprintf(path, sizeof(path), "%s/mnt", r->dir);
	return mount("lfs-fuzz", path, r->o->fstype, 0, data);
}

/* mount the round's stack; the mount's root in r->mntfd, or -1 */
static int lfz_mount(struct lfz_round *r, bool top_upper)
{
	bool upper = r->upper && !top_upper;
	char path[PATH_MAX];
	long ret;

	if (lfz_one_in(r, 3))
		ret = lfz_mount_str(r, top_upper, upper);
	else
		ret = lfz_mount_api(r, top_upper, upper);
	lfz_count(r, LFZ_OP_MOUNT, ret, top_upper ? "upper as lower" : "stack");
	r->mntfd = -1;
	if (ret)
		return -1;
	snprintf(path, sizeof(path), "%s/mnt", r->dir);
	r->mntfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return r->mntfd < 0 ? -1 : 0;
}

static void lfz_umount(struct lfz_round *r)
{
	char path[PATH_MAX];

	if (r->mntfd >= 0)
		close(r->mntfd);
	r->mntfd = -1;
	snprintf(path, sizeof(path), "%s/mnt", r->dir);
	if (lfz_count(r, LFZ_OP_UMOUNT, umount2(path, 0), "mnt") < 0)
		umount2(path, MNT_DETACH);
}

/* ---- walking ---- */

/* openat2 below the mount: no absolute symlink, no "..", no other mount */
static int lfz_open(struct lfz_round *r, const char *rel, int flags)
{
	struct open_how how = {
		.flags = flags | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_XDEV |
			   RESOLVE_NO_MAGICLINKS,
	};

	return syscall(SYS_openat2, r->mntfd, *rel ? rel : ".", &how,
		       sizeof(how));
}

/* read @rel from offset 0 and judge what it gave */
static void lfz_read(struct lfz_round *r, const char *rel, bool follow)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = lfz_open(r, rel, O_RDONLY | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW));
	if (lfz_count(r, LFZ_OP_READ, fd, rel) < 0)
		return;
	do {
		size_t want = 1 + lfz_rand(r, 8192);

		if (want > LFZ_READ_MAX - len)
			want = LFZ_READ_MAX - len;
		n = read(fd, r->buf + len, want);
		if (n > 0)
			len += n;
	} while (n > 0 && len < LFZ_READ_MAX);
	lfz_count(r, LFZ_OP_READ, n < 0 ? -1 : 0, rel);
	close(fd);
	lfz_check_data(r, rel, r->buf, len);
}

/* listxattr and getxattr of @name in directory @dfd */
static void lfz_xattrs(struct lfz_round *r, int dfd, const char *name,
		       const char *rel)
{
	char path[PATH_MAX], list[4096], val[256], marker[64];
	const char *prefix = lfz_prefix(r->o);
	ssize_t len, i;
	size_t size;
	/*
	 * Overlay since 6.7 shows user.overlay.overlay.X, which setxattr of
	 * user.overlay.X through it makes, as user.overlay.X (nesting): the
	 * check is layerfs's alone.
	 */
	bool markers_hidden = !strcmp(r->o->fstype, LFS_FSTYPE);

	if (snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dfd, name) >=
	    (int)sizeof(path))
		return;
	size = lfz_one_in(r, 8) ? lfz_rand(r, 16) : sizeof(list);
	len = llistxattr(path, list, size);
	if (lfz_count(r, LFZ_OP_XATTR, len, rel) < 0 || !size)
		return;
	for (i = 0; i < len; i += strlen(list + i) + 1) {
		if (markers_hidden &&
		    !strncmp(list + i, prefix, strlen(prefix)))
			lfz_violation(r, "%s: listxattr shows marker %s", rel,
				      list + i);
		lfz_count(r, LFZ_OP_XATTR,
			  lgetxattr(path, list + i, val, sizeof(val)), rel);
	}
	/* a marker by name: never there */
	snprintf(marker, sizeof(marker), "%s%s", prefix,
		 LFS_XATTR_SUFFIX_REDIRECT);
	if (markers_hidden && lgetxattr(path, marker, val, sizeof(val)) >= 0)
		lfz_violation(r, "%s: getxattr shows a redirect marker", rel);
}

static void lfz_walk(struct lfz_round *r, const char *rel, int depth);

/* one entry @name of directory @dfd (@rel below the mount) */
static void lfz_visit(struct lfz_round *r, int dfd, const char *dir,
		      const char *name, int depth)
{
	char rel[PATH_MAX];
	struct stat st;
	long ret;

	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return;
	if (snprintf(rel, sizeof(rel), "%s%s%s", dir, *dir ? "/" : "", name) >=
	    (int)sizeof(rel))
		return;
	ret = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
	if (lfz_count(r, LFZ_OP_STAT, ret, rel) < 0)
		return;
	lfz_remember(r->mpaths, &r->nr_mpaths, rel);
	if (lfz_one_in(r, 3))
		lfz_xattrs(r, dfd, name, rel);
	if (S_ISLNK(st.st_mode)) {
		ret = readlinkat(dfd, name, r->buf, lfz_one_in(r, 4) ?
				 lfz_rand(r, 8) : PATH_MAX + 1);
		lfz_count(r, LFZ_OP_READLINK, ret, rel);
		if (lfz_one_in(r, 2))
			lfz_read(r, rel, true);
	} else if (S_ISREG(st.st_mode)) {
		lfz_read(r, rel, false);
	} else if (S_ISDIR(st.st_mode) && depth < 2 * LFZ_MAX_DEPTH) {
		lfz_walk(r, rel, depth + 1);
	}
}

/* the names of directory @rel, read with a small buffer, then visited */
static void lfz_walk(struct lfz_round *r, const char *rel, int depth)
{
	static const unsigned int sizes[] = { 24, 32, 40, 64, 100, 280, 512,
					      4096, 32768 };
	unsigned int size = sizes[lfz_rand(r, ARRAY_SIZE(sizes))];
	char *names = NULL, *dents;
	size_t nlen = 0, ncap = 0;
	long n, off;
	int fd;

	fd = lfz_open(r, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (lfz_count(r, LFZ_OP_GETDENTS, fd, rel) < 0)
		return;
	dents = malloc(size);
	for (;;) {
		n = syscall(SYS_getdents64, fd, dents, size);
		if (n < 0 && errno == EINVAL && size < 32768) {
			size *= 2;
			dents = realloc(dents, size);
			continue;
		}
		if (lfz_count(r, LFZ_OP_GETDENTS, n, rel) <= 0)
			break;
		for (off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(dents + off);
			size_t l = strlen(d->d_name) + 1;

			if (nlen + l > ncap) {
				ncap = (ncap + l) * 2;
				names = realloc(names, ncap);
			}
			memcpy(names + nlen, d->d_name, l);
			nlen += l;
			off += d->d_reclen;
		}
		if (nlen > 256 * 1024)
			break;
	}
	free(dents);
	for (off = 0; off < (long)nlen && r->walked < LFZ_WALK_MAX;
	     off += strlen(names + off) + 1) {
		r->walked++;
		lfz_visit(r, fd, rel, names + off, depth);
	}
	free(names);
	close(fd);
}

static void lfz_walk_mount(struct lfz_round *r)
{
	lfz_forget(r->mpaths, &r->nr_mpaths);
	r->walked = 0;
	lfz_walk(r, "", 0);
}

/* ---- changing things through the mount ---- */

/*
 * The directory of @rel opened without following any symlink (what was
 * a directory may have become one), its last name in @name.
 */
static int lfz_parent(struct lfz_round *r, const char *rel, char *name)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_XDEV,
	};
	const char *slash = strrchr(rel, '/');
	char dir[PATH_MAX];

	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
		strcpy(name, slash + 1);
	} else {
		strcpy(dir, ".");
		strcpy(name, rel);
	}
	return syscall(SYS_openat2, r->mntfd, dir, &how, sizeof(how));
}

/* a path for an operation: one the walk saw, or a new name in one */
static void lfz_pick(struct lfz_round *r, char *rel, bool fresh)
{
	char name[NAME_MAX + 1];
	const char *base = r->nr_mpaths ? r->mpaths[lfz_rand(r, r->nr_mpaths)] : "";

	if (!fresh && *base) {
		snprintf(rel, PATH_MAX, "%s", base);
		return;
	}
	lfz_name(r, name);
	if (lfz_one_in(r, 3) || !*base)
		snprintf(rel, PATH_MAX, "%s", name);
	else if (snprintf(rel, PATH_MAX, "%s/%s", base, name) >= PATH_MAX)
		snprintf(rel, PATH_MAX, "%s", name);
}

/* pwrite whole records at record offsets of an opened @rel (copy-up) */
static void lfz_op_write(struct lfz_round *r, const char *rel)
{
	int fd = lfz_open(r, rel, (lfz_one_in(r, 2) ? O_WRONLY : O_RDWR) |
			  O_NOFOLLOW | O_NONBLOCK);
	unsigned int n = 1 + lfz_rand(r, 8);
	size_t len;
	long ret;

	if (lfz_count(r, LFZ_OP_WRITE, fd, rel) < 0)
		return;
	len = lfz_records(r, r->buf, n);
	ret = pwrite(fd, r->buf, len, (off_t)lfz_rand(r, 64) * LFZ_REC);
	lfz_count(r, LFZ_OP_WRITE, ret, rel);
	if (lfz_one_in(r, 3))
		lfz_count(r, LFZ_OP_TRUNCATE,
			  ftruncate(fd, lfz_rand(r, 2048)), rel);
	close(fd);
}

/*
 * Half the time, a change that the type of @name in @dfd allows, so that
 * the rounds reach past the first checks: a directory is renamed,
 * removed, changed in mode or xattrs; a file written, truncated, linked,
 * renamed or removed.  The numbers are lfz_op()'s.
 */
static unsigned int lfz_op_for(struct lfz_round *r, int dfd, const char *name,
			       unsigned int op)
{
	static const unsigned int dir_ops[] = { 5, 8, 9, 11 };
	static const unsigned int file_ops[] = { 5, 6, 7, 10, 12 };
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return op;
	if (S_ISDIR(st.st_mode))
		return dir_ops[lfz_rand(r, ARRAY_SIZE(dir_ops))];
	if (S_ISREG(st.st_mode))
		return file_ops[lfz_rand(r, ARRAY_SIZE(file_ops))];
	return op;
}

/* one random change through the mount */
static void lfz_op(struct lfz_round *r)
{
	static const unsigned int rflags[] = { 0, RENAME_NOREPLACE,
					       RENAME_EXCHANGE, RENAME_WHITEOUT };
	char a[PATH_MAX], b[PATH_MAX], na[NAME_MAX + 1], nb[NAME_MAX + 1];
	char path[PATH_MAX + 32];
	int da, db, fd;
	unsigned int op = lfz_rand(r, 15);
	enum lfz_op kind = LFZ_OP_CREATE;
	long ret;

	lfz_pick(r, a, op < 5);
	da = lfz_parent(r, a, na);
	if (da < 0)
		return;
	if (op >= 5 && lfz_one_in(r, 2))
		op = lfz_op_for(r, da, na, op);
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", da, na);
	switch (op) {
	case 0:
		kind = LFZ_OP_CREATE;
		fd = openat(da, na, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			    0644);
		ret = fd;
		if (fd >= 0) {
			size_t len = lfz_records(r, r->buf, lfz_rand(r, 6));

			if (write(fd, r->buf, len) < 0)
				ret = -1;
			close(fd);
		}
		break;
	case 1:
		kind = LFZ_OP_MKDIR;
		ret = mkdirat(da, na, 0755);
		break;
	case 2:
		kind = LFZ_OP_SYMLINK;
		lfz_target(r, r->buf, PATH_MAX);
		ret = symlinkat(r->buf, da, na);
		break;
	case 3:
		kind = LFZ_OP_MKNOD;
		ret = mknodat(da, na, lfz_one_in(r, 2) ? S_IFIFO | 0644 :
			      S_IFCHR | 0644, 0);
		break;
	case 4:
	case 5:
	case 6:
		/* rename or link onto a fresh name or an existing one */
		lfz_pick(r, b, op == 4 || (op == 6 && !lfz_one_in(r, 3)));
		db = lfz_parent(r, b, nb);
		if (db < 0) {
			close(da);
			return;
		}
		if (op == 4 || op == 5) {
			kind = LFZ_OP_RENAME;
			ret = syscall(SYS_renameat2, da, na, db, nb,
				      rflags[lfz_rand(r, ARRAY_SIZE(rflags))]);
		} else {
			kind = LFZ_OP_LINK;
			ret = linkat(da, na, db, nb, 0);
		}
		close(db);
		break;
	case 7:
		kind = LFZ_OP_UNLINK;
		ret = unlinkat(da, na, 0);
		break;
	case 8:
		kind = LFZ_OP_RMDIR;
		ret = unlinkat(da, na, AT_REMOVEDIR);
		break;
	case 9:
		kind = LFZ_OP_CHMOD;
		ret = fchmodat(da, na, lfz_rand(r, 010000),
			       AT_SYMLINK_NOFOLLOW);
		break;
	case 10:
		/* not truncate(2): it would follow a symlink out of the mount */
		kind = LFZ_OP_TRUNCATE;
		fd = openat(da, na, O_WRONLY | O_NOFOLLOW | O_NONBLOCK |
			    O_CLOEXEC);
		ret = fd < 0 ? -1 : ftruncate(fd, lfz_rand(r, 4096));
		if (fd >= 0)
			close(fd);
		break;
	case 11: {
		static const char *const names[] = {
			"user.a", LFS_XATTR_USER_PREFIX "opaque",
			LFS_XATTR_USER_PREFIX "redirect", "trusted.overlay.opaque",
			"user.overlayx", "security.a",
		};
		const char *xn = names[lfz_rand(r, ARRAY_SIZE(names))];

		kind = LFZ_OP_SETXATTR;
		if (lfz_one_in(r, 3))
			ret = lremovexattr(path, xn);
		else
			ret = lsetxattr(path, xn, "y", 1 + lfz_rand(r, 1), 0);
		break;
	}
	default:
		lfz_op_write(r, a);
		close(da);
		return;
	}
	lfz_count(r, kind, ret, a);
	close(da);
}

/*
 * The root of a layer, the upper or work directory or work/ moved under
 * the live mount into @rel (a directory in a layer, perhaps): the mount
 * must not walk into itself (its traps).  Moved back before the remount.
 */
static void lfz_move_root(struct lfz_round *r, const char *rel)
{
	static const char *const roots[] = { "L0", "L1", "L2", "u", "w",
					     "w/" LFS_WORK_NAME };
	int ret;

	if (*r->moved[0])
		return;
	snprintf(r->moved[0], PATH_MAX, "%s/%s", r->dir,
		 roots[lfz_rand(r, ARRAY_SIZE(roots))]);
	if (snprintf(r->moved[1], PATH_MAX, "%s/%s/m", r->dir, rel) >= PATH_MAX) {
		*r->moved[0] = 0;
		return;
	}
	ret = rename(r->moved[0], r->moved[1]);
	if (lfz_count(r, LFZ_OP_BUILD, ret, "move a root") < 0)
		*r->moved[0] = 0;
}

/*
 * The user changes its layers under the live mount: an object replaced by
 * one of another type, markers set anew.  What the mount shows then is
 * undefined, but it must stay within the oracle and the kernel sane.
 */
static void lfz_mutate_layers(struct lfz_round *r)
{
	char full[PATH_MAX * 2];
	int n = 1 + lfz_rand(r, 6);

	while (n-- && r->nr_paths) {
		const char *rel = r->paths[lfz_rand(r, r->nr_paths)];
		long ret;

		snprintf(full, sizeof(full), "%s/%s", r->dir, rel);
		switch (lfz_rand(r, 5)) {
		case 3:
			lfz_move_root(r, rel);
			continue;
		case 0:
			ret = rmdir(full);
			if (ret)
				ret = unlink(full);
			if (!ret)
				ret = lfz_write_file(r, full, O_CREAT | O_EXCL, 0644);
			break;
		case 1:
			ret = unlink(full);
			if (!ret)
				ret = mkdir(full, 0755);
			break;
		case 2:
			ret = lfz_write_file(r, full, O_TRUNC, 0);
			break;
		default:
			lfz_mark(r, rel);
			continue;
		}
		lfz_count(r, LFZ_OP_BUILD, ret, rel);
	}
}

/* ---- a round ---- */

/*
 * The round's child: set-up as root, then the rest as the user in a user
 * namespace.  Its exit status: 0, or 2 when the set-up failed.
 */
static int lfz_round_child(struct lfz_round *r)
{
	char full[PATH_MAX * 2];
	int i, ops;

	if (lfz_root_setup(r)) {
		fprintf(stderr, "lfs-fuzz: round %u: set-up in %s: %s\n", r->id,
			r->dir, strerror(errno));
		return 2;
	}
	if (r->o->trusted) {
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
			fprintf(stderr, "lfs-fuzz: round %u: mount namespace: %s\n",
				r->id, strerror(errno));
			return 2;
		}
	} else if (lfz_enter_userns(r->o)) {
		fprintf(stderr, "lfs-fuzz: round %u: user namespace: %s\n",
			r->id, strerror(errno));
		return 2;
	}
	/* the oracle means something only if the user cannot read them */
	snprintf(full, sizeof(full), "%s/u/s", r->dir);
	i = open(full, O_RDONLY | O_CLOEXEC);
	if (!r->o->trusted && (i >= 0 || errno != EACCES)) {
		fprintf(stderr, "lfs-fuzz: round %u: %s: readable by the user\n",
			r->id, full);
		return 2;
	}
	for (i = 0; i < r->nr_layers; i++) {
		snprintf(full, sizeof(full), "L%d", i);
		lfz_build_layer(r, full);
	}
	if (lfz_one_in(r, 2))
		lfz_redirect_loop(r);
	if (r->upper) {
		lfz_build_layer(r, "u");
		lfz_work_parts(r);
		if (r->o->trusted && lfz_one_in(r, 2))
			lfz_index_entries(r);
	}
	if (lfz_mount(r, false))
		return 0;
	lfz_walk_mount(r);
	if (lfz_one_in(r, 4))
		lfz_mutate_layers(r);
	for (ops = lfz_rand(r, LFZ_OPS_MAX); ops > 0; ops--)
		lfz_op(r);
	lfz_walk_mount(r);
	lfz_umount(r);
	if (*r->moved[0])
		rename(r->moved[1], r->moved[0]);
	/* what the upper layer kept: the same stack, or it as a lower one */
	if (lfz_mount(r, r->upper && lfz_one_in(r, 2)))
		return 0;
	lfz_walk_mount(r);
	lfz_umount(r);
	return 0;
}

static int lfz_rm(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	/* what cannot be removed stays: the next round has its own name */
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* the round's directory gone, as root */
static void lfz_cleanup(const char *dir)
{
	nftw(dir, lfz_rm, 16, FTW_DEPTH | FTW_PHYS);
}

static volatile sig_atomic_t lfz_alarm;

static void lfz_on_alarm(int sig)
{
	(void)sig;
	lfz_alarm = 1;
}

/*
 * Run round @id on @seed in a child; 0 when it ended as it should, 1 when
 * it hung or died, 2 when its set-up failed.
 */
static int lfz_round(const struct lfz_opts *o, struct lfz_stats *st,
		     unsigned int id, uint64_t seed)
{
	static struct lfz_round r;
	int status;
	pid_t pid;

	memset(&r, 0, sizeof(r));
	r.rng = seed;
	r.seed = seed;
	r.id = id;
	r.o = o;
	r.st = st;
	r.mntfd = -1;
	/* named by the seed alone, so that --replay makes the same paths */
	snprintf(r.dir, sizeof(r.dir), "%s/r%016llx", o->dir,
		 (unsigned long long)seed);
	r.nr_layers = 1 + lfz_rand(&r, LFZ_MAX_LAYERS);
	r.upper = !lfz_one_in(&r, 3);
	printf("lfs-fuzz: round %u seed %llu: %d layer(s)%s\n", id,
	       (unsigned long long)seed, r.nr_layers, r.upper ? ", upper" : "");
	fflush(stdout);
	lfz_cleanup(r.dir);
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		int ret = lfz_round_child(&r);

		fflush(stdout);
		_exit(ret);
	}
	lfz_alarm = 0;
	alarm(o->round_timeout);
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR || !lfz_alarm)
			continue;
		printf("lfs-fuzz: round %u seed %llu: FAIL: no end after %ld s\n",
		       id, (unsigned long long)seed, o->round_timeout);
		fflush(stdout);
		kill(pid, SIGKILL);
		/* a task stuck in the kernel does not die: do not wait */
		return 1;
	}
	alarm(0);
	if (WIFSIGNALED(status)) {
		printf("lfs-fuzz: round %u seed %llu: FAIL: killed by signal %d\n",
		       id, (unsigned long long)seed, WTERMSIG(status));
		return 1;
	}
	st->rounds++;
	lfz_cleanup(r.dir);
	return WEXITSTATUS(status) == 2 ? 2 : 0;
}

static void lfz_summary(const struct lfz_stats *st, double secs)
{
	unsigned long ok = 0, err = 0;
	int i;

	for (i = 0; i < LFZ_OP_NR; i++) {
		ok += st->ok[i];
		err += st->err[i];
	}
	printf("lfs-fuzz: %lu rounds in %.0f s, %lu operations (%lu failed), %lu reads judged, %lu violations\n",
	       st->rounds, secs, ok + err, err, st->reads_checked,
	       st->violations);
	printf("lfs-fuzz: by operation (ok/failed):");
	for (i = 0; i < LFZ_OP_NR; i++)
		printf(" %s %lu/%lu", lfz_op_names[i], st->ok[i], st->err[i]);
	printf("\nlfs-fuzz: failures by errno:");
	for (i = 0; i <= LFZ_ERRNO_MAX; i++)
		if (st->errnos[i])
			printf(" %s %lu", i ? strerrorname_np(i) : "other",
			       st->errnos[i]);
	printf("\n");
}

static uint64_t lfz_round_seed(uint64_t seed, unsigned int round)
{
	struct lfz_round r = { .rng = seed ^ ((uint64_t)round << 32) };

	return lfz_next(&r);
}

static int lfz_parse(int argc, char **argv, struct lfz_opts *o)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "replay", required_argument, NULL, 'R' },
		{ "seconds", required_argument, NULL, 'S' },
		{ "rounds", required_argument, NULL, 'n' },
		{ "uid", required_argument, NULL, 'u' },
		{ "fstype", required_argument, NULL, 't' },
		{ "round-timeout", required_argument, NULL, 'T' },
		{ "fake-violation", no_argument, NULL, 'F' },
		{ "trusted", no_argument, NULL, 'X' },
		{ "verbose", no_argument, NULL, 'v' },
		{}
	};
	int c;

	o->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 20);
	o->seconds = -1;
	o->rounds = -1;
	o->uid = 1000;
	o->fstype = LFS_FSTYPE;
	o->round_timeout = 300;
	while ((c = getopt_long(argc, argv, "v", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'R':
			o->seed = strtoull(optarg, NULL, 0);
			o->replay = true;
			break;
		case 'S':
			o->seconds = atol(optarg);
			break;
		case 'n':
			o->rounds = atol(optarg);
			break;
		case 'u':
			o->uid = atoi(optarg);
			break;
		case 't':
			o->fstype = optarg;
			break;
		case 'T':
			o->round_timeout = atol(optarg);
			break;
		case 'F':
			o->fake = true;
			break;
		case 'X':
			o->trusted = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		default:
			return -1;
		}
	}
	if (optind != argc - 1 || !o->uid || o->round_timeout <= 0)
		return -1;
	if (o->seconds < 0 && o->rounds < 0)
		o->seconds = 60;
	o->dir = argv[optind];
	/* the round's directory (with its name) fits lfz_round.dir */
	if (strlen(o->dir) > 200)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = lfz_on_alarm };
	struct lfz_opts o = {};
	struct lfz_stats *st;
	struct timespec t0, t;
	unsigned int round;
	int ret = 0, rr;
	double secs = 0;

	if (lfz_parse(argc, argv, &o)) {
		fprintf(stderr, "usage: lfs-fuzz [--seed N | --replay S] [--seconds S] [--rounds N] [--uid U] [--fstype T] [--round-timeout S] [--fake-violation] [-v] DIR\n");
		return 2;
	}
	if (geteuid()) {
		fprintf(stderr, "lfs-fuzz: must start as root (it makes the secrets)\n");
		return 2;
	}
	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return 2;
	sigaction(SIGALRM, &sa, NULL);
	printf("lfs-fuzz: seed %llu, %s, uid %u, in %s\n",
	       (unsigned long long)o.seed, o.fstype, o.uid, o.dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (round = 0; ; round++) {
		if (o.replay && round)
			break;
		if (o.rounds >= 0 && round >= o.rounds)
			break;
		if (o.seconds >= 0 && secs >= o.seconds)
			break;
		rr = lfz_round(&o, st, round, o.replay ? o.seed :
			       lfz_round_seed(o.seed, round));
		if (rr) {
			ret = rr;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
		secs = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9;
	}
	lfz_summary(st, secs);
	if (st->violations && !ret)
		ret = 1;
	return ret;
}
