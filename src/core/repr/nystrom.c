/*
 * nystrom.c - the Nystrom representation (repr.h): m centres, rows of the
 * table kept by its basis pass, z(x) = (K(c_1, x), ..., K(c_m, x)) and the
 * penalty lambda K_mm.  Its basis samples the rows (the reservoir of the
 * smallest hashes), then takes the refine pass option "centers" asks
 * (centres.h); its model keeps the centres (m x d).  The basis pass, the
 * solve and GCV it shares with rff are in approx.c and basis.c.
 * Core: no PostgreSQL header.
 */
#include "centres.h"
#include "kernel_maps.h"
#include "repr.h"

/*
 * K(x_i, c_j) by one GEMM and the kernel's element-wise map.  Work: the
 * rows' norms (rows), the centres' norms (m) and the centres transposed
 * (d x m, laplacian and min).
 */
static bool
nystrom_features(const km_feature_map *f, const double *X, size_t rows,
				 double *Z, double *work)
{
	size_t		m = f->m;
	int			d = (int) f->d;
	double	   *xnorms = work;
	double	   *cnorms = xnorms + rows;
	double	   *Ct = cnorms + m;
	bool		norms = km_kernel_uses_norms(f->kernel.type);

	km_row_norms(&f->kernel, X, rows, d, xnorms);
	km_row_norms(&f->kernel, f->centres, m, d, cnorms);
	if (f->kernel.type == KM_KERNEL_LAPLACIAN || f->kernel.type == KM_KERNEL_MIN)
		km_transpose(f->centres, m, d, Ct);
	return km_gram_cross(&f->kernel, X, rows, norms ? xnorms : NULL,
						 f->centres, Ct, m, d, norms ? cnorms : NULL, Z);
}

static size_t
nystrom_features_doubles(uint32_t d32, uint32_t m32, size_t rows)
{
	size_t		m = m32;
	size_t		d = d32;

	if (d != 0 && m > SIZE_MAX / 8 / d)
		return 0;
	if (rows > SIZE_MAX / 8 - m - m * d)
		return 0;
	return rows + m + m * d;
}

static int
nystrom_steps(int centres, km_basis_step *steps)
{
	int			n = 0;

	steps[n++] = KM_BASIS_SAMPLE;
	if (centres == KM_CENTRES_KMEANS)
		steps[n++] = KM_BASIS_KMEANS;
	else if (centres == KM_CENTRES_LEVERAGE)
		steps[n++] = KM_BASIS_LEVERAGE;
	return n;
}

/* the centres: n_train of them, d features each */
static uint64_t
nystrom_kept_doubles(uint64_t n_train, uint64_t d)
{
	return n_train * d;
}

static km_repr_memory
nystrom_memory(double n, uint32_t components)
{
	km_repr_memory plan = {0.0, components};

	return plan;
}

const km_repr_ops km_repr_nystrom = {
	.id = 1, .name = "nystrom", .described = "nystrom (centres)",
	.approximate = true, .kernels = KM_REPR_ALL_KERNELS, .centres = true, .keeps_rows = true,
	.features = nystrom_features, .features_doubles = nystrom_features_doubles,
	.basis_steps = nystrom_steps, .kept_doubles = nystrom_kept_doubles,
	.memory = nystrom_memory,
};
