#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Seed corpora for the oci2ovl fuzz targets, from OCI image layouts.

  mkseeds.py layer|json OUTDIR ROOT...

Each ROOT is a layout (it has index.json), or a directory of layouts with
an optional cases.json (lfs_tree.py gen-corpus): our valid and hostile
images. The input formats are those of fuzz_layer.c and fuzz_json.c.

layer: every layer blob, as it is (gzip and zstd: modes 2 and 3) and, if
  its tar is at most MAX_LEN bytes, the tar uncompressed (mode 0, with its
  diff_id checked) and compressed by the target (mode 1); with chardev
  whiteouts too when the tar has whiteouts; with the limits of the case
  (cases.json "args") when it has some. Layers written by umoci (any
  layout outside a cases.json directory) are first rewritten with fixed
  times, so that the seeds, and a run from them with one -seed, are the
  same every time.
  And a few tars of our own with what those images lack (extra_tars()).
json: per image (each tag, and the first image untagged), the params line,
  index.json and every JSON blob it reaches, with digests and sizes of
  those blobs as @Dk/@Sk placeholders; and a few of our own with what
  those images lack (extra_json_seeds()).

Seeds are named by their SHA-256: identical seeds are written once.
"""
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile

MAX_LEN = 128 << 10  # the runs' -max_len for the layer target
MAX_SECTIONS = 10

# fuzz_layer.c's flags byte
M_TAR, M_TAR_GZIP, M_GZIP, M_ZSTD = 0, 1, 2, 3
F_CHARDEV, F_DIFF_ID, F_LIE = 0x04, 0x40, 0x80
LIMITS_TIGHT = 1 << 4  # preset 1: --max-entries 10 --max-bytes 1M --max-path 100

REF_NAME = "org.opencontainers.image.ref.name"


def write_seed(out, data):
    name = hashlib.sha256(data).hexdigest()
    path = os.path.join(out, name)
    if not os.path.exists(path):
        with open(path, "wb") as f:
            f.write(data)


def layouts(root):
    """(layout dir, case args, fixed) for a layout or a directory of them"""
    if os.path.exists(os.path.join(root, "index.json")):
        return [(root, [], False)]
    args = {}
    cases = os.path.join(root, "cases.json")
    if os.path.exists(cases):
        with open(cases) as f:
            for c in json.load(f)["cases"]:
                args[c.get("tag") or c.get("layout") or c["name"]] = \
                    c.get("args") or []
    found = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.exists(os.path.join(d, "index.json")):
            found.append((d, args.get(name, []), True))
    return found


def blob_path(layout, digest):
    if not re.fullmatch(r"sha256:[0-9a-f]{64}", digest or ""):
        return None
    p = os.path.join(layout, "blobs", "sha256", digest[7:])
    return p if os.path.isfile(p) else None


def read_json_blob(layout, digest):
    p = blob_path(layout, digest)
    if not p:
        return None, None
    with open(p, "rb") as f:
        raw = f.read()
    try:
        return raw, json.loads(raw)
    except ValueError:
        return raw, None


def manifests(layout):
    """every manifest reachable from index.json (nested indexes too)"""
    with open(os.path.join(layout, "index.json"), "rb") as f:
        todo = [json.loads(f.read())]
    seen = set()
    while todo:
        doc = todo.pop(0)
        if not isinstance(doc, dict):
            continue
        for d in doc.get("manifests") or []:
            if not isinstance(d, dict) or d.get("digest") in seen:
                continue
            seen.add(d.get("digest"))
            _, j = read_json_blob(layout, d.get("digest"))
            if isinstance(j, dict) and "manifests" in j:
                todo.append(j)
            elif isinstance(j, dict):
                yield j


def decompress(blob):
    if blob[:2] == b"\x1f\x8b":
        try:
            return M_GZIP, gzip.decompress(blob)
        except (OSError, EOFError):
            return M_GZIP, None
    if blob[:4] == b"\x28\xb5\x2f\xfd":
        r = subprocess.run(["zstd", "-q", "-d", "-c"], input=blob,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return M_ZSTD, r.stdout if r.returncode == 0 else None
    return M_TAR, blob


def fixed_times(tar):
    """the same tar with every time 1700000000 (umoci's layers carry the
    time they were made)"""
    src = tarfile.open(fileobj=io.BytesIO(tar), mode="r:")
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as dst:
        for m in src.getmembers():
            m.mtime = 1700000000
            for k in ("mtime", "atime", "ctime"):
                m.pax_headers.pop(k, None)
            data = src.extractfile(m) if m.isreg() else None
            dst.addfile(m, data)
    return bio.getvalue()


def ti(name, typ=tarfile.REGTYPE, data=b"", **kw):
    t = tarfile.TarInfo(name)
    t.type = typ
    t.mode = kw.pop("mode", 0o755 if typ == tarfile.DIRTYPE else 0o644)
    t.mtime = 1700000000
    t.size = len(data) if typ == tarfile.REGTYPE else 0
    for k, v in kw.items():
        setattr(t, k, v)
    return t, data


def tar_of(entries):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for t, data in entries:
            tf.addfile(t, io.BytesIO(data) if data else None)
    return bio.getvalue()


def extra_tars():
    """orders and fields our images do not have: whiteouts and opaque
    markers before, after and instead of their directories, directories
    after their children, hard links to links, atimes, long link
    targets, devices, xattrs, ids past 32 bits"""
    R, D, L, H = (tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE,
                  tarfile.LNKTYPE)
    C, B, F = tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE
    return [
        [ti(".wh.d"), ti("d/x", data=b"x")],
        [ti(".wh.d"), ti("d/", D), ti("d/y", data=b"y")],
        [ti(".wh.d"), ti("d/.wh..wh..opq")],
        [ti("x/.wh..wh..opq"), ti("x/y", data=b"y")],
        [ti("./", D, mode=0o700), ti("./.wh..wh..opq"), ti("a", data=b"a")],
        [ti("a/b/c", data=b"c"), ti("a/", D, mode=0o700, uid=1000),
         ti("a/b/", D, mode=0o750)],
        [ti("f", data=b"f"), ti("s", L, linkname="f"),
         ti("h1", H, linkname="s"), ti("h2", H, linkname="h1"),
         ti(".wh.f")],
        [ti("t", data=b"t", pax_headers={"atime": "1700000001.5",
                                         "mtime": "1700000002.25"}),
         ti("dd/", D, pax_headers={"atime": "1600000000"})],
        [ti("long", L, linkname="x/" * 2100)],
        [ti("null", C, devmajor=1, devminor=3), ti("sda", B, devmajor=8),
         ti("fifo", F), ti("big", C, devmajor=4095, devminor=1048575)],
        [ti("e", data=b"e", pax_headers={
            "SCHILY.xattr.user.empty": "",
            "SCHILY.xattr.user.x": "value",
            "SCHILY.xattr.trusted.overlay.opaque": "y",
            "SCHILY.xattr.security.capability": "\x01\x00\x00\x02"})],
        [ti("ids", data=b"i", pax_headers={"uid": "4294967296",
                                           "gid": "4294967295"}),
         ti("neg", data=b"n", uid=0o7777777, gid=0o7777777)],
    ]


def limits_flags(args):
    return LIMITS_TIGHT if any(a.startswith("--max-") for a in args) else 0


def layer_seeds(out, root):
    n = 0
    for layout, args, fixed in layouts(root):
        lim = limits_flags(args)
        for m in manifests(layout):
            for d in m.get("layers") or []:
                p = blob_path(layout, d.get("digest") if isinstance(d, dict)
                              else None)
                if not p:
                    continue
                with open(p, "rb") as f:
                    blob = f.read()
                mode, tar = decompress(blob)
                if tar is not None and not fixed:
                    try:
                        tar = fixed_times(tar)
                    except tarfile.TarError:
                        pass
                    if mode == M_GZIP:
                        blob = gzip.compress(tar, mtime=0)
                if mode != M_TAR and len(blob) <= MAX_LEN:
                    # as it is; with a diff_id (of the blob: a mismatch);
                    # under the other compression's media type
                    for f in (0, F_DIFF_ID, F_LIE):
                        write_seed(out, bytes([mode | lim | f]) + blob)
                    n += 3
                if tar is None or len(tar) > MAX_LEN:
                    continue
                fmts = [0, F_CHARDEV] if b".wh." in tar else [0]
                for fmt in fmts:
                    write_seed(out, bytes([M_TAR | fmt | lim | F_DIFF_ID]) + tar)
                    write_seed(out, bytes([M_TAR_GZIP | fmt | lim]) + tar)
                    n += 2
    return n


def extra_layer_seeds(out):
    n = 0
    for entries in extra_tars():
        tar = tar_of(entries)
        for fmt in (0, F_CHARDEV):
            write_seed(out, bytes([M_TAR | fmt | F_DIFF_ID]) + tar)
            write_seed(out, bytes([M_TAR_GZIP | fmt]) + tar)
            n += 2
    return n


def json_obj_no_dups(raw):
    def hook(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)
    try:
        return json.loads(raw, object_pairs_hook=hook)
    except ValueError:
        return None


def placeholders(raw, refs):
    """@Dk/@Sk in place of the digests (and sizes) of the blobs in refs"""
    obj = json_obj_no_dups(raw)
    if obj is None:
        text = raw.decode("utf-8", "surrogateescape")
        for digest, k in refs.items():
            text = text.replace(digest, "@D%d" % k)
        return text.encode("utf-8", "surrogateescape")

    def walk(x):
        if isinstance(x, dict):
            k = refs.get(x.get("digest")) if isinstance(x.get("digest"),
                                                        str) else None
            if k:
                x["digest"] = "@D%d" % k
                if "size" in x:
                    x["size"] = "@@S%d@@" % k
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
    walk(obj)
    text = json.dumps(obj)
    return re.sub(r'"@@S(\d)@@"', r"@S\1", text).encode()


def json_image_seed(layout, params, fixed):
    """sections: params, index.json, then the JSON blobs breadth first"""
    with open(os.path.join(layout, "index.json"), "rb") as f:
        index = f.read()
    raws = [index]
    nums = {}
    todo = [index]
    while todo:
        raw = todo.pop(0)
        obj = json_obj_no_dups(raw)
        if obj is None:
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
        descs = []
        if isinstance(obj, dict):
            descs += [d for d in obj.get("manifests") or []
                      if isinstance(d, dict)]
            if isinstance(obj.get("config"), dict):
                descs.append(obj["config"])
        for d in descs:
            digest = d.get("digest")
            if digest in nums or len(raws) >= MAX_SECTIONS - 1:
                continue
            b, _ = read_json_blob(layout, digest)
            if b is None:
                continue
            nums[digest] = len(raws) + 1  # section number: params is 0
            raws.append(b)
            todo.append(b)
    sections = [params.encode()] + [placeholders(r, nums) for r in raws]
    if not fixed:
        sections = fixed_digests(sections)
    return b"\n--\n".join(sections)


def fixed_digests(sections):
    """umoci's images: the layer digests and sizes, diff_ids and times
    they carry change from one build to the next; make them the same
    every time"""
    names = {}

    def digest(m):
        d = m.group(0)
        if d not in names:
            names[d] = b"sha256:" + hashlib.sha256(
                b"layer %d" % len(names)).hexdigest().encode()
        return names[d]
    out = []
    for s in sections:
        s = re.sub(rb'("digest": "sha256:[0-9a-f]{64}", "size": )[0-9]+',
                   rb"\g<1>1000", s)
        s = re.sub(rb"sha256:[0-9a-f]{64}", digest, s)
        s = re.sub(rb'("created"\s*:\s*)"[^"]*"', rb'\1"2023-11-14T22:13:20Z"', s)
        out.append(s)
    return out


def json_seeds(out, root):
    n = 0
    for layout, _, fixed in layouts(root):
        with open(os.path.join(layout, "index.json")) as f:
            index = json.load(f)
        tags = []
        for d in index.get("manifests") or []:
            t = ((d.get("annotations") or {}).get(REF_NAME)
                 if isinstance(d, dict) else None)
            if isinstance(t, str) and t not in tags:
                tags.append(t)
        params = [t + " linux/amd64" for t in tags] + ["- linux/amd64"]
        if any("arm64" in json.dumps(m) for m in manifests(layout)):
            params += [t + " linux/arm64" for t in tags]
        for p in params:
            write_seed(out, json_image_seed(layout, p, fixed))
            n += 1
    return n


def extra_json_seeds(out):
    """what our images lack: an index that is no object, indexes nested
    past LFS_MAX_INDEX_DEPTH, a negative size, docker media types"""
    mt_index = "application/vnd.oci.image.index.v1+json"
    mt_manifest = "application/vnd.oci.image.manifest.v1+json"
    layer = {"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
             "digest": "sha256:" + "1" * 64, "size": 32}
    config = json.dumps({"architecture": "amd64", "os": "linux",
                         "rootfs": {"type": "layers",
                                    "diff_ids": ["sha256:" + "2" * 64]}})

    def desc(mt, k, **kw):
        d = {"mediaType": mt, "digest": "@D%d" % k, "size": "@@S%d@@" % k}
        d.update(kw)
        return d

    def seed(docs):
        text = b"\n--\n".join(
            re.sub(r'"@@S(\d)@@"', r"@S\1", d).encode() for d in docs)
        write_seed(out, text)

    def manifest(k, mt=mt_manifest, layer_mt=None, size=None):
        lay = dict(layer)
        if layer_mt:
            lay["mediaType"] = layer_mt
        if size is not None:
            lay["size"] = size
        return json.dumps({"schemaVersion": 2, "mediaType": mt,
                           "config": desc("application/vnd.oci.image."
                                          "config.v1+json", k),
                           "layers": [lay]})

    tagged = {"annotations": {REF_NAME: "t"}}
    seed(["t linux/amd64", "[]"])
    # index -> 6 nested indexes -> manifest -> config
    docs = ["- linux/amd64",
            json.dumps({"schemaVersion": 2,
                        "manifests": [desc(mt_index, 2)]})]
    for k in range(2, 8):
        docs.append(json.dumps({"schemaVersion": 2, "mediaType": mt_index,
                                "manifests": [desc(mt_index if k < 7 else
                                                   mt_manifest, k + 1)]}))
    docs += [manifest(9), config]
    seed(docs[:9] + [docs[9]])
    seed(["t linux/amd64",
          json.dumps({"schemaVersion": 2,
                      "manifests": [desc(mt_manifest, 2, **tagged)]}),
          manifest(3, size=-1), config])
    docker = "application/vnd.docker.distribution.manifest.v2+json"
    seed(["t linux/amd64",
          json.dumps({"schemaVersion": 2, "mediaType": "application/vnd."
                      "docker.distribution.manifest.list.v2+json",
                      "manifests": [desc(docker, 2, **tagged)]}),
          manifest(3, mt=docker, layer_mt="application/vnd.docker.image."
                   "rootfs.diff.tar.gzip"), config])
    return 4


def main(argv):
    if len(argv) < 4 or argv[1] not in ("layer", "json"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out = argv[2]
    os.makedirs(out, exist_ok=True)
    make = layer_seeds if argv[1] == "layer" else json_seeds
    n = sum(make(out, root) for root in argv[3:])
    n += (extra_layer_seeds if argv[1] == "layer" else extra_json_seeds)(out)
    print("%s: %d seeds, %d distinct, in %s" % (argv[1], n,
                                                len(os.listdir(out)), out))
    return 0 if n else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
