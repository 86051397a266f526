#!/bin/bash
# Build the guest kernel for one flavour from Debian's linux-source-6.1,
# in a cache outside the repository, and prepare it for external modules.
#
#   vm/build-kernel.sh [debug|perf]
#
# Environment: LFS_CACHE (default $HOME/.cache/layerfs), JOBS.
# Rebuilds only when the flavour's fragments, the linux-source version or
# the compiler changed; otherwise prints one line and exits.
set -euo pipefail

flavour=${1:-debug}
here=$(cd "$(dirname "$0")" && pwd)
cache=${LFS_CACHE:-$HOME/.cache/layerfs}
tarball=/usr/src/linux-source-6.1.tar.xz
jobs=${JOBS:-$(nproc)}

case $flavour in
debug | perf) ;;
*)
	echo "build-kernel: unknown flavour '$flavour' (debug or perf)" >&2
	exit 2
	;;
esac
fragments=("$here/kernel/base.config" "$here/kernel/$flavour.config")

[ -r "$tarball" ] || {
	echo "build-kernel: $tarball missing: run 'make deps'" >&2
	exit 1
}
srcver=$(dpkg-query -W -f '${Version}' linux-source-6.1)
src=$cache/linux-source-$srcver
build=$cache/build-$flavour
stamp_want=$(
	{
		echo "linux-source $srcver"
		echo "flavour $flavour"
		gcc --version | head -n 1
		cat "${fragments[@]}"
	} | sha256sum | cut -d' ' -f1
)

if [ -f "$build/.lfs-stamp" ] && [ "$(cat "$build/.lfs-stamp")" = "$stamp_want" ] &&
	[ -f "$build/arch/x86/boot/bzImage" ]; then
	echo "kernel: $flavour up to date ($build)"
	exit 0
fi

mkdir -p "$cache"
if [ ! -f "$src/.lfs-extracted" ]; then
	echo "kernel: extracting linux-source $srcver into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.lfs-extracted"
	mv "$src.tmp" "$src"
	# a new source tree invalidates every build made from the old one
	rm -rf "$cache"/build-*
	find "$cache" -maxdepth 1 -name 'linux-source-*' ! -path "$src" -exec rm -rf {} +
fi

echo "kernel: configuring $flavour (allnoconfig + ${fragments[*]##*/})"
mkdir -p "$build"
rm -f "$build/.lfs-stamp"
(cd "$src" && scripts/kconfig/merge_config.sh -n -O "$build" "${fragments[@]}" >"$build/.merge.log" 2>&1) || {
	cat "$build/.merge.log" >&2
	exit 1
}

# every line of every fragment must hold in the final configuration
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*)
		grep -qxF -- "$line" "$build/.config" || {
			echo "build-kernel: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$build/.config" || echo unset)'" >&2
			bad=1
		}
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		if grep -q "^$sym=" "$build/.config"; then
			echo "build-kernel: wanted '$sym' off, but it is set" >&2
			bad=1
		fi
		;;
	esac
done < <(cat "${fragments[@]}")
[ $bad = 0 ] || exit 1

echo "kernel: building $flavour bzImage with $jobs jobs (log: $build/.build.log)"
if ! make -C "$src" O="$build" -j"$jobs" bzImage modules modules_prepare >"$build/.build.log" 2>&1; then
	tail -n 40 "$build/.build.log" >&2
	exit 1
fi
echo "$stamp_want" >"$build/.lfs-stamp"
ln -sfn "$src" "$cache/linux-source"
echo "kernel: $flavour ready: $build/arch/x86/boot/bzImage"
