#!/usr/bin/env bats
# Idmapped mounts (issue #26, docs/security.md "Idmapped mounts"): an
# idmapped layerfs mount (FS_ALLOW_IDMAP), whose mapping every inode
# operation honours, and its callers checked through it.  The kernel's
# overlay has no idmapped mount of its own in 6.1, so these tests state
# what the mapping must give: owners shown, permission for a mapped and
# an unmapped user, owners written to the upper layer (in the real
# filesystem's view), chown, set-group-ID, ACLs and the refusals.  The
# layers are on the ext4 scratch disk (ACLs).  The idmapped mounts are
# made with lfs-probe idmap: a detached clone of a mount, idmapped
# (mount_setattr(MOUNT_ATTR_IDMAP)) and attached.

load lib

teardown() {
	lfs_cleanup
}

# idmap_stack: a work directory on ext4 with a lower layer l, an upper u
# and a work w.  In l: f0 (0:0, 0644), p (1000:1000, 0600), d (1000:1000,
# 0755), g (1000:2000, 0644), pub (0:0, 1777).
idmap_stack() {
	lfs_workdir ext4
	mktree "$WORK" <<<'f l/f0 zero
f l/p private
d l/d
f l/g group
d l/pub
d u
d w
d id'
	chown 1000:1000 "$WORK/l/p" "$WORK/l/d"
	chown 1000:2000 "$WORK/l/g"
	chmod 0600 "$WORK/l/p"
	chmod 1777 "$WORK/l/pub"
}

# idmap_layerfs [MAP]: mount the stack's layerfs at m, bind it idmapped at
# id (lfs-probe idmap MAP: 0-65535 shown as 100000-165535 by default),
# then unmount m: only the idmapped mount stays
idmap_layerfs() {
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w"
	"$PROBE" idmap "$WORK/mnt" "$WORK/id" ${1:+"$1"}
	umount "$WORK/mnt"
}

# owners PATH...: "uid:gid" of each PATH, one a line
owners() {
	stat -c %u:%g "$@"
}

@test "an idmapped layerfs mount shows owners through its mapping and checks callers by them" {
	idmap_stack
	idmap_layerfs
	run owners "$WORK/id/f0" "$WORK/id/p" "$WORK/id/d" "$WORK/id/g"
	[ "$output" = "100000:100000
101000:101000
101000:101000
101000:102000" ]
	# the mapped owner reads its 0600 file; uid 1000, its owner on disk, not
	run as_user 101000 cat "$WORK/id/p"
	[ "$status" = 0 ]
	[ "$output" = private ]
	run as_user 1000 cat "$WORK/id/p"
	[ "$status" = 1 ]
	[[ $output == *"Permission denied"* ]]
	# another mapped user may not write in its directory
	run as_user 101001 touch "$WORK/id/d/no"
	[ "$status" = 1 ]
	[[ $output == *"Permission denied"* ]]
	# nor may uid 1000, unmapped here: EOVERFLOW comes first
	run as_user 1000 touch "$WORK/id/d/no"
	[ "$status" = 1 ]
	[[ $output == *"Value too large"* ]]
	[ ! -e "$WORK/u/d/no" ]
}

@test "objects made through an idmapped layerfs mount are owned by the caller mapped back" {
	idmap_stack
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w"
	"$PROBE" idmap "$WORK/mnt" "$WORK/id"
	# root's O_TMPFILE, linked (which takes CAP_DAC_READ_SEARCH), through
	# a mount that shows 1000 as 0
	mkdir "$WORK/id1000"
	"$PROBE" idmap "$WORK/mnt" "$WORK/id1000" "1000 0 1,0 100000 1000"
	umount "$WORK/mnt"
	as_user 101000 touch "$WORK/id/d/new"
	as_user 101000 mkdir "$WORK/id/d/dir"
	as_user 101000 ln -s target "$WORK/id/d/sym"
	as_user 101000 mkfifo "$WORK/id/d/fifo"
	run "$PROBE" ops "$WORK/id1000" <<<'tmpfile d d/tmp data'
	[ "$output" = "tmpfile d d/tmp data: ok" ]
	local n
	for n in new dir sym fifo tmp; do
		[ "$(stat -c %u:%g "$WORK/u/d/$n")" = 1000:1000 ] ||
			{ echo "u/d/$n: $(stat -c %u:%g "$WORK/u/d/$n")"; return 1; }
		[ "$(stat -c %u:%g "$WORK/id/d/$n")" = 101000:101000 ] ||
			{ echo "id/d/$n: $(stat -c %u:%g "$WORK/id/d/$n")"; return 1; }
	done
	# root of the mapping makes root's objects; root itself is unmapped
	as_user 100000 touch "$WORK/id/pub/r"
	[ "$(owners "$WORK/u/pub/r")" = 0:0 ]
	run touch "$WORK/id/pub/host-root"
	[ "$status" = 1 ]
	[[ $output == *"Value too large"* ]]
	# a user the mapping does not name makes nothing (EOVERFLOW)
	run as_user 5000 touch "$WORK/id/pub/x"
	[ "$status" = 1 ]
	[[ $output == *"Value too large"* ]]
	run as_user 5000 mkdir "$WORK/id/pub/xd"
	[ "$status" = 1 ]
	[ ! -e "$WORK/u/pub/x" ]
	[ ! -e "$WORK/u/pub/xd" ]
}

@test "copy-up, chown and chmod through an idmapped layerfs mount write owners in the filesystem's view" {
	idmap_stack
	idmap_layerfs
	# copy-up keeps the owner: on disk as it was
	as_user 101000 sh -c "printf more >>'$WORK/id/p'"
	[ "$(owners "$WORK/u/p")" = 1000:1000 ]
	[ "$(tr -d '\n' <"$WORK/u/p")" = privatemore ]
	# chown: ids of the mount's view, stored mapped back
	chown 101234:100007 "$WORK/id/f0"
	[ "$(owners "$WORK/u/f0")" = 1234:7 ]
	[ "$(owners "$WORK/id/f0")" = 101234:100007 ]
	# an id the mapping does not name
	run chown 5000 "$WORK/id/f0"
	[ "$status" = 1 ]
	[[ $output == *"Value too large"* ]]
	[ "$(owners "$WORK/u/f0")" = 1234:7 ]
	# chmod: the mapped owner may, the owner on disk may not
	run as_user 1000 chmod 0644 "$WORK/id/p"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	as_user 101000 chmod 0640 "$WORK/id/p"
	[ "$(stat -c %a "$WORK/u/p")" = 640 ]
	# the owner may give away its file only to root (CAP_CHOWN) here
	run as_user 101000 chown 101001 "$WORK/id/p"
	[ "$status" = 1 ]
	[ "$(owners "$WORK/u/p")" = 1000:1000 ]
}

@test "set-group-ID through an idmapped layerfs mount follows the mapped group" {
	idmap_stack
	idmap_layerfs
	# g: owner 101000, group 102000 in the mount; its owner is not in it
	as_user 101000 chmod 2755 "$WORK/id/g"
	[ "$(stat -c %a "$WORK/u/g")" = 755 ]
	# root may (CAP_FSETID over the mapped owners)
	chmod 2755 "$WORK/id/g"
	[ "$(stat -c %a "$WORK/u/g")" = 2755 ]
	# a write by the owner, not in the group, drops it
	as_user 101000 sh -c "echo x >>'$WORK/id/g'"
	[ "$(stat -c %a "$WORK/u/g")" = 755 ]
	# a member of the mapped group keeps it
	chmod 2775 "$WORK/id/g"
	setpriv --reuid=101000 --regid=102000 --clear-groups \
		chmod 2755 "$WORK/id/g"
	[ "$(stat -c %a "$WORK/u/g")" = 2755 ]
}

@test "ACLs through an idmapped layerfs mount name ids of the mount, stored in the filesystem's view" {
	idmap_stack
	idmap_layerfs
	as_user 101000 setfacl -m u:101500:r,g:101600:r "$WORK/id/p"
	run getfacl -n -p "$WORK/u/p"
	[[ $output == *"user:1500:r--"* ]]
	[[ $output == *"group:1600:r--"* ]]
	run getfacl -n -p "$WORK/id/p"
	[[ $output == *"user:101500:r--"* ]]
	[[ $output == *"group:101600:r--"* ]]
	# the ACL grants the mapped user, not the one on disk
	run as_user 101500 cat "$WORK/id/p"
	[ "$output" = private ]
	run as_user 1500 cat "$WORK/id/p"
	[ "$status" = 1 ]
	# an id the mapping does not name: EINVAL, nothing stored
	run as_user 101000 setfacl -m u:5000:r "$WORK/id/p"
	[ "$status" != 0 ]
	[[ $output == *"Invalid argument"* ]]
	run getfacl -n -p "$WORK/u/p"
	[ "$status" = 0 ]
	[[ $output != *"5000"* ]]
	# only the mapped owner may set one
	run as_user 1000 setfacl -m u:101500:rw "$WORK/id/p"
	[ "$status" != 0 ]
	run getfacl -n -p "$WORK/u/p"
	[[ $output == *"user:1500:r--"* ]]
}

@test "an idmapped layerfs mount is made only by root over the superblock, once" {
	idmap_stack
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w"
	"$PROBE" idmap "$WORK/mnt" "$WORK/id"
	mkdir "$WORK/id2" "$WORK/id3"
	# an idmapped mount keeps its mapping (EPERM)
	run "$PROBE" idmap "$WORK/id" "$WORK/id2" "0 200000 65536"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	# root of another user namespace does not own the superblock
	run "$PROBE" userns "$PROBE" idmap "$WORK/mnt" "$WORK/id3" "0 0 1000"
	[ "$status" = 1 ]
	[[ $output == *"Operation not permitted"* ]]
	[ "$(lfs_mounts_under "$WORK/id2" "$WORK/id3")" = "" ]
}

# keepid_stack: layers as an image holds them, owners on disk 0 (the
# system) and 1000 (the user's home): l/etc/conf (0:0 0644),
# l/home/user (1000:1000 0755) with f (1000:1000 0644)
keepid_stack() {
	lfs_workdir ext4
	mktree "$WORK" <<<'f l/etc/conf conf
f l/home/user/f mine
d u
d w
d id'
	chown -R 1000:1000 "$WORK/l/home/user"
}

# the mapping rootless podman's --userns=keep-id makes for uid 1000 with
# subordinate ids from 100000: 0-999 on 100000-100999, 1000 on itself,
# 1001-65535 on 101001-165535, in the format containers-storage gives a
# mount program
KEEPID=0:100000:1000:1000:1000:1:1001:101001:64535

@test "layerfs-mount uidmapping= and gidmapping= idmap the mount: a keep-id user owns its files and writes them as on disk" {
	keepid_stack
	run "$LFS_MOUNT" -o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w,uidmapping=$KEEPID,gidmapping=$KEEPID" "$WORK/mnt"
	[ "$status" = 0 ]
	run owners "$WORK/mnt/etc/conf" "$WORK/mnt/home/user" "$WORK/mnt/home/user/f"
	[ "$output" = "100000:100000
1000:1000
1000:1000" ]
	# the user writes its file and makes one; the container's root its own
	as_user 1000 sh -c "printf more >>'$WORK/mnt/home/user/f'"
	as_user 1000 touch "$WORK/mnt/home/user/new"
	as_user 100000 sh -c "printf more >>'$WORK/mnt/etc/conf'"
	as_user 100000 mkdir "$WORK/mnt/etc/d"
	# but the user not the system's
	run as_user 1000 sh -c "printf x >>'$WORK/mnt/etc/conf'"
	[ "$status" != 0 ]
	[[ $output == *"Permission denied"* ]]
	run owners "$WORK/u/home/user/f" "$WORK/u/home/user/new" \
		"$WORK/u/etc/conf" "$WORK/u/etc/d" "$WORK/u/home/user"
	[ "$output" = "1000:1000
1000:1000
0:0
0:0
1000:1000" ]
	[ "$(tr -d '\n' <"$WORK/u/etc/conf")" = confmore ]
}

@test "layerfs-mount idmaps the mount as root of a user namespace, and mounts nothing on a mapping the kernel refuses" {
	keepid_stack
	# as the namespace of lfs-probe userns sees them: 0 and 1000
	chown -R 100000:100000 "$WORK/l" "$WORK/u" "$WORK/w" "$WORK/mnt"
	chown -R 101000:101000 "$WORK/l/home/user"
	export W=$WORK LFS_MOUNT
	# in the namespace: disk's 0 and 1000 swapped in the mount
	run "$PROBE" userns sh -c '
		"$LFS_MOUNT" -o "lowerdir=$W/l,upperdir=$W/u,workdir=$W/w,uidmapping=0:1000:1:1000:0:1,gidmapping=0:1000:1:1000:0:1" "$W/mnt" || exit 1
		stat -c %u:%g "$W/mnt/etc/conf" "$W/mnt/home/user/f"
		touch "$W/mnt/home/user/byroot"
		setpriv --reuid=1000 --regid=1000 --clear-groups touch "$W/mnt/etc/by1000"'
	[ "$status" = 0 ]
	[ "$output" = "1000:1000
0:0" ]
	# on disk (host ids): the namespace's 1000 and 0, swapped back
	run owners "$WORK/u/home/user/byroot" "$WORK/u/etc/by1000"
	[ "$output" = "101000:101000
100000:100000" ]
	# a MOUNTID that the namespace does not have: refused, nothing mounted
	run "$PROBE" userns sh -c '
		grep -c " $W/mnt " /proc/mounts
		exec "$LFS_MOUNT" -o "lowerdir=$W/l,upperdir=$W/u,workdir=$W/w,uidmapping=0:70000:1,gidmapping=0:0:1" "$W/mnt"'
	[ "$status" = 32 ]
	[[ $output == *"uidmapping=: the kernel refuses the mapping"* ]]
	[ "${lines[0]}" = 0 ]
	# overlapping ranges, as root: refused, nothing mounted either
	run "$LFS_MOUNT" -o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w,uidmapping=0:1000:2:1:2000:1,gidmapping=0:0:1" "$WORK/mnt"
	[ "$status" = 32 ]
	[[ $output == *"uidmapping=: the kernel refuses the mapping"* ]]
	[ "$(lfs_mounts_under "$WORK/mnt")" = "" ]
}

# -N enters a mount namespace whose /proc is another pid namespace's (a
# container's): the helper's child, whose namespace carries the maps, has
# no pid there, or another process's.  The maps are written before -N.
@test "layerfs-mount -N with uidmapping= idmaps the mount in a namespace whose /proc is another pid namespace's" {
	keepid_stack
	unshare -m -p -f --mount-proc --kill-child sleep 60 &
	local pid=$! i
	for ((i = 0; i < 50; i++)); do
		[ "$(nsenter -t "$pid" -m cat /proc/1/comm 2>/dev/null)" = sleep ] && break
		sleep 0.1
	done
	local out rc=0
	out=$("$LFS_MOUNT" -N "$pid" -o "lowerdir=$WORK/l,upperdir=$WORK/u,workdir=$WORK/w,uidmapping=$KEEPID,gidmapping=$KEEPID" "$WORK/mnt" 2>&1) || rc=$?
	run nsenter -t "$pid" -m stat -c %u:%g "$WORK/mnt/etc/conf" "$WORK/mnt/home/user/f"
	kill -KILL "$pid"
	wait "$pid" || true
	[ "$rc" = 0 ] || { echo "$out"; return 1; }
	[ "$output" = "100000:100000
1000:1000" ]
	[ "$(lfs_mounts_under "$WORK/mnt")" = "" ]
}

# Idmapped layers: each test runs the same steps on layerfs and on the
# kernel's overlay (6.1 maps idmapped layers), each with its own upper
# and work directory, and compares what they print.

# on_both STEPS: run the function STEPS with FS=layerfs, then FS=overlay,
# its output in OUT_layerfs and OUT_overlay
on_both() {
	local fs
	for fs in layerfs overlay; do
		FS=$fs
		eval "OUT_$fs=\$($1 2>&1)"
	done
	echo "layerfs:"
	echo "$OUT_layerfs"
	echo "overlay:"
	echo "$OUT_overlay"
}

# try CMD...: CMD's errno-ish result on one line: "ok" or its message's end
try() {
	local out
	if out=$("$@" 2>&1); then
		echo ok
	else
		echo "${out##*: }"
	fi
}

# acl_ids PATH: the named users and groups of PATH's access ACL
acl_ids() {
	local acl
	acl=$(getfacl -n -p "$1")
	grep -E '^(user|group):[0-9]' <<<"$acl"
}

# idmapped lower layer idl (0-65535 shown as 100000-165535), upper on disk
idmapped_lower_steps() {
	local u=$WORK/u-$FS w=$WORK/w-$FS m=$WORK/m-$FS
	mkdir "$u" "$w" "$m"
	mount -t "$FS" none "$m" -o "lowerdir=$WORK/idl,upperdir=$u,workdir=$w"
	owners "$m/f0" "$m/p" "$m/d"
	acl_ids "$m/acl"
	echo "101000 reads p: $(try as_user 101000 cat "$m/p")"
	echo "1000 reads p: $(try as_user 1000 cat "$m/p")"
	echo "101500 reads acl: $(try as_user 101500 cat "$m/acl")"
	echo "1500 reads acl: $(try as_user 1500 cat "$m/acl")"
	echo "101000 appends p: $(try as_user 101000 sh -c "printf more >>'$m/p'")"
	echo "101000 makes d/new: $(try as_user 101000 touch "$m/d/new")"
	echo "root appends f0: $(try sh -c "printf more >>'$m/f0'")"
	echo "root chmods acl: $(try chmod 0644 "$m/acl")"
	echo "root chowns f0 to 1234: $(try chown 1234 "$m/f0")"
	echo "on disk:"
	owners "$u/p" "$u/d/new" "$u/f0" "$u/acl" "$u/d"
	acl_ids "$u/acl"
	umount "$m"
}

@test "an idmapped lower layer gives the mapped owners, and copy-up writes the mapped owner to the upper, as on overlay" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f l/f0 zero
f l/p private
d l/d
f l/acl acl
d idl'
	chown 1000:1000 "$WORK/l/p" "$WORK/l/d"
	chmod 0600 "$WORK/l/p" "$WORK/l/acl"
	setfacl -m u:1500:r,g:1600:r "$WORK/l/acl"
	"$PROBE" idmap "$WORK/l" "$WORK/idl"
	on_both idmapped_lower_steps
	[ "$OUT_layerfs" = "$OUT_overlay" ]
	[ "$OUT_layerfs" = "100000:100000
101000:101000
101000:101000
user:101500:r--
group:101600:r--
101000 reads p: ok
1000 reads p: Permission denied
101500 reads acl: ok
1500 reads acl: Permission denied
101000 appends p: ok
101000 makes d/new: ok
root appends f0: ok
root chmods acl: ok
root chowns f0 to 1234: ok
on disk:
101000:101000
101000:101000
1234:100000
100000:100000
101000:101000
user:101500:r--
group:101600:r--" ]
}

# upper and work directory on an idmapped mount (iduw) that shows 1000
# as 101000 and every other id as itself
idmapped_upper_steps() {
	local m=$WORK/m-$FS
	mkdir "$WORK/uw/u-$FS" "$WORK/uw/w-$FS" "$m"
	mount -t "$FS" none "$m" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/iduw/u-$FS,workdir=$WORK/iduw/w-$FS"
	owners "$m/p" "$m/q" "$m/pub"
	echo "root appends q (101000's): $(try sh -c "printf more >>'$m/q'")"
	echo "root appends p (1000's): $(try sh -c "printf more >>'$m/p'")"
	echo "root makes new: $(try touch "$m/new")"
	echo "101000 makes pub/x: $(try as_user 101000 touch "$m/pub/x")"
	echo "1000 makes pub/y: $(try as_user 1000 touch "$m/pub/y")"
	echo "root chowns new to 101000: $(try chown 101000:101000 "$m/new")"
	echo "root chowns new to 1000: $(try chown 1000 "$m/new")"
	# a link makes no owner: allowed to 1000, which the upper cannot map
	echo "1000 links q to pub/lq: $(try as_user 1000 ln "$m/q" "$m/pub/lq")"
	echo "on disk:"
	local list
	list=$(cd "$WORK/uw/u-$FS" && find . -mindepth 1 -printf '%p %U:%G\n')
	sort <<<"$list"
	umount "$m"
}

@test "an idmapped upper layer takes owners mapped back, and refuses those it cannot map, as on overlay" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f l/p p
f l/q q
f l/r r
d l/pub
d uw
d iduw'
	chown 1000:1000 "$WORK/l/p"
	chown 101000:101000 "$WORK/l/q"
	chmod 0666 "$WORK/l/p" "$WORK/l/q"
	chmod 1777 "$WORK/l/pub"
	"$PROBE" idmap "$WORK/uw" "$WORK/iduw" "0 0 1000,1000 101000 1,1001 1001 64535"
	on_both idmapped_upper_steps
	[ "$OUT_layerfs" = "$OUT_overlay" ]
	[ "$OUT_layerfs" = "1000:1000
101000:101000
0:0
root appends q (101000's): ok
root appends p (1000's): Value too large for defined data type
root makes new: ok
101000 makes pub/x: ok
1000 makes pub/y: Value too large for defined data type
root chowns new to 101000: ok
root chowns new to 1000: Value too large for defined data type
1000 links q to pub/lq: ok
on disk:
./new 1000:1000
./pub 0:0
./pub/lq 1000:1000
./pub/x 1000:1000
./q 1000:1000" ]
	# an owner the upper mount cannot map is refused before the copy-up,
	# so the upper layer stays as it was (overlay copies r up, then fails)
	mkdir "$WORK/uw/u-2" "$WORK/uw/w-2" "$WORK/m-2"
	mount -t layerfs none "$WORK/m-2" \
		-o "lowerdir=$WORK/l,upperdir=$WORK/iduw/u-2,workdir=$WORK/iduw/w-2"
	run chown 1000 "$WORK/m-2/r"
	[ "$status" = 1 ]
	[[ $output == *"Value too large for defined data type" ]]
	run chgrp 1000 "$WORK/m-2/r"
	[ "$status" = 1 ]
	[[ $output == *"Value too large for defined data type" ]]
	[ ! -e "$WORK/uw/u-2/r" ]
	[ "$(owners "$WORK/m-2/r")" = 0:0 ]
}
