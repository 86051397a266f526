#!/bin/bash
# Merge the guest's per-suite TAP into one TAP for the run.
#   vm/tap-merge.sh RESULTS_DIR SUITE...
# SUITEs are the bats files (repository-relative or absolute) in the order
# they ran; RESULTS_DIR/suites/NAME.{tap,rc,time} are what the guest wrote
# for each (vm/guest/init).  Prints the merged TAP: the plan, then each
# suite's tests renumbered after a line "# suite NAME SECONDS", then
# "# counts PASSED FAILED SKIPPED".  A suite that did not run or reported
# fewer tests than it has (bats --count) counts the missing ones as failed;
# each such problem is printed on stderr, one line each.
set -uo pipefail
res=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")

total=0 passed=0 failed=0 skipped=0 n=0
body=$(mktemp)
trap 'rm -f "$body"' EXIT
for t in "$@"; do
	case $t in /*) ;; *) t=$repo/$t ;; esac
	name=$(basename "$t" .bats)
	want=$(bats --count "$t" 2>/dev/null) || want=0
	total=$((total + want))
	tap=$res/suites/$name.tap
	if [ ! -f "$tap" ]; then
		echo "# suite $name did-not-run" >>"$body"
		echo "suite $name did not run ($want tests counted as failed)" >&2
		failed=$((failed + want))
		continue
	fi
	echo "# suite $name $(cat "$res/suites/$name.time" 2>/dev/null || echo '?')" >>"$body"
	# renumber; print "ok NOT SKIP" counts on the last line
	out=$(awk -v base="$n" '
		/^1\.\.[0-9]+$/ { next }
		/^(not )?ok [0-9]+/ {
			bad = ($1 == "not")
			sub(/^(not )?ok [0-9]+/, "")
			k++
			print (bad ? "not ok " : "ok ") (base + k) $0
			if (bad) nk++
			else if ($0 ~ / # skip/) sk++
			else ok++
			next
		}
		{ print }
		END { printf "@counts %d %d %d\n", ok, nk, sk }' "$tap")
	printf '%s\n' "$out" | sed '$d' >>"$body"
	read -r _ ok nk sk <<<"$(printf '%s\n' "$out" | tail -n 1)"
	passed=$((passed + ok)) failed=$((failed + nk)) skipped=$((skipped + sk))
	got=$((ok + nk + sk))
	n=$((n + got))
	if [ "$got" -lt "$want" ]; then
		echo "suite $name reported $got of its $want tests (the rest counted as failed)" >&2
		failed=$((failed + want - got))
		n=$((n + want - got))
	elif [ "$got" -gt "$want" ]; then
		echo "suite $name reported $got tests, more than its $want" >&2
		failed=$((failed + 1))
	fi
	rc=$(cat "$res/suites/$name.rc" 2>/dev/null || echo none)
	if [ "$rc" != 0 ] && [ "$nk" = 0 ]; then
		echo "bats exited with status $rc in suite $name with no failed test" >&2
		failed=$((failed + 1))
	fi
done
echo "1..$total"
cat "$body"
echo "# counts $passed $failed $skipped"
