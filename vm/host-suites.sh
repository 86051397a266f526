#!/bin/bash
# Run host bats suites one file at a time, as the guest runs its own.
#   vm/host-suites.sh OUTDIR FILE...
# Writes OUTDIR/suites/NAME.{tap,rc,time} and the merged OUTDIR/tap
# (vm/tap-merge.sh), shows the TAP as it comes, and exits 0 only if no
# test failed and every suite reported all its tests.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$1
shift
rm -rf "$out"
mkdir -p "$out/suites"
for t in "$@"; do
	name=$(basename "$t" .bats)
	t0=$(date +%s.%N)
	bats --tap --timing "$t" 2>&1 | tee "$out/suites/$name.tap"
	echo "${PIPESTATUS[0]}" >"$out/suites/$name.rc"
	echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f\n", $1 - $2 }' >"$out/suites/$name.time"
done
"$here/tap-merge.sh" "$out" "$@" >"$out/tap" 2>"$out/problems"
sed 's/^/host: FAIL: /' "$out/problems" >&2
sed -n 's/^# counts \([0-9]*\) \([0-9]*\) \([0-9]*\)$/host suites: \1 passed, \2 failed, \3 skipped/p' "$out/tap"
[ ! -s "$out/problems" ] && grep -q '^# counts [0-9]* 0 ' "$out/tap"
