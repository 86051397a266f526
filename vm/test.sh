#!/bin/bash
# 'make test': install, build, run the host tests and the guest suites,
# print phase timings, and end with one line "N passed, M failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo" || exit 1
mkdir -p build

phases=()
lfs_phase() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "== $name"
	"$@"
	rc=$?
	phases+=("$(printf '%-10s %5ss  %s' "$name" $((SECONDS - t0)) "$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")")")
	return $rc
}

lfs_count() { # TAP file -> "passed failed"; a short run counts as a failure
	local ok not skip plan
	ok=$(grep -c '^ok ' "$1")
	skip=$(grep -c '^ok .*# skip' "$1")
	not=$(grep -c '^not ok ' "$1")
	plan=$(sed -n 's/^1\.\.//p' "$1" | head -n 1)
	[ "$((ok + not))" = "${plan:-none}" ] || not=$((not + 1))
	echo "$((ok - skip)) $not"
}

passed=0 failed=0
lfs_summary() {
	echo
	echo "== phase timings"
	printf '  %s\n' "${phases[@]}"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}

for step in deps kernel module tools images; do
	if ! lfs_phase "$step" make -s --no-print-directory "$step"; then
		failed=$((failed + 1))
		lfs_summary
		exit 1
	fi
done

lfs_phase host-tests bash -c 'bats --tap --timing tests/bats/host | tee build/host.tap'
read -r p f < <(lfs_count build/host.tap)
passed=$((passed + p)) failed=$((failed + f))

# every suite in one guest: about 45 minutes on an idle 2-core machine, so
# the hang limit is above run.sh's default of one hour
export VM_TIMEOUT=${VM_TIMEOUT:-5400}
lfs_phase vm-test bash -c 'vm/run.sh test 2>&1 | tee build/vm.out; exit ${PIPESTATUS[0]}'
vm_rc=$?
read -r p f < <(tail -n 1 build/vm.out | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p')
[ -n "${p:-}" ] || { p=0; f=1; }
[ $vm_rc = 0 ] || [ "$f" != 0 ] || f=1
passed=$((passed + p)) failed=$((failed + f))

lfs_summary
