# tools/layerfs-mount: mount layerfs from any number of layers (new mount API)
TOOLS_BIN += build/bin/layerfs-mount

LFS_TOOL_CFLAGS ?= -O2 -g -Wall -Wextra -Werror -I.

build/bin/layerfs-mount: tools/layerfs-mount.c uapi/layerfs.h tools/install.mk
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -DLFS_VERSION='"$(LFS_VERSION)"' -o $@ $<

# tools/lfs-probe: system-call checks used by the test suites
TOOLS_BIN += build/bin/lfs-probe

build/bin/lfs-probe: tools/lfs-probe.c uapi/layerfs.h
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
