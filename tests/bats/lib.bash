# Shared helpers for the guest suites.  Load with: load lib
#
# Process start costs ~60 ms in the guest, so helpers lean on bash
# builtins and on tools/lfs-probe, which does a whole job per process.

LFS_BIN=$LFS_REPO/build/bin
PROBE=$LFS_BIN/lfs-probe
LFS_MOUNT=$LFS_BIN/layerfs-mount
# serves a directory read-only over FUSE: lfs-fuse DIR MNT (tools/lfs-fuse.c)
LFS_FUSE=$LFS_BIN/lfs-fuse

# Filesystems the layers are tested on: tmpfs and the ext4 scratch disk.
LFS_FILESYSTEMS=(tmpfs ext4)

# lfs_workdir FS: a fresh directory on FS (tmpfs or ext4; xfs and btrfs
# once a suite has mounted them at $LFS_XFS and $LFS_BTRFS), removed by
# lfs_cleanup.
lfs_workdir() {
	local base
	case $1 in
	tmpfs) base=/tmp/lfs-tests ;;
	ext4) base=$LFS_EXT4 ;;
	xfs) base=${LFS_XFS:?no XFS mounted} ;;
	btrfs) base=${LFS_BTRFS:?no btrfs mounted} ;;
	*) echo "lfs_workdir: unknown filesystem $1" >&2; return 1 ;;
	esac
	LFS_SEQ=$((${LFS_SEQ:-0} + 1))
	WORK=$base/w-$BATS_SUITE_TEST_NUMBER-$LFS_SEQ
	LFS_WORKDIRS+=("$WORK")
	mkdir -p "$WORK/mnt"
	# reachable by the unprivileged users some tests run as
	chmod 755 "$base" "$WORK"
}

# Unmount what a test mounted under its work directories, remove them.
lfs_cleanup() {
	local m w mounts=()
	while read -r _ m _; do
		for w in "${LFS_WORKDIRS[@]}"; do
			[[ $m == "$w" || $m == "$w"/* ]] && mounts+=("$m")
		done
	done </proc/mounts
	# innermost first
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" || umount -l "${mounts[i]}"
	done
	[ ${#LFS_WORKDIRS[@]} = 0 ] || rm -rf "${LFS_WORKDIRS[@]}"
	LFS_WORKDIRS=()
}

# mktree ROOT: build trees under ROOT from the spec on stdin (see lfs-probe).
mktree() {
	"$PROBE" mktree "$1"
}

# lfs_mount_layers MNT LAYER...: mount layerfs from LAYERs (top first) with
# mount(8) and a lowerdir= list.
lfs_mount_layers() {
	local mnt=$1 list
	shift
	list=$(IFS=:; echo "$*")
	mount -t layerfs none "$mnt" -o "lowerdir=$list"
}

# expect_tree MNT SPEC: the dump of MNT equals the dump of a plain tree
# built from SPEC (lines as for mktree, paths relative to the tree).  The
# tree is built now, after the layers: dump -p leaves out mtimes, blocks
# and what a merged directory cannot share with a plain one.
expect_tree() {
	local mnt=$1 spec=$2 ref=$WORK/expected
	mkdir -p "$ref/x"
	sed 's|^\([a-zA-Z]\) |\1 x/|' <<<"$spec" | mktree "$ref" || return 1
	diff -u <("$PROBE" dump -p "$ref/x") <("$PROBE" dump -p "$mnt")
}
