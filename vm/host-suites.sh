#!/bin/bash
# Run host bats suites one file at a time, as the guest runs its own,
# LFS_HOST_JOBS (default 2: the machine's cores) files at once.
#   vm/host-suites.sh OUTDIR FILE...
# Writes OUTDIR/suites/NAME.{tap,rc,time} and the merged OUTDIR/tap
# (vm/tap-merge.sh), shows each suite's TAP when it ends, and exits 0 only
# if no test failed and every suite reported all its tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
rm -rf "$out"
mkdir -p "$out/suites"

# lfs_host_suite FILE: one suite, its TAP, status and seconds
lfs_host_suite() {
	local name t0
	name=$(basename "$1" .bats)
	t0=$(date +%s.%N)
	bats --tap --timing "$1" >"$out/suites/$name.tap" 2>&1
	echo $? >"$out/suites/$name.rc"
	echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f\n", $1 - $2 }' >"$out/suites/$name.time"
	cat "$out/suites/$name.tap"
}

jobs=${LFS_HOST_JOBS:-2}
for t in "$@"; do
	while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	lfs_host_suite "$t" &
done
wait
"$here/tap-merge.sh" "$out" "$@" >"$out/tap" 2>"$out/problems"
sed 's/^/host: FAIL: /' "$out/problems" >&2
sed -n 's/^# counts \([0-9]*\) \([0-9]*\) \([0-9]*\)$/host suites: \1 passed, \2 failed, \3 skipped/p' "$out/tap"
[ ! -s "$out/problems" ] && grep -q '^# counts [0-9]* 0 ' "$out/tap"
