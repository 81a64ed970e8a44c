/*
 * accum_state.h - fixed-size additive states (accum.h) as aggregate states
 * of type bytea: created in the aggregate context within
 * kernel_ml.max_memory, updated in place (as float8_accum updates its
 * float8[]), combined by adding.  The bytea is its own serialized form, so
 * the aggregate needs no SERIALFUNC, and its state type is a real type
 * (Citus pushes such aggregates down to the shards).
 *
 * An aggregate over such a state (issue 12's kernel_train with a basis):
 *	STYPE = bytea, SFUNC updating accum_state_arg(fcinfo, 0, ...) in place,
 *	COMBINEFUNC calling accum_state_combine, PARALLEL = SAFE.
 */
#ifndef KM_ACCUM_STATE_H
#define KM_ACCUM_STATE_H

#include "postgres.h"

#include "fmgr.h"

#include "accum.h"

/*
 * A zeroed state of kind and dimension dim in aggctx, refused (before
 * allocating) beyond what a bytea can hold or kernel_ml.max_memory allows
 * with extra_bytes of working memory besides; what names the caller.
 */
km_accum   *accum_state_create(MemoryContext aggctx, km_accum_kind kind,
							   uint32 dim, Size extra_bytes, const char *what);

/*
 * Argument argno as a state to update in place: detoasted, and copied
 * into aggctx if its payload is not aligned for doubles.  NULL for SQL
 * NULL.  Validated when check is set (a state that came from elsewhere).
 */
km_accum   *accum_state_arg(FunctionCallInfo fcinfo, int argno,
							MemoryContext aggctx, bool check);

/*
 * The combine function's body: b added into a in place (a copy of b in
 * aggctx when a is NULL); either may be NULL.  Both are validated.
 */
km_accum   *accum_state_combine(MemoryContext aggctx, km_accum *a, km_accum *b);

#endif							/* KM_ACCUM_STATE_H */
