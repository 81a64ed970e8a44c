/*
 * Bare LAPACK Cholesky (dpotrf, lower triangle, column-major, in place) of
 * an n x n symmetric positive definite matrix: the floor that kernel_ml's
 * training is compared with.  Built by test/bench/core.py at bench time:
 *
 *     gcc -O2 -o dpotrf dpotrf.c -llapacke -lopenblas
 *     ./dpotrf N REPS THREADS
 *
 * Prints one line per repetition, "seconds <t>", then "corename <name>".
 * The matrix is refilled before every repetition (not timed): a
 * deterministic pseudo-random lower triangle in [0, 1) with n on the
 * diagonal, so it is strictly diagonally dominant and therefore SPD.
 * Only the factorisation itself is timed (LAPACKE_dpotrf_work: no NaN
 * check, no layout copy).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cblas.h>
#include <lapacke.h>

#include "bench.h"

static void
fill(double *a, size_t n)
{
	uint64_t	s = 0x9E3779B97F4A7C15ULL;

	for (size_t j = 0; j < n; j++)
	{
		double	   *col = a + j * n;

		col[j] = (double) n;
		for (size_t i = j + 1; i < n; i++)
		{
			/* xorshift64: cheap, deterministic */
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			col[i] = (double) (s >> 11) * (1.0 / 9007199254740992.0);
		}
	}
}

int
main(int argc, char **argv)
{
	size_t		n;
	int			reps;
	int			threads;
	double	   *a;

	if (argc != 4)
	{
		fprintf(stderr, "usage: %s N REPS THREADS\n", argv[0]);
		return 2;
	}
	n = (size_t) strtoul(argv[1], NULL, 10);
	reps = atoi(argv[2]);
	threads = atoi(argv[3]);
	if (n == 0 || reps < 1 || threads < 1)
	{
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	openblas_set_num_threads(threads);

	a = malloc(n * n * sizeof(double));
	if (a == NULL)
	{
		fprintf(stderr, "out of memory for n = %zu\n", n);
		return 1;
	}
	for (int r = 0; r < reps; r++)
	{
		double		t0;
		double		t1;
		lapack_int	info;

		fill(a, n);
		t0 = now();
		info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, a,
								   (lapack_int) n);
		t1 = now();
		if (info != 0)
		{
			fprintf(stderr, "dpotrf failed: info = %d\n", (int) info);
			return 1;
		}
		printf("seconds %.6f\n", t1 - t0);
		fflush(stdout);
	}
	printf("corename %s\n", openblas_get_corename());
	printf("config %s\n", openblas_get_config());
	free(a);
	return 0;
}
