/*
 * train_rows.c - the row helpers the one-statement trainings and the
 * catalog's passes share (train_rows.h).
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "classify_fit.h"
#include "fit.h"
#include "pgutil.h"
#include "primal_pass.h"
#include "repr.h"
#include "select.h"
#include "solve.h"
#include "split.h"
#include "task.h"
#include "train_rows.h"

void
km_notice_skipped(int64 skipped, int64 used)
{
	if (skipped > 0)
		ereport(NOTICE,
				(errmsg_plural("kernel_train skipped " INT64_FORMAT " row with a null feature array or target",
							   "kernel_train skipped " INT64_FORMAT " rows with a null feature array or target",
							   skipped, skipped),
				 errdetail("The model was trained on the other " INT64_FORMAT " of " INT64_FORMAT " rows.",
						   used, used + skipped),
				 errhint("Filter them out (WHERE features IS NOT NULL AND target IS NOT NULL), or fill them in, to silence this.")));
}

static bool
default_gamma_applies(const km_options *opts, size_t n)
{
	return km_task_gamma_sigest(km_task_lookup(km_method_task(opts->fit.method)),
								opts->gamma_default, opts->fit.kernel.type, n) &&
		km_repr_basis_takes(km_repr_lookup(opts->approximation), opts->centres,
							KM_BASIS_GATHER);
}

int64 *
km_default_gamma_pairs(const km_options *opts, const double *X, size_t n, int d)
{
	int64	   *order;

	if (!default_gamma_applies(opts, n) || km_sigest_rows(n, d) == n)
		return NULL;
	order = palloc_extended(mul_size(n, sizeof(int64)), MCXT_ALLOC_HUGE);
	km_rank_rows(X, NULL, (int64) n, d, opts->seed, order);
	return order;
}

void
km_default_gamma(km_options *opts, const double *Xs, size_t n, int d,
				 int64 *pairs)
{
	double	   *work;
	double		gamma;

	if (!default_gamma_applies(opts, n))
		return;
	work = palloc_extended(mul_size(km_gamma_sigest_doubles(n, d), sizeof(double)),
						   MCXT_ALLOC_HUGE);
	gamma = km_gamma_sigest(Xs, n, d, pairs, work);
	pfree(work);
	if (pairs)
		pfree(pairs);
	opts->gammas.v[0] = gamma;
	opts->fit.kernel.gamma = gamma;
}

/*
 * The draw steps of b's list (rff: its random features drawn from its
 * seed, b->W and b->b set), in CurrentMemoryContext.
 */
void
km_basis_draw(km_basis *b)
{
	double	   *work = palloc_extended(mul_size(sizeof(double), km_basis_draw_doubles(b)),
									   MCXT_ALLOC_HUGE);

	km_basis_draw_into(b, work);
}

void
rowset_too_large(const km_options *opts, uint32 d)
{
	ereport(ERROR,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("kernel_train state is too large"),
			 errdetail("A basis of %d components of %u features would exceed 1 GB.",
					   opts->components, d),
			 errhint("Use fewer components.")));
}

/*
 * The reservoir key of row x (d features) for a basis of seed: the hash of
 * its bytes with -0.0 read as 0.0 (into buf, d doubles), so that equal
 * rows hash equal.
 */
static uint64
row_hash(const double *x, uint32 d, uint64 seed, double *buf)
{
	for (uint32 j = 0; j < d; j++)
		buf[j] = x[j] + 0.0;
	return hash_bytes_extended((const unsigned char *) buf,
							   (int) (sizeof(double) * d), seed);
}

uint64_t *
km_row_hashes(const double *X, int64 n, int d, uint64 seed)
{
	uint64_t   *hash = palloc_extended(mul_size((Size) n, sizeof(uint64_t)), MCXT_ALLOC_HUGE);
	double	   *buf = palloc(sizeof(double) * d);

	for (int64 i = 0; i < n; i++)
	{
		hash[i] = row_hash(X + (Size) i * d, (uint32) d, seed, buf);
		if ((i & 0x3FF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	return hash;
}

void
km_check_folds(int folds, int64 n, const int64 *fold_n, const char *rule)
{
	if ((int64) folds > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cv asks for more folds than there are training rows"),
				 errdetail("Option \"cv\" is %d and there are " INT64_FORMAT " training rows; every fold needs a row to score.",
						   folds, n),
				 errhint("Set \"cv\" to at most the number of training rows (5 or 10 is usual), or train on more rows.")));
	for (int f = 0; fold_n != NULL && f < folds; f++)
		if (fold_n[f] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("fold %d of %d has no rows to score", f + 1, folds),
					 errdetail("%s; with \"cv\" %d, none of the " INT64_FORMAT " training rows fell in fold %d.",
							   rule, folds, n, f + 1),
					 errhint("Use fewer folds (\"cv\"), or train on more rows.")));
}

int *
km_row_folds(const RowSet *rs, const km_options *opts)
{
	int64	   *order;
	int		   *fold;

	if (!km_options_selects(opts) || opts->cv != KM_CV_KFOLD)
		return NULL;
	/* folds by rank: none is empty when there are as many rows as folds */
	km_check_folds(opts->folds, rs->n, NULL, NULL);
	order = palloc_extended(mul_size((Size) rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	fold = palloc_extended(mul_size((Size) rs->n, sizeof(int)), MCXT_ALLOC_HUGE);
	km_rank_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, order);
	km_folds_by_rank(order, rs->n, opts->folds, fold);
	pfree(order);
	return fold;
}

/* km_train_env: memory in CurrentMemoryContext (the training's) */
static void *
env_alloc(void *ctx, size_t bytes)
{
	return palloc_extended(bytes, MCXT_ALLOC_HUGE);
}

static void
env_release(void *ctx, void *p)
{
	pfree(p);
}

static double *
env_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	return palloc_extended(mul_size(doubles, sizeof(double)), MCXT_ALLOC_HUGE);
}

static void
env_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
	pfree(p);
}

void
km_train_env_palloc(km_train_env *env)
{
	memset(env, 0, sizeof(*env));
	env->alloc = env_alloc;
	env->release = env_release;
	env->workspace = env_workspace;
	env->release_workspace = env_release_workspace;
	env->interrupt = km_interrupt;
}

/*
 * Map the pages of km_fit's workspace that it will write, up front (see
 * km_alloc_prefaulted): each column of the matrix from km_fit_first_row
 * down, and the vectors after it.  Pages wholly in the upper triangle stay
 * unmapped, about half the matrix: half the memory and half the page
 * faults (n = 10,000: 0.4 GB of 0.8 GB).  Neighbouring columns whose parts
 * share or abut pages are populated in one call.
 */
static void
populate_fit_workspace(double *work, size_t n, int d, size_t nwork)
{
	const Size	page = km_page_size();
	KmRange    *runs = palloc_extended(mul_size(n + 1, sizeof(KmRange)),
									   MCXT_ALLOC_HUGE);
	int			count = 0;

	for (size_t j = 0; j <= n; j++)
	{
		/* j == n: the vectors after the matrix */
		char	   *s = (char *) (j < n ? work + j * n + km_fit_first_row(j, n, d)
								  : work + n * n);
		char	   *e = (char *) (j < n ? work + (j + 1) * n : work + nwork);

		s = (char *) TYPEALIGN_DOWN(page, s);
		e = (char *) TYPEALIGN(page, e);
		if (count > 0 && s <= runs[count - 1].end)
			runs[count - 1].end = Max(runs[count - 1].end, e);
		else
		{
			runs[count].start = s;
			runs[count].end = e;
			count++;
		}
	}
	km_populate_ranges(runs, count);
	pfree(runs);
}

/* The memory host's workspaces, by kind (train_rows.h km_memory_env). */
static double *
memenv_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	KmMemoryTimes *t = (KmMemoryTimes *) ctx;
	Size		bytes = mul_size(doubles, sizeof(double));
	double	   *work;

	if (kind == KM_TRAIN_SELECT)
		return km_alloc_prefaulted(bytes);
	INSTR_TIME_SET_CURRENT(t->asked);
	if (kind == KM_TRAIN_FIT)
	{
		work = km_alloc_reserved(bytes);
		populate_fit_workspace(work, n, d, doubles);
	}
	else if (km_fit_classes_gram_on_demand(t->fit))
	{
		km_blas_setup_scoring();
		work = km_alloc_reserved(bytes);
	}
	else
	{
		km_blas_setup();
		work = km_alloc_prefaulted(bytes);
	}
	INSTR_TIME_SET_CURRENT(t->got);
	return work;
}

static void
memenv_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
	KmMemoryTimes *t = (KmMemoryTimes *) ctx;

	if (kind != KM_TRAIN_SELECT)
		INSTR_TIME_SET_CURRENT(t->released);
	km_free_prefaulted(p);
}

void
km_memory_env(km_train_env *env, KmMemoryTimes *times)
{
	memset(env, 0, sizeof(*env));
	env->ctx = times;
	env->alloc = env_alloc;
	env->release = env_release;
	env->workspace = memenv_workspace;
	env->release_workspace = memenv_release_workspace;
	env->interrupt = km_interrupt;
}
