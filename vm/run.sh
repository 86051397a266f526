#!/bin/bash
# Boot the layerfs test guest under QEMU and judge what it reports.
#
#   vm/run.sh test [BATS_FILE...]   run bats suites in the guest (default: all)
#   vm/run.sh shell                 interactive guest shell
#   vm/run.sh script FILE [ARG...]  run one guest script (repo-relative or
#                                   absolute path under the repo); its exit
#                                   status is the result
#   vm/run.sh prepare [BATS_FILE...] only make what a test guest of those
#                                   suites boots with (fixtures, the image
#                                   store, the scratch disk's base image),
#                                   so that guests started together find
#                                   it made (vm/run-suites.sh)
#
# Environment:
#   LFS_CACHE     kernel cache (default $HOME/.cache/layerfs)
#   FLAVOUR       debug (default) or perf
#   VM_TIMEOUT    seconds before a guest counts as hung (default 2700); the
#                 guest itself stops its suites a quarter of that (at most
#                 300 s) earlier, so that it still reports what it saw
#   LFS_TEST_TIMEOUT  seconds one bats test may take (default 900)
#   LFS_RUN_LIMIT seconds the suites may take together (default: above)
#   VM_MEM, VM_CPUS  guest memory and CPUs (default 2G, 2)
#   LFS_KVM=1     use KVM instead of TCG (nested KVM hangs on our machines)
#   LFS_SELFTEST  harness self-tests, see vm/guest/init
#   LFS_RESULTS   where results go (default build/vm-results)
#   LFS_SCRATCH   the ext4 scratch disk image (default LFS_RESULTS.scratch.img)
#   LFS_SCRATCH_BLANK=1  the scratch disk is an empty ext4 file system, not a
#                 copy of the base image with the fixtures (harness and
#                 crash guests, which use none)
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
#   LFS_QUEUE, LFS_QUEUE_ID  test mode: the guest named LFS_QUEUE_ID also
#                 runs the suites it takes from the queue directory
#                 LFS_QUEUE (vm/run-suites.sh), which it shares with the
#                 other guests of the run; it is judged on those it took
#   LFS_FSTYPE, LFS_GUEST_ENV ("VAR=VALUE ...")  passed to the guest's
#                 environment (kernel command line: no spaces in values)
#
# Exits 0 only when every test passed, the module unloaded, and the kernel
# reported nothing: no BUG/WARNING/KASAN/UBSAN/lockdep/Oops/hung task
# (vm/scan-klog.sh over the whole console, the guest's dmesg and its
# /dev/kmsg record), no taint besides out-of-tree/unsigned module, no task
# left in D state, and on the debug kernel lockdep and kmemleak still live
# at the end with no kmemleak report. The last line is
# "N passed, M failed, K skipped".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
mode=${1:-test}
shift || true
cache=${LFS_CACHE:-$HOME/.cache/layerfs}
flavour=${FLAVOUR:-debug}
kernel=$cache/build-$flavour/arch/x86/boot/bzImage
res=${LFS_RESULTS:-$repo/build/vm-results}
timeout_s=${VM_TIMEOUT:-2700}
margin=$((timeout_s / 4 < 300 ? timeout_s / 4 : 300))
run_limit=${LFS_RUN_LIMIT:-$((timeout_s - margin))}

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
# with a queue (LFS_QUEUE), no suite given means only the queue's
run_given=${tests[*]}
if [ ${#tests[@]} = 0 ] && { [ "$mode" = prepare ] ||
	{ [ "$mode" = test ] && [ -z "${LFS_QUEUE:-}" ]; }; }; then
	for t in "$repo"/tests/bats/*.bats; do
		tests+=("${t#"$repo"/}")
	done
fi

if [ "$mode" != prepare ]; then
	rm -rf "$res"
	mkdir -p "$res"
fi
scratch=${LFS_SCRATCH:-${res%/}.scratch.img}
expect_reset=${LFS_EXPECT_RESET:-0}
if [ "${LFS_SCRATCH_KEEP:-0}" = 1 ]; then
	[ -f "$scratch" ] || {
		echo "run: LFS_SCRATCH_KEEP=1 but no scratch image at $scratch" >&2
		exit 1
	}
fi
# The scratch disk starts as a copy of a base image: the trees too slow to
# build in the guest (tests/bats/fixtures.sh), made on the host, and for
# runs that include 55-images or 80-podman the stores of images those
# suites use (lfs_import_images: importing in the guest takes tens of
# minutes under TCG; the stores name their layers by relative paths, so
# they work where the guest finds them).  Making one costs minutes
# (mkfs.ext4 -d of 100k+ names among them), so each is kept in the cache,
# named by a digest of everything it is made from: a fresh clone reuses
# it as it reuses the kernel.
fixtures=$repo/build/fixtures
imported=$repo/build/fixtures-images
gen=$repo/tests/bats/fixtures.sh
ocitests=$repo/tools/oci2ovl/tests
fxcache=$cache/fixtures
images=$repo/build/images

# lfs_digest WORDS...: a short digest of the named files' contents (and
# of the words that are not files: tool versions, sizes)
lfs_digest() {
	local w
	for w in "$@"; do
		if [ -f "$w" ]; then
			printf '%s ' "${w#"$repo"/}"
			sha256sum <"$w"
		else
			printf '%s\n' "$w"
		fi
	done | sha256sum | cut -c1-16
}

# the base image serves every suite this guest may run: also the queue's,
# taken or not (every guest of a queue starts from the same one)
with_images=0
queued=()
[ -z "${LFS_QUEUE:-}" ] ||
	mapfile -t queued < <(cat "$LFS_QUEUE"/todo/* "$LFS_QUEUE"/taken/* 2>/dev/null)
case " ${tests[*]} ${queued[*]} " in
*" tests/bats/55-images.bats "* | *" tests/bats/80-podman.bats "* | \
	*" tests/bats/81-podman-rootless.bats "*)
	[ -x "$repo/build/bin/oci2ovl" ] && [ -f "$images/debian/index.json" ] &&
		[ -f "$images/deep/index.json" ] && [ -f "$images/busybox/index.json" ] &&
		[ -f "$images/deep-60/index.json" ] && with_images=1
	;;
esac
fx_key=$(lfs_digest "$gen" "$ocitests/mkimages.sh" "$ocitests/lfs_tree.py" \
	"$repo/tools/lfs-probe.c" "$repo/uapi/layerfs.h" "$here/run.sh" \
	"$(umoci --version 2>&1)" "$(mkfs.ext4 -V 2>&1 | head -n 1)" \
	"size ${VM_DISK:-4G}")
kind=scratch-base-${VM_DISK:-4G}
if [ $with_images = 1 ]; then
	fx_key=$(lfs_digest "$fx_key" "$repo"/tools/oci2ovl/*.[ch] \
		"$repo/tools/oci2ovl.mk" "$images/debian/index.json" \
		"$images/deep/index.json" "$images/busybox/index.json" \
		"$images/deep-60/index.json" "$(skopeo --version 2>&1)")
	kind+=-images
fi
base=$fxcache/$kind-$fx_key.img

lfs_make_fixtures() {
	[ ! -f "$fixtures/.key" ] || [ "$(cat "$fixtures/.key")" != "$fx_key" ] ||
		return 0
	rm -rf "$fixtures"
	mkdir -p "$fixtures/fixtures"
	"$gen" "$fixtures/fixtures" || return 1
	echo "$fx_key" >"$fixtures/.key"
}

# lfs_rooted CMD...: CMD where / is a mount point.  containers-storage
# extracts layers in a private remount of /, which fails (EINVAL) in a
# chroot whose root is a plain directory (a fresh machine replayed in a
# chroot, ../shared/tools/fresh-debian): there CMD runs in a mount
# namespace of its own, chrooted into a recursive bind of /, whose root
# is a mount.  (Not --propagation private: that remounts / too.  The
# bind is unmounted before the namespace ends, so a peer that received
# it loses it again.)
lfs_rooted() {
	if awk '$5 == "/" { f = 1 } END { exit !f }' /proc/self/mountinfo; then
		"$@"
		return
	fi
	unshare --mount --propagation unchanged sh -c '
		r=$(mktemp -d) && mount --rbind / "$r" || exit 1
		chroot "$r" "$@"
		rc=$?
		umount -R "$r" && rmdir "$r"
		exit $rc' sh "$@"
}

# lfs_import_images: what the image suites find on the scratch disk, made
# on the host (in the guest under TCG it costs tens of minutes):
#   images-55/  55-images' oci2ovl store of the debian and deep images
#               and its references
#   podman-80/storage  80-podman's containers-storage (the overlay driver
#               with a mount program) with busybox as localhost/bb and
#               deep-60 as localhost/deep60, copied in by skopeo
lfs_import_images() {
	local img oci2ovl=$repo/build/bin/oci2ovl i=$imported/images-55
	local p=$imported/podman-80 cs rc
	rm -rf "$imported"
	mkdir -p "$i" "$p/run" || return 1
	for img in debian deep; do
		OCI2OVL_STORE=$i/store "$oci2ovl" import --whiteout chardev \
			--no-sync "$images/$img:latest" --name "$img" >/dev/null || return 1
	done
	"$gen" --images "$i/store" "$i/ref" || return 1
	# what 55-images asks for before it starts
	touch "$i/.stamp"
	cs="containers-storage:[overlay@$p/storage+$p/run"
	cs+=":overlay.mount_program=$repo/build/bin/layerfs-mount]"
	rc=0
	for img in busybox:bb deep-60:deep60; do
		lfs_rooted skopeo copy -q "oci:$images/${img%%:*}:latest" \
			"${cs}localhost/${img#*:}:latest" || { rc=1; break; }
	done
	# the overlay driver leaves its home bind-mounted on itself
	! mountpoint -q "$p/storage/overlay" || umount "$p/storage/overlay" || return 1
	rm -rf "$p/run"
	# (should skopeo fail all the same, 80-podman pulls in the guest,
	# minutes slower, and 81-podman-rootless fails: it needs the store)
	if [ $rc != 0 ]; then
		echo "run: no podman store on the scratch disk (skopeo failed above): 80-podman pulls its images in the guest" >&2
		rm -rf "$p"
	fi
}

# lfs_mkfs IMAGE [MKFS_ARG...]: IMAGE made a sparse file of the disk's
# size holding a new ext4 file system (its inode tables and journal left
# to be zeroed lazily)
lfs_mkfs() {
	local img=$1
	shift
	truncate -s "${VM_DISK:-4G}" "$img" &&
		mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 "$@" "$img"
}

# lfs_make_base: the base image, made from fresh trees into the cache
# (the older ones of its kind go: a few hundred MB each)
lfs_make_base() {
	local tmp=$base.tmp.$$ rc old s stores
	echo "run: making the scratch disk's base image $kind ($fx_key)"
	lfs_make_fixtures || return 1
	# (what a run killed while making one may have left there)
	rm -rf "$fixtures/images-55" "$fixtures/podman-80"
	if [ $with_images = 1 ]; then
		lfs_import_images || return 1
	fi
	# the stores join the fixtures by a rename there and back
	stores=()
	[ $with_images = 0 ] || mapfile -t stores < <(ls "$imported")
	for s in "${stores[@]}"; do
		mv "$imported/$s" "$fixtures/" || return 1
	done
	lfs_mkfs "$tmp" -d "$fixtures"
	rc=$?
	for s in "${stores[@]}"; do
		mv "$fixtures/$s" "$imported/" || rc=1
	done
	[ $with_images = 0 ] || rm -rf "$imported"
	if [ $rc != 0 ]; then
		rm -f "$tmp"
		return 1
	fi
	for old in "$fxcache/$kind"-????????????????.img; do
		[ "$old" = "$base" ] || rm -f "$old"
	done
	mv "$tmp" "$base"
}

# lfs_base: the base image, made unless the cache has it; guests started
# together wait for the one that makes it
lfs_base() {
	[ ! -f "$base" ] || return 0
	mkdir -p "$fxcache" || return 1
	(
		flock 9 || exit 1
		[ ! -f "$base" ] || exit 0
		# what a run killed while making one left
		rm -f "$fxcache/$kind"-????????????????.img.tmp.*
		lfs_make_base
	) 9>"$fxcache/.lock"
}

if [ "${LFS_SCRATCH_BLANK:-0}" = 1 ] && [ "${LFS_SCRATCH_KEEP:-0}" != 1 ]; then
	# a guest that needs no fixtures: an empty file system, made in a second
	rm -f "$scratch"
	lfs_mkfs "$scratch" || exit 1
elif [ "${LFS_SCRATCH_KEEP:-0}" != 1 ]; then
	lfs_base || {
		echo "run: making the scratch disk failed" >&2
		exit 1
	}
	[ "$mode" != prepare ] || exit 0
	rm -f "$scratch"
	cp --sparse=always "$base" "$scratch" || exit 1
fi

cmdline="console=ttyS0 loglevel=5 root=root rootfstype=9p ro acpi=noirq tsc=unstable"
cmdline+=" rootflags=trans=virtio,version=9p2000.L,cache=loose,msize=512000"
cmdline+=" init=$repo/vm/guest/init panic=-1 LFS_REPO=$repo LFS_MODE=$mode"
cmdline+=" LFS_TESTS=$(IFS=:; echo "${tests[*]}")"
[ -n "${LFS_SELFTEST:-}" ] && cmdline+=" LFS_SELFTEST=$LFS_SELFTEST"
cmdline+=" LFS_RUN_LIMIT=$run_limit"
[ -n "${LFS_TEST_TIMEOUT:-}" ] && cmdline+=" LFS_TEST_TIMEOUT=$LFS_TEST_TIMEOUT"
[ -n "$script" ] && cmdline+=" LFS_SCRIPT=$script"
[ -n "${LFS_MODULE:-}" ] && cmdline+=" LFS_MODULE=$LFS_MODULE"
[ -n "${LFS_KO:-}" ] && cmdline+=" LFS_KO=$LFS_KO"
[ "$flavour" = debug ] && cmdline+=" panic_on_warn=1"
# the kernel's HZ: the guest dates kmemleak's reports by it
hz=$(sed -n 's/^CONFIG_HZ=//p' "$cache/build-$flavour/.config" 2>/dev/null)
[ -z "$hz" ] || cmdline+=" LFS_HZ=$hz"
[ "$expect_reset" = 1 ] && cmdline+=" LFS_EXPECT_RESET=1"
[ -n "${LFS_FSTYPE:-}" ] && cmdline+=" LFS_FSTYPE=$LFS_FSTYPE"
[ -n "${LFS_GUEST_ENV:-}" ] && cmdline+=" $LFS_GUEST_ENV"
queue=()
if [ -n "${LFS_QUEUE:-}" ] && [ "$mode" = test ]; then
	cmdline+=" LFS_QUEUE_ID=${LFS_QUEUE_ID:?LFS_QUEUE needs LFS_QUEUE_ID}"
	queue=(-fsdev "local,id=queue,path=$LFS_QUEUE,security_model=none"
		-device virtio-9p-pci,fsdev=queue,mount_tag=queue)
fi

accel=(-accel tcg,thread=multi -cpu "${VM_CPU:-max}")
[ "${LFS_KVM:-0}" = 1 ] && accel=(-accel kvm -cpu host)

qemu=(qemu-system-x86_64 "${accel[@]}" -m "${VM_MEM:-2G}" -smp "${VM_CPUS:-2}"
	-no-reboot -nodefaults -kernel "$kernel" -append "$cmdline"
	-fsdev "local,id=rootfs,path=/,security_model=passthrough,readonly=on,multidevs=remap"
	-device virtio-9p-pci,fsdev=rootfs,mount_tag=root
	-fsdev "local,id=results,path=$res,security_model=none"
	-device virtio-9p-pci,fsdev=results,mount_tag=results
	-drive "file=$scratch,format=raw,if=virtio,cache=unsafe" "${queue[@]}")
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

echo "$qemu_rc" >"$res/qemu.rc"
[ "$mode" != script ] || tests=("$script")
# with a queue, the guest is judged on the suites it ran: those it was
# given on its command line, then those it took
if [ ${#queue[@]} != 0 ]; then
	[ -n "$run_given" ] || tests=()
	[ ! -f "$res/claimed" ] || mapfile -t -O ${#tests[@]} tests <"$res/claimed"
fi
LFS_EXPECT_RESET=$expect_reset FLAVOUR=$flavour VM_TIMEOUT=$timeout_s \
	exec "$here/judge.sh" "$mode" "$res" "${tests[@]}"
