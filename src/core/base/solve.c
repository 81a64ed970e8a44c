/*
 * solve.c - the numerics the methods share: standardization, blocked
 * Cholesky, power iteration.
 */
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "progress.h"
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
	size_t		panels = (n + KM_CHOL_BLOCK - 1) / KM_CHOL_BLOCK;

	km_progress_work_begin();

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
		/* what is left is the trailing matrix's factorization: rest^3 / 3 flops */
		km_progress_fraction(1.0 - pow((double) rest / (double) n, 3.0),
							 "Cholesky panel %zu of %zu", k / KM_CHOL_BLOCK + 1, panels);
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

void
km_symv_lower(const double *K, size_t n, size_t ld, const double *v,
			  double *u, km_interrupt_fn interrupt)
{
	memset(u, 0, n * sizeof(double));
	for (size_t j = 0; j < n; j += KM_SYMV_PANEL)
	{
		size_t		jb = n - j < KM_SYMV_PANEL ? n - j : KM_SYMV_PANEL;
		size_t		rest = n - j - jb;
		const double *Ajj = K + j + j * ld;

		cblas_dsymv(CblasColMajor, CblasLower, (int) jb, 1.0, Ajj, (int) ld,
					v + j, 1, 1.0, u + j, 1);
		if (rest > 0)
		{
			/* u[below] += A21 v[panel]; u[panel] += A21^T v[below] */
			cblas_dgemv(CblasColMajor, CblasNoTrans, (int) rest, (int) jb, 1.0,
						Ajj + jb, (int) ld, v + j, 1, 1.0, u + j + jb, 1);
			cblas_dgemv(CblasColMajor, CblasTrans, (int) rest, (int) jb, 1.0,
						Ajj + jb, (int) ld, v + j + jb, 1, 1.0, u + j, 1);
		}
		km_check_interrupts(interrupt);
	}
}
