/*
 * primal_pass.c - the primal Newton passes of the approximate classifiers
 * over blocks of rows, every output at once (primal_pass.h).
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "primal_pass.h"

uint32_t
km_primal_outputs(uint32_t k)
{
	return k == 2 ? 1 : k;
}

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
km_primal_pass_add(km_primal_pass *ps, const double *Z, size_t rows,
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
		if (!km_primal_add(ps->states + (size_t) c * nstate, m, ps->params.loss,
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
km_primal_piece_rows(uint32_t m, uint32_t d, bool whitened, size_t rows,
					 double max_flops)
{
	double		piece = max_flops / ((double) m * (2.0 * d + (whitened ? m : 0.0)));

	piece = fmin((double) rows, piece);
	return (size_t) fmax(1.0, piece);
}

km_status
km_primal_block_features(const km_basis *b, const double *L, const double *Xs,
						 size_t rows, double *Z, double *work, km_error *err)
{
	uint32_t	m = b->m;
	km_status	st = km_approx_features(b, Xs, rows, Z, work, err);

	if (st != KM_OK)
		return st;
	if (L != NULL)
		/* rows of Z are the columns of a column-major m x rows matrix: L^-1 Z^T */
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) m, (int) rows, 1.0, L, (int) m, Z, (int) m);
	return KM_OK;
}

void
km_primal_unwhiten(const double *L, uint32_t m, uint32_t q, double *coef)
{
	cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
				(int) m, (int) q, 1.0, L, (int) m, coef, (int) m);
}

void
km_primal_decisions(const double *Z, size_t rows, uint32_t m, uint32_t q,
					const double *coef, const double *intercepts, double *F)
{
	for (size_t i = 0; i < rows; i++)
		memcpy(F + i * q, intercepts, sizeof(double) * q);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) q,
				(int) m, 1.0, Z, (int) m, coef, (int) m, 1.0, F, (int) q);
}
