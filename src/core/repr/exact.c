/*
 * exact.c - the exact representation (repr.h): the kernel expansion over
 * every training row.  Its basis gathers the rows as they are, its model
 * keeps them all (n_train x d), and its fit is the method's dual over their
 * n x n kernel matrix, which grows with the rows.  It has no feature map.
 * Core: no PostgreSQL header.
 */
#include "repr.h"

static int
exact_steps(int centres, km_basis_step *steps)
{
	steps[0] = KM_BASIS_GATHER;
	return 1;
}

static uint64_t
exact_kept_doubles(uint64_t n_train, uint64_t d)
{
	return n_train * d;
}

static km_repr_memory
exact_memory(double n, uint32_t components)
{
	km_repr_memory plan = {n * n, 0};

	return plan;
}

const km_repr_ops km_repr_exact = {
	.id = 0, .name = "exact", .described = "exact (every row)",
	.approximate = false, .kernels = KM_REPR_ALL_KERNELS, .keeps_rows = true,
	.basis_steps = exact_steps, .kept_doubles = exact_kept_doubles,
	.memory = exact_memory,
};
