# tools/lfs-attack: the attack table of the security suite (85-security)
TOOLS_BIN += build/bin/lfs-attack

build/bin/lfs-attack: tools/lfs-attack.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<
