// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace --format prometheus|openmetrics: caps' counters and status's
 * control values as metrics, in one of two exact formats:
 *
 *   prometheus   the text format 0.0.4, which node exporter's textfile
 *                collector and promtool read: a counter's family is named
 *                with its _total, HELP and TYPE before its samples;
 *   openmetrics  OpenMetrics 1.0: a counter's family is named without
 *                _total, its samples are NAME_total and NAME_created (when
 *                the counter started), and the exposition ends in "# EOF".
 *
 * Counters only count up; what can go down is a gauge of its own.  Label
 * values are escaped and valid UTF-8 whatever the names hold.  Counters
 * count since caps attached; a new run starts them again at 0, which
 * NAME_created (openmetrics) or umwait_caps_start_time_seconds (both) shows.
 *
 * With -o FILE each exposition goes to a new file in FILE's directory,
 * mode 0644, renamed over FILE: a reader (the textfile collector) sees the
 * previous exposition or the new one, never half of one.  The temporary
 * name does not end in .prom, so the collector never reads it.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "openmetrics.h"

struct out {
	FILE *f;
	char *tmp;	/* NULL: stdout */
};

/* why the last exposition could not be written (om_error) */
static char why[PATH_MAX + 128];

static void om_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
}

const char *om_error(void)
{
	return why;
}

static int out_open(struct out *o)
{
	int fd;

	o->f = stdout;
	o->tmp = NULL;
	if (!env.output)
		return 0;
	if (asprintf(&o->tmp, "%s.tmp.XXXXXX", env.output) < 0) {
		o->tmp = NULL;
		om_fail("out of memory");
		return EXIT_TROUBLE;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		om_fail("cannot create %s: %s", o->tmp, strerror(errno));
		free(o->tmp);
		return EXIT_TROUBLE;
	}
	/* mkstemp makes it 0600: the exporter runs as another user */
	if (fchmod(fd, 0644) || !(o->f = fdopen(fd, "w"))) {
		om_fail("cannot write %s: %s", o->tmp, strerror(errno));
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		return EXIT_TROUBLE;
	}
	return 0;
}

static int out_close(struct out *o)
{
	int err;

	if (env.format == FORMAT_OPENMETRICS)
		fputs("# EOF\n", o->f);
	if (!o->tmp)
		return fflush(o->f) ? EXIT_TROUBLE : 0;
	err = ferror(o->f) | fflush(o->f) | fsync(fileno(o->f));
	err |= fclose(o->f);
	if (!err && rename(o->tmp, env.output))
		err = -1;
	if (err) {
		om_fail("cannot write %s: %s", env.output, strerror(errno));
		unlink(o->tmp);
	}
	free(o->tmp);
	return err ? EXIT_TROUBLE : 0;
}

static bool om(void)
{
	return env.format == FORMAT_OPENMETRICS;
}

/*
 * A family's HELP and TYPE.  NAME is the family's name as OpenMetrics has it
 * (a counter without _total); the text format names a counter's family
 * after its samples, with _total.
 */
static void family(FILE *f, const char *name, const char *type, const char *help)
{
	const char *suffix = !om() && !strcmp(type, "counter") ? "_total" : "";

	fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
}

static time_t created;	/* when the counters started: NAME_created (openmetrics) */

/* LABELS (already written, "" for none) of a counter: its sample, and its _created */
static void counter(FILE *f, const char *name, const char *labels, uint64_t v)
{
	fprintf(f, "%s_total%s %llu\n", name, labels, (unsigned long long)v);
	if (om())
		fprintf(f, "%s_created%s %lld\n", name, labels, (long long)created);
}

static void label_escape(FILE *f, unsigned char c)
{
	if (c == '\\' || c == '"')
		fprintf(f, "\\%c", c);
	else if (c == '\n')
		fputs("\\n", f);
	else
		fputc(c, f);
}

/*
 * A label value: backslash, double quote and newline escaped, and valid
 * UTF-8 whatever the name holds (invalid bytes as U+FFFD): one invalid
 * byte makes a scraper drop the whole file.
 */
static void label(FILE *f, const char *name, const char *val, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	utf8_write(f, val, label_escape);
	fputc('"', f);
}

/* a site's labels, "{...}", in a string the caller frees (NULL without memory) */
static char *site_labels(const struct om_site *s)
{
	char num[24], *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fputc('{', f);
	if (env.per_pid) {
		snprintf(num, sizeof(num), "%u", s->pid);
		label(f, "pid", num, true);
		label(f, "comm", s->comm, false);
		label(f, "exe", s->exe, false);
	} else {
		label(f, "exe", s->exe, true);
	}
	label(f, "file", s->file, false);
	snprintf(num, sizeof(num), "0x%llx", (unsigned long long)s->offset);
	label(f, "offset", num, false);
	label(f, "symbol", s->symbol, false);
	label(f, "insn", s->insn, false);
	if (s->cgroup)
		label(f, "cgroup", s->cgroup, false);
	fputc('}', f);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* one exposition of RENDER(ARG) to env.output or stdout */
static int om_write(void (*render)(FILE *f, const void *arg), const void *arg)
{
	struct out o;

	if (out_open(&o))
		return EXIT_TROUBLE;
	render(o.f, arg);
	return out_close(&o);
}

static void cpu_sample(FILE *f, const char *name, int cpu, uint64_t v)
{
	fprintf(f, "%s{cpu=\"%d\"} %llu\n", name, cpu, (unsigned long long)v);
}

/* a counter's sample (and _created) for one CPU, of a seconds VALUE */
static void cpu_seconds(FILE *f, const char *name, int cpu, double v)
{
	fprintf(f, "%s_total{cpu=\"%d\"} %.9f\n", name, cpu, v);
	if (om())
		fprintf(f, "%s_created{cpu=\"%d\"} %lld\n", name, cpu, (long long)created);
}

static void render_caps(FILE *f, const void *arg)
{
	const struct om_caps *c = arg;
	uint64_t d[RESIDENCY_NR_EVENTS], t[2];
	char num[16], **labels;
	int i, e;

	created = c->start_time;
	labels = calloc(c->nr_sites + 1, sizeof(*labels));
	for (i = 0; labels && i < c->nr_sites; i++)
		labels[i] = site_labels(&c->sites[i]);
	family(f, "umwait_waits", "counter", env.per_pid ?
	       "TPAUSE/UMWAIT waits that ended since umwait-trace caps attached, per process and site." :
	       "TPAUSE/UMWAIT waits that ended since umwait-trace caps attached, per site and executable.");
	for (i = 0; labels && i < c->nr_sites; i++)
		if (labels[i])
			counter(f, "umwait_waits", labels[i], c->sites[i].waits);
	family(f, "umwait_capped", "counter",
	       "Waits the OS time limit (IA32_UMWAIT_CONTROL max_time) ended, CF=1.");
	for (i = 0; labels && i < c->nr_sites; i++)
		if (labels[i])
			counter(f, "umwait_capped", labels[i], c->sites[i].capped);
	family(f, "umwait_outcomes", "counter",
	       "Waits by how they ended: capped (CF=1), deadline (ran to it), early (ended before it, "
	       "CF=0: a store or an interrupt), past (the deadline was already behind); "
	       "they add up to umwait_waits.");
	for (i = 0; labels && i < c->nr_sites; i++) {
		const char *name[] = { "capped", "deadline", "early", "past" };
		uint64_t v[] = { c->sites[i].capped, c->sites[i].deadline, c->sites[i].early,
				 c->sites[i].past };
		size_t len = labels[i] ? strlen(labels[i]) : 0;
		char *lbl = len > 1 ? malloc(len + 32) : NULL;

		/* the site's labels and the outcome's */
		for (e = 0; lbl && e < 4; e++) {
			snprintf(lbl, len + 32, "%.*s,outcome=\"%s\"}", (int)len - 1, labels[i], name[e]);
			counter(f, "umwait_outcomes", lbl, v[e]);
		}
		free(lbl);
	}
	for (i = 0; labels && i < c->nr_sites; i++)
		free(labels[i]);
	free(labels);
	family(f, "umwait_unpaired", "counter",
	       "Arrivals at the instruction after a site that were not its wait (a jump): not counted.");
	counter(f, "umwait_unpaired", "", c->unpaired);
	family(f, "umwait_unended", "counter",
	       "Waits seen starting that never ended (the thread died, or the site was passed again): not counted.");
	counter(f, "umwait_unended", "", c->unended);
	family(f, "umwait_inflight", "gauge", "Waits seen starting and not ended yet (--hist-perturbing).");
	fprintf(f, "umwait_inflight %llu\n", (unsigned long long)c->inflight);
	family(f, "umwait_dropped", "counter", "Waits not counted or not timed because a BPF map was full.");
	counter(f, "umwait_dropped", "", c->dropped);
	family(f, "umwait_anon_exec_mappings", "gauge",
	       "Anonymous executable mappings (JIT code) of the traced processes at the last look: "
	       "TPAUSE/UMWAIT there is not traced.");
	fprintf(f, "umwait_anon_exec_mappings %d\n", c->anon);
	family(f, "umwait_caps_start_time_seconds", "gauge",
	       "When umwait-trace caps attached, in seconds since the epoch: the counters start at 0 then.");
	fprintf(f, "umwait_caps_start_time_seconds %lld\n", (long long)c->start_time);
	family(f, "umwait_residency_available", "gauge",
	       "1 if the core PMU counts C0.1/C0.2 residency here, 0 if not.");
	fprintf(f, "umwait_residency_available %d\n", residency_available(c->res));
	if (!residency_nr_cpus(c->res))
		return;
	family(f, "umwait_residency_cpu_counted", "gauge",
	       "1 if the CPU's counters run, 0 if not (offline at start, or stopped when it went offline).");
	for (i = 0; i < residency_nr_cpus(c->res); i++)
		cpu_sample(f, "umwait_residency_cpu_counted", residency_cpu(c->res, i),
			   residency_counts(c->res, i, d, t));
	family(f, "umwait_residency_cycles", "counter",
	       "Core cycles counted since attach, system-wide: unhalted (cycles), in C0.1 (c01), in C0.2 (c02), "
	       "in C0.1, C0.2 or PAUSE (c0_wait); not scaled: see umwait_residency_running_seconds.");
	for (i = 0; i < residency_nr_cpus(c->res); i++) {
		if (!residency_counts(c->res, i, d, t))
			continue;
		snprintf(num, sizeof(num), "%d", residency_cpu(c->res, i));
		for (e = 0; e < RESIDENCY_NR_EVENTS; e++) {
			char lbl[64];

			snprintf(lbl, sizeof(lbl), "{cpu=\"%s\",counter=\"%s\"}", num,
				 residency_event_name(e));
			counter(f, "umwait_residency_cycles", lbl, d[e]);
		}
	}
	family(f, "umwait_residency_enabled_seconds", "counter",
	       "Time the CPU's counters were enabled since attach.");
	for (i = 0; i < residency_nr_cpus(c->res); i++)
		if (residency_counts(c->res, i, d, t))
			cpu_seconds(f, "umwait_residency_enabled_seconds", residency_cpu(c->res, i), t[0] / 1e9);
	family(f, "umwait_residency_running_seconds", "counter",
	       "Time they really counted: less than enabled when other perf users shared the PMU "
	       "(scale the cycles by enabled / running).");
	for (i = 0; i < residency_nr_cpus(c->res); i++)
		if (residency_counts(c->res, i, d, t))
			cpu_seconds(f, "umwait_residency_running_seconds", residency_cpu(c->res, i), t[1] / 1e9);
}

int om_caps(const struct om_caps *c)
{
	return om_write(render_caps, c);
}

static void render_status(FILE *f, const void *arg)
{
	const struct om_status *s = arg;
	int i;

	family(f, "umwait_control_cached", "gauge",
	       "IA32_UMWAIT_CONTROL as the kernel caches it (sysfs umwait_control), raw.");
	fprintf(f, "umwait_control_cached %llu\n", (unsigned long long)s->cached);
	family(f, "umwait_control_cached_max_time", "gauge",
	       "The cached value's max_time: the OS limit of a wait, in TSC cycles (0: none).");
	fprintf(f, "umwait_control_cached_max_time %llu\n",
		(unsigned long long)(s->cached & UMWAIT_TIME_MASK));
	family(f, "umwait_control_cached_c02_enabled", "gauge",
	       "1 if the cached value allows C0.2, 0 if not.");
	fprintf(f, "umwait_control_cached_c02_enabled %d\n", !(s->cached & UMWAIT_C02_DISABLE));
	family(f, "umwait_control_cpu_online", "gauge", "1 if the CPU is online.");
	for (i = 0; i < s->nr_cpus; i++)
		cpu_sample(f, "umwait_control_cpu_online", s->cpus[i].cpu, s->cpus[i].online);
	family(f, "umwait_control_cpu", "gauge",
	       "IA32_UMWAIT_CONTROL as the CPU holds it, raw (online CPUs that could be read).");
	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].valid)
			cpu_sample(f, "umwait_control_cpu", s->cpus[i].cpu, s->cpus[i].value);
	family(f, "umwait_control_cpu_max_time", "gauge", "The CPU's max_time, in TSC cycles.");
	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].valid)
			cpu_sample(f, "umwait_control_cpu_max_time", s->cpus[i].cpu,
				   s->cpus[i].value & UMWAIT_TIME_MASK);
	family(f, "umwait_control_cpu_c02_enabled", "gauge", "1 if the CPU's value allows C0.2.");
	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].valid)
			cpu_sample(f, "umwait_control_cpu_c02_enabled", s->cpus[i].cpu,
				   !(s->cpus[i].value & UMWAIT_C02_DISABLE));
	family(f, "umwait_control_cpu_match", "gauge", "1 if the CPU holds the cached value, 0 if not.");
	for (i = 0; i < s->nr_cpus; i++)
		if (s->cpus[i].valid)
			cpu_sample(f, "umwait_control_cpu_match", s->cpus[i].cpu,
				   s->cpus[i].value == s->cached);
	family(f, "umwait_control_cpus_mismatched", "gauge",
	       "Online CPUs that hold another value than the cached one.");
	fprintf(f, "umwait_control_cpus_mismatched %d\n", s->mismatched);
	family(f, "umwait_control_cpus_unreadable", "gauge", "Online CPUs whose value could not be read.");
	fprintf(f, "umwait_control_cpus_unreadable %d\n", s->unknown);
	family(f, "umwait_control_source_info", "gauge", "Where the CPUs' values were read (source).");
	fputs("umwait_control_source_info{", f);
	label(f, "source", s->source, true);
	fputs("} 1\n", f);
}

int om_status(const struct om_status *s)
{
	int err = om_write(render_status, s);

	if (err)
		die_msg("%s", why);
	return err;
}
