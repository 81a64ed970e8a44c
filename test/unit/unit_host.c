/*
 * unit_host.c - the unit tests' host over arrays (unit_host.h).
 */
#include "unit_host.h"

typedef struct array_host
{
	const km_rows *rows;
	size_t		block;
} array_host;

static km_status
array_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	const array_host *h = ctx;
	const km_rows *r = h->rows;
	const uint32_t *cls = r->classes ? r->classes->cls : NULL;
	size_t		step = pass->whole && h->block == KM_BLOCK_ROWS && r->n > 0 ? r->n : h->block;

	for (size_t i0 = 0; i0 < r->n; i0 += step)
	{
		km_block	b = {.n = r->n - i0 < step ? r->n - i0 : step, .d = r->d,
			.X = r->X + i0 * (size_t) r->d,
			.y = r->y ? r->y + i0 : NULL,
			.cls = cls ? cls + i0 : NULL,
			.hash = r->hash ? r->hash + i0 : NULL,
		.fold = r->fold ? r->fold + i0 : NULL};

		if (km_pass_feed(pass, &b, state, err) != KM_OK)
			return err->status;
	}
	return KM_OK;
}

km_status
unit_learn_blocks(const km_rows *rows, const km_train_plan *plan,
				  const km_train_env *env, km_model *m, km_error *err, size_t block)
{
	array_host	h = {rows, block ? block : KM_BLOCK_ROWS};
	km_host		host = {.ctx = &h, .rows = rows->n, .folds = rows->fold != NULL,
	.run = array_run};

	if (plan->approximate && rows->hash == NULL)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows without hashes.", rows->n);
	return km_learn(rows, &host, plan, env, m, err);
}

km_status
unit_learn(const km_rows *rows, const km_train_plan *plan,
		   const km_train_env *env, km_model *m, km_error *err)
{
	return unit_learn_blocks(rows, plan, env, m, err, 0);
}
