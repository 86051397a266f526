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
diff_same() {
	local a b
	IFS= read -r -d '' a <"$2" || true
	IFS= read -r -d '' b <"$3" || true
	[ "$a" == "$b" ] && return 0
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
	local m
	while read -r _ m _; do
		[[ $m == "$DIFF_STACKS"/* ]] && umount "$m"
	done </proc/mounts
	rm -rf "$DIFF_STACKS" "$DIFF_STACKS.spec"
}

# diff_count LOG: add the kinds that succeeded in LOG to the caller's
# associative array diff_ok; set diff_steps and diff_zero to the number
# of steps and of successful steps, diff_user and diff_user_zero to those
# of the steps run as an unprivileged user ("N as USER OP ...")
diff_count() {
	local _n op rest
	diff_steps=0 diff_zero=0 diff_user=0 diff_user_zero=0
	while read -r _n op rest; do
		diff_steps=$((diff_steps + 1))
		if [ "$op" = as ]; then
			rest=${rest#* }
			op=${rest%% *}
			rest=${rest#"$op"}
			diff_user=$((diff_user + 1))
			[[ $rest != *" -> 0"* ]] || diff_user_zero=$((diff_user_zero + 1))
		fi
		if [[ $rest == *" -> 0"* ]]; then
			diff_zero=$((diff_zero + 1))
			diff_ok[$op]=1
		fi
	done <"$1"
}

# diff_check N FS SEED...: the differential check on stack N.
#
# Per SEED, a script of $DIFF_STEPS operations runs on a writable mount
# of the stack (upper and work directories on FS) and on a fresh
# flattened tree of the stack on tmpfs (diff_flatten: no layerfs in it):
# the step logs and the final trees must be identical.  After the last
# SEED the mount's tree must come back the same after a remount (once a
# test: a remount costs seconds).  Then the stack's layers must be as
# before (contents, every xattr, inode numbers, link counts, blocks,
# c/mtimes of every object), and every operation kind must have
# succeeded at least once.  About a fifth of the steps run as an
# unprivileged user (lfs-opseq "as USER"): their permission errors must
# match too, and some of them must succeed.
diff_check() {
	local n=$1 fs=$2 lw uw seed list t s flags=() bad=0 missing=
	local -A diff_ok=()
	local diff_steps diff_zero diff_user diff_user_zero
	shift 2

	list=$(diff_lowers "$n")
	lfs_workdir tmpfs
	lw=$WORK
	uw=$lw
	if [ "$fs" != tmpfs ]; then
		lfs_workdir "$fs"
		uw=$WORK
	fi
	for seed; do
		mkdir "$uw/upper$seed" "$uw/work$seed" "$uw/mnt$seed" || return 1
	done
	[ -n "$DIFF_EXCLUDE" ] && flags=(-x "$DIFF_EXCLUDE")
	for seed; do
		s=$lw/s$seed
		"$OPSEQ" gen "${flags[@]}" "$seed" "$DIFF_STEPS" "@$DIFF_STACKS/s$n.pristine" \
			"${DIFF_HIDDEN[@]}" >"$s.script" || return 1
		diff_flatten "$n" "$s.ref" || return 1
		diff_mount "$uw/mnt$seed" "$uw/upper$seed" "$uw/work$seed" "$list" || return 1
		# mtimes older than this must match exactly (see lfs_dump_line())
		t=$EPOCHREALTIME
		"$OPSEQ" run -D "$s.ref.dump" -T "$t" "$s.ref" <"$s.script" >"$s.ref.log" || bad=1
		"$OPSEQ" run "${DIFF_K[@]}" -D "$s.fs.dump" -T "$t" "$uw/mnt$seed" \
			<"$s.script" >"$s.fs.log" || bad=1
		umount "$uw/mnt$seed" || return 1
		if [ "$seed" = "${!#}" ]; then
			diff_mount "$uw/mnt$seed" "$uw/upper$seed" "$uw/work$seed" "$list" || return 1
			"$OPSEQ" dump "${DIFF_K[@]}" -T "$t" "$uw/mnt$seed" >"$s.again.dump" || bad=1
			umount "$uw/mnt$seed" || return 1
			diff_same "trees before and after a remount (seed $seed)" \
				"$s.fs.dump" "$s.again.dump" || bad=1
		fi

		if ! diff_same "step logs (seed $seed, plain vs $LFS_FSTYPE)" "$s.ref.log" "$s.fs.log"; then
			echo "# steps where an inode number changed or an object went:"
			grep -E 'ino=[A-Z,]*(CHANGED|GONE)' "$s.fs.log" | head -n 20
			bad=1
		fi
		diff_same "final trees (seed $seed, plain vs $LFS_FSTYPE)" "$s.ref.dump" "$s.fs.dump" || bad=1
		diff_count "$s.ref.log"
		echo "# seed $seed: $diff_steps steps, $diff_zero succeeded;" \
			"$diff_user as a user, $diff_user_zero of them succeeded"
		((diff_steps == DIFF_STEPS)) || bad=1
		# the unprivileged steps are there, and not all refused
		((diff_user >= DIFF_STEPS / 10 && diff_user_zero > 0)) || bad=1
		((bad == 0)) || return 1
	done
	"$OPSEQ" dump -r "$DIFF_STACKS/s$n" >"$lw/layers.after" || return 1
	diff_same "lower layers of stack $n before and after" "$DIFF_STACKS/s$n.layers" \
		"$lw/layers.after" || return 1
	for s in "${DIFF_OPS[@]}"; do
		[[ ,$DIFF_EXCLUDE, == *,$s,* ]] || [ -n "${diff_ok[$s]}" ] || missing+=" $s"
	done
	[ -z "$missing" ] || { echo "# never succeeded:$missing"; return 1; }
}
