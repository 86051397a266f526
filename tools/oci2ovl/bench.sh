#!/bin/bash
# Benchmark: unpack time of the same layers by oci2ovl import, umoci
# unpack, and plain tar -x (one directory per layer, decompressing with
# gzip -dc), in one run. Root, offline.
#
#   tools/oci2ovl/bench.sh [WORKDIR]    (default: a fresh dir under /tmp)
#
# The image has three gzip layers made by umoci from /usr/include,
# /usr/lib/python3.11 and /usr/share/perl (whatever of them exists).
# Each tool runs BENCH_RUNS times (default 3); the best wall time is shown.
# BENCH_BIN=PATH times another build of oci2ovl (default: this tree's).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${BENCH_BIN:-$repo/build/bin/oci2ovl}
w=${1:-$(mktemp -d /tmp/oci2ovl-bench.XXXXXX)}
runs=${BENCH_RUNS:-3}
L=$w/layout
[ -x "$bin" ] || { echo "bench: build first: make tools" >&2; exit 1; }

if [ ! -d "$L" ]; then
	umoci init --layout "$L"
	umoci new --image "$L:bench" >/dev/null
	for src in /usr/include /usr/lib/python3.11 /usr/share/perl; do
		[ -d "$src" ] || continue
		rm -rf "$w/b"
		umoci unpack --image "$L:bench" "$w/b" >/dev/null
		mkdir -p "$w/b/rootfs$(dirname "$src")"
		cp -a "$src" "$w/b/rootfs$src"
		umoci repack --image "$L:bench" "$w/b" >/dev/null
	done
	rm -rf "$w/b"
fi
layers=$(python3 - "$L" <<'PY'
import json, sys
L = sys.argv[1]
idx = json.load(open(L + "/index.json"))
m = json.load(open(L + "/blobs/sha256/" + idx["manifests"][0]["digest"][7:]))
print(" ".join(l["digest"][7:] for l in m["layers"]))
PY
)
bytes=0 files=0
for l in $layers; do
	bytes=$((bytes + $(gzip -dc "$L/blobs/sha256/$l" | wc -c)))
	files=$((files + $(gzip -dc "$L/blobs/sha256/$l" | tar -t | wc -l)))
done

best() { # NAME PREP-COMMAND RUN-COMMAND
	local name=$1 prep=$2 cmd=$3 b= t0 t
	for _ in $(seq "$runs"); do
		eval "$prep"
		sync
		t0=$(date +%s%N)
		eval "$cmd"
		t=$((($(date +%s%N) - t0) / 1000000))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	printf '%-28s %7d ms\n' "$name" "$b"
}

tarx='i=0; for l in $layers; do i=$((i + 1)); mkdir -p "$w/tar/$i"; gzip -dc "$L/blobs/sha256/$l" | tar -x --xattrs --xattrs-include="*" --same-owner -p -C "$w/tar/$i"; done'

echo "bench: $(echo $layers | wc -w) gzip layers, $files entries, $((bytes / 1048576)) MiB uncompressed; best of $runs; $(df -T "$w" | awk 'NR==2 {print $2}') in $w"
best "tar -x (per layer)" 'rm -rf "$w/tar"' "$tarx"
best "umoci unpack" 'rm -rf "$w/umoci"' 'umoci unpack --image "$L:bench" "$w/umoci" >/dev/null'
best "oci2ovl import --no-sync" 'rm -rf "$w/store"' '"$bin" --store "$w/store" import "$L:bench" --no-sync'
best "oci2ovl import" 'rm -rf "$w/store"' '"$bin" --store "$w/store" import "$L:bench"'
[ -n "${1:-}" ] || rm -rf "$w"
