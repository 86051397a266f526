#!/usr/bin/env bats
# The name index of deep directories (src/nameindex.c) changes no answer:
# a deep stack mounted with it built at the first lookup (nameindex=eager),
# built once walks have cost as much (the default) and without it
# (nameindex=off) shows the same tree, and every name (present, missing,
# whited out, hidden by an opaque directory, below a file) looks up the
# same.  Also while the shrinker frees indexes in a loop, and through the
# write side.

bats_require_minimum_version 1.5.0
load lib
load lib-deep

teardown() {
	lfs_cleanup
}

# probe_names N: relative paths to stat in a deep_spec N tree: every name
# of the spec, names in no layer, names below files (awk: see lib-deep)
probe_names() {
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			printf "d%d/f%d\nd%d/miss%d\n", i % 10, i, i % 10, i
			if (i % 10 == 0)
				printf "all/f%d\nall/sub/s%d\n", i, i
		}
		split("d0 d5 all all/sub nodir", d, " ")
		for (j = 1; j <= 5; j++)
			printf "%s/nothing\n%s/f0/below\n", d[j], d[j]
		printf "all/sub/s%d\n", n + 1
	}'
}

# answers N M [SED [FIELDS]]: the tree M shows and the stat of every
# probe_names N path in it (its lines edited by SED, if given); FIELDS:
# what the dump leaves out (lfs-probe dump -x)
answers() {
	local n=$1 m=$2 ed=${3:-} dx=()
	[ -z "${4:-}" ] || dx=(-x "$4")
	set -o pipefail
	# (from inside M: shorter walks for every name, the same lines)
	(cd "$m" && "$PROBE" dump "${dx[@]}" . &&
		probe_names "$n" | xargs "$PROBE" stat | sed -E "$ed")
}

# answers_as N M REF [SED [FIELDS]]: M gives the answers in the file REF
# (the answers of a mount without the index, taken once)
answers_as() {
	local n=$1 m=$2 ref=$3
	shift 3
	answers "$n" "$m" "$@" >"$WORK/answers.m"
	diff -u "$ref" "$WORK/answers.m"
}

# deep_pair N: a deep_spec N stack on tmpfs, mounted on $WORK/mnt with an
# index in every deep directory from its first lookup, and on $WORK/off
# without, through lowerdir+
deep_pair() {
	# (mktree from inside $WORK: it makes every parent of every path,
	# and 4096 layers' lines took it 38 s from an absolute root)
	deep_spec "$1" | (cd "$WORK" && mktree .) || return 1
	deep_layers "$1" >"$WORK/layers"
	mkdir "$WORK/off"
	"$LFS_MOUNT" -L "$WORK/layers" -o nameindex=eager "$WORK/mnt"
	"$LFS_MOUNT" -L "$WORK/layers" -o nameindex=off "$WORK/off"
	grep -q " $WORK/off layerfs .*,nameindex=off" /proc/mounts
	grep -q " $WORK/mnt layerfs .*,nameindex=eager" /proc/mounts
}

# The 500-layer pair that tests 1 and 4 read (neither changes it), built
# once on a tmpfs of its own at $D500, with the answers of its mount
# without the index in $BATS_FILE_TMPDIR/answers500.off
D500=/tmp/lfs-tests/deep500

setup_file() {
	local WORK=$D500
	d500_teardown
	mkdir -p "$WORK"
	mount -t tmpfs -o mode=0755 deep "$WORK"
	mkdir "$WORK/mnt"
	deep_pair 500
	answers 500 "$WORK/off" >"$BATS_FILE_TMPDIR/answers500.off"
}

# d500_teardown: the mounts of the pair, then its tmpfs
d500_teardown() {
	local m
	for m in "$D500/mnt" "$D500/off" "$D500"; do
		if mountpoint -q "$m"; then
			umount "$m" || umount -l "$m" || return 1
		fi
	done
	rm -rf "$D500"
}

teardown_file() {
	d500_teardown
}

@test "500 layers: the same tree and the same answer for every name with the index built at once, built later, and without" {
	local off=$BATS_FILE_TMPDIR/answers500.off
	lfs_workdir tmpfs
	deep_expect_tree "$D500/mnt" 500
	answers_as 500 "$D500/mnt" "$off"
	# the default: each directory walked in full until its walks have
	# cost about a build, then indexed; the answers do not change
	"$LFS_MOUNT" -L "$D500/layers" "$WORK/mnt"
	run -1 grep -q " $WORK/mnt layerfs .*nameindex" /proc/mounts
	answers_as 500 "$WORK/mnt" "$off"
	# misses really miss, hits really hit
	run "$PROBE" stat "$D500/mnt/d3/miss3" "$D500/mnt/d3/f3" "$D500/mnt/all/f80"
	[ "${lines[0]}" = "$D500/mnt/d3/miss3: ENOENT" ]
	[[ ${lines[1]} == "$D500/mnt/d3/f3 ino="* ]]
	[ "${lines[2]}" = "$D500/mnt/all/f80: ENOENT" ]
}

# index_built: how many name indexes the module has built since it was
# loaded (its debugfs file)
index_built() {
	local k v
	while read -r k v; do
		[ "$k" = built ] && { echo "$v"; return 0; }
	done </sys/kernel/debug/layerfs/nameindex
	return 1
}

@test "by default a directory gets its index once walks visited its parts twice over; eager builds one at the first lookup, off never" {
	local b m list
	lfs_workdir tmpfs
	# d/ in 8 layers, x9 in the bottom one
	mkdir -p "$WORK"/l{1..8}/d "$WORK"/on "$WORK"/eager "$WORK"/off
	: >"$WORK/l8/d/x9"
	printf -v list '%s:' "$WORK"/l{1..8}
	for m in on eager off; do
		mount -t layerfs none "$WORK/$m" -o "lowerdir=${list%:},nameindex=$m"
	done
	# two misses in d/ walk its 8 parts each: 16 visits, no index yet
	b=$(index_built)
	run "$PROBE" stat "$WORK"/on/d/x{1..2}
	[ "${lines[1]}" = "$WORK/on/d/x2: ENOENT" ]
	[ "$(index_built)" = "$b" ]
	# the next lookup builds it and finds the bottom name through it;
	# the one after uses it
	run "$PROBE" stat "$WORK/on/d/x9" "$WORK/on/d/x3"
	[[ ${lines[0]} == "$WORK/on/d/x9 ino="* ]]
	[ "${lines[1]}" = "$WORK/on/d/x3: ENOENT" ]
	[ "$(index_built)" = $((b + 1)) ]
	# eager: the root's and d/'s at the first lookup below d/
	b=$(index_built)
	"$PROBE" stat "$WORK/eager/d/x1"
	[ "$(index_built)" = $((b + 2)) ]
	# off: none, however many misses
	b=$(index_built)
	run "$PROBE" stat "$WORK"/off/d/x{1..12} "$WORK/off/d/x9"
	[[ ${lines[12]} == "$WORK/off/d/x9 ino="* ]]
	[ "$(index_built)" = "$b" ]
}

# (1000 layers: 12-mount-helper mounts them through mount.layerfs)
@test "4096 layers through lowerdir+: the tree as expected, and a sample of names the same with and without the index" {
	local n=4096
	deep_workdir
	deep_pair "$n"
	deep_expect_tree "$WORK/mnt" "$n"
	# without the index a lookup visits every part of its directory
	# (~410 at 4096 layers): a sample of the names is enough
	diff -u <(cd "$WORK/mnt" && probe_names "$n" | sed -n '1~37p' | xargs "$PROBE" stat) \
		<(cd "$WORK/off" && probe_names "$n" | sed -n '1~37p' | xargs "$PROBE" stat)
}

@test "indexes freed by the shrinker in a loop: the answers stay the same, no kernel report" {
	local pid b i m=$D500/mnt off=$BATS_FILE_TMPDIR/answers500.off
	lfs_workdir tmpfs
	# the answers without the index (setup_file's), then those with it
	# while the shrinker frees it (test 1 compared them already with the
	# index left alone).  The pair is test 1's: drop the indexes its
	# walks built, so that the first walk here builds them all, as on a
	# fresh mount
	echo 2 >/proc/sys/vm/drop_caches
	# drop every 2 s (read -t on a fifo nobody writes: no process per
	# round), so the walk below rebuilds indexes again and again.  Not
	# faster: under the debug kernel building the index of all/ (500
	# parts) takes longer than 0.1 s, and a lookup that finds its index
	# freed before it is used builds it again (the walk took over 35 min)
	mkfifo "$WORK/tick"
	(
		exec 5<>"$WORK/tick"
		while :; do
			echo 2 >/proc/sys/vm/drop_caches
			read -rt 2 -u 5 || :
		done
	) &
	pid=$!
	# a walk can fall between two drops (a drop takes seconds here):
	# walk again, up to five times, until the shrinker has freed an
	# index while we walked, that is until more were built than the 13
	# directories a walk visits have; every walk gives the same answers
	b=$(index_built)
	for i in 1 2 3 4 5; do
		answers 500 "$m" >"$WORK/answers.mnt" || { kill "$pid"; false; }
		diff -u "$off" "$WORK/answers.mnt" || { kill "$pid"; false; }
		if (($(index_built) - b > 13)); then
			break
		fi
	done
	kill "$pid"
	wait "$pid" || :
	echo "$(($(index_built) - b)) indexes built in $i walk(s)"
	(($(index_built) - b > 13))
}

@test "writes through a deep stack: new names, whiteouts and an opaque directory look up the same with and without the index" {
	local u ed='s/ ino=[0-9]+//; s/ mtime=[0-9.]+//'
	lfs_workdir tmpfs
	deep_spec 64 | (cd "$WORK" && mktree .)
	deep_layers 64 >"$WORK/layers"
	for u in eager on off; do
		mkdir -p "$WORK/u-$u" "$WORK/w-$u" "$WORK/m-$u"
		"$LFS_MOUNT" -L "$WORK/layers" -o "upperdir=$WORK/u-$u,workdir=$WORK/w-$u,nameindex=$u" "$WORK/m-$u"
		(
			cd "$WORK/m-$u"
			touch d1/new d2/f2
			rm d1/f1 d1/f11
			rm -r all/sub
			mkdir all/sub
			touch all/sub/fresh
			mv d3/f3 d4/moved
		)
	done
	# the two mounts were written seconds apart, in two upper
	# directories: inode numbers and times of what they made differ
	answers 64 "$WORK/m-off" "$ed" mtime >"$WORK/answers.off"
	for u in eager on; do
		answers_as 64 "$WORK/m-$u" "$WORK/answers.off" "$ed" mtime
		diff -u <(cd "$WORK/u-$u" && "$PROBE" dump -x mtime .) <(cd "$WORK/u-off" && "$PROBE" dump -x mtime .)
	done
	run "$PROBE" stat "$WORK/m-eager/d1/f1" "$WORK/m-eager/all/sub/s0" "$WORK/m-eager/d4/moved"
	[ "${lines[0]}" = "$WORK/m-eager/d1/f1: ENOENT" ]
	[ "${lines[1]}" = "$WORK/m-eager/all/sub/s0: ENOENT" ]
	[[ ${lines[2]} == "$WORK/m-eager/d4/moved ino="* ]]
}
