#!/usr/bin/env bats
# The filesystems users stack on.  One stack of six lower layers is placed
# on six filesystems at once: L0 on XFS, L1 on btrfs, L2 in an erofs
# image, L3 in a squashfs image, and L4 (ext4) and L5 (tmpfs) under a
# read-only layerfs mount that the outer mount takes as its bottom layer
# (nesting).  A write script then runs over that stack with the upper on
# tmpfs, ext4, XFS and btrfs in turn, so every upper filesystem copies up
# from every lower one (the stack spreads its objects over all layers):
# the step log and the final tree must be those of a plain copy
# (lib-diff.bash).  Then the file operations each upper filesystem
# supports, through layerfs and on the raw filesystem, must agree, and
# the fileattr checks that only ext4 and XFS can show.

bats_require_minimum_version 1.5.0

load lib
load lib-diff

MX=/tmp/lfs-mx

# the lower layers' homes, top first, and their filesystems
MX_LOWERS=("$MX/xfs/L0" "$MX/btrfs/L1" "$MX/erofs" "$MX/squashfs" "$MX/nested")
MX_TYPES=(xfs btrfs erofs squashfs layerfs)
# the layers the nested mount holds, and their homes
MX_NESTED=("$LFS_EXT4/lfs-mx/L4" "$MX/tmpfs/L5")

# mx_mkfs: XFS and btrfs on sparse images on the ext4 scratch disk (the
# small XFS needs the variables xfstests sets), mounted under $MX
mx_mkfs() {
	local img=$LFS_EXT4/lfs-mx
	mkdir -p "$img" "$MX/xfs" "$MX/btrfs" "$MX/erofs" "$MX/squashfs" \
		"$MX/nested" "$MX/tmpfs" || return 1
	truncate -s 128M "$img/xfs.img" "$img/btrfs.img" || return 1
	TEST_DIR=1 TEST_DEV=1 QA_CHECK_FS=1 mkfs.xfs -q -f "$img/xfs.img" || return 1
	mkfs.btrfs -q -f "$img/btrfs.img" >/dev/null || return 1
	mount -o loop "$img/xfs.img" "$MX/xfs" || return 1
	mount -o loop "$img/btrfs.img" "$MX/btrfs" || return 1
	mkdir "$MX/xfs/w" "$MX/btrfs/w" || return 1
	chmod 755 "$MX" "$MX/xfs" "$MX/btrfs" "$MX/xfs/w" "$MX/btrfs/w"
}

# mx_place: the six layers of stack 6 copied to their homes (cp -a keeps
# modes, owners, times, xattrs, devices and the hard links inside a
# layer), erofs and squashfs made from theirs, the nested mount made
mx_place() {
	local s=$DIFF_STACKS/s6 img=$LFS_EXT4/lfs-mx
	cp -a "$s/L0" "$MX/xfs/L0" || return 1
	cp -a "$s/L1" "$MX/btrfs/L1" || return 1
	mkfs.erofs -x1 "$img/L2.erofs" "$s/L2" >/dev/null || return 1
	mksquashfs "$s/L3" "$img/L3.squashfs" -noappend -quiet -no-progress >/dev/null || return 1
	mount -t erofs -o loop,ro "$img/L2.erofs" "$MX/erofs" || return 1
	mount -t squashfs -o loop,ro "$img/L3.squashfs" "$MX/squashfs" || return 1
	cp -a "$s/L4" "${MX_NESTED[0]}" || return 1
	cp -a "$s/L5" "${MX_NESTED[1]}" || return 1
	mount -t layerfs none "$MX/nested" -o "lowerdir=${MX_NESTED[0]}:${MX_NESTED[1]}" || return 1
	# the writable homes, raw, to compare them with after each run
	"$OPSEQ" dump -r "$MX/xfs/L0" >"$MX/L0.layer" || return 1
	"$OPSEQ" dump -r "$MX/btrfs/L1" >"$MX/L1.layer" || return 1
	"$OPSEQ" dump -r "${MX_NESTED[0]}" >"$MX/L4.layer" || return 1
	"$OPSEQ" dump -r "${MX_NESTED[1]}" >"$MX/L5.layer"
}

setup_file() {
	diff_remove_stacks
	mx_teardown
	diff_build_stacks 6
	mx_mkfs
	mx_place
	export LFS_XFS=$MX/xfs/w LFS_BTRFS=$MX/btrfs/w
}

mx_teardown() {
	local m mounts=()
	while read -r _ m _; do
		[[ $m == "$MX"/* ]] && mounts+=("$m")
	done </proc/mounts
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		umount "${mounts[i]}" || umount -l "${mounts[i]}"
	done
	rm -rf "$MX" "$LFS_EXT4/lfs-mx"
}

teardown_file() {
	mx_teardown
	diff_remove_stacks
}

setup() {
	DIFF_LIST=$(IFS=:; echo "${MX_LOWERS[*]}")
	DIFF_FLAT=("$MX/xfs/L0" "$MX/btrfs/L1" "$MX/erofs" "$MX/squashfs" "${MX_NESTED[@]}")
}

teardown() {
	lfs_cleanup
}

# mx_layers_kept: the layers on writable filesystems are as they were
mx_layers_kept() {
	local l d
	for l in L0:$MX/xfs/L0 L1:$MX/btrfs/L1 L4:${MX_NESTED[0]} L5:${MX_NESTED[1]}; do
		d=${l#*:}
		"$OPSEQ" dump -r "$d" >"$MX/${l%%:*}.after" || return 1
		diff_same "layer ${l%%:*} ($d) before and after" "$MX/${l%%:*}.layer" \
			"$MX/${l%%:*}.after" || return 1
	done
}

@test "the stack placed on XFS, btrfs, erofs, squashfs and a nested layerfs reads as its layers" {
	local i t
	for i in "${!MX_LOWERS[@]}"; do
		run findmnt -n -o FSTYPE --target "${MX_LOWERS[i]}"
		[ "$status" = 0 ]
		[ "$output" = "${MX_TYPES[i]}" ]
	done
	lfs_workdir tmpfs
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DIFF_LIST"
	t=$EPOCHREALTIME
	"$OPSEQ" dump -T "$t" "$WORK/mnt" >"$WORK/ro.dump"
	# as the original stack, but for link counts (a hard link between
	# two layers is two files once they are copied apart) and mtimes
	# (squashfs keeps seconds)
	sed -E 's/ (nl|hl|mt)=[^ ]*//g' "$DIFF_STACKS/s6.ro.dump" >"$WORK/orig.cut"
	sed -E 's/ (nl|hl|mt)=[^ ]*//g' "$WORK/ro.dump" >"$WORK/ro.cut"
	diff_same "the placed stack and the original" "$WORK/orig.cut" "$WORK/ro.cut"
	# exactly as the placed layers, flattened
	diff_flatten 6 "$WORK/flat"
	"$OPSEQ" dump -T "$t" "$WORK/flat" >"$WORK/flat.dump"
	diff_same "the placed stack and its layers flattened" "$WORK/flat.dump" "$WORK/ro.dump"
	run -0 "$PROBE" dump -x dirs "$WORK/mnt"
	[ "${#lines[@]}" -ge 25 ]
}

@test "upper on tmpfs over the placed stack: same steps and tree as a plain copy" {
	diff_check 6 tmpfs 721
	mx_layers_kept
}

@test "upper on ext4 over the placed stack: same steps and tree as a plain copy" {
	diff_check 6 ext4 722
	mx_layers_kept
}

@test "upper on XFS over the placed stack: same steps and tree as a plain copy" {
	diff_check 6 xfs 723
	mx_layers_kept
}

@test "upper on btrfs over the placed stack: same steps and tree as a plain copy" {
	diff_check 6 btrfs 724
	mx_layers_kept
}

# The file operations, on a lower file f (copied up by the first open for
# write) and a new file s: the results a filesystem gives depend on it
# (no O_DIRECT on tmpfs, FICLONE only on XFS and btrfs), so the wants
# allow each, and the raw filesystem's results are the reference.
MX_OPS='create s sourcedata-sourcedata
fdopen 0 f rw
fdwrite 0 hello
fsync 0
fdatasync 0
falloc 0 131072 65536
punch 0 16384 8192
seekmap 0
mwrite 0 4090 MMAPPED
fdopen 1 f rwd => ok|EINVAL
dwrite 1 8192 4096 c => ok|EBADF
fdclose 1 => ok|EBADF
splicein f 70000 SPLICED
copyrange s c1
clone s c2 => ok|EOPNOTSUPP
clone f c3 => ok|EOPNOTSUPP
seekmap 0
hash f
hash c1
hash c2
hash c3
size f
fdclose 0
read c2'

# mx_ops FS: MX_OPS on a layerfs file with the upper on FS and on a copy
# of the lower file on raw FS; layerfs's results in $MX_OUT
mx_ops() {
	local l r
	lfs_workdir tmpfs
	l=$WORK
	mkdir "$l/L" || return 1
	head -c 100000 /dev/zero >"$l/L/f" || return 1
	lfs_workdir "$1"
	r=$WORK
	mkdir "$r/U" "$r/W" "$r/raw" || return 1
	cp "$l/L/f" "$r/raw/f" || return 1
	mount -t layerfs none "$r/mnt" -o "lowerdir=$l/L,upperdir=$r/U,workdir=$r/W" || return 1
	"$PROBE" ops "$r/raw" <<<"$MX_OPS" >"$r/raw.out" || return 1
	"$PROBE" ops "$r/mnt" <<<"$MX_OPS" >"$r/mnt.out" || return 1
	diff_same "file operations on raw $1 and through layerfs" "$r/raw.out" "$r/mnt.out" || return 1
	MX_OUT=$(<"$r/mnt.out")
}

@test "fsync, fallocate, holes, mmap, O_DIRECT, splice and FICLONE through layerfs as on the raw upper filesystem" {
	local fs output
	for fs in tmpfs ext4 xfs btrfs; do
		mx_ops "$fs"
		echo "# $fs"
		output=$MX_OUT
		echo "$output"
		[[ $output == *"falloc 0 131072 65536: ok"* ]]
		[[ $output == *"seekmap 0: 0-16384,24576-"* ]]
		[[ $output == *"mwrite 0 4090 MMAPPED: ok"* ]]
		[[ $output == *"splicein f 70000 SPLICED: ok"* ]]
		case $fs in
		tmpfs)
			[[ $output == *"fdopen 1 f rwd: EINVAL"* ]]
			[[ $output == *"clone s c2: EOPNOTSUPP"* ]]
			;;
		ext4)
			[[ $output == *"dwrite 1 8192 4096 c: ok"* ]]
			[[ $output == *"clone s c2: EOPNOTSUPP"* ]]
			;;
		*)
			[[ $output == *"dwrite 1 8192 4096 c: ok"* ]]
			[[ $output == *"clone s c2: ok"* ]]
			[[ $output == *"clone f c3: ok"* ]]
			[[ $output == *"read c2: sourcedata-sourcedata"* ]]
			;;
		esac
	done
}

# mx_fattr_stack FS [CMD...]: lower files d/f and d/g on ext4 (tmpfs has
# no fileattr in 6.1), layerfs on $M with the upper on FS ($U), and a raw
# d/f on FS ($R); CMD runs on the directory that will hold U and W first
mx_fattr_stack() {
	local fs=$1
	shift
	lfs_workdir ext4
	mkdir -p "$WORK/L/d"
	echo data >"$WORK/L/d/f"
	echo data >"$WORK/L/d/g"
	L=$WORK/L
	lfs_workdir "$fs"
	mkdir "$WORK/p"
	[ $# = 0 ] || "$@" "$WORK/p"
	M=$WORK/mnt U=$WORK/p/U R=$WORK/p/raw
	mkdir -p "$U/d" "$WORK/p/W" "$R/d"
	echo data >"$R/d/f"
	mount -t layerfs none "$M" -o "lowerdir=$L,upperdir=$U,workdir=$WORK/p/W"
}

@test "chattr +j needs CAP_SYS_RESOURCE through layerfs as on raw ext4" {
	# (the mounter's credentials lack CAP_SYS_RESOURCE, for quotas, as on
	# the kernel's overlay, which refuses +j even to root; layerfs lends
	# it to this change where the caller and the mounter both hold it)
	mx_fattr_stack ext4
	# without the capability: refused on both
	run capsh --drop=cap_sys_resource -- -c "chattr +j '$R/d/f'"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	run capsh --drop=cap_sys_resource -- -c "chattr +j '$M/d/f'"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	run -0 lsattr -d "$M/d/f"
	[[ $output != *j* ]]
	# with it: set on both
	chattr +j "$R/d/f" "$M/d/f"
	run -0 lsattr "$M/d/f"
	[[ ${output%% *} == *j* ]]
	run -0 lsattr "$U/d/f"
	[[ ${output%% *} == *j* ]]
	# a mounter without it: refused to root too
	umount "$M"
	capsh --drop=cap_sys_resource -- -c "mount -t layerfs none '$M' \
		-o 'lowerdir=$L,upperdir=$U,workdir=$WORK/p/W'"
	run chattr -j "$M/d/f"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	run -0 lsattr "$U/d/f"
	[[ ${output%% *} == *j* ]]
}

@test "a project id changes only in the first user namespace, through layerfs as on raw XFS" {
	# a project on the directory of upper and work, as containers-storage
	# sets for a quota: what is made in them inherits it
	mx_fattr_stack xfs xfs_io -c "chproj 7" -c "chattr +P"
	run -0 xfs_io -c "lsproj" "$R/d/f"
	[ "$output" = "projid = 7" ]
	# in the first namespace, root sets it
	run -0 xfs_io -c "chproj 42" "$M/d/g"
	run -0 xfs_io -c "lsproj" "$M/d/g"
	[ "$output" = "projid = 42" ]
	run -0 xfs_io -c "lsproj" "$U/d/g"
	[ "$output" = "projid = 42" ]
	# in a user namespace, root of it and owner of the file: refused, on
	# the raw file and through layerfs
	run unshare -U -r xfs_io -c "chproj 43" "$R/d/f"
	[[ $output == *"Invalid argument"* ]]
	# (-r: a read-only open, that copies nothing up)
	run unshare -U -r xfs_io -r -c "chproj 43" "$M/d/f"
	[[ $output == *"Invalid argument"* ]]
	[ ! -e "$U/d/f" ]
	# a flag change that keeps the project layerfs showed (0, the lower
	# file's) would change the upper copy's (7, inherited): refused too
	run unshare -U -r xfs_io -r -c "chattr +S" "$M/d/f"
	[[ $output == *"Invalid argument"* ]]
	run -0 xfs_io -c "lsproj" "$U/d/f"
	[ "$output" = "projid = 7" ]
}
