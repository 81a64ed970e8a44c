/*
 * logistic.h - exact kernel logistic regression by Newton's method on the
 * dual coefficients (core: plain C99, no PostgreSQL header, no allocation).
 *
 * Objective (issue 13), for n rows with classes cls[i] in 0..k-1, sample
 * weights w_i > 0 (1 when weights is NULL; class weights are per-row
 * weights) and W = sum_i w_i:
 *
 *   J = (1/W) sum_i w_i L(f(x_i), cls_i) + (lambda/2) sum_c a_c^T K a_c,
 *   f_c = K a_c + b_c 1   (b_c = 0 unless fit_intercept; never penalized)
 *
 * Binary (k = 2, q = 1 output): L = log(1 + exp(-y f)), y = +1 for class 1,
 * -1 for class 0; P(class 1) = 1 / (1 + exp(-f)).
 * Multinomial (k > 2, q = k outputs): L = -log softmax(f)_cls.
 *
 * The Newton step of one output, with g_i = (w_i/W) dL/df_i and
 * d_i = (w_i/W) d2L/df_i^2 (binary: g = (w/W)(p - t), d = (w/W) p (1 - p)):
 * the gradient is K (g + lambda a) in a and 1^T g in b; the Hessian in a is
 * K (D K + lambda I), with cross term K D 1 and 1^T D 1.  Every block row in
 * a has K on the left, so the step solves the reduced system
 *   (D K + lambda I) da + D 1 db = r,   r = -(g + lambda a)
 *   1^T D K da + 1^T D 1 db = -1^T g
 * (the same f-step as the full system, which is singular when K is).
 * D K + lambda I is not symmetric and D may underflow to 0, so nothing is
 * inverted with D^-1: with S = D^1/2, s = S 1 and the symmetric
 *   B = S K S + lambda I      (eigenvalues in [lambda, lambda + max d ||K||]),
 * one (blocked, interruptible) Cholesky of B and two solves
 *   B z1 = S K r,   B z2 = s
 * give, by (D K + lambda I)^-1 = (I - S B^-1 S K) / lambda,
 *   db = -(1^T g + s^T z1) / (lambda s^T z2)     (0 without intercept)
 *   da = (r - S z1) / lambda - db S z2
 * (the denominator lambda s^T z2 = 1^T D (K D + lambda I)^-1 1 lambda is
 * computed without the cancellation of the direct 1^T D 1 - 1^T D K x).
 * The condition number of B is at most 1 + max_i d_i ||K|| / lambda, e.g.
 * 1 + n / (4 n lambda) for unit weights and an rbf kernel.  Then a
 * backtracking (Armijo, c = 1e-4, halving) line search on J along (da, db),
 * evaluated in O(n) per trial from f and K da.
 *
 * Multinomial (k = q > 2): truncated Newton.  With P the softmax of F
 * (n x k), G = (w/W)(P - T) (T the one-hot classes) and the per-row loss
 * Hessian H_i = (w_i/W)(diag p_i - p_i p_i^T), a direction (V, v) (V n x k
 * in alpha, v in b) changes F by dF = K V + 1 v^T, and
 *   gradient  (K (G + lambda A), 1^T G),
 *   Hessian   (V, v) -> (K (U + lambda V), 1^T U),  U = H(dF) row by row.
 * The Newton system has K on the left of every alpha row, so, as in the
 * binary case, the step solves the reduced system
 *   A(X, x) := (H(K X + 1 x^T) + lambda X, 1^T H(K X + 1 x^T))
 *            = (-(G + lambda A), -1^T G) =: (Z0, z0).
 * A is not symmetric, but it is self-adjoint in the inner product
 *   <(X, x), (Y, y)>_M = tr(X^T K Y) + x^T y,  M = diag(K, I):
 *   <(X, x), A(Y, y)>_M = tr((K X + 1 x^T)^T H (K Y + 1 y^T)) + lambda tr(X^T K Y),
 * symmetric and >= 0 (> 0 unless K X = 0 and x = 0).  So CG on A in the M
 * inner product (= preconditioned CG on the full Hessian M A with M as the
 * preconditioner) needs no inverse: it carries the reduced residual Z and
 * the full one R = K Z (R_0 = minus the gradient), the direction D and K D
 * by the recurrences R -= s (K U + lambda K D), K D = R + beta K D, and one
 * product K U (km_symm_lower: K times an n x k block) per CG iteration.
 * On alpha alone its eigenvalues lie in [lambda, lambda + max_i (w_i/W)
 * ||K|| / 2] (||H_i|| <= 2 max_c p_c (1 - p_c) <= 1/2, Gershgorin), so the
 * condition number is at most 1 + 1 / (2 lambda) for unit weights and rbf
 * (||K|| <= n), and the rapidly decaying spectrum of K clusters most
 * eigenvalues at lambda: CG needs few iterations.
 * Softmax is unchanged by adding one constant to every f_c: 1^T H = 0 along
 * the classes, so the b part of the residual is kept at mean 0 over the
 * classes (the right side 1^T G is, exactly).  CG starts at 0 (so every
 * iterate is a descent direction) and stops when the full residual
 * ||(R, z)||_2 is at most min(1/2, sqrt(||grad|| / ||grad0||)) ||grad||
 * (superlinear near the optimum) or after KM_LOGISTIC_MAX_CG iterations;
 * K X is then computed exactly and the same Armijo search as above takes
 * the step, evaluated in O(n k) per trial.  Iterations count Newton steps;
 * res->cg_iterations the CG iterations (each one K times n x k product).
 * The penalty makes sum_c a_c = 0 at the optimum, and the intercepts are
 * shifted to sum to 0 at the end (probabilities unchanged).
 *
 * Stopping: the gradient norm ||(K (g_c + lambda a_c), 1^T g_c)_c||_2 at
 * most tol times its value at the start (a = 0, b = 0); tol <= 0 means
 * KM_LOGISTIC_TOL.  Not converged after max_iter Newton steps is
 * res->converged false, not an error: the glue decides.
 *
 * K: the n x n Gram matrix, column-major, leading dimension n; only its
 * lower triangle (diagonal included) is read (km_gram_lower's output).
 * Interrupts: every product with K and the Cholesky are blocked in panels
 * of KM_LOGISTIC_PANEL columns with a check between panels (and one
 * between CG iterations), so no piece of a step runs long without one for
 * any n the memory allows.
 */
#ifndef KM_LOGISTIC_H
#define KM_LOGISTIC_H

#include "core.h"

#define KM_LOGISTIC_TOL 1e-8
#define KM_LOGISTIC_MAX_ITER 100		/* Newton steps */
#define KM_LOGISTIC_MAX_SWEEPS KM_LOGISTIC_MAX_ITER	/* old name: no sweeps any more */
#define KM_LOGISTIC_MAX_CG 1000			/* CG iterations per multinomial step */
#define KM_LOGISTIC_PANEL 512

typedef struct km_logistic_params
{
	double		lambda;			/* > 0 */
	bool		fit_intercept;
	double		tol;			/* relative gradient norm; <= 0: KM_LOGISTIC_TOL */
	int			max_iter;		/* Newton steps; <= 0: KM_LOGISTIC_MAX_ITER */
} km_logistic_params;

typedef struct km_logistic_result
{
	int			iterations;		/* Newton steps */
	bool		converged;
	double		objective;		/* J at the result */
	double		grad_norm;		/* at the result */
	double		grad_norm0;		/* at a = 0, b = 0 */
	int			cg_iterations;	/* multinomial: CG iterations, all steps */
} km_logistic_result;

/* Outputs q for k classes: 1 for k = 2, k for k > 2 (0 for k < 2). */
uint32_t	km_logistic_outputs(uint32_t n_classes);

/*
 * Doubles of work km_logistic_fit needs (0 on overflow): binary n^2 + 13 n;
 * multinomial 10 n q + 8 q (no n x n matrix).
 */
size_t		km_logistic_workspace_doubles(size_t n, uint32_t n_classes);

/*
 * Fit alpha (n x q column-major: output c at alpha + c n) and intercepts
 * (q) from K (lower triangle, see above), cls (n values < n_classes, every
 * class present is the caller's check) and weights (n positive finite, or
 * NULL).  KM_ERR_INVALID for bad arguments, KM_ERR_NOT_PD if B cannot be
 * factored (not for a PSD K), KM_ERR_DIVERGED on a non-finite value.
 */
km_status	km_logistic_fit(const km_logistic_params *p, const double *K,
							size_t n, const uint32_t *cls, uint32_t n_classes,
							const double *weights, double *alpha,
							double *intercepts, double *work,
							km_logistic_result *res, km_error *err,
							km_interrupt_fn interrupt);

/*
 * Objective J of (alpha, intercepts) as above, with F (n x q) := K alpha +
 * intercepts as a by-product.  Used by SGD and tests.
 */
double		km_logistic_objective(const double *K, size_t n,
								  const uint32_t *cls, uint32_t n_classes,
								  const double *weights, double lambda,
								  const double *alpha,
								  const double *intercepts, double *F,
								  km_interrupt_fn interrupt);

/*
 * Probabilities from decision values f (q per row): binary P(class 1) =
 * 1 / (1 + exp(-f)), out[0] = 1 - that, out[1] = that; multinomial the
 * softmax (max subtracted first).  out has k values.
 */
void		km_logistic_proba(const double *f, uint32_t n_classes, double *out);

/*
 * U := K V for V n x q (column-major, leading dimension n) and K as in
 * km_symv_lower (solve.h; ld n): dsymm on each diagonal block and two
 * dgemm below it, an interrupt check between panels of KM_LOGISTIC_PANEL
 * columns.
 */
void		km_symm_lower(const double *K, size_t n, const double *V, size_t q,
						  double *U, km_interrupt_fn interrupt);

#endif							/* KM_LOGISTIC_H */
