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

# as_user UID CMD [ARG...]: CMD as UID, with UID as its gid, no groups
as_user() {
	local id=$1
	shift
	setpriv --reuid="$id" --regid="$id" --clear-groups "$@"
}

# lfs_mounts_under DIR...: the mount points at or under any DIR, the last
# mounted first (the order to unmount them in).  A read loop over
# /proc/mounts: untraced, in a subshell of its own (see lfs_untraced).
lfs_mounts_under() (
	trap - DEBUG
	local m d found=()
	while read -r _ m _; do
		for d; do
			if [[ $m == "$d" || $m == "$d"/* ]]; then
				found=("$m" "${found[@]}")
				break
			fi
		done
	done </proc/mounts
	[ ${#found[@]} = 0 ] || printf '%s\n' "${found[@]}"
)

# Unmount what a test mounted under its work directories, remove them.
lfs_cleanup() {
	local m mounts=()
	[ ${#LFS_WORKDIRS[@]} = 0 ] && return 0
	mapfile -t mounts < <(lfs_mounts_under "${LFS_WORKDIRS[@]}")
	for m in "${mounts[@]}"; do
		umount "$m" || umount -l "$m"
	done
	rm -rf "${LFS_WORKDIRS[@]}"
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

# bats 1.8's DEBUG trap records a whole stack trace before every command
# of a test: under TCG it costs ~14 ms a command, and bash loops in tests
# and helpers spent most of their time in it.  This one records what
# bats's failure report reads (bats_error_trap, bats_print_stack_trace):
# the line arrays, and the innermost frame of the test's code as its
# trace, at a third of the cost.  Tracing (bats -x) keeps bats's own.
# The body is text that eval gives to both names: bats's trap took a
# copy of lfs_debug_trap through $(declare -f | tail), a fork and an exec
# at every load of this file, that is at every test.
LFS_DEBUG_TRAP_BODY='{
	[[ ${BATS_INTERRUPTED-NOTSET} == NOTSET &&
		${BATS_TIMED_OUT-NOTSET} == NOTSET ]] || return 0
	case ${1%/*} in
	"$BATS_ROOT"/lib/* | "$BATS_ROOT"/libexec/*) return 0 ;;
	esac
	BATS_DEBUG_LASTLAST_STACK_TRACE=("${BATS_DEBUG_LAST_STACK_TRACE[@]}")
	BATS_DEBUG_LAST_LINENO=("${BASH_LINENO[@]}")
	BATS_DEBUG_LAST_SOURCE=("${BASH_SOURCE[@]}")
	BATS_DEBUG_LAST_STACK_TRACE=("${BASH_LINENO[0]} ${FUNCNAME[1]} ${BASH_SOURCE[1]:-$BATS_TEST_SOURCE}")
}'
eval "lfs_debug_trap() $LFS_DEBUG_TRAP_BODY"

# lfs_untraced CMD [ARG...]: CMD in a subshell without bats's DEBUG trap,
# for bash loops that write a spec or a script for one tool: 40 times
# faster in the guest.  A failure inside is not reported by line: the
# tool the output feeds, or CMD's status, tells.
lfs_untraced() {
	(
		trap - DEBUG
		"$@"
	)
}

# bats's clock for --timing ran date(1) twice a test (in a command
# substitution: a fork and an exec each); bash has the time
if declare -F get_mills_since_epoch >/dev/null; then
	get_mills_since_epoch() {
		local us=${EPOCHREALTIME/[.,]/}
		printf '%d\n' $((10#$us / 1000))
	}
fi

if [ "${BATS_TRACE_LEVEL:-0}" = 0 ] && declare -F bats_debug_trap >/dev/null; then
	eval "bats_debug_trap() $LFS_DEBUG_TRAP_BODY"
fi

# expect_mount_refusals CASE...: each CASE, "DATA|ERRNO|MESSAGE", is a
# layerfs mount on $WORK/mnt with the options DATA that fails with ERRNO
# and logs "layerfs: MESSAGE" (the kernel log is cleared first)
expect_mount_refusals() {
	local c data errno msg out
	dmesg -C
	for c in "$@"; do
		IFS='|' read -r data errno msg <<<"$c"
		out=$("$PROBE" mount2 layerfs "$WORK/mnt" "$data")
		[ "$out" = "mount: $errno" ] || { echo "$data: $out, want $errno"; return 1; }
	done
	out=$(dmesg)
	for c in "$@"; do
		IFS='|' read -r data errno msg <<<"$c"
		[[ $out == *"layerfs: $msg"* ]] || { echo "no log line: $msg"; echo "$out"; return 1; }
	done
}

# opts_of MNT: the options /proc/mounts shows for MNT, in OPTS
opts_of() {
	local m o
	OPTS=
	while read -r _ m _ o _; do
		[ "$m" != "$1" ] || OPTS=$o
	done </proc/mounts
	[ -n "$OPTS" ] || { echo "$1 is not mounted"; return 1; }
}
