/*
 * test_primal_pass.c - primal_pass.h, the passes that the aggregates and
 * the catalog drive: the sums of a pass do not depend on how its blocks
 * are computed (blocks added into one state, or each into a state of its
 * own and the states combined in the same order: the same Hessian and
 * scalars, the gradient vectors within rounding), a different split of
 * the rows changes them only by rounding, one
 * step from zero is the Newton step computed directly, and the decision
 * values and metrics of a block.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "learn/newton.h"
#include "primal_pass.h"
#include "unit.h"

#define PP_N 300
#define PP_M 9
#define PP_K 3

/* A pass's buffers (malloc'd) for q outputs; R = I. */
static void
pass_alloc(km_primal_pass *ps, uint32_t m, uint32_t k, size_t block, double *R)
{
	memset(ps, 0, sizeof(*ps));
	ps->m = m;
	ps->k = k;
	ps->q = km_primal_outputs(k);
	ps->block = block;
	for (uint32_t j = 0; j < m * m; j++)
		R[j] = j % (m + 1) == 0 ? 1.0 : 0.0;
	ps->R = R;
	ps->states = malloc(sizeof(double) * km_primal_state_doubles(m) * ps->q);
	ps->vecs = malloc(sizeof(double) * 2 * m * ps->q);
	ps->swork = malloc(sizeof(double) * km_primal_step_work_doubles(m));
	ps->scratch = malloc(sizeof(double) * km_primal_add_scratch_doubles(m, block));
	ps->before = malloc(sizeof(double) * (m + 1));
	ps->yc = malloc(sizeof(uint32_t) * block);
	ps->solvers = malloc(sizeof(km_primal_solver) * ps->q);
}

static void
pass_free(km_primal_pass *ps)
{
	free(ps->states);
	free(ps->vecs);
	free(ps->swork);
	free(ps->scratch);
	free(ps->before);
	free(ps->yc);
	free(ps->solvers);
}

/* Rows: features, classes (< k) and weights, reproducible. */
static void
pass_rows(double *Z, uint32_t *cls, double *w, uint32_t k)
{
	unsigned long long st = 88172645463325252ULL;

	for (size_t i = 0; i < PP_N; i++)
	{
		double		s = 0.0;

		for (size_t j = 0; j < PP_M; j++)
		{
			Z[i * PP_M + j] = unit_urand(&st);
			s += (j + 1.0) * Z[i * PP_M + j];
		}
		cls[i] = (uint32_t) (s > 0.4 ? 2 : s > -0.4 ? 1 : 0) % k;
		w[i] = 0.5 + unit_urand(&st) + 0.5;
	}
}

/* Add rows [i0, i1) in blocks of at most ps->block. */
static void
pass_add_rows(km_primal_pass *ps, const double *Z, const uint32_t *cls,
			  const double *w, size_t i0, size_t i1)
{
	uint32_t	bad;

	for (size_t a = i0; a < i1; a += ps->block)
	{
		size_t		r = i1 - a < ps->block ? i1 - a : ps->block;

		CHECK(km_primal_pass_add(ps, ps->states, Z + a * PP_M, r, cls + a, w + a, &bad, NULL) == KM_OK,
			  "add of rows from %zu", a);
	}
}

void		test_primal_pass_split_combine(void);
void
test_primal_pass_split_combine(void)
{
	static double Z[PP_N * PP_M];
	static uint32_t cls[PP_N];
	static double w[PP_N];
	double		R[PP_M * PP_M];
	double		coef[PP_M * PP_K], b[PP_K], coef2[PP_M * PP_K], b2[PP_K],
				coef3[PP_M * PP_K], b3[PP_K];
	km_primal_params p = {KM_PRIMAL_LOGISTIC, 1e-3, true, 0.0, 0};
	km_primal_pass one, serial, part, worker;
	km_error	err;
	size_t		len = km_primal_state_doubles(PP_M) * PP_K;

	pass_rows(Z, cls, w, PP_K);
	pass_alloc(&one, PP_M, PP_K, PP_N, R);
	pass_alloc(&serial, PP_M, PP_K, 128, R);
	pass_alloc(&part, PP_M, PP_K, 128, R);
	pass_alloc(&worker, PP_M, PP_K, 128, R);
	CHECK(serial.q == PP_K, "q %u", serial.q);

	/* the second pass's point: one step from zero */
	km_primal_pass_start(&serial, &p, coef, b);
	CHECK(km_primal_pass_begin(&serial), "a fresh pass solves");
	pass_add_rows(&serial, Z, cls, w, 0, PP_N);
	CHECK(km_primal_pass_step(&serial, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(!serial.current, "the first step moves");
	CHECK(b[0] != 0.0 && coef[3] != 0.0, "the point moved");
	memcpy(coef2, coef, sizeof(coef));
	memcpy(b2, b, sizeof(b));

	/* serial: blocks [0,128) [128,256) [256,300) into one state */
	CHECK(km_primal_pass_begin(&serial), "still solving");
	pass_add_rows(&serial, Z, cls, w, 0, PP_N);

	/*
	 * the same blocks each into a worker's state, combined in order into
	 * the leader's: adding a block and combining a state of that block are
	 * the same doubles (addition is not associative: a state of two blocks
	 * combined would round differently)
	 */
	km_primal_pass_start(&part, &p, coef2, b2);
	km_primal_pass_start(&worker, &p, coef3, b3);
	memcpy(coef2, coef, sizeof(coef));
	memcpy(b2, b, sizeof(b));
	memcpy(coef3, coef, sizeof(coef));
	memcpy(b3, b, sizeof(b));
	km_primal_pass_begin(&part);
	for (size_t a = 0; a < PP_N; a += 128)
	{
		km_primal_pass_begin(&worker);
		pass_add_rows(&worker, Z, cls, w, a, a + 128 < PP_N ? a + 128 : PP_N);
		km_primal_pass_combine(&part, worker.states);
	}
	/*
	 * The scalars and sum w L'' z z^T (a block's dsyrk into scratch, then
	 * added): the same doubles.  sum w L' z and sum w L'' z: km_primal_add's
	 * dgemv (beta = 1) adds OpenBLAS's partial sums into the state, so a
	 * block added into a state and the same block's own state combined
	 * differ in the last bits; only rounding.
	 */
	CHECK(memcmp(part.states, serial.states, sizeof(double) * KM_PRIMAL_GZ) == 0,
		  "combined scalars differ from the serial ones");
	for (uint32_t c = 0; c < PP_K; c++)
	{
		size_t		o = c * km_primal_state_doubles(PP_M);

		CHECK(memcmp(part.states + o + KM_PRIMAL_HZZ(PP_M), serial.states + o + KM_PRIMAL_HZZ(PP_M),
					 sizeof(double) * PP_M * (PP_M + 1) / 2) == 0,
			  "combined Hessian of output %u differs from the serial one", c);
		CHECK(unit_rel_diff(part.states + o + KM_PRIMAL_GZ, serial.states + o + KM_PRIMAL_GZ,
							2 * PP_M) < 1e-14, "gradient of output %u: %g", c,
			  unit_rel_diff(part.states + o + KM_PRIMAL_GZ, serial.states + o + KM_PRIMAL_GZ, 2 * PP_M));
	}

	/* one block of every row: the same sums up to rounding */
	km_primal_pass_start(&one, &p, coef2, b2);
	memcpy(coef2, coef, sizeof(coef));
	memcpy(b2, b, sizeof(b));
	km_primal_pass_begin(&one);
	pass_add_rows(&one, Z, cls, w, 0, PP_N);
	CHECK(unit_rel_diff(one.states, serial.states, len) < 1e-13, "%g",
		  unit_rel_diff(one.states, serial.states, len));
	CHECK(serial.states[KM_PRIMAL_ROWS] == PP_N, "rows %g", serial.states[KM_PRIMAL_ROWS]);

	/* the steps of the serial and the combined sums: the same point */
	memcpy(part.solvers, serial.solvers, sizeof(km_primal_solver) * PP_K);
	memcpy(part.vecs, serial.vecs, sizeof(double) * 2 * PP_M * PP_K);
	CHECK(km_primal_pass_step(&serial, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(km_primal_pass_step(&part, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(unit_rel_diff(coef2, coef, PP_M * PP_K) < 1e-12 && unit_rel_diff(b2, b, PP_K) < 1e-12,
		  "the sums step to different points: %g",
		  unit_rel_diff(coef2, coef, PP_M * PP_K));
	/* the same sums, the same step: bit for bit */
	memcpy(part.states, serial.states, sizeof(double) * len);
	memcpy(part.solvers, serial.solvers, sizeof(km_primal_solver) * PP_K);
	memcpy(part.vecs, serial.vecs, sizeof(double) * 2 * PP_M * PP_K);
	memcpy(coef2, coef, sizeof(coef));
	memcpy(b2, b, sizeof(b));
	part.solvers[0].done = false;
	serial.solvers[0].done = false;
	CHECK(km_primal_pass_step(&serial, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(km_primal_pass_step(&part, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(memcmp(coef, coef2, sizeof(coef)) == 0 && memcmp(b, b2, sizeof(b)) == 0,
		  "the same sums step to different points");
	pass_free(&one);
	pass_free(&serial);
	pass_free(&part);
	pass_free(&worker);
}

/* x := A^-1 x for A (n x n, row-major, destroyed), by Gaussian elimination. */
static void
solve_dense(double *A, double *x, size_t n)
{
	for (size_t c = 0; c < n; c++)
	{
		for (size_t r = c + 1; r < n; r++)
		{
			double		f = A[r * n + c] / A[c * n + c];

			for (size_t j = c; j < n; j++)
				A[r * n + j] -= f * A[c * n + j];
			x[r] -= f * x[c];
		}
	}
	for (size_t c = n; c-- > 0;)
	{
		for (size_t j = c + 1; j < n; j++)
			x[c] -= A[c * n + j] * x[j];
		x[c] /= A[c * n + c];
	}
}

/*
 * One step from zero of output c: with f = 0 every row has p = 1/2, so
 * g = w (1/2 - y), h = w / 4 (logistic) or g = -2 w y, h = 2 w (squared
 * hinge, y = +-1, all rows active); the step solves
 * [Z 1]^T diag(h) [Z 1] / W + lambda diag(1..1, 0) = -[Z 1]^T g / W.
 */
static void
check_first_step(km_primal_loss loss, uint32_t k)
{
	static double Z[PP_N * PP_M];
	static uint32_t cls[PP_N];
	static double w[PP_N];
	double		R[PP_M * PP_M];
	uint32_t	q = km_primal_outputs(k);
	double		coef[PP_M * PP_K], b[PP_K];
	km_primal_params p = {loss, 0.01, true, 0.0, 0};
	km_primal_pass ps;
	km_error	err;
	size_t		N = PP_M + 1;
	double		obj;
	int			iters;
	bool		conv;

	pass_rows(Z, cls, w, k);
	pass_alloc(&ps, PP_M, k, 64, R);
	km_primal_pass_start(&ps, &p, coef, b);
	km_primal_pass_begin(&ps);
	pass_add_rows(&ps, Z, cls, w, 0, PP_N);
	CHECK(km_primal_pass_step(&ps, &err, NULL) == KM_OK, "%s", err.message);
	km_primal_pass_totals(&ps, &obj, &iters, &conv);
	CHECK(iters == 1 && !conv, "iterations %d", iters);
	for (uint32_t c = 0; c < q; c++)
	{
		double		A[(PP_M + 1) * (PP_M + 1)];
		double		x[PP_M + 1];
		double		W = 0.0;
		double		J = 0.0;

		memset(A, 0, sizeof(A));
		memset(x, 0, sizeof(x));
		for (size_t i = 0; i < PP_N; i++)
		{
			double		y = (q == 1 ? cls[i] == 1 : cls[i] == c) ? 1.0 : -1.0;
			double		g = loss == KM_PRIMAL_LOGISTIC ? w[i] * (0.5 - (y > 0)) : -2.0 * w[i] * y;
			double		h = loss == KM_PRIMAL_LOGISTIC ? w[i] * 0.25 : 2.0 * w[i];
			double		zr[PP_M + 1];

			memcpy(zr, Z + i * PP_M, sizeof(double) * PP_M);
			zr[PP_M] = 1.0;
			W += w[i];
			J += w[i] * (loss == KM_PRIMAL_LOGISTIC ? log(2.0) : 1.0);
			for (size_t a = 0; a < N; a++)
			{
				x[a] -= g * zr[a];
				for (size_t e = 0; e < N; e++)
					A[a * N + e] += h * zr[a] * zr[e];
			}
		}
		for (size_t a = 0; a < N; a++)
		{
			x[a] /= W;
			for (size_t e = 0; e < N; e++)
				A[a * N + e] /= W;
			if (a < PP_M)
				A[a * N + a] += p.lambda;
		}
		CHECK_CLOSE(ps.solvers[c].objective, J / W, 1e-14);
		solve_dense(A, x, N);
		for (size_t j = 0; j < PP_M; j++)
			CHECK_CLOSE(coef[c * PP_M + j], x[j], 1e-10);
		CHECK_CLOSE(b[c], x[PP_M], 1e-10);
	}
	pass_free(&ps);
}

void		test_primal_pass_first_step(void);
void
test_primal_pass_first_step(void)
{
	check_first_step(KM_PRIMAL_LOGISTIC, 2);
	check_first_step(KM_PRIMAL_LOGISTIC, PP_K);
	check_first_step(KM_PRIMAL_SQHINGE, PP_K);
}

/* Decision values, metrics and a non-finite row. */
void		test_primal_pass_block_metrics(void);
void
test_primal_pass_block_metrics(void)
{
	double		Z[4 * 2] = {1, 0, 0, 1, 1, 1, -1, 2};
	double		coef[2 * 3] = {1, -1, 0, 2, -1, 0};	/* m x q column-major */
	double		ic[3] = {0.5, 0, -0.25};
	uint32_t	cls[4] = {0, 1, 1, 2};
	uint32_t	fold[4] = {0, 1, 0, 0};
	double		F[4 * 3], p[3], pwork[64];
	double		correct = 0.0, logloss = 0.0, sum = 0.0;
	int64_t		count = 0;
	size_t		bad;
	km_error	err;

	km_primal_decisions(Z, 4, 2, 3, coef, ic, F);
	for (size_t i = 0; i < 4; i++)
		for (size_t c = 0; c < 3; c++)
			CHECK_CLOSE(F[i * 3 + c], ic[c] + Z[i * 2] * coef[c * 2] + Z[i * 2 + 1] * coef[c * 2 + 1], 1e-15);
	/* argmax: rows 0 (1.5, 0, -1.25) -> 0, 1 (-0.5, 2, -0.25) -> 1, 2 (0.5, 2, -1.25) -> 1, 3 (-2.5, 4, 0.75) -> 1 */
	CHECK(km_primal_block_metrics(F, 4, 3, 3, false, cls, p, pwork, &correct, &logloss,
								  &bad, &err) == KM_OK, "metrics");
	CHECK(correct == 3.0 && logloss == 0.0, "correct %g, log-loss %g", correct, logloss);
	CHECK(km_primal_block_holdout(F, 4, 3, 3, false, cls, fold, 0, p, pwork, &sum, &count),
		  "holdout");
	CHECK(count == 3 && sum == 1.0, "count %lld, errors %g", (long long) count, sum);
	F[2 * 3 + 1] = INFINITY;
	CHECK(km_primal_block_metrics(F, 4, 3, 3, true, cls, p, pwork, &correct, &logloss,
								  &bad, &err) == KM_ERR_DIVERGED && bad == 2, "bad row %zu", bad);
	CHECK(!km_primal_block_holdout(F, 4, 3, 3, true, cls, fold, 0, p, pwork, &sum, &count),
		  "a held-out row that is not finite");
	CHECK(km_primal_piece_rows(8192, 20, true, 512, 1e9) == 14,
		  "%zu", km_primal_piece_rows(8192, 20, true, 512, 1e9));
	CHECK(km_primal_piece_rows(50, 4, false, 512, 1e9) == 512, "whole block");
}
