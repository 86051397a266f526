#!/usr/bin/env bats
# oci2ovl in the guest, under the kernel's own overlay: images built with
# umoci (tools/oci2ovl/tests/mkimages.sh), converted with
# --whiteout=chardev and mounted with 'oci2ovl mount --fstype overlay',
# must give the same tree as 'umoci unpack' (names, types, modes, owners,
# sizes, content hashes, link targets, xattrs, hard-link groups). Store
# and references live on the guest ext4 (user.* xattrs; tmpfs in 6.1 has
# none), never on the 9p root.

# The images (tools/oci2ovl/tests/mkimages.sh) and what 'umoci unpack'
# makes of each (lfs_tree.py dump): host-built fixtures
# (tests/bats/fixtures.sh), where umoci and python cost a minute per suite
# here
setup_file() {
	W=$LFS_EXT4/oci2ovl-50
	rm -rf "$W"
	mkdir -p "$W"
	cp "$LFS_EXT4/fixtures/oci-images/"{churn,small,deep}.want "$W/"
}

teardown_file() {
	umount -R "$LFS_EXT4/oci2ovl-50/mnt" 2>/dev/null || true
	rm -rf "$LFS_EXT4/oci2ovl-50"
}

setup() {
	W=$LFS_EXT4/oci2ovl-50
	B=$LFS_REPO/build/bin/oci2ovl
	T="python3 $LFS_REPO/tools/oci2ovl/tests/lfs_tree.py"
	export OCI2OVL_STORE=$W/store
	mkdir -p "$W/mnt"
}

teardown() {
	mountpoint -q "$W/mnt" && umount "$W/mnt"
	true
}

lfs_overlay_matches_umoci() { # TAG [mount options...]
	local t=$1
	shift
	"$B" import "$LFS_EXT4/fixtures/oci-images/img/layout:$t" --whiteout=chardev
	run "$B" mount "$t" "$W/mnt" --fstype overlay "$@"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == "mount -t overlay none $W/mnt -o "* ]]
	$T dump "$W/mnt" >"$W/$t.got"
	diff -u "$W/$t.want" "$W/$t.got"
	[ "$(wc -l <"$W/$t.want")" -gt 3 ]
}

@test "overlay of the churn image's layers equals umoci unpack" {
	lfs_overlay_matches_umoci churn
	# read-only without --upper
	! touch "$W/mnt/new" 2>/dev/null
}

@test "overlay of the six-layer image's layers equals umoci unpack" {
	lfs_overlay_matches_umoci deep
}

@test "a one-layer image mounts writable with --upper, writes land in upper" {
	lfs_overlay_matches_umoci small --upper "$W/upper"
	[ -d "$W/upper.work" ]
	echo new >"$W/mnt/etc/new"
	rm "$W/mnt/etc/motd"
	umount "$W/mnt"
	[ "$(cat "$W/upper/etc/new")" = new ]
	[ "$(stat -c %t:%T "$W/upper/etc/motd")" = 0:0 ]
	# the layer itself is untouched
	[ -f "$("$B" layers small)/etc/motd" ]
}

@test "the shared corpus's control image mounts under overlay as cases.json says" {
	# the repo's host path (LFS_REPO is a bind mount of it in the guest)
	H=$(sed -n 's/.*LFS_REPO=\([^ ]*\).*/\1/p' /proc/cmdline)/../shared/oci-hostile
	[ -d "$H/control-normal" ] || skip "no shared corpus"
	"$B" import "$H/control-normal:control-normal" --whiteout=chardev
	"$B" mount control-normal "$W/mnt" --fstype overlay >/dev/null
	python3 - "$H/cases.json" "$W/mnt" <<'PY'
import json, os, stat, sys, hashlib
case = next(c for c in json.load(open(sys.argv[1]))["cases"] if c["name"] == "control-normal")
root = sys.argv[2]
bad = []
for w in case["must_contain"]:
    p = root + w["path"]
    st = os.lstat(p)
    if "mode" in w and "%04o" % stat.S_IMODE(st.st_mode) != w["mode"]:
        bad.append(w["path"] + " mode")
    if w.get("sha256") and hashlib.sha256(open(p, "rb").read()).hexdigest() != w["sha256"]:
        bad.append(w["path"] + " content")
    if "linkname" in w and os.readlink(p) != w["linkname"]:
        bad.append(w["path"] + " link")
for path in case["must_not_contain"]:
    if os.path.lexists(root + path):
        bad.append(path + " present")
assert not bad, bad
PY
}
