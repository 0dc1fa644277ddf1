/* SPDX-License-Identifier: GPL-2.0 */
/* umwait-trace: declarations shared by the user-space files. */
#ifndef UT_H
#define UT_H

#include <argp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define UT_NAME "umwait-trace"

/* Exit codes: 0 fine, 1 a finding (status: mismatch), 2 cannot do it. */
#define EXIT_FINDING	1
#define EXIT_TROUBLE	2

/* argp keys of the long-only options */
enum {
	OPT_JSON = 0x100,
	OPT_HIST,
	OPT_HIST_PERTURBING,
	OPT_MAX_ENTRIES,
	OPT_FORMAT,
	OPT_RESIDENCY,
	OPT_EXACT,
	OPT_PER_PID,
	OPT_ALL,
	OPT_CGROUP,
	OPT_SOURCE,
};

/* --format (caps, status); --json is --format json */
enum format {
	FORMAT_TEXT,
	FORMAT_JSON,
	FORMAT_PROMETHEUS,	/* the text format 0.0.4 (node exporter's textfile collector) */
	FORMAT_OPENMETRICS,	/* OpenMetrics 1.0 */
};

#define FORMAT_METRICS(f)	((f) == FORMAT_PROMETHEUS || (f) == FORMAT_OPENMETRICS)

/* Every option of every subcommand; argp fills it, main() reads it. */
struct env {
	bool verbose;
	bool timestamp;
	bool json;		/* format == FORMAT_JSON */
	bool hist;		/* caps --hist-perturbing: probe each wait itself, to time it */
	bool ohist;		/* caps --hist: the outcome histograms */
	bool exact;		/* caps, sites: probe branches on a wait's path too */
	bool per_pid;		/* caps metrics: a series per process, not per site */
	bool all;		/* caps: every process's files, rescanned each interval */
	enum format format;
	const char *output;	/* -o: openmetrics into this file, else stdout */
	pid_t pid;		/* -p: 0 = none; -t: the thread's process */
	pid_t tid;		/* caps -t: this thread alone; 0 = none */
	const char *cgroup;	/* caps --cgroup: a cgroup v2 directory; NULL = none */
	int source;		/* events --source: enum event_source */
	long interval;		/* seconds; 0 = only the final totals */
	long count;		/* intervals; 0 = until Ctrl-C */
	long duration;		/* -d: seconds; 0 = until Ctrl-C */
	long max_entries;	/* caps: BPF map size; 0 = the default */
	int residency;		/* caps: enum residency_mode */
	char **files;
	int nr_files;
};

extern struct env env;
extern volatile sig_atomic_t exiting;
extern volatile sig_atomic_t dump_requested;

/*
 * IA32_UMWAIT_CONTROL (MSR 0xE1): bits 31:2 the OS limit on a wait (max_time,
 * TSC cycles), bit 0 set disables C0.2.
 */
#define MSR_IA32_UMWAIT_CONTROL	0xe1
#define UMWAIT_TIME_MASK	0xfffffffcU
#define UMWAIT_C02_DISABLE	0x1U

/* msg.c */
void die_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void setup_libbpf(void);
int need_root(void);
int need_bpf_caps(void);
int need_uprobe_caps(void);
int need_btf(void);
int need_kernel(bool uprobes);

/* signals.c: a main loop's wait on its ring buffer (if any) and its signals */
struct ring_buffer;
struct loop {
	int epfd, sfd;
	struct ring_buffer *rb;
};
void install_signals(bool restart);
int loop_open(struct loop *l, struct ring_buffer *rb);
/* up to MS ms; then exiting or dump_requested are set as signals came */
int loop_wait(struct loop *l, int ms);
void loop_close(struct loop *l);
double now_seconds(void);

/* output.c */
void format_time(char *buf, size_t len);
size_t utf8_len(const char *s);
void utf8_write(FILE *f, const char *s, void (*escape)(FILE *f, unsigned char c));
void json_str(FILE *f, const char *s);
double pct(uint64_t part, uint64_t whole);

/* cpu.c */
bool cpu_has_waitpkg(void);
int read_u64_file(const char *path, uint64_t *v);
#define SYSFS_DIR	"/sys/devices/system/cpu/umwait_control"
int parse_cpulist(const char *path, int **cpus);

/* args.c */
int parse_long(const char *arg, long min, long *out);
int parse_cmdline(const struct argp *argp, int argc, char **argv);
void usage_error(const struct argp_state *state, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
error_t parse_common_opt(int key, char *arg, struct argp_state *state);
void add_file_arg(struct argp_state *state, char *arg);
void need_target(struct argp_state *state);

/* status: one CPU's IA32_UMWAIT_CONTROL */
struct cpu_val {
	int cpu;
	bool online;	/* false: offline, value unknown */
	bool valid;
	uint64_t value;
	char err[64];
};

/* trace_helpers.c */
void print_log2_hist(const unsigned long long *slots, int nr, const char *unit);
void json_log2_hist(FILE *f, const unsigned long long *slots, int nr);
bool btf_has_type(const char *name, int kind);
bool probe_tp_btf(const char *name);

/* subcommands */
int cmd_status(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_caps(int argc, char **argv);
int cmd_sites(int argc, char **argv);

#endif /* UT_H */
