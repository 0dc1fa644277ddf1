# umwait-trace: included by the top Makefile.
#
#   bpf/NAME.bpf.c + bpf/vmlinux.h --clang -target bpf--> NAME.tmp.bpf.o
#   NAME.tmp.bpf.o --bpftool gen object, check-bpf-maps--> NAME.bpf.o
#   NAME.bpf.o --bpftool gen skeleton--> NAME.skel.h (NAME: umwait-trace, umwait-files)
#   tools/umwait-trace/*.c + skeleton --cc--> build/tools/umwait-trace
#
# bpf/vmlinux.h holds the few kernel types the program uses, relocated by
# CO-RE on the running kernel: no kernel build, no build-machine BTF.
# Every intermediate lives in $(BUILD)/umwait-trace/.  The binary is static:
# libbpf, libelf and zlib from Debian's -dev packages, Zydis from Debian's
# source built by vm/build-zydis (Debian ships no libZydis.a) and cached like
# qemu and the kernel (vm/ensure zydis); none of it needs root, nor a deb-src
# entry in apt's sources.  ZYDIS=shared links Debian's libZydis.so
# (libzydis-dev) instead: no source fetched, but the binary then needs
# libzydis4.0 wherever it runs.
#
# Installing the Debian packages below is the one step that needs root: a
# build that lacks one stops at once with one line naming them all.

UT_SRC     := tools/umwait-trace
UT_OUT     := $(BUILD)/umwait-trace
UT_BIN     := $(BUILD)/tools/umwait-trace
UT_OBJS    := $(patsubst $(UT_SRC)/%.c,$(UT_OUT)/%.o,$(wildcard $(UT_SRC)/*.c))
UT_HDRS    := $(wildcard $(UT_SRC)/*.h)

CLANG      ?= clang
BPFTOOL    ?= bpftool
UT_BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror \
		 -I$(UT_OUT) -I$(UT_SRC) -idirafter /usr/include/x86_64-linux-gnu
UT_CFLAGS  := $(CFLAGS) -Wall -Wextra -Werror -D_GNU_SOURCE -I$(UT_OUT) -I$(UT_SRC)
ZYDIS      ?= static
ifeq ($(ZYDIS),static)
# the cached build's directory, in a file rewritten only when it changes
UT_ZYDIS   := $(UT_OUT)/zydis-dir
UT_CFLAGS  += -DZYDIS_STATIC_BUILD -I$$(cat $(UT_ZYDIS))/include
UT_LDLIBS  := -static -pthread -lbpf -lelf -lz $$(cat $(UT_ZYDIS))/lib/libZydis.a
else ifeq ($(ZYDIS),shared)
UT_ZYDIS   :=
UT_LDLIBS  := -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -lZydis
else
$(error ZYDIS must be static or shared, not '$(ZYDIS)')
endif

TOOLS += $(UT_BIN)

# the packages the tool alone needs to build (vm/setup-host has them too)
UT_PKGS    := gcc libc6-dev clang bpftool libbpf-dev libelf-dev zlib1g-dev
ifeq ($(ZYDIS),static)
UT_PKGS    += libzycore-dev cmake dpkg-dev
else
UT_PKGS    += libzydis-dev
endif

# Before the first step that needs them; skipped where dpkg is not the
# package manager (the build then says what is missing itself).
.PHONY: umwait-trace-packages
umwait-trace-packages:
	@command -v dpkg-query >/dev/null || exit 0; \
	missing=$$(for p in $(UT_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	[ -z "$$missing" ] || { \
		echo "umwait-trace: missing Debian packages; as root: apt-get install" $$missing >&2; exit 1; }

# make umwait-trace: the tool alone, without QEMU, the kernel or root
.PHONY: umwait-trace
umwait-trace: $(UT_BIN)

# two objects: umwait-trace (caps' probes, events' tracepoints) and
# umwait-files (caps' looks at the processes' mappings: a VMA iterator)
UT_SKELS   := $(UT_OUT)/umwait-trace.skel.h $(UT_OUT)/umwait-files.skel.h
.SECONDARY: $(patsubst %.skel.h,%.bpf.o,$(UT_SKELS)) $(patsubst %.skel.h,%.tmp.bpf.o,$(UT_SKELS))

$(UT_OUT)/%.tmp.bpf.o: bpf/%.bpf.c bpf/vmlinux.h $(UT_SRC)/umwait-trace.h \
		| $(UT_OUT) umwait-trace-packages
	$(CLANG) $(UT_BPF_CFLAGS) -c $< -o $@

# no map allocated while a program runs: the object is checked before it is used
$(UT_OUT)/%.bpf.o: $(UT_OUT)/%.tmp.bpf.o $(UT_SRC)/check-bpf-maps
	$(BPFTOOL) gen object $@.tmp $<
	$(UT_SRC)/check-bpf-maps $@.tmp
	mv $@.tmp $@

$(UT_OUT)/%.skel.h: $(UT_OUT)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf >$@.tmp && mv $@.tmp $@

$(UT_OUT)/%.o: $(UT_SRC)/%.c $(UT_HDRS) $(UT_SKELS) $(UT_ZYDIS)
	$(CC) $(UT_CFLAGS) -c $< -o $@

$(UT_BIN): $(UT_OBJS) $(UT_ZYDIS) | $(BUILD)/tools
	$(CC) $(CFLAGS) -o $@ $(UT_OBJS) $(UT_LDLIBS)

# Mutants (tests/mutants/NAME.patch): umwait-trace with one deliberate bug
# each, which the suite's checks must catch (negative controls): the patch
# applied to a copy of tools/umwait-trace, built as the tool is, with its
# BPF skeleton. A patch that no longer applies fails the build: noticed.
UT_MUTANTS := $(patsubst tests/mutants/%.patch,$(BUILD)/tools/umwait-trace-mutant-%,$(wildcard tests/mutants/*.patch))

$(UT_MUTANTS): $(BUILD)/tools/umwait-trace-mutant-%: tests/mutants/%.patch $(wildcard $(UT_SRC)/*.c) \
		$(UT_HDRS) $(UT_SKELS) $(UT_ZYDIS) | $(BUILD)/tools
	rm -rf $(UT_OUT)/mutant-$*
	mkdir -p $(UT_OUT)/mutant-$*
	cp -r $(UT_SRC) $(UT_OUT)/mutant-$*/
	patch -s -d $(UT_OUT)/mutant-$* -p2 --fuzz=0 <$<
	$(CC) $(UT_CFLAGS) -I$(UT_OUT)/mutant-$*/umwait-trace -o $@ $(UT_OUT)/mutant-$*/umwait-trace/*.c \
		$(UT_LDLIBS)

.PHONY: umwait-trace-zydis
umwait-trace-zydis:

# A build recorded under the current key is kept even if another user's cache
# holds it: "make umwait-trace; sudo make install" builds nothing as root.
$(UT_OUT)/zydis-dir: umwait-trace-zydis | $(UT_OUT) umwait-trace-packages
	@old=$$(cat $@ 2>/dev/null); key=$$(vm/cache-key zydis) || exit 1; \
	if [ -e "$$old/lib/libZydis.a" ] && [ "$${old##*/}" = "zydis-$$key" ]; then exit 0; fi; \
	dir=$$(vm/ensure zydis) || exit 1; echo "$$dir" >$@

$(UT_OUT):
	mkdir -p $@

# make install / make uninstall: the binary, its man page and bash completion
# under PREFIX (default /usr/local), staged under DESTDIR when given; and the
# service that runs caps --all into node exporter's textfile directory, with
# the alerting rules for Prometheus.
PREFIX     ?= /usr/local
UT_PROM    := $(UT_SRC)/prometheus
UT_INSTALL_FILES := $(UT_SRC)/umwait-trace.8 $(UT_SRC)/umwait-trace.bash \
	      $(UT_PROM)/umwait-trace-caps.service $(UT_PROM)/umwait.rules.yml
UT_INSTALL := $(DESTDIR)$(PREFIX)/sbin/umwait-trace \
	      $(DESTDIR)$(PREFIX)/share/man/man8/umwait-trace.8 \
	      $(DESTDIR)$(PREFIX)/share/bash-completion/completions/umwait-trace \
	      $(DESTDIR)$(PREFIX)/lib/systemd/system/umwait-trace-caps.service \
	      $(DESTDIR)$(PREFIX)/share/umwait-trace/umwait.rules.yml

.PHONY: install uninstall
install: $(UT_BIN)
	install -D -m 0755 $(UT_BIN) $(DESTDIR)$(PREFIX)/sbin/umwait-trace
	install -D -m 0644 $(UT_SRC)/umwait-trace.8 $(DESTDIR)$(PREFIX)/share/man/man8/umwait-trace.8
	install -D -m 0644 $(UT_SRC)/umwait-trace.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/umwait-trace
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's#@SBINDIR@#$(PREFIX)/sbin#' $(UT_PROM)/umwait-trace-caps.service \
		>$(DESTDIR)$(PREFIX)/lib/systemd/system/umwait-trace-caps.service
	chmod 0644 $(DESTDIR)$(PREFIX)/lib/systemd/system/umwait-trace-caps.service
	install -D -m 0644 $(UT_PROM)/umwait.rules.yml $(DESTDIR)$(PREFIX)/share/umwait-trace/umwait.rules.yml

uninstall:
	rm -f $(UT_INSTALL)
