/*
 * score.c - decision values of a decoded model (core, no PostgreSQL
 * headers).  See score.h.
 */
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernel_maps.h"
#include "score.h"
#include "solve.h"

/*
 * Whether m scores through drawn features (its W and b: rff) rather than
 * the kernel expansion over the rows it keeps (exact, nystrom): what the
 * decoded model holds (its representation's RFF section sets W).
 */
static bool
is_rff(const km_model *m)
{
	return m->rff_W != NULL;
}

static uint32_t
outputs(const km_model *m)
{
	return m->n_outputs ? m->n_outputs : 1;
}

/* b_j: intercepts[j], or the intercept when a caller gave no array. */
static double
intercept(const km_model *m, uint32_t j)
{
	return m->intercepts ? m->intercepts[j] : m->intercept;
}

size_t
km_scorer_doubles(const km_model *m)
{
	uint64_t	n = m->n_train;
	uint64_t	d = m->n_features;
	uint64_t	total;

	if (is_rff(m))
		total = d + n;
	else
		total = n * d + n + d + n;
	if (total > SIZE_MAX / sizeof(double))
		return 0;
	return (size_t) total;
}

void
km_scorer_prepare(km_scorer *s, const km_model *m, double *mem)
{
	size_t		n = m->n_train;
	int			d = (int) m->n_features;

	memset(s, 0, sizeof(*s));
	s->m = m;
	s->bad_feature = -1;
	if (is_rff(m))
	{
		s->x = mem;
		s->work = mem + d;
		return;
	}
	s->Xt = mem;
	s->norms = mem + n * d;
	s->x = s->norms + n;
	s->work = s->x + d;
	km_transpose(m->X, n, d, s->Xt);
	km_row_norms(&m->kernel, m->X, n, d, s->norms);
}

/* The error of a standardized feature j that overflowed. */
static km_status
feature_overflow(km_scorer *s, const double *x, int j, km_error *err)
{
	s->bad_feature = j;
	return km_fail(err, KM_ERR_OVERFLOW,
				   "standardized feature is out of range for type double precision",
				   "Feature %d of the row, %.17g, standardized with the training mean %.17g and scale %.17g, overflowed.",
				   j + 1, x[j], s->m->mean[j], s->m->scale[j]);
}

static km_status
decision_overflow(km_scorer *s, km_error *err)
{
	s->bad_feature = -1;
	return km_fail(err, KM_ERR_OVERFLOW,
				   "prediction is out of range for type double precision",
				   "Scoring the row with the %s kernel overflowed: a kernel value with a training row, or the sum of the coefficients times those values.",
				   km_kernel_name(s->m->kernel.type));
}

/* out (q) from the standardized row s->x. */
static bool
decide(km_scorer *s, double *out)
{
	const km_model *m = s->m;
	size_t		n = m->n_train;
	int			d = (int) m->n_features;
	uint32_t	q = outputs(m);

	if (is_rff(m))
	{
		km_rff_map(m->rff_W, m->rff_b, m->n_features, m->n_train, s->x, 1, s->work);
		for (uint32_t j = 0; j < q; j++)
			out[j] = intercept(m, j) +
				cblas_ddot((int) n, m->alpha + j * n, 1, s->work, 1);
	}
	else
	{
		double		xnorm = km_vector_norm(&m->kernel, s->x, d);

		/* one output: exactly the sum 0.2.0's kernel_predict computed */
		for (uint32_t j = 0; j < q; j++)
			out[j] = intercept(m, j) +
				km_kernel_row_dot(&m->kernel, s->Xt, n, d, s->norms, s->x,
								  xnorm, m->alpha + j * n, s->work);
	}
	return km_all_finite(out, q);
}

km_status
km_scorer_decision(km_scorer *s, const double *x, double *out, km_error *err)
{
	int			bad = km_standardize_row(x, (int) s->m->n_features, s->m->mean,
										 s->m->scale, s->x);

	if (bad >= 0)
		return feature_overflow(s, x, bad, err);
	if (!decide(s, out))
		return decision_overflow(s, err);
	return KM_OK;
}

size_t
km_scorer_block_doubles(const km_model *m, size_t rows)
{
	uint64_t	n = m->n_train;
	uint64_t	d = m->n_features;
	uint64_t	per_row = d + n + 1;	/* standardized row, its features, norm */

	if (rows == 0 || rows > SIZE_MAX / sizeof(double) / per_row)
		return 0;
	return (size_t) (rows * per_row);
}

/*
 * Whether the block of an rbf model of one output can take the fused path:
 * every norm small enough for the expanded distance (the rule of
 * kernels.c's plan_gram, so no inner product or distance overflows).
 */
static bool
rbf_fused(const km_model *m, const double *xnorms, size_t rows,
		  const double *norms)
{
	double		top = 0.0;

	if (m->kernel.type != KM_KERNEL_RBF || outputs(m) != 1 || is_rff(m))
		return false;
	for (size_t r = 0; r < rows; r++)
		top = fmax(top, isfinite(xnorms[r]) ? xnorms[r] : HUGE_VAL);
	for (size_t i = 0; i < m->n_train; i++)
		top = fmax(top, isfinite(norms[i]) ? norms[i] : HUGE_VAL);
	/* then |-g (a + b)| and |2g <x, c>| are at most 2g top: finite */
	return top <= DBL_MAX / 8 && m->kernel.gamma * top <= DBL_MAX / 8;
}

/*
 * An rbf block of one output: Z = -g (||x||^2 + ||c||^2) set row by row,
 * then one GEMM adds 2g <x, c>, so Z holds -g ||x - c||^2 (the scale and
 * the norms ride in the GEMM instead of the map, and OpenBLAS skips its
 * zeroing pass for beta 1); then each row's exp and its dot with the
 * coefficients in one pass (km_rbf_exp_dot).  The kernel values are
 * never stored and no second GEMM reads them back.
 */
static km_status
block_rbf_fused(km_scorer *s, const double *Xs, size_t rows,
				const double *xnorms, double *Z, double *out, km_error *err)
{
	const km_model *m = s->m;
	size_t		n = m->n_train;
	int			d = (int) m->n_features;
	double		g = m->kernel.gamma;

	for (size_t r = 0; r < rows; r++)
		km_rbf_preset(Z + r * n, n, s->norms, xnorms[r], g);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) n, d,
				2.0 * g, Xs, d, m->X, d, 1.0, Z, (int) n);
	for (size_t r = 0; r < rows; r++)
	{
		out[r] = intercept(m, 0) + km_rbf_exp_dot(Z + r * n, n, m->alpha);
		if (!isfinite(out[r]))
			return decision_overflow(s, err);
	}
	return KM_OK;
}

km_status
km_scorer_block(km_scorer *s, const double *X, size_t rows, double *out,
				double *work, km_error *err)
{
	const km_model *m = s->m;
	size_t		d = m->n_features;
	size_t		n = m->n_train;
	uint32_t	q = outputs(m);
	double	   *Xs = work;
	double	   *Z = Xs + rows * d;
	double	   *xnorms = Z + rows * n;
	bool		ok;

	for (size_t r = 0; r < rows; r++)
	{
		int			bad = km_standardize_row(X + r * d, (int) d, m->mean, m->scale,
											 Xs + r * d);

		if (bad >= 0)
			return feature_overflow(s, X + r * d, bad, err);
	}
	/* Z: the features of the rows, by one GEMM and an element-wise map */
	if (is_rff(m))
	{
		km_rff_map(m->rff_W, m->rff_b, m->n_features, m->n_train, Xs, rows, Z);
		ok = true;
	}
	else
	{
		bool		norms = km_kernel_uses_norms(m->kernel.type);

		if (norms)
			km_row_norms(&m->kernel, Xs, rows, (int) d, xnorms);
		if (norms && rbf_fused(m, xnorms, rows, s->norms))
			return block_rbf_fused(s, Xs, rows, xnorms, Z, out, err);
		ok = km_gram_cross(&m->kernel, Xs, rows, norms ? xnorms : NULL, m->X,
						   s->Xt, n, (int) d, norms ? s->norms : NULL, Z);
	}
	if (!ok)
	{
		size_t		r = km_first_nonfinite_row(Z, rows, n);

		return km_fail(err, KM_ERR_OVERFLOW,
					   "prediction is out of range for type double precision",
					   "Scoring row %zu of the block with the %s kernel overflowed: a kernel value with a training row.",
					   r + 1, km_kernel_name(m->kernel.type));
	}
	/* out (rows x q) = Z (rows x n) alpha (n x q, column-major) */
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) q, (int) n,
				1.0, Z, (int) n, m->alpha, (int) n, 0.0, out, (int) q);
	for (size_t r = 0; r < rows; r++)
	{
		for (uint32_t j = 0; j < q; j++)
			out[r * q + j] += intercept(m, j);
		if (!km_all_finite(out + r * q, q))
			return decision_overflow(s, err);
	}
	return KM_OK;
}
