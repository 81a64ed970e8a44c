/*
 * unit_arena.c - memory for km_train in the unit tests (unit_arena.h).
 */
#include <stdlib.h>

#include "unit_arena.h"

static void *
arena_alloc(void *ctx, size_t bytes)
{
	unit_arena *a = ctx;

	if (a->count >= UNIT_ARENA_BLOCKS)
		abort();
	return a->p[a->count++] = calloc(1, bytes ? bytes : 1);
}

static void
arena_release(void *ctx, void *p)
{
}

static double *
arena_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	return arena_alloc(ctx, doubles * sizeof(double));
}

static void
arena_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
}

void *
unit_arena_alloc(unit_arena *a, size_t bytes)
{
	return arena_alloc(a, bytes);
}

km_train_env
unit_arena_env(unit_arena *a)
{
	km_train_env env = {a, arena_alloc, arena_release, arena_workspace,
	arena_release_workspace, NULL, NULL};

	return env;
}

void
unit_arena_free(unit_arena *a)
{
	while (a->count > 0)
		free(a->p[--a->count]);
}
