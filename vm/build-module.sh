#!/bin/bash
# Build src/layerfs.ko out of tree against the cached kernel, with W=1,
# and vm/selftest/lfs_selftest.ko, which only harness self-tests load.
# Any compiler or modpost warning fails the build.
#   vm/build-module.sh [extra kbuild arguments...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
kbuild=${LFS_CACHE:-$HOME/.cache/layerfs}/build-${FLAVOUR:-debug}
mkdir -p "$repo/build"
log=$repo/build/module.log
# the module, then the harness's self-test module (vm/selftest)
make -C "$kbuild" M="$repo/src" W=1 "$@" modules >"$log" 2>&1 &&
	make -C "$kbuild" M="$repo/vm/selftest" W=1 "$@" modules >>"$log" 2>&1
rc=$?
if [ $rc != 0 ] || grep -qiE '(warning|error):' "$log"; then
	cat "$log" >&2
	echo "module: build failed or warned (log: $log)" >&2
	exit 1
fi
grep -E '^ *(CC|LD) ' "$log" | sed 's/^/  /'
echo "module: $repo/src/layerfs.ko"
