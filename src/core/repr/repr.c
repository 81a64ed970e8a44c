/*
 * repr.c - the representation registry: exact, nystrom and rff (repr.h),
 * with the feature map of each.  Core: no PostgreSQL header.
 */
#define _DEFAULT_SOURCE			/* erand48 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "centres.h"
#include "kernel_maps.h"
#include "repr.h"

/* erand48's 48-bit state from a 64-bit seed (its low 48 bits, mixed). */
static void
seed_state(uint64_t seed, unsigned short xsubi[3])
{
	/* splitmix64's finaliser, so that nearby seeds give unrelated streams */
	uint64_t	z = seed + UINT64_C(0x9E3779B97F4A7C15);

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	z ^= z >> 31;
	xsubi[0] = (unsigned short) (z & 0xFFFF);
	xsubi[1] = (unsigned short) ((z >> 16) & 0xFFFF);
	xsubi[2] = (unsigned short) ((z >> 32) & 0xFFFF);
}

void
km_rff_draw(double gamma, uint64_t seed, uint32_t d, uint32_t D,
			double *W, double *b)
{
	km_rff_draw_interruptible(gamma, seed, d, D, W, b, NULL);
}

/* Entries of W between two interrupt checks (even: Box-Muller's pairs). */
#define DRAW_PIECE ((size_t) 1 << 20)

void
km_rff_draw_interruptible(double gamma, uint64_t seed, uint32_t d, uint32_t D,
						  double *W, double *b, km_interrupt_fn interrupt)
{
	unsigned short xsubi[3];
	double		sd = sqrt(2.0 * gamma);
	size_t		count = (size_t) d * D;

	seed_state(seed, xsubi);
	/* Box-Muller: two uniforms give two independent normals */
	for (size_t i = 0; i < count; i += 2)
	{
		double		u1 = 1.0 - erand48(xsubi);	/* (0, 1] */
		double		u2 = erand48(xsubi);
		double		r = sqrt(-2.0 * log(u1));

		W[i] = sd * r * cos(2.0 * M_PI * u2);
		if (i + 1 < count)
			W[i + 1] = sd * r * sin(2.0 * M_PI * u2);
		if ((i + 2) % DRAW_PIECE == 0)
			km_check_interrupts(interrupt);
	}
	for (uint32_t j = 0; j < D; j++)
		b[j] = 2.0 * M_PI * erand48(xsubi);
}

void
km_rff_map(const double *W, const double *b, uint32_t d, uint32_t D,
		   const double *X, size_t rows, double *Z)
{
	for (size_t i = 0; i < rows; i++)
		memcpy(Z + i * D, b, D * sizeof(double));
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) rows, (int) D,
				(int) d, 1.0, X, (int) d, W, (int) D, 1.0, Z, (int) D);
	/* the vectorised map assumes finite input (-ffast-math) */
	if (km_all_finite(Z, rows * D))
		km_map_cos(Z, rows * D, sqrt(2.0 / D));
}

static bool
rff_features(const km_feature_map *f, const double *X, size_t rows,
			 double *Z, double *work)
{
	km_rff_map(f->W, f->b, f->d, f->m, X, rows, Z);
	return false;
}

static size_t
one_double(uint32_t d, uint32_t m, size_t rows)
{
	return 1;
}

/*
 * Nystrom: K(x_i, c_j) by one GEMM and the kernel's element-wise map.
 * Work: the rows' norms (rows), the centres' norms (m) and the centres
 * transposed (d x m, laplacian and min).
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
exact_steps(int centres, km_basis_step *steps)
{
	steps[0] = KM_BASIS_GATHER;
	return 1;
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

static int
rff_steps(int centres, km_basis_step *steps)
{
	steps[0] = KM_BASIS_SAMPLE;
	steps[1] = KM_BASIS_DRAW;
	return 2;
}

#define ALL_KERNELS UINT32_C(0xFFFFFFFF)

/* Indexed by id: km_approx's values (approx.h), stored in models. */
static const km_repr_ops reprs[] = {
	{.id = 0, .name = "exact", .described = "exact (every row)", .approximate = false, .kernels = ALL_KERNELS,
	 .keeps_rows = true, .basis_steps = exact_steps},
	{.id = 1, .name = "nystrom", .described = "nystrom (centres)", .approximate = true, .kernels = ALL_KERNELS,
		.centres = true, .keeps_rows = true,
		.features = nystrom_features, .features_doubles = nystrom_features_doubles,
	.basis_steps = nystrom_steps},
	{.id = 2, .name = "rff", .described = "rff (random features)", .approximate = true,
		.kernels = UINT32_C(1) << KM_KERNEL_RBF, .drawn = true,
	.features = rff_features, .features_doubles = one_double, .basis_steps = rff_steps},
};

#define N_REPRS ((int) (sizeof(reprs) / sizeof(reprs[0])))

const km_repr_ops *
km_repr_get(long long id)
{
	return id >= 0 && id < N_REPRS ? &reprs[id] : NULL;
}

const km_repr_ops *
km_repr_lookup(long long id)
{
	const km_repr_ops *r = km_repr_get(id);

	return r ? r : km_repr_default();
}

const km_repr_ops *
km_repr_by_name(const char *name)
{
	for (int i = 0; i < N_REPRS; i++)
		if (strcmp(name, reprs[i].name) == 0)
			return &reprs[i];
	return NULL;
}

const km_repr_ops *
km_repr_by_option(const char *name)
{
	const km_repr_ops *r = km_repr_by_name(name);

	return r != NULL && r->approximate ? r : NULL;
}

int
km_repr_option_names(const char **names, int max)
{
	int			n = 0;

	for (int i = 0; i < N_REPRS && n < max; i++)
		if (reprs[i].approximate)
			names[n++] = reprs[i].name;
	return n;
}

const km_repr_ops *
km_repr_default(void)
{
	return &reprs[0];
}

int
km_repr_basis_steps(const km_repr_ops *r, int centres, km_basis_step steps[KM_BASIS_MAX_STEPS])
{
	return r->basis_steps(centres, steps);
}

uint32_t
km_repr_basis_components(const km_repr_ops *r, uint32_t asked, size_t n)
{
	return r->centres && (size_t) asked > n ? (uint32_t) n : asked;
}

uint64_t
km_repr_kept_doubles(const km_repr_ops *r, uint64_t n_train, uint64_t d)
{
	return r->keeps_rows ? n_train * d : 0;
}

bool
km_repr_serves(const km_repr_ops *r, int kernel_type)
{
	return kernel_type >= 0 && kernel_type < 32 &&
		(r->kernels & (UINT32_C(1) << kernel_type)) != 0;
}

km_repr_memory
km_repr_memory_plan(const km_repr_ops *r, double n, uint32_t components)
{
	km_repr_memory plan = {0.0, 0};

	if (r->approximate)
		plan.components = components;
	else
		plan.rows_squared = n * n;
	return plan;
}

bool
km_repr_basis_takes(const km_repr_ops *r, int centres, km_basis_step s)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(r, centres, steps);

	for (int i = 0; i < n; i++)
		if (steps[i] == s)
			return true;
	return false;
}

/* err's message, detail and hint (an invalid options object): false. */
static bool
option_fail(km_error *err, const char *hint, const char *message,
			const char *detailfmt,...)
__attribute__((format(printf, 4, 5)));

static bool
option_fail(km_error *err, const char *hint, const char *message,
			const char *detailfmt,...)
{
	va_list		ap;

	err->status = KM_ERR_INVALID;
	snprintf(err->message, sizeof(err->message), "%s", message);
	va_start(ap, detailfmt);
	vsnprintf(err->detail, sizeof(err->detail), detailfmt, ap);
	va_end(ap);
	snprintf(err->hint, sizeof(err->hint), "%s", hint);
	return false;
}

bool
km_repr_check_components(const km_repr_ops *r, bool given, int components, km_error *err)
{
	if (!given || r->approximate)
		return true;
	return option_fail(err, "Add \"approximation\": \"nystrom\" or \"rff\", or remove the option.",
					   "option \"components\" applies only to approximate models",
					   "Option \"components\" is %d but no \"approximation\" is given; exact models use every row.",
					   components);
}

bool
km_repr_check_cg(const km_repr_ops *r, km_error *err)
{
	if (r->centres)
		return true;
	return option_fail(err, "Add \"approximation\": \"nystrom\", or remove \"solver\".",
					   "solver \"cg\" applies only to nystrom models",
					   "Solver \"cg\" is preconditioned by the kernel matrix of the nystrom centres; the model is %s.",
					   r->described);
}

bool
km_repr_check_exact_bias(const km_repr_ops *r, const char *method, km_error *err)
{
	char		message[128];

	if (r->approximate)
		return true;
	snprintf(message, sizeof(message),
			 "option \"fit_intercept\" false does not apply to exact method \"%s\"",
			 method);
	return option_fail(err, "Remove \"fit_intercept\", or add \"approximation\": \"nystrom\" or \"rff\", whose primal fit honours it (b = 0).",
					   message, "Exact method \"%s\" solves libsvm's dual, whose equality constraint always fits the bias b; option \"fit_intercept\" is false.",
					   method);
}

km_status
km_repr_check_cg_point(long long id, km_error *err)
{
	const km_repr_ops *r = km_repr_get(id);

	if (r != NULL && r->centres)
		return KM_OK;
	return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
				   "A conjugate gradient pass needs a nystrom basis; the point's is %s.",
				   r != NULL ? r->name : "unknown");
}

bool
km_repr_scores_sums(const km_repr_ops *r, bool sums, int n_lambdas)
{
	return r->approximate && sums && n_lambdas > 1;
}
