// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace sites: list the TPAUSE/UMWAIT instructions of ELF files, one
 * line each: FILE OFFSET VADDR INSN SYMBOL.  No BPF, no root: the scanner
 * that caps attaches with, on its own, for checking it against objdump.
 */
#include <argp.h>
#include <stdlib.h>
#include <string.h>

#include "scan.h"
#include "ut.h"

static const char doc[] =
"List the TPAUSE and UMWAIT instructions in ELF files.\n"
"\n"
"USAGE: umwait-trace sites [-p PID] [FILE...]\n"
"\n"
"One line per site: FILE OFFSET VADDR INSN SYMBOL, where OFFSET is the file\n"
"offset (what uprobes take) and VADDR the address objdump -d shows; SYMBOL is\n"
"the symbol (.symtab, else .dynsym) whose extent holds it, as name+0xoff, or\n"
"'-' if none does.  Exits 1 when there is no site, 2 when a file cannot be read.\n"
"\n"
"EXAMPLES:\n"
"    umwait-trace sites /usr/lib/x86_64-linux-gnu/libtbb.so.12\n"
"    umwait-trace sites -p 1234     # every executable mapping of PID 1234\n";

static const struct argp_option opts[] = {
	{ "pid", 'p', "PID", 0, "Scan the executable file mappings of PID", 0 },
	{ "verbose", 'v', NULL, 0,
	  "Also say where the kernel cannot uprobe and which jumps reach a site's next instruction", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
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

int cmd_sites(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc };
	struct scan s = {};
	int i, rc = 0;

	if (parse_cmdline(&argp, argc, argv))
		return EXIT_TROUBLE;

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
		if (env.verbose && !site->next_ok)
			warn_msg("%s 0x%llx: the kernel cannot uprobe the instruction after it",
				 s.files[site->file].path, (unsigned long long)site->offset);
		if (env.verbose && site->nr_branches + site->nr_blind)
			warn_msg("%s 0x%llx: %d direct branch%s elsewhere jump%s to the instruction "
				 "after it (%d that caps cannot probe)", s.files[site->file].path,
				 (unsigned long long)site->offset, site->nr_branches + site->nr_blind,
				 site->nr_branches + site->nr_blind == 1 ? "" : "es",
				 site->nr_branches + site->nr_blind == 1 ? "s" : "",
				 site->nr_blind);
		if (env.verbose && site->next_addr_taken)
			warn_msg("%s 0x%llx: code loads the address of the instruction after it "
				 "(an indirect jump may go there)", s.files[site->file].path,
				 (unsigned long long)site->offset);
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
