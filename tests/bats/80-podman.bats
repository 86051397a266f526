#!/usr/bin/env bats
# podman on layerfs: containers-storage's overlay driver with layerfs-mount
# as its mount_program (tests/bats/lib-podman.bash sets podman up).
#
# The busybox image has layers that delete files, replace a directory by a
# file and a file by a directory, and make a directory opaque; deep-60 has
# 60 layers, more than podman's option string can pass through mount(2).
#
# LFS_PODMAN_MOUNT_PROGRAM=/usr/bin/fuse-overlayfs runs the same suite on
# fuse-overlayfs, the mount program podman ships with, to check the suite
# itself (LFS_GUEST_ENV="LFS_PODMAN_MOUNT_PROGRAM=/usr/bin/fuse-overlayfs").
#
# Each podman command costs seconds in this guest: the tests share one
# storage and do their work in few podman calls.  The storage comes with
# busybox as localhost/bb and deep-60 as localhost/deep60, copied in from
# their OCI layouts on the host (vm/run.sh lfs_import_images: pulling
# deep-60 here took minutes under TCG), or pulled here where the host
# could not (in a chroot, containers-storage cannot remount /).

bats_require_minimum_version 1.5.0
load lib
load lib-podman


setup_file() {
	lfs_podman_setup || return 1
	if [ -d "$LFS_EXT4/podman-80/storage" ]; then
		lfs_podman_store "$LFS_EXT4/podman-80/storage"
	else
		# the host could not make the storage (vm/run.sh says why)
		lfs_podman_pull "$LFS_REPO/build/images/busybox" bb &&
			lfs_podman_pull "$LFS_REPO/build/images/deep-60" deep60
	fi
}

teardown_file() {
	lfs_podman_teardown
}

# the file system type podman's mount program gives a container's root,
# and for layerfs the whiteout format and metacopy=on that layerfs-mount
# must have chosen (containers-storage's home is root's alone)
lfs_podman_fstype() {
	case ${LFS_PODMAN_PROG##*/} in
	layerfs-mount) echo layerfs whiteout=aufs metacopy=on ;;
	fuse-overlayfs) echo fuse.fuse-overlayfs ;;
	*) echo "unknown mount program $LFS_PODMAN_PROG" >&2; return 1 ;;
	esac
}

@test "podman runs an image pulled from an OCI layout on the mount program's mount" {
	local fstype
	fstype=$(lfs_podman_fstype)
	run podman run --rm --network none --entrypoint sh localhost/bb -c '
		awk "\$2 == \"/\" { w = \$4 ~ /(^|,)whiteout=aufs(,|\$)/ ? \" whiteout=aufs\" : \"\"
			m = \$4 ~ /(^|,)metacopy=on(,|\$)/ ? \" metacopy=on\" : \"\"
			print \"root:\", \$3 w m }" /proc/mounts
		exec /usr/local/bin/hello'
	echo "$output"
	[ "$status" = 0 ]
	[ "${lines[0]}" = "root: $fstype" ]
	[[ $fstype == layerfs* ]] ||
		skip "fuse-overlayfs 1.10 hides /opt/node, a directory whose whiteout is in its own layer"
	diff -u - <(echo "$output") <<-'EOF'
		root: layerfs whiteout=aufs metacopy=on
		Hello from the layerfs demo image: layerfs busybox demo 3
		  pid 1 as root in /home/demo, greetings from the image config
		  /opt/tree is a regular file, /opt/node is a directory
		  1 file(s) in /srv/data; /etc/motd is gone
	EOF
}

@test "a container's writes and deletions show in the container and in podman diff" {
	run podman run --name c1 --network none --entrypoint sh localhost/bb -c "
		set -e
		$LFS_PODMAN_CHANGES
		$LFS_PODMAN_LOOK"
	[ "$status" = 0 ]
	printf '%s\n' "$output" >"$BATS_FILE_TMPDIR/c1.out"
	diff -u - <(echo "${output%%$'\n'--$'\n'*}") <<-'EOF'
		/etc:
		.
		..
		group
		hostname
		hosts
		mtab
		passwd

		/opt:
		.
		..
		tree2

		/srv:
		.
		..

		/usr/share:
		.
		..
	EOF
	grep -qx -- "-rw-r--r-- 4 /new" <<<"$output"
	run podman diff c1
	echo "$output"
	[ "$status" = 0 ]
	# fuse-overlayfs never showed /opt/node (see the test before)
	diff -u <(
		if [[ $(lfs_podman_fstype) == layerfs* ]]; then
			cat
		else
			grep -vx 'D /opt/node'
		fi <<-'EOF'
			A /d
			A /d/e
			A /new
			A /opt/tree2
			C /bin
			C /etc
			C /etc/group
			C /etc/passwd
			C /opt
			C /srv
			C /usr
			C /usr/share
			D /bin/ls
			D /etc/os-release
			D /opt/node
			D /opt/tree
			D /srv/data
			D /usr/share/doc
		EOF
	) <(sort <<<"$output")
}

@test "podman commit keeps the deletions: the committed image's tree is the container's" {
	[ -f "$BATS_FILE_TMPDIR/c1.out" ] || skip "needs the container of the test before"
	podman commit -q c1 localhost/bb2
	run podman run --rm --network none --entrypoint sh localhost/bb2 -c "$LFS_PODMAN_LOOK"
	[ "$status" = 0 ]
	diff -u "$BATS_FILE_TMPDIR/c1.out" - <<<"$output"
}

@test "podman rm and rmi remove the container and the image and leave no mount behind" {
	podman rm c1
	podman rmi localhost/bb2
	local ids
	ids=$(podman ps -aq)
	[ -z "$ids" ]
	# the two images the storage came with (a pull in the guest names
	# each by its layout too), and not the committed one
	run podman images --format '{{.ID}} {{.Repository}}'
	echo "$output"
	[ "$(cut -d' ' -f1 <<<"$output" | sort -u | wc -l)" = 2 ]
	grep -q ' localhost/bb$' <<<"$output"
	grep -q ' localhost/deep60$' <<<"$output"
	run -1 grep -q bb2 <<<"$output"
	lfs_podman_no_mounts
	! grep -q ' layerfs ' /proc/mounts
}

@test "a 60-layer image starts through the mount program; a plain mount -t overlay helper fails on the option length" {
	run podman run --rm --network none localhost/deep60
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "deep: 60 layers merged, /top is 60" ]
	lfs_podman_no_mounts

	# the kernel's overlay behind mount(8), as a mount program: podman
	# hands it the same option string (less our whiteout=aufs)
	local helper=$LFS_PODMAN_ROOT/overlay-helper
	cat >"$helper" <<-'EOF'
		#!/bin/bash
		[ "$1" = --version ] && exec echo overlay-helper
		opts=${2//whiteout=aufs,/}
		echo "overlay-helper: ${#opts} characters of options" >&2
		exec mount -t overlay overlay "$3" -o "$opts"
	EOF
	chmod +x "$helper"
	sed "s|^mount_program = .*|mount_program = \"$helper\"|" \
		"$CONTAINERS_STORAGE_CONF" >"$LFS_PODMAN_ROOT/conf/overlay.conf"
	CONTAINERS_STORAGE_CONF=$LFS_PODMAN_ROOT/conf/overlay.conf \
		run podman run --rm --network none localhost/deep60
	echo "$output"
	[ "$status" != 0 ]
	local n
	n=$(sed -n 's/.*overlay-helper: \([0-9]*\) characters.*/\1/p' <<<"$output")
	[ "$n" -gt 4096 ]
	[[ $output == *"mount: "* ]]
	lfs_podman_no_mounts
}
