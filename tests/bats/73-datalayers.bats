#!/usr/bin/env bats
# Data-only lower layers and the data pointer (overlay 6.5's format,
# docs/read-side.md "Data-only layers"): lowerdir=L0:L1::D0::D1, or the
# fsconfig keys lowerdir+ then datadir+, with metacopy=on.  A data-only
# layer is never merged, listed or looked up by name; a metacopy file of
# a regular lower layer with an absolute trusted.overlay.redirect finds
# its data at that path in the data-only layers, the first in mount order
# that holds a regular file without the marker there.  The metadata
# layers here are made by hand, as composefs makes them: sparse files of
# the data's size with the two xattrs.
#
# The kernel's overlay of 6.1 has no data-only layers: it refuses the
# syntax (an empty layer), which the first test shows; the hostile rows
# give overlay 6.1's answer to the same markers where it has one.

load lib
load lib-write

MCX=trusted.overlay.metacopy
RDX=trusted.overlay.redirect

teardown() {
	lfs_cleanup
}

# dl_spec: the metadata layer M (metacopy files f1, f2 and sub/f4 point at
# /ab/obj1, f3 at /cd/obj2, f5 at a plain path), a regular lower layer R
# below it, the data-only layers D0 and D1: /ab/obj1 in both (D0's
# first), /cd/obj2 in D1 only.  Sizes make the contents differ.
dl_spec() {
	local f
	echo "F D0/ab/obj1 65536"
	echo "F D1/ab/obj1 65537"
	echo "F D1/cd/obj2 40000"
	echo "f R/r r"
	for f in f1 f2 sub/f4; do
		echo "T M/$f 65536"
		echo "a M/$f $MCX 0x"
		echo "a M/$f $RDX /ab/obj1"
	done
	echo "m M/f1 640"
	echo "u M/f1 1234 5678"
	echo "T M/f3 40000"
	echo "a M/f3 $MCX 0x"
	echo "a M/f3 $RDX /cd/obj2"
	echo "f M/plain p"
	echo "d U"
	echo "d W"
}

# dl_setup FS: the layers of dl_spec on FS in $WORK; DL the lowerdir= list
dl_setup() {
	lfs_workdir "$1"
	dl_spec | mktree "$WORK"
	DL="$WORK/M:$WORK/R::$WORK/D0::$WORK/D1"
}

@test "lowerdir=L::D::D and lowerdir+/datadir+ mount and show as :: in /proc/mounts; misuse is refused with a reason; overlay 6.1 refuses the syntax" {
	dl_setup tmpfs
	local W=$WORK
	local cases=(
		# data | errno | kernel log message
		"lowerdir=::$W/D0|EINVAL|lowerdir=: \"::\" first"
		"lowerdir=$W/M::$W/D0:$W/D1,metacopy=on|EINVAL|lowerdir=: ':' after \"::\""
		"lowerdir=$W/M:::$W/D0,metacopy=on|EINVAL|empty layer in lowerdir="
		"lowerdir=$W/M::,metacopy=on|EINVAL|empty layer in lowerdir="
		"lowerdir=$W/M::$W/D0|EINVAL|data-only layers need metacopy=on"
		"lowerdir=$W/M::$W/D0,metacopy=off|EINVAL|data-only layers need metacopy=on"
		"datadir+=$W/D0,metacopy=on|EINVAL|data-only layers need a regular lower layer above them"
		"lowerdir+=$W/M,datadir+=$W/D0,lowerdir+=$W/R,metacopy=on|EINVAL|lowerdir+ cannot follow datadir+"
		"lowerdir=$W/M,datadir+=$W/D0,metacopy=on|EINVAL|datadir+ cannot follow lowerdir="
		"datadir+=$W/D0,lowerdir=$W/M,metacopy=on|EINVAL|lowerdir= cannot follow lowerdir+ or datadir+"
		"lowerdir=$W/M::$W/none,metacopy=on|ENOENT|data-only layer \"$W/none\": cannot resolve"
		"lowerdir=$W/D0::$W/D0/ab,metacopy=on|ELOOP|data-only layer \"$W/D0/ab\" is inside lower layer \"$W/D0\""
		"lowerdir=$W/D0/ab::$W/D0,metacopy=on|ELOOP|lower layer \"$W/D0/ab\" is inside data-only layer \"$W/D0\""
		"lowerdir=$W/M:$W/R::$W/R,metacopy=on|ELOOP|data-only layer \"$W/R\" is also lower layer \"$W/R\""
		"lowerdir=$W/M::$W/D0::$W/D0,metacopy=on|ELOOP|data-only layer \"$W/D0\" is also data-only layer \"$W/D0\""
		"lowerdir=$W/M::$W/D0,upperdir=$W/D0/ab,workdir=$W/W,metacopy=on|ELOOP|upperdir or workdir overlaps data-only layer \"$W/D0\""
	)
	expect_mount_refusals "${cases[@]}"
	run grep -q " $W/mnt " /proc/mounts
	[ "$status" = 1 ]
	# accepted, by mount(2) and by fsconfig (layerfs-mount: lowerdir+
	# and datadir+, from a :: list or given one by one)
	mount -t layerfs none "$W/mnt" -o "lowerdir=$DL,metacopy=on"
	opts_of "$W/mnt"
	[ "$OPTS" = "ro,relatime,lowerdir=$DL,metacopy=on" ]
	umount "$W/mnt"
	"$LFS_MOUNT" -o "lowerdir=$DL,metacopy=on" "$W/mnt"
	opts_of "$W/mnt"
	[ "$OPTS" = "ro,relatime,lowerdir=$DL,metacopy=on" ]
	umount "$W/mnt"
	"$LFS_MOUNT" -l "$W/M" -l "$W/R" -o "datadir+=$W/D0,datadir+=$W/D1,metacopy=on" "$W/mnt"
	opts_of "$W/mnt"
	[ "$OPTS" = "ro,relatime,lowerdir=$DL,metacopy=on" ]
	umount "$W/mnt"
	# a :: list given by descriptor: the same
	"$LFS_MOUNT" --by-fd -o "lowerdir=$DL,metacopy=on" "$W/mnt"
	opts_of "$W/mnt"
	[ "$OPTS" = "ro,relatime,lowerdir=$DL,metacopy=on" ]
	umount "$W/mnt"
	# the reference: overlay 6.1 takes "::" for an empty layer
	run "$PROBE" mount2 overlay "$W/mnt" "lowerdir=$DL,metacopy=on"
	[ "$output" = "mount: EINVAL" ]
}

@test "a metadata layer over two data-only layers: reads from the first that holds the object, stat from the metacopy file with the data's st_blocks, no data-layer name in listings or lookups" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		dl_setup "$fs"
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,metacopy=on"
		run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash $WORK/D1/cd/obj2 => @h2
blocks $WORK/D0/ab/obj1 => @b1
blocks $WORK/D1/cd/obj2 => @b2
hash f1 => @h1
hash f2 => @h1
hash sub/f4 => @h1
hash f3 => @h2
size f1 => 65536
mode f1 => 640
owner f1 => 1234:5678
mode f2 => 644
blocks f1 => @b1
blocks f3 => @b2
read plain => p
read r => r
count . => 6
kind ab => absent
kind cd => absent
kind obj1 => absent
kind ab/obj1 => absent
EOF
		# the metacopy files have no blocks of their own
		run_ops "$WORK/M" <<<'blocks f1 => 0'
		run ls -A "$WORK/mnt"
		[ "$output" = "$(printf '%s\n' f1 f2 f3 plain r sub)" ]
		lfs_cleanup
	done
}

@test "two metacopy files that point at one object read through the same real inode (one page cache), the first data-only layer's" {
	dl_setup ext4
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,metacopy=on"
	local o1 o1b f1 f2 f4
	# the object's own mapping: its device and inode
	o1=$(run_ops <<<"mapino $WORK/D0/ab/obj1")
	o1b=$(run_ops <<<"mapino $WORK/D1/ab/obj1")
	f1=$(run_ops <<<"mapino $WORK/mnt/f1")
	f2=$(run_ops <<<"mapino $WORK/mnt/f2")
	f4=$(run_ops <<<"mapino $WORK/mnt/sub/f4")
	echo "D0 $o1, D1 $o1b, f1 $f1, f2 $f2, f4 $f4"
	[[ $o1 == "mapino "*": "[0-9a-f]*:* ]]
	[ "$o1" != "$o1b" ]
	[ "${f1#*: }" = "${o1#*: }" ]
	[ "${f2#*: }" = "${o1#*: }" ]
	[ "${f4#*: }" = "${o1#*: }" ]
	# the extents FIEMAP gives are the object's
	run_ops "$WORK/mnt" <<EOF
fiemap $WORK/D0/ab/obj1 => @e1
fiemap f1 => @e1
fiemap f2 => @e1
EOF
	# and the pages read through one name are the object's: cached
	# once, found through the other name and the object itself
	# (dirty pages stay cached: the layers were just written)
	sync
	echo 1 >/proc/sys/vm/drop_caches
	run_ops "$WORK/mnt" <<<'hash f1'
	run fincore --noheadings --output PAGES "$WORK/D0/ab/obj1"
	echo "D0's object: $output pages cached"
	[ "${output// /}" = 16 ]
	run fincore --noheadings --output PAGES "$WORK/D1/ab/obj1"
	echo "D1's object: $output pages cached"
	[ "${output// /}" = 0 ]
}

@test "chmod and chown through a writable mount make upper metacopy files without a redirect that read the data; an append fills one; remount and the upper layer as a lower one show the same" {
	local fs
	for fs in tmpfs ext4; do
		echo "# $fs"
		dl_setup "$fs"
		local up="upperdir=$WORK/U,workdir=$WORK/W"
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,$up,metacopy=on"
		run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash $WORK/D1/cd/obj2 => @h2
chmod f1 600
chown f3 42 43
chmod f2 604
mode f1 => 600
owner f3 => 42:43
hash f1 => @h1
hash f3 => @h2
hash f2 => @h1
EOF
		# metadata only, and no redirect: the lower pointer file leads
		run_ops "$WORK/U" <<EOF
getxattr f1 $MCX => !ENODATA
getxattr f1 $RDX => ENODATA
getxattr f3 $RDX => ENODATA
blocks f1 => <=8
blocks f3 => <=8
EOF
		local o1 f1 want
		o1=$(run_ops <<<"mapino $WORK/D0/ab/obj1")
		f1=$(run_ops <<<"mapino $WORK/mnt/f1")
		[ "${f1#*: }" = "${o1#*: }" ]
		# an append fills f2 with its data, the object stays as it was
		run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
append f2 XYZ
size f2 => 65539
hash f2 => @h2x
hash $WORK/D0/ab/obj1 => @h1
EOF
		run_ops "$WORK/U" <<EOF
getxattr f2 $MCX => ENODATA
size f2 => 65539
EOF
		cmp -n 65536 "$WORK/U/f2" "$WORK/D0/ab/obj1"
		# remount: the same (the checks again after the rotation below)
		want="hash $WORK/D0/ab/obj1 => @h1
hash $WORK/D1/cd/obj2 => @h2
mode f1 => 600
hash f1 => @h1
owner f3 => 42:43
hash f3 => @h2
size f2 => 65539"
		umount "$WORK/mnt"
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,$up,metacopy=on"
		run_ops "$WORK/mnt" <<<"$want"
		umount "$WORK/mnt"
		# the upper layer as a lower one over the metadata layer
		mount -t layerfs none "$WORK/mnt" \
			-o "lowerdir=$WORK/U:$WORK/M:$WORK/R::$WORK/D0::$WORK/D1,metacopy=on"
		run_ops "$WORK/mnt" <<<"$want"
		f1=$(run_ops <<<"mapino $WORK/mnt/f1")
		[ "${f1#*: }" = "${o1#*: }" ]
		lfs_cleanup
	done
}

# Hostile pointers: each row is a metacopy file h/NAME in M whose
# redirect is VALUE ("0x..." in hex), what else the layers hold (mktree
# lines, ";" between them), the errno (or the content) a read of it
# through layerfs gives, and the reference: overlay 6.1 has no data-only
# layers, it refuses the syntax.  The relative one would lead to D0/obj
# if its first byte were skipped unchecked; the one with a NUL to
# /ab/obj1 if read up to the NUL; the name over NAME_MAX would fail the
# lookup (ENAMETOOLONG) rather than the pointer (EIO).  What D0 cannot
# give (a file in the middle of the path, a metacopy file) D1 gives.  A
# row's metacopy file is as large as the content it must read (a
# metacopy file is its data's size), else 64 KiB.
#   name | redirect | setup | layerfs | overlay 6.1
LONGNAME=$(printf '%0256d' 0)
HOSTILE=(
	"dotdot|/ab/../ab/obj1||EIO|refuses the syntax"
	"escape|/../D0/ab/obj1||EIO|refuses the syntax"
	"relative|xobj|f D0/obj rel|EIO|refuses the syntax"
	"nul|0x2f61622f6f626a3100||EIO|refuses the syntax"
	"name-max|/$LONGNAME||EIO|refuses the syntax"
	"middle-file|/nd/obj|f D0/nd x;f D1/nd/obj d1obj|d1obj|refuses the syntax"
	"empty-name|/ab//obj1||EIO|refuses the syntax"
	"trailing|/ab/obj1/||EIO|refuses the syntax"
	"symdir|/sl/obj1|l D0/sl ab|EIO|refuses the syntax"
	"symlast|/sf|l D0/sf ab/obj1|EIO|refuses the syntax"
	"dir|/ab||EIO|refuses the syntax"
	"dev|/dev|c D0/dev 1 3|EIO|refuses the syntax"
	"missing|/zz/none||EIO|refuses the syntax"
	"metacopy-obj|/mc|T D0/mc 65536;a D0/mc $MCX 0x;f D1/mc mcdata|mcdata|refuses the syntax"
	"regular-layer|/r||EIO|refuses the syntax"
)

@test "hostile data pointers show nothing (EIO and a log line naming the file): .., relative, NUL, a name over NAME_MAX, empty names, symlinks, a directory or device, a missing object, a path only a regular layer holds; a metacopy object or a file mid-path in D0 falls through to D1; the good ones still read" {
	lfs_workdir ext4
	local r name val setup want ref size spec="" out log
	dl_spec >"$WORK/spec"
	for r in "${HOSTILE[@]}"; do
		IFS='|' read -r name val setup want ref <<<"$r"
		size=65536
		[[ $want == E* ]] || size=${#want}
		spec+="T M/h/$name $size"$'\n'"a M/h/$name $MCX 0x"$'\n'
		spec+="a M/h/$name $RDX $val"$'\n'
		[ -z "$setup" ] || spec+="${setup//;/$'\n'}"$'\n'
	done
	printf '%s' "$spec" >>"$WORK/spec"
	mktree "$WORK" <"$WORK/spec"
	dmesg -C
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/M:$WORK/R::$WORK/D0::$WORK/D1,metacopy=on"
	local bad=0
	for r in "${HOSTILE[@]}"; do
		IFS='|' read -r name val setup want ref <<<"$r"
		out=$(run_ops "$WORK/mnt" <<<"read h/$name") || true
		[ "$out" = "read h/$name: $want" ] || {
			echo "$name ($val): $out, want $want"
			bad=1
		}
	done
	[ "$bad" = 0 ]
	run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash f1 => @h1
read plain => p
count h => ${#HOSTILE[@]}
EOF
	log=$(dmesg)
	[[ $log == *"h/dotdot: invalid data pointer in layer \"$WORK/M\""* ]]
	[[ $log == *"h/relative: invalid data pointer"* ]]
	[[ $log == *"h/missing: metacopy file in layer \"$WORK/M\" without data: /zz/none is in no data-only layer"* ]]
	[[ $log == *"h/symdir: metacopy file in layer"*"/sl/obj1 is in no data-only layer"* ]]
}

@test "a redirect is a data pointer only in a lower layer of a mount with data-only layers: forged in the upper layer, or on a mount without them, it shows nothing (EIO); an upper metacopy file without an origin over a pointer file has its own inode" {
	dl_setup ext4
	mktree "$WORK" <<EOF
T U/forged 65536
a U/forged $MCX 0x
a U/forged $RDX /ab/obj1
EOF
	dmesg -C
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$DL,upperdir=$WORK/U,workdir=$WORK/W,metacopy=on"
	run_ops "$WORK/mnt" <<EOF
read forged => EIO
hash $WORK/D0/ab/obj1 => @h1
hash f1 => @h1
EOF
	run dmesg
	[[ $output == *"forged: metacopy file with a redirect in layer \"$WORK/U\": not followed"* ]]
	umount "$WORK/mnt"
	# upper metacopy files made by hand, without a redirect or an origin,
	# over two pointer files to one object: each its own inode, not the
	# object's (which many files may point at)
	rm "$WORK/U/forged"
	mktree "$WORK" <<EOF
T U/f1 65536
a U/f1 $MCX 0x
m U/f1 600
T U/f2 65536
a U/f2 $MCX 0x
m U/f2 604
EOF
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$DL,upperdir=$WORK/U,workdir=$WORK/W,metacopy=on"
	run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash f1 => @h1
hash f2 => @h1
mode f1 => 600
mode f2 => 604
ino f1 => @i1
ino f2 => @i2
ino $WORK/U/f1 => @i1
ino $WORK/U/f2 => @i2
EOF
	umount "$WORK/mnt"
	# without data-only layers a lower pointer file is refused as before
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/M:$WORK/D0,metacopy=on"
	run_ops "$WORK/mnt" <<EOF
read f1 => EIO
read plain => p
kind ab => dir
EOF
	umount "$WORK/mnt"
	# the reference: overlay 6.1 follows the lower pointer file's
	# redirect into the lower layers below it (its renamed metacopy
	# file), which layerfs never does
	mount -t overlay none "$WORK/mnt" -o "lowerdir=$WORK/M:$WORK/D0,metacopy=on,redirect_dir=follow"
	run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash f1 => @h1
EOF
}

@test "userxattr in a user namespace: a user.overlay.redirect the layer's owner wrote leads only to data the mounter may read (EACCES else, at each use; the mounter's own 0600 file reads), never through a directory it may not search, which does not hide the next data-only layer's object" {
	lfs_workdir ext4
	mktree "$WORK" <<EOF
f D0/ok/obj hello
f D0/root/obj secret
f D0/closed/obj hidden
T M/ok 5
a M/ok user.overlay.metacopy 0x
a M/ok user.overlay.redirect /ok/obj
T M/stolen 6
a M/stolen user.overlay.metacopy 0x
a M/stolen user.overlay.redirect /root/obj
T M/closed 6
a M/closed user.overlay.metacopy 0x
a M/closed user.overlay.redirect /closed/obj
f D0/c2/obj hidden
f D1/c2/obj second
T M/closed2 6
a M/closed2 user.overlay.metacopy 0x
a M/closed2 user.overlay.redirect /c2/obj
f D0/mine/obj mine
T M/mine 4
a M/mine user.overlay.metacopy 0x
a M/mine user.overlay.redirect /mine/obj
d u
d w
EOF
	chown -R 1000:1000 "$WORK/M" "$WORK/u" "$WORK/w" "$WORK/mnt" "$WORK/D0/ok"
	chmod 0600 "$WORK/D0/root/obj"
	chmod 0700 "$WORK/D0/closed" "$WORK/D0/c2"
	# the mounter's own file that only it may read: the bound is the
	# mounter's read, so a pointer to it reads
	chown 1000:1000 "$WORK/D0/mine/obj"
	chmod 0600 "$WORK/D0/mine/obj"
	W=$WORK
	export W PROBE
	# closed2: a directory of D0 the mounter may not search does not
	# hide D1's object (overlay tries every data-only layer); closed,
	# in D0 alone, gives D0's error
	printf '%s\n' 'read ok => hello' 'read stolen => EACCES' \
		'blocks stolen => 0' 'owner stolen => 0:0' \
		'fiemap stolen => EACCES' 'chmod stolen 600 => EACCES' \
		'read closed => EACCES' 'read closed2 => second' \
		'read mine => mine' 'read ok => hello' >"$W/ops"
	run setpriv --reuid=1000 --regid=1000 --clear-groups unshare -Urm sh -c '
		"$PROBE" mount2 layerfs "$W/mnt" "lowerdir=$W/M::$W/D0::$W/D1,upperdir=$W/u,workdir=$W/w,userxattr,metacopy=on" || exit 1
		"$PROBE" ops "$W/mnt" <"$W/ops"'
	echo "$output"
	[ "$status" = 0 ]
	[[ $output == "mount: ok"* ]]
	[[ $output != *FAIL* ]]
	[[ $output != *secret* ]]
	run_ops "$W/u" <<<'kind stolen => absent'
}

@test "a data pointer of PATH_MAX bytes or more is refused (EIO) even where its path exists; one byte less reads" {
	lfs_workdir tmpfs
	local n i p p15=""
	# 16 names of 255 bytes: a pointer of 16 * 256 = PATH_MAX bytes; the
	# last name one byte shorter gives PATH_MAX - 1
	n=$(printf '%0255d' 0)
	mkdir -p "$WORK/M" "$WORK/D0"
	(cd "$WORK/D0" && for i in $(seq 15); do mkdir "$n" && cd "$n" || exit 1; done &&
		printf long >"$n" && printf short >"${n%0}")
	for i in $(seq 15); do p15+="/$n"; done
	# each its data's size, as a metacopy file is
	for p in long short; do
		truncate -s ${#p} "$WORK/M/$p"
		setfattr -n "$MCX" "$WORK/M/$p"
	done
	setfattr -n "$RDX" -v "$p15/$n" "$WORK/M/long"
	setfattr -n "$RDX" -v "$p15/${n%0}" "$WORK/M/short"
	[ "$(getfattr --only-values -n "$RDX" "$WORK/M/long" | wc -c)" = 4096 ]
	dmesg -C
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/M::$WORK/D0,metacopy=on"
	run_ops "$WORK/mnt" <<EOF
read long => EIO
read short => short
EOF
	run dmesg
	[[ $output == *"long: invalid data pointer in layer \"$WORK/M\""* ]]
}

@test "two names of one lower pointer file (hard links, as composefs keeps them) stay one file with an upper layer: a write through one is read through the other after a remount, one st_ino and link count; a write through the other keeps them one" {
	dl_setup ext4
	mktree "$WORK" <<EOF
T M/p1 65536
a M/p1 $MCX 0x
a M/p1 $RDX /ab/obj1
h M/p2 M/p1
EOF
	local up="upperdir=$WORK/U,workdir=$WORK/W"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,$up,metacopy=on"
	run_ops "$WORK/mnt" <<EOF
hash $WORK/D0/ab/obj1 => @h1
hash p2 => @h1
links p1 => 2
append p1 XYZ
size p2 => 65539
hash p1 => @hw
hash p2 => @hw
hash $WORK/U/p1 => @hw
EOF
	sync
	echo 3 >/proc/sys/vm/drop_caches
	umount "$WORK/mnt"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$DL,$up,metacopy=on"
	# p2 has no upper name yet: it shows the index's copy of p1's file
	run_ops "$WORK/mnt" <<EOF
kind $WORK/U/p2 => absent
hash $WORK/U/p1 => @hw
size p2 => 65539
hash p2 => @hw
ino p1 => @i
ino p2 => @i
links p1 => 2
links p2 => 2
append p2 UVW
size p1 => 65542
hash p1 => @hv
hash p2 => @hv
ino p2 => @i
links p2 => 2
sameino $WORK/U/p1 $WORK/U/p2
EOF
}
