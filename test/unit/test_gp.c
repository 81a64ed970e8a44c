/*
 * test_gp.c - the Gaussian-process reading of exact ridge (gp.h) against
 * its definitions on a 3-row linear-kernel model, with the 3 x 3 inverse
 * written out by cofactors.
 */
#include <math.h>
#include <string.h>

#include "gp.h"
#include "metrics.h"
#include "unit.h"

static double
det3(const double A[9])
{
	return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
		A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* B := A^-1 for a symmetric 3 x 3 A, by cofactors */
static void
inv3(const double A[9], double B[9])
{
	double		d = det3(A);

	B[0] = (A[4] * A[8] - A[5] * A[7]) / d;
	B[1] = -(A[1] * A[8] - A[2] * A[7]) / d;
	B[2] = (A[1] * A[5] - A[2] * A[4]) / d;
	B[3] = -(A[3] * A[8] - A[5] * A[6]) / d;
	B[4] = (A[0] * A[8] - A[2] * A[6]) / d;
	B[5] = -(A[0] * A[5] - A[2] * A[3]) / d;
	B[6] = (A[3] * A[7] - A[4] * A[6]) / d;
	B[7] = -(A[0] * A[7] - A[1] * A[6]) / d;
	B[8] = (A[0] * A[4] - A[1] * A[3]) / d;
}

void
test_gp_closed_form(void)
{
	const double X[3] = {1.0, 2.0, -1.0};
	const double alpha[3] = {0.3, -0.2, 0.1};
	const double mean[1] = {0.0};
	const double scale[1] = {1.0};
	const double lambda = 0.5;
	double		A[9];
	double		Ai[9];
	double		mem[3 * 3 + 2 * 3 + 1];
	double		quad = 0.0;
	double		s2;
	double		lml;
	double		want_lml;
	km_model	m;
	km_gp		g;
	km_error	err;

	memset(&m, 0, sizeof(m));
	m.method = km_method_by_name("ridge")->id;
	m.task = KM_TASK_REGRESSION;
	m.kernel.type = KM_KERNEL_LINEAR;
	m.n_train = 3;
	m.n_features = 1;
	m.n_outputs = 1;
	m.lambda = lambda;
	m.X = X;
	m.alpha = alpha;
	m.mean = mean;
	m.scale = scale;
	CHECK(km_gp_applies(&m, NULL), "exact ridge has a GP reading");
	CHECK(km_gp_doubles(&m) == 3 * 3 + 2 * 3 + 1, "doubles %zu", km_gp_doubles(&m));
	CHECK(km_gp_prepare(&g, &m, mem, &err, NULL) == KM_OK, "prepare");

	/* A = X X' + lambda I; y = A alpha; s2 = y'A^-1 y / n = alpha'A alpha / n */
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			A[i + 3 * j] = X[i] * X[j] + (i == j ? lambda : 0.0);
	inv3(A, Ai);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			quad += alpha[i] * A[i + 3 * j] * alpha[j];
	s2 = quad / 3.0;
	CHECK_CLOSE(g.s2, s2, 1e-14);
	want_lml = -1.5 * (1.0 + log(2.0 * 3.14159265358979323846) + log(s2)) - 0.5 * log(det3(A));
	CHECK(km_gp_log_marginal_likelihood(&g, &lml), "likelihood finite");
	CHECK_CLOSE(lml, want_lml, 1e-13);
	CHECK_CLOSE(km_neg_log_evidence(quad, 0.5 * log(det3(A)), 3), -want_lml, 1e-13);

	/* std at x: sqrt(s2 (x^2 + lambda - k'A^-1 k)), k = X x */
	for (double x = -3.0; x <= 3.0; x += 0.75)
	{
		double		k[3] = {X[0] * x, X[1] * x, X[2] * x};
		double		q = 0.0;
		double		std;

		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				q += k[i] * Ai[i + 3 * j] * k[j];
		CHECK(km_gp_std(&g, &x, &std, &err) == KM_OK, "std at %g", x);
		CHECK_CLOSE(std, sqrt(s2 * (x * x + lambda - q)), 1e-13);
	}

	/* the block form (one kernel block, one dtrsm): the same, 9 rows at once */
	{
		double		xs[9];
		double		bstd[9];
		double		bmem[3 * 1 + 3 + 1];
		double		work[9 * (1 + 3 + 2)];

		CHECK(km_gp_block_prepare_doubles(&g) <= sizeof(bmem) / sizeof(double), "block doubles");
		CHECK(km_gp_block_doubles(&g, 9) == sizeof(work) / sizeof(double), "block work");
		km_gp_block_prepare(&g, bmem);
		for (int r = 0; r < 9; r++)
			xs[r] = -3.0 + 0.75 * r;
		CHECK(km_gp_std_block(&g, xs, 9, bstd, work, &err) == KM_OK, "block");
		for (int r = 0; r < 9; r++)
		{
			double		k[3] = {X[0] * xs[r], X[1] * xs[r], X[2] * xs[r]};
			double		q = 0.0;

			for (int i = 0; i < 3; i++)
				for (int j = 0; j < 3; j++)
					q += k[i] * Ai[i + 3 * j] * k[j];
			CHECK_CLOSE(bstd[r], sqrt(s2 * (xs[r] * xs[r] + lambda - q)), 1e-13);
		}
	}

	/* a constant target (alpha 0): s2 = 0, the likelihood unbounded */
	CHECK(!isfinite(km_neg_log_evidence(0.0, 1.0, 3)), "quad 0: not finite");
	m.alpha = (const double[3]) {0.0, 0.0, 0.0};
	CHECK(km_gp_prepare(&g, &m, mem, &err, NULL) == KM_OK, "prepare, alpha 0");
	CHECK(g.s2 == 0.0 && !km_gp_log_marginal_likelihood(&g, &lml), "s2 0: no likelihood");

	/* approximate models and other methods have none */
	m.approximation = KM_APPROX_NYSTROM;
	CHECK(!km_gp_applies(&m, NULL), "nystrom: none");
	m.approximation = KM_APPROX_EXACT;
	m.method = km_method_by_name("svr")->id;
	CHECK(!km_gp_applies(&m, NULL), "svr: none");
}
