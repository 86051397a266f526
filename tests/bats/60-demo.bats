#!/usr/bin/env bats
# 'make demo' in the guest: vm/demo-guest.sh imports the busybox image with
# oci2ovl, mounts it with layerfs over an upper directory on the scratch
# disk, runs its entrypoint (or a command), writes in it, and unmounts.
# The busybox image comes from the host (images/busybox, linked from
# build/images/busybox by 'make image-busybox'; make vm-test builds it).
#
# LFS_DEMO_FSTYPE=overlay runs them on the kernel's overlayfs instead (as a
# check of the demo itself, also on a host that has overlayfs built in).

DEMO_FSTYPE=${LFS_DEMO_FSTYPE:-layerfs}

# lfs_demo NAME ARGS...: run the demo in $LFS_EXT4/NAME; output in NAME.out,
# status in NAME.rc, both in BATS_FILE_TMPDIR.  A failed demo does not stop
# setup_file (errexit would, before the status is written): the tests
# show its output and fail on its status.
lfs_demo() {
	local name=$1 rc=0
	shift
	bash "$LFS_REPO/vm/demo-guest.sh" --layout "$LFS_REPO/build/images/busybox" \
		--fstype "$DEMO_FSTYPE" --dir "$LFS_EXT4/60-demo-$name" "$@" \
		>"$BATS_FILE_TMPDIR/$name.out" 2>&1 || rc=$?
	echo "$rc" >"$BATS_FILE_TMPDIR/$name.rc"
}

# lfs_container_output NAME: what the container printed in that run, into
# $BATS_TEST_TMPDIR/out (the guest has no /dev/fd for <(...))
lfs_container_output() {
	local part
	part=$(sed -n '/^-------- container output/,/^-------- container exited/p' \
		"$BATS_FILE_TMPDIR/$1.out") || return 1
	sed '1d;$d' <<<"$part" >"$BATS_TEST_TMPDIR/out"
}

setup_file() {
	lfs_demo entrypoint
	# shellcheck disable=SC2016 # expanded by the container's shell
	lfs_demo cmd --cmd64 "$(printf %s 'cat /etc/os-release; echo "$GREETING in $PWD"' | base64 -w0)"
}

@test "the demo runs the busybox image from start to end and exits 0" {
	cat "$BATS_FILE_TMPDIR/entrypoint.out"
	[ "$(cat "$BATS_FILE_TMPDIR/entrypoint.rc")" = 0 ]
	grep -c '^==== demo step' "$BATS_FILE_TMPDIR/entrypoint.out" | grep -qx 7
	tail -n 1 "$BATS_FILE_TMPDIR/entrypoint.out" | grep -q "^demo: ok: busybox ran on $DEMO_FSTYPE over 3 layers"
}

@test "the entrypoint sees the merged image, as PID 1 with the config's env and workdir" {
	lfs_container_output entrypoint
	diff -u - "$BATS_TEST_TMPDIR/out" <<'EOF'
Hello from the layerfs demo image: layerfs busybox demo 3
  pid 1 as root in /home/demo, greetings from the image config
  /opt/tree is a regular file, /opt/node is a directory
  1 file(s) in /srv/data; /etc/motd is gone
EOF
}

@test "what the container wrote is in the upper directory, in full, and only there" {
	local up=$LFS_EXT4/60-demo-entrypoint/upper
	(set -o pipefail; cd "$up" && find . -mindepth 1 -printf '%y %m %P\n' | sort -k3) >"$BATS_TEST_TMPDIR/upper"
	diff -u - "$BATS_TEST_TMPDIR/upper" <<'EOF'
d 755 etc
f 644 etc/os-release
f 644 layerfs-demo.txt
EOF
	[ "$(cat "$up/layerfs-demo.txt")" = "written in the container" ]
	# the copied-up file: the image's version 3, then the container's line
	diff -u - "$up/etc/os-release" <<'EOF'
PRETTY_NAME="layerfs busybox demo 3"
NAME="layerfs busybox demo"
ID=layerfs-busybox
VERSION_ID=3
HOME_URL="https://example.invalid/layerfs"
# changed in the container
EOF
}

@test "the image's layer directories are byte for byte the same after the run" {
	local d=$LFS_EXT4/60-demo-entrypoint
	[ -s "$d/layers.before" ]
	cmp "$d/layers.before" "$d/layers.after"
	grep -qx 'layerfs-demo.txt is in the upper directory and in none of the 3 layers' \
		"$BATS_FILE_TMPDIR/entrypoint.out"
}

@test "the demo leaves nothing mounted" {
	run findmnt -rn -o TARGET
	[ "$status" = 0 ]
	[[ $output != *60-demo* ]]
	grep -q '^\$ umount ' "$BATS_FILE_TMPDIR/entrypoint.out"
}

@test "the demo runs a given command instead of the entrypoint" {
	cat "$BATS_FILE_TMPDIR/cmd.out"
	[ "$(cat "$BATS_FILE_TMPDIR/cmd.rc")" = 0 ]
	lfs_container_output cmd
	diff -u - "$BATS_TEST_TMPDIR/out" <<'EOF'
PRETTY_NAME="layerfs busybox demo 3"
NAME="layerfs busybox demo"
ID=layerfs-busybox
VERSION_ID=3
HOME_URL="https://example.invalid/layerfs"
greetings from the image config in /home/demo
EOF
}

@test "the demo names what is missing when there is no image" {
	run bash "$LFS_REPO/vm/demo-guest.sh" --layout /nonexistent/busybox --dir "$BATS_TEST_TMPDIR/d"
	[ "$status" = 1 ]
	[[ $output == *"no OCI layout at /nonexistent/busybox (run 'make image-busybox' on the host"* ]]
}
