#!/usr/bin/env bats
# oci2ovl in the guest, under layerfs: the converted layers (native
# whiteouts), mounted with 'oci2ovl mount' (fsopen + one lowerdir+ per
# layer), must give the same tree as 'umoci unpack', read-only and over an
# upper directory.

# The images (tools/oci2ovl/tests/mkimages.sh) and what 'umoci unpack'
# makes of each (lfs_tree.py dump): host-built fixtures
# (tests/bats/fixtures.sh), where umoci and python cost a minute per suite
# here
setup_file() {
	W=$LFS_EXT4/oci2ovl-51
	rm -rf "$W"
	mkdir -p "$W/mnt"
	cp "$LFS_EXT4/fixtures/oci-images/"{churn,deep}.want "$W/"
}

teardown_file() {
	rm -rf "$LFS_EXT4/oci2ovl-51"
}

setup() {
	W=$LFS_EXT4/oci2ovl-51
	B=$LFS_REPO/build/bin/oci2ovl
	T="python3 $LFS_REPO/tools/oci2ovl/tests/lfs_tree.py"
	export OCI2OVL_STORE=$W/store
}

teardown() {
	mountpoint -q "$W/mnt" && umount "$W/mnt"
	true
}

lfs_layerfs_matches_umoci() { # TAG [mount options...]
	local t=$1
	shift
	"$B" import "$LFS_EXT4/fixtures/oci-images/img/layout:$t"
	run "$B" mount "$t" "$W/mnt" "$@"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == "mount -t layerfs none $W/mnt -o "* ]]
	$T dump "$W/mnt" >"$W/$t.got"
	diff -u "$W/$t.want" "$W/$t.got"
}

@test "layerfs over the churn image's layers equals umoci unpack" {
	lfs_layerfs_matches_umoci churn
}

@test "layerfs over the six-layer image's layers equals umoci unpack" {
	lfs_layerfs_matches_umoci deep
}

@test "layerfs mounts writable with --upper and writes land in upper" {
	lfs_layerfs_matches_umoci churn --upper "$W/upper"
	echo new >"$W/mnt/etc/new"
	umount "$W/mnt"
	[ "$(cat "$W/upper/etc/new")" = new ]
}

@test "the printed mount command mounts the same tree" {
	"$B" import "$LFS_EXT4/fixtures/oci-images/img/layout:deep"
	cmd=$("$B" mount deep "$W/mnt")
	$T dump "$W/mnt" >"$W/a"
	umount "$W/mnt"
	eval "$cmd"
	$T dump "$W/mnt" >"$W/b"
	diff -u "$W/a" "$W/b"
}
