# Deep stacks for 45-deep and 46-nameindex.  Load with: load lib; load lib-deep

# The generators are awk, not bash loops: bats traces every simple
# command of a test (its DEBUG trap), which makes a loop of thousands of
# echos cost minutes in the guest.

# deep_spec N: layers L0 (top) .. L(N-1).  Layer i adds a file to one of
# ten shared directories (d0..d9); every 10th layer also adds to "all",
# and its "all/sub"; every 70th whites out the file of the 10th layer
# below it in "all"; every 500th from the 250th makes "all/sub" opaque.
deep_spec() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			printf "f L%d/d%d/f%d %d\n", i, i % 10, i, i
			if (i % 10 == 0) {
				printf "f L%d/all/f%d %d\n", i, i, i
				printf "f L%d/all/sub/s%d %d\n", i, i, i
			}
			if (i % 70 == 0 && i + 10 < n)
				printf "w L%d/all/f%d\n", i, i + 10
			if (i % 500 == 250)
				printf "o L%d/all/sub\n", i
		}
	}'
}

# deep_expected N: the flattened tree of deep_spec N.
deep_expected() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			printf "f d%d/f%d %d\n", i % 10, i, i
			if (i % 10 == 0) {
				if (!(i >= 10 && (i - 10) % 70 == 0))
					printf "f all/f%d %d\n", i, i
				if (i <= 250)
					printf "f all/sub/s%d %d\n", i, i
			}
		}
	}'
}

# deep_layers N: the layer list of a deep_spec N tree under $WORK, top first
deep_layers() {
	awk -v n="$1" -v w="$WORK" 'BEGIN { for (i = 0; i < n; i++) print w "/L" i }'
}

# deep_workdir: lfs_workdir tmpfs on a tmpfs of its own, so that
# lfs_cleanup frees thousands of layers by one umount, not an rm -rf
deep_workdir() {
	lfs_workdir tmpfs
	mount -t tmpfs -o mode=0755 deep "$WORK"
	mkdir "$WORK/mnt"
}

# deep_expect_tree MNT N: expect_tree MNT "$(deep_expected N)" (lib.bash),
# the reference built and both trees dumped from inside their
# directories: mktree makes every parent of every path it is given, and
# under TCG with 4096 layers' names (4,500 lines) the walks of absolute
# paths made the reference's mktree cost 31 s and its dump 17 s
deep_expect_tree() {
	local mnt=$1 ref=$WORK/expected/x
	mkdir -p "$ref"
	deep_expected "$2" | (cd "$ref" && mktree .) || return 1
	diff -u <(cd "$ref" && "$PROBE" dump -p .) <(cd "$mnt" && "$PROBE" dump -p .)
}
