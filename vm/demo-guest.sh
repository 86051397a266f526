#!/bin/bash
# The guest side of 'make demo': import an OCI image with oci2ovl, mount it
# with layerfs over a writable upper directory, run the image's entrypoint
# (or a given command) in it, and show that what the container wrote went to
# the upper directory while the image's layers stayed as they were.
#
#   vm/demo-guest.sh --layout DIR [--tag TAG] [--name NAME] [--oci2ovl PATH]
#                    [--fstype layerfs|overlay] [--cmd64 BASE64] [--dir DIR]
#
#   --layout   the OCI image layout (a host path; the guest sees the host's
#              root read-only at the same path)
#   --tag      the image's tag in the layout (default latest)
#   --name     the name in the oci2ovl store (default the layout's name)
#   --oci2ovl  the tool, relative to the repository or absolute
#              (default build/bin/oci2ovl)
#   --fstype   overlay: a stand-in for layerfs, the kernel's overlayfs over
#              a store in chardev whiteout format
#   --cmd64    run this shell command (base64, so that it survives the
#              trip through results/script.args) instead of the entrypoint
#   --dir      where the store, the upper directory and the mount point go
#              (default $LFS_EXT4/demo, on the guest's scratch disk)
#
# Exits 0 when every step worked; everything it mounted is unmounted on
# every path, so that the module can unload.
set -uo pipefail

repo=${LFS_REPO:-$(cd "$(dirname "$0")/.." && pwd)}
layout='' tag=latest name='' tool=build/bin/oci2ovl fstype=layerfs cmd=''
dir=${LFS_EXT4:-/run/lfs/ext4}/demo

demo_usage() {
	sed -n '/^#   vm/,/^#   --dir/s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--layout) layout=${2:-} ;;
	--tag) tag=${2:-} ;;
	--name) name=${2:-} ;;
	--oci2ovl) tool=${2:-} ;;
	--fstype) fstype=${2:-} ;;
	--cmd64) cmd=$(printf '%s' "${2:-}" | base64 -d) || demo_usage ;;
	--dir) dir=${2:-} ;;
	*) demo_usage ;;
	esac
	[ $# -ge 2 ] || demo_usage
	shift 2
done
[ -n "$layout" ] || demo_usage
layout=${layout%/}
name=${name:-$(basename "$layout")}
case $tool in /*) ;; *) tool=$repo/$tool ;; esac
case $fstype in layerfs | overlay) ;; *) demo_usage ;; esac

store=$dir/store
upper=$dir/upper
mnt=$dir/rootfs
step_no=0
mkdir -p "$dir" || exit 1

demo_step() {
	step_no=$((step_no + 1))
	printf '\n==== demo step %d: %s\n' "$step_no" "$*"
}

# demo_show CMD...: show a command as one would type it
demo_show() {
	local a line=$
	for a in "$@"; do
		if [[ $a =~ ^[][A-Za-z0-9_=/.,:+@%-]+$ ]]; then
			line+=" $a"
		else
			line+=" '${a//\'/\'\\\'\'}'"
		fi
	done
	printf '%s\n' "$line"
}

# demo_run CMD...: show a command, then run it
demo_run() {
	demo_show "$@"
	"$@"
}

demo_fail() {
	printf '\ndemo: FAILED at step %d: %s\n' "$step_no" "$*" >&2
	exit 1
}

demo_cleanup() {
	if mountpoint -q "$mnt"; then
		umount "$mnt" || umount -l "$mnt"
	fi
}
trap demo_cleanup EXIT

# demo_dump: every entry of every layer directory with its type, mode,
# owner, size, mtime, inode, link count and link target, every file's
# sha256 and the xattrs.  A file's content is hashed once, under its
# first name: busybox's 128 names of one 1.9 MiB binary were 250 MB to
# hash per dump under TCG, name by name (the inode numbers in the
# first list still tie each name to its content)
demo_dump() {
	local line key last=''
	find "${layers[@]}" -printf '%y %m %U:%G %s %T@ %i %n %p -> %l\n' | sort -k8
	find "${layers[@]}" -type f -printf '%D:%i %p\0' | sort -z |
		while IFS= read -r -d '' line; do
			key=${line%% *}
			[ "$key" = "$last" ] || printf '%s\0' "${line#* }"
			last=$key
		done | xargs -0r sha256sum
	getfattr -R -P -d -m - -e hex --absolute-names "${layers[@]}" 2>/dev/null
}

demo_step "the image: $layout:$tag"
[ -f "$layout/index.json" ] ||
	demo_fail "no OCI layout at $layout (run 'make image-$name' on the host; a layout under the host's /tmp is not visible in the guest)"
[ -x "$tool" ] || demo_fail "no oci2ovl at $tool (run 'make tools' on the host)"
manifest=$(jq -r --arg t "$tag" '.manifests[] |
	select(.annotations["org.opencontainers.image.ref.name"] == $t) | .digest' \
	"$layout/index.json")
[ -n "$manifest" ] || demo_fail "no tag $tag in $layout/index.json"
jq -r '"\(.layers | length) layers, \([.layers[].size] | add) bytes compressed"' \
	"$layout/blobs/sha256/${manifest#sha256:}"

demo_step "import it into a layer store on the scratch disk"
import_opts=()
mount_opts=(--upper "$upper")
if [ "$fstype" = overlay ]; then
	echo "(stand-in: the kernel's overlayfs, whiteouts as 0/0 character devices)"
	import_opts=(--whiteout chardev)
	mount_opts+=(--fstype overlay)
fi
t0=$(date +%s%N)
demo_run "$tool" --store "$store" import "$layout:$tag" --name "$name" "${import_opts[@]}" ||
	demo_fail "oci2ovl import failed"
echo "imported in $((($(date +%s%N) - t0) / 1000000)) ms"
demo_run "$tool" --store "$store" list
# (no process substitution here: the guest has no /dev/fd)
out=$("$tool" --store "$store" layers "$name") || out=''
[ -n "$out" ] || demo_fail "oci2ovl layers $name printed no layer"
mapfile -t layers <<<"$out"
echo "${#layers[@]} layer directories, top first:"
printf '  %s\n' "${layers[0]}"
[ ${#layers[@]} -le 2 ] || echo "  ..."
[ ${#layers[@]} -le 1 ] || printf '  %s\n' "${layers[-1]}"
demo_dump >"$dir/layers.before"
echo "checksummed $(grep -c '^[0-9a-f]\{64\}  ' "$dir/layers.before") files of the layers, once each"

demo_step "mount it with $fstype, writable upper on the scratch disk"
mkdir -p "$mnt"
demo_run "$tool" --store "$store" mount "$name" "$mnt" "${mount_opts[@]}" ||
	demo_fail "oci2ovl mount failed"
findmnt -n -o FSTYPE,TARGET "$mnt" || demo_fail "$mnt is not a mount point"

demo_step "run the container"
config=$("$tool" --store "$store" config "$name") || demo_fail "oci2ovl config failed"
out=$(jq -r '.config.Env // [] | .[]' <<<"$config") || demo_fail "bad image config"
mapfile -t env <<<"$out"
[ -n "$out" ] || env=()
wd=$(jq -r '.config.WorkingDir // "" | if . == "" then "/" else . end' <<<"$config")
if [ -n "$cmd" ]; then
	argv=(/bin/sh -c "$cmd")
else
	out=$(jq -r '(.config.Entrypoint // []) + (.config.Cmd // []) | .[]' <<<"$config")
	mapfile -t argv <<<"$out"
	[ -n "$out" ] || argv=()
fi
[ ${#argv[@]} -gt 0 ] || demo_fail "the image has no entrypoint and no command: give one with CMD=..."
echo "from the image config: working directory $wd, ${#env[@]} environment variables"
# a PID and mount namespace of its own where the kernel has them, with its
# own /proc; plain chroot otherwise
proc=()
[ -d "$mnt/proc" ] && proc=(--mount-proc)
if unshare --mount --pid --fork true 2>/dev/null; then
	runner=(unshare --mount --pid --fork "${proc[@]}" --root="$mnt" --wd="$wd")
else
	# shellcheck disable=SC2016 # expanded by the container's shell
	runner=(chroot "$mnt" /bin/sh -c 'cd "$0" && exec "$@"' "$wd")
fi
demo_show env -i "${env[@]}" "${runner[@]}" "${argv[@]}"
echo "-------- container output --------"
env -i "${env[@]}" "${runner[@]}" "${argv[@]}"
rc=$?
echo "-------- container exited with status $rc --------"
[ $rc = 0 ] || demo_fail "the container's command failed"

demo_step "write in the container: a new file and a change to a file of the image"
demo_run chroot "$mnt" /bin/sh -c 'echo "written in the container" >/layerfs-demo.txt &&
	echo "# changed in the container" >>/etc/os-release' ||
	demo_fail "writing in the container failed"
demo_run cat "$mnt/layerfs-demo.txt"
echo "the upper directory now holds:"
(cd "$upper" && find . -mindepth 1 -printf '  %y %m %s %P\n' | sort -k4)
[ "$(cat "$upper/layerfs-demo.txt" 2>/dev/null)" = "written in the container" ] ||
	demo_fail "the new file is not in the upper directory $upper"
for l in "${layers[@]}"; do
	[ ! -e "$l/layerfs-demo.txt" ] || demo_fail "the new file appeared in layer $l"
done
echo "layerfs-demo.txt is in the upper directory and in none of the ${#layers[@]} layers"

demo_step "the image's layers are unchanged"
demo_dump >"$dir/layers.after"
if ! cmp -s "$dir/layers.before" "$dir/layers.after"; then
	diff -u "$dir/layers.before" "$dir/layers.after" | head -n 40
	demo_fail "the layer directories changed"
fi
echo "before and after: $(sha256sum <"$dir/layers.after" | cut -c1-16) (types, modes, owners, sizes, mtimes, xattrs, contents)"

demo_step "unmount"
demo_run umount "$mnt" || demo_fail "umount $mnt failed"
! mountpoint -q "$mnt" || demo_fail "$mnt is still mounted"
printf '\ndemo: ok: %s ran on %s over %d layers; its writes are in %s\n' \
	"$name" "$fstype" ${#layers[@]} "$upper"
