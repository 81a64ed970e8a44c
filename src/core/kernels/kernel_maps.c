/*
 * kernel_maps.c - element-wise kernel loops, vectorised.
 *
 * Built with -O3 -ffast-math (see the Makefile) so that GCC turns exp and
 * tanh in these loops into calls to glibc's libmvec, and with an AVX2 clone
 * chosen at load time on CPUs that have it.  Inputs here are always finite,
 * which is what -ffast-math assumes.  Nothing else in kernel_ml is built
 * this way.
 */
#include <math.h>

#include "kernel_maps.h"

#if defined(__x86_64__) && (defined(__GNUC__) && !defined(__clang__) || \
	defined(__clang__) && __clang_major__ >= 14)
#define KM_VECTORIZE __attribute__((target_clones("avx2", "default")))
#else
#define KM_VECTORIZE
#endif

KM_VECTORIZE
static void
map_rbf(double *v, size_t count, const double *an, double bn, double g)
{
	for (size_t i = 0; i < count; i++)
	{
		/* rounding can make the expanded distance slightly negative */
		double		dist = an[i] + bn - 2.0 * v[i];

		v[i] = exp(-g * (dist > 0.0 ? dist : 0.0));
	}
}

KM_VECTORIZE
static double
dot_rbf(const double *v, size_t count, const double *an, double bn, double g,
		const double *w)
{
	double		s = 0.0;

	for (size_t i = 0; i < count; i++)
	{
		double		dist = an[i] + bn - 2.0 * v[i];

		s += w[i] * exp(-g * (dist > 0.0 ? dist : 0.0));
	}
	return s;
}

KM_VECTORIZE
static void
map_sigmoid(double *v, size_t count, double g, double c)
{
	for (size_t i = 0; i < count; i++)
		v[i] = tanh(g * v[i] + c);
}

KM_VECTORIZE
static void
map_poly(double *v, size_t count, double g, double c, int degree)
{
	for (size_t i = 0; i < count; i++)
		v[i] = km_ipow(g * v[i] + c, degree);
}

KM_VECTORIZE
static void
map_polysum(double *v, size_t count, int degree)
{
	for (size_t i = 0; i < count; i++)
		v[i] = km_polysum(v[i], degree);
}

KM_VECTORIZE
static void
map_cosine(double *v, size_t count, const double *an, double bn)
{
	for (size_t i = 0; i < count; i++)
		v[i] = (an[i] == 0.0 || bn == 0.0) ? 0.0 : v[i] / (an[i] * bn);
}

void
km_map_inner(const km_kernel *k, double *v, size_t count, const double *an,
			 double bn)
{
	switch (k->type)
	{
		case KM_KERNEL_LINEAR:
			break;
		case KM_KERNEL_POLY:
			map_poly(v, count, k->gamma, k->coef0, k->degree);
			break;
		case KM_KERNEL_RBF:
			map_rbf(v, count, an, bn, k->gamma);
			break;
		case KM_KERNEL_SIGMOID:
			map_sigmoid(v, count, k->gamma, k->coef0);
			break;
		case KM_KERNEL_COSINE:
			map_cosine(v, count, an, bn);
			break;
		case KM_KERNEL_POLYSUM:
			map_polysum(v, count, k->degree);
			break;
		case KM_KERNEL_LAPLACIAN:
		case KM_KERNEL_MIN:
			break;				/* not inner-product kernels */
	}
}

KM_VECTORIZE
static double
plain_dot(const double *v, size_t count, const double *w)
{
	double		s = 0.0;

	for (size_t i = 0; i < count; i++)
		s += w[i] * v[i];
	return s;
}

double
km_map_inner_dot(const km_kernel *k, double *v, size_t count,
				 const double *an, double bn, const double *w)
{
	if (k->type == KM_KERNEL_RBF)
		return dot_rbf(v, count, an, bn, k->gamma, w);
	/* the other maps are cheap beside the DGEMV: map in place, then dot */
	km_map_inner(k, v, count, an, bn);
	return plain_dot(v, count, w);
}

KM_VECTORIZE
void
km_accumulate_l1(double *acc, const double *col, double c, size_t count)
{
	for (size_t i = 0; i < count; i++)
		acc[i] += fabs(col[i] - c);
}

KM_VECTORIZE
void
km_accumulate_min(double *acc, const double *col, double c, size_t count)
{
	for (size_t i = 0; i < count; i++)
		acc[i] += fmin(col[i], c);
}

KM_VECTORIZE
double
km_exp_dot(const double *v, size_t count, double g, const double *w)
{
	double		s = 0.0;

	for (size_t i = 0; i < count; i++)
		s += w[i] * exp(-g * v[i]);
	return s;
}

KM_VECTORIZE
void
km_map_exp(double *v, size_t count, double g)
{
	for (size_t i = 0; i < count; i++)
		v[i] = exp(-g * v[i]);
}

KM_VECTORIZE
void
km_map_cos(double *v, size_t count, double s)
{
	for (size_t i = 0; i < count; i++)
		v[i] = s * cos(v[i]);
}

KM_VECTORIZE
void
km_rbf_preset(double *z, size_t count, const double *an, double bn, double g)
{
	for (size_t i = 0; i < count; i++)
		z[i] = -g * (an[i] + bn);
}

KM_VECTORIZE
double
km_rbf_exp_dot(const double *z, size_t count, const double *w)
{
	double		s = 0.0;

	for (size_t i = 0; i < count; i++)
		s += w[i] * exp(z[i] < 0.0 ? z[i] : 0.0);
	return s;
}
