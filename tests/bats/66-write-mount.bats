#!/usr/bin/env bats
# Mounting with an upper layer: which upperdir/workdir pairs are refused
# and why (errno and a kernel log line), EBUSY for directories another
# mount uses, upper filesystems without trusted xattrs or d_type, the
# workdir cleaned at mount, remount ro/rw, fsync reaching the upper, and
# the lower layers left alone by all of it.

load lib
load lib-write

setup_file() {
	local fs
	for fs in tmpfs ext4; do
		lfs_base "$fs"
		rm -rf "$LFS_BASE/mount-lowers"
		mktree "$LFS_BASE/mount-lowers" <<<'f L0/a a
f L0/d/top t
f L1/d/b b
f L1/low lowdata
W L0/gone
f L1/gone g'
		"$PROBE" meta "$LFS_BASE/mount-lowers" >"$BATS_FILE_TMPDIR/lower-$fs"
	done
}

teardown() {
	lfs_write_cleanup
}

teardown_file() {
	local fs
	for fs in tmpfs ext4; do
		lfs_base "$fs"
		rm -rf "$LFS_BASE/mount-lowers"
	done
}

# test_dir FS DIR...: T, a fresh directory for this test on FS, holding DIRs
test_dir() {
	lfs_base "$1"
	T=$LFS_BASE/t$BATS_TEST_NUMBER-$1
	LOWS=("$LFS_BASE/mount-lowers/L0" "$LFS_BASE/mount-lowers/L1")
	LOW=${LOWS[0]}:${LOWS[1]}
	LFS_WRITE_DIRS+=("$T")
	shift
	printf 'd %s\n' "$@" | mktree "$T"
}

# proc_mounts: /proc/mounts as one string in PROC_MOUNTS, its fields
# space-separated (a space in a path shows as \040).  Searched by pattern,
# not by a read loop: bats traces each step of a loop, ~10 ms a line of
# /proc/mounts in the guest, and the options test reads it for each case.
proc_mounts() {
	local lines IFS=$'\n'
	mapfile -t lines </proc/mounts || return 1
	PROC_MOUNTS=$'\n'"${lines[*]}"$'\n'
}

# mounted DIR: DIR is a mount point (" DIR " can only be the second field:
# the first follows a newline, the others are no absolute path); 2 when
# /proc/mounts cannot be read
mounted() {
	proc_mounts || return 2
	[[ $PROC_MOUNTS == *" $1 "* ]]
}

# mount_opts DIR: the options /proc/mounts shows for the mount on DIR (the
# last one mounted there)
mount_opts() {
	local rest
	MOUNT_OPTS=
	# not mounted: say so, rather than leave the last mount's options
	mounted "$1" || { echo "mount_opts: $1 is not mounted" >&2; return 1; }
	rest=${PROC_MOUNTS##*" $1 "}
	rest=${rest#* }
	MOUNT_OPTS=${rest%% *}
}

# refusals CASE...: each CASE is "DATA#ERRNOS#LOG": mount(2) with DATA
# fails with one of ERRNOS (a regex), and the kernel log of that attempt
# has a line from the filesystem that matches LOG (a regex).  In a
# subshell without bats's trace: log_since reads the log a line a step,
# once for each case (hundreds of traced steps for nine cases).
refusals() (
	trap - DEBUG
	local c data errnos logre out i=0 log bad=0
	dmesg -C
	for c in "$@"; do
		IFS='#' read -r data errnos logre <<<"$c"
		log_mark "t$BATS_TEST_NUMBER-$((i++))"
		out=$("$PROBE" mount2 "$LFS_FSTYPE" "$T/mnt" "$data")
		if ! [[ $out =~ ^mount:\ ($errnos)$ ]]; then
			echo "$data: $out, want $errnos"
			bad=1
		fi
	done
	log=$(dmesg)
	i=0
	for c in "$@"; do
		IFS='#' read -r data errnos logre <<<"$c"
		log_since "t$BATS_TEST_NUMBER-$((i++))" "$log"
		if ! [[ $LOG_CASE =~ $LFS_LOG_PREFIX.*($logre) ]]; then
			echo "$data: no \"$LFS_LOG_PREFIX\" line matching \"$logre\" in:"
			echo "$LOG_CASE"
			bad=1
		fi
	done
	! mounted "$T/mnt" || { echo "something got mounted on $T/mnt"; bad=1; }
	return $bad
)

@test "refused: upper and work on different filesystems, nested, read-only, missing; each with an errno and a message" {
	test_dir tmpfs u w mnt nest/u wi/w rosrc/u rosrc/w ro
	: >"$T/file"
	local e
	lfs_base ext4
	e=$LFS_BASE/t$BATS_TEST_NUMBER-ext4-w
	LFS_WRITE_DIRS+=("$e")
	mkdir -p "$e"
	mount --bind "$T/rosrc" "$T/ro"
	mount -o remount,bind,ro "$T/ro"
	# the same options with a good pair mount (so the refusals below are
	# about the pair)
	wmount "$T/mnt" "$T/u" "$T/w" "${LOWS[@]}"
	umount "$T/mnt"
	refusals \
		"lowerdir=$LOW,upperdir=$T/u,workdir=$e$LFS_WRITE_OPTS#EXDEV|EINVAL#upper|work" \
		"lowerdir=$LOW,upperdir=$T/nest,workdir=$T/nest/u$LFS_WRITE_OPTS#EINVAL|ELOOP#upper|work" \
		"lowerdir=$LOW,upperdir=$T/wi/w,workdir=$T/wi$LFS_WRITE_OPTS#EINVAL|ELOOP#upper|work" \
		"lowerdir=$LOW,upperdir=$T/u,workdir=$T/u$LFS_WRITE_OPTS#EINVAL|ELOOP#upper|work" \
		"lowerdir=$LOW,upperdir=$T/ro/u,workdir=$T/ro/w$LFS_WRITE_OPTS#EINVAL|EROFS#upper|work|r/o|read-only" \
		"lowerdir=$LOW,upperdir=$LFS_REPO/src,workdir=$LFS_REPO/vm$LFS_WRITE_OPTS#EINVAL|EROFS#upper|work|r/o|read-only" \
		"lowerdir=$LOW,upperdir=$T/u,workdir=$T/none$LFS_WRITE_OPTS#ENOENT#$T/none" \
		"lowerdir=$LOW,upperdir=$T/file,workdir=$T/w$LFS_WRITE_OPTS#ENOTDIR|EINVAL#$T/file" \
		"lowerdir=$LOW,upperdir=$T/u$LFS_WRITE_OPTS#EINVAL#work"
}

@test "fsconfig callers read why an upper layer is refused from the fs_context log" {
	[ "$LFS_FSTYPE" = layerfs ] || skip "layerfs-mount mounts only layerfs"
	test_dir tmpfs u w mnt nest/u
	local e
	lfs_base ext4
	e=$LFS_BASE/t$BATS_TEST_NUMBER-ext4-w
	LFS_WRITE_DIRS+=("$e")
	mkdir -p "$e"
	"$LFS_MOUNT" -o "lowerdir=$LOW,upperdir=$T/u,workdir=$T/w" "$T/mnt"
	umount "$T/mnt"
	run "$LFS_MOUNT" -v -o "lowerdir=$LOW,upperdir=$T/u,workdir=$e" "$T/mnt"
	echo "$output"
	[ "$status" = 32 ]
	[[ $output =~ layerfs:\ .*(upper|work) ]]
	run "$LFS_MOUNT" -v -o "lowerdir=$LOW,upperdir=$T/nest,workdir=$T/nest/u" "$T/mnt"
	echo "$output"
	[ "$status" = 32 ]
	[[ $output =~ layerfs:\ .*(upper|work) ]]
	! mounted "$T/mnt"
}

@test "an upperdir or workdir in use by another mount gives EBUSY; the first mount keeps working; after umount they can be used again" {
	test_dir tmpfs u1 w1 u2 w2 u3 w3 mnt1 mnt
	local other
	wmount "$T/mnt1" "$T/u1" "$T/w1" "${LOWS[@]}"
	# layerfs and overlay refuse each other's directories too
	[ "$LFS_FSTYPE" = layerfs ] && other=overlay
	refusals \
		"$(wmount_data "$LOW" "$T/u1" "$T/w2")#EBUSY#upper" \
		"$(wmount_data "$LOW" "$T/u2" "$T/w1")#EBUSY#work"
	if [ -n "$other" ]; then
		run "$PROBE" mount2 overlay "$T/mnt" "lowerdir=$LOW,upperdir=$T/u1,workdir=$T/w2,index=on"
		[ "$output" = "mount: EBUSY" ]
		run "$PROBE" mount2 overlay "$T/mnt" "lowerdir=$LOW,upperdir=$T/u2,workdir=$T/w1,index=on"
		[ "$output" = "mount: EBUSY" ]
	fi
	run_ops "$T/mnt1" <<EOF
create new n
read new => n
append low +1
read low => lowdata+1
read $T/u1/low => lowdata+1
EOF
	umount "$T/mnt1"
	run_ops <<EOF
count $T/u2 => 0
count $T/w2 => 0
EOF
	wmount "$T/mnt" "$T/u1" "$T/w2" "${LOWS[@]}"
	run_ops "$T/mnt" <<<'read new => n
read low => lowdata+1'
	umount "$T/mnt"
	wmount "$T/mnt" "$T/u1" "$T/w1" "${LOWS[@]}"
	umount "$T/mnt"
	if [ -n "$other" ]; then
		# an overlay holds them: layerfs is refused
		mount -t overlay none "$T/mnt1" -o "lowerdir=$LOW,upperdir=$T/u3,workdir=$T/w3,index=on"
		run "$PROBE" mount2 layerfs "$T/mnt" "$(wmount_data "$LOW" "$T/u3" "$T/w1")"
		[ "$output" = "mount: EBUSY" ]
		run "$PROBE" mount2 layerfs "$T/mnt" "$(wmount_data "$LOW" "$T/u1" "$T/w3")"
		[ "$output" = "mount: EBUSY" ]
	fi
}

# refused_upper DIR OVERLAY_LOG LAYERFS_RE: a mount with upper and work in
# $T/DIR is refused with EINVAL and a kernel log line matching LAYERFS_RE;
# overlay mounts it and logs OVERLAY_LOG, which shows that DIR's
# filesystem lacks the feature
refused_upper() {
	mktree "$T/$1" <<<'d u
d w'
	dmesg -C
	log_mark "t$BATS_TEST_NUMBER"
	run "$PROBE" mount2 "$LFS_FSTYPE" "$T/mnt" "$(wmount_data "$LOW" "$T/$1/u" "$T/$1/w")"
	log_since "t$BATS_TEST_NUMBER" "$(dmesg)"
	echo "$output"
	echo "$LOG_CASE"
	if [ "$LFS_FSTYPE" = overlay ]; then
		[ "$output" = "mount: ok" ]
		[[ $LOG_CASE == *"$2"* ]]
		return 0
	fi
	[ "$output" = "mount: EINVAL" ]
	[[ $LOG_CASE =~ layerfs:\ .*$3 ]]
}

@test "an upper filesystem without trusted xattrs (ramfs) is refused with a message" {
	test_dir tmpfs ram mnt
	mount -t ramfs none "$T/ram"
	refused_upper ram "overlayfs: failed to set xattr on upper" xattr
}

@test "an upper filesystem without d_type (ext4 without filetype, on a loop device) is refused with a message" {
	test_dir tmpfs nod mnt
	truncate -s 8M "$T/img"
	mkfs.ext4 -q -O ^filetype "$T/img" || skip "mkfs.ext4 cannot make an ext4 without filetype"
	mount -o loop "$T/img" "$T/nod" || skip "no loop device"
	refused_upper nod "overlayfs: upper fs needs to support d_type" d_type
}

@test "leftovers in the workdir's work directory from an earlier mount are cleaned at mount" {
	test_dir ext4 u w mnt
	local M=$T/mnt
	wmount "$M" "$T/u" "$T/w" "${LOWS[@]}"
	run_ops "$M" <<EOF
count $T/w/work => 0
append low +1
EOF
	umount "$M"
	# what a crash in the middle of a copy-up or rename leaves behind;
	# overlay cleans two levels only (and then mounts read-only)
	{
		printf '%s\n' 'f work/junk x' 'f work/jd/file y' 'd work/emptyd' \
			'W work/chrwh' 'w work/wh' 'l work/link target' 'o work/opq'
		[ "$LFS_FSTYPE" = overlay ] || echo 'f work/deep/er/still/file z'
	} | mktree "$T/w"
	wmount "$M" "$T/u" "$T/w" "${LOWS[@]}"
	run_ops "$M" <<EOF
count $T/w/work => 0
read low => lowdata+1
append low +2
create new n
mkdir newdir
unlink a
rename d dd
read $T/u/low => lowdata+1+2
count $T/w/work => 0
EOF
}

@test "work/ and index/ as found become the mounter's, mode 0700, without ACLs: a default ACL on the workdir reaches no copy (overlay makes its work/ anew, mode 0)" {
	test_dir ext4 u w mnt
	local M=$T/mnt want=700 acl
	[ "$LFS_FSTYPE" != overlay ] || want=0
	mkdir "$T/w/work" "$T/w/index"
	chown 1000:1000 "$T/w/work" "$T/w/index"
	chmod 0777 "$T/w/work" "$T/w/index"
	setfacl -d -m u:1001:rwx "$T/w" "$T/w/work" "$T/w/index"
	setfacl -m u:1001:rwx "$T/w/work"
	wmount "$M" "$T/u" "$T/w" "${LOWS[@]}"
	[ "$(stat -c %a:%u:%g "$T/w/work")" = "$want:0:0" ]
	acl=$(getfacl -cs "$T/w/work")
	[ -z "$acl" ]
	if [ "$LFS_FSTYPE" != overlay ]; then
		[ "$(stat -c %a:%u:%g "$T/w/index")" = 700:0:0 ]
		acl=$(getfacl -cs "$T/w/index")
		[ -z "$acl" ]
	fi
	# a copy-up (built in work/) and what is made through the mount
	echo more >>"$M/low"
	mkdir "$M/nd"
	echo y >"$M/nd/f"
	[ "$(cat "$T/u/low")" = lowdatamore ]
	acl=$(getfacl -cs "$T/u/low" "$T/u/nd" "$T/u/nd/f")
	[ -z "$acl" ]
}

@test "remount read-only: every write fails with EROFS, reads work; remount read-write: writes work again" {
	local fs M
	for fs in tmpfs ext4; do
		test_dir "$fs" u w mnt
		M=$T/mnt
		wmount "$M" "$T/u" "$T/w" "${LOWS[@]}"
		run_ops "$M" <<<'create new n'
		mount -o remount,ro "$M"
		mount_opts "$M"
		[[ ,$MOUNT_OPTS, == *,ro,* ]]
		run_ops "$M" <<EOF
create x x => EROFS
write new y => EROFS
openw low => EROFS
truncate low 0 => EROFS
mkdir dd => EROFS
fifo p => EROFS
symlink t s => EROFS
link low low2 => EROFS
unlink new => EROFS
unlink a => EROFS
rmdir d => EROFS
rename new n2 => EROFS
rename d dd => EROFS
chmod low 600 => EROFS
chown low 1 1 => EROFS
utimes low 1000 => EROFS
setxattr low trusted.lfs.x 1 => EROFS
tmpfile . - => EROFS
read new => n
read low => lowdata
read d/b => b
kind $T/u/low => absent
kind $T/u/x => absent
EOF
		mount -o remount,rw "$M"
		mount_opts "$M"
		[[ ,$MOUNT_OPTS, == *,rw,* ]]
		run_ops "$M" <<EOF
create x x
write new y
append low +
mkdir dd
unlink a
read low => lowdata+
read $T/u/low => lowdata+
read $T/u/new => y
EOF
		lfs_write_cleanup
	done
}

@test "fsync, fdatasync and syncfs succeed through the mount and the data is in the upper file" {
	local fs M
	for fs in tmpfs ext4; do
		test_dir "$fs" u w mnt
		M=$T/mnt
		wmount "$M" "$T/u" "$T/w" "${LOWS[@]}"
		run_ops "$M" <<EOF
create f1
write f1 data1
sync f1
append low +s
sync low
pwrite d/b 0 B
sync d/b
cd $T/u
read f1 => data1
read low => lowdata+s
read d/b => B
EOF
		lfs_write_cleanup
	done
}

# overlay_case MNT DATA: mount2 of the kernel's overlay with DATA on MNT,
# in OVERLAY_OUT ("mount: ok" or "mount: ERRNO"); unmounted again, and a
# volatile mark it left removed
overlay_case() {
	OVERLAY_OUT=$("$PROBE" mount2 overlay "$1" "$2")
	if [ "$OVERLAY_OUT" = "mount: ok" ]; then
		umount "$1"
	fi
	# (a volatile mount's mark; a test, not an rm, for the others)
	[ ! -e "$T/ow/work/incompat" ] || rm -rf "$T/ow/work/incompat"
}

# option_cases CASE...: each CASE is "OPTIONS|SHOWN|OVL": layerfs mounts
# with OPTIONS and /proc/mounts shows SHOWN after workdir=; with OVL "y"
# overlay mounts with them too.  Every case runs; 1 if any failed.  Run
# untraced (lfs_untraced): some 25 steps a case, 19 cases.
option_cases() {
	local c opts shown ovl out bad=0
	for c; do
		IFS='|' read -r opts shown ovl <<<"$c"
		out=$("$PROBE" mount2 layerfs "$T/mnt" "lowerdir=$LOW,upperdir=$T/u,workdir=$T/w,$opts")
		if [ "$out" != "mount: ok" ]; then
			echo "$opts: $out"
			bad=1
			continue
		fi
		mount_opts "$T/mnt"
		umount "$T/mnt"
		[ ! -e "$T/w/work/incompat" ] || rm -rf "$T/w/work/incompat"
		if [ "${MOUNT_OPTS#*,workdir="$T"/w}" != "$shown" ]; then
			echo "$opts: shows $MOUNT_OPTS, want ...$shown"
			bad=1
		fi
		overlay_case "$T/omnt" "lowerdir=$LOW,upperdir=$T/ou,workdir=$T/ow,$opts"
		if [ "$ovl" = y ] && [ "$OVERLAY_OUT" != "mount: ok" ]; then
			echo "overlay $opts: $OVERLAY_OUT"
			bad=1
		fi
	done
	return $bad
}

@test "overlay's options: each one layerfs takes mounts and shows in /proc/mounts the value in effect; overlay mounts with the same" {
	[ "$LFS_FSTYPE" = layerfs ] || skip "what layerfs shows of overlay's options"
	test_dir tmpfs u w ou ow mnt omnt
	# OPTIONS | what /proc/mounts shows after workdir= | overlay 6.1 takes it
	local cases=(
		"redirect_dir=on|,redirect_dir=on|y"
		"redirect_dir=follow|,redirect_dir=follow|y"
		"redirect_dir=off|,redirect_dir=follow|y"
		"redirect_dir=nofollow|,redirect_dir=nofollow|y"
		"index=on|,index=on|y"
		"index=off|,index=on|y"
		"xino=on|,xino=on|y"
		"xino=auto|,xino=on|y"
		"xino=off|,xino=on|y"
		"uuid=on|,uuid=off|y"
		"uuid=off|,uuid=off|y"
		"uuid=null|,uuid=off|n"
		"uuid=auto|,uuid=off|n"
		"nfs_export=off|,nfs_export=off|y"
		"metacopy=off|,metacopy=off|y"
		"metacopy=on|,metacopy=on|y"
		"default_permissions|,default_permissions|y"
		"volatile|,volatile|y"
		"metacopy=off,xino=auto,index=on,redirect_dir=on,default_permissions|,default_permissions,redirect_dir=on,index=on,xino=on,metacopy=off|y"
	)
	lfs_untraced option_cases "${cases[@]}"
	# without an upper layer there is no index, and nothing to keep volatile
	run "$PROBE" mount2 layerfs "$T/mnt" "lowerdir=$LOW,index=on,volatile,redirect_dir=nofollow"
	[ "$output" = "mount: ok" ]
	mount_opts "$T/mnt"
	[ "${MOUNT_OPTS#*,lowerdir="$LOW"}" = ",redirect_dir=nofollow,index=off" ]
	# a mount that names none of them shows none of them
	umount "$T/mnt"
	wmount "$T/mnt" "$T/u" "$T/w" "${LOWS[@]}"
	mount_opts "$T/mnt"
	[ "${MOUNT_OPTS#*,workdir="$T"/w}" = "" ]
}

@test "overlay's options layerfs cannot give are refused with EINVAL and a message that names them" {
	[ "$LFS_FSTYPE" = layerfs ] || skip "overlay takes these"
	test_dir tmpfs u w mnt
	local M="lowerdir=$LOW,upperdir=$T/u,workdir=$T/w"
	refusals \
		"$M,redirect_dir=nofollow,metacopy=on#EINVAL#metacopy=on: conflicts with redirect_dir=nofollow" \
		"$M,nfs_export=on#EINVAL#nfs_export=on: not supported \\(layerfs has no file handles\\)" \
		"$M,redirect_dir=always#EINVAL#Bad value for 'redirect_dir'" \
		"$M,index=maybe#EINVAL#Bad value for 'index'" \
		"$M,xino=yes#EINVAL#Bad value for 'xino'" \
		"$M,uuid=random#EINVAL#Bad value for 'uuid'" \
		"$M,metacopy#EINVAL#metacopy" \
		"$M,volatile=on#EINVAL#volatile"
	# fsconfig callers read the same reason
	run "$LFS_MOUNT" -v -o "$M,redirect_dir=nofollow,metacopy=on" "$T/mnt"
	echo "$output"
	[ "$status" = 32 ]
	# a conflict of two options: found when the superblock is made
	[[ $output == *"layerfs-mount: creating the superblock: Invalid argument"* ]]
	[[ $output == *"layerfs: metacopy=on: conflicts with redirect_dir=nofollow"* ]]
	run "$LFS_MOUNT" -v -o "$M,nfs_export=on" "$T/mnt"
	[ "$status" = 32 ]
	[[ $output == *"layerfs: nfs_export=on: not supported (layerfs has no file handles)"* ]]
	! mounted "$T/mnt" || false
}

# rename_modes FSTYPE MNT: for each redirect_dir= mode, what renames of a
# merged directory, a directory of one lower layer, a directory made
# through the mount and a file give on FSTYPE
rename_modes() {
	local mode want m i=0
	for mode in on follow off nofollow; do
		want=EXDEV
		m=m
		if [ $mode = on ]; then
			want=ok
			m=m2
		fi
		i=$((i + 1))
		mktree "$T/x$1$i" <<<'d u
d w
f l0/m/top t
f l0/s/one 1
f l1/m/bot b
f l1/file f'
		mount -t "$1" none "$2" -o "lowerdir=$T/x$1$i/l0:$T/x$1$i/l1,upperdir=$T/x$1$i/u,workdir=$T/x$1$i/w,redirect_dir=$mode"
		run_ops "$2" <<-OPS
			mkdir new
			create new/f n
			rename m m2 => $want
			rename s s2 => $want
			exchange new $m => $want
			exchange new $m => $want
			rename new new2
			rename file file2
			mkdir new2/sub
			rename new2/sub sub
			read $m/top => t
			read $m/bot => b
			read new2/f => n
		OPS
		umount "$2"
	done
}

@test "redirect_dir= other than on: renaming a directory with lower parts gives EXDEV, a directory made through the mount still renames; overlay does the same" {
	test_dir tmpfs mnt
	rename_modes "$LFS_FSTYPE" "$T/mnt"
	[ "$LFS_FSTYPE" = layerfs ] || return 0
	rename_modes overlay "$T/mnt"
}

@test "remount: overlay's options may be repeated, not changed; a remount that names none keeps them" {
	[ "$LFS_FSTYPE" = layerfs ] || skip "overlay 6.1 ignores the options of a remount"
	test_dir tmpfs u w u2 w2 mnt mnt2
	run "$PROBE" mount2 layerfs "$T/mnt" "lowerdir=$LOW,upperdir=$T/u,workdir=$T/w,redirect_dir=off,volatile,index=off"
	[ "$output" = "mount: ok" ]
	wmount "$T/mnt2" "$T/u2" "$T/w2" "${LOWS[@]}"
	dmesg -C
	local c m data want out bad=0
	for c in "mnt|redirect_dir=follow,volatile,index=on,xino=off,uuid=on|ok" \
		"mnt|redirect_dir=off|ok" \
		"mnt|redirect_dir=on|EINVAL" \
		"mnt|redirect_dir=nofollow|EINVAL" \
		"mnt||ok" \
		"mnt2|redirect_dir=on,index=on|ok" \
		"mnt2|redirect_dir=follow|EINVAL" \
		"mnt2|volatile|EINVAL"; do
		IFS='|' read -r m data want <<<"$c"
		out=$("$PROBE" mount2 layerfs "$T/$m" "$data" remount)
		if [ "$out" != "mount: $want" ]; then
			echo "$m remount $data: $out, want $want"
			bad=1
		fi
	done
	run dmesg
	[[ $output == *"layerfs: redirect_dir: cannot change on remount (it is follow, asked for on)"* ]]
	[[ $output == *"layerfs: redirect_dir: cannot change on remount (it is on, asked for follow)"* ]]
	[[ $output == *"layerfs: volatile: cannot be turned on by remount"* ]]
	mount -o remount,ro "$T/mnt"
	mount_opts "$T/mnt"
	[[ $MOUNT_OPTS == ro,* ]]
	[ "${MOUNT_OPTS#*,workdir="$T"/w}" = ",redirect_dir=follow,index=on,volatile" ]
	mount -o remount,rw "$T/mnt"
	mount_opts "$T/mnt"
	[[ $MOUNT_OPTS == rw,* ]]
	[ "${MOUNT_OPTS#*,workdir="$T"/w}" = ",redirect_dir=follow,index=on,volatile" ]
	mount_opts "$T/mnt2"
	[ "${MOUNT_OPTS#*,workdir="$T"/w2}" = "" ]
	return $bad
}

@test "volatile: the work directory's mark is made at mount and stays after umount; every later mount is refused with a message until it is removed; overlay reads the mark the same way" {
	test_dir tmpfs u w u2 w2 mnt
	local other=
	[ "$LFS_FSTYPE" = layerfs ] && other=overlay
	run "$PROBE" mount2 "$LFS_FSTYPE" "$T/mnt" "$(wmount_data "$LOW" "$T/u" "$T/w"),volatile"
	[ "$output" = "mount: ok" ]
	run_ops "$T/mnt" <<-OPS
		kind $T/w/work/incompat => dir
		kind $T/w/work/incompat/volatile => dir
		kind $T/w/work/incompat/volatile/dirty => file
		count $T/w/work/incompat/volatile => 1
		create new n
		append low +v
	OPS
	umount "$T/mnt"
	run_ops <<<"kind $T/w/work/incompat/volatile/dirty => file"
	# every mount of the pair is refused, volatile or not
	refusals \
		"$(wmount_data "$LOW" "$T/u" "$T/w")#EINVAL#incompat.*volatile" \
		"$(wmount_data "$LOW" "$T/u" "$T/w"),volatile#EINVAL#incompat.*volatile"
	if [ -n "$other" ]; then
		run dmesg
		[[ $output == *"layerfs: workdir \"$T/w\": work/incompat/volatile: the upper layer was mounted volatile, its writes may not have reached the disk; remove that directory to mount it again"* ]]
		# overlay refuses layerfs's mark, and layerfs overlay's
		run "$PROBE" mount2 overlay "$T/mnt" "lowerdir=$LOW,upperdir=$T/u,workdir=$T/w"
		[ "$output" = "mount: EINVAL" ]
		mount -t overlay none "$T/mnt" -o "lowerdir=$LOW,upperdir=$T/u2,workdir=$T/w2,volatile"
		umount "$T/mnt"
		run "$PROBE" mount2 layerfs "$T/mnt" "$(wmount_data "$LOW" "$T/u2" "$T/w2")"
		[ "$output" = "mount: EINVAL" ]
	fi
	# removed, the pair mounts again, and the empty incompat/ goes
	rm -r "$T/w/work/incompat/volatile"
	wmount "$T/mnt" "$T/u" "$T/w" "${LOWS[@]}"
	run_ops "$T/mnt" <<-OPS
		read new => n
		read low => lowdata+v
		count $T/w/work => 0
	OPS
	mount_opts "$T/mnt"
	[[ $MOUNT_OPTS != *volatile* ]]
}

# delalloc FILE: whether ext4 holds data of FILE in memory only (extents
# flagged "delalloc": not written yet), in DELALLOC (yes or no)
delalloc() {
	local out
	out=$(filefrag -v "$1")
	DELALLOC=no
	if [[ $out == *delalloc* ]]; then
		DELALLOC=yes
	fi
}

@test "volatile: fsync, fdatasync, syncfs and copy-up leave the upper file's data unwritten (ext4 delalloc); without volatile they write it" {
	test_dir ext4 vu vw u w lo mnt
	head -c 20000 /dev/zero >"$T/lo/big"
	local expire
	expire=$(cat /proc/sys/vm/dirty_expire_centisecs)
	# no periodic writeback of what the test leaves dirty
	echo 360000 >/proc/sys/vm/dirty_expire_centisecs
	# the volatile mount first: the other one's syncfs writes every file
	run "$PROBE" mount2 "$LFS_FSTYPE" "$T/mnt" "$(wmount_data "$T/lo" "$T/vu" "$T/vw"),volatile"
	[ "$output" = "mount: ok" ]
	run_ops "$T/mnt" <<-OPS
		create f1 data1
		sync f1
		chmod big 600
		sync big
	OPS
	delalloc "$T/vu/f1"
	local f1=$DELALLOC
	delalloc "$T/vu/big"
	local big=$DELALLOC
	umount "$T/mnt"
	rm -r "$T/vw/work/incompat"
	wmount "$T/mnt" "$T/u" "$T/w" "$T/lo"
	run_ops "$T/mnt" <<-OPS
		create f1 data1
		sync f1
		chmod big 600
	OPS
	delalloc "$T/u/f1"
	local f1sync=$DELALLOC
	delalloc "$T/u/big"
	echo "$expire" >/proc/sys/vm/dirty_expire_centisecs
	[ "$f1 $big" = "yes yes" ]
	[ "$f1sync $DELALLOC" = "no no" ]
}

@test "the lower layers are unchanged by the mounts, refusals and writes of this file" {
	local fs
	for fs in tmpfs ext4; do
		lfs_base "$fs"
		diff -u "$BATS_FILE_TMPDIR/lower-$fs" <("$PROBE" meta "$LFS_BASE/mount-lowers")
	done
}
