#!/usr/bin/env bats
# The kernel's overlay and layerfs, mounted on the same layer directories
# (whiteouts as character devices), show identical trees.  Nesting:
# layerfs over layerfs and over overlay.

load lib

teardown() {
	lfs_cleanup
}

# random_layers N SEED: a random stack of N layers in mktree form, with
# files, directories, symlinks, chardev whiteouts and opaque directories
# over a shared pool of names.
random_layers() {
	local n=$1 l i k name dirs=(a a/b a/b/c d e/f)
	RANDOM=$2
	for ((l = n - 1; l >= 0; l--)); do
		for ((i = 0; i < 40; i++)); do
			name=${dirs[RANDOM % ${#dirs[@]}]}/n$((RANDOM % 12))
			k=$((RANDOM % 10))
			case $k in
			0 | 1 | 2 | 3) echo "f L$l/$name v$l-$RANDOM" ;;
			4) echo "d L$l/$name" ;;
			5) echo "l L$l/$name t$RANDOM" ;;
			6 | 7) echo "W L$l/$name" ;;
			8) echo "o L$l/${dirs[RANDOM % ${#dirs[@]}]}" ;;
			9) echo "f L$l/${dirs[RANDOM % ${#dirs[@]}]}/m$RANDOM x" ;;
			esac
		done
	done
	return 0
}

@test "overlay and layerfs agree on 20 random stacks" {
	local seed n layers
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		for seed in 1 2 3 4 5 6 7 8 9 10; do
			lfs_workdir "$fs"
			n=$((2 + seed % 6))
			# some random ops cannot apply (a path under a file): -k
			random_layers "$n" "$seed" | "$PROBE" mktree -k "$WORK"
			layers=$(for ((i = 0; i < n; i++)); do printf '%s:' "$WORK/L$i"; done)
			layers=${layers%:}
			mkdir -p "$WORK"/L{0..9} "$WORK/ovl"
			mount -t overlay none "$WORK/ovl" -o "lowerdir=$layers"
			mount -t layerfs none "$WORK/mnt" -o "lowerdir=$layers"
			# overlay lists whiteouts in a directory that only one
			# layer holds (it passes such a readdir through), though
			# lookup hides them; layerfs hides them in both
			diff -u <("$PROBE" dump "$WORK/ovl" | grep -v '^FAIL lstat .*: No such file') \
				<("$PROBE" dump "$WORK/mnt")
			umount "$WORK/ovl" "$WORK/mnt"
		done
	done
}

@test "layerfs stacks over layerfs and over overlay; a third level is refused" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f a/x 1
f b/y 2
W b/z
f c/z 3
f d/w 4'
	mkdir "$WORK/inner" "$WORK/ovl" "$WORK/outer" "$WORK/third"
	lfs_mount_layers "$WORK/inner" "$WORK/a" "$WORK/b" "$WORK/c"
	mount -t overlay none "$WORK/ovl" -o "lowerdir=$WORK/b:$WORK/c"
	lfs_mount_layers "$WORK/outer" "$WORK/d" "$WORK/inner" "$WORK/ovl"
	expect_tree "$WORK/outer" 'f w 4
f x 1
f y 2'
	"$PROBE" dino "$WORK/outer"
	run "$PROBE" mount2 layerfs "$WORK/third" "lowerdir=$WORK/outer"
	[ "$output" = "mount: EINVAL" ]
	dmesg | grep -q 'layerfs: maximum filesystem stacking depth exceeded'
}
