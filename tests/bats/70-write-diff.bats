#!/usr/bin/env bats
# Write side, differentially: seeded scripts of every write operation
# (lfs-opseq gen) applied to a writable mount and to the stack flattened
# on tmpfs without layerfs (lfs-probe flatten) give identical step logs
# (results, errnos, contents read back, listings, inode number
# stability, the mode, owner and inherited ACLs of new objects, POSIX
# ACLs set and removed, F_SETFL O_APPEND, what an fd opened before a
# copy-up reads after it; a fifth of the steps as an unprivileged user,
# whose permission errors must match) and identical final trees (types,
# modes, owners, sizes, contents, link targets, devices, every xattr in
# full, ACLs in text form, hard-link groups, preserved mtimes); the
# tree survives a remount and the lower layers never change.
#
# LFS_FSTYPE=overlay runs the suite on the kernel's overlay, to validate
# the suite itself; the overlay differences it allows are in lib-diff.bash.

load lib
load lib-diff

setup_file() {
	diff_build_stacks 1 2 64
}

teardown_file() {
	diff_remove_stacks
}

teardown() {
	lfs_cleanup
}

@test "one lower layer, upper on tmpfs: same steps and tree as a plain copy" {
	diff_check 1 tmpfs 101
}

@test "one lower layer, upper on ext4: same steps and tree as a plain copy" {
	diff_check 1 ext4 111
}

@test "two lower layers, upper on tmpfs: same steps and tree as a plain copy" {
	diff_check 2 tmpfs 201 202
}

@test "two lower layers, upper on ext4: same steps and tree as a plain copy" {
	diff_check 2 ext4 211
}

@test "64 lower layers, upper on tmpfs: same steps and tree as a plain copy" {
	diff_check 64 tmpfs 6401
}

@test "64 lower layers, upper on ext4: same steps and tree as a plain copy" {
	diff_check 64 ext4 6411
}

@test "the comparison is deterministic and sees one extra file" {
	lfs_workdir tmpfs
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/a"
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/b"
	"$OPSEQ" gen 7 "$DIFF_STEPS" "@$WORK/a" >"$WORK/script"
	"$OPSEQ" run -D "$WORK/a.dump" "$WORK/a" <"$WORK/script" >"$WORK/a.log"
	"$OPSEQ" run -D "$WORK/b.dump" "$WORK/b" <"$WORK/script" >"$WORK/b.log"
	diff_same "logs of two equal trees" "$WORK/a.log" "$WORK/b.log"
	diff_same "dumps of two equal trees" "$WORK/a.dump" "$WORK/b.dump"
	echo >"$WORK/b/zz-extra"
	"$OPSEQ" dump "$WORK/b" >"$WORK/b.dump"
	run diff_same "trees" "$WORK/a.dump" "$WORK/b.dump"
	[ "$status" = 1 ]
	[[ $output == *"+zz-extra f 0644 0:0 size=1 "* ]]
}

@test "the comparisons see an xattr that differs after byte 255 and a marker written into a lower layer" {
	local long
	lfs_workdir tmpfs
	printf -v long 'v%.0s' {1..300}
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/a"
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/b"
	setfattr -h -n trusted.test.long -v "${long}a" "$WORK/a/x0"
	setfattr -h -n trusted.test.long -v "${long}b" "$WORK/b/x0"
	"$OPSEQ" dump "$WORK/a" >"$WORK/a.dump"
	"$OPSEQ" dump "$WORK/b" >"$WORK/b.dump"
	run diff_same "trees" "$WORK/a.dump" "$WORK/b.dump"
	[ "$status" = 1 ]
	[[ $output == *"+x0 f "*" x:trusted.test.long=${long}b"* ]]
	"$PROBE" dump "$WORK/a" >"$WORK/a.dump"
	"$PROBE" dump "$WORK/b" >"$WORK/b.dump"
	run diff_same "trees" "$WORK/a.dump" "$WORK/b.dump"
	[ "$status" = 1 ]
	[[ $output == *"+x0 - "*" trusted.test.long=${long}b"* ]]
	# a copy of the layers, given an opaque marker in a lower directory
	cp -a "$DIFF_STACKS/s2" "$WORK/layers"
	"$OPSEQ" dump -r "$WORK/layers" >"$WORK/before"
	setfattr -h -n trusted.overlay.opaque -v y "$WORK/layers/L1/a"
	"$OPSEQ" dump -r "$WORK/layers" >"$WORK/after"
	run diff_same "layers" "$WORK/before" "$WORK/after"
	[ "$status" = 1 ]
	[[ $output == *"+L1/a d "*" x:trusted.overlay.opaque=y"* ]]
}
