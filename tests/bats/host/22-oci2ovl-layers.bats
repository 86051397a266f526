#!/usr/bin/env bats
# oci2ovl on large hostile layers, generated at test time by
# tools/oci2ovl/tests/corpus_layers.py: the totals of a layer are bounded
# (--max-names here), a path costs its length whatever its depth, and
# memory does not grow with the names. Time and memory are measured with
# /usr/bin/time. The small crafted cases of the same area (empty layers,
# pax xattrs, bytes after the gzip or tar stream, header-only entries
# with data, owner ids, image totals) are in the corpus run by
# 20-oci2ovl-hostile.bats, and so are those of tools/oci2ovl/tests/
# corpus_rules.py (xattrs, device numbers, AUFS metadata), whose warnings
# are checked here. Host tests run as root.

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	B=$REPO/build/bin/oci2ovl
	GEN="python3 $REPO/tools/oci2ovl/tests/corpus_layers.py"
	S=$BATS_TEST_TMPDIR/store
	D=$BATS_TEST_TMPDIR/img
}

# lfs_outside_sum DIR: a checksum of DIR's tree (names, types, modes,
# sizes, times)
lfs_outside_sum() {
	set -o pipefail
	find "$1" -printf '%p %y %m %s %T@\n' | sort | sha256sum
}

# lfs_warnings CASES NAME: the stderr a case of corpus_rules.py expects,
# the layer digest given as "sha256:L"
lfs_warnings() {
	python3 - "$1" "$2" <<'PY'
import json, sys
c = next(c for c in json.load(open(sys.argv[1]))["cases"] if c["name"] == sys.argv[2])
for w in c["warnings"]:
    print("oci2ovl: warning: layer sha256:L: " + w)
PY
}

# lfs_import_warns NAME: import case NAME of corpus_rules.py (in $D): it is
# accepted and stderr is what the case expects, in full
lfs_import_warns() {
	local want got
	run "$B" --store "$S" import "$D/$1:$1" --no-sync
	echo "$output"
	[ "$status" = 0 ]
	want=$(lfs_warnings "$D/cases.json" "$1")
	[ -n "$want" ]
	got=$(sed 's/ sha256:[0-9a-f]\{64\}: / sha256:L: /' <<<"$output")
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}

# lfs_empty_store: a refused import left no layer, record or tmp/ entry
lfs_empty_store() {
	local d l
	for d in images layers tmp; do
		l=$(ls -A "$S/$d") || return 1
		[ -z "$l" ] || { echo "$S/$d holds: $l"; return 1; }
	done
}

# lfs_timed ARGS...: run oci2ovl under /usr/bin/time; sets status and
# output, and SECS and KB (wall time, maximum resident set)
lfs_timed() {
	run /usr/bin/time -f '%e %M' -o "$BATS_TEST_TMPDIR/time" "$B" --store "$S" "$@"
	# the last line (a failed command's status comes first)
	local t
	t=$(tail -n 1 "$BATS_TEST_TMPDIR/time")
	read -r SECS KB <<<"$t"
	echo "status $status, ${SECS} s, ${KB} KiB max RSS"
	echo "$output" | cut -c1-300
}

@test "a layer of 4 KiB names is refused at --max-names, in little memory, leaving nothing behind" {
	# 80000 entries of 3848 bytes: past the default 256 MiB of names at
	# entry 69760. The whole set of paths held by name (the old path
	# set) is more than 256 MiB; the tree of components is a few MiB.
	$GEN deep "$D" 80000 15 255
	local before after
	before=$(lfs_outside_sum "$D")
	lfs_timed import "$D/deep:deep" --no-sync
	[ "$status" = 3 ]
	# (the message shortens the name)
	[[ $output =~ ^oci2ovl:\ layer\ sha256:[0-9a-f]{64}:\ entry\ \"d{255}/d{200}[d/]*\.\.\.\":\ more\ than\ 268435456\ bytes\ of\ entry\ names\ \(--max-names\)$ ]]
	[ "$KB" -lt 65536 ]
	[ "${SECS%.*}" -lt 300 ]
	after=$(lfs_outside_sum "$D")
	[ "$before" = "$after" ]
	local left
	left=$(ls -A "$S/layers" "$S/tmp" "$S/images")
	[ "$left" = "$(printf '%s:\n\n%s:\n\n%s:' "$S/images" "$S/layers" "$S/tmp")" ]
}

@test "entries 1900 directories deep unpack in time linear in their length" {
	# 4000 files under one chain of 1900 directories, no directory
	# entries: hashing every prefix of every path takes a minute, a walk
	# of the components a few seconds
	$GEN deep "$D" 4000 1900 1
	lfs_timed import "$D/deep:deep" --no-sync
	[ "$status" = 0 ]
	[ "${SECS%.*}" -lt 30 ]
	[ "$KB" -lt 65536 ]
	local layer n
	layer=$("$B" --store "$S" layers deep)
	n=$(find "$layer" -type f -name 'f*' -printf x | wc -c)
	[ "$n" = 4000 ]
	[ -f "$layer/$(printf 'd/%.0s' $(seq 1900))f0003999" ]
}

@test "--max-names and --max-xattrs take sizes and refuse 0" {
	$GEN deep "$D" 10 2 3
	run "$B" --store "$S" import "$D/deep:deep" --max-names 0
	[ "$status" = 2 ]
	[[ $output == *'bad limit "0"'* ]]
	run "$B" --store "$S" import "$D/deep:deep" --max-xattrs 1X
	[ "$status" = 2 ]
	[[ $output == *'bad limit "1X"'* ]]
	run "$B" --store "$S" import "$D/deep:deep" --max-names 1K --max-xattrs 1M
	[ "$status" = 0 ]
	run "$B" --store "$S.2" import "$D/deep:deep" --max-names 100
	[ "$status" = 3 ]
	[[ $output == *'entry "ddd/ddd/f0000006": more than 100 bytes of entry names (--max-names)'* ]]
}

@test "xattrs no file of their entry's type can carry are dropped: the first of each kind named, the others counted" {
	python3 "$REPO/tools/oci2ovl/tests/corpus_rules.py" gen "$D"
	lfs_import_warns xattr-unknown-namespace
	lfs_import_warns xattr-user-on-symlink-fifo-device
	lfs_import_warns xattr-acl-on-symlink-default-acl-on-file
	# what is kept and what is dropped
	local layer x
	layer=$("$B" --store "$S" layers xattr-user-on-symlink-fifo-device)
	x=$(getfattr -h -d -m - --absolute-names "$layer/s" "$layer/p" "$layer/r" | grep -v '^#')
	[ "$x" = "$(printf 'trusted.t="t"\n\nuser.k="v"\n')" ]
}

@test "names with an escape sequence and a newline reach stderr escaped, in warnings and in refusals" {
	python3 "$REPO/tools/oci2ovl/tests/corpus_rules.py" gen "$D"
	# each message one line, with \xHH for the bytes of the names
	lfs_import_warns ctl-names-in-warnings
	run "$B" --store "$S" import "$D/ctl-names-in-refusal:ctl-names-in-refusal" --no-sync
	echo "$output"
	[ "$status" = 3 ]
	local got
	got=$(sed 's/ sha256:[0-9a-f]\{64\}: / sha256:L: /' <<<"$output")
	[ "$got" = "oci2ovl: layer sha256:L: entry \"r\\x1b[2J\\x0afile\": xattr user.\\x1b[1m\\x0a$(printf 'n%.0s' $(seq 260)): name longer than 255 bytes" ]
	local left
	left=$(ls -A "$S/tmp")
	[ -z "$left" ]
	[ ! -e "$S/images/ctl-names-in-refusal.json" ]
}

@test "aufs's metadata at the layer root is skipped with a warning, and hard links into .wh..wh.plnk keep its file" {
	python3 "$REPO/tools/oci2ovl/tests/corpus_rules.py" gen "$D"
	lfs_import_warns aufs-metadata-skipped
	lfs_import_warns aufs-plnk-hard-links
	local layer
	layer=$("$B" --store "$S" layers aufs-plnk-hard-links)
	run ls -A "$layer"
	[ "$status" = 0 ]
	[ "$output" = usr ]
	run stat -c '%h %i %a %u %s' "$layer/usr/bin/a" "$layer/usr/bin/b"
	[ "$status" = 0 ]
	[ "${lines[0]}" = "${lines[1]}" ]
	[[ ${lines[0]} =~ ^2\ [0-9]+\ 755\ 7\ 7$ ]]
}

@test "a large gzip layer is inflated on a thread of its own; its bad CRC-32, bytes after it, or --max-bytes end the import cleanly" {
	python3 - "$REPO/tools/oci2ovl/tests" "$D" <<'PY'
import random, sys, tarfile
sys.path.insert(0, sys.argv[1])
import lfs_tree as T
from corpus_layers import build, gz
rnd = random.Random(23)
# 12 MiB of tar: the decompressor runs ahead by all its buffers
raw = T.tar([T.ti("d/", tarfile.DIRTYPE, mode=0o755)] +
            [T.ti("d/r%d" % i, data=rnd.randbytes(1 << 20)) for i in range(4)] +
            [T.ti("d/z", data=b"z" * (8 << 20))])
ok = gz(raw)
crc = bytearray(ok[0])
crc[-8] ^= 1  # the trailer's CRC-32
build(sys.argv[2], "ok", [ok])
open(sys.argv[2] + "/ok.blob", "w").write(T.hashlib.sha256(ok[0]).hexdigest())
build(sys.argv[2], "crc", [(bytes(crc), ok[1], ok[2])])
build(sys.argv[2], "tail", [(ok[0] + b"tail", ok[1], ok[2])])
PY
	# the blob is read by two threads: the main one verifies its digest
	# and writes the files, the other inflates it
	run strace -f -y -qq -e trace=read,pwrite64 -o "$BATS_TEST_TMPDIR/trace" \
		"$B" --store "$S" import "$D/ok:ok" --no-sync
	echo "$output"
	[ "$status" = 0 ]
	blob=$(cat "$D/ok.blob")
	readers=$(grep "read([0-9]*<[^>]*/blobs/sha256/$blob>" "$BATS_TEST_TMPDIR/trace" | cut -d' ' -f1 | sort -u)
	writers=$(grep "pwrite64([0-9]*<[^>]*/tmp/" "$BATS_TEST_TMPDIR/trace" | cut -d' ' -f1 | sort -u)
	echo "readers: $readers; writers: $writers"
	[ "$(wc -w <<<"$readers")" = 2 ]
	[ "$(wc -w <<<"$writers")" = 1 ]
	grep -qx "$writers" <<<"$readers"
	run "$B" --store "$S" verify ok
	[ "$status" = 0 ]

	# refused by either build (the ASan/UBSan one cleanly), leaving nothing
	for bin in "$B" "$B-asan"; do
		for c in "crc|64G|bad compressed stream: incorrect data check" \
			"tail|64G|bad compressed stream: data after the end of the gzip stream" \
			"ok|2M|layer expands beyond 2097152 bytes (--max-bytes)"; do
			IFS='|' read -r img max msg <<<"$c"
			rm -rf "$S"
			run "$bin" --store "$S" import "$D/$img:$img" --no-sync --max-bytes "$max"
			echo "$output"
			[ "$status" = 3 ]
			[[ $output == *"$msg"* ]]
			! grep -q 'runtime error\|Sanitizer' <<<"$output" || return 1
			lfs_empty_store
		done
	done
}
