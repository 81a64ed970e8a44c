/*
 * eigen.h - symmetric eigensolver that checks for interrupts between
 * pieces of bounded work (core, no PostgreSQL headers).
 *
 * LAPACK's dsyevd is one call that runs for minutes at n = 10,000.  This is
 * its first and last steps (Householder tridiagonalisation as dsytrd does
 * it, the back-transformation of dormtr) driven by our own loops over
 * LAPACK's building blocks, each piece sized from n so that it runs well
 * under a second, and O(n) work on the tridiagonal matrix in between.
 */
#ifndef KM_EIGEN_H
#define KM_EIGEN_H

#include "core.h"

/*
 * km_tridiagonalize: A := Q^T A Q = tridiagonal (diagonal d, subdiagonal e),
 * Q's Householder vectors left below the subdiagonal of A with factors tau,
 * exactly as LAPACK dsytrd('L') stores them.  W has n * KM_TRD_MAX_NB
 * doubles.  nb is the dlatrd panel width, 1..KM_TRD_MAX_NB, or 0 for
 * km_tridiag_panel_width(n), the width that keeps one dlatrd call short.
 */
#define KM_TRD_MAX_NB 32
int			km_tridiag_panel_width(size_t n);
void		km_tridiagonalize(double *A, size_t n, int nb, double *d, double *e,
							  double *tau, double *W, km_interrupt_fn interrupt);

/*
 * Z := Q Z for the n x n column-major Z (leading dimension n), Q from
 * km_tridiagonalize; work has km_back_transform_doubles(n) doubles.
 */
size_t		km_back_transform_doubles(size_t n);
void		km_back_transform(const double *A, size_t n, const double *tau,
							  double *Z, double *work, km_interrupt_fn interrupt);

/*
 * The k-th smallest (from 0) eigenvalue of the symmetric tridiagonal matrix
 * with diagonal d and subdiagonal e, by bisection (LAPACK dstebz) to the
 * accuracy of dsterf; O(n).  work has 5n doubles, iwork 5n ints.
 */
double		km_tridiag_eigenvalue(const double *d, const double *e, size_t n,
								  size_t k, double *work, int *iwork);

/* How many eigenvalues of that tridiagonal matrix are below x (Sturm count). */
size_t		km_tridiag_count_below(const double *d, const double *e, size_t n,
								   double x);

#endif							/* KM_EIGEN_H */
