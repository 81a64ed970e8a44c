/*
 * test_logistic.c - kernel logistic regression (Newton), kernelized SGD and
 * the primal Newton of approximate classifiers against optima found by
 * direct SciPy minimisation of the same objectives
 * (test/unit/gen_logistic_fixtures.py -> fixtures/logistic_data.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "logistic.h"
#include "primal.h"
#include "sgd.h"
#include "solve.h"
#include "unit.h"

#include "fixtures/logistic_data.h"

static int	interrupt_calls;

static void
count_interrupts(void)
{
	interrupt_calls++;
}

/* Standardized rows and the full-precision rbf Gram (gamma = 1/d), lower triangle. */
static double *
gram_of(const double *X, size_t n, int d, double **Xs_out)
{
	double	   *Xs = malloc(n * d * sizeof(double));
	double	   *mean = malloc(d * sizeof(double));
	double	   *scale = malloc(d * sizeof(double));
	double	   *norms = malloc(n * sizeof(double));
	double	   *K = malloc(n * n * sizeof(double));
	km_kernel	k = {KM_KERNEL_RBF, 3, 1.0 / d, 0.0};

	km_standardize(X, n, d, mean, scale, Xs);
	km_row_norms(&k, Xs, n, d, norms);
	if (!km_gram_lower(&k, Xs, n, d, norms, K, n, NULL))
		abort();
	free(mean);
	free(scale);
	free(norms);
	if (Xs_out)
		*Xs_out = Xs;
	else
		free(Xs);
	return K;
}

static double
max_prob_diff(const double *F, size_t n, uint32_t k, const double *expect,
			  double *sum_err)
{
	double		worst = 0.0;
	double		p[16];

	*sum_err = 0.0;
	for (size_t i = 0; i < n; i++)
	{
		double		f[16],
					s = 0.0;
		uint32_t	q = km_logistic_outputs(k);

		for (uint32_t c = 0; c < q; c++)
			f[c] = F[i + c * n];
		km_logistic_proba(f, k, p);
		for (uint32_t c = 0; c < k; c++)
			s += p[c];
		*sum_err = fmax(*sum_err, fabs(s - 1.0));
		if (k == 2)
			worst = fmax(worst, fabs(p[1] - expect[i]));
		else
			for (uint32_t c = 0; c < k; c++)
				worst = fmax(worst, fabs(p[c] - expect[i * k + c]));
	}
	return worst;
}

void
test_logistic_binary(void)
{
	size_t		n = FX_BC_N;
	double	   *K = gram_of(fx_bc_X, n, FX_BC_D, NULL);
	double	   *work = malloc(km_logistic_workspace_doubles(n, 2) * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *F = malloc(n * sizeof(double));
	double	   *w = malloc(n * sizeof(double));
	size_t		count[2] = {0, 0};
	const double *expect[3] = {fx_bc_p_intercept, fx_bc_p_nointercept, fx_bc_p_balanced};

	for (size_t i = 0; i < n; i++)
		count[fx_bc_y[i]]++;
	for (size_t i = 0; i < n; i++)
		w[i] = (double) n / (2.0 * count[fx_bc_y[i]]);	/* "balanced" */

	for (int c = 0; c < 3; c++)
	{
		km_logistic_params p = {FX_LAMBDA, c != 1, 0.0, 0};
		km_logistic_result res;
		km_error	err;
		double		b,
					J,
					sum_err,
					diff,
					asum = 0.0;
		km_status	st;

		interrupt_calls = 0;
		st = km_logistic_fit(&p, K, n, fx_bc_y, 2, c == 2 ? w : NULL, alpha, &b, work,
							 &res, &err, count_interrupts);
		/* n = 569 is two panels: every product and solve checks between them */
		CHECK(interrupt_calls >= 4 * res.iterations, "case %d: %d interrupt checks",
			  c, interrupt_calls);

		CHECK(st == KM_OK, "case %d: %s", c, err.message);
		CHECK(res.converged, "case %d: %d iterations, gradient %g of %g", c,
			  res.iterations, res.grad_norm, res.grad_norm0);
		CHECK(res.iterations <= 20, "case %d: %d Newton steps", c, res.iterations);
		J = km_logistic_objective(K, n, fx_bc_y, 2, c == 2 ? w : NULL, FX_LAMBDA,
								  alpha, &b, F, NULL);
		CHECK_CLOSE(J, fx_bc_J[c], 1e-10);
		CHECK_CLOSE(res.objective, J, 1e-12);
		diff = max_prob_diff(F, n, 2, expect[c], &sum_err);
		CHECK(diff <= 1e-6, "case %d: probabilities differ by %g", c, diff);
		/* with an intercept the optimum has sum a = 0 (lambda a = -g, 1^T g = 0) */
		for (size_t i = 0; i < n; i++)
			asum += alpha[i];
		if (c != 1)
			CHECK(fabs(asum) <= 1e-8, "case %d: sum of alpha %g", c, asum);
		else
			CHECK(b == 0.0, "no intercept: b = %g", b);
	}
	free(K);
	free(work);
	free(alpha);
	free(F);
	free(w);
}

void
test_logistic_multinomial(void)
{
	size_t		n = FX_WINE_N;
	double	   *K = gram_of(fx_wine_X, n, FX_WINE_D, NULL);
	double	   *work = malloc(km_logistic_workspace_doubles(n, 3) * sizeof(double));
	double	   *alpha = malloc(3 * n * sizeof(double));
	double	   *F = malloc(3 * n * sizeof(double));
	double		b[3],
				J,
				diff,
				sum_err;
	km_logistic_params p = {FX_LAMBDA, true, 0.0, 0};
	km_logistic_result res;
	km_error	err;
	km_status	st = km_logistic_fit(&p, K, n, fx_wine_y, 3, NULL, alpha, b, work,
									 &res, &err, NULL);

	CHECK(st == KM_OK, "%s", err.message);
	CHECK(res.converged, "%d steps, gradient %g of %g", res.iterations,
		  res.grad_norm, res.grad_norm0);
	CHECK(fabs(b[0] + b[1] + b[2]) <= 1e-12, "intercepts sum to %g", b[0] + b[1] + b[2]);
	J = km_logistic_objective(K, n, fx_wine_y, 3, NULL, FX_LAMBDA, alpha, b, F, NULL);
	CHECK_CLOSE(J, fx_wine_J, 1e-10);
	diff = max_prob_diff(F, n, 3, fx_wine_p, &sum_err);
	CHECK(diff <= 1e-6, "probabilities differ by %g", diff);
	CHECK(sum_err <= 1e-12, "probabilities sum to 1 within %g", sum_err);
	fprintf(stderr, "# multinomial wine: %d Newton steps, %d CG iterations, objective %.12g\n",
			res.iterations, res.cg_iterations, J);
	free(K);
	free(work);
	free(alpha);
	free(F);
}

/*
 * Multinomial with integer sample weights w_i = 1 + i mod 3 equals the
 * unweighted fit on the rows repeated w_i times (same objective, same
 * probabilities), with and without intercepts; every CG iteration checks
 * for interrupts.
 */
void
test_logistic_multinomial_weights(void)
{
	size_t		n = FX_WINE_N;
	int			d = FX_WINE_D;
	size_t		m = 0;
	double	   *w = malloc(n * sizeof(double));
	double	   *Xr = malloc(3 * n * d * sizeof(double));
	uint32_t   *yr = malloc(3 * n * sizeof(uint32_t));
	size_t	   *first = malloc(n * sizeof(size_t));
	double	   *K,
			   *Kr;

	for (size_t i = 0; i < n; i++)
	{
		w[i] = 1.0 + (double) (i % 3);
		first[i] = m;
		for (int r = 0; r < (int) w[i]; r++, m++)
		{
			memcpy(Xr + m * d, fx_wine_X + i * d, d * sizeof(double));
			yr[m] = fx_wine_y[i];
		}
	}
	/* one kernel for both: the repeated rows standardized, original rows = first copies */
	Kr = gram_of(Xr, m, d, NULL);
	/* K of the original rows is the submatrix of Kr at their first copies */
	K = malloc(n * n * sizeof(double));
	for (size_t j = 0; j < n; j++)
		for (size_t i = j; i < n; i++)
			K[i + j * n] = Kr[first[i] + first[j] * m];

	for (int icpt = 0; icpt < 2; icpt++)
	{
		km_logistic_params p = {FX_LAMBDA, icpt == 1, 0.0, 0};
		km_logistic_result res,
					resr;
		km_error	err;
		double	   *work = malloc(km_logistic_workspace_doubles(n, 3) * sizeof(double));
		double	   *workr = malloc(km_logistic_workspace_doubles(m, 3) * sizeof(double));
		double	   *alpha = malloc(3 * n * sizeof(double));
		double	   *alphar = malloc(3 * m * sizeof(double));
		double	   *F = malloc(3 * n * sizeof(double));
		double	   *Fr = malloc(3 * m * sizeof(double));
		double		b[3],
					br[3],
					worst = 0.0;
		km_status	st;

		interrupt_calls = 0;
		st = km_logistic_fit(&p, K, n, fx_wine_y, 3, w, alpha, b, work, &res, &err,
							 count_interrupts);
		CHECK(st == KM_OK && res.converged, "weighted, intercept %d: %s", icpt,
			  st == KM_OK ? "not converged" : err.message);
		CHECK(interrupt_calls >= res.cg_iterations && res.cg_iterations > 0,
			  "%d interrupt checks for %d CG iterations", interrupt_calls, res.cg_iterations);
		CHECK(res.iterations <= 20, "%d Newton steps", res.iterations);
		st = km_logistic_fit(&p, Kr, m, yr, 3, NULL, alphar, br, workr, &resr, &err, NULL);
		CHECK(st == KM_OK && resr.converged, "repeated, intercept %d", icpt);
		CHECK_CLOSE(res.objective, resr.objective, 1e-10);
		if (!icpt)
			CHECK(b[0] == 0.0 && b[1] == 0.0 && b[2] == 0.0, "no intercept: b = %g %g %g",
				  b[0], b[1], b[2]);
		km_logistic_objective(K, n, fx_wine_y, 3, w, FX_LAMBDA, alpha, b, F, NULL);
		km_logistic_objective(Kr, m, yr, 3, NULL, FX_LAMBDA, alphar, br, Fr, NULL);
		for (size_t i = 0; i < n; i++)
		{
			double		f[3],
						fr[3],
						pr[3],
						pp[3];

			for (int c = 0; c < 3; c++)
			{
				f[c] = F[i + c * n];
				fr[c] = Fr[first[i] + c * m];
			}
			km_logistic_proba(f, 3, pp);
			km_logistic_proba(fr, 3, pr);
			for (int c = 0; c < 3; c++)
				worst = fmax(worst, fabs(pp[c] - pr[c]));
		}
		CHECK(worst <= 1e-6, "intercept %d: weighted and repeated probabilities differ by %g",
			  icpt, worst);
		free(work);
		free(workr);
		free(alpha);
		free(alphar);
		free(F);
		free(Fr);
	}
	free(w);
	free(Xr);
	free(yr);
	free(first);
	free(K);
	free(Kr);
}

/* Bad arguments are errors, not crashes. */
void
test_logistic_invalid(void)
{
	double		K[4] = {1, 0.5, 0.5, 1};
	uint32_t	cls[2] = {0, 2};
	double		work[64],
				alpha[2],
				b;
	km_logistic_params p = {0.0, true, 0, 0};
	km_logistic_result res;
	km_error	err;

	CHECK(km_logistic_fit(&p, K, 2, cls, 2, NULL, alpha, &b, work, &res, &err, NULL) ==
		  KM_ERR_INVALID, "lambda 0");
	p.lambda = 1.0;
	CHECK(km_logistic_fit(&p, K, 2, cls, 2, NULL, alpha, &b, work, &res, &err, NULL) ==
		  KM_ERR_INVALID, "class 2 of 2");
	CHECK(km_logistic_fit(&p, K, 2, cls, 1, NULL, alpha, &b, work, &res, &err, NULL) ==
		  KM_ERR_INVALID, "one class");
}

/* The documented epochs bring SGD within 1% of the optimum. */
void
test_sgd_reaches_optimum(void)
{
	size_t		n = FX_BC_N;
	double	   *K = gram_of(fx_bc_X, n, FX_BC_D, NULL);
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work = malloc(km_sgd_workspace_doubles(n) * sizeof(double));
	const int	epochs[2] = {KM_SGD_DOC_EPOCHS_LOGISTIC, KM_SGD_DOC_EPOCHS_HINGE};
	const double optimum[2] = {fx_bc_J[0], fx_bc_J_svm};

	for (int l = 0; l < 2; l++)
	{
		km_sgd_params p = {l == 0 ? KM_SGD_LOGISTIC : KM_SGD_HINGE, FX_LAMBDA, true,
						   0.0, epochs[l], 1};
		km_sgd_result res;
		km_error	err;
		double		b,
					b2;
		double	   *alpha2 = malloc(n * sizeof(double));
		km_status	st = km_sgd_fit(&p, K, n, fx_bc_y, NULL, alpha, &b, work, &res,
									&err, NULL);

		CHECK(st == KM_OK, "%s", err.message);
		CHECK(res.epochs == epochs[l] && res.steps == (uint64_t) epochs[l] * n,
			  "%d epochs", res.epochs);
		CHECK(res.objective >= optimum[l] * (1 - 1e-9), "loss %d: %.10g below the optimum %.10g",
			  l, res.objective, optimum[l]);
		CHECK(res.objective <= 1.01 * optimum[l], "loss %d: %.10g vs optimum %.10g after %d epochs",
			  l, res.objective, optimum[l], epochs[l]);
		/* the same seed gives the same model */
		st = km_sgd_fit(&p, K, n, fx_bc_y, NULL, alpha2, &b2, work, &res, &err, NULL);
		CHECK(st == KM_OK && memcmp(alpha, alpha2, n * sizeof(double)) == 0 && b == b2,
			  "deterministic");
		free(alpha2);
	}
	free(K);
	free(alpha);
	free(work);
}

/* Primal statistics: two halves combined equal one pass; Newton reaches SciPy's optimum. */
void
test_primal_newton(void)
{
	size_t		n = FX_BC_N;
	uint32_t	m = FX_PRIMAL_M;
	double	   *K = gram_of(fx_bc_X, n, FX_BC_D, NULL);
	double	   *Z = malloc(n * m * sizeof(double));
	double	   *R = malloc(m * m * sizeof(double));
	size_t		sd = km_primal_state_doubles(m);
	double	   *one = malloc(sd * sizeof(double));
	double	   *half = malloc(sd * sizeof(double));
	double	   *scratch = malloc(km_primal_add_scratch_doubles(m, n) * sizeof(double));
	double	   *work = malloc(km_primal_step_work_doubles(m) * sizeof(double));
	double	   *vecs = malloc(2 * m * sizeof(double));
	double		coef[64];
	const double *expect[2] = {fx_primal_logistic, fx_primal_sqhinge};
	double	   *wts = malloc(n * sizeof(double));

	for (size_t i = 0; i < n; i++)
		wts[i] = 1.0 + (double) (i % 3);

	CHECK(sd == 5 + 2 * m + m * (m + 1) / 2, "layout: %zu doubles", sd);
	/* features k(x_i, c_j) with the first m rows as centres; R = K_mm (K is lower) */
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < m; j++)
			Z[i * m + j] = i >= j ? K[i + j * n] : K[j + i * n];
	for (uint32_t i = 0; i < m; i++)
		for (uint32_t j = 0; j < m; j++)
			R[i + j * m] = Z[i * m + j];

	for (int l = 0; l < 2; l++)
	{
		km_primal_loss loss = l == 0 ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE;
		km_primal_params p = {loss, FX_LAMBDA, true, 0.0, 0};
		km_primal_solver s;
		km_error	err;
		double		b = 0.0;
		double		worst = 0.0;
		size_t		cut = 250;

		/* one pass vs two halves combined, at a non-trivial point */
		for (uint32_t j = 0; j < m; j++)
			coef[j] = 0.1 * sin(j + 1.0);
		km_primal_state_init(one, m);
		km_primal_state_init(half, m);
		CHECK(km_primal_add(one, m, loss, Z, n, fx_bc_y, wts, coef, 0.3, scratch, NULL), "add");
		CHECK(km_primal_add(half, m, loss, Z + cut * m, n - cut, fx_bc_y + cut, wts + cut,
							coef, 0.3, scratch, NULL), "add");
		/* the first half into its own state, then combined */
		{
			double	   *first = malloc(sd * sizeof(double));
			double	   *scr = malloc(km_primal_add_scratch_doubles(m, cut) * sizeof(double));

			km_primal_state_init(first, m);
			km_primal_add(first, m, loss, Z, cut, fx_bc_y, wts, coef, 0.3, scr, NULL);
			km_primal_combine(half, first, m);
			free(first);
			free(scr);
		}
		for (size_t i = 0; i < sd; i++)
			worst = fmax(worst, fabs(one[i] - half[i]) / fmax(1.0, fabs(one[i])));
		CHECK(worst <= 1e-12, "loss %d: halves differ from one pass by %g", l, worst);
		CHECK(one[KM_PRIMAL_ROWS] == (double) n, "rows %g", one[KM_PRIMAL_ROWS]);
		CHECK(one[KM_PRIMAL_WSUM] == (double) (n / 3 * 6 + 3), "weight sum %g",
			  one[KM_PRIMAL_WSUM]);
		/* the packed Hessian against its definition, entry (2, 7) */
		{
			double		h = 0.0;

			for (size_t i = 0; i < n; i++)
			{
				double		f = 0.3;
				double		hi;

				for (uint32_t j = 0; j < m; j++)
					f += Z[i * m + j] * coef[j];
				if (loss == KM_PRIMAL_LOGISTIC)
					hi = 1.0 / (1.0 + exp(-f)) * (1.0 - 1.0 / (1.0 + exp(-f)));
				else
					hi = (fx_bc_y[i] == 1 ? 1.0 - f : 1.0 + f) > 0 ? 2.0 : 0.0;
				h += wts[i] * hi * Z[i * m + 2] * Z[i * m + 7];
			}
			CHECK_CLOSE(one[KM_PRIMAL_HZZ(m) + 2 + 7 * 8 / 2], h, 1e-12);
		}

		/* the solver loop, one pass per step */
		memset(coef, 0, sizeof(coef));
		km_primal_solver_init(&s, m);
		while (!s.done)
		{
			km_primal_state_init(one, m);
			km_primal_add(one, m, loss, Z, n, fx_bc_y, NULL, coef, b, scratch, NULL);
			if (km_primal_step(&s, &p, one, R, coef, &b, vecs, work, &err, NULL) != KM_OK)
			{
				CHECK(0, "%s: %s", err.message, err.detail);
				break;
			}
			if (s.passes > 200)
				break;
		}
		CHECK(s.converged, "loss %d: %d steps, %d passes, gradient %g of %g", l,
			  s.iterations, s.passes, s.grad_norm, s.grad_norm0);
		worst = fabs(b - expect[l][m]);
		for (uint32_t j = 0; j < m; j++)
			worst = fmax(worst, fabs(coef[j] - expect[l][j]) / fmax(1.0, fabs(expect[l][j])));
		CHECK(worst <= 1e-6, "loss %d: coefficients differ from SciPy's by %g", l, worst);
		CHECK_CLOSE(s.objective, fx_primal_J[l], 1e-10);
		fprintf(stderr, "# primal loss %d: %d Newton steps, %d passes\n", l, s.iterations, s.passes);
	}
	free(K);
	free(Z);
	free(R);
	free(one);
	free(half);
	free(scratch);
	free(work);
	free(vecs);
	free(wts);
}
