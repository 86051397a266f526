#!/usr/bin/env bats
# oci2ovl: image indexes, manifests and their JSON, beyond what the corpus
# runner checks. The layouts are the index cases of our crafted corpus
# (tools/oci2ovl/tests/corpus_index.py, through lfs_tree.py gen-corpus;
# 20-oci2ovl-hostile.bats runs every one of them with its expected outcome
# and the check that nothing outside the store changes). Here: each JSON
# file is read once and no further than its bound (strace), untrusted
# strings reach the terminal escaped, and the exit status of a tag that is
# missing differs from that of a tag with nothing usable.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	OWN=$BATS_FILE_TMPDIR/own
	export OWN
	python3 "$REPO/tools/oci2ovl/tests/lfs_tree.py" gen-corpus "$OWN"
}

setup() {
	B=$REPO/build/bin/oci2ovl
	S=$BATS_TEST_TMPDIR/store
}

# lfs_strace_import CASE: import our corpus case CASE under strace; the
# trace (fds shown with their paths) goes to $BATS_TEST_TMPDIR/trace
lfs_strace_import() {
	run strace -f -y -qq -o "$BATS_TEST_TMPDIR/trace" \
		-e trace=openat,openat2,read,pread64,readv,lseek,mmap \
		"$B" --store "$S" import "$OWN/$1:$1"
}

# lfs_reads LAYOUT: per file of LAYOUT read through the trace, a line
# "opens bytes-read lseeks size path", for index.json, oci-layout and
# every blob that is JSON (a layer blob is read by the extractor)
lfs_reads() {
	python3 - "$BATS_TEST_TMPDIR/trace" "$1" <<'PY'
import collections, os, re, sys
trace, layout = sys.argv[1], os.path.realpath(sys.argv[2])
opens, reads, seeks = collections.Counter(), collections.Counter(), collections.Counter()
for line in open(trace, errors="replace"):
    m = re.search(r"openat2?\(.*\) = \d+<([^>]*)>$", line)
    if m:
        opens[m.group(1)] += 1
    m = re.search(r"(?:read|pread64|readv)\(\d+<([^>]*)>, .*\) = (\d+)$", line)
    if m:
        reads[m.group(1)] += int(m.group(2))
    m = re.search(r"lseek\(\d+<([^>]*)>, ", line)
    if m:
        seeks[m.group(1)] += 1
for p in sorted(set(opens) | set(reads)):
    if not p.startswith(layout + "/"):
        continue
    with open(p, "rb") as f:
        json_file = f.read(1) == b"{"
    if json_file:
        print(opens[p], reads[p], seeks[p], os.path.getsize(p),
              os.path.relpath(p, layout))
PY
}

@test "each JSON file of a layout is opened once and read once, to its end" {
	lfs_strace_import nested-index-empty-then-image
	[ "$status" = 0 ]
	run lfs_reads "$OWN/nested-index-empty-then-image"
	echo "$output"
	[ "$status" = 0 ]
	# oci-layout, index.json, 3 indexes (the top one, the one with
	# nothing for us, the one with the image), the manifest, the config
	[ "${#lines[@]}" = 7 ]
	local opens bytes seeks size path
	while read -r opens bytes seeks size path; do
		[ "$opens $bytes $seeks" = "1 $size 0" ] || {
			echo "$path: $opens opens, $bytes bytes read, $seeks seeks, size $size"
			return 1
		}
	done <<<"$output"
}

@test "a JSON blob larger than its descriptor is read one byte past the declared size" {
	local c=manifest-blob-larger-than-descriptor
	lfs_strace_import "$c"
	[ "$status" = 3 ]
	run lfs_reads "$OWN/$c"
	echo "$output"
	[ "$status" = 0 ]
	# the manifest file holds 8 MiB more than its descriptor says
	local size
	size=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["size"])' "$OWN/$c/index.json")
	local line
	line=$(grep " blobs/sha256/" <<<"$output")
	[[ $line == "1 $((size + 1)) 0 $((size + (8 << 20))) blobs/sha256/"* ]]
}

# lfs_no_raw_bytes FILE: FILE holds no control character but newline and no
# byte >= 0x7f
lfs_no_raw_bytes() {
	run env LC_ALL=C grep -c -P '[\x00-\x09\x0b-\x1f\x7f-\xff]' "$1"
	[ "$output" = 0 ] || { cat -v "$1"; return 1; }
}

@test "untrusted strings of a layout reach the terminal escaped" {
	local d rc n=0
	for d in "$OWN"/esc-*/; do
		d=${d%/}
		rc=0
		"$B" --store "$S" import "$d:${d##*/}" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
		cat -v "$BATS_TEST_TMPDIR/err"
		[ "$rc" = 3 ]
		grep -q '\\x1b' "$BATS_TEST_TMPDIR/err"
		lfs_no_raw_bytes "$BATS_TEST_TMPDIR/err"
		n=$((n + 1))
	done
	[ "$n" = 6 ]
}

@test "a tag or a layout path given with control characters is printed escaped" {
	local rc=0
	"$B" --store "$S" import "$OWN/tag-among-other-tags:$(printf 'x\033[2J\a')" --name t 2>"$BATS_TEST_TMPDIR/err" || rc=$?
	[ "$rc" = 1 ]
	grep -qxF 'oci2ovl: no image tagged "x\x1b[2J\x07" in the layout' "$BATS_TEST_TMPDIR/err"
	lfs_no_raw_bytes "$BATS_TEST_TMPDIR/err"
	rc=0
	"$B" --store "$S" import "$BATS_TEST_TMPDIR/$(printf 'l\033]0;t\a'):x" 2>"$BATS_TEST_TMPDIR/err" || rc=$?
	[ "$rc" = 1 ]
	grep -qF '/l\x1b]0;t\x07: No such file or directory' "$BATS_TEST_TMPDIR/err"
	lfs_no_raw_bytes "$BATS_TEST_TMPDIR/err"
}

@test "a missing tag fails (exit 1); a tag with no usable image manifest is refused (exit 3)" {
	run "$B" --store "$S" import "$OWN/tag-names-only-sbom:nosuchtag"
	echo "$output"
	[ "$status" = 1 ]
	[ "$output" = 'oci2ovl: no image tagged "nosuchtag" in the layout' ]
	run "$B" --store "$S" import "$OWN/tag-names-only-sbom:tag-names-only-sbom"
	echo "$output"
	[ "$status" = 3 ]
	[ "$output" = 'oci2ovl: image "tag-names-only-sbom": no image manifest for platform linux/amd64 (skipped 1 entry of another media type or an artifact)' ]
	run "$B" --store "$S" import "$OWN/index-only-other-platforms:index-only-other-platforms" --platform linux/riscv64
	echo "$output"
	[ "$status" = 3 ]
	[ "$output" = 'oci2ovl: image "index-only-other-platforms": no image manifest for platform linux/riscv64 (other platforms: linux/arm64, linux/s390x)' ]
	# and the platform it lists is there to be taken
	"$B" --store "$S" import "$OWN/index-only-other-platforms:index-only-other-platforms" --platform linux/s390x
	local left
	left=$(ls -A "$S/tmp")
	[ -z "$left" ]
	[ -f "$S/images/index-only-other-platforms.json" ]
}
