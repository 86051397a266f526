// SPDX-License-Identifier: GPL-2.0
/*
 * Planted bugs, linked only into the canary builds of the fuzz targets
 * (build/bin/oci2ovl-fuzz-*-canary), never into oci2ovl: the fuzz tests
 * run them to show that a run finds an out-of-bounds read in the tar and
 * the JSON paths within its time, and keeps the input that shows it.
 *
 * The canary binaries are linked with -Wl,--wrap=lfs_path_normalize and
 * -Wl,--wrap=json_loadb: each call of those from another object file
 * (extract.c's entry paths, layout.c's JSON documents, read once into a
 * buffer there) comes here first, runs the planted copy, then the real
 * function. Neither plant fires on the seed corpus; the fuzzer has to
 * find the input.
 *
 * $LFS_CANARY_PLANT plants a fault of another kind instead, at the first
 * entry name, for the tests of the targets' own checks (fuzz.c):
 *   leave   a file left in the scratch directory
 *   fd      a file descriptor left open
 *   escape  a file made outside the scratch, at $LFS_CANARY_ESCAPE (under
 *           run.sh that is read-only, and the call fails with EROFS)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

int __real_lfs_path_normalize(const char *in, const struct lfs_limits *lim,
			      char **out, const char **rule);
int __wrap_lfs_path_normalize(const char *in, const struct lfs_limits *lim,
			      char **out, const char **rule);
json_t *__real_json_loadb(const char *buf, size_t len, size_t flags,
			  json_error_t *error);
json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags,
			  json_error_t *error);

/*
 * A copy of a check for aufs's reserved names (".wh..wh.plnk", ...), as
 * one might write it to find them in any case: each component lowered
 * through a table of the 128 ASCII characters, then compared. PLANTED: a
 * byte of 0x80 or more, a negative char, indexes before the table.
 */
static bool lfs_canary_aufs_reserved(const char *in)
{
	static char lower[128];
	char name[NAME_MAX + 1];
	const char *p = in;
	size_t n, i;
	int c;

	if (!lower[1])
		for (c = 0; c < 128; c++)
			lower[c] = c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
	while (*p) {
		n = strcspn(p, "/");
		for (i = 0; i < n && i < NAME_MAX; i++)
			name[i] = lower[(int)p[i]];
		name[i] = '\0';
		if (!strncmp(name, ".wh..wh.", 8) &&
		    strcmp(name, ".wh..wh..opq"))
			return true;
		p += n + (p[n] == '/');
	}
	return false;
}

/* $LFS_CANARY_PLANT: 0 on no plant, else -errno of the planted fault */
static int lfs_canary_other(void)
{
	const char *plant = getenv("LFS_CANARY_PLANT");
	const char *escape = getenv("LFS_CANARY_ESCAPE");
	int fd;

	if (!plant)
		return 0;
	if (!strcmp(plant, "leave"))
		fd = openat(lfs_fuzz_scratchfd, "left-behind",
			    O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	else if (!strcmp(plant, "fd"))
		return open("/", O_PATH | O_CLOEXEC) < 0 ? -errno : 0;
	else if (!strcmp(plant, "escape") && escape)
		fd = open(escape, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	else
		return 0;
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int __wrap_lfs_path_normalize(const char *in, const struct lfs_limits *lim,
			      char **out, const char **rule)
{
	int err = lfs_canary_other();

	if (err)
		return err;
	if (lfs_canary_aufs_reserved(in)) {
		*rule = "reserved whiteout name";
		return -LFS_EREFUSED;
	}
	return __real_lfs_path_normalize(in, lim, out, rule);
}

/*
 * A copy of a nesting guard, as one might put in front of the JSON
 * parser: brackets (strings not told apart) pushed on a stack of 32 and
 * a closing one checked against the top; deeper documents are refused.
 * PLANTED: a closing bracket with none open reads below the stack.
 */
static bool lfs_canary_too_deep(const char *buf, size_t len)
{
	char stack[32];
	size_t i;
	int depth = 0;

	for (i = 0; i < len; i++) {
		char c = buf[i];

		if (c == '{' || c == '[') {
			if (depth == (int)sizeof(stack))
				return true;
			stack[depth++] = c;
		} else if (c == '}' || c == ']') {
			if (stack[depth - 1] != (c == '}' ? '{' : '['))
				return false;
			depth--;
		}
	}
	return false;
}

json_t *__wrap_json_loadb(const char *buf, size_t len, size_t flags,
			  json_error_t *error)
{
	/* refused as too deep: the caller reads it as malformed JSON */
	if (lfs_canary_too_deep(buf, len)) {
		memset(error, 0, sizeof(*error));
		snprintf(error->text, sizeof(error->text), "nested too deep");
		return NULL;
	}
	return __real_json_loadb(buf, len, flags, error);
}
