/* kmap32_maps.h - float32 rbf maps for test/bench/kmap32.c (kmap32_maps.c). */
#ifndef KMAP32_MAPS_H
#define KMAP32_MAPS_H

#include <stddef.h>

void		kmap32_rbf_expf(double *v, size_t count, const double *an, double bn, double g);
void		kmap32_rbf_float(const float *s, double *out, size_t count, const float *an,
							 float bn, float g);
void		kmap32_rbf_float_inplace(float *s, size_t count, const float *an, float bn,
									 float g);
void		kmap32_narrow(float *dst, const double *src, size_t count);

#endif							/* KMAP32_MAPS_H */
