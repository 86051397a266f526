#!/usr/bin/env bats
# layerfs-mount as the programs that call it use it: mount(8), through
# the installed /sbin/mount.layerfs, and a container engine's
# mount_program (run as "PROG -o OPTIONS TARGET" in the driver's home).
# Its option parsing is tested on the host (tests/bats/host/10-*).

bats_require_minimum_version 1.5.0
load lib

teardown() {
	lfs_cleanup
}

# N layer directories $WORK/l/0001..N (fixed width), layer i holding f<i>
# and "top" = i; their paths, colon-separated, in $LIST.  One mktree:
# a process start costs ~150 ms in the guest; and one awk, not a bash
# loop: bats traces each of its steps (20 s for 1000 layers).
lfs_helper_layers() {
	awk -v n="$1" -v w="$WORK" -v list="$WORK/list" 'BEGIN {
		for (i = 1; i <= n; i++) {
			printf "f l/%04d/f%d %d\nf l/%04d/top %d\n", i, i, i, i, i
			printf "%s%s/l/%04d", (i > 1 ? ":" : ""), w, i >list
		}
	}' | mktree "$WORK"
	LIST=$(<"$WORK/list")
}

@test "as a mount program: relative paths against the cwd, volatile accepted, exits leaving nothing on its stdout" {
	lfs_workdir tmpfs
	lfs_helper_layers 3
	mkdir "$WORK/u" "$WORK/w"
	# a process left behind holding stdout would keep cat waiting;
	# pipefail: the status is the helper's, not cat's
	run timeout 20 bash -c "set -o pipefail; cd '$WORK' && '$LFS_MOUNT' -o lowerdir=l/0001:l/0002:l/0003,upperdir=u,workdir=w,volatile mnt | cat"
	echo "$output"
	[ "$status" = 0 ]
	[ -z "$output" ]
	local opts
	opts=$(awk -v m="$WORK/mnt" '$2 == m { print $3, $4 }' /proc/mounts)
	[[ $opts == "layerfs rw,"* ]]
	[[ $opts == *",lowerdir=$LIST,upperdir=$WORK/u,workdir=$WORK/w"* ]]
	[ "$(cat "$WORK/mnt/top")" = 1 ]
	echo written >"$WORK/mnt/f3"
	[ "$(cat "$WORK/u/f3")" = written ]
	[ "$(cat "$WORK/l/0003/f3")" = 3 ]
}

@test "a refused mount exits 32 with the kernel's reason from the fs_context log" {
	lfs_workdir tmpfs
	lfs_helper_layers 1
	mkdir "$WORK/w"
	run "$LFS_MOUNT" -o "lowerdir=$LIST,upperdir=$WORK/missing,workdir=$WORK/w" "$WORK/mnt"
	echo "$output"
	[ "$status" = 32 ]
	[ "${lines[0]}" = "layerfs-mount: upperdir=$WORK/missing: No such file or directory" ]
	[[ ${lines[1]} == "layerfs-mount: kernel: layerfs: "*"$WORK/missing"* ]]
	run "$LFS_MOUNT" -o "lowerdir=$LIST,bogus=1" "$WORK/mnt"
	echo "$output"
	[ "$status" = 32 ]
	[ "${lines[0]}" = "layerfs-mount: bogus=1: Invalid argument" ]
	[ "${lines[1]}" = "layerfs-mount: kernel: layerfs: Unknown parameter 'bogus'" ]
	# -s skips what the kernel does not know, and mounts
	"$LFS_MOUNT" -s -o "lowerdir=$LIST,bogus=1" "$WORK/mnt"
	[ "$(cat "$WORK/mnt/top")" = 1 ]
	! grep -q " $WORK/mnt .*bogus" /proc/mounts
}

@test "-o remount switches a mount read-only and back; -N mounts in another namespace" {
	lfs_workdir tmpfs
	lfs_helper_layers 2
	mkdir "$WORK/u" "$WORK/w" "$WORK/mnt2"
	"$LFS_MOUNT" -o "lowerdir=$LIST,upperdir=$WORK/u,workdir=$WORK/w" "$WORK/mnt"
	"$LFS_MOUNT" none "$WORK/mnt" -o remount,ro,nosuid
	"$PROBE" ops "$WORK/mnt" <<<'create new x => EROFS'
	grep -q " $WORK/mnt layerfs ro,nosuid," /proc/mounts
	"$LFS_MOUNT" none "$WORK/mnt" -o remount,rw,suid
	grep -q " $WORK/mnt layerfs rw,relatime," /proc/mounts
	echo x >"$WORK/mnt/new"
	[ -f "$WORK/u/new" ]
	# a process in a private mount namespace gets the mount, we do not
	unshare -m --propagation private sleep 60 &
	local pid=$! i
	for ((i = 0; i < 50; i++)); do
		[ "$(readlink /proc/$pid/ns/mnt)" = "$(readlink /proc/self/ns/mnt)" ] || break
		sleep 0.1
	done
	"$LFS_MOUNT" -N "$pid" -o "lowerdir=$WORK/l/0002" "$WORK/mnt2"
	grep -q " $WORK/mnt2 layerfs " "/proc/$pid/mounts"
	run -1 grep -q " $WORK/mnt2 " /proc/self/mounts
	kill "$pid"
}

# The directories as open descriptors (FSCONFIG_SET_FD): the kernel takes
# the directory the descriptor was opened on, whatever its path is now.
@test "--by-fd gives layers, upperdir and workdir as descriptors; /proc/mounts shows their paths; the kernel's refusals name them" {
	lfs_workdir ext4
	lfs_helper_layers 3
	mkdir -p "$WORK"/{u,w,uw/u,uw/w,iduw}
	"$LFS_MOUNT" --by-fd -o "lowerdir=$LIST,upperdir=$WORK/u,workdir=$WORK/w" "$WORK/mnt"
	local opts
	opts=$(awk -v m="$WORK/mnt" '$2 == m { print $4 }' /proc/mounts)
	[[ $opts == *",lowerdir=$LIST,upperdir=$WORK/u,workdir=$WORK/w"* ]]
	[ "$(cat "$WORK/mnt/top")" = 1 ]
	[ "$(cat "$WORK/mnt/f3")" = 3 ]
	echo written >"$WORK/mnt/f2"
	[ "$(cat "$WORK/u/f2")" = written ]
	[ "$(cat "$WORK/l/0002/f2")" = 2 ]
	umount "$WORK/mnt"
	# what the kernel refuses for a path it refuses for a descriptor,
	# and says which directory it was
	# (root, the mounter, has no id on iduw: no work/ there)
	"$PROBE" idmap "$WORK/uw" "$WORK/iduw"
	run -32 "$LFS_MOUNT" --by-fd -o "lowerdir=$WORK/l/0001,upperdir=$WORK/iduw/u,workdir=$WORK/iduw/w" "$WORK/mnt"
	echo "$output"
	[[ $output == *"layerfs: workdir \"$WORK/iduw/w\": cannot make work/ (-75)"* ]]
	run -1 grep -q " $WORK/mnt " /proc/mounts
	# an idmapped lower layer by descriptor: its owners as it shows them
	"$LFS_MOUNT" --by-fd -l "$WORK/iduw/u" "$WORK/mnt"
	[ "$(stat -c %u "$WORK/mnt")" = 100000 ]
	umount "$WORK/mnt"
	# a descriptor of a file; one for a key that takes none
	echo x >"$WORK/file"
	run "$PROBE" fdparam lowerdir+ "$WORK/file"
	[ "${lines[0]}" = "fsconfig: ENOTDIR" ]
	run "$PROBE" fdparam nameindex "$WORK/l/0001"
	[ "${lines[0]}" = "fsconfig: EINVAL" ]
	# a detached mount comes as an O_PATH descriptor, which 6.1's
	# fsconfig() does not take
	run "$PROBE" fdparam lowerdir+ "$WORK/l/0001" detached
	[ "${lines[0]}" = "fsconfig: EBADF" ]
	run "$PROBE" fdparam lowerdir+ "$WORK/l/0001"
	[ "${lines[1]}" = "create: ok" ]
}

# mount(8) runs a helper only from /sbin (util-linux: /sbin, /sbin/fs.d,
# /sbin/fs), and the guest's /sbin is the host's, read-only over 9p.  So
# the test installs with 'make install DESTDIR', and in a private mount
# namespace stacks DESTDIR/sbin over /sbin with the kernel's overlay: the
# unmodified mount(8) then finds /sbin/mount.layerfs where it looks.
@test "mount -t layerfs with 1000 layers works through the installed /sbin/mount.layerfs; without it mount(2) fails" {
	lfs_workdir tmpfs
	lfs_helper_layers 1000
	local d=$WORK/destdir
	make -s -C "$LFS_REPO" --no-print-directory install-tools DESTDIR="$d" \
		PREFIX=/usr SBINDIR=/sbin >"$WORK/make.log" 2>&1 || {
		cat "$WORK/make.log"
		return 1
	}
	# four pages of options; mount(2) keeps the first 4095 bytes, which
	# end inside a layer path (fixed-width names: a cut one names nothing)
	[ "${#LIST}" -gt 16384 ]
	cat >"$WORK/in-ns.sh" <<-EOF
		set -e
		[ ! -e /sbin/mount.layerfs ]
		mount -t overlay overlay -o "lowerdir=$d/sbin:/sbin" /sbin
		cmp /sbin/mount.layerfs "$LFS_MOUNT"
		# -i: mount(2) itself, which takes one page of options
		if mount -i -t layerfs none "$WORK/mnt" -o "lowerdir=$LIST" 2>"$WORK/mount-i.err"; then
			echo "mount -i: mounted"
			exit 1
		fi
		mount -t layerfs none "$WORK/mnt" -o "lowerdir=$LIST"
		findmnt -nr -o FSTYPE,SOURCE "$WORK/mnt"
		ls "$WORK/mnt" | wc -l
		# (mktree writes contents without a newline)
		for f in top f1 f1000; do
			echo "\$(cat "$WORK/mnt/\$f")"
		done
		umount "$WORK/mnt"
		findmnt "$WORK/mnt" >/dev/null || echo unmounted
	EOF
	run unshare -m --propagation private bash "$WORK/in-ns.sh"
	echo "$output"
	cat "$WORK/mount-i.err"
	[ "$status" = 0 ]
	diff -u - <(echo "$output") <<-'EOF'
		layerfs none
		1001
		1
		1
		1000
		unmounted
	EOF
	# outside the namespace nothing changed
	[ ! -e /sbin/mount.layerfs ]
}

# commit_deep DIR N make|append|check: under DIR, N nested directories
# "dir" (deeper than a path can name: PATH_MAX is 4096) with, at the
# bottom, x and its hard link y (make); append to x; or print whether y
# is x and what it holds (check).  Perl walks it one chdir at a time.
commit_deep() {
	perl -e '
		my ($dir, $n, $cmd) = @ARGV;
		chdir $dir or die "$dir: $!\n";
		for (1 .. $n) {
			$cmd ne "make" or mkdir "dir" or die "mkdir: $!\n";
			chdir "dir" or die "chdir: $!\n";
		}
		if ($cmd eq "make") {
			open(my $f, ">", "x") or die "x: $!\n";
			print $f "old\n";
			close $f or die;
			link "x", "y" or die "link: $!\n";
		} elsif ($cmd eq "append") {
			open(my $f, ">>", "x") or die "x: $!\n";
			print $f "more\n";
			close $f or die "x: $!\n";
		} else {
			my @x = stat "x" or die "x: $!\n";
			my @y = stat "y" or die "y: $!\n";
			open(my $f, "<", "y") or die "y: $!\n";
			local $/;
			my $c = <$f>;
			$c =~ s/\n/ /g;
			print $x[1] == $y[1] ? "y is x: " : "y is not x: ", $c, "\n";
		}' "$@"
}

@test "--commit links up names only on the root of a writable layerfs mount; it walks a hostile tree by descriptor, past PATH_MAX, opening nothing but directories, following no symlink, and past mounts on it" {
	lfs_workdir tmpfs
	mktree "$WORK" <<-EOF
		f L/f f
		p L/fifo
		c L/null 1 3
		l L/passwd /etc/passwd
		l L/etc /etc
		f L/sub/h1 old
		h L/sub/h2 L/sub/h1
	EOF
	commit_deep "$WORK/L" 1100 make
	mkdir "$WORK/u" "$WORK/w"
	"$LFS_MOUNT" -o "lowerdir=$WORK/L,upperdir=$WORK/u,workdir=$WORK/w" "$WORK/mnt"
	echo more >>"$WORK/mnt/sub/h1"
	# another mount inside: it hides sub/h2, which needs linking up,
	# from a walk of the mount; --commit walks a copy without it
	mount -t tmpfs tmpfs "$WORK/mnt/sub"
	echo x >"$WORK/mnt/sub/other"
	commit_deep "$WORK/mnt" 1100 append
	# what is not the root of a layerfs mount
	run "$LFS_MOUNT" --commit "$WORK/mnt/sub"
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: $WORK/mnt/sub: not a layerfs mount (filesystem type 0x1021994)" ]
	run "$LFS_MOUNT" --commit "$WORK/mnt/dir"
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: $WORK/mnt/dir: not the root of a layerfs mount: a commit walks the whole mount" ]
	run "$LFS_MOUNT" --commit "$WORK/mnt/f"
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: $WORK/mnt/f: Not a directory" ]
	# the copy of the mount and the ioctls want CAP_SYS_ADMIN
	run setpriv --reuid=65534 --regid=65534 --clear-groups "$LFS_MOUNT" --commit "$WORK/mnt"
	[ "$status" = 1 ]
	[ "$output" = "layerfs-mount: $WORK/mnt: cloning the mount to walk it: Operation not permitted (needs CAP_SYS_ADMIN)" ]
	# the names f, fifo, null, passwd, etc, sub/h1, sub/h2 and the deep
	# x and y: a walk that followed the symlink etc or entered the tmpfs
	# on sub would count others, and an ioctl on the tmpfs file would
	# fail (ENOTTY); y and sub/h2 are linked up
	run "$LFS_MOUNT" --commit -v "$WORK/mnt"
	echo "$output"
	[ "$status" = 0 ]
	[ "$output" = "layerfs-mount: $WORK/mnt: 9 names in 1102 directories; linked up: 2; failed: 0" ]
	run commit_deep "$WORK/u" 1100 check
	[ "$status" = 0 ]
	[ "$output" = "y is x: old more " ]
	[ "$WORK/u/sub/h1" -ef "$WORK/u/sub/h2" ]
	[ "$(cat "$WORK/mnt/sub/other")" = x ]
	# read-only: refused before the walk
	"$LFS_MOUNT" none "$WORK/mnt" -o remount,ro
	run "$LFS_MOUNT" --commit "$WORK/mnt"
	[ "$status" = 32 ]
	[ "$output" = "layerfs-mount: $WORK/mnt: mounted read-only: no name can be linked up" ]
}
