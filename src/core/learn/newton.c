/*
 * newton.c - the one Newton over passes (newton.h): the outputs' sums,
 * steps and totals, and the loop that asks a host for a pass per step.
 */
#include <stdio.h>
#include <string.h>

#include "learn/newton.h"

size_t
km_primal_pass_doubles(uint32_t m, uint32_t q, size_t block)
{
	size_t		nstate = km_primal_state_doubles(m);
	double		total;

	if (nstate == 0 || q == 0)
		return 0;
	total = (double) q * ((double) nstate + 2.0 * m) +
		(double) km_primal_step_work_doubles(m) +
		(double) km_primal_add_scratch_doubles(m, block) + (double) m + 1.0;
	return total < (double) (SIZE_MAX / sizeof(double)) ? (size_t) total : 0;
}

void
km_primal_pass_start(km_primal_pass *ps, const km_primal_params *p,
					 double *coef, double *intercepts)
{
	ps->params = *p;
	ps->coef = coef;
	ps->intercepts = intercepts;
	ps->current = false;
	memset(coef, 0, sizeof(double) * ps->m * ps->q);
	memset(intercepts, 0, sizeof(double) * ps->q);
	for (uint32_t c = 0; c < ps->q; c++)
		km_primal_solver_init(&ps->solvers[c], ps->m);
}

bool
km_primal_pass_begin(km_primal_pass *ps)
{
	size_t		nstate = km_primal_state_doubles(ps->m);
	bool		any = false;

	for (uint32_t c = 0; c < ps->q; c++)
		if (!ps->solvers[c].done)
		{
			km_primal_state_init(ps->states + (size_t) c * nstate, ps->m);
			any = true;
		}
	return any;
}

km_status
km_primal_pass_add(km_primal_pass *ps, double *states, const double *Z, size_t rows,
				   const uint32_t *cls, const double *weights,
				   uint32_t *bad_output, km_interrupt_fn interrupt)
{
	uint32_t	m = ps->m;
	uint32_t	q = ps->q;
	size_t		nstate = km_primal_state_doubles(m);

	for (uint32_t c = 0; c < q; c++)
	{
		if (ps->solvers[c].done)
			continue;
		for (size_t i = 0; i < rows; i++)
			ps->yc[i] = q == 1 ? cls[i] : (cls[i] == c ? 1 : 0);
		if (!km_primal_add(states + (size_t) c * nstate, m, ps->params.loss,
						   Z, rows, ps->yc, weights, ps->coef + (size_t) c * m,
						   ps->intercepts[c], ps->scratch, interrupt))
		{
			*bad_output = c;
			return KM_ERR_DIVERGED;
		}
	}
	return KM_OK;
}

void
km_primal_pass_combine(km_primal_pass *ps, const double *states)
{
	size_t		nstate = km_primal_state_doubles(ps->m);

	for (uint32_t c = 0; c < ps->q; c++)
		if (!ps->solvers[c].done)
			km_primal_combine(ps->states + (size_t) c * nstate,
							  states + (size_t) c * nstate, ps->m);
}

km_status
km_primal_pass_step(km_primal_pass *ps, km_error *err, km_interrupt_fn interrupt)
{
	uint32_t	m = ps->m;
	size_t		nstate = km_primal_state_doubles(m);

	ps->current = true;
	for (uint32_t c = 0; c < ps->q; c++)
	{
		km_primal_solver *s = &ps->solvers[c];
		double	   *coef = ps->coef + (size_t) c * m;
		km_status	st;

		if (s->done)
			continue;
		memcpy(ps->before, coef, sizeof(double) * m);
		ps->before[m] = ps->intercepts[c];
		if (ps->ops != NULL)
			st = ps->ops->primal_step(ps->fit, s, ps->states + (size_t) c * nstate,
									  ps->R, coef, &ps->intercepts[c],
									  ps->vecs + (size_t) c * 2 * m, ps->swork, err,
									  interrupt);
		else
			st = km_primal_step(s, &ps->params, ps->states + (size_t) c * nstate,
								ps->R, coef, &ps->intercepts[c],
								ps->vecs + (size_t) c * 2 * m, ps->swork, err,
								interrupt);
		if (st != KM_OK)
			return st;
		if (ps->on_step != NULL)
			ps->on_step(ps->on_step_arg, c, s);
		if (!s->done || ps->before[m] != ps->intercepts[c] ||
			memcmp(ps->before, coef, sizeof(double) * m) != 0)
			ps->current = false;
	}
	return KM_OK;
}

void
km_primal_pass_totals(const km_primal_pass *ps, double *objective,
					  int *iterations, bool *converged)
{
	*objective = 0.0;
	*iterations = 0;
	*converged = true;
	for (uint32_t c = 0; c < ps->q; c++)
	{
		*objective += ps->solvers[c].objective;
		if (ps->solvers[c].iterations > *iterations)
			*iterations = ps->solvers[c].iterations;
		*converged = *converged && ps->solvers[c].converged;
	}
}

size_t
km_newton_bytes(uint32_t m, uint32_t q, size_t block, size_t extra)
{
	size_t		doubles = km_primal_pass_doubles(m, q, block);
	double		total = 8.0 * ((double) doubles + extra) + 4.0 * (double) block +
		(double) sizeof(km_primal_solver) * q + 16.0;

	return doubles == 0 || total >= (double) (SIZE_MAX / 2) ? 0 : (size_t) total;
}

void
km_newton_buffers(km_newton *nt, uint32_t m, uint32_t q, size_t block,
				  size_t extra, const double *R, void *mem)
{
	km_primal_pass *ps = &nt->ps;
	double	   *p = mem;

	ps->m = m;
	ps->q = q;
	ps->block = block;
	ps->R = R;
	nt->extra = extra;
	ps->states = p;
	p += km_primal_state_doubles(m) * q + extra;
	ps->vecs = p;
	p += 2 * (size_t) m * q;
	ps->swork = p;
	p += km_primal_step_work_doubles(m);
	ps->scratch = p;
	p += km_primal_add_scratch_doubles(m, block);
	ps->before = p;
	p += (size_t) m + 1;
	ps->solvers = (km_primal_solver *) (void *) p;
	ps->yc = (uint32_t *) (void *) (ps->solvers + q);
}

size_t
km_newton_state_bytes(const km_newton *nt)
{
	return sizeof(double) * (km_primal_state_doubles(nt->ps.m) * nt->ps.q + nt->extra);
}

void
km_newton_start(km_newton *nt, const km_primal_params *p, double *coef,
				double *intercepts)
{
	nt->passes = 0;
	km_primal_pass_start(&nt->ps, p, coef, intercepts);
}

void
km_newton_init_state(const km_newton *nt, double *states)
{
	size_t		nstate = km_primal_state_doubles(nt->ps.m);

	/* each class's sums zeroed between interrupt checks (268 MB at m 8192) */
	for (uint32_t c = 0; c < nt->ps.q; c++)
		if (!nt->ps.solvers[c].done)
		{
			km_check_interrupts(nt->interrupt);
			km_primal_state_init(states + (size_t) c * nstate, nt->ps.m);
		}
}

bool
km_newton_add(km_newton *nt, double *states, const double *Z, size_t rows,
			  const double *y, const uint32_t *cls, const double *w, uint32_t *bad)
{
	km_primal_pass *ps = &nt->ps;

	*bad = 0;
	if (ps->ops != NULL)
		return ps->solvers[0].done ||
			ps->ops->primal_add(ps->fit, states, ps->m, Z, rows, y, ps->coef,
								ps->intercepts[0], ps->scratch, nt->interrupt);
	return km_primal_pass_add(ps, states, Z, rows, cls, w, bad, nt->interrupt) == KM_OK;
}

km_status
km_newton_run(km_newton *nt, const km_host *host, km_pass *pass,
			  bool *step_failed, km_error *err)
{
	size_t		rows;

	*step_failed = false;
	while (km_primal_pass_begin(&nt->ps))
	{
		snprintf(pass->what, sizeof(pass->what), "newton pass %d", nt->passes + 1);
		if (km_pass_run(host, pass, nt->ps.states, &rows, err) != KM_OK)
			return err->status;
		nt->passes++;
		if (km_primal_pass_step(&nt->ps, err, nt->interrupt) != KM_OK)
		{
			*step_failed = true;
			return err->status;
		}
	}
	return KM_OK;
}
