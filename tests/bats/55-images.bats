#!/usr/bin/env bats
# The images/ recipes' big images under layerfs in the guest: the debian
# image (a real distribution, ~33k entries over 4 layers) and the deep
# image (300 generated layers).  Each is imported once with oci2ovl, in
# the char-device whiteout format that the kernel's overlay also reads, so
# both filesystems mount the very same layer directories and must show
# the very same tree.  vm/run.sh imports them on the host and puts the
# store on the scratch disk (twenty minutes faster than here under TCG),
# with the reference of the debian tree (tests/bats/fixtures.sh --images):
# a walk of its 33k entries through the kernel's overlay cost minutes, so
# the whole tree is compared with the layers flattened on the host, and
# with the kernel's overlay where that cannot tell (see the test).

load lib

setup_file() {
	W=$LFS_EXT4/images-55
	export OCI2OVL_STORE=$W/store
	# imported on the host (vm/run.sh): here it would take twenty minutes
	[ -f "$W/.stamp" ] || {
		echo "no image store on the scratch disk: vm/run.sh imports it when" \
			"build/bin/oci2ovl and build/images/{debian,deep} exist" >&2
		return 1
	}
	mkdir -p "$W/lfs" "$W/ovl"
	# the store holds both images, as names and layer counts
	[ "$("$LFS_BIN/oci2ovl" list | cut -f1,2 | sort | tr '\t\n' ' ;')" = "debian 4;deep 300;" ]
}

# The store stays: the scratch disk goes with the guest, and removing its
# 40k files took 100 s here
teardown_file() {
	rm -rf "$LFS_EXT4/images-55/"{lfs,ovl}*
}

setup() {
	W=$LFS_EXT4/images-55
	export OCI2OVL_STORE=$W/store
}

teardown() {
	local m
	for m in "$W/lfs" "$W/ovl"; do
		! mountpoint -q "$m" || umount "$m"
	done
	rm -rf "$W/upper" "$W/upper.work" "$W/l" "$W/l.list"
}

# overlay_short IMAGE TARGET: mount IMAGE's layers with the kernel's
# overlay through short relative names (l/1, l/2, ... top first), as
# container engines do, so that hundreds of layers fit in one page.  The
# links come from one mktree and the list from the same awk: a loop of ln
# cost two minutes for the deep image (a process and bats' trace per step)
overlay_short() {
	set -o pipefail
	mkdir "$W/l"
	"$LFS_BIN/oci2ovl" layers "$1" |
		awk -v list="$W/l.list" '{
			print "l l/" NR " " $0
			printf "%sl/%d", (NR > 1 ? ":" : ""), NR >list
		}' | mktree "$W"
	(cd "$W" && mount -t overlay overlay "$2" -o "ro,lowerdir=$(<"$W/l.list")")
}

@test "the debian image over layerfs is the same tree as its layers over the kernel's overlay" {
	"$LFS_BIN/oci2ovl" mount debian "$W/lfs" >/dev/null
	overlay_short debian "$W/ovl"
	# every entry as the layers flattened on the host show it: names,
	# types, modes, owners, sizes, contents, links, devices, mtimes (in
	# whole seconds, as the layers have them here) and xattrs.  Contents
	# of files up to 8 KiB whole (most of the image's files), of larger
	# ones the first and last 4 KiB, where the hash of the layer's file
	# meets the first page and the last: reading all of it through the
	# debug kernel took two minutes, the first and last 16 KiB 40 s more
	# than these (whole large files are read in 40-objects, 45-deep and
	# 67-copyup)
	"$PROBE" dump -x dirs,blocks -H 4096 "$W/lfs" >"$W/lfs.dump"
	sed -i -E 's/ mt=([0-9]+)\.[0-9]+/ mt=\1/' "$W/lfs.dump"
	diff -u "$W/ref/debian.dump" "$W/lfs.dump"
	# and as the kernel's overlay shows it, where a plain tree on the host
	# cannot tell: the stat of the root, of every directory in more than
	# one layer and of every name any layer has in them (merged
	# directories' link counts, sizes and blocks, files' blocks, mtimes
	# in ns, whited-out names), and the listings of those directories
	local m n
	for m in ovl lfs; do
		(cd "$W/$m" && xargs -d '\n' "$PROBE" stat <"$W/ref/debian.stat" &&
			xargs -d '\n' ls -A1 <"$W/ref/debian.dirs") >"$W/$m.stat"
	done
	sed -i 's/ ino=[0-9]*//' "$W/ovl.stat" "$W/lfs.stat"
	diff -u "$W/ovl.stat" "$W/lfs.stat"
	n=$(grep -c ' nlink=' "$W/lfs.stat")
	echo "$n names in merged directories"
	((n > 2000))
	grep -qx 'usr/share/doc/gzip: ENOENT' "$W/lfs.stat"
	# a real distribution, and the layers' changes are there
	n=$(wc -l <"$W/lfs.dump")
	echo "$n entries"
	((n > 30000))
	local doc
	doc=$(ls -A "$W/lfs/usr/share/doc")
	[ -z "$doc" ]
	[ ! -e "$W/lfs/usr/share/man" ]
	[ -x "$W/lfs/usr/bin/python3" ]
}

@test "the debian image runs its dynamically linked programs on layerfs; writes land in the upper only" {
	local before found= d
	before=$(cat /proc/self/mountinfo | wc -l)
	"$LFS_BIN/oci2ovl" mount debian "$W/lfs" --upper "$W/upper" >/dev/null
	run chroot "$W/lfs" /bin/bash -c '. /etc/os-release && echo "$VERSION_CODENAME" &&
		python3 -c "import sys, json; print(json.dumps(sys.version_info[0]))" &&
		rm -r /usr/lib/python3/dist-packages && echo written >/root/new &&
		ls /usr/lib/python3'
	echo "$output"
	[ "$status" = 0 ]
	[ "${lines[0]}" = bookworm ]
	[ "${lines[1]}" = 3 ]
	[ "${#lines[@]}" = 2 ]
	# the upper holds the new file and the whiteout, nothing of the rest
	[ "$(cat "$W/upper/root/new")" = written ]
	run "$PROBE" dump "$W/upper/usr/lib/python3"
	echo "$output"
	[ "${#lines[@]}" = 1 ]
	[[ ${lines[0]} == "dist-packages l 777 "*" -> (overlay-whiteout) "* ]]
	# the layers still hold what was removed
	while read -r d; do
		[ ! -d "$d/usr/lib/python3/dist-packages" ] || found=yes
	done < <("$LFS_BIN/oci2ovl" layers debian)
	[ "$found" = yes ]
	umount "$W/lfs"
	[ "$(cat /proc/self/mountinfo | wc -l)" = "$before" ]
}

@test "the deep image's 300 layers over layerfs are the same tree as over the kernel's overlay" {
	[ "$("$LFS_BIN/oci2ovl" layers deep | wc -l)" = 300 ]
	"$LFS_BIN/oci2ovl" mount deep "$W/lfs" >/dev/null
	overlay_short deep "$W/ovl"
	diff -u <("$PROBE" dump "$W/ovl") <("$PROBE" dump "$W/lfs")
	[ "$(cat "$W/lfs/top")" = 300 ]
	[ "$(ls "$W/lfs/layers" | wc -l)" = 300 ]
}
