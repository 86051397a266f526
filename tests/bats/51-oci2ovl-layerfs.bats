#!/usr/bin/env bats
# oci2ovl in the guest, under layerfs: the converted layers (native
# whiteouts), mounted with 'oci2ovl mount' (fsopen + one lowerdir+ per
# layer), must give the same tree as 'umoci unpack', read-only and over an
# upper directory. Its mounts' leases hold their layers against rm and
# gc, and writes through a mount leave the layers as 'oci2ovl verify'
# recorded them.

# The images (tools/oci2ovl/tests/mkimages.sh) and what 'umoci unpack'
# makes of each (lfs_tree.py dump): host-built fixtures
# (tests/bats/fixtures.sh), where umoci and python cost a minute per suite
# here
setup_file() {
	W=$LFS_EXT4/oci2ovl-51
	rm -rf "$W"
	mkdir -p "$W/mnt"
	cp "$LFS_EXT4/fixtures/oci-images/"{churn,deep}.want "$W/"
	# the lease tests' store, imported once (lfs_lease_store)
	OCI2OVL_STORE=$W/store-lease.0 "$LFS_REPO/build/bin/oci2ovl" import \
		"$LFS_EXT4/fixtures/oci-images/img/layout:churn"
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
	mountpoint -q "$W/m2" && umount "$W/m2"
	mountpoint -q "$W/objfs" && umount "$W/objfs"
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

# lfs-probe dump (C: no python to start, half the test's time under TCG)
# prints all that lfs_tree.py dump does and more (link counts, blocks,
# mtimes): two mounts of the same layers must agree on all of it
@test "the printed mount command mounts the same tree" {
	local probe=$LFS_REPO/build/bin/lfs-probe
	"$B" import "$LFS_EXT4/fixtures/oci-images/img/layout:deep"
	cmd=$("$B" mount deep "$W/mnt")
	"$probe" dump "$W/mnt" >"$W/a"
	umount "$W/mnt"
	eval "$cmd"
	"$probe" dump "$W/mnt" >"$W/b"
	grep -q '^a/b/c/d/file - ' "$W/a"
	diff -u "$W/a" "$W/b"
}

# lfs_empty DIR: DIR exists and holds nothing
lfs_empty() {
	local l
	l=$(ls -A "$1") || return 1
	[ -z "$l" ] || { echo "$1 holds: $l"; return 1; }
}

# A store of its own for the lease tests, which holds churn only: gc
# must find the leased layers in no other image's record.  A copy of the
# one setup_file imported (a store names its layers by relative paths):
# an import took seconds a test under TCG
lfs_lease_store() {
	export OCI2OVL_STORE=$W/store-lease
	rm -rf "$OCI2OVL_STORE"
	cp -a "$W/store-lease.0" "$OCI2OVL_STORE"
}

@test "a layerfs mount is leased: rm refuses its image, gc keeps its layers, oci2ovl umount drops it" {
	lfs_lease_store
	"$B" mount churn "$W/mnt" >/dev/null
	id=$(ls "$OCI2OVL_STORE/leases")
	id=${id%.json}
	# mountinfo names the lease's mount
	[ "$(findmnt -n -r -o SOURCE,FSTYPE "$W/mnt")" = "oci2ovl:churn:$id layerfs" ]
	run "$B" rm churn
	echo "$output"
	[ "$status" = 4 ]
	"$B" rm --force churn
	run "$B" gc
	echo "$output"
	[ "$status" = 0 ]
	[ "$(grep -c "kept: image churn mounted on \"$W/mnt\"" <<<"$output")" = 4 ]
	[ "$(ls "$OCI2OVL_STORE/layers" | wc -l)" = 4 ]
	# the mount still has every layer
	$T dump "$W/mnt" >"$W/churn.got"
	diff -u "$W/churn.want" "$W/churn.got"
	"$B" umount "$W/mnt"
	run mountpoint -q "$W/mnt"
	[ "$status" = 32 ]
	lfs_empty "$OCI2OVL_STORE/leases"
	"$B" gc
	lfs_empty "$OCI2OVL_STORE/layers"
}

@test "a lease of a layerfs mount unmounted with umount(8) is stale: rm drops it, gc removes the layers" {
	lfs_lease_store
	"$B" mount churn "$W/mnt" >/dev/null
	umount "$W/mnt"
	run "$B" rm churn
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"dropped the lease of image churn mounted on \"$W/mnt\": not mounted"* ]]
	lfs_empty "$OCI2OVL_STORE/leases"
	"$B" gc
	lfs_empty "$OCI2OVL_STORE/layers"
}

@test "writes through a writable layerfs mount leave its layers as verify recorded them" {
	lfs_lease_store
	"$B" mount churn "$W/mnt" --upper "$W/up" >/dev/null
	# copy-ups of data and metadata, a removal, a rename, a new file
	echo more >>"$W/mnt/etc/passwd"
	chmod 0600 "$W/mnt/usr/bin/tool"
	chown 7:7 "$W/mnt/home/user/file"
	setfattr -n user.new -v 1 "$W/mnt/etc/c"
	rm "$W/mnt/usr/bin/a"
	mv "$W/mnt/d1/again" "$W/mnt/d1/moved"
	echo new >"$W/mnt/etc/new"
	"$B" umount "$W/mnt"
	[ -f "$W/up/etc/new" ]
	run "$B" verify churn
	echo "$output"
	[ "$status" = 0 ]
	[ "$(grep -c ': ok$' <<<"$output")" = 4 ]
	# and verify sees a change made to a layer itself
	d=$("$B" layers churn | tail -n 1)
	echo x >>"$d/etc/passwd"
	run "$B" verify churn
	echo "$output"
	[ "$status" = 3 ]
	[[ $output == *"entry \"etc/passwd\": size "* ]]
}

# lfs_mount_opts DIR: the options /proc/mounts shows for the mount on DIR
lfs_mount_opts() {
	awk -v m="$1" '$2 == m { o = $4 } END { print o }' /proc/mounts
}

@test "an image imported with --objects mounts over its objects as a data-only layer, equals umoci unpack, and with verity=require: its objects have fs-verity" {
	local img=$W/objects.img opts f obj t
	# a filesystem of its own, with fs-verity, which the test kernel has
	# (4 KiB blocks: a small one gets 1 KiB, which 6.1's fs-verity
	# refuses, as a page size must be)
	[ -e /sys/fs/ext4/features/verity ]
	truncate -s 256M "$img"
	mkfs.ext4 -q -b 4096 -O verity "$img"
	mkdir -p "$W/objfs"
	mount -o loop "$img" "$W/objfs"
	export OCI2OVL_STORE=$W/objfs/store
	"$B" import --objects "$LFS_EXT4/fixtures/oci-images/img/layout:churn"
	"$B" import "$LFS_EXT4/fixtures/oci-images/img/layout:deep"
	[ "$(cat "$OCI2OVL_STORE/data")" = objects ]
	[ -n "$(find "$OCI2OVL_STORE/objects" -type f)" ]
	for t in churn deep; do
		run "$B" mount "$t" "$W/mnt"
		echo "$output"
		[ "$status" = 0 ]
		opts=$(lfs_mount_opts "$W/mnt")
		echo "$t: $opts"
		[[ $opts == *"::$OCI2OVL_STORE/objects"* ]]
		[[ $opts == *metacopy=on* ]]
		[[ $opts == *verity=require* ]]
		# every file read through the mount is the image's
		$T dump "$W/mnt" >"$W/$t.got"
		diff -u "$W/$t.want" "$W/$t.got"
		"$B" umount "$W/mnt"
	done
	# the marker carries the object's fs-verity digest
	f=$(find "$OCI2OVL_STORE/layers" -path '*/etc/passwd' -type f | head -n 1)
	obj=$OCI2OVL_STORE/objects$(getfattr -h --only-values -n trusted.overlay.redirect "$f")
	[ "$(getfattr -h -e hex -n trusted.overlay.metacopy "$f" | sed -n 's/.*=0x00240001//p')" = \
		"$(fsverity measure "$obj" | sed 's/^sha256:\([0-9a-f]*\) .*/\1/')" ]
	# a write copies the data up from the object
	"$B" mount churn "$W/mnt" --upper "$W/objup" >/dev/null
	t=$(cat "$W/mnt/etc/passwd")
	echo more >>"$W/mnt/etc/passwd"
	[ "$(cat "$W/mnt/etc/passwd")" = "$t"$'\n'more ]
	"$B" umount "$W/mnt"
	"$B" verify --all
	umount "$W/objfs"
}

# lfs_mapino PATH: "MAJ:MIN INO" of the real file a mapping of PATH's
# first page belongs to, as /proc/self/maps shows it
lfs_mapino() {
	local out
	out=$("$LFS_REPO/build/bin/lfs-probe" ops <<<"mapino $1") || return 1
	echo "${out#*: }"
}

# lfs_cached PATH: how many of PATH's pages are in the page cache
lfs_cached() {
	fincore -n -r -o PAGES "$1"
}

@test "two images with no layer in common that hold one file's data, imported with --objects and mounted at once, read it through one real inode, the object's: one page cache (issue #25)" {
	local img=$W/share.img L=$W/share/layout obj sa sb oa ob o t
	truncate -s 64M "$img"
	mkfs.ext4 -q -b 4096 -O verity "$img"
	mkdir -p "$W/objfs" "$W/m2" "$W/share/a" "$W/share/b"
	mount -o loop "$img" "$W/objfs"
	export OCI2OVL_STORE=$W/objfs/store
	# image a holds a/shared and a/own, image b b/shared (the same 64 KiB)
	# and b/own: one layer each, with nothing else in common
	printf -v t '%65536s' ''
	printf '%s' "${t// /s}" >"$W/share/a/shared"
	cp "$W/share/a/shared" "$W/share/b/shared"
	echo own-a >"$W/share/a/own"
	echo own-b >"$W/share/b/own"
	umoci init --layout "$L"
	for t in a b; do
		umoci new --image "$L:$t"
		umoci insert --image "$L:$t" "$W/share/$t" "/$t"
		"$B" import --objects "$L:$t"
	done
	[ "$(find "$OCI2OVL_STORE/layers" -mindepth 1 -maxdepth 1 | wc -l)" = 2 ]
	# the shared data is one object, both layers' files point at it
	obj=$(sha256sum "$W/share/a/shared")
	obj=/${obj:0:2}/${obj:2:62}
	[ "$(getfattr -h --only-values -n trusted.overlay.redirect "$OCI2OVL_STORE"/layers/*/a/shared)" = "$obj" ]
	[ "$(getfattr -h --only-values -n trusted.overlay.redirect "$OCI2OVL_STORE"/layers/*/b/shared)" = "$obj" ]
	obj=$OCI2OVL_STORE/objects$obj
	[ "$(find "$OCI2OVL_STORE/objects" -type f -exec cmp -s "$W/share/a/shared" {} \; -print)" = "$obj" ]
	"$B" mount a "$W/mnt"
	"$B" mount b "$W/m2"
	sa=$(lfs_mapino "$W/mnt/a/shared")
	sb=$(lfs_mapino "$W/m2/b/shared")
	oa=$(lfs_mapino "$W/mnt/a/own")
	ob=$(lfs_mapino "$W/m2/b/own")
	o=$(lfs_mapino "$obj")
	echo "object $o, a/shared $sa, b/shared $sb, a/own $oa, b/own $ob"
	[[ $o == [0-9a-f]*:[0-9a-f]*" "[0-9]* ]]
	[ "$sa" = "$o" ]
	[ "$sb" = "$o" ]
	[ "$oa" != "$ob" ]
	[ "$oa" != "$o" ]
	# a read through one mount fills the object's page cache, and no
	# other: the layers' files stay sparse and uncached
	sync
	echo 3 >/proc/sys/vm/drop_caches
	[ "$(lfs_cached "$obj")" = 0 ]
	cmp "$W/mnt/a/shared" "$W/share/a/shared"
	[ "$(lfs_cached "$obj")" = 16 ]
	[ "$(lfs_cached "$OCI2OVL_STORE"/layers/*/a/shared)" = 0 ]
	[ "$(lfs_cached "$OCI2OVL_STORE"/layers/*/b/shared)" = 0 ]
	cmp "$W/m2/b/shared" "$W/share/a/shared"
	"$B" umount "$W/m2"
	"$B" umount "$W/mnt"
	umount "$W/objfs"
}
