/*
 * The exact one-class SVM core (src/core/methods/oneclass.c) on one data
 * set, for test/bench/oneclass_core.py, which runs scikit-learn's
 * OneClassSVM on the same data in the same run.  Reads n_train + n_test rows
 * of d doubles from a binary file; solves the dual with km_oneclass_dual on
 * rbf columns computed on demand through a column cache of CACHE_MB (as the
 * exact svm fit does, kernels.h KM_GRAM_COLS_BYTES; 0: the full Gram matrix
 * by km_gram_lower + km_symmetrize, OpenBLAS with THREADS threads) and
 * writes the held-out decision values (doubles) to DEC_FILE.  Prints one
 * line of JSON: times (setup, smo, total wall; cpu), iterations, support
 * vectors, intercept, columns computed, the longest gap between two
 * interrupt checks in SMO.
 *     test/bench/oneclass_core FILE N_TRAIN N_TEST D NU GAMMA TOL THREADS CACHE_MB DEC_FILE
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench.h"
#include "kernels.h"
#include "methods/oneclass.h"

extern void openblas_set_num_threads(int);

int
main(int argc, char **argv)
{
	size_t		n, nt, tot, slots = 0;
	int			d, threads;
	double		t0, t1, t2, cpu0, cache_mb;
	double	   *X, *y, *K, *norms, *alpha, *work, *dec;
	km_kernel	k = {KM_KERNEL_RBF, 3, 0.0, 0.0};
	km_gram_cols cols;
	km_oneclass_problem pr;
	km_svm_params par;
	km_svm_result res;
	km_error	err;
	km_status	st;

	if (argc != 11)
	{
		fprintf(stderr, "usage: %s FILE N_TRAIN N_TEST D NU GAMMA TOL THREADS CACHE_MB DEC_FILE\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	nt = strtoul(argv[3], NULL, 10);
	d = atoi(argv[4]);
	k.gamma = atof(argv[6]);
	threads = atoi(argv[8]);
	cache_mb = atof(argv[9]);
	tot = n + nt;
	read_rows(argv[1], tot, d, &X, &y);
	openblas_set_num_threads(threads);
	norms = xmalloc(tot * sizeof(double));
	alpha = xmalloc(n * sizeof(double));
	dec = xmalloc((nt ? nt : 1) * sizeof(double));
	work = xmalloc(km_oneclass_dual_doubles(n) * sizeof(double));
	{
		/* OpenBLAS's first call sets up its buffers: paid before the clock */
		double		a[4] = {1, 0, 0, 1},
					c[4];

		cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 2, 2, 2, 1.0, a, 2, a, 2,
					0.0, c, 2);
	}
	t0 = now();
	cpu0 = cpu_now();
	km_row_norms(&k, X, n, d, norms);
	memset(&pr, 0, sizeof(pr));
	if (cache_mb > 0)
	{
		slots = km_gram_cols_slots(n, (size_t) (cache_mb * 1048576.0));
		K = xmalloc((slots * n + km_gram_cols_table_doubles(n, slots)) * sizeof(double));
		km_gram_cols_init(&cols, &k, X, n, d, norms, K, n, slots, K + slots * n);
		pr.cols = &cols;
	}
	else
	{
		K = xmalloc(n * n * sizeof(double));
		km_gram_lower(&k, X, n, d, norms, K, n, NULL);
		km_symmetrize(K, n, n, NULL);
		pr.K = K;
	}
	pr.ld = n;
	pr.n = n;
	pr.nu = atof(argv[5]);
	t1 = now();
	gap_start();
	par = km_svm_params_default();
	par.tol = atof(argv[7]);
	st = km_oneclass_dual(&pr, &par, alpha, &res, work, &err, gap_check);
	t2 = now();
	if (st != KM_OK)
		fprintf(stderr, "km_oneclass_dual: %s: %s\n", err.message, err.detail);

	for (size_t r = 0; r < nt; r++)
	{
		const double *x = X + (n + r) * d;

		dec[r] = res.b;
		for (size_t i = 0; i < n; i++)
			if (alpha[i] != 0)
				dec[r] += alpha[i] * km_kernel_eval(&k, X + i * d, x, d);
	}
	FILE	   *f = fopen(argv[10], "wb");
	if (!f || fwrite(dec, sizeof(double), nt, f) != nt)
		return 1;
	fclose(f);
	printf("{\"setup_s\": %.4f, \"smo_s\": %.4f, \"total_s\": %.4f, \"cpu_s\": %.4f, "
		   "\"iterations\": %llu, \"n_sv\": %u, \"n_bsv\": %u, \"b\": %.10g, "
		   "\"converged\": %s, \"columns\": %zu, \"gap_s\": %.4f}\n",
		   t1 - t0, t2 - t1, t2 - t0, cpu_now() - cpu0,
		   (unsigned long long) res.iterations, res.n_sv, res.n_bounded_sv, res.b,
		   res.converged ? "true" : "false", cache_mb > 0 ? cols.computed : n, gap_max);
	free(K);
	return 0;
}
