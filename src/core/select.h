/*
 * select.h - choosing gamma and lambda: closed-form leave-one-out and GCV
 * for kernel ridge through one tridiagonal reduction per gamma, and k-fold
 * cross-validation for any method (core, no PostgreSQL headers).
 */
#ifndef KM_SELECT_H
#define KM_SELECT_H

#include "solve.h"

/* Most candidates one grid (gamma or lambda) may have. */
#define KM_MAX_GRID 64

/*
 * LOO and GCV take one Cholesky factorisation and one triangular inverse
 * per lambda below this many lambdas, one eigendecomposition per gamma from
 * it on.  Measured on 2 cores with OpenBLAS: dsyevd costs about 10 times
 * dpotrf + dtrtri at n = 2,000 and n = 5,000 (test/bench/selection.sh).
 * The closed form now reduces K to tridiagonal form instead of calling
 * dsyevd (src/core/eigen.c); it costs about the same (test/bench/loo.c).
 */
#define KM_EIGEN_MIN_LAMBDAS 10

typedef enum km_cv
{
	KM_CV_NONE = 0,
	KM_CV_LOO = 1,				/* ridge: exact leave-one-out, closed form */
	KM_CV_GCV = 2,				/* ridge: generalized cross-validation */
	KM_CV_KFOLD = 3				/* any method: k refits per candidate */
} km_cv;

const char *km_cv_name(km_cv cv);

typedef struct km_candidate
{
	double		gamma;
	double		lambda;
	double		score;			/* mean squared error (GCV: its value); NaN if unsolvable */
	double		score_std;		/* k-fold: standard deviation over folds, else 0 */
} km_candidate;

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

#endif							/* KM_SELECT_H */
