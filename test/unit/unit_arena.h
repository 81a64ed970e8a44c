/*
 * unit_arena.h - memory for km_train in the unit tests: calloc'd blocks of
 * one training, freed together (the glue's memory contexts, in plain C).
 */
#ifndef KM_UNIT_ARENA_H
#define KM_UNIT_ARENA_H

#include "pipeline_types.h"

#define UNIT_ARENA_BLOCKS 512

typedef struct unit_arena
{
	void	   *p[UNIT_ARENA_BLOCKS];
	int			count;
} unit_arena;

/* An env whose allocations and workspaces come from a (no interrupts, no notes). */
km_train_env unit_arena_env(unit_arena *a);

/* A zeroed block of a (bytes, at least 1). */
void	   *unit_arena_alloc(unit_arena *a, size_t bytes);

/* Free every block of a. */
void		unit_arena_free(unit_arena *a);

#endif							/* KM_UNIT_ARENA_H */
