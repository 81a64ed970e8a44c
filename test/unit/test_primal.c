/*
 * test_primal.c - primal.h's Newton on fixed features with R = I (the
 * whitened Nystrom / random features of the approximate classifiers)
 * against optima found by SciPy (test/unit/gen_primal_fixtures.py ->
 * fixtures/primal_data.h): logistic and squared hinge, with and without
 * intercept, unit and varied row weights; the statistics added a block at a
 * time, as the glue adds them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "primal.h"
#include "unit.h"

#include "fixtures/primal_data.h"

/* Run the solver to the end, adding the rows in blocks of `block`. */
static km_status
run_primal_dir(const km_primal_params *p, const double *R, const double *wts,
			   size_t block, double *coef, double *b, km_primal_solver *s,
			   km_primal_direction_fn dir, km_error *err)
{
	uint32_t	m = FXP_M;
	size_t		n = FXP_N;
	size_t		sd = km_primal_state_doubles(m);
	double	   *state = malloc(sd * sizeof(double));
	double	   *scratch = malloc(km_primal_add_scratch_doubles(m, block) * sizeof(double));
	double	   *work = malloc(km_primal_step_work_doubles(m) * sizeof(double));
	double	   *vecs = malloc(2 * m * sizeof(double));
	km_status	st = KM_OK;

	memset(coef, 0, m * sizeof(double));
	*b = 0.0;
	km_primal_solver_init(s, m);
	s->direction = dir;
	while (!s->done && s->passes < 500)
	{
		km_primal_state_init(state, m);
		for (size_t i0 = 0; i0 < n; i0 += block)
		{
			size_t		r = n - i0 < block ? n - i0 : block;

			if (!km_primal_add(state, m, p->loss, fxp_Z + i0 * m, r, fxp_y + i0,
							   wts ? wts + i0 : NULL, coef, *b, scratch, NULL))
			{
				st = km_fail(err, KM_ERR_DIVERGED, "not finite", "block %zu", i0);
				goto out;
			}
		}
		st = km_primal_step(s, p, state, R, coef, b, vecs, work, err, NULL);
		if (st != KM_OK)
			break;
	}
out:
	free(state);
	free(scratch);
	free(work);
	free(vecs);
	return st;
}

static km_status
run_primal(const km_primal_params *p, const double *R, const double *wts,
		   size_t block, double *coef, double *b, km_primal_solver *s,
		   km_error *err)
{
	return run_primal_dir(p, R, wts, block, coef, b, s, NULL, err);
}

/* A direction too short to move anything: 1e-30 times minus the gradient. */
static km_status
tiny_direction(void *arg, const km_primal_solver *s, const double *state, double *rhs,
			   km_error *err)
{
	for (uint32_t j = 0; j < s->m + 1; j++)
		rhs[j] *= 1e-30;
	return KM_OK;
}

void
test_primal_fixtures(void)
{
	uint32_t	m = FXP_M;
	double	   *R = calloc((size_t) m * m, sizeof(double));
	double		coef[FXP_M];
	int			c = 0;

	for (uint32_t j = 0; j < m; j++)
		R[j + j * m] = 1.0;
	for (int l = 0; l < 2; l++)
		for (int icpt = 1; icpt >= 0; icpt--)
			for (int weighted = 0; weighted < 2; weighted++, c++)
			{
				km_primal_params p = {l == 0 ? KM_PRIMAL_LOGISTIC : KM_PRIMAL_SQHINGE,
				FXP_LAMBDA, icpt == 1, 0.0, 0};
				const double *want = fxp_sol + c * (m + 1);
				km_primal_solver s;
				km_error	err;
				double		b;
				double		worst;

				if (run_primal(&p, R, weighted ? fxp_w : NULL, 37, coef, &b, &s, &err) != KM_OK)
				{
					CHECK(0, "case %d: %s: %s", c, err.message, err.detail);
					continue;
				}
				CHECK(s.converged, "case %d: %d steps, %d passes, gradient %g of %g", c,
					  s.iterations, s.passes, s.grad_norm, s.grad_norm0);
				CHECK(s.iterations <= 15, "case %d: %d Newton steps", c, s.iterations);
				worst = fabs(b - want[m]);
				for (uint32_t j = 0; j < m; j++)
					worst = fmax(worst, fabs(coef[j] - want[j]) / fmax(1.0, fabs(want[j])));
				CHECK(worst <= 1e-7, "case %d (loss %d, intercept %d, weights %d): coefficients differ from SciPy's by %g",
					  c, l, icpt, weighted, worst);
				CHECK(icpt == 1 || b == 0.0, "case %d: intercept %g without fit_intercept", c, b);
				CHECK_CLOSE(s.objective, fxp_J[c], 1e-11);
			}
	/* weights matter: the weighted and unit optima differ */
	CHECK(fabs(fxp_sol[0] - fxp_sol[m + 1]) > 1e-3, "fixture weights have no effect");
	free(R);
}

/* A solve that cannot make progress: lambda 0 is refused; so is an empty state. */
void
test_primal_errors(void)
{
	uint32_t	m = FXP_M;
	double	   *R = calloc((size_t) m * m, sizeof(double));
	double		coef[FXP_M];
	double		b;
	km_primal_solver s;
	km_error	err;
	km_primal_params p = {KM_PRIMAL_LOGISTIC, 0.0, true, 0.0, 0};

	for (uint32_t j = 0; j < m; j++)
		R[j + j * m] = 1.0;
	CHECK(run_primal(&p, R, NULL, 64, coef, &b, &s, &err) == KM_ERR_INVALID,
		  "lambda 0 accepted");
	p.lambda = FXP_LAMBDA;
	p.max_iter = 1;
	CHECK(run_primal(&p, R, NULL, 64, coef, &b, &s, &err) == KM_OK && !s.converged &&
		  s.iterations == 1, "max_iter 1: %d steps, converged %d", s.iterations, s.converged);
	free(R);
}

/*
 * The floor stop: steps that move neither J beyond rounding nor the
 * gradient (here a direction of 1e-30 times minus the gradient, as
 * Newton-CG's at the floor of its whitened sums) end the solve after three
 * in a row, stalled and not converged, at the last accepted point (before:
 * the same point to max_iter).
 */
void		test_primal_stall(void);
void
test_primal_stall(void)
{
	uint32_t	m = FXP_M;
	double		coef[FXP_M];
	double		b;
	km_primal_solver s;
	km_error	err;
	km_primal_params p = {KM_PRIMAL_LOGISTIC, FXP_LAMBDA, true, 1e-10, 50};
	double		worst = 0.0;

	CHECK(run_primal_dir(&p, NULL, NULL, 64, coef, &b, &s, tiny_direction, &err) == KM_OK,
		  "stalled solve failed: %s", err.message);
	CHECK(s.done && s.stalled && !s.converged && s.iterations == 3 && s.passes == 4,
		  "stall: done %d stalled %d converged %d after %d steps, %d passes (want 3, 4)",
		  s.done, s.stalled, s.converged, s.iterations, s.passes);
	for (uint32_t j = 0; j < m; j++)
		worst = fmax(worst, fabs(coef[j]));
	CHECK(worst < 1e-20 && fabs(b) < 1e-20, "the point moved: %g, b %g", worst, b);
	/* a solve that progresses is not stopped by it: the fixtures converge (test_primal_fixtures) */
}
