/*
 * gp.c - the Gaussian-process reading of exact kernel ridge: the
 * predictive standard deviation and the log marginal likelihood (gp.h;
 * core, no PostgreSQL headers).
 */
#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gp.h"
#include "kernels.h"
#include "metrics.h"
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
	if (km_repr_lookup(m->approximation)->approximate)
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

	/* rff keeps no rows: its vectors only */
	if (km_repr_lookup(m->approximation)->approximate && m->X == NULL)
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

	if (km_repr_lookup(m->approximation)->approximate)
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

km_status
km_gp_std(km_gp *g, const double *x, double *std, km_error *err)
{
	const km_model *m = g->m;
	size_t		n = g->n;
	int			d = g->d;
	double		kxx;
	double		q;
	double		latent;
	int			bad;

	if (g->approx)
		return km_gp_approx_std(g, x, std, err);
	bad = km_standardize_row(x, d, m->mean, m->scale, g->x);
	if (bad >= 0)
		return km_fail(err, KM_ERR_OVERFLOW,
					   "standardized feature is out of range for type double precision",
					   "Feature %d of the row, %.17g, standardized with the training mean %.17g and scale %.17g, overflowed.",
					   bad + 1, x[bad], m->mean[bad], m->scale[bad]);
	for (size_t i = 0; i < n; i++)
		if (!km_kernel_eval_finite(&m->kernel, g->x, m->X + i * (size_t) d, d,
								   &g->kx[i]))
			return km_fail(err, KM_ERR_OVERFLOW,
						   "kernel value is out of range for type double precision",
						   "The %s kernel of the row with training row %zu overflowed.",
						   km_kernel_name(m->kernel.type), i + 1);
	if (!km_kernel_eval_finite(&m->kernel, g->x, g->x, d, &kxx))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel value is out of range for type double precision",
					   "The %s kernel of the row with itself overflowed.",
					   km_kernel_name(m->kernel.type));
	cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit,
				(int) n, g->L, (int) n, g->kx, 1);
	q = cblas_ddot((int) n, g->kx, 1, g->kx, 1);
	latent = kxx - q;
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

bool
km_gp_log_marginal_likelihood(const km_gp *g, double *lml)
{
	double		v = -km_neg_log_evidence(g->s2 * (double) g->rows, g->logdet_half, g->rows);

	if (!isfinite(v))
		return false;
	*lml = v;
	return true;
}
