/*
 * test_kernels.c - kernel definitions, Gram matrices and kernel rows.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lapacke.h>

#include "kernels.h"
#include "unit.h"

/* Deterministic uniform numbers in [lo, hi). */
static double
urand(unsigned long long *s, double lo, double hi)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return lo + (hi - lo) * (double) (*s >> 11) / 9007199254740992.0;
}

static double *
random_matrix(size_t n, int d, double lo, double hi, unsigned long long seed)
{
	double	   *X = malloc(n * d * sizeof(double));

	for (size_t i = 0; i < n * (size_t) d; i++)
		X[i] = urand(&seed, lo, hi);
	return X;
}

static const km_kernel all_kernels[] = {
	{KM_KERNEL_LINEAR, 0, 0, 0},
	{KM_KERNEL_POLY, 3, 0.2, 1.0},
	{KM_KERNEL_RBF, 0, 0.2, 0},
	{KM_KERNEL_LAPLACIAN, 0, 0.2, 0},
	{KM_KERNEL_SIGMOID, 0, 0.05, 0.5},
	{KM_KERNEL_COSINE, 0, 0, 0},
	{KM_KERNEL_MIN, 0, 0, 0},
	{KM_KERNEL_POLYSUM, 3, 0, 0},
};
#define N_ALL (sizeof(all_kernels) / sizeof(all_kernels[0]))

void		test_kernels_definitions(void);
void		test_kernels_gram_matches_eval(void);
void		test_kernels_polysum_feature_map(void);
void		test_kernels_psd(void);
void		test_kernels_parameter_rule(void);

void
test_kernels_definitions(void)
{
	const double x[2] = {1, 2};
	const double z[2] = {3, 4};
	km_kernel	k = {KM_KERNEL_LINEAR, 2, 0.5, 1.0};
	km_kernel_type t;

	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), 11.0, 1e-15);
	k.type = KM_KERNEL_POLY;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), 42.25, 1e-15);
	k.type = KM_KERNEL_RBF;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), exp(-4.0), 1e-15);
	k.type = KM_KERNEL_LAPLACIAN;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), exp(-2.0), 1e-15);
	k.type = KM_KERNEL_SIGMOID;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), tanh(6.5), 1e-15);
	k.type = KM_KERNEL_COSINE;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), 11.0 / (sqrt(5.0) * 5.0), 1e-15);
	k.type = KM_KERNEL_MIN;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), 3.0, 1e-15);
	k.type = KM_KERNEL_POLYSUM;
	k.degree = 3;
	CHECK_CLOSE(km_kernel_eval(&k, x, z, 2), 1.0 + 11 + 121 + 1331, 1e-15);

	/* cosine of a zero vector is 0, as in scikit-learn */
	{
		const double zero[2] = {0, 0};

		k.type = KM_KERNEL_COSINE;
		CHECK(km_kernel_eval(&k, zero, z, 2) == 0.0, "cosine with zero vector");
	}

	for (int i = KM_KERNEL_FIRST; i <= KM_KERNEL_LAST; i++)
		CHECK(km_kernel_from_name(km_kernel_name(i), &t) && (int) t == i,
			  "name round trip of kernel %d", i);
	CHECK(!km_kernel_from_name("gaussian", &t), "unknown name accepted");
}

void
test_kernels_gram_matches_eval(void)
{
	/* 300 rows: two Gram panels, the second partial */
	size_t		n = 300;
	int			d = 5;
	double	   *X = random_matrix(n, d, -1.5, 2.0, 42);
	double	   *K = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *Xt = malloc(n * d * sizeof(double));
	double	   *w = random_matrix(n, 1, -1.0, 1.0, 43);
	double	   *work = malloc(n * sizeof(double));

	for (size_t t = 0; t < N_ALL; t++)
	{
		const km_kernel *k = &all_kernels[t];
		double		worst = 0.0;
		double		got;
		double		want = 0.0;

		km_row_norms(k, X, n, d, norms);
		km_gram_lower(k, X, n, d, norms, K, n, NULL);
		for (size_t j = 0; j < n; j++)
			for (size_t i = j; i < n; i++)
			{
				double		e = km_kernel_eval(k, X + i * d, X + j * d, d);
				double		err = fabs(K[i + j * n] - e) / fmax(1.0, fabs(e));

				worst = fmax(worst, err);
			}
		CHECK(worst <= 1e-12, "kernel %s: Gram vs eval error %g",
			  km_kernel_name(k->type), worst);

		/* prediction path: sum_i w_i K(X_i, x), rows stored feature-major */
		km_transpose(X, n, d, Xt);
		got = km_kernel_row_dot(k, Xt, n, d, norms, X + 7 * d,
								km_vector_norm(k, X + 7 * d, d), w, work);
		for (size_t i = 0; i < n; i++)
			want += w[i] * km_kernel_eval(k, X + i * d, X + 7 * d, d);
		CHECK(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want)),
			  "kernel %s: weighted row %.17g vs eval %.17g",
			  km_kernel_name(k->type), got, want);
	}

	/* symmetrize mirrors the lower triangle */
	km_symmetrize(K, n, n, NULL);
	CHECK(K[3 + 250 * n] == K[250 + 3 * n], "symmetrize");
	free(X);
	free(K);
	free(norms);
	free(Xt);
	free(w);
	free(work);
}

/* The cubic feature map: 1, x, all x_i x_j, all x_i x_j x_k. */
static int
cubic_features(const double *x, int d, double *phi)
{
	int			m = 0;

	phi[m++] = 1.0;
	for (int i = 0; i < d; i++)
		phi[m++] = x[i];
	for (int i = 0; i < d; i++)
		for (int j = 0; j < d; j++)
			phi[m++] = x[i] * x[j];
	for (int i = 0; i < d; i++)
		for (int j = 0; j < d; j++)
			for (int k = 0; k < d; k++)
				phi[m++] = x[i] * x[j] * x[k];
	return m;
}

void
test_kernels_polysum_feature_map(void)
{
	int			d = 4;
	double	   *X = random_matrix(20, d, -1.0, 1.0, 7);
	km_kernel	k = {KM_KERNEL_POLYSUM, 3, 0, 0};
	double		px[1 + 4 + 16 + 64];
	double		pz[1 + 4 + 16 + 64];

	for (int a = 0; a < 20; a++)
		for (int b = 0; b < 20; b++)
		{
			int			m = cubic_features(X + a * d, d, px);
			double		ip = 0.0;

			cubic_features(X + b * d, d, pz);
			CHECK(m == 1 + d + d * d + d * d * d, "feature count %d", m);
			for (int i = 0; i < m; i++)
				ip += px[i] * pz[i];
			CHECK_CLOSE(km_kernel_eval(&k, X + a * d, X + b * d, d), ip, 1e-13);
		}
	free(X);
}

/* Smallest and largest eigenvalue of the full Gram matrix. */
static void
gram_extreme_eigenvalues(const km_kernel *k, const double *X, size_t n, int d,
						 double *lo, double *hi)
{
	double	   *K = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *w = malloc(n * sizeof(double));

	km_row_norms(k, X, n, d, norms);
	km_gram_lower(k, X, n, d, norms, K, n, NULL);
	LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', (lapack_int) n, K, (lapack_int) n, w);
	*lo = w[0];
	*hi = w[n - 1];
	free(K);
	free(norms);
	free(w);
}

void
test_kernels_psd(void)
{
	size_t		n = 120;
	int			d = 3;
	double	   *X = random_matrix(n, d, -1.0, 1.0, 99);
	double	   *P = random_matrix(n, d, 0.0, 2.0, 100);
	double		lo;
	double		hi;

	for (size_t t = 0; t < N_ALL; t++)
	{
		const km_kernel *k = &all_kernels[t];

		if (k->type == KM_KERNEL_SIGMOID)
			continue;
		/* min is PSD on non-negative data only */
		gram_extreme_eigenvalues(k, k->type == KM_KERNEL_MIN ? P : X, n, d,
								 &lo, &hi);
		CHECK(lo >= -1e-10 * hi, "kernel %s: smallest eigenvalue %g (largest %g)",
			  km_kernel_name(k->type), lo, hi);
	}

	/* sigmoid with a large gamma and negative coef0 is not PSD */
	{
		km_kernel	s = {KM_KERNEL_SIGMOID, 0, 2.0, -1.0};

		gram_extreme_eigenvalues(&s, X, n, d, &lo, &hi);
		CHECK(lo < -1e-3 * hi, "sigmoid smallest eigenvalue %g", lo);
	}
	free(X);
	free(P);
}

/*
 * The one rule every reader of stored bytes applies to a kernel (a crafted
 * pass point with a polysum degree of 2^24 once took a minute a block).
 */
void
test_kernels_parameter_rule(void)
{
	km_kernel	ok = {KM_KERNEL_POLYSUM, KM_MAX_DEGREE, 0.5, 1.0};
	km_kernel	k;

	CHECK(km_kernel_invalid(&ok) == NULL, "polysum of degree %d", KM_MAX_DEGREE);
	k = ok;
	k.degree = KM_MAX_DEGREE + 1;
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "degree") == 0, "degree 101");
	k.degree = 1 << 24;
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "degree") == 0, "degree 2^24");
	k.degree = 0;
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "degree") == 0, "degree 0");
	k = ok;
	k.coef0 = INFINITY;
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "coef0") == 0, "coef0 inf");
	k = (km_kernel) {KM_KERNEL_RBF, 0, 0.0, 0.0};
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "gamma") == 0, "rbf gamma 0");
	k.gamma = NAN;
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "gamma") == 0, "rbf gamma nan");
	/* a kernel without a degree or gamma ignores them (finite) */
	k = (km_kernel) {KM_KERNEL_LINEAR, 1 << 24, 0.0, 0.0};
	CHECK(km_kernel_invalid(&k) == NULL, "linear ignores degree and gamma");
	k.type = (km_kernel_type) (KM_KERNEL_LAST + 1);
	CHECK(km_kernel_invalid(&k) && strcmp(km_kernel_invalid(&k), "kernel") == 0, "unknown type");
}
