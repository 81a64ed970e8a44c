/*
 * kernels.c - kernel functions, Gram matrices and kernel rows.
 *
 * Inner-product kernels (linear, poly, rbf, sigmoid, cosine, polysum) get
 * their inner products from BLAS (DGEMM for a Gram panel, DGEMV for a row)
 * and then apply an element-wise map; rbf and cosine reuse per-row norms.
 * laplacian and min are not functions of inner products and are computed
 * pair by pair.
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "kernel_maps.h"
#include "kernels.h"

static const struct
{
	const char *name;
	km_kernel_type type;
	unsigned	params;
}			kernel_table[] =
{
	{"linear", KM_KERNEL_LINEAR, 0},
	{"poly", KM_KERNEL_POLY, KM_PARAM_GAMMA | KM_PARAM_DEGREE | KM_PARAM_COEF0},
	{"rbf", KM_KERNEL_RBF, KM_PARAM_GAMMA},
	{"laplacian", KM_KERNEL_LAPLACIAN, KM_PARAM_GAMMA},
	{"sigmoid", KM_KERNEL_SIGMOID, KM_PARAM_GAMMA | KM_PARAM_COEF0},
	{"cosine", KM_KERNEL_COSINE, 0},
	{"min", KM_KERNEL_MIN, 0},
	{"polysum", KM_KERNEL_POLYSUM, KM_PARAM_DEGREE},
};

#define N_KERNELS (sizeof(kernel_table) / sizeof(kernel_table[0]))

const char *
km_kernel_name(km_kernel_type type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (kernel_table[i].type == type)
			return kernel_table[i].name;
	return "unknown";
}

bool
km_kernel_from_name(const char *name, km_kernel_type *type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (strcmp(kernel_table[i].name, name) == 0)
		{
			*type = kernel_table[i].type;
			return true;
		}
	return false;
}

unsigned
km_kernel_params(km_kernel_type type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (kernel_table[i].type == type)
			return kernel_table[i].params;
	return 0;
}

bool
km_kernel_uses_norms(km_kernel_type type)
{
	return type == KM_KERNEL_RBF || type == KM_KERNEL_COSINE;
}

static inline bool
is_inner_product_kernel(km_kernel_type type)
{
	return type != KM_KERNEL_LAPLACIAN && type != KM_KERNEL_MIN;
}

static inline double
dot(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += x[i] * z[i];
	return s;
}

static inline double
l1_distance(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += fabs(x[i] - z[i]);
	return s;
}

static inline double
min_sum(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += fmin(x[i], z[i]);
	return s;
}

double
km_vector_norm(const km_kernel *k, const double *x, int d)
{
	double		sq = dot(x, x, d);

	return k->type == KM_KERNEL_COSINE ? sqrt(sq) : sq;
}

void
km_row_norms(const km_kernel *k, const double *X, size_t n, int d,
			 double *norms)
{
	if (!km_kernel_uses_norms(k->type))
		return;
	for (size_t i = 0; i < n; i++)
		norms[i] = km_vector_norm(k, X + i * (size_t) d, d);
}

double
km_kernel_eval(const km_kernel *k, const double *x, const double *z, int d)
{
	switch (k->type)
	{
		case KM_KERNEL_LINEAR:
			return dot(x, z, d);
		case KM_KERNEL_POLY:
			return km_ipow(k->gamma * dot(x, z, d) + k->coef0, k->degree);
		case KM_KERNEL_RBF:
			{
				double		s = 0.0;

				for (int i = 0; i < d; i++)
					s += (x[i] - z[i]) * (x[i] - z[i]);
				return exp(-k->gamma * s);
			}
		case KM_KERNEL_LAPLACIAN:
			return exp(-k->gamma * l1_distance(x, z, d));
		case KM_KERNEL_SIGMOID:
			return tanh(k->gamma * dot(x, z, d) + k->coef0);
		case KM_KERNEL_COSINE:
			{
				double		nx = sqrt(dot(x, x, d));
				double		nz = sqrt(dot(z, z, d));

				/* scikit-learn's normalize() leaves zero vectors at zero */
				if (nx == 0.0 || nz == 0.0)
					return 0.0;
				return dot(x, z, d) / (nx * nz);
			}
		case KM_KERNEL_MIN:
			return min_sum(x, z, d);
		case KM_KERNEL_POLYSUM:
			return km_polysum(dot(x, z, d), k->degree);
	}
	return NAN;
}

/* v[i] = K(a_i, b) for the count rows a_i of A, pair by pair. */
static void
pairwise_direct(const km_kernel *k, const double *A, size_t count, int d,
				const double *b, double *v)
{
	for (size_t i = 0; i < count; i++)
	{
		const double *a = A + i * (size_t) d;

		if (k->type == KM_KERNEL_LAPLACIAN)
			v[i] = exp(-k->gamma * l1_distance(a, b, d));
		else
			v[i] = min_sum(a, b, d);
	}
}

/* Multiply-adds one Gram panel may take: about 0.1 s on one core. */
#define KM_GRAM_PANEL_WORK 5e8

size_t
km_gram_panel_width(size_t n, int d)
{
	double		w = KM_GRAM_PANEL_WORK / ((double) n * (double) (d > 0 ? d : 1));

	if (w >= KM_GRAM_PANEL)
		return KM_GRAM_PANEL;
	return w < 1.0 ? 1 : (size_t) w;
}

void
km_gram_lower(const km_kernel *k, const double *X, size_t n, int d,
			  const double *norms, double *K, size_t ld,
			  km_interrupt_fn interrupt)
{
	bool		inner = is_inner_product_kernel(k->type);
	size_t		width = km_gram_panel_width(n, d);

	for (size_t j0 = 0; j0 < n; j0 += width)
	{
		size_t		jb = n - j0 < width ? n - j0 : width;
		const double *Xj = X + j0 * (size_t) d;

		/*
		 * Panel K[j0:n, j0:j0+jb] = X[j0:n] X[j0:j0+jb]^T.  X is row-major
		 * n x d, i.e. column-major d x n, hence the transposes.
		 */
		if (inner)
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans,
						(int) (n - j0), (int) jb, d, 1.0, Xj, d, Xj, d,
						0.0, K + j0 + j0 * ld, (int) ld);

		for (size_t j = j0; j < j0 + jb; j++)
		{
			double	   *col = K + j + j * ld;	/* rows j..n-1 of column j */
			const double *xj = X + j * (size_t) d;

			if (inner)
			{
				km_map_inner(k, col, n - j, norms ? norms + j : NULL,
							 norms ? norms[j] : 0.0);
				/* the distance of a row to itself is exactly 0 */
				if (k->type == KM_KERNEL_RBF)
					col[0] = 1.0;
			}
			else
				pairwise_direct(k, xj, n - j, d, xj, col);
		}
		km_check_interrupts(interrupt);
	}
}

void
km_symmetrize(double *K, size_t n, size_t ld)
{
	for (size_t j = 0; j < n; j++)
		for (size_t i = j + 1; i < n; i++)
			K[j + i * ld] = K[i + j * ld];
}

void
km_transpose(const double *X, size_t n, int d, double *Xt)
{
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			Xt[(size_t) j * n + i] = X[i * (size_t) d + j];
}

double
km_kernel_row_dot(const km_kernel *k, const double *Xt, size_t n, int d,
				  const double *norms, const double *x, double xnorm,
				  const double *w, double *work)
{
	if (is_inner_product_kernel(k->type))
	{
		/* work = X x: Xt is d x n row-major, so this is X^T-free DGEMV */
		cblas_dgemv(CblasRowMajor, CblasTrans, d, (int) n, 1.0, Xt, (int) n,
					x, 1, 0.0, work, 1);
		return km_map_inner_dot(k, work, n, norms, xnorm, w);
	}

	/* laplacian and min: one vectorised pass over the rows per feature */
	for (size_t i = 0; i < n; i++)
		work[i] = 0.0;
	for (int j = 0; j < d; j++)
	{
		if (k->type == KM_KERNEL_LAPLACIAN)
			km_accumulate_l1(work, Xt + (size_t) j * n, x[j], n);
		else
			km_accumulate_min(work, Xt + (size_t) j * n, x[j], n);
	}
	if (k->type == KM_KERNEL_LAPLACIAN)
		return km_exp_dot(work, n, k->gamma, w);
	return cblas_ddot((int) n, w, 1, work, 1);
}
