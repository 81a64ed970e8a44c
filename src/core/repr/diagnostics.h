/*
 * diagnostics.h - Mercer diagnostics of a Gram matrix: symmetry and
 * spectrum (core, no PostgreSQL headers).
 */
#ifndef KM_DIAGNOSTICS_H
#define KM_DIAGNOSTICS_H

#include "kernels.h"

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
 * (tridiagonalised in interruptible pieces, src/core/base/eigen.c: the extremes by
 * bisection and the rank by Sturm count).
 */
km_status	km_gram_spectrum(const km_kernel *k, const double *X, size_t n,
							 int d, double *work, km_spectrum *out,
							 km_error *err, km_interrupt_fn interrupt);

#endif							/* KM_DIAGNOSTICS_H */
