# umwait lab: kernel series, umwait-trace and the QEMU lab that runs them.
#
#   make            build everything (qemu and kernel are cached outside the clone)
#   make qemu       the lab's QEMU; make kernel: the 6.1 guest kernel (cached, see vm/ensure)
#   make tools      the tools and test programs into build/tools/
#   make initramfs  the guest's initramfs, build/initramfs.cpio (vm/run makes it too)
#   make umwait-trace  only the tool (no qemu, no kernel, no root: packages missing
#                   are named in one line; ZYDIS=shared links Debian's libZydis.so)
#   make install    umwait-trace, its man page, bash completion, caps --all service and
#                   alerting rules into PREFIX (default /usr/local; DESTDIR stages);
#                   make uninstall removes them
#   make demo       boot the guest and show the lab at work
#   make test       run the whole test suite (ends with "N passed, N failed, N skipped")
#   make test-suspend  only the S3 test (three cycles, part of make test too)
#   make soak       writers, hotplug, fuzz and tracers at once (SOAK_SECONDS, default 120)
#   make bench      what the lab and umwait-trace cost, side by side (tables, also in
#                   build/bench.txt, and build/bench.json)
#   make setup      install the Debian packages the lab needs (root)
#   make checkpatch run checkpatch --strict on the kernel series
#   make clean      remove build/ (the cache stays; see vm/cache-dir)

BUILD   := build
CC      ?= gcc
CFLAGS  ?= -O2 -g
TOOL_CFLAGS := $(CFLAGS) -Wall -Wextra -Werror -static -pthread
# the included build.mk files define rules before 'all': plain make builds everything
.DEFAULT_GOAL := all

TOOLS   := $(addprefix $(BUILD)/tools/,tpause-loop msr lab-write umwait-fuzz waitpkg-check pmu-hog insn-count)
# umwait-trace (bpf/ + tools/umwait-trace/) adds its binary to TOOLS
-include tools/umwait-trace/build.mk
# make bench: the empty-uprobe floor and the sysfs write-rate meter
-include tools/bench-floor/build.mk
TOOLS   += $(BUILD)/tools/write-rate
# programs on Debian's oneTBB, LLVM OpenMP and DPDK (dynamically linked)
-include tools/clients/build.mk
# test fixtures: waits that other paths jump past (tests/fixtures), and the
# layout corpus: one C file of wait shapes by gcc and clang at -O0/-O2/-O3
TOOLS   += $(BUILD)/tools/wait-paths $(BUILD)/tools/libwait-sites.so
# and umwait-trace caps' targets, files and capabilities (tests/guest/5x-umwait-trace-*)
TOOLS   += $(BUILD)/tools/ut-target $(BUILD)/tools/libut-sled.so $(BUILD)/tools/with-caps
LAYOUTS := $(foreach c,gcc clang,$(foreach o,O0 O2 O3,$(BUILD)/tools/layouts-$(c)-$(o)))
TOOLS   += $(LAYOUTS)
# umwait-trace with a deliberate bug each (tools/umwait-trace/build.mk)
TOOLS   += $(UT_MUTANTS)

# Debian's programs the guest tests use, copied with their shared libraries
GUEST_BINS := /usr/bin/trace-cmd /usr/bin/perf

GUEST_FILES := vm/init vm/demo tests/run-guest $(shell find tests/lib tests/guest tests/guest-stock tests/guest-pmu tests/guest-base tests/guest-distro tests/guest-debian tests/guest-icount tests/guest-noapic tests/guest-compat tests/guest-kvm tests/guest-soak tests/guest-bench tests/golden -type f 2>/dev/null)

.PHONY: all setup qemu kernel tools initramfs demo test test-suspend soak bench checkpatch clean

all: setup qemu kernel tools initramfs

setup:
	@vm/setup-host

qemu: setup
	@vm/ensure qemu >/dev/null

kernel: setup
	@vm/ensure kernel >/dev/null

# host-spin runs on the host only (make bench: the host's own floor)
tools: $(TOOLS) $(BUILD)/tools/host-spin

$(BUILD)/tools/%: tools/%.c tools/errname.h | $(BUILD)/tools
	$(CC) $(TOOL_CFLAGS) -o $@ $<

# A PIE and a shared library whose code's file offsets differ from its
# addresses (.text placed above the file offset it has): uprobes take offsets.
FIXTURE_LDFLAGS := -Wl,--section-start=.text=0x7000

$(BUILD)/tools/wait-paths: tests/fixtures/wait-paths.c tests/fixtures/wait-sites.S tests/fixtures/fixture.h | $(BUILD)/tools
	$(CC) $(CFLAGS) -Wall -Wextra -Werror -fPIE -pie $(FIXTURE_LDFLAGS) -o $@ $(filter-out %.h,$^)

$(BUILD)/tools/libwait-sites.so: tests/fixtures/wait-sites.S | $(BUILD)/tools
	$(CC) $(CFLAGS) -shared -fPIC $(FIXTURE_LDFLAGS) -o $@ $<

# dynamically linked: it loads libraries with dlopen
$(BUILD)/tools/ut-target: tests/fixtures/ut-target.c tests/fixtures/fixture.h | $(BUILD)/tools
	$(CC) $(CFLAGS) -Wall -Wextra -Werror -mwaitpkg -pthread -o $@ $<

$(BUILD)/tools/libut-sled.so: tests/fixtures/ut-sled.S | $(BUILD)/tools
	$(CC) $(CFLAGS) -shared -fPIC -o $@ $<

$(BUILD)/tools/with-caps: tests/fixtures/with-caps.c | $(BUILD)/tools
	$(CC) $(TOOL_CFLAGS) -o $@ $<

# layouts-COMPILER-LEVEL: the compiler's own defaults otherwise (a PIE)
$(LAYOUTS): $(BUILD)/tools/layouts-%: tests/fixtures/layouts.c tools/clients/client.h | $(BUILD)/tools
	$(word 1,$(subst -, ,$*)) -$(word 2,$(subst -, ,$*)) -g -mwaitpkg -Wall -Wextra -Werror -o $@ $<

$(BUILD)/tools:
	mkdir -p $@

initramfs: $(BUILD)/initramfs.cpio

# the guest also gets what make install stages (/lab/install), to test it as installed
$(BUILD)/initramfs.cpio: vm/build-initramfs $(TOOLS) $(GUEST_FILES) $(UT_INSTALL_FILES) | setup
	rm -rf $(BUILD)/install
	$(MAKE) -s --no-print-directory install DESTDIR=$(abspath $(BUILD)/install) PREFIX=/usr/local
	vm/build-initramfs --install $(BUILD)/install $@ $(TOOLS) $(GUEST_BINS)

# QEMU and the kernel build side by side: one's serial steps (configure,
# extraction, the final link and BTF) fill the other's idle cores. The CPU
# model is the one whose C0.x residency events the lab's PMU implements.
demo: setup
	@$(MAKE) -s --no-print-directory -j2 qemu kernel
	@$(MAKE) -s --no-print-directory initramfs
	vm/run --no-build --accel tcg --cpu max,pmu=on,vendor=GenuineIntel,family=6,model=143 -- /lab/bin/lab-demo

# tests/run builds what its suites need itself, timing each build
test: setup
	tests/run

test-suspend: setup
	tests/run -k suspend

soak: all
	tests/soak/run

bench: all
	tests/bench/run

checkpatch: kernel
	LAB_KERNEL_SRC=$$(vm/ensure kernel)/src LAB_KERNEL_SRC_6_12=$$(vm/ensure kernel-6.12)/src \
		LAB_KERNEL_SRC_7_2=$$(vm/ensure kernel-7.2)/src bash tests/host/10-checkpatch.t

clean:
	rm -rf $(BUILD)
