#!/usr/bin/env bats
# The harness itself, with real guests: they do wrongs on purpose
# (vm/guest/init LFS_SELFTEST, vm/selftest/lfs_selftest.ko), to show that
# the guest gathers each fact the judge reads and that each fails the run
# (00-harness.bats shows the judge each wrong alone).  The guests boot in
# setup_file, three at a time, with the built kernel and module (make
# test builds them first): the two that end at a limit first, for they
# wait idle once booted, then the others as places free up.

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
}

# Real guests.  lfs_selftest_start NAME SELFTESTS [VAR=VALUE...]: boot a
# guest on the self-test suite in the background; its output goes to
# $BATS_FILE_TMPDIR/NAME.out, its status to NAME.rc, its results to NAME/.
lfs_selftest_start() {
	local name=$1 which=$2
	shift 2
	while [ "$(jobs -pr | wc -l)" -ge 3 ]; do
		wait -n || :
	done
	(
		# errexit is on here: the failing run must not end the subshell
		rc=0
		env LFS_RESULTS="$BATS_FILE_TMPDIR/$name" LFS_SELFTEST="$which" \
			VM_MEM=1G VM_CPUS=1 VM_TIMEOUT=600 LFS_SCRATCH_BLANK=1 "$@" \
			"$REPO/vm/run.sh" test "$REPO/vm/guest/selftest.bats" \
			>"$BATS_FILE_TMPDIR/$name.out" 2>&1 || rc=$?
		echo $rc >"$BATS_FILE_TMPDIR/$name.rc"
	) &
}

setup_file() {
	export BATS_NO_PARALLELIZE_WITHIN_FILE=true
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	lfs_selftest_start hang hang VM_TIMEOUT=60
	lfs_selftest_start runhang run-hang LFS_RUN_LIMIT=40
	lfs_selftest_start wrongs leak,lockdep-off,blocked,rmmod-fail,test-hang
	lfs_selftest_start more kmemleak-off,insmod-fail,kmsg-warn,taint
	lfs_selftest_start fail fail
	wait
}

# lfs_guest NAME: load that guest's status, output and results dir
lfs_guest() {
	status=$(cat "$BATS_FILE_TMPDIR/$1.rc")
	output=$(cat "$BATS_FILE_TMPDIR/$1.out")
	mapfile -t lines <<<"$output"
	R=$BATS_FILE_TMPDIR/$1
	tail -n 15 "$BATS_FILE_TMPDIR/$1.out"
}

@test "guest: a failing bats test fails the run" {
	lfs_guest fail
	[ "$status" = 1 ]
	[ "${lines[-1]}" = "1 passed, 1 failed, 2 skipped" ]
	grep -q '^not ok 2 harness self-test: this test fails' "$R/tap"
}

@test "guest: a leak, lockdep off, a task in D state, a failed rmmod and a hung test are each found" {
	lfs_guest wrongs
	[ "$status" = 1 ]
	[[ $output == *"vm: FAIL: kmemleak reports leaks"* ]]
	grep -q '^unreferenced object 0x.* (size 128):' "$R/kmemleak"
	[[ $output == *"vm: FAIL: lockdep is not live at the end"* ]]
	[[ $output == *"vm: FAIL: tasks left in D state after the tests: pid "*" (lfs_selftest_d) in D state"* ]]
	[[ $output == *"vm: FAIL: module did not unload"* ]]
	grep -q '^not ok 3 harness self-test: this test outlives its timeout.* # timeout after 20s' "$R/tap"
	[[ $output == *"vm: FAIL: 1 test(s) failed"* ]]
}

@test "guest: kmemleak off, a failed insmod, a WARNING and a taint are each found" {
	lfs_guest more
	[ "$status" = 1 ]
	[[ $output == *"vm: FAIL: kmemleak is not live at the end: off: scan failed"* ]]
	[[ $output == *"vm: FAIL: insmod failed"* ]]
	[[ $output == *"vm: FAIL: kernel log reports problems"* ]]
	grep -q 'WARNING: CPU: 0 PID: .* at harness self-test' "$R/klog-findings"
	[[ $output == *"vm: FAIL: kernel tainted: "* ]]
}

@test "guest: a guest that hangs fails the run at the host's limit" {
	lfs_guest hang
	[ "$status" = 1 ]
	[[ $output == *"vm: FAIL: guest did not finish within 60s (hung)"* ]]
	[[ ${lines[-1]} == *" passed, "[1-9]*" failed, "*" skipped" ]]
}

@test "guest: suites that outlive the guest's limit are killed and the guest still reports" {
	lfs_guest runhang
	[ "$status" = 1 ]
	[[ $output == *"vm: FAIL: the suites did not finish within the guest's limit of 40s (killed)"* ]]
	[ -f "$R/guest-done" ]
	# how far bats got before the kill depends on the machine's load
	[[ $output =~ "vm: FAIL: suite selftest reported "[0-3]" of its 4 tests" ]]
}
