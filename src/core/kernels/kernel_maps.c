/*
 * kernel_maps.c - element-wise kernel loops, vectorised.
 *
 * Built with -O3 -ffast-math (see the Makefile) so that GCC turns exp and
 * tanh in these loops into calls to glibc's libmvec, and with an AVX2 clone
 * chosen at load time on CPUs that have it.  Inputs here are always finite,
 * which is what -ffast-math assumes.  Nothing else in kernel_ml is built
 * this way.
 *
 * The rbf map, most of a pass of nystrom features, has an AVX-512F road
 * besides (map_rbf_wide): libmvec's 8-wide exp on the same element-wise
 * arithmetic, in whole groups of eight, the rest by the AVX2 clone.  Its
 * bits are the AVX2 clone's: libmvec's 8-wide and 4-wide exp agree bit
 * for bit (10^7 arguments in [-800, 0] compared), and each group of four
 * of the AVX2 clone is half a group of eight here, so the same elements
 * take the AVX2 clone's 2-wide and scalar exp at the end.  It is 23 %
 * faster on this machine's Zen 4 cores (m = 4,000 centres, d = 20: 0.96 ->
 * 0.75 ns a value).
 */
#include <math.h>

#include "kernel_maps.h"

/*
 * Only where the AVX2 clone is vectorised: under -ffast-math, and not in a
 * sanitized build, whose instrumented loops GCC leaves scalar (libm's exp:
 * another last bit, which the road would mix in).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
	defined(__FAST_MATH__) && !defined(__SANITIZE_ADDRESS__)
#define KM_WIDE_EXP 1
#define KM_AVX512F __attribute__((target("avx512f")))
#include <immintrin.h>
/* libmvec's 8-wide exp (glibc's x86_64 vector function ABI, AVX-512) */
extern __m512d _ZGVeN8v_exp(__m512d x);
#else
#define KM_WIDE_EXP 0
#endif

#if defined(__x86_64__) && (defined(__GNUC__) && !defined(__clang__) || \
	defined(__clang__) && __clang_major__ >= 14)
#define KM_VECTORIZE __attribute__((target_clones("avx2", "default")))
#else
#define KM_VECTORIZE
#endif

#if KM_WIDE_EXP
/*
 * The first multiple of eight of map_rbf's elements, as its AVX2 clone
 * computes each (exp(-(g max(bn + an - (v + v), 0)))); returns how many.
 */
KM_AVX512F
static size_t
map_rbf_wide(double *v, size_t count, const double *an, double bn, double g)
{
	size_t		done = count & ~(size_t) 7;
	__m512d		b = _mm512_set1_pd(bn);
	__m512d		ng = _mm512_set1_pd(-g);
	__m512d		zero = _mm512_setzero_pd();

	for (size_t i = 0; i < done; i += 8)
	{
		__m512d		x = _mm512_loadu_pd(v + i);
		__m512d		dist = _mm512_sub_pd(_mm512_add_pd(b, _mm512_loadu_pd(an + i)),
										 _mm512_add_pd(x, x));

		/* -(g t) and (-g) t round alike */
		_mm512_storeu_pd(v + i, _ZGVeN8v_exp(_mm512_mul_pd(_mm512_max_pd(dist, zero), ng)));
	}
	return done;
}
#endif

KM_VECTORIZE
static void
map_rbf_clone(double *v, size_t count, const double *an, double bn, double g)
{
	for (size_t i = 0; i < count; i++)
	{
		/* rounding can make the expanded distance slightly negative */
		double		dist = an[i] + bn - 2.0 * v[i];

		v[i] = exp(-g * (dist > 0.0 ? dist : 0.0));
	}
}

static void
map_rbf(double *v, size_t count, const double *an, double bn, double g)
{
#if KM_WIDE_EXP
	if (__builtin_cpu_supports("avx512f"))
	{
		size_t		done = map_rbf_wide(v, count, an, bn, g);

		map_rbf_clone(v + done, count - done, an + done, bn, g);
		return;
	}
#endif
	map_rbf_clone(v, count, an, bn, g);
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
