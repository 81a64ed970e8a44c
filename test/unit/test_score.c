/*
 * test_score.c - the core scorer (src/core/model/score.c) against the
 * definition: direct sums of km_kernel_eval over the expansion rows (exact
 * and nystrom models, every kernel, one and three outputs) and of
 * sqrt(2/D) cos(w_i . x + b_i) (rff); the block form (GEMM + map) against
 * the row form and the definition, every kernel;
 * an overflowing feature named.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "score.h"
#include "unit.h"

void		test_score_exact(void);
void		test_score_rff(void);
void		test_score_block(void);
void		test_score_overflow(void);

#define SN 7					/* expansion rows */
#define SD 3					/* features */
#define SQ 3					/* outputs */
#define SR 5					/* rows scored */

static const km_kernel kernels[] = {
	{KM_KERNEL_LINEAR, 0, 0, 0},
	{KM_KERNEL_POLY, 3, 0.2, 1.0},
	{KM_KERNEL_RBF, 0, 0.2, 0},
	{KM_KERNEL_LAPLACIAN, 0, 0.2, 0},
	{KM_KERNEL_SIGMOID, 0, 0.05, 0.5},
	{KM_KERNEL_COSINE, 0, 0, 0},
	{KM_KERNEL_MIN, 0, 0, 0},
	{KM_KERNEL_POLYSUM, 2, 0.5, 1.0},
};

typedef struct tm
{
	km_model	m;
	double		mean[SD],
				scale[SD],
				alpha[SN * SQ],
				intercepts[SQ],
				X[SN * SD],
				W[SD * SN],
				b[SN],
				rows[SR * SD];
} tm;

static void
make(tm *t, const km_kernel *k, uint32_t q, km_approx approx)
{
	unsigned long long seed = 0x1234567ULL + q + 10 * approx;

	memset(t, 0, sizeof(*t));
	for (int j = 0; j < SD; j++)
	{
		t->mean[j] = unit_urand(&seed);
		t->scale[j] = 1.0 + unit_urand(&seed);
	}
	for (int i = 0; i < SN * SQ; i++)
		t->alpha[i] = 4.0 * unit_urand(&seed);
	for (int i = 0; i < SN * SD; i++)
	{
		t->X[i] = 2.0 * unit_urand(&seed) + 0.6;	/* min kernel: mostly positive */
		t->W[i] = 3.0 * unit_urand(&seed);
	}
	for (int i = 0; i < SN; i++)
		t->b[i] = 6.28 * (unit_urand(&seed) + 0.5);
	for (int i = 0; i < SR * SD; i++)
		t->rows[i] = 3.0 * unit_urand(&seed) + 1.0;
	for (uint32_t j = 0; j < q; j++)
		t->intercepts[j] = unit_urand(&seed);
	t->m.kernel = *k;
	t->m.method = KM_METHOD_RIDGE;
	t->m.n_train = SN;
	t->m.n_features = SD;
	t->m.n_outputs = q;
	t->m.approximation = approx;
	t->m.mean = t->mean;
	t->m.scale = t->scale;
	t->m.alpha = t->alpha;
	t->m.intercepts = t->intercepts;
	t->m.intercept = t->intercepts[0];
	if (approx == KM_APPROX_RFF)
	{
		t->m.rff_W = t->W;
		t->m.rff_b = t->b;
	}
	else
		t->m.X = t->X;
}

/* f_j(row) from the definition. */
static double
direct(const tm *t, const double *row, uint32_t j)
{
	double		x[SD];
	double		f = t->intercepts[j];

	for (int k = 0; k < SD; k++)
		x[k] = (row[k] - t->mean[k]) / t->scale[k];
	for (int i = 0; i < SN; i++)
	{
		double		v;

		if (t->m.approximation == KM_APPROX_RFF)
		{
			double		dot = t->b[i];

			for (int k = 0; k < SD; k++)
				dot += x[k] * t->W[k * SN + i];
			v = sqrt(2.0 / SN) * cos(dot);
		}
		else
			v = km_kernel_eval(&t->m.kernel, t->X + i * SD, x, SD);
		f += t->alpha[j * SN + i] * v;
	}
	return f;
}

static void
check_rows(tm *t, const char *what)
{
	km_scorer	s;
	double	   *mem = malloc(km_scorer_doubles(&t->m) * sizeof(double));
	double		out[SQ];
	km_error	err;

	km_scorer_prepare(&s, &t->m, mem);
	for (int r = 0; r < SR; r++)
	{
		km_status	st = km_scorer_decision(&s, t->rows + r * SD, out, &err);

		CHECK(st == KM_OK, "%s: row %d: %s", what, r, err.detail);
		for (uint32_t j = 0; j < t->m.n_outputs; j++)
			CHECK_CLOSE(out[j], direct(t, t->rows + r * SD, j), 1e-12);
	}
	free(mem);
}

void
test_score_exact(void)
{
	tm			t;

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
		for (uint32_t q = 1; q <= SQ; q += SQ - 1)
		{
			char		what[64];

			snprintf(what, sizeof(what), "%s q %u", km_kernel_name(kernels[k].type), q);
			make(&t, &kernels[k], q, KM_APPROX_EXACT);
			check_rows(&t, what);
			make(&t, &kernels[k], q, KM_APPROX_NYSTROM);
			check_rows(&t, what);
		}
}

void
test_score_rff(void)
{
	tm			t;

	make(&t, &kernels[2], 1, KM_APPROX_RFF);
	check_rows(&t, "rff q 1");
	make(&t, &kernels[2], SQ, KM_APPROX_RFF);
	check_rows(&t, "rff q 3");
}

void
test_score_block(void)
{
	static const km_approx approx[] = {KM_APPROX_EXACT, KM_APPROX_NYSTROM, KM_APPROX_RFF};
	tm			t;

	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++)
	for (int a = 0; a < 3; a++)
	{
		km_scorer	s;
		double	   *mem;
		double	   *work;
		double		block[SR * SQ];
		double		one[SQ];
		km_error	err;

		if (approx[a] == KM_APPROX_RFF && kernels[k].type != KM_KERNEL_RBF)
			continue;
		make(&t, &kernels[k], SQ, approx[a]);
		mem = malloc(km_scorer_doubles(&t.m) * sizeof(double));
		work = malloc(km_scorer_block_doubles(&t.m, SR) * sizeof(double));
		km_scorer_prepare(&s, &t.m, mem);
		CHECK(km_scorer_block(&s, t.rows, SR, block, work, &err) == KM_OK, "block: %s", err.detail);
		for (int r = 0; r < SR; r++)
		{
			CHECK(km_scorer_decision(&s, t.rows + r * SD, one, &err) == KM_OK, "row");
			for (int j = 0; j < SQ; j++)
			{
				CHECK_CLOSE(block[r * SQ + j], one[j], 1e-12);
				CHECK_CLOSE(block[r * SQ + j], direct(&t, t.rows + r * SD, j), 1e-12);
			}
		}
		free(work);
		free(mem);
	}
}

void
test_score_overflow(void)
{
	tm			t;
	km_scorer	s;
	double	   *mem;
	double		out[SQ];
	km_error	err;

	make(&t, &kernels[2], 1, KM_APPROX_EXACT);
	mem = malloc(km_scorer_doubles(&t.m) * sizeof(double));
	km_scorer_prepare(&s, &t.m, mem);
	t.scale[1] = 1e-300;
	t.rows[1] = 1e300;
	CHECK(km_scorer_decision(&s, t.rows, out, &err) == KM_ERR_OVERFLOW && s.bad_feature == 1,
		  "feature 2 overflows: %d %d", (int) err.status, s.bad_feature);
	t.scale[1] = 1.0;
	t.rows[1] = 1.0;
	t.alpha[0] = 1e308;
	t.alpha[1] = 1e308;
	t.m.kernel.type = KM_KERNEL_LINEAR;
	free(mem);
	mem = malloc(km_scorer_doubles(&t.m) * sizeof(double));
	km_scorer_prepare(&s, &t.m, mem);
	t.rows[0] = 1e200;
	CHECK(km_scorer_decision(&s, t.rows, out, &err) == KM_ERR_OVERFLOW && s.bad_feature == -1,
		  "decision overflows: %d %d", (int) err.status, s.bad_feature);
	free(mem);
}
