#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Crafted layer cases for oci2ovl (tar and gzip entry handling, owner ids,
limits), added to lfs_tree.py gen-corpus by cases(OUTDIR); and a generator
of one large hostile layer for tests/bats/host/22-oci2ovl-layers.bats.

  corpus_layers.py deep OUTDIR ENTRIES DEPTH NAMELEN
      an OCI layout OUTDIR/deep, tag "deep": one gzip layer of ENTRIES
      files, each DEPTH directories deep, every directory named NAMELEN
      "d"s ("dd/dd/.../dd/fNNNNNNN" for 2), no directory entries; each
      entry's name has DEPTH * (NAMELEN + 1) + 8 bytes
"""
import base64
import gzip
import hashlib
import io
import sys
import tarfile
import zlib

import lfs_tree as T

EMPTY = "sha256:" + hashlib.sha256(b"").hexdigest()
R, D, L, H = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE


def diff(raw):
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def build(out, name, layers):
    """an image of @layers, bottom first: (blob, media type, diff_id)"""
    d = T.layout(out, name, None)
    descs = []
    for data, mt, _ in layers:
        dg, n = T.blob(d, data)
        descs.append({"mediaType": mt, "digest": dg, "size": n})
    config = {"architecture": "amd64", "os": "linux",
              "rootfs": {"type": "layers",
                         "diff_ids": [x[2] for x in layers]}}
    cd, cn = T.jblob(d, config)
    manifest = {"schemaVersion": 2,
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "config": {"mediaType":
                           "application/vnd.oci.image.config.v1+json",
                           "digest": cd, "size": cn},
                "layers": descs}
    md, mn = T.jblob(d, manifest)
    T.write_index(d, name, [{"mediaType": manifest["mediaType"],
                             "digest": md, "size": mn}])


def gz(raw, mt=T.MT_LAYER["gzip"]):
    """a gzip layer of the tar @raw"""
    return (gzip.compress(raw, mtime=0), mt, diff(raw))


def block(name, typ, size=0, **kw):
    """one raw ustar header block"""
    t = tarfile.TarInfo(name)
    t.type = typ
    t.mode = 0o755
    t.mtime = 1700000000
    for k, v in kw.items():
        setattr(t, k, v)
    t.size = size
    return t.tobuf(tarfile.USTAR_FORMAT)


def pad(data):
    return data + b"\0" * (-len(data) % 512)


def pax_block(records):
    """a pax 'x' header with @records (bytes, already "LEN k=v\\n")"""
    return block("././@PaxHeader", tarfile.XHDTYPE, len(records)) + \
        pad(records)


def hidden():
    """a tar entry as raw blocks: what a header-only entry's data hides"""
    return block("hidden", R, 7, mode=0o644) + pad(b"hidden\n")


END = b"\0" * 1024


def cases(out):
    """the cases, written under @out; returns their cases.json records"""
    cases = []
    base_raw = T.tar([T.ti("etc/", D, mode=0o755),
                      T.ti("etc/passwd", data=b"root:x:0:0\n")])
    base = gz(base_raw)
    passwd = {"path": "/etc/passwd", "type": "reg", "size": 11}

    def case(name, layers, expect, rule=None, args=(), contain=(),
             absent=()):
        build(out, name, layers)
        cases.append({"name": name, "expect": expect, "rule": rule,
                      "args": list(args), "must_contain": list(contain),
                      "must_not_contain": list(absent)})

    # 1. the empty layer: a zero-length blob is the empty tar stream,
    # whatever its media type (containerd); its diff_id is sha256("")
    for comp in ("gzip", "none", "zstd"):
        case("empty-blob-" + comp, [base, (b"", T.MT_LAYER[comp], EMPTY)],
             "accept", contain=[passwd])
    case("empty-blob-wrong-diff-id",
         [base, (b"", T.MT_LAYER["gzip"], diff(END))], "reject",
         "diff_id " + EMPTY + " differs from the config's")
    case("gzip-of-nothing", [base, gz(b"")], "accept", contain=[passwd])
    case("gzip-of-empty-tar", [base, gz(END)], "accept", contain=[passwd])
    case("zstd-of-nothing",
         [base, (T.compress(b"", "zstd"), T.MT_LAYER["zstd"], EMPTY)],
         "accept", contain=[passwd])

    # 2. pax xattr records: an empty value deletes the keyword
    def xfile(pax):
        return gz(T.tar([T.ti("f", data=b"x", pax_headers=pax)]))

    b64 = base64.b64encode
    case("pax-xattr-empty-schily",
         [xfile({"SCHILY.xattr.user.gone": "",
                 "SCHILY.xattr.user.kept": "v"})], "accept",
         contain=[{"path": "/f", "type": "reg",
                   "xattrs": {"user.kept": "v"}}])
    case("pax-xattr-empty-libarchive",
         [xfile({"LIBARCHIVE.xattr.user.gone": "",
                 "LIBARCHIVE.xattr.user.kept": b64(b"v").decode()})],
         "accept", contain=[{"path": "/f", "type": "reg",
                             "xattrs": {"user.kept": "v"}}])
    case("pax-xattr-both-keywords-agree",
         [xfile({"SCHILY.xattr.user.a": "v",
                 "LIBARCHIVE.xattr.user.a": b64(b"v").decode()})],
         "accept", contain=[{"path": "/f", "type": "reg",
                             "xattrs": {"user.a": "v"}}])
    case("pax-xattr-both-keywords-disagree",
         [xfile({"SCHILY.xattr.user.a": "v",
                 "LIBARCHIVE.xattr.user.a": b64(b"w").decode()})],
         "reject", "xattr user.a given twice, with different values")
    case("pax-xattr-empty-and-set",
         [xfile({"SCHILY.xattr.user.a": "",
                 "LIBARCHIVE.xattr.user.a": b64(b"w").decode()})],
         "reject", "xattr user.a given twice, with different values")

    # 3. bytes after the gzip stream, after the tar end, after a
    # header-only entry
    gzb = base[0]
    case("gzip-trailing-garbage",
         [(gzb + b"garbage after the stream", base[1], base[2])], "reject",
         "bad compressed stream: data after the end of the gzip stream")
    case("gzip-trailing-zeros", [(gzb + b"\0" * 512, base[1], base[2])],
         "reject",
         "bad compressed stream: data after the end of the gzip stream")
    case("gzip-truncated-second-member",
         [(gzb + gzip.compress(b"more", mtime=0)[:12], base[1], base[2])],
         "reject", "bad compressed stream")
    bad = bytearray(gzb)
    bad[-8] ^= 0xff
    case("gzip-bad-crc", [(bytes(bad), base[1], base[2])], "reject",
         "bad compressed stream: incorrect data check")
    zst = T.compress(base_raw, "zstd")
    case("zstd-trailing-garbage",
         [(zst + b"garbage after the frame", T.MT_LAYER["zstd"], base[2])],
         "reject", "bad compressed stream: Zstd decompression failed")
    case("zstd-concatenated-frames",
         [(T.compress(base_raw[:1024], "zstd") +
           T.compress(base_raw[1024:], "zstd"), T.MT_LAYER["zstd"],
           base[2])], "accept", contain=[passwd])
    case("gzip-concatenated-members",
         [(gzip.compress(base_raw[:1024], mtime=0) +
           gzip.compress(base_raw[1024:], mtime=0), base[1], base[2])],
         "accept", contain=[passwd])
    case("tar-zero-padding-after-end", [gz(base_raw + b"\0" * 20480)],
         "accept", contain=[passwd])
    case("tar-second-archive-after-end",
         [gz(base_raw + T.tar([T.ti("smuggled", data=b"x")]))], "reject",
         "data after the tar end-of-archive marker")
    # raw headers: etc/ and etc/passwd, then the hostile entry
    pre = (block("etc/", D) + block("etc/passwd", R, 11, mode=0o644) +
           pad(b"root:x:0:0\n"))
    for nm, typ, kw, what in (
            ("dir", D, {}, "directory"),
            ("symlink", L, {"linkname": "etc/passwd"}, "symlink"),
            ("hardlink", H, {"linkname": "etc/passwd"}, "hard link"),
            ("chardev", tarfile.CHRTYPE, {"devmajor": 1, "devminor": 3},
             "character device"),
            ("fifo", tarfile.FIFOTYPE, {}, "fifo")):
        raw = pre + block("h" + nm, typ, 1024, **kw) + hidden() + END
        case("header-only-%s-with-data" % nm, [gz(raw)], "reject",
             "%s entry declares 1024 bytes of data, and its type has none"
             % what)
    raw = pre + block("hdir", D, 1024) + b"\xa5" * 1024 + END
    case("header-only-dir-with-garbage", [gz(raw)], "reject",
         "directory entry declares 1024 bytes of data")
    # a pax hard link with data: libarchive skips the data, Go reads it
    # as the next header
    raw = (pre + pax_block(b"15 comment=pax\n") +
           block("hlink", H, 1024, linkname="etc/passwd") + hidden() + END)
    case("pax-hardlink-with-data", [gz(raw)], "reject",
         "hard link entry declares 1024 bytes of data")
    # "size=" keeps the header's size for Go, is 0 for libarchive
    raw = (pre + pax_block(b"8 size=\n") + block("f", R, 1024, mode=0o644) +
           hidden() + END)
    case("pax-empty-size-record", [gz(raw)], "reject",
         "tar headers do not line up with the data sizes they declare")
    raw = pre + block("dump", b"D", 0) + END
    case("tar-unknown-entry-type", [gz(raw)], "reject",
         "unsupported tar entry type 'D'")

    # 4. owner ids: 2^32 - 1 is chown()'s "unchanged", 2^32 truncates
    for key, ident in (("uid", 4294967295), ("uid", 4294967296),
                       ("gid", 4294967295), ("gid", 4294967296)):
        raw = T.tar([T.ti("suid", data=b"#!/bin/sh\n", mode=0o6755,
                          **{key: ident})])
        case("setuid-%s-%d" % (key, ident), [base, gz(raw)], "reject",
             "%s %d is out of range (0 to 4294967294)" % (key, ident))
    raw = T.tar([T.ti("suid", data=b"#!/bin/sh\n", mode=0o4755, uid=-1)])
    case("setuid-uid-negative", [base, gz(raw)], "reject",
         "uid -1 is out of range")
    raw = T.tar([T.ti("suid", data=b"#!/bin/sh\n", mode=0o4755,
                      uid=4294967294, gid=4294967294)])
    case("setuid-uid-largest", [base, gz(raw)], "accept",
         contain=[{"path": "/suid", "type": "reg", "mode": "4755",
                   "uid": 4294967294, "gid": 4294967294}])

    # 5. totals of a layer and of the image
    def files(prefix, n, size=1):
        return gz(T.tar([T.ti("%s%d" % (prefix, i), data=b"x" * size)
                         for i in range(n)]))

    case("image-entries-at-limit", [files("a", 4), files("b", 4),
                                    files("c", 4)],
         "accept", args=["--max-entries", "12"],
         contain=[{"path": "/c3", "type": "reg"}])
    case("image-entries-over-limit", [files("a", 4), files("b", 4),
                                      files("c", 5)],
         "reject", "more than 12 entries in the image (--max-entries)",
         args=["--max-entries", "12"])
    case("implied-parents-count-as-entries",
         [gz(T.tar([T.ti("a/b/c/d/e/f", data=b"x")]))], "reject",
         "more than 4 paths, with the parents they imply (--max-entries)",
         args=["--max-entries", "4"])
    case("layer-names-over-limit", [files("n" * 90, 12)], "reject",
         "more than 1024 bytes of entry names (--max-names)",
         args=["--max-names", "1K"])
    case("image-names-over-limit", [files("n" * 90, 6), files("m" * 90, 6)],
         "reject",
         "more than 1024 bytes of entry names in the image (--max-names)",
         args=["--max-names", "1K"])
    case("layer-xattrs-over-limit",
         [gz(T.tar([T.ti("x%d" % i, data=b"x", pax_headers={
             "SCHILY.xattr.user.k": "v" * 30}) for i in range(4)]))],
         "reject", "more than 100 bytes of xattrs (--max-xattrs)",
         args=["--max-xattrs", "100"])
    case("image-bytes-over-limit",
         [files("a", 1, 600000), files("b", 1, 600000)], "reject",
         "image expands beyond 1048576 bytes (--max-bytes)",
         args=["--max-bytes", "1M"])
    return cases


def deep(out, entries, depth, namelen):
    """the large hostile layer: @entries files @depth directories deep"""
    z = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    h = hashlib.sha256()
    blob = io.BytesIO()
    prefix = ("d" * namelen + "/") * depth
    # a pax header block of a constant size, then its records, then the
    # ustar header, whose name is the last component
    body = len(" path=%sf%07d\n" % (prefix, 0))
    rec_len = next(body + k for k in range(1, 8)
                   if len(str(body + k)) == k)
    xhdr = block("././@PaxHeader", tarfile.XHDTYPE, rec_len)
    for i in range(entries):
        rec = ("%d path=%sf%07d\n" % (rec_len, prefix, i)).encode()
        data = (xhdr + pad(rec) +
                block("f%07d" % i, R, 0, mode=0o644))
        h.update(data)
        blob.write(z.compress(data))
    h.update(END)
    blob.write(z.compress(END))
    blob.write(z.flush())
    build(out, "deep", [(blob.getvalue(), T.MT_LAYER["gzip"],
                         "sha256:" + h.hexdigest())])


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "deep":
        deep(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
             int(sys.argv[5]))
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
