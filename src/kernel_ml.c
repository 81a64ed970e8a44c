/*
 * kernel_ml.c - module entry: magic block and GUCs.
 */
#include "postgres.h"

#include <limits.h>

#include "fmgr.h"
#include "utils/guc.h"

#include "pgutil.h"

PG_MODULE_MAGIC;

/* 4 GB, in kB */
int			km_max_memory_kb = 4 * 1024 * 1024;

/*
 * One BLAS thread by default: a database server shares its cores between
 * backends, and parallel query already adds processes.  A session that
 * trains a large model alone can raise it.
 */
int			km_blas_threads = 1;

void		_PG_init(void);

void
_PG_init(void)
{
	DefineCustomIntVariable("kernel_ml.max_memory",
							"Largest amount of memory one kernel_ml training or Gram matrix may use.",
							"Checked before allocating; the n x n kernel matrix dominates.",
							&km_max_memory_kb,
							4 * 1024 * 1024,
							1024,
							INT_MAX,
							PGC_USERSET,
							GUC_UNIT_KB,
							NULL, NULL, NULL);

	DefineCustomIntVariable("kernel_ml.blas_threads",
							"Number of OpenBLAS threads a backend uses for kernel_ml work.",
							NULL,
							&km_blas_threads,
							1,
							1,
							64,
							PGC_USERSET,
							0,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("kernel_ml");
}
