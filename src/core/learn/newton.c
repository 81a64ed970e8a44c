/*
 * newton.c - the one Newton over passes (newton.h).
 */
#include <stdio.h>
#include <string.h>

#include "learn/newton.h"

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

bool
km_newton_add(km_newton *nt, const double *Z, size_t rows, const double *y,
			  const uint32_t *cls, const double *w, uint32_t *bad)
{
	km_primal_pass *ps = &nt->ps;

	*bad = 0;
	if (nt->ops != NULL)
		return ps->solvers[0].done ||
			nt->ops->primal_add(nt->fit, ps->states, ps->m, Z, rows, y, ps->coef,
								ps->intercepts[0], ps->scratch, nt->interrupt);
	return km_primal_pass_add(ps, Z, rows, cls, w, bad, nt->interrupt) == KM_OK;
}

/* Every output's step: primal.h's, or the method's own (q = 1). */
static km_status
newton_step(km_newton *nt, km_error *err)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;

	if (nt->ops == NULL)
		return km_primal_pass_step(ps, err, nt->interrupt);
	ps->current = true;
	if (ps->solvers[0].done)
		return KM_OK;
	memcpy(ps->before, ps->coef, sizeof(double) * m);
	ps->before[m] = ps->intercepts[0];
	if (nt->ops->primal_step(nt->fit, &ps->solvers[0], ps->states, ps->R, ps->coef,
							 &ps->intercepts[0], ps->vecs, ps->swork, err,
							 nt->interrupt) != KM_OK)
		return err->status;
	if (!ps->solvers[0].done || ps->before[m] != ps->intercepts[0] ||
		memcmp(ps->before, ps->coef, sizeof(double) * m) != 0)
		ps->current = false;
	return KM_OK;
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
		if (newton_step(nt, err) != KM_OK)
		{
			*step_failed = true;
			return err->status;
		}
	}
	return KM_OK;
}
