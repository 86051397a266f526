#!/usr/bin/env bats
# Security: an attack table (tools/lfs-attack.c, docs/security.md).  Each
# row is a few calls that an unprivileged user (uid 1000, gid 1000, no
# supplementary groups unless the row gives some) makes on objects that
# root made in a lower layer: POSIX ACLs, set-id bits, trusted.* and
# security.* xattrs, file capabilities, sticky directories,
# protected_hardlinks/symlinks/regular/fifos, files and directories of
# others, mknod, layerfs's ioctls.  Every row runs on a writable layerfs mount and on the
# kernel's overlay over the same lower layer, each with its own upper and
# work directories on tmpfs, and must give the same results (ok, errno,
# values read back) and leave the same state, in the mount and in the
# upper layer.  layerfs may refuse what overlay allows, if it then changes
# nothing (reported as a note); it may never allow more.  Overlay's
# results are checked against the table's expectations too, so that a
# row that does not test what it says fails.  The same rows then run
# through a nested stack: layerfs whose lower layer is a layerfs mount,
# against overlay over overlay.  There, overlay cannot change the ACLs of
# a lower object (6.1's overlay inode has no set_acl: EOPNOTSUPP); those
# rows are checked against the table's results (or must equal overlay's)
# and left out of the final comparison of the nested trees.  Last, the
# mounts and upper layers of both are dumped (lfs-probe dump) and
# compared whole, and the lower layer must not have changed.
#
# The rows of the "mounter" themes run on stacks that root mounted
# without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH (as a user namespace's
# root will: its capabilities do not reach objects of unmapped owners),
# over four lower layers: nothing may be read through the mount that the
# mounter could not read itself.  The "mounter" rows read (merged
# listings, lookups, layerfs's name index) and compare with overlay
# mounted so, read-only.  The kernel's overlay cannot be mounted writable
# by such a mounter (EACCES: its work/ is mode 0000, which only
# CAP_DAC_OVERRIDE passes), so the "mounter-write" rows (copy-up, write
# opens) are checked against the table, which gives overlayfs's rules
# (ovl_permission(), ovl_path_open()), and a refused copy-up must leave
# the mount, the upper layer and the work directory as they were.
#
# LFS_FSTYPE=overlay puts overlay where layerfs is, to check the suite:
# then every test must pass.
#
# Both write whiteouts as character devices 0/0 (layerfs with
# whiteout=chardev): the upper layers then compare object for object;
# the whiteout format has no part in the rules tested here.

load lib

ATTACK=$LFS_BIN/lfs-attack
SUBJECT=${LFS_FSTYPE:-layerfs}

# everything lives here, on the guest's tmpfs: the lower layer L, an
# empty layer E, the subject's stacks s (direct) and sn (nested, over the
# read-only mount si of L and E), the reference's r, rn and ri; for the
# "mounter" rows the lower layers L, L2, L3 and L4 (lfs-attack setup -l),
# and the read-only stacks sm (and sme, with nameindex=eager) and the
# reference's rm (and rme, the same), and the subject's writable stack sw,
# all mounted without the DAC capabilities
SEC=/tmp/lfs-tests/security
L=$SEC/lower
E=$SEC/empty
BELOW=("$SEC/lower2" "$SEC/lower3" "$SEC/lower4")

# a root mounter without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: out of
# the bounding set and the inheritable set, so no program it runs (mount,
# the mount helper) gets them back
NODAC=(setpriv --inh-caps=-dac_override,-dac_read_search
	--bounding-set=-dac_override,-dac_read_search)

# the sysctls the rows need on (1: the kernel's default for the first two)
SYSCTLS=(protected_hardlinks protected_symlinks protected_regular protected_fifos)

# sec_mount TYPE STACK LOWER [on]: TYPE at $SEC/STACK/m over LOWER, with
# the upper layer $SEC/STACK/u and the work directory $SEC/STACK/w;
# metacopy=off, or with "on" metacopy=on (overlay: with redirect_dir=on,
# which it needs for it).  Overlay's metacopy copies up only the
# metadata of a file renamed or linked (with a redirect), where layerfs
# copies its data first: the upper layers would differ by design, so the
# rows run without it, but for the "metacopy" theme's.
sec_mount() {
	local type=$1 dir=$SEC/$2 opts
	# (setup_file made them, in one mkdir)
	[ -d "$dir/w" ] || mkdir -p "$dir/m" "$dir/u" "$dir/w"
	opts="lowerdir=$3,upperdir=$dir/u,workdir=$dir/w"
	if [ "$type" = layerfs ]; then
		opts+=,whiteout=chardev
	fi
	if [ "${4-}" = on ]; then
		opts+=,metacopy=on
		[ "$type" = layerfs ] || opts+=,redirect_dir=on
	else
		opts+=,metacopy=off
	fi
	mount -t "$type" none "$dir/m" -o "$opts"
}

# sec_mount_nodac TYPE STACK ro|rw [OPTION]: TYPE at $SEC/STACK/m over
# L, L2, L3 and L4, mounted by root without the DAC capabilities; ro:
# without an upper layer ($SEC/STACK/u stays empty), rw: with the upper
# layer $SEC/STACK/u and the work directory $SEC/STACK/w (mount -w: no
# read-only retry); OPTION for layerfs
sec_mount_nodac() {
	local type=$1 dir=$SEC/$2 opts rw=()
	[ -d "$dir/w" ] || mkdir -p "$dir/m" "$dir/u" "$dir/w" || return 1
	opts="lowerdir=$(IFS=:; echo "$L:${BELOW[*]}")"
	if [ "$3" = rw ]; then
		opts+=",upperdir=$dir/u,workdir=$dir/w"
		rw=(-w)
	fi
	if [ "$type" = layerfs ]; then
		opts+=,whiteout=chardev${4:+,$4}
	fi
	"${NODAC[@]}" mount "${rw[@]}" -t "$type" none "$dir/m" -o "$opts"
}

# sec_lower_meta: the record of every lower layer (lfs-probe meta)
sec_lower_meta() {
	local d
	for d in "$L" "${BELOW[@]}"; do
		echo "== $d"
		"$PROBE" meta "$d" || return 1
	done
}

setup_file() {
	local s i v
	rm -rf "$SEC"
	# every directory the mounts below need, in one process
	mkdir -p "$L" "$E" "${BELOW[@]}" "$SEC/si" "$SEC/ri" \
		"$SEC"/{s,r,smc,rmc,sn,rn,sm,sme,rm,rme,sw}/{m,u,w}
	# reachable by the unprivileged user
	chmod 755 /tmp/lfs-tests "$SEC"
	"$ATTACK" setup "$L"
	for i in "${!BELOW[@]}"; do
		"$ATTACK" setup -l $((i + 2)) "${BELOW[i]}"
	done
	sec_lower_meta >"$BATS_FILE_TMPDIR/lower.meta"
	for s in "${SYSCTLS[@]}"; do
		read -r v <"/proc/sys/fs/$s"
		echo "$v" >"$BATS_FILE_TMPDIR/sysctl.$s"
		echo 1 >"/proc/sys/fs/$s"
	done
	sec_mount "$SUBJECT" s "$L"
	sec_mount overlay r "$L"
	sec_mount "$SUBJECT" smc "$L" on
	sec_mount overlay rmc "$L" on
	mount -t "$SUBJECT" none "$SEC/si" -o "lowerdir=$L:$E"
	mount -t overlay none "$SEC/ri" -o "lowerdir=$L:$E"
	sec_mount "$SUBJECT" sn "$SEC/si"
	sec_mount overlay rn "$SEC/ri"
	sec_mount_nodac "$SUBJECT" sm ro
	sec_mount_nodac "$SUBJECT" sme ro nameindex=eager
	sec_mount_nodac overlay rm ro
	sec_mount_nodac overlay rme ro
	# overlay cannot be mounted so (see the mounter-write test)
	if [ "$SUBJECT" = layerfs ]; then
		sec_mount_nodac "$SUBJECT" sw rw
	fi
}

teardown_file() {
	local s m v mounts=()
	# what the tests outside the table mounted under their lfs_workdir,
	# and the stacks, the last mounted first (sn and rn before si and
	# ri): one read of /proc/mounts, not a mountpoint process a stack
	mapfile -t mounts < <(lfs_mounts_under /tmp/lfs-tests/w-* "$SEC")
	for m in "${mounts[@]}"; do
		umount "$m" || umount -l "$m" || :
	done
	for s in "${SYSCTLS[@]}"; do
		read -r v <"$BATS_FILE_TMPDIR/sysctl.$s" || :
		echo "$v" >"/proc/sys/fs/$s" || :
	done
	rm -rf "$SEC"
}

# sec_diff NAME-A NAME-B A B: show how text B differs from text A
sec_diff() {
	diff -u --label "$1" --label "$2" <(echo "$3") <(echo "$4") || :
}

# sec_attack THEME [n|m|me]: run THEME's rows (all: every row but the
# "mounter" ones) on the direct stacks, with "n" on the nested ones, with
# "m" or "me" on the read-only ones of a mounter without DAC capabilities
# (where the subject may not be stricter); and compare them
# (tests/bats/sec-compare.awk): overlay's results must be the table's, and
# the subject's rows the same as overlay's (results, mount and upper
# state) or stricter.  Through the nested stacks, a row where overlay over
# overlay cannot change an ACL (6.1's overlay inode has no set_acl:
# EOPNOTSUPP) is checked against the table, and listed in
# $BATS_FILE_TMPDIR/gap for the final comparison of the trees.
sec_attack() {
	local t=$BATS_TEST_TMPDIR rc=0 exact=0
	# a mounter's refusals: the errno is the answer, no "stricter"
	case ${2-} in
	m | me) exact=1 ;;
	esac
	"$ATTACK" expect "$1" >"$t/want"
	"$ATTACK" run -u "$SEC/r${2-}/u" "$SEC/r${2-}/m" "$1" >"$t/ref"
	"$ATTACK" run -u "$SEC/s${2-}/u" "$SEC/s${2-}/m" "$1" >"$t/subj"
	awk -v subject="$SUBJECT" -v nested="$([ "${2-}" != n ] || echo 1)" -v exact="$exact" \
		-v gapfile="$BATS_FILE_TMPDIR/gap" -v stricterfile="$BATS_FILE_TMPDIR/stricter" \
		-v notes="$t/notes" \
		-f "$BATS_TEST_DIRNAME/sec-compare.awk" "$t/want" "$t/ref" "$t/subj" || rc=$?
	[ ! -e "$t/notes" ] || cat "$t/notes" >&3
	return $rc
}

# sec_drop_rows TEXT LIST: the lines of a dump TEXT but those of the rows
# listed in $BATS_FILE_TMPDIR/LIST, if there is one (a line's row: its
# first path part)
sec_drop_rows() {
	if [ ! -e "$BATS_FILE_TMPDIR/$2" ]; then
		echo "$1"
		return 0
	fi
	awk 'NR == FNR { drop[$0] = 1; next }
		{ k = $0; sub(/[ \/].*/, "", k); if (!(k in drop)) print }' \
		"$BATS_FILE_TMPDIR/$2" - <<<"$1"
}

# sec_attack_table THEME STACK [ROWS]: run THEME's rows on the subject's
# stack STACK (or take ROWS, what lfs-attack run gave elsewhere) and
# check them against the table alone, where overlay cannot be mounted as
# the reference: each row's results must be the table's, the mount
# unchanged, and the upper layer may hold the row's directory and
# nothing else (a copy-up copies the parents first, then the refused
# object fails)
sec_attack_table() {
	local t=$BATS_TEST_TMPDIR
	"$ATTACK" expect "$1" >"$t/want"
	if [ -n "${3-}" ]; then
		cp "$3" "$t/subj"
	else
		"$ATTACK" run -u "$SEC/$2/u" "$SEC/$2/m" "$1" >"$t/subj"
	fi
	awk 'NR == FNR { k = $0; sub(/: .*/, "", k); want[k] = $0; rows++; next }
		/^[^ ]/ {
			n++
			row = $0
			sub(/: .*/, "", row)
			if (want[row] != $0) {
				print "--- row " row ": the table (-) and the subject (+) differ"
				print "-" want[row]
				print "+" $0
				bad = 1
			}
			next
		}
		/^  mount: unchanged$/ || /^  upper: -$/ || /^  upper \. d / { next }
		{ print "--- row " row " left this:"; print $0; bad = 1 }
		END {
			if (n != rows) {
				print "the table has " rows " rows, the subject ran " n
				bad = 1
			}
			exit bad
		}' "$t/want" "$t/subj"
}

# sec_work_empty STACK...: the work directories of the STACKs hold
# nothing but their own directories (work/, index/): no temporary copy
# was made or left behind
sec_work_empty() {
	local st left bad=0
	for st; do
		left=$(find "$SEC/$st/w" -mindepth 2)
		if [ -n "$left" ]; then
			echo "--- the work directory of stack $st holds:"
			echo "$left"
			bad=1
		fi
	done
	[ "$bad" = 0 ]
}

@test "POSIX ACLs: only the owner sets, changes or removes them; the mask and default ACLs work as on overlay" {
	sec_attack acl
}

@test "set-id bits: chmod clears set-group-ID for a non-member; chown, write and truncate clear set-user-ID as on overlay" {
	sec_attack setid
}

@test "xattrs: a user neither lists, reads, sets nor removes trusted.*, nor sets security.*, as on overlay" {
	sec_attack xattr
}

@test "file capabilities: only root sets or removes them; write, truncate and chown drop them as on overlay" {
	sec_attack caps
}

@test "metadata-only copy-up (metacopy=on on both): the data copy-up at an open for writing keeps set-id bits and capabilities, the caller's write then clears them, as on overlay" {
	sec_attack metacopy mc
}

@test "sticky directories: others' entries cannot be unlinked, renamed over or exchanged; protected_regular and protected_fifos hold" {
	sec_attack sticky
}

@test "protected_hardlinks and protected_symlinks hold through the mount as on overlay" {
	sec_attack links
}

@test "files and directories of others: open, truncate, utimes, chmod, create, link and mknod give what overlay gives" {
	sec_attack others
}

@test "layerfs's ioctls (LFS_IOC_LINK_UP, LFS_IOC_LINK_UP_AT) are refused to a user, EPERM where overlay has none, and change nothing" {
	sec_attack ioctl
}

@test "a nested stack (layerfs over a layerfs mount) gives every row what overlay over overlay gives, or the table where overlay cannot set ACLs" {
	sec_attack all n
}

@test "a mounter without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH: merged listings and lookups refuse what it cannot read, as on overlay mounted so" {
	sec_attack mounter m
}

@test "the same mounter with nameindex=eager: no name index of a lower directory it cannot read, and lookups there give overlay's answers" {
	sec_attack mounter me
}

@test "the same mounter, writable: copy-up and write opens refuse what it cannot read, by overlay's rules (overlay cannot be mounted so), and leave upper and work untouched" {
	local out rc=0
	# the reference cannot be had: overlay makes its work/ mode 0000,
	# which only CAP_DAC_OVERRIDE passes
	out=$(sec_mount_nodac overlay rw rw 2>&1) || rc=$?
	echo "overlay mounted writable by that mounter: rc $rc: $out"
	[ "$rc" != 0 ]
	! mountpoint -q "$SEC/rw/m" || false
	if [ "$SUBJECT" != layerfs ]; then
		skip "overlay cannot be mounted so"
	fi
	sec_attack_table mounter-write sw
	sec_work_empty sw
}

@test "after the rows, the mounts and upper layers of both dump the same and the lower layer is unchanged" {
	local st x bad=0 a b
	for st in s sn; do
		x=mtime
		# overlay over overlay gives a link made after a copy-up
		# another st_ino: no hard-link groups (the rows compare nl=)
		if [ "$st" = sn ]; then
			x=mtime,nlink
		fi
		a=$("$PROBE" dump -x "$x" "$SEC/r${st#s}/m")
		b=$("$PROBE" dump -x "$x" "$SEC/$st/m")
		if [ "$st" = sn ]; then
			a=$(sec_drop_rows "$a" gap)
			b=$(sec_drop_rows "$b" gap)
		fi
		# where layerfs refused more, overlay may have copied up, and
		# shows a merged directory's link count (the row compared
		# what it could see)
		a=$(sec_drop_rows "$a" stricter)
		b=$(sec_drop_rows "$b" stricter)
		if [ "$a" != "$b" ]; then
			echo "--- mount of stack $st: overlay (-) and $SUBJECT (+) differ"
			sec_diff overlay "$SUBJECT" "$a" "$b"
			bad=1
		fi
		# overlay links its whiteouts to one inode: no link counts
		a=$("$PROBE" dump -x mtime,overlay,nlink "$SEC/r${st#s}/u")
		b=$("$PROBE" dump -x mtime,overlay,nlink "$SEC/$st/u")
		if [ "$st" = sn ]; then
			a=$(sec_drop_rows "$a" gap)
			b=$(sec_drop_rows "$b" gap)
		fi
		a=$(sec_drop_rows "$a" stricter)
		b=$(sec_drop_rows "$b" stricter)
		if [ "$a" != "$b" ]; then
			echo "--- upper layer of stack $st: overlay (-) and $SUBJECT (+) differ"
			sec_diff overlay "$SUBJECT" "$a" "$b"
			bad=1
		fi
	done
	a=$(sec_lower_meta)
	b=$(cat "$BATS_FILE_TMPDIR/lower.meta")
	if [ "$a" != "$b" ]; then
		echo "--- a lower layer changed:"
		sec_diff before after "$b" "$a"
		bad=1
	fi
	[ "$bad" = 0 ]
}

# sec_userns_run DIR SUBJECT: inside a user namespace that maps 0-65535
# to 100000-165535 (lfs-probe userns), mount overlay and SUBJECT, both
# with userxattr, over DIR/l (DIR/r and DIR/s: m, u, w), run every row
# on each, dump both mounts and upper layers, in DIR/out.  Overlay with
# userxattr gives a name linked to a copied-up file another st_ino than
# the copy's (its origin marker is empty there): no hard-link groups in
# the mounts' dumps (the rows compare nl=)
sec_userns_run() {
	"$PROBE" userns sh -c '
		set -e
		d=$1 subject=$2 attack=$3 probe=$4 o=
		[ "$subject" = overlay ] || o=,whiteout=chardev
		mount -t overlay none "$d/r/m" -o "lowerdir=$d/l,upperdir=$d/r/u,workdir=$d/r/w,userxattr"
		mount -t "$subject" none "$d/s/m" -o "lowerdir=$d/l,upperdir=$d/s/u,workdir=$d/s/w,userxattr$o"
		for st in r s; do
			"$attack" run -u "$d/$st/u" "$d/$st/m" all >"$d/out/$st.rows"
			"$probe" dump -x mtime,nlink "$d/$st/m" >"$d/out/$st.mount"
			"$probe" dump -x mtime,overlay,nlink "$d/$st/u" >"$d/out/$st.upper"
		done' sh "$1" "$2" "$ATTACK" "$PROBE"
}

@test "inside a user namespace, mounted by its root over layers of its ids (userxattr), every row gives what overlay gives there, and both leave the same trees" {
	local u t=$BATS_TEST_TMPDIR rc=0 a b bad=0 st
	lfs_workdir ext4
	u=$WORK/userns
	mkdir -p "$u/l" "$u/out" "$u"/{r,s}/{m,u,w}
	chmod 755 "$WORK"
	chown -R 100000:100000 "$u"
	"$ATTACK" setup -s 100000 "$u/l"
	"$PROBE" meta "$u/l" >"$t/lower.meta"
	sec_userns_run "$u" "$SUBJECT"
	"$ATTACK" expect all >"$t/want"
	: >"$t/userns-gap"
	awk -v subject="$SUBJECT" -v nested=0 -v exact=0 -v userns=1 \
		-v gapfile="$t/userns-gap" \
		-v stricterfile="$BATS_FILE_TMPDIR/userns-stricter" \
		-v notes="$t/notes" -f "$BATS_TEST_DIRNAME/sec-compare.awk" \
		"$t/want" "$u/out/r.rows" "$u/out/s.rows" || rc=$?
	[ ! -e "$t/notes" ] || cat "$t/notes" >&3
	[ "$rc" = 0 ]
	# not every row may differ from the table: the rows ran
	[ "$(wc -l <"$t/userns-gap")" -lt "$(($(wc -l <"$t/want") / 4))" ]
	for st in mount upper; do
		a=$(sec_drop_rows "$(<"$u/out/r.$st")" userns-stricter)
		b=$(sec_drop_rows "$(<"$u/out/s.$st")" userns-stricter)
		if [ "$a" != "$b" ]; then
			echo "--- $st: overlay (-) and $SUBJECT (+) differ"
			sec_diff overlay "$SUBJECT" "$a" "$b"
			bad=1
		fi
	done
	"$PROBE" meta "$u/l" >"$t/lower.after"
	diff -u "$t/lower.meta" "$t/lower.after"
	[ "$bad" = 0 ]
}

# Root of a user namespace mounts layerfs with userxattr,metacopy=on
# (overlay refuses that pair: the table is the reference) over lower
# layers 5 and 6 of the table, shifted as above: a forged
# user.overlay.metacopy over data the mounter may not read
@test "inside a user namespace with metacopy=on (overlay refuses it there): a forged user.overlay.metacopy over data its mounter may not read gives EACCES to every use of it and copies nothing, by the table" {
	local u
	if [ "$SUBJECT" != layerfs ]; then
		skip "overlay refuses metacopy=on with userxattr"
	fi
	lfs_workdir ext4
	u=$WORK/userns
	mkdir -p "$u/l5" "$u/l6" "$u/out" "$u"/s/{m,u,w}
	chmod 755 "$WORK"
	chown -R 100000:100000 "$u"
	"$ATTACK" setup -s 100000 -l 5 "$u/l5"
	"$ATTACK" setup -s 100000 -l 6 "$u/l6"
	"$PROBE" userns sh -c '
		set -e
		d=$1
		mount -t layerfs none "$d/s/m" -o "lowerdir=$d/l5:$d/l6,upperdir=$d/s/u,workdir=$d/s/w,metacopy=on"
		grep " $d/s/m " /proc/mounts
		"$2" run -u "$d/s/u" "$d/s/m" mounter-userns-metacopy >"$d/out/mc.rows"' \
		sh "$u" "$ATTACK"
	cat "$u/out/mc.rows"
	SEC=$u sec_attack_table mounter-userns-metacopy s "$u/out/mc.rows"
	SEC=$u sec_work_empty s
}

@test "a user outside a user namespace of its own cannot configure a layerfs mount: fsopen gives EPERM before any layer is held (overlay refuses the mount too)" {
	local d out rc=0
	lfs_workdir tmpfs
	d=$WORK/user
	mkdir -p "$d/l" "$d/l2" "$d/m"
	echo x >"$d/l/f"
	chown -R 1000:1000 "$d"
	out=$(setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$LFS_MOUNT" -o "lowerdir=$d/l" none "$d/m" 2>&1) || rc=$?
	echo "layerfs: rc $rc: $out"
	[ "$rc" != 0 ]
	[[ $out == *"fsopen(layerfs): Operation not permitted"* ]]
	# the reference: the same user cannot mount the kernel's overlay
	out=$(setpriv --reuid=1000 --regid=1000 --clear-groups \
		"$PROBE" mount2 overlay "$d/m" "lowerdir=$d/l:$d/l2")
	echo "overlay: $out"
	[ "$out" = "mount: EPERM" ]
}

# sec_deep_names: 16 directory names whose bytes and slashes make 4095:
# 15 of 255 bytes ("a"..., "b"..., ...) and one of 254.  Builtins only:
# a $(printf) and a tr for each name were 32 processes a call, ~60 ms
# each in the guest, and the test calls it three times.
sec_deep_names() (
	local k pad hex name
	printf -v pad '%*s' 255 ''
	for k in {1..16}; do
		printf -v hex %x $((96 + k))
		printf -v name "${pad// /\\x$hex}"
		if [ "$k" = 16 ]; then
			echo "${name:1}"
		else
			echo "$name"
		fi
	done
)

# sec_deep_mkdir DIR: those directories, one in the other, under DIR
# (one mkdir -p: their path, 4095 bytes, fits in PATH_MAX)
sec_deep_mkdir() (
	local names IFS=/
	mapfile -t names < <(sec_deep_names) || exit 1
	[ "${#names[@]}" = 16 ] || exit 1
	cd "$1" && mkdir -p "${names[*]}"
)

# sec_deep_do DIR CMD...: in the deepest but one of those directories
# under DIR, reached by relative steps (its path is longer than
# PATH_MAX), run CMD with the last name in $last
sec_deep_do() (
	local names n
	mapfile -t names < <(sec_deep_names) || exit 9
	[ "${#names[@]}" = 16 ] || exit 9
	cd "$1" || exit 9
	shift
	for n in "${names[@]:0:15}"; do
		cd "$n" || exit 9
	done
	last=${names[15]}
	eval "$@"
)

@test "a redirect its owner puts on an upper directory after the lookup: a rename of a merged directory 4095 bytes below fails (ENAMETOOLONG), with an invalid one (EIO), no kernel report" {
	[ "$SUBJECT" = layerfs ] || skip "layerfs's redirects as it writes them"
	local m out rc long
	lfs_workdir tmpfs
	mkdir -p "$WORK/L/c1/v/in" "$WORK/u" "$WORK/w"
	sec_deep_mkdir "$WORK/L/c1"
	mount -t layerfs none "$WORK/mnt" \
		-o "lowerdir=$WORK/L,upperdir=$WORK/u,workdir=$WORK/w,redirect_dir=on"
	m=$WORK/mnt
	# the path is walked and c1 copied up; then a redirect on c1 longer
	# than the room the path leaves in a PATH_MAX buffer
	sec_deep_do "$m/c1" 'ls -d "$last"' >/dev/null
	mkdir "$m/c1/new"
	printf -v long '%*s' 8000 ''
	setfattr -n trusted.overlay.redirect -v "${long// /x}" "$WORK/u/c1"
	rc=0
	out=$(sec_deep_do "$m/c1" 'mv "$last" z' 2>&1) || rc=$?
	echo "rc $rc: $out"
	[ "$rc" != 0 ]
	[[ $out == *"File name too long"* ]]
	# a relative redirect with a slash cannot be a layer's path
	setfattr -n trusted.overlay.redirect -v "a/b" "$WORK/u/c1"
	rc=0
	out=$(mv "$m/c1/v" "$m/c1/v2" 2>&1) || rc=$?
	echo "rc $rc: $out"
	[[ $out == *"Input/output error"* ]]
	[ -d "$m/c1/v/in" ]
	# the mount still works
	mkdir "$m/ok"
	[ -d "$WORK/u/ok" ]
}
