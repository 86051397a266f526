#!/usr/bin/env bats
# Write side under concurrency: 16 processes copy up, write, truncate,
# chmod, rename (directories with lower parts too), link, unlink, mkdir
# and rmdir over the same directories of an 8-layer stack for a minute,
# with the upper on tmpfs and on ext4.  lfs-stress counts the errnos that
# races give (ENOENT, EEXIST, ...) and fails on any other errno and on any
# file whose content is not made of valid records; the harness fails the
# run on any kernel report (WARNING, KASAN, lockdep).  Afterwards the
# lower layers are unchanged and a remount shows the same, valid tree
# with an empty W/work.
#
# LFS_STRESS_SECS (default 40), LFS_STRESS_WORKERS (16) and
# LFS_STRESS_SEED shorten or replay a run (vm/run.sh passes them with
# LFS_GUEST_ENV); LFS_FSTYPE=overlay runs it on the kernel's overlay.

load lib

STRESS=$LFS_BIN/lfs-stress
FSTYPE=${LFS_FSTYPE:-layerfs}
SECS=${LFS_STRESS_SECS:-40}
WORKERS=${LFS_STRESS_WORKERS:-16}

teardown() {
	lfs_cleanup
}

# stress_mount: mount the stack of $WORK/lower with $WORK/U and $WORK/W.
stress_mount() {
	local opts="lowerdir=" i

	for ((i = 0; i < 8; i++)); do
		opts+="$WORK/lower/L$i:"
	done
	opts="${opts%:},upperdir=$WORK/U,workdir=$WORK/W"
	[ "$FSTYPE" = overlay ] && opts+=",redirect_dir=on,index=on"
	mount -t "$FSTYPE" none "$WORK/mnt" -o "$opts"
}

# stress_on FS: the whole check with layers and upper on FS.
stress_on() {
	local seed=${LFS_STRESS_SEED:-$((RANDOM % 100000))} op
	local out=$BATS_TEST_TMPDIR

	lfs_workdir "$1"
	"$STRESS" populate "$WORK/lower" 8
	"$PROBE" dump "$WORK/lower" >"$out/lower.before"
	mkdir "$WORK/U" "$WORK/W"
	stress_mount

	# overlay: an open for write whose copy-up meets a new name put in its
	# place gives EEXIST; tmpfs never does, layerfs must not
	local quirks=()
	[ "$FSTYPE" = overlay ] && quirks=(-x EEXIST)
	run "$STRESS" run -w "$WORKERS" -t "$SECS" -s "$seed" "${quirks[@]}" "$WORK/mnt"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[-1]} == *" by $WORKERS workers; 0 unexpected errors, 0 bad contents" ]]
	# every kind of change happened, not just races
	local -A ok=()
	local name n ops k
	while read -r name n ops k _; do
		[ "$ops" = ops ] && ok[$name]=$k
	done <<<"$output"
	for op in append pwrite0 chmod setxattr create rename rename-exchange \
		link unlink read-verify; do
		[ "${ok[$op]:-0}" -gt 0 ] || { echo "no $op succeeded"; return 1; }
	done
	# and copy-ups: the upper holds directories and files
	[ -n "$(find "$WORK/U" -mindepth 2 -type f -print -quit)" ]

	# the tree at rest: every file valid, and what a remount must show
	"$STRESS" verify "$WORK/mnt"
	"$PROBE" dump "$WORK/mnt" >"$out/tree.before"
	umount "$WORK/mnt"
	"$PROBE" dump "$WORK/lower" >"$out/lower.after"
	diff -u "$out/lower.before" "$out/lower.after"

	stress_mount
	run bash -c "shopt -s dotglob nullglob; echo '$WORK'/W/work/*"
	[ "$status" = 0 ]
	[ -z "$output" ]
	"$PROBE" dump "$WORK/mnt" >"$out/tree.after"
	diff -u "$out/tree.before" "$out/tree.after"
	"$STRESS" verify "$WORK/mnt"
	umount "$WORK/mnt"
}

@test "16 processes copying up, renaming and unlinking in shared directories: tmpfs upper" {
	stress_on tmpfs
}

@test "16 processes copying up, renaming and unlinking in shared directories: ext4 upper" {
	stress_on ext4
}
