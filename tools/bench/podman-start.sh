#!/bin/bash
# Container start time under podman, in the guest, for three storage
# setups of containers-storage's overlay driver:
#
#   overlay-driver   the kernel's overlayfs, mounted by the driver itself
#                    (no mount program)
#   fuse-overlayfs   mount_program = fuse-overlayfs (Debian's)
#   layerfs          mount_program = layerfs-mount (which mounts with
#                    whiteout=aufs in a containers-storage home)
#
# usage (from the host; a guest script, see vm/run.sh):
#   vm/run.sh script tools/bench/podman-start.sh [--reps N] [--csv FILE]
#       [--setups "overlay-driver fuse-overlayfs layerfs"]
#       LAYOUT...
#
#   LAYOUT     OCI image layouts (host paths, tag latest), for example
#              build/images/deep-128 (make image-deep-128); each image's
#              entrypoint is what runs
#   --reps     timed 'podman run --rm' per image and setup (default 5),
#              after one untimed run
#   --csv      rows go to FILE (default $LFS_RESULTS/podman-start.csv), in
#              tools/bench's schema: workload,system,param,mode,rep,
#              seconds,ops,checksum,status (workload podman-start, param
#              the image's layer count, mode pull or run)
#
# podman's storage is its default graph root, on tmpfs (lib-podman.bash).
# fuse-overlayfs and layerfs share one storage (both read layers in the
# AUFS whiteout format), so the image is pulled twice, not three times.
# A run counts as ok when it exits 0 and prints what the first run that
# worked printed (the overlay driver refuses images of more than 128
# layers).  Prints a summary table (median and min seconds).
# A module without whiteout=aufs (before issue #10's kernel side) cannot
# serve podman: the layerfs setup is then skipped, with a note.
set -uo pipefail

repo=${LFS_REPO:?}
res=${LFS_RESULTS:?}
reps=5 csv=$res/podman-start.csv root=/tmp/podman-start
setups="overlay-driver fuse-overlayfs layerfs"
layouts=()
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--csv) csv=$2; shift 2 ;;
	--setups) setups=$2; shift 2 ;;
	-*) echo "podman-start: unknown option $1" >&2; exit 2 ;;
	*) layouts+=("$1"); shift ;;
	esac
done
[ ${#layouts[@]} -gt 0 ] || { echo "podman-start: no image layout given" >&2; exit 2; }
# relative to the repository; not under what podman's setup covers with
# tmpfs.  Symlinks stay (build/images/NAME point into ~/.cache): podman
# names an oci: image after its path, and ".cache" is no valid name part
for i in "${!layouts[@]}"; do
	l=${layouts[i]}
	[[ $l == /* ]] || l=$repo/$l
	[ -f "$l/index.json" ] ||
		{ echo "podman-start: no OCI layout at ${layouts[i]}" >&2; exit 2; }
	case $(realpath "$l")/ in
	/var/tmp/* | /var/lib/containers/*)
		echo "podman-start: $l: podman's setup hides it under tmpfs" >&2
		exit 2
		;;
	esac
	layouts[i]=$l
done

# shellcheck source=tests/bats/lib-podman.bash
. "$repo/tests/bats/lib-podman.bash"
helper=$repo/build/bin/layerfs-mount
notes=$res/podman-start-notes.txt
: >"$notes"
[ -s "$csv" ] || echo "workload,system,param,mode,rep,seconds,ops,checksum,status" >"$csv"

ps_note() {
	echo "podman-start: $*" | tee -a "$notes" >&2
}

mkdir -p "$root/ps-probe/l" "$root/ps-probe/m"
if [[ " $setups " == *" layerfs "* ]] &&
	! "$helper" -f -o "lowerdir=$root/ps-probe/l,whiteout=aufs" "$root/ps-probe/m" 2>/dev/null; then
	ps_note "layerfs: the module has no whiteout=aufs, which podman's layers need: skipped"
	setups=${setups//layerfs/}
fi
rm -rf "$root/ps-probe"

ps_row() { # system layers mode rep seconds status
	echo "podman-start,$1,$2,$3,$4,$5,1,,$6" >>"$csv"
}

declare -A expected layers
summary=()

# ps_bench SYSTEM: pull (if needed) and time every image on the setup now
# configured
ps_bench() {
	local sys=$1 l name n i t out status times
	for l in "${layouts[@]}"; do
		name=ps-$(basename "$l")
		n=${layers[$l]}
		if ! podman image exists "localhost/$name"; then
			if ! lfs_podman_time t lfs_podman_pull "$l" "$name" >/dev/null; then
				ps_note "$sys: pulling $l failed"
				ps_row "$sys" "$n" pull 1 "$t" fail
				continue
			fi
			ps_row "$sys" "$n" pull 1 "$t" ok
		fi
		times=()
		for ((i = 0; i <= reps; i++)); do
			# not in $(...): lfs_podman_time sets t in this shell
			lfs_podman_time t podman run --rm --network none "localhost/$name" \
				>"$root/run.out" 2>&1
			status=$?
			out=$(<"$root/run.out")
			# what the first run that worked printed (the overlay
			# driver refuses images deeper than 128 layers)
			[ $status != 0 ] || [ -n "${expected[$l]+set}" ] || expected[$l]=$out
			if [ $status != 0 ] || [ "$out" != "${expected[$l]}" ]; then
				ps_note "$sys: run of $l: exit $status: $out"
				status=fail
			else
				status=ok
			fi
			# run 0 warms the caches: not counted
			[ $i = 0 ] && continue
			ps_row "$sys" "$n" run "$i" "$t" "$status"
			[ $status = ok ] && times+=("$t")
		done
		summary+=("$(printf '%-15s %6s %3s/%s ok  %s' "$sys" "$n" "${#times[@]}" "$reps" \
			"$(printf '%s\n' "${times[@]}" | sort -n |
				awk '{ v[NR] = $1 } END { if (NR) printf "median %.2f s  min %.2f s", v[int((NR + 1) / 2)], v[1] }')")")
		[ -z "$(lfs_podman_mounts)" ] || ps_note "$sys: mounts left behind: $(lfs_podman_mounts)"
	done
}

for l in "${layouts[@]}"; do
	layers[$l]=$(jq -r '.manifests[0].digest' "$l/index.json" | sed 's/:/\//' |
		xargs -I{} jq '.layers | length' "$l/blobs/{}")
done

export LFS_PODMAN_ROOT=$root/podman
shared=0
for sys in $setups; do
	case $sys in
	overlay-driver) prog='' opt='' ;;
	fuse-overlayfs) prog=/usr/bin/fuse-overlayfs opt='' ;;
	layerfs) prog=$helper opt='' ;;
	*) echo "podman-start: unknown setup $sys" >&2; exit 2 ;;
	esac
	# the mount programs share a storage; the driver alone has its own
	if [ -n "$prog" ] && [ $shared = 1 ]; then
		lfs_podman_storage_conf "$prog" "$opt"
	else
		[ -z "${CONTAINERS_STORAGE_CONF:-}" ] || lfs_podman_teardown
		lfs_podman_setup "$prog" "$opt" || { ps_note "$sys: setup failed"; continue; }
		shared=0
		[ -z "$prog" ] || shared=1
	fi
	ps_bench "$sys"
done
[ -z "${CONTAINERS_STORAGE_CONF:-}" ] || lfs_podman_teardown

echo "podman run --rm start time ($reps runs each, kernel $(uname -r)):"
printf '  %s\n' "${summary[@]}" | tee -a "$res/podman-start.txt"
[ ! -s "$notes" ]
