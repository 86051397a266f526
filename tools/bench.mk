# tools/bench: 'make bench', layerfs against the kernel's overlay,
# fuse-overlayfs and the raw filesystem in one guest.  See docs/bench.md.
#
#   make bench                  perf kernel, perf module, debian image,
#                               the guest run, build/bench/REPORT.md
#   make bench-report           the report again from build/bench/bench.csv
#
# Variables: BENCH_REPS (5), BENCH_LIMIT (60: seconds one pass of one
# system may take), BENCH_TIMEOUT (7200: seconds for the whole guest run),
# BENCH_ARGS (e.g. --quick), BENCH_OUT
# (build/bench), BENCH_VM (the guest's results directory, emptied by each
# run; default $(BENCH_OUT)/vm), BENCH_MEM (4G), BENCH_CPUS (1),
# BENCH_DISK (16G, the ext4 scratch disk the layers live on).

DEPS += gnuplot-nox tar

TOOLS_BIN += build/bin/lfs-bench

build/bin/lfs-bench: tools/bench/lfs-bench.c
	@mkdir -p $(@D)
	$(CC) $(LFS_TOOL_CFLAGS) -o $@ $<

BENCH_REPS ?= 5
BENCH_LIMIT ?= 60
BENCH_TIMEOUT ?= 7200
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

.PHONY: bench bench-kernel bench-module bench-report

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

bench: deps bench-module tools image-debian $(BENCH_TAR)
	@mkdir -p $(BENCH_OUT)
	@rm -f $(BENCH_OUT)/bench.csv $(BENCH_OUT)/bench-*.txt
	@start=$$(date +%s); \
	FLAVOUR=perf LFS_KO=$(BENCH_MOD)/src/layerfs.ko \
		LFS_RESULTS=$(abspath $(BENCH_VM)) VM_MEM=$(BENCH_MEM) \
		VM_CPUS=$(BENCH_CPUS) VM_DISK=$(BENCH_DISK) VM_TIMEOUT=$(BENCH_TIMEOUT) \
		vm/run.sh script tools/bench/guest.sh \
		--image $(IMAGES_OUT)/debian --tar $(abspath $(BENCH_TAR)) \
		--reps $(BENCH_REPS) --limit $(BENCH_LIMIT) $(BENCH_ARGS) \
		>$(BENCH_OUT)/guest.log 2>&1; \
	rc=$$?; \
	echo "bench: guest ran $$(($$(date +%s) - start)) s (log: $(BENCH_OUT)/guest.log)"; \
	cp $(BENCH_VM)/bench.csv $(BENCH_VM)/bench-*.txt $(BENCH_OUT)/ 2>/dev/null; \
	[ $$rc = 0 ] || { tail -n 30 $(BENCH_OUT)/guest.log; echo "bench: the guest run failed" >&2; }; \
	[ -s $(BENCH_OUT)/bench.csv ] && tools/bench/report.sh $(BENCH_OUT); \
	exit $$rc

bench-report:
	@tools/bench/report.sh $(BENCH_OUT)
