// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: find every TPAUSE and UMWAIT in an ELF file.
 *
 * Capstone does not know the WAITPKG instructions (it decodes 66 0F AE F0+r
 * as MFENCE), so Zydis 4 decodes.  Like objdump -d, the executable sections
 * are decoded linearly, restarting at every symbol so that data or padding
 * in one function cannot desynchronise the next.  A binary without section
 * headers is decoded by its executable PT_LOAD segments instead.
 *
 * Offsets are file offsets, which is what uprobes take; vaddr is the
 * address in the file's own layout, which is what objdump prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <Zydis/Zydis.h>

#include "scan.h"
#include "ut.h"

const char *insn_name(enum wait_insn insn)
{
	return insn == INSN_TPAUSE ? "tpause" : "umwait";
}

/*
 * The first opcode bytes the 6.1 kernel agrees to uprobe in a 64-bit task
 * (good_insns_64 in arch/x86/kernel/uprobes.c).  A probe the kernel refuses
 * fails only when a process maps the file, silently for a tracer attached by
 * file, so the tool checks up front.
 */
static const char *const good_insns_64[16] = {
	"1111110011111101", /* 00 */
	"1111110011111100", /* 10 */
	"1111111011111110", /* 20 */
	"1111111011111110", /* 30 */
	"1111111111111111", /* 40 */
	"1111111111111111", /* 50 */
	"0001111111110000", /* 60 */
	"1111111111111111", /* 70 */
	"1101111111111111", /* 80 */
	"1111111111011111", /* 90 */
	"1111111111111111", /* a0 */
	"1111111111111111", /* b0 */
	"1111111111110000", /* c0 */
	"1111000111111111", /* d0 */
	"1111000011010000", /* e0 */
	"1011011111001111", /* f0 */
};

static bool uprobe_can_probe(const ZydisDecodedInstruction *in)
{
	uint8_t op1;
	int i;

	for (i = 0; i < in->raw.prefix_count; i++) {
		switch (in->raw.prefixes[i].value) {
		case 0x26: case 0x2e: case 0x36: case 0x3e: case 0xf0:
			return false;	/* is_prefix_bad(): ES CS SS DS, LOCK */
		}
	}
	/* insn_masking_exception(): mov to SS */
	if (in->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY &&
	    in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && in->opcode == 0x8e &&
	    in->raw.modrm.reg == 2)
		return false;
	if ((in->encoding == ZYDIS_INSTRUCTION_ENCODING_LEGACY ||
	     in->encoding == ZYDIS_INSTRUCTION_ENCODING_3DNOW) &&
	    in->opcode_map != ZYDIS_OPCODE_MAP_DEFAULT)
		op1 = 0x0f;	/* two- and three-byte opcodes: 0x0f is good */
	else
		op1 = in->opcode;
	return good_insns_64[op1 >> 4][op1 & 15] == '1';
}

struct sym {
	uint64_t addr, size;
	const char *name;
	bool dynamic;		/* from .dynsym, not .symtab */
};

struct symtab {
	struct sym *v;
	size_t nr, cap;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* at one address prefer the sized symbol */
	return x->size < y->size ? 1 : x->size > y->size ? -1 : 0;
}

/* Code symbols of .symtab and .dynsym; names point into the ELF image. */
static void load_symbols(Elf *elf, struct symtab *st)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getsym(data, i, &sym))
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || name[0] == '$')
				continue;
			if (st->nr == st->cap) {
				st->cap = st->cap ? st->cap * 2 : 256;
				st->v = realloc(st->v, st->cap * sizeof(*st->v));
				if (!st->v) {
					st->nr = st->cap = 0;
					return;
				}
			}
			st->v[st->nr++] = (struct sym){ sym.st_value, sym.st_size, name,
							sh.sh_type == SHT_DYNSYM };
		}
	}
	if (st->nr)
		qsort(st->v, st->nr, sizeof(*st->v), sym_cmp);
}

/*
 * The symbol whose extent [value, value + size) holds ADDR, from .symtab or,
 * if none there does, from .dynsym: "name+0xoff" (just "name" at +0), or ""
 * when no symbol holds it.  A stripped library's nearest exported symbol
 * below a site is often a different function far away: that name would mislead.
 */
static void symbolize(const struct symtab *st, uint64_t addr, char *buf, size_t len)
{
	const struct sym *best = NULL;
	int pass;
	size_t i;

	buf[0] = '\0';
	for (pass = 0; pass < 2 && !best; pass++) {
		for (i = 0; i < st->nr && st->v[i].addr <= addr; i++) {
			const struct sym *y = &st->v[i];

			if (y->dynamic != pass || addr - y->addr >= y->size)
				continue;
			/* the innermost one; at one address the first (sorted) */
			if (!best || y->addr > best->addr)
				best = y;
		}
	}
	if (!best)
		return;
	if (addr == best->addr)
		snprintf(buf, len, "%s", best->name);
	else
		snprintf(buf, len, "%s+0x%llx", best->name, (unsigned long long)(addr - best->addr));
}

static int add_site(struct scan *s, const struct site *site)
{
	int i;

	/* chunks restart at symbols: an instruction may be seen twice */
	for (i = s->nr_sites - 1; i >= 0 && s->sites[i].file == site->file; i--)
		if (s->sites[i].offset == site->offset)
			return 0;
	if (s->nr_sites == s->cap_sites) {
		int cap = s->cap_sites ? s->cap_sites * 2 : 16;
		struct site *v = realloc(s->sites, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->sites = v;
		s->cap_sites = cap;
	}
	s->sites[s->nr_sites++] = *site;
	s->files[site->file].nr_sites++;
	return 1;
}

/* What a file's code says about control flow, gathered while decoding it */
struct flow {
	struct branch *branches;	/* every direct branch */
	size_t nr_branches, cap_branches;
	uint64_t *refs;		/* addresses code loads (RIP-relative, or an imm32) */
	size_t nr_refs, cap_refs;
};

struct region {
	const uint8_t *bytes;	/* the region's first byte in the file image */
	uint64_t size, vaddr, offset;
	struct flow *flow;
};

static bool grow(void **v, size_t *cap, size_t nr, size_t size)
{
	void *n;

	if (nr < *cap)
		return true;
	n = realloc(*v, (*cap ? *cap * 2 : 1024) * size);
	if (!n)
		return false;
	*v = n;
	*cap = *cap ? *cap * 2 : 1024;
	return true;
}

static enum branch_kind branch_kind(const ZydisDecodedInstruction *in)
{
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_JMP:
		return BRANCH_JMP;
	case ZYDIS_MNEMONIC_CALL:
		return BRANCH_CALL;
	case ZYDIS_MNEMONIC_JRCXZ:
	case ZYDIS_MNEMONIC_JECXZ:
		return BRANCH_JRCXZ;
	case ZYDIS_MNEMONIC_LOOP:
		return BRANCH_LOOP;
	case ZYDIS_MNEMONIC_LOOPE:
		return BRANCH_LOOPE;
	case ZYDIS_MNEMONIC_LOOPNE:
		return BRANCH_LOOPNE;
	default:
		/* Jcc: 70-7F and 0F 80-8F, the condition in the low nibble */
		if (in->meta.category == ZYDIS_CATEGORY_COND_BR &&
		    ((in->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT && (in->opcode & 0xf0) == 0x70) ||
		     (in->opcode_map == ZYDIS_OPCODE_MAP_0F && (in->opcode & 0xf0) == 0x80)))
			return BRANCH_JCC;
		return 0;	/* XBEGIN and the like: cannot tell when it lands there */
	}
}

/*
 * The probe after a site counts every execution of that next instruction.
 * Compilers may let other paths jump there too (libtbb and DPDK do): every
 * direct branch is noted, with what its probe needs to tell whether it is
 * taken, and every address the code loads, which an indirect branch may use.
 */
static void note_flow(struct region *r, const ZydisDecodedInstruction *in, uint64_t pos)
{
	struct flow *f = r->flow;
	uint64_t vaddr = r->vaddr + pos, ref = 0;
	int i;

	if (in->attributes & ZYDIS_ATTRIB_IS_RELATIVE && in->raw.imm[0].is_relative &&
	    in->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE) {
		struct branch b = {
			.offset = r->offset + pos,
			.target = vaddr + in->length + in->raw.imm[0].value.s,
			.kind = branch_kind(in),
			.cc = in->opcode & 0xf,
			.ecx = in->address_width == 32,
		};

		b.ok = b.kind && uprobe_can_probe(in);
		if (grow((void **)&f->branches, &f->cap_branches, f->nr_branches, sizeof(b)))
			f->branches[f->nr_branches++] = b;
		return;
	}
	if (in->attributes & ZYDIS_ATTRIB_HAS_MODRM && in->raw.modrm.mod == 0 &&
	    in->raw.modrm.rm == 5)
		ref = vaddr + in->length + in->raw.disp.value;	/* RIP-relative */
	for (i = 0; i < 2 && !ref; i++)
		if (in->raw.imm[i].size >= 32 && !in->raw.imm[i].is_relative)
			ref = in->raw.imm[i].value.u;
	if (ref && grow((void **)&f->refs, &f->cap_refs, f->nr_refs, sizeof(ref)))
		f->refs[f->nr_refs++] = ref;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int branch_cmp(const void *a, const void *b)
{
	const struct branch *x = a, *y = b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* The branches of F to the instruction after each site of the file (from FIRST on) */
static int link_branches(struct scan *s, int first, struct flow *f)
{
	size_t lo, hi;
	int n;

	qsort(f->branches, f->nr_branches, sizeof(*f->branches), branch_cmp);
	qsort(f->refs, f->nr_refs, sizeof(*f->refs), u64_cmp);
	for (n = first; n < s->nr_sites; n++) {
		struct site *site = &s->sites[n];
		uint64_t next = site->vaddr + site->len;

		site->branch = s->nr_branches;
		site->nr_branches = site->nr_blind = 0;
		/* first branch with target >= next */
		for (lo = 0, hi = f->nr_branches; lo < hi;) {
			size_t mid = (lo + hi) / 2;

			if (f->branches[mid].target < next)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < f->nr_branches && f->branches[lo].target == next; lo++) {
			if (!f->branches[lo].ok) {
				site->nr_blind++;
				continue;
			}
			if (s->nr_branches == s->cap_branches) {
				int cap = s->cap_branches ? s->cap_branches * 2 : 16;
				struct branch *v = realloc(s->branches, cap * sizeof(*v));

				if (!v)
					return -ENOMEM;
				s->branches = v;
				s->cap_branches = cap;
			}
			s->branches[s->nr_branches++] = f->branches[lo];
			site->nr_branches++;
		}
		site->next_addr_taken = bsearch(&next, f->refs, f->nr_refs, sizeof(*f->refs),
						u64_cmp) != NULL;
	}
	return 0;
}

/* Decode [from, to) of R (addresses), instructions may run past TO. */
static int decode_chunk(struct scan *s, int file, struct region *r,
			const struct symtab *st, const ZydisDecoder *dec,
			uint64_t from, uint64_t to)
{
	uint64_t pos = from - r->vaddr, end = to - r->vaddr;
	ZydisDecodedInstruction in, next;
	int found = 0, err;

	while (pos < end) {
		struct site site = { .file = file };

		if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(dec, NULL, r->bytes + pos,
							      r->size - pos, &in))) {
			pos++;
			continue;
		}
		if (in.mnemonic != ZYDIS_MNEMONIC_TPAUSE && in.mnemonic != ZYDIS_MNEMONIC_UMWAIT) {
			note_flow(r, &in, pos);
			pos += in.length;
			continue;
		}
		site.insn = in.mnemonic == ZYDIS_MNEMONIC_TPAUSE ? INSN_TPAUSE : INSN_UMWAIT;
		site.offset = r->offset + pos;
		site.vaddr = r->vaddr + pos;
		site.len = in.length;
		site.next_offset = site.offset + in.length;
		site.site_ok = uprobe_can_probe(&in);
		site.next_ok = pos + in.length < r->size &&
			ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(dec, NULL,
				r->bytes + pos + in.length, r->size - pos - in.length, &next)) &&
			uprobe_can_probe(&next);
		symbolize(st, site.vaddr, site.symbol, sizeof(site.symbol));
		err = add_site(s, &site);
		if (err < 0)
			return err;
		found += err;
		pos += in.length;
	}
	return found;
}

static int decode_region(struct scan *s, int file, struct region *r,
			 const struct symtab *st, const ZydisDecoder *dec)
{
	uint64_t from = r->vaddr, end = r->vaddr + r->size;
	int found = 0, n, err = 0;
	size_t i = 0;

	/* chunk boundaries: the region's start and each symbol inside it */
	while (i < st->nr && st->v[i].addr <= from)
		i++;
	while (from < end) {
		uint64_t to = end;

		while (i < st->nr && st->v[i].addr <= from)
			i++;
		if (i < st->nr && st->v[i].addr < end)
			to = st->v[i].addr;
		n = decode_chunk(s, file, r, st, dec, from, to);
		if (n < 0) {
			err = n;
			break;
		}
		found += n;
		from = to;
	}
	return err ? err : found;
}

static int add_file(struct scan *s, const char *shown, const char *attach, const struct stat *st)
{
	struct scan_file *f;

	if (s->nr_files == s->cap_files) {
		int cap = s->cap_files ? s->cap_files * 2 : 8;
		struct scan_file *v = realloc(s->files, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->files = v;
		s->cap_files = cap;
	}
	f = &s->files[s->nr_files];
	f->path = strdup(shown);
	f->attach = strdup(attach);
	f->nr_sites = 0;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	if (!f->path || !f->attach)
		return -ENOMEM;
	return s->nr_files++;
}

static int read_file(int fd, char **out, size_t *size)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;
	char *buf;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf)
		return -ENOMEM;
	while (done < (size_t)st.st_size) {
		n = read(fd, buf + done, st.st_size - done);
		if (n <= 0) {
			free(buf);
			return n ? -errno : -EIO;
		}
		done += n;
	}
	*out = buf;
	*size = done;
	return 0;
}

int scan_elf(struct scan *s, const char *shown, const char *attach)
{
	struct symtab st = {};
	struct stat fst;
	ZydisDecoder dec;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	const uint8_t *image;
	size_t image_size, nscn = 0, i, buf_size = 0;
	int fd, file, first = s->nr_sites, found = 0, n, err = 0;
	struct flow flow = {};
	char *buf = NULL;

	fd = open(attach, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		die_msg("cannot open %s: %s", shown, strerror(errno));
		return err;
	}
	/*
	 * read(), never mmap(): a uprobe registered on this file (another
	 * tracer's) is installed into every executable-capable mapping of it,
	 * ours included, and would show us int3s instead of the instructions.
	 */
	err = read_file(fd, &buf, &buf_size);
	if (err) {
		die_msg("cannot read %s: %s", shown, strerror(-err));
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_memory(buf, buf_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		die_msg("%s: not an ELF file", shown);
		err = -ENOEXEC;
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		die_msg("%s: not an x86-64 ELF file", shown);
		err = -ENOEXEC;
		goto out;
	}
	image = (const uint8_t *)elf_rawfile(elf, &image_size);
	if (!image) {
		die_msg("%s: cannot read: %s", shown, elf_errmsg(-1));
		err = -EIO;
		goto out;
	}
	if (fstat(fd, &fst)) {
		err = -errno;
		die_msg("cannot read %s: %s", shown, strerror(errno));
		goto out;
	}
	file = add_file(s, shown, attach, &fst);
	if (file < 0) {
		err = file;
		goto out;
	}
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	load_symbols(elf, &st);

	elf_getshdrnum(elf, &nscn);
	for (i = 1; i < nscn; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;
		struct region r;

		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size ||
		    sh.sh_offset > image_size || sh.sh_size > image_size - sh.sh_offset)
			continue;
		r = (struct region){ image + sh.sh_offset, sh.sh_size, sh.sh_addr, sh.sh_offset,
				     &flow };
		n = decode_region(s, file, &r, &st, &dec);
		if (n < 0) {
			err = n;
			goto out;
		}
		found += n;
	}
	if (nscn <= 1) {
		size_t nph = 0;

		elf_getphdrnum(elf, &nph);
		for (i = 0; i < nph; i++) {
			GElf_Phdr ph;
			struct region r;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD ||
			    !(ph.p_flags & PF_X) || ph.p_offset > image_size ||
			    ph.p_filesz > image_size - ph.p_offset)
				continue;
			r = (struct region){ image + ph.p_offset, ph.p_filesz, ph.p_vaddr,
					     ph.p_offset, &flow };
			n = decode_region(s, file, &r, &st, &dec);
			if (n < 0) {
				err = n;
				goto out;
			}
			found += n;
		}
	}
	err = link_branches(s, first, &flow);
out:
	free(flow.branches);
	free(flow.refs);
	free(st.v);
	if (elf)
		elf_end(elf);
	free(buf);
	close(fd);
	return err ? err : found;
}

/*
 * libbpf looks a uprobe's file up when its name has no '/': through the
 * library directories for a "*.so" or "*.so.*" name, through $PATH otherwise
 * (resolve_full_path() of libbpf 1.1).  The same search, so that a name we
 * resolve is the one libbpf would have opened.
 */
static bool search_path(const char *name, char *out, size_t len)
{
	bool lib = strstr(name, ".so.") ||
		   (strlen(name) > 3 && !strcmp(name + strlen(name) - 3, ".so"));
	const char *dirs[3] = { getenv(lib ? "LD_LIBRARY_PATH" : "PATH"),
				lib ? "/usr/lib64:/usr/lib" : "/usr/bin:/usr/sbin",
				lib ? "/lib/x86_64-linux-gnu" : NULL };
	int i, perm = lib ? R_OK : R_OK | X_OK;

	for (i = 0; i < 3; i++) {
		const char *p = dirs[i];

		while (p && *p) {
			size_t n = strcspn(p, ":");

			if (n && snprintf(out, len, "%.*s/%s", (int)n, p, name) < (int)len &&
			    !faccessat(AT_FDCWD, out, perm, AT_EACCESS))
				return true;
			p += n;
			if (*p == ':')
				p++;
		}
	}
	return false;
}

int scan_file_arg(struct scan *s, const char *arg)
{
	char found[PATH_MAX], *abs;
	int n;

	/* a path: the scanner and libbpf both take it relative to the cwd */
	if (strchr(arg, '/'))
		return scan_elf(s, arg, arg);
	/*
	 * A bare name: what is in the current directory, or else what libbpf's
	 * search finds; either way both get the same absolute path.
	 */
	if (access(arg, F_OK)) {
		if (!search_path(arg, found, sizeof(found))) {
			die_msg("cannot find %s: not in the current directory nor in %s", arg,
				strstr(arg, ".so") ?
				"$LD_LIBRARY_PATH, /usr/lib64, /usr/lib, /lib/x86_64-linux-gnu" :
				"$PATH, /usr/bin, /usr/sbin");
			return -ENOENT;
		}
		arg = found;
	}
	abs = realpath(arg, NULL);
	if (!abs) {
		n = -errno;
		die_msg("cannot open %s: %s", arg, strerror(errno));
		return n;
	}
	n = scan_elf(s, abs, abs);
	free(abs);
	return n;
}

int scan_changed(const struct scan *s, int file)
{
	const struct scan_file *f = &s->files[file];
	struct stat st;

	if (stat(f->attach, &st))
		return -errno;
	return st.st_dev != f->dev || st.st_ino != f->ino;
}

int scan_pid(struct scan *s, pid_t pid)
{
	char maps[64], line[PATH_MAX + 256];
	int found = 0, n, j;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f) {
		die_msg("no process with PID %d (%s: %s)", pid, maps, strerror(errno));
		return -ESRCH;
	}
	while (fgets(line, sizeof(line), f)) {
		char perms[8], *path, attach[PATH_MAX + 32];
		size_t len;
		bool seen = false;

		if (sscanf(line, "%*s %7s", perms) != 1 || perms[2] != 'x')
			continue;
		path = strchr(line, '/');
		if (!path)
			continue;	/* [vdso], [vsyscall], anonymous */
		len = strlen(path);
		if (len && path[len - 1] == '\n')
			path[--len] = '\0';
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			continue;
		for (j = 0; j < s->nr_files; j++)
			if (!strcmp(s->files[j].path, path))
				seen = true;
		if (seen)
			continue;
		/* the file as the process sees it, even from another mount namespace */
		snprintf(attach, sizeof(attach), "/proc/%d/root%s", pid, path);
		n = scan_elf(s, path, attach);
		if (n > 0)
			found += n;
	}
	fclose(f);
	return found;
}

void scan_free(struct scan *s)
{
	int i;

	for (i = 0; i < s->nr_files; i++) {
		free(s->files[i].path);
		free(s->files[i].attach);
	}
	free(s->files);
	free(s->sites);
	free(s->branches);
	*s = (struct scan){};
}
