#!/usr/bin/env python3
"""What an oci2ovl store takes on disk, part by part (tools/bench/store.sh).

  store-walk.py distinct STORE       the distinct contents of the regular
                                     files of STORE's layers, by SHA-256
  store-walk.py parts NAME STORE     STORE's inodes by kind and place

Both print CSV rows "store,part,count,apparent_bytes,allocated_bytes"
(no header). A hard-linked inode counts once, as du counts it.

distinct prints one row, distinct,content: the number of distinct
non-empty contents, their bytes, and what they take in whole 4 KiB blocks
(the least a filesystem of 4 KiB blocks without inline data can take).

parts prints, for NAME, the parts of STORE:
  objects         regular files under objects/ (an objects store's data)
  layer-files     regular files under layers/ (inline: the data; objects:
                  the pointers, whose apparent size is their sparse size,
                  not bytes stored, and whose blocks are xattr blocks)
  layer-xattr     those of layer-files that hold blocks and no data: an
                  xattr block each as st_blocks counts it (count, blocks)
  xattr-shared    what those xattr blocks take once ext4 shares equal ones
                  (mbcache: one block for up to 1024 inodes with the same
                  xattrs, e.g. pointers to one object): the number of
                  distinct xattr sets among them, and their blocks;
                  st_blocks and du count a shared block in every inode
  dirs            every directory of the store
  symlinks        symbolic links (fast ones hold no block)
  special         device nodes, fifos, sockets
  records         regular files elsewhere (trees/, images/, lock, ...)
  verity-extra    computed, not measured: the blocks fs-verity would add
                  to the objects on ext4 (a descriptor block, and the
                  Merkle tree of a file of more than one block), when
                  they have no fs-verity yet
  objects-small   objects of at most 60 bytes (what fits the inode's
                  i_block with ext4's inline_data)
"""
import fcntl
import hashlib
import os
import stat
import struct
import sys

BLOCK = 4096
# FS_IOC_GETFLAGS and FS_VERITY_FL (linux/fs.h)
FS_IOC_GETFLAGS = 0x80086601
FS_VERITY_FL = 0x00100000
# ext4: a verity descriptor of 256 bytes, hashes of 32 bytes (SHA-256)
HASHES_PER_BLOCK = BLOCK // 32
# ext4 shares an xattr block among at most this many inodes
# (EXT4_XATTR_REFCOUNT_MAX)
XATTR_REFCOUNT_MAX = 1024


def blocks_of(size):
    return (size + BLOCK - 1) // BLOCK


def walk(top):
    """Every path under top (top included), lstat'ed, hard links once."""
    seen = set()
    for dirpath, dirnames, filenames in os.walk(top):
        for name in [None] + dirnames + filenames:
            path = dirpath if name is None else os.path.join(dirpath, name)
            st = os.lstat(path)
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue
            seen.add(key)
            yield path, st


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            buf = f.read(1 << 20)
            if not buf:
                break
            h.update(buf)
    return h.hexdigest()


def distinct(store):
    sizes = {}
    for path, st in walk(os.path.join(store, "layers")):
        if stat.S_ISREG(st.st_mode) and st.st_size > 0:
            sizes[sha256_file(path)] = st.st_size
    total = sum(sizes.values())
    rounded = sum(blocks_of(s) * BLOCK for s in sizes.values())
    print("distinct,content,%d,%d,%d" % (len(sizes), total, rounded))


def verity_extra(path, size):
    """Bytes fs-verity would add to an object on ext4: the Merkle tree's
    blocks (none for a file of one block: its root hash is that block's
    hash) and the block the descriptor ends in (fs/ext4/verity.c)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            flags = struct.unpack("l", fcntl.ioctl(fd, FS_IOC_GETFLAGS,
                                                   struct.pack("l", 0)))[0]
        finally:
            os.close(fd)
        if flags & FS_VERITY_FL:
            return 0
    except OSError:
        pass
    tree = 0
    n = blocks_of(size)
    while n > 1:
        n = (n + HASHES_PER_BLOCK - 1) // HASHES_PER_BLOCK
        tree += n
    return (tree + 1) * BLOCK


def parts(name, store):
    store = os.path.abspath(store)
    objects = os.path.join(store, "objects") + os.sep
    layers = os.path.join(store, "layers") + os.sep
    order = ["objects", "layer-files", "layer-xattr", "xattr-shared",
             "dirs", "symlinks", "special", "records", "verity-extra",
             "objects-small"]
    acc = {p: [0, 0, 0] for p in order}
    xsets = {}

    def add(part, apparent, allocated):
        acc[part][0] += 1
        acc[part][1] += apparent
        acc[part][2] += allocated

    for path, st in walk(store):
        alloc = st.st_blocks * 512
        if stat.S_ISDIR(st.st_mode):
            add("dirs", st.st_size, alloc)
        elif stat.S_ISLNK(st.st_mode):
            add("symlinks", st.st_size, alloc)
        elif not stat.S_ISREG(st.st_mode):
            add("special", 0, alloc)
        elif path.startswith(objects):
            add("objects", st.st_size, alloc)
            add("verity-extra", 0, verity_extra(path, st.st_size))
            if st.st_size <= 60:
                add("objects-small", st.st_size, alloc)
        elif path.startswith(layers):
            add("layer-files", st.st_size, alloc)
            if alloc and data_free(path, st):
                add("layer-xattr", 0, alloc)
                xs = tuple(sorted((n, os.getxattr(path, n, follow_symlinks=False))
                                  for n in os.listxattr(path, follow_symlinks=False)))
                xsets[xs] = xsets.get(xs, 0) + 1
        else:
            add("records", st.st_size, alloc)
    acc["xattr-shared"] = [len(xsets), 0, sum(
        (n + XATTR_REFCOUNT_MAX - 1) // XATTR_REFCOUNT_MAX * BLOCK
        for n in xsets.values())]
    for part in order:
        c, a, b = acc[part]
        if part in ("objects", "objects-small", "verity-extra") and not c:
            continue
        print("%s,%s,%d,%d,%d" % (name, part, c, a, b))


def data_free(path, st):
    """True if the file holds no data block (a sparse pointer): its
    blocks are then its xattr block."""
    if st.st_size == 0:
        return True
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            os.lseek(fd, 0, os.SEEK_DATA)
        except OSError:
            return True
        return False
    finally:
        os.close(fd)


def main(argv):
    if len(argv) == 3 and argv[1] == "distinct":
        distinct(argv[2])
    elif len(argv) == 4 and argv[1] == "parts":
        parts(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
