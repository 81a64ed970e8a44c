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
		ps->solvers[c].defer = ps->direction != NULL && ps->lockstep != NULL;
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
	size_t		N = (size_t) m + (ps->params.fit_intercept ? 1 : 0);
	bool		pending = false;

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
		if (s->pending)
		{
			/* its direction with the others' (the step's work: minus the gradient) */
			memcpy(ps->rhs + c * N, ps->swork, sizeof(double) * N);
			pending = true;
			ps->current = false;
			continue;
		}
		if (ps->on_step != NULL)
			ps->on_step(ps->on_step_arg, c, s);
		if (!s->done || ps->before[m] != ps->intercepts[c] ||
			memcmp(ps->before, coef, sizeof(double) * m) != 0)
			ps->current = false;
	}
	if (!pending)
		return KM_OK;
	if (ps->lockstep(ps->direction_arg, err) != KM_OK)
		return err->status;
	for (uint32_t c = 0; c < ps->q; c++)
	{
		km_primal_solver *s = &ps->solvers[c];
		km_status	st;

		if (!s->pending)
			continue;
		st = km_primal_step_finish(s, &ps->params, ps->coef + (size_t) c * m,
								   &ps->intercepts[c], ps->vecs + (size_t) c * 2 * m,
								   ps->rhs + c * N, err, interrupt);
		if (st != KM_OK)
			return st;
		if (ps->on_step != NULL)
			ps->on_step(ps->on_step_arg, c, s);
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

/* The CGs' structs, in doubles. */
#define CG_STRUCT_DOUBLES ((sizeof(km_cg) + sizeof(double) - 1) / sizeof(double))

/*
 * Doubles of Newton-CG's own vectors, per output: the CG's, the diagonal,
 * the direction, raw, the sum of weights, a Hessian-vector pass's sums, the
 * CG's struct.
 */
static double
cg_doubles(uint32_t m)
{
	return (double) km_cg_vector_doubles(m + 1) + 3.0 * ((double) m + 1) + 2.0 * m + 1.0 +
		(double) CG_STRUCT_DOUBLES;
}

size_t
km_newton_bytes(uint32_t m, uint32_t q, size_t block, size_t extra, bool cg)
{
	size_t		doubles = km_primal_pass_doubles(m, q, block, cg);
	double		total = 8.0 * ((double) doubles + extra) + 4.0 * (double) block +
		(double) sizeof(km_primal_solver) * q + 16.0 +
		(cg ? 8.0 * q * cg_doubles(m) + (double) q : 0.0);

	return doubles == 0 || total >= (double) (SIZE_MAX / 2) ? 0 : (size_t) total;
}

static km_status newton_cg_direction(void *arg, const km_primal_solver *s,
									 const double *state, double *rhs, km_error *err);
static km_status newton_cg_lockstep(void *arg, km_error *err);

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
	nt->cur = 0;
	ps->direction = NULL;
	ps->direction_arg = NULL;
	ps->lockstep = NULL;
	ps->rhs = NULL;
	nt->cgs = NULL;
	nt->on = NULL;
	if (cg)
	{
		size_t		N = (size_t) m + 1;

		nt->cgs = (km_cg *) (void *) p;
		p += CG_STRUCT_DOUBLES * q;
		for (uint32_t c = 0; c < q; c++)
		{
			memset(&nt->cgs[c], 0, sizeof(km_cg));
			km_cg_buffers(&nt->cgs[c], m + 1, NULL, p);
			p += km_cg_vector_doubles(m + 1);
		}
		nt->diag = p;
		p += N * q;
		nt->dir = p;
		p += N * q;
		nt->hvout = p;
		p += N * q;
		nt->raw = p;
		p += 2 * (size_t) m * q;
		nt->W = p;
		p += q;
		ps->direction = newton_cg_direction;
		ps->direction_arg = nt;
		if (q > 1)
		{
			ps->lockstep = newton_cg_lockstep;
			ps->rhs = nt->dir;
		}
	}
	ps->solvers = (km_primal_solver *) (void *) p;
	ps->yc = (uint32_t *) (void *) (ps->solvers + q);
	if (cg)
	{
		nt->on = (bool *) (void *) (ps->yc + block);
		memset(nt->on, 0, sizeof(bool) * q);
	}
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
		return sizeof(double) * km_newton_unknowns(nt) * nt->ps.q;
	return sizeof(double) * (km_primal_pass_state_doubles(&nt->ps) * nt->ps.q + nt->extra);
}

void
km_newton_start(km_newton *nt, const km_primal_params *p, double *coef,
				double *intercepts)
{
	nt->passes = 0;
	km_primal_pass_start(&nt->ps, p, coef, intercepts);
}

/* Output c's part in the pass asked now: still solving, or (a Hessian-vector pass of q > 1) multiplied. */
static bool
output_on(const km_newton *nt, uint32_t c)
{
	if (nt->hv && nt->ps.q > 1)
		return nt->on[c];
	return !nt->ps.solvers[c].done;
}

void
km_newton_init_state(const km_newton *nt, double *states)
{
	size_t		nstate = km_primal_pass_state_doubles(&nt->ps);
	uint32_t	N = km_newton_unknowns(nt);

	if (nt->ps.cg && nt->Lw != NULL)
	{
		/* each output's point unwhitened, once: L^-T coef, L^-T v */
		int			m = (int) nt->ps.m;

		for (uint32_t c = 0; c < nt->ps.q; c++)
		{
			double	   *raw = nt->raw + (size_t) c * 2 * m;

			if (nt->ps.q > 1 && !output_on(nt, c))
				continue;
			memcpy(raw, nt->ps.coef + (size_t) c * m, sizeof(double) * m);
			cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, nt->Lw, m,
						raw, 1);
			if (nt->hv)
			{
				memcpy(raw + m, nt->cgs[c].v, sizeof(double) * m);
				cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, nt->Lw, m,
							raw + m, 1);
			}
		}
	}
	if (nt->hv)
	{
		memset(states, 0, sizeof(double) * N * nt->ps.q);
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
 * The loss's derivatives of output c at a chunk's rows (Newton-CG): f :=
 * the decision values, g := w L', h := w L'', each from the loss's own add
 * over the row alone with one feature 1 at coef 0 and b = f_i (the add's
 * sum w L' and sum w L'' are then the row's); sums (5, or NULL) += the
 * rows' first five sums.  One-vs-rest (q > 1): the rows of class c are
 * its 1s.  false when a decision value is not finite.
 */
static bool
cg_derivs(km_newton *nt, uint32_t c, const double *Z, size_t rows, const double *y,
		  const uint32_t *cls, const double *w, double *f, double *g, double *h,
		  double *sums)
{
	km_primal_pass *ps = &nt->ps;
	double	   *one = ps->scratch + 4 * ps->block;	/* [0] 1, [1] 0, then a row's sums and scratch */
	double	   *st = one + 2;
	double	   *sc = st + 8;
	double		b = ps->intercepts[c];

	one[0] = 1.0;
	one[1] = 0.0;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) ps->m, 1.0, Z, (int) ps->m,
				nt->Lw != NULL ? nt->raw + (size_t) c * 2 * ps->m : ps->coef + (size_t) c * ps->m,
				1, 0.0, f, 1);
	for (size_t i = 0; i < rows; i++)
	{
		double		fi = f[i] + b;
		bool		ok;

		memset(st, 0, sizeof(double) * 8);
		if (ps->ops != NULL)
			ok = ps->ops->primal_add(ps->fit, st, 1, one, 1, &y[i], one + 1, fi, sc, NULL);
		else
		{
			uint32_t	yc = ps->q == 1 ? cls[i] : (cls[i] == c ? 1 : 0);

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

/*
 * Newton-CG's gradient pass, every output still solving: the first five
 * sums, the gradient, h's column, the diagonal.  false (*bad the output)
 * when a decision value is not finite.
 */
static bool
cg_add(km_newton *nt, double *states, const double *Z, size_t rows, const double *y,
	   const uint32_t *cls, const double *w, uint32_t *bad)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	size_t		nstate = km_primal_pass_state_doubles(ps);
	double	   *f = ps->scratch;
	double	   *g = f + ps->block;
	double	   *h = g + ps->block;

	if (rows == 0)
		return true;
	for (uint32_t c = 0; c < ps->q; c++)
	{
		double	   *state = states + c * nstate;
		double	   *diag = state + CG_DIAG(m);

		if (ps->solvers[c].done)
			continue;
		if (!cg_derivs(nt, c, Z, rows, y, cls, w, f, g, h, state))
		{
			*bad = c;
			return false;
		}
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, g, 1,
					1.0, state + KM_PRIMAL_GZ, 1);
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, h, 1,
					1.0, state + KM_PRIMAL_HZB(m), 1);
		if (nt->Lw == NULL)		/* unwhitened features: Falkon's preconditioner instead */
			for (size_t i = 0; i < rows; i++)
				if (h[i] != 0.0)
					for (uint32_t j = 0; j < m; j++)
						diag[j] += h[i] * Z[i * m + j] * Z[i * m + j];
	}
	return true;
}

bool
km_newton_hv_add(km_newton *nt, double *state, const double *Z, size_t rows,
				 const double *y, const uint32_t *cls, const double *w)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	uint32_t	N = km_newton_unknowns(nt);
	double	   *f = ps->scratch;
	double	   *g = f + ps->block;
	double	   *h = g + ps->block;
	double	   *u = h + ps->block;

	if (rows == 0)
		return true;
	/* each output multiplied: its own D at its own point, its own v, its N sums */
	for (uint32_t c = 0; c < ps->q; c++)
	{
		double	   *out = state + (size_t) c * N;
		const double *v = nt->cgs[c].v;
		double		vb = ps->params.fit_intercept ? v[m] : 0.0;

		if (!output_on(nt, c))
			continue;
		if (!cg_derivs(nt, c, Z, rows, y, cls, w, f, g, h, NULL))
			return false;
		for (size_t i = 0; i < rows; i++)
			u[i] = vb;
		cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m,
					nt->Lw != NULL ? nt->raw + (size_t) c * 2 * m + m : v, 1, 1.0, u, 1);
		for (size_t i = 0; i < rows; i++)
		{
			u[i] *= h[i];
			if (ps->params.fit_intercept)
				out[m] += u[i];
		}
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, u, 1,
					1.0, out, 1);
	}
	return true;
}

/*
 * The CG's operator past a pass, output nt->cur's: q := q / W + lambda v
 * (the coefficients' penalty, R = I).
 */
static void
cg_apply(void *arg, const double *v, double *q)
{
	km_newton  *nt = arg;
	uint32_t	N = km_newton_unknowns(nt);
	int			m = (int) nt->ps.m;
	double		W = nt->W[nt->cur];

	if (nt->Lw != NULL)			/* K^T (D u) whitened */
		cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m, q, 1);
	for (uint32_t j = 0; j < N; j++)
		q[j] = q[j] / W + (j < nt->ps.m ? nt->ps.params.lambda * v[j] : 0.0);
}

/*
 * Output c's CG set up from its gradient pass's sums (state) and its
 * solver s: the diagonal (Jacobi past R's rm), the operator, the forcing
 * term.  R: Falkon's factor in whitened coordinates, shared, or NULL.
 */
static void
cg_setup(km_newton *nt, uint32_t c, const km_primal_solver *s, const double *state)
{
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	uint32_t	N = km_newton_unknowns(nt);
	km_cg	   *cg = &nt->cgs[c];
	double	   *diag = nt->diag + (size_t) c * N;
	double		W = state[KM_PRIMAL_WSUM];

	nt->W[c] = W;
	for (uint32_t j = 0; j < m; j++)
		diag[j] = state[CG_DIAG(m) + j] / W + ps->params.lambda;
	if (N > m)
		diag[m] = state[KM_PRIMAL_HBB] / W;
	cg->lambda = ps->params.lambda;
	cg->interrupt = nt->interrupt;
	cg->rm = 0;
	cg->R = NULL;
	cg->L = NULL;
	cg->m = N;
	cg->tol = fmin(CG_FORCING_MAX, sqrt(s->grad_norm / s->grad_norm0));
	cg->max_iter = KM_CG_MAX_ITER;
	cg->diag = nt->no_precondition ? NULL : diag;
	cg->apply = cg_apply;
	cg->apply_arg = nt;
}

/*
 * Falkon's R R^T = s L^T L + lambda I into nt->Rf (cg's order m for the
 * while), s = hbb: the Hessian's scale sum w L'' / W; then cg's B = R^-T
 * on the first m unknowns.
 */
static km_status
cg_falkon(km_newton *nt, km_cg *cg, double hbb, km_error *err)
{
	uint32_t	m = nt->ps.m;
	uint32_t	N = cg->m;
	km_status	st;

	cg->m = m;
	cg->L = (double *) (uintptr_t) nt->Lw;
	cg->R = nt->Rf;
	st = km_cg_precondition(cg, fmax(hbb, 0.0), err);
	cg->L = NULL;
	cg->m = N;
	if (st != KM_OK)
		return st;
	cg->rm = m;
	return KM_OK;
}

/*
 * A Newton-CG step's direction (primal.h km_primal_direction_fn, one
 * output): rhs := the CG's solution of (H / W + lambda I) d = rhs,
 * Jacobi-preconditioned by the Hessian's diagonal from the gradient pass
 * (Falkon's over nystrom features), to the forcing term.
 */
static km_status
newton_cg_direction(void *arg, const km_primal_solver *s, const double *state,
					double *rhs, km_error *err)
{
	km_newton  *nt = arg;
	km_primal_pass *ps = &nt->ps;
	uint32_t	m = ps->m;
	uint32_t	N = km_newton_unknowns(nt);
	km_cg	   *cg = &nt->cgs[0];
	km_status	st;

	if (ps->R != NULL)
		return km_fail(err, KM_ERR_INVALID, "newton-cg takes the identity penalty",
					   "The Newton-CG step adds lambda I; the fit gave an m x m penalty (m = %u).", m);
	nt->cur = 0;
	cg_setup(nt, 0, s, state);
	if (nt->Lw != NULL && !nt->no_precondition &&
		cg_falkon(nt, cg, state[KM_PRIMAL_HBB] / nt->W[0], err) != KM_OK)
		return err->status;
	snprintf(cg->label, sizeof(cg->label), "newton %d, ", s->iterations + 1);
	nt->hv = true;
	nt->hv_pass->state_bytes = km_newton_state_bytes(nt);
	st = km_cg_solve(cg, nt->host, nt->hv_pass, rhs, nt->dir, err);
	nt->hv = false;
	nt->cg_iterations += cg->iterations;
	if (st != KM_OK)
		return st;
	memcpy(rhs, nt->dir, sizeof(double) * N);
	return KM_OK;
}

/*
 * The directions of every output whose step waits (q > 1, ps->rhs): their
 * CGs in lockstep, each iteration one Hessian-vector pass that multiplies
 * the outputs still iterating (each stops on its own forcing term or
 * KM_CG_MAX_ITER), preconditioned as newton_cg_direction's with one
 * Falkon factor for all, at the mean of their Hessian scales.
 */
static km_status
newton_cg_lockstep(void *arg, km_error *err)
{
	km_newton  *nt = arg;
	km_primal_pass *ps = &nt->ps;
	uint32_t	q = ps->q;
	uint32_t	N = km_newton_unknowns(nt);
	size_t		nstate = km_primal_pass_state_doubles(ps);
	double		hbb = 0.0;
	uint32_t	waiting = 0;
	int			newton = 0;
	size_t		rows;

	if (ps->R != NULL)
		return km_fail(err, KM_ERR_INVALID, "newton-cg takes the identity penalty",
					   "The Newton-CG step adds lambda I; the fit gave an m x m penalty (m = %u).",
					   ps->m);
	for (uint32_t c = 0; c < q; c++)
	{
		const km_primal_solver *s = &ps->solvers[c];

		nt->on[c] = false;
		if (!s->pending)
			continue;
		cg_setup(nt, c, s, ps->states + c * nstate);
		hbb += ps->states[c * nstate + KM_PRIMAL_HBB] / nt->W[c];
		waiting++;
		if (s->iterations + 1 > newton)
			newton = s->iterations + 1;
	}
	if (nt->Lw != NULL && !nt->no_precondition)
	{
		km_cg	   *first = NULL;

		for (uint32_t c = 0; c < q && first == NULL; c++)
			if (ps->solvers[c].pending)
				first = &nt->cgs[c];
		if (cg_falkon(nt, first, hbb / waiting, err) != KM_OK)
			return err->status;
		for (uint32_t c = 0; c < q; c++)
			if (ps->solvers[c].pending)
			{
				nt->cgs[c].R = nt->Rf;
				nt->cgs[c].rm = ps->m;
			}
	}
	for (uint32_t c = 0; c < q; c++)
		if (ps->solvers[c].pending &&
			km_cg_begin(&nt->cgs[c], ps->rhs + (size_t) c * N, err) != KM_OK)
			return err->status;
	for (int it = 1;; it++)
	{
		uint32_t	on = 0;
		double		worst = 0.0;

		for (uint32_t c = 0; c < q; c++)
		{
			nt->on[c] = ps->solvers[c].pending && km_cg_want(&nt->cgs[c]);
			if (nt->on[c])
			{
				on++;
				worst = fmax(worst, nt->cgs[c].residual);
			}
		}
		if (on == 0)
			break;
		snprintf(nt->hv_pass->what, sizeof(nt->hv_pass->what),
				 "newton %d, cg %d: residual %.3g, %u of %u classes", newton, it, worst, on,
				 waiting);
		nt->hv = true;
		nt->hv_pass->state_bytes = km_newton_state_bytes(nt);
		if (km_pass_run(nt->host, nt->hv_pass, nt->hvout, &rows, err) != KM_OK)
		{
			nt->hv = false;
			return err->status;
		}
		nt->hv = false;
		nt->cg_iterations++;
		for (uint32_t c = 0; c < q; c++)
		{
			if (!nt->on[c])
				continue;
			memcpy(nt->cgs[c].q, nt->hvout + (size_t) c * N, sizeof(double) * N);
			nt->cur = c;
			if (km_cg_advance(&nt->cgs[c], err) != KM_OK)
				return err->status;
		}
	}
	for (uint32_t c = 0; c < q; c++)
		if (ps->solvers[c].pending)
			km_cg_end(&nt->cgs[c], ps->rhs + (size_t) c * N, ps->rhs + (size_t) c * N);
	return KM_OK;
}

bool
km_newton_add(km_newton *nt, double *states, const double *Z, size_t rows,
			  const double *y, const uint32_t *cls, const double *w, uint32_t *bad)
{
	km_primal_pass *ps = &nt->ps;

	*bad = 0;
	if (ps->cg)
		return cg_add(nt, states, Z, rows, y, cls, w, bad);
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
	if (nt->ps.cg && nt->hv_pass == NULL)
		return km_fail(err, KM_ERR_INVALID, "newton-cg has no Hessian-vector pass",
					   "The caller of the Newton passes gave no pass for the products of %u outputs.",
					   nt->ps.q);
	while (km_primal_pass_begin(&nt->ps))
	{
		snprintf(pass->what, sizeof(pass->what), "newton pass %d", nt->passes + 1);
		if (km_pass_run(host, pass, nt->ps.states, &rows, err) != KM_OK)
			return err->status;
		nt->passes++;
		if (nt->ps.cg && nt->Lw != NULL)
		{
			/* each output's K^T g and K^T h whitened: L^-1 */
			int			m = (int) nt->ps.m;
			size_t		nstate = km_primal_pass_state_doubles(&nt->ps);

			for (uint32_t c = 0; c < nt->ps.q; c++)
			{
				double	   *state = nt->ps.states + c * nstate;

				if (nt->ps.solvers[c].done)
					continue;
				cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m,
							state + KM_PRIMAL_GZ, 1);
				cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, nt->Lw, m,
							state + KM_PRIMAL_HZB(m), 1);
			}
		}
		if (km_primal_pass_step(&nt->ps, err, nt->interrupt) != KM_OK)
		{
			*step_failed = true;
			return err->status;
		}
	}
	return KM_OK;
}
