#!/bin/bash
# One bounded libFuzzer run of an oci2ovl fuzz target, as root, in a
# mount namespace and a root of its own where everything is read-only
# but the run's directory and its scratch tmpfs. See docs/oci2ovl.md,
# "Fuzzing".
#
#   run.sh [-t SECONDS] [-n RUNS] [-s SEED] [-o DIR] [-b BIN] [-c SEEDS] [-k] TARGET [-- FLAG...]
#   run.sh [-o DIR] [-b BIN] -r FILE... TARGET     run FILEs once each
#   run.sh [-o DIR] -m TARGET                       make DIR/seeds only
#
#   TARGET   layer or json (build/bin/oci2ovl-fuzz-TARGET)
#   -t       -max_total_time (default 30)
#   -n       -runs: stop after RUNS inputs (0: the seeds only)
#   -s       -seed (default 1; 0: a random one, printed)
#   -o       the run's directory (default build/oci2ovl-fuzz/TARGET):
#            seeds/, corpus/ (what the run found), artifacts/ (the inputs
#            of crashes, leaks, timeouts), log
#   -b       the fuzzer binary (a canary build, say)
#   -c       a seed directory made by mkseeds.py (default: made now, from
#            tools/oci2ovl/tests/mkimages.sh and lfs_tree.py gen-corpus)
#   -k       keep corpus/ from the runs before (longer runs); without it
#            corpus/ starts empty, so that a seed gives the same run
#   FLAG     more libFuzzer flags (-fork=1 -ignore_crashes=1, say)
#
# Prints the run's numbers (executions, executions a second, edges and
# features covered at the start and the end, corpus) and exits 0 if it
# ended clean, 1 with the artifacts and how to replay them if it found
# something, 2 on usage or set-up errors.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)

if [ "${1:-}" = --sandboxed ]; then
	# inside the namespace: $2 the run's directory, then the command. A
	# root of its own (a tmpfs, read-only once made) holds the system's
	# directories and the repository bound read-only, the run's
	# directory bound read-write, a tmpfs for the scratch; the command
	# runs chrooted there (a chroot works where pivot_root does not,
	# inside another chroot)
	out=$2
	shift 2
	root=$out/root
	mount -t tmpfs -o mode=0755 oci2ovl-fuzz-root "$root" || exit 2
	for d in bin sbin lib lib32 lib64 libx32 usr etc dev proc tmp; do
		if [ -L "/$d" ]; then
			ln -s "$(readlink "/$d")" "$root/$d"
		elif [ -d "/$d" ]; then
			mkdir "$root/$d" || exit 2
			case $d in
			tmp) continue ;;
			proc) mount -t proc proc "$root/proc" || exit 2 ;;
			*) mount --rbind "/$d" "$root/$d" || exit 2 ;;
			esac
			mount -o remount,bind,ro "$root/$d" || exit 2
		fi
	done
	mkdir -p "$root$repo" || exit 2
	mount --bind "$repo" "$root$repo" &&
		mount -o remount,bind,ro "$root$repo" &&
		mkdir -p "$root$out" &&
		mount --bind "$out" "$root$out" &&
		mount -t tmpfs -o size=1g,mode=0700 oci2ovl-fuzz "$root$out/scratch" &&
		mount -o remount,ro "$root" || exit 2
	if touch "$root$repo/.oci2ovl-fuzz-probe" 2>/dev/null ||
		touch "$root/tmp/.oci2ovl-fuzz-probe" 2>/dev/null; then
		echo "oci2ovl-fuzz: could not make the sandbox read-only" >&2
		exit 2
	fi
	mkdir -p "$out/tmp" || exit 2
	# the targets' scratch, and libFuzzer's (-fork, -merge)
	export LFS_FUZZ_SCRATCH=$out/scratch TMPDIR=$out/tmp
	exec chroot "$root" /bin/sh -c 'cd / && exec "$@"' sh "$@"
fi

usage() {
	sed -n '6,8p' "$0" | sed 's/^#  */usage: /' >&2
	exit 2
}

time=30 runs=-1 seed=1 out='' bin='' seeds='' keep=0 replay=0 make_seeds=0
while getopts t:n:s:o:b:c:krm opt; do
	case $opt in
	t) time=$OPTARG ;;
	n) runs=$OPTARG ;;
	s) seed=$OPTARG ;;
	o) out=$OPTARG ;;
	b) bin=$OPTARG ;;
	c) seeds=$OPTARG ;;
	k) keep=1 ;;
	r) replay=1 ;;
	m) make_seeds=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
if [ $replay = 1 ]; then
	[ $# -ge 2 ] || usage
	target=${!#}
	files=("${@:1:$#-1}")
else
	[ $# -ge 1 ] || usage
	target=$1
	shift
	[ $# = 0 ] || { [ "$1" = -- ] && shift; } || usage
	flags=("$@")
fi
case $target in layer) max_len=131072 ;; json) max_len=65536 ;; *) usage ;; esac
[[ $time =~ ^[0-9]+$ && $seed =~ ^[0-9]+$ && $runs =~ ^-?[0-9]+$ ]] || usage
bin=${bin:-$repo/build/bin/oci2ovl-fuzz-$target}
out=${out:-$repo/build/oci2ovl-fuzz/$target}
[ -x "$bin" ] || [ $make_seeds = 1 ] || { echo "oci2ovl-fuzz: no $bin (make tools)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "oci2ovl-fuzz: runs as root (a mount namespace of its own)" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd -P)
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mkdir -p "$out/scratch" "$out/artifacts" || exit 2

# UBSan's reports name the function too; the sanitizers' symbolizer is
# llvm-14's (Debian 12's llvm-symbolizer without a version comes with
# the "llvm" package, not in DEPS)
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
for s in llvm-symbolizer llvm-symbolizer-14; do
	s=$(command -v $s) && export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$s} && break
done

# The namespace's mounts are made private, so that none of them shows
# outside it. Inside a chroot whose root is no mount point that cannot be
# done: there the run goes on only if no mount propagates (as in the
# fresh-Debian check's namespace), else it would leave mounts behind.
propagation=private
if ! unshare --mount --propagation private true 2>/dev/null; then
	if [ ! -r /proc/1/mountinfo ] || grep -q ' shared:' /proc/1/mountinfo; then
		echo "oci2ovl-fuzz: cannot make a private mount namespace here (a chroot whose mounts propagate?)" >&2
		exit 2
	fi
	propagation=unchanged
fi

sandboxed() {
	mkdir -p "$out/scratch" "$out/root" || return 2
	unshare --mount --propagation $propagation -- "$0" --sandboxed "$out" "$@"
}

if [ $replay = 1 ]; then
	rc=0
	for f in "${files[@]}"; do
		[ -f "$f" ] || { echo "oci2ovl-fuzz: no file $f" >&2; exit 2; }
		LFS_FUZZ_VERBOSE=1 sandboxed "$bin" "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" || rc=1
	done
	rmdir "$out/scratch" "$out/root" 2>/dev/null
	exit $rc
fi

if [ -z "$seeds" ]; then
	seeds=$out/seeds
	rm -rf "$out/images" "$seeds"
	if ! "$repo/tools/oci2ovl/tests/mkimages.sh" "$out/images" >/dev/null ||
		! python3 "$repo/tools/oci2ovl/tests/lfs_tree.py" gen-corpus "$out/images/own" ||
		! python3 "$here/mkseeds.py" "$target" "$seeds" "$out/images/layout" "$out/images/own" >/dev/null; then
		echo "oci2ovl-fuzz: could not make the seeds" >&2
		exit 2
	fi
	rm -rf "$out/images"
fi
[ $make_seeds = 0 ] || exit 0
seeds=$(cd "$seeds" && pwd) || exit 2
nseeds=$(find "$seeds" -maxdepth 1 -type f | wc -l)
[ "$nseeds" -gt 0 ] || { echo "oci2ovl-fuzz: no seeds in $seeds" >&2; exit 2; }
[ $keep = 1 ] || rm -rf "$out/corpus" "$out/artifacts"
mkdir -p "$out/corpus" "$out/artifacts"
[ "$seed" != 0 ] || seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
touch "$out/start" || exit 2

# seeds/ is read only once: a copy inside the writable directory
[ "$seeds" = "$out/seeds" ] || { rm -rf "$out/seeds" && cp -r "$seeds" "$out/seeds"; } || exit 2
t0=$SECONDS
sandboxed "$bin" -seed="$seed" -max_total_time="$time" -runs="$runs" -timeout=10 \
	-rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1 \
	-dict="$here/$target.dict" -artifact_prefix="$out/artifacts/" \
	-error_exitcode=77 -timeout_exitcode=78 "${flags[@]}" \
	"$out/corpus" "$out/seeds" >"$out/log" 2>&1
rc=$?
rmdir "$out/scratch" "$out/root" 2>/dev/null

lfs_stat() { sed -n "s/^stat::$1: *//p" "$out/log" | tail -n 1; }
field() { sed -n "s/.* $1: \([0-9]*\).*/\1/p"; }
inited=$(grep -m1 'INITED' "$out/log")
last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|NEW|REDUCE|pulse|INITED)' "$out/log" | tail -n 1)
found=$(find "$out/artifacts" -type f -newer "$out/start" | sort)
printf 'oci2ovl-fuzz %s: seed %s, %s s: %s runs, %s/s; cov %s -> %s, ft %s -> %s; corpus %s (%s seeds, %s new); peak rss %s MB\n' \
	"$target" "$seed" $((SECONDS - t0)) "$(lfs_stat number_of_executed_units)" \
	"$(lfs_stat average_exec_per_sec)" "$(field cov <<<"$inited")" \
	"$(field cov <<<"$last")" "$(field ft <<<"$inited")" \
	"$(field ft <<<"$last")" "$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")" \
	"$nseeds" "$(lfs_stat new_units_added)" "$(lfs_stat peak_rss_mb)"
if [ $rc = 0 ] && [ -z "$found" ] && grep -q '^Done [0-9]* runs' "$out/log"; then
	# edges of each oci2ovl source file the corpus reaches (of the
	# instrumented edges, the sanitizers' checks among them)
	sandboxed "$bin" -runs=0 -print_coverage=1 "$out/corpus" "$out/seeds" \
		>"$out/coverage" 2>&1
	rmdir "$out/scratch" "$out/root" 2>/dev/null
	awk '$1 ~ /COVERED_FUNC:/ {
		split($5, e, "/"); f = $7; sub(/:[0-9]+$/, "", f)
		if (f !~ /tools\/oci2ovl\/[a-z_]+\.c$/) next
		n = split(f, p, "/"); c[p[n]] += e[1]; t[p[n]] += e[2]
	} END {
		for (f in c) if (c[f]) { s = s sprintf(" %s %d/%d", f, c[f], t[f]) }
		print "oci2ovl-fuzz edges:" s
	}' "$out/coverage"
	exit 0
fi
echo "oci2ovl-fuzz $target: FAILED (exit $rc), the log is $out/log:"
grep -E 'FAIL|ERROR|SUMMARY|^==[0-9]+==|runtime error|Test unit written' "$out/log" | head -n 20
for a in $found; do
	echo "oci2ovl-fuzz $target: artifact $a; replay: $0 -b $bin -r $a $target"
done
exit 1
