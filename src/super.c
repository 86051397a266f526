// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: module init and exit, mount parameters, fill_super, statfs and
 * show_options.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/fs_parser.h>
#include <linux/seq_file.h>
#include <linux/statfs.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string_helpers.h>
#include "layerfs.h"

enum lfs_param {
	LFS_OPT_LOWERDIR,
	LFS_OPT_LOWERDIR_ADD,
	LFS_OPT_DATADIR_ADD,
	LFS_OPT_UPPERDIR,
	LFS_OPT_WORKDIR,
	LFS_OPT_NAMEINDEX,
	LFS_OPT_WHITEOUT_FORMAT,
	/* overlay's options, in the order overlay shows them */
	LFS_OPT_DEFAULT_PERMISSIONS,
	LFS_OPT_REDIRECT_DIR,
	LFS_OPT_INDEX,
	LFS_OPT_UUID,
	LFS_OPT_NFS_EXPORT,
	LFS_OPT_XINO,
	LFS_OPT_METACOPY,
	LFS_OPT_VOLATILE,
	LFS_OPT_USERXATTR,
	LFS_OPT_VERITY_MODE,
};

static const struct constant_table lfs_nameindex_modes[] = {
	{ "on",		LFS_NAMEINDEX_ON },
	{ "off",	LFS_NAMEINDEX_OFF },
	{ "eager",	LFS_NAMEINDEX_EAGER },
	{}
};

/* whiteout= values, by enum lfs_whiteout_format */
static const char *const lfs_whiteout_names[] = {
	[LFS_WH_NATIVE]		= LFS_WHITEOUT_NATIVE_NAME,
	[LFS_WH_CHARDEV]	= LFS_WHITEOUT_CHARDEV_NAME,
	[LFS_WH_AUFS]		= LFS_WHITEOUT_AUFS_NAME,
};

/*
 * redirect_dir=, as overlay reads it.  "off" creates no redirects but
 * follows those it meets, as Debian's overlay does (built with
 * CONFIG_OVERLAY_FS_REDIRECT_ALWAYS_FOLLOW=y): it shows as "follow".
 */
static const struct constant_table lfs_redirect_modes[] = {
	{ "on",		LFS_REDIRECT_ON },
	{ "follow",	LFS_REDIRECT_FOLLOW },
	{ "off",	LFS_REDIRECT_FOLLOW },
	{ "nofollow",	LFS_REDIRECT_NOFOLLOW },
	{}
};

/* what show_options calls each mode */
static const char *const lfs_redirect_names[] = {
	[LFS_REDIRECT_ON]	= "on",
	[LFS_REDIRECT_FOLLOW]	= "follow",
	[LFS_REDIRECT_NOFOLLOW]	= "nofollow",
};

static const struct constant_table lfs_on_off[] = {
	{ "on",		true },
	{ "off",	false },
	{}
};

/* verity=, as overlay 6.6 reads it */
static const struct constant_table lfs_verity_modes[] = {
	{ "off",	LFS_VERITY_OFF },
	{ "on",		LFS_VERITY_ON },
	{ "require",	LFS_VERITY_REQUIRE },
	{}
};

/* what show_options calls each mode */
static const char *const lfs_verity_names[] = {
	[LFS_VERITY_OFF]	= "off",
	[LFS_VERITY_ON]		= "on",
	[LFS_VERITY_REQUIRE]	= "require",
};

/* xino=: whether st_ino was asked to be composed (auto: where needed) */
static const struct constant_table lfs_xino_modes[] = {
	{ "on",		true },
	{ "auto",	true },
	{ "off",	false },
	{}
};

/* uuid=: overlay 6.1 knows on and off, later ones null and auto too */
static const struct constant_table lfs_uuid_modes[] = {
	{ "on",		true },
	{ "auto",	true },
	{ "off",	false },
	{ "null",	false },
	{}
};

static const struct fs_parameter_spec lfs_param_spec[] = {
	fsparam_string("lowerdir",	LFS_OPT_LOWERDIR),
	fsparam_string("lowerdir+",	LFS_OPT_LOWERDIR_ADD),
	fsparam_string("datadir+",	LFS_OPT_DATADIR_ADD),
	fsparam_string("upperdir",	LFS_OPT_UPPERDIR),
	fsparam_string("workdir",	LFS_OPT_WORKDIR),
	fsparam_enum("nameindex",	LFS_OPT_NAMEINDEX, lfs_nameindex_modes),
	fsparam_string(LFS_OPT_WHITEOUT, LFS_OPT_WHITEOUT_FORMAT),
	fsparam_flag("default_permissions", LFS_OPT_DEFAULT_PERMISSIONS),
	fsparam_enum("redirect_dir",	LFS_OPT_REDIRECT_DIR, lfs_redirect_modes),
	fsparam_enum("index",		LFS_OPT_INDEX, lfs_on_off),
	fsparam_enum("uuid",		LFS_OPT_UUID, lfs_uuid_modes),
	fsparam_enum("nfs_export",	LFS_OPT_NFS_EXPORT, lfs_on_off),
	fsparam_enum("xino",		LFS_OPT_XINO, lfs_xino_modes),
	fsparam_enum("metacopy",	LFS_OPT_METACOPY, lfs_on_off),
	fsparam_flag("volatile",	LFS_OPT_VOLATILE),
	fsparam_flag("userxattr",	LFS_OPT_USERXATTR),
	fsparam_enum(LFS_OPT_VERITY,	LFS_OPT_VERITY_MODE, lfs_verity_modes),
	{}
};

/*
 * The separator that ends a layer of a "lowerdir=" list at @in (after
 * its ':'): "::" starts the data-only layers (overlay's syntax, Linux
 * 6.5), and separates each of them from the next; a single ':' between
 * two data-only layers would make the second a regular one below a
 * data-only one.  Sets *@data for the layer that follows.
 */
static int lfs_lowerdir_sep(struct fs_context *fc, char **in, bool *data)
{
	if (**in == ':') {
		(*in)++;
		*data = true;
		return 0;
	}
	if (*data)
		return lfs_inval(fc, "lowerdir=: ':' after \"::\" (data-only layers take \"::\")");
	return 0;
}

/*
 * Split a "lowerdir=" value at unescaped colons and add each layer:
 * "L0:L1::D0::D1", the regular lower layers top first, then after "::"
 * the data-only ones.  Backslash escapes the next character (":", ",",
 * "\\").  The value is modified in place.
 */
static int lfs_parse_lowerdir_list(struct fs_context *fc, char *list)
{
	char *start = list, *in = list, *out = list;
	struct lfs_dir_arg dir = {};
	bool data = false;
	int err;

	if (list[0] == ':' && list[1] == ':')
		return lfs_inval(fc, "lowerdir=: \"::\" first (a regular layer must come before)");
	for (;;) {
		char c = *in++;

		if (c == '\\' && *in) {
			*out++ = *in++;
			continue;
		}
		if (c != ':' && c != '\0') {
			*out++ = c;
			continue;
		}
		*out = '\0';
		if (out == start)
			return lfs_inval(fc, "empty layer in lowerdir=");
		dir.name = start;
		dir.data_only = data;
		err = lfs_config_add_lower(fc, &dir);
		if (err || c == '\0')
			return err;
		err = lfs_lowerdir_sep(fc, &in, &data);
		if (err)
			return err;
		start = in;
		out = in;
	}
}

/*
 * Undo the backslash escapes of an "upperdir=" or "workdir=" value in
 * place, as lfs_parse_lowerdir_list() does for each layer: the value
 * /proc/mounts shows (lfs_show_path()) then mounts the same directory.
 */
static void lfs_unescape(char *s)
{
	char *out = s;

	for (; *s; s++) {
		if (*s == '\\' && s[1])
			s++;
		*out++ = *s;
	}
	*out = '\0';
}

/* whiteout=: parsed here, so that a bad value gets a message that helps */
static int lfs_parse_whiteout(struct fs_context *fc, const char *value)
{
	struct lfs_config *cfg = fc->fs_private;
	int i;

	i = match_string(lfs_whiteout_names, ARRAY_SIZE(lfs_whiteout_names),
			 value);
	if (i < 0)
		return lfs_inval(fc, "whiteout=%s: unknown format (one of %s, %s, %s)",
				 value, LFS_WHITEOUT_NATIVE_NAME,
				 LFS_WHITEOUT_CHARDEV_NAME, LFS_WHITEOUT_AUFS_NAME);
	cfg->whiteout = i;
	cfg->whiteout_given = true;
	return 0;
}

/*
 * overlay's options: what layerfs does of each is in docs/write-side.md
 * ("overlay's options").  A value layerfs cannot give is refused; one
 * that names what layerfs always does is taken; index=off and xino=off
 * are taken too (engines pass them), with a word on what layerfs does
 * instead.  The value in effect is what lfs_show_options() shows.
 */
static int lfs_parse_overlay(struct fs_context *fc, int opt,
			     const struct fs_parse_result *result)
{
	struct lfs_config *cfg = fc->fs_private;

	switch (opt) {
	case LFS_OPT_REDIRECT_DIR:
		cfg->redirect = result->uint_32;
		break;
	case LFS_OPT_INDEX:
		cfg->index = result->uint_32;
		break;
	case LFS_OPT_XINO:
		if (!result->uint_32)
			lfs_info(fc, "xino=off: st_ino is composed from the layer's filesystem all the same");
		break;
	case LFS_OPT_NFS_EXPORT:
		if (!result->uint_32)
			break;
		lfs_err(fc, "nfs_export=on: not supported (layerfs has no file handles)");
		return -EINVAL;
	case LFS_OPT_METACOPY:
		cfg->metacopy = result->uint_32;
		break;
	case LFS_OPT_VERITY_MODE:
		cfg->verity = result->uint_32;
		break;
	}
	cfg->given |= BIT(opt);
	return 0;
}

/*
 * verity=on|require checks digests that only metacopy files carry: as on
 * overlay 6.6, it turns metacopy on when metacopy= is not given, and
 * conflicts with metacopy=off (EINVAL).  metacopy=on's own rules then
 * apply (redirect_dir=nofollow, userxattr), their messages naming the
 * option given (lfs_metacopy_opt()).
 */
static int lfs_config_verity(struct fs_context *fc, struct lfs_config *cfg)
{
	if (cfg->verity == LFS_VERITY_OFF)
		return 0;
	if ((cfg->given & BIT(LFS_OPT_METACOPY)) && !cfg->metacopy)
		return lfs_inval(fc, "verity=%s: conflicts with metacopy=off",
				 lfs_verity_names[cfg->verity]);
	if (!(cfg->given & BIT(LFS_OPT_METACOPY)))
		cfg->metacopy_by_verity = true;
	cfg->metacopy = true;
	cfg->given |= BIT(LFS_OPT_METACOPY);
	return 0;
}

/* The option that turned metacopy on, for a message: the user's words. */
static const char *lfs_metacopy_opt(const struct lfs_config *cfg)
{
	static const char *const by_verity[] = {
		[LFS_VERITY_ON]		= "verity=on (which turns metacopy on)",
		[LFS_VERITY_REQUIRE]	= "verity=require (which turns metacopy on)",
	};

	if (cfg->metacopy_by_verity && by_verity[cfg->verity])
		return by_verity[cfg->verity];
	return "metacopy=on";
}

/*
 * userxattr: the markers are user.overlay.* xattrs, which whoever owns
 * the layers may write (docs/security.md, "userxattr").  What would
 * trust one beyond hiding names is off: redirects are neither followed
 * nor written (nofollow), there is no hard-link index (its entries are
 * found by origin markers, which are not read either: lfs_use_origin()),
 * and the native whiteout, a symlink with an xattr, cannot be made (the
 * kernel keeps user.* xattrs on regular files and directories only):
 * whiteouts are 0/0 character devices unless whiteout=aufs.  An option
 * given that asks for any of these fails the mount.  metacopy stays off
 * unless given on, as everywhere: overlay refuses it with userxattr (a
 * forged metacopy file would show the data below it with the metadata
 * its owner chose), layerfs takes it in a user namespace, as it follows
 * a metacopy file only to the data the same path holds below, and only
 * to data the mounter may read, asked at each use (lfs_data_may_read();
 * docs/security.md, "Metadata-only copy-up under userxattr").  Not in
 * the initial namespace: there the mounter is root, who may read
 * everything, and anyone who may write a file of a layer may mark it.
 */
static int lfs_config_userxattr(struct fs_context *fc, struct lfs_config *cfg)
{
	if ((cfg->given & BIT(LFS_OPT_REDIRECT_DIR)) &&
	    cfg->redirect != LFS_REDIRECT_NOFOLLOW)
		return lfs_inval(fc, "redirect_dir=%s: conflicts with userxattr (nofollow only)",
				 lfs_redirect_names[cfg->redirect]);
	if ((cfg->given & BIT(LFS_OPT_INDEX)) && cfg->index)
		return lfs_inval(fc, "index=on: conflicts with userxattr (which has no index)");
	if ((cfg->given & BIT(LFS_OPT_METACOPY)) && cfg->metacopy &&
	    fc->user_ns == &init_user_ns)
		return lfs_inval(fc, "%s: with userxattr only in a user namespace",
				 lfs_metacopy_opt(cfg));
	if (cfg->whiteout_given && cfg->whiteout == LFS_WH_NATIVE)
		return lfs_inval(fc, "whiteout=%s: conflicts with userxattr (%s or %s only)",
				 LFS_WHITEOUT_NATIVE_NAME,
				 LFS_WHITEOUT_CHARDEV_NAME, LFS_WHITEOUT_AUFS_NAME);
	cfg->redirect = LFS_REDIRECT_NOFOLLOW;
	if (!cfg->whiteout_given)
		cfg->whiteout = LFS_WH_CHARDEV;
	return 0;
}

/*
 * The options together, once all are known: conflicts and defaults.  In
 * a user namespace userxattr is in effect whether given or not: the
 * mounter cannot write trusted.* xattrs, and must not have layerfs trust
 * markers it wrote as user.* (docs/security.md, "Who may mount").
 */
static int lfs_config_check(struct fs_context *fc, struct lfs_config *cfg)
{
	int err;

	if (fc->user_ns != &init_user_ns)
		cfg->given |= BIT(LFS_OPT_USERXATTR);
	err = lfs_config_verity(fc, cfg);
	if (err)
		return err;
	if (cfg->given & BIT(LFS_OPT_USERXATTR))
		return lfs_config_userxattr(fc, cfg);
	/*
	 * metacopy is off unless given on, as overlay's default: a metacopy
	 * file in a lower layer shows the data below it with the metadata
	 * the layer's author chose, so it is for layers the mounter trusts
	 * (docs/security.md, "Metadata-only copy-up"); and never with
	 * redirects not followed (overlay refuses that pair too)
	 */
	if (cfg->redirect == LFS_REDIRECT_NOFOLLOW &&
	    (cfg->given & BIT(LFS_OPT_METACOPY)) && cfg->metacopy)
		return lfs_inval(fc, "%s: conflicts with redirect_dir=nofollow",
				 lfs_metacopy_opt(cfg));
	if (!(cfg->given & BIT(LFS_OPT_METACOPY)))
		cfg->metacopy = false;
	if ((cfg->given & BIT(LFS_OPT_INDEX)) && !cfg->index)
		lfs_info(fc, "index=off: hard links copied up stay hard links (the index is kept)");
	return 0;
}

/*
 * "lowerdir+" and "datadir+" (Linux 6.7's fsconfig keys): one layer each,
 * the regular lower ones top first, then the data-only ones; not mixed
 * with "lowerdir=".
 */
static int lfs_append_lower(struct fs_context *fc, const struct lfs_dir_arg *dir)
{
	struct lfs_config *cfg = fc->fs_private;
	const char *key = dir->data_only ? "datadir+" : "lowerdir+";

	if (cfg->lower_listed)
		return lfs_inval(fc, "%s cannot follow lowerdir=", key);
	if (!dir->data_only && cfg->nr_data)
		return lfs_inval(fc, "lowerdir+ cannot follow datadir+ (data-only: last)");
	cfg->lower_appended = true;
	return lfs_config_add_lower(fc, dir);
}

/*
 * Data-only layers: below at least one regular lower layer (they are
 * never merged, so a stack of them alone would show an empty root), and
 * only with metacopy=on, as overlay asks: their data is reached through
 * metacopy files alone, which metacopy=off refuses.
 */
static int lfs_config_check_data(struct fs_context *fc,
				 const struct lfs_config *cfg)
{
	if (!cfg->nr_data)
		return 0;
	if (cfg->nr_data == cfg->nr_lower)
		return lfs_inval(fc, "data-only layers need a regular lower layer above them");
	if (!cfg->metacopy)
		return lfs_inval(fc, "data-only layers need metacopy=on");
	return 0;
}

/*
 * FSCONFIG_SET_FD: "lowerdir+", "datadir+", "upperdir" and "workdir" take a directory
 * by descriptor, as overlay does since Linux 6.13, so that a container
 * engine need not give each layer a path (or a mount) of its own.
 */
static int lfs_parse_fd_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct lfs_dir_arg dir = { .file = param->file };

	if (!strcmp(param->key, "lowerdir+") || !strcmp(param->key, "datadir+")) {
		dir.data_only = param->key[0] == 'd';
		return lfs_append_lower(fc, &dir);
	}
	if (!strcmp(param->key, "upperdir") || !strcmp(param->key, "workdir"))
		return lfs_config_set_upper(fc, param->key, &dir);
	return lfs_inval(fc, "%s: takes no file descriptor", param->key);
}

static int lfs_parse_param(struct fs_context *fc, struct fs_parameter *param)
{
	struct lfs_config *cfg = fc->fs_private;
	struct lfs_dir_arg dir = {};
	struct fs_parse_result result;
	int opt;

	if (param->type == fs_value_is_file)
		return lfs_parse_fd_param(fc, param);
	opt = fs_parse(fc, lfs_param_spec, param, &result);
	if (opt < 0)
		return opt;
	if (opt >= LFS_OPT_DEFAULT_PERMISSIONS)
		return lfs_parse_overlay(fc, opt, &result);

	switch (opt) {
	case LFS_OPT_LOWERDIR:
		if (cfg->lower_appended)
			return lfs_inval(fc, "lowerdir= cannot follow lowerdir+ or datadir+");
		if (cfg->lower_listed)
			return lfs_inval(fc, "lowerdir= given twice");
		cfg->lower_listed = true;
		return lfs_parse_lowerdir_list(fc, param->string);
	case LFS_OPT_LOWERDIR_ADD:
	case LFS_OPT_DATADIR_ADD:
		dir.name = param->string;
		dir.data_only = opt == LFS_OPT_DATADIR_ADD;
		return lfs_append_lower(fc, &dir);
	case LFS_OPT_UPPERDIR:
	case LFS_OPT_WORKDIR:
		lfs_unescape(param->string);
		dir.name = param->string;
		return lfs_config_set_upper(fc, param->key, &dir);
	case LFS_OPT_NAMEINDEX:
		cfg->nameindex = result.uint_32;
		return 0;
	case LFS_OPT_WHITEOUT_FORMAT:
		return lfs_parse_whiteout(fc, param->string);
	}
	return -EINVAL;
}

/*
 * mount(2) passes one string of comma-separated options.  Commas inside a
 * value may be escaped with a backslash, so the generic parser, which
 * splits at every comma, is not enough.  Escapes are left in the value
 * for lfs_parse_lowerdir_list() to undo.
 */
static int lfs_parse_monolithic(struct fs_context *fc, void *data)
{
	char *opts = data, *in, *start;
	int err;

	if (!opts)
		return 0;
	err = security_sb_eat_lsm_opts(opts, &fc->security);
	if (err)
		return err;

	for (start = in = opts; ; in++) {
		char c = *in;
		char *eq;

		if (c == '\\' && in[1]) {
			in++;
			continue;
		}
		if (c != ',' && c != '\0')
			continue;
		*in = '\0';
		if (in != start) {
			eq = strchr(start, '=');
			if (eq)
				*eq++ = '\0';
			err = vfs_parse_fs_string(fc, start, eq,
						  eq ? strlen(eq) : 0);
			if (err)
				return err;
		}
		if (c == '\0')
			return 0;
		start = in + 1;
	}
}

/* statfs of the top layer: the upper one, where space is used */
static int lfs_statfs(struct dentry *dentry, struct kstatfs *buf)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct lfs_layer *top = sbi->upper ? sbi->upper : &sbi->layers[0];
	struct path path = { .mnt = top->mnt, .dentry = top->root };
	int err;

	err = vfs_statfs(&path, buf);
	if (err)
		return err;
	buf->f_type = LFS_SUPER_MAGIC;
	return 0;
}

/* characters that /proc/mounts shows as octal escapes */
#define LFS_MOUNTS_ESC	", \t\n\\"

/*
 * Write a layer path as lowerdir= reads it back: a backslash before each
 * ':', ',' and backslash, then the mount table's octal escapes on top.
 */
static void lfs_show_path(struct seq_file *m, const char *s)
{
	while (*s) {
		size_t plain = strcspn(s, ":,\\");

		seq_escape_mem(m, s, plain, ESCAPE_OCTAL, LFS_MOUNTS_ESC);
		s += plain;
		if (!*s)
			break;
		seq_escape_mem(m, "\\", 1, ESCAPE_OCTAL, LFS_MOUNTS_ESC);
		seq_escape_mem(m, s, 1, ESCAPE_OCTAL, LFS_MOUNTS_ESC);
		s++;
	}
}

/*
 * overlay's options: each one given at mount, with the value in effect
 * (which may not be the one given: index=off shows index=on), and
 * volatile while it is in effect.
 */
static void lfs_show_overlay(struct seq_file *m, const struct lfs_sb *sbi)
{
	unsigned int given = sbi->given;

	if (given & BIT(LFS_OPT_DEFAULT_PERMISSIONS))
		seq_puts(m, ",default_permissions");
	if (given & BIT(LFS_OPT_REDIRECT_DIR))
		seq_printf(m, ",redirect_dir=%s", lfs_redirect_names[sbi->redirect]);
	/* the hard-link index lives in the work directory */
	if (given & BIT(LFS_OPT_INDEX))
		seq_printf(m, ",index=%s", sbi->index ? "on" : "off");
	/* no filesystem UUID is recorded or checked */
	if (given & BIT(LFS_OPT_UUID))
		seq_puts(m, ",uuid=off");
	if (given & BIT(LFS_OPT_NFS_EXPORT))
		seq_puts(m, ",nfs_export=off");
	if (given & BIT(LFS_OPT_XINO))
		seq_puts(m, ",xino=on");
	if (given & BIT(LFS_OPT_METACOPY))
		seq_printf(m, ",metacopy=%s", sbi->metacopy ? "on" : "off");
	if (sbi->volatile_mount)
		seq_puts(m, ",volatile");
	if (sbi->userxattr)
		seq_puts(m, ",userxattr");
	if (given & BIT(LFS_OPT_VERITY_MODE))
		seq_printf(m, ",verity=%s", lfs_verity_names[sbi->verity]);
}

static int lfs_show_options(struct seq_file *m, struct dentry *root)
{
	struct lfs_sb *sbi = LFS_SB(root->d_sb);
	unsigned int i;

	seq_puts(m, ",lowerdir=");
	for (i = 0; i < lfs_nr_all_layers(sbi); i++) {
		/* "::" before each data-only layer, as lowerdir= reads them */
		if (i >= sbi->nr_layers)
			seq_puts(m, "::");
		else if (i)
			seq_putc(m, ':');
		lfs_show_path(m, sbi->layers[i].name);
	}
	if (sbi->upper) {
		seq_puts(m, ",upperdir=");
		lfs_show_path(m, sbi->upper->name);
		seq_puts(m, ",workdir=");
		lfs_show_path(m, sbi->work_name);
	}
	if (sbi->nameindex != LFS_NAMEINDEX_ON)
		seq_printf(m, ",nameindex=%s",
			   sbi->nameindex == LFS_NAMEINDEX_OFF ? "off" : "eager");
	if (sbi->whiteout != LFS_WH_NATIVE)
		seq_printf(m, ",%s=%s", LFS_OPT_WHITEOUT,
			   lfs_whiteout_names[sbi->whiteout]);
	lfs_show_overlay(m, sbi);
	return 0;
}

/*
 * syncfs() and sync(2) reach the upper filesystem, but on a volatile
 * mount, which fails them once the upper filesystem met a writeback
 * error (lfs_sync_status()).
 */
static int lfs_sync_fs(struct super_block *sb, int wait)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct super_block *usb;
	int err;

	if (!sbi->upper)
		return 0;
	err = lfs_sync_status(sbi);
	if (err < 0) {
		/* syncfs(2) reports the superblock's errseq, not this return */
		errseq_set(&sb->s_wb_err, -EIO);
		return -EIO;
	}
	if (!err || !wait)
		return 0;
	usb = sbi->upper->mnt->mnt_sb;
	down_read(&usb->s_umount);
	err = sync_filesystem(usb);
	up_read(&usb->s_umount);
	return err;
}

static void lfs_put_super(struct super_block *sb)
{
	struct lfs_sb *sbi = LFS_SB(sb);

	if (!sbi)
		return;
	lfs_upper_free(sbi);
	lfs_layers_free(sbi);
	if (sbi->creator_cred)
		put_cred(sbi->creator_cred);
	if (sbi->resource_cred)
		put_cred(sbi->resource_cred);
	kfree(sbi);
	sb->s_fs_info = NULL;
}

static const struct super_operations lfs_super_operations = {
	.alloc_inode	= lfs_alloc_inode,
	.free_inode	= lfs_free_inode,
	.evict_inode	= lfs_evict_inode,
	.drop_inode	= generic_delete_inode,
	.put_super	= lfs_put_super,
	.sync_fs	= lfs_sync_fs,
	.statfs		= lfs_statfs,
	.show_options	= lfs_show_options,
};

static void lfs_d_release(struct dentry *dentry)
{
	lfs_entry_free(dentry->d_fsdata);
}

/*
 * The real dentry behind a layerfs one, for file_dentry() of a real file
 * (whose f_path is the layerfs path) and d_real_inode(): the one whose
 * inode is @inode, or with @inode NULL the one that holds the data (the
 * upper object once there is one, but for a metacopy file, whose data is
 * below: lfs_data_path()).  A lower object may itself be on a
 * stacking filesystem: ask it in turn.  Directories and special files
 * are only ever asked about their own inode.
 */
static struct dentry *lfs_d_real(struct dentry *dentry,
				 const struct inode *inode)
{
	struct inode *our = d_inode(dentry);
	const struct lfs_entry *e = LFS_E(dentry);
	struct dentry *real;
	struct path data;

	if (!our || inode == our || (!inode && !d_is_reg(dentry)))
		return dentry;
	if (!d_is_reg(dentry))
		goto not_found;

	real = lfs_upper(dentry);
	if (!real)
		real = lfs_i_upper(our);
	if (real && (inode ? inode == d_inode(real) : !lfs_i_metacopy(our)))
		return real;
	if (lfs_i_metacopy(our)) {
		lfs_data_path(our, &data);
		real = d_real(data.dentry, inode);
		if (!inode || inode == d_inode(real))
			return real;
	}
	if (!e || !e->nr)
		goto not_found;
	real = d_real(e->real[0].dentry, inode);
	if (!inode || inode == d_inode(real))
		return real;
not_found:
	if (!inode)
		return dentry;
	pr_warn_ratelimited("d_real(%pd2): no real dentry for inode %s:%lu\n",
			    dentry, inode->i_sb->s_id, inode->i_ino);
	return dentry;
}

static const struct dentry_operations lfs_dentry_operations = {
	.d_release	= lfs_d_release,
	.d_real		= lfs_d_real,
};

/*
 * Remote layers.  FUSE, NFS, 9p with a cache and the like may not trust
 * their own dentry cache: each walk through a name asks ->d_revalidate()
 * whether the object is still the one the server has there.  A layerfs
 * dentry holds the real dentries its lookup found and never walks their
 * names again, so it has to put the question on their behalf, or it goes
 * on showing an object the real filesystem has dropped.
 *
 * Credentials: the mounter's, as for every other act on a real object
 * (overlay uses the caller's).  The real lookup ran as the mounter; a
 * server that checks each user (9p access=user, NFS with Kerberos, a
 * FUSE server reading the caller's uid) must see the same user again,
 * or a name the mount showed fails for a caller the lookup never met.
 * No access is decided here: that was decided on the layerfs inode.
 *
 * RCU walk: an lfs_entry is freed by ->d_release() at once, not after a
 * grace period, so under LOOKUP_RCU its real[] may be freed under us.
 * A positive dentry asks for a ref-walk (-ECHILD); FUSE and NFS ask for
 * one themselves whenever they must ask their server.  A negative
 * dentry needs no entry and is valid in either mode: it stands for no
 * real object (an entry it may keep from an unlinked past is stale and
 * not looked at), and a name that appears in a layer later is not
 * noticed, as any change of the layers under a mount.
 *
 * What is checked: this name's upper object (not another name's alias
 * of a hard-linked inode: that name's removal would fail this one) and,
 * unless a non-directory has its upper copy (then the lower objects no
 * longer show through it), every lower object in real[], top first, each
 * only if its filesystem asks for it.  A real dentry its filesystem
 * calls stale is unhashed there, as a walk on the layer itself would do,
 * and the layerfs walk fails with -ESTALE: a layer changed under the
 * mount, which is unsupported, and the caller sees an error rather than
 * an object that is gone.  The VFS retries once with LOOKUP_REVAL, which
 * fails the same way; the layerfs dentry stays until the dcache drops it.
 * The weak form (the last component of a walk that jumped: ".", a
 * mount point) asks the real object alone and unhashes nothing, as the
 * VFS does.
 */
static int lfs_revalidate_real(struct dentry *real, unsigned int flags,
			       bool weak)
{
	int ret = 1;

	if (weak) {
		if (real->d_flags & DCACHE_OP_WEAK_REVALIDATE)
			ret = real->d_op->d_weak_revalidate(real, flags);
	} else if (real->d_flags & DCACHE_OP_REVALIDATE) {
		ret = real->d_op->d_revalidate(real, flags);
		if (!ret)
			d_invalidate(real);
	}
	return ret ? ret : -ESTALE;
}

static int lfs_revalidate_common(struct dentry *dentry, unsigned int flags,
				 bool weak)
{
	struct inode *inode = d_inode_rcu(dentry);
	const struct lfs_entry *e;
	const struct cred *old_cred;
	struct dentry *upper;
	unsigned int i;
	int ret = 1;

	if (!inode)
		return 1;
	if (flags & LOOKUP_RCU)
		return -ECHILD;

	old_cred = lfs_override_creds(dentry->d_sb);
	upper = lfs_upper(dentry);
	if (upper)
		ret = lfs_revalidate_real(upper, flags, weak);
	e = LFS_E(dentry);
	if (upper && !d_is_dir(dentry))
		e = NULL;
	for (i = 0; ret > 0 && e && i < e->nr; i++)
		ret = lfs_revalidate_real(e->real[i].dentry, flags, weak);
	revert_creds(old_cred);
	return ret;
}

static int lfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	return lfs_revalidate_common(dentry, flags, false);
}

static int lfs_d_weak_revalidate(struct dentry *dentry, unsigned int flags)
{
	return lfs_revalidate_common(dentry, flags, true);
}

/* for mounts with a remote layer: see lfs_stack_revalidates() */
static const struct dentry_operations lfs_reval_dentry_operations = {
	.d_release		= lfs_d_release,
	.d_real			= lfs_d_real,
	.d_revalidate		= lfs_d_revalidate,
	.d_weak_revalidate	= lfs_d_weak_revalidate,
};

/*
 * Does the filesystem of a layer revalidate its dentries?  The layer's
 * own directory says so in its flags, but not always: FUSE gives its root
 * dentry no ->d_revalidate and every other one its s_d_op's, so a FUSE
 * mount's root as a layer is found by its superblock's default.  A
 * filesystem that gives ->d_revalidate to chosen dentries only (procfs's
 * per-process directories) is not seen; it is no place for a layer.
 */
static bool lfs_layer_revalidates(const struct dentry *root)
{
	const struct dentry_operations *op = root->d_sb->s_d_op;

	if (root->d_flags & (DCACHE_OP_REVALIDATE | DCACHE_OP_WEAK_REVALIDATE))
		return true;
	return op && (op->d_revalidate || op->d_weak_revalidate);
}

/*
 * The dentry operations are chosen once, at mount: a mount whose layers
 * all keep their dentries valid (tmpfs, ext4, erofs...) gets no
 * ->d_revalidate at all and stays in RCU walk; one remote layer, upper
 * or lower, puts the check on every dentry of the mount.
 */
static bool lfs_stack_revalidates(const struct lfs_sb *sbi)
{
	unsigned int i;

	if (sbi->upper && lfs_layer_revalidates(sbi->upper->root))
		return true;
	/* a data-only layer's objects are parts of metacopy files' entries */
	for (i = 0; i < lfs_nr_all_layers(sbi); i++)
		if (lfs_layer_revalidates(sbi->layers[i].root))
			return true;
	return false;
}

/*
 * A lower layer's root marked for xattr whiteouts (opaque xattr "x") has
 * them, as a subdirectory would; its opaque mark ("y") means nothing, for
 * there is nothing below a root to hide.
 */
static void lfs_root_marker(struct super_block *sb, struct lfs_real *r)
{
	const struct cred *old_cred;

	old_cred = lfs_override_creds(sb);
	lfs_dir_marker(LFS_SB(sb), r->layer, r->dentry, &r->flags);
	revert_creds(old_cred);
}

/* The root: the upper root and every lower layer's root, top first. */
static struct dentry *lfs_make_root(struct super_block *sb)
{
	struct lfs_sb *sbi = LFS_SB(sb);
	struct lfs_entry *e;
	struct inode *inode;
	struct dentry *root;
	unsigned int i;

	e = lfs_entry_alloc(sbi->nr_layers, true);
	if (!e)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < sbi->nr_layers; i++) {
		e->real[i].dentry = dget(sbi->layers[i].root);
		e->real[i].layer = &sbi->layers[i];
		lfs_root_marker(sb, &e->real[i]);
		e->nr++;
	}
	if (sbi->upper)
		e->upper = dget(sbi->upper->root);
	inode = lfs_get_inode(sb, e, NULL);
	if (IS_ERR(inode)) {
		lfs_entry_free(e);
		return ERR_CAST(inode);
	}
	root = d_make_root(inode);
	if (!root) {
		lfs_entry_free(e);
		return ERR_PTR(-ENOMEM);
	}
	root->d_fsdata = e;
	return root;
}

/*
 * The credentials layerfs acts with on the layers: the mounter's, less
 * CAP_SYS_RESOURCE, as the kernel's overlay does, so that what a user
 * writes through the mount stays within the user's disk quota.  A mounter
 * that held CAP_SYS_RESOURCE also keeps a copy with it, lent only where
 * the caller holds it too (lfs_resource_creds()).
 */
static int lfs_mounter_creds(struct lfs_sb *sbi)
{
	struct cred *cred = prepare_creds();

	if (!cred)
		return -ENOMEM;
	if (cap_raised(cred->cap_effective, CAP_SYS_RESOURCE)) {
		sbi->resource_cred = prepare_creds();
		if (!sbi->resource_cred) {
			put_cred(cred);
			return -ENOMEM;
		}
	}
	cap_lower(cred->cap_effective, CAP_SYS_RESOURCE);
	sbi->creator_cred = cred;
	return 0;
}

static int lfs_fill_super(struct super_block *sb, struct fs_context *fc)
{
	struct lfs_config *cfg = fc->fs_private;
	struct lfs_sb *sbi;
	struct dentry *root;
	unsigned int i;
	int depth = 0;
	int err;

	if (!cfg->nr_lower)
		return lfs_inval(fc, "at least one lowerdir is needed");

	err = -ENOMEM;
	sbi = kzalloc(sizeof(*sbi), GFP_KERNEL_ACCOUNT);
	if (!sbi)
		goto out;
	sb->s_fs_info = sbi;
	err = lfs_mounter_creds(sbi);
	if (err)
		goto out;
	sbi->nameindex = cfg->nameindex;
	sbi->whiteout = cfg->whiteout;
	sbi->redirect = cfg->redirect;
	sbi->userxattr = cfg->given & BIT(LFS_OPT_USERXATTR);
	sbi->metacopy = cfg->metacopy;
	sbi->verity = cfg->verity;
	sbi->xattr = lfs_xattr_ns(sbi->userxattr);
	sbi->given = cfg->given;
	sbi->volatile_mount = cfg->given & BIT(LFS_OPT_VOLATILE);

	err = lfs_layers_build(fc, sbi);
	if (err)
		goto out;
	err = lfs_upper_build(fc, sbi);
	if (err)
		goto out;
	if (!sbi->upper && sbi->volatile_mount) {
		lfs_info(fc, "volatile: no upper layer, nothing to sync");
		sbi->volatile_mount = false;
	}

	sb->s_maxbytes = 0;
	for (i = 0; i < sbi->nr_mnts; i++) {
		struct super_block *lsb = sbi->mnts[i]->mnt_sb;

		depth = max(depth, lsb->s_stack_depth);
		sb->s_maxbytes = max(sb->s_maxbytes, lsb->s_maxbytes);
	}
	/* what is written lands in the upper layer: its limit is the one */
	if (sbi->upper)
		sb->s_maxbytes = sbi->upper->mnt->mnt_sb->s_maxbytes;
	sb->s_stack_depth = depth + 1;
	err = -EINVAL;
	if (sb->s_stack_depth > FILESYSTEM_MAX_STACK_DEPTH) {
		lfs_err(fc, "maximum filesystem stacking depth exceeded");
		goto out;
	}

	sb->s_magic = LFS_SUPER_MAGIC;
	sb->s_op = &lfs_super_operations;
	sb->s_xattr = lfs_xattr_handlers;
	sb->s_d_op = lfs_stack_revalidates(sbi) ? &lfs_reval_dentry_operations :
						  &lfs_dentry_operations;
	sb->s_time_gran = 1;
	sb->s_blocksize = sbi->layers[0].root->d_sb->s_blocksize;
	sb->s_blocksize_bits = sbi->layers[0].root->d_sb->s_blocksize_bits;
	sb->s_flags |= SB_POSIXACL;
	if (!sbi->upper)
		sb->s_flags |= SB_RDONLY;

	root = lfs_make_root(sb);
	if (IS_ERR(root)) {
		err = PTR_ERR(root);
		goto out;
	}
	sb->s_root = root;
	return 0;

out:
	/* lfs_put_super() is not called when fill_super fails */
	lfs_put_super(sb);
	return err;
}

/*
 * fill_super takes the mounter's credentials from current (the caller of
 * mount(2) or of fsconfig(FSCONFIG_CMD_CREATE)), and the superblock
 * belongs to the context's user namespace, which fsopen()'s caller was
 * checked over.  A context handed to a process of another namespace
 * would join the two: a superblock of one namespace acting with
 * credentials checked in none.  The process that creates the mount must
 * be in the context's namespace.
 */
static int lfs_get_tree(struct fs_context *fc)
{
	int err;

	if (current_user_ns() != fc->user_ns) {
		lfs_err(fc, "the mount must be created in the user namespace that opened its context");
		return -EPERM;
	}
	err = lfs_config_check(fc, fc->fs_private);
	if (!err)
		err = lfs_config_check_data(fc, fc->fs_private);
	if (err)
		return err;
	return get_tree_nodev(fc, lfs_fill_super);
}

/*
 * Remount: only the read-only flag may change, and read-write needs an
 * upper layer.  Layers cannot be changed on a live mount; the options
 * that name them are ignored, as mount(8) repeats them on remount.  The
 * whiteout format may be repeated, not changed: the upper layer holds
 * whiteouts of the format it was mounted with.  So may overlay's
 * options: redirect_dir=, metacopy=, verity=, volatile and userxattr
 * are what the mount was made with (an option not given keeps its value, so neither volatile
 * nor userxattr can be turned off either); the values of the others
 * that layerfs takes all mean what the mount already does, but
 * index=on on a mount without the index.
 */
static int lfs_reconfigure(struct fs_context *fc)
{
	struct lfs_sb *sbi = LFS_SB(fc->root->d_sb);
	struct lfs_config *cfg = fc->fs_private;

	if (cfg->whiteout_given && cfg->whiteout != sbi->whiteout)
		return lfs_inval(fc, "whiteout=%s: the format cannot change on remount (it is %s)",
				 lfs_whiteout_names[cfg->whiteout],
				 lfs_whiteout_names[sbi->whiteout]);
	if ((cfg->given & BIT(LFS_OPT_REDIRECT_DIR)) &&
	    cfg->redirect != sbi->redirect) {
		lfs_err(fc, "redirect_dir: cannot change on remount (it is %s, asked for %s)",
			lfs_redirect_names[sbi->redirect],
			lfs_redirect_names[cfg->redirect]);
		return -EINVAL;
	}
	if ((cfg->given & BIT(LFS_OPT_VOLATILE)) && sbi->upper &&
	    !sbi->volatile_mount)
		return lfs_inval(fc, "volatile: cannot be turned on by remount");
	if ((cfg->given & BIT(LFS_OPT_USERXATTR)) && !sbi->userxattr)
		return lfs_inval(fc, "userxattr: cannot be turned on by remount");
	if ((cfg->given & BIT(LFS_OPT_INDEX)) && cfg->index && sbi->userxattr)
		return lfs_inval(fc, "index=on: conflicts with userxattr (which has no index)");
	if ((cfg->given & BIT(LFS_OPT_METACOPY)) && cfg->metacopy != sbi->metacopy)
		return lfs_inval(fc, "metacopy: cannot change on remount (it is %s)",
				 sbi->metacopy ? "on" : "off");
	if ((cfg->given & BIT(LFS_OPT_VERITY_MODE)) && cfg->verity != sbi->verity)
		return lfs_inval(fc, "verity: cannot change on remount (it is %s)",
				 lfs_verity_names[sbi->verity]);
	if (!(fc->sb_flags & SB_RDONLY) && !sbi->upper)
		return lfs_inval(fc, "no upper layer: read-only only");
	return 0;
}

static void lfs_free_fc(struct fs_context *fc)
{
	struct lfs_config *cfg = fc->fs_private;

	if (cfg) {
		lfs_config_free(cfg);
		kfree(cfg);
	}
}

static const struct fs_context_operations lfs_context_ops = {
	.parse_monolithic	= lfs_parse_monolithic,
	.parse_param		= lfs_parse_param,
	.get_tree		= lfs_get_tree,
	.reconfigure		= lfs_reconfigure,
	.free			= lfs_free_fc,
};

/*
 * The VFS's own check (mount_capable(), which is not exported):
 * CAP_SYS_ADMIN over the user namespace the mount will belong to, the
 * caller's, once the type allows mounts there (FS_USERNS_MOUNT); in the
 * initial namespace before.
 */
static bool lfs_may_mount(struct fs_context *fc)
{
	if (!(fc->fs_type->fs_flags & FS_USERNS_MOUNT))
		return capable(CAP_SYS_ADMIN);
	return ns_capable(fc->user_ns, CAP_SYS_ADMIN);
}

static int lfs_init_fs_context(struct fs_context *fc)
{
	struct lfs_config *cfg;

	/*
	 * Only who may mount layerfs may configure a mount of it: fsconfig()
	 * holds every layer it is given until the mount is made, and the
	 * VFS checks who may mount (sget_fc()) only then.  Without this any
	 * user with a user namespace could pin layers and kernel memory
	 * through fsopen("layerfs").
	 */
	if (fc->purpose == FS_CONTEXT_FOR_MOUNT && !lfs_may_mount(fc))
		return -EPERM;
	cfg = kzalloc(sizeof(*cfg), GFP_KERNEL_ACCOUNT);
	if (!cfg)
		return -ENOMEM;
	fc->fs_private = cfg;
	fc->ops = &lfs_context_ops;
	return 0;
}

static struct file_system_type lfs_fs_type = {
	.owner			= THIS_MODULE,
	.name			= LFS_FSTYPE,
	/*
	 * The rules there: docs/security.md, "Mounting in a user namespace"
	 * and "Idmapped mounts".  Every inode operation given an idmapping
	 * honours it, so a detached layerfs mount may be idmapped by root
	 * of the namespace that owns the superblock (can_idmap_mount()).
	 */
	.fs_flags		= FS_USERNS_MOUNT | FS_ALLOW_IDMAP,
	.init_fs_context	= lfs_init_fs_context,
	.parameters		= lfs_param_spec,
	.kill_sb		= kill_anon_super,
};
MODULE_ALIAS_FS(LFS_FSTYPE);

static struct kmem_cache *lfs_inode_cachep;

struct inode *lfs_alloc_inode(struct super_block *sb)
{
	struct lfs_inode *li = alloc_inode_sb(sb, lfs_inode_cachep, GFP_KERNEL);

	if (!li)
		return NULL;
	li->upper = NULL;
	li->lower = NULL;
	li->layer = NULL;
	li->data = NULL;
	li->data_layer = NULL;
	li->flags = 0;
	return &li->vfs_inode;
}

void lfs_free_inode(struct inode *inode)
{
	kmem_cache_free(lfs_inode_cachep, LFS_I(inode));
}

static void lfs_inode_init_once(void *p)
{
	struct lfs_inode *li = p;

	inode_init_once(&li->vfs_inode);
	mutex_init(&li->lock);
}

/* debugfs layerfs/: statistics of the caches, for the tests */
static struct dentry *lfs_debugfs;

static int __init lfs_init(void)
{
	int err;

	lfs_inode_cachep = kmem_cache_create("lfs_inode", sizeof(struct lfs_inode),
					     0, SLAB_RECLAIM_ACCOUNT | SLAB_ACCOUNT,
					     lfs_inode_init_once);
	if (!lfs_inode_cachep)
		return -ENOMEM;
	/* statistics only: without debugfs the module works the same */
	lfs_debugfs = debugfs_create_dir("layerfs", NULL);
	err = lfs_ni_init(lfs_debugfs);
	if (err)
		goto out_cache;
	err = lfs_rd_init(lfs_debugfs);
	if (err)
		goto out_ni;
	err = register_filesystem(&lfs_fs_type);
	if (err)
		goto out_rd;
	return 0;

out_rd:
	lfs_rd_exit();
out_ni:
	lfs_ni_exit();
out_cache:
	debugfs_remove_recursive(lfs_debugfs);
	kmem_cache_destroy(lfs_inode_cachep);
	return err;
}

static void __exit lfs_exit(void)
{
	unregister_filesystem(&lfs_fs_type);
	lfs_verity_exit();
	lfs_rd_exit();
	lfs_ni_exit();
	debugfs_remove_recursive(lfs_debugfs);
	/* inodes and name indexes are freed after an RCU grace period */
	rcu_barrier();
	kmem_cache_destroy(lfs_inode_cachep);
}

module_init(lfs_init);
module_exit(lfs_exit);

MODULE_DESCRIPTION("layerfs: N read-only lower layers under one writable upper");
MODULE_LICENSE("GPL");
