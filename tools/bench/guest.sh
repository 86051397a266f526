#!/bin/bash
# The guest side of 'make bench' (docs/bench.md): prepare the layer
# directories once on the ext4 scratch disk, then run every workload on
# every system over those same directories with tools/bench/lfs-bench.
#
#   FLAVOUR=perf vm/run.sh script tools/bench/guest.sh --image DIR --tar FILE
#                [--reps N] [--quick]
#
#   --image  the debian OCI layout (a host path, seen in the guest over 9p)
#   --tar    the source tarball unpacked by the untar workload (host path)
#   --reps   repetitions of each measurement (default 5)
#   --limit  seconds one pass of one system may take (default 60; chown -R
#            gets four times that): a system over it fails the workload with
#            "over the time limit" and is not run again in it
#   --quick  small sizes and few depths: a check of the machinery only
#   --only   a comma-separated list of workload groups to run, of walk, cmd
#            (ls -lR, find | xargs stat), memory, readdir, depth, data,
#            start, churn, copyup (default: all); the setup of the others'
#            trees is skipped.  For work on one area: the numbers of record
#            come from a whole run
#
# Writes to the results share: bench.csv (one row per system and
# repetition, see tools/bench/lfs-bench.c), bench-env.txt (kernel, tools,
# sizes), bench-notes.txt (systems skipped, failures), bench-phases.txt.
#
# Systems: layerfs, overlay (the kernel's), fuse-overlayfs (Debian's) and
# raw (the flattened tree, copied once onto the same filesystem).  Another
# system is one more case in bench_sysline and one more name in SYSTEMS;
# layerfs-noindex (layerfs -o nameindex=off) joins when the module takes
# that option.  erofs-overlay (the composefs approach: the raw tree packed
# by mkfs.erofs, loop-mounted, under the kernel's overlay) joins the
# workloads of the debian tree only (DEBIAN_SYSTEMS): the synthetic stacks
# have no image of their own.
set -uo pipefail

repo=${LFS_REPO:?}
res=${LFS_RESULTS:?}
bench=$repo/build/bin/lfs-bench
oci2ovl=$repo/build/bin/oci2ovl
base=${LFS_EXT4:?}/bench
csv=$res/bench.csv
notes=$res/bench-notes.txt
phases=$res/bench-phases.txt
image='' tarball='' reps=5 quick=0 limit=60 only=''

while [ $# -gt 0 ]; do
	case $1 in
	--image) image=$2; shift 2 ;;
	--tar) tarball=$2; shift 2 ;;
	--reps) reps=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	--only) only=",$2,"; shift 2 ;;
	*) echo "guest.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -f "$image/index.json" ] || { echo "guest.sh: no OCI layout at '$image'" >&2; exit 2; }
[ -f "$tarball" ] || { echo "guest.sh: no tarball at '$tarball'" >&2; exit 2; }
groups=",walk,cmd,memory,readdir,depth,data,start,churn,copyup,"
for g in ${only//,/ }; do
	case $groups in *",$g,"*) ;; *) echo "guest.sh: unknown workload group '$g' (${groups//,/ })" >&2; exit 2 ;; esac
done

# want GROUP...: is one of the workload groups to be run (--only)?
want() {
	local g
	[ -z "$only" ] && return 0
	for g; do
		case $only in *",$g,"*) return 0 ;; esac
	done
	return 1
}

# sizes: the issue's, or small ones for --quick
depths_all="1 2 8 32 128 500"
depths_layerfs="1000 2000 4096"
spread_names=100000
lookup_names=1000
big_mib=256
churn_files=20000
randreads=4096
if [ $quick = 1 ]; then
	depths_all="1 8 500"
	depths_layerfs="4096"
	spread_names=10000
	lookup_names=100
	big_mib=16
	churn_files=2000
	randreads=256
fi

SYSTEMS="layerfs overlay fuse-overlayfs raw"

: >"$notes"
: >"$phases"
: >"$res/bench-times.txt"
echo "workload,system,param,mode,rep,seconds,ops,checksum,status" >"$csv"

bench_note() {
	echo "$*" | tee -a "$notes"
}

phase_t0=$(date +%s)
bench_phase() {
	local now
	now=$(date +%s)
	echo "$(date -u +%H:%M:%S) +$((now - phase_t0))s $*" | tee -a "$phases"
}

bench_die() {
	bench_note "setup failed: $*"
	exit 1
}

# bench_sysline SYSTEM LAYERS RAWROOT UPPER?: one line of a systems file
# (lfs-bench -S); UPPER 1 gives the system an upper layer
bench_sysline() {
	local sys=$1 layers=$2 raw=$3 up=-
	[ "${4:-0}" = 1 ] && up=$base/up/$sys
	case $sys in
	layerfs) echo "$sys layerfs $base/mnt/$sys $layers $up -" ;;
	layerfs-noindex) echo "$sys layerfs $base/mnt/$sys $layers $up nameindex=off" ;;
	overlay) echo "$sys overlay $base/mnt/$sys $layers $up -" ;;
	fuse-overlayfs) echo "$sys fuse-overlayfs $base/mnt/$sys $layers $up -" ;;
	# the image of the raw tree; lfs-bench mounts it on $base/mnt/$sys.erofs
	erofs-overlay) echo "$sys erofs-overlay $base/mnt/$sys $base/erofs/${raw##*/}.img $up -" ;;
	raw) echo "raw none $raw - - -" ;;
	esac
}

# bench_sysfile FILE LAYERS RAWROOT UPPER SYSTEM...: a systems file
bench_sysfile() {
	local file=$1 layers=$2 raw=$3 up=$4 s
	shift 4
	: >"$file"
	for s in "$@"; do
		bench_sysline "$s" "$layers" "$raw" "$up" >>"$file"
	done
}

# bench_run MODE WORKLOAD PARAM SYSFILE OP [ARG...]; $run_limit overrides
# the time limit of one pass
bench_run() {
	local mode=$1 w=$2 p=$3 sysfile=$4 t0
	shift 4
	t0=$(date +%s)
	echo "== $w $p ($mode): $(cut -d' ' -f1 "$sysfile" | tr '\n' ' ')"
	"$bench" -S "$sysfile" -m "$mode" -n "$reps" -w "$w" -p "$p" -o "$csv" \
		-T "${run_limit:-$limit}" "$@" ||
		bench_note "$w $p ($mode): a system failed (see bench.csv)"
	echo "$w $p $mode: $(($(date +%s) - t0)) s" >>"$res/bench-times.txt"
}

# ---- the machine ----
{
	echo "kernel: $(uname -r) $(uname -v)"
	echo "cpus: $(nproc); memory: $(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)"
	echo "layers on: ext4 ($(findmnt -n -o SOURCE "$LFS_EXT4"))"
	echo "fuse-overlayfs: $(fuse-overlayfs --version 2>&1 | tr '\n' ' ')"
	echo "layerfs module: ${LFS_KO:-src/layerfs.ko}, sha256 $(sha256sum "$repo/${LFS_KO:-src/layerfs.ko}" | cut -c1-16)"
	echo "reps: $reps; time limit of a pass: $limit s; quick: $quick"
} >"$res/bench-env.txt"
cat "$res/bench-env.txt"
grep -q '^layerfs ' /proc/modules || bench_die "the layerfs module is not loaded"
[ -c /dev/fuse ] || bench_die "no /dev/fuse (CONFIG_FUSE_FS)"

# ---- the layer directories, once ----
bench_phase "setup: import the debian image (whiteouts as 0/0 character devices)"
rm -rf "$base"
mkdir -p "$base"/mnt "$base"/up "$base"/raw "$base"/depth "$base"/spread ||
	bench_die "mkdir $base"
for s in layerfs layerfs-noindex overlay fuse-overlayfs erofs-overlay prep; do
	mkdir -p "$base/mnt/$s"
done
# (its progress meter goes to a file)
"$oci2ovl" --store "$base/store" import "$image:latest" --name debian \
	--whiteout chardev >/dev/null 2>"$res/oci2ovl.log" || {
	tr '\r' '\n' <"$res/oci2ovl.log" | tail -n 5
	bench_die "oci2ovl import"
}
"$oci2ovl" --store "$base/store" layers debian >"$base/debian.layers" ||
	bench_die "oci2ovl layers"
echo "debian: $(wc -l <"$base/debian.layers") layers"

# the flattened trees come from the kernel's overlay, so that layerfs is
# checked against an implementation other than its own
bench_flatten() {
	local layers=$1 out=$2
	mount -t overlay overlay "$base/mnt/prep" -o "lowerdir=$(paste -sd: "$layers")" ||
		return 1
	mkdir -p "$out" && cp -a "$base/mnt/prep/." "$out/"
	local rc=$?
	umount "$base/mnt/prep"
	return $rc
}
bench_phase "setup: the raw debian tree (cp -a through overlay)"
bench_flatten "$base/debian.layers" "$base/raw/debian" || bench_die "flatten debian"
(cd "$base/raw/debian" && find . -mindepth 1 -printf '%P\n') >"$base/debian.list"
echo "debian: $(wc -l <"$base/debian.list") paths, $(du -sm "$base/raw/debian" | cut -f1) MiB"

# erofs-overlay's image: the raw tree packed as it is (owners, modes,
# times, xattrs, hard links), uncompressed: the guest kernel has no
# CONFIG_EROFS_FS_ZIP.  A system that cannot be made is skipped, with a
# note; one that then fails to mount fails in every workload it is in.
bench_phase "setup: the erofs image of the raw debian tree (mkfs.erofs)"
erofs=0
if ! command -v mkfs.erofs >/dev/null; then
	bench_note "erofs-overlay: skipped, no mkfs.erofs (Debian's erofs-utils)"
elif ! mkdir -p "$base/erofs" ||
	! mkfs.erofs --quiet "$base/erofs/debian.img" "$base/raw/debian" >"$res/mkfs-erofs.log" 2>&1; then
	tail -n 5 "$res/mkfs-erofs.log"
	bench_note "erofs-overlay: skipped, mkfs.erofs failed (mkfs-erofs.log)"
else
	erofs=1
	echo "erofs-utils: $(dpkg-query -W -f '${Version}' erofs-utils 2>/dev/null); debian.img: $(($(stat -c %s "$base/erofs/debian.img") >> 20)) MiB" |
		tee -a "$res/bench-env.txt"
fi

if want data copyup; then
	bench_phase "setup: the data stack (4 layers; files in the bottom one)"
	mkdir -p "$base/data"
	for i in 1 2 3 4; do
		mkdir -p "$base/data/$i/etc" && echo "layer $i" >"$base/data/$i/etc/layer$i"
		echo "$base/data/$i"
	done >"$base/data.layers"
	d4=$base/data/4
	if ! { "$bench" mkfile "$d4/big.bin" $((big_mib << 20)) 1 &&
		"$bench" mkfile "$d4/cu4k.bin" 4096 2 &&
		"$bench" mkfile "$d4/cu1m.bin" $((1 << 20)) 3 &&
		"$bench" mkfile "$d4/cu${big_mib}m.bin" $((big_mib << 20)) 4; }; then
		bench_die "data files"
fi
bench_flatten "$base/data.layers" "$base/raw/data" || bench_die "flatten data"
fi

if want depth; then
	bench_phase "setup: stacks of $depths_all $depths_layerfs layers"
	# $lookup_names names in the bottom layer, stat'ed once per cold pass:
	# as many at every depth (issue #9's measure), so that reading each
	# layer's directory from disk, once per mount, weighs the same at every
	# depth; a warm pass goes over them until it made about 2000 stats
	for d in $depths_all $depths_layerfs; do
		"$bench" mkstack "$base/depth/$d" "$d" "$lookup_names" ||
			bench_die "mkstack $d"
	done

	# the same stacks on tmpfs (issue #9's own measure): there a cold cache
	# drops no lower dentry, so what stays is the stacking filesystem's cost
	if ! { mkdir -p "$base/tmpfs" && mount -t tmpfs -o size=1G bench-tmpfs "$base/tmpfs" &&
		mkdir "$base/tmpfs/depth"; }; then
		bench_die "tmpfs for the stacks"
fi
for d in $depths_all $depths_layerfs; do
	"$bench" mkstack "$base/tmpfs/depth/$d" "$d" "$lookup_names" ||
		bench_die "mkstack $d on tmpfs"
done
fi

if want readdir; then
	bench_phase "setup: $spread_names names in one directory over 500 and 8 layers"
	for d in 500 8 0; do
		"$bench" mkspread "$base/spread/$d" $d $spread_names || bench_die "mkspread $d"
	done
fi

cp "$tarball" "$base/src.tar" || bench_die "copy the tarball"
echo "tarball: $(tar -tf "$base/src.tar" | wc -l) entries, $(($(stat -c %s "$base/src.tar") >> 20)) MiB"
sync

# stat(1) looks up the owner and group of every file it prints, and glibc
# opens /etc/passwd and /etc/group for each lookup: on the 9p root that is
# a round trip to the host per open, the same for every system and more
# than the file system's own work.  Copies on tmpfs, as a local /etc
# would be, bound over them for the run (ls -l looks each name up once).
etc_local=$(mktemp -d) || bench_die "mktemp for /etc's copies"
for f in passwd group; do
	if ! { cp "/etc/$f" "$etc_local/$f" && mount --bind "$etc_local/$f" "/etc/$f"; }; then
		bench_die "a tmpfs copy of /etc/$f"
	fi
done

# ---- which systems ----
# (on the raw tree, which every run makes: --only may skip the others)
if mount -t layerfs none "$base/mnt/layerfs" \
	-o "lowerdir=$base/raw/debian,nameindex=off" 2>/dev/null; then
	umount "$base/mnt/layerfs"
	SYSTEMS="layerfs layerfs-noindex overlay fuse-overlayfs raw"
	bench_note "layerfs-noindex: the module takes nameindex=off; measured"
else
	bench_note "layerfs-noindex: skipped, the module refuses nameindex=off"
fi
stacked=${SYSTEMS/ raw/}
layerfs_only=$(echo "$SYSTEMS" | tr ' ' '\n' | grep '^layerfs' | tr '\n' ' ')
DEBIAN_SYSTEMS=$SYSTEMS
[ $erofs = 1 ] && DEBIAN_SYSTEMS=${SYSTEMS/ raw/ erofs-overlay raw}
echo "systems: $SYSTEMS; on the debian tree: $DEBIAN_SYSTEMS"
sysd=$base/sys
mkdir -p "$sysd"

# ---- 1. metadata walk ----
bench_phase "1. metadata walk"
# shellcheck disable=SC2086 # word lists
bench_sysfile "$sysd/debian-ro" "$base/debian.layers" "$base/raw/debian" 0 $DEBIAN_SYSTEMS
for m in cold warm; do
	want walk || break
	bench_run $m walk debian "$sysd/debian-ro" walk "$base/debian.list"
done

# what users time: the programs run in the mounted tree, by lfs-bench
bench_phase "1. ls -lR; find | xargs stat"
for m in cold warm; do
	want cmd || break
	bench_run $m ls-lR debian "$sysd/debian-ro" cmd . ls-l ls -lR
	bench_run $m find-stat debian "$sysd/debian-ro" -P stat cmd . stat \
		find . -type f -print0 '|' xargs -0 stat
done

# ---- 9. memory (before chown -R changes the raw tree) ----
# bench_memcg: a cgroup2 directory whose children have the memory
# controller, in $memcg; false, with a note, when the guest has none
memcg=
bench_memcg() {
	local root=/sys/fs/cgroup
	if ! mountpoint -q $root && ! mount -t cgroup2 cgroup2 $root; then
		bench_note "memory: skipped, cgroup2 does not mount on $root"
		return 1
	fi
	if [ "$(stat -f -c %T $root)" != cgroup2fs ]; then
		bench_note "memory: skipped, $root is not cgroup2"
		return 1
	fi
	if ! grep -qw memory $root/cgroup.controllers; then
		bench_note "memory: skipped, the guest kernel has no memory controller (CONFIG_MEMCG)"
		return 1
	fi
	if ! { echo +memory >$root/cgroup.subtree_control &&
		mkdir -p $root/lfs-bench &&
		echo +memory >$root/lfs-bench/cgroup.subtree_control; }; then
		bench_note "memory: skipped, cannot give $root/lfs-bench the memory controller"
		return 1
	fi
	memcg=$root/lfs-bench
}
bench_phase "9. memory: memory.peak of a cold ls -lR"
if want memory && bench_memcg; then
	bench_run cold memory-ls-lR debian "$sysd/debian-ro" -M "$memcg" cmd . ls-l ls -lR
fi

# ---- 2. readdir ----
bench_phase "2. readdir"
for m in cold warm; do
	want readdir || break
	bench_run $m readdir-tree debian "$sysd/debian-ro" readdir .
done
for d in 500 8; do
	want readdir || break
	# shellcheck disable=SC2086
	bench_sysfile "$sysd/spread-$d" "$base/spread/$d/layers" "$base/spread/0" 0 $SYSTEMS
	for m in cold warm; do
		bench_run $m readdir-100k "$d" "$sysd/spread-$d" readdir d
	done
done

# ---- 3. stack depth ----
bench_phase "3. stack depth"
for d in $depths_all $depths_layerfs; do
	want depth || break
	systems="$SYSTEMS"
	case " $depths_layerfs " in *" $d "*) systems="$layerfs_only raw" ;; esac
	st=$base/depth/$d
	n=$lookup_names
	# raw: the bottom layer alone holds the same names
	# shellcheck disable=SC2086
	bench_sysfile "$sysd/depth-$d" "$st/layers" "$st/$d" 0 $systems
	grep -v '^raw ' "$sysd/depth-$d" >"$sysd/depth-$d-mount"
	for m in cold warm; do
		rounds=1
		[ $m = warm ] && rounds=$(((2000 + n - 1) / n))
		bench_run $m lookup-bottom "$d" "$sysd/depth-$d" stat-names d b "$n" exist $rounds
		bench_run $m lookup-absent "$d" "$sysd/depth-$d" stat-names d n "$n" absent $rounds
		bench_run $m mount "$d" "$sysd/depth-$d-mount" mount
	done
done

# the same on tmpfs layers: stat only (mount time is measured above)
bench_phase "3. stack depth, tmpfs layers"
for d in $depths_all $depths_layerfs; do
	want depth || break
	systems="$SYSTEMS"
	case " $depths_layerfs " in *" $d "*) systems="$layerfs_only raw" ;; esac
	st=$base/tmpfs/depth/$d
	n=$lookup_names
	# shellcheck disable=SC2086
	bench_sysfile "$sysd/depth-tmpfs-$d" "$st/layers" "$st/$d" 0 $systems
	for m in cold warm; do
		rounds=1
		[ $m = warm ] && rounds=$(((2000 + n - 1) / n))
		bench_run $m lookup-bottom-tmpfs "$d" "$sysd/depth-tmpfs-$d" stat-names d b "$n" exist $rounds
		bench_run $m lookup-absent-tmpfs "$d" "$sysd/depth-tmpfs-$d" stat-names d n "$n" absent $rounds
	done
done

# ---- 4. data ----
bench_phase "4. data"
if want data; then
	# shellcheck disable=SC2086
	bench_sysfile "$sysd/data-ro" "$base/data.layers" "$base/raw/data" 0 $SYSTEMS
	for m in cold warm; do
		bench_run $m read-seq "${big_mib}M" "$sysd/data-ro" read big.bin
		bench_run $m read-mmap "${big_mib}M" "$sysd/data-ro" mmap big.bin
		bench_run $m read-rand "${randreads}x4K" "$sysd/data-ro" randread big.bin $randreads
	done
fi

# ---- 7. container start (before the writes below change the raw tree) ----
bench_phase "7. container start"
# shellcheck disable=SC2086
bench_sysfile "$sysd/debian-rw" "$base/debian.layers" "$base/raw/debian" 1 $DEBIAN_SYSTEMS
for m in cold warm; do
	want start || break
	bench_run $m start python3 "$sysd/debian-rw" start /usr/bin/python3 -c \
		'import sys, platform; print(platform.freedesktop_os_release()["PRETTY_NAME"], sys.version)'
done

# ---- 6. namespace churn ----
bench_phase "6. namespace churn"
if want churn; then
	bench_run fresh churn "$churn_files" "$sysd/debian-rw" churn var/tmp "$churn_files"
	bench_run fresh untar "$(basename "$tarball")" "$sysd/debian-rw" untar "$base/src.tar" var/tmp/untar
fi

# ---- 5. copy-up ----
bench_phase "5. copy-up"
if want copyup; then
	# shellcheck disable=SC2086
	bench_sysfile "$sysd/data-rw" "$base/data.layers" "$base/raw/data" 1 $SYSTEMS
	for f in cu4k.bin cu1m.bin "cu${big_mib}m.bin"; do
		p=${f#cu}
		bench_run fresh copyup "${p%.bin}" "$sysd/data-rw" copyup "$f"
	done
	# last: on the raw system it changes the tree for good
	run_limit=$((4 * limit)) bench_run fresh chown-r debian "$sysd/debian-rw" chown-r . 1000 1000
fi

bench_phase "done"
# erofs-overlay's overlay before its erofs (lfs-bench unmounts both; this
# is for a run that was stopped)
for s in $stacked erofs-overlay erofs-overlay.erofs; do
	mountpoint -q "$base/mnt/$s" && umount "$base/mnt/$s"
done
! mountpoint -q "$base/tmpfs" || umount "$base/tmpfs"
umount /etc/passwd /etc/group
[ -z "$memcg" ] || rmdir "$memcg" || bench_note "cgroup $memcg left behind"
# nothing may be left mounted, or the module cannot unload
! grep -q " $base/" /proc/mounts || bench_note "mounts left behind: $(grep " $base/" /proc/mounts)"
exit 0
