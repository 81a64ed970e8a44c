/*
 * test_centres.c - centres.h: leverage scores against NumPy
 * (test/unit/gen_centres_fixtures.py -> fixtures/centres_data.h), the
 * leverage sample and Lloyd's sums the same however the rows are split
 * and combined, Lloyd's empty clusters, the names.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "centres.h"
#include "unit.h"

#include "fixtures/centres_data.h"

static const km_kernel rbf = {KM_KERNEL_RBF, 3, FXC_GAMMA, 1.0};

/* Z (rows x m) := k(x_i, s_j) */
static void
cross(const double *X, size_t rows, const double *S, uint32_t m, double *Z)
{
	for (size_t i = 0; i < rows; i++)
		for (uint32_t j = 0; j < m; j++)
			Z[i * m + j] = km_kernel_eval(&rbf, X + i * FXC_D, S + (size_t) j * FXC_D, FXC_D);
}

/*
 * Every fixture row's k_i against the sketch (its first FXC_M rows), squared
 * in the sketch's eigenbasis (P, FXC_N x FXC_M), k(x, x) (kii) and the
 * eigenvalues (s); in two blocks, as a pass hands them.
 */
static void
project(double *P, double *kii, double *s)
{
	double	   *K = malloc(sizeof(double) * FXC_M * FXC_M);
	double	   *U = malloc(sizeof(double) * FXC_M * FXC_M);
	double	   *Z = malloc(sizeof(double) * FXC_N * FXC_M);
	double	   *work = malloc(sizeof(double) * km_leverage_eigen_doubles(FXC_M));
	int		   *iwork = malloc(sizeof(int) * km_leverage_eigen_ints(FXC_M));
	km_error	err;

	memset(&err, 0, sizeof(err));
	cross(fxc_X, FXC_M, fxc_X, FXC_M, K);
	CHECK(km_leverage_eigen(K, FXC_M, FXC_LAMBDA * FXC_M / FXC_N, s, U, work, iwork, NULL,
							&err) == KM_OK, "eigen");
	cross(fxc_X, FXC_N, fxc_X, FXC_M, Z);
	km_leverage_project(&rbf, fxc_X, 100, FXC_D, U, FXC_M, Z, P, kii);
	km_leverage_project(&rbf, fxc_X + 100 * FXC_D, FXC_N - 100, FXC_D, U, FXC_M,
						Z + 100 * FXC_M, P + 100 * FXC_M, kii + 100);
	free(K);
	free(U);
	free(Z);
	free(work);
	free(iwork);
}

/* Scores of every fixture row at FXC_LAMBDA from the sketch. */
static double *
scores(void)
{
	double	   *P = malloc(sizeof(double) * FXC_N * FXC_M);
	double	   *kii = malloc(sizeof(double) * FXC_N);
	double		s[FXC_M];
	double	   *out = malloc(sizeof(double) * FXC_N);

	project(P, kii, s);
	for (int i = 0; i < FXC_N; i++)
		out[i] = km_leverage_score(P + (size_t) i * FXC_M, s, FXC_M, kii[i], FXC_LAMBDA,
								   FXC_LAMBDA * FXC_M / FXC_N);
	free(P);
	free(kii);
	return out;
}

void
test_centres_leverage_scores(void)
{
	double	   *l = scores();

	for (int i = 0; i < FXC_N; i++)
		CHECK_CLOSE(l[i], fxc_lev[i], 1e-8);
	free(l);
}

/* The first pass's sums over the grid and the rule's choice, against NumPy. */
void
test_centres_leverage_grid(void)
{
	double	   *P = malloc(sizeof(double) * FXC_N * FXC_M);
	double	   *kii = malloc(sizeof(double) * FXC_N);
	double		s[FXC_M];
	double		all[2 * KM_LEVERAGE_GRID] = {0};
	double		part[2 * KM_LEVERAGE_GRID] = {0};
	double		lambda_s;
	uint32_t	uniform;
	double	   *W = malloc(sizeof(double) * FXC_M * KM_LEVERAGE_GRID);
	double	   *Q = malloc(sizeof(double) * FXC_N * KM_LEVERAGE_GRID);

	project(P, kii, s);
	km_leverage_grid_weights(s, FXC_M, FXC_LAMBDA, FXC_N, W);
	km_leverage_grid_add(P, kii, FXC_N, W, FXC_M, FXC_LAMBDA, Q, all);
	/* two states added up, as the pass's combine */
	km_leverage_grid_add(P, kii, 120, W, FXC_M, FXC_LAMBDA, Q, part);
	km_leverage_grid_add(P + 120 * FXC_M, kii + 120, FXC_N - 120, W, FXC_M, FXC_LAMBDA, Q, part);
	for (int g = 0; g < 2 * KM_LEVERAGE_GRID; g++)
	{
		/* relative: the sums reach N k(x, x)^2 / lambda^2 */
		CHECK(fabs(all[g] - fxc_sums[g]) <= 1e-8 * fabs(fxc_sums[g]), "sum %d: %.17g vs %.17g",
			  g, all[g], fxc_sums[g]);
		CHECK(fabs(part[g] - all[g]) <= 1e-12 * fabs(all[g]), "split sum %d", g);
	}
	km_leverage_choose(all, FXC_N, FXC_M, FXC_LAMBDA, &lambda_s, &uniform);
	CHECK(lambda_s == km_leverage_grid_lambda(FXC_LAMBDA, FXC_GRID_G) && uniform == FXC_UNIFORM,
		  "lambda_s %g (grid %d: %g), uniform %u (NumPy %d)", lambda_s, FXC_GRID_G,
		  km_leverage_grid_lambda(FXC_LAMBDA, FXC_GRID_G), (unsigned) uniform, FXC_UNIFORM);
	CHECK(FXC_GRID_G > 0 && FXC_UNIFORM > 0 && FXC_UNIFORM < FXC_M,
		  "the fixture moves lambda and shares the sample");
	/* flat scores: all uniform; one row carrying them: none */
	{
		double		flat[2 * KM_LEVERAGE_GRID];
		double		peak[2 * KM_LEVERAGE_GRID];

		for (int g = 0; g < KM_LEVERAGE_GRID; g++)
		{
			flat[g] = 100 * 0.3;	/* d_eff 30 <= m at lambda */
			flat[KM_LEVERAGE_GRID + g] = 100 * 0.09;
			peak[g] = 50.0;
			peak[KM_LEVERAGE_GRID + g] = 2500.0;
		}
		km_leverage_choose(flat, 100, 40, 0.1, &lambda_s, &uniform);
		CHECK(uniform == 40 && lambda_s == 0.1,
			  "flat: %u uniform at %g", (unsigned) uniform, lambda_s);
		km_leverage_choose(peak, 100, 40, 0.1, &lambda_s, &uniform);
		CHECK(uniform == 0 && lambda_s == km_leverage_grid_lambda(0.1, KM_LEVERAGE_GRID - 1),
			  "peak: %u uniform at %g", (unsigned) uniform, lambda_s);
	}
	free(P);
	free(kii);
	free(W);
	free(Q);
}

static uint64_t
row_hash(int i)
{
	return 0x9E3779B97F4A7C15ULL * (uint64_t) (i + 1) ^ 0xD1B54A32D192ED03ULL;
}

void
test_centres_leverage_sample(void)
{
	double	   *l = scores();
	uint32_t	m = 25;
	size_t		bytes = km_leverage_state_bytes(m, FXC_D);
	km_leverage_state *all = malloc(bytes);
	km_leverage_state *a = malloc(bytes);
	km_leverage_state *b = malloc(bytes);
	double	   *C1 = malloc(sizeof(double) * m * FXC_D);
	double	   *C2 = malloc(sizeof(double) * m * FXC_D);
	uint32_t	order[25];
	double		mean_all = 0.0;
	double		mean_kept = 0.0;
	km_error	err;

	memset(&err, 0, sizeof(err));
	km_leverage_state_init(all, m, FXC_D);
	km_leverage_state_init(a, m, FXC_D);
	km_leverage_state_init(b, m, FXC_D);
	for (int i = 0; i < FXC_N; i++)
	{
		km_leverage_state_offer(all, fxc_X + i * FXC_D, l[i], row_hash(i));
		/* the other state takes every third row, in reverse */
		mean_all += l[i] / FXC_N;
	}
	for (int i = FXC_N - 1; i >= 0; i--)
		km_leverage_state_offer(i % 3 == 0 ? b : a, fxc_X + i * FXC_D, l[i], row_hash(i));
	/* a row offered twice is kept once */
	km_leverage_state_offer(a, fxc_X, l[0], row_hash(0));
	CHECK(km_leverage_state_combine(a, b, &err) == KM_OK, "combine");
	CHECK(all->n == m && a->n == m, "kept %u and %u of %u", all->n, a->n, m);
	km_leverage_state_rows(all, C1, order);
	km_leverage_state_rows(a, C2, order);
	CHECK(memcmp(C1, C2, sizeof(double) * m * FXC_D) == 0, "same sample in any order and split");
	/* the sample leans to high scores */
	for (uint32_t c = 0; c < m; c++)
		for (int i = 0; i < FXC_N; i++)
			if (memcmp(C1 + (size_t) c * FXC_D, fxc_X + i * FXC_D, sizeof(double) * FXC_D) == 0)
				mean_kept += l[i] / m;
	CHECK(mean_kept > mean_all, "mean score kept %g, of every row %g", mean_kept, mean_all);
	for (int i = 0; i < 1000; i++)
	{
		double		u = km_leverage_uniform(row_hash(i));

		CHECK(u > 0.0 && u < 1.0, "u = %g", u);
	}
	CHECK(km_leverage_uniform(0) > 0.0 && km_leverage_uniform(UINT64_MAX) < 1.0, "ends");
	/* the defensive sample: 10 of the smallest hashes, the rest by leverage; any split */
	{
		uint32_t	k = 10;
		size_t		sb = km_leverage_sample_bytes(m, k, FXC_D);
		void	   *s1 = malloc(sb);
		void	   *s2 = malloc(sb);
		void	   *s3 = malloc(sb);
		uint32_t	n1,
					n2;
		int			lowest = 0;

		km_leverage_sample_init(s1, m, k, FXC_D);
		km_leverage_sample_init(s2, m, k, FXC_D);
		km_leverage_sample_init(s3, m, k, FXC_D);
		for (int i = 0; i < FXC_N; i++)
		{
			km_leverage_sample_offer(s1, fxc_X + i * FXC_D, l[i], row_hash(i));
			km_leverage_sample_offer(i % 2 ? s2 : s3, fxc_X + i * FXC_D, l[i], row_hash(i));
		}
		CHECK(km_leverage_sample_combine(s3, s2, &err) == KM_OK, "combine");
		n1 = km_leverage_sample_rows(s1, C1, order);
		n2 = km_leverage_sample_rows(s3, C2, order);
		CHECK(n1 == m && n2 == m, "kept %u and %u of %u", n1, n2, m);
		CHECK(memcmp(C1, C2, sizeof(double) * m * FXC_D) == 0, "same defensive sample in any split");
		/* its first row is the row of the smallest hash */
		for (int i = 1; i < FXC_N; i++)
			if (row_hash(i) < row_hash(lowest))
				lowest = i;
		CHECK(memcmp(C1, fxc_X + lowest * FXC_D, sizeof(double) * FXC_D) == 0, "smallest hash first");
		/* distinct rows */
		for (uint32_t a2 = 0; a2 < m; a2++)
			for (uint32_t b2 = a2 + 1; b2 < m; b2++)
				CHECK(memcmp(C1 + a2 * FXC_D, C1 + b2 * FXC_D, sizeof(double) * FXC_D) != 0,
					  "rows %u and %u equal", a2, b2);
		free(s1);
		free(s2);
		free(s3);
	}
	free(l);
	free(all);
	free(a);
	free(b);
	free(C1);
	free(C2);
}

void
test_centres_kmeans(void)
{
	uint32_t	m = 4;
	size_t		nd = km_kmeans_state_doubles(m, FXC_D);
	double	   *s1 = calloc(nd, sizeof(double));
	double	   *s2 = calloc(nd, sizeof(double));
	double	   *s3 = calloc(nd, sizeof(double));
	double		C[4 * FXC_D];
	double		C2[4 * FXC_D];
	double		inertia;

	/* three fixture rows and one far away, which no row chooses */
	memcpy(C, fxc_X, sizeof(double) * 3 * FXC_D);
	for (int j = 0; j < FXC_D; j++)
		C[3 * FXC_D + j] = 1e6;
	memcpy(C2, C, sizeof(C));
	km_kmeans_add(C, m, FXC_D, fxc_X, FXC_N, s1);
	km_kmeans_add(C, m, FXC_D, fxc_X, 120, s2);
	km_kmeans_add(C, m, FXC_D, fxc_X + 120 * FXC_D, FXC_N - 120, s3);
	for (size_t i = 0; i < nd; i++)
	{
		s2[i] += s3[i];			/* the pass's combine: addition */
		CHECK_CLOSE(s2[i], s1[i], 1e-12);
	}
	CHECK(s1[(size_t) m * FXC_D] + s1[(size_t) m * FXC_D + 1] + s1[(size_t) m * FXC_D + 2] == FXC_N &&
		  s1[(size_t) m * FXC_D + 3] == 0.0, "counts");
	inertia = km_kmeans_update(C, m, FXC_D, s1);
	CHECK(inertia > 0.0 && inertia == s1[nd - 1], "inertia %g", inertia);
	CHECK(C[3 * FXC_D] == 1e6, "an empty cluster keeps its centre");
	/* a centre is the mean of its rows */
	{
		double		sum = 0.0;
		double		cnt = 0.0;

		for (int i = 0; i < FXC_N; i++)
		{
			const double *x = fxc_X + i * FXC_D;
			double		best = INFINITY;
			int			arg = -1;

			for (int c = 0; c < 4; c++)
			{
				double		d2 = 0.0;

				for (int j = 0; j < FXC_D; j++)
					d2 += (x[j] - C2[c * FXC_D + j]) * (x[j] - C2[c * FXC_D + j]);
				if (d2 < best)
				{
					best = d2;
					arg = c;
				}
			}
			if (arg == 0)
			{
				sum += x[0];
				cnt += 1.0;
			}
		}
		CHECK_CLOSE(C[0], sum / cnt, 1e-12);
	}
	CHECK(!km_kmeans_converged(-1.0, 5.0) && km_kmeans_converged(5.0, 5.0) &&
		  !km_kmeans_converged(6.0, 5.0), "tolerance");
	free(s1);
	free(s2);
	free(s3);
}

void
test_centres_names(void)
{
	km_centres	c;

	CHECK(km_centres_from_name("kmeans", &c) && c == KM_CENTRES_KMEANS, "kmeans");
	CHECK(km_centres_from_name("leverage", &c) && c == KM_CENTRES_LEVERAGE, "leverage");
	CHECK(km_centres_from_name("uniform", &c) && c == KM_CENTRES_UNIFORM, "uniform");
	CHECK(!km_centres_from_name("k-means", &c), "unknown");
	CHECK(strcmp(km_centres_name((km_centres) 7), "unknown") == 0, "unknown name");
}
