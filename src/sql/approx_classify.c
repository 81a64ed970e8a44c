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

#include <cblas.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "approx_classify.h"
#include "basis.h"
#include "classify.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "primal.h"
#include "select.h"
#include "solve.h"

/* Rows per block: features block x m, one dsyrk per class. */
#define AC_BLOCK 512

/* Flops of one uninterruptible BLAS piece (about 0.1 s on one core). */
#define AC_PIECE_FLOPS 1e9

typedef struct PassBufs
{
	double	   *Xs;				/* AC_BLOCK x d standardized rows */
	double	   *Z;				/* AC_BLOCK x m features (when not cached) */
	double	   *fwork;			/* km_approx_features' work */
	double	   *scratch;		/* km_primal_add's */
	uint32	   *yc;				/* AC_BLOCK: 0/1 of the class solved */
	double	   *w;				/* AC_BLOCK row weights */
} PassBufs;

/*
 * The features of rows [i0, i0 + r) (whitened for nystrom): from the cache
 * when there is one (filled on the first pass), else computed into bufs->Z.
 */
static const double *
block_features(RowSet *rs, const km_basis *b, const double *L, double *cache,
			   bool fill, int64 i0, int64 r, PassBufs *bufs)
{
	uint32		d = (uint32) rs->d;
	uint32		m = b->m;
	double	   *Z;
	km_error	err;
	int64		piece;

	if (cache != NULL && !fill)
		return cache + (size_t) i0 * m;
	Z = cache != NULL ? cache + (size_t) i0 * m : bufs->Z;
	for (int64 i = 0; i < r; i++)
	{
		int			bad = km_standardize_row(rs->X + (i0 + i) * d, (int) d, b->mean,
											 b->scale, bufs->Xs + i * d);

		if (bad >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("standardized feature is out of range for type double precision"),
					 errdetail("Feature %d of row " INT64_FORMAT " overflowed when standardized.",
							   bad + 1, i0 + i + 1)));
	}
	/*
	 * A row's features cost about 2 m d flops and its whitening m^2: at
	 * m = 8192 a whole block would be seconds of BLAS that cannot be
	 * interrupted, so the rows go in pieces of at most AC_PIECE_FLOPS.
	 */
	piece = (int64) Max(1.0, Min((double) r, AC_PIECE_FLOPS /
								 ((double) m * (2.0 * d + (L != NULL ? m : 0.0)))));
	for (int64 p0 = 0; p0 < r; p0 += piece)
	{
		int64		pr = Min(piece, r - p0);
		double	   *Zp = Z + (size_t) p0 * m;

		if (km_approx_features(b, bufs->Xs + (size_t) p0 * d, (size_t) pr, Zp,
							   bufs->fwork, &err) != KM_OK)
			km_raise(&err);
		if (L != NULL)
			/* rows of Z are the columns of a column-major m x r matrix: L^-1 Z^T */
			cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
						CblasNonUnit, (int) m, (int) pr, 1.0, L, (int) m, Zp, (int) m);
		CHECK_FOR_INTERRUPTS();
	}
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
block_metrics(PassMetrics *pm, const double *Z, int64 r, uint32 m, uint32 q,
			  uint32 k, int mc, bool logistic, const double *coef,
			  const double *intercepts, const uint32 *cls, int64 i0)
{
	km_error	err;

	/* F (r x q, row-major) = Z coef + intercepts */
	for (int64 i = 0; i < r; i++)
		memcpy(pm->F + i * q, intercepts, sizeof(double) * q);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) r, (int) q,
				(int) m, 1.0, Z, (int) m, coef, (int) m, 1.0, pm->F, (int) q);
	for (int64 i = 0; i < r; i++)
	{
		const double *f = pm->F + i * q;
		uint32		y = cls[i0 + i];

		if (!km_all_finite(f, q))
			raise_nonfinite(0, q, i0);
		if (km_classify_decide((km_multiclass) mc, k, f) == y)
			pm->correct += 1.0;
		if (logistic)
		{
			if (km_classify_proba(KM_PROB_LOGISTIC, (km_multiclass) mc, k, f,
								  NULL, NULL, pm->p, pm->pwork, &err) != KM_OK)
				km_raise(&err);
			pm->logloss -= log(Max(pm->p[y], 1e-300));
		}
	}
}

/*
 * What the passes share: the rows, the basis and its factor, the feature
 * cache, the solvers' state and the buffers.  One basis per gamma (the
 * centres or the random draw do not depend on the fold: the basis is over
 * every row, as an unsupervised step; only the labels are held out).
 */
typedef struct Fitter
{
	RowSet	   *rs;
	const km_options *opts;
	const uint32 *cls;
	uint32	   *fold;			/* k-fold selection: each row's fold, else NULL */
	uint32		k;
	uint32		q;
	int			mc;
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
	size_t		nstate;
	double	   *states;
	double	   *vecs;
	double	   *swork;
	double	   *before;
	km_primal_solver *solvers;
	PassBufs	bufs;
	PassMetrics pm;
	int			passes;
} Fitter;

/* The basis (pass over the rows) for gamma, and nystrom's factor. */
static void
fitter_basis(Fitter *ft, double gamma)
{
	km_options	o = *ft->opts;
	km_basis   *b = ft->b;
	km_error	err;
	uint32		m;
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
	m = b->m;
	ft->gamma = gamma;
	ft->filled = false;
	ft->eps = 0.0;
	if (ft->m != 0 && m != ft->m)
		elog(ERROR, "kernel_train: the basis has %u components, not %u", m, ft->m);
	if (ft->m == 0)
	{
		ft->m = m;
		if (b->kind == KM_APPROX_NYSTROM)
			ft->L = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE);
		ft->R = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		for (uint32 j = 0; j < m; j++)
			ft->R[j + (size_t) j * m] = 1.0;
		ft->bufs.Z = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, m)), MCXT_ALLOC_HUGE);
		ft->bufs.fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(b, AC_BLOCK) + 1),
										 MCXT_ALLOC_HUGE);
		ft->bufs.scratch = palloc_extended(mul_size(sizeof(double), km_primal_add_scratch_doubles(m, AC_BLOCK)),
										   MCXT_ALLOC_HUGE);
		if (ft->cache_bytes > 0.0)
			ft->cache = palloc_extended((Size) ft->cache_bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
		ft->nstate = km_primal_state_doubles(m);
		ft->states = palloc_extended(mul_size(sizeof(double), mul_size(ft->nstate, ft->q)), MCXT_ALLOC_HUGE);
		ft->vecs = palloc_extended(mul_size(sizeof(double), mul_size(2 * (Size) m, ft->q)), MCXT_ALLOC_HUGE);
		ft->swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)), MCXT_ALLOC_HUGE);
		ft->solvers = palloc(sizeof(km_primal_solver) * ft->q);
		ft->before = palloc(sizeof(double) * (m + 1));
	}
	if (b->kind == KM_APPROX_NYSTROM)
	{
		double	   *fwork = palloc_extended(mul_size(sizeof(double), km_approx_factor_doubles(m) + 1),
											MCXT_ALLOC_HUGE);

		if (km_approx_factor(b, ft->L, &ft->eps, fwork, &err, km_interrupt) != KM_OK)
			km_raise(&err);
		pfree(fwork);
	}
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
fitter_newton(Fitter *ft, double lambda, int skip, uint32 folds, double *coef,
			  double *intercepts, km_class_fit_result *res, km_error *err)
{
	RowSet	   *rs = ft->rs;
	int64		n = rs->n;
	uint32		m = ft->m;
	uint32		q = ft->q;
	PassBufs   *bufs = &ft->bufs;
	PassMetrics *pm = &ft->pm;
	km_primal_params pp;
	bool		metrics = skip < 0;
	bool		metrics_current = false;
	double		objective = 0.0;
	int			iterations = 0;
	bool		converged = true;

	memset(coef, 0, sizeof(double) * m * q);
	memset(intercepts, 0, sizeof(double) * q);
	for (uint32 c = 0; c < q; c++)
		km_primal_solver_init(&ft->solvers[c], m);
	pp.loss = ft->logistic ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE;
	pp.lambda = lambda;
	pp.fit_intercept = ft->opts->fit_intercept;
	pp.tol = ft->opts->fit.tol;
	pp.max_iter = ft->opts->fit.max_iter;

	for (;;)
	{
		bool		any = false;

		for (uint32 c = 0; c < q; c++)
			if (!ft->solvers[c].done)
			{
				km_primal_state_init(ft->states + (size_t) c * ft->nstate, m);
				any = true;
			}
		if (!any)
			break;
		pm->correct = 0.0;
		pm->logloss = 0.0;
		for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
		{
			int64		r = Min((int64) AC_BLOCK, n - i0);
			const double *Z = block_features(rs, ft->b, ft->L, ft->cache, !ft->filled,
											 i0, r, bufs);

			if (metrics)
				block_metrics(pm, Z, r, m, q, ft->k, ft->mc, ft->logistic, coef,
							  intercepts, ft->cls, i0);
			for (int64 i = 0; i < r; i++)
				bufs->w[i] = skip >= 0 && ft->fold[i0 + i] == (uint32) skip ?
					0.0 : ft->class_w[ft->cls[i0 + i]];
			for (uint32 c = 0; c < q; c++)
			{
				if (ft->solvers[c].done)
					continue;
				for (int64 i = 0; i < r; i++)
					bufs->yc[i] = q == 1 ? ft->cls[i0 + i] : (ft->cls[i0 + i] == c ? 1 : 0);
				if (!km_primal_add(ft->states + (size_t) c * ft->nstate, m, pp.loss, Z,
								   (size_t) r, bufs->yc, bufs->w, coef + (size_t) c * m,
								   intercepts[c], bufs->scratch, km_interrupt))
				{
					if (metrics)
						raise_nonfinite((int) c, q, i0);
					km_fail(err, KM_ERR_DIVERGED, "decision value is not finite",
							"Output %d of %u in the block of rows from " INT64_FORMAT ".",
							(int) c + 1, q, i0 + 1);
					return false;
				}
			}
			CHECK_FOR_INTERRUPTS();
		}
		ft->filled = ft->cache != NULL;
		ft->passes++;
		metrics_current = true;
		for (uint32 c = 0; c < q; c++)
		{
			km_primal_solver *s = &ft->solvers[c];

			if (s->done)
				continue;
			memcpy(ft->before, coef + (size_t) c * m, sizeof(double) * m);
			ft->before[m] = intercepts[c];
			if (km_primal_step(s, &pp, ft->states + (size_t) c * ft->nstate, ft->R,
							   coef + (size_t) c * m, &intercepts[c],
							   ft->vecs + (size_t) c * 2 * m, ft->swork, err,
							   km_interrupt) != KM_OK)
				return false;
			elog(DEBUG1, "kernel_train: lambda %g, fold %d, pass %d, output %u: objective %.17g, gradient %.3g of %.3g, step %g, %d Newton steps%s",
				 lambda, skip, ft->passes, c + 1, s->objective, s->grad_norm,
				 s->grad_norm0, s->t, s->iterations, s->done ? " (done)" : "");
			if (!s->done || ft->before[m] != intercepts[c] ||
				memcmp(ft->before, coef + (size_t) c * m, sizeof(double) * m) != 0)
				metrics_current = false;
		}
		km_progress_phase("newton pass %d over " INT64_FORMAT " rows%s",
						  ft->passes, n, skip >= 0 ? " (model selection)" : "");
	}
	for (uint32 c = 0; c < q; c++)
	{
		objective += ft->solvers[c].objective;
		iterations = Max(iterations, ft->solvers[c].iterations);
		converged = converged && ft->solvers[c].converged;
	}
	res->iterations = iterations;
	res->converged = converged;
	res->objective = objective;
	if (!metrics)
		return true;

	/* training accuracy and log-loss at the final point */
	if (!metrics_current)
	{
		pm->correct = 0.0;
		pm->logloss = 0.0;
		for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
		{
			int64		r = Min((int64) AC_BLOCK, n - i0);
			const double *Z = block_features(rs, ft->b, ft->L, ft->cache, false, i0, r, bufs);

			block_metrics(pm, Z, r, m, q, ft->k, ft->mc, ft->logistic, coef,
						  intercepts, ft->cls, i0);
			CHECK_FOR_INTERRUPTS();
		}
		ft->passes++;
	}
	res->train_accuracy = pm->correct / (double) n;
	res->train_log_loss = ft->logistic ? pm->logloss / (double) n : NAN;
	return true;
}

/*
 * The loss of (coef, intercepts) on the rows of fold v, as exact model
 * selection scores (methods.c): 1 - accuracy (svm) or the mean log-loss
 * (logistic, probabilities clipped to [eps, 1 - eps]).  One pass (the
 * features of the fold's rows come a block at a time, or from the cache).
 */
static double
fitter_holdout_loss(Fitter *ft, uint32 v, uint32 folds, const double *coef,
					const double *intercepts)
{
	RowSet	   *rs = ft->rs;
	int64		n = rs->n;
	uint32		m = ft->m;
	uint32		q = ft->q;
	PassMetrics *pm = &ft->pm;
	double		sum = 0.0;
	int64		count = 0;
	km_error	err;

	for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
	{
		int64		r = Min((int64) AC_BLOCK, n - i0);
		const double *Z = block_features(rs, ft->b, ft->L, ft->cache, !ft->filled,
										 i0, r, &ft->bufs);

		for (int64 i = 0; i < r; i++)
			memcpy(pm->F + i * q, intercepts, sizeof(double) * q);
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) r, (int) q,
					(int) m, 1.0, Z, (int) m, coef, (int) m, 1.0, pm->F, (int) q);
		for (int64 i = 0; i < r; i++)
		{
			const double *f = pm->F + i * q;
			uint32		y = ft->cls[i0 + i];

			if (ft->fold[i0 + i] != v)
				continue;
			if (!km_all_finite(f, q))
				return NAN;
			count++;
			if (ft->logistic)
			{
				if (km_classify_proba(KM_PROB_LOGISTIC, (km_multiclass) ft->mc, ft->k, f,
									  NULL, NULL, pm->p, pm->pwork, &err) != KM_OK)
					return NAN;
				sum -= log(fmin(fmax(pm->p[y], DBL_EPSILON), 1.0 - DBL_EPSILON));
			}
			else
				sum += km_classify_decide((km_multiclass) ft->mc, ft->k, f) != y;
		}
		CHECK_FOR_INTERRUPTS();
	}
	ft->filled = ft->cache != NULL;
	ft->passes++;
	return count > 0 ? sum / (double) count : NAN;
}

/*
 * k-fold over the gamma and lambda grids (candidate g * n_lambdas + l, as
 * select.h orders them; folds stratified by class, km_stratified_folds,
 * over the rows in hash order, the order they come in), each fold a Newton
 * fit from zero on the other folds' rows and a pass scoring its own.  A
 * fold whose training rows miss a class, or whose fit fails, makes the
 * candidate NaN (not chosen).  The winner is km_best_candidate's (lowest
 * mean loss; ties to the larger lambda, then the smaller gamma).
 */
static void
fitter_select(Fitter *ft, double *coef, double *intercepts, KmApproxClassFit *fit)
{
	const km_options *opts = ft->opts;
	int64		n = ft->rs->n;
	uint32		folds = (uint32) opts->folds;
	uint32		k = ft->k;
	int			ng = opts->gammas.n > 0 ? opts->gammas.n : 1;
	int			nl = opts->lambdas.n > 0 ? opts->lambdas.n : 1;
	uint64	   *counts;			/* folds x k: rows of each class in each fold */
	uint64	   *totals;			/* k */
	bool	   *fold_ok;
	int			best = -1;

	if (folds < 2 || (int64) folds > n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cv needs between 2 and the number of rows folds"),
				 errdetail("Option \"cv\" asks for %u folds of " INT64_FORMAT " rows.", folds, n)));
	/* per fold, whether its training rows have every class and it has rows */
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

	fit->ncand = ng * nl;
	fit->cand = palloc0(sizeof(km_candidate) * fit->ncand);
	for (int g = 0; g < ng; g++)
	{
		double		gamma = opts->gammas.n > 0 ? opts->gammas.v[g] : opts->fit.kernel.gamma;

		fitter_basis(ft, gamma);
		for (int l = 0; l < nl; l++)
		{
			km_candidate *cand = &fit->cand[g * nl + l];
			double		lambda = opts->lambdas.n > 0 ? opts->lambdas.v[l] : opts->fit.lambda;
			double		sum = 0.0;
			double		sumsq = 0.0;
			bool		ok = lambda > 0.0;

			cand->gamma = gamma;
			cand->lambda = lambda;
			for (uint32 v = 0; v < folds && ok; v++)
			{
				km_class_fit_result res;
				km_error	err;
				double		loss;

				if (!fold_ok[v] ||
					!fitter_newton(ft, lambda, (int) v, folds, coef, intercepts, &res, &err))
				{
					ok = false;
					break;
				}
				loss = fitter_holdout_loss(ft, v, folds, coef, intercepts);
				if (!isfinite(loss))
				{
					ok = false;
					break;
				}
				sum += loss;
				sumsq += loss * loss;
			}
			if (!ok)
			{
				cand->score = NAN;
				cand->score_std = 0.0;
				continue;
			}
			cand->score = sum / folds;
			cand->score_std = sqrt(fmax(sumsq / folds - cand->score * cand->score, 0.0));
			km_progress_stage("candidate gamma %g, lambda %g: %s %.6g",
							  gamma, lambda, ft->logistic ? "log-loss" : "error rate",
							  cand->score);
		}
	}
	km_progress_stage(NULL);
	best = km_best_candidate(fit->cand, fit->ncand);
	if (best < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("no candidate could be scored"),
				 errdetail("Every one of the %d candidates failed to fit on some fold, or a fold's training rows missed a class.",
						   fit->ncand),
				 errhint("Use fewer folds, or raise lambda.")));
	fit->best = best;
	fit->gamma = fit->cand[best].gamma;
	fit->lambda = fit->cand[best].lambda;
	/* the winner's basis (kept when it is the last gamma's) */
	fitter_basis(ft, fit->gamma);
}

void
km_approx_fit_classifier(RowSet *rs, const km_options *opts, const uint32 *cls,
						 uint32 k, const double *class_w, KmApproxClassFit *fit)
{
	uint32		d = (uint32) rs->d;
	int64		n = rs->n;
	Fitter		ft;
	Size		sbytes;
	uint32		mmax;
	uint32		m;
	uint32		q = k == 2 ? 1 : k;
	size_t		nstate;
	double		need;
	double	   *coef;
	km_error	err;
	KmMemGrant *grant;

	memset(fit, 0, sizeof(*fit));
	memset(&ft, 0, sizeof(ft));

	/* sizes and memory, before allocating */
	sbytes = km_basis_state_bytes(opts->approximation, d, (uint32) opts->components);
	mmax = opts->approximation == KM_APPROX_NYSTROM ?
		(uint32) Min((int64) opts->components, n) : (uint32) opts->components;
	nstate = km_primal_state_doubles(mmax);
	if (sbytes == 0 || sbytes > MaxAllocSize || nstate == 0 ||
		mmax > KM_APPROX_MAX_COMPONENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_train state is too large"),
				 errdetail("An approximate classifier of %d components of %u features is beyond %d components or 1 GB.",
						   opts->components, d, KM_APPROX_MAX_COMPONENTS),
				 errhint("Use fewer components.")));
	need = 8.0 * (double) n * ((double) d + 0.5) +	/* the caller's hash-ordered copy */
		(double) sbytes +
		8.0 * (2.0 * mmax * (double) mmax + 3.0 * mmax) +	/* L, R; factor's work */
		8.0 * q * ((double) nstate + 3.0 * mmax + 1.0) +	/* states, coef, vecs */
		8.0 * (double) km_primal_step_work_doubles(mmax) +
		8.0 * AC_BLOCK * ((double) d + mmax + 2.0) +
		8.0 * (double) km_approx_features_doubles(&(km_basis) {.kind = opts->approximation, .d = d, .m = mmax}, AC_BLOCK) +
		8.0 * (double) km_primal_add_scratch_doubles(mmax, AC_BLOCK);
	km_check_memory(need, "kernel_train", false);
	ft.cache_bytes = 8.0 * (double) n * mmax;
	/*
	 * the features are cached when they take at most half of what the
	 * backend's ceiling leaves free
	 */
	if (!km_memory_fits(2.0 * (need + ft.cache_bytes)) || ft.cache_bytes > (double) MaxAllocHugeSize)
		ft.cache_bytes = 0.0;
	/* counted until the fit returns (or its context goes, on an error) */
	grant = km_mem_reserve(CurrentMemoryContext, need + ft.cache_bytes,
						   "kernel_train", false);

	ft.rs = rs;
	ft.opts = opts;
	ft.cls = cls;
	ft.k = k;
	ft.q = q;
	ft.mc = k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
	ft.logistic = opts->fit.method == KM_METHOD_LOGISTIC;
	ft.class_w = class_w;
	ft.sbytes = sbytes;
	ft.b = &fit->basis;
	ft.bufs.Xs = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, d)), MCXT_ALLOC_HUGE);
	ft.bufs.yc = palloc(sizeof(uint32) * AC_BLOCK);
	ft.bufs.w = palloc(sizeof(double) * AC_BLOCK);
	ft.pm.F = palloc(sizeof(double) * AC_BLOCK * q);
	ft.pm.p = palloc(sizeof(double) * k);
	ft.pm.pwork = palloc(sizeof(double) * (km_classify_proba_work_doubles(k) + 1));
	km_blas_setup();

	fit->gamma = opts->fit.kernel.gamma;
	fit->lambda = opts->fit.lambda;
	if (km_options_selects(opts))
	{
		/* the first basis sizes the buffers */
		fitter_basis(&ft, opts->gammas.n > 0 ? opts->gammas.v[0] : opts->fit.kernel.gamma);
		coef = palloc_extended(mul_size(sizeof(double), mul_size(ft.m, q)), MCXT_ALLOC_HUGE);
		fit->intercepts = palloc0(sizeof(double) * q);
		fitter_select(&ft, coef, fit->intercepts, fit);
	}
	else
	{
		fitter_basis(&ft, opts->fit.kernel.gamma);
		coef = palloc_extended(mul_size(sizeof(double), mul_size(ft.m, q)), MCXT_ALLOC_HUGE);
		fit->intercepts = palloc0(sizeof(double) * q);
	}
	m = ft.m;
	fit->cached = ft.cache != NULL;

	/* the fit on every row */
	if (!fitter_newton(&ft, fit->lambda, -1, 1, coef, fit->intercepts, &fit->res, &err))
		km_raise(&err);
	fit->eps = ft.eps;
	fit->passes = ft.passes;

	/* alpha = L^-T w over the centres (rff: w) */
	if (ft.L != NULL)
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
					(int) m, (int) q, 1.0, ft.L, (int) m, coef, (int) m);
	if (!km_all_finite(coef, (size_t) m * q))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("approximate classifier coefficients are out of range for type double precision"),
				 errdetail("alpha = L^-T w over the %u centres is not finite (eps %g).", m, fit->eps),
				 errhint("Raise lambda, or use fewer components.")));
	fit->alpha = coef;
	fit->q = q;
	fit->res.solver = KM_SOLVER_PRIMAL_NEWTON;
	fit->res.multiclass = ft.mc;
	fit->res.n_outputs = q;
	fit->res.has_probability = ft.logistic;
	fit->res.n_support = 0;
	if (ft.cache != NULL)
		pfree(ft.cache);
	km_mem_release(grant);
}
