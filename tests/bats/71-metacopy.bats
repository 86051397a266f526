#!/usr/bin/env bats
# Metadata-only copy-up (metacopy=on; off by default): chmod, chown, utimes,
# setxattr and setfacl of a lower regular file copy up its metadata only:
# an upper file with the metacopy marker and no data blocks, whose reads
# go to the data below, and whose st_blocks are the data's.  The data
# follows at the first open for write, truncate, rename or link, filled in
# place with the marker removed last.  A metacopy file survives remount
# and the upper layer becoming a lower one.  Each test runs the same steps
# on layerfs and on the kernel's overlay with metacopy=on (redirect_dir=on,
# index=on), over the same lower layers, and wants the same results.
#
# Hostile layers: a metacopy marker in a lower layer leads only to what
# the lookup of the same path finds below it (never past a whiteout or an
# opaque directory, never elsewhere), and only to data of its own size
# (else the layers below changed since the copy-up); with metacopy=off
# (the default, with userxattr too) a metacopy file is refused (EPERM) as
# overlay refuses it.  With userxattr and metacopy=on (which overlay refuses)
# the data is read only when the mounter may: 88-userns.

load lib
load lib-write

MCX=trusted.overlay.metacopy

# the lower layers, top first: a 1 MiB file per trigger, a tree for
# chown -R, a hard-linked file, an empty one
mc_spec() {
	local i
	echo "d L0/d"
	echo "f L0/top t"
	for i in chmod chown utimes setx acl wr app trunc otrunc ren link rd; do
		echo "F L1/d/$i 1048576"
	done
	echo "f L1/d/fd old-data"
	echo "f L1/d/empty"
	echo "F L1/d/hard 1048576"
	echo "h L1/d/hard2 L1/d/hard"
	echo "F L1/dir/in 1048576"
	for i in 1 2 3 4 5 6 7 8; do
		echo "F L1/tree/a$i/f 262144"
		echo "F L1/tree/a$i/b/g 131072"
	done
}

# The lower layers of mc_spec on ext4, made once: every test but two
# mounts them as they are (writes go to its uppers), and making and
# removing their 16 MiB took seconds a test under TCG
MC_LOWERS=$LFS_EXT4/71-lowers

setup_file() {
	rm -rf "$MC_LOWERS"
	mkdir -p "$MC_LOWERS"
	mc_spec | mktree "$MC_LOWERS"
}

teardown_file() {
	rm -rf "$MC_LOWERS"
}

# mc_setup FS [own]: a work directory on FS, and in LOWERS the lower
# layers L0:L1 on FS: on ext4 the shared ones, on tmpfs (one test), or
# with "own" (a test that changes them), its own in $WORK
mc_setup() {
	local l=$MC_LOWERS
	lfs_workdir "$1"
	if [ "$1" != ext4 ] || [ "${2:-}" = own ]; then
		mc_spec | mktree "$WORK"
		l=$WORK
	fi
	LOWERS=$l/L0:$l/L1
}

# mc_mount TYPE NAME [OPTS] [LOWERS]: mount TYPE (layerfs or overlay) on
# $WORK/NAME/m with its own upper $WORK/NAME/u, with metacopy=on unless
# OPTS say metacopy (overlay: with redirect_dir=on and index=on)
mc_mount() {
	local type=$1 n=$2 extra=${3:-} lowers=${4:-$LOWERS} opts
	mkdir -p "$WORK/$n/u" "$WORK/$n/w" "$WORK/$n/m"
	opts="lowerdir=$lowers,upperdir=$WORK/$n/u,workdir=$WORK/$n/w"
	[ "$type" = overlay ] && opts+=",redirect_dir=on,index=on"
	[[ $extra == *metacopy* ]] || opts+=",metacopy=on"
	mount -t "$type" none "$WORK/$n/m" -o "$opts$extra"
}

# mc_both [MNT-SUFFIX] <<<SCRIPT: the ops SCRIPT in layerfs's mount
# ($WORK/lfs/m) and in overlay's ($WORK/ovl/m); the same results wanted
mc_both() {
	local s lo oo
	s=$(cat)
	lo=$("$PROBE" ops "$WORK/lfs/m$1" <<<"$s") || { echo "$lo"; return 1; }
	oo=$("$PROBE" ops "$WORK/ovl/m$1" <<<"$s") || { echo "$oo"; return 1; }
	echo "$lo"
	same_text "layerfs and overlay" "$oo" "$lo"
}

# mc_dumps [SUB] [EXCLUDE]: the mounts' dumps agree (lfs-probe dump -x
# overlay,EXCLUDE: after writes, blocks and mtimes, which the xattr blocks
# of the upper files and the time of each write make differ)
mc_dumps() {
	local lo oo x=overlay${2:+,$2}
	lo=$("$PROBE" dump -x "$x" "$WORK/lfs/m${1:-}")
	oo=$("$PROBE" dump -x "$x" "$WORK/ovl/m${1:-}")
	same_text "dumps of layerfs and overlay" "$oo" "$lo"
}

teardown() {
	lfs_cleanup
}

@test "chmod, chown, utimes, setxattr and setfacl copy up metadata only; reads, st_blocks and st_ino are the data's" {
	local fs t
	for fs in tmpfs ext4; do
		echo "# $fs"
		mc_setup "$fs"
		mc_mount layerfs lfs
		mc_mount overlay ovl
		mc_both <<EOF
ino d/chmod => @i1
hash d/chmod => @h1
blocks d/chmod => @b1
chmod d/chmod 600
chown d/chown 1234 5678
utimes d/utimes 1500000000
setxattr d/setx trusted.lfs.x vx
ino d/chmod => @i1
hash d/chmod => @h1
blocks d/chmod => @b1
mode d/chmod => 600
owner d/chown => 1234:5678
mtime d/utimes => 1500000000
getxattr d/setx trusted.lfs.x => vx
size d/setx => 1048576
EOF
		setfacl -m u:1000:rw "$WORK/lfs/m/d/acl"
		setfacl -m u:1000:rw "$WORK/ovl/m/d/acl"
		mc_dumps /d
		# the upper copies: the marker, no data blocks (the lower file
		# has 256 4 KiB blocks), the data's size as a hole
		for t in chmod chown utimes setx acl; do
			run_ops "$WORK/lfs/u/d" <<EOF
getxattr $t $MCX => !ENODATA
blocks $t => <=8
size $t => 1048576
EOF
		done
		# overlay's upper looks the same
		run_ops "$WORK/ovl/u/d" <<<"getxattr chmod $MCX => !ENODATA"
		# the mount shows no marker
		run_ops "$WORK/lfs/m/d" <<<"getxattr chmod $MCX => EOPNOTSUPP"
		lfs_cleanup
	done
}

@test "an open for write, append, truncate and O_TRUNC copy the data up, in place, marker last; a read fd opened before sees the writes" {
	local t h
	mc_setup ext4
	mc_mount layerfs lfs
	mc_mount overlay ovl
	mc_both <<EOF
chmod d/wr 600
chmod d/app 600
chmod d/trunc 600
chmod d/otrunc 600
chmod d/fd 600
EOF
	# metadata-only copies so far
	for t in wr app trunc otrunc fd; do
		run_ops "$WORK/lfs/u/d" <<<"getxattr $t $MCX => !ENODATA"
	done
	mc_both <<EOF
ino d/wr => @iw
fdopen 1 d/fd r
pwrite d/wr 4096 XY
append d/app ZZ
truncate d/trunc 10
write d/otrunc new
ino d/wr => @iw
hash d/wr => @hw
size d/app => 1048578
size d/trunc => 10
read d/otrunc => new
mode d/wr => 600
pwrite d/fd 0 NEW
fdread 1 => NEW-data
fdclose 1
EOF
	for t in wr app trunc otrunc fd; do
		run_ops "$WORK/lfs/u/d" <<EOF
getxattr $t $MCX => ENODATA
mode $t => 600
EOF
	done
	h=$(run_ops "$WORK/ovl/u/d" <<<"hash wr")
	run_ops "$WORK/lfs/u/d" <<EOF
blocks wr => !0
hash wr => ${h##*: }
EOF
	mc_dumps /d blocks,mtime
	run_ops "$WORK/lfs/u" <<<"count $WORK/lfs/w/work => 0"
}

@test "rename and link of a metacopy file copy its data first; a renamed directory keeps its metacopy files" {
	mc_setup ext4
	mc_mount layerfs lfs
	mc_mount overlay ovl
	mc_both <<EOF
hash d/ren => @hr
chmod d/ren 600
chmod d/link 600
chmod dir/in 600
rename d/ren d/ren2
link d/link d/link2
rename dir dir2
hash d/ren2 => @hr
hash d/link2 => @hr
hash dir2/in => @hr
mode dir2/in => 600
sameino d/link d/link2
EOF
	run_ops "$WORK/lfs/u" <<EOF
getxattr d/ren2 $MCX => ENODATA
getxattr d/link $MCX => ENODATA
getxattr dir2/in $MCX => !ENODATA
blocks d/ren2 => !0
blocks dir2/in => <=8
EOF
	mc_dumps "" blocks,mtime
}

@test "a metacopy file survives a remount and the upper layer becoming a lower one" {
	local m
	mc_setup ext4 own
	mc_mount layerfs lfs
	mc_mount overlay ovl
	mc_both <<EOF
ino d/rd => @ir
chmod d/rd 604
chmod dir/in 604
EOF
	m=$(run_ops "$WORK/lfs/m" <<<"hash d/rd")
	m=${m##*: }
	umount "$WORK/lfs/m" "$WORK/ovl/m"
	mc_mount layerfs lfs
	mc_mount overlay ovl
	mc_both <<EOF
hash d/rd => $m
mode d/rd => 604
ino d/rd => @ir
blocks d/rd => !0
EOF
	umount "$WORK/lfs/m" "$WORK/ovl/m"
	# the upper layers as the top lower layers of new mounts: overlay
	# with metacopy=on follows a lower metacopy file, and so does layerfs
	mv "$WORK/lfs" "$WORK/lfs-1"
	mv "$WORK/ovl" "$WORK/ovl-1"
	mc_mount layerfs lfs "" "$WORK/lfs-1/u:$LOWERS"
	mc_mount overlay ovl "" "$WORK/ovl-1/u:$LOWERS"
	mc_both <<EOF
hash d/rd => $m
mode d/rd => 604
blocks d/rd => !0
hash dir/in => $m
chmod d/rd 644
hash d/rd => $m
append dir/in +
size dir/in => 1048577
EOF
	run_ops "$WORK/lfs/u" <<EOF
getxattr d/rd $MCX => !ENODATA
blocks d/rd => <=8
getxattr dir/in $MCX => ENODATA
EOF
	mc_dumps "" blocks,mtime
	# the layer below changed offline (a new image under an old upper
	# layer, which overlay calls undefined): data of another size is not
	# shown under the metacopy file's, on layerfs (overlay shows it)
	umount "$WORK/lfs/m"
	echo more >>"$WORK/L1/d/rd"
	mc_mount layerfs lfs "" "$WORK/lfs-1/u:$LOWERS"
	run_ops "$WORK/lfs/m" <<EOF
read d/rd => EIO
mode d/rd => EIO
hash d/chmod => !EIO
EOF
	dmesg | grep -q "layerfs: .*rd: metacopy file of 1048576 bytes over data of 1048581 (stale or forged)"
}

@test "chmod -R and chown -R of a tree copy no data; hard links and empty files are copied whole" {
	local lo up
	mc_setup ext4
	mc_mount layerfs lfs
	chown -R 1000:1000 "$WORK/lfs/m/tree"
	chmod -R go-r "$WORK/lfs/m/tree"
	lo=$(du -sk "${LOWERS##*:}/tree" | cut -f1)
	up=$(du -sk "$WORK/lfs/u/tree" | cut -f1)
	echo "lower $lo KiB, upper $up KiB"
	[ "$lo" -ge 3072 ]
	[ "$up" -le 200 ]
	[ "$(find "$WORK/lfs/u/tree" -type f | wc -l)" = 16 ]
	find "$WORK/lfs/u/tree" -type f -exec getfattr -n "$MCX" {} + >/dev/null
	# the mount shows the data's blocks, as du counts them
	[ "$(du -sk "$WORK/lfs/m/tree" | cut -f1)" -ge 3072 ]
	run_ops "$WORK/lfs" <<EOF
chmod m/d/hard 600
chmod m/d/empty 600
getxattr u/d/hard $MCX => ENODATA
getxattr u/d/empty $MCX => ENODATA
blocks u/d/hard => !0
sameino m/d/hard m/d/hard2
mode m/d/hard2 => 600
EOF
}

@test "metacopy=off copies whole files, shows in /proc/mounts, and refuses a metacopy file (EPERM) as overlay does" {
	mc_setup ext4
	mc_mount layerfs lfs
	mc_mount overlay ovl
	mc_both <<<"chmod d/chmod 600"
	umount "$WORK/lfs/m" "$WORK/ovl/m"
	mc_mount layerfs lfs ,metacopy=off
	mc_mount overlay ovl ,metacopy=off
	grep -q " $WORK/lfs/m layerfs .*,metacopy=off" /proc/mounts
	mc_both <<EOF
hash d/chmod => EPERM
mode d/chmod => EPERM
hash d/chown => @hc
chmod d/chown 600
hash d/chown => @hc
EOF
	run_ops "$WORK/lfs/u" <<EOF
getxattr d/chown $MCX => ENODATA
blocks d/chown => !0
EOF
	# the default is off, as overlay's, shown only when given
	umount "$WORK/lfs/m"
	mount -t layerfs none "$WORK/lfs/m" \
		-o "lowerdir=$LOWERS,upperdir=$WORK/lfs/u,workdir=$WORK/lfs/w"
	! grep -q " $WORK/lfs/m layerfs .*metacopy" /proc/mounts || false
	run_ops "$WORK/lfs/m" <<<"mode d/chmod => EPERM"
	# and cannot change on remount
	run mount -o remount,metacopy=on "$WORK/lfs/m"
	[ "$status" != 0 ]
	mount -o remount,metacopy=off "$WORK/lfs/m"
}

@test "hostile metacopy markers in a lower layer expose nothing a whiteout, an opaque directory or the layer stack hid" {
	local a
	lfs_workdir ext4
	# L0, the attacker's: metacopy files of mode 0644 over what L1 hides
	# (a whiteout, an opaque directory) or not at all (the bottom layer),
	# one with a value that names a path, one with a redirect
	mktree "$WORK" <<EOF
f L0/wh 0
m L0/wh 644
a L0/wh $MCX 0x
f L0/o/secret
m L0/o/secret 644
a L0/o/secret $MCX 0x
f L0/path
a L0/path $MCX 0x2f6574632f736861646f77
f L0/redir
a L0/redir $MCX 0x
a L0/redir trusted.overlay.redirect /o/secret
T L0/open 11
m L0/open 644
a L0/open $MCX 0x
f L0/stale
m L0/stale 644
a L0/stale $MCX 0x
f L0/dir
a L0/dir $MCX 0x
w L1/wh
o L1/o
f L1/redir
f L2/wh secret-wh
f L2/o/secret secret-opaque
f L2/path secret-path
d L2/dir
f L2/open secret-open
f L2/stale secret-stale
f L2/redir secret-redir
EOF
	chmod 600 "$WORK"/L2/*/secret "$WORK"/L2/wh "$WORK"/L2/open "$WORK"/L2/stale
	LOWERS=$WORK/L0:$WORK/L1:$WORK/L2
	mc_mount layerfs lfs
	mc_mount overlay ovl
	# a whiteout or an opaque directory between the marker and the data,
	# or a directory below: no data (EIO); an open metacopy file shows
	# the data below with its own metadata, as overlay does (the
	# mounter's choice of metacopy=on over layers it trusts)
	mc_both <<EOF
read wh => EIO
read o/secret => EIO
read dir => EIO
read open => secret-open
EOF
	# what overlay 6.1 would follow, layerfs refuses: a value, a
	# redirect, data of another size than the metacopy file (the layers
	# below changed since the copy-up, or a careless forgery: overlay
	# shows those bytes under the metacopy file's size)
	run_ops "$WORK/lfs/m" <<EOF
read path => EIO
read redir => EIO
read stale => EIO
EOF
	run_ops "$WORK/ovl/m" <<<"read stale => secret-stale"
	a=$(dmesg | grep -c "layerfs: .*metacopy" || :)
	[ "$a" -ge 3 ]
	dmesg | grep -q "layerfs: .*stale: metacopy file of 0 bytes over data of 12 (stale or forged)"
	# metacopy=off: the marker is refused wherever met (overlay: EPERM
	# when there is data below)
	umount "$WORK/lfs/m" "$WORK/ovl/m"
	mc_mount layerfs lfs ,metacopy=off
	mc_mount overlay ovl ,metacopy=off
	mc_both <<<"read open => EPERM"
	run_ops "$WORK/lfs/m" <<EOF
read wh => EPERM
read o/secret => EPERM
EOF
}

@test "userxattr: metacopy is off unless given (a forged user.overlay.metacopy is refused, EPERM, as on overlay); metacopy=on, which overlay refuses there, is refused outside a user namespace too" {
	lfs_workdir ext4
	mktree "$WORK" <<EOF
f L0/f
a L0/f user.overlay.metacopy 0x
f L1/f secret
EOF
	mkdir -p "$WORK/u" "$WORK/w" "$WORK/m"
	mount -t layerfs none "$WORK/m" -o "lowerdir=$WORK/L0:$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w,userxattr"
	! grep -q " $WORK/m layerfs .*metacopy" /proc/mounts || false
	run_ops "$WORK/m" <<<"read f => EPERM"
	umount "$WORK/m"
	mount -t overlay none "$WORK/m" -o "lowerdir=$WORK/L0:$WORK/L1,userxattr"
	run_ops "$WORK/m" <<<"read f => EPERM"
	umount "$WORK/m"
	run mount -t overlay none "$WORK/m" -o "lowerdir=$WORK/L0:$WORK/L1,userxattr,metacopy=on"
	[ "$status" != 0 ]
	# and layerfs as root outside a user namespace: root may read all,
	# and anyone who may write a layer's file may mark it (a mounter in a
	# user namespace, whose reach bounds what a marker shows: 88-userns)
	log_mark "t$BATS_TEST_NUMBER-mc"
	run mount -t layerfs none "$WORK/m" -o "lowerdir=$WORK/L0:$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w,userxattr,metacopy=on"
	[ "$status" != 0 ]
	log_since "t$BATS_TEST_NUMBER-mc" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: metacopy=on: with userxattr only in a user namespace"* ]]
	[ "$(lfs_mounts_under "$WORK/m")" = "" ]
}
