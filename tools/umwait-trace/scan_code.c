// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: the code of a file with a candidate site.
 *
 * 1. Functions: the symbols (.symtab, else .dynsym) and the unwind info
 *    (.eh_frame FDEs, also found through PT_GNU_EH_FRAME without section
 *    headers) bound the functions; a stripped library still has the latter.
 * 2. Decoding: each function linearly from its start, as objdump -d restarts
 *    at symbols.  Code decoded after a decode failure inside a function, or
 *    outside every known function, is not trusted: no probe goes there.
 * 3. Entries: every direct branch target; every address code or data can
 *    reach indirectly (RIP-relative and absolute references, relocations,
 *    jump-table entries, landing pads of the LSDA, function starts); and the
 *    functions whose indirect jump has no table the scanner can read.
 * 4. Flags: what each path leaves in CF PF AF ZF SF OF, as the set of the 64
 *    possible assignments (a bit each), pushed forward from where a block is
 *    entered through the instructions that set or clear them, each direct
 *    predecessor's condition applied, a few blocks deep.
 * 5. For each site, each direct branch to its next instruction: told apart
 *    by the flags, by a probe, or not at all (scan.h); never probed when a
 *    path from it reaches a wait, through the control-flow graph (both ways
 *    of a conditional branch, tail jumps), a bounded walk.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <Zydis/Zydis.h>

#include "scan_int.h"
#include "ut.h"

/* ---- small helpers ---- */

bool scan_grow(void **v, int *cap, int nr, size_t size)
{
	void *n;
	int c;

	if (nr < *cap)
		return true;
	c = *cap ? *cap * 2 : 64;
	n = realloc(*v, (size_t)c * size);
	if (!n)
		return false;
	*v = n;
	*cap = c;
	return true;
}

/* qsort() that takes an empty array (NULL then) */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(v, n, size, cmp);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct u64s {
	uint64_t *v;
	int nr, cap;
};

static int u64s_add(struct u64s *a, uint64_t x)
{
	if (!scan_grow((void **)&a->v, &a->cap, a->nr, sizeof(*a->v)))
		return -ENOMEM;
	a->v[a->nr++] = x;
	return 0;
}

static void u64s_sort(struct u64s *a)
{
	int i, n = 0;

	if (!a->nr)
		return;
	qsort(a->v, a->nr, sizeof(*a->v), u64_cmp);
	for (i = 0; i < a->nr; i++)
		if (!n || a->v[n - 1] != a->v[i])
			a->v[n++] = a->v[i];
	a->nr = n;
}

static bool u64s_has(const struct u64s *a, uint64_t x)
{
	return a->nr && bsearch(&x, a->v, a->nr, sizeof(*a->v), u64_cmp);
}

/* ---- the file's layout ---- */

struct range {
	uint64_t vaddr, size, offset;
};

struct ctx {
	const struct image *im;
	struct scan *s;
	int file;
	struct range *code;	/* executable: sections, or PT_LOAD without them */
	int nr_code, cap_code;
	struct range *data;	/* every file-backed allocated range */
	int nr_data, cap_data;
	struct func *funcs;
	int nr_funcs, cap_funcs;
	struct insn *insns;
	int nr_insns, cap_insns;
	struct u64s entries;	/* addresses reached indirectly */
	struct u64s fstarts;	/* function starts */
	struct btarget *btargets;	/* direct branch targets, sorted */
	int nr_btargets, cap_btargets;
	uint8_t *seen;		/* a wait's paths: instructions reached (wait_paths) */
	int *walk_todo, *walk_marked;
	ZydisDecoder dec;
};

/* The bytes at VADDR, LEN of them, if the file holds them; NULL otherwise */
static const uint8_t *at(const struct ctx *c, uint64_t vaddr, uint64_t len)
{
	int i;

	for (i = 0; i < c->nr_data; i++) {
		const struct range *r = &c->data[i];

		if (vaddr >= r->vaddr && vaddr - r->vaddr < r->size && len <= r->size - (vaddr - r->vaddr) &&
		    r->offset + (vaddr - r->vaddr) + len <= c->im->size)
			return c->im->data + r->offset + (vaddr - r->vaddr);
	}
	return NULL;
}

static bool in_code(const struct ctx *c, uint64_t vaddr)
{
	int i;

	for (i = 0; i < c->nr_code; i++)
		if (vaddr >= c->code[i].vaddr && vaddr - c->code[i].vaddr < c->code[i].size)
			return true;
	return false;
}

static int add_range(struct range **v, int *nr, int *cap, uint64_t vaddr, uint64_t size,
		     uint64_t offset, size_t image_size)
{
	if (!size || offset > image_size || size > image_size - offset)
		return 0;
	if (!scan_grow((void **)v, cap, *nr, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*nr)++] = (struct range){ vaddr, size, offset };
	return 0;
}

/* Executable sections (or segments) and every file-backed range */
static int layout(struct ctx *c)
{
	Elf *elf = c->im->elf;
	size_t nscn = 0, nph = 0, i;
	int err = 0;

	elf_getshdrnum(elf, &nscn);
	for (i = 1; i < nscn && !err; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;

		/* .eh_frame may be SHT_X86_64_UNWIND (lld): every section with file bytes */
		if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    sh.sh_type == SHT_NULL || !(sh.sh_flags & SHF_ALLOC))
			continue;
		err = add_range(&c->data, &c->nr_data, &c->cap_data, sh.sh_addr, sh.sh_size,
				sh.sh_offset, c->im->size);
		if (!err && (sh.sh_flags & SHF_EXECINSTR) && sh.sh_type == SHT_PROGBITS)
			err = add_range(&c->code, &c->nr_code, &c->cap_code, sh.sh_addr,
					sh.sh_size, sh.sh_offset, c->im->size);
	}
	if (nscn > 1)
		return err;
	/* no section headers: the loadable segments, code only where executable */
	elf_getphdrnum(elf, &nph);
	for (i = 0; i < nph && !err; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		err = add_range(&c->data, &c->nr_data, &c->cap_data, ph.p_vaddr, ph.p_filesz,
				ph.p_offset, c->im->size);
		if (!err && (ph.p_flags & PF_X))
			err = add_range(&c->code, &c->nr_code, &c->cap_code, ph.p_vaddr,
					ph.p_filesz, ph.p_offset, c->im->size);
	}
	c->s->files[c->file].no_symbols = true;
	return err;
}

/* ---- functions: symbols and unwind info ---- */

struct func {
	uint64_t start, end;
	const char *name;	/* a symbol's (in the image), or NULL: unwind info only */
	bool dynamic;		/* the name is from .dynsym */
	uint64_t lsda;		/* its LSDA (exception table), 0 if none */
	bool unresolved_ijmp;	/* an indirect jump whose targets are unknown */
};

static int add_func(struct ctx *c, uint64_t start, uint64_t end, const char *name, bool dynamic,
		    uint64_t lsda)
{
	if (!in_code(c, start))
		return 0;
	if (!scan_grow((void **)&c->funcs, &c->cap_funcs, c->nr_funcs, sizeof(*c->funcs)))
		return -ENOMEM;
	c->funcs[c->nr_funcs++] = (struct func){ start, end, name, dynamic, lsda, false };
	return u64s_add(&c->fstarts, start);
}

static int symbols(struct ctx *c)
{
	Elf *elf = c->im->elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;

	while ((scn = elf_nextscn(elf, scn)) && !err) {
		Elf_Data *d;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && !err; i++) {
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getsym(d, i, &sym))
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || name[0] == '$')
				continue;
			/* a size of 0 (a label in assembly): up to the next start */
			err = add_func(c, sym.st_value, sym.st_size ? sym.st_value + sym.st_size : 0,
				       name, sh.sh_type == SHT_DYNSYM, 0);
		}
	}
	return err;
}

/* DWARF pointer encodings (.eh_frame, LSDA) */
enum {
	PE_OMIT = 0xff,
	PE_ULEB = 0x01, PE_U2 = 0x02, PE_U4 = 0x03, PE_U8 = 0x04,
	PE_SLEB = 0x09, PE_S2 = 0x0a, PE_S4 = 0x0b, PE_S8 = 0x0c,
	PE_PCREL = 0x10, PE_DATAREL = 0x30,
};

struct cursor {
	const uint8_t *p, *end;
	uint64_t vaddr;		/* of *p */
	bool bad;
};

static uint64_t get_n(struct cursor *k, int n)
{
	uint64_t v = 0;
	int i;

	if (k->bad || !k->p || k->end - k->p < n) {
		k->bad = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)k->p[i] << (8 * i);
	k->p += n;
	k->vaddr += n;
	return v;
}

static uint64_t get_uleb(struct cursor *k)
{
	uint64_t v = 0;
	int shift = 0;

	while (!k->bad) {
		uint8_t b = (uint8_t)get_n(k, 1);

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t get_sleb(struct cursor *k)
{
	int64_t v = 0;
	int shift = 0;
	uint8_t b = 0;

	do {
		b = (uint8_t)get_n(k, 1);
		if (shift < 64)
			v |= (int64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (!k->bad && (b & 0x80));
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

/* A pointer of encoding ENC; DATAREL is relative to DATA (the .eh_frame_hdr) */
static uint64_t get_ptr(struct cursor *k, uint8_t enc, uint64_t data)
{
	uint64_t here = k->vaddr, v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = get_n(k, 8); break;
	case PE_ULEB: v = get_uleb(k); break;
	case PE_U2: v = get_n(k, 2); break;
	case PE_U4: v = get_n(k, 4); break;
	case PE_U8: v = get_n(k, 8); break;
	case PE_SLEB: v = (uint64_t)get_sleb(k); break;
	case PE_S2: v = (uint64_t)(int64_t)(int16_t)get_n(k, 2); break;
	case PE_S4: v = (uint64_t)(int64_t)(int32_t)get_n(k, 4); break;
	case PE_S8: v = get_n(k, 8); break;
	default: k->bad = true; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case PE_PCREL: v += here; break;
	case PE_DATAREL: v += data; break;
	default: k->bad = true; return 0;	/* textrel, funcrel, aligned: not on x86-64 */
	}
	/* 0x80 (indirect) is not used for the pointers read here */
	return v;
}

struct cie {
	uint8_t fde_enc, lsda_enc;
	bool z, ok;
};

static struct cie parse_cie(const struct ctx *c, uint64_t vaddr)
{
	struct cie cie = { .fde_enc = 0, .lsda_enc = PE_OMIT };
	struct cursor k = { .vaddr = vaddr };
	const uint8_t *p = at(c, vaddr, 4);
	char augbuf[16], *aug = augbuf;
	uint64_t len;
	uint8_t version;
	size_t n = 0;

	if (!p)
		return cie;
	len = p[0] | p[1] << 8 | p[2] << 16 | (uint64_t)p[3] << 24;
	if (len < 8 || len == 0xffffffff || !(p = at(c, vaddr, 4 + len)))
		return cie;
	k.p = p + 8;	/* length, CIE id */
	k.end = p + 4 + len;
	k.vaddr = vaddr + 8;
	version = (uint8_t)get_n(&k, 1);
	/* the augmentation string, which must end inside the record */
	while (!k.bad && n < sizeof(augbuf) && (augbuf[n] = (char)get_n(&k, 1)))
		n++;
	if (k.bad || n == sizeof(augbuf))
		return cie;
	get_uleb(&k);	/* code alignment */
	get_sleb(&k);	/* data alignment */
	if (version == 1)
		get_n(&k, 1);
	else
		get_uleb(&k);	/* return address register */
	if (aug[0] == 'z') {
		cie.z = true;
		get_uleb(&k);
		for (aug++; *aug && !k.bad; aug++) {
			uint8_t enc;

			switch (*aug) {
			case 'R':
				cie.fde_enc = (uint8_t)get_n(&k, 1);
				break;
			case 'L':
				cie.lsda_enc = (uint8_t)get_n(&k, 1);
				break;
			case 'P':
				enc = (uint8_t)get_n(&k, 1);
				get_ptr(&k, enc & 0x7f, 0);
				break;
			case 'S':
			case 'B':
				break;
			default:
				k.bad = true;
			}
		}
	}
	cie.ok = !k.bad;
	return cie;
}

/* Every FDE of the .eh_frame at [VADDR, VADDR + SIZE): a function each */
static int eh_frame(struct ctx *c, uint64_t vaddr, uint64_t size)
{
	uint64_t pos = vaddr, end = vaddr + size;
	uint64_t last_cie = UINT64_MAX;
	struct cie cie = {};
	int err = 0;

	while (pos + 4 <= end && !err) {
		const uint8_t *p = at(c, pos, 8);
		struct cursor k;
		uint64_t len, id, start, range, lsda = 0;

		if (!p)
			break;
		len = p[0] | p[1] << 8 | p[2] << 16 | (uint64_t)p[3] << 24;
		/* the terminator, 64-bit DWARF (not in .eh_frame), or past the data */
		if (len < 4 || len == 0xffffffff || !(p = at(c, pos, 4 + len)))
			break;
		id = p[4] | p[5] << 8 | p[6] << 16 | (uint64_t)p[7] << 24;
		if (id) {
			uint64_t cie_at = pos + 4 - id;

			if (cie_at != last_cie) {
				cie = parse_cie(c, cie_at);
				last_cie = cie_at;
			}
			k = (struct cursor){ p + 8, p + 4 + len, pos + 8, false };
			start = get_ptr(&k, cie.fde_enc, 0);
			range = get_ptr(&k, cie.fde_enc & 0x0f, 0);
			if (cie.ok && cie.z) {
				get_uleb(&k);
				if (cie.lsda_enc != PE_OMIT)
					lsda = get_ptr(&k, cie.lsda_enc, 0);
			}
			if (cie.ok && !k.bad && range)
				err = add_func(c, start, start + range, NULL, false, lsda);
		}
		pos += 4 + len;
	}
	return err;
}

/* .eh_frame by section, or through PT_GNU_EH_FRAME's .eh_frame_hdr */
static int unwind_info(struct ctx *c)
{
	Elf *elf = c->im->elf;
	size_t shstrndx, nph = 0, i;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			const char *name;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (name && !strcmp(name, ".eh_frame"))
				return eh_frame(c, sh.sh_addr, sh.sh_size);
		}
	}
	elf_getphdrnum(elf, &nph);
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;
		struct cursor k;
		const uint8_t *p;
		uint64_t frame;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_GNU_EH_FRAME || ph.p_filesz < 4 ||
		    !(p = at(c, ph.p_vaddr, ph.p_filesz)) || p[0] != 1)
			continue;
		k = (struct cursor){ p + 4, p + ph.p_filesz, ph.p_vaddr + 4, false };
		frame = get_ptr(&k, p[1], ph.p_vaddr);
		if (k.bad)
			return 0;
		/* the .eh_frame runs to its terminator: bound it by its range */
		for (int j = 0; j < c->nr_data; j++)
			if (frame >= c->data[j].vaddr && frame - c->data[j].vaddr < c->data[j].size)
				return eh_frame(c, frame, c->data[j].size - (frame - c->data[j].vaddr));
	}
	return 0;
}

/* the name a start keeps: a .symtab symbol's, else a .dynsym one's, else none */
static int name_rank(const struct func *f)
{
	return !f->name ? 0 : f->dynamic ? 1 : 2;
}

static int func_cmp(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return name_rank(y) - name_rank(x);
}

/*
 * One function per start: the best name, the largest known end (a label's
 * ends at the next start), the LSDA of the unwind entry.
 */
static void merge_funcs(struct ctx *c)
{
	int i, n = 0;

	sort(c->funcs, c->nr_funcs, sizeof(*c->funcs), func_cmp);
	for (i = 0; i < c->nr_funcs; i++) {
		struct func f = c->funcs[i];

		if (n && c->funcs[n - 1].start == f.start) {
			struct func *g = &c->funcs[n - 1];

			if (f.end > g->end)
				g->end = f.end;
			if (f.lsda)
				g->lsda = f.lsda;
			continue;
		}
		c->funcs[n++] = f;
	}
	c->nr_funcs = n;
	for (i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? c->funcs[i + 1].start : UINT64_MAX;
		int r;

		if (c->funcs[i].end)
			continue;
		/* a label: to the next start, or the end of its code range */
		c->funcs[i].end = next;
		for (r = 0; r < c->nr_code; r++) {
			const struct range *cr = &c->code[r];

			if (c->funcs[i].start >= cr->vaddr && c->funcs[i].start - cr->vaddr < cr->size &&
			    cr->vaddr + cr->size < c->funcs[i].end)
				c->funcs[i].end = cr->vaddr + cr->size;
		}
	}
	u64s_sort(&c->fstarts);
}

/* The innermost function holding VADDR: the one with the latest start */
static int func_of(const struct ctx *c, uint64_t vaddr)
{
	int lo = 0, hi = c->nr_funcs, i;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (c->funcs[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo - 1; i >= 0 && lo - i < 64; i--)
		if (vaddr < c->funcs[i].end)
			return i;
	return -1;
}

/* ---- decoding ---- */

enum {
	IN_TRUSTED = 1 << 0,	/* inside a known function, no failure before it */
	IN_NOFALL = 1 << 1,	/* never falls through: JMP, RET, UD2, HLT, INT3 */
	IN_CALL = 1 << 2,
	IN_IJMP = 1 << 3,	/* an indirect JMP */
	IN_PROBE = 1 << 4,	/* the kernel can uprobe it */
	IN_ECX = 1 << 5,	/* JECXZ/LOOPcc on ECX */
	IN_WAIT = 1 << 6,	/* TPAUSE or UMWAIT */
	IN_COND = 1 << 7,	/* a conditional branch (also falls through) */
};

struct insn {
	uint64_t vaddr;
	uint64_t target;	/* a direct branch's */
	uint64_t ref;		/* an address it loads (RIP-relative, or an immediate), or 0 */
	uint16_t fl_proj;	/* status flags it makes unknown */
	uint16_t fl_set0, fl_set1;
	uint8_t len;
	uint8_t kind;		/* enum branch_kind, 0 if none */
	uint8_t cc;
	uint8_t wait;		/* enum wait_insn */
	uint16_t in;		/* IN_* */
	char mnem[12];
	/* an indirect JMP: [base + index * scale + disp] */
	uint8_t ij_scale;
	bool ij_rip, ij_base, ij_index;
	int64_t ij_disp;
};

#define STATUS_FLAGS	0x8d5	/* OF SF ZF AF PF CF */

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

static void describe(struct ctx *c, const ZydisDecodedInstruction *in, uint64_t vaddr,
		     struct insn *x)
{
	const ZydisAccessedFlags *fl = in->cpu_flags;
	int i;

	*x = (struct insn){ .vaddr = vaddr, .len = in->length };
	snprintf(x->mnem, sizeof(x->mnem), "%s", ZydisMnemonicGetString(in->mnemonic));
	if (uprobe_can_probe(in))
		x->in |= IN_PROBE;
	if (fl) {
		x->fl_proj = (fl->modified | fl->undefined) & STATUS_FLAGS;
		x->fl_set0 = fl->set_0 & STATUS_FLAGS;
		x->fl_set1 = fl->set_1 & STATUS_FLAGS;
	}
	switch (in->mnemonic) {
	case ZYDIS_MNEMONIC_TPAUSE:
	case ZYDIS_MNEMONIC_UMWAIT:
		x->in |= IN_WAIT;
		x->wait = in->mnemonic == ZYDIS_MNEMONIC_TPAUSE ? INSN_TPAUSE : INSN_UMWAIT;
		break;
	case ZYDIS_MNEMONIC_RET:
	case ZYDIS_MNEMONIC_UD0:
	case ZYDIS_MNEMONIC_UD1:
	case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
	case ZYDIS_MNEMONIC_INT3:
		x->in |= IN_NOFALL;
		break;
	default:
		break;
	}
	if (in->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE && (in->attributes & ZYDIS_ATTRIB_IS_RELATIVE) &&
	    in->raw.imm[0].is_relative) {
		x->kind = branch_kind(in);
		x->target = vaddr + in->length + in->raw.imm[0].value.s;
		x->cc = in->opcode & 0xf;
		if (in->address_width == 32)
			x->in |= IN_ECX;
		if (x->kind == BRANCH_JMP)
			x->in |= IN_NOFALL;
		else if (x->kind == BRANCH_CALL)
			x->in |= IN_CALL;
		else
			x->in |= IN_COND;
		return;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_CALL) {
		x->in |= IN_CALL;
		return;
	}
	if (in->mnemonic == ZYDIS_MNEMONIC_JMP) {
		x->in |= IN_NOFALL | IN_IJMP;
		if (in->attributes & ZYDIS_ATTRIB_HAS_MODRM && in->raw.modrm.mod != 3) {
			x->ij_rip = in->raw.modrm.mod == 0 && in->raw.modrm.rm == 5;
			x->ij_disp = in->raw.disp.value;
			if (in->attributes & ZYDIS_ATTRIB_HAS_SIB) {
				x->ij_index = in->raw.sib.index != 4 || in->raw.rex.X;
				x->ij_scale = 1 << in->raw.sib.scale;
				x->ij_base = !(in->raw.modrm.mod == 0 && in->raw.sib.base == 5);
			} else {
				x->ij_base = !x->ij_rip;
			}
		} else {
			x->ij_base = true;	/* jmp *%reg */
		}
		if (x->ij_rip)
			x->ref = vaddr + in->length + in->raw.disp.value;
		return;
	}
	if (in->attributes & ZYDIS_ATTRIB_HAS_MODRM && in->raw.modrm.mod == 0 &&
	    in->raw.modrm.rm == 5)
		x->ref = vaddr + in->length + in->raw.disp.value;	/* RIP-relative */
	for (i = 0; i < 2 && !x->ref; i++)
		if (in->raw.imm[i].size >= 32 && !in->raw.imm[i].is_relative)
			x->ref = in->raw.imm[i].value.u;
	(void)c;
}

static int add_insn(struct ctx *c, const struct insn *x)
{
	if (!scan_grow((void **)&c->insns, &c->cap_insns, c->nr_insns, sizeof(*c->insns)))
		return -ENOMEM;
	c->insns[c->nr_insns++] = *x;
	return 0;
}

/* Decode [from, to) of code range R linearly; TRUSTED until a failure */
static int decode(struct ctx *c, const struct range *r, uint64_t from, uint64_t to, bool trusted)
{
	const uint8_t *base = c->im->data + r->offset;
	uint64_t pos = from - r->vaddr, end = to - r->vaddr;
	ZydisDecodedInstruction in;
	struct insn x;
	int err;

	while (pos < end) {
		if (ZYAN_FAILED(ZydisDecoderDecodeInstruction(&c->dec, NULL, base + pos,
							      r->size - pos, &in))) {
			/* like objdump: one byte on; nothing after this is trusted */
			trusted = false;
			pos++;
			continue;
		}
		describe(c, &in, r->vaddr + pos, &x);
		if (trusted)
			x.in |= IN_TRUSTED;
		err = add_insn(c, &x);
		if (err)
			return err;
		pos += in.length;
	}
	return 0;
}

/*
 * Each code range in chunks that start at every function start and end: a
 * chunk inside a known function is trusted (until a decode failure), one
 * outside every function is not.  As objdump -d restarts at each symbol, a
 * function's decoding never depends on the bytes before it.
 */
static int decode_all(struct ctx *c)
{
	struct u64s cuts = {};
	int r, i, err = 0;

	ZydisDecoderInit(&c->dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	for (r = 0; r < c->nr_code && !err; r++) {
		const struct range *cr = &c->code[r];
		uint64_t end = cr->vaddr + cr->size;

		cuts.nr = 0;
		err = u64s_add(&cuts, cr->vaddr) ?: u64s_add(&cuts, end);
		for (i = 0; i < c->nr_funcs && !err; i++) {
			if (c->funcs[i].start > cr->vaddr && c->funcs[i].start < end)
				err = u64s_add(&cuts, c->funcs[i].start);
			if (!err && c->funcs[i].end > cr->vaddr && c->funcs[i].end < end)
				err = u64s_add(&cuts, c->funcs[i].end);
		}
		u64s_sort(&cuts);
		for (i = 0; i + 1 < cuts.nr && !err; i++)
			err = decode(c, cr, cuts.v[i], cuts.v[i + 1], func_of(c, cuts.v[i]) >= 0);
	}
	free(cuts.v);
	return err;
}

/* The instruction at VADDR, or -1 (none starts there) */
static int insn_at(const struct ctx *c, uint64_t vaddr)
{
	int lo = 0, hi = c->nr_insns;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (c->insns[mid].vaddr < vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->nr_insns && c->insns[lo].vaddr == vaddr ? lo : -1;
}

static int insn_cmp(const void *a, const void *b)
{
	const struct insn *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* ---- entries ---- */

struct btarget {
	uint64_t target;
	int insn;
};

static int btarget_cmp(const void *a, const void *b)
{
	const struct btarget *x = a, *y = b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x->insn - y->insn;
}

/* The first direct branch to TARGET in c->btargets, or c->nr_btargets */
static int btarget_first(const struct ctx *c, uint64_t target)
{
	int lo = 0, hi = c->nr_btargets;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (c->btargets[mid].target < target)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_btarget(const struct ctx *c, uint64_t vaddr)
{
	int i = btarget_first(c, vaddr);

	return i < c->nr_btargets && c->btargets[i].target == vaddr;
}

/* Where a jump table of the indirect JMP X (in function F) can lead */
static int jump_table(struct ctx *c, int f, const struct insn *x)
{
	const struct func *fn = &c->funcs[f];
	bool found = false;
	int i, n, err;

	if (x->ij_rip && !x->ij_index)
		return 0;	/* through a pointer in memory (the GOT): a tail call */
	if (!x->ij_base && x->ij_index && x->ij_scale == 8) {
		/* an absolute table (non-PIC): jmp *table(,%reg,8) */
		for (n = 0; n < 4096; n++) {
			const uint8_t *p = at(c, (uint64_t)x->ij_disp + 8 * n, 8);
			uint64_t t;

			if (!p)
				break;
			memcpy(&t, p, 8);
			if (!in_code(c, t))
				break;
			err = u64s_add(&c->entries, t);
			if (err)
				return err;
			found = true;
		}
		if (!found)
			c->funcs[f].unresolved_ijmp = true;
		return 0;
	}
	/*
	 * A relative table (PIC): lea table(%rip), %rB; movslq (%rB,%rI,4), %rI;
	 * add %rB, %rI; jmp *%rI.  Every table the function's code refers to
	 * outside the code: entries of 4 bytes, each the table's address plus
	 * it an address in the code (a table of other entries is read too: more
	 * entries, never fewer).
	 */
	for (i = insn_at(c, fn->start); i >= 0 && i < c->nr_insns && c->insns[i].vaddr < fn->end; i++) {
		uint64_t t = c->insns[i].ref;

		if (!t || in_code(c, t) || (c->insns[i].in & IN_IJMP))
			continue;
		for (n = 0; n < 4096; n++) {
			const uint8_t *p = at(c, t + 4 * n, 4);
			int32_t e;

			if (!p)
				break;
			memcpy(&e, p, 4);
			if (!in_code(c, t + e))
				break;
			err = u64s_add(&c->entries, t + e);
			if (err)
				return err;
			found = true;
		}
	}
	if (!found)
		c->funcs[f].unresolved_ijmp = true;
	return 0;
}

/* The landing pads of the function's LSDA (its .gcc_except_table entry) */
static int landing_pads(struct ctx *c, const struct func *fn)
{
	const uint8_t *p = at(c, fn->lsda, 1);
	struct cursor k;
	uint64_t lpstart = fn->start, len;
	const uint8_t *end;
	uint8_t enc, cs_enc;
	int err;

	if (!p)
		return 0;
	/* the table runs to the end of its range: found there */
	for (int j = 0; j < c->nr_data; j++) {
		const struct range *r = &c->data[j];

		if (fn->lsda >= r->vaddr && fn->lsda - r->vaddr < r->size)
			end = p + (r->size - (fn->lsda - r->vaddr));
		else
			continue;
		k = (struct cursor){ p, end, fn->lsda, false };
		enc = (uint8_t)get_n(&k, 1);
		if (enc != PE_OMIT)
			lpstart = get_ptr(&k, enc, 0);
		enc = (uint8_t)get_n(&k, 1);
		if (enc != PE_OMIT)
			get_uleb(&k);	/* the type table's offset */
		cs_enc = (uint8_t)get_n(&k, 1);
		len = get_uleb(&k);
		if (k.bad || len > (uint64_t)(k.end - k.p))
			return 0;
		k.end = k.p + len;
		while (k.p < k.end && !k.bad) {
			uint64_t lp;

			get_ptr(&k, cs_enc, 0);	/* call site start */
			get_ptr(&k, cs_enc, 0);	/* ... length */
			lp = get_ptr(&k, cs_enc, 0);
			get_uleb(&k);		/* action */
			if (!k.bad && lp) {
				err = u64s_add(&c->entries, lpstart + lp);
				if (err)
					return err;
			}
		}
		return 0;
	}
	return 0;
}

/* Addresses in relocations: R_X86_64_RELATIVE/IRELATIVE addends, symbol + addend */
static int relocations(struct ctx *c)
{
	Elf *elf = c->im->elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0;

	while ((scn = elf_nextscn(elf, scn)) && !err) {
		Elf_Data *d, *symd = NULL;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		if (sh.sh_link) {
			Elf_Scn *ss = elf_getscn(elf, sh.sh_link);

			symd = ss ? elf_getdata(ss, NULL) : NULL;
		}
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n && !err; i++) {
			GElf_Rela rel;
			GElf_Sym sym;
			uint64_t v;

			if (!gelf_getrela(d, i, &rel))
				continue;
			switch (GELF_R_TYPE(rel.r_info)) {
			case R_X86_64_RELATIVE:
			case R_X86_64_IRELATIVE:
				v = rel.r_addend;
				break;
			case R_X86_64_64:
				if (!symd || !gelf_getsym(symd, GELF_R_SYM(rel.r_info), &sym) ||
				    sym.st_shndx == SHN_UNDEF)
					continue;
				v = sym.st_value + rel.r_addend;
				break;
			default:
				continue;
			}
			if (in_code(c, v))
				err = u64s_add(&c->entries, v);
		}
	}
	return err;
}

/* A fixed-address executable: code addresses stored as data words */
static int data_words(struct ctx *c)
{
	int i, err;

	if (c->im->eh.e_type != ET_EXEC)
		return 0;
	for (i = 0; i < c->nr_data; i++) {
		const struct range *r = &c->data[i];
		uint64_t o;
		int j;
		bool code = false;

		for (j = 0; j < c->nr_code; j++)
			if (c->code[j].vaddr == r->vaddr)
				code = true;
		if (code)
			continue;
		for (o = (8 - r->vaddr % 8) % 8; o + 8 <= r->size; o += 8) {
			uint64_t v;

			memcpy(&v, c->im->data + r->offset + o, 8);
			if (in_code(c, v)) {
				err = u64s_add(&c->entries, v);
				if (err)
					return err;
			}
		}
	}
	return 0;
}

static int entries(struct ctx *c)
{
	int i, err = 0;

	sort(c->insns, c->nr_insns, sizeof(*c->insns), insn_cmp);
	for (i = 0; i < c->nr_insns && !err; i++) {
		const struct insn *x = &c->insns[i];

		if (x->kind) {
			if (!scan_grow((void **)&c->btargets, &c->cap_btargets, c->nr_btargets,
				       sizeof(*c->btargets)))
				return -ENOMEM;
			c->btargets[c->nr_btargets++] = (struct btarget){ x->target, i };
		}
		/* an address code loads: an indirect branch may use it */
		if (x->ref && in_code(c, x->ref) && !(x->in & IN_IJMP))
			err = u64s_add(&c->entries, x->ref);
		if (!err && (x->in & IN_IJMP)) {
			int f = func_of(c, x->vaddr);

			if (f >= 0)
				err = jump_table(c, f, x);
		}
	}
	sort(c->btargets, c->nr_btargets, sizeof(*c->btargets), btarget_cmp);
	for (i = 0; i < c->nr_funcs && !err; i++)
		if (c->funcs[i].lsda)
			err = landing_pads(c, &c->funcs[i]);
	if (!err)
		err = relocations(c);
	if (!err)
		err = data_words(c);
	u64s_sort(&c->entries);
	return err;
}

/* Reached other than from the instruction before it or a direct branch */
static bool indirect_entry(const struct ctx *c, uint64_t vaddr)
{
	return u64s_has(&c->entries, vaddr) || u64s_has(&c->fstarts, vaddr);
}

/* ---- flags ---- */

/*
 * A set of flag states: bit A stands for the assignment whose bits are, from
 * 0: CF PF AF ZF SF OF.  ALL: nothing known.
 */
#define ALL	(~0ULL)

static const uint64_t half[6] = {	/* the assignments with that flag 0 */
	0x5555555555555555ULL, 0x3333333333333333ULL, 0x0f0f0f0f0f0f0f0fULL,
	0x00ff00ff00ff00ffULL, 0x0000ffff0000ffffULL, 0x00000000ffffffffULL,
};
static const uint16_t flag_bit[6] = { 0x1, 0x4, 0x10, 0x40, 0x80, 0x800 };

static uint64_t project(uint64_t m, int j)
{
	uint64_t both = (m & half[j]) | ((m >> (1 << j)) & half[j]);

	return both | (both << (1 << j));
}

static uint64_t transfer(uint64_t m, const struct insn *x)
{
	int j;

	if (x->in & IN_CALL)
		return ALL;	/* the callee's flags */
	for (j = 0; j < 6; j++) {
		if ((x->fl_proj | x->fl_set0 | x->fl_set1) & flag_bit[j])
			m = project(m, j);
		if (x->fl_set0 & flag_bit[j])
			m &= half[j];
		if (x->fl_set1 & flag_bit[j])
			m &= ~half[j];
	}
	return m;
}

/* The assignments under which Jcc with condition CC jumps */
static uint64_t cond_mask(int cc)
{
	uint64_t m = 0;
	int a;

	for (a = 0; a < 64; a++) {
		bool cf = a & 1, pf = a & 2, zf = a & 8, sf = a & 16, of = a & 32, r;

		switch (cc >> 1) {
		case 0: r = of; break;
		case 1: r = cf; break;
		case 2: r = zf; break;
		case 3: r = cf || zf; break;
		case 4: r = sf; break;
		case 5: r = pf; break;
		case 6: r = sf != of; break;
		default: r = zf || sf != of; break;
		}
		if (cc & 1 ? !r : r)
			m |= 1ULL << a;
	}
	return m;
}

/* How a taken branch X constrains the flags on its path */
static uint64_t taken_mask(const struct insn *x)
{
	switch (x->kind) {
	case BRANCH_JCC:
		return cond_mask(x->cc);
	case BRANCH_LOOPE:
		return ~half[3];	/* ZF=1 */
	case BRANCH_LOOPNE:
		return half[3];
	default:
		return ALL;
	}
}

static uint64_t flags_before(const struct ctx *c, int i, int depth);
static bool block_start(const struct ctx *c, int j);

/* The flags on entry to the block that starts at instruction I */
static uint64_t flags_at_entry(const struct ctx *c, int i, int depth)
{
	const struct insn *x = &c->insns[i];
	uint64_t m = 0;
	int b;

	if (depth <= 0 || !(x->in & IN_TRUSTED) || indirect_entry(c, x->vaddr))
		return ALL;
	/* the instruction before it, if it falls through to it */
	if (i > 0 && c->insns[i - 1].vaddr + c->insns[i - 1].len == x->vaddr &&
	    !(c->insns[i - 1].in & IN_NOFALL)) {
		const struct insn *p = &c->insns[i - 1];
		uint64_t pm = transfer(flags_before(c, i - 1, depth - 1), p);

		if (p->in & IN_COND)
			pm &= ~taken_mask(p);
		m |= pm;
	}
	for (b = btarget_first(c, x->vaddr); b < c->nr_btargets && c->btargets[b].target == x->vaddr;
	     b++) {
		const struct insn *p = &c->insns[c->btargets[b].insn];

		/* a CALL leaves the flags as they were, a JMP or Jcc too */
		m |= flags_before(c, c->btargets[b].insn, depth - 1) & taken_mask(p);
		if (m == ALL)
			break;
	}
	/* no way in that the scanner knows: assume anything */
	return m ? m : ALL;
}

static bool sets_all(const struct insn *x)
{
	return (x->in & IN_CALL) ||
	       ((x->fl_proj | x->fl_set0 | x->fl_set1) & STATUS_FLAGS) == STATUS_FLAGS;
}

/* Whether instruction J starts a block: other paths than the one before it lead there */
static bool block_start(const struct ctx *c, int j)
{
	const struct insn *p, *x = &c->insns[j];

	if (!j)
		return true;
	p = &c->insns[j - 1];
	return p->vaddr + p->len != x->vaddr || (p->in & IN_NOFALL) ||
	       is_btarget(c, x->vaddr) || indirect_entry(c, x->vaddr);
}

/* The flags just before instruction I executes, along every path the scanner knows */
static uint64_t flags_before(const struct ctx *c, int i, int depth)
{
	bool full = false;
	uint64_t m;
	int j = i, k;

	/* back to the start of I's block, or to an instruction that sets every flag */
	for (;;) {
		if (j < i && sets_all(&c->insns[j])) {
			full = true;
			break;
		}
		if (!j || block_start(c, j))
			break;
		j--;
	}
	m = full ? ALL : flags_at_entry(c, j, depth);
	for (k = j; k < i; k++) {
		m = transfer(m, &c->insns[k]);
		if (c->insns[k].in & IN_COND)
			m &= ~taken_mask(&c->insns[k]);
	}
	return m;
}

/* ---- a wait's paths ---- */

/* Is instruction I the counting probe's place of a site caps probes? */
static bool is_exit_probe(const struct ctx *c, int first, int i)
{
	int k;

	for (k = first; k < c->s->nr_sites; k++)
		if (c->s->sites[k].probed && c->s->sites[k].vaddr + c->s->sites[k].len == c->insns[i].vaddr)
			return true;
	return false;
}

/*
 * A probe on a branch runs every time the branch does: on the way from a
 * wait's deadline (or its UMONITOR) to the wait, it delays the wait.  So a
 * branch is probed only when no path from it reaches a TPAUSE or UMWAIT.
 * The walk starts at the branch's fall-through (its jump goes to the
 * instruction after a site, where caps counts anyway) and follows both ways
 * of every conditional branch, direct jumps (into another function too: a
 * tail jump), fall-through to the end of the function and past calls, and
 * an indirect jump to every address of its function that code or data
 * refers to.  It stops at a site's counting probe (a wait beyond one is
 * delayed by that probe, whatever the branch carries), at a wait, at RET.
 * It does not go into a callee, nor out of the functions the file knows (a
 * PLT stub: another file's code).  Where it cannot follow a path (more
 * than PATH_MAX_INSNS instructions, code decoded after a decode failure, an
 * indirect jump whose targets are unknown, a jump into an instruction),
 * the branch is taken to be on a wait's path: not probed, and the site
 * says why.
 */
#define PATH_MAX_INSNS	4096
#define PATH_STR(n)	#n
#define PATH_BOUND(n)	"more than " PATH_STR(n) " instructions"

struct walk {
	int *todo;		/* instructions a way starts at, not yet walked */
	int nr_todo;
	int *marked;		/* every instruction queued or walked (c->seen) */
	int nr_marked;
	int wait;		/* the first wait reached, or -1 */
	const char *undecided;	/* why a path could not be followed, or NULL */
	bool over;		/* at its bound: the walk stops */
	int first;		/* the file's first site */
};

/* Mark instruction T as reached; false if it was, or the walk is over its bound */
static bool mark(struct ctx *c, struct walk *w, int t)
{
	if (c->seen[t])
		return false;
	if (w->nr_marked == PATH_MAX_INSNS) {
		w->undecided = PATH_BOUND(PATH_MAX_INSNS);
		w->over = true;
		return false;
	}
	c->seen[t] = 1;
	w->marked[w->nr_marked++] = t;
	return true;
}

/* A way to TARGET: walked later, unless out of the known functions */
static void way(struct ctx *c, struct walk *w, uint64_t target)
{
	int t = insn_at(c, target);

	if (func_of(c, target) < 0)
		return;		/* a PLT stub, another file: as a call */
	if (t < 0) {
		w->undecided = "a jump into an instruction";
		return;
	}
	if (mark(c, w, t))
		w->todo[w->nr_todo++] = t;
}

/* The ways of the indirect jump X (instruction I) */
static void indirect_ways(struct ctx *c, struct walk *w, int i)
{
	const struct insn *x = &c->insns[i];
	int f = func_of(c, x->vaddr), e;

	if (x->ij_rip && !x->ij_index)
		return;		/* through a pointer in memory: a tail call, as a call */
	if (f < 0 || c->funcs[f].unresolved_ijmp) {
		w->undecided = "an indirect jump whose targets are unknown";
		return;
	}
	/* every address of its function code or data refers to: more than its tables, never fewer */
	for (e = 0; e < c->entries.nr; e++)
		if (c->entries.v[e] >= c->funcs[f].start && c->entries.v[e] < c->funcs[f].end &&
		    insn_at(c, c->entries.v[e]) >= 0)
			way(c, w, c->entries.v[e]);
}

/* Walk from instruction I on, straight, queueing the other ways */
static void walk_from(struct ctx *c, struct walk *w, int i)
{
	for (;;) {
		const struct insn *x = &c->insns[i];
		int f = func_of(c, x->vaddr);

		if (!(x->in & IN_TRUSTED)) {
			w->undecided = "code decoded after a decode failure";
			return;
		}
		if (x->in & IN_WAIT) {
			w->wait = i;
			return;
		}
		if (is_exit_probe(c, w->first, i))
			return;
		if (x->kind == BRANCH_JMP || (x->in & IN_COND))
			way(c, w, x->target);
		if (x->in & IN_IJMP)
			indirect_ways(c, w, i);
		if ((x->in & IN_NOFALL) || i + 1 >= c->nr_insns ||
		    c->insns[i + 1].vaddr != x->vaddr + x->len || func_of(c, c->insns[i + 1].vaddr) != f ||
		    !mark(c, w, i + 1))
			return;
		i++;
	}
}

/*
 * The paths from the branch at instruction I, other than its jump: the
 * first wait they reach (w->wait), or why they could not all be followed
 * (w->undecided)
 */
static int wait_paths(struct ctx *c, int first, int i, struct walk *w)
{
	const struct insn *x = &c->insns[i];

	*w = (struct walk){ .wait = -1, .first = first };
	if (!c->seen) {
		c->seen = calloc(c->nr_insns, 1);
		c->walk_todo = malloc(PATH_MAX_INSNS * sizeof(int));
		c->walk_marked = malloc(PATH_MAX_INSNS * sizeof(int));
		if (!c->seen || !c->walk_todo || !c->walk_marked)
			return -ENOMEM;
	}
	w->todo = c->walk_todo;
	w->marked = c->walk_marked;
	/* its fall-through, in its function (a JMP has none) */
	if (!(x->in & IN_NOFALL) && i + 1 < c->nr_insns && c->insns[i + 1].vaddr == x->vaddr + x->len &&
	    func_of(c, c->insns[i + 1].vaddr) == func_of(c, x->vaddr) && mark(c, w, i + 1))
		w->todo[w->nr_todo++] = i + 1;
	while (w->nr_todo && w->wait < 0 && !w->over)
		walk_from(c, w, w->todo[--w->nr_todo]);
	while (w->nr_marked)
		c->seen[w->marked[--w->nr_marked]] = 0;
	return 0;
}

/* ---- sites ---- */

static void symbolize(const struct ctx *c, uint64_t vaddr, char *buf, size_t len)
{
	int f = func_of(c, vaddr);
	const struct func *fn;

	buf[0] = '\0';
	if (f < 0)
		return;
	fn = &c->funcs[f];
	if (fn->name && vaddr == fn->start)
		snprintf(buf, len, "%s", fn->name);
	else if (fn->name)
		snprintf(buf, len, "%s+0x%llx", fn->name, (unsigned long long)(vaddr - fn->start));
	else
		snprintf(buf, len, "func@0x%llx+0x%llx", (unsigned long long)fn->start,
			 (unsigned long long)(vaddr - fn->start));
}

/* The file offset of VADDR in a code range */
static uint64_t offset_of(const struct ctx *c, uint64_t vaddr)
{
	int i;

	for (i = 0; i < c->nr_code; i++)
		if (vaddr >= c->code[i].vaddr && vaddr - c->code[i].vaddr < c->code[i].size)
			return c->code[i].offset + (vaddr - c->code[i].vaddr);
	return 0;
}

static void why(struct site *site, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why(struct site *site, const char *fmt, ...)
{
	size_t n = strlen(site->why);
	va_list ap;

	if (n >= sizeof(site->why) - 4)
		return;
	if (n)
		n += snprintf(site->why + n, sizeof(site->why) - n, "; ");
	va_start(ap, fmt);
	vsnprintf(site->why + n, sizeof(site->why) - n, fmt, ap);
	va_end(ap);
}

static int add_site(struct ctx *c, int i)
{
	const struct insn *x = &c->insns[i];
	struct site site = { .file = c->file, .insn = x->wait };
	int n = i + 1 < c->nr_insns && c->insns[i + 1].vaddr == x->vaddr + x->len ? i + 1 : -1;
	int f = func_of(c, x->vaddr);

	site.vaddr = x->vaddr;
	site.offset = offset_of(c, x->vaddr);
	site.len = x->len;
	site.next_offset = site.offset + x->len;
	site.site_ok = x->in & IN_PROBE;
	symbolize(c, x->vaddr, site.symbol, sizeof(site.symbol));
	site.exact = site.exact_capped = true;
	if (!(x->in & IN_TRUSTED)) {
		if (f < 0)
			why(&site, "outside any known function (no symbol or unwind entry holds it): "
			    "code and data cannot be told apart there, not probed");
		else
			why(&site, "decoded after a decode failure in %s: not probed",
			    c->funcs[f].name ? c->funcs[f].name : "its function");
	} else if (n < 0 || !(c->insns[n].in & IN_PROBE) || !(c->insns[n].in & IN_TRUSTED)) {
		why(&site, "the kernel cannot uprobe the instruction after it: not counted");
	} else {
		site.probed = true;
	}
	if (!site.probed)
		site.exact = site.exact_capped = false;
	if (!scan_grow((void **)&c->s->sites, &c->s->cap_sites, c->s->nr_sites, sizeof(site)))
		return -ENOMEM;
	c->s->sites[c->s->nr_sites++] = site;
	c->s->files[c->file].nr_sites++;
	return 0;
}

/* Sort out every other way to the instruction after site K (instruction I) */
static int arrivals(struct ctx *c, int first, int k, int i)
{
	struct site *site = &c->s->sites[k];
	uint64_t next = site->vaddr + site->len;
	int b, f = func_of(c, site->vaddr), unprobed = 0, unprobed_cf = 0;

	site->arrival = c->s->nr_arrivals;
	if (site->probed && u64s_has(&c->entries, next))
		why(site, "the instruction after it may be reached indirectly (its address is taken, "
		    "relocated, in a jump table or a landing pad)");
	else if (site->probed && u64s_has(&c->fstarts, next))
		why(site, "the instruction after it starts a function: calls arrive there");
	else if (site->probed && f >= 0 && c->funcs[f].unresolved_ijmp)
		why(site, "its function has an indirect jump whose targets are unknown");
	if (site->why[0] && site->probed)
		site->exact = site->exact_capped = false;

	for (b = btarget_first(c, next); b < c->nr_btargets && c->btargets[b].target == next; b++) {
		int bi = c->btargets[b].insn;
		const struct insn *x = &c->insns[bi];
		struct walk w;
		uint64_t m = flags_before(c, bi, 6) & taken_mask(x);
		struct arrival a = {
			.offset = offset_of(c, x->vaddr), .vaddr = x->vaddr, .kind = x->kind,
			.cc = x->cc, .ecx = x->in & IN_ECX, .path_site = -1,
		};

		snprintf(a.mnem, sizeof(a.mnem), "%s", x->mnem);
		a.cf0 = !(m & ~half[0]);
		if (!m) {
			a.how = ARRIVAL_NEVER;
		} else if (!(m & 0x3)) {
			/* every assignment has one of PF AF ZF SF OF set */
			a.how = ARRIVAL_FLAGS;
		} else if (!(x->in & IN_PROBE) || !(x->in & IN_TRUSTED)) {
			a.how = ARRIVAL_BLIND;
		} else if (is_exit_probe(c, first, bi)) {
			a.how = ARRIVAL_PROBED;	/* a probe is there anyway */
		} else if (wait_paths(c, first, bi, &w)) {
			return -ENOMEM;
		} else if (w.wait >= 0 || w.undecided) {
			a.how = c->s->exact_mode ? ARRIVAL_PROBED : ARRIVAL_ON_PATH;
			for (int s = first; s < c->s->nr_sites && w.wait >= 0; s++)
				if (c->s->sites[s].vaddr == c->insns[w.wait].vaddr)
					a.path_site = s;
			if (w.wait < 0)
				why(site, "the paths from the %s at 0x%llx were not all followed (%s): "
				    "taken to lead to a wait", x->mnem, (unsigned long long)x->vaddr,
				    w.undecided);
			if (c->s->exact_mode && site->probed)
				site->perturbs = true;
		} else {
			a.how = ARRIVAL_PROBED;
		}
		if (a.how == ARRIVAL_ON_PATH || a.how == ARRIVAL_BLIND) {
			unprobed++;
			unprobed_cf += !a.cf0;
		}
		if (!scan_grow((void **)&c->s->arrivals, &c->s->cap_arrivals, c->s->nr_arrivals,
			       sizeof(a)))
			return -ENOMEM;
		c->s->arrivals[c->s->nr_arrivals++] = a;
		site = &c->s->sites[k];
		site->nr_arrivals++;
	}
	if (unprobed && site->probed) {
		site->exact = false;
		if (unprobed_cf)
			site->exact_capped = false;
		why(site, "%d jump%s to the instruction after it %s unprobed (on a wait's own path, or "
		    "not probe-able)%s", unprobed, unprobed == 1 ? "" : "s",
		    unprobed == 1 ? "is" : "are",
		    unprobed_cf ? "" : ": CF is 0 on them, capped stays exact");
	}
	(void)i;
	return 0;
}

static void ctx_free(struct ctx *c)
{
	free(c->code);
	free(c->data);
	free(c->funcs);
	free(c->insns);
	free(c->entries.v);
	free(c->fstarts.v);
	free(c->btargets);
	free(c->seen);
	free(c->walk_todo);
	free(c->walk_marked);
}

int scan_code(struct scan *s, int file, const struct image *im)
{
	struct ctx c = { .im = im, .s = s, .file = file };
	int first = s->nr_sites, i, err;

	err = layout(&c);
	if (!err)
		err = symbols(&c);
	if (!err)
		err = unwind_info(&c);
	if (!err) {
		merge_funcs(&c);
		err = decode_all(&c);
	}
	if (!err)
		err = entries(&c);
	for (i = 0; i < c.nr_insns && !err; i++)
		if (c.insns[i].in & IN_WAIT)
			err = add_site(&c, i);
	/* after every site: a branch there may be another site's counting probe */
	for (i = first; i < s->nr_sites && !err; i++)
		err = arrivals(&c, first, i, insn_at(&c, s->sites[i].vaddr));
	ctx_free(&c);
	if (err) {
		die_msg("%s: out of memory", s->files[file].path);
		return err;
	}
	return s->nr_sites - first;
}
