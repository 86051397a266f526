#!/usr/bin/env bats
# The name index of deep directories (src/nameindex.c) changes no answer:
# a deep stack mounted with it (the default) and with nameindex=off shows
# the same tree, and every name (present, missing, whited out, hidden by
# an opaque directory, below a file) looks up the same.  Also while the
# shrinker frees indexes in a loop, and through the write side.

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

# same_answers N M1 M2 [SED]: M1 and M2 show the same tree and the same
# stat of every probe_names N path (its lines edited by SED, if given)
same_answers() {
	local n=$1 a=$2 b=$3 ed=${4:-}
	diff -u <("$PROBE" dump "$a") <("$PROBE" dump "$b") || return 1
	diff -u <(cd "$a" && probe_names "$n" | xargs "$PROBE" stat | sed -E "$ed") \
		<(cd "$b" && probe_names "$n" | xargs "$PROBE" stat | sed -E "$ed")
}

# deep_pair N: a deep_spec N stack on tmpfs, mounted on $WORK/mnt with the
# index and on $WORK/off without, through lowerdir+
deep_pair() {
	deep_workdir
	deep_spec "$1" | mktree "$WORK"
	deep_layers "$1" >"$WORK/layers"
	mkdir "$WORK/off"
	"$LFS_MOUNT" -L "$WORK/layers" "$WORK/mnt"
	"$LFS_MOUNT" -L "$WORK/layers" -o nameindex=off "$WORK/off"
	grep -q " $WORK/off layerfs .*,nameindex=off" /proc/mounts
	! grep -q " $WORK/mnt layerfs .*nameindex" /proc/mounts
}

@test "500 layers: the same tree and the same answer for every name with and without the index" {
	deep_pair 500
	expect_tree "$WORK/mnt" "$(deep_expected 500)"
	same_answers 500 "$WORK/mnt" "$WORK/off"
	# misses really miss, hits really hit
	run "$PROBE" stat "$WORK/mnt/d3/miss3" "$WORK/mnt/d3/f3" "$WORK/mnt/all/f80"
	[ "${lines[0]}" = "$WORK/mnt/d3/miss3: ENOENT" ]
	[[ ${lines[1]} == "$WORK/mnt/d3/f3 ino="* ]]
	[ "${lines[2]}" = "$WORK/mnt/all/f80: ENOENT" ]
}

@test "1000 and 4096 layers through lowerdir+: the tree as expected, and a sample of names the same with and without the index" {
	local n
	for n in 1000 4096; do
		deep_pair "$n"
		expect_tree "$WORK/mnt" "$(deep_expected "$n")"
		# without the index a lookup visits every part of its directory
		# (~410 at 4096 layers): a sample of the names is enough
		diff -u <(cd "$WORK/mnt" && probe_names "$n" | sed -n '1~37p' | xargs "$PROBE" stat) \
			<(cd "$WORK/off" && probe_names "$n" | sed -n '1~37p' | xargs "$PROBE" stat)
		lfs_cleanup
	done
}

@test "indexes freed by the shrinker in a loop: the answers stay the same, no kernel report" {
	local pid
	deep_pair 500
	same_answers 500 "$WORK/mnt" "$WORK/off"
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
	same_answers 500 "$WORK/mnt" "$WORK/off" || { kill "$pid"; false; }
	kill "$pid"
	wait "$pid" || :
}

@test "writes through a deep stack: new names, whiteouts and an opaque directory look up the same with and without the index" {
	local u
	lfs_workdir tmpfs
	deep_spec 64 | mktree "$WORK"
	deep_layers 64 >"$WORK/layers"
	for u in on off; do
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
	same_answers 64 "$WORK/m-on" "$WORK/m-off" 's/ ino=[0-9]+//; s/ mtime=[0-9.]+//'
	run "$PROBE" stat "$WORK/m-on/d1/f1" "$WORK/m-on/all/sub/s0" "$WORK/m-on/d4/moved"
	[ "${lines[0]}" = "$WORK/m-on/d1/f1: ENOENT" ]
	[ "${lines[1]}" = "$WORK/m-on/all/sub/s0: ENOENT" ]
	[[ ${lines[2]} == "$WORK/m-on/d4/moved ino="* ]]
	diff -u <("$PROBE" dump "$WORK/u-on") <("$PROBE" dump "$WORK/u-off")
}
