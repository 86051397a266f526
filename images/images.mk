# images/: OCI image recipes, and 'make demo'. See docs/images.md.
#
#   make images                 busybox, debian and deep
#   make image-NAME             one of them, into $(IMAGES_OUT)/NAME
#   make image-debian-KIND      an image derived from debian (KIND squash,
#                               redated or app), for 'make bench-store'
#   make demo [IMAGE=busybox|debian|deep] [CMD='shell command']
#   make demo LAYOUT=DIR [TAG=latest] [CMD=...]   any OCI layout
#
# Variables: IMAGES_OUT (default $(LFS_CACHE)/images), DEEP_LAYERS (300),
# DEBIAN_MIRROR (default: apt's bookworm mirror), DEMO_FSTYPE (layerfs, or
# overlay: the kernel's overlayfs as a stand-in), DEMO_RESULTS, OCI2OVL.

IMAGES_OUT ?= $(LFS_CACHE)/images
override IMAGES_OUT := $(abspath $(IMAGES_OUT))
export IMAGES_OUT

DEPS += umoci skopeo busybox-static debootstrap jq attr

IMAGE ?= busybox
LAYOUT ?=
TAG ?= latest
CMD ?=
DEMO_FSTYPE ?= layerfs
DEMO_RESULTS ?= $(CURDIR)/build/demo
# the oci2ovl that 'make tools' builds
OCI2OVL ?= $(firstword $(filter %/oci2ovl,$(TOOLS_BIN)) build/bin/oci2ovl)

IMAGE_NAMES := $(filter-out debian-derived,\
	$(notdir $(patsubst %/,%,$(dir $(wildcard images/*/build.sh)))))
# made from debian's layout by images/debian-derived, not by 'make images'
# (no guest suite uses them)
DERIVED_IMAGES := debian-squash debian-redated debian-app

.PHONY: images demo $(IMAGE_NAMES:%=image-%) $(DERIVED_IMAGES:%=image-%)

images: $(IMAGE_NAMES:%=image-%)

$(IMAGE_NAMES:%=image-%): deps
	@images/$(@:image-%=%)/build.sh

$(DERIVED_IMAGES:%=image-%): image-debian
	@DERIVED=$(@:image-debian-%=%) images/debian-derived/build.sh

# the guest suites find the images through build/images/NAME
vm-test: images

# CMD travels to the guest in base64: the guest reads its arguments split
# at white space, and make must not expand the $ in it
demo: export LFS_DEMO_CMD = $(value CMD)
demo: deps kernel module tools $(if $(LAYOUT),,image-$(IMAGE))
	@LFS_RESULTS=$(DEMO_RESULTS) vm/run.sh script vm/demo-guest.sh \
		--layout $(abspath $(or $(LAYOUT),$(IMAGES_OUT)/$(IMAGE))) --tag $(TAG) \
		--oci2ovl $(OCI2OVL) --fstype $(DEMO_FSTYPE) \
		$$([ -z "$$LFS_DEMO_CMD" ] || echo --cmd64 "$$(printf %s "$$LFS_DEMO_CMD" | base64 -w0)")
