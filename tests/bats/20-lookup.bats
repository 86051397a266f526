#!/usr/bin/env bats
# Lookup: the top-down walk, whiteouts in all three forms, opaque
# directories and type changes between layers; on tmpfs and on ext4.

load lib

teardown() {
	lfs_cleanup
}

# Layers top, mid, bot; each case lives in its own directory.
LAYERS='
# names from each layer appear; the top-most file wins
f bot/only-bot b
f mid/only-mid m
f top/only-top t
f bot/shadow bot
f mid/shadow mid
f top/shadow top
# a directory in several layers merges
f bot/merged/b b
f mid/merged/m m
f top/merged/t t
f bot/merged/shadow bot
f top/merged/shadow top
# whiteouts: native symlink, upstream chardev, and xwhiteout files
f bot/wh/native x
w top/wh/native
f bot/wh/chardev x
W mid/wh/chardev
f bot/wh/fake x
L top/wh/fake
f bot/wh/plain-empty x
x top/wh/plain-empty
w bot/wh/bottom-only
X top/xwh
f bot/xwh/gone x
x top/xwh/gone
f bot/xwh/stays s
# a whiteout hides a whole directory; recreating it starts afresh
f bot/whdir/sub/f x
w mid/whdir
f bot/recreate/old o
w mid/recreate
f top/recreate/new n
# an opaque directory hides what lies below it
f bot/opq/below x
o mid/opq
f mid/opq/kept m
f top/opq/top t
# type changes: file over dir, dir over file, symlink over dir
f bot/fod/sub/x x
f top/fod y
f bot/dof x
f top/dof/in i
f bot/sod/dir/x x
l top/sod target
# below a directory, a file ends the merge
f bot/dfd/b b
f mid/dfd x
f top/dfd/t t
# owners, modes and special files come through
f bot/attrs/suid s
m bot/attrs/suid 4755
u bot/attrs/suid 1000 100
p bot/attrs/fifo
c bot/attrs/null 1 3
b bot/attrs/loop 7 0
l bot/attrs/dangling nowhere
a bot/attrs/suid trusted.note hello
'

MERGED='
f only-bot b
f only-mid m
f only-top t
f shadow top
f merged/b b
f merged/m m
f merged/t t
f merged/shadow top
d wh
l wh/fake (overlay-whiteout)
f wh/plain-empty
d xwh
f xwh/stays s
d recreate
f recreate/new n
f opq/kept m
f opq/top t
f fod y
f dof/in i
l sod target
f dfd/t t
f attrs/suid s
m attrs/suid 4755
u attrs/suid 1000 100
p attrs/fifo
c attrs/null 1 3
b attrs/loop 7 0
l attrs/dangling nowhere
a attrs/suid trusted.note hello
'

@test "lookup merges layers, honours all whiteout forms, opaque dirs and type changes" {
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		lfs_workdir "$fs"
		mktree "$WORK" <<<"$LAYERS"
		lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/mid" "$WORK/bot"
		expect_tree "$WORK/mnt" "$MERGED"
		umount "$WORK/mnt"
	done
}

@test "a whited-out or missing name fails lookup with ENOENT" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$LAYERS"
	lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/mid" "$WORK/bot"
	run "$PROBE" stat "$WORK/mnt/wh/native" "$WORK/mnt/wh/chardev" \
		"$WORK/mnt/xwh/gone" "$WORK/mnt/whdir" "$WORK/mnt/whdir/sub/f" \
		"$WORK/mnt/wh/bottom-only" "$WORK/mnt/opq/below" "$WORK/mnt/nothing"
	[ "$status" = 0 ]
	[ "${#lines[@]}" = 8 ]
	for l in "${lines[@]}"; do
		[[ $l == *": ENOENT" ]] || { echo "not ENOENT: $l"; return 1; }
	done
}

@test "a single layer mounts as itself" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f one/a/b c
l one/l a/b
p one/fifo'
	lfs_mount_layers "$WORK/mnt" "$WORK/one"
	diff -u <("$PROBE" dump "$WORK/one") <("$PROBE" dump "$WORK/mnt")
}

@test "xattr whiteouts in a layer's root marked for them hide the names below, as in a subdirectory" {
	local m
	lfs_workdir tmpfs
	mktree "$WORK" <<<'X top
x top/gone
f top/kept k
x top/nothing-below
X top/sub
x top/sub/gone
f top/sub/kept k
x top/sub/nothing-below
f bot/gone x
f bot/stays s
f bot/sub/gone x
f bot/sub/stays s'
	mkdir "$WORK/rw" "$WORK/u" "$WORK/w"
	lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/bot"
	mount -t layerfs none "$WORK/rw" \
		-o "lowerdir=$WORK/top:$WORK/bot,upperdir=$WORK/u,workdir=$WORK/w"
	for m in mnt rw; do
		# the root shows what its subdirectory shows, by readdir and lookup
		diff -u <(ls -A "$WORK/$m/sub") <(ls -A "$WORK/$m" | grep -vx sub)
		[ "$(ls -A "$WORK/$m/sub" | paste -sd' ')" = "kept stays" ]
		run "$PROBE" stat "$WORK/$m/gone" "$WORK/$m/nothing-below" "$WORK/$m/sub/gone"
		[ "${lines[0]}" = "$WORK/$m/gone: ENOENT" ]
		[ "${lines[1]}" = "$WORK/$m/nothing-below: ENOENT" ]
		[ "${lines[2]}" = "$WORK/$m/sub/gone: ENOENT" ]
	done
	# a name made over the whiteout in the root is new, not the one below
	echo new >"$WORK/rw/gone"
	[ "$(cat "$WORK/rw/gone")" = new ]
}

# A lookup reads no marker of a directory in the bottom layer, where an
# opaque one hides nothing; its "x" is read when an empty file there or
# a listing of it needs it.  Each order of lookup and readdir, on a fresh
# mount, must show what the marker says.
@test "xattr whiteouts in the bottom layer's marked directories are hidden, looked up first or listed first, by root or by a user" {
	local m first who
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f top/d/t t
X bot/d
x bot/d/gone
f bot/d/kept k
f bot/d/empty
X bot/only
x bot/only/gone
f bot/only/kept k
d bot/only/sub
X bot/dirs
d bot/dirs/a
d bot/dirs/b
x bot/plain/shown'
	mkdir "$WORK/rw" "$WORK/u" "$WORK/w"
	# the marker is read late, by whoever looks first: as the mounter
	# still, or a user (who may not read trusted.*) would see the gone
	for first in lookup readdir user-lookup user-readdir; do
		who=()
		[[ $first != user-* ]] || who=(as_user 65534)
		lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/bot"
		mount -t layerfs none "$WORK/rw" \
			-o "lowerdir=$WORK/top:$WORK/bot,upperdir=$WORK/u,workdir=$WORK/w"
		for m in mnt rw; do
			if [[ $first == *lookup ]]; then
				run "${who[@]}" "$PROBE" stat "$WORK/$m/d/gone" "$WORK/$m/only/gone"
				[ "${lines[0]}" = "$WORK/$m/d/gone: ENOENT" ]
				[ "${lines[1]}" = "$WORK/$m/only/gone: ENOENT" ]
			fi
			[ "$("${who[@]}" ls -A "$WORK/$m/d" | paste -sd' ')" = "empty kept t" ]
			[ "$("${who[@]}" ls -A "$WORK/$m/only" | paste -sd' ')" = "kept sub" ]
			[ "$("${who[@]}" ls -A "$WORK/$m/dirs" | paste -sd' ')" = "a b" ]
			[ "$("${who[@]}" ls -A "$WORK/$m/plain" | paste -sd' ')" = shown ]
			run "${who[@]}" "$PROBE" stat "$WORK/$m/d/gone" "$WORK/$m/only/gone" \
				"$WORK/$m/d/empty" "$WORK/$m/plain/shown"
			[ "${lines[0]}" = "$WORK/$m/d/gone: ENOENT" ]
			[ "${lines[1]}" = "$WORK/$m/only/gone: ENOENT" ]
			[ "${lines[2]%% ino=*}" = "$WORK/$m/d/empty" ]
			[ "${lines[3]%% ino=*}" = "$WORK/$m/plain/shown" ]
			[ "${#lines[@]}" = 4 ]
		done
		# a name made over a whiteout of the bottom layer is new
		echo new >"$WORK/rw/only/gone"
		[ "$(cat "$WORK/rw/only/gone")" = new ]
		umount "$WORK/mnt" "$WORK/rw"
		rm -rf "$WORK/u" "$WORK/w"
		mkdir "$WORK/u" "$WORK/w"
	done
}

# A lower layer on FUSE whose entries expire at once (tools/lfs-fuse):
# each walk asks the server again, and a file replaced behind the mounts
# by another inode gets another node id, which FUSE calls stale.  layerfs,
# read-only and with an upper layer, must say so as overlay does rather
# than go on reading the old object; once the dcache lets the name go,
# the new file shows everywhere.
@test "a file replaced in a FUSE layer fails lookup as on overlay, then shows anew" {
	lfs_workdir tmpfs
	mkdir "$WORK"/{b,e,f,lrw,lu,lw,oro,orw,ou,ow}
	printf one >"$WORK/b/f"
	"$LFS_FUSE" "$WORK/b" "$WORK/f"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/f:$WORK/e"
	mount -t layerfs none "$WORK/lrw" \
		-o "lowerdir=$WORK/f,upperdir=$WORK/lu,workdir=$WORK/lw"
	mount -t overlay none "$WORK/oro" -o "lowerdir=$WORK/f:$WORK/e"
	mount -t overlay none "$WORK/orw" \
		-o "lowerdir=$WORK/f,upperdir=$WORK/ou,workdir=$WORK/ow"
	reads=$(printf 'read %s/f\n' f mnt lrw oro orw)

	run "$PROBE" ops "$WORK" <<<"$reads"
	[ "$status" = 0 ]
	diff -u <(printf 'read %s/f: one\n' f mnt lrw oro orw) <(echo "$output")

	printf two >"$WORK/b/g"
	mv "$WORK/b/g" "$WORK/b/f"
	run "$PROBE" ops "$WORK" <<<"$reads"
	[ "$status" = 0 ]
	diff -u <(echo 'read f/f: two'
		printf 'read %s/f: ESTALE\n' mnt lrw oro orw) <(echo "$output")

	echo 2 >/proc/sys/vm/drop_caches
	run "$PROBE" ops "$WORK" <<<"$reads"
	[ "$status" = 0 ]
	diff -u <(printf 'read %s/f: two\n' f mnt lrw oro orw) <(echo "$output")
}
