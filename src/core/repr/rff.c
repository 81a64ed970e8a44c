/*
 * rff.c - the random Fourier features representation (repr.h): m features
 * drawn from the seed, z(x) = sqrt(2 / D) cos(W^T x + b), and the penalty
 * lambda I.  Its basis samples the rows (the scaler's sums), then draws W
 * and b; its model keeps them (its RFF section) and no row.  Only the rbf
 * kernel has a random-feature map here.  The basis pass, the solve and GCV
 * it shares with nystrom are in approx.c and basis.c.
 * Core: no PostgreSQL header.
 */
#define _DEFAULT_SOURCE			/* erand48 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

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
rff_features_doubles(uint32_t d, uint32_t m, size_t rows)
{
	return 1;
}

static int
rff_steps(int centres, km_basis_step *steps)
{
	steps[0] = KM_BASIS_SAMPLE;
	steps[1] = KM_BASIS_DRAW;
	return 2;
}

/* W and b, not rows: its model keeps none */
static uint64_t
rff_kept_doubles(uint64_t n_train, uint64_t d)
{
	return 0;
}

static km_repr_memory
rff_memory(double n, uint32_t components)
{
	km_repr_memory plan = {0.0, components};

	return plan;
}

const km_repr_ops km_repr_rff = {
	.id = 2, .name = "rff", .described = "rff (random features)",
	.approximate = true, .kernels = UINT32_C(1) << KM_KERNEL_RBF, .drawn = true,
	.features = rff_features, .features_doubles = rff_features_doubles,
	.basis_steps = rff_steps, .kept_doubles = rff_kept_doubles,
	.memory = rff_memory,
};
