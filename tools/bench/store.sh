#!/bin/bash
# The space of an oci2ovl store (issue #25): debian and three images made
# from it (images/debian-derived: squash, redated, app), imported into a
# fresh inline store (every layer keeps its files whole) and a fresh
# objects store (every distinct content once, in objects/), on the host,
# against the distinct content of the four images. See docs/bench.md.
#
#   tools/bench/store.sh [--out DIR] [--oci2ovl BIN] [--images DIR]
#                        [--no-mkfs] [--keep]
#
#   --out DIR      the results: DIR/store.csv, DIR/store-notes.txt, and
#                  the stores in DIR/store/ while measuring (build/bench)
#   --oci2ovl BIN  build/bin/oci2ovl
#   --images DIR   the image layouts ($IMAGES_OUT, else
#                  ~/.cache/layerfs/images)
#   --no-mkfs      skip the what-ifs: the objects store copied into new
#                  ext4 images (mkfs.ext4 -d, no mount) with 256-byte and
#                  512-byte inodes, with inline_data, and 1 KiB blocks
#   --keep         keep the stores (else removed at the end)
#
# store.csv: store,part,count,apparent_bytes,allocated_bytes,seconds. Its
# rows: distinct,content (tools/bench/store-walk.py distinct); per store
# (inline, objects) import (seconds for the four imports, --no-sync), the
# parts of store-walk.py parts, and total (du -s --apparent-size -B1, du
# -s -B1); objects-mkfs,OPTIONS: the blocks the objects store takes in a
# new ext4 made with mkfs.ext4 OPTIONS -d (blocks in use minus those of
# the same file system made empty). tools/bench/report.sh makes its table.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
out=build/bench
oci2ovl=build/bin/oci2ovl
images=${IMAGES_OUT:-${LFS_CACHE:-$HOME/.cache/layerfs}/images}
mkfs=1
keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2; shift 2 ;;
	--oci2ovl) oci2ovl=$2; shift 2 ;;
	--images) images=$2; shift 2 ;;
	--no-mkfs) mkfs=0; shift ;;
	--keep) keep=1; shift ;;
	*)
		echo "usage: $0 [--out DIR] [--oci2ovl BIN] [--images DIR] [--no-mkfs] [--keep]" >&2
		exit 2
		;;
	esac
done
IMAGES=(debian debian-squash debian-redated debian-app)
# (the objects store's ext4 what-ifs: a file system of this size, sparse)
MKFS_SIZE=16G

log() {
	printf 'store: %s\n' "$*" >&2
}

die() {
	log "$*"
	exit 1
}

[ -x "$oci2ovl" ] || die "no $oci2ovl: make build/bin/oci2ovl"
for i in "${IMAGES[@]}"; do
	[ -s "$images/$i/index.json" ] || die "no image $images/$i: make image-$i"
done
mkdir -p "$out"
work=$out/store
csv=$out/store.csv
notes=$out/store-notes.txt
rm -rf "$work" "$csv" "$notes"
mkdir "$work"
trap '[ $keep = 1 ] || rm -rf "$work"' EXIT
rows=$work/rows.csv
: >"$rows"

{
	echo "store: the stores on $(realpath "$work"): $(stat -f -c '%T, blocks of %S bytes' "$work")"
	for i in "${IMAGES[@]}"; do
		echo "store: image $i: $(jq -r '.manifests[0].digest' "$images/$i/index.json")"
	done
} >>"$notes"

# import_all FORMAT: the four images into a fresh store of FORMAT
import_all() {
	local fmt=$1 s=$work/$1 i t0 t1 opt=()
	[ "$fmt" = inline ] || opt=(--objects)
	log "$fmt: importing ${IMAGES[*]}"
	t0=$(date +%s.%N)
	for i in "${IMAGES[@]}"; do
		"$oci2ovl" --store "$s" import "$images/$i:latest" --name "$i" \
			--no-sync "${opt[@]}" >>"$work/import-$fmt.log" 2>&1 ||
			{ tail -n 20 "$work/import-$fmt.log" >&2; die "$fmt: import of $i failed"; }
	done
	t1=$(date +%s.%N)
	sync -f "$s"
	grep -i 'warning' "$work/import-$fmt.log" | sort | uniq -c |
		sed "s/^ *\([0-9]*\) /store: $fmt import: \1x /" >>"$notes" || true
	log "$fmt: measuring"
	{
		echo "$fmt,import,${#IMAGES[@]},,,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
		python3 "$here/store-walk.py" parts "$fmt" "$s" | sed 's/$/,/'
		echo "$fmt,total,,$(du -s --apparent-size -B1 "$s" | cut -f1),$(du -s -B1 "$s" | cut -f1),"
	} >>"$rows"
}

# used_blocks IMAGE: blocks in use in the ext4 file system in IMAGE
used_blocks() {
	dumpe2fs -h "$1" 2>/dev/null | awk -F: '
		/^Block count/ { n = $2 } /^Free blocks/ { f = $2 }
		/^Block size/ { b = $2 }
		END { print (n - f) * b }'
}

# mkfs_whatif OPTIONS...: the objects store in a new ext4 made with
# OPTIONS; its bytes in use over those of the same file system empty
mkfs_whatif() {
	local img=$work/ext4.img empty used
	rm -f "$img"
	truncate -s $MKFS_SIZE "$img"
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$@" "$img"
	empty=$(used_blocks "$img")
	rm -f "$img"
	truncate -s $MKFS_SIZE "$img"
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$@" \
		-d "$work/objects" "$img"
	used=$(used_blocks "$img")
	rm -f "$img"
	echo "objects-mkfs,$*,,,$((used - empty)),"
}

t0=$SECONDS
import_all inline
log "distinct contents of the inline store's layers"
python3 "$here/store-walk.py" distinct "$work/inline" | sed 's/$/,/' >>"$rows"
import_all objects
if [ $mkfs = 1 ]; then
	for o in "-I 256" "-I 512" "-I 512 -O inline_data" \
		"-b 1024 -I 512 -O inline_data"; do
		log "objects store in a new ext4: mkfs.ext4 $o -d"
		# shellcheck disable=SC2086 # the options are words
		mkfs_whatif $o >>"$rows"
	done
fi
{
	echo "store,part,count,apparent_bytes,allocated_bytes,seconds"
	cat "$rows"
} >"$csv"

# the objects must be the distinct contents, exactly
awk -F, '$1 == "distinct" { n = $3; b = $4 }
	$1 == "objects" && $2 == "objects" { on = $3; ob = $4 }
	END {
		if (n != on || b != ob)
			printf "store: MISMATCH: %d objects of %d bytes, %d distinct contents of %d bytes\n", on, ob, n, b
		else
			printf "store: the objects are the distinct contents: %d, %d bytes\n", n, b
	}' "$csv" >>"$notes"
echo "store: measured in $((SECONDS - t0)) s" >>"$notes"
cat "$notes" >&2
awk -F, 'NR == FNR { if ($1 == "distinct") d = $4; next }
	$2 == "total" {
		printf "store: %s (%s): %d bytes allocated, %.3f times the distinct content (%d bytes)\n",
			$1, "du", $5, $5 / d, d }' \
	"$csv" "$csv" >&2
log "results: $csv"
