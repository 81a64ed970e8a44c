/*
 * kernel_maps.h - the element-wise loops of the kernels (core, no
 * PostgreSQL headers).  kernel_maps.c is compiled with -O3 -ffast-math and
 * AVX2 clones so that exp and tanh run through glibc's vector math library.
 */
#ifndef KM_KERNEL_MAPS_H
#define KM_KERNEL_MAPS_H

#include "kernel_types.h"

/* b^e for a small non-negative integer e, by squaring. */
static inline double
km_ipow(double b, int e)
{
	double		r = 1.0;

	while (e > 0)
	{
		if (e & 1)
			r *= b;
		b *= b;
		e >>= 1;
	}
	return r;
}

/* sum_{k=0..degree} t^k by Horner's rule. */
static inline double
km_polysum(double t, int degree)
{
	double		s = 1.0;

	for (int k = 0; k < degree; k++)
		s = s * t + 1.0;
	return s;
}

/*
 * v[i] := K from the inner product v[i] = <a_i, b>, given the norm
 * quantity of each a_i (an, NULL if the kernel uses none) and of b (bn).
 */
void		km_map_inner(const km_kernel *k, double *v, size_t count,
						 const double *an, double bn);

/* sum_i w[i] * (v[i] mapped as km_map_inner would); v is scratch. */
double		km_map_inner_dot(const km_kernel *k, double *v, size_t count,
							 const double *an, double bn, const double *w);

/* acc[i] += |col[i] - c| (laplacian) or min(col[i], c) (min). */
void		km_accumulate_l1(double *acc, const double *col, double c, size_t count);
void		km_accumulate_min(double *acc, const double *col, double c, size_t count);

/* v[i] := exp(-g * v[i]) (laplacian from l1 distances) */
void		km_map_exp(double *v, size_t count, double g);

/* v[i] := s * cos(v[i]) (random Fourier features) */
void		km_map_cos(double *v, size_t count, double s);

/* sum_i w[i] * exp(-g * v[i]) */
double		km_exp_dot(const double *v, size_t count, double g, const double *w);

/*
 * The rbf block of km_scorer_block: km_rbf_preset sets z[i] := -g (an[i] +
 * bn), the part of -g ||a_i - b||^2 a GEMM of alpha 2g and beta 1 then
 * completes with 2g <a_i, b> (and no zeroing pass); km_rbf_exp_dot gives
 * sum_i w[i] exp(min(z[i], 0)), the clamp of a distance rounded below 0.
 */
void		km_rbf_preset(double *z, size_t count, const double *an, double bn, double g);
double		km_rbf_exp_dot(const double *z, size_t count, const double *w);

#endif							/* KM_KERNEL_MAPS_H */
