// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-probe: system-call level checks for the test suites.  Each command
 * does a whole check in one process (process start is slow in the test
 * guest) and prints a text report that the tests compare in full.
 *
 *   lfs-probe dino DIR...        d_ino == st_ino and d_type == st_mode for
 *                                every entry under DIR (recursive)
 *   lfs-probe seekdir DIR        telldir/seekdir return to the same entry;
 *                                rewinddir lists the same names
 *   lfs-probe fileops FILE [OUTDIR]
 *                                read, pread, mmap (shared, private),
 *                                splice, sendfile and fadvise agree; prints
 *                                checksums, what copy_file_range to a file
 *                                in OUTDIR (default /tmp) gives, and the
 *                                SEEK_DATA/SEEK_HOLE map
 *   lfs-probe writecalls FILE DIR  every write-side call on FILE and in DIR;
 *                                prints "call: ERRNO" per call
 *   lfs-probe stat PATH...       one line of stat fields per path
 *   lfs-probe mount2 TYPE TARGET DATA [FLAGS]
 *                                mount(2) with DATA as is (no mount(8)
 *                                option parsing); prints "mount: ok" or
 *                                "mount: ERRNO".  FLAGS: ro, remount
 *   lfs-probe mktree [-k] ROOT < SPEC
 *                                build layer trees under ROOT from a spec
 *                                (see cmd_mktree()); -k keeps going past
 *                                lines that cannot apply
 *   lfs-probe dump DIR           one sorted line per entry under DIR: type,
 *                                mode, owner, size, name, link target,
 *                                content hash, user.* xattrs
 *   lfs-probe meta DIR           as dump, plus mtime and every xattr (hex)
 *                                but the trusted.overlay.* markers
 *   lfs-probe ops [DIR] < SCRIPT run file-system operations, one a line,
 *                                in DIR; one result line each (see cmd_ops())
 *   lfs-probe race N FILE        N processes open FILE for write at once and
 *                                each writes one byte at offset i
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <grp.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int failures;

static void fail(const char *fmt, const char *a, const char *b)
{
	printf("FAIL ");
	printf(fmt, a, b);
	printf("\n");
	failures++;
}

/* FNV-1a 64: enough to compare contents within one run */
static uint64_t hash_buf(const unsigned char *p, size_t n, uint64_t h)
{
	while (n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define HASH_INIT 0xcbf29ce484222325ULL

static unsigned char dt_of_mode(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return DT_REG;
	case S_IFDIR: return DT_DIR;
	case S_IFLNK: return DT_LNK;
	case S_IFCHR: return DT_CHR;
	case S_IFBLK: return DT_BLK;
	case S_IFIFO: return DT_FIFO;
	case S_IFSOCK: return DT_SOCK;
	}
	return DT_UNKNOWN;
}

static long dino_walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	long n = 0;

	if (!d) {
		fail("opendir %s: %s", dir, strerror(errno));
		return 0;
	}
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			fail("stat %s: %s", path, strerror(errno));
			continue;
		}
		n++;
		if (de->d_ino != st.st_ino) {
			char msg[64];

			snprintf(msg, sizeof(msg), "%llu != %llu",
				 (unsigned long long)de->d_ino,
				 (unsigned long long)st.st_ino);
			fail("d_ino %s: %s", path, msg);
		}
		if (de->d_type != DT_UNKNOWN && de->d_type != dt_of_mode(st.st_mode))
			fail("d_type %s: %s", path, "differs from st_mode");
		if (S_ISDIR(st.st_mode) && strcmp(de->d_name, "."))
			n += dino_walk(path);
	}
	closedir(d);
	return n;
}

static int cmd_dino(int argc, char **argv)
{
	long n = 0;
	int i;

	for (i = 0; i < argc; i++)
		n += dino_walk(argv[i]);
	printf("checked %ld entries\n", n);
	return failures ? 1 : 0;
}

struct pos_name {
	long pos;
	char name[256];
};

static int cmd_seekdir(int argc, char **argv)
{
	struct pos_name *ents = NULL;
	size_t n = 0, cap = 0, i, again = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 1)
		return 2;
	d = opendir(argv[0]);
	if (!d) {
		perror(argv[0]);
		return 1;
	}
	for (;;) {
		long pos = telldir(d);

		de = readdir(d);
		if (!de)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ents = realloc(ents, cap * sizeof(*ents));
			if (!ents)
				return 2;
		}
		ents[n].pos = pos;
		snprintf(ents[n].name, sizeof(ents[n].name), "%s", de->d_name);
		n++;
	}
	/*
	 * back to recorded positions, in a scrambled order; at most 500 of
	 * them, since each seekdir() costs a getdents() of a whole buffer
	 */
	for (i = 0; i < n && i < 500; i++) {
		size_t k = n <= 500 ? (i * 7919) % n : (i * (n / 500) * 7919) % n;

		seekdir(d, ents[k].pos);
		de = readdir(d);
		if (!de || strcmp(de->d_name, ents[k].name))
			fail("seekdir to %s gave %s", ents[k].name,
			     de ? de->d_name : "(end)");
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		if (again >= n || strcmp(de->d_name, ents[again].name))
			fail("rewinddir: %s out of order%s", de->d_name, "");
		again++;
	}
	if (again != n)
		fail("rewinddir listed a different count%s%s", "", "");
	closedir(d);
	printf("%zu entries, %zu after rewind\n", n, again);
	free(ents);
	return failures ? 1 : 0;
}

static uint64_t hash_fd_read(int fd, off_t size)
{
	static unsigned char buf[65536];
	uint64_t h = HASH_INIT;
	off_t done = 0;
	ssize_t r;

	while ((r = pread(fd, buf, sizeof(buf), done)) > 0) {
		h = hash_buf(buf, r, h);
		done += r;
	}
	if (done != size)
		fail("pread stopped short%s%s", "", "");
	return h;
}

static int cmd_fileops(int argc, char **argv)
{
	static unsigned char buf[65536];
	uint64_t h_read = HASH_INIT, h;
	struct stat st;
	off_t off;
	ssize_t r;
	int fd, p[2], out;
	void *map;

	if (argc != 1 && argc != 2)
		return 2;
	fd = open(argv[0], O_RDONLY);
	if (fd < 0 || fstat(fd, &st)) {
		perror(argv[0]);
		return 1;
	}
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		h_read = hash_buf(buf, r, h_read);
	printf("size %lld read %016llx\n", (long long)st.st_size,
	       (unsigned long long)h_read);

	if (hash_fd_read(fd, st.st_size) != h_read)
		fail("pread differs from read%s%s", "", "");

	/*
	 * the data/hole map, for comparison with the real file; before the
	 * mmap reads, which fill tmpfs holes
	 */
	printf("map");
	for (off = 0; off < st.st_size;) {
		off_t data = lseek(fd, off, SEEK_DATA), hole;

		if (data < 0)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		printf(" %lld-%lld", (long long)data, (long long)hole);
		off = hole;
	}
	printf("\n");

	if (st.st_size) {
		map = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED)
			fail("mmap shared: %s%s", strerror(errno), "");
		else if (hash_buf(map, st.st_size, HASH_INIT) != h_read)
			fail("mmap shared differs%s%s", "", "");
		if (map != MAP_FAILED)
			munmap(map, st.st_size);
		map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE, fd, 0);
		if (map == MAP_FAILED) {
			fail("mmap private: %s%s", strerror(errno), "");
		} else {
			if (hash_buf(map, st.st_size, HASH_INIT) != h_read)
				fail("mmap private differs%s%s", "", "");
			/* a private write stays private */
			((unsigned char *)map)[0] ^= 0xff;
			munmap(map, st.st_size);
		}
		if (hash_fd_read(fd, st.st_size) != h_read)
			fail("private mapping write leaked to the file%s%s", "", "");
	}

	/* splice through a pipe */
	if (pipe(p))
		return 2;
	h = HASH_INIT;
	off = 0;
	for (;;) {
		loff_t o = off;

		r = splice(fd, &o, p[1], NULL, sizeof(buf), 0);
		if (r <= 0)
			break;
		off = o;
		if (read(p[0], buf, r) != r)
			break;
		h = hash_buf(buf, r, h);
	}
	if (r < 0)
		fail("splice: %s%s", strerror(errno), "");
	else if (h != h_read)
		fail("splice differs%s%s", "", "");
	close(p[0]);
	close(p[1]);

	/* sendfile and copy_file_range to a file outside the mount */
	out = open(argc > 1 ? argv[1] : "/tmp", O_TMPFILE | O_RDWR, 0600);
	if (out < 0)
		return 2;
	off = 0;
	while ((r = sendfile(out, fd, &off, 1 << 20)) > 0)
		;
	if (r < 0)
		fail("sendfile: %s%s", strerror(errno), "");
	else if (hash_fd_read(out, st.st_size) != h_read)
		fail("sendfile differs%s%s", "", "");
	if (ftruncate(out, 0))
		return 2;
	{
		loff_t in_off = 0, out_off = 0;

		while ((r = copy_file_range(fd, &in_off, out, &out_off,
					    1 << 20, 0)) > 0)
			;
		/* across filesystems, 6.1 says EXDEV for every filesystem */
		if (r < 0)
			printf("copy_file_range: %s\n", strerrorname_np(errno));
		else if (hash_fd_read(out, st.st_size) != h_read)
			fail("copy_file_range differs%s%s", "", "");
		else
			printf("copy_file_range: ok\n");
	}
	close(out);

	if (posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED) ||
	    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		fail("fadvise failed%s%s", "", "");

	if (lseek(fd, 0, SEEK_END) != st.st_size)
		fail("SEEK_END is not the size%s%s", "", "");
	close(fd);
	return failures ? 1 : 0;
}

static void report(const char *call, int ret)
{
	printf("%s: %s\n", call, ret < 0 ? strerrorname_np(errno) : "ok");
}

static int cmd_writecalls(int argc, char **argv)
{
	const char *file, *dir;
	char a[PATH_MAX], b[PATH_MAX];
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	int fd;

	if (argc != 2)
		return 2;
	file = argv[0];
	dir = argv[1];
	snprintf(a, sizeof(a), "%s/lfs-probe-new", dir);
	snprintf(b, sizeof(b), "%s/lfs-probe-new2", dir);

	fd = open(file, O_WRONLY);
	report("open O_WRONLY", fd);
	if (fd >= 0)
		close(fd);
	fd = open(file, O_RDWR);
	report("open O_RDWR", fd);
	if (fd >= 0)
		close(fd);
	fd = open(file, O_RDONLY | O_TRUNC);
	report("open O_TRUNC", fd);
	if (fd >= 0)
		close(fd);
	fd = open(a, O_WRONLY | O_CREAT, 0644);
	report("open O_CREAT", fd);
	if (fd >= 0)
		close(fd);
	fd = open(dir, O_TMPFILE | O_RDWR, 0600);
	report("open O_TMPFILE", fd);
	if (fd >= 0)
		close(fd);
	report("truncate", truncate(file, 0));
	report("mkdir", mkdir(a, 0755));
	report("mknod fifo", mknod(a, S_IFIFO | 0644, 0));
	report("mknod chr", mknod(a, S_IFCHR | 0644, makedev(1, 3)));
	report("symlink", symlink("target", a));
	report("link", link(file, a));
	report("unlink", unlink(file));
	report("rmdir", rmdir(dir));
	report("rename", rename(file, a));
	report("renameat2 NOREPLACE",
	       renameat2(AT_FDCWD, file, AT_FDCWD, b, RENAME_NOREPLACE));
	report("renameat2 EXCHANGE",
	       renameat2(AT_FDCWD, file, AT_FDCWD, dir, RENAME_EXCHANGE));
	report("chmod", chmod(file, 0600));
	report("chown", chown(file, 1, 1));
	report("utimensat", utimensat(AT_FDCWD, file, ts, 0));
	report("setxattr", setxattr(file, "user.lfs", "1", 1, 0));
	report("removexattr", removexattr(file, "user.lfs"));
	return 0;
}

static int cmd_stat(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		struct stat st;

		if (lstat(argv[i], &st)) {
			printf("%s: %s\n", argv[i], strerrorname_np(errno));
			continue;
		}
		printf("%s ino=%llu mode=%o uid=%u gid=%u size=%lld nlink=%lu blocks=%lld mtime=%lld.%09ld rdev=%u:%u\n",
		       argv[i], (unsigned long long)st.st_ino, st.st_mode,
		       st.st_uid, st.st_gid, (long long)st.st_size,
		       (unsigned long)st.st_nlink, (long long)st.st_blocks,
		       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
		       major(st.st_rdev), minor(st.st_rdev));
	}
	return 0;
}

/* mkdir -p for the parents of @path */
static void make_parents(char *path)
{
	char *s;

	for (s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
}

static void set_marker(const char *path, const char *name, const char *val)
{
	if (lsetxattr(path, name, val, strlen(val), 0))
		fail("setxattr %s: %s", path, strerror(errno));
}

/* an empty file: @dir/@prefix@name (aufs whiteouts and markers) */
static int make_empty(const char *dir, const char *prefix, const char *name)
{
	char path[2 * PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/%s%s", dir, prefix, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	return fd < 0 ? -1 : close(fd);
}

/*
 * Each line of the spec: OP PATH [ARG...], PATH relative to ROOT (its
 * first component is usually the layer's directory name).
 *   d PATH               directory
 *   f PATH [CONTENT]     regular file (CONTENT without spaces, may be empty)
 *   F PATH SIZE          regular file of SIZE bytes of a pattern
 *   N PREFIX FROM TO STEP  empty files PREFIX<i> for i = FROM, FROM+STEP, ... < TO
 *   H PATH SIZE          sparse file: 4 KiB data, hole, 4 KiB data at SIZE-4K
 *   l PATH TARGET        symlink
 *   h PATH TARGET        hard link to ROOT/TARGET
 *   p PATH               fifo
 *   c PATH MAJ MIN       character device
 *   b PATH MAJ MIN       block device
 *   w PATH               native whiteout (symlink + xattr)
 *   W PATH               chardev 0/0 whiteout
 *   x PATH               zero-size file with the whiteout xattr
 *   L PATH               symlink to the whiteout target without the xattr
 *   o PATH               directory marked opaque ("y")
 *   X PATH               directory marked for xwhiteouts ("x")
 *   A PATH               aufs whiteout of PATH: an empty file ".wh.NAME"
 *                        beside it
 *   O PATH               aufs opaque directory: PATH/.wh..wh..opq
 *   a PATH NAME VALUE    set an xattr
 *   m PATH MODE          chmod (octal)
 *   u PATH UID GID       lchown
 * Parents are created as needed.  Blank lines and # comments are skipped.
 */
static int cmd_mktree(int argc, char **argv)
{
	char line[8192], path[2 * PATH_MAX], other[2 * PATH_MAX];
	char op[4], rel[4096], a1[4096], a2[4096], a3[64];
	unsigned long lineno = 0;
	bool keep_going = false;

	if (argc == 2 && !strcmp(argv[0], "-k")) {
		keep_going = true;
		argc--;
		argv++;
	}
	if (argc != 1)
		return 2;
	while (fgets(line, sizeof(line), stdin)) {
		int n, fd, ret = 0;

		lineno++;
		a1[0] = a2[0] = a3[0] = '\0';
		n = sscanf(line, "%3s %4095s %4095s %4095s %63s", op, rel, a1,
			   a2, a3);
		if (n <= 0 || op[0] == '#')
			continue;
		if (n < 2) {
			fprintf(stderr, "mktree: line %lu: no path\n", lineno);
			return 2;
		}
		snprintf(path, sizeof(path), "%s/%s", argv[0], rel);
		make_parents(path);
		switch (op[0]) {
		case 'd':
		case 'o':
		case 'X':
			ret = mkdir(path, 0755);
			if (ret && errno == EEXIST)
				ret = 0;
			if (!ret && op[0] != 'd')
				set_marker(path, "trusted.overlay.opaque",
					   op[0] == 'o' ? "y" : "x");
			break;
		case 'f':
		case 'x':
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			ret = fd < 0 ? -1 : 0;
			if (fd >= 0) {
				if (write(fd, a1, strlen(a1)) < 0)
					ret = -1;
				close(fd);
			}
			if (!ret && op[0] == 'x')
				set_marker(path, "trusted.overlay.whiteout", "y");
			break;
		case 'F':
		case 'H': {
			long long size = atoll(a1), done = 0;
			static char block[4096];
			size_t i;

			for (i = 0; i < sizeof(block); i++)
				block[i] = (char)(i * 31 + size);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0) {
				ret = -1;
				break;
			}
			if (op[0] == 'H') {
				if (write(fd, block, sizeof(block)) < 0 ||
				    pwrite(fd, block, sizeof(block),
					   size - sizeof(block)) < 0)
					ret = -1;
			} else {
				while (done < size && ret == 0) {
					long long k = size - done;

					if (k > (long long)sizeof(block))
						k = sizeof(block);
					if (write(fd, block, k) != k)
						ret = -1;
					done += k;
				}
			}
			close(fd);
			break;
		}
		case 'N': {
			long i, to = atol(a2), step = atol(a3);
			char name[sizeof(path) + 24];

			for (i = atol(a1); step > 0 && i < to && !ret; i += step) {
				snprintf(name, sizeof(name), "%s%ld", path, i);
				fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				ret = fd < 0 ? -1 : close(fd);
			}
			break;
		}
		case 'l':
			ret = symlink(a1, path);
			break;
		case 'L':
			ret = symlink("(overlay-whiteout)", path);
			break;
		case 'A': {
			char *slash = strrchr(path, '/');

			*slash = '\0';
			ret = make_empty(path, ".wh.", slash + 1);
			*slash = '/';
			break;
		}
		case 'O':
			ret = mkdir(path, 0755);
			if (ret && errno == EEXIST)
				ret = 0;
			if (!ret)
				ret = make_empty(path, "", ".wh..wh..opq");
			break;
		case 'w':
			ret = symlink("(overlay-whiteout)", path);
			if (!ret)
				set_marker(path, "trusted.overlay.whiteout", "y");
			break;
		case 'W':
			ret = mknod(path, S_IFCHR | 0, makedev(0, 0));
			break;
		case 'h':
			snprintf(other, sizeof(other), "%s/%s", argv[0], a1);
			ret = link(other, path);
			break;
		case 'p':
			ret = mknod(path, S_IFIFO | 0644, 0);
			break;
		case 'c':
		case 'b':
			ret = mknod(path, (op[0] == 'c' ? S_IFCHR : S_IFBLK) | 0644,
				    makedev(atoi(a1), atoi(a2)));
			break;
		case 'a':
			ret = lsetxattr(path, a1, a2, strlen(a2), 0);
			break;
		case 'm':
			ret = chmod(path, strtol(a1, NULL, 8));
			break;
		case 'u':
			ret = lchown(path, atoi(a1), atoi(a2));
			break;
		default:
			fprintf(stderr, "mktree: line %lu: unknown op %s\n",
				lineno, op);
			return 2;
		}
		if (ret && !keep_going) {
			fprintf(stderr, "mktree: line %lu: %s %s: %s\n", lineno,
				op, rel, strerror(errno));
			return 1;
		}
	}
	return failures ? 1 : 0;
}

struct dump {
	char **lines;
	size_t n, cap;
	size_t root_len;
	bool meta;	/* mtime and every xattr in hex (cmd_meta) */
};

static void dump_add(struct dump *d, char *line)
{
	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->lines = realloc(d->lines, d->cap * sizeof(*d->lines));
		if (!d->lines)
			exit(2);
	}
	d->lines[d->n++] = line;
}

/* " NAME=HEX" for @val, cut to fit @out */
static void append_hex(char *out, size_t size, const char *name,
		       const unsigned char *val, ssize_t vl)
{
	size_t len = strlen(out);
	ssize_t k;

	len += snprintf(out + len, size - len, " %s=0x", name);
	for (k = 0; k < vl && len + 3 < size; k++)
		len += snprintf(out + len, size - len, "%02x", val[k]);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The xattrs of @path: user.* and trusted.* as text, or for @meta every
 * name but trusted.overlay.*, sorted (filesystems list in their own
 * order), values in hex.
 */
static void dump_xattrs(const char *path, char *out, size_t size, bool meta)
{
	char names[4096], val[256], *sorted[256];
	ssize_t len = llistxattr(path, names, sizeof(names)), i;
	size_t n = 0, k;

	out[0] = '\0';
	for (i = 0; i < len && n < 256; i += strlen(names + i) + 1) {
		if (meta ? !strncmp(names + i, "trusted.overlay.", 16) :
			   strncmp(names + i, "user.", 5) &&
			   strncmp(names + i, "trusted.", 8))
			continue;
		sorted[n++] = names + i;
	}
	if (meta)
		qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (k = 0; k < n; k++) {
		ssize_t vl = lgetxattr(path, sorted[k], val, sizeof(val) - 1);

		if (meta) {
			append_hex(out, size, sorted[k], (unsigned char *)val, vl);
			continue;
		}
		val[vl < 0 ? 0 : vl] = '\0';
		snprintf(out + strlen(out), size - strlen(out), " %s=%s",
			 sorted[k], val);
	}
}

static void dump_walk(struct dump *d, const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;

	if (!dh) {
		fail("opendir %s: %s", dir, strerror(errno));
		return;
	}
	while ((de = readdir(dh))) {
		char path[PATH_MAX], target[PATH_MAX] = "", xat[4096];
		char *line;
		struct stat st;
		uint64_t h = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			fail("lstat %s: %s", path, strerror(errno));
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(path, target, sizeof(target) - 1);

			target[n < 0 ? 0 : n] = '\0';
		} else if (S_ISREG(st.st_mode)) {
			int fd = open(path, O_RDONLY);

			if (fd < 0)
				fail("open %s: %s", path, strerror(errno));
			else {
				h = hash_fd_read(fd, st.st_size);
				close(fd);
			}
		}
		dump_xattrs(path, xat, sizeof(xat), d->meta);
		if (d->meta && !S_ISDIR(st.st_mode))
			snprintf(xat + strlen(xat), sizeof(xat) - strlen(xat),
				 " mtime=%lld.%09ld", (long long)st.st_mtim.tv_sec,
				 st.st_mtim.tv_nsec);
		if (asprintf(&line, "%s %c %o %u:%u %lld%s%s %016llx%s",
			     path + d->root_len,
			     "?pc?d?b?-?l?s???"[(st.st_mode >> 12) & 15],
			     st.st_mode & 07777, st.st_uid, st.st_gid,
			     S_ISDIR(st.st_mode) ? 0LL : (long long)st.st_size,
			     target[0] ? " -> " : "", target,
			     (unsigned long long)h, xat) < 0)
			exit(2);
		if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
			char *l2;

			if (asprintf(&l2, "%s dev=%u:%u", line, major(st.st_rdev),
				     minor(st.st_rdev)) < 0)
				exit(2);
			free(line);
			line = l2;
		}
		dump_add(d, line);
		if (S_ISDIR(st.st_mode))
			dump_walk(d, path);
	}
	closedir(dh);
}

/* the sorted dump of the tree under @dir into @d */
static void dump_tree(struct dump *d, const char *dir, bool meta)
{
	memset(d, 0, sizeof(*d));
	d->meta = meta;
	d->root_len = strlen(dir) + 1;
	dump_walk(d, dir);
	qsort(d->lines, d->n, sizeof(*d->lines), cmp_str);
}

static void dump_free(struct dump *d)
{
	while (d->n)
		free(d->lines[--d->n]);
	free(d->lines);
}

static int dump_print(const char *dir, bool meta)
{
	struct dump d;
	size_t i;

	dump_tree(&d, dir, meta);
	for (i = 0; i < d.n; i++)
		printf("%s\n", d.lines[i]);
	dump_free(&d);
	return failures ? 1 : 0;
}

static int cmd_dump(int argc, char **argv)
{
	if (argc != 1)
		return 2;
	return dump_print(argv[0], false);
}

static int cmd_meta(int argc, char **argv)
{
	if (argc != 1)
		return 2;
	return dump_print(argv[0], true);
}

/*
 * ops: the steps of a test, run in one process.
 */

#define OPS_MAX_ARGS 8

/* open @path with @flags, write @data (if any), close: 0 or -1 */
static int ops_write(const char *path, int flags, off_t off, const char *data)
{
	int fd = open(path, flags, 0644), err = 0;
	ssize_t len = data ? (ssize_t)strlen(data) : 0;

	if (fd < 0)
		return -1;
	if (len && (off >= 0 ? pwrite(fd, data, len, off) :
			       write(fd, data, len)) != len)
		err = -1;
	if (close(fd))
		err = -1;
	return err;
}


/* close @fd; on an earlier error (@err) keep its errno and return -1 */
static int close_after(int fd, int err)
{
	int e = errno;

	if (!err)
		return close(fd);
	close(fd);
	errno = e;
	return -1;
}

/* O_TMPFILE in @dir, @data in it, then linkat() to @name unless "-" */
static int ops_tmpfile(const char *dir, const char *name, const char *data)
{
	int fd = open(dir, O_TMPFILE | O_RDWR, 0644), err = 0;
	ssize_t len = data ? (ssize_t)strlen(data) : 0;

	if (fd < 0)
		return -1;
	if (len && write(fd, data, len) != len)
		err = -1;
	if (!err && strcmp(name, "-"))
		err = linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH);
	return close_after(fd, err);
}

/* fsync, fdatasync and syncfs on @path opened for write */
static int ops_sync(const char *path)
{
	int fd = open(path, O_WRONLY), err;

	if (fd < 0)
		return -1;
	err = fsync(fd) || fdatasync(fd) || syncfs(fd) ? -1 : 0;
	return close_after(fd, err);
}

/* drop to @uid/@gid, no supplementary groups, for the rest of the script */
static int ops_become(const char *uid, const char *gid)
{
	if (setgroups(0, NULL) || setgid(atoi(gid)) || setuid(atoi(uid)))
		return -1;
	return 0;
}

/* what @path is on disk, in the layer formats (cmd_ops "kind") */
static void ops_kind(const char *path, char *out, size_t size)
{
	char buf[PATH_MAX], val[256];
	struct stat st;
	ssize_t n;

	if (lstat(path, &st)) {
		snprintf(out, size, "%s", errno == ENOENT ? "absent" :
			 strerrorname_np(errno));
		return;
	}
	switch (st.st_mode & S_IFMT) {
	case S_IFLNK:
		n = readlink(path, buf, sizeof(buf) - 1);
		buf[n < 0 ? 0 : n] = '\0';
		n = lgetxattr(path, "trusted.overlay.whiteout", val, sizeof(val));
		snprintf(out, size, "%s",
			 !strcmp(buf, "(overlay-whiteout)") && n == 1 &&
			 val[0] == 'y' ? "whiteout" : "symlink");
		break;
	case S_IFDIR:
		n = lgetxattr(path, "trusted.overlay.opaque", val, sizeof(val));
		snprintf(out, size, "%s",
			 n == 1 && val[0] == 'y' ? "opaque-dir" : "dir");
		n = lgetxattr(path, "trusted.overlay.redirect", val,
			      sizeof(val) - 1);
		if (n >= 0) {
			val[n] = '\0';
			snprintf(out + strlen(out), size - strlen(out),
				 " redirect=%s", val);
		}
		break;
	case S_IFCHR:
		snprintf(out, size, "%s", st.st_rdev ? "chr" : "chr-whiteout");
		break;
	default:
		snprintf(out, size, "%s", S_ISREG(st.st_mode) ? "file" :
			 S_ISFIFO(st.st_mode) ? "fifo" :
			 S_ISSOCK(st.st_mode) ? "sock" : "blk");
	}
}

/* the SEEK_DATA/SEEK_HOLE map of @path: "START-END ..." */
static int ops_map(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY);
	off_t off = 0, end;

	if (fd < 0)
		return -1;
	end = lseek(fd, 0, SEEK_END);
	out[0] = '\0';
	while (off < end) {
		off_t data = lseek(fd, off, SEEK_DATA), hole;

		if (data < 0)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		snprintf(out + strlen(out), size - strlen(out), "%s%lld-%lld",
			 out[0] ? " " : "", (long long)data, (long long)hole);
		off = hole;
	}
	if (!out[0])
		snprintf(out, size, "(none)");
	return close(fd);
}

static int ops_read(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, out, size - 1);
	out[n < 0 ? 0 : n] = '\0';
	if (!out[0])
		snprintf(out, size, "(empty)");
	close(fd);
	return n < 0 ? -1 : 0;
}

static int ops_hash(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st)) {
		close(fd);
		return -1;
	}
	snprintf(out, size, "%016llx",
		 (unsigned long long)hash_fd_read(fd, st.st_size));
	return close(fd);
}

static int ops_count(const char *path, char *out, size_t size)
{
	DIR *d = opendir(path);
	struct dirent *de;
	long n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	snprintf(out, size, "%ld", n);
	return 0;
}

/* compare the dumps of two trees; the differing lines follow as -/+ */
static int ops_treecmp(const char *a, const char *b, char *out, size_t size)
{
	struct dump da, db;
	size_t i = 0, j = 0;
	bool same = true;

	dump_tree(&da, a, false);
	dump_tree(&db, b, false);
	while (i < da.n || j < db.n) {
		int c = i == da.n ? 1 : j == db.n ? -1 :
			strcmp(da.lines[i], db.lines[j]);

		if (!c) {
			i++;
			j++;
			continue;
		}
		if (same)
			printf("treecmp %s %s:\n", a, b);
		same = false;
		if (c < 0)
			printf("  -%s\n", da.lines[i++]);
		else
			printf("  +%s\n", db.lines[j++]);
	}
	dump_free(&da);
	dump_free(&db);
	snprintf(out, size, "%s", same ? "ok" : "differ");
	return 0;
}

/* a stat field of @path, by name */
static int ops_statf(const char *op, const char *path, char *out, size_t size)
{
	struct stat st;

	if (lstat(path, &st))
		return -1;
	if (!strcmp(op, "ino"))
		snprintf(out, size, "%llu", (unsigned long long)st.st_ino);
	else if (!strcmp(op, "links"))
		snprintf(out, size, "%lu", (unsigned long)st.st_nlink);
	else if (!strcmp(op, "mode"))
		snprintf(out, size, "%o", st.st_mode & 07777);
	else if (!strcmp(op, "owner"))
		snprintf(out, size, "%u:%u", st.st_uid, st.st_gid);
	else if (!strcmp(op, "size"))
		snprintf(out, size, "%lld", (long long)st.st_size);
	else if (!strcmp(op, "blocks"))
		snprintf(out, size, "%lld", (long long)st.st_blocks);
	else
		snprintf(out, size, "%lld", (long long)st.st_mtim.tv_sec);
	return 0;
}

static int ops_sameino(const char *a, const char *b, char *out, size_t size)
{
	struct stat sa, sb;

	if (lstat(a, &sa) || lstat(b, &sb))
		return -1;
	snprintf(out, size, "%s", sa.st_ino == sb.st_ino &&
		 sa.st_dev == sb.st_dev ? "ok" : "differ");
	return 0;
}

static int ops_setxattr(const char *path, const char *name, const char *val)
{
	return lsetxattr(path, name, val, strlen(val), 0);
}

static int ops_getxattr(const char *path, const char *name, char *out,
			size_t size)
{
	ssize_t n = lgetxattr(path, name, out, size - 1);

	if (n < 0)
		return -1;
	out[n] = '\0';
	return 0;
}

/* @NAME bindings of a script, until the next "cd" */
static struct {
	char name[32];
	char value[256];
} ops_vars[64];

/* the operations of cmd_ops(): name, argument count, query or action */
static const struct ops_def {
	const char *name;
	int min_args;
	int max_args;
	bool query;	/* judged only against a WANT the line gives */
} ops_defs[] = {
	{ "create", 1, 2, false }, { "write", 1, 2, false },
	{ "append", 2, 2, false }, { "pwrite", 3, 3, false },
	{ "openw", 1, 1, false }, { "truncate", 2, 2, false },
	{ "mkdir", 1, 1, false }, { "rmdir", 1, 1, false },
	{ "unlink", 1, 1, false }, { "symlink", 2, 2, false },
	{ "link", 2, 2, false }, { "rename", 2, 2, false },
	{ "noreplace", 2, 2, false }, { "exchange", 2, 2, false },
	{ "fifo", 1, 1, false }, { "sock", 1, 1, false },
	{ "chr", 3, 3, false }, { "blk", 3, 3, false },
	{ "tmpfile", 2, 3, false }, { "chmod", 2, 2, false },
	{ "chown", 3, 3, false }, { "utimes", 2, 2, false },
	{ "setxattr", 3, 3, false }, { "removexattr", 2, 2, false },
	{ "sync", 1, 1, false }, { "become", 2, 2, false },
	{ "cd", 1, 1, false }, { "sameino", 2, 2, false },
	{ "treecmp", 2, 2, false }, { "read", 1, 1, true },
	{ "getxattr", 2, 2, true }, { "kind", 1, 1, true },
	{ "map", 1, 1, true }, { "hash", 1, 1, true }, { "count", 1, 1, true },
	{ "ino", 1, 1, true }, { "links", 1, 1, true }, { "mode", 1, 1, true },
	{ "owner", 1, 1, true }, { "size", 1, 1, true },
	{ "blocks", 1, 1, true }, { "mtime", 1, 1, true },
};

static const struct ops_def *ops_find(char **v, int n)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops_defs); i++)
		if (!strcmp(ops_defs[i].name, v[0]))
			return n - 1 < ops_defs[i].min_args ||
			       n - 1 > ops_defs[i].max_args ? NULL : &ops_defs[i];
	return NULL;
}

/* an action of cmd_ops(): 0 or -1 with errno set */
static int ops_act(const char *op, char **v, char *out, size_t size)
{
	struct timespec ts[2];

	if (!strcmp(op, "create"))
		return ops_write(v[1], O_WRONLY | O_CREAT | O_EXCL, -1, v[2]);
	if (!strcmp(op, "write"))
		return ops_write(v[1], O_WRONLY | O_TRUNC, -1, v[2]);
	if (!strcmp(op, "append"))
		return ops_write(v[1], O_WRONLY | O_APPEND, -1, v[2]);
	if (!strcmp(op, "pwrite"))
		return ops_write(v[1], O_WRONLY, atoll(v[2]), v[3]);
	if (!strcmp(op, "openw"))
		return ops_write(v[1], O_WRONLY, -1, NULL);
	if (!strcmp(op, "truncate"))
		return truncate(v[1], atoll(v[2]));
	if (!strcmp(op, "mkdir"))
		return mkdir(v[1], 0755);
	if (!strcmp(op, "rmdir"))
		return rmdir(v[1]);
	if (!strcmp(op, "unlink"))
		return unlink(v[1]);
	if (!strcmp(op, "symlink"))
		return symlink(v[1], v[2]);
	if (!strcmp(op, "link"))
		return link(v[1], v[2]);
	if (!strcmp(op, "rename"))
		return rename(v[1], v[2]);
	if (!strcmp(op, "noreplace") || !strcmp(op, "exchange"))
		return renameat2(AT_FDCWD, v[1], AT_FDCWD, v[2],
				 op[0] == 'n' ? RENAME_NOREPLACE : RENAME_EXCHANGE);
	if (!strcmp(op, "fifo") || !strcmp(op, "sock"))
		return mknod(v[1], (op[0] == 'f' ? S_IFIFO : S_IFSOCK) | 0644, 0);
	if (!strcmp(op, "chr") || !strcmp(op, "blk"))
		return mknod(v[1], (op[0] == 'c' ? S_IFCHR : S_IFBLK) | 0644,
			     makedev(atoi(v[2]), atoi(v[3])));
	if (!strcmp(op, "tmpfile"))
		return ops_tmpfile(v[1], v[2], v[3]);
	if (!strcmp(op, "chmod"))
		return chmod(v[1], strtol(v[2], NULL, 8));
	if (!strcmp(op, "chown"))
		return lchown(v[1], atoi(v[2]), atoi(v[3]));
	if (!strcmp(op, "utimes")) {
		ts[0].tv_sec = atoll(v[2]);
		ts[0].tv_nsec = 0;
		ts[1] = ts[0];
		return utimensat(AT_FDCWD, v[1], ts, AT_SYMLINK_NOFOLLOW);
	}
	if (!strcmp(op, "setxattr"))
		return ops_setxattr(v[1], v[2], v[3]);
	if (!strcmp(op, "removexattr"))
		return lremovexattr(v[1], v[2]);
	if (!strcmp(op, "sync"))
		return ops_sync(v[1]);
	if (!strcmp(op, "become"))
		return ops_become(v[1], v[2]);
	if (!strcmp(op, "cd")) {
		memset(ops_vars, 0, sizeof(ops_vars));
		return chdir(v[1]);
	}
	if (!strcmp(op, "sameino"))
		return ops_sameino(v[1], v[2], out, size);
	return ops_treecmp(v[1], v[2], out, size);
}

/* a query of cmd_ops(): 0 with the answer in @out, or -1 with errno set */
static int ops_ask(const char *op, char **v, char *out, size_t size)
{
	if (!strcmp(op, "read"))
		return ops_read(v[1], out, size);
	if (!strcmp(op, "getxattr"))
		return ops_getxattr(v[1], v[2], out, size);
	if (!strcmp(op, "kind")) {
		ops_kind(v[1], out, size);
		return 0;
	}
	if (!strcmp(op, "map"))
		return ops_map(v[1], out, size);
	if (!strcmp(op, "hash"))
		return ops_hash(v[1], out, size);
	if (!strcmp(op, "count"))
		return ops_count(v[1], out, size);
	return ops_statf(op, v[1], out, size);
}

/*
 * One operation: @v[0] is its name, @n the number of words.  Fills @out
 * with the result ("ok", an errno name, or what a query reports).
 * Returns 1 for a query (no result wanted unless the script says one),
 * 0 for an action (wants "ok"), -1 for a line that does not parse.
 */
static int ops_run(char **v, int n, char *out, size_t size)
{
	const struct ops_def *def = ops_find(v, n);
	int ret;

	if (!def)
		return -1;
	out[0] = '\0';
	ret = def->query ? ops_ask(def->name, v, out, size) :
			   ops_act(def->name, v, out, size);
	if (ret < 0)
		snprintf(out, size, "%s", strerrorname_np(errno));
	else if (!out[0])
		snprintf(out, size, "ok");
	return def->query;
}

/* does result @out meet @want (see cmd_ops())? */
static bool ops_met(const char *out, const char *want)
{
	size_t i;

	if (want[0] == '!')
		return strcmp(out, want + 1);
	if (!strncmp(want, "<=", 2))
		return *out >= '0' && *out <= '9' &&
		       strtoll(out, NULL, 10) <= strtoll(want + 2, NULL, 10);
	if (strchr(want, '|')) {
		size_t len = strlen(out);
		const char *w;

		for (w = want; w; w = strchr(w, '|') ? strchr(w, '|') + 1 : NULL)
			if (!strncmp(w, out, len) && (w[len] == '|' || !w[len]))
				return true;
		return false;
	}
	if (want[0] != '@')
		return !strcmp(out, want);
	for (i = 0; i < ARRAY_SIZE(ops_vars); i++) {
		if (!ops_vars[i].name[0]) {
			snprintf(ops_vars[i].name, sizeof(ops_vars[i].name),
				 "%s", want);
			snprintf(ops_vars[i].value, sizeof(ops_vars[i].value),
				 "%s", out);
			return true;
		}
		if (!strcmp(ops_vars[i].name, want))
			return !strcmp(ops_vars[i].value, out);
	}
	return false;
}

/*
 * Each line of the script: OP ARG... [=> WANT], words split at blanks;
 * paths are relative to DIR (or to where "cd PATH" went).  Prints
 * "OP ARG...: RESULT" per line, or "FAIL OP ARG...: RESULT, want WANT"
 * when WANT is not met.  Actions want "ok" unless told otherwise;
 * queries are only judged when the line gives a WANT.  A WANT of "!X"
 * takes any result but X, "A|B" either one, "<=N" a number up to N;
 * "@NAME" binds NAME to the result the first time and wants the same
 * result later on, up to the next "cd" (an errno result binds too).
 * Blank lines and # comments are skipped.
 *
 * Actions: create PATH [DATA] (O_EXCL), write PATH [DATA] (O_TRUNC),
 *   append PATH DATA, pwrite PATH OFFSET DATA, openw PATH (open for
 *   write, close), truncate PATH LEN, mkdir, rmdir, unlink PATH,
 *   symlink TARGET PATH, link OLD NEW, rename, noreplace, exchange OLD NEW
 *   (renameat2 flags), fifo PATH, sock PATH, chr PATH MAJ MIN,
 *   blk PATH MAJ MIN, tmpfile DIR NAME|- [DATA] (O_TMPFILE, then
 *   linkat AT_EMPTY_PATH), chmod PATH OCTAL, chown PATH UID GID,
 *   utimes PATH SECONDS, setxattr PATH NAME VALUE, removexattr PATH NAME,
 *   sync PATH (fsync, fdatasync, syncfs), become UID GID (drop root for
 *   the rest of the script), cd DIR, sameino A B, treecmp A B (dumps
 *   equal; the differences follow the line).
 * Queries: read PATH (up to 4 KiB, "(empty)"), getxattr PATH NAME,
 *   kind PATH (absent, file, dir, opaque-dir, "... redirect=R", symlink,
 *   whiteout, chr-whiteout, fifo, sock, chr, blk), map PATH (data
 *   extents), hash PATH (of the content), count DIR (entries), ino, links,
 *   mode, owner, size, blocks, mtime PATH.
 */
static int cmd_ops(int argc, char **argv)
{
	char line[8192], out[4096], echo[8192];
	unsigned long lineno = 0;

	if (argc > 1)
		return 2;
	if (argc == 1 && chdir(argv[0])) {
		perror(argv[0]);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *v[OPS_MAX_ARGS + 1] = { NULL }, *want = NULL, *w, *save;
		int n = 0, kind;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		echo[0] = '\0';
		for (w = strtok_r(line, " \t", &save); w;
		     w = strtok_r(NULL, " \t", &save)) {
			if (!strcmp(w, "=>")) {
				want = save + strspn(save, " \t");
				break;
			}
			if (n == OPS_MAX_ARGS || (n == 0 && w[0] == '#'))
				break;
			v[n++] = w;
			snprintf(echo + strlen(echo), sizeof(echo) - strlen(echo),
				 "%s%s", n > 1 ? " " : "", w);
		}
		if (!n || v[0][0] == '#')
			continue;
		kind = ops_run(v, n, out, sizeof(out));
		if (kind < 0) {
			fprintf(stderr, "ops: line %lu: cannot parse \"%s\"\n",
				lineno, echo);
			return 2;
		}
		if (!want && kind == 0)
			want = "ok";
		if (want && !ops_met(out, want)) {
			printf("FAIL %s: %s, want %s\n", echo, out, want);
			failures++;
		} else {
			printf("%s: %s\n", echo, out);
		}
		fflush(stdout);
	}
	return failures ? 1 : 0;
}

/*
 * race: N processes wait at a common start line, then each opens FILE
 * for write (the first write open of a lower file copies it up) and
 * writes the byte 'A' + i at offset i.  Prints "N writers: ok" or one
 * line per writer that failed.
 */
static int cmd_race(int argc, char **argv)
{
	int i, n, gate[2], status, bad = 0;
	char c;

	n = argc == 2 ? atoi(argv[0]) : 0;
	if (n < 1 || n > 26)
		return 2;
	if (pipe(gate))
		return 2;
	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 2;
		if (pid == 0) {
			int fd, err = 0;

			close(gate[1]);
			/* EOF once the parent closes its end: all start */
			if (read(gate[0], &c, 1) < 0)
				_exit(3);
			c = 'A' + i;
			fd = open(argv[1], O_WRONLY);
			if (fd < 0 || pwrite(fd, &c, 1, i) != 1)
				err = errno;
			if (fd >= 0 && close(fd))
				err = errno;
			if (err)
				dprintf(1, "writer %d: %s\n", i,
					strerrorname_np(err));
			_exit(err ? 1 : 0);
		}
	}
	close(gate[0]);
	close(gate[1]);
	while (wait(&status) > 0)
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	if (!bad)
		printf("%d writers: ok\n", n);
	return bad ? 1 : 0;
}

static int cmd_mount2(int argc, char **argv)
{
	unsigned long flags = 0;

	if (argc < 3)
		return 2;
	if (argc > 3 && strstr(argv[3], "ro"))
		flags |= MS_RDONLY;
	if (argc > 3 && strstr(argv[3], "remount"))
		flags |= MS_REMOUNT;
	report("mount", mount("none", argv[1], argv[0], flags, argv[2]));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: lfs-probe dino|seekdir|fileops|writecalls|stat|mktree|dump|meta|ops|race ARGS\n");
		return 2;
	}
	if (!strcmp(argv[1], "dino"))
		return cmd_dino(argc - 2, argv + 2);
	if (!strcmp(argv[1], "seekdir"))
		return cmd_seekdir(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fileops"))
		return cmd_fileops(argc - 2, argv + 2);
	if (!strcmp(argv[1], "writecalls"))
		return cmd_writecalls(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mount2"))
		return cmd_mount2(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mktree"))
		return cmd_mktree(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 2, argv + 2);
	if (!strcmp(argv[1], "meta"))
		return cmd_meta(argc - 2, argv + 2);
	if (!strcmp(argv[1], "ops"))
		return cmd_ops(argc - 2, argv + 2);
	if (!strcmp(argv[1], "race"))
		return cmd_race(argc - 2, argv + 2);
	fprintf(stderr, "lfs-probe: unknown command %s\n", argv[1]);
	return 2;
}
