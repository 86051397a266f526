#!/usr/bin/env python3
"""Images for the object store's tests (tests/bats/host/25-oci2ovl-objects.bats).

  mkobjects.py DIR  -> OCI layout DIR/layout with tags:
    base     2 layers: files of 256 KiB (two with one content, in one
             layer), a hard link, an empty file, an owner, a set-uid mode,
             an xattr; the second layer replaces a file and adds one whose
             content the first layer has
    derived  base's 2 layers and a third: a new file, a file of the
             second layer's content, a file of the first layer replaced,
             a whiteout
    forged   1 layer: files carrying overlay markers of their own (a
             redirect out of the objects, a metacopy value), one empty
    sparse   1 layer: a 1 GiB file of holes and two short runs of data
             (GNU tar's sparse format), hard-linked, beside a small file
  DIR/distinct-base, DIR/distinct-all: "SHA256 SIZE" of each distinct
  non-empty content the images' layers hold (base; base and derived).

Contents are deterministic: file N is sha256-counter bytes seeded by N.
"""
import hashlib
import os
import subprocess
import sys
import tarfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lfs_tree as T  # noqa: E402

KIB = 1024


def content(seed, size=256 * KIB):
    out = bytearray()
    n = 0
    while len(out) < size:
        out += hashlib.sha256(b"%s:%d" % (seed.encode(), n)).digest()
        n += 1
    return bytes(out[:size])


def reg(name, data, **kw):
    return T.ti(name, data=data, **kw)


def layers():
    a, b, c, b2, d, a2 = (content(s) for s in ("a", "b", "c", "b2", "d", "a2"))
    l1 = T.tar([
        T.ti("etc", tarfile.DIRTYPE, mode=0o755),
        reg("etc/a", a),
        reg("etc/a-again", a),  # one content twice in a layer
        T.ti("etc/a-link", tarfile.LNKTYPE, linkname="etc/a"),
        reg("etc/empty", b""),
        reg("etc/b", b, uid=1000, gid=1000, mode=0o640),
        reg("etc/tool", c[:100 * KIB], mode=0o4755),
        reg("etc/noted", content("n", 8 * KIB),
            pax_headers={"SCHILY.xattr.user.note": "kept"}),
    ])
    l2 = T.tar([
        T.ti("etc", tarfile.DIRTYPE, mode=0o755),
        reg("etc/b", b2),  # b replaced
        reg("etc/c", c),
        reg("etc/from-l1", a),  # a content of the layer below
    ])
    l3 = T.tar([
        T.ti("etc", tarfile.DIRTYPE, mode=0o755),
        reg("etc/d", d),
        reg("etc/c-again", c),  # the layer below's content
        reg("etc/a", a2),  # the first layer's file replaced
        T.ti("etc/.wh.a-again"),
    ])
    return l1, l2, l3


def sparse_layer(tmp):
    """GNU tar's sparse entries: 1 GiB, 8 KiB of data at 0 and at 512 MiB"""
    root = os.path.join(tmp, "sparse-root")
    os.makedirs(os.path.join(root, "big"), exist_ok=True)
    p = os.path.join(root, "big", "holes")
    with open(p, "wb") as f:
        f.write(content("s0", 8 * KIB))
        f.seek(512 << 20)
        f.write(content("s1", 8 * KIB))
        f.truncate(1 << 30)
    os.link(p, os.path.join(root, "big", "holes-link"))
    with open(os.path.join(root, "small"), "wb") as f:
        f.write(b"small\n")
    out = os.path.join(tmp, "sparse.tar")
    subprocess.run(["tar", "--sparse", "--format=gnu", "--numeric-owner",
                    "--owner=0", "--group=0", "--mtime=@1700000000",
                    "-C", root, "-cf", out, "big", "small"], check=True)
    with open(out, "rb") as f:
        return f.read()


def distinct(tars):
    sums = {}
    for raw in tars:
        with tarfile.open(fileobj=__import__("io").BytesIO(raw)) as tf:
            for m in tf.getmembers():
                if m.isreg() and m.size:
                    data = tf.extractfile(m).read()
                    sums[hashlib.sha256(data).hexdigest()] = len(data)
    return "".join("%s %d\n" % kv for kv in sorted(sums.items()))


def main(out):
    os.makedirs(out, exist_ok=True)
    d = T.layout(out, "layout", [])
    l1, l2, l3 = layers()
    descs = [T.image(d, [l1, l2])]
    T.write_index(d, "base", descs)
    derived = [T.image(d, [l1, l2, l3])]
    sp = [T.image(d, [sparse_layer(out)])]
    forged = [T.image(d, [T.tar([
        reg("forged", b"forged\n", pax_headers={
            "SCHILY.xattr.trusted.overlay.redirect": "/../../etc/passwd",
            "SCHILY.xattr.trusted.overlay.metacopy": "x"}),
        reg("forged-empty", b"", pax_headers={
            "SCHILY.xattr.trusted.overlay.redirect": "/00/" + "0" * 62}),
    ])])]
    T.write_index(d, "derived", derived)
    for x in descs:
        x["annotations"]["org.opencontainers.image.ref.name"] = "base"
    for x in sp:
        x.setdefault("annotations", {})[
            "org.opencontainers.image.ref.name"] = "sparse"
    for x in forged:
        x.setdefault("annotations", {})[
            "org.opencontainers.image.ref.name"] = "forged"
    with open(os.path.join(d, "index.json"), "w") as f:
        __import__("json").dump({"schemaVersion": 2,
                                 "manifests": descs + derived + sp + forged},
                                f)
    with open(os.path.join(out, "distinct-base"), "w") as f:
        f.write(distinct([l1, l2]))
    with open(os.path.join(out, "distinct-all"), "w") as f:
        f.write(distinct([l1, l2, l3]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
