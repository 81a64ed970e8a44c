/*
 * newton.c - the one Newton over passes (newton.h): the outputs' sums,
 * steps and totals, and the loop that asks a host for a pass per step.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "learn/newton.h"

/* Newton-CG's sums of one output: primal.h's first 5 + 2m, then the Hessian's diagonal. */
#define CG_STATE_DOUBLES(m) (KM_PRIMAL_HZZ(m) + (size_t) (m))
#define CG_DIAG(m) KM_PRIMAL_HZZ(m)

/* Newton-CG's scratch: a chunk's f, g, h, u, and one row's sums and add scratch. */
#define CG_SCRATCH_DOUBLES(block) (4 * (size_t) (block) + 16)

/* The loose end of the forcing term (newton.h). */
#define CG_FORCING_MAX 0.1

static size_t
state_doubles(uint32_t m, bool cg)
{
	if (!cg)
		return km_primal_state_doubles(m);
	return m == 0 || m > (1u << 24) ? 0 : CG_STATE_DOUBLES(m);
}

size_t
km_primal_pass_state_doubles(const km_primal_pass *ps)
{
	return state_doubles(ps->m, ps->cg);
}

size_t
km_primal_pass_doubles(uint32_t m, uint32_t q, size_t block, bool cg)
{
	size_t		nstate = state_doubles(m, cg);
	double		total;

	if (nstate == 0 || q == 0)
		return 0;
	total = (double) q * ((double) nstate + 2.0 * m) +
		(cg ? (double) m + 2.0 : (double) km_primal_step_work_doubles(m)) +
		(cg ? (double) CG_SCRATCH_DOUBLES(block) :
		 (double) km_primal_add_scratch_doubles(m, block)) + (double) m + 1.0;
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
	{
		km_primal_solver_init(&ps->solvers[c], ps->m);
		ps->solvers[c].direction = ps->direction;
		ps->solvers[c].direction_arg = ps->direction_arg;
	}
}

bool
km_primal_pass_begin(km_primal_pass *ps)
{
	size_t		nstate = km_primal_pass_state_doubles(ps);
	bool		any = false;

	for (uint32_t c = 0; c < ps->q; c++)
		if (!ps->solvers[c].done)
		{
			memset(ps->states + (size_t) c * nstate, 0, sizeof(double) * nstate);
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
	size_t		nstate = km_primal_pass_state_doubles(ps);

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
	size_t		nstate = km_primal_pass_state_doubles(ps);

	for (uint32_t c = 0; c < ps->q; c++)
		if (!ps->solvers[c].done)
			for (size_t i = 0; i < nstate; i++)
				ps->states[(size_t) c * nstate + i] += states[(size_t) c * nstate + i];
}

km_status
km_primal_pass_step(km_primal_pass *ps, km_error *err, km_interrupt_fn interrupt)
{
	uint32_t	m = ps->m;
	size_t		nstate = km_primal_pass_state_doubles(ps);

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

/* Doubles of Newton-CG's own vectors: the CG's, the diagonal, the direction. */
static size_t
cg_doubles(uint32_t m)
{
	return km_cg_vector_doubles(m + 1) + 2 * ((size_t) m + 1) + 2 * (size_t) m;
}

size_t
km_newton_bytes(uint32_t m, uint32_t q, size_t block, size_t extra, bool cg)
{
	size_t		doubles = km_primal_pass_doubles(m, q, block, cg);
	double		total = 8.0 * ((double) doubles + extra) + 4.0 * (double) block +
		(double) sizeof(km_primal_solver) * q + 16.0 + (cg ? 8.0 * cg_doubles(m) : 0.0);

	return doubles == 0 || total >= (double) (SIZE_MAX / 2) ? 0 : (size_t) total;
}

static km_status newton_cg_direction(void *arg, const km_primal_solver *s,
									 const double *state, double *rhs, km_error *err);

void
km_newton_buffers(km_newton *nt, uint32_t m, uint32_t q, size_t block,
				  size_t extra, bool cg, const double *R, void *mem)
{
	km_primal_pass *ps = &nt->ps;
	double	   *p = mem;

	ps->m = m;
	ps->q = q;
	ps->cg = cg;
	ps->block = block;
	ps->R = R;
	nt->extra = extra;
	ps->states = p;
	p += state_doubles(m, cg) * q + extra;
	ps->vecs = p;
	p += 2 * (size_t) m * q;
	ps->swork = p;
	p += cg ? (size_t) m + 2 : km_primal_step_work_doubles(m);
	ps->scratch = p;
	p += cg ? CG_SCRATCH_DOUBLES(block) : km_primal_add_scratch_doubles(m, block);
	ps->before = p;
	p += (size_t) m + 1;
	nt->hv = false;
	ps->direction = NULL;
	ps->direction_arg = NULL;
	if (cg)
	{
		km_cg_buffers(&nt->cg, m + 1, NULL, p);
		p += km_cg_vector_doubles(m + 1);
		nt->v = nt->cg.v;
		nt->diag = p;
		p += (size_t) m + 1;
		nt->dir = p;
		p += (size_t) m + 1;
		nt->raw = p;
		p += 2 * (size_t) m;
		ps->direction = newton_cg_direction;
		ps->direction_arg = nt;
	}
	ps->solvers = (km_primal_solver *) (void *) p;
	ps->yc = (uint32_t *) (void *) (ps->solvers + q);
}

uint32_t
km_newton_unknowns(const km_newton *nt)
{
	return nt->ps.m + (nt->ps.params.fit_intercept ? 1 : 0);
}

size_t
km_newton_state_bytes(const km_newton *nt)
{
	if (nt->hv)
		return sizeof(double) * km_newton_unknowns(nt);
	return sizeof(double) * (km_primal_pass_state_doubles(&nt->ps) * nt->ps.q + nt->extra);
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
	size_t		nstate = km_primal_pass_state_doubles(&nt->ps);

	if (nt->ps.cg && nt->Lw != NULL)
	{
		/* the pass's point unwhitened, once: L^-T coef, L^-T v */
		int			m = (int) nt->ps.m;

		memcpy(nt->raw, nt->ps.coef, sizeof(double) * m);
		cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, nt->Lw, m,
					nt->raw, 1);
		if (nt->hv)
		{
			memcpy(nt->raw + m, nt->v, sizeof(double) * m);
			cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, nt->Lw, m,
						nt->raw + m, 1);
		}
	}
	if (nt->hv)
	{
		memset(states, 0, sizeof(double) * km_newton_unknowns(nt));
		return;
	}
	/* each class's sums zeroed between interrupt checks (268 MB at m 8192) */
	for (uint32_t c = 0; c < nt->ps.q; c++)
		if (!nt->ps.solvers[c].done)
		{
			km_check_interrupts(nt->interrupt);
			memset(states + (size_t) c * nstate, 0, sizeof(double) * nstate);
		}
}

/*
 * The loss's derivatives at a chunk's rows (Newton-CG, one output): f :=
 * the decision values, g := w L', h := w L'', each from the loss's own add
 * over the row alone with one feature 1 at coef 0 and b = f_i (the add's
 * sum w L' and sum w L'' are then the row's); sums (5, or NULL) += the
 * rows' first five sums.  false when a decision value is not finite.
 */
static bool
cg_derivs(km_newton *nt, const double *Z, size_t rows, const double *y,
		  const uint32_t *cls, const double *w, double *f, double *g, double *h,
		  double *sums)
{
	km_primal_pass *ps = &nt->ps;
	double	   *one = ps->scratch + 4 * ps->block;	/* [0] 1, [1] 0, then a row's sums and scratch */
	double	   *st = one + 2;
	double	   *sc = st + 8;

	one[0] = 1.0;
	one[1] = 0.0;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) ps->m, 1.0, Z, (int) ps->m,
				nt->Lw != NULL ? nt->raw : ps->coef, 1, 0.0, f, 1);
	for (size_t i = 0; i < rows; i++)
	{
		double		fi = f[i] + ps->intercepts[0];
		bool		ok;

		memset(st, 0, sizeof(double) * 8);
		if (ps->ops != NULL)
			ok = ps->ops->primal_add(ps->fit, st, 1, one, 1, &y[i], one + 1, fi, sc, NULL);
		else
		{
			uint32_t	yc = cls[i];

			ok = km_primal_add(st, 1, ps->params.loss, one, 1, &yc, w != NULL ? &w[i] : NULL,
							   one + 1, fi, sc, NULL);
		}
		if (!ok || !isfinite(fi))
			return false;
		g[i] = st[KM_PRIMAL_GB];
		h[i] = st[KM_PRIMAL_HBB];
		if (sums != NULL)
			for (int k = 0; k < KM_PRIMAL_GZ; k++)
				sums[k] += st[k];
	}
	return true;
}

/* Newton-CG's gradient pass: the first five sums, the gradient, h's column, the diagonal. */
static bool
cg_add(km_newton *nt, double *state, const double *Z, size_t rows, const double *y,
	   const uint32_t *cls, const double *w)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	double	   *f = ps->scratch;
	double	   *g = f + ps->block;
	double	   *h = g + ps->block;
	double	   *diag = state + CG_DIAG(m);

	if (ps->solvers[0].done || rows == 0)
		return true;
	if (!cg_derivs(nt, Z, rows, y, cls, w, f, g, h, state))
		return false;
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, g, 1,
				1.0, state + KM_PRIMAL_GZ, 1);
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, h, 1,
				1.0, state + KM_PRIMAL_HZB(m), 1);
	if (nt->Lw == NULL)			/* unwhitened features: Falkon's preconditioner instead */
		for (size_t i = 0; i < rows; i++)
			if (h[i] != 0.0)
				for (uint32_t j = 0; j < m; j++)
					diag[j] += h[i] * Z[i * m + j] * Z[i * m + j];
	return true;
}

bool
km_newton_hv_add(km_newton *nt, double *state, const double *Z, size_t rows,
				 const double *y, const uint32_t *cls, const double *w)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	double	   *f = ps->scratch;
	double	   *g = f + ps->block;
	double	   *h = g + ps->block;
	double	   *u = h + ps->block;
	double		vb = ps->params.fit_intercept ? nt->v[m] : 0.0;

	if (ps->solvers[0].done || rows == 0)
		return true;
	if (!cg_derivs(nt, Z, rows, y, cls, w, f, g, h, NULL))
		return false;
	for (size_t i = 0; i < rows; i++)
		u[i] = vb;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m,
				nt->Lw != NULL ? nt->raw + m : nt->v, 1, 1.0, u, 1);
	for (size_t i = 0; i < rows; i++)
	{
		u[i] *= h[i];
		if (ps->params.fit_intercept)
			state[m] += u[i];
	}
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, u, 1,
				1.0, state, 1);
	return true;
}

/* The CG's operator past a pass: q := q / W + lambda v (the coefficients' penalty, R = I). */
static void
cg_apply(void *arg, const double *v, double *q)
{
	km_newton  *nt = arg;
	uint32_t	N = km_newton_unknowns(nt);
	int			m = (int) nt->ps.m;

	if (nt->Lw != NULL)			/* K^T (D u) whitened */
		cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m, q, 1);
	for (uint32_t j = 0; j < N; j++)
		q[j] = q[j] / nt->W + (j < nt->ps.m ? nt->ps.params.lambda * v[j] : 0.0);
}

/*
 * A Newton-CG step's direction (primal.h km_primal_direction_fn): rhs :=
 * the CG's solution of (H / W + lambda I) d = rhs, Jacobi-preconditioned
 * by the Hessian's diagonal from the gradient pass, to the forcing term.
 */
static km_status
newton_cg_direction(void *arg, const km_primal_solver *s, const double *state,
					double *rhs, km_error *err)
{
	km_newton  *nt = arg;
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	uint32_t	N = km_newton_unknowns(nt);
	km_status	st;

	if (ps->R != NULL)
		return km_fail(err, KM_ERR_INVALID, "newton-cg takes the identity penalty",
					   "The Newton-CG step adds lambda I; the fit gave an m x m penalty (m = %u).", m);
	nt->W = state[KM_PRIMAL_WSUM];
	for (uint32_t j = 0; j < m; j++)
		nt->diag[j] = state[CG_DIAG(m) + j] / nt->W + ps->params.lambda;
	if (N > m)
		nt->diag[m] = state[KM_PRIMAL_HBB] / nt->W;
	nt->cg.lambda = ps->params.lambda;
	nt->cg.interrupt = nt->interrupt;
	nt->cg.rm = 0;
	nt->cg.R = NULL;
	if (nt->Lw != NULL && !nt->no_precondition)
	{
		/* Falkon's in whitened coordinates: km_cg_precondition's s = n / m with n = sum w L'' / W */
		nt->cg.m = m;
		nt->cg.L = (double *) (uintptr_t) nt->Lw;
		nt->cg.R = nt->Rf;
		st = km_cg_precondition(&nt->cg, fmax(state[KM_PRIMAL_HBB] / nt->W, 0.0), err);
		nt->cg.L = NULL;
		if (st != KM_OK)
			return st;
		nt->cg.rm = m;
	}
	nt->cg.m = N;
	nt->cg.tol = fmin(CG_FORCING_MAX, sqrt(s->grad_norm / s->grad_norm0));
	nt->cg.max_iter = KM_CG_MAX_ITER;
	nt->cg.diag = nt->no_precondition ? NULL : nt->diag;
	nt->cg.apply = cg_apply;
	nt->cg.apply_arg = nt;
	snprintf(nt->cg.label, sizeof(nt->cg.label), "newton %d, ", s->iterations + 1);
	nt->hv = true;
	nt->hv_pass->state_bytes = km_newton_state_bytes(nt);
	st = km_cg_solve(&nt->cg, nt->host, nt->hv_pass, rhs, nt->dir, err);
	nt->hv = false;
	nt->cg_iterations += nt->cg.iterations;
	if (st != KM_OK)
		return st;
	memcpy(rhs, nt->dir, sizeof(double) * N);
	return KM_OK;
}

bool
km_newton_add(km_newton *nt, double *states, const double *Z, size_t rows,
			  const double *y, const uint32_t *cls, const double *w, uint32_t *bad)
{
	km_primal_pass *ps = &nt->ps;

	*bad = 0;
	if (ps->cg)
		return cg_add(nt, states, Z, rows, y, cls, w);
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
	nt->host = host;
	nt->hv = false;
	nt->cg_iterations = 0;
	if (nt->ps.cg && (nt->ps.q != 1 || nt->hv_pass == NULL))
	{
		km_fail(err, KM_ERR_INVALID, "solver \"cg\" trains one output",
				"Newton-CG solves regression and two classes; this fit has %u outputs (one-vs-rest).",
				nt->ps.q);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Remove \"solver\" to train every class's output by the direct Newton.");
		return err->status;
	}
	while (km_primal_pass_begin(&nt->ps))
	{
		snprintf(pass->what, sizeof(pass->what), "newton pass %d", nt->passes + 1);
		if (km_pass_run(host, pass, nt->ps.states, &rows, err) != KM_OK)
			return err->status;
		nt->passes++;
		if (nt->ps.cg && nt->Lw != NULL)
		{
			/* K^T g and K^T h whitened: L^-1 */
			int			m = (int) nt->ps.m;

			cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m,
						nt->ps.states + KM_PRIMAL_GZ, 1);
			cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m,
						nt->ps.states + KM_PRIMAL_HZB(m), 1);
		}
		if (km_primal_pass_step(&nt->ps, err, nt->interrupt) != KM_OK)
		{
			*step_failed = true;
			return err->status;
		}
	}
	return KM_OK;
}
