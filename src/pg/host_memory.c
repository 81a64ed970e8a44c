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

#include "host_memory.h"

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
