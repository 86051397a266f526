// SPDX-License-Identifier: GPL-2.0
/*
 * Mounting an image from its layer directories.
 *
 * layerfs: the new mount API, one fsconfig("lowerdir+", DIR) per layer,
 * top layer first, so the number of layers is not bounded by the size of
 * an option string; then "upperdir" and "workdir" when writable.
 *
 * overlay (--fstype overlay, for stores in chardev format): mount(2) with
 * one "lowerdir=A:B:..." string. To keep that string short, the layers are
 * named relative to their common parent, which we chdir() into.
 *
 * In a lowerdir string, ':' ',' and '\' in paths get a backslash.
 *
 * An image of an objects store (objects.c) gets the object directory as
 * a data-only layer below its layers (fsconfig "datadir+"; "::" in a
 * lowerdir string), "metacopy=on", and "verity=require" (or "on") when
 * the metacopy files carry fs-verity digests (cli.c decides).
 *
 * The mount source (fsconfig "source", mount(2)'s first argument) is the
 * lease's "oci2ovl:IMAGE:ID", which lease.c finds in mountinfo.
 *
 * Test seam: OCI2OVL_TEST_MOUNT=tmpfs mounts an empty tmpfs with that
 * source instead, so that the host tests exercise leases, gc, rm and
 * umount with a real mount and never a layerfs one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oci2ovl.h"
#include "uapi/layerfs.h"

char *lfs_escape_option(const char *s)
{
	char *out = malloc(2 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ':' || *s == ',' || *s == '\\')
			*o++ = '\\';
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

/* "lowerdir=" and the escaped @dirs joined with ':' */
char *lfs_lowerdir_string(char *const *dirs, size_t n)
{
	size_t len = sizeof("lowerdir="), i;
	char *out, *e;

	for (i = 0; i < n; i++)
		len += 2 * strlen(dirs[i]) + 1;
	out = malloc(len);
	if (!out)
		return NULL;
	strcpy(out, "lowerdir=");
	for (i = 0; i < n; i++) {
		e = lfs_escape_option(dirs[i]);
		if (!e) {
			free(out);
			return NULL;
		}
		if (i)
			strcat(out, ":");
		strcat(out, e);
		free(e);
	}
	return out;
}

/*
 * "lowerdir=" @dirs, then "::" the data-only layer and the options it
 * needs, when @o has one
 */
static char *lfs_lower_options(char *const *dirs, size_t n,
			       const struct lfs_mount_opts *o)
{
	char *lower = lfs_lowerdir_string(dirs, n), *data, *out;

	if (!lower || !o->datadir)
		return lower;
	data = lfs_escape_option(o->datadir);
	if (!data || asprintf(&out, "%s::%s,metacopy=on%s%s", lower, data,
			      o->verity ? ",verity=" : "",
			      o->verity ?: "") < 0)
		out = NULL;
	free(data);
	free(lower);
	return out;
}

/* print the fsopen context's messages ("e ...", "w ...", "i ...") */
static void lfs_fs_messages(int fsfd)
{
	char buf[1024];
	ssize_t r;

	while ((r = read(fsfd, buf, sizeof(buf) - 1)) > 0) {
		buf[r] = '\0';
		lfs_err("mount: %s", lfs_esc(buf[1] == ' ' ? buf + 2 : buf));
	}
}

/* the data-only layer and the options it needs, through @fsfd */
static int lfs_fsconfig_data(int fsfd, const struct lfs_mount_opts *o,
			     const char **step)
{
	*step = "fsconfig datadir+";
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "datadir+", o->datadir, 0))
		return -errno;
	*step = "fsconfig metacopy=on";
	if (fsconfig(fsfd, FSCONFIG_SET_STRING, "metacopy", "on", 0))
		return -errno;
	*step = "fsconfig verity";
	if (o->verity &&
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "verity", o->verity, 0))
		return -errno;
	return 0;
}

static int lfs_mount_new_api(char *const *dirs, size_t n, const char *target,
			     const struct lfs_mount_opts *o,
			     const char *upper, const char *work)
{
	const char *fstype = o->fstype, *source = o->source;
	const char *step = "fsopen";
	int fsfd, mfd, err = 0;
	size_t i;

	fsfd = fsopen(fstype, FSOPEN_CLOEXEC);
	if (fsfd < 0) {
		err = -errno;
		lfs_err("mount: fsopen(%s): %s", lfs_esc(fstype), strerror(errno));
		return err;
	}
	step = "fsconfig source";
	if (source &&
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "source", source, 0))
		err = -errno;
	if (!err)
		step = "fsconfig lowerdir+";
	for (i = 0; i < n && !err; i++)
		if (fsconfig(fsfd, FSCONFIG_SET_STRING, "lowerdir+", dirs[i],
			     0))
			err = -errno;
	if (!err && o->datadir)
		err = lfs_fsconfig_data(fsfd, o, &step);
	if (!err && upper) {
		/* the kernel undoes escapes in these two, as overlayfs does */
		char *eu = lfs_escape_option(upper), *ew = lfs_escape_option(work);

		step = "fsconfig upperdir/workdir";
		if (!eu || !ew)
			err = -ENOMEM;
		else if (fsconfig(fsfd, FSCONFIG_SET_STRING, "upperdir", eu, 0) ||
			 fsconfig(fsfd, FSCONFIG_SET_STRING, "workdir", ew, 0))
			err = -errno;
		free(eu);
		free(ew);
	}
	if (!err) {
		step = "fsconfig create";
		if (fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
			err = -errno;
	}
	if (!err) {
		step = "fsmount";
		mfd = fsmount(fsfd, FSMOUNT_CLOEXEC,
			      upper ? 0 : MOUNT_ATTR_RDONLY);
		if (mfd < 0) {
			err = -errno;
		} else {
			step = "move_mount";
			if (move_mount(mfd, "", AT_FDCWD, target,
				       MOVE_MOUNT_F_EMPTY_PATH))
				err = -errno;
			close(mfd);
		}
	}
	if (err) {
		lfs_fs_messages(fsfd);
		lfs_err("mount: %s on %s: %s", step, lfs_esc(target),
			strerror(-err));
	}
	close(fsfd);
	return err;
}

/* overlay through mount(2), layers named relative to their parent */
static int lfs_mount_overlay(char *const *dirs, size_t n, const char *target,
			     const struct lfs_mount_opts *o, const char *upper,
			     const char *work)
{
	const char *source = o->source;
	char parent[PATH_MAX], cwd[PATH_MAX];
	char **rel, *lower, *opts = NULL, *eu = NULL, *ew = NULL;
	size_t i, plen;
	int err = -ENOMEM;

	if (n < 2 && !upper) {
		lfs_err("mount: overlay needs two layers or an upper directory");
		return -EINVAL;
	}
	snprintf(parent, sizeof(parent), "%s", dirs[0]);
	*strrchr(parent, '/') = '\0';
	plen = strlen(parent);
	rel = calloc(n, sizeof(*rel));
	if (!rel)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		rel[i] = (char *)dirs[i] + plen + 1;
	lower = lfs_lower_options(rel, n, o);
	free(rel);
	if (!lower)
		return -ENOMEM;
	if (upper) {
		eu = lfs_escape_option(upper);
		ew = lfs_escape_option(work);
		if (!eu || !ew)
			goto out;
		if (asprintf(&opts, "%s,upperdir=%s,workdir=%s", lower, eu,
			     ew) < 0) {
			opts = NULL;
			goto out;
		}
	} else {
		opts = strdup(lower);
		if (!opts)
			goto out;
	}
	if (!getcwd(cwd, sizeof(cwd)) || chdir(parent)) {
		err = -errno;
		goto out;
	}
	err = mount(source ?: "overlay", target, "overlay",
		    upper ? 0 : MS_RDONLY, opts) ?
		      -errno :
		      0;
	if (err)
		lfs_err("mount: overlay on %s: %s (see the kernel log)",
			lfs_esc(target), strerror(-err));
	if (chdir(cwd) && !err)
		err = -errno;
out:
	free(opts);
	free(eu);
	free(ew);
	free(lower);
	return err;
}

/* the command that does the same mount, for the user to see */
static void lfs_print_command(char *const *dirs, size_t n, const char *target,
			      const struct lfs_mount_opts *o,
			      const char *upper, const char *work)
{
	char *lower = lfs_lower_options(dirs, n, o), *opts = NULL, *eu, *ew;
	const char *fstype = o->fstype;
	char *qt, *qo;

	if (!lower)
		return;
	if (upper) {
		eu = lfs_escape_option(upper);
		ew = lfs_escape_option(work);
		if (eu && ew &&
		    asprintf(&opts, "%s,upperdir=%s,workdir=%s", lower, eu,
			     ew) < 0)
			opts = NULL;
		free(eu);
		free(ew);
	} else if (asprintf(&opts, "ro,%s", lower) < 0) {
		opts = NULL;
	}
	qt = lfs_shell_quote(target);
	qo = opts ? lfs_shell_quote(opts) : NULL;
	if (qt && qo)
		printf("mount -t %s none %s -o %s\n", fstype, qt, qo);
	free(qt);
	free(qo);
	free(opts);
	free(lower);
}

/* the test seam's stand-in: an empty tmpfs, with the lease's source */
static int lfs_mount_test_tmpfs(const char *target, const char *source,
				bool rw)
{
	if (mount(source ?: "oci2ovl", target, "tmpfs", rw ? 0 : MS_RDONLY,
		  "mode=0755")) {
		int err = -errno;

		lfs_err("mount: tmpfs (OCI2OVL_TEST_MOUNT) on %s: %s", lfs_esc(target),
			strerror(errno));
		return err;
	}
	return 0;
}

static bool lfs_mount_test_seam(void)
{
	const char *t = getenv("OCI2OVL_TEST_MOUNT");

	return t && !strcmp(t, "tmpfs");
}

/* the filesystem type a mount with @o will have, as mountinfo shows it */
const char *lfs_mount_fstype(const struct lfs_mount_opts *o)
{
	return lfs_mount_test_seam() ? "tmpfs" : o->fstype;
}

static int lfs_mkdir_abs(const char *path, char **out)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	*out = realpath(path, NULL);
	return *out ? 0 : -errno;
}

/**
 * lfs_mount_image() - mount layers @dirs (top first) on @target
 *
 * With @o->upper, creates it and the work directory (default: the sibling
 * "UPPER.work") and mounts writable; else read-only. Prints the equivalent
 * mount(8) command on success.
 */
int lfs_mount_image(char *const *dirs, size_t n, const char *target,
		    const struct lfs_mount_opts *o)
{
	char *upper = NULL, *work = NULL, *defwork = NULL, *tgt = NULL;
	int err;

	if (o->print_only) {
		char *lower = lfs_lower_options(dirs, n, o);

		if (!lower)
			return -ENOMEM;
		printf("%s\n", lower);
		free(lower);
		return 0;
	}
	tgt = realpath(target, NULL);
	if (!tgt) {
		err = -errno;
		lfs_err("mount: %s: %s", lfs_esc(target), strerror(errno));
		return err;
	}
	if (o->upper) {
		size_t len = strlen(o->upper);

		while (len > 1 && o->upper[len - 1] == '/')
			len--;
		err = -ENOMEM;
		if (asprintf(&defwork, "%.*s.work", (int)len, o->upper) < 0) {
			defwork = NULL;
			goto out;
		}
		err = lfs_mkdir_abs(o->upper, &upper);
		if (!err)
			err = lfs_mkdir_abs(o->work ?: defwork, &work);
		if (err) {
			lfs_err("mount: upper/work directory: %s",
				strerror(-err));
			goto out;
		}
	}
	if (lfs_mount_test_seam())
		err = lfs_mount_test_tmpfs(tgt, o->source, upper != NULL);
	else if (!strcmp(o->fstype, "overlay"))
		err = lfs_mount_overlay(dirs, n, tgt, o, upper, work);
	else
		err = lfs_mount_new_api(dirs, n, tgt, o, upper, work);
	if (!err)
		lfs_print_command(dirs, n, tgt, o, upper, work);
out:
	free(tgt);
	free(upper);
	free(work);
	free(defwork);
	return err;
}

/* unmount the topmost mount on @target (an absolute, resolved path) */
int lfs_umount(const char *target)
{
	if (umount2(target, UMOUNT_NOFOLLOW)) {
		int err = -errno;

		lfs_err("umount %s: %s", lfs_esc(target), strerror(errno));
		return err == -EBUSY ? -LFS_ECONFLICT : err;
	}
	return 0;
}

/* the ID of the topmost mount on @path, as mountinfo's first field */
int lfs_mount_id(const char *path)
{
	struct statx stx;

	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &stx))
		return -errno;
	if (!(stx.stx_mask & STATX_MNT_ID))
		return -ENOSYS;
	return (int)stx.stx_mnt_id;
}
