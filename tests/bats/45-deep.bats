#!/usr/bin/env bats
# Deep stacks through "lowerdir+": 1, 2, 16 and 500 layers (1000 and
# 4096: 46-nameindex), with
# whiteouts and opaque directories at many depths.

load lib
load lib-deep

teardown() {
	lfs_cleanup
}

@test "stacks of 1, 2, 16 and 500 layers mount through lowerdir+ and merge right" {
	local n
	for n in 1 2 16 500; do
		deep_workdir
		deep_spec "$n" | mktree "$WORK"
		deep_layers "$n" >"$WORK/layers"
		"$LFS_MOUNT" -L "$WORK/layers" "$WORK/mnt"
		expect_tree "$WORK/mnt" "$(deep_expected "$n")"
		lfs_cleanup
	done
}
