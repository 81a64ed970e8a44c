/*
 * kpca.c - exact kernel PCA (kpca.h).  Core: no PostgreSQL header.
 */
#include <math.h>
#include <string.h>

#include <lapacke.h>

#include "methods/kpca.h"

size_t
km_kpca_workspace_doubles(size_t n)
{
	/* the column means of K, then dsyevr's 2n support indices */
	return n > ((size_t) -1) / (8 * sizeof(double)) ? 0 : 3 * n;
}

/* Column means of K (lower triangle of an n x n column-major matrix) into m. */
static void
column_means(const double *K, size_t n, double *m, km_interrupt_fn interrupt)
{
	memset(m, 0, n * sizeof(double));
	for (size_t j = 0; j < n; j++)
	{
		const double *col = K + j * n;

		m[j] += col[j];
		for (size_t i = j + 1; i < n; i++)
		{
			m[j] += col[i];
			m[i] += col[i];
		}
		if ((j & 255) == 255)
			km_check_interrupts(interrupt);
	}
	for (size_t j = 0; j < n; j++)
		m[j] /= (double) n;
}

km_status
km_kpca_fit(const km_kernel *kern, const double *X, size_t n, int d, int k,
			const double *norms, double *K, double *work, double *coef,
			double *intercept, double *eigenvalues, double *total,
			km_error *err, km_interrupt_fn interrupt)
{
	double	   *m = work;
	double		M = 0,
				tr = 0,
				top;
	lapack_int	found = 0,
				info;
	lapack_int *isuppz;

	if (k < 1 || (size_t) k > n)
		return km_fail(err, KM_ERR_INVALID, "kernel PCA needs 1 to n components",
					   "It was asked for %d components of %zu rows.", k, n);
	if (!km_gram_lower(kern, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(kern, K, n, n, err);
	column_means(K, n, m, interrupt);
	for (size_t i = 0; i < n; i++)
		M += m[i];
	M /= (double) n;
	/* centre the lower triangle: Kc_ij = K_ij - m_i - m_j + M */
	for (size_t j = 0; j < n; j++)
	{
		double	   *col = K + j * n;

		for (size_t i = j; i < n; i++)
			col[i] = col[i] - m[i] - m[j] + M;
		tr += col[j];
		if ((j & 255) == 255)
			km_check_interrupts(interrupt);
	}
	if (!isfinite(tr))
		return km_fail(err, KM_ERR_OVERFLOW, "centred kernel matrix overflows",
					   "The trace of the centred Gram matrix of %zu rows is not finite.", n);
	km_check_interrupts(interrupt);
	/* the top k eigenpairs, ascending, into eigenvalues and coef */
	isuppz = (lapack_int *) (void *) (work + n);
	info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', (lapack_int) n, K,
						  (lapack_int) n, 0.0, 0.0, (lapack_int) (n - k + 1),
						  (lapack_int) n, 0.0, &found, eigenvalues, coef,
						  (lapack_int) n, isuppz);
	if (info != 0 || found != k)
		return km_fail(err, KM_ERR_INACCURATE, "eigendecomposition failed",
					   "LAPACK dsyevr returned %d and found %d of %d eigenvalues of the centred Gram matrix of %zu rows.",
					   (int) info, (int) found, k, n);
	km_check_interrupts(interrupt);
	/* descending */
	for (int a = 0, b = k - 1; a < b; a++, b--)
	{
		double		t = eigenvalues[a];

		eigenvalues[a] = eigenvalues[b];
		eigenvalues[b] = t;
		for (size_t i = 0; i < n; i++)
		{
			t = coef[i + (size_t) a * n];
			coef[i + (size_t) a * n] = coef[i + (size_t) b * n];
			coef[i + (size_t) b * n] = t;
		}
	}
	top = eigenvalues[0] > 0 ? eigenvalues[0] : 0;
	for (int j = 0; j < k; j++)
	{
		double	   *v = coef + (size_t) j * n;
		size_t		arg = 0;
		double		s = 0,
					b = 0,
					scale;

		if (!(eigenvalues[j] > 1e-12 * top))
			eigenvalues[j] = 0;
		/* the sign: the largest coefficient positive (svd_flip) */
		for (size_t i = 1; i < n; i++)
			if (fabs(v[i]) > fabs(v[arg]))
				arg = i;
		if (v[arg] < 0)
			for (size_t i = 0; i < n; i++)
				v[i] = -v[i];
		if (eigenvalues[j] == 0)
		{
			memset(v, 0, n * sizeof(double));
			intercept[j] = 0;
			continue;
		}
		scale = 1.0 / sqrt(eigenvalues[j]);
		for (size_t i = 0; i < n; i++)
		{
			s += v[i];
			b += (M - m[i]) * v[i];
		}
		for (size_t i = 0; i < n; i++)
			v[i] = (v[i] - s / (double) n) * scale;
		intercept[j] = b * scale;
	}
	*total = tr;
	return KM_OK;
}

void
km_kpca_transform(const km_kernel *kern, const double *X, size_t n, int d,
				  int k, const double *coef, const double *intercept,
				  const double *x, double *out)
{
	for (int j = 0; j < k; j++)
		out[j] = intercept[j];
	for (size_t i = 0; i < n; i++)
	{
		double		kx = km_kernel_eval(kern, x, X + i * (size_t) d, d);

		for (int j = 0; j < k; j++)
			out[j] += kx * coef[i + (size_t) j * n];
	}
}
