#!/usr/bin/env bats
# Deep stacks through "lowerdir+": 1, 2, 16, 500 and 1000 layers, with
# whiteouts and opaque directories at many depths.

load lib

teardown() {
	lfs_cleanup
}

# deep_spec N: layers L0 (top) .. L(N-1); every layer adds a file to the
# shared directory "all" and its own directory; every 7th layer whites out
# the file of the layer below it; every 50th makes "all/sub" opaque.
deep_spec() {
	local n=$1 i
	for ((i = 0; i < n; i++)); do
		echo "f L$i/all/f$i $i"
		echo "f L$i/own$i/x $i"
		echo "f L$i/all/sub/s$i $i"
		((i % 7 == 0 && i + 1 < n)) && echo "w L$i/all/f$((i + 1))"
		((i % 50 == 49)) && echo "o L$i/all/sub"
	done
	return 0
}

# deep_expected N: the flattened tree of deep_spec N.
deep_expected() {
	local n=$1 i opaque_at=$n
	for ((i = 0; i < n; i++)); do
		((i % 50 == 49)) && { opaque_at=$i; break; }
	done
	for ((i = 0; i < n; i++)); do
		((i > 0 && (i - 1) % 7 == 0)) || echo "f all/f$i $i"
		echo "f own$i/x $i"
		((i <= opaque_at)) && echo "f all/sub/s$i $i"
	done
	return 0
}

@test "stacks of 1, 2, 16, 500 and 1000 layers mount through lowerdir+ and merge right" {
	local n
	for n in 1 2 16 500 1000; do
		lfs_workdir tmpfs
		deep_spec "$n" | mktree "$WORK"
		for ((i = 0; i < n; i++)); do
			echo "$WORK/L$i"
		done >"$WORK/layers"
		"$LFS_MOUNT" -L "$WORK/layers" "$WORK/mnt"
		expect_tree "$WORK/mnt" "$(deep_expected "$n")"
		umount "$WORK/mnt"
		rm -rf "$WORK"
	done
}
