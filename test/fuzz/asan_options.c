/*
 * Compiled into the kernel_ml.so of "make installcheck-asan" only
 * (test/fuzz/installcheck_asan.sh), where a backend loads the ASan runtime
 * together with the extension instead of preloading it.
 *
 * Options: by then PostgreSQL has overwritten the backend's original
 * environment with its process title, so the runtime cannot read
 * ASAN_OPTIONS from /proc/self/environ; they come from these hooks.
 *
 * Stale stack poison: an ERROR leaves kernel_ml's frames by siglongjmp from
 * the server, which the late-loaded runtime does not intercept, so their
 * redzones stay poisoned and a later call that reuses that stack would be
 * reported falsely.  An fmgr hook on kernel_ml's own functions unpoisons
 * the unused stack below the caller on entry and when an error leaves.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* pthread_getattr_np */
#endif
#include "postgres.h"

#include <pthread.h>
#include <string.h>

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include <sanitizer/asan_interface.h>

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);

const char *
__asan_default_options(void)
{
	/* memory contexts free in bulk: no leak detection */
	return "detect_leaks=0:verify_asan_link_order=0:print_stacktrace=1";
}

const char *
__ubsan_default_options(void)
{
	return "print_stacktrace=1:halt_on_error=1";
}

#define UNPOISON_BYTES (256 * 1024)

static needs_fmgr_hook_type prev_needs_hook;
static fmgr_hook_type prev_hook;
static char *stack_low;

/* Whether fn_oid is a C function of this library. */
static bool
km_needs_hook(Oid fn_oid)
{
	HeapTuple	tup;
	bool		ours = false;

	if (prev_needs_hook && prev_needs_hook(fn_oid))
		return true;
	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn_oid));
	if (HeapTupleIsValid(tup))
	{
		Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tup);
		bool		isnull;
		Datum		bin;

		if (proc->prolang == ClanguageId)
		{
			bin = SysCacheGetAttr(PROCOID, tup, Anum_pg_proc_probin, &isnull);
			ours = !isnull && strstr(TextDatumGetCString(bin), "kernel_ml") != NULL;
		}
		ReleaseSysCache(tup);
	}
	return ours;
}

/*
 * Unpoison the unused stack below the caller, and UNPOISON_ABOVE bytes
 * above it: kernel_ml code that the server calls without fmgr (the planner
 * hook) may have left poisoned frames there when an ERROR unwound it, and
 * the server's own frames now in that place (a trigger's TriggerData, say)
 * are read by the function being called.  Frames above are the server's,
 * whose shadow is all clear anyway, or a calling kernel_ml function's, which
 * only loses its redzones.
 */
#define UNPOISON_ABOVE (64 * 1024)

static char *stack_high;

static void
unpoison_below(void)
{
	char	   *sp = (char *) __builtin_frame_address(0) - 64;
	char	   *lo = sp - UNPOISON_BYTES;
	char	   *hi = sp + UNPOISON_ABOVE;

	if (stack_low != NULL && lo < stack_low)
		lo = stack_low;
	if (stack_high != NULL && hi > stack_high)
		hi = stack_high;
	if (hi > lo)
		__asan_unpoison_memory_region(lo, (size_t) (hi - lo));
}

static void
km_fmgr_hook(FmgrHookEventType event, FmgrInfo *flinfo, Datum *private)
{
	if (prev_hook)
		prev_hook(event, flinfo, private);
	if (event == FHET_START || event == FHET_ABORT)
		unpoison_below();
}

static void install_hooks(void) __attribute__((constructor));

static void
install_hooks(void)
{
	pthread_attr_t attr;
	void	   *addr;
	size_t		size;

	if (pthread_getattr_np(pthread_self(), &attr) == 0)
	{
		if (pthread_attr_getstack(&attr, &addr, &size) == 0)
		{
			stack_low = (char *) addr;
			stack_high = (char *) addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	prev_needs_hook = needs_fmgr_hook;
	needs_fmgr_hook = km_needs_hook;
	prev_hook = fmgr_hook;
	fmgr_hook = km_fmgr_hook;
}
