/*
 * test_limits.c - long BLAS work is split into interruptible pieces
 * (issue 20, section 4).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "primal.h"
#include "unit.h"

static int	interrupts;

static void
count_interrupt(void)
{
	interrupts++;
}

/*
 * km_primal_add at m = 1000 over 600 rows is 1.2 Gflop of Hessian update:
 * built in panels with interrupt checks between them, and equal to the
 * same rows added in blocks small enough for one dsyrk each.
 */
void
test_primal_add_pieces(void)
{
	uint32_t	m = 1000;
	size_t		n = 600;
	size_t		sd = km_primal_state_doubles(m);
	double	   *Z = unit_rand_vec(n * m, 7);
	double	   *coef = unit_rand_vec(m, 8);
	double	   *whole = calloc(sd, sizeof(double));
	double	   *blocks = calloc(sd, sizeof(double));
	double	   *scratch = malloc(km_primal_add_scratch_doubles(m, n) * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));

	for (size_t i = 0; i < n; i++)
		cls[i] = (uint32_t) (i % 2);
	for (uint32_t j = 0; j < m; j++)
		coef[j] *= 0.01;

	interrupts = 0;
	CHECK(km_primal_add(whole, m, KM_PRIMAL_LOGISTIC, Z, n, cls, NULL, coef, 0.1,
						scratch, count_interrupt), "add");
	CHECK(interrupts >= 2, "%d interrupt checks in 1.2 Gflop", interrupts);
	/* 100 rows: 0.2 Gflop, one piece */
	for (size_t i0 = 0; i0 < n; i0 += 100)
	{
		interrupts = 0;
		CHECK(km_primal_add(blocks, m, KM_PRIMAL_LOGISTIC, Z + i0 * m, 100, cls + i0,
							NULL, coef, 0.1, scratch, count_interrupt), "add");
		CHECK(interrupts == 1, "%d interrupt checks in one piece", interrupts);
	}
	CHECK(unit_rel_diff(whole, blocks, sd) < 1e-12, "pieces differ from one dsyrk: %g",
		  unit_rel_diff(whole, blocks, sd));
	free(Z);
	free(coef);
	free(whole);
	free(blocks);
	free(scratch);
	free(cls);
}

/*
 * The sums of approximate regression, km_accum_gram_add, take the same
 * panels: 700 rows at m = 900 (1.1 Gflop) check for interrupts at least
 * twice and give the sums of seven 100-row blocks (0.16 Gflop, one piece).
 */
void
test_accum_gram_pieces(void)
{
	uint32_t	m = 900;
	size_t		n = 700;
	double	   *Z = unit_rand_vec(n * m, 11);
	double	   *y = unit_rand_vec(n, 12);
	double	   *scratch = malloc(km_accum_gram_scratch_doubles(m) * sizeof(double));
	size_t		bytes = km_accum_bytes(KM_ACCUM_GRAM, m);
	km_accum   *one = calloc(1, bytes);
	km_accum   *seven = calloc(1, bytes);

	km_accum_init(one, KM_ACCUM_GRAM, m);
	km_accum_init(seven, KM_ACCUM_GRAM, m);
	interrupts = 0;
	km_accum_gram_add(one, Z, y, n, scratch, count_interrupt);
	CHECK(interrupts >= 2, "%d interrupt checks in 1.1 Gflop", interrupts);
	for (size_t i0 = 0; i0 < n; i0 += 100)
	{
		interrupts = 0;
		km_accum_gram_add(seven, Z + i0 * m, y + i0, 100, scratch, count_interrupt);
		CHECK(interrupts == 1, "%d interrupt checks in one piece", interrupts);
	}
	CHECK(unit_rel_diff(km_accum_gram_parts(one).zz, km_accum_gram_parts(seven).zz,
						(size_t) m * (m + 1) / 2) < 1e-12, "panels differ from one dsyrk");
	free(Z);
	free(y);
	free(scratch);
	free(one);
	free(seven);
}
