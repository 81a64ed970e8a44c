/*
 * test_solve.c - standardization, blocked Cholesky, ridge and LMS, checked
 * against direct LAPACK computations and the definitions.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "fit.h"
#include "solve.h"
#include "unit.h"

void		test_solve_standardize(void);
void		test_solve_cholesky_blocked(void);
void		test_solve_ridge_residual(void);
void		test_solve_jitter_and_not_pd(void);
void		test_solve_lms_recurrence(void);
void		test_solve_lms_reaches_ridge(void);

/* Full Gram matrix from the kernel's definition, column-major. */
static double *
gram_by_definition(const km_kernel *k, const double *X, size_t n, int d)
{
	double	   *K = malloc(n * n * sizeof(double));

	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
			K[i + j * n] = km_kernel_eval(k, X + i * d, X + j * d, d);
	return K;
}

void
test_solve_standardize(void)
{
	size_t		n = 50;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 3);
	double	   *out = malloc(n * d * sizeof(double));
	double		mean[3];
	double		scale[3];

	for (size_t i = 0; i < n; i++)
	{
		X[i * d + 1] = 100.0 + 7.0 * X[i * d + 1];
		X[i * d + 2] = 4.0;		/* constant column */
	}
	km_standardize(X, n, d, mean, scale, out);
	for (int j = 0; j < d; j++)
	{
		double		s = 0.0;
		double		ss = 0.0;

		for (size_t i = 0; i < n; i++)
		{
			s += out[i * d + j];
			ss += out[i * d + j] * out[i * d + j];
		}
		CHECK(fabs(s / n) < 1e-12, "column %d mean %g", j, s / n);
		if (j < 2)
			CHECK_CLOSE(ss / n, 1.0, 1e-12);
	}
	CHECK(scale[2] == 1.0 && mean[2] == 4.0, "constant column: mean %g scale %g",
		  mean[2], scale[2]);
	free(X);
	free(out);
}

void
test_solve_cholesky_blocked(void)
{
	/* beyond one 2048-wide trailing panel, so every code path runs */
	size_t		n = 2600;
	double	   *B = unit_rand_vec(n * 8, 11);
	double	   *A = malloc(n * n * sizeof(double));
	double	   *R = malloc(n * n * sizeof(double));
	double		worst = 0.0;
	double		big = 0.0;
	size_t		fail;

	/* A = B B^T + I, symmetric positive definite */
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
		{
			double		s = (i == j) ? 1.0 : 0.0;

			for (int c = 0; c < 8; c++)
				s += B[i * 8 + c] * B[j * 8 + c];
			A[i + j * n] = s;
		}
	memcpy(R, A, n * n * sizeof(double));
	CHECK(km_cholesky(A, n, n, NULL) == 0, "blocked Cholesky failed");
	CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (lapack_int) n, R, (lapack_int) n) == 0,
		  "dpotrf failed");
	for (size_t j = 0; j < n; j++)
		for (size_t i = j; i < n; i++)
		{
			worst = fmax(worst, fabs(A[i + j * n] - R[i + j * n]));
			big = fmax(big, fabs(R[i + j * n]));
		}
	CHECK(worst <= 1e-12 * big, "blocked vs dpotrf max difference %g (max %g)", worst, big);

	/* an indefinite matrix reports the first failing minor */
	memset(A, 0, n * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		A[i + i * n] = (i == 300) ? -1.0 : 1.0;
	fail = km_cholesky(A, n, n, NULL);
	CHECK(fail == 301, "failing minor %zu, expected 301", fail);
	free(A);
	free(R);
	free(B);
}

/* Fit ridge; return alpha (malloc'd), or NULL with err set. */
static double *
fit(const km_fit_params *p, const double *X, size_t n, int d, const double *y,
	km_fit_result *res, km_error *err)
{
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	km_status	st = km_fit(p, X, n, d, y, alpha, work, res, err, NULL);

	free(work);
	if (st != KM_OK)
	{
		free(alpha);
		return NULL;
	}
	return alpha;
}

void
test_solve_ridge_residual(void)
{
	size_t		n = 400;
	int			d = 4;
	double	   *X = unit_rand_vec(n * d, 5);
	double	   *y = unit_rand_vec(n, 6);
	km_fit_params p = {{KM_KERNEL_RBF, 0, 0.25, 0}, KM_METHOD_RIDGE, 0.1, 0, 0, 0};
	km_fit_result res;
	km_error	err;
	double	   *alpha = fit(&p, X, n, d, y, &res, &err);
	double	   *K = gram_by_definition(&p.kernel, X, n, d);
	double		worst = 0.0;
	double		sse = 0.0;

	CHECK(alpha != NULL, "fit failed: %s", err.detail);
	if (alpha == NULL)
		return;
	/* (K + lambda I) alpha = y */
	for (size_t i = 0; i < n; i++)
	{
		double		s = p.lambda * alpha[i];
		double		fitted = 0.0;

		for (size_t j = 0; j < n; j++)
		{
			s += K[i + j * n] * alpha[j];
			fitted += K[i + j * n] * alpha[j];
		}
		worst = fmax(worst, fabs(s - y[i]));
		sse += (y[i] - fitted) * (y[i] - fitted);
	}
	CHECK(worst <= 1e-10, "residual of the normal equations %g", worst);
	CHECK(res.jitter == 0.0, "no jitter expected, got %g", res.jitter);
	CHECK_CLOSE(res.train_rmse, sqrt(sse / n), 1e-9);
	free(alpha);
	free(K);
	free(X);
	free(y);
}

void
test_solve_jitter_and_not_pd(void)
{
	size_t		n = 60;
	int			d = 2;
	double	   *X = unit_rand_vec(n * d, 8);
	double	   *y = unit_rand_vec(n, 9);
	km_fit_params p = {{KM_KERNEL_LINEAR, 0, 0, 0}, KM_METHOD_RIDGE, 0.0, 0, 0, 0};
	km_fit_result res;
	km_error	err;
	double	   *alpha;

	/* a rank-2 linear Gram matrix with lambda 0 needs the jitter */
	alpha = fit(&p, X, n, d, y, &res, &err);
	CHECK(alpha != NULL, "jittered fit failed: %s", err.detail);
	CHECK(res.jitter > 0.0, "jitter %g", res.jitter);
	free(alpha);

	/* an indefinite sigmoid Gram matrix fails with a clear status */
	p.kernel.type = KM_KERNEL_SIGMOID;
	p.kernel.gamma = 20.0;
	p.kernel.coef0 = -1.0;
	alpha = fit(&p, X, n, d, y, &res, &err);
	CHECK(alpha == NULL && err.status == KM_ERR_NOT_PD, "status %d", (int) err.status);
	CHECK(strstr(err.detail, "jitter") != NULL, "detail: %s", err.detail);
	free(alpha);
	free(X);
	free(y);
}

void
test_solve_lms_recurrence(void)
{
	size_t		n = 40;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 12);
	double	   *y = unit_rand_vec(n, 13);
	km_fit_params p = {{KM_KERNEL_POLY, 2, 0.5, 1.0}, KM_METHOD_LMS, 0.0, 0.01, 5, 0.0};
	km_fit_result res;
	km_error	err;
	double	   *beta = fit(&p, X, n, d, y, &res, &err);
	double	   *K = gram_by_definition(&p.kernel, X, n, d);
	double	   *b = calloc(n, sizeof(double));
	double	   *r = malloc(n * sizeof(double));
	double		worst = 0.0;

	CHECK(beta != NULL, "lms failed: %s", err.detail);
	if (beta == NULL)
		return;
	for (int it = 0; it < 5; it++)
	{
		for (size_t i = 0; i < n; i++)
		{
			r[i] = y[i];
			for (size_t j = 0; j < n; j++)
				r[i] -= K[i + j * n] * b[j];
		}
		for (size_t i = 0; i < n; i++)
			b[i] += p.learning_rate * r[i];
	}
	for (size_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(beta[i] - b[i]) / fmax(1.0, fabs(b[i])));
	CHECK(worst <= 1e-12, "lms vs recurrence %g", worst);
	CHECK(res.iterations == 5 && !res.converged, "iterations %d converged %d",
		  res.iterations, (int) res.converged);
	free(beta);
	free(K);
	free(b);
	free(r);
	free(X);
	free(y);
}

void
test_solve_lms_reaches_ridge(void)
{
	size_t		n = 100;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 14);
	double	   *y = unit_rand_vec(n, 15);
	km_fit_params p = {{KM_KERNEL_RBF, 0, 0.5, 0}, KM_METHOD_RIDGE, 1.0, 0, 0, 0};
	km_fit_result res;
	km_error	err;
	double	   *alpha = fit(&p, X, n, d, y, &res, &err);
	double	   *beta;
	double		worst = 0.0;

	p.method = KM_METHOD_LMS;
	p.learning_rate = 0.0;		/* automatic */
	p.max_iter = 100000;
	p.tol = 1e-13;
	beta = fit(&p, X, n, d, y, &res, &err);
	CHECK(alpha && beta, "fits failed");
	if (!alpha || !beta)
		return;
	for (size_t i = 0; i < n; i++)
		worst = fmax(worst, fabs(alpha[i] - beta[i]));
	CHECK(worst <= 1e-9, "lms vs ridge coefficients %g after %d iterations",
		  worst, res.iterations);
	CHECK(res.converged && res.learning_rate > 0.0, "converged %d rate %g",
		  (int) res.converged, res.learning_rate);
	free(alpha);
	free(beta);
	free(X);
	free(y);
}
