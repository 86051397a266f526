// SPDX-License-Identifier: GPL-2.0
/*
 * lfs-attack: the attack table of the security suite
 * (tests/bats/85-security.bats, docs/security.md).
 *
 *   lfs-attack setup [-l N] [-s SHIFT] DIR
 *                                   build every row's objects in DIR/ROW,
 *                                   as root; every mtime is then set to
 *                                   LFS_ATTACK_MTIME.  -l N: the objects
 *                                   of lower layer N ("@N" lines, below),
 *                                   the top one being 1 (the default).
 *                                   -s SHIFT: every owner, the rows'
 *                                   directories' and the ids in ACLs
 *                                   plus SHIFT, so that a user namespace
 *                                   that maps 0 to SHIFT sees the table
 *   lfs-attack rows [-l] [THEME...] the names of the rows (of the THEMEs);
 *                                   -l: with their user, set-up, calls and
 *                                   expected results, '|'-separated
 *   lfs-attack expect THEME...      "ROW: RESULT" for each row: what the
 *                                   kernel's rules give (the suite checks
 *                                   overlay against it)
 *   lfs-attack run [-u UPPER] ROOT THEME...
 *                                   run each row of the THEMEs ("all": every
 *                                   row but those of the "mounter" themes)
 *                                   in ROOT/ROW and report it
 *
 * A row is a list of calls that one unprivileged user makes on objects
 * that root made in a lower layer.  "run" records, as root, the visible
 * state of each row's directory ROOT/ROW; then forks one child for each
 * set of credentials the rows use, which opens the rows' directories
 * while still root, takes the credentials for good (setgroups, setresgid,
 * setresuid: no saved root uid, no capabilities) and makes each row's
 * calls in its directory, each reported as "CALL:ok", "CALL:ERRNO" or
 * "CALL:VALUE" for the calls that read.  Then the state again:
 *
 *   ROW: CALL:RESULT ...
 *     mount: unchanged            (or, when the calls changed something)
 *     mount PATH TYPE MODE UID:GID [size=N h=HASH nl=N] [-> TARGET]
 *           [dev=MAJ:MIN] [mt=SEC|now] [NAME=VALUE...]
 *     upper PATH ...              with -u: the same lines for UPPER/ROW,
 *     upper: -                    or this when the row left nothing there
 *
 * PATH is relative to the row's directory ("." for itself).  Every xattr
 * is printed but trusted.overlay.* and user.overlay.* (the markers of
 * both filesystems, the second with userxattr);
 * POSIX ACLs as text, values that are not plain text in hex.  mt= is
 * "now" for a time set by the calls, else the seconds.  A regular file's
 * link count is printed, a whiteout's is not (overlay shares one inode
 * among its whiteouts).  Directories show no size, no link count (what a
 * merged directory reports for them is its own) and no mtime: overlay
 * restores a directory's times after copying an entry up into it,
 * layerfs does not, which has no bearing on what the rows test.
 *
 * Rows are independent: each has its own directory, so they may run in
 * any order and any subset.
 *
 * The rows of the "mounter" and "mounter-write" themes are for a mount
 * made by root without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, over the
 * lower layers 1 to 4 (setup -l; "mounter-write": a writable one): they
 * show that nothing is read through the mount that its mounter could not
 * read itself.  "all" leaves them out, and "mounter-userns-metacopy"'s
 * (lower layers 5 and 6, a mount in a user namespace with metacopy=on).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <linux/capability.h>
#include "uapi/layerfs.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* the mtime of everything "setup" makes */
#define LFS_ATTACK_MTIME	1000000000

/* the user of a row without its own "as" */
#define LFS_ATTACK_AS		"1000:1000"

/*
 * The themes whose rows need a mounter without the DAC capabilities: the
 * rows that read, for a read-only mount, and those that write.
 */
#define LFS_ATTACK_MOUNTER	"mounter"
#define LFS_ATTACK_MOUNTER_WRITE "mounter-write"

/*
 * The rows for a mounter in a user namespace with metacopy=on (layerfs
 * alone: overlay refuses it with userxattr), over lower layers 5 and 6
 * (setup -l), which no other row uses.  "all" leaves them out too.
 */
#define LFS_ATTACK_MOUNTER_USERNS_METACOPY "mounter-userns-metacopy"

/*
 * A file capability as setcap writes it: revision 2, effective,
 * cap_net_raw permitted.
 */
static const unsigned char lfs_cap_value[] = {
	0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/*
 * One row.  setup: lines run as root in DIR/ROW, separated by ';':
 *   d PATH MODE UID:GID        directory (PATH "." is the row's own)
 *   f PATH MODE UID:GID [DATA] regular file
 *   l PATH TARGET UID:GID      symlink
 *   p PATH MODE UID:GID        fifo
 *   acl PATH a|d SPEC          access or default POSIX ACL
 *   x PATH NAME VALUE          xattr ("0x": an empty value)
 *   cap PATH                   the file capability above
 * Owner before mode: a chown clears set-id bits.  These lines build in
 * the top lower layer; a line prefixed by "@N " builds in lower layer N
 * instead (2 is the next one down), with "setup -l N".
 *
 * calls: run as the row's user in ROOT/ROW, separated by ';':
 *   read P, cat P, write P DATA (at offset 0, no O_TRUNC),
 *   open P FLAGS [MODE]        FLAGS: r, w, rw; t O_TRUNC, c O_CREAT,
 *                              x O_EXCL, n O_NONBLOCK; MODE default 0666
 *   truncate P SIZE, utimes P now|SEC, chmod P MODE, chown P UID GID,
 *   setacl P a|d SPEC|bad, rmacl P a|d, getacl P a|d,
 *   setx P NAME VALUE, rmx P NAME, getx P NAME, listx P, setcap P,
 *   link OLD NEW, unlink P, rmdir P, rename OLD NEW, exchange A B,
 *   symlink TARGET P, mknod P c|b|p MAJ MIN, mkdir P MODE,
 *   stat P (MODE,UID:GID of lstat), tmpfile DIR (O_TMPFILE),
 *   ls DIR (the names, sorted, ',' between them; "-" for none)
 * The xattr calls do not follow symlinks (l*xattr); chown neither.
 *
 * SPEC: ACL entries "TAG:ID:PERMS" in the kernel's order, TAG u, g, m or
 * o, ID empty for the owner, owning group, mask and other; "bad" is a
 * value that is not an ACL (a size no entry count gives).
 *
 * as: "UID:GID[:GROUP,...]", the user and its supplementary groups;
 * with "/nodac" appended, uid 0 keeps its capabilities but
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (LFS_ATTACK_ROOT_NODAC).
 */
struct lfs_row {
	const char *name;
	const char *theme;
	const char *as;
	const char *setup;
	const char *calls;
	const char *expect;
};

#define LFS_ATTACK_ROOT_NODAC	"0:0/nodac"


#define ACL_RW_1000	"u::rw,u:1000:rw,g::-,m::rw,o::-"

static const struct lfs_row lfs_rows[] = {
	/* ---- POSIX ACLs: only the owner sets or removes them ---- */
	{ "acl-set-access", "acl", NULL,
	  "f f 0600 0:0 secret",
	  "setacl f a " ACL_RW_1000 "; read f",
	  "setacl:EPERM read:EACCES" },
	{ "acl-set-default", "acl", NULL,
	  "d d 0755 0:0",
	  "setacl d d u::rwx,u:1000:rwx,g::rx,m::rwx,o::rx; getacl d d",
	  "setacl:EPERM getacl:ENODATA" },
	{ "acl-remove-access", "acl", NULL,
	  "f f 0644 0:0 data; acl f a u::rw,u:1000:-,g::r,m::r,o::r",
	  "read f; rmacl f a; read f",
	  "read:EACCES rmacl:EPERM read:EACCES" },
	{ "acl-remove-default", "acl", NULL,
	  "d d 0755 0:0; acl d d u::rwx,g::rx,o::-",
	  "rmacl d d; getacl d d",
	  "rmacl:EPERM getacl:u::rwx,g::r-x,o::---" },
	{ "acl-remove-absent", "acl", NULL,
	  "f f 0644 1000:1000 data",
	  "rmacl f a",
	  "rmacl:ENODATA" },
	{ "acl-mask-limits", "acl", NULL,
	  "f f 0600 0:0 data; acl f a u::rw,u:1000:rw,g::-,m::r,o::-",
	  "open f rw; read f",
	  "open:EACCES read:ok" },
	{ "acl-grants-write", "acl", NULL,
	  "f f 0600 0:0 data; acl f a " ACL_RW_1000,
	  "write f X; cat f; getacl f a",
	  "write:ok cat:Xata getacl:u::rw-,u:1000:rw-,g::---,m::rw-,o::---" },
	{ "acl-chmod-sets-mask", "acl", NULL,
	  "f f 0660 1000:1000 data; acl f a u::rw,u:1001:rw,g::r,m::rw,o::-",
	  "chmod f 0640; getacl f a",
	  "chmod:ok getacl:u::rw-,u:1001:rw-,g::r--,m::r--,o::---" },
	{ "acl-set-clears-sgid", "acl", NULL,
	  "f f 02755 1000:0 data",
	  "setacl f a u::rwx,u:1001:rx,g::rx,m::rx,o::rx; stat f",
	  "setacl:ok stat:0755,1000:0" },
	{ "acl-default-on-file", "acl", NULL,
	  "f f 0644 1000:1000 data",
	  "setacl f d u::rw,g::r,o::r",
	  "setacl:EACCES" },
	{ "acl-invalid", "acl", NULL,
	  "f f 0644 1000:1000 data",
	  "setacl f a bad",
	  "setacl:EINVAL" },
	{ "acl-default-inherited", "acl", NULL,
	  "d d 0777 0:0; acl d d u::rwx,u:1001:rwx,g::rx,m::rwx,o::rx",
	  "open d/new wc; getacl d/new a; stat d/new",
	  "open:ok getacl:u::rw-,u:1001:rwx,g::r-x,m::rw-,o::r-- stat:0664,1000:1000" },

	/* ---- set-user-ID and set-group-ID ---- */
	{ "setid-chmod-sgid", "setid", NULL,
	  "f f 0755 1000:0 data",
	  "chmod f 02755; stat f",
	  "chmod:ok stat:0755,1000:0" },
	{ "setid-chmod-sgid-dir", "setid", NULL,
	  "d d 0755 1000:0",
	  "chmod d 02755; stat d",
	  "chmod:ok stat:0755,1000:0" },
	{ "setid-chmod-sgid-member", "setid", NULL,
	  "f f 0755 1000:1000 data",
	  "chmod f 02755; stat f",
	  "chmod:ok stat:2755,1000:1000" },
	{ "setid-chmod-sgid-supplementary", "setid", "1000:1000:100",
	  "f f 0755 1000:100 data",
	  "chmod f 02755; stat f",
	  "chmod:ok stat:2755,1000:100" },
	{ "setid-chown-kills", "setid", "1000:1000:100",
	  "f f 06755 1000:1000 data",
	  "chown f -1 100; stat f",
	  "chown:ok stat:0755,1000:100" },
	{ "setid-chown-of-others", "setid", NULL,
	  "f f 0644 0:0 data",
	  "chown f 1000 1000; chown f -1 1000",
	  "chown:EPERM chown:EPERM" },
	{ "setid-chgrp-not-member", "setid", NULL,
	  "f f 0644 1000:1000 data",
	  "chown f -1 0",
	  "chown:EPERM" },
	{ "setid-write-kills", "setid", NULL,
	  "f f 06777 0:0 data",
	  "write f X; stat f",
	  "write:ok stat:0777,0:0" },
	{ "setid-write-kills-sgid-noexec", "setid", NULL,
	  "f f 02666 0:0 data",
	  "write f X; stat f",
	  "write:ok stat:0666,0:0" },
	{ "setid-write-keeps-sgid-member", "setid", "1000:1000:100",
	  "f f 02666 0:100 data",
	  "write f X; stat f",
	  "write:ok stat:2666,0:100" },
	{ "setid-owner-write-kills", "setid", NULL,
	  "f f 04755 1000:1000 data",
	  "write f X; stat f",
	  "write:ok stat:0755,1000:1000" },
	/*
	 * metacopy=on (both, on stacks of their own): chmod makes a
	 * metadata-only copy; the write fills it, then kills
	 */
	{ "metacopy-write-kills-setid", "metacopy", NULL,
	  "f f 0755 1000:1000 data",
	  "chmod f 06755; stat f; write f X; stat f",
	  "chmod:ok stat:6755,1000:1000 write:ok stat:0755,1000:1000" },
	{ "setid-truncate-kills", "setid", NULL,
	  "f f 04777 0:0 data",
	  "truncate f 1; stat f",
	  "truncate:ok stat:0777,0:0" },
	{ "setid-otrunc-kills", "setid", NULL,
	  "f f 04777 0:0 data",
	  "open f wt; stat f",
	  "open:ok stat:0777,0:0" },
	{ "setid-sgid-dir-inherits", "setid", NULL,
	  "d d 02777 0:100",
	  "mkdir d/sub 0777; stat d/sub; open d/f wc 02755; stat d/f",
	  "mkdir:ok stat:2755,1000:100 open:ok stat:0755,1000:100" },

	/* ---- trusted.* and security.* xattrs ---- */
	{ "xattr-list-trusted", "xattr", NULL,
	  "f f 0644 0:0 data; x f trusted.test.t tv; x f security.test sv",
	  "listx f",
	  "listx:security.test" },
	{ "xattr-list-trusted-dir", "xattr", NULL,
	  "d d 0755 0:0; x d trusted.test.t tv",
	  "listx d",
	  "listx:-" },
	{ "xattr-list-trusted-symlink", "xattr", NULL,
	  "l s target 0:0; x s trusted.test.t tv",
	  "listx s",
	  "listx:-" },
	{ "xattr-get-trusted", "xattr", NULL,
	  "f f 0644 0:0 data; x f trusted.test.t tv",
	  "getx f trusted.test.t",
	  "getx:ENODATA" },
	{ "xattr-set-trusted", "xattr", NULL,
	  "f f 0644 1000:1000 data",
	  "setx f trusted.test.n v; setx f trusted.overlay.opaque y",
	  "setx:EPERM setx:EPERM" },
	{ "xattr-remove-trusted", "xattr", NULL,
	  "f f 0644 1000:1000 data; x f trusted.test.t tv",
	  "rmx f trusted.test.t",
	  "rmx:EPERM" },
	{ "xattr-get-security", "xattr", NULL,
	  "f f 0600 0:0 data; x f security.test sv",
	  "getx f security.test",
	  "getx:sv" },
	{ "xattr-set-security", "xattr", NULL,
	  "f f 0644 1000:1000 data",
	  "setx f security.test v",
	  "setx:EPERM" },
	{ "xattr-remove-security", "xattr", NULL,
	  "f f 0644 1000:1000 data; x f security.test sv",
	  "rmx f security.test",
	  "rmx:EPERM" },
	{ "xattr-user-of-others", "xattr", NULL,
	  "f f 0644 0:0 data",
	  "setx f user.test v",
	  "setx:EACCES" },
	{ "xattr-system-other", "xattr", NULL,
	  "f f 0644 1000:1000 data",
	  "setx f system.test v",
	  "setx:EOPNOTSUPP" },
	/* overlay copies it up first; layerfs refuses the non-owner */
	{ "xattr-system-of-others", "xattr", NULL,
	  "f f 0000 0:0 data",
	  "setx f system.test v; stat f",
	  "setx:EOPNOTSUPP stat:0000,0:0" },

	/* ---- file capabilities ---- */
	{ "cap-set", "caps", NULL,
	  "f f 0755 1000:1000 data",
	  "setcap f; getx f security.capability",
	  "setcap:EPERM getx:ENODATA" },
	{ "cap-remove", "caps", NULL,
	  "f f 0755 1000:1000 data; cap f",
	  "rmx f security.capability",
	  "rmx:EPERM" },
	{ "cap-read", "caps", NULL,
	  "f f 0755 0:0 data; cap f",
	  "getx f security.capability",
	  "getx:0x0100000200200000000000000000000000000000" },
	{ "cap-write-kills", "caps", NULL,
	  "f f 0777 0:0 data; cap f",
	  "write f X; getx f security.capability",
	  "write:ok getx:ENODATA" },
	/*
	 * metacopy=on: chmod makes a metadata-only copy; an open for
	 * writing fills it, which must not cost it its capability; a write
	 * then does
	 */
	{ "metacopy-open-keeps-cap", "metacopy", NULL,
	  "f f 0777 1000:1000 data; cap f",
	  "chmod f 0755; open f w; getx f security.capability; write f X; getx f security.capability",
	  "chmod:ok open:ok getx:0x0100000200200000000000000000000000000000 write:ok getx:ENODATA" },
	{ "cap-truncate-kills", "caps", NULL,
	  "f f 0777 0:0 data; cap f",
	  "truncate f 2; getx f security.capability",
	  "truncate:ok getx:ENODATA" },
	{ "cap-chown-kills", "caps", "1000:1000:100",
	  "f f 0755 1000:1000 data; cap f",
	  "chown f -1 100; getx f security.capability",
	  "chown:ok getx:ENODATA" },
	{ "cap-chmod-keeps", "caps", NULL,
	  "f f 0755 1000:1000 data; cap f",
	  "chmod f 0700; getx f security.capability",
	  "chmod:ok getx:0x0100000200200000000000000000000000000000" },

	/* ---- sticky directories ---- */
#define STICKY "d . 01777 0:0; f theirs 0644 1001:1001 t; f mine 0644 1000:1000 m"
	{ "sticky-unlink-theirs", "sticky", NULL, STICKY,
	  "unlink theirs", "unlink:EPERM" },
	{ "sticky-unlink-mine", "sticky", NULL, STICKY,
	  "unlink mine", "unlink:ok" },
	{ "sticky-rename-theirs", "sticky", NULL, STICKY,
	  "rename theirs x", "rename:EPERM" },
	{ "sticky-rename-over-theirs", "sticky", NULL, STICKY,
	  "rename mine theirs", "rename:EPERM" },
	{ "sticky-exchange", "sticky", NULL, STICKY,
	  "exchange mine theirs; exchange theirs mine",
	  "exchange:EPERM exchange:EPERM" },
	{ "sticky-rmdir-theirs", "sticky", NULL,
	  STICKY "; d sub 0755 1001:1001",
	  "rmdir sub", "rmdir:EPERM" },
	{ "sticky-exchange-dir-owner", "sticky", NULL,
	  "d . 01777 1000:1000; f theirs 0644 1001:1001 t; f mine 0644 1000:1000 m",
	  "exchange mine theirs; unlink mine", "exchange:ok unlink:ok" },
	{ "sticky-protected-regular", "sticky", NULL,
	  "d . 01777 0:0; f theirs 0666 1001:1001 t",
	  "open theirs wc; open theirs w", "open:EACCES open:ok" },
	{ "sticky-protected-fifo", "sticky", NULL,
	  "d . 01777 0:0; p fifo 0666 1001:1001",
	  "open fifo wcn", "open:EACCES" },
#undef STICKY

	/* ---- protected_hardlinks, protected_symlinks ---- */
#define LINKDIR "d w 0755 1000:1000"
	{ "hardlink-0600", "links", NULL,
	  "f f 0600 0:0 s; " LINKDIR, "link f w/l", "link:EPERM" },
	{ "hardlink-0644", "links", NULL,
	  "f f 0644 0:0 s; " LINKDIR, "link f w/l", "link:EPERM" },
	{ "hardlink-0666", "links", NULL,
	  "f f 0666 0:0 s; " LINKDIR, "link f w/l; stat w/l",
	  "link:ok stat:0666,0:0" },
	{ "hardlink-suid", "links", NULL,
	  "f f 04777 0:0 s; " LINKDIR, "link f w/l", "link:EPERM" },
	{ "hardlink-sgid-exec", "links", NULL,
	  "f f 02777 0:0 s; " LINKDIR, "link f w/l", "link:EPERM" },
	{ "hardlink-own", "links", NULL,
	  "f f 0600 1000:1000 s; " LINKDIR, "link f w/l", "link:ok" },
	{ "symlink-sticky-others", "links", NULL,
	  "f f 0644 0:0 s; d t 01777 0:0; l t/s ../f 1001:1001",
	  "read t/s", "read:EACCES" },
	{ "symlink-sticky-own", "links", NULL,
	  "f f 0644 0:0 s; d t 01777 0:0; l t/s ../f 1000:1000",
	  "read t/s", "read:ok" },
	{ "symlink-sticky-dir-owner", "links", NULL,
	  "f f 0644 0:0 s; d t 01777 1001:1001; l t/s ../f 1001:1001",
	  "read t/s", "read:ok" },
	{ "symlink-not-sticky", "links", NULL,
	  "f f 0644 0:0 s; d t 0777 0:0; l t/s ../f 1001:1001",
	  "read t/s", "read:ok" },
#undef LINKDIR

	/*
	 * ---- layerfs's ioctls: only for CAP_SYS_ADMIN ----
	 * Overlay has none (ENOTTY); layerfs refuses them (EPERM), so the
	 * row is "stricter" there.  The symlink is what LFS_IOC_LINK_UP_AT
	 * must not follow.
	 */
	{ "ioctl-link-up", "ioctl", NULL,
	  "f f 0644 0:0 s; d d 0755 0:0; l d/s ../f 0:0",
	  "linkup f; linkupat . f; linkupat d s",
	  "linkup:ENOTTY linkupat:ENOTTY linkupat:ENOTTY" },

	/* ---- files and directories of others ---- */
	{ "others-read-0600", "others", NULL,
	  "f f 0600 0:0 s", "read f; cat f", "read:EACCES cat:EACCES" },
	{ "others-open-rdwr", "others", NULL,
	  "f f 0644 0:0 data", "open f rw; open f w", "open:EACCES open:EACCES" },
	{ "others-open-trunc", "others", NULL,
	  "f f 0644 0:0 data", "open f rt; open f wt", "open:EACCES open:EACCES" },
	{ "others-truncate", "others", NULL,
	  "f f 0644 0:0 data", "truncate f 0", "truncate:EACCES" },
	{ "others-utimes", "others", NULL,
	  "f f 0644 0:0 data", "utimes f now; utimes f 1234567890",
	  "utimes:EACCES utimes:EPERM" },
	{ "others-utimes-writable", "others", NULL,
	  "f f 0666 0:0 data", "utimes f 1234567890; utimes f now",
	  "utimes:EPERM utimes:ok" },
	{ "others-utimes-own", "others", NULL,
	  "f f 0644 1000:1000 data", "utimes f 1234567890", "utimes:ok" },
	{ "others-chmod", "others", NULL,
	  "f f 0666 0:0 data", "chmod f 0777", "chmod:EPERM" },
	{ "others-write-0666", "others", NULL,
	  "f f 0666 0:0 data", "write f X; cat f", "write:ok cat:Xata" },
	{ "others-creat-in-closed-dir", "others", NULL,
	  "d d 0755 0:0", "open d/new wc; open d/new wcx",
	  "open:EACCES open:EACCES" },
	{ "others-creat-existing", "others", NULL,
	  "d d 0755 0:0; f d/f 0644 0:0 data",
	  "open d/f wc; open d/f rc; open d/f rcx",
	  "open:EACCES open:ok open:EEXIST" },
	{ "others-tmpfile", "others", NULL,
	  "d d 0755 0:0", "tmpfile d", "tmpfile:EACCES" },
	{ "others-dir-entries", "others", NULL,
	  "d d 0755 0:0; f d/f 0644 0:0 data; d w 0755 1000:1000; f w/g 0644 1000:1000 g",
	  "unlink d/f; rename w/g d/g; rename d/f w/f; link w/g d/l; mkdir d/x 0755; symlink x d/s",
	  "unlink:EACCES rename:EACCES rename:EACCES link:EACCES mkdir:EACCES symlink:EACCES" },
	{ "others-no-search", "others", NULL,
	  "d d 0700 0:0; f d/f 0644 0:0 data",
	  "stat d/f; read d/f", "stat:EACCES read:EACCES" },
	{ "mknod-devices", "others", NULL,
	  "d w 0755 1000:1000",
	  "mknod w/c c 1 3; mknod w/b b 7 0; mknod w/wh c 0 0",
	  "mknod:EPERM mknod:EPERM mknod:EPERM" },
	{ "mknod-fifo", "others", NULL,
	  "d w 0755 1000:1000",
	  "mknod w/p p 0 0; stat w/p",
	  "mknod:ok stat:0644,1000:1000" },

	/*
	 * ---- a mounter without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH ----
	 * Objects of uid 1000 that root without those capabilities cannot
	 * read.  Their owner may change them, but the copy-up, which reads
	 * the data as the mounter, cannot; a write open asks the mounter for
	 * read access to what it would copy (but for a fifo, which is written
	 * itself); a merged listing and a name index read every layer's
	 * directory as the mounter.  The kernel's overlay cannot be mounted
	 * writable by such a mounter (its work/ is mode 0000): the
	 * "mounter-write" rows are overlayfs's rules (ovl_permission(),
	 * ovl_path_open()) as the table gives them.
	 */
	{ "mounter-read-unreadable", LFS_ATTACK_MOUNTER, NULL,
	  "f f 0600 1000:1000 secret",
	  "cat f; read f; stat f",
	  "cat:EACCES read:EACCES stat:0600,1000:1000" },
	{ "mounter-copy-up-unreadable", LFS_ATTACK_MOUNTER_WRITE, NULL,
	  "f f 0600 1000:1000 secret",
	  "chmod f 0640; chown f 1000 1000; utimes f now; setx f user.x v; cat f; stat f",
	  "chmod:EACCES chown:EACCES utimes:EACCES setx:EACCES cat:EACCES stat:0600,1000:1000" },
	{ "mounter-copy-up-by-root", LFS_ATTACK_MOUNTER_WRITE, LFS_ATTACK_ROOT_NODAC,
	  "f f 0600 1000:1000 secret",
	  "chmod f 0644; chown f 0 0; cat f; stat f",
	  "chmod:EACCES chown:EACCES cat:EACCES stat:0600,1000:1000" },
	{ "mounter-write-unreadable", LFS_ATTACK_MOUNTER_WRITE, NULL,
	  "f e 0222 1000:1000; f g 0222 1000:1000 data",
	  "open e w; open e wt; truncate e 0; open g w; write g X; stat e; stat g",
	  "open:EACCES open:EACCES truncate:EACCES open:EACCES write:EACCES stat:0222,1000:1000 stat:0222,1000:1000" },
	{ "mounter-write-fifo", LFS_ATTACK_MOUNTER_WRITE, NULL,
	  "p p 0600 1000:1000",
	  "open p wn; open p rn",
	  "open:EACCES open:EACCES" },
	{ "mounter-create-in-unreadable", LFS_ATTACK_MOUNTER_WRITE, NULL,
	  "d d 0733 1000:1000",
	  "mkdir d/x 0755; open d/f wc; stat d",
	  "mkdir:EACCES open:EACCES stat:0733,1000:1000" },
	{ "mounter-readdir", LFS_ATTACK_MOUNTER, NULL,
	  "d d 0755 1000:1000; f d/visible 0644 1000:1000 v; "
	  "@2 d d 0700 1000:1000; @2 f d/secret 0644 1000:1000 s",
	  "ls d; stat d/visible; stat d/secret; stat d/absent",
	  "ls:EACCES stat:0644,1000:1000 stat:EACCES stat:EACCES" },
	/* four lower instances: enough for a name index (nameindex=eager) */
	{ "mounter-name-index", LFS_ATTACK_MOUNTER, NULL,
	  "d d 0755 1000:1000; f d/visible 0644 1000:1000 v; "
	  "@2 d d 0755 1000:1000; @3 d d 0755 1000:1000; "
	  "@4 d d 0700 1000:1000; @4 f d/secret 0644 1000:1000 s",
	  "stat d/absent; stat d/secret; stat d/visible; ls d",
	  "stat:EACCES stat:EACCES stat:0644,1000:1000 ls:EACCES" },
	/*
	 * Root of a user namespace that maps 0-65535 (setup -s), mounting
	 * with userxattr,metacopy=on: a metacopy marker anyone may forge on
	 * a file of theirs, over data of an id the namespace does not map
	 * (70000), which the mounter may not read.  Every use of the data
	 * asks the mounter's read (EACCES), a copy-up of the file too, even
	 * one that takes no data; the forged file's own metadata shows.  A
	 * marker over a directory, or with a value, or a forged file of
	 * another size than the data: no data (EIO).
	 */
	{ "mounter-userns-metacopy-forged", LFS_ATTACK_MOUNTER_USERNS_METACOPY, NULL,
	  "@5 f f 0644 1000:1000 xxxxxx; @5 x f user.overlay.metacopy 0x; "
	  "@6 f f 0600 70000:70000 secret",
	  "stat f; read f; cat f; open f w; open f wt; truncate f 0; truncate f 1; "
	  "write f X; chmod f 0600; chown f 1000 1000; setx f user.x v; stat f",
	  "stat:0644,1000:1000 read:EACCES cat:EACCES open:EACCES open:EACCES "
	  "truncate:EACCES truncate:EACCES write:EACCES chmod:EACCES "
	  "chown:EACCES setx:EACCES stat:0644,1000:1000" },
	{ "mounter-userns-metacopy-dir", LFS_ATTACK_MOUNTER_USERNS_METACOPY, NULL,
	  "@5 f d 0644 1000:1000; @5 x d user.overlay.metacopy 0x; "
	  "@6 d d 0755 1000:1000",
	  "stat d; read d",
	  "stat:EIO read:EIO" },
	{ "mounter-userns-metacopy-size", LFS_ATTACK_MOUNTER_USERNS_METACOPY, NULL,
	  "@5 f f 0644 1000:1000 x; @5 x f user.overlay.metacopy 0x; "
	  "@6 f f 0644 1000:1000 data",
	  "stat f; read f; chmod f 0600",
	  "stat:EIO read:EIO chmod:EIO" },
	{ "mounter-userns-metacopy-value", LFS_ATTACK_MOUNTER_USERNS_METACOPY, NULL,
	  "@5 f f 0644 1000:1000; @5 x f user.overlay.metacopy /etc; "
	  "@6 f f 0644 1000:1000 data",
	  "stat f; read f",
	  "stat:EIO read:EIO" },
};

static int lfs_usage(void)
{
	fprintf(stderr,
		"usage: lfs-attack setup [-l N] [-s SHIFT] DIR\n"
		"       lfs-attack rows [-l] [THEME...]\n"
		"       lfs-attack expect THEME...\n"
		"       lfs-attack run [-u UPPER] ROOT THEME...\n");
	return 2;
}

/* ---- text helpers ---- */

/* a growing string: the result line of a row */
struct lfs_buf {
	char s[4096];
	size_t len;
};

#define __printf(a, b) __attribute__((format(printf, a, b)))

static __printf(2, 3) void buf_add(struct lfs_buf *b, const char *fmt, ...);

static void buf_add(struct lfs_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->len >= sizeof(b->s) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->s + b->len, sizeof(b->s) - b->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		b->len += (size_t)n;
	if (b->len >= sizeof(b->s))
		b->len = sizeof(b->s) - 1;
}

static const char *errname(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "E?";
}

/* Split @line (modified) at blanks into at most @max words; their count. */
static int split_words(char *line, char **argv, int max)
{
	int n = 0;
	char *save, *w;

	for (w = strtok_r(line, " \t", &save); w && n < max;
	     w = strtok_r(NULL, " \t", &save))
		argv[n++] = w;
	return n;
}

/* an action on one ';'-separated item of a row, split into words */
struct lfs_item_action {
	int (*fn)(char **argv, int argc, void *arg);
	void *arg;
};

/* Call @act for each ';'-separated item of @list (a copy is split). */
static int lfs_each_item(const char *list, const struct lfs_item_action *act)
{
	char *copy = strdup(list), *save, *item;
	int err = 0;

	if (!copy)
		return -1;
	for (item = strtok_r(copy, ";", &save); item && !err;
	     item = strtok_r(NULL, ";", &save)) {
		char *argv[8];
		int argc = split_words(item, argv, ARRAY_SIZE(argv));

		if (argc)
			err = act->fn(argv, argc, act->arg);
	}
	free(copy);
	return err;
}

static bool parse_owner(const char *s, uid_t *uid, gid_t *gid)
{
	unsigned int u, g;

	if (sscanf(s, "%u:%u", &u, &g) != 2)
		return false;
	*uid = u;
	*gid = g;
	return true;
}

/* ---- POSIX ACLs in the xattr format ---- */

#define LFS_ACL_VERSION		2
#define LFS_ACL_USER_OBJ	0x01
#define LFS_ACL_USER		0x02
#define LFS_ACL_GROUP_OBJ	0x04
#define LFS_ACL_GROUP		0x08
#define LFS_ACL_MASK		0x10
#define LFS_ACL_OTHER		0x20
#define LFS_ACL_UNDEFINED_ID	0xffffffffu

struct lfs_acl_entry {
	uint16_t tag;
	uint16_t perm;
	uint32_t id;
};

static const char *acl_xattr_name(const char *kind)
{
	return kind[0] == 'd' ? "system.posix_acl_default" :
				"system.posix_acl_access";
}

/*
 * Build the xattr value of @spec into @buf (little-endian, as x86 and the
 * kernel's format); its size, or -1 for a spec this tool cannot read.
 */
static ssize_t acl_from_text(const char *spec, unsigned char *buf, size_t size,
			     uint32_t shift)
{
	uint32_t version = LFS_ACL_VERSION;
	char *copy, *save, *ent;
	size_t len = sizeof(version);

	if (!strcmp(spec, "bad")) {
		/* a header and one and a half entries */
		memset(buf, 0, 16);
		memcpy(buf, &version, sizeof(version));
		return 16;
	}
	memcpy(buf, &version, sizeof(version));
	copy = strdup(spec);
	if (!copy)
		return -1;
	for (ent = strtok_r(copy, ",", &save); ent; ent = strtok_r(NULL, ",", &save)) {
		struct lfs_acl_entry e = { .id = LFS_ACL_UNDEFINED_ID };
		char *id = strchr(ent, ':'), *perm;

		perm = id ? strchr(id + 1, ':') : NULL;
		if (!perm || len + sizeof(e) > size)
			goto bad;
		*id++ = '\0';
		*perm++ = '\0';
		switch (ent[0]) {
		case 'u':
			e.tag = *id ? LFS_ACL_USER : LFS_ACL_USER_OBJ;
			break;
		case 'g':
			e.tag = *id ? LFS_ACL_GROUP : LFS_ACL_GROUP_OBJ;
			break;
		case 'm':
			e.tag = LFS_ACL_MASK;
			break;
		case 'o':
			e.tag = LFS_ACL_OTHER;
			break;
		default:
			goto bad;
		}
		if (*id)
			e.id = strtoul(id, NULL, 10) + shift;
		for (; *perm; perm++)
			e.perm |= *perm == 'r' ? 4 : *perm == 'w' ? 2 : *perm == 'x' ? 1 : 0;
		memcpy(buf + len, &e, sizeof(e));
		len += sizeof(e);
	}
	free(copy);
	return len;
bad:
	free(copy);
	errno = EINVAL;
	return -1;
}

/* The text of an ACL xattr value, as acl_from_text() reads it. */
static void acl_to_text(const unsigned char *v, ssize_t n, struct lfs_buf *b)
{
	const char *sep = "";
	uint32_t version = 0;
	ssize_t i;

	if (n >= 4)
		memcpy(&version, v, sizeof(version));
	if (n < 4 || (n - 4) % 8 || version != LFS_ACL_VERSION) {
		buf_add(b, "(not an ACL)");
		return;
	}
	for (i = 4; i < n; i += 8) {
		struct lfs_acl_entry e;
		char tag = '?';

		memcpy(&e, v + i, sizeof(e));
		switch (e.tag) {
		case LFS_ACL_USER_OBJ:
		case LFS_ACL_USER:
			tag = 'u';
			break;
		case LFS_ACL_GROUP_OBJ:
		case LFS_ACL_GROUP:
			tag = 'g';
			break;
		case LFS_ACL_MASK:
			tag = 'm';
			break;
		case LFS_ACL_OTHER:
			tag = 'o';
			break;
		}
		buf_add(b, "%s%c:", sep, tag);
		if (e.tag == LFS_ACL_USER || e.tag == LFS_ACL_GROUP)
			buf_add(b, "%u", e.id);
		buf_add(b, ":%c%c%c", e.perm & 4 ? 'r' : '-',
			e.perm & 2 ? 'w' : '-', e.perm & 1 ? 'x' : '-');
		sep = ",";
	}
}

/* An xattr value: an ACL as text, plain text as is, anything else in hex. */
static void put_value(const char *name, const unsigned char *v, ssize_t n,
		      struct lfs_buf *b)
{
	bool plain = n > 0 && !(n >= 2 && v[0] == '0' && v[1] == 'x');
	ssize_t i;

	if (!strncmp(name, "system.posix_acl_", 17)) {
		acl_to_text(v, n, b);
		return;
	}
	for (i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] > '~' || v[i] == '\\')
			plain = false;
	if (plain) {
		buf_add(b, "%.*s", (int)n, (const char *)v);
		return;
	}
	buf_add(b, "0x");
	for (i = 0; i < n; i++)
		buf_add(b, "%02x", v[i]);
}

/* ---- setup ---- */

/* setup -s: what every owner and ACL id is shifted by */
static uint32_t setup_shift;

static int setup_fail(char **argv, int argc, const char *what)
{
	int i;

	fprintf(stderr, "lfs-attack: setup line \"");
	for (i = 0; i < argc; i++)
		fprintf(stderr, "%s%s", i ? " " : "", argv[i]);
	fprintf(stderr, "\": %s: %s\n", what, strerror(errno));
	return -1;
}

static int setup_owner_mode(const char *path, const char *owner,
			    const char *mode, bool is_link)
{
	uid_t uid;
	gid_t gid;

	if (!parse_owner(owner, &uid, &gid)) {
		errno = EINVAL;
		return -1;
	}
	if (fchownat(AT_FDCWD, path, uid + setup_shift, gid + setup_shift,
		     AT_SYMLINK_NOFOLLOW))
		return -1;
	if (!is_link && chmod(path, strtoul(mode, NULL, 8)))
		return -1;
	return 0;
}

/* One setup line, in the row's directory (the cwd). */
static int setup_line(char **argv, int argc, void *arg)
{
	unsigned char acl[512];
	ssize_t n;
	int fd;

	(void)arg;
	if (!strcmp(argv[0], "d") && argc == 4) {
		if (strcmp(argv[1], ".") && mkdir(argv[1], 0700))
			return setup_fail(argv, argc, "mkdir");
		if (setup_owner_mode(argv[1], argv[3], argv[2], false))
			return setup_fail(argv, argc, "owner or mode");
	} else if (!strcmp(argv[0], "f") && (argc == 4 || argc == 5)) {
		fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0)
			return setup_fail(argv, argc, "create");
		if (argc == 5 && write(fd, argv[4], strlen(argv[4])) < 0) {
			close(fd);
			return setup_fail(argv, argc, "write");
		}
		close(fd);
		if (setup_owner_mode(argv[1], argv[3], argv[2], false))
			return setup_fail(argv, argc, "owner or mode");
	} else if (!strcmp(argv[0], "l") && argc == 4) {
		if (symlink(argv[2], argv[1]))
			return setup_fail(argv, argc, "symlink");
		if (setup_owner_mode(argv[1], argv[3], NULL, true))
			return setup_fail(argv, argc, "owner");
	} else if (!strcmp(argv[0], "p") && argc == 4) {
		if (mkfifo(argv[1], 0600))
			return setup_fail(argv, argc, "mkfifo");
		if (setup_owner_mode(argv[1], argv[3], argv[2], false))
			return setup_fail(argv, argc, "owner or mode");
	} else if (!strcmp(argv[0], "acl") && argc == 4) {
		n = acl_from_text(argv[3], acl, sizeof(acl), setup_shift);
		if (n < 0 || lsetxattr(argv[1], acl_xattr_name(argv[2]), acl, n, 0))
			return setup_fail(argv, argc, "ACL");
	} else if (!strcmp(argv[0], "x") && argc == 4) {
		const char *v = strcmp(argv[3], "0x") ? argv[3] : "";

		if (lsetxattr(argv[1], argv[2], v, strlen(v), 0))
			return setup_fail(argv, argc, "xattr");
	} else if (!strcmp(argv[0], "cap") && argc == 2) {
		if (lsetxattr(argv[1], "security.capability", lfs_cap_value,
			      sizeof(lfs_cap_value), 0))
			return setup_fail(argv, argc, "capability");
	} else {
		errno = EINVAL;
		return setup_fail(argv, argc, "unknown line");
	}
	return 0;
}

/* Set every mtime under (and of) @dir to LFS_ATTACK_MTIME. */
static int set_mtimes(int dirfd, const char *dir)
{
	struct timespec ts[2] = { { LFS_ATTACK_MTIME, 0 }, { LFS_ATTACK_MTIME, 0 } };
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while (!err && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR)
			err = set_mtimes(fd, de->d_name);
		else
			err = utimensat(fd, de->d_name, ts, AT_SYMLINK_NOFOLLOW);
	}
	closedir(d);
	if (!err)
		err = utimensat(dirfd, dir, ts, AT_SYMLINK_NOFOLLOW);
	return err;
}

/* the lower layer being built, and what to do with its lines */
struct lfs_layer_setup {
	long layer;
	bool build;		/* build them (else: count them) */
	int count;
};

/* The layer a setup line builds in ("@N " prefix, else 1), the prefix off. */
static long line_layer(char ***argv, int *argc)
{
	long layer = 1;

	if ((*argv)[0][0] == '@') {
		layer = strtol((*argv)[0] + 1, NULL, 10);
		(*argv)++;
		(*argc)--;
	}
	return *argc ? layer : 0;
}

/* One setup line of a row: for the layer asked, counted or built. */
static int layer_line(char **argv, int argc, void *arg)
{
	struct lfs_layer_setup *ls = arg;

	if (line_layer(&argv, &argc) != ls->layer)
		return 0;
	ls->count++;
	return ls->build ? setup_line(argv, argc, NULL) : 0;
}

/* How many objects @r has in lower layer @layer (1: the top one). */
static int row_objects_in(const struct lfs_row *r, long layer)
{
	struct lfs_layer_setup ls = { .layer = layer };
	const struct lfs_item_action count = { .fn = layer_line, .arg = &ls };

	if (layer == 1)
		return 1;	/* every row has its directory there */
	if (lfs_each_item(r->setup, &count))
		return 0;
	return ls.count;
}

/* Build the objects of @r in lower layer @layer, in the cwd. */
static int row_setup(const struct lfs_row *r, long layer)
{
	struct lfs_layer_setup ls = { .layer = layer, .build = true };
	const struct lfs_item_action setup = { .fn = layer_line, .arg = &ls };

	return lfs_each_item(r->setup, &setup);
}

static int cmd_setup(int argc, char **argv)
{
	long layer = 1;
	size_t i;
	int top;

	while (argc == 3 || argc == 5) {
		if (!strcmp(argv[0], "-l"))
			layer = strtol(argv[1], NULL, 10);
		else if (!strcmp(argv[0], "-s"))
			setup_shift = strtoul(argv[1], NULL, 10);
		else
			return lfs_usage();
		argc -= 2;
		argv += 2;
	}
	if (argc != 1 || layer < 1)
		return lfs_usage();
	umask(022);
	top = open(argv[0], O_RDONLY | O_DIRECTORY);
	if (top < 0) {
		fprintf(stderr, "lfs-attack: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(lfs_rows); i++) {
		const struct lfs_row *r = &lfs_rows[i];

		if (!row_objects_in(r, layer))
			continue;
		if (mkdirat(top, r->name, 0755) ||
		    fchownat(top, r->name, setup_shift, setup_shift, 0) ||
		    fchdir(top) || chdir(r->name)) {
			fprintf(stderr, "lfs-attack: %s/%s: %s\n", argv[0], r->name,
				strerror(errno));
			return 1;
		}
		if (row_setup(r, layer)) {
			fprintf(stderr, "lfs-attack: row %s: setup failed\n", r->name);
			return 1;
		}
	}
	if (set_mtimes(top, ".")) {
		fprintf(stderr, "lfs-attack: %s: setting mtimes: %s\n", argv[0],
			strerror(errno));
		return 1;
	}
	return 0;
}

/* ---- the calls, as the row's user ---- */

static void result(struct lfs_buf *b, const char *call, int ret)
{
	buf_add(b, "%s%s:%s", b->len ? " " : "", call, ret < 0 ? errname(errno) : "ok");
}

static int call_open_flags(const char *letters)
{
	bool r = strchr(letters, 'r'), w = strchr(letters, 'w');
	int flags = r && w ? O_RDWR : w ? O_WRONLY : O_RDONLY;

	if (strchr(letters, 't'))
		flags |= O_TRUNC;
	if (strchr(letters, 'c'))
		flags |= O_CREAT;
	if (strchr(letters, 'x'))
		flags |= O_EXCL;
	if (strchr(letters, 'n'))
		flags |= O_NONBLOCK;
	return flags;
}

/* open, and for read and write one byte of I/O; 0 or -1 with errno */
static int call_open_io(const char *path, int flags, const char *data)
{
	char c;
	int fd, ret = 0;

	fd = open(path, flags);
	if (fd < 0)
		return -1;
	if (data && write(fd, data, strlen(data)) < 0)
		ret = -1;
	if (!data && read(fd, &c, 1) < 0)
		ret = -1;
	if (ret) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return close(fd);
}

static void call_cat(struct lfs_buf *b, const char *path)
{
	char data[65];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	n = fd < 0 ? -1 : read(fd, data, sizeof(data) - 1);
	if (n < 0) {
		result(b, "cat", -1);
	} else {
		data[n] = '\0';
		buf_add(b, "%scat:%s", b->len ? " " : "", data);
	}
	if (fd >= 0)
		close(fd);
}

static void call_getx(struct lfs_buf *b, const char *call, const char *path,
		      const char *name)
{
	unsigned char v[512];
	ssize_t n = lgetxattr(path, name, v, sizeof(v));

	if (n < 0) {
		result(b, call, -1);
		return;
	}
	buf_add(b, "%s%s:", b->len ? " " : "", call);
	if (!n)
		buf_add(b, "(empty)");
	put_value(name, v, n, b);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The xattr names of @path, sorted, into @names (pointers into @list). */
static ssize_t list_names(const char *path, char *list, size_t size,
			  char **names, size_t max)
{
	ssize_t len = llistxattr(path, list, size);
	size_t n = 0;
	char *p;

	if (len < 0)
		return -1;
	for (p = list; p < list + len && n < max; p += strlen(p) + 1)
		names[n++] = p;
	qsort(names, n, sizeof(*names), cmp_str);
	return n;
}

static void call_listx(struct lfs_buf *b, const char *path)
{
	char list[4096], *names[64];
	ssize_t n, i;

	n = list_names(path, list, sizeof(list), names, ARRAY_SIZE(names));
	if (n < 0) {
		result(b, "listx", -1);
		return;
	}
	buf_add(b, "%slistx:", b->len ? " " : "");
	if (!n)
		buf_add(b, "-");
	for (i = 0; i < n; i++)
		buf_add(b, "%s%s", i ? "," : "", names[i]);
}

static void call_stat(struct lfs_buf *b, const char *path)
{
	struct stat st;

	if (lstat(path, &st)) {
		result(b, "stat", -1);
		return;
	}
	buf_add(b, "%sstat:%04o,%u:%u", b->len ? " " : "",
		st.st_mode & 07777, st.st_uid, st.st_gid);
}

/* The names in directory @path, sorted, as "ls:A,B" ("-": none). */
static void call_ls(struct lfs_buf *b, const char *path)
{
	struct dirent **list;
	int n, i;

	n = scandir(path, &list, NULL, alphasort);
	if (n < 0) {
		result(b, "ls", -1);
		return;
	}
	buf_add(b, "%sls:", b->len ? " " : "");
	if (n <= 2)
		buf_add(b, "-");
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, ".."))
			buf_add(b, "%s%s", b->s[b->len - 1] == ':' ? "" : ",", name);
		free(list[i]);
	}
	free(list);
}

static int call_utimes(const char *path, const char *when)
{
	struct timespec ts[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };

	if (strcmp(when, "now")) {
		ts[0].tv_sec = strtol(when, NULL, 10);
		ts[0].tv_nsec = 0;
		ts[1] = ts[0];
	}
	return utimensat(AT_FDCWD, path, strcmp(when, "now") ? ts : NULL,
			 AT_SYMLINK_NOFOLLOW);
}

static int call_mknod(const char *path, const char *type, const char *maj,
		      const char *min)
{
	mode_t mode = type[0] == 'c' ? S_IFCHR : type[0] == 'b' ? S_IFBLK : S_IFIFO;

	return mknod(path, mode | 0666, makedev(atoi(maj), atoi(min)));
}

static int call_setacl(const char *path, const char *kind, const char *spec)
{
	unsigned char acl[512];
	ssize_t n = acl_from_text(spec, acl, sizeof(acl), 0);

	if (n < 0)
		return -1;
	return lsetxattr(path, acl_xattr_name(kind), acl, n, 0);
}

static int call_tmpfile(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR, 0600);

	return fd < 0 ? -1 : close(fd);
}

/*
 * The calls that only report ok or an errno: each returns 0 or -1 with
 * errno set.  @a holds the call's arguments, the call's name not included.
 */
static int c_read(char **a) { return call_open_io(a[0], O_RDONLY, NULL); }
static int c_write(char **a) { return call_open_io(a[0], O_WRONLY, a[1]); }
static int c_truncate(char **a) { return truncate(a[0], strtol(a[1], NULL, 10)); }
static int c_utimes(char **a) { return call_utimes(a[0], a[1]); }
static int c_chmod(char **a) { return chmod(a[0], strtoul(a[1], NULL, 8)); }
static int c_setacl(char **a) { return call_setacl(a[0], a[1], a[2]); }
static int c_rmacl(char **a) { return lremovexattr(a[0], acl_xattr_name(a[1])); }
static int c_rmx(char **a) { return lremovexattr(a[0], a[1]); }
static int c_link(char **a) { return link(a[0], a[1]); }
static int c_unlink(char **a) { return unlink(a[0]); }
static int c_rmdir(char **a) { return rmdir(a[0]); }
static int c_rename(char **a) { return rename(a[0], a[1]); }
static int c_symlink(char **a) { return symlink(a[0], a[1]); }
static int c_mknod(char **a) { return call_mknod(a[0], a[1], a[2], a[3]); }
static int c_mkdir(char **a) { return mkdir(a[0], strtoul(a[1], NULL, 8)); }
static int c_tmpfile(char **a) { return call_tmpfile(a[0]); }

/* ioctl @req with @arg on @path opened with @oflags: 0, or -1 and errno */
static int call_ioctl(const char *path, int oflags, unsigned long req,
		      void *arg)
{
	int fd, ret, err;

	fd = open(path, oflags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	ret = ioctl(fd, req, arg);
	err = errno;
	close(fd);
	errno = err;
	return ret < 0 ? -1 : 0;
}

/* LFS_IOC_LINK_UP on file @a[0], opened for reading */
static int c_linkup(char **a)
{
	return call_ioctl(a[0], O_RDONLY, LFS_IOC_LINK_UP, NULL);
}

/* LFS_IOC_LINK_UP_AT on directory @a[0] for name @a[1] */
static int c_linkupat(char **a)
{
	struct lfs_link_up_at req = {
		.name = (uintptr_t)a[1],
		.namelen = strlen(a[1]),
	};

	return call_ioctl(a[0], O_RDONLY | O_DIRECTORY, LFS_IOC_LINK_UP_AT,
			  &req);
}

static int c_chown(char **a)
{
	return fchownat(AT_FDCWD, a[0], (uid_t)strtol(a[1], NULL, 10),
			(gid_t)strtol(a[2], NULL, 10), AT_SYMLINK_NOFOLLOW);
}

static int c_setx(char **a)
{
	return lsetxattr(a[0], a[1], a[2], strlen(a[2]), 0);
}

static int c_setcap(char **a)
{
	return lsetxattr(a[0], "security.capability", lfs_cap_value,
			 sizeof(lfs_cap_value), 0);
}

static int c_exchange(char **a)
{
	return renameat2(AT_FDCWD, a[0], AT_FDCWD, a[1], RENAME_EXCHANGE);
}

static int c_open(char **a)
{
	mode_t mode = a[2] ? strtoul(a[2], NULL, 8) : 0666;
	int fd = open(a[0], call_open_flags(a[1]), mode);

	return fd < 0 ? -1 : close(fd);
}

/* The calls that report a value: they add "NAME:VALUE" or "NAME:ERRNO". */
static void v_cat(struct lfs_buf *b, char **a) { call_cat(b, a[0]); }
static void v_getx(struct lfs_buf *b, char **a) { call_getx(b, "getx", a[0], a[1]); }
static void v_listx(struct lfs_buf *b, char **a) { call_listx(b, a[0]); }
static void v_stat(struct lfs_buf *b, char **a) { call_stat(b, a[0]); }
static void v_ls(struct lfs_buf *b, char **a) { call_ls(b, a[0]); }

static void v_getacl(struct lfs_buf *b, char **a)
{
	call_getx(b, "getacl", a[0], acl_xattr_name(a[1]));
}

static const struct {
	const char *name;
	int min, max;			/* arguments */
	int (*act)(char **a);		/* reports ok or an errno */
	void (*get)(struct lfs_buf *b, char **a);	/* reports a value */
} lfs_calls[] = {
	{ "read", 1, 1, c_read, NULL },
	{ "cat", 1, 1, NULL, v_cat },
	{ "write", 2, 2, c_write, NULL },
	{ "open", 2, 3, c_open, NULL },
	{ "truncate", 2, 2, c_truncate, NULL },
	{ "utimes", 2, 2, c_utimes, NULL },
	{ "chmod", 2, 2, c_chmod, NULL },
	{ "chown", 3, 3, c_chown, NULL },
	{ "setacl", 3, 3, c_setacl, NULL },
	{ "rmacl", 2, 2, c_rmacl, NULL },
	{ "getacl", 2, 2, NULL, v_getacl },
	{ "setx", 3, 3, c_setx, NULL },
	{ "rmx", 2, 2, c_rmx, NULL },
	{ "getx", 2, 2, NULL, v_getx },
	{ "listx", 1, 1, NULL, v_listx },
	{ "setcap", 1, 1, c_setcap, NULL },
	{ "link", 2, 2, c_link, NULL },
	{ "unlink", 1, 1, c_unlink, NULL },
	{ "rmdir", 1, 1, c_rmdir, NULL },
	{ "rename", 2, 2, c_rename, NULL },
	{ "exchange", 2, 2, c_exchange, NULL },
	{ "symlink", 2, 2, c_symlink, NULL },
	{ "mknod", 4, 4, c_mknod, NULL },
	{ "mkdir", 2, 2, c_mkdir, NULL },
	{ "stat", 1, 1, NULL, v_stat },
	{ "ls", 1, 1, NULL, v_ls },
	{ "tmpfile", 1, 1, c_tmpfile, NULL },
	{ "linkup", 1, 1, c_linkup, NULL },
	{ "linkupat", 2, 2, c_linkupat, NULL },
};

/* One call; a line this tool cannot read is reported and ends the row. */
static int do_call(char **argv, int argc, void *arg)
{
	struct lfs_buf *b = arg;
	char *args[8] = { NULL };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(lfs_calls); i++) {
		if (strcmp(argv[0], lfs_calls[i].name))
			continue;
		if (argc - 1 < lfs_calls[i].min || argc - 1 > lfs_calls[i].max)
			break;
		memcpy(args, argv + 1, (argc - 1) * sizeof(*args));
		if (lfs_calls[i].act)
			result(b, argv[0], lfs_calls[i].act(args));
		else
			lfs_calls[i].get(b, args);
		return 0;
	}
	buf_add(b, "%sbad-call:%s", b->len ? " " : "", argv[0]);
	return -1;
}

/* Drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH for good, keep the rest. */
static int drop_dac_caps(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	const uint32_t dac = 1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH;
	int i;

	if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, 0, 0, 0) ||
	    prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH, 0, 0, 0) ||
	    syscall(SYS_capget, &hdr, data))
		return -1;
	for (i = 0; i < 2; i++) {
		data[i].effective &= i ? ~0u : ~dac;
		data[i].permitted &= i ? ~0u : ~dac;
		data[i].inheritable &= i ? ~0u : ~dac;
	}
	if (syscall(SYS_capset, &hdr, data) || syscall(SYS_capget, &hdr, data))
		return -1;
	if ((data[0].effective | data[0].permitted) & dac) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

/*
 * Take the credentials "UID:GID[:GROUP,...]" for good; with "/nodac",
 * uid 0 less CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.
 */
static int become(const char *as)
{
	gid_t groups[16];
	unsigned int uid, gid;
	size_t ngroups = 0;
	const char *p;
	int pos = 0;

	if (!strcmp(as, LFS_ATTACK_ROOT_NODAC))
		return setgroups(0, NULL) || setresgid(0, 0, 0) ||
		       setresuid(0, 0, 0) || drop_dac_caps() ? -1 : 0;

	if (sscanf(as, "%u:%u%n", &uid, &gid, &pos) != 2) {
		errno = EINVAL;
		return -1;
	}
	for (p = as + pos; *p == ':' || *p == ','; ) {
		char *end;

		groups[ngroups++] = strtoul(p + 1, &end, 10);
		if (end == p + 1 || ngroups == ARRAY_SIZE(groups)) {
			errno = EINVAL;
			return -1;
		}
		p = end;
	}
	if (setgroups(ngroups, groups) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid))
		return -1;
	/* no way back to root, no capability left */
	if (geteuid() != uid || !setresuid(0, 0, 0)) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

static const char *row_as(const struct lfs_row *r)
{
	return r->as ? r->as : LFS_ATTACK_AS;
}

/*
 * The child for the credentials @as: opens, still as root, the directory
 * of each row in @sel (ROOT/ROW) that runs as @as, takes the credentials
 * for good, and runs those rows, each in its own directory.  One line per
 * row on @fd: "INDEX RESULT".
 */
static void run_child(const struct lfs_row **sel, size_t n, const char *as,
		      const char *root, int fd)
{
	FILE *out = fdopen(fd, "w");
	char dir[PATH_MAX];
	int dirfd[ARRAY_SIZE(lfs_rows)];
	int err = 0;
	size_t i;

	if (!out)
		_exit(1);
	for (i = 0; i < n; i++) {
		dirfd[i] = -1;
		if (strcmp(row_as(sel[i]), as))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, sel[i]->name);
		dirfd[i] = open(dir, O_PATH | O_DIRECTORY);
		if (dirfd[i] < 0)
			fprintf(out, "%zu chdir:%s\n", i, errname(errno));
	}
	if (become(as))
		err = errno;
	umask(022);
	for (i = 0; i < n; i++) {
		struct lfs_buf b = { .len = 0 };
		struct lfs_item_action calls = { .fn = do_call, .arg = &b };

		if (dirfd[i] < 0)
			continue;
		if (err)
			buf_add(&b, "become:%s", errname(err));
		else if (fchdir(dirfd[i]))
			buf_add(&b, "chdir:%s", errname(errno));
		else
			lfs_each_item(sel[i]->calls, &calls);
		fprintf(out, "%zu %s\n", i, b.s);
	}
	if (fclose(out))
		_exit(1);
	_exit(0);
}

/* ---- state ---- */

static time_t lfs_start;

/* FNV-1a 64 of the file's content; 0 if it cannot be read */
static uint64_t hash_file(int dirfd, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	unsigned char buf[4096];
	ssize_t n, i;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 0x100000001b3ULL;
		}
	close(fd);
	return n < 0 ? 0 : h;
}

static void state_xattrs(const char *path, struct lfs_buf *b)
{
	char list[4096], *names[64];
	unsigned char v[512];
	ssize_t n, i, len;

	n = list_names(path, list, sizeof(list), names, ARRAY_SIZE(names));
	if (n < 0) {
		buf_add(b, " xattrs:%s", errname(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		if (!strncmp(names[i], "trusted.overlay.", 16) ||
		    !strncmp(names[i], "user.overlay.", 13))
			continue;
		buf_add(b, " %s=", names[i]);
		len = lgetxattr(path, names[i], v, sizeof(v));
		if (len < 0)
			buf_add(b, "%s", errname(errno));
		else
			put_value(names[i], v, len, b);
	}
}

static char lfs_type_char(mode_t mode)
{
	static const struct {
		mode_t type;
		char c;
	} types[] = {
		{ S_IFREG, '-' }, { S_IFDIR, 'd' }, { S_IFLNK, 'l' }, { S_IFCHR, 'c' },
		{ S_IFBLK, 'b' }, { S_IFIFO, 'p' }, { S_IFSOCK, 's' },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(types); i++)
		if ((mode & S_IFMT) == types[i].type)
			return types[i].c;
	return '?';
}

/* One line for @rel (under @top), appended to @out. */
static void state_line(FILE *out, const char *top, const char *rel,
		       const struct stat *st)
{
	struct lfs_buf b = { .len = 0 };
	char path[PATH_MAX], target[PATH_MAX];
	char type;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	type = lfs_type_char(st->st_mode);
	buf_add(&b, "%s %c %04o %u:%u", rel, type, st->st_mode & 07777,
		st->st_uid, st->st_gid);
	if (S_ISREG(st->st_mode))
		buf_add(&b, " size=%lld h=%016llx nl=%lu", (long long)st->st_size,
			(unsigned long long)hash_file(AT_FDCWD, path),
			(unsigned long)st->st_nlink);
	if (S_ISLNK(st->st_mode)) {
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		buf_add(&b, " -> %s", n < 0 ? errname(errno) : target);
	}
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		buf_add(&b, " dev=%u:%u", major(st->st_rdev), minor(st->st_rdev));
	/* not of a directory: see "mt=" at the top */
	if (!S_ISDIR(st->st_mode) && st->st_mtim.tv_sec > lfs_start - 86400)
		buf_add(&b, " mt=now");
	else if (!S_ISDIR(st->st_mode))
		buf_add(&b, " mt=%lld.%09ld", (long long)st->st_mtim.tv_sec,
			st->st_mtim.tv_nsec);
	state_xattrs(path, &b);
	fprintf(out, "%s\n", b.s);
}

/* Lines for @rel and everything under it, sorted by path. */
static void state_walk(FILE *out, const char *top, const char *rel)
{
	char path[PATH_MAX], sub[PATH_MAX];
	struct dirent **list;
	struct stat st;
	int n, i;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	if (lstat(path, &st)) {
		fprintf(out, "%s %s\n", rel, errname(errno));
		return;
	}
	state_line(out, top, rel, &st);
	if (!S_ISDIR(st.st_mode))
		return;
	n = scandir(path, &list, NULL, alphasort);
	if (n < 0) {
		fprintf(out, "%s/ %s\n", rel, errname(errno));
		return;
	}
	for (i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..")) {
			snprintf(sub, sizeof(sub), "%s%s%s",
				 strcmp(rel, ".") ? rel : "",
				 strcmp(rel, ".") ? "/" : "", name);
			state_walk(out, top, sub);
		}
		free(list[i]);
	}
	free(list);
}

/* The state of @top (a row's directory) in a new string; NULL if absent. */
static char *state_of(const char *top)
{
	struct stat st;
	char *text = NULL;
	size_t size = 0;
	FILE *out;

	if (lstat(top, &st))
		return NULL;
	out = open_memstream(&text, &size);
	if (!out)
		return NULL;
	state_walk(out, top, ".");
	fclose(out);
	return text;
}

/* Print @text with every line prefixed by "  @what ". */
static void print_state(const char *what, const char *text)
{
	const char *p = text, *nl;

	for (; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		printf("  %s %.*s\n", what, (int)(nl - p), p);
		if (!*nl)
			break;
	}
}

static bool in_themes(const struct lfs_row *r, char **themes, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(themes[i], r->theme))
			return true;
		/* "all": the rows for a mounter with every capability */
		if (!strcmp(themes[i], "all") &&
		    strncmp(r->theme, LFS_ATTACK_MOUNTER,
			    strlen(LFS_ATTACK_MOUNTER)))
			return true;
	}
	return false;
}

/*
 * Run the rows @sel[@n]: one child for each set of credentials they use.
 * Their result lines go to @result[] (freed by the caller).
 */
static int run_children(const struct lfs_row **sel, size_t n, const char *root,
			char **result)
{
	char line[8192];
	size_t i, j;
	int fds[2], status;
	pid_t pid;
	FILE *in;

	for (i = 0; i < n; i++) {
		const char *as = row_as(sel[i]);

		for (j = 0; j < i; j++)
			if (!strcmp(row_as(sel[j]), as))
				break;
		if (j < i)
			continue;	/* its child ran it */
		fflush(stdout);
		if (pipe(fds))
			return -1;
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid) {
			close(fds[0]);
			run_child(sel, n, as, root, fds[1]);
		}
		close(fds[1]);
		in = fdopen(fds[0], "r");
		if (!in)
			return -1;
		while (fgets(line, sizeof(line), in)) {
			char *text;
			size_t k = strtoul(line, &text, 10);

			text[strcspn(text, "\n")] = '\0';
			if (k < n && *text == ' ' && !result[k])
				result[k] = strdup(text + 1);
		}
		fclose(in);
		if (waitpid(pid, &status, 0) < 0)
			return -1;
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "lfs-attack: the child for %s failed (status %d)\n",
				as, status);
			errno = ECHILD;
			return -1;
		}
	}
	return 0;
}

/* A row's report: its result line and its state, on stdout. */
static void report_row(const struct lfs_row *r, const char *root,
		       const char *upper, const char *result, const char *before)
{
	char dir[PATH_MAX];
	char *after;

	printf("%s: %s\n", r->name, result ? result : "(no result)");
	snprintf(dir, sizeof(dir), "%s/%s", root, r->name);
	after = state_of(dir);
	if (before && after && !strcmp(before, after))
		printf("  mount: unchanged\n");
	else if (after)
		print_state("mount", after);
	else
		printf("  mount: %s gone\n", r->name);
	free(after);

	if (upper) {
		snprintf(dir, sizeof(dir), "%s/%s", upper, r->name);
		after = state_of(dir);
		if (after)
			print_state("upper", after);
		else
			printf("  upper: -\n");
		free(after);
	}
}

/*
 * Every row first has its state taken, then the children run the rows,
 * then each row is reported: the rows touch only their own directories.
 */
static int cmd_run(int argc, char **argv)
{
	const struct lfs_row *sel[ARRAY_SIZE(lfs_rows)];
	char *before[ARRAY_SIZE(lfs_rows)], *result[ARRAY_SIZE(lfs_rows)];
	const char *upper = NULL;
	char dir[PATH_MAX];
	size_t i, n = 0;
	int err;

	if (argc >= 2 && !strcmp(argv[0], "-u")) {
		upper = argv[1];
		argc -= 2;
		argv += 2;
	}
	if (argc < 2)
		return lfs_usage();
	lfs_start = time(NULL);
	for (i = 0; i < ARRAY_SIZE(lfs_rows); i++)
		if (in_themes(&lfs_rows[i], argv + 1, argc - 1))
			sel[n++] = &lfs_rows[i];
	if (!n) {
		fprintf(stderr, "lfs-attack: no rows in the themes given\n");
		return 2;
	}
	for (i = 0; i < n; i++) {
		snprintf(dir, sizeof(dir), "%s/%s", argv[0], sel[i]->name);
		before[i] = state_of(dir);
		result[i] = NULL;
	}
	err = run_children(sel, n, argv[0], result);
	if (err)
		fprintf(stderr, "lfs-attack: %s: %s\n", argv[0], strerror(errno));
	for (i = 0; i < n; i++) {
		if (!err)
			report_row(sel[i], argv[0], upper, result[i], before[i]);
		free(before[i]);
		free(result[i]);
	}
	return err ? 1 : 0;
}

static int cmd_rows(int argc, char **argv, bool expect)
{
	bool longer = !expect && argc && !strcmp(argv[0], "-l");
	size_t i;
	int n = 0;

	if (longer) {
		argc--;
		argv++;
	}
	for (i = 0; i < ARRAY_SIZE(lfs_rows); i++) {
		const struct lfs_row *r = &lfs_rows[i];

		if (argc && !in_themes(r, argv, argc))
			continue;
		if (expect)
			printf("%s: %s\n", r->name, r->expect);
		else if (longer)
			printf("%s|%s|%s|%s|%s|%s\n", r->theme, r->name,
			       r->as ? r->as : LFS_ATTACK_AS, r->setup, r->calls,
			       r->expect);
		else
			printf("%s %s\n", r->theme, r->name);
		n++;
	}
	if (!n) {
		fprintf(stderr, "lfs-attack: no rows in the themes given\n");
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return lfs_usage();
	if (!strcmp(argv[1], "setup"))
		return cmd_setup(argc - 2, argv + 2);
	if (!strcmp(argv[1], "rows"))
		return cmd_rows(argc - 2, argv + 2, false);
	if (!strcmp(argv[1], "expect") && argc > 2)
		return cmd_rows(argc - 2, argv + 2, true);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	return lfs_usage();
}
