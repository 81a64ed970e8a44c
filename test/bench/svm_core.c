/*
 * The exact SVM core (src/core/svm.c) on one data set, for
 * test/bench/svm_core.py, which runs scikit-learn's SVC on the same data in
 * the same run.  Reads n_train + n_test rows of d doubles then their labels
 * (+1 / -1, as doubles) from a binary file, builds the full rbf Gram matrix
 * (km_gram_lower + km_symmetrize, OpenBLAS with THREADS threads, as the
 * backend does with kernel_ml.blas_threads), solves the dual with
 * km_svm_binary and scores the held-out rows.  Prints one line of JSON:
 * times (gram, smo, total), iterations, support vectors, held-out accuracy,
 * the longest gaps between two interrupt checks in the Gram build and in SMO.
 *     test/bench/svm_core FILE N_TRAIN N_TEST D C GAMMA TOL THREADS SHRINKING
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "bench.h"
#include "kernels.h"
#include "svm.h"

extern void openblas_set_num_threads(int);

int
main(int argc, char **argv)
{
	FILE	   *f;
	size_t		n, nt, tot;
	int			d, threads, shrinking;
	double		C, gamma, tol, t0, t1, t2, cpu0, gram_gap;
	double	   *X, *y, *K, *norms, *coef, *Cv, *work;
	km_kernel	k;
	km_svm_problem pr;
	km_svm_params par;
	km_svm_result res;
	km_error	err;
	km_status	st;
	size_t		correct = 0;

	if (argc != 10)
	{
		fprintf(stderr, "usage: %s FILE N_TRAIN N_TEST D C GAMMA TOL THREADS SHRINKING\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	nt = strtoul(argv[3], NULL, 10);
	d = atoi(argv[4]);
	C = atof(argv[5]);
	gamma = atof(argv[6]);
	tol = atof(argv[7]);
	threads = atoi(argv[8]);
	shrinking = atoi(argv[9]);
	tot = n + nt;
	X = xmalloc(tot * d * sizeof(double));
	y = xmalloc(tot * sizeof(double));
	f = fopen(argv[1], "rb");
	if (!f || fread(X, sizeof(double), tot * d, f) != tot * d ||
		fread(y, sizeof(double), tot, f) != tot)
	{
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(f);
	openblas_set_num_threads(threads);
	k.type = KM_KERNEL_RBF;
	k.degree = 3;
	k.gamma = gamma;
	k.coef0 = 0;
	K = xmalloc(n * n * sizeof(double));
	norms = xmalloc(tot * sizeof(double));
	coef = xmalloc(n * sizeof(double));
	Cv = xmalloc(n * sizeof(double));
	work = xmalloc(km_svm_binary_doubles(n) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		Cv[i] = C;
	/* touch the Gram matrix first, as palloc'd memory would be */
	memset(K, 0, n * n * sizeof(double));

	gap_start();
	t0 = now();
	cpu0 = cpu_now();
	km_row_norms(&k, X, n, d, norms);
	km_gram_lower(&k, X, n, d, norms, K, n, gap_check);
	km_symmetrize(K, n, n, gap_check);
	t1 = now();
	gram_gap = gap_max;
	gap_start();
	pr.K = K;
	pr.ld = n;
	pr.rows = NULL;
	pr.m = n;
	pr.y = y;
	pr.C = Cv;
	par = km_svm_params_default();
	par.tol = tol;
	par.shrinking = shrinking != 0;
	st = km_svm_binary(&pr, &par, coef, &res, work, &err, gap_check);
	t2 = now();
	if (st != KM_OK)
		fprintf(stderr, "km_svm_binary: %s: %s\n", err.message, err.detail);

	/* held-out accuracy: f(x) = sum coef_i K(x_i, x) + b over the support vectors */
	for (size_t r = 0; r < nt; r++)
	{
		const double *x = X + (n + r) * d;
		double		fx = res.b;

		for (size_t i = 0; i < n; i++)
			if (coef[i] != 0)
				fx += coef[i] * km_kernel_eval(&k, X + i * d, x, d);
		correct += (fx > 0 ? 1.0 : -1.0) == y[n + r];
	}
	printf("{\"gram_s\": %.4f, \"smo_s\": %.4f, \"total_s\": %.4f, \"cpu_s\": %.4f, "
		   "\"iterations\": %llu, \"n_sv\": %u, \"n_bsv\": %u, \"b\": %.10g, "
		   "\"objective\": %.10g, \"converged\": %s, \"accuracy\": %.6f, \"gram_gap_s\": %.4f, \"gap_s\": %.4f}\n",
		   t1 - t0, t2 - t1, t2 - t0, cpu_now() - cpu0, (unsigned long long) res.iterations,
		   res.n_sv, res.n_bounded_sv, res.b, res.objective,
		   res.converged ? "true" : "false", (double) correct / nt, gram_gap, gap_max);
	return 0;
}
