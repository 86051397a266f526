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
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <sys/sysmacros.h>

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

static void dump_xattrs(const char *path, char *out, size_t size)
{
	char names[4096], val[256];
	ssize_t len = llistxattr(path, names, sizeof(names)), i;

	out[0] = '\0';
	for (i = 0; i < len; i += strlen(names + i) + 1) {
		ssize_t vl;

		if (strncmp(names + i, "user.", 5) &&
		    strncmp(names + i, "trusted.", 8))
			continue;
		vl = lgetxattr(path, names + i, val, sizeof(val) - 1);
		val[vl < 0 ? 0 : vl] = '\0';
		snprintf(out + strlen(out), size - strlen(out), " %s=%s",
			 names + i, val);
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
		dump_xattrs(path, xat, sizeof(xat));
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_dump(int argc, char **argv)
{
	struct dump d = { 0 };
	size_t i;

	if (argc != 1)
		return 2;
	d.root_len = strlen(argv[0]) + 1;
	dump_walk(&d, argv[0]);
	qsort(d.lines, d.n, sizeof(*d.lines), cmp_str);
	for (i = 0; i < d.n; i++)
		printf("%s\n", d.lines[i]);
	return failures ? 1 : 0;
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
		fprintf(stderr, "usage: lfs-probe dino|seekdir|fileops|writecalls|stat|mktree|dump ARGS\n");
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
	fprintf(stderr, "lfs-probe: unknown command %s\n", argv[1]);
	return 2;
}
