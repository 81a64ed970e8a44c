/*
 * test_eigen.c - the interruptible eigensolver pieces (src/core/base/eigen.c) and
 * their users against LAPACKE_dsyevd.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "diagnostics.h"
#include "eigen.h"
#include "select.h"
#include "unit.h"

void		test_eigen_tridiagonal_matches_dsyevd(void);
void		test_eigen_spectrum_matches_dsyevd(void);
void		test_eigen_closed_form_matches_dsyevd(void);

static int	checks;

static void
count_check(void)
{
	checks++;
}

/* Eigenvalues (and vectors in K if jobz 'V') by dsyevd. */
static double *
dsyevd(double *K, size_t n, char jobz)
{
	double	   *w = malloc(n * sizeof(double));
	lapack_int	info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, jobz, 'L', (lapack_int) n,
									  K, (lapack_int) n, w);

	CHECK(info == 0, "dsyevd returned %d", (int) info);
	return w;
}

/* One matrix, every panel width path: K = H T H^T, H orthogonal, eigenvalues. */
static void
check_tridiagonal(const double *K, size_t n, int nb)
{
	double	   *A = malloc(n * n * sizeof(double));
	double	   *H = calloc(n * n, sizeof(double));
	double	   *T = calloc(n * n, sizeof(double));
	double	   *R = malloc(n * n * sizeof(double));
	double	   *d = malloc(n * sizeof(double));
	double	   *e = malloc(n * sizeof(double));
	double	   *tau = malloc(n * sizeof(double));
	double	   *W = malloc((n * KM_TRD_MAX_NB + km_back_transform_doubles(n)) * sizeof(double));
	double	   *ework = malloc(5 * n * sizeof(double));
	int		   *iwork = malloc(5 * n * sizeof(int));
	double	   *Kc = malloc(n * n * sizeof(double));
	double	   *w;
	double		top;
	double		knorm = 0.0;
	double		err = 0.0;
	double		orth = 0.0;

	memcpy(A, K, n * n * sizeof(double));
	checks = 0;
	km_tridiagonalize(A, n, nb, d, e, tau, W, count_check);
	CHECK(checks >= (n > 64 ? 2 : 1), "%d interrupt checks for n = %zu, nb = %d", checks, n, nb);
	for (size_t i = 0; i < n; i++)
		H[i + i * n] = 1.0;
	km_back_transform(A, n, tau, H, W, count_check);

	/* R = H T H^T - K */
	for (size_t i = 0; i < n; i++)
	{
		T[i + i * n] = d[i];
		if (i + 1 < n)
			T[(i + 1) + i * n] = T[i + (i + 1) * n] = e[i];
	}
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) n,
				(int) n, 1.0, H, (int) n, T, (int) n, 0.0, R, (int) n);
	memcpy(A, K, n * n * sizeof(double));
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) n, (int) n,
				(int) n, 1.0, R, (int) n, H, (int) n, -1.0, A, (int) n);
	for (size_t i = 0; i < n * n; i++)
	{
		err = fmax(err, fabs(A[i]));
		knorm = fmax(knorm, fabs(K[i]));
	}
	CHECK(err <= 1e-12 * (double) n * knorm, "|H T H^T - K| = %g (|K| = %g), n = %zu, nb = %d",
		  err, knorm, n, nb);
	/* H^T H = I */
	cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) n, (int) n,
				(int) n, 1.0, H, (int) n, H, (int) n, 0.0, R, (int) n);
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
			orth = fmax(orth, fabs(R[i + j * n] - (i == j ? 1.0 : 0.0)));
	CHECK(orth <= 1e-12, "|H^T H - I| = %g, n = %zu, nb = %d", orth, n, nb);

	/* extremes by bisection and counts by Sturm sequences, against dsyevd */
	memcpy(Kc, K, n * n * sizeof(double));
	w = dsyevd(Kc, n, 'N');
	top = fmax(fabs(w[0]), fabs(w[n - 1]));
	CHECK_CLOSE(km_tridiag_eigenvalue(d, e, n, 0, ework, iwork) / top, w[0] / top, 1e-13);
	CHECK_CLOSE(km_tridiag_eigenvalue(d, e, n, n - 1, ework, iwork) / top, w[n - 1] / top, 1e-13);
	CHECK_CLOSE(km_tridiag_eigenvalue(d, e, n, n / 2, ework, iwork) / top, w[n / 2] / top, 1e-13);
	for (size_t k = 1; k < n; k += n / 7)
	{
		/* halfway between two eigenvalues that rounding cannot swap */
		double		x = 0.5 * (w[k - 1] + w[k]);

		if (w[k] - w[k - 1] > 1e-10 * top)
			CHECK(km_tridiag_count_below(d, e, n, x) == k,
				  "%zu eigenvalues below %g, dsyevd has %zu", km_tridiag_count_below(d, e, n, x), x, k);
	}
	free(A);
	free(H);
	free(T);
	free(R);
	free(d);
	free(e);
	free(tau);
	free(W);
	free(ework);
	free(iwork);
	free(Kc);
	free(w);
}

void
test_eigen_tridiagonal_matches_dsyevd(void)
{
	size_t		n = 301;
	int			d = 4;
	double	   *X = unit_rand_vec(n * d, 31);
	km_kernel	rbf = {.type = KM_KERNEL_RBF, .gamma = 0.5};
	double	   *K = unit_full_gram(&rbf, X, n, d);
	double	   *Xw = unit_rand_vec(n * 400, 32);
	km_kernel	lin = {.type = KM_KERNEL_LINEAR};
	double	   *Kl = unit_full_gram(&lin, Xw, n, 400);

	/* blocked with the widest panel, narrow panels, one column, unblocked */
	check_tridiagonal(K, n, 32);
	check_tridiagonal(K, n, 5);
	check_tridiagonal(K, n, 1);
	{
		double	   *Ks = unit_full_gram(&rbf, X, 50, d);

		check_tridiagonal(Ks, 50, 0);
		free(Ks);
	}
	/* a linear kernel of more features than rows: no tiny eigenvalues */
	check_tridiagonal(Kl, n, 7);
	free(X);
	free(K);
	free(Xw);
	free(Kl);
}

void
test_eigen_spectrum_matches_dsyevd(void)
{
	size_t		n = 257;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 41);
	km_kernel	k = {.type = KM_KERNEL_RBF, .gamma = 2.0};
	double	   *work = malloc(km_spectrum_workspace_doubles(n) * sizeof(double));
	double	   *K = unit_full_gram(&k, X, n, d);
	double	   *w = dsyevd(K, n, 'N');
	double		top = fmax(fabs(w[0]), fabs(w[n - 1]));
	double		tol = top * (double) n * DBL_EPSILON;
	size_t		rank = 0;
	km_spectrum sp;
	km_error	err;

	for (size_t i = 0; i < n; i++)
		if (w[i] > tol)
			rank++;
	CHECK(km_gram_spectrum(&k, X, n, d, work, &sp, &err, NULL) == KM_OK, "%s", err.message);
	CHECK_CLOSE(sp.max_eigenvalue, w[n - 1], 1e-12);
	CHECK(fabs(sp.min_eigenvalue - w[0]) <= 1e-13 * top, "min %g vs dsyevd %g", sp.min_eigenvalue, w[0]);
	CHECK_CLOSE(sp.tolerance, tol, 1e-12);
	CHECK(sp.rank == rank, "rank %zu, dsyevd %zu", sp.rank, rank);
	free(X);
	free(work);
	free(K);
	free(w);
}

/* LOO and GCV of the closed-form route against the eigendecomposition formulas. */
void
test_eigen_closed_form_matches_dsyevd(void)
{
	size_t		n = 203;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 51);
	double	   *y = unit_rand_vec(n, 52);
	double		gamma = 0.8;
	double		lambdas[KM_EIGEN_MIN_LAMBDAS];
	km_kernel	k = {.type = KM_KERNEL_RBF, .gamma = gamma};
	double	   *Q = unit_full_gram(&k, X, n, d);
	double	   *s = dsyevd(Q, n, 'V');
	double	   *z = malloc(n * sizeof(double));
	km_candidate cand[KM_EIGEN_MIN_LAMBDAS];
	double	   *res = malloc(n * KM_EIGEN_MIN_LAMBDAS * sizeof(double));
	int			best;
	km_error	err;

	for (int l = 0; l < KM_EIGEN_MIN_LAMBDAS; l++)
		lambdas[l] = pow(10.0, -4.0 + 0.5 * l);
	cblas_dgemv(CblasColMajor, CblasTrans, (int) n, (int) n, 1.0, Q, (int) n,
				y, 1, 0.0, z, 1);
	for (int cv = KM_CV_LOO; cv <= KM_CV_GCV; cv++)
	{
		km_select_params p = {0};
		double	   *work;

		p.base.kernel = k;
		p.base.method = KM_METHOD_RIDGE;
		p.gammas = &gamma;
		p.n_gammas = 1;
		p.lambdas = lambdas;
		p.n_lambdas = KM_EIGEN_MIN_LAMBDAS;
		p.cv = (km_cv) cv;
		p.loo_residuals = cv == KM_CV_LOO ? res : NULL;
		work = malloc(km_select_workspace_doubles(&p, n, d) * sizeof(double));
		CHECK(km_select(&p, X, n, d, y, NULL, cand, &best, work, &err, NULL) == KM_OK,
			  "%s", err.message);
		for (int l = 0; l < KM_EIGEN_MIN_LAMBDAS; l++)
		{
			double		lam = lambdas[l];
			double		sum = 0.0;
			double		trace = 0.0;
			double		cnorm = 0.0;

			for (size_t i = 0; i < n; i++)
			{
				double		ci = 0.0;
				double		hi = 0.0;

				for (size_t q = 0; q < n; q++)
				{
					ci += Q[i + q * n] * z[q] / (s[q] + lam);
					hi += Q[i + q * n] * Q[i + q * n] / (s[q] + lam);
				}
				cnorm += ci * ci;
				trace += hi;
				sum += (ci / hi) * (ci / hi);
				if (cv == KM_CV_LOO)
					CHECK_CLOSE(res[i + l * n], ci / hi, 1e-8);
			}
			CHECK_CLOSE(cand[l].score,
						cv == KM_CV_LOO ? sum / (double) n :
						(double) n * cnorm / (trace * trace), 1e-9);
		}
		free(work);
	}
	free(X);
	free(y);
	free(Q);
	free(s);
	free(z);
	free(res);
}
