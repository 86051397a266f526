#!/bin/bash
# Run the guest suites over several guests at once and judge them as one.
#   vm/run-suites.sh [BATS_FILE...]     (default: every tests/bats/*.bats)
#
# The suites run on VM_GUESTS guests (default 2, one vCPU each: under TCG
# a guest's tests mostly run one process at a time, so two one-CPU guests
# do about twice the work of one two-CPU guest).  They wait in a queue
# that every guest shares, the longest first by the durations the last
# run measured (build/vm-suite-times), else the committed ones
# (vm/suite-times), else 60 s for a suite neither knows; each guest takes
# the next whenever it ends one.  Each guest is a vm/run.sh with its own
# results (LFS_RESULTS/gN) and scratch disk, judged by run.sh on the
# suites it ran; the run fails if any guest fails or a suite was left in
# the queue.  The guests' TAPs are merged into LFS_RESULTS/tap, and the
# last line is "N passed, M failed, K skipped".
#
# VM_HOST_JOB: a command (make test's host suites) that takes the last
# guest's place until it ends: that guest boots after it, and takes what
# the others left in the queue (none if they took it all).  Two cores
# run two guests best: measured on this machine, four one-CPU guests at
# once each spent 40% more CPU time on the same suites than two did.
# The job's status is its caller's to judge (the job writes its own
# results).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
res=${LFS_RESULTS:-$repo/build/vm-results}
guests=${VM_GUESTS:-2}
measured=$repo/build/vm-suite-times

suites=()
for t in "$@"; do
	suites+=("$(realpath -m --relative-to="$repo" "$t")")
done
if [ ${#suites[@]} = 0 ]; then
	for t in "$repo"/tests/bats/*.bats; do
		suites+=("${t#"$repo"/}")
	done
fi
[ "$guests" -le ${#suites[@]} ] || guests=${#suites[@]}

# lfs_host_job PREFIX: VM_HOST_JOB, in the place of the last guest until
# it ends; its output in PREFIX.out, its status in PREFIX.rc
lfs_host_job() {
	bash -c "$VM_HOST_JOB" >"$1.out" 2>&1
	echo $? >"$1.rc"
}

if [ "$guests" -le 1 ]; then
	# (beside $res: run.sh starts it afresh)
	if [ -n "${VM_HOST_JOB:-}" ]; then
		mkdir -p "$(dirname "$res")"
		lfs_host_job "$res.host-job"
	fi
	LFS_RESULTS=$res exec "$here/run.sh" test "${suites[@]}"
fi

# lfs_weight NAME: the suite's expected seconds
lfs_weight() {
	local f w
	for f in "$measured" "$here/suite-times"; do
		[ -f "$f" ] || continue
		w=$(awk -v n="$1" '$1 == n { print int($2 + 0.5); exit }' "$f")
		[ -z "$w" ] || { echo "$w"; return; }
	done
	echo 60
}

# The queue: one file per suite, named by its rank, the longest first;
# each guest takes the first one left whenever it ends a suite
# (vm/guest/init lfs_claim), so the guests end within about the last
# suite's time of each other, whatever the estimates missed.
rm -rf "$res"
mkdir -p "$res/queue/todo" "$res/queue/taken"
rank=0 total=0
while read -r w t; do
	rank=$((rank + 1)) total=$((total + w))
	echo "$t" >"$res/queue/todo/$(printf '%03d' $rank)-$(basename "$t" .bats)"
done < <(for t in "${suites[@]}"; do
	echo "$(lfs_weight "$(basename "$t" .bats)") $t"
done | sort -k1,1nr -k2)
echo "vm: ${#suites[@]} suites (about $total s) queued for $guests guests"

pids=()
for ((g = 0; g < guests; g++)); do
	(
		# what the guests share is made once, by the first, while the
		# host job runs in the last one's place (the others wait for it:
		# vm/run.sh lfs_base)
		if [ $g = 0 ] && ! "$here/run.sh" prepare "${suites[@]}"; then
			printf '%s\n' "vm: FAIL: making the scratch disk's base image failed" \
				"0 passed, 1 failed, 0 skipped" | tee "$res/g1.out"
			exit 1
		fi
		if [ -n "${VM_HOST_JOB:-}" ] && [ $((g + 1)) = "$guests" ]; then
			lfs_host_job "$res/host-job"
			# nothing left: no guest to boot (an empty verdict)
			if [ -z "$(ls "$res/queue/todo")" ]; then
				echo "0 passed, 0 failed, 0 skipped" >"$res/g$((g + 1)).out"
				exit 0
			fi
		fi
		LFS_RESULTS=$res/g$((g + 1)) VM_CPUS=${VM_CPUS_EACH:-1} \
			LFS_QUEUE=$res/queue LFS_QUEUE_ID=g$((g + 1)) \
			"$here/run.sh" test 2>&1 | tee "$res/g$((g + 1)).out" |
			sed -u "s/^/[g$((g + 1))] /"
		exit "${PIPESTATUS[0]}"
	) &
	pids+=($!)
done

# each guest's own verdict (run.sh's last line), summed
rc=0 passed=0 failed=0 skipped=0
verdicts=()
for ((g = 0; g < guests; g++)); do
	wait "${pids[g]}"
	grc=$?
	last=$(tail -n 1 "$res/g$((g + 1)).out")
	read -r p f k < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' <<<"$last")
	[ -n "${p:-}" ] || { p=0 f=1 k=0; }
	[ $grc = 0 ] || [ "$f" != 0 ] || f=1
	[ $grc = 0 ] || rc=1
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
	verdicts+=("guest $((g + 1)): $last$([ $grc = 0 ] || echo " (FAILED: $res/g$((g + 1)))")")
	grep -h '^vm: FAIL: ' "$res/g$((g + 1)).out" | sed "s/^vm: /vm: guest $((g + 1)): /" >&2
done

# one TAP for the run, of every suite: one that no guest took (both
# stopped early) counts as failed; the next run orders the queue by what
# this one measured
mkdir -p "$res/suites"
for ((g = 0; g < guests; g++)); do
	echo "vm: guest $((g + 1)) ran: $(xargs -r -n 1 basename -s .bats 2>/dev/null <"$res/g$((g + 1))/claimed" | paste -sd' ')"
	cp "$res/g$((g + 1))"/suites/* "$res/suites/" 2>/dev/null
done
left=$(ls "$res/queue/todo")
if [ -n "$left" ]; then
	rc=1
	echo "vm: FAIL: no guest ran $(paste -sd" " <<<"$left")" >&2
	for f in "$res"/queue/todo/*; do
		n=$(bats --count "$repo/$(cat "$f")") || n=1
		failed=$((failed + n))
	done
fi
mapfile -t all < <(printf '%s\n' "${suites[@]}" | sort)
"$here/tap-merge.sh" "$res" "${all[@]}" >"$res/tap" 2>/dev/null
for f in "$res"/suites/*.time; do
	[ -f "$f" ] && echo "$(basename "$f" .time) $(cat "$f")"
done >"$measured.new"
# the suites this run measured replace their old lines, the rest stay
{ cat "$measured.new"; [ ! -f "$measured" ] || cat "$measured"; } |
	awk '!seen[$1]++' | sort >"$measured.tmp" && mv "$measured.tmp" "$measured"
rm -f "$measured.new"

if [ -n "${VM_HOST_JOB:-}" ]; then
	hrc=$(cat "$res/host-job.rc" 2>/dev/null || echo none)
	[ "$hrc" = 0 ] || { rc=1; echo "vm: FAIL: the host job exited with status $hrc" >&2; }
fi
printf 'vm: %s\n' "${verdicts[@]}"
echo "$passed passed, $failed failed, $skipped skipped"
exit $rc
