# podman: the packages, and deep images for the podman suite and benchmark
# (tests/bats/80-podman.bats, tools/bench/podman-start.sh): the
# images/deep recipe with N layers.
#
#   make image-deep-N      DEEP_LAYERS=N into $(IMAGES_OUT)/deep-N, linked
#                          as build/images/deep-N for the guest
#
# podman pulls about 0.4 s a layer in the guest: the suite uses 60 layers
# (past the one-page option limit of mount(2) with podman's layer paths),
# the benchmark 128 (containers-storage refuses deeper images).

# podman in the guest (tests/bats/lib-podman.bash; uidmap: newuidmap and
# newgidmap for rootless podman, 81-podman-rootless); fuse-overlayfs, its
# usual mount program, is in the top-level DEPS
DEPS += podman crun conmon uidmap

image-deep-%: deps
	@DEEP_LAYERS=$* images/deep/build.sh --out $(IMAGES_OUT)/deep-$*
	@mkdir -p build/images && ln -sfn $(IMAGES_OUT)/deep-$* build/images/deep-$*

# 'make images' (which make test runs before the guest) and vm-test
images vm-test: image-deep-60
