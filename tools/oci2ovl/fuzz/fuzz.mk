# oci2ovl fuzz targets (libFuzzer, clang, ASan/UBSan). Included by
# tools/oci2ovl.mk. See docs/oci2ovl.md, "Fuzzing".
#
#   make tools          also builds build/bin/oci2ovl-fuzz-{layer,json} and
#                       their canary builds (planted bugs, for the tests)
#   make oci2ovl-fuzz [FUZZ_TIME=600] [FUZZ_SEED=0] [FUZZ_TARGETS="layer json"]
#                       a longer run of each target, FUZZ_TIME seconds each,
#                       growing build/oci2ovl-fuzz/TARGET/corpus from run to
#                       run; FUZZ_SEED=0 is a random seed (printed)
#
# tests/bats/host/24-oci2ovl-fuzz.bats runs each for a bounded time with
# fixed seeds in 'make test'.

# Debian 12: clang is clang 14; libFuzzer and the sanitizers' runtimes are
# in libclang-rt-14-dev, their symbolizer (function names in reports) in
# llvm-14
DEPS += clang libclang-rt-14-dev llvm-14 zlib1g-dev

OCI2OVL_FUZZ_CC ?= clang
OCI2OVL_FUZZ_DIR := $(OCI2OVL_DIR)/fuzz
OCI2OVL_FUZZ_OBJDIR := $(OCI2OVL_OBJDIR)/fuzz
OCI2OVL_FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
OCI2OVL_FUZZ_CFLAGS = $(OCI2OVL_CFLAGS) -O1 $(OCI2OVL_FUZZ_SAN) \
	-fsanitize=fuzzer-no-link
OCI2OVL_FUZZ_LIBOBJS := $(patsubst %.c,$(OCI2OVL_FUZZ_OBJDIR)/lib/%.o,$(OCI2OVL_LIBSRC))
OCI2OVL_FUZZ_TARGETS := layer json
# the canary builds: planted bugs in copies of two parsing steps
# (canary.c), called in front of the real ones through the linker
OCI2OVL_FUZZ_WRAP := -Wl,--wrap=lfs_path_normalize -Wl,--wrap=json_loadb
OCI2OVL_FUZZ_BINS := $(patsubst %,build/bin/oci2ovl-fuzz-%,$(OCI2OVL_FUZZ_TARGETS)) \
	$(patsubst %,build/bin/oci2ovl-fuzz-%-canary,$(OCI2OVL_FUZZ_TARGETS))

TOOLS_BIN += $(OCI2OVL_FUZZ_BINS)

$(OCI2OVL_FUZZ_OBJDIR)/lib/%.o: $(OCI2OVL_DIR)/%.c $(OCI2OVL_HDRS)
	@mkdir -p $(@D)
	$(OCI2OVL_FUZZ_CC) $(OCI2OVL_FUZZ_CFLAGS) -c -o $@ $<

$(OCI2OVL_FUZZ_OBJDIR)/%.o: $(OCI2OVL_FUZZ_DIR)/%.c $(OCI2OVL_FUZZ_DIR)/fuzz.h \
		$(OCI2OVL_HDRS)
	@mkdir -p $(@D)
	$(OCI2OVL_FUZZ_CC) $(OCI2OVL_FUZZ_CFLAGS) -c -o $@ $<

build/bin/oci2ovl-fuzz-%: $(OCI2OVL_FUZZ_OBJDIR)/fuzz_%.o \
		$(OCI2OVL_FUZZ_OBJDIR)/fuzz.o $(OCI2OVL_FUZZ_LIBOBJS)
	@mkdir -p $(@D)
	$(OCI2OVL_FUZZ_CC) $(OCI2OVL_FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ \
		$(OCI2OVL_LIBS) -lz

build/bin/oci2ovl-fuzz-%-canary: $(OCI2OVL_FUZZ_OBJDIR)/fuzz_%.o \
		$(OCI2OVL_FUZZ_OBJDIR)/fuzz.o $(OCI2OVL_FUZZ_OBJDIR)/canary.o \
		$(OCI2OVL_FUZZ_LIBOBJS)
	@mkdir -p $(@D)
	$(OCI2OVL_FUZZ_CC) $(OCI2OVL_FUZZ_SAN) -fsanitize=fuzzer \
		$(OCI2OVL_FUZZ_WRAP) -o $@ $^ $(OCI2OVL_LIBS) -lz

FUZZ_TIME ?= 600
FUZZ_SEED ?= 0
FUZZ_TARGETS ?= $(OCI2OVL_FUZZ_TARGETS)

.PHONY: oci2ovl-fuzz
oci2ovl-fuzz: tools
	@rc=0; for t in $(FUZZ_TARGETS); do \
		$(OCI2OVL_FUZZ_DIR)/run.sh -k -t $(FUZZ_TIME) -s $(FUZZ_SEED) $$t || rc=1; \
	done; exit $$rc
