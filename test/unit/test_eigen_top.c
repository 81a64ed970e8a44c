/*
 * test_eigen_top.c - km_eigen_top (src/core/eigen.c), the top k eigenpairs
 * by thick-restart block Lanczos, against LAPACK's dsyevr on random PSD
 * matrices, matrices with clustered and repeated eigenvalues and centred
 * kernel matrices, k = 1, 2, 16.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "kernels.h"
#include "unit.h"

void		test_eigen_top_random_psd(void);
void		test_eigen_top_clustered(void);
void		test_eigen_top_kernel(void);
void		test_eigen_top_edges(void);

#define TOP_TOL 1e-11

static int	interrupts;

static void
count_interrupt(void)
{
	interrupts++;
}

/* The top k eigenpairs of A (n x n, full, untouched) by dsyevr, descending. */
static void
dsyevr_top(const double *A, size_t n, int k, double *w, double *Z)
{
	double	   *C = malloc(n * n * sizeof(double));
	double	   *ev = malloc(n * sizeof(double));
	double	   *Zc = malloc(n * (size_t) k * sizeof(double));
	lapack_int *isuppz = malloc(2 * n * sizeof(lapack_int));
	lapack_int	found = 0;
	lapack_int	info;

	memcpy(C, A, n * n * sizeof(double));
	info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', (lapack_int) n, C,
						  (lapack_int) n, 0, 0, (lapack_int) n - k + 1,
						  (lapack_int) n, 0, &found, ev, Zc, (lapack_int) n, isuppz);
	CHECK(info == 0 && found == k, "dsyevr returned %d, found %d", (int) info, (int) found);
	for (int j = 0; j < k; j++)
	{
		w[j] = ev[k - 1 - j];
		memcpy(Z + (size_t) j * n, Zc + (size_t) (k - 1 - j) * n, n * sizeof(double));
	}
	free(C);
	free(ev);
	free(Zc);
	free(isuppz);
}

/*
 * km_eigen_top on A against dsyevr: eigenvalues within 1e-10 of the top
 * one, each residual ||A v - theta v|| <= 1e-10 theta_1 (recomputed here),
 * V orthonormal, and, where the eigenvalue is simple (gap above
 * 1e-3 theta_1 on both sides), the vector within 1e-8 up to sign;
 * otherwise within 1e-8 of the span of dsyevr's vectors of that cluster (of
 * the top k + 8), unless its eigenvalue is 0 (any vector of the null space).
 */
static void
check_top(const double *A, size_t n, int k, const char *what)
{
	int			kk = k + 8;		/* dsyevr's: beyond k, for clusters that k cuts */
	double	   *w = malloc((size_t) kk * sizeof(double));
	double	   *Z = malloc(n * (size_t) kk * sizeof(double));
	double	   *theta = malloc((size_t) k * sizeof(double));
	double	   *V = malloc(n * (size_t) k * sizeof(double));
	double	   *AV = malloc(n * (size_t) k * sizeof(double));
	double	   *work = malloc(km_eigen_top_doubles(n, k) * sizeof(double));
	int			passes = 0;
	bool		ok;
	double		top;

	dsyevr_top(A, n, kk, w, Z);
	top = fabs(w[0]);
	interrupts = 0;
	ok = km_eigen_top(A, n, k, TOP_TOL, 200, theta, V, work, &passes, count_interrupt);
	CHECK(ok, "%s k %d: not converged in %d passes", what, k, passes);
	CHECK(interrupts > passes, "%s k %d: %d interrupt checks in %d passes", what, k, interrupts, passes);
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, k, (int) n,
				1.0, A, (int) n, V, (int) n, 0.0, AV, (int) n);
	for (int j = 0; j < k; j++)
	{
		double	   *v = V + (size_t) j * n;
		double		r = 0;
		bool		simple;

		CHECK(fabs(theta[j] - w[j]) <= 1e-10 * top, "%s k %d: theta %d %.17g vs dsyevr %.17g",
			  what, k, j, theta[j], w[j]);
		for (size_t i = 0; i < n; i++)
			r += (AV[i + j * n] - theta[j] * v[i]) * (AV[i + j * n] - theta[j] * v[i]);
		CHECK(sqrt(r) <= 1e-10 * top, "%s k %d: residual %d %.3g", what, k, j, sqrt(r) / top);
		for (int e = 0; e <= j; e++)
		{
			double		dot = cblas_ddot((int) n, V + (size_t) e * n, 1, v, 1);

			CHECK(fabs(dot - (e == j ? 1.0 : 0.0)) <= 1e-12, "%s k %d: v%d.v%d = %.17g", what, k, e, j, dot);
		}
		simple = (j == 0 || w[j - 1] - w[j] > 1e-3 * top) && w[j] - w[j + 1] > 1e-3 * top;
		if (simple)
		{
			double		dot = cblas_ddot((int) n, Z + (size_t) j * n, 1, v, 1);
			double		s = dot < 0 ? -1.0 : 1.0;
			double		diff = 0;

			for (size_t i = 0; i < n; i++)
				diff = fmax(diff, fabs(v[i] - s * Z[i + j * n]));
			CHECK(diff <= 1e-8, "%s k %d: vector %d differs by %.3g", what, k, j, diff);
		}
		else if (fabs(w[j]) > 1e-10 * top)
		{
			/* v less its projection on dsyevr's vectors of eigenvalues near theta_j */
			double	   *p = malloc(n * sizeof(double));
			double		out = 0;

			memcpy(p, v, n * sizeof(double));
			for (int e = 0; e < kk; e++)
				if (fabs(w[e] - w[j]) <= 1e-3 * top)
					cblas_daxpy((int) n, -cblas_ddot((int) n, Z + (size_t) e * n, 1, v, 1),
								Z + (size_t) e * n, 1, p, 1);
			for (size_t i = 0; i < n; i++)
				out = fmax(out, fabs(p[i]));
			CHECK(out <= 1e-8, "%s k %d: vector %d is %.3g outside its cluster", what, k, j, out);
			free(p);
		}
	}
	free(w);
	free(Z);
	free(theta);
	free(V);
	free(AV);
	free(work);
}

/* A = B B' / m for a random n x m B: a random PSD matrix (Wishart) */
static double *
random_psd(size_t n, size_t m, unsigned long long seed)
{
	double	   *B = unit_rand_vec(n * m, seed);
	double	   *A = malloc(n * n * sizeof(double));

	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) n, (int) n, (int) m,
				1.0 / (double) m, B, (int) n, B, (int) n, 0.0, A, (int) n);
	free(B);
	return A;
}

/* A = Q diag(lambda) Q' with Q a random orthogonal matrix (QR of a random one) */
static double *
with_spectrum(size_t n, const double *lambda, unsigned long long seed)
{
	double	   *Q = unit_rand_vec(n * n, seed);
	double	   *tau = malloc(n * sizeof(double));
	double	   *QL = malloc(n * n * sizeof(double));
	double	   *A = malloc(n * n * sizeof(double));

	LAPACKE_dgeqrf(LAPACK_COL_MAJOR, (int) n, (int) n, Q, (int) n, tau);
	LAPACKE_dorgqr(LAPACK_COL_MAJOR, (int) n, (int) n, (int) n, Q, (int) n, tau);
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
			QL[i + j * n] = Q[i + j * n] * lambda[j];
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) n, (int) n, (int) n,
				1.0, QL, (int) n, Q, (int) n, 0.0, A, (int) n);
	for (size_t j = 0; j < n; j++)	/* exactly symmetric */
		for (size_t i = j + 1; i < n; i++)
			A[j + i * n] = A[i + j * n];
	free(Q);
	free(tau);
	free(QL);
	return A;
}

void
test_eigen_top_random_psd(void)
{
	size_t		n = 400;
	int			ks[] = {1, 2, 16};

	for (int t = 0; t < 3; t++)
	{
		double	   *A = random_psd(n, 1000, 11 + (unsigned long long) t);

		check_top(A, n, ks[t], "wishart");
		free(A);
	}
}

void
test_eigen_top_clustered(void)
{
	size_t		n = 400;
	double	   *lambda = malloc(n * sizeof(double));
	int			ks[] = {1, 2, 16};

	/*
	 * A triple eigenvalue on top, a pair 1e-9 apart, a cluster of 20 within
	 * 1e-6, then a slow decay, the rest 0: the k = 2 and k = 16 cuts fall
	 * inside clusters.
	 */
	for (size_t i = 0; i < n; i++)
	{
		if (i < 3)
			lambda[i] = 10.0;
		else if (i < 5)
			lambda[i] = 9.0 - 1e-9 * (double) (i - 3);
		else if (i < 25)
			lambda[i] = 8.0 - 5e-8 * (double) (i - 5);
		else if (i < 200)
			lambda[i] = 7.0 * pow(0.97, (double) (i - 25));
		else
			lambda[i] = 0.0;
	}
	for (int t = 0; t < 3; t++)
	{
		double	   *A = with_spectrum(n, lambda, 21 + (unsigned long long) t);

		check_top(A, n, ks[t], "clustered");
		free(A);
	}
	free(lambda);
}

/* The centred rbf Gram matrix of n rows of X (n x d): Kc = H K H. */
static double *
centred_gram(const double *X, size_t n, int d, double gamma)
{
	km_kernel	kern = {.type = KM_KERNEL_RBF, .gamma = gamma};
	double	   *K = unit_full_gram(&kern, X, n, d);
	double	   *m = calloc(n, sizeof(double));
	double		M = 0;

	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
			m[j] += K[i + j * n] / (double) n;
	for (size_t i = 0; i < n; i++)
		M += m[i] / (double) n;
	for (size_t j = 0; j < n; j++)
		for (size_t i = 0; i < n; i++)
			K[i + j * n] += M - m[i] - m[j];
	free(m);
	return K;
}

void
test_eigen_top_kernel(void)
{
	size_t		n = 400;
	int			d = 3;
	int			ks[] = {1, 2, 16};
	double	   *X = unit_rand_vec(n * (size_t) d, 31);
	double	   *Xr = malloc(n * (size_t) d * sizeof(double));

	/* rows of uniform noise, then 8 clusters of 50 rows repeated exactly: rank 8 */
	for (int t = 0; t < 3; t++)
	{
		double	   *K = centred_gram(X, n, d, 2.0);

		check_top(K, n, ks[t], "rbf");
		free(K);
	}
	for (size_t i = 0; i < n; i++)
		memcpy(Xr + i * d, X + (i % 8) * d, d * sizeof(double));
	for (int t = 0; t < 3; t++)
	{
		double	   *K = centred_gram(Xr, n, d, 2.0);

		check_top(K, n, ks[t], "rbf of 8 distinct rows");
		free(K);
	}
	free(X);
	free(Xr);
}

void
test_eigen_top_edges(void)
{
	size_t		n = 400;
	int			k = 2;
	double	   *A = random_psd(n, 50, 41);
	double	   *work = malloc(km_eigen_top_doubles(n, k) * sizeof(double));
	double	   *V1 = malloc(n * 2 * sizeof(double));
	double	   *V2 = malloc(n * 2 * sizeof(double));
	double		t1[2],
				t2[2];
	int			p1 = 0,
				p2 = 0;

	/* deterministic: the same bits twice */
	CHECK(km_eigen_top(A, n, k, TOP_TOL, 200, t1, V1, work, &p1, NULL), "not converged");
	memset(work, 0xff, km_eigen_top_doubles(n, k) * sizeof(double));
	CHECK(km_eigen_top(A, n, k, TOP_TOL, 200, t2, V2, work, &p2, NULL), "not converged");
	CHECK(p1 == p2 && memcmp(t1, t2, sizeof(t1)) == 0 && memcmp(V1, V2, n * 2 * sizeof(double)) == 0,
		  "two runs differ (%d and %d passes)", p1, p2);
	/* a bound it cannot meet: false, for the caller's dsyevr */
	CHECK(!km_eigen_top(A, n, k, 1e-30, 3, t1, V1, work, &p1, NULL) && p1 == 3,
		  "tolerance 1e-30 met in %d passes", p1);
	/* too few rows for its basis */
	CHECK(!km_eigen_top(A, 2 * km_eigen_top_basis(k) - 1, k, TOP_TOL, 200, t1, V1, work, &p1, NULL),
		  "ran on fewer rows than twice its basis");
	/* the zero matrix: eigenvalues 0, orthonormal vectors */
	memset(A, 0, n * n * sizeof(double));
	CHECK(km_eigen_top(A, n, k, TOP_TOL, 200, t1, V1, work, &p1, NULL) && t1[0] == 0 && t1[1] == 0,
		  "zero matrix: %g %g", t1[0], t1[1]);
	CHECK(fabs(cblas_dnrm2((int) n, V1, 1) - 1) < 1e-12, "zero matrix: |v| %g", cblas_dnrm2((int) n, V1, 1));
	free(A);
	free(work);
	free(V1);
	free(V2);
}
