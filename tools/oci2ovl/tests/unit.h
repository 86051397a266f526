/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the cmocka unit tests: includes, a scratch directory, and a
 * tar writer (libarchive) for building layers in memory.
 */
#ifndef OCI2OVL_UNIT_H
#define OCI2OVL_UNIT_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <archive.h>
#include <archive_entry.h>

#include "oci2ovl.h"

static const struct lfs_limits lfs_test_lim = {
	.max_entries = 1000,
	.max_bytes = 1 << 20,
	.max_path = 4095,
	.max_names = 1 << 20,
	.max_xattrs = 1 << 20,
};

/* a fresh scratch directory; returns an O_RDONLY fd on it */
static inline int lfs_test_tmpdir(char *path, size_t len)
{
	snprintf(path, len, "%s/oci2ovl-unit.XXXXXX",
		 getenv("TMPDIR") ?: "/tmp");
	assert_non_null(mkdtemp(path));
	return open(path, O_RDONLY | O_DIRECTORY);
}

static inline void lfs_test_rmdir(int fd, const char *path)
{
	close(fd);
	assert_int_equal(lfs_rm_tree_at(AT_FDCWD, path), 0);
}

/* a tar being written to a temporary file */
struct lfs_test_tar {
	struct archive *a;
	FILE *f;
};

static inline void lfs_tar_begin(struct lfs_test_tar *t)
{
	t->f = tmpfile();
	assert_non_null(t->f);
	t->a = archive_write_new();
	archive_write_set_format_pax_restricted(t->a);
	assert_int_equal(archive_write_open_FILE(t->a, t->f), ARCHIVE_OK);
}

/* add an entry: type AE_IFREG/AE_IFDIR/AE_IFLNK/..., @link: symlink target */
static inline void lfs_tar_add(struct lfs_test_tar *t, const char *name,
			       mode_t type, mode_t perm, const char *data,
			       const char *link, const char *hardlink)
{
	struct archive_entry *e = archive_entry_new();

	archive_entry_set_pathname(e, name);
	archive_entry_set_filetype(e, type);
	archive_entry_set_perm(e, perm);
	archive_entry_set_mtime(e, 1700000000, 0);
	if (link)
		archive_entry_set_symlink(e, link);
	if (hardlink)
		archive_entry_set_hardlink(e, hardlink);
	archive_entry_set_size(e, data ? strlen(data) : 0);
	assert_int_equal(archive_write_header(t->a, e), ARCHIVE_OK);
	if (data)
		assert_int_equal(archive_write_data(t->a, data, strlen(data)),
				 (ssize_t)strlen(data));
	archive_entry_free(e);
}

/* finish; returns an fd on the tar, at offset 0 */
static inline int lfs_tar_end(struct lfs_test_tar *t)
{
	int fd;

	assert_int_equal(archive_write_close(t->a), ARCHIVE_OK);
	archive_write_free(t->a);
	fflush(t->f);
	fd = dup(fileno(t->f));
	fclose(t->f);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

#endif
