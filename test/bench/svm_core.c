/*
 * The exact SVM core (src/core/methods/svm.c) on one data set, for
 * test/bench/svm_core.py, which runs scikit-learn's SVC on the same data in
 * the same run.  Reads n_train + n_test rows of d doubles then their labels
 * (+1 / -1, as doubles) from a binary file, builds the full rbf Gram matrix
 * (km_gram_lower + km_symmetrize, OpenBLAS with THREADS threads, as the
 * backend does with kernel_ml.blas_threads), solves the dual with
 * km_svm_binary and scores the held-out rows.  Prints one line of JSON:
 * times (first touch of the Gram allocation, gram, smo, total wall; cpu), iterations, support vectors, held-out accuracy,
 * the longest gaps between two interrupt checks in the Gram build and in SMO.
 * With ON_DEMAND 1 (what kernel_train does for an svm without probabilities),
 * the Gram space is mapped but not populated and SMO computes its columns
 * when it first reads them (kernels.h km_gram_cols): smo_s then includes
 * them, and "columns" says how many it computed.
 *     test/bench/svm_core FILE N_TRAIN N_TEST D C GAMMA TOL THREADS SHRINKING [ON_DEMAND]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <sys/mman.h>

#include <cblas.h>

#include "bench.h"
#include "kernels.h"
#include "svm.h"

extern void openblas_set_num_threads(int);

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

typedef struct half
{
	char	   *start;
	size_t		bytes;
} half;

static void *
populate(void *arg)
{
	half	   *h = arg;

	if (madvise(h->start, h->bytes, MADV_POPULATE_WRITE) != 0)
		memset(h->start, 0, h->bytes);
	return NULL;
}

/*
 * The n x n Gram allocation populated as the backend does it (src/pg/pgutil.c
 * km_populate_ranges: MADV_POPULATE_WRITE, half on a helper thread): page
 * faults are the hypervisor's work on this VM and cost about 1.4 s a GB.
 */
static double *
alloc_populated(size_t bytes)
{
	size_t		page = 4096;
	size_t		len = (bytes + page - 1) / page * page;
	char	   *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	half		h[2];
	pthread_t	th;

	if (p == MAP_FAILED)
	{
		fprintf(stderr, "mmap of %zu bytes failed\n", len);
		exit(1);
	}
	h[0].start = p;
	h[0].bytes = len / 2 / page * page;
	h[1].start = p + h[0].bytes;
	h[1].bytes = len - h[0].bytes;
	pthread_create(&th, NULL, populate, &h[1]);
	populate(&h[0]);
	pthread_join(th, NULL);
	return (double *) p;
}

int
main(int argc, char **argv)
{
	size_t		n, nt, tot;
	int			d, threads, shrinking;
	double		C, gamma, tol, t0, t1, t2, cpu0, gram_gap, ttouch;
	double	   *X, *y, *K, *norms, *coef, *Cv, *work;
	km_kernel	k;
	km_svm_problem pr;
	km_gram_cols cols;
	double	   *tables;
	size_t		slots;
	int			on_demand;
	km_svm_params par;
	km_svm_result res;
	km_error	err;
	km_status	st;
	size_t		correct = 0;

	if (argc != 10 && argc != 11)
	{
		fprintf(stderr, "usage: %s FILE N_TRAIN N_TEST D C GAMMA TOL THREADS SHRINKING [ON_DEMAND]\n", argv[0]);
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
	on_demand = argc == 11 && atoi(argv[10]) != 0;
	tot = n + nt;
	read_rows(argv[1], tot, d, &X, &y);
	openblas_set_num_threads(threads);
	k.type = KM_KERNEL_RBF;
	k.degree = 3;
	k.gamma = gamma;
	k.coef0 = 0;
	norms = xmalloc(tot * sizeof(double));
	coef = xmalloc(n * sizeof(double));
	Cv = xmalloc(n * sizeof(double));
	work = xmalloc(km_svm_binary_doubles(n) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		Cv[i] = C;
	t0 = now();
	cpu0 = cpu_now();
	/* allocating the n x n Gram matrix is part of the fit: the backend pays it too */
	/* the column cache: KM_SVM_CACHE_MB (default kernels.h KM_GRAM_COLS_BYTES) */
	slots = km_gram_cols_slots(n, getenv("KM_SVM_CACHE_MB") ?
							   (size_t) atol(getenv("KM_SVM_CACHE_MB")) << 20 : KM_GRAM_COLS_BYTES);
	tables = xmalloc(km_gram_cols_table_doubles(n, slots) * sizeof(double));
	if (on_demand)
	{
		K = mmap(NULL, slots * n * sizeof(double), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (K == MAP_FAILED)
			return 1;
	}
	else
		K = alloc_populated(n * n * sizeof(double));
	ttouch = now();
	gap_start();
	km_row_norms(&k, X, n, d, norms);
	if (on_demand)
		km_gram_cols_init(&cols, &k, X, n, d, norms, K, n, slots, tables);
	else
	{
		km_gram_lower(&k, X, n, d, norms, K, n, gap_check);
		km_symmetrize(K, n, n, gap_check);
	}
	t1 = now();
	gram_gap = gap_max;
	gap_start();
	pr.K = K;
	pr.ld = n;
	pr.rows = NULL;
	pr.m = n;
	pr.y = y;
	pr.C = Cv;
	pr.cols = on_demand ? &cols : NULL;
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
	printf("{\"touch_s\": %.4f, \"gram_s\": %.4f, \"smo_s\": %.4f, \"total_s\": %.4f, \"cpu_s\": %.4f, "
		   "\"iterations\": %llu, \"n_sv\": %u, \"n_bsv\": %u, \"b\": %.10g, "
		   "\"objective\": %.10g, \"converged\": %s, \"accuracy\": %.6f, \"gram_gap_s\": %.4f, \"gap_s\": %.4f, "
		   "\"columns\": %zu}\n",
		   ttouch - t0, t1 - ttouch, t2 - t1, t2 - t0, cpu_now() - cpu0, (unsigned long long) res.iterations,
		   res.n_sv, res.n_bounded_sv, res.b, res.objective,
		   res.converged ? "true" : "false", (double) correct / nt, gram_gap, gap_max,
		   on_demand ? cols.computed : n);
	return 0;
}
