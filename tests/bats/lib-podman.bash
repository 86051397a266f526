# podman in the test guest.  Load with: load lib-podman (after lib).
#
# The guest's root is the host's, read-only over 9p, and it has no
# systemd, no cgroup tree and no network: podman runs as root with its
# whole state on tmpfs and a configuration written here, passed through
# CONTAINERS_STORAGE_CONF and CONTAINERS_CONF so nothing on the host's
# /etc/containers is read for storage or engine settings.
#
#   lfs_podman_setup [MOUNT_PROGRAM [MOUNTOPT]]
#       mounts what podman needs (below), writes storage.conf and
#       containers.conf under $LFS_PODMAN_ROOT (default /tmp/podman) and
#       exports the variables.  Images and containers live in podman's
#       default graph root, /var/lib/containers/storage, on tmpfs.  MOUNT_PROGRAM is the overlay driver's
#       mount_program: a path, or "" for the kernel overlay driver without
#       one.  MOUNTOPT is the driver's mountopt (storage.conf), which
#       containers-storage puts in front of the lowerdir=... option string
#       it gives the mount program, when it has no options of its own.
#       Defaults: $LFS_PODMAN_MOUNT_PROGRAM (else build/bin/layerfs-mount)
#       and $LFS_PODMAN_MOUNTOPT (else none: layerfs-mount takes
#       whiteout=aufs by itself in a containers-storage home, see
#       docs/podman.md).
#   lfs_podman_storage_conf MOUNT_PROGRAM MOUNTOPT
#       rewrites storage.conf for another mount program (see below).
#   lfs_podman_teardown
#       removes every container, checks that no container mount is left,
#       and unmounts what lfs_podman_setup mounted (the images go with it).
#   lfs_podman_no_mounts
#       fails, naming them, if container mounts are left.
#   lfs_podman_store DIR
#       copies the containers-storage DIR (made on the host for the same
#       driver and mount program, see vm/run.sh lfs_import_images) into
#       the graph root; call after lfs_podman_setup, before podman runs.
#   lfs_podman_pull LAYOUT NAME
#       loads the OCI layout LAYOUT (tag latest) offline and tags it
#       localhost/NAME.  Tests name images fully (localhost/NAME): a short
#       name would make podman resolve it and write its alias cache under
#       /var/cache/containers, which is on the read-only root.
#
# What is mounted (each only if it is not a mount point already):
#   cgroup2 on /sys/fs/cgroup   podman stops with a bare "no such file or
#                               directory" without it
#   tmpfs on /var/lib/containers, /var/tmp
#                               the graph root, and default places podman
#                               writes to (blob info cache, image copies)
#                               on the read-only root
#   devpts on /dev/pts, tmpfs on /dev/shm, /run are the guest's (vm/guest/init)

LFS_PODMAN_ROOT=${LFS_PODMAN_ROOT:-/tmp/podman}
# podman's own defaults, on the tmpfs mounted below: the option string it
# gives a mount program is as long as on a real system (the graph root is
# in every layer path)
LFS_PODMAN_GRAPHROOT=/var/lib/containers/storage
LFS_PODMAN_RUNROOT=/run/containers/storage
LFS_PODMAN_MOUNTED=()

lfs_podman_mount() {
	local dir=$1
	shift
	mountpoint -q "$dir" && return 0
	mount "$@" "$dir" || return 1
	LFS_PODMAN_MOUNTED+=("$dir")
}

lfs_podman_setup() {
	local prog=${1-${LFS_PODMAN_MOUNT_PROGRAM-$LFS_REPO/build/bin/layerfs-mount}}
	local opt=${2-${LFS_PODMAN_MOUNTOPT-}} r=$LFS_PODMAN_ROOT
	lfs_podman_mount /sys/fs/cgroup -t cgroup2 cgroup2 || return 1
	lfs_podman_mount /var/lib/containers -t tmpfs -o mode=0700 containers || return 1
	lfs_podman_mount /var/tmp -t tmpfs -o mode=1777 vartmp || return 1
	mkdir -p "$r/conf" "$r/tmp" "$r/net" || return 1
	lfs_podman_storage_conf "$prog" "$opt" || return 1
	cat >"$r/conf/containers.conf" <<-EOF || return 1
		[containers]
		cgroups = "disabled"
		netns = "none"
		default_sysctls = []
		log_driver = "k8s-file"
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		runtime = "crun"
		image_copy_tmp_dir = "$r/tmp"
		tmp_dir = "$r/libpod"
		[network]
		network_config_dir = "$r/net"
	EOF
	export CONTAINERS_STORAGE_CONF=$r/conf/storage.conf
	export CONTAINERS_CONF=$r/conf/containers.conf
}

# lfs_podman_storage_conf PROG MOUNTOPT: (re)write storage.conf for the
# mount program PROG ("": none) and the driver's mountopt.  Layers pulled
# with one mount program serve another (both extract the AUFS whiteout
# format), not the driver without one.
lfs_podman_storage_conf() {
	local r=$LFS_PODMAN_ROOT
	export LFS_PODMAN_PROG=$1
	{
		echo '[storage]'
		echo 'driver = "overlay"'
		echo "runroot = \"$LFS_PODMAN_RUNROOT\""
		echo "graphroot = \"$LFS_PODMAN_GRAPHROOT\""
		echo '[storage.options.overlay]'
		[ -z "$1" ] || echo "mount_program = \"$1\""
		[ -z "$2" ] || echo "mountopt = \"$2\""
	} >"$r/conf/storage.conf"
}

# The container mounts podman's overlay driver has made: every mount on
# .../overlay/ID/merged under the graph root (not the graph root's own
# bind mount, .../overlay, which the driver keeps).
lfs_podman_mounts() {
	local _dev mnt fstype _rest
	while read -r _dev mnt fstype _rest; do
		[[ $mnt == "$LFS_PODMAN_GRAPHROOT/"*/merged ]] && echo "$fstype $mnt"
	done </proc/mounts
	# (the loop's status is its last line's test)
	return 0
}

# lfs_podman_no_mounts: no container mount is left
lfs_podman_no_mounts() {
	local left
	left=$(lfs_podman_mounts) || return 1
	[ -z "$left" ] || { echo "container mounts left: $left"; return 1; }
}

lfs_podman_teardown() {
	local left i m
	# (the images go with the graph root's tmpfs: podman rmi of deep60's
	# 60 layers took a minute)
	if [ -n "${CONTAINERS_STORAGE_CONF:-}" ]; then
		podman rm -af -t 0 >/dev/null 2>&1
	fi
	left=$(lfs_podman_mounts)
	# unmount what podman left, so the next test starts clean
	while read -r _ m; do
		[ -z "$m" ] || umount -l "$m"
	done <<<"$left"
	# the driver's bind mount of its home, then everything podman wrote
	local own=()
	while read -r _ m _; do
		[[ $m != "$LFS_PODMAN_GRAPHROOT"* ]] || own=("$m" "${own[@]}")
	done </proc/mounts
	for m in "${own[@]}"; do
		umount "$m"
	done
	rm -rf "$LFS_PODMAN_ROOT" "$LFS_PODMAN_GRAPHROOT" "$LFS_PODMAN_RUNROOT"
	for ((i = ${#LFS_PODMAN_MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${LFS_PODMAN_MOUNTED[i]}"
	done
	LFS_PODMAN_MOUNTED=()
	unset CONTAINERS_STORAGE_CONF CONTAINERS_CONF
	[ -z "$left" ] || {
		echo "podman left mounts behind:" >&2
		echo "$left" >&2
		return 1
	}
}

lfs_podman_pull() {
	local id
	id=$(podman pull -q "oci:$1:latest") || return 1
	podman tag "$id" "localhost/$2"
}

lfs_podman_store() {
	[ -f "$1/overlay-images/images.json" ] || {
		echo "no containers-storage at $1: vm/run.sh copies the images" \
			"in on the host when build/images/{busybox,deep-60} exist" >&2
		return 1
	}
	mkdir -p "$LFS_PODMAN_GRAPHROOT" &&
		cp -a "$1/." "$LFS_PODMAN_GRAPHROOT/"
}
