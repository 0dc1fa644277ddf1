# bench-floor: included by the top Makefile.
#
#   bpf/bench-floor.bpf.c --clang -target bpf--> .tmp.bpf.o --bpftool gen object--> .bpf.o
#   .bpf.o --bpftool gen skeleton--> bench-floor.skel.h
#   tools/bench-floor/bench-floor.c + skeleton --cc--> build/tools/bench-floor
#
# The program needs no kernel types, hence no vmlinux.h; libbpf, libelf and
# zlib are linked statically, so the guest needs nothing else.

CLANG      ?= clang
BPFTOOL    ?= bpftool
BF_OUT     := $(BUILD)/bench-floor
BF_BIN     := $(BUILD)/tools/bench-floor
BF_BPF_CFLAGS := -g -O2 -target bpf -Wall -Werror -idirafter /usr/include/x86_64-linux-gnu

TOOLS += $(BF_BIN)

$(BF_OUT)/bench-floor.tmp.bpf.o: bpf/bench-floor.bpf.c | $(BF_OUT)
	$(CLANG) $(BF_BPF_CFLAGS) -c $< -o $@

$(BF_OUT)/bench-floor.bpf.o: $(BF_OUT)/bench-floor.tmp.bpf.o
	$(BPFTOOL) gen object $@ $<

$(BF_OUT)/bench-floor.skel.h: $(BF_OUT)/bench-floor.bpf.o
	$(BPFTOOL) gen skeleton $< name bench_floor_bpf >$@.tmp && mv $@.tmp $@

$(BF_BIN): tools/bench-floor/bench-floor.c $(BF_OUT)/bench-floor.skel.h | $(BUILD)/tools
	$(CC) $(TOOL_CFLAGS) -I$(BF_OUT) -o $@ $< -lbpf -lelf -lz

$(BF_OUT):
	mkdir -p $@
