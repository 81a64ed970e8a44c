/*
 * oneclass.h - the one-class SVM (libsvm's nu one-class formulation, as
 * scikit-learn's OneClassSVM; Schoelkopf et al. 2001), exact and on m
 * features (core: plain C99, no PostgreSQL header, no allocation: the
 * caller passes workspace).
 *
 * EXACT: the dual on a precomputed Gram matrix by libsvm's Solver
 * (km_smo_solve_from, svm.h) over n variables:
 *   min 1/2 a^T K a,  0 <= a_i <= 1,  sum a_i = nu n
 * (Q = K: every sign +1, linear term 0), started where libsvm's
 * solve_one_class starts: a_i = 1 for the first floor(nu n) rows, the
 * fraction nu n - floor(nu n) for the next, 0 after.  The decision value is
 *   f(x) = sum_i a_i K(x_i, x) - rho,
 * rho by the Solver's rule (svm.h); positive: inlier.  scikit-learn's
 * dual_coef_ are these a_i, its decision_function this f.  This is nu n
 * times the primal's
 *   min 1/2 ||w||^2 - rho + 1/(nu n) sum_i max(0, rho - w^T phi(x_i)),
 * so about a fraction nu of the rows are outliers (f < 0) and at least nu
 * are support vectors.
 *
 * ON FEATURES (nystrom, rff): the same objective with phi = z, the m
 * features, solved in its dual by the same Solver on the linear kernel of z
 * (K_ij = z_i^T z_j, columns computed on demand through a column cache):
 * the hinge stays the hinge, nothing is smoothed, so the model is exactly
 * libsvm's one-class SVM on the approximate kernel (with the n training
 * rows as Nystrom centres, the exact one).  The model then keeps the m
 * weights w = sum_i a_i z_i (in libsvm's scale) and b = -rho:
 * f(x) = w^T z(x) + b.
 */
#ifndef KM_ONECLASS_H
#define KM_ONECLASS_H

#include "core.h"
#include "kernels.h"
#include "svm.h"

/* scikit-learn's OneClassSVM default. */
#define KM_ONECLASS_NU 0.5

/* A one-class problem on all n rows of a Gram matrix. */
typedef struct km_oneclass_problem
{
	const double *K;			/* full symmetric n x n Gram matrix, column-major */
	size_t		ld;				/* its leading dimension */
	km_gram_cols *cols;			/* or NULL: K is full; else K's columns on demand */
	size_t		n;				/* >= 2 rows */
	double		nu;				/* in (0, 1] */
} km_oneclass_problem;

/* Doubles of workspace km_oneclass_dual needs for n rows. */
size_t		km_oneclass_dual_doubles(size_t n);

/*
 * Solves the dual (see above): alpha (n) gets a_i, res the intercept
 * b = -rho, the dual objective 1/2 a^T K a, the final KKT violation, the
 * iterations, n_sv (a_i > 0) and n_bounded_sv (a_i == 1).  max_iter 0 is
 * libsvm's max(10^7, 100 n).  With nu = 1 every a_i is 1 and no row is
 * free: rho is then the smallest value that leaves no row inside, the
 * largest (K a)_i (libsvm's middle of an interval open above would be
 * infinite).  KM_ERR_INVALID: n < 2, nu outside (0, 1]; KM_ERR_INACCURATE
 * (every output written) when max_iter stopped it.
 */
km_status	km_oneclass_dual(const km_oneclass_problem *pr,
							 const km_svm_params *par, double *alpha,
							 km_svm_result *res, double *work, km_error *err,
							 km_interrupt_fn interrupt);

/* Doubles of workspace km_oneclass_features needs: n rows, m features, a cache of slots columns. */
size_t		km_oneclass_features_doubles(size_t n, uint32_t m, size_t slots);

/*
 * The one-class SVM on n rows of m features Z (row-major): the dual above on
 * K = Z Z^T read through a column cache of slots columns (>= 2), then
 * w (m) = Z^T a and *b = -rho.  res as km_oneclass_dual.
 */
km_status	km_oneclass_features(const double *Z, size_t n, uint32_t m,
								 double nu, const km_svm_params *par,
								 size_t slots, double *w, double *b,
								 km_svm_result *res, double *work,
								 km_error *err, km_interrupt_fn interrupt);

#endif							/* KM_ONECLASS_H */
