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
 *   lfs-probe dirshare DIR NEW   offsets of one open of DIR lead to the same
 *                                entries in another; after NEW is created
 *                                in DIR, the first open still reads what it
 *                                read (seekdir to its second entry: offset
 *                                0 is a rewind), a new open and a rewinddir
 *                                list NEW too
 *   lfs-probe smallbuf DIR SIZE  getdents64 into SIZE-byte buffers, a name
 *                                a line; each d_off read leads, in another
 *                                open, to the name that followed
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
 *   lfs-probe dump [-p] [-x FIELD,...] [-H BOUND] DIR
 *                                one sorted line per entry under DIR with
 *                                every property two views of the same
 *                                layers share: type, mode, owner, size,
 *                                link target, content hash, rdev, link
 *                                count, hard-link group, blocks, mtime,
 *                                every xattr in full; -x and -p leave out
 *                                what differs by design (see "dump and
 *                                meta" below); -H: files above 2 BOUND
 *                                bytes hash their first and last BOUND
 *   lfs-probe meta DIR           every field of every object under DIR and
 *                                of DIR, but atime: inode numbers, ctimes
 *                                and trusted.overlay.* too, to prove a
 *                                lower layer unchanged
 *   lfs-probe flatten [-a] OUT LAYER...
 *                                build at OUT, without layerfs, the tree a
 *                                read-only mount of the LAYERs (top first)
 *                                shows (see "flatten" below); -a: whiteout=aufs
 *   lfs-probe ops [DIR] < SCRIPT run file-system operations, one a line,
 *                                in DIR; one result line each (see cmd_ops())
 *   lfs-probe race N FILE        N processes open FILE for write at once and
 *                                each writes one byte at offset i
 *   lfs-probe handoff TYPE LOWERDIR
 *                                a child in a user namespace of its own
 *                                opens a mount context of TYPE and gives
 *                                it lowerdir=LOWERDIR; this process, in
 *                                its own namespace, takes the context
 *                                (pidfd_getfd) and creates the mount:
 *                                prints "create: ok" or "create: ERRNO"
 *   lfs-probe linkup FILE...     LFS_IOC_LINK_UP on each FILE, opened for
 *                                reading: "FILE: 0", "FILE: 1" or the errno
 *   lfs-probe linkupat DIR NAME...
 *                                LFS_IOC_LINK_UP_AT on DIR for each NAME:
 *                                "NAME: 0", "NAME: 1" or the errno; a NAME
 *                                "len=N,TEXT" passes TEXT with namelen N
 *                                (NULs after it), "flags=F,TEXT" flags F
 *   lfs-probe idmap SRC DST [MAP]
 *                                bind SRC at DST as an idmapped mount that
 *                                shows ids 0-65535 as 100000-165535, or as
 *                                MAP says: uid_map lines "FS MOUNT COUNT"
 *                                joined by ',' (for uids and gids alike)
 *   lfs-probe userns CMD [ARG...]
 *                                run CMD as root of a new user namespace
 *                                that maps ids 0-65535 to 100000-165535,
 *                                in a new mount namespace of its own
 *                                (all mounts private); its exit status
 *   lfs-probe fdparam KEY PATH [detached]
 *                                fsopen layerfs, fsconfig(FSCONFIG_SET_FD,
 *                                KEY) of PATH opened for reading (or of a
 *                                detached clone of its mount tree:
 *                                open_tree(OPEN_TREE_CLONE)), then create:
 *                                "fsconfig: OK|ERRNO", "create: OK|ERRNO"
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
#include <sched.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <grp.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>

#include "uapi/layerfs.h"

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

/* read @d from where it is to the end: how many entries, is @name one? */
static size_t read_rest(DIR *d, const char *name, bool *seen)
{
	struct dirent *de;
	size_t n = 0;

	*seen = false;
	while ((de = readdir(d))) {
		*seen |= !strcmp(de->d_name, name);
		n++;
	}
	return n;
}

/* every entry of @d from where it is, with its telldir() position */
static struct pos_name *read_positions(DIR *d, size_t *count)
{
	struct pos_name *ents = NULL, *more;
	size_t n = 0, cap = 0;
	struct dirent *de;

	for (;;) {
		long pos = telldir(d);

		de = readdir(d);
		if (!de)
			break;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			more = realloc(ents, cap * sizeof(*ents));
			if (!more) {
				free(ents);
				return NULL;
			}
			ents = more;
		}
		ents[n].pos = pos;
		snprintf(ents[n].name, sizeof(ents[n].name), "%s", de->d_name);
		n++;
	}
	*count = n;
	return ents ? ents : calloc(1, sizeof(*ents));
}

static int cmd_dirshare(int argc, char **argv)
{
	struct pos_name *ents;
	size_t n = 0, i, snap, fresh, rewound;
	bool seen_snap, seen_fresh, seen_rewound;
	struct dirent *de;
	DIR *d1, *d2, *d3;
	char path[PATH_MAX];
	int fd;

	if (argc != 2)
		return 2;
	d1 = opendir(argv[0]);
	d3 = opendir(argv[0]);
	if (!d1 || !d3) {
		perror(argv[0]);
		return 1;
	}
	ents = read_positions(d1, &n);
	if (!ents)
		return 2;
	/* the other open, at the first one's offsets, scrambled */
	for (i = 0; i < n && i < 500; i++) {
		size_t k = (i * 7919) % n;

		seekdir(d3, ents[k].pos);
		de = readdir(d3);
		if (!de || strcmp(de->d_name, ents[k].name))
			fail("second open at %s's offset gave %s", ents[k].name,
			     de ? de->d_name : "(end)");
	}
	snprintf(path, sizeof(path), "%s/%s", argv[0], argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	close(fd);
	/* offset 0 is rewinddir()'s: from the second entry on */
	if (n < 2)
		return 2;
	seekdir(d1, ents[1].pos);
	snap = read_rest(d1, argv[1], &seen_snap);
	d2 = opendir(argv[0]);
	if (!d2) {
		perror(argv[0]);
		return 1;
	}
	fresh = read_rest(d2, argv[1], &seen_fresh);
	rewinddir(d1);
	rewound = read_rest(d1, argv[1], &seen_rewound);
	closedir(d1);
	closedir(d2);
	closedir(d3);
	free(ents);
	printf("%zu entries; snapshot %zu%s; new open %zu%s; rewind %zu%s\n",
	       n, snap, seen_snap ? " with it" : "", fresh,
	       seen_fresh ? " with it" : "", rewound,
	       seen_rewound ? " with it" : "");
	return failures ? 1 : 0;
}

/* getdents64 records, as the kernel writes them */
struct probe_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * One getdents64 of at most @size bytes at @pos: the first record's name
 * into @name and its d_off into *@next; 0 at the end, -1 on error.
 */
static int getdents_one(int fd, long pos, size_t size, char *name,
			long *next)
{
	char buf[4096] __attribute__((aligned(8)));
	struct probe_dirent64 *de = (struct probe_dirent64 *)buf;
	long n;

	if (lseek(fd, pos, SEEK_SET) < 0)
		return -1;
	n = syscall(SYS_getdents64, fd, buf, size);
	if (n <= 0)
		return n;
	/* a name is at most NAME_MAX bytes */
	memcpy(name, de->d_name, strnlen(de->d_name, 255));
	name[strnlen(de->d_name, 255)] = '\0';
	*next = de->d_off;
	return 1;
}

/*
 * lfs-probe smallbuf DIR SIZE: list DIR with getdents64 into SIZE-byte
 * buffers, one name a line; then in a second open, seek to each d_off
 * read and check the next name is the one that followed.
 */
static int cmd_smallbuf(int argc, char **argv)
{
	struct pos_name *ents = NULL;
	size_t n = 0, cap = 0, i, size;
	long pos = 0, next;
	char name[256];
	int fd, r;

	if (argc != 2)
		return 2;
	size = strtoul(argv[1], NULL, 0);
	if (size > 4096)
		return 2;
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[0]);
		return 1;
	}
	while ((r = getdents_one(fd, pos, size, name, &next)) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			ents = realloc(ents, cap * sizeof(*ents));
			if (!ents)
				return 2;
		}
		ents[n].pos = pos;
		snprintf(ents[n].name, sizeof(ents[n].name), "%s", name);
		printf("%s\n", name);
		n++;
		pos = next;
	}
	if (r < 0) {
		perror(argv[0]);
		return 1;
	}
	close(fd);
	fd = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[0]);
		return 1;
	}
	/* each position read in the first open, from the last one back */
	for (i = n; i-- > 0;) {
		r = getdents_one(fd, ents[i].pos, size, name, &next);
		if (r <= 0 || strcmp(name, ents[i].name))
			fail("reopen at %s's offset gave %s", ents[i].name,
			     r > 0 ? name : "(end)");
	}
	close(fd);
	free(ents);
	return failures ? 1 : 0;
}

static int cmd_seekdir(int argc, char **argv)
{
	struct pos_name *ents;
	size_t n = 0, i, again = 0;
	struct dirent *de;
	DIR *d;

	if (argc != 1)
		return 2;
	d = opendir(argv[0]);
	if (!d) {
		perror(argv[0]);
		return 1;
	}
	ents = read_positions(d, &n);
	if (!ents)
		return 2;
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

/*
 * mkdir -p for the parents of @path.  Every directory of the path
 * before it is there (a spec never removes anything), so the parents
 * the two share are not made again: 31k of the 55k system calls of a
 * 4096-layer spec were mkdirs failing with EEXIST.
 */
static void make_parents(char *path)
{
	static char known[PATH_MAX];
	char *s = path, *last;
	size_t i;

	/* the longest leading part of both that ends at a '/' of @path */
	for (i = 0; known[i] && known[i] == path[i]; i++)
		if (path[i] == '/')
			s = path + i;
	if (!known[i] && path[i] == '/')
		s = path + i;
	for (s = strchr(s + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	last = strrchr(path, '/');
	if (last && last - path < PATH_MAX) {
		memcpy(known, path, last - path);
		known[last - path] = '\0';
	}
}

static void set_marker(const char *path, const char *name, const char *val)
{
	if (lsetxattr(path, name, val, strlen(val), 0))
		fail("setxattr %s: %s", path, strerror(errno));
}

/* xattr @name of @path (not behind it): @val as text, or "0xHEX" */
static int set_xattr_arg(const char *path, const char *name, const char *val)
{
	unsigned char bin[2048];
	size_t n = 0;
	unsigned int byte;

	if (strncmp(val, "0x", 2))
		return lsetxattr(path, name, val, strlen(val), 0);
	for (val += 2; val[0] && n < sizeof(bin); val += 2) {
		if (sscanf(val, "%2x", &byte) != 1 || !val[1]) {
			errno = EINVAL;
			return -1;
		}
		bin[n++] = byte;
	}
	if (val[0]) {
		errno = E2BIG;
		return -1;
	}
	return lsetxattr(path, name, bin, n, 0);
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
 *   T PATH SIZE          sparse file of SIZE bytes, no data (a hole)
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
 *   s PATH               unix socket (mknod)
 *   a PATH NAME VALUE    set an xattr; a VALUE "0xHEX" is binary (a POSIX
 *                        ACL, a value with NULs), "0x" an empty value
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
		case 'T':
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || ftruncate(fd, atoll(a1)))
				ret = -1;
			if (fd >= 0)
				close(fd);
			break;
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
		case 's':
			ret = mknod(path, (op[0] == 'p' ? S_IFIFO : S_IFSOCK) | 0644, 0);
			break;
		case 'c':
		case 'b':
			ret = mknod(path, (op[0] == 'c' ? S_IFCHR : S_IFBLK) | 0644,
				    makedev(atoi(a1), atoi(a2)));
			break;
		case 'a':
			ret = set_xattr_arg(path, a1, a2);
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

/*
 * ---- dump and meta ----
 *
 * dump: one line per object under DIR (DIR itself left out), sorted by
 * path, with every property that two views of the same layers must
 * agree on (layerfs and the kernel's overlay over the same layers, or
 * one mount before and after a remount):
 *
 *   PATH TYPE MODE UID:GID SIZE[ -> TARGET] HASH[ dev=MAJ:MIN] nl=N
 *   [hl=FIRST] [ds=N] bl=N mt=SEC.NSEC[ NAME=VALUE...]
 *
 * TYPE as ls -l shows it ('-' for a regular file), MODE in octal, SIZE 0
 * for a directory (its st_size is ds=), HASH of the content (FNV-1a, 0
 * but for regular files), dev= the rdev of devices, nl= the link count,
 * hl= the first path (in sorted order, since inode numbers and readdir
 * order differ between views) of the non-directories that share its
 * inode, bl= st_blocks, mt= the mtime in ns, then every xattr of every
 * namespace (user, trusted, security, system: POSIX ACLs) with its whole
 * value, names sorted; a value that is not plain text (spaces, bytes
 * outside printable ASCII, a backslash, or a leading "0x") is written
 * "0x" and hex.
 *
 * Never printed: st_ino and st_dev (each view numbers its own), atime
 * (reads change it) and ctime (a copy or a copy-up cannot set it).
 * Directory attributes are the top-most part's in layerfs as in overlay
 * (read-side.md), so they are printed, but a merged directory has
 * nlink 1 where a plain tree counts subdirectories, and its size and
 * blocks are its top part's, which count entries the merged view hides:
 * -x dirs leaves those three out.
 *
 * -x FIELD[,FIELD...] leaves out what a comparison cannot expect to be
 * equal, by design:
 *   mtime    every mtime: a tree built from a spec, or written at another
 *            moment, has other times
 *   dirs     nlink, size (ds=) and blocks of directories (see above)
 *   blocks   st_blocks: filesystem specific (tmpfs and ext4 differ), and
 *            on ext4 an xattr that does not fit the inode takes a block
 *   overlay  trusted.overlay.* and user.overlay.* xattrs (the markers,
 *            the second with userxattr): a raw upper layer holds them,
 *            the mount hides them
 *   nlink    nl= and hl= of non-directories: a lower file keeps its link
 *            count where a link of it is hidden
 * -p: -x mtime,dirs,blocks, for a tree made on its own (expect_tree's
 * reference, a plain copy that a script wrote at other times).
 *
 * meta: the bit-for-bit record of a plain directory tree (a lower layer
 * that must not change), DIR itself as ".": every field of every object,
 * directories too: type, mode, owner, size, link count, inode number,
 * blocks, rdev, content hash, symlink target, mtime and ctime in ns, and
 * every xattr, trusted.overlay.* included.  Only atime is left out: the
 * files are read with O_NOATIME where the kernel allows it, and a read
 * that does set atime changes no other field.  Take the snapshot after
 * the test's own set-up (chmod, setfattr, utimes set ctime) and outside
 * the tree (the file it is written to must not be in it).
 */

/* the fields dump -x can leave out */
#define DX_MTIME	0x01
#define DX_DIRS		0x02
#define DX_BLOCKS	0x04
#define DX_OVERLAY	0x08
#define DX_NLINK	0x10
/* dump -p */
#define DX_PLAIN	(DX_MTIME | DX_DIRS | DX_BLOCKS)

static const struct {
	const char *name;
	unsigned int bit;
} dump_fields[] = {
	{ "mtime", DX_MTIME }, { "dirs", DX_DIRS }, { "blocks", DX_BLOCKS },
	{ "overlay", DX_OVERLAY }, { "nlink", DX_NLINK },
};

struct dump_ent {
	char *path;		/* relative to the root; "." is the root */
	struct stat st;		/* lstat() of it */
	const char *group;	/* first path of its hard-link group, or NULL */
	char *line;		/* what the dump prints for it */
};

struct dump {
	struct dump_ent *ents;
	size_t n, cap;
	size_t root_len;	/* strlen(root) + 1 */
	bool raw;		/* meta: every field, the root too */
	unsigned int excl;	/* DX_* left out */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		fprintf(stderr, "lfs-probe: out of memory\n");
		exit(2);
	}
	return p;
}

/*
 * The xattr names of @path into *@buf (NUL-separated, freed by the
 * caller): their total length, or -1 with errno set.  Sized first, so
 * any number of names fits.
 */
static ssize_t xattr_names(const char *path, char **buf)
{
	ssize_t len;

	*buf = NULL;
	for (;;) {
		len = llistxattr(path, NULL, 0);
		if (len <= 0)
			return len;
		*buf = xrealloc(*buf, len);
		len = llistxattr(path, *buf, len);
		if (len >= 0 || errno != ERANGE)
			return len;
	}
}

/* The value of xattr @name of @path into *@val (whole): length, or -1. */
static ssize_t xattr_value(const char *path, const char *name, char **val)
{
	ssize_t len;

	*val = NULL;
	for (;;) {
		len = lgetxattr(path, name, NULL, 0);
		if (len < 0)
			return len;
		*val = xrealloc(*val, len);
		len = lgetxattr(path, name, *val, len);
		if (len >= 0 || errno != ERANGE)
			return len;
	}
}

/* an xattr value as text, or "0x" and hex when it is not plain text */
static void put_value(FILE *m, const unsigned char *v, ssize_t n)
{
	bool text = n > 0 && !(n >= 2 && v[0] == '0' && v[1] == 'x');
	ssize_t i;

	for (i = 0; i < n && text; i++)
		if (v[i] <= ' ' || v[i] > '~' || v[i] == '\\')
			text = false;
	if (text) {
		fwrite(v, 1, n, m);
		return;
	}
	fputs("0x", m);
	for (i = 0; i < n; i++)
		fprintf(m, "%02x", v[i]);
}

/* " NAME=VALUE" for every xattr of @path, names sorted */
static void put_xattrs(FILE *m, const char *path, unsigned int excl)
{
	char *names, *val, **sorted;
	ssize_t len = xattr_names(path, &names), i;
	size_t n = 0, k;

	if (len < 0) {
		fprintf(m, " xattrs!%s", strerrorname_np(errno));
		return;
	}
	sorted = xrealloc(NULL, (len + 1) * sizeof(*sorted));
	for (i = 0; i < len; i += strlen(names + i) + 1) {
		if ((excl & DX_OVERLAY) &&
		    (!strncmp(names + i, "trusted.overlay.", 16) ||
		     !strncmp(names + i, "user.overlay.", 13)))
			continue;
		sorted[n++] = names + i;
	}
	qsort(sorted, n, sizeof(*sorted), cmp_str);
	for (k = 0; k < n; k++) {
		ssize_t vl = xattr_value(path, sorted[k], &val);

		if (vl < 0) {
			fprintf(m, " %s!%s", sorted[k], strerrorname_np(errno));
			continue;
		}
		fprintf(m, " %s=", sorted[k]);
		put_value(m, (unsigned char *)val, vl);
		free(val);
	}
	free(sorted);
	free(names);
}

/* dump -H: files above twice this size hash their head and tail only */
static off_t dump_hash_bound;

/* hash @len bytes at @pos of @fd into @h; a short read fails */
static uint64_t hash_fd_range(int fd, off_t pos, off_t len, uint64_t h)
{
	static unsigned char buf[65536];
	ssize_t r;

	while (len > 0) {
		r = pread(fd, buf, len < (off_t)sizeof(buf) ? len : (off_t)sizeof(buf), pos);
		if (r <= 0) {
			fail("pread stopped short%s%s", "", "");
			break;
		}
		h = hash_buf(buf, r, h);
		pos += r;
		len -= r;
	}
	return h;
}

/*
 * The content hash of regular file @path, read without touching atime:
 * of all of it, or with dump -H BOUND of its first and last BOUND bytes
 * when it is larger than twice that (the size is in the line anyway).
 */
static int hash_file(const char *path, off_t size, uint64_t *h)
{
	off_t b = dump_hash_bound;
	int fd = open(path, O_RDONLY | O_NOATIME | O_NONBLOCK);

	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (b && size > 2 * b)
		*h = hash_fd_range(fd, size - b, b,
				   hash_fd_range(fd, 0, b, HASH_INIT));
	else
		*h = hash_fd_read(fd, size);
	return close(fd);
}

static char type_char(mode_t mode)
{
	return "?pc?d?b?-?l?s???"[(mode >> 12) & 15];
}

/* the line of one object (see the head of this section) */
static char *dump_line(const struct dump *d, const struct dump_ent *e,
		       const char *path)
{
	const struct stat *st = &e->st;
	bool dir = S_ISDIR(st->st_mode);
	char target[PATH_MAX] = "", *line = NULL;
	size_t len = 0;
	uint64_t h = 0;
	FILE *m;

	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		target[n < 0 ? 0 : n] = '\0';
	} else if (S_ISREG(st->st_mode) && hash_file(path, st->st_size, &h)) {
		fail("open %s: %s", path, strerror(errno));
	}
	m = open_memstream(&line, &len);
	if (!m)
		exit(2);
	fprintf(m, "%s %c %o %u:%u", e->path, type_char(st->st_mode),
		st->st_mode & 07777, st->st_uid, st->st_gid);
	if (d->raw)
		fprintf(m, " size=%lld nl=%lu ino=%llu bl=%lld",
			(long long)st->st_size, (unsigned long)st->st_nlink,
			(unsigned long long)st->st_ino, (long long)st->st_blocks);
	else
		fprintf(m, " %lld", dir ? 0LL : (long long)st->st_size);
	if (target[0] || S_ISLNK(st->st_mode))
		fprintf(m, " -> %s", target);
	fprintf(m, " %016llx", (unsigned long long)h);
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		fprintf(m, " dev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
	if (d->raw) {
		fprintf(m, " mt=%lld.%09ld ct=%lld.%09ld",
			(long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec,
			(long long)st->st_ctim.tv_sec, st->st_ctim.tv_nsec);
		put_xattrs(m, path, 0);
		fclose(m);
		return line;
	}
	if (dir ? !(d->excl & DX_DIRS) : !(d->excl & DX_NLINK))
		fprintf(m, " nl=%lu", (unsigned long)st->st_nlink);
	if (e->group && !(d->excl & DX_NLINK))
		fprintf(m, " hl=%s", e->group);
	if (dir && !(d->excl & DX_DIRS))
		fprintf(m, " ds=%lld", (long long)st->st_size);
	if (!(d->excl & DX_BLOCKS) && !(dir && (d->excl & DX_DIRS)))
		fprintf(m, " bl=%lld", (long long)st->st_blocks);
	if (!(d->excl & DX_MTIME))
		fprintf(m, " mt=%lld.%09ld", (long long)st->st_mtim.tv_sec,
			st->st_mtim.tv_nsec);
	put_xattrs(m, path, d->excl);
	fclose(m);
	return line;
}

static void dump_add(struct dump *d, const char *path, const struct stat *st)
{
	struct dump_ent *e;

	if (d->n == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 1024;
		d->ents = xrealloc(d->ents, d->cap * sizeof(*d->ents));
	}
	e = &d->ents[d->n++];
	e->path = strdup(path[d->root_len - 1] ? path + d->root_len : ".");
	if (!e->path)
		exit(2);
	e->st = *st;
	e->group = NULL;
	e->line = NULL;
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
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st)) {
			fail("lstat %s: %s", path, strerror(errno));
			continue;
		}
		dump_add(d, path, &st);
		if (S_ISDIR(st.st_mode))
			dump_walk(d, path);
	}
	closedir(dh);
}

static int cmp_ent_path(const void *a, const void *b)
{
	return strcmp(((const struct dump_ent *)a)->path,
		      ((const struct dump_ent *)b)->path);
}

/* by device and inode, then by place (the array is sorted by path) */
static int cmp_ent_ino(const void *a, const void *b)
{
	const struct dump_ent *x = *(const struct dump_ent *const *)a;
	const struct dump_ent *y = *(const struct dump_ent *const *)b;

	if (x->st.st_dev != y->st.st_dev)
		return x->st.st_dev < y->st.st_dev ? -1 : 1;
	if (x->st.st_ino != y->st.st_ino)
		return x->st.st_ino < y->st.st_ino ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * Hard-link groups: the non-directories that share an inode get the
 * first of their paths, in sorted order, as the group's name.
 */
static void dump_groups(struct dump *d)
{
	struct dump_ent **by_ino = xrealloc(NULL, d->n * sizeof(*by_ino));
	size_t i, j, k;

	for (i = 0; i < d->n; i++)
		by_ino[i] = &d->ents[i];
	qsort(by_ino, d->n, sizeof(*by_ino), cmp_ent_ino);
	for (i = 0; i < d->n; i = j) {
		for (j = i + 1; j < d->n; j++)
			if (by_ino[j]->st.st_dev != by_ino[i]->st.st_dev ||
			    by_ino[j]->st.st_ino != by_ino[i]->st.st_ino)
				break;
		if (j - i < 2 || S_ISDIR(by_ino[i]->st.st_mode))
			continue;
		for (k = i; k < j; k++)
			by_ino[k]->group = by_ino[i]->path;
	}
	free(by_ino);
}

/* the dump of the tree under @dir into @d, sorted by path */
static void dump_tree(struct dump *d, const char *dir, bool raw,
		      unsigned int excl)
{
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	memset(d, 0, sizeof(*d));
	d->raw = raw;
	d->excl = excl;
	d->root_len = strlen(dir) + 1;
	if (raw) {
		if (lstat(dir, &st))
			fail("lstat %s: %s", dir, strerror(errno));
		else
			dump_add(d, dir, &st);
	}
	dump_walk(d, dir);
	qsort(d->ents, d->n, sizeof(*d->ents), cmp_ent_path);
	dump_groups(d);
	for (i = 0; i < d->n; i++) {
		if (strcmp(d->ents[i].path, "."))
			snprintf(path, sizeof(path), "%s/%s", dir, d->ents[i].path);
		else
			snprintf(path, sizeof(path), "%s", dir);
		d->ents[i].line = dump_line(d, &d->ents[i], path);
	}
}

static void dump_free(struct dump *d)
{
	while (d->n) {
		d->n--;
		free(d->ents[d->n].path);
		free(d->ents[d->n].line);
	}
	free(d->ents);
}

static int dump_print(const char *dir, bool raw, unsigned int excl)
{
	struct dump d;
	size_t i;

	dump_tree(&d, dir, raw, excl);
	for (i = 0; i < d.n; i++)
		printf("%s\n", d.ents[i].line);
	dump_free(&d);
	return failures ? 1 : 0;
}

/* "-x FIELD[,FIELD...]" into DX_* bits: 0, or -1 for an unknown field */
static int dump_parse_fields(const char *list, unsigned int *excl)
{
	char buf[256], *w, *save;
	size_t i;

	snprintf(buf, sizeof(buf), "%s", list);
	for (w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(dump_fields); i++)
			if (!strcmp(w, dump_fields[i].name))
				break;
		if (i == ARRAY_SIZE(dump_fields)) {
			fprintf(stderr, "lfs-probe: dump -x %s: no field %s (mtime, dirs, blocks, overlay, nlink)\n",
				list, w);
			return -1;
		}
		*excl |= dump_fields[i].bit;
	}
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	unsigned int excl = 0;

	while (argc > 1 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "-p")) {
			excl |= DX_PLAIN;
		} else if (!strcmp(argv[0], "-x") && argc > 2) {
			if (dump_parse_fields(argv[1], &excl))
				return 2;
			argc--;
			argv++;
		} else if (!strcmp(argv[0], "-H") && argc > 2) {
			dump_hash_bound = strtoll(argv[1], NULL, 10);
			if (dump_hash_bound <= 0)
				return 2;
			argc--;
			argv++;
		} else {
			break;
		}
		argc--;
		argv++;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: lfs-probe dump [-p] [-x FIELD[,FIELD...]] [-H BOUND] DIR\n");
		return 2;
	}
	return dump_print(argv[0], false, excl);
}

static int cmd_meta(int argc, char **argv)
{
	if (argc != 1)
		return 2;
	return dump_print(argv[0], true, 0);
}

/*
 * ---- flatten ----
 *
 * flatten [-a] OUT LAYER...: the tree a read-only layerfs mount of the
 * LAYERs (top first) shows, built as a plain tree at OUT without
 * layerfs, by the rules of docs/read-side.md, so that it can be the
 * reference of a differential test.  For each directory, its instances
 * in the layers are read top-down and a name is decided by the first
 * instance that holds it:
 *   - a whiteout hides it: a symlink to LFS_WHITEOUT_TARGET with
 *     LFS_XATTR_WHITEOUT "y", a character device 0/0, or an empty
 *     regular file with LFS_XATTR_WHITEOUT "y" in an instance whose
 *     LFS_XATTR_OPAQUE is "x" (markers are read as layerfs reads them:
 *     the one byte, exactly);
 *   - a non-directory is copied;
 *   - a directory merges its instances in the instances below, down to
 *     one that is opaque (LFS_XATTR_OPAQUE "y"), the first that holds a
 *     non-directory (whiteouts too), or the end.
 * The layers' roots are never opaque and never hold empty-file
 * whiteouts, as in layerfs.  With -a (whiteout=aufs): names starting
 * with ".wh." are never shown; ".wh.NAME" hides NAME in the instances
 * below its own; a directory instance holding ".wh..wh..opq", or beside
 * its own ".wh.NAME", is the last one; an instance that lacks NAME but
 * holds ".wh.NAME" ends the merge.
 *
 * What is copied: type, data (holes kept: only SEEK_DATA ranges are
 * written), symlink targets, rdev, owner, every xattr but
 * trusted.overlay.* (the mount hides them all), mode, atime and mtime; a
 * directory takes those of its top instance.  Non-directories that share
 * an inode in the layers (within a layer or across layers) are hard
 * links in OUT.  What a plain tree cannot copy: ctime and inode numbers;
 * the link count of a merged directory (the mount shows 1) and its size
 * and blocks; the link count of a file a link of which is hidden (the
 * mount shows the lower count).  Compare with dump -x dirs, and keep
 * hidden links out of the layers.
 */

struct fl_part {
	char *path;		/* the directory's instance in one layer */
	bool xwh;		/* holds empty-file whiteouts (opaque "x") */
};

struct fl_link {
	dev_t dev;
	ino_t ino;
	char *out;		/* its first copy */
};

struct flat {
	bool aufs;		/* -a: whiteout=aufs */
	struct fl_link *links;	/* copied files with several links */
	size_t nlinks;
	int errors;
};

static void fl_error(struct flat *f, const char *what, const char *path)
{
	fprintf(stderr, "lfs-probe: flatten: %s: %s: %s\n", path, what,
		strerror(errno));
	f->errors++;
}

/* is the marker xattr @name of @path the one byte @want, as layerfs reads it? */
static bool fl_marker(const char *path, const char *name, char want)
{
	char v[2];

	return lgetxattr(path, name, v, sizeof(v)) == 1 && v[0] == want;
}

static bool fl_is_aufs_name(const char *name)
{
	return !strncmp(name, LFS_AUFS_WHITEOUT_PREFIX,
			sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1);
}

/* does directory @dir hold @prefix@name? */
static bool fl_holds(const char *dir, const char *prefix, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s%s", dir, prefix, name);
	return !lstat(path, &st);
}

static bool fl_is_whiteout(const char *path, const struct stat *st, bool xwh)
{
	char target[sizeof(LFS_WHITEOUT_TARGET)];
	ssize_t n;

	switch (st->st_mode & S_IFMT) {
	case S_IFCHR:
		return st->st_rdev == makedev(0, 0);
	case S_IFLNK:
		if (st->st_size != sizeof(LFS_WHITEOUT_TARGET) - 1 ||
		    !fl_marker(path, LFS_XATTR_WHITEOUT, LFS_XATTR_TRUE[0]))
			return false;
		n = readlink(path, target, sizeof(target));
		return n == sizeof(target) - 1 &&
		       !memcmp(target, LFS_WHITEOUT_TARGET, n);
	case S_IFREG:
		return xwh && st->st_size == 0 &&
		       fl_marker(path, LFS_XATTR_WHITEOUT, LFS_XATTR_TRUE[0]);
	}
	return false;
}

/* a directory instance: is it opaque?  *@xwh: does it hold xwhiteouts? */
static bool fl_dir_marker(const struct flat *f, const char *path, bool *xwh)
{
	*xwh = fl_marker(path, LFS_XATTR_OPAQUE, 'x');
	if (fl_marker(path, LFS_XATTR_OPAQUE, LFS_XATTR_TRUE[0]))
		return true;
	return f->aufs && fl_holds(path, "", LFS_AUFS_OPAQUE_NAME);
}

/* owner, xattrs but trusted.overlay.*, mode, times of @src onto @dst */
static void fl_attrs(struct flat *f, const char *src, const char *dst,
		     const struct stat *st)
{
	struct timespec ts[2] = { st->st_atim, st->st_mtim };
	char *names, *val;
	ssize_t len, i, vl;

	if (lchown(dst, st->st_uid, st->st_gid))
		fl_error(f, "lchown", dst);
	len = xattr_names(src, &names);
	if (len < 0)
		fl_error(f, "listxattr", src);
	for (i = 0; i < len; i += strlen(names + i) + 1) {
		if (!strncmp(names + i, LFS_XATTR_PREFIX,
			     sizeof(LFS_XATTR_PREFIX) - 1))
			continue;
		vl = xattr_value(src, names + i, &val);
		if (vl < 0 || lsetxattr(dst, names + i, val, vl, 0))
			fl_error(f, names + i, vl < 0 ? src : dst);
		free(val);
	}
	free(names);
	/* after chown (which clears set-id bits) and the ACLs */
	if (!S_ISLNK(st->st_mode) && chmod(dst, st->st_mode & 07777))
		fl_error(f, "chmod", dst);
	if (utimensat(AT_FDCWD, dst, ts, AT_SYMLINK_NOFOLLOW))
		fl_error(f, "utimensat", dst);
}

/* the data of @src into a new file @dst: only its data ranges, holes kept */
static int fl_copy_data(const char *src, const char *dst, off_t size)
{
	static char buf[65536];
	int in, out, err = 0;
	off_t off = 0, data, hole;
	ssize_t n;

	in = open(src, O_RDONLY | O_NOATIME);
	if (in < 0 && errno == EPERM)
		in = open(src, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	while (off < size && !err) {
		data = lseek(in, off, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		hole = data < 0 ? size : lseek(in, data, SEEK_HOLE);
		if (data < 0)
			data = off;
		for (off = data; off < hole && !err; off += n) {
			n = pread(in, buf, hole - off < (off_t)sizeof(buf) ?
				  hole - off : (off_t)sizeof(buf), off);
			if (n <= 0 || pwrite(out, buf, n, off) != n)
				err = -1;
		}
	}
	if (!err && ftruncate(out, size))
		err = -1;
	close(in);
	if (close(out))
		err = -1;
	return err;
}

/* a copy of the non-directory @src at @dst, or a link to its first copy */
static void fl_copy(struct flat *f, const char *src, const char *dst,
		    const struct stat *st)
{
	char target[PATH_MAX];
	size_t i;
	ssize_t n;
	int ret;

	for (i = 0; st->st_nlink > 1 && i < f->nlinks; i++) {
		if (f->links[i].dev == st->st_dev && f->links[i].ino == st->st_ino) {
			if (link(f->links[i].out, dst))
				fl_error(f, "link", dst);
			return;
		}
	}
	switch (st->st_mode & S_IFMT) {
	case S_IFREG:
		ret = fl_copy_data(src, dst, st->st_size);
		break;
	case S_IFLNK:
		n = readlink(src, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		ret = n < 0 ? -1 : symlink(target, dst);
		break;
	default:
		ret = mknod(dst, (st->st_mode & S_IFMT) | 0600, st->st_rdev);
	}
	if (ret) {
		fl_error(f, "copy", dst);
		return;
	}
	fl_attrs(f, src, dst, st);
	if (st->st_nlink > 1) {
		f->links = xrealloc(f->links, (f->nlinks + 1) * sizeof(*f->links));
		f->links[f->nlinks].dev = st->st_dev;
		f->links[f->nlinks].ino = st->st_ino;
		f->links[f->nlinks].out = strdup(dst);
		f->nlinks++;
	}
}

/* the names in directory @path, sorted, NULL-terminated; NULL on error */
static char **fl_names(const char *path, size_t *count)
{
	DIR *d = opendir(path);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;

	if (!d)
		return NULL;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		v = xrealloc(v, (n + 2) * sizeof(*v));
		v[n++] = strdup(de->d_name);
	}
	closedir(d);
	v = xrealloc(v, (n + 1) * sizeof(*v));
	v[n] = NULL;
	qsort(v, n, sizeof(*v), cmp_str);
	*count = n;
	return v;
}

static void fl_free_names(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* names already decided in a merged directory: sorted, for bsearch */
struct fl_seen {
	char **names;
	size_t n, sorted;
};

static bool fl_seen_has(const struct fl_seen *s, const char *name)
{
	return s->sorted && bsearch(&name, s->names, s->sorted,
				    sizeof(*s->names), cmp_str);
}

/* added names count once fl_seen_sort() ran: one instance's names are distinct */
static void fl_seen_add(struct fl_seen *s, const char *name)
{
	s->names = xrealloc(s->names, (s->n + 1) * sizeof(*s->names));
	s->names[s->n++] = strdup(name);
}

static void fl_seen_sort(struct fl_seen *s)
{
	qsort(s->names, s->n, sizeof(*s->names), cmp_str);
	s->sorted = s->n;
}

static void fl_dir(struct flat *f, const char *out, const struct fl_part *parts,
		   size_t np);

/*
 * @name, a directory in instance @p of @parts: make it at @dst and merge
 * it with its instances below, as lookup does.
 */
static void fl_subdir(struct flat *f, const char *dst, const struct fl_part *parts,
		      size_t np, size_t p, const char *name, const struct stat *st)
{
	struct fl_part *sub = xrealloc(NULL, (np - p) * sizeof(*sub));
	size_t n = 0, q;
	bool last;

	for (q = p; q < np; q++) {
		struct stat qs;
		char *path;

		if (asprintf(&path, "%s/%s", parts[q].path, name) < 0)
			exit(2);
		if (q > p && lstat(path, &qs)) {
			free(path);
			/* no NAME, but ".wh.NAME": the end of the merge */
			if (f->aufs && fl_holds(parts[q].path, LFS_AUFS_WHITEOUT_PREFIX, name))
				break;
			continue;
		}
		if (q > p && !S_ISDIR(qs.st_mode)) {
			free(path);
			break;
		}
		last = fl_dir_marker(f, path, &sub[n].xwh);
		sub[n++].path = path;
		/* beside its own aufs whiteout, a directory is the last part */
		if (last || (f->aufs && fl_holds(parts[q].path, LFS_AUFS_WHITEOUT_PREFIX, name)))
			break;
	}
	if (mkdir(dst, 0700)) {
		fl_error(f, "mkdir", dst);
	} else {
		fl_dir(f, dst, sub, n);
		fl_attrs(f, sub[0].path, dst, st);
	}
	while (n)
		free(sub[--n].path);
	free(sub);
}

/* the merged directory of @parts (top first) into the existing @out */
static void fl_dir(struct flat *f, const char *out, const struct fl_part *parts,
		   size_t np)
{
	struct fl_seen seen = { NULL, 0, 0 };
	char src[PATH_MAX], dst[PATH_MAX];
	size_t p, i, count;

	for (p = 0; p < np; p++) {
		char **names = fl_names(parts[p].path, &count);

		if (!names) {
			fl_error(f, "opendir", parts[p].path);
			continue;
		}
		for (i = 0; i < count; i++) {
			const char *name = names[i];
			struct stat st;

			if ((f->aufs && fl_is_aufs_name(name)) || fl_seen_has(&seen, name))
				continue;
			fl_seen_add(&seen, name);
			snprintf(src, sizeof(src), "%s/%s", parts[p].path, name);
			snprintf(dst, sizeof(dst), "%s/%s", out, name);
			if (lstat(src, &st)) {
				fl_error(f, "lstat", src);
				continue;
			}
			if (fl_is_whiteout(src, &st, parts[p].xwh))
				continue;
			if (S_ISDIR(st.st_mode))
				fl_subdir(f, dst, parts, np, p, name, &st);
			else
				fl_copy(f, src, dst, &st);
		}
		/* aufs whiteouts hide what is below their instance */
		fl_seen_sort(&seen);
		for (i = 0; f->aufs && i < count; i++) {
			const char *hidden = names[i] + sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1;

			if (fl_is_aufs_name(names[i]) && hidden[0] &&
			    !fl_is_aufs_name(hidden) && !fl_seen_has(&seen, hidden))
				fl_seen_add(&seen, hidden);
		}
		fl_seen_sort(&seen);
		fl_free_names(names);
	}
	fl_seen_sort(&seen);
	while (seen.n)
		free(seen.names[--seen.n]);
	free(seen.names);
}

static int cmd_flatten(int argc, char **argv)
{
	struct flat f = { 0 };
	struct fl_part *roots;
	struct stat st;
	int i;

	if (argc > 0 && !strcmp(argv[0], "-a")) {
		f.aufs = true;
		argc--;
		argv++;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: lfs-probe flatten [-a] OUT LAYER...\n");
		return 2;
	}
	if (mkdir(argv[0], 0700) && (errno != EEXIST || rmdir(argv[0]) ||
				     mkdir(argv[0], 0700))) {
		fprintf(stderr, "lfs-probe: flatten: %s: not a new or empty directory: %s\n",
			argv[0], strerror(errno));
		return 2;
	}
	roots = xrealloc(NULL, (argc - 1) * sizeof(*roots));
	for (i = 1; i < argc; i++) {
		roots[i - 1].path = argv[i];
		/* a layer's root is never opaque, nor read for xwhiteouts */
		roots[i - 1].xwh = false;
	}
	if (lstat(argv[1], &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "lfs-probe: flatten: %s: not a directory\n", argv[1]);
		return 2;
	}
	fl_dir(&f, argv[0], roots, argc - 1);
	fl_attrs(&f, argv[1], argv[0], &st);
	free(roots);
	while (f.nlinks)
		free(f.links[--f.nlinks].out);
	free(f.links);
	return f.errors ? 1 : 0;
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
	/* readdir() says NULL at the end and on an error alike */
	for (errno = 0; (de = readdir(d)); errno = 0)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	if (errno) {
		int err = errno;

		closedir(d);
		errno = err;
		return -1;
	}
	closedir(d);
	snprintf(out, size, "%ld", n);
	return 0;
}

/*
 * compare the dumps of two trees, as dump -p sees them (the callers
 * compare a mount with a reference tree built and written on its own);
 * the differing lines follow as -/+
 */
static int ops_treecmp(const char *a, const char *b, char *out, size_t size)
{
	struct dump da, db;
	size_t i = 0, j = 0;
	bool same = true;

	dump_tree(&da, a, false, DX_PLAIN);
	dump_tree(&db, b, false, DX_PLAIN);
	while (i < da.n || j < db.n) {
		int c = i == da.n ? 1 : j == db.n ? -1 :
			strcmp(da.ents[i].path, db.ents[j].path);

		if (!c && !strcmp(da.ents[i].line, db.ents[j].line)) {
			i++;
			j++;
			continue;
		}
		if (same)
			printf("treecmp %s %s:\n", a, b);
		same = false;
		if (c <= 0)
			printf("  -%s\n", da.ents[i++].line);
		if (c >= 0)
			printf("  +%s\n", db.ents[j++].line);
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

/*
 * mapino PATH: "MAJ:MIN INO" of a read-only shared mapping of PATH's
 * first page, as /proc/self/maps shows it: a stacking filesystem's
 * mapping belongs to the real file that holds the pages
 */
static int ops_mapino(const char *path, char *out, size_t size)
{
	char line[4096], addr[32], dev[32];
	unsigned long long ino;
	int fd = open(path, O_RDONLY);
	FILE *maps;
	void *p;

	if (fd < 0)
		return -1;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return close_after(fd, -1);
	close(fd);
	snprintf(addr, sizeof(addr), "%lx-", (unsigned long)p);
	maps = fopen("/proc/self/maps", "r");
	snprintf(out, size, "(unmapped)");
	while (maps && fgets(line, sizeof(line), maps))
		if (!strncmp(line, addr, strlen(addr)) &&
		    sscanf(line, "%*s %*s %*s %31s %llu", dev, &ino) == 2)
			snprintf(out, size, "%s %llu", dev, ino);
	if (maps)
		fclose(maps);
	munmap(p, 4096);
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

/*
 * File descriptors a script keeps open across lines ("fdopen N ..."),
 * to act on a file opened before another call changed it.
 */
#define OPS_NR_FDS 8

static int ops_fds[OPS_NR_FDS] = { -1, -1, -1, -1, -1, -1, -1, -1 };

/* the fd of slot @n, or -1 with errno EBADF */
static int ops_fd(const char *n)
{
	int i = atoi(n);

	if (i < 0 || i >= OPS_NR_FDS || ops_fds[i] < 0) {
		errno = EBADF;
		return -1;
	}
	return ops_fds[i];
}

/* fdopen N PATH r|w|rw|a (a: read and append) */
static int ops_fdopen(const char *n, const char *path, const char *mode)
{
	int i = atoi(n), flags;

	if (i < 0 || i >= OPS_NR_FDS || ops_fds[i] >= 0) {
		errno = EBADF;
		return -1;
	}
	/* a trailing "d": O_DIRECT */
	flags = mode[0] && mode[strlen(mode) - 1] == 'd' ? O_DIRECT : 0;
	flags |= !strncmp(mode, "rw", 2) ? O_RDWR : mode[0] == 'w' ? O_WRONLY :
		mode[0] == 'a' ? O_RDWR | O_APPEND : O_RDONLY;
	ops_fds[i] = open(path, flags);
	return ops_fds[i] < 0 ? -1 : 0;
}

static int ops_fdclose(const char *n)
{
	int fd = ops_fd(n);

	if (fd < 0)
		return -1;
	ops_fds[atoi(n)] = -1;
	return close(fd);
}

/* setfl N FLAG[,FLAG]: F_SETFL with exactly these of append, noatime */
static int ops_setfl(const char *n, const char *flags)
{
	int fd = ops_fd(n), fl = 0;

	if (fd < 0)
		return -1;
	if (strstr(flags, "append"))
		fl |= O_APPEND;
	if (strstr(flags, "noatime"))
		fl |= O_NOATIME;
	return fcntl(fd, F_SETFL, fl);
}

/* fdwrite N DATA: write(2) at the file position */
static int ops_fdwrite(const char *n, const char *data)
{
	int fd = ops_fd(n);
	ssize_t len = strlen(data);

	if (fd < 0)
		return -1;
	return write(fd, data, len) == len ? 0 : -1;
}

/* fdread N: pread(2) from offset 0 */
static int ops_fdread(const char *n, char *out, size_t size)
{
	int fd = ops_fd(n);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = pread(fd, out, size - 1, 0);
	out[r < 0 ? 0 : r] = '\0';
	if (!out[0])
		snprintf(out, size, "(empty)");
	return r < 0 ? -1 : 0;
}

/* splicein PATH OFFSET DATA: DATA through a pipe into PATH at OFFSET */
static int ops_splicein(const char *path, const char *off, const char *data)
{
	ssize_t len = strlen(data);
	loff_t pos = atoll(off);
	int p[2], fd, err = -1;

	if (pipe(p))
		return -1;
	fd = open(path, O_WRONLY);
	if (fd >= 0 && write(p[1], data, len) == len)
		err = splice(p[0], NULL, fd, &pos, len, 0) == len ? 0 : -1;
	if (fd >= 0)
		err = close_after(fd, err);
	close(p[0]);
	close(p[1]);
	return err;
}

/*
 * falloc N OFFSET LEN and punch N OFFSET LEN: fallocate(2), allocating
 * (the size grows) or punching a hole (the size stays)
 */
static int ops_falloc(const char *n, const char *off, const char *len,
		      bool punch)
{
	int fd = ops_fd(n);

	if (fd < 0)
		return -1;
	return fallocate(fd, punch ? FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE : 0,
			 atoll(off), atoll(len));
}

/*
 * dwrite N OFFSET LEN BYTE: pwrite(2) of LEN bytes BYTE from a page-
 * aligned buffer, as O_DIRECT wants (OFFSET and LEN: multiples of 4096)
 */
static int ops_dwrite(const char *n, const char *off, const char *len,
		      const char *byte)
{
	size_t count = atoll(len);
	int fd = ops_fd(n), err;
	void *buf;

	if (fd < 0)
		return -1;
	if (posix_memalign(&buf, 4096, count ? count : 1))
		return -1;
	memset(buf, byte[0], count);
	err = pwrite(fd, buf, count, atoll(off)) == (ssize_t)count ? 0 : -1;
	free(buf);
	return err;
}

/*
 * mwrite N OFFSET DATA: DATA stored at OFFSET through a shared writable
 * mapping of the fd's file, then msync(MS_SYNC); the file must reach
 * OFFSET + length already
 */
static int ops_mwrite(const char *n, const char *off, const char *data)
{
	long page = sysconf(_SC_PAGESIZE);
	off_t pos = atoll(off), base = pos & ~(off_t)(page - 1);
	size_t len = strlen(data), maplen = pos - base + len;
	int fd = ops_fd(n), err;
	char *map;

	if (fd < 0)
		return -1;
	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
	if (map == MAP_FAILED)
		return -1;
	memcpy(map + (pos - base), data, len);
	err = msync(map, maplen, MS_SYNC);
	if (munmap(map, maplen) && !err)
		err = -1;
	return err;
}

/*
 * seekmap N: the data ranges lseek(SEEK_DATA/SEEK_HOLE) finds, as
 * "START-END,..." ("none" for a file of holes only)
 */
static int ops_seekmap(const char *n, char *out, size_t size)
{
	int fd = ops_fd(n);
	off_t data = 0, hole;
	size_t used = 0;

	if (fd < 0)
		return -1;
	out[0] = '\0';
	for (;;) {
		data = lseek(fd, data, SEEK_DATA);
		if (data < 0)
			break;
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		used += snprintf(out + used, used < size ? size - used : 0, "%s%lld-%lld",
				 used ? "," : "", (long long)data, (long long)hole);
		data = hole;
	}
	if (errno != ENXIO)
		return -1;
	if (!out[0])
		snprintf(out, size, "none");
	return 0;
}

/* spliceout PATH: up to 4 KiB of PATH through a pipe */
static int ops_spliceout(const char *path, char *out, size_t size)
{
	int p[2], fd;
	ssize_t r = -1;

	if (pipe(p))
		return -1;
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		r = splice(fd, NULL, p[1], NULL, size - 1, 0);
		if (r > 0)
			r = read(p[0], out, r);
	}
	out[r < 0 ? 0 : r] = '\0';
	if (!out[0])
		snprintf(out, size, "(empty)");
	if (fd >= 0)
		close_after(fd, r < 0);
	close(p[0]);
	close(p[1]);
	return r < 0 ? -1 : 0;
}

/*
 * copyrange SRC DST, clone SRC DST: SRC into DST (made or truncated) by
 * copy_file_range() to the end, or by FICLONE
 */
static int ops_copyrange(const char *src, const char *dst, bool clone)
{
	int in = open(src, O_RDONLY), out, err = 0;
	ssize_t r;

	if (in < 0)
		return -1;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0)
		return close_after(in, -1);
	if (clone) {
		err = ioctl(out, FICLONE, in);
	} else {
		while ((r = copy_file_range(in, NULL, out, NULL, 1 << 20, 0)) > 0)
			;
		err = r < 0 ? -1 : 0;
	}
	err = close_after(out, err);
	return close_after(in, err);
}

/*
 * fiemap PATH, fdfiemap N: the extents of PATH, or of the file open in
 * slot N, after a sync, "LOGICAL+LENGTH@PHYSICAL/FLAGS" each, "(none)"
 * for none
 */
static int ops_fiemap_fd(int fd, char *out, size_t size)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent ext[16];
	} req;
	unsigned int i;
	int err;

	memset(&req, 0, sizeof(req));
	req.fm.fm_length = FIEMAP_MAX_OFFSET;
	req.fm.fm_flags = FIEMAP_FLAG_SYNC;
	req.fm.fm_extent_count = ARRAY_SIZE(req.ext);
	err = ioctl(fd, FS_IOC_FIEMAP, &req.fm);
	out[0] = '\0';
	for (i = 0; !err && i < req.fm.fm_mapped_extents; i++)
		snprintf(out + strlen(out), size - strlen(out),
			 "%s%llu+%llu@%llu/%x", i ? " " : "",
			 (unsigned long long)req.ext[i].fe_logical,
			 (unsigned long long)req.ext[i].fe_length,
			 (unsigned long long)req.ext[i].fe_physical,
			 req.ext[i].fe_flags);
	if (!out[0])
		snprintf(out, size, "(none)");
	return err;
}

static int ops_fiemap(const char *path, char *out, size_t size)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	return close_after(fd, ops_fiemap_fd(fd, out, size));
}

/*
 * waitfor PATH: until PATH exists (another process's signal to a script
 * that holds files open), at most 60 s (ETIMEDOUT)
 */
static int ops_waitfor(const char *path)
{
	struct stat st;
	int i;

	for (i = 0; i < 6000; i++) {
		if (!lstat(path, &st))
			return 0;
		usleep(10000);
	}
	errno = ETIMEDOUT;
	return -1;
}

/* the file-descriptor operations of cmd_ops(); 1 for an op not of theirs */
static int ops_file(const char *op, char **v, char *out, size_t size)
{
	struct stat st;

	if (!strcmp(op, "fdopen"))
		return ops_fdopen(v[1], v[2], v[3]);
	if (!strcmp(op, "fdclose"))
		return ops_fdclose(v[1]);
	if (!strcmp(op, "setfl"))
		return ops_setfl(v[1], v[2]);
	if (!strcmp(op, "fdwrite"))
		return ops_fdwrite(v[1], v[2]);
	if (!strcmp(op, "fdread"))
		return ops_fdread(v[1], out, size);
	if (!strcmp(op, "fsync") || !strcmp(op, "fdatasync")) {
		int fd = ops_fd(v[1]);

		if (fd < 0)
			return -1;
		return op[1] == 's' ? fsync(fd) : fdatasync(fd);
	}
	if (!strcmp(op, "splicein"))
		return ops_splicein(v[1], v[2], v[3]);
	if (!strcmp(op, "spliceout"))
		return ops_spliceout(v[1], out, size);
	if (!strcmp(op, "copyrange") || !strcmp(op, "clone"))
		return ops_copyrange(v[1], v[2], op[1] == 'l');
	if (!strcmp(op, "fiemap"))
		return ops_fiemap(v[1], out, size);
	if (!strcmp(op, "fdfiemap")) {
		int fd = ops_fd(v[1]);

		return fd < 0 ? -1 : ops_fiemap_fd(fd, out, size);
	}
	if (!strcmp(op, "waitfor"))
		return ops_waitfor(v[1]);
	if (!strcmp(op, "falloc") || !strcmp(op, "punch"))
		return ops_falloc(v[1], v[2], v[3], op[0] == 'p');
	if (!strcmp(op, "dwrite"))
		return ops_dwrite(v[1], v[2], v[3], v[4]);
	if (!strcmp(op, "mwrite"))
		return ops_mwrite(v[1], v[2], v[3]);
	if (!strcmp(op, "seekmap"))
		return ops_seekmap(v[1], out, size);
	if (!strcmp(op, "atime")) {
		if (lstat(v[1], &st))
			return -1;
		snprintf(out, size, "%lld", (long long)st.st_atim.tv_sec);
		return 0;
	}
	return 1;
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
	{ "mapino", 1, 1, true },
	{ "ino", 1, 1, true }, { "links", 1, 1, true }, { "mode", 1, 1, true },
	{ "owner", 1, 1, true }, { "size", 1, 1, true },
	{ "blocks", 1, 1, true }, { "mtime", 1, 1, true },
	{ "fdopen", 3, 3, false }, { "fdclose", 1, 1, false },
	{ "setfl", 2, 2, false }, { "fdwrite", 2, 2, false },
	{ "fsync", 1, 1, false }, { "fdatasync", 1, 1, false },
	{ "splicein", 3, 3, false }, { "copyrange", 2, 2, false },
	{ "clone", 2, 2, false }, { "fdread", 1, 1, true },
	{ "spliceout", 1, 1, true }, { "fiemap", 1, 1, true },
	{ "atime", 1, 1, true }, { "falloc", 3, 3, false },
	{ "punch", 3, 3, false }, { "dwrite", 4, 4, false },
	{ "mwrite", 3, 3, false }, { "seekmap", 1, 1, true },
	{ "fdfiemap", 1, 1, true }, { "waitfor", 1, 1, false },
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
	if (!strcmp(op, "mapino"))
		return ops_mapino(v[1], out, size);
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
	ret = ops_file(def->name, v, out, size);
	if (ret == 1)
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
 * File descriptors, kept across lines in slots N 0-7: fdopen N PATH
 *   r|w|rw|a (a trailing "d" adds O_DIRECT: rwd), fdclose N, setfl N
 *   FLAG[,FLAG] (F_SETFL with exactly those of append, noatime; "none"),
 *   fdwrite N DATA (at the file position), fsync N, fdatasync N, falloc
 *   N OFFSET LEN, punch N OFFSET LEN (fallocate, a hole kept in size),
 *   dwrite N OFFSET LEN BYTE (pwrite from an aligned buffer, for
 *   O_DIRECT), mwrite N OFFSET DATA (through a shared mapping, then
 *   msync).  splicein PATH OFFSET DATA (through a pipe),
 *   copyrange SRC DST (copy_file_range() to the end), clone SRC DST
 *   (FICLONE); DST is made or truncated.  waitfor PATH (until PATH
 *   exists: another process's signal, at most 60 s).
 * Queries: read PATH (up to 4 KiB, "(empty)"), getxattr PATH NAME,
 *   kind PATH (absent, file, dir, opaque-dir, "... redirect=R", symlink,
 *   whiteout, chr-whiteout, fifo, sock, chr, blk), map PATH (data
 *   extents), hash PATH (of the content), count DIR (entries), ino, links,
 *   mode, owner, size, blocks, mtime PATH, atime PATH (seconds),
 *   fdread N (pread at 0), spliceout PATH (read through a pipe),
 *   fiemap PATH (FS_IOC_FIEMAP after a sync: LOGICAL+LEN@PHYSICAL/FLAGS),
 *   fdfiemap N (the same on the file in slot N),
 *   seekmap N (the data ranges SEEK_DATA and SEEK_HOLE find),
 *   mapino PATH (the device and inode number /proc/self/maps shows for
 *   a shared mapping of PATH: the file whose page cache serves it).
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

/*
 * The child of cmd_handoff(): a mount context of @type made in a user
 * namespace of its own; its number goes to @tell, then it waits on @hold
 * while the parent takes it.
 */
static int handoff_child(const char *type, const char *lower, int tell,
			 int hold)
{
	char c;
	int fd;

	/* a mount namespace too: fsopen() asks for CAP_SYS_ADMIN over it */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		perror("lfs-probe: handoff: unshare");
		return 1;
	}
	fd = fsopen(type, 0);
	if (fd < 0 ||
	    fsconfig(fd, FSCONFIG_SET_STRING, "lowerdir", lower, 0)) {
		fprintf(stderr, "configure: %s\n", strerrorname_np(errno));
		return 1;
	}
	if (write(tell, &fd, sizeof(fd)) != sizeof(fd) ||
	    read(hold, &c, 1) != 1)
		return 1;
	return 0;
}

static int cmd_handoff(int argc, char **argv)
{
	int tell[2], hold[2], pidfd, fd = -1, ret = 1;
	pid_t pid;

	if (argc != 2 || pipe(tell) || pipe(hold))
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		/* the parent's ends: hold[1] open here would never give EOF */
		close(tell[0]);
		close(hold[1]);
		_exit(handoff_child(argv[0], argv[1], tell[1], hold[0]));
	}
	close(tell[1]);
	close(hold[0]);
	if (read(tell[0], &fd, sizeof(fd)) == sizeof(fd)) {
		pidfd = syscall(SYS_pidfd_open, pid, 0);
		fd = pidfd < 0 ? -1 : syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		if (fd < 0) {
			perror("lfs-probe: handoff: pidfd_getfd");
		} else {
			report("create", fsconfig(fd, FSCONFIG_CMD_CREATE,
						  NULL, NULL, 0));
			close(fd);
			ret = 0;
		}
	}
	close(hold[1]);
	waitpid(pid, NULL, 0);
	return ret;
}

static int cmd_linkup(int argc, char **argv)
{
	int i, fd, ret;

	for (i = 0; i < argc; i++) {
		fd = open(argv[i], O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
		if (fd < 0) {
			printf("%s: open %s\n", argv[i], strerrorname_np(errno));
			continue;
		}
		ret = ioctl(fd, LFS_IOC_LINK_UP);
		if (ret < 0)
			printf("%s: %s\n", argv[i], strerrorname_np(errno));
		else
			printf("%s: %d\n", argv[i], ret);
		close(fd);
	}
	return 0;
}

/* one LFS_IOC_LINK_UP_AT request for @arg on directory @dfd */
static int linkupat_one(int dfd, const char *arg)
{
	static char buf[PATH_MAX + 16];
	struct lfs_link_up_at req = { .name = (uintptr_t)buf };
	const char *text = arg;
	unsigned long n;
	char *end;
	int ret;

	memset(buf, 0, sizeof(buf));
	if (!strncmp(arg, "len=", 4) || !strncmp(arg, "flags=", 6)) {
		n = strtoul(strchr(arg, '=') + 1, &end, 0);
		if (*end != ',' || n > PATH_MAX)
			return -EINVAL;
		text = end + 1;
		if (arg[0] == 'l')
			req.namelen = n;
		else
			req.flags = n;
	}
	if (strlen(text) > PATH_MAX)
		return -EINVAL;
	strcpy(buf, text);
	if (!req.namelen)
		req.namelen = strlen(text);
	ret = ioctl(dfd, LFS_IOC_LINK_UP_AT, &req);
	return ret < 0 ? -errno : ret;
}

static int cmd_linkupat(int argc, char **argv)
{
	int i, dfd, ret;

	if (argc < 2)
		return 2;
	dfd = open(argv[0], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (dfd < 0) {
		printf("%s: open %s\n", argv[0], strerrorname_np(errno));
		return 0;
	}
	for (i = 1; i < argc; i++) {
		ret = linkupat_one(dfd, argv[i]);
		if (ret < 0)
			printf("%s: %s\n", argv[i], strerrorname_np(-ret));
		else
			printf("%s: %d\n", argv[i], ret);
	}
	close(dfd);
	return 0;
}

/* write @map to /proc/@pid/@file */
static int idmap_write(pid_t pid, const char *file, const char *map)
{
	char path[64];
	ssize_t len = strlen(map);
	int fd, ok;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ok = write(fd, map, len) == len;
	close(fd);
	return ok ? 0 : -1;
}

/*
 * A user namespace that maps as @map says (uid_map text) for uids and
 * gids, as an fd: a child makes it and waits until the parent has written
 * its maps and opened it.
 */
static int idmap_userns(const char *map)
{
	int ready[2], done[2], fd = -1;
	char path[64], c = 0;
	pid_t pid;

	if (pipe(ready))
		return -1;
	if (pipe(done)) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(done[1]);
		c = unshare(CLONE_NEWUSER) ? 1 : 0;
		if (write(ready[1], &c, 1) != 1 || c)
			_exit(1);
		_exit(read(done[0], &c, 1) < 0);
	}
	/* the child's ends: a child that dies early then ends the reads */
	close(ready[1]);
	close(done[0]);
	if (pid > 0 && read(ready[0], &c, 1) == 1 && !c &&
	    !idmap_write(pid, "uid_map", map) &&
	    !idmap_write(pid, "setgroups", "deny") &&
	    !idmap_write(pid, "gid_map", map)) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	close(done[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	close(ready[0]);
	return fd;
}

static int cmd_idmap(int argc, char **argv)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_IDMAP };
	char map[256] = "0 100000 65536", *c;
	int tree, userns;

	if (argc != 2 && argc != 3)
		return 2;
	if (argc == 3) {
		snprintf(map, sizeof(map), "%s", argv[2]);
		for (c = map; *c; c++)
			if (*c == ',')
				*c = '\n';
	}
	userns = idmap_userns(map);
	if (userns < 0) {
		perror("lfs-probe: idmap: user namespace");
		return 1;
	}
	attr.userns_fd = userns;
	tree = open_tree(AT_FDCWD, argv[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0 ||
	    mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) ||
	    move_mount(tree, "", AT_FDCWD, argv[1], MOVE_MOUNT_F_EMPTY_PATH)) {
		perror("lfs-probe: idmap");
		return 1;
	}
	close(tree);
	close(userns);
	return 0;
}

/*
 * The child of "userns": made root of its new user namespace by the maps
 * its parent writes (@ready, then @done), it takes uid and gid 0 there,
 * so that exec keeps its capabilities, and a mount namespace of its own.
 */
static void userns_child(int ready, int done, char **argv)
{
	char c = unshare(CLONE_NEWUSER) ? 1 : 0;

	if (write(ready, &c, 1) != 1 || c || read(done, &c, 1) != 1 || c)
		_exit(125);
	if (setresgid(0, 0, 0) || setresuid(0, 0, 0) || setgroups(0, NULL) ||
	    unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		perror("lfs-probe: userns");
		_exit(125);
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	_exit(127);
}

static int cmd_userns(int argc, char **argv)
{
	int ready[2], done[2], status;
	char c = 0;
	pid_t pid;

	if (argc < 1)
		return 2;
	if (pipe(ready) || pipe(done))
		return 125;
	pid = fork();
	if (!pid) {
		close(ready[0]);
		close(done[1]);
		userns_child(ready[1], done[0], argv);
	}
	close(ready[1]);
	close(done[0]);
	if (pid < 0 || read(ready[0], &c, 1) != 1 || c ||
	    idmap_write(pid, "uid_map", "0 100000 65536") ||
	    idmap_write(pid, "gid_map", "0 100000 65536"))
		c = 1;
	if (c)
		perror("lfs-probe: userns: maps");
	if (write(done[1], &c, 1) != 1)
		c = 1;
	close(done[1]);
	close(ready[0]);
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int cmd_fdparam(int argc, char **argv)
{
	int fsfd, fd;

	if (argc < 2)
		return 2;
	if (argc > 2 && !strcmp(argv[2], "detached"))
		fd = open_tree(AT_FDCWD, argv[1], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	else
		fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	fsfd = fsopen("layerfs", FSOPEN_CLOEXEC);
	if (fd < 0 || fsfd < 0) {
		perror("lfs-probe: fdparam");
		return 1;
	}
	report("fsconfig", fsconfig(fsfd, FSCONFIG_SET_FD, argv[0], NULL, fd));
	report("create", fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0));
	close(fd);
	close(fsfd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: lfs-probe dino|seekdir|fileops|writecalls|stat|mktree|dump|meta|flatten|ops|race|idmap|linkup|userns|fdparam ARGS\n");
		return 2;
	}
	if (!strcmp(argv[1], "dino"))
		return cmd_dino(argc - 2, argv + 2);
	if (!strcmp(argv[1], "seekdir"))
		return cmd_seekdir(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dirshare"))
		return cmd_dirshare(argc - 2, argv + 2);
	if (!strcmp(argv[1], "smallbuf"))
		return cmd_smallbuf(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fileops"))
		return cmd_fileops(argc - 2, argv + 2);
	if (!strcmp(argv[1], "writecalls"))
		return cmd_writecalls(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mount2"))
		return cmd_mount2(argc - 2, argv + 2);
	if (!strcmp(argv[1], "userns"))
		return cmd_userns(argc - 2, argv + 2);
	if (!strcmp(argv[1], "fdparam"))
		return cmd_fdparam(argc - 2, argv + 2);
	if (!strcmp(argv[1], "mktree"))
		return cmd_mktree(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 2, argv + 2);
	if (!strcmp(argv[1], "meta"))
		return cmd_meta(argc - 2, argv + 2);
	if (!strcmp(argv[1], "flatten"))
		return cmd_flatten(argc - 2, argv + 2);
	if (!strcmp(argv[1], "ops"))
		return cmd_ops(argc - 2, argv + 2);
	if (!strcmp(argv[1], "race"))
		return cmd_race(argc - 2, argv + 2);
	if (!strcmp(argv[1], "idmap"))
		return cmd_idmap(argc - 2, argv + 2);
	if (!strcmp(argv[1], "handoff"))
		return cmd_handoff(argc - 2, argv + 2);
	if (!strcmp(argv[1], "linkup"))
		return cmd_linkup(argc - 2, argv + 2);
	if (!strcmp(argv[1], "linkupat"))
		return cmd_linkupat(argc - 2, argv + 2);
	fprintf(stderr, "lfs-probe: unknown command %s\n", argv[1]);
	return 2;
}
