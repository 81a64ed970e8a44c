/*
 * test_numerics.c - no silently wrong or non-finite result: overflow-safe
 * standardization, scaled cosine, Gram overflow detection, and the real
 * training error and accuracy check of kernel ridge.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "fit.h"
#include "solve.h"
#include "unit.h"

void		test_numerics_all_finite(void);
void		test_numerics_standardize_extremes(void);
void		test_numerics_standardize_row_overflow(void);
void		test_numerics_cosine_scaled(void);
void		test_numerics_gram_overflow(void);
void		test_numerics_row_dot_overflow(void);
void		test_numerics_ridge_real_rmse(void);
void		test_numerics_ridge_inaccurate(void);
void		test_numerics_gram_times(void);
void		test_numerics_gram_times_norm(void);

void
test_numerics_all_finite(void)
{
	double		v[37];

	for (int i = 0; i < 37; i++)
		v[i] = i - 18.5;
	CHECK(km_all_finite(v, 37), "finite vector");
	v[36] = HUGE_VAL;
	CHECK(!km_all_finite(v, 37), "infinity at the end");
	v[36] = 0.0;
	v[3] = NAN;
	CHECK(!km_all_finite(v, 37), "NaN");
	v[3] = -DBL_MAX;
	CHECK(km_all_finite(v, 37), "largest finite");
}

void
test_numerics_standardize_extremes(void)
{
	/* column 0: +-1e200 (squares overflow); column 1: +-DBL_MAX (differences overflow);
	 * column 2: tiny spread around 1e-200 (squares underflow) */
	double		X[4 * 3] = {
		1e200, DBL_MAX, 1e-200,
		-1e200, -DBL_MAX, 3e-200,
		1e200, DBL_MAX, 1e-200,
		-1e200, -DBL_MAX, 3e-200
	};
	double		out[4 * 3];
	double		mean[3];
	double		scale[3];

	km_standardize(X, 4, 3, mean, scale, out);
	CHECK(km_all_finite(mean, 3) && km_all_finite(scale, 3) && km_all_finite(out, 12),
		  "finite mean %g %g %g, scale %g %g %g", mean[0], mean[1], mean[2],
		  scale[0], scale[1], scale[2]);
	CHECK_CLOSE(mean[0], 0.0, 1e-15);
	CHECK_CLOSE(scale[0] / 1e200, 1.0, 1e-15);
	CHECK_CLOSE(scale[1] / DBL_MAX, 1.0, 1e-15);
	CHECK_CLOSE(mean[2] / 2e-200, 1.0, 1e-15);
	CHECK_CLOSE(scale[2] / 1e-200, 1.0, 1e-15);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 3; j++)
			CHECK_CLOSE(out[i * 3 + j], (j < 2 ? 1.0 : -1.0) * (i % 2 == 0 ? 1.0 : -1.0), 1e-15);
}

void
test_numerics_standardize_row_overflow(void)
{
	double		mean[2] = {-DBL_MAX / 2, 0.0};
	double		scale[2] = {1.0, 1e-300};
	double		x[2] = {DBL_MAX / 2, 1.0};
	double		out[2];

	/* x - mean overflows but (x - mean) / 2 does not: found by halving */
	scale[0] = 2.0;
	x[1] = 1e-10;
	CHECK(km_standardize_row(x, 2, mean, scale, out) == -1, "halving rescues feature 0");
	CHECK_CLOSE(out[0] / (DBL_MAX / 2), 1.0, 1e-15);
	/* 1e10 / 1e-300 overflows: feature 1 is named */
	x[1] = 1e10;
	CHECK(km_standardize_row(x, 2, mean, scale, out) == 1, "feature 1 overflows");
}

void
test_numerics_cosine_scaled(void)
{
	km_kernel	k = {KM_KERNEL_COSINE, 0, 1.0, 0.0};
	double		a[2] = {1e300, 1e300};
	double		b[2] = {-1e300, -1e300};
	double		t[2] = {1e-300, 1e-300};
	double		X[3 * 2] = {1e300, 1e300, -1e300, -1e300, 1e300, -1e300};
	double		K[9];
	double		norms[3];
	double		Xt[6];
	double		w[3] = {1.0, 2.0, 4.0};
	double		work[3];
	double		v;

	CHECK(km_kernel_eval(&k, a, b, 2) == -1.0, "cosine of opposite huge vectors %.17g",
		  km_kernel_eval(&k, a, b, 2));
	CHECK(km_kernel_eval(&k, t, t, 2) == 1.0, "cosine of tiny vectors %.17g",
		  km_kernel_eval(&k, t, t, 2));
	CHECK(km_kernel_eval_finite(&k, a, b, 2, &v) && v == -1.0, "eval_finite");

	/* the BLAS paths: Gram matrix and kernel row */
	km_row_norms(&k, X, 3, 2, norms);
	CHECK(km_all_finite(norms, 3), "cosine norms of 1e300 rows are finite");
	CHECK(km_gram_lower(&k, X, 3, 2, norms, K, 3, NULL), "Gram is finite");
	CHECK(K[1 + 0 * 3] == -1.0 && fabs(K[2 + 0 * 3]) < 1e-15 && fabs(K[2 + 1 * 3]) < 1e-15,
		  "Gram entries %g %g %g", K[1], K[2], K[5]);
	km_transpose(X, 3, 2, Xt);
	v = km_kernel_row_dot(&k, Xt, 3, 2, norms, b, km_vector_norm(&k, b, 2), w, work);
	CHECK_CLOSE(v, -1.0 + 2.0 + 0.0, 1e-15);
}

void
test_numerics_gram_overflow(void)
{
	km_kernel	lin = {KM_KERNEL_LINEAR, 0, 1.0, 0.0};
	km_kernel	poly = {KM_KERNEL_POLY, 3, 1.0, 1.0};
	km_kernel	rbf = {KM_KERNEL_RBF, 0, 1.0, 0.0};
	double		X[3 * 2] = {1.0, 2.0, 3.0, 1e200, 0.5, 0.5};
	double		Y[3 * 2] = {1.0, 2.0, 3.0, 1e110, 0.5, 0.5};
	double		K[9];
	double		norms[3];
	km_error	err;

	CHECK(!km_gram_lower(&lin, X, 3, 2, NULL, K, 3, NULL), "linear overflow found");
	CHECK(km_gram_overflow(&lin, K, 3, 3, &err) == KM_ERR_OVERFLOW, "status");
	CHECK(strstr(err.detail, "rows 2 and 2") != NULL, "names the entry: %s", err.detail);

	/* inner products finite, the cube overflows */
	CHECK(!km_gram_lower(&poly, Y, 3, 2, NULL, K, 3, NULL), "poly overflow found");
	km_gram_overflow(&poly, K, 3, 3, &err);
	CHECK(strstr(err.detail, "rows 2 and 1") != NULL, "names the entry: %s", err.detail);

	/* rbf: the squared norm overflows; far rows give 0, a row with itself 1 */
	km_row_norms(&rbf, X, 3, 2, norms);
	CHECK(!km_gram_lower(&rbf, X, 3, 2, norms, K, 3, NULL), "rbf distance overflow found");
	X[3] = 1e150;
	km_row_norms(&rbf, X, 3, 2, norms);
	CHECK(km_gram_lower(&rbf, X, 3, 2, norms, K, 3, NULL), "rbf distances finite");
	CHECK(K[0] == 1.0 && K[4] == 1.0 && K[1] == 0.0 && K[2] == exp(-(0.25 + 2.25)),
		  "rbf entries %g %g %g %g", K[0], K[4], K[1], K[2]);
}

void
test_numerics_row_dot_overflow(void)
{
	km_kernel	k = {KM_KERNEL_POLY, 3, 1.0, 1.0};
	km_kernel	sig = {KM_KERNEL_SIGMOID, 0, 1.0, 0.0};
	double		X[2 * 2] = {1.0, 2.0, -1.0, 0.5};
	double		Xt[4];
	double		w[2] = {1.0, 1.0};
	double		work[2];
	double		x[2] = {1e120, 1.0};
	double		big[2] = {1e200, 1e200};

	km_transpose(X, 2, 2, Xt);
	CHECK(!isfinite(km_kernel_row_dot(&k, Xt, 2, 2, NULL, x, 0.0, w, work)),
		  "poly kernel row overflows");
	X[0] = 1e200;
	km_transpose(X, 2, 2, Xt);
	/* tanh of an overflowed inner product must not come back as 1 */
	CHECK(!isfinite(km_kernel_row_dot(&sig, Xt, 2, 2, NULL, big, 0.0, w, work)),
		  "sigmoid inner product overflow");
}

/* rows on a smooth curve: an ill-conditioned rbf matrix */
static void
smooth_data(size_t n, int d, double *X, double *y)
{
	unsigned long long s = 7;

	for (size_t i = 0; i < n; i++)
	{
		for (int j = 0; j < d; j++)
			X[i * d + j] = 2.0 * unit_urand(&s);
		y[i] = sin(3.0 * X[i * d]) + 0.1 * unit_urand(&s);
	}
}

void
test_numerics_ridge_real_rmse(void)
{
	size_t		n = 300;
	int			d = 2;
	double	   *X = malloc(n * d * sizeof(double));
	double	   *y = malloc(n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	double		lambdas[3] = {1.0, 1e-3, 1e-5};
	km_kernel	kernels[3] = {
		{KM_KERNEL_RBF, 0, 1.0, 0.0},
		{KM_KERNEL_LAPLACIAN, 0, 0.5, 0.0},
		{KM_KERNEL_POLY, 3, 0.5, 1.0}
	};

	smooth_data(n, d, X, y);
	for (int kk = 0; kk < 3; kk++)
		for (int l = 0; l < 3; l++)
		{
			km_fit_params p = {kernels[kk], KM_METHOD_RIDGE, lambdas[l], 0, 0, 0};
			km_fit_result res;
			km_error	err;
			double		ss = 0.0;

			CHECK(km_fit(&p, X, n, d, y, alpha, work, &res, &err, NULL) == KM_OK,
				  "kernel %d lambda %g: %s", kk, lambdas[l], err.detail);
			/* the training error from the definition of every kernel value */
			for (size_t i = 0; i < n; i++)
			{
				double		pred = 0.0;

				for (size_t j = 0; j < n; j++)
					pred += alpha[j] * km_kernel_eval(&p.kernel, X + i * d, X + j * d, d);
				ss += (y[i] - pred) * (y[i] - pred);
			}
			CHECK(fabs(res.train_rmse - sqrt(ss / n)) <= 1e-9 * sqrt(ss / n) + 1e-13,
				  "kernel %d lambda %g: train_rmse %.17g, recomputed %.17g", kk,
				  lambdas[l], res.train_rmse, sqrt(ss / n));
			CHECK(res.relative_residual <= KM_MAX_RELATIVE_RESIDUAL,
				  "relative residual %g", res.relative_residual);
		}
	free(X);
	free(y);
	free(alpha);
	free(work);
}

void
test_numerics_ridge_inaccurate(void)
{
	size_t		n = 200;
	int			d = 3;
	double	   *X = malloc(n * d * sizeof(double));
	double	   *y = malloc(n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	km_fit_params p = {{KM_KERNEL_POLY, 100, 1.0 / 3.0, 1.0}, KM_METHOD_RIDGE, 1.0, 0, 0, 0};
	km_fit_result res;
	km_error	err;
	double		mean[3];
	double		scale[3];

	smooth_data(n, d, X, y);
	km_standardize(X, n, d, mean, scale, X);
	CHECK(km_fit(&p, X, n, d, y, alpha, work, &res, &err, NULL) == KM_ERR_INACCURATE,
		  "degree 100 must not fit silently (status %d, residual %g)", err.status,
		  res.relative_residual);
	CHECK(strstr(err.detail, "relative residual") != NULL &&
		  strstr(err.detail, "reciprocal condition number") != NULL, "%s", err.detail);

	p.kernel.type = KM_KERNEL_POLYSUM;
	CHECK(km_fit(&p, X, n, d, y, alpha, work, &res, &err, NULL) == KM_ERR_INACCURATE,
		  "polysum degree 100 must not fit silently (status %d)", err.status);
	free(X);
	free(y);
	free(alpha);
	free(work);
}

void
test_numerics_gram_times(void)
{
	size_t		n = 1500;		/* several column panels and row blocks */
	int			d = 3;
	double	   *X = malloc(n * d * sizeof(double));
	double	   *w = malloc(n * sizeof(double));
	double	   *u = malloc(n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *B = malloc((size_t) KM_TIMES_COLS * KM_TIMES_ROWS * sizeof(double));
	km_kernel	kernels[3] = {
		{KM_KERNEL_RBF, 0, 0.7, 0.0},
		{KM_KERNEL_LAPLACIAN, 0, 0.5, 0.0},
		{KM_KERNEL_POLY, 2, 0.5, 1.0}
	};
	unsigned long long s = 11;

	for (size_t i = 0; i < n * d; i++)
		X[i] = unit_urand(&s);
	for (size_t i = 0; i < n; i++)
		w[i] = unit_urand(&s);
	for (int kk = 0; kk < 3; kk++)
	{
		double		worst = 0.0;

		km_row_norms(&kernels[kk], X, n, d, norms);
		CHECK(km_gram_times(&kernels[kk], X, n, d, norms, w, u, B, NULL), "finite");
		for (size_t i = 0; i < n; i += 7)
		{
			double		want = 0.0;

			for (size_t j = 0; j < n; j++)
				want += w[j] * km_kernel_eval(&kernels[kk], X + i * d, X + j * d, d);
			worst = fmax(worst, fabs(u[i] - want));
		}
		CHECK(worst < 1e-11, "kernel %d: K w differs from the definition by %g", kk, worst);
	}
	free(X);
	free(w);
	free(u);
	free(norms);
	free(B);
}

/*
 * km_gram_times_norm: K w and the column sums of |K| against the kernel's
 * definition, for kernels with entries of both signs, with BLAS on one
 * thread and on two (then a second thread maps half of each block).
 */
void
test_numerics_gram_times_norm(void)
{
	size_t		n = 1500;
	int			d = 3;
	double	   *X = malloc(n * d * sizeof(double));
	double	   *w = malloc(n * sizeof(double));
	double	   *u = malloc(n * sizeof(double));
	double	   *colabs = malloc(n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *B = malloc((size_t) KM_TIMES_COLS * KM_TIMES_ROWS * sizeof(double));
	km_kernel	kernels[3] = {
		{KM_KERNEL_RBF, 0, 0.7, 0.0},
		{KM_KERNEL_SIGMOID, 0, 0.5, -0.2},
		{KM_KERNEL_LINEAR, 0, 0.0, 0.0}
	};
	int			threads = openblas_get_num_threads();
	unsigned long long s = 13;

	for (size_t i = 0; i < n * d; i++)
		X[i] = unit_urand(&s) - 0.5;
	for (size_t i = 0; i < n; i++)
		w[i] = unit_urand(&s) - 0.5;
	for (int t = 1; t <= 2; t++)
		for (int kk = 0; kk < 3; kk++)
		{
			double		worst_u = 0.0;
			double		worst_abs = 0.0;

			openblas_set_num_threads(t);
			km_row_norms(&kernels[kk], X, n, d, norms);
			CHECK(km_gram_times_norm(&kernels[kk], X, n, d, norms, w, u, colabs, B, NULL),
				  "finite");
			for (size_t i = 0; i < n; i += 7)
			{
				double		want = 0.0;
				double		want_abs = 0.0;

				for (size_t j = 0; j < n; j++)
				{
					double		kij = km_kernel_eval(&kernels[kk], X + i * d, X + j * d, d);

					want += w[j] * kij;
					want_abs += fabs(kij);
				}
				worst_u = fmax(worst_u, fabs(u[i] - want));
				worst_abs = fmax(worst_abs, fabs(colabs[i] - want_abs) / want_abs);
			}
			CHECK(worst_u < 1e-11, "threads %d kernel %d: K w differs by %g", t, kk, worst_u);
			CHECK(worst_abs < 1e-13, "threads %d kernel %d: column sums of |K| differ by %g (relative)",
				  t, kk, worst_abs);
		}
	openblas_set_num_threads(threads);
	free(X);
	free(w);
	free(u);
	free(colabs);
	free(norms);
	free(B);
}
