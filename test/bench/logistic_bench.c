/*
 * logistic_bench.c - time and interrupt gaps of the classification core
 * (src/core/methods/logistic.h, sgd.h, primal.h) on a noisy synthetic binary task:
 * exact Newton at n rows, one SGD epoch, and one primal statistics pass of
 * rows x m features.
 *   make test/bench/logistic_bench && test/bench/logistic_bench [n] [rows] [m]
 * and a digits-sized multinomial fit (n = 1797, d = 64, k = 10, rbf gamma =
 * 1/d, lambda 1e-3; ten Gaussian clusters), median of 3 fits:
 *   test/bench/logistic_bench digits
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "kernels.h"
#include "logistic.h"
#include "primal.h"
#include "sgd.h"

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* Multinomial fit on a digits-like problem: median wall and CPU of 3. */
static int
bench_digits(void)
{
	size_t		n = 1797;
	int			d = 64;
	uint32_t	k = 10;
	unsigned short xs[3] = {4, 5, 6};
	double	   *X = xmalloc(n * d * sizeof(double));
	double	   *centre = xmalloc((size_t) k * d * sizeof(double));
	double	   *norms = xmalloc(n * sizeof(double));
	double	   *K = xmalloc(n * n * sizeof(double));
	uint32_t   *cls = xmalloc(n * sizeof(uint32_t));
	double	   *work = xmalloc(km_logistic_workspace_doubles(n, k) * sizeof(double));
	double	   *alpha = xmalloc(n * k * sizeof(double));
	double		b[10],
				wall[3],
				cpu[3],
				gaps[3];
	km_kernel	kern = {KM_KERNEL_RBF, 3, 1.0 / d, 0.0};
	km_logistic_params lp = {1e-3, true, 0.0, 0};
	km_logistic_result lr;
	km_error	err;

	/* class centres 1.5 apart per coordinate on average, unit noise */
	for (size_t i = 0; i < (size_t) k * d; i++)
		centre[i] = 1.5 * (erand48(xs) * 2 - 1);
	for (size_t i = 0; i < n; i++)
	{
		cls[i] = (uint32_t) (i % k);
		for (int j = 0; j < d; j++)
		{
			/* Box-Muller */
			double		u1 = erand48(xs) + 1e-300,
						u2 = erand48(xs);

			X[i * d + j] = centre[cls[i] * d + j] +
				sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		}
	}
	km_row_norms(&kern, X, n, d, norms);
	km_gram_lower(&kern, X, n, d, norms, K, n, NULL);
	for (int r = 0; r < 3; r++)
	{
		double		t0 = now(),
					c0 = cpu_now();

		gap_start();
		if (km_logistic_fit(&lp, K, n, cls, k, NULL, alpha, b, work, &lr, &err, gap_check) != KM_OK)
		{
			fprintf(stderr, "%s: %s\n", err.message, err.detail);
			return 1;
		}
		wall[r] = now() - t0;
		cpu[r] = cpu_now() - c0;
		gaps[r] = gap_cpu_max;
		printf("digits-like multinomial n = %zu, k = %u: %.3f s (cpu %.3f s), %d iterations (%d cg), "
			   "converged %d, objective %.12g, gradient %.3g of %.3g, longest interrupt gap cpu %.3f s\n",
			   n, (unsigned) k, wall[r], cpu[r], lr.iterations, lr.cg_iterations, (int) lr.converged,
			   lr.objective, lr.grad_norm, lr.grad_norm0, gaps[r]);
	}
	qsort(wall, 3, sizeof(double), cmp_double);
	qsort(cpu, 3, sizeof(double), cmp_double);
	printf("digits-like multinomial: median %.3f s wall, %.3f s cpu\n", wall[1], cpu[1]);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "digits") == 0)
		return bench_digits();
	size_t		n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	size_t		rows = argc > 2 ? strtoul(argv[2], NULL, 10) : 100000;
	uint32_t	m = argc > 3 ? (uint32_t) strtoul(argv[3], NULL, 10) : 500;
	int			d = 20;
	unsigned short xs[3] = {1, 2, 3};
	double	   *X = xmalloc(n * d * sizeof(double));
	double	   *norms = xmalloc(n * sizeof(double));
	double	   *K = xmalloc(n * n * sizeof(double));
	uint32_t   *cls = xmalloc((n > rows ? n : rows) * sizeof(uint32_t));
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / d, 0.0};
	double	   *work = xmalloc(km_logistic_workspace_doubles(n, 2) * sizeof(double));
	double	   *alpha = xmalloc(n * sizeof(double));
	double		b,
				t0;
	km_logistic_params lp = {1e-3, true, 0.0, 0};
	km_logistic_result lr;
	km_sgd_params sp = {KM_SGD_LOGISTIC, 1e-3, true, 0.0, 1, 1};
	km_sgd_result sr;
	km_error	err;

	/* class = sign of a noisy non-linear function of the first features */
	for (size_t i = 0; i < n * d; i++)
		X[i] = erand48(xs) * 2 - 1;
	for (size_t i = 0; i < (n > rows ? n : rows); i++)
	{
		const double *x = X + (i % n) * d;

		cls[i] = sin(3 * x[0]) + x[1] * x[2] + 0.5 * (erand48(xs) - 0.5) > 0;
	}
	km_row_norms(&k, X, n, d, norms);
	km_gram_lower(&k, X, n, d, norms, K, n, NULL);

	gap_start();
	t0 = now();
	if (km_logistic_fit(&lp, K, n, cls, 2, NULL, alpha, &b, work, &lr, &err, gap_check) != KM_OK)
		return 1;
	printf("exact logistic n = %zu: %.2f s, %d Newton steps, converged %d, objective %.8g, "
		   "longest interrupt gap %.3f s (cpu %.3f s)\n", n, now() - t0, lr.iterations,
		   (int) lr.converged, lr.objective, gap_max, gap_cpu_max);

	gap_start();
	t0 = now();
	if (km_sgd_fit(&sp, K, n, cls, NULL, alpha, &b, work, &sr, &err, gap_check) != KM_OK)
		return 1;
	printf("sgd one epoch n = %zu: %.3f s, longest interrupt gap %.3f s\n", n, now() - t0, gap_max);

	{
		double	   *Z = xmalloc((size_t) 4096 * m * sizeof(double));
		double	   *state = xmalloc(km_primal_state_doubles(m) * sizeof(double));
		double	   *scratch = xmalloc(km_primal_add_scratch_doubles(m, 4096) * sizeof(double));
		double	   *coef = xmalloc(m * sizeof(double));

		for (size_t i = 0; i < (size_t) 4096 * m; i++)
			Z[i] = erand48(xs);
		for (uint32_t j = 0; j < m; j++)
			coef[j] = 0.01 * (erand48(xs) - 0.5);
		km_primal_state_init(state, m);
		t0 = now();
		for (size_t r = 0; r < rows; r += 4096)
		{
			size_t		rb = rows - r < 4096 ? rows - r : 4096;

			km_primal_add(state, m, KM_PRIMAL_LOGISTIC, Z, rb, cls + r, NULL, coef, 0.0, scratch, NULL);
		}
		printf("primal statistics pass, %zu rows x m = %u (blocks of 4096): %.2f s\n",
			   rows, m, now() - t0);
	}
	return 0;
}
