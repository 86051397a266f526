// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-bench: the driver of 'make bench' (see docs/bench.md).
 *
 * One process runs one workload on every system of a systems file, all
 * repetitions, and times only the workload's own system calls with
 * clock_gettime(CLOCK_MONOTONIC): process start is slow in the guest, and a
 * shell loop would measure the shell.  Repetitions are interleaved (rep 1
 * of every system, then rep 2, ...), so that a slow spell of the host
 * weighs on every system alike, and each repetition runs the systems in
 * another order (bench_order()), so that no system always follows the
 * same one.
 * After fuse-overlayfs is unmounted, its daemon's exit is awaited, so that
 * it cannot run into the next system's pass on the guest's one CPU.
 *
 *   lfs-bench [OPTIONS] WORKLOAD [ARG...]
 *
 *   -S FILE    the systems, one a line (# comments):
 *                NAME TYPE ROOT LAYERS UPPER OPTIONS
 *              TYPE layerfs | overlay | fuse-overlayfs | erofs-overlay |
 *              none (ROOT is a plain directory: the raw system); ROOT the
 *              mount point; LAYERS a file of layer directories, top first
 *              (erofs-overlay: the erofs image itself); UPPER a
 *              directory that gets a fresh u/ and w/ (upper and work
 *              directory) for every mount, or "-" for a read-only mount;
 *              OPTIONS more comma-separated mount options, or "-"
 *              erofs-overlay (the composefs approach) attaches the image
 *              to a loop device (read-only, detached by the kernel when
 *              unmounted), mounts it as erofs on ROOT.erofs and the
 *              kernel's overlay on ROOT with that one lower layer; a
 *              read-only mount adds the empty directory ROOT.empty as a
 *              second lower layer, since overlay refuses one lower layer
 *              without an upper.  Every unmount takes down the overlay,
 *              the erofs mount and the loop device, so a cold pass reads
 *              the image afresh.
 *   -m MODE    warm: mount once, one untimed pass (the warm-up; it also
 *                    computes the full checksum, contents included), then
 *                    the timed passes;
 *              cold: every timed pass on a fresh mount after
 *                    "sync; echo 3 >/proc/sys/vm/drop_caches";
 *              fresh: as cold, for workloads that write, with an empty
 *                    upper directory each time; the checks after the
 *                    first pass give the checksum
 *              Every pass must give the first pass's count (and checksum,
 *              where the timed pass computes one) or the system fails.
 *   -n REPS    repetitions (default 5)
 *   -w NAME, -p PARAM   the workload and parameter columns of the output
 *   -o FILE    append the CSV rows to FILE (default standard output)
 *   -T SECS    time limit of one pass: a system that takes longer fails
 *              ("over the time limit"; fuse-overlayfs's daemon is killed,
 *              since a FUSE request outlives signals, and so are the
 *              processes of the cmd workload); default none
 *   -P PROG    (more than once) cold and fresh passes also load PROG into
 *              the page cache after dropping it, untimed ("PROG
 *              --version"), as they do for the programs of cmd's stages:
 *              for a program that a stage starts itself (xargs's)
 *   -M CGROUP  memory (with -m cold, for cmd): each pass runs the
 *              workload's processes in a new cgroup under CGROUP (a
 *              cgroup2 directory whose cgroup.subtree_control has
 *              +memory), and so fuse-overlayfs's daemon; the row's "ops"
 *              column is then the cgroup's memory.peak in bytes
 *
 * Workloads (paths are relative to each system's root):
 *   walk LIST            lstat every path listed in LIST (one a line)
 *   readdir DIR          list every directory under DIR (getdents64)
 *   stat-names DIR PREFIX N exist|absent [ROUNDS]
 *                        stat DIR/PREFIX0 ... PREFIX(N-1), ROUNDS times
 *                        (default 1); each must exist, or each must be
 *                        absent (ENOENT)
 *   read FILE            read(2) FILE start to end, 1 MiB at a time
 *   mmap FILE            map FILE and touch every page
 *   randread FILE N      N preads of 4 KiB at random aligned offsets
 *   copyup FILE          first write: open, pwrite 4 KiB at 0, close
 *   chown-r DIR UID GID  lchown every entry under DIR (chown -R)
 *   churn DIR N          create+write, rename, then unlink N small files
 *   untar TARBALL DIR    tar -xf TARBALL (absolute) into a new DIR
 *   mount                time the mount alone (not for TYPE none)
 *   start PROG [ARG...]  mount, then chroot into it and run PROG, wait for
 *                        its exit; the time covers both (a container start)
 *   cmd DIR FORMAT PROG [ARG...] [| PROG [ARG...]]...
 *                        run a pipeline of programs (the argument "|"
 *                        separates them) in DIR, in their own process
 *                        group, with LC_ALL=C and TZ=UTC0; the time runs
 *                        from the first fork until every stage has exited,
 *                        and each must exit 0.  The last stage's output is
 *                        read into memory; after the timed part FORMAT
 *                        gives its checksum over the fields that every
 *                        system shows alike: lines (every line), ls-l
 *                        (ls -l: no link count, no "total"; a size for all
 *                        but directories, a time for regular files only,
 *                        as walk), stat (stat(1): name, size, access and
 *                        owner, modification time to the second).  "ops"
 *                        counts the output's lines.
 *
 * Output, one CSV row per system and repetition:
 *   workload,system,param,mode,rep,seconds,ops,checksum,status
 * "ops" counts what the workload did (paths, entries, bytes, files); the
 * checksum covers what the system returned (metadata, names, contents) and
 * is the same on every system that read the same tree.  A system that
 * fails prints status "FAIL: ..." and no time, and is not run again.
 *
 * Setup helpers (untimed; for tools/bench/guest.sh):
 *   lfs-bench mkstack DIR DEPTH N     layers DIR/1 (top) .. DIR/DEPTH, each
 *                                     with d/ and d/lI; the bottom one also
 *                                     with d/b0 .. d/b(N-1); DIR/layers
 *   lfs-bench mkspread DIR DEPTH N    names d/n0 .. d/n(N-1) spread evenly
 *                                     over DEPTH layers (DEPTH 0: a plain
 *                                     directory DIR/d); DIR/layers
 *   lfs-bench mkfile PATH BYTES SEED  a file of pseudo-random bytes
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#define __printf(a, b) __attribute__((format(printf, a, b)))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define BENCH_FUSE_MAGIC 0x65735546
#define BENCH_PAGE 4096
#define BENCH_CHUNK (1 << 20)
#define BENCH_MAX_SYS 8
#define BENCH_FNV_INIT 0xcbf29ce484222325ULL
#define BENCH_MAX_STAGES 8	/* programs of one cmd pipeline */
#define BENCH_MAX_PREWARM 8	/* -P */
#define BENCH_OUT_MAX (1UL << 30)	/* cmd: output kept of one pass */

enum bench_type {
	BENCH_NONE, BENCH_LAYERFS, BENCH_OVERLAY, BENCH_FUSE, BENCH_EROFS
};
enum bench_mode { BENCH_WARM, BENCH_COLD, BENCH_FRESH };

struct bench_sys {
	char name[64];
	enum bench_type type;
	char root[PATH_MAX];	/* mount point, or the raw directory */
	char **layers;		/* absolute layer paths, top first */
	size_t nr_layers;
	char upper[PATH_MAX];	/* "" for a read-only mount */
	char opts[1024];	/* more mount options, "" for none */
	char image[PATH_MAX];	/* erofs-overlay: the erofs image */
	char lower[PATH_MAX + 8];	/* erofs-overlay: its mount, ROOT.erofs */
	int loop_nr;		/* erofs-overlay: its loop device, or -1 */
	bool lower_mounted;	/* erofs-overlay: the erofs is mounted */
	bool mounted;
	bool failed;
	pid_t fuse_pid;		/* fuse-overlayfs's daemon, found on a time-out */
	uint64_t ops;		/* from the untimed pass */
	uint64_t sum;
	bool have_sum;
};

/* what one pass returned */
struct bench_res {
	uint64_t ops;
	uint64_t sum;
	bool have_sum;
	uint64_t mem;		/* -M: the cgroup's memory.peak, bytes */
	char err[512];
};

struct bench_ctx {
	int argc;		/* workload arguments */
	char **argv;
	bool verify;		/* untimed pass: compute the full checksum */
	char **list;		/* walk: the paths */
	size_t nr_list;
	char **stage[BENCH_MAX_STAGES];	/* cmd: argv of each program */
	int nr_stages;
	const char *format;	/* cmd: lines | ls-l | stat */
	char *out;		/* cmd: the last stage's output */
	size_t out_len;
	size_t out_cap;
};

struct bench_op {
	const char *name;
	int min_args;
	int max_args;		/* -1: any */
	bool mounts;		/* mounts inside the timed part */
	bool writes;		/* changes the tree: checksum after pass 0 */
	int (*run)(struct bench_ctx *c, struct bench_sys *s,
		   struct bench_res *r);
	int (*check)(struct bench_ctx *c, struct bench_sys *s,
		     struct bench_res *r);
	/* undo a write on the raw system, which gets no fresh upper */
	void (*cleanup)(struct bench_ctx *c, struct bench_sys *s);
};

static int bench_cwd = -1;

/*
 * The time limit of one pass (-T).  A watchdog thread sets bench_expired
 * when it passes; the workloads' loops check it between system calls.  A
 * FUSE request does not return on a signal, so for fuse-overlayfs the
 * watchdog also kills the daemon, which fails the pending request.  The
 * processes of the cmd workload are killed too (their process group).
 */
static unsigned int bench_limit;
static volatile bool bench_expired;
static pthread_mutex_t bench_wd_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bench_wd_cond;
static bool bench_wd_armed;		/* under bench_wd_lock */
static struct timespec bench_wd_deadline;	/* under bench_wd_lock */
static struct bench_sys *bench_wd_sys;	/* under bench_wd_lock */
static pid_t bench_wd_pgid;		/* under bench_wd_lock; 0: none */

static __printf(3, 4) int bench_fail(struct bench_res *r, int err,
				      const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	n = strlen(r->err);
	if (err && n < sizeof(r->err) - 2)
		snprintf(r->err + n, sizeof(r->err) - n, ": %s", strerror(err));
	return -(err ? err : EIO);
}

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t bench_fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t bench_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

/* a content hash that costs little per byte: one multiply per word */
static uint64_t bench_hash_data(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;
	uint64_t w;

	while (n >= 8) {
		memcpy(&w, c, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h = (h << 31) | (h >> 33);
		c += 8;
		n -= 8;
	}
	return bench_fnv(c, n, h);
}

static uint64_t bench_xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* metadata that every system must report alike (not st_dev/st_ino, nor a
 * merged directory's size, link count or times)
 */
static uint64_t bench_hash_stat(uint64_t h, const struct stat *st)
{
	h = bench_mix(h, st->st_mode);
	h = bench_mix(h, st->st_uid);
	h = bench_mix(h, st->st_gid);
	if (!S_ISDIR(st->st_mode))
		h = bench_mix(h, st->st_size);
	if (S_ISREG(st->st_mode))
		h = bench_mix(h, st->st_mtim.tv_sec);
	return h;
}

static int bench_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

static int bench_drop_caches(void)
{
	sync();
	return bench_write_file("/proc/sys/vm/drop_caches", "3");
}

static int bench_rm_cb(const char *path, const struct stat *st, int flag,
		       struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (remove(path) && errno != ENOENT) {
		fprintf(stderr, "lfs-bench: remove %s: %s (%d)\n", path,
			strerror(errno), flag);
		return -1;
	}
	return 0;
}

/* remove PATH and everything under it; a missing PATH is fine */
static int bench_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	return nftw(path, bench_rm_cb, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) ?
		-EIO : 0;
}

/* fork and exec ARGV with standard output to OUT_FD (-1: /dev/null) */
static pid_t bench_spawn(char *const argv[], const char *dir, int out_fd)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	if (out_fd < 0)
		out_fd = open("/dev/null", O_WRONLY);
	if (out_fd >= 0)
		dup2(out_fd, STDOUT_FILENO);
	if (dir && chdir(dir))
		_exit(126);
	execvp(argv[0], argv);
	_exit(127);
}

static int bench_wait(pid_t pid, struct bench_res *r, const char *what)
{
	int st;

	if (pid < 0)
		return bench_fail(r, errno, "%s: fork", what);
	if (waitpid(pid, &st, 0) < 0)
		return bench_fail(r, errno, "%s: waitpid", what);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return bench_fail(r, 0, "%s: exit status %d (signal %d)", what,
				  WIFEXITED(st) ? WEXITSTATUS(st) : -1,
				  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	return 0;
}

/* load a program and its libraries into the page cache, untimed */
static void bench_prewarm(const char *prog)
{
	char *argv[] = { (char *)prog, "--version", NULL };
	pid_t pid = bench_spawn(argv, NULL, -1);
	int st;

	if (pid > 0)
		waitpid(pid, &st, 0);
}

/* the daemon serving ROOT: a fuse-overlayfs whose last argument is ROOT */
static pid_t bench_fuse_daemon(const char *root)
{
	char path[300], cmd[8192], *last = NULL, *p;
	struct dirent *d;
	pid_t pid = 0;
	ssize_t n;
	DIR *dir = opendir("/proc");
	int fd;

	while (dir && !pid && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, cmd, sizeof(cmd) - 1);
		close(fd);
		if (n <= 0 || !strstr(cmd, "fuse-overlayfs"))
			continue;
		cmd[n] = '\0';
		for (p = cmd; p < cmd + n; p += strlen(p) + 1)
			last = p;
		if (last && !strcmp(last, root))
			pid = atoi(d->d_name);
	}
	if (dir)
		closedir(dir);
	return pid;
}

/* has PID exited (reaped or not)? */
static bool bench_pid_gone(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold spaces and parentheses */
	p = strrchr(buf, ')');
	return !p || !p[1] || p[2] == 'Z' || p[2] == 'X';
}

static void *bench_watchdog(void *arg)
{
	struct bench_sys *s;

	(void)arg;
	pthread_mutex_lock(&bench_wd_lock);
	for (;;) {
		if (!bench_wd_armed) {
			pthread_cond_wait(&bench_wd_cond, &bench_wd_lock);
			continue;
		}
		if (pthread_cond_timedwait(&bench_wd_cond, &bench_wd_lock,
					   &bench_wd_deadline) != ETIMEDOUT ||
		    !bench_wd_armed)
			continue;
		bench_expired = true;
		bench_wd_armed = false;
		s = bench_wd_sys;
		if (s && s->type == BENCH_FUSE) {
			s->fuse_pid = bench_fuse_daemon(s->root);
			if (s->fuse_pid > 0)
				kill(s->fuse_pid, SIGKILL);
		}
		if (bench_wd_pgid > 0)
			kill(-bench_wd_pgid, SIGKILL);
	}
	return NULL;
}

/* the process group the watchdog kills when the time is up (0: none) */
static void bench_watchdog_group(pid_t pgid)
{
	pthread_mutex_lock(&bench_wd_lock);
	bench_wd_pgid = pgid;
	pthread_mutex_unlock(&bench_wd_lock);
}

static void bench_watchdog_arm(struct bench_sys *s)
{
	pthread_mutex_lock(&bench_wd_lock);
	bench_expired = false;
	clock_gettime(CLOCK_MONOTONIC, &bench_wd_deadline);
	bench_wd_deadline.tv_sec += bench_limit;
	bench_wd_sys = s;
	bench_wd_armed = bench_limit > 0;
	pthread_cond_signal(&bench_wd_cond);
	pthread_mutex_unlock(&bench_wd_lock);
}

static void bench_watchdog_disarm(void)
{
	pthread_mutex_lock(&bench_wd_lock);
	bench_wd_armed = false;
	pthread_cond_signal(&bench_wd_cond);
	pthread_mutex_unlock(&bench_wd_lock);
}

static int bench_watchdog_start(void)
{
	pthread_condattr_t attr;
	pthread_t t;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&bench_wd_cond, &attr);
	return pthread_create(&t, NULL, bench_watchdog, NULL) ? -1 : 0;
}

/* ---- mounting ---- */

/* the longest common directory of the layers, with a trailing slash */
static size_t bench_common_dir(struct bench_sys *s)
{
	size_t n = strlen(s->layers[0]), i, k;

	for (i = 1; i < s->nr_layers; i++) {
		for (k = 0; k < n && s->layers[i][k] == s->layers[0][k]; k++)
			;
		n = k;
	}
	while (n && s->layers[0][n - 1] != '/')
		n--;
	return n;
}

/* "lowerdir=a:b:..." relative to the layers' common directory, then the
 * upper and work directories and more options; returns the common dir
 * length, or -errno when it does not fit
 */
static ssize_t bench_overlay_opts(struct bench_sys *s, char *buf, size_t size)
{
	size_t base = bench_common_dir(s), len, i;

	len = snprintf(buf, size, "lowerdir=");
	for (i = 0; i < s->nr_layers && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s", i ? ":" : "",
				s->layers[i] + base);
	if (*s->upper && len < size)
		len += snprintf(buf + len, size - len,
				",upperdir=%s/u,workdir=%s/w", s->upper,
				s->upper);
	if (*s->opts && len < size)
		len += snprintf(buf + len, size - len, ",%s", s->opts);
	return len < size ? (ssize_t)base : -E2BIG;
}

/* a failed fsconfig: its errno and the fs context's message */
static int bench_fsconfig_log(int fd, struct bench_res *r, const char *what)
{
	int err = errno;
	char log[256];
	ssize_t n;

	n = read(fd, log, sizeof(log) - 1);
	log[n > 0 ? n : 0] = '\0';
	if (n > 0 && log[n - 1] == '\n')
		log[n - 1] = '\0';
	return bench_fail(r, err, "%s (%s)", what, log);
}

static int bench_fsconfig(int fd, const char *key, const char *val,
			  struct bench_res *r)
{
	char what[PATH_MAX + 64];

	if (!fsconfig(fd, val ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key,
		      val, 0))
		return 0;
	snprintf(what, sizeof(what), "fsconfig %s%s%s", key, val ? "=" : "",
		 val ? val : "");
	return bench_fsconfig_log(fd, r, what);
}

/* the new mount API, one lowerdir+ per layer: no page limit */
static int bench_mount_layerfs(struct bench_sys *s, struct bench_res *r)
{
	char opts[sizeof(s->opts)], *o, *save = NULL, *eq;
	char upper[PATH_MAX + 2], work[PATH_MAX + 2];
	int fd, mfd, err = 0;
	size_t i;

	fd = fsopen("layerfs", FSOPEN_CLOEXEC);
	if (fd < 0)
		return bench_fail(r, errno, "fsopen layerfs");
	for (i = 0; i < s->nr_layers && !err; i++)
		err = bench_fsconfig(fd, "lowerdir+", s->layers[i], r);
	if (!err && *s->upper) {
		snprintf(upper, sizeof(upper), "%s/u", s->upper);
		snprintf(work, sizeof(work), "%s/w", s->upper);
		err = bench_fsconfig(fd, "upperdir", upper, r);
		if (!err)
			err = bench_fsconfig(fd, "workdir", work, r);
	}
	snprintf(opts, sizeof(opts), "%s", s->opts);
	for (o = strtok_r(opts, ",", &save); o && !err;
	     o = strtok_r(NULL, ",", &save)) {
		eq = strchr(o, '=');
		if (eq)
			*eq++ = '\0';
		err = bench_fsconfig(fd, o, eq, r);
	}
	if (!err && fsconfig(fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		err = bench_fsconfig_log(fd, r, "fsconfig create");
	if (err) {
		close(fd);
		return err;
	}
	mfd = fsmount(fd, FSMOUNT_CLOEXEC, *s->upper ? 0 : MOUNT_ATTR_RDONLY);
	close(fd);
	if (mfd < 0)
		return bench_fail(r, errno, "fsmount");
	if (move_mount(mfd, "", AT_FDCWD, s->root, MOVE_MOUNT_F_EMPTY_PATH))
		err = bench_fail(r, errno, "move_mount to %s", s->root);
	close(mfd);
	return err;
}

static int bench_mount_overlay(struct bench_sys *s, struct bench_res *r)
{
	static char opts[BENCH_PAGE];
	ssize_t base = bench_overlay_opts(s, opts, sizeof(opts));
	char dir[PATH_MAX];
	int err = 0;

	if (base < 0)
		return bench_fail(r, 0, "overlay: options over one page");
	snprintf(dir, sizeof(dir), "%.*s", (int)base, s->layers[0]);
	if (chdir(dir))
		return bench_fail(r, errno, "chdir %s", dir);
	if (mount("overlay", s->root, "overlay", *s->upper ? 0 : MS_RDONLY,
		  opts))
		err = bench_fail(r, errno, "mount -t overlay on %s", s->root);
	if (fchdir(bench_cwd))
		err = bench_fail(r, errno, "fchdir");
	return err;
}

/* fuse-overlayfs mounts, then forks its daemon and exits: wait for the
 * exit, then until the mount is there
 */
static int bench_mount_fuse(struct bench_sys *s, struct bench_res *r)
{
	static char opts[1 << 17];
	ssize_t base = bench_overlay_opts(s, opts, sizeof(opts));
	char dir[PATH_MAX];
	char *argv[] = { "fuse-overlayfs", "-o", opts, s->root, NULL };
	struct statfs sf;
	int i, err;

	if (base < 0)
		return bench_fail(r, 0, "fuse-overlayfs: options too long");
	snprintf(dir, sizeof(dir), "%.*s", (int)base, s->layers[0]);
	err = bench_wait(bench_spawn(argv, dir, STDERR_FILENO), r,
			 "fuse-overlayfs");
	if (err)
		return err;
	for (i = 0; i < 10000; i++) {
		if (!statfs(s->root, &sf) && sf.f_type == BENCH_FUSE_MAGIC)
			return 0;
		usleep(1000);
	}
	return bench_fail(r, 0, "fuse-overlayfs: no mount on %s", s->root);
}

/* unmount PATH; a mount still busy is tried again for two seconds, then
 * detached
 */
static int bench_umount_path(const char *path, struct bench_res *r)
{
	int i;

	for (i = 0; umount2(path, i < 100 ? 0 : MNT_DETACH); i++) {
		if (errno != EBUSY || i == 100)
			return bench_fail(r, errno, "umount %s", path);
		usleep(20000);
	}
	return 0;
}

/*
 * erofs-overlay: attach the image to a free loop device, read-only and
 * with LO_FLAGS_AUTOCLEAR, so that the kernel detaches it when its last
 * user (the erofs mount, or the descriptor returned here if the mount
 * fails) lets go.  Returns the open device, its number in s->loop_nr.
 */
static int bench_loop_attach(struct bench_sys *s, struct bench_res *r)
{
	struct loop_config cfg;
	char dev[32];
	int ctl, img, fd = -1, nr = -1, i, err;

	img = open(s->image, O_RDONLY | O_CLOEXEC);
	if (img < 0)
		return bench_fail(r, errno, "open %s", s->image);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		err = bench_fail(r, errno, "open /dev/loop-control");
		goto out_img;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.fd = img;
	cfg.info.lo_flags = LO_FLAGS_READ_ONLY | LO_FLAGS_AUTOCLEAR;
	/* another process may take the free device first (EBUSY), and a new
	 * device's node may not be in devtmpfs yet (ENOENT)
	 */
	for (i = 0; i < 100 && fd < 0; i++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			err = bench_fail(r, errno, "LOOP_CTL_GET_FREE");
			goto out_ctl;
		}
		snprintf(dev, sizeof(dev), "/dev/loop%d", nr);
		fd = open(dev, O_RDONLY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT) {
			err = bench_fail(r, errno, "open %s", dev);
			goto out_ctl;
		}
		if (fd >= 0 && ioctl(fd, LOOP_CONFIGURE, &cfg)) {
			err = errno;
			close(fd);
			fd = -1;
			if (err != EBUSY) {
				err = bench_fail(r, err, "%s: LOOP_CONFIGURE %s",
						 dev, s->image);
				goto out_ctl;
			}
		}
		if (fd < 0)
			usleep(10000);
	}
	if (fd < 0) {
		err = bench_fail(r, 0, "%s: no loop device free after %d tries",
				 s->image, i);
		goto out_ctl;
	}
	s->loop_nr = nr;
	err = fd;
out_ctl:
	close(ctl);
out_img:
	close(img);
	return err;
}

/* erofs-overlay's lower layer: the image on a loop device, on s->lower */
static int bench_mount_erofs(struct bench_sys *s, struct bench_res *r)
{
	char dev[32];
	int fd, err = 0;

	fd = bench_loop_attach(s, r);
	if (fd < 0)
		return fd;
	snprintf(dev, sizeof(dev), "/dev/loop%d", s->loop_nr);
	if (mount(dev, s->lower, "erofs", MS_RDONLY, NULL))
		err = bench_fail(r, errno, "mount -t erofs %s (%s) on %s",
				 s->image, dev, s->lower);
	/* the mount holds the device now; on failure this detaches it */
	close(fd);
	if (err)
		s->loop_nr = -1;
	else
		s->lower_mounted = true;
	return err;
}

/*
 * Unmount erofs-overlay's erofs, then wait until the kernel has detached
 * its loop device (the device's loop/ directory in sysfs is there while
 * it is bound): the next mount gets its caches afresh.
 */
static int bench_umount_erofs(struct bench_sys *s, struct bench_res *r)
{
	char path[64];
	int err, i;

	if (!s->lower_mounted)
		return 0;
	err = bench_umount_path(s->lower, r);
	if (err)
		return err;
	s->lower_mounted = false;
	snprintf(path, sizeof(path), "/sys/block/loop%d/loop", s->loop_nr);
	for (i = 0; !access(path, F_OK); i++) {
		if (i == 5000)
			return bench_fail(r, 0, "loop%d still holds %s 5 s after umount",
					  s->loop_nr, s->image);
		usleep(1000);
	}
	s->loop_nr = -1;
	return 0;
}

static int bench_fresh_upper(struct bench_sys *s, struct bench_res *r)
{
	char path[PATH_MAX + 2];
	int err;

	if (!*s->upper)
		return 0;
	err = bench_rmtree(s->upper);
	if (err)
		return bench_fail(r, -err, "remove %s", s->upper);
	if (mkdir(s->upper, 0755))
		return bench_fail(r, errno, "mkdir %s", s->upper);
	snprintf(path, sizeof(path), "%s/u", s->upper);
	if (mkdir(path, 0755))
		return bench_fail(r, errno, "mkdir %s", path);
	snprintf(path, sizeof(path), "%s/w", s->upper);
	if (mkdir(path, 0755))
		return bench_fail(r, errno, "mkdir %s", path);
	return 0;
}

/* the mount alone; the caller made the upper directory fresh */
static int bench_mount(struct bench_sys *s, struct bench_res *r)
{
	int err = 0;

	switch (s->type) {
	case BENCH_NONE:
		return 0;
	case BENCH_LAYERFS:
		err = bench_mount_layerfs(s, r);
		break;
	case BENCH_OVERLAY:
		err = bench_mount_overlay(s, r);
		break;
	case BENCH_FUSE:
		err = bench_mount_fuse(s, r);
		break;
	case BENCH_EROFS:
		err = bench_mount_erofs(s, r);
		if (!err) {
			struct bench_res u = { 0 };

			err = bench_mount_overlay(s, r);
			if (err)
				bench_umount_erofs(s, &u);
		}
		break;
	}
	if (!err)
		s->mounted = true;
	return err;
}

static int bench_umount(struct bench_sys *s, struct bench_res *r)
{
	pid_t daemon;
	int i, err;

	if (s->mounted) {
		daemon = s->type == BENCH_FUSE ? bench_fuse_daemon(s->root) : 0;
		err = bench_umount_path(s->root, r);
		if (err)
			return err;
		s->mounted = false;
		/* the daemon's exit is part of its system's cost, not the
		 * next one's
		 */
		for (i = 0; daemon > 0 && !bench_pid_gone(daemon) && i < 10000;
		     i++)
			usleep(1000);
	}
	return s->type == BENCH_EROFS ? bench_umount_erofs(s, r) : 0;
}

/* ---- workloads ---- */

static int bench_timeout(struct bench_res *r)
{
	return bench_fail(r, 0, "over the time limit of %u s", bench_limit);
}

static int bench_open_root(struct bench_sys *s, struct bench_res *r)
{
	int fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? bench_fail(r, errno, "open %s", s->root) : fd;
}

static int bench_walk(struct bench_ctx *c, struct bench_sys *s,
		      struct bench_res *r)
{
	uint64_t h = BENCH_FNV_INIT;
	struct stat st;
	int fd = bench_open_root(s, r);
	size_t i;

	if (fd < 0)
		return fd;
	for (i = 0; i < c->nr_list; i++) {
		if (bench_expired) {
			close(fd);
			return bench_timeout(r);
		}
		if (fstatat(fd, c->list[i], &st, AT_SYMLINK_NOFOLLOW)) {
			bench_fail(r, errno, "lstat %s", c->list[i]);
			close(fd);
			return -EIO;
		}
		h = bench_hash_stat(bench_fnv(c->list[i], strlen(c->list[i]), h),
				    &st);
	}
	close(fd);
	r->ops = c->nr_list;
	r->sum = h;
	r->have_sum = true;
	return 0;
}

/* every entry under the open directory FD (consumed), depth first; CB
 * sees each entry before its directory is entered.  Each level has its
 * own buffer, so a directory is read once, in order, without seeking.
 */
typedef int (*bench_entry_cb)(int dirfd, const char *path, const char *name,
			      unsigned char type, struct bench_res *r);

#define BENCH_DENTS (1 << 15)

static int bench_tree(int fd, char *path, size_t plen, bench_entry_cb cb,
		      struct bench_res *r)
{
	char *buf = malloc(BENCH_DENTS);
	struct stat st;
	long n = 0, pos;
	int err = 0, sub;

	if (!buf)
		err = bench_fail(r, ENOMEM, "%s", path);
	while (!err) {
		n = syscall(SYS_getdents64, fd, buf, BENCH_DENTS);
		if (n <= 0)
			break;
		for (pos = 0; pos < n && !err;) {
			struct dirent64 *d = (struct dirent64 *)(buf + pos);
			unsigned char type = d->d_type;
			size_t nlen = strlen(d->d_name);

			pos += d->d_reclen;
			if (bench_expired) {
				err = bench_timeout(r);
				break;
			}
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (type == DT_UNKNOWN) {
				if (fstatat(fd, d->d_name, &st,
					    AT_SYMLINK_NOFOLLOW)) {
					err = bench_fail(r, errno, "lstat %s/%s",
							 path, d->d_name);
					break;
				}
				type = IFTODT(st.st_mode);
			}
			if (plen + nlen + 2 > PATH_MAX) {
				err = bench_fail(r, ENAMETOOLONG, "%s", path);
				break;
			}
			path[plen] = '/';
			memcpy(path + plen + 1, d->d_name, nlen + 1);
			err = cb(fd, path, d->d_name, type, r);
			if (!err && type == DT_DIR) {
				sub = openat(fd, d->d_name, O_RDONLY |
					     O_DIRECTORY | O_NOFOLLOW |
					     O_CLOEXEC);
				if (sub < 0)
					err = bench_fail(r, errno, "open %s",
							 path);
				else
					err = bench_tree(sub, path,
							 plen + 1 + nlen, cb,
							 r);
			}
			path[plen] = '\0';
		}
	}
	if (n < 0 && !err)
		err = bench_fail(r, errno, "getdents64 %s", path);
	free(buf);
	close(fd);
	return err;
}

static uint64_t bench_tree_sum;
static uint64_t bench_tree_ops;

/* order does not matter: the sum of one hash per entry */
static int bench_readdir_cb(int dirfd, const char *path, const char *name,
			    unsigned char type, struct bench_res *r)
{
	(void)dirfd;
	(void)name;
	(void)r;
	bench_tree_sum += bench_mix(bench_fnv(path, strlen(path),
					      BENCH_FNV_INIT), type);
	bench_tree_ops++;
	return 0;
}

static int bench_run_tree(struct bench_sys *s, const char *dir,
			  bench_entry_cb cb, struct bench_res *r)
{
	char path[PATH_MAX];
	int root = bench_open_root(s, r), fd;

	if (root < 0)
		return root;
	fd = openat(root, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(root);
	if (fd < 0)
		return bench_fail(r, errno, "open %s", dir);
	snprintf(path, sizeof(path), "%s", dir);
	bench_tree_sum = 0;
	bench_tree_ops = 0;
	return bench_tree(fd, path, strlen(path), cb, r);
}

static int bench_readdir(struct bench_ctx *c, struct bench_sys *s,
			 struct bench_res *r)
{
	int err = bench_run_tree(s, c->argv[0], bench_readdir_cb, r);

	r->ops = bench_tree_ops;
	r->sum = bench_tree_sum;
	r->have_sum = true;
	return err;
}

static int bench_stat_names(struct bench_ctx *c, struct bench_sys *s,
			    struct bench_res *r)
{
	unsigned long n = strtoul(c->argv[2], NULL, 10), i;
	unsigned long rounds = c->argc > 4 ? strtoul(c->argv[4], NULL, 10) : 1;
	bool exist = !strcmp(c->argv[3], "exist");
	char path[PATH_MAX];
	uint64_t h = BENCH_FNV_INIT;
	struct stat st;
	int fd = bench_open_root(s, r), ret;

	if (fd < 0)
		return fd;
	for (i = 0; i < n * rounds; i++) {
		if (bench_expired) {
			close(fd);
			return bench_timeout(r);
		}
		snprintf(path, sizeof(path), "%s/%s%lu", c->argv[0], c->argv[1],
			 i % n);
		ret = fstatat(fd, path, &st, AT_SYMLINK_NOFOLLOW);
		if (exist ? ret != 0 : (ret == 0 || errno != ENOENT)) {
			bench_fail(r, ret ? errno : EEXIST, "stat %s", path);
			close(fd);
			return -EIO;
		}
		/* the checksum covers one round: warm and cold runs agree */
		if (i >= n)
			continue;
		h = bench_fnv(path, strlen(path), h);
		if (!ret)
			h = bench_hash_stat(h, &st);
	}
	close(fd);
	r->ops = n * rounds;
	r->sum = h;
	r->have_sum = true;
	return 0;
}

static int bench_open_file(struct bench_sys *s, const char *rel, int flags,
			   struct bench_res *r)
{
	char path[2 * PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", s->root, rel);
	fd = open(path, flags | O_CLOEXEC);
	return fd < 0 ? bench_fail(r, errno, "open %s", rel) : fd;
}

static int bench_read(struct bench_ctx *c, struct bench_sys *s,
		      struct bench_res *r)
{
	static char *buf;
	uint64_t h = BENCH_FNV_INIT, total = 0;
	ssize_t n = 0;
	int fd;

	if (!buf && !(buf = malloc(BENCH_CHUNK)))
		return bench_fail(r, ENOMEM, "read");
	fd = bench_open_file(s, c->argv[0], O_RDONLY, r);
	if (fd < 0)
		return fd;
	while (!bench_expired && (n = read(fd, buf, BENCH_CHUNK)) > 0) {
		if (c->verify)
			h = bench_hash_data(buf, n, h);
		total += n;
	}
	if (n < 0)
		bench_fail(r, errno, "read %s", c->argv[0]);
	close(fd);
	r->ops = total;
	r->sum = h;
	r->have_sum = c->verify;
	return n < 0 ? -EIO : 0;
}

static int bench_mmap(struct bench_ctx *c, struct bench_sys *s,
		      struct bench_res *r)
{
	volatile unsigned char sink = 0;
	unsigned char *p;
	struct stat st;
	uint64_t h = BENCH_FNV_INIT;
	size_t off;
	int fd = bench_open_file(s, c->argv[0], O_RDONLY, r);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		close(fd);
		return bench_fail(r, errno, "fstat %s", c->argv[0]);
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return bench_fail(r, errno, "mmap %s", c->argv[0]);
	if (c->verify)
		h = bench_hash_data(p, st.st_size, h);
	else
		for (off = 0; off < (size_t)st.st_size; off += BENCH_PAGE)
			sink += p[off];
	munmap(p, st.st_size);
	(void)sink;
	r->ops = st.st_size;
	r->sum = h;
	r->have_sum = c->verify;
	return 0;
}

static int bench_randread(struct bench_ctx *c, struct bench_sys *s,
			  struct bench_res *r)
{
	static char buf[BENCH_PAGE];
	unsigned long n = strtoul(c->argv[1], NULL, 10), i;
	uint64_t seed = 0x2545f4914f6cdd1dULL, h = BENCH_FNV_INIT, pages;
	struct stat st;
	int fd = bench_open_file(s, c->argv[0], O_RDONLY, r);

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || st.st_size < BENCH_PAGE) {
		close(fd);
		return bench_fail(r, errno, "fstat %s (or under 4 KiB)",
				  c->argv[0]);
	}
	pages = st.st_size / BENCH_PAGE;
	for (i = 0; i < n; i++) {
		off_t off = (bench_xorshift(&seed) % pages) * BENCH_PAGE;

		if (bench_expired) {
			close(fd);
			return bench_timeout(r);
		}
		if (pread(fd, buf, BENCH_PAGE, off) != BENCH_PAGE) {
			close(fd);
			return bench_fail(r, errno, "pread %s at %lld",
					  c->argv[0], (long long)off);
		}
		if (c->verify)
			h = bench_hash_data(buf, BENCH_PAGE, h);
	}
	close(fd);
	r->ops = n;
	r->sum = h;
	r->have_sum = c->verify;
	return 0;
}

static int bench_copyup(struct bench_ctx *c, struct bench_sys *s,
			struct bench_res *r)
{
	static char block[BENCH_PAGE];
	int fd = bench_open_file(s, c->argv[0], O_WRONLY, r);
	int err = 0;

	if (fd < 0)
		return fd;
	memset(block, 'X', sizeof(block));
	if (pwrite(fd, block, sizeof(block), 0) != sizeof(block))
		err = bench_fail(r, errno, "pwrite %s", c->argv[0]);
	if (close(fd) && !err)
		err = bench_fail(r, errno, "close %s", c->argv[0]);
	r->ops = 1;
	return err;
}

/* after the copy-up: what the file now reads, through the mount */
static int bench_copyup_check(struct bench_ctx *c, struct bench_sys *s,
			      struct bench_res *r)
{
	struct bench_ctx v = *c;
	uint64_t ops = r->ops;
	int err;

	v.verify = true;
	err = bench_read(&v, s, r);
	r->ops = ops;
	return err;
}

static unsigned int bench_chown_uid, bench_chown_gid;

static int bench_chown_cb(int dirfd, const char *path, const char *name,
			  unsigned char type, struct bench_res *r)
{
	(void)type;
	if (fchownat(dirfd, name, bench_chown_uid, bench_chown_gid,
		     AT_SYMLINK_NOFOLLOW))
		return bench_fail(r, errno, "lchown %s", path);
	bench_tree_ops++;
	return 0;
}

static int bench_chown_r(struct bench_ctx *c, struct bench_sys *s,
			 struct bench_res *r)
{
	int root = bench_open_root(s, r), err;

	if (root < 0)
		return root;
	bench_chown_uid = strtoul(c->argv[1], NULL, 10);
	bench_chown_gid = strtoul(c->argv[2], NULL, 10);
	err = fchownat(root, c->argv[0], bench_chown_uid, bench_chown_gid,
		       AT_SYMLINK_NOFOLLOW);
	close(root);
	if (err)
		return bench_fail(r, errno, "lchown %s", c->argv[0]);
	err = bench_run_tree(s, c->argv[0], bench_chown_cb, r);
	r->ops = bench_tree_ops + 1;
	return err;
}

/* a tree's names, metadata and contents, for the checks after a write */
static int bench_content_cb(int dirfd, const char *path, const char *name,
			    unsigned char type, struct bench_res *r)
{
	static char buf[BENCH_CHUNK];
	uint64_t h = bench_fnv(path, strlen(path), BENCH_FNV_INIT);
	struct stat st;
	ssize_t n;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return bench_fail(r, errno, "lstat %s", path);
	h = bench_hash_stat(h, &st);
	if (type == DT_REG) {
		fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return bench_fail(r, errno, "open %s", path);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			h = bench_hash_data(buf, n, h);
		close(fd);
		if (n < 0)
			return bench_fail(r, errno, "read %s", path);
	}
	bench_tree_sum += h;
	bench_tree_ops++;
	return 0;
}

/* a tree's names and metadata */
static int bench_meta_cb(int dirfd, const char *path, const char *name,
			 unsigned char type, struct bench_res *r)
{
	struct stat st;

	(void)type;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return bench_fail(r, errno, "lstat %s", path);
	bench_tree_sum += bench_hash_stat(bench_fnv(path, strlen(path),
						    BENCH_FNV_INIT), &st);
	bench_tree_ops++;
	return 0;
}

/* the checksum of the tree under the workload's directory, walked by @cb;
 * the operation count stays that of the timed pass */
static int bench_sum_tree(struct bench_ctx *c, struct bench_sys *s,
			  struct bench_res *r, bench_entry_cb cb)
{
	uint64_t ops = r->ops;
	int err = bench_run_tree(s, c->argv[0], cb, r);

	r->ops = ops;
	r->sum = bench_tree_sum;
	r->have_sum = true;
	return err;
}

static int bench_chown_check(struct bench_ctx *c, struct bench_sys *s,
			     struct bench_res *r)
{
	return bench_sum_tree(c, s, r, bench_meta_cb);
}

static int bench_tree_check(struct bench_ctx *c, struct bench_sys *s,
			    struct bench_res *r)
{
	return bench_sum_tree(c, s, r, bench_content_cb);
}

static int bench_churn(struct bench_ctx *c, struct bench_sys *s,
		       struct bench_res *r)
{
	static const char data[64] = "a small file, written once, renamed, removed\n";
	unsigned long n = strtoul(c->argv[1], NULL, 10), i;
	char a[32], b[32];
	int dir, fd, err = 0;

	dir = bench_open_root(s, r);
	if (dir < 0)
		return dir;
	fd = openat(dir, c->argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(dir);
	if (fd < 0)
		return bench_fail(r, errno, "open %s", c->argv[0]);
	dir = fd;
	for (i = 0; i < n && !err && !bench_expired; i++) {
		snprintf(a, sizeof(a), "churn-%lu", i);
		fd = openat(dir, a, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0644);
		if (fd < 0) {
			err = bench_fail(r, errno, "create %s", a);
			break;
		}
		if (write(fd, data, sizeof(data)) != sizeof(data))
			err = bench_fail(r, errno, "write %s", a);
		close(fd);
	}
	for (i = 0; i < n && !err && !bench_expired; i++) {
		snprintf(a, sizeof(a), "churn-%lu", i);
		snprintf(b, sizeof(b), "moved-%lu", i);
		if (renameat(dir, a, dir, b))
			err = bench_fail(r, errno, "rename %s", a);
	}
	for (i = 0; i < n && !err && !bench_expired; i++) {
		snprintf(b, sizeof(b), "moved-%lu", i);
		if (unlinkat(dir, b, 0))
			err = bench_fail(r, errno, "unlink %s", b);
	}
	close(dir);
	r->ops = n;
	return err;
}

/* after the churn the directory lists as before it */
static int bench_churn_check(struct bench_ctx *c, struct bench_sys *s,
			     struct bench_res *r)
{
	uint64_t ops = r->ops;
	int err = bench_readdir(c, s, r);

	r->ops = ops;
	return err;
}

static int bench_untar(struct bench_ctx *c, struct bench_sys *s,
		       struct bench_res *r)
{
	char dir[2 * PATH_MAX];
	char *argv[] = { "tar", "-xf", c->argv[0], "-C", dir, NULL };

	snprintf(dir, sizeof(dir), "%s/%s", s->root, c->argv[1]);
	if (mkdir(dir, 0755))
		return bench_fail(r, errno, "mkdir %s", c->argv[1]);
	r->ops = 1;
	return bench_wait(bench_spawn(argv, NULL, -1), r, "tar");
}

static int bench_untar_check(struct bench_ctx *c, struct bench_sys *s,
			     struct bench_res *r)
{
	struct bench_ctx v = *c;

	v.argv = c->argv + 1;
	return bench_tree_check(&v, s, r);
}

static void bench_untar_cleanup(struct bench_ctx *c, struct bench_sys *s)
{
	char dir[2 * PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/%s", s->root, c->argv[1]);
	bench_rmtree(dir);
}

static int bench_mount_op(struct bench_ctx *c, struct bench_sys *s,
			  struct bench_res *r)
{
	(void)c;
	r->ops = s->nr_layers;
	return bench_mount(s, r);
}

/* the mounted tree's top directory, untimed */
static int bench_mount_check(struct bench_ctx *c, struct bench_sys *s,
			     struct bench_res *r)
{
	uint64_t ops = r->ops, h = 0;
	struct dirent *d;
	DIR *dir;

	(void)c;
	dir = opendir(s->root);
	if (!dir)
		return bench_fail(r, errno, "opendir %s", s->root);
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			h += bench_fnv(d->d_name, strlen(d->d_name),
				       BENCH_FNV_INIT);
	closedir(dir);
	r->ops = ops;
	r->sum = h;
	r->have_sum = true;
	return 0;
}

static int bench_start(struct bench_ctx *c, struct bench_sys *s,
		       struct bench_res *r)
{
	static char *envp[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LANG=C.UTF-8", "HOME=/root", NULL
	};
	char out[4096];
	size_t len = 0;
	ssize_t n;
	int pipefd[2], err;
	pid_t pid;

	err = bench_mount(s, r);
	if (err)
		return err;
	if (pipe2(pipefd, O_CLOEXEC))
		return bench_fail(r, errno, "pipe");
	pid = fork();
	if (!pid) {
		dup2(pipefd[1], STDOUT_FILENO);
		if (chroot(s->root) || chdir("/"))
			_exit(126);
		execve(c->argv[0], c->argv, envp);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += n;
	close(pipefd[0]);
	err = bench_wait(pid, r, c->argv[0]);
	r->ops = 1;
	r->sum = bench_fnv(out, len, BENCH_FNV_INIT);
	r->have_sum = true;
	return err;
}

/* ---- cmd: a pipeline of programs, timed from outside ---- */

/* -M: the parent cgroup; the cgroup of the pass running and its
 * cgroup.procs, open while the pass runs (else -1), which each stage
 * writes itself into before its exec
 */
static const char *bench_cg_parent;
static char bench_cg_dir[PATH_MAX];
static int bench_cg_procs = -1;

/*
 * Fork one stage of a cmd pipeline: standard input from IN (-1:
 * /dev/null), standard output to OUT, in DIR, in the process group PGID
 * (0: a group of its own) and, under -M, in the pass's cgroup.  The
 * environment is fixed, so that every system's output reads alike.
 */
static pid_t bench_spawn_stage(char **argv, const char *dir, int in, int out,
			       pid_t pgid)
{
	static char *const envp[] = {
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"LC_ALL=C", "TZ=UTC0", NULL
	};
	pid_t pid = fork();

	if (pid) {
		/* here too, so that the group is there whichever runs first */
		if (pid > 0)
			setpgid(pid, pgid ? pgid : pid);
		return pid;
	}
	signal(SIGPIPE, SIG_DFL);
	if (setpgid(0, pgid))
		_exit(125);
	if (bench_cg_procs >= 0 && write(bench_cg_procs, "0", 1) != 1) {
		fprintf(stderr, "lfs-bench: cmd: %s into %s: %s\n", argv[0],
			bench_cg_dir, strerror(errno));
		_exit(125);
	}
	if (in < 0)
		in = open("/dev/null", O_RDONLY);
	if (in < 0 || dup2(in, STDIN_FILENO) < 0 ||
	    dup2(out, STDOUT_FILENO) < 0)
		_exit(125);
	if (chdir(dir)) {
		fprintf(stderr, "lfs-bench: cmd: chdir %s: %s\n", dir,
			strerror(errno));
		_exit(126);
	}
	execvpe(argv[0], argv, envp);
	fprintf(stderr, "lfs-bench: cmd: exec %s: %s\n", argv[0],
		strerror(errno));
	_exit(127);
}

/* room for more output: twice as much, up to BENCH_OUT_MAX */
static int bench_out_grow(struct bench_ctx *c, struct bench_res *r)
{
	size_t cap = c->out_cap ? 2 * c->out_cap : 32UL << 20;
	char *p;

	if (cap > BENCH_OUT_MAX)
		return bench_fail(r, 0, "%s: output over %lu MiB", c->stage[0][0],
				  BENCH_OUT_MAX >> 20);
	p = realloc(c->out, cap);
	if (!p)
		return bench_fail(r, ENOMEM, "%s: output", c->stage[0][0]);
	c->out = p;
	c->out_cap = cap;
	return 0;
}

/*
 * The pipeline, from the first fork until the last stage has exited; its
 * output is read into c->out as it comes, and checked after the timed part
 * (bench_cmd_check).  A stage that exits other than 0, or a signal,
 * fails the system; so does the time limit (the watchdog kills the group).
 */
static int bench_cmd(struct bench_ctx *c, struct bench_sys *s,
		     struct bench_res *r)
{
	char dir[2 * PATH_MAX];
	pid_t pid[BENCH_MAX_STAGES], pgid = 0;
	int p[2], in = -1, n, i, err = 0;
	ssize_t got;

	snprintf(dir, sizeof(dir), "%s/%s", s->root, c->argv[0]);
	c->out_len = 0;
	for (n = 0; n < c->nr_stages; n++) {
		if (pipe2(p, O_CLOEXEC)) {
			err = bench_fail(r, errno, "pipe");
			break;
		}
		pid[n] = bench_spawn_stage(c->stage[n], dir, in, p[1], pgid);
		close(p[1]);
		if (in >= 0)
			close(in);
		in = p[0];
		if (pid[n] < 0) {
			err = bench_fail(r, errno, "fork %s", c->stage[n][0]);
			break;
		}
		if (!pgid) {
			pgid = pid[n];
			bench_watchdog_group(pgid);
		}
	}
	while (!err) {
		if (c->out_len == c->out_cap) {
			err = bench_out_grow(c, r);
			if (err)
				break;
		}
		got = read(in, c->out + c->out_len, c->out_cap - c->out_len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			err = bench_fail(r, errno, "read the output of %s",
					 c->stage[n - 1][0]);
		if (got <= 0)
			break;
		c->out_len += got;
	}
	/* on an error the stages still writing get EPIPE and end */
	if (in >= 0)
		close(in);
	for (i = 0; i < n; i++) {
		struct bench_res w = { 0 };

		if (bench_wait(pid[i], &w, c->stage[i][0]) && !err) {
			memcpy(r->err, w.err, sizeof(r->err));
			err = -EIO;
		}
	}
	bench_watchdog_group(0);
	return err;
}

/* does the line L (N bytes) begin with P? */
static bool bench_starts(const char *l, size_t n, const char *p)
{
	size_t k = strlen(p);

	return n >= k && !memcmp(l, p, k);
}

/* the next field of L (N bytes) from *POS on, separated by spaces or
 * tabs; NULL at the end of the line
 */
static const char *bench_field(const char *l, size_t n, size_t *pos,
			       size_t *len)
{
	size_t i = *pos, b;

	while (i < n && (l[i] == ' ' || l[i] == '\t'))
		i++;
	b = i;
	while (i < n && l[i] != ' ' && l[i] != '\t')
		i++;
	*pos = i;
	*len = i - b;
	return i > b ? l + b : NULL;
}

/* a line's hash for cmd's checksum; 0 leaves the line out of it */
typedef uint64_t (*bench_line_fn)(const char *l, size_t n);

static uint64_t bench_whole_line(const char *l, size_t n)
{
	return bench_fnv(l, n, BENCH_FNV_INIT);
}

/*
 * A line of "ls -l": the mode, owner and group; the size (a device's
 * numbers) of all but directories; the time of regular files only and
 * the name (with a symlink's target), as bench_hash_stat() has them.  Not
 * the link count (overlay counts a merged directory's links its own way)
 * nor "total" (blocks).  Directory headings ("./etc:") count whole.
 */
static uint64_t bench_ls_line(const char *l, size_t n)
{
	const char *f[9];
	size_t len[9], pos = 0;
	uint64_t h = BENCH_FNV_INIT;
	int nf, i;

	if (!n || bench_starts(l, n, "total "))
		return 0;
	if (!memchr("-dlcbps", l[0], 7))
		return bench_whole_line(l, n);
	/* mode, links, owner, group, size or "major, minor", 3 of time */
	nf = l[0] == 'c' || l[0] == 'b' ? 9 : 8;
	for (i = 0; i < nf; i++) {
		f[i] = bench_field(l, n, &pos, &len[i]);
		if (!f[i])
			return bench_whole_line(l, n);
	}
	/* the name begins after the one space that follows the time */
	pos = pos < n ? pos + 1 : n;
	for (i = 0; i < nf; i++) {
		if (i == 1 || (i >= 4 && l[0] == 'd'))
			continue;
		if (i >= nf - 3 && l[0] != '-')
			continue;
		h = bench_mix(h, bench_fnv(f[i], len[i], BENCH_FNV_INIT));
	}
	return bench_mix(h, bench_fnv(l + pos, n - pos, BENCH_FNV_INIT));
}

/*
 * A line of stat(1)'s default output: "File:" (the name), the size of
 * "Size:", "Access: (" (mode, owner, group), "Modify:" to the second.
 * Not the blocks, device, inode or links, nor the other times.
 */
static uint64_t bench_stat_line(const char *l, size_t n)
{
	const char *f;
	size_t pos = 7, len;

	if (bench_starts(l, n, "  File: ") || bench_starts(l, n, "Access: ("))
		return bench_whole_line(l, n);
	if (bench_starts(l, n, "  Size: ")) {
		f = bench_field(l, n, &pos, &len);
		return f ? bench_mix(1, bench_fnv(f, len, BENCH_FNV_INIT)) : 0;
	}
	/* "Modify: YYYY-MM-DD hh:mm:ss" */
	if (bench_starts(l, n, "Modify: "))
		return bench_whole_line(l, n < 27 ? n : 27);
	return 0;
}

static const struct {
	const char *name;
	bench_line_fn fn;
} bench_formats[] = {
	{ "lines", bench_whole_line },
	{ "ls-l", bench_ls_line },
	{ "stat", bench_stat_line },
};

static bench_line_fn bench_line_hash;

/* untimed, after the pipeline: count the lines, sum their hashes */
static int bench_cmd_check(struct bench_ctx *c, struct bench_sys *s,
			   struct bench_res *r)
{
	uint64_t sum = 0, lines = 0;
	const char *nl;
	size_t b, e;

	(void)s;
	for (b = 0; b < c->out_len; b = e + 1) {
		nl = memchr(c->out + b, '\n', c->out_len - b);
		e = nl ? (size_t)(nl - c->out) : c->out_len;
		sum += bench_line_hash(c->out + b, e - b);
		lines++;
	}
	if (!lines)
		return bench_fail(r, 0, "%s: no output", c->stage[0][0]);
	r->ops = lines;
	r->sum = bench_mix(sum, lines);
	r->have_sum = true;
	return 0;
}

/*
 * cmd's arguments: DIR FORMAT PROG [ARG...] [| PROG [ARG...]]...; the
 * stages point into argv, each "|" becomes the end of one.  The output
 * buffer is made and touched here, untimed.
 */
static int bench_cmd_setup(struct bench_ctx *c)
{
	struct bench_res r = { 0 };
	size_t k;
	int i;

	for (k = 0; k < ARRAY_SIZE(bench_formats); k++)
		if (!strcmp(c->argv[1], bench_formats[k].name))
			bench_line_hash = bench_formats[k].fn;
	if (!bench_line_hash) {
		fprintf(stderr, "lfs-bench: cmd: format \"%s\": not lines, ls-l or stat\n",
			c->argv[1]);
		return -1;
	}
	c->stage[0] = c->argv + 2;
	c->nr_stages = 1;
	for (i = 2; i < c->argc; i++) {
		if (strcmp(c->argv[i], "|"))
			continue;
		c->argv[i] = NULL;
		if (c->nr_stages == BENCH_MAX_STAGES || i + 1 == c->argc) {
			fprintf(stderr, "lfs-bench: cmd: a \"|\" at the end, or over %d programs\n",
				BENCH_MAX_STAGES);
			return -1;
		}
		c->stage[c->nr_stages++] = c->argv + i + 1;
	}
	for (i = 0; i < c->nr_stages; i++)
		if (!c->stage[i][0]) {
			fprintf(stderr, "lfs-bench: cmd: program %d of the pipeline is empty\n",
				i + 1);
			return -1;
		}
	if (bench_out_grow(c, &r)) {
		fprintf(stderr, "lfs-bench: cmd: %s\n", r.err);
		return -1;
	}
	memset(c->out, 0, c->out_cap);
	return 0;
}

/* ---- -M: the memory of a pass ---- */

/*
 * A new cgroup for the pass of S, which the cmd stages join (and
 * fuse-overlayfs's daemon, which serves them): charges made before, at
 * mount and by the warm-up of the programs, stay outside.
 */
static int bench_cg_enter(struct bench_sys *s, int rep, struct bench_res *r)
{
	char path[PATH_MAX + 16], pid[16];
	pid_t daemon;

	snprintf(bench_cg_dir, sizeof(bench_cg_dir), "%s/%s-%d",
		 bench_cg_parent, s->name, rep);
	if (mkdir(bench_cg_dir, 0755)) {
		bench_fail(r, errno, "mkdir %s", bench_cg_dir);
		*bench_cg_dir = '\0';
		return -EIO;
	}
	snprintf(path, sizeof(path), "%s/memory.peak", bench_cg_dir);
	if (access(path, R_OK))
		return bench_fail(r, errno,
				  "%s (is +memory in %s/cgroup.subtree_control?)",
				  path, bench_cg_parent);
	snprintf(path, sizeof(path), "%s/cgroup.procs", bench_cg_dir);
	bench_cg_procs = open(path, O_WRONLY | O_CLOEXEC);
	if (bench_cg_procs < 0)
		return bench_fail(r, errno, "open %s", path);
	if (s->type != BENCH_FUSE)
		return 0;
	daemon = bench_fuse_daemon(s->root);
	if (daemon <= 0)
		return bench_fail(r, 0, "no fuse-overlayfs daemon serves %s",
				  s->root);
	snprintf(pid, sizeof(pid), "%d", (int)daemon);
	if (write(bench_cg_procs, pid, strlen(pid)) < 0)
		return bench_fail(r, errno, "fuse-overlayfs (pid %s) into %s",
				  pid, bench_cg_dir);
	return 0;
}

/* the pass's cgroup's memory.peak: the most it held at once, in bytes */
static int bench_cg_peak(struct bench_res *r)
{
	char path[PATH_MAX + 16], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/memory.peak", bench_cg_dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bench_fail(r, errno, "open %s", path);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return bench_fail(r, n ? errno : 0, "read %s", path);
	buf[n] = '\0';
	r->mem = strtoull(buf, NULL, 10);
	return 0;
}

/* after the pass (and its unmount: the daemon has left): remove the
 * cgroup; one that stays is reported, the pass's result stands
 */
static void bench_cg_leave(void)
{
	int i;

	if (bench_cg_procs >= 0)
		close(bench_cg_procs);
	bench_cg_procs = -1;
	if (!*bench_cg_dir)
		return;
	for (i = 0; rmdir(bench_cg_dir) && errno == EBUSY && i < 100; i++)
		usleep(10000);
	if (!access(bench_cg_dir, F_OK))
		fprintf(stderr, "lfs-bench: rmdir %s: %s\n", bench_cg_dir,
			strerror(errno));
	*bench_cg_dir = '\0';
}

static const struct bench_op bench_ops[] = {
	{ "walk", 1, 1, false, false, bench_walk, NULL, NULL },
	{ "readdir", 1, 1, false, false, bench_readdir, NULL, NULL },
	{ "stat-names", 4, 5, false, false, bench_stat_names, NULL, NULL },
	{ "read", 1, 1, false, false, bench_read, NULL, NULL },
	{ "mmap", 1, 1, false, false, bench_mmap, NULL, NULL },
	{ "randread", 2, 2, false, false, bench_randread, NULL, NULL },
	{ "copyup", 1, 1, false, true, bench_copyup, bench_copyup_check,
	  NULL },
	{ "chown-r", 3, 3, false, true, bench_chown_r, bench_chown_check,
	  NULL },
	{ "churn", 2, 2, false, true, bench_churn, bench_churn_check, NULL },
	{ "untar", 2, 2, false, true, bench_untar, bench_untar_check,
	  bench_untar_cleanup },
	{ "mount", 0, 0, true, false, bench_mount_op, bench_mount_check,
	  NULL },
	{ "start", 1, -1, true, false, bench_start, NULL, NULL },
	{ "cmd", 3, -1, false, false, bench_cmd, bench_cmd_check, NULL },
};

/* ---- the run ---- */

static FILE *bench_out;
static const char *bench_workload, *bench_param;
static const char *const bench_mode_names[] = { "warm", "cold", "fresh" };

static void bench_row(struct bench_sys *s, enum bench_mode mode, int rep,
		      double secs, const struct bench_res *r)
{
	char sum[24] = "-", status[600];
	char *p;

	if (s->have_sum)
		snprintf(sum, sizeof(sum), "%016" PRIx64, s->sum);
	if (*r->err) {
		snprintf(status, sizeof(status), "FAIL: %s", r->err);
		for (p = status; *p; p++)
			if (*p == ',' || *p == '\n' || *p == '"')
				*p = ';';
		fprintf(bench_out, "%s,%s,%s,%s,%d,,,%s,%s\n", bench_workload,
			s->name, bench_param, bench_mode_names[mode], rep, sum,
			status);
	} else {
		fprintf(bench_out, "%s,%s,%s,%s,%d,%.9f,%" PRIu64 ",%s,ok\n",
			bench_workload, s->name, bench_param,
			bench_mode_names[mode], rep, secs,
			bench_cg_parent ? r->mem : r->ops, sum);
	}
	fflush(bench_out);
}

/*
 * The order of the systems in repetition REP.  What ran just before a
 * pass can weigh on it (measured: layerfs's cold mounts right after
 * fuse-overlayfs's, even with its daemon gone; the cause is not known),
 * so no system may always follow the same one, as it would in a fixed
 * order or a rotation of one.  The rows of a balanced Latin square
 * (r, r+1, r-1, r+2, r-2, ... mod N) put every system right after every
 * other once in N repetitions when N is even; for odd N the next N rows
 * are the same ones reversed.
 */
static void bench_order(int rep, int nsys, int *order)
{
	int j, w, t;

	for (j = 0; j < nsys; j++) {
		w = j % 2 ? (j + 1) / 2 : nsys - j / 2;
		order[j] = (rep + w) % nsys;
	}
	if (nsys % 2 && (rep / nsys) % 2)
		for (j = 0; j < nsys / 2; j++) {
			t = order[j];
			order[j] = order[nsys - 1 - j];
			order[nsys - 1 - j] = t;
		}
}

static const char *bench_prewarm_progs[BENCH_MAX_PREWARM];	/* -P */
static int bench_nr_prewarm;

/* one pass on one system; TIMED says whether this is a repetition */
static int bench_pass(const struct bench_op *op, struct bench_ctx *c,
		      struct bench_sys *s, enum bench_mode mode, int rep,
		      bool timed)
{
	struct bench_res r = { 0 };
	double t0, t1;
	int err = 0, i;

	c->verify = !timed;
	if (!s->mounted)
		err = bench_fresh_upper(s, &r);
	if (!err && !s->mounted && !op->mounts)
		err = bench_mount(s, &r);
	if (!err && timed && mode != BENCH_WARM) {
		err = bench_drop_caches();
		if (err)
			bench_fail(&r, -err, "drop_caches");
		else if (s->type == BENCH_FUSE && op->mounts)
			bench_prewarm("fuse-overlayfs");
		else if (op->run == bench_untar)
			bench_prewarm("tar");
		for (i = 0; op->run == bench_cmd && i < c->nr_stages; i++)
			bench_prewarm(c->stage[i][0]);
		for (i = 0; i < bench_nr_prewarm; i++)
			bench_prewarm(bench_prewarm_progs[i]);
	}
	if (!err && bench_cg_parent)
		err = bench_cg_enter(s, rep, &r);
	bench_watchdog_arm(s);
	t0 = bench_now();
	if (!err)
		err = op->run(c, s, &r);
	t1 = bench_now();
	bench_watchdog_disarm();
	if (bench_expired) {
		memset(&r, 0, sizeof(r));
		err = bench_timeout(&r);
	}
	if (!err && bench_cg_parent)
		err = bench_cg_peak(&r);
	if (!err && op->check && (!op->writes || rep == 0))
		err = op->check(c, s, &r);
	if (op->cleanup && s->type == BENCH_NONE)
		op->cleanup(c, s);
	if (mode != BENCH_WARM || op->mounts) {
		struct bench_res u = { 0 };

		if (bench_umount(s, &u) && !err) {
			r = u;
			err = -EIO;
		}
	}
	if (bench_cg_parent)
		bench_cg_leave();
	if (!err && !timed) {
		s->ops = r.ops;
		s->sum = r.sum;
		s->have_sum = r.have_sum;
	} else if (!err && mode != BENCH_WARM && rep == 0) {
		s->ops = r.ops;
		s->sum = r.sum;
		s->have_sum = r.have_sum;
	} else if (!err && (r.ops != s->ops ||
			    (r.have_sum && s->have_sum && r.sum != s->sum))) {
		err = bench_fail(&r, 0,
				 "pass %d read other data than the first",
				 rep);
	}
	if (err && !*r.err)
		bench_fail(&r, -err, "%s", op->name);
	if (timed || err)
		bench_row(s, mode, rep, t1 - t0, &r);
	if (err)
		s->failed = true;
	return err;
}

static int bench_type(const char *t, enum bench_type *type)
{
	static const char *const names[] = {
		[BENCH_NONE] = "none", [BENCH_LAYERFS] = "layerfs",
		[BENCH_OVERLAY] = "overlay", [BENCH_FUSE] = "fuse-overlayfs",
		[BENCH_EROFS] = "erofs-overlay",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(t, names[i])) {
			*type = i;
			return 0;
		}
	return -EINVAL;
}

/* read lines of FILE into an array; returns the count or -errno */
static ssize_t bench_read_lines(const char *file, char ***out)
{
	char *line = NULL, **v = NULL, **nv;
	size_t cap = 0, n = 0, lcap = 0;
	ssize_t len;
	FILE *f = fopen(file, "re");

	if (!f)
		return -errno;
	while ((len = getline(&line, &lcap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		v[n] = strdup(line);
		if (!v[n])
			break;
		n++;
	}
	free(line);
	fclose(f);
	if (len > 0) {
		free(v);
		return -ENOMEM;
	}
	*out = v;
	return n;
}

/*
 * erofs-overlay's layers: the erofs mount ROOT.erofs and, for a read-only
 * mount, the directory ROOT.empty, which must be empty (both are made
 * here if missing)
 */
static int bench_erofs_layers(struct bench_sys *s, const char *image)
{
	char empty[PATH_MAX + 8];
	struct dirent *d;
	size_t i;
	DIR *dir;

	s->loop_nr = -1;
	snprintf(s->image, sizeof(s->image), "%s", image);
	snprintf(s->lower, sizeof(s->lower), "%s.erofs", s->root);
	snprintf(empty, sizeof(empty), "%s.empty", s->root);
	s->layers = calloc(2, sizeof(*s->layers));
	if (!s->layers)
		return -1;
	s->layers[0] = s->lower;
	s->nr_layers = 1;
	if (!*s->upper)
		s->layers[s->nr_layers++] = strdup(empty);
	for (i = 0; i < s->nr_layers; i++) {
		if (!s->layers[i])
			return -1;
		if (mkdir(s->layers[i], 0755) && errno != EEXIST) {
			fprintf(stderr, "lfs-bench: %s: mkdir %s: %s\n", s->name,
				s->layers[i], strerror(errno));
			return -1;
		}
	}
	if (*s->upper)
		return 0;
	dir = opendir(empty);
	if (!dir) {
		fprintf(stderr, "lfs-bench: %s: %s: %s\n", s->name, empty,
			strerror(errno));
		return -1;
	}
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			break;
	closedir(dir);
	if (d) {
		fprintf(stderr, "lfs-bench: %s: %s: the empty lower layer is not empty\n",
			s->name, empty);
		return -1;
	}
	return 0;
}

static int bench_read_systems(const char *file, struct bench_sys *sys)
{
	char line[4096], type[32], layers[PATH_MAX];
	int n = 0;
	ssize_t nl;
	FILE *f = fopen(file, "re");

	if (!f) {
		fprintf(stderr, "lfs-bench: %s: %s\n", file, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct bench_sys *s = &sys[n];

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (n == BENCH_MAX_SYS ||
		    sscanf(line, "%63s %31s %4095s %4095s %4095s %1023s",
			   s->name, type, s->root, layers, s->upper,
			   s->opts) != 6 ||
		    bench_type(type, &s->type)) {
			fprintf(stderr, "lfs-bench: %s: bad line: %s", file,
				line);
			fclose(f);
			return -1;
		}
		if (!strcmp(s->upper, "-"))
			*s->upper = '\0';
		if (!strcmp(s->opts, "-"))
			*s->opts = '\0';
		if (s->type == BENCH_EROFS) {
			if (bench_erofs_layers(s, layers)) {
				fclose(f);
				return -1;
			}
		} else if (s->type != BENCH_NONE) {
			nl = bench_read_lines(layers, &s->layers);
			if (nl <= 0) {
				fprintf(stderr, "lfs-bench: %s: no layers\n",
					layers);
				fclose(f);
				return -1;
			}
			s->nr_layers = nl;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* ---- setup helpers ---- */

static int bench_mkfile_at(const char *path, off_t size, uint64_t seed)
{
	static uint64_t buf[BENCH_CHUNK / 8];
	off_t done = 0;
	size_t i, n;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	seed = seed * 2 + 1;
	while (done < size) {
		for (i = 0; i < BENCH_CHUNK / 8; i++)
			buf[i] = bench_xorshift(&seed);
		n = size - done < BENCH_CHUNK ? size - done : BENCH_CHUNK;
		if (write(fd, buf, n) != (ssize_t)n) {
			close(fd);
			return -EIO;
		}
		done += n;
	}
	return close(fd) ? -errno : 0;
}

static __printf(1, 2) int bench_touch(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	int fd;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "lfs-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

static __printf(1, 2) int bench_mkdirf(const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "lfs-bench: mkdir %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* DIR/layers: the layer directories, top first */
static int bench_layers_file(const char *dir, unsigned long depth)
{
	char path[PATH_MAX], abs[PATH_MAX];
	unsigned long i;
	FILE *f;

	if (!realpath(dir, abs))
		return -1;
	snprintf(path, sizeof(path), "%s/layers", dir);
	f = fopen(path, "we");
	if (!f)
		return -1;
	for (i = 1; i <= depth; i++)
		fprintf(f, "%s/%lu\n", abs, i);
	return fclose(f) ? -1 : 0;
}

static int bench_cmd_mkstack(int argc, char **argv)
{
	unsigned long depth, n, i;
	const char *dir;

	if (argc != 3)
		return 2;
	dir = argv[0];
	depth = strtoul(argv[1], NULL, 10);
	n = strtoul(argv[2], NULL, 10);
	if (!depth || bench_mkdirf("%s", dir))
		return 1;
	for (i = 1; i <= depth; i++)
		if (bench_mkdirf("%s/%lu", dir, i) ||
		    bench_mkdirf("%s/%lu/d", dir, i) ||
		    bench_touch("%s/%lu/d/l%lu", dir, i, i))
			return 1;
	for (i = 0; i < n; i++)
		if (bench_touch("%s/%lu/d/b%lu", dir, depth, i))
			return 1;
	return bench_layers_file(dir, depth) ? 1 : 0;
}

static int bench_cmd_mkspread(int argc, char **argv)
{
	unsigned long depth, n, i, per;
	const char *dir;

	if (argc != 3)
		return 2;
	dir = argv[0];
	depth = strtoul(argv[1], NULL, 10);
	n = strtoul(argv[2], NULL, 10);
	if (bench_mkdirf("%s", dir))
		return 1;
	if (!depth) {
		if (bench_mkdirf("%s/d", dir))
			return 1;
		for (i = 0; i < n; i++)
			if (bench_touch("%s/d/n%lu", dir, i))
				return 1;
		return 0;
	}
	per = (n + depth - 1) / depth;
	for (i = 1; i <= depth; i++)
		if (bench_mkdirf("%s/%lu", dir, i) ||
		    bench_mkdirf("%s/%lu/d", dir, i))
			return 1;
	for (i = 0; i < n; i++)
		if (bench_touch("%s/%lu/d/n%lu", dir, i / per + 1, i))
			return 1;
	return bench_layers_file(dir, depth) ? 1 : 0;
}

static int bench_cmd_mkfile(int argc, char **argv)
{
	int err;

	if (argc != 3)
		return 2;
	err = bench_mkfile_at(argv[0], strtoll(argv[1], NULL, 10),
			      strtoull(argv[2], NULL, 10));
	if (err) {
		fprintf(stderr, "lfs-bench: %s: %s\n", argv[0], strerror(-err));
		return 1;
	}
	return 0;
}

static void bench_usage(void)
{
	fprintf(stderr,
		"usage: lfs-bench -S SYSTEMS [-m warm|cold|fresh] [-n REPS] [-w NAME]\n"
		"                 [-p PARAM] [-o CSV] [-T SECS] [-P PROG]... [-M CGROUP]\n"
		"                 WORKLOAD [ARG...]\n"
		"       lfs-bench mkstack|mkspread|mkfile ...\n"
		"(see the head of tools/bench/lfs-bench.c)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct bench_sys sys[BENCH_MAX_SYS];
	const char *systems = NULL, *out = NULL;
	enum bench_mode mode = BENCH_WARM;
	const struct bench_op *op = NULL;
	struct bench_ctx c = { 0 };
	int reps = 5, nsys, i, j, rep, opt, failed = 0;
	int order[BENCH_MAX_SYS];
	ssize_t n;
	size_t k;

	if (argc > 1 && !strcmp(argv[1], "mkstack"))
		return bench_cmd_mkstack(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "mkspread"))
		return bench_cmd_mkspread(argc - 2, argv + 2);
	if (argc > 1 && !strcmp(argv[1], "mkfile"))
		return bench_cmd_mkfile(argc - 2, argv + 2);

	while ((opt = getopt(argc, argv, "+S:m:n:w:p:o:T:P:M:")) != -1) {
		switch (opt) {
		case 'S':
			systems = optarg;
			break;
		case 'm':
			for (i = 0; i < 3; i++)
				if (!strcmp(optarg, bench_mode_names[i]))
					mode = i;
			if (strcmp(optarg, bench_mode_names[mode]))
				bench_usage();
			break;
		case 'n':
			reps = atoi(optarg);
			break;
		case 'w':
			bench_workload = optarg;
			break;
		case 'p':
			bench_param = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'T':
			bench_limit = atoi(optarg);
			break;
		case 'P':
			if (bench_nr_prewarm == BENCH_MAX_PREWARM)
				bench_usage();
			bench_prewarm_progs[bench_nr_prewarm++] = optarg;
			break;
		case 'M':
			bench_cg_parent = optarg;
			break;
		default:
			bench_usage();
		}
	}
	if (!systems || optind >= argc || reps < 1)
		bench_usage();
	for (k = 0; k < ARRAY_SIZE(bench_ops); k++)
		if (!strcmp(argv[optind], bench_ops[k].name))
			op = &bench_ops[k];
	if (!op)
		bench_usage();
	c.argc = argc - optind - 1;
	c.argv = argv + optind + 1;
	if (c.argc < op->min_args ||
	    (op->max_args >= 0 && c.argc > op->max_args))
		bench_usage();
	if (op->run == bench_cmd && bench_cmd_setup(&c))
		return 2;
	if (bench_cg_parent && (op->run != bench_cmd || mode != BENCH_COLD)) {
		fprintf(stderr, "lfs-bench: -M: only for cmd, with -m cold\n");
		return 2;
	}
	if (!bench_workload)
		bench_workload = op->name;
	if (!bench_param)
		bench_param = "";
	bench_out = stdout;
	if (out && !(bench_out = fopen(out, "ae"))) {
		fprintf(stderr, "lfs-bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	if (op->run == bench_walk) {
		n = bench_read_lines(c.argv[0], &c.list);
		if (n < 0) {
			fprintf(stderr, "lfs-bench: %s: %s\n", c.argv[0],
				strerror(-n));
			return 1;
		}
		c.nr_list = n;
	}
	nsys = bench_read_systems(systems, sys);
	if (nsys <= 0)
		return 1;
	bench_cwd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bench_cwd < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if (bench_watchdog_start()) {
		fprintf(stderr, "lfs-bench: cannot start the watchdog\n");
		return 1;
	}

	/* the untimed pass of a warm run: warm-up and checksums */
	if (mode == BENCH_WARM && !op->writes)
		for (i = 0; i < nsys; i++)
			bench_pass(op, &c, &sys[i], mode, -1, false);
	for (rep = 0; rep < reps; rep++) {
		bench_order(rep, nsys, order);
		for (j = 0; j < nsys; j++) {
			i = order[j];
			if (!sys[i].failed)
				bench_pass(op, &c, &sys[i], mode, rep, true);
		}
	}
	for (i = 0; i < nsys; i++) {
		struct bench_res r = { 0 };

		bench_umount(&sys[i], &r);
		failed += sys[i].failed;
	}
	return failed ? 1 : 0;
}
