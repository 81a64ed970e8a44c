/*
 * The exact epsilon-SVR core (src/core/svr.c) on one data set, for
 * test/bench/svr_core.py, which runs scikit-learn's SVR on the same data in
 * the same run.  Reads n_train + n_test rows of d doubles, then their n_train
 * + n_test targets, from a binary file; builds the full rbf Gram matrix
 * (km_gram_lower + km_symmetrize, OpenBLAS with THREADS threads, warmed up
 * first), solves the
 * dual with km_svr_dual and writes the held-out predictions (doubles) to
 * PRED_FILE.  Prints one line of JSON: times (gram, smo, total wall; cpu),
 * iterations, support vectors, intercept, the longest gap between two
 * interrupt checks in SMO.
 *     test/bench/svr_core FILE N_TRAIN N_TEST D C EPSILON GAMMA TOL THREADS PRED_FILE
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench.h"
#include "kernels.h"
#include "methods/svr.h"

extern void openblas_set_num_threads(int);

int
main(int argc, char **argv)
{
	size_t		n, nt, tot;
	int			d, threads;
	double		t0, t1, t2, cpu0;
	double	   *X, *y, *K, *norms, *coef, *work, *pred;
	km_kernel	k = {KM_KERNEL_RBF, 3, 0.0, 0.0};
	km_svr_problem pr;
	km_svm_params par;
	km_svm_result res;
	km_error	err;
	km_status	st;

	if (argc != 11)
	{
		fprintf(stderr, "usage: %s FILE N_TRAIN N_TEST D C EPSILON GAMMA TOL THREADS PRED_FILE\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	nt = strtoul(argv[3], NULL, 10);
	d = atoi(argv[4]);
	k.gamma = atof(argv[7]);
	threads = atoi(argv[9]);
	tot = n + nt;
	read_rows(argv[1], tot, d, &X, &y);
	openblas_set_num_threads(threads);
	norms = xmalloc(tot * sizeof(double));
	coef = xmalloc(n * sizeof(double));
	pred = xmalloc((nt ? nt : 1) * sizeof(double));
	work = xmalloc(km_svr_dual_doubles(n) * sizeof(double));

	/*
	 * OpenBLAS sets up its buffers on its first call (tens of ms): the
	 * scikit-learn side runs in a warm process, and so does a backend after
	 * its first fit, so that cost is paid here before the clock starts.
	 */
	{
		double		a[4] = {1, 0, 0, 1},
					c[4];

		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 2, a, 2,
					0.0, c, 2);
	}
	t0 = now();
	cpu0 = cpu_now();
	/* the Gram allocation and its first touch are part of the fit */
	K = xmalloc(n * n * sizeof(double));
	km_row_norms(&k, X, n, d, norms);
	km_gram_lower(&k, X, n, d, norms, K, n, NULL);
	km_symmetrize(K, n, n, NULL);
	t1 = now();
	gap_start();
	pr.K = K;
	pr.ld = n;
	pr.cols = NULL;
	pr.n = n;
	pr.y = y;
	pr.C = atof(argv[5]);
	pr.epsilon = atof(argv[6]);
	par = km_svm_params_default();
	par.tol = atof(argv[8]);
	st = km_svr_dual(&pr, &par, coef, &res, work, &err, gap_check);
	t2 = now();
	if (st != KM_OK)
		fprintf(stderr, "km_svr_dual: %s: %s\n", err.message, err.detail);

	for (size_t r = 0; r < nt; r++)
	{
		const double *x = X + (n + r) * d;

		pred[r] = res.b;
		for (size_t i = 0; i < n; i++)
			if (coef[i] != 0)
				pred[r] += coef[i] * km_kernel_eval(&k, X + i * d, x, d);
	}
	FILE	   *f = fopen(argv[10], "wb");
	if (!f || fwrite(pred, sizeof(double), nt, f) != nt)
		return 1;
	fclose(f);
	printf("{\"gram_s\": %.4f, \"smo_s\": %.4f, \"total_s\": %.4f, \"cpu_s\": %.4f, "
		   "\"iterations\": %llu, \"n_sv\": %u, \"n_bsv\": %u, \"b\": %.10g, "
		   "\"converged\": %s, \"gap_s\": %.4f}\n",
		   t1 - t0, t2 - t1, t2 - t0, cpu_now() - cpu0,
		   (unsigned long long) res.iterations, res.n_sv, res.n_bounded_sv, res.b,
		   res.converged ? "true" : "false", gap_max);
	free(K);
	return 0;
}
