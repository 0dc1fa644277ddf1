# The library clients: small programs that drive the TPAUSE/UMWAIT code of
# Debian's oneTBB, LLVM OpenMP 14 and DPDK, dynamically linked against the
# packaged libraries (headers from libtbb-dev, libomp-14-dev and dpdk-dev);
# vm/build-initramfs copies the libraries into the guest at their paths.
# Included by the top Makefile.

CLIENT_SRC    := tools/clients
CLIENT_CFLAGS := $(CFLAGS) -Wall -Wextra -Werror -I$(CLIENT_SRC)
CLANG         ?= clang
CXX           ?= g++

TOOLS += $(addprefix $(BUILD)/tools/,tbb-waits omp-waits dpdk-waits)

$(BUILD)/tools/tbb-waits: $(CLIENT_SRC)/tbb-waits.cpp $(CLIENT_SRC)/client.h | $(BUILD)/tools
	$(CXX) $(CLIENT_CFLAGS) -o $@ $< -ltbb

# clang's -fopenmp links LLVM's libomp (gcc's would link libgomp)
$(BUILD)/tools/omp-waits: $(CLIENT_SRC)/omp-waits.c $(CLIENT_SRC)/client.h | $(BUILD)/tools
	$(CLANG) $(CLIENT_CFLAGS) -fopenmp=libomp -o $@ $<

# rte_power_pause and rte_power_monitor are still experimental API in DPDK 22.11
$(BUILD)/tools/dpdk-waits: $(CLIENT_SRC)/dpdk-waits.c $(CLIENT_SRC)/client.h | $(BUILD)/tools
	$(CC) $(CLIENT_CFLAGS) -DALLOW_EXPERIMENTAL_API $$(pkg-config --cflags libdpdk) -o $@ $< -lrte_eal
