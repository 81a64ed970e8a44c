/*
 * pipeline_primal.c - the learner's approximate regression road
 * (pipeline_primal.h): ridge by its m x m sums (pipeline_approx.c), a
 * method fitted in the primal (svr) by its Newton passes, k-fold selected
 * over the gamma and lambda grids; each walk over the rows a pass asked of
 * the host (learn/pass.h), each pass with its point as bytes so that the
 * aggregate host's workers rebuild it (km_primal_pass_rebuild).  Split
 * from pipeline_approx.c step for step: every model bit for bit as before.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basis.h"
#include "metrics.h"
#include "model.h"
#include "pipeline_approx.h"
#include "pipeline_approx_job.h"
#include "pipeline_primal.h"
#include "primal.h"
#include "primal_pass.h"
#include "progress.h"
#include "repr.h"
#include "select.h"

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

	if (km_pass_rows_check(pass, rows, job->rows->d, true, 0, false, first, err) != KM_OK ||
		km_approx_job_features(job, rows->X, first, rows->n, job->Z, err) != KM_OK)
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

	pt->job->unwhitened = pt->nt->ps.cg;	/* Newton-CG whitens its m-vectors (newton.h) */
	if (fit_block(pt->job, pass, rows, first, &Z, &y, &nt, err) != KM_OK)
		return err->status;
	if (nt > 0 && !(pass->kind == KM_PASS_KIND_PRIMAL_HV ?
					km_newton_hv_add(pt->nt, state, Z, nt, y, NULL, NULL) :
					km_newton_add(pt->nt, state, Z, nt, y, NULL, NULL, &bad)))
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

	pt->job->unwhitened = false;
	if (fit_block(pt->job, pass, rows, first, &Z, &y, &nt, err) != KM_OK)
		return err->status;
	if (nt > 0)
		pt->ops->primal_tally(&pt->job->opts.fit, Z, nt, ps->m, y, ps->coef,
							  ps->intercepts[0], state, ps->scratch);
	/* the rows of its side, after the tally: states of other rows add */
	((double *) state)[KM_PRIMAL_TALLY_DOUBLES] += (double) nt;
	return KM_OK;
}

static void
tally_init(km_pass *pass, void *state)
{
	memset(state, 0, sizeof(double) * (KM_PRIMAL_TALLY_DOUBLES + 1));
}

/* The primal passes' point: the job set up, the fit, the Newton's point. */
static void
primal_point_put(const km_pass *pass, km_point_writer *w)
{
	const primal_point *pt = pass->at;

	km_approx_point_put_setup(w, pt->job);
	km_point_put_fit(w, &pt->job->opts.fit);
	km_point_put_newton(w, pt->nt);
}

static size_t
primal_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	primal_point_put(pass, &w);
	return w.len;
}

static void
primal_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	primal_point_put(pass, &w);
}

/* The side of the job's fit: every row, or (k-fold) all but its held-out fold. */
static void
fit_side(approx_job *job, km_pass *pass)
{
	if (job->holdout >= 0)
	{
		pass->side = KM_SIDE_NOT_FOLD;
		pass->fold = job->holdout;
	}
}

/* The Newton pass at pt (the method's loss at the current point). */
static km_pass *
newton_pass(approx_job *job, primal_point *pt)
{
	km_pass    *pass = km_approx_job_pass(job, "newton", PRIMAL_BLOCK,
										  km_newton_state_bytes(pt->nt), newton_add);

	pass->at = pt;
	pass->init = newton_init;
	fit_side(job, pass);
	pass->kind = KM_PASS_KIND_PRIMAL_NEWTON;
	pass->point_bytes = primal_point_bytes;
	pass->point_write = primal_point_write;
	return pass;
}

/* Newton-CG's Hessian-vector pass at pt (a copy of its Newton pass, of its own kind). */
static km_pass *
hv_pass(approx_job *job, primal_point *pt)
{
	km_pass    *pass = job->env->alloc(job->env->ctx, sizeof(km_pass));

	*pass = *newton_pass(job, pt);
	snprintf(pass->what, sizeof(pass->what), "newton-cg");
	pass->kind = KM_PASS_KIND_PRIMAL_HV;
	pass->state_bytes = sizeof(double) * km_newton_unknowns(pt->nt);
	return pass;
}

/* The training tally at pt's final point (its side's rows counted last). */
static km_pass *
tally_pass(approx_job *job, primal_point *pt)
{
	km_pass    *pass = km_approx_job_pass(job, "training error", PRIMAL_BLOCK,
										  sizeof(double) * (KM_PRIMAL_TALLY_DOUBLES + 1),
										  tally_add);

	pass->at = pt;
	pass->init = tally_init;
	fit_side(job, pass);
	pass->kind = KM_PASS_KIND_PRIMAL_TALLY;
	pass->point_bytes = primal_point_bytes;
	pass->point_write = primal_point_write;
	return pass;
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
	double		tally[KM_PRIMAL_TALLY_DOUBLES + 1] = {0};
	km_newton	nt = {.interrupt = job->env->interrupt};
	km_primal_params pp = {.lambda = p->lambda, .fit_intercept = p->fit_intercept,
	.tol = p->tol, .max_iter = p->max_iter};
	primal_point pt = {job, &nt, ops};
	km_pass    *pass;
	bool		step_failed;
	size_t		rows;

	bool		cg = p->solver == KM_SOLVER_CG;

	km_newton_buffers(&nt, m, 1, PRIMAL_BLOCK, 0, cg, cg ? NULL : R,
					  job->env->alloc(job->env->ctx, km_newton_bytes(m, 1, PRIMAL_BLOCK, 0, cg)));
	nt.ps.ops = ops;
	nt.ps.fit = p;
	km_newton_start(&nt, &pp, coef, b);
	if (cg)
	{
		nt.hv_pass = hv_pass(job, &pt);
		nt.Lw = job->L;			/* nystrom: the passes' features unwhitened */
		if (nt.Lw != NULL)
			nt.Rf = km_approx_job_alloc(job, (size_t) m * m);
	}
	pass = newton_pass(job, &pt);
	if (km_newton_run(&nt, job->host, pass, &step_failed, err) != KM_OK)
	{
		if (step_failed)
			km_method_fill_hint(p->method, err);
		return err->status;
	}
	pass = tally_pass(job, &pt);
	if (km_pass_run(job->host, pass, tally, &rows, err) != KM_OK)
		return err->status;
	if (ops->primal_result(p, &nt.ps.solvers[0], tally,
						   (size_t) tally[KM_PRIMAL_TALLY_DOUBLES], res, err) != KM_OK)
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
	double	   *eye;

	km_progress_stage("%s: newton passes, m = %u, %zu rows", ops->name, m, job->rows->n);
	if (job->opts.fit.solver == KM_SOLVER_CG)
		return primal_fit_by_pieces(job, ops, NULL, coef, b, res, err);	/* Newton-CG: I */
	eye = km_approx_job_alloc(job, (size_t) m * m);
	memset(eye, 0, sizeof(double) * m * m);
	for (uint32_t j = 0; j < m; j++)
		eye[j + (size_t) j * m] = 1.0;
	return primal_fit_by_pieces(job, ops, eye, coef, b, res, err);
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

	job->unwhitened = false;
	if (km_pass_rows_check(pass, rows, job->rows->d, true, 0, false, first, err) != KM_OK ||
		km_approx_job_features(job, rows->X, first, rows->n, job->Z, err) != KM_OK)
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

/* The held-out pass's point: the job set up, the fit. */
static void
held_out_point_put(const km_pass *pass, km_point_writer *w)
{
	const held_out_point *hp = pass->at;

	km_approx_point_put_setup(w, hp->job);
	km_point_put_doubles(w, hp->coef, hp->job->b.m);
	km_point_put_f64(w, hp->b);
}

static size_t
held_out_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	held_out_point_put(pass, &w);
	return w.len;
}

static void
held_out_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	held_out_point_put(pass, &w);
}

/* The squared errors of hp's fit on the rows of fold job->holdout. */
static km_pass *
held_out_pass(approx_job *job, held_out_point *hp)
{
	km_pass    *pass = km_approx_job_pass(job, "held-out error", PRIMAL_BLOCK,
										  sizeof(km_metrics), held_out_add);

	pass->at = hp;
	pass->init = held_out_init;
	pass->combine = held_out_combine;
	pass->side = KM_SIDE_FOLD;
	pass->fold = job->holdout;
	pass->kind = KM_PASS_KIND_HELD_OUT;
	pass->point_bytes = held_out_point_bytes;
	pass->point_write = held_out_point_write;
	return pass;
}

/* The mean squared error of the fit (coef, b) on the rows of fold job->holdout. */
static km_status
held_out_mse(approx_job *job, const double *coef, double b, double *mse,
			 km_error *err)
{
	km_metrics	met;
	held_out_point hp = {job, coef, b};
	size_t		rows;
	km_pass    *pass = held_out_pass(job, &hp);

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
	double	   *R;				/* m x m penalty I, once the first basis is built (Newton-CG: NULL) */
	bool		ready;			/* the rows standardized, R and the buffers made */
	km_status	setup;			/* the gamma's factor: KM_OK, or a candidate failure */
} primal_route;

/* A chunk's rows standardized (their check, before any candidate). */
static km_status
standardize_add(km_pass *pass, const km_block *rows, size_t first, void *state,
				km_error *err)
{
	approx_job *job = pass->at;

	if (km_pass_rows_check(pass, rows, job->rows->d, false, 0, false, first, err) != KM_OK)
		return err->status;
	return km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err);
}

static void
standardize_point_put(const km_pass *pass, km_point_writer *w)
{
	km_approx_point_put_job(w, pass->at);
}

static size_t
standardize_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	standardize_point_put(pass, &w);
	return w.len;
}

static void
standardize_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	standardize_point_put(pass, &w);
}

/* Every row standardized by the job's basis: an error is the rows'. */
static km_pass *
standardize_pass(approx_job *job)
{
	km_pass    *pass = km_approx_job_pass(job, "standardize", PRIMAL_BLOCK, 0,
										  standardize_add);

	pass->kind = KM_PASS_KIND_STANDARDIZE;
	pass->point_bytes = standardize_point_bytes;
	pass->point_write = standardize_point_write;
	return pass;
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
	if (!r->ready)
	{
		uint32_t	m = job->b.m;

		size_t		rows;

		/* a row that overflows when standardized: the data's error, not a candidate's */
		if (km_pass_run(job->host, standardize_pass(job), NULL, &rows, err) != KM_OK)
			return err->status;

		if (job->opts.fit.solver != KM_SOLVER_CG)	/* Newton-CG: NULL, I */
		{
			r->R = km_approx_job_alloc(job, (size_t) m * m);
			memset(r->R, 0, sizeof(double) * m * m);
			for (uint32_t j = 0; j < m; j++)
				r->R[j + (size_t) j * m] = 1.0;
		}
		job->Zc = km_approx_job_alloc(job, (size_t) PRIMAL_BLOCK * m + m);
		job->yc = km_approx_job_alloc(job, PRIMAL_BLOCK);
		r->ready = true;
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
	km_sums_fit fit;

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
		return km_approx_job_cg(&job, m, err);	/* pipeline_approx_cg.c */
	if (km_approx_job_sums(&job, &acc, err) != KM_OK)
		return err->status;
	fit.lambdas = job.opts.lambdas.v;
	fit.n_lambdas = job.opts.lambdas.n;
	fit.fit_intercept = job.opts.fit_intercept;
	fit.keep_gp = job.opts.uncertainty;
	fit.evidence = job.opts.cv == KM_CV_EVIDENCE;
	fit.rows_skipped = rows->rows_skipped;
	/* the sums pass the job asked last (job.pass) and its state */
	return km_learn_sums_model(&job.pass, acc, &fit, env, m, err);
}

/* The primal road's rebuilt job: its buffers for k-fold's side too. */
static km_status
rebuild_job(km_point_reader *r, approx_job *job, km_rows *rows, const km_train_env *env,
			bool setup, km_error *err)
{
	if ((setup ? km_approx_point_get_setup(r, job, rows, env, err) :
		 km_approx_point_get_job(r, job, rows, env, err)) != KM_OK)
		return err->status;
	job->Zc = km_approx_job_alloc(job, (size_t) PRIMAL_BLOCK * job->b.m + job->b.m);
	job->yc = km_approx_job_alloc(job, PRIMAL_BLOCK);
	return KM_OK;
}

/* A Newton or tally pass's point: the job, its fit, the Newton's point. */
static km_status
rebuild_primal(uint16_t kind, km_point_reader *r, approx_job *job, km_rows *rows,
			   const km_train_env *env, primal_point **out, km_error *err)
{
	primal_point *pt = env->alloc(env->ctx, sizeof(primal_point));
	km_newton  *nt = env->alloc(env->ctx, sizeof(km_newton));

	memset(nt, 0, sizeof(*nt));
	if (rebuild_job(r, job, rows, env, true, err) != KM_OK ||
		km_point_get_fit(r, &job->opts.fit, err) != KM_OK ||
		km_point_get_newton(r, nt, job->b.m, PRIMAL_BLOCK, 0, env->alloc, env->ctx,
							err) != KM_OK)
		return err->status;
	if (nt->hv != (kind == KM_PASS_KIND_PRIMAL_HV))
		return km_point_bad(err, "regression method's");
	pt->ops = km_method_get(job->opts.fit.method);
	if (pt->ops->primal_add == NULL || pt->ops->primal_tally == NULL ||
		nt->ps.q != 1 || r->left != 0)
		return km_point_bad(err, "regression method's");
	nt->interrupt = env->interrupt;
	nt->Lw = nt->ps.cg ? job->L : NULL;
	nt->ps.ops = pt->ops;
	nt->ps.fit = &job->opts.fit;
	pt->job = job;
	pt->nt = nt;
	*out = pt;
	return KM_OK;
}

km_status
km_primal_pass_rebuild(uint16_t kind, km_point_reader *r, const km_train_env *env,
					   km_pass **out, km_error *err)
{
	approx_job *job = env->alloc(env->ctx, sizeof(approx_job));
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));
	primal_point *pt = NULL;
	held_out_point *hp;
	double	   *coef;
	const unsigned char *at;

	*out = NULL;
	switch ((km_approx_pass_kind) kind)
	{
		case KM_PASS_KIND_PRIMAL_NEWTON:
		case KM_PASS_KIND_PRIMAL_TALLY:
		case KM_PASS_KIND_PRIMAL_HV:
			if (rebuild_primal(kind, r, job, rows, env, &pt, err) != KM_OK)
				return err->status;
			*out = kind == KM_PASS_KIND_PRIMAL_NEWTON ? newton_pass(job, pt) :
				kind == KM_PASS_KIND_PRIMAL_HV ? hv_pass(job, pt) : tally_pass(job, pt);
			return KM_OK;
		case KM_PASS_KIND_HELD_OUT:
			if (rebuild_job(r, job, rows, env, true, err) != KM_OK)
				return err->status;
			hp = env->alloc(env->ctx, sizeof(held_out_point));
			coef = env->alloc(env->ctx, sizeof(double) * job->b.m);
			at = km_point_get_doubles(r, job->b.m);
			hp->job = job;
			hp->coef = coef;
			hp->b = km_point_get_f64(r);
			if (at == NULL || r->bad || r->left != 0 || !isfinite(hp->b) ||
				!km_point_copy_doubles(coef, at, job->b.m))
				return km_point_bad(err, "held-out");
			*out = held_out_pass(job, hp);
			return KM_OK;
		case KM_PASS_KIND_STANDARDIZE:
			if (rebuild_job(r, job, rows, env, false, err) != KM_OK)
				return err->status;
			if (r->left != 0)
				return km_point_bad(err, "standardize");
			*out = standardize_pass(job);
			return KM_OK;
		default:
			return KM_OK;
	}
}
