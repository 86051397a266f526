/* SPDX-License-Identifier: GPL-2.0 */
/*
 * oci2ovl fuzz targets (libFuzzer): what the targets share.
 *
 * Each target process works in a scratch directory of its own, made
 * with mkdtemp() in $LFS_FUZZ_SCRATCH when the runner (run.sh) gives one
 * (a tmpfs of its own, in a mount namespace where everything else is
 * read-only), else in $TMPDIR or /tmp, and removed at exit. The scratch
 * holds the target's work directory and a sentinel directory "outside";
 * after each input the work directory is removed and the scratch must be
 * as it was.
 * See docs/oci2ovl.md, "Fuzzing".
 */
#ifndef LFS_FUZZ_H
#define LFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "../oci2ovl.h"

/* the scratch directory, open, and its path */
extern int lfs_fuzz_scratchfd;
extern char lfs_fuzz_scratch[];

int lfs_fuzz_init(const char *target);
void lfs_fuzz_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
void lfs_fuzz_begin(void);
void lfs_fuzz_mute(void);
void lfs_fuzz_unmute(void);
void lfs_fuzz_check_clean(const char *what);
void lfs_fuzz_check_result(const char *what, int err);

#endif /* LFS_FUZZ_H */
