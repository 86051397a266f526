#!/bin/bash
# Boot the layerfs test guest under QEMU and judge what it reports.
#
#   vm/run.sh test [BATS_FILE...]   run bats suites in the guest (default: all)
#   vm/run.sh shell                 interactive guest shell
#   vm/run.sh script FILE [ARG...]  run one guest script (repo-relative or
#                                   absolute path under the repo); its exit
#                                   status is the result
#
# Environment:
#   LFS_CACHE     kernel cache (default $HOME/.cache/layerfs)
#   FLAVOUR       debug (default) or perf
#   VM_TIMEOUT    seconds before a test guest counts as hung (default 3600)
#   VM_MEM, VM_CPUS  guest memory and CPUs (default 2G, 2)
#   LFS_KVM=1     use KVM instead of TCG (nested KVM hangs on our machines)
#   LFS_SELFTEST  harness self-tests, see vm/guest/init
#   LFS_RESULTS   where results go (default build/vm-results)
#   LFS_SCRATCH   the ext4 scratch disk image (default LFS_RESULTS.scratch.img)
#   LFS_SCRATCH_KEEP=1  boot on the existing scratch image as it is (no mkfs),
#                 e.g. to look at what a guest reset left on it
#   LFS_EXPECT_RESET=1  the guest is meant to end in a reset without sync
#                 (a script that writes results/reset-armed, then
#                 'echo b >/proc/sysrq-trigger'): the run passes when the
#                 guest armed the reset, the console shows it, and the kernel
#                 log up to it is clean; completion, module unload and
#                 kmemleak are not asked for
#   LFS_KO        the module the guest loads, relative to the repository
#                 (default src/layerfs.ko; 'make bench' gives its perf build)
#   LFS_FSTYPE, LFS_GUEST_ENV ("VAR=VALUE ...")  passed to the guest's
#                 environment (kernel command line: no spaces in values)
#
# Exits 0 only when every test passed, the module unloaded, and the kernel
# reported nothing: no BUG/WARNING/KASAN/UBSAN/lockdep/Oops/hung task
# (vm/scan-klog.sh), no taint besides out-of-tree/unsigned module, lockdep
# still enabled, no kmemleak report. The last line is "N passed, M failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mode=${1:-test}
shift || true
cache=${LFS_CACHE:-$HOME/.cache/layerfs}
flavour=${FLAVOUR:-debug}
kernel=$cache/build-$flavour/arch/x86/boot/bzImage
res=${LFS_RESULTS:-$repo/build/vm-results}
timeout_s=${VM_TIMEOUT:-3600}

[ -f "$kernel" ] || {
	echo "run: no kernel at $kernel: run 'make kernel'" >&2
	exit 1
}

script=
if [ "$mode" = script ]; then
	script=$(realpath -m --relative-to="$repo" "${1:?script mode needs a file}")
	shift
	[ -f "$repo/$script" ] || {
		echo "run: no such script: $script" >&2
		exit 1
	}
	script_args=$*
	set --
fi

tests=()
for t in "$@"; do
	t=$(realpath -m --relative-to="$repo" "$t")
	[ -f "$repo/$t" ] || {
		echo "run: no such test file: $t" >&2
		exit 1
	}
	tests+=("$t")
done
if [ ${#tests[@]} = 0 ] && [ "$mode" = test ]; then
	for t in "$repo"/tests/bats/*.bats; do
		tests+=("${t#"$repo"/}")
	done
fi

rm -rf "$res"
mkdir -p "$res"
scratch=${LFS_SCRATCH:-${res%/}.scratch.img}
expect_reset=${LFS_EXPECT_RESET:-0}
if [ "${LFS_SCRATCH_KEEP:-0}" = 1 ]; then
	[ -f "$scratch" ] || {
		echo "run: LFS_SCRATCH_KEEP=1 but no scratch image at $scratch" >&2
		exit 1
	}
fi
# trees too slow to build in the guest, made once on the host
fixtures=$repo/build/fixtures
gen=$repo/tests/bats/fixtures.sh
if [ ! -f "$fixtures/.stamp" ] || [ "$gen" -nt "$fixtures/.stamp" ] ||
	[ "$repo/build/bin/lfs-probe" -nt "$fixtures/.stamp" ]; then
	rm -rf "$fixtures"
	mkdir -p "$fixtures/fixtures"
	"$gen" "$fixtures/fixtures" || exit 1
	touch "$fixtures/.stamp"
fi

# 55-images reads the debian and deep images as an oci2ovl layer store.
# Importing them in the guest takes minutes under TCG: import them once on
# the host, and put the store on the scratch disk (at images-55/) only for
# runs that include 55-images.  The store names its layers by relative
# paths, so it works where the guest finds it.
imported=$repo/build/fixtures-images-55
lfs_import_images() {
	local img dir=$repo/build/images oci2ovl=$repo/build/bin/oci2ovl
	[ -x "$oci2ovl" ] && [ -f "$dir/debian/index.json" ] &&
		[ -f "$dir/deep/index.json" ] || return 0
	if [ -f "$imported/.stamp" ] && [ "$oci2ovl" -ot "$imported/.stamp" ] &&
		[ "$dir/debian/index.json" -ot "$imported/.stamp" ] &&
		[ "$dir/deep/index.json" -ot "$imported/.stamp" ]; then
		return 0
	fi
	rm -rf "$imported"
	mkdir -p "$imported"
	for img in debian deep; do
		OCI2OVL_STORE=$imported/store "$oci2ovl" import --whiteout chardev \
			--no-sync "$dir/$img:latest" --name "$img" >/dev/null || return 1
	done
	touch "$imported/.stamp"
}
with_images=0
case " ${tests[*]} " in
*" tests/bats/55-images.bats "*)
	lfs_import_images || { echo "run: importing the images for 55-images failed" >&2; exit 1; }
	[ -f "$imported/.stamp" ] && with_images=1
	;;
esac

# The scratch disk starts as a copy of a base image, made once for each
# size and content: mkfs.ext4 -d of the fixtures' 100k+ names takes a
# minute, a sparse copy a second.
lfs_scratch_base() {
	local base=$1 size=$2 tmp=$1.tmp.$$ rc
	if [ -f "$base" ] && [ "$fixtures/.stamp" -ot "$base" ] &&
		{ [ $with_images = 0 ] || [ "$imported/.stamp" -ot "$base" ]; }; then
		return 0
	fi
	rm -f "$base"
	truncate -s "$size" "$tmp" || return 1
	# the store joins the fixtures by a rename there and back
	[ $with_images = 0 ] || mv "$imported" "$fixtures/images-55" || return 1
	mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 -d "$fixtures" "$tmp"
	rc=$?
	[ $with_images = 0 ] || mv "$fixtures/images-55" "$imported" || rc=1
	if [ $rc != 0 ]; then
		rm -f "$tmp"
		return 1
	fi
	mv "$tmp" "$base"
}
if [ "${LFS_SCRATCH_KEEP:-0}" != 1 ]; then
	base=$repo/build/scratch-base-${VM_DISK:-4G}$([ $with_images = 0 ] || echo -images).img
	lfs_scratch_base "$base" "${VM_DISK:-4G}" || {
		echo "run: making the scratch disk failed" >&2
		exit 1
	}
	rm -f "$scratch"
	cp --sparse=always "$base" "$scratch" || exit 1
fi

cmdline="console=ttyS0 loglevel=5 root=root rootfstype=9p ro acpi=noirq tsc=unstable"
cmdline+=" rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=512000"
cmdline+=" init=$repo/vm/guest/init panic=-1 LFS_REPO=$repo LFS_MODE=$mode"
cmdline+=" LFS_TESTS=$(IFS=:; echo "${tests[*]}")"
[ -n "${LFS_SELFTEST:-}" ] && cmdline+=" LFS_SELFTEST=$LFS_SELFTEST"
[ -n "$script" ] && cmdline+=" LFS_SCRIPT=$script"
[ -n "${LFS_MODULE:-}" ] && cmdline+=" LFS_MODULE=$LFS_MODULE"
[ -n "${LFS_KO:-}" ] && cmdline+=" LFS_KO=$LFS_KO"
[ "$flavour" = debug ] && cmdline+=" panic_on_warn=1"
[ "$expect_reset" = 1 ] && cmdline+=" LFS_EXPECT_RESET=1"
[ -n "${LFS_FSTYPE:-}" ] && cmdline+=" LFS_FSTYPE=$LFS_FSTYPE"
[ -n "${LFS_GUEST_ENV:-}" ] && cmdline+=" $LFS_GUEST_ENV"

accel=(-accel tcg,thread=multi -cpu "${VM_CPU:-max}")
[ "${LFS_KVM:-0}" = 1 ] && accel=(-accel kvm -cpu host)

qemu=(qemu-system-x86_64 "${accel[@]}" -m "${VM_MEM:-2G}" -smp "${VM_CPUS:-2}"
	-no-reboot -nodefaults -kernel "$kernel" -append "$cmdline"
	-fsdev "local,id=rootfs,path=/,security_model=passthrough,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=rootfs,mount_tag=root
	-fsdev "local,id=results,path=$res,security_model=none"
	-device virtio-9p-pci,fsdev=results,mount_tag=results
	-drive "file=$scratch,format=raw,if=virtio,cache=unsafe")
if [ -n "$script" ]; then
	# arguments travel in a file: the kernel command line is short and unquoted
	printf '%s' "$script_args" >"$res/script.args"
fi

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -nographic -serial mon:stdio
fi

start=$(date +%s)
timeout -k 10 "$timeout_s" "${qemu[@]}" -display none -monitor none -serial stdio \
	</dev/null | tee "$res/console.log"
qemu_rc=${PIPESTATUS[0]}
echo "vm: guest ran $(($(date +%s) - start)) s" >"$res/time"

problems=()
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	problems+=("guest did not finish within ${timeout_s}s (hung)")
elif [ "$qemu_rc" != 0 ]; then
	problems+=("qemu exited with status $qemu_rc")
fi
if [ "$expect_reset" = 1 ]; then
	# a reset ends qemu (-no-reboot) before the guest can report anything
	[ -f "$res/guest-done" ] && problems+=("guest finished instead of resetting")
	[ -f "$res/reset-armed" ] || problems+=("guest did not arm the reset")
	grep -aq 'sysrq: Resetting' "$res/console.log" ||
		problems+=("console does not show the sysrq reset")
else
	[ -f "$res/guest-done" ] || problems+=("guest did not report completion")
fi

# kernel lines on the console (they carry a timestamp) and the full log
grep -a '^\[ *[0-9]*\.[0-9]*\]' "$res/console.log" >"$res/console-kernel"
if ! "$here/scan-klog.sh" "$res/console-kernel" "$res/dmesg" >"$res/klog-findings"; then
	problems+=("kernel log reports problems: see $res/klog-findings")
	sed 's/^/  /' "$res/klog-findings" | head -n 20 >&2
fi
if [ -f "$res/insmod.rc" ] && [ "$(cat "$res/insmod.rc")" != 0 ]; then
	problems+=("insmod failed")
fi
if [ "$expect_reset" != 1 ] && [ -f "$res/insmod.rc" ] &&
	[ "$(cat "$res/rmmod.rc" 2>/dev/null)" != 0 ]; then
	problems+=("module did not unload")
fi
if [ -f "$res/tainted" ]; then
	taint=$(cat "$res/tainted")
	# ignore O (out-of-tree, bit 12) and E (unsigned, bit 13)
	[ $((taint & ~(1 << 12 | 1 << 13))) = 0 ] || problems+=("kernel tainted: $taint")
fi
if [ -s "$res/debug_locks" ] && ! grep -q 'debug_locks: *1' "$res/debug_locks"; then
	problems+=("lockdep turned itself off (debug_locks 0)")
fi
if [ -s "$res/kmemleak" ]; then
	problems+=("kmemleak reports leaks: see $res/kmemleak")
	head -n 20 "$res/kmemleak" >&2
fi

if [ "$mode" = script ]; then
	src=$(cat "$res/script.rc" 2>/dev/null || echo none)
	# a guest that reset as it was meant to leaves no exit status
	[ "$src" = 0 ] || { [ "$expect_reset" = 1 ] && [ "$src" = none ]; } ||
		problems+=("guest script $script exited with status $src")
	if [ ${#problems[@]} != 0 ]; then
		for p in "${problems[@]}"; do
			echo "vm: FAIL: $p" >&2
		done
		exit 1
	fi
	exit 0
fi

passed=0 failed=0 skipped=0 planned=0
if [ -f "$res/tap" ]; then
	planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$res/tap" | head -n 1)
	passed=$(grep -c '^ok ' "$res/tap")
	skipped=$(grep -c '^ok .*# skip' "$res/tap")
	failed=$(grep -c '^not ok ' "$res/tap")
	passed=$((passed - skipped))
fi
planned=${planned:-0}
[ "$failed" = 0 ] || problems+=("$failed test(s) failed")
if [ "$((passed + failed + skipped))" != "$planned" ]; then
	problems+=("bats planned $planned tests but reported $((passed + failed + skipped))")
	failed=$((planned > passed + skipped ? planned - passed - skipped : failed + 1))
fi
[ -f "$res/bats.rc" ] && [ "$(cat "$res/bats.rc")" != 0 ] && [ "$failed" = 0 ] &&
	problems+=("bats exited with status $(cat "$res/bats.rc")")

if [ ${#problems[@]} != 0 ]; then
	for p in "${problems[@]}"; do
		echo "vm: FAIL: $p" >&2
	done
	# a run that failed outside the tests counts as one more failure
	[ "$failed" = 0 ] && failed=1
fi
[ "$skipped" = 0 ] || echo "vm: $skipped skipped"
echo "$passed passed, $failed failed"
[ ${#problems[@]} = 0 ]
