/*
 * approx.c - approximate kernel models: names, random Fourier features
 * (approx.h).  Core: no PostgreSQL header.
 */
#define _DEFAULT_SOURCE			/* erand48 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "approx.h"

const char *
km_approx_name(km_approx a)
{
	switch (a)
	{
		case KM_APPROX_EXACT:
			return "exact";
		case KM_APPROX_NYSTROM:
			return "nystrom";
		case KM_APPROX_RFF:
			return "rff";
	}
	return "unknown";
}

bool
km_approx_from_name(const char *name, km_approx *a)
{
	for (int i = KM_APPROX_FIRST; i <= KM_APPROX_LAST; i++)
	{
		if (strcmp(name, km_approx_name((km_approx) i)) == 0)
		{
			*a = (km_approx) i;
			return true;
		}
	}
	return false;
}

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
	}
	for (uint32_t j = 0; j < D; j++)
		b[j] = 2.0 * M_PI * erand48(xsubi);
}

void
km_rff_map(const double *W, const double *b, uint32_t d, uint32_t D,
		   const double *X, size_t rows, double *Z)
{
	double		s = sqrt(2.0 / D);
	size_t		count = rows * D;

	for (size_t i = 0; i < rows; i++)
		memcpy(Z + i * D, b, D * sizeof(double));
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) rows, (int) D,
				(int) d, 1.0, X, (int) d, W, (int) D, 1.0, Z, (int) D);
	for (size_t i = 0; i < count; i++)
		Z[i] = s * cos(Z[i]);
}
