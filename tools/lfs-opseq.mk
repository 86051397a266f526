# tools/lfs-opseq: operation scripts for the write-side differential tests
TOOLS_BIN += build/bin/lfs-opseq

build/bin/lfs-opseq: tools/lfs-opseq.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
