/*
 * approx_classify.c - approximate classifiers: the basis, the whitened
 * features and the primal Newton passes over the rows (approx_classify.h).
 *
 * Each Newton step of every class is one pass: for each block of rows,
 * standardize with the basis's scaler, compute the features (or read them
 * from the cache), whiten them (nystrom), and add the block into the
 * statistics of each class whose solver is not done (km_primal_add: one
 * dgemv + one dsyrk).  Training accuracy and log-loss come from the last
 * pass when every solver stopped at the point it evaluated, else from one
 * more pass at the final coefficients.
 */
#include "postgres.h"

#include <float.h>
#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "approx_classify.h"
#include "basis.h"
#include "classify.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "primal_pass.h"
#include "repr.h"
#include "select.h"
#include "solve.h"
#include "train_rows.h"

/* Rows per block: features block x m, one dsyrk per class. */
#define AC_BLOCK 512

typedef struct PassBufs
{
	double	   *Xs;				/* AC_BLOCK x d standardized rows */
	double	   *Z;				/* AC_BLOCK x m features (when not cached) */
	double	   *fwork;			/* km_approx_features' work */
	double	   *w;				/* AC_BLOCK row weights */
} PassBufs;

/*
 * The features of rows [i0, i0 + r) (whitened for nystrom): from the cache
 * when there is one (filled on the first pass), else computed into bufs->Z.
 * A row's features cost about 2 m d flops and its whitening m^2: at
 * m = 8192 a whole block would be seconds of BLAS that cannot be
 * interrupted, so the rows go in pieces (train_rows.h km_rows_features).
 */
static const double *
block_features(RowSet *rs, const km_basis *b, const double *L, double *cache,
			   bool fill, int64 i0, int64 r, PassBufs *bufs)
{
	uint32		m = b->m;
	double	   *Z;

	if (cache != NULL && !fill)
		return cache + (size_t) i0 * m;
	Z = cache != NULL ? cache + (size_t) i0 * m : bufs->Z;
	rowset_standardize(rs, b, i0, r, bufs->Xs);
	km_rows_features(b, L, bufs->Xs, r, Z, bufs->fwork, i0);
	return Z;
}

static void
raise_nonfinite(int c, uint32 q, int64 i0)
{
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("decision value is out of range for type double precision"),
			 errdetail("A decision value of output %d of %u in the block of rows from " INT64_FORMAT " is not finite during the Newton passes.",
					   c + 1, q, i0 + 1),
			 errhint("Raise lambda, or standardize the features (\"standardize\": true).")));
}

/* Training accuracy and log-loss sums over blocks at the current coefficients. */
typedef struct PassMetrics
{
	double	   *F;				/* AC_BLOCK x q decision values */
	double	   *p;				/* k probabilities */
	double	   *pwork;
	double		correct;
	double		logloss;
} PassMetrics;

static void
block_metrics(PassMetrics *pm, const double *Z, int64 r, const km_primal_pass *ps,
			  bool logistic, const uint32 *cls, int64 i0)
{
	km_error	err;
	size_t		bad;

	km_primal_decisions(Z, (size_t) r, ps->m, ps->q, ps->coef, ps->intercepts, pm->F);
	if (km_primal_block_metrics(pm->F, (size_t) r, ps->q, ps->k, logistic, cls + i0,
								pm->p, pm->pwork, &pm->correct, &pm->logloss,
								&bad, &err) != KM_OK)
	{
		if (bad != SIZE_MAX)
			raise_nonfinite(0, ps->q, i0);
		km_raise(&err);
	}
}

/*
 * What the passes share: the rows, the basis and its factor, the feature
 * cache, the passes' state (solvers, sums) and the buffers.  One basis per
 * gamma (the centres or the random draw do not depend on the fold: the
 * basis is over every row, as an unsupervised step; only the labels are
 * held out).
 */
typedef struct Fitter
{
	RowSet	   *rs;
	const km_options *opts;
	const uint32 *cls;
	uint32	   *fold;			/* k-fold selection: each row's fold, else NULL */
	uint32		k;
	uint32		q;
	bool		logistic;
	const double *class_w;
	Size		sbytes;
	km_basis   *b;				/* in basis_cxt (the model reads it after the fit) */
	MemoryContext basis_cxt;
	uint32		m;				/* 0 until the first basis */
	double		gamma;			/* the basis's */
	double	   *L;				/* nystrom: chol(K_mm + eps I); else NULL */
	double	   *R;				/* the identity (the features are whitened) */
	double		eps;
	double		cache_bytes;	/* 0: no cache */
	double	   *cache;
	bool		filled;			/* the cache holds this basis's features */
	km_primal_pass ps;			/* the Newton passes of every output */
	PassBufs	bufs;
	PassMetrics pm;
	int			passes;
	int			skip;			/* the fold held out (< 0: none), for the log */
} Fitter;

/* The buffers of a basis of m components (the first basis sizes them). */
static void
fitter_buffers(Fitter *ft, const km_basis *b)
{
	uint32		m = b->m;
	uint32		q = ft->q;

	ft->m = m;
	if (km_repr_lookup(b->kind)->centres)
		ft->L = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE);
	ft->R = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (uint32 j = 0; j < m; j++)
		ft->R[j + (size_t) j * m] = 1.0;
	ft->bufs.Z = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, m)), MCXT_ALLOC_HUGE);
	ft->bufs.fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(b, AC_BLOCK) + 1),
									 MCXT_ALLOC_HUGE);
	ft->ps.scratch = palloc_extended(mul_size(sizeof(double), km_primal_add_scratch_doubles(m, AC_BLOCK)),
									 MCXT_ALLOC_HUGE);
	if (ft->cache_bytes > 0.0)
		ft->cache = palloc_extended((Size) ft->cache_bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	ft->ps.states = palloc_extended(mul_size(sizeof(double), mul_size(km_primal_state_doubles(m), q)),
									MCXT_ALLOC_HUGE);
	ft->ps.vecs = palloc_extended(mul_size(sizeof(double), mul_size(2 * (Size) m, q)), MCXT_ALLOC_HUGE);
	ft->ps.swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)), MCXT_ALLOC_HUGE);
	ft->ps.solvers = palloc(sizeof(km_primal_solver) * q);
	ft->ps.before = palloc(sizeof(double) * (m + 1));
	ft->ps.m = m;
	ft->ps.R = ft->R;
}

/* The basis (pass over the rows) for gamma, and nystrom's factor. */
static void
fitter_basis(Fitter *ft, double gamma)
{
	km_options	o = *ft->opts;
	km_basis   *b = ft->b;
	km_error	err;
	MemoryContext old;

	if (ft->m != 0 && gamma == ft->gamma)
		return;					/* this gamma's basis (and cache) is current */
	o.fit.kernel.gamma = gamma;
	/* each gamma's basis in its own context, the previous one's freed */
	if (ft->basis_cxt == NULL)
		ft->basis_cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml classifier basis",
											  ALLOCSET_DEFAULT_SIZES);
	else
		MemoryContextReset(ft->basis_cxt);
	old = MemoryContextSwitchTo(ft->basis_cxt);
	rowset_basis(ft->rs, &o, ft->sbytes, ft->bufs.Xs, b);
	MemoryContextSwitchTo(old);
	ft->gamma = gamma;
	ft->filled = false;
	ft->eps = 0.0;
	if (ft->m != 0 && b->m != ft->m)
		elog(ERROR, "kernel_train: the basis has %u components, not %u", b->m, ft->m);
	if (ft->m == 0)
		fitter_buffers(ft, b);
	if (km_repr_lookup(b->kind)->centres)
	{
		double	   *fwork = palloc_extended(mul_size(sizeof(double), km_approx_factor_doubles(b->m) + 1),
											MCXT_ALLOC_HUGE);

		if (km_approx_factor(b, ft->L, &ft->eps, fwork, &err, km_interrupt) != KM_OK)
			km_raise(&err);
		pfree(fwork);
	}
}

static void
fitter_log_step(void *arg, uint32_t c, const km_primal_solver *s)
{
	Fitter	   *ft = arg;

	elog(DEBUG1, "kernel_train: lambda %g, fold %d, pass %d, output %u: objective %.17g, gradient %.3g of %.3g, step %g, %d Newton steps%s",
		 ft->ps.params.lambda, ft->skip, ft->passes, c + 1, s->objective, s->grad_norm,
		 s->grad_norm0, s->t, s->iterations, s->done ? " (done)" : "");
}

/*
 * One pass over the rows at the current point: every block's features
 * (and its training metrics with metrics) into the sums of the outputs
 * still solving.  false (with *err) when a decision value is not finite
 * and !metrics (with metrics that raises).
 */
static bool
fitter_pass(Fitter *ft, bool metrics, km_error *err)
{
	RowSet	   *rs = ft->rs;
	int64		n = rs->n;
	PassBufs   *bufs = &ft->bufs;
	uint32		bad;

	ft->pm.correct = 0.0;
	ft->pm.logloss = 0.0;
	for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
	{
		int64		r = Min((int64) AC_BLOCK, n - i0);
		const double *Z = block_features(rs, ft->b, ft->L, ft->cache, !ft->filled,
										 i0, r, bufs);

		if (metrics)
			block_metrics(&ft->pm, Z, r, &ft->ps, ft->logistic, ft->cls, i0);
		for (int64 i = 0; i < r; i++)
			bufs->w[i] = ft->skip >= 0 && ft->fold[i0 + i] == (uint32) ft->skip ?
				0.0 : ft->class_w[ft->cls[i0 + i]];
		if (km_primal_pass_add(&ft->ps, Z, (size_t) r, ft->cls + i0, bufs->w, &bad,
							   km_interrupt) != KM_OK)
		{
			if (metrics)
				raise_nonfinite((int) bad, ft->q, i0);
			km_fail(err, KM_ERR_DIVERGED, "decision value is not finite",
					"Output %d of %u in the block of rows from " INT64_FORMAT ".",
					(int) bad + 1, ft->q, i0 + 1);
			return false;
		}
		CHECK_FOR_INTERRUPTS();
	}
	ft->filled = ft->cache != NULL;
	ft->passes++;
	return true;
}

/* Training accuracy and log-loss at the final point, by one more pass. */
static void
fitter_metrics_pass(Fitter *ft)
{
	int64		n = ft->rs->n;

	ft->pm.correct = 0.0;
	ft->pm.logloss = 0.0;
	for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
	{
		int64		r = Min((int64) AC_BLOCK, n - i0);
		const double *Z = block_features(ft->rs, ft->b, ft->L, ft->cache, false,
										 i0, r, &ft->bufs);

		block_metrics(&ft->pm, Z, r, &ft->ps, ft->logistic, ft->cls, i0);
		CHECK_FOR_INTERRUPTS();
	}
	ft->passes++;
}

/*
 * Newton passes from coef = 0, b = 0 at lambda, over every row but those
 * of fold `skip` (ft->fold[i] == skip; skip < 0: every row), which weigh 0.
 * The training metrics (skip < 0 only) come from the last pass when every
 * solver stopped at the point that pass evaluated, else from one more pass.
 * false (with *err) when a step fails or a decision value is not finite;
 * raises only for errors of the rows themselves and interrupts.
 */
static bool
fitter_newton(Fitter *ft, double lambda, int skip, double *coef,
			  double *intercepts, km_class_fit_result *res, km_error *err)
{
	km_primal_params pp;
	bool		metrics = skip < 0;

	pp.loss = ft->logistic ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE;
	pp.lambda = lambda;
	pp.fit_intercept = ft->opts->fit_intercept;
	pp.tol = ft->opts->fit.tol;
	pp.max_iter = ft->opts->fit.max_iter;
	ft->skip = skip;
	km_primal_pass_start(&ft->ps, &pp, coef, intercepts);
	while (km_primal_pass_begin(&ft->ps))
	{
		if (!fitter_pass(ft, metrics, err) ||
			km_primal_pass_step(&ft->ps, err, km_interrupt) != KM_OK)
			return false;
		km_progress_phase("newton pass %d over " INT64_FORMAT " rows%s",
						  ft->passes, ft->rs->n, skip >= 0 ? " (model selection)" : "");
	}
	km_primal_pass_totals(&ft->ps, &res->objective, &res->iterations, &res->converged);
	if (!metrics)
		return true;
	if (!ft->ps.current)
		fitter_metrics_pass(ft);
	res->train_accuracy = ft->pm.correct / (double) ft->rs->n;
	res->train_log_loss = ft->logistic ? ft->pm.logloss / (double) ft->rs->n : NAN;
	return true;
}

/*
 * The loss of (coef, intercepts) on the rows of fold v, as exact model
 * selection scores (methods.c): 1 - accuracy (svm) or the mean log-loss
 * (logistic, probabilities clipped to [eps, 1 - eps]).  One pass (the
 * features of the fold's rows come a block at a time, or from the cache).
 */
static double
fitter_holdout_loss(Fitter *ft, uint32 v, const double *coef,
					const double *intercepts)
{
	int64		n = ft->rs->n;
	PassMetrics *pm = &ft->pm;
	double		sum = 0.0;
	int64_t		count = 0;

	for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
	{
		int64		r = Min((int64) AC_BLOCK, n - i0);
		const double *Z = block_features(ft->rs, ft->b, ft->L, ft->cache, !ft->filled,
										 i0, r, &ft->bufs);

		km_primal_decisions(Z, (size_t) r, ft->m, ft->q, coef, intercepts, pm->F);
		if (!km_primal_block_holdout(pm->F, (size_t) r, ft->q, ft->k, ft->logistic,
									 ft->cls + i0, ft->fold + i0, v, pm->p,
									 pm->pwork, &sum, &count))
			return NAN;
		CHECK_FOR_INTERRUPTS();
	}
	ft->filled = ft->cache != NULL;
	ft->passes++;
	return count > 0 ? sum / (double) count : NAN;
}

/*
 * Each row's fold (stratified by class, km_stratified_folds, over the rows
 * in hash order, the order they come in) into ft->fold, and per fold
 * whether it has rows and its training rows have every class.
 */
static bool *
fitter_folds(Fitter *ft, uint32 folds)
{
	int64		n = ft->rs->n;
	uint32		k = ft->k;
	uint64	   *counts;			/* folds x k: rows of each class in each fold */
	uint64	   *totals;			/* k */
	bool	   *fold_ok;

	if (folds < 2 || (int64) folds > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cv needs between 2 and the number of rows folds"),
				 errdetail("Option \"cv\" asks for %u folds of " INT64_FORMAT " rows.", folds, n)));
	counts = palloc0(sizeof(uint64) * ((size_t) folds + 1) * k);
	totals = counts + (size_t) folds * k;
	fold_ok = palloc(sizeof(bool) * folds);
	ft->fold = palloc_extended(mul_size((Size) n, sizeof(uint32)), MCXT_ALLOC_HUGE);
	km_stratified_folds(ft->cls, (size_t) n, k, folds, ft->fold,
						palloc(sizeof(size_t) * k));
	for (int64 i = 0; i < n; i++)
	{
		counts[(size_t) ft->fold[i] * k + ft->cls[i]]++;
		totals[ft->cls[i]]++;
	}
	for (uint32 v = 0; v < folds; v++)
	{
		uint64		in = 0;

		fold_ok[v] = true;
		for (uint32 c = 0; c < k; c++)
		{
			in += counts[(size_t) v * k + c];
			if (totals[c] == counts[(size_t) v * k + c])
				fold_ok[v] = false;
		}
		if (in == 0)
			fold_ok[v] = false;
	}
	return fold_ok;
}

/*
 * A candidate's k-fold score: each fold a Newton fit from zero on the other
 * folds' rows and a pass scoring its own.  A fold whose training rows miss
 * a class, or whose fit fails, makes the candidate NaN (not chosen).
 */
static void
fitter_candidate(Fitter *ft, const bool *fold_ok, uint32 folds, double *coef,
				 double *intercepts, km_candidate *cand)
{
	double		sum = 0.0;
	double		sumsq = 0.0;

	for (uint32 v = 0; v < folds; v++)
	{
		km_class_fit_result res;
		km_error	err;
		double		loss;

		if (!(cand->lambda > 0.0) || !fold_ok[v] ||
			!fitter_newton(ft, cand->lambda, (int) v, coef, intercepts, &res, &err) ||
			!isfinite(loss = fitter_holdout_loss(ft, v, coef, intercepts)))
		{
			cand->score = NAN;
			cand->score_std = 0.0;
			return;
		}
		sum += loss;
		sumsq += loss * loss;
	}
	cand->score = sum / folds;
	cand->score_std = sqrt(fmax(sumsq / folds - cand->score * cand->score, 0.0));
	km_progress_stage("candidate gamma %g, lambda %g: %s %.6g",
					  cand->gamma, cand->lambda, ft->logistic ? "log-loss" : "error rate",
					  cand->score);
}

/* The route of fitter_select through the core's grid loop (select.h). */
typedef struct FitterGrid
{
	Fitter	   *ft;
	const bool *fold_ok;
	uint32		folds;
	double	   *coef;
	double	   *intercepts;
} FitterGrid;

/* A gamma's setup: its basis (a pass over the rows) and nystrom's factor. */
static km_status
fitter_grid_gamma(void *arg, int g, double gamma, km_error *err)
{
	fitter_basis(((FitterGrid *) arg)->ft, gamma);
	return KM_OK;
}

static km_status
fitter_grid_score(void *arg, int index, km_candidate *cand, km_error *err)
{
	FitterGrid *fg = arg;

	fitter_candidate(fg->ft, fg->fold_ok, fg->folds, fg->coef, fg->intercepts, cand);
	return KM_OK;
}

static km_status
fitter_grid_none(void *arg, int count, km_error *err)
{
	km_fail(err, KM_ERR_INACCURATE, "no candidate could be scored",
			"Every one of the %d candidates failed to fit on some fold, or a fold's training rows missed a class.",
			count);
	strlcpy(err->hint, "Use fewer folds, or raise lambda.", sizeof(err->hint));
	return KM_ERR_INACCURATE;
}

/*
 * k-fold over the gamma and lambda grids by the core's grid loop (candidate
 * g * n_lambdas + l; the winner km_best_candidate's: lowest mean loss, ties
 * to the larger lambda, then the smaller gamma).
 */
static void
fitter_select(Fitter *ft, double *coef, double *intercepts, KmApproxClassFit *fit)
{
	const km_options *opts = ft->opts;
	FitterGrid	fg = {ft, NULL, (uint32) opts->folds, coef, intercepts};
	km_grid_route route = {.arg = &fg, .gamma = fitter_grid_gamma,
		.score = fitter_grid_score, .none = fitter_grid_none};
	int			ng = opts->gammas.n > 0 ? opts->gammas.n : 1;
	int			nl = opts->lambdas.n > 0 ? opts->lambdas.n : 1;
	km_error	err;

	fg.fold_ok = fitter_folds(ft, fg.folds);
	fit->ncand = ng * nl;
	fit->cand = palloc0(sizeof(km_candidate) * fit->ncand);
	if (km_grid_search(opts->gammas.n > 0 ? opts->gammas.v : &opts->fit.kernel.gamma, ng,
					   opts->lambdas.n > 0 ? opts->lambdas.v : &opts->fit.lambda, nl,
					   &route, fit->cand, &fit->best, &err) != KM_OK)
		km_raise(&err);
	fit->gamma = fit->cand[fit->best].gamma;
	fit->lambda = fit->cand[fit->best].lambda;
	/* the winner's basis (kept when it is the last gamma's) */
	fitter_basis(ft, fit->gamma);
}

/*
 * The memory of a fit (refused beyond kernel_ml.max_memory) and whether the
 * features are cached (ft->cache_bytes); reserved until the fit returns.
 */
static KmMemGrant *
fitter_memory(Fitter *ft, const km_options *opts, uint32 d, int64 n)
{
	uint32		mmax;
	size_t		nstate;
	double		need;

	ft->sbytes = km_basis_state_bytes(opts->approximation, d, (uint32) opts->components);
	mmax = km_repr_lookup(opts->approximation)->centres ?
		(uint32) Min((int64) opts->components, n) : (uint32) opts->components;
	nstate = km_primal_state_doubles(mmax);
	if (ft->sbytes == 0 || ft->sbytes > MaxAllocSize || nstate == 0 ||
		mmax > KM_APPROX_MAX_COMPONENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_train state is too large"),
				 errdetail("An approximate classifier of %d components of %u features is beyond %d components or 1 GB.",
						   opts->components, d, KM_APPROX_MAX_COMPONENTS),
				 errhint("Use fewer components.")));
	need = 8.0 * (double) n * ((double) d + 0.5) +	/* the caller's hash-ordered copy */
		(double) ft->sbytes +
		8.0 * (2.0 * mmax * (double) mmax + 3.0 * mmax) +	/* L, R; factor's work */
		8.0 * ft->q * ((double) nstate + 3.0 * mmax + 1.0) +	/* states, coef, vecs */
		8.0 * (double) km_primal_step_work_doubles(mmax) +
		8.0 * AC_BLOCK * ((double) d + mmax + 2.0) +
		8.0 * (double) km_approx_features_doubles(&(km_basis) {.kind = opts->approximation, .d = d, .m = mmax}, AC_BLOCK) +
		8.0 * (double) km_primal_add_scratch_doubles(mmax, AC_BLOCK);
	km_check_memory(need, "kernel_train", false);
	ft->cache_bytes = 8.0 * (double) n * mmax;
	/*
	 * the features are cached when they take at most half of what the
	 * backend's ceiling leaves free
	 */
	if (!km_memory_fits(2.0 * (need + ft->cache_bytes)) || ft->cache_bytes > (double) MaxAllocHugeSize)
		ft->cache_bytes = 0.0;
	/* counted until the fit returns (or its context goes, on an error) */
	return km_mem_reserve(CurrentMemoryContext, need + ft->cache_bytes,
						  "kernel_train", false);
}

/* The fitter of rs's rows and its per-block buffers. */
static void
fitter_init(Fitter *ft, RowSet *rs, const km_options *opts, const uint32 *cls,
			uint32 k, const double *class_w, km_basis *b)
{
	uint32		d = (uint32) rs->d;

	ft->rs = rs;
	ft->opts = opts;
	ft->cls = cls;
	ft->k = k;
	ft->logistic = km_method_get(opts->fit.method)->primal_loss == KM_PRIMAL_LOGISTIC;
	ft->class_w = class_w;
	ft->b = b;
	ft->bufs.Xs = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, d)), MCXT_ALLOC_HUGE);
	ft->ps.yc = palloc(sizeof(uint32) * AC_BLOCK);
	ft->bufs.w = palloc(sizeof(double) * AC_BLOCK);
	ft->pm.F = palloc(sizeof(double) * AC_BLOCK * ft->q);
	ft->pm.p = palloc(sizeof(double) * k);
	ft->pm.pwork = palloc(sizeof(double) * (km_classify_proba_work_doubles(k) + 1));
	ft->ps.k = k;
	ft->ps.q = ft->q;
	ft->ps.block = AC_BLOCK;
	ft->ps.on_step = fitter_log_step;
	ft->ps.on_step_arg = ft;
}

/* The model's coefficients alpha = L^-T w over the centres (rff: w) and result. */
static void
fitter_finish(Fitter *ft, double *coef, KmApproxClassFit *fit)
{
	uint32		q = ft->q;

	fit->eps = ft->eps;
	fit->passes = ft->passes;

	if (ft->L != NULL)
		km_primal_unwhiten(ft->L, ft->m, q, coef);
	if (!km_all_finite(coef, (size_t) ft->m * q))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("approximate classifier coefficients are out of range for type double precision"),
				 errdetail("alpha = L^-T w over the %u centres is not finite (eps %g).", ft->m, fit->eps),
				 errhint("Raise lambda, or use fewer components.")));
	fit->alpha = coef;
	fit->q = q;
	fit->res.solver = KM_SOLVER_PRIMAL_NEWTON;
	fit->res.multiclass = q == 1 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
	fit->res.n_outputs = q;
	fit->res.has_probability = ft->logistic;
	fit->res.n_support = 0;
}

void
km_approx_fit_classifier(RowSet *rs, const km_options *opts, const uint32 *cls,
						 uint32 k, const double *class_w, KmApproxClassFit *fit)
{
	Fitter		ft;
	uint32		q = km_primal_outputs(k);
	double	   *coef;
	km_error	err;
	KmMemGrant *grant;

	memset(fit, 0, sizeof(*fit));
	memset(&ft, 0, sizeof(ft));
	ft.q = q;
	/* sizes and memory, before allocating */
	grant = fitter_memory(&ft, opts, (uint32) rs->d, rs->n);
	fitter_init(&ft, rs, opts, cls, k, class_w, &fit->basis);
	km_blas_setup();

	fit->gamma = opts->fit.kernel.gamma;
	fit->lambda = opts->fit.lambda;
	/* the first basis sizes the buffers */
	fitter_basis(&ft, km_options_selects(opts) && opts->gammas.n > 0 ?
				 opts->gammas.v[0] : opts->fit.kernel.gamma);
	coef = palloc_extended(mul_size(sizeof(double), mul_size(ft.m, q)), MCXT_ALLOC_HUGE);
	fit->intercepts = palloc0(sizeof(double) * q);
	if (km_options_selects(opts))
		fitter_select(&ft, coef, fit->intercepts, fit);
	fit->cached = ft.cache != NULL;

	/* the fit on every row */
	if (!fitter_newton(&ft, fit->lambda, -1, coef, fit->intercepts, &fit->res, &err))
		km_raise(&err);
	fitter_finish(&ft, coef, fit);
	if (ft.cache != NULL)
		pfree(ft.cache);
	km_mem_release(grant);
}
