# SPDX-License-Identifier: GPL-2.0
"""Crafted images for directory and symlink semantics (lfs_tree.py
gen-corpus calls cases()): late directory entries, implicit parents and
what they take from the layers below, and paths through symlinks of this
layer or of a lower one, resolved inside the image root (docs/oci2ovl.md,
"Directories and symlinks").

Each case names the rule it pins; "old:" says how the converter before
these rules got it wrong, so that every case can fail.
"""
import tarfile

from lfs_tree import SENT, tar, ti

R, D, L, H = tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, \
    tarfile.LNKTYPE
T0 = 1700000000  # ti()'s default mtime
# the loop rule, with its count (LFS_MAX_SYMLINKS in extract.c)
LOOP = "more than 40 symlinks on the way, the last"


def xa(**kv):
    """PAX xattr records for ti()"""
    return {"pax_headers": {"SCHILY.xattr.user." + k: v
                            for k, v in kv.items()}}


def usrmerge(*extra):
    """a lower layer with lib -> usr/lib, as merged-/usr distributions"""
    return tar([ti("usr/", D, mode=0o755), ti("usr/lib/", D, mode=0o755),
                ti("lib", L, linkname="usr/lib")] + list(extra))


def cases(case):
    # -- a directory's own entry after its children ----------------------
    case("tree-late-dir-entries",
         [tar([ti("a/b/c", data=b"x"),
               ti("a/b/", D, mode=0o750, uid=5, gid=6, mtime=1000000000),
               ti("a/", D, mode=0o700, uid=1000, gid=1000,
                  mtime=1100000000, **xa(late="1"))])],
         "accept", contain=[
             {"path": "/a", "type": "dir", "mode": "0700", "uid": 1000,
              "gid": 1000, "mtime": 1100000000, "xattrs": {"user.late": "1"}},
             {"path": "/a/b", "type": "dir", "mode": "0750", "uid": 5,
              "gid": 6, "mtime": 1000000000, "xattrs": {}}])
    # the late entry replaces what the implicit parent took from below,
    # xattrs included, and its time has the last word
    case("tree-late-dir-over-copied-parent",
         [tar([ti("a/", D, mode=0o711, uid=7, gid=7, mtime=1000000000,
                  **xa(low="1")), ti("a/old", data=b"o")]),
          tar([ti("a/new", data=b"n"),
               ti("a/", D, mode=0o700, uid=1000, gid=1000,
                  mtime=1100000000)])],
         "accept", contain=[
             {"path": "/a", "type": "dir", "mode": "0700", "uid": 1000,
              "gid": 1000, "mtime": 1100000000, "xattrs": {}},
             {"path": "/a/old", "type": "reg"}, {"path": "/a/new"}])

    # -- implicit parents ------------------------------------------------
    # old: /home/app became 0755 root:root with the import time
    case("tree-implicit-parent-copies-lower",
         [tar([ti("home/", D, mode=0o755),
               ti("home/app/", D, mode=0o700, uid=1000, gid=1000,
                  mtime=1200000000, **xa(app="1"))]),
          tar([ti("home/app/.profile", data=b"x")])],
         "accept", contain=[
             {"path": "/home", "type": "dir", "mode": "0755", "uid": 0,
              "mtime": T0},
             {"path": "/home/app", "type": "dir", "mode": "0700",
              "uid": 1000, "gid": 1000, "mtime": 1200000000,
              "xattrs": {"user.app": "1"}},
             {"path": "/home/app/.profile", "type": "reg"}])
    # the topmost lower directory counts
    case("tree-implicit-parent-topmost-lower",
         [tar([ti("a/", D, mode=0o700, uid=1, gid=1)]),
          tar([ti("a/", D, mode=0o750, uid=2, gid=2, mtime=1300000000)]),
          tar([ti("a/f", data=b"x")])],
         "accept", contain=[{"path": "/a", "mode": "0750", "uid": 2,
                             "gid": 2, "mtime": 1300000000}])
    # old: import time; now a fixed time (0), 0755, root
    case("tree-implicit-parent-default",
         [tar([ti("x/y/z", data=b"z")])],
         "accept", contain=[
             {"path": "/x", "type": "dir", "mode": "0755", "uid": 0,
              "gid": 0, "mtime": 0},
             {"path": "/x/y", "type": "dir", "mode": "0755", "mtime": 0}])
    # a set-gid lower directory is copied; a default one below it does
    # not inherit its group (old: /s 0755 root)
    case("tree-implicit-parent-setgid-lower",
         [tar([ti("s/", D, mode=0o2775, uid=0, gid=50)]),
          tar([ti("s/t/u", data=b"u")])],
         "accept", contain=[
             {"path": "/s", "mode": "2775", "gid": 50},
             {"path": "/s/t", "mode": "0755", "uid": 0, "gid": 0,
              "mtime": 0}])
    # a whited-out lower directory is not copied (old: import time)
    for fmt in ("native", "chardev"):
        case("tree-implicit-parent-whited-out-" + fmt,
             [tar([ti("d/", D, mode=0o700, uid=5, gid=5)]),
              tar([ti(".wh.d")]),
              tar([ti("d/f", data=b"x")])],
             "accept", args=["--whiteout", fmt], contain=[
                 {"path": "/d", "mode": "0755", "uid": 0, "mtime": 0}])
    # nor is one under a directory this layer made opaque
    case("tree-implicit-parent-under-opaque",
         [tar([ti("p/", D, mode=0o755), ti("p/q/", D, mode=0o700, uid=9)]),
          tar([ti("p/", D, mode=0o755), ti("p/.wh..wh..opq"),
               ti("p/q/f", data=b"x")])],
         "accept", contain=[
             {"path": "/p/q", "mode": "0755", "uid": 0, "mtime": 0}])
    # a lower non-directory on the way (old: replaced by a directory)
    case("tree-implicit-parent-over-lower-file",
         [tar([ti("f", data=b"file")]), tar([ti("f/x", data=b"x")])],
         "reject", "parent is not a directory: \"f\" (layer sha256:")

    # -- paths through symlinks of a lower layer -------------------------
    # old: /lib became a directory holding libfoo.so, hiding usr/lib
    case("tree-lower-symlink-entry",
         [usrmerge(ti("usr/lib/libc.so", data=b"c")),
          tar([ti("lib/libfoo.so", data=b"foo")])],
         "accept", contain=[
             {"path": "/lib", "type": "symlink", "linkname": "usr/lib"},
             {"path": "/usr/lib/libfoo.so", "type": "reg", "size": 3},
             {"path": "/usr/lib/libc.so", "type": "reg"}])
    case("tree-lower-symlink-whiteout",
         [usrmerge(ti("usr/lib/libold.so", data=b"o")),
          tar([ti("lib/.wh.libold.so")])],
         "accept", contain=[{"path": "/lib", "type": "symlink"},
                            {"path": "/usr/lib", "type": "dir"}],
         absent=["/usr/lib/libold.so"])
    case("tree-lower-symlink-opaque",
         [usrmerge(ti("usr/lib/a", data=b"a")),
          tar([ti("lib/.wh..wh..opq"), ti("lib/b", data=b"b")])],
         "accept", contain=[{"path": "/lib", "type": "symlink"},
                            {"path": "/usr/lib/b", "type": "reg"}],
         absent=["/usr/lib/a"])
    # an absolute, dangling target: made inside the image root
    case("tree-lower-absolute-symlink",
         [tar([ti("etc/", D, mode=0o755), ti("conf", L, linkname="/etc/app")]),
          tar([ti("conf/x.conf", data=b"x")])],
         "accept", contain=[
             {"path": "/conf", "type": "symlink"},
             {"path": "/etc/app", "type": "dir", "mode": "0755",
              "mtime": 0},
             {"path": "/etc/app/x.conf", "type": "reg"}])
    # ".." stops at the image root
    case("tree-lower-symlink-dotdot",
         [tar([ti("a/b/up", L, linkname="../../../../..")]),
          tar([ti("a/b/up/x", data=b"x")])],
         "accept", contain=[{"path": "/a/b/up", "type": "symlink"},
                            {"path": "/x", "type": "reg"}])
    case("tree-lower-symlink-escape",
         [tar([ti("esc", L, linkname="../../../../.." + SENT)]),
          tar([ti("esc/pwned", data=b"x")])],
         "accept", contain=[{"path": SENT + "/pwned", "type": "reg"}])
    case("tree-lower-symlink-to-file",
         [tar([ti("f", data=b"f"), ti("s", L, linkname="f")]),
          tar([ti("s/x", data=b"x")])],
         "reject", "parent is not a directory: \"f\" (layer sha256:")
    # the final component is never followed: a directory entry replaces
    # the lower symlink and does not merge with its target
    case("tree-entry-replaces-lower-symlink",
         [usrmerge(ti("usr/lib/a", data=b"a")),
          tar([ti("lib/", D, mode=0o755), ti("lib/b", data=b"b")])],
         "accept", contain=[{"path": "/lib", "type": "dir"},
                            {"path": "/lib/b", "type": "reg"},
                            {"path": "/usr/lib/a", "type": "reg"}],
         absent=["/lib/a", "/usr/lib/b"])
    case("tree-lower-symlink-duplicate",
         [usrmerge(), tar([ti("usr/lib/x", data=b"1"),
                           ti("lib/x", data=b"2")])],
         "reject", "duplicate entry (through symlinks: \"usr/lib/x\")")
    case("tree-hardlink-through-lower-symlink",
         [usrmerge(), tar([ti("usr/lib/real", data=b"r"),
                           ti("h", H, linkname="lib/real")])],
         "accept", contain=[{"path": "/h", "type": "reg",
                             "hardlink": "/h"},
                            {"path": "/usr/lib/real", "hardlink": "/h"}])
    case("tree-symlink-to-whiteout-name",
         [tar([ti("s", L, linkname=".wh.x")]), tar([ti("s/y", data=b"y")])],
         "reject", "whiteout name through symlink \"s\" (layer sha256:")
    case("tree-symlink-path-too-long",
         [tar([ti("s", L, linkname="/".join(["abcdefghi"] * 12))]),
          tar([ti("s/x", data=b"x")])],
         "reject", "path too long through symlink \"s\"",
         args=["--max-path", "100"])

    # -- loops and depth -------------------------------------------------
    case("tree-symlink-loop-across-layers",
         [tar([ti("a", L, linkname="b"), ti("b", L, linkname="/a")]),
          tar([ti("a/x", data=b"x")])],
         "reject", LOOP)
    case("tree-symlink-self-loop",
         [tar([ti("s", L, linkname="s/s"), ti("s/x", data=b"x")])],
         "reject", LOOP + " \"s\" (this layer)")
    # l0 -> l1 -> ... -> lN -> d: N + 1 symlinks to follow
    def chain(n):
        return tar([ti("l%d" % i, L, linkname="l%d" % (i + 1))
                    for i in range(n)] +
                   [ti("l%d" % n, L, linkname="d"),
                    ti("d/", D, mode=0o755)])
    case("tree-symlink-chain-of-40", [chain(39), tar([ti("l0/x", data=b"x")])],
         "accept", contain=[{"path": "/d/x", "type": "reg"}])
    case("tree-symlink-chain-of-41", [chain(40), tar([ti("l0/x", data=b"x")])],
         "reject", LOOP + " \"l40\" (layer sha256:")

    # -- the same symlink within one layer -------------------------------
    # old: refused ("path goes through a symlink")
    case("tree-same-layer-symlink",
         [tar([ti("usr/", D, mode=0o755), ti("usr/lib/", D, mode=0o755),
               ti("lib", L, linkname="usr/lib"),
               ti("lib/libfoo.so", data=b"foo"),
               ti("lib/.wh.gone"), ti("h", H, linkname="lib/libfoo.so")])],
         "accept", contain=[
             {"path": "/lib", "type": "symlink", "linkname": "usr/lib"},
             {"path": "/usr/lib/libfoo.so", "type": "reg",
              "hardlink": "/h"}],
         absent=["/usr/lib/gone"])
