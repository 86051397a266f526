#!/usr/bin/env bats
# oci2ovl on the host: command line, store, conversion compared with
# 'umoci unpack' (through a reference flattener, tools/oci2ovl/tests/
# lfs_tree.py, that merges layer dirs with overlay's lookup rules),
# locking and interrupted runs. Host tests run as root.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	"$REPO/tools/oci2ovl/tests/mkimages.sh" "$BATS_FILE_TMPDIR/img"
}

setup() {
	B=$REPO/build/bin/oci2ovl-asan
	T="python3 $REPO/tools/oci2ovl/tests/lfs_tree.py"
	L=$BATS_FILE_TMPDIR/img/layout
	S=$BATS_TEST_TMPDIR/store
	export OCI2OVL_STORE=$S
}

lfs_reference() { # TAG -> listing of umoci unpack (also used in <(...))
	rm -rf "$BATS_TEST_TMPDIR/ref" || return 1
	umoci unpack --image "$L:$1" "$BATS_TEST_TMPDIR/ref" >/dev/null || return 1
	$T dump "$BATS_TEST_TMPDIR/ref/rootfs"
}

# lfs_empty DIR: DIR exists and holds nothing
lfs_empty() {
	local l
	l=$(ls -A "$1") || return 1
	[ -z "$l" ] || { echo "$1 holds: $l"; return 1; }
}

lfs_differential() { # TAG WHITEOUT-FORMAT
	"$B" import "$L:$1" --whiteout="$2"
	lfs_reference "$1" >"$BATS_TEST_TMPDIR/want"
	# shellcheck disable=SC2046
	$T flatten $("$B" layers "$1") >"$BATS_TEST_TMPDIR/got"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	[ "$(wc -l <"$BATS_TEST_TMPDIR/want")" -gt 3 ]
}

@test "--help and --version exit 0; no command or a bad option exits 2" {
	run "$B" --help
	[ "$status" = 0 ]
	[[ $output == *"Usage: oci2ovl"* ]]
	run "$B" --version
	[ "$status" = 0 ]
	[[ $output == "oci2ovl "* ]]
	run "$B"
	[ "$status" = 2 ]
	run "$B" --bogus list
	[ "$status" = 2 ]
	run "$B" frobnicate
	[ "$status" = 2 ]
	run "$B" import no-tag-here
	[ "$status" = 2 ]
	run "$B" list --upper x
	[ "$status" = 2 ]
	run "$B" import "$L:churn" --max-entries 0
	[ "$status" = 2 ]
	run "$B" import "$L:churn" --name ../evil
	[ "$status" = 2 ]
}

@test "arguments echoed in usage and store errors are escaped" {
	local esc nl
	esc=$(printf '\033') nl=$'\n'
	run "$B" "--x${esc}[31m${nl}y" list
	[ "$status" = 2 ]
	[ "$output" = "$(printf '%s\n%s' 'oci2ovl: bad option "--x\x1b[31m\x0ay"' "Try 'oci2ovl --help'.")" ]
	run "$B" "${esc}]0;t${nl}"
	[ "$status" = 2 ]
	[ "${lines[0]}" = 'oci2ovl: unknown command "\x1b]0;t\x0a"' ]
	run "$B" import "a${esc}[2J${nl}b"
	[ "$status" = 2 ]
	[ "${lines[0]}" = 'oci2ovl: "a\x1b[2J\x0ab" is not [oci:]DIR:TAG' ]
	run "$B" import "$L:churn" --max-bytes "1${esc}${nl}"
	[ "$status" = 2 ]
	[ "${lines[0]}" = 'oci2ovl: bad limit "1\x1b\x0a"' ]
	run "$B" --store "$BATS_TEST_TMPDIR/n${esc}[1m${nl}" layers x
	[ "$status" = 1 ]
	[ "$output" = "oci2ovl: no store at $BATS_TEST_TMPDIR/n\\x1b[1m\\x0a" ]
	run "$B" list --store
	[ "$status" = 2 ]
	[ "${lines[0]}" = 'oci2ovl: option "--store" needs an argument' ]
}

@test "the churn image flattens to exactly what umoci unpack gives (native whiteouts)" {
	lfs_differential churn native
}

@test "the churn image flattens to exactly what umoci unpack gives (chardev whiteouts)" {
	lfs_differential churn chardev
}

@test "the small and deep images flatten to exactly what umoci unpack gives" {
	lfs_differential small native
	lfs_differential deep native
}

@test "the differential check notices a changed layer" {
	lfs_differential small native
	# corrupt the converted layer: the same comparison must now fail
	d=$("$B" layers small | head -n 1)
	chmod 0700 "$d/etc/motd"
	# shellcheck disable=SC2046
	run diff <(lfs_reference small) <($T flatten $("$B" layers small))
	[ "$status" = 1 ]
	[[ $output == *"/etc/motd"*"0700"* ]]
}

@test "native whiteouts are marked symlinks, chardev ones 0/0 devices" {
	"$B" --store "$S-n" import "$L:churn"
	"$B" --store "$S-c" import "$L:churn" --whiteout=chardev
	n=$(find "$S-n/layers" -type l -lname '(overlay-whiteout)' | wc -l)
	c=$(find "$S-c/layers" -type c | while read -r f; do stat -c '%t:%T' "$f"; done | grep -c '^0:0$')
	[ "$n" -gt 3 ]
	[ "$n" = "$c" ]
	wh=$(find "$S-n/layers" -type l -lname '(overlay-whiteout)')
	while read -r f; do
		[ "$(getfattr -h --only-values -n trusted.overlay.whiteout "$f")" = y ]
	done <<<"$wh"
	wh=$(find "$S-c/layers" -type l -lname '(overlay-whiteout)')
	[ -z "$wh" ]
}

@test "a store keeps one whiteout format; the other one is a usage error" {
	"$B" import "$L:small"
	run "$B" import "$L:deep" --whiteout=chardev
	[ "$status" = 2 ]
	[[ $output == *"holds native layers"* ]]
}

@test "list, layers, config, rm and gc work on the store" {
	"$B" import "oci:$L:small" --name s1
	"$B" import "$L:deep"
	run "$B" list
	[ "$status" = 0 ]
	[ "${lines[0]%%$'\t'*}" = deep ]
	[ "${lines[1]%%$'\t'*}" = s1 ]
	# (a failing oci2ovl, not only python, must fail the test)
	json=$("$B" list --json)
	python3 -c 'import json,sys; l=json.load(sys.stdin); assert [i["name"] for i in l]==["deep","s1"] and l[0]["layers"]==6, l' <<<"$json"
	run "$B" layers deep
	[ "${#lines[@]}" = 6 ]
	# top layer first: the record's order, the manifest's reversed
	json=$("$B" layers deep --json)
	python3 -c '
import json,sys
l=json.load(sys.stdin)
rec=json.load(open(sys.argv[1]))
assert rec["layer_order"]=="top-first"
assert [x["diff_id"] for x in l]==[x["diff_id"] for x in rec["layers"]]
assert list(reversed([x["diff_id"] for x in l]))==rec["config"]["rootfs"]["diff_ids"]
assert all(x["dir"].endswith("/layers/" + x["store_key"][7:]) for x in l)' "$S/images/deep.json" <<<"$json"
	json=$("$B" config s1)
	python3 -c 'import json,sys; c=json.load(sys.stdin); assert c["rootfs"]["type"]=="layers"' <<<"$json"
	n=$(ls "$S/layers" | wc -l)
	"$B" rm deep
	run "$B" layers deep
	[ "$status" = 1 ]
	[ "$(ls "$S/layers" | wc -l)" = "$n" ]
	"$B" gc
	[ "$(ls "$S/layers" | wc -l)" = 1 ]
	"$B" layers s1 >/dev/null
	run "$B" rm nosuch
	[ "$status" = 1 ]
}

@test "images sharing layers share their directories" {
	"$B" import "$L:churn" --name a
	"$B" import "$L:churn" --name b
	[ "$("$B" layers a)" = "$("$B" layers b)" ]
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
}

@test "concurrent imports into one store all succeed and leave one copy of each layer" {
	for i in 1 2 3 4; do
		"$B" import "$L:churn" --name "c$i" &
	done
	for i in 1 2 3 4; do
		wait -n
	done
	wait
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
	lfs_empty "$S/tmp"
	for i in 1 2 3 4; do "$B" layers "c$i" >/dev/null; done
}

@test "gc waits until no import holds the store lock" {
	"$B" import "$L:small"
	# hold the store lock shared, as an import does
	flock -s "$S/lock" sleep 2 &
	sleep 0.3
	start=$(date +%s%N)
	"$B" gc
	[ $((($(date +%s%N) - start) / 1000000)) -ge 1000 ]
	wait
}

@test "an interrupted import leaves no layer visible, and gc cleans up" {
	big=$BATS_TEST_TMPDIR/big
	python3 -c '
import sys; sys.path.insert(0, sys.argv[1])
import lfs_tree as t, tarfile, os
d = t.layout(sys.argv[2], "big", None)
data = t.tar([t.ti("f%d" % i, data=os.urandom(1 << 20)) for i in range(48)])
t.write_index(d, "big", [t.image(d, [data], comp="none")])' "$REPO/tools/oci2ovl/tests" "$big"
	"$REPO/build/bin/oci2ovl" import "$big/big:big" &
	pid=$!
	# until the layer's directory is there (tmp/ also holds, for a
	# moment, the store's whiteout file before it is published)
	for _ in $(seq 100); do
		ls "$S/tmp" 2>/dev/null | grep -q '^[0-9a-f]\{64\}\.' && break
		sleep 0.05
	done
	kill -9 $pid
	wait $pid || true
	lfs_empty "$S/layers"
	[ ! -e "$S/images/big.json" ]
	[ -n "$(ls -A "$S/tmp")" ]
	"$B" gc
	lfs_empty "$S/tmp"
}

@test "pull copies with skopeo from any transport and imports" {
	"$B" pull "oci:$L:small" --name pulled
	run "$B" layers pulled
	[ "${#lines[@]}" = 1 ]
	lfs_empty "$S/tmp"
	run "$B" pull "oci:$L:nosuchtag"
	[ "$status" = 1 ]
	lfs_empty "$S/tmp"
}

@test "mount --print gives the lowerdir= string, top first, escaped" {
	"$B" import "$L:deep"
	run "$B" mount deep --print
	[ "$status" = 0 ]
	want="lowerdir=$("$B" layers deep | sed 's/[:,\\]/\\&/g' | paste -sd:)"
	[ "$output" = "$want" ]
	S2="$BATS_TEST_TMPDIR/odd:dir,x"
	"$B" --store "$S2" import "$L:small"
	run "$B" --store "$S2" mount small --print
	[[ $output == 'lowerdir='*'/odd\:dir\,x/layers/'* ]]
}

@test "mount with --fstype overlay needs a chardev store" {
	"$B" import "$L:small"
	mkdir -p "$BATS_TEST_TMPDIR/mnt"
	run "$B" mount small "$BATS_TEST_TMPDIR/mnt" --fstype overlay
	[ "$status" = 2 ]
	[[ $output == *"chardev"* ]]
}

@test "progress is quiet when stderr is not a terminal" {
	run "$B" import "$L:deep"
	[ "$status" = 0 ]
	[ -z "$output" ]
}
