/*
 * approx.c - approximate kernel models: names and features through the
 * representation table (repr.h), the m x m solve (approx.h).  Core: no
 * PostgreSQL header.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "approx.h"
#include "eigen.h"
#include "grid.h"
#include "kernel_maps.h"
#include "metrics.h"
#include "solve.h"

const char *
km_approx_name(km_approx a)
{
	const km_repr_ops *r = km_repr_get(a);

	return r ? r->name : "unknown";
}

bool
km_approx_from_name(const char *name, km_approx *a)
{
	const km_repr_ops *r = km_repr_by_name(name);

	if (r == NULL)
		return false;
	*a = (km_approx) r->id;
	return true;
}

/* The feature map of basis b. */
static km_feature_map
feature_map(const km_basis *b)
{
	km_feature_map f;

	f.kernel = b->kernel;
	f.d = b->d;
	f.m = b->m;
	f.centres = b->centres;
	f.W = b->W;
	f.b = b->b;
	return f;
}

/* Whether b's penalty is lambda K_mm over centres (a factor, an eps ladder). */
static bool
has_centres(const km_basis *b)
{
	return km_repr_lookup(b->kind)->centres;
}

/* Features: the representation's feature map (nystrom.c, rff.c). */
size_t
km_approx_features_doubles(const km_basis *b, size_t rows)
{
	const km_repr_ops *r = km_repr_lookup(b->kind);

	return r->features_doubles ? r->features_doubles(b->d, b->m, rows) : 1;
}

km_status
km_approx_features(const km_basis *b, const double *X_std, size_t rows,
				   double *Z, double *work, km_error *err)
{
	size_t		m = b->m;
	const km_repr_ops *r = km_repr_get(b->kind);
	km_feature_map f = feature_map(b);

	if (r == NULL || r->features == NULL)
		return km_fail(err, KM_ERR_INVALID, "basis is not an approximation",
					   "The basis has approximation %d; features need \"nystrom\" or \"rff\".",
					   (int) b->kind);
	if (r->features(&f, X_std, rows, Z, work))
		return KM_OK;
	if (km_first_nonfinite_row(Z, rows, m) == rows)
		return KM_OK;
	return km_fail(err, KM_ERR_OVERFLOW,
				   "kernel feature is out of range for type double precision",
				   "A %s feature of row %zu of the block (%s kernel) is not finite.",
				   km_approx_name(b->kind), km_first_nonfinite_row(Z, rows, m) + 1,
				   km_kernel_name(b->kernel.type));
}

/*
 * The solve.  Flops one uninterruptible piece may take (about 0.1 s on one
 * loaded core), as in select.c.
 */
#define APPROX_PIECE_FLOPS 1e9

typedef struct approx_work
{
	double	   *L;				/* K_mm, then chol(K_mm + eps I) (lower) */
	double	   *A;				/* K_mm's copy; then G, whitened; its reflectors */
	double	   *scratch;		/* dlatrd panel; dormtr's workspace */
	double	   *diag;			/* T */
	double	   *sub;
	double	   *tau;
	double	   *eig;			/* eigenvalues of T (ascending) */
	double	   *esub;			/* dsterf's copy of sub */
	double	   *r;				/* sum z (y - ybar) */
	double	   *w;				/* Q^T L^-1 r */
	double	   *p;				/* (T + lambda I)^-1 w */
	double	   *pd;				/* T + lambda I, factored */
	double	   *pe;
	double	   *v;				/* probe; residual */
	double	   *t;
	size_t		nscratch;
} approx_work;

#define APPROX_VECTORS 13

static size_t
scratch_doubles(size_t m)
{
	size_t		a = m * KM_TRD_MAX_NB;
	size_t		b = km_back_transform_doubles(m);

	return a > b ? a : b;
}

size_t
km_approx_solve_doubles(uint32_t dim)
{
	size_t		m = dim;

	if (m == 0 || m > KM_APPROX_MAX_COMPONENTS)
		return 0;
	return 2 * m * m + scratch_doubles(m) + APPROX_VECTORS * m;
}

double
km_approx_work_bytes(uint32_t m)
{
	size_t		solve = km_approx_solve_doubles(m);

	if (solve == 0)
		return INFINITY;
	/* the packed m x m sums of the aggregate state, the solve's workspace */
	return 8.0 * ((double) m * ((double) m + 1.0) / 2.0 + 2.0 * m + (double) solve);
}

static void
approx_layout(approx_work *w, double *work, size_t m)
{
	w->L = work;
	w->A = w->L + m * m;
	w->scratch = w->A + m * m;
	w->nscratch = scratch_doubles(m);
	w->diag = w->scratch + w->nscratch;
	w->sub = w->diag + m;
	w->tau = w->sub + m;
	w->eig = w->tau + m;
	w->esub = w->eig + m;
	w->r = w->esub + m;
	w->w = w->r + m;
	w->p = w->w + m;
	w->pd = w->p + m;
	w->pe = w->pd + m;
	w->v = w->pe + m;
	w->t = w->v + m;
	/* the 13th vector: the centres' norms, in scratch before it is used */
}

/* Columns of an m-row right-hand side one dtrsm piece may take. */
static size_t
piece_columns(size_t m)
{
	double		c = APPROX_PIECE_FLOPS / ((double) m * (double) m);

	if (c >= (double) m)
		return m;
	return c < 1.0 ? 1 : (size_t) c;
}

static km_status
check_solve_args(const km_basis *b, const km_accum *stats,
				 const double *lambdas, int n_lambdas, km_error *err)
{
	if (km_repr_get(b->kind) == NULL || !km_repr_get(b->kind)->approximate)
		return km_fail(err, KM_ERR_INVALID, "basis is not an approximation",
					   "The basis has approximation %d; a solve needs \"nystrom\" or \"rff\".",
					   (int) b->kind);
	if (stats->kind != KM_ACCUM_GRAM || stats->dim != b->m || b->m == 0)
		return km_fail(err, KM_ERR_INVALID, "training state does not match the basis",
					   "The state has kind %u and dimension %u; the basis has %u components.",
					   (unsigned) stats->kind, (unsigned) stats->dim, (unsigned) b->m);
	if (b->m > KM_APPROX_MAX_COMPONENTS)
		return km_fail(err, KM_ERR_INVALID, "too many components",
					   "The basis has %u components; a solve takes at most %d.",
					   (unsigned) b->m, KM_APPROX_MAX_COMPONENTS);
	if (stats->rows < 1)
		return km_fail(err, KM_ERR_INVALID, "training state has no rows",
					   "The training state has seen %lld rows; at least 1 is needed.",
					   (long long) stats->rows);
	if (n_lambdas < 1 || n_lambdas > KM_APPROX_MAX_LAMBDAS)
		return km_fail(err, KM_ERR_INVALID, "invalid number of lambdas",
					   "A solve scores 1 to %d lambdas; %d were given.",
					   KM_APPROX_MAX_LAMBDAS, n_lambdas);
	for (int l = 0; l < n_lambdas; l++)
		if (!(lambdas[l] > 0.0) || !isfinite(lambdas[l]))
			return km_fail(err, KM_ERR_INVALID, "lambda must be positive",
						   "Lambda number %d of the grid is %g; an approximate model needs lambda > 0.",
						   l + 1, lambdas[l]);
	return KM_OK;
}

/*
 * L = chol(K_mm + eps I) for the smallest eps of the ladder (approx.h), at
 * least eps_from (0: the first rung), whose factor reproduces K_mm + eps I
 * on a probe vector.  K_mm's lower triangle is kept in w->A (full, for
 * dsymv) meanwhile.
 */
static km_status
factor_centres(const km_basis *b, approx_work *w, double eps_from, double *eps,
			   km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = b->m;
	double	   *cnorms = w->scratch;
	double		trace = 0.0;
	double		vnorm;

	km_row_norms(&b->kernel, b->centres, m, (int) b->d, cnorms);
	if (!km_gram_lower(&b->kernel, b->centres, m, (int) b->d,
					   km_kernel_uses_norms(b->kernel.type) ? cnorms : NULL,
					   w->A, m, interrupt))
		return km_gram_overflow(&b->kernel, w->A, m, m, err);
	km_symmetrize(w->A, m, m, interrupt);
	for (size_t i = 0; i < m; i++)
		trace += w->A[i + i * m];
	if (!(trace > 0.0) || !isfinite(trace))
		return km_fail(err, KM_ERR_NOT_PD, "kernel matrix of the centres is not positive definite",
					   "The %s kernel matrix of the %zu centres has trace %g.",
					   km_kernel_name(b->kernel.type), m, trace);
	/* a probe with no special direction: fixed, so that fits repeat */
	for (size_t i = 0; i < m; i++)
		w->v[i] = sin(1.0 + 0.7 * (double) i) + 0.1;
	vnorm = cblas_dnrm2((int) m, w->v, 1);

	*eps = KM_APPROX_EPS_REL * trace / m;
	/* a trace so small that eps underflows to 0 would never climb the ladder */
	if (!(*eps > 0.0))
		return km_fail(err, KM_ERR_NOT_PD, "kernel matrix of the centres is not positive definite",
					   "The %s kernel matrix of the %zu centres has trace %g, too small to scale a jitter by.",
					   km_kernel_name(b->kernel.type), m, trace);
	while (*eps < eps_from * 0.9999)
		*eps *= 10.0;
	for (; *eps <= KM_APPROX_EPS_MAX_REL * trace / m * 1.0001; *eps *= 10.0)
	{
		double		diff;

		for (size_t j = 0; j < m; j++)
			memcpy(w->L + j * m + j, w->A + j * m + j, (m - j) * sizeof(double));
		for (size_t i = 0; i < m; i++)
			w->L[i + i * m] += *eps;
		if (km_cholesky(w->L, m, m, interrupt) != 0)
			continue;
		/* t = L (L^T v) - (K_mm + eps I) v */
		memcpy(w->t, w->v, m * sizeof(double));
		cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit,
					(int) m, w->L, (int) m, w->t, 1);
		cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
					(int) m, w->L, (int) m, w->t, 1);
		cblas_dsymv(CblasColMajor, CblasLower, (int) m, -1.0, w->A, (int) m,
					w->v, 1, 1.0, w->t, 1);
		cblas_daxpy((int) m, -*eps, w->v, 1, w->t, 1);
		diff = cblas_dnrm2((int) m, w->t, 1);
		if (diff <= 0.1 * *eps * vnorm)
			return KM_OK;
		km_check_interrupts(interrupt);
	}
	return km_fail(err, KM_ERR_NOT_PD, "kernel matrix of the centres is not positive definite",
				   "No eps up to %g (%g times the mean diagonal) gives a Cholesky factor of K_mm + eps I for the %s kernel of the %zu centres.",
				   KM_APPROX_EPS_MAX_REL * trace / m, KM_APPROX_EPS_MAX_REL,
				   km_kernel_name(b->kernel.type), m);
}

size_t
km_approx_factor_doubles(uint32_t m)
{
	size_t		mm = m;

	if (m == 0 || m > KM_CG_MAX_COMPONENTS)
		return 0;
	return mm * mm + 3 * mm;
}

km_status
km_approx_factor(const km_basis *b, double *L, double *eps, double *work,
				 km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = b->m;
	approx_work w;

	if (!has_centres(b) || m == 0 || m > KM_CG_MAX_COMPONENTS)
		return km_fail(err, KM_ERR_INVALID, "basis has no centres to factor",
					   "The basis has approximation %d and %zu components; a factor needs nystrom centres (at most %d).",
					   (int) b->kind, m, KM_CG_MAX_COMPONENTS);
	memset(&w, 0, sizeof(w));
	w.L = L;
	w.A = work;
	w.scratch = work + m * m;
	w.v = w.scratch + m;
	w.t = w.v + m;
	return factor_centres(b, &w, 0.0, eps, err, interrupt);
}

km_status
km_basis_whitening(const km_basis *b, double **L, double *eps,
				   void *(*alloc) (void *ctx, size_t doubles),
				   void (*release) (void *ctx, void *p), void *ctx,
				   km_error *err, km_interrupt_fn interrupt)
{
	double	   *fwork;
	double	   *f;

	*eps = 0.0;
	if (!has_centres(b))
		return KM_OK;
	fwork = alloc(ctx, km_approx_factor_doubles(b->m) + 1);
	f = alloc(ctx, (size_t) b->m * b->m);
	if (km_approx_factor(b, f, eps, fwork, err, interrupt) != KM_OK)
		return err->status;
	release(ctx, fwork);
	*L = f;
	return KM_OK;
}

/* A := G, full, from the packed upper triangle of the state. */
static void
unpack_gram(const double *zz, size_t m, double *A, km_interrupt_fn interrupt)
{
	for (size_t j = 0; j < m; j++)
	{
		const double *col = zz + j * (j + 1) / 2;

		for (size_t i = 0; i <= j; i++)
		{
			A[i + j * m] = col[i];
			A[j + i * m] = col[i];
		}
		if (j % 1024 == 1023)
			km_check_interrupts(interrupt);
	}
}

/* A := L^-1 A L^-T in pieces of bounded work (approx.h). */
void
km_approx_whiten(const double *L, double *A, size_t m, km_interrupt_fn interrupt)
{
	size_t		cols = piece_columns(m);

	/* columns of A are independent right-hand sides of L X = A */
	for (size_t c0 = 0; c0 < m; c0 += cols)
	{
		size_t		cb = m - c0 < cols ? m - c0 : cols;

		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) m, (int) cb, 1.0, L, (int) m,
					A + c0 * m, (int) m);
		km_check_interrupts(interrupt);
	}
	/* rows of A are independent in X L^T = A */
	for (size_t r0 = 0; r0 < m; r0 += cols)
	{
		size_t		rb = m - r0 < cols ? m - r0 : cols;

		cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans,
					CblasNonUnit, (int) rb, (int) m, 1.0, L, (int) m,
					A + r0, (int) m);
		km_check_interrupts(interrupt);
	}
}

/* Apply Q (trans 'N') or Q^T ('T') of the tridiagonal reduction to a vector. */
static void
apply_q(const approx_work *w, size_t m, char trans, double *x)
{
	if (m < 2)
		return;
	LAPACKE_dormtr_work(LAPACK_COL_MAJOR, 'L', 'L', trans, (lapack_int) m, 1,
						w->A, (lapack_int) m, w->tau, x, (lapack_int) m,
						w->scratch, (lapack_int) w->nscratch);
}

/*
 * p = (T + lambda I)^-1 w; the score of lambda from it, NaN when
 * T + lambda I is not positive definite.  *rss, *trace: RSS and tr H.
 */
static double
score_lambda(const approx_work *w, size_t m, double lambda, double yssc,
			 double n, double *rss, double *trace, bool *indefinite)
{
	double		tr = 0.0;
	double		wp;
	double		pp;

	for (size_t i = 0; i < m; i++)
		w->pd[i] = w->diag[i] + lambda;
	if (m > 1)
		memcpy(w->pe, w->sub, (m - 1) * sizeof(double));
	if (LAPACKE_dpttrf_work((lapack_int) m, w->pd, w->pe) != 0)
	{
		*indefinite = true;
		return NAN;
	}
	memcpy(w->p, w->w, m * sizeof(double));
	LAPACKE_dpttrs_work(LAPACK_COL_MAJOR, (lapack_int) m, 1, w->pd, w->pe,
						w->p, (lapack_int) m);
	wp = cblas_ddot((int) m, w->w, 1, w->p, 1);
	pp = cblas_ddot((int) m, w->p, 1, w->p, 1);
	for (size_t i = 0; i < m; i++)
	{
		double		s = w->eig[i] > 0.0 ? w->eig[i] : 0.0;

		tr += s / (s + lambda);
	}
	/*
	 * rounding can take a near-perfect fit's RSS below 0; a RSS that is not
	 * finite stays so (fmax would read NaN as 0: a perfect fit)
	 */
	*rss = yssc - wp - lambda * pp;
	if (isfinite(*rss))
		*rss = fmax(*rss, 0.0);
	*trace = tr;
	if (!isfinite(*rss) || !(n - tr > 0.0))
		return NAN;
	return n * *rss / ((n - tr) * (n - tr));
}

/*
 * "cv": "evidence": minus the log marginal likelihood of the GP reading
 * at lambda (gp.h: the DTC sparse GP for nystrom, Bayesian linear
 * regression on the features for rff), from what score_lambda leaves:
 * y'(Q + lambda I)^-1 y = (sum (y - ybar)^2 - w'p) / lambda (Woodbury) and
 * 1/2 log det(Q + lambda I) = 1/2 (n - m) log lambda + 1/2 sum log d_i,
 * d the pivots of T + lambda I = L D L' (dpttrf: det T + lambda I = prod
 * d_i; T is A's similar tridiagonal form), the values km_gp_approx_fit
 * keeps for the winner.  NaN when T + lambda I is not positive definite or
 * the likelihood is not finite (a constant target).
 */
static double
evidence_lambda(const approx_work *w, size_t m, double lambda, double yssc,
				double n, bool *indefinite)
{
	double		rss;
	double		trace;
	double		ld = 0.0;
	double		quad;
	double		v;

	(void) score_lambda(w, m, lambda, yssc, n, &rss, &trace, indefinite);
	for (size_t i = 0; i < m; i++)
	{
		if (!(w->pd[i] > 0.0))
			return NAN;
		ld += log(w->pd[i]);
	}
	if (!km_all_finite(w->p, m))
		return NAN;
	quad = fmax(yssc - cblas_ddot((int) m, w->w, 1, w->p, 1), 0.0) / lambda;
	v = km_neg_log_evidence(quad, 0.5 * (n - (double) m) * log(lambda) + 0.5 * ld,
							(size_t) n);
	return isfinite(v) ? v : NAN;
}

/*
 * The residual of the normal equations solved, relative to ||r||:
 * (G + lambda (K_mm + eps I)) coef - r, K_mm rebuilt into w->A (nystrom).
 */
static km_status
normal_residual(const km_basis *b, const km_accum *stats, const double *coef,
				double lambda, double eps, approx_work *w, double *relres,
				km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = b->m;
	km_accum_gram g = km_accum_gram_parts((km_accum *) stats);
	double		rnorm = cblas_dnrm2((int) m, w->r, 1);
	double		res;

	if (has_centres(b))
	{
		double	   *cnorms = w->scratch;

		km_row_norms(&b->kernel, b->centres, m, (int) b->d, cnorms);
		if (!km_gram_lower(&b->kernel, b->centres, m, (int) b->d,
						   km_kernel_uses_norms(b->kernel.type) ? cnorms : NULL,
						   w->A, m, interrupt))
			return km_gram_overflow(&b->kernel, w->A, m, m, err);
		for (size_t i = 0; i < m; i++)
			w->A[i + i * m] += eps;
		/* t = lambda (K_mm + eps I) coef */
		cblas_dsymv(CblasColMajor, CblasLower, (int) m, lambda, w->A, (int) m,
					coef, 1, 0.0, w->t, 1);
	}
	else
	{
		memcpy(w->t, coef, m * sizeof(double));
		cblas_dscal((int) m, lambda, w->t, 1);
	}
	/* t += G coef - r */
	cblas_dspmv(CblasColMajor, CblasUpper, (int) m, 1.0, g.zz, coef, 1, 1.0,
				w->t, 1);
	cblas_daxpy((int) m, -1.0, w->r, 1, w->t, 1);
	res = cblas_dnrm2((int) m, w->t, 1);
	*relres = rnorm > 0.0 ? res / rnorm : (res > 0.0 ? HUGE_VAL : 0.0);
	return KM_OK;
}

/*
 * Approximate ridge's GCV is the representation's closed-form route of the
 * one grid loop (select.h, km_grid_search): one gamma (the basis's), its
 * setup the factor (nystrom, at the eps ladder's rung from eps_from), the
 * whitening and the tridiagonal reduction, its column every lambda's GCV
 * in O(m) from them.  The eps ladder (km_approx_solve) runs the loop once
 * per rung: whether a rung is taken depends on the scores (some
 * T + lambda I indefinite) and on the winner's residual check.
 */
typedef struct gcv_route
{
	const km_basis *b;
	const km_accum *stats;
	approx_work *w;
	double		yssc;			/* sum (y - ybar)^2 */
	double		n;				/* rows */
	const double *lambdas;
	int			n_lambdas;
	double		eps_from;		/* nystrom: the lowest rung to try */
	km_approx_result *res;		/* eps and rank from the setup */
	bool		factor_failed;	/* the setup's factor failed (no rung left) */
	bool		indefinite;		/* some T + lambda I was not positive definite */
	bool		evidence;		/* score by minus the log marginal likelihood */
	km_interrupt_fn interrupt;
} gcv_route;

/*
 * The setup: nystrom's factor L = chol(K_mm + eps I) in w->L; then
 * A = L^-1 G L^-T = Q T Q^T (or G = Q T Q^T for rff), w = Q^T L^-1 r, T's
 * eigenvalues and the rank.
 */
static km_status
gcv_setup(void *arg, int g, double gamma, km_error *err)
{
	gcv_route  *r = arg;
	const km_basis *b = r->b;
	approx_work *w = r->w;
	km_approx_result *res = r->res;
	size_t		m = b->m;
	km_accum_gram gs = km_accum_gram_parts((km_accum *) r->stats);
	lapack_int	info;
	km_status	st;

	r->factor_failed = false;
	r->indefinite = false;
	if (has_centres(b))
	{
		st = factor_centres(b, w, r->eps_from, &res->eps, err, r->interrupt);
		if (st != KM_OK)
		{
			r->factor_failed = true;
			return st;
		}
		w->eig[0] = 0.0;
	}
	unpack_gram(gs.zz, m, w->A, r->interrupt);
	memcpy(w->w, w->r, m * sizeof(double));
	if (has_centres(b))
	{
		km_approx_whiten(w->L, w->A, m, r->interrupt);
		cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
					(int) m, w->L, (int) m, w->w, 1);
	}
	if (!km_all_finite(w->A, m * m) || !km_all_finite(w->w, m))
		return km_fail(err, KM_ERR_OVERFLOW, "whitened statistics are out of range for type double precision",
					   "L^-1 G L^-T for the %zu components with eps %g is not finite.",
					   m, res->eps);

	/* A = Q T Q^T; w := Q^T w; the eigenvalues of T */
	km_tridiagonalize(w->A, m, 0, w->diag, w->sub, w->tau, w->scratch, r->interrupt);
	apply_q(w, m, 'T', w->w);
	memcpy(w->eig, w->diag, m * sizeof(double));
	if (m > 1)
		memcpy(w->esub, w->sub, (m - 1) * sizeof(double));
	info = LAPACKE_dsterf_work((lapack_int) m, w->eig, w->esub);
	km_check_interrupts(r->interrupt);
	if (info != 0)
		return km_fail(err, KM_ERR_INACCURATE, "eigenvalues of the whitened statistics did not converge",
					   "LAPACK dsterf failed to find %d of the %zu eigenvalues.",
					   (int) info, m);
	{
		double		top = fabs(w->eig[m - 1]) > fabs(w->eig[0]) ? fabs(w->eig[m - 1]) : fabs(w->eig[0]);
		double		tol = (double) m * DBL_EPSILON * top;

		res->rank = 0;
		for (size_t i = 0; i < m; i++)
			res->rank += w->eig[i] > tol;
	}
	return KM_OK;
}

/*
 * The column: GCV (or the evidence) for every lambda, O(m) each (NaN: T +
 * lambda I indefinite).
 */
static km_status
gcv_column(void *arg, int g, km_candidate *column, km_error *err)
{
	gcv_route  *r = arg;
	double		rss;
	double		trace;

	for (int l = 0; l < r->n_lambdas; l++)
	{
		column[l].score = r->evidence ?
			evidence_lambda(r->w, r->b->m, column[l].lambda, r->yssc, r->n,
							&r->indefinite) :
			score_lambda(r->w, r->b->m, column[l].lambda, r->yssc,
						 r->n, &rss, &trace, &r->indefinite);
		column[l].score_std = 0.0;
		if (l % 8 == 7)
			km_check_interrupts(r->interrupt);
	}
	return KM_OK;
}

/* The route's error when no lambda scores. */
static km_status
gcv_none(void *arg, int count, km_error *err)
{
	gcv_route  *r = arg;

	return km_fail(err, KM_ERR_INACCURATE, "no lambda of the grid could be solved",
				   "T + lambda I is not positive definite for any of the %d lambdas from %g (%zu components, eps %g).",
				   count, r->lambdas[0], (size_t) r->b->m, r->res->eps);
}

/*
 * One attempt (a rung of the eps ladder, or rff's one): the grid loop over
 * the basis's gamma and the lambdas, every score into res->gcv (NaN beyond
 * n_lambdas and for a lambda not scored), the winner into res->best
 * (km_best_candidate: ties to the larger lambda; -1 if none).
 */
static km_status
gcv_attempt(gcv_route *r, km_error *err)
{
	km_candidate cand[KM_APPROX_MAX_LAMBDAS];
	km_grid_route route = {.arg = r, .gamma = gcv_setup, .column = gcv_column,
	.none = gcv_none, .keep_stage = true};
	double		gamma = r->b->kernel.gamma;
	km_status	st;

	for (int l = 0; l < r->n_lambdas; l++)
		cand[l].score = NAN;
	st = km_grid_search(&gamma, 1, r->lambdas, r->n_lambdas, &route, cand,
						&r->res->best, err);
	for (int l = 0; l < KM_APPROX_MAX_LAMBDAS; l++)
		r->res->gcv[l] = l < r->n_lambdas ? cand[l].score : NAN;
	return st;
}

/* The winner: coef = L^-T Q p, its RSS, tr H and the residual check. */
static km_status
solve_best(const km_basis *b, const km_accum *stats, approx_work *w,
		   const double *lambdas, double yssc, double n, double *coef,
		   km_approx_result *res, km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = b->m;
	double		rss;
	double		trace;
	bool		indefinite = false;
	km_status	st;

	res->lambda = lambdas[res->best];
	(void) score_lambda(w, m, res->lambda, yssc, n, &rss, &trace, &indefinite);
	res->train_rmse = sqrt(rss / n);
	res->trace_hat = trace;
	if (!isfinite(res->train_rmse))
		return km_fail(err, KM_ERR_OVERFLOW, "training error is out of range for type double precision",
					   "The residual sum of squares of %.0f rows with lambda %g is not finite.",
					   n, res->lambda);
	memcpy(coef, w->p, m * sizeof(double));
	apply_q(w, m, 'N', coef);
	if (has_centres(b))
		cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit,
					(int) m, w->L, (int) m, coef, 1);
	if (!km_all_finite(coef, m))
		return km_fail(err, KM_ERR_OVERFLOW, "model coefficient is out of range for type double precision",
					   "A coefficient of the %zu components with lambda %g is not finite.",
					   m, res->lambda);

	st = normal_residual(b, stats, coef, res->lambda, res->eps, w,
						 &res->relative_residual, err, interrupt);
	if (st != KM_OK)
		return st;
	if (!(res->relative_residual <= KM_APPROX_MAX_RELATIVE_RESIDUAL))
	{
		km_fail(err, KM_ERR_INACCURATE, "approximate kernel solution is not accurate",
				"The coefficients leave a relative residual ||(G + lambda K) coef - r|| / ||r|| of %.3g with lambda = %g and eps = %g (at most %g is accepted).",
				res->relative_residual, res->lambda, res->eps,
				KM_APPROX_MAX_RELATIVE_RESIDUAL);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Raise lambda (a grid of larger values), use fewer components, or a smaller gamma.");
		return KM_ERR_INACCURATE;
	}
	return KM_OK;
}

/*
 * The next rung of the eps ladder after an attempt at eps that failed:
 * ten times eps, or more when T had an eigenvalue far below -lambda (its
 * rounding error shrinks about like 1 / eps).
 */
static double
next_eps(double eps, const approx_work *w, const double *lambdas,
		 int n_lambdas)
{
	double		lmin = lambdas[0];
	double		f = 10.0;

	for (int l = 1; l < n_lambdas; l++)
		lmin = lambdas[l] < lmin ? lambdas[l] : lmin;
	if (w->eig[0] < 0.0 && isfinite(w->eig[0]))
	{
		double		need = 10.0 * -w->eig[0] / lmin;

		while (f < need && f < 1e10)
			f *= 10.0;
	}
	return eps * f;
}

km_status
km_approx_solve(const km_basis *b, const km_accum *stats,
				const double *lambdas, int n_lambdas, bool fit_intercept,
				bool evidence, double *coef, km_approx_result *res, double *work,
				km_error *err, km_interrupt_fn interrupt)
{
	size_t		m;
	double		n;
	double		ybar;
	double		yssc;
	double		eps_from = 0.0;
	approx_work w;
	gcv_route	r;
	km_accum_gram g;
	km_status	st;
	km_status	last = KM_OK;
	km_error	last_err;
	double		ok_eps = 0.0;	/* the last rung that solved the winner only */
	bool		accept = false; /* take a rung that solves the winner only */

	memset(res, 0, sizeof(*res));
	if ((st = check_solve_args(b, stats, lambdas, n_lambdas, err)) != KM_OK)
		return st;
	m = b->m;
	n = (double) stats->rows;
	res->rows = (uint64_t) stats->rows;
	g = km_accum_gram_parts((km_accum *) stats);
	approx_layout(&w, work, m);

	/*
	 * The sums of y and y^2 overflow for targets beyond about 1e154: then
	 * neither the intercept nor the training error can be read from them
	 * (inf - inf is NaN, which fmax below would silently turn into 0).
	 */
	if (!isfinite(*g.ysum) || !isfinite(*g.yss))
	{
		km_fail(err, KM_ERR_OVERFLOW, "training statistics are out of range for type double precision",
				"The sum of the %s of %.0f rows overflowed.",
				isfinite(*g.ysum) ? "squared targets" : "targets", n);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Scale the target down (for example divide it by a power of ten, and multiply the predictions back).");
		return KM_ERR_OVERFLOW;
	}
	/* y-centring: r = sum z y - ybar sum z, sum (y - ybar)^2 */
	ybar = fit_intercept ? *g.ysum / n : 0.0;
	for (size_t i = 0; i < m; i++)
		w.r[i] = g.zy[i] - ybar * g.zsum[i];
	yssc = *g.yss - ybar * *g.ysum;
	if (isfinite(yssc))
		yssc = fmax(yssc, 0.0);
	if (!isfinite(ybar) || !isfinite(yssc) || !km_all_finite(w.r, m))
		return km_fail(err, KM_ERR_OVERFLOW, "training statistics are out of range for type double precision",
					   "Centring the sums of %.0f rows on the mean target %g overflowed.",
					   n, ybar);
	res->intercept = ybar;
	r = (gcv_route) {.b = b, .stats = stats, .w = &w, .yssc = yssc, .n = n,
	.lambdas = lambdas, .n_lambdas = n_lambdas, .res = res, .evidence = evidence,
	.interrupt = interrupt};

	if (!has_centres(b))
	{
		if ((st = gcv_attempt(&r, err)) != KM_OK)
			return st;
		return solve_best(b, stats, &w, lambdas, yssc, n, coef, res, err, interrupt);
	}

	/*
	 * Nystrom: the eps ladder around the whole factor + whiten + solve.  A
	 * badly conditioned K_mm makes L^-1 huge and the rounding of A =
	 * L^-1 G L^-T larger than lambda (A is PSD in exact arithmetic; T +
	 * lambda I then is not): raise eps until every lambda of the grid is
	 * solvable and the winner passes the residual check.  If no rung
	 * solves every lambda, the largest eps whose winner passed is taken
	 * (the smallest lambdas of the grid then score NaN).
	 */
	for (;;)
	{
		r.eps_from = eps_from;
		st = gcv_attempt(&r, err);
		if (st != KM_OK && r.factor_failed)
		{
			if (ok_eps > 0.0 && !accept)
			{
				eps_from = ok_eps;
				accept = true;
				continue;
			}
			/* past the top rung: the last attempt's failure says more */
			if (last != KM_OK)
			{
				*err = last_err;
				return last;
			}
			return st;
		}
		if (st == KM_OK)
			st = solve_best(b, stats, &w, lambdas, yssc, n, coef, res, err, interrupt);
		if (st == KM_OK && (!r.indefinite || accept))
			return KM_OK;
		if (st == KM_OK)
			ok_eps = res->eps;
		else
		{
			last = st;
			last_err = *err;
			if (ok_eps > 0.0 && !accept)
			{
				eps_from = ok_eps;
				accept = true;
				continue;
			}
		}
		eps_from = next_eps(res->eps, &w, lambdas, n_lambdas);
	}
}

km_status
km_basis_standardize(const km_basis *b, const double *X, size_t first, size_t r, int d,
					 double *Xs, km_error *err)
{
	for (size_t i = 0; i < r; i++)
	{
		int			bad = km_standardize_row(X + i * d, d, b->mean, b->scale, Xs + i * d);

		if (bad >= 0)
			return km_fail(err, KM_ERR_DIVERGED,
						   "standardized feature is out of range for type double precision",
						   "Feature %d of row %zu overflowed when standardized.",
						   bad + 1, first + i + 1);
	}
	return KM_OK;
}

/* the steps of b's list (km_repr_basis_steps) and how many */
static int
basis_steps(const km_basis *b, km_basis_step *steps)
{
	return km_repr_basis_steps(km_repr_lookup(b->kind), b->centres_kind, steps);
}

size_t
km_basis_draw_doubles(const km_basis *b)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = basis_steps(b, steps);
	size_t		doubles = 1;

	for (int i = 0; i < n; i++)
		if (steps[i] == KM_BASIS_DRAW)
			doubles += (size_t) b->d * b->m + b->m;
	return doubles;
}

void
km_basis_draw_into(km_basis *b, double *work)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = basis_steps(b, steps);

	for (int i = 0; i < n; i++)
		if (steps[i] == KM_BASIS_DRAW)
		{
			double	   *W = work;
			double	   *bv = work + (size_t) b->d * b->m;

			km_rff_draw(b->kernel.gamma, b->seed, b->d, b->m, W, bv);
			b->W = W;
			b->b = bv;
		}
}

void
km_basis_kept_of(const km_basis *b, uint32_t solve_rank, double solve_eps,
				 km_basis_kept *out)
{
	const km_repr_ops *r = km_repr_lookup(b->kind);

	out->X = r->keeps_rows ? b->centres : NULL;
	out->W = r->drawn ? b->W : NULL;
	out->b = r->drawn ? b->b : NULL;
	/* rank 0 (every feature 0 on every row) is kept as 1: a model has a rank */
	out->rank = r->drawn ? b->m : (solve_rank > 0 ? solve_rank : 1);
	out->eps = r->drawn ? 0.0 : solve_eps;
}
