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

/* Scores of every fixture row from the sketch (its first FXC_M rows). */
static double *
scores(void)
{
	double	   *L = malloc(sizeof(double) * FXC_M * FXC_M);
	double	   *Z = malloc(sizeof(double) * FXC_N * FXC_M);
	double	   *out = malloc(sizeof(double) * FXC_N);
	km_error	err;

	memset(&err, 0, sizeof(err));
	cross(fxc_X, FXC_M, fxc_X, FXC_M, L);
	CHECK(km_leverage_factor(L, FXC_M, FXC_LAMBDA * FXC_M / FXC_N, &err) == KM_OK, "factor");
	cross(fxc_X, FXC_N, fxc_X, FXC_M, Z);
	/* two blocks, as a pass hands them */
	km_leverage_scores(&rbf, fxc_X, 100, FXC_D, L, FXC_M, FXC_LAMBDA, Z, out);
	km_leverage_scores(&rbf, fxc_X + 100 * FXC_D, FXC_N - 100, FXC_D, L, FXC_M, FXC_LAMBDA,
					   Z + 100 * FXC_M, out + 100);
	free(L);
	free(Z);
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
	/* the defensive sample: half the smallest hashes, the rest by leverage; any split */
	{
		size_t		sb = km_leverage_sample_bytes(m, FXC_D);
		void	   *s1 = malloc(sb);
		void	   *s2 = malloc(sb);
		void	   *s3 = malloc(sb);
		uint32_t	n1,
					n2;
		int			lowest = 0;

		km_leverage_sample_init(s1, m, FXC_D);
		km_leverage_sample_init(s2, m, FXC_D);
		km_leverage_sample_init(s3, m, FXC_D);
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
