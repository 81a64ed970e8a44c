/*
 * pipeline_approx_cg.c - nystrom ridge by "solver": "cg" (issue 31): the
 * approximate regression road's passes for the preconditioned conjugate
 * gradient of learn/cg.h, after the basis pass (pipeline_approx.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "approx.h"
#include "basis.h"
#include "learn/cg.h"
#include "learn/cg_sample.h"
#include "method.h"
#include "model.h"
#include "pipeline_approx_job.h"
#include "primal_pass.h"
#include "progress.h"

/* Flops of one uninterruptible piece of features (pipeline_approx.c's). */
#define CG_PIECE_FLOPS 1e9

/* What the passes of "solver": "cg" read: the job and the solver. */
typedef struct cg_point
{
	approx_job *job;
	km_cg	   *cg;
	uint32_t	capacity;		/* the sample pass: rows kept at most */
	uint64_t	threshold;		/* ... of hash at most this */
	double	   *x0;				/* the first pass: the start point (m) */
	bool		warm;			/* ... not 0: Z^T (Z x0) summed too */
} cg_point;

/* Memory from the job's env, as long as the model. */
static void *
cg_alloc(approx_job *job, size_t doubles)
{
	return job->env->alloc(job->env->ctx, doubles * sizeof(double));
}

/* A CG pass's point: the job (shape and basis) and, for Z^T (Z v), v. */
static void
cg_point_put(const km_pass *pass, km_point_writer *w)
{
	const cg_point *pt = pass->at;

	km_approx_point_put_job(w, pt->job);
	if (pass->kind == KM_PASS_KIND_CG_HV)
		km_point_put_doubles(w, pt->cg->v, pt->cg->m);
	if (pass->kind == KM_PASS_KIND_CG_RHS)
		km_point_put_doubles(w, pt->x0, pt->cg->m);
	if (pass->kind == KM_PASS_KIND_CG_SAMPLE)
	{
		km_point_put_u32(w, pt->capacity);
		km_point_put_u64(w, pt->threshold);
	}
}

static size_t
cg_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	cg_point_put(pass, &w);
	return w.len;
}

static void
cg_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	cg_point_put(pass, &w);
}

static void
cg_zero_init(km_pass *pass, void *state)
{
	memset(state, 0, pass->state_bytes);
}

/*
 * The job's pass, made a CG pass of kind over every row in chunks of
 * PRIMAL_BLOCK, its state zeroed and added (the host may split the rows:
 * its point travels).
 */
static km_pass *
cg_pass(approx_job *job, cg_point *pt, uint16_t kind, size_t state_bytes,
		km_pass_add_fn add)
{
	km_pass    *p = &job->pass;

	snprintf(p->what, sizeof(p->what), "%s",
			 kind == KM_PASS_KIND_CG_RHS ? "cg: right-hand side" :
			 kind == KM_PASS_KIND_CG_SAMPLE ? "cg: preconditioner sample" : "cg");
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = PRIMAL_BLOCK;
	p->state_bytes = state_bytes;
	p->ordered = false;
	p->at = pt;
	p->init = cg_zero_init;
	p->add = add;
	p->end = NULL;
	p->combine = NULL;
	p->interrupt = job->env->interrupt;
	p->kind = kind;
	p->point_bytes = cg_point_bytes;
	p->point_write = cg_point_write;
	return p;
}

/* The buffers of a chunk's features. */
static void
cg_buffers(approx_job *job)
{
	job->Z = cg_alloc(job, (size_t) PRIMAL_BLOCK * job->b.m);
	job->fwork = cg_alloc(job, km_approx_features_doubles(&job->b, PRIMAL_BLOCK) + 1);
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

/* A chunk's features into the first pass's sums (and Z^T (Z x0) from a start x0). */
static km_status
cg_rhs_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	cg_point   *pt = pass->at;
	approx_job *job = pt->job;

	if (km_pass_rows_check(pass, rows, job->rows->d, true, 0, false, first, err) != KM_OK ||
		cg_features(job, rows, first, err) != KM_OK)
		return err->status;
	km_cg_rhs_add(job->b.m, state, job->Z, rows->y, rows->n, pt->warm ? pt->x0 : NULL,
				  pt->cg->t);
	return KM_OK;
}

/* Is x (m) a start other than 0? */
static bool
cg_warm(const double *x, uint32_t m)
{
	for (uint32_t j = 0; j < m; j++)
		if (x[j] != 0.0)
			return true;
	return false;
}

/* A chunk's features into Z^T (Z v), v the solver's point. */
static km_status
cg_hv_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	cg_point   *pt = pass->at;

	if (km_pass_rows_check(pass, rows, pt->job->rows->d, false, 0, false, first, err) != KM_OK ||
		cg_features(pt->job, rows, first, err) != KM_OK)
		return err->status;
	km_cg_hv_add(pt->cg, state, pt->job->Z, rows->n);
	return KM_OK;
}

/* The sample pass's state: checked (the host's, untrusted), then the chunk's rows offered. */
static km_status
cg_sample_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	cg_point   *pt = pass->at;
	approx_job *job = pt->job;
	uint32_t	d = (uint32_t) job->rows->d;

	if (km_pass_rows_check(pass, rows, job->rows->d, true, 0, true, first, err) != KM_OK ||
		km_cg_sample_check(state, pass->state_bytes, pt->capacity, d, pt->threshold,
						   err) != KM_OK ||
		km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs,
							 err) != KM_OK)
		return err->status;
	for (size_t i = 0; i < rows->n; i++)
		km_cg_sample_offer(state, job->Xs + i * d, rows->y[i], rows->hash[i]);
	return KM_OK;
}

static km_status
cg_sample_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	const cg_point *pt = pass->at;
	uint32_t	d = (uint32_t) pt->job->rows->d;

	if (km_cg_sample_check(into, pass->state_bytes, pt->capacity, d, pt->threshold,
						   err) != KM_OK ||
		km_cg_sample_check(from, pass->state_bytes, pt->capacity, d, pt->threshold,
						   err) != KM_OK)
		return err->status;
	km_cg_sample_combine(into, from);
	return KM_OK;
}

static void
cg_sample_init(km_pass *pass, void *state)
{
	const cg_point *pt = pass->at;

	km_cg_sample_init(state, pt->capacity, (uint32_t) pt->job->rows->d, pt->threshold);
}

/* The sample pass of pt's capacity and threshold. */
static km_pass *
cg_sample_pass(approx_job *job, cg_point *pt)
{
	km_pass    *p = cg_pass(job, pt, KM_PASS_KIND_CG_SAMPLE,
							km_cg_sample_bytes(pt->capacity, (uint32_t) job->rows->d),
							cg_sample_add);

	p->init = cg_sample_init;
	p->combine = cg_sample_combine;
	return p;
}

/*
 * The preconditioner from a sample of the rows (learn/cg_sample.h) when
 * one is worth its cost and did not overflow (*done; else the caller
 * builds Falkon's from the centres after the first pass): the sample pass,
 * then, over its rows in sorted order, G = K_Sm^T K_Sm into cg->R and r_s =
 * K_Sm^T (y_S - mean y_S) (pieces of at most CG_PIECE_FLOPS, an interrupt
 * check after each), R, and the start the sample's own ridge solution
 * (km_cg_sample_start: beta0, x0).
 */
static km_status
cg_precondition_sample(approx_job *job, cg_point *pt, bool *done, double *beta0,
					   km_error *err)
{
	km_cg	   *cg = pt->cg;
	uint32_t	m = job->b.m;
	uint32_t	d = (uint32_t) job->rows->d;
	uint32_t	e = km_cg_sample_rows(m, d, job->rows->n);
	km_cg_sample *st;
	double	   *S;
	double	   *yS;
	double	   *rS;
	double		ybar = 0.0;
	void	   *scratch;
	uint32_t	s;
	size_t		rows;
	size_t		piece;

	*done = false;
	if (e == 0)
		return KM_OK;
	pt->capacity = km_cg_sample_capacity(e);
	pt->threshold = km_cg_sample_threshold(e, job->rows->n);
	st = job->env->alloc(job->env->ctx, km_cg_sample_bytes(pt->capacity, d));
	if (km_pass_run(job->host, cg_sample_pass(job, pt), st, &rows, err) != KM_OK)
		return err->status;
	if (st->overflowed || st->n == 0)
	{
		/* many copies of a few rows below the threshold: Falkon's from the centres */
		job->env->release(job->env->ctx, st);
		return KM_OK;
	}
	if (km_cg_sample_first_nonfinite(st) != st->n)
		return km_fail(err, KM_ERR_INVALID, "preconditioner sample holds a value that is not finite",
					   "Sampled row %u of %u has a feature or target that is not finite.",
					   (unsigned) km_cg_sample_first_nonfinite(st) + 1, (unsigned) st->n);
	S = cg_alloc(job, (size_t) st->n * d + 1);
	yS = cg_alloc(job, (size_t) st->n + 1);
	rS = cg_alloc(job, m);
	scratch = job->env->alloc(job->env->ctx, km_cg_sample_sort_bytes(st->capacity));
	s = km_cg_sample_sorted(st, S, yS, scratch);
	job->env->release(job->env->ctx, scratch);
	job->env->release(job->env->ctx, st);
	km_progress_phase("cg: preconditioner sums, %u sampled rows", (unsigned) s);
	if (job->opts.fit_intercept)
	{
		for (uint32_t i = 0; i < s; i++)
			ybar += yS[i];
		ybar /= (double) s;
	}
	for (uint32_t i = 0; i < s; i++)
		yS[i] -= ybar;
	memset(cg->R, 0, sizeof(double) * m * m);
	memset(rS, 0, sizeof(double) * m);
	piece = (size_t) (CG_PIECE_FLOPS / ((double) m * (double) m));
	if (piece < 1)
		piece = 1;
	if (piece > PRIMAL_BLOCK)
		piece = PRIMAL_BLOCK;
	for (size_t i0 = 0; i0 < s; i0 += piece)
	{
		size_t		r = s - i0 < piece ? s - i0 : piece;

		if (km_approx_features(&job->b, S + i0 * d, r, job->Z, job->fwork, err) != KM_OK)
			return err->status;
		/* Z (r x m, row-major) is Z^T column-major: R += Z^T Z, r_s += Z^T y */
		cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) m, (int) r, 1.0,
					job->Z, (int) m, 1.0, cg->R, (int) m);
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) r, (int) m, 1.0, job->Z, (int) m,
					yS + i0, 1, 1.0, rS, 1);
		km_check_interrupts(job->env->interrupt);
	}
	job->env->release(job->env->ctx, S);
	job->env->release(job->env->ctx, yS);
	if (km_cg_precondition_sample(cg, (double) rows, (double) s, err) != KM_OK)
		return err->status;
	/* the sums scaled as the preconditioner's: n / s */
	cblas_dscal((int) m, (double) rows / (double) s, rS, 1);
	km_cg_sample_start(cg, rS, beta0, pt->x0);
	job->env->release(job->env->ctx, rS);
	pt->warm = cg_warm(pt->x0, m);
	*done = true;
	return KM_OK;
}

/*
 * Nystrom ridge by "solver": "cg" (learn/cg.h), after the basis pass: the
 * factor of K_mm + eps I (the direct solve's ladder), the preconditioner
 * from a sample of the rows and the start the sample's solution (when a
 * sample is worth it), one pass for Z^T (y - ybar) and Z^T (Z x0), Falkon's
 * preconditioner after it when there was no sample, then one pass per
 * iteration; the model as the direct solve's at its one lambda.
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
	double	   *beta0 = cg_alloc(job, mm);
	double	   *r0 = cg_alloc(job, mm);
	km_cg		cg = {.lambda = o->lambdas.v[0], .tol = o->fit.tol,
	.max_iter = o->fit.max_iter, .interrupt = env->interrupt};
	cg_point	pt = {job, &cg};
	km_approx_result ar = {0};
	km_pass    *pass;
	size_t		rows;
	double		n;
	double		ybar;
	double		syy;
	bool		sampled;

	if (km_approx_factor(&job->b, L, &ar.eps, fwork, err, env->interrupt) != KM_OK)
		return err->status;
	env->release(env->ctx, fwork);
	km_cg_buffers(&cg, mm, L, cg_alloc(job, km_cg_doubles(mm)));
	cg_buffers(job);
	pt.x0 = cg_alloc(job, mm);
	memset(pt.x0, 0, sizeof(double) * mm);
	memset(beta0, 0, sizeof(double) * mm);
	km_progress_stage("cg: m = %u, %zu rows, lambda %g", mm, job->rows->n, cg.lambda);
	if (cg_precondition_sample(job, &pt, &sampled, beta0, err) != KM_OK)
		return err->status;
	pass = cg_pass(job, &pt, KM_PASS_KIND_CG_RHS, sizeof(double) * KM_CG_RHS_DOUBLES(mm),
				   cg_rhs_add);
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
	if (!sampled && km_cg_precondition(&cg, n, err) != KM_OK)
		return err->status;
	pass = cg_pass(job, &pt, KM_PASS_KIND_CG_HV, sizeof(double) * mm, cg_hv_add);
	if (pt.warm)
	{
		/* r0 = r - (Z^T Z x0 + lambda L L^T x0) */
		double	   *hx = st + 2 * (size_t) mm + 3;

		memcpy(r0, hx, sizeof(double) * mm);
		km_cg_add_penalty(&cg, pt.x0, r0);
		for (uint32_t j = 0; j < mm; j++)
			r0[j] = st[j] - r0[j];
		if (km_cg_solve_from(&cg, job->host, pass, st, r0, beta0, coef, err) != KM_OK)
			return err->status;
	}
	else if (km_cg_solve(&cg, job->host, pass, st, coef, err) != KM_OK)
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


km_status
km_cg_pass_rebuild(uint16_t kind, km_point_reader *r, const km_train_env *env,
				   km_pass **out, km_error *err)
{
	approx_job *job = env->alloc(env->ctx, sizeof(approx_job));
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));
	cg_point   *pt = env->alloc(env->ctx, sizeof(cg_point));
	km_cg	   *cg = env->alloc(env->ctx, sizeof(km_cg));
	uint32_t	m;

	*out = NULL;
	if (km_approx_point_get_job(r, job, rows, env, err) != KM_OK)
		return err->status;
	m = job->b.m;
	if (km_repr_check_cg_point(job->b.kind, err) != KM_OK)
		return err->status;
	memset(cg, 0, sizeof(*cg));
	cg->m = m;
	cg->t = cg_alloc(job, KM_BLOCK_ROWS);
	memset(pt, 0, sizeof(*pt));
	if (kind == KM_PASS_KIND_CG_HV || kind == KM_PASS_KIND_CG_RHS)
	{
		const unsigned char *at = km_point_get_doubles(r, m);
		double	   *v = cg_alloc(job, m);

		if (at == NULL || !km_point_copy_doubles(v, at, m))
			return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
						   "The conjugate gradient's point is not %u finite values.",
						   (unsigned) m);
		if (kind == KM_PASS_KIND_CG_HV)
			cg->v = v;
		else
		{
			pt->x0 = v;
			pt->warm = cg_warm(v, m);
		}
	}
	if (kind == KM_PASS_KIND_CG_SAMPLE)
	{
		uint32_t	e = km_cg_sample_rows(m, (uint32_t) job->rows->d, job->rows->n);

		pt->capacity = km_point_get_u32(r);
		pt->threshold = km_point_get_u64(r);
		/* the pass this job would ask, nothing larger */
		if (r->bad || e == 0 || pt->capacity != km_cg_sample_capacity(e) ||
			pt->threshold != km_cg_sample_threshold(e, job->rows->n))
			return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
						   "The preconditioner sample keeps %u rows below hash %llu; its job samples %u.",
						   (unsigned) pt->capacity, (unsigned long long) pt->threshold,
						   (unsigned) e);
	}
	if (r->left != 0)
		return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
					   "Pass kind %u has %zu bytes after its point.", (unsigned) kind, r->left);
	pt->job = job;
	pt->cg = cg;
	cg_buffers(job);
	if (kind == KM_PASS_KIND_CG_SAMPLE)
		*out = cg_sample_pass(job, pt);
	else
		*out = kind == KM_PASS_KIND_CG_RHS ?
			cg_pass(job, pt, kind, sizeof(double) * KM_CG_RHS_DOUBLES(m), cg_rhs_add) :
			cg_pass(job, pt, kind, sizeof(double) * m, cg_hv_add);
	return KM_OK;
}
