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
 *   km_n    kernel_check's route since 0.2.0 (src/core/base/eigen.c): km_tridiagonalize,
 *           then the extreme eigenvalues by bisection (dstebz)
 *   steps   the pieces one by one: km_tridiagonalize, dsterf and dstedc of
 *           the tridiagonal (one LAPACK call each: timed to show why the
 *           extension does without them), km_back_transform of dstedc's
 *           vectors
 * km_n and steps also print "gap", the longest time between two interrupt
 * checks (or the start or end of the step): the longest piece a cancel
 * would wait for, in wall time and in process CPU time (free of the
 * machine's load); after evd_v or evd_n they print the largest difference
 * of the eigenvalues (km_n: the two extremes) from dsyevd's, relative to
 * the largest.  test/bench/loo.c times the closed-form LOO route itself.
 * XFILE "random:SEED" draws N x D uniform features instead; GAMMA 0 means
 * the linear kernel K = X X^T (little deflation in dstedc when D >= N).
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

#include "bench.h"

/* the core's eigensolver, built in: the bench needs no build system */
#include "../../src/core/base/core.c"
#include "../../src/core/base/eigen.c"

static void
fail(const char *what, lapack_int info)
{
	fprintf(stderr, "%s failed: info = %d\n", what, (int) info);
	exit(1);
}

/* max |w - wref| / max |wref| */
static double
eig_diff(const double *w, const double *wref, size_t n)
{
	double		top = fmax(fabs(wref[0]), fabs(wref[n - 1]));
	double		diff = 0.0;

	for (size_t i = 0; i < n; i++)
		diff = fmax(diff, fabs(w[i] - wref[i]));
	return diff / top;
}

static void
km_ops(const char *op, const double *K, double *A, size_t n, double *w,
	   const double *wref, bool have_ref, int reps)
{
	bool		steps = strcmp(op, "steps") == 0;
	double	   *e = xmalloc(n * sizeof(double));
	double	   *tau = xmalloc(n * sizeof(double));
	double	   *W = xmalloc((n * KM_TRD_MAX_NB + km_back_transform_doubles(n)) * sizeof(double));
	double	   *Z = steps ? xmalloc(n * n * sizeof(double)) : NULL;
	double	   *zwork = xmalloc((1 + 4 * n + (steps ? n * n : 0)) * sizeof(double));
	int		   *iwork = xmalloc((3 + 5 * n) * sizeof(int));

	if (!steps && strcmp(op, "km_n") != 0)
	{
		fprintf(stderr, "unknown op %s\n", op);
		exit(2);
	}
	for (int r = 0; r < reps; r++)
	{
		double		t0;

		memcpy(A, K, n * n * sizeof(double));
		gap_start();
		t0 = now();
		km_tridiagonalize(A, n, 0, w, e, tau, W, gap_check);
		gap_check();
		printf("trd seconds %.6f gap %.6f cpu gap %.6f nb %d\n", now() - t0, gap_max,
			   gap_cpu_max, km_tridiag_panel_width(n));
		if (!steps)
		{
			double		lo;
			double		hi;

			gap_start();
			t0 = now();
			lo = km_tridiag_eigenvalue(w, e, n, 0, zwork, iwork);
			hi = km_tridiag_eigenvalue(w, e, n, n - 1, zwork, iwork);
			gap_check();
			printf("extremes seconds %.6f gap %.6f cpu gap %.6f\n", now() - t0,
				   gap_max, gap_cpu_max);
			if (have_ref)
				printf("km_n extreme eigenvalue difference %.3g (relative to the largest)\n",
					   fmax(fabs(lo - wref[0]), fabs(hi - wref[n - 1])) / fmax(fabs(wref[0]), fabs(wref[n - 1])));
		}
		else
		{
			double	   *d2 = xmalloc(n * sizeof(double));
			double	   *e2 = xmalloc(n * sizeof(double));
			lapack_int	info;

			memcpy(d2, w, n * sizeof(double));
			memcpy(e2, e, n * sizeof(double));
			gap_start();
			t0 = now();
			info = LAPACKE_dsterf_work((lapack_int) n, d2, e2);
			gap_check();
			printf("sterf seconds %.6f gap %.6f cpu gap %.6f (one call, not used)\n",
				   now() - t0, gap_max, gap_cpu_max);
			if (info != 0)
				fail("dsterf", info);
			if (have_ref)
				printf("steps eigenvalue difference %.3g (relative to the largest)\n",
					   eig_diff(d2, wref, n));
			gap_start();
			t0 = now();
			info = LAPACKE_dstedc_work(LAPACK_COL_MAJOR, 'I', (lapack_int) n, w, e,
									   Z, (lapack_int) n, zwork,
									   (lapack_int) (1 + 4 * n + n * n), iwork,
									   (lapack_int) (3 + 5 * n));
			gap_check();
			printf("stedc seconds %.6f gap %.6f cpu gap %.6f (one call, not used)\n",
				   now() - t0, gap_max, gap_cpu_max);
			if (info != 0)
				fail("dstedc", info);
			gap_start();
			t0 = now();
			km_back_transform(A, n, tau, Z, W, gap_check);
			gap_check();
			printf("back seconds %.6f gap %.6f cpu gap %.6f\n", now() - t0, gap_max, gap_cpu_max);
			free(d2);
			free(e2);
		}
		fflush(stdout);
	}
	free(e);
	free(tau);
	free(W);
	free(Z);
	free(zwork);
	free(iwork);
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
	double	   *wref;
	bool		have_ref = false;
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
	if (strncmp(argv[1], "random:", 7) == 0)
	{
		uint64_t	s = strtoull(argv[1] + 7, NULL, 10) * 2654435761u + 1;

		for (size_t i = 0; i < n * (size_t) d; i++)
		{
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			X[i] = (double) (s >> 11) / 9007199254740992.0 - 0.5;
		}
	}
	else
	{
		f = fopen(argv[1], "rb");
		if (f == NULL || fread(X, sizeof(double), n * (size_t) d, f) != n * (size_t) d)
		{
			fprintf(stderr, "cannot read %zu x %d doubles from %s\n", n, d, argv[1]);
			return 1;
		}
		fclose(f);
	}

	/* the Gram matrix, full, column-major */
	K = xmalloc(n * n * sizeof(double));
	if (gamma == 0.0)
	{
		cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) n, (int) n, d,
					1.0, X, d, X, d, 0.0, K, (int) n);
		/* exactly symmetric, as the lower triangle is all LAPACK reads */
		for (size_t j = 0; j < n; j++)
			for (size_t i = j + 1; i < n; i++)
				K[j + i * n] = K[i + j * n];
	}
	else
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

	wref = xmalloc(n * sizeof(double));
	/* the Cholesky factor of K + lambda I, for potri and trtri */
	memcpy(F, K, n * n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		F[i + i * n] += lambda;
	for (int o = 8; o < argc; o++)
	{
		if (strcmp(argv[o], "potri") != 0 && strcmp(argv[o], "trtri") != 0)
			continue;
		lapack_int	info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n,
											   F, (lapack_int) n);

		if (info != 0)
			fail("dpotrf", info);
		break;
	}

	for (int o = 8; o < argc; o++)
	{
		const char *op = argv[o];
		char		jobz = 0;
		double	   *work = NULL;
		lapack_int *iwork = NULL;
		lapack_int	lwork = 0;
		lapack_int	liwork = 0;

		if (strncmp(op, "km_", 3) == 0 || strcmp(op, "steps") == 0)
		{
			km_ops(op, K, A, n, w, wref, have_ref, reps);
			continue;
		}
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
			{
				printf("%s eigenvalues %.6g %.6g\n", op, w[0], w[n - 1]);
				memcpy(wref, w, n * sizeof(double));
				have_ref = true;
			}
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
