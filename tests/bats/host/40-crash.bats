#!/usr/bin/env bats
# Copy-up atomicity across a crash (vm/crash-test.sh), and the harness
# mode it rests on: a guest booted to end in a reset (vm/run.sh with
# LFS_EXPECT_RESET=1) passes only if it reset cleanly.
#
# LFS_CRASH_ROUNDS (default 2) crash points; LFS_FSTYPE=overlay runs the
# crash test on the kernel's overlay (validates the test itself), without
# pointer files: the overlay of 6.1 has no data-only layers.

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
		LFS_SCRATCH_BLANK=1 VM_CPUS=1 VM_MEM=1G \
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
	local rounds=${LFS_CRASH_ROUNDS:-2} g

	status=$(cat "$BATS_FILE_TMPDIR/crash.rc")
	output=$(cat "$BATS_FILE_TMPDIR/crash.out")
	mapfile -t lines <<<"$output"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[-1]} == "crash: $rounds rounds passed ("* ]]
	# each round was checked after its reset, on a kept scratch disk
	[ "$(grep -c '^  crash: round [0-9]*: passed' <<<"$output")" = "$rounds" ]
	[ "$(grep -c '^  lfs-stress: crash-go: reset at' <<<"$output")" = "$rounds" ]
	if [ "${LFS_FSTYPE:-layerfs}" = overlay ]; then
		grep -q '^  lfs-stress: crash-make: .*, 0 of them pointer files$' <<<"$output"
		return 0
	fi
	# pointer files (issue #25), whose data is an object of a data-only
	# layer, in each copy-up step: the metadata-only copy-up (chmod),
	# it and the data copy-up that fills it (chmod-head), the data
	# copy-up straight from the pointer file (overwrite-head); the
	# objects and the pointer files never change
	grep -q '^  lfs-stress: crash-make: .*, [1-9][0-9]* of them pointer files$' <<<"$output"
	for g in chmod chmod-head overwrite-head; do
		[ "$(grep -c "^  f[0-9]* $g  *[a-z].*, pointer file," <<<"$output")" = "$rounds" ]
	done
	[ "$(grep -c '^  lfs-stress: crash-check: .* lower and data-only layers unchanged$' <<<"$output")" = "$rounds" ]
}
