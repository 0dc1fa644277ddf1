// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace sites: list the TPAUSE/UMWAIT instructions of ELF files, one
 * line each: FILE OFFSET VADDR INSN SYMBOL.  No BPF, no root: the scanner
 * that caps attaches with, on its own, for checking it against objdump.
 * With -v, under each site, how caps would count it: every probe it would
 * place (file offset, address, and what for) and every other way to the
 * instruction after the wait, with how its arrivals are told apart.
 */
#include <argp.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "ut.h"

static const char doc[] =
"List the TPAUSE and UMWAIT instructions in ELF files.\n"
"\n"
"USAGE: umwait-trace sites [-v] [--exact] [-p PID] [FILE...]\n"
"\n"
"One line per site: FILE OFFSET VADDR INSN SYMBOL, where OFFSET is the file\n"
"offset (what uprobes take) and VADDR the address objdump -d shows; SYMBOL is\n"
"the symbol (.symtab, else .dynsym) whose extent holds it, as name+0xoff, or\n"
"func@0xSTART+0xoff for a function known only from unwind info, or '-'.\n"
"Exits 1 when there is no site, 2 when a file cannot be read.\n"
"\n"
"With -v, under each site:\n"
"  exact yes|capped|no [: why]     how caps counts it\n"
"  probe OFFSET VADDR exit|jump    each probe caps places for it\n"
"  arrival VADDR MNEMONIC HOW [cf0]  each direct branch to the instruction\n"
"                                  after it; HOW: flags, never, probed,\n"
"                                  on-path or blind\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace sites /usr/lib/x86_64-linux-gnu/libtbb.so.12\n"
"    umwait-trace sites -v /usr/lib/x86_64-linux-gnu/librte_eal.so.23\n"
"    umwait-trace sites -p 1234     # every executable mapping of PID 1234\n";

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Scan the executable file mappings of PID", 0 },
	{ "verbose", 'v', NULL, 0,
	  "Under each site, the probes caps places and every other way to the "
	  "instruction after it", 0 },
	{ "exact", OPT_EXACT, NULL, 0, "Show what caps --exact would probe", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case OPT_EXACT:
		env.exact = true;
		break;
	case ARGP_KEY_ARG:
		add_file_arg(state, arg);
		break;
	case ARGP_KEY_END:
		need_target(state);
		break;
	default:
		return parse_common_opt(key, arg, state);
	}
	return 0;
}

/* -v: how caps would count SITE (index I) */
static void explain(const struct scan *s, int i)
{
	const struct site *site = &s->sites[i];
	int a;

	printf("  exact %s%s%s\n", site->exact ? "yes" : site->exact_capped ? "capped" : "no",
	       site->why[0] ? ": " : "", site->why);
	if (site->probed)
		printf("  probe 0x%llx 0x%llx exit\n", (unsigned long long)site->next_offset,
		       (unsigned long long)(site->vaddr + site->len));
	for (a = site->arrival; a < site->arrival + site->nr_arrivals; a++) {
		const struct arrival *ar = &s->arrivals[a];

		printf("  arrival 0x%llx %s %s%s", (unsigned long long)ar->vaddr, ar->mnem,
		       arrival_how_name(ar->how), ar->cf0 ? " cf0" : "");
		if (ar->how == ARRIVAL_ON_PATH && ar->path_site >= 0)
			printf(" (before the %s at 0x%llx)", insn_name(s->sites[ar->path_site].insn),
			       (unsigned long long)s->sites[ar->path_site].vaddr);
		printf("\n");
		if (ar->how == ARRIVAL_PROBED && site->probed)
			printf("  probe 0x%llx 0x%llx jump\n", (unsigned long long)ar->offset,
			       (unsigned long long)ar->vaddr);
	}
}

int cmd_sites(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct scan s = {};
	int i, rc = 0;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;

	s.exact_mode = env.exact;
	if (env.pid) {
		pid_t tgid = scan_tgid(env.pid);

		if (tgid > 0 && tgid != env.pid) {
			fprintf(stderr, "%s: %d is a thread of process %d: its mappings are the "
				"process's\n", UT_NAME, env.pid, tgid);
			env.pid = tgid;
		}
	}
	if (env.pid && scan_pid(&s, env.pid) < 0)
		rc = EXIT_TROUBLE;
	for (i = 0; i < env.nr_files; i++)
		if (scan_file_arg(&s, env.files[i]) < 0)
			rc = EXIT_TROUBLE;

	for (i = 0; i < s.nr_sites; i++) {
		const struct site *site = &s.sites[i];

		printf("%s 0x%llx 0x%llx %s %s\n", s.files[site->file].path,
		       (unsigned long long)site->offset, (unsigned long long)site->vaddr,
		       insn_name(site->insn), site->symbol[0] ? site->symbol : "-");
		if (env.verbose)
			explain(&s, i);
	}
	if (!s.nr_sites && !rc) {
		fprintf(stderr, "%s: no TPAUSE/UMWAIT site in:", UT_NAME);
		for (i = 0; i < s.nr_files; i++)
			fprintf(stderr, " %s", s.files[i].path);
		fputc('\n', stderr);
		rc = EXIT_FINDING;
	}
	scan_free(&s);
	return rc;
}
