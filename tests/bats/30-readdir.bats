#!/usr/bin/env bats
# Merged readdir: each visible name once, whiteouts and opaque contents
# hidden, right d_type and d_ino, stable positions, large directories.

load lib

teardown() {
	lfs_cleanup
}

@test "a name present in many layers is listed once, with the top-most type" {
	lfs_workdir tmpfs
	# in each layer l: d/common and d/only<l>; d/gone whited out in L3
	# and a file below; d/typed a file in L5 and a directory in L6
	mktree "$WORK" <<-'EOF'
	f L0/d/common 0
	f L0/d/only0 0
	f L1/d/common 1
	f L1/d/only1 1
	f L2/d/common 2
	f L2/d/only2 2
	f L3/d/common 3
	f L3/d/only3 3
	W L3/d/gone
	f L4/d/common 4
	f L4/d/only4 4
	f L4/d/gone 4
	f L5/d/common 5
	f L5/d/only5 5
	f L5/d/gone 5
	f L5/d/typed file
	f L6/d/common 6
	f L6/d/only6 6
	f L6/d/gone 6
	d L6/d/typed
	f L7/d/common 7
	f L7/d/only7 7
	f L7/d/gone 7
	EOF
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
	mktree "$WORK" <<<"N L0/d/n 0 1203 3
N L1/d/n 1 1203 3
N L2/d/n 2 1203 3"
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
	mktree "$WORK" <<<"N L0/d/n 0 50 3
N L1/d/n 1 50 3
N L2/d/n 2 50 3"
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

@test "a kept listing of a small directory in 64 layers holds what the same names in one layer hold; a large directory lists each name once" {
	local p k one
	lfs_workdir ext4
	# ext4: every instance is a block of 4096 bytes; one layer holds the
	# same names in one block.  Layer l holds d/x<l> and d/y; one/d holds
	# them all; big/ has f1..f2000 in L0 and f1501..f3000 in L1.  One
	# mktree (from inside $WORK: short paths) for what a mkdir and a touch
	# per layer did, 128 processes here.
	awk 'BEGIN {
		for (l = 0; l < 64; l++)
			printf "f L%d/d/x%d\nf L%d/d/y\nf one/d/x%d\n", l, l, l, l
		print "f one/d/y\nN L0/big/f 1 2001 1\nN L1/big/f 1501 3001 1\nd mnt1"
	}' | (cd "$WORK" && mktree .)
	mount -t layerfs none "$WORK/mnt1" -o "lowerdir=$WORK/one:$WORK/L63"
	lfs_mount_layers "$WORK/mnt" "$WORK"/L{0..63}
	p=$(listings_stat pages)
	k=$(listings_stat kept)
	[ "$(ls "$WORK/mnt1/d" | wc -l)" = 65 ]
	one=$(($(listings_stat pages) - p))
	[ "$(ls "$WORK/mnt/d" | wc -l)" = 65 ]
	[ "$(listings_stat kept)" = $((k + 2)) ]
	# the name table starts as one instance needs, not as all 64 do
	echo "pages: one layer $one, 64 layers $(($(listings_stat pages) - p - one))"
	[ "$(listings_stat pages)" = $((p + 2 * one)) ]
	[ "$(ls "$WORK/mnt/big" | sort -u | wc -l)" = 3000 ]
	[ "$(ls "$WORK/mnt/big" | wc -l)" = 3000 ]
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
	mktree "$WORK" <<<"N L0/d/n 0 2000 3
N L1/d/n 1 2000 3
N L2/d/n 2 2000 3"
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

# pt_layers FS_TOP FS_BOTTOM MODE: under $WORK, lower layers T (on
# FS_TOP's $TOP) and B (on FS_BOTTOM's $BOT), an upper u and its workdir
# w (with T), and E (with T): an empty instance of each directory a test
# lists, so that a mount with E below reads every one of them merged.
# Each directory of interest has one instance without E: one, xw and
# plain in T, low in B, up and uplain in u.  MODE picks the whiteouts
# inside them: native (all forms), aufs, chardev (userxattr).
pt_layers() {
	local mode=$3
	lfs_workdir "$1"
	TOP=$WORK
	lfs_workdir "$2"
	BOT=$WORK
	{
		echo "f T/one/f1 one
l T/one/s f1
p T/one/p
c T/one/c 1 3
f T/one/sub/deep x
l T/one/fake .wh.missing
f T/plain/f p
l T/plain/s f
d T/plain/sub
f T/xw/empty
f T/xw/full x
f u/up/f3 three
l u/up/s3 f3
f u/uplain/f u
d u/uplain/sub
d w
d E/one
d E/xw
d E/plain
d E/up
d E/uplain
d E/low
d E/newd"
		case $mode in
		native) echo "W T/one/gone_c
w T/one/gone_w
L T/one/link_wh
X T/xw
x T/xw/gone_x
W u/up/gone_u" ;;
		aufs) echo "A T/one/gone_a
f T/one/.wh..wh..opq
A u/up/gone_u" ;;
		chardev) echo "W T/one/gone_c
W u/up/gone_u" ;;
		esac
	} | mktree "$TOP"
	{
		echo "f B/low/f2 two
l B/low/s2 f2
d B/low/sub2"
		case $mode in
		aufs) echo "A B/low/gone2" ;;
		*) echo "W B/low/gone2" ;;
		esac
	} | mktree "$BOT"
}

# pt_listing MNT OUT: every entry below the directories of interest, with
# its type and st_ino, sorted, into OUT; and d_ino == st_ino throughout
pt_listing() {
	"$PROBE" dino "$1"
	find "$1" -mindepth 2 -printf '%P %y %i\n' >"$TOP/listing"
	sort "$TOP/listing" >"$2"
}

# pt_mount OPTS [E]: the pt_layers stack on $TOP/mnt, with OPTS; with E
# below too if asked
pt_mount() {
	mount -t layerfs none "$TOP/mnt" \
		-o "lowerdir=$TOP/T:$BOT/B${2:+:$TOP/E},upperdir=$TOP/u,workdir=$TOP/w$1"
}

# pt_compare OPTS: the pt_layers stack mounted with OPTS lists what the
# same stack with E below, where every directory is merged, lists, d_ino
# and all; again after a lower file moved into a new directory that has
# only its upper instance (a copy there).
pt_compare() {
	local m=$TOP/mnt
	pt_mount "$1"
	pt_listing "$m" "$TOP/pass"
	umount "$m"
	pt_mount "$1" E
	pt_listing "$m" "$TOP/merged"
	umount "$m"
	diff -u "$TOP/merged" "$TOP/pass"
	pt_mount "$1"
	mkdir "$m/newd"
	mv "$m/low/f2" "$m/newd/f2"
	pt_listing "$m" "$TOP/pass"
	umount "$m"
	pt_mount "$1" E
	pt_listing "$m" "$TOP/merged"
	umount "$m"
	diff -u "$TOP/merged" "$TOP/pass"
	# (bash patterns on the listing, not a grep process each)
	local pass
	pass=$'\n'$(<"$TOP/pass")
	echo "$pass"
	[[ $pass == *$'\n''newd/f2 f '* ]]
	[[ $pass == *$'\n''one/s l '* ]]
	[[ $pass != *gone* && $pass != *.wh.* ]]
}

@test "a directory with one instance lists what it lists merged with an empty instance below, d_ino and all" {
	pt_layers tmpfs tmpfs native
	pt_compare ""
}

@test "a directory with one instance on ext4 and on layers of two filesystems gives d_ino with the filesystem bits" {
	pt_layers ext4 ext4 native
	pt_compare ""
	lfs_cleanup
	pt_layers tmpfs ext4 native
	pt_compare ""
}

@test "a directory with one instance drops aufs whiteouts and markers" {
	pt_layers tmpfs tmpfs aufs
	pt_compare ",whiteout=aufs"
}

@test "a directory with one instance under userxattr shows a copy's own inode number" {
	pt_layers ext4 ext4 chardev
	pt_compare ",userxattr"
}

@test "directories with one instance list what overlay lists" {
	local lo ov
	pt_layers tmpfs ext4 native
	mkdir "$TOP/ovl"
	mount -t overlay none "$TOP/ovl" -o "lowerdir=$TOP/u:$TOP/T:$BOT/B"
	mount -t layerfs none "$TOP/mnt" \
		-o "lowerdir=$TOP/T:$BOT/B,upperdir=$TOP/u,workdir=$TOP/w"
	for d in plain uplain; do
		lo=$(find "$TOP/mnt/$d" -printf '%P %y\n' | sort)
		ov=$(find "$TOP/ovl/$d" -printf '%P %y\n' | sort)
		diff -u <(echo "$ov") <(echo "$lo")
		[ -n "$lo" ]
	done
}

@test "a directory with one instance of symlinks and whiteouts: telldir, seekdir, rewinddir, small getdents buffers, offsets valid in another open" {
	local m exp
	lfs_workdir tmpfs
	m=$WORK/mnt
	lfs_untraced bash -c 'for i in $(seq 0 399); do
		echo "l L0/d/s$i t$i"
		echo "f L0/d/f$i"
		[ $((i % 4)) = 0 ] && echo "W L0/d/w$i"
		[ $((i % 4)) = 1 ] && echo "w L0/d/n$i"
	done; echo "d L1"' >"$WORK/spec"
	mktree "$WORK" <"$WORK/spec"
	lfs_mount_layers "$m" "$WORK/L0" "$WORK/L1"
	run "$PROBE" seekdir "$m/d"
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "802 entries, 802 after rewind" ]
	exp=$(ls -fa "$m/d" | sort)
	[ "$(echo "$exp" | wc -l)" = 802 ]
	for size in 32 48 200; do
		run "$PROBE" smallbuf "$m/d" $size
		[ "$status" = 0 ]
		diff -u <(echo "$exp") <(echo "$output" | sort)
	done
	"$PROBE" dino "$m/d"
}

@test "a directory with one instance that becomes merged while open: the open keeps what it read until rewinddir, a new open lists the change" {
	local m
	lfs_workdir tmpfs
	m=$WORK/mnt
	{
		echo "N L0/d/n 0 50 1"
		echo "d u"
		echo "d w"
	} | mktree "$WORK"
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L0,upperdir=$WORK/u,workdir=$WORK/w"
	run "$PROBE" dirshare "$m/d" new1
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "52 entries; snapshot 51; new open 53 with it; rewind 53 with it" ]
	[ -d "$WORK/u/d" ]
}
