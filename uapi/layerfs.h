/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * layerfs on-disk names, shared by the kernel module and the tools.
 *
 * Fixed-size types only: this header compiles in the kernel and in
 * userspace alike.
 */
#ifndef _UAPI_LAYERFS_H
#define _UAPI_LAYERFS_H

/* the filesystem type name given to mount(2) and fsopen(2) */
#define LFS_FSTYPE			"layerfs"

/* xattr namespace of every layerfs marker; hidden from readers */
#define LFS_XATTR_PREFIX		"trusted.overlay."

/* a native whiteout: a symlink to LFS_WHITEOUT_TARGET with this xattr "y" */
#define LFS_XATTR_WHITEOUT		LFS_XATTR_PREFIX "whiteout"
#define LFS_WHITEOUT_TARGET		"(overlay-whiteout)"

/* a directory with this xattr "y" hides every lower layer below it */
#define LFS_XATTR_OPAQUE		LFS_XATTR_PREFIX "opaque"

/* a moved directory records where its lower parts live */
#define LFS_XATTR_REDIRECT		LFS_XATTR_PREFIX "redirect"

/* the lower object a copied-up object came from */
#define LFS_XATTR_ORIGIN		LFS_XATTR_PREFIX "origin"

/* value of a boolean marker xattr */
#define LFS_XATTR_TRUE			"y"

/* OCI/AUFS whiteout names, as found in image layers */
#define LFS_AUFS_WHITEOUT_PREFIX	".wh."
#define LFS_AUFS_OPAQUE_NAME		".wh..wh..opq"

/* the most lower layers one mount may stack */
#define LFS_MAX_LAYERS			4096

#endif /* _UAPI_LAYERFS_H */
