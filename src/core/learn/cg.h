/*
 * cg.h - preconditioned conjugate gradient over passes, for Nystrom ridge
 * (core, no PostgreSQL headers; issue 31, "solver": "cg").
 *
 * The direct road (pipeline_approx.c, approx.h km_approx_solve) sums the
 * m x m matrix G = Z^T Z in one pass: O(m^2) per row and an m x m state.
 * CG solves the same system
 *     (G + lambda K) a = r,   K = K_mm + eps I = L L^T,   r = Z^T (y - ybar)
 * (Z: n x m features K(x_i, c_j), ybar = mean(y) with an intercept, else 0)
 * with G applied by passes: each iteration is one pass over the rows that
 * adds the m-vector Z^T (Z v) (an O(m) state, combined by addition), and
 * the first pass adds Z^T y, Z^T 1, sum y, sum y^2 and Z^T (Z x0) at the
 * start x0 (km_cg_rhs_add).
 *
 * The preconditioner is Falkon's (Rudi, Carratino, Rosasco 2017): with n
 * rows drawn like the m centres, G is about (n / m) K^2, so
 *     P = (n / m) K^2 + lambda K = L (n / m L^T L + lambda I) L^T = L R R^T L^T
 * with R = chol(n / m L^T L + lambda I) (lower), and CG runs on
 *     B^T (G + lambda K) B beta = B^T r,   B = L^-T R^-T,   a = B beta,
 * whose matrix is near I.  Memory: L and R, 2 m^2 doubles, and a few
 * m-vectors.
 *
 * Nystrom ridge builds it from a sample of the rows where one is worth it
 * (km_cg_precondition_sample, cg_sample.h), and starts from the sample's
 * own ridge solution (km_cg_sample_start, km_cg_solve_from); else from 0.
 *
 * Convergence: the preconditioned residual ||B^T r - B^T H B beta|| falls
 * below tol times the zero start's ||B^T r||, or max_iter passes ran.
 *
 * The same CG solves a primal Newton step (learn/newton.h, "solver": "cg"
 * of the approximate classifiers and svr): there the pass adds the
 * Hessian's product with v from the rows (their loss's second derivative
 * at the Newton point), cg->apply adds the penalty, and without L the
 * preconditioner is Jacobi's, B = diag^-1/2 (the Hessian's diagonal from
 * the gradient pass), or none; or, for whitened nystrom features, Falkon's
 * R R^T = s L^T L + lambda I on the first rm unknowns (B = R^-T there).
 */
#ifndef KM_LEARN_CG_H
#define KM_LEARN_CG_H

#include "learn/pass.h"

/* Defaults of "tol" and "max_iter" with "solver": "cg" (options_check.c). */
#define KM_CG_TOL 1e-7
#define KM_CG_MAX_ITER 100

/*
 * Doubles of the first pass's state: Z^T y (m), Z^T 1 (m), sum y, sum y^2,
 * rows, then Z^T (Z x0) (m) at the start point x0.
 */
#define KM_CG_RHS_DOUBLES(m) (3 * (size_t) (m) + 3)

typedef struct km_cg
{
	uint32_t	m;
	double		lambda;
	double		tol;			/* relative preconditioned residual */
	int			max_iter;		/* passes of Z^T (Z v) at most */
	km_interrupt_fn interrupt;
	double	   *L;				/* m x m column-major lower (its strict upper triangle zeroed): L L^T = K_mm + eps I; NULL: no Falkon */
	double	   *R;				/* m x m: chol(n / m L^T L + lambda I), lower */
	uint32_t	rm;				/* without L: R's order (R NULL: 0); B = R^-T on the first rm */
	const double *diag;			/* without L: m, the operator's diagonal (Jacobi past rm), or NULL (none) */
	/*
	 * Without L: q := H v from the pass's state q (m doubles) at v (the
	 * penalty and scale a pass cannot add); with L: ridge's lambda L L^T v
	 * is added.
	 */
	void		(*apply) (void *arg, const double *v, double *q);
	void	   *apply_arg;
	char		label[32];		/* progress text before "cg k: ...", or "" */
	double	   *v;				/* m: the point a pass multiplies (km_cg_hv_add) */
	double	   *beta;			/* m: the preconditioned unknown */
	double	   *res;			/* m: its residual */
	double	   *p;				/* m: the search direction */
	double	   *q;				/* m */
	double	   *t;				/* KM_BLOCK_ROWS: Z v of a chunk */
	/* the recurrence (km_cg_begin .. km_cg_end) */
	double		rs;				/* squared preconditioned residual */
	double		cnorm;			/* its norm at the start */
	bool		stopped;		/* converged or at max_iter: no more passes */
	/* after km_cg_solve */
	int			iterations;		/* passes of Z^T (Z v) run */
	double		residual;		/* relative preconditioned residual reached */
	bool		converged;
	double		explained;		/* a^T r + beta^T res + lambda a^T K a: RSS = syy - explained */
} km_cg;

/*
 * Doubles km_cg_buffers points into (R, the vectors, the chunk's Z v); 0 on
 * overflow.  Without Falkon's preconditioner (L NULL) no R: km_cg_vector_doubles.
 */
size_t		km_cg_doubles(uint32_t m);
size_t		km_cg_vector_doubles(uint32_t m);
void		km_cg_buffers(km_cg *cg, uint32_t m, double *L, double *mem);

/*
 * R := chol(n / m L^T L + lambda I) for n rows, in interruptible column
 * blocks.  KM_ERR_NOT_PD when it fails (lambda <= 0 or not finite).
 */
km_status	km_cg_precondition(km_cg *cg, double n, km_error *err);

/*
 * The same from a sample of s rows (cg_sample.h) in place of the centres:
 * cg->R holds G = K_Sm^T K_Sm, its lower triangle (K_Sm the sample's
 * features); R := chol(n / s L^-1 G L^-T + lambda I), in interruptible
 * column blocks.  Falkon's form is the sample of the centres themselves
 * (K_mm^2 = L L^T L L^T); s rows drawn from all of them make the
 * preconditioned system's condition number fall with s / m (near 3 at
 * s = 16 m, against 50 to 100 for Falkon's at the small lambda of many
 * rows).
 */
km_status	km_cg_precondition_sample(km_cg *cg, double n, double s, km_error *err);

/*
 * The first pass: state (KM_CG_RHS_DOUBLES(m)) += the sums of rows (<=
 * KM_BLOCK_ROWS) of features Z (rows x m) and targets y; with x0 (m, NULL:
 * the start is 0) Z^T (Z x0) too, t (rows) its scratch.
 */
void		km_cg_rhs_add(uint32_t m, double *state, const double *Z, const double *y,
						  size_t rows, const double *x0, double *t);

/* out += lambda L L^T v (with L; cg->q's second half its scratch) */
void		km_cg_add_penalty(km_cg *cg, const double *v, double *out);

/*
 * A start from the solution on a sample of the rows: beta0 := B^T r_s,
 * x0 := B beta0 = (R R^T-form)^-1 r_s, B the preconditioner (with L), for
 * r_s the sample's right-hand side scaled as the preconditioner's sums:
 * with the sample's preconditioner, x0 solves the ridge system of the
 * sample's rows.
 */
void		km_cg_sample_start(const km_cg *cg, const double *r_s, double *beta0, double *x0);

/* A CG pass: state (m) += Z^T (Z cg->v) for rows (<= KM_BLOCK_ROWS) of features Z. */
void		km_cg_hv_add(km_cg *cg, double *state, const double *Z, size_t rows);

/*
 * Solve (G + lambda L L^T) a = r from beta = 0 (without L: H a = r, H v
 * from a pass and cg->apply): each iteration runs pass
 * on host (its add computes the chunk's features and calls km_cg_hv_add
 * with the state it is given; state m doubles, combined by addition; the
 * progress text "<label>cg k: residual x" is set here) until the residual falls
 * below cg->tol or cg->max_iter passes ran.  a: m (may be r without L).
 * The pass's init, when it has none, zeroes its state.  An error of a pass is
 * returned as it is; a breakdown (a direction of no curvature, not finite)
 * is KM_ERR_DIVERGED.
 */
km_status	km_cg_solve(km_cg *cg, const km_host *host, km_pass *pass, const double *r,
						double *a, km_error *err);

/*
 * The same from a start a0 = B beta0 (km_cg_sample_start) whose residual
 * r0 = r - H a0 the caller has (a pass's Z^T (Z a0) and the penalty):
 * the residual is measured against the zero start's, so "tol" means the
 * same from either start.
 */
km_status	km_cg_solve_from(km_cg *cg, const km_host *host, km_pass *pass, const double *r,
							 const double *r0, const double *beta0, double *a, km_error *err);

/*
 * km_cg_solve's steps, for a caller that runs one pass for several CGs in
 * lockstep (Newton-CG of q outputs, learn/newton.h): km_cg_begin from r;
 * while km_cg_want (false once converged or at max_iter; true: cg->v is the
 * point to multiply), the pass's product with cg->v into cg->q and
 * km_cg_advance; then km_cg_end's a (may be r without L).  km_cg_solve is
 * exactly these with one pass per iteration.
 */
km_status	km_cg_begin(km_cg *cg, const double *r, km_error *err);
/* km_cg_begin from beta0 with residual r0 = r - H B beta0, measured against r's */
km_status	km_cg_begin_from(km_cg *cg, const double *r, const double *r0,
							 const double *beta0, km_error *err);
bool		km_cg_want(km_cg *cg);
km_status	km_cg_advance(km_cg *cg, km_error *err);
void		km_cg_end(km_cg *cg, const double *r, double *a);

#endif							/* KM_LEARN_CG_H */
