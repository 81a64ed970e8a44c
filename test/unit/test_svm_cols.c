/*
 * test_svm_cols.c - the exact SVM with Gram columns computed on demand
 * (kernels.h km_gram_cols, the path km_fit_classes takes for svm/SMO
 * without probabilities) against scikit-learn's SVC (fixtures/svm_fixtures.h,
 * from test/unit/gen_svm_fixtures.py) and against the same solver on the
 * full Gram matrix.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "classify_fit.h"
#include "kernels.h"
#include "method.h"
#include "svm.h"
#include "unit.h"
#include "fixtures/svm_fixtures.h"

void		test_svm_cols_columns(void);
void		test_svm_cols_breast_cancer(void);
void		test_svm_cols_wine_ovo(void);
void		test_svm_cols_fit_classes(void);
void		test_svm_cols_small_cache(void);

/* Standardized copy of Xr (mean, population std), as the generator does. */
static double *
standardized(const double *Xr, size_t n, int d)
{
	double	   *X = malloc(n * d * sizeof(double));

	for (int j = 0; j < d; j++)
	{
		double		mu = 0,
					ss = 0;

		for (size_t i = 0; i < n; i++)
			mu += Xr[i * d + j];
		mu /= n;
		for (size_t i = 0; i < n; i++)
			ss += (Xr[i * d + j] - mu) * (Xr[i * d + j] - mu);
		ss = sqrt(ss / n);
		for (size_t i = 0; i < n; i++)
			X[i * d + j] = (Xr[i * d + j] - mu) / ss;
	}
	return X;
}

/*
 * Every column on demand is the full Gram matrix's column to rounding (one
 * DGEMV against a DGEMM panel), its diagonal exactly.
 */
void
test_svm_cols_columns(void)
{
	size_t		n = BC_N;
	int			d = BC_D;
	double	   *X = standardized(bc_X, n, d);
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / BC_D, 0.0};
	double	   *K = unit_full_gram(&k, X, n, d);
	double	   *L = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *tables = malloc(km_gram_cols_table_doubles(n, n) * sizeof(double));
	km_gram_cols c;
	double		worst = 0;

	CHECK(km_gram_cols_supported(&k), "rbf is supported");
	k.type = KM_KERNEL_POLY;
	CHECK(!km_gram_cols_supported(&k), "polynomial (can overflow) is not");
	k.type = KM_KERNEL_RBF;
	km_row_norms(&k, X, n, d, norms);
	km_gram_cols_init(&c, &k, X, n, d, norms, L, n, n, tables);
	for (size_t j = n; j-- > 0;)
	{
		const double *col = km_gram_cols_get(&c, j);

		CHECK(col == L + (n - 1 - j) * n, "column %zu in slot %zu", j, n - 1 - j);
		CHECK(km_gram_cols_diag(&c, j) == K[j + j * n], "diagonal %zu", j);
		for (size_t i = 0; i < n; i++)
			worst = fmax(worst, fabs(col[i] - K[i + j * n]));
	}
	CHECK(c.computed == n, "computed %zu columns", c.computed);
	/* a second request does not recompute */
	km_gram_cols_get(&c, 0);
	CHECK(c.computed == n, "computed %zu columns", c.computed);
	CHECK(worst <= 1e-14, "columns differ from the Gram matrix by %g", worst);
	free(X);
	free(K);
	free(L);
	free(norms);
	free(tables);
}

/* km_svm_train with columns on demand: libsvm's numbers, fewer columns than rows. */
void
test_svm_cols_breast_cancer(void)
{
	size_t		n = BC_N;
	int			d = BC_D;
	double	   *X = standardized(bc_X, n, d);
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / BC_D, 0.0};
	double	   *K = unit_full_gram(&k, X, n, d);
	double	   *L = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *tables = malloc(km_gram_cols_table_doubles(n, n) * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *alpha_full = malloc(n * sizeof(double));
	double	   *dec = malloc(n * sizeof(double));
	double	   *work = malloc(km_svm_train_doubles(n, 2, false) * sizeof(double));
	double		c10[2] = {10.0, 10.0};
	double		b,
				b_full;
	km_svm_multi_problem mp = {K, n, n, cls, 2, c10, NULL, 0, NULL};
	km_svm_params par = km_svm_params_default();
	km_svm_multi_result res,
				res_full;
	km_error	err;
	km_gram_cols c;
	int			nsv = 0,
				same = 1;

	for (size_t i = 0; i < n; i++)
		cls[i] = (uint32_t) bc_y[i];
	par.tol = 1e-6;
	CHECK(km_svm_train(&mp, &par, alpha_full, &b_full, NULL, NULL, &res_full, work,
					   &err, NULL) == KM_OK, "full: %s", err.message);

	km_row_norms(&k, X, n, d, norms);
	km_gram_cols_init(&c, &k, X, n, d, norms, L, n, n, tables);
	mp.K = L;
	mp.cols = &c;
	CHECK(km_svm_train(&mp, &par, alpha, &b, NULL, NULL, &res, work, &err, NULL) == KM_OK,
		  "on demand: %s", err.message);
	/* decision values from the full matrix: the columns it never computed are not read */
	cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, K, (int) n,
				alpha, 1, 0.0, dec, 1);
	for (size_t i = 0; i < n; i++)
		dec[i] += b;
	CHECK(unit_rel_diff(dec, bc_c10_dec, n) <= 1e-4, "decision values differ from SVC by %g",
		  unit_rel_diff(dec, bc_c10_dec, n));
	CHECK(fabs(b - bc_c10_b) <= 1e-4, "b %.10g vs SVC %.10g", b, bc_c10_b);
	for (size_t i = 0; i < n; i++)
		if (alpha[i] != 0)
		{
			if (nsv >= BC_C10_NSV || bc_c10_sv[nsv] != (int) i)
				same = 0;
			nsv++;
		}
	CHECK(same && nsv == BC_C10_NSV, "support set differs (%d vs %d)", nsv, BC_C10_NSV);
	/*
	 * Columns equal the full matrix's to rounding, and SMO at tol 1e-6 may
	 * then take another iteration or two (the ASan build maps without the
	 * vector exp): the same optimum to the tolerance, not bit for bit.
	 */
	CHECK(unit_rel_diff(alpha, alpha_full, n) <= 1e-5, "coefficients differ from the full path by %g",
		  unit_rel_diff(alpha, alpha_full, n));
	CHECK(fabs(b - b_full) <= 1e-6, "b %.17g vs full %.17g", b, b_full);
	CHECK(res.iterations <= res_full.iterations + 10 && res_full.iterations <= res.iterations + 10,
		  "iterations %llu vs %llu", (unsigned long long) res.iterations,
		  (unsigned long long) res_full.iterations);
	/* every support vector's column was computed, and not every row's */
	for (size_t i = 0; i < n; i++)
		if (alpha[i] != 0)
			CHECK(c.slot_of[i] != UINT32_MAX, "support vector %zu has no column", i);
	CHECK(c.computed < n, "computed %zu of %zu columns", c.computed, n);
	free(X);
	free(K);
	free(L);
	free(norms);
	free(tables);
	free(cls);
	free(alpha);
	free(alpha_full);
	free(dec);
	free(work);
}

/* One-vs-one on wine: libsvm's decision values with columns on demand. */
void
test_svm_cols_wine_ovo(void)
{
	size_t		n = WINE_N;
	int			d = WINE_D;
	double	   *X = standardized(wine_X, n, d);
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / WINE_D, 0.0};
	double	   *L = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *tables = malloc(km_gram_cols_table_doubles(n, n) * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	double	   *alpha = malloc(n * 3 * sizeof(double));
	double	   *work = malloc(km_svm_train_doubles(n, 3, false) * sizeof(double));
	double		C[3] = {1, 1, 1};
	double		b[3];
	km_svm_multi_problem mp = {L, n, n, cls, 3, C, NULL, 0, NULL};
	km_svm_params par = km_svm_params_default();
	km_svm_multi_result res;
	km_error	err;
	km_gram_cols c;
	double		worst = 0,
				top = 0;

	for (size_t i = 0; i < n; i++)
		cls[i] = (uint32_t) wine_y[i];
	km_row_norms(&k, X, n, d, norms);
	km_gram_cols_init(&c, &k, X, n, d, norms, L, n, n, tables);
	mp.cols = &c;
	par.tol = 1e-6;
	CHECK(km_svm_train(&mp, &par, alpha, b, NULL, NULL, &res, work, &err, NULL) == KM_OK,
		  "%s", err.message);
	for (size_t i = 0; i < n; i++)
		for (uint32_t p = 0; p < 3; p++)
		{
			double		f = b[p];

			for (size_t j = 0; j < n; j++)
				if (alpha[j + p * n] != 0)
					f += alpha[j + p * n] * km_gram_cols_get(&c, j)[i];
			worst = fmax(worst, fabs(f - wine_dec[i * 3 + p]));
			top = fmax(top, fabs(wine_dec[i * 3 + p]));
		}
	CHECK(worst <= 1e-4 * top, "decision values differ from SVC by %g (largest %g)", worst, top);
	free(X);
	free(L);
	free(norms);
	free(tables);
	free(cls);
	free(alpha);
	free(work);
}

/*
 * km_fit_classes takes the on-demand path for svm without probabilities:
 * the coefficients and intercept of km_svm_train on the full Gram matrix (to
 * the solver's tolerance) and the training accuracy of its decision values.
 */
void
test_svm_cols_fit_classes(void)
{
	size_t		n = BC_N;
	int			d = BC_D;
	double	   *X = standardized(bc_X, n, d);
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / BC_D, 0.0};
	double	   *K = unit_full_gram(&k, X, n, d);
	km_fit_params p;
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *alpha_full = malloc(n * sizeof(double));
	double	   *dec = malloc(n * sizeof(double));
	double	   *swork = malloc(km_svm_train_doubles(n, 2, false) * sizeof(double));
	double	   *work;
	double		class_w[2] = {1, 1};
	double		Cc[2];
	double		b,
				b_full,
				pa,
				pb;
	km_svm_multi_problem mp = {K, n, n, cls, 2, Cc, NULL, 0, NULL};
	km_svm_params par = km_svm_params_default();
	km_svm_multi_result mres;
	km_class_fit_result res;
	km_error	err;
	size_t		correct = 0;

	memset(&p, 0, sizeof(p));
	p.kernel = k;
	p.method = KM_METHOD_SVM;
	p.lambda = 1.0 / (10.0 * n);	/* C = 10 */
	p.tol = 1e-6;
	CHECK(km_fit_classes_gram_on_demand(&p), "svm/SMO/rbf computes columns on demand");
	p.probability = true;
	CHECK(!km_fit_classes_gram_on_demand(&p), "not with probabilities");
	p.probability = false;
	work = malloc(km_fit_classes_doubles(&p, n, 2) * sizeof(double));
	for (size_t i = 0; i < n; i++)
		cls[i] = (uint32_t) bc_y[i];
	CHECK(km_fit_classes(&p, X, n, d, cls, 2, class_w, NULL, 0, alpha, &b, &pa, &pb,
						 work, &res, &err, NULL) == KM_OK, "%s", err.message);

	Cc[0] = Cc[1] = km_svm_C(p.lambda, n);
	par.tol = p.tol;
	CHECK(km_svm_train(&mp, &par, alpha_full, &b_full, NULL, NULL, &mres, swork, &err,
					   NULL) == KM_OK, "%s", err.message);
	CHECK(unit_rel_diff(alpha, alpha_full, n) <= 1e-5, "coefficients differ by %g",
		  unit_rel_diff(alpha, alpha_full, n));
	CHECK(fabs(b - b_full) <= 1e-6, "b %.17g vs %.17g", b, b_full);
	cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, K, (int) n,
				alpha_full, 1, 0.0, dec, 1);
	for (size_t i = 0; i < n; i++)
		correct += ((dec[i] + b_full > 0) ? 1u : 0u) == cls[i];
	CHECK(res.train_accuracy == (double) correct / n, "training accuracy %.17g vs %.17g",
		  res.train_accuracy, (double) correct / n);
	CHECK(res.converged && res.n_support == BC_C10_NSV, "converged %d, %u support vectors",
		  res.converged, res.n_support);
	free(X);
	free(K);
	free(cls);
	free(alpha);
	free(alpha_full);
	free(dec);
	free(swork);
	free(work);
}

/*
 * A cache of 2 or 16 columns recomputes evicted ones with the same bits:
 * the same coefficients, bit for bit, as a cache of every column.
 */
void
test_svm_cols_small_cache(void)
{
	size_t		n = BC_N;
	int			d = BC_D;
	double	   *X = standardized(bc_X, n, d);
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / BC_D, 0.0};
	double	   *L = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *tables = malloc(km_gram_cols_table_doubles(n, n) * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	double	   *alpha_all = malloc(n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_svm_train_doubles(n, 2, false) * sizeof(double));
	double		c10[2] = {10.0, 10.0};
	double		b_all,
				b;
	size_t		sizes[2] = {2, 16};
	size_t		computed_all;
	km_svm_multi_problem mp = {L, n, n, cls, 2, c10, NULL, 0, NULL};
	km_svm_params par = km_svm_params_default();
	km_svm_multi_result res_all,
				res;
	km_error	err;
	km_gram_cols c;

	CHECK(km_gram_cols_slots(n, 0) == 2 && km_gram_cols_slots(n, (size_t) 1 << 40) == n &&
		  km_gram_cols_slots(n, 10 * n * sizeof(double)) == 10, "slots within [2, n]");
	for (size_t i = 0; i < n; i++)
		cls[i] = (uint32_t) bc_y[i];
	par.tol = 1e-6;
	km_row_norms(&k, X, n, d, norms);
	km_gram_cols_init(&c, &k, X, n, d, norms, L, n, n, tables);
	mp.cols = &c;
	CHECK(km_svm_train(&mp, &par, alpha_all, &b_all, NULL, NULL, &res_all, work, &err, NULL) == KM_OK,
		  "%s", err.message);
	computed_all = c.computed;
	for (int t = 0; t < 2; t++)
	{
		km_gram_cols_init(&c, &k, X, n, d, norms, L, n, sizes[t], tables);
		CHECK(km_svm_train(&mp, &par, alpha, &b, NULL, NULL, &res, work, &err, NULL) == KM_OK,
			  "%zu slots: %s", sizes[t], err.message);
		CHECK(memcmp(alpha, alpha_all, n * sizeof(double)) == 0 && b == b_all,
			  "%zu slots: coefficients differ from a full cache", sizes[t]);
		CHECK(res.iterations == res_all.iterations, "%zu slots: %llu iterations vs %llu", sizes[t],
			  (unsigned long long) res.iterations, (unsigned long long) res_all.iterations);
		CHECK(c.used == sizes[t] && c.computed > computed_all,
			  "%zu slots: %zu used, %zu columns computed (a full cache %zu)", sizes[t], c.used,
			  c.computed, computed_all);
	}
	free(X);
	free(L);
	free(norms);
	free(tables);
	free(cls);
	free(alpha_all);
	free(alpha);
	free(work);
}
