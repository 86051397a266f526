// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: module init and exit, and the filesystem type.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/module.h>
#include <linux/fs_context.h>
#include "layerfs.h"

static int lfs_init_fs_context(struct fs_context *fc)
{
	return invalf(fc, "layerfs: not implemented yet");
}

static struct file_system_type lfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= LFS_FSTYPE,
	.init_fs_context	= lfs_init_fs_context,
	.kill_sb		= kill_anon_super,
};
MODULE_ALIAS_FS(LFS_FSTYPE);

static int __init lfs_init(void)
{
	return register_filesystem(&lfs_fs_type);
}

static void __exit lfs_exit(void)
{
	unregister_filesystem(&lfs_fs_type);
}

module_init(lfs_init);
module_exit(lfs_exit);

MODULE_DESCRIPTION("layerfs: N read-only lower layers under one writable upper");
MODULE_LICENSE("GPL");
