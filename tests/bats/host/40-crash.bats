#!/usr/bin/env bats
# Copy-up atomicity across a crash (vm/crash-test.sh), and the harness
# mode it rests on: a guest booted to end in a reset (vm/run.sh with
# LFS_EXPECT_RESET=1) passes only if it reset cleanly.
#
# LFS_CRASH_ROUNDS (default 2) crash points; LFS_FSTYPE=overlay runs the
# crash test on the kernel's overlay (validates the test itself).

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
}

# The crash test runs once, first: its boots that end in a reset are the
# harness's own case of a guest meant to reset (the first test), and its
# verdict is the last test's.  The others boot one-CPU guests of their own.
setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	CRASH=$BATS_FILE_TMPDIR/crash
	export CRASH
	local rc=0
	LFS_CRASH_RESULTS=$CRASH VM_TIMEOUT=900 \
		"$REPO/vm/crash-test.sh" -r "${LFS_CRASH_ROUNDS:-2}" \
		>"$BATS_FILE_TMPDIR/crash.out" 2>&1 || rc=$?
	echo $rc >"$BATS_FILE_TMPDIR/crash.rc"
}

# Boot a guest running crash-copyup.sh steps; LFS_EXPECT_RESET from $1.
lfs_reset_run() {
	local reset=$1

	shift
	LFS_RESULTS=$BATS_TEST_TMPDIR/res LFS_EXPECT_RESET=$reset VM_TIMEOUT=600 \
		LFS_SCRATCH_BLANK=1 VM_CPUS=1 \
		run "$REPO/vm/run.sh" script vm/guest/crash-copyup.sh \
		"${LFS_FSTYPE:-layerfs}" 1 1 2 0 "$@"
	echo "$output" | tail -n 15
}

@test "a guest meant to reset that resets cleanly passes" {
	# the crash test's first boot: it makes the layers and resets
	cat "$CRASH/boot-1.out"
	[ "$(cat "$CRASH/boot-1.rc")" = 0 ]
	grep -q 'sysrq: Resetting' "$CRASH/boot-1/console.log"
	[ ! -e "$CRASH/boot-1/guest-done" ]
	[ -f "$CRASH/boot-1/reset-armed" ]
}

@test "a guest meant to reset that finishes instead fails the run" {
	lfs_reset_run 1
	[ "$status" != 0 ]
	[[ $output == *"guest finished instead of resetting"* ]]
	[[ $output == *"guest did not arm the reset"* ]]
}

@test "a WARNING before an expected reset fails the run" {
	lfs_reset_run 1 warn reset
	[ "$status" != 0 ]
	[[ $output == *"kernel log reports problems"* ]]
	grep -q 'WARNING: CPU: 0 PID: .* at crash self-test' "$BATS_TEST_TMPDIR/res/klog-findings"
}

@test "a guest that resets when it should not fails the run" {
	lfs_reset_run 0 reset
	[ "$status" != 0 ]
	[[ $output == *"guest did not report completion"* ]]
}

@test "copy-ups cut by a reset without sync leave each file old or complete new, and W/work empty" {
	local rounds=${LFS_CRASH_ROUNDS:-2}

	status=$(cat "$BATS_FILE_TMPDIR/crash.rc")
	output=$(cat "$BATS_FILE_TMPDIR/crash.out")
	mapfile -t lines <<<"$output"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[-1]} == "crash: $rounds rounds passed ("* ]]
	# each round was checked after its reset, on a kept scratch disk
	[ "$(grep -c '^  crash: round [0-9]*: passed' <<<"$output")" = "$rounds" ]
	[ "$(grep -c '^  lfs-stress: crash-go: reset at' <<<"$output")" = "$rounds" ]
}
