/*
 * pass_agg.c - the pass aggregate (issue 28, DESIGN-0.4.md step 5):
 * _kernel_ml_pass(features, target, descriptor), one pass the learner asks
 * for, over the rows of the statement it runs in.  Its state is a bytea of
 * fixed size (pass_desc.h); its combine function adds two states of
 * disjoint rows, so parallel workers and Citus shards run the pass where
 * the rows are and the learner's backend combines their states.  Any role
 * may call it: the descriptor and every state are untrusted bytes.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "pass_desc.h"
#include "pgutil.h"

PG_FUNCTION_INFO_V1(kernel_pass_sfunc);
PG_FUNCTION_INFO_V1(kernel_pass_combine);
PG_FUNCTION_INFO_V1(kernel_pass_final);

static MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fn)
{
	MemoryContext aggcxt;

	if (!AggCheckCallContext(fcinfo, &aggcxt))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s can only be called as part of an aggregate", fn),
				 errhint("Call the aggregate _kernel_ml_pass.")));
	return aggcxt;
}

/* _kernel_ml_pass's transition: (state, features, target or label, descriptor) */
Datum
kernel_pass_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "kernel_pass_sfunc");
	PassRun    *run;
	PassStateHeader *st;
	ArrayType  *f = NULL;
	Datum		out;

	if (PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("pass descriptor must not be null"),
				 errhint("Let kernel_model_train or kernel_train_query run the pass aggregate.")));
	run = pass_desc_run(PG_GETARG_BYTEA_P(3));
	st = PG_ARGISNULL(0) ? pass_state_start(run, aggcxt, &out) :
		pass_state_arg(PG_GETARG_DATUM(0), run, aggcxt, true, &out);
	if (!PG_ARGISNULL(1))
		f = PG_GETARG_ARRAYTYPE_P(1);
	pass_state_row(run, st, f, PG_ARGISNULL(2) ? (Datum) 0 : PG_GETARG_DATUM(2),
				   PG_ARGISNULL(2));
	if (f != NULL && (Pointer) f != DatumGetPointer(PG_GETARG_DATUM(1)))
		pfree(f);
	PG_RETURN_DATUM(out);
}

/* _kernel_ml_pass's combine: two states of disjoint rows */
Datum
kernel_pass_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggcxt = agg_context(fcinfo, "kernel_pass_combine");

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	return pass_states_combine(pass_desc_run_of_key(pass_state_key(PG_GETARG_DATUM(1))),
							   fcinfo, aggcxt);
}

/* _kernel_ml_pass's final: the state with every row added */
Datum
kernel_pass_final(PG_FUNCTION_ARGS)
{
	PassRun    *run;
	PassStateHeader *st;
	PassStateHeader *flat;
	Size		size;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	run = pass_desc_run_of_key(pass_state_key(PG_GETARG_DATUM(0)));
	/* flushed in place (FINALFUNC_MODIFY = READ_WRITE) */
	st = pass_state_arg(PG_GETARG_DATUM(0), run, CurrentMemoryContext, true, NULL);
	pass_state_flush(run, st, st);
	/* flat, the buffer empty: the header and the pass state */
	size = pass_state_size(run, st->external != 0, 0);
	(void) km_mem_reserve(CurrentMemoryContext, (double) size, "kernel_ml pass", false);
	flat = MemoryContextAllocExtended(CurrentMemoryContext, size, MCXT_ALLOC_HUGE);
	memcpy(flat, st, Min(size, (Size) VARSIZE(st)));
	SET_VARSIZE(flat, size);
	flat->cap = 0;
	flat->carry_len = 0;		/* this pass's runs carry nothing */
	PG_RETURN_BYTEA_P((bytea *) flat);
}
