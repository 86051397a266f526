#!/bin/bash
# What a test run cost: every suite's seconds, then the slowest tests.
#   vm/timings.sh [-n N] LABEL=TAP...
# TAPs are merged ones (vm/tap-merge.sh): "# suite NAME SECONDS" lines, then
# bats --timing lines ("ok 7 name in 1234ms").  LABEL names where the TAP
# ran (host, vm).  Prints the suites, longest first, each with the seconds
# its tests did not account for (setup_file, teardown_file, bats itself),
# and the N (default 15) slowest tests with their suite.
set -uo pipefail
top=15
if [ "${1:-}" = -n ]; then
	top=$2
	shift 2
fi
for arg in "$@"; do
	label=${arg%%=*} tap=${arg#*=}
	[ -f "$tap" ] || continue
	awk -v label="$label" '
		function flush() {
			if (suite != "")
				printf "S %s %s %s %.1f\n", label, suite, secs, secs - tests
		}
		/^# suite / { flush(); suite = $3; secs = $4; tests = 0; next }
		/^(not )?ok [0-9]+ .* in [0-9]+ms/ {
			ms = $0
			sub(/.* in /, "", ms); sub(/ms.*/, "", ms)
			tests += ms / 1000
			name = $0
			sub(/^(not )?ok [0-9]+ /, "", name); sub(/ in [0-9]+ms.*/, "", name)
			printf "T %s %s %.1f %s\n", label, suite, ms / 1000, name
		}
		END { flush() }' "$tap"
done >"${TMPDIR:-/tmp}/lfs-timings.$$"
f=${TMPDIR:-/tmp}/lfs-timings.$$
echo "== suite timings (seconds; outside: what setup_file, teardown_file and bats took beside the tests)"
grep '^S ' "$f" | sort -k4,4gr |
	awk '{ printf "  %-5s %-28s %7s  outside %6s\n", $2, $3, $4, $5 }'
echo "== the $top slowest tests (seconds)"
grep '^T ' "$f" | sort -k4,4gr | head -n "$top" |
	awk '{ s = $4; l = $2; u = $3; $1 = $2 = $3 = $4 = ""; sub(/^ +/, "");
		printf "  %7s  %-5s %s: %s\n", s, l, u, $0 }'
rm -f "$f"
