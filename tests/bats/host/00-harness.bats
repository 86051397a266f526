#!/usr/bin/env bats
# The harness itself: it must fail when something is wrong.
# These run on the host; the ones that boot a guest use the built kernel
# and module (make test builds them first).

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	FIX=$BATS_TEST_DIRNAME/fixtures
}

@test "the log scanner passes a clean kernel log" {
	run "$REPO/vm/scan-klog.sh" "$FIX/klog-clean.txt"
	[ "$status" = 0 ]
	[ -z "$output" ]
}

@test "the log scanner flags every kind of kernel report on its own" {
	local n=0
	while IFS= read -r line; do
		case $line in "#"* | "") continue ;; esac
		printf '%s\n' "$line" >"$BATS_TEST_TMPDIR/one.log"
		run "$REPO/vm/scan-klog.sh" "$FIX/klog-clean.txt" "$BATS_TEST_TMPDIR/one.log"
		[ "$status" = 1 ] || { echo "not flagged: $line"; return 1; }
		n=$((n + 1))
	done <"$FIX/klog-bad.txt"
	[ "$n" -ge 15 ]
}

# Boot a guest running the smoke suite with one harness self-test switched on.
lfs_selftest_run() {
	LFS_RESULTS=$BATS_TEST_TMPDIR/res LFS_SELFTEST=$1 VM_TIMEOUT=${2:-600} \
		run "$REPO/vm/run.sh" test "$REPO/tests/bats/00-smoke.bats"
	echo "$output" | tail -n 15
}

@test "a failing bats test in the guest fails the run" {
	lfs_selftest_run fail
	[ "$status" != 0 ]
	[ "${lines[-1]}" = "3 passed, 1 failed" ]
}

@test "a guest that hangs fails the run at the timeout" {
	lfs_selftest_run hang 60
	[ "$status" != 0 ]
	[[ $output == *"did not finish within 60s (hung)"* ]]
	[[ ${lines[-1]} == *" passed, "[1-9]*" failed" ]]
}

@test "a WARNING in the guest kernel log fails the run" {
	lfs_selftest_run kmsg-warn
	[ "$status" != 0 ]
	[[ $output == *"kernel log reports problems"* ]]
	grep -q 'WARNING: CPU: 0 PID: .* at harness self-test' "$BATS_TEST_TMPDIR/res/klog-findings"
}

@test "a tainted guest kernel fails the run" {
	lfs_selftest_run taint
	[ "$status" != 0 ]
	[[ $output == *"kernel tainted: "* ]]
}
