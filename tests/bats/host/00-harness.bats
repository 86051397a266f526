#!/usr/bin/env bats
# The harness itself: it must fail when something is wrong.
#
# The kernel log scanner, and the judge (vm/judge.sh) shown each wrong
# alone, on made-up guest results that are clean but for that one thing:
# each must fail the run with its own line.  01-harness-guests.bats shows
# that real guests gather each fact the judge reads.

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	FIX=$BATS_TEST_DIRNAME/fixtures
	SUITE=$REPO/vm/guest/selftest.bats
}

# lfs_clean_results DIR: the results of a guest run in which all went well
lfs_clean_results() {
	local d=$1
	mkdir -p "$d/suites"
	echo 0 >"$d/qemu.rc"
	echo done >"$d/guest-done"
	echo 0 >"$d/insmod.rc"
	echo 0 >"$d/rmmod.rc"
	echo 4096 >"$d/tainted"
	echo ' debug_locks:                             1' >"$d/debug_locks"
	echo live >"$d/kmemleak.state"
	: >"$d/kmemleak"
	: >"$d/blocked"
	cp "$FIX/klog-clean.txt" "$d/dmesg"
	cp "$FIX/klog-clean.txt" "$d/console.log"
	: >"$d/kmsg"
	printf '%s\n' '1..4' 'ok 1 the layerfs module is loaded in 12ms' \
		'ok 2 harness self-test: fails in 3ms # skip only' \
		'ok 3 harness self-test: hangs in 3ms # skip only' \
		'ok 4 harness self-test: outlives in 3ms # skip only' >"$d/suites/selftest.tap"
	echo 0 >"$d/suites/selftest.rc"
	echo 2.5 >"$d/suites/selftest.time"
}

# lfs_judge: judge $BATS_TEST_TMPDIR/r as a test run of the self-test suite
lfs_judge() {
	FLAVOUR=debug run "$REPO/vm/judge.sh" test "$BATS_TEST_TMPDIR/r" "$SUITE"
	printf '%s\n' "$output"
}

# lfs_judge_fails LINE: the judgement failed the run and said LINE
lfs_judge_fails() {
	lfs_judge
	[ "$status" = 1 ] || return 1
	[[ $output == *"vm: FAIL: $1"* ]] || return 1
	[[ ${lines[-1]} =~ ^[0-9]+\ passed,\ [1-9][0-9]*\ failed,\ [0-9]+\ skipped$ ]]
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
	[ "$n" -ge 17 ]
}

@test "judge: clean results pass, with the counts" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	lfs_judge
	[ "$status" = 0 ]
	[ "${lines[-1]}" = "1 passed, 0 failed, 3 skipped" ]
}

@test "judge: a failed test fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	sed -i 's/^ok 1 /not ok 1 /' "$BATS_TEST_TMPDIR/r/suites/selftest.tap"
	echo 1 >"$BATS_TEST_TMPDIR/r/suites/selftest.rc"
	lfs_judge_fails "1 test(s) failed"
	[ "${lines[-1]}" = "0 passed, 1 failed, 3 skipped" ]
}

@test "judge: a suite that stopped short of its tests fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	sed -i '/^ok [34] /d' "$BATS_TEST_TMPDIR/r/suites/selftest.tap"
	lfs_judge_fails "suite selftest reported 2 of its 4 tests (the rest counted as failed)"
}

@test "judge: a suite that did not run fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	rm "$BATS_TEST_TMPDIR/r/suites/selftest.tap"
	lfs_judge_fails "suite selftest did not run (4 tests counted as failed)"
}

@test "judge: bats failing with every test passed fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 1 >"$BATS_TEST_TMPDIR/r/suites/selftest.rc"
	lfs_judge_fails "bats exited with status 1 in suite selftest with no failed test"
}

@test "judge: a leak fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 'unreferenced object 0xffff888003a1b200 (size 128):' >"$BATS_TEST_TMPDIR/r/kmemleak"
	lfs_judge_fails "kmemleak reports leaks"
}

@test "judge: kmemleak switched off fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 'off: scan failed: Operation not permitted' >"$BATS_TEST_TMPDIR/r/kmemleak.state"
	lfs_judge_fails "kmemleak is not live at the end: off: scan failed"
}

@test "judge: no word on kmemleak from a debug guest fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	rm "$BATS_TEST_TMPDIR/r/kmemleak.state"
	lfs_judge_fails "kmemleak is not live at the end: no state"
}

@test "judge: lockdep switched off fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo ' debug_locks:                             0' >"$BATS_TEST_TMPDIR/r/debug_locks"
	lfs_judge_fails "lockdep is not live at the end"
}

@test "judge: no lockdep state from a debug guest fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	: >"$BATS_TEST_TMPDIR/r/debug_locks"
	lfs_judge_fails "lockdep is not live at the end"
}

@test "judge: the perf kernel needs neither lockdep nor kmemleak" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	: >"$BATS_TEST_TMPDIR/r/debug_locks"
	echo 'absent: no /sys/kernel/debug/kmemleak' >"$BATS_TEST_TMPDIR/r/kmemleak.state"
	FLAVOUR=perf run "$REPO/vm/judge.sh" test "$BATS_TEST_TMPDIR/r" "$SUITE"
	[ "$status" = 0 ]
}

@test "judge: a task left in D state fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 'pid 77 (lfs_selftest_d) in D state, waiting in lfs_selftest_blocked' >"$BATS_TEST_TMPDIR/r/blocked"
	lfs_judge_fails "tasks left in D state after the tests: pid 77 (lfs_selftest_d)"
}

@test "judge: a failed insmod fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 1 >"$BATS_TEST_TMPDIR/r/insmod.rc"
	rm "$BATS_TEST_TMPDIR/r/rmmod.rc"
	lfs_judge_fails "insmod failed"
}

@test "judge: a failed rmmod fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 1 >"$BATS_TEST_TMPDIR/r/rmmod.rc"
	lfs_judge_fails "module did not unload"
}

@test "judge: a guest killed at the host's limit fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 124 >"$BATS_TEST_TMPDIR/r/qemu.rc"
	rm "$BATS_TEST_TMPDIR/r/guest-done"
	VM_TIMEOUT=77 lfs_judge_fails "guest did not finish within 77s (hung)"
}

@test "judge: suites killed at the guest's limit fail the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo 40 >"$BATS_TEST_TMPDIR/r/run-limit"
	lfs_judge_fails "the suites did not finish within the guest's limit of 40s (killed)"
}

@test "judge: a kernel report that starts mid-line on the console fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	printf 'ok 9 something[   41.000001] BUG: KASAN: use-after-free in lfs_x\n' \
		>>"$BATS_TEST_TMPDIR/r/console.log"
	lfs_judge_fails "kernel log reports problems"
	grep -q 'BUG: KASAN: use-after-free in lfs_x' "$BATS_TEST_TMPDIR/r/klog-findings"
}

@test "judge: a report only /dev/kmsg kept (dmesg cleared, below the console level) fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo '6,812,40000000,-;kmemleak: Kernel memory leak detector disabled' >"$BATS_TEST_TMPDIR/r/kmsg"
	lfs_judge_fails "kernel log reports problems"
}

@test "judge: a taint fails the run" {
	lfs_clean_results "$BATS_TEST_TMPDIR/r"
	echo $((4096 | 512)) >"$BATS_TEST_TMPDIR/r/tainted"
	lfs_judge_fails "kernel tainted: 4608"
}

# The guest suites' lib.bash gives bats a lighter DEBUG trap: a failure
# must still fail its test, and the report still name the command and
# its line, in a helper and in a test's body; a test that loops and
# uses run still passes.
@test "lib.bash's lighter DEBUG trap and clock: failures fail and are reported at their command and line; --timing still times" {
	local t=$BATS_TEST_TMPDIR/t.bats
	cat >"$t" <<-EOF
		LFS_REPO=$REPO
		load $REPO/tests/bats/lib.bash
		helper() {
			local x=1
			[ "\$x" = 2 ]
		}
		=test "fails in a helper" {
			helper
			echo not reached
		}
		=test "fails in the body" {
			local y=3
			[ "\$y" = 4 ]
			echo not reached
		}
		=test "passes" {
			local i n=0
			for ((i = 0; i < 50; i++)); do n=\$((n + 1)); done
			run false
			[ "\$status" = 1 ]
			[ "\$n" = 50 ]
			# the trap that ran is lib.bash's
			[ "\$(declare -f bats_debug_trap | tail -n +2)" = "\$(declare -f lfs_debug_trap | tail -n +2)" ]
			# and the clock is lib.bash's
			[[ \$(declare -f get_mills_since_epoch) == *EPOCHREALTIME* ]]
		}
		=test "takes a second" {
			sleep 1.2
		}
	EOF
	# (written =test: bats would take an @test line here for one of this
	# file's tests)
	sed -i 's/^=test /@test /' "$t"
	# a bats of its own, not this one's environment (nor its libexec
	# directory, first in PATH here)
	run env -i PATH=/usr/bin:/bin bats --tap --timing "$t"
	echo "$output"
	[ "$status" = 1 ]
	[ "${lines[0]}" = 1..4 ]
	[[ ${lines[1]} =~ ^not\ ok\ 1\ fails\ in\ a\ helper\ in\ [0-9]+ms$ ]]
	[[ $output == *"function \`helper' in test file $t, line 5)"*"\`[ \"\$x\" = 2 ]' failed"* ]]
	[[ $output == *"not ok 2 fails in the body"*"(in test file $t, line 13)"*"\`[ \"\$y\" = 4 ]' failed"* ]]
	[[ $output == *"ok 3 passes in "* ]]
	[[ $output != *"not reached"* ]]
	# --timing's clock (lib.bash's, from bash's EPOCHREALTIME)
	local ms
	ms=$(sed -n 's/^ok 4 takes a second in \([0-9]*\)ms$/\1/p' <<<"$output")
	((ms >= 1200 && ms < 10000))
}

@test "timings: each suite's seconds, those its tests did not account for, and the slowest tests" {
	local tap=$BATS_TEST_TMPDIR/tap
	printf '%s\n' '# suite 10-a 12.5' '1..2' 'ok 1 x in 2000ms' \
		'ok 2 y in 500ms # skip why' '# suite 20-b 30.0' '1..1' \
		'not ok 1 z in 10000ms' >"$tap"
	run "$REPO/vm/timings.sh" -n 2 vm="$tap"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[1]} == *" vm "*" 20-b "*" 30.0  outside   20.0" ]]
	[[ ${lines[2]} == *" vm "*" 10-a "*" 12.5  outside   10.0" ]]
	[[ ${lines[4]} == *"10.0  vm    20-b: z" ]]
	[[ ${lines[5]} == *"2.0  vm    10-a: x" ]]
	[ "${#lines[@]}" = 6 ]
}
