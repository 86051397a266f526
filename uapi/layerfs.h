/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * layerfs on-disk names, shared by the kernel module and the tools.
 *
 * Fixed-size types only: this header compiles in the kernel and in
 * userspace alike.
 */
#ifndef _UAPI_LAYERFS_H
#define _UAPI_LAYERFS_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* the filesystem type name given to mount(2) and fsopen(2) */
#define LFS_FSTYPE			"layerfs"

/* statfs(2)'s f_type of a layerfs mount: "layf" */
#define LFS_SUPER_MAGIC			0x6c617966

/*
 * xattr namespace of every layerfs marker; hidden from readers.  A mount
 * keeps its markers under one of two prefixes: LFS_XATTR_PREFIX by
 * default, LFS_XATTR_USER_PREFIX with the mount option LFS_OPT_USERXATTR
 * (overlay's "userxattr").  A marker's full name is the prefix followed
 * by its LFS_XATTR_SUFFIX_*; the LFS_XATTR_* full names below are those
 * under LFS_XATTR_PREFIX (the module checks at build time that both
 * spellings agree).
 */
#define LFS_XATTR_PREFIX		"trusted.overlay."
#define LFS_XATTR_USER_PREFIX		"user.overlay."

#define LFS_XATTR_SUFFIX_WHITEOUT	"whiteout"
#define LFS_XATTR_SUFFIX_OPAQUE		"opaque"
#define LFS_XATTR_SUFFIX_REDIRECT	"redirect"
#define LFS_XATTR_SUFFIX_ORIGIN		"lfs.origin"
#define LFS_XATTR_SUFFIX_LOWER_LINKS	"lfs.lowerlinks"
#define LFS_XATTR_SUFFIX_PROTATTR	"protattr"
#define LFS_XATTR_SUFFIX_INDEX_UPPER	"lfs.indexupper"
#define LFS_XATTR_SUFFIX_METACOPY	"metacopy"
/* set and removed at mount, to learn whether the upper filesystem keeps markers */
#define LFS_XATTR_SUFFIX_PROBE		"lfs.probe"

/* a native whiteout: a symlink to LFS_WHITEOUT_TARGET with this xattr "y" */
#define LFS_XATTR_WHITEOUT		LFS_XATTR_PREFIX "whiteout"
#define LFS_WHITEOUT_TARGET		"(overlay-whiteout)"

/* a directory with this xattr "y" hides every lower layer below it */
#define LFS_XATTR_OPAQUE		LFS_XATTR_PREFIX "opaque"

/* a moved directory records where its lower parts live */
#define LFS_XATTR_REDIRECT		LFS_XATTR_PREFIX "redirect"

/*
 * The lower object a copied-up object came from: a struct lfs_origin.
 * Not upstream's "origin" (a file handle), so that neither reads the
 * other's.
 */
#define LFS_XATTR_ORIGIN		LFS_XATTR_PREFIX "lfs.origin"

#define LFS_ORIGIN_V1			1

/* the lower object had several links: the copy is in the index */
#define LFS_ORIGIN_INDEXED		0x1

/* value of LFS_XATTR_ORIGIN; all fields little-endian */
struct lfs_origin {
	__u8 version;			/* LFS_ORIGIN_V1 */
	__u8 flags;			/* LFS_ORIGIN_* */
	__le16 nlink;			/* lower link count at copy-up, capped */
	__le32 generation;		/* lower i_generation */
	__le64 ino;			/* st_ino layerfs showed, and still shows */
	__le64 real_ino;		/* the lower object's own inode number */
};

/*
 * On the copy of a lower non-directory with several links
 * (LFS_ORIGIN_INDEXED): how many of its lower names are not in the upper
 * layer yet, as a __le32.  layerfs shows st_nlink = the copy's links - 1
 * (the index's own) + this.  A lower name is linked up before it is removed, so this
 * only ever goes down, by one for each name linked up.
 */
#define LFS_XATTR_LOWER_LINKS		LFS_XATTR_PREFIX "lfs.lowerlinks"

/*
 * On an upper object: its append-only ("a") and immutable ("i") flags,
 * a string of those letters.  The upper inode does not carry them: a
 * copy so marked could not be moved into place, nor a child be copied
 * into such a directory.  Overlay's name and format.
 */
#define LFS_XATTR_PROTATTR		LFS_XATTR_PREFIX "protattr"

/*
 * On a regular file: it holds the file's metadata only (owner, mode,
 * times, xattrs, and the size of the data as its own, sparse, size); the
 * data is that of the first regular file without this marker that the
 * lookup of the same path finds in the layers below, as a lookup walks
 * them (whiteouts, opaque directories and directory redirects
 * included).  The one other pointer is overlay 6.5's data pointer: on a
 * metacopy file of a regular lower layer, LFS_XATTR_REDIRECT holding an
 * absolute path ("/ab/cdef": names separated by one '/', none empty,
 * "." or ".."), looked up in the data-only layers (lowerdir=L::D,
 * datadir+) in mount order; the first that holds a regular file without
 * this marker there, every name before it a directory (no symlink is
 * followed), gives the data.  None does, or the mount has no data-only
 * layer, or the metacopy file is in the upper layer (layerfs never
 * writes a redirect on a file): EIO.  A metacopy file that is renamed
 * or linked through the mount gets its data first.  A lower layer's metacopy file
 * is followed only on a mount with metacopy=on.  Overlay's name; the
 * value is empty (no digest, as overlay 6.1 writes it) or a struct
 * lfs_metacopy (overlay 6.6's); any other value is refused: EIO.  Set by
 * a metadata-only copy-up, removed last by the data copy-up that fills
 * the file in place.
 */
#define LFS_XATTR_METACOPY		LFS_XATTR_PREFIX "metacopy"

/*
 * The value of LFS_XATTR_METACOPY when it is not empty: overlay 6.6's
 * documented layout, so that a metadata layer means the same on both.
 * @len is the bytes used, LFS_METACOPY_HDR_SIZE plus the digest's size,
 * and is the xattr's own length (a longer value is refused).
 * @digest_algo is an FS_VERITY_HASH_ALG_* of <linux/fsverity.h>
 * (SHA256 = 1: 32 bytes, SHA512 = 2: 64 bytes), or 0 with no digest
 * (@len 4).  @digest is the fs-verity file digest of the data, what
 * "fsverity measure" prints; with the mount option verity=on or
 * require, the data must be an fs-verity file of that digest.  A
 * @version or @flags bit not known here: not understood, EIO.
 */
#define LFS_METACOPY_VERSION		0
#define LFS_METACOPY_HDR_SIZE		4
#define LFS_METACOPY_DIGEST_MAX		64

struct lfs_metacopy {
	__u8 version;			/* LFS_METACOPY_VERSION */
	__u8 len;			/* bytes used, header included */
	__u8 flags;			/* none yet: 0 */
	__u8 digest_algo;		/* FS_VERITY_HASH_ALG_*, or 0: none */
	__u8 digest[LFS_METACOPY_DIGEST_MAX]; /* the first len - 4 used */
};

/*
 * Mount option verity=: whether the digests of metacopy files are
 * written at copy-up and checked when the data is opened (overlay 6.6).
 *   off      ignored (the default)
 *   on       a recorded digest must match the data's fs-verity digest
 *   require  as on, and every metacopy file must record one
 * on and require turn metacopy on when metacopy= is not given (overlay
 * 6.6); with metacopy=off they are EINVAL.
 */
#define LFS_OPT_VERITY			"verity"

/*
 * On workdir's index/: the upper directory whose copies it links, a
 * struct lfs_index_upper.  Written by the first mount that finds none; a
 * mount with another upper directory is refused (-ESTALE): the index's
 * entries are links to that directory's files.
 */
#define LFS_XATTR_INDEX_UPPER		LFS_XATTR_PREFIX "lfs.indexupper"

#define LFS_INDEX_UPPER_V1		1

/* value of LFS_XATTR_INDEX_UPPER; all fields little-endian */
struct lfs_index_upper {
	__u8 version;			/* LFS_INDEX_UPPER_V1 */
	__u8 pad[3];			/* zero */
	__le32 generation;		/* the upper directory's i_generation */
	__le64 ino;			/* its inode number */
	__u8 uuid[16];			/* its filesystem's s_uuid */
};

/* the work directory's parts, under workdir= */
#define LFS_WORK_NAME			"work"	/* copy-up scratch, emptied at mount */
#define LFS_INDEX_NAME			"index"	/* hard-link index */

/*
 * In LFS_WORK_NAME, overlay's marks of a mount that left the layers in a
 * state another mount must not take as it is: a directory for each such
 * feature in LFS_INCOMPAT_NAME, which refuses every mount of the pair
 * while it holds anything.  A volatile mount makes
 * work/incompat/volatile/dirty; the user removes work/incompat/volatile
 * once the upper layer is known to be whole.
 */
#define LFS_INCOMPAT_NAME		"incompat"
#define LFS_INCOMPAT_VOLATILE		"volatile"
#define LFS_VOLATILE_DIRTY		"dirty"

/* value of a boolean marker xattr */
#define LFS_XATTR_TRUE			"y"

/*
 * OCI/AUFS whiteout names, as found in image layers and, with
 * whiteout=aufs, read and written in every layer: an entry ".wh.NAME"
 * hides NAME in the layers below, an entry LFS_AUFS_OPAQUE_NAME makes
 * its directory opaque.  Names under LFS_AUFS_META_PREFIX are aufs's own
 * (".wh..wh.plnk", ".wh..wh.aufs").  With whiteout=aufs every name that
 * starts with LFS_AUFS_WHITEOUT_PREFIX is hidden, and cannot be created
 * through the mount (EINVAL).
 */
#define LFS_AUFS_WHITEOUT_PREFIX	".wh."
#define LFS_AUFS_META_PREFIX		".wh..wh."
#define LFS_AUFS_OPAQUE_NAME		".wh..wh..opq"
/* what layerfs makes them: empty regular files of this mode */
#define LFS_AUFS_MARKER_MODE		0600

/*
 * Mount option whiteout=: the format of the whiteouts and opaque
 * directories layerfs writes in the upper layer.
 *   native   a symlink to LFS_WHITEOUT_TARGET with LFS_XATTR_WHITEOUT
 *            (the default); opaque: LFS_XATTR_OPAQUE
 *   chardev  a character device 0/0, as the kernel's overlayfs writes;
 *            opaque: LFS_XATTR_OPAQUE
 *   aufs     ".wh.NAME" and LFS_AUFS_OPAQUE_NAME, read in every layer
 * Every mode reads the native and chardev forms.
 */
#define LFS_OPT_WHITEOUT		"whiteout"
#define LFS_WHITEOUT_NATIVE_NAME	"native"
#define LFS_WHITEOUT_CHARDEV_NAME	"chardev"
#define LFS_WHITEOUT_AUFS_NAME		"aufs"

/*
 * ioctl on an open regular file of a writable layerfs mount, for a caller
 * with CAP_SYS_ADMIN: when the name shows a copy that the upper layer holds
 * only under other names or in the hard-link index (a lower object with
 * several names, changed through another one), give this name its own
 * link to the copy, as a change through it would.  The mount shows no
 * change but what copying up its parents does (a merged directory's link
 * count and size).  Done for every name before the upper layer becomes a
 * lower one (layerfs-mount --commit), it makes the upper layer hold every
 * name of every object the mount changed.  Returns 1 if the name was linked
 * up, 0 if there was nothing to do; EPERM without CAP_SYS_ADMIN, EROFS on
 * a read-only mount.
 */
#define LFS_IOC_LINK_UP			_IO('l', 0x01)

/*
 * LFS_IOC_LINK_UP_AT: the same for the name @name (@namelen bytes, no
 * NUL needed) in the open directory the ioctl is made on, whatever the
 * object's type: symlinks, devices, fifos and sockets, which cannot be
 * opened for an ioctl of their own, and regular files without opening
 * them.  The name is looked up as the caller, not followed.  Besides the
 * above: ENOENT if the directory has no such name, EINVAL for a name
 * that is empty, holds a '/' or a NUL, or is "." or "..", or for
 * @flags or @reserved not 0; ENAMETOOLONG beyond NAME_MAX.  A directory
 * needs nothing: 0.
 */
struct lfs_link_up_at {
	__u64 name;		/* user pointer to the name */
	__u32 namelen;		/* its length in bytes */
	__u32 flags;		/* none yet: 0 */
	__u64 reserved;		/* 0 */
};

#define LFS_IOC_LINK_UP_AT		_IOW('l', 0x02, struct lfs_link_up_at)

/* the most lower layers one mount may stack */
#define LFS_MAX_LAYERS			4096
/*
 * ... in a user namespace, as overlay allows there: each layer pins a
 * mount clone and kernel memory that an unprivileged user controls
 */
#define LFS_MAX_USERNS_LAYERS		500

#endif /* _UAPI_LAYERFS_H */
