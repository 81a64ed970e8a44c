/*
 * gp.h - the Gaussian-process reading of exact kernel ridge (core, no
 * PostgreSQL headers).
 *
 * Kernel ridge with (K + lambda I) alpha = y is the posterior mean of a
 * Gaussian process with prior covariance s2 K and noise variance
 * s2 lambda, where s2 = y'(K + lambda I)^-1 y / n is the maximum-likelihood
 * amplitude given lambda (y centred when the model fits an intercept).
 * lambda here is the diagonal shift the model was solved with: its lambda
 * plus any jitter the fit had to add.  y itself is not stored: y'(K +
 * lambda I)^-1 y = alpha'(K + lambda I) alpha = ||L' alpha||^2 with L the
 * Cholesky factor of K + lambda I, which km_gp_prepare rebuilds from the
 * training rows the model keeps.  The fit has that factor: it keeps s2 and
 * sum_i log L_ii in the model (its GP section, model.h), so that the
 * amplitude and the likelihood of a model since 0.4.0 need no factor.
 *
 * The predictive variance of a new observation at x is
 *     s2 (max(0, k(x, x) - k_x'(K + lambda I)^-1 k_x) + lambda):
 * the latent part is a Schur complement, never negative in exact
 * arithmetic; rounding can take it below zero for a row equal to a
 * training row under a tiny lambda, and it is then clipped at 0, so the
 * standard deviation is never below the noise's, sqrt(s2 lambda).
 *
 * The log marginal likelihood with the amplitude profiled out (that of
 * scikit-learn's GaussianProcessRegressor with ConstantKernel(s2) * k +
 * WhiteKernel(s2 lambda)) is
 *     -n/2 (1 + log(2 pi) + log s2) - sum_i log L_ii.
 *
 * Approximate ridge (gp.c).  Nystrom solves (G + lambda K) a = r
 * with G = sum z z', z = k_m(x) the kernel values at the m centres,
 * K = K_mm + eps I, r = sum z (y - ybar): the posterior mean of the DTC
 * (deterministic training conditional) sparse GP with prior covariance
 * s2 k and noise s2 lambda (Quinonero-Candela and Rasmussen 2005), whose
 * training covariance is s2 (Q + lambda I), Q = K_nm K^-1 K_mn.  Its
 * amplitude is profiled as exact's, s2 = y'(Q + lambda I)^-1 y / n =
 * (sum (y - ybar)^2 - r'a) / (lambda n) (Woodbury), and the predictive
 * variance of a new observation at x is
 *     s2 (max(0, k(x, x) - q(x)) + lambda + lambda k_m' (G + lambda K)^-1 k_m),
 * q(x) = k_m' K^-1 k_m.  At centres = the n training rows it is exact's
 * (K^-1 - lambda (K (K + lambda I))^-1 = (K + lambda I)^-1).  The first
 * part, the prior variance the centres do not explain, is never negative
 * for a positive semi-definite kernel; rounding (or a kernel that is not
 * PSD) can take it below 0 and it is clipped at 0; the third part is a
 * squared norm: the standard deviation is never below the noise's.  Rff
 * is Bayesian linear regression on z(x) (prior N(0, s2 I) on the
 * coefficients, K = I, Q = Z Z'): the variance is s2 lambda (1 + z'(G +
 * lambda I)^-1 z), nothing to clip.  The model keeps the factor R of
 * A + lambda I, A = L^-1 G L^-T, L = chol(K) (GP_APPROX section), s2 and
 * 1/2 log det(Q + lambda I) = 1/2 (n - m) log lambda + sum_i log R_ii
 * (the matrix determinant lemma); the likelihood is exact's formula with
 * that determinant over the n rows the statistics saw.
 */
#ifndef KM_GP_H
#define KM_GP_H

#include "approx.h"
#include "model.h"

typedef struct km_gp
{
	const km_model *m;
	size_t		n;
	int			d;
	double		shift;			/* lambda + jitter: the noise ratio */
	double		s2;				/* the amplitude (0 when y is constant) */
	double		logdet_half;	/* sum_i log L_ii */
	double	   *L;				/* n x n column-major, lower Cholesky factor
								 * (nystrom: of K_mm + eps I; rff: none) */
	double	   *x;				/* d: the row being scored, standardized */
	double	   *kx;				/* n: its kernel row, then L^-1 k_x */
	/* approximate models (gp.c) */
	size_t		rows;			/* rows of the likelihood: n, or rows_seen */
	bool		approx;
	const double *R;			/* packed chol(A + lambda I): m->gp_factor */
	double	   *v;				/* n: R^-1 L^-1 k_m */
	/* many rows at a time (km_gp_block_prepare) */
	double	   *norms;			/* n kernel norms of the rows / centres */
	double	   *Xt;				/* d x n: the rows / centres transposed */
	double	   *Rfull;			/* n x n: R unpacked (approximate) */
	bool		block_ready;
} km_gp;

/*
 * Whether m has a GP reading: an exact model of a method whose ops say so
 * (ridge), or an approximate one that keeps its factor (GP_APPROX).
 * Otherwise false, with why (may be NULL) "method" or "approximation".
 */
bool		km_gp_applies(const km_model *m, const char **why);

/*
 * Doubles km_gp_prepare needs for m (n^2 + 2n + d; rff 2n + d); 0 on
 * overflow.
 */
size_t		km_gp_doubles(const km_model *m);

/*
 * s2 and the log determinant as the fit kept them (the model's GP section,
 * model.h), into g's n, d, shift, s2 and logdet_half (not its factor):
 * true, without factoring anything; false for a model without them (one
 * written before 0.4.0, say), which km_gp_prepare computes them for.
 */
bool		km_gp_stored(km_gp *g, const km_model *m);

/*
 * Factor K + shift I of m's training rows into mem (km_gp_doubles(m)
 * doubles) and take s2 and the log determinant from the model
 * (km_gp_stored) or compute them from the factor; KM_ERR_NOT_PD or
 * KM_ERR_OVERFLOW otherwise.  Calls interrupt while it builds and factors.
 */
km_status	km_gp_prepare(km_gp *g, const km_model *m, double *mem,
						  km_error *err, km_interrupt_fn interrupt);

/*
 * The predictive standard deviation of a new observation at the raw row x
 * (d finite values), clipped as above.  KM_ERR_OVERFLOW if the row's
 * standardized values or kernel values overflow.
 */
km_status	km_gp_std(km_gp *g, const double *x, double *std, km_error *err);

/*
 * The log marginal likelihood; false (and *lml untouched) when it is not
 * finite: s2 = 0 (a constant target) makes it unbounded.
 */
bool		km_gp_log_marginal_likelihood(const km_gp *g, double *lml);

/*
 * Many rows at a time: the same standard deviations as km_gp_std (the
 * same clipping rule; within rounding: the kernel block comes from one
 * DGEMM and the element-wise map of km_gram_cross, the solves from one
 * triangular solve for the block), for kernel_predict_std_matrix.  After
 * km_gp_prepare, km_gp_block_prepare keeps in mem
 * (km_gp_block_prepare_doubles(g) doubles) the kernel norms and the
 * transposed rows of the model (or centres), and an approximate model's R
 * unpacked for dtrsm.  km_gp_std_block then scores rows raw rows X (row
 * major, d each) into std with work of km_gp_block_doubles(g, rows)
 * doubles: the kernel block K_xm (one DGEMM), L^-1 K_xm (one dtrsm; rff:
 * the features), the column norms, and for an approximate model
 * R^-1 L^-1 K_xm (a second dtrsm) and its column norms.  The flops per row:
 * 2 n d + n^2 (+ n^2 approximate).  No interrupt check: callers pass
 * blocks of bounded work.  0 doubles on overflow.
 */
size_t		km_gp_block_prepare_doubles(const km_gp *g);
void		km_gp_block_prepare(km_gp *g, double *mem);
size_t		km_gp_block_doubles(const km_gp *g, size_t rows);
km_status	km_gp_std_block(km_gp *g, const double *X, size_t rows,
							double *std, double *work, km_error *err);

/* gp.c: approximate ridge */

/*
 * At the end of the sums road's solve (km_approx_solve's result res, its
 * coefficients coef, its statistics stats, over basis b): R, s2 and the
 * half log determinant above.  work has 2 m^2 doubles (the solve's work
 * is larger); on KM_OK R (m (m + 1) / 2 doubles, packed lower by columns)
 * is at its start.  KM_ERR_NOT_PD when A + lambda I does not factor (the
 * caller then keeps no reading).  Interruptible.
 */
km_status	km_gp_approx_fit(const km_basis *b, const km_accum *stats,
							 const km_approx_result *res, const double *coef,
							 double *work, double *s2, double *logdet_half,
							 km_error *err, km_interrupt_fn interrupt);

/* km_gp_prepare and km_gp_std of an approximate model (g->approx). */
km_status	km_gp_approx_prepare(km_gp *g, const km_model *m, double *mem,
								 km_error *err, km_interrupt_fn interrupt);
km_status	km_gp_approx_std(km_gp *g, const double *x, double *std,
							 km_error *err);

#endif							/* KM_GP_H */
