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
#   lfs_podman_time VAR CMD...
#       runs CMD in this shell and puts its wall time, in seconds with
#       three decimals, into VAR; returns CMD's status (the benchmarks,
#       tools/bench/podman-*.sh).
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

# A container's tree, in a form two containers can be compared by: type,
# mode, size (not of directories: file system specific) and name (with a
# symlink's target) of everything on its root file system, less what
# podman mounts in (/etc/hosts and friends).  Runs in the container.
LFS_PODMAN_STATE='{
	find / -xdev ! -type d -exec stat -c "%A %s %N" {} +
	find / -xdev -type d -exec stat -c "%A - %N" {} +
} | grep -v -E " /(etc/(hosts|hostname|resolv\.conf)|run/\.containerenv)\$" |
	sort -k 3'

# What the container tests look at after the changes: the deleted names
# (none may be left), the directories that held them, then the whole tree.
LFS_PODMAN_LOOK="
	for f in /etc/os-release /srv/data /usr/share/doc /bin/ls /opt/node /opt/tree; do
		[ ! -e \$f ] || echo still there: \$f
	done
	ls -a /etc /srv /usr/share /opt
	echo --
	md5sum /etc/group
	$LFS_PODMAN_STATE"

# The changes the container tests make in busybox (80-podman and
# 81-podman-rootless): deletions from the bottom layer, from over a
# whiteout, of a hard link, of an opaque directory and of a directory that
# replaced a file; a rename, a new file, an append.  Runs in the container
# (after "set -e").
LFS_PODMAN_CHANGES="
	rm /etc/os-release
	rm -r /srv/data /usr/share/doc
	rm /bin/ls
	rm -rf /opt/node
	mv /opt/tree /opt/tree2
	echo new >/new
	mkdir -p /d/e
	echo extra >>/etc/passwd
	chmod 600 /etc/group"

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

lfs_podman_time() {
	local var=$1 t0=$EPOCHREALTIME us rc=0
	shift
	"$@" || rc=$?
	us=$((${EPOCHREALTIME/./} - ${t0/./}))
	printf -v "$var" '%d.%03d' $((us / 1000000)) $((us % 1000000 / 1000))
	return $rc
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

# Rootless podman (tests/bats/81-podman-rootless.bats): the user lfs, uid
# 1000, with subordinate ids 100000-165535, runs podman in its own user
# namespace as a user of a normal host would.
#
#   lfs_rl_setup [IMAGE...]
#       gives the guest an /etc of its own (the kernel's overlay over the
#       host's read-only one, its upper on tmpfs) with that user in
#       passwd, group, subuid and subgid; makes the user's home on the
#       ext4 scratch disk (the overlay driver needs user.* xattrs, which
#       6.1's tmpfs lacks) and its runtime directory on tmpfs; copies the
#       layouts build/images/IMAGE (default busybox and deep-60) where the
#       user can read them, as $LFS_RL_IMAGES/IMAGE (build/images/IMAGE is a
#       symlink into the host's cache, under /root: the layout itself is
#       copied).
#   lfs_rl_storage NAME [MOUNT_PROGRAM]
#       the storage.conf of one storage (graph root $LFS_RL_HOME/NAME)
#       with that mount_program, or the kernel's overlay without one;
#       later lfs_rl calls use it (LFS_RL_CONF, LFS_RL_GRAPHROOT).
#   lfs_rl_store NAME
#       the storage NAME made from 80-podman's store (busybox as
#       localhost/bb, deep-60 as localhost/deep60, made on the host by
#       vm/run.sh), its owners shifted into the user's namespace as
#       rootless podman would have written them (0 to 1000, N to
#       100000+N-1): pulling deep-60's 60 layers as the user took 500 s in
#       the guest.  The copy is made through an idmapped mount of the
#       store that shows its ids so (lfs-probe idmap): cp -a writes the
#       shifted owners and then the modes, set-id bits kept, in one pass
#       (a second pass, of chown and chmod in python, took 12 s).
#   lfs_rl CMD...
#       runs CMD as the user, with a login's environment.
#   lfs_rl_mounts
#       the container mounts left in the user's podman (podman keeps its
#       mounts in a mount namespace of its own: read through 'podman
#       unshare').
#   lfs_rl_teardown
#       stops the user's processes (podman's pause process holds its
#       namespaces, and with them the containers' mounts), removes the
#       user's storages and unmounts what lfs_rl_setup mounted.
LFS_RL_UID=1000
LFS_RL_HOME=$LFS_EXT4/rl-home
LFS_RL_RUN=/tmp/rl-run
LFS_RL_IMAGES=/tmp/rl-images

lfs_rl_setup() {
	local etc=/tmp/rl-etc img
	[ $# -gt 0 ] || set -- busybox deep-60
	lfs_podman_mount /sys/fs/cgroup -t cgroup2 cgroup2 || return 1
	lfs_podman_mount /var/tmp -t tmpfs -o mode=1777 vartmp || return 1
	# the kernel's overlay over the host's /etc, its upper on tmpfs: a
	# copy of /etc over 9p (cp -a, 1,400 files) took 20 s in the guest
	rm -rf "$etc" && mkdir -p "$etc/upper" "$etc/work" || return 1
	lfs_podman_mount /etc -t overlay rl-etc \
		-o "lowerdir=/etc,upperdir=$etc/upper,workdir=$etc/work" || return 1
	# uid and gid 1000 may be someone's on the host whose root we boot
	# (the new passwd and group made beside, then written over the old)
	awk -F: '$3 != 1000' /etc/passwd >"$etc/passwd" &&
		echo "lfs:x:1000:1000:layerfs tests:$LFS_RL_HOME:/bin/sh" >>"$etc/passwd" &&
		awk -F: '$3 != 1000' /etc/group >"$etc/group" &&
		echo "lfs:x:1000:" >>"$etc/group" &&
		cat "$etc/passwd" >/etc/passwd && cat "$etc/group" >/etc/group &&
		echo "lfs:100000:65536" >/etc/subuid &&
		echo "lfs:100000:65536" >/etc/subgid || return 1
	rm -rf "$LFS_RL_HOME" "$LFS_RL_RUN" "$LFS_RL_IMAGES"
	mkdir -p "$LFS_RL_HOME/.config/containers" "$LFS_RL_RUN" \
		"$LFS_RL_IMAGES" || return 1
	cat >"$LFS_RL_HOME/.config/containers/containers.conf" <<-EOF || return 1
		[containers]
		cgroups = "disabled"
		netns = "none"
		log_driver = "k8s-file"
		[engine]
		cgroup_manager = "cgroupfs"
		events_logger = "file"
		runtime = "crun"
	EOF
	# copies of the layouts (what an OCI layout holds), not build/images'
	# links: those point into root's ~/.cache, which the user cannot search
	for img in "$@"; do
		mkdir "$LFS_RL_IMAGES/$img" &&
			cp -R "$LFS_REPO/build/images/$img/"{oci-layout,index.json,blobs} \
				"$LFS_RL_IMAGES/$img/" || return 1
	done
	chown -R "$LFS_RL_UID:$LFS_RL_UID" "$LFS_RL_HOME" "$LFS_RL_RUN" \
		"$LFS_RL_IMAGES" && chmod 700 "$LFS_RL_RUN" || return 1
	# fuse-overlayfs, as the user (the host's udev would make it so)
	chmod 0666 /dev/fuse
}

lfs_rl_storage() {
	local conf=$LFS_RL_HOME/.config/containers/$1.conf
	{
		echo '[storage]'
		echo 'driver = "overlay"'
		echo "runroot = \"$LFS_RL_RUN/$1\""
		echo "graphroot = \"$LFS_RL_HOME/$1\""
		# (rootless podman takes this one, not graphroot)
		echo "rootless_storage_path = \"$LFS_RL_HOME/$1\""
		echo '[storage.options.overlay]'
		[ -z "${2:-}" ] || echo "mount_program = \"$2\""
	} >"$conf" && chown "$LFS_RL_UID:$LFS_RL_UID" "$conf" || return 1
	LFS_RL_CONF=$conf
	LFS_RL_GRAPHROOT=$LFS_RL_HOME/$1
}

lfs_rl_store() {
	local from=$LFS_EXT4/podman-80/storage idm=/tmp/rl-idmap bad rc=0
	[ -f "$from/overlay-images/images.json" ] || {
		echo "no containers-storage at $from (vm/run.sh makes it)" >&2
		return 1
	}
	# an id past 65535 has no subordinate id (the mount would show it
	# as 65534)
	bad=$(find "$from" \( -uid +65535 -o -gid +65535 \) -print -quit) || return 1
	[ -z "$bad" ] || {
		echo "$bad: its owner has no subordinate id" >&2
		return 1
	}
	mkdir -p "$idm" &&
		"$PROBE" idmap "$from" "$idm" "0 $LFS_RL_UID 1,1 100000 65535" || return 1
	lfs_rl_storage "$1" "${2:-}" && cp -a "$idm" "$LFS_RL_GRAPHROOT" || rc=1
	umount "$idm" && rmdir "$idm" || rc=1
	return $rc
}

lfs_rl() {
	setpriv --reuid=$LFS_RL_UID --regid=$LFS_RL_UID --init-groups \
		env -i HOME="$LFS_RL_HOME" USER=lfs LOGNAME=lfs PATH="$PATH" \
		XDG_RUNTIME_DIR="$LFS_RL_RUN" TMPDIR=/var/tmp \
		CONTAINERS_STORAGE_CONF="${LFS_RL_CONF:?no storage: lfs_rl_storage}" \
		"$@"
}

lfs_rl_mounts() {
	local out
	out=$(lfs_rl podman unshare cat /proc/self/mounts) || return 1
	awk -v home="$LFS_RL_HOME/" \
		'index($2, home) == 1 && $2 ~ /\/merged$/ { print $3, $2 }' <<<"$out"
}

lfs_rl_teardown() {
	local i
	# every container's mount is in the mount namespace of the user's
	# podman (its pause process): killing the user's processes ends it
	# and them, whatever a failed test left; then the storages go
	pkill -KILL -U "$LFS_RL_UID"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pgrep -U "$LFS_RL_UID" >/dev/null || break
		sleep 0.5
	done
	rm -rf "$LFS_RL_HOME" "$LFS_RL_RUN" "$LFS_RL_IMAGES"
	for ((i = ${#LFS_PODMAN_MOUNTED[@]} - 1; i >= 0; i--)); do
		umount "${LFS_PODMAN_MOUNTED[i]}"
	done
	# (the overlay's upper only once it is no longer /etc)
	rm -rf /tmp/rl-etc
	LFS_PODMAN_MOUNTED=()
}
