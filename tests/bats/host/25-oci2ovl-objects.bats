#!/usr/bin/env bats
# oci2ovl's object store on the host (docs/oci2ovl.md, "Objects"): an
# import --objects stores each distinct content once under objects/, the
# layers hold sparse metacopy files pointing at them with the metadata an
# inline import gives; tree manifests are the same either way; gc removes
# exactly the objects no layer points at; verify finds a corrupted, a
# missing and a forged object; hostile layers (a 1 GiB sparse file, hard
# links, files replaced by a later layer, forged markers). The images are
# made by tools/oci2ovl/tests/mkobjects.py. The host has no fs-verity:
# objects carry none here (the guest suite 51 covers verity). Host tests
# run as root.

setup_file() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	export REPO
	python3 "$REPO/tools/oci2ovl/tests/mkobjects.py" "$BATS_FILE_TMPDIR/img"
}

setup() {
	B=$REPO/build/bin/oci2ovl-asan
	I=$BATS_FILE_TMPDIR/img
	L=$I/layout
	S=$BATS_TEST_TMPDIR/store
	export OCI2OVL_STORE=$S
}

# lfs_objects STORE: the hex names of its objects, sorted, one a line
lfs_objects() {
	local l
	[ -d "$1/objects" ] || return 0
	l=$(cd "$1/objects" && find . -type f -printf '%h%f\n') || return 1
	sed 's|^\./||' <<<"$l" | sort
}

# lfs_objects_ok STORE: every object's content hashes to its name
lfs_objects_ok() {
	local names sums
	names=$(lfs_objects "$1") || return 1
	sums=$(cd "$1/objects" && find . -type f -exec sha256sum {} + | sed 's|  \./\(..\)/| \1|' | awk '{ print ($1 == $2) ? "ok" : "BAD " $2 }' | sort -u) || return 1
	[ -z "$names" ] || [ "$sums" = ok ] || { echo "$sums"; return 1; }
}

# lfs_dump DIR: type, mode, owner, size, links and mtime (not of
# symlinks: a whiteout's is the import's) of every entry, and its xattrs
# but the two pointer markers
lfs_dump() {
	python3 - "$1" <<'EOF'
import os, sys
root = sys.argv[1]
skip = ("trusted.overlay.metacopy", "trusted.overlay.redirect")
for d, dirs, files in sorted(os.walk(root)):
    for n in sorted(dirs + files):
        p = os.path.join(d, n)
        st = os.lstat(p)
        t = "" if os.path.islink(p) else st.st_mtime_ns
        xs = sorted((x, os.getxattr(p, x, follow_symlinks=False).hex())
                    for x in os.listxattr(p, follow_symlinks=False)
                    if x not in skip)
        print(os.path.relpath(p, root), oct(st.st_mode), st.st_uid,
              st.st_gid, st.st_size, st.st_nlink, t, xs)
EOF
}

# lfs_no_data FILE: the file holds no data block (SEEK_DATA finds none)
lfs_no_data() {
	python3 - "$1" <<'EOF'
import errno, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    off = os.lseek(fd, 0, os.SEEK_DATA)
except OSError as e:
    sys.exit(0 if e.errno == errno.ENXIO else 1)
print("%s: data at %d" % (sys.argv[1], off))
sys.exit(1)
EOF
}

# lfs_bytes OUT FILE...: the blocks allocated to the files, in bytes,
# into the file OUT
lfs_bytes() {
	local out=$1
	shift
	stat -c '%b %B' "$@" >"$out.blocks"
	awk '{ s += $1 * $2 } END { print s + 0 }' "$out.blocks" >"$out"
}

@test "import --objects stores each distinct content once: objects within 1.05x of the distinct content" {
	"$B" import --objects "$L:base" 2>"$BATS_TEST_TMPDIR/err"
	"$B" import "$L:derived" 2>>"$BATS_TEST_TMPDIR/err"
	cat "$BATS_TEST_TMPDIR/err"
	[ "$(cat "$S/data")" = objects ]
	# exactly the distinct non-empty contents of both images, by name
	diff <(awk '{ print $1 }' "$I/distinct-all") <(lfs_objects "$S")
	lfs_objects_ok "$S"
	local distinct stored files ratio
	distinct=$(awk '{ s += $2 } END { print s }' "$I/distinct-all")
	mapfile -t files < <(find "$S/objects" -type f)
	lfs_bytes "$BATS_TEST_TMPDIR/stored" "${files[@]}"
	stored=$(cat "$BATS_TEST_TMPDIR/stored")
	ratio=$(awk -v a="$stored" -v b="$distinct" 'BEGIN { printf "%.3f", a / b }')
	echo "objects: ${#files[@]}, $stored bytes for $distinct distinct: ${ratio}x"
	awk -v r="$ratio" 'BEGIN { exit !(r <= 1.05) }'
	# and the layers hold no file data at all
	mapfile -t files < <(find "$S/layers" -type f -size +0)
	[ "${#files[@]}" -gt 0 ]
	local f
	for f in "${files[@]}"; do
		lfs_no_data "$f"
	done
}

@test "each file with data becomes a sparse metacopy file pointing at its object, with the inline import's metadata" {
	local SI=$BATS_TEST_TMPDIR/inline l f rel obj
	"$B" import --objects "$L:derived" 2>/dev/null
	"$B" --store "$SI" import "$L:derived"
	[ ! -d "$SI/objects" ]
	# the same layers (store keys), the same entries and metadata
	diff <(ls "$SI/layers") <(ls "$S/layers")
	for l in $(ls "$S/layers"); do
		diff <(lfs_dump "$SI/layers/$l") <(lfs_dump "$S/layers/$l")
	done
	# each non-empty file: both markers, an object that holds its data
	while read -r rel; do
		f=$S/layers/$rel
		obj=$(getfattr -h --only-values -n trusted.overlay.redirect "$f")
		[[ $obj =~ ^/[0-9a-f]{2}/[0-9a-f]{62}$ ]] || { echo "$rel: redirect $obj"; return 1; }
		[ "$(getfattr -h --only-values -n trusted.overlay.metacopy "$f" | wc -c)" = 0 ]
		cmp "$SI/layers/$rel" "$S/objects$obj"
		lfs_no_data "$f"
	done < <(cd "$S/layers" && find . -type f -size +0 -printf '%P\n')
	# an empty file stays a plain empty file, without markers
	f=$(find "$S/layers" -name empty)
	[ -f "$f" ]
	[ ! -s "$f" ]
	run getfattr -h -d -m trusted.overlay "$f"
	[ "$status" = 0 ]
	[ -z "$output" ]
	# a hard link of the layer stays one: one metacopy file, two names
	f=$(find "$S/layers" -name a-link)
	[ "$(stat -c %i "$f")" = "$(stat -c %i "${f%-link}")" ]
	[ "$(stat -c %h "$f")" = 2 ]
}

@test "tree manifests are the same with and without --objects, and verify passes on both" {
	local SI=$BATS_TEST_TMPDIR/inline t
	"$B" import --objects "$L:derived" 2>/dev/null
	"$B" --store "$SI" import "$L:derived"
	diff <(ls "$SI/trees") <(ls "$S/trees")
	# all but the header's ino= (the layer root's inode number)
	for t in $(ls "$S/trees"); do
		diff <(sed 1d "$SI/trees/$t") <(sed 1d "$S/trees/$t")
		[ "$(sed 1q "$S/trees/$t" | cut -d' ' -f1-3)" = "oci2ovl-tree 1 sha256:$t" ]
	done
	"$B" verify --all
	"$B" --store "$SI" verify --all
}

@test "gc after rm removes exactly the objects no layer points at" {
	"$B" import --objects "$L:base" 2>/dev/null
	"$B" import "$L:derived" 2>/dev/null
	diff <(awk '{ print $1 }' "$I/distinct-all") <(lfs_objects "$S")
	"$B" rm derived
	# rm leaves the objects to gc
	diff <(awk '{ print $1 }' "$I/distinct-all") <(lfs_objects "$S")
	# the dry run lists what derived alone had, and removes nothing
	run "$B" gc --dry-run
	[ "$status" = 0 ]
	diff <(join -v1 <(awk '{ print $1 }' "$I/distinct-all") <(awk '{ print $1 }' "$I/distinct-base") | sed 's|^\(..\)|objects/\1/|') \
		<(grep '^objects/' <<<"$output" | sort)
	diff <(awk '{ print $1 }' "$I/distinct-all") <(lfs_objects "$S")
	"$B" gc
	diff <(awk '{ print $1 }' "$I/distinct-base") <(lfs_objects "$S")
	"$B" verify base
	"$B" rm base
	"$B" gc
	[ -z "$(lfs_objects "$S")" ]
}

@test "verify finds a corrupted object, a missing one and a pointer changed to another object" {
	local objs o1 o2 f
	"$B" import --objects "$L:base" 2>/dev/null
	mapfile -t objs < <(lfs_objects "$S")
	o1=${objs[0]:0:2}/${objs[0]:2}
	o2=${objs[1]:0:2}/${objs[1]:2}
	cp -a "$S/objects/$o1" "$BATS_TEST_TMPDIR/o1"
	printf X | dd of="$S/objects/$o1" bs=1 seek=7 conv=notrunc status=none
	mv "$S/objects/$o2" "$BATS_TEST_TMPDIR/o2"
	run "$B" verify base
	echo "$output"
	[ "$status" = 3 ]
	[[ $output == *"its object holds other content (sha256 "* ]]
	[[ $output == *"its object is missing"* ]]
	cp -a "$BATS_TEST_TMPDIR/o1" "$S/objects/$o1"
	mv "$BATS_TEST_TMPDIR/o2" "$S/objects/$o2"
	"$B" verify base
	# a pointer turned to another object of the store (of its size)
	f=$(find "$S/layers" -path '*/etc/c' -type f)
	setfattr -h -n trusted.overlay.redirect -v "/${objs[0]:0:2}/${objs[0]:2}" "$f"
	run "$B" verify base
	echo "$output"
	[ "$status" = 3 ]
	[[ $output == *'entry "etc/c": sha256 '"${objs[0]}"', recorded '* ]]
	# a marker that is not overlay's
	setfattr -h -n trusted.overlay.metacopy -v 0x01020304 "$f"
	run "$B" verify base
	[ "$status" = 3 ]
	[[ $output == *'entry "etc/c": metacopy marker not understood'* ]]
}

@test "an object that holds other content is replaced by the next import that needs it, never reused" {
	local c o
	"$B" import --objects "$L:base" 2>/dev/null
	# derived's third layer has a file of etc/c's content
	c=$(sha256sum < <(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import mkobjects; sys.stdout.buffer.write(mkobjects.content("c"))' "$REPO/tools/oci2ovl/tests") | cut -c1-64)
	o=$S/objects/${c:0:2}/${c:2}
	[ -f "$o" ]
	printf X | dd of="$o" bs=1 seek=7 conv=notrunc status=none
	run "$B" import "$L:derived"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"objects/${c:0:2}/${c:2} holds other content"*"; replaced"* ]]
	lfs_objects_ok "$S"
	"$B" verify --all
}

@test "a 1 GiB sparse file and its hard link make one sparse object, read back whole" {
	local SI=$BATS_TEST_TMPDIR/inline f big
	"$B" import --objects "$L:sparse" 2>/dev/null
	"$B" --store "$SI" import "$L:sparse"
	[ "$(lfs_objects "$S" | wc -l)" = 2 ]
	f=$(find "$S/layers" -name holes)
	[ "$(stat -c '%s %h' "$f")" = "1073741824 2" ]
	[ "$(stat -c %i "$f")" = "$(stat -c %i "$f-link")" ]
	lfs_no_data "$f"
	big=$S/objects$(getfattr -h --only-values -n trusted.overlay.redirect "$f")
	# holes stay holes: 16 KiB of data, well under a MiB on disk
	lfs_bytes "$BATS_TEST_TMPDIR/big" "$big"
	[ "$(cat "$BATS_TEST_TMPDIR/big")" -lt 1048576 ]
	cmp "$big" "$(find "$SI/layers" -name holes)"
	lfs_objects_ok "$S"
	"$B" verify sparse
}

@test "markers in the image are dropped: every pointer is oci2ovl's own" {
	local f v
	"$B" import --objects "$L:base" 2>/dev/null
	run "$B" import "$L:forged"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *'xattr trusted.overlay.redirect'*'dropped'* ]]
	f=$(find "$S/layers" -name forged -type f)
	v=$(getfattr -h --only-values -n trusted.overlay.redirect "$f")
	[ "$v" = "/$(sha256sum "$S/objects$v" | cut -c1-2)/$(sha256sum "$S/objects$v" | cut -c3-64)" ]
	cmp "$S/objects$v" <(printf 'forged\n')
	# the empty file the image marked stays plain
	f=$(find "$S/layers" -name forged-empty -type f)
	run getfattr -h -d -m trusted.overlay "$f"
	[ "$status" = 0 ]
	[ -z "$output" ]
	"$B" verify --all
}

@test "the data format is the first import's: --objects into an inline store is a usage error, a later import of an objects store makes objects" {
	local SI=$BATS_TEST_TMPDIR/inline
	"$B" --store "$SI" import "$L:base"
	[ "$(cat "$SI/data")" = inline ]
	run "$B" --store "$SI" import --objects "$L:derived"
	[ "$status" = 2 ]
	[[ $output == *"holds inline layers; use another store for --objects"* ]]
	[ ! -e "$SI/images/derived.json" ]
	# a store of an oci2ovl before objects (no data file) is inline
	rm "$SI/data"
	run "$B" --store "$SI" import --objects "$L:derived"
	[ "$status" = 2 ]
	"$B" import --objects "$L:base" 2>/dev/null
	"$B" import "$L:sparse" 2>/dev/null
	[ "$(cat "$S/data")" = objects ]
	[ -n "$(find "$S/layers" -name holes -size +0)" ]
	lfs_no_data "$(find "$S/layers" -name holes)"
}

@test "an import killed after publishing its objects, before its layer, leaves objects that gc removes" {
	run env OCI2OVL_TEST_CRASH=objects-published "$B" import --objects "$L:base"
	[ "$status" = 137 ]
	[ -n "$(lfs_objects "$S")" ]
	[ ! -e "$S/images/base.json" ]
	"$B" gc
	[ -z "$(lfs_objects "$S")" ]
	"$B" import --objects "$L:base" 2>/dev/null
	diff <(awk '{ print $1 }' "$I/distinct-base") <(lfs_objects "$S")
	"$B" verify base
}

@test "mount passes the object directory as a data-only layer with metacopy=on" {
	local l
	"$B" import --objects "$L:base" 2>/dev/null
	l=$("$B" layers base | tr '\n' ':')
	run "$B" mount base --print
	[ "$status" = 0 ]
	[ "$output" = "lowerdir=${l%:}::$S/objects,metacopy=on" ]
	# an inline store's mount has neither
	"$B" --store "$BATS_TEST_TMPDIR/inline" import "$L:base"
	run "$B" --store "$BATS_TEST_TMPDIR/inline" mount base --print
	[ "$status" = 0 ]
	[[ $output != *"::"* ]]
	[[ $output != *metacopy* ]]
}
