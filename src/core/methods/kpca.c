/*
 * kpca.c - kernel PCA (kpca.h), exact and from the sums of Nystrom or RFF
 * features, and the "pca" method that fits it (its ops at the end).  Core:
 * no PostgreSQL header.
 */
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "methods/kpca.h"
#include "model_types.h"
#include "options_core.h"

/*
 * From KM_KPCA_PARTIAL_ROWS rows on, up to KM_KPCA_PARTIAL_MAX_K components
 * come from the block Lanczos solver (eigen.h, km_eigen_top) instead of
 * dsyevr: its passes cost O(n^2 k) each against dsyevr's O(n^3).  On the
 * benchmark's data it took about as long as dsyevr at 1,000 rows and less
 * from 1,500 on (a quarter at 2,000, a twentieth at 3,000); below, the
 * components are dsyevr's as before, bit for bit.  It stops when every
 * Ritz pair has ||Kc v - theta v|| <= KM_KPCA_PARTIAL_TOL theta_1, and
 * falls back to dsyevr after n / b products with Kc (about what dsyevr
 * costs), at most KM_KPCA_PARTIAL_PASSES.
 */
#define KM_KPCA_PARTIAL_ROWS 1500
#define KM_KPCA_PARTIAL_MAX_K 32
#define KM_KPCA_PARTIAL_TOL 1e-11
#define KM_KPCA_PARTIAL_PASSES 200

static bool
partial_applies(size_t n, int k)
{
	return n >= KM_KPCA_PARTIAL_ROWS && k >= 1 && k <= KM_KPCA_PARTIAL_MAX_K &&
		n >= 2 * km_eigen_top_basis(k);
}

static int
partial_passes(size_t n, int k)
{
	size_t		p = n / (size_t) km_eigen_top_block(k);

	return p < 30 ? 30 : p > KM_KPCA_PARTIAL_PASSES ? KM_KPCA_PARTIAL_PASSES : (int) p;
}

size_t
km_kpca_workspace_doubles(size_t n)
{
	size_t		top;

	if (n > ((size_t) -1) / (8 * sizeof(double)))
		return 0;
	if (n < KM_KPCA_PARTIAL_ROWS)
		return 3 * n;			/* the column means of K, then dsyevr's 2n support indices */
	/* and the partial solver's basis for the most components it serves */
	top = km_eigen_top_doubles(n, KM_KPCA_PARTIAL_MAX_K);
	if (top == 0 || top > ((size_t) -1) / sizeof(double) - 3 * n)
		return 0;
	return 3 * n + top;
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

/*
 * Eigenvalues (k, descending) below 1e-12 times the largest, or negative,
 * set to 0 (_check_psd_eigenvalues); each eigenvector in V (n x k) with its
 * largest coefficient in absolute value (the first of equals) positive, as
 * svd_flip.
 */
static void
clip_and_flip(size_t n, int k, double *eigenvalues, double *V)
{
	double		top = eigenvalues[0] > 0 ? eigenvalues[0] : 0;

	for (int j = 0; j < k; j++)
	{
		double	   *v = V + (size_t) j * n;
		size_t		arg = 0;

		if (!(eigenvalues[j] > 1e-12 * top))
			eigenvalues[j] = 0;
		for (size_t i = 1; i < n; i++)
			if (fabs(v[i]) > fabs(v[arg]))
				arg = i;
		if (v[arg] < 0)
			for (size_t i = 0; i < n; i++)
				v[i] = -v[i];
	}
}

/*
 * The top k eigenpairs of the symmetric n x n matrix A (lower triangle,
 * overwritten) by dsyevr: eigenvalues descending, eigenvectors into V
 * (n x k), clipped and flipped.  isuppz: 2n ints.
 */
static km_status
top_components(double *A, size_t n, int k, lapack_int *isuppz,
			   double *eigenvalues, double *V, km_error *err)
{
	lapack_int	found = 0,
				info;

	info = LAPACKE_dsyevr(LAPACK_COL_MAJOR, 'V', 'I', 'L', (lapack_int) n, A,
						  (lapack_int) n, 0.0, 0.0, (lapack_int) (n - k + 1),
						  (lapack_int) n, 0.0, &found, eigenvalues, V,
						  (lapack_int) n, isuppz);
	if (info != 0 || found != k)
		return km_fail(err, KM_ERR_INACCURATE, "eigendecomposition failed",
					   "LAPACK dsyevr returned %d and found %d of %d eigenvalues of a centred %zu x %zu matrix.",
					   (int) info, (int) found, k, n, n);
	for (int a = 0, b = k - 1; a < b; a++, b--)
	{
		double		t = eigenvalues[a];

		eigenvalues[a] = eigenvalues[b];
		eigenvalues[b] = t;
		for (size_t i = 0; i < n; i++)
		{
			t = V[i + (size_t) a * n];
			V[i + (size_t) a * n] = V[i + (size_t) b * n];
			V[i + (size_t) b * n] = t;
		}
	}
	clip_and_flip(n, k, eigenvalues, V);
	return KM_OK;
}

km_status
km_kpca_fit(const km_kernel *kern, const double *X, size_t n, int d, int k,
			const double *norms, double *K, double *work, double *coef,
			double *intercept, double *eigenvalues, double *total,
			km_error *err, km_interrupt_fn interrupt)
{
	double	   *m = work;
	double		M = 0,
				tr = 0;
	int			passes = 0;

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
	/* the top k eigenpairs, descending, into eigenvalues and coef */
	if (partial_applies(n, k) &&
		km_eigen_top(K, n, k, KM_KPCA_PARTIAL_TOL, partial_passes(n, k),
					 eigenvalues, coef, work + 3 * n, &passes, interrupt))
		clip_and_flip(n, k, eigenvalues, coef);
	else if (top_components(K, n, k, (lapack_int *) (void *) (work + n),
							eigenvalues, coef, err) != KM_OK)
		return err->status;
	km_check_interrupts(interrupt);
	for (int j = 0; j < k; j++)
	{
		double	   *v = coef + (size_t) j * n;
		double		s = 0,
					b = 0,
					scale;

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

void
km_kpca_sums_add(const double *Z, size_t rows, uint32_t m, double *S, double *s)
{
	if (rows == 0)
		return;
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) m, (int) rows,
				1.0, Z, (int) m, 1.0, S, (int) m);
	for (size_t r = 0; r < rows; r++)
		for (uint32_t j = 0; j < m; j++)
			s[j] += Z[r * m + j];
}

size_t
km_kpca_sums_workspace_doubles(uint32_t m)
{
	/* the mean, then dsyevr's 2m support indices */
	return 3 * (size_t) m;
}

km_status
km_kpca_sums_fit(double *S, const double *s, uint64_t n, uint32_t m, int k,
				 double *work, double *coef, double *intercept,
				 double *eigenvalues, double *total, km_error *err)
{
	double	   *mu = work;
	double		tr = 0;

	if (k < 1 || (uint32_t) k > m || n == 0)
		return km_fail(err, KM_ERR_INVALID, "kernel PCA needs 1 to m components",
					   "It was asked for %d components of %u features of %llu rows.",
					   k, (unsigned) m, (unsigned long long) n);
	for (uint32_t j = 0; j < m; j++)
		mu[j] = s[j] / (double) n;
	/* Zc'Zc = S - n mu mu' (lower triangle) */
	for (uint32_t j = 0; j < m; j++)
	{
		for (uint32_t i = j; i < m; i++)
			S[i + (size_t) j * m] -= (double) n * mu[i] * mu[j];
		tr += S[j + (size_t) j * m];
	}
	if (!isfinite(tr))
		return km_fail(err, KM_ERR_OVERFLOW, "centred feature sums overflow",
					   "The trace of the centred sums of %llu rows is not finite.",
					   (unsigned long long) n);
	if (top_components(S, m, k, (lapack_int *) (void *) (work + m), eigenvalues,
					   coef, err) != KM_OK)
		return err->status;
	for (int j = 0; j < k; j++)
	{
		double	   *u = coef + (size_t) j * m;
		double		b = 0;

		if (eigenvalues[j] == 0)
			memset(u, 0, m * sizeof(double));
		for (uint32_t i = 0; i < m; i++)
			b -= mu[i] * u[i];
		intercept[j] = b;
	}
	*total = tr;
	return KM_OK;
}

/* ---- the "pca" method (method.h): the transform task's ---- */

typedef struct pca_params
{
	int			dimensions;		/* components asked for */
} pca_params;

KM_STATIC_ASSERT(sizeof(pca_params) <= KM_METHOD_BLOB_SIZE, pca_params);

/* Its METHOD section: the components asked for (the model has min(k, rows)). */
typedef struct pca_fields
{
	uint32_t	dimensions;
} pca_fields;

KM_STATIC_ASSERT(sizeof(pca_fields) <= KM_METHOD_BLOB_SIZE, pca_fields);

static const km_method_option pca_options[] = {
	{{"dimensions", KM_OPTTYPE_INTEGER, 1, KM_APPROX_MAX_COMPONENTS, false, false,
	  "a whole number from 1 to 8192", "2", KM_FN_TRAINING, 0},
	 offsetof(pca_params, dimensions), 2},
};

/* KernelPCA's n_components beyond the rows (or features) keeps them all. */
static uint32_t
pca_outputs(const km_fit_params *p, size_t n)
{
	const pca_params *pp = KM_METHOD_BLOB_CONST(&p->method_params, pca_params);
	size_t		k = pp->dimensions >= 1 ? (size_t) pp->dimensions : 2;

	return (uint32_t) (k < n ? k : n);
}

static km_status
pca_fit_rows(const km_fit_params *p, const double *X, size_t n, int d,
			 const double *norms, double *K, double *work, km_rows_fit *f,
			 km_error *err, km_interrupt_fn interrupt)
{
	return km_kpca_fit(&p->kernel, X, n, d, (int) f->q, norms, K, work, f->coef,
					   f->intercepts, f->values, &f->total, err, interrupt);
}

static km_status
pca_fit_sums(const km_fit_params *p, double *S, const double *s, uint64_t n,
			 uint32_t m, double *work, km_rows_fit *f, km_error *err)
{
	return km_kpca_sums_fit(S, s, n, m, (int) f->q, work, f->coef, f->intercepts,
							f->values, &f->total, err);
}

static void
pca_store_rows(const km_fit_params *p, const km_rows_fit *f, km_model *m)
{
	const pca_params *pp = KM_METHOD_BLOB_CONST(&p->method_params, pca_params);
	pca_fields *pf = KM_METHOD_BLOB(&m->method_data, pca_fields);

	pf->dimensions = (uint32_t) pp->dimensions;
	m->converged = true;
}

static size_t
pca_no_workspace(size_t n)
{
	(void) n;
	return 1;
}

static km_status
pca_no_fit(const km_fit_params *p, const double *X, size_t n, int d,
		   const double *y, double *alpha, double *K, const double *norms,
		   double *work, km_fit_result *res, km_error *err,
		   km_interrupt_fn interrupt)
{
	return km_fail(err, KM_ERR_INVALID, "method \"pca\" takes no target",
				   "Kernel PCA is fitted on rows without a target.");
}

static void
pca_no_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
}

static const km_field pca_model_fields[] = {
	{"dimensions", KM_FIELD_U32, KM_METHOD_FIELD(pca_fields, dimensions), KM_RULE_POSITIVE, 0},
};

const km_method_ops km_pca_ops = {
	.id = KM_METHOD_PCA,
	.name = "pca",
	.task = KM_TASK_TRANSFORM,
	.summary = "finds the top eigenvectors of the centred kernel matrix (scikit-learn's KernelPCA)",
	.own_options = pca_options,
	.n_own_options = sizeof(pca_options) / sizeof(pca_options[0]),
	.params_size = sizeof(pca_params),
	/* no model selection: "cv" is refused (options_check.c) */
	.routes = KM_ROUTE(KM_CV_NONE),
	.default_route = KM_CV_NONE,
	.workspace_doubles = pca_no_workspace,
	.fit = pca_no_fit,
	.store = pca_no_store,
	.fields = pca_model_fields,
	.n_fields = sizeof(pca_model_fields) / sizeof(pca_model_fields[0]),
	.task_default = true,
	.outputs = pca_outputs,
	.rows_workspace_doubles = km_kpca_workspace_doubles,
	.fit_rows = pca_fit_rows,
	.sums_workspace_doubles = km_kpca_sums_workspace_doubles,
	.fit_sums = pca_fit_sums,
	.store_rows = pca_store_rows,
};
