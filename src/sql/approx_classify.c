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

#include <math.h>

#include <cblas.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "approx_classify.h"
#include "basis.h"
#include "classify.h"
#include "pgutil.h"
#include "primal.h"
#include "solve.h"

/* Rows per block: features block x m, one dsyrk per class. */
#define AC_BLOCK 512

/* Whether bytes fit kernel_ml.max_memory (and its ceiling), without an error. */
static bool
fits_memory(double bytes)
{
	double		user = (double) km_max_memory_kb * 1024.0;
	double		ceiling = (double) km_max_memory_limit_kb * 1024.0;

	return bytes <= Min(user, ceiling);
}

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
	if (km_approx_features(b, bufs->Xs, (size_t) r, Z, bufs->fwork, &err) != KM_OK)
		km_raise(&err);
	if (L != NULL)
		/* rows of Z are the columns of a column-major m x r matrix: L^-1 Z^T */
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) m, (int) r, 1.0, L, (int) m, Z, (int) m);
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

void
km_approx_fit_classifier(RowSet *rs, const km_options *opts, const uint32 *cls,
						 uint32 k, const double *class_w, KmApproxClassFit *fit)
{
	uint32		d = (uint32) rs->d;
	int64		n = rs->n;
	km_basis   *b = &fit->basis;
	Size		sbytes;
	uint32		mmax;
	uint32		m;
	uint32		q = k == 2 ? 1 : k;
	int			mc = k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
	size_t		nstate;
	double		need;
	double		cache_bytes;
	double	   *L = NULL;
	double	   *R;
	double	   *cache = NULL;
	double	   *coef;
	double	   *states;
	double	   *vecs;
	double	   *swork;
	km_primal_solver *solvers;
	km_primal_params pp;
	PassBufs	bufs;
	km_error	err;
	bool		logistic = opts->fit.method == KM_METHOD_LOGISTIC;
	bool		filled = false;
	double		objective = 0.0;
	int			iterations = 0;
	bool		converged = true;
	bool		metrics_current = false;
	PassMetrics pm;
	double	   *before;

	memset(fit, 0, sizeof(*fit));

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
	cache_bytes = 8.0 * (double) n * mmax;
	/* the features are cached when they take at most half of max_memory */
	if (!fits_memory(2.0 * (need + cache_bytes)) || cache_bytes > (double) MaxAllocHugeSize)
		cache_bytes = 0.0;

	/* pass 1: the basis */
	bufs.Xs = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, d)), MCXT_ALLOC_HUGE);
	rowset_basis(rs, opts, sbytes, bufs.Xs, b);
	m = b->m;
	km_blas_setup();

	/* nystrom: L = chol(K_mm + eps I) */
	if (b->kind == KM_APPROX_NYSTROM)
	{
		double	   *fwork = palloc_extended(mul_size(sizeof(double), km_approx_factor_doubles(m) + 1),
											MCXT_ALLOC_HUGE);

		L = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE);
		if (km_approx_factor(b, L, &fit->eps, fwork, &err, km_interrupt) != KM_OK)
			km_raise(&err);
		pfree(fwork);
	}
	R = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	for (uint32 j = 0; j < m; j++)
		R[j + (size_t) j * m] = 1.0;

	bufs.Z = palloc_extended(mul_size(sizeof(double), mul_size(AC_BLOCK, m)), MCXT_ALLOC_HUGE);
	bufs.fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(b, AC_BLOCK) + 1),
								 MCXT_ALLOC_HUGE);
	bufs.scratch = palloc_extended(mul_size(sizeof(double), km_primal_add_scratch_doubles(m, AC_BLOCK)),
								   MCXT_ALLOC_HUGE);
	bufs.yc = palloc(sizeof(uint32) * AC_BLOCK);
	bufs.w = palloc(sizeof(double) * AC_BLOCK);
	if (cache_bytes > 0.0)
		cache = palloc_extended((Size) cache_bytes, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	fit->cached = cache != NULL;

	/* the solvers, one per output */
	coef = palloc_extended(mul_size(sizeof(double), mul_size(m, q)), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	fit->intercepts = palloc0(sizeof(double) * q);
	states = palloc_extended(mul_size(sizeof(double), mul_size(nstate, q)), MCXT_ALLOC_HUGE);
	vecs = palloc_extended(mul_size(sizeof(double), mul_size(2 * (Size) m, q)), MCXT_ALLOC_HUGE);
	swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)), MCXT_ALLOC_HUGE);
	solvers = palloc(sizeof(km_primal_solver) * q);
	for (uint32 c = 0; c < q; c++)
		km_primal_solver_init(&solvers[c], m);
	pp.loss = logistic ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE;
	pp.lambda = opts->fit.lambda;
	pp.fit_intercept = opts->fit_intercept;
	pp.tol = opts->fit.tol;
	pp.max_iter = opts->fit.max_iter;

	/*
	 * The Newton passes.  Each also scores the rows at the coefficients it
	 * evaluates (all outputs, done ones included: one small dgemm per
	 * block), so that the training metrics come from the last pass when
	 * every solver stopped at the point that pass evaluated; else (a line
	 * search that ran out of step halvings went back to an earlier point)
	 * one more pass computes them.
	 */
	pm.F = palloc(sizeof(double) * AC_BLOCK * q);
	pm.p = palloc(sizeof(double) * k);
	pm.pwork = palloc(sizeof(double) * (km_classify_proba_work_doubles(k) + 1));
	before = palloc(sizeof(double) * (m + 1));
	for (;;)
	{
		bool		any = false;

		for (uint32 c = 0; c < q; c++)
			if (!solvers[c].done)
			{
				km_primal_state_init(states + (size_t) c * nstate, m);
				any = true;
			}
		if (!any)
			break;
		pm.correct = 0.0;
		pm.logloss = 0.0;
		for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
		{
			int64		r = Min((int64) AC_BLOCK, n - i0);
			const double *Z = block_features(rs, b, L, cache, !filled, i0, r, &bufs);

			block_metrics(&pm, Z, r, m, q, k, mc, logistic, coef, fit->intercepts, cls, i0);

			for (int64 i = 0; i < r; i++)
				bufs.w[i] = class_w[cls[i0 + i]];
			for (uint32 c = 0; c < q; c++)
			{
				if (solvers[c].done)
					continue;
				for (int64 i = 0; i < r; i++)
					bufs.yc[i] = q == 1 ? cls[i0 + i] : (cls[i0 + i] == c ? 1 : 0);
				if (!km_primal_add(states + (size_t) c * nstate, m, pp.loss, Z, (size_t) r,
								   bufs.yc, bufs.w, coef + (size_t) c * m,
								   fit->intercepts[c], bufs.scratch))
					raise_nonfinite((int) c, q, i0);
			}
			CHECK_FOR_INTERRUPTS();
		}
		filled = true;
		fit->passes++;
		metrics_current = true;
		for (uint32 c = 0; c < q; c++)
		{
			if (solvers[c].done)
				continue;
			memcpy(before, coef + (size_t) c * m, sizeof(double) * m);
			before[m] = fit->intercepts[c];
			if (km_primal_step(&solvers[c], &pp, states + (size_t) c * nstate, R,
							   coef + (size_t) c * m, &fit->intercepts[c],
							   vecs + (size_t) c * 2 * m, swork, &err,
							   km_interrupt) != KM_OK)
				km_raise(&err);
			elog(DEBUG1, "kernel_train: pass %d, output %u: objective %.17g, gradient %.3g of %.3g, step %g, %d Newton steps%s",
				 fit->passes, c + 1, solvers[c].objective, solvers[c].grad_norm,
				 solvers[c].grad_norm0, solvers[c].t, solvers[c].iterations,
				 solvers[c].done ? " (done)" : "");
			if (!solvers[c].done || before[m] != fit->intercepts[c] ||
				memcmp(before, coef + (size_t) c * m, sizeof(double) * m) != 0)
				metrics_current = false;
		}
		if (km_progress)
			ereport(NOTICE,
					(errmsg("kernel_train: newton pass %d over " INT64_FORMAT " rows", fit->passes, n)));
	}
	for (uint32 c = 0; c < q; c++)
	{
		objective += solvers[c].objective;
		iterations = Max(iterations, solvers[c].iterations);
		converged = converged && solvers[c].converged;
	}

	/* training accuracy and log-loss at the final point */
	if (!metrics_current)
	{
		pm.correct = 0.0;
		pm.logloss = 0.0;
		for (int64 i0 = 0; i0 < n; i0 += AC_BLOCK)
		{
			int64		r = Min((int64) AC_BLOCK, n - i0);
			const double *Z = block_features(rs, b, L, cache, false, i0, r, &bufs);

			block_metrics(&pm, Z, r, m, q, k, mc, logistic, coef, fit->intercepts, cls, i0);
			CHECK_FOR_INTERRUPTS();
		}
		fit->passes++;
	}
	fit->res.train_accuracy = pm.correct / (double) n;
	fit->res.train_log_loss = logistic ? pm.logloss / (double) n : NAN;

	/* alpha = L^-T w over the centres (rff: w) */
	if (L != NULL)
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
					(int) m, (int) q, 1.0, L, (int) m, coef, (int) m);
	if (!km_all_finite(coef, (size_t) m * q))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("approximate classifier coefficients are out of range for type double precision"),
				 errdetail("alpha = L^-T w over the %u centres is not finite (eps %g).", m, fit->eps),
				 errhint("Raise lambda, or use fewer components.")));
	fit->alpha = coef;
	fit->q = q;
	fit->res.solver = KM_SOLVER_PRIMAL_NEWTON;
	fit->res.multiclass = mc;
	fit->res.n_outputs = q;
	fit->res.iterations = iterations;
	fit->res.converged = converged;
	fit->res.objective = objective;
	fit->res.has_probability = logistic;
	fit->res.n_support = 0;
	if (cache != NULL)
		pfree(cache);
}
