#!/bin/bash
# Judge what a guest left in its results directory (vm/guest/init).
#   vm/judge.sh test RESULTS SUITE...    the bats files it ran
#   vm/judge.sh script RESULTS SCRIPT
# vm/run.sh calls it once qemu has ended; the host's harness self-tests
# call it on made-up results.  Reads RESULTS/qemu.rc (124 or 137: killed
# at VM_TIMEOUT), and FLAVOUR, LFS_EXPECT_RESET, VM_TIMEOUT from the
# environment.  Prints one "vm: FAIL: ..." line per problem on stderr; in
# test mode the last line is "N passed, M failed, K skipped".  Exits 0 only
# when there is no problem.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 res=$2
shift 2
flavour=${FLAVOUR:-debug}
expect_reset=${LFS_EXPECT_RESET:-0}
timeout_s=${VM_TIMEOUT:-2700}
qemu_rc=$(cat "$res/qemu.rc" 2>/dev/null || echo none)
script=
tests=()
if [ "$mode" = script ]; then
	script=$1
else
	tests=("$@")
fi

problems=()
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	problems+=("guest did not finish within ${timeout_s}s (hung)")
elif [ "$qemu_rc" != 0 ]; then
	problems+=("qemu exited with status $qemu_rc")
fi
if [ "$expect_reset" = 1 ]; then
	# a reset ends qemu (-no-reboot) before the guest can report anything
	[ -f "$res/guest-done" ] && problems+=("guest finished instead of resetting")
	[ -f "$res/reset-armed" ] || problems+=("guest did not arm the reset")
	grep -aq 'sysrq: Resetting' "$res/console.log" ||
		problems+=("console does not show the sysrq reset")
else
	[ -f "$res/guest-done" ] || problems+=("guest did not report completion")
fi

# kernel lines on the console wherever they start (a report can begin
# mid-line, after a test's output), the guest's dmesg, and its record of
# /dev/kmsg since boot, which no dmesg -C clears
grep -aoE '\[ *[0-9]+\.[0-9]+\] .*' "$res/console.log" >"$res/console-kernel"
if ! "$here/scan-klog.sh" "$res/console-kernel" "$res/dmesg" "$res/kmsg" \
	>"$res/klog-findings"; then
	problems+=("kernel log reports problems: see $res/klog-findings")
	sed 's/^/  /' "$res/klog-findings" | head -n 20 >&2
fi
if [ -f "$res/insmod.rc" ] && [ "$(cat "$res/insmod.rc")" != 0 ]; then
	problems+=("insmod failed")
fi
if [ "$expect_reset" != 1 ] && [ "$(cat "$res/insmod.rc" 2>/dev/null)" = 0 ] &&
	[ "$(cat "$res/rmmod.rc" 2>/dev/null)" != 0 ]; then
	problems+=("module did not unload")
	[ ! -s "$res/mounts-left" ] || sed 's/^/  mounted: /' "$res/mounts-left" | head -n 20 >&2
fi
if [ -f "$res/tainted" ]; then
	taint=$(cat "$res/tainted")
	# ignore O (out-of-tree, bit 12) and E (unsigned, bit 13)
	[ $((taint & ~(1 << 12 | 1 << 13))) = 0 ] || problems+=("kernel tainted: $taint")
fi
if [ -s "$res/blocked" ]; then
	problems+=("tasks left in D state after the tests: $(paste -sd';' "$res/blocked")")
fi
if [ -f "$res/run-limit" ]; then
	problems+=("the suites did not finish within the guest's limit of $(cat "$res/run-limit")s (killed)")
fi
# The debug kernel must end with lockdep and kmemleak still watching:
# both switch themselves off after a finding or a resource limit.
if [ -f "$res/guest-done" ] && [ "$flavour" = debug ]; then
	grep -q 'debug_locks: *1' "$res/debug_locks" 2>/dev/null ||
		problems+=("lockdep is not live at the end ($(cat "$res/debug_locks" 2>/dev/null | tr -s ' ' || echo 'no /proc/lockdep_stats'))")
	case $(cat "$res/kmemleak.state" 2>/dev/null) in
	live | skipped:*) ;;
	*) problems+=("kmemleak is not live at the end: $(cat "$res/kmemleak.state" 2>/dev/null || echo 'no state')") ;;
	esac
fi
if [ -s "$res/kmemleak" ]; then
	problems+=("kmemleak reports leaks: see $res/kmemleak")
	head -n 20 "$res/kmemleak" >&2
fi

if [ "$mode" = script ]; then
	src=$(cat "$res/script.rc" 2>/dev/null || echo none)
	# a guest that reset as it was meant to leaves no exit status
	[ "$src" = 0 ] || { [ "$expect_reset" = 1 ] && [ "$src" = none ]; } ||
		problems+=("guest script $script exited with status $src")
	if [ ${#problems[@]} != 0 ]; then
		for p in "${problems[@]}"; do
			echo "vm: FAIL: $p" >&2
		done
		exit 1
	fi
	exit 0
fi

# One TAP for the run from the suites' own, renumbered, each suite's
# tests after a "# suite NAME SECONDS" line; a suite that did not run, or
# ran short of its plan, counts its missing tests as failed.
"$here/tap-merge.sh" "$res" "${tests[@]}" >"$res/tap" 2>"$res/tap-problems"
while IFS= read -r p; do
	problems+=("$p")
done <"$res/tap-problems"
read -r passed failed skipped < <(sed -n 's/^# counts \([0-9]*\) \([0-9]*\) \([0-9]*\)$/\1 \2 \3/p' "$res/tap")
passed=${passed:-0} failed=${failed:-1} skipped=${skipped:-0}
[ "$failed" = 0 ] || problems+=("$failed test(s) failed")

if [ ${#problems[@]} != 0 ]; then
	for p in "${problems[@]}"; do
		echo "vm: FAIL: $p" >&2
	done
	# a run that failed outside the tests counts as one more failure
	[ "$failed" = 0 ] && failed=1
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ ${#problems[@]} = 0 ]
