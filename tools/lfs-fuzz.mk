# tools/lfs-fuzz: hostile layers mounted in a user namespace (86-fuzz)
TOOLS_BIN += build/bin/lfs-fuzz

build/bin/lfs-fuzz: tools/lfs-fuzz.c uapi/layerfs.h
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
