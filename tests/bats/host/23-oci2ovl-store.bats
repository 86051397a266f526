#!/usr/bin/env bats
# oci2ovl's layer store on the host: a crash-safe first import (the
# whiteout format file, concurrent first imports, a run killed in the
# window), directory fsyncs after every rename that publishes something.
# The runs are killed or paused at named points through the test seams
# OCI2OVL_TEST_CRASH and OCI2OVL_TEST_PAUSE (docs/oci2ovl.md, Tests).
# Host tests run as root.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	"$REPO/tools/oci2ovl/tests/mkimages.sh" "$BATS_FILE_TMPDIR/img"
}

setup() {
	B=$REPO/build/bin/oci2ovl-asan
	L=$BATS_FILE_TMPDIR/img/layout
	S=$BATS_TEST_TMPDIR/store
	export OCI2OVL_STORE=$S
}

# lfs_empty DIR: DIR exists and holds nothing
lfs_empty() {
	local l
	l=$(ls -A "$1") || return 1
	[ -z "$l" ] || { echo "$1 holds: $l"; return 1; }
}

# lfs_format_ok STORE FORMAT: the store's whiteout file is complete
lfs_format_ok() {
	local f
	f=$(od -An -c "$1/whiteout" | tr -s ' ') || return 1
	[ "$f" = " $(printf '%s' "$2" | sed 's/./& /g')\\n" ] || {
		echo "$1/whiteout holds:$f"
		return 1
	}
}

@test "an empty or torn whiteout file of an interrupted first import does not break the store" {
	mkdir -p "$S"
	: >"$S/whiteout"
	run "$B" import "$L:small"
	echo "$output"
	[ "$status" = 0 ]
	lfs_format_ok "$S" native
	"$B" layers small >/dev/null
	# a prefix of the word, without its newline: written in part
	rm -rf "$S"
	mkdir -p "$S"
	printf cha >"$S/whiteout"
	"$B" import "$L:small" --whiteout chardev
	lfs_format_ok "$S" chardev
	# a complete word the tool does not know is still an error
	printf 'bogus\n' >"$S/whiteout"
	run "$B" import "$L:churn"
	[ "$status" = 1 ]
	[[ $output == *"unknown layer format"* ]]
}

@test "a first import killed before its format file is published leaves none, and the next import works" {
	run env OCI2OVL_TEST_CRASH=publish-whiteout "$B" import "$L:small"
	[ "$status" = 137 ]
	# the store exists (its lock), but no whiteout file, whole or in part
	[ -f "$S/lock" ]
	[ ! -e "$S/whiteout" ]
	lfs_empty "$S/images"
	"$B" import "$L:small" --whiteout chardev
	lfs_format_ok "$S" chardev
	"$B" gc
	lfs_empty "$S/tmp"
}

@test "concurrent first imports into a new store agree on one whiteout format" {
	# each pauses between writing its format file and publishing it, so
	# that the others look at the store in that window
	local pids=() i rc ok=0 refused=0 fmt
	for i in 1 2 3 4 5 6; do
		fmt=native
		[ $((i % 2)) = 0 ] && fmt=chardev
		OCI2OVL_TEST_PAUSE=publish-whiteout "$B" import "$L:churn" \
			--name "c$i" --whiteout "$fmt" 2>"$BATS_TEST_TMPDIR/err$i" &
		pids+=($!)
	done
	for i in 1 2 3 4 5 6; do
		rc=0
		wait "${pids[i - 1]}" || rc=$?
		cat "$BATS_TEST_TMPDIR/err$i"
		case $rc in
		0) ok=$((ok + 1)) ;;
		2)
			grep -q 'holds .* layers; use another store' "$BATS_TEST_TMPDIR/err$i"
			refused=$((refused + 1))
			;;
		*) return 1 ;;
		esac
	done
	# the three of the format that won, and only they, imported
	[ "$ok" = 3 ]
	[ "$refused" = 3 ]
	fmt=$(cat "$S/whiteout")
	run "$B" list
	[ "${#lines[@]}" = 3 ]
	for i in 1 2 3 4 5 6; do
		if [ $((i % 2)) = 0 ]; then
			[ "$fmt" = chardev ] || [ ! -e "$S/images/c$i.json" ]
		else
			[ "$fmt" = native ] || [ ! -e "$S/images/c$i.json" ]
		fi
	done
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
	lfs_empty "$S/tmp"
}

@test "concurrent first imports of one format all succeed" {
	local pids=() i
	for i in 1 2 3 4 5; do
		OCI2OVL_TEST_PAUSE=publish-whiteout "$B" import "$L:churn" --name "c$i" &
		pids+=($!)
	done
	for i in 1 2 3 4 5; do
		wait "${pids[i - 1]}"
	done
	lfs_format_ok "$S" native
	for i in 1 2 3 4 5; do
		"$B" layers "c$i" >/dev/null
	done
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
	lfs_empty "$S/tmp"
}

# lfs_trace FILE CMD...: strace CMD's renames, links and syncs into FILE
# (with the paths of file descriptors)
lfs_trace() {
	local out=$1
	shift
	strace -f -y -qq -o "$out" -e trace=renameat,renameat2,rename,linkat,link,fsync,fdatasync,syncfs "$@"
}

@test "every rename or link that publishes into the store is followed by an fsync of its directory" {
	lfs_trace "$BATS_TEST_TMPDIR/trace" "$REPO/build/bin/oci2ovl" import "$L:deep"
	# what was published where: "DIR NAME" for each rename/link into S
	python3 - "$BATS_TEST_TMPDIR/trace" "$(realpath "$S")" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
store = sys.argv[2]
pub = re.compile(r'(?:renameat2?|linkat)\(\S+?<([^>]*)>, "([^"]*)", \S+?<([^>]*)>, "([^"]*)"')
sync = re.compile(r'f(?:data)?sync\(\d+<([^>]*)>\) += 0')
todo, seen = [], {}
for i, l in enumerate(lines):
    m = pub.search(l)
    if m and l.rstrip().endswith("= 0"):
        d = m.group(3) + "/" + m.group(4)
        # (hard links of a layer being extracted are not published)
        if not d.startswith(store + "/tmp/"):
            todo.append((i, d.rsplit("/", 1)[0], d))
    m = sync.search(l)
    if m:
        seen.setdefault(m.group(1), []).append(i)
kinds = set()
for i, parent, what in todo:
    assert parent.startswith(store), (parent, store)
    later = [j for j in seen.get(parent, []) if j > i]
    assert later, "no fsync of %s after publishing %s" % (parent, what)
    kinds.add(parent[len(store):])
# layers, the record and the whiteout format were all published
assert {"/layers", "/images", ""} <= kinds, kinds
print(sorted(kinds))
EOF
}

@test "a layer's files are synced before the rename that publishes it" {
	lfs_trace "$BATS_TEST_TMPDIR/trace" "$REPO/build/bin/oci2ovl" import "$L:small"
	# the syncfs of the layer's temporary directory, then its rename
	run grep -n -e 'syncfs(' -e 'renameat2(.*"layers/' "$BATS_TEST_TMPDIR/trace"
	echo "$output"
	[ "$status" = 0 ]
	[[ ${lines[0]} == *"syncfs("*"/tmp/"* ]]
	[[ ${lines[1]} == *'renameat2('*'"layers/'* ]]
	[ "${#lines[@]}" = 2 ]
}

@test "an import killed before its record is published leaves no record, and gc removes what it wrote" {
	"$B" import "$L:small"
	run env OCI2OVL_TEST_CRASH=publish-images "$B" import "$L:deep"
	[ "$status" = 137 ]
	[ ! -e "$S/images/deep.json" ]
	run "$B" list
	[ "${#lines[@]}" = 1 ]
	"$B" gc
	# nothing but the records, in images/ as in tmp/
	[ "$(ls -A "$S/images")" = small.json ]
	lfs_empty "$S/tmp"
	"$B" import "$L:deep"
	"$B" layers deep >/dev/null
}
