# shellcheck shell=bash
# Shared by the image recipes (images/NAME/build.sh); sourced, not run.
#
# A recipe defines two functions and calls img_main "$@":
#   img_inputs   prints what besides its own files decides the result
#                (package versions, parameters); part of the cache key
#   img_build    builds the image into the OCI layout "$IMG_LAYOUT" (tag
#                "$IMG_TAG", created by img_main with umoci init/new) from a
#                umoci bundle at "$IMG_BUNDLE"; scratch space in "$IMG_WORK"
#
# img_main [--out DIR] [--force]:
#   DIR defaults to $IMAGES_OUT/NAME, IMAGES_OUT to $LFS_CACHE/images and
#   LFS_CACHE to ~/.cache/layerfs. The cache key (recipe files, shared
#   files, img_inputs, tool versions) is stored in DIR/.lfs-recipe; when it
#   matches, nothing is built. Otherwise the image is built in a temporary
#   directory beside DIR, copied into a clean layout with skopeo (which
#   checks every blob's digest), and renamed into place: an interrupted
#   build leaves DIR as it was. Building into the default place also points
#   the repository's build/images/NAME at the layout, for the guest suites.
#
# Determinism: layers are packed from trees whose times are fixed
# (img_clamp), with fixed history and creation dates, so the same inputs
# give the same digests.

set -euo pipefail
export LC_ALL=C TZ=UTC
umask 022

IMG_NAME=$(basename "$(cd "$(dirname "$0")" && pwd)")
IMG_DIR=$(cd "$(dirname "$0")" && pwd)
IMG_REPO=$(dirname "$(dirname "$IMG_DIR")")
IMG_TAG=latest
# 2024-01-01T00:00:00Z: the date of every file, layer and config
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1704067200}
IMG_LAYER=0
# 0: img_layer and img_tar_layer do not log (recipes with many layers)
IMG_VERBOSE=1

img_log() {
	printf 'images: %s: %s\n' "$IMG_NAME" "$*" >&2
}

img_die() {
	img_log "$*"
	exit 1
}

# img_date [EPOCH]: RFC 3339 form of EPOCH (default SOURCE_DATE_EPOCH)
img_date() {
	date -u -d "@${1:-$SOURCE_DATE_EPOCH}" +%Y-%m-%dT%H:%M:%SZ
}

# img_clamp DIR EPOCH: what is newer than EPOCH gets mtime EPOCH (the
# SOURCE_DATE_EPOCH rule); older times are kept, so that umoci's diff sees
# only what a step really changed.
img_clamp() {
	find "$1" -newermt "@$2" -exec touch -h -d "@$2" {} +
}

# img_layer DESCRIPTION: pack what changed in the bundle since the last layer
# as a new layer, dated one day after the previous one.
img_layer() {
	local t
	IMG_LAYER=$((IMG_LAYER + 1))
	t=$((SOURCE_DATE_EPOCH + IMG_LAYER * 86400))
	img_clamp "$IMG_BUNDLE/rootfs" "$t"
	umoci repack --refresh-bundle --image "$IMG_LAYOUT:$IMG_TAG" \
		--history.created "$(img_date "$t")" \
		--history.author "layerfs images/$IMG_NAME" \
		--history.created_by "images/$IMG_NAME/build.sh: $1" \
		"$IMG_BUNDLE"
	[ "$IMG_VERBOSE" = 0 ] || img_log "layer $IMG_LAYER: $1"
}

# img_tar_layer STAGE DESCRIPTION: add the tree STAGE verbatim as the next
# layer (for what umoci repack cannot express: opaque directories,
# whiteouts next to a replacement). Entries are sorted, owned as in STAGE,
# dated like img_layer, and carry user.* xattrs.
img_tar_layer() {
	local stage=$1 t
	IMG_LAYER=$((IMG_LAYER + 1))
	t=$((SOURCE_DATE_EPOCH + IMG_LAYER * 86400))
	(cd "$stage" && find . -mindepth 1 -printf '%P\n' | sort) >"$IMG_WORK/tar.list"
	tar -C "$stage" --create --file "$IMG_WORK/layer.tar" --format=pax \
		--no-recursion --files-from "$IMG_WORK/tar.list" --numeric-owner \
		--mtime "@$t" --xattrs --xattrs-include='user.*' \
		--pax-option 'exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime'
	umoci raw add-layer --image "$IMG_LAYOUT:$IMG_TAG" \
		--history.created "$(img_date "$t")" \
		--history.author "layerfs images/$IMG_NAME" \
		--history.created_by "images/$IMG_NAME/build.sh: $2" \
		"$IMG_WORK/layer.tar"
	rm -f "$IMG_WORK/layer.tar" "$IMG_WORK/tar.list"
	[ "$IMG_VERBOSE" = 0 ] || img_log "layer $IMG_LAYER: $2 (verbatim tar)"
}

# img_config ARGS...: umoci config with a fixed date and history entry
img_config() {
	local t=$((SOURCE_DATE_EPOCH + (IMG_LAYER + 1) * 86400))
	umoci config --image "$IMG_LAYOUT:$IMG_TAG" --created "$(img_date "$t")" \
		--author "layerfs images/$IMG_NAME" --os linux --architecture amd64 \
		--history.created "$(img_date "$t")" \
		--history.author "layerfs images/$IMG_NAME" \
		--history.created_by "images/$IMG_NAME/build.sh: image config" \
		"$@"
}

# the cache key: everything that decides the image
img_key() {
	{
		(cd "$IMG_DIR" && find . -type f -printf '%P\n' | sort |
			xargs -d '\n' sha256sum)
		sha256sum "$IMG_DIR/../lib.sh"
		dpkg-query -W umoci skopeo tar
		echo "SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH"
		img_inputs
	} | sed "s|$IMG_DIR/||" | sha256sum | cut -d' ' -f1
}

img_main() {
	local out="" force=0 key tmp t0=$SECONDS
	while [ $# -gt 0 ]; do
		case $1 in
		--out) out=$2; shift 2 ;;
		--force) force=1; shift ;;
		*)
			echo "usage: $0 [--out DIR] [--force]" >&2
			exit 2
			;;
		esac
	done
	local default=${IMAGES_OUT:-${LFS_CACHE:-$HOME/.cache/layerfs}/images}/$IMG_NAME
	out=$(realpath -m "${out:-$default}")
	mkdir -p "$(dirname "$out")"
	key=$(img_key)

	# one build of one output at a time; the lock file lives beside it
	exec 9>"$out.lock"
	flock 9
	if [ $force = 0 ] && [ "$(cat "$out/.lfs-recipe" 2>/dev/null)" = "$key" ]; then
		img_log "up to date: $out"
		img_link "$out" "$default"
		return 0
	fi
	# leftovers of a killed build (we hold the lock: nobody else is building)
	for tmp in "$out".tmp.*; do
		[ ! -e "$tmp" ] || img_cleanup "$tmp"
	done
	tmp=$(mktemp -d "$out.tmp.XXXXXX")
	# shellcheck disable=SC2064 # expand now: tmp is local
	trap "img_cleanup '$tmp'" EXIT
	trap 'exit 130' INT TERM
	IMG_LAYOUT=$tmp/build IMG_BUNDLE=$tmp/bundle IMG_WORK=$tmp/work
	mkdir "$IMG_WORK"
	img_log "building into $out"
	umoci init --layout "$IMG_LAYOUT"
	umoci new --image "$IMG_LAYOUT:$IMG_TAG"
	umoci unpack --image "$IMG_LAYOUT:$IMG_TAG" "$IMG_BUNDLE"
	img_build
	# a clean layout with only this image's blobs, every digest checked
	skopeo copy --quiet "oci:$IMG_LAYOUT:$IMG_TAG" "oci:$tmp/out:$IMG_TAG"
	echo "$key" >"$tmp/out/.lfs-recipe"
	if [ -e "$out" ]; then
		mv -T "$out" "$tmp/old"
	fi
	mv -T "$tmp/out" "$out"
	img_link "$out" "$default"
	img_log "built in $((SECONDS - t0)) s: $out ($(du -sh "$out" | cut -f1))"
}

img_cleanup() {
	# a build killed in img_chroot leaves /proc and /dev mounted in its
	# rootfs: unmount them, and never delete through a mount point
	if [ -d "$1/bundle/rootfs" ]; then
		img_umount_under "$1/bundle/rootfs"
	fi
	rm -rf --one-file-system "$1"
}

# img_umount_under DIR: unmount everything mounted below DIR, deepest first
img_umount_under() {
	local m
	findmnt -rn -o TARGET | { grep "^$(realpath "$1")/" || true; } | sort -r |
		while read -r m; do umount -l "$m"; done
}

# build/images/NAME -> the layout, when it was built in the default place
img_link() {
	[ "$1" = "$2" ] || return 0
	mkdir -p "$IMG_REPO/build/images"
	ln -sfn "$1" "$IMG_REPO/build/images/$IMG_NAME"
}
