#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Test helper for oci2ovl: tree dumps, a reference layer flattener, the
hostile-corpus checker and a generator of crafted OCI images.

  lfs_tree.py dump DIR                    listing of a real tree
  lfs_tree.py flatten LAYER...            listing of layers (top first)
                                          merged as overlay would
  lfs_tree.py check-case CASES NAME LAYER...
                                          check a case's must_(not_)contain
                                          against the flattened layers
  lfs_tree.py overlay-xattrs LAYER...     trusted/user.overlay.* xattrs in
                                          layer dirs that are not markers
                                          oci2ovl writes
  lfs_tree.py gen-corpus OUTDIR           crafted images + OUTDIR/cases.json
  lfs_tree.py sentinel CASES DIR          (re)create the sentinel files

A listing has one line per path (the root excluded), tab-separated:
path type mode uid gid size sha256 link rdev xattrs hardlink-group.
The hard-link group is the smallest path sharing the inode, or "-".
"""
import contextlib
import gzip
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import tarfile

WH_TARGET = "(overlay-whiteout)"
X_WHITEOUT = "trusted.overlay.whiteout"
X_OPAQUE = "trusted.overlay.opaque"
HIDDEN_XATTRS = ("trusted.overlay.", "user.overlay.")


def ftype(st):
    m = st.st_mode
    for test, name in ((stat.S_ISREG, "reg"), (stat.S_ISDIR, "dir"),
                       (stat.S_ISLNK, "symlink"), (stat.S_ISCHR, "char"),
                       (stat.S_ISBLK, "block"), (stat.S_ISFIFO, "fifo"),
                       (stat.S_ISSOCK, "sock")):
        if test(m):
            return name
    return "?"


def getx(path, name):
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None


def xattrs(path, hide=HIDDEN_XATTRS):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return {}
    out = {}
    for n in sorted(names):
        if n.startswith(hide):
            continue
        v = getx(path, n)
        out[n] = v.decode("utf-8", "backslashreplace") if v is not None else ""
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def entry(rel, path, st, ident):
    """one listing record: dict"""
    t = ftype(st)
    e = {"path": rel, "type": t, "mode": "%04o" % stat.S_IMODE(st.st_mode),
         "uid": st.st_uid, "gid": st.st_gid, "size": "-", "sha256": "-",
         "linkname": "-", "rdev": "-", "xattrs": xattrs(path),
         "mtime": st.st_mtime_ns // 10**9,
         "ident": ident if (t != "dir" and st.st_nlink > 1) else None}
    if t == "reg":
        e["size"] = st.st_size
        e["sha256"] = sha256(path)
    elif t == "symlink":
        e["linkname"] = os.readlink(path)
    elif t in ("char", "block"):
        e["rdev"] = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
        e["devmajor"] = os.major(st.st_rdev)
        e["devminor"] = os.minor(st.st_rdev)
    return e


def finish(records):
    groups = {}
    for e in records:
        if e["ident"] is not None:
            groups.setdefault(e["ident"], []).append(e["path"])
    for e in records:
        g = groups.get(e["ident"], [])
        e["hardlink"] = min(g) if len(g) > 1 else "-"
    return sorted(records, key=lambda e: e["path"])


def fmt(records):
    lines = []
    for e in records:
        xs = ",".join("%s=%s" % kv for kv in e["xattrs"].items()) or "-"
        lines.append("\t".join(str(e[k]) for k in (
            "path", "type", "mode", "uid", "gid", "size", "sha256",
            "linkname", "rdev")) + "\t" + xs + "\t" + e["hardlink"])
    return "\n".join(lines) + ("\n" if lines else "")


def dump(root):
    out = []

    def walk(d, rel):
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            st = os.lstat(p)
            r = rel + "/" + name
            out.append(entry(r, p, st, (st.st_dev, st.st_ino)))
            if stat.S_ISDIR(st.st_mode):
                walk(p, r)
    walk(root, "")
    return finish(out)


def is_whiteout(p, st):
    if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:
        return True
    return (stat.S_ISLNK(st.st_mode) and os.readlink(p) == WH_TARGET and
            getx(p, X_WHITEOUT) == b"y")


def is_opaque(p):
    return getx(p, X_OPAQUE) == b"y"


def flatten(layers):
    """merge layer dirs (top first) with overlay's lookup rules"""
    out = []

    def merge(stack, rel):
        names = set()
        for _, d in stack:
            names.update(os.listdir(d))
        for name in sorted(names):
            contrib = []
            for li, d in stack:
                p = os.path.join(d, name)
                try:
                    st = os.lstat(p)
                except FileNotFoundError:
                    continue
                if is_whiteout(p, st):
                    break
                if stat.S_ISDIR(st.st_mode):
                    contrib.append((li, p, st))
                    if is_opaque(p):
                        break
                else:
                    if not contrib:
                        contrib.append((li, p, st))
                    break
            if not contrib:
                continue
            li, p, st = contrib[0]
            r = rel + "/" + name
            out.append(entry(r, p, st, (li, st.st_ino)))
            if stat.S_ISDIR(st.st_mode):
                merge([(c[0], c[1]) for c in contrib], r)

    stack = []
    for i, d in enumerate(layers):
        stack.append((i, d))
        if is_opaque(d):
            break
    merge(stack, "")
    return finish(out)


def unescape(p):
    return p.encode("latin-1").decode("unicode_escape").encode(
        "latin-1").decode("utf-8", "surrogateescape")


def check_case(cases_file, name, layers):
    cases = json.load(open(cases_file))
    case = next(c for c in cases["cases"] if c["name"] == name)
    recs = {e["path"]: e for e in flatten(layers)}
    ignore = tuple(case.get("ignore_xattr_prefixes") or ())
    bad = []
    for want in case.get("must_contain", []):
        path = unescape(want["path"])
        got = recs.get(path)
        if got is None:
            bad.append("%s: missing" % path)
            continue
        for k, v in want.items():
            if k == "path" or (k == "sha256" and v is None):
                continue
            if k == "xattrs":
                gx = {a: b for a, b in got["xattrs"].items()
                      if not a.startswith(ignore)}
                wx = {a: b for a, b in v.items() if not a.startswith(ignore)}
                if gx != wx:
                    bad.append("%s: xattrs %r, want %r" % (path, gx, wx))
                continue
            if str(got.get(k)) != str(v):
                bad.append("%s: %s is %r, want %r" % (path, k, got.get(k), v))
    for path in case.get("must_not_contain", []):
        if unescape(path) in recs:
            bad.append("%s: present, must not be" % path)
    for b in bad:
        print(name + ": " + b)
    return 1 if bad else 0


def overlay_xattrs(layers):
    """overlay xattrs that are not the markers oci2ovl itself writes"""
    found = 0
    for layer in layers:
        for d, dirs, files in os.walk(layer):
            for name in [""] + dirs + files:
                p = os.path.join(d, name) if name else d
                st = os.lstat(p)
                for x in os.listxattr(p, follow_symlinks=False):
                    if not x.startswith(HIDDEN_XATTRS):
                        continue
                    if x == X_OPAQUE and stat.S_ISDIR(st.st_mode):
                        continue
                    if x == X_WHITEOUT and is_whiteout(p, st):
                        continue
                    print("%s: %s" % (p, x))
                    found += 1
    return 1 if found else 0


def check_accepted(cases_file, name, layers):
    """check-case, then overlay-xattrs, in one process (run-corpus.sh
    runs it for every accepted case): what went wrong, the last check's
    first, as the runner's message"""
    why = ""
    for prefix, check, args in (
            ("content: ", check_case, (cases_file, name, layers)),
            ("overlay xattr kept: ", overlay_xattrs, (layers,))):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = check(*args)
        if rc:
            why = prefix + buf.getvalue().rstrip("\n")
    if why:
        print(why)
    return 1 if why else 0


def make_sentinel(cases_file, d):
    cases = json.load(open(cases_file))
    for rel, f in cases["sentinel_files"].items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as fh:
            fh.write(f["content"])
        os.chmod(p, int(f["mode"], 8))


# ---- crafted images ------------------------------------------------------

MT_LAYER = {"gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
            "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
            "none": "application/vnd.oci.image.layer.v1.tar"}
DOCKER_LAYER = "application/vnd.docker.image.rootfs.diff.tar.gzip"
SENT = "/tmp/oci-hostile-sentinel"


def ti(name, typ=tarfile.REGTYPE, data=b"", mode=0o644, **kw):
    t = tarfile.TarInfo(name)
    t.type = typ
    t.mode = mode
    t.mtime = 1700000000
    t.size = len(data) if typ in (tarfile.REGTYPE, tarfile.AREGTYPE) else 0
    for k, v in kw.items():
        setattr(t, k, v)
    return t, data


def tar(entries, fmt=tarfile.PAX_FORMAT, raw_tail=None):
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=fmt) as tf:
        for t, data in entries:
            tf.addfile(t, io.BytesIO(data) if data else None)
    b = bio.getvalue()
    if raw_tail is not None:
        b = raw_tail
    return b


def compress(data, comp):
    if comp == "gzip":
        return gzip.compress(data, mtime=0)
    if comp == "zstd":
        return subprocess.run(["zstd", "-q", "-c"], input=data,
                              stdout=subprocess.PIPE, check=True).stdout
    return data


def blob(layout, data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    p = os.path.join(layout, "blobs", "sha256", d[7:])
    with open(p, "wb") as f:
        f.write(data)
    return d, len(data)


def jblob(layout, obj):
    return blob(layout, json.dumps(obj, sort_keys=True).encode())


def image(layout, layers, comp="gzip", platform=("linux", "amd64"),
          tweak=None, docker=False):
    """write one image; return its manifest descriptor"""
    descs, diffs = [], []
    for raw in layers:
        c = comp
        if isinstance(raw, tuple):
            raw, c = raw
        blob_data = compress(raw, c)
        d, n = blob(layout, blob_data)
        descs.append({"mediaType": DOCKER_LAYER if docker else MT_LAYER[c],
                      "digest": d, "size": n})
        diffs.append("sha256:" + hashlib.sha256(raw).hexdigest())
    config = {"architecture": platform[1], "os": platform[0],
              "config": {"Cmd": ["/bin/sh"], "Env": ["PATH=/bin"]},
              "rootfs": {"type": "layers", "diff_ids": diffs}}
    manifest = {"schemaVersion": 2, "layers": descs,
                "mediaType": "application/vnd.docker.distribution.manifest.v2+json" if docker else "application/vnd.oci.image.manifest.v1+json"}
    if tweak:
        tweak(layout, config, manifest)
    cd, cn = jblob(layout, config)
    manifest["config"] = {"mediaType": "application/vnd.docker.container.image.v1+json" if docker else "application/vnd.oci.image.config.v1+json",
                          "digest": cd, "size": cn}
    raw_manifest = json.dumps(manifest).encode()
    if tweak and hasattr(tweak, "raw_manifest"):
        raw_manifest = tweak.raw_manifest(raw_manifest)
    md, mn = blob(layout, raw_manifest)
    return {"mediaType": manifest["mediaType"], "digest": md, "size": mn,
            "platform": {"os": platform[0], "architecture": platform[1]}}


def layout(root, name, descs):
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "blobs", "sha256"), exist_ok=True)
    with open(os.path.join(d, "oci-layout"), "w") as f:
        json.dump({"imageLayoutVersion": "1.0.0"}, f)
    return d


def write_index(d, tag, descs):
    for x in descs:
        x.setdefault("annotations", {})[
            "org.opencontainers.image.ref.name"] = tag
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": descs}, f)


def gen_corpus(out):
    """crafted images: each with its expected outcome and rule"""
    cases = []
    base = tar([ti("etc/", tarfile.DIRTYPE, mode=0o755),
                ti("etc/passwd", data=b"root:x:0:0\n")])

    def case(name, layers, expect, rule=None, args=(), comp="gzip",
             tweak=None, docker=False, contain=(), absent=(), post=None):
        d = layout(out, name, None)
        desc = image(d, layers, comp=comp, tweak=tweak, docker=docker)
        write_index(d, name, [desc])
        if post:
            post(d)
        cases.append({"name": name, "expect": expect, "rule": rule,
                      "args": list(args), "must_contain": list(contain),
                      "must_not_contain": list(absent)})

    R, D, L, H = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, \
        tarfile.LNKTYPE
    case("abs-path-made-relative", [tar([ti("/etc/", D, mode=0o755),
                                         ti("/etc/abs", data=b"abs\n")])],
         "accept", contain=[{"path": "/etc/abs", "type": "reg", "size": 4}])
    case("dotdot-inside-name", [tar([ti("a/../b", data=b"x")])],
         "reject", "path leaves the layer")
    # a symlink on the way resolves inside the image root (docs/oci2ovl.md)
    case("symlink-escape-absolute",
         [tar([ti("esc", L, linkname=SENT), ti("esc/pwned", data=b"x")])],
         "accept", contain=[{"path": "/esc", "type": "symlink"},
                            {"path": SENT + "/pwned", "type": "reg"}])
    case("symlink-escape-across-layers",
         [tar([ti("esc", L, linkname=SENT)]),
          tar([ti("esc/pwned-across", data=b"x")])],
         "accept", contain=[{"path": "/esc", "type": "symlink"},
                            {"path": SENT + "/pwned-across", "type": "reg"}])
    case("symlink-then-same-name-file",
         [tar([ti("s", L, linkname=SENT + "/victim"),
               ti("s", data=b"overwrite\n")])],
         "reject", "duplicate entry")
    case("hardlink-dotdot",
         [tar([ti("h", H, linkname="../../../.." + SENT + "/secret")])],
         "reject", "hard link: path leaves the layer")
    case("hardlink-through-symlink",
         [tar([ti("s", L, linkname=SENT), ti("h", H, linkname="s/secret")])],
         "reject", "hard link target is not an earlier entry of this layer")
    case("hardlink-to-directory",
         [tar([ti("d/", D, mode=0o755), ti("h", H, linkname="d")])],
         "reject", "hard link target is not an earlier entry of this layer")
    case("hardlink-within-layer",
         [tar([ti("a", data=b"same\n"), ti("b", H, linkname="a"),
               ti("./c", H, linkname="/a")])],
         "accept", contain=[{"path": "/b", "type": "reg", "size": 5}])
    case("whiteout-dotdot-top", [base, tar([ti(".wh..."), ti("x")])],
         "reject", "whiteout leaves its directory")
    case("whiteout-empty-name", [base, tar([ti("etc/.wh.")])],
         "reject", "whiteout leaves its directory")
    case("whiteout-through-symlink",
         [tar([ti(SENT[1:] + "/secret", data=b"x"), ti("s", L, linkname=SENT)]),
          tar([ti("s", L, linkname=SENT), ti("s/.wh.secret")])],
         "accept", contain=[{"path": "/s", "type": "symlink"}],
         absent=[SENT + "/secret"])
    case("opaque-through-symlink",
         [tar([ti(SENT[1:] + "/secret", data=b"x")]),
          tar([ti("s", L, linkname=SENT), ti("s/.wh..wh..opq")])],
         "accept", contain=[{"path": "/s", "type": "symlink"},
                            {"path": SENT, "type": "dir"}],
         absent=[SENT + "/secret"])
    case("entry-inside-whiteout", [base, tar([ti(".wh.etc/x", data=b"x")])],
         "reject", "path goes through a whiteout")
    case("absolute-whiteout", [base, tar([ti("/etc/.wh.passwd")])],
         "accept", absent=["/etc/passwd"])
    case("fake-native-whiteout",
         [base, tar([ti("etc/passwd", L, linkname="(overlay-whiteout)",
                        pax_headers={"SCHILY.xattr.trusted.overlay.whiteout": "y"})])],
         "accept", contain=[{"path": "/etc/passwd", "type": "symlink",
                             "linkname": "(overlay-whiteout)"}])
    case("chardev-0-0-marker",
         [base, tar([ti("etc/passwd", tarfile.CHRTYPE, devmajor=0,
                        devminor=0)])],
         "reject", "0/0 character device is an overlay whiteout marker")
    case("parent-is-device",
         [tar([ti("null", tarfile.CHRTYPE, devmajor=1, devminor=3),
               ti("null/x", data=b"x")])],
         "reject", "parent is not a directory")
    case("too-many-entries",
         [tar([ti("f%d" % i, data=b"x") for i in range(40)])],
         "reject", "more than 10 entries (--max-entries)",
         args=["--max-entries", "10"])
    case("expansion-limit",
         [tar([ti("big", data=b"\0" * (3 << 20))])],
         "reject", "exceeds the expansion limit", args=["--max-bytes", "1M"])
    case("expansion-limit-many-small",
         [tar([ti("f%d" % i, data=b"\0" * 60000) for i in range(40)])],
         "reject", "layer expands beyond 1048576 bytes (--max-bytes)",
         args=["--max-bytes", "1M"])
    hdr = tarfile.TarInfo("huge")
    hdr.size = 1 << 40
    case("huge-declared-size",
         [tar([], raw_tail=hdr.tobuf(tarfile.GNU_FORMAT) + b"\0" * 512)],
         "reject", "declared size 1099511627776 exceeds the expansion limit")
    hdr2 = tarfile.TarInfo("short")
    hdr2.size = 1 << 20
    case("truncated-tar-data",
         [tar([], raw_tail=hdr2.tobuf(tarfile.USTAR_FORMAT) + b"a" * 512)],
         "reject", "bad tar stream")
    case("name-too-long", [tar([ti("d/" + "n" * 300, data=b"x")])],
         "reject", "name too long")
    case("path-too-long", [tar([ti("/".join(["abcdefghij"] * 12), data=b"")])],
         "reject", "path too long", args=["--max-path", "100"])
    case("zstd-layer", [base], "accept", comp="zstd",
         contain=[{"path": "/etc/passwd", "type": "reg", "size": 11}])
    case("uncompressed-layer", [base], "accept", comp="none",
         contain=[{"path": "/etc/passwd", "type": "reg", "size": 11}])
    case("docker-media-types", [base], "accept", docker=True,
         contain=[{"path": "/etc/passwd", "type": "reg", "size": 11}])
    case("zstd-data-gzip-type", [(base, "zstd")], "reject",
         "not what its media type says", comp="gzip",
         tweak=lambda l, c, m: m["layers"][0].update(
             mediaType=MT_LAYER["gzip"]))

    def bad_digest(l, c, m):
        m["layers"][0]["digest"] = "sha256:../../../../etc/passwd"
    case("digest-path-traversal", [base], "reject",
         "is not sha256:<64 hex digits>", tweak=bad_digest)

    def small_size(l, c, m):
        m["layers"][0]["size"] -= 1
    case("blob-size-mismatch", [base], "reject", "blob is larger than the manifest's size",
         tweak=small_size)

    def diff_count(l, c, m):
        c["rootfs"]["diff_ids"].append(c["rootfs"]["diff_ids"][0])
    case("diff-id-count-mismatch", [base], "reject", "2 diff_ids for 1 layers",
         tweak=diff_count)

    class BadJson:
        def __call__(self, l, c, m):
            pass

        def raw_manifest(self, raw):
            return raw[:-5]
    case("malformed-manifest-json", [base], "reject", "malformed JSON",
         tweak=BadJson())

    class DupKey:
        def __call__(self, l, c, m):
            pass

        def raw_manifest(self, raw):
            return raw[:-1] + b', "schemaVersion": 3}'
    case("duplicate-json-key", [base], "reject", "duplicate object key",
         tweak=DupKey())

    def fifo_blob(d):
        idx = json.load(open(os.path.join(d, "index.json")))
        m = json.load(open(os.path.join(d, "blobs", "sha256",
                                        idx["manifests"][0]["digest"][7:])))
        p = os.path.join(d, "blobs", "sha256", m["layers"][0]["digest"][7:])
        os.unlink(p)
        os.mkfifo(p)
    case("fifo-blob", [base], "fail", "cannot open blob", post=fifo_blob)

    __import__("corpus_tree").cases(case)
    # multi-platform: amd64 and arm64 differ in /arch
    d = layout(out, "multi-platform", None)
    amd = image(d, [tar([ti("arch", data=b"amd64\n")])])
    arm = image(d, [tar([ti("arch", data=b"arm64\n")])],
                platform=("linux", "arm64"))
    idx = {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
           "manifests": [arm, amd]}
    idd, idn = jblob(d, idx)
    write_index(d, "multi-platform",
                [{"mediaType": "application/vnd.oci.image.index.v1+json",
                  "digest": idd, "size": idn}])
    cases.append({"name": "multi-platform", "expect": "accept", "rule": None,
                  "args": [], "must_contain": [
                      {"path": "/arch", "type": "reg", "sha256":
                       hashlib.sha256(b"amd64\n").hexdigest()}],
                  "must_not_contain": []})
    cases.append({"name": "multi-platform-arm64", "tag": "multi-platform",
                  "expect": "accept", "rule": None,
                  "args": ["--platform", "linux/arm64"], "must_contain": [
                      {"path": "/arch", "type": "reg", "sha256":
                       hashlib.sha256(b"arm64\n").hexdigest()}],
                  "must_not_contain": []})
    __import__("corpus_index").gen(out, cases)
    cases += __import__("corpus_layers").cases(out)
    cases += __import__("corpus_rules").cases(out)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"cases": cases, "sentinel_files": {},
                   "sentinel_dir": SENT}, f, indent=1)
    return 0


def main(argv):
    cmd = argv[1]
    if cmd == "dump":
        sys.stdout.write(fmt(dump(argv[2])))
        return 0
    if cmd == "flatten":
        sys.stdout.write(fmt(flatten(argv[2:])))
        return 0
    if cmd == "check-case":
        return check_case(argv[2], argv[3], argv[4:])
    if cmd == "overlay-xattrs":
        return overlay_xattrs(argv[2:])
    if cmd == "check-accepted":
        return check_accepted(argv[2], argv[3], argv[4:])
    if cmd == "gen-corpus":
        return gen_corpus(argv[2])
    if cmd == "sentinel":
        make_sentinel(argv[2], argv[3])
        return 0
    print("unknown command " + cmd, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
