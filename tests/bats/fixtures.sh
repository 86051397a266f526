#!/bin/bash
# Build, on the host, layer trees that are too slow to create inside the
# guest (file creation under the debug kernel costs milliseconds).
# vm/run.sh copies the result into the ext4 scratch disk (mkfs.ext4 -d),
# where the suites find it read-only-by-convention at $LFS_EXT4/fixtures.
#   tests/bats/fixtures.sh OUTDIR
#   tests/bats/fixtures.sh --images STORE OUTDIR
#       the references of 55-images for the oci2ovl store STORE (see
#       images_ref below), made once per import of the store
set -euo pipefail
bin=$(dirname "$0")/../../build/bin
probe=$bin/lfs-probe

# images_ref STORE OUT IMAGE: for IMAGE in STORE, what a read-only mount
# of its layers shows, computed without layerfs or overlay (so on the
# host, in seconds where the guest's walk of the kernel's overlay takes
# minutes):
#   OUT/IMAGE.dump  lfs-probe dump -x dirs,blocks -H 4096 of lfs-probe
#                   flatten of its layers, mtimes in whole seconds:
#                   mkfs.ext4 -d keeps no nanoseconds, so the guest's
#                   layers have none (the guest cuts them from its dump as
#                   well); files above 8 KiB hashed by their first and
#                   last 4 KiB (see 55-images)
#   OUT/IMAGE.stat  what the reference cannot show, blocks and the sizes
#                   and link counts of merged directories, is compared with
#                   the kernel's overlay in the guest, on these paths: the
#                   root and the directories that are in more than one
#                   layer, and every name any layer has in them (whiteouts
#                   and the names they hide too)
#   OUT/IMAGE.dirs  those directories that the mount shows, the root
#                   first, whose listings are compared with the kernel's
#                   overlay too
images_ref() {
	local store=$1 out=$2 img=$3 l
	local -a layers
	mapfile -t layers < <(OCI2OVL_STORE=$store "$bin/oci2ovl" layers "$img")
	[ ${#layers[@]} -gt 0 ] || { echo "fixtures: no layers of $img in $store" >&2; return 1; }
	rm -rf "$out/$img.flat"
	"$probe" flatten "$out/$img.flat" "${layers[@]}"
	"$probe" dump -x dirs,blocks -H 4096 "$out/$img.flat" |
		sed -E 's/ mt=([0-9]+)\.[0-9]+/ mt=\1/' >"$out/$img.dump"
	rm -rf "$out/$img.flat"
	for l in "${layers[@]}"; do
		(cd "$l" && find . -mindepth 1 -printf '%y %P\n')
	done | LC_ALL=C awk -v merged="$out/$img.dirs" '
		{ t = $1; p = substr($0, 3); seen[p] = 1; if (t == "d") dirs[p]++ }
		END {
			print "."
			print "." >merged
			for (p in seen) {
				q = p; sub(/\/?[^\/]*$/, "", q)
				if (q == "" || dirs[q] > 1 || dirs[p] > 1)
					print p
				if (dirs[p] > 1)
					print p >merged
			}
		}' | LC_ALL=C sort >"$out/$img.stat"
	# (those the mount shows)
	LC_ALL=C awk 'NR == FNR { if ($2 == "d") shown[$1] = 1; next }
		$0 == "." || $0 in shown' "$out/$img.dump" "$out/$img.dirs" |
		LC_ALL=C sort >"$out/$img.dirs.tmp"
	mv "$out/$img.dirs.tmp" "$out/$img.dirs"
}

if [ "${1:-}" = --images ]; then
	mkdir -p "$3"
	images_ref "$2" "$3" debian
	exit
fi

out=$1

# big8: 100,000 names over 8 layers.  Layer l holds the names i with
# i % 8 == l; the layer below repeats those that are also multiples of 5.
for ((l = 0; l < 8; l++)); do
	echo "N big8/L$l/big/name- $l 100000 8"
	if ((l < 7)); then
		echo "N big8/L$((l + 1))/big/name- $((l + 8 * ((5 - 2 * l % 5) % 5))) 100000 40"
	fi
done | "$probe" mktree "$out"

# oci-images: the images of 50-oci2ovl and 51-oci2ovl-layerfs
# (tools/oci2ovl/tests/mkimages.sh) and, for each, the tree 'umoci unpack'
# makes of it (lfs_tree.py dump): seconds here, a minute per suite in the
# guest
ocitests=$(dirname "$0")/../../tools/oci2ovl/tests
"$ocitests/mkimages.sh" "$out/oci-images/img" >/dev/null
for t in churn small deep; do
	umoci unpack --image "$out/oci-images/img/layout:$t" "$out/oci-images/ref-$t" >/dev/null
	python3 "$ocitests/lfs_tree.py" dump "$out/oci-images/ref-$t/rootfs" >"$out/oci-images/$t.want"
	rm -rf "$out/oci-images/ref-$t"
done
