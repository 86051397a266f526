#!/usr/bin/env bats
# oci2ovl's fuzz targets (tools/oci2ovl/fuzz, libFuzzer with ASan and
# UBSan), each run for a bounded time from a seed corpus made of our own
# images (mkimages.sh, lfs_tree.py gen-corpus) with a fixed -seed, by
# tools/oci2ovl/fuzz/run.sh: in a mount namespace where all but the run's
# directory is read-only, on a scratch tmpfs. Then the canary builds, with
# planted bugs, show that a run finds an out-of-bounds read in each path
# within its time, keeps the input under build/ and replays it, and that
# the targets' own checks (a file left behind, a descriptor left open, a
# write outside the scratch) stop a run. About 70 s.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	FUZZ=$REPO/tools/oci2ovl/fuzz/run.sh
	OUT=$REPO/build/oci2ovl-fuzz/test
	export REPO FUZZ OUT
	rm -rf "$OUT"
	"$FUZZ" -o "$OUT/seeds-layer" -m layer
	"$FUZZ" -o "$OUT/seeds-json" -m json
}

# lfs_fuzz_clean TARGET SECONDS SEED: a run that ends clean, having run
# and found new inputs, and leaves nothing mounted or behind
lfs_fuzz_clean() {
	local t=$1 o=$OUT/$1 runs cov0 cov1 left mounts
	run "$FUZZ" -t "$2" -s "$3" -c "$OUT/seeds-$t/seeds" -o "$o" "$t"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[0]} =~ ^oci2ovl-fuzz\ $t:\ seed\ $3,\ [0-9]+\ s:\ ([0-9]+)\ runs.*cov\ ([0-9]+)\ -\>\ ([0-9]+), ]]
	runs=${BASH_REMATCH[1]} cov0=${BASH_REMATCH[2]} cov1=${BASH_REMATCH[3]}
	# thousands of inputs a second, even beside a guest
	[ "$runs" -ge $((200 * $2)) ]
	# mutation reached code the seeds do not
	[ "$cov1" -gt "$cov0" ]
	[[ ${lines[1]} == "oci2ovl-fuzz edges: "* ]]
	left=$(ls -A "$o/artifacts")
	[ -z "$left" ]
	[ ! -e "$o/scratch" ]
	mounts=$(grep -c oci2ovl-fuzz /proc/self/mounts || true)
	[ "$mounts" = 0 ]
}

@test "the layer target (tar, gzip, zstd, extraction) runs 30 s from our images with seed 1, clean" {
	lfs_fuzz_clean layer 30 1
}

@test "the JSON target (index, manifests, configs) runs 15 s from our images with seed 1, clean" {
	lfs_fuzz_clean json 15 1
}

# lfs_canary TARGET ERROR FUNCTION: the canary build runs clean on the
# seeds alone, then the fuzzer finds the planted read (ERROR, in FUNCTION
# of canary.c) within 30 s with seed 1; the artifact it keeps replays the
# error in the canary build and nothing in the real one
lfs_canary() {
	local t=$1 o=$OUT/canary-$1 bin=$REPO/build/bin/oci2ovl-fuzz-$1-canary art
	run "$FUZZ" -n 0 -b "$bin" -c "$OUT/seeds-$t/seeds" -o "$o" "$t"
	echo "$output"
	[ "$status" = 0 ]
	run "$FUZZ" -t 30 -s 1 -b "$bin" -c "$OUT/seeds-$t/seeds" -o "$o" "$t"
	echo "$output"
	[ "$status" = 1 ]
	[[ $output == *"FAILED"*"$2"* ]]
	grep -q "in $3 .*/tools/oci2ovl/fuzz/canary.c" "$o/log"
	[[ $output =~ artifact\ ($o/artifacts/crash-[0-9a-f]+)\; ]]
	art=${BASH_REMATCH[1]}
	[ -s "$art" ]
	run "$FUZZ" -b "$bin" -o "$o" -r "$art" "$t"
	[ "$status" = 1 ]
	[[ $output == *"$2"* ]]
	run "$FUZZ" -o "$o" -r "$art" "$t"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"Executed $art"* ]]
}

@test "a planted out-of-bounds read on tar entry names is found within 30 s, kept and replayed" {
	lfs_canary layer "runtime error: index -" lfs_canary_aufs_reserved
	grep -q "out of bounds for type 'char\[128\]'" "$OUT/canary-layer/log"
}

@test "a planted out-of-bounds read on index.json is found within 30 s, kept and replayed" {
	lfs_canary json "runtime error: index -1 out of bounds" lfs_canary_too_deep
	grep -q "out of bounds for type 'char\[32\]'" "$OUT/canary-json/log"
}

# lfs_plant KIND MESSAGE: the canary build with $LFS_CANARY_PLANT=KIND
# stops at the first seed with MESSAGE
lfs_plant() {
	local o=$OUT/plant
	LFS_CANARY_PLANT=$1 LFS_CANARY_ESCAPE=$OUT/escaped \
		run "$FUZZ" -n 0 -b "$REPO/build/bin/oci2ovl-fuzz-layer-canary" \
		-c "$OUT/seeds-layer/seeds" -o "$o" layer
	echo "$output"
	[ "$status" = 1 ]
	[[ $output == *"oci2ovl-fuzz: FAIL: $2"* ]]
	[[ $output =~ artifact\ $o/artifacts/crash- ]]
}

@test "a file left in the scratch directory stops the run" {
	lfs_plant leave 'layer: left "left-behind" in the scratch directory'
}

@test "a file descriptor left open stops the run" {
	lfs_plant fd "layer: file descriptor "
}

@test "a write outside the scratch fails with EROFS, which stops the run" {
	lfs_plant escape "lfs_extract_layer tried to write outside its directory (EROFS)"
	[ ! -e "$OUT/escaped" ]
}

@test "a target run by hand, outside run.sh, removes its scratch directory" {
	mkdir "$BATS_TEST_TMPDIR/tmp"
	TMPDIR=$BATS_TEST_TMPDIR/tmp run "$REPO/build/bin/oci2ovl-fuzz-json" \
		-runs=0 "$OUT/seeds-json/seeds"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"Done "*" runs"* ]]
	left=$(ls -A "$BATS_TEST_TMPDIR/tmp")
	[ -z "$left" ]
}
