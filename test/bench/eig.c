/*
 * LAPACK floor for model selection: times dsyevd (eigenvectors 'V' and
 * eigenvalues only 'N'), dpotrf, dpotri and dtrtri of the same n x n RBF
 * Gram matrix that kernel_train builds.  Built by test/bench/selection.py
 * at bench time:
 *
 *     gcc -O2 -o eig eig.c -llapacke -lopenblas -lm
 *     ./eig XFILE N D GAMMA LAMBDA THREADS REPS OP...
 *
 * XFILE holds the standardized training rows, N x D float64, row-major,
 * native byte order.  K[i][j] = exp(-GAMMA ||x_i - x_j||^2) is built once
 * (not timed); before each timed call the matrix is restored from a copy
 * (not timed).  OP is one of
 *   evd_v   LAPACKE_dsyevd_work('V', 'L') of K          (kernel_ml's eigen route)
 *   evd_n   LAPACKE_dsyevd_work('N', 'L') of K          (eigenvalues only)
 *   potrf   LAPACKE_dpotrf_work('L') of K + LAMBDA I
 *   potri   LAPACKE_dpotri_work('L') of that factor     (inverse from the factor)
 *   trtri   LAPACKE_dtrtri_work('L', 'N') of that factor (L^-1 only)
 * Workspace is allocated (by a size query) before timing.  Prints
 * "<op> seconds <t>" per repetition, then "corename <name>".
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cblas.h>
#include <lapacke.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void *
xmalloc(size_t bytes)
{
	void	   *p = malloc(bytes ? bytes : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
		exit(1);
	}
	return p;
}

static void
fail(const char *what, lapack_int info)
{
	fprintf(stderr, "%s failed: info = %d\n", what, (int) info);
	exit(1);
}

int
main(int argc, char **argv)
{
	size_t		n;
	int			d;
	double		gamma;
	double		lambda;
	int			threads;
	int			reps;
	double	   *X;
	double	   *K;
	double	   *A;
	double	   *F;
	double	   *w;
	FILE	   *f;

	if (argc < 9)
	{
		fprintf(stderr, "usage: %s XFILE N D GAMMA LAMBDA THREADS REPS OP...\n", argv[0]);
		return 2;
	}
	n = (size_t) strtoul(argv[2], NULL, 10);
	d = atoi(argv[3]);
	gamma = atof(argv[4]);
	lambda = atof(argv[5]);
	threads = atoi(argv[6]);
	reps = atoi(argv[7]);
	if (n == 0 || d < 1 || threads < 1 || reps < 1)
	{
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	openblas_set_num_threads(threads);

	X = xmalloc(n * (size_t) d * sizeof(double));
	f = fopen(argv[1], "rb");
	if (f == NULL || fread(X, sizeof(double), n * (size_t) d, f) != n * (size_t) d)
	{
		fprintf(stderr, "cannot read %zu x %d doubles from %s\n", n, d, argv[1]);
		return 1;
	}
	fclose(f);

	/* the Gram matrix, full, column-major */
	K = xmalloc(n * n * sizeof(double));
	for (size_t j = 0; j < n; j++)
	{
		K[j + j * n] = 1.0;
		for (size_t i = j + 1; i < n; i++)
		{
			double		s = 0.0;

			for (int k = 0; k < d; k++)
			{
				double		t = X[i * d + k] - X[j * d + k];

				s += t * t;
			}
			K[i + j * n] = K[j + i * n] = exp(-gamma * s);
		}
	}
	A = xmalloc(n * n * sizeof(double));
	F = xmalloc(n * n * sizeof(double));
	w = xmalloc(n * sizeof(double));

	/* the Cholesky factor of K + lambda I, for potri and trtri */
	memcpy(F, K, n * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		F[i + i * n] += lambda;
	{
		lapack_int	info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n,
											   F, (lapack_int) n);

		if (info != 0)
			fail("dpotrf", info);
	}

	for (int o = 8; o < argc; o++)
	{
		const char *op = argv[o];
		char		jobz = 0;
		double	   *work = NULL;
		lapack_int *iwork = NULL;
		lapack_int	lwork = 0;
		lapack_int	liwork = 0;

		if (strcmp(op, "evd_v") == 0)
			jobz = 'V';
		else if (strcmp(op, "evd_n") == 0)
			jobz = 'N';
		else if (strcmp(op, "potrf") != 0 && strcmp(op, "potri") != 0 &&
				 strcmp(op, "trtri") != 0)
		{
			fprintf(stderr, "unknown op %s\n", op);
			return 2;
		}
		if (jobz)
		{
			double		wq;
			lapack_int	iq;
			lapack_int	info;

			info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'L', (lapack_int) n,
									   A, (lapack_int) n, w, &wq, -1, &iq, -1);
			if (info != 0)
				fail("dsyevd workspace query", info);
			lwork = (lapack_int) wq;
			liwork = iq;
			work = xmalloc((size_t) lwork * sizeof(double));
			iwork = xmalloc((size_t) liwork * sizeof(lapack_int));
		}
		for (int r = 0; r < reps; r++)
		{
			double		t0;
			double		t1;
			lapack_int	info;

			if (jobz || strcmp(op, "potrf") == 0)
			{
				memcpy(A, K, n * n * sizeof(double));
				if (!jobz)
					for (size_t i = 0; i < n; i++)
						A[i + i * n] += lambda;
			}
			else
				memcpy(A, F, n * n * sizeof(double));

			t0 = now();
			if (jobz)
				info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, 'L', (lapack_int) n,
										   A, (lapack_int) n, w, work, lwork,
										   iwork, liwork);
			else if (strcmp(op, "potrf") == 0)
				info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n,
										   A, (lapack_int) n);
			else if (strcmp(op, "potri") == 0)
				info = LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n,
										   A, (lapack_int) n);
			else
				info = LAPACKE_dtrtri_work(LAPACK_COL_MAJOR, 'L', 'N', (lapack_int) n,
										   A, (lapack_int) n);
			t1 = now();
			if (info != 0)
				fail(op, info);
			printf("%s seconds %.6f\n", op, t1 - t0);
			if (jobz)
				printf("%s eigenvalues %.6g %.6g\n", op, w[0], w[n - 1]);
			fflush(stdout);
		}
		free(work);
		free(iwork);
	}
	printf("corename %s\n", openblas_get_corename());
	free(X);
	free(K);
	free(A);
	free(F);
	free(w);
	return 0;
}
