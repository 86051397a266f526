#!/bin/bash
# The write-side differential suite (tests/bats/70-write-diff.bats) on
# DIFF_SEEDS seeds a test instead of its time budget: make test-diff-long.
#
#   vm/diff-long.sh
#
# Two guests at once, one vCPU each: one runs the seeds with the upper
# on tmpfs, the other with the upper on ext4 (DIFF_ONLY in the guest:
# the other filesystem's test skips), each with its own results
# (LFS_RESULTS-tmpfs, LFS_RESULTS-ext4) and scratch disk; the planted-
# defect tests of the suite run in both.  Each guest is judged by
# vm/run.sh (every test passed, no kernel report); the run fails if
# either fails.  Environment: DIFF_SEEDS (default 2000), DIFF_SEED_FROM
# (the first seed of both tests, to spread a long run over several
# runs), DIFF_SECS (seconds a seed may take, for the time limits:
# default 30, a debug kernel under TCG takes about 20), FLAVOUR, LFS_KO,
# LFS_GUEST_ENV.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
res=${LFS_RESULTS:-$repo/build/vm-results}
seeds=${DIFF_SEEDS:-2000}
secs=${DIFF_SECS:-30}
env="DIFF_SEEDS=$seeds"
[ -z "${DIFF_SEED_FROM:-}" ] || env+=" DIFF_SEED_FROM=$DIFF_SEED_FROM"
suite=tests/bats/70-write-diff.bats

"$here/run.sh" prepare "$suite" || exit 1
pids=()
for fs in tmpfs ext4; do
	LFS_RESULTS=$res-$fs VM_CPUS=1 \
		LFS_GUEST_ENV="$env DIFF_ONLY=$fs ${LFS_GUEST_ENV:-}" \
		LFS_TEST_TIMEOUT=$((secs * seeds + 600)) \
		VM_TIMEOUT=$((secs * seeds + 1800)) \
		"$here/run.sh" test "$suite" >"$res-$fs.out" 2>&1 &
	pids+=($!)
done
rc=0
for fs in tmpfs ext4; do
	wait "${pids[0]}" || rc=1
	pids=("${pids[@]:1}")
	echo "== upper on $fs ($res-$fs.out):"
	tail -n 3 "$res-$fs.out"
done
exit "$rc"
