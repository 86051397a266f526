# tools/oci2ovl: OCI image layers to layerfs layer directories.
# Included by the top-level Makefile. See docs/oci2ovl.md.
#
#   make tools                 builds build/bin/oci2ovl, its ASan/UBSan twin
#                              build/bin/oci2ovl-asan, and the unit tests
#   make oci2ovl-unit          runs the cmocka unit tests (TAP)
#   make oci2ovl-test          unit tests, then tests/bats/host/2?-oci2ovl-*.bats
#   make oci2ovl-bench         tools/oci2ovl/bench.sh
#   make oci2ovl-fuzz          the fuzz targets, longer (tools/oci2ovl/fuzz/fuzz.mk)

DEPS += libarchive-dev libjansson-dev libssl-dev libcmocka-dev pkg-config \
	python3 skopeo umoci attr tar gzip zstd coreutils zlib1g-dev time strace

OCI2OVL_DIR := tools/oci2ovl
OCI2OVL_OBJDIR := build/oci2ovl
OCI2OVL_LIBSRC := util.c digest.c path.c whiteout.c pathset.c extract.c \
	layout.c store.c import.c mount.c gzip.c tarframe.c
OCI2OVL_LIBSRC += lease.c tree.c
OCI2OVL_LIBSRC += ahead.c objects.c
OCI2OVL_TESTS := test_path test_whiteout test_digest test_extract \
	test_pathset test_tarframe test_ahead

OCI2OVL_PKGS := libarchive jansson libcrypto zlib
OCI2OVL_CFLAGS = -std=gnu11 -O2 -g -pthread -Wall -Wextra -Werror -I. \
	$(shell pkg-config --cflags $(OCI2OVL_PKGS))
OCI2OVL_LIBS = $(shell pkg-config --libs $(OCI2OVL_PKGS)) -pthread
OCI2OVL_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer

OCI2OVL_HDRS := $(OCI2OVL_DIR)/oci2ovl.h uapi/layerfs.h
OCI2OVL_OBJS := $(patsubst %.c,$(OCI2OVL_OBJDIR)/%.o,$(OCI2OVL_LIBSRC))
OCI2OVL_SAN_OBJS := $(patsubst %.c,$(OCI2OVL_OBJDIR)/san/%.o,$(OCI2OVL_LIBSRC))
OCI2OVL_TEST_BINS := $(patsubst %,$(OCI2OVL_OBJDIR)/tests/%,$(OCI2OVL_TESTS))

TOOLS_BIN += build/bin/oci2ovl build/bin/oci2ovl-asan $(OCI2OVL_TEST_BINS)

$(OCI2OVL_OBJDIR)/%.o: $(OCI2OVL_DIR)/%.c $(OCI2OVL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(OCI2OVL_CFLAGS) -c -o $@ $<

$(OCI2OVL_OBJDIR)/san/%.o: $(OCI2OVL_DIR)/%.c $(OCI2OVL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(OCI2OVL_CFLAGS) $(OCI2OVL_SAN) -c -o $@ $<

build/bin/oci2ovl: $(OCI2OVL_OBJS) $(OCI2OVL_OBJDIR)/cli.o
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(OCI2OVL_LIBS)

build/bin/oci2ovl-asan: $(OCI2OVL_SAN_OBJS) $(OCI2OVL_OBJDIR)/san/cli.o
	@mkdir -p $(@D)
	$(CC) $(OCI2OVL_SAN) -o $@ $^ $(OCI2OVL_LIBS)

# unit tests link the sanitized objects
$(OCI2OVL_OBJDIR)/tests/%: $(OCI2OVL_DIR)/tests/%.c $(OCI2OVL_SAN_OBJS) \
		$(OCI2OVL_DIR)/tests/unit.h $(OCI2OVL_HDRS)
	@mkdir -p $(@D)
	$(CC) $(OCI2OVL_CFLAGS) -I$(OCI2OVL_DIR) $(OCI2OVL_SAN) -o $@ $< \
		$(OCI2OVL_SAN_OBJS) $(OCI2OVL_LIBS) -lcmocka

.PHONY: oci2ovl-unit oci2ovl-test oci2ovl-bench
oci2ovl-unit: $(OCI2OVL_TEST_BINS)
	@rc=0; for t in $^; do CMOCKA_MESSAGE_OUTPUT=TAP $$t || rc=1; done; exit $$rc

oci2ovl-test: tools
	@bats --tap tests/bats/host/2?-oci2ovl-*.bats

oci2ovl-bench: tools
	@$(OCI2OVL_DIR)/bench.sh

include $(OCI2OVL_DIR)/fuzz/fuzz.mk
