/*
 * kpca.h - exact kernel PCA, as scikit-learn's KernelPCA (core: plain C99,
 * no PostgreSQL header, no allocation of O(n^2): the caller passes K).
 *
 * The n x n Gram matrix K of the (standardized) rows is centred in feature
 * space, Kc = K - 1K/n - K1/n + 1K1/n^2 (KernelCenterer), and its top k
 * eigenpairs (lambda_j, v_j) are found by LAPACK's dsyevr, or from 1,500
 * rows and for k <= 32 by block Lanczos (eigen.h: km_eigen_top, residuals
 * below 1e-11 lambda_1; dsyevr if it does not get there) (eigenvalues
 * descending; eigenvalues below 1e-12 times the largest, or negative from
 * rounding, are 0, as _check_psd_eigenvalues does).  Each eigenvector's sign
 * is fixed as svd_flip does it in KernelPCA: its largest coefficient in
 * absolute value (the first of equals) is positive.  So the components are
 * KernelPCA(eigen_solver = "dense")'s, signs included.
 *
 * The transform of a new row x (KernelPCA.transform) is
 *     z_j(x) = sum_i (k_i - m_i - mean(k) + M) v_ij / sqrt(lambda_j)
 * with k_i = K(x, x_i), m the column means of K and M their mean; it is
 * stored as a kernel expansion with one intercept per component:
 *     z_j(x) = b_j + sum_i k_i a_ij,
 *     a_ij = (v_ij - s_j / n) / sqrt(lambda_j),  s_j = sum_i v_ij,
 *     b_j  = sum_i (M - m_i) v_ij / sqrt(lambda_j),
 * the same numbers in another order (a component of eigenvalue 0 is 0, as
 * KernelPCA's).  For the training rows z_j(x_t) = sqrt(lambda_j) v_tj, its
 * fit_transform.  The explained variance of component j is lambda_j over
 * the trace of Kc (the sum of all n eigenvalues).
 */
#ifndef KM_KPCA_H
#define KM_KPCA_H

#include "kernels.h"

/* Doubles of work km_kpca_fit needs besides K and its outputs: 0 on overflow. */
size_t		km_kpca_workspace_doubles(size_t n);

/*
 * Fit k components (1 <= k <= n) on the n rows of X (n x d, row-major) with
 * kernel kern (norms: km_row_norms, or NULL when the kernel uses none).
 * K: n x n doubles of space (overwritten).  Out: coef (n x k, column-major:
 * component j at coef + j n), intercept (k), eigenvalues (k, descending),
 * *total (the trace of Kc).  work: km_kpca_workspace_doubles(n).
 */
km_status	km_kpca_fit(const km_kernel *kern, const double *X, size_t n, int d,
						int k, const double *norms, double *K, double *work,
						double *coef, double *intercept, double *eigenvalues,
						double *total, km_error *err, km_interrupt_fn interrupt);

/*
 * The k coordinates of row x (d): out_j = intercept_j + sum_i K(x, x_i)
 * coef_ij, over the n training rows X (n x d row-major).
 */
void		km_kpca_transform(const km_kernel *kern, const double *X, size_t n,
							  int d, int k, const double *coef,
							  const double *intercept, const double *x,
							  double *out);

/*
 * NYSTROM: the same on m features z(x) (approx.h), in one pass of additive
 * sums over any number of rows: S = sum z z' (m x m) and s = sum z (m) of n
 * rows, which states of disjoint rows add.  KernelPCA of the rows' features
 * (a linear kernel on Z) has the eigenvalues of Zc'Zc = S - s s'/n, and its
 * transform of x is (z(x) - s/n)'u_j with u_j the unit eigenvectors of that
 * m x m matrix: stored as u_j and one intercept b_j = -(s/n)'u_j.  When the
 * centres are the training rows (m = n, Z Z' = K), these are the exact
 * components (up to each one's sign: here u_j's largest coefficient is
 * positive, as nothing is kept per row).
 */

/* S += Z'Z (lower triangle, m x m column-major), s += Z'1, for rows x m row-major Z. */
void		km_kpca_sums_add(const double *Z, size_t rows, uint32_t m, double *S,
							 double *s);

/* Doubles of work km_kpca_sums_fit needs: 0 on overflow. */
size_t		km_kpca_sums_workspace_doubles(uint32_t m);

/*
 * k components (1 <= k <= m) from the sums of n >= 1 rows (S is
 * overwritten): coef (m x k column-major), intercept (k), eigenvalues (k,
 * descending, clipped as km_kpca_fit's), *total (the trace of Zc'Zc).
 */
km_status	km_kpca_sums_fit(double *S, const double *s, uint64_t n, uint32_t m,
							 int k, double *work, double *coef,
							 double *intercept, double *eigenvalues,
							 double *total, km_error *err);

#endif							/* KM_KPCA_H */
