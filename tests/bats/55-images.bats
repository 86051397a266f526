#!/usr/bin/env bats
# The images/ recipes' big images under layerfs in the guest: the debian
# image (a real distribution, ~33k entries over 4 layers) and the deep
# image (300 generated layers).  Each is imported once with oci2ovl, in
# the char-device whiteout format that the kernel's overlay also reads, so
# both filesystems mount the very same layer directories and must show
# the very same tree.  vm/run.sh imports them on the host and puts the
# store on the scratch disk (minutes faster than here under TCG); when it
# did not, they are imported here.

load lib

setup_file() {
	W=$LFS_EXT4/images-55
	export OCI2OVL_STORE=$W/store
	if [ ! -f "$W/.stamp" ]; then
		rm -rf "$W"
		for img in debian deep; do
			"$LFS_BIN/oci2ovl" import --whiteout chardev --no-sync \
				"$LFS_REPO/build/images/$img:latest" --name "$img" >/dev/null
		done
	fi
	mkdir -p "$W/lfs" "$W/ovl"
	# the store holds both images, as names and layer counts
	[ "$("$LFS_BIN/oci2ovl" list | cut -f1,2 | sort | tr '\t\n' ' ;')" = "debian 4;deep 300;" ]
}

teardown_file() {
	rm -rf "$LFS_EXT4/images-55"
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
	rm -rf "$W/upper" "$W/upper.work" "$W/l"
}

# overlay_short IMAGE TARGET: mount IMAGE's layers with the kernel's
# overlay through short relative names (l/1, l/2, ... top first), as
# container engines do, so that hundreds of layers fit in one page
overlay_short() {
	local i=0 d list=
	mkdir "$W/l"
	while read -r d; do
		i=$((i + 1))
		ln -s "$d" "$W/l/$i"
		list+=${list:+:}l/$i
	done < <("$LFS_BIN/oci2ovl" layers "$1")
	(cd "$W" && mount -t overlay overlay "$2" -o "ro,lowerdir=$list")
}

@test "the debian image over layerfs is the same tree as its layers over the kernel's overlay" {
	"$LFS_BIN/oci2ovl" mount debian "$W/lfs" >/dev/null
	overlay_short debian "$W/ovl"
	"$PROBE" dump "$W/lfs" >"$W/lfs.dump"
	"$PROBE" dump "$W/ovl" >"$W/ovl.dump"
	diff -u "$W/ovl.dump" "$W/lfs.dump"
	# a real distribution, and the layers' changes are there
	local n
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
