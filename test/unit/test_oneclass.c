/*
 * test_oneclass.c - the one-class SVM (src/core/methods/oneclass.c): the
 * exact dual by SMO against scikit-learn's OneClassSVM (libsvm) on
 * standardized breast_cancer and 2-d blobs with outliers, and the form on
 * features against SciPy's primal solve and libsvm's linear kernel; the
 * numbers are in fixtures/oneclass_fixtures.h, written by
 * test/unit/gen_oneclass_fixtures.py.  Through the learner (km_learn on a
 * unit host): the exact road (column cache, support vectors kept) and the
 * gathered features of nystrom and rff.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "methods/oneclass.h"
#include "model.h"
#include "options_core.h"
#include "pipeline.h"
#include "score.h"
#include "unit.h"
#include "unit_arena.h"
#include "unit_host.h"
#include "fixtures/oneclass_fixtures.h"

void		test_oneclass_exact(void);
void		test_oneclass_features(void);
void		test_oneclass_edges(void);
void		test_oneclass_learner(void);

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

/* The options of a oneclass fit on breast_cancer (standardized already), nu 0.5. */
static km_options
learner_options(const char *approximation, double components)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;
	const char *keys[] = {"method", "gamma", "tol", "standardize", "approximation", "components"};
	km_value	v[6];
	char		comp[32];

	memset(v, 0, sizeof(v));
	v[0].type = KM_VALUE_STRING;
	v[0].string = v[0].text = "oneclass";
	v[1].type = KM_VALUE_NUMBER;
	v[1].number = 1.0 / BC_D;
	v[1].text = "1/30";
	v[2].type = KM_VALUE_NUMBER;
	v[2].number = 1e-6;
	v[2].text = "1e-6";
	v[3].type = KM_VALUE_BOOL;
	v[3].text = "false";
	v[4].type = KM_VALUE_STRING;
	v[4].string = v[4].text = approximation;
	v[5].type = KM_VALUE_NUMBER;
	v[5].number = components;
	snprintf(comp, sizeof(comp), "%g", components);
	v[5].text = comp;
	km_options_begin(&parser, &opts);
	for (int i = 0; i < (approximation ? 6 : 4); i++)
		CHECK(km_options_set(&parser, keys[i], &v[i], &oerr), "%s: %s", keys[i], oerr.message);
	CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	return opts;
}

/* km_learn of o on breast_cancer's training rows (blocks of block rows); dec: Xte's decision values. */
static km_model
learn_bc(const km_options *o, unit_arena *a, size_t block, double *dec)
{
	static uint64_t h[BC_N];
	double	   *y = unit_arena_alloc(a, BC_N * sizeof(double));
	km_rows		rows = {NULL, BC_N, BC_D, bc_X, y, NULL, NULL, 0, h};
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_model	m;
	km_error	err;
	km_scorer	s;

	memset(y, 0, BC_N * sizeof(double));
	for (size_t i = 0; i < BC_N; i++)
		h[i] = ((uint64_t) i + 1) * UINT64_C(0x9E3779B97F4A7C15);
	km_train_plan_make(o, BC_N, BC_D, 0, &plan);
	CHECK(unit_learn_blocks(&rows, &plan, &env, &m, &err, block) == KM_OK, "%s: %s",
		  err.message, err.detail);
	CHECK(m.n_outputs == 1 && m.eigenvalues == NULL, "%u outputs", m.n_outputs);
	km_scorer_prepare(&s, &m, unit_arena_alloc(a, km_scorer_doubles(&m) * sizeof(double)));
	for (size_t t = 0; t < BC_NTE; t++)
		CHECK(km_scorer_decision(&s, bc_Xte + t * BC_D, dec + t, &err) == KM_OK, "%s", err.message);
	return m;
}

/*
 * The exact road keeps only the support vectors and scores as scikit-learn
 * within 1e-4; the model survives its encoding bit for bit; nystrom with
 * every row a centre is the exact model within 1e-5, and its features
 * gathered from blocks of 7 rows give the same model as from whole blocks.
 */
void
test_oneclass_learner(void)
{
	km_options	oe = learner_options(NULL, 0);
	km_options	on = learner_options("nystrom", 1000);
	km_options	orff = learner_options("rff", 300);
	unit_arena	a = {0};
	double		de[BC_NTE],
				dn[BC_NTE],
				d7[BC_NTE],
				dr[BC_NTE],
				dd[BC_NTE];
	km_model	me,
				mn,
				back;
	km_model_shape shape;
	km_scorer	s;
	km_error	err;
	uint8_t    *buf;
	double	   *storage;
	size_t		len;
	int			agree = 0;

	me = learn_bc(&oe, &a, 0, de);
	CHECK(unit_rel_diff(de, bc05_dec, BC_NTE) <= 1e-4, "learner: decision values differ by %g",
		  unit_rel_diff(de, bc05_dec, BC_NTE));
	CHECK(me.n_train == BC05_NSV && me.rows_seen == BC_N, "learner: %u rows kept of %llu, %d support vectors",
		  me.n_train, (unsigned long long) me.rows_seen, BC05_NSV);
	CHECK(fabs(me.intercept - BC05_B) <= 1e-4 * fabs(BC05_B), "learner: b %.10g vs %.10g",
		  me.intercept, BC05_B);

	shape = km_model_shape_of(&me);
	len = km_model_size(&shape);
	buf = malloc(len);
	km_model_encode(&me, buf);
	CHECK(km_model_peek(buf, len, &shape, &err) == KM_OK && !shape.has_pca, "peek: %s", err.detail);
	storage = malloc(km_model_storage_doubles(&shape) * sizeof(double));
	CHECK(km_model_decode(buf, len, &back, storage, &err) == KM_OK, "decode: %s", err.detail);
	CHECK(back.task == me.task && back.method == me.method && back.n_train == me.n_train,
		  "decoded task, method, rows");
	km_scorer_prepare(&s, &back, unit_arena_alloc(&a, km_scorer_doubles(&back) * sizeof(double)));
	for (size_t t = 0; t < BC_NTE; t++)
		CHECK(km_scorer_decision(&s, bc_Xte + t * BC_D, dd + t, &err) == KM_OK, "score back");
	CHECK(memcmp(dd, de, sizeof(de)) == 0, "decoded decision values");

	mn = learn_bc(&on, &a, 0, dn);
	CHECK(mn.approximation == KM_APPROX_NYSTROM && mn.n_train == BC_N, "nystrom of %u centres",
		  mn.n_train);
	CHECK(unit_rel_diff(dn, de, BC_NTE) <= 1e-5, "nystrom (m >= n) vs exact: %g",
		  unit_rel_diff(dn, de, BC_NTE));
	(void) learn_bc(&on, &a, 7, d7);
	CHECK(memcmp(d7, dn, sizeof(dn)) == 0, "nystrom: blocks of 7 rows gave another model");

	/* rff with 300 features: an approximation; the labels mostly agree */
	(void) learn_bc(&orff, &a, 0, dr);
	for (size_t t = 0; t < BC_NTE; t++)
		agree += (dr[t] > 0) == (de[t] > 0);
	CHECK(agree >= 0.85 * BC_NTE, "rff: %d of %d labels as exact", agree, BC_NTE);
	free(buf);
	free(storage);
	unit_arena_free(&a);
}
