#!/usr/bin/env bats
# userxattr: the markers are user.overlay.* xattrs, in every layer; what
# would trust them beyond hiding names (redirects, the hard-link index,
# origin markers, the native whiteout) is off, and an option asking for it
# fails the mount (docs/write-side.md, docs/security.md).  6.1's tmpfs
# keeps no user.* xattrs: the layers are on the ext4 scratch disk.

load lib
load lib-write

teardown() {
	lfs_cleanup
}

# umount_x MNT LOWERS [OPTS]: mount layerfs with userxattr on MNT, LOWERS
# a lowerdir= list, OPTS more options (",upperdir=...")
umount_x() {
	mount -t layerfs none "$1" -o "lowerdir=$2,userxattr${3:-}"
}

# upper_opts: upperdir= and workdir= of this test's upper layer
upper_opts() {
	echo ",upperdir=$WORK/u,workdir=$WORK/w"
}

@test "userxattr shows in /proc/mounts, with the chardev whiteouts it implies" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/a a
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts),redirect_dir=nofollow,index=off"
	opts_of "$WORK/mnt"
	echo "$OPTS"
	[[ $OPTS == *,whiteout=chardev,redirect_dir=nofollow,index=off,userxattr ]]
	[ ! -e "$WORK/w/index" ]
}

@test "what the mount writes is user.overlay.*: whiteouts are 0/0 devices, no trusted.overlay.* and no origin marker; a copy keeps trusted.overlay.* data, not user.overlay.* markers" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/d/x x
f L0/d/y y
d L0/e
f L0/f old
f L0/g g
f L0/c c
a L0/c trusted.overlay.data tv
a L0/c user.overlay.data uv
a L0/c user.plain pv
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	run_ops "$WORK/mnt" <<-'EOF'
	unlink d/x
	write f new
	rmdir e
	mkdir e
	chmod c 0600
	EOF
	chattr +a "$WORK/mnt/g"
	run_ops "$WORK/u" <<-'EOF'
	kind d/x => chr-whiteout
	getxattr e user.overlay.opaque => y
	getxattr g user.overlay.protattr => a
	read f => new
	getxattr c trusted.overlay.data => tv
	getxattr c user.plain => pv
	getxattr c user.overlay.data => ENODATA
	EOF
	local attrs
	attrs=$(getfattr -R -d -m - --absolute-names "$WORK/u" "$WORK/w" 2>&1)
	echo "$attrs"
	[[ $attrs == *user.overlay.opaque* ]]
	# the copy's data aside, no trusted.overlay.* name
	[ "$(grep -c 'trusted\.overlay\.' <<<"$attrs")" = 1 ]
	[[ $attrs != *lfs.origin* ]]
}

@test "a lower layer's user.overlay markers hide: opaque directory, 0/0 device, empty-file whiteout" {
	lfs_workdir ext4
	mktree "$WORK" <<<'d L0/o
a L0/o user.overlay.opaque y
f L0/o/shown s
f L1/o/hidden h
W L0/gone
f L1/gone g
d L0/x
a L0/x user.overlay.opaque x
f L0/x/xw
a L0/x/xw user.overlay.whiteout y
f L0/x/plain
f L1/x/xw w
f L1/x/keep k'
	umount_x "$WORK/mnt" "$WORK/L0:$WORK/L1"
	expect_tree "$WORK/mnt" 'd o
f o/shown s
d x
f x/plain
f x/keep k'
}

@test "with userxattr a lower trusted.overlay marker is data; without it a user.overlay one is" {
	lfs_workdir ext4
	mktree "$WORK" <<<'d L0/t
a L0/t trusted.overlay.opaque y
f L1/t/below b
w L0/nw
f L1/nw n
d L0/u
a L0/u user.overlay.opaque y
f L1/u/below b'
	mkdir "$WORK/mnt2"
	umount_x "$WORK/mnt" "$WORK/L0:$WORK/L1"
	mount -t layerfs none "$WORK/mnt2" -o "lowerdir=$WORK/L0:$WORK/L1"
	run_ops "$WORK/mnt" <<-'EOF'
	read t/below => b
	kind u/below => absent
	getxattr t trusted.overlay.opaque => y
	getxattr u user.overlay.opaque => EOPNOTSUPP
	EOF
	# the native whiteout is a symlink like any other
	[ -L "$WORK/mnt/nw" ]
	run_ops "$WORK/mnt2" <<-'EOF'
	kind t/below => absent
	kind nw => absent
	read u/below => b
	getxattr u user.overlay.opaque => y
	getxattr t trusted.overlay.opaque => EOPNOTSUPP
	EOF
	local listed
	listed=$(getfattr -d -m - --absolute-names "$WORK/mnt/t" "$WORK/mnt/u" \
		"$WORK/mnt2/t" "$WORK/mnt2/u")
	echo "$listed"
	[ "$(grep -c 'overlay\.' <<<"$listed")" = 2 ]
	# getfattr names only files with xattrs to show: mnt/t, then mnt2/u
	grep -qx 'trusted.overlay.opaque="y"' <<<"${listed%%"# file: $WORK/mnt2/u"*}"
	grep -qx 'user.overlay.opaque="y"' <<<"${listed##*"# file: $WORK/mnt2/u"}"
}

@test "user.overlay.* through a userxattr mount gives EOPNOTSUPP, as trusted.overlay.* does without it" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/f f
d u
d w
d u2
d w2
d mnt2'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	mount -t layerfs none "$WORK/mnt2" \
		-o "lowerdir=$WORK/L0,upperdir=$WORK/u2,workdir=$WORK/w2"
	run_ops "$WORK/mnt" <<-'EOF'
	getxattr f user.overlay.opaque => EOPNOTSUPP
	setxattr f user.overlay.opaque y => EOPNOTSUPP
	removexattr f user.overlay.opaque => EOPNOTSUPP
	setxattr f user.data v
	getxattr f user.data => v
	EOF
	run_ops "$WORK/mnt2" <<-'EOF'
	getxattr f trusted.overlay.opaque => EOPNOTSUPP
	setxattr f trusted.overlay.opaque y => EOPNOTSUPP
	removexattr f trusted.overlay.opaque => EOPNOTSUPP
	EOF
}

@test "with userxattr a merged directory does not move (EXDEV), a lower user.overlay.redirect is refused (EPERM), a trusted one leads nowhere" {
	lfs_workdir ext4
	mktree "$WORK" <<<'d L0/m
f L0/m/b b
f L1/m/a a
d L0/r
a L0/r user.overlay.redirect /m
d L0/t
a L0/t trusted.overlay.redirect /m
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0:$WORK/L1" "$(upper_opts)"
	run_ops "$WORK/mnt" <<-'EOF'
	rename m m2 => EXDEV
	kind r => EPERM
	count t => 0
	read m/a => a
	mkdir n
	rename n n2
	EOF
}

@test "options that would trust user xattrs fail with userxattr: EINVAL and a message naming both" {
	lfs_workdir tmpfs
	local tmp=$WORK
	mkdir "$tmp/u" "$tmp/w"
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/a a
d u
d w'
	local low="lowerdir=$WORK/L0" up c data re out log i=0 bad=0
	up=$(upper_opts)
	local cases=(
		"$low$up,userxattr,redirect_dir=on#redirect_dir=on: conflicts with userxattr"
		"$low$up,redirect_dir=follow,userxattr#redirect_dir=follow: conflicts with userxattr"
		"$low$up,userxattr,index=on#index=on: conflicts with userxattr"
		"$low$up,userxattr,whiteout=native#whiteout=native: conflicts with userxattr"
		"$low$up,userxattr,metacopy=on#metacopy=on: with userxattr only in a user namespace"
		"$low,upperdir=$tmp/u,workdir=$tmp/w,userxattr#does not keep user\.overlay\.\* xattrs"
	)
	dmesg -C
	for c in "${cases[@]}"; do
		log_mark "t$BATS_TEST_NUMBER-$((i++))"
		out=$("$PROBE" mount2 layerfs "$WORK/mnt" "${c%%#*}")
		[ "$out" = "mount: EINVAL" ] || { echo "${c%%#*}: $out"; bad=1; }
	done
	log=$(dmesg)
	i=0
	for c in "${cases[@]}"; do
		log_since "t$BATS_TEST_NUMBER-$((i++))" "$log"
		re=${c#*#}
		[[ $LOG_CASE =~ layerfs:\ .*$re ]] || { echo "${c%%#*}: no \"$re\" in: $LOG_CASE"; bad=1; }
	done
	[ "$bad" = 0 ]
	# the same mount with options that agree with userxattr
	out=$("$PROBE" mount2 layerfs "$WORK/mnt" "$low$up,userxattr,redirect_dir=nofollow,index=off,whiteout=aufs")
	[ "$out" = "mount: ok" ]
	log_mark "t$BATS_TEST_NUMBER-remount-index"
	out=$("$PROBE" mount2 layerfs "$WORK/mnt" "index=on" remount)
	[ "$out" = "mount: EINVAL" ]
	umount "$WORK/mnt"
	# nor can a remount turn it on
	out=$("$PROBE" mount2 layerfs "$WORK/mnt" "$low$up")
	[ "$out" = "mount: ok" ]
	log_mark "t$BATS_TEST_NUMBER-remount-userxattr"
	out=$("$PROBE" mount2 layerfs "$WORK/mnt" "userxattr" remount)
	[ "$out" = "mount: EINVAL" ]
	log=$(dmesg)
	log_since "t$BATS_TEST_NUMBER-remount-index" "$log"
	echo "$LOG_CASE"
	[[ $LOG_CASE =~ layerfs:\ .*index ]]
	log_since "t$BATS_TEST_NUMBER-remount-userxattr" "$log"
	echo "$LOG_CASE"
	[[ $LOG_CASE =~ layerfs:\ .*userxattr ]]
}

@test "with userxattr a copy-up breaks a lower hard link, as overlay without the index: the other name keeps the lower data" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/h1 old
h L0/h2 L0/h1
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	run_ops "$WORK/mnt" <<-'EOF'
	links h2 => 2
	write h1 new
	read h1 => new
	read h2 => old
	links h1 => 1
	unlink h1
	read h2 => old
	write h2 again
	read h2 => again
	EOF
	[ ! -e "$WORK/w/index" ]
}

@test "with userxattr a copied-up file shows its copy's inode number from the copy-up on, in stat and in a listing kept from before" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/f old
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	local before after
	before=$(stat -c %i "$WORK/mnt/f" "$WORK/L0/f")
	[ "${before%$'\n'*}" = "${before#*$'\n'}" ]
	# the listing is kept from this read; the copy-up must drop it
	"$PROBE" dino "$WORK/mnt"
	run_ops "$WORK/mnt" <<<'write f new'
	after=$(stat -c %i "$WORK/mnt/f" "$WORK/u/f")
	echo "$before / $after"
	[ "${after%$'\n'*}" = "${after#*$'\n'}" ]
	"$PROBE" dino "$WORK/mnt"
	echo 2 >/proc/sys/vm/drop_caches
	[ "$(stat -c %i "$WORK/mnt/f")" = "${after#*$'\n'}" ]
}

@test "with userxattr a directory keeps its lower inode number through its copy-up, in stat, readdir and '.'" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/a/b/c/f f
d L1/a/b/c
f L1/a/b/c/g g
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0:$WORK/L1" "$(upper_opts)"
	local m=$WORK/mnt before after dot
	before=$(stat -c %i "$m/a" "$m/a/b" "$m/a/b/c")
	[ "$before" = "$(stat -c %i "$WORK/L0/a" "$WORK/L0/a/b" "$WORK/L0/a/b/c")" ]
	# listings kept from before the copy-up
	"$PROBE" dino "$m"
	# copies up a, a/b and a/b/c
	run_ops "$m" <<<'unlink a/b/c/f'
	[ -d "$WORK/u/a/b/c" ]
	after=$(stat -c %i "$m/a" "$m/a/b" "$m/a/b/c")
	[ "$before" = "$after" ]
	# ls -i shows st_ino; d_ino against st_ino is lfs-probe dino's
	"$PROBE" dino "$m"
	dot=$(ls -ia "$m/a/b/c" | awk '$2 == "." { print $1 }')
	echo "stat: $after; dot: $dot"
	[ "$dot" = "${after##*$'\n'}" ]
	# the same after a remount, and for a directory made in the upper only
	mkdir "$m/new"
	umount "$m"
	umount_x "$m" "$WORK/L0:$WORK/L1" "$(upper_opts)"
	[ "$(stat -c %i "$m/a" "$m/a/b" "$m/a/b/c")" = "$before" ]
	[ "$(stat -c %i "$m/new")" = "$(stat -c %i "$WORK/u/new")" ]
	"$PROBE" dino "$m"
	# rm -rf of the deep tree walks it by number
	rm -rf "$m/a"
	[ ! -e "$m/a" ]
}

@test "with userxattr every name of a copy shares one inode: chattr +i through one name holds through another after the cache drops the first" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/f old
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	local m=$WORK/mnt fd out rc=0 mode
	exec {fd}<"$m/f"
	ln "$m/f" "$m/g"
	exec {fd}<&-
	# g keeps its inode; f's dentry goes, and is looked up again
	exec {fd}<"$m/g"
	echo 2 >/proc/sys/vm/drop_caches
	chattr +i "$m/f"
	out=$(run_ops "$m" 2>&1 <<-'EOF'
	append g x => EPERM
	write f x => EPERM
	EOF
	) || rc=1
	chattr -i "$m/f"
	chmod 0600 "$m/f"
	mode=$(stat -c %a "$m/g")
	# (closed before any check: the mount must come down)
	exec {fd}<&-
	echo "$out"
	[ "$rc" = 0 ]
	[ "$mode" = 600 ]
	[ "$(stat -c %i "$m/f")" = "$(stat -c %i "$m/g")" ]
}

# hostile_values: the values a layer's owner may give a marker, as
# NAME HEX (lfs-probe mktree): empty, "y" and a NUL, "y" five times (no
# NUL anywhere), binary; "big" (64 KiB of random bytes) is set apart
HOSTILE=("empty 0x" "nul 0x7900" "long 0x7979797979" "bin 0xff00fe01")

@test "hostile user.overlay.* values (64 KiB of random bytes, empty, NUL, no NUL) on files and directories, and lower objects that change type under the mount: clear answers, the mount still works" {
	lfs_workdir ext4
	# 64 KiB values need ext4's ea_inode
	truncate -s 64M "$WORK/img"
	mkfs.ext4 -q -O ea_inode "$WORK/img"
	mkdir "$WORK/x"
	mount -o loop "$WORK/img" "$WORK/x" || skip "no loop device"
	local X=$WORK/x m=$WORK/x/mnt v n hex spec= ops= big
	mkdir "$m"
	for v in "${HOSTILE[@]}" "big -"; do
		n=${v%% *}
		hex=${v#* }
		spec+="d L0/o-$n/own
d L1/o-$n/below
d L0/r-$n
d L1/r-$n/below
f L0/x/w-$n
f L1/x/w-$n b
f L0/fo-$n f
f u/p-$n p
d u/pd-$n
d u/uo-$n
d L1/uo-$n/below
"
		[ "$n" = big ] && continue
		spec+="a L0/o-$n user.overlay.opaque $hex
a L0/r-$n user.overlay.redirect $hex
a L0/x/w-$n user.overlay.whiteout $hex
a L0/fo-$n user.overlay.opaque $hex
a L0/fo-$n user.overlay.redirect $hex
a u/p-$n user.overlay.protattr $hex
a u/pd-$n user.overlay.protattr $hex
a u/uo-$n user.overlay.opaque $hex
"
	done
	mktree "$X" <<<"${spec}X L0/x
d w
f L0/t1 old
d L0/t2/in
d L1/t2/deep
f L1/t2/deep/x x
f L0/t3 three
d L0/t4/in
f L1/t4/y y"
	big=0s$(head -c 65536 /dev/urandom | base64 -w0)
	for n in o-big/user.overlay.opaque r-big/user.overlay.redirect \
		x/w-big/user.overlay.whiteout fo-big/user.overlay.opaque \
		fo-big/user.overlay.redirect; do
		setfattr -n "${n##*/}" -v "$big" "$X/L0/${n%/*}"
	done
	setfattr -n user.overlay.protattr -v "$big" "$X/u/p-big" "$X/u/pd-big"
	setfattr -n user.overlay.opaque -v "$big" "$X/u/uo-big"
	getfattr -n user.overlay.opaque --only-values "$X/L0/o-big" >"$WORK/got"
	base64 -d <<<"${big#0s}" >"$WORK/want"
	cmp "$WORK/got" "$WORK/want"
	umount_x "$m" "$X/L0:$X/L1" ",upperdir=$X/u,workdir=$X/w"
	ops=
	for v in "${HOSTILE[@]}" "big -"; do
		n=${v%% *}
		# not "y": neither opaque nor a whiteout; any redirect is
		# refused (redirect_dir=nofollow); a protattr marker but an
		# empty one fails closed: append-only and immutable
		ops+="count o-$n => 2
kind r-$n => EPERM
read x/w-$n => (empty)
read fo-$n => f
getxattr fo-$n user.overlay.opaque => EOPNOTSUPP
write fo-$n new
read fo-$n => new
count uo-$n => 1
"
		if [ "$n" = empty ]; then
			ops+="write p-$n z
mkdir pd-$n/d
"
		else
			ops+="write p-$n z => EPERM
mkdir pd-$n/d => EPERM
read p-$n => p
"
		fi
	done
	run_ops "$m" <<<"$ops"
	# the copies keep no marker
	v=$(getfattr -d -m '^user\.overlay\.' "$X/u/fo-big" "$X/u/fo-nul")
	[ -z "$v" ]
	# lower objects change type under the mount: file to directory,
	# directory to symlink, file to symlink, directory to file
	run_ops "$m" <<-'EOF'
	read t1 => old
	count t2 => 2
	read t3 => three
	count t4 => 2
	EOF
	rm -r "$X/L0/t1" "$X/L0/t2" "$X/L0/t3" "$X/L0/t4"
	mkdir -p "$X/L0/t1/sub"
	ln -s nowhere "$X/L0/t2"
	ln -s t1 "$X/L0/t3"
	printf four >"$X/L0/t4"
	# what the cache still holds: any answer but a kernel report; t3
	# and t4 are only read
	for n in t1 t2 t3 t4; do
		stat "$m/$n" || :
		ls "$m/$n" || :
		cat "$m/$n" || :
		[ "$n" = t3 ] || [ "$n" = t4 ] && continue
		echo x >>"$m/$n" || :
		mkdir "$m/$n/new" || :
		touch "$m/$n/in/f" || :
	done
	# looked up again: the new types
	echo 2 >/proc/sys/vm/drop_caches
	run_ops "$m" <<-'EOF'
	kind t3 => symlink
	kind t4 => file
	read t4 => four
	EOF
	rm -rf "$m/t1" "$m/t2" "$m/t3" "$m/t4"
	run_ops "$m" <<-'EOF'
	kind t1 => absent
	kind t2 => absent
	kind t3 => absent
	kind t4 => absent
	EOF
	# the mount still works
	mkdir "$m/t5"
	printf five >"$m/t5/f"
	run_ops "$m" <<<'read t5/f => five'
}

@test "LFS_IOC_LINK_UP_AT with userxattr: 0 for a lower hard link (no index: nothing to link up), EPERM for root of a user namespace, and nothing changes" {
	lfs_workdir ext4
	mktree "$WORK" <<<'f L0/h1 old
h L0/h2 L0/h1
d u
d w'
	umount_x "$WORK/mnt" "$WORK/L0" "$(upper_opts)"
	run unshare -Ur "$PROBE" linkupat "$WORK/mnt" h1
	echo "$output"
	[ "$output" = "h1: EPERM" ]
	run "$PROBE" linkupat "$WORK/mnt" h1 h2
	echo "$output"
	[ "$output" = "h1: 0
h2: 0" ]
	run ls -A "$WORK/u"
	[ "$status" = 0 ]
	[ -z "$output" ]
}
