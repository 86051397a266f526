#!/usr/bin/env bats
# Hostile layers (issue #26): tools/lfs-fuzz builds random layers as uid
# 1000 in a user namespace of its own (every user.overlay.* marker with
# hostile values and sizes up to 64 KiB, redirects anywhere, symlink
# loops, names of 1 and 255 bytes, 0/0 devices, hard links across
# layers), mounts them by path and by descriptor, walks, changes and
# remounts them.  The test fails on an oracle violation (data read
# through the mount that no layer holds, a secret the user cannot read
# outside the mount, a marker shown), on a round that hangs or whose
# child dies; the harness fails the run on any kernel report (KASAN,
# lockdep, WARNING, hung task, kmemleak).
#
# A second test fuzzes root's layers (lfs-fuzz --trusted: trusted.overlay.*
# markers, redirect_dir=on, index=on), whose origin, index and redirect
# parsers a user namespace never reaches.
#
# LFS_FUZZ_SECONDS (default 60) sets the fuzzing time, two thirds in a
# user namespace and one third on root's layers; LFS_FUZZ_SEED the
# seed (a failure prints the seed of its round: LFS_FUZZ_REPLAY=SEED runs
# that round alone), LFS_FUZZ_FAKE=1 makes the oracle report a violation
# in every round (the test must then fail); `make fuzz` runs this suite
# alone for FUZZ_SECONDS (vm/run.sh passes them with LFS_GUEST_ENV).

load lib

FUZZ=$LFS_BIN/lfs-fuzz

teardown() {
	lfs_cleanup
}

# fuzz_ext4: an ext4 image with ea_inode (64 KiB xattr values) mounted
# at $WORK/x; 6.1's tmpfs keeps no user.* xattrs
fuzz_ext4() {
	lfs_workdir ext4
	truncate -s 256M "$WORK/img"
	mkfs.ext4 -q -O ea_inode "$WORK/img"
	mkdir "$WORK/x"
	mount -o loop "$WORK/img" "$WORK/x"
	chmod 755 "$WORK/x"
}

# fuzz SECONDS [ARG...]: lfs-fuzz on a fresh ext4 for SECONDS (or the
# replay of LFS_FUZZ_REPLAY), with ARGs; fails on any violation, hang or
# crash, and on a run that mounted, created or read nothing
fuzz() {
	local args=(--seconds "$1")
	shift
	fuzz_ext4
	if [ -n "${LFS_FUZZ_REPLAY:-}" ]; then
		args=(--replay "$LFS_FUZZ_REPLAY" -v)
	elif [ -n "${LFS_FUZZ_SEED:-}" ]; then
		args+=(--seed "$LFS_FUZZ_SEED")
	fi
	if [ "${LFS_FUZZ_FAKE:-0}" = 1 ]; then
		args+=(--fake-violation)
	fi
	run "$FUZZ" "${args[@]}" "$@" "$WORK/x"
	# the rounds' lines are many: the failures and the summary
	grep -v ': [0-9] layer(s)' <<<"$output" | tail -n 60
	grep '^lfs-fuzz: [0-9]* rounds\|^lfs-fuzz: by\|^lfs-fuzz: fail' <<<"$output" | sed 's/^/# /' >&3
	[ "$status" = 0 ]
	[[ $output == *" 0 violations"* ]]
	[[ $output != *VIOLATION* ]]
	[[ $output != *FAIL* ]]
	[ -z "${LFS_FUZZ_REPLAY:-}" ] || return 0
	[[ $output =~ mount\ [1-9][0-9]*/ ]]
	[[ $output =~ create\ [1-9][0-9]*/ ]]
	[[ $output =~ [1-9][0-9]*\ reads\ judged ]]
}

SECS=${LFS_FUZZ_SECONDS:-60}

@test "hostile layers built by uid 1000 and mounted in its user namespace: $((SECS * 2 / 3)) s of rounds, no oracle violation, no hang, no crash" {
	fuzz $((SECS * 2 / 3)) --uid 1000
}

@test "root's hostile layers (trusted.overlay.* markers, redirect_dir=on, index=on): $((SECS / 3)) s of rounds, no oracle violation, no hang, no crash" {
	fuzz $((SECS / 3)) --trusted
}
