/*
 * test_kpca.c - exact kernel PCA (src/core/methods/kpca.c) against
 * scikit-learn's KernelPCA (eigen_solver="dense") on standardized iris (rbf)
 * and a synthetic set (poly): eigenvalues, the trace of the centred Gram
 * matrix, the training rows' coordinates and new rows' within 1e-8, signs
 * included (both fix a component's largest coefficient positive); numbers
 * in fixtures/kpca_fixtures.h, written by test/unit/gen_kpca_fixtures.py.
 * Nystrom (the sums of z z' and z) with the training rows as centres equals
 * the exact fit within 1e-6, up to each component's sign.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "kernels.h"
#include "methods/kpca.h"
#include "unit.h"
#include "fixtures/kpca_fixtures.h"

void		test_kpca_iris(void);
void		test_kpca_synthetic(void);
void		test_kpca_errors(void);
void		test_kpca_nystrom(void);

static void
check_case(const km_kernel *kern, const double *X, size_t n, int d, int k,
		   const double *eig, double total, const double *fit,
		   const double *fit_transform, const double *Xnew, size_t nnew,
		   const double *transform)
{
	double	   *K = malloc(n * n * sizeof(double));
	double	   *work = malloc(km_kpca_workspace_doubles(n) * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *coef = malloc(n * (size_t) k * sizeof(double));
	double		intercept[8],
				eigenvalues[8],
				z[8],
				tr = 0;
	km_error	err;

	memset(&err, 0, sizeof(err));
	km_row_norms(kern, X, n, d, norms);
	CHECK(km_kpca_fit(kern, X, n, d, k, norms, K, work, coef, intercept,
					  eigenvalues, &tr, &err, NULL) == KM_OK, "%s", err.message);
	CHECK_CLOSE(tr, total, 1e-10);
	for (int j = 0; j < k; j++)
		CHECK_CLOSE(eigenvalues[j], eig[j], 1e-10);
	for (size_t i = 0; i < n; i++)
	{
		km_kpca_transform(kern, X, n, d, k, coef, intercept, X + i * d, z);
		for (int j = 0; j < k; j++)
		{
			CHECK_CLOSE(z[j], fit[i * k + j], 1e-8);
			CHECK_CLOSE(z[j], fit_transform[i * k + j], 1e-8);
		}
	}
	for (size_t i = 0; i < nnew; i++)
	{
		km_kpca_transform(kern, X, n, d, k, coef, intercept, Xnew + i * d, z);
		for (int j = 0; j < k; j++)
			CHECK_CLOSE(z[j], transform[i * k + j], 1e-8);
	}
	free(K);
	free(work);
	free(norms);
	free(coef);
}

void
test_kpca_iris(void)
{
	km_kernel	kern = {.type = KM_KERNEL_RBF, .gamma = 0.25};

	check_case(&kern, iris_x, IRIS_N, IRIS_D, IRIS_K, iris_eigenvalues,
			   iris_total[0], iris_fit, iris_fit_transform, iris_new, IRIS_NEW,
			   iris_transform);
}

void
test_kpca_synthetic(void)
{
	km_kernel	kern = {.type = KM_KERNEL_POLY, .degree = 2, .gamma = 0.5, .coef0 = 1};

	check_case(&kern, syn_x, SYN_N, SYN_D, SYN_K, syn_eigenvalues,
			   syn_total[0], syn_fit, syn_fit_transform, syn_new, SYN_NEW,
			   syn_transform);
}

/*
 * More components than rows is refused; a rank-1 set (3 equal rows and a
 * 4th, linear kernel) has one nonzero eigenvalue: the other components are
 * 0 with zero coefficients, never NaN.
 */
void
test_kpca_errors(void)
{
	km_kernel	kern = {.type = KM_KERNEL_LINEAR};
	double		X[8] = {1, 2, 1, 2, 1, 2, 3, 4};
	double		K[16],
				work[12],
				coef[12],
				intercept[3],
				eig[3],
				tr,
				z[3];
	km_error	err;

	memset(&err, 0, sizeof(err));
	CHECK(km_kpca_fit(&kern, X, 4, 2, 5, NULL, K, work, coef, intercept, eig,
					  &tr, &err, NULL) == KM_ERR_INVALID, "5 of 4 rows");
	CHECK(km_kpca_fit(&kern, X, 4, 2, 3, NULL, K, work, coef, intercept, eig,
					  &tr, &err, NULL) == KM_OK, "%s", err.message);
	/* centred rows: (-0.5,-0.5) x3, (1.5,1.5): one eigenvalue 6 */
	CHECK_CLOSE(eig[0], 6.0, 1e-12);
	CHECK(eig[1] == 0 && eig[2] == 0, "%g %g", eig[1], eig[2]);
	CHECK_CLOSE(tr, 6.0, 1e-12);
	km_kpca_transform(&kern, X, 4, 2, 3, coef, intercept, X + 6, z);
	/* the 4th row: sqrt(6) v_4, v_4 = 3 / sqrt(12) */
	CHECK_CLOSE(z[0], sqrt(6.0) * 3.0 / sqrt(12.0), 1e-12);
	CHECK(z[1] == 0 && z[2] == 0, "%g %g", z[1], z[2]);
}

/* z(x) = L^-1 k(x) with L L' = K of the centres C (m x d): Z Z' = K when the rows are C. */
static void
features(const km_kernel *kern, const double *C, uint32_t m, int d,
		 const double *L, const double *x, double *z)
{
	for (uint32_t i = 0; i < m; i++)
		z[i] = km_kernel_eval(kern, x, C + (size_t) i * d, d);
	cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, (int) m,
				L, (int) m, z, 1);
}

void
test_kpca_nystrom(void)
{
	enum {N = 30, D = 3, K = 4, NEW = 5};
	km_kernel	kern = {.type = KM_KERNEL_RBF, .gamma = 0.5};
	double	   *X = unit_rand_vec(N * D, 11);
	double	   *Xnew = unit_rand_vec(NEW * D, 12);
	double		L[N * N],
				Z[N * N],
				S[N * N],
				s[N],
				G[N * N],
				work[3 * N],
				coef[N * K],
				ucoef[N * K],
				b[K],
				ub[K],
				eig[K],
				ueig[K],
				tr,
				utr,
				z[N],
				e[K],
				a[K];
	int			sign[K] = {0};
	km_error	err;

	memset(&err, 0, sizeof(err));
	for (int i = 0; i < N * D; i++)
		X[i] *= 4;
	for (int i = 0; i < NEW * D; i++)
		Xnew[i] *= 4;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++)
			L[i + j * N] = km_kernel_eval(&kern, X + i * D, X + j * D, D);
	CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', N, L, N) == 0, "chol");
	for (int i = 0; i < N; i++)
		features(&kern, X, N, D, L, X + i * D, Z + i * N);
	memset(S, 0, sizeof(S));
	memset(s, 0, sizeof(s));
	/* two blocks: the sums add */
	km_kpca_sums_add(Z, 12, N, S, s);
	km_kpca_sums_add(Z + 12 * N, N - 12, N, S, s);
	CHECK(km_kpca_sums_fit(S, s, N, N, K, work, ucoef, ub, ueig, &utr, &err) == KM_OK,
		  "%s", err.message);
	km_row_norms(&kern, X, N, D, z);
	CHECK(km_kpca_fit(&kern, X, N, D, K, z, G, work, coef, b, eig, &tr, &err,
					  NULL) == KM_OK, "%s", err.message);
	CHECK_CLOSE(utr, tr, 1e-6);
	for (int j = 0; j < K; j++)
		CHECK_CLOSE(ueig[j], eig[j], 1e-6);
	for (int i = 0; i < NEW + N; i++)
	{
		const double *x = i < NEW ? Xnew + i * D : X + (i - NEW) * D;

		km_kpca_transform(&kern, X, N, D, K, coef, b, x, e);
		features(&kern, X, N, D, L, x, z);
		for (int j = 0; j < K; j++)
		{
			a[j] = ub[j];
			for (int t = 0; t < N; t++)
				a[j] += z[t] * ucoef[t + j * N];
		}
		for (int j = 0; j < K; j++)
		{
			/* each component's sign, from the first row where it is clear */
			if (sign[j] == 0 && fabs(e[j]) > 1e-3)
				sign[j] = (a[j] > 0) == (e[j] > 0) ? 1 : -1;
			CHECK(fabs(a[j] - (sign[j] < 0 ? -1 : 1) * e[j]) <= 1e-6,
				  "row %d component %d: %.17g vs %.17g", i, j, a[j], e[j]);
		}
	}
	for (int j = 0; j < K; j++)
		CHECK(sign[j] != 0, "component %d never clear", j);
	free(X);
	free(Xnew);
}
