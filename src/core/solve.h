/*
 * solve.h - the numerics methods share: standardization, blocked Cholesky,
 * power iteration, the fit entry point, Gram spectra (core, no PostgreSQL
 * headers).  The methods themselves are in ridge.c and lms.c (method.h).
 */
#ifndef KM_SOLVE_H
#define KM_SOLVE_H

#include "method.h"

/*
 * Jitter added to the diagonal when the first Cholesky factorisation of
 * K + lambda I fails: KM_JITTER_REL times the mean of diag(K), at least
 * KM_JITTER_ABS.
 */
#define KM_JITTER_REL 1e-8
#define KM_JITTER_ABS 1e-12

/*
 * A ridge fit whose coefficients leave a relative residual
 * ||y - (K + lambda I) alpha|| / ||y|| above this is an error: the model
 * would not be the ridge solution its options describe.
 */
#define KM_MAX_RELATIVE_RESIDUAL 1e-6

/* Doubles of workspace km_fit needs for n rows (0 on overflow or an unknown method). */
size_t		km_fit_workspace_doubles(km_method method, size_t n);

/*
 * km_fit touches only part of its workspace (for n rows of d features):
 * column j of the n x n matrix
 * at its start (column-major, leading dimension n) from this row down, and
 * the method's vectors after the matrix.  The rest, most of the upper triangle,
 * is never read or written, so a caller that maps pages up front can leave
 * it unmapped: about half the memory for large n.
 */
size_t		km_fit_first_row(size_t j, size_t n, int d);

/*
 * Fit dual coefficients alpha (n) for rows X (n x d, already standardized)
 * and target y (n, already centred).  work has km_fit_workspace_doubles(n)
 * doubles.  The method (p->method; an unknown one is KM_ERR_INVALID) does
 * the work, and a failure carries its hint.  Ridge: alpha = (K + lambda I)^-1 y by blocked Cholesky, with
 * one jittered retry; then K alpha from the Gram matrix rebuilt panel by
 * panel gives the real training error, and a relative residual above
 * KM_MAX_RELATIVE_RESIDUAL is KM_ERR_INACCURATE.  LMS: beta := beta +
 * a (y - (K + lambda I) beta) from 0.  A kernel value that overflows is
 * KM_ERR_OVERFLOW.
 */
km_status	km_fit(const km_fit_params *p, const double *X, size_t n, int d,
				   const double *y, double *alpha, double *work,
				   km_fit_result *res, km_error *err,
				   km_interrupt_fn interrupt);

/*
 * Column means and population standard deviations of X (n x d); a zero
 * deviation becomes 1, as scikit-learn's StandardScaler does.  Then
 * out := (X - mean) / scale (out may be X).  Overflow-safe: any finite X
 * gives finite mean, scale and out.
 */
void		km_standardize(const double *X, size_t n, int d, double *mean,
						   double *scale, double *out);

/*
 * out := (x - mean) / scale; out may alias x.  Returns -1, or the index of
 * a feature whose standardized value overflows.
 */
int			km_standardize_row(const double *x, int d, const double *mean,
							   const double *scale, double *out);

/*
 * In-place lower Cholesky factorisation of column-major A (n x n, leading
 * dimension lda), blocked so that interrupt runs well under a second
 * apart.  Returns 0, or the 1-based order of the leading minor that is not
 * positive definite (A is then partly overwritten).
 */
size_t		km_cholesky(double *A, size_t n, size_t lda, km_interrupt_fn interrupt);

/*
 * Largest eigenvalue of (K + shift I) for symmetric K given by its lower
 * triangle, by power iteration (work: 2n doubles).
 */
double		km_largest_eigenvalue(const double *K, size_t n, size_t ld,
								  double shift, double *work,
								  km_interrupt_fn interrupt);

/* Mercer diagnostics of a Gram matrix. */
typedef struct km_spectrum
{
	double		min_eigenvalue;
	double		max_eigenvalue;
	double		tolerance;		/* n * eps * max |eigenvalue| */
	size_t		rank;			/* eigenvalues above the tolerance */
	double		max_asymmetry;	/* max |K(x_i, x_j) - K(x_j, x_i)|, both ways computed */
	double		max_abs;		/* max |K_ij| */
} km_spectrum;

/* Doubles of workspace km_gram_spectrum needs (0 on overflow). */
size_t		km_spectrum_workspace_doubles(size_t n);

/*
 * Build the Gram matrix of X (n x d rows) with BLAS, compare every entry
 * with the kernel evaluated the other way round, and find its eigenvalues
 * (tridiagonalised in interruptible pieces, src/core/eigen.c: the extremes by
 * bisection and the rank by Sturm count).
 */
km_status	km_gram_spectrum(const km_kernel *k, const double *X, size_t n,
							 int d, double *work, km_spectrum *out,
							 km_error *err, km_interrupt_fn interrupt);

#endif							/* KM_SOLVE_H */
