// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-opseq: scripted operation sequences for the differential tests of
 * the layerfs write side.  One script applied to a layerfs mount and to a
 * plain copy of its flattened tree must give the same step log and the
 * same final tree.  Each command does its whole job in one process
 * (process start is slow in the test guest).
 *
 *   lfs-opseq gen [-x OP[,OP...]] SEED COUNT [NAME | @DIR]...
 *	print COUNT operations, one a line, drawn with a fixed generator
 *	from SEED over a small pool of paths: the NAMEs (a trailing '/'
 *	marks a directory), every path under DIR, and a few new names, so
 *	that operations collide.  Every sixth step takes the next kind in
 *	turn, heldfd first, in a form that succeeds on any correct
 *	filesystem (see lfs_gen_sure()), so any script of 6 * (number of
 *	kinds) lines or more holds every kind, successful.  About one step
 *	in five of the others runs as an unprivileged user, "as USER OP
 *	ARGS", mostly on what that user owns in DIR.  A third of the
 *	exchange and noreplace steps take a directory of DIR (of the lower
 *	layers): exchanged with another or with a non-directory, or moved
 *	to a new name.  -x leaves the named kinds out.
 *   lfs-opseq run [-k] [-D DUMP [-T SEC[.FRAC]]] ROOT < SCRIPT
 *	chroot to ROOT and apply each line in this process; print per step
 *	"N [as USER] OP ARGS -> 0|[CALL:]ERRNAME [FACTS]".  Facts are only
 *	what two correct filesystems holding the same tree agree on: never
 *	inode numbers or times of day, but "ino=OK|CHANGED" where an object
 *	must keep its inode number (see lfs_run_step()), what a new object
 *	was given (mode, owner, inherited ACLs: lfs_fact_new()), contents
 *	read back.  "as UID[:GID]" runs the step with that user's
 *	credentials and no capability (see lfs_become()), so that
 *	permission errors are compared too.  -D: then dump the tree into
 *	the file DUMP, as dump does (saves a process).
 *	The kinds (lfs_ops[]): data (create, otrunc, write, append,
 *	truncate, fsetfl: F_SETFL O_APPEND on and off, heldfd: a file read
 *	through an fd opened before a write copied it up), namespace
 *	(mkdir, fifo, sock, chr, blk, symlink, link, unlink, rmdir,
 *	rename, noreplace, exchange, tmpfile, rmtree), attributes (chmod,
 *	chown, lchown, utimes, setxattr, rmxattr, setacl, rmacl: POSIX
 *	ACLs, in the text form of lfs_acl_from_text()) and reads (xattrs,
 *	read, readdir, stat).
 *   lfs-opseq dump [-k] [-r] [-T SEC[.FRAC]] ROOT
 *	one sorted line per object under ROOT, ROOT itself as "."; see
 *	lfs_dump_line() for the fields (POSIX ACLs in text form) and the
 *	link counts it checks against the tree.  -T prints the mtime of
 *	every object but the root older than SEC.FRAC and "mt=new" for the
 *	others;
 *	-r (raw, for comparing a tree with itself later) adds inode
 *	numbers, link counts, sizes, blocks and c/mtimes of every object.
 *	-k (run and dump): see lfs_skip_vanished.
 *   lfs-opseq spec [-o] SEED N...
 *	mktree spec of one stack of N lower layers for each N, under sN/
 *	(see lfs_spec_stack()); -o: whiteouts in overlay's format only.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#define fallthrough	__attribute__((__fallthrough__))

#define LFS_MAX_ARGS	8	/* tokens of a script line but the first */
#define LFS_READ_MAX	(1 << 20)

/*
 * -k: pass over directory entries that lstat() does not find.  Only for
 * validating the suite on overlay, which lists the whiteouts of a
 * directory that only one layer holds; a layerfs run never uses it.
 */
static bool lfs_skip_vanished;

/* ---- small helpers ---- */

static void *lfs_xrealloc(void *p, size_t size)
{
	p = realloc(p, size);
	if (!p) {
		fprintf(stderr, "lfs-opseq: out of memory\n");
		exit(2);
	}
	return p;
}

static char *lfs_xstrdup(const char *s)
{
	return strcpy(lfs_xrealloc(NULL, strlen(s) + 1), s);
}

/* FNV-1a 64: enough to tell contents apart within one test */
#define LFS_HASH_INIT	0xcbf29ce484222325ULL

static uint64_t lfs_hash(const unsigned char *p, size_t n, uint64_t h)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Hash what read(2) returns from fd, at most LFS_READ_MAX bytes. */
static int lfs_hash_fd(int fd, uint64_t *hash, long long *size)
{
	static unsigned char buf[65536];
	ssize_t n;

	*hash = LFS_HASH_INIT;
	*size = 0;
	while (*size < LFS_READ_MAX) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		*hash = lfs_hash(buf, n, *hash);
		*size += n;
	}
	return 0;
}

static char lfs_type_char(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return 'f';
	case S_IFDIR:
		return 'd';
	case S_IFLNK:
		return 'l';
	case S_IFIFO:
		return 'p';
	case S_IFSOCK:
		return 's';
	case S_IFCHR:
		return 'c';
	case S_IFBLK:
		return 'b';
	}
	return '?';
}

static char lfs_dtype_char(unsigned char d_type)
{
	static const char map[16] = {
		[DT_REG] = 'f', [DT_DIR] = 'd', [DT_LNK] = 'l', [DT_FIFO] = 'p',
		[DT_SOCK] = 's', [DT_CHR] = 'c', [DT_BLK] = 'b',
	};

	return d_type < 16 && map[d_type] ? map[d_type] : '?';
}

static int lfs_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Into *buf (the caller frees it, on failure too): the xattr names of
 * path, NUL-separated, when name is NULL, else the value of xattr name.
 * One call with 4 KiB first, which most fit in, then sized, so that any
 * length fits: in the test guest a system call costs about a
 * millisecond.  Returns the length, or -1 with errno set.
 */
static ssize_t lfs_xattr_get(const char *path, const char *name, char **buf)
{
	size_t size = 4096;
	ssize_t len;

	*buf = NULL;
	for (;;) {
		*buf = lfs_xrealloc(*buf, size);
		len = name ? lgetxattr(path, name, *buf, size) :
			     llistxattr(path, *buf, size);
		if (len >= 0 || errno != ERANGE)
			return len;
		len = name ? lgetxattr(path, name, NULL, 0) :
			     llistxattr(path, NULL, 0);
		if (len < 0)
			return len;
		size = len ? len : 1;
	}
}

/*
 * ---- POSIX ACLs ----
 *
 * The value of system.posix_acl_access and system.posix_acl_default, as
 * the kernel reads and writes it (include/uapi/linux/posix_acl_xattr.h),
 * built and parsed here, with no libacl: a little-endian 32-bit version
 * (2), then one 8-byte entry per line of the ACL: 16-bit tag, 16-bit
 * permissions (r 4, w 2, x 1), 32-bit uid or gid (-1 for the entries
 * that name none).  In scripts and facts an ACL is text, the entries
 * comma-separated in stored order, as getfacl -c writes them on one line:
 * "u::rw-,u:1000:r--,g::r--,g:1001:rwx,m::rwx,o::---".
 */
#define LFS_ACL_ACCESS		"system.posix_acl_access"
#define LFS_ACL_DEFAULT		"system.posix_acl_default"
#define LFS_ACL_VERSION		2
#define LFS_ACL_MAX		32	/* entries a script line may give */

static const struct {
	char c;			/* its letter in the text form */
	uint16_t tag;		/* ACL_USER_OBJ ... ACL_OTHER */
	bool named;		/* has an id */
} lfs_acl_tags[] = {
	{ 'u', 0x01, false }, { 'u', 0x02, true }, { 'g', 0x04, false },
	{ 'g', 0x08, true }, { 'm', 0x10, false }, { 'o', 0x20, false },
};

#define LFS_ACL_NTAGS	(sizeof(lfs_acl_tags) / sizeof(*lfs_acl_tags))

static void lfs_put_le(unsigned char *p, uint32_t v, int bytes)
{
	while (bytes--) {
		*p++ = v & 0xff;
		v >>= 8;
	}
}

static uint32_t lfs_get_le(const unsigned char *p, int bytes)
{
	uint32_t v = 0;

	while (bytes--)
		v = v << 8 | p[bytes];
	return v;
}

/*
 * Text to xattr value, the entries in the order given (the kernel checks
 * the order, so a script may give a wrong one): the length, or -1 when
 * the text is not an ACL.
 */
static ssize_t lfs_acl_from_text(const char *text, unsigned char *buf, size_t size)
{
	const char *s = text;
	size_t len = 4;
	unsigned int i, perm;
	uint32_t id;
	char *end;

	if (size < 4)
		return -1;
	lfs_put_le(buf, LFS_ACL_VERSION, 4);
	while (*s) {
		bool named = s[1] == ':' && s[2] != ':';

		for (i = 0; i < LFS_ACL_NTAGS; i++)
			if (lfs_acl_tags[i].c == s[0] && lfs_acl_tags[i].named == named)
				break;
		if (i == LFS_ACL_NTAGS || s[1] != ':' || len + 8 > size)
			return -1;
		s += 2;
		id = (uint32_t)-1;
		if (named) {
			id = strtoul(s, &end, 10);
			s = end;
		}
		if (*s++ != ':' || strlen(s) < 3)
			return -1;
		perm = (s[0] == 'r') << 2 | (s[1] == 'w') << 1 | (s[2] == 'x');
		if ((s[0] != 'r' && s[0] != '-') || (s[1] != 'w' && s[1] != '-') ||
		    (s[2] != 'x' && s[2] != '-') || (s[3] && s[3] != ','))
			return -1;
		lfs_put_le(buf + len, lfs_acl_tags[i].tag, 2);
		lfs_put_le(buf + len + 2, perm, 2);
		lfs_put_le(buf + len + 4, id, 4);
		len += 8;
		s += s[3] ? 4 : 3;
	}
	return len;
}

/*
 * Xattr value to text, into out: 0, or -1 when the value is not one the
 * kernel could have given (then the caller prints it in hex).  An entry
 * out of the kernel's order is printed as it comes, followed by
 * "!order".
 */
static int lfs_acl_print(FILE *out, const unsigned char *val, size_t len)
{
	unsigned int i, k, perm, prev = 0;
	bool sorted = true;
	uint32_t id, prev_id = 0;
	uint16_t tag;

	if (len < 4 || (len - 4) % 8 || lfs_get_le(val, 4) != LFS_ACL_VERSION)
		return -1;
	for (i = 4; i < len; i += 8) {
		tag = lfs_get_le(val + i, 2);
		perm = lfs_get_le(val + i + 2, 2);
		id = lfs_get_le(val + i + 4, 4);
		for (k = 0; k < LFS_ACL_NTAGS; k++)
			if (lfs_acl_tags[k].tag == tag)
				break;
		if (k == LFS_ACL_NTAGS || perm > 7 ||
		    (!lfs_acl_tags[k].named && id != (uint32_t)-1))
			return -1;
	}
	for (i = 4; i < len; i += 8) {
		tag = lfs_get_le(val + i, 2);
		perm = lfs_get_le(val + i + 2, 2);
		id = lfs_get_le(val + i + 4, 4);
		for (k = 0; lfs_acl_tags[k].tag != tag; k++)
			;
		if (tag < prev ||
		    (tag == prev && (!lfs_acl_tags[k].named || id <= prev_id)))
			sorted = false;
		prev = tag;
		prev_id = id;
		fprintf(out, "%s%c:", i > 4 ? "," : "", lfs_acl_tags[k].c);
		if (lfs_acl_tags[k].named)
			fprintf(out, "%u", id);
		fprintf(out, ":%c%c%c", perm & 4 ? 'r' : '-', perm & 2 ? 'w' : '-',
			perm & 1 ? 'x' : '-');
	}
	if (!sorted)
		fprintf(out, "!order");
	return 0;
}

static bool lfs_is_acl_name(const char *name)
{
	return !strcmp(name, LFS_ACL_ACCESS) || !strcmp(name, LFS_ACL_DEFAULT);
}

/* a value as it is when it is plain text, else in hex */
static void lfs_print_value(FILE *out, const char *val, ssize_t vl)
{
	bool text = !(vl >= 2 && val[0] == '0' && val[1] == 'x');
	ssize_t k;

	for (k = 0; k < vl; k++)
		if (val[k] <= ' ' || val[k] > '~' || val[k] == ',')
			text = false;
	if (text)
		fprintf(out, "%.*s", (int)vl, val);
	else
		for (k = 0, fputs("0x", out); k < vl; k++)
			fprintf(out, "%02x", (unsigned char)val[k]);
}

/* an ACL's text form, or "BAD:" and the value in hex */
static void lfs_print_acl_value(FILE *out, const char *val, ssize_t vl)
{
	if (!lfs_acl_print(out, (const unsigned char *)val, vl))
		return;
	fputs("BAD:", out);
	lfs_print_value(out, val, vl);
}

/*
 * " acl=TEXT dacl=TEXT" for the ACLs path has (listxattr names them),
 * "!ERRNAME" for one that cannot be read.
 */
static void lfs_fact_acls(FILE *out, const char *path)
{
	static const char *const acls[] = { LFS_ACL_ACCESS, LFS_ACL_DEFAULT };
	static const char *const what[] = { "acl", "dacl" };
	char *names, *val;
	ssize_t len = lfs_xattr_get(path, NULL, &names), i, vl;
	int j;

	if (len < 0)
		fprintf(out, " xattrs!%s", strerrorname_np(errno));
	for (j = 0; j < 2; j++) {
		for (i = 0; i < len; i += strlen(names + i) + 1)
			if (!strcmp(names + i, acls[j]))
				break;
		if (i >= len)
			continue;
		vl = lfs_xattr_get(path, acls[j], &val);
		if (vl < 0) {
			fprintf(out, " %s!%s", what[j], strerrorname_np(errno));
		} else {
			fprintf(out, " %s=", what[j]);
			lfs_print_acl_value(out, val, vl);
		}
		free(val);
	}
	free(names);
}

/* the mode, owner and ACLs of path: what a new object was given */
static void lfs_fact_new(FILE *out, const char *path)
{
	struct stat st;

	if (lstat(path, &st)) {
		fprintf(out, " new!%s", strerrorname_np(errno));
		return;
	}
	fprintf(out, " new=%04o,%u:%u", st.st_mode & 07777, st.st_uid, st.st_gid);
	if (!S_ISLNK(st.st_mode))
		lfs_fact_acls(out, path);
}

/*
 * Print every xattr of path (user, trusted, security, system: POSIX
 * ACLs), sorted, as " x:NAME=VALUE" with the whole value (in hex when it
 * is not plain text).  trusted.overlay.* is printed too: through a mount
 * it must never show, in a raw layer it is part of what must not change.
 * POSIX ACLs are printed in their text form (lfs_acl_print()).  Left out:
 * the names under which a filesystem keeps the ACLs themselves and shows
 * them to root (XFS: trusted.SGI_ACL_FILE and _DEFAULT), which a plain
 * copy elsewhere does not have; the ACLs are printed as system.* anyway.
 */
static bool lfs_is_fs_acl_store(const char *name)
{
	return !strcmp(name, "trusted.SGI_ACL_FILE") ||
	       !strcmp(name, "trusted.SGI_ACL_DEFAULT");
}

static void lfs_print_xattrs(FILE *out, const char *path, const char *sep)
{
	char *names, *val, **list;
	ssize_t len, i, vl;
	size_t n = 0, j;

	len = lfs_xattr_get(path, NULL, &names);
	if (len < 0) {
		fprintf(out, "%sxattrs=%s", sep, strerrorname_np(errno));
		free(names);
		return;
	}
	list = lfs_xrealloc(NULL, (len + 1) * sizeof(*list));
	for (i = 0; i < len; i += strlen(names + i) + 1)
		if (!lfs_is_fs_acl_store(names + i))
			list[n++] = names + i;
	qsort(list, n, sizeof(*list), lfs_cmp_str);
	for (j = 0; j < n; j++) {
		vl = lfs_xattr_get(path, list[j], &val);
		if (vl < 0)
			fprintf(out, "%sx:%s!%s", sep, list[j], strerrorname_np(errno));
		else
			fprintf(out, "%sx:%s=", sep, list[j]);
		if (vl >= 0 && lfs_is_acl_name(list[j]))
			lfs_print_acl_value(out, val, vl);
		else if (vl >= 0)
			lfs_print_value(out, val, vl);
		free(val);
	}
	free(list);
	free(names);
}

/* ---- tree walk, shared by dump and gen @DIR ---- */

struct lfs_obj {
	char *path;		/* relative to the root, "." for the root */
	struct stat st;		/* lstat() of it */
	const char *group;	/* first path of its hard-link group, or NULL */
	size_t names;		/* non-directory: paths of the tree with its inode */
	size_t subdirs;		/* directory: the directories listed in it */
};

struct lfs_tree {
	struct lfs_obj *obj;
	size_t n, cap;
	int errors;		/* objects that could not be read */
};

/* Add the objects under rel; returns the number of directories in rel. */
static size_t lfs_tree_walk(struct lfs_tree *t, int rootfd, const char *rel)
{
	struct dirent *de;
	size_t subdirs = 0, i;
	DIR *dh;
	int fd;

	fd = openat(rootfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	dh = fd < 0 ? NULL : fdopendir(fd);
	if (!dh) {
		fprintf(stderr, "lfs-opseq: opendir %s: %s\n", rel, strerror(errno));
		t->errors++;
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(dh))) {
		struct lfs_obj *o;
		char *path;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(rel, "."))
			path = lfs_xstrdup(de->d_name);
		else if (asprintf(&path, "%s/%s", rel, de->d_name) < 0)
			exit(2);
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 256;
			t->obj = lfs_xrealloc(t->obj, t->cap * sizeof(*t->obj));
		}
		o = &t->obj[t->n];
		o->path = path;
		o->group = NULL;
		o->names = 1;
		o->subdirs = 0;
		if (fstatat(rootfd, path, &o->st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT && lfs_skip_vanished) {
				free(path);
				continue;
			}
			fprintf(stderr, "lfs-opseq: lstat %s: %s\n", path, strerror(errno));
			t->errors++;
			free(path);
			continue;
		}
		i = t->n++;
		if (!S_ISDIR(o->st.st_mode))
			continue;
		subdirs++;
		/* t->obj moves as it grows: by index after the call */
		t->obj[i].subdirs = lfs_tree_walk(t, rootfd, path);
	}
	closedir(dh);
	return subdirs;
}

static int lfs_cmp_obj_path(const void *a, const void *b)
{
	return strcmp(((const struct lfs_obj *)a)->path,
		      ((const struct lfs_obj *)b)->path);
}

/* order by inode, then by path (the array is already sorted by path) */
static int lfs_cmp_obj_ino(const void *a, const void *b)
{
	const struct lfs_obj *x = *(const struct lfs_obj *const *)a;
	const struct lfs_obj *y = *(const struct lfs_obj *const *)b;

	if (x->st.st_dev != y->st.st_dev)
		return x->st.st_dev < y->st.st_dev ? -1 : 1;
	if (x->st.st_ino != y->st.st_ino)
		return x->st.st_ino < y->st.st_ino ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Load the tree under root: the root as ".", then every object, sorted by
 * path.  Non-directories that share an inode get as group the first of
 * their paths, which is what the dump prints instead of inode numbers.
 */
static int lfs_tree_load(struct lfs_tree *t, const char *root, int *rootfd)
{
	struct lfs_obj **by_ino;
	size_t i, j, k;

	memset(t, 0, sizeof(*t));
	*rootfd = open(root, O_RDONLY | O_DIRECTORY);
	if (*rootfd < 0) {
		fprintf(stderr, "lfs-opseq: %s: %s\n", root, strerror(errno));
		return -1;
	}
	t->cap = 256;
	t->obj = lfs_xrealloc(NULL, t->cap * sizeof(*t->obj));
	t->obj[0].path = lfs_xstrdup(".");
	t->obj[0].group = NULL;
	t->obj[0].names = 1;
	if (fstat(*rootfd, &t->obj[0].st)) {
		fprintf(stderr, "lfs-opseq: %s: %s\n", root, strerror(errno));
		return -1;
	}
	t->n = 1;
	t->obj[0].subdirs = lfs_tree_walk(t, *rootfd, ".");
	qsort(t->obj + 1, t->n - 1, sizeof(*t->obj), lfs_cmp_obj_path);

	by_ino = lfs_xrealloc(NULL, t->n * sizeof(*by_ino));
	for (i = 0; i < t->n; i++)
		by_ino[i] = &t->obj[i];
	qsort(by_ino, t->n, sizeof(*by_ino), lfs_cmp_obj_ino);
	for (i = 0; i < t->n; i = j) {
		for (j = i + 1; j < t->n; j++)
			if (by_ino[j]->st.st_dev != by_ino[i]->st.st_dev ||
			    by_ino[j]->st.st_ino != by_ino[i]->st.st_ino)
				break;
		if (j - i < 2 || S_ISDIR(by_ino[i]->st.st_mode))
			continue;
		for (k = i; k < j; k++) {
			by_ino[k]->group = by_ino[i]->path;
			by_ino[k]->names = j - i;
		}
	}
	free(by_ino);
	return 0;
}

/* ---- dump ---- */

struct lfs_dump_opts {
	bool raw;		/* -r: inode numbers, link counts, times of all */
	bool have_t;		/* -T given */
	struct timespec t;	/* -T: mtimes older than this are printed */
};

/*
 * One line per object: PATH TYPE MODE UID:GID, then by type "size=N
 * h=HASH" (regular), "-> TARGET" (symlink), "rdev=MAJ:MIN" (devices);
 * for non-directories the link count "nl=N" and "hl=FIRST" when other
 * paths of the tree share the inode; "mt=..." under -T; every xattr
 * (lfs_print_xattrs()).
 *
 * Link counts are checked against the tree too, except in raw dumps (-r):
 * a tree dumped is a whole mount, or a whole copy, so every name of a
 * non-directory is in it, and its st_nlink must be the number of its
 * paths; else "NLINK!=NAMES:K" follows "nl=N" (K the paths found).  A
 * directory's st_nlink is not printed: overlay and layerfs report 1 for
 * a merged directory (its subdirectories are spread over layers), btrfs
 * for every directory, where tmpfs, ext4 and xfs count 2 and one per
 * subdirectory.  Those are the two values a correct filesystem gives, so
 * any other is printed, "DIR-NLINK!=2+SUBDIRS:N/K".
 *
 * -T prints the mtime of every object but the root older than the cut
 * time (what the layer builder, cp -a, or a utimes step to a fixed time
 * set: the same in both trees, and kept by copy-up, which must not change
 * the mtime of what it copies up, a directory included) and "mt=new" for
 * the others: an object written, or a directory whose entries changed
 * during the run, has a time of day, which differs between the two runs.
 * The root of a writable mount is the upper directory itself, whose times
 * are those of its mkdir, not of any layer: left out.
 *
 * Left out on purpose: atime and ctime (reading and copy-up touch them
 * differently on different filesystems), and directory sizes (filesystem
 * specific).
 */
static void lfs_dump_line(FILE *out, int rootfd, const struct lfs_obj *o,
			  const struct lfs_dump_opts *opt)
{
	const struct stat *st = &o->st;
	char buf[4096];
	uint64_t h;
	long long size;
	ssize_t n;
	int fd;

	fprintf(out, "%s %c %04o %u:%u", o->path, lfs_type_char(st->st_mode),
		st->st_mode & 07777, st->st_uid, st->st_gid);
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		fd = openat(rootfd, o->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
		if (fd < 0 || lfs_hash_fd(fd, &h, &size))
			fprintf(out, " size=%lld read=%s", (long long)st->st_size,
				strerrorname_np(errno));
		else
			fprintf(out, " size=%lld h=%016llx%s", (long long)st->st_size,
				(unsigned long long)h,
				size != st->st_size ? " READ-SIZE-DIFFERS" : "");
		if (fd >= 0)
			close(fd);
		break;
	case S_IFLNK:
		n = readlinkat(rootfd, o->path, buf, sizeof(buf) - 1);
		buf[n < 0 ? 0 : n] = '\0';
		fprintf(out, " -> %s", n < 0 ? strerrorname_np(errno) : buf);
		break;
	case S_IFCHR:
	case S_IFBLK:
		fprintf(out, " rdev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
		break;
	}
	if (!S_ISDIR(st->st_mode))
		fprintf(out, " nl=%lu", (unsigned long)st->st_nlink);
	if (!S_ISDIR(st->st_mode) && !opt->raw && st->st_nlink != o->names)
		fprintf(out, " NLINK!=NAMES:%zu", o->names);
	if (S_ISDIR(st->st_mode) && !opt->raw && st->st_nlink != 1 &&
	    st->st_nlink != 2 + o->subdirs)
		fprintf(out, " DIR-NLINK!=2+SUBDIRS:%lu/%zu",
			(unsigned long)st->st_nlink, o->subdirs);
	if (o->group)
		fprintf(out, " hl=%s", o->group);
	if (opt->have_t && strcmp(o->path, ".")) {
		if (st->st_mtim.tv_sec < opt->t.tv_sec ||
		    (st->st_mtim.tv_sec == opt->t.tv_sec &&
		     st->st_mtim.tv_nsec < opt->t.tv_nsec))
			fprintf(out, " mt=%lld.%09ld", (long long)st->st_mtim.tv_sec,
				st->st_mtim.tv_nsec);
		else
			fprintf(out, " mt=new");
	}
	if (opt->raw && S_ISDIR(st->st_mode))
		fprintf(out, " nl=%lu size=%lld", (unsigned long)st->st_nlink,
			(long long)st->st_size);
	if (opt->raw)
		fprintf(out, " ino=%llu bl=%lld mt=%lld.%09ld ct=%lld.%09ld",
			(unsigned long long)st->st_ino, (long long)st->st_blocks,
			(long long)st->st_mtim.tv_sec,
			st->st_mtim.tv_nsec, (long long)st->st_ctim.tv_sec,
			st->st_ctim.tv_nsec);
	/* the *xattr calls take paths: the caller made root the cwd */
	lfs_print_xattrs(out, o->path, " ");
	fputc('\n', out);
}

static int lfs_parse_time(const char *s, struct timespec *t)
{
	char *end;
	long ns = 0;
	int digits = 0;

	t->tv_sec = strtoll(s, &end, 10);
	if (end == s)
		return -1;
	if (*end == '.' || *end == ',')
		for (end++; *end >= '0' && *end <= '9'; end++, digits++)
			if (digits < 9)
				ns = ns * 10 + (*end - '0');
	if (*end)
		return -1;
	for (; digits < 9; digits++)
		ns *= 10;
	t->tv_nsec = ns;
	return 0;
}

/* Dump the tree under root to out; root becomes the working directory. */
static int lfs_dump_tree(FILE *out, const char *root, const struct lfs_dump_opts *opt)
{
	struct lfs_tree t;
	int rootfd;
	size_t i;

	if (lfs_tree_load(&t, root, &rootfd))
		return -1;
	if (fchdir(rootfd)) {
		perror("lfs-opseq: dump: fchdir");
		return -1;
	}
	for (i = 0; i < t.n; i++)
		lfs_dump_line(out, rootfd, &t.obj[i], opt);
	return t.errors ? -1 : 0;
}

/* the options of dump and run: -k, -r, -T; 0 or -1 */
static int lfs_dump_option(int c, struct lfs_dump_opts *opt)
{
	switch (c) {
	case 'k':
		lfs_skip_vanished = true;
		return 0;
	case 'r':
		opt->raw = true;
		return 0;
	case 'T':
		opt->have_t = true;
		if (!lfs_parse_time(optarg, &opt->t))
			return 0;
		fprintf(stderr, "lfs-opseq: -T %s: not SEC[.FRAC]\n", optarg);
		return -1;
	}
	return -1;
}

static int lfs_cmd_dump(int argc, char **argv)
{
	struct lfs_dump_opts opt = { 0 };
	int c;

	while ((c = getopt(argc, argv, "krT:")) != -1)
		if (lfs_dump_option(c, &opt))
			return 2;
	if (argc - optind != 1) {
		fprintf(stderr, "usage: lfs-opseq dump [-k] [-r] [-T SEC.FRAC] ROOT\n");
		return 2;
	}
	return lfs_dump_tree(stdout, argv[optind], &opt) ? 1 : 0;
}

/*
 * ---- operations ----
 *
 * Each takes the arguments of its script line, returns 0 or -errno,
 * names in *call the call that failed when it makes several, and prints
 * what it found (" size=N", listings) to out.
 */

enum lfs_opcode {
	LFS_OP_CREATE, LFS_OP_OTRUNC, LFS_OP_WRITE, LFS_OP_APPEND,
	LFS_OP_TRUNCATE, LFS_OP_MKDIR, LFS_OP_FIFO, LFS_OP_SOCK, LFS_OP_CHR,
	LFS_OP_BLK, LFS_OP_SYMLINK, LFS_OP_LINK, LFS_OP_UNLINK, LFS_OP_RMDIR,
	LFS_OP_RENAME, LFS_OP_NOREPLACE, LFS_OP_EXCHANGE, LFS_OP_TMPFILE,
	LFS_OP_CHMOD, LFS_OP_CHOWN, LFS_OP_LCHOWN, LFS_OP_UTIMES,
	LFS_OP_SETXATTR, LFS_OP_RMXATTR, LFS_OP_XATTRS, LFS_OP_READ,
	LFS_OP_READDIR, LFS_OP_STAT, LFS_OP_RMTREE, LFS_OP_SETACL,
	LFS_OP_RMACL, LFS_OP_FSETFL, LFS_OP_HELDFD, LFS_OP_COUNT
};

/* /proc/self/fd, opened before the chroot, for linking O_TMPFILE files */
static int lfs_procfd = -1;

static mode_t lfs_mode_arg(const char *s)
{
	return (mode_t)strtoul(s, NULL, 8);
}

/* LEN bytes of content that depend on TAG only */
static unsigned char *lfs_content(const char *len_arg, const char *tag_arg,
				  size_t *len)
{
	static unsigned char buf[8192];
	uint64_t x = strtoull(tag_arg, NULL, 10);
	size_t i;

	*len = strtoul(len_arg, NULL, 10);
	if (*len > sizeof(buf))
		*len = sizeof(buf);
	for (i = 0; i < *len; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		buf[i] = (unsigned char)(x >> 56);
	}
	return buf;
}

static void lfs_fact_size(FILE *out, int fd)
{
	struct stat st;

	if (!fstat(fd, &st))
		fprintf(out, " size=%lld", (long long)st.st_size);
}

/* open a[0] for writing with extra flags, write unless data is NULL */
static int lfs_write_common(const char *path, int flags, const void *data,
			    size_t len, off_t off, FILE *out, const char **call)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_WRONLY | O_NOCTTY | O_NONBLOCK | flags);
	if (fd < 0) {
		*call = "open";
		return -errno;
	}
	if (data) {
		n = flags & O_APPEND ? write(fd, data, len) : pwrite(fd, data, len, off);
		if (n < 0) {
			err = -errno;
			*call = "write";
		} else if ((size_t)n != len) {
			fprintf(out, " short=%zd", n);
		}
	}
	if (!err)
		lfs_fact_size(out, fd);
	close(fd);
	return err;
}

static int lfs_op_create(char **a, FILE *out, const char **call)
{
	int fd = open(a[0], O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_NONBLOCK,
		      lfs_mode_arg(a[1]));

	(void)call;
	if (fd < 0)
		return -errno;
	close(fd);
	lfs_fact_new(out, a[0]);
	return 0;
}

static int lfs_op_otrunc(char **a, FILE *out, const char **call)
{
	return lfs_write_common(a[0], O_TRUNC, NULL, 0, 0, out, call);
}

static int lfs_op_write(char **a, FILE *out, const char **call)
{
	size_t len;
	const void *data = lfs_content(a[2], a[3], &len);

	return lfs_write_common(a[0], 0, data, len, strtoll(a[1], NULL, 10),
				out, call);
}

static int lfs_op_append(char **a, FILE *out, const char **call)
{
	size_t len;
	const void *data = lfs_content(a[1], a[2], &len);

	return lfs_write_common(a[0], O_APPEND, data, len, 0, out, call);
}

static int lfs_op_truncate(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return truncate(a[0], strtoll(a[1], NULL, 10)) ? -errno : 0;
}

/* a new object: its facts are what it was given (lfs_fact_new()) */
static int lfs_made(int ret, const char *path, FILE *out)
{
	if (ret)
		return -errno;
	lfs_fact_new(out, path);
	return 0;
}

static int lfs_op_mkdir(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_made(mkdir(a[0], lfs_mode_arg(a[1])), a[0], out);
}

static int lfs_op_fifo(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_made(mknod(a[0], S_IFIFO | lfs_mode_arg(a[1]), 0), a[0], out);
}

static int lfs_op_sock(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_made(mknod(a[0], S_IFSOCK | lfs_mode_arg(a[1]), 0), a[0], out);
}

static int lfs_mknod_dev(char **a, mode_t type, FILE *out)
{
	dev_t dev = makedev(strtoul(a[1], NULL, 10), strtoul(a[2], NULL, 10));

	return lfs_made(mknod(a[0], type | 0640, dev), a[0], out);
}

static int lfs_op_chr(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_mknod_dev(a, S_IFCHR, out);
}

static int lfs_op_blk(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_mknod_dev(a, S_IFBLK, out);
}

static int lfs_op_symlink(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_made(symlink(a[0], a[1]), a[1], out);
}

static const char *lfs_same_ino(const struct stat *x, const struct stat *y)
{
	return x->st_ino == y->st_ino && x->st_dev == y->st_dev ? "OK" : "CHANGED";
}

/* a new name of an object is that object: same inode, one link more */
static int lfs_op_link(char **a, FILE *out, const char **call)
{
	struct stat before, old, new;
	bool have = !lstat(a[0], &before);

	(void)call;
	if (link(a[0], a[1]))
		return -errno;
	if (!have || lstat(a[0], &old) || lstat(a[1], &new)) {
		fprintf(out, " ino=GONE");
		return 0;
	}
	fprintf(out, " ino=%s,%s nl=%lu", lfs_same_ino(&before, &new),
		lfs_same_ino(&before, &old), (unsigned long)new.st_nlink);
	return 0;
}

static int lfs_op_unlink(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return unlink(a[0]) ? -errno : 0;
}

static int lfs_op_rmdir(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return rmdir(a[0]) ? -errno : 0;
}

/* a renamed object keeps its inode; so do both sides of an exchange */
static int lfs_rename_common(char **a, unsigned int flags, FILE *out)
{
	struct stat src, dst, after;
	bool have_src = !lstat(a[0], &src), have_dst = !lstat(a[1], &dst);

	if (renameat2(AT_FDCWD, a[0], AT_FDCWD, a[1], flags))
		return -errno;
	if (!have_src || lstat(a[1], &after)) {
		fprintf(out, " ino=GONE");
		return 0;
	}
	fprintf(out, " ino=%s", lfs_same_ino(&src, &after));
	if (flags & RENAME_EXCHANGE) {
		if (!have_dst || lstat(a[0], &after))
			fprintf(out, ",GONE");
		else
			fprintf(out, ",%s", lfs_same_ino(&dst, &after));
	}
	return 0;
}

static int lfs_op_rename(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_rename_common(a, 0, out);
}

static int lfs_op_noreplace(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_rename_common(a, RENAME_NOREPLACE, out);
}

static int lfs_op_exchange(char **a, FILE *out, const char **call)
{
	(void)call;
	return lfs_rename_common(a, RENAME_EXCHANGE, out);
}

/*
 * tmpfile DIR NEW LEN TAG: an unnamed file in DIR, written, then given
 * the name NEW through /proc/self/fd (linkat(2) AT_SYMLINK_FOLLOW, the
 * way open(2) documents).  The name must lead to the same inode.
 */
static int lfs_op_tmpfile(char **a, FILE *out, const char **call)
{
	struct stat st, named;
	char fdname[16];
	const void *data;
	size_t len;
	ssize_t n;
	int fd, err = 0;

	fd = open(a[0], O_TMPFILE | O_RDWR, 0640);
	if (fd < 0) {
		*call = "open";
		return -errno;
	}
	data = lfs_content(a[2], a[3], &len);
	n = write(fd, data, len);
	if (n < 0) {
		*call = "write";
		err = -errno;
		goto out;
	}
	snprintf(fdname, sizeof(fdname), "%d", fd);
	if (linkat(lfs_procfd, fdname, AT_FDCWD, a[1], AT_SYMLINK_FOLLOW)) {
		*call = "link";
		err = -errno;
		goto out;
	}
	if (fstat(fd, &st) || lstat(a[1], &named))
		fprintf(out, " ino=GONE");
	else
		fprintf(out, " ino=%s nl=%lu size=%lld", lfs_same_ino(&st, &named),
			(unsigned long)named.st_nlink, (long long)named.st_size);
	lfs_fact_new(out, a[1]);
out:
	close(fd);
	return err;
}

static int lfs_op_chmod(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return chmod(a[0], lfs_mode_arg(a[1])) ? -errno : 0;
}

static int lfs_op_chown(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return chown(a[0], atoi(a[1]), atoi(a[2])) ? -errno : 0;
}

static int lfs_op_lchown(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return lchown(a[0], atoi(a[1]), atoi(a[2])) ? -errno : 0;
}

/* utimes PATH ATIME MTIME (SEC.NSEC, fixed by the script) */
static int lfs_op_utimes(char **a, FILE *out, const char **call)
{
	struct timespec ts[2];
	struct stat st;

	(void)call;
	if (lfs_parse_time(a[1], &ts[0]) || lfs_parse_time(a[2], &ts[1]))
		return -EINVAL;
	if (utimensat(AT_FDCWD, a[0], ts, 0))
		return -errno;
	if (!stat(a[0], &st))
		fprintf(out, " mt=%lld.%09ld", (long long)st.st_mtim.tv_sec,
			st.st_mtim.tv_nsec);
	return 0;
}

/* setxattr PATH NAME VALUE 0|create|replace (on the path, not behind it) */
static int lfs_op_setxattr(char **a, FILE *out, const char **call)
{
	int flags = !strcmp(a[3], "create") ? XATTR_CREATE :
		    !strcmp(a[3], "replace") ? XATTR_REPLACE : 0;

	(void)out;
	(void)call;
	return lsetxattr(a[0], a[1], a[2], strlen(a[2]), flags) ? -errno : 0;
}

static int lfs_op_rmxattr(char **a, FILE *out, const char **call)
{
	(void)out;
	(void)call;
	return lremovexattr(a[0], a[1]) ? -errno : 0;
}

static int lfs_op_xattrs(char **a, FILE *out, const char **call)
{
	(void)call;
	if (llistxattr(a[0], NULL, 0) < 0)
		return -errno;
	lfs_print_xattrs(out, a[0], " ");
	return 0;
}

static int lfs_op_read(char **a, FILE *out, const char **call)
{
	long long size;
	uint64_t h;
	int fd, err = 0;

	fd = open(a[0], O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*call = "open";
		return -errno;
	}
	if (lfs_hash_fd(fd, &h, &size)) {
		*call = "read";
		err = -errno;
	} else {
		fprintf(out, " size=%lld h=%016llx", size, (unsigned long long)h);
	}
	close(fd);
	return err;
}

static int lfs_op_readdir(char **a, FILE *out, const char **call)
{
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	DIR *dh;

	(void)call;
	dh = opendir(a[0]);
	if (!dh)
		return -errno;
	while ((de = readdir(dh))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (lfs_skip_vanished &&
		    fstatat(dirfd(dh), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    errno == ENOENT)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = lfs_xrealloc(names, cap * sizeof(*names));
		}
		if (asprintf(&names[n++], "%s:%c", de->d_name,
			     lfs_dtype_char(de->d_type)) < 0)
			exit(2);
	}
	closedir(dh);
	qsort(names, n, sizeof(*names), lfs_cmp_str);
	fprintf(out, " [");
	for (i = 0; i < n; i++) {
		fprintf(out, "%s%s", i ? " " : "", names[i]);
		free(names[i]);
	}
	fprintf(out, "]");
	free(names);
	return 0;
}

static int lfs_op_stat(char **a, FILE *out, const char **call)
{
	struct stat st;
	char target[4096];
	ssize_t n;

	(void)call;
	if (lstat(a[0], &st))
		return -errno;
	fprintf(out, " %c %04o %u:%u", lfs_type_char(st.st_mode),
		st.st_mode & 07777, st.st_uid, st.st_gid);
	if (S_ISDIR(st.st_mode))
		return 0;
	fprintf(out, " size=%lld nl=%lu", (long long)st.st_size,
		(unsigned long)st.st_nlink);
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		fprintf(out, " rdev=%u:%u", major(st.st_rdev), minor(st.st_rdev));
	if (S_ISLNK(st.st_mode)) {
		n = readlink(a[0], target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		fprintf(out, " -> %s", n < 0 ? strerrorname_np(errno) : target);
	}
	return 0;
}

/*
 * Remove what is under dir, depth first, in name order: returns 0 or the
 * first -errno, counts what was removed.
 */
static int lfs_rmtree_under(const char *dir, unsigned long *removed)
{
	char **names = NULL, *path;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	struct stat st;
	int err = 0;
	DIR *dh;

	dh = opendir(dir);
	if (!dh)
		return -errno;
	while ((de = readdir(dh))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = lfs_xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = lfs_xstrdup(de->d_name);
	}
	closedir(dh);
	qsort(names, n, sizeof(*names), lfs_cmp_str);
	for (i = 0; i < n; i++) {
		if (!err) {
			if (asprintf(&path, "%s/%s", dir, names[i]) < 0)
				exit(2);
			if (lstat(path, &st)) {
				/* under -k, a whiteout that overlay listed */
				if (errno != ENOENT || !lfs_skip_vanished)
					err = -errno;
			} else {
				if (S_ISDIR(st.st_mode))
					err = lfs_rmtree_under(path, removed) ?:
					      (rmdir(path) ? -errno : 0);
				else
					err = unlink(path) ? -errno : 0;
				if (!err)
					(*removed)++;
			}
			free(path);
		}
		free(names[i]);
	}
	free(names);
	return err;
}

/*
 * rmtree DIR: empty DIR with unlink and rmdir, then remove it.  Over
 * lower layers this whites out every entry, then removes directories
 * that hold nothing but whiteouts.
 */
static int lfs_op_rmtree(char **a, FILE *out, const char **call)
{
	unsigned long removed = 0;
	struct stat st;
	int err;

	if (lstat(a[0], &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	err = lfs_rmtree_under(a[0], &removed);
	fprintf(out, " removed=%lu", removed);
	if (err) {
		*call = "under";
		return err;
	}
	return rmdir(a[0]) ? -errno : 0;
}

/*
 * setacl PATH access|default TEXT: set the ACL (on the path, not behind
 * it; lfs_acl_from_text(), the entries in the order given, so that the
 * kernel's checks answer a wrong one), then read back the mode and both
 * ACLs.
 */
static int lfs_op_setacl(char **a, FILE *out, const char **call)
{
	unsigned char buf[4 + 8 * LFS_ACL_MAX];
	const char *name = !strcmp(a[1], "default") ? LFS_ACL_DEFAULT : LFS_ACL_ACCESS;
	ssize_t len = lfs_acl_from_text(a[2], buf, sizeof(buf));
	struct stat st;

	if (len < 0)
		return -EINVAL;
	if (lsetxattr(a[0], name, buf, len, 0)) {
		*call = "set";
		return -errno;
	}
	if (!lstat(a[0], &st))
		fprintf(out, " m=%04o", st.st_mode & 07777);
	lfs_fact_acls(out, a[0]);
	return 0;
}

/*
 * rmacl PATH access|default: remove the ACL; the facts are the ACL it had
 * ("had=none" when it had none) and the mode and ACLs after.  Removing
 * an ACL an object does not have succeeds on ext4 and tmpfs, but the
 * kernel's overlay and layerfs answer ENODATA when the object is only in
 * a lower layer (docs/security.md): that answer, there, counts as
 * success, so that both sides log the same.
 */
static int lfs_op_rmacl(char **a, FILE *out, const char **call)
{
	const char *name = !strcmp(a[1], "default") ? LFS_ACL_DEFAULT : LFS_ACL_ACCESS;
	char *val;
	ssize_t len = lfs_xattr_get(a[0], name, &val);
	bool had = len >= 0;
	struct stat st;

	if (had) {
		fprintf(out, " had=");
		lfs_print_acl_value(out, val, len);
	} else {
		fprintf(out, " had%s%s", errno == ENODATA ? "=" : "!",
			errno == ENODATA ? "none" : strerrorname_np(errno));
	}
	free(val);
	if (lremovexattr(a[0], name) && (had || errno != ENODATA)) {
		*call = "remove";
		return -errno;
	}
	if (!lstat(a[0], &st))
		fprintf(out, " m=%04o", st.st_mode & 07777);
	lfs_fact_acls(out, a[0]);
	return 0;
}

/* write(2) data through fd from offset off, then print " pos=N" */
static int lfs_write_at(int fd, off_t off, const void *data, size_t len,
			FILE *out, const char **call)
{
	ssize_t n;

	*call = "seek";
	if (lseek(fd, off, SEEK_SET) < 0)
		return -errno;
	*call = "write";
	n = write(fd, data, len);
	if (n < 0)
		return -errno;
	fprintf(out, " pos=%lld", (long long)lseek(fd, 0, SEEK_CUR));
	if ((size_t)n != len)
		fprintf(out, " short=%zd", n);
	return 0;
}

/*
 * Set fd's file status flags to FL, say whether O_APPEND is on, and write
 * LEN bytes of content TAG "from offset 0".
 */
static int lfs_setfl_write(int fd, int fl, size_t len, unsigned long long tag,
			   FILE *out, const char **call)
{
	const void *data;
	char t[24], l[24];

	*call = "setfl";
	if (fcntl(fd, F_SETFL, fl))
		return -errno;
	fprintf(out, " append=%d", !!(fcntl(fd, F_GETFL) & O_APPEND));
	snprintf(l, sizeof(l), "%zu", len);
	snprintf(t, sizeof(t), "%llu", tag);
	data = lfs_content(l, t, &len);
	return lfs_write_at(fd, 0, data, len, out, call);
}

/*
 * fsetfl PATH OFF LEN TAG: open for writing; at OFF, write; turn
 * O_APPEND on with fcntl(F_SETFL) and write from offset 0, which must go
 * to the end; turn it off and write from offset 0, which must go there.
 * The facts are the offsets after each write, what F_GETFL said, the
 * size and the content (read back through another open, when the
 * caller may).
 */
static int lfs_op_fsetfl(char **a, FILE *out, const char **call)
{
	unsigned long long tag = strtoull(a[3], NULL, 10);
	const void *data;
	long long size;
	uint64_t h;
	size_t len;
	int fd, fl, err;

	fd = open(a[0], O_WRONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*call = "open";
		return -errno;
	}
	data = lfs_content(a[2], a[3], &len);
	err = lfs_write_at(fd, strtoll(a[1], NULL, 10), data, len, out, call);
	if (err)
		goto out;
	*call = "setfl";
	fl = fcntl(fd, F_GETFL);
	if (fl < 0) {
		err = -errno;
		goto out;
	}
	len = len / 2 + 1;
	err = lfs_setfl_write(fd, fl | O_APPEND, len, tag + 1, out, call);
	if (err)
		goto out;
	err = lfs_setfl_write(fd, fl & ~O_APPEND, len / 3 + 1, tag + 2, out, call);
	if (err)
		goto out;
	*call = NULL;
	lfs_fact_size(out, fd);
	close(fd);
	fd = open(a[0], O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || lfs_hash_fd(fd, &h, &size))
		fprintf(out, " h!%s", strerrorname_np(errno));
	else
		fprintf(out, " h=%016llx", (unsigned long long)h);
out:
	if (fd >= 0)
		close(fd);
	return err;
}

/* " WHAT=SIZE,HASH" of what read(2) gives from fd, at most LFS_READ_MAX */
static int lfs_fact_read(FILE *out, int fd, const char *what)
{
	long long size;
	uint64_t h;

	if (lfs_hash_fd(fd, &h, &size))
		return -errno;
	fprintf(out, " %s=%lld,%016llx", what, size, (unsigned long long)h);
	return 0;
}

/*
 * heldfd PATH LEN TAG: a file opened for reading (and, when it is a
 * regular file and not empty, mapped shared and read-only) before it is
 * written through a second open: LEN bytes of TAG at offset 0, which
 * copies up a lower file.  The first fd must then read the new data, as
 * on a plain filesystem: the facts are its first read (up to 64 bytes,
 * before), what it reads from there on and from offset 0 (after), its
 * fstat size.  The mapping's content counts only before the write: one
 * made on a lower file keeps showing the lower file after a copy-up, on
 * overlay as on layerfs (overlayfs.rst, "Non-standard behavior"); after,
 * it is only read through, for the debug kernel to watch.
 */
static int lfs_op_heldfd(char **a, FILE *out, const char **call)
{
	static unsigned char head[64];
	volatile unsigned char sink = 0;
	unsigned char *map = MAP_FAILED;
	const void *data;
	struct stat st;
	size_t len, mlen = 0, i;
	ssize_t n;
	int fd, fd2 = -1, err = 0;

	fd = open(a[0], O_RDONLY | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		*call = "open";
		return -errno;
	}
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0) {
		mlen = st.st_size < LFS_READ_MAX ? st.st_size : LFS_READ_MAX;
		map = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			*call = "mmap";
			err = -errno;
			goto out;
		}
		fprintf(out, " map=%016llx",
			(unsigned long long)lfs_hash(map, mlen, LFS_HASH_INIT));
	}
	n = read(fd, head, sizeof(head));
	if (n < 0) {
		*call = "read";
		err = -errno;
		goto out;
	}
	fprintf(out, " head=%zd,%016llx", n,
		(unsigned long long)lfs_hash(head, n, LFS_HASH_INIT));

	fd2 = open(a[0], O_WRONLY | O_NOCTTY | O_NONBLOCK);
	if (fd2 < 0) {
		*call = "open2";
		err = -errno;
		goto out;
	}
	data = lfs_content(a[1], a[2], &len);
	n = pwrite(fd2, data, len, 0);
	if (n < 0) {
		*call = "write";
		err = -errno;
		goto out;
	}
	fprintf(out, " wrote=%zd", n);

	*call = "read";
	err = lfs_fact_read(out, fd, "rest");
	if (err)
		goto out;
	if (lseek(fd, 0, SEEK_SET) < 0) {
		/* a fifo: no offsets */
		fprintf(out, " seek!%s", strerrorname_np(errno));
	} else {
		err = lfs_fact_read(out, fd, "all");
		if (err)
			goto out;
	}
	*call = NULL;
	lfs_fact_size(out, fd);
	for (i = 0; map != MAP_FAILED && i < mlen; i += 4096)
		sink ^= map[i];
out:
	if (map != MAP_FAILED)
		munmap(map, mlen);
	if (fd2 >= 0)
		close(fd2);
	close(fd);
	(void)sink;
	return err;
}

/* what lfs_run_step() checks around an operation */
#define LFS_PARENT0	1	/* arg 0 names an entry made or removed */
#define LFS_PARENT1	2	/* arg 1 names an entry made or removed */
#define LFS_PARENTS	(LFS_PARENT0 | LFS_PARENT1)

struct lfs_opdesc {
	const char *name;
	int nargs;
	unsigned int weight;	/* how often gen draws it */
	unsigned int parents;	/* LFS_PARENT*: their directories keep their inodes */
	int keep;		/* arg whose object keeps its inode, or -1 */
	bool follow;		/* keep names the object behind symlinks */
	int (*run)(char **a, FILE *out, const char **call);
};

static const struct lfs_opdesc lfs_ops[LFS_OP_COUNT] = {
	[LFS_OP_CREATE] = { "create", 2, 6, LFS_PARENT0, -1, false, lfs_op_create },
	[LFS_OP_OTRUNC] = { "otrunc", 1, 3, 0, 0, true, lfs_op_otrunc },
	[LFS_OP_WRITE] = { "write", 4, 8, 0, 0, true, lfs_op_write },
	[LFS_OP_APPEND] = { "append", 3, 5, 0, 0, true, lfs_op_append },
	[LFS_OP_TRUNCATE] = { "truncate", 2, 4, 0, 0, true, lfs_op_truncate },
	[LFS_OP_MKDIR] = { "mkdir", 2, 6, LFS_PARENT0, -1, false, lfs_op_mkdir },
	[LFS_OP_FIFO] = { "fifo", 2, 1, LFS_PARENT0, -1, false, lfs_op_fifo },
	[LFS_OP_SOCK] = { "sock", 2, 1, LFS_PARENT0, -1, false, lfs_op_sock },
	[LFS_OP_CHR] = { "chr", 3, 1, LFS_PARENT0, -1, false, lfs_op_chr },
	[LFS_OP_BLK] = { "blk", 3, 1, LFS_PARENT0, -1, false, lfs_op_blk },
	[LFS_OP_SYMLINK] = { "symlink", 2, 3, LFS_PARENT1, -1, false, lfs_op_symlink },
	[LFS_OP_LINK] = { "link", 2, 5, LFS_PARENT1, -1, false, lfs_op_link },
	[LFS_OP_UNLINK] = { "unlink", 1, 6, LFS_PARENT0, -1, false, lfs_op_unlink },
	[LFS_OP_RMDIR] = { "rmdir", 1, 4, LFS_PARENT0, -1, false, lfs_op_rmdir },
	[LFS_OP_RENAME] = { "rename", 2, 8, LFS_PARENTS, -1, false, lfs_op_rename },
	[LFS_OP_NOREPLACE] = { "noreplace", 2, 3, LFS_PARENTS, -1, false, lfs_op_noreplace },
	[LFS_OP_EXCHANGE] = { "exchange", 2, 4, LFS_PARENTS, -1, false, lfs_op_exchange },
	[LFS_OP_TMPFILE] = { "tmpfile", 4, 2, LFS_PARENT1, -1, false, lfs_op_tmpfile },
	[LFS_OP_CHMOD] = { "chmod", 2, 4, 0, 0, true, lfs_op_chmod },
	[LFS_OP_CHOWN] = { "chown", 3, 2, 0, 0, true, lfs_op_chown },
	[LFS_OP_LCHOWN] = { "lchown", 3, 2, 0, 0, false, lfs_op_lchown },
	[LFS_OP_UTIMES] = { "utimes", 3, 3, 0, 0, true, lfs_op_utimes },
	[LFS_OP_SETXATTR] = { "setxattr", 4, 4, 0, 0, false, lfs_op_setxattr },
	[LFS_OP_RMXATTR] = { "rmxattr", 2, 2, 0, 0, false, lfs_op_rmxattr },
	[LFS_OP_XATTRS] = { "xattrs", 1, 2, 0, -1, false, lfs_op_xattrs },
	[LFS_OP_READ] = { "read", 1, 5, 0, 0, true, lfs_op_read },
	[LFS_OP_READDIR] = { "readdir", 1, 4, 0, -1, false, lfs_op_readdir },
	[LFS_OP_STAT] = { "stat", 1, 4, 0, -1, false, lfs_op_stat },
	[LFS_OP_RMTREE] = { "rmtree", 1, 1, LFS_PARENT0, -1, false, lfs_op_rmtree },
	[LFS_OP_SETACL] = { "setacl", 3, 4, 0, 0, false, lfs_op_setacl },
	[LFS_OP_RMACL] = { "rmacl", 2, 2, 0, 0, false, lfs_op_rmacl },
	[LFS_OP_FSETFL] = { "fsetfl", 4, 3, 0, 0, true, lfs_op_fsetfl },
	[LFS_OP_HELDFD] = { "heldfd", 3, 4, 0, 0, true, lfs_op_heldfd },
};

/*
 * ---- unprivileged steps ----
 *
 * A script line "as UID[:GID] OP ARGS" runs OP as that user (GID: UID's
 * number unless given), with no supplementary groups (run drops root's
 * at the start: root's capabilities give what they would), by
 * setresgid(GID, GID, 0) and setresuid(UID, UID, 0).  An effective uid
 * other than 0 empties the effective capability set: no CAP_DAC_OVERRIDE,
 * CAP_DAC_READ_SEARCH, CAP_FOWNER, CAP_FSETID, CAP_CHOWN, CAP_MKNOD or
 * CAP_SYS_ADMIN (trusted.* xattrs) is left, and the filesystem uid and
 * gid follow the effective ones, so every check of the step is made
 * for that user as it would be for any process of it.  (setfsuid()
 * alone would drop only the filesystem capabilities and keep
 * CAP_SYS_ADMIN, CAP_MKNOD and the rest.)  The saved uid stays 0, which
 * keeps the permitted set: setresuid(0, 0, 0) after the step makes it
 * effective again.  The checks around the operation (lfs_run_step()) run
 * as root.
 */
struct lfs_user {
	uid_t uid;
	gid_t gid;
};

static int lfs_parse_user(const char *s, struct lfs_user *u)
{
	char *end;

	u->uid = strtoul(s, &end, 10);
	u->gid = u->uid;
	if (end != s && *end == ':')
		u->gid = strtoul(s = end + 1, &end, 10);
	return end == s || *end || !u->uid ? -1 : 0;
}

static void lfs_become(const struct lfs_user *u)
{
	if (setresgid(u->gid, u->gid, 0) || setresuid(u->uid, u->uid, 0)) {
		perror("lfs-opseq: run: as a user");
		exit(2);
	}
}

static void lfs_become_root(void)
{
	if (setresuid(0, 0, 0) || setresgid(0, 0, 0)) {
		perror("lfs-opseq: run: back to root");
		exit(2);
	}
}

/* ---- run ---- */

static int lfs_find_op(const char *name)
{
	int i;

	for (i = 0; i < LFS_OP_COUNT; i++)
		if (!strcmp(lfs_ops[i].name, name))
			return i;
	return -1;
}

static void lfs_parent(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (slash)
		snprintf(buf, size, "%.*s", (int)(slash - path), path);
	else
		snprintf(buf, size, ".");
}

static int lfs_stat_obj(const char *path, bool follow, struct stat *st)
{
	return follow ? stat(path, st) : lstat(path, st);
}

/*
 * Apply one operation and print its step line.  Around it: the object
 * that an attribute or data operation acts on keeps its inode number
 * ("ino=", copy-up happens in place), and so do the directories in which
 * entries are made or removed ("pino=", copy-up of the parent).  Checked
 * only where the operation succeeded and the object was there before and
 * after, so that both filesystems check the same steps.  CHANGED on a
 * layerfs run is a failure in itself.
 */
static void lfs_run_step(unsigned long step, char **tok, int ntok,
			 const struct lfs_user *user)
{
	const struct lfs_opdesc *op;
	struct stat pst[2], kst, after;
	bool have_p[2] = { false, false }, have_k = false;
	char parent[PATH_MAX], *facts = NULL;
	const char *call = NULL, *pino = NULL;
	size_t facts_len = 0;
	FILE *out;
	int i, k, err;

	printf("%lu", step);
	if (user && user->uid == user->gid)
		printf(" as %u", user->uid);
	else if (user)
		printf(" as %u:%u", user->uid, user->gid);
	for (i = 0; i < ntok; i++)
		printf(" %s", tok[i]);
	k = lfs_find_op(tok[0]);
	if (k < 0 || ntok - 1 != lfs_ops[k].nargs) {
		printf(" -> BAD-STEP\n");
		return;
	}
	op = &lfs_ops[k];
	for (i = 0; i < 2; i++) {
		if (!(op->parents & (1u << i)))
			continue;
		lfs_parent(tok[1 + i], parent, sizeof(parent));
		have_p[i] = !lstat(parent, &pst[i]);
	}
	if (op->keep >= 0)
		have_k = !lfs_stat_obj(tok[1 + op->keep], op->follow, &kst);

	out = open_memstream(&facts, &facts_len);
	if (!out)
		exit(2);
	errno = 0;
	if (user)
		lfs_become(user);
	err = op->run(tok + 1, out, &call);
	if (user)
		lfs_become_root();
	if (!err && have_k) {
		if (lfs_stat_obj(tok[1 + op->keep], op->follow, &after))
			fprintf(out, " ino=GONE");
		else
			fprintf(out, " ino=%s", lfs_same_ino(&kst, &after));
	}
	for (i = 0; !err && i < 2; i++) {
		if (!have_p[i])
			continue;
		lfs_parent(tok[1 + i], parent, sizeof(parent));
		if (lstat(parent, &after))
			pino = "GONE";
		else if (!pino || !strcmp(pino, "OK"))
			pino = lfs_same_ino(&pst[i], &after);
	}
	if (pino)
		fprintf(out, " pino=%s", pino);
	fclose(out);

	if (err)
		printf(" -> %s%s%s\n", call ? call : "", call ? ":" : "",
		       strerrorname_np(-err) ? strerrorname_np(-err) : "E?");
	else
		printf(" -> 0%s\n", facts);
	free(facts);
}

/*
 * Wait until the clock that stamps files (the coarse one, up to a tick
 * behind) has passed t, so that whatever the run writes is newer than t.
 */
static void lfs_wait_past(const struct timespec *t)
{
	struct timespec now, ms = { 0, 1000000 };

	while (!clock_gettime(CLOCK_REALTIME_COARSE, &now) &&
	       (now.tv_sec < t->tv_sec ||
		(now.tv_sec == t->tv_sec && now.tv_nsec <= t->tv_nsec)))
		nanosleep(&ms, NULL);
}

static int lfs_cmd_run(int argc, char **argv)
{
	char *line = NULL, *tok[LFS_MAX_ARGS + 2], *save;
	struct lfs_dump_opts opt = { 0 };
	struct lfs_user user;
	unsigned long step = 0;
	FILE *dump = NULL;
	size_t cap = 0;
	int ntok, c;

	while ((c = getopt(argc, argv, "kD:T:")) != -1) {
		if (c == 'D') {
			dump = fopen(optarg, "w");
			if (!dump) {
				perror(optarg);
				return 1;
			}
		} else if (lfs_dump_option(c, &opt)) {
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 1) {
		fprintf(stderr, "usage: lfs-opseq run [-k] [-D DUMP [-T SEC.FRAC]] ROOT < SCRIPT\n");
		return 2;
	}
	lfs_procfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY);
	if (lfs_procfd < 0) {
		perror("lfs-opseq: run: /proc/self/fd");
		return 1;
	}
	/* absolute symlinks and ".." must stay inside the tree under test */
	if (chroot(argv[0]) || chdir("/")) {
		fprintf(stderr, "lfs-opseq: run: chroot %s: %s\n", argv[0],
			strerror(errno));
		return 1;
	}
	/* no supplementary groups, for the steps as a user (lfs_become()) */
	if (setgroups(0, NULL)) {
		perror("lfs-opseq: run: setgroups");
		return 1;
	}
	umask(022);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (opt.have_t)
		lfs_wait_past(&opt.t);
	while (getline(&line, &cap, stdin) > 0) {
		ntok = 0;
		for (tok[0] = strtok_r(line, " \t\n", &save);
		     tok[ntok] && ntok < LFS_MAX_ARGS + 1;
		     tok[ntok] = strtok_r(NULL, " \t\n", &save))
			ntok++;
		if (!ntok || tok[0][0] == '#')
			continue;
		if (strcmp(tok[0], "as")) {
			lfs_run_step(++step, tok, ntok, NULL);
		} else if (ntok < 3 || lfs_parse_user(tok[1], &user)) {
			printf("%lu %s -> BAD-STEP\n", ++step, tok[0]);
		} else {
			lfs_run_step(++step, tok + 2, ntok - 2, &user);
		}
	}
	free(line);
	if (dump && (lfs_dump_tree(dump, "/", &opt) || fclose(dump)))
		return 1;
	return 0;
}

/* ---- gen ---- */

/* splitmix64: the same sequence on every machine */
static uint64_t lfs_rng_state;

static unsigned int lfs_rnd(unsigned int n)
{
	uint64_t z = (lfs_rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return n ? (unsigned int)((z >> 16) % n) : 0;
}

struct lfs_strv {
	char **v;
	size_t n, cap;
};

static void lfs_strv_add(struct lfs_strv *sv, const char *s)
{
	if (sv->n == sv->cap) {
		sv->cap = sv->cap ? 2 * sv->cap : 64;
		sv->v = lfs_xrealloc(sv->v, sv->cap * sizeof(*sv->v));
	}
	sv->v[sv->n++] = lfs_xstrdup(s);
}

/* who runs the unprivileged steps ("as USER"; the stacks' owners but 0) */
static const char *const lfs_users[] = { "1000", "1001", "1001:1000" };
#define LFS_NUSERS	(sizeof(lfs_users) / sizeof(*lfs_users))

/*
 * Paths the operations draw from: names (given, mostly existing in the
 * lower layers), split into non-directories and directories, their last
 * components (found again under other and renamed directories) and a few
 * new names and directories.
 */
struct lfs_pool {
	struct lfs_strv names;
	struct lfs_strv files;
	struct lfs_strv dirs;
	struct lfs_strv leaves;
	struct lfs_strv new_dirs;
	struct lfs_strv regs;	/* regular files of @DIR: lower ones, for heldfd */
	/* of @DIR, per lfs_users[] entry: what that user owns, or may write */
	struct lfs_strv own_files[LFS_NUSERS];
	struct lfs_strv own_dirs[LFS_NUSERS];
};

/* the lfs_users[] entry the step being drawn runs as, or -1 (root) */
static int lfs_gen_user = -1;

static const char *const lfs_new_leaves[] = { "n0", "n1", "n2", "n3", "n4" };
static const char *const lfs_file_modes[] = {
	"0644", "0600", "0755", "0444", "0000", "4755", "2750",
};

static const char *const lfs_dir_modes[] = { "0755", "0700", "1777", "2755", "0555" };
static const char *const lfs_ids[] = { "0", "1000", "1001", "65534" };

static void lfs_pool_add(struct lfs_pool *p, const char *name, bool dir)
{
	const char *leaf = strrchr(name, '/');

	if (!*name || strpbrk(name, " \t\n") || strstr(name, "..")) {
		fprintf(stderr, "lfs-opseq: gen: name \"%s\" left out\n", name);
		return;
	}
	lfs_strv_add(&p->names, name);
	lfs_strv_add(dir ? &p->dirs : &p->files, name);
	lfs_strv_add(&p->leaves, leaf ? leaf + 1 : name);
}

static int lfs_pool_load_dir(struct lfs_pool *p, const char *root)
{
	struct lfs_tree t;
	int rootfd;
	size_t i;

	if (lfs_tree_load(&t, root, &rootfd))
		return -1;
	close(rootfd);
	for (i = 1; i < t.n; i++) {
		const struct stat *st = &t.obj[i].st;
		bool dir = S_ISDIR(st->st_mode);
		struct lfs_user u;
		size_t k;

		lfs_pool_add(p, t.obj[i].path, dir);
		if (S_ISREG(st->st_mode))
			lfs_strv_add(&p->regs, t.obj[i].path);
		for (k = 0; k < LFS_NUSERS; k++) {
			lfs_parse_user(lfs_users[k], &u);
			if (st->st_uid == u.uid || (st->st_mode & 0002) ||
			    (st->st_gid == u.gid && (st->st_mode & 0020)))
				lfs_strv_add(dir ? &p->own_dirs[k] : &p->own_files[k],
					     t.obj[i].path);
		}
	}
	return t.errors ? -1 : 0;
}

/* a ring of buffers: one step may hold several generated paths */
static char *lfs_gen_buf(void)
{
	static char bufs[8][PATH_MAX];
	static unsigned int next;

	return bufs[next++ % 8];
}

static const char *lfs_pick(const struct lfs_strv *sv)
{
	return sv->v[lfs_rnd(sv->n)];
}

/* a directory to make a name in: "" for the root */
static const char *lfs_pick_prefix(const struct lfs_pool *p)
{
	unsigned int r = lfs_rnd(10);

	/* an unprivileged step makes names mostly where it may */
	if (lfs_gen_user >= 0 && p->own_dirs[lfs_gen_user].n && r < 5)
		return lfs_pick(&p->own_dirs[lfs_gen_user]);

	if (r < 3 || (r < 8 && !p->dirs.n))
		return "";
	return r < 8 ? lfs_pick(&p->dirs) : lfs_pick(&p->new_dirs);
}

static const char *lfs_join(const char *dir, const char *leaf)
{
	char *buf = lfs_gen_buf();

	snprintf(buf, PATH_MAX, "%s%s%s", dir, *dir ? "/" : "", leaf);
	return buf;
}

static const char *lfs_pick_new(const struct lfs_pool *p)
{
	return lfs_join(lfs_pick_prefix(p),
			lfs_new_leaves[lfs_rnd(sizeof(lfs_new_leaves) / sizeof(*lfs_new_leaves))]);
}

static const char *lfs_pick_path(const struct lfs_pool *p)
{
	unsigned int r = lfs_rnd(100);

	if (r < 45 && p->names.n)
		return lfs_pick(&p->names);
	if (r < 65 && p->leaves.n)
		return lfs_join(lfs_pick_prefix(p), lfs_pick(&p->leaves));
	return lfs_pick_new(p);
}

/* mostly a non-directory that exists before the run */
static const char *lfs_pick_old(const struct lfs_pool *p)
{
	unsigned int r = lfs_rnd(8);

	if (lfs_gen_user >= 0 && p->own_files[lfs_gen_user].n && r < 4)
		return lfs_pick(&p->own_files[lfs_gen_user]);
	return r % 4 && p->files.n ? lfs_pick(&p->files) : lfs_pick_path(p);
}

/* mostly a name that does not */
static const char *lfs_pick_fresh(const struct lfs_pool *p)
{
	return lfs_rnd(10) < 6 ? lfs_pick_new(p) : lfs_pick_path(p);
}

static const char *lfs_pick_dir(const struct lfs_pool *p)
{
	unsigned int r = lfs_rnd(100);

	if (lfs_gen_user >= 0 && p->own_dirs[lfs_gen_user].n && r % 2)
		return lfs_pick(&p->own_dirs[lfs_gen_user]);
	if (r < 10)
		return ".";
	if (r < 60 && p->dirs.n)
		return lfs_pick(&p->dirs);
	if (r < 85)
		return lfs_pick(&p->new_dirs);
	return lfs_pick_path(p);
}

static const char *lfs_pick_obj(const struct lfs_pool *p)
{
	return lfs_rnd(3) ? lfs_pick_old(p) : lfs_pick_dir(p);
}

#define LFS_PICK(arr) ((arr)[lfs_rnd(sizeof(arr) / sizeof(*(arr)))])

static void lfs_gen_time(char *buf)
{
	sprintf(buf, "%u.%09u", 100000000 + lfs_rnd(100000000), lfs_rnd(1000000000));
}

#define LFS_ACL_ANY	0	/* an ACL, a wrong one now and then */
#define LFS_ACL_VALID	1	/* a valid ACL */
#define LFS_ACL_NAMED	2	/* a valid ACL with a named entry */

static const char *lfs_gen_perm(void)
{
	static const char *const perms[] = {
		"---", "--x", "-w-", "-wx", "r--", "r-x", "rw-", "rwx",
	};

	return LFS_PICK(perms);
}

/*
 * The text of an ACL (lfs_acl_from_text()): random permissions, named
 * users and groups among the stacks' owners, a mask where it is needed
 * (and a third of the times where it is not).  With LFS_ACL_ANY, one in
 * twelve is wrong: a named entry but no mask, or the entries out of
 * order (EINVAL on any filesystem).
 */
static void lfs_gen_acl(char *buf, size_t size, int kind)
{
	static const char *const users[] = { "1000", "1001", "65534" };
	static const char *const groups[] = { "0", "1000", "1001" };
	unsigned int bad = kind == LFS_ACL_ANY && !lfs_rnd(12) ? 1 + lfs_rnd(2) : 0;
	bool named = false, force = kind == LFS_ACL_NAMED || bad == 1;
	const char *other = lfs_gen_perm();
	size_t len = 0, i;

#define LFS_ACL_ADD(...) (len += snprintf(buf + len, size - len, __VA_ARGS__))
	if (bad == 2)
		LFS_ACL_ADD("o::%s,", other);
	LFS_ACL_ADD("u::%s", lfs_gen_perm());
	for (i = 0; i < 3; i++) {
		if (lfs_rnd(3) && !(force && i == 2 && !named))
			continue;
		LFS_ACL_ADD(",u:%s:%s", users[i], lfs_gen_perm());
		named = true;
	}
	LFS_ACL_ADD(",g::%s", lfs_gen_perm());
	for (i = 0; i < 3; i++) {
		if (lfs_rnd(3))
			continue;
		LFS_ACL_ADD(",g:%s:%s", groups[i], lfs_gen_perm());
		named = true;
	}
	if (bad != 1 && (named || !lfs_rnd(3)))
		LFS_ACL_ADD(",m::%s", lfs_gen_perm());
	if (bad != 2)
		LFS_ACL_ADD(",o::%s", other);
#undef LFS_ACL_ADD
}

/* print one operation of kind k with its arguments */
static void lfs_gen_step(const struct lfs_pool *p, int k)
{
	static const char *const flags[] = { "0", "create", "replace" };
	static const char *const sizes[] = { "0", "1", "100", "4096", "5000", "20000" };
	static char xattr_path[PATH_MAX], acl_path[PATH_MAX];
	static const char *acl_type = "access";
	static unsigned int xattr_k;
	char t1[32], t2[32], target[PATH_MAX + 8], acl[256];
	const char *name = lfs_ops[k].name;
	unsigned int r;

	switch (k) {
	case LFS_OP_CREATE:
		printf("%s %s %s\n", name, lfs_pick_fresh(p), LFS_PICK(lfs_file_modes));
		break;
	case LFS_OP_OTRUNC:
	case LFS_OP_UNLINK:
	case LFS_OP_READ:
		printf("%s %s\n", name, lfs_pick_old(p));
		break;
	case LFS_OP_WRITE:
		r = lfs_rnd(3);
		printf("%s %s %u %u %u\n", name, lfs_pick_old(p),
		       r == 0 ? 0 : r == 1 ? lfs_rnd(100) : lfs_rnd(9000),
		       1 + lfs_rnd(3000), lfs_rnd(1000000));
		break;
	case LFS_OP_APPEND:
		printf("%s %s %u %u\n", name, lfs_pick_old(p), 1 + lfs_rnd(3000),
		       lfs_rnd(1000000));
		break;
	case LFS_OP_TRUNCATE:
		if (lfs_rnd(3))
			printf("%s %s %s\n", name, lfs_pick_old(p), LFS_PICK(sizes));
		else
			printf("%s %s %u\n", name, lfs_pick_old(p), lfs_rnd(10000));
		break;
	case LFS_OP_MKDIR:
		r = lfs_rnd(10);
		printf("%s %s %s\n", name,
		       r < 4 ? lfs_pick(&p->new_dirs) : r < 7 ? lfs_pick_new(p) :
		       lfs_pick_path(p), LFS_PICK(lfs_dir_modes));
		break;
	case LFS_OP_FIFO:
	case LFS_OP_SOCK:
		printf("%s %s %s\n", name, lfs_pick_fresh(p), lfs_rnd(2) ? "0644" : "0600");
		break;
	case LFS_OP_CHR:
	case LFS_OP_BLK:
		/* majors 60-63 are for local use: no driver answers an open */
		printf("%s %s %u %u\n", name, lfs_pick_fresh(p), 60 + lfs_rnd(4),
		       lfs_rnd(256));
		break;
	case LFS_OP_SYMLINK:
		r = lfs_rnd(6);
		if (r < 2)
			snprintf(target, sizeof(target), "%s", lfs_pick_path(p));
		else if (r < 4)
			snprintf(target, sizeof(target), "/%s", lfs_pick_old(p));
		else if (r < 5)
			snprintf(target, sizeof(target), "../%s", lfs_pick_path(p));
		else
			snprintf(target, sizeof(target), "nowhere%u", lfs_rnd(4));
		printf("%s %s %s\n", name, target, lfs_pick_fresh(p));
		break;
	case LFS_OP_LINK:
		printf("%s %s %s\n", name, lfs_pick_old(p), lfs_pick_fresh(p));
		break;
	case LFS_OP_RMDIR:
		/* mkdir makes these: some are empty */
		r = lfs_rnd(10);
		printf("%s %s\n", name, r < 4 ? lfs_pick(&p->new_dirs) :
		       r < 6 ? lfs_pick_new(p) : lfs_pick_dir(p));
		break;
	case LFS_OP_READDIR:
		printf("%s %s\n", name, lfs_pick_dir(p));
		break;
	case LFS_OP_RMTREE:
		/* never the root: the rest of the script would find nothing */
		printf("%s %s\n", name, lfs_rnd(10) < 7 && p->dirs.n ?
		       lfs_pick(&p->dirs) : lfs_pick(&p->new_dirs));
		break;
	case LFS_OP_NOREPLACE:
	case LFS_OP_EXCHANGE:
		/*
		 * a third of them on a directory of the lower layers (merged
		 * ones, and the ones a redirect must find): exchanged with
		 * another, or with a non-directory, or moved to a new name
		 */
		r = lfs_rnd(9);
		if (r < 3 && p->dirs.n) {
			printf("%s %s %s\n", name, lfs_pick(&p->dirs),
			       k == LFS_OP_NOREPLACE ? lfs_pick_new(p) :
			       r < 2 ? lfs_pick(&p->dirs) : lfs_pick_old(p));
			break;
		}
		if (k == LFS_OP_EXCHANGE) {
			printf("%s %s %s\n", name, lfs_pick_obj(p), lfs_pick_obj(p));
			break;
		}
		fallthrough;
	case LFS_OP_RENAME:
		/* directories move mostly to new names the pool builds on */
		r = lfs_rnd(10);
		if (lfs_rnd(3) == 0)
			printf("%s %s %s\n", name, lfs_pick_dir(p),
			       r < 5 ? lfs_pick(&p->new_dirs) : r < 7 ? lfs_pick_fresh(p) :
			       lfs_pick_dir(p));
		else
			printf("%s %s %s\n", name, lfs_pick_old(p),
			       r < 5 ? lfs_pick_fresh(p) : r < 8 ? lfs_pick_old(p) :
			       lfs_pick_dir(p));
		break;
	case LFS_OP_TMPFILE:
		printf("%s %s %s %u %u\n", name, lfs_rnd(10) < 3 ? "." : lfs_pick_dir(p),
		       lfs_pick_fresh(p), 1 + lfs_rnd(3000), lfs_rnd(1000000));
		break;
	case LFS_OP_CHMOD:
		printf("%s %s %s\n", name, lfs_pick_obj(p),
		       lfs_rnd(2) ? LFS_PICK(lfs_file_modes) : LFS_PICK(lfs_dir_modes));
		break;
	case LFS_OP_CHOWN:
	case LFS_OP_LCHOWN:
		printf("%s %s %s %s\n", name, lfs_pick_obj(p), LFS_PICK(lfs_ids),
		       LFS_PICK(lfs_ids));
		break;
	case LFS_OP_UTIMES:
		lfs_gen_time(t1);
		lfs_gen_time(t2);
		printf("%s %s %s %s\n", name, lfs_pick_obj(p), t1, t2);
		break;
	case LFS_OP_SETXATTR:
		snprintf(xattr_path, sizeof(xattr_path), "%s", lfs_pick_obj(p));
		xattr_k = lfs_rnd(4);
		printf("%s %s trusted.test.k%u v%u %s\n", name, xattr_path, xattr_k,
		       lfs_rnd(1000), LFS_PICK(flags));
		break;
	case LFS_OP_RMXATTR:
		/* half of them where the last setxattr went */
		if (xattr_path[0] && lfs_rnd(2))
			printf("%s %s trusted.test.k%u\n", name, xattr_path, xattr_k);
		else
			printf("%s %s trusted.test.k%u\n", name, lfs_pick_obj(p), lfs_rnd(4));
		break;
	case LFS_OP_XATTRS:
	case LFS_OP_STAT:
		printf("%s %s\n", name, lfs_pick_obj(p));
		break;
	case LFS_OP_SETACL:
		/* a third default ACLs, mostly on directories */
		acl_type = lfs_rnd(3) ? "access" : "default";
		snprintf(acl_path, sizeof(acl_path), "%s",
			 *acl_type == 'a' || !lfs_rnd(4) ? lfs_pick_obj(p) : lfs_pick_dir(p));
		lfs_gen_acl(acl, sizeof(acl), LFS_ACL_ANY);
		printf("%s %s %s %s\n", name, acl_path, acl_type, acl);
		break;
	case LFS_OP_RMACL:
		/* half of them where the last setacl went */
		if (acl_path[0] && lfs_rnd(2))
			printf("%s %s %s\n", name, acl_path, acl_type);
		else
			printf("%s %s %s\n", name, lfs_pick_obj(p),
			       lfs_rnd(3) ? "access" : "default");
		break;
	case LFS_OP_FSETFL:
		r = lfs_rnd(2) ? 0 : lfs_rnd(9000);
		printf("%s %s %u %u %u\n", name, lfs_pick_old(p), r, 1 + lfs_rnd(3000),
		       lfs_rnd(1000000));
		break;
	case LFS_OP_HELDFD:
		/* mostly a file of the lower layers, copied up by the step */
		printf("%s %s %u %u\n", name, p->regs.n && lfs_rnd(3) ?
		       lfs_pick(&p->regs) : lfs_pick_old(p), 1 + lfs_rnd(3000),
		       lfs_rnd(1000000));
		break;
	}
}

/*
 * lfs_gen_sure() for the ACL, F_SETFL and held-fd kinds:
 *  - setacl: a new directory given an access and a default ACL, a file
 *    and a directory made in it (which inherit them), the file given an
 *    access ACL of its own;
 *  - rmacl: an ACL with a named entry set on a new file, then removed;
 *  - fsetfl: on a new file;
 *  - heldfd: at step 0, when @DIR gave regular files, on one of them, in
 *    the lower layers still (gen makes it the first kind in turn: see
 *    lfs_cmd_gen()); else on a new file, written first.
 */
static unsigned long lfs_gen_sure_more(struct lfs_pool *p, int k, unsigned long i,
				       unsigned long room, const char *r)
{
	char acl[256], sub[48];
	unsigned long n;

	n = k == LFS_OP_SETACL ? 6 : k == LFS_OP_RMACL ? 3 :
	    k == LFS_OP_FSETFL ? 2 : i == 0 && p->regs.n ? 1 : 3;
	if (n > room)
		return 0;
	switch (k) {
	case LFS_OP_SETACL:
		printf("mkdir %s 0755\n", r);
		lfs_gen_acl(acl, sizeof(acl), LFS_ACL_VALID);
		printf("setacl %s access %s\n", r, acl);
		lfs_gen_acl(acl, sizeof(acl), LFS_ACL_NAMED);
		printf("setacl %s default %s\n", r, acl);
		printf("create %s/f 0666\n", r);
		printf("mkdir %s/d 0777\n", r);
		lfs_gen_acl(acl, sizeof(acl), LFS_ACL_VALID);
		printf("setacl %s/f access %s\n", r, acl);
		lfs_pool_add(p, r, true);
		snprintf(sub, sizeof(sub), "%s/f", r);
		lfs_pool_add(p, sub, false);
		snprintf(sub, sizeof(sub), "%s/d", r);
		lfs_pool_add(p, sub, true);
		break;
	case LFS_OP_RMACL:
		printf("create %s 0640\n", r);
		lfs_gen_acl(acl, sizeof(acl), LFS_ACL_NAMED);
		printf("setacl %s access %s\n", r, acl);
		printf("rmacl %s access\n", r);
		lfs_pool_add(p, r, false);
		break;
	case LFS_OP_FSETFL:
		printf("create %s 0644\n", r);
		printf("fsetfl %s %u %u %lu\n", r, lfs_rnd(5000), 1 + lfs_rnd(3000), i);
		lfs_pool_add(p, r, false);
		break;
	case LFS_OP_HELDFD:
		if (n == 1) {
			printf("heldfd %s %u %lu\n", lfs_pick(&p->regs),
			       1 + lfs_rnd(3000), i);
			break;
		}
		printf("create %s 0644\n", r);
		printf("write %s 0 %u %lu\n", r, 1 + lfs_rnd(3000), i);
		printf("heldfd %s %u %lu\n", r, 1 + lfs_rnd(3000), i + 1);
		lfs_pool_add(p, r, false);
		break;
	}
	return n;
}

/*
 * Print an operation of kind k that succeeds on any correct filesystem,
 * after the steps that make it succeed: on a new name "rI" (I the step
 * number) in the root, which joins the pool for later steps.  Returns
 * the number of steps printed, 0 if they would not fit in room.
 */
static unsigned long lfs_gen_sure(struct lfs_pool *p, int k, unsigned long i,
				  unsigned long room)
{
	const char *name = lfs_ops[k].name;
	char r[32], r2[40], t1[32], t2[32];
	unsigned long n = 2;

	snprintf(r, sizeof(r), "r%lu", i);
	snprintf(r2, sizeof(r2), "r%lu-2", i);
	if (k >= LFS_OP_SETACL)
		return lfs_gen_sure_more(p, k, i, room, r);
	switch (k) {
	case LFS_OP_CREATE:
	case LFS_OP_MKDIR:
	case LFS_OP_FIFO:
	case LFS_OP_SOCK:
	case LFS_OP_CHR:
	case LFS_OP_BLK:
	case LFS_OP_SYMLINK:
	case LFS_OP_TMPFILE:
	case LFS_OP_READDIR:
		n = 1;
		break;
	case LFS_OP_RMXATTR:
	case LFS_OP_EXCHANGE:
		n = 3;
		break;
	}
	if (n > room)
		return 0;

	/* what the operation needs first */
	switch (k) {
	case LFS_OP_RMDIR:
	case LFS_OP_RMTREE:
		printf("mkdir %s 0755\n", r);
		break;
	case LFS_OP_EXCHANGE:
		printf("mkdir %s 0755\n", r2);
		fallthrough;
	case LFS_OP_OTRUNC ... LFS_OP_TRUNCATE:
	case LFS_OP_LINK ... LFS_OP_UNLINK:
	case LFS_OP_RENAME:
	case LFS_OP_NOREPLACE:
	case LFS_OP_CHMOD ... LFS_OP_XATTRS:
	case LFS_OP_READ:
	case LFS_OP_STAT:
		printf("create %s 0644\n", r);
		break;
	}
	if (k == LFS_OP_RMXATTR)
		printf("setxattr %s trusted.test.k0 v%lu 0\n", r, i);

	switch (k) {
	case LFS_OP_CREATE:
	case LFS_OP_MKDIR:
	case LFS_OP_FIFO:
	case LFS_OP_SOCK:
	case LFS_OP_CHR:
	case LFS_OP_BLK:
	case LFS_OP_SYMLINK:
	case LFS_OP_TMPFILE:
		printf("%s", name);
		if (k == LFS_OP_SYMLINK)
			printf(" %s", lfs_pick_path(p));
		if (k == LFS_OP_TMPFILE)
			printf(" .");
		printf(" %s", k == LFS_OP_SYMLINK || k == LFS_OP_TMPFILE ? r2 : r);
		if (k == LFS_OP_CHR || k == LFS_OP_BLK)
			printf(" 60 %u\n", lfs_rnd(256));
		else if (k == LFS_OP_TMPFILE)
			printf(" %u %lu\n", 1 + lfs_rnd(3000), i);
		else if (k == LFS_OP_MKDIR)
			printf(" %s\n", LFS_PICK(lfs_dir_modes));
		else if (k != LFS_OP_SYMLINK)
			printf(" %s\n", LFS_PICK(lfs_file_modes));
		else
			printf("\n");
		lfs_pool_add(p, k == LFS_OP_SYMLINK || k == LFS_OP_TMPFILE ? r2 : r,
			     k == LFS_OP_MKDIR);
		break;
	case LFS_OP_WRITE:
		printf("%s %s %u %u %lu\n", name, r, lfs_rnd(9000), 1 + lfs_rnd(3000), i);
		break;
	case LFS_OP_APPEND:
		printf("%s %s %u %lu\n", name, r, 1 + lfs_rnd(3000), i);
		break;
	case LFS_OP_TRUNCATE:
		printf("%s %s %u\n", name, r, lfs_rnd(10000));
		break;
	case LFS_OP_LINK:
	case LFS_OP_RENAME:
	case LFS_OP_NOREPLACE:
	case LFS_OP_EXCHANGE:
		printf("%s %s %s\n", name, r, r2);
		lfs_pool_add(p, r2, false);
		break;
	case LFS_OP_CHMOD:
		printf("%s %s %s\n", name, r, LFS_PICK(lfs_file_modes));
		break;
	case LFS_OP_CHOWN:
	case LFS_OP_LCHOWN:
		printf("%s %s %s %s\n", name, r, LFS_PICK(lfs_ids), LFS_PICK(lfs_ids));
		break;
	case LFS_OP_UTIMES:
		lfs_gen_time(t1);
		lfs_gen_time(t2);
		printf("%s %s %s %s\n", name, r, t1, t2);
		break;
	case LFS_OP_SETXATTR:
		printf("%s %s trusted.test.k%u v%lu create\n", name, r, lfs_rnd(4), i);
		break;
	case LFS_OP_RMXATTR:
		printf("%s %s trusted.test.k0\n", name, r);
		break;
	case LFS_OP_READDIR:
		printf("%s .\n", name);
		break;
	default:	/* otrunc, unlink, rmdir, rmtree, xattrs, read, stat */
		printf("%s %s\n", name, r);
		break;
	}
	if (k != LFS_OP_UNLINK && k != LFS_OP_RMDIR && k != LFS_OP_RMTREE &&
	    k != LFS_OP_READDIR && k != LFS_OP_RENAME && k != LFS_OP_NOREPLACE &&
	    n > 1)
		lfs_pool_add(p, r, k == LFS_OP_EXCHANGE);
	return n;
}

static int lfs_cmd_gen(int argc, char **argv)
{
	bool excluded[LFS_OP_COUNT] = { false };
	struct lfs_pool pool = { 0 };
	unsigned long count, i, n, total = 0, next = 0;
	unsigned int w;
	char *s, *save;
	int c, k;

	while ((c = getopt(argc, argv, "x:")) != -1) {
		if (c != 'x')
			return 2;
		for (s = strtok_r(optarg, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			k = lfs_find_op(s);
			if (k < 0) {
				fprintf(stderr, "lfs-opseq: gen: -x %s: no such operation\n", s);
				return 2;
			}
			excluded[k] = true;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: lfs-opseq gen [-x OP,...] SEED COUNT [NAME | @DIR]...\n");
		return 2;
	}
	lfs_rng_state = strtoull(argv[optind], NULL, 0);
	count = strtoul(argv[optind + 1], NULL, 0);
	for (i = optind + 2; i < (unsigned long)argc; i++) {
		size_t len = strlen(argv[i]);

		if (argv[i][0] == '@') {
			if (lfs_pool_load_dir(&pool, argv[i] + 1))
				return 1;
		} else if (len && argv[i][len - 1] == '/') {
			argv[i][len - 1] = '\0';
			lfs_pool_add(&pool, argv[i], true);
		} else {
			lfs_pool_add(&pool, argv[i], false);
		}
	}
	lfs_strv_add(&pool.new_dirs, "nd0");
	lfs_strv_add(&pool.new_dirs, "nd1");
	lfs_strv_add(&pool.new_dirs, "nd0/nd2");
	for (i = 0; i < pool.dirs.n && i < 2; i++)
		lfs_strv_add(&pool.new_dirs, lfs_join(pool.dirs.v[lfs_rnd(pool.dirs.n)], "nd3"));

	for (k = 0; k < LFS_OP_COUNT; k++)
		total += excluded[k] ? 0 : lfs_ops[k].weight;
	if (!total)
		return 2;
	for (i = 0; i < count; i += n) {
		if (i % 6 == 0) {
			/*
			 * every kind in turn, so that short scripts cover all;
			 * heldfd first, on the tree as the lower layers have it
			 */
			do
				k = (LFS_OP_HELDFD + next++) % LFS_OP_COUNT;
			while (excluded[k]);
			n = lfs_gen_sure(&pool, k, i, count - i);
			if (n)
				continue;
		}
		w = lfs_rnd(total);
		for (k = 0; excluded[k] || w >= lfs_ops[k].weight; k++)
			w -= excluded[k] ? 0 : lfs_ops[k].weight;
		/*
		 * about one step in five (of all) as an unprivileged user,
		 * mostly on what that user owns
		 */
		lfs_gen_user = lfs_rnd(4) ? -1 : (int)lfs_rnd(LFS_NUSERS);
		if (lfs_gen_user >= 0)
			printf("as %s ", lfs_users[lfs_gen_user]);
		lfs_gen_step(&pool, k);
		lfs_gen_user = -1;
		n = 1;
	}
	return 0;
}

/* ---- spec ---- */

static const char *const lfs_spec_dirs[] = { "a", "a/b", "c", "e", "e/f", "g" };
static const char *const lfs_spec_leaves[] = { "x0", "x1", "x2", "x3", "x4", "x5", "x6" };

/* an ACL xattr for mktree, from its text form (lfs_acl_from_text()) */
static void lfs_spec_acl_text(const char *path, const char *name, const char *text)
{
	unsigned char buf[4 + 8 * LFS_ACL_MAX];
	ssize_t len = lfs_acl_from_text(text, buf, sizeof(buf)), i;

	printf("a %s %s 0x", path, name);
	for (i = 0; i < len; i++)
		printf("%02x", buf[i]);
	putchar('\n');
}

/*
 * u/ in the bottom layer, which no other layer touches: what the
 * unprivileged steps ("as USER", mostly on what the user owns) act on.
 * Files of 1000 and of 1001, one of group 1000 that the group may write,
 * one that an ACL lets 1000 write and 1001 read, a set-id one; a sticky
 * directory with files of both; a directory of 1001 that an access ACL
 * opens to 1000 and whose default ACL new objects inherit; a set-group-ID
 * directory of group 1000.  u/ itself belongs to 1000 and has a default
 * ACL for 1001.
 */
static void lfs_spec_users(const char *b)
{
	char p[512];

	printf("f %s/u/x0 own-1000\n", b);
	printf("u %s/u/x0 1000 1000\n", b);
	printf("f %s/u/x1 own-1001\n", b);
	printf("u %s/u/x1 1001 1001\n", b);
	printf("m %s/u/x1 0664\n", b);
	printf("f %s/u/x2 group-1000\n", b);
	printf("u %s/u/x2 0 1000\n", b);
	printf("m %s/u/x2 0660\n", b);
	printf("f %s/u/x3 acl-1000\n", b);
	snprintf(p, sizeof(p), "%s/u/x3", b);
	lfs_spec_acl_text(p, LFS_ACL_ACCESS, "u::rw-,u:1000:rw-,u:1001:r--,g::r--,m::rw-,o::---");
	printf("f %s/u/x4 setid-1000\n", b);
	printf("u %s/u/x4 1000 1000\n", b);
	printf("m %s/u/x4 6755\n", b);
	printf("f %s/u/s/x0 sticky-1000\n", b);
	printf("u %s/u/s/x0 1000 1000\n", b);
	printf("f %s/u/s/x1 sticky-1001\n", b);
	printf("u %s/u/s/x1 1001 1001\n", b);
	printf("m %s/u/s/x1 0666\n", b);
	printf("m %s/u/s 1777\n", b);
	printf("f %s/u/d/x0 dir-1001\n", b);
	printf("u %s/u/d/x0 1001 1001\n", b);
	printf("m %s/u/d/x0 0660\n", b);
	printf("u %s/u/d 1001 1001\n", b);
	snprintf(p, sizeof(p), "%s/u/d", b);
	lfs_spec_acl_text(p, LFS_ACL_ACCESS, "u::rwx,u:1000:rwx,g::rwx,m::rwx,o::---");
	lfs_spec_acl_text(p, LFS_ACL_DEFAULT, "u::rwx,u:1000:rw-,g::r-x,m::rwx,o::---");
	printf("f %s/u/g/x0 setgid-dir\n", b);
	printf("u %s/u/g/x0 0 1000\n", b);
	printf("m %s/u/g/x0 0664\n", b);
	printf("u %s/u/g 0 1000\n", b);
	printf("m %s/u/g 2775\n", b);
	printf("u %s/u 1000 1000\n", b);
	snprintf(p, sizeof(p), "%s/u", b);
	lfs_spec_acl_text(p, LFS_ACL_DEFAULT, "u::rwx,u:1001:rwx,g::r-x,g:1000:rwx,m::rwx,o::r-x");
}

/*
 * The bottom layer of a stack: every type in every directory, hard links
 * within the layer (across directories too), a fifo, devices, symlinks,
 * xattrs, other owners and modes; a whiteout and an opaque directory
 * that hide nothing; u/ for the unprivileged steps (lfs_spec_users()).
 */
static void lfs_spec_bottom(const char *b, char wo)
{
	printf("f %s/x0 bottom-x0\n", b);
	printf("l %s/x1 a/x0\n", b);
	printf("f %s/a/x0 bottom-a-x0\n", b);
	printf("f %s/a/x1 bottom-a-x1\n", b);
	printf("a %s/a/x1 trusted.test.k1 lower\n", b);
	printf("a %s/a trusted.test.k2 lowerdir\n", b);
	printf("l %s/a/x2 ../c/x0\n", b);
	printf("f %s/a/b/x2 bottom-a-b-x2\n", b);
	printf("f %s/a/b/x3 bottom-a-b-x3\n", b);
	printf("m %s/a/b/x3 0600\n", b);
	printf("u %s/a/b/x3 1000 1000\n", b);
	printf("f %s/c/x0 bottom-c-x0\n", b);
	printf("F %s/c/x4 20000\n", b);
	printf("p %s/c/x5\n", b);
	printf("%c %s/c/gone\n", wo, b);
	printf("c %s/e/x5 60 1\n", b);
	printf("b %s/e/x4 61 2\n", b);
	printf("f %s/e/f/x0 bottom-e-f-x0\n", b);
	printf("d %s/e/f/x1\n", b);
	printf("o %s/e/f\n", b);
	printf("f %s/g/x0 bottom-g-x0\n", b);
	printf("f %s/g/x1/x2 bottom-g-x1-x2\n", b);
	printf("m %s/g 0700\n", b);
	printf("f %s/hl/x0 linked-0\n", b);
	printf("h %s/hl/x1 %s/hl/x0\n", b, b);
	printf("h %s/hk/x0 %s/hl/x0\n", b, b);
	printf("f %s/hl/x2 linked-2\n", b);
	printf("h %s/hk/x2 %s/hl/x2\n", b, b);
	printf("u %s/hk/x2 1000 0\n", b);
	printf("a %s/hk/x2 trusted.test.k0 linked\n", b);
	lfs_spec_users(b);
}

/* the layer above the bottom: hides part of it */
static void lfs_spec_above_bottom(const char *l, char wo)
{
	printf("%c %s/a/x1\n", wo, l);
	printf("%c %s/e/f/x0\n", wo, l);
	printf("o %s/g\n", l);
	printf("f %s/g/x3 above-opaque\n", l);
	printf("f %s/a/b/x2 above-a-b-x2\n", l);
	printf("d %s/c/x0\n", l);
	printf("f %s/c/x0/x1 dir-over-file\n", l);
	printf("f %s/e/x6 above-e-x6\n", l);
}

/* a POSIX ACL on path: owner rw, user uid r, group r, mask r, other r */
static void lfs_spec_acl(const char *path, unsigned int uid)
{
	char text[64];

	snprintf(text, sizeof(text), "u::rw-,u:%u:r--,g::r--,m::r--,o::r--", uid);
	lfs_spec_acl_text(path, LFS_ACL_ACCESS, text);
}

/* an xattr value past 255 bytes, or binary with NULs, on path */
static void lfs_spec_big_xattr(const char *path)
{
	unsigned int len = 256 + lfs_rnd(700), i, seed = lfs_rnd(26);

	if (lfs_rnd(2)) {
		printf("a %s trusted.test.long ", path);
		for (i = 0; i < len; i++)
			putchar('a' + (i * 7 + seed) % 26);
	} else {
		printf("a %s trusted.test.bin 0x00", path);
		for (i = 0; i < 16; i++)
			printf("%02x", lfs_rnd(256));
	}
	putchar('\n');
}

/*
 * one random entry of layer l, over the shared pool of names, or an
 * attribute of one: modes, owners, xattrs of every namespace a tmpfs
 * layer keeps (trusted, security, POSIX ACLs, default ones on
 * directories; long and binary values),
 * devices, fifos and sockets under names of their own, hard links in
 * hl/ and hk/ (which no whiteout or opaque directory reaches, so that
 * every link stays visible), xwhiteouts but with overlay (6.1's has
 * none)
 */
static void lfs_spec_random(const char *l, unsigned int li, bool overlay)
{
	static unsigned int links;
	const char *d = LFS_PICK(lfs_spec_dirs), *leaf = LFS_PICK(lfs_spec_leaves);
	const char *d2 = LFS_PICK(lfs_spec_dirs);
	char wo = overlay || !lfs_rnd(4) ? 'W' : 'w', path[512];
	unsigned int k = lfs_rnd(36);

	snprintf(path, sizeof(path), "%s/%s/%s", l, d, leaf);
	if (k < 8) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
	} else if (k < 10) {
		printf("d %s\n", path);
	} else if (k < 12) {
		printf("l %s %s\n", path, LFS_PICK(lfs_spec_leaves));
	} else if (k < 15) {
		printf("%c %s\n", wo, path);
	} else if (k < 17) {
		printf("o %s/%s\n", l, d2);
	} else if (k < 19) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		printf("a %s trusted.test.k%u l%u\n", path, lfs_rnd(3), li);
	} else if (k < 20) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		printf("m %s %s\n", path, lfs_rnd(2) ? "0640" : "0755");
	} else if (k < 21) {
		/* names of their own: a later "f" would open the fifo and wait */
		printf("p %s/%s/p%u\n", l, d, lfs_rnd(2));
	} else if (k < 22) {
		printf("f %s/%s root-%u\n", l, leaf, li);
	} else if (k < 23) {
		printf("%c %s/%s\n", wo, l, d2);
	} else if (k < 24) {
		printf("u %s/%s 1000 1000\n", l, d2);
	} else if (k < 25) {
		/* majors without a driver: opening one says ENXIO, never waits */
		printf("%c %s/%s/d%u %u %u\n", lfs_rnd(2) ? 'c' : 'b', l, d,
		       lfs_rnd(3), 60 + lfs_rnd(4), lfs_rnd(300));
	} else if (k < 26) {
		printf("s %s/%s/s%u\n", l, d, lfs_rnd(2));
	} else if (k < 28) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		printf("m %s %s\n", path, LFS_PICK(lfs_file_modes));
		printf("u %s %s %s\n", path, LFS_PICK(lfs_ids), LFS_PICK(lfs_ids));
	} else if (k < 29) {
		printf("m %s/%s %s\n", l, d2, LFS_PICK(lfs_dir_modes));
		printf("a %s/%s security.test.d%u s%u\n", l, d2, lfs_rnd(2), li);
		/* what new objects in it inherit (those of this layer too) */
		snprintf(path, sizeof(path), "%s/%s", l, d2);
		lfs_spec_acl_text(path, LFS_ACL_DEFAULT, li % 2 ?
				  "u::rwx,u:1000:rwx,g::r-x,m::rwx,o::r-x" :
				  "u::rwx,g::r-x,g:1001:rwx,m::rwx,o::---");
	} else if (k < 30) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		printf("a %s security.test.k%u s%u\n", path, lfs_rnd(2), li);
		lfs_spec_acl(path, 1000 + lfs_rnd(3));
	} else if (k < 32) {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		lfs_spec_big_xattr(path);
	} else if (k < 34) {
		links++;
		printf("f %s/hl/r%u-%u v%u\n", l, li, links, links);
		printf("h %s/hk/r%u-%u %s/hl/r%u-%u\n", l, li, links, l, li, links);
		if (lfs_rnd(2))
			printf("h %s/hl/r%u-%u-b %s/hl/r%u-%u\n", l, li, links, l,
			       li, links);
	} else if (!overlay) {
		/* upstream's newer whiteouts: empty files in an "x" directory */
		printf("X %s/%s\n", l, d);
		printf("x %s\n", path);
	} else {
		printf("f %s v%u-%u\n", path, li, lfs_rnd(100000));
		lfs_spec_big_xattr(path);
	}
}

/*
 * A stack of n lower layers TOP/L0 (top) .. TOP/L(n-1) (bottom) in mktree
 * form (tools/lfs-probe.c): the bottom layer, the layer above it, then
 * random entries in every upper layer (40 in a two-layer stack, 4 a
 * layer in deeper ones); every eighth layer holds a hard link of its
 * own, and one to a file of the bottom layer, in directories nothing else
 * touches, so that no link is hidden.
 * Whiteouts are layerfs-native (a symlink with trusted.overlay.whiteout),
 * a quarter of the random ones char 0/0; with overlay all are char 0/0.
 * Some random lines cannot apply (a path under a file): mktree -k.
 */
static void lfs_spec_stack(const char *top, unsigned int n, bool overlay)
{
	char l[256];
	unsigned int li, i, per = n == 2 ? 40 : 4;

	snprintf(l, sizeof(l), "%s/L%u", top, n - 1);
	lfs_spec_bottom(l, overlay ? 'W' : 'w');
	if (n < 2)
		return;
	snprintf(l, sizeof(l), "%s/L%u", top, n - 2);
	lfs_spec_above_bottom(l, overlay ? 'W' : 'w');
	for (li = n - 1; li-- > 0;) {
		snprintf(l, sizeof(l), "%s/L%u", top, li);
		for (i = 0; i < per; i++)
			lfs_spec_random(l, li, overlay);
		if (li % 8 == 0) {
			printf("f %s/hl/y%u linked-%u\n", l, li, li);
			printf("h %s/hk/y%u %s/hl/y%u\n", l, li, l, li);
			/* a link across layers: one inode in two of them */
			printf("h %s/hl/c%u %s/L%u/hl/x2\n", l, li, top, n - 1);
		}
	}
}

static int lfs_cmd_spec(int argc, char **argv)
{
	bool overlay = false;
	unsigned long seed;
	unsigned int n;
	char top[32];
	int c, i;

	while ((c = getopt(argc, argv, "o")) != -1) {
		if (c != 'o')
			return 2;
		overlay = true;
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: lfs-opseq spec [-o] SEED N...\n");
		return 2;
	}
	seed = strtoul(argv[optind], NULL, 0);
	for (i = optind + 1; i < argc; i++) {
		n = strtoul(argv[i], NULL, 0);
		if (n < 1 || n > 500) {
			fprintf(stderr, "lfs-opseq: spec: %s layers: 1 to 500\n", argv[i]);
			return 2;
		}
		lfs_rng_state = seed * 1000 + n;
		snprintf(top, sizeof(top), "s%u", n);
		lfs_spec_stack(top, n, overlay);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: lfs-opseq gen|run|dump|spec ARGS\n");
		return 2;
	}
	if (!strcmp(argv[1], "gen"))
		return lfs_cmd_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return lfs_cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return lfs_cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "spec"))
		return lfs_cmd_spec(argc - 1, argv + 1);
	fprintf(stderr, "lfs-opseq: unknown command %s\n", argv[1]);
	return 2;
}
