/*
 * solve.c - the numerics the methods share: standardization, blocked
 * Cholesky, power iteration, the fit entry point that hands the work to a
 * method (ridge.c, lms.c), and the spectrum of a Gram matrix.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "kernels.h"
#include "solve.h"

/* Cholesky block size and the width of each trailing-update GEMM. */
#ifndef KM_CHOL_BLOCK
#define KM_CHOL_BLOCK 256
#endif
#ifndef KM_CHOL_PANEL
#define KM_CHOL_PANEL 2048
#endif

/* Power iteration: iterations at most, and relative change to stop at. */
#define KM_POWER_MAX_ITER 300
#define KM_POWER_TOL 1e-6

/*
 * Below this a sum of squares may have lost its small terms to underflow;
 * above its reciprocal it may overflow.  Either way: scale first.
 */
#define KM_SAFE_SQUARES 1e-280

/* Means of the columns; a sum that overflows is taken of values / n. */
static void
column_means(const double *X, size_t n, int d, double *mean)
{
	for (int j = 0; j < d; j++)
		mean[j] = 0.0;
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			mean[j] += X[i * d + j];
	for (int j = 0; j < d; j++)
	{
		if (!isfinite(mean[j]))
		{
			/* the sum overflowed: sum the values divided by n instead */
			mean[j] = 0.0;
			for (size_t i = 0; i < n; i++)
				mean[j] += X[i * d + j] / (double) n;
		}
		else
			mean[j] /= (double) n;
	}
}

/*
 * The deviation of column j whose sum of squares overflowed or underflowed
 * (or is 0: a constant column): centre halved values, which cannot
 * overflow, and scale them by the largest, as LAPACK's dnrm2 does.  The
 * deviation itself is at most half the range of the values, so it is
 * finite.
 */
static double
scaled_deviation(const double *X, size_t n, int d, int j, double mean)
{
	double		top = 0.0;
	double		ss = 0.0;

	for (size_t i = 0; i < n; i++)
		top = fmax(top, fabs(X[i * d + j] / 2 - mean / 2));
	if (top > 0.0)
		for (size_t i = 0; i < n; i++)
		{
			double		t = (X[i * d + j] / 2 - mean / 2) / top;

			ss += t * t;
		}
	return top * sqrt(ss / (double) n) * 2;
}

/* Standard deviations of the columns about mean; 1 for a constant column. */
static void
column_scales(const double *X, size_t n, int d, const double *mean,
			  double *scale)
{
	for (int j = 0; j < d; j++)
		scale[j] = 0.0;
	/* two passes: the variance of centred values does not cancel */
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
		{
			double		c = X[i * d + j] - mean[j];

			scale[j] += c * c;
		}
	for (int j = 0; j < d; j++)
	{
		if (isfinite(scale[j]) && scale[j] > KM_SAFE_SQUARES)
			scale[j] = sqrt(scale[j] / (double) n);
		else
			scale[j] = scaled_deviation(X, n, d, j, mean[j]);
		if (!(scale[j] > 0.0))
			scale[j] = 1.0;
	}
}

void
km_standardize(const double *X, size_t n, int d, double *mean, double *scale,
			   double *out)
{
	column_means(X, n, d, mean);
	column_scales(X, n, d, mean, scale);
	/* |standardized value| <= sqrt(n), so this cannot fail */
	for (size_t i = 0; i < n; i++)
		(void) km_standardize_row(X + i * d, d, mean, scale, out + i * d);
}

int
km_standardize_row(const double *x, int d, const double *mean,
				   const double *scale, double *out)
{
	for (int j = 0; j < d; j++)
		out[j] = (x[j] - mean[j]) / scale[j];
	if (km_all_finite(out, (size_t) d))
		return -1;
	/* x - mean overflowed, or the quotient does: halve, divide, double */
	for (int j = 0; j < d; j++)
	{
		if (isfinite(out[j]))
			continue;
		out[j] = (x[j] / 2 - mean[j] / 2) / scale[j] * 2;
		if (!isfinite(out[j]))
			return j;
	}
	return -1;
}

size_t
km_cholesky(double *A, size_t n, size_t lda, km_interrupt_fn interrupt)
{
	for (size_t k = 0; k < n; k += KM_CHOL_BLOCK)
	{
		size_t		kb = n - k < KM_CHOL_BLOCK ? n - k : KM_CHOL_BLOCK;
		size_t		rest = n - k - kb;
		double	   *Akk = A + k + k * lda;
		lapack_int	info;

		info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', (lapack_int) kb,
								   Akk, (lapack_int) lda);
		if (info != 0)
			return info > 0 ? k + (size_t) info : k + 1;
		if (rest == 0)
			break;

		/* A21 := A21 L11^-T */
		cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans,
					CblasNonUnit, (int) rest, (int) kb, 1.0, Akk, (int) lda,
					Akk + kb, (int) lda);

		/* A22 := A22 - A21 A21^T, lower triangle, one column panel at a time */
		for (size_t j = k + kb; j < n; j += KM_CHOL_PANEL)
		{
			size_t		jb = n - j < KM_CHOL_PANEL ? n - j : KM_CHOL_PANEL;
			const double *Ajk = A + j + k * lda;

			cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) jb,
						(int) kb, -1.0, Ajk, (int) lda, 1.0, A + j + j * lda,
						(int) lda);
			if (j + jb < n)
				cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans,
							(int) (n - j - jb), (int) jb, (int) kb, -1.0,
							Ajk + jb, (int) lda, Ajk, (int) lda, 1.0,
							A + (j + jb) + j * lda, (int) lda);
			km_check_interrupts(interrupt);
		}
	}
	return 0;
}

/* out := (K + shift I) v, K symmetric given by its lower triangle. */
static void
shifted_symv(const double *K, size_t n, size_t ld, double shift,
			 const double *v, double *out)
{
	memcpy(out, v, n * sizeof(double));
	cblas_dsymv(CblasColMajor, CblasLower, (int) n, 1.0, K, (int) ld, v, 1,
				shift, out, 1);
}

double
km_largest_eigenvalue(const double *K, size_t n, size_t ld, double shift,
					  double *work, km_interrupt_fn interrupt)
{
	double	   *v = work;
	double	   *w = work + n;
	double		lambda = 0.0;

	/* all ones: kernel matrices with positive entries have a positive top eigenvector */
	for (size_t i = 0; i < n; i++)
		v[i] = 1.0 / sqrt((double) n);

	for (int it = 0; it < KM_POWER_MAX_ITER; it++)
	{
		double		prev = lambda;
		double		norm;

		shifted_symv(K, n, ld, shift, v, w);
		lambda = cblas_ddot((int) n, v, 1, w, 1);
		norm = cblas_dnrm2((int) n, w, 1);
		if (!(norm > 0.0) || !isfinite(norm))
			break;
		for (size_t i = 0; i < n; i++)
			v[i] = w[i] / norm;
		km_check_interrupts(interrupt);
		if (it > 0 && fabs(lambda - prev) <= KM_POWER_TOL * fabs(lambda))
			break;
	}
	return lambda;
}

size_t
km_fit_workspace_doubles(km_method method, size_t n)
{
	const km_method_ops *ops = km_method_get(method);
	size_t		own;

	/* n^2 + a few n must fit in size_t bytes */
	if (ops == NULL || n == 0 || n > ((size_t) 1 << 28))
		return 0;
	own = ops->workspace_doubles(n);
	if (own == 0)
		return 0;
	/* K, norms, then the method's own */
	return n * n + n + own;
}

size_t
km_fit_first_row(size_t j, size_t n, int d)
{
	size_t		width = km_gram_panel_width(n, d);

	/* the Gram panels; the Cholesky blocks (KM_CHOL_BLOCK) stay below them */
	return j / width * width;
}

km_status
km_fit(const km_fit_params *p, const double *X, size_t n, int d,
	   const double *y, double *alpha, double *work, km_fit_result *res,
	   km_error *err, km_interrupt_fn interrupt)
{
	const km_method_ops *ops = km_method_get(p->method);
	double	   *K = work;
	double	   *norms = work + n * n;
	km_status	st;

	memset(res, 0, sizeof(*res));
	if (ops == NULL)
		return km_fail(err, KM_ERR_INVALID, "unknown training method",
					   "Method %d is not a method of this build of kernel_ml.",
					   (int) p->method);
	km_row_norms(&p->kernel, X, n, d, norms);
	st = ops->fit(p, X, n, d, y, alpha, K, norms, norms + n, res, err,
				  interrupt);
	if (st != KM_OK)
		km_method_fill_hint(p->method, err);
	return st;
}

size_t
km_spectrum_workspace_doubles(size_t n)
{
	if (n == 0 || n > ((size_t) 1 << 28))
		return 0;
	/* K; d, e, tau, norms; the dlatrd panel; dstebz's 5n doubles and 5n ints */
	return n * n + 4 * n + n * KM_TRD_MAX_NB + 10 * n;
}

/* Kernel evaluations (times d) between interrupt checks in the symmetry test. */
#define KM_EVAL_WORK 50000000.0

/*
 * The BLAS-built lower triangle of K against K(x_j, x_i) from the
 * definition: out->max_asymmetry and out->max_abs.
 */
static void
check_symmetry(const km_kernel *k, const double *X, size_t n, int d,
			   const double *K, km_spectrum *out, km_interrupt_fn interrupt)
{
	double		pending = 0.0;

	for (size_t j = 0; j < n; j++)
	{
		for (size_t i = j; i < n; i++)
		{
			double		kij = K[i + j * n];
			double		kji = km_kernel_eval(k, X + j * (size_t) d, X + i * (size_t) d, d);

			out->max_asymmetry = fmax(out->max_asymmetry, fabs(kij - kji));
			out->max_abs = fmax(out->max_abs, fabs(kij));
		}
		/* a check per amount of work, not per column: rows may be wide */
		pending += (double) (n - j) * (double) d;
		if (pending >= KM_EVAL_WORK)
		{
			km_check_interrupts(interrupt);
			pending = 0.0;
		}
	}
}

km_status
km_gram_spectrum(const km_kernel *k, const double *X, size_t n, int d,
				 double *work, km_spectrum *out, km_error *err,
				 km_interrupt_fn interrupt)
{
	double	   *K = work;
	double	   *diag = K + n * n;
	double	   *sub = diag + n;
	double	   *tau = sub + n;
	double	   *norms = tau + n;
	double	   *W = norms + n;
	double	   *ework = W + n * KM_TRD_MAX_NB;
	int		   *iwork = (int *) (ework + 5 * n);
	double		top;

	memset(out, 0, sizeof(*out));
	km_row_norms(k, X, n, d, norms);
	if (!km_gram_lower(k, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(k, K, n, n, err);

	check_symmetry(k, X, n, d, K, out, interrupt);

	/*
	 * Eigenvalues as dsyevd finds them, without its minutes-long single call:
	 * tridiagonalise in interruptible pieces, then bisect for the two
	 * extremes and count by Sturm sequences (O(n) each).
	 */
	km_tridiagonalize(K, n, 0, diag, sub, tau, W, interrupt);
	out->min_eigenvalue = km_tridiag_eigenvalue(diag, sub, n, 0, ework, iwork);
	out->max_eigenvalue = km_tridiag_eigenvalue(diag, sub, n, n - 1, ework, iwork);
	km_check_interrupts(interrupt);
	if (!isfinite(out->min_eigenvalue) || !isfinite(out->max_eigenvalue))
		return km_fail(err, KM_ERR_NOT_PD, "eigenvalues of the kernel matrix did not converge",
					   "LAPACK dstebz found no eigenvalue of the tridiagonal form of the %zu x %zu kernel matrix.",
					   n, n);

	top = fmax(fabs(out->min_eigenvalue), fabs(out->max_eigenvalue));
	/* numpy's matrix_rank tolerance: largest |eigenvalue| * n * eps */
	out->tolerance = top * (double) n * DBL_EPSILON;
	/* eigenvalues above the tolerance: n minus those at or below it */
	out->rank = n - km_tridiag_count_below(diag, sub, n,
										   nextafter(out->tolerance, INFINITY));
	return KM_OK;
}
