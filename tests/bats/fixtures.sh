#!/bin/bash
# Build, on the host, layer trees that are too slow to create inside the
# guest (file creation under the debug kernel costs milliseconds).
# vm/run.sh copies the result into the ext4 scratch disk (mkfs.ext4 -d),
# where the suites find it read-only-by-convention at $LFS_EXT4/fixtures.
#   tests/bats/fixtures.sh OUTDIR
set -euo pipefail
out=$1
probe=$(dirname "$0")/../../build/bin/lfs-probe

# big8: 100,000 names over 8 layers.  Layer l holds the names i with
# i % 8 == l; the layer below repeats those that are also multiples of 5.
for ((l = 0; l < 8; l++)); do
	echo "N big8/L$l/big/name- $l 100000 8"
	if ((l < 7)); then
		echo "N big8/L$((l + 1))/big/name- $((l + 8 * ((5 - 2 * l % 5) % 5))) 100000 40"
	fi
done | "$probe" mktree "$out"
