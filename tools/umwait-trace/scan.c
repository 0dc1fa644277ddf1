// SPDX-License-Identifier: GPL-2.0
/*
 * umwait-trace: find every TPAUSE and UMWAIT in an ELF file.
 *
 * Capstone does not know the WAITPKG instructions (it decodes 66 0F AE F0+r
 * as MFENCE), so Zydis 4 decodes.  Sites first: the executable bytes are
 * searched, a window at a time, for the instructions' opcode (66 or F2, an
 * optional REX, 0F AE F0-F7); a file without one is done there, at the cost
 * of reading its code once, whatever its size.  A file with one is read
 * whole and its code decoded and analysed (scan_code.c).
 *
 * Offsets are file offsets, which is what uprobes take; vaddr is the
 * address in the file's own layout, which is what objdump prints.
 *
 * A file is the real inode a uprobe binds, known by the device and inode
 * /proc/PID/maps prints (scan_identity() finds them for a descriptor): the
 * same file through two overlay mounts is one.  Its descriptor stays open
 * until caps has placed its probes through it.  scan_proc.c reads the
 * processes' mappings.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scan_int.h"
#include "ut.h"

/*
 * caps --all scans whatever every process maps: a process that exits, a
 * file that cannot be read, are nothing to say there. The scanner's
 * messages go through say() and note(), which are silent then (scan.quiet,
 * copied here by each entry point).
 */
static bool quiet;

#define say(...)	do { if (!quiet) die_msg(__VA_ARGS__); } while (0)
#define note(...)	do { if (!quiet) warn_msg(__VA_ARGS__); } while (0)

const char *insn_name(enum wait_insn insn)
{
	return insn == INSN_TPAUSE ? "tpause" : "umwait";
}

const char *arrival_how_name(enum arrival_how how)
{
	static const char *const names[] = {
		[ARRIVAL_FLAGS] = "flags", [ARRIVAL_NEVER] = "never", [ARRIVAL_PROBED] = "probed",
		[ARRIVAL_ON_PATH] = "on-path", [ARRIVAL_BLIND] = "blind",
	};

	return names[how];
}

/* [OFF, OFF + SIZE) lies inside a file of FILE_SIZE bytes */
static bool inside(uint64_t off, uint64_t size, uint64_t file_size)
{
	return off <= file_size && size <= file_size - off;
}

/* ---- the files known, by real device and inode ---- */

static unsigned int id_hash(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)dev * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)ino * 0xc2b2ae3d27d4eb4fULL);

	return (unsigned int)(h ^ (h >> 29));
}

/* FILE into the table; false without memory */
static bool id_add(struct scan *s, int file);

static bool id_grow(struct scan *s)
{
	int *old = s->ids, cap = s->cap_ids, i;

	s->cap_ids = cap ? cap * 2 : 256;
	s->ids = calloc(s->cap_ids, sizeof(*s->ids));
	if (!s->ids) {
		s->ids = old;
		s->cap_ids = cap;
		return false;
	}
	s->used_ids = 0;
	for (i = 0; i < cap; i++)
		if (old[i] > 0)
			id_add(s, old[i] - 1);
	free(old);
	return true;
}

static bool id_add(struct scan *s, int file)
{
	const struct scan_file *f = &s->files[file];
	unsigned int i;

	if ((s->used_ids + 1) * 2 > s->cap_ids && !id_grow(s))
		return false;
	for (i = id_hash(f->dev, f->ino) & (s->cap_ids - 1); s->ids[i] > 0; i = (i + 1) & (s->cap_ids - 1))
		;
	if (!s->ids[i])
		s->used_ids++;
	s->ids[i] = file + 1;
	return true;
}

/* the slot of (DEV, INO), or -1 */
static int id_slot(const struct scan *s, dev_t dev, ino_t ino)
{
	unsigned int i;

	if (!s->cap_ids)
		return -1;
	for (i = id_hash(dev, ino) & (s->cap_ids - 1); s->ids[i]; i = (i + 1) & (s->cap_ids - 1)) {
		const struct scan_file *f;

		if (s->ids[i] < 0)
			continue;
		f = &s->files[s->ids[i] - 1];
		if (f->dev == dev && f->ino == ino)
			return i;
	}
	return -1;
}

int scan_lookup(const struct scan *s, dev_t dev, ino_t ino)
{
	int i = id_slot(s, dev, ino);

	return i < 0 ? -1 : s->ids[i] - 1;
}

void scan_close(struct scan *s, int file)
{
	if (s->files[file].fd >= 0)
		close(s->files[file].fd);
	s->files[file].fd = -1;
}

void scan_forget(struct scan *s, int file)
{
	struct scan_file *f = &s->files[file];
	int i = id_slot(s, f->dev, f->ino), k;

	if (i >= 0 && s->ids[i] == file + 1)
		s->ids[i] = -1;
	scan_close(s, file);
	for (k = f->first_site; k < f->first_site + f->nr_sites; k++)
		s->sites[k].probed = false;
	f->state = FILE_GONE;
}

static int add_file(struct scan *s, const char *shown, int fd, dev_t dev, ino_t ino)
{
	struct scan_file *f;

	if (!scan_grow((void **)&s->files, &s->cap_files, s->nr_files, sizeof(*s->files)))
		return -ENOMEM;
	f = &s->files[s->nr_files];
	*f = (struct scan_file){ .path = strdup(shown), .fd = fd, .dev = dev, .ino = ino,
				 .first_site = s->nr_sites };
	if (!f->path || !id_add(s, s->nr_files)) {
		free(f->path);
		return -ENOMEM;
	}
	return s->nr_files++;
}

/*
 * The real file behind FD.  fstat() through an overlay mount gives the
 * overlay's device (another one per mount) while a uprobe binds, and a
 * mapping shows, the layer's inode: map one page of it (never read: another
 * tracer's uprobes show as int3s there) and read the device and inode our
 * own /proc/self/maps prints for it.  Without a mapping (a descriptor
 * limit, a file that cannot be mapped), fstat()'s, which is right for every
 * file not on overlayfs.
 */
int scan_identity(int fd, dev_t *dev, ino_t *ino)
{
	char buf[8192];
	struct stat st;
	void *p;
	int mfd;

	if (fstat(fd, &st))
		return -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return 0;
	mfd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (mfd >= 0) {
		size_t have = 0;
		ssize_t n;
		bool found = false;

		/* line by line, a buffer at a time: our own maps are a few dozen lines */
		while (!found && (n = read(mfd, buf + have, sizeof(buf) - 1 - have)) > 0) {
			char *nl, *b = buf;

			have += n;
			buf[have] = '\0';
			while (!found && (nl = strchr(b, '\n'))) {
				unsigned long start, maj, min;
				unsigned long long inode;

				*nl = '\0';
				if (sscanf(b, "%lx-%*x %*s %*x %lx:%lx %llu", &start, &maj, &min, &inode) == 4 &&
				    start == (unsigned long)p) {
					*dev = makedev(maj, min);
					*ino = inode;
					found = true;
				}
				b = nl + 1;
			}
			have -= b - buf;
			memmove(buf, b, have);
			if (have == sizeof(buf) - 1)
				have = 0;	/* a line longer than the buffer: no mapping of ours */
		}
		close(mfd);
	}
	munmap(p, 4096);
	return 0;
}

/* Whether BUF[I] (0F of 0F AE F0-F7) has a 66 or F2 among the prefixes before it */
static bool waitpkg_prefix(const uint8_t *buf, size_t i)
{
	size_t k;

	for (k = 1; k <= 4 && k <= i; k++) {
		uint8_t b = buf[i - k];

		if (b == 0x66 || b == 0xf2)
			return true;
		/* REX, and the other legacy prefixes that may sit between */
		if (!((b >= 0x40 && b <= 0x4f) || b == 0x26 || b == 0x2e || b == 0x36 ||
		      b == 0x3e || b == 0x64 || b == 0x65 || b == 0x67 || b == 0xf0 || b == 0xf3))
			return false;
	}
	return false;
}

#define WINDOW	(1 << 20)

/*
 * Whether [OFF, OFF + SIZE) of FD holds a byte sequence that may be a
 * TPAUSE or UMWAIT; 1 yes, 0 no, a negative errno.  Read a window at a
 * time, each overlapping the last by a few bytes.
 */
static int has_candidate(int fd, uint64_t off, uint64_t size, uint8_t *buf)
{
	uint64_t done = 0;
	const size_t keep = 8;

	while (done < size) {
		size_t want = size - done > WINDOW ? WINDOW : size - done, have = 0, i;
		size_t back = done ? keep : 0;
		ssize_t n;

		while (have < want) {
			n = pread(fd, buf + keep + have, want - have, off + done + have);
			if (n < 0)
				return -errno;
			if (!n)
				return -EIO;
			have += n;
		}
		for (i = keep - back; i + 2 < keep + want; i++) {
			const uint8_t *p = memchr(buf + i, 0x0f, keep + want - 2 - i);

			if (!p)
				break;
			i = p - buf;
			if (p[1] == 0xae && (p[2] & 0xf8) == 0xf0 && waitpkg_prefix(buf, i))
				return 1;
		}
		memmove(buf, buf + want, keep);	/* the last bytes, before the next window */
		done += want;
	}
	return 0;
}

/* Whether any executable part of the file may hold a site; libelf reads only headers */
static int any_candidate(int fd, const char *shown, uint64_t file_size)
{
	size_t nscn = 0, nph = 0, i;
	uint8_t *buf;
	GElf_Ehdr eh;
	Elf *elf;
	int found = 0;

	buf = malloc(WINDOW + 16);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!buf || !elf) {
		free(buf);
		if (elf)
			elf_end(elf);
		say("%s: cannot read: %s", shown, buf ? elf_errmsg(-1) : strerror(ENOMEM));
		return -EIO;
	}
	/* headers the file does not hold: cut short, or not what they claim */
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &nscn) || elf_getphdrnum(elf, &nph) ||
	    (nscn && !inside(eh.e_shoff, (uint64_t)nscn * eh.e_shentsize, file_size)) ||
	    (nph && !inside(eh.e_phoff, (uint64_t)nph * eh.e_phentsize, file_size)) ||
	    (nscn <= 1 && !nph)) {
		found = -ENOEXEC;
		goto out;
	}
	for (i = 1; i < nscn && !found; i++) {
		Elf_Scn *scn = elf_getscn(elf, i);
		GElf_Shdr sh;

		if (!scn || !gelf_getshdr(scn, &sh)) {
			found = -ENOEXEC;
			break;
		}
		if (sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		if (!inside(sh.sh_offset, sh.sh_size, file_size))
			found = -ENOEXEC;
		else
			found = has_candidate(fd, sh.sh_offset, sh.sh_size, buf);
	}
	for (i = 0; nscn <= 1 && i < nph && !found; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph)) {
			found = -ENOEXEC;
			break;
		}
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (!inside(ph.p_offset, ph.p_filesz, file_size))
			found = -ENOEXEC;
		else
			found = has_candidate(fd, ph.p_offset, ph.p_filesz, buf);
	}
out:
	elf_end(elf);
	free(buf);
	if (found == -ENOEXEC)
		say("%s: a corrupt or truncated ELF file (its headers point past its %llu bytes)",
			shown, (unsigned long long)file_size);
	else if (found < 0)
		say("%s: cannot read: %s", shown, strerror(-found));
	return found;
}

static int read_file(int fd, uint8_t **out, size_t *size)
{
	struct stat st;
	size_t done = 0;
	ssize_t n;
	uint8_t *buf;

	if (fstat(fd, &st))
		return -errno;
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

/*
 * The ELF header of FD, checked against the file's SIZE before libelf reads
 * anything: an x86-64 ELF file whose header tables lie inside it, or a
 * message.  (libelf takes a section header table past the end for none.)
 */
static int check_elf(int fd, const char *shown, uint64_t size)
{
	Elf64_Ehdr eh;
	ssize_t n = pread(fd, &eh, sizeof(eh), 0);
	uint64_t shnum = eh.e_shnum;

	if (n < (ssize_t)EI_NIDENT || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
		say("%s: not an ELF file", shown);
		return -ENOEXEC;
	}
	if (n >= EI_NIDENT && eh.e_ident[EI_CLASS] == ELFCLASS64 && n < (ssize_t)sizeof(eh)) {
		say("%s: a truncated ELF file (%zd bytes: its header alone is %zu)", shown, n,
			sizeof(eh));
		return -ENOEXEC;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_machine != EM_X86_64) {
		say("%s: not an x86-64 ELF file", shown);
		return -ENOEXEC;
	}
	/* more than 0xff00 sections: the count is in section 0's sh_size */
	if (!shnum && eh.e_shoff) {
		Elf64_Shdr sh0;

		if (pread(fd, &sh0, sizeof(sh0), eh.e_shoff) != sizeof(sh0))
			goto corrupt;
		shnum = sh0.sh_size;
	}
	if ((shnum && (eh.e_shentsize != sizeof(Elf64_Shdr) || shnum > size / sizeof(Elf64_Shdr) ||
		       !inside(eh.e_shoff, shnum * sizeof(Elf64_Shdr), size))) ||
	    (eh.e_phnum && (eh.e_phentsize != sizeof(Elf64_Phdr) ||
			    !inside(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr), size))) ||
	    (!shnum && !eh.e_phnum))
		goto corrupt;
	return 0;
corrupt:
	say("%s: a corrupt or truncated ELF file (its headers point past its %llu bytes)",
		shown, (unsigned long long)size);
	return -ENOEXEC;
}

/*
 * Scan the file open as FD (its real device and inode DEV, INO, not known
 * yet), SHOWN by that name: it becomes a known file whatever it holds, so
 * that it is not opened again.  FD is the file's from here on: kept open
 * while the file has sites (caps attaches through it), else closed.  The
 * number of sites, or a negative errno (said).
 */
int scan_fd(struct scan *s, const char *shown, int fd, dev_t dev, ino_t ino)
{
	struct image im = {};
	uint8_t *buf = NULL;
	size_t size = 0;
	struct stat st;
	int file = -1, err;

	quiet = s->quiet;
	if (fstat(fd, &st)) {
		err = -errno;
		say("cannot read %s: %s", shown, strerror(errno));
		goto out;
	}
	/* known from here on, whatever it holds: a look skips it without opening it */
	file = add_file(s, shown, fd, dev, ino);
	if (file < 0) {
		err = file;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		say("%s: not a regular file%s", shown, S_ISDIR(st.st_mode) ? " (a directory)" : "");
		goto out;
	}
	elf_version(EV_CURRENT);
	err = check_elf(fd, shown, st.st_size);
	if (err)
		goto out;
	err = any_candidate(fd, shown, st.st_size);
	if (err <= 0)
		goto out;	/* no site: done without decoding anything */
	/*
	 * read(), never mmap(): a uprobe registered on this file (another
	 * tracer's) is installed into every executable-capable mapping of it,
	 * ours included, and would show us int3s instead of the instructions.
	 */
	err = read_file(fd, &buf, &size);
	if (err) {
		say("cannot read %s: %s", shown, strerror(-err));
		goto out;
	}
	im.data = buf;
	im.size = size;
	im.elf = elf_memory((char *)buf, size);
	if (!im.elf || elf_kind(im.elf) != ELF_K_ELF || !gelf_getehdr(im.elf, &im.eh)) {
		say("%s: a corrupt ELF file (%s)", shown, elf_errmsg(-1));
		err = -ENOEXEC;
		goto out;
	}
	err = scan_code(s, file, &im);
	if (err >= 0 && s->files[file].no_symbols)
		note("%s: no section headers: decoded by its executable segments, functions "
			 "from its unwind info; sites outside them are not probed", shown);
out:
	if (im.elf)
		elf_end(im.elf);
	free(buf);
	if (file < 0)
		close(fd);
	else if (err <= 0 || !s->files[file].nr_sites) {
		/* nothing to probe there: known, never opened again */
		scan_close(s, file);
		s->files[file].state = FILE_ATTACHED;
	}
	return err;
}

int scan_elf(struct scan *s, const char *shown, const char *path)
{
	dev_t dev;
	ino_t ino;
	int fd, file, err;

	quiet = s->quiet;
	/* O_NONBLOCK: a FIFO named as a file must not hang the scan */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		say("cannot open %s: %s", shown, strerror(errno));
		return err;
	}
	err = (s->identify ? s->identify : scan_identity)(fd, &dev, &ino);
	if (err) {
		say("cannot read %s: %s", shown, strerror(-err));
		close(fd);
		return err;
	}
	/*
	 * a symbolic or hard link, the same name twice, or the same file
	 * through two overlay mounts: one file, one set of probes
	 */
	file = scan_lookup(s, dev, ino);
	if (file >= 0) {
		if (strcmp(s->files[file].path, shown))
			note("%s is %s (the same file: device and inode): scanned and traced once",
			     shown, s->files[file].path);
		else
			note("%s is named more than once: scanned and traced once", shown);
		close(fd);
		return 0;
	}
	return scan_fd(s, shown, fd, dev, ino);
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

	quiet = s->quiet;
	/* a path: the scanner and libbpf both take it relative to the cwd */
	if (strchr(arg, '/'))
		return scan_elf(s, arg, arg);
	/*
	 * A bare name: what is in the current directory, or else what libbpf's
	 * search finds; either way both get the same absolute path.
	 */
	if (access(arg, F_OK)) {
		if (!search_path(arg, found, sizeof(found))) {
			say("cannot find %s: not in the current directory nor in %s", arg,
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
		say("cannot open %s: %s", arg, strerror(errno));
		return n;
	}
	n = scan_elf(s, abs, abs);
	free(abs);
	return n;
}

void scan_free(struct scan *s)
{
	int i;

	for (i = 0; i < s->nr_files; i++) {
		scan_close(s, i);
		free(s->files[i].path);
	}
	free(s->files);
	free(s->sites);
	free(s->arrivals);
	free(s->ids);
	free(s->fs);
	*s = (struct scan){};
}
