// SPDX-License-Identifier: GPL-2.0
/*
 * What the oci2ovl fuzz targets share: the scratch directory, the checks
 * made after every input, and muting the library's messages.
 *
 * After each input the target has removed its work directory; then
 *  - the scratch holds nothing but the sentinel directory "outside", and
 *    $LFS_FUZZ_SCRATCH nothing but the scratch directories of targets;
 *  - "outside" is unchanged (link count, change and modification times);
 *  - no file descriptor was left open, or closed that was not the
 *    call's own;
 *  - the call did not fail with EROFS: under run.sh everything but the
 *    scratch is read-only, so EROFS means the code tried to write outside
 *    the directory it was given.
 * Any of these, and any sanitizer report, ends the run with the input
 * kept as a crash artifact.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fuzz.h"

int lfs_fuzz_scratchfd = -1;
char lfs_fuzz_scratch[PATH_MAX];

static int lfs_outsidefd = -1;
static int lfs_parentfd = -1; /* $LFS_FUZZ_SCRATCH, when given */
static struct stat lfs_outside_st;
#define LFS_MAX_FD 1024
static int lfs_procfd = -1; /* /proc/self/fd */
static uint64_t lfs_fds[LFS_MAX_FD / 64]; /* open at lfs_fuzz_begin() */
static bool lfs_strict; /* $LFS_FUZZ_STRICT: only 0 and EBADMSG */
static FILE *lfs_null_stream, *lfs_saved_stderr;

void lfs_fuzz_fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	lfs_fuzz_unmute();
	if (write(2, "oci2ovl-fuzz: FAIL: ", 20) < 0 || write(2, msg, n) < 0)
		abort();
	abort();
}

/* a stream that drops what is written to it, without a system call */
static ssize_t lfs_null_write(void *cookie, const char *buf, size_t len)
{
	(void)cookie;
	(void)buf;
	return len;
}

/*
 * Mute the library's messages (stderr) for the call: thousands of
 * refusals a second would cost more than the call. $LFS_FUZZ_VERBOSE
 * keeps them, to see why an input is refused.
 */
void lfs_fuzz_mute(void)
{
	if (!lfs_null_stream)
		return;
	lfs_saved_stderr = stderr;
	stderr = lfs_null_stream;
}

void lfs_fuzz_unmute(void)
{
	if (lfs_saved_stderr) {
		stderr = lfs_saved_stderr;
		lfs_saved_stderr = NULL;
	}
}

/* the open descriptors below LFS_MAX_FD, from /proc/self/fd */
static void lfs_fd_snapshot(uint64_t set[LFS_MAX_FD / 64])
{
	char buf[4096];
	long n, off;

	memset(set, 0, LFS_MAX_FD / 8);
	if (lseek(lfs_procfd, 0, SEEK_SET) < 0)
		lfs_fuzz_fail("rewind /proc/self/fd: %s", strerror(errno));
	while ((n = syscall(SYS_getdents64, lfs_procfd, buf, sizeof(buf))) >
	       0) {
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			int fd = atoi(de->d_name);

			off += de->d_reclen;
			if (de->d_name[0] == '.' || fd == lfs_procfd ||
			    fd >= LFS_MAX_FD)
				continue;
			set[fd / 64] |= 1ull << (fd % 64);
		}
	}
	if (n < 0)
		lfs_fuzz_fail("read /proc/self/fd: %s", strerror(errno));
}

static void lfs_rm_scratch(void)
{
	lfs_rm_tree_at(AT_FDCWD, lfs_fuzz_scratch);
}

/*
 * the names in directory @fd: none but "outside" (@parent false), or
 * none but other target processes' scratch directories (@parent true)
 */
static void lfs_check_names(const char *what, int fd, bool parent)
{
	char buf[4096];
	long n, off;

	if (lseek(fd, 0, SEEK_SET) < 0)
		lfs_fuzz_fail("%s: rewind scratch: %s", what, strerror(errno));
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);

			off += de->d_reclen;
			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, ".."))
				continue;
			if (parent ?
				    !strncmp(de->d_name, "oci2ovl-fuzz-", 13) &&
					    de->d_type == DT_DIR :
				    !strcmp(de->d_name, "outside"))
				continue;
			lfs_fuzz_fail(
				"%s: left \"%s\" in the scratch directory %s%s",
				what, de->d_name, lfs_fuzz_scratch,
				parent ? "/.." : "");
		}
	}
	if (n < 0)
		lfs_fuzz_fail("%s: read scratch: %s", what, strerror(errno));
}

/*
 * lfs_fuzz_begin() - before one input: note the open descriptors (here,
 * not once at the start: between inputs libFuzzer may start a
 * symbolizer, whose pipes stay open)
 */
void lfs_fuzz_begin(void)
{
	lfs_fd_snapshot(lfs_fds);
}

/**
 * lfs_fuzz_check_clean() - after one input: nothing left, nothing leaked
 * @what: the target, for the message
 */
void lfs_fuzz_check_clean(const char *what)
{
	uint64_t now[LFS_MAX_FD / 64];
	struct stat st;
	int fd;

	lfs_check_names(what, lfs_fuzz_scratchfd, false);
	if (lfs_parentfd >= 0)
		lfs_check_names(what, lfs_parentfd, true);
	if (fstat(lfs_outsidefd, &st))
		lfs_fuzz_fail("%s: stat outside: %s", what, strerror(errno));
	if (st.st_nlink != lfs_outside_st.st_nlink ||
	    st.st_mtim.tv_sec != lfs_outside_st.st_mtim.tv_sec ||
	    st.st_mtim.tv_nsec != lfs_outside_st.st_mtim.tv_nsec ||
	    st.st_ctim.tv_sec != lfs_outside_st.st_ctim.tv_sec ||
	    st.st_ctim.tv_nsec != lfs_outside_st.st_ctim.tv_nsec)
		lfs_fuzz_fail("%s: the sentinel directory %s/outside changed",
			      what, lfs_fuzz_scratch);
	lfs_fd_snapshot(now);
	for (fd = 0; fd < LFS_MAX_FD; fd++) {
		bool was = lfs_fds[fd / 64] & (1ull << (fd % 64));
		bool is = now[fd / 64] & (1ull << (fd % 64));
		char p[32], target[PATH_MAX];
		ssize_t n;

		if (was == is)
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		n = readlink(p, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		if (is)
			lfs_fuzz_fail("%s: file descriptor %d (%s) left open",
				      what, fd, target);
		lfs_fuzz_fail("%s: file descriptor %d closed, not its own",
			      what, fd);
	}
}

/**
 * lfs_fuzz_check_result() - judge what the code under test returned
 * @what: the call, for the message
 * @err: its return value
 *
 * 0 and -EBADMSG (refused) are the answers to untrusted input. -EROFS
 * means a write outside the scratch. Other errors (-EEXIST from a
 * mkdirat() the checks should have refused first, ...) fail only with
 * $LFS_FUZZ_STRICT=1: they are errors from the filesystem, not rules.
 */
void lfs_fuzz_check_result(const char *what, int err)
{
	if (err > 0)
		lfs_fuzz_fail("%s returned %d, not 0 or -errno", what, err);
	if (err == -EROFS)
		lfs_fuzz_fail("%s tried to write outside its directory (EROFS)",
			      what);
	if (lfs_strict && err && err != -LFS_EREFUSED)
		lfs_fuzz_fail(
			"%s failed with %s, not a refusal (LFS_FUZZ_STRICT)",
			what, strerror(-err));
}

/**
 * lfs_fuzz_init() - set up the scratch directory, once per process
 * @target: the target's name, for the directory's name and messages
 *
 * Return: 0, or -errno (message printed).
 */
int lfs_fuzz_init(const char *target)
{
	static const cookie_io_functions_t null_io = { .write =
							       lfs_null_write };
	const char *base = getenv("LFS_FUZZ_SCRATCH");
	int err;

	if (!base || !*base)
		base = getenv("TMPDIR");
	snprintf(lfs_fuzz_scratch, sizeof(lfs_fuzz_scratch),
		 "%s/oci2ovl-fuzz-%s-XXXXXX", base && *base ? base : "/tmp",
		 target);
	if (!mkdtemp(lfs_fuzz_scratch)) {
		err = -errno;
		fprintf(stderr, "oci2ovl-fuzz: mkdtemp %s: %s\n",
			lfs_fuzz_scratch, strerror(errno));
		return err;
	}
	atexit(lfs_rm_scratch);
	if (getenv("LFS_FUZZ_SCRATCH") && *getenv("LFS_FUZZ_SCRATCH")) {
		lfs_parentfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (lfs_parentfd < 0)
			goto fail;
	}
	lfs_fuzz_scratchfd =
		open(lfs_fuzz_scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfs_fuzz_scratchfd < 0 ||
	    mkdirat(lfs_fuzz_scratchfd, "outside", 0755))
		goto fail;
	lfs_outsidefd = openat(lfs_fuzz_scratchfd, "outside",
			       O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfs_outsidefd < 0 || fstat(lfs_outsidefd, &lfs_outside_st))
		goto fail;
	lfs_procfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lfs_procfd < 0)
		goto fail;
	lfs_strict = getenv("LFS_FUZZ_STRICT") &&
		     !strcmp(getenv("LFS_FUZZ_STRICT"), "1");
	if (!getenv("LFS_FUZZ_VERBOSE") ||
	    strcmp(getenv("LFS_FUZZ_VERBOSE"), "1"))
		lfs_null_stream = fopencookie(NULL, "w", null_io);
	return 0;
fail:
	err = -errno;
	fprintf(stderr, "oci2ovl-fuzz: scratch %s: %s\n", lfs_fuzz_scratch,
		strerror(errno));
	return err;
}
