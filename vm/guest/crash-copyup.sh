#!/bin/bash
# Guest side of vm/crash-test.sh: copy-up across a reset without sync.
#
#   crash-copyup.sh FSTYPE SEED NFILES MIB MAXDELAY_MS STEP...
#
# Steps, in order, on the ext4 scratch disk under $LFS_EXT4/crash:
#   make      lower layers L0, L1 with NFILES files of MIB/2..MIB MiB and
#             the manifest of their valid contents (lfs-stress crash-make);
#             on layerfs a data-only layer D too, with the objects of the
#             pointer files in L1 (crash-make -d)
#   crash:R   round R: mount FSTYPE with upper and work dirs rR/U, rR/W
#             (and ::D), change all files at once, reset SEED+R ms-seeded
#             later (lfs-stress crash-go); this step does not return
#   check:R   after the reset: what rR/W/work holds, mount again, W/work
#             is empty, every file old or complete new, lower and
#             data-only layers unchanged (lfs-stress crash-check), unmount
#   warn, reset   harness self-tests: a fake WARNING line in the kernel
#             log; arm and reset at once
# Each step's report is appended to $LFS_RESULTS/crash.log (crash-go's
# only goes to the console, which the host keeps).
set -u
fstype=$1 seed=$2 nfiles=$3 mib=$4 maxdelay=$5
shift 5
stress=$LFS_REPO/build/bin/lfs-stress
root=$LFS_EXT4/crash
log=$LFS_RESULTS/crash.log
# pointer files (a data-only layer) on layerfs only: the kernel's overlay
# of 6.1 has none, so there every file is a plain lower file
data=
[ "$fstype" = layerfs ] && data=-d

lfs_say() {
	echo "crash: $*" | tee -a "$log"
}

lfs_fail() {
	lfs_say "FAIL: $*"
	exit 1
}

lfs_mount_round() {
	local r=$root/r$1
	# metacopy=on: a reset may cut the data copy-up that fills a
	# metadata-only copy (lfs-stress's chmod-then-overwrite group), of
	# a plain lower file or of a pointer file, whose data is in D
	local lower=$root/L0:$root/L1

	[ -n "$data" ] && lower+="::$root/D"
	local opts="lowerdir=$lower,upperdir=$r/U,workdir=$r/W,metacopy=on"

	[ "$fstype" = overlay ] && opts+=",redirect_dir=on,index=on"
	mount -t "$fstype" none "$r/mnt" -o "$opts"
}

lfs_crash() {
	local r=$root/r$1 res=$LFS_RESULTS

	mkdir -p "$r/U" "$r/W" "$r/mnt" || lfs_fail "round $1: mkdir"
	sync
	# a journal commit each second, not each five: the reset then finds
	# copy-ups that were in flight on disk, not only what came before
	mount -o remount,commit=1 "$LFS_EXT4" || lfs_fail "round $1: commit=1"
	lfs_mount_round "$1" || lfs_fail "round $1: mount $fstype"
	lfs_say "round $1: $fstype mounted, changing $nfiles files, seed $((seed + $1))"
	# what the host judges besides the console, saved before the reset
	cat /proc/sys/kernel/tainted >"$res/tainted"
	grep -s '^ *debug_locks:' /proc/lockdep_stats >"$res/debug_locks"
	dmesg >"$res/dmesg"
	echo "round $1" >"$res/reset-armed"
	# straight to the console: it drains its report there before the reset
	"$stress" crash-go "$r/mnt" "$r/W" "$root" $((seed + $1)) "$maxdelay" 2>&1
	lfs_fail "round $1: crash-go returned, the guest did not reset"
}

lfs_workdir_entries() {
	(cd "$1" && shopt -s nullglob dotglob && echo *)
}

lfs_check() {
	local r=$root/r$1 left out rc

	[ -d "$r/W" ] || lfs_fail "round $1: no $r/W: was it run?"
	# a reset right after the mount may find W/work not yet on disk
	if [ -d "$r/W/work" ]; then
		left=$(lfs_workdir_entries "$r/W/work")
		lfs_say "round $1: after the reset W/work holds: ${left:-nothing}"
	else
		lfs_say "round $1: after the reset there is no W/work"
	fi
	lfs_mount_round "$1" || lfs_fail "round $1: mount $fstype again"
	[ -d "$r/W/work" ] || lfs_fail "round $1: no W/work after mount"
	left=$(lfs_workdir_entries "$r/W/work")
	[ -z "$left" ] || lfs_fail "round $1: W/work not empty after mount: $left"
	out=$("$stress" crash-check "$r/mnt" "$root" "$r/U" 2>&1)
	rc=$?
	printf '%s\n' "$out" | tee -a "$log"
	umount "$r/mnt" || lfs_fail "round $1: umount"
	[ $rc = 0 ] || lfs_fail "round $1: a file shows neither its old nor its new content"
	lfs_say "round $1: passed"
}

for step in "$@"; do
	case $step in
	make)
		rm -rf "$root"
		mkdir -p "$root"
		t0=$SECONDS
		# shellcheck disable=SC2086 # $data: no word or -d
		out=$("$stress" crash-make $data "$root" "$nfiles" "$mib" "$seed" 2>&1)
		rc=$?
		printf '%s\n' "$out" | tee -a "$log"
		[ $rc = 0 ] || lfs_fail "crash-make"
		sync
		lfs_say "made $nfiles lower files in $((SECONDS - t0)) s"
		;;
	crash:*) lfs_crash "${step#crash:}" ;;
	warn) echo "WARNING: CPU: 0 PID: $$ at crash self-test" >/dev/kmsg ;;
	reset)
		echo reset >"$LFS_RESULTS/reset-armed"
		echo b >/proc/sysrq-trigger
		sleep 30
		lfs_fail "still running after the reset"
		;;
	check:*) lfs_check "${step#check:}" ;;
	*) lfs_fail "unknown step $step" ;;
	esac
done
exit 0
