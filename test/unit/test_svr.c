/*
 * test_svr.c - epsilon-SVR (src/core/svr.c): the exact dual by SMO against
 * scikit-learn's SVR (libsvm) on the diabetes data and a noisy sinc, and the
 * L2-loss primal by Newton passes against SciPy; the numbers are in
 * fixtures/svr_fixtures.h, written by test/unit/gen_svr_fixtures.py.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "methods/svr.h"
#include "unit.h"
#include "fixtures/svr_fixtures.h"

void		test_svr_diabetes(void);
void		test_svr_sinc(void);
void		test_svr_primal(void);
void		test_svr_errors(void);

/* The dual objective of coef: 1/2 c^T K c + eps sum |c_i| - y^T c. */
static double
dual_objective(const double *K, size_t n, const double *y, double eps,
			   const double *coef)
{
	double	   *Kc = malloc(n * sizeof(double));
	double		obj = 0;

	cblas_dsymv(CblasColMajor, CblasUpper, (int) n, 1.0, K, (int) n, coef, 1, 0.0, Kc, 1);
	for (size_t i = 0; i < n; i++)
		obj += 0.5 * coef[i] * Kc[i] + eps * fabs(coef[i]) - y[i] * coef[i];
	free(Kc);
	return obj;
}

/*
 * Fits on (X, y) with rbf gamma and compares with scikit-learn: held-out
 * predictions within 1e-4 relative to the largest, the intercept within 1e-4
 * of that scale, dual coefficients within 1e-4 C, the same support size.
 */
static void
check_svr(const double *X, const double *y, size_t n, int d, const double *Xte,
		  size_t nte, double gamma, double C, double eps, const double *ref_pred,
		  const double *ref_coef, double ref_b, int ref_nsv, bool shrinking,
		  const char *what)
{
	km_kernel	k = {KM_KERNEL_RBF, 3, gamma, 0.0};
	double	   *K = unit_full_gram(&k, X, n, d);
	double	   *coef = malloc(n * sizeof(double));
	double	   *pred = malloc(nte * sizeof(double));
	double	   *work = malloc(km_svr_dual_doubles(n) * sizeof(double));
	km_svr_problem pr = {K, n, NULL, n, y, C, eps};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_status	st;
	double		cmax = 0,
				pmax = 0;

	par.tol = 1e-6;
	par.shrinking = shrinking;
	st = km_svr_dual(&pr, &par, coef, &res, work, &err, NULL);
	CHECK(st == KM_OK, "%s: status %d %s", what, st, err.message);
	CHECK(res.converged && res.violation <= 1e-6, "%s: not converged (%g)", what, res.violation);
	for (size_t t = 0; t < nte; t++)
	{
		pred[t] = res.b;
		for (size_t i = 0; i < n; i++)
			pred[t] += coef[i] * km_kernel_eval(&k, X + i * d, Xte + t * d, d);
		pmax = fmax(pmax, fabs(ref_pred[t]));
	}
	CHECK(unit_rel_diff(pred, ref_pred, nte) <= 1e-4,
		  "%s: predictions differ by %g relative", what, unit_rel_diff(pred, ref_pred, nte));
	CHECK(fabs(res.b - ref_b) <= 1e-4 * pmax, "%s: b %.10g vs %.10g", what, res.b, ref_b);
	for (size_t i = 0; i < n; i++)
		cmax = fmax(cmax, fabs(coef[i] - ref_coef[i]));
	CHECK(cmax <= 1e-4 * C, "%s: dual coefficients differ by %g", what, cmax);
	CHECK((int) res.n_sv == ref_nsv, "%s: %u support vectors vs %d", what,
		  res.n_sv, ref_nsv);
	/* the reported objective is the dual's at coef (a+_i a-_i = 0 at the end) */
	CHECK_CLOSE(res.objective, dual_objective(K, n, y, eps, coef), 1e-9);
	{
		double		s = 0;

		for (size_t i = 0; i < n; i++)
			s += coef[i];
		CHECK(fabs(s) <= 1e-9 * C * n, "%s: sum of coefficients %g", what, s);
	}
	free(K);
	free(coef);
	free(pred);
	free(work);
}

void
test_svr_diabetes(void)
{
	check_svr(db_Xtr, db_ytr, DB_NTR, DB_D, db_Xte, DB_NTE, DB_GAMMA, 1.0, 0.1,
			  db0_pred, db0_coef, DB0_B, DB0_NSV, true, "diabetes C=1");
	check_svr(db_Xtr, db_ytr, DB_NTR, DB_D, db_Xte, DB_NTE, DB_GAMMA, 10.0, 0.1,
			  db1_pred, db1_coef, DB1_B, DB1_NSV, true, "diabetes C=10");
	check_svr(db_Xtr, db_ytr, DB_NTR, DB_D, db_Xte, DB_NTE, DB_GAMMA, 100.0, 5.0,
			  db2_pred, db2_coef, DB2_B, DB2_NSV, true, "diabetes C=100 eps=5");
	check_svr(db_Xtr, db_ytr, DB_NTR, DB_D, db_Xte, DB_NTE, DB_GAMMA, 100.0, 5.0,
			  db2_pred, db2_coef, DB2_B, DB2_NSV, false, "diabetes C=100 eps=5 no shrinking");
}

void
test_svr_sinc(void)
{
	check_svr(sn_x, sn_y, SN_N, 1, sn_grid, SN_NTE, 1.0, 1.0, 0.1,
			  sn0_pred, sn0_coef, SN0_B, SN0_NSV, true, "sinc C=1");
	check_svr(sn_x, sn_y, SN_N, 1, sn_grid, SN_NTE, 1.0, 10.0, 0.1,
			  sn1_pred, sn1_coef, SN1_B, SN1_NSV, true, "sinc C=10");
}

/*
 * The pass/step loop over Z (rows x m) in memory, blocks of block rows (0:
 * all): what the learner's Newton (learn/newton.h) does over a host's
 * passes, here with row weights, which the method's ops do not take.
 * KM_ERR_DIVERGED when a pass refuses a row, KM_ERR_INACCURATE when the
 * solver stops without converging; a step's status as it is.
 */
static km_status
svr_fit(const double *Z, size_t rows, uint32_t m, const double *y, const double *w,
		double eps, const km_primal_params *p, const double *R, size_t block,
		double *coef, double *b, km_primal_solver *s, km_error *err)
{
	size_t		mm = m;
	double	   *state,
			   *scratch,
			   *vecs,
			   *work,
			   *eye;
	km_status	st = KM_OK;

	if (block == 0 || block > rows)
		block = rows;
	state = malloc(sizeof(double) * km_primal_state_doubles(m));
	scratch = malloc(sizeof(double) * (km_primal_add_scratch_doubles(m, block) + 1));
	vecs = malloc(sizeof(double) * 2 * mm);
	work = malloc(sizeof(double) * km_primal_step_work_doubles(m));
	eye = calloc(mm * mm, sizeof(double));
	for (size_t j = 0; j < mm; j++)
		eye[j + j * mm] = 1.0;
	km_primal_solver_init(s, m);
	memset(coef, 0, mm * sizeof(double));
	*b = 0.0;
	while (!s->done && st == KM_OK)
	{
		km_primal_state_init(state, m);
		for (size_t r0 = 0; r0 < rows && st == KM_OK; r0 += block)
		{
			size_t		nb = rows - r0 < block ? rows - r0 : block;

			if (!km_svr_primal_add(state, m, Z + r0 * mm, nb, y + r0, w ? w + r0 : NULL,
								   eps, coef, *b, scratch, NULL))
				st = km_fail(err, KM_ERR_DIVERGED, "svr pass refused a row", "Block from %zu.", r0);
		}
		if (st == KM_OK)
			st = km_svr_primal_step(s, p, state, R ? R : eye, coef, b, vecs, work, err, NULL);
	}
	if (st == KM_OK && !s->converged)
		st = km_fail(err, KM_ERR_INACCURATE, "svr primal newton did not converge",
					 "%d Newton steps.", s->iterations);
	free(eye);
	free(work);
	free(vecs);
	free(scratch);
	free(state);
	return st;
}

/* The three SciPy optima: (weights, R, intercept) as the generator orders them. */
void
test_svr_primal(void)
{
	const uint32_t m = PR_M;
	double		coef[PR_M],
				coef1[PR_M],
				b,
				b1;

	for (int c = 0; c < 3; c++)
	{
		km_primal_params p = {0};
		km_primal_solver s;
		km_error	err;
		km_status	st;
		const double *ref = pr_sol + c * (m + 1);
		double		dmax = 0;

		p.lambda = PR_LAMBDA;
		p.fit_intercept = c != 2;
		st = svr_fit(pr_Z, PR_N, m, pr_y, c == 1 ? pr_w : NULL, PR_EPS, &p,
					 c == 1 ? pr_R : NULL, 0, coef, &b, &s, &err);
		CHECK(st == KM_OK, "case %d: status %d %s", c, st, err.message);
		CHECK(s.converged && s.iterations <= 15, "case %d: %d Newton steps", c, s.iterations);
		for (uint32_t j = 0; j < m; j++)
			dmax = fmax(dmax, fabs(coef[j] - ref[j]));
		dmax = fmax(dmax, fabs(b - ref[m]));
		CHECK(dmax <= 1e-6, "case %d: (coef, b) differ from SciPy's by %g", c, dmax);
		CHECK_CLOSE(s.objective, pr_J[c], 1e-10);
		if (c != 2)
			CHECK(b != 0, "case %d: no intercept", c);
		else
			CHECK(b == 0, "case %d: intercept %g", c, b);

		/* the same fit fed by blocks of 37 rows: the same point */
		st = svr_fit(pr_Z, PR_N, m, pr_y, c == 1 ? pr_w : NULL, PR_EPS, &p,
					 c == 1 ? pr_R : NULL, 37, coef1, &b1, &s, &err);
		CHECK(st == KM_OK, "case %d blocks: status %d", c, st);
		dmax = fabs(b1 - b);
		for (uint32_t j = 0; j < m; j++)
			dmax = fmax(dmax, fabs(coef1[j] - coef[j]));
		CHECK(dmax <= 1e-12, "case %d: blocks move the optimum by %g", c, dmax);
	}
}

void
test_svr_errors(void)
{
	double		X[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	double		y[8] = {0.1, 0.9, 2.2, 2.8, 4.1, 5.3, 5.9, 7.2};
	double		ybad[8] = {0.1, 0.9, NAN, 2.8, 4.1, 5.3, 5.9, 7.2};
	km_kernel	k = {KM_KERNEL_RBF, 3, 0.1, 0.0};
	double	   *K = unit_full_gram(&k, X, 8, 1);
	double		coef[8],
				w[512],
				c2[1],
				b;
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_svr_problem pr = {K, 8, NULL, 8, y, 1.0, 0.1};
	km_primal_params pp = {0};
	km_primal_solver s;
	double		state[64],
				scratch[64];

	CHECK(km_svr_dual_doubles(8) <= 512, "work");
	pr.C = 0;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "C = 0");
	pr.C = -1;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "C < 0");
	pr.C = INFINITY;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "C inf");
	pr.C = 1;
	pr.epsilon = -0.1;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "eps < 0");
	pr.epsilon = NAN;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "eps nan");
	pr.epsilon = 0.1;
	pr.y = ybad;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "y nan");
	CHECK(strstr(err.detail, "Row 2") != NULL, "detail: %s", err.detail);
	pr.y = y;
	pr.n = 0;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "n = 0");
	pr.n = 8;
	par.tol = 0;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INVALID, "tol = 0");

	/* max_iter reached: inaccurate, outputs written */
	par.tol = 1e-6;
	par.max_iter = 3;
	for (int i = 0; i < 8; i++)
		coef[i] = NAN;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_ERR_INACCURATE, "max_iter");
	CHECK(!res.converged && res.iterations == 3 && res.violation > 1e-6 && isfinite(res.b),
		  "max_iter result: %d %llu %g %g", res.converged,
		  (unsigned long long) res.iterations, res.violation, res.b);
	{
		int			nz = 0;

		for (int i = 0; i < 8; i++)
		{
			CHECK(isfinite(coef[i]), "coef %d written", i);
			nz += coef[i] != 0;
		}
		CHECK(nz > 0 && (uint32_t) nz == res.n_sv, "%d nonzero, n_sv %u", nz, res.n_sv);
	}
	/* and converged with the default max_iter; one row works too */
	par.max_iter = 0;
	CHECK(km_svr_dual(&pr, &par, coef, &res, w, &err, NULL) == KM_OK && res.converged, "full");
	pr.n = 1;
	CHECK(km_svr_dual(&pr, &par, c2, &res, w, &err, NULL) == KM_OK, "one row");
	/* one row, eps below |y|: a- = 0, a+ free to C, b puts f inside the tube */
	CHECK(fabs(res.b + c2[0] * K[0] - y[0]) <= 0.1 + 1e-9, "one row: f %g",
		  res.b + c2[0] * K[0]);

	/* primal */
	pp.lambda = 0.1;
	pp.fit_intercept = true;
	CHECK(svr_fit(X, 8, 1, y, NULL, -0.1, &pp, NULL, 0, coef, &b, &s, &err) == KM_ERR_DIVERGED,
		  "primal eps < 0");
	CHECK(svr_fit(X, 8, 1, ybad, NULL, 0.1, &pp, NULL, 0, coef, &b, &s, &err) == KM_ERR_DIVERGED,
		  "primal y nan");
	pp.lambda = 0;
	CHECK(svr_fit(X, 8, 1, y, NULL, 0.1, &pp, NULL, 0, coef, &b, &s, &err) == KM_ERR_INVALID,
		  "primal lambda 0");
	pp.lambda = 0.1;
	pp.max_iter = 1;
	CHECK(svr_fit(X, 8, 1, y, NULL, 0.1, &pp, NULL, 0, coef, &b, &s, &err) == KM_ERR_INACCURATE,
		  "primal max_iter");
	CHECK(!s.converged && s.iterations == 1 && coef[0] != 0 && isfinite(b),
		  "primal max_iter result %d %d %g %g", s.converged, s.iterations, coef[0], b);
	pp.max_iter = 0;
	CHECK(svr_fit(X, 8, 1, y, NULL, 0.1, &pp, NULL, 0, coef, &b, &s, &err) == KM_OK && s.converged,
		  "primal full");
	/* the pass function refuses non-finite targets and a bad epsilon */
	km_primal_state_init(state, 1);
	CHECK(!km_svr_primal_add(state, 1, X, 8, ybad, NULL, 0.1, coef, b, scratch, NULL),
		  "add y nan");
	CHECK(!km_svr_primal_add(state, 1, X, 8, y, NULL, -1, coef, b, scratch, NULL),
		  "add eps < 0");
	CHECK(state[KM_PRIMAL_ROWS] == 0, "nothing added");
	free(K);
}
