# tools/lfs-fuse: a read-only FUSE passthrough server for the tests of
# layers that revalidate their dentries (20-lookup)
TOOLS_BIN += build/bin/lfs-fuse

build/bin/lfs-fuse: tools/lfs-fuse.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
