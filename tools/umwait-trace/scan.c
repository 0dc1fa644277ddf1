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
 */
#include <dirent.h>
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

#include "scan_int.h"
#include "ut.h"

/*
 * caps --all scans whatever every process maps: a process that exits, a
 * file that cannot be read, are nothing to say there. The scanner's
 * messages go through say() and note(), which are silent then.
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

static int add_file(struct scan *s, const char *shown, const char *attach, const struct stat *st)
{
	struct scan_file *f;

	if (!scan_grow((void **)&s->files, &s->cap_files, s->nr_files, sizeof(*s->files)))
		return -ENOMEM;
	f = &s->files[s->nr_files];
	*f = (struct scan_file){ .path = strdup(shown), .attach = strdup(attach),
				 .dev = st->st_dev, .ino = st->st_ino };
	if (!f->path || !f->attach) {
		free(f->path);
		free(f->attach);
		return -ENOMEM;
	}
	return s->nr_files++;
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

int scan_elf(struct scan *s, const char *shown, const char *attach)
{
	struct image im = {};
	uint8_t *buf = NULL;
	size_t size = 0;
	struct stat st;
	int fd, file, i, err;

	/* O_NONBLOCK: a FIFO named as a file must not hang the scan */
	fd = open(attach, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		err = -errno;
		say("cannot open %s: %s", shown, strerror(errno));
		return err;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		say("cannot read %s: %s", shown, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		say("%s: not a regular file%s", shown, S_ISDIR(st.st_mode) ? " (a directory)" : "");
		goto out;
	}
	/* a symbolic or hard link, or the same name twice: one file, one set of probes */
	for (i = 0; i < s->nr_files; i++) {
		if (s->files[i].dev == st.st_dev && s->files[i].ino == st.st_ino) {
			if (strcmp(s->files[i].path, shown))
				note("%s is %s (the same device and inode): scanned and traced once",
					 shown, s->files[i].path);
			else
				note("%s is named more than once: scanned and traced once", shown);
			err = 0;
			goto out;
		}
	}
	elf_version(EV_CURRENT);
	err = check_elf(fd, shown, st.st_size);
	if (err)
		goto out;
	err = any_candidate(fd, shown, st.st_size);
	if (err < 0)
		goto out;
	file = add_file(s, shown, attach, &st);
	if (file < 0) {
		err = file;
		goto out;
	}
	if (!err)
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
	close(fd);
	return err;
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
	int found = 0, n;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	f = fopen(maps, "re");
	if (!f) {
		n = errno;
		if (n == ENOENT || n == ESRCH)
			say("no process with PID %d", pid);
		else
			say("cannot read %s: %s", maps, strerror(n));
		return n == ENOENT ? -ESRCH : -n;
	}
	while (fgets(line, sizeof(line), f)) {
		char perms[8], range[64], *path, attach[PATH_MAX + 64];
		size_t len;

		if (sscanf(line, "%63s %7s", range, perms) != 2 || perms[2] != 'x')
			continue;
		path = strchr(line, '/');
		if (!path)
			continue;	/* [vdso], [vsyscall], anonymous */
		len = strlen(path);
		if (len && path[len - 1] == '\n')
			path[--len] = '\0';
		if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
			unsigned long start = 0, end = 0;

			/*
			 * Replaced under the running process (a library upgrade):
			 * the mapping still reaches the old file, as map_files'
			 * "%lx-%lx" (maps pads to 8 digits: a non-PIE program's
			 * 00401000 is map_files' 401000).
			 */
			sscanf(range, "%lx-%lx", &start, &end);
			snprintf(attach, sizeof(attach), "/proc/%d/map_files/%lx-%lx", pid, start,
				 end);
			n = scan_elf(s, path, attach);
			if (n >= 0 && s->nr_files && !strcmp(s->files[s->nr_files - 1].attach, attach))
				note("%s: deleted since %d mapped it: traced through %s", path,
					 pid, attach);
		} else {
			/* the file as the process sees it, even from another mount namespace */
			snprintf(attach, sizeof(attach), "/proc/%d/root%s", pid, path);
			n = scan_elf(s, path, attach);
		}
		if (n > 0)
			found += n;
	}
	fclose(f);
	return found;
}

int scan_all(struct scan *s)
{
	struct dirent *de;
	int found = 0, n;
	DIR *d = opendir("/proc");

	if (!d) {
		die_msg("cannot read /proc: %s", strerror(errno));
		return -errno;
	}
	quiet = true;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		n = scan_pid(s, pid);
		if (n > 0)
			found += n;
	}
	quiet = false;
	closedir(d);
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
	free(s->arrivals);
	*s = (struct scan){};
}
