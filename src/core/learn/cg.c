/*
 * cg.c - Falkon's preconditioned conjugate gradient over passes (cg.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "learn/cg.h"
#include "progress.h"
#include "solve.h"

/* Flops of one uninterruptible block of L^T L (about 0.1 s on one core). */
#define CG_PIECE_FLOPS 1e9

/* Vectors of m besides R: v, beta, res, p, q, w. */
#define CG_VECTORS 6

size_t
km_cg_doubles(uint32_t m)
{
	size_t		mm = m;

	if (m == 0 || mm > SIZE_MAX / 8 / mm - CG_VECTORS - KM_BLOCK_ROWS)
		return 0;
	return mm * mm + CG_VECTORS * mm + KM_BLOCK_ROWS;
}

size_t
km_cg_vector_doubles(uint32_t m)
{
	return m == 0 ? 0 : CG_VECTORS * (size_t) m + KM_BLOCK_ROWS;
}

void
km_cg_buffers(km_cg *cg, uint32_t m, double *L, double *mem)
{
	size_t		mm = m;

	cg->m = m;
	cg->L = L;
	cg->R = L != NULL ? mem : NULL;
	cg->v = L != NULL ? cg->R + mm * mm : mem;
	cg->beta = cg->v + mm;
	cg->res = cg->beta + mm;
	cg->p = cg->res + mm;
	cg->q = cg->p + mm;
	cg->t = cg->q + 2 * mm;		/* w, the sixth vector, is q + m */
}

km_status
km_cg_precondition(km_cg *cg, double n, km_error *err)
{
	size_t		m = cg->m;
	double		scale = n / (double) m;
	size_t		nb = (size_t) (CG_PIECE_FLOPS / ((double) m * (double) m));
	size_t		bad;

	if (nb < 32)
		nb = 32;
	km_progress_phase("cg: preconditioner, m = %zu", m);
	/*
	 * R's lower triangle := scale L^T L, a block of columns J = j0..j1 at a
	 * time: (L^T L)[j0.., J] = L[j0.., j0..]^T L[j0.., J] (L lower; the
	 * strict upper triangle of L is read as zero, so it is made so)
	 */
	for (size_t j0 = 0; j0 < m; j0++)
		for (size_t i = 0; i < j0; i++)
			cg->L[i + j0 * m] = 0.0;
	for (size_t j0 = 0; j0 < m; j0 += nb)
	{
		size_t		w = m - j0 < nb ? m - j0 : nb;

		/* R[j0.., J] := L[j0.., J], then := scale L[j0.., j0..]^T R[j0.., J] (triangular) */
		for (size_t j = j0; j < j0 + w; j++)
			memcpy(cg->R + j0 + j * m, cg->L + j0 + j * m, sizeof(double) * (m - j0));
		cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
					(int) (m - j0), (int) w, scale, cg->L + j0 + j0 * m, (int) m,
					cg->R + j0 + j0 * m, (int) m);
		km_check_interrupts(cg->interrupt);
	}
	for (size_t i = 0; i < m; i++)
		cg->R[i + i * m] += cg->lambda;
	bad = km_cholesky(cg->R, m, m, cg->interrupt);
	if (bad != 0)
		return km_fail(err, KM_ERR_NOT_PD, "preconditioner of the conjugate gradient is not positive definite",
					   "The Cholesky factor of n / m L^T L + lambda I (n = %.0f, m = %zu, lambda = %g) fails at column %zu.",
					   n, m, cg->lambda, bad);
	return KM_OK;
}

/* R := L^-1 R (R m x m full, column-major), in interruptible blocks of columns. */
static void
solve_left(km_cg *cg, size_t nb)
{
	size_t		m = cg->m;

	for (size_t j0 = 0; j0 < m; j0 += nb)
	{
		size_t		w = m - j0 < nb ? m - j0 : nb;

		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
					(int) m, (int) w, 1.0, cg->L, (int) m, cg->R + j0 * m, (int) m);
		km_check_interrupts(cg->interrupt);
	}
}

/* R := R^T in place (m x m). */
static void
transpose_square(double *R, size_t m)
{
	for (size_t j = 0; j < m; j++)
		for (size_t i = j + 1; i < m; i++)
		{
			double		t = R[i + j * m];

			R[i + j * m] = R[j + i * m];
			R[j + i * m] = t;
		}
}

km_status
km_cg_precondition_sample(km_cg *cg, double n, double s, km_error *err)
{
	size_t		m = cg->m;
	size_t		nb = (size_t) (CG_PIECE_FLOPS / ((double) m * (double) m));
	double		scale = n / s;
	size_t		bad;

	if (nb < 32)
		nb = 32;
	if (!(s >= 1.0))
		return km_fail(err, KM_ERR_INVALID, "preconditioner sample is empty",
					   "The sample of the %.0f rows kept no row.", n);
	km_progress_phase("cg: preconditioner, m = %zu, %.0f sampled rows", m, s);
	/* L's strict upper triangle is read as zero by the solves: made so */
	for (size_t j = 0; j < m; j++)
		for (size_t i = 0; i < j; i++)
			cg->L[i + j * m] = 0.0;
	/* G in full, then L^-1 G, then L^-1 (L^-1 G)^T = L^-1 G L^-T (symmetric) */
	for (size_t j = 0; j < m; j++)
		for (size_t i = j + 1; i < m; i++)
			cg->R[j + i * m] = cg->R[i + j * m];
	solve_left(cg, nb);
	transpose_square(cg->R, m);
	km_check_interrupts(cg->interrupt);
	solve_left(cg, nb);
	for (size_t j = 0; j < m; j++)
	{
		for (size_t i = j; i < m; i++)
			cg->R[i + j * m] *= scale;
		cg->R[j + j * m] += cg->lambda;
	}
	bad = km_cholesky(cg->R, m, m, cg->interrupt);
	if (bad != 0)
		return km_fail(err, KM_ERR_NOT_PD, "preconditioner of the conjugate gradient is not positive definite",
					   "The Cholesky factor of n / s L^-1 G L^-T + lambda I (n = %.0f, %.0f sampled rows, m = %zu, lambda = %g) fails at column %zu.",
					   n, s, m, cg->lambda, bad);
	return KM_OK;
}

void
km_cg_rhs_add(uint32_t m, double *state, const double *Z, const double *y, size_t rows,
			  const double *x0, double *t)
{
	double	   *zy = state;
	double	   *z1 = state + m;
	double	   *tail = state + 2 * (size_t) m;
	double	   *hx = tail + 3;

	if (x0 != NULL)
	{
		cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m, x0, 1,
					0.0, t, 1);
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, t, 1,
					1.0, hx, 1);
	}

	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, y, 1,
				1.0, zy, 1);
	for (size_t i = 0; i < rows; i++)
	{
		cblas_daxpy((int) m, 1.0, Z + i * m, 1, z1, 1);
		tail[0] += y[i];
		tail[1] += y[i] * y[i];
	}
	tail[2] += (double) rows;
}

void
km_cg_hv_add(km_cg *cg, double *state, const double *Z, size_t rows)
{
	int			m = (int) cg->m;

	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, m, 1.0, Z, m, cg->v, 1,
				0.0, cg->t, 1);
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, m, 1.0, Z, m, cg->t, 1,
				1.0, state, 1);
}

/*
 * Without L: x := B x (trans) or B^T x: R^-T or R^-1 on the first rm,
 * Jacobi's 1 / sqrt(diag) past them (a diagonal not above 0 scales by 1).
 */
static void
apply_jacobi(const km_cg *cg, double *x, bool trans)
{
	uint32_t	rm = cg->R != NULL ? cg->rm : 0;

	if (rm > 0)
		cblas_dtrsv(CblasColMajor, CblasLower, trans ? CblasTrans : CblasNoTrans,
					CblasNonUnit, (int) rm, cg->R, (int) rm, x, 1);
	if (cg->diag != NULL)
		for (uint32_t j = rm; j < cg->m; j++)
			if (cg->diag[j] > 0.0)
				x[j] /= sqrt(cg->diag[j]);
}

/* out := B x = L^-T R^-T x */
static void
apply_b(const km_cg *cg, const double *x, double *out)
{
	int			m = (int) cg->m;

	if (out != x)
		memcpy(out, x, sizeof(double) * cg->m);
	if (cg->L == NULL)
	{
		apply_jacobi(cg, out, true);
		return;
	}
	cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, cg->R, m, out, 1);
	cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, cg->L, m, out, 1);
}

/* x := B^T x = R^-1 L^-1 x */
static void
apply_bt(const km_cg *cg, double *x)
{
	int			m = (int) cg->m;

	if (cg->L == NULL)
	{
		apply_jacobi(cg, x, false);
		return;
	}
	cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, cg->L, m, x, 1);
	cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, cg->R, m, x, 1);
}

/* out := lambda L L^T v + out */
static void
add_penalty(const km_cg *cg, const double *v, double *w, double *out)
{
	int			m = (int) cg->m;

	memcpy(w, v, sizeof(double) * cg->m);
	cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, cg->L, m, w, 1);
	cblas_dtrmv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, m, cg->L, m, w, 1);
	cblas_daxpy(m, cg->lambda, w, 1, out, 1);
}

void
km_cg_add_penalty(km_cg *cg, const double *v, double *out)
{
	add_penalty(cg, v, cg->q + cg->m, out);
}

static void
cg_init(km_pass *pass, void *state)
{
	memset(state, 0, pass->state_bytes);
}

void
km_cg_sample_start(const km_cg *cg, const double *r_s, double *beta0, double *x0)
{
	memcpy(beta0, r_s, sizeof(double) * cg->m);
	apply_bt(cg, beta0);
	apply_b(cg, beta0, x0);
}

km_status
km_cg_begin_from(km_cg *cg, const double *r, const double *r0, const double *beta0,
				 km_error *err)
{
	int			m = (int) cg->m;
	double		rn;

	cg->iterations = 0;
	cg->converged = false;
	cg->stopped = false;
	if (r0 != r)
	{
		/* the zero start's preconditioned residual, the measure of "tol" */
		memcpy(cg->res, r, sizeof(double) * cg->m);
		apply_bt(cg, cg->res);
		cg->cnorm = cblas_dnrm2(m, cg->res, 1);
	}
	memcpy(cg->res, r0, sizeof(double) * cg->m);
	apply_bt(cg, cg->res);
	rn = cblas_dnrm2(m, cg->res, 1);
	if (r0 == r)
		cg->cnorm = rn;
	if (beta0 != NULL)
		memcpy(cg->beta, beta0, sizeof(double) * cg->m);
	else
		memset(cg->beta, 0, sizeof(double) * cg->m);
	memcpy(cg->p, cg->res, sizeof(double) * cg->m);
	cg->rs = rn * rn;
	if (!isfinite(cg->cnorm) || !isfinite(rn))
		return km_fail(err, KM_ERR_DIVERGED, "conjugate gradient diverged",
					   "The preconditioned right-hand side of the %d centres is not finite.", m);
	return KM_OK;
}

km_status
km_cg_begin(km_cg *cg, const double *r, km_error *err)
{
	return km_cg_begin_from(cg, r, r, NULL, err);
}

bool
km_cg_want(km_cg *cg)
{
	if (cg->stopped)
		return false;
	cg->residual = cg->cnorm > 0.0 ? sqrt(cg->rs) / cg->cnorm : 0.0;
	if (cg->residual <= cg->tol)
		cg->converged = true;
	if (cg->converged || cg->iterations >= cg->max_iter)
	{
		cg->stopped = true;
		return false;
	}
	apply_b(cg, cg->p, cg->v);
	return true;
}

km_status
km_cg_advance(km_cg *cg, km_error *err)
{
	int			m = (int) cg->m;
	double	   *w = cg->q + cg->m;
	double		pq;
	double		alpha;
	double		rs_new;

	if (cg->L != NULL)
		add_penalty(cg, cg->v, w, cg->q);
	else
		cg->apply(cg->apply_arg, cg->v, cg->q);
	apply_bt(cg, cg->q);
	pq = cblas_ddot(m, cg->p, 1, cg->q, 1);
	if (!(pq > 0.0) || !isfinite(pq))
		return km_fail(err, KM_ERR_DIVERGED, "conjugate gradient diverged",
					   "Iteration %d met a direction of curvature %g (the system is positive definite in exact arithmetic); the residual was %g.",
					   cg->iterations + 1, pq, cg->residual);
	alpha = cg->rs / pq;
	cblas_daxpy(m, alpha, cg->p, 1, cg->beta, 1);
	cblas_daxpy(m, -alpha, cg->q, 1, cg->res, 1);
	rs_new = cblas_ddot(m, cg->res, 1, cg->res, 1);
	cblas_dscal(m, rs_new / cg->rs, cg->p, 1);
	cblas_daxpy(m, 1.0, cg->res, 1, cg->p, 1);
	cg->rs = rs_new;
	cg->iterations++;
	return KM_OK;
}

void
km_cg_end(km_cg *cg, const double *r, double *a)
{
	int			m = (int) cg->m;
	double	   *w = cg->q + cg->m;

	apply_b(cg, cg->beta, a);
	cg->explained = 0.0;
	if (cg->L == NULL)
		return;
	/* a^T H a = a^T r - beta^T res (H a = r - B^-T res), so RSS = syy - explained */
	memcpy(w, a, sizeof(double) * cg->m);
	cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, m, cg->L, m, w, 1);
	cg->explained = cblas_ddot(m, a, 1, r, 1) + cblas_ddot(m, cg->beta, 1, cg->res, 1) +
		cg->lambda * cblas_ddot(m, w, 1, w, 1);
}

km_status
km_cg_solve(km_cg *cg, const km_host *host, km_pass *pass, const double *r,
			double *a, km_error *err)
{
	return km_cg_solve_from(cg, host, pass, r, r, NULL, a, err);
}

km_status
km_cg_solve_from(km_cg *cg, const km_host *host, km_pass *pass, const double *r,
				 const double *r0, const double *beta0, double *a, km_error *err)
{
	size_t		rows;

	if (km_cg_begin_from(cg, r, r0, beta0, err) != KM_OK)
		return err->status;
	pass->state_bytes = sizeof(double) * cg->m;
	if (pass->init == NULL)
		pass->init = cg_init;
	while (km_cg_want(cg))
	{
		snprintf(pass->what, sizeof(pass->what), "%scg %d: residual %.3g",
				 cg->label, cg->iterations + 1, cg->residual);
		if (km_pass_run(host, pass, cg->q, &rows, err) != KM_OK ||
			km_cg_advance(cg, err) != KM_OK)
			return err->status;
	}
	km_cg_end(cg, r, a);
	return KM_OK;
}
