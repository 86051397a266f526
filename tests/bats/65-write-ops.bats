#!/usr/bin/env bats
# Every namespace operation on stacks of 1, 2 and 64 lower layers under an
# upper layer on tmpfs and on ext4, with target names that live in the
# bottom layer.  Each test runs the same steps on a plain tree holding the
# flattened stack (the reference) and on the mount: the results (errnos)
# must be the ones the steps name, and the trees must dump the same.  Then
# the upper layer is checked on disk: whiteouts, opaque directories,
# redirects, what got copied up.

load lib
load lib-write

# Each test works in a subtree of its own (SUBTREES) of six stacks that
# setup_file builds and mounts once: 1, 2 and 64 lower layers (on tmpfs,
# shared), each under an upper layer on tmpfs and one on ext4.  What a
# test expects to see after a remount it leaves in after-FS-N; the remount
# test runs those at the end.
SUBTREES=(create unlink rmdir overwh rename rename2 dirren hardlink tmpfile)

# bottom_spec ROOT [n]: the bottom layer's names under ROOT; with "n" the
# name that the top layer of a deeper stack whites out is left out.  (An
# echo, not cat and a here-document: setup_file writes 81 of them, and
# each process start costs ~60 ms in the guest.)
bottom_spec() {
	local r=$1
	echo "f $r/top-bf rootfile
f $r/d/bf bottom
f $r/d/bf2 bottom2
f $r/d/bd/x x
f $r/d/bd/y y
d $r/d/be
l $r/d/bl target
p $r/d/bp
f $r/d/bwd/z z
f $r/d/bdir/top t
f $r/d/bdir/sub/deep deep
f $r/d/hl1 hl
h $r/d/hl2 $r/d/hl1
f $r/d/hk1 hk
h $r/d/hk2 $r/d/hk1
h $r/d/hk3 $r/d/hk1"
	[ "${2:-}" = n ] || echo "f $r/d/wh gone"
}

# upper_parts N FMT SUB: what the layers above the bottom add in subtree
# SUB of stack N; FMT gives a layer's root from its number (printf)
upper_parts() {
	local n=$1 fmt=$2 sub=$3 i
	# a merged directory: entries in the top, a middle and the bottom layer
	printf "f $fmt/$sub/d/bd/t t\n" 0
	printf "f $fmt/$sub/d/bd/mid mid\n" $((n / 2))
	printf "f $fmt/$sub/d/bdir/sub/ms ms\n" $((n / 2))
	# a file in d in every 8th layer; in the subtrees where emptiness
	# checks and redirects matter, d is in every layer
	for ((i = 0; i < n - 1; i++)); do
		if ((i % 8 == 0)); then
			printf "f $fmt/$sub/d/m$i m$i\n" "$i"
		elif [ "$sub" = rmdir ] || [ "$sub" = dirren ]; then
			printf "d $fmt/$sub/d\n" "$i"
		fi
	done
}

# stack_spec N: the layers sN/L0 (top) .. L(N-1) (bottom)
stack_spec() {
	local n=$1 sub b=s$1/L$(($1 - 1))
	for sub in "${SUBTREES[@]}"; do
		bottom_spec "$b/$sub"
		upper_parts "$n" "s$n/L%d" "$sub"
		# the top layer whites out a name of the bottom one
		((n == 1)) || echo "W s$n/L0/$sub/d/wh"
	done
}

# flat_spec N ROOT: the flattened tree of stack N under ROOT
flat_spec() {
	local n=$1 r=$2 sub
	for sub in "${SUBTREES[@]}"; do
		if ((n == 1)); then
			bottom_spec "$r/$sub"
		else
			bottom_spec "$r/$sub" n
		fi
		upper_parts "$n" "$r" "$sub"
	done
}

# the lower layers of all stacks
LOWER=/tmp/lfs-tests/ops-lower

# all_specs: the three stacks (1, 2 and 64 layers) for mktree in $LOWER
all_specs() {
	local n
	for n in 1 2 64; do
		stack_spec "$n"
	done
}

# all_flat_specs: the three plain trees the mounts are compared with, and
# the directories of the mounts, for mktree in $S
all_flat_specs() {
	local n
	for n in 1 2 64; do
		printf 'd %s\n' "u$n" "w$n" "m$n"
		flat_spec "$n" "r$n"
	done
}

# stack_vars FS N [SUB]: S (root on FS), M (mount), U (upper), W (work),
# R (reference), LAYERS for stack N with the upper on FS; M, U and R in
# subtree SUB
stack_vars() {
	local fs=$1 n=$2
	lfs_base "$fs"
	S=$LFS_BASE/ops-stacks
	M=$S/m$n/${3:-} U=$S/u$n/${3:-} W=$S/w$n R=$S/r$n/${3:-}
	M=${M%/} U=${U%/} R=${R%/}
	# $LOWER/sN/L0 .. L(N-1) by one brace expansion: a loop here cost
	# bats's trace of 130 commands a call for N=64, six calls a test
	eval "LAYERS=(\"\$LOWER/s$n/L\"{0..$((n - 1))})"
}

setup_file() {
	local fs n
	rm -rf "$LOWER"
	mkdir -p "$LOWER"
	# (mktree makes every parent of every path: short paths are faster)
	lfs_untraced all_specs | (cd "$LOWER" && mktree .)
	"$PROBE" meta "$LOWER" >"$BATS_FILE_TMPDIR/lower"
	for fs in tmpfs ext4; do
		stack_vars "$fs" 1
		rm -rf "$S"
		mkdir -p "$S"
		lfs_untraced all_flat_specs | (cd "$S" && mktree .)
		for n in 1 2 64; do
			stack_vars "$fs" "$n"
			wmount "$M" "$U" "$W" "${LAYERS[@]}"
		done
	done
}

teardown_file() {
	local fs n mounts=() dirs=("$LOWER")
	for fs in tmpfs ext4; do
		for n in 1 2 64; do
			stack_vars "$fs" "$n"
			mounts+=("$M")
		done
		dirs+=("$S")
	done
	# one umount, one rm: a process costs ~60 ms here
	umount "${mounts[@]}" || :
	rm -rf "${dirs[@]}"
}

# each_stack FUNC SUB: FUNC FS N in subtree SUB of the six stacks
each_stack() {
	local fs n
	for fs in tmpfs ext4; do
		for n in 1 2 64; do
			echo "# $fs upper, $n lower layers"
			stack_vars "$fs" "$n" "$2"
			SUB=$2
			AFTER=$BATS_FILE_TMPDIR/after-$fs-$n
			"$1" "$fs" "$n" || return 1
		done
	done
}

# ops_both STEPS [UPPER_CHECKS]: STEPS on the reference and on the mount,
# then UPPER_CHECKS in the upper layer, then the trees compared
ops_both() {
	run_ops <<EOF
cd $R
$1
cd $M
$1
cd $U
${2:-}
count $W/work => 0
treecmp $R $M
EOF
}

# after_remount STEPS: steps for the remount test, run from the root of
# the reference and of the mount (the script says where: cd $R, cd $M)
after_remount() {
	printf '%s\n' "$1" >>"$AFTER"
}

create_ops() {
	ops_both "create rootnew r
create d/new1 n1
create d/bf x => EEXIST
create top-bf x => EEXIST
mkdir d/newdir
mkdir d/bd => EEXIST
mkdir d/bf => EEXIST
fifo d/nfifo
sock d/nsock
chr d/nchr 1 3
blk d/nblk 7 0
symlink tgt d/nlink
symlink tgt d/bl => EEXIST
fifo d/bf => EEXIST
sock d/bp => EEXIST
chr d/bd 1 3 => EEXIST
create d/newdir/inner i
create d/bd/new2 n2
mkdir d/bdir/sub/newsub
create d/nodir/x => ENOENT
create d/bf/x => ENOTDIR
mkdir d/bf/x => ENOTDIR" \
		"kind rootnew => file
kind d/new1 => file
kind d/newdir => dir|opaque-dir
kind d/newdir/inner => file
kind d/nfifo => fifo
kind d/nsock => sock
kind d/nchr => chr
kind d/nblk => blk
kind d/nlink => symlink
kind top-bf => absent
kind d/bf => absent
kind d/bl => absent
kind d/bd => dir
kind d/bd/new2 => file
kind d/bd/x => absent
kind d/bdir/sub => dir
kind d/bdir/sub/newsub => dir|opaque-dir
kind d/bdir/sub/deep => absent"
}

@test "create, mkdir, mknod, symlink: new names anywhere, EEXIST on names from the bottom layer, nothing copied up needlessly" {
	each_stack create_ops create
}

unlink_ops() {
	local n=$2 wh_want=ENOENT wh_kind=absent
	((n == 1)) && wh_want=ok wh_kind=$WH
	ops_both "unlink d/bf
unlink d/bl
unlink d/bp
unlink d/hl1
unlink top-bf
rmdir d/be
create d/up u
unlink d/up
mkdir d/updir
rmdir d/updir
unlink d/bf => ENOENT
unlink d/wh => $wh_want
rmdir d/bd => ENOTEMPTY
unlink d/bd => EISDIR
rmdir d/bf2 => ENOTDIR
rmdir d/nonexist => ENOENT
unlink d/bdir/sub/deep
read d/hl2 => hl
$( ((n > 1)) && echo "unlink d/m0")" \
		"kind d/bf => $WH
kind d/bl => $WH
kind d/bp => $WH
kind d/hl1 => $WH
kind d/hl2 => absent
kind top-bf => $WH
kind d/be => $WH
kind d/up => absent
kind d/updir => absent
kind d/wh => $wh_kind
kind d/bdir/sub/deep => $WH
kind d/bdir/sub => dir
$( ((n > 1)) && echo "kind d/m0 => $WH")"
}

@test "unlink and rmdir of lower names leave whiteouts in the upper layer; upper-only names go without one" {
	each_stack unlink_ops unlink
}

rmdir_ops() {
	ops_both "unlink d/bd/x
unlink d/bd/y
unlink d/bd/t
rmdir d/bd => ENOTEMPTY
unlink d/bd/mid
create d/bd/new n
rmdir d/bd => ENOTEMPTY
unlink d/bd/new
count d/bd => 0
rmdir d/bd
rmdir d/bd => ENOENT
unlink d/bwd/z
rmdir d/bwd
mkdir d/upd
mkdir d/upd/sub
rmdir d/upd => ENOTEMPTY
rmdir d/upd/sub
rmdir d/upd
unlink d/bdir/sub/deep
rmdir d/bdir/sub => ENOTEMPTY
unlink d/bdir/sub/ms
rmdir d/bdir => ENOTEMPTY
rmdir d/bdir/sub
unlink d/bdir/top
rmdir d/bdir" \
		"kind d/bd => $WH
kind d/bwd => $WH
kind d/bdir => $WH
kind d/upd => absent"
}

@test "rmdir of a merged directory that holds only whiteouts succeeds and leaves one whiteout; ENOTEMPTY while any layer shows an entry" {
	each_stack rmdir_ops rmdir
}

overwhiteout_steps="rmdir d/be
mkdir d/be
unlink d/bd/x
unlink d/bd/y
unlink d/bd/t
unlink d/bd/mid
rmdir d/bd
mkdir d/bd
create d/bd/fresh f
unlink d/bf
create d/bf new
unlink d/bl
symlink newt d/bl
unlink d/bp
fifo d/bp
unlink d/bf2
mkdir d/bf2
unlink d/bwd/z
create d/bwd/z again
unlink top-bf
sock top-bf"

overwhiteout_ops() {
	ops_both "$overwhiteout_steps" \
		"kind d/be => opaque-dir
kind d/bd => opaque-dir
count d/bd => 1
kind d/bf => file
read d/bf => new
kind d/bl => symlink
kind d/bp => fifo
kind d/bwd/z => file
kind top-bf => sock" || return 1
	# the old lower entries stay hidden after a remount
	after_remount "cd $M
count d/bd => 1
count d/be => 0
read d/bd/fresh => f
read d/bf => new"
}

@test "mkdir over a whiteout makes an opaque directory; other objects replace the whiteout" {
	each_stack overwhiteout_ops overwh
}

rename_file_ops() {
	ops_both "rename d/bf d/bf-renamed
rename d/bf2 d/bd/moved
rename d/bl d/bd/x
create d/new n
rename d/new d/bp
rename top-bf d/bdir/sub/fromroot
rename d/hl1 d/hl1-renamed
sameino d/hl1-renamed d/hl2
links d/hl2 => 2
rename d/nonexist d/q => ENOENT
rename d/bf-renamed d/be => EISDIR
rename d/be d/bd/y => ENOTDIR
rename d/bd d/bd/sub => EINVAL
rename d/bdir d/bd => ENOTEMPTY
rename d/be d/bwd => ENOTEMPTY
rename d/bf-renamed d/bf-renamed
rename d/bd/x d/bd/x2
unlink d/bwd/z
rename d/be d/bwd" \
		"kind d/bf => $WH
kind d/bf-renamed => file
kind d/bf2 => $WH
kind d/bd/moved => file
kind d/bl => $WH
kind d/bd/x => $WH
kind d/bd/x2 => symlink
kind d/bp => file
kind d/new => absent
kind top-bf => $WH
kind d/bdir/sub/fromroot => file
kind d/hl1 => $WH
kind d/be => $WH
kind d/bwd/z => absent"
}

@test "rename of files within and across directories, over lower names, never EXDEV; the old lower name gets a whiteout" {
	each_stack rename_file_ops rename
}

rename2_ops() {
	local n=$2 wh_want=ok
	((n == 1)) && wh_want=EEXIST
	ops_both "noreplace d/bf d/bf2 => EEXIST
noreplace d/bf d/bnew
noreplace d/bl d/wh => $wh_want
noreplace d/be d/bwd => EEXIST
noreplace d/bnew d/nonexist/x => ENOENT
noreplace d/bnew top-bf => EEXIST
exchange d/bf2 d/bd
exchange d/bl d/nonexist => ENOENT
exchange d/nonexist d/bl => ENOENT
exchange d/be d/bdir
create d/u u
exchange d/u d/bp
exchange d/hl1 top-bf
read top-bf => hl
read d/hl1 => rootfile
sameino top-bf d/hl2" \
		"kind d/bnew => file
kind d/bf => $WH
kind d/bd => file
kind d/bf2 => dir redirect=$(lfs_redirect "$SUB/d/bd" same)
kind d/be => dir redirect=$(lfs_redirect "$SUB/d/bdir" same)
kind d/bdir => dir redirect=$(lfs_redirect "$SUB/d/be" same)
kind d/u => fifo
kind d/bp => file
kind d/hl1 => file
kind top-bf => file"
}

@test "renameat2 with RENAME_NOREPLACE and RENAME_EXCHANGE, on upper and lower names, files and directories" {
	each_stack rename2_ops rename2
}

dir_rename_steps="rename d/bdir d/moved
mkdir e
mkdir e/deeper
rename d/bd e/deeper/bd2
rename d/moved/sub d/subtop
mkdir up1
create up1/f 1
rename up1 d/up1moved
rename d/be d/be2
create d/moved/new n
create e/deeper/bd2/new2 n2
unlink e/deeper/bd2/x
read d/subtop/deep => deep
read d/subtop/ms => ms"

dir_rename_ops() {
	ops_both "$dir_rename_steps" \
		"kind d/moved => dir redirect=$(lfs_redirect "$SUB/d/bdir" same)
kind e/deeper/bd2 => dir redirect=$(lfs_redirect "$SUB/d/bd")
kind d/subtop => dir redirect=$(lfs_redirect "$SUB/d/bdir/sub")
kind d/be2 => dir redirect=$(lfs_redirect "$SUB/d/be" same)
kind d/bdir => $WH
kind d/bd => $WH
kind d/be => $WH
kind d/moved/sub => $WH
kind e/deeper/bd2/x => $WH
count d/up1moved => 1
kind up1 => absent" || return 1
	after_remount "cd $R
create d/moved/after a
create d/subtop/after a
cd $M
read d/subtop/deep => deep
read e/deeper/bd2/y => y
count e/deeper/bd2 => 4
create d/moved/after a
create d/subtop/after a"
}

@test "a directory with lower parts renames without EXDEV and keeps its contents and a redirect" {
	each_stack dir_rename_ops dirren
}

hardlink_ops() {
	local out
	out=$(ops_both "ino d/hk2 => @hk2
link d/bf d/bf-link
sameino d/bf d/bf-link
links d/bf => 2
append d/bf-link +l
read d/bf => bottom+l
append d/hl1 +x
read d/hl2 => hl+x
sameino d/hl1 d/hl2
links d/hl1 => 2
append d/hk1 +1
read d/hk3 => hk+1
links d/hk3 => 3
ino d/hk2 => @hk2" \
		"sameino d/bf d/bf-link
links d/bf => 2
kind d/hl1 => file") || { echo "$out"; return 1; }
	echo "$out"
	# the last one is from the mount: st_ino is kept across the remount
	ops_value "$out" "ino d/hk2" || return 1
	after_remount "cd $R
append d/hk3 +3
cd $M
ino d/hk2 => $OPS_VALUE
read d/hl1 => hl+x
read d/hl2 => hl+x
sameino d/hl1 d/hl2
read d/hk3 => hk+1
read d/hk2 => hk+1
sameino d/hk1 d/hk3
append d/hk3 +3
read d/hk1 => hk+1+3
read d/hk2 => hk+1+3
links d/hk2 => 3
sameino d/bf d/bf-link
ino d/hk2 => $OPS_VALUE"
}

@test "link of a lower file copies it up; lower hard links stay one inode after one name is copied up" {
	each_stack hardlink_ops hardlink
}

tmpfile_steps="tmpfile d - x
tmpfile d d/tmp1 data1
tmpfile d/bd d/bd/tmp2 data2
tmpfile d/bdir/sub d/bdir/sub/tmp3 data3
tmpfile d d/bf data => EEXIST
tmpfile d/bf d/x => ENOTDIR
read d/tmp1 => data1
read d/bd/tmp2 => data2
links d/tmp1 => 1"

tmpfile_ops() {
	ops_both "$tmpfile_steps" \
		"kind d/tmp1 => file
kind d/bd/tmp2 => file
kind d/bdir/sub/tmp3 => file
kind d/bf => absent"
}

@test "O_TMPFILE files stay nameless until linkat gives them a name" {
	if [ "$LFS_FSTYPE" = overlay ]; then
		# overlay has O_TMPFILE from 6.6 on: check the steps on tmpfs
		stack_vars tmpfs 2 tmpfile
		run_ops "$R" <<<"$tmpfile_steps
unlink d/tmp1
unlink d/bd/tmp2
unlink d/bdir/sub/tmp3"
		skip "overlay in 6.1 has no O_TMPFILE (the steps pass on tmpfs)"
	fi
	each_stack tmpfile_ops tmpfile
}

@test "after umount and mount every stack shows the same trees, opaque directories, redirects and hard links" {
	local fs n
	for fs in tmpfs ext4; do
		for n in 1 2 64; do
			echo "# $fs upper, $n lower layers"
			stack_vars "$fs" "$n"
			umount "$M"
			wmount "$M" "$U" "$W" "${LAYERS[@]}"
			run_ops <"$BATS_FILE_TMPDIR/after-$fs-$n"
			run_ops <<<"count $W/work => 0
treecmp $R $M"
		done
	done
}

@test "the lower layers of every stack are unchanged" {
	diff -u "$BATS_FILE_TMPDIR/lower" <("$PROBE" meta "$LOWER")
}
