/*
 * learner.c - the learner's entry (learner.h): the task's road over a host,
 * an exact one after its gather pass.
 */
#include <stdio.h>
#include <string.h>

#include "learn/drift_pass.h"
#include "learn/learner.h"
#include "learn/point.h"
#include "learn/score_pass.h"
#include "learn/score_regression.h"
#include "pipeline_approx_job.h"
#include "pipeline_primal.h"
#include "pipeline_approx_classify.h"
#include "pipeline_rows.h"
#include "pipeline.h"
#include "repr.h"
#include "task.h"

/* The rows a gather pass took: the host's own arrays, or copies appended. */
typedef struct gathered
{
	const km_train_env *env;
	size_t		n;				/* the shape's rows: what the copies hold */
	int			d;
	bool		copied;
	double	   *X;
	double	   *y;
	uint32_t   *cls;
	uint64_t   *hash;
	int		   *fold;
	const double *hX;			/* the host's, when it handed them in one block */
	const double *hy;
	const uint32_t *hcls;
	const uint64_t *hhash;
	const int  *hfold;
} gathered;

/* n items of size bytes from the env, or NULL when the rows carry none */
static void *
gather_alloc(const km_train_env *env, bool has, size_t n, size_t size)
{
	return has ? env->alloc(env->ctx, n * size + 1) : NULL;
}

/*
 * Every row: one block of all of them is kept as the host holds it (the
 * memory host's, bit for bit as km_train had them); else each block is
 * appended to copies of the shape's size.
 */
static km_status
gather_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		   km_error *err)
{
	gathered   *g = state;
	size_t		d = (size_t) rows->d;

	if (first + rows->n > g->n || rows->d != g->d)
		return km_fail(err, KM_ERR_INVALID, "the host handed rows the shape does not have",
					   "Rows %zu to %zu of %d features; the shape has %zu rows of %d.",
					   first + 1, first + rows->n, rows->d, g->n, g->d);
	if (first == 0 && rows->n == g->n)
	{
		g->hX = rows->X;
		g->hy = rows->y;
		g->hcls = rows->cls;
		g->hhash = rows->hash;
		g->hfold = rows->fold;
		return KM_OK;
	}
	if (!g->copied)
	{
		g->copied = true;
		g->X = gather_alloc(g->env, true, g->n * d, sizeof(double));
		g->y = gather_alloc(g->env, rows->y != NULL, g->n, sizeof(double));
		g->cls = gather_alloc(g->env, rows->cls != NULL, g->n, sizeof(uint32_t));
		g->hash = gather_alloc(g->env, rows->hash != NULL, g->n, sizeof(uint64_t));
		g->fold = gather_alloc(g->env, rows->fold != NULL, g->n, sizeof(int));
	}
	memcpy(g->X + first * d, rows->X, sizeof(double) * rows->n * d);
	if (g->y && rows->y)
		memcpy(g->y + first, rows->y, sizeof(double) * rows->n);
	if (g->cls && rows->cls)
		memcpy(g->cls + first, rows->cls, sizeof(uint32_t) * rows->n);
	if (g->hash && rows->hash)
		memcpy(g->hash + first, rows->hash, sizeof(uint64_t) * rows->n);
	if (g->fold && rows->fold)
		memcpy(g->fold + first, rows->fold, sizeof(int) * rows->n);
	return KM_OK;
}

/*
 * An exact method's one pass, "gather", then its fit on the rows in
 * memory (km_train's road).  A classifier's rows are standardized in place:
 * the copies are the learner's; rows the host handed in one block are the
 * host's own writable copy (host_memory.c).
 */
static km_status
learn_exact(const km_rows *shape, const km_host *host, const km_task_train *road,
			const km_train_plan *plan, const km_train_env *env, km_model *m,
			km_error *err)
{
	gathered	g;
	km_pass		pass;
	km_rows		rows = *shape;
	km_class_rows classes;
	size_t		read;

	memset(&g, 0, sizeof(g));
	memset(&pass, 0, sizeof(pass));
	g.env = env;
	g.n = shape->n;
	g.d = shape->d;
	snprintf(pass.what, sizeof(pass.what), "gather");
	pass.side = KM_SIDE_ALL;
	pass.fold = -1;
	pass.state_bytes = sizeof(g);
	pass.ordered = true;
	pass.whole = true;
	pass.add = gather_add;
	pass.interrupt = env->interrupt;
	if (km_pass_run(host, &pass, &g, &read, err) != KM_OK)
		return err->status;
	if (read != shape->n)
		return km_fail(err, KM_ERR_INVALID, "the host handed rows the shape does not have",
					   "The gather read %zu rows of %zu.", read, shape->n);
	rows.X = g.copied ? g.X : g.hX;
	rows.y = g.copied ? g.y : g.hy;
	rows.hash = g.copied ? g.hash : g.hhash;
	rows.fold = g.copied ? g.fold : g.hfold;
	if (shape->classes != NULL)
	{
		classes = *shape->classes;
		classes.cls = g.copied ? g.cls : g.hcls;
		/* writable: the learner's copy, or the host's own (see above) */
		classes.X = g.copied ? g.X : (double *) (uintptr_t) g.hX;
		rows.classes = &classes;
	}
	return road->train(&rows, plan, env, m, err);
}

km_status
km_learn(const km_rows *shape, const km_host *host, const km_train_plan *plan,
		 const km_train_env *env, km_model *m, km_error *err)
{
	const km_task_train *road = km_task_road(plan->task);
	km_rows		rows = {0};
	km_class_rows classes;
	km_basis_step steps[KM_BASIS_MAX_STEPS];

	if (km_task_check_rows(road != NULL ? plan->task : NULL, shape->classes != NULL,
						   err) != KM_OK)
		return err->status;
	/* the shape without a row array: every row comes from the host */
	rows.n = shape->n;
	rows.d = shape->d;
	rows.rows_skipped = shape->rows_skipped;
	rows.gamma_order = shape->gamma_order;
	if (shape->classes != NULL)
	{
		classes = *shape->classes;
		classes.X = NULL;
		classes.cls = NULL;
		rows.classes = &classes;
	}
	/* the representation's basis list: the exact expansion's is one gather */
	if (km_repr_basis_steps(km_repr_lookup(plan->opts.approximation), plan->opts.centres,
							steps) == 1 && steps[0] == KM_BASIS_GATHER)
		return learn_exact(&rows, host, road, plan, env, m, err);
	return road->train_approx(&rows, host, plan, env, m, err);
}

km_status
km_pass_rebuild(uint16_t kind, const void *point, size_t len,
				const km_train_env *env, km_pass **out, km_error *err)
{
	km_point_reader r = {point, len, false};
	km_status	st;

	*out = NULL;
	if (kind == KM_PASS_KIND_DRIFT)
		st = km_drift_pass_rebuild(&r, env, out, err);
	else if (kind == KM_PASS_KIND_SCORE)
		st = km_score_pass_rebuild(&r, env, out, err);
	else if (kind == KM_PASS_KIND_SCORE_REGRESSION)
		st = km_regression_score_rebuild(&r, env, out, err);
	else if (kind == KM_PASS_KIND_BASIS || kind == KM_PASS_KIND_SUMS)
		st = km_approx_pass_rebuild(kind, &r, env, out, err);
	else if (kind == KM_PASS_KIND_CG_RHS || kind == KM_PASS_KIND_CG_HV ||
			 kind == KM_PASS_KIND_CG_SAMPLE)
		st = km_cg_pass_rebuild(kind, &r, env, out, err);
	else if (km_primal_pass_rebuild(kind, &r, env, out, err) != KM_OK ||
			 (*out == NULL && km_class_pass_rebuild(kind, &r, env, out, err) != KM_OK) ||
			 (*out == NULL && km_rows_pass_rebuild(kind, &r, env, out, err) != KM_OK))
		st = err->status;
	else if (*out != NULL)
		st = KM_OK;
	else
		st = km_fail(err, KM_ERR_FORMAT, "pass point has an unknown kind",
					 "Pass kind %u is not one this build runs.", (unsigned) kind);
	if (st == KM_OK)
		return KM_OK;
	/* a basis's or drift reference's version or checksum too: bytes that are not a point */
	*out = NULL;
	err->status = KM_ERR_FORMAT;
	return KM_ERR_FORMAT;
}
