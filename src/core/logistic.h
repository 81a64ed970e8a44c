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
 * Multinomial: the full Hessian is kn x kn.  Instead, block-coordinate
 * Newton: a sweep takes the outputs c = 0..k-1 in turn, each an exact
 * Newton step (with line search) on (a_c, b_c) with the others fixed:
 * d2L/df_c^2 = p_c (1 - p_c) is that block's exact Hessian, so each step is
 * the binary step above with g = (w/W)(p_c - t_c), d = (w/W) p_c (1 - p_c).
 * Each block subproblem is strictly convex and smooth, so the sweeps
 * converge to the joint optimum (linearly, not quadratically); iterations
 * count sweeps.  Softmax is unchanged by adding a constant to every f_c: the
 * penalty makes sum_c a_c = 0 at the optimum, and the intercepts are shifted
 * to sum to 0 at the end (probabilities unchanged).
 *
 * Stopping: the gradient norm ||(K (g_c + lambda a_c), 1^T g_c)_c||_2 at
 * most tol times its value at the start (a = 0, b = 0); tol <= 0 means
 * KM_LOGISTIC_TOL.  Not converged after max_iter steps (sweeps) is
 * res->converged false, not an error: the glue decides.
 *
 * K: the n x n Gram matrix, column-major, leading dimension n; only its
 * lower triangle (diagonal included) is read (km_gram_lower's output).
 * Interrupts: every product with K and the Cholesky are blocked in panels
 * of KM_LOGISTIC_PANEL columns with a check between panels, so no piece of
 * a step runs long without one for any n the memory allows.
 */
#ifndef KM_LOGISTIC_H
#define KM_LOGISTIC_H

#include "core.h"

#define KM_LOGISTIC_TOL 1e-8
#define KM_LOGISTIC_MAX_ITER 100		/* binary Newton steps */
#define KM_LOGISTIC_MAX_SWEEPS 1000		/* multinomial sweeps */
#define KM_LOGISTIC_PANEL 512

typedef struct km_logistic_params
{
	double		lambda;			/* > 0 */
	bool		fit_intercept;
	double		tol;			/* relative gradient norm; <= 0: KM_LOGISTIC_TOL */
	int			max_iter;		/* <= 0: KM_LOGISTIC_MAX_ITER / _MAX_SWEEPS */
} km_logistic_params;

typedef struct km_logistic_result
{
	int			iterations;		/* Newton steps (binary) or sweeps (multinomial) */
	bool		converged;
	double		objective;		/* J at the result */
	double		grad_norm;		/* at the result */
	double		grad_norm0;		/* at a = 0, b = 0 */
} km_logistic_result;

/* Outputs q for k classes: 1 for k = 2, k for k > 2 (0 for k < 2). */
uint32_t	km_logistic_outputs(uint32_t n_classes);

/* Doubles of work km_logistic_fit needs (0 on overflow): n^2 + n (q + 12). */
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
 * u := K v for symmetric K given by its lower triangle (column-major,
 * leading dimension ld), in panels of KM_LOGISTIC_PANEL columns (dsymv on
 * the diagonal block, two dgemv below it) with an interrupt check between.
 */
void		km_symv_lower(const double *K, size_t n, size_t ld, const double *v,
						  double *u, km_interrupt_fn interrupt);

#endif							/* KM_LOGISTIC_H */
