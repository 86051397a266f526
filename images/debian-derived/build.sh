#!/bin/bash
# Images derived from debian, as users get them: each holds most of
# debian's files in layers of its own (new tars, new digests), so a store
# can share them only by content (issue #25; tools/bench/store.sh measures
# it). DERIVED picks one:
#
#   squash   debian's merged tree as one layer (docker export | import,
#            buildah --squash): every file keeps its owner, mode and mtime
#   redated  debian built again a month later with every mtime set to its
#            layer's date (BuildKit's rewrite-timestamp) and its last two
#            RUNs swapped: each of debian's layers unpacked and packed
#            again by GNU tar, whiteouts and all, in the order 1 2 4 3
#   app      FROM debian (its four layers, shared by digest) and one app
#            layer: /usr/share/nodejs vendored as /app/node_modules (npm
#            install of the same modules), RUN chown -R app
#            /usr/lib/python3.11 (every file of it again, same contents),
#            and the app's own few files
#
# The base is the debian layout ($IMAGES_OUT/debian, DERIVED_BASE
# overrides; make image-debian builds it); its manifest digest is part of
# the cache key, so a new debian rebuilds these.
#
# usage: DERIVED=squash|redated|app images/debian-derived/build.sh
#        [--out DIR] [--force]   (DIR defaults to $IMAGES_OUT/debian-KIND;
#        see images/lib.sh)
# shellcheck source=images/lib.sh
. "$(dirname "$0")/../lib.sh"

DERIVED=${DERIVED:-}
case $DERIVED in
squash | redated | app) ;;
*) img_die "DERIVED must be squash, redated or app" ;;
esac
# the image's name: its default layout and build/images link (the
# history names the recipe: see derived_history)
IMG_NAME=debian-$DERIVED
DERIVED_BASE=${DERIVED_BASE:-${IMAGES_OUT:-${LFS_CACHE:-$HOME/.cache/layerfs}/images}/debian}
[ -s "$DERIVED_BASE/index.json" ] ||
	img_die "no debian layout at $DERIVED_BASE: make image-debian first"

img_inputs() {
	echo "derived $DERIVED"
	jq -r '.manifests[0].digest' "$DERIVED_BASE/index.json"
	dpkg-query -W gzip
}

# derived_history CMD...: CMD (img_tar_layer, img_config) with the
# recipe's name, which they write into the history, as IMG_NAME
derived_history() {
	local IMG_NAME=debian-derived
	"$@"
}

# derived_blob DIGEST: the path of a blob of the base
derived_blob() {
	echo "$DERIVED_BASE/blobs/${1%%:*}/${1#*:}"
}

# derived_manifest: the base's manifest (its only one, tag latest)
derived_manifest() {
	derived_blob "$(jq -r '.manifests[0].digest' "$DERIVED_BASE/index.json")"
}

# derived_unpack DIR: the base's merged tree in DIR/rootfs
derived_unpack() {
	umoci unpack --image "$DERIVED_BASE:latest" "$1" >/dev/null
}

# derived_config: the base's Cmd, Env and WorkingDir as img_config options
derived_config() {
	local cfg
	cfg=$(derived_blob "$(jq -r .config.digest "$(derived_manifest)")")
	jq -r '.config | (.Cmd // [])[] as $c | "--config.cmd", $c' "$cfg"
	jq -r '.config | (.Env // [])[] as $e | "--config.env", $e' "$cfg"
	jq -r '.config | select(.WorkingDir) | "--config.workingdir", .WorkingDir' "$cfg"
}

# derived_squash_layer DIR DESCRIPTION: the tree DIR as the next layer,
# every entry with its own times, like img_tar_layer otherwise
derived_squash_layer() {
	local dir=$1 t
	IMG_LAYER=$((IMG_LAYER + 1))
	t=$((SOURCE_DATE_EPOCH + IMG_LAYER * 86400))
	(cd "$dir" && find . -mindepth 1 -printf '%P\n' | sort) >"$IMG_WORK/tar.list"
	tar -C "$dir" --create --file "$IMG_WORK/layer.tar" --format=pax \
		--no-recursion --files-from "$IMG_WORK/tar.list" --numeric-owner \
		--xattrs --xattrs-include='*' \
		--pax-option 'exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime'
	umoci raw add-layer --image "$IMG_LAYOUT:$IMG_TAG" \
		--history.created "$(img_date "$t")" \
		--history.author "layerfs images/debian-derived" \
		--history.created_by "images/debian-derived/build.sh: $2" \
		"$IMG_WORK/layer.tar"
	rm -f "$IMG_WORK/layer.tar" "$IMG_WORK/tar.list"
	img_log "layer $IMG_LAYER: $2"
}

build_squash() {
	local -a cfg
	derived_unpack "$IMG_WORK/base"
	derived_squash_layer "$IMG_WORK/base/rootfs" "squash of debian"
	mapfile -t cfg < <(derived_config)
	derived_history img_config "${cfg[@]}" \
		--config.label org.opencontainers.image.title=layerfs-debian-squash
}

build_redated() {
	local -a layers cfg
	local i s=$IMG_WORK/stage
	mapfile -t layers < <(jq -r '.layers[].digest' "$(derived_manifest)")
	[ ${#layers[@]} = 4 ] || img_die "debian has ${#layers[@]} layers, not 4"
	# a month later: the layers are dated from day 31 on
	IMG_LAYER=30
	for i in 1 2 4 3; do
		rm -rf "$s"
		mkdir "$s"
		# (as the tar holds it: whiteouts stay plain files)
		gzip -dc "$(derived_blob "${layers[i - 1]}")" |
			tar -C "$s" -x --numeric-owner --same-permissions --xattrs \
				--xattrs-include='*'
		derived_history img_tar_layer "$s" "debian's layer $i again"
	done
	rm -rf "$s"
	mapfile -t cfg < <(derived_config)
	derived_history img_config "${cfg[@]}" \
		--config.label org.opencontainers.image.title=layerfs-debian-redated
}

build_app() {
	local r=$IMG_WORK/base/rootfs s=$IMG_WORK/stage
	# FROM debian: its manifest, config and layers as they are
	skopeo copy --quiet "oci:$DERIVED_BASE:latest" "oci:$IMG_LAYOUT:$IMG_TAG"
	IMG_LAYER=4
	derived_unpack "$IMG_WORK/base"
	mkdir -p "$s/app" "$s/usr/lib"
	cp -a "$r/usr/share/nodejs" "$s/app/node_modules"
	cp -a "$r/usr/lib/python3.11" "$s/usr/lib/"
	chown -R 1000:1000 "$s/usr/lib/python3.11"
	cat >"$s/app/server.js" <<'EOF'
const http = require('http');
const port = process.env.PORT || 8080;
http.createServer((req, res) => res.end('layerfs debian-app\n')).listen(port);
EOF
	printf '{"name":"layerfs-debian-app","version":"1.0.0","main":"server.js"}\n' \
		>"$s/app/package.json"
	chown -R 1000:1000 "$s/app"
	derived_history img_tar_layer "$s" "RUN npm install; chown -R app /usr/lib/python3.11; COPY app /app"
	rm -rf "$s"
	derived_history img_config --config.cmd node --config.cmd /app/server.js \
		--config.workingdir /app --config.user app \
		--config.label org.opencontainers.image.title=layerfs-debian-app
}

img_build() {
	"build_$DERIVED"
}

img_main "$@"
