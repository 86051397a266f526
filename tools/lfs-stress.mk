# tools/lfs-stress: concurrent write-side stress and copy-up crash checks
TOOLS_BIN += build/bin/lfs-stress

build/bin/lfs-stress: tools/lfs-stress.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
