#!/usr/bin/env bats
# Mounting: option parsing and escapes, the new mount API with
# "lowerdir+", refused configurations, /proc/mounts, statfs, read-only.

load lib

teardown() {
	lfs_cleanup
}

@test "every refused mount says why, with a precise errno, through mount(2)" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'d a/sub
f file x'
	local W=$WORK
	local cases=(
		# data | errno | kernel log message
		"|EINVAL|at least one lowerdir is needed"
		"lowerdir=|EINVAL|Bad value for 'lowerdir'"
		"lowerdir=$W/a:::$W/a|EINVAL|empty layer in lowerdir="
		"lowerdir=$W/none|ENOENT|lower layer \"$W/none\": cannot resolve"
		"lowerdir=$W/file|ENOTDIR|lower layer \"$W/file\": not a directory"
		"lowerdir=$W/a:$W/a/sub|ELOOP|lower layer \"$W/a/sub\" is inside lower layer \"$W/a\""
		"lowerdir=$W/a/sub:$W/a|ELOOP|lower layer \"$W/a/sub\" is inside lower layer \"$W/a\""
		"lowerdir=$W/a,bogus=1|EINVAL|Unknown parameter 'bogus'"
		"lowerdir=$W/a,nameindex=lazy|EINVAL|Bad value for 'nameindex'"
		"lowerdir=$W/a,lowerdir=$W/a|EINVAL|lowerdir= given twice"
		"lowerdir+=$W/a,lowerdir=$W/a|EINVAL|lowerdir= cannot follow lowerdir+"
		"lowerdir=$W/a,lowerdir+=$W/a|EINVAL|lowerdir+ cannot follow lowerdir="
	)
	expect_mount_refusals "${cases[@]}"
	# nothing got mounted
	! grep -q " $W/mnt " /proc/mounts
}

@test "an idmapped mount serves as a lower layer; as upperdir only where its idmapping maps the mounter" {
	lfs_workdir ext4
	mkdir -p "$WORK"/{l,idl,uw/u,uw/w,iduw}
	echo x >"$WORK/l/f"
	"$PROBE" idmap "$WORK/l" "$WORK/idl"
	"$PROBE" idmap "$WORK/uw" "$WORK/iduw"
	# they are idmapped: root's file shows as 100000's
	[ "$(stat -c %u "$WORK/idl/f")" = 100000 ]
	[ "$(stat -c %u "$WORK/iduw/u")" = 100000 ]
	# a lower layer shows its owners as its mount does
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/idl"
	[ "$(stat -c %u "$WORK/mnt/f")" = 100000 ]
	umount "$WORK/mnt"
	# root, the mounter, has no id on iduw: it cannot make work/ there
	dmesg -C
	run "$PROBE" mount2 layerfs "$WORK/mnt" \
		"lowerdir=$WORK/l,upperdir=$WORK/iduw/u,workdir=$WORK/iduw/w"
	[ "$output" = "mount: EOVERFLOW" ]
	run dmesg
	[[ $output == *"layerfs: workdir \"$WORK/iduw/w\": cannot make work/ (-75)"* ]]
	# the same directories, not idmapped, mount
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/uw/u,workdir=$WORK/uw/w"
	[ "$(stat -c %u "$WORK/mnt/f")" = 0 ]
}

@test "fsconfig callers read the reason from the fs_context log" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'d a/sub'
	run "$LFS_MOUNT" -l "$WORK/a" -l "$WORK/missing" "$WORK/mnt"
	[ "$status" = 32 ]
	[[ $output == *"lowerdir+=$WORK/missing: No such file or directory"* ]]
	[[ $output == *"layerfs: lower layer \"$WORK/missing\": cannot resolve"* ]]
	run "$LFS_MOUNT" -l "$WORK/a" -l "$WORK/a/sub" "$WORK/mnt"
	[ "$status" = 32 ]
	[[ $output == *"Too many levels of symbolic links"* ]]
	[[ $output == *"is inside lower layer"* ]]
}

@test "more layers than the limit are refused" {
	lfs_workdir tmpfs
	mkdir "$WORK/l"
	# 4097 lines by awk: a bash loop costs bats' trace per step (25 s)
	awk -v l="$WORK/l" 'BEGIN { for (i = 0; i <= 4096; i++) print l }' >"$WORK/list"
	[ "$(wc -l <"$WORK/list")" = 4097 ]
	run "$LFS_MOUNT" -L "$WORK/list" "$WORK/mnt"
	[ "$status" = 32 ]
	[[ $output == *"too many lower layers (at most 4096)"* ]]
}

@test "escaped separators in layer paths work and show back in /proc/mounts" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f a:b/one 1
f c,d/two 2
f e\f/three 3'
	local W=$WORK
	mkdir "$W/g h"
	printf 4 >"$W/g h/four"
	run "$PROBE" mount2 layerfs "$W/mnt" "lowerdir=$W/a\\:b:$W/c\\,d:$W/e\\\\f:$W/g h"
	echo "$output"
	[ "$output" = "mount: ok" ]
	expect_tree "$W/mnt" 'f one 1
f two 2
f three 3
f four 4'
	# the options read back, unescaped as libmount does, mount the same tree
	local opts
	opts=$(awk -v m="$W/mnt" '$2 == m { print $4 }' /proc/mounts)
	[[ $opts == *'a\134:b:'*'c\134\054d:'*'e\134\134f:'*'g\040h'* ]]
	opts=$(printf '%b' "${opts//\\/\\0}")
	mkdir "$W/mnt2"
	run "$PROBE" mount2 layerfs "$W/mnt2" "lowerdir=${opts#*lowerdir=}"
	[ "$output" = "mount: ok" ]
	diff -u <("$PROBE" dump "$W/mnt") <("$PROBE" dump "$W/mnt2")
}

@test "escaped separators in upperdir and workdir work and show back in /proc/mounts" {
	lfs_workdir tmpfs
	local W=$WORK opts
	mkdir -p "$W/l" "$W/u,1" "$W/w:1" "$W/mnt2"
	run "$PROBE" mount2 layerfs "$W/mnt" "lowerdir=$W/l,upperdir=$W/u\\,1,workdir=$W/w\\:1"
	echo "$output"
	[ "$output" = "mount: ok" ]
	echo new >"$W/mnt/new"
	[ "$(cat "$W/u,1/new")" = new ]
	opts=$(awk -v m="$W/mnt" '$2 == m { print $4 }' /proc/mounts)
	[[ $opts == *'upperdir='*'u\134\0541,workdir='*'w\134:1'* ]]
	umount "$W/mnt"
	# the options read back, unescaped as libmount does, mount the same
	opts=$(printf '%b' "${opts//\\/\\0}")
	run "$PROBE" mount2 layerfs "$W/mnt2" "lowerdir=${opts#*lowerdir=}"
	echo "$output"
	[ "$output" = "mount: ok" ]
	[ "$(cat "$W/mnt2/new")" = new ]
}

@test "findmnt shows the mount, umount removes it, statfs reports the top layer" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f top/x 1
f bot/y 2'
	lfs_mount_layers "$WORK/mnt" "$WORK/top" "$WORK/bot"
	run findmnt -n -o FSTYPE,OPTIONS "$WORK/mnt"
	[ "$output" = "layerfs ro,relatime,lowerdir=$WORK/top:$WORK/bot" ]
	run stat -f -c '%t %b %S' "$WORK/mnt" "$WORK/top"
	[ "${lines[0]%% *}" = 6c617966 ]
	[ "${lines[0]#* }" = "${lines[1]#* }" ]
	umount "$WORK/mnt"
	! grep -q " $WORK/mnt " /proc/mounts
}

@test "without an upper layer every write-side call fails with EROFS" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f l/file data
d l/dir'
	lfs_mount_layers "$WORK/mnt" "$WORK/l"
	run "$PROBE" writecalls "$WORK/mnt/file" "$WORK/mnt/dir"
	[ "$status" = 0 ]
	local expected='open O_WRONLY: EROFS
open O_RDWR: EROFS
open O_TRUNC: EROFS
open O_CREAT: EROFS
open O_TMPFILE: EROFS
truncate: EROFS
mkdir: EROFS
mknod fifo: EROFS
mknod chr: EROFS
symlink: EROFS
link: EROFS
unlink: EROFS
rmdir: EROFS
rename: EROFS
renameat2 NOREPLACE: EROFS
renameat2 EXCHANGE: EROFS
chmod: EROFS
chown: EROFS
utimensat: EROFS
setxattr: EROFS
removexattr: EROFS'
	diff -u <(echo "$expected") <(echo "$output")
	run "$PROBE" mount2 layerfs "$WORK/mnt" "" remount
	[ "$output" = "mount: EINVAL" ]
	# and the layer is untouched
	[ "$(cat "$WORK/l/file")" = data ]
}

@test "lowerdir+ through fsconfig mounts the same tree as lowerdir=" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f top/a 1
w top/b
f mid/b 2
f mid/c 3
f bot/d 4'
	"$LFS_MOUNT" -l "$WORK/top" -l "$WORK/mid" -l "$WORK/bot" "$WORK/mnt"
	expect_tree "$WORK/mnt" 'f a 1
f c 3
f d 4'
	run findmnt -n -o OPTIONS "$WORK/mnt"
	[ "$output" = "ro,relatime,lowerdir=$WORK/top:$WORK/mid:$WORK/bot" ]
}
