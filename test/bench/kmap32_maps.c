/*
 * kmap32_maps.c - the float32 rbf maps that test/bench/kmap32.c weighs
 * against src/core/kernel_maps.c's float64 one (issue 31).  Built as
 * kernel_maps.c is (-O3 -ffast-math, an AVX2 clone) so that expf runs
 * through libmvec's 8-wide vector variant (_ZGVdN8v_expf) as exp runs
 * through its 4-wide one.  Outputs are widened to double: the sums that
 * follow (Z'Z, Z'(Z v)) stay float64.
 */
#include <math.h>
#include <stddef.h>

#include "kmap32_maps.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KM_VECTORIZE __attribute__((target_clones("avx2", "default")))
#else
#define KM_VECTORIZE
#endif

/* v[i] := exp(-g max(an[i] + bn - 2 v[i], 0)), the exponent rounded to float and expf */
KM_VECTORIZE
void
kmap32_rbf_expf(double *v, size_t count, const double *an, double bn, double g)
{
	for (size_t i = 0; i < count; i++)
	{
		double		dist = an[i] + bn - 2.0 * v[i];
		float		t = (float) (-g * (dist > 0.0 ? dist : 0.0));

		v[i] = (double) expf(t);
	}
}

/* out[i] := exp(-g max(an[i] + bn - 2 s[i], 0)) all in float (s from SGEMM), widened */
KM_VECTORIZE
void
kmap32_rbf_float(const float *s, double *out, size_t count, const float *an,
				 float bn, float g)
{
	for (size_t i = 0; i < count; i++)
	{
		float		dist = an[i] + bn - 2.0f * s[i];

		out[i] = (double) expf(-g * (dist > 0.0f ? dist : 0.0f));
	}
}

/* the same kept in float (for an SGEMV) */
KM_VECTORIZE
void
kmap32_rbf_float_inplace(float *s, size_t count, const float *an, float bn, float g)
{
	for (size_t i = 0; i < count; i++)
	{
		float		dist = an[i] + bn - 2.0f * s[i];

		s[i] = expf(-g * (dist > 0.0f ? dist : 0.0f));
	}
}

/* dst[i] := (float) src[i] */
KM_VECTORIZE
void
kmap32_narrow(float *dst, const double *src, size_t count)
{
	for (size_t i = 0; i < count; i++)
		dst[i] = (float) src[i];
}
