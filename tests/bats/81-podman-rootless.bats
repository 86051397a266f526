#!/usr/bin/env bats
# Rootless podman on layerfs (issue #26): the user lfs (uid 1000, with
# subordinate ids from a guest-local /etc/subuid, tests/bats/lib-podman.bash)
# pulls, runs, commits and removes images, with podman's overlay driver
# mounting each container's root inside podman's user namespace:
#
#   layerfs         through layerfs-mount as the mount_program (layerfs
#                   mounted in a user namespace: userxattr, whiteout=aufs)
#   overlay         rootless podman's native driver, the kernel's overlay
#                   (userxattr), the reference
#   fuse-overlayfs  the mount_program rootless podman used before that
#
# Each storage runs the same scenario: busybox, a container that deletes,
# renames and writes, a commit of it, the committed image run again, and
# the 60-layer deep-60 image (on the peers only with LFS_RL_PEER_DEEP=1);
# then everything removed.  The container's tree after its changes must
# be the same on all three.  The peers' own checks run only with
# LFS_RL_PEERS=1 (LFS_GUEST_ENV; they took 90 s of make test): the
# scenario on fuse-overlayfs, and on the kernel's overlay the commit, its
# run and the removal of everything; without it the kernel's overlay only
# runs the container whose tree layerfs's must be.

bats_require_minimum_version 1.5.0
load lib
load lib-podman

# (the user pulls deep-60 only for the peers' deep runs)
setup_file() {
	if [ -n "$(rl_peer_deep)" ]; then
		lfs_rl_setup busybox
	else
		lfs_rl_setup busybox deep-60
	fi
}

teardown_file() {
	lfs_rl_teardown
}

# the root and the user, the changes 80-podman makes in busybox, then
# the look at the result
RL_CHANGES="
	set -e
	awk '\$2 == \"/\" { u = \$4 ~ /(^|,)userxattr(,|\$)/ ? \" userxattr\" : \"\"
		print \"root:\", \$3 u }' /proc/mounts
	id -u
	$LFS_PODMAN_CHANGES
	$LFS_PODMAN_LOOK"

# rl_pull_bb: busybox as localhost/bb into the current storage
rl_pull_bb() {
	local id t0=$EPOCHREALTIME
	id=$(lfs_rl podman pull -q "oci:$LFS_RL_IMAGES/busybox:latest") &&
		lfs_rl podman tag "$id" localhost/bb || return 1
	echo "# ${LFS_RL_CONF##*/}: busybox pulled in $(bc <<<"$EPOCHREALTIME - $t0") s" >&3
}

# rl_scenario NAME [no-deep]: the container, its commit and (unless told)
# deep-60 on the current storage; leaves the container's look in $BATS_FILE_TMPDIR/NAME.run
rl_scenario() {
	local out=$BATS_FILE_TMPDIR/$1
	lfs_rl podman run --name "c-$1" --network none --entrypoint sh \
		localhost/bb -c "$RL_CHANGES" >"$out.run" || return 1
	lfs_rl podman commit -q "c-$1" "localhost/bb-$1" >/dev/null || return 1
	lfs_rl podman run --rm --network none --entrypoint sh "localhost/bb-$1" \
		-c "$LFS_PODMAN_LOOK" >"$out.commit" || return 1
	# the committed image is the container's tree
	diff -u <(sed '1,2d' "$out.run") "$out.commit" || return 1
	if [ -z "${2:-}" ]; then
		lfs_rl podman run --rm --network none localhost/deep60 || return 1
	fi
	lfs_rl podman rm "c-$1" >/dev/null &&
		lfs_rl podman rmi "localhost/bb-$1" >/dev/null || return 1
	echo "containers left: $(lfs_rl podman ps -aq | wc -l)"
	echo "mounts left: $(lfs_rl_mounts | wc -l)"
}

# rl_reference NAME: only the container of the scenario, removed after
# (its look in $BATS_FILE_TMPDIR/NAME.run): the reference a peer gives
rl_reference() {
	lfs_rl podman run --rm --network none --entrypoint sh localhost/bb \
		-c "$RL_CHANGES" >"$BATS_FILE_TMPDIR/$1.run"
}

# rl_expect_run FSTYPE NAME: the container ran on FSTYPE, as the
# namespace's root, and looked at the whole tree
rl_expect_run() {
	diff -u - <(head -2 "$BATS_FILE_TMPDIR/$2.run") <<-EOF
		root: $1
		0
	EOF
	[ "$(wc -l <"$BATS_FILE_TMPDIR/$2.run")" -gt 100 ]
}

# rl_expect FSTYPE NAME [no-deep]: what the scenario must print and leave
rl_expect() {
	rl_expect_run "$1" "$2"
	[ -n "${3:-}" ] || grep -qx "deep: 60 layers merged, /top is 60" <<<"$output"
	diff -u - <(printf '%s\n' "${lines[@]: -2}") <<-'EOF'
		containers left: 0
		mounts left: 0
	EOF
}

# rl_remove_all: podman rmi -a leaves no image and no layer directory
rl_remove_all() {
	lfs_rl podman rmi -a >/dev/null || return 1
	echo "images left: $(lfs_rl podman images -q | wc -l)"
	echo "layers left: $(find "$LFS_RL_GRAPHROOT/overlay" -mindepth 1 \
		-maxdepth 1 -type d ! -name l | wc -l)"
}

@test "rootless podman on layerfs-mount: rmi, pull, run, commit, a 60-layer image" {
	lfs_rl_store mp "$LFS_MOUNT"
	lfs_rl podman rmi localhost/bb
	rl_pull_bb
	run rl_scenario layerfs
	echo "$output"
	[ "$status" = 0 ]
	rl_expect "layerfs userxattr" layerfs
}

# podman --userns=keep-id runs the container as the user's own uid with
# the image's root elsewhere: containers-storage gives a mount program
# that maps ids the mapping as uidmapping=/gidmapping=, and layerfs-mount
# idmaps the layerfs mount with it (FS_ALLOW_IDMAP), so nothing of the
# image is chowned (on the kernel's overlay podman copies the image).
@test "rootless podman --userns=keep-id and --userns=auto on layerfs-mount: the image's owners through an idmapped mount, no chown of the image" {
	lfs_rl_storage mp "$LFS_MOUNT"
	local t0 t1 t2 layer upper before after
	# a file of the image's bottom layer, as it is stored (the user's
	# namespace's root is uid 1000)
	layer=$(lfs_rl podman image inspect --format '{{.GraphDriver.Data.LowerDir}}' localhost/bb)
	layer=${layer##*:}/bin
	before=$(stat -c '%u:%g' "$layer")
	[ "$before" = 1000:1000 ]
	t0=$EPOCHREALTIME
	lfs_rl podman run --rm --network none --entrypoint true localhost/bb
	t1=$EPOCHREALTIME
	run lfs_rl podman run --name keep --userns=keep-id --network none \
		--entrypoint sh localhost/bb -c '
		id -u
		stat -c "%u:%g" /bin /etc/passwd
		awk "\$2 == \"/\" { print \$3 }" /proc/mounts
		echo data >/tmp/mine && stat -c "%u" /tmp/mine'
	t2=$EPOCHREALTIME
	echo "$output"
	[ "$status" = 0 ]
	echo "# keep-id run $(bc <<<"$t2 - $t1") s, plain run $(bc <<<"$t1 - $t0") s" >&3
	diff -u - <(printf '%s\n' "${lines[@]: -5}") <<-'EOF'
		1000
		0:0
		0:0
		layerfs
		1000
	EOF
	# the image's layers were not chowned
	after=$(stat -c '%u:%g' "$layer")
	[ "$after" = "$before" ]
	# the container's file is in its upper as the image would hold uid
	# 1000: the namespace's 1000, subordinate id 100999
	upper=$(lfs_rl podman inspect --format '{{.GraphDriver.Data.UpperDir}}' keep)
	[ "$(stat -c '%u' "$upper/tmp/mine")" = 100999 ]
	lfs_rl podman rm keep
	# --userns=auto: the container's root is none of the user's ids, and
	# podman makes the container's /etc/mtab as itself before the
	# container runs (layerfs-mount maps the caller's own id too, to
	# 65534 or past the map; without it: EOVERFLOW)
	run lfs_rl podman run --name auto --userns=auto --network none \
		--entrypoint sh localhost/bb -c '
		id -u
		stat -c "%u:%g" /bin /etc/passwd
		awk "\$2 == \"/\" { print \$3 }" /proc/mounts
		echo data >/tmp/mine && stat -c "%u" /tmp/mine'
	echo "$output"
	[ "$status" = 0 ]
	diff -u - <(printf '%s\n' "${lines[@]: -5}") <<-'EOF'
		0
		0:0
		0:0
		layerfs
		0
	EOF
	[ "$(stat -c '%u:%g' "$layer")" = "$before" ]
	# the container's root writes as the image's root is stored: the
	# user's own uid, as the namespace's 0
	upper=$(lfs_rl podman inspect --format '{{.GraphDriver.Data.UpperDir}}' auto)
	[ "$(stat -c '%u' "$upper/tmp/mine")" = 1000 ]
	lfs_rl podman rm auto
}

# The peers run deep-60 only with LFS_RL_PEER_DEEP=1 (LFS_GUEST_ENV): it
# is layerfs's scenario that make test must cover, and the peers' deep
# runs (80 s) are a reference a session takes when it changes them
rl_peer_deep() {
	[ "${LFS_RL_PEER_DEEP:-0}" = 1 ] || echo no-deep
}

# rl_peers: the peers' own checks were asked for (their deep runs are
# some of them)
rl_peers() {
	[ "${LFS_RL_PEERS:-0}" = 1 ] || [ "${LFS_RL_PEER_DEEP:-0}" = 1 ]
}

@test "the same on fuse-overlayfs (the same storage; LFS_RL_PEERS=1)" {
	rl_peers || skip "the peer's own checks: LFS_RL_PEERS=1 runs them"
	local deep
	deep=$(rl_peer_deep)
	lfs_rl_storage mp /usr/bin/fuse-overlayfs
	run rl_scenario fuse "$deep"
	echo "$output"
	[ "$status" = 0 ]
	rl_expect "fuse.fuse-overlayfs" fuse "$deep"
}

@test "rootless podman on layerfs-mount: rmi of every image leaves no layer" {
	lfs_rl_storage mp "$LFS_MOUNT"
	run rl_remove_all
	echo "$output"
	[ "$output" = $'images left: 0\nlayers left: 0' ]
}

# (with LFS_RL_PEER_DEEP=1 the user's podman pulls deep-60 here: its 60
# layers take it 500 s in the guest, and a store made on the host would
# need the host's overlay)
@test "the same on rootless podman's native overlay, the reference" {
	local deep id
	deep=$(rl_peer_deep)
	lfs_rl_storage native
	rl_pull_bb
	if [ -z "$deep" ]; then
		id=$(lfs_rl podman pull -q "oci:$LFS_RL_IMAGES/deep-60:latest")
		lfs_rl podman tag "$id" localhost/deep60
	fi
	if ! rl_peers; then
		rl_reference overlay
		rl_expect_run "overlay userxattr" overlay
		return 0
	fi
	run rl_scenario overlay "$deep"
	echo "$output"
	[ "$status" = 0 ]
	rl_expect "overlay userxattr" overlay "$deep"
	run rl_remove_all
	echo "$output"
	[ "$output" = $'images left: 0\nlayers left: 0' ]
}

@test "a container's tree after its changes is the same on layerfs as on the kernel's overlay" {
	[ -f "$BATS_FILE_TMPDIR/layerfs.run" ] && [ -f "$BATS_FILE_TMPDIR/overlay.run" ] ||
		skip "needs the tests before"
	diff -u <(sed '1d' "$BATS_FILE_TMPDIR/overlay.run") \
		<(sed '1d' "$BATS_FILE_TMPDIR/layerfs.run")
}
