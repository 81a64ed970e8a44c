/*
 * Closed-form LOO over 20 lambdas (the issue-6 benchmark's grid, logspace
 * 1e-4 .. 1e2, rbf gamma = 1/d) two ways, side by side on the same data:
 *   old  0.1.0's route: one LAPACKE_dsyevd('V') of K, then c and the
 *        diagonal of every (K + lambda I)^-1 by two GEMMs (uninterruptible
 *        for the whole dsyevd);
 *   new  km_select (src/core/fit/select.c): km_tridiagonalize + km_back_transform
 *        (src/core/base/eigen.c) and O(n) tridiagonal solves per lambda, interrupt
 *        checks throughout.
 * Prints each time, the ratio new / old, the largest relative difference of
 * the 20 scores, and the longest time between two interrupt checks of the
 * new route ("gap": the longest a cancel waits).  Built by
 *     make test/bench/loo
 *     test/bench/loo N D THREADS REPS
 * Features are uniform with unit variance, the target a smooth function
 * plus noise; kernel "linear" as a fifth argument uses K = X X^T instead
 * (full rank when D >= N: the worst case for deflation).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <lapacke.h>

#include "bench.h"
#include "select.h"

#define L 20

/* 0.1.0's closed_form_gamma, LOO only, for the comparison. */
static void
old_route(const km_kernel *k, const double *X, size_t n, int d,
		  const double *y, const double *lambdas, double *score)
{
	double	   *Q = xmalloc(n * n * sizeof(double));
	double	   *s = xmalloc(n * sizeof(double));
	double	   *z = xmalloc(n * sizeof(double));
	double	   *norms = xmalloc(n * sizeof(double));
	double	   *W = xmalloc(n * L * sizeof(double));
	double	   *C = xmalloc(n * L * sizeof(double));
	double	   *H = xmalloc(n * L * sizeof(double));
	lapack_int	info;

	km_row_norms(k, X, n, d, norms);
	km_gram_lower(k, X, n, d, norms, Q, n, NULL);
	info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int) n, Q,
						  (lapack_int) n, s);
	if (info != 0)
	{
		fprintf(stderr, "dsyevd: %d\n", (int) info);
		exit(1);
	}
	cblas_dgemv(CblasColMajor, CblasTrans, (int) n, (int) n, 1.0, Q, (int) n,
				y, 1, 0.0, z, 1);
	for (size_t l = 0; l < L; l++)
		for (size_t q = 0; q < n; q++)
			W[q + l * n] = z[q] / (s[q] + lambdas[l]);
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, L, (int) n,
				1.0, Q, (int) n, W, (int) n, 0.0, C, (int) n);
	for (size_t i = 0; i < n * n; i++)
		Q[i] *= Q[i];
	for (size_t l = 0; l < L; l++)
		for (size_t q = 0; q < n; q++)
			W[q + l * n] = 1.0 / (s[q] + lambdas[l]);
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, L, (int) n,
				1.0, Q, (int) n, W, (int) n, 0.0, H, (int) n);
	for (size_t l = 0; l < L; l++)
	{
		double		sum = 0.0;

		for (size_t i = 0; i < n; i++)
		{
			double		e = C[i + l * n] / H[i + l * n];

			sum += e * e;
		}
		score[l] = sum / (double) n;
	}
	free(Q);
	free(s);
	free(z);
	free(norms);
	free(W);
	free(C);
	free(H);
}

int
main(int argc, char **argv)
{
	size_t		n;
	int			d;
	int			reps;
	double	   *X;
	double	   *y;
	double		lambdas[L];
	double		gamma;
	km_select_params p = {0};
	unsigned long long s = 88172645463325252ULL;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s N D THREADS REPS [linear]\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 10);
	d = atoi(argv[2]);
	openblas_set_num_threads(atoi(argv[3]));
	reps = atoi(argv[4]);
	gamma = 1.0 / d;
	X = xmalloc(n * d * sizeof(double));
	y = xmalloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
	{
		double		t = 0.0;

		for (int j = 0; j < d; j++)
		{
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			X[i * d + j] = ((double) (s >> 11) / 9007199254740992.0 - 0.5) * sqrt(12.0);
			t += X[i * d + j] / sqrt((double) d);
		}
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		y[i] = sin(2.0 * t) + 0.1 * ((double) (s >> 11) / 9007199254740992.0 - 0.5);
	}
	for (int l = 0; l < L; l++)
		lambdas[l] = pow(10.0, -4.0 + 6.0 * l / (L - 1));

	p.base.kernel.type = argc > 5 && strcmp(argv[5], "linear") == 0 ?
		KM_KERNEL_LINEAR : KM_KERNEL_RBF;
	p.base.kernel.gamma = gamma;
	p.base.method = KM_METHOD_RIDGE;
	p.gammas = &gamma;
	p.n_gammas = 1;
	p.lambdas = lambdas;
	p.n_lambdas = L;
	p.cv = KM_CV_LOO;

	for (int r = 0; r < reps; r++)
	{
		double		old_score[L];
		km_candidate cand[L];
		double	   *work = xmalloc(km_select_workspace_doubles(&p, n, d) * sizeof(double));
		double		t0;
		double		t_old;
		double		t_new;
		double		diff = 0.0;
		int			best;
		km_error	err;

		t0 = now();
		old_route(&p.base.kernel, X, n, d, y, lambdas, old_score);
		t_old = now() - t0;

		gap_start();
		t0 = gap_last;
		if (km_select(&p, X, n, d, y, NULL, cand, &best, work, &err, gap_check) != KM_OK)
		{
			fprintf(stderr, "%s: %s\n", err.message, err.detail);
			return 1;
		}
		gap_check();
		t_new = now() - t0;
		for (int l = 0; l < L; l++)
			if (isfinite(old_score[l]))
				diff = fmax(diff, fabs(cand[l].score - old_score[l]) / fabs(old_score[l]));
		printf("n %zu d %d: old (dsyevd) %.3f s, new %.3f s, new/old %.2f, "
			   "max relative score difference %.2g, best lambda %g, new gap %.3f s (cpu %.3f s, ended at %p)\n",
			   n, d, t_old, t_new, t_new / t_old, diff, cand[best].lambda, gap_max,
			   gap_cpu_max, gap_where);
		fflush(stdout);
		free(work);
	}
	return 0;
}
