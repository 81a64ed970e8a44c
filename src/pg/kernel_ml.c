/*
 * kernel_ml.c - the settings (GUCs); the module's entry, which defines them
 * first, is src/catalog/module.c.
 *
 * Memory and threads protect the whole server, so each user setting has a
 * superuser-only ceiling: kernel_ml.max_memory_limit and
 * kernel_ml.blas_threads_limit.  The work uses min(setting, ceiling) (and
 * no more BLAS threads than online cores), whatever the setting says; a
 * role that is not a superuser cannot even SET a value above the ceiling,
 * so that it learns at once why the value would not be used.
 */
#include "postgres.h"

#include <limits.h>
#include <unistd.h>

#include "access/parallel.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"

#include "pgprogress.h"
#include "pgutil.h"
#include "kernel_ml.h"

/*
 * The settings' variables live in the modules that read them (pgutil.c,
 * progress.c), so that those import nothing from this file.
 */

/*
 * Whether a value given by this source is refused above the ceiling: a SET
 * (or ALTER ROLE ... SET, tested with PGC_S_TEST) by a role that is not a
 * superuser.  Values from the configuration file or set by a superuser are
 * capped at use instead, and a parallel worker takes the leader's values.
 */
static bool
ceiling_applies(GucSource source)
{
	return source >= PGC_S_INTERACTIVE && !InitializingParallelWorker &&
		IsUnderPostmaster && !superuser();
}

static bool
check_max_memory(int *newval, void **extra, GucSource source)
{
	if (*newval > km_max_memory_limit_kb && ceiling_applies(source))
	{
		GUC_check_errdetail("kernel_ml.max_memory cannot exceed kernel_ml.max_memory_limit (%s), which only a superuser can change.",
							km_size_pretty((double) km_max_memory_limit_kb * 1024.0));
		return false;
	}
	return true;
}

static bool
check_blas_threads(int *newval, void **extra, GucSource source)
{
	int			ceiling = km_blas_threads_ceiling();

	if (*newval > ceiling && ceiling_applies(source))
	{
		if (km_blas_threads_limit > 0 && km_blas_threads_limit < km_online_cores())
			GUC_check_errdetail("kernel_ml.blas_threads cannot exceed kernel_ml.blas_threads_limit (%d), which only a superuser can change.",
								ceiling);
		else
			GUC_check_errdetail("kernel_ml.blas_threads cannot exceed the %d cores this server has online.",
								ceiling);
		return false;
	}
	return true;
}

void
km_define_settings(void)
{
	/* ceilings first, so that a value set before loading is checked against them */
	DefineCustomIntVariable("kernel_ml.max_memory_limit",
							"Ceiling on kernel_ml.max_memory; only superusers can change it.",
							"kernel_ml work uses at most the smaller of the two settings.",
							&km_max_memory_limit_kb,
							KM_DEFAULT_MAX_MEMORY_KB,
							1024,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("kernel_ml.max_memory",
							"Largest amount of memory one kernel_ml training or Gram matrix may use.",
							"Checked before allocating; the n x n kernel matrix dominates. "
							"kernel_ml.max_memory_limit caps it.",
							&km_max_memory_kb,
							KM_DEFAULT_MAX_MEMORY_KB,
							1024,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_KB,
							check_max_memory, NULL, NULL);

	DefineCustomIntVariable("kernel_ml.blas_threads_limit",
							"Ceiling on kernel_ml.blas_threads (0: the online cores); only superusers can change it.",
							NULL,
							&km_blas_threads_limit,
							0,
							0,
							64,
							PGC_SUSET,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("kernel_ml.blas_threads",
							"Number of OpenBLAS threads a backend uses for kernel_ml work.",
							"Capped at the online cores and at kernel_ml.blas_threads_limit.",
							&km_blas_threads,
							1,
							1,
							64,
							PGC_USERSET,
							0,
							check_blas_threads, NULL, NULL);

	DefineCustomBoolVariable("kernel_ml.progress",
							 "Report the progress of long kernel_ml training as NOTICEs.",
							 "The phase and how far it is, at most once per kernel_ml.progress_interval: "
							 "kernel matrix, factorization, candidates of model selection, SMO iterations "
							 "and class pairs, Newton steps, SGD epochs, the passes of approximate models "
							 "and the stages of named training.",
							 &km_progress,
							 false,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("kernel_ml.progress_interval",
							"Least time between two kernel_ml.progress NOTICEs.",
							"The first comes one interval after training begins, so short training stays silent.",
							&km_progress_interval_ms,
							1000,
							0,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("kernel_ml");

	km_progress_init();
}
