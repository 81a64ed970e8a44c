/*
 * primal.c - primal Newton for approximate kernel classifiers over
 * additive per-pass statistics (primal.h).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "accum.h"
#include "kernels.h"
#include "primal.h"
#include "solve.h"

#define KM_ARMIJO_C 1e-4
#define KM_MIN_STEP 1e-12
/*
 * The no-progress stop: KM_STALL_STEPS accepted steps in a row, each of
 * which lowered J by no more than KM_FLAT_ULPS roundings of J and left the
 * gradient norm above KM_STALL_RATIO of its value before.  A Newton step
 * near the optimum cuts the gradient by far more (Newton-CG's forcing term
 * is at most 0.1); steps that do neither have met the floor of the summed
 * gradient (about 1e-9 of its start for Newton-CG's whitened sums), where
 * the next ones would repeat the point to max_iter.  Three, not one: J's
 * rounding in the line search may reject a good step (t halved to 1e-5)
 * twice and accept it at t = 1 the third time, the gradient then at 1e-14
 * of its start (the cg test's two classes at lambda 1e-4: flat steps 8 and
 * 9, converged at 10).
 */
#define KM_FLAT_ULPS 8.0
#define KM_STALL_RATIO 0.5
#define KM_STALL_STEPS 3

/* Flops of one uninterruptible BLAS piece (about 0.1 s on one core). */

size_t
km_primal_state_doubles(uint32_t m)
{
	size_t		mm = m;

	if (m == 0 || mm > (1u << 24))
		return 0;
	return 5 + 2 * mm + mm * (mm + 1) / 2;
}

void
km_primal_state_init(double *state, uint32_t m)
{
	memset(state, 0, km_primal_state_doubles(m) * sizeof(double));
}

void
km_primal_combine(double *a, const double *b, uint32_t m)
{
	size_t		len = km_primal_state_doubles(m);

	for (size_t i = 0; i < len; i++)
		a[i] += b[i];
}

size_t
km_primal_add_scratch_doubles(uint32_t m, size_t rows)
{
	return rows * ((size_t) m + 2) + (size_t) m * m;
}

bool
km_primal_add(double *state, uint32_t m, km_primal_loss loss, const double *Z,
			  size_t rows, const uint32_t *cls, const double *weights,
			  const double *coef, double b, double *scratch,
			  km_interrupt_fn interrupt)
{
	double	   *f = scratch;
	double	   *wh = f + rows;
	double	   *Zs = wh + rows;		/* rows x m */
	double	   *S = Zs + rows * m;	/* m x m */
	double	   *gz = state + KM_PRIMAL_GZ;
	double	   *hzb = state + KM_PRIMAL_HZB(m);
	double	   *hzz = state + KM_PRIMAL_HZZ(m);
	double		wsum = 0.0,
				lsum = 0.0,
				gb = 0.0,
				hbb = 0.0;
	size_t		active = 0;		/* rows with w L'' > 0: the rows of Zs */

	if (rows == 0)
		return true;
	for (size_t i = 0; i < rows; i++)
		f[i] = b;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m,
				coef, 1, 1.0, f, 1);
	if (!km_all_finite(f, rows))
		return false;
	for (size_t i = 0; i < rows; i++)
	{
		double		w = weights ? weights[i] : 1.0;
		double		y = cls[i] == 1 ? 1.0 : -1.0;
		double		z = y * f[i];
		double		L,
					g,
					h;

		if (loss == KM_PRIMAL_SQHINGE)
		{
			double		slack = fmax(0.0, 1.0 - z);

			L = slack * slack;
			g = -2.0 * y * slack;
			h = slack > 0.0 ? 2.0 : 0.0;
		}
		else
		{
			/* p = P(class 1) = sigmoid(f) */
			double		e = exp(-fabs(f[i]));
			double		p = f[i] >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);

			L = z > 0 ? log1p(exp(-z)) : -z + log1p(exp(z));
			g = p - (cls[i] == 1 ? 1.0 : 0.0);
			h = p * (1.0 - p);
		}
		wsum += w;
		lsum += w * L;
		gb += w * g;
		hbb += w * h;
		f[i] = w * g;			/* f now holds w L' */
		wh[i] = w * h;
		/* rows with no curvature (the squared hinge's inactive rows) add nothing to H */
		if (w * h > 0.0)
		{
			double		sq = sqrt(w * h);

			for (uint32_t j = 0; j < m; j++)
				Zs[active * m + j] = sq * Z[i * m + j];
			active++;
		}
	}
	state[KM_PRIMAL_ROWS] += (double) rows;
	state[KM_PRIMAL_WSUM] += wsum;
	state[KM_PRIMAL_LOSS] += lsum;
	state[KM_PRIMAL_GB] += gb;
	state[KM_PRIMAL_HBB] += hbb;
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m,
				f, 1, 1.0, gz, 1);
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m,
				wh, 1, 1.0, hzb, 1);
	/* Zs^T Zs, in interruptible panels */
	if (active == 0)
		return true;
	km_packed_syrk_add(hzz, Zs, m, active, S, interrupt);
	return true;
}

void
km_primal_solver_init(km_primal_solver *s, uint32_t m)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->t = 1.0;
}

size_t
km_primal_step_work_doubles(uint32_t m)
{
	return ((size_t) m + 1) * ((size_t) m + 1) + m + 1;
}

km_status
km_primal_step(km_primal_solver *s, const km_primal_params *p,
			   const double *state, const double *R, double *coef, double *b,
			   double *vecs, double *work, km_error *err,
			   km_interrupt_fn interrupt)
{
	uint32_t	m = s->m;
	size_t		N = (size_t) m + (p->fit_intercept ? 1 : 0);
	double	   *coef_prev = vecs;
	double	   *dir = vecs + m;
	double	   *H = work;		/* N x N */
	double	   *rhs = s->direction != NULL ? work : work + N * N;	/* N */
	double		tol = p->tol > 0.0 ? p->tol : KM_PRIMAL_TOL;
	int			max_iter = p->max_iter > 0 ? p->max_iter : KM_PRIMAL_MAX_ITER;
	double		W = state[KM_PRIMAL_WSUM];
	double		lambda = p->lambda;
	double		J,
				norm2 = 0.0,
				prev_objective,
				prev_norm;
	const double *hzz = state + KM_PRIMAL_HZZ(m);
	size_t		bad;

	if (s->done)
		return KM_OK;
	if (!(W > 0.0) || !isfinite(W))
		return km_fail(err, KM_ERR_INVALID, "no rows to train on",
					   "The statistics of the pass hold %g rows of total weight %g.",
					   state[KM_PRIMAL_ROWS], W);
	if (!(lambda > 0.0) || !isfinite(lambda))
		return km_fail(err, KM_ERR_INVALID, "invalid lambda",
					   "The penalty lambda must be a positive finite number, not %g.", lambda);
	if (p->loss != KM_PRIMAL_LOGISTIC && p->loss != KM_PRIMAL_SQHINGE)
		return km_fail(err, KM_ERR_INVALID, "unknown primal loss",
					   "Loss %d is neither logistic nor squared hinge.", (int) p->loss);
	s->passes++;

	/* rhs[0..m) := R coef; J at this point */
	if (R != NULL)
		cblas_dsymv(CblasColMajor, CblasUpper, (int) m, 1.0, R, (int) m, coef, 1,
					0.0, rhs, 1);
	else
		memcpy(rhs, coef, m * sizeof(double));
	J = state[KM_PRIMAL_LOSS] / W + 0.5 * lambda * cblas_ddot((int) m, coef, 1, rhs, 1);
	if (!isfinite(J))
		return km_fail(err, KM_ERR_DIVERGED, "primal newton diverged",
					   "The objective is not finite after %d Newton steps.", s->iterations);

	if (s->started &&
		!(J <= s->objective + KM_ARMIJO_C * s->t * s->slope ||
		  (s->t == 1.0 && fabs(J - s->objective) <= 8 * DBL_EPSILON * fabs(s->objective))))
	{
		/* rejected: halve the step from the accepted point */
		s->t *= 0.5;
		if (s->t < KM_MIN_STEP)
		{
			memcpy(coef, coef_prev, m * sizeof(double));
			*b = s->b_prev;
			s->done = true;
			return KM_OK;
		}
		for (uint32_t j = 0; j < m; j++)
			coef[j] = coef_prev[j] + s->t * dir[j];
		*b = s->b_prev + s->t * s->db;
		return KM_OK;
	}

	/* accepted: the gradient */
	prev_objective = s->objective;
	prev_norm = s->grad_norm;
	s->objective = J;
	for (uint32_t j = 0; j < m; j++)
	{
		rhs[j] = state[KM_PRIMAL_GZ + j] / W + lambda * rhs[j];
		norm2 += rhs[j] * rhs[j];
	}
	if (p->fit_intercept)
	{
		rhs[m] = state[KM_PRIMAL_GB] / W;
		norm2 += rhs[m] * rhs[m];
	}
	s->grad_norm = sqrt(norm2);
	if (!s->started)
		s->grad_norm0 = s->grad_norm;
	s->started = true;
	if (s->grad_norm <= tol * s->grad_norm0)
	{
		s->converged = true;
		s->done = true;
		return KM_OK;
	}
	if (s->iterations > 0 &&
		J >= prev_objective - KM_FLAT_ULPS * DBL_EPSILON * fabs(prev_objective) &&
		s->grad_norm > KM_STALL_RATIO * prev_norm)
		s->flat_steps++;
	else
		s->flat_steps = 0;
	if (s->flat_steps >= KM_STALL_STEPS)
	{
		/* the last steps moved neither J beyond rounding nor the gradient: the floor */
		s->stalled = true;
		s->done = true;
		return KM_OK;
	}
	if (s->iterations >= max_iter)
	{
		s->done = true;
		return KM_OK;
	}

	/* the Newton system, lower triangle, with one jittered retry */
	bad = 0;
	for (int attempt = 0; attempt < 2 && s->direction == NULL; attempt++)
	{
		for (size_t j = 0; j < m; j++)
		{
			/* m^2 / 2 strided writes into fresh pages (512 MB at m = 8,192): cancellable */
			if (j % 256 == 255)
				km_check_interrupts(interrupt);
			for (size_t i = 0; i <= j; i++)
				H[j + i * N] = hzz[i + j * (j + 1) / 2] / W +
					(R != NULL ? lambda * R[i + j * m] : i == j ? lambda : 0.0);
		}
		if (p->fit_intercept)
		{
			for (size_t j = 0; j < m; j++)
				H[m + j * N] = state[KM_PRIMAL_HZB(m) + j] / W;
			H[m + m * N] = state[KM_PRIMAL_HBB] / W;
		}
		if (attempt == 1)
		{
			double		tr = 0.0;
			double		jitter;

			for (size_t j = 0; j < N; j++)
				tr += H[j + j * N];
			jitter = 1e-10 * fmax(tr / (double) N, DBL_MIN);
			for (size_t j = 0; j < N; j++)
				H[j + j * N] += jitter;
		}
		bad = km_cholesky(H, N, N, interrupt);
		if (bad == 0)
			break;
	}
	if (bad != 0)
		return km_fail(err, KM_ERR_NOT_PD, "primal newton system is singular",
					   "The Cholesky factorisation of the %zu x %zu Newton system failed at order %zu even with jitter.",
					   N, N, bad);
	for (size_t j = 0; j < N; j++)
		rhs[j] = -rhs[j];
	/* slope = grad . dir = -rhs_before . dir: keep the gradient in dir's place */
	memcpy(dir, rhs, m * sizeof(double));
	s->gb = p->fit_intercept ? rhs[m] : 0.0;
	if (s->direction != NULL)
	{
		km_status	st;

		if (s->defer)
		{
			s->pending = true;
			return KM_OK;
		}
		st = s->direction(s->direction_arg, s, state, rhs, err);
		if (st != KM_OK)
			return st;
	}
	else
		LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', (lapack_int) N, 1, H, (lapack_int) N,
					   rhs, (lapack_int) N);
	return km_primal_step_finish(s, p, coef, b, vecs, rhs, err, interrupt);
}

km_status
km_primal_step_finish(km_primal_solver *s, const km_primal_params *p,
					  double *coef, double *b, double *vecs, const double *rhs,
					  km_error *err, km_interrupt_fn interrupt)
{
	uint32_t	m = s->m;
	double	   *coef_prev = vecs;
	double	   *dir = vecs + m;

	s->pending = false;
	{
		double		slope = 0.0;

		for (uint32_t j = 0; j < m; j++)
			slope -= dir[j] * rhs[j];
		if (p->fit_intercept)
			slope -= s->gb * rhs[m];
		s->slope = slope;
	}
	memcpy(dir, rhs, m * sizeof(double));
	s->db = p->fit_intercept ? rhs[m] : 0.0;
	if (!km_all_finite(dir, m) || !isfinite(s->db))
		return km_fail(err, KM_ERR_DIVERGED, "primal newton diverged",
					   "The Newton step is not finite after %d steps.", s->iterations);
	memcpy(coef_prev, coef, m * sizeof(double));
	s->b_prev = *b;
	s->t = 1.0;
	s->iterations++;
	for (uint32_t j = 0; j < m; j++)
		coef[j] += dir[j];
	*b += s->db;
	km_check_interrupts(interrupt);
	return KM_OK;
}
