// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-stress: concurrency stress and copy-up crash checks for the write
 * side of layerfs (and of overlay, to validate the checks themselves).
 *
 *   lfs-stress populate ROOT [LAYERS]
 *	build a stack ROOT/L0 (top) .. ROOT/L<LAYERS-1> (default 8) over a
 *	shared pool of names: directories d0..d3 in every layer, in them
 *	files, directories with files, and whiteouts named n0..n11; n12 and
 *	n13 only in the bottom layer, each one inode hard-linked from all
 *	four directories
 *   lfs-stress run [-w WORKERS] [-t SECONDS] [-s SEED] [-x ERRNO]... MNT
 *	WORKERS processes (default 16) for SECONDS (default 60) copy up,
 *	write, truncate, chmod, rename, link, unlink, mkdir, rmdir, list and
 *	read-verify over the names of 'populate' under MNT.  The errnos that
 *	races give on tmpfs are counted: ENOENT, ENOTDIR, ELOOP on any call,
 *	EISDIR, EEXIST, ENOTEMPTY, EPERM where that call gives them (see
 *	errno_expected()); -x adds one (by name, e.g. EEXIST) for all calls.
 *	Any other errno, or a file whose content is not made of valid
 *	records, is a failure: printed, and the exit status is 1.  Prints
 *	counts per operation and errno.
 *   lfs-stress verify DIR
 *	every regular file under DIR holds valid records (a quiet tree)
 *   lfs-stress crash-make [-d] ROOT NFILES MIB SEED
 *	lower layers ROOT/L0 and ROOT/L1 with NFILES large files
 *	d/sub/f<i> (MIB/2 to MIB MiB each), and ROOT/manifest naming each
 *	file's group (what crash-go does to it), the checksums of its
 *	valid contents and its object; everything fsync'ed.  -d: a
 *	data-only layer ROOT/D too (mount it with lowerdir=L0:L1::D), and
 *	the second round of groups (files NGROUPS..2*NGROUPS-1, ...) are
 *	pointer files in L1: sparse, with the metacopy marker and an
 *	absolute redirect to their object, /ab/cdef... in D, which holds
 *	the data (overlay 6.5's format, composefs's)
 *   lfs-stress crash-go MNT WORKDIR ROOT SEED MAXDELAY_MS
 *	one process per file of the manifest changes it through MNT, all at
 *	once: chmod (copy-up without data change), append one record, or
 *	overwrite the first record (copy-up, then write), or write a new
 *	file, fsync it and rename it over (new content), or chmod and then
 *	overwrite the first record (with metacopy: a metadata-only copy-up,
 *	then the data copy-up in place; of a pointer file, both read the
 *	object).  Once a seeded
 *	random number of them (0..NFILES-1) are done, and a seeded random
 *	delay up to MAXDELAY_MS later, resets the machine (sysrq b),
 *	syncing nothing; says what WORKDIR/work held then.
 *	Refuses unless LFS_EXPECT_RESET=1 (a guest booted for it);
 *	LFS_CRASH_DRY=1: no reset, waits for the changes instead.
 *   lfs-stress crash-check MNT ROOT [UPPER]
 *	after the reset and a new mount: each file shows its old or its
 *	complete new content (by checksum), never anything else, and the
 *	lower and data-only layers still hold exactly what crash-make
 *	wrote (names, modes, contents; pointer files still sparse, with
 *	their markers).  With UPPER (the mount's upper dir), says what it
 *	holds of each file: nothing, a metacopy file or data
 *
 * Contents are 16-byte records "KOOIIIISSSSSSSCC": kind (L: made in a
 * lower layer, W: written by a worker, N: new content), origin (layer or
 * worker), object id, sequence number, all hex, and a check byte over the
 * first 14.  A lower file's record i has sequence i and stays at offset
 * 16 * i: writes only append, overwrite offset 0 or truncate to 0, so a
 * misplaced, foreign, torn or zero record shows a bad copy-up.  The large
 * files of crash-make start each 4 KiB block with the record of its block
 * number and fill the rest with the file's own records (quick to make).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "uapi/layerfs.h"

#define REC		16
#define NDIRS		4
#define NNAMES		14	/* n0..n13; n12, n13: bottom-layer hard links */
#define NLOWNAMES	12	/* n0..n11 vary per layer */
#define NSUB		4	/* m0..m3 inside a directory */
#define MAX_FILE	(256 * 1024)
#define MAX_WORKERS	64
#define MAX_ERRNO	134
#define CHUNK		(1 << 20)

static const char hexdig[] = "0123456789abcdef";

/* xorshift64*: small, seedable, the same on every machine */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static uint64_t rng_seed(uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 0x1234567;

	return s ? s : 1;
}

static unsigned int rng_below(uint64_t *s, unsigned int n)
{
	return (unsigned int)((rng_next(s) >> 32) % n);
}

/* ---- records ---- */

static unsigned int rec_check(const char *r)
{
	unsigned int h = 0x5a;
	int i;

	for (i = 0; i < 14; i++)
		h = ((h << 3) ^ (h >> 5) ^ (unsigned char)r[i]) & 0xff;
	return h;
}

static void put_hex(char *p, unsigned long v, int digits)
{
	while (digits--) {
		p[digits] = hexdig[v & 15];
		v >>= 4;
	}
}

static void rec_make(char *r, char kind, unsigned int origin, unsigned int id,
		     unsigned long seq)
{
	unsigned int c;

	r[0] = kind;
	put_hex(r + 1, origin, 2);
	put_hex(r + 3, id, 4);
	put_hex(r + 7, seq, 7);
	c = rec_check(r);
	r[14] = hexdig[c >> 4];
	r[15] = hexdig[c & 15];
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Parse a record: 0 if valid (fields in *origin_id, *seq), -1 if not.
 * origin_id packs kind, origin and id, what must agree across one file's
 * lower records.
 */
static int rec_parse(const char *r, unsigned long *origin_id,
		     unsigned long *seq)
{
	unsigned long v = 0;
	int i, d;

	if (r[0] != 'L' && r[0] != 'W' && r[0] != 'N')
		return -1;
	for (i = 1; i < 16; i++) {
		d = hexval(r[i]);
		if (d < 0)
			return -1;
		if (i < 14)
			v = v << 4 | d;
	}
	if ((unsigned int)(hexval(r[14]) << 4 | hexval(r[15])) != rec_check(r))
		return -1;
	*origin_id = (unsigned long)(unsigned char)r[0] << 48 | v >> 28;
	*seq = v & 0xfffffff;
	return 0;
}

/* Fill buf with records kind/origin/id from sequence seq on. */
static void rec_fill(char *buf, size_t len, char kind, unsigned int origin,
		     unsigned int id, unsigned long seq)
{
	size_t off;

	for (off = 0; off + REC <= len; off += REC)
		rec_make(buf + off, kind, origin, id, seq++);
}

/*
 * Check a whole file's content.  Returns NULL if valid, else what is
 * wrong (static buffer), with the offset.
 */
static const char *content_check(const char *buf, size_t len)
{
	static char why[128];
	unsigned long lower = 0, oid, seq;
	size_t off;

	if (len % REC) {
		snprintf(why, sizeof(why), "size %zu is not a multiple of %d",
			 len, REC);
		return why;
	}
	for (off = 0; off < len; off += REC) {
		if (rec_parse(buf + off, &oid, &seq)) {
			snprintf(why, sizeof(why), "bad record at %zu: %.16s",
				 off, buf + off);
			return why;
		}
		if (buf[off] != 'L')
			continue;
		if (seq != (off / REC & 0xfffffff)) {
			snprintf(why, sizeof(why),
				 "lower record %.16s at offset %zu", buf + off,
				 off);
			return why;
		}
		if (lower && lower != oid) {
			snprintf(why, sizeof(why),
				 "records of two lower files (%.16s at %zu)",
				 buf + off, off);
			return why;
		}
		lower = oid;
	}
	return NULL;
}

/* ---- small helpers ---- */

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

/* Is @name "." or ".."? */
static bool dot_name(const char *name)
{
	return !strcmp(name, ".") || !strcmp(name, "..");
}

static int make_dirs(const char *path)
{
	char tmp[4096];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static int write_file(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	if (write_all(fd, buf, len)) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- populate ---- */

static int populate_file(const char *path, uint64_t *rs, unsigned int layer,
			 unsigned int id)
{
	static char buf[MAX_FILE];
	size_t len = (size_t)(1 + rng_below(rs, 4096)) * REC;

	/* mostly small files, some up to 64 KiB */
	if (rng_below(rs, 4))
		len %= 2048;
	if (!len)
		len = REC;
	rec_fill(buf, len, 'L', layer, id, 0);
	if (write_file(path, buf, len)) {
		fprintf(stderr, "lfs-stress: populate %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

static int cmd_populate(int argc, char **argv)
{
	unsigned int layers = argc > 1 ? atoi(argv[1]) : 8, l, d, k, m;
	uint64_t rs = rng_seed(42);
	char path[4096], path2[4096 + 16];

	if (argc < 1 || layers < 1 || layers > 64)
		return 2;
	for (l = 0; l < layers; l++) {
		for (d = 0; d < NDIRS; d++) {
			snprintf(path, sizeof(path), "%s/L%u/d%u", argv[0], l, d);
			if (make_dirs(path))
				goto fail;
			for (k = 0; k < NLOWNAMES; k++) {
				unsigned int what = rng_below(&rs, 20);
				unsigned int id = d * 64 + k * 4;

				snprintf(path, sizeof(path), "%s/L%u/d%u/n%u",
					 argv[0], l, d, k);
				if (what < 7) {
					if (populate_file(path, &rs, l, id))
						return 1;
				} else if (what < 11) {
					if (mkdir(path, 0755))
						goto fail;
					for (m = 0; m < NSUB; m++) {
						if (rng_below(&rs, 3) == 0)
							continue;
						snprintf(path2, sizeof(path2),
							 "%s/m%u", path, m);
						if (populate_file(path2, &rs, l,
								  0x400 + id + m))
							return 1;
					}
				} else if (what < 12 && l > 0) {
					/* overlay's whiteout: hides the layers below */
					if (mknod(path, S_IFCHR | 0, makedev(0, 0)))
						goto fail;
				}
			}
		}
	}
	/* the bottom layer: n12 and n13, each one inode in all four dirs */
	for (k = NLOWNAMES; k < NNAMES; k++) {
		snprintf(path, sizeof(path), "%s/L%u/d0/n%u", argv[0],
			 layers - 1, k);
		if (populate_file(path, &rs, layers - 1, 0x800 + k))
			return 1;
		for (d = 1; d < NDIRS; d++) {
			snprintf(path2, sizeof(path2), "%s/L%u/d%u/n%u",
				 argv[0], layers - 1, d, k);
			if (link(path, path2))
				goto fail;
		}
	}
	return 0;
fail:
	fprintf(stderr, "lfs-stress: populate %s: %s\n", path, strerror(errno));
	return 1;
}

/* ---- run ---- */

enum lfs_op {
	OP_APPEND, OP_PWRITE0, OP_OTRUNC, OP_TRUNCATE, OP_CHMOD, OP_UTIMES,
	OP_SETXATTR, OP_CREATE, OP_MKDIR, OP_RMDIR, OP_UNLINK, OP_RENAME,
	OP_RENAME_NOREPLACE, OP_RENAME_EXCHANGE, OP_LINK, OP_SYMLINK,
	OP_READDIR, OP_STAT, OP_READ, NOPS
};

static const char *const op_names[NOPS] = {
	"append", "pwrite0", "open-trunc", "truncate", "chmod", "utimes",
	"setxattr", "create", "mkdir", "rmdir", "unlink", "rename",
	"rename-noreplace", "rename-exchange", "link", "symlink", "readdir",
	"stat", "read-verify",
};

/* relative weights of the operations */
static const unsigned int op_weight[NOPS] = {
	8, 4, 3, 2, 4, 3, 3, 8, 2, 1, 3, 8, 2, 2, 3, 2, 4, 6, 10,
};

/* Counters shared by all workers (one mapping, each worker its row). */
struct lfs_counts {
	unsigned long op[NOPS][MAX_ERRNO + 1];	/* [op][0]: success */
	unsigned long bad_content;
	unsigned long unexpected;
};

struct lfs_worker {
	int id;
	uint64_t rs;
	const char *mnt;
	struct lfs_counts *c;
	unsigned int obj;	/* next object id for records written */
};

/* Errnos a run accepts on every operation besides the races (-x). */
static unsigned long long lfs_extra_errnos[(MAX_ERRNO + 64) / 64];

/*
 * The errnos that races give on a plain filesystem (tmpfs): a name that
 * went away or changed type, a symlink that loops.  Nothing else.
 */
static bool errno_expected(enum lfs_op op, int e)
{
	if (e > 0 && e <= MAX_ERRNO &&
	    lfs_extra_errnos[e / 64] & 1ULL << (e % 64))
		return true;
	if (e == ENOENT || e == ENOTDIR || e == ELOOP)
		return true;
	switch (op) {
	case OP_APPEND:
	case OP_PWRITE0:
	case OP_OTRUNC:
	case OP_TRUNCATE:
	case OP_UNLINK:
		return e == EISDIR;
	case OP_CREATE:
	case OP_MKDIR:
	case OP_SYMLINK:
	case OP_RENAME_NOREPLACE:
		return e == EEXIST;
	case OP_LINK:
		/* EPERM: link(2) to a directory */
		return e == EEXIST || e == EPERM;
	case OP_RMDIR:
		return e == ENOTEMPTY;
	case OP_RENAME:
		return e == EISDIR || e == ENOTEMPTY;
	default:
		return false;
	}
}

static int errno_by_name(const char *name)
{
	int e;

	for (e = 1; e <= MAX_ERRNO; e++)
		if (strerrorname_np(e) && !strcmp(strerrorname_np(e), name))
			return e;
	return -1;
}

/* Record one operation's outcome: ret < 0 means errno holds the error. */
static void count(struct lfs_worker *w, enum lfs_op op, int ret,
		  const char *a, const char *b)
{
	int e = errno;

	if (ret >= 0) {
		w->c->op[op][0]++;
		return;
	}
	w->c->op[op][e > 0 && e <= MAX_ERRNO ? e : MAX_ERRNO]++;
	if (errno_expected(op, e))
		return;
	w->c->unexpected++;
	fprintf(stderr, "lfs-stress: worker %d: %s %s%s%s: %s (unexpected)\n",
		w->id, op_names[op], a, b ? " " : "", b ? b : "", strerror(e));
}

/* A random pool path: d<i>/n<j> (depth 2) or d<i>/n<j>/m<k> (depth 3). */
static int pick(struct lfs_worker *w, char *buf, size_t size, int depth)
{
	unsigned int d = rng_below(&w->rs, NDIRS);
	unsigned int n = rng_below(&w->rs, NNAMES);

	if (!depth)
		depth = rng_below(&w->rs, 10) < 7 ? 2 : 3;
	if (depth == 2)
		snprintf(buf, size, "%s/d%u/n%u", w->mnt, d, n);
	else
		snprintf(buf, size, "%s/d%u/n%u/m%u", w->mnt, d, n,
			 rng_below(&w->rs, NSUB));
	return depth;
}

static size_t worker_records(struct lfs_worker *w, char *buf,
			     unsigned int max)
{
	unsigned int n = 1 + rng_below(&w->rs, max);

	rec_fill(buf, (size_t)n * REC, 'W', w->id, w->obj++ & 0xffff, 0);
	return (size_t)n * REC;
}

/*
 * Read a file and check its records.  A concurrent write may tear what
 * one read sees, so a bad file is read again; it fails only when every
 * one of three reads finds it bad.  Returns 0 or -1 with errno set
 * (failures to open), 1 on bad content.
 */
static int read_verify(struct lfs_worker *w, const char *path)
{
	static char buf[4 * MAX_FILE];
	const char *why = NULL;
	int attempt;

	for (attempt = 0; attempt < 3; attempt++) {
		size_t len = 0;
		struct stat st;
		ssize_t n;
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			return attempt ? 0 : -1;
		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			close(fd);
			return 0;
		}
		while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += n;
		close(fd);
		if (n < 0)
			return -1;
		why = content_check(buf, len);
		if (!why)
			return 0;
		usleep(1000);
	}
	fprintf(stderr, "lfs-stress: worker %d: read-verify %s: %s\n", w->id,
		path, why);
	w->c->bad_content++;
	return 1;
}

static int do_readdir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		return -1;
	errno = 0;
	while ((de = readdir(d)))
		;
	if (errno) {
		int e = errno;

		closedir(d);
		errno = e;
		return -1;
	}
	closedir(d);
	return 0;
}

static enum lfs_op pick_op(struct lfs_worker *w)
{
	static unsigned int total;
	unsigned int r, i;

	if (!total)
		for (i = 0; i < NOPS; i++)
			total += op_weight[i];
	r = rng_below(&w->rs, total);
	for (i = 0; r >= op_weight[i]; i++)
		r -= op_weight[i];
	return i;
}

static void worker_step(struct lfs_worker *w)
{
	static const mode_t modes[] = { 0644, 0600, 0755, 0700 };
	static char buf[MAX_FILE];
	char a[4096], b[4096 + 16];
	enum lfs_op op = pick_op(w);
	struct timespec ts[2];
	struct stat st;
	size_t len;
	int fd, ret, depth;

	depth = pick(w, a, sizeof(a), 0);
	switch (op) {
	case OP_APPEND:
		fd = ret = open(a, O_WRONLY | O_APPEND);
		if (fd >= 0) {
			/* keep files small: start over past the limit */
			if (!fstat(fd, &st) && st.st_size > MAX_FILE / 2)
				ret = ftruncate(fd, 0);
			len = worker_records(w, buf, 64);
			if (!ret)
				ret = write_all(fd, buf, len);
			close(fd);
		}
		break;
	case OP_PWRITE0:
		fd = ret = open(a, O_WRONLY);
		if (fd >= 0) {
			len = worker_records(w, buf, 1);
			ret = pwrite(fd, buf, len, 0) == (ssize_t)len ? 0 : -1;
			close(fd);
		}
		break;
	case OP_OTRUNC:
		fd = ret = open(a, O_WRONLY | O_TRUNC);
		if (fd >= 0) {
			len = worker_records(w, buf, 128);
			ret = write_all(fd, buf, len);
			close(fd);
		}
		break;
	case OP_TRUNCATE:
		ret = truncate(a, 0);
		break;
	case OP_CHMOD:
		ret = chmod(a, modes[rng_below(&w->rs, 4)]);
		break;
	case OP_UTIMES:
		ts[0].tv_sec = ts[1].tv_sec = 1000000000 + rng_below(&w->rs, 1000);
		ts[0].tv_nsec = ts[1].tv_nsec = 0;
		ret = utimensat(AT_FDCWD, a, ts, 0);
		break;
	case OP_SETXATTR:
		snprintf(b, sizeof(b), "w%d-%u", w->id, rng_below(&w->rs, 100));
		ret = setxattr(a, "trusted.lfs-stress", b, strlen(b), 0);
		break;
	case OP_CREATE:
		fd = ret = open(a, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0) {
			len = worker_records(w, buf, 64);
			ret = write_all(fd, buf, len);
			close(fd);
		}
		break;
	case OP_MKDIR:
		/* directories only at depth 2: nothing moves under itself */
		pick(w, a, sizeof(a), 2);
		ret = mkdir(a, 0755);
		break;
	case OP_RMDIR:
		/* empty it first: whiteouts over lower entries, then rmdir */
		pick(w, a, sizeof(a), 2);
		for (depth = 0; depth < NSUB; depth++) {
			snprintf(b, sizeof(b), "%s/m%d", a, depth);
			count(w, OP_UNLINK, unlink(b), b, NULL);
		}
		ret = rmdir(a);
		break;
	case OP_UNLINK:
		ret = unlink(a);
		break;
	case OP_RENAME:
	case OP_RENAME_NOREPLACE:
	case OP_RENAME_EXCHANGE:
		/* same depth: a path never moves under itself (no EINVAL) */
		pick(w, b, sizeof(b), depth);
		ret = renameat2(AT_FDCWD, a, AT_FDCWD, b,
				op == OP_RENAME ? 0 :
				op == OP_RENAME_NOREPLACE ? RENAME_NOREPLACE :
				RENAME_EXCHANGE);
		count(w, op, ret, a, b);
		return;
	case OP_LINK:
		pick(w, b, sizeof(b), depth);
		ret = link(a, b);
		count(w, op, ret, a, b);
		return;
	case OP_SYMLINK:
		/* relative targets into the pool: chains, loops, dangling */
		snprintf(b, sizeof(b), "%s../d%u/n%u", depth == 3 ? "../" : "",
			 rng_below(&w->rs, NDIRS), rng_below(&w->rs, NNAMES));
		ret = symlink(b, a);
		break;
	case OP_READDIR:
		if (rng_below(&w->rs, 3) == 0)
			snprintf(a, sizeof(a), "%s/d%u", w->mnt,
				 rng_below(&w->rs, NDIRS));
		ret = do_readdir(a);
		break;
	case OP_STAT:
		ret = lstat(a, &st);
		if (!ret && S_ISREG(st.st_mode) && st.st_size % REC) {
			fprintf(stderr, "lfs-stress: worker %d: stat %s: size %lld\n",
				w->id, a, (long long)st.st_size);
			w->c->bad_content++;
		}
		break;
	case OP_READ:
		ret = read_verify(w, a);
		if (ret > 0)
			ret = 0;
		break;
	default:
		return;
	}
	count(w, op, ret, a, NULL);
}

static void print_counts(struct lfs_counts *c, int workers, double secs)
{
	struct lfs_counts sum = { 0 };
	unsigned long total = 0;
	int i, o, e;

	for (i = 0; i < workers; i++) {
		for (o = 0; o < NOPS; o++)
			for (e = 0; e <= MAX_ERRNO; e++)
				sum.op[o][e] += c[i].op[o][e];
		sum.bad_content += c[i].bad_content;
		sum.unexpected += c[i].unexpected;
	}
	for (o = 0; o < NOPS; o++) {
		unsigned long n = 0;

		for (e = 0; e <= MAX_ERRNO; e++)
			n += sum.op[o][e];
		total += n;
		printf("%-17s %8lu ops %8lu ok", op_names[o], n, sum.op[o][0]);
		for (e = 1; e <= MAX_ERRNO; e++)
			if (sum.op[o][e])
				printf("  %s %lu", strerrorname_np(e) ?: "?",
				       sum.op[o][e]);
		printf("\n");
	}
	printf("total %lu ops in %.1f s by %d workers; %lu unexpected errors, %lu bad contents\n",
	       total, secs, workers, sum.unexpected, sum.bad_content);
}

static int cmd_run(int argc, char **argv)
{
	int workers = 16, secs = 60, opt, i, failed = 0;
	unsigned long seed = (unsigned long)time(NULL) % 100000;
	struct lfs_counts *c;
	double t0, deadline;

	/* getopt() wants the command's name in front: it is there */
	argc++;
	argv--;
	while ((opt = getopt(argc, argv, "w:t:s:x:")) != -1) {
		switch (opt) {
		case 'w':
			workers = atoi(optarg);
			break;
		case 't':
			secs = atoi(optarg);
			break;
		case 's':
			seed = strtoul(optarg, NULL, 0);
			break;
		case 'x':
			opt = errno_by_name(optarg);
			if (opt < 0) {
				fprintf(stderr, "lfs-stress: -x %s: no such errno name\n",
					optarg);
				return 2;
			}
			lfs_extra_errnos[opt / 64] |= 1ULL << (opt % 64);
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1 || workers < 1 || workers > MAX_WORKERS ||
	    secs < 0)
		return 2;
	c = mmap(NULL, sizeof(*c) * workers, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c == MAP_FAILED) {
		perror("lfs-stress: mmap");
		return 1;
	}
	printf("lfs-stress: %d workers, %d s, seed %lu, on %s\n", workers, secs,
	       seed, argv[optind]);
	fflush(stdout);
	t0 = now();
	deadline = t0 + secs;
	for (i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("lfs-stress: fork");
			return 1;
		}
		if (!pid) {
			struct lfs_worker w = {
				.id = i, .mnt = argv[optind], .c = &c[i],
				.rs = rng_seed(seed * 1000 + i),
			};

			while (now() < deadline)
				worker_step(&w);
			_exit(0);
		}
	}
	for (i = 0; i < workers; i++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "lfs-stress: a worker died (status %#x)\n",
				status);
			failed = 1;
		}
	}
	print_counts(c, workers, now() - t0);
	for (i = 0; i < workers; i++)
		if (c[i].unexpected || c[i].bad_content)
			failed = 1;
	return failed;
}

/* ---- verify ---- */

static int verify_walk(const char *dir, unsigned long *files)
{
	static char buf[4 * MAX_FILE];
	DIR *d = opendir(dir);
	struct dirent *de;
	int bad = 0;

	if (!d) {
		fprintf(stderr, "lfs-stress: opendir %s: %s\n", dir,
			strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;
		const char *why;
		size_t len = 0;
		ssize_t n;
		int fd;

		if (dot_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			fprintf(stderr, "lfs-stress: lstat %s: %s\n", path,
				strerror(errno));
			bad = 1;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			bad |= verify_walk(path, files);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		fd = open(path, O_RDONLY);
		if (fd < 0) {
			fprintf(stderr, "lfs-stress: open %s: %s\n", path,
				strerror(errno));
			bad = 1;
			continue;
		}
		while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += n;
		close(fd);
		why = n < 0 ? strerror(errno) : content_check(buf, len);
		if (!why && (off_t)len != st.st_size)
			why = "read size differs from st_size";
		if (why) {
			fprintf(stderr, "lfs-stress: verify %s: %s\n", path, why);
			bad = 1;
		}
		(*files)++;
	}
	closedir(d);
	return bad;
}

static int cmd_verify(int argc, char **argv)
{
	unsigned long files = 0;
	int bad;

	if (argc != 1)
		return 2;
	bad = verify_walk(argv[0], &files);
	printf("lfs-stress: verify %s: %lu files%s\n", argv[0], files,
	       bad ? ", BAD" : ", all valid");
	return bad;
}

/* ---- crash ---- */

/*
 * File i is in group i % NGROUPS; the second round of groups (i / NGROUPS
 * odd) are pointer files with crash-make -d.  The copy-up steps come
 * first, so that the default 8 files have pointer files in the three of
 * them: chmod (the metadata-only copy-up), chmod-head (it, then the data
 * copy-up in place) and overwrite-head (a data copy-up straight from the
 * pointer file).
 */
enum lfs_group { G_CHMOD, G_CHMOD_HEAD, G_HEAD, G_APPEND, G_REPLACE, NGROUPS };

static const char *const group_names[NGROUPS] = {
	"chmod", "chmod-head", "overwrite-head", "append", "replace",
};

#define CRASH_OBJECT_MAX	32

struct lfs_crash_file {
	unsigned int idx;
	unsigned int layer;
	unsigned int group;
	unsigned long long size;	/* old content */
	unsigned long long new_size;	/* new content (replace) */
	unsigned int old_mode, new_mode;
	unsigned long long old_hash, new_hash;
	/* a pointer file's object in ROOT/D ("/ab/cdef..."), else "" */
	char object[CRASH_OBJECT_MAX];
};

#define CRASH_MAX	64
#define CRASH_MARKER_ORIGIN	0xcc
/* an object's mode: not its pointer file's, which the mount must show */
#define CRASH_OBJECT_MODE	0444

/* 64-bit hash over 8-byte words; lengths are multiples of 16 */
struct lfs_hash {
	uint64_t h;
	uint64_t len;
};

static void hash_init(struct lfs_hash *h)
{
	h->h = 0x84222325cbf29ce4ULL;
	h->len = 0;
}

static void hash_add(struct lfs_hash *h, const char *buf, size_t len)
{
	uint64_t x = h->h, w;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, buf + i, 8);
		x = (x ^ w) * 0x9e3779b97f4a7c15ULL;
		x ^= x >> 29;
	}
	h->h = x;
	h->len += len;
}

static unsigned long long hash_end(const struct lfs_hash *h)
{
	uint64_t x = (h->h ^ h->len) * 0xff51afd7ed558ccdULL;

	return x ^ (x >> 33);
}

static void crash_path(char *buf, size_t size, const char *root,
		       const struct lfs_crash_file *f, bool lower)
{
	if (lower)
		snprintf(buf, size, "%s/L%u/d/sub/f%u", root, f->layer, f->idx);
	else
		snprintf(buf, size, "%s/d/sub/f%u", root, f->idx);
}

static void crash_marker(char *rec, const struct lfs_crash_file *f)
{
	rec_make(rec, 'W', CRASH_MARKER_ORIGIN, f->idx, 0);
}

/*
 * A large file's old content, fast to make in a slow guest: each 4 KiB
 * block starts with the record of its block number and goes on with the
 * file's own filler records.  off and len are multiples of 16.
 */
static void crash_old_chunk(char *buf, size_t len,
			    const struct lfs_crash_file *f,
			    unsigned long long off)
{
	static char filler[4096];
	static int filler_of = -1;
	size_t done;

	if (filler_of != (int)f->idx) {
		rec_fill(filler, sizeof(filler), 'L', f->layer, f->idx,
			 0xfffff00);
		filler_of = f->idx;
	}
	for (done = 0; done < len;) {
		unsigned long long pos = off + done;
		size_t in = pos % sizeof(filler);
		size_t k = sizeof(filler) - in;

		if (k > len - done)
			k = len - done;
		memcpy(buf + done, filler + in, k);
		if (!in)
			rec_make(buf + done, 'L', f->layer, f->idx,
				 pos / sizeof(filler));
		done += k;
	}
}

/* The content of a file in 'replace': N records, fresh from the seed. */
static void crash_new_chunk(char *buf, size_t len,
			    const struct lfs_crash_file *f, unsigned long long off)
{
	rec_fill(buf, len, 'N', CRASH_MARKER_ORIGIN, f->idx, off / REC);
}

static int manifest_read(const char *root, struct lfs_crash_file *files,
			 int *n)
{
	char path[4096], line[512];
	FILE *m;

	snprintf(path, sizeof(path), "%s/manifest", root);
	m = fopen(path, "r");
	if (!m) {
		fprintf(stderr, "lfs-stress: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*n = 0;
	while (fgets(line, sizeof(line), m)) {
		struct lfs_crash_file *f = &files[*n];

		if (line[0] == '#')
			continue;
		if (*n == CRASH_MAX ||
		    sscanf(line, "f%u L%u %u %llu %llu %o %o %llx %llx %31s",
			   &f->idx, &f->layer, &f->group, &f->size,
			   &f->new_size, &f->old_mode, &f->new_mode,
			   &f->old_hash, &f->new_hash, f->object) != 10 ||
		    f->group >= NGROUPS ||
		    (strcmp(f->object, "-") && f->object[0] != '/')) {
			fprintf(stderr, "lfs-stress: %s: bad line: %s", path,
				line);
			fclose(m);
			return -1;
		}
		if (!strcmp(f->object, "-"))
			f->object[0] = 0;
		(*n)++;
	}
	fclose(m);
	return 0;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY), ret;

	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

/*
 * Make file f a pointer file, as composefs writes them: its object, just
 * written at @tmp, goes to ROOT/D under a name made of its content's
 * hash, and its lower file is a sparse file of the object's size with
 * the (empty) metacopy marker and the object's absolute path as its
 * redirect.
 */
static int crash_make_pointer(const char *root, struct lfs_crash_file *f,
			      const char *tmp)
{
	char path[4096];
	int fd, e;

	snprintf(f->object, sizeof(f->object), "/%02llx/%014llx",
		 f->old_hash >> 56, f->old_hash & ((1ULL << 56) - 1));
	snprintf(path, sizeof(path), "%s/D/%.2s", root, f->object + 1);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/D%s", root, f->object);
	if (rename(tmp, path))
		return -1;
	crash_path(path, sizeof(path), root, f, true);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, f->old_mode);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, f->size) ||
	    fsetxattr(fd, LFS_XATTR_METACOPY, "", 0, 0) ||
	    fsetxattr(fd, LFS_XATTR_REDIRECT, f->object, strlen(f->object),
		      0) ||
	    fsync(fd)) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

/*
 * Write file f's old content, to its lower file or, for a pointer file,
 * to its object, and work out the checksums of its valid contents.
 */
static int crash_make_file(const char *root, struct lfs_crash_file *f,
			   bool pointer, char *buf)
{
	struct lfs_hash ho, hn;
	unsigned long long off;
	char path[4096], marker[REC];
	int fd;

	if (pointer)
		snprintf(path, sizeof(path), "%s/D/.f%u", root, f->idx);
	else
		crash_path(path, sizeof(path), root, f, true);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC,
		  pointer ? CRASH_OBJECT_MODE : f->old_mode);
	if (fd < 0)
		return -1;
	hash_init(&ho);
	hash_init(&hn);
	crash_marker(marker, f);
	for (off = 0; off < f->size; off += CHUNK) {
		size_t len = f->size - off < CHUNK ? f->size - off : CHUNK;

		crash_old_chunk(buf, len, f, off);
		if (write_all(fd, buf, len))
			goto fail;
		hash_add(&ho, buf, len);
		if ((f->group == G_HEAD || f->group == G_CHMOD_HEAD) && off == 0)
			memcpy(buf, marker, REC);
		hash_add(&hn, buf, len);
	}
	if (fsync(fd))
		goto fail;
	close(fd);
	f->old_hash = hash_end(&ho);
	switch (f->group) {
	case G_CHMOD:
		f->new_hash = f->old_hash;
		break;
	case G_APPEND:
		hash_add(&hn, marker, REC);
		f->new_hash = hash_end(&hn);
		break;
	case G_HEAD:
	case G_CHMOD_HEAD:
		f->new_hash = hash_end(&hn);
		break;
	case G_REPLACE:
		hash_init(&hn);
		for (off = 0; off < f->new_size; off += CHUNK) {
			size_t len = f->new_size - off < CHUNK ?
				     f->new_size - off : CHUNK;

			crash_new_chunk(buf, len, f, off);
			hash_add(&hn, buf, len);
		}
		f->new_hash = hash_end(&hn);
		break;
	}
	return pointer ? crash_make_pointer(root, f, path) : 0;
fail:
	close(fd);
	return -1;
}

static int cmd_crash_make(int argc, char **argv)
{
	struct lfs_crash_file files[CRASH_MAX];
	char path[4096], *buf;
	unsigned long long mib;
	bool data_layer = false;
	int n, i, fd, pointers = 0;
	uint64_t rs;
	FILE *m;

	if (argc == 5 && !strcmp(argv[0], "-d")) {
		data_layer = true;
		argc--;
		argv++;
	}
	if (argc != 4)
		return 2;
	n = atoi(argv[1]);
	mib = strtoull(argv[2], NULL, 0);
	rs = rng_seed(strtoull(argv[3], NULL, 0));
	if (n < 1 || n > CRASH_MAX || mib < 2)
		return 2;
	buf = malloc(CHUNK);
	if (!buf)
		return 1;
	/* L0/d/sub, L1/d/sub, and with -d the data-only layer D */
	for (i = 0; i < (data_layer ? 3 : 2); i++) {
		if (i == 2)
			snprintf(path, sizeof(path), "%s/D", argv[0]);
		else
			snprintf(path, sizeof(path), "%s/L%d/d/sub", argv[0], i);
		if (make_dirs(path)) {
			fprintf(stderr, "lfs-stress: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		struct lfs_crash_file *f = &files[i];
		bool pointer = data_layer && (i / NGROUPS) % 2;

		f->idx = i;
		/* a pointer file is in the lower layer that is not the top */
		f->layer = pointer ? 1 : i % 2;
		f->group = i % NGROUPS;
		f->object[0] = 0;
		pointers += pointer;
		f->size = (mib << 19) + (rng_next(&rs) % (mib << 19));
		f->size -= f->size % REC;
		f->new_size = (1 << 20) + rng_next(&rs) % (1 << 20);
		f->new_size -= f->new_size % REC;
		f->old_mode = 0644;
		f->new_mode = f->group == G_CHMOD || f->group == G_CHMOD_HEAD ?
			      0600 : 0644;
		if (crash_make_file(argv[0], f, pointer, buf)) {
			fprintf(stderr, "lfs-stress: crash-make f%d: %s\n", i,
				strerror(errno));
			return 1;
		}
	}
	snprintf(path, sizeof(path), "%s/manifest", argv[0]);
	m = fopen(path, "w");
	if (!m)
		goto fail;
	fprintf(m, "# name layer group size new-size old-mode new-mode old-hash new-hash object\n");
	for (i = 0; i < n; i++) {
		struct lfs_crash_file *f = &files[i];

		fprintf(m, "f%u L%u %u %llu %llu %o %o %016llx %016llx %s\n",
			f->idx, f->layer, f->group, f->size, f->new_size,
			f->old_mode, f->new_mode, f->old_hash, f->new_hash,
			f->object[0] ? f->object : "-");
	}
	if (fflush(m) || fsync(fileno(m)))
		goto fail;
	fclose(m);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/L%d/d/sub", argv[0], i);
		if (fsync_path(path))
			goto fail;
	}
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || syncfs(fd))
		goto fail;
	close(fd);
	free(buf);
	printf("lfs-stress: crash-make: %d files in %s, %d of them pointer files\n",
	       n, argv[0], pointers);
	return 0;
fail:
	fprintf(stderr, "lfs-stress: crash-make %s: %s\n", path, strerror(errno));
	return 1;
}

/* What a child of crash-go does to its file through the mount. */
static int crash_change(const char *mnt, const struct lfs_crash_file *f)
{
	char path[4096], tmp[4096], marker[REC], *buf;
	unsigned long long off;
	int fd;

	crash_path(path, sizeof(path), mnt, f, false);
	crash_marker(marker, f);
	switch (f->group) {
	case G_CHMOD:
		return chmod(path, f->new_mode);
	case G_CHMOD_HEAD:
		if (chmod(path, f->new_mode))
			return -1;
		/* fall through */
	case G_HEAD:
		fd = open(path, O_WRONLY);
		if (fd < 0)
			return -1;
		if (pwrite(fd, marker, REC, 0) != REC)
			return -1;
		return close(fd);
	case G_APPEND:
		fd = open(path, O_WRONLY | O_APPEND);
		if (fd < 0)
			return -1;
		if (write_all(fd, marker, REC))
			return -1;
		return close(fd);
	case G_REPLACE:
		snprintf(tmp, sizeof(tmp), "%s/d/sub/.f%u.new", mnt, f->idx);
		buf = malloc(CHUNK);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, f->new_mode);
		if (fd < 0 || !buf)
			return -1;
		for (off = 0; off < f->new_size; off += CHUNK) {
			size_t len = f->new_size - off < CHUNK ?
				     f->new_size - off : CHUNK;

			crash_new_chunk(buf, len, f, off);
			if (write_all(fd, buf, len))
				return -1;
		}
		if (fsync(fd) || close(fd))
			return -1;
		return rename(tmp, path);
	}
	return -1;
}

static int dir_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (!dot_name(de->d_name))
			n++;
	closedir(d);
	return n;
}

static int cmd_crash_go(int argc, char **argv)
{
	struct lfs_crash_file files[CRASH_MAX];
	int n, i, done = 0, fd, go[2], status, wait_for;
	unsigned long delay_ms, seed;
	bool dry;
	char work[4096];
	uint64_t rs;
	double t0;

	if (argc != 5)
		return 2;
	if (manifest_read(argv[2], files, &n) || !n)
		return 1;
	seed = strtoul(argv[3], NULL, 0);
	rs = rng_seed(seed);
	wait_for = rng_next(&rs) % n;
	delay_ms = rng_next(&rs) % (strtoul(argv[4], NULL, 0) + 1);
	snprintf(work, sizeof(work), "%s/work", argv[1]);
	/* never reset a machine by mistake: only a guest booted for it */
	dry = getenv("LFS_CRASH_DRY") && !strcmp(getenv("LFS_CRASH_DRY"), "1");
	if (!dry && (!getenv("LFS_EXPECT_RESET") ||
		     strcmp(getenv("LFS_EXPECT_RESET"), "1"))) {
		fprintf(stderr, "lfs-stress: crash-go resets the machine: only in a guest booted with LFS_EXPECT_RESET=1 (or LFS_CRASH_DRY=1: no reset)\n");
		return 1;
	}
	fd = dry ? open("/dev/null", O_WRONLY) :
		   open("/proc/sysrq-trigger", O_WRONLY);
	if (fd < 0 || pipe(go)) {
		perror("lfs-stress: crash-go: /proc/sysrq-trigger");
		return 1;
	}
	printf("lfs-stress: crash-go: seed %lu: reset %lu ms after %d of %d changes are done\n",
	       seed, delay_ms, wait_for, n);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid_t pid = fork();
		char c;

		if (pid < 0)
			return 1;
		if (pid)
			continue;
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		if (crash_change(argv[0], &files[i])) {
			fprintf(stderr, "lfs-stress: crash-go f%u (%s): %s\n",
				files[i].idx, group_names[files[i].group],
				strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	close(go[0]);
	t0 = now();
	close(go[1]);
	if (dry) {
		while (wait(&status) > 0)
			done += WIFEXITED(status) && !WEXITSTATUS(status);
		printf("lfs-stress: crash-go: dry run: %d of %d changes done\n",
		       done, n);
		return done == n ? 0 : 1;
	}
	/* whatever the machine's speed, the other changes are in flight */
	while (done < wait_for && wait(NULL) > 0)
		done++;
	usleep(delay_ms * 1000);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		done++;
	printf("lfs-stress: crash-go: reset at %.3f s, %d of %d changes done, %d entries in %s\n",
	       now() - t0, done, n, dir_entries(work), work);
	fflush(stdout);
	if (isatty(1))
		tcdrain(1);
	if (write(fd, "b", 1) != 1)
		perror("lfs-stress: crash-go: sysrq b");
	sleep(30);
	fprintf(stderr, "lfs-stress: crash-go: still running after the reset\n");
	return 1;
}

static int hash_path(const char *path, unsigned long long *hash,
		     struct stat *st, char *buf)
{
	struct lfs_hash h;
	ssize_t k;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	if (fstat(fd, st)) {
		close(fd);
		return -1;
	}
	hash_init(&h);
	while ((k = read(fd, buf, CHUNK)) > 0)
		hash_add(&h, buf, k);
	close(fd);
	if (k < 0)
		return -1;
	*hash = hash_end(&h);
	return 0;
}

/*
 * An append cut by the reset: the first @len bytes hashed, and the REC
 * bytes after them, which an unsynced append may leave as zeros (the
 * size reached the disk, the data did not), on any filesystem.
 */
static int hash_prefix(const char *path, unsigned long long len,
		       unsigned long long *hash, char *tail, char *buf)
{
	unsigned long long done = 0;
	struct lfs_hash h;
	ssize_t k = 1;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	hash_init(&h);
	while (done < len && k > 0) {
		size_t want = len - done < CHUNK ? len - done : CHUNK;

		k = read(fd, buf, want);
		if (k > 0) {
			hash_add(&h, buf, k);
			done += k;
		}
	}
	k = done == len ? read(fd, tail, REC) : -1;
	close(fd);
	if (k != REC)
		return -1;
	*hash = hash_end(&h);
	return 0;
}

static bool is_zero(const char *buf, size_t len)
{
	while (len--)
		if (*buf++)
			return false;
	return true;
}

/* Where a file that matches neither content first differs from the old. */
static void crash_explain(const char *path, const struct lfs_crash_file *f,
			  char *buf, char *want)
{
	unsigned long long off;
	ssize_t k = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	for (off = 0; off < f->size; off += k) {
		size_t len = f->size - off < CHUNK ? f->size - off : CHUNK;
		size_t i;

		k = read(fd, buf, len);
		if (k <= 0)
			break;
		crash_old_chunk(want, k, f, off);
		/* the first record may hold the marker */
		for (i = off ? 0 : REC; i < (size_t)k; i++)
			if (buf[i] != want[i])
				break;
		if (i < (size_t)k) {
			i -= i % REC;
			printf("  first difference from the old content at %llu: \"%.16s\"%s\n",
			       off + i, buf + i, buf[i] ? "" : " (zeros)");
			k = -1;
			break;
		}
	}
	if (k >= 0 && off < f->size)
		printf("  the old content ends early, at %llu\n", off);
	close(fd);
}

static int crash_lower_names(const char *root, unsigned int layer,
			     const struct lfs_crash_file *files, int n)
{
	char path[4096];
	DIR *d;
	struct dirent *de;
	int bad = 0, seen = 0, i;

	snprintf(path, sizeof(path), "%s/L%u/d/sub", root, layer);
	d = opendir(path);
	if (!d) {
		printf("BAD lower %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		unsigned int idx;
		char extra;

		if (dot_name(de->d_name))
			continue;
		if (sscanf(de->d_name, "f%u%c", &idx, &extra) != 1 ||
		    idx >= (unsigned int)n || files[idx].layer != layer) {
			printf("BAD lower %s: unexpected entry %s\n", path,
			       de->d_name);
			bad = 1;
			continue;
		}
		seen++;
	}
	closedir(d);
	for (i = 0; i < n; i++)
		seen -= files[i].layer == layer;
	if (seen) {
		printf("BAD lower %s: entries missing\n", path);
		bad = 1;
	}
	return bad;
}

/*
 * A pointer file and its object as crash-make made them: the lower file
 * sparse, of the object's size, with the empty marker and the redirect;
 * the object with the old content and its own mode (no copy-up writes
 * it, nor changes it).
 */
static int crash_check_pointer(const char *root,
			       const struct lfs_crash_file *f, char *buf)
{
	char path[4096], val[CRASH_OBJECT_MAX];
	unsigned long long h;
	struct stat st;
	off_t data = 0;
	ssize_t k;
	int fd;

	crash_path(path, sizeof(path), root, f, true);
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		printf("BAD lower %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	/* all hole: no data from here on */
	if (lseek(fd, 0, SEEK_DATA) >= 0 || errno != ENXIO)
		data = 1;
	close(fd);
	if (data || (st.st_mode & 07777) != f->old_mode ||
	    (unsigned long long)st.st_size != f->size) {
		printf("BAD lower %s: changed: not the sparse pointer file made (size %lld, mode %o%s)\n",
		       path, (long long)st.st_size, st.st_mode & 07777,
		       data ? ", has data" : "");
		return 1;
	}
	if (getxattr(path, LFS_XATTR_METACOPY, val, sizeof(val)) != 0) {
		printf("BAD lower %s: its metacopy marker changed\n", path);
		return 1;
	}
	k = getxattr(path, LFS_XATTR_REDIRECT, val, sizeof(val) - 1);
	if (k >= 0)
		val[k] = 0;
	if (k < 0 || strcmp(val, f->object)) {
		printf("BAD lower %s: its redirect changed\n", path);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/D%s", root, f->object);
	if (hash_path(path, &h, &st, buf)) {
		printf("BAD data-only %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (h != f->old_hash || (st.st_mode & 07777) != CRASH_OBJECT_MODE ||
	    (unsigned long long)st.st_size != f->size) {
		printf("BAD data-only %s: changed\n", path);
		return 1;
	}
	return 0;
}

static bool crash_is_object(const char *dir, const char *name,
			    const struct lfs_crash_file *files, int n)
{
	char object[4096];
	int i;

	snprintf(object, sizeof(object), "/%s/%s", dir, name);
	for (i = 0; i < n; i++)
		if (!strcmp(files[i].object, object))
			return true;
	return false;
}

/* ROOT/D holds the objects of the pointer files and nothing else. */
static int crash_data_names(const char *root,
			    const struct lfs_crash_file *files, int n)
{
	struct dirent *de, *oe;
	int bad = 0, seen = 0, i, fd;
	char path[4096];
	DIR *d, *od;

	snprintf(path, sizeof(path), "%s/D", root);
	d = opendir(path);
	if (!d) {
		printf("BAD data-only %s: %s\n", path, strerror(errno));
		return 1;
	}
	while ((de = readdir(d))) {
		if (dot_name(de->d_name))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY);
		od = fd < 0 ? NULL : fdopendir(fd);
		if (!od) {
			printf("BAD data-only %s: unexpected entry %s\n",
			       path, de->d_name);
			if (fd >= 0)
				close(fd);
			bad = 1;
			continue;
		}
		while ((oe = readdir(od))) {
			if (dot_name(oe->d_name))
				continue;
			if (crash_is_object(de->d_name, oe->d_name, files, n)) {
				seen++;
				continue;
			}
			printf("BAD data-only %s/%s: unexpected entry %s\n",
			       path, de->d_name, oe->d_name);
			bad = 1;
		}
		closedir(od);
	}
	closedir(d);
	for (i = 0; i < n; i++)
		seen -= files[i].object[0] != 0;
	if (seen) {
		printf("BAD data-only %s: objects missing\n", path);
		bad = 1;
	}
	return bad;
}

/* What UPPER holds of file f: nothing, a metacopy file or data. */
static const char *crash_upper_state(const char *upper,
				     const struct lfs_crash_file *f)
{
	char path[4096];
	struct stat st;

	crash_path(path, sizeof(path), upper, f, false);
	if (lstat(path, &st))
		return errno == ENOENT ? "nothing" : strerror(errno);
	if (getxattr(path, LFS_XATTR_METACOPY, NULL, 0) >= 0)
		return "a metacopy file";
	return "data";
}

static int cmd_crash_check(int argc, char **argv)
{
	struct lfs_crash_file files[CRASH_MAX];
	int n, i, bad = 0, olds = 0, news = 0, pointers = 0;
	char path[4096], *buf, *want;
	const char *upper;

	if (argc != 2 && argc != 3)
		return 2;
	upper = argc == 3 ? argv[2] : NULL;
	if (manifest_read(argv[1], files, &n))
		return 1;
	buf = malloc(CHUNK);
	want = malloc(CHUNK);
	if (!buf || !want)
		return 1;
	for (i = 0; i < n; i++) {
		const struct lfs_crash_file *f = &files[i];
		unsigned long long h;
		const char *what = NULL;
		unsigned int mode;
		struct stat st;

		crash_path(path, sizeof(path), argv[0], f, false);
		if (hash_path(path, &h, &st, buf)) {
			printf("BAD f%u (%s): %s: %s\n", f->idx,
			       group_names[f->group], path, strerror(errno));
			bad = 1;
			continue;
		}
		mode = st.st_mode & 07777;
		if (h == f->new_hash && mode == f->new_mode &&
		    (h != f->old_hash || mode != f->old_mode))
			what = "new";
		else if (h == f->old_hash &&
			 (mode == f->old_mode ||
			  ((f->group == G_CHMOD || f->group == G_CHMOD_HEAD) &&
			   mode == f->new_mode)))
			what = "old";
		if (!what && f->group == G_APPEND && mode == f->old_mode &&
		    (unsigned long long)st.st_size == f->size + REC) {
			char tail[REC];
			unsigned long long ph;

			/* the copy-up is whole; the appended record is not */
			if (!hash_prefix(path, f->size, &ph, tail, buf) &&
			    ph == f->old_hash && is_zero(tail, REC))
				what = "old, append lost";
		}
		if (what) {
			printf("f%u %-14s %s (size %lld, mode %o)%s%s%s\n",
			       f->idx, group_names[f->group], what,
			       (long long)st.st_size, mode,
			       f->object[0] ? ", pointer file" : "",
			       upper ? ", upper: " : "",
			       upper ? crash_upper_state(upper, f) : "");
			*(what[0] == 'n' ? &news : &olds) += 1;
			continue;
		}
		printf("BAD f%u (%s%s): neither old nor new content: size %lld (old %llu, new %llu), mode %o\n",
		       f->idx, group_names[f->group],
		       f->object[0] ? ", pointer file" : "",
		       (long long)st.st_size,
		       f->size, f->group == G_REPLACE ? f->new_size :
		       f->size + (f->group == G_APPEND ? REC : 0), mode);
		crash_explain(path, f, buf, want);
		bad = 1;
	}
	/* the lower layers: the same names, modes and contents as made */
	for (i = 0; i < n; i++) {
		const struct lfs_crash_file *f = &files[i];
		unsigned long long h;
		struct stat st;

		if (f->object[0]) {
			bad |= crash_check_pointer(argv[1], f, buf);
			pointers++;
			continue;
		}
		crash_path(path, sizeof(path), argv[1], f, true);
		if (hash_path(path, &h, &st, buf)) {
			printf("BAD lower %s: %s\n", path, strerror(errno));
			bad = 1;
		} else if (h != f->old_hash || (st.st_mode & 07777) != f->old_mode ||
			   (unsigned long long)st.st_size != f->size) {
			printf("BAD lower %s: changed\n", path);
			bad = 1;
		}
	}
	bad |= crash_lower_names(argv[1], 0, files, n);
	bad |= crash_lower_names(argv[1], 1, files, n);
	if (pointers)
		bad |= crash_data_names(argv[1], files, n);
	printf("lfs-stress: crash-check: %d files: %d old, %d new, %s\n", n,
	       olds, news, bad ? "BAD" :
	       pointers ? "lower and data-only layers unchanged" :
	       "lower layers unchanged");
	free(buf);
	free(want);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
		{ "populate", cmd_populate },
		{ "run", cmd_run },
		{ "verify", cmd_verify },
		{ "crash-make", cmd_crash_make },
		{ "crash-go", cmd_crash_go },
		{ "crash-check", cmd_crash_check },
	};
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int ret;

		if (strcmp(argv[1], cmds[i].name))
			continue;
		ret = cmds[i].fn(argc - 2, argv + 2);
		if (ret == 2)
			fprintf(stderr, "lfs-stress: %s: bad arguments (see the head of tools/lfs-stress.c)\n",
				argv[1]);
		return ret;
	}
	fprintf(stderr, "usage: lfs-stress populate|run|verify|crash-make|crash-go|crash-check ARGS\n");
	return 2;
}
