// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace status: the IA32_UMWAIT_CONTROL value the kernel caches
 * (sysfs), what every online CPU really holds, and one verdict line.
 *
 * The per-CPU values come from the kernel series' debugfs file when it is
 * there, otherwise from the MSR driver (/dev/cpu/N/msr).  No BPF.
 * Exit status: 0 all match, 1 a CPU differs, 2 cannot tell.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "openmetrics.h"
#include "ut.h"

#define DEBUGFS_FILE	"/sys/kernel/debug/x86/umwait/control"
#define STATUS_TRIES			10

static const char doc[] =
"Show IA32_UMWAIT_CONTROL: the value the kernel caches and every CPU's.\n"
"\n"
"USAGE: umwait-trace status [--format text|json|prometheus|openmetrics] [-o FILE]\n"
"\n"
"Exits 0 when every online CPU holds the cached value, 1 when one does not,\n"
"2 when it cannot tell.  -o writes the metrics into FILE by a rename, for\n"
"node exporter's textfile collector.\n";

static const struct argp_option opts[] = {
	{ "json", OPT_JSON, NULL, 0, "Print one JSON object (--format json)", 0 },
	{ "format", OPT_FORMAT, "FORMAT", 0,
	  "text (default), json, prometheus (text 0.0.4) or openmetrics (1.0)", 0 },
	{ "output", 'o', "FILE", 0, "Metrics into FILE, replaced atomically", 0 },
	{ "verbose", 'v', NULL, 0, "Say where each value comes from", 0 },
	{},
};

/*
 * The CPU lines of @v (@n of them, in CPU order as the file lists them)
 * merged with the present CPUs (in order too): a present CPU @v does not
 * list is offline.  Frees @v; returns the count or -ENOMEM.
 */
static int add_unlisted_cpus(struct cpu_val **vp, int n)
{
	struct cpu_val *v = *vp, *all;
	int i = 0, j = 0, m = 0, nr, *present = NULL;

	nr = parse_cpulist("/sys/devices/system/cpu/present", &present);
	if (nr <= 0) {
		free(present);
		return n;
	}
	all = calloc(nr + n, sizeof(*all));
	if (!all) {
		free(present);
		return -ENOMEM;
	}
	while (i < nr || j < n) {
		if (j < n && (i == nr || v[j].cpu <= present[i])) {
			if (i < nr && v[j].cpu == present[i])
				i++;
			all[m++] = v[j++];
			continue;
		}
		all[m] = (struct cpu_val){ .cpu = present[i++] };
		snprintf(all[m++].err, sizeof(all->err), "offline");
	}
	free(present);
	free(v);
	*vp = all;
	return m;
}

/*
 * The series' debugfs file (Documentation/ABI/testing/debugfs-umwait):
 *   cached 0x000186a0 max_time=100000 c02=on
 *   cpu0 0x000186a0 max_time=100000 c02=on ok     (or MISMATCH)
 * one line per online CPU (the series' v2 also listed "cpu1 offline", and
 * printed c02=1/0; both are read).  Present CPUs it does not list are
 * offline.  The comparison is made here, so both sources are judged alike;
 * the cached line, read under the same locks as the CPU lines, goes to
 * *cached.
 */
static int read_debugfs(struct cpu_val **out, uint64_t *cached)
{
	FILE *f = fopen(DEBUGFS_FILE, "re");
	struct cpu_val *v = NULL;
	char line[256];
	int n = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long val;
		char word[64];
		int cpu;
		struct cpu_val *nv;

		if (sscanf(line, "cached %llx", &val) == 1) {
			*cached = val;
			continue;
		}
		if (sscanf(line, " cpu%d %63s", &cpu, word) != 2 &&
		    sscanf(line, " %d %63s", &cpu, word) != 2)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*v));
		if (!nv) {
			free(v);
			fclose(f);
			return -ENOMEM;
		}
		v = nv;
		v[n] = (struct cpu_val){ .cpu = cpu };
		if (sscanf(word, "%llx", &val) == 1 && !strncmp(word, "0x", 2)) {
			v[n].online = v[n].valid = true;
			v[n].value = val;
		} else {
			char *rest = strstr(line, word);

			v[n].online = strcmp(word, "offline") != 0;
			rest[strcspn(rest, "\n")] = '\0';
			snprintf(v[n].err, sizeof(v[n].err), "%s", rest);
		}
		n++;
	}
	fclose(f);
	if (n > 0)
		n = add_unlisted_cpus(&v, n);
	*out = v;
	return n;
}

/* Without the series: rdmsr through /dev/cpu/N/msr for every online CPU. */
static int read_msr_dev(struct cpu_val **out)
{
	struct cpu_val *v = NULL;
	char path[64];
	int cpu, i, n = 0, nr, *present = NULL;

	/*
	 * The present CPUs: a possible one that is not present (a VM booted
	 * with room for more CPUs than it has) has no MSR to read, and is no
	 * CPU whose value is unknown.
	 */
	nr = parse_cpulist("/sys/devices/system/cpu/present", &present);
	if (nr <= 0) {
		free(present);
		return nr < 0 ? nr : -ENOENT;
	}
	for (i = 0; i < nr; i++) {
		struct cpu_val *nv = realloc(v, (n + 1) * sizeof(*v));
		uint64_t online = 1;
		int fd;

		cpu = present[i];

		if (!nv) {
			free(v);
			free(present);
			return -ENOMEM;
		}
		v = nv;
		v[n] = (struct cpu_val){ .cpu = cpu, .online = true };
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
		if (!read_u64_file(path, &online) && !online) {
			v[n].online = false;
			snprintf(v[n].err, sizeof(v[n].err), "offline");
			n++;
			continue;
		}
		snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT && !i) {
				free(v);
				free(present);
				return -ENOENT;
			}
			snprintf(v[n].err, sizeof(v[n].err), "%s", strerror(errno));
		} else {
			if (pread(fd, &v[n].value, 8, MSR_IA32_UMWAIT_CONTROL) == 8)
				v[n].valid = true;
			else
				snprintf(v[n].err, sizeof(v[n].err), "rdmsr: %s", strerror(errno));
			close(fd);
		}
		n++;
	}
	free(present);
	*out = v;
	return n;
}

/* the CPUs a MISMATCH verdict names; the rest are counted (it fits in 512 bytes) */
#define VERDICT_CPUS	3

static void describe(char *buf, size_t len, uint64_t v)
{
	snprintf(buf, len, "max_time=%llu c02=%s", (unsigned long long)(v & UMWAIT_TIME_MASK),
		 v & UMWAIT_C02_DISABLE ? "disabled" : "enabled");
}

int cmd_status(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_common_opt, .doc = doc };
	uint64_t max_time, c02, cached, dbg_cached = 0;
	struct cpu_val *cpus = NULL;
	const char *source = DEBUGFS_FILE;
	char verdict[512], desc[64];
	int listed;
	int n, i, try, bad = 0, online = 0, unknown = 0;
	size_t off;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;
	if (need_root())
		return EXIT_TROUBLE;

	/*
	 * sysfs and debugfs are read one after the other: a write in between
	 * would show every CPU as differing.  Retry until debugfs cached what
	 * sysfs said; under a storm of writes, judge debugfs's own snapshot.
	 */
	for (try = 0; try < STATUS_TRIES; try++) {
		if (read_u64_file(SYSFS_DIR "/max_time", &max_time) ||
		    read_u64_file(SYSFS_DIR "/enable_c02", &c02)) {
			die_msg("no %s: this kernel does not manage IA32_UMWAIT_CONTROL "
				"(CPU without WAITPKG, or umwait disabled)", SYSFS_DIR);
			return EXIT_TROUBLE;
		}
		cached = (max_time & UMWAIT_TIME_MASK) | (c02 ? 0 : UMWAIT_C02_DISABLE);
		free(cpus);
		cpus = NULL;
		n = read_debugfs(&cpus, &dbg_cached);
		if (n <= 0 || dbg_cached == cached)
			break;
	}
	if (n > 0 && dbg_cached != cached) {
		cached = dbg_cached;
		max_time = cached & UMWAIT_TIME_MASK;
		c02 = !(cached & UMWAIT_C02_DISABLE);
	}
	if (n <= 0) {
		if (env.verbose)
			warn_msg("%s unreadable, reading /dev/cpu/N/msr", DEBUGFS_FILE);
		source = "/dev/cpu/N/msr";
		n = read_msr_dev(&cpus);
	}
	if (n <= 0) {
		die_msg("cannot read the CPUs' values: no %s (kernel without the umwait series, "
			"or debugfs not mounted) and no /dev/cpu/0/msr: load the msr driver (modprobe msr)",
			DEBUGFS_FILE);
		return EXIT_TROUBLE;
	}

	for (i = 0; i < n; i++) {
		if (!cpus[i].online)
			continue;
		online++;
		if (!cpus[i].valid)
			unknown++;
		else if (cpus[i].value != cached)
			bad++;
	}
	/*
	 * The verdict names the first few CPUs that differ and counts the rest:
	 * whole words however many CPUs there are (with dozens it was cut, and
	 * read UNKNOWN).
	 */
	off = 0;
	for (i = 0, listed = 0; bad && i < n; i++) {
		if (!cpus[i].online || !cpus[i].valid || cpus[i].value == cached)
			continue;
		if (listed == VERDICT_CPUS)
			break;
		off += snprintf(verdict + off, sizeof(verdict) - off, "%s cpu%d holds 0x%llx",
				listed++ ? "," : "MISMATCH:", cpus[i].cpu,
				(unsigned long long)cpus[i].value);
	}
	if (bad > listed)
		off += snprintf(verdict + off, sizeof(verdict) - off, " and %d more CPUs differ",
				bad - listed);
	if (bad)
		snprintf(verdict + off, sizeof(verdict) - off, ", the kernel caches 0x%llx",
			 (unsigned long long)cached);
	else if (unknown)
		snprintf(verdict, sizeof(verdict), "UNKNOWN: %d of %d online CPUs unreadable",
			 unknown, online);
	else if (!bad)
		snprintf(verdict, sizeof(verdict), "OK: all %d online CPUs hold the cached value 0x%llx",
			 online, (unsigned long long)cached);

	if (FORMAT_METRICS(env.format)) {
		struct om_status om = { .cached = cached, .source = source, .cpus = cpus,
					.nr_cpus = n, .mismatched = bad, .unknown = unknown };

		if (om_status(&om)) {
			free(cpus);
			return EXIT_TROUBLE;
		}
	} else if (env.json) {
		printf("{\"cached\": {\"value\": %llu, \"max_time\": %llu, \"enable_c02\": %s}, "
		       "\"source\": ", (unsigned long long)cached, (unsigned long long)max_time,
		       c02 ? "true" : "false");
		json_str(stdout, source);
		printf(", \"cpus\": [");
		for (i = 0; i < n; i++) {
			printf("%s{\"cpu\": %d, \"online\": %s", i ? ", " : "", cpus[i].cpu,
			       cpus[i].online ? "true" : "false");
			if (cpus[i].valid)
				printf(", \"value\": %llu, \"max_time\": %llu, \"c02\": %s, \"match\": %s",
				       (unsigned long long)cpus[i].value,
				       (unsigned long long)(cpus[i].value & UMWAIT_TIME_MASK),
				       cpus[i].value & UMWAIT_C02_DISABLE ? "false" : "true",
				       cpus[i].value == cached ? "true" : "false");
			else {
				printf(", \"error\": ");
				json_str(stdout, cpus[i].err);
			}
			printf("}");
		}
		printf("], \"ok\": %s, \"verdict\": ", !bad && !unknown ? "true" : "false");
		json_str(stdout, verdict);
		printf("}\n");
	} else {
		describe(desc, sizeof(desc), cached);
		printf("cached (sysfs): 0x%llx %s\n", (unsigned long long)cached, desc);
		printf("%-5s %-12s %s\n", "CPU", "VALUE", "DECODED");
		for (i = 0; i < n; i++) {
			if (!cpus[i].valid) {
				printf("%-5d %s\n", cpus[i].cpu, cpus[i].err);
				continue;
			}
			describe(desc, sizeof(desc), cpus[i].value);
			printf("%-5d 0x%-10llx %s%s\n", cpus[i].cpu, (unsigned long long)cpus[i].value,
			       desc, cpus[i].value == cached ? "" : "  <- differs");
		}
		printf("source: %s\n", source);
		printf("verdict: %s\n", verdict);
	}
	free(cpus);
	if (bad)
		return EXIT_FINDING;
	return unknown ? EXIT_TROUBLE : 0;
}
