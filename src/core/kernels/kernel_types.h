/*
 * kernel_types.h - what a kernel is (its type and parameters), apart from
 * what computes with it (kernels.h), so that the element-wise loops
 * (kernel_maps.h) take a kernel without importing the Gram code that calls
 * them (core, no PostgreSQL headers).
 */
#ifndef KM_KERNEL_TYPES_H
#define KM_KERNEL_TYPES_H

#include <stddef.h>

typedef enum km_kernel_type
{
	KM_KERNEL_LINEAR = 1,
	KM_KERNEL_POLY = 2,
	KM_KERNEL_RBF = 3,
	KM_KERNEL_LAPLACIAN = 4,
	KM_KERNEL_SIGMOID = 5,
	KM_KERNEL_COSINE = 6,
	KM_KERNEL_MIN = 7,
	KM_KERNEL_POLYSUM = 8
} km_kernel_type;

#define KM_KERNEL_FIRST KM_KERNEL_LINEAR
#define KM_KERNEL_LAST KM_KERNEL_POLYSUM

/* Which parameters a kernel reads, as a bit mask. */
#define KM_PARAM_GAMMA	0x1
#define KM_PARAM_DEGREE	0x2
#define KM_PARAM_COEF0	0x4

typedef struct km_kernel
{
	km_kernel_type type;
	int			degree;			/* poly, polysum */
	double		gamma;			/* poly, rbf, laplacian, sigmoid */
	double		coef0;			/* poly, sigmoid */
} km_kernel;

#endif							/* KM_KERNEL_TYPES_H */
