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
# full, ACLs in text form, hard-link groups and link counts checked
# against the names found, preserved mtimes of directories too); the
# tree survives a remount and a rotation (the upper becomes the top
# lower layer of a fresh mount, which then runs a further script), and
# the lower layers never change.
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

# As many seeds as fit in DIFF_BUDGET seconds a test (DIFF_SEEDS seeds
# when set: make test-diff-long), one in ten on 64 lower layers, the
# others on one or two (diff_budget).
@test "upper on tmpfs: seeded scripts give the steps and tree of a plain copy, after a remount and a rotation too" {
	diff_budget tmpfs 100
}

@test "upper on ext4: seeded scripts give the steps and tree of a plain copy, after a remount and a rotation too" {
	diff_budget ext4 201
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

@test "the dump sees a link count that is not the names' count, and a directory's mtime changed" {
	lfs_workdir tmpfs
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/a"
	cp -a "$DIFF_STACKS/s2.pristine" "$WORK/b"
	"$OPSEQ" dump -T "$EPOCHREALTIME" "$WORK/a" >"$WORK/a.dump"
	# a name outside the tree: one link more than the tree has names
	ln "$WORK/b/hl/x2" "$WORK/outside"
	touch "$WORK/b/e/f"
	"$OPSEQ" dump -T "$EPOCHREALTIME" "$WORK/b" >"$WORK/b.dump"
	run diff_same "trees" "$WORK/a.dump" "$WORK/b.dump"
	[ "$status" = 1 ]
	[[ $output == *$'\n+hl/x2 f '*" nl=4 NLINK!=NAMES:3 hl=hk/x2 "* ]]
	[[ $output == *$'\n-e/f d '* ]]
	[[ $output == *$'\n+e/f d '* ]]
}

@test "the dump sees a directory's link count that is neither 1 nor 2 and its subdirectories" {
	lfs_workdir tmpfs
	mkdir -p "$WORK/t/d/s1" "$WORK/t/d/s2"
	mkfs.ext4 -q -d "$WORK/t" "$WORK/img" 4M
	debugfs -w -R "sif /d links_count 3" "$WORK/img"
	mount -o loop,ro "$WORK/img" "$WORK/mnt"
	"$OPSEQ" dump "$WORK/mnt" >"$WORK/dump"
	umount "$WORK/mnt"
	grep -F 'd d 0755 0:0 DIR-NLINK!=2+SUBDIRS:3/2' "$WORK/dump"
	grep -c 'DIR-NLINK' "$WORK/dump" | grep -qx 1
}

@test "the rotation sees a name the upper layer lost" {
	local lw uw seed=9 s t
	diff_dirs tmpfs
	s=$lw/s$seed
	mkdir "$uw/upper$seed" "$uw/work$seed" "$uw/mnt$seed"
	diff_flatten 2 "$uw/ref$seed"
	diff_mount "$uw/mnt$seed" "$uw/upper$seed" "$uw/work$seed" "$(diff_lowers 2)"
	t=$EPOCHREALTIME
	echo "write x0 0 10 1" >"$s.script"
	"$OPSEQ" run -D "$s.ref.dump" -T "$t" "$uw/ref$seed" <"$s.script" >"$s.ref.log"
	"$OPSEQ" run "${DIFF_K[@]}" -D "$s.fs.dump" -T "$t" "$uw/mnt$seed" <"$s.script" >"$s.fs.log"
	umount "$uw/mnt$seed"
	diff_same "trees" "$s.ref.dump" "$s.fs.dump"
	# the copy made by the write goes: the lower x0 shows again
	rm "$uw/upper$seed/x0"
	run diff_rotate 2 "$seed" "$t"
	echo "# status $status: $output"
	[ "$status" = 1 ]
	[[ $output == *"# the tree of the mount, and of its upper as the top lower layer (seed 9, rotated) differ"* ]]
	[[ $output == *$'\n-x0 f 0644 0:0 size=10 '*" mt=new"* ]]
	[[ $output == *$'\n+x0 f 0644 0:0 size=9 '*" mt="[0-9]* ]]
}

@test "the rotation compares the other names of a lower hard link whose copy only the index holds: layerfs links them up first, overlay's runs leave them out" {
	local lw uw seed s t
	diff_dirs tmpfs
	# seed 8 unmounts as it is, seed 18 after diff_commit (--commit)
	for seed in 8 18; do
		s=$lw/s$seed
		mkdir "$uw/upper$seed" "$uw/work$seed" "$uw/mnt$seed"
		diff_mount "$uw/mnt$seed" "$uw/upper$seed" "$uw/work$seed" "$(diff_lowers 2)"
		t=$EPOCHREALTIME
		# hk/r0-1 and hl/r0-1 name one lower file: the append copies it
		# up into the index, the unlink takes its one upper name, and
		# hl/r0-1 shows the copy through the index, which no layer holds
		printf '%s\n' "append hk/r0-1 10 1" "unlink hk/r0-1" >"$s.script"
		# the plain tree, on which the rotation runs its further script
		diff_flatten 2 "$uw/ref$seed"
		"$OPSEQ" run -D "$s.ref.dump" -T "$t" "$uw/ref$seed" <"$s.script" >"$s.ref.log"
		"$OPSEQ" run "${DIFF_K[@]}" -D "$s.fs.dump" -T "$t" "$uw/mnt$seed" <"$s.script" >"$s.fs.log"
		grep -q '^hl/r0-1 f 0644 0:0 size=12 .* nl=1 ' "$s.fs.dump"
		if [ "$seed" = 18 ]; then
			run diff_commit "$s" "$uw/mnt$seed" "$t"
			echo "# status $status: $output"
			[ "$status" = 0 ]
			if [ "$LFS_FSTYPE" = layerfs ]; then
				[[ $output == "# commit: "*" directories; linked up: 1; failed: 0" ]]
			fi
		fi
		umount "$uw/mnt$seed"
		run diff_rotate 2 "$seed" "$t"
		echo "# seed $seed: status $status: $output"
		if [ "$LFS_FSTYPE" = overlay ]; then
			[ "$status" = 0 ]
			[ "$(cat "$s.split")" = hl/r0-1 ]
		elif [ "$seed" = 8 ]; then
			[ "$status" = 1 ]
			[[ $output == *$'\n-hl/r0-1 f 0644 0:0 size=12 '*" nl=1 mt=new"* ]]
			[[ $output == *$'\n+hl/r0-1 f 0644 0:0 size=2 '* ]]
		else
			[ "$status" = 0 ]
			[ ! -s "$s.split" ]
		fi
	done
}
