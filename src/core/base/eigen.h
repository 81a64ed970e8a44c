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

/*
 * The top k eigenpairs of a symmetric matrix without tridiagonalising it:
 * block Lanczos with thick restarts, in the form that expands the basis Q
 * by the residuals of the leading Ritz pairs (as block Davidson without a
 * preconditioner; the same span as block Lanczos's next block).  One pass
 * multiplies the n x n matrix (lower triangle, read only) by a block of b
 * vectors in column panels, DSYMM/DGEMM with an interrupt check after each;
 * Rayleigh-Ritz on W = A Q gives the Ritz pairs and their residuals
 * ||A y - theta y|| without another product.  The start block comes from a
 * fixed seed: the result depends only on A (and the BLAS).
 *
 * km_eigen_top_block(k) is b, km_eigen_top_doubles(n, k) the work it needs
 * (0 on overflow; k from 1 to 2^20).  km_eigen_top returns true when every
 * one of the top k Ritz pairs has a residual <= tol |theta_1| within
 * max_passes products, with theta (k, descending) and V (n x k,
 * column-major, orthonormal); false otherwise (then theta and V are
 * garbage; A is untouched: the caller falls back to dsyevr).  *passes: the
 * products done.  Needs n >= 2 km_eigen_top_basis(k).
 */
int			km_eigen_top_block(int k);
size_t		km_eigen_top_basis(int k);
size_t		km_eigen_top_doubles(size_t n, int k);
bool		km_eigen_top(const double *A, size_t n, int k, double tol,
						 int max_passes, double *theta, double *V, double *work,
						 int *passes, km_interrupt_fn interrupt);

#endif							/* KM_EIGEN_H */
