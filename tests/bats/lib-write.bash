# Helpers for the write-side suites (65-67).  Load with: load lib; load lib-write
#
# LFS_FSTYPE=layerfs (default) tests layerfs; LFS_FSTYPE=overlay runs the
# same suites against the kernel's overlay (redirect_dir=on,index=on), which
# validates the fs-generic expectations.  Checks of the layerfs on-disk
# format look at $WH and lfs_redirect, which follow the fstype.
#
# Most steps run through "lfs-probe ops" (one process for a whole script of
# operations, see tools/lfs-probe.c): a test writes the steps once and runs
# them on a plain reference tree and on the mount, in one process.

LFS_FSTYPE=${LFS_FSTYPE:-layerfs}

if [ "$LFS_FSTYPE" = overlay ]; then
	# overlay in 6.1 writes whiteouts as character devices 0/0
	WH=chr-whiteout
	LFS_WRITE_OPTS=,redirect_dir=on,index=on
	LFS_LOG_PREFIX="overlayfs: "
	LFS_ORIGIN_XATTR=trusted.overlay.origin
else
	# native whiteout: symlink to "(overlay-whiteout)", xattr whiteout=y
	WH=whiteout
	LFS_WRITE_OPTS=
	LFS_LOG_PREFIX="layerfs: "
	# what a copied-up object records of its lower original
	LFS_ORIGIN_XATTR=trusted.overlay.lfs.origin
fi

# lfs_base FS: where test trees live on FS (tmpfs or ext4)
lfs_base() {
	case $1 in
	tmpfs) LFS_BASE=/tmp/lfs-tests ;;
	ext4) LFS_BASE=$LFS_EXT4 ;;
	*) echo "lfs_base: unknown filesystem $1" >&2; return 1 ;;
	esac
}

# wmount MNT UPPER WORK LAYER...: mount $LFS_FSTYPE on MNT with an upper
# layer, LAYERs top first, through mount(8).
wmount() {
	local mnt=$1 up=$2 wk=$3 IFS=:
	shift 3
	mount -t "$LFS_FSTYPE" none "$mnt" \
		-o "lowerdir=$*,upperdir=$up,workdir=$wk$LFS_WRITE_OPTS"
}

# wmount_data LAYERS UPPER WORK: the mount(2) data string for mount2
wmount_data() {
	echo "lowerdir=$1,upperdir=$2,workdir=$3$LFS_WRITE_OPTS"
}

# lfs_redirect ORIG SAMEDIR: the redirect xattr a directory gets when its
# lower parts live at ORIG (a path from the mount's root, no leading slash).
# layerfs always writes the absolute path; overlay writes only the last
# name when the directory stayed in the same parent (SAMEDIR=same).
lfs_redirect() {
	if [ "$LFS_FSTYPE" = overlay ] && [ "${2:-}" = same ]; then
		echo "${1##*/}"
	else
		echo "/$1"
	fi
}

# run_ops [DIR] <<<SCRIPT: run an ops script; on failure the report shows.
run_ops() {
	"$PROBE" ops "$@"
}

# ops_value OUTPUT LINE: the result the last "LINE: RESULT" in OUTPUT gave,
# in OPS_VALUE.
ops_value() {
	local l
	OPS_VALUE=
	while IFS= read -r l; do
		[[ $l == "$2: "* ]] && OPS_VALUE=${l#"$2: "}
	done <<<"$1"
	[ -n "$OPS_VALUE" ] || { echo "no result for \"$2\" in:"; echo "$1"; return 1; }
}

# Every mount under the test trees named in LFS_WRITE_DIRS, innermost first,
# in one umount; then one rm for the trees.
lfs_write_cleanup() {
	local mounts=()
	[ ${#LFS_WRITE_DIRS[@]} = 0 ] && return 0
	mapfile -t mounts < <(lfs_mounts_under "${LFS_WRITE_DIRS[@]}")
	[ ${#mounts[@]} = 0 ] || umount "${mounts[@]}" || umount -l "${mounts[@]}"
	rm -rf "${LFS_WRITE_DIRS[@]}"
	LFS_WRITE_DIRS=()
}

# same_text WHAT A B: A equals B, or show the difference
same_text() {
	[ "$2" = "$3" ] && return 0
	echo "$1 differ:"
	diff -u <(echo "$2") <(echo "$3")
	return 1
}

# log_mark TEXT: a marker line in the kernel log, to cut it into cases.
# A test that reads the log clears it first (dmesg -C; the console keeps
# every line for the harness): bash reads a long log slowly.
log_mark() {
	echo "lfs-mark $1" >/dev/kmsg
}

# log_since MARK LOG: the kernel log lines after "lfs-mark MARK" up to the
# next marker, from the dmesg output LOG, in LOG_CASE.
log_since() {
	local l on=0
	LOG_CASE=
	while IFS= read -r l; do
		if [[ $l == *"lfs-mark "* ]]; then
			[[ $l == *"lfs-mark $1" ]] && on=1 || on=0
			continue
		fi
		((on)) && LOG_CASE+="$l"$'\n'
	done <<<"$2"
	return 0
}
