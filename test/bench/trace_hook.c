/*
 * trace_hook.c - the call-edge recorder of test/bench/trace_files.sh (not
 * part of the extension).  Built into kernel_ml.so with the extension's
 * other files compiled under -finstrument-functions, it writes each
 * distinct (call site, function entered) pair of kernel_ml.so once, in the
 * order first seen, as two offsets from the library's base, to
 * $KM_TRACE_DIR/<pid>.edges (default /tmp/km_trace, when it exists).  tools/trace_files.py maps them to files and
 * layers.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define KM_TRACE_SLOTS (1u << 20)

/*
 * protected: the library's own calls bind to these, not to glibc's no-op
 * pair that the server has already loaded
 */
void		__cyg_profile_func_enter(void *fn, void *site)
			__attribute__((no_instrument_function, visibility("protected")));
void		__cyg_profile_func_exit(void *fn, void *site)
			__attribute__((no_instrument_function, visibility("protected")));

static uintptr_t base;
static uintptr_t end;
static FILE *out;
static uintptr_t (*seen)[2];

__attribute__((no_instrument_function)) static int
first_time(uintptr_t f, uintptr_t s)
{
	uint64_t	h = (f * 0x9E3779B97F4A7C15ull) ^ (s * 0xC2B2AE3D27D4EB4Full);

	for (uint32_t i = (uint32_t) (h >> 40) & (KM_TRACE_SLOTS - 1);; i = (i + 1) & (KM_TRACE_SLOTS - 1))
	{
		if (seen[i][0] == f && seen[i][1] == s)
			return 0;
		if (seen[i][0] == 0)
		{
			seen[i][0] = f;
			seen[i][1] = s;
			return 1;
		}
	}
}

/* the end of the library's loaded segments */
__attribute__((no_instrument_function)) static int
find_end(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void) size;
	(void) arg;
	if ((uintptr_t) info->dlpi_addr != base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
			base + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz > end)
			end = base + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
	return 1;
}

void
__cyg_profile_func_enter(void *fn, void *site)
{
	uintptr_t	s;

	if (base == 0)
	{
		Dl_info		info;

		const char *dir = getenv("KM_TRACE_DIR");
		char		path[512];

		if (dir == NULL)
			dir = "/tmp/km_trace";	/* a server started without the variable */
		if (access(dir, W_OK) != 0 || !dladdr((void *) first_time, &info))
			return;
		base = (uintptr_t) info.dli_fbase;
		dl_iterate_phdr(find_end, NULL);
		seen = calloc(KM_TRACE_SLOTS, sizeof(*seen));
		snprintf(path, sizeof(path), "%s/%d.edges", dir, (int) getpid());
		out = fopen(path, "w");
		if (seen == NULL || out == NULL)
			return;
	}
	if (out == NULL || (uintptr_t) fn < base || (uintptr_t) fn >= end)
		return;
	/* a call from outside the library (PostgreSQL calling a function): site 0 */
	s = (uintptr_t) site >= base && (uintptr_t) site < end ? (uintptr_t) site - base : 0;
	if (first_time((uintptr_t) fn - base, s))
	{
		fprintf(out, "%lx %lx\n", (unsigned long) ((uintptr_t) fn - base), (unsigned long) s);
		fflush(out);
	}
}

void
__cyg_profile_func_exit(void *fn, void *site)
{
	(void) fn;
	(void) site;
}
