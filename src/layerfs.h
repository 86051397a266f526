/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layerfs: a stack of read-only lower directories under an optional
 * writable upper directory, presented as one tree.
 */
#ifndef _LAYERFS_H
#define _LAYERFS_H

#include <linux/fs.h>
#include "uapi/layerfs.h"

#endif /* _LAYERFS_H */
