#!/bin/bash
# Scan kernel logs for reports that fail a test run.
#   vm/scan-klog.sh LOG...
# Prints each offending line with its file; exits 1 if any, 0 if none.
# A missing or unreadable log is not a finding (run.sh checks completion).
patterns=(
	'BUG:'
	'WARNING:'
	'KASAN'
	'UBSAN'
	'Oops'
	'general protection fault'
	'kernel BUG at'
	'Kernel panic'
	'Unable to handle'
	'INFO: task .* blocked for more than'
	'soft lockup'
	'hung_task'
	'detected stalls? on CPU'
	'self-detected stall'
	'unreferenced object 0x'
	'possible (circular|recursive) locking'
	'inconsistent lock state'
	'suspicious RCU usage'
	'turning off the locking correctness validator'
	'memory leak detector disabled'
	'Kmemleak disabled'
	'list_(add|del) corruption'
)
re=$(IFS='|'; echo "${patterns[*]}")
found=0
for log in "$@"; do
	[ -r "$log" ] || continue
	hits=$(grep -aE -- "$re" "$log") || continue
	printf '%s\n' "$hits" | sed "s|^|$(basename "$log"): |"
	found=1
done
exit $found
