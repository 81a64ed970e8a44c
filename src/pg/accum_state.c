/*
 * accum_state.c - fixed-size additive states as bytea aggregate states
 * (accum_state.h).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/memutils.h"

#include "accum_state.h"
#include "pgutil.h"

km_accum *
accum_state_create(MemoryContext aggctx, km_accum_kind kind, uint32 dim,
				   Size extra_bytes, const char *what)
{
	Size		bytes = km_accum_bytes(kind, dim);
	km_accum   *acc;

	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s state is too large", what),
				 errdetail("A state of dimension %u would exceed 1 GB.", dim),
				 errhint("Use fewer components.")));
	km_check_memory((double) bytes + (double) extra_bytes, what, false);
	km_mem_reserve(aggctx, (double) bytes, what, false);
	acc = (km_accum *) MemoryContextAlloc(aggctx, bytes);
	SET_VARSIZE(acc, bytes);
	km_accum_init(acc, kind, dim);
	return acc;
}

static void
validate(const km_accum *acc)
{
	km_error	err;

	if (km_accum_validate(acc, VARSIZE(acc), &err) != KM_OK)
		km_raise(&err);
}

km_accum *
accum_state_arg(FunctionCallInfo fcinfo, int argno, MemoryContext aggctx,
				bool check)
{
	bytea	   *b;
	km_accum   *acc;

	if (PG_ARGISNULL(argno))
		return NULL;
	b = PG_GETARG_BYTEA_P(argno);
	acc = (km_accum *) b;
	/* bytea is int-aligned in a tuple; the payload needs double alignment */
	if (((uintptr_t) acc) % MAXIMUM_ALIGNOF != 0)
	{
		acc = (km_accum *) MemoryContextAlloc(aggctx, VARSIZE(b));
		memcpy(acc, b, VARSIZE(b));
	}
	if (check)
		validate(acc);
	return acc;
}

km_accum *
accum_state_combine(MemoryContext aggctx, km_accum *a, km_accum *b)
{
	km_error	err;

	if (b == NULL)
		return a;
	validate(b);
	if (a == NULL)
	{
		/* the result is the transition value: it must live in aggctx */
		km_mem_reserve(aggctx, (double) VARSIZE(b), "kernel_ml", false);
		a = (km_accum *) MemoryContextAlloc(aggctx, VARSIZE(b));
		memcpy(a, b, VARSIZE(b));
		return a;
	}
	validate(a);
	if (km_accum_combine(a, b, &err) != KM_OK)
		km_raise(&err);
	return a;
}
