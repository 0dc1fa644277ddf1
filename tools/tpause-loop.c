// SPDX-License-Identifier: GPL-2.0
/*
 * tpause-loop: run N user waits (TPAUSE, or UMONITOR+UMWAIT) of a requested
 * length in TSC cycles and report how many there were, how many the OS time
 * limit (IA32_UMWAIT_CONTROL max_time) cut short (CF=1), and how long they
 * took.  It is the ground truth that the lab's tests compare tracers against.
 */
#define _GNU_SOURCE
#include <argp.h>
#include <cpuid.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <x86intrin.h>

enum insn { INSN_TPAUSE, INSN_UMWAIT };

static struct env {
	unsigned long count;
	uint64_t cycles;
	enum insn insn;
	bool c01;
	int cpu;
	bool past;
	uint64_t deadline;	/* --deadline: this absolute TSC value for every wait */
	bool no_monitor;
	uint64_t store_after;
	bool revert;
	int store_cpu;
	bool json;
	bool p99;
	bool per_wait;
	bool until_signal;
} env = {
	.count = 1000,
	.cycles = 10000,
	.insn = INSN_TPAUSE,
	.cpu = -1,
	.store_cpu = -1,
};

const char *argp_program_version = "tpause-loop 1.0";
error_t argp_err_exit_status = 2;
static const char doc[] =
"Run user waits (TPAUSE or UMONITOR+UMWAIT) and count those the OS time\n"
"limit cut short (CF=1).\n"
"\n"
"USAGE: tpause-loop [-n COUNT] [-c CYCLES] [-i tpause|umwait] [-s c01|c02]\n"
"                   [-p CPU] [--past | --deadline TSC] [--no-monitor]\n"
"                   [--store-after CYCLES [--revert] [--store-cpu CPU]]\n"
"                   [--json] [--p99] [--per-wait] [--until-signal]\n"
"\n"
"EXAMPLES:\n"
"    tpause-loop -n 100 -c 1000000        # 100 TPAUSEs of 1M TSC cycles\n"
"    tpause-loop -i umwait -s c01 -p 2    # UMWAIT in C0.1, pinned to CPU 2\n";

enum {
	OPT_PAST = 0x100,
	OPT_DEADLINE,
	OPT_NO_MONITOR,
	OPT_STORE_AFTER,
	OPT_STORE_CPU,
	OPT_REVERT,
	OPT_JSON,
	OPT_P99,
	OPT_PER_WAIT,
	OPT_UNTIL_SIGNAL,
};

static const struct argp_option opts[] = {
	{ "count", 'n', "COUNT", 0, "Number of waits (default 1000)", 0 },
	{ "cycles", 'c', "CYCLES", 0, "TSC cycles each wait requests (default 10000)", 0 },
	{ "insn", 'i', "INSN", 0, "tpause (default) or umwait", 0 },
	{ "state", 's', "STATE", 0, "c02 (default) or c01", 0 },
	{ "cpu", 'p', "CPU", 0, "Pin the waiting thread to CPU", 0 },
	{ "past", OPT_PAST, NULL, 0, "Use a deadline already in the past", 0 },
	{ "deadline", OPT_DEADLINE, "TSC", 0,
	  "Use this TSC value as every wait's deadline (a count passed where a TSC value belongs)", 0 },
	{ "no-monitor", OPT_NO_MONITOR, NULL, 0, "UMWAIT without UMONITOR first", 0 },
	{ "store-after", OPT_STORE_AFTER, "CYCLES", 0,
	  "A second thread stores to the monitored line CYCLES after each UMONITOR; "
	  "a wait that ends before the store is followed by another (stores= counts the stores, "
	  "waits= every wait)", 0 },
	{ "store-cpu", OPT_STORE_CPU, "CPU", 0, "Pin the storing thread to CPU", 0 },
	{ "revert", OPT_REVERT, NULL, 0,
	  "The store thread puts the old value back at once (the line ends unchanged)", 0 },
	{ "json", OPT_JSON, NULL, 0, "Print the report as one JSON object", 0 },
	{ "p99", OPT_P99, NULL, 0,
	  "Also report the median (p50) and the 99th percentile of the cycles per wait; "
	  "with --store-after, of the cycles from each store to the end of the wait it "
	  "ended (wake_p50, wake_p99)", 0 },
	{ "per-wait", OPT_PER_WAIT, NULL, 0,
	  "After the report, one line per wait: \"wait TSC CYCLES CF\" (its start TSC, "
	  "the cycles it took, its CF)", 0 },
	{ "until-signal", OPT_UNTIL_SIGNAL, NULL, 0,
	  "Stop after the wait under way when SIGUSR1 comes (COUNT is then the most)", 0 },
	{},
};

static int parse_u64(const char *arg, uint64_t *val, struct argp_state *state)
{
	char *end;

	errno = 0;
	*val = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-')
		argp_error(state, "invalid number: '%s'", arg);
	return 0;
}

static int parse_cpu(const char *arg, struct argp_state *state)
{
	uint64_t v;

	parse_u64(arg, &v, state);
	if (v >= CPU_SETSIZE)
		argp_error(state, "invalid CPU: '%s'", arg);
	return (int)v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	uint64_t v;

	switch (key) {
	case 'n':
		parse_u64(arg, &v, state);
		if (!v || v > ULONG_MAX)
			argp_error(state, "COUNT must be at least 1");
		env.count = v;
		break;
	case 'c':
		parse_u64(arg, &env.cycles, state);
		break;
	case 'i':
		if (!strcmp(arg, "tpause"))
			env.insn = INSN_TPAUSE;
		else if (!strcmp(arg, "umwait"))
			env.insn = INSN_UMWAIT;
		else
			argp_error(state, "invalid instruction '%s': use tpause or umwait", arg);
		break;
	case 's':
		if (!strcmp(arg, "c02"))
			env.c01 = false;
		else if (!strcmp(arg, "c01"))
			env.c01 = true;
		else
			argp_error(state, "invalid state '%s': use c01 or c02", arg);
		break;
	case 'p':
		env.cpu = parse_cpu(arg, state);
		break;
	case OPT_PAST:
		env.past = true;
		break;
	case OPT_DEADLINE:
		parse_u64(arg, &env.deadline, state);
		if (!env.deadline)
			argp_error(state, "--deadline needs a TSC value above 0");
		break;
	case OPT_NO_MONITOR:
		env.no_monitor = true;
		break;
	case OPT_STORE_AFTER:
		parse_u64(arg, &env.store_after, state);
		if (!env.store_after)
			argp_error(state, "--store-after needs at least 1 cycle");
		break;
	case OPT_STORE_CPU:
		env.store_cpu = parse_cpu(arg, state);
		break;
	case OPT_REVERT:
		env.revert = true;
		break;
	case OPT_JSON:
		env.json = true;
		break;
	case OPT_P99:
		env.p99 = true;
		break;
	case OPT_PER_WAIT:
		env.per_wait = true;
		break;
	case OPT_UNTIL_SIGNAL:
		env.until_signal = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (env.insn != INSN_UMWAIT && (env.no_monitor || env.store_after))
			argp_error(state, "--no-monitor and --store-after need -i umwait");
		if (env.no_monitor && env.store_after)
			argp_error(state, "--store-after needs the monitor");
		if (env.past && env.deadline)
			argp_error(state, "--past and --deadline both set the deadline: one of them");
		if (env.revert && !env.store_after)
			argp_error(state, "--revert needs --store-after");
		if (env.store_after && env.per_wait)
			argp_error(state, "--store-after can add waits: it does not go with --per-wait");
		if (env.per_wait && env.json)
			argp_error(state, "--per-wait prints text lines: it does not go with --json");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool cpu_has_waitpkg(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
		return false;
	return ecx & (1u << 5);
}

static int pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The monitored line has a page of its own, apart from the hand-shake with
 * the storing thread, so that only the deliberate store triggers UMWAIT
 * even where stores are watched with page granularity (the lab's QEMU).
 */
static volatile uint64_t mon_line[512] __attribute__((aligned(4096)));
static struct {
	volatile uint64_t armed_tsc;	/* 0: idle; else: UMONITOR done at this TSC */
	volatile uint64_t store_tsc;	/* the TSC right before the round's store */
	volatile bool storing;		/* the round's store is about to land, or in */
	volatile bool stop;
} __attribute__((aligned(64))) hs;

static void *store_thread(void *arg)
{
	(void)arg;
	if (pin(env.store_cpu)) {
		perror("tpause-loop: pinning the store thread");
		exit(1);
	}
	while (!hs.stop) {
		uint64_t armed = hs.armed_tsc;

		if (!armed) {
			_mm_pause();
			continue;
		}
		while (__rdtsc() < armed + env.store_after && !hs.stop)
			_mm_pause();
		/* before the line is written: a wait that ends from here on is the store's */
		hs.store_tsc = __rdtsc();
		hs.storing = true;
		mon_line[0]++;
		if (env.revert)
			mon_line[0]--;
		hs.armed_tsc = 0;
	}
	return NULL;
}

/*
 * UMWAIT's monitor is armed before the wait's first RDTSC: the deadline and
 * the cycles counted are the wait's own, whatever UMONITOR costs (in a TCG
 * guest it can cost more than a short wait).
 */
__attribute__((target("waitpkg")))
static void arm_monitor(bool new_round)
{
	if (env.insn != INSN_UMWAIT || env.no_monitor)
		return;
	_umonitor((void *)mon_line);
	if (env.store_after && new_round)
		hs.armed_tsc = __rdtsc();
}

__attribute__((target("waitpkg")))
static unsigned char do_wait(uint64_t deadline, unsigned int ctl)
{
	if (env.insn == INSN_TPAUSE)
		return _tpause(ctl, deadline);
	return _umwait(ctl, deadline);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static volatile sig_atomic_t stop_requested;

static void on_sigusr1(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* One wait, for --per-wait */
struct wait_rec {
	uint64_t tsc;
	uint64_t cycles;
	unsigned char cf;
};

/* The smallest of the sorted N samples that at least PCT% of them do not exceed. */
static uint64_t percentile(const uint64_t *sorted, unsigned long n, unsigned int pct)
{
	return sorted[(n * pct + 99) / 100 - 1];
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	unsigned long capped = 0, early = 0, i, n;
	/* each wait's outcome by this program's own RDTSC before and after it */
	unsigned long ran = 0, ended_early = 0, was_past = 0;
	uint64_t sum = 0, max = 0, min = UINT64_MAX, begin, end, *samples = NULL;
	struct wait_rec *recs = NULL;
	unsigned int ctl;
	pthread_t thr;
	int err;

	err = argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (err)
		return 2;

	if (!cpu_has_waitpkg()) {
		fprintf(stderr, "tpause-loop: this CPU lacks WAITPKG (CPUID.7.0:ECX[5]): "
			"TPAUSE/UMWAIT would fault; run it on a CPU or VM that has it\n");
		return 2;
	}
	if (env.p99) {
		samples = malloc(env.count * sizeof(*samples));
		if (!samples) {
			fprintf(stderr, "tpause-loop: no memory for %lu samples (--p99)\n", env.count);
			return 1;
		}
	}
	if (env.per_wait) {
		recs = malloc(env.count * sizeof(*recs));
		if (!recs) {
			fprintf(stderr, "tpause-loop: no memory for %lu waits (--per-wait)\n", env.count);
			return 1;
		}
	}
	if (pin(env.cpu)) {
		fprintf(stderr, "tpause-loop: cannot pin to CPU %d: %s\n", env.cpu, strerror(errno));
		return 2;
	}
	if (env.until_signal) {
		struct sigaction sa = { .sa_handler = on_sigusr1 };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
	}
	if (env.store_after) {
		err = pthread_create(&thr, NULL, store_thread, NULL);
		if (err) {
			fprintf(stderr, "tpause-loop: cannot start store thread: %s\n", strerror(err));
			return 1;
		}
	}

	/*
	 * Give the line a page of its own before the first wait: otherwise the
	 * first UMONITOR takes a page fault within the timed wait and arms the
	 * shared zero page, which the first store then replaces.
	 */
	mon_line[0] = 0;
	ctl = env.c01 ? 1 : 0;
	begin = __rdtsc();
	for (i = 0, n = 0; i < env.count && !stop_requested; i++) {
		uint64_t t0, t1, deadline, d;
		bool again = false;
		unsigned char cf;

		if (env.store_after) {
			while (hs.armed_tsc)
				_mm_pause();
			hs.storing = false;
		}
		arm_monitor(true);
		/*
		 * --store-after: a wait that something else (an interrupt) ended
		 * before the store came is followed by another on the same armed
		 * store, so that the store ends the round's last wait however
		 * late the storing CPU gets to it, and no more than that one
		 * (with --revert the line is written twice).
		 */
		do {
			if (again)
				arm_monitor(false);
			again = true;
			t0 = __rdtsc();
			deadline = env.deadline ? env.deadline :
				   env.past ? t0 - env.cycles - 1 : t0 + env.cycles;
			cf = do_wait(deadline, ctl);
			t1 = __rdtsc();
			capped += cf;
			if (t1 < deadline)
				early++;
			if (!cf && t0 >= deadline)
				was_past++;
			else if (!cf && t1 >= deadline)
				ran++;
			else if (!cf)
				ended_early++;
			d = t1 - t0;
			if (samples && !env.store_after)
				samples[n] = d;
			if (recs)
				recs[n] = (struct wait_rec){ .tsc = t0, .cycles = d, .cf = cf };
			sum += d;
			if (d > max)
				max = d;
			if (d < min)
				min = d;
			n++;
		} while (env.store_after && !hs.storing && !stop_requested);
		/* --store-after --p99: the cycles from the store to the wait's end */
		if (samples && env.store_after)
			samples[i] = t1 > hs.store_tsc ? t1 - hs.store_tsc : 0;
	}
	end = __rdtsc();

	if (env.store_after) {
		hs.stop = true;
		pthread_join(thr, NULL);
	}

	if (env.json)
		printf("{\"insn\": \"%s\", \"state\": \"%s\", \"cycles\": %llu, \"waits\": %lu, "
		       "\"capped\": %lu, \"early\": %lu, \"mean\": %llu, \"min\": %llu, "
		       "\"max\": %llu, \"tsc_begin\": %llu, \"tsc_end\": %llu",
		       env.insn == INSN_TPAUSE ? "tpause" : "umwait",
		       env.c01 ? "c01" : "c02", (unsigned long long)env.cycles, n,
		       capped, early, (unsigned long long)(n ? sum / n : 0),
		       (unsigned long long)(n ? min : 0), (unsigned long long)max,
		       (unsigned long long)begin, (unsigned long long)end);
	else
		printf("tpause-loop: insn=%s state=%s cycles=%llu waits=%lu capped=%lu "
		       "early=%lu mean=%llu min=%llu max=%llu tsc_begin=%llu tsc_end=%llu",
		       env.insn == INSN_TPAUSE ? "tpause" : "umwait",
		       env.c01 ? "c01" : "c02", (unsigned long long)env.cycles, n,
		       capped, early, (unsigned long long)(n ? sum / n : 0),
		       (unsigned long long)(n ? min : 0), (unsigned long long)max,
		       (unsigned long long)begin, (unsigned long long)end);
	printf(env.json ? ", \"ran_to_deadline\": %lu, \"ended_early\": %lu, \"deadline_past\": %lu" :
	       " ran_to_deadline=%lu ended_early=%lu deadline_past=%lu", ran, ended_early, was_past);
	if (env.store_after)
		printf(env.json ? ", \"stores\": %lu" : " stores=%lu", i);
	if (samples && env.store_after && i) {
		qsort(samples, i, sizeof(*samples), cmp_u64);
		printf(env.json ? ", \"wake_p50\": %llu, \"wake_p99\": %llu" :
		       " wake_p50=%llu wake_p99=%llu",
		       (unsigned long long)percentile(samples, i, 50),
		       (unsigned long long)percentile(samples, i, 99));
	} else if (samples && n) {
		qsort(samples, n, sizeof(*samples), cmp_u64);
		printf(env.json ? ", \"p50\": %llu, \"p99\": %llu" : " p50=%llu p99=%llu",
		       (unsigned long long)percentile(samples, n, 50),
		       (unsigned long long)percentile(samples, n, 99));
	}
	printf(env.json ? "}\n" : "\n");
	for (i = 0; recs && i < n; i++)
		printf("wait %llu %llu %u\n", (unsigned long long)recs[i].tsc,
		       (unsigned long long)recs[i].cycles, recs[i].cf);
	free(recs);
	free(samples);
	return 0;
}
