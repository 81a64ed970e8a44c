/*
 * gp_approx.c - the Gaussian-process reading of approximate kernel ridge
 * (gp.h: nystrom's DTC variance, rff's Bayesian linear regression; core,
 * no PostgreSQL headers): the factor the fit keeps, and the predictive
 * standard deviation from it.
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "gp.h"
#include "kernels.h"
#include "repr.h"
#include "solve.h"

/* Columns of an m-row right-hand side per dtrsm piece (interrupt checks). */
#define GP_PIECE_COLUMNS 256

/* L := chol(K_mm + eps I) of the centres (lower, upper part zeroed). */
static km_status
centres_factor(const km_kernel *k, const double *C, size_t m, int d,
			   double eps, double *L, double *norms, km_error *err,
			   km_interrupt_fn interrupt)
{
	size_t		minor;

	km_row_norms(k, C, m, d, norms);
	if (!km_gram_lower(k, C, m, d, km_kernel_uses_norms(k->type) ? norms : NULL,
					   L, m, interrupt))
		return km_gram_overflow(k, L, m, m, err);
	for (size_t i = 0; i < m; i++)
		L[i + i * m] += eps;
	minor = km_cholesky(L, m, m, interrupt);
	if (minor != 0)
		return km_fail(err, KM_ERR_NOT_PD,
					   "kernel matrix of the centres is not positive definite",
					   "The Cholesky factorisation of K_mm + eps I of the model's %zu centres failed at row %zu with eps = %g.",
					   m, minor, eps);
	for (size_t j = 0; j < m; j++)
		for (size_t i = 0; i < j; i++)
			L[i + j * m] = 0.0;
	return KM_OK;
}

km_status
km_gp_approx_fit(const km_basis *b, const km_accum *stats,
				 const km_approx_result *res, const double *coef,
				 double *work, double *s2, double *logdet_half,
				 km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = b->m;
	double		n = (double) stats->rows;
	double		lambda = res->lambda;
	double		ybar = res->intercept;
	km_accum_gram g = km_accum_gram_parts((km_accum *) stats);
	double	   *L = work;
	double	   *A = work + m * m;
	double		yssc;
	double		rc = 0.0;
	double		ld = 0.0;
	size_t		minor;
	size_t		at = 0;
	bool		nystrom = b->centres != NULL;
	km_status	st;

	/* L = chol(K_mm + eps I) at the eps the solve used (A: the norms) */
	if (nystrom &&
		(st = centres_factor(&b->kernel, b->centres, m, (int) b->d, res->eps,
							 L, A, err, interrupt)) != KM_OK)
		return st;
	/* A := G, full, from the packed upper triangle of the sums */
	for (size_t j = 0; j < m; j++)
	{
		const double *col = g.zz + j * (j + 1) / 2;

		for (size_t i = 0; i <= j; i++)
		{
			A[i + j * m] = col[i];
			A[j + i * m] = col[i];
		}
	}
	km_check_interrupts(interrupt);
	/* A := L^-1 G L^-T, in pieces */
	if (nystrom)
	{
		for (size_t c0 = 0; c0 < m; c0 += GP_PIECE_COLUMNS)
		{
			size_t		cb = m - c0 < GP_PIECE_COLUMNS ? m - c0 : GP_PIECE_COLUMNS;

			cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
						CblasNonUnit, (int) m, (int) cb, 1.0, L, (int) m,
						A + c0 * m, (int) m);
			km_check_interrupts(interrupt);
		}
		for (size_t r0 = 0; r0 < m; r0 += GP_PIECE_COLUMNS)
		{
			size_t		rb = m - r0 < GP_PIECE_COLUMNS ? m - r0 : GP_PIECE_COLUMNS;

			cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans,
						CblasNonUnit, (int) rb, (int) m, 1.0, L, (int) m,
						A + r0, (int) m);
			km_check_interrupts(interrupt);
		}
		/* symmetric in exact arithmetic: its lower triangle is factored */
	}
	for (size_t i = 0; i < m; i++)
		A[i + i * m] += lambda;
	if (!km_all_finite(A, m * m))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "whitened statistics are out of range for type double precision",
					   "L^-1 G L^-T for the %zu components with eps %g is not finite.",
					   m, res->eps);
	minor = km_cholesky(A, m, m, interrupt);
	if (minor != 0)
		return km_fail(err, KM_ERR_NOT_PD,
					   "Gaussian-process factor is not positive definite",
					   "The Cholesky factorisation of L^-1 G L^-T + lambda I of the %zu components failed at row %zu with lambda = %g.",
					   m, minor, lambda);

	/* s2 = (sum (y - ybar)^2 - r'coef) / (lambda n), r = sum z (y - ybar) */
	for (size_t i = 0; i < m; i++)
		rc += (g.zy[i] - ybar * g.zsum[i]) * coef[i];
	yssc = *g.yss - ybar * *g.ysum;
	*s2 = fmax(yssc - rc, 0.0) / (lambda * n);
	for (size_t i = 0; i < m; i++)
		ld += log(A[i + i * m]);
	*logdet_half = 0.5 * (n - (double) m) * log(lambda) + ld;
	if (!isfinite(*s2) || !isfinite(*logdet_half))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "Gaussian-process amplitude is out of range for type double precision",
					   "y'(Q + lambda I)^-1 y or the log determinant of Q + lambda I of %.0f rows overflowed.",
					   n);
	/* pack R's lower triangle by columns into work's start (L is done) */
	for (size_t j = 0; j < m; j++)
		for (size_t i = j; i < m; i++)
			work[at++] = A[i + j * m];
	return KM_OK;
}

km_status
km_gp_approx_prepare(km_gp *g, const km_model *m, double *mem, km_error *err,
					 km_interrupt_fn interrupt)
{
	size_t		n = m->n_train;

	memset(g, 0, sizeof(*g));
	if (!km_gp_stored(g, m))
		return km_fail(err, KM_ERR_INVALID,
					   "model has no Gaussian-process factor",
					   "The approximate model keeps no gp_approx section.");
	g->shift = m->lambda;
	g->kx = mem;
	g->v = g->kx + n;
	g->x = g->v + n;
	g->L = g->x + m->n_features;
	if (m->X != NULL)
		return centres_factor(&m->kernel, m->X, n, g->d, m->approx_eps, g->L,
							  g->v, err, interrupt);
	g->L = NULL;
	return KM_OK;
}

km_status
km_gp_approx_std(km_gp *g, const double *x, double *std, km_error *err)
{
	const km_model *m = g->m;
	size_t		n = g->n;
	int			d = g->d;
	double		prior = 0.0;
	double		t;
	double		var;
	int			bad = km_standardize_row(x, d, m->mean, m->scale, g->x);

	if (bad >= 0)
		return km_fail(err, KM_ERR_OVERFLOW,
					   "standardized feature is out of range for type double precision",
					   "Feature %d of the row, %.17g, standardized with the training mean %.17g and scale %.17g, overflowed.",
					   bad + 1, x[bad], m->mean[bad], m->scale[bad]);
	if (g->L != NULL)
	{
		/* nystrom: k_m, k(x, x); prior = k(x, x) - ||L^-1 k_m||^2 */
		double		kxx;

		for (size_t i = 0; i < n; i++)
			if (!km_kernel_eval_finite(&m->kernel, g->x, m->X + i * (size_t) d, d,
									   &g->kx[i]))
				return km_fail(err, KM_ERR_OVERFLOW,
							   "kernel value is out of range for type double precision",
							   "The %s kernel of the row with centre %zu overflowed.",
							   km_kernel_name(m->kernel.type), i + 1);
		if (!km_kernel_eval_finite(&m->kernel, g->x, g->x, d, &kxx))
			return km_fail(err, KM_ERR_OVERFLOW,
						   "kernel value is out of range for type double precision",
						   "The %s kernel of the row with itself overflowed.",
						   km_kernel_name(m->kernel.type));
		cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
					(int) n, g->L, (int) n, g->kx, 1);
		prior = kxx - cblas_ddot((int) n, g->kx, 1, g->kx, 1);
		/* the clipping rule of gp.h (also when the norm overflowed) */
		if (!(prior > 0.0))
			prior = 0.0;
	}
	else
		km_rff_map(m->rff_W, m->rff_b, (uint32_t) d, (uint32_t) n, g->x, 1, g->kx);
	memcpy(g->v, g->kx, n * sizeof(double));
	cblas_dtpsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
				(int) n, g->R, g->v, 1);
	t = cblas_ddot((int) n, g->v, 1, g->v, 1);
	var = g->s2 * (prior + g->shift + g->shift * t);
	*std = sqrt(var);
	if (!isfinite(*std))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "predictive standard deviation is out of range for type double precision",
					   "s2 (k(x, x) - q(x) + lambda + lambda k_m'(G + lambda K)^-1 k_m) overflowed with s2 = %g.",
					   g->s2);
	return KM_OK;
}
