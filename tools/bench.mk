# tools/bench: 'make bench', layerfs against the kernel's overlay,
# fuse-overlayfs, erofs under overlay (the composefs approach) and the raw
# filesystem in one guest.  See docs/bench.md.
#
#   make bench                  perf kernel, perf module, debian image,
#                               the guest run, build/bench/REPORT.md
#   make bench-report           the report again from build/bench/bench.csv
#                               (and store.csv)
#   make bench-store            the space of an oci2ovl store, inline and
#                               objects, holding debian and three images
#                               made from it (host only, no guest):
#                               build/bench/store.csv, then the report
#
# Variables: BENCH_REPS (5), BENCH_LIMIT (60: seconds one pass of one
# system may take), BENCH_TIMEOUT (10800: seconds for the whole guest run),
# BENCH_ARGS (e.g. --quick), BENCH_OUT
# (build/bench), BENCH_VM (the guest's results directory, emptied by each
# run; default $(BENCH_OUT)/vm), BENCH_MEM (4G), BENCH_CPUS (1),
# BENCH_DISK (16G, the ext4 scratch disk the layers live on),
# BENCH_PODMAN (the images whose podman start is timed; empty: none),
# BENCH_ROOTLESS (debian: the image of the rootless podman guest; empty:
# no such guest), BENCH_STORE_ARGS (tools/bench/store.sh's options, e.g.
# --no-mkfs).

# (erofs-utils: mkfs.erofs makes erofs-overlay's image, in the guest)
DEPS += gnuplot-nox tar erofs-utils

TOOLS_BIN += build/bin/lfs-bench

build/bin/lfs-bench: tools/bench/lfs-bench.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<

BENCH_REPS ?= 5
BENCH_LIMIT ?= 60
BENCH_TIMEOUT ?= 10800
BENCH_ARGS ?=
BENCH_OUT ?= build/bench
BENCH_VM ?= $(BENCH_OUT)/vm
BENCH_MEM ?= 4G
BENCH_CPUS ?= 1
BENCH_DISK ?= 16G
# the perf build of the module, apart from the debug one in src/
BENCH_MOD := build/perf
BENCH_KBUILD := $(LFS_CACHE)/build-perf
# what the untar workload unpacks: part of the kernel tree we build from
BENCH_TAR := $(BENCH_OUT)/linux-6.1-fs.tar
BENCH_TAR_DIRS := fs

# podman run --rm under the three storage setups (tools/bench/podman-start.sh,
# a second guest): 60 layers, and 128, the most that containers-storage takes
BENCH_PODMAN ?= deep-60 deep-128

# rootless podman, --userns=keep-id's first run against a plain run, under
# the three setups (tools/bench/podman-rootless.sh, a third guest); its
# storages need no fixtures: an empty scratch disk
BENCH_ROOTLESS ?= debian
BENCH_ROOTLESS_LIMIT ?= 900

# the environment of vm/run.sh for a bench guest: perf kernel, perf module
BENCH_ENV = FLAVOUR=perf LFS_KO=$(BENCH_MOD)/src/layerfs.ko VM_MEM=$(BENCH_MEM) \
	VM_CPUS=$(BENCH_CPUS) VM_TIMEOUT=$(BENCH_TIMEOUT)

.PHONY: bench bench-kernel bench-module bench-report bench-podman bench-rootless \
	bench-store bench-store-run

BENCH_STORE_ARGS ?=
# the images of tools/bench/store.sh besides debian: images/debian-derived's
# (named here: images/images.mk is read after this file)
BENCH_STORE_IMAGES := image-debian-squash image-debian-redated image-debian-app

bench-kernel: deps
	@vm/build-kernel.sh perf

bench-module: bench-kernel
	@mkdir -p $(BENCH_MOD)/src $(BENCH_MOD)/uapi
	@cp -p src/Kbuild src/*.[ch] $(BENCH_MOD)/src/
	@cp -p uapi/*.h $(BENCH_MOD)/uapi/
	@$(MAKE) -C $(BENCH_KBUILD) M=$(CURDIR)/$(BENCH_MOD)/src W=1 modules \
		>$(BENCH_MOD)/module.log 2>&1 && \
		! grep -qiE '(warning|error):' $(BENCH_MOD)/module.log || \
		{ cat $(BENCH_MOD)/module.log; echo "bench: perf module build failed" >&2; exit 1; }
	@echo "module (perf): $(BENCH_MOD)/src/layerfs.ko"

$(BENCH_TAR): | bench-kernel
	@mkdir -p $(@D)
	tar -C $(KSRC)/ --sort=name --owner=0 --group=0 --mtime=@0 \
		-cf $@.tmp $(BENCH_TAR_DIRS) && mv $@.tmp $@

bench: deps bench-module tools image-debian $(BENCH_TAR) $(BENCH_PODMAN:%=image-%) \
		$(BENCH_ROOTLESS:%=image-%) $(BENCH_STORE_IMAGES)
	@mkdir -p $(BENCH_OUT)
	@rm -f $(BENCH_OUT)/bench.csv $(BENCH_OUT)/bench-*.txt $(BENCH_OUT)/store*.csv \
		$(BENCH_OUT)/store-notes.txt
	@start=$$(date +%s); \
	$(BENCH_ENV) LFS_RESULTS=$(abspath $(BENCH_VM)) VM_DISK=$(BENCH_DISK) \
		vm/run.sh script tools/bench/guest.sh \
		--image $(IMAGES_OUT)/debian --tar $(abspath $(BENCH_TAR)) \
		--reps $(BENCH_REPS) --limit $(BENCH_LIMIT) $(BENCH_ARGS) \
		>$(BENCH_OUT)/guest.log 2>&1; \
	rc=$$?; \
	echo "bench: guest ran $$(($$(date +%s) - start)) s (log: $(BENCH_OUT)/guest.log)"; \
	cp $(BENCH_VM)/bench.csv $(BENCH_VM)/bench-*.txt $(BENCH_OUT)/ 2>/dev/null; \
	[ $$rc = 0 ] || { tail -n 30 $(BENCH_OUT)/guest.log; echo "bench: the guest run failed" >&2; }; \
	[ -z "$(BENCH_PODMAN)" ] || $(MAKE) -s --no-print-directory bench-podman || rc=1; \
	[ -z "$(BENCH_ROOTLESS)" ] || $(MAKE) -s --no-print-directory bench-rootless || rc=1; \
	$(MAKE) -s --no-print-directory bench-store-run || rc=1; \
	[ -s $(BENCH_OUT)/bench.csv ] && tools/bench/report.sh $(BENCH_OUT); \
	exit $$rc

# podman-start's rows join bench.csv as workloads podman-pull and
# podman-run (replacing those of an earlier run); podman's own overlay
# driver is the system "overlay"
bench-podman:
	@start=$$(date +%s); \
	$(BENCH_ENV) LFS_RESULTS=$(abspath $(BENCH_VM))-podman \
		vm/run.sh script tools/bench/podman-start.sh --reps $(BENCH_REPS) \
		$(BENCH_PODMAN:%=build/images/%) >$(BENCH_OUT)/podman.log 2>&1; \
	rc=$$?; \
	echo "bench: podman guest ran $$(($$(date +%s) - start)) s (log: $(BENCH_OUT)/podman.log)"; \
	cp $(BENCH_VM)-podman/podman-start*.txt $(BENCH_OUT)/ 2>/dev/null; \
	for f in bench.csv bench-notes.txt; do \
		[ ! -f $(BENCH_OUT)/$$f ] || sed -i '/^podman-/d' $(BENCH_OUT)/$$f; \
	done; \
	cat $(BENCH_VM)-podman/podman-start-notes.txt >>$(BENCH_OUT)/bench-notes.txt 2>/dev/null; \
	[ ! -s $(BENCH_VM)-podman/podman-start.csv ] || \
		awk -F, -v OFS=, 'NR > 1 { $$1 = "podman-" $$4; \
			if ($$2 == "overlay-driver") $$2 = "overlay"; print }' \
			$(BENCH_VM)-podman/podman-start.csv >>$(BENCH_OUT)/bench.csv; \
	[ $$rc = 0 ] || { tail -n 30 $(BENCH_OUT)/podman.log; echo "bench: the podman guest run failed" >&2; }; \
	exit $$rc

# podman-rootless's rows join bench.csv as workloads rootless-* (replacing
# those of an earlier run), its notes bench-notes.txt; alone, after
# 'make bench-module tools image-debian': make bench-rootless bench-report
bench-rootless:
	@mkdir -p $(BENCH_OUT)
	@start=$$(date +%s); \
	$(BENCH_ENV) LFS_RESULTS=$(abspath $(BENCH_VM))-rootless LFS_SCRATCH_BLANK=1 \
		VM_DISK=$(BENCH_DISK) vm/run.sh script tools/bench/podman-rootless.sh \
		--reps $(BENCH_REPS) --limit $(BENCH_ROOTLESS_LIMIT) \
		--image $(firstword $(BENCH_ROOTLESS)) >$(BENCH_OUT)/rootless.log 2>&1; \
	rc=$$?; \
	echo "bench: rootless podman guest ran $$(($$(date +%s) - start)) s (log: $(BENCH_OUT)/rootless.log)"; \
	cp $(BENCH_VM)-rootless/rootless*.txt $(BENCH_OUT)/ 2>/dev/null; \
	[ -s $(BENCH_OUT)/bench.csv ] || \
		echo "workload,system,param,mode,rep,seconds,ops,checksum,status" >$(BENCH_OUT)/bench.csv; \
	for f in bench.csv bench-notes.txt; do \
		[ ! -f $(BENCH_OUT)/$$f ] || sed -i '/^rootless/d' $(BENCH_OUT)/$$f; \
	done; \
	cat $(BENCH_VM)-rootless/rootless-notes.txt >>$(BENCH_OUT)/bench-notes.txt 2>/dev/null; \
	[ ! -s $(BENCH_VM)-rootless/rootless.csv ] || \
		sed 1d $(BENCH_VM)-rootless/rootless.csv >>$(BENCH_OUT)/bench.csv; \
	[ $$rc = 0 ] || { tail -n 30 $(BENCH_OUT)/rootless.log; echo "bench: the rootless podman guest run failed" >&2; }; \
	exit $$rc

bench-report:
	@tools/bench/report.sh $(BENCH_OUT)

# the store's space (tools/bench/store.sh): on the host, after the guests
# of 'make bench' (its imports would weigh on their times); 3 to 9
# minutes, and some 3 GB free under $(BENCH_OUT) while it runs
bench-store: deps build/bin/oci2ovl $(BENCH_STORE_IMAGES)
	@$(MAKE) -s --no-print-directory bench-store-run
	@tools/bench/report.sh $(BENCH_OUT)

bench-store-run:
	@mkdir -p $(BENCH_OUT)
	@tools/bench/store.sh --out $(BENCH_OUT) --oci2ovl build/bin/oci2ovl \
		$(BENCH_STORE_ARGS) 2>$(BENCH_OUT)/store.log || \
		{ cat $(BENCH_OUT)/store.log; echo "bench: the store measurement failed" >&2; exit 1; }
	@grep -E '^store: (inline|objects) \(' $(BENCH_OUT)/store.log
