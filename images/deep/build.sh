#!/bin/bash
# The deep image: DEEP_LAYERS layers (default 300), generated, for stack
# depth tests and benchmarks. Everything follows from the layer number i,
# so the image is the same on every machine.
#
#   layer 1      busybox-static as /bin/busybox and /bin/sh, /layers, /t
#   every layer  /layers/<i> (a directory merged from every layer),
#                /top = i (the topmost layer wins), and t/d1/.../dK/f<i>
#                with K = 1 + (7i mod 10) (files at every depth)
#   i mod 3 = 0  whiteout of the file layer i-1 added
#   i mod 5 = 0  t/d1/.../dJ/o/x<i> with J = 1 + (3(i/5) mod 10)
#   i mod 10 = 0 that o made opaque, with o/from<i>: the x and from files
#                that layers i-50, i-100, ... put there disappear
#   i mod 25 = 0 whiteout of the directory t/d1/.../d9/d10 (later layers
#                create it again)
#   config       entrypoint: count /layers and print /top
#
# usage: images/deep/build.sh [--out DIR] [--force]   (see images/lib.sh)
# shellcheck source=images/lib.sh
. "$(dirname "$0")/../lib.sh"

DEEP_LAYERS=${DEEP_LAYERS:-300}
# shellcheck disable=SC2034 # read by images/lib.sh
IMG_VERBOSE=0

img_inputs() {
	echo "layers $DEEP_LAYERS"
	dpkg-query -W busybox-static
	sha256sum /bin/busybox | cut -d' ' -f1
}

# deep_dir K: the directory at depth K below /t
deep_dir() {
	local j p=t
	for ((j = 1; j <= $1; j++)); do
		p+=/d$j
	done
	echo "$p"
}

img_build() {
	local s=$IMG_WORK/stage i p
	[ "$DEEP_LAYERS" -ge 2 ] || img_die "DEEP_LAYERS must be 2 or more"
	mkdir -p "$s/bin" "$s/layers" "$s/t"
	install -m 0755 /bin/busybox "$s/bin/busybox"
	for p in sh cat echo ls wc; do
		ln -s busybox "$s/bin/$p"
	done
	echo 1 >"$s/layers/1"
	echo 1 >"$s/top"
	img_tar_layer "$s" "layer 1: busybox"

	for ((i = 2; i <= DEEP_LAYERS; i++)); do
		rm -rf "$s"
		p=$(deep_dir $((1 + (i * 7) % 10)))
		mkdir -p "$s/layers" "$s/$p"
		echo $i >"$s/layers/$i"
		echo $i >"$s/top"
		echo "layer $i" >"$s/$p/f$i"
		if ((i % 3 == 0)); then
			p=$(deep_dir $((1 + ((i - 1) * 7) % 10)))
			mkdir -p "$s/$p"
			: >"$s/$p/.wh.f$((i - 1))"
		fi
		if ((i % 5 == 0)); then
			p=$(deep_dir $((1 + 3 * (i / 5) % 10)))
			mkdir -p "$s/$p/o"
			echo "x $i" >"$s/$p/o/x$i"
		fi
		if ((i % 10 == 0)); then
			: >"$s/$p/o/.wh..wh..opq"
			echo "from $i" >"$s/$p/o/from$i"
		fi
		if ((i % 25 == 0)); then
			p=$(deep_dir 9)
			mkdir -p "$s/$p"
			: >"$s/$p/.wh.d10"
		fi
		img_tar_layer "$s" "layer $i"
		((i % 50)) || img_log "layer $i of $DEEP_LAYERS"
	done

	# shellcheck disable=SC2016 # expanded by the container's shell
	img_config --config.entrypoint /bin/sh --config.entrypoint -c \
		--config.entrypoint 'echo "deep: $(ls /layers | wc -l) layers merged, /top is $(cat /top)"' \
		--config.env PATH=/bin --config.workingdir / \
		--config.label org.opencontainers.image.title=layerfs-deep
}

img_main "$@"
