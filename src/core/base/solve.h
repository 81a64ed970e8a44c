/*
 * solve.h - the numerics methods share: standardization, blocked Cholesky,
 * power iteration (core, no PostgreSQL headers).  The methods themselves
 * are in ridge.c and lms.c (method.h); the fit entry point in fit.h.
 */
#ifndef KM_SOLVE_H
#define KM_SOLVE_H

#include "core.h"

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

/* Panel width of km_symv_lower, in columns (as KM_LOGISTIC_PANEL). */
#define KM_SYMV_PANEL 512

/*
 * u := K v for symmetric K given by its lower triangle (column-major,
 * leading dimension ld), in panels of KM_SYMV_PANEL columns (dsymv on
 * the diagonal block, two dgemv below it) with an interrupt check between.
 */
void		km_symv_lower(const double *K, size_t n, size_t ld, const double *v,
						  double *u, km_interrupt_fn interrupt);

#endif							/* KM_SOLVE_H */
