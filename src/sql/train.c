/*
 * train.c - the kernel_train aggregate.
 *
 * Its transition functions collect the rows in a RowSet (rowset.c);
 * kernel_train can be split by parallel query (and Citus): its state
 * serializes to bytea and two states combine by appending rows.  The
 * final function hands the rows to the memory host's one entry
 * (memory_train.h km_memory_train_rowset: the method checked, the rows'
 * canonical order, the task's row steps, the learner, the model).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "host_memory.h"
#include "memory_train.h"
#include "options.h"
#include "pipeline.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "rowset.h"
#include "task.h"
#include "train.h"
#include "train_paths.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_train_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_bool_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_final);
PG_FUNCTION_INFO_V1(kernel_train_combine);
PG_FUNCTION_INFO_V1(kernel_train_serialize);
PG_FUNCTION_INFO_V1(kernel_train_deserialize);

/* kernel_train_sfunc(state, features, target [, options]) */
Datum
kernel_train_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get(fcinfo, 3, true, "kernel_train_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add(rs, PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_FLOAT8(2),
				   "kernel_train");
	PG_RETURN_POINTER(rs);
}

/*
 * kernel_train_bool_sfunc(state, features, label boolean [, options]): a
 * boolean label column is a classifier's labels, as the text 'false' and
 * 'true' (what ::text gives): kernel_predict_class returns them as text.
 */
Datum
kernel_train_bool_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get_labels(fcinfo, 3, "kernel_train_bool_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add_label(rs, PG_GETARG_ARRAYTYPE_P(1),
						 cstring_to_text(PG_GETARG_BOOL(2) ? "true" : "false"),
						 "kernel_train");
	PG_RETURN_POINTER(rs);
}

/* The memory host's entry (memory_train.h) as a kernel_ml.progress training */
static bytea *
train_model(RowSet *rs)
{
	bytea	   *result;

	/* an error ends it at the end of the (sub)transaction (pgprogress.h) */
	km_progress_begin("kernel_train");
	result = km_memory_train_rowset(rs);
	km_progress_end();
	return result;
}

Datum
kernel_train_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	bytea	   *model;

	agg_context(fcinfo, "kernel_train_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rs = (RowSet *) PG_GETARG_POINTER(0);
	rowset_check_kept(rs, "kernel_train");
	if (rs->n == 0)
	{
		km_notice_skipped(rs->skipped, 0);
		PG_RETURN_NULL();
	}
	model = train_model(rs);
	/* after the training, so that no NOTICE comes before its error */
	km_notice_skipped(rs->skipped, rs->n);
	PG_RETURN_BYTEA_P(model);
}

bytea *
km_train_rowset(RowSet *rs)
{
	rowset_check_kept(rs, "kernel_train");
	return train_model(rs);
}

/* Parallel query: the state is a RowSet (rowset.c), combined by appending. */
Datum
kernel_train_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_combine");

	PG_RETURN_POINTER(rowset_combine(aggctx,
									 PG_ARGISNULL(0) ? NULL : (RowSet *) PG_GETARG_POINTER(0),
									 PG_ARGISNULL(1) ? NULL : (RowSet *) PG_GETARG_POINTER(1),
									 "kernel_train"));
}

Datum
kernel_train_serialize(PG_FUNCTION_ARGS)
{
	agg_context(fcinfo, "kernel_train_serialize");
	PG_RETURN_BYTEA_P(rowset_serialize((RowSet *) PG_GETARG_POINTER(0)));
}

Datum
kernel_train_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_deserialize");

	PG_RETURN_POINTER(rowset_deserialize(aggctx, PG_GETARG_BYTEA_PP(0),
											   "kernel_train"));
}
