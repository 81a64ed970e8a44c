/*
 * Approximate models (src/core/repr/approx.c): where the time goes.
 *   features   km_approx_features per block of rows (nystrom: DGEMM + the
 *              rbf map; rff: DGEMM + the cos map), reported per 1M rows;
 *              rff also with the scalar libm cos loop the map replaced,
 *              side by side
 *   accumulate km_accum_gram_add (dsyrk + fold into the packed triangle +
 *              dgemv) per block, per 1M rows
 *   solve      km_approx_solve over 20 lambdas, total, and its pieces
 *              timed alone on the same matrices: K_mm + Cholesky, the
 *              whitening (two dtrsm), the tridiagonal reduction, dsterf;
 *              with the longest gap between two interrupt checks
 * Usage (make test/bench/approx; KM_BENCH_BLOCK=rows per block, default 256):
 *     test/bench/approx ROWS D M THREADS [SOLVE_M...]
 * e.g. test/bench/approx 100000 20 1000 1 500 1000 2000
 * Passes are timed in process CPU time (the machine is shared: with
 * THREADS = 1 that is the work itself), the solve in wall time.
 * Rows are uniform with unit variance, standardized-like; rbf gamma = 1/d.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "approx.h"
#include "bench.h"
#include "eigen.h"
#include "solve.h"

/* rows per block of features and accumulation: KM_BENCH_BLOCK, default 256 */
static size_t BLOCK = 256;
#define L 20

static double
urand(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (double) (*s >> 11) / 9007199254740992.0 - 0.5;
}

/* The rff map before kernel_maps.c's vectorised one: libm cos per entry. */
static void __attribute__((noinline))
scalar_rff(const km_basis *b, const double *X, size_t rows, double *Z)
{
	double		s = sqrt(2.0 / b->m);

	for (size_t i = 0; i < rows; i++)
		memcpy(Z + i * b->m, b->b, b->m * sizeof(double));
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) rows, (int) b->m,
				(int) b->d, 1.0, X, (int) b->d, b->W, (int) b->m, 1.0, Z, (int) b->m);
	for (size_t i = 0; i < rows * b->m; i++)
		Z[i] = s * cos(Z[i]);
}

/* Seconds per 1M rows for features (and accumulation) over rows rows. */
static void
time_pass(const km_basis *b, const double *X, const double *y, size_t rows,
		  int variant, double *t_feat, double *t_acc)
{
	double	   *Z = xmalloc((size_t) BLOCK * b->m * sizeof(double));
	double	   *work = xmalloc(km_approx_features_doubles(b, BLOCK) * sizeof(double));
	double	   *scratch = xmalloc(km_accum_gram_scratch_doubles(b->m) * sizeof(double));
	km_accum   *acc = xmalloc(km_accum_bytes(KM_ACCUM_GRAM, b->m));
	km_error	err;
	double		f = 0.0;
	double		a = 0.0;

	km_accum_init(acc, KM_ACCUM_GRAM, b->m);
	for (size_t i = 0; i < rows; i += BLOCK)
	{
		size_t		r = rows - i < BLOCK ? rows - i : BLOCK;
		double		t0 = cpu_now();

		if (variant == 1)
			scalar_rff(b, X + i * b->d, r, Z);
		else if (km_approx_features(b, X + i * b->d, r, Z, work, &err) != KM_OK)
		{
			fprintf(stderr, "features: %s\n", err.message);
			exit(1);
		}
		f += cpu_now() - t0;
		if (t_acc)
		{
			t0 = cpu_now();
			km_accum_gram_add(acc, Z, y + i, r, scratch, NULL);
			a += cpu_now() - t0;
		}
	}
	*t_feat = f * 1e6 / (double) rows;
	if (t_acc)
		*t_acc = a * 1e6 / (double) rows;
	free(Z);
	free(work);
	free(scratch);
	free(acc);
}

static void
bench_solve(uint32_t m, int d, const double *X, const double *y, size_t rows)
{
	km_basis	b;
	km_accum   *acc = xmalloc(km_accum_bytes(KM_ACCUM_GRAM, m));
	double	   *Z = xmalloc((size_t) BLOCK * m * sizeof(double));
	double	   *fw;
	double	   *scratch = xmalloc(km_accum_gram_scratch_doubles(m) * sizeof(double));
	double	   *work = xmalloc(km_approx_solve_doubles(m) * sizeof(double));
	double	   *coef = xmalloc(m * sizeof(double));
	double	   *K = xmalloc((size_t) m * m * sizeof(double));
	double	   *A = xmalloc((size_t) m * m * sizeof(double));
	double	   *v = xmalloc(4 * (size_t) m * sizeof(double));
	double	   *W = xmalloc((size_t) m * KM_TRD_MAX_NB * sizeof(double));
	double		lambdas[L];
	km_approx_result res;
	km_error	err;
	double		t0;
	double		t_total;
	double		t_chol;
	double		t_white;
	double		t_trd;
	double		t_sterf;
	double		gap;

	memset(&b, 0, sizeof(b));
	b.kind = KM_APPROX_NYSTROM;
	b.kernel.type = KM_KERNEL_RBF;
	b.kernel.gamma = 1.0 / d;
	b.d = (uint32_t) d;
	b.m = m;
	b.centres = X;				/* the first m rows */
	fw = xmalloc(km_approx_features_doubles(&b, BLOCK) * sizeof(double));
	km_accum_init(acc, KM_ACCUM_GRAM, m);
	for (size_t i = 0; i < rows; i += BLOCK)
	{
		size_t		r = rows - i < BLOCK ? rows - i : BLOCK;

		km_approx_features(&b, X + i * d, r, Z, fw, &err);
		km_accum_gram_add(acc, Z, y + i, r, scratch, NULL);
	}
	for (int l = 0; l < L; l++)
		lambdas[l] = pow(10.0, -4.0 + 6.0 * l / (L - 1));

	gap_start();
	t0 = now();
	if (km_approx_solve(&b, acc, lambdas, L, true, false, coef, &res, work, &err,
						gap_check) != KM_OK)
		printf("  solve m = %u: %s: %s\n", m, err.message, err.detail);
	t_total = now() - t0;
	gap = gap_max;

	/* the pieces alone */
	t0 = now();
	km_row_norms(&b.kernel, X, m, d, v);
	km_gram_lower(&b.kernel, X, m, d, v, K, m, NULL);
	for (uint32_t i = 0; i < m; i++)
		K[i + (size_t) i * m] += res.eps > 0 ? res.eps : 1e-10;
	km_cholesky(K, m, m, NULL);
	t_chol = now() - t0;
	for (size_t i = 0; i < (size_t) m * m; i++)
		A[i] = (i % (m + 1)) == 0 ? 1.0 + 0.0 * i : 1e-3 * sin((double) i);
	t0 = now();
	cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
				(int) m, (int) m, 1.0, K, (int) m, A, (int) m);
	cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit,
				(int) m, (int) m, 1.0, K, (int) m, A, (int) m);
	t_white = now() - t0;
	for (size_t i = 0; i < (size_t) m * m; i++)
		A[i] = (i % (m + 1)) == 0 ? (double) m : 1.0 / (1.0 + (double) (i % 97));
	t0 = now();
	km_tridiagonalize(A, m, 0, v, v + m, v + 2 * m, W, NULL);
	t_trd = now() - t0;
	t0 = now();
	LAPACKE_dsterf_work((lapack_int) m, v, v + m);
	t_sterf = now() - t0;
	printf("  solve m = %4u: %7.3f s (lambda %g, eps %g, rank %u, rel. residual %.1e); longest gap %.3f s\n",
		   m, t_total, res.lambda, res.eps, res.rank, res.relative_residual, gap);
	printf("      pieces alone: K_mm + chol %.3f s, whiten %.3f s, tridiagonal %.3f s, dsterf %.4f s\n",
		   t_chol, t_white, t_trd, t_sterf);
	free(acc);
	free(Z);
	free(fw);
	free(scratch);
	free(work);
	free(coef);
	free(K);
	free(A);
	free(v);
	free(W);
}

int
main(int argc, char **argv)
{
	size_t		rows;
	int			d;
	uint32_t	m;
	double	   *X;
	double	   *y;
	double	   *W;
	double	   *bb;
	unsigned long long s = 12345;
	km_basis	b;
	double		f;
	double		a;
	double		f_old;
	double		f_new;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s ROWS D M THREADS [SOLVE_M...]\n", argv[0]);
		return 2;
	}
	if (getenv("KM_BENCH_BLOCK"))
		BLOCK = strtoul(getenv("KM_BENCH_BLOCK"), NULL, 10);
	rows = strtoul(argv[1], NULL, 10);
	d = atoi(argv[2]);
	m = (uint32_t) strtoul(argv[3], NULL, 10);
	openblas_set_num_threads(atoi(argv[4]));
	X = xmalloc(rows * d * sizeof(double));
	y = xmalloc(rows * sizeof(double));
	for (size_t i = 0; i < rows * d; i++)
		X[i] = sqrt(12.0) * urand(&s);
	for (size_t i = 0; i < rows; i++)
		y[i] = sin(X[i * d]) + 0.5 * X[i * d + 1] + 0.1 * urand(&s);

	printf("approximate models, %zu rows, d = %d, m = %u, %s BLAS thread(s), blocks of %zu rows; CPU seconds per 1M rows (features, accumulation), wall seconds (solve)\n",
		   rows, d, m, argv[4], BLOCK);
	memset(&b, 0, sizeof(b));
	b.kind = KM_APPROX_NYSTROM;
	b.kernel.type = KM_KERNEL_RBF;
	b.kernel.gamma = 1.0 / d;
	b.d = (uint32_t) d;
	b.m = m;
	b.centres = X;
	time_pass(&b, X, y, rows, 0, &f, &a);
	printf("  nystrom rbf: features %.2f s + accumulate %.2f s = %.2f s per 1M rows (%.0f rows/s)\n",
		   f, a, f + a, 1e6 / (f + a));

	W = xmalloc((size_t) d * m * sizeof(double));
	bb = xmalloc(m * sizeof(double));
	km_rff_draw(1.0 / d, 1, (uint32_t) d, m, W, bb);
	b.kind = KM_APPROX_RFF;
	b.centres = NULL;
	b.W = W;
	b.b = bb;
	time_pass(&b, X, y, rows, 0, &f, &a);
	printf("  rff:         features %.2f s + accumulate %.2f s = %.2f s per 1M rows\n", f, a, f + a);
	/* side by side, alternating, median of 3 */
	{
		double		o[3];
		double		n[3];

		for (int r = 0; r < 3; r++)
		{
			time_pass(&b, X, y, rows, 1, &o[r], NULL);
			time_pass(&b, X, y, rows, 0, &n[r], NULL);
		}
		for (int i = 0; i < 3; i++)
			for (int j = i + 1; j < 3; j++)
			{
				if (o[j] < o[i]) { double t = o[i]; o[i] = o[j]; o[j] = t; }
				if (n[j] < n[i]) { double t = n[i]; n[i] = n[j]; n[j] = t; }
			}
		f_old = o[1];
		f_new = n[1];
		printf("  rff features: scalar cos %.2f s, vectorised map %.2f s per 1M rows (ratio %.2f)\n",
			   f_old, f_new, f_new / f_old);
	}
	for (int i = 5; i < argc; i++)
	{
		uint32_t	sm = (uint32_t) strtoul(argv[i], NULL, 10);

		if ((size_t) sm <= rows)
			bench_solve(sm, d, X, y, rows < 50000 ? rows : 50000);
	}
	free(X);
	free(y);
	free(W);
	free(bb);
	return 0;
}
