/*
 * diagnostics.c - Mercer diagnostics of a Gram matrix (diagnostics.h): the
 * BLAS-built matrix against the kernel evaluated the other way round, and
 * its extreme eigenvalues and rank.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "diagnostics.h"
#include "eigen.h"

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
