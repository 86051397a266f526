#!/usr/bin/env bats
# Copy-up: every call that modifies a lower file copies it to the upper
# layer first, with its data (holes too), mode, owner, times and xattrs
# (security.capability, POSIX ACLs); st_ino stays; setuid/setgid go on a
# write by another user as on any filesystem; concurrent copy-ups of one
# file make one copy.  The lower layers never change.
#
# setup_file builds two lower layers on tmpfs and mounts them twice, under
# an upper layer on tmpfs (copy-up within one filesystem) and one on ext4
# (across filesystems).  Next to each upper layer is a reference tree that
# holds copies of the bottom layer's test files, made the same way, so the
# same calls on it show what a plain filesystem does.
#
# These stacks are mounted with metacopy=off: what is checked here is the
# whole copy-up, which chmod, chown, utimes and the xattr calls make
# only then.  Their metadata-only copy-up (metacopy=on, the default) is
# 71-metacopy's.

load lib
load lib-write

# whole copy-ups for every trigger (see above); overlay's default
LFS_WRITE_OPTS+=,metacopy=off

# the copy-up triggers of the first test: NAME and the ops line on file NAME
TRIGGERS=(
	"openw openw openw"
	"write write write new"
	"append append append +a"
	"pwrite pwrite pwrite 2 XY"
	"truncate truncate truncate 3"
	"trunc0 truncate trunc0 0"
	"otrunc write otrunc"
	"chmod chmod chmod 600"
	"chown chown chown 4321 8765"
	"utimes utimes utimes 2000000000"
	"setx setxattr setx trusted.lfs.c vc"
	"rmx removexattr rmx trusted.lfs.a"
	"link link link link-2"
)
# the triggers that write data and so set mtime
WRITERS=(write append pwrite truncate trunc0 otrunc)

# a file capability as setcap writes it: revision 2, effective,
# cap_net_raw permitted
CAP=0x0100000200200000000000000000000000000000

# the lower layers, top first
LOWER=/tmp/lfs-tests/copyup-lower
L0=$LOWER/L0
L1=$LOWER/L1

# stack_vars FS: S (root), M (mount), U (upper), W (work), R (reference)
# for the stack with the upper layer on FS
stack_vars() {
	lfs_base "$1"
	S=$LFS_BASE/copyup
	M=$S/m U=$S/u W=$S/w R=$S/ref
}

# test_files ROOT: the files that the bottom layer and the references share
test_files() {
	local t name root=$1
	for t in "${TRIGGERS[@]}"; do
		name=${t%% *}
		echo "f $root/c/$name data-$name"
		echo "u $root/c/$name 1234 5678"
		echo "m $root/c/$name 640"
		echo "a $root/c/$name trusted.lfs.a va"
		echo "a $root/c/$name trusted.lfs.b vb"
	done
	echo "f $root/suid/s s"
	echo "m $root/suid/s 6777"
	echo "f $root/suid/g g"
	echo "m $root/suid/g 2666"
}

# the lower layers
lower_spec() {
	echo "f L0/top t"
	echo "d L0/c"
	test_files L1
	cat <<EOF
H L1/sparse/s1 16777216
H L1/sparse/s2 16777216
F L1/big/big 67108864
f L1/ino/w w
f L1/ino/m m
f L1/ino/dir/x x
f L1/race/r1 abcdefghijklmnopqrstuvwxyz
f L1/race/r2 abcdefghijklmnopqrstuvwxyz
f L1/deep/a/b/c/r3 abcdefghijklmnopqrstuvwxyz
f L1/trunc/o data-o
f L1/trunc/t data-t
f L1/dead/empty
f L1/dead/full data-full
f L1/dead/over old
EOF
}

setup_file() {
	local fs t refs=()
	rm -rf "$LOWER"
	lower_spec | mktree "$LOWER"
	for fs in tmpfs ext4; do
		stack_vars "$fs"
		rm -rf "$S"
		{
			printf 'd %s\n' u w m
			test_files ref
		} | mktree "$S"
		refs+=("$R")
	done
	setfattr -n security.capability -v "$CAP" "$L1"/c/* "${refs[0]}"/c/* "${refs[1]}"/c/*
	setfacl -m u:1000:rw,g:2000:r "$L1"/c/* "${refs[0]}"/c/* "${refs[1]}"/c/*
	# the same mtime on all, after the xattrs
	for t in "$L1"/c/* "${refs[0]}"/c/* "${refs[1]}"/c/*; do
		echo "utimes $t 1000000000"
	done | run_ops >/dev/null
	"$PROBE" meta "$LOWER" >"$BATS_FILE_TMPDIR/lower"
	for fs in tmpfs ext4; do
		stack_vars "$fs"
		wmount "$M" "$U" "$W" "$L0" "$L1"
	done
}

# the times test's own stacks, under its work directory
teardown() {
	lfs_cleanup
}

teardown_file() {
	local fs
	for fs in tmpfs ext4; do
		stack_vars "$fs"
		umount "$M" || :
		rm -rf "$S"
	done
	rm -rf "$LOWER"
}

@test "write, truncate, chmod, chown, utimes, setxattr, removexattr and link copy up data, mode, owner, times and xattrs" {
	local fs t steps= norm= ino= origin= m r u
	for t in "${TRIGGERS[@]}"; do
		steps+=${t#* }$'\n'
		ino+="ino ${t%% *} => @${t%% *}"$'\n'
		# the copy records its origin, which the mount does not show
		origin+="getxattr u/c/${t%% *} $LFS_ORIGIN_XATTR => !ENODATA"$'\n'
		origin+="getxattr m/c/${t%% *} $LFS_ORIGIN_XATTR => EOPNOTSUPP"$'\n'
	done
	for t in "${WRITERS[@]}"; do
		# a write sets mtime to now: give both the same
		norm+="utimes $t 1500000000"$'\n'
	done
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		# st_ino before and after each copy-up
		run_ops <<EOF
cd $R/c
$ino$steps$norm$ino
cd $M/c
$ino$steps$norm$ino
sameino link link-2
cd $U/c
size otrunc => 0
size trunc0 => 0
sameino link link-2
read $L1/c/otrunc => data-otrunc
read $L1/c/trunc0 => data-trunc0
count $W/work => 0
cd $S
$origin
EOF
		# every file copied up, with what the plain filesystem shows
		# (the upper copies hold the trusted.overlay.* markers, and
		# on ext4 an xattr block more or less than the reference)
		r=$("$PROBE" dump -x blocks,overlay "$R/c")
		m=$("$PROBE" dump -x blocks,overlay "$M/c")
		u=$("$PROBE" dump -x blocks,overlay "$U/c")
		same_text "reference and mount" "$r" "$m"
		same_text "reference and upper layer" "$r" "$u"
		# and as getfattr sees the upper files: capability, ACL and
		# trusted.* survive the copy-ups that leave them alone
		for t in utimes setx link chmod; do
			u=$(getfattr -h -d -m - -e hex "$U/c/$t")
			echo "$u"
			[[ $u == *"security.capability=$CAP"* ]]
			[[ $u == *"system.posix_acl_access=0x"* ]]
			[[ $u == *"trusted.lfs.b=0x7662"* ]]
		done
	done
}

@test "copy-up keeps the holes of a sparse file" {
	# 16 MiB with 4 KiB of data at each end: a copy may fill holes
	# around the data (overlay copies 1 MiB chunks) but not all of it:
	# at most 4 MiB allocated (8192 blocks), and a hole in the map
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		run_ops <<EOF
map $L1/sparse/s1 => 0-4096 16773120-16777216
hash $L1/sparse/s1 => @hash
map $M/sparse/s1 => 0-4096 16773120-16777216
chmod $M/sparse/s1 600
hash $U/sparse/s1 => @hash
hash $M/sparse/s1 => @hash
blocks $U/sparse/s1 => <=8192
map $U/sparse/s1 => @map
map $M/sparse/s1 => @map
map $U/sparse/s1 => !0-16777216
append $M/sparse/s2 +
size $U/sparse/s2 => 16777217
blocks $U/sparse/s2 => <=8192
map $U/sparse/s2 => !0-16777217
map $L1/sparse/s1 => 0-4096 16773120-16777216
EOF
	done
}

@test "a 64 MiB file copies up whole" {
	local tm tu em eu
	stack_vars tmpfs
	tm=$M tu=$U
	stack_vars ext4
	em=$M eu=$U
	run_ops <<EOF
hash $L1/big/big => @h
chmod $tm/big/big 600
chmod $em/big/big 600
size $tu/big/big => 67108864
hash $tu/big/big => @h
size $eu/big/big => 67108864
hash $eu/big/big => @h
EOF
}

@test "O_TRUNC and truncate to 0 of a lower file give an empty file; the lower one keeps its data" {
	local fs
	for fs in tmpfs ext4; do
		stack_vars "$fs"
		run_ops <<EOF
write $M/trunc/o
size $M/trunc/o => 0
read $M/trunc/o => (empty)
size $U/trunc/o => 0
read $L1/trunc/o => data-o
truncate $M/trunc/t 0
read $M/trunc/t => (empty)
size $U/trunc/t => 0
read $L1/trunc/t => data-t
EOF
	done
}

@test "st_ino does not change when a file or directory is copied up, nor across a remount" {
	local fs out w m d dir
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		out=$(run_ops "$M" <<EOF
ino ino/w => @w
ino ino/m => @m
ino ino/dir => @d
append ino/w +
chmod ino/m 600
create ino/dir/new n
ino ino/w => @w
ino ino/m => @m
ino ino/dir => @d
EOF
		) || { echo "$out"; return 1; }
		echo "$out"
		ops_value "$out" "ino ino/w"
		w=$OPS_VALUE
		ops_value "$out" "ino ino/m"
		m=$OPS_VALUE
		ops_value "$out" "ino ino/dir"
		d=$OPS_VALUE
		dir="ino ino/dir => $d"
		# overlay without xino gives a merged directory the upper st_ino
		# when the upper is on another filesystem than the lowers
		[ "$LFS_FSTYPE" = overlay ] && [ "$fs" = ext4 ] && dir=
		umount "$M"
		wmount "$M" "$U" "$W" "$L0" "$L1"
		run_ops "$M" <<EOF
ino ino/w => $w
ino ino/m => $m
$dir
read ino/w => w+
mode ino/m => 600
EOF
	done
}

@test "a write by another user clears setuid and setgid as on a plain filesystem" {
	# (6.1 clears setgid without group exec too, as tmpfs shows)
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		run_ops <<EOF
become 65534 65534
cd $R/suid
append s +n
append g +n
mode s => 777
mode g => 666
cd $M/suid
mode s => 6777
append s +n
append g +n
mode s => 777
mode g => 666
read s => s+n
cd $U/suid
mode s => 777
mode g => 666
read s => s+n
EOF
	done
}

@test "16 concurrent copy-ups of one file make one copy that holds every write" {
	local fs f
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		# the last one also races to copy up its three parents
		for f in race/r1 race/r2 deep/a/b/c/r3; do
			"$PROBE" race 16 "$M/$f"
		done
		run_ops <<EOF
read $M/race/r1 => ABCDEFGHIJKLMNOPqrstuvwxyz
read $U/race/r1 => ABCDEFGHIJKLMNOPqrstuvwxyz
read $M/race/r2 => ABCDEFGHIJKLMNOPqrstuvwxyz
read $U/race/r2 => ABCDEFGHIJKLMNOPqrstuvwxyz
read $M/deep/a/b/c/r3 => ABCDEFGHIJKLMNOPqrstuvwxyz
read $U/deep/a/b/c/r3 => ABCDEFGHIJKLMNOPqrstuvwxyz
count $U/race => 2
count $U/deep/a/b/c => 1
read $L1/race/r1 => abcdefghijklmnopqrstuvwxyz
read $L1/deep/a/b/c/r3 => abcdefghijklmnopqrstuvwxyz
count $W/work => 0
EOF
	done
}

@test "a file removed while open and then changed through its fd is copied up as an unlinked file" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		stack_vars "$fs"
		# (fd 3 is bats's)
		# the copy-ups find a whiteout, or a new file, where the name was:
		# the copies stay unlinked, as on any filesystem
		exec 6<"$M/dead/empty" 7<"$M/dead/full" 8<"$M/dead/over"
		rm "$M/dead/empty" "$M/dead/full"
		printf new >"$M/dead/over.new"
		mv "$M/dead/over.new" "$M/dead/over"
		chmod 600 /proc/self/fd/6 /proc/self/fd/7 /proc/self/fd/8
		run stat -L -c '%h %a %s' /proc/self/fd/6 /proc/self/fd/7 /proc/self/fd/8
		exec 6<&- 7<&-
		same_text "stat of the removed files" "$output" "0 600 0
0 600 9
0 600 3" || return 1
		run cat /proc/self/fd/8
		exec 8<&-
		[ "$output" = old ]
		run_ops <<EOF
count $M/dead => 1
read $M/dead/over => new
kind $U/dead/empty => $WH
kind $U/dead/full => $WH
read $L1/dead/full => data-full
count $W/work => 0
EOF
	done
}

# TIMES_OPS: calls that copy directories up, and renames the VFS refuses;
# only m/n/o (a new entry), q (an exchange in it) and s/t (utimes) change
# as a user sees it, and s/t/u, which truncate(2) empties.
TIMES_OPS='
chmod a/b/c 0700
rename a/x/sub e/g/file => ENOTDIR
rename a/x/sub2 e/g/file2 => EISDIR
create m/n/o/new
exchange q/fifo q/dir
truncate s/t/u 0
utimes s/t 2000000000
'

@test "a copy-up keeps the times of the directories it goes into, and a refused rename changes none, as on overlay" {
	lfs_workdir tmpfs
	mktree "$WORK" <<-'EOF'
	f L/a/b/c/f x
	d L/a/x/sub
	f L/a/x/sub2 x
	f L/e/g/file y
	d L/e/g/file2
	f L/m/n/o/p z
	p L/q/fifo
	f L/q/dir/in i
	f L/s/t/u u
	EOF
	find "$WORK/L" -exec touch -h -d @1000000000 {} +
	for fs in layerfs overlay; do
		mkdir "$WORK"/{$fs.u,$fs.w,$fs.m}
		opts=lowerdir=$WORK/L,upperdir=$WORK/$fs.u,workdir=$WORK/$fs.w
		[ "$fs" = layerfs ] || opts+=,redirect_dir=on,index=on
		mount -t "$fs" none "$WORK/$fs.m" -o "$opts"
		"$PROBE" ops "$WORK/$fs.m" <<<"$TIMES_OPS"
		"$PROBE" dump -x dirs,blocks "$WORK/$fs.m" >"$WORK/$fs.dump"
	done
	# but for the times, the two mounts show the same
	diff -u <(sed 's/ mt=[0-9]\{10\}[^ ]*//' "$WORK/overlay.dump") \
		<(sed 's/ mt=[0-9]\{10\}[^ ]*//' "$WORK/layerfs.dump")
	# the others keep theirs, on overlay (the reference) as on layerfs
	for fs in overlay layerfs; do
		run awk '$2 == "d" && $1 != "m/n/o" && $1 != "q" && $1 != "s/t" &&
			!/ mt=1000000000\.000000000( |$)/ { print "changed: " $0 }' "$WORK/$fs.dump"
		[ "$status" = 0 ]
		[ -z "$output" ] || { echo "# $fs: $output"; false; }
	done
	grep -q '^s/t d .* mt=2000000000\.000000000' "$WORK/layerfs.dump"
	# truncate(2) asks no times of the filesystem, which sets them on a
	# size change: the copy that truncation to 0 makes is empty already
	for fs in overlay layerfs; do
		run awk '$1 == "s/t/u" { print $5, ($0 ~ / mt=1000000000\./) ? "old" : "new" }' \
			"$WORK/$fs.dump"
		[ "$output" = "0 new" ] || { echo "# $fs: $output"; false; }
	done
	# the calls did copy those directories up, parents first
	[ -d "$WORK/layerfs.u/a/b/c" ]
	[ -f "$WORK/layerfs.u/m/n/o/new" ]
	[ -d "$WORK/layerfs.u/s/t" ]
}

@test "the lower layers are unchanged" {
	diff -u "$BATS_FILE_TMPDIR/lower" <("$PROBE" meta "$LOWER")
}
