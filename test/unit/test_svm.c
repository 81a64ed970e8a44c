/*
 * test_svm.c - SMO, Platt scaling, one-vs-one and pairwise coupling
 * (src/core/methods/svm.c) against scikit-learn's SVC (libsvm), SciPy and NumPy:
 * the numbers are in fixtures/svm_fixtures.h, written by
 * test/unit/gen_svm_fixtures.py.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "svm.h"
#include "unit.h"
#include "fixtures/svm_fixtures.h"

void		test_svm_breast_cancer(void);
void		test_svm_wine_ovo(void);
void		test_svm_platt(void);
void		test_svm_couple(void);
void		test_svm_edge_cases(void);
void		test_svm_interrupts(void);

static int	interrupt_calls;

static void
count_interrupt(void)
{
	interrupt_calls++;
}

/* Standardize (mean, population std) as the generator does, then the full rbf Gram, gamma = 1/d. */
static double *
std_gram(const double *Xr, size_t n, int d)
{
	double	   *X = malloc(n * d * sizeof(double));
	double	   *K = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / d, 0.0};

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
	km_row_norms(&k, X, n, d, norms);
	km_gram_lower(&k, X, n, d, norms, K, n, NULL);
	km_symmetrize(K, n, n, NULL);
	free(X);
	free(norms);
	return K;
}

static void
check_binary(const double *K, const double *C0C1, const double *ref_dec,
			 const int *ref_sv, int ref_nsv, double ref_b, bool shrinking,
			 const char *what)
{
	size_t		n = BC_N;
	double	   *y = malloc(n * sizeof(double));
	double	   *C = malloc(n * sizeof(double));
	double	   *coef = malloc(n * sizeof(double));
	double	   *dec = malloc(n * sizeof(double));
	double	   *work = malloc(km_svm_binary_doubles(n) * sizeof(double));
	km_svm_problem pr = {K, n, NULL, n, y, C};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_status	st;
	int			nsv = 0,
				same = 1;

	for (size_t i = 0; i < n; i++)
	{
		y[i] = bc_y[i] == 1 ? 1.0 : -1.0;
		C[i] = C0C1[bc_y[i]];
	}
	par.tol = 1e-6;
	par.shrinking = shrinking;
	st = km_svm_binary(&pr, &par, coef, &res, work, &err, NULL);
	CHECK(st == KM_OK, "%s: status %d %s", what, st, err.message);
	CHECK(res.converged, "%s: not converged", what);
	cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, K, (int) n,
				coef, 1, 0.0, dec, 1);
	for (size_t i = 0; i < n; i++)
		dec[i] += res.b;
	CHECK(unit_rel_diff(dec, ref_dec, n) <= 1e-4, "%s: decision values differ by %g relative",
		  what, unit_rel_diff(dec, ref_dec, n));
	CHECK(fabs(res.b - ref_b) <= 1e-4 * fmax(1, fabs(ref_b)), "%s: b %.10g vs %.10g",
		  what, res.b, ref_b);
	for (size_t i = 0; i < n; i++)
		if (coef[i] != 0)
		{
			if (nsv >= ref_nsv || ref_sv[nsv] != (int) i)
				same = 0;
			nsv++;
		}
	CHECK(same && nsv == ref_nsv && (int) res.n_sv == nsv,
		  "%s: support set differs (%d vs %d vectors)", what, nsv, ref_nsv);
	free(y);
	free(C);
	free(coef);
	free(dec);
	free(work);
}

void
test_svm_breast_cancer(void)
{
	double	   *K = std_gram(bc_X, BC_N, BC_D);
	double		c1[2] = {1.0, 1.0},
				c10[2] = {10.0, 10.0},
				cw[2] = {2.0, 0.5};

	check_binary(K, c1, bc_c1_dec, bc_c1_sv, BC_C1_NSV, bc_c1_b, true, "C = 1");
	check_binary(K, c1, bc_c1_dec, bc_c1_sv, BC_C1_NSV, bc_c1_b, false, "C = 1 no shrinking");
	check_binary(K, c10, bc_c10_dec, bc_c10_sv, BC_C10_NSV, bc_c10_b, true, "C = 10");
	check_binary(K, cw, bc_w_dec, bc_w_sv, BC_W_NSV, bc_w_b, true, "class weights");

	/* km_svm_train with k = 2: the binary convention, same numbers */
	{
		size_t		n = BC_N;
		uint32_t   *cls = malloc(n * sizeof(uint32_t));
		double	   *alpha = malloc(n * sizeof(double));
		double	   *dec = malloc(n * sizeof(double));
		double	   *work = malloc(km_svm_train_doubles(n, 2, false) * sizeof(double));
		uint32_t   *keep = malloc(n * sizeof(uint32_t));
		double		b;
		km_svm_multi_problem mp = {K, n, n, cls, 2, c10, NULL, 0};
		km_svm_params par = km_svm_params_default();
		km_svm_multi_result res;
		km_error	err;
		km_status	st;
		size_t		nk;

		for (size_t i = 0; i < n; i++)
			cls[i] = (uint32_t) bc_y[i];
		par.tol = 1e-6;
		st = km_svm_train(&mp, &par, alpha, &b, NULL, NULL, &res, work, &err, NULL);
		CHECK(st == KM_OK, "train: %s", err.message);
		cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, K, (int) n,
					alpha, 1, 0.0, dec, 1);
		for (size_t i = 0; i < n; i++)
			dec[i] += b;
		CHECK(unit_rel_diff(dec, bc_c10_dec, n) <= 1e-4, "train k = 2: %g", unit_rel_diff(dec, bc_c10_dec, n));
		CHECK(res.n_sv == BC_C10_NSV, "train k = 2: %u support vectors", res.n_sv);
		nk = km_svm_compact(alpha, n, 1, keep);
		CHECK(nk == BC_C10_NSV, "compact kept %zu", nk);
		for (size_t r = 0; r < nk && r < BC_C10_NSV; r++)
			CHECK((int) keep[r] == bc_c10_sv[r] && alpha[r] != 0, "compact row %zu", r);
		free(cls);
		free(alpha);
		free(dec);
		free(work);
		free(keep);
	}
	free(K);
}

void
test_svm_wine_ovo(void)
{
	size_t		n = WINE_N;
	double	   *K = std_gram(wine_X, n, WINE_D);
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	double	   *alpha = malloc(n * 3 * sizeof(double));
	double	   *dec = malloc(n * 3 * sizeof(double));
	double	   *ref = malloc(n * 3 * sizeof(double));
	uint32_t   *fold = malloc(n * sizeof(uint32_t));
	double	   *work = malloc(km_svm_train_doubles(n, 3, true) * sizeof(double));
	double		C[3] = {1, 1, 1};
	double		b[3],
				A[3],
				B[3],
				pw[64],
				p[3];
	uint32_t	votes[3];
	km_svm_multi_problem mp = {K, n, n, cls, 3, C, NULL, 0};
	km_svm_params par = km_svm_params_default();
	km_svm_multi_result res;
	km_error	err;
	km_status	st;
	int			wrong = 0;
	double		worst = 0;

	for (size_t i = 0; i < n; i++)
	{
		cls[i] = (uint32_t) wine_y[i];
		fold[i] = (uint32_t) (i % 5);
	}
	par.tol = 1e-6;
	st = km_svm_train(&mp, &par, alpha, b, NULL, NULL, &res, work, &err, NULL);
	CHECK(st == KM_OK, "wine: %s", err.message);
	/* dec (n x 3 column-major) = K alpha + b */
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, 3, (int) n, 1.0,
				K, (int) n, alpha, (int) n, 0.0, dec, (int) n);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 3; j++)
		{
			dec[i + j * n] += b[j];
			ref[i + j * n] = wine_dec[i * 3 + j];
		}
	for (int j = 0; j < 3; j++)
	{
		CHECK(unit_rel_diff(dec + j * n, ref + j * n, n) <= 1e-4, "wine pair %d: %g", j,
			  unit_rel_diff(dec + j * n, ref + j * n, n));
		CHECK(fabs(b[j] - wine_b[j]) <= 1e-4, "wine intercept %d: %g vs %g", j, b[j], wine_b[j]);
	}
	for (size_t i = 0; i < n; i++)
	{
		double		d3[3] = {dec[i], dec[i + n], dec[i + 2 * n]};

		wrong += (int) km_svm_vote(3, d3, votes) != wine_pred[i];
	}
	CHECK(wrong == 0, "wine: %d votes differ from SVC.predict", wrong);
	/* compacting keeps exactly the rows with a nonzero coefficient, in order */
	{
		double	   *ac = malloc(n * 3 * sizeof(double));
		uint32_t   *keep = malloc(n * sizeof(uint32_t));
		size_t		nk,
					r = 0,
					bad = 0;

		memcpy(ac, alpha, n * 3 * sizeof(double));
		nk = km_svm_compact(ac, n, 3, keep);
		CHECK(nk == res.n_sv && nk < n, "compact: %zu rows, %u support vectors", nk, res.n_sv);
		for (size_t i = 0; i < n; i++)
		{
			bool		kept = r < nk && keep[r] == i;

			for (int j = 0; j < 3; j++)
				bad += kept ? ac[r + j * nk] != alpha[i + j * n] : alpha[i + j * n] != 0;
			r += kept;
		}
		CHECK(bad == 0 && r == nk, "compact: %zu entries differ", bad);
		free(ac);
		free(keep);
	}
	/* ties go to the smaller class: each class one vote */
	{
		double		tie[3] = {1.0, -1.0, 1.0};	/* 0 beats 1, 2 beats 0, 1 beats 2 */

		CHECK(km_svm_vote(3, tie, votes) == 0, "tie not to class 0");
	}

	/* with probability: same machines, Platt per pair; probabilities sum to 1 */
	mp.fold = fold;
	mp.n_folds = 5;
	st = km_svm_train(&mp, &par, alpha, b, A, B, &res, work, &err, NULL);
	CHECK(st == KM_OK, "wine probability: %s", err.message);
	for (size_t i = 0; i < n; i++)
	{
		double		d3[3] = {dec[i], dec[i + n], dec[i + 2 * n]};
		double		s;

		CHECK(km_svm_proba_doubles(3) <= 64, "proba work");
		km_svm_proba(3, d3, A, B, p, pw);
		s = p[0] + p[1] + p[2];
		worst = fmax(worst, fabs(s - 1));
	}
	CHECK(worst <= 1e-12, "wine: probabilities sum to 1 within %g", worst);
	for (int j = 0; j < 3; j++)
		CHECK(A[j] < 0, "pair %d: Platt A = %g is not negative", j, A[j]);
	free(K);
	free(cls);
	free(alpha);
	free(dec);
	free(ref);
	free(fold);
	free(work);
}

void
test_svm_platt(void)
{
	size_t		n = BC_N;
	double	   *y = malloc(n * sizeof(double));
	double	   *C = malloc(n * sizeof(double));
	double	   *dec = malloc(n * sizeof(double));
	uint32_t   *fold = malloc(n * sizeof(uint32_t));
	double	   *K = std_gram(bc_X, n, BC_D);
	double	   *work = malloc(km_svm_binary_probability_doubles(n) * sizeof(double));
	double		A,
				B;
	km_error	err;
	km_status	st;
	km_svm_problem pr = {K, n, NULL, n, y, C};
	km_svm_params par = km_svm_params_default();
	uint32_t	nc = 99;

	for (size_t i = 0; i < n; i++)
	{
		y[i] = bc_y[i] == 1 ? 1.0 : -1.0;
		C[i] = 1.0;
		fold[i] = (uint32_t) (i % 5);
	}
	/* fixed decision values: Platt against SciPy's minimum of the same objective */
	st = km_platt_fit(bc_c1_dec, y, n, &A, &B, &err);
	CHECK(st == KM_OK, "platt: %s", err.message);
	CHECK_CLOSE(A, bc_platt_A, 1e-6);
	CHECK_CLOSE(B, bc_platt_B, 1e-6);
	/* numerically stable at the extremes */
	CHECK(km_platt_prob(1e6, -1.0, 0.0) == 1.0 && km_platt_prob(-1e6, -1.0, 0.0) == 0.0,
		  "extremes");
	CHECK(fabs(km_platt_prob(800.0, 1.0, 0.0) - exp(-800.0)) <= 1e-300, "tail");
	CHECK_CLOSE(km_platt_prob(0.3, -2.0, 0.1), 1.0 / (1.0 + exp(-0.5)), 1e-15);

	/* out-of-fold values on folds i % 5 against SVC fitted per fold */
	par.tol = 1e-6;
	st = km_svm_binary_probability(&pr, &par, fold, 5, &A, &B, dec, &nc, work, &err, NULL);
	CHECK(st == KM_OK, "binary probability: %s", err.message);
	CHECK(nc == 0, "%u fold fits did not converge", nc);
	CHECK(unit_rel_diff(dec, bc_oof_dec, n) <= 1e-4, "out-of-fold values: %g",
		  unit_rel_diff(dec, bc_oof_dec, n));
	CHECK_CLOSE(A, bc_oof_A, 1e-4);
	CHECK_CLOSE(B, bc_oof_B, 1e-4);
	free(y);
	free(C);
	free(dec);
	free(fold);
	free(K);
	free(work);
}

static void
check_couple(uint32_t k, const double *r, const double *ref)
{
	double		p[8],
				work[2 * 64 + 8],
				s = 0;

	km_svm_couple(k, r, p, work);
	for (uint32_t t = 0; t < k; t++)
	{
		CHECK(fabs(p[t] - ref[t]) <= 1e-12, "k = %u class %u: %.17g vs %.17g", k, t, p[t], ref[t]);
		s += p[t];
	}
	CHECK(fabs(s - 1) <= 1e-12, "k = %u: sum %.17g", k, s);
}

void
test_svm_couple(void)
{
	check_couple(3, couple_r_3_0, couple_p_3_0);
	check_couple(3, couple_r_3_1, couple_p_3_1);
	check_couple(3, couple_r_3_2, couple_p_3_2);
	check_couple(4, couple_r_4_0, couple_p_4_0);
	check_couple(4, couple_r_4_1, couple_p_4_1);
	check_couple(4, couple_r_4_2, couple_p_4_2);
	check_couple(6, couple_r_6_0, couple_p_6_0);
	check_couple(6, couple_r_6_1, couple_p_6_1);
	check_couple(6, couple_r_6_2, couple_p_6_2);
}

void
test_svm_edge_cases(void)
{
	/* 4 points on a line, two per class */
	double		K[16],
				x[4] = {-2, -1, 1, 2},
				y[4] = {-1, -1, 1, 1},
				C[4] = {1, 1, 1, 1},
				coef[4],
				work[64];
	km_svm_problem pr = {K, 4, NULL, 4, y, C};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	km_status	st;

	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			K[i + 4 * j] = x[i] * x[j];
	CHECK(km_svm_binary_doubles(4) <= 64, "work");
	/* linear kernel, separable: the max-margin answer f(x) = x, b = 0, SVs +-1 */
	par.tol = 1e-9;
	st = km_svm_binary(&pr, &par, coef, &res, work, &err, NULL);
	CHECK(st == KM_OK, "%s", err.message);
	CHECK_CLOSE(coef[1], -0.5, 1e-12);
	CHECK_CLOSE(coef[2], 0.5, 1e-12);
	CHECK(coef[0] == 0 && coef[3] == 0, "coef %g %g", coef[0], coef[3]);
	CHECK(fabs(res.b) <= 1e-12, "b %g", res.b);
	CHECK_CLOSE(res.objective, -0.5, 1e-12);
	/* max_iter: every output written, KM_ERR_INACCURATE */
	par.max_iter = 1;
	st = km_svm_binary(&pr, &par, coef, &res, work, &err, NULL);
	CHECK(st == KM_ERR_INACCURATE && !res.converged && res.iterations == 1,
		  "max_iter: status %d", st);
	/* bad input */
	par = km_svm_params_default();
	y[0] = 0.5;
	CHECK(km_svm_binary(&pr, &par, coef, &res, work, &err, NULL) == KM_ERR_INVALID, "label");
	y[0] = 1;
	y[1] = 1;
	y[2] = 1;
	y[3] = 1;
	CHECK(km_svm_binary(&pr, &par, coef, &res, work, &err, NULL) == KM_ERR_INVALID, "one label");
}

/*
 * The interrupt callback runs during a solve, at least once per 2^22 kernel
 * entries read: 1500 noisy rows, at least 2 x 2 x active entries an iteration.
 */
void
test_svm_interrupts(void)
{
	size_t		n = 1500;
	int			d = 5;
	double	   *X = unit_rand_vec(n * d, 1313);
	double	   *K = malloc(n * n * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *y = malloc(n * sizeof(double));
	double	   *C = malloc(n * sizeof(double));
	double	   *coef = malloc(n * sizeof(double));
	double	   *work = malloc(km_svm_binary_doubles(n) * sizeof(double));
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0, 0.0};
	km_svm_problem pr = {K, n, NULL, n, y, C};
	km_svm_params par = km_svm_params_default();
	km_svm_result res;
	km_error	err;
	unsigned long long st = 7;

	for (size_t i = 0; i < n; i++)
	{
		y[i] = X[i * d] + X[i * d + 1] + 0.3 * unit_urand(&st) > 0 ? 1.0 : -1.0;
		C[i] = 10.0;
	}
	km_row_norms(&k, X, n, d, norms);
	km_gram_lower(&k, X, n, d, norms, K, n, NULL);
	km_symmetrize(K, n, n, NULL);
	par.shrinking = false;
	interrupt_calls = 0;
	CHECK(km_svm_binary(&pr, &par, coef, &res, work, &err, count_interrupt) == KM_OK,
		  "%s", err.message);
	CHECK(interrupt_calls >= 1 &&
		  (double) interrupt_calls >= 4.0 * n * res.iterations / 4194304.0 - 1,
		  "%d interrupt checks in %llu iterations", interrupt_calls,
		  (unsigned long long) res.iterations);
	free(X);
	free(K);
	free(norms);
	free(y);
	free(C);
	free(coef);
	free(work);
}
