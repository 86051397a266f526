#!/bin/bash
# Rootless podman with --userns=keep-id, in the guest (issue #26): the
# user lfs (uid 1000, subordinate ids 100000-165535, the helpers of
# tests/bats/lib-podman.bash) runs one image under three setups of
# containers-storage's overlay driver:
#
#   layerfs          mount_program = layerfs-mount, which idmaps the layerfs
#                    mount with the uidmapping=/gidmapping= the driver gives
#                    it: a keep-id container needs no copy of the image
#   fuse-overlayfs   mount_program = fuse-overlayfs (Debian's), which maps
#                    the ids itself
#   overlay          rootless podman's native driver, the kernel's overlay:
#                    for a keep-id container it makes a copy of the image
#                    with every owner shifted (a layer of the storage that
#                    it keeps for later keep-id containers of that image)
#
# usage (from the host; a guest script, see vm/run.sh):
#   vm/run.sh script tools/bench/podman-rootless.sh [--reps N] [--limit S]
#       [--image NAME] [--csv FILE] [--setups "layerfs fuse-overlayfs overlay"]
#
#   --image    the OCI layout build/images/NAME (default debian, from
#              make image-debian), pulled by the user as localhost/rl-NAME
#   --reps     repetitions (default 5); the report gives their median
#   --limit    seconds one podman command may take (default 900; a pull
#              four times that); over it, it is killed and fails
#   --csv      rows go to FILE (default $LFS_RESULTS/rootless.csv), in
#              tools/bench's schema: workload,system,param,mode,rep,
#              seconds,ops,checksum,status
#
# What each repetition times, per setup (the setups in another order in
# each repetition, so that none always follows the same other one):
#
#   rootless-keepid  keep-id first  'podman run --rm --userns=keep-id IMAGE
#                    true', a real first run: before it, the storage is put
#                    back as it was after the pull (rl_fresh: the layers
#                    podman added since, the chowned copy of the image that
#                    native overlay keeps for the next keep-id container,
#                    are deleted, and its layers.json and images.json, which
#                    name that copy in the image's MappedTopLayers, are
#                    restored), so every repetition pays the copy again.
#                    The ops column is the number of layers the run added
#                    (1 on overlay: the copy; 0 on the mount programs).
#                    (Every setup made one keep-id run, untimed, before
#                    the first repetition, as it made a plain one.)
#   rootless-run     plain warm     'podman run --rm IMAGE true' in the
#                    user's default namespace (container start; every setup
#                    ran the image once, untimed, before the first rep)
#   rootless-walk    plain|keep-id cold|warm  a metadata walk inside a
#                    container already started: 'find / -xdev -printf' of
#                    type, mode, owner, size and path of every entry, timed
#                    in the container (bash's EPOCHREALTIME around it), twice
#                    in one container: cold is the first walk after 'echo 3
#                    >/proc/sys/vm/drop_caches' before the container's start
#                    (a fresh mount, caches dropped; starting the container
#                    read a few files), warm the second.  keep-id walks as
#                    uid 1000 (what it may read; overlay: over the copy).
#                    ops: entries walked; checksum: of the listing less
#                    directory sizes and the files podman binds in.
#
# Before the repetitions each storage pulls the image once (one
# 'rootless-pull' row and a note: layerfs and fuse-overlayfs share one
# storage, both read the AUFS whiteout format, so its pull is one row,
# layerfs's).  The user's home and the storages live on the ext4 scratch
# disk.  A command that fails gives a FAIL row with its message (and a
# note), and that setup is not timed again in that workload; a setup whose
# storage cannot be made fails every workload.  The script exits non-zero
# when anything failed.  Prints a summary (medians; keep-id over plain).
set -uo pipefail

repo=${LFS_REPO:?}
res=${LFS_RESULTS:?}
reps=5 limit=900 image=debian csv=$res/rootless.csv root=/tmp/podman-rootless
setups="layerfs fuse-overlayfs overlay"
while [ $# -gt 0 ]; do
	case $1 in
	--reps) reps=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--image) image=$2; shift 2 ;;
	--csv) csv=$2; shift 2 ;;
	--setups) setups=$2; shift 2 ;;
	*) echo "podman-rootless: unknown argument $1" >&2; exit 2 ;;
	esac
done
layout=$repo/build/images/$image
[ -f "$layout/index.json" ] ||
	{ echo "podman-rootless: no OCI layout at build/images/$image (make image-$image)" >&2; exit 2; }

# shellcheck source=tests/bats/lib-podman.bash
. "$repo/tests/bats/lib-podman.bash"
notes=$res/rootless-notes.txt
: >"$notes"
[ -s "$csv" ] || echo "workload,system,param,mode,rep,seconds,ops,checksum,status" >"$csv"
rm -rf "$root"
mkdir -p "$root"
ref=localhost/rl-$image
failed=0

rl_note() {
	echo "rootless: $*" | tee -a "$notes" >&2
}

# rl_row WORKLOAD SYSTEM PARAM MODE REP SECONDS OPS CHECKSUM STATUS
rl_row() {
	local IFS=,
	echo "$*" >>"$csv"
}

# rl_fail WORKLOAD SYSTEM PARAM MODE REP MESSAGE: a FAIL row (no time) and
# a note; the workload is not timed again on that system
rl_fail() {
	local msg=${6//,/;}
	rl_row "$1" "$2" "$3" "$4" "$5" "" "" "" "FAIL: $msg"
	rl_note "$2: $1 $3 $4 rep $5: $msg"
	dead[$1 $3 $2]=1
	failed=1
}

# the storage and mount program of each setup
declare -A store prog dead expect
store=([layerfs]=mp [fuse-overlayfs]=mp [overlay]=native)
prog=([layerfs]=$repo/build/bin/layerfs-mount [fuse-overlayfs]=/usr/bin/fuse-overlayfs [overlay]="")
for sys in $setups; do
	[ -n "${store[$sys]+set}" ] || { echo "podman-rootless: unknown setup $sys" >&2; exit 2; }
done
layers=$(jq -r '.manifests[0].digest' "$layout/index.json" | sed 's/:/\//' |
	xargs -I{} jq '.layers | length' "$layout/blobs/{}")
workloads=("rootless-keepid keep-id first" "rootless-run plain warm"
	"rootless-walk plain cold" "rootless-walk plain warm"
	"rootless-walk keep-id cold" "rootless-walk keep-id warm")

# rl_use SYS: later lfs_rl calls use SYS's storage and mount program
rl_use() {
	lfs_rl_storage "${store[$1]}" "${prog[$1]}"
}

# rl_podman OUT CMD...: podman CMD as the user, under the time limit, its
# output (both streams) in OUT; the wall time in $t
t=
rl_podman() {
	local out=$1
	shift
	lfs_podman_time t lfs_rl timeout -k 10 "$limit" podman "$@" >"$out" 2>&1
}

# rl_why STATUS OUT: what a failed command's status and output say
rl_why() {
	if [ "$1" = 124 ] || [ "$1" = 137 ]; then
		echo "over the time limit of $limit s"
	else
		echo "exit $1: $(tail -n 2 "$2" | tr '\n' ' ')"
	fi
}

# rl_entries STORE: how many entries the storage's overlay/ holds (its
# layer directories, and l/)
rl_entries() {
	find "$LFS_RL_HOME/$1/overlay" -mindepth 1 -maxdepth 1 | wc -l
}

# What podman keeps of a storage that a keep-id run may change: the
# entries of overlay/ (layer directories), overlay/l/ (their short
# links) and overlay-layers/ (the layers' tar-split data), and the two
# indexes.  rl_snap STORE after the pull; rl_fresh STORE before each
# keep-id run deletes what was added since and restores the indexes.
# Nothing of podman runs between two commands (its pause process holds
# only namespaces), and each podman command reads the indexes afresh.
rl_snap() {
	local g=$LFS_RL_HOME/$1 s=$root/snap-$1 d
	mkdir -p "$s" || return 1
	for d in overlay overlay/l overlay-layers; do
		find "$g/$d" -mindepth 1 -maxdepth 1 -printf '%f\n' | LC_ALL=C sort \
			>"$s/${d//\//-}.list" || return 1
	done
	cp -a "$g/overlay-layers/layers.json" "$g/overlay-images/images.json" "$s/"
}

rl_fresh() {
	local g=$LFS_RL_HOME/$1 s=$root/snap-$1 d n
	for d in overlay overlay/l overlay-layers; do
		while read -r n; do
			rm -rf "${g:?}/$d/$n" || return 1
		done < <(find "$g/$d" -mindepth 1 -maxdepth 1 -printf '%f\n' |
			LC_ALL=C sort | LC_ALL=C comm -13 "$s/${d//\//-}.list" -)
	done
	cp -a "$s/layers.json" "$g/overlay-layers/" &&
		cp -a "$s/images.json" "$g/overlay-images/" &&
		[ "$(rl_entries "$1")" = "$(wc -l <"$s/overlay.list")" ]
}

# The walk, run by bash in the container: two walks, their times, the
# number of entries, the checksum, whether both walks saw the same.
# Directory sizes are file system specific, and podman binds its own
# /etc/hosts, /etc/hostname, /etc/resolv.conf and /run/.containerenv in.
# shellcheck disable=SC2016
rl_walk='
uid=$(id -u)
t0=$EPOCHREALTIME
find / -xdev -printf "%y %m %U:%G %s %p\n" >/dev/shm/w1 2>/dev/null
t1=$EPOCHREALTIME
find / -xdev -printf "%y %m %U:%G %s %p\n" >/dev/shm/w2 2>/dev/null
t2=$EPOCHREALTIME
cmp -s /dev/shm/w1 /dev/shm/w2 && same=same || same=differ
n=$(wc -l </dev/shm/w1)
sum=$(grep -v -E " /(etc/(hosts|hostname|resolv\.conf)|run/\.containerenv)\$" /dev/shm/w1 |
	awk "\$1 == \"d\" { \$4 = \"-\" } 1" | LC_ALL=C sort | md5sum)
echo "walk $uid $t0 $t1 $t2 $n ${sum%% *} $same"'

# rl_keepid SYS REP: the first keep-id run on a fresh storage
rl_keepid() {
	local sys=$1 rep=$2 out=$root/out added st
	[ -z "${dead[rootless-keepid keep-id $sys]:-}" ] || return 0
	rl_fresh "${store[$sys]}" || {
		rl_fail rootless-keepid "$sys" keep-id first "$rep" \
			"the storage could not be put back as after the pull"
		return 0
	}
	rl_podman "$out" run --rm --network none --userns=keep-id "$ref" true
	st=$?
	[ $st = 0 ] || {
		rl_fail rootless-keepid "$sys" keep-id first "$rep" "$(rl_why $st "$out")"
		return 0
	}
	added=$(($(rl_entries "${store[$sys]}") - $(wc -l <"$root/snap-${store[$sys]}/overlay.list")))
	rl_row rootless-keepid "$sys" keep-id first "$rep" "$t" "$added" "" ok
}

# rl_run SYS REP: a plain run
rl_run() {
	local sys=$1 rep=$2 out=$root/out st
	[ -z "${dead[rootless-run plain $sys]:-}" ] || return 0
	rl_podman "$out" run --rm --network none "$ref" true
	st=$?
	[ $st = 0 ] || {
		rl_fail rootless-run "$sys" plain warm "$rep" "$(rl_why $st "$out")"
		return 0
	}
	rl_row rootless-run "$sys" plain warm "$rep" "$t" 1 "" ok
}

# rl_walk SYS REP plain|keep-id: the walk in a container started after
# the caches were dropped
rl_walk() {
	local sys=$1 rep=$2 param=$3 out=$root/out st args=() w want msg
	[ -z "${dead[rootless-walk $param $sys]:-}" ] || return 0
	want=0
	if [ "$param" = keep-id ]; then
		args=(--userns=keep-id)
		want=$LFS_RL_UID
	fi
	sync
	echo 3 >/proc/sys/vm/drop_caches
	rl_podman "$out" run --rm --network none "${args[@]}" "$ref" bash -c "$rl_walk"
	st=$?
	# walk UID T0 T1 T2 ENTRIES SUM same|differ
	read -r -a w < <(grep '^walk ' "$out" | tail -n 1)
	if [ $st != 0 ] || [ ${#w[@]} != 8 ]; then
		msg=$(rl_why $st "$out")
	elif [ "${w[1]}" != "$want" ]; then
		msg="ran as uid ${w[1]}, not $want"
	elif [ "${w[7]}" != same ]; then
		msg="the two walks listed different trees"
	elif [ -n "${expect[$sys $param]:-}" ] && [ "${expect[$sys $param]}" != "${w[6]}" ]; then
		msg="listed another tree than its first repetition"
	else
		expect[$sys $param]=${w[6]}
		rl_row rootless-walk "$sys" "$param" cold "$rep" \
			"$(awk -v a="${w[2]}" -v b="${w[3]}" 'BEGIN { printf "%.3f", b - a }')" \
			"${w[5]}" "${w[6]}" ok
		rl_row rootless-walk "$sys" "$param" warm "$rep" \
			"$(awk -v a="${w[3]}" -v b="${w[4]}" 'BEGIN { printf "%.3f", b - a }')" \
			"${w[5]}" "${w[6]}" ok
		return 0
	fi
	# both rows fail, one note
	rl_fail rootless-walk "$sys" "$param" cold "$rep" "$msg"
	rl_row rootless-walk "$sys" "$param" warm "$rep" "" "" "" "FAIL: ${msg//,/;}"
}

# rl_all_fail SYS WHY: SYS could not be set up: every workload fails
rl_all_fail() {
	local entry w p m
	for entry in "${workloads[@]}"; do
		read -r w p m <<<"$entry"
		[ -n "${dead[$w $p $1]:-}" ] || rl_fail "$w" "$1" "$p" "$m" 1 "$2"
	done
}

rl_note "kernel $(uname -r), $(podman --version), image $image ($layers layers), $reps repetitions"
lfs_rl_setup "$image" || {
	for sys in $setups; do
		rl_all_fail "$sys" "the rootless setup (lfs_rl_setup) failed"
	done
	exit 1
}

# rl_pull SYS STORE: the image pulled into STORE (under four times the
# limit) and tagged, a row and a note; the storage's snapshot for rl_fresh
rl_pull() {
	local sys=$1 s=$2 st pt why limit=$((limit * 4))
	rl_podman "$root/pull" pull -q "oci:$LFS_RL_IMAGES/$image:latest"
	st=$?
	if [ $st = 0 ]; then
		pt=$t
		rl_podman "$root/tag" tag \
			"$(grep -E '^[0-9a-f]{64}$' "$root/pull" | tail -n 1)" "$ref" &&
			rl_snap "$s"
		st=$?
		[ $st = 0 ] || cp "$root/tag" "$root/pull"
	fi
	if [ $st != 0 ]; then
		why="pull into storage $s: $(rl_why $st "$root/pull")"
		rl_row rootless-pull "$sys" "$image" first 1 "" "" "" "FAIL: ${why//,/;}"
		rl_note "$sys: $why"
		return 1
	fi
	rl_row rootless-pull "$sys" "$image" first 1 "$pt" "$layers" "" ok
	rl_note "$sys: pull of $image ($layers layers) into storage $s: $pt s"
}

# the pulls, one per storage, then one untimed run per setup
ready=()
declare -A pulled
for sys in $setups; do
	s=${store[$sys]}
	rl_use "$sys" || { rl_all_fail "$sys" "no storage.conf"; continue; }
	if [ -z "${pulled[$s]+set}" ]; then
		pulled[$s]=fail
		! rl_pull "$sys" "$s" || pulled[$s]=$sys
	elif [ "${pulled[$s]}" != fail ]; then
		rl_note "$sys: shares storage $s with ${pulled[$s]} (no pull of its own)"
	fi
	[ "${pulled[$s]}" != fail ] || {
		rl_all_fail "$sys" "no image: the pull into storage $s failed"
		continue
	}
	rl_podman "$root/out" run --rm --network none "$ref" true
	st=$?
	[ $st = 0 ] || {
		rl_all_fail "$sys" "the untimed first run: $(rl_why $st "$root/out")"
		continue
	}
	# and one keep-id run, so that the first timed one pays what every
	# first keep-id run of an image pays, not what only the first of the
	# storage does (in the perf guest layerfs, first after the pulls,
	# took 3.6 s there against 2.9 s in the next repetition); rl_fresh
	# removes the copy it makes on overlay before the timed one
	rl_podman "$root/out" run --rm --network none --userns=keep-id "$ref" true
	st=$?
	[ $st = 0 ] || {
		why="the untimed keep-id run: $(rl_why $st "$root/out")"
		rl_fail rootless-keepid "$sys" keep-id first 1 "$why"
		rl_fail rootless-walk "$sys" keep-id cold 1 "$why"
		rl_row rootless-walk "$sys" keep-id warm 1 "" "" "" "FAIL: ${why//,/;}"
	}
	ready+=("$sys")
done

n=${#ready[@]}
for ((rep = 1; rep <= reps; rep++)); do
	for ((i = 0; i < n; i++)); do
		sys=${ready[(i + rep - 1) % n]}
		rl_use "$sys"
		echo "rootless: rep $rep $sys" >&2
		rl_keepid "$sys" "$rep"
		rl_run "$sys" "$rep"
		rl_walk "$sys" "$rep" plain
		rl_walk "$sys" "$rep" keep-id
	done
done

lfs_rl_teardown || rl_note "teardown failed"

# the summary: median seconds, and keep-id first over plain run per setup
{
	echo "rootless podman, image $image, $reps repetitions, kernel $(uname -r): median seconds"
	awk -F, 'NR > 1 && $9 == "ok" { k = $1 " " $3 " " $4; v[k, $2] = v[k, $2] " " $6
			if (!(k in seen)) { seen[k] = 1; rows[++n] = k } }
		function med(s,    a, m, i, j, x) {
			m = split(s, a, " ")
			if (!m) return ""
			for (i = 2; i <= m; i++) {
				x = a[i]
				for (j = i - 1; j >= 1 && a[j] + 0 > x + 0; j--)
					a[j + 1] = a[j]
				a[j + 1] = x
			}
			return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		}
		END {
			ns = split(sys, s, " ")
			printf "  %-32s", ""
			for (i = 1; i <= ns; i++)
				printf " %14s", s[i]
			print ""
			for (r = 1; r <= n; r++) {
				printf "  %-32s", rows[r]
				for (i = 1; i <= ns; i++) {
					x = med(v[rows[r], s[i]])
					printf " %14s", x == "" ? "-" : sprintf("%.3f", x)
					m[rows[r], s[i]] = x
				}
				print ""
			}
			printf "  %-32s", "keep-id first / plain run"
			for (i = 1; i <= ns; i++) {
				a = m["rootless-keepid keep-id first", s[i]]
				b = m["rootless-run plain warm", s[i]]
				# (in parentheses: a bare > among the arguments of printf redirects)
				printf " %14s", (a != "" && b > 0 ? sprintf("%.2f", a / b) : "-")
			}
			print ""
		}' sys="$setups" "$csv"
} | tee -a "$res/rootless.txt"
[ $failed = 0 ]
