/*
 * test_oneclass.c - the one-class SVM (src/core/methods/oneclass.c): the
 * exact dual by SMO against scikit-learn's OneClassSVM (libsvm) on
 * standardized breast_cancer and 2-d blobs with outliers, and the form on
 * features against SciPy's primal solve and libsvm's linear kernel; the
 * numbers are in fixtures/oneclass_fixtures.h, written by
 * test/unit/gen_oneclass_fixtures.py.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "methods/oneclass.h"
#include "unit.h"
#include "fixtures/oneclass_fixtures.h"

void		test_oneclass_exact(void);
void		test_oneclass_features(void);
void		test_oneclass_edges(void);

/*
 * Fits the dual on X (n x d) with rbf gamma at tol 1e-6 and compares with
 * scikit-learn: decision values on Xte within 1e-4 relative to the largest,
 * the intercept within 1e-4 of that scale, the dual coefficients within
 * 1e-3 (they are not unique where rows tie), the same number of support
 * vectors; sum a = nu n.
 */
static void
check_case(const double *X, size_t n, int d, const double *Xte, size_t nte,
		   double gamma, double nu, const double *ref_dec, const double *ref_coef,
		   double ref_b, int ref_nsv, bool shrinking, bool cached, const char *what)
{
	km_kernel	k = {KM_KERNEL_RBF, 3, gamma, 0.0};
	double	   *K = unit_full_gram(&k, X, n, d);
	double	   *alpha = malloc(n * sizeof(double));
	double	   *dec = malloc(nte * sizeof(double));
	double	   *work = malloc(km_oneclass_dual_doubles(n) * sizeof(double));
	size_t		slots = 16;
	double	   *cache = malloc((slots * n + km_gram_cols_table_doubles(n, slots)) * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	km_gram_cols cols;
	km_oneclass_problem pr = {K, n, NULL, n, nu};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_status	st;
	double		cmax = 0,
				sum = 0;

	if (cached)
	{
		km_row_norms(&k, X, n, d, norms);
		km_gram_cols_init(&cols, &k, X, n, d, norms, cache, n, slots, cache + slots * n);
		pr.K = NULL;
		pr.cols = &cols;
	}
	par.tol = 1e-6;
	par.shrinking = shrinking;
	st = km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL);
	CHECK(st == KM_OK, "%s: status %d %s", what, st, err.message);
	CHECK(res.converged && res.violation <= 1e-6, "%s: not converged (%g)", what, res.violation);
	for (size_t t = 0; t < nte; t++)
	{
		dec[t] = res.b;
		for (size_t i = 0; i < n; i++)
			dec[t] += alpha[i] * km_kernel_eval(&k, X + i * d, Xte + t * d, d);
	}
	CHECK(unit_rel_diff(dec, ref_dec, nte) <= 1e-4,
		  "%s: decision values differ by %g relative", what, unit_rel_diff(dec, ref_dec, nte));
	for (size_t t = 0; t < nte; t++)
		CHECK((dec[t] > 0) == (ref_dec[t] > 0) || fabs(ref_dec[t]) < 1e-6,
			  "%s: row %zu is %g here, %g in scikit-learn", what, t, dec[t], ref_dec[t]);
	CHECK(fabs(res.b - ref_b) <= 1e-4 * fmax(1.0, fabs(ref_b)), "%s: b %.10g vs %.10g",
		  what, res.b, ref_b);
	for (size_t i = 0; i < n; i++)
	{
		cmax = fmax(cmax, fabs(alpha[i] - ref_coef[i]));
		sum += alpha[i];
		CHECK(alpha[i] >= 0 && alpha[i] <= 1, "%s: a_%zu = %g", what, i, alpha[i]);
	}
	CHECK(cmax <= 1e-3, "%s: dual coefficients differ by %g", what, cmax);
	CHECK(fabs(sum - nu * (double) n) <= 1e-9 * n, "%s: sum a = %.12g, nu n = %.12g",
		  what, sum, nu * (double) n);
	CHECK((int) res.n_sv == ref_nsv, "%s: %u support vectors vs %d", what, res.n_sv, ref_nsv);
	free(K);
	free(alpha);
	free(dec);
	free(work);
	free(cache);
	free(norms);
}

void
test_oneclass_exact(void)
{
	check_case(bc_X, BC_N, BC_D, bc_Xte, BC_NTE, 1.0 / BC_D, 0.5, bc05_dec, bc05_coef,
			   BC05_B, BC05_NSV, true, false, "breast_cancer nu 0.5");
	check_case(bc_X, BC_N, BC_D, bc_Xte, BC_NTE, 1.0 / BC_D, 0.1, bc01_dec, bc01_coef,
			   BC01_B, BC01_NSV, true, true, "breast_cancer nu 0.1, cached columns");
	check_case(bc_X, BC_N, BC_D, bc_Xte, BC_NTE, 1.0 / BC_D, 0.1, bc01_dec, bc01_coef,
			   BC01_B, BC01_NSV, false, false, "breast_cancer nu 0.1, no shrinking");
	check_case(bl_X, BL_N, 2, bl_G, BL_NG, 0.5, 0.05, bl005_dec, bl005_coef,
			   BL005_B, BL005_NSV, true, false, "blobs nu 0.05");
	check_case(bl_X, BL_N, 2, bl_G, BL_NG, 0.5, 0.37, bl037_dec, bl037_coef,
			   BL037_B, BL037_NSV, true, true, "blobs nu 0.37");
}

/*
 * On features: the dual on Z Z' (through a column cache of 4 columns)
 * against SciPy's primal solve: decision values nu n (w'z - rho) within
 * 1e-5 relative, w within 1e-5 of its largest entry.
 */
void
test_oneclass_features(void)
{
	double		w[FT_M];
	double		b;
	double		dec[FT_NTE];
	double	   *work = malloc(km_oneclass_features_doubles(FT_N, FT_M, 4) * sizeof(double));
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_status	st;

	par.tol = 1e-9;
	st = km_oneclass_features(ft_Z, FT_N, FT_M, FT_NU, &par, 4, w, &b, &res, work, &err, NULL);
	CHECK(st == KM_OK, "features: status %d %s", st, err.message);
	for (size_t t = 0; t < FT_NTE; t++)
	{
		dec[t] = b;
		for (int j = 0; j < FT_M; j++)
			dec[t] += w[j] * ft_Zte[t * FT_M + j];
	}
	CHECK(unit_rel_diff(dec, ft_dec, FT_NTE) <= 1e-5,
		  "features: decision values differ from SciPy's primal by %g relative",
		  unit_rel_diff(dec, ft_dec, FT_NTE));
	CHECK(unit_rel_diff(w, ft_w, FT_M) <= 1e-5, "features: w differs by %g relative",
		  unit_rel_diff(w, ft_w, FT_M));
	CHECK(fabs(b - FT_B) <= 1e-5 * fmax(1.0, fabs(FT_B)), "features: b %.10g vs %.10g", b, FT_B);
	free(work);
}

/* nu = 1 (the one feasible point, rho the largest (K a)_i) and the refusals. */
void
test_oneclass_edges(void)
{
	size_t		n = 12;
	km_kernel	k = {KM_KERNEL_RBF, 3, 0.5, 0.0};
	double	   *K = unit_full_gram(&k, bl_X, n, 2);
	double		alpha[12];
	double	   *work = malloc(km_oneclass_dual_doubles(n) * sizeof(double));
	km_oneclass_problem pr = {K, n, NULL, n, 1.0};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	double		top = -INFINITY;
	double		outside = 0;

	CHECK(km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL) == KM_OK,
		  "nu 1: %s", err.message);
	for (size_t i = 0; i < n; i++)
	{
		double		s = 0;

		for (size_t j = 0; j < n; j++)
			s += K[i + j * n];
		top = fmax(top, s);
		CHECK(alpha[i] == 1.0, "nu 1: a_%zu = %g", i, alpha[i]);
	}
	CHECK(fabs(res.b + top) <= 1e-12 * top, "nu 1: b %g, the largest K a %g", res.b, top);
	for (size_t i = 0; i < n; i++)
	{
		double		f = res.b;

		for (size_t j = 0; j < n; j++)
			f += K[i + j * n];
		outside += f > 1e-12;
	}
	CHECK(outside == 0, "nu 1: %g rows inside", outside);
	pr.nu = 0.0;
	CHECK(km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL) == KM_ERR_INVALID,
		  "nu 0 accepted");
	pr.nu = 1.5;
	CHECK(km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL) == KM_ERR_INVALID,
		  "nu 1.5 accepted");
	pr.nu = NAN;
	CHECK(km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL) == KM_ERR_INVALID,
		  "nu NaN accepted");
	pr.nu = 0.5;
	pr.n = 1;
	CHECK(km_oneclass_dual(&pr, &par, alpha, &res, work, &err, NULL) == KM_ERR_INVALID,
		  "one row accepted");
	free(K);
	free(work);
}
