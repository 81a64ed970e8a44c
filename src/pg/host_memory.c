/*
 * host_memory.c - the memory host (host_memory.h): an aggregate's rows in
 * memory, handed to every pass the learner asks for in blocks of
 * KM_BLOCK_ROWS rows in their order (a gather: all of them in one block;
 * a classifier's rows are the glue's own writable copy, which an exact
 * classifier standardizes in place).  It knows no task, method or
 * representation: a block is rows of features and whatever arrays the
 * rows carry (targets or class ids, hashes, folds).
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/memutils.h"

#include "host_memory.h"
#include "pgutil.h"
#include "split.h"

/* The rows' arrays (km_rows's: the aggregate's). */
typedef struct MemoryHost
{
	size_t		n;
	int			d;
	const double *X;
	const double *y;
	const uint32_t *cls;
	const uint64_t *hash;
	const int  *fold;
} MemoryHost;

static km_status
memory_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	const MemoryHost *h = ctx;
	/* a gather takes the rows as they are: one block */
	size_t		step = pass->whole ? Max(h->n, 1) : KM_BLOCK_ROWS;

	for (size_t i0 = 0; i0 < h->n; i0 += step)
	{
		km_block	b = {.n = Min(h->n - i0, step), .d = h->d,
			.X = h->X + i0 * (size_t) h->d,
			.y = h->y ? h->y + i0 : NULL,
			.cls = h->cls ? h->cls + i0 : NULL,
			.hash = h->hash ? h->hash + i0 : NULL,
		.fold = h->fold ? h->fold + i0 : NULL};

		CHECK_FOR_INTERRUPTS();
		if (km_pass_feed(pass, &b, state, err) != KM_OK)
			return err->status;
	}
	return KM_OK;
}

km_status
km_memory_train(const km_rows *rows, const km_train_plan *plan,
				const km_train_env *env, km_model *m, km_error *err)
{
	MemoryHost	h = {rows->n, rows->d, rows->X, rows->y,
		rows->classes ? rows->classes->cls : NULL, rows->hash, rows->fold};
	km_host		host = {.ctx = &h, .rows = rows->n, .folds = rows->fold != NULL,
	.run = memory_run};

	if (plan->approximate && rows->hash == NULL)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows without hashes.", rows->n);
	return km_learn(rows, &host, plan, env, m, err);
}

void
km_memory_order_rows(double *X, double *y, int64 n, int d, int64 seed, const char *what)
{
	instr_time	t0;
	instr_time	t1;

	km_check_memory(24.0 * (double) n, what, false);
	INSTR_TIME_SET_CURRENT(t0);
	km_hash_order_rows(X, y, n, d, seed);
	INSTR_TIME_SET_CURRENT(t1);
	INSTR_TIME_SUBTRACT(t1, t0);
	elog(DEBUG1, "%s: " INT64_FORMAT " rows of %d features in row-hash order in %.3f s",
		 what, n, d, INSTR_TIME_GET_DOUBLE(t1));
}

void
km_memory_order_classes(const double *X, const uint32 *cls, int64 n, int d,
						int64 seed, double **Xout, uint32 **clsout)
{
	double	   *yc = palloc_extended(mul_size(n, sizeof(double)), MCXT_ALLOC_HUGE);
	int64	   *order = palloc_extended(mul_size(n, sizeof(int64)), MCXT_ALLOC_HUGE);
	double	   *nx = palloc_extended(mul_size(n, mul_size(d, sizeof(double))), MCXT_ALLOC_HUGE);
	uint32	   *ncls = palloc_extended(mul_size(n, sizeof(uint32)), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < n; i++)
		yc[i] = (double) cls[i];
	km_rank_rows(X, yc, n, d, seed, order);
	for (int64 i = 0; i < n; i++)
	{
		memcpy(nx + i * d, X + order[i] * d, sizeof(double) * d);
		ncls[i] = cls[order[i]];
	}
	*clsout = ncls;
	*Xout = nx;
}
