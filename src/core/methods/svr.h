/*
 * svr.h - epsilon-support vector regression (libsvm's epsilon-SVR, as
 * scikit-learn's SVR), exact and approximate (core: plain C99, no PostgreSQL
 * header, no allocation: the caller passes workspace).
 *
 * EXACT: the dual on a precomputed Gram matrix, by libsvm's Solver
 * (km_smo_solve, svm.h) over 2n variables a = (a+, a-):
 *   min 1/2 (a+ - a-)^T K (a+ - a-) + eps sum (a+_i + a-_i) - sum y_i (a+_i - a-_i)
 *   0 <= a+_i, a-_i <= C,  sum (a+_i - a-_i) = 0
 * i.e. Q_st = s_s s_t K(s mod n, t mod n) with signs s = +1 (a+) and -1 (a-),
 * p_i = eps - y_i, p_{n+i} = eps + y_i (libsvm's solve_epsilon_svr).  The
 * prediction is f(x) = sum_i coef_i K(x_i, x) + b, coef_i = a+_i - a-_i
 * (scikit-learn's dual_coef_), b = -rho (its intercept_).  The primal it
 * solves is C sum_i max(0, |y_i - f(x_i)| - eps) + 1/2 ||f||^2; issue 13's
 * lambda form (1/n) sum loss + (lambda/2) ||f||^2 is C = 1 / (n lambda), so
 * the default lambda 1/n is C = 1 as scikit-learn.
 *
 * APPROXIMATE: LIBLINEAR's L2-loss epsilon-SVR (its -s 11) in the primal on
 * m features z(x) (Nystrom or random Fourier), by the same Newton over
 * additive passes as the approximate svm (primal.h):
 *   J = (1/W) sum_i w_i max(0, |y_i - f_i| - eps)^2 + (lambda/2) coef^T R coef,
 *   f_i = z_i^T coef + b,  W = sum w_i,
 * R as in primal.h (K_mm for Nystrom features k(x, c_j), I otherwise).  The
 * intercept b is NOT penalized (0 without fit_intercept), as the approximate
 * svm and logistic models treat theirs; LIBLINEAR instead appends a bias
 * feature of value 1 that the penalty includes.  With R = I and unit weights
 * J is LIBLINEAR's 1/2 ||w||^2 + C sum loss divided by C n, C = 1/(n lambda).
 * Row terms: r = y - f, a = |r| - eps, L = max(0, a)^2,
 * L' = dL/df = -2 sign(r) max(0, a), L'' = 2 where a > 0 else 0 (the
 * generalized Hessian over the active rows, as LIBLINEAR).  The statistics
 * have primal.h's layout (km_primal_state_doubles, _init, _combine work on
 * them unchanged), so a pass is additive over row blocks, parallel workers
 * and shards.
 *
 * The functions the method ops call:
 *   exact fit        km_svr_dual_doubles(n), km_svr_dual
 *   primal pass      km_primal_state_init; km_svr_primal_add per row block
 *                    (scratch km_primal_add_scratch_doubles(m, rows));
 *                    km_primal_combine for workers' states
 *   primal step      km_primal_solver_init once; km_svr_primal_step after
 *                    each pass until s->done (vecs 2m, work
 *                    km_primal_step_work_doubles(m))
 *   the loop         the learner's one Newton (learn/newton.h) over a host's
 *                    passes, through the method's ops (primal_add, primal_step)
 *   prediction       the svm's: coef against the kernel (exact) or the
 *                    features (approximate), plus b; one output
 */
#ifndef KM_SVR_H
#define KM_SVR_H

#include "core.h"
#include "kernels.h"
#include "primal.h"
#include "svm.h"

/* scikit-learn's SVR defaults. */
#define KM_SVR_EPSILON 0.1

/* An epsilon-SVR problem on all n rows of a Gram matrix. */
typedef struct km_svr_problem
{
	const double *K;			/* full symmetric n x n Gram matrix, column-major */
	size_t		ld;				/* its leading dimension */
	km_gram_cols *cols;			/* or NULL: K is full; else K's columns on demand */
	size_t		n;				/* >= 1 rows */
	const double *y;			/* n finite targets */
	double		C;				/* > 0, finite */
	double		epsilon;		/* >= 0, finite: the width of the insensitive tube */
} km_svr_problem;

/* Doubles of workspace km_svr_dual needs for n rows (about 23 n). */
size_t		km_svr_dual_doubles(size_t n);

/*
 * Solves the dual (see above) from a = 0 with km_smo_solve: coef (n) gets
 * a+_i - a-_i, res the intercept b, the dual objective, the final KKT
 * violation, the SMO iterations (over the 2n variables, as libsvm counts
 * them), n_sv = rows with coef_i != 0 and n_bounded_sv = rows with
 * |coef_i| == C.  max_iter 0 is libsvm's max(10^7, 200 n).
 * KM_ERR_INVALID: n == 0, C not positive and finite, epsilon negative or not
 * finite, a target not finite, tol not positive.  KM_ERR_INACCURATE: max_iter
 * reached, every output written (the glue warns, as libsvm, or refuses).
 * KM_ERR_DIVERGED: non-finite values (K not finite).  Calls interrupt as
 * km_svm_binary does.
 */
km_status	km_svr_dual(const km_svr_problem *pr, const km_svm_params *par,
						double *coef, km_svm_result *res, double *work,
						km_error *err, km_interrupt_fn interrupt);

/*
 * Adds rows rows of features Z (rows x m, row-major), targets y and weights
 * (or NULL: 1) at the point (coef, b) into state (primal.h's layout) with the
 * L2-loss epsilon-insensitive row terms above: one dgemv for f, one dgemm
 * (m x 2) for the gradient and the Hessian's coef x b column, one dsyrk (in
 * interruptible panels, km_packed_syrk_add) over the active rows only.  scratch:
 * km_primal_add_scratch_doubles(m, rows).  false, nothing added, if a
 * decision value or a target is not finite or epsilon is not a finite
 * number >= 0.
 */
bool		km_svr_primal_add(double *state, uint32_t m, const double *Z,
							  size_t rows, const double *y, const double *weights,
							  double epsilon, const double *coef, double b,
							  double *scratch, km_interrupt_fn interrupt);

/*
 * km_primal_step on a finished state of km_svr_primal_add: a Newton step
 * with Armijo halving, as the approximate svm.  p->lambda, fit_intercept,
 * tol and max_iter are read; p->loss is not (the step reads only the
 * statistics).  Statuses as km_primal_step.
 */
km_status	km_svr_primal_step(km_primal_solver *s, const km_primal_params *p,
							   const double *state, const double *R,
							   double *coef, double *b, double *vecs,
							   double *work, km_error *err,
							   km_interrupt_fn interrupt);

#endif							/* KM_SVR_H */
