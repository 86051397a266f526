#!/usr/bin/env bats
# Mounts in a user namespace (FS_USERNS_MOUNT, issue #26): uid 1000 in
# `unshare -Urm`, root of a namespace of its own where it is mapped to
# 1000, mounts layers it owns.  Each rule of docs/security.md ("Mounting
# in a user namespace") has a test, run on layerfs and on the kernel's
# overlay (with userxattr, which overlay wants there) where it applies.
# 6.1's tmpfs keeps no user.* xattrs: the layers are on the ext4 scratch
# disk.  Mounts are made with lfs-probe mount2 (mount(2), the result as
# "mount: ok" or the errno), so that both filesystems are asked alike.

load lib
load lib-write

teardown() {
	lfs_cleanup
}

# in_userns SCRIPT: sh -c SCRIPT as uid 1000 in a user and mount namespace
# of its own; the environment (W, FS, OPTS, PROBE) passes through
in_userns() {
	setpriv --reuid=1000 --regid=1000 --clear-groups unshare -Urm sh -c "$1"
}

# the mount in_userns scripts make: L0 over L1, upper u, work w
USERNS_MOUNT='"$PROBE" mount2 "$FS" "$W/mnt" "lowerdir=$W/L0:$W/L1,upperdir=$W/u,workdir=$W/w$OPTS"'

# userns_stack FS [SPEC]: a work directory on ext4 with lower layers L0
# (a, d/x, d/y) and L1 (b), more from SPEC (mktree lines), an upper u and
# a work w, all owned by uid 1000; exports what in_userns scripts read
userns_stack() {
	lfs_workdir ext4
	mktree "$WORK" <<<"f L0/a a
f L0/d/x x
f L0/d/y y
f L1/b b
d u
d w
${2:-}"
	chown -R 1000:1000 "$WORK/L0" "$WORK/L1" "$WORK/u" "$WORK/w" "$WORK/mnt"
	W=$WORK
	FS=$1
	OPTS=
	if [ "$FS" = overlay ]; then
		OPTS=,userxattr
	fi
	export W FS OPTS PROBE
}

# userns_ops OPS: mount the stack in a user namespace, run the lfs-probe
# ops script OPS through the mount, unmount; the output in OUT (a failed
# mount shows as "mount: ERRNO" and no ops)
userns_ops() {
	printf '%s\n' "$1" >"$W/ops"
	OUT=$(in_userns 'r=$('"$USERNS_MOUNT"')
		echo "$r"
		[ "$r" = "mount: ok" ] || exit 0
		"$PROBE" ops "$W/mnt" <"$W/ops"
		umount "$W/mnt"' 2>&1)
	echo "$FS: $OUT"
}

# userns_same PREP OPS [SPEC]: for layerfs, then overlay: userns_stack with
# SPEC, the function PREP (what the test changes before the mount, "-"
# for nothing), userns_ops OPS; each must mount and pass its ops, and
# both must give the same output.  The last stack is left in W.
userns_same() {
	local fs ref=
	for fs in layerfs overlay; do
		userns_stack "$fs" "${3:-}"
		[ "$1" = - ] || "$1"
		userns_ops "$2"
		[[ $OUT == "mount: ok"* ]]
		[[ $OUT != *FAIL* ]]
		[ -z "$ref" ] || same_text "layerfs and overlay results" "$ref" "$OUT"
		ref=$OUT
	done
}

@test "uid 1000 in a user namespace of its own mounts layers it owns and reads and writes through them as through overlay: a copy-up, a new file, a 0/0 device whiteout, userxattr in /proc/mounts" {
	local fs ref= mounts
	for fs in layerfs overlay; do
		userns_stack "$fs"
		userns_ops 'read a => a
append b +new
read b => b+new
create c c
unlink d/x
kind d/x => absent
read d/y => y
owner b => 0:0
owner c => 0:0'
		[[ $OUT != *FAIL* ]]
		[[ $OUT == "mount: ok"* ]]
		run_ops "$WORK/u" <<-'EOF'
		kind d/x => chr-whiteout
		owner d/x => 1000:1000
		read b => b+new
		owner b => 1000:1000
		read c => c
		owner c => 1000:1000
		EOF
		[ -z "$ref" ] || same_text "layerfs and overlay results" "$ref" "$OUT"
		ref=$OUT
		mounts=$(in_userns "$USERNS_MOUNT"' >/dev/null; grep " $W/mnt " /proc/mounts')
		echo "$mounts"
		[[ $mounts == *" $fs "*,userxattr* ]]
		if [ "$fs" = layerfs ]; then
			[[ $mounts == *,whiteout=chardev* ]]
		fi
	done
}

@test "a mounter that cannot write the upper directory is refused with EACCES before anything is made in the work directory (overlay mounts and makes work/)" {
	local fs
	for fs in layerfs overlay; do
		userns_stack "$fs"
		chown 0:0 "$WORK/u"
		userns_ops 'read a => a'
		if [ "$fs" = layerfs ]; then
			[ "$OUT" = "mount: EACCES" ]
			[ ! -e "$WORK/w/work" ]
		else
			[[ $OUT == "mount: ok"* ]]
			[ -d "$WORK/w/work" ]
		fi
	done
}

# L1, root's alone
l1_of_root() {
	chown 0:0 "$W/L1"
	chmod 0700 "$W/L1"
}

@test "a lower layer whose directory the mounter cannot read fails a listing and a lookup in it with EACCES, as on overlay" {
	userns_same l1_of_root 'read a => a
count . => EACCES
kind b => EACCES
read d/y'
}

@test "in a user namespace 500 lower layers mount and 501 are refused with EINVAL, as on overlay" {
	local fs out
	for fs in layerfs overlay; do
		userns_stack "$fs"
		mkdir "$W/n"
		mkdir "$W"/n/{1..501}
		echo top >"$W/n/1/top"
		echo bottom >"$W/n/500/bottom"
		chown -R 1000:1000 "$W/n"
		out=$(in_userns 'cd "$W/n"
			"$PROBE" mount2 "$FS" "$W/mnt" "lowerdir=$(seq -s: 1 500)"
			cat "$W/mnt/top" "$W/mnt/bottom"
			umount "$W/mnt"
			"$PROBE" mount2 "$FS" "$W/mnt" "lowerdir=$(seq -s: 1 501)"' 2>&1)
		echo "$fs: $out"
		[ "$out" = "mount: ok
top
bottom
mount: EINVAL" ]
	done
}

@test "a mount context made in a user namespace cannot be created by a process of another: EPERM, as the mounter's credentials would not be the namespace's (overlay creates it)" {
	local out
	userns_stack layerfs
	out=$("$PROBE" handoff layerfs "$W/L0:$W/L1" 2>&1) || true
	echo "layerfs: $out"
	[ "$out" = "create: EPERM" ]
	out=$("$PROBE" handoff overlay "$W/L0:$W/L1" 2>&1) || true
	echo "overlay: $out"
	[ "$out" = "create: ok" ]
}

@test "the work directory, the upper root or a lower root moved into a lower layer after the mount is not reachable through it: ELOOP, as on overlay" {
	local fs ref=
	for fs in layerfs overlay; do
		userns_stack "$fs"
		# the mounter moves them: their parent is its own
		chown 1000:1000 "$W"
		printf '%s\n' 'kind w-moved => ELOOP
kind w-moved/work => ELOOP
kind u-moved => ELOOP
kind l1-moved => ELOOP
count .
read a => a' >"$W/ops"
		OUT=$(in_userns "$USERNS_MOUNT"'
			mv "$W/w" "$W/L0/w-moved"
			mv "$W/u" "$W/L0/u-moved"
			mv "$W/L1" "$W/L0/l1-moved"
			"$PROBE" ops "$W/mnt" <"$W/ops"' 2>&1) || true
		echo "$fs: $OUT"
		[[ $OUT == "mount: ok"* ]]
		[[ $OUT != *FAIL* ]]
		[ -z "$ref" ] || same_text "layerfs and overlay results" "$ref" "$OUT"
		ref=$OUT
	done
}

# L0/o, of an id the namespace does not map, writable by all
o_unmapped() {
	chown 2000:2000 "$W/L0/o"
	chmod 0666 "$W/L0/o"
}

@test "a lower file whose owner is not mapped in the mounter's namespace is not copied up: EOVERFLOW on a write, nothing in the upper layer, as on overlay" {
	userns_same o_unmapped 'owner o => 65534:65534
append o X => EOVERFLOW
read o => data
kind '"$W"'/u/o => absent' 'f L0/o data'
}

@test "root of the user namespace cannot set trusted.* xattrs through the mount, as on overlay" {
	userns_same - 'setxattr a trusted.x v => EPERM
setxattr a trusted.overlay.opaque y => EPERM
getxattr a trusted.x => ENODATA'
}

# L0/r, root's alone
r_of_root() {
	chown 0:0 "$W/L0/r"
	chmod 0600 "$W/L0/r"
}

@test "root of the user namespace cannot read through the mount a lower file mode 0600 of root (not mapped): EACCES, as on overlay" {
	userns_same r_of_root 'read r => EACCES
append r X => EACCES
owner r => 65534:65534
kind '"$W"'/u/r => absent' 'f L0/r secret'
}

# a tmpfs mounted on the stack's directory, which the layers share
submount() {
	mkdir "$W/sub"
	mount -t tmpfs none "$W/sub"
}

@test "layers and upper on a mount with a submount, locked in the user namespace, mount: each is cloned at its own directory, as overlay clones" {
	userns_same submount 'read a => a
read b => b
append b +new
read b => b+new'
}

@test "layers, upper and work given as descriptors (layerfs-mount --by-fd) mount in a user namespace as paths do" {
	userns_stack layerfs
	export LFS_MOUNT
	OUT=$(in_userns '"$LFS_MOUNT" --by-fd -o "lowerdir=$W/L0:$W/L1,upperdir=$W/u,workdir=$W/w" "$W/mnt" &&
		cat "$W/mnt/a" "$W/mnt/b" && echo new >"$W/mnt/n" &&
		grep " $W/mnt " /proc/mounts' 2>&1)
	echo "$OUT"
	# a and b hold no newline
	[[ $OUT == ab* ]]
	[[ $OUT == *",lowerdir=$W/L0:$W/L1,upperdir=$W/u,workdir=$W/w,"*userxattr* ]]
	[ "$(cat "$W/u/n")" = new ]
	[ "$(stat -c %u "$W/u/n")" = 1000 ]
}

# The namespace's root sets a v2 file capability through the mount: the
# VFS makes it v3 for that root (rootid: its uid outside, 1000), and the
# upper layer must hold that, never a capability of host root (a rootid
# of 0 there is CVE-2021-3493's hole)
@test "a file capability set through the mount by the namespace's root lands in the upper layer as v3 with rootid 1000, as on overlay" {
	local fs ref= cap
	for fs in layerfs overlay; do
		userns_stack "$fs"
		OUT=$(in_userns "$USERNS_MOUNT"' && setcap cap_net_raw+ep "$W/mnt/a" &&
			getcap "$W/mnt/a"' 2>&1)
		echo "$fs: $OUT"
		[[ $OUT == *"cap_net_raw=ep"* ]]
		cap=$(getfattr -e hex -n security.capability "$WORK/u/a" | sed -n 's/^security.capability=//p')
		echo "$fs: upper: $cap"
		# little-endian: revision 3 with the effective flag (0x03000001),
		# cap_net_raw (bit 13) permitted, ..., rootid 1000 (0x3e8)
		[[ $cap == 0x0100000300200000* ]]
		[[ $cap == *e8030000 ]]
		[ -z "$ref" ] || [ "$ref" = "$cap" ]
		ref=$cap
	done
}

# Metadata-only copy-up in a user namespace (metacopy=on, which overlay
# refuses with userxattr): a metacopy file's data is used only when the
# mounter may read it, asked at each use (docs/security.md, "userxattr").
# Overlay, the reference, mounts without metacopy and refuses the forged
# file whole (EPERM); layerfs shows the forged file's own metadata and
# refuses its data (EACCES), as the mounter's own read of it is refused.

# L1/f, root's alone, under a forged metacopy file L0/f (a hole of the
# data's size, as a metacopy file is; 1000's, mode 0644); forged
# metacopy files over a device and a directory
FORGED_SPEC='T L0/f 6
m L0/f 644
a L0/f user.overlay.metacopy 0x
f L1/f secret
f L0/dev
a L0/dev user.overlay.metacopy 0x
c L1/dev 1 3
f L0/dir
a L0/dir user.overlay.metacopy 0x
d L1/dir'

forged_of_root() {
	chown 0:0 "$W/L1/f" "$W/L1/dev"
	chmod 0600 "$W/L1/f"
}

@test "metacopy=on in a user namespace: a forged user.overlay.metacopy over root's 0600 file gives EACCES to every use of the data (read, splice, FIEMAP, copy_file_range, write, truncate, chmod), copies nothing up and shows the forged file's own st_blocks; overlay refuses the file (EPERM)" {
	userns_stack layerfs "$FORGED_SPEC"
	forged_of_root
	OPTS=,metacopy=on
	userns_ops 'read '"$W"'/L1/f => EACCES
owner f => 0:0
mode f => 644
size f => 6
blocks f => 0
read f => EACCES
spliceout f => EACCES
fiemap f => EACCES
copyrange f c => EACCES
kind c => absent
pwrite f 0 X => EACCES
append f X => EACCES
write f X => EACCES
truncate f 0 => EACCES
truncate f 1 => EACCES
chmod f 600 => EACCES
chown f 0 0 => EACCES
mode f => 644
read dev => EIO
read dir => EIO
read a => a'
	[[ $OUT == "mount: ok"* ]]
	[[ $OUT != *FAIL* ]]
	[[ $OUT != *secret* ]]
	run_ops "$W/u" <<<'kind f => absent'
	[ "$(find "$W/w/work" -mindepth 1 | wc -l)" = 0 ]
	# the reference: overlay with userxattr has no metacopy=on
	userns_stack overlay "$FORGED_SPEC"
	forged_of_root
	OPTS=,userxattr,metacopy=on
	userns_ops 'read f'
	[ "$OUT" = "mount: EINVAL" ]
	OPTS=,userxattr
	userns_ops 'read f => EPERM
owner f => EPERM
write f X => EPERM
read a => a'
	[[ $OUT == "mount: ok"* ]]
	[[ $OUT != *FAIL* ]]
	run_ops "$W/u" <<<'kind f => absent'
}

# Under userxattr layerfs makes no metacopy file with several names (no
# index; a hard link is copied up whole): two names of one forged upper
# file would share one inode (keyed by the upper one), and so the data
# found below whichever name was looked up first
@test "metacopy=on in a user namespace: a forged metacopy file with two names is not followed (EIO), as neither name's data is its own for sure" {
	userns_stack layerfs 'T u/h1 3
a u/h1 user.overlay.metacopy 0x
f L1/h1 one
f L1/h2 two'
	ln "$W/u/h1" "$W/u/h2"
	OPTS=,metacopy=on
	# (the log cleared first, as lib-write asks: log_since reads it a
	# line a traced step, and the boot's and earlier suites' lines are
	# thousands; the harness keeps every line from /dev/kmsg)
	dmesg -C
	log_mark "t$BATS_TEST_NUMBER"
	userns_ops 'read h2 => EIO
read h1 => EIO
read a => a'
	[[ $OUT == "mount: ok"* ]]
	[[ $OUT != *FAIL* ]]
	log_since "t$BATS_TEST_NUMBER" "$(dmesg)"
	[[ $LOG_CASE == *"metacopy file of 2 links: not followed"* ]]
}

# a tree of 16 files, 3 MiB, for chmod -R and chown -R
TREE_SPEC=$(for i in 1 2 3 4 5 6 7 8; do
	echo "F L1/tree/a$i/f 262144"
	echo "F L1/tree/a$i/b/g 131072"
done)

@test "metacopy=on in a user namespace over layers the mounter owns: chmod -R and chown -R copy no data (user.overlay.metacopy files), the data and its extents read back through the mount, a later write fills the file" {
	local lo up
	userns_stack layerfs "$TREE_SPEC"
	OPTS=,metacopy=on
	OUT=$(in_userns "$USERNS_MOUNT"' >/dev/null
		chmod -R go-r "$W/mnt/tree" && chown -R 0:0 "$W/mnt/tree" &&
		grep " $W/mnt " /proc/mounts' 2>&1)
	echo "$OUT"
	[[ $OUT == *,metacopy=on* ]]
	[[ $OUT == *,userxattr* ]]
	lo=$(du -sk "$W/L1/tree" | cut -f1)
	up=$(du -sk "$W/u/tree" | cut -f1)
	echo "lower $lo KiB, upper $up KiB"
	[ "$lo" -ge 3072 ]
	[ "$up" -le 200 ]
	[ "$(find "$W/u/tree" -type f | wc -l)" = 16 ]
	find "$W/u/tree" -type f -exec getfattr -n user.overlay.metacopy {} + >/dev/null
	userns_ops 'hash '"$W"'/L1/tree/a1/f => @h
hash '"$W"'/L1/tree/a8/b/g => @g
hash tree/a1/f => @h
hash tree/a8/b/g => @g
mode tree/a1/f => 600
blocks tree/a1/f => !0
fiemap tree/a1/f => !EACCES
append tree/a8/b/g +
size tree/a8/b/g => 131073
hash tree/a1/f => @h'
	[[ $OUT == "mount: ok"* ]]
	[[ $OUT != *FAIL* ]]
	run_ops "$W/u/tree" <<'EOF'
getxattr a8/b/g user.overlay.metacopy => ENODATA
size a8/b/g => 131073
blocks a8/b/g => !0
getxattr a1/f user.overlay.metacopy => !ENODATA
owner a8/b/g => 1000:1000
mode a8/b/g => 600
EOF
	cmp -n 131072 "$W/L1/tree/a8/b/g" "$W/u/tree/a8/b/g"
}

# L1/f, 1000's, given to root with mode 0600 while the mount holds it
data_to_root() {
	chown 0:0 "$W/L1/f"
	chmod 0600 "$W/L1/f"
}

@test "metacopy=on in a user namespace: the mounter's read access to a metacopy file's data is asked when the data is used, not at lookup: the data given to root under a live mount and an open file turns FIEMAP, st_blocks, new opens and the fill to EACCES" {
	local rc=0
	userns_stack layerfs 'f L1/f data
d sig'
	chown 1000:1000 "$W/sig"
	OPTS=,metacopy=on
	printf '%s\n' 'chmod f 600
fdopen 1 f r
fdread 1 => data
fdfiemap 1 => !EACCES
blocks f => !0
create '"$W"'/sig/ready
waitfor '"$W"'/sig/changed
fdread 1 => data
fdfiemap 1 => EACCES
blocks f => 0
read f => EACCES
fiemap f => EACCES
append f X => EACCES
fdclose 1
mode f => 600' >"$W/ops"
	in_userns "$USERNS_MOUNT"' && "$PROBE" ops "$W/mnt" <"$W/ops"' >"$W/out" 2>&1 &
	run_ops / <<<"waitfor $W/sig/ready"
	data_to_root
	touch "$W/sig/changed"
	wait $! || rc=$?
	cat "$W/out"
	[ "$rc" = 0 ]
	[[ $(cat "$W/out") == "mount: ok"* ]]
	! grep -q FAIL "$W/out" || false
	run_ops "$W/u" <<-'EOF'
	getxattr f user.overlay.metacopy => !ENODATA
	size f => 4
	blocks f => 0
	EOF
}
