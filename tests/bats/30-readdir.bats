#!/usr/bin/env bats
# Merged readdir: each visible name once, whiteouts and opaque contents
# hidden, right d_type and d_ino, stable positions, large directories.

load lib

teardown() {
	lfs_cleanup
}

@test "a name present in many layers is listed once, with the top-most type" {
	lfs_workdir tmpfs
	{
		for l in 0 1 2 3 4 5 6 7; do
			echo "f L$l/d/common $l"
			echo "f L$l/d/only$l $l"
			[ $l = 3 ] && echo "W L$l/d/gone"
			[ $l -gt 3 ] && echo "f L$l/d/gone $l"
			[ $l = 5 ] && echo "f L$l/d/typed file"
			[ $l = 6 ] && echo "d L$l/d/typed"
		done
	} | mktree "$WORK"
	lfs_mount_layers "$WORK/mnt" "$WORK"/L{0..7}
	expect_tree "$WORK/mnt" 'f d/common 0
f d/only0 0
f d/only1 1
f d/only2 2
f d/only3 3
f d/only4 4
f d/only5 5
f d/only6 6
f d/only7 7
f d/typed file'
	# "." and ".." once each, and no name twice
	run bash -c "set -o pipefail; ls -fa '$WORK/mnt/d' | sort | uniq -d"
	[ "$status" = 0 ]
	[ -z "$output" ]
	[ "$(ls -fa "$WORK/mnt/d" | grep -c '^\.\.\?$')" = 2 ]
	"$PROBE" dino "$WORK/mnt"
}

@test "d_ino equals st_ino and d_type matches st_mode everywhere" {
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		lfs_workdir "$fs"
		mktree "$WORK" <<<'f top/a/x 1
f bot/a/y 2
l top/a/s y
p bot/a/p
c bot/a/c 1 3
h bot/a/hl bot/a/y
d bot/a/sub/deeper
w top/a/hl'
		lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/bot"
		run "$PROBE" dino "$WORK/mnt"
		echo "$output"
		[ "$status" = 0 ]
		[ "$output" = "checked 12 entries" ]
	done
}

@test "telldir and seekdir return to the same entry; rewinddir lists it all again" {
	lfs_workdir tmpfs
	for l in 0 1 2; do
		echo "N L$l/d/n $l 1203 3"
	done | mktree "$WORK"
	lfs_mount_layers "$WORK/mnt" "$WORK"/L{0..2}
	run "$PROBE" seekdir "$WORK/mnt/d"
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "1205 entries, 1205 after rewind" ]
}

@test "a directory of 100k names over 8 layers lists each name once" {
	# built on the host by fixtures.sh: 100k creates take minutes here
	local F=$LFS_EXT4/fixtures/big8
	lfs_workdir tmpfs
	lfs_mount_layers "$WORK/mnt" "$F"/L{0..7}
	run "$PROBE" seekdir "$WORK/mnt/big"
	[ "$status" = 0 ]
	[ "$output" = "100002 entries, 100002 after rewind" ]
	[ "$(ls -f "$WORK/mnt/big" | sort -u | wc -l)" = 100002 ]
	# the repeated names really are in two layers
	[ "$(ls -f "$F/L1/big" | wc -l)" = $((12500 + 2500 + 2)) ]
}

# listings_stat KEY: a field of the module's debugfs file of kept listings
listings_stat() {
	local k v
	while read -r k v; do
		[ "$k" = "$1" ] && { echo "$v"; return 0; }
	done </sys/kernel/debug/layerfs/listings
	return 1
}

@test "a directory's listing is built once for all its opens, again after a change through the mount or a shrink; an open keeps what it read until rewinddir" {
	local b fd
	lfs_workdir tmpfs
	for l in 0 1 2; do
		echo "N L$l/d/n $l 50 3"
	done | mktree "$WORK"
	mkdir "$WORK/u" "$WORK/w"
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/L0:$WORK/L1:$WORK/L2,upperdir=$WORK/u,workdir=$WORK/w"
	b=$(listings_stat built)
	run "$PROBE" dirshare "$WORK/mnt/d" new1
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "52 entries; snapshot 51; new open 53 with it; rewind 53 with it" ]
	# the first open built it, the second shared it; the create dropped
	# it, the third open built it again, the rewind shared that one
	[ "$(listings_stat built)" = $((b + 2)) ]
	ls "$WORK/mnt/d" >/dev/null
	ls "$WORK/mnt/d" >/dev/null
	[ "$(listings_stat built)" = $((b + 2)) ]
	# every change of a name: the next open builds again
	rm "$WORK/mnt/d/n0"
	[ "$(ls "$WORK/mnt/d" | wc -l)" = 50 ]
	mv "$WORK/mnt/d/n1" "$WORK/mnt/d/m1"
	[ "$(ls "$WORK/mnt/d" | grep -c '^m1$')" = 1 ]
	[ "$(listings_stat built)" = $((b + 4)) ]
	# the shrinker frees a kept listing while its directory stays
	exec {fd}<"$WORK/mnt/d"
	[ "$(listings_stat kept)" -ge 1 ]
	echo 2 >/proc/sys/vm/drop_caches
	local kept
	kept=$(listings_stat kept)
	ls "$WORK/mnt/d" >/dev/null
	exec {fd}<&-
	echo "kept after the shrink: $kept"
	[ "$kept" = 0 ]
	[ "$(listings_stat built)" = $((b + 5)) ]
}

@test "a kept listing is not served once the upper directory changed outside the mount, and rmdir does not remove what it holds" {
	local m b out
	lfs_workdir tmpfs
	m=$WORK/mnt
	mktree "$WORK" <<<'f L0/d/a a
d u
d w'
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L0,upperdir=$WORK/u,workdir=$WORK/w"
	rm "$m/d/a"
	out=$(ls -A "$m/d")
	[ -z "$out" ]
	# served from the kept listing
	b=$(listings_stat built)
	out=$(ls -A "$m/d")
	[ -z "$out" ]
	[ "$(listings_stat built)" = "$b" ]
	echo x >"$WORK/u/d/outside"
	[ "$(ls -A "$m/d")" = outside ]
	[ "$(listings_stat built)" = $((b + 1)) ]
	run rmdir "$m/d"
	echo "$output"
	[ "$status" != 0 ]
	[[ $output == *"not empty"* ]]
	[ -f "$WORK/u/d/outside" ]
}

@test "a kept listing is charged to the memory cgroup that built it, and that cgroup's reclaim frees it" {
	local root=/sys/fs/cgroup m cg k0 k1 k2
	mountpoint -q $root || mount -t cgroup2 cgroup2 $root
	grep -qw memory $root/cgroup.controllers
	echo +memory >$root/cgroup.subtree_control
	cg=$root/lfs-t$BATS_TEST_NUMBER
	mkdir "$cg"
	lfs_workdir tmpfs
	m=$WORK/mnt
	for l in 0 1 2; do
		echo "N L$l/d/n $l 2000 3"
	done | mktree "$WORK"
	lfs_mount_layers "$m" "$WORK"/L{0..2}
	# the directory's dentry is the root cgroup's: only the listing is cg's
	stat "$m/d" >/dev/null
	k0=$(listings_stat kept)
	CG=$cg M=$m bash -c 'echo $$ >"$CG/cgroup.procs" && exec ls "$M/d" >/dev/null'
	k1=$(listings_stat kept)
	echo 1G >"$cg/memory.reclaim" || true
	k2=$(listings_stat kept)
	rmdir "$cg"
	echo "kept: $k0, after the build in $cg: $k1, after its reclaim: $k2"
	[ "$k1" = $((k0 + 1)) ]
	[ "$k2" = "$k0" ]
}
