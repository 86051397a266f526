# Deep stacks for 45-deep and 46-nameindex.  Load with: load lib; load lib-deep

# deep_spec N: layers L0 (top) .. L(N-1).  Layer i adds a file to one of
# ten shared directories (d0..d9); every 10th layer also adds to "all",
# and its "all/sub"; every 70th whites out the file of the 10th layer
# below it in "all"; every 500th from the 250th makes "all/sub" opaque.
deep_spec() {
	local n=$1 i
	for ((i = 0; i < n; i++)); do
		echo "f L$i/d$((i % 10))/f$i $i"
		if ((i % 10 == 0)); then
			echo "f L$i/all/f$i $i"
			echo "f L$i/all/sub/s$i $i"
		fi
		if ((i % 70 == 0 && i + 10 < n)); then
			echo "w L$i/all/f$((i + 10))"
		fi
		if ((i % 500 == 250)); then
			echo "o L$i/all/sub"
		fi
	done
	return 0
}

# deep_expected N: the flattened tree of deep_spec N.
deep_expected() {
	local n=$1 i
	for ((i = 0; i < n; i++)); do
		echo "f d$((i % 10))/f$i $i"
		if ((i % 10 == 0)); then
			((i >= 10 && (i - 10) % 70 == 0)) || echo "f all/f$i $i"
			((i <= 250)) && echo "f all/sub/s$i $i"
		fi
	done
	return 0
}

# deep_layers N: the layer list of a deep_spec N tree under $WORK, top first
deep_layers() {
	local i
	for ((i = 0; i < $1; i++)); do
		echo "$WORK/L$i"
	done
}

# deep_workdir: lfs_workdir tmpfs on a tmpfs of its own, so that
# lfs_cleanup frees thousands of layers by one umount, not an rm -rf
deep_workdir() {
	lfs_workdir tmpfs
	mount -t tmpfs -o mode=0755 deep "$WORK"
	mkdir "$WORK/mnt"
}
