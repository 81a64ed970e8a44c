/*
 * pipeline_approx.c - the learner's approximate regression (pipeline.h,
 * learn/learner.h).
 *
 * Every walk over the rows is a pass asked of the host (learn/pass.h): a
 * basis pass (the centres of the smallest hashes, the scaler; rff's
 * features drawn from the seed), then the rows' features a chunk at a
 * time, standardized by the basis's scaler,
 * into what the method trains from: ridge's m x m sums (accum.h), solved in
 * closed form with GCV over the lambdas (km_train_approx_solve, which the
 * kernel_train(features, y, basis) aggregate's final function calls too),
 * or a method's primal Newton passes (its primal_add .. primal_result
 * pieces, driven by the one Newton, learn/newton.h; nystrom's features
 * whitened by L^-1, so that the penalty is I), then the model.  The chunks
 * are 0.3.0's blocks, so that every model comes out bit for bit as before.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basis.h"
#include "metrics.h"
#include "model.h"
#include "pipeline_approx.h"
#include "pipeline_approx_job.h"
#include "primal.h"
#include "primal_pass.h"
#include "progress.h"
#include "repr.h"
#include "select.h"
#include "solve.h"

/* Rows per block of ridge's sums (the aggregate's buffer, src/sql/approx.c). */
#define SUMS_BLOCK 256

/* The memory host's blocks hold whole chunks of every pass: no row is copied. */
KM_STATIC_ASSERT(KM_BLOCK_ROWS % PRIMAL_BLOCK == 0 && KM_BLOCK_ROWS % SUMS_BLOCK == 0,
				 host_blocks_hold_chunks);

/* Flops of one uninterruptible piece of features (about 0.1 s on one core). */
#define PIECE_FLOPS 1e9

uint32_t
km_approx_job_components(const km_options *o, size_t n)
{
	if (km_repr_lookup(o->approximation)->centres && (size_t) o->components > n)
		return (uint32_t) n;
	return (uint32_t) o->components;
}

void *
km_approx_job_alloc(approx_job *job, size_t doubles)
{
	return job->env->alloc(job->env->ctx, doubles * sizeof(double));
}

/*
 * Doubles of a primal fit's buffers (0.3.0's estimate of svr's in-memory
 * loop, kept so that the plan's memory is as before): the Newton's state,
 * add scratch, vectors and step work, the penalty, a chunk's decision values.
 */
static size_t
primal_fit_doubles(uint32_t m)
{
	size_t		mm = m;
	size_t		own = km_primal_state_doubles(m) + km_primal_add_scratch_doubles(m, PRIMAL_BLOCK)
		+ 2 * mm + km_primal_step_work_doubles(m) + mm * mm;

	return own == 0 || own > SIZE_MAX / 8 - PRIMAL_BLOCK ? 0 : own + PRIMAL_BLOCK;
}

void
km_train_plan_approx(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_options *o = &plan->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	uint32_t	m = km_approx_job_components(o, n);
	size_t		sbytes = km_basis_state_bytes(o->approximation, (uint32_t) d,
											  (uint32_t) o->components);
	km_basis	shape = {.kind = o->approximation, .d = (uint32_t) d, .m = m};
	double		rest;

	plan->approximate = true;
	if (ops != NULL && ops->primal_add != NULL)
	{
		size_t		fit = primal_fit_doubles(m);
		size_t		feat = km_approx_features_doubles(&shape, PRIMAL_BLOCK);

		if (fit == 0 || feat == 0)
			sbytes = 0;
		rest = 8.0 * ((double) fit + (double) feat + 2.0 * m * (double) m +
					  PRIMAL_BLOCK * (double) m + KM_XS_ROWS(n) * (double) d + m);
	}
	else if (o->fit.solver == KM_SOLVER_CG)
	{
		rest = km_approx_cg_bytes(&shape, n);
		if (!isfinite(rest))
			sbytes = 0;
	}
	else
	{
		if (km_accum_bytes(KM_ACCUM_GRAM, m) == 0)
			sbytes = 0;
		rest = (double) km_accum_bytes(KM_ACCUM_GRAM, m) +
			8.0 * ((double) m * m + (double) km_approx_solve_doubles(m) + 2.0 * m) +
			8.0 * SUMS_BLOCK * ((double) m + 2.0 * d) +
			8.0 * (double) km_approx_features_doubles(&shape, SUMS_BLOCK);
	}
	if (ops != NULL && ops->primal_add != NULL && km_options_selects(o))
	{
		/* k-fold: the candidates, a block of training rows, the glue's folds and ranking */
		plan->ncand = o->gammas.n * o->lambdas.n;
		rest += 8.0 * ((double) PRIMAL_BLOCK * (m + 1.0) + m + o->folds +
					   4.0 * plan->ncand) + 12.0 * (double) n;
	}
	rest += km_approx_centres_bytes(o, &shape);
	plan->basis_bytes = sbytes;
	/* and the rows' hashes, which the glue computes for the basis pass */
	plan->approx_bytes = (double) sbytes + rest + 8.0 * (double) n;
	plan->rows_bytes = 8.0 * (double) n + (ops != NULL && ops->primal_add != NULL &&
										   km_options_selects(o) ? 12.0 * (double) n : 0.0);
}

void
km_approx_job_init(approx_job *job, const km_rows *rows, const km_host *host,
				   const km_train_env *env, const km_options *opts)
{
	memset(job, 0, sizeof(*job));
	job->rows = rows;
	job->host = host;
	job->env = env;
	job->opts = *opts;
	job->holdout = -1;
	job->Xs = km_approx_job_alloc(job, KM_XS_ROWS(rows->n) * rows->d);
	job->pass.alloc = env->alloc;
	job->pass.alloc_ctx = env->ctx;
}

km_pass *
km_approx_job_pass(approx_job *job, const char *what, size_t chunk,
				   size_t state_bytes, km_pass_add_fn add)
{
	km_pass    *p = &job->pass;

	snprintf(p->what, sizeof(p->what), "%s", what);
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = chunk;
	p->state_bytes = state_bytes;
	p->ordered = false;
	p->at = job;
	p->init = NULL;
	p->add = add;
	p->end = NULL;
	p->interrupt = job->env->interrupt;
	return p;
}

/* The basis pass: every row into the reservoir by its hash, the scaler's sums. */
static km_status
basis_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	approx_job *job = pass->at;
	uint32_t	d = (uint32_t) rows->d;

	for (size_t i = 0; i < rows->n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
			job->Xs[j] = rows->X[i * d + j] + 0.0;
		km_basis_state_add(state, job->Xs, rows->hash[i]);
	}
	return KM_OK;
}

static km_status
basis_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	return km_basis_state_combine(into, from, err);
}

/* The basis of the rows (pass 1), with rff's random features drawn. */
km_status
km_approx_job_basis(approx_job *job, size_t sbytes, km_error *err)
{
	const km_options *o = &job->opts;
	const km_train_env *env = job->env;
	uint32_t	d = (uint32_t) job->rows->d;
	km_basis_state *st;
	char	   *basis;
	void	   *scratch;
	size_t		blen;
	size_t		rows;
	km_basis   *b = &job->b;
	km_pass    *pass = km_approx_job_pass(job, "basis", 0, sbytes, basis_add);

	snprintf(pass->what, sizeof(pass->what), "basis: %zu rows", job->rows->n);
	pass->combine = basis_combine;

	st = env->alloc(env->ctx, sbytes);
	km_basis_state_init(st, o->approximation, &o->fit.kernel, o->standardize,
						d, (uint32_t) o->components, (uint64_t) o->seed);
	if (km_pass_run(job->host, pass, st, &rows, err) != KM_OK)
		return err->status;
	blen = km_basis_final_bytes(st);
	basis = env->alloc(env->ctx, blen);
	job->basis_mem = basis;
	scratch = env->alloc(env->ctx, km_basis_finish_scratch_bytes(st) + 1);
	if (km_basis_finish(st, basis, scratch, err) != KM_OK)
		return err->status;
	env->release(env->ctx, scratch);
	env->release(env->ctx, st);
	if (km_basis_decode(basis, blen, b, err) != KM_OK ||
		km_approx_job_centres(job, err) != KM_OK)
		return err->status;
	if (km_repr_lookup(b->kind)->drawn)
	{
		job->W = km_approx_job_alloc(job, (size_t) b->d * b->m);
		job->bv = km_approx_job_alloc(job, b->m);
		km_rff_draw(b->kernel.gamma, b->seed, b->d, b->m, job->W, job->bv);
		b->W = job->W;
		b->b = job->bv;
	}
	return KM_OK;
}

/* A chunk of ridge's sums: z(x) z(x)^T, z y, ... */
static km_status
sums_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		 km_error *err)
{
	approx_job *job = pass->at;

	if (km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err) != KM_OK ||
		km_approx_features(&job->b, job->Xs, rows->n, job->Z, job->fwork, err) != KM_OK)
		return err->status;
	/* the m x m scratch rides behind the chunk's features */
	km_accum_gram_add(state, job->Z, rows->y, rows->n, job->Zc, job->env->interrupt);
	return KM_OK;
}

static km_status
sums_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	return km_accum_combine(into, from, err);
}

/* Ridge's sums (pass 2), SUMS_BLOCK rows at a time. */
static km_status
approx_sums(approx_job *job, km_accum **out, km_error *err)
{
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	size_t		bytes = km_accum_bytes(KM_ACCUM_GRAM, m);
	km_accum   *acc;
	size_t		rows;
	km_pass    *pass = km_approx_job_pass(job, "statistics", SUMS_BLOCK, bytes, sums_add);

	snprintf(pass->what, sizeof(pass->what), "statistics: m = %u, %zu rows", m, job->rows->n);
	pass->combine = sums_combine;
	acc = env->alloc(env->ctx, bytes);
	km_accum_init(acc, KM_ACCUM_GRAM, m);
	job->Z = km_approx_job_alloc(job, (size_t) SUMS_BLOCK * m);
	job->fwork = km_approx_job_alloc(job, km_approx_features_doubles(&job->b, SUMS_BLOCK) + 1);
	job->Zc = km_approx_job_alloc(job, (size_t) m * m);
	if (km_pass_run(job->host, pass, acc, &rows, err) != KM_OK)
		return err->status;
	env->release(env->ctx, job->Z);
	env->release(env->ctx, job->fwork);
	env->release(env->ctx, job->Zc);
	job->Z = NULL;
	job->fwork = NULL;
	job->Zc = NULL;
	*out = acc;
	return KM_OK;
}

km_status
km_train_approx_solve(const km_basis *b, uint32_t components, const km_accum *acc,
					  const double *lambdas, int n_lambdas, bool fit_intercept,
					  uint64_t rows_skipped, const km_train_env *env,
					  km_model *m, km_error *err)
{
	uint32_t	dim = b->m;
	double	   *work;
	double	   *coef;
	km_approx_result res;
	km_candidate *cand = NULL;

	km_progress_phase("solve: m = %u, %lld rows", dim, (long long) acc->rows);
	work = env->alloc(env->ctx, km_approx_solve_doubles(dim) * sizeof(double));
	coef = env->alloc(env->ctx, sizeof(double) * dim);
	if (km_approx_solve(b, acc, lambdas, n_lambdas, fit_intercept, coef, &res,
						work, err, env->interrupt) != KM_OK)
		return err->status;
	env->release(env->ctx, work);
	if (n_lambdas > 1)
		cand = env->alloc(env->ctx, sizeof(km_candidate) * n_lambdas);
	memset(m, 0, sizeof(*m));
	/* one place builds an approximate model: the core's fill */
	km_approx_model_fill(b, components, lambdas, n_lambdas, fit_intercept, coef,
						 &res, cand, m);
	m->method = km_method_approx_sums()->id;
	m->task = km_method_approx_sums()->task;
	m->rows_skipped = rows_skipped;
	return KM_OK;
}

/*
 * The features of rows X (first numbered first) into Z: standardized,
 * mapped and, for nystrom, whitened, in pieces of at most PIECE_FLOPS with
 * an interrupt check after each.
 */
km_status
km_approx_job_features(approx_job *job, const double *X, size_t first,
					   size_t rows, double *Z, km_error *err)
{
	uint32_t	d = (uint32_t) job->rows->d;
	uint32_t	m = job->b.m;
	size_t		piece = km_primal_piece_rows(m, d, job->L != NULL, rows, PIECE_FLOPS);

	if (km_basis_standardize(&job->b, X, first, rows, job->rows->d, job->Xs, err) != KM_OK)
		return err->status;
	for (size_t p0 = 0; p0 < rows; p0 += piece)
	{
		size_t		r = rows - p0 < piece ? rows - p0 : piece;

		if (km_primal_block_features(&job->b, job->L, job->Xs + p0 * d, r,
									 Z + p0 * m, job->fwork, err) != KM_OK)
			return err->status;
		km_check_interrupts(job->env->interrupt);
	}
	return KM_OK;
}

/*
 * The features of a chunk (job->Z) that the fit trains on: all of them,
 * or (k-fold) those of the rows of the pass's side, copied into job->Zc and
 * job->yc; *kept, their count.
 */
static km_status
fit_block(approx_job *job, const km_pass *pass, const km_block *rows, size_t first,
		  const double **Z, const double **y, size_t *kept, km_error *err)
{
	uint32_t	m = job->b.m;
	size_t		nt = 0;

	if (km_approx_job_features(job, rows->X, first, rows->n, job->Z, err) != KM_OK)
		return err->status;
	*Z = job->Z;
	*y = rows->y;
	*kept = rows->n;
	if (pass->side == KM_SIDE_ALL)
		return KM_OK;
	for (size_t i = 0; i < rows->n; i++)
		if (km_pass_keeps(pass, rows, i))
		{
			memcpy(job->Zc + nt * m, job->Z + i * m, sizeof(double) * m);
			job->yc[nt++] = rows->y[i];
		}
	*Z = job->Zc;
	*y = job->yc;
	*kept = nt;
	return KM_OK;
}

/* What the primal passes of a regression method read besides the job. */
typedef struct primal_point
{
	approx_job *job;
	km_newton  *nt;
	const km_method_ops *ops;
	size_t		kept;			/* the tally pass's rows of its side */
} primal_point;

/* A chunk into the Newton sums of the method's loss at the current point. */
static km_status
newton_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		   km_error *err)
{
	primal_point *pt = pass->at;
	const double *Z;
	const double *y;
	size_t		nt;
	uint32_t	bad;

	if (fit_block(pt->job, pass, rows, first, &Z, &y, &nt, err) != KM_OK)
		return err->status;
	if (nt > 0 && !km_newton_add(pt->nt, state, Z, nt, y, NULL, NULL, &bad))
	{
		km_fail(err, KM_ERR_DIVERGED,
				"decision value is out of range for type double precision",
				"A decision value in the block of rows from %zu is not finite after %d Newton steps.",
				first + 1, pt->nt->ps.solvers[0].iterations);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Raise lambda, or standardize the features (\"standardize\": true).");
		return err->status;
	}
	return KM_OK;
}

static void
newton_init(km_pass *pass, void *state)
{
	km_newton_init_state(((primal_point *) pass->at)->nt, state);
}

/* A chunk into the training tally at the final point. */
static km_status
tally_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	primal_point *pt = pass->at;
	km_primal_pass *ps = &pt->nt->ps;
	const double *Z;
	const double *y;
	size_t		nt;

	if (fit_block(pt->job, pass, rows, first, &Z, &y, &nt, err) != KM_OK)
		return err->status;
	if (nt > 0)
		pt->ops->primal_tally(&pt->job->opts.fit, Z, nt, ps->m, y, ps->coef,
							  ps->intercepts[0], state, ps->scratch);
	pt->kept += nt;
	return KM_OK;
}

static void
tally_init(km_pass *pass, void *state)
{
	((primal_point *) pass->at)->kept = 0;
	memset(state, 0, sizeof(double) * KM_PRIMAL_TALLY_DOUBLES);
}

/*
 * The method's fit (its primal pieces driven by the one Newton,
 * learn/newton.h): Newton passes over the rows from coef = 0, b = 0, then
 * one pass for the training tally at the final point.  R: the m x m
 * penalty.  k-fold: over the rows outside job->holdout only.
 */
static km_status
primal_fit_by_pieces(approx_job *job, const km_method_ops *ops, const double *R,
					 double *coef, double *b, km_fit_result *res, km_error *err)
{
	const km_fit_params *p = &job->opts.fit;
	uint32_t	m = job->b.m;
	double		tally[KM_PRIMAL_TALLY_DOUBLES] = {0};
	km_newton	nt = {.interrupt = job->env->interrupt};
	km_primal_params pp = {.lambda = p->lambda, .fit_intercept = p->fit_intercept,
	.tol = p->tol, .max_iter = p->max_iter};
	primal_point pt = {job, &nt, ops, 0};
	km_pass    *pass;
	bool		step_failed;
	size_t		rows;

	km_newton_buffers(&nt, m, 1, PRIMAL_BLOCK, 0, R,
					  job->env->alloc(job->env->ctx, km_newton_bytes(m, 1, PRIMAL_BLOCK, 0)));
	nt.ps.ops = ops;
	nt.ps.fit = p;
	km_newton_start(&nt, &pp, coef, b);
	pass = km_approx_job_pass(job, "newton", PRIMAL_BLOCK, km_newton_state_bytes(&nt),
							  newton_add);
	pass->at = &pt;
	pass->init = newton_init;
	if (job->holdout >= 0)
	{
		pass->side = KM_SIDE_NOT_FOLD;
		pass->fold = job->holdout;
	}
	if (km_newton_run(&nt, job->host, pass, &step_failed, err) != KM_OK)
	{
		if (step_failed)
			km_method_fill_hint(p->method, err);
		return err->status;
	}
	snprintf(pass->what, sizeof(pass->what), "%s", "training error");
	pass->add = tally_add;
	pass->init = tally_init;
	pass->state_bytes = sizeof(tally);
	if (km_pass_run(job->host, pass, tally, &rows, err) != KM_OK)
		return err->status;
	if (ops->primal_result(p, &nt.ps.solvers[0], tally, pt.kept, res, err) != KM_OK)
	{
		km_method_fill_hint(p->method, err);
		return err->status;
	}
	return KM_OK;
}

/* The method's primal fit on the whitened (nystrom) or rff features: penalty I. */
static km_status
primal_fit(approx_job *job, const km_method_ops *ops, double *coef, double *b,
		   km_fit_result *res, km_error *err)
{
	uint32_t	m = job->b.m;
	double	   *eye = km_approx_job_alloc(job, (size_t) m * m);

	km_progress_stage("%s: newton passes, m = %u, %zu rows", ops->name, m, job->rows->n);
	memset(eye, 0, sizeof(double) * m * m);
	for (uint32_t j = 0; j < m; j++)
		eye[j + (size_t) j * m] = 1.0;
	return primal_fit_by_pieces(job, ops, eye, coef, b, res, err);
}

/*
 * What the Newton passes over a basis need: nystrom's factor L of
 * K_mm + eps I (the features are whitened by it; *eps recorded) and the
 * block buffers (once).
 */
km_status
km_approx_job_setup(approx_job *job, double *eps, km_error *err)
{
	km_basis   *b = &job->b;

	*eps = 0.0;
	if (km_repr_lookup(b->kind)->centres)
	{
		double	   *fwork = km_approx_job_alloc(job, km_approx_factor_doubles(b->m) + 1);
		double	   *L = km_approx_job_alloc(job, (size_t) b->m * b->m);

		if (km_approx_factor(b, L, eps, fwork, err, job->env->interrupt) != KM_OK)
			return err->status;
		job->env->release(job->env->ctx, fwork);
		job->L = L;
	}
	if (job->Z == NULL)
	{
		job->Z = km_approx_job_alloc(job, (size_t) PRIMAL_BLOCK * b->m);
		job->fwork = km_approx_job_alloc(job, km_approx_features_doubles(b, PRIMAL_BLOCK) + 1);
	}
	return KM_OK;
}

/* A primal method's model (pass 2 and on): factor, Newton passes, the model. */
static km_status
approx_primal(approx_job *job, km_model *m, km_error *err)
{
	const km_options *o = &job->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	km_basis   *b = &job->b;
	km_approx_result ar;
	km_fit_result res;
	double	   *coef;
	double		bias = 0.0;
	double		eps = 0.0;

	if (km_approx_job_setup(job, &eps, err) != KM_OK)
		return err->status;
	coef = km_approx_job_alloc(job, b->m);
	memset(&res, 0, sizeof(res));
	if (primal_fit(job, ops, coef, &bias, &res, err) != KM_OK)
		return err->status;
	if (job->L != NULL)
		km_primal_unwhiten(job->L, b->m, 1, coef);	/* coefficients of k(c_j, x) */

	/* one place builds an approximate model: the core's fill, then the method's fields */
	memset(&ar, 0, sizeof(ar));
	ar.lambda = o->fit.lambda;
	ar.intercept = bias;
	ar.eps = eps;
	ar.rank = b->m;
	ar.train_rmse = res.train_rmse;
	ar.rows = (uint64_t) job->rows->n;
	memset(m, 0, sizeof(*m));
	km_approx_model_fill(b, (uint32_t) o->components, &ar.lambda, 1,
						 o->fit_intercept, coef, &ar, NULL, m);
	m->method = o->fit.method;
	m->task = ops->task;
	m->rows_skipped = job->rows->rows_skipped;
	ops->store(&o->fit, &res, m);
	return KM_OK;
}

/* The basis, its factor and its random features released (before another gamma's). */
void
km_approx_job_release(approx_job *job)
{
	const km_train_env *env = job->env;
	void	   *held[4] = {job->basis_mem, job->W, job->bv, job->L};

	for (int i = 0; i < 4; i++)
		if (held[i] != NULL)
			env->release(env->ctx, held[i]);
	job->basis_mem = NULL;
	job->W = NULL;
	job->bv = NULL;
	job->L = NULL;
}

/* What the held-out pass reads: the fit. */
typedef struct held_out_point
{
	approx_job *job;
	const double *coef;
	double		b;
} held_out_point;

/* A chunk's held-out rows' squared errors at the fit. */
static km_status
held_out_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			 km_error *err)
{
	held_out_point *hp = pass->at;
	approx_job *job = hp->job;
	uint32_t	m = job->b.m;

	if (km_approx_job_features(job, rows->X, first, rows->n, job->Z, err) != KM_OK)
		return err->status;
	for (size_t i = 0; i < rows->n; i++)
		if (km_pass_keeps(pass, rows, i))
		{
			double		pred = hp->b;

			for (uint32_t j = 0; j < m; j++)
				pred += job->Z[i * m + j] * hp->coef[j];
			km_metrics_add(state, pred, rows->y[i]);
		}
	return KM_OK;
}

static void
held_out_init(km_pass *pass, void *state)
{
	km_metrics_init(state);
}

static km_status
held_out_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	km_metrics_combine(into, from);
	return KM_OK;
}

/* The mean squared error of the fit (coef, b) on the rows of fold job->holdout. */
static km_status
held_out_mse(approx_job *job, const double *coef, double b, double *mse,
			 km_error *err)
{
	km_metrics	met;
	held_out_point hp = {job, coef, b};
	size_t		rows;
	km_pass    *pass = km_approx_job_pass(job, "held-out error", PRIMAL_BLOCK,
										  sizeof(met), held_out_add);

	pass->at = &hp;
	pass->init = held_out_init;
	pass->combine = held_out_combine;
	pass->side = KM_SIDE_FOLD;
	pass->fold = job->holdout;
	if (km_pass_run(job->host, pass, &met, &rows, err) != KM_OK)
		return err->status;
	if (met.n == 0)				/* the glue refuses more folds than rows */
		return km_fail(err, KM_ERR_INVALID, "fold has no rows to score",
					   "Fold %d has none of the %zu rows.", job->holdout + 1, rows);
	*mse = km_metrics_mse(&met);
	return KM_OK;
}

/* A fit that fails for its lambda or gamma: the candidate loses, the search goes on. */
static bool
candidate_failure(km_status st)
{
	return st == KM_ERR_NOT_PD || st == KM_ERR_DIVERGED || st == KM_ERR_INACCURATE;
}

/*
 * Score candidate c (its gamma's basis built) by k-fold: per fold, the
 * Newton passes over the other folds' rows from 0, then the held-out MSE;
 * the mean over folds and its standard deviation (select.c's score).
 */
static km_status
score_candidate(approx_job *job, const km_method_ops *ops, const double *R,
				int folds, double *fold_mse, km_candidate *c, km_error *err)
{
	double	   *coef = job->Zc + (size_t) PRIMAL_BLOCK * job->b.m;
	double		mean = 0.0;
	double		var = 0.0;

	job->opts.fit.lambda = c->lambda;
	for (int f = 0; f < folds; f++)
	{
		km_fit_result res;
		double		bias;
		km_status	st;

		km_progress_stage("candidate (gamma %g, lambda %g), fold %d of %d",
						  c->gamma, c->lambda, f + 1, folds);
		job->holdout = f;
		memset(&res, 0, sizeof(res));
		st = primal_fit_by_pieces(job, ops, R, coef, &bias, &res, err);
		if (st == KM_OK)
			st = held_out_mse(job, coef, bias, &fold_mse[f], err);
		job->holdout = -1;
		if (candidate_failure(st))
		{
			c->score = NAN;
			c->score_std = 0.0;
			return KM_OK;
		}
		if (st != KM_OK)
			return st;
	}
	for (int f = 0; f < folds; f++)
		mean += fold_mse[f];
	mean /= folds;
	for (int f = 0; f < folds; f++)
		var += (fold_mse[f] - mean) * (fold_mse[f] - mean);
	c->score = mean;
	c->score_std = sqrt(var / folds);
	return KM_OK;
}

/* k-fold selection of a primal method as a route of the grid loop (select.h). */
typedef struct primal_route
{
	approx_job *job;
	const km_method_ops *ops;
	const km_train_plan *plan;
	double	   *fold_mse;		/* folds */
	double	   *R;				/* m x m penalty I, once the first basis is built */
	km_status	setup;			/* the gamma's factor: KM_OK, or a candidate failure */
} primal_route;

/* A chunk's rows standardized (their check, before any candidate). */
static km_status
standardize_add(km_pass *pass, const km_block *rows, size_t first, void *state,
				km_error *err)
{
	approx_job *job = pass->at;

	return km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err);
}

/*
 * Per gamma: its basis over every row (the scaler, the centres or random
 * features) and factor.  A factor that fails for this gamma makes its
 * candidates lose; the search goes on.
 */
static km_status
primal_route_gamma(void *arg, int g, double gamma, km_error *err)
{
	primal_route *r = arg;
	approx_job *job = r->job;
	double		eps;

	job->opts.fit.kernel.gamma = gamma;
	km_approx_job_release(job);
	if (km_approx_job_basis(job, r->plan->basis_bytes, err) != KM_OK)
		return err->status;
	if (r->R == NULL)
	{
		uint32_t	m = job->b.m;

		size_t		rows;

		/* a row that overflows when standardized: the data's error, not a candidate's */
		if (km_pass_run(job->host, km_approx_job_pass(job, "standardize", PRIMAL_BLOCK, 0,
													  standardize_add),
						NULL, &rows, err) != KM_OK)
			return err->status;

		r->R = km_approx_job_alloc(job, (size_t) m * m);
		memset(r->R, 0, sizeof(double) * m * m);
		for (uint32_t j = 0; j < m; j++)
			r->R[j + (size_t) j * m] = 1.0;
		job->Zc = km_approx_job_alloc(job, (size_t) PRIMAL_BLOCK * m + m);
		job->yc = km_approx_job_alloc(job, PRIMAL_BLOCK);
	}
	r->setup = km_approx_job_setup(job, &eps, err);
	if (r->setup != KM_OK && !candidate_failure(r->setup))
		return r->setup;
	return KM_OK;
}

/* Per candidate: score_candidate, or NaN when its gamma's factor failed. */
static km_status
primal_route_score(void *arg, int index, km_candidate *c, km_error *err)
{
	primal_route *r = arg;

	c->score = NAN;
	c->score_std = 0.0;
	if (r->setup == KM_OK &&
		score_candidate(r->job, r->ops, r->R, r->plan->opts.folds, r->fold_mse,
						c, err) != KM_OK)
		return err->status;
	return KM_OK;
}

/* The route's error when no candidate scores. */
static km_status
primal_route_none(void *arg, int count, km_error *err)
{
	primal_route *r = arg;

	km_fail(err, KM_ERR_INACCURATE, "no candidate could be fitted",
			"None of the %d (gamma, lambda) candidates of method \"%s\" could be fitted on every fold.",
			count, r->ops->name);
	km_method_fill_hint(r->plan->opts.fit.method, err);
	return err->status;
}

/*
 * k-fold selection of a primal method over the gamma and lambda grids
 * (folds: the host's, km_block.fold: the glue's row-hash folds), a route of the one grid
 * loop (km_grid_search): per gamma primal_route_gamma, per candidate
 * score_candidate; the lowest mean MSE wins (km_best_candidate, the exact
 * path's rule).  cand: gammas x lambdas, gamma major.
 */
static km_status
primal_select(approx_job *job, const km_method_ops *ops, const km_train_plan *plan,
			  km_candidate *cand, int *best, km_error *err)
{
	const km_options *o = &plan->opts;
	primal_route r = {.job = job, .ops = ops, .plan = plan,
	.fold_mse = km_approx_job_alloc(job, (size_t) o->folds)};
	km_grid_route route = {.arg = &r, .gamma = primal_route_gamma,
		.score = primal_route_score, .none = primal_route_none};
	km_status	st;

	st = km_grid_search(o->gammas.v, o->gammas.n, o->lambdas.v, o->lambdas.n,
						&route, cand, best, err);
	km_approx_job_release(job);
	return st;
}

/*
 * A primal method's model, k-fold selected first when the options give a
 * grid (plan->ncand candidates, recorded in the model as the exact path
 * records them).
 */
static km_status
train_primal(approx_job *job, const km_method_ops *ops, const km_train_plan *plan,
			 km_model *m, km_error *err)
{
	km_candidate *cand = NULL;
	int			best = 0;

	if (plan->ncand > 0)
	{
		if (ops->primal_add == NULL || !job->host->folds)
			return km_fail(err, KM_ERR_INVALID, "approximate model selection needs folds and a method fitted by pieces",
						   "Method \"%s\" was given %d candidates.", ops->name, plan->ncand);
		cand = job->env->alloc(job->env->ctx, sizeof(km_candidate) * plan->ncand);
		if (primal_select(job, ops, plan, cand, &best, err) != KM_OK)
			return err->status;
		job->opts.fit.kernel.gamma = cand[best].gamma;
		job->opts.fit.lambda = cand[best].lambda;
	}
	if (km_approx_job_basis(job, plan->basis_bytes, err) != KM_OK ||
		approx_primal(job, m, err) != KM_OK)
		return err->status;
	if (plan->ncand > 0)
	{
		m->n_candidates = (uint32_t) plan->ncand;
		m->cv = plan->opts.cv;
		m->folds = plan->opts.folds;
		m->best = (uint32_t) best;
		m->candidates = cand;
	}
	return KM_OK;
}

km_status
km_train_approx(const km_rows *rows, const km_host *host, const km_train_plan *plan,
				const km_train_env *env, km_model *m, km_error *err)
{
	const km_method_ops *ops = km_method_get(plan->opts.fit.method);
	approx_job	job;
	km_accum   *acc = NULL;

	if (rows->n == 0 || plan->basis_bytes == 0 || ops == NULL)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows and a basis state of %zu bytes.",
					   rows->n, plan->basis_bytes);
	km_approx_job_init(&job, rows, host, env, &plan->opts);
	if (ops->primal_add != NULL)
		return train_primal(&job, ops, plan, m, err);
	if (km_approx_job_basis(&job, plan->basis_bytes, err) != KM_OK)
		return err->status;
	if (plan->opts.fit.solver == KM_SOLVER_CG)
		return km_approx_job_cg(&job, m, err);
	if (approx_sums(&job, &acc, err) != KM_OK)
		return err->status;
	return km_train_approx_solve(&job.b, (uint32_t) job.opts.components, acc,
								 job.opts.lambdas.v, job.opts.lambdas.n,
								 job.opts.fit_intercept, rows->rows_skipped, env,
								 m, err);
}
