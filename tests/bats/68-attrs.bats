#!/usr/bin/env bats
# Who may change what through a writable mount: POSIX ACLs (only the
# owner; default ACLs only on directories; S_ISGID dropped as a plain
# filesystem drops it), chmod's S_ISGID, the xattr namespaces (trusted.*
# and security.* only for the privileged, and trusted.* not even listed
# for others), and the inode flags of lsattr/chattr (a copy-up keeps
# them; append-only and immutable of an upper object live in overlay's
# protattr marker).  A refused change copies nothing up.
#
# setup_file builds one lower layer on ext4 (which has ACLs and inode
# flags), a plain reference tree made the same way, and mounts layerfs
# and the kernel's overlay over the lower layer, each with its own upper
# layer on ext4: the same steps on the three show what a plain filesystem
# and overlay do.

load lib
load lib-write

T=$LFS_EXT4/attrs
L=$T/L
# the mounts: layerfs and overlay, and their upper layers
LM=$T/lm LU=$T/lu OM=$T/om OU=$T/ou

# a file capability as setcap writes it: revision 2, effective,
# cap_net_raw permitted
CAP=0x0100000200200000000000000000000000000000

# xattr values of ACLs (little-endian: version 2, then tag, perm, id):
# user::rw-,user:2000:r--,group::r--,mask::r--,other::---
ACL_U2000=0x0200000001000600ffffffff02000400d007000004000400ffffffff10000400ffffffff20000000ffffffff
# a default ACL: user::rwx,user:2000:rwx,group::r-x,mask::rwx,other::---
DACL_U2000=0x0200000001000700ffffffff02000700d007000004000500ffffffff10000700ffffffff20000000ffffffff
# the same without the mask: not a valid ACL
ACL_NOMASK=0x0200000001000600ffffffff02000400d007000004000400ffffffff20000000ffffffff

# the files of the lower layer and of the reference, under ROOT
test_files() {
	local r=$1
	cat <<EOF
f $r/secret s
m $r/secret 0600
d $r/rootdir
f $r/own o
u $r/own 1000 1000
m $r/own 0640
f $r/own2 o
u $r/own2 1000 1000
d $r/owndir
u $r/owndir 1000 1000
f $r/sg g
u $r/sg 1000 2000
m $r/sg 2770
f $r/sgin g
u $r/sgin 1000 1000
m $r/sgin 2770
f $r/sgmod g
u $r/sgmod 1000 2000
m $r/sgmod 0755
f $r/x x
u $r/x 1000 1000
m $r/x 0666
a $r/x trusted.t tv
a $r/x user.u uv
f $r/xr x
u $r/xr 1000 1000
a $r/xr trusted.t tv
a $r/xr security.capability $CAP
f $r/capr c
f $r/fa/a a
f $r/fa/i i
f $r/fa/AS as
f $r/fa/o o
u $r/fa/o 1000 1000
f $r/fa/o2 o
u $r/fa/o2 1000 1000
f $r/fa/o3 o
f $r/fa/ia ia
f $r/fa/idir/f f
f $r/inh/f f
f $r/inh/d/f f
a $r/inh system.posix_acl_default $DACL_U2000
f $r/sgd/f f
f $r/sgd/d/f f
u $r/sgd 0 2000
m $r/sgd 2775
EOF
}

setup_file() {
	rm -rf "$T"
	{
		test_files L
		test_files R
		printf 'd %s\n' lm lu lw om ou ow
	} | mktree "$T"
	chmod 755 "$LFS_EXT4" "$T"
	chattr +a "$L/fa/a" "$L/fa/ia"
	chattr +i "$L/fa/i" "$L/fa/idir"
	chattr +AS "$L/fa/AS"
	mount -t layerfs none "$LM" -o "lowerdir=$L,upperdir=$LU,workdir=$T/lw"
	mount -t overlay none "$OM" -o "lowerdir=$L,upperdir=$OU,workdir=$T/ow"
}

teardown_file() {
	umount "$LM" "$OM" || :
	chattr -R -f -i -a "$T" || :
	rm -rf "$T"
}

@test "setfacl on a file the caller does not own is refused and copies nothing up, as on overlay" {
	local m
	for m in "$LM" "$OM"; do
		run as_user 1000 setfacl -m u:1000:rw "$m/secret"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		run as_user 1000 setfattr -x system.posix_acl_access "$m/secret"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		run as_user 1000 setfacl -d -m u:1000:rwx "$m/rootdir"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		run as_user 1000 cat "$m/secret"
		[ "$status" = 1 ]
		[[ $output == *"Permission denied"* ]]
	done
	[ ! -e "$LU/secret" ]
	[ ! -e "$LU/rootdir" ]
	[ ! -e "$OU/secret" ]
}

@test "the owner sets and removes ACLs; a default ACL only on a directory; a bad ACL is refused before copy-up" {
	local m
	for m in "$LM" "$OM"; do
		as_user 1000 setfacl -m u:2000:r "$m/own"
		run getfacl -cp "$m/own"
		[ "$status" = 0 ]
		[[ $output == *"user:2000:r--"* ]]
		run as_user 1000 setfattr -n system.posix_acl_default -v "$ACL_U2000" "$m/own"
		[ "$status" = 1 ]
		[[ $output == *"Permission denied"* ]]
		as_user 1000 setfacl -d -m u:2000:rx "$m/owndir"
		run getfacl -cp "$m/owndir"
		[ "$status" = 0 ]
		[[ $output == *"default:user:2000:r-x"* ]]
		as_user 1000 setfattr -x system.posix_acl_access "$m/own"
		run getfattr -n system.posix_acl_access "$m/own"
		[ "$status" = 1 ]
		[[ $output == *"No such attribute"* ]]
		run as_user 1000 setfattr -n system.posix_acl_access -v "$ACL_NOMASK" "$m/own2"
		[ "$status" = 1 ]
		[[ $output == *"Invalid argument"* ]]
		run as_user 1000 setfattr -n system.posix_acl_access -v 0x0200 "$m/own2"
		[ "$status" = 1 ]
		[[ $output == *"Invalid argument"* ]]
	done
	# the upper copies as the mount showed them
	run getfacl -cp "$LU/owndir"
	[ "$status" = 0 ]
	[[ $output == *"default:user:2000:r-x"* ]]
	run getfattr -n system.posix_acl_access "$LU/own"
	[ "$status" = 1 ]
	[[ $output == *"No such attribute"* ]]
	# (overlay checks the ACL's validity only after its copy-up)
	[ ! -e "$LU/own2" ]
}

@test "an access ACL set by an owner outside the file's group drops setgid, as on a plain filesystem and overlay" {
	local d modes=
	for d in "$T/R" "$LM" "$OM"; do
		as_user 1000 setfacl -m u:3000:r "$d/sg" "$d/sgin"
		run stat -c %a "$d/sg" "$d/sgin"
		[ "$status" = 0 ]
		modes+=${output//$'\n'/ }$'\n'
	done
	same_text "modes of sg and sgin in the reference, layerfs and overlay" \
		"$modes" "770 2770
770 2770
770 2770
"
	run stat -c %a "$LU/sg" "$LU/sgin"
	[ "$status" = 0 ]
	[ "$output" = "770
2770" ]
}

@test "chmod g+s by an owner outside the file's group gives no setgid, as on a plain filesystem and overlay" {
	run_ops <<EOF
become 1000 1000
chmod $T/R/sgmod 2755
mode $T/R/sgmod => 755
chmod $LM/sgmod 2755
mode $LM/sgmod => 755
mode $LU/sgmod => 755
chmod $OM/sgmod 2755
mode $OM/sgmod => 755
EOF
}

@test "what replaces a removed lower object inherits the default ACL and set-group-ID of its directory, as on a plain filesystem and overlay" {
	local d got=()
	for d in "$T/R" "$LM" "$OM"; do
		rm -r "$d/inh/f" "$d/inh/d" "$d/sgd/f" "$d/sgd/d"
		# the umask is what a default ACL replaces
		(
			umask 077
			echo n >"$d/inh/f"
			mkdir "$d/inh/d"
			echo n >"$d/sgd/f"
			mkdir "$d/sgd/d"
		)
		cd "$d"
		run stat -c '%n %a %u:%g' inh/f inh/d sgd/f sgd/d
		[ "$status" = 0 ]
		got+=("$output")
		run getfacl -cp inh/f inh/d
		[ "$status" = 0 ]
		got+=("$output")
		cd /
	done
	same_text "modes and owners in the reference" "${got[0]}" 'inh/f 660 0:0
inh/d 770 0:0
sgd/f 600 0:2000
sgd/d 2700 0:2000'
	same_text "modes and owners on layerfs" "${got[2]}" "${got[0]}"
	same_text "modes and owners on overlay" "${got[4]}" "${got[0]}"
	[[ ${got[1]} == *"default:user:2000:rwx"* ]]
	same_text "ACLs on layerfs" "${got[3]}" "${got[1]}"
	same_text "ACLs on overlay" "${got[5]}" "${got[1]}"
}

@test "trusted.* and security.* stay with the privileged: not read, listed, set or removed by others" {
	local m out=() n=0
	for m in "$LM" "$OM"; do
		run_ops "$m" <<EOF
become 1000 1000
getxattr x user.u => uv
getxattr x trusted.t => ENODATA
setxattr xr trusted.n v => EPERM
removexattr xr trusted.t => EPERM
setxattr xr security.n v => EPERM
removexattr xr security.capability => EPERM
setxattr x user.n nv
EOF
		run as_user 1000 setfattr -n security.capability -v "$CAP" "$m/xr"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		setfattr -n security.capability -v "$CAP" "$m/capr"
		# (in the order of the names, which listxattr does not keep)
		cd "$m"
		run as_user 1000 getfattr -d -m - x
		[ "$status" = 0 ]
		out[n++]=$(sort <<<"$output")
		run getfattr -d -m - x
		[ "$status" = 0 ]
		out[n++]=$(sort <<<"$output")
		cd /
	done
	same_text "the names uid 1000 lists" "${out[0]}" '# file: x
user.n="nv"
user.u="uv"'
	same_text "the names root lists" "${out[1]}" '# file: x
trusted.t="tv"
user.n="nv"
user.u="uv"'
	same_text "the names uid 1000 lists on overlay" "${out[2]}" "${out[0]}"
	same_text "the names root lists on overlay" "${out[3]}" "${out[1]}"
	[ ! -e "$LU/xr" ]
	run getfattr -e hex -n security.capability "$LU/capr"
	[ "$status" = 0 ]
	[[ $output == *"security.capability=$CAP"* ]]
}

@test "the markers, trusted.overlay.*, are not supported through the mount (read, set, remove) and copy nothing up, as on overlay" {
	local m before
	# (earlier tests copied some of these up already)
	before=$("$PROBE" meta "$LU"; "$PROBE" meta "$OU")
	for m in "$LM" "$OM"; do
		echo "# $m"
		run_ops "$m" <<EOT
getxattr rootdir trusted.overlay.opaque => EOPNOTSUPP
getxattr own trusted.overlay.origin => EOPNOTSUPP
setxattr rootdir trusted.overlay.opaque y => EOPNOTSUPP
setxattr own trusted.overlay.redirect /secret => EOPNOTSUPP
removexattr own trusted.overlay.origin => EOPNOTSUPP
removexattr rootdir trusted.overlay.lfs.origin => EOPNOTSUPP
EOT
	done
	same_text "the upper layers" "$("$PROBE" meta "$LU"; "$PROBE" meta "$OU")" "$before"
}

@test "lsattr shows the lower flags; they refuse writes; a copy-up keeps them, as on overlay" {
	local m flags l
	l=$(lsattr "$L/fa/a" "$L/fa/i" "$L/fa/AS")
	for m in "$LM" "$OM"; do
		flags=$(lsattr "$m/fa/a" "$m/fa/i" "$m/fa/AS")
		same_text "flags of the lower layer and $m" "${l//$L/}" "${flags//$m/}"
		# an append copies ia up, a write to a file in it copies idir up
		run_ops "$m/fa" <<EOF
write i x => EPERM
write a x => EPERM
truncate a 0 => EPERM
unlink a => EPERM
chmod AS 600
read i => i
append ia +x
write ia x => EPERM
unlink ia => EPERM
write idir/f g
create idir/new => EPERM
unlink idir/f => EPERM
EOF
		flags=$(lsattr -d "$m/fa/ia" "$m/fa/idir")
		[[ ${flags%%$'\n'*} == *a*" $m/fa/ia" ]]
		[[ ${flags##*$'\n'} == *i*" $m/fa/idir" ]]
	done
	# sync and noatime on the copy, append-only and immutable in a marker
	for m in "$LU" "$OU"; do
		flags=$(lsattr "$m/fa/AS")
		same_text "flags of the lower and the upper AS" "${l##*$'\n'}" "${flags//$m/$L}"
		run getfattr --absolute-names -n trusted.overlay.protattr --only-values "$m/fa/ia" "$m/fa/idir"
		[ "$status" = 0 ]
		[ "$output" = ai ]
	done
	[ ! -e "$LU/fa/i" ]
	[ ! -e "$LU/fa/a" ]
}

@test "chattr: the owner sets flags on the upper copy, append-only and immutable need CAP_LINUX_IMMUTABLE, others are refused" {
	local m flags
	for m in "$LM" "$OM"; do
		as_user 1000 chattr +A "$m/fa/o"
		run as_user 1000 chattr +a "$m/fa/o"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		run as_user 2000 chattr +A "$m/fa/o2"
		[ "$status" = 1 ]
		[[ $output == *"Operation not permitted"* ]]
		chattr +a "$m/fa/o3"
		chattr -i "$m/fa/i"
		run_ops "$m/fa" <<EOF
write o3 x => EPERM
append o3 +x
read o3 => o+x
write i new
read i => new
EOF
	done
	for m in "$LU" "$OU"; do
		flags=$(lsattr "$m/fa/o" "$m/fa/o3")
		[[ ${flags%%$'\n'*} == *A*" $m/fa/o" ]]
		[[ ${flags##*$'\n'} != *a*" $m/fa/o3" ]]
		run getfattr --absolute-names -n trusted.overlay.protattr --only-values "$m/fa/o3"
		[ "$status" = 0 ]
		[ "$output" = a ]
		[ ! -e "$m/fa/o2" ]
	done
	# the marker holds across a remount; chattr -a removes it
	umount "$LM"
	mount -t layerfs none "$LM" -o "lowerdir=$L,upperdir=$LU,workdir=$T/lw"
	flags=$(lsattr "$LM/fa/o3")
	[[ $flags == *a*" $LM/fa/o3" ]]
	run_ops "$LM/fa" <<EOF
write o3 x => EPERM
read $L/fa/i => i
write $L/fa/i x => EPERM
EOF
	chattr -a "$LM/fa/o3"
	run getfattr -n trusted.overlay.protattr "$LU/fa/o3"
	[ "$status" = 1 ]
	[[ $output == *"No such attribute"* ]]
	run_ops "$LM/fa" <<EOF
write o3 y
EOF
}
