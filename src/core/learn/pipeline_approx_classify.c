/*
 * pipeline_approx_classify.c - km_train's approximate classifiers
 * (pipeline_approx_classify.h): logistic and svm (squared hinge) over
 * nystrom or rff features, by primal Newton passes over the rows, every
 * class at once (learn/newton.h), each walk over the rows a pass asked of
 * the host (learn/pass.h), whose point travels (km_class_pass_rebuild).
 * The rows walk as the approximate regression's (pipeline_approx_job.h).
 * Training accuracy and log-loss come from the last Newton pass when every
 * solver stopped at the point it evaluated, else from one more pass.
 * k-fold: folds stratified by class over the rows in their order, or the
 * host's own (its row hash modulo the folds); one basis per gamma.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "basis.h"
#include "classify.h"
#include "grid.h"
#include "method.h"
#include "pipeline_approx_classify.h"
#include "pipeline_approx_job.h"
#include "pipeline_class_fill.h"
#include "primal_pass.h"
#include "progress.h"
#include "repr.h"
#include "select.h"

/* One approximate classifier's training: its passes and metrics. */
typedef struct class_job
{
	approx_job	job;			/* the shape, the host, the basis, a chunk's features */
	const km_class_rows *c;		/* the classes' table (no class ids: the host's) */
	size_t		basis_bytes;	/* the plan's */
	uint32_t	q;				/* outputs: 1 (binary) or k (one-vs-rest) */
	bool		logistic;
	uint32_t   *fold;			/* k-fold: each row's fold (pass order), else NULL */
	uint32_t   *bfold;			/* the host's folds (host->folds): a chunk's, else NULL */
	uint32_t	folds;
	uint64_t   *fold_counts;	/* folds x k, then k totals (the folds pass) */
	size_t	   *seen;			/* k: the folds pass's dealing */
	double	   *R;				/* the identity (the features are whitened) */
	double		eps;			/* nystrom: chol(K_mm + eps I) */
	double		gamma;			/* the current basis's */
	uint32_t	m;				/* 0 until the first basis */
	double	   *cache;			/* c->feature_cache: n x m features, or NULL */
	bool		filled;			/* the cache holds this basis's features */
	bool		filling;		/* the pass fills it */
	km_newton	nt;				/* the Newton passes of every output */
	bool		metrics;		/* the Newton passes tally training metrics */
	bool		add_failed;		/* a decision value was not finite (the candidate's) */
	uint32_t	holdout;		/* the held-out pass's fold */
	const double *hcoef;		/* the held-out pass's fit */
	const double *hintercepts;
	double	   *w;				/* a block's row weights */
	double	   *F;				/* a block's decision values, block x q */
	double	   *p;				/* k probabilities */
	double	   *pwork;
	int			passes;
	int			skip;			/* the fold held out (< 0: none), for the log */
} class_job;

static void *
cj_alloc(class_job *cj, size_t bytes)
{
	return cj->job.env->alloc(cj->job.env->ctx, bytes);
}

/* A line for the glue's debug log, when it takes one. */
#define cj_note(cj, ...) km_env_note((cj)->job.env, __VA_ARGS__)

/* A chunk's features (first: its first row): from the cache when filled, else computed (into it). */
static km_status
block_features(class_job *cj, bool fill, const km_block *rows, size_t first,
			   const double **Z, km_error *err)
{
	double	   *dst = cj->cache != NULL ? cj->cache + first * cj->m : cj->job.Z;

	*Z = dst;
	if (cj->cache != NULL && !fill)
		return KM_OK;
	return km_approx_job_features(&cj->job, rows->X, first, rows->n, dst, err);
}

/* The training metrics' tally, a pass's state (after a Newton pass's sums): right, log-loss sum. */
#define TALLY_CORRECT 0
#define TALLY_LOGLOSS 1
#define TALLY_DOUBLES 2

/* The held-out pass's state: the loss's sum, the rows scored, rows it cannot score. */
#define HOLDOUT_SUM 0
#define HOLDOUT_COUNT 1
#define HOLDOUT_BAD 2
#define HOLDOUT_DOUBLES 3

static km_status holdout_add(km_pass *pass, const km_block *rows, size_t first,
							 void *state, km_error *err);
static void holdout_end(km_pass *pass, void *state);
static km_status host_folds_add(km_pass *pass, const km_block *rows, size_t first,
								void *state, km_error *err);

/* A chunk's training accuracy and log-loss at the current coefficients into tally. */
static km_status
block_metrics(class_job *cj, const double *Z, const km_block *rows, size_t first,
			  double *tally, km_error *err)
{
	const km_primal_pass *ps = &cj->nt.ps;
	size_t		bad;

	km_primal_decisions(Z, rows->n, ps->m, ps->q, ps->coef, ps->intercepts, cj->F);
	if (km_primal_block_metrics(cj->F, rows->n, ps->q, ps->k, cj->logistic, rows->cls,
								cj->p, cj->pwork, &tally[TALLY_CORRECT],
								&tally[TALLY_LOGLOSS], &bad, err) != KM_OK)
	{
		if (bad != SIZE_MAX)
			return km_class_fail_nonfinite(err, 0, ps->q, first);
		return err->status;
	}
	return KM_OK;
}

/* The buffers of a basis of m components (the first basis sizes them). */
static void
class_buffers(class_job *cj, uint32_t m)
{
	bool		cg = cj->job.opts.fit.solver == KM_SOLVER_CG;	/* Newton-CG: R = I is NULL */

	cj->m = m;
	if (!cg)
	{
		cj->R = cj_alloc(cj, sizeof(double) * m * m);
		km_zero_pieces(cj->R, sizeof(double) * m * m, cj->job.env->interrupt);
		for (uint32_t j = 0; j < m; j++)
			cj->R[j + (size_t) j * m] = 1.0;
	}
	km_newton_buffers(&cj->nt, m, cj->q, PRIMAL_BLOCK, TALLY_DOUBLES, cg, cj->R,
					  cj_alloc(cj, km_newton_bytes(m, cj->q, PRIMAL_BLOCK, TALLY_DOUBLES, cg)));
	cj->nt.ps.k = cj->c->k;
}

/* The basis (a pass over the rows) for gamma, and nystrom's factor. */
static km_status
class_basis(class_job *cj, double gamma, km_error *err)
{
	approx_job *job = &cj->job;

	if (cj->m != 0 && gamma == cj->gamma)
		return KM_OK;			/* this gamma's basis (and cache) is current */
	job->opts.fit.kernel.gamma = gamma;
	km_approx_job_release(job);
	if (km_approx_job_basis(job, cj->basis_bytes, err) != KM_OK)
		return err->status;
	cj->gamma = gamma;
	cj->filled = false;
	if (cj->m != 0 && job->b.m != cj->m)
		return km_fail(err, KM_ERR_INVALID, "kernel_train: the basis changed its size",
					   "The basis has %u components, not %u.", job->b.m, cj->m);
	if (cj->m == 0)
		class_buffers(cj, job->b.m);
	return km_approx_job_setup(job, &cj->eps, err);
}

static void
note_step(void *arg, uint32_t c, const km_primal_solver *s)
{
	class_job  *cj = arg;

	cj_note(cj, "kernel_train: lambda %g, fold %d, pass %d, output %u: objective %.17g, gradient %.3g of %.3g, step %g, %d Newton steps%s",
			cj->nt.ps.params.lambda, cj->skip, cj->passes, c + 1, s->objective, s->grad_norm,
			s->grad_norm0, s->t, s->iterations, s->done ? " (done)" : "");
}

/* A pass that reads the feature cache fills it when it is not filled yet. */
static void
pass_begin(km_pass *pass, void *state)
{
	class_job  *cj = pass->at;

	cj->filling = !cj->filled;
	/* Newton-CG's own passes read the features unwhitened (learn/newton.h) */
	cj->job.unwhitened = cj->nt.ps.cg && (pass->kind == KM_PASS_KIND_CLASS_NEWTON ||
										  pass->kind == KM_PASS_KIND_CLASS_HV);
}

/* The training metrics' tally of the Newton pass: after the outputs' sums. */
static double *
newton_tally(class_job *cj, void *state)
{
	return (double *) state + km_primal_pass_state_doubles(&cj->nt.ps) * cj->q;
}

/* A Newton pass's state: the active outputs' sums and the tally zeroed (Newton-CG's Hv: N sums). */
static void
newton_begin(km_pass *pass, void *state)
{
	class_job  *cj = pass->at;

	pass_begin(pass, state);
	km_newton_init_state(&cj->nt, state);
	if (!cj->nt.hv)
		memset(newton_tally(cj, state), 0, sizeof(double) * TALLY_DOUBLES);
}

/* A pass whose state is all doubles, zeroed. */
static void
zero_begin(km_pass *pass, void *state)
{
	pass_begin(pass, state);
	memset(state, 0, pass->state_bytes);
}

/* ... and counts it filled when every row went through. */
static void
pass_end(km_pass *pass, void *state)
{
	class_job  *cj = pass->at;

	if (cj->filling)
		cj->filled = cj->cache != NULL;
	cj->passes++;
}

/*
 * The rows' class ids are the job's classes, and a pass that reads the
 * host's folds has them (a rebuilt pass's rows come from another's rules).
 */
static km_status
class_rows_ok(const class_job *cj, const km_block *rows, bool folds, size_t first,
			  km_error *err)
{
	if (folds && cj->bfold != NULL && rows->fold == NULL)
		return km_fail(err, KM_ERR_INVALID, "the host handed rows without their folds",
					   "The block of rows from %zu has no folds; the pass reads the host's.",
					   first + 1);
	return km_pass_rows_check(&cj->job.pass, rows, cj->job.rows->d, false, cj->c->k, false,
							  first, err);
}

/*
 * A chunk at the current point: its features (and its training metrics
 * with cj->metrics) into the sums of the outputs still solving; the rows
 * of fold cj->skip weigh 0.  A decision value that is not finite: with
 * metrics the rows' error, else the candidate's (cj->add_failed).
 */
static km_status
newton_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		   km_error *err)
{
	class_job  *cj = pass->at;
	const km_class_rows *c = cj->c;
	const double *Z;
	uint32_t	bad = 0;
	bool		hv = pass->kind == KM_PASS_KIND_CLASS_HV;

	if (class_rows_ok(cj, rows, cj->skip >= 0, first, err) != KM_OK ||
		block_features(cj, cj->filling, rows, first, &Z, err) != KM_OK ||
		(cj->metrics && !cj->nt.ps.cg && block_metrics(cj, Z, rows, first, newton_tally(cj, state),
											 err) != KM_OK))
		return err->status;
	for (size_t i = 0; i < rows->n; i++)
		cj->w[i] = cj->skip >= 0 &&
			(cj->bfold != NULL ? (uint32_t) rows->fold[i] : cj->fold[first + i]) ==
			(uint32_t) cj->skip ? 0.0 : c->class_w[rows->cls[i]];
	if (!(hv ? km_newton_hv_add(&cj->nt, state, Z, rows->n, NULL, rows->cls, cj->w) :
		  km_newton_add(&cj->nt, state, Z, rows->n, NULL, rows->cls, cj->w, &bad)))
	{
		if (cj->metrics)
			return km_class_fail_nonfinite(err, bad, cj->q, first);
		cj->add_failed = true;
		return km_fail(err, KM_ERR_DIVERGED, "decision value is not finite",
					   "Output %u of %u in the block of rows from %zu.", bad + 1, cj->q, first + 1);
	}
	return KM_OK;
}

/* A chunk's training accuracy and log-loss at the final point. */
static km_status
metrics_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			km_error *err)
{
	class_job  *cj = pass->at;
	const double *Z;

	if (class_rows_ok(cj, rows, false, first, err) != KM_OK ||
		block_features(cj, false, rows, first, &Z, err) != KM_OK ||
		block_metrics(cj, Z, rows, first, state, err) != KM_OK)
		return err->status;
	return KM_OK;
}

/* The job's pass for what (a chunk of PRIMAL_BLOCK rows, in the host's order). */
static km_pass *
class_pass(class_job *cj, const char *what, size_t state_bytes, km_pass_add_fn add)
{
	km_pass    *pass = km_approx_job_pass(&cj->job, what, PRIMAL_BLOCK, state_bytes, add);

	pass->at = cj;
	pass->init = pass_begin;
	pass->end = pass_end;
	/* the learner's own per-row arrays (cache, folds) follow the host's order */
	pass->ordered = cj->cache != NULL || cj->fold != NULL;
	return pass;
}

/* The job's class table, its outputs and loss. */
static void
class_info_put(const class_job *cj, km_point_writer *w)
{
	km_point_put_u32(w, cj->c->k);
	km_point_put_u32(w, cj->q);
	km_point_put_u32(w, cj->logistic ? 1 : 0);
	km_point_put_doubles(w, cj->c->class_w, cj->c->k);
}

/* A Newton or metrics pass's point: the job set up, the classes, the fold left out, the Newton's point. */
static void
class_point_put(const km_pass *pass, km_point_writer *w)
{
	const class_job *cj = pass->at;

	km_approx_point_put_setup(w, &cj->job);
	class_info_put(cj, w);
	km_point_put_u32(w, (uint32_t) (cj->skip + 1));
	km_point_put_u32(w, cj->metrics ? 1 : 0);
	km_point_put_newton(w, &cj->nt);
}

/* The held-out pass's point: the job set up, the classes, the fold, the fit. */
static void
holdout_point_put(const km_pass *pass, km_point_writer *w)
{
	const class_job *cj = pass->at;

	km_approx_point_put_setup(w, &cj->job);
	class_info_put(cj, w);
	km_point_put_u32(w, cj->holdout);
	km_point_put_doubles(w, cj->hcoef, (size_t) cj->m * cj->q);
	km_point_put_doubles(w, cj->hintercepts, cj->q);
}

/* The folds pass's point: the shape, the classes, the folds. */
static void
folds_point_put(const km_pass *pass, km_point_writer *w)
{
	const class_job *cj = pass->at;

	km_approx_point_put_job(w, &cj->job);
	class_info_put(cj, w);
	km_point_put_u32(w, cj->folds);
}

#define POINT_FNS(name) \
static size_t name##_bytes(const km_pass *pass) \
{ km_point_writer w = {NULL, 0}; name##_put(pass, &w); return w.len; } \
static void name##_write(const km_pass *pass, unsigned char *out) \
{ km_point_writer w = {out, 0}; name##_put(pass, &w); }

POINT_FNS(class_point)
POINT_FNS(holdout_point)
POINT_FNS(folds_point)

/* The Newton pass of every output still solving, at the current point. */
static km_pass *
class_newton_pass(class_job *cj)
{
	km_pass    *pass = class_pass(cj, "newton", km_newton_state_bytes(&cj->nt), newton_add);

	pass->init = newton_begin;
	pass->kind = KM_PASS_KIND_CLASS_NEWTON;
	pass->point_bytes = class_point_bytes;
	pass->point_write = class_point_write;
	return pass;
}

/* Newton-CG's Hessian-vector pass: a copy of the Newton pass, of its own kind. */
static km_pass *
class_hv_pass(class_job *cj)
{
	km_pass    *pass = cj_alloc(cj, sizeof(km_pass));

	*pass = *class_newton_pass(cj);
	pass->kind = KM_PASS_KIND_CLASS_HV;
	return pass;			/* its state's size: km_cg_solve's */
}

/* The training accuracy and log-loss at the final point. */
static km_pass *
class_metrics_pass(class_job *cj)
{
	km_pass    *pass = class_pass(cj, "training metrics", sizeof(double) * TALLY_DOUBLES,
								  metrics_add);

	pass->init = zero_begin;
	pass->kind = KM_PASS_KIND_CLASS_METRICS;
	pass->point_bytes = class_point_bytes;
	pass->point_write = class_point_write;
	return pass;
}

/* The loss of (cj->hcoef, cj->hintercepts) on the rows of fold cj->holdout. */
static km_pass *
class_holdout_pass(class_job *cj)
{
	km_pass    *pass = class_pass(cj, "held-out loss", sizeof(double) * HOLDOUT_DOUBLES,
								  holdout_add);

	pass->init = zero_begin;
	pass->end = holdout_end;
	pass->side = KM_SIDE_FOLD;
	pass->fold = (int) cj->holdout;
	pass->kind = KM_PASS_KIND_CLASS_HOLDOUT;
	pass->point_bytes = holdout_point_bytes;
	pass->point_write = holdout_point_write;
	return pass;
}

/* The host's folds counted per fold and class (the state: folds + 1 rows of k). */
static km_pass *
class_folds_pass(class_job *cj)
{
	km_pass    *pass = km_approx_job_pass(&cj->job, "folds", PRIMAL_BLOCK,
										  sizeof(double) * ((size_t) cj->folds + 1) * cj->c->k,
										  host_folds_add);

	pass->at = cj;
	pass->init = zero_begin;
	pass->kind = KM_PASS_KIND_CLASS_FOLDS;
	pass->point_bytes = folds_point_bytes;
	pass->point_write = folds_point_write;
	return pass;
}

/*
 * Newton passes from coef = 0, b = 0 at lambda, over every row but those
 * of fold `skip` (skip < 0: every row), which weigh 0.  The training
 * metrics (skip < 0 only) come from the last pass when every solver
 * stopped at the point that pass evaluated, else from one more pass.
 * *failed (err filled) when a step fails or a decision value is not finite
 * (the candidate's failure); another status is the rows' error.
 */
static km_status
class_newton(class_job *cj, double lambda, int skip, double *coef,
			 double *intercepts, km_class_fit_result *res, bool *failed,
			 km_error *err)
{
	const km_options *o = &cj->job.opts;
	km_primal_params pp;
	size_t		n = cj->job.rows->n;
	size_t		rows;
	bool		step_failed;
	km_pass    *pass;
	double		tally[TALLY_DOUBLES];

	*failed = false;
	pp.loss = cj->logistic ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE;
	pp.lambda = lambda;
	pp.fit_intercept = o->fit_intercept;
	pp.tol = o->fit.tol;
	pp.max_iter = o->fit.max_iter;
	cj->skip = skip;
	cj->metrics = skip < 0;
	cj->add_failed = false;
	km_newton_start(&cj->nt, &pp, coef, intercepts);
	cj->nt.hv_pass = cj->nt.ps.cg ? class_hv_pass(cj) : NULL;
	cj->nt.Lw = cj->nt.ps.cg ? cj->job.L : NULL;	/* nystrom: the passes' features unwhitened */
	if (cj->nt.Lw != NULL && cj->nt.Rf == NULL)
		cj->nt.Rf = cj_alloc(cj, sizeof(double) * cj->m * cj->m);
	pass = class_newton_pass(cj);
	if (km_newton_run(&cj->nt, cj->job.host, pass, &step_failed, err) != KM_OK)
	{
		if (step_failed || cj->add_failed)
		{
			*failed = true;
			return KM_OK;
		}
		return err->status;
	}
	km_primal_pass_totals(&cj->nt.ps, &res->objective, &res->iterations, &res->converged);
	if (!cj->metrics)
		return KM_OK;
	/* the last Newton pass's tally, when it evaluated the final point */
	memcpy(tally, newton_tally(cj, cj->nt.ps.states), sizeof(tally));
	if (!cj->nt.ps.current || cj->nt.ps.cg)
	{
		pass = class_metrics_pass(cj);
		if (km_pass_run(cj->job.host, pass, tally, &rows, err) != KM_OK)
			return err->status;
	}
	res->train_accuracy = tally[TALLY_CORRECT] / (double) n;
	res->train_log_loss = cj->logistic ? tally[TALLY_LOGLOSS] / (double) n : NAN;
	return KM_OK;
}

/* A chunk's rows of fold cj->holdout scored at (cj->hcoef, cj->hintercepts). */
static km_status
holdout_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			km_error *err)
{
	class_job  *cj = pass->at;
	double	   *h = state;
	const double *Z;
	int64_t		count = 0;

	if (h[HOLDOUT_BAD] > 0.0)
		return KM_OK;
	if (class_rows_ok(cj, rows, true, first, err) != KM_OK ||
		block_features(cj, cj->filling, rows, first, &Z, err) != KM_OK)
		return err->status;
	km_primal_decisions(Z, rows->n, cj->m, cj->q, cj->hcoef, cj->hintercepts, cj->F);
	if (cj->bfold != NULL)
		for (size_t i = 0; i < rows->n; i++)
			cj->bfold[i] = (uint32_t) rows->fold[i];
	if (!km_primal_block_holdout(cj->F, rows->n, cj->q, cj->c->k, cj->logistic,
								 rows->cls, cj->bfold != NULL ? cj->bfold : cj->fold + first,
								 cj->holdout, cj->p,
								 cj->pwork, &h[HOLDOUT_SUM], &count))
		h[HOLDOUT_BAD] = 1.0;
	h[HOLDOUT_COUNT] += (double) count;
	return KM_OK;
}

/* ... counted only when it scored every row (else the cache is not full either). */
static void
holdout_end(km_pass *pass, void *state)
{
	if (((double *) state)[HOLDOUT_BAD] == 0.0)
		pass_end(pass, state);
}

/*
 * The loss (*loss; NaN when it cannot be scored) of (coef, intercepts) on
 * the rows of fold v, as exact model selection scores (methods.c): 1 -
 * accuracy (svm) or the mean log-loss (logistic, probabilities clipped to
 * [eps, 1 - eps]).  One pass.
 */
static km_status
holdout_loss(class_job *cj, uint32_t v, const double *coef,
			 const double *intercepts, double *loss, km_error *err)
{
	double		h[HOLDOUT_DOUBLES];
	km_pass    *pass;
	size_t		rows;

	*loss = NAN;
	cj->holdout = v;
	cj->hcoef = coef;
	cj->hintercepts = intercepts;
	pass = class_holdout_pass(cj);
	if (km_pass_run(cj->job.host, pass, h, &rows, err) != KM_OK)
		return err->status;
	if (h[HOLDOUT_BAD] == 0.0 && h[HOLDOUT_COUNT] > 0.0)
		*loss = h[HOLDOUT_SUM] / h[HOLDOUT_COUNT];
	return KM_OK;
}

/*
 * A chunk's folds: class c's r-th row (in the host's order) is dealt
 * start_c + r, start_c the rows of the classes before c (km_stratified_folds,
 * from the classes' counts), and counted per fold and class.
 */
static km_status
folds_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	class_job  *cj = pass->at;
	uint32_t	k = cj->c->k;
	uint64_t   *totals = cj->fold_counts + (size_t) cj->folds * k;

	for (size_t i = 0; i < rows->n; i++)
	{
		uint32_t	c = rows->cls[i];
		uint32_t	f = (uint32_t) (cj->seen[c]++ % cj->folds);

		cj->fold[first + i] = f;
		cj->fold_counts[(size_t) f * k + c]++;
		totals[c]++;
	}
	return KM_OK;
}

/* A chunk's folds as the host gives them (host->folds), counted per fold and class. */
static km_status
host_folds_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			   km_error *err)
{
	class_job  *cj = pass->at;
	uint32_t	k = cj->c->k;
	double	   *counts = state;
	double	   *totals = counts + (size_t) cj->folds * k;

	if (class_rows_ok(cj, rows, true, first, err) != KM_OK)
		return err->status;
	for (size_t i = 0; i < rows->n; i++)
	{
		uint32_t	c = rows->cls[i];
		int			f = rows->fold[i];

		if (f < 0 || (uint32_t) f >= cj->folds)
			return km_fail(err, KM_ERR_INVALID, "the host handed a row of no fold",
						   "Row %zu is in fold %d of %u.", first + i + 1, f, cj->folds);
		counts[(size_t) f * k + c] += 1.0;
		totals[c] += 1.0;
	}
	return KM_OK;
}

/*
 * Each row's fold (stratified by class over the rows in the host's order:
 * the glue's hash order), by one ordered pass, into cj->fold; or, from a
 * host that gives each row's fold (the cursor host: its row hash modulo
 * the folds), counted by one pass, with nothing kept per row.  Per fold
 * (*fold_ok): whether it has rows and its training rows have every class.
 */
static km_status
class_folds(class_job *cj, uint32_t folds, bool **fold_ok, km_error *err)
{
	size_t		n = cj->job.rows->n;
	const km_class_rows *c = cj->c;
	uint32_t	k = c->k;
	uint64_t   *totals;			/* k */
	size_t		start = 0;
	size_t		rows;
	bool	   *ok;
	km_pass    *pass;

	if (folds < 2 || (size_t) folds > n)
		return km_fail(err, KM_ERR_INVALID, "cv needs between 2 and the number of rows folds",
					   "Option \"cv\" asks for %u folds of %zu rows.", folds, n);
	cj->folds = folds;
	cj->fold_counts = cj_alloc(cj, sizeof(uint64_t) * ((size_t) folds + 1) * k);
	memset(cj->fold_counts, 0, sizeof(uint64_t) * ((size_t) folds + 1) * k);
	totals = cj->fold_counts + (size_t) folds * k;
	ok = cj_alloc(cj, sizeof(bool) * folds);
	if (cj->job.host->folds)
	{
		/* the host's folds, counted per class in the pass's state */
		size_t		nc = ((size_t) folds + 1) * k;
		double	   *counts = cj_alloc(cj, sizeof(double) * nc);

		cj->bfold = cj_alloc(cj, sizeof(uint32_t) * PRIMAL_BLOCK);
		if (km_pass_run(cj->job.host, class_folds_pass(cj), counts, &rows, err) != KM_OK)
			return err->status;
		for (size_t i = 0; i < nc; i++)
			cj->fold_counts[i] = (uint64_t) counts[i];
		cj->job.env->release(cj->job.env->ctx, counts);
		pass = NULL;
	}
	else
	{
		cj->fold = cj_alloc(cj, n * sizeof(uint32_t));
		cj->seen = cj_alloc(cj, sizeof(size_t) * k);
		for (uint32_t j = 0; j < k; j++)
		{
			cj->seen[j] = start;
			start += (size_t) c->counts[j];
		}
		pass = km_approx_job_pass(&cj->job, "folds", 0, 0, folds_add);
	}
	if (pass != NULL)
	{
		pass->at = cj;
		pass->ordered = true;
		if (km_pass_run(cj->job.host, pass, NULL, &rows, err) != KM_OK)
			return err->status;
	}
	for (uint32_t v = 0; v < folds; v++)
	{
		uint64_t	in = 0;

		ok[v] = true;
		for (uint32_t j = 0; j < k; j++)
		{
			in += cj->fold_counts[(size_t) v * k + j];
			if (totals[j] == cj->fold_counts[(size_t) v * k + j])
				ok[v] = false;
		}
		if (in == 0)
			ok[v] = false;
	}
	*fold_ok = ok;
	return KM_OK;
}

/*
 * A candidate's k-fold score: each fold a Newton fit from zero on the other
 * folds' rows and a pass scoring its own.  A fold whose training rows miss
 * a class, or whose fit fails, makes the candidate NaN (not chosen).
 */
static km_status
class_candidate(class_job *cj, const bool *fold_ok, uint32_t folds, double *coef,
				double *intercepts, km_candidate *cand, km_error *err)
{
	double		sum = 0.0;
	double		sumsq = 0.0;

	for (uint32_t v = 0; v < folds; v++)
	{
		km_class_fit_result res;
		bool		failed = false;
		double		loss = NAN;

		/* a failed fit leaves its error in err, which the search forgets */
		if (cand->lambda > 0.0 && fold_ok[v] &&
			(class_newton(cj, cand->lambda, (int) v, coef, intercepts, &res,
						  &failed, err) != KM_OK ||
			 (!failed && holdout_loss(cj, v, coef, intercepts, &loss, err) != KM_OK)))
			return err->status;
		if (!isfinite(loss))
		{
			cand->score = NAN;
			cand->score_std = 0.0;
			return KM_OK;
		}
		sum += loss;
		sumsq += loss * loss;
	}
	cand->score = sum / folds;
	cand->score_std = sqrt(fmax(sumsq / folds - cand->score * cand->score, 0.0));
	km_progress_stage("candidate gamma %g, lambda %g: %s %.6g",
					  cand->gamma, cand->lambda, cj->logistic ? "log-loss" : "error rate",
					  cand->score);
	return KM_OK;
}

/* The route of class_select through the core's grid loop (grid.h). */
typedef struct class_grid
{
	class_job  *cj;
	const bool *fold_ok;
	uint32_t	folds;
	double	   *coef;
	double	   *intercepts;
} class_grid;

/* A gamma's setup: its basis (a pass over the rows) and nystrom's factor. */
static km_status
grid_gamma(void *arg, int g, double gamma, km_error *err)
{
	return class_basis(((class_grid *) arg)->cj, gamma, err);
}

static km_status
grid_score(void *arg, int index, km_candidate *cand, km_error *err)
{
	class_grid *cg = arg;

	return class_candidate(cg->cj, cg->fold_ok, cg->folds, cg->coef, cg->intercepts,
						   cand, err);
}

/*
 * k-fold over the gamma and lambda grids by the core's grid loop (candidate
 * g * n_lambdas + l; the winner km_best_candidate's: lowest mean loss, ties
 * to the larger lambda, then the smaller gamma); the winner's gamma's basis
 * is current after (kept when it is the last gamma's).
 */
static km_status
class_select(class_job *cj, double *coef, double *intercepts,
			 km_candidate *cand, int *best, km_error *err)
{
	const km_options *opts = &cj->job.opts;
	class_grid	cg = {cj, NULL, (uint32_t) opts->folds, coef, intercepts};
	km_grid_route route = {.arg = &cg, .gamma = grid_gamma, .score = grid_score,
	.none = km_class_grid_none};
	int			ng = opts->gammas.n > 0 ? opts->gammas.n : 1;
	int			nl = opts->lambdas.n > 0 ? opts->lambdas.n : 1;
	double		gamma0 = opts->fit.kernel.gamma;	/* the basis's gamma moves */
	double		lambda0 = opts->fit.lambda;
	bool	   *fold_ok = NULL;

	if (class_folds(cj, cg.folds, &fold_ok, err) != KM_OK)
		return err->status;
	cg.fold_ok = fold_ok;
	if (km_grid_search(opts->gammas.n > 0 ? opts->gammas.v : &gamma0, ng,
					   opts->lambdas.n > 0 ? opts->lambdas.v : &lambda0, nl,
					   &route, cand, best, err) != KM_OK)
		return err->status;
	cj->job.opts.fit.lambda = cand[*best].lambda;
	return class_basis(cj, cand[*best].gamma, err);
}

/* The model: alpha = L^-T w (rff: w), the basis and what it keeps, the classes. */
static km_status
class_model(class_job *cj, double *coef, double *intercepts,
			km_class_fit_result *res, int ncand, int best, km_candidate *cand,
			km_model *m, km_error *err)
{
	const km_basis *b = &cj->job.b;
	const km_options *opts = &cj->job.opts;
	km_basis_kept kept;

	km_basis_kept_of(b, b->m, cj->eps, &kept);
	if (cj->job.L != NULL)
		km_primal_unwhiten(cj->job.L, cj->m, cj->q, coef);
	if (!km_all_finite(coef, (size_t) cj->m * cj->q))
	{
		km_fail(err, KM_ERR_DIVERGED, "approximate classifier coefficients are out of range for type double precision",
				"alpha = L^-T w over the %u centres is not finite (eps %g).", cj->m, cj->eps);
		snprintf(err->hint, sizeof(err->hint), "%s", "Raise lambda, or use fewer components.");
		return err->status;
	}
	res->solver = opts->fit.solver == KM_SOLVER_CG ? KM_SOLVER_CG : KM_SOLVER_PRIMAL_NEWTON;
	res->multiclass = cj->q == 1 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
	res->n_outputs = cj->q;
	res->has_probability = cj->logistic;
	res->n_support = 0;
	m->n_train = b->m;
	m->n_features = b->d;
	m->n_outputs = cj->q;
	m->rows_seen = (uint64_t) cj->job.rows->n;
	m->rows_skipped = cj->job.rows->rows_skipped;
	m->mean = b->mean;
	m->scale = b->scale;
	m->alpha = coef;
	m->X = kept.X;
	m->intercepts = intercepts;
	km_train_fill_classes(m, opts, cj->c, ncand, best, cand);
	m->kernel = b->kernel;
	m->standardize = b->standardize;
	m->approximation = b->kind;
	m->components = (uint32_t) opts->components;
	m->rank = b->m;
	m->approx_eps = cj->eps;
	m->approx_seed = b->seed;
	m->centers = b->centres_kind;
	m->rff_W = b->W;
	m->rff_b = b->b;
	return KM_OK;
}

/* The job of rows (the shape) on host with plan, and its per-chunk buffers. */
static void
class_init(class_job *cj, const km_rows *rows, const km_host *host,
		   const km_train_plan *plan, const km_train_env *env)
{
	uint32_t	k = rows->classes->k;

	memset(cj, 0, sizeof(*cj));
	km_approx_job_init(&cj->job, rows, host, env, &plan->opts);
	cj->c = rows->classes;
	cj->basis_bytes = plan->basis_bytes;
	cj->q = plan->q;
	cj->logistic = km_method_get(plan->opts.fit.method)->primal_loss == KM_PRIMAL_LOGISTIC;
	cj->cache = plan->opts.fit.solver == KM_SOLVER_CG ? NULL : rows->classes->feature_cache;
	cj->w = km_approx_job_alloc(&cj->job, PRIMAL_BLOCK);
	cj->F = km_approx_job_alloc(&cj->job, (size_t) PRIMAL_BLOCK * cj->q);
	cj->p = km_approx_job_alloc(&cj->job, k);
	cj->pwork = km_approx_job_alloc(&cj->job, km_classify_proba_work_doubles(k) + 1);
	cj->nt.interrupt = env->interrupt;
	cj->nt.ps.on_step = note_step;
	cj->nt.ps.on_step_arg = cj;
}

km_status
km_train_approx_classes(const km_rows *rows, const km_host *host,
						const km_train_plan *plan, const km_train_env *env,
						km_model *m, km_error *err)
{
	const km_options *o = &plan->opts;
	class_job	cj;
	double	   *coef;
	double	   *intercepts;
	km_class_fit_result *res = rows->classes->res;
	bool		failed = false;
	km_candidate *cand = NULL;
	int			best = 0;

	if (rows->n == 0 || plan->basis_bytes == 0 || plan->q == 0)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows and a basis state of %zu bytes.",
					   rows->n, plan->basis_bytes);
	class_init(&cj, rows, host, plan, env);
	memset(m, 0, sizeof(*m));
	memset(res, 0, sizeof(*res));
	/* the first basis sizes the buffers */
	if (class_basis(&cj, km_options_selects(o) && o->gammas.n > 0 ?
					o->gammas.v[0] : o->fit.kernel.gamma, err) != KM_OK)
		return err->status;
	coef = km_approx_job_alloc(&cj.job, (size_t) cj.m * cj.q);
	intercepts = km_approx_job_alloc(&cj.job, cj.q);
	memset(intercepts, 0, sizeof(double) * cj.q);
	if (plan->ncand > 0)
	{
		cand = cj_alloc(&cj, sizeof(km_candidate) * plan->ncand);
		memset(cand, 0, sizeof(km_candidate) * plan->ncand);
		if (class_select(&cj, coef, intercepts, cand, &best, err) != KM_OK)
			return err->status;
	}
	/* the fit on every row */
	if (class_newton(&cj, cj.job.opts.fit.lambda, -1, coef, intercepts, res,
					 &failed, err) != KM_OK || failed ||
		class_model(&cj, coef, intercepts, res, plan->ncand, best, cand, m, err) != KM_OK)
		return err->status;
	cj_note(&cj, "kernel_train: approximate %s, %u classes, m = %u, %d passes%s, training accuracy %.6f",
			km_method_name(o->fit.method), cj.c->k, cj.m, cj.passes,
			cj.cache != NULL ? " (features cached)" : "", res->train_accuracy);
	return KM_OK;
}

/* A class job from a point (kinds 7 to 10, 16): the job, the classes, the chunk buffers. */
static km_status
class_rebuild(km_point_reader *r, class_job *cj, const km_train_env *env, bool setup,
			  km_error *err)
{
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));
	km_class_rows *c = env->alloc(env->ctx, sizeof(km_class_rows));
	uint32_t	k;
	double	   *w;
	const unsigned char *at;

	memset(cj, 0, sizeof(*cj));
	memset(c, 0, sizeof(*c));
	if ((setup ? km_approx_point_get_setup(r, &cj->job, rows, env, err) :
		 km_approx_point_get_job(r, &cj->job, rows, env, err)) != KM_OK)
		return err->status;
	k = km_point_get_u32(r);
	cj->q = km_point_get_u32(r);
	cj->logistic = km_point_get_u32(r) != 0;
	at = k >= 2 && k <= KM_MAX_CLASSES ? km_point_get_doubles(r, k) : NULL;
	w = env->alloc(env->ctx, sizeof(double) * KM_MAX_CLASSES);
	if (at == NULL || cj->q != km_primal_outputs(k) || !km_point_copy_doubles(w, at, k))
		return km_point_bad(err, "classifier's");
	c->k = k;
	c->class_w = w;
	rows->classes = c;
	cj->c = c;
	cj->m = cj->job.b.m;
	cj->skip = -1;
	cj->bfold = km_approx_job_alloc(&cj->job, PRIMAL_BLOCK);
	cj->w = km_approx_job_alloc(&cj->job, PRIMAL_BLOCK);
	cj->F = km_approx_job_alloc(&cj->job, (size_t) PRIMAL_BLOCK * cj->q);
	cj->p = km_approx_job_alloc(&cj->job, k);
	cj->pwork = km_approx_job_alloc(&cj->job, km_classify_proba_work_doubles(k) + 1);
	cj->nt.interrupt = env->interrupt;
	return KM_OK;
}

km_status
km_class_pass_rebuild(uint16_t kind, km_point_reader *r, const km_train_env *env,
					  km_pass **out, km_error *err)
{
	class_job  *cj = env->alloc(env->ctx, sizeof(class_job));
	size_t		mq;
	double	   *v;
	const unsigned char *coef;
	const unsigned char *b;

	*out = NULL;
	if ((kind < KM_PASS_KIND_CLASS_NEWTON || kind > KM_PASS_KIND_CLASS_FOLDS) &&
		kind != KM_PASS_KIND_CLASS_HV)
		return KM_OK;
	if (class_rebuild(r, cj, env, kind != KM_PASS_KIND_CLASS_FOLDS, err) != KM_OK)
		return err->status;
	mq = (size_t) cj->m * cj->q;
	if (kind == KM_PASS_KIND_CLASS_FOLDS)
	{
		cj->folds = km_point_get_u32(r);
		if (cj->folds < 2 || cj->folds > 1000000)
			return km_point_bad(err, "folds");
		*out = class_folds_pass(cj);
	}
	else if (kind == KM_PASS_KIND_CLASS_HOLDOUT)
	{
		cj->holdout = km_point_get_u32(r);
		coef = km_point_get_doubles(r, mq);
		b = km_point_get_doubles(r, cj->q);
		v = env->alloc(env->ctx, sizeof(double) * (mq + cj->q));
		if (coef == NULL || b == NULL || !km_point_copy_doubles(v, coef, mq) ||
			!km_point_copy_doubles(v + mq, b, cj->q))
			return km_point_bad(err, "held-out");
		cj->hcoef = v;
		cj->hintercepts = v + mq;
		*out = class_holdout_pass(cj);
	}
	else
	{
		uint32_t	skip = km_point_get_u32(r);	/* the fold left out + 1 (0: none) */

		if (skip > 1000000)		/* folds are at most 1000000, as kind 10's */
			return km_point_bad(err, "classifier's Newton");
		cj->skip = (int) skip - 1;
		cj->metrics = km_point_get_u32(r) != 0;
		if (km_point_get_newton(r, &cj->nt, cj->m, PRIMAL_BLOCK, TALLY_DOUBLES,
								env->alloc, env->ctx, err) != KM_OK)
			return err->status;
		cj->nt.Lw = cj->nt.ps.cg ? cj->job.L : NULL;
		if (cj->nt.ps.q != cj->q || cj->nt.ps.k != cj->c->k ||
			cj->nt.hv != (kind == KM_PASS_KIND_CLASS_HV))
			return km_point_bad(err, "classifier's Newton");
		*out = kind == KM_PASS_KIND_CLASS_NEWTON ? class_newton_pass(cj) :
			kind == KM_PASS_KIND_CLASS_HV ? class_hv_pass(cj) : class_metrics_pass(cj);
	}
	if (r->bad || r->left != 0)
	{
		*out = NULL;
		return km_point_bad(err, "classifier's");
	}
	return KM_OK;
}
