/*
 * Ridge training in the core (km_fit, rbf gamma = 1/d, lambda = 1) beside
 * bare LAPACK dpotrf of the same n, interleaved run by run, plus the
 * stages of the fit timed on their own: the Gram matrix (km_gram_lower),
 * the Cholesky factor (km_cholesky), the residual pass (km_gram_times).
 * What training costs above the factorisation, without PostgreSQL, COPY
 * or the row aggregate in the way.  Built by
 *     make test/bench/fit
 *     test/bench/fit N D THREADS REPS
 * Prints one line per repetition and the medians, "fit/dpotrf" last.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "bench.h"
#include "fit.h"
#include "kernels.h"
#include "method.h"
#include "solve.h"

#define MAX_REPS 64

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int k)
{
	qsort(v, k, sizeof(double), cmp_double);
	return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* the dpotrf.c matrix: SPD, diagonally dominant */
static void
fill_spd(double *a, size_t n)
{
	uint64_t	s = 0x9E3779B97F4A7C15ULL;

	for (size_t j = 0; j < n; j++)
	{
		a[j + j * n] = (double) n;
		for (size_t i = j + 1; i < n; i++)
		{
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			a[i + j * n] = (double) (s >> 11) * (1.0 / 9007199254740992.0);
		}
	}
}

int
main(int argc, char **argv)
{
	size_t		n;
	int			d;
	int			reps;
	double	   *X, *y, *alpha, *work, *norms, *u, *B;
	km_fit_params p;
	km_fit_result res;
	km_error	err;
	double		t_fit[MAX_REPS], t_chol[MAX_REPS], t_gram[MAX_REPS];
	double		t_factor[MAX_REPS], t_times[MAX_REPS], ratio[MAX_REPS];
	unsigned short seed[3] = {1, 2, 3};

	if (argc != 5)
	{
		fprintf(stderr, "usage: %s N D THREADS REPS\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	d = atoi(argv[2]);
	openblas_set_num_threads(atoi(argv[3]));
	reps = atoi(argv[4]);
	if (reps < 1 || reps > MAX_REPS || n < 2 || d < 1)
		return 2;

	X = xmalloc(n * d * sizeof(double));
	y = xmalloc(n * sizeof(double));
	alpha = xmalloc(n * sizeof(double));
	work = xmalloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	norms = xmalloc(n * sizeof(double));
	u = xmalloc(n * sizeof(double));
	B = xmalloc((size_t) KM_TIMES_ROWS * KM_TIMES_COLS * sizeof(double));
	for (size_t i = 0; i < n * d; i++)
		X[i] = (erand48(seed) - 0.5) * sqrt(12.0);
	for (size_t i = 0; i < n; i++)
		y[i] = sin(X[i * d]) + 0.1 * (erand48(seed) - 0.5);

	memset(&p, 0, sizeof(p));
	p.method = KM_METHOD_RIDGE;
	p.kernel.type = KM_KERNEL_RBF;
	p.kernel.gamma = 1.0 / d;
	p.lambda = 1.0;

	for (int r = 0; r < reps; r++)
	{
		double		t0;

		t0 = now();
		if (km_fit(&p, X, n, d, y, alpha, work, &res, &err, gap_check) != KM_OK)
		{
			fprintf(stderr, "fit failed: %s: %s\n", err.message, err.detail);
			return 1;
		}
		t_fit[r] = now() - t0;

		fill_spd(work, n);
		t0 = now();
		if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, work,
								(lapack_int) n) != 0)
			return 1;
		t_chol[r] = now() - t0;

		/* the stages of the fit on their own */
		km_row_norms(&p.kernel, X, n, d, norms);
		t0 = now();
		km_gram_lower(&p.kernel, X, n, d, norms, work, n, gap_check);
		t_gram[r] = now() - t0;
		for (size_t i = 0; i < n; i++)
			work[i + i * n] += p.lambda;
		t0 = now();
		km_cholesky(work, n, n, gap_check);
		t_factor[r] = now() - t0;
		t0 = now();
		km_gram_times(&p.kernel, X, n, d, norms, alpha, u, B, gap_check);
		t_times[r] = now() - t0;

		ratio[r] = t_fit[r] / t_chol[r];
		printf("run %d: fit %.3f s  dpotrf %.3f s  ratio %.3f | gram %.3f  km_cholesky %.3f  gram_times %.3f  (train_rmse %.6g, residual %.2g)\n",
			   r + 1, t_fit[r], t_chol[r], ratio[r], t_gram[r], t_factor[r],
			   t_times[r], res.train_rmse, res.relative_residual);
		fflush(stdout);
	}
	printf("median n=%zu d=%d: fit %.3f s  dpotrf %.3f s  gram %.3f  km_cholesky %.3f  gram_times %.3f  fit/dpotrf %.3f\n",
		   n, d, median(t_fit, reps), median(t_chol, reps), median(t_gram, reps),
		   median(t_factor, reps), median(t_times, reps), median(ratio, reps));
	return 0;
}
