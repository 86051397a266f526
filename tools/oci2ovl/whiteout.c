// SPDX-License-Identifier: GPL-2.0
/*
 * OCI whiteouts to layerfs (or kernel overlay) whiteouts.
 *
 * In a layer tar, "DIR/.wh.NAME" hides DIR/NAME of the lower layers and
 * "DIR/.wh..wh..opq" hides all of DIR's lower contents. In a layer
 * directory they become:
 *
 *   native:  NAME is a symlink to LFS_WHITEOUT_TARGET carrying
 *            LFS_XATTR_WHITEOUT=y; DIR carries LFS_XATTR_OPAQUE=y.
 *   chardev: NAME is a 0/0 character device; DIR carries
 *            trusted.overlay.opaque=y (the kernel overlay's format).
 *
 * Markers under LFS_XATTR_PREFIX (and "user.overlay.", the userxattr
 * variant) are only ever written here; arriving in a layer they are dropped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

#define LFS_WH_PREFIX_LEN (sizeof(LFS_AUFS_WHITEOUT_PREFIX) - 1)

static bool lfs_is_wh_name(const char *name, size_t n)
{
	return n >= LFS_WH_PREFIX_LEN &&
	       !strncmp(name, LFS_AUFS_WHITEOUT_PREFIX, LFS_WH_PREFIX_LEN);
}

/**
 * lfs_whiteout_classify() - what a normalised entry path means
 * @path: the normalised path (see lfs_path_normalize())
 * @target: for a whiteout, the path it hides; for an opaque marker, its
 *          directory ("" for the root); allocated
 * @rule: on refusal, the rule broken
 *
 * A ".wh." component other than the last one is refused (an entry cannot
 * live inside a whiteout), and so are ".wh." (empty name), ".wh..",
 * ".wh..." and the other reserved ".wh..wh." names.
 *
 * Return: an enum lfs_wh_kind, -LFS_EREFUSED with @rule set, or -ENOMEM.
 */
int lfs_whiteout_classify(const char *path, char **target, const char **rule)
{
	const char *base = strrchr(path, '/'), *p;
	size_t dirlen, n;
	const char *name;

	base = base ? base + 1 : path;
	for (p = path; p < base;) {
		n = strcspn(p, "/");
		if (lfs_is_wh_name(p, n)) {
			*rule = "path goes through a whiteout";
			return -LFS_EREFUSED;
		}
		p += n + 1;
	}
	*target = NULL;
	if (!lfs_is_wh_name(base, strlen(base)))
		return LFS_WH_KIND_NONE;

	dirlen = base == path ? 0 : (size_t)(base - path - 1);
	if (!strcmp(base, LFS_AUFS_OPAQUE_NAME)) {
		*target = strndup(path, dirlen);
		return *target ? LFS_WH_KIND_OPAQUE : -ENOMEM;
	}
	name = base + LFS_WH_PREFIX_LEN;
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		*rule = "whiteout leaves its directory";
		return -LFS_EREFUSED;
	}
	if (lfs_is_wh_name(name, strlen(name))) {
		*rule = "reserved whiteout name";
		return -LFS_EREFUSED;
	}
	/* path without the ".wh." of its last component */
	if (asprintf(target, "%.*s%s%s", (int)dirlen, path, dirlen ? "/" : "",
		     name) < 0) {
		*target = NULL;
		return -ENOMEM;
	}
	return LFS_WH_KIND_FILE;
}

/* xattrs that would act as overlay markers: never taken from a layer */
bool lfs_xattr_is_overlay(const char *name)
{
	return !strncmp(name, LFS_XATTR_PREFIX, strlen(LFS_XATTR_PREFIX)) ||
	       !strncmp(name, LFS_XATTR_USER_PREFIX,
			strlen(LFS_XATTR_USER_PREFIX));
}

/* create the whiteout for @name (which must not exist) in @dirfd */
int lfs_make_whiteout(int dirfd, const char *name, enum lfs_whiteout_fmt fmt)
{
	int err;

	if (fmt == LFS_WH_CHARDEV)
		return mknodat(dirfd, name, S_IFCHR | 0000, makedev(0, 0)) ?
			       -errno :
			       0;
	if (symlinkat(LFS_WHITEOUT_TARGET, dirfd, name))
		return -errno;
	err = lfs_setxattr_at(dirfd, name, LFS_XATTR_WHITEOUT, LFS_XATTR_TRUE,
			      1);
	if (err)
		unlinkat(dirfd, name, 0);
	return err;
}

/* mark directory @name in @dirfd ("" for @dirfd itself) opaque */
int lfs_make_opaque(int dirfd, const char *name, enum lfs_whiteout_fmt fmt)
{
	/* both formats use trusted.overlay.opaque */
	(void)fmt;
	return lfs_setxattr_at(dirfd, name, LFS_XATTR_OPAQUE, LFS_XATTR_TRUE,
			       1);
}

/* is xattr @key of @name in @dirfd, not followed, LFS_XATTR_TRUE? */
static bool lfs_xattr_true_at(int dirfd, const char *name, const char *key)
{
	char p[64 + NAME_MAX + 2], v[2];

	if (strchr(name, '/') || strlen(name) > NAME_MAX)
		return false;
	snprintf(p, sizeof(p), "/proc/self/fd/%d/%s", dirfd, name);
	return lgetxattr(p, key, v, sizeof(v)) == 1 &&
	       v[0] == LFS_XATTR_TRUE[0];
}

/*
 * lfs_is_whiteout_at() - is @name in @dirfd (lstat()ed into @st) one of
 * the whiteouts lfs_make_whiteout() writes in format @fmt?
 */
bool lfs_is_whiteout_at(int dirfd, const char *name, const struct stat *st,
			enum lfs_whiteout_fmt fmt)
{
	char t[sizeof(LFS_WHITEOUT_TARGET)];

	if (fmt == LFS_WH_CHARDEV)
		return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
	return S_ISLNK(st->st_mode) &&
	       readlinkat(dirfd, name, t, sizeof(t)) ==
		       sizeof(LFS_WHITEOUT_TARGET) - 1 &&
	       !memcmp(t, LFS_WHITEOUT_TARGET, sizeof(t) - 1) &&
	       lfs_xattr_true_at(dirfd, name, LFS_XATTR_WHITEOUT);
}

/* is directory @name in @dirfd ("" for @dirfd itself) marked opaque? */
bool lfs_is_opaque_at(int dirfd, const char *name)
{
	return lfs_xattr_true_at(dirfd, *name ? name : ".", LFS_XATTR_OPAQUE);
}

int lfs_whiteout_fmt_parse(const char *s, enum lfs_whiteout_fmt *fmt)
{
	if (!strcmp(s, "native"))
		*fmt = LFS_WH_NATIVE;
	else if (!strcmp(s, "chardev"))
		*fmt = LFS_WH_CHARDEV;
	else
		return -EINVAL;
	return 0;
}

const char *lfs_whiteout_fmt_name(enum lfs_whiteout_fmt fmt)
{
	return fmt == LFS_WH_CHARDEV ? "chardev" : "native";
}
