/*
 * pipeline_approx_cg.c - nystrom ridge by "solver": "cg" (issue 31): the
 * approximate regression road's passes for the preconditioned conjugate
 * gradient of learn/cg.h, after the basis pass (pipeline_approx.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "approx.h"
#include "basis.h"
#include "learn/cg.h"
#include "method.h"
#include "model.h"
#include "pipeline_approx_job.h"
#include "primal_pass.h"
#include "progress.h"

/* Flops of one uninterruptible piece of features (pipeline_approx.c's). */
#define CG_PIECE_FLOPS 1e9

double
km_approx_cg_bytes(const km_basis *shape, size_t n)
{
	uint32_t	m = shape->m;
	size_t		cgd = km_cg_doubles(m);
	size_t		fac = km_approx_factor_doubles(m);
	size_t		feat = km_approx_features_doubles(shape, PRIMAL_BLOCK);

	if (cgd == 0 || fac == 0 || feat == 0)
		return INFINITY;
	/* L, then the factor's work or (after it) R and the vectors; a chunk's features */
	return 8.0 * ((double) m * m + (double) (cgd > fac ? cgd : fac) + (double) feat +
				  PRIMAL_BLOCK * (double) m + (double) KM_CG_RHS_DOUBLES(m) +
				  (double) KM_XS_ROWS(n) * shape->d + 2.0 * m);
}

/* What the passes of "solver": "cg" read: the job and the solver. */
typedef struct cg_point
{
	approx_job *job;
	km_cg	   *cg;
} cg_point;

/*
 * This file calls nothing of pipeline_approx.c, which calls it (no import
 * circle): its memory, passes and features are asked of the layers below.
 */
static void *
cg_alloc(approx_job *job, size_t doubles)
{
	return job->env->alloc(job->env->ctx, doubles * sizeof(double));
}

/* The job's pass, made a CG pass over every row in chunks of PRIMAL_BLOCK. */
static km_pass *
cg_pass(approx_job *job, cg_point *pt, const char *what, size_t state_bytes,
		km_pass_add_fn add)
{
	km_pass    *p = &job->pass;

	snprintf(p->what, sizeof(p->what), "%s", what);
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = PRIMAL_BLOCK;
	p->state_bytes = state_bytes;
	p->ordered = false;
	p->at = pt;
	p->init = NULL;
	p->add = add;
	p->end = NULL;
	p->combine = NULL;
	p->interrupt = job->env->interrupt;
	return p;
}

/*
 * The features K(x, c_j) of a chunk into job->Z (standardized, not
 * whitened), in pieces of at most CG_PIECE_FLOPS with an interrupt check
 * after each.
 */
static km_status
cg_features(approx_job *job, const km_block *rows, size_t first, km_error *err)
{
	uint32_t	d = (uint32_t) job->rows->d;
	uint32_t	m = job->b.m;
	size_t		piece = km_primal_piece_rows(m, d, false, rows->n, CG_PIECE_FLOPS);

	if (km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs,
							 err) != KM_OK)
		return err->status;
	for (size_t p0 = 0; p0 < rows->n; p0 += piece)
	{
		size_t		r = rows->n - p0 < piece ? rows->n - p0 : piece;

		if (km_approx_features(&job->b, job->Xs + p0 * d, r, job->Z + p0 * m, job->fwork,
							   err) != KM_OK)
			return err->status;
		km_check_interrupts(job->env->interrupt);
	}
	return KM_OK;
}

/* A chunk's features into the first pass's sums. */
static km_status
cg_rhs_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	approx_job *job = ((cg_point *) pass->at)->job;

	if (cg_features(job, rows, first, err) != KM_OK)
		return err->status;
	km_cg_rhs_add(job->b.m, state, job->Z, rows->y, rows->n);
	return KM_OK;
}

/* A chunk's features into Z^T (Z v), v the solver's point. */
static km_status
cg_hv_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	cg_point   *pt = pass->at;

	if (cg_features(pt->job, rows, first, err) != KM_OK)
		return err->status;
	km_cg_hv_add(pt->cg, state, pt->job->Z, rows->n);
	return KM_OK;
}

static void
cg_rhs_init(km_pass *pass, void *state)
{
	memset(state, 0, pass->state_bytes);
}

/*
 * Nystrom ridge by "solver": "cg" (learn/cg.h), after the basis pass: the
 * factor of K_mm + eps I (the direct solve's ladder), one pass for
 * Z^T (y - ybar), the preconditioner, then one pass per iteration; the
 * model as the direct solve's at its one lambda.
 */
km_status
km_approx_job_cg(approx_job *job, km_model *m, km_error *err)
{
	const km_options *o = &job->opts;
	const km_train_env *env = job->env;
	uint32_t	mm = job->b.m;
	double	   *fwork = cg_alloc(job, km_approx_factor_doubles(mm) + 1);
	double	   *L = cg_alloc(job, (size_t) mm * mm);
	double	   *st = cg_alloc(job, KM_CG_RHS_DOUBLES(mm));
	double	   *coef = cg_alloc(job, mm);
	km_cg		cg = {.lambda = o->lambdas.v[0], .tol = o->fit.tol,
	.max_iter = o->fit.max_iter, .interrupt = env->interrupt};
	cg_point	pt = {job, &cg};
	km_approx_result ar = {0};
	km_pass    *pass;
	size_t		rows;
	double		n;
	double		ybar;
	double		syy;

	if (km_approx_factor(&job->b, L, &ar.eps, fwork, err, env->interrupt) != KM_OK)
		return err->status;
	env->release(env->ctx, fwork);
	km_cg_buffers(&cg, mm, L, cg_alloc(job, km_cg_doubles(mm)));
	job->Z = cg_alloc(job, (size_t) PRIMAL_BLOCK * mm);
	job->fwork = cg_alloc(job, km_approx_features_doubles(&job->b, PRIMAL_BLOCK) + 1);
	pass = cg_pass(job, &pt, "cg: right-hand side", sizeof(double) * KM_CG_RHS_DOUBLES(mm),
				   cg_rhs_add);
	pass->init = cg_rhs_init;
	if (km_pass_run(job->host, pass, st, &rows, err) != KM_OK)
		return err->status;
	n = st[2 * (size_t) mm + 2];
	if (!(n >= 1.0))
		return km_fail(err, KM_ERR_INVALID, "training state has no rows",
					   "The conjugate gradient's first pass read %zu rows.", rows);
	ybar = o->fit_intercept ? st[2 * (size_t) mm] / n : 0.0;
	/* r = Z^T y - ybar Z^T 1; syy = sum (y - ybar)^2 */
	for (uint32_t j = 0; j < mm; j++)
		st[j] -= ybar * st[mm + j];
	syy = st[2 * (size_t) mm + 1] - 2.0 * ybar * st[2 * (size_t) mm] + n * ybar * ybar;
	km_progress_stage("cg: m = %u, %.0f rows, lambda %g", mm, n, cg.lambda);
	if (km_cg_precondition(&cg, n, err) != KM_OK)
		return err->status;
	pass = cg_pass(job, &pt, "cg", 0, cg_hv_add);
	if (km_cg_solve(&cg, job->host, pass, st, coef, err) != KM_OK)
		return err->status;
	ar.lambda = cg.lambda;
	ar.intercept = ybar;
	ar.rank = mm;
	ar.train_rmse = sqrt(fmax(syy - cg.explained, 0.0) / n);
	ar.relative_residual = cg.residual;
	ar.rows = (uint64_t) n;
	memset(m, 0, sizeof(*m));
	km_approx_model_fill(&job->b, (uint32_t) o->components, &ar.lambda, 1,
						 o->fit_intercept, coef, &ar, NULL, m);
	m->method = km_method_approx_sums()->id;
	m->task = km_method_approx_sums()->task;
	m->rows_skipped = job->rows->rows_skipped;
	m->converged = cg.converged;
	m->iterations = cg.iterations;
	return KM_OK;
}

