#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Crafted cases for the rules oci2ovl applies before the kernel is asked:
xattr names, namespaces and values, device numbers, AUFS metadata, and
untrusted bytes in messages. Added to lfs_tree.py gen-corpus by
cases(OUTDIR); tests/bats/host/22-oci2ovl-layers.bats also makes them
alone, to check the warnings of the cases that are accepted.

  corpus_rules.py gen OUTDIR      these images, and OUTDIR/cases.json
"""
import base64
import json
import os
import struct
import sys
import tarfile

import lfs_tree as T

R, D, L, H = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE
C, B, F = tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE

# POSIX ACL xattr format (linux/posix_acl_xattr.h): version 2, then
# (tag, perm, id) entries; ids of the _OBJ, MASK and OTHER entries are
# ACL_UNDEFINED_ID, as the kernel gives them back
UNDEF = 0xffffffff
ACL_OK = [(0x01, 6, UNDEF), (0x02, 6, 1000), (0x04, 4, UNDEF),
          (0x10, 6, UNDEF), (0x20, 4, UNDEF)]


def acl(entries, version=2):
    return struct.pack("<I", version) + b"".join(
        struct.pack("<HHI", *e) for e in entries)


# a file capability, revision 2 (effective; CAP_NET_BIND_SERVICE)
FCAP_V2 = struct.pack("<IIIII", 0x02000001, 1 << 10, 0, 0, 0)
# revision 1 (12 bytes), which the kernel no longer takes
FCAP_V1 = struct.pack("<III", 0x01000001, 1 << 10, 0)
# revision 3 whose root uid is (uid_t)-1
FCAP_V3_NOROOT = struct.pack("<IIIIII", 0x03000001, 1 << 10, 0, 0, 0, UNDEF)


# the reasons of the warnings
NS = ("not in a namespace Linux stores: user., trusted., security., "
      "system.posix_acl_access, system.posix_acl_default")
USER = "user.* xattrs exist only on regular files and directories"
AUFS = ("aufs's own .wh..wh.plnk, .wh..wh.aufs, .wh..wh.orph at the layer "
        "root")


def text(b):
    """an xattr value as lfs_tree.py lists it"""
    return b.decode("utf-8", "backslashreplace")


def lax(name, value):
    """a LIBARCHIVE.xattr record: any bytes, base64 (the name as is)"""
    return {"LIBARCHIVE.xattr." + name: base64.b64encode(value).decode()}


def cases(out):
    """the cases, written under @out; returns their cases.json records"""
    recs = []

    def case(name, layers, expect, rule=None, contain=(), absent=(),
             warn=(), fmt=tarfile.PAX_FORMAT):
        d = T.layout(out, name, None)
        desc = T.image(d, [T.tar(lay, fmt=fmt) for lay in layers])
        T.write_index(d, name, [desc])
        # "warnings": stderr of an accepted case, each line after
        # "oci2ovl: warning: layer sha256:...: " (checked by
        # 22-oci2ovl-layers.bats; run-corpus.sh reads no such key)
        recs.append({"name": name, "expect": expect, "rule": rule,
                     "args": [], "must_contain": list(contain),
                     "must_not_contain": list(absent),
                     "warnings": list(warn)})

    def f(name, pax, typ=R, data=b"x", **kw):
        return T.ti(name, typ, data=data if typ == R else b"",
                    pax_headers=pax, **kw)

    # 1. xattrs no Linux file can carry: dropped with a warning, as
    # containerd and umoci drop them (the kernel refuses them on every
    # filesystem with EOPNOTSUPP); the others of the entry are written
    case("xattr-unknown-namespace",
         [[f("f", {"SCHILY.xattr.com.apple.provenance": "mac",
                   "SCHILY.xattr.system.nfs4_acl": "n",
                   "SCHILY.xattr.user.kept": "v"}),
           f("g", {"SCHILY.xattr.com.apple.quarantine": "q"})]],
         "accept", contain=[{"path": "/f", "type": "reg",
                             "xattrs": {"user.kept": "v"}},
                            {"path": "/g", "type": "reg", "xattrs": {}}],
         warn=["entry \"f\": xattr com.apple.provenance dropped (%s)" % NS,
               "2 more xattrs dropped (%s)" % NS])
    # user.* only on regular files and directories (fs/xattr.c), ACLs
    # not on symlinks, default ACLs only on directories
    case("xattr-user-on-symlink-fifo-device",
         [[f("s", {"SCHILY.xattr.user.k": "v",
                   "SCHILY.xattr.trusted.t": "t"}, L, linkname="target"),
           f("p", {"SCHILY.xattr.user.k": "v"}, F),
           f("c", {"SCHILY.xattr.user.k": "v",
                   "SCHILY.xattr.security.s": "s"}, C, devmajor=1,
             devminor=3),
           f("d/", {"SCHILY.xattr.user.k": "v"}, D, mode=0o755),
           f("r", {"SCHILY.xattr.user.k": "v"})]],
         "accept", contain=[
             {"path": "/s", "type": "symlink", "xattrs": {"trusted.t": "t"}},
             {"path": "/p", "type": "fifo", "xattrs": {}},
             {"path": "/c", "type": "char", "rdev": "1:3",
              "xattrs": {"security.s": "s"}},
             {"path": "/d", "type": "dir", "xattrs": {"user.k": "v"}},
             {"path": "/r", "type": "reg", "xattrs": {"user.k": "v"}}],
         warn=["entry \"s\": xattr user.k dropped (%s)" % USER,
               "2 more xattrs dropped (%s)" % USER])
    case("xattr-acl-on-symlink-default-acl-on-file",
         [[T.ti("s", L, linkname="t",
                pax_headers=lax("system.posix_acl_access", acl(ACL_OK))),
           T.ti("f", data=b"x",
                pax_headers=lax("system.posix_acl_default", acl(ACL_OK))),
           T.ti("d/", D, mode=0o755,
                pax_headers=lax("system.posix_acl_default", acl(ACL_OK)))]],
         "accept", contain=[
             {"path": "/s", "type": "symlink", "xattrs": {}},
             {"path": "/f", "type": "reg", "xattrs": {}},
             {"path": "/d", "type": "dir", "xattrs": {
                 "system.posix_acl_default": text(acl(ACL_OK))}}],
         warn=["entry \"s\": xattr system.posix_acl_access dropped "
               "(symlinks have no ACLs)",
               "entry \"f\": xattr system.posix_acl_default dropped "
               "(only directories have default ACLs)"])
    # well-formed ACLs and capabilities are written
    case("xattr-valid-acl-and-capability",
         [[T.ti("f", data=b"x", pax_headers={
             **lax("system.posix_acl_access", acl(ACL_OK)),
             **lax("security.capability", FCAP_V2)})]],
         "accept", contain=[{"path": "/f", "type": "reg", "xattrs": {
             "system.posix_acl_access": text(acl(ACL_OK)),
             "security.capability": text(FCAP_V2)}}])

    # 2. malformed xattrs a file could carry: the layer is refused
    for ns in ("user", "trusted", "security"):
        case("xattr-name-only-prefix-" + ns,
             [[f("f", {"SCHILY.xattr.%s." % ns: "v"})]], "reject",
             "entry \"f\": xattr %s.: the name is only a namespace prefix"
             % ns)
    case("xattr-name-too-long",
         [[f("f", {"SCHILY.xattr.user." + "n" * 251: "v"})]], "reject",
         "entry \"f\": xattr user.%s: name longer than 255 bytes" % ("n" * 251))
    case("xattr-name-longest", [[f("f", {"SCHILY.xattr.user." + "n" * 250:
                                         "v"})]],
         "accept", contain=[{"path": "/f", "type": "reg",
                             "xattrs": {"user." + "n" * 250: "v"}}])
    case("xattr-value-too-long",
         [[f("f", {"SCHILY.xattr.user.big": "v" * 65537})]], "reject",
         "entry \"f\": xattr user.big: value longer than 65536 bytes")
    bad_acls = {
        "garbage": b"not an acl",
        "version-1": acl(ACL_OK, version=1),
        "no-other": acl(ACL_OK[:4]),
        "named-without-mask": acl([ACL_OK[0], ACL_OK[1], ACL_OK[2],
                                   ACL_OK[4]]),
        "out-of-order": acl([ACL_OK[2], ACL_OK[0], ACL_OK[4]]),
        "perm-bits": acl([(0x01, 8, UNDEF), (0x04, 4, UNDEF),
                          (0x20, 4, UNDEF)]),
        "named-uid-minus-1": acl([ACL_OK[0], (0x02, 6, UNDEF)] +
                                 ACL_OK[2:]),
    }
    for nm, val in bad_acls.items():
        case("xattr-acl-" + nm,
             [[T.ti("f", data=b"x",
                    pax_headers=lax("system.posix_acl_access", val))]],
             "reject",
             "entry \"f\": xattr system.posix_acl_access: not a valid "
             "POSIX ACL")
    for nm, val in (("revision-1", FCAP_V1), ("v3-no-root", FCAP_V3_NOROOT),
                    ("v2-cut", FCAP_V2[:16])):
        case("xattr-capability-" + nm,
             [[T.ti("f", data=b"x",
                    pax_headers=lax("security.capability", val))]],
             "reject",
             "entry \"f\": xattr security.capability: not a file "
             "capability of revision 2 or 3")

    # 3. device numbers mknod(2) can take: major < 4096, minor < 2^20
    # (the kernel passes them in 32 bits); larger ones failed in mknod,
    # or were cut: 4294967297:3 became 1:3
    case("device-largest-numbers",
         [[T.ti("c", C, devmajor=4095, devminor=1048575),
           T.ti("b", B, devmajor=4095, devminor=1048575)]], "accept",
         contain=[{"path": "/c", "type": "char", "rdev": "4095:1048575"},
                  {"path": "/b", "type": "block", "rdev": "4095:1048575"}])
    for nm, typ, ma, mi in (("major-4096", C, 4096, 1),
                            ("minor-2-20", B, 8, 1 << 20),
                            ("major-2-32-plus-1", C, (1 << 32) + 1, 3),
                            ("minor-2-32-plus-3", C, 1, (1 << 32) + 3)):
        case("device-" + nm, [[T.ti("dev", typ, devmajor=ma, devminor=mi)]],
             "reject", "entry \"dev\": device number %d:%d is out of range "
             "(major 0 to 4095, minor 0 to 1048575)" % (ma, mi),
             fmt=tarfile.GNU_FORMAT)
    # 3. aufs's metadata at the layer root (early docker layers): skipped,
    # as docker skips it; a hard link into .wh..wh.plnk (a pseudo-link)
    # links to the file kept there, and nothing of it stays
    P, A, O = ".wh..wh.plnk", ".wh..wh.aufs", ".wh..wh.orph"
    case("aufs-metadata-skipped",
         [[T.ti(P + "/", D, mode=0o700), T.ti(P + "/123.456", data=b"p"),
           T.ti(A, data=b""), T.ti("./" + O + "/", D, mode=0o700),
           T.ti("/" + O + "/x", data=b"o"), T.ti("etc/keep", data=b"k")]],
         "accept", contain=[{"path": "/etc/keep", "type": "reg"}],
         absent=["/" + P, "/" + A, "/" + O, "/.wh.plnk", "/.wh.aufs"],
         warn=["entry \"%s/\": skipped (%s)" % (P, AUFS),
               "4 more entries skipped (%s)" % AUFS])
    linked = {"type": "reg", "size": 7, "mode": "0755", "uid": 7,
              "sha256": T.hashlib.sha256(b"linked\n").hexdigest(),
              "hardlink": "/usr/bin/a"}
    case("aufs-plnk-hard-links",
         [[T.ti(P + "/", D, mode=0o700),
           T.ti(P + "/1.2", data=b"linked\n", mode=0o755, uid=7),
           T.ti("usr/bin/a", H, linkname=P + "/1.2"),
           T.ti("usr/bin/b", H, linkname="/" + P + "/1.2")]],
         "accept", contain=[dict(linked, path="/usr/bin/a"),
                            dict(linked, path="/usr/bin/b")],
         absent=["/" + P],
         warn=["entry \"%s/\": skipped (%s)" % (P, AUFS),
               "1 more entry skipped (%s)" % AUFS])
    case("aufs-plnk-hard-link-to-nothing",
         [[T.ti(P + "/", D, mode=0o700),
           T.ti("usr/bin/a", H, linkname=P + "/9.9")]], "reject",
         "entry \"usr/bin/a\": hard link target is not an earlier entry "
         "of this layer")
    case("aufs-plnk-hard-link-to-a-directory",
         [[T.ti(P + "/d/", D, mode=0o700), T.ti("a", H, linkname=P + "/d")]],
         "reject", "entry \"a\": hard link target is not an earlier entry")
    # only at the root, and only those three names
    case("aufs-metadata-below-the-root", [[T.ti("a/" + P, data=b"")]],
         "reject", "entry \"a/%s\": reserved whiteout name" % P)
    case("aufs-unknown-metadata-name", [[T.ti(".wh..wh.xyz", data=b"")]],
         "reject", "entry \".wh..wh.xyz\": reserved whiteout name")

    # 4. bytes of the input reach stderr escaped: names with an escape
    # sequence and a newline (the warnings as lfs_esc() writes them)
    e, wx = "e\x1b[31m\nf", "com.\x1b]0;x\x07\nevil"
    case("ctl-names-in-warnings",
         [[f(e, {"SCHILY.xattr." + wx: "v",
                 "SCHILY.xattr.trusted.overlay.\x1b[2J\nx": "y",
                 "SCHILY.xattr.user.\x1b[1m\nok": "v"})]], "accept",
         contain=[{"path": "/" + e, "type": "reg",
                   "xattrs": {"user.\x1b[1m\nok": "v"}}],
         warn=["entry \"e\\x1b[31m\\x0af\": xattr "
               "com.\\x1b]0;x\\x07\\x0aevil dropped (%s)" % NS,
               "entry \"e\\x1b[31m\\x0af\": xattr "
               "trusted.overlay.\\x1b[2J\\x0ax dropped (overlay markers "
               "are never taken from a layer)"])
    case("ctl-names-in-refusal",
         [[f("r\x1b[2J\nfile", {"SCHILY.xattr.user.\x1b[1m\n" + "n" * 260:
                                "v"})]], "reject",
         "entry \"r\\x1b[2J\\x0afile\": xattr user.\\x1b[1m\\x0a%s: name "
         "longer than 255 bytes" % ("n" * 260))
    return recs


def gen(out):
    os.makedirs(out, exist_ok=True)
    recs = cases(out)
    with open(os.path.join(out, "cases.json"), "w") as fh:
        json.dump({"cases": recs, "sentinel_files": {},
                   "sentinel_dir": T.SENT}, fh, indent=1)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
        sys.exit(0)
    print(__doc__, file=sys.stderr)
    sys.exit(2)
