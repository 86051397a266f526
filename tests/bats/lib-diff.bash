# Helpers for the write-side differential suite (70-write-diff.bats).
# Load after lib: load lib; load lib-diff
#
# The filesystem under test is $LFS_FSTYPE: layerfs (default), or the
# kernel's overlay, to validate the suite itself (mounted with
# redirect_dir=on,index=on, the closest to layerfs semantics).  Known
# overlay differences are switched on below, and only for overlay.  The
# reference is built without either (lfs-probe flatten); with overlay,
# diff_build_stacks checks it against the kernel's overlay:
#   LFS_FSTYPE=overlay VM_CPUS=1 make vm-test T=tests/bats/70-write-diff.bats

LFS_FSTYPE=${LFS_FSTYPE:-layerfs}
OPSEQ=$LFS_BIN/lfs-opseq

# operations per script; the seed of the lower-layer stacks
DIFF_STEPS=${DIFF_STEPS:-200}
DIFF_STACK_SEED=7

# the stacks, shared by the tests of a file (built by diff_build_stacks)
DIFF_STACKS=/tmp/lfs-diff-stacks

DIFF_EXCLUDE=	# operation kinds left out of the scripts
DIFF_SPEC=()	# lfs-opseq spec flags
DIFF_K=()	# lfs-opseq run/dump flags
if [ "$LFS_FSTYPE" = overlay ]; then
	# 6.1 overlay has no O_TMPFILE (EOPNOTSUPP; it came in 6.6)
	DIFF_EXCLUDE=tmpfile
	# whiteouts in overlay's format, char 0/0, only
	DIFF_SPEC=(-o)
	# overlay lists the whiteouts of a directory that only one layer
	# holds (it passes that readdir through), though lookup hides them
	DIFF_K=(-k)
fi

# every kind lfs-opseq gen draws (lfs_ops[] in tools/lfs-opseq.c)
DIFF_OPS=(create otrunc write append truncate mkdir fifo sock chr blk
	symlink link unlink rmdir rename noreplace exchange tmpfile chmod
	chown lchown utimes setxattr rmxattr xattrs read readdir stat rmtree
	setacl rmacl fsetfl heldfd)

# Names hidden in the lower layers (whited out, under opaque directories,
# whiteouts in the bottom layer; see lfs_spec_stack()): the scripts make
# them again.
DIFF_HIDDEN=(c/gone a/x1 e/f/x0 g/x0 g/x1/x2 g/x1)

# diff_same WHAT A B: files A and B are equal, or print their differences
# (cmp, not bash's read -d '': that reads a byte a system call)
diff_same() {
	if cmp -s "$2" "$3"; then
		return 0
	fi
	echo "# $1 differ: $2 vs $3"
	diff -u "$2" "$3" | head -n 100
	return 1
}

# diff_mount MNT UPPER WORK LOWERDIRS: mount $LFS_FSTYPE, writable when
# UPPER is given
diff_mount() {
	local opts="lowerdir=$4"
	if [ -n "$2" ]; then
		opts+=",upperdir=$2,workdir=$3"
		[ "$LFS_FSTYPE" = overlay ] && opts+=",redirect_dir=on,index=on"
	fi
	mount -t "$LFS_FSTYPE" none "$1" -o "$opts"
}

# The layers of the stacks live on tmpfs.  A suite that places them
# elsewhere (72-fs-matrix: copies on other filesystems, a nested mount)
# sets DIFF_LIST, the lowerdir list to mount, and DIFF_FLAT, the layer
# directories to flatten for the reference (top first).
DIFF_LIST=
DIFF_FLAT=()

# diff_lowers N: the lowerdir list of stack N (top first)
diff_lowers() {
	local i list=
	[ -z "$DIFF_LIST" ] || { echo "$DIFF_LIST"; return 0; }
	for ((i = 0; i < $1; i++)); do
		list+=${list:+:}$DIFF_STACKS/s$1/L$i
	done
	echo "$list"
}

# diff_flatten N OUT: the tree stack N shows, built at OUT without the
# filesystem under test: lfs-probe flatten applies the read side's rules
# to the layers (whiteouts in every form, opaque directories) and copies
# data, modes, owners, xattrs, times and hard links.
diff_flatten() {
	local i layers=("${DIFF_FLAT[@]}")
	for ((i = 0; ${#DIFF_FLAT[@]} == 0 && i < $1; i++)); do
		layers+=("$DIFF_STACKS/s$1/L$i")
	done
	"$PROBE" flatten "$2" "${layers[@]}"
}

# diff_build_stacks N...: build one stack of N lower layers per N (on
# tmpfs, see lfs_spec_stack()) and, per stack, the reference: its
# flattened tree (sN.pristine, diff_flatten), which must dump as a
# read-only mount of the stack does, mtimes and directories' times,
# modes, owners and xattrs included; and sN.layers, the raw dump of its
# layers, to compare them with after the runs.
diff_build_stacks() {
	local n ro=$DIFF_STACKS/ro objs t
	rm -rf "$DIFF_STACKS"
	"$OPSEQ" spec "${DIFF_SPEC[@]}" "$DIFF_STACK_SEED" "$@" >"$DIFF_STACKS.spec" || return 1
	"$PROBE" mktree -k "$DIFF_STACKS" <"$DIFF_STACKS.spec" || return 1
	mkdir "$DIFF_STACKS/E" "$ro" || return 1
	for n; do
		diff_flatten "$n" "$DIFF_STACKS/s$n.pristine" || return 1
		# one more, empty, layer: overlay wants two without an upper
		diff_mount "$ro" "" "" "$(diff_lowers "$n"):$DIFF_STACKS/E" || return 1
		t=$EPOCHREALTIME
		"$OPSEQ" dump "${DIFF_K[@]}" -T "$t" "$ro" >"$DIFF_STACKS/s$n.ro.dump" || return 1
		# overlay lists whiteouts that its lookup hides (see DIFF_K)
		"$PROBE" dump -x dirs "$ro" >"$DIFF_STACKS/s$n.ro.raw" ||
			[ "$LFS_FSTYPE" = overlay ] || return 1
		grep -v '^FAIL lstat .*: No such file' "$DIFF_STACKS/s$n.ro.raw" \
			>"$DIFF_STACKS/s$n.ro.probe" || return 1
		umount "$ro" || return 1
		"$OPSEQ" dump -T "$t" "$DIFF_STACKS/s$n.pristine" >"$DIFF_STACKS/s$n.pristine.dump" || return 1
		"$PROBE" dump -x dirs "$DIFF_STACKS/s$n.pristine" >"$DIFF_STACKS/s$n.pristine.probe" || return 1
		diff_same "read-only mount of stack $n and its flattened tree" \
			"$DIFF_STACKS/s$n.ro.dump" "$DIFF_STACKS/s$n.pristine.dump" || return 1
		diff_same "read-only mount of stack $n and its flattened tree (lfs-probe dump -x dirs)" \
			"$DIFF_STACKS/s$n.ro.probe" "$DIFF_STACKS/s$n.pristine.probe" || return 1
		mapfile -t objs <"$DIFF_STACKS/s$n.pristine.dump"
		((${#objs[@]} >= 25)) || { echo "# stack $n: only ${#objs[@]} objects"; return 1; }
		"$OPSEQ" dump -r "$DIFF_STACKS/s$n" >"$DIFF_STACKS/s$n.layers" || return 1
	done
}

# Unmount what is left under the stacks, remove them.
diff_remove_stacks() {
	local mounts=()
	mapfile -t mounts < <(lfs_mounts_under "$DIFF_STACKS")
	[ ${#mounts[@]} = 0 ] || umount "${mounts[@]}"
	rm -rf "$DIFF_STACKS" "$DIFF_STACKS.spec"
}

# diff_count LOG N: add the kinds that succeeded in LOG to the caller's
# associative array diff_ok; set diff_steps and diff_zero to the number
# of steps and of successful steps, diff_user and diff_user_zero to those
# of the steps run as an unprivileged user ("N as USER OP ..."); add the
# successful exchange and noreplace steps whose first name is a
# directory of stack N's tree to diff_ok[exchange-dir] and
# diff_ok[noreplace-dir].  One awk over the log and the stack's dump: a
# bash read loop cost a quarter of a seed's time under TCG.
diff_count() {
	local out k v
	out=$(awk '
	FILENAME == ARGV[1] {
		if ($2 == "d")
			ldir[$1] = 1
		next
	}
	{
		steps++
		op = $2
		first = $3
		if (op == "as") {
			op = $4
			first = $5
			user++
		}
		if (index($0, " -> 0") == 0)
			next
		zero++
		if ($2 == "as")
			user_zero++
		ok[op]++
		if ((op == "exchange" || op == "noreplace") && first in ldir)
			ok[op "-dir"]++
	}
	END {
		printf "%d %d %d %d\n", steps, zero, user, user_zero
		for (k in ok)
			print k, ok[k]
	}' "$DIFF_STACKS/s$2.pristine.dump" "$1") || return 1
	{
		read -r diff_steps diff_zero diff_user diff_user_zero || return 1
		while read -r k v; do
			diff_ok[$k]=$((${diff_ok[$k]:-0} + v))
		done
	} <<<"$out"
}

# operations of the script run after a rotation (diff_rotate)
DIFF_ROT_STEPS=${DIFF_ROT_STEPS:-15}

# diff_split LAYER DUMP PRISTINE INDEX: the paths of DUMP (a mount's,
# before the rotation) in the hard-link groups of lower files with
# several links that the run changed: their other names, and the index's
# link, live on only in the work directory, which no layer holds.  After
# a rotation the names not linked up show the lower file again (its old
# data, its own inode, its lower link count, names removed included),
# and a copy keeps the index's link in st_nlink.  The kernel's overlay
# (index=on) does the same (validation runs, seed 100: hk/x2's nine
# lower names lost a write made through nd0/nd2/c0; hk/y8, whose other
# name was removed, shows nl=2 for one name); layerfs keeps its index in
# W/index too (docs/write-side.md), but links those names up before a
# rotation (diff_commit), so only overlay's runs leave groups out.  Such
# a group is found three ways:
# LAYER, the raw dump (-r) of the upper, holds a non-directory with more
# links than names (the index's link); or a path of DUMP has the size and
# content of a file with several links in PRISTINE (the stack's tree)
# but not the same line; or it has the size and content of a file that
# only INDEX, the raw dump of the old work directory's index, still
# links: the names copied up were all removed or renamed over, and the
# mount shows the index's copy through the others.  The least such run
# is "append hk/y56", "unlink hk/y56" (hk/y56 and hl/y56 the two names of
# a lower file): hl/y56 shows the append until the rotation, the lower
# file after it, on layerfs as on overlay (index=on).
diff_split() {
	awk '
	function field(line, key,   i, n, f) {
		n = split(line, f, " ")
		for (i = 3; i <= n; i++)
			if (index(f[i], key) == 1)
				return substr(f[i], length(key) + 1)
		return ""
	}
	FILENAME == ARGV[1] {
		if ($2 == "d")
			next
		ino = field($0, "ino=")
		names[ino]++
		links[ino] = field($0, "nl=")
		path[$1] = ino
		next
	}
	FILENAME == ARGV[2] {
		if ($2 == "f" && field($0, "nl=") > 1) {
			data[field($0, "size=") " " field($0, "h=")] = 1
			line[$1] = $0
		}
		next
	}
	FILENAME == ARGV[3] {
		if ($2 == "f" && field($0, "nl=") == 1)
			indexed[field($0, "size=") " " field($0, "h=")] = 1
		next
	}
	{
		g = field($0, "hl=")
		group[$1] = g == "" ? $1 : g
		key = field($0, "size=") " " field($0, "h=")
		if ($2 == "f" && ((key in data && line[$1] != $0) || key in indexed))
			split_group[group[$1]] = 1
	}
	END {
		for (p in path)
			if (links[path[p]] > names[path[p]] && p in group)
				split_group[group[p]] = 1
		for (p in group)
			if (group[p] in split_group)
				print p
	}' "$1" "$3" "$4" "$2"
}

# diff_unsplit PATHS FILE: FILE (a dump or a step log) without the lines
# that name one of PATHS (diff_split)
diff_unsplit() {
	awk 'FILENAME == ARGV[1] { x[$1] = 1; next }
	{ for (i = 1; i <= NF; i++) if ($i in x) next; print }' "$1" "$2"
}

# diff_root_attrs OLD NEW: directory NEW takes the owner, mode and
# xattrs (but overlay's) of directory OLD
diff_root_attrs() {
	chown --reference="$1" "$2" || return 1
	chmod --reference="$1" "$2" || return 1
	getfattr --absolute-names -h -d -m - -e hex "$1" >"$2.xattrs" || return 1
	grep -v '^trusted\.overlay\.' "$2.xattrs" | sed "1s|^# file: .*|# file: $2|" >"$2.set" ||
		return 1
	setfattr -h --restore="$2.set"
}

# diff_rotate N SEED T: the upper directory of SEED's run on stack N
# ($uw/upperSEED), as the run left it, becomes the top lower layer of a
# fresh mount (new, empty, upper and work directories; the old work
# directory, with the index, is removed first): what container engines
# do to keep a container's changes.  The new upper directory
# takes the old one's owner, mode and xattrs, as the root of a writable
# mount is its upper directory.  The mount must show the tree the first
# mount showed ($s.fs.dump, cut at T); on overlay, but for the hard-link
# groups split by the index (diff_split), which layerfs links up before
# (diff_commit).  Then a further script of $DIFF_ROT_STEPS
# operations (gen seed SEED + 1000000, over the tree as it now is) runs
# on it and on the plain tree of the first run ($uw/refSEED; where groups were
# split, a copy of the mount): same step log, same final tree, overlay's
# split groups left out.  The old upper must not change.
diff_rotate() {
	local n=$1 seed=$2 t=$3 s=$lw/s$2 m=$uw/mnt$2 up=$uw/upper$2 bad=0 flags=()
	local nu=$uw/rot$2.upper nsplit f ref2
	[ -n "$DIFF_EXCLUDE" ] && flags=(-x "$DIFF_EXCLUDE")
	mkdir "$nu" "$uw/rot$seed.work" || return 1
	diff_root_attrs "$up" "$nu" || return 1
	"$OPSEQ" dump -r "$up" >"$s.layer" || return 1
	: >"$s.index"
	if [ -d "$uw/work$seed/index" ]; then
		"$OPSEQ" dump -r "$uw/work$seed/index" >"$s.index" || return 1
	fi
	# layerfs linked the split groups up (diff_commit): nothing left out
	: >"$s.split"
	if [ "$LFS_FSTYPE" = overlay ]; then
		diff_split "$s.layer" "$s.fs.dump" "$DIFF_STACKS/s$n.pristine.dump" "$s.index" \
			>"$s.split" || return 1
	fi
	nsplit=$(wc -l <"$s.split") || return 1
	((nsplit == 0)) || echo "# seed $seed: $nsplit names of hard links copied up in part:" \
		"not compared after the rotation"
	# the container is kept, its work directory goes: the index's links
	# no longer count in the link counts of the upper's files
	rm -rf "$uw/work$seed" || return 1
	"$OPSEQ" dump -r "$up" >"$s.layer.kept" || return 1
	diff_mount "$m" "$nu" "$uw/rot$seed.work" "$up:$(diff_lowers "$n")" || return 1
	"$OPSEQ" dump "${DIFF_K[@]}" -T "$t" "$m" >"$s.rot.dump" || bad=1
	# The plain tree the further script runs on: the first run's, which
	# the mount showed before and after the rotation (the dumps compared
	# below); where groups were split, a copy of the rotated mount, whose
	# split names show the lower file again (overlay: cp finds the
	# whiteouts it lists gone, see DIFF_K)
	ref2=$uw/ref$seed
	if ((nsplit > 0)); then
		ref2=$uw/ref$seed.2
		cp -a "$m" "$ref2" || [ "$LFS_FSTYPE" = overlay ] || bad=1
	fi
	"$OPSEQ" gen "${flags[@]}" "$((seed + 1000000))" "$DIFF_ROT_STEPS" "@$ref2" \
		"${DIFF_HIDDEN[@]}" >"$s.rot.script" || bad=1
	"$OPSEQ" run -D "$s.ref2.dump" -T "$t" "$ref2" <"$s.rot.script" >"$s.ref2.log" || bad=1
	"$OPSEQ" run "${DIFF_K[@]}" -D "$s.rot2.dump" -T "$t" "$m" <"$s.rot.script" \
		>"$s.rot2.log" || bad=1
	umount "$m" || return 1
	# the dumps and logs, without the split groups' names if any
	local cmp=dump logcmp=log
	if ((nsplit > 0)); then
		cmp=cmp logcmp=logcmp
		for f in fs rot ref2 rot2; do
			diff_unsplit "$s.split" "$s.$f.dump" >"$s.$f.cmp" || return 1
		done
		for f in ref2 rot2; do
			diff_unsplit "$s.split" "$s.$f.log" >"$s.$f.logcmp" || return 1
		done
	fi
	diff_same "the tree of the mount, and of its upper as the top lower layer (seed $seed, rotated)" \
		"$s.fs.$cmp" "$s.rot.$cmp" || bad=1
	diff_same "step logs after the rotation (seed $seed, plain vs $LFS_FSTYPE)" \
		"$s.ref2.$logcmp" "$s.rot2.$logcmp" || bad=1
	diff_same "final trees after the rotation (seed $seed, plain vs $LFS_FSTYPE)" \
		"$s.ref2.$cmp" "$s.rot2.$cmp" || bad=1
	"$OPSEQ" dump -r "$up" >"$s.layer.after" || return 1
	# but for st_blocks: on tmpfs a read fault of a mapping on a hole
	# allocates the page (shmem_fault), whoever maps the file; lfs-opseq's
	# heldfd step maps the file it reads, and layerfs, as overlay, maps
	# the lower file itself (seed 114: bl=8, then bl=16, same data)
	sed -i 's/ bl=[0-9]*//' "$s.layer.kept" "$s.layer.after" || return 1
	diff_same "the old upper, a lower layer now, before and after (seed $seed)" \
		"$s.layer.kept" "$s.layer.after" || bad=1
	return "$bad"
}

# diff_commit S MNT T: on layerfs, before the upper layer of the mount
# at MNT becomes a lower layer (diff_rotate), link up the names that
# only the hard-link index gave the copy (layerfs-mount --commit); the
# mount must show the same tree after it ($S.fs.dump, cut at T).  The
# kernel's overlay has no such step (diff_split).
diff_commit() {
	[ "$LFS_FSTYPE" = layerfs ] || return 0
	"$LFS_MOUNT" --commit -v "$2" >"$1.commit" 2>&1 || { cat "$1.commit"; return 1; }
	sed -n 's/^layerfs-mount: [^ ]*: \(.* linked up: .*\)/# commit: \1/p' "$1.commit" || return 1
	"$OPSEQ" dump "${DIFF_K[@]}" -T "$3" "$2" >"$1.commit.dump" || return 1
	diff_same "trees before and after layerfs-mount --commit" "$1.fs.dump" "$1.commit.dump"
}

# diff_seed N SEED: the differential check of one seed on stack N, in the
# caller's $lw (tmpfs: scripts, logs, dumps) and $uw (the upper
# filesystem).
#
# A script of $DIFF_STEPS operations runs on a writable mount of the
# stack and on a fresh flattened tree of the stack, $uw/refSEED, on the
# upper's filesystem (diff_flatten: no layerfs in it): the step logs and
# the final trees must be identical.  The plain tree is on the upper's
# filesystem because what a change does there is that filesystem's:
# truncate(2) to the size a file has sets its mtime on ext4
# (ext4_truncate()), not on tmpfs (seeds 1282, 1524 and 1883 of the
# ext4 long run, a reference on tmpfs).  The mount's tree must come
# back the same after a remount, and after a rotation (diff_rotate).
# About a fifth of the steps run as an unprivileged user (lfs-opseq "as
# USER"): their permission errors must match too, and some of them must
# succeed.
# Adds the kinds that succeeded to the caller's diff_ok (diff_count).
diff_seed() {
	local n=$1 seed=$2 list t s=$lw/s$2 m=$uw/mnt$2 flags=() bad=0
	local diff_steps diff_zero diff_user diff_user_zero

	list=$(diff_lowers "$n")
	mkdir "$uw/upper$seed" "$uw/work$seed" "$m" || return 1
	[ -n "$DIFF_EXCLUDE" ] && flags=(-x "$DIFF_EXCLUDE")
	"$OPSEQ" gen "${flags[@]}" "$seed" "$DIFF_STEPS" "@$DIFF_STACKS/s$n.pristine" \
		"${DIFF_HIDDEN[@]}" >"$s.script" || return 1
	diff_flatten "$n" "$uw/ref$seed" || return 1
	diff_mount "$m" "$uw/upper$seed" "$uw/work$seed" "$list" || return 1
	# mtimes older than this must match exactly (see lfs_dump_line())
	t=$EPOCHREALTIME
	"$OPSEQ" run -D "$s.ref.dump" -T "$t" "$uw/ref$seed" <"$s.script" >"$s.ref.log" || bad=1
	"$OPSEQ" run "${DIFF_K[@]}" -D "$s.fs.dump" -T "$t" "$m" <"$s.script" >"$s.fs.log" ||
		bad=1
	diff_commit "$s" "$m" "$t" || bad=1
	umount "$m" || return 1
	diff_mount "$m" "$uw/upper$seed" "$uw/work$seed" "$list" || return 1
	"$OPSEQ" dump "${DIFF_K[@]}" -T "$t" "$m" >"$s.again.dump" || bad=1
	umount "$m" || return 1

	if ! diff_same "step logs (seed $seed, plain vs $LFS_FSTYPE)" "$s.ref.log" "$s.fs.log"; then
		echo "# steps where an inode number changed or an object went:"
		grep -E 'ino=[A-Z,]*(CHANGED|GONE)' "$s.fs.log" | head -n 20
		bad=1
	fi
	diff_same "final trees (seed $seed, plain vs $LFS_FSTYPE)" "$s.ref.dump" "$s.fs.dump" || bad=1
	diff_same "trees before and after a remount (seed $seed)" "$s.fs.dump" "$s.again.dump" ||
		bad=1
	diff_rotate "$n" "$seed" "$t" || bad=1
	diff_count "$s.ref.log" "$n" || return 1
	echo "# seed $seed, $n lower layers: $diff_steps steps, $diff_zero succeeded;" \
		"$diff_user as a user, $diff_user_zero of them succeeded"
	((diff_steps == DIFF_STEPS)) || {
		echo "# seed $seed: $diff_steps steps ran, not $DIFF_STEPS"
		bad=1
	}
	# the unprivileged steps are there (about a fifth of the steps: the
	# floor is a twentieth, as a seed's draw varies: seed 2995 has 18 in
	# 200); that not all are refused is checked over the seeds
	# (diff_done): a seed may draw none that can succeed (seed 158: 29
	# steps as a user, all refused, as on the plain tree)
	((diff_user >= DIFF_STEPS / 20)) || {
		echo "# seed $seed: $diff_user steps as a user, fewer than $((DIFF_STEPS / 20))"
		bad=1
	}
	diff_ok[as-user]=$((${diff_ok[as-user]:-0} + diff_user_zero))
	return "$bad"
}

# diff_done N...: after the seeds on stacks N...: the stacks' layers are
# as before (contents, every xattr, inode numbers, link counts, blocks,
# c/mtimes of every object), every operation kind succeeded at least
# once, and so did some step run as an unprivileged user; exchange and
# noreplace on a directory of the lower layers too
# when DIFF_XDIR is set (runs of ten seeds or more: a seed has one or
# two of each).
diff_done() {
	local n k missing= more=
	[ -z "$DIFF_XDIR" ] || more="exchange-dir noreplace-dir"
	# some unprivileged steps succeeded (diff_seed)
	more+=" as-user"
	for n; do
		"$OPSEQ" dump -r "$DIFF_STACKS/s$n" >"$lw/layers$n.after" || return 1
		diff_same "lower layers of stack $n before and after" "$DIFF_STACKS/s$n.layers" \
			"$lw/layers$n.after" || return 1
	done
	for k in "${DIFF_OPS[@]}" $more; do
		[[ ,$DIFF_EXCLUDE, == *,$k,* ]] || [ -n "${diff_ok[$k]}" ] || missing+=" $k"
	done
	[ -z "$missing" ] || { echo "# never succeeded:$missing"; return 1; }
	echo "# exchanges and noreplace renames of lower directories that succeeded:" \
		"${diff_ok[exchange-dir]:-0} and ${diff_ok[noreplace-dir]:-0}"
}

# diff_dirs FS: the caller's $lw (tmpfs) and $uw (on FS) work directories
diff_dirs() {
	lfs_workdir tmpfs
	lw=$WORK
	uw=$lw
	if [ "$1" != tmpfs ]; then
		lfs_workdir "$1"
		uw=$WORK
	fi
}

# diff_check N FS SEED...: diff_seed on stack N for each SEED, upper and
# work directories on FS, then diff_done.
diff_check() {
	local n=$1 lw uw seed
	local -A diff_ok=()
	diff_dirs "$2"
	shift 2
	for seed; do
		diff_seed "$n" "$seed" || return 1
	done
	diff_done "$n"
}

# Seconds of seeds a test of diff_budget runs in make test; seeds a test
# runs instead when DIFF_SEEDS is set (make test-diff-long); the first
# seed of every such test, when DIFF_SEED_FROM is set (to run one again).
DIFF_BUDGET=${DIFF_BUDGET:-20}
DIFF_SEEDS=${DIFF_SEEDS:-}
DIFF_SEED_FROM=${DIFF_SEED_FROM:-}
# the one upper filesystem whose seeds run (vm/diff-long.sh: one guest
# each), when set
DIFF_ONLY=${DIFF_ONLY:-}

# diff_budget FS SEED0: diff_seed for seeds SEED0, SEED0 + 1, ..., upper
# and work directories on FS, each on stack 64 for one seed in ten
# (SEED % 10 == 0), else on stack 1 or 2 by parity; as long as the next
# seed fits in $DIFF_BUDGET seconds by the mean time of those before (one
# seed at least), or $DIFF_SEEDS seeds when set.  A failing seed does not
# stop the others: the seeds that failed are listed at the end, the
# differences of the first five shown.  Then diff_done.  With DIFF_SEEDS
# set, the count of seeds run also goes to the TAP stream (fd 3), which
# shows it for a test that passed.  Skips when DIFF_ONLY names another
# filesystem than FS.
diff_budget() {
	local seed=${DIFF_SEED_FROM:-$2} n start=$SECONDS ran=0 failed=() out
	local -A diff_ok=() used=()
	local lw uw
	[ -z "$DIFF_ONLY" ] || [ "$DIFF_ONLY" = "$1" ] || skip "DIFF_ONLY=$DIFF_ONLY"
	diff_dirs "$1"
	out=$lw/seed.out
	while :; do
		if [ -n "$DIFF_SEEDS" ]; then
			((ran < DIFF_SEEDS)) || break
		elif ((ran > 0 && (SECONDS - start) * (ran + 1) > DIFF_BUDGET * ran)); then
			break
		fi
		n=$((seed % 10 == 0 ? 64 : 1 + seed % 2))
		used[$n]=1
		if diff_seed "$n" "$seed" >"$out"; then
			grep '^# seed ' "$out"
			# long runs: keep the failures only
			rm -rf "$uw"/{upper,work,mnt,ref}"$seed" "$uw/rot$seed".* "$uw/ref$seed".* \
				"$lw/s$seed".*
		else
			((${#failed[@]} >= 5)) || cat "$out"
			failed+=("$seed")
		fi
		seed=$((seed + 1))
		ran=$((ran + 1))
	done
	echo "# $ran seeds from ${DIFF_SEED_FROM:-$2} in $((SECONDS - start)) s, on stacks ${!used[*]}," \
		"${#failed[@]} failed" | tee "$lw/seeds.count"
	[ -z "$DIFF_SEEDS" ] || echo "# $1: $(<"$lw/seeds.count")" >&3
	[ ${#failed[@]} = 0 ] || { echo "# seeds that failed: ${failed[*]}"; return 1; }
	local DIFF_XDIR=
	((ran < 10)) || DIFF_XDIR=1
	diff_done "${!used[@]}"
}
