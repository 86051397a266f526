#!/usr/bin/env bats
# Redirects in every layer: a directory that records where its lower parts
# are (trusted.overlay.redirect) sends the walk there in the layers below
# its own, absolute from those layers' roots or relative in the same
# parent, as the kernel's overlay walks them.  So an upper layer, with the
# redirects its renames wrote, reads the same when it becomes a lower
# layer ("rotate": a container's changes kept as an image layer).  The
# kernel's overlay, on the same layers, is the reference.

load lib

teardown() {
	lfs_cleanup
}

# Layers L0 (top) .. L3; whiteouts in overlay's format (0/0 devices), so
# that overlay reads every layer as layerfs does.
REDIRECT_LAYERS='
# absolute: "new" shows what L1 holds at /old; /old itself is gone
d L0/new
a L0/new trusted.overlay.redirect /old
f L0/new/top t
W L0/old
f L1/old/f1 1
f L1/old/sub/f2 2
f L2/new/hidden x
# relative, in the same parent
d L0/p/rnew
a L0/p/rnew trusted.overlay.redirect rold
W L0/p/rold
f L1/p/rold/g g
# a chain: L0 says /c1, L1 (at /c1) says /c0 for the layers below it
d L0/c2
a L0/c2 trusted.overlay.redirect /c1
W L0/c1
d L1/c1
a L1/c1 trusted.overlay.redirect /c0
f L1/c1/mid m
W L1/c0
f L2/c0/bot b
f L2/c1/not-this n
# a redirect on a directory on the way changes the path below it
d L0/z
a L0/z trusted.overlay.redirect /x/y
f L1/x/y/l1 1
d L1/x
a L1/x trusted.overlay.redirect /xx
f L2/xx/y/l2 2
f L2/x/y/not-this n
# an opaque directory on the way ends the walk below its layer, unless
# a directory further down has an absolute redirect
d L0/o2
a L0/o2 trusted.overlay.redirect /oa/ob
o L1/oa
d L1/oa/ob
a L1/oa/ob trusted.overlay.redirect /oc
f L1/oa/ob/in-l1 1
f L2/oc/deep d
f L2/oa/ob/not-this n
d L0/o3
a L0/o3 trusted.overlay.redirect /ob/oc
o L1/ob
f L1/ob/oc/in-l1 1
f L2/ob/oc/not-this n
# a whiteout on the way ends it
d L0/w2
a L0/w2 trusted.overlay.redirect /wa/wb
W L1/wa
f L2/wa/wb/not-this n
# to nothing, or to a file: the directory shows its own entries only
d L0/nowhere
a L0/nowhere trusted.overlay.redirect /no/such
f L0/nowhere/own o
d L0/tofile
a L0/tofile trusted.overlay.redirect /afile
f L0/tofile/own o
f L1/afile x
# a redirect below an opaque directory still counts in its layer
o L0/q
d L0/q/r
a L0/q/r trusted.overlay.redirect /rr
f L1/rr/from-rr r
f L1/q/r/not-this n
# the layer the redirect is read in is not searched again
d L1/self
a L1/self trusted.overlay.redirect /self2
f L1/self/s1 s
f L1/self2/no n
f L2/self2/yes y
# deep layers: L3 only
d L0/deep
a L0/deep trusted.overlay.redirect /d3
f L3/d3/bottom b
'

# what the stack must show, besides the mount's root entries not listed
REDIRECT_EXPECT='
new/top
new/f1
new/sub/f2
p/rnew/g
c2/mid
c2/bot
z/l1
z/l2
o2/in-l1
o2/deep
o3/in-l1
nowhere/own
tofile/own
q/r/from-rr
self/s1
self/yes
deep/bottom
'

# names no view may show
REDIRECT_ABSENT='new/hidden old c1 c2/not-this z/not-this o2/not-this
o3/not-this w2/not-this q/r/not-this self/no'

# redirect_mounts LFS_OPTS OVL_MODE: REDIRECT_LAYERS built under $WORK and
# mounted read-only by layerfs at $WORK/mnt (with LFS_OPTS, if any) and by
# overlay at $WORK/ovl with redirect_dir=OVL_MODE
redirect_mounts() {
	local lowers=$WORK/L0:$WORK/L1:$WORK/L2:$WORK/L3
	mktree "$WORK" <<<"$REDIRECT_LAYERS" || return 1
	mkdir "$WORK/ovl" || return 1
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$lowers${1:+,$1}" || return 1
	mount -t overlay none "$WORK/ovl" -o "lowerdir=$lowers,redirect_dir=$2"
}

@test "redirects in lower layers are followed, absolute and relative, as overlay follows them" {
	lfs_workdir tmpfs
	# this kernel's overlay follows redirects only when told to
	redirect_mounts "" follow

	"$PROBE" dump -x dirs "$WORK/ovl" >"$WORK/ovl.dump"
	"$PROBE" dump -x dirs "$WORK/mnt" >"$WORK/lfs.dump"
	diff -u "$WORK/ovl.dump" "$WORK/lfs.dump"
	run redirect_wrong "$WORK/mnt"
	[ "$status" = 0 ]
	[ -z "$output" ] || { echo "$output"; false; }
}

# redirect_wrong MNT: "# missing: ..." the REDIRECT_EXPECT files MNT lacks,
# "# shown: ..." the REDIRECT_ABSENT names it has; nothing when right.
# Without bats's trace (a subshell): ~30 tests of one command each.
redirect_wrong() (
	trap - DEBUG
	local p missing= shown=
	while read -r p; do
		[ -z "$p" ] || [ -f "$1/$p" ] || missing+=" $p"
	done <<<"$REDIRECT_EXPECT"
	for p in $REDIRECT_ABSENT; do
		[ ! -e "$1/$p" ] || shown+=" $p"
	done
	[ -z "$missing" ] || echo "# missing:$missing"
	[ -z "$shown" ] || echo "# shown:$shown"
)

@test "a writable mount follows the redirects of its lower layers, and a copy-up keeps the directory's parts" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$REDIRECT_LAYERS"
	mkdir "$WORK"/{u,w}
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/L0:$WORK/L1:$WORK/L2:$WORK/L3,upperdir=$WORK/u,workdir=$WORK/w"
	"$PROBE" dump -x dirs "$WORK/mnt" >"$WORK/before"
	# copy up the redirected directories, then move two of them
	"$PROBE" ops "$WORK/mnt" <<-'EOF'
	chmod new 0750
	create c2/new-file
	chmod z 0700
	rename o2 moved-o2
	rename p/rnew p2
	EOF
	echo 2 >/proc/sys/vm/drop_caches
	[ -f "$WORK/mnt/new/sub/f2" ]
	[ -f "$WORK/mnt/c2/bot" ]
	[ -f "$WORK/mnt/c2/new-file" ]
	[ -f "$WORK/mnt/z/l2" ]
	[ -f "$WORK/mnt/moved-o2/deep" ]
	[ -f "$WORK/mnt/p2/g" ]
	[ ! -e "$WORK/mnt/o2" ]
	[ ! -e "$WORK/mnt/z/not-this" ]
	# the moved ones say where their parts are, seen from the lowers' root
	run getfattr --absolute-names -n trusted.overlay.redirect --only-values "$WORK/u/moved-o2"
	[ "$status" = 0 ]
	[ "$output" = /o2 ]
	run getfattr --absolute-names -n trusted.overlay.redirect --only-values "$WORK/u/p2"
	[ "$status" = 0 ]
	[ "$output" = /p/rnew ]
}

@test "a redirect that is not a plain path fails the lookup and reaches nothing outside the layers" {
	local i spec paths=()
	lfs_workdir tmpfs
	long=$(printf '/%0255d' $(seq 1 17))
	bad=("" . .. ../secret /../secret /sub/../secret //secret /secret/ \
		sub/dir "$long")
	# one mktree for the layers and every value but the long one (longer
	# than a spec line takes): setfattr and stat a value were 20
	# processes here; the empty value, which setfattr refuses, as 0x
	spec='d L1/sub/dir
d L0/sub
f L1/secret/s s
d L0/b0
a L0/b0 trusted.overlay.redirect 0x'
	for i in "${!bad[@]}"; do
		paths+=("$WORK/mnt/b$i")
		[ "$i" = 0 ] || [ "${bad[i]}" = "$long" ] ||
			spec+=$'\n'"d L0/b$i"$'\n'"a L0/b$i trusted.overlay.redirect ${bad[i]}"
	done
	mktree "$WORK" <<<"$spec"
	mkdir "$WORK/L0/b9"
	setfattr -n trusted.overlay.redirect -v "$long" "$WORK/L0/b9"
	[ "${bad[9]}" = "$long" ]
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L0:$WORK/L1"
	run "$PROBE" stat "${paths[@]}"
	[ "$status" = 0 ]
	[ "${#lines[@]}" = "${#bad[@]}" ]
	for i in "${!bad[@]}"; do
		[ "${lines[i]}" = "$WORK/mnt/b$i: EIO" ] ||
			{ echo "# b$i (${bad[i]:0:40}): ${lines[i]}"; false; }
	done
	run dmesg
	[[ $output == *"invalid redirect"* ]]
	# the rest of the directory still reads
	[ -f "$WORK/mnt/secret/s" ]
}

# The script of renames the rotate tests run: merged directories moved
# within and across directories, into a moved one, back, over a lower
# name; files and directories removed and made again.
ROTATE_OPS1='
rename a/b b2
rename b2/c c2
rename a a2
mkdir a
create a/new
rename a2/x a/x
rename d/e d/e2
rename d d3
rename d3/e2/f ff
mkdir d3/e2/f
create d3/e2/f/again
rename k/m/n n1
rmdir k/m
rename n1 k/m
unlink keep/f
rename keep keep2
rename g/h g/h2
rename g/h2 h3
'

# the second generation's: what the first moved moves again
ROTATE_OPS2='
rename b2 b3
rename c2 a/c4
rename h3 a/h4
rename d3/e2 e5
'

ROTATE_LAYERS='
f L2/a/b/c/deep 1
f L2/a/b/c/deep2 2
f L1/a/b/mid m
f L1/a/x/xf x
f L2/a/x/xb b
f L2/d/e/f/ef f
f L1/d/e/de d
f L2/k/m/n/kn k
f L1/k/m/n/kn2 k
f L2/keep/f f
f L2/keep/g g
f L1/g/h/hf h
f L2/g/h/hb b
h L2/g/h/hlink L2/g/h/hb
'

# rotate FS WHITEOUT: on FS (layerfs or overlay), run ROTATE_OPS1 on a
# writable mount of L1:L2, then mount its upper as the top lower layer of
# a fresh writable mount, run ROTATE_OPS2 there, and mount that upper in
# turn; each mount must show what the one before showed.  Dumps go to
# $WORK/FS.N.
rotate() {
	local fs=$1 opts=() ro=() lowers=$WORK/L1:$WORK/L2 n ops
	[ "$fs" = overlay ] && opts=(-o redirect_dir=on,index=on) ro=(-o redirect_dir=follow)
	[ "$fs" = layerfs ] && opts=(-o "whiteout=$2")
	for n in 1 2; do
		mkdir "$WORK/$fs.u$n" "$WORK/$fs.w$n" "$WORK/$fs.m$n"
		mount -t "$fs" none "$WORK/$fs.m$n" "${opts[@]}" \
			-o "lowerdir=$lowers,upperdir=$WORK/$fs.u$n,workdir=$WORK/$fs.w$n" || return 1
		ops=ROTATE_OPS$n
		"$PROBE" ops "$WORK/$fs.m$n" <<<"${!ops}" >"$WORK/$fs.ops$n" ||
			{ cat "$WORK/$fs.ops$n"; return 1; }
		"$PROBE" dump -x dirs,blocks "$WORK/$fs.m$n" >"$WORK/$fs.$n" || return 1
		# new objects' times differ between two runs
		sed 's/ mt=[^ ]*//' "$WORK/$fs.$n" >"$WORK/$fs.$n.nt" || return 1
		umount "$WORK/$fs.m$n" || return 1
		lowers=$WORK/$fs.u$n:$lowers
		mkdir "$WORK/$fs.r$n"
		mount -t "$fs" none "$WORK/$fs.r$n" "${ro[@]}" -o "lowerdir=$lowers" || return 1
		"$PROBE" dump -x dirs,blocks "$WORK/$fs.r$n" >"$WORK/$fs.$n.rotated" || return 1
		umount "$WORK/$fs.r$n" || return 1
		diff -u "$WORK/$fs.$n" "$WORK/$fs.$n.rotated" || return 1
	done
}

@test "rotate: an upper layer written with renames shows the same tree as a lower layer, twice over, as on overlay" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$ROTATE_LAYERS"
	rotate overlay
	rotate layerfs chardev
	# the scripts did the same on both
	diff -u "$WORK/overlay.ops1" "$WORK/layerfs.ops1"
	diff -u "$WORK/overlay.ops2" "$WORK/layerfs.ops2"
	diff -u "$WORK/overlay.1.nt" "$WORK/layerfs.1.nt"
	diff -u "$WORK/overlay.2.nt" "$WORK/layerfs.2.nt"
	# and the second generation moved what the first had moved
	grep -q '^a/c4/deep2 ' "$WORK/layerfs.2"
	grep -q '^e5/de ' "$WORK/layerfs.2"
	grep -q '^e5/f/again ' "$WORK/layerfs.2"
	# overlay reads layerfs's upper layers (overlay's format) the same
	mkdir "$WORK/cross"
	mount -t overlay none "$WORK/cross" \
		-o "lowerdir=$WORK/layerfs.u2:$WORK/layerfs.u1:$WORK/L1:$WORK/L2,redirect_dir=follow"
	"$PROBE" dump -x dirs,blocks "$WORK/cross" >"$WORK/cross.dump"
	diff -u "$WORK/layerfs.2" "$WORK/cross.dump"
}

@test "rotate with layerfs's own whiteouts, upper on ext4" {
	lfs_workdir ext4
	mktree "$WORK" <<<"$ROTATE_LAYERS"
	rotate layerfs native
	grep -q '^a/c4/deep2 ' "$WORK/layerfs.2"
}

@test "redirect_dir=nofollow refuses every redirect (EPERM), as overlay does, and the rest still reads" {
	lfs_workdir tmpfs
	redirect_mounts redirect_dir=nofollow nofollow
	grep -q " $WORK/mnt layerfs .*,redirect_dir=nofollow" /proc/mounts
	for fs in mnt ovl; do
		run "$PROBE" ops "$WORK/$fs" <<-'EOF'
		kind new => EPERM
		kind c2 => EPERM
		kind p/rnew => EPERM
		kind self => EPERM
		read d3/bottom => b
		kind old => absent
		kind afile => file
		EOF
		[ "$status" = 0 ] || { echo "# $fs: $output"; false; }
	done
}

# A lower file with three names in two directories, and plain files.
COMMIT_LAYERS='
f L1/d1/a old
h L1/d1/b L1/d1/a
h L1/d2/c L1/d1/a
f L1/d2/plain p
f L1/d3/other o
'

# commit_rotate UNLINK: through a writable mount of L1, append to d1/a
# (and with UNLINK=1 remove it); layerfs-mount --commit must change
# nothing the mount shows, directories' times included, but what a
# directory's copy-up changes by design (dump -x dirs: a merged
# directory's link count is 1, its size its upper part's).  Then the upper,
# without its work directory (and the hard-link index in it), is mounted
# as the top lower layer: the same tree, the change under every name.
commit_rotate() {
	local files=5 ro=$WORK/rot
	mkdir "$WORK/u" "$WORK/w" "$ro"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w" ||
		return 1
	echo more >>"$WORK/mnt/d1/a" || return 1
	if [ "$1" = 1 ]; then
		rm "$WORK/mnt/d1/a" || return 1
		files=4
	fi
	[ "$(cat "$WORK/mnt/d2/c")" = oldmore ] || return 1
	"$PROBE" dump -x dirs,blocks "$WORK/mnt" >"$WORK/before" || return 1
	run "$LFS_MOUNT" --commit -v "$WORK/mnt"
	echo "$output"
	[ "$status" = 0 ] || return 1
	[ "$output" = "layerfs-mount: $WORK/mnt: $files names in 4 directories; linked up: 2; failed: 0" ] ||
		return 1
	"$PROBE" dump -x dirs,blocks "$WORK/mnt" >"$WORK/after" || return 1
	diff -u "$WORK/before" "$WORK/after" || return 1
	# once is enough
	run "$LFS_MOUNT" --commit -v "$WORK/mnt"
	[ "$status" = 0 ] || return 1
	[[ $output == *"; linked up: 0; failed: 0" ]] || return 1
	[ "$WORK/u/d1/b" -ef "$WORK/u/d2/c" ] || return 1
	umount "$WORK/mnt" || return 1
	rm -rf "$WORK/w" || return 1
	mount -t layerfs none "$ro" -o "lowerdir=$WORK/u:$WORK/L1" || return 1
	"$PROBE" dump -x dirs,blocks "$ro" >"$WORK/rotated" || return 1
	diff -u "$WORK/before" "$WORK/rotated" || return 1
	[ "$(cat "$ro/d1/b")" = oldmore ] || return 1
	[ "$(stat -c %h "$ro/d2/c")" = $((files - 2)) ]
}

@test "rotate after layerfs-mount --commit: every name of a lower file changed through one of them shows the change" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$COMMIT_LAYERS"
	commit_rotate 0
}

@test "rotate after layerfs-mount --commit: also when the name the change went through is gone, upper on ext4" {
	lfs_workdir ext4
	mktree "$WORK" <<<"$COMMIT_LAYERS"
	commit_rotate 1
}

# Lower hard-link groups of every type but a directory: symlinks, fifos
# and devices can have several names too (link(2) does not follow).
LINKS_LAYERS='
l L1/s/a target
h L1/s/b L1/s/a
h L1/s/c L1/s/a
p L1/p/a
h L1/p/b L1/p/a
c L1/c/a 1 3
h L1/c/b L1/c/a
f L1/f/a data
h L1/f/b L1/f/a
'

# same_ino A B: A and B are one inode (not following symlinks, as -ef does)
same_ino() {
	[ "$(stat -c %d:%i "$1")" = "$(stat -c %d:%i "$2")" ]
}

# links_show DIR: per name under DIR (s, p, c, f groups): its link count,
# owner, mode and type, and whether it is the same inode as the group's
# "a" (one stat for all: a process costs 60 ms here)
# (a subshell without bats's trace of each step of the loop)
links_show() (
	trap - DEBUG
	local n names=() out
	for n in s/a s/b s/c p/a p/b c/a c/b f/a f/b; do
		[ -e "$1/$n" ] || [ -L "$1/$n" ] && names+=("$n")
	done
	out=$(cd "$1" && stat -c '%n %h %u:%g %a %F|%d:%i' "${names[@]}") || return 1
	awk -F'|' '{ g = $1; sub(/\/.*/, "", g)
		if ($1 ~ /^[^\/]*\/a /) ino[g] = $2
		print $1, ($2 == ino[g] ? "same" : "other") }' <<<"$out"
)

# links_rotate: change one name of each group through a writable
# mount (a copy-up), check every name shows one inode with the group's
# link count, also after unlinking a name that was only below and after a
# remount; then --commit and use the upper, without its work directory,
# as a lower layer: the same tree, the same groups.
links_rotate() {
	local m=$WORK/mnt opts="lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	mkdir "$WORK/u" "$WORK/w" "$WORK/rot"
	mount -t layerfs none "$m" -o "$opts"
	chown -h 1:1 "$m/s/a"
	chmod 600 "$m/p/a"
	chown 2:2 "$m/c/a"
	chown 3:3 "$m/f/a"
	run links_show "$m"
	echo "$output"
	[ "$output" = "s/a 3 1:1 777 symbolic link same
s/b 3 1:1 777 symbolic link same
s/c 3 1:1 777 symbolic link same
p/a 2 0:0 600 fifo same
p/b 2 0:0 600 fifo same
c/a 2 2:2 644 character special file same
c/b 2 2:2 644 character special file same
f/a 2 3:3 644 regular file same
f/b 2 3:3 644 regular file same" ]
	# a name only below goes: the others count one fewer, then and
	# after a remount
	rm "$m/s/c"
	run links_show "$m"
	[ "${lines[0]}" = "s/a 2 1:1 777 symbolic link same" ]
	[ "${lines[1]}" = "s/b 2 1:1 777 symbolic link same" ]
	links_show "$m" >"$WORK/shown"
	umount "$m"
	mount -t layerfs none "$m" -o "$opts"
	run links_show "$m"
	[ "$output" = "$(cat "$WORK/shown")" ]
	"$PROBE" dump -x dirs,blocks "$m" >"$WORK/before"
	# s/b, p/b, c/b and f/b were only below: --commit links them up
	run "$LFS_MOUNT" --commit -v "$m"
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "layerfs-mount: $m: 8 names in 5 directories; linked up: 4; failed: 0" ]
	"$PROBE" dump -x dirs,blocks "$m" >"$WORK/after"
	diff -u "$WORK/before" "$WORK/after"
	same_ino "$WORK/u/s/a" "$WORK/u/s/b"
	same_ino "$WORK/u/p/a" "$WORK/u/p/b"
	same_ino "$WORK/u/c/a" "$WORK/u/c/b"
	same_ino "$WORK/u/f/a" "$WORK/u/f/b"
	umount "$m"
	rm -rf "$WORK/w"
	mount -t layerfs none "$WORK/rot" -o "lowerdir=$WORK/u:$WORK/L1"
	"$PROBE" dump -x dirs,blocks "$WORK/rot" >"$WORK/rotated"
	diff -u "$WORK/before" "$WORK/rotated"
	run links_show "$WORK/rot"
	[ "$output" = "$(cat "$WORK/shown")" ]
}

@test "symlinks, fifos and devices with several lower names: one inode and the group's link count through copy-up, unlink, remount and a rotation after --commit" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$LINKS_LAYERS"
	links_rotate
}

@test "LFS_IOC_LINK_UP_AT: one name in the directory, looked up and not followed; EPERM, EROFS, ENOENT, EINVAL and ENAMETOOLONG as documented" {
	local m long
	lfs_workdir tmpfs
	m=$WORK/mnt
	mktree "$WORK" <<<"$LINKS_LAYERS"
	mkdir "$WORK/u" "$WORK/w" "$WORK/other"
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	chown -h 1:1 "$m/s/a"
	chown 3:3 "$m/f/a"
	echo new >"$m/new"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$PROBE" linkupat "$m/s" b
	[ "$status" = 0 ]
	[ "$output" = "b: EPERM" ]
	long=$(printf 'n%.0s' {1..256})
	run "$PROBE" linkupat "$m/s" "" . .. a/b len=3,a flags=1,b \
		"$long" missing
	[ "$status" = 0 ]
	[ "$output" = ": EINVAL
.: EINVAL
..: EINVAL
a/b: EINVAL
len=3,a: EINVAL
flags=1,b: EINVAL
$long: ENAMETOOLONG
missing: ENOENT" ]
	[ ! -e "$WORK/u/s/b" ]
	# a directory, an upper file, a lower group without a copy: nothing
	# to do; s/a has its own copy; s/b once, then it has its own link
	# (to the symlink itself: its target does not exist)
	run "$PROBE" linkupat "$m" s new
	[ "$output" = "s: 0
new: 0" ]
	run "$PROBE" linkupat "$m/p" a b
	[ "$output" = "a: 0
b: 0" ]
	run "$PROBE" linkupat "$m/s" a b b
	[ "$output" = "a: 0
b: 1
b: 0" ]
	same_ino "$WORK/u/s/a" "$WORK/u/s/b"
	[ -L "$WORK/u/s/b" ]
	# a name with a file mounted on it: the layerfs name below is
	# linked up, the mounted file is not touched
	touch "$WORK/other/file"
	mount --bind "$WORK/other/file" "$m/f/b"
	run "$PROBE" linkupat "$m/f" b
	[ "$output" = "b: 1" ]
	same_ino "$WORK/u/f/a" "$WORK/u/f/b"
	[ "$(stat -c %h "$WORK/other/file")" = 1 ]
	umount "$m/f/b"
	# not a layerfs directory; a read-only mount
	run "$PROBE" linkupat "$WORK/other" file
	[ "$output" = "file: ENOTTY" ]
	"$LFS_MOUNT" none "$m" -o remount,ro
	run "$PROBE" linkupat "$m/p" b
	[ "$output" = "b: EROFS" ]
	[ ! -e "$WORK/u/p" ]
}

# origin_hex FLAGS NLINK GENERATION INO REAL_INO: a struct lfs_origin
# (uapi/layerfs.h, little-endian) as setfattr's 0x... value (printf -v:
# a $(printf) a byte was 23 processes)
origin_hex() {
	local out=0x01 v n i b
	printf -v b %02x "$1"
	out+=$b
	for v in "$2:2" "$3:4" "$4:8" "$5:8"; do
		n=${v##*:}
		v=${v%:*}
		for ((i = 0; i < n; i++)); do
			printf -v b %02x $(((v >> (8 * i)) & 255))
			out+=$b
		done
	done
	echo "$out"
}

@test "an index entry whose numbers match a lower object of another type is ignored with a warning" {
	local m gen ino
	lfs_workdir ext4
	m=$WORK/mnt
	mktree "$WORK" <<-EOF
		f L1/f/a data
		h L1/f/b L1/f/a
	EOF
	mkdir "$WORK/u" "$WORK/w"
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	ino=$(stat -c %i "$m/f/a")
	umount "$m"
	# an entry as another lower stack's copy would be, its numbers
	# matching f/a's (ext4 gives the generation): a device 1:3
	gen=$(lsattr -v "$WORK/L1/f/a" | awk '{ print $1 }')
	mknod "$WORK/w/index/$(printf %016x "$ino")" c 1 3
	setfattr -n trusted.overlay.lfs.origin -v "$(lfs_untraced origin_hex 1 2 "$gen" "$ino" "$(stat -c %i "$WORK/L1/f/a")")" \
		"$WORK/w/index/$(printf %016x "$ino")"
	dmesg -C
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	run stat -c '%n %F %h' "$m/f/a" "$m/f/b"
	[ "$output" = "$m/f/a regular file 2
$m/f/b regular file 2" ]
	[ "$(cat "$m/f/b")" = data ]
	dmesg | grep -q 'index entry .*: not the copy of its lower object (type or device differs): ignored'
}

@test "an upper file whose origin gives the number of a lower device never takes the device's inode" {
	local m ino
	lfs_workdir tmpfs
	m=$WORK/mnt
	mktree "$WORK" <<-EOF
		c L1/null 1 3
		f u/x data
	EOF
	mkdir "$WORK/w"
	ino=$(stat -c %i "$WORK/L1/null")
	setfattr -n trusted.overlay.lfs.origin -v "$(lfs_untraced origin_hex 0 1 0 "$ino" 999)" "$WORK/u/x"
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	# the device first, so that its inode is in the cache
	[ "$(stat -c '%F %i' "$m/null")" = "character special file $ino" ]
	[ "$(stat -c '%F %i %s' "$m/x")" = "regular file $ino 4" ]
	[ "$(cat "$m/x")" = data ]
	echo more >>"$m/x"
	[ "$(cat "$WORK/u/x")" = datamore ]
}

# show_copies M NAME...: each name's data, read in the order given (the
# first lookup of an object puts its inode in the cache)
show_copies() {
	local n out=()
	for n in "${@:2}"; do
		out+=("$n=$(cat "$1/$n")") || return 1
	done
	echo "${out[*]}"
}

@test "copies of one lower object that are not one object never share an inode: a broken hard link, a copy beside the index's, an origin naming a lower file shown below" {
	local m opts p o
	lfs_workdir tmpfs
	m=$WORK/mnt
	opts="lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	mktree "$WORK" <<-EOF
		f L1/s one
		f L1/f/a data
		h L1/f/b L1/f/a
		f L1/x xdata
	EOF
	mkdir "$WORK/u" "$WORK/w"
	mount -t layerfs none "$m" -o "$opts"
	chmod 600 "$m/s" "$m/f/a" "$m/x"
	umount "$m"
	# made beside layerfs: t, a second copy of s (a hard link broken by a
	# copy made without the index); f/b, a copy beside the index's copy
	# f/a, its origin saying "indexed"; y, x's copy under another name,
	# with x shown from below again
	for p in s:t f/a:f/b x:y; do
		o=$(getfattr --absolute-names -n trusted.overlay.lfs.origin -e hex "$WORK/u/${p%%:*}" | sed -n 's/^[^=]*=//p')
		printf %s "${p#*:}!" >"$WORK/u/${p#*:}"
		setfattr -n trusted.overlay.lfs.origin -v "$o" "$WORK/u/${p#*:}"
	done
	rm "$WORK/u/x"
	mount -t layerfs none "$m" -o "$opts"
	run show_copies "$m" s t f/a f/b x y x
	echo "$output"
	[ "$output" = "s=one t=t! f/a=data f/b=f/b! x=xdata y=y! x=xdata" ]
	# a write through one copy stays in it
	echo more >>"$m/t"
	echo more >>"$m/y"
	umount "$m"
	mount -t layerfs none "$m" -o "$opts"
	run show_copies "$m" t s f/b f/a y x
	echo "$output"
	[ "$output" = "t=t!more s=one f/b=f/b! f/a=data y=y!more x=xdata" ]
	# f/b is not the index's copy: its own link count
	[ "$(stat -c %h "$m/f/b")" = 1 ]
}

@test "index/ serves one upper directory, and an entry no name uses any more is removed at mount" {
	local m opts
	lfs_workdir tmpfs
	m=$WORK/mnt
	opts="lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	mktree "$WORK" <<-EOF
		f L1/f/a data
		h L1/f/b L1/f/a
		f L1/g/a gdata
		h L1/g/b L1/g/a
	EOF
	mkdir "$WORK/u" "$WORK/w" "$WORK/u2" "$WORK/w2"
	mount -t layerfs none "$m" -o "$opts"
	chmod 600 "$m/f/a" "$m/g/a"
	# every name of f goes; g/b, only below, still shows g's copy
	rm "$m/f/a" "$m/f/b" "$m/g/a"
	umount "$m"
	[ "$(ls "$WORK/w/index" | wc -l)" = 2 ]
	mount -t layerfs none "$m" -o "$opts"
	run stat -c '%n %a %h %i' "$m/g/b"
	[ "$output" = "$m/g/b 600 1 $(stat -c %i "$WORK/L1/g/a")" ]
	[ ! -e "$m/f/a" ]
	[ ! -e "$m/f/b" ]
	umount "$m"
	run ls "$WORK/w/index"
	[ "$output" = "$(printf %016x "$(stat -c %i "$WORK/L1/g/a")")" ]
	# the same workdir with another upper directory: refused
	dmesg -C
	run "$PROBE" mount2 layerfs "$m" "lowerdir=$WORK/L1,upperdir=$WORK/u2,workdir=$WORK/w"
	[ "$output" = "mount: ESTALE" ]
	dmesg | grep -q "workdir \"$WORK/w\": its index/ belongs to another upper directory; give upperdir \"$WORK/u2\" a workdir of its own"
	# and nothing was written into that upper directory
	run ls -A "$WORK/u2"
	[ "$status" = 0 ]
	[ -z "$output" ]
	mount -t layerfs none "$m" -o "lowerdir=$WORK/L1,upperdir=$WORK/u2,workdir=$WORK/w2"
	[ "$(stat -c %a "$m/g/b")" = 644 ]
	umount "$m"
}

@test "LFS_IOC_LINK_UP: EPERM without CAP_SYS_ADMIN, 0 when the name needs nothing, EROFS on a read-only mount, which it leaves alone" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<"$COMMIT_LAYERS"
	mkdir "$WORK/u" "$WORK/w" "$WORK/bind" "$WORK/ro"
	mount -t layerfs none "$WORK/mnt" -o "lowerdir=$WORK/L1,upperdir=$WORK/u,workdir=$WORK/w"
	echo more >>"$WORK/mnt/d1/a"
	echo new >"$WORK/mnt/d3/new"
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$PROBE" linkup "$WORK/mnt/d1/b"
	[ "$status" = 0 ]
	[ "$output" = "$WORK/mnt/d1/b: EPERM" ]
	# a read-only bind mount of a writable layerfs, then the layerfs
	# itself read-only
	mount --bind "$WORK/mnt" "$WORK/bind"
	mount -o remount,ro,bind "$WORK/bind"
	run "$PROBE" linkup "$WORK/bind/d1/b" "$WORK/bind/d2/plain"
	[ "$status" = 0 ]
	[ "$output" = "$WORK/bind/d1/b: EROFS
$WORK/bind/d2/plain: EROFS" ]
	"$LFS_MOUNT" none "$WORK/mnt" -o remount,ro
	run "$PROBE" linkup "$WORK/mnt/d1/b" "$WORK/mnt/d2/c"
	[ "$status" = 0 ]
	[ "$output" = "$WORK/mnt/d1/b: EROFS
$WORK/mnt/d2/c: EROFS" ]
	run "$LFS_MOUNT" --commit "$WORK/mnt"
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: $WORK/mnt: mounted read-only: no name can be linked up" ]
	[ ! -e "$WORK/u/d1/b" ]
	[ ! -e "$WORK/u/d2" ]
	"$LFS_MOUNT" none "$WORK/mnt" -o remount,rw
	# a lower file with one name, a name with its own copy, an upper
	# file: nothing to do; d1/b once, then it has its own link
	run "$PROBE" linkup "$WORK/mnt/d2/plain" "$WORK/mnt/d1/a" "$WORK/mnt/d3/new" \
		"$WORK/mnt/d1/b" "$WORK/mnt/d1/b"
	[ "$status" = 0 ]
	[ "$output" = "$WORK/mnt/d2/plain: 0
$WORK/mnt/d1/a: 0
$WORK/mnt/d3/new: 0
$WORK/mnt/d1/b: 1
$WORK/mnt/d1/b: 0" ]
	[ "$WORK/u/d1/a" -ef "$WORK/u/d1/b" ]
	[ ! -e "$WORK/u/d2" ]
	# a mount of read-only layers
	mount -t layerfs none "$WORK/ro" -o "lowerdir=$WORK/u:$WORK/L1"
	run "$PROBE" linkup "$WORK/ro/d2/c"
	[ "$status" = 0 ]
	[ "$output" = "$WORK/ro/d2/c: EROFS" ]
}
