#!/bin/bash
# 'make test' (and 'make test-quick' with --quick): install, build, run the
# host tests and the guest suites, print what each suite and the slowest
# tests cost and the phase timings, and end with one line
# "N passed, M failed, K skipped in W min S s".
#
# --quick: the host tests except those that boot guests, one at a time,
# beside one guest that runs the smoke and core suites (LFS_QUICK_SUITES),
# for the edit-test loop.
# LFS_BUDGET (seconds, default 1800): a run slower than that warns, unless
# it had to build the kernel.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
cd "$repo" || exit 1
mkdir -p build
start=$SECONDS
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

# The host suites run beside the guests, each on its own: those that boot
# no guest (build/host-a, phase host-tests) one at a time from here, those
# that boot guests of their own (build/host-b) from vm/run-suites.sh
# (VM_HOST_JOB, counted in phase "guests").  Everything after the builds
# shares the two cores, so none of them waits for another to end.
host_a=() host_b=()
for t in tests/bats/host/*.bats; do
	case $t in
	*/01-harness-guests.bats | */40-crash.bats) host_b+=("$t") ;;
	*) host_a+=("$t") ;;
	esac
done
rm -rf build/host-a build/host-b build/host-a.seconds
# The job writes its own seconds: the guests may end before or after it.
(
	t0=$SECONDS
	LFS_HOST_JOBS=1 vm/host-suites.sh build/host-a "${host_a[@]}" \
		>build/host-a.out 2>&1
	rc=$?
	echo $((SECONDS - t0)) >build/host-a.seconds
	exit $rc
) &
host_a_pid=$!

# Each guest's hang limit: about twice what its suites take on an idle
# machine, so that a busy one does not fail, and a hang still ends the run
# (with its report) well inside CI's 90 minutes.
export VM_TIMEOUT=${VM_TIMEOUT:-3300}
if [ $quick = 1 ]; then
	VM_GUESTS=1 VM_CPUS=1 lfs_phase vm-test bash -c 'vm/run-suites.sh $LFS_QUICK_SUITES 2>&1 | tee build/vm.out; exit ${PIPESTATUS[0]}'
else
	export VM_HOST_JOB="env LFS_HOST_JOBS=1 vm/host-suites.sh build/host-b ${host_b[*]}"
	lfs_phase guests bash -c 'vm/run-suites.sh 2>&1 | tee build/vm.out; exit ${PIPESTATUS[0]}'
fi
vm_rc=$?
read -r p f k < <(tail -n 1 build/vm.out | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
[ -n "${p:-}" ] || { p=0 f=1 k=0; }
[ $vm_rc = 0 ] || [ "$f" != 0 ] || f=1
passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
wait $host_a_pid
rc=$?
echo "== host-tests (beside the guests)"
cat build/host-a.out
phases+=("$(printf '%-10s %5ss  %s' host-tests "$(cat build/host-a.seconds 2>/dev/null || echo '?')" "$([ $rc = 0 ] && echo ok || echo "FAILED ($rc)")") (beside the guests)")
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
