/*
 * pipeline_approx.c - km_train's approximate regression (pipeline.h).
 *
 * The rows are in memory: a basis pass over them (the centres of the
 * smallest hashes, the scaler; rff's features drawn from the seed), then
 * their features a block at a time, standardized by the basis's scaler,
 * into what the method trains from: ridge's m x m sums (accum.h), solved in
 * closed form with GCV over the lambdas (km_train_approx_solve, which the
 * kernel_train(features, y, basis) aggregate's final function calls too),
 * or a method's primal Newton passes (its primal_add .. primal_result
 * pieces, as the named models' passes drive them; nystrom's features
 * whitened by L^-1, so that the penalty is I), then the model.  Moved from
 * src/sql/approx.c and approx_primal.c step for step, so that every model
 * comes out bit for bit as before.
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
	if (ops != NULL && ops->primal_fit != NULL)
	{
		size_t		fit = ops->primal_fit_doubles(m, PRIMAL_BLOCK);
		size_t		feat = km_approx_features_doubles(&shape, PRIMAL_BLOCK);

		if (fit == 0 || feat == 0)
			sbytes = 0;
		rest = 8.0 * ((double) fit + (double) feat + 2.0 * m * (double) m +
					  PRIMAL_BLOCK * ((double) m + d) + m);
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
	if (ops != NULL && ops->primal_fit != NULL && km_options_selects(o))
	{
		/* k-fold: the candidates, a block of training rows, the glue's folds and ranking */
		plan->ncand = o->gammas.n * o->lambdas.n;
		rest += 8.0 * ((double) PRIMAL_BLOCK * (m + 1.0) + m + o->folds +
					   4.0 * plan->ncand) + 12.0 * (double) n;
	}
	plan->basis_bytes = sbytes;
	/* and the rows' hashes, which the glue computes for the basis pass */
	plan->approx_bytes = (double) sbytes + rest + 8.0 * (double) n;
}

/* The basis of the rows (pass 1), with rff's random features drawn. */
km_status
km_approx_job_basis(approx_job *job, size_t sbytes, km_error *err)
{
	const km_rows *rows = job->rows;
	const km_options *o = &job->opts;
	const km_train_env *env = job->env;
	uint32_t	d = (uint32_t) rows->d;
	km_basis_state *st;
	char	   *basis;
	void	   *scratch;
	size_t		blen;
	km_basis   *b = &job->b;

	km_progress_phase("basis: %zu rows", rows->n);
	st = env->alloc(env->ctx, sbytes);
	km_basis_state_init(st, o->approximation, &o->fit.kernel, o->standardize,
						d, (uint32_t) o->components, (uint64_t) o->seed);
	for (size_t i = 0; i < rows->n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
			job->Xs[j] = rows->X[i * d + j] + 0.0;
		km_basis_state_add(st, job->Xs, rows->hash[i]);
		if ((i & 0x3FF) == 0)
			km_check_interrupts(env->interrupt);
	}
	blen = km_basis_final_bytes(st);
	basis = env->alloc(env->ctx, blen);
	job->basis_mem = basis;
	scratch = env->alloc(env->ctx, km_basis_finish_scratch_bytes(st) + 1);
	if (km_basis_finish(st, basis, scratch, err) != KM_OK)
		return err->status;
	env->release(env->ctx, scratch);
	env->release(env->ctx, st);
	if (km_basis_decode(basis, blen, b, err) != KM_OK)
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

/* Rows [i0, i0 + r) standardized by the basis's scaler into job->Xs. */
static km_status
standardize_block(approx_job *job, size_t i0, size_t r, km_error *err)
{
	int			d = job->rows->d;

	for (size_t i = 0; i < r; i++)
	{
		int			bad = km_standardize_row(job->rows->X + (i0 + i) * d, d,
											 job->b.mean, job->b.scale,
											 job->Xs + i * d);

		if (bad >= 0)
			return km_fail(err, KM_ERR_DIVERGED,
						   "standardized feature is out of range for type double precision",
						   "Feature %d of row %zu overflowed when standardized.",
						   bad + 1, i0 + i + 1);
	}
	return KM_OK;
}

/* Ridge's sums (pass 2): z(x) z(x)^T, z y, ... a block at a time. */
static km_status
approx_sums(approx_job *job, km_accum **out, km_error *err)
{
	const km_rows *rows = job->rows;
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	size_t		n = rows->n;
	km_accum   *acc;
	double	   *scratch;

	km_progress_phase("statistics: m = %u, %zu rows", m, n);
	acc = env->alloc(env->ctx, km_accum_bytes(KM_ACCUM_GRAM, m));
	km_accum_init(acc, KM_ACCUM_GRAM, m);
	job->Z = km_approx_job_alloc(job, (size_t) SUMS_BLOCK * m);
	job->fwork = km_approx_job_alloc(job, km_approx_features_doubles(&job->b, SUMS_BLOCK) + 1);
	scratch = km_approx_job_alloc(job, (size_t) m * m);
	for (size_t i0 = 0; i0 < n; i0 += SUMS_BLOCK)
	{
		size_t		r = n - i0 < SUMS_BLOCK ? n - i0 : SUMS_BLOCK;

		if (standardize_block(job, i0, r, err) != KM_OK ||
			km_approx_features(&job->b, job->Xs, r, job->Z, job->fwork, err) != KM_OK)
			return err->status;
		km_accum_gram_add(acc, job->Z, rows->y + i0, r, scratch, env->interrupt);
		km_check_interrupts(env->interrupt);
		km_progress_step("%lld of %zu rows", (long long) acc->rows, n);
	}
	env->release(env->ctx, job->Z);
	env->release(env->ctx, job->fwork);
	env->release(env->ctx, scratch);
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
 * The features of rows [i0, i0 + rows) into Z: standardized, mapped
 * and, for nystrom, whitened, in pieces of at most PIECE_FLOPS with an
 * interrupt check after each.
 */
km_status
km_approx_job_features(approx_job *job, size_t i0, size_t rows, double *Z,
					   km_error *err)
{
	uint32_t	d = (uint32_t) job->rows->d;
	uint32_t	m = job->b.m;
	size_t		piece = km_primal_piece_rows(m, d, job->L != NULL, rows, PIECE_FLOPS);

	if (standardize_block(job, i0, rows, err) != KM_OK)
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
 * km_row_blocks.features for a method's primal_fit, which cannot return an
 * error: the first failure is kept (job->deferred) and returned after the
 * fit; its block reads as zeros meanwhile.
 */
static const double *
primal_rows_features(void *arg, size_t i0, size_t rows)
{
	approx_job *job = arg;

	if (job->deferred.status == KM_OK &&
		km_approx_job_features(job, i0, rows, job->Z, &job->deferred) == KM_OK)
		return job->Z;
	memset(job->Z, 0, sizeof(double) * rows * job->b.m);
	return job->Z;
}

/*
 * The features of block [i0, i0 + nb) (job->Z) that the fit trains on: all
 * of them, or (k-fold) those of the rows outside job->holdout, copied into
 * job->Zc and job->yc; *rows, their count.
 */
static km_status
fit_block(approx_job *job, size_t i0, size_t nb, const double **Z,
		  const double **y, size_t *rows, km_error *err)
{
	uint32_t	m = job->b.m;
	size_t		nt = 0;

	if (km_approx_job_features(job, i0, nb, job->Z, err) != KM_OK)
		return err->status;
	*Z = job->Z;
	*y = job->rows->y + i0;
	*rows = nb;
	if (job->holdout < 0)
		return KM_OK;
	for (size_t i = 0; i < nb; i++)
		if (job->rows->fold[i0 + i] != job->holdout)
		{
			memcpy(job->Zc + nt * m, job->Z + i * m, sizeof(double) * m);
			job->yc[nt++] = job->rows->y[i0 + i];
		}
	*Z = job->Zc;
	*y = job->yc;
	*rows = nt;
	return KM_OK;
}

/*
 * The method's fit by its pieces (primal_add .. primal_result, as the named
 * models' passes drive them, src/catalog/passes_primal.c): Newton passes
 * over the rows' blocks from coef = 0, b = 0, then one pass for the
 * training tally at the final point.  R: the m x m penalty.  k-fold: over
 * the rows outside job->holdout only.
 */
static km_status
primal_fit_by_pieces(approx_job *job, const km_method_ops *ops, const double *R,
					 double *coef, double *b, km_fit_result *res, km_error *err)
{
	const km_fit_params *p = &job->opts.fit;
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	size_t		n = job->rows->n;
	size_t		ntrain = 0;
	const double *Z;
	const double *y;
	size_t		nt;
	size_t		addsc = km_primal_add_scratch_doubles(m, PRIMAL_BLOCK);
	double	   *state = km_approx_job_alloc(job, km_primal_state_doubles(m));
	double	   *scratch = km_approx_job_alloc(job, addsc > PRIMAL_BLOCK ? addsc : PRIMAL_BLOCK);
	double	   *vecs = km_approx_job_alloc(job, 2 * (size_t) m);
	double	   *swork = km_approx_job_alloc(job, km_primal_step_work_doubles(m));
	double		tally[KM_PRIMAL_TALLY_DOUBLES] = {0};
	km_primal_solver s;

	km_primal_solver_init(&s, m);
	memset(coef, 0, sizeof(double) * m);
	*b = 0.0;
	while (!s.done)
	{
		km_primal_state_init(state, m);
		for (size_t i0 = 0; i0 < n; i0 += PRIMAL_BLOCK)
		{
			size_t		nb = n - i0 < PRIMAL_BLOCK ? n - i0 : PRIMAL_BLOCK;

			if (fit_block(job, i0, nb, &Z, &y, &nt, err) != KM_OK)
				return err->status;
			if (nt == 0)
				continue;
			if (!ops->primal_add(p, state, m, Z, nt, y, coef, *b,
								 scratch, env->interrupt))
			{
				km_fail(err, KM_ERR_DIVERGED,
						"decision value is out of range for type double precision",
						"A decision value in the block of rows from %zu is not finite after %d Newton steps.",
						i0 + 1, s.iterations);
				snprintf(err->hint, sizeof(err->hint), "%s",
						 "Raise lambda, or standardize the features (\"standardize\": true).");
				return err->status;
			}
		}
		if (ops->primal_step(p, &s, state, R, coef, b, vecs, swork, err,
							 env->interrupt) != KM_OK)
		{
			km_method_fill_hint(p->method, err);
			return err->status;
		}
	}
	for (size_t i0 = 0; i0 < n; i0 += PRIMAL_BLOCK)
	{
		size_t		nb = n - i0 < PRIMAL_BLOCK ? n - i0 : PRIMAL_BLOCK;

		if (fit_block(job, i0, nb, &Z, &y, &nt, err) != KM_OK)
			return err->status;
		if (nt > 0)
			ops->primal_tally(p, Z, nt, m, y, coef, *b, tally, scratch);
		ntrain += nt;
	}
	if (ops->primal_result(p, &s, tally, ntrain, res, err) != KM_OK)
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
	km_row_blocks rb = {.n = job->rows->n, .block = PRIMAL_BLOCK,
	.y = job->rows->y, .features = primal_rows_features, .arg = job};
	double	   *work;

	km_progress_phase("%s: newton passes, m = %u, %zu rows", ops->name, m, job->rows->n);
	if (ops->primal_add != NULL)
	{
		double	   *eye = km_approx_job_alloc(job, (size_t) m * m);

		memset(eye, 0, sizeof(double) * m * m);
		for (uint32_t j = 0; j < m; j++)
			eye[j + (size_t) j * m] = 1.0;
		return primal_fit_by_pieces(job, ops, eye, coef, b, res, err);
	}
	work = km_approx_job_alloc(job, ops->primal_fit_doubles(m, PRIMAL_BLOCK));
	if (ops->primal_fit(&job->opts.fit, &rb, m, NULL, coef, b, res, work, err,
						job->env->interrupt) != KM_OK)
	{
		km_method_fill_hint(job->opts.fit.method, err);
		return err->status;
	}
	if (job->deferred.status != KM_OK)
	{
		*err = job->deferred;
		return err->status;
	}
	return KM_OK;
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

/* The mean squared error of the fit (coef, b) on the rows of fold job->holdout. */
static km_status
held_out_mse(approx_job *job, const double *coef, double b, double *mse,
			 km_error *err)
{
	uint32_t	m = job->b.m;
	size_t		n = job->rows->n;
	km_metrics	met;

	km_metrics_init(&met);
	for (size_t i0 = 0; i0 < n; i0 += PRIMAL_BLOCK)
	{
		size_t		nb = n - i0 < PRIMAL_BLOCK ? n - i0 : PRIMAL_BLOCK;

		if (km_approx_job_features(job, i0, nb, job->Z, err) != KM_OK)
			return err->status;
		for (size_t i = 0; i < nb; i++)
			if (job->rows->fold[i0 + i] == job->holdout)
			{
				double		pred = b;

				for (uint32_t j = 0; j < m; j++)
					pred += job->Z[i * m + j] * coef[j];
				km_metrics_add(&met, pred, job->rows->y[i0 + i]);
			}
	}
	if (met.n == 0)				/* the glue refuses more folds than rows */
		return km_fail(err, KM_ERR_INVALID, "fold has no rows to score",
					   "Fold %d has none of the %zu rows.", job->holdout + 1, n);
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

		/* a row that overflows when standardized: the data's error, not a candidate's */
		for (size_t i0 = 0; i0 < job->rows->n; i0 += PRIMAL_BLOCK)
			if (standardize_block(job, i0, job->rows->n - i0 < PRIMAL_BLOCK ?
								  job->rows->n - i0 : PRIMAL_BLOCK, err) != KM_OK)
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
 * (folds: rows->fold, the glue's row-hash folds), a route of the one grid
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
		if (ops->primal_add == NULL || job->rows->fold == NULL)
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
km_train_approx(const km_rows *rows, const km_train_plan *plan,
				const km_train_env *env, km_model *m, km_error *err)
{
	const km_method_ops *ops = km_method_get(plan->opts.fit.method);
	approx_job	job;
	km_accum   *acc = NULL;

	if (rows->hash == NULL || rows->n == 0 || plan->basis_bytes == 0 || ops == NULL)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows, %s hashes and a basis state of %zu bytes.",
					   rows->n, rows->hash ? "with" : "without", plan->basis_bytes);
	memset(&job, 0, sizeof(job));
	job.rows = rows;
	job.env = env;
	job.opts = plan->opts;
	job.holdout = -1;
	job.Xs = km_approx_job_alloc(&job, (size_t) PRIMAL_BLOCK * rows->d);
	if (ops->primal_fit != NULL)
		return train_primal(&job, ops, plan, m, err);
	if (km_approx_job_basis(&job, plan->basis_bytes, err) != KM_OK)
		return err->status;
	if (approx_sums(&job, &acc, err) != KM_OK)
		return err->status;
	return km_train_approx_solve(&job.b, (uint32_t) job.opts.components, acc,
								 job.opts.lambdas.v, job.opts.lambdas.n,
								 job.opts.fit_intercept, rows->rows_skipped, env,
								 m, err);
}
