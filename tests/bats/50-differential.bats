#!/usr/bin/env bats
# The kernel's overlay and layerfs, mounted on the same layer directories
# (whiteouts as character devices), show identical trees, and so does the
# stack flattened without either (lfs-probe flatten).  Nesting: layerfs
# over layerfs and over overlay.

load lib

teardown() {
	lfs_cleanup
}

# random_layers N SEED: a random stack of N layers in mktree form, with
# files, directories, symlinks, chardev whiteouts and opaque directories
# over a shared pool of names; modes, owners, set-id bits; xattrs of
# every namespace (user.* only where the layers are on ext4: 6.1's tmpfs
# has none; values past 255 bytes, binary ones, POSIX ACLs, default ACLs
# on directories, which what the layer makes in them later inherits);
# devices, fifos and sockets under names of their own; hard links within
# a layer and across layers, all in h/, which no whiteout or opaque
# directory reaches, so that every link of a file shows and a flattened
# copy has its link count.
random_layers() {
	local n=$1 l i k name dirs=(a a/b a/b/c d e/f) long
	RANDOM=$2
	echo "f L$((n - 1))/h/base b"
	for ((l = n - 1; l >= 0; l--)); do
		for ((i = 0; i < 40; i++)); do
			name=${dirs[RANDOM % ${#dirs[@]}]}/n$((RANDOM % 12))
			k=$((RANDOM % 20))
			case $k in
			0 | 1 | 2 | 3) echo "f L$l/$name v$l-$RANDOM" ;;
			4) echo "d L$l/$name" ;;
			5) echo "l L$l/$name t$RANDOM" ;;
			6 | 7) echo "W L$l/$name" ;;
			8) echo "o L$l/${dirs[RANDOM % ${#dirs[@]}]}" ;;
			9) echo "f L$l/${dirs[RANDOM % ${#dirs[@]}]}/m$RANDOM x" ;;
			10)
				echo "f L$l/$name v$l-$RANDOM"
				printf 'm L%s/%s %o\n' "$l" "$name" $((RANDOM % 8 * 512 + RANDOM % 512))
				echo "u L$l/$name $((RANDOM % 3 * 1000)) $((RANDOM % 2 * 100))"
				;;
			11)
				echo "f L$l/$name v$l-$RANDOM"
				echo "a L$l/$name trusted.t.k$((RANDOM % 3)) v$l"
				echo "a L$l/$name user.u.k$((RANDOM % 3)) u$l"
				;;
			12)
				echo "f L$l/$name v$l-$RANDOM"
				printf -v long '%0*d' $((256 + RANDOM % 600)) 0
				echo "a L$l/$name trusted.t.long ${long//0/$((RANDOM % 10))}z$RANDOM"
				echo "a L$l/$name security.t.s$((RANDOM % 2)) s$l"
				;;
			13)
				echo "f L$l/$name v$l-$RANDOM"
				printf 'a L%s/%s trusted.t.bin 0x00%04x0aff%04x\n' "$l" "$name" $RANDOM $RANDOM
				# owner rw, user 1000+R r, group r, mask r, other r
				printf 'a L%s/%s system.posix_acl_access 0x0200000001000600ffffffff02000400%02x03000004000400ffffffff10000400ffffffff20000400ffffffff\n' \
					"$l" "$name" $((RANDOM % 3 + 0xe8))
				;;
			14)
				# majors without a driver: opening one never waits
				echo "c L$l/${name%/*}/c$((RANDOM % 3)) $((60 + RANDOM % 4)) $((RANDOM % 256))"
				echo "b L$l/${name%/*}/b$((RANDOM % 3)) $((60 + RANDOM % 4)) $((RANDOM % 256))"
				;;
			15)
				echo "p L$l/${name%/*}/p$((RANDOM % 3))"
				echo "s L$l/${name%/*}/s$((RANDOM % 3))"
				;;
			16)
				echo "f L$l/h/f$l-$i v$RANDOM"
				echo "h L$l/h/g$l-$i L$l/h/f$l-$i"
				;;
			17) echo "h L$l/h/x$l-$i L$((n - 1))/h/base" ;;
			18)
				name=${dirs[RANDOM % ${#dirs[@]}]}
				printf 'm L%s/%s %o\n' "$l" "$name" $((RANDOM % 2 * 512 + 448 + RANDOM % 64))
				echo "u L$l/$name $((RANDOM % 2 * 1000)) 0"
				echo "a L$l/$name trusted.t.dir d$l"
				# default ACL u::rwx,u:1000:rwx,g::r-x,m::rwx,o::r-x
				echo "a L$l/$name system.posix_acl_default 0x0200000001000700ffffffff02000700e803000004000500ffffffff10000700ffffffff20000500ffffffff"
				;;
			19) echo "l L$l/${name%/*}/long$((RANDOM % 2)) $(printf 't%.0s' {1..200})" ;;
			esac
		done
	done
	return 0
}

# The stacks of test 1 take the time they have: LFS_DIFF_SECONDS (default
# 40) over both filesystems, seeds 1, 2, ... on each, at least 3 and at
# most LFS_DIFF_MAX_SEEDS (default 10) each; the seeds are a prefix, so a
# failure replays on any machine.
@test "overlay, layerfs and the flattened stack agree on random stacks, as many as the time allows" {
	local seed n layers dirs flat lines t0 budget done_seeds=0
	budget=$(( ${LFS_DIFF_SECONDS:-40} / ${#LFS_FILESYSTEMS[@]} ))
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		t0=$SECONDS
		for ((seed = 1; seed <= ${LFS_DIFF_MAX_SEEDS:-10}; seed++)); do
			# past the first three, only while the budget lasts
			((seed <= 3 || SECONDS - t0 < budget)) || break
			done_seeds=$((done_seeds + 1))
			lfs_workdir "$fs"
			n=$((2 + seed % 6))
			# some random ops cannot apply (a path under a file): -k
			lfs_untraced random_layers "$n" "$seed" | "$PROBE" mktree -k "$WORK"
			dirs=()
			for ((i = 0; i < n; i++)); do
				dirs+=("$WORK/L$i")
			done
			layers=$(IFS=:; echo "${dirs[*]}")
			mkdir -p "$WORK"/L{0..9} "$WORK/ovl"
			mount -t overlay none "$WORK/ovl" -o "lowerdir=$layers"
			mount -t layerfs none "$WORK/mnt" -o "lowerdir=$layers"
			# overlay lists whiteouts in a directory that only one
			# layer holds (it passes such a readdir through), though
			# lookup hides them; layerfs hides them in both
			"$PROBE" dump "$WORK/mnt" >"$WORK/lfs.dump"
			diff -u <("$PROBE" dump "$WORK/ovl" | grep -v '^FAIL lstat .*: No such file') \
				"$WORK/lfs.dump"
			# the stack flattened by the read side's rules: the same
			# but for what a merged directory cannot share with a
			# plain one (see lfs-probe dump -x dirs)
			flat=$WORK/flat
			"$PROBE" flatten "$flat" "${dirs[@]}"
			diff -u <("$PROBE" dump -x dirs "$flat") <("$PROBE" dump -x dirs "$WORK/mnt")
			umount "$WORK/ovl" "$WORK/mnt"
			# the stacks hold what the generator varies
			mapfile -t lines <"$WORK/lfs.dump"
			echo "# $fs seed $seed: $n layers, ${#lines[@]} objects"
			((${#lines[@]} >= 40))
		done
	done
	echo "# $done_seeds stacks compared"
	((done_seeds >= 3 * ${#LFS_FILESYSTEMS[@]}))
}

@test "the random stacks vary modes, owners, xattrs, hard links and devices, and the comparison sees them" {
	local fs dump
	for fs in "${LFS_FILESYSTEMS[@]}"; do
		lfs_workdir "$fs"
		lfs_untraced random_layers 7 5 | "$PROBE" mktree -k "$WORK"
		mkdir -p "$WORK"/L{0..6}
		lfs_mount_layers "$WORK/mnt" "$WORK"/L{0..6}
		dump=$("$PROBE" dump "$WORK/mnt")
		umount "$WORK/mnt"
		[[ $dump == *" c "*" dev=6"[0-3]":"* ]]
		[[ $dump == *" b "*" dev=6"[0-3]":"* ]]
		[[ $dump == *$'\n'*" p "* ]]
		[[ $dump == *$'\n'*" s "* ]]
		[[ $dump =~ \ [0-7]+\ [1-9][0-9]*:[0-9]+\  ]]
		[[ $dump == *" hl=h/base "* ]]
		[[ $dump == *" hl=h/f"* ]]
		[[ $dump =~ \ trusted\.t\.long=[0-9]{256} ]]
		[[ $dump == *" trusted.t.bin=0x00"* ]]
		[[ $dump == *" security.t.s"* ]]
		[[ $dump == *" system.posix_acl_access=0x02"* ]]
		[[ $dump == *" system.posix_acl_default=0x02"* ]]
		[[ $dump == *" trusted.t.dir=d"* ]]
		if [ "$fs" = ext4 ]; then
			[[ $dump == *" user.u.k"* ]]
		fi
	done
}

@test "layerfs stacks over layerfs and over overlay; a third level is refused" {
	lfs_workdir tmpfs
	mktree "$WORK" <<<'f a/x 1
f b/y 2
W b/z
f c/z 3
f d/w 4'
	mkdir "$WORK/inner" "$WORK/ovl" "$WORK/outer" "$WORK/third"
	lfs_mount_layers "$WORK/inner" "$WORK/a" "$WORK/b" "$WORK/c"
	mount -t overlay none "$WORK/ovl" -o "lowerdir=$WORK/b:$WORK/c"
	lfs_mount_layers "$WORK/outer" "$WORK/d" "$WORK/inner" "$WORK/ovl"
	expect_tree "$WORK/outer" 'f w 4
f x 1
f y 2'
	"$PROBE" dino "$WORK/outer"
	run "$PROBE" mount2 layerfs "$WORK/third" "lowerdir=$WORK/outer"
	[ "$output" = "mount: EINVAL" ]
	dmesg | grep -q 'layerfs: maximum filesystem stacking depth exceeded'
}
