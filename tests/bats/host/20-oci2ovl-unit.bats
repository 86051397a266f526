#!/usr/bin/env bats
# oci2ovl: the cmocka unit tests (built under ASan/UBSan by 'make tools'),
# one @test per suite. A suite passes when it exits 0 and its TAP plan
# is complete with no "not ok".

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	U=$REPO/build/oci2ovl/tests
	export TMPDIR=$BATS_TEST_TMPDIR
}

lfs_suite() {
	[ -x "$U/$1" ] || { echo "no $U/$1: run 'make tools'"; return 1; }
	run env CMOCKA_MESSAGE_OUTPUT=TAP "$U/$1"
	echo "$output"
	[ "$status" = 0 ]
	local plan ok
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' <<<"$output")
	ok=$(grep -c '^ok ' <<<"$output")
	[ -n "$plan" ]
	[ "$plan" -gt 0 ]
	[ "$ok" = "$plan" ]
	! grep -q '^not ok' <<<"$output"
}

@test "unit: entry paths normalise, and .. or long names are refused" {
	lfs_suite test_path
}

@test "unit: whiteout names convert to layerfs and overlay markers" {
	lfs_suite test_whiteout
}

@test "unit: digests, blob sizes, JSON and media types are checked" {
	lfs_suite test_digest
}

@test "unit: extraction keeps the rules and the limits" {
	lfs_suite test_extract
}

@test "unit: the path set, a tree of components, answers as a set of paths" {
	lfs_suite test_pathset
}

@test "unit: the tar structure read on its own agrees with libarchive's" {
	lfs_suite test_tarframe
}

@test "unit: the read-ahead gives its buffers in order, then its end or error, and stops its thread" {
	lfs_suite test_ahead
}
