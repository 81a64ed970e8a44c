/*
 * citus_fresh_fmgr.c - a test-only module (not part of kernel_ml.so) that
 * calls an aggregate's transition function the way Citus's
 * worker_partial_agg does: through a fresh FmgrInfo (fmgr_info) for every
 * row, so fn_extra is empty on every call, with the aggregate's own
 * context (AggCheckCallContext works) and its state kept in a box in the
 * aggregate context (HandleTransition: a new state pointer is copied
 * there and the old one freed).
 *
 *   fresh_fmgr(transfn regprocedure, args...) -> the transition value
 *
 * Built and loaded by test/bench/citus_partial.sh (PGXS, its own .so).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/datum.h"
#include "utils/expandeddatum.h"
#include "utils/memutils.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(fresh_fmgr_sfunc);
PG_FUNCTION_INFO_V1(fresh_fmgr_final);

typedef struct Box
{
	Datum		value;
	bool		isnull;
} Box;

/* fresh_fmgr_sfunc(box internal, transfn regprocedure, args...) */
Datum
fresh_fmgr_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	Box		   *box;
	FmgrInfo	info;
	LOCAL_FCINFO(inner, FUNC_MAX_ARGS);
	int			nargs = PG_NARGS() - 1;
	Datum		result;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "fresh_fmgr_sfunc called in non-aggregate context");
	if (PG_ARGISNULL(1))
		elog(ERROR, "fresh_fmgr needs a transition function");
	if (PG_ARGISNULL(0))
	{
		box = MemoryContextAllocZero(aggctx, sizeof(Box));
		box->isnull = true;
	}
	else
		box = (Box *) PG_GETARG_POINTER(0);

	/* what worker_partial_agg_sfunc does on every row */
	fmgr_info(PG_GETARG_OID(1), &info);
	if (info.fn_strict)
		elog(ERROR, "fresh_fmgr supports non-strict transition functions only");
	InitFunctionCallInfoData(*inner, &info, nargs, fcinfo->fncollation,
							 fcinfo->context, NULL);
	inner->args[0].value = box->value;
	inner->args[0].isnull = box->isnull;
	for (int i = 2; i < PG_NARGS(); i++)
		inner->args[i - 1] = fcinfo->args[i];
	result = FunctionCallInvoke(inner);

	/*
	 * Citus 13's HandleTransition (nodeAgg's rule): a read-write expanded
	 * state whose context is a child of the aggregate context is kept in
	 * place; any other value is copied (flattened) into it
	 */
	if (DatumGetPointer(result) != DatumGetPointer(box->value))
	{
		if (!inner->isnull)
		{
			MemoryContext old = MemoryContextSwitchTo(aggctx);

			if (!(DatumIsReadWriteExpandedObject(result, false, -1) &&
				  MemoryContextGetParent(DatumGetEOHP(result)->eoh_context) == aggctx))
				result = datumCopy(result, false, -1);
			MemoryContextSwitchTo(old);
		}
		if (!box->isnull)
		{
			if (DatumIsReadWriteExpandedObject(box->value, false, -1))
				DeleteExpandedObject(box->value);
			else
				pfree(DatumGetPointer(box->value));
		}
	}
	box->value = result;
	box->isnull = inner->isnull;
	PG_RETURN_POINTER(box);
}

/* The transition value (a varlena), or NULL. */
Datum
fresh_fmgr_final(PG_FUNCTION_ARGS)
{
	Box		   *box = PG_ARGISNULL(0) ? NULL : (Box *) PG_GETARG_POINTER(0);

	if (box == NULL || box->isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(box->value);
}
