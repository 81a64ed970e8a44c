/*
 * select.h - choosing gamma and lambda: the one grid loop of every
 * selection (km_grid_search), closed-form leave-one-out and GCV for kernel
 * ridge through one tridiagonal reduction per gamma, and k-fold
 * cross-validation for any method (core, no PostgreSQL headers).
 */
#ifndef KM_SELECT_H
#define KM_SELECT_H

#include "fit.h"
#include "grid.h"
#include "solve.h"

/*
 * LOO and GCV take one Cholesky factorisation and one triangular inverse
 * per lambda below this many lambdas, one eigendecomposition per gamma from
 * it on.  Measured on 2 cores with OpenBLAS: dsyevd costs about 10 times
 * dpotrf + dtrtri at n = 2,000 and n = 5,000 (test/bench/selection.sh).
 * The closed form now reduces K to tridiagonal form instead of calling
 * dsyevd (src/core/base/eigen.c); it costs about the same (test/bench/loo.c).
 */
#define KM_EIGEN_MIN_LAMBDAS 10

typedef struct km_select_params
{
	km_fit_params base;			/* kernel, method and lms settings */
	const double *gammas;		/* n_gammas values; kernels without gamma: 1 */
	int			n_gammas;
	const double *lambdas;
	int			n_lambdas;
	km_cv		cv;
	int			folds;			/* k-fold */
	double	   *loo_residuals;	/* optional, loo: n x n_lambdas residuals
								 * of the last gamma, column-major */
} km_select_params;

/* Doubles of workspace km_select needs (0 on overflow). */
size_t		km_select_workspace_doubles(const km_select_params *p, size_t n, int d);

/*
 * Score every (gamma, lambda) pair into cand (n_gammas * n_lambdas, gamma
 * major) and return the index of the best in *best (lowest score; ties to
 * the larger lambda, then the smaller gamma, the smoother model).  X is
 * standardized, y centred.  k-fold: fold[i] (0 .. folds - 1) is the fold
 * of row i, chosen by the caller (the glue assigns folds by a hash of the
 * row values, split.c, so that they do not depend on row order); other
 * routes take NULL.
 */
km_status	km_select(const km_select_params *p, const double *X, size_t n,
					  int d, const double *y, const int *fold,
					  km_candidate *cand, int *best, double *work,
					  km_error *err, km_interrupt_fn interrupt);

/* The one grid loop (km_grid_search) and the tie rule (km_best_candidate): grid.h. */

/*
 * The stage of a k-fold route within candidate index of count:
 * "candidate i of N (gamma g, lambda l), fold f of F" (f from 0).
 */
void		km_grid_fold_stage(int index, int count, const km_candidate *cand,
							   int fold, int folds);

/*
 * Stratified k-fold for classifiers (scikit-learn's StratifiedKFold, made
 * deterministic): the rows, in the order given (the glue gives them in
 * row-hash order), are dealt round-robin class by class: the r-th row of
 * class c goes to fold (rows of classes before c + r) mod folds.  Each
 * class is spread over the folds as evenly as it can be (counts differ by
 * at most one) and fold sizes differ by at most one.  seen: k counters of
 * workspace.
 */
void		km_stratified_folds(const uint32_t *cls, size_t n, uint32_t k,
								uint32_t folds, uint32_t *fold, size_t *seen);

/*
 * The default gamma of the rbf kernel, as R kernlab's sigest (and ksvm's
 * kpar = "automatic"): the mean of 1 / q(0.9) and 1 / q(0.1), q the
 * quantiles (R's type 7, its default) of the nonzero squared distances
 * ||x - x'||^2 between rows of X (n x d, row-major, already standardized).
 * kernlab draws floor(n / 2) random pairs; here the distances are those of
 * every pair of the first km_sigest_rows(n, d) rows of order (a ranking by
 * row hash; NULL: X's own order, enough when km_sigest_rows(n, d) == n,
 * where every row takes part): at most KM_SIGEST_ROWS rows, fewer for wide
 * rows so that the distances cost at most KM_SIGEST_FLOPS multiply-adds
 * (1000 rows up to d = 67, 292 at d = 784, never fewer than 100).  So the
 * same rows in any order give the same gamma, and when every row takes part
 * it does not depend on the ranking at all (nor on a rescaling of the
 * features before standardizing).  1 / d when no pair has a nonzero
 * distance.  work: km_gamma_sigest_doubles(n, d).
 */
#define KM_SIGEST_ROWS 1000
#define KM_SIGEST_FLOPS 33554432.0	/* 2^25: about 30 ms */
size_t		km_sigest_rows(size_t n, int d);
size_t		km_gamma_sigest_doubles(size_t n, int d);
double		km_gamma_sigest(const double *X, size_t n, int d,
							const int64_t *order, double *work);

#endif							/* KM_SELECT_H */
