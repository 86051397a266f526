#!/usr/bin/env bats
# layerfs-mount's command line, on the host.  Nothing is mounted here (the
# module is never loaded into the host's kernel): --dry-run prints the
# fsconfig calls the options turn into, which is what these tests read.
# The guest suites (12-mount-helper, 80-podman) mount for real.

setup() {
	REPO=$(cd "$BATS_TEST_DIRNAME/../../.." && pwd)
	M=$REPO/build/bin/layerfs-mount
}

@test "layerfs-mount --version and --help answer and exit 0" {
	run "$M" --version
	[ "$status" = 0 ]
	[[ $output == "layerfs-mount "[0-9]* ]]
	run "$M" --help
	[ "$status" = 0 ]
	[[ $output == *"--lower DIR"* ]]
}

@test "bad usage exits 1, bad options exit 32, each with the reason" {
	run "$M"
	[ "$status" = 1 ]
	[[ ${lines[0]} == "usage: layerfs-mount [OPTIONS] TARGET" ]]
	run "$M" --bogus /mnt
	[ "$status" = 1 ]
	run "$M" -o lowerdir=/a a b c
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: c: one operand too many" ]
	run "$M" -L /nonexistent/list /mnt
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: /nonexistent/list: No such file or directory" ]
	run "$M" /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: no lower layer given" ]
	run "$M" -o lowerdir= /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: lowerdir=: layer 1 is an empty path" ]
	# "::" starts the data-only layers; a third colon leaves a layer empty
	run "$M" -o lowerdir=/a:::/b /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: lowerdir=: layer 2 is an empty path" ]
	run "$M" -o lowerdir=/a:: /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: lowerdir=: layer 2 is an empty path" ]
	run "$M" -o lowerdir=/a,lowerdir=/b /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: lowerdir= given twice" ]
	run "$M" -o lowerdir=/a,upperdir=,workdir=/w /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: upperdir=: empty path" ]
}

@test "without the module, the mount fails with exit 32 and says so" {
	! grep -qw layerfs /proc/filesystems || skip "layerfs is registered on this host"
	run "$M" -o lowerdir=/ /nonexistent
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: fsopen(layerfs): No such device (is the layerfs module loaded?)" ]
}

@test "a container engine's option string becomes one lowerdir+ per layer, volatile goes to the kernel" {
	local home=/var/lib/containers/storage/overlay id=0123abcd i lower=
	for ((i = 1; i <= 500; i++)); do
		lower+=${lower:+:}$home/l/LAYER$i
	done
	run "$M" --dry-run -o "lowerdir=$lower,upperdir=$home/$id/diff,workdir=$home/$id/work,volatile" "$home/$id/merged"
	[ "$status" = 0 ]
	[ "${#lines[@]}" = 505 ]
	[ "${lines[0]}" = "fsconfig source=layerfs" ]
	for ((i = 1; i <= 500; i++)); do
		[ "${lines[i]}" = "fsconfig lowerdir+=$home/l/LAYER$i" ] || {
			echo "line $i: ${lines[i]}"
			return 1
		}
	done
	[ "${lines[501]}" = "fsconfig upperdir=$home/$id/diff" ]
	[ "${lines[502]}" = "fsconfig workdir=$home/$id/work" ]
	[ "${lines[503]}" = "fsconfig volatile" ]
	[ "${lines[504]}" = "move_mount $home/$id/merged attr_set=0x0 attr_clr=0x0" ]
}

@test "options go to the kernel in the order given, unknown ones as they are" {
	run "$M" --dry-run -o "whiteout=aufs,lowerdir=/a:/b,upperdir=/u,workdir=/w,nameindex=off,userxattr" /m
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig whiteout=aufs
		fsconfig lowerdir+=/a
		fsconfig lowerdir+=/b
		fsconfig upperdir=/u
		fsconfig workdir=/w
		fsconfig nameindex=off
		fsconfig userxattr
		move_mount /m attr_set=0x0 attr_clr=0x0
	EOF
}

@test "relative layer, upper and work paths resolve against the working directory" {
	cd "$BATS_TEST_TMPDIR"
	run "$M" --dry-run -l top -o "lowerdir=l/a:./l/b:/abs,upperdir=u,workdir=../w" mnt
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-EOF
		fsconfig source=layerfs
		fsconfig lowerdir+=$BATS_TEST_TMPDIR/top
		fsconfig lowerdir+=$BATS_TEST_TMPDIR/l/a
		fsconfig lowerdir+=$BATS_TEST_TMPDIR/./l/b
		fsconfig lowerdir+=/abs
		fsconfig upperdir=$BATS_TEST_TMPDIR/u
		fsconfig workdir=$BATS_TEST_TMPDIR/../w
		move_mount mnt attr_set=0x0 attr_clr=0x0
	EOF
}

@test "backslash escapes and double quotes are read as overlay and mount(8) write them" {
	run "$M" --dry-run -o 'lowerdir=/a\:b:/c\,d:/e\\f:/g h,upperdir=/u\,1,workdir=/w\:2,context="x,y",k=\"' /m
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig lowerdir+=/a:b
		fsconfig lowerdir+=/c,d
		fsconfig lowerdir+=/e\f
		fsconfig lowerdir+=/g h
		fsconfig upperdir=/u,1
		fsconfig workdir=/w:2
		fsconfig context=x,y
		fsconfig k="
		move_mount /m attr_set=0x0 attr_clr=0x0
	EOF
}

@test "mount attributes go to fsmount, mount(8)'s own options are dropped" {
	run "$M" --dry-run -o 'lowerdir=/a,nosuid,nodev,noexec,noatime,relatime,nodiratime,x-systemd.foo,defaults,nofail,_netdev,comment=x,ro' /m
	[ "$status" = 0 ]
	# 0x1 rdonly, 0x2 nosuid, 0x4 nodev, 0x8 noexec, 0x80 nodiratime;
	# relatime (0) replaced noatime (0x10) in the atime field
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig lowerdir+=/a
		fsconfig ro
		move_mount /m attr_set=0x8f attr_clr=0x0
	EOF
	run "$M" --dry-run -r -o 'lowerdir=/a,ro,rw,noatime' /m
	[ "$status" = 0 ]
	[ "${lines[2]}" = "fsconfig rw" ]
	[ "${lines[3]}" = "move_mount /m attr_set=0x10 attr_clr=0x0" ]
}

@test "layers from -l and -L (a file, or - for stdin) come top first" {
	printf '%s\n' /f1 '' /f2 >"$BATS_TEST_TMPDIR/list"
	run "$M" --dry-run -l /l1 -L "$BATS_TEST_TMPDIR/list" -L - -o lowerdir+=/o /m <<<'/s1'
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig lowerdir+=/l1
		fsconfig lowerdir+=/f1
		fsconfig lowerdir+=/f2
		fsconfig lowerdir+=/s1
		fsconfig lowerdir+=/o
		move_mount /m attr_set=0x0 attr_clr=0x0
	EOF
}

@test "--by-fd passes the directories as descriptors, the other options as strings" {
	run "$M" --dry-run --by-fd -l /l1 -o 'lowerdir=/a\:b,upperdir=/u\,1,workdir=/w,volatile' /m
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig lowerdir+=<descriptor of /l1>
		fsconfig lowerdir+=<descriptor of /a:b>
		fsconfig upperdir=<descriptor of /u,1>
		fsconfig workdir=<descriptor of /w>
		fsconfig volatile
		move_mount /m attr_set=0x0 attr_clr=0x0
	EOF
}

@test "installed as mount.layerfs it takes mount(8)'s argument order and flags" {
	ln -s "$M" "$BATS_TEST_TMPDIR/mount.layerfs"
	local h=$BATS_TEST_TMPDIR/mount.layerfs
	run "$h" --version
	[ "$status" = 0 ]
	[[ $output == "mount.layerfs "[0-9]* ]]
	# SOURCE TARGET, then mount(8)'s flags and options, in any order
	run "$h" none /mnt -s -n -v -o lowerdir=/a:/b,rw -t layerfs --dry-run
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=none
		fsconfig lowerdir+=/a
		fsconfig lowerdir+=/b
		fsconfig rw
		move_mount /mnt attr_set=0x0 attr_clr=0x0
	EOF
	POSIXLY_CORRECT=1 run "$h" none /mnt -o lowerdir=/a --dry-run
	[ "$status" = 0 ]
	[ "${lines[1]}" = "fsconfig lowerdir+=/a" ]
	run "$h" none
	[ "$status" = 32 ]
	[ "$output" = "mount.layerfs: no lower layer given" ]
}

@test "-o remount changes flags and attributes, not layers" {
	run "$M" --dry-run none /m -o remount,ro,nosuid,strictatime
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig ro
		mount_setattr /m attr_set=0x23 attr_clr=0x73
	EOF
}

@test "in a containers-storage home with a mount program, whiteout=aufs is the default" {
	cd "$BATS_TEST_TMPDIR"
	local o='lowerdir=/s/l/A:/s/l/B,upperdir=/s/C/diff,workdir=/s/C/work'
	# no marker, or "false": nothing added
	run "$M" --dry-run -o "$o" /s/C/merged
	[ "$status" = 0 ]
	[[ $output != *whiteout* ]]
	printf false >.has-mount-program
	run "$M" --dry-run -o "$o" /s/C/merged
	[ "$status" = 0 ]
	[[ $output != *whiteout* ]]
	# containers-storage writes "true": the read-only mounts of podman
	# diff and commit ("ro" and layers only) get it too, first
	printf true >.has-mount-program
	run "$M" --dry-run -o "ro,lowerdir=/s/C/diff:/s/l/A" /s/C/merged
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		fsconfig source=layerfs
		fsconfig whiteout=aufs
		fsconfig lowerdir+=/s/C/diff
		fsconfig lowerdir+=/s/l/A
		fsconfig ro
		move_mount /s/C/merged attr_set=0x1 attr_clr=0x0
	EOF
	# a format given wins, and is not doubled
	run "$M" --dry-run -o "lowerdir=/a,whiteout=native" /m
	[ "$status" = 0 ]
	[ "$(grep -c whiteout <<<"$output")" = 1 ]
	[ "${lines[2]}" = "fsconfig whiteout=native" ]
	run "$M" --dry-run -o "whiteout=aufs,$o" /s/C/merged
	[ "$status" = 0 ]
	[ "$(grep -c whiteout <<<"$output")" = 1 ]
	# not on a remount
	run "$M" --dry-run none /m -o remount,ro
	[ "$status" = 0 ]
	[[ $output != *whiteout* ]]
}

@test "--commit takes one mount point and no layers or mount options; it refuses what is not layerfs" {
	run "$M" --commit
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: --commit takes one MOUNTPOINT" ]
	run "$M" --commit /a /b
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: --commit takes one MOUNTPOINT" ]
	for opts in "-o lowerdir=/a" "-l /a" "-o ro" "-r" "-o remount" "-f" "-s" "--dry-run"; do
		# shellcheck disable=SC2086
		run "$M" --commit $opts /mnt
		[ "$status" = 1 ]
		[ "$output" = "layerfs-mount: --commit takes no layers, options, -f, -s or --dry-run: it mounts nothing" ]
	done
	run "$M" --commit /nonexistent
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: /nonexistent: No such file or directory" ]
	run "$M" --commit "$BATS_TEST_TMPDIR"
	[ "$status" = 1 ]
	[[ $output == "layerfs-mount: $BATS_TEST_TMPDIR: not a layerfs mount (filesystem type 0x"*")" ]]
	run "$M" --help
	[ "$status" = 0 ]
	[[ $output == *"--commit [-v] [-N NS] MOUNTPOINT"* ]]
}

@test "uidmapping= and gidmapping= in fuse-overlayfs's format become the idmapping's maps, bad ones exit 32 with the reason" {
	run "$M" --dry-run -o lowerdir=/a,uidmapping=0:100000:1000:1000:1000:1:1001:101001:64535,gidmapping=0:100000:65536 /mnt
	[ "$status" = 0 ]
	[ "${lines[2]}" = "idmap uid_map=0 100000 1000,1000 1000 1,1001 101001 64535 gid_map=0 100000 65536" ]
	local bad=(
		"uidmapping=0:1:2:3,gidmapping=0:1:1|uidmapping=0:1:2:3: not ID:MOUNTID:COUNT triples of decimal ids"
		"uidmapping=0:1:0,gidmapping=0:1:1|uidmapping=0:1:0: a range of no ids, or past 4294967294"
		"uidmapping=4294967290:1:6,gidmapping=0:1:1|uidmapping=4294967290:1:6: a range of no ids, or past 4294967294"
		"uidmapping=0:-1:1,gidmapping=0:1:1|uidmapping=0:-1:1: not ID:MOUNTID:COUNT triples of decimal ids"
		"uidmapping=0:1:1,gidmapping=|gidmapping=: not ID:MOUNTID:COUNT triples of decimal ids"
		"uidmapping=0:1:1|uidmapping= and gidmapping= go together"
		"uidmapping=0:1:1,gidmapping=0:1:1,gidmapping=0:1:1|gidmapping=0:1:1: given twice"
		"remount,uidmapping=0:1:1,gidmapping=0:1:1|uidmapping=, gidmapping=: only for a new mount (a mount keeps its idmapping)"
	)
	local c opts msg
	for c in "${bad[@]}"; do
		IFS='|' read -r opts msg <<<"$c"
		run "$M" --dry-run -o "lowerdir=/a,$opts" /mnt
		[ "$status" = 32 ] || { echo "$opts: $status"; return 1; }
		[ "$output" = "layerfs-mount: $msg" ] || { echo "$opts: $output"; return 1; }
	done
}

# podman --userns=auto: podman, root of its user namespace, makes files in
# the container's root before the container runs, and its id is none of
# the mapping's MOUNTIDs
@test "in a user namespace the caller's own id joins a mapping that lacks it: as 65534 where free, else past the map; not where the map has it, nor outside a user namespace" {
	command -v unshare >/dev/null || skip "no unshare(1)"
	unshare -Ur true || skip "no user namespaces here"
	run unshare -Ur "$M" --dry-run -o lowerdir=/a,uidmapping=:0:1:1000,gidmapping=:0:1:65535 /mnt
	[ "$status" = 0 ]
	[ "${lines[2]}" = "idmap uid_map=0 1 1000,65534 0 1 gid_map=0 1 65535,65535 0 1" ]
	# keep-id's map names the caller (MOUNTID 0): as given
	run unshare -Ur "$M" --dry-run -o lowerdir=/a,uidmapping=:0:1:1000:1000:0:1,gidmapping=:0:1:1000:1000:0:1 /mnt
	[ "$status" = 0 ]
	[ "${lines[2]}" = "idmap uid_map=0 1 1000,1000 0 1 gid_map=0 1 1000,1000 0 1" ]
	# the initial namespace: as given (an id past the map may be a user's)
	run "$M" --dry-run -o lowerdir=/a,uidmapping=:0:1:1000,gidmapping=:0:1:1000 /mnt
	[ "$status" = 0 ]
	[ "${lines[2]}" = "idmap uid_map=0 1 1000 gid_map=0 1 1000" ]
}

@test "uidmapping= with the colon containers-storage writes first is taken; any other empty field is refused, not skipped" {
	# containers-storage's optsAppendMappings writes "uidmapping=" and then ":" before every triple
	run "$M" --dry-run -o lowerdir=/a,uidmapping=:0:1:1000:1000:0:1:1001:1001:64536,gidmapping=:0:1:1000 /mnt
	[ "$status" = 0 ]
	[ "${lines[2]}" = "idmap uid_map=0 1 1000,1000 0 1,1001 1001 64536 gid_map=0 1 1000" ]
	local why="an empty field (only the first may be, as containers-storage writes it)"
	local v
	for v in 0::100000:65536 0:100000:65536: ::0:100000:65536 0:1:1::2:3:4 0:1:1:2::3:4 :; do
		run "$M" --dry-run -o "lowerdir=/a,uidmapping=$v,gidmapping=0:1:1" /mnt
		[ "$status" = 32 ] || { echo "$v: $status $output"; return 1; }
		[ "$output" = "layerfs-mount: uidmapping=$v: $why" ] || { echo "$v: $output"; return 1; }
	done
}

@test "an idmapping whose uid_map text is 4096 bytes or more is refused with the reason, one just below is taken" {
	# each triple becomes a line of 24 bytes: "1000000NNN 2000000NNN 1\n"
	local i map=""
	for ((i = 0; i < 170; i++)); do
		map+=":$((1000000000 + i)):$((2000000000 + i)):1"
	done
	run "$M" --dry-run -o "lowerdir=/a,uidmapping=$map,gidmapping=0:1:1" /mnt
	[ "$status" = 0 ]
	for ((; i < 171; i++)); do
		map+=":$((1000000000 + i)):$((2000000000 + i)):1"
	done
	run "$M" --dry-run -o "lowerdir=/a,uidmapping=$map,gidmapping=0:1:1" /mnt
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: uidmapping=$map: the map text is 4096 bytes or more, which the kernel refuses" ]
}

# A writable mount gets metacopy=on where no one but root can change its
# layers: every directory down to one that only root may search is root's
# and writable by no one else unless sticky.  The kernel's default is off.
@test "metacopy=on is added for a writable mount over layers that are root's alone, not otherwise" {
	local d p o x opts
	# outside BATS_TEST_TMPDIR, whose bats directories are 0700: private
	d=$(mktemp -d /tmp/lfs-mc.XXXXXX)
	MC_DIR=$d
	p=$d/private
	o=$d/open
	mkdir -p "$p/l1" "$p/l2" "$p/d" "$o/l1" "$d/u" "$d/w"
	chmod 755 "$d" "$o"
	chmod 700 "$p"
	opts=",upperdir=$d/u,workdir=$d/w"
	run "$M" --dry-run -o "lowerdir=$p/l1:$p/l2::$p/d$opts" /mnt
	[ "$status" = 0 ]
	[ "${lines[-2]}" = "fsconfig metacopy=on" ]
	# without an upper layer, with metacopy=, verity=, userxattr or
	# redirect_dir=nofollow given: none added
	for x in "" ",metacopy=off" ",verity=on" ",userxattr" ",redirect_dir=nofollow"; do
		run "$M" --dry-run -o "lowerdir=$p/l1${x:+$opts}$x" /mnt
		[ "$status" = 0 ]
		[[ $output != *"metacopy=on"* ]] || { echo "$x: $output"; return 1; }
	done
	# a layer that others can reach, a directory on the way that is not
	# root's, or that others may write (not sticky): none added
	run "$M" -v --dry-run -o "lowerdir=$p/l1:$o/l1$opts" /mnt
	[ "$status" = 0 ]
	[[ $output != *"metacopy=on"* ]]
	[[ $output == *"$o/l1: not root's alone: metacopy stays off"* ]]
	chmod 700 "$o"
	chown 1000 "$o"
	run "$M" --dry-run -o "lowerdir=$o/l1$opts" /mnt
	[ "$status" = 0 ]
	[[ $output != *"metacopy=on"* ]]
	chown 0 "$o"
	chmod 770 "$d"
	run "$M" --dry-run -o "lowerdir=$p/l1$opts" /mnt
	[ "$status" = 0 ]
	[[ $output != *"metacopy=on"* ]]
	# sticky and others-writable, as /tmp: root's entries stay root's
	chmod 1777 "$d"
	run "$M" --dry-run -o "lowerdir=$p/l1:$o/l1$opts" /mnt
	[ "${lines[-2]}" = "fsconfig metacopy=on" ]
}

teardown() {
	[ -z "${MC_DIR:-}" ] || rm -rf "$MC_DIR"
}
