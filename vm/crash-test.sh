#!/bin/bash
# Copy-up atomicity across a crash: guests reset without sync (sysrq b)
# in the middle of copying up large files, then booted again on the same
# scratch disk, must show each file with its old or its complete new
# content, and an empty W/work after the mount.  On layerfs some of the
# lower files are pointer files, whose data is an object of a data-only
# layer (lowerdir=L0:L1::D); the kernel's overlay of 6.1 has no such
# layers, so with LFS_FSTYPE=overlay every lower file is a plain one.
#
#   vm/crash-test.sh [-r ROUNDS] [-s SEED] [-n NFILES] [-m MIB] [-d MAXDELAY_MS]
#
# ROUNDS (default 3) crash points take ROUNDS + 1 boots: the first makes
# the lower layers and crashes round 1, each next one checks the round
# before and crashes the next, the last only checks.  Every boot but the
# last must end in the reset (vm/run.sh with LFS_EXPECT_RESET=1); all are
# judged on the kernel log, the last also on module unload and kmemleak.
# Files: NFILES (default 8) of MIB/2..MIB MiB (default MIB 16: the debug
# guest writes 2-10 MiB/s, so larger files cost minutes, not coverage).
# The reset comes once a seeded random number (0..NFILES-1) of the changes
# are done and a seeded random 0..MAXDELAY_MS ms (default 3000) later, so
# the other copy-ups are in flight on any machine; the guest commits the
# scratch disk's journal each second meanwhile (crash-copyup.sh), so that
# most resets find some of them on disk, half done.
#
# Environment: LFS_FSTYPE (layerfs, or overlay to validate the test),
# LFS_CRASH_RESULTS (default build/crash-results), and vm/run.sh's;
# VM_MEM defaults to 1G here (the files take 128 MiB at most): kmemleak's
# scans at the last boot's end grow with the guest's memory (one took
# 43 s at 1G, 67 s at 2G, side by side on a loaded machine).
# The last line is "crash: N rounds passed (...)" or "crash: FAILED ...".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
rounds=3 seed=$((RANDOM % 10000)) nfiles=8 mib=16 maxdelay=3000
while getopts r:s:n:m:d: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	s) seed=$OPTARG ;;
	n) nfiles=$OPTARG ;;
	m) mib=$OPTARG ;;
	d) maxdelay=$OPTARG ;;
	*) exit 2 ;;
	esac
done
fstype=${LFS_FSTYPE:-layerfs}
out=${LFS_CRASH_RESULTS:-$repo/build/crash-results}

[ -x "$repo/build/bin/lfs-stress" ] || {
	echo "crash: no build/bin/lfs-stress: run 'make tools'" >&2
	exit 1
}
rm -rf "$out"
mkdir -p "$out"
echo "crash: $fstype, $rounds rounds, seed $seed, $nfiles files of $((mib / 2))-$mib MiB, reset within $maxdelay ms"

for ((k = 1; k <= rounds + 1; k++)); do
	steps=()
	if [ $k = 1 ]; then
		steps+=(make)
	else
		steps+=("check:$((k - 1))")
	fi
	[ $k -le "$rounds" ] && steps+=("crash:$k")
	keep=0 reset=0
	[ $k -gt 1 ] && keep=1
	[ $k -le "$rounds" ] && reset=1
	echo "crash: boot $k: ${steps[*]}"
	LFS_RESULTS=$out/boot-$k LFS_SCRATCH=$out/scratch.img \
		LFS_SCRATCH_KEEP=$keep LFS_SCRATCH_BLANK=1 LFS_EXPECT_RESET=$reset \
		VM_TIMEOUT=${VM_TIMEOUT:-900} VM_MEM=${VM_MEM:-1G} \
		"$here/run.sh" script vm/guest/crash-copyup.sh "$fstype" "$seed" \
		"$nfiles" "$mib" "$maxdelay" "${steps[@]}" >"$out/boot-$k.out" 2>&1
	rc=$?
	echo $rc >"$out/boot-$k.rc"
	grep -a '^crash: \|^lfs-stress: crash\|^BAD \|^f[0-9]' "$out/boot-$k/console.log" |
		tr -d '\r' | sed 's/^/  /'
	if [ $rc != 0 ]; then
		grep -a '^vm: FAIL' "$out/boot-$k.out" | sed 's/^/  /'
		echo "crash: FAILED at boot $k (see $out/boot-$k)"
		exit 1
	fi
done
olds=0 news=0
while read -r _ _ _ _ o _ n _; do
	olds=$((olds + o)) news=$((news + n))
done < <(cat "$out"/boot-*/crash.log | grep -a '^lfs-stress: crash-check: ')
rm -f "$out/scratch.img"
echo "crash: $rounds rounds passed ($olds files old, $news new after the resets)"
