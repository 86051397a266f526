# layerfs: top-level build and test entry points.  See README.md.
#
#   make test          everything: host tests, then bats in two QEMU guests
#   make test-quick    host tests without guests, smoke and core guest suites
#   make vm-test [T=tests/bats/NAME.bats]
#   make vm-shell      interactive guest with the module
#   make test-diff-long  the write-side differential suite on DIFF_SEEDS
#                      seeds a test (2000), in two guests at once
#   make fuzz          the hostile-layer fuzzer (86-fuzz) alone, for
#                      FUZZ_SECONDS (1800: 20 min in a user namespace,
#                      10 on root's layers), in one guest
#   make check         checkpatch --strict and sparse over the module, and
#                      tools/bats-lint over the suites (make check-bats)
#
# Variables: LFS_CACHE (kernel cache, default ~/.cache/layerfs),
# FLAVOUR (debug|perf), VM_TIMEOUT, VM_MEM, VM_CPUS, LFS_KVM=1.

LFS_CACHE ?= $(HOME)/.cache/layerfs
FLAVOUR ?= debug
export LFS_CACHE FLAVOUR

KBUILD := $(LFS_CACHE)/build-$(FLAVOUR)
KSRC := $(LFS_CACHE)/linux-source
T ?=

# Debian packages every target needs, installed by 'make deps'
# (procps: bats needs pkill or ps for its per-test timeout; the mkfs
# tools of the filesystem matrix: xfsprogs, btrfs-progs, erofs-utils and
# squashfs-tools; fsverity: the fs-verity files of 74-verity)
DEPS := linux-source-6.1 gcc make flex bison bc libelf-dev libssl-dev \
	cpio xz-utils kmod perl qemu-system-x86 e2fsprogs attr acl bats \
	skopeo umoci sparse fuse-overlayfs procps xfsprogs btrfs-progs \
	erofs-utils squashfs-tools fsverity

# Userspace programs built by 'make tools' (fragments add to it)
TOOLS_BIN :=

# Each area keeps its own rules: tools/tools.mk, images/images.mk.
# A fragment may add to DEPS and TOOLS_BIN and define its own targets.
include $(wildcard tools/*.mk images/*.mk)

.PHONY: all deps kernel module tools check vm-test vm-shell host-test test test-quick clean \
	test-diff-long fuzz

all: module tools

tools: deps $(TOOLS_BIN)

deps:
	@vm/deps.sh $(DEPS)

kernel: deps
	@vm/build-kernel.sh $(FLAVOUR)

module: kernel
	@vm/build-module.sh

# one suite (T=...) in one guest; all of them spread over two guests
vm-test: module tools
	@$(if $(T),vm/run.sh test $(T),vm/run-suites.sh)

# 70-write-diff on DIFF_SEEDS seeds a test (upper on tmpfs, then on
# ext4) instead of its time budget, in two guests at once (vm/diff-long.sh;
# DIFF_SEED_FROM sets the first seed)
DIFF_SEEDS ?= 2000
test-diff-long: module tools
	@DIFF_SEEDS=$(DIFF_SEEDS) vm/diff-long.sh

# 86-fuzz for FUZZ_SECONDS of rounds, two thirds in a user namespace and
# one third with --trusted (make test gives it a minute); a test may take
# its part and ten minutes more, the guest all of it and 25 minutes
FUZZ_SECONDS ?= 1800
fuzz: module tools
	@LFS_GUEST_ENV="LFS_FUZZ_SECONDS=$(FUZZ_SECONDS) $${LFS_GUEST_ENV:-}" \
		LFS_TEST_TIMEOUT=$$(($(FUZZ_SECONDS) + 600)) \
		VM_TIMEOUT=$$(($(FUZZ_SECONDS) + 1500)) \
		vm/run.sh test tests/bats/86-fuzz.bats

vm-shell: module tools
	@vm/run.sh shell

host-test: tools
	@bats --tap tests/bats/host

check: kernel check-bats
	@echo "check: checkpatch.pl --strict"
	@$(KSRC)/scripts/checkpatch.pl --no-tree --strict --terse --show-types \
		-f $(filter-out %.mod.c,$(wildcard src/*.[ch] vm/selftest/*.c)) uapi/*.h
	@echo "check: sparse (C=2)"
	@mkdir -p build && vm/build-module.sh C=2 >/dev/null 2>build/sparse.log || { cat build/sparse.log; exit 1; }
	@echo "check: clean"

# every check in the bats suites able to fail (tools/bats-lint)
.PHONY: check-bats
check-bats:
	@echo "check: bats-lint"
	@tools/bats-lint tests/bats

test:
	@vm/test.sh

# host tests that boot no guest, and the smoke and core guest suites
test-quick:
	@vm/test.sh --quick

clean:
	-@[ -d $(KBUILD) ] && $(MAKE) -s -C $(KBUILD) M=$(CURDIR)/src clean
	-@[ -d $(KBUILD) ] && $(MAKE) -s -C $(KBUILD) M=$(CURDIR)/vm/selftest clean
	rm -rf build
