// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: how much of its unhalted time each CPU spends in C0.1, C0.2
 * and C0_WAIT, from the core PMU:
 *
 *   CPU_CLK_UNHALTED.THREAD_P  event 0x3c umask 0x00  (the denominator)
 *   CPU_CLK_UNHALTED.C01       event 0xec umask 0x10
 *   CPU_CLK_UNHALTED.C02       event 0xec umask 0x20
 *   CPU_CLK_UNHALTED.C0_WAIT   event 0xec umask 0x70  (C0.1, C0.2 or PAUSE)
 *
 * Names and umasks follow the SDM (Intel's JSON event files describe C01 and
 * C02 the other way round).  Only Golden Cove and later P-cores have them:
 * Tremont, Gracemont and Sierra Forest take the raw event and count something
 * else, so the CPU model decides (or --residency force).  On hybrid parts
 * they live on the cpu_core PMU, which counts only the P-cores.
 *
 * One counting group per CPU, read as a whole with the times it was enabled
 * and running: a group that shared the counters with other perf users is
 * scaled (and said so), one that never ran is "not counted", a CPU that was
 * offline at the start is skipped and one whose read fails (it went offline)
 * is reported, never shown as 0%; once it is back online its group is
 * opened again and counts from the next interval, its totals carried
 * across the gap.  The counts are system-wide: every process on the
 * counted CPUs, not only the traced ones.
 *
 * caps reads each group from where it runs: the kernel gets a counting
 * CPU's values with an IPI, a few microseconds there.  It never moves onto
 * the CPU, which would preempt what runs there (the poll loop on an
 * isolated core) for a context switch each interval.
 */
#include <cpuid.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "residency.h"
#include "ut.h"

enum { EV_CYCLES, EV_C01, EV_C02, EV_C0WAIT, NR_EV };

static const uint64_t ev_config[NR_EV] = { 0x003c, 0x10ec, 0x20ec, 0x70ec };
static const char *const ev_name[NR_EV] = { "cycles", "c01", "c02", "c0_wait" };

/* family 6 models whose P-cores have CPU_CLK_UNHALTED.C01/.C02/.C0_WAIT */
static const struct model {
	unsigned int model;
	const char *name;
} c0x_models[] = {
	{ 0x97, "Alder Lake" },		{ 0x9a, "Alder Lake-L" },
	{ 0xb7, "Raptor Lake" },	{ 0xba, "Raptor Lake-P" },
	{ 0xbf, "Raptor Lake-S" },	{ 0x8f, "Sapphire Rapids" },
	{ 0xcf, "Emerald Rapids" },	{ 0xad, "Granite Rapids" },
	{ 0xae, "Granite Rapids-D" },	{ 0xaa, "Meteor Lake-L" },
	{ 0xac, "Meteor Lake" },	{ 0xb5, "Arrow Lake-U" },
	{ 0xc5, "Arrow Lake-H" },	{ 0xc6, "Arrow Lake" },
	{ 0xbd, "Lunar Lake" },
}, ecore_models[] = {
	/* they accept event 0xec but count something else */
	{ 0x86, "Tremont (Snow Ridge)" },	{ 0x96, "Tremont (Elkhart Lake)" },
	{ 0x9c, "Tremont (Jasper Lake)" },	{ 0xbe, "Gracemont (Alder Lake-N)" },
	{ 0xaf, "Sierra Forest" },		{ 0xb6, "Grand Ridge" },
	{ 0xdd, "Clearwater Forest" },
};

struct sample {
	uint64_t v[NR_EV];
	uint64_t enabled, running;	/* ns, PERF_FORMAT_TOTAL_TIME_* */
	uint64_t tsc, tsc_err;		/* when it was read: TSC +- tsc_err */
};

struct rcpu {
	int cpu;
	int fd[NR_EV];		/* fd[0] leads the group */
	bool skipped;		/* never opened, or its counters stopped: WHY says */
	char why[96];
	struct sample first, prev, cur;
	struct sample carried;	/* v, enabled, running: counted before it went offline */
	bool back_now;		/* opened again at this interval's read: BACK says when */
	char back[64];
};

struct residency {
	bool available;
	bool forced;		/* --residency force on a model not in the table */
	char reason[256];	/* unavailable: why; available: the PMU and model */
	char note[160];		/* hybrid: the E-cores left out */
	int nr;
	struct rcpu *c;
	uint64_t tsc_first, tsc_prev, tsc_cur;	/* TSC at the reads */
	int type;		/* the core PMU's perf type */
};

static int perf_open(struct perf_event_attr *attr, int cpu, int group)
{
	return syscall(SYS_perf_event_open, attr, -1, cpu, group, PERF_FLAG_FD_CLOEXEC);
}

static int read_int_file(const char *path, int *val)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fscanf(f, "%d", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static bool cpu_online(int cpu)
{
	char path[64];
	int on;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	return read_int_file(path, &on) || on;	/* no file: it cannot go offline */
}

static bool cpu_is_intel(char vendor[13])
{
	unsigned int eax, ebx, ecx, edx;

	if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx))
		return false;
	memcpy(vendor, &ebx, 4);
	memcpy(vendor + 4, &edx, 4);
	memcpy(vendor + 8, &ecx, 4);
	vendor[12] = '\0';
	return !strcmp(vendor, "GenuineIntel");
}

static void cpu_model(unsigned int *family, unsigned int *model, bool *hybrid)
{
	unsigned int eax = 0, ebx, ecx, edx;

	__get_cpuid(1, &eax, &ebx, &ecx, &edx);
	*family = (eax >> 8) & 0xf;
	*model = (eax >> 4) & 0xf;
	if (*family == 0xf)
		*family += (eax >> 20) & 0xff;
	if (*family == 6 || *family >= 0xf)
		*model |= ((eax >> 16) & 0xf) << 4;
	*hybrid = __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 15));
}

static const char *model_name(const struct model *tab, size_t n, unsigned int model)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tab[i].model == model)
			return tab[i].name;
	return NULL;
}

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static void unavailable(struct residency *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void unavailable(struct residency *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->reason, sizeof(r->reason), fmt, ap);
	va_end(ap);
	r->available = false;
}

static void close_cpu(struct rcpu *c)
{
	int e;

	for (e = 0; e < NR_EV; e++)
		if (c->fd[e] >= 0) {
			close(c->fd[e]);
			c->fd[e] = -1;
		}
}

static void close_fds(struct residency *r)
{
	int i;

	for (i = 0; r->c && i < r->nr; i++)
		close_cpu(&r->c[i]);
}

/* "0-3,8" from the CPUs in LIST (ascending) */
static void cpulist_str(char *buf, size_t len, const int *list, int n)
{
	size_t at = 0;
	int i, j;

	buf[0] = '\0';
	for (i = 0; i < n && at < len; i = j + 1) {
		for (j = i; j + 1 < n && list[j + 1] == list[j] + 1; j++)
			;
		if (j > i)
			at += snprintf(buf + at, len - at, "%s%d-%d", i ? "," : "", list[i], list[j]);
		else
			at += snprintf(buf + at, len - at, "%s%d", i ? "," : "", list[i]);
	}
}

/*
 * The CPUs to count and the PMU's type, or unavailable: the model table (or
 * force), and on hybrid parts the cpu_core PMU's CPUs.  0 if it may go on.
 */
static int pick_cpus(struct residency *r, enum residency_mode mode, int *type, int **cpus)
{
	const char *dev = "/sys/bus/event_source/devices";
	unsigned int family, model;
	char vendor[13], path[128], what[96], list[64];
	const char *name;
	int n, na, *atom;
	bool hybrid;

	if (!cpu_has_waitpkg()) {
		unavailable(r, "CPU lacks WAITPKG");
		return -1;
	}
	if (!cpu_is_intel(vendor)) {
		unavailable(r, "not an Intel CPU (vendor %s): no CPU_CLK_UNHALTED.C0x events",
			    vendor);
		return -1;
	}
	cpu_model(&family, &model, &hybrid);
	name = family == 6 ? model_name(c0x_models, ARRAY_SIZE(c0x_models), model) : NULL;
	snprintf(what, sizeof(what), "family %u model 0x%x%s%s%s", family, model,
		 name ? " (" : "", name ? name : "", name ? ")" : "");
	if (!name && mode != RESIDENCY_FORCE) {
		name = family == 6 ? model_name(ecore_models, ARRAY_SIZE(ecore_models), model) : NULL;
		if (name)
			unavailable(r, "family 6 model 0x%x (%s): an E-core, its event 0xec counts "
				    "something else than CPU_CLK_UNHALTED.C01/.C02/.C0_WAIT", model, name);
		else
			unavailable(r, "%s is not known to have CPU_CLK_UNHALTED.C01/.C02/.C0_WAIT "
				    "(Golden Cove and later P-cores); --residency force counts anyway",
				    what);
		return -1;
	}
	r->forced = !name;

	snprintf(path, sizeof(path), "%s/cpu_core/type", dev);
	if (!read_int_file(path, type)) {
		snprintf(path, sizeof(path), "%s/cpu_core/cpus", dev);
		n = parse_cpulist(path, cpus);
		if (n <= 0) {
			unavailable(r, "cannot read %s", path);
			return -1;
		}
		snprintf(path, sizeof(path), "%s/cpu_atom/cpus", dev);
		na = parse_cpulist(path, &atom);
		if (na > 0) {
			cpulist_str(list, sizeof(list), atom, na);
			snprintf(r->note, sizeof(r->note),
				 "E-cores %s not counted (cpu_atom has no such events)", list);
		}
		if (na >= 0)
			free(atom);
		snprintf(r->reason, sizeof(r->reason), "cpu_core PMU, %s", what);
		return n;
	}
	if (hybrid) {
		unavailable(r, "hybrid CPU, but no %s/cpu_core: cannot tell the P-cores, which "
			    "have the events, from the E-cores", dev);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/cpu/type", dev);
	if (read_int_file(path, type)) {
		unavailable(r, "no core PMU: %s/cpu is missing", dev);
		return -1;
	}
	n = parse_cpulist("/sys/devices/system/cpu/present", cpus);
	if (n <= 0) {
		unavailable(r, "cannot list the CPUs (/sys/devices/system/cpu/present)");
		return -1;
	}
	snprintf(r->reason, sizeof(r->reason), "cpu PMU, %s", what);
	return n;
}

/*
 * One CPU's group: 0, 1 if the CPU is skipped (offline), or -errno if the PMU
 * refuses event *BAD.
 */
static int open_cpu(struct rcpu *c, int type, int *bad)
{
	int e;

	if (!cpu_online(c->cpu)) {
		snprintf(c->why, sizeof(c->why), "offline at start");
		c->skipped = true;
		return 1;
	}
	for (e = 0; e < NR_EV; e++) {
		struct perf_event_attr attr = {
			.size = sizeof(attr),
			.type = type,
			.config = ev_config[e],
			.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				       PERF_FORMAT_TOTAL_TIME_RUNNING,
		};
		int err;

		c->fd[e] = perf_open(&attr, c->cpu, e ? c->fd[0] : -1);
		if (c->fd[e] >= 0)
			continue;
		err = errno;
		*bad = e;
		close_cpu(c);
		if (err == ENODEV || err == ENXIO || !cpu_online(c->cpu)) {
			/* it went offline under us */
			snprintf(c->why, sizeof(c->why), "offline at start (%s)", strerror(err));
			c->skipped = true;
			return 1;
		}
		return -err;
	}
	return 0;
}

struct residency *residency_open(enum residency_mode mode)
{
	struct residency *r;
	int type, *cpus = NULL, i, e, err, bad = 0, opened = 0;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (mode == RESIDENCY_OFF) {
		unavailable(r, "--residency off");
		return r;
	}
	r->nr = pick_cpus(r, mode, &type, &cpus);
	if (r->nr <= 0) {
		r->nr = 0;
		free(cpus);
		return r;
	}
	r->c = calloc(r->nr, sizeof(*r->c));
	if (!r->c) {
		r->nr = 0;
		free(cpus);
		unavailable(r, "out of memory");
		return r;
	}
	for (i = 0; i < r->nr; i++) {
		r->c[i].cpu = cpus[i];
		for (e = 0; e < NR_EV; e++)
			r->c[i].fd[e] = -1;
	}
	free(cpus);
	for (i = 0; i < r->nr; i++) {
		err = open_cpu(&r->c[i], type, &bad);
		if (err < 0) {
			close_fds(r);
			unavailable(r, "perf_event_open(%s, config 0x%llx, cpu %d): %s",
				    ev_name[bad], (unsigned long long)ev_config[bad], r->c[i].cpu,
				    strerror(-err));
			return r;
		}
		opened += !err;
	}
	if (!opened) {
		unavailable(r, "every CPU is offline");
		return r;
	}
	r->available = true;
	r->type = type;
	residency_read(r);
	r->tsc_first = r->tsc_prev = r->tsc_cur;
	for (i = 0; i < r->nr; i++)
		r->c[i].first = r->c[i].prev = r->c[i].cur;
	return r;
}

void residency_mark(struct residency *r)
{
	int i;

	if (!residency_available(r))
		return;
	r->tsc_prev = r->tsc_cur;
	for (i = 0; i < r->nr; i++)
		r->c[i].prev = r->c[i].cur;
}

bool residency_available(const struct residency *r)
{
	return r && r->available;
}

const char *residency_reason(const struct residency *r)
{
	return r ? r->reason : "out of memory";
}

/* COUNTS's counts (not its TSC) are those of FROM */
static void counts_from(struct sample *counts, const struct sample *from)
{
	memcpy(counts->v, from->v, sizeof(counts->v));
	counts->enabled = from->enabled;
	counts->running = from->running;
}

/*
 * A failed read: the group is gone (Linux detaches it when the CPU goes
 * offline). What it counted until its last read is carried over, once.
 */
static void stop_cpu(struct rcpu *c, const char *what)
{
	char ts[32];
	int e;

	for (e = 0; e < NR_EV; e++)
		c->carried.v[e] += c->cur.v[e] - c->first.v[e];
	c->carried.enabled += c->cur.enabled - c->first.enabled;
	c->carried.running += c->cur.running - c->first.running;
	counts_from(&c->first, &c->cur);
	format_time(ts, sizeof(ts));
	if (!cpu_online(c->cpu))
		snprintf(c->why, sizeof(c->why), "read failed: offline since %s", ts);
	else
		snprintf(c->why, sizeof(c->why), "read failed at %s: %s", ts, what);
	c->skipped = true;
	close_cpu(c);
}

void residency_read(struct residency *r)
{
	struct {
		uint64_t nr, enabled, running;
		uint64_t v[NR_EV];
	} buf;
	ssize_t n;
	int i, bad;
	uint64_t t0;
	char ts[32], why[sizeof(r->c->why)];

	if (!residency_available(r))
		return;
	r->tsc_cur = __rdtsc();
	for (i = 0; i < r->nr; i++) {
		struct rcpu *c = &r->c[i];

		c->back_now = false;
		if (c->skipped) {
			/* back online: a new group, counting from this read */
			if (!cpu_online(c->cpu))
				continue;
			memcpy(why, c->why, sizeof(why));
			c->skipped = false;
			if (open_cpu(c, r->type, &bad)) {
				close_cpu(c);
				c->skipped = true;
				memcpy(c->why, why, sizeof(why));
				continue;
			}
			format_time(ts, sizeof(ts));
			snprintf(c->back, sizeof(c->back), "back online at %s", ts);
			c->back_now = true;
		}
		/* the TSC around the read says when the counts were taken */
		t0 = __rdtsc();
		n = read(c->fd[0], &buf, sizeof(buf));
		c->cur.tsc_err = (__rdtsc() - t0) / 2;
		c->cur.tsc = t0 + c->cur.tsc_err;
		if (n < 0) {
			stop_cpu(c, strerror(errno));
			continue;
		}
		/* an offline CPU's events are cut from their group: the leader reads alone */
		if (n < (ssize_t)sizeof(buf) || buf.nr != NR_EV || !cpu_online(c->cpu)) {
			stop_cpu(c, "the group lost its counters");
			continue;
		}
		memcpy(c->cur.v, buf.v, sizeof(buf.v));
		c->cur.enabled = buf.enabled;
		c->cur.running = buf.running;
		/* a new group counts from 0: its first read is the base (since attach: its TSC stays) */
		if (c->back_now) {
			counts_from(&c->first, &c->cur);
			c->prev = c->cur;
		}
	}
}

enum span_state {
	SPAN_COUNTED,
	SPAN_SCALED,		/* the counters were shared: an estimate */
	SPAN_NOT_COUNTED,	/* the group never ran */
	SPAN_FAILED,		/* skipped or stopped: rcpu.why */
	SPAN_BACK,		/* opened again at the interval's end: rcpu.back */
};

struct span {
	enum span_state state;
	uint64_t d[NR_EV];	/* scaled to the enabled time */
	double running;		/* percent of the enabled time the group counted */
	bool gap;		/* since attach, with a time offline in it */
};

static void span_of(const struct rcpu *c, bool since_open, struct span *s)
{
	const struct sample *b = since_open ? &c->first : &c->prev;
	uint64_t en = c->cur.enabled - b->enabled, run = c->cur.running - b->running;
	int e;

	memset(s, 0, sizeof(*s));
	if (c->skipped) {
		s->state = SPAN_FAILED;
		return;
	}
	if (c->back_now && !since_open) {
		s->state = SPAN_BACK;
		return;
	}
	if (since_open) {
		en += c->carried.enabled;
		run += c->carried.running;
		s->gap = c->back[0];
	}
	if (!run) {
		s->state = SPAN_NOT_COUNTED;
		return;
	}
	s->running = 100.0 * run / (en ? en : run);
	s->state = run < en ? SPAN_SCALED : SPAN_COUNTED;
	for (e = 0; e < NR_EV; e++) {
		uint64_t d = c->cur.v[e] - b->v[e] + (since_open ? c->carried.v[e] : 0);

		s->d[e] = run < en ? (uint64_t)((double)d * en / run) : d;
	}
}

/* the sum over the CPUs counted in the span; their list in LIST */
static int span_all(const struct residency *r, bool since_open, struct span *all,
		    char *list, size_t len)
{
	struct span s;
	int i, e, n = 0, *cpus = calloc(r->nr, sizeof(int));

	memset(all, 0, sizeof(*all));
	all->state = SPAN_NOT_COUNTED;
	for (i = 0; i < r->nr; i++) {
		span_of(&r->c[i], since_open, &s);
		if (s.state != SPAN_COUNTED && s.state != SPAN_SCALED)
			continue;
		if (cpus)
			cpus[n] = r->c[i].cpu;
		n++;
		if (all->state == SPAN_NOT_COUNTED || s.state == SPAN_SCALED)
			all->state = s.state;
		for (e = 0; e < NR_EV; e++)
			all->d[e] += s.d[e];
	}
	if (cpus)
		cpulist_str(list, len, cpus, n);
	else
		snprintf(list, len, "%d CPUs", n);
	free(cpus);
	return n;
}

bool residency_consistent(const uint64_t d[RESIDENCY_NR_EVENTS])
{
	uint64_t slack = d[EV_CYCLES] / 200 + 1000;

	return d[EV_C01] + d[EV_C02] <= d[EV_C0WAIT] + slack &&
	       d[EV_C0WAIT] <= d[EV_CYCLES] + slack;
}

static const char *span_note(const struct rcpu *c, const struct span *s, char *buf, size_t len)
{
	switch (s->state) {
	case SPAN_FAILED:
		snprintf(buf, len, "not counted: %s", c->why);
		break;
	case SPAN_BACK:
		snprintf(buf, len, "not counted: %s, counted from the next interval", c->back);
		break;
	case SPAN_NOT_COUNTED:
		snprintf(buf, len, "not counted: the group never got the counters (other perf users)");
		break;
	case SPAN_SCALED:
		snprintf(buf, len, "scaled: counted %.1f%% of the time (counters shared)",
			 s->running);
		break;
	default:
		buf[0] = '\0';
	}
	if (s->state <= SPAN_SCALED && s->gap) {
		size_t at = strlen(buf);

		/* since attach: the counts of before and since it was offline */
		snprintf(buf + at, len - at, "%s%s (not counted while offline)", at ? "; " : "",
			 c->back);
	}
	if (s->state <= SPAN_SCALED && !residency_consistent(s->d)) {
		size_t at = strlen(buf);

		snprintf(buf + at, len - at, "%sinconsistent: C01+C02 <= C0_WAIT <= cycles broken",
			 at ? "; " : "");
	}
	return buf;
}

static void print_row(const char *label, const struct span *s, const char *note)
{
	const char *sep = note[0] ? "  " : "";

	if (s->state == SPAN_COUNTED || s->state == SPAN_SCALED)
		printf("%-8s %14llu %7.1f%% %7.1f%% %7.1f%%%s%s\n", label,
		       (unsigned long long)s->d[EV_CYCLES], pct(s->d[EV_C01], s->d[EV_CYCLES]),
		       pct(s->d[EV_C02], s->d[EV_CYCLES]), pct(s->d[EV_C0WAIT], s->d[EV_CYCLES]),
		       sep, note);
	else
		printf("%-8s %14s %8s %8s %8s%s%s\n", label, "-", "-", "-", "-", sep, note);
}

void residency_print(const struct residency *r, bool since_open)
{
	char label[16], note[192], list[256];
	struct span s;
	int i, bad = 0;

	if (!residency_available(r))
		return;
	printf("\nC0.x residency, system-wide (every process on these CPUs), %s:\n", r->reason);
	if (r->forced)
		printf("(--residency force: this model is not known to count these events)\n");
	if (r->note[0])
		printf("(%s)\n", r->note);
	printf("%-8s %14s %8s %8s %8s  %s\n", "CPU", "CYCLES", "C0.1", "C0.2", "C0_WAIT", "NOTE");
	for (i = 0; i < r->nr; i++) {
		span_of(&r->c[i], since_open, &s);
		snprintf(label, sizeof(label), "%d", r->c[i].cpu);
		print_row(label, &s, span_note(&r->c[i], &s, note, sizeof(note)));
		bad += s.state <= SPAN_SCALED && !residency_consistent(s.d);
	}
	if (span_all(r, since_open, &s, list, sizeof(list)))
		print_row(list, &s, s.state == SPAN_SCALED ? "sum; scaled" : "sum");
	else
		printf("no CPU counted\n");
	printf("CYCLES: unhalted; C0.1, C0.2, C0_WAIT (C0.1, C0.2 or PAUSE): %% of CYCLES\n");
	if (bad)
		printf("%d CPU%s broke C01 + C02 <= C0_WAIT <= CYCLES: these counts are not the "
		       "events they are named after\n", bad, bad == 1 ? "" : "s");
}

static void json_span(FILE *f, const struct span *s)
{
	fprintf(f, "\"cycles\": %llu, \"c01\": %.2f, \"c02\": %.2f, \"c0_wait\": %.2f, "
		"\"scaled\": %s, \"running\": %.2f, \"consistent\": %s",
		(unsigned long long)s->d[EV_CYCLES], pct(s->d[EV_C01], s->d[EV_CYCLES]),
		pct(s->d[EV_C02], s->d[EV_CYCLES]), pct(s->d[EV_C0WAIT], s->d[EV_CYCLES]),
		s->state == SPAN_SCALED ? "true" : "false", s->running,
		residency_consistent(s->d) ? "true" : "false");
}

void residency_json(FILE *f, const struct residency *r, bool since_open)
{
	char list[256], note[192];
	struct span s;
	int i;

	if (!residency_available(r)) {
		fprintf(f, "{\"available\": false, \"reason\": ");
		json_str(f, residency_reason(r));
		fputc('}', f);
		return;
	}
	fprintf(f, "{\"available\": true, \"scope\": \"system\", \"pmu\": ");
	json_str(f, r->reason);
	fprintf(f, ", \"forced\": %s, \"unit\": \"percent of unhalted cycles\", "
		"\"c0_wait_counts\": \"C0.1, C0.2 or PAUSE\", \"tsc_begin\": %llu, "
		"\"tsc_end\": %llu, \"cpus\": [", r->forced ? "true" : "false",
		(unsigned long long)(since_open ? r->tsc_first : r->tsc_prev),
		(unsigned long long)r->tsc_cur);
	for (i = 0; i < r->nr; i++) {
		span_of(&r->c[i], since_open, &s);
		fprintf(f, "%s{\"cpu\": %d, \"counted\": %s, ", i ? ", " : "", r->c[i].cpu,
			s.state <= SPAN_SCALED ? "true" : "false");
		if (s.state <= SPAN_SCALED) {
			const struct sample *b = since_open ? &r->c[i].first : &r->c[i].prev;

			json_span(f, &s);
			fprintf(f, ", \"tsc_begin\": %llu, \"tsc_end\": %llu, \"tsc_err\": %llu",
				(unsigned long long)b->tsc, (unsigned long long)r->c[i].cur.tsc,
				(unsigned long long)(b->tsc_err + r->c[i].cur.tsc_err));
		} else {
			fprintf(f, "\"reason\": ");
			json_str(f, span_note(&r->c[i], &s, note, sizeof(note)));
		}
		fputc('}', f);
	}
	fprintf(f, "], \"all\": ");
	if (span_all(r, since_open, &s, list, sizeof(list))) {
		fprintf(f, "{\"cpus\": ");
		json_str(f, list);
		fprintf(f, ", ");
		json_span(f, &s);
		fputc('}', f);
	} else {
		fprintf(f, "null");
	}
	fputc('}', f);
}

_Static_assert(RESIDENCY_NR_EVENTS == NR_EV, "residency.h counts the events");

int residency_nr_cpus(const struct residency *r)
{
	return residency_available(r) ? r->nr : 0;
}

int residency_cpu(const struct residency *r, int i)
{
	return r->c[i].cpu;
}

bool residency_counts(const struct residency *r, int i, uint64_t d[RESIDENCY_NR_EVENTS],
		      uint64_t t[2])
{
	const struct rcpu *c = &r->c[i];
	int e;

	if (c->skipped)
		return false;
	/* counters: what it counted before it went offline carries on */
	for (e = 0; e < NR_EV; e++)
		d[e] = c->carried.v[e] + c->cur.v[e] - c->first.v[e];
	t[0] = c->carried.enabled + c->cur.enabled - c->first.enabled;
	t[1] = c->carried.running + c->cur.running - c->first.running;
	return true;
}

const char *residency_event_name(int e)
{
	return ev_name[e];
}

void residency_close(struct residency *r)
{
	if (!r)
		return;
	close_fds(r);
	free(r->c);
	free(r);
}
