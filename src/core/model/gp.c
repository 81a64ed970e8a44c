/*
 * gp.c - the Gaussian-process reading of kernel ridge: the predictive
 * standard deviation and the log marginal likelihood (gp.h; core, no
 * PostgreSQL headers): exact ridge from the factor of K + lambda I rebuilt
 * from its rows; approximate ridge (nystrom's DTC, rff's Bayesian linear
 * regression, below) from the factor its sums' solve keeps.
 */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gp.h"
#include "approx.h"
#include "kernels.h"
#include "metrics.h"
#include "model_section.h"
#include "repr.h"
#include "solve.h"

bool
km_gp_applies(const km_model *m, const char **why)
{
	const km_method_ops *ops = km_method_get(m->method);

	if (ops == NULL || !ops->gp_reading || m->n_outputs != 1)
	{
		if (why)
			*why = "method";
		return false;
	}
	/* a basis keeps its GP reading as its solve's factor (its GP_APPROX section) */
	if (km_section_list_has(km_repr_sections(km_repr_lookup(m->approximation)),
							&km_gp_approx_section))
	{
		if (m->gp_factor != NULL)
			return true;
		if (why)
			*why = "approximation";
		return false;
	}
	if (m->X == NULL)
	{
		if (why)
			*why = "approximation";
		return false;
	}
	return true;
}

size_t
km_gp_doubles(const km_model *m)
{
	size_t		n = m->n_train;
	size_t		d = m->n_features;

	/* rff keeps no rows: its vectors only (an exact model keeps its rows) */
	if (m->X == NULL)
		return n > (SIZE_MAX / sizeof(double) - d) / 2 ? 0 : 2 * n + d;
	if (n > 0 && n > (SIZE_MAX / sizeof(double) - 2 * n - d) / n)
		return 0;
	return n * n + 2 * n + d;
}

bool
km_gp_stored(km_gp *g, const km_model *m)
{
	if (!m->has_gp && m->gp_factor == NULL)
		return false;
	g->m = m;
	g->n = m->n_train;
	g->approx = m->gp_factor != NULL;
	g->rows = g->approx ? (size_t) m->rows_seen : g->n;
	g->R = m->gp_factor;
	g->d = (int) m->n_features;
	g->shift = m->lambda + m->jitter;
	g->s2 = m->gp_amplitude;
	g->logdet_half = m->gp_logdet_half;
	return true;
}

km_status
km_gp_prepare(km_gp *g, const km_model *m, double *mem, km_error *err,
			  km_interrupt_fn interrupt)
{
	size_t		n = m->n_train;
	int			d = (int) m->n_features;
	double	   *norms;
	double		quad;
	size_t		minor;

	/* an approximate model's reading is its factor's (km_gp_applies asked) */
	if (m->gp_factor != NULL || m->X == NULL)
		return km_gp_approx_prepare(g, m, mem, err, interrupt);
	memset(g, 0, sizeof(*g));
	g->m = m;
	g->n = n;
	g->rows = n;
	g->d = d;
	g->shift = m->lambda + m->jitter;
	g->L = mem;
	norms = mem + n * n;
	g->kx = norms + n;
	g->x = g->kx + n;

	km_row_norms(&m->kernel, m->X, n, d, norms);
	if (!km_gram_lower(&m->kernel, m->X, n, d, norms, g->L, n, interrupt))
		return km_gram_overflow(&m->kernel, g->L, n, n, err);
	for (size_t i = 0; i < n; i++)
		g->L[i + i * n] += g->shift;
	minor = km_cholesky(g->L, n, n, interrupt);
	if (minor != 0)
		return km_fail(err, KM_ERR_NOT_PD,
					   "kernel matrix is not positive definite",
					   "The Cholesky factorisation of K + lambda I of the model's %zu training rows failed at row %zu with lambda = %g (the model's lambda plus its jitter).",
					   n, minor, g->shift);
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < j; i++)
			g->L[i + j * n] = 0.0;

	/* kept by the fit (the GP section): the same values, computed there */
	if (km_gp_stored(g, m))
		return KM_OK;
	/* y'(K + lambda I)^-1 y = alpha'(K + lambda I) alpha = ||L' alpha||^2 */
	memcpy(g->kx, m->alpha, n * sizeof(double));
	cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit,
				(int) n, g->L, (int) n, g->kx, 1);
	quad = cblas_ddot((int) n, g->kx, 1, g->kx, 1);
	g->s2 = n > 0 ? quad / (double) n : 0.0;
	g->logdet_half = 0.0;
	for (size_t i = 0; i < n; i++)
		g->logdet_half += log(g->L[i + i * n]);
	if (!isfinite(g->s2) || !isfinite(g->logdet_half))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "Gaussian-process amplitude is out of range for type double precision",
					   "y'(K + lambda I)^-1 y or the log determinant of K + lambda I of the model's %zu training rows overflowed.",
					   n);
	return KM_OK;
}

/*
 * k(x, x) - ||L^-1 k_x||^2 for the standardized row g->x: k_x its kernel
 * values with the model's n rows (training rows or centres, named by
 * rows_are in an error), into g->kx, solved in place by the factor g->L.
 * Unclipped: the callers apply gp.h's rule.
 */
static km_status
row_reduction(km_gp *g, const char *rows_are, double *out, km_error *err)
{
	const km_model *m = g->m;
	size_t		n = g->n;
	int			d = g->d;
	double		kxx;

	for (size_t i = 0; i < n; i++)
		if (!km_kernel_eval_finite(&m->kernel, g->x, m->X + i * (size_t) d, d,
								   &g->kx[i]))
			return km_fail(err, KM_ERR_OVERFLOW,
						   "kernel value is out of range for type double precision",
						   "The %s kernel of the row with %s %zu overflowed.",
						   km_kernel_name(m->kernel.type), rows_are, i + 1);
	if (!km_kernel_eval_finite(&m->kernel, g->x, g->x, d, &kxx))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel value is out of range for type double precision",
					   "The %s kernel of the row with itself overflowed.",
					   km_kernel_name(m->kernel.type));
	cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
				(int) n, g->L, (int) n, g->kx, 1);
	*out = kxx - cblas_ddot((int) n, g->kx, 1, g->kx, 1);
	return KM_OK;
}

km_status
km_gp_std(km_gp *g, const double *x, double *std, km_error *err)
{
	const km_model *m = g->m;
	int			d = g->d;
	double		latent;
	km_status	st;
	int			bad;

	if (g->approx)
		return km_gp_approx_std(g, x, std, err);
	bad = km_standardize_row(x, d, m->mean, m->scale, g->x);
	if (bad >= 0)
		return km_fail(err, KM_ERR_OVERFLOW,
					   "standardized feature is out of range for type double precision",
					   "Feature %d of the row, %.17g, standardized with the training mean %.17g and scale %.17g, overflowed.",
					   bad + 1, x[bad], m->mean[bad], m->scale[bad]);
	st = row_reduction(g, "training row", &latent, err);
	if (st != KM_OK)
		return st;
	/* the clipping rule of gp.h (also when q overflowed to infinity) */
	if (!(latent > 0.0))
		latent = 0.0;
	*std = sqrt(g->s2 * (latent + g->shift));
	if (!isfinite(*std))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "predictive standard deviation is out of range for type double precision",
					   "s2 (k(x, x) - k_x'(K + lambda I)^-1 k_x + lambda) overflowed with s2 = %g.",
					   g->s2);
	return KM_OK;
}

size_t
km_gp_block_prepare_doubles(const km_gp *g)
{
	size_t		n = g->n;
	size_t		d = (size_t) g->d;

	if (n > 0 && (d + 1 > SIZE_MAX / sizeof(double) / n ||
				  (g->approx && n > SIZE_MAX / sizeof(double) / n - d - 1)))
		return 0;
	return n * (d + 1) + (g->approx ? n * n : 0) + 1;
}

void
km_gp_block_prepare(km_gp *g, double *mem)
{
	const km_model *m = g->m;
	size_t		n = g->n;

	g->norms = mem;
	g->Xt = mem + n;
	g->Rfull = g->approx ? g->Xt + n * (size_t) g->d : NULL;
	if (m->X != NULL)
	{
		km_row_norms(&m->kernel, m->X, n, g->d, g->norms);
		km_transpose(m->X, n, g->d, g->Xt);
	}
	if (g->approx)
	{
		/* R, packed lower by columns, unpacked (its upper part zero) */
		size_t		at = 0;

		memset(g->Rfull, 0, n * n * sizeof(double));
		for (size_t j = 0; j < n; j++)
			for (size_t i = j; i < n; i++)
				g->Rfull[i + j * n] = g->R[at++];
	}
	g->block_ready = true;
}

size_t
km_gp_block_doubles(const km_gp *g, size_t rows)
{
	size_t		per = (size_t) g->d + g->n + 2;

	if (rows > 0 && per > SIZE_MAX / sizeof(double) / rows)
		return 0;
	return rows * per;
}

km_status
km_gp_std_block(km_gp *g, const double *X, size_t rows, double *std,
				double *work, km_error *err)
{
	const km_model *m = g->m;
	size_t		n = g->n;
	int			d = g->d;
	double	   *Xs = work;
	double	   *V = Xs + rows * (size_t) d;	/* n x rows, column-major */
	double	   *xnorms = V + rows * n;
	double	   *prior = xnorms + rows;
	bool		norms = km_kernel_uses_norms(m->kernel.type);

	for (size_t r = 0; r < rows; r++)
	{
		int			bad = km_standardize_row(X + r * d, d, m->mean, m->scale,
											 Xs + r * d);

		if (bad >= 0)
			return km_fail(err, KM_ERR_OVERFLOW,
						   "standardized feature is out of range for type double precision",
						   "Feature %d of row %zu of the block, %.17g, standardized with the training mean %.17g and scale %.17g, overflowed.",
						   bad + 1, r + 1, X[r * d + bad], m->mean[bad], m->scale[bad]);
	}
	if (m->X == NULL)
	{
		/* rff: the features, no prior part */
		km_rff_map(m->rff_W, m->rff_b, (uint32_t) d, (uint32_t) n, Xs, rows, V);
		for (size_t r = 0; r < rows; r++)
			prior[r] = 0.0;
	}
	else
	{
		/* V = K_xm' (row-major rows x n is column-major n x rows) */
		if (norms)
			km_row_norms(&m->kernel, Xs, rows, d, xnorms);
		if (!km_gram_cross(&m->kernel, Xs, rows, norms ? xnorms : NULL, m->X,
						   g->Xt, n, d, norms ? g->norms : NULL, V))
		{
			size_t		r = km_first_nonfinite_row(V, rows, n);

			return km_fail(err, KM_ERR_OVERFLOW,
						   "kernel value is out of range for type double precision",
						   "The %s kernel of row %zu of the block with a %s overflowed.",
						   km_kernel_name(m->kernel.type), r + 1,
						   g->approx ? "centre" : "training row");
		}
		/* V := L^-1 V; prior = k(x, x) - ||V_r||^2, clipped as km_gp_std */
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) n, (int) rows, 1.0, g->L, (int) n,
					V, (int) n);
		for (size_t r = 0; r < rows; r++)
		{
			double		kxx;
			double		p;

			if (!km_kernel_eval_finite(&m->kernel, Xs + r * d, Xs + r * d, d, &kxx))
				return km_fail(err, KM_ERR_OVERFLOW,
							   "kernel value is out of range for type double precision",
							   "The %s kernel of row %zu of the block with itself overflowed.",
							   km_kernel_name(m->kernel.type), r + 1);
			p = kxx - cblas_ddot((int) n, V + r * n, 1, V + r * n, 1);
			prior[r] = p > 0.0 ? p : 0.0;
		}
	}
	if (!g->approx)
	{
		for (size_t r = 0; r < rows; r++)
			std[r] = sqrt(g->s2 * (prior[r] + g->shift));
	}
	else
	{
		/* V := R^-1 V: the variance s2 (prior + lambda + lambda ||V_r||^2) */
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) n, (int) rows, 1.0, g->Rfull, (int) n,
					V, (int) n);
		for (size_t r = 0; r < rows; r++)
		{
			double		t = cblas_ddot((int) n, V + r * n, 1, V + r * n, 1);

			std[r] = sqrt(g->s2 * (prior[r] + g->shift + g->shift * t));
		}
	}
	for (size_t r = 0; r < rows; r++)
		if (!isfinite(std[r]))
			return km_fail(err, KM_ERR_OVERFLOW,
						   "predictive standard deviation is out of range for type double precision",
						   "The variance of row %zu of the block overflowed with s2 = %g.",
						   r + 1, g->s2);
	return KM_OK;
}

bool
km_gp_log_marginal_likelihood(const km_gp *g, double *lml)
{
	double		v = -km_neg_log_evidence(g->s2 * (double) g->rows, g->logdet_half, g->rows);

	if (!isfinite(v))
		return false;
	*lml = v;
	return true;
}

/* Approximate ridge (gp.h) */

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
		km_approx_whiten(L, A, m, interrupt);
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
		/* nystrom: prior = k(x, x) - ||L^-1 k_m||^2 over the centres */
		km_status	st = row_reduction(g, "centre", &prior, err);

		if (st != KM_OK)
			return st;
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
