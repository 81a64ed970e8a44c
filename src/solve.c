/*
 * solve.c - standardization, blocked Cholesky, kernel ridge and kernel LMS.
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

const char *
km_method_name(km_method method)
{
	switch (method)
	{
		case KM_METHOD_RIDGE:
			return "ridge";
		case KM_METHOD_LMS:
			return "lms";
	}
	return "unknown";
}

bool
km_method_from_name(const char *name, km_method *method)
{
	if (strcmp(name, "ridge") == 0)
		*method = KM_METHOD_RIDGE;
	else if (strcmp(name, "lms") == 0)
		*method = KM_METHOD_LMS;
	else
		return false;
	return true;
}

/*
 * Below this a sum of squares may have lost its small terms to underflow;
 * above its reciprocal it may overflow.  Either way: scale first.
 */
#define KM_SAFE_SQUARES 1e-280

void
km_standardize(const double *X, size_t n, int d, double *mean, double *scale,
			   double *out)
{
	for (int j = 0; j < d; j++)
		mean[j] = scale[j] = 0.0;
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
		{
			/*
			 * The squares overflowed or underflowed (or the column is
			 * constant, then top is 0): centre halved values,
			 * which cannot overflow, and scale them by the largest, as
			 * LAPACK's dnrm2 does.  The deviation itself is at most half the
			 * range of the values, so it is finite.
			 */
			double		top = 0.0;
			double		ss = 0.0;

			for (size_t i = 0; i < n; i++)
				top = fmax(top, fabs(X[i * d + j] / 2 - mean[j] / 2));
			if (top > 0.0)
				for (size_t i = 0; i < n; i++)
				{
					double		t = (X[i * d + j] / 2 - mean[j] / 2) / top;

					ss += t * t;
				}
			scale[j] = top * sqrt(ss / (double) n) * 2;
		}
		if (!(scale[j] > 0.0))
			scale[j] = 1.0;
	}
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
km_fit_workspace_doubles(size_t n)
{
	/* n^2 + 7n + one block must fit in size_t bytes */
	if (n == 0 || n > ((size_t) 1 << 28))
		return 0;
	/* K, norms, 6n of vectors, one block of km_gram_times */
	return n * n + 7 * n + (size_t) KM_TIMES_COLS * KM_TIMES_ROWS;
}

size_t
km_fit_first_row(size_t j, size_t n, int d)
{
	size_t		width = km_gram_panel_width(n, d);

	/* the Gram panels; the Cholesky blocks (KM_CHOL_BLOCK) stay below them */
	return j / width * width;
}

static void
add_to_diagonal(double *K, size_t n, size_t ld, double value)
{
	for (size_t i = 0; i < n; i++)
		K[i + i * ld] += value;
}

/*
 * Build K + shift I (lower triangle) and its 1-norm (LAPACK dlansy, work n
 * doubles), for the condition estimate after factoring.
 */
static km_status
shifted_gram(const km_fit_params *p, const double *X, size_t n, int d,
			 const double *norms, double *K, double shift, double *anorm,
			 double *work, km_error *err, km_interrupt_fn interrupt)
{
	if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(&p->kernel, K, n, n, err);
	add_to_diagonal(K, n, n, shift);
	*anorm = LAPACKE_dlansy_work(LAPACK_COL_MAJOR, '1', 'L', (lapack_int) n,
								 K, (lapack_int) n, work);
	if (!isfinite(*anorm))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel matrix norm is out of range for type double precision",
					   "A column sum of |K + lambda I| with lambda = %g and the %s kernel overflowed.",
					   shift, km_kernel_name(p->kernel.type));
	return KM_OK;
}

static km_status
fit_ridge(const km_fit_params *p, const double *X, size_t n, int d,
		  const double *y, double *alpha, double *K, const double *norms,
		  double *work, km_fit_result *res, km_error *err,
		  km_interrupt_fn interrupt)
{
	double	   *u = work;		/* K alpha, then the training residual */
	double	   *r = u + n;		/* residual of the ridge equations */
	double	   *lwork = r + n;	/* 3n for dpocon (n for dlansy) */
	lapack_int *iwork = (lapack_int *) (lwork + 3 * n);	/* n */
	double	   *panel = lwork + 4 * n;
	double		mean_diag = 0.0;
	double		shift = p->lambda;
	double		anorm;
	double		ynorm;
	double		relres;
	size_t		minor;
	km_status	st;

	st = shifted_gram(p, X, n, d, norms, K, shift, &anorm, lwork, err, interrupt);
	if (st != KM_OK)
		return st;
	for (size_t i = 0; i < n; i++)
		mean_diag += K[i + i * n] - shift;
	mean_diag /= (double) n;

	minor = km_cholesky(K, n, n, interrupt);
	if (minor != 0)
	{
		/* The factor overwrote K: rebuild it rather than keep a second copy. */
		res->jitter = fmax(KM_JITTER_REL * fabs(mean_diag), KM_JITTER_ABS);
		shift = p->lambda + res->jitter;
		st = shifted_gram(p, X, n, d, norms, K, shift, &anorm, lwork, err,
						  interrupt);
		if (st != KM_OK)
			return st;
		minor = km_cholesky(K, n, n, interrupt);
		if (minor != 0)
			return km_fail(err, KM_ERR_NOT_PD,
						   "kernel matrix is not positive definite",
						   "The Cholesky factorisation of K + lambda I failed at row %zu of %zu with lambda = %g, and again with jitter %g added.",
						   minor, n, p->lambda, res->jitter);
	}

	memcpy(alpha, y, n * sizeof(double));
	LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, 1, K,
						(lapack_int) n, alpha, (lapack_int) n);
	res->converged = true;

	/*
	 * The real training error of the coefficients returned, and the
	 * residual of the equations they were meant to solve: in exact
	 * arithmetic y - K alpha = shift alpha, in floating point only when
	 * the solve was accurate.
	 */
	if (km_all_finite(alpha, n) &&
		!km_gram_times(&p->kernel, X, n, d, norms, alpha, u, panel, interrupt))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel matrix entry is out of range for type double precision",
					   "Rebuilding the %s kernel matrix for the training residual overflowed.",
					   km_kernel_name(p->kernel.type));
	ynorm = cblas_dnrm2((int) n, y, 1);
	if (km_all_finite(alpha, n))
	{
		for (size_t i = 0; i < n; i++)
		{
			u[i] = y[i] - u[i];
			r[i] = u[i] - shift * alpha[i];
		}
		res->train_rmse = cblas_dnrm2((int) n, u, 1) / sqrt((double) n);
		relres = cblas_dnrm2((int) n, r, 1);
		relres = ynorm > 0.0 ? relres / ynorm : (relres > 0.0 ? HUGE_VAL : 0.0);
	}
	else
		res->train_rmse = relres = HUGE_VAL;

	res->relative_residual = relres;
	if (!(relres <= KM_MAX_RELATIVE_RESIDUAL) || !isfinite(res->train_rmse))
	{
		double		rcond = 0.0;

		if (LAPACKE_dpocon_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, K,
								(lapack_int) n, anorm, &rcond, lwork,
								iwork) != 0)
			rcond = NAN;
		return km_fail(err, KM_ERR_INACCURATE,
					   "kernel ridge solution is not accurate",
					   "The coefficients leave a relative residual ||y - (K + lambda I) alpha|| / ||y|| of %.3g with lambda = %g (at most %g is accepted); the reciprocal condition number of K + lambda I is about %.3g (1-norm %.3g).",
					   relres, shift, KM_MAX_RELATIVE_RESIDUAL, rcond, anorm);
	}
	return KM_OK;
}

static km_status
fit_lms(const km_fit_params *p, const double *X, size_t n, int d,
		const double *y, double *beta, double *K, const double *norms,
		double *work, km_fit_result *res, km_error *err,
		km_interrupt_fn interrupt)
{
	double	   *r = work;
	double		a = p->learning_rate;

	if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(&p->kernel, K, n, n, err);

	if (!(a > 0.0))
	{
		double		top = km_largest_eigenvalue(K, n, n, p->lambda, work,
												interrupt);

		if (!(top > 0.0) || !isfinite(top))
			return km_fail(err, KM_ERR_NOT_PD,
						   "cannot choose a learning rate for lms",
						   "The largest eigenvalue of K + lambda I is %g; it must be positive.",
						   top);
		/* converges for 0 < a < 2 / lambda_max; 1 / lambda_max leaves a margin */
		a = 1.0 / top;
	}
	res->learning_rate = a;

	memset(beta, 0, n * sizeof(double));
	res->iterations = 0;
	res->converged = false;
	res->final_change = 0.0;
	for (int it = 1; it <= p->max_iter; it++)
	{
		double		step_norm;
		double		beta_norm;

		/* r := y - (K + lambda I) beta;  beta := beta + a r */
		memcpy(r, y, n * sizeof(double));
		cblas_dsymv(CblasColMajor, CblasLower, (int) n, -1.0, K, (int) n,
					beta, 1, 1.0, r, 1);
		if (p->lambda != 0.0)
			cblas_daxpy((int) n, -p->lambda, beta, 1, r, 1);
		cblas_daxpy((int) n, a, r, 1, beta, 1);

		step_norm = a * cblas_dnrm2((int) n, r, 1);
		beta_norm = cblas_dnrm2((int) n, beta, 1);
		res->iterations = it;
		res->final_change = beta_norm > 0.0 ? step_norm / beta_norm : 0.0;
		if (!isfinite(beta_norm) || !isfinite(step_norm))
			return km_fail(err, KM_ERR_DIVERGED, "lms diverged",
						   "The coefficients became non-finite at iteration %d with learning_rate %g.",
						   it, a);
		km_check_interrupts(interrupt);
		if (res->final_change < p->tol)
		{
			res->converged = true;
			break;
		}
	}

	/* training residual y - K beta */
	memcpy(r, y, n * sizeof(double));
	cblas_dsymv(CblasColMajor, CblasLower, (int) n, -1.0, K, (int) n, beta, 1,
				1.0, r, 1);
	res->train_rmse = cblas_dnrm2((int) n, r, 1) / sqrt((double) n);
	if (!isfinite(res->train_rmse))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "lms training error is out of range for type double precision",
					   "The training residual y - K beta of the %s kernel overflowed after %d iterations.",
					   km_kernel_name(p->kernel.type), res->iterations);
	return KM_OK;
}

km_status
km_fit(const km_fit_params *p, const double *X, size_t n, int d,
	   const double *y, double *alpha, double *work, km_fit_result *res,
	   km_error *err, km_interrupt_fn interrupt)
{
	double	   *K = work;
	double	   *norms = work + n * n;
	double	   *scratch = norms + n;

	memset(res, 0, sizeof(*res));
	km_row_norms(&p->kernel, X, n, d, norms);
	if (p->method == KM_METHOD_LMS)
		return fit_lms(p, X, n, d, y, alpha, K, norms, scratch, res, err,
					   interrupt);
	return fit_ridge(p, X, n, d, y, alpha, K, norms, scratch, res, err,
					 interrupt);
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
	double		pending = 0.0;
	double		top;

	memset(out, 0, sizeof(*out));
	km_row_norms(k, X, n, d, norms);
	if (!km_gram_lower(k, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(k, K, n, n, err);

	/* the BLAS-built lower triangle against K(x_j, x_i) from the definition */
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
