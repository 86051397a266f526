#!/usr/bin/env bats
# File operations on an open layerfs file, beside the kernel's overlay on
# the same lower layer: an fd opened before a copy-up reads the copy,
# fcntl(F_SETFL) flags reach the real file, splice in and out, FIEMAP,
# copy_file_range and FICLONE, fsync, and atime as overlay keeps it.
#
# Each test builds its lower layer L from SPEC, then mounts layerfs on M
# (upper U) and overlay on O (upper OU) over it, and runs one ops script
# (lfs-probe ops) on each: the same results are wanted from both.

load lib

teardown() {
	lfs_cleanup
}

SPEC='f L/f old
f L/g gdata
f L/h hdata
f L/up updata
f L/low lowdata
f L/d/in indata
F L/big 300000'

# fstack LOWERFS [UPPERFS]: L on LOWERFS; M, U, O, OU on UPPERFS (default
# the same filesystem)
fstack() {
	lfs_workdir "$1"
	L=$WORK/L
	mktree "$WORK" <<<"$SPEC"
	lfs_workdir "${2:-$1}"
	M=$WORK/mnt U=$WORK/U O=$WORK/ovl OU=$WORK/OU
	mkdir "$U" "$WORK/W" "$O" "$OU" "$WORK/OW"
	mount -t layerfs none "$M" -o "lowerdir=$L,upperdir=$U,workdir=$WORK/W"
	mount -t overlay none "$O" -o "lowerdir=$L,upperdir=$OU,workdir=$WORK/OW"
}

# on_both FUNC: FUNC with $m and $u set to layerfs's mount and upper
# layer, then to overlay's
on_both() {
	echo "# layerfs"
	m=$M u=$U "$1"
	echo "# overlay"
	m=$O u=$OU "$1"
}

reopen_script() {
	"$PROBE" ops <<EOF
fdopen 0 $m/f r
fdread 0 => old
fdopen 1 $m/f r
write $m/f new
fdread 0 => new
pwrite $m/f 3 XY
fdread 1 => newXY
fdread 0 => newXY
fsync 0
fdatasync 0
fdclose 0
fdclose 1
read $L/f => old
EOF
}

@test "an fd opened before a copy-up reads the copy that another fd wrote" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		fstack "$fs"
		on_both reopen_script
	done
}

setfl_script() {
	"$PROBE" ops <<EOF
fdopen 0 $m/g rw
fdwrite 0 AB
setfl 0 append
fdwrite 0 XY
fdread 0 => ABataXY
fdclose 0
fdopen 1 $m/h a
setfl 1 none
fdwrite 1 Q
fdread 1 => Qdata
fdclose 1
read $u/h => Qdata
EOF
}

@test "fcntl F_SETFL O_APPEND makes writes append, and clearing it stops that" {
	fstack tmpfs
	on_both setfl_script
}

splice_script() {
	"$PROBE" ops <<EOF
spliceout $m/low => lowdata
splicein $m/low 3 XY
spliceout $m/low => lowXYta
read $L/low => lowdata
splicein $u/low 0 Q
spliceout $m/low => QowXYta
create $m/new xyz
splicein $m/new 1 ab
read $m/new => xab
EOF
}

# The splice into the upper file itself shows lockdep the upper
# filesystem's order (sb_writers, then the pipe) beside layerfs's.
@test "splice into a layerfs file and out of it; lockdep sees no inversion with the upper file's" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		fstack "$fs"
		on_both splice_script
	done
}

fiemap_script() {
	"$PROBE" ops <<EOF
fiemap $L/big => @LOW
fiemap $m/big => @LOW
create $m/new2 newdata
fiemap $u/new2 => @UP
fiemap $m/new2 => @UP
EOF
}

@test "FIEMAP on a layerfs file maps the real file's extents; filefrag works" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		fstack "$fs"
		on_both fiemap_script
	done
	# filefrag falls back to FIBMAP, which layerfs has not, without FIEMAP
	run filefrag "$M/big"
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == "$M/big: "*" found" ]]
}

# copy_script RESULT C1-CHECK G-DATA CLONE-RESULT: copies from lower
# files into new or truncated ones (copied up at open)
copy_script() {
	"$PROBE" ops <<EOF
hash $L/big => @BIG
copyrange $m/big $m/c1 => $1
$2
copyrange $m/f $m/g => $1
read $m/g => $3
clone $m/big $m/c2 => $4
copyrange $m/c2 $m/c3 => ok
EOF
}

# same_fs_copies, cross_fs_copies: copy_script with what the real
# filesystems answer when the layers share one, and when they do not
# (no reflink on either: tmpfs and ext4 have none)
same_fs_copies() {
	copy_script ok "hash $m/c1 => @BIG" old EOPNOTSUPP
}

cross_fs_copies() {
	copy_script EXDEV "size $m/c1 => 0" "(empty)" EXDEV
}

@test "copy_file_range and FICLONE pass to the real files; cp --reflink=auto copies right" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		fstack "$fs"
		on_both same_fs_copies
		cp --reflink=auto "$M/big" "$M/cp"
		cmp "$L/big" "$M/cp"
	done
	echo "# tmpfs under ext4"
	fstack tmpfs ext4
	on_both cross_fs_copies
	cp --reflink=auto "$M/big" "$M/cp"
	cmp "$L/big" "$M/cp"
}

# relatime (the default): a read after a utimes updates the atime of an
# upper object, not of a lower one; then the atime is set back for the
# read-only step
atime_script() {
	"$PROBE" ops <<EOF
utimes $m/up 1000000000
read $m/up => updata
atime $m/up => !1000000000
atime $u/up => !1000000000
utimes $m/d 1000000000
count $m/d => 1
atime $u/d => !1000000000
read $m/low => lowdata
atime $m/low => 1000000000
atime $L/low => 1000000000
utimes $m/up 1000000000
EOF
}

atime_ro_script() {
	"$PROBE" ops <<EOF
read $m/up => updata
atime $m/up => 1000000000
atime $u/up => 1000000000
EOF
}

atime_noatime_script() {
	"$PROBE" ops <<EOF
utimes $m/up 1000000000
read $m/up => updata
atime $u/up => 1000000000
EOF
}

@test "reads update the upper file's atime as overlay does: relatime, read-only, noatime" {
	fstack tmpfs
	"$PROBE" ops <<<"utimes $L/low 1000000000"
	on_both atime_script
	mount -o remount,ro "$M"
	mount -o remount,ro "$O"
	on_both atime_ro_script
	mount -o remount,rw,noatime "$M"
	mount -o remount,rw,noatime "$O"
	on_both atime_noatime_script
}

@test "fsync of a lower file whose filesystem has no fsync succeeds" {
	lfs_workdir tmpfs
	# tracefs files have no ->fsync (procfs, which neither has, refuses
	# to be stacked on)
	mkdir "$WORK/t"
	mount -t tracefs nodev "$WORK/t"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/t"
	"$PROBE" ops <<EOF
fdopen 0 $WORK/t/README r
fsync 0 => EINVAL
fdopen 1 $WORK/mnt/README r
fdread 1 => !(empty)
fsync 1
fdatasync 1
EOF
}
