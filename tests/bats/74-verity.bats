#!/usr/bin/env bats
# fs-verity digests of metacopy files (verity=off|on|require, overlay
# 6.6's meaning and format; docs/write-side.md, "Metadata-only copy-up").
# A metacopy marker may carry the fs-verity file digest of its data
# (struct lfs_metacopy in uapi/layerfs.h): with verity=on the data must
# be an fs-verity file of that digest when it is opened (the open of the
# metacopy file, the data copy-up), else EIO and a kernel log line naming
# the file; verity=require also refuses a metacopy file without digest.
# The metadata-only copy-up records the digest.
#
# The layers live on a small ext4 with the verity feature, made here on a
# loop device backed by tmpfs (the scratch disks have no verity).  The
# metacopy files are made by hand: a lower file with the marker over the
# data at the same path below.  6.1's overlay knows no verity= (and takes
# any marker value), so there is nothing to compare with: the reference
# for the digest is fsverity(1)'s.

load lib
load lib-write

MCX=trusted.overlay.metacopy

teardown() {
	lfs_cleanup
}

# vt_mkfs IMAGE: a new 64 MiB ext4 image with the verity feature
vt_mkfs() {
	truncate -s 64M "$1" && mkfs.ext4 -q -b 4096 -O verity "$1"
}

# vt_ext4 [IMAGE]: an ext4 with the verity feature at $WORK/x, its image
# on tmpfs: a new one, or a copy of IMAGE
vt_ext4() {
	lfs_workdir tmpfs
	if [ -n "${1:-}" ]; then
		cp --sparse=always "$1" "$WORK/img"
	else
		vt_mkfs "$WORK/img"
	fi
	mkdir -p "$WORK/x"
	mount -o loop "$WORK/img" "$WORK/x"
	X=$WORK/x
}

# vt_measure FILE: fsverity(1)'s digest of FILE, "sha256:HEX", in DIGEST
vt_measure() {
	local out
	out=$(fsverity measure "$1")
	DIGEST=${out%% *}
}

# vt_value DIGEST: the marker value of a digest "ALG:HEX" as setfattr's
# hex, in VALUE: version 0, length, flags 0, algorithm, digest
vt_value() {
	local hex=${1#*:} alg
	case ${1%%:*} in
	sha256) alg=01 ;;
	sha512) alg=02 ;;
	esac
	VALUE=$(printf '0x00%02x00%s%s' $((4 + ${#hex} / 2)) "$alg" "$hex")
}

# vt_marker FILE: FILE's metacopy marker in hex ("0x..."), "" when empty,
# in MARKER; fails when there is none
vt_marker() {
	local out
	out=$(getfattr --absolute-names -e hex -n "$MCX" "$1" 2>/dev/null) || return 1
	MARKER=$(sed -n "s/^$MCX=//p" <<<"$out")
}

# vt_mc FILE VALUE SIZE: make FILE a metacopy file of SIZE bytes (sparse)
# with the marker VALUE (setfattr's syntax; 0x for empty)
vt_mc() {
	truncate -s "$3" "$1"
	if [ "$2" = 0x ]; then
		setfattr -n "$MCX" "$1"
	else
		setfattr -n "$MCX" -v "$2" "$1"
	fi
}

# vt_make_layers: in $X, L1/d holds the data (good, bad and lied with
# fs-verity, plain and nodigest without, other and big), L0/d the
# metacopy files: good with good's digest, bad with another file's, lied
# with a digest whose algorithm is right and bytes wrong, plain with a
# digest over data without fs-verity, nodigest with an empty marker.
# good's digest in GOOD.
vt_make_layers() {
	mkdir -p "$X/L0/d" "$X/L1/d"
	local n
	for n in good bad lied plain nodigest other; do
		printf '%s' "$n-data" >"$X/L1/d/$n"
	done
	fsverity enable "$X/L1/d/good"
	fsverity enable "$X/L1/d/bad"
	fsverity enable "$X/L1/d/lied"
	vt_measure "$X/L1/d/good"
	GOOD=$DIGEST
	vt_value "$GOOD"
	vt_mc "$X/L0/d/good" "$VALUE" 9
	vt_mc "$X/L0/d/bad" "$VALUE" 8
	vt_mc "$X/L0/d/plain" "$VALUE" 10
	# lied's own digest with its last digit changed
	vt_measure "$X/L1/d/lied"
	if [ "${DIGEST: -1}" = 0 ]; then
		vt_value "${DIGEST%?}1"
	else
		vt_value "${DIGEST%?}0"
	fi
	vt_mc "$X/L0/d/lied" "$VALUE" 9
	vt_mc "$X/L0/d/nodigest" 0x 13
}

# The layers of vt_make_layers, made once on a filesystem of their own,
# whose image each test that wants them copies (vt_layers): making them
# took a mkfs and twenty processes a test under TCG
setup_file() {
	local X=$BATS_FILE_TMPDIR/layers
	vt_mkfs "$X.img"
	mkdir "$X"
	mount -o loop "$X.img" "$X"
	vt_make_layers
	umount "$X"
	export GOOD
}

teardown_file() {
	! mountpoint -q "$BATS_FILE_TMPDIR/layers" || umount "$BATS_FILE_TMPDIR/layers"
}

# vt_layers: vt_make_layers's layers in $X, on a copy of their filesystem,
# and LOWERS, their lowerdir= list
vt_layers() {
	vt_ext4 "$BATS_FILE_TMPDIR/layers.img"
	[ -n "$GOOD" ]
	LOWERS=$X/L0:$X/L1
}

# vt_mount OPTS [NAME]: layerfs over $LOWERS at $X/NAME/m (default rw)
# with $X/NAME/u as its upper layer, with OPTS
vt_mount() {
	local n=${2:-rw}
	mkdir -p "$X/$n/u" "$X/$n/w" "$X/$n/m"
	mount -t layerfs none "$X/$n/m" \
		-o "lowerdir=$LOWERS,upperdir=$X/$n/u,workdir=$X/$n/w,$1"
	M=$X/$n/m
	U=$X/$n/u
}

@test "the digest layerfs computes is fsverity's: a metadata-only copy-up with verity=on records it in the upper marker, for salted files and sizes of several blocks too" {
	vt_ext4
	mkdir -p "$X/L1"
	echo small >"$X/L1/a"
	head -c 300000 /dev/urandom >"$X/L1/b"
	head -c 5000 /dev/urandom >"$X/L1/c"
	fsverity enable "$X/L1/a"
	fsverity enable "$X/L1/b"
	fsverity enable --salt=00112233445566778899 "$X/L1/c"
	LOWERS=$X/L1
	vt_mount metacopy=on,verity=on
	chmod 600 "$M/a" "$M/b" "$M/c"
	local f want=() got=()
	for f in a b c; do
		vt_measure "$X/L1/$f"
		vt_value "$DIGEST"
		want+=("$f $VALUE")
		vt_marker "$U/$f"
		got+=("$f $MARKER")
	done
	same_text "markers written and fsverity's digests" \
		"$(printf '%s\n' "${want[@]}")" "$(printf '%s\n' "${got[@]}")"
	# the copies hold no data, and read the data below
	[ "$(stat -c %b "$U/b")" -lt 16 ]
	cmp "$M/b" "$X/L1/b"
	cmp "$M/c" "$X/L1/c"
}

@test "verity=on: a metacopy file whose data has the recorded digest reads; a wrong digest, or data without fs-verity, gives EIO on open with the file named in the kernel log; the other files still open" {
	vt_layers
	log_mark "t$BATS_TEST_NUMBER-on"
	mkdir -p "$X/m"
	mount -t layerfs none "$X/m" -o "lowerdir=$LOWERS,metacopy=on,verity=on"
	run_ops "$X/m" <<EOF
read d/good => good-data
read d/bad => EIO
read d/lied => EIO
read d/plain => EIO
read d/nodigest => nodigest-data
read d/other => other-data
read d/good => good-data
read d/bad => EIO
EOF
	log_since "t$BATS_TEST_NUMBER-on" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: d/bad: the fs-verity digest of its data is not the recorded one"* ]]
	[[ $LOG_CASE == *"layerfs: d/lied: the fs-verity digest of its data is not the recorded one"* ]]
	[[ $LOG_CASE == *"layerfs: d/plain: its data is not an fs-verity file, and a digest is recorded"* ]]
	[[ $LOG_CASE != *"d/good"* ]]
	# stat and the listing are the metacopy files' own: only the data is refused
	[ "$(stat -c %s "$X/m/d/bad")" = 8 ]
	umount "$X/m"
	# verity=off (the default): the digests are not looked at
	mount -t layerfs none "$X/m" -o "lowerdir=$LOWERS,metacopy=on"
	run_ops "$X/m" <<EOF
read d/good => good-data
read d/bad => bad-data
read d/plain => plain-data
EOF
}

@test "verity=require: a metacopy file without a digest gives EIO, one with its digest reads, a file that is no metacopy file reads" {
	vt_layers
	mkdir -p "$X/m"
	log_mark "t$BATS_TEST_NUMBER-req"
	mount -t layerfs none "$X/m" -o "lowerdir=$LOWERS,metacopy=on,verity=require"
	run_ops "$X/m" <<EOF
read d/nodigest => EIO
read d/good => good-data
read d/bad => EIO
read d/other => other-data
EOF
	log_since "t$BATS_TEST_NUMBER-req" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: d/nodigest: metacopy file without a digest (verity=require)"* ]]
}

@test "verity=require: chmod of a plain lower file with fs-verity makes a metacopy file with its digest, of one without a whole copy; a lower metacopy file's copy keeps its marker" {
	vt_layers
	head -c 1048576 /dev/urandom >"$X/L1/d/vbig"
	head -c 1048576 /dev/urandom >"$X/L1/d/pbig"
	fsverity enable "$X/L1/d/vbig"
	vt_mount metacopy=on,verity=require
	chmod 600 "$M/d/vbig" "$M/d/pbig" "$M/d/good"
	vt_measure "$X/L1/d/vbig"
	vt_value "$DIGEST"
	vt_marker "$U/d/vbig"
	[ "$MARKER" = "$VALUE" ]
	[ "$(stat -c %b "$U/d/vbig")" -lt 16 ]
	# the plain file: whole, no marker
	! getfattr --absolute-names -n "$MCX" "$U/d/pbig" 2>/dev/null || false
	cmp "$U/d/pbig" "$X/L1/d/pbig"
	# the lower metacopy file: its digest, copied
	vt_marker "$U/d/good"
	vt_value "$GOOD"
	[ "$MARKER" = "$VALUE" ]
	cmp "$M/d/vbig" "$X/L1/d/vbig"
	run_ops "$M" <<<"read d/good => good-data"
	# after a remount too, from the upper markers
	umount "$M"
	vt_mount metacopy=on,verity=require
	cmp "$M/d/vbig" "$X/L1/d/vbig"
	run_ops "$M" <<<"read d/good => good-data"
}

@test "the whole copy of a lower metacopy file checks the digest: an open for writing of one whose data does not match gives EIO and copies nothing" {
	vt_layers
	vt_mount metacopy=on,verity=on
	log_mark "t$BATS_TEST_NUMBER-copy"
	run_ops "$M" <<EOF
append d/bad X => EIO
append d/good X => ok
read d/good => good-dataX
EOF
	[ ! -e "$U/d/bad" ]
	log_since "t$BATS_TEST_NUMBER-copy" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: d/bad: the fs-verity digest of its data is not the recorded one"* ]]
}

@test "the fill of an upper metacopy file checks the digest: an open for writing of one whose recorded digest is another file's gives EIO and leaves it unfilled" {
	vt_layers
	vt_mount metacopy=on,verity=on
	head -c 65536 /dev/urandom >"$X/L1/d/v"
	fsverity enable "$X/L1/d/v"
	chmod 600 "$M/d/v"
	umount "$M"
	vt_marker "$U/d/v"
	vt_measure "$X/L1/d/bad"
	vt_value "$DIGEST"
	setfattr -n "$MCX" -v "$VALUE" "$U/d/v"
	log_mark "t$BATS_TEST_NUMBER-fill"
	vt_mount metacopy=on,verity=on
	run_ops "$M" <<EOF
append d/v X => EIO
read d/v => EIO
EOF
	log_since "t$BATS_TEST_NUMBER-fill" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: d/v: the fs-verity digest of its data is not the recorded one"* ]]
	vt_marker "$U/d/v"
	[ "$MARKER" = "$VALUE" ]
	[ "$(stat -c %b "$U/d/v")" -lt 16 ]
}

@test "metacopy marker values: empty and overlay 6.6's struct with or without a digest are metacopy files; any other value is not understood (EIO), with verity=off too" {
	vt_ext4
	mkdir -p "$X/L0" "$X/L1"
	local n h
	for n in e0 e4 s256 v1 fl a3 a1s a2s short long len; do
		printf '%s' "$n-data" >"$X/L1/$n"
	done
	h=$(printf '%064x' 7)
	vt_mc "$X/L0/e0" 0x 7
	vt_mc "$X/L0/e4" 0x00040000 7
	vt_mc "$X/L0/s256" "0x00240001$h" 9
	# version 1, a flag, algorithm 3, a digest too short for its
	# algorithm, one too long, 3 bytes, more than 68, len not the size
	vt_mc "$X/L0/v1" "0x01240001$h" 8
	vt_mc "$X/L0/fl" "0x00240101$h" 8
	vt_mc "$X/L0/a3" "0x00240003$h" 8
	vt_mc "$X/L0/a1s" "0x00140001${h:0:32}" 8
	vt_mc "$X/L0/a2s" "0x00240002$h" 8
	vt_mc "$X/L0/short" 0x000400 8
	vt_mc "$X/L0/long" "0x00450002$h${h}00" 8
	vt_mc "$X/L0/len" "0x00200001$h" 8
	mkdir -p "$X/m"
	mount -t layerfs none "$X/m" -o "lowerdir=$X/L0:$X/L1,metacopy=on"
	run_ops "$X/m" <<EOF
read e0 => e0-data
read e4 => e4-data
read s256 => s256-data
read v1 => EIO
read fl => EIO
read a3 => EIO
read a1s => EIO
read a2s => EIO
read short => EIO
read long => EIO
read len => EIO
EOF
}

@test "verity= option: on and require turn metacopy on (as overlay 6.6), conflict with metacopy=off and redirect_dir=nofollow (EINVAL with a message), cannot change on remount; bad values EINVAL" {
	vt_ext4
	mkdir -p "$X/L1" "$X/u" "$X/w" "$X/m"
	local base="lowerdir=$X/L1,upperdir=$X/u,workdir=$X/w"
	log_mark "t$BATS_TEST_NUMBER-opt"
	run mount -t layerfs none "$X/m" -o "$base,verity=on,metacopy=off"
	[ "$status" != 0 ]
	run mount -t layerfs none "$X/m" -o "$base,verity=require,redirect_dir=nofollow"
	[ "$status" != 0 ]
	run mount -t layerfs none "$X/m" -o "$base,verity=yes"
	[ "$status" != 0 ]
	run mount -t layerfs none "$X/m" -o "$base,verity="
	[ "$status" != 0 ]
	# userxattr in the initial namespace: no metacopy, so no verity=
	run mount -t layerfs none "$X/m" -o "$base,verity=on,userxattr"
	[ "$status" != 0 ]
	log_since "t$BATS_TEST_NUMBER-opt" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: verity=on: conflicts with metacopy=off"* ]]
	[[ $LOG_CASE == *"layerfs: verity=require (which turns metacopy on): conflicts with redirect_dir=nofollow"* ]]
	[[ $LOG_CASE == *"layerfs: verity=on (which turns metacopy on): with userxattr only in a user namespace"* ]]
	[[ $LOG_CASE != *"layerfs: metacopy=on"* ]]
	[ "$(lfs_mounts_under "$X/m")" = "" ]
	mount -t layerfs none "$X/m" -o "$base,verity=require"
	grep -q " $X/m layerfs .*,metacopy=on,verity=require" /proc/mounts
	mount -o remount,verity=require "$X/m"
	run mount -o remount,verity=on "$X/m"
	[ "$status" != 0 ]
	run mount -o remount,metacopy=off "$X/m"
	[ "$status" != 0 ]
	umount "$X/m"
	mount -t layerfs none "$X/m" -o "$base,verity=off"
	grep -q " $X/m layerfs .*,verity=off" /proc/mounts
	! grep -q " $X/m layerfs .*metacopy" /proc/mounts || false
}

@test "a file enabled with a built-in signature (not checked by this kernel): the digest layerfs records and accepts is fsverity measure's, the signature left out" {
	vt_ext4
	mkdir -p "$X/L1"
	printf %s signed >"$X/L1/s"
	# any bytes: without CONFIG_FS_VERITY_BUILTIN_SIGNATURES fs-verity
	# keeps the signature in the descriptor and checks nothing
	head -c 300 /dev/urandom >"$WORK/sig"
	fsverity enable --signature="$WORK/sig" "$X/L1/s"
	LOWERS=$X/L1
	vt_mount metacopy=on,verity=require
	chmod 600 "$M/s"
	vt_measure "$X/L1/s"
	vt_value "$DIGEST"
	vt_marker "$U/s"
	[ "$MARKER" = "$VALUE" ]
	[ "$(stat -c %b "$U/s")" -lt 16 ]
	# and checked at open, from the upper marker, after a remount
	umount "$M"
	vt_mount metacopy=on,verity=require
	run_ops "$M" <<<"read s => signed"
}

@test "a SHA-512 digest gives a clean EIO where the data is not a SHA-512 fs-verity file of it, at every open; a SHA-512 fs-verity file, where this kernel can make one, reads with its digest" {
	vt_layers
	local h h512=ENOENT
	h=$(printf '%0128x' 5)
	printf '%s' s512-data >"$X/L1/d/s512"
	fsverity enable "$X/L1/d/s512"
	vt_mc "$X/L0/d/s512" "0x00440002$h" 9
	printf '%s' h512-data >"$X/L1/d/h512"
	# the guest's kernel has no SHA-512 (CONFIG_CRYPTO_SHA512): its
	# fs-verity refuses such a file, and none can reach layerfs
	if fsverity enable --hash-alg=sha512 "$X/L1/d/h512" 2>/dev/null; then
		vt_measure "$X/L1/d/h512"
		[[ $DIGEST == sha512:* ]]
		vt_value "$DIGEST"
		vt_mc "$X/L0/d/h512" "$VALUE" 9
		h512=h512-data
	else
		rm "$X/L1/d/h512"
	fi
	log_mark "t$BATS_TEST_NUMBER-512"
	mkdir -p "$X/m"
	mount -t layerfs none "$X/m" -o "lowerdir=$LOWERS,verity=on"
	run_ops "$X/m" <<EOS
read d/s512 => EIO
read d/s512 => EIO
read d/good => good-data
read d/h512 => $h512
EOS
	log_since "t$BATS_TEST_NUMBER-512" "$(dmesg)"
	[[ $LOG_CASE == *"layerfs: d/s512: the fs-verity digest of its data is not the recorded one"* ]]
}

@test "stacked on a verity=require layerfs, the kernel's overlay and a layerfs read a metacopy file whose data does not match, or that has no digest, as EIO: the lower mount's check counts" {
	vt_layers
	mkdir -p "$X/m" "$X/e" "$X/o" "$X/n"
	mount -t layerfs none "$X/m" -o "lowerdir=$LOWERS,verity=require"
	# overlay opens our files with its own path (open_with_fake_path())
	mount -t overlay none "$X/o" -o "lowerdir=$X/m:$X/e"
	# so does layerfs, with a verity=off of its own
	mount -t layerfs none "$X/n" -o "lowerdir=$X/m:$X/e"
	local top
	for top in o n; do
		run_ops "$X/$top" <<EOS
read d/bad => EIO
read d/nodigest => EIO
read d/plain => EIO
read d/good => good-data
read d/other => other-data
read d/bad => EIO
EOS
	done
}
