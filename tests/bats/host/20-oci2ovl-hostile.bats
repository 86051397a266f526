#!/usr/bin/env bats
# oci2ovl on hostile input: the shared corpus (../shared/oci-hostile, used
# in place, read-only) and our own crafted images (tools/oci2ovl/tests/
# lfs_tree.py gen-corpus), each checked by tools/oci2ovl/tests/
# run-corpus.sh against its expected outcome, with a checksum of
# everything outside the store before and after every run. Both the plain
# and the ASan/UBSan binaries are run.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	HOSTILE=$(cd "$REPO/.." && pwd)/shared/oci-hostile
	export HOSTILE
	OWN=$BATS_FILE_TMPDIR/own
	export OWN
	python3 "$REPO/tools/oci2ovl/tests/lfs_tree.py" gen-corpus "$OWN"
}

setup() {
	RUN=$REPO/tools/oci2ovl/tests/run-corpus.sh
	SENT=$BATS_TEST_TMPDIR/sentinel
}

# lfs_shared_corpus: skips the test without the shared corpus (a clean
# clone has none; our own corpus is tested all the same), else makes the
# sentinel files it aims at, as its cases.json describes them, in the
# test's own sentinel directory ($SENT, which run-corpus.sh binds on the
# path the images aim at)
lfs_shared_corpus() {
	[ -f "$HOSTILE/cases.json" ] || skip "no shared corpus at $HOSTILE"
	python3 "$REPO/tools/oci2ovl/tests/lfs_tree.py" sentinel "$HOSTILE/cases.json" "$SENT"
}

lfs_corpus() { # BIN CASES ROOT
	run env LFS_SENTINEL="$SENT" "$RUN" "$@" "$BATS_TEST_TMPDIR/work"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[-1]} =~ ^([0-9]+)\ of\ ([0-9]+)\ cases ]]
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] && [ "${BASH_REMATCH[2]}" -ge 10 ]
}

@test "every case of the shared hostile corpus ends as cases.json expects" {
	lfs_shared_corpus
	lfs_corpus "$REPO/build/bin/oci2ovl" "$HOSTILE/cases.json" "$HOSTILE"
}

@test "every case of our own crafted corpus ends as expected" {
	lfs_corpus "$REPO/build/bin/oci2ovl" "$OWN/cases.json" "$OWN"
}

# the logs name no sanitizer report (grep: 1, no match; 2, no logs)
lfs_no_sanitizer_report() {
	run grep -l 'runtime error\|AddressSanitizer' "$BATS_TEST_TMPDIR"/work/logs/*.err
	echo "$output"
	[ "$status" = 1 ]
}

@test "the ASan/UBSan build handles the shared corpus cleanly" {
	lfs_shared_corpus
	lfs_corpus "$REPO/build/bin/oci2ovl-asan" "$HOSTILE/cases.json" "$HOSTILE"
	lfs_no_sanitizer_report
}

@test "the ASan/UBSan build handles our own corpus cleanly" {
	lfs_corpus "$REPO/build/bin/oci2ovl-asan" "$OWN/cases.json" "$OWN"
	lfs_no_sanitizer_report
}

@test "the corpus runner fails a case whose expectation is not met" {
	lfs_shared_corpus
	# a copy of cases.json that expects the traversal case to be accepted
	python3 - "$HOSTILE/cases.json" "$BATS_TEST_TMPDIR/flipped.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["cases"] = [x for x in c["cases"] if x["name"] in ("path-traversal-dotdot", "control-normal")]
for x in c["cases"]:
    if x["name"] == "path-traversal-dotdot":
        x["expect"], x["tolerated"] = "accept", []
    else:
        x["must_contain"][0]["mode"] = "0600"
json.dump(c, open(sys.argv[2], "w"))
PY
	run env LFS_SENTINEL="$SENT" "$RUN" "$REPO/build/bin/oci2ovl" "$BATS_TEST_TMPDIR/flipped.json" "$HOSTILE" "$BATS_TEST_TMPDIR/work"
	echo "$output"
	[ "$status" = 1 ]
	[[ $output == *"FAIL control-normal: content: "*"/etc/hostname: mode is '0644', want '0600'"* ]]
	[[ $output == *"FAIL path-traversal-dotdot: exit 3"* ]]
}

@test "a write at the sentinel path fails its case, and lands in the run's own sentinel directory" {
	# a stand-in for oci2ovl that writes where an escape would, then
	# refuses; and one case that expects the refusal
	printf '#!/bin/sh\necho pwned >/tmp/oci-hostile-sentinel/pwned-by-the-stub\necho "oci2ovl: refused" >&2\nexit 3\n' >"$BATS_TEST_TMPDIR/stub"
	chmod +x "$BATS_TEST_TMPDIR/stub"
	python3 - "$OWN/cases.json" "$BATS_TEST_TMPDIR/one.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["cases"] = [x for x in c["cases"] if x["name"] == "dotdot-inside-name"]
json.dump(c, open(sys.argv[2], "w"))
PY
	run env LFS_SENTINEL="$SENT" "$RUN" "$REPO/build/bin/oci2ovl" "$BATS_TEST_TMPDIR/one.json" "$OWN" "$BATS_TEST_TMPDIR/work"
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "$(printf 'ok dotdot-inside-name (reject)\n1 of 1 cases handled as expected')" ]
	run env LFS_SENTINEL="$SENT" "$RUN" "$BATS_TEST_TMPDIR/stub" "$BATS_TEST_TMPDIR/one.json" "$OWN" "$BATS_TEST_TMPDIR/work"
	echo "$output"
	[ "$status" = 1 ]
	[ "${lines[0]}" = "FAIL dotdot-inside-name: something outside the store changed" ]
	[ "$(cat "$SENT/pwned-by-the-stub")" = pwned ]
	[ ! -e /tmp/oci-hostile-sentinel/pwned-by-the-stub ]
}

@test "a refusal names the layer, the entry and the rule" {
	lfs_shared_corpus
	run "$REPO/build/bin/oci2ovl" --store "$BATS_TEST_TMPDIR/s" import "$HOSTILE/path-traversal-dotdot:path-traversal-dotdot"
	[ "$status" = 3 ]
	[[ $output =~ ^oci2ovl:\ layer\ sha256:[0-9a-f]{64}:\ entry\ \"(\.\./)+tmp/oci-hostile-sentinel/pwned-dotdot\":\ path\ leaves\ the\ layer$ ]]
	local left
	left=$(ls -A "$BATS_TEST_TMPDIR/s/layers")
	[ -z "$left" ]
}

@test "smuggled overlay xattrs are dropped with a warning and never stored" {
	lfs_shared_corpus
	run "$REPO/build/bin/oci2ovl" --store "$BATS_TEST_TMPDIR/s" import "$HOSTILE/xattr-overlay-smuggle:xattr-overlay-smuggle"
	[ "$status" = 0 ]
	[[ $output == *"xattr trusted.overlay.redirect dropped"* ]]
	run getfattr -R -h -d -m '^trusted\.overlay\.' --absolute-names "$BATS_TEST_TMPDIR/s/layers"
	[ "$status" = 0 ]
	[ -z "$output" ]
}
