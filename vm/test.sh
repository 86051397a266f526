#!/bin/bash
# 'make test' (and 'make test-quick' with --quick): install, build, run the
# host tests and the guest suites, print what each suite and the slowest
# tests cost and the phase timings, and end with one line
# "N passed, M failed, K skipped in W min S s".
#
# --quick: the host tests except those that boot guests, one at a time,
# beside one guest that runs the smoke and core suites (LFS_QUICK_SUITES),
# for the edit-test loop.
# --host-job: the host suites of a full run, in the second guest's place
# (vm/run-suites.sh VM_HOST_JOB): first those that boot guests of their
# own (build/host-b), then the others (build/host-a).
# LFS_BUDGET (seconds, default 1800): a run slower than that warns, unless
# it had to build the kernel.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo" || exit 1
mkdir -p build
start=$SECONDS

# The host suites: those that boot no guest (build/host-a, phase
# host-tests) and those that do (build/host-b, counted in phase guests)
host_a=() host_b=()
for t in tests/bats/host/*.bats; do
	case $t in
	*/01-harness-guests.bats | */40-crash.bats) host_b+=("$t") ;;
	*) host_a+=("$t") ;;
	esac
done

# lfs_host_a: the host-a suites one at a time, their output in
# build/host-a.out; they write their own seconds, for they end before
# or after the guests
lfs_host_a() {
	local t0=$SECONDS rc
	LFS_HOST_JOBS=1 vm/host-suites.sh build/host-a "${host_a[@]}" \
		>build/host-a.out 2>&1
	rc=$?
	echo $((SECONDS - t0)) >build/host-a.seconds
	echo $rc >build/host-a.rc
	return $rc
}

if [ "${1:-}" = --host-job ]; then
	LFS_HOST_JOBS=1 vm/host-suites.sh build/host-b "${host_b[@]}"
	rc=$?
	lfs_host_a || rc=1
	exit $rc
fi
quick=0
[ "${1:-}" != --quick ] || quick=1

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

passed=0 failed=0 skipped=0
lfs_add_counts() { # a merged TAP's "# counts P F S" line
	local p f k
	read -r p f k < <(sed -n 's/^# counts \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p' "$1" 2>/dev/null)
	[ -n "${p:-}" ] || { p=0 f=1 k=0; }
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
}

lfs_summary() {
	local wall=$((SECONDS - start))
	echo
	vm/timings.sh host=build/host-a/tap host=build/host-b/tap vm=build/vm-results/tap
	echo "== phase timings"
	printf '  %s\n' "${phases[@]}"
	if [ "$wall" -gt "${LFS_BUDGET:-1800}" ] && [ $kernel_built = 0 ]; then
		echo "test: WARNING: this run took $((wall / 60)) min, over its budget of $((${LFS_BUDGET:-1800} / 60)) min with a cached kernel"
	fi
	echo "$passed passed, $failed failed, $skipped skipped in $((wall / 60)) min $((wall % 60)) s"
	[ "$failed" = 0 ]
}

kernel_built=0
kimg=${LFS_CACHE:-$HOME/.cache/layerfs}/build-${FLAVOUR:-debug}/arch/x86/boot/bzImage
[ -f "$kimg" ] || kernel_built=1
steps=(deps kernel module tools images)
# the quick suites need no images
[ $quick = 0 ] || steps=(deps kernel module tools)
export LFS_QUICK_SUITES=${LFS_QUICK_SUITES:-tests/bats/00-smoke.bats tests/bats/10-mount.bats tests/bats/30-readdir.bats tests/bats/67-copyup.bats}
for step in "${steps[@]}"; do
	if ! lfs_phase "$step" make -s --no-print-directory "$step"; then
		failed=$((failed + 1))
		lfs_summary
		exit 1
	fi
done

# Two cores, two consumers: the quick run's host suites run beside its
# one guest; a full run's take the second guest's place until they end
# (vm/run-suites.sh VM_HOST_JOB), and that guest then takes what the
# first left in the queue.
rm -rf build/host-a build/host-b build/host-a.seconds build/host-a.rc build/host-a.out
if [ $quick = 1 ]; then
	lfs_host_a &
	host_a_pid=$!
fi

# Each guest's hang limit: about twice what its suites take on an idle
# machine, so that a busy one does not fail, and a hang still ends the run
# (with its report) well inside CI's 90 minutes.
export VM_TIMEOUT=${VM_TIMEOUT:-3300}
if [ $quick = 1 ]; then
	VM_GUESTS=1 VM_CPUS=1 lfs_phase vm-test bash -c 'vm/run-suites.sh $LFS_QUICK_SUITES 2>&1 | tee build/vm.out; exit ${PIPESTATUS[0]}'
else
	export VM_HOST_JOB="vm/test.sh --host-job"
	lfs_phase guests bash -c 'vm/run-suites.sh 2>&1 | tee build/vm.out; exit ${PIPESTATUS[0]}'
fi
vm_rc=$?
read -r p f k < <(tail -n 1 build/vm.out | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
[ -n "${p:-}" ] || { p=0 f=1 k=0; }
[ $vm_rc = 0 ] || [ "$f" != 0 ] || f=1
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
where="in guest 2's place, after the host-b suites"
if [ $quick = 1 ]; then
	wait $host_a_pid
	where="beside the guest"
fi
rc=$(cat build/host-a.rc 2>/dev/null || echo "did not run")
echo "== host-tests ($where)"
cat build/host-a.out
phases+=("$(printf '%-10s %5ss  %s' host-tests "$(cat build/host-a.seconds 2>/dev/null || echo '?')" "$([ "$rc" = 0 ] && echo ok || echo "FAILED ($rc)")") ($where)")
lfs_add_counts build/host-a/tap
if [ $quick = 0 ]; then
	# the guest-booting host suites: their output, their counts, and their
	# seconds
	cat build/vm-results/host-job.out 2>/dev/null || cat build/vm-results.host-job.out 2>/dev/null
	lfs_add_counts build/host-b/tap
	for f in build/host-b/suites/*.time; do
		[ -f "$f" ] && echo "host/$(basename "$f" .time) $(cat "$f")"
	done >build/host-b.times
	{ cat build/host-b.times; cat build/vm-suite-times 2>/dev/null; } |
		awk '!seen[$1]++' | sort >build/vm-suite-times.tmp &&
		mv build/vm-suite-times.tmp build/vm-suite-times
fi

lfs_summary
