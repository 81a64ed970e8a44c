/*
 * fit.h - the fit entry point of the regression methods: the Gram matrix's
 * row norms, then the method's fit (ridge.c, lms.c) through the registry
 * (core, no PostgreSQL headers).
 */
#ifndef KM_FIT_H
#define KM_FIT_H

#include "method.h"

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

#endif							/* KM_FIT_H */
