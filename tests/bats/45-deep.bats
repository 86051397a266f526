#!/usr/bin/env bats
# Deep stacks through "lowerdir+": 1, 2, 16, 500 and 1000 layers, with
# whiteouts and opaque directories at many depths.

load lib
load lib-deep

teardown() {
	lfs_cleanup
}

@test "stacks of 1, 2, 16, 500 and 1000 layers mount through lowerdir+ and merge right" {
	local n
	for n in 1 2 16 500 1000; do
		lfs_workdir tmpfs
		deep_spec "$n" | mktree "$WORK"
		deep_layers "$n" >"$WORK/layers"
		"$LFS_MOUNT" -L "$WORK/layers" "$WORK/mnt"
		expect_tree "$WORK/mnt" "$(deep_expected "$n")"
		umount "$WORK/mnt"
		rm -rf "$WORK"
	done
}
