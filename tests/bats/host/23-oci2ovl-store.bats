#!/usr/bin/env bats
# oci2ovl's layer store on the host: a crash-safe first import (the
# whiteout format file, concurrent first imports, a run killed in the
# window), directory fsyncs after every rename that publishes something;
# mount leases (gc, rm, re-import, umount, stale leases); re-imports.
# The runs are killed or paused at named points through the test seams
# OCI2OVL_TEST_CRASH and OCI2OVL_TEST_PAUSE, and 'oci2ovl mount' mounts
# an empty tmpfs in place of layerfs through OCI2OVL_TEST_MOUNT=tmpfs
# (docs/oci2ovl.md, Tests): layerfs is never mounted on the host. Those
# mounts are made under the test's directory, and teardown unmounts them.
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
	M=$BATS_TEST_TMPDIR/mnt
	export OCI2OVL_STORE=$S
	# 'oci2ovl mount' mounts a tmpfs, never layerfs (see lfs_mount)
	export OCI2OVL_TEST_MOUNT=tmpfs
	mkdir -p "$M"
}

teardown() {
	local m
	[ -z "$SLEEPER" ] || kill "$SLEEPER" 2>/dev/null || true
	# every mount under the test's directory, the deepest first
	findmnt -rn -o TARGET | grep "^$BATS_TEST_TMPDIR/" | sort -r >"$BATS_TEST_TMPDIR/mounts" || true
	while read -r m; do
		umount -l "$m" || true
	done <"$BATS_TEST_TMPDIR/mounts"
}

# lfs_mount IMAGE TARGET...: oci2ovl mount, only ever through the tmpfs seam
lfs_mount() {
	[ "$OCI2OVL_TEST_MOUNT" = tmpfs ] || return 1
	"$B" mount "$@" >/dev/null
}

# lfs_layer IMAGE: the hex names of the image's layer directories
lfs_layer() {
	local l
	l=$("$B" layers "$1") || return 1
	sed 's|.*/||' <<<"$l"
}

# lfs_lease_ids: the IDs of the store's leases, one a line
lfs_lease_ids() {
	local l
	l=$(ls "$S/leases") || return 1
	sed 's/\.json$//' <<<"$l"
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

@test "mount records a lease naming the mount point and the layers; umount unmounts and drops it" {
	"$B" import "$L:deep"
	lfs_mount deep "$M"
	mountpoint -q "$M"
	id=$(lfs_lease_ids)
	[ "$(wc -l <<<"$id")" = 1 ]
	python3 - "$S/leases/$id.json" "$S/images/deep.json" "$(realpath "$M")" <<'EOF'
import json, sys
lease = json.load(open(sys.argv[1]))
rec = json.load(open(sys.argv[2]))
assert lease["target"] == sys.argv[3], lease
assert lease["image"] == "deep", lease
assert lease["layers"] == [l["store_key"] for l in rec["layers"]], lease
assert lease["manifest_digest"] == rec["manifest_digest"], lease
assert lease["source"] == "oci2ovl:deep:" + lease["id"], lease
# the mount that mountinfo shows is the one the lease names
mi = [l.split() for l in open("/proc/self/mountinfo")]
assert [m for m in mi if m[4] == sys.argv[3] and m[-2] == lease["source"]], mi
EOF
	"$B" umount "$M"
	run mountpoint -q "$M"
	[ "$status" = 32 ]
	lfs_empty "$S/leases"
	# nothing left to unmount there
	run "$B" umount "$M"
	[ "$status" = 1 ]
	[[ $output == *"no oci2ovl mount there"* ]]
}

@test "rm of a mounted image is refused with exit status 4, naming the mount" {
	"$B" import "$L:small"
	lfs_mount small "$M"
	run "$B" rm small
	echo "$output"
	[ "$status" = 4 ]
	[[ $output == *"image small is in use: mounted on \"$(realpath "$M")\""* ]]
	[[ $output == *"rm --force"* ]]
	[ -f "$S/images/small.json" ]
	"$B" umount "$M"
	"$B" rm small
	[ ! -e "$S/images/small.json" ]
}

@test "gc keeps the layers of a mounted image removed with rm --force, and says so" {
	"$B" import "$L:small"
	"$B" import "$L:churn"
	layer=$(lfs_layer small)
	lfs_mount small "$M"
	run "$B" rm --force small
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"removed all the same"* ]]
	[ ! -e "$S/images/small.json" ]
	run "$B" gc
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"gc: layer sha256:$layer kept: image small mounted on \"$(realpath "$M")\""* ]]
	[ -d "$S/layers/$layer" ]
	[ "$(ls "$S/layers" | wc -l)" = 5 ]
	"$B" umount "$M"
	"$B" gc
	[ ! -e "$S/layers/$layer" ]
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
}

@test "a re-import under an existing name is refused without --replace; the same image again is fine" {
	"$B" import "$L:small"
	before=$(cat "$S/images/small.json")
	run "$B" import "$L:churn" --name small
	echo "$output"
	[ "$status" = 4 ]
	[[ $output == *"image small exists (manifest sha256:"*"give --replace"* ]]
	[ "$(cat "$S/images/small.json")" = "$before" ]
	# refused before any layer was extracted
	[ "$(ls "$S/layers" | wc -l)" = 1 ]
	"$B" import "$L:small"
	[ "$(cat "$S/images/small.json")" = "$before" ]
	"$B" import "$L:churn" --name small --replace
	[ "$("$B" layers small | wc -l)" = 4 ]
}

@test "a replaced image's layers stay while it is mounted" {
	"$B" import "$L:small"
	layer=$(lfs_layer small)
	lfs_mount small "$M"
	run "$B" import "$L:churn" --name small --replace
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"image small replaced; the old one's layers stay while it is mounted on"* ]]
	"$B" gc
	[ -d "$S/layers/$layer" ]
	"$B" umount "$M"
	"$B" gc
	[ ! -e "$S/layers/$layer" ]
	[ "$(ls "$S/layers" | wc -l)" = 4 ]
}

@test "a lease whose mount is gone is stale: rm and gc drop it and say so" {
	"$B" import "$L:small"
	layer=$(lfs_layer small)
	lfs_mount small "$M"
	# unmounted behind oci2ovl's back, then another mount on that point
	umount "$M"
	mount -t tmpfs other "$M"
	run "$B" rm small
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"dropped the lease of image small mounted on"*"not mounted"* ]]
	lfs_empty "$S/leases"
	"$B" gc
	[ ! -e "$S/layers/$layer" ]
}

@test "a lease is stale when another mount of its type, not its source, is on its mount point" {
	"$B" import "$L:small"
	layer=$(lfs_layer small)
	lfs_mount small "$M"
	umount "$M"
	mount -t tmpfs "oci2ovl:small:0123" "$M"
	"$B" rm small
	"$B" gc
	[ ! -e "$S/layers/$layer" ]
	lfs_empty "$S/leases"
}

@test "a lease made in another mount namespace holds while the namespace lives" {
	"$B" import "$L:small"
	layer=$(lfs_layer small)
	[ "$OCI2OVL_TEST_MOUNT" = tmpfs ]
	"$REPO/tools/oci2ovl/tests/unshare-m.sh" sh -c '"$1" mount small "$2" >/dev/null && touch "$3" && exec sleep 60' \
		sh "$B" "$M" "$BATS_TEST_TMPDIR/ready" &
	SLEEPER=$!
	for _ in $(seq 100); do
		[ ! -e "$BATS_TEST_TMPDIR/ready" ] || break
		sleep 0.05
	done
	[ -e "$BATS_TEST_TMPDIR/ready" ]
	# not mounted here, but in its namespace
	run mountpoint -q "$M"
	[ "$status" = 32 ]
	run "$B" rm small
	[ "$status" = 4 ]
	"$B" rm --force small
	"$B" gc
	[ -d "$S/layers/$layer" ]
	# from here it cannot be unmounted
	run "$B" umount "$M"
	[ "$status" = 4 ]
	[[ $output == *"in another mount namespace"* ]]
	kill "$SLEEPER"
	wait "$SLEEPER" || true
	SLEEPER=
	run "$B" gc
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"its mount namespace is gone"* ]]
	[ ! -e "$S/layers/$layer" ]
	lfs_empty "$S/leases"
}

@test "a mount killed between its lease and its mount leaves a stale lease that gc drops" {
	"$B" import "$L:small"
	layer=$(lfs_layer small)
	[ "$OCI2OVL_TEST_MOUNT" = tmpfs ]
	run env OCI2OVL_TEST_CRASH=lease-added "$B" mount small "$M"
	[ "$status" = 137 ]
	run mountpoint -q "$M"
	[ "$status" = 32 ]
	[ "$(lfs_lease_ids | wc -l)" = 1 ]
	"$B" rm small
	"$B" gc
	[ ! -e "$S/layers/$layer" ]
	lfs_empty "$S/leases"
}

@test "umount leaves an image mounted under another mount, and its lease" {
	"$B" import "$L:small"
	lfs_mount small "$M"
	mount -t tmpfs over "$M"
	run "$B" umount "$M"
	echo "$output"
	[ "$status" = 4 ]
	[[ $output == *"not the topmost mount there"* ]]
	[ "$(lfs_lease_ids | wc -l)" = 1 ]
	umount "$M"
	"$B" umount "$M"
	run mountpoint -q "$M"
	[ "$status" = 32 ]
	lfs_empty "$S/leases"
}

@test "a lease that cannot be read stops gc: nothing is removed" {
	"$B" import "$L:small"
	"$B" import "$L:deep"
	"$B" rm deep
	mkdir -p "$S/leases" "$S/tmp/leftover"
	echo '{"id": ' >"$S/leases/0123456789abcdef0123456789abcdef.json"
	before=$(find "$S" | sort)
	run "$B" gc
	echo "$output"
	[ "$status" = 1 ]
	[[ $output == *"lease 0123456789abcdef0123456789abcdef.json: unreadable"* ]]
	[[ $output == *"nothing removed"* ]]
	[ "$(find "$S" | sort)" = "$before" ]
}

@test "gc --dry-run lists what gc removes, and removes nothing" {
	"$B" import "$L:small"
	"$B" import "$L:deep"
	"$B" rm deep
	mkdir -p "$S/tmp/leftover"
	# and a stale lease
	lfs_mount small "$M"
	umount "$M"
	before=$(find "$S" | sort)
	"$B" gc --dry-run >"$BATS_TEST_TMPDIR/would"
	cat "$BATS_TEST_TMPDIR/would"
	[ "$(find "$S" | sort)" = "$before" ]
	# deep's six layers and their tree manifests, the leftover, the lease
	[ "$(wc -l <"$BATS_TEST_TMPDIR/would")" = 14 ]
	"$B" gc
	# exactly what it listed went
	(set -o pipefail; cd "$S" && find layers trees tmp leases -mindepth 1 -maxdepth 1 | sort) >"$BATS_TEST_TMPDIR/left"
	python3 - "$before" "$S" "$BATS_TEST_TMPDIR/would" "$BATS_TEST_TMPDIR/left" <<'EOF'
import sys
before, store, would, left = sys.argv[1:]
top = {p[len(store) + 1:] for p in before.splitlines()
       if p.startswith(store + "/") and p[len(store) + 1:].count("/") == 1
       and p[len(store) + 1:].split("/")[0] in ("layers", "trees", "tmp", "leases")}
gone = top - set(open(left).read().split())
assert gone == set(open(would).read().split()), (gone, open(would).read())
EOF
}

# lfs_verify ARGS...: run oci2ovl verify ARGS; stdout in $output, stderr
# in $BATS_TEST_TMPDIR/err (and shown)
lfs_verify() {
	run sh -c '"$1" verify "$3" 2>"$2"; rc=$?; cat "$2" >&2; exit $rc' sh "$B" "$BATS_TEST_TMPDIR/err" "$1"
}

@test "import writes a tree manifest of every layer it adds, and verify finds them intact" {
	"$B" import "$L:churn"
	"$B" import "$L:deep"
	for l in $(lfs_layer churn) $(lfs_layer deep); do
		head -n 1 "$S/trees/$l" | grep -q "^oci2ovl-tree 1 sha256:$l ino=[0-9]*$"
	done
	[ "$(ls "$S/trees" | wc -l)" = 10 ]
	lfs_verify churn
	[ "$status" = 0 ]
	[ "${#lines[@]}" = 4 ]
	for l in $(lfs_layer churn); do
		[[ $output == *"sha256:$l: ok"* ]]
	done
	lfs_verify --all
	[ "$status" = 0 ]
	[ "${#lines[@]}" = 10 ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
}

@test "verify reports every difference of a layer, naming the layer, the path and what changed" {
	"$B" import "$L:churn"
	bottom=$(lfs_layer churn | tail -n 1)
	d=$S/layers/$bottom
	manifest=$S/trees/$bottom
	# content (same size), mode, owner, xattrs changed, removed, added
	printf 'X' | dd of="$d/d1/sub/x" conv=notrunc status=none
	chmod 0755 "$d/usr/bin/tool"
	chown 0:0 "$d/home/user/file"
	setfattr -n user.comment -v bye "$d/etc/hosts"
	setfattr -x user.dir "$d/etc"
	setfattr -n trusted.evil -v 1 "$d/f1"
	# a symlink's target, a broken hard link, a type, a device number
	ln -sfn /etc/shadow "$d/etc/rel"
	cp -a "$d/usr/bin/b" "$d/usr/bin/b.new"
	mv "$d/usr/bin/b.new" "$d/usr/bin/b"
	rm "$d/pipe"
	touch "$d/pipe"
	rm "$d/dev-null"
	mknod -m 0644 "$d/dev-null" c 1 5
	# an entry gone, an entry added
	rm "$d/gone/deeper/g"
	echo x >"$d/var/tmp/new"
	lfs_verify churn
	[ "$status" = 3 ]
	[[ $output == *"sha256:$bottom: 17 differences"* ]]
	[ "$(grep -c ': ok$' <<<"$output")" = 3 ]
	p="oci2ovl: layer sha256:$bottom: entry"
	sha=$(sed -n 's|^d1/sub/x .* sha256=\([0-9a-f]*\)$|\1|p' "$manifest")
	now=$(sha256sum "$d/d1/sub/x" | cut -d' ' -f1)
	cat >"$BATS_TEST_TMPDIR/want" <<EOF
$p "d1/sub/x": sha256 $now, recorded $sha
$p "dev-null": rdev 1:5, recorded 1:3
$p "etc": xattr user.dir missing, recorded 64
$p "etc/hosts": xattr user.comment 627965, recorded 68656c6c6f
$p "etc/rel": target /etc/shadow, recorded ../usr/bin/tool
$p "f1": xattr trusted.evil 31, not recorded
$p "gone/deeper/g": missing
$p "home/user/file": uid 0, recorded 1000
$p "home/user/file": gid 0, recorded 1000
$p "pipe": type f, recorded p
$p "pipe": size 0, not recorded
$p "pipe": sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855, not recorded
$p "usr/bin/b": link missing, recorded etc/c
$p "usr/bin/b": size 5, not recorded
$p "usr/bin/b": sha256 a6328afc76e9db71da297ebff4b0d3e7a7eb3b01d917c05a6573fef121b6ecb6, not recorded
$p "usr/bin/tool": mode 0755, recorded 4755
$p "var/tmp/new": not in the tree manifest
EOF
	sort -o "$BATS_TEST_TMPDIR/got" "$BATS_TEST_TMPDIR/err"
	sort -o "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/want"
	diff -u "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
}

@test "import hashes each file as it writes it: its manifest is what a walk reading every file finds, and only sparse files are read back" {
	src=$BATS_TEST_TMPDIR/src
	img=$BATS_TEST_TMPDIR/img
	mkdir -p "$src/d" "$img"
	printf abc >"$src/abc"
	: >"$src/empty"
	head -c 3000000 /dev/urandom >"$src/d/big"
	ln "$src/abc" "$src/d/hard"
	# sparse: data after a hole, and a hole at the end
	truncate -s 1M "$src/holes"
	printf tail | dd of="$src/holes" bs=1 seek=600000 conv=notrunc status=none
	truncate -s 2M "$src/hole-end"
	printf head | dd of="$src/hole-end" conv=notrunc status=none
	tar --sparse --format=pax -C "$src" -cf "$BATS_TEST_TMPDIR/layer.tar" .
	python3 - "$REPO/tools/oci2ovl/tests" "$img" "$BATS_TEST_TMPDIR/layer.tar" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import lfs_tree as T
d = T.layout(sys.argv[2], "files", None)
T.write_index(d, "files", [T.image(d, [open(sys.argv[3], "rb").read()])])
PY
	S=$(realpath -m "$S")
	# (LeakSanitizer cannot run under ptrace: the plain build)
	run strace -f -y -qq -e trace=read -o "$BATS_TEST_TMPDIR/trace" \
		"$REPO/build/bin/oci2ovl" --store "$S" import "$img/files:files"
	echo "$output"
	[ "$status" = 0 ]
	# the new layer's files read back (for the manifest): the sparse ones
	got=$(sed -n "s|^[0-9]* *read([0-9]*<$S/tmp/[^/>]*/\([^>]*\)>.*|\1|p" "$BATS_TEST_TMPDIR/trace" | sort -u)
	echo "read back: $got"
	[ "$got" = "$(printf 'hole-end\nholes')" ]
	# and the manifest is what verify's walk, reading every file, finds
	lfs_verify files
	[ "$status" = 0 ]
	[ "$output" = "sha256:$(lfs_layer files): ok" ]
	[ ! -s "$BATS_TEST_TMPDIR/err" ]
	l=$(lfs_layer files)
	for f in abc empty d/big holes hole-end; do
		sum=$(sha256sum "$S/layers/$l/$f")
		grep -q "^$f type=f .* sha256=${sum%% *}\( \|$\)" "$S/trees/$l"
	done
	grep -q "^d/hard type=f .* link=abc\( \|$\)" "$S/trees/$l"
	# a file changed after the import is still caught
	printf XXXXXXXX | dd of="$S/layers/$l/d/big" bs=1 seek=100 conv=notrunc status=none
	lfs_verify files
	[ "$status" = 3 ]
	grep -q "entry \"d/big\": sha256 " "$BATS_TEST_TMPDIR/err"
}

@test "verify says which layers it cannot check: no manifest, no layer, a manifest of another layer" {
	"$B" import "$L:churn"
	set -- $(lfs_layer churn)
	rm "$S/trees/$1"
	rm -r "$S/layers/$2"
	cp "$S/trees/$4" "$S/trees/$3"
	lfs_verify churn
	[ "$status" = 3 ]
	[[ $output == *"sha256:$1: 1 difference"* ]]
	[[ $output == *"sha256:$4: ok"* ]]
	grep -qx "oci2ovl: layer sha256:$1: no tree manifest (imported by an oci2ovl without verify, or its import was killed): it cannot be verified" "$BATS_TEST_TMPDIR/err"
	grep -qx "oci2ovl: layer sha256:$2: missing from the store" "$BATS_TEST_TMPDIR/err"
	grep -qx "oci2ovl: layer sha256:$3: the tree manifest is not one" "$BATS_TEST_TMPDIR/err"
	run "$B" verify nosuch
	[ "$status" = 1 ]
	run "$B" verify churn --all
	[ "$status" = 2 ]
}

@test "a crash between a layer's rename and its manifest's leaves the manifest in tmp/: verify reads it, gc puts it in place" {
	run env OCI2OVL_TEST_CRASH=layer-renamed "$B" import "$L:small"
	[ "$status" = 137 ]
	layer=$(ls "$S/layers")
	[ -n "$layer" ]
	[ ! -e "$S/trees/$layer" ]
	# and manifests of other copies of that layer, which lost the race
	cand=$(ls "$S/tmp" | grep "^$layer\..*\.tree$")
	for x in aaaaaa zzzzzz; do
		sed "1s/ino=[0-9]*/ino=1/" "$S/tmp/$cand" >"$S/tmp/$layer.$x.tree"
		echo 'x type=f mode=0644 uid=0 gid=0' >>"$S/tmp/$layer.$x.tree"
	done
	lfs_verify --all
	[ "$status" = 0 ]
	[ "$output" = "sha256:$layer: ok" ]
	"$B" import "$L:small"
	"$B" gc
	[ -f "$S/trees/$layer" ]
	lfs_empty "$S/tmp"
	# the copy that won: its ino= is the layer's, not the other's line
	head -n 1 "$S/trees/$layer" | grep -qx "oci2ovl-tree 1 sha256:$layer ino=$(stat -c %i "$S/layers/$layer")"
	run grep -c '^x ' "$S/trees/$layer"
	[ "$output" = 0 ]
	lfs_verify small
	[ "$status" = 0 ]
}

@test "gc removes a layer's tree manifest with the layer" {
	"$B" import "$L:small"
	"$B" import "$L:deep"
	"$B" rm deep
	"$B" gc
	[ "$(ls "$S/trees")" = "$(ls "$S/layers")" ]
	[ "$(ls "$S/trees" | wc -l)" = 1 ]
}

# lfs_chain_images DIR: layouts base (one layer) and chain (that layer and
# an upper one whose entry has a parent only the base names: it is stored
# under a chain key, not its diff_id)
lfs_chain_images() {
	python3 - "$REPO/tools/oci2ovl/tests" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from lfs_tree import image, layout, tar, tarfile, ti, write_index
D = tarfile.DIRTYPE
base = tar([ti("home/", D, mode=0o755), ti("home/app/", D, mode=0o700)])
upper = tar([ti("home/app/.profile", data=b"p")])
for name, layers in (("base", [base]), ("chain", [base, upper])):
    d = layout(sys.argv[2], name, None)
    write_index(d, name, [image(d, layers)])
PY
}

# lfs_chain_key IMAGE: the store key of the image's top layer, checked to
# be a chain key (not its diff_id)
lfs_chain_key() {
	python3 - "$S/images/$1.json" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))["layers"][0]
assert l["store_key"] != l["diff_id"], l
print(l["store_key"][7:])
PY
}

@test "verify, leases, rm and gc name a chain-keyed layer by its store key" {
	local key base id
	lfs_chain_images "$BATS_TEST_TMPDIR/img"
	"$B" import "$BATS_TEST_TMPDIR/img/chain:chain"
	key=$(lfs_chain_key chain)
	base=$(lfs_layer chain | tail -n 1)
	[ -d "$S/layers/$key" ]
	head -n 1 "$S/trees/$key" | grep -q "^oci2ovl-tree 1 sha256:$key ino=[0-9]*$"
	lfs_verify chain
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "sha256:$key: ok
sha256:$base: ok" ] || [ "$output" = "sha256:$base: ok
sha256:$key: ok" ]
	lfs_verify --all
	[ "$status" = 0 ]
	[ "$(grep -c ': ok$' <<<"$output")" = 2 ]
	# a change in the chain-keyed layer is found under its key
	chmod 0600 "$S/layers/$key/home/app/.profile"
	lfs_verify chain
	[ "$status" = 3 ]
	[[ $output == *"layer sha256:$key: entry \"home/app/.profile\": mode 0600, recorded 0644"* ]]
	chmod 0644 "$S/layers/$key/home/app/.profile"
	# the lease names the store keys; gc keeps them for the mount
	lfs_mount chain "$M"
	id=$(lfs_lease_ids)
	python3 - "$S/leases/$id.json" "$key" "$base" <<'PY'
import json, sys
lease = json.load(open(sys.argv[1]))
assert lease["layers"] == ["sha256:" + k for k in sys.argv[2:]], lease
PY
	run "$B" rm chain
	[ "$status" = 4 ]
	"$B" rm --force chain
	run "$B" gc
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"gc: layer sha256:$key kept: image chain mounted on"* ]]
	[ -d "$S/layers/$key" ]
	[ -f "$S/trees/$key" ]
	[ -d "$S/layers/$base" ]
	[ -f "$S/trees/$base" ]
	"$B" umount "$M"
	"$B" gc
	lfs_empty "$S/layers"
	lfs_empty "$S/trees"
}

@test "a crash between a chain-keyed layer's rename and its manifest's: verify and gc find the manifest" {
	local key
	lfs_chain_images "$BATS_TEST_TMPDIR/img"
	"$B" import "$BATS_TEST_TMPDIR/img/base:base"
	# the base is in the store: the first rename is the chain-keyed layer's
	run env OCI2OVL_TEST_CRASH=layer-renamed "$B" import "$BATS_TEST_TMPDIR/img/chain:chain"
	[ "$status" = 137 ]
	key=$(ls "$S/layers" | grep -vx "$(lfs_layer base)")
	[ "$(wc -l <<<"$key")" = 1 ]
	[ ! -e "$S/trees/$key" ]
	lfs_verify --all
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == *"sha256:$key: ok"* ]]
	"$B" import "$BATS_TEST_TMPDIR/img/chain:chain"
	[ "$(lfs_chain_key chain)" = "$key" ]
	"$B" gc
	[ -f "$S/trees/$key" ]
	lfs_empty "$S/tmp"
	lfs_verify chain
	[ "$status" = 0 ]
}
