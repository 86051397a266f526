#!/usr/bin/env bats
# The whiteout formats (mount option whiteout=native|chardev|aufs).  With
# whiteout=aufs every layer says deletions by name: ".wh.NAME" hides NAME,
# ".wh..wh..opq" makes a directory opaque, and every ".wh." name is hidden
# and cannot be made through the mount.  The same layers read the same with
# the name index and without, and as the same stack in the native format
# (200 layers deep); deletions land in the upper layer as ".wh."
# files, and fuse-overlayfs, which reads and writes that format too, agrees
# with layerfs on what the layers show and on what the same writes leave.

bats_require_minimum_version 1.5.0
load lib
load lib-deep

teardown() {
	lfs_cleanup
}

# aufs_spec: six layers L0 (top) .. L5 in the aufs format.  usr/lib is in
# five of them (indexed), etc in three (walked in full).  Whiteouts and
# opaque directories at depths 1 to 3; L1 holds x and its whiteout (x then
# shows only L1's part); aufs's own names at the top.
aufs_spec() {
	cat <<'EOF'
f L5/etc/passwd p5
f L5/etc/group g5
f L5/etc/gone g5
f L5/usr/lib/a.so a5
f L5/usr/lib/b.so b5
f L5/usr/lib/x/deep/f f5
f L5/usr/lib/x/l5 l5
f L5/usr/share/doc/readme r5
f L5/usr/share/man/m1 m5
f L5/opt/tool/bin t5
f L5/var/cache/c1 c5
f L5/top t5
f L4/usr/lib/c.so c4
A L4/usr/lib/a.so
f L4/usr/share/doc/more m4
f L4/usr/lib/x/deep/g g4
O L3/usr/share/doc
f L3/usr/share/doc/new n3
A L3/etc/gone
A L3/usr/share/man/m1
f L3/usr/share/man/m2 m3
A L2/opt/tool
A L2/top
f L2/usr/lib/d.so d2
f L2/var/cache/c2 c2
A L1/usr/lib/x
f L1/usr/lib/x/only o1
f L1/var/cache/c3 c3
f L1/.wh..wh.plnk/junk j1
f L1/.wh..wh.aufs
f L0/usr/lib/e.so e0
A L0/usr/lib/nothing
f L0/etc/passwd p0
f L0/.wh..wh.orph/o o0
EOF
}

# what the stack shows
aufs_expected() {
	cat <<'EOF'
f etc/passwd p0
f etc/group g5
f usr/lib/b.so b5
f usr/lib/c.so c4
f usr/lib/d.so d2
f usr/lib/e.so e0
f usr/lib/x/only o1
f usr/share/doc/new n3
f usr/share/man/m2 m3
d opt
f var/cache/c1 c5
f var/cache/c2 c2
f var/cache/c3 c3
EOF
}

# paths to stat: present, whited out, hidden by an opaque directory, below a
# whited-out directory, aufs names, names in no layer
aufs_probes() {
	cat <<'EOF'
etc/passwd
etc/gone
usr/lib/a.so
usr/lib/b.so
usr/lib/nothing
usr/lib/x
usr/lib/x/deep
usr/lib/x/l5
usr/lib/x/only
usr/lib/.wh.a.so
usr/lib/miss
usr/share/doc/readme
usr/share/doc/more
usr/share/doc/.wh..wh..opq
usr/share/man/m1
usr/share/man/.wh.m1
opt/tool
opt/tool/bin
top
.wh.top
.wh..wh.plnk
.wh..wh.plnk/junk
.wh..wh.aufs
var/cache/c3
EOF
}

AUFS_LAYERS=L0:L1:L2:L3:L4:L5

# aufs_stack: the aufs_spec layers in $WORK, and $LOWER, their lowerdir=
aufs_stack() {
	aufs_spec | mktree "$WORK"
	LOWER=$WORK/${AUFS_LAYERS//:/:$WORK/}
}

# normalize_upper: an upper layer's dump as the formats compare: without
# layerfs's and overlay's trusted.overlay.* markers (the origin of a copy,
# fuse-overlayfs's opaque xattr next to its .wh..wh..opq), and with the
# modes of the .wh. files (layerfs 0600, fuse-overlayfs 0700) as "m"
normalize_upper() {
	sed -E 's/ trusted\.overlay\.[^ ]*//g; s#^(([^ ]*/)?\.wh\.[^ ]*) - [0-7]+ #\1 - m #'
}


# expect_layer DIR SPEC: DIR, an upper layer, holds what SPEC builds
# (mktree lines, paths relative to DIR), up to normalize_upper
expect_layer() {
	LFS_REF=$((${LFS_REF:-0} + 1))
	local ref=$WORK/expected-$LFS_REF
	mkdir -p "$ref/x"
	sed 's|^\([a-zA-Z]\) |\1 x/|' <<<"$2" | mktree "$ref" || return 1
	diff -u <("$PROBE" dump -p "$ref/x" | normalize_upper) \
		<("$PROBE" dump -p "$1" | normalize_upper)
}

@test "aufs layers read as their flattened tree, with and without the name index; native mounts show the .wh. files" {
	local on out
	lfs_workdir tmpfs
	aufs_stack
	mkdir "$WORK/off" "$WORK/native"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LOWER,whiteout=aufs,nameindex=eager"
	mount -t layerfs none "$WORK/off" -o "lowerdir=$LOWER,whiteout=aufs,nameindex=off"
	mount -t layerfs none "$WORK/native" -o "lowerdir=$LOWER"
	grep -q " $WORK/mnt layerfs ro,.*,nameindex=eager,whiteout=aufs" /proc/mounts
	expect_tree "$WORK/mnt" "$(aufs_expected)"
	diff -u <("$PROBE" dump "$WORK/mnt") <("$PROBE" dump "$WORK/off")
	run "$PROBE" stat $(aufs_probes | sed "s|^|$WORK/mnt/|")
	echo "$output"
	[ "$status" = 0 ]
	on=$output
	run "$PROBE" stat $(aufs_probes | sed "s|^|$WORK/off/|")
	[ "${output//$WORK\/off/$WORK/mnt}" = "$on" ]
	# spot checks: present, whited out, below a whiteout in the same
	# layer, hidden by the opaque doc/, aufs's own
	[[ ${lines[0]} == "$WORK/off/etc/passwd ino="* ]]
	[ "${lines[1]}" = "$WORK/off/etc/gone: ENOENT" ]
	[ "${lines[2]}" = "$WORK/off/usr/lib/a.so: ENOENT" ]
	[ "${lines[7]}" = "$WORK/off/usr/lib/x/l5: ENOENT" ]
	[[ ${lines[8]} == "$WORK/off/usr/lib/x/only ino="* ]]
	[ "${lines[11]}" = "$WORK/off/usr/share/doc/readme: ENOENT" ]
	[ "${lines[20]}" = "$WORK/off/.wh..wh.plnk: ENOENT" ]
	# the same layers without whiteout=aufs: the markers are plain files
	out=$("$PROBE" dump "$WORK/native")
	[[ $out == *$'\n'".wh.top - 644 0:0 0 "* ]]
	[[ $out == *$'\n'"usr/share/doc/.wh..wh..opq - 644 "* ]]
	[[ $out == *$'\n'"usr/share/doc/readme - 644 "* ]]
}

@test "a 200-layer stack in the aufs format reads as the same stack in the native format, with the name index and without" {
	local n=200 m ans spec
	lfs_workdir tmpfs
	# lib-deep's stack (whiteouts every 70th layer), all/sub opaque at L30;
	# under nat/ with native markers, under aufs/ with .wh. files
	spec=$(deep_spec $n; echo "o L30/all/sub")
	{
		sed 's|^\([a-zA-Z]\) |\1 nat/|' <<<"$spec"
		sed 's|^w |A |; s|^o |O |; s|^\([a-zA-Z]\) |\1 aufs/|' <<<"$spec"
	} | mktree "$WORK"
	deep_layers $n | sed "s|^$WORK/|$WORK/nat/|" >"$WORK/nat.layers"
	deep_layers $n | sed "s|^$WORK/|$WORK/aufs/|" >"$WORK/aufs.layers"
	mkdir "$WORK/on" "$WORK/off"
	"$LFS_MOUNT" -L "$WORK/nat.layers" "$WORK/mnt"
	"$LFS_MOUNT" -L "$WORK/aufs.layers" -o whiteout=aufs,nameindex=eager "$WORK/on"
	"$LFS_MOUNT" -L "$WORK/aufs.layers" -o whiteout=aufs,nameindex=off "$WORK/off"
	# every name of the spec, names in no layer, .wh. names
	for ((m = 0; m < n; m += 3)); do
		echo "d$((m % 10))/f$m all/f$m all/sub/s$m d$((m % 10))/miss$m all/.wh.f$m"
	done >"$WORK/names"
	echo "all/f10 all/f80 all/f150 all/sub/s20 all/sub/s30 all/sub/s60" >>"$WORK/names"
	for m in mnt on off; do
		# two stacks, built one after the other: times and
		# directory sizes differ (lfs-probe dump -p)
		diff -u <("$PROBE" dump -p "$WORK/mnt") <("$PROBE" dump -p "$WORK/$m")
		# present or not: inode numbers and times differ between the trees
		ans=$(cd "$WORK/$m" && xargs "$PROBE" stat <"$WORK/names" | sed 's/ ino=.*/ present/')
		[ "$m" = mnt ] || [ "$ans" = "$(<"$WORK/ans.mnt")" ]
		echo "$ans" >"$WORK/ans.$m"
	done
	# whited out at L70, opaque at L30, below it, .wh. names
	grep -qx 'all/f80: ENOENT' "$WORK/ans.on"
	grep -qx 'all/f90 present' "$WORK/ans.on"
	grep -qx 'all/sub/s30 present' "$WORK/ans.on"
	grep -qx 'all/sub/s60: ENOENT' "$WORK/ans.on"
	grep -qx 'all/.wh.f0: ENOENT' "$WORK/ans.on"
	grep -qx 'd9/f189 present' "$WORK/ans.on"
}

@test "names under .wh. are hidden from readdir and lookup, and making one through the mount fails with EINVAL" {
	lfs_workdir tmpfs
	aufs_stack
	mkdir "$WORK/u" "$WORK/w"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LOWER,upperdir=$WORK/u,workdir=$WORK/w,whiteout=aufs"
	"$PROBE" ops "$WORK/mnt" <<'OPS'
count . => 4
count usr/lib => 5
count usr/share/doc => 1
kind .wh..wh.plnk => absent
kind .wh..wh.aufs => absent
kind usr/lib/.wh.a.so => absent
kind usr/share/doc/.wh..wh..opq => absent
create .wh.new => EINVAL
create usr/lib/.wh.a.so => EINVAL
mkdir usr/.wh.d => EINVAL
symlink t .wh.l => EINVAL
fifo .wh.p => EINVAL
chr .wh.c 1 3 => EINVAL
link etc/group etc/.wh.g => EINVAL
rename etc/group etc/.wh.g => EINVAL
rename etc/group .wh. => EINVAL
tmpfile etc etc/.wh.t => EINVAL
create usr/lib/a.so a
read usr/lib/a.so => a
count usr/lib => 6
count . => 4
OPS
	# only the new file reached the upper layer, and the directories
	# copied up on the way (etc by the O_TMPFILE)
	expect_layer "$WORK/u" 'd etc
f usr/lib/a.so a'
}

# The writes of the next tests: deletions of names that lower layers show
# (the .wh. file goes in the upper layer), an rm -r and mkdir (the new
# directory holds .wh..wh..opq), a rename away, re-creations of deleted
# names (their .wh. file goes), moves of merged directories (EXDEV) and of
# a new one (allowed).
AUFS_WRITES='unlink etc/passwd
unlink usr/lib/b.so
unlink usr/share/doc/new
rmdir usr/share/doc
mkdir usr/share/doc
create usr/share/doc/fresh f
write etc/group g
rename etc/group etc/group2
create usr/lib/b.so b
unlink usr/lib/x/only
rmdir usr/lib/x
create top t
rename usr/lib usr/lib2 => EXDEV
rename var/cache var/c => EXDEV
exchange usr var => EXDEV
mkdir var/new
rename var/new var/new2
create var/new2/n n
unlink var/cache/c3
rmdir opt'

# what they leave in the upper layer
AUFS_WRITES_UPPER='f etc/.wh.passwd
f etc/.wh.group
f etc/group2 g
f usr/lib/b.so b
f usr/lib/.wh.x
f usr/share/doc/.wh..wh..opq
f usr/share/doc/fresh f
f top t
f var/new2/n n
f var/cache/.wh.c3
f .wh.opt'

@test "whiteout=aufs writes .wh. files and .wh..wh..opq in the upper layer, the same with the index on, eager and off, on tmpfs and ext4; a remount shows the same tree" {
	local fs ix before
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		lfs_workdir "$fs"
		aufs_stack
		for ix in on eager off; do
			mkdir "$WORK/u-$ix" "$WORK/w-$ix" "$WORK/m-$ix"
			mount -t layerfs none "$WORK/m-$ix" -o "lowerdir=$LOWER,upperdir=$WORK/u-$ix,workdir=$WORK/w-$ix,whiteout=aufs,nameindex=$ix"
			"$PROBE" ops "$WORK/m-$ix" <<<"$AUFS_WRITES"
		done
		# the upper layer: exactly this; the .wh. files empty, mode 0600
		expect_layer "$WORK/u-on" "$AUFS_WRITES_UPPER"
		"$PROBE" ops "$WORK/u-on" <<<'mode etc/.wh.passwd => 600
size etc/.wh.passwd => 0
mode usr/share/doc/.wh..wh..opq => 600
owner .wh.opt => 0:0'
		for ix in on eager; do
			# written one after the other: the times differ
			diff -u <("$PROBE" dump -x mtime "$WORK/u-$ix") <("$PROBE" dump -x mtime "$WORK/u-off")
			diff -u <("$PROBE" dump -x mtime "$WORK/m-$ix") <("$PROBE" dump -x mtime "$WORK/m-off")
		done
		before=$("$PROBE" dump "$WORK/m-on")
		[[ $before == *$'\n'"usr/share/doc/fresh - 644 "* ]]
		[[ $before != *"usr/share/doc/more"* ]]
		[[ $before != *"usr/lib/x"* ]]
		umount "$WORK/m-on"
		mount -t layerfs none "$WORK/m-on" -o "lowerdir=$LOWER,upperdir=$WORK/u-on,workdir=$WORK/w-on,whiteout=aufs"
		[ "$("$PROBE" dump "$WORK/m-on")" = "$before" ]
		lfs_cleanup
	done
}

@test "whiteout=chardev writes character devices 0/0 and the opaque xattr; a native mount of the same upper shows the same tree" {
	local before
	lfs_workdir tmpfs
	mktree "$WORK" <<'SPEC'
f L1/d/a a
f L1/d/sub/s s
f L0/d/b b
f L0/top t
d u
d w
SPEC
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L0:$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w,whiteout=chardev"
	grep -q " $WORK/mnt layerfs rw,.*,whiteout=chardev" /proc/mounts
	"$PROBE" ops "$WORK/mnt" <<OPS
unlink d/a
unlink top
unlink d/sub/s
rmdir d/sub
mkdir d/sub
rename d/b d/b2
create top again
chr d/wh 0 0 => EPERM
kind $WORK/u/d/a => chr-whiteout
kind $WORK/u/d/b => chr-whiteout
kind $WORK/u/d/sub => opaque-dir
kind $WORK/u/top => file
count $WORK/u/d/sub => 0
count d => 2
OPS
	before=$("$PROBE" dump "$WORK/mnt")
	umount "$WORK/mnt"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L0:$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	[ "$("$PROBE" dump "$WORK/mnt")" = "$before" ]
	expect_tree "$WORK/mnt" 'f d/b2 b
d d/sub
f top again'
}

@test "a file or directory removed while open stays removed when a change through the open fd copies it up, in every whiteout format" {
	local wh
	for wh in native chardev aufs; do
		lfs_workdir tmpfs
		mktree "$WORK" <<'SPEC'
f L/d/f lower
f L/d/keep k
d L/e
d u
d w
SPEC
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L,upperdir=$WORK/u,workdir=$WORK/w,whiteout=$wh"
		exec 7<"$WORK/mnt/d/f" 8<"$WORK/mnt/e"
		rm "$WORK/mnt/d/f"
		rmdir "$WORK/mnt/e"
		# a timestamp change through the open files copies them up: the
		# file's copy is left unlinked, the directory's is refused
		run -0 touch /proc/self/fd/7
		run -1 touch /proc/self/fd/8
		[[ $output == *"No such file or directory"* ]]
		exec 7<&- 8<&-
		run -0 ls -A "$WORK/mnt/d"
		[ "$output" = keep ]
		[ ! -e "$WORK/mnt/e" ]
		# the upper layer holds the whiteouts only (aufs: .wh. files)
		"$PROBE" ops "$WORK/u" <<'OPS'
kind d/f => whiteout|chr-whiteout|absent
kind e => whiteout|chr-whiteout|absent
OPS
		# and after a remount
		umount "$WORK/mnt"
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L,upperdir=$WORK/u,workdir=$WORK/w,whiteout=$wh"
		run -0 ls -A "$WORK/mnt/d"
		[ "$output" = keep ]
		[ ! -e "$WORK/mnt/e" ]
		run -0 ls -A "$WORK/w/work"
		[ -z "$output" ]
		lfs_cleanup
	done
}

@test "bad whiteout= values are refused with a message that names them; the format cannot change on remount" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f L0/a a'
	run "$LFS_MOUNT" -v -o "lowerdir=$WORK/L0,whiteout=foo" "$WORK/mnt"
	echo "$output"
	[ "$status" = 32 ]
	[[ $output == *"whiteout=foo: unknown format (one of native, chardev, aufs)"* ]]
	dmesg -C
	run mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L0,whiteout=Aufs"
	[ "$status" = 32 ]
	[[ $(dmesg) == *"layerfs: whiteout=Aufs: unknown format (one of native, chardev, aufs)"* ]]
	run "$PROBE" mount2 layerfs "$WORK/mnt" "lowerdir=$WORK/L0,whiteout="
	[ "$output" = "mount: EINVAL" ]
	run "$PROBE" mount2 layerfs "$WORK/mnt" "lowerdir=$WORK/L0,whiteout"
	[ "$output" = "mount: EINVAL" ]
	run -1 grep -q " $WORK/mnt " /proc/mounts
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L0,whiteout=aufs"
	dmesg -C
	run "$PROBE" mount2 layerfs "$WORK/mnt" "whiteout=native" "remount ro"
	[ "$output" = "mount: EINVAL" ]
	[[ $(dmesg) == *"layerfs: whiteout=native: the format cannot change on remount (it is aufs)"* ]]
	run "$PROBE" mount2 layerfs "$WORK/mnt" "whiteout=aufs" "remount ro"
	[ "$output" = "mount: ok" ]
	grep -q " $WORK/mnt layerfs ro,.*,whiteout=aufs" /proc/mounts
}

# fuse_spec: aufs_spec without the one case the two readers take apart: a
# layer that holds a directory and its whiteout.  layerfs shows that
# layer's part of it (the OCI image format: a whiteout hides only what is
# in the layers below); fuse-overlayfs 1.10 hides the directory altogether.
fuse_spec() {
	aufs_spec | grep -v ' L1/usr/lib/x'
}

# fuse_mount MNT [UPPER WORK]: fuse-overlayfs over $LOWER; writes .wh.
# files, not character devices
fuse_mount() {
	local opts=lowerdir=$LOWER
	[ -z "${2:-}" ] || opts+=,upperdir=$2,workdir=$3
	FUSE_OVERLAYFS_DISABLE_OVL_WHITEOUT=1 fuse-overlayfs -o "$opts" "$1"
}

@test "fuse-overlayfs reads the aufs layers as layerfs does" {
	command -v fuse-overlayfs
	lfs_workdir tmpfs
	fuse_spec | mktree "$WORK"
	LOWER=$WORK/${AUFS_LAYERS//:/:$WORK/}
	mkdir "$WORK/f"
	fuse_mount "$WORK/f"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LOWER,whiteout=aufs"
	# fuse-overlayfs counts the subdirectories of a merged directory,
	# layerfs says 1 as overlay does (lfs-probe dump -x dirs)
	diff -u <("$PROBE" dump -x dirs "$WORK/f") <("$PROBE" dump -x dirs "$WORK/mnt")
	expect_tree "$WORK/mnt" "$(aufs_expected | grep -v '^f usr/lib/x/only ')
f usr/lib/x/deep/f f5
f usr/lib/x/deep/g g4
f usr/lib/x/l5 l5"
}

@test "the same writes through fuse-overlayfs and layerfs give the same tree and, up to marker modes, the same upper; each reads the other's upper the same" {
	local script merged
	command -v fuse-overlayfs
	lfs_workdir tmpfs
	fuse_spec | mktree "$WORK"
	LOWER=$WORK/${AUFS_LAYERS//:/:$WORK/}
	mkdir "$WORK/f" "$WORK/uf" "$WORK/wf" "$WORK/ul" "$WORK/wl" "$WORK/wf2" "$WORK/wl2"
	fuse_mount "$WORK/f" "$WORK/uf" "$WORK/wf"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LOWER,upperdir=$WORK/ul,workdir=$WORK/wl,whiteout=aufs"
	script=$(grep -v 'usr/lib/x' <<<"$AUFS_WRITES")
	"$PROBE" ops "$WORK/f" <<<"$script"
	"$PROBE" ops "$WORK/mnt" <<<"$script"
	# written one after the other, and directory link counts (see
	# above): lfs-probe dump -p
	merged=$("$PROBE" dump -p "$WORK/mnt")
	diff -u <("$PROBE" dump -p "$WORK/f") - <<<"$merged"
	# fuse-overlayfs makes every new directory opaque, layerfs only those
	# that replace a lower one: var/new2 differs by that marker
	diff -u <("$PROBE" dump -p "$WORK/uf" | normalize_upper | grep -v '^var/new2/\.wh\.\.wh\.\.opq ') \
		<("$PROBE" dump -p "$WORK/ul" | normalize_upper)
	umount "$WORK/f" "$WORK/mnt"
	# each upper layer, read by the other
	fuse_mount "$WORK/f" "$WORK/ul" "$WORK/wf2"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LOWER,upperdir=$WORK/uf,workdir=$WORK/wl2,whiteout=aufs"
	diff -u <("$PROBE" dump -p "$WORK/f") - <<<"$merged"
	diff -u <("$PROBE" dump -p "$WORK/mnt") - <<<"$merged"
}
