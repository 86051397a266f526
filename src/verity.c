// SPDX-License-Identifier: GPL-2.0
/*
 * layerfs: fs-verity digests of metacopy files (verity=off|on|require).
 *
 * A metacopy file's marker may record the fs-verity file digest of its
 * data (struct lfs_metacopy in uapi, overlay 6.6's format).  With
 * verity=on, a recorded digest must be that of the data, an fs-verity
 * file, when the data is opened: by an open of the metacopy file
 * (lfs_open()) or by the data copy-up (copy_up.c); with verity=require,
 * a metacopy file must also record one.  Else EIO, and the kernel log
 * names the file.  The digest that counts is the top metacopy file's,
 * the one the layerfs inode shows: its upper copy, else its lower
 * object.  A metadata-only copy-up keeps it: a lower metacopy file's
 * value is copied, and with verity=on|require a plain lower file that
 * is an fs-verity file gets its digest recorded (lfs_verity_metacopy()).
 *
 * 6.1 exports no fsverity_get_digest(): the digest is computed here from
 * the descriptor the filesystem keeps (its get_verity_descriptor()), as
 * Documentation/filesystems/fsverity.rst defines the file digest.
 *
 * Every function here reads real objects and runs as the mounter.
 */
#define pr_fmt(fmt) "layerfs: " fmt

#include <linux/fsverity.h>
#include <linux/slab.h>
#include <crypto/hash.h>
#include "layerfs.h"

/*
 * The fs-verity descriptor, as fsverity.rst ("fs-verity descriptor")
 * lays it out: the file digest is the hash of these 256 bytes, in the
 * Merkle tree's hash algorithm.  As the filesystem keeps it, the four
 * bytes at 0x04 (reserved, zero, in the digest) hold the size of the
 * built-in signature that follows the struct (FS_IOC_READ_VERITY_METADATA
 * returns the two apart); the file digest hashes them as zero and
 * leaves the signature out.
 */
struct lfs_verity_desc {
	u8 version;			/* LFS_VERITY_DESC_VERSION */
	u8 hash_algorithm;		/* FS_VERITY_HASH_ALG_* */
	u8 log_blocksize;
	u8 salt_size;
	__le32 sig_size;		/* the signature after it; 0 in the digest */
	__le64 data_size;
	u8 root_hash[64];
	u8 salt[32];
	u8 reserved[144];
};

#define LFS_VERITY_DESC_VERSION	1
#define LFS_VERITY_DESC_SIZE	256
static_assert(sizeof(struct lfs_verity_desc) == LFS_VERITY_DESC_SIZE);

/*
 * The largest descriptor read, signature included: what fs-verity
 * itself reads of one (16 KiB).  A filesystem that reports more is
 * refused rather than trusted for the size of an allocation.
 */
#define LFS_VERITY_DESC_MAX	16384

/* the crypto API's name and the digest's size of an FS_VERITY_HASH_ALG_* */
static int lfs_verity_alg(unsigned int alg, const char **name)
{
	switch (alg) {
	case FS_VERITY_HASH_ALG_SHA256:
		*name = "sha256";
		return 32;
	case FS_VERITY_HASH_ALG_SHA512:
		*name = "sha512";
		return 64;
	}
	return -EINVAL;
}

/*
 * Is @mc, @len bytes read from a marker, a value this module
 * understands?  Empty (no digest), or a struct lfs_metacopy whose
 * length, version, flags and algorithm agree with each other.  An empty
 * value is given the 4-byte form without a digest.
 */
static bool lfs_metacopy_parse(struct lfs_metacopy *mc, int len)
{
	const char *name;

	if (!len) {
		memset(mc, 0, LFS_METACOPY_HDR_SIZE);
		mc->len = LFS_METACOPY_HDR_SIZE;
		return true;
	}
	if (len < LFS_METACOPY_HDR_SIZE || len != mc->len ||
	    mc->version != LFS_METACOPY_VERSION || mc->flags)
		return false;
	if (!mc->digest_algo)
		return len == LFS_METACOPY_HDR_SIZE;
	return lfs_verity_alg(mc->digest_algo, &name) ==
	       len - LFS_METACOPY_HDR_SIZE;
}

/**
 * lfs_read_metacopy - read and check the metacopy marker of a real file
 * @sbi: the superblock info
 * @layer: the layer @real lives in
 * @real: a positive real dentry
 * @mc: filled in; mc->digest_algo is 0 when the marker has no digest
 *
 * Caller runs as the mounter.
 * Return: 0; -ENODATA without a marker; -EIO, with a message naming the
 * file and the layer, for a value not understood; or -errno.
 */
int lfs_read_metacopy(const struct lfs_sb *sbi, const struct lfs_layer *layer,
		      struct dentry *real, struct lfs_metacopy *mc)
{
	int len;

	len = lfs_get_marker(sbi, layer, real, LFS_XA_METACOPY, mc,
			     sizeof(*mc));
	if (len == -ERANGE) {
		pr_warn_ratelimited("%pd2: metacopy marker of more than %zu bytes in layer \"%s\": not understood\n",
				    real, sizeof(*mc), layer->name);
		return -EIO;
	}
	if (len < 0)
		return len;
	if (lfs_metacopy_parse(mc, len))
		return 0;
	pr_warn_ratelimited("%pd2: metacopy marker of %d bytes in layer \"%s\": not understood\n",
			    real, len, layer->name);
	return -EIO;
}

/*
 * The hash transforms, by FS_VERITY_HASH_ALG_*: allocated at first use
 * and kept until the module goes (lfs_verity_exit()).  A failure is kept
 * too (an ERR_PTR): an algorithm this kernel lacks (SHA-512 without
 * CONFIG_CRYPTO_SHA512) fails every check of it with EIO rather than ask
 * for a module at each open, with the inode's copy-up lock held.  Set
 * once (cmpxchg); a shash without a key may be shared.
 */
static struct crypto_shash *lfs_verity_tfms[FS_VERITY_HASH_ALG_SHA512 + 1];

/* The transform of @alg, whose digest is @size bytes; or an ERR_PTR. */
static struct crypto_shash *lfs_verity_tfm(unsigned int alg, int size)
{
	struct crypto_shash *tfm, *old;
	const char *name;

	if (lfs_verity_alg(alg, &name) != size)
		return ERR_PTR(-EIO);
	/* pairs with the cmpxchg_release() below */
	tfm = smp_load_acquire(&lfs_verity_tfms[alg]);
	if (tfm)
		return tfm;
	tfm = crypto_alloc_shash(name, 0, 0);
	if (!IS_ERR(tfm) && crypto_shash_digestsize(tfm) != size) {
		crypto_free_shash(tfm);
		tfm = ERR_PTR(-EIO);
	}
	/* pairs with the smp_load_acquire() above */
	old = cmpxchg_release(&lfs_verity_tfms[alg], NULL, tfm);
	if (old) {
		if (!IS_ERR(tfm))
			crypto_free_shash(tfm);
		return old;
	}
	if (IS_ERR(tfm))
		pr_warn("%s: no hash transform (%ld): the digests of its fs-verity files fail (EIO)\n",
			name, PTR_ERR(tfm));
	return tfm;
}

/**
 * lfs_verity_exit - free the hash transforms, at module exit
 */
void lfs_verity_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lfs_verity_tfms); i++) {
		if (!IS_ERR_OR_NULL(lfs_verity_tfms[i]))
			crypto_free_shash(lfs_verity_tfms[i]);
		lfs_verity_tfms[i] = NULL;
	}
}

/* Hash the descriptor @desc, signature size cleared, into @mc. */
static int lfs_verity_hash_desc(struct lfs_verity_desc *desc,
				struct lfs_metacopy *mc)
{
	struct crypto_shash *tfm;
	const char *name;
	int size, err;

	size = lfs_verity_alg(desc->hash_algorithm, &name);
	if (size < 0)
		return -EIO;
	tfm = lfs_verity_tfm(desc->hash_algorithm, size);
	if (IS_ERR(tfm))
		return -EIO;
	desc->sig_size = 0;
	err = crypto_shash_tfm_digest(tfm, (const u8 *)desc, sizeof(*desc),
				      mc->digest);
	if (err)
		return err;
	mc->version = LFS_METACOPY_VERSION;
	mc->len = LFS_METACOPY_HDR_SIZE + size;
	mc->flags = 0;
	mc->digest_algo = desc->hash_algorithm;
	return 0;
}

/*
 * Check the descriptor the filesystem gave, @size bytes: its version,
 * and a signature that fits in what was read.  Everything in it comes
 * from the disk.
 */
static bool lfs_verity_desc_valid(const struct lfs_verity_desc *desc,
				  int size)
{
	if (size < LFS_VERITY_DESC_SIZE ||
	    desc->version != LFS_VERITY_DESC_VERSION)
		return false;
	return le32_to_cpu(desc->sig_size) <= size - LFS_VERITY_DESC_SIZE;
}

/**
 * lfs_verity_file_digest - the fs-verity file digest of an open real file
 * @realfile: a real regular file, open (the filesystem's open loaded its
 *	verity information)
 * @mc: its digest_algo, digest and len are set
 *
 * Caller runs as the mounter.
 * Return: 0; -ENODATA if @realfile is not an fs-verity file; -EIO for
 * a descriptor that is not understood; or -errno.
 */
int lfs_verity_file_digest(struct file *realfile, struct lfs_metacopy *mc)
{
	struct inode *inode = file_inode(realfile);
	const struct fsverity_operations *vop = lfs_s_vop(inode->i_sb);
	struct lfs_verity_desc *desc;
	int size, got, err;

	if (!fsverity_active(inode) || !vop || !vop->get_verity_descriptor)
		return -ENODATA;
	size = vop->get_verity_descriptor(inode, NULL, 0);
	if (size < 0)
		return size;
	if (size < LFS_VERITY_DESC_SIZE || size > LFS_VERITY_DESC_MAX)
		return -EIO;
	desc = kmalloc(size, GFP_KERNEL);
	if (!desc)
		return -ENOMEM;
	/* the size may have changed since: what was read counts */
	got = vop->get_verity_descriptor(inode, desc, size);
	err = got;
	if (got < 0)
		goto out_free;
	err = -EIO;
	if (got > size || !lfs_verity_desc_valid(desc, got))
		goto out_free;
	err = lfs_verity_hash_desc(desc, mc);
out_free:
	kfree(desc);
	return err;
}

/*
 * The digest the data must have: the top metacopy file's, the inode's
 * upper copy, else the name's top lower object.  Caller holds the
 * inode's copy-up lock (the fill removes the upper marker under it) and
 * runs as the mounter.
 */
static int lfs_verity_want(struct dentry *dentry, struct lfs_metacopy *mc)
{
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct dentry *upper = lfs_i_upper(d_inode(dentry));
	const struct lfs_entry *e = LFS_E(dentry);
	int err;

	if (upper)
		err = lfs_read_metacopy(sbi, sbi->upper, upper, mc);
	else
		err = lfs_read_metacopy(sbi, e->real[0].layer,
					e->real[0].dentry, mc);
	/* the marker went under the mount */
	if (err == -ENODATA) {
		pr_warn_ratelimited("%pd2: metacopy marker gone\n", dentry);
		err = -EIO;
	}
	return err;
}

/* Does @got, the data's digest, match @want, the recorded one? */
static bool lfs_verity_match(const struct lfs_metacopy *want,
			     const struct lfs_metacopy *got)
{
	return want->digest_algo == got->digest_algo &&
	       want->len == got->len &&
	       !memcmp(want->digest, got->digest,
		       want->len - LFS_METACOPY_HDR_SIZE);
}

/*
 * Check the data of the metacopy file @dentry, open as @data, against
 * its recorded digest.  Once it passed, the inode is not checked again:
 * its data object never changes (lfs_inode_set_data()), nor does an
 * fs-verity file's content or digest.  Caller holds the inode's copy-up
 * lock and runs as the mounter.
 */
static int lfs_verity_check(struct dentry *dentry, struct file *data)
{
	struct lfs_inode *li = LFS_I(d_inode(dentry));
	struct lfs_sb *sbi = LFS_SB(dentry->d_sb);
	struct lfs_metacopy want, got;
	int err;

	lockdep_assert_held(&li->lock);
	if (test_bit(LFS_I_VERIFIED, &li->flags))
		return 0;
	err = lfs_verity_want(dentry, &want);
	if (err)
		return err;
	if (!want.digest_algo) {
		if (sbi->verity != LFS_VERITY_REQUIRE)
			goto out_verified;
		pr_warn_ratelimited("%pd2: metacopy file without a digest (verity=require)\n",
				    dentry);
		return -EIO;
	}
	err = lfs_verity_file_digest(data, &got);
	if (err == -ENODATA) {
		pr_warn_ratelimited("%pd2: its data is not an fs-verity file, and a digest is recorded\n",
				    dentry);
		return -EIO;
	}
	if (err) {
		pr_warn_ratelimited("%pd2: cannot get the fs-verity digest of its data (%d)\n",
				    dentry, err);
		return -EIO;
	}
	if (!lfs_verity_match(&want, &got)) {
		pr_warn_ratelimited("%pd2: the fs-verity digest of its data is not the recorded one\n",
				    dentry);
		return -EIO;
	}
out_verified:
	set_bit(LFS_I_VERIFIED, &li->flags);
	return 0;
}

/**
 * lfs_verity_check_file - check the data of a metacopy file at its open
 * @dentry: the layerfs dentry opened (ours: lfs_file_dentry())
 * @data: the real file of its data, just opened
 *
 * Nothing to do with verity=off, or once the inode passed.  A file that
 * is no longer a metacopy file once the lock is held got its data in the
 * upper file meanwhile, maybe without reading @data (a whole copy-up
 * that copies nothing: O_TRUNC, a size of 0): @data is not checked, and
 * must not be kept (1).
 * Called as anyone; reads as the mounter.
 * Return: 0; 1 if the caller must open the upper file instead; or -EIO
 * (the kernel log says why) or -errno.
 */
int lfs_verity_check_file(struct dentry *dentry, struct file *data)
{
	struct inode *inode = d_inode(dentry);
	struct lfs_inode *li = LFS_I(inode);
	const struct cred *old_cred;
	int err = 1;

	if (LFS_SB(dentry->d_sb)->verity == LFS_VERITY_OFF ||
	    test_bit(LFS_I_VERIFIED, &li->flags))
		return 0;
	mutex_lock(&li->lock);
	if (lfs_i_metacopy(inode)) {
		old_cred = lfs_override_creds(dentry->d_sb);
		err = lfs_verity_check(dentry, data);
		revert_creds(old_cred);
	}
	mutex_unlock(&li->lock);
	return err;
}

/**
 * lfs_verity_check_path - check the data of a metacopy file at its copy-up
 * @dentry: the layerfs dentry of the metacopy file
 * @data: the real object with its data, which the caller may read
 *
 * Caller holds the inode's copy-up lock and runs as the mounter.
 * Return: 0, or -EIO (the kernel log says why) or -errno.
 */
int lfs_verity_check_path(struct dentry *dentry, const struct path *data)
{
	struct file *file;
	int err;

	if (LFS_SB(dentry->d_sb)->verity == LFS_VERITY_OFF)
		return 0;
	file = dentry_open(data, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	err = lfs_verity_check(dentry, file);
	fput(file);
	return err;
}

/* The digest of the plain file @data for its metadata-only copy. */
static int lfs_verity_data_digest(const struct path *data,
				  struct lfs_metacopy *mc)
{
	struct file *file;
	int err;

	if (!IS_VERITY(d_inode(data->dentry)))
		return -ENODATA;
	file = dentry_open(data, O_RDONLY | O_LARGEFILE, current_cred());
	if (IS_ERR(file))
		return PTR_ERR(file);
	err = lfs_verity_file_digest(file, mc);
	fput(file);
	return err;
}

/**
 * lfs_verity_metacopy - the marker of a metadata-only copy
 * @dentry: the layerfs dentry copied up
 * @lower: its top lower object
 * @layer: the layer of @lower
 * @data: the object with its data (@lower itself but for a metacopy file)
 * @mc: set to the value to write (mc->digest_algo 0: none)
 *
 * A lower metacopy file's value is kept, so that the copy records what
 * it did (with any verity=).  With verity=on|require, a plain file that
 * is an fs-verity file gets its digest; with verity=require, one that is
 * not is copied whole (1).  Caller runs as the mounter, who may read
 * @data.
 * Return: 0, 1 for a whole copy, -EIO for an fs-verity file whose
 * digest cannot be had (the kernel log says why), or -errno.
 */
int lfs_verity_metacopy(struct dentry *dentry, const struct path *lower,
			const struct lfs_layer *layer, const struct path *data,
			struct lfs_metacopy *mc)
{
	enum lfs_verity_mode mode = LFS_SB(dentry->d_sb)->verity;
	int err;

	if (lower->dentry != data->dentry)
		return lfs_read_metacopy(LFS_SB(dentry->d_sb), layer,
					 lower->dentry, mc);
	lfs_metacopy_parse(mc, 0);
	if (mode == LFS_VERITY_OFF)
		return 0;
	err = lfs_verity_data_digest(data, mc);
	if (err == -ENODATA)
		return mode == LFS_VERITY_REQUIRE;
	if (!err || err == -ENOMEM)
		return err;
	/*
	 * The data is an fs-verity file whose digest cannot be had (its
	 * algorithm, its descriptor): a whole copy would read the same
	 * file, which an fs-verity open refuses too.  EIO, as the open.
	 */
	pr_warn_ratelimited("copy-up of %pd2: cannot get the fs-verity digest of its data (%d)\n",
			    dentry, err);
	return -EIO;
}
