/*
 * rowset.c - rows collected by the kernel_ml aggregates.
 */
#include "postgres.h"

#include <math.h>

#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "pgutil.h"
#include "rowset.h"

#define KM_INITIAL_ROWS 1024

double
km_train_memory(double n, double d)
{
	return 8.0 * (n * n + 3.0 * n * d + 8.0 * n);
}

RowSet *
rowset_create(MemoryContext ctx, bool with_target)
{
	RowSet	   *rs = MemoryContextAllocZero(ctx, sizeof(RowSet));

	rs->ctx = ctx;
	rs->d = -1;
	km_options_parse(NULL, &rs->opts);
	rs->has_target = with_target;
	return rs;
}

void
rowset_reserve(RowSet *rs, int64 more, const char *what)
{
	int64		need = rs->n + more;
	int64		cap;

	if (need <= rs->capacity)
		return;
	km_check_memory(km_train_memory((double) need, (double) rs->d), what, true);

	cap = Max(rs->capacity * 2, Max(need, KM_INITIAL_ROWS));
	if (rs->X == NULL)
	{
		rs->X = MemoryContextAllocHuge(rs->ctx, mul_size(cap, mul_size(rs->d, sizeof(double))));
		if (rs->has_target)
			rs->y = MemoryContextAllocHuge(rs->ctx, mul_size(cap, sizeof(double)));
	}
	else
	{
		rs->X = repalloc_huge(rs->X, mul_size(cap, mul_size(rs->d, sizeof(double))));
		if (rs->has_target)
			rs->y = repalloc_huge(rs->y, mul_size(cap, sizeof(double)));
	}
	rs->capacity = cap;
}

void
rowset_add(RowSet *rs, ArrayType *features, double target, const char *what)
{
	char		where[64];
	int			len;

	snprintf(where, sizeof(where), "row " INT64_FORMAT, rs->seen);
	len = km_array_length(features, where);
	if (rs->d < 0)
		rs->d = len;
	else if (len != rs->d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("Row " INT64_FORMAT " has %d features; the first row had %d.",
						   rs->seen, len, rs->d)));
	if (rs->has_target && !isfinite(target))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("target values must be finite"),
				 errdetail("The target of row " INT64_FORMAT " is %s.",
						   rs->seen, float8out_internal(target))));

	rowset_reserve(rs, 1, what);
	km_array_copy(features, rs->d, rs->X + rs->n * rs->d, where);
	if (rs->has_target)
		rs->y[rs->n] = target;
	rs->n++;
}

MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return aggctx;
}

void
rowset_set_options(RowSet *rs, Jsonb *opts)
{
	MemoryContext old = MemoryContextSwitchTo(rs->ctx);

	if (rs->optjson != NULL)
		pfree(rs->optjson);
	rs->optjson = NULL;
	if (opts != NULL)
	{
		rs->optjson = palloc(VARSIZE(opts));
		memcpy(rs->optjson, opts, VARSIZE(opts));
	}
	km_options_parse(rs->optjson, &rs->opts);
	MemoryContextSwitchTo(old);
}

/*
 * Whether two option values are the same: equal bytes (options are small,
 * so comparing them on every row costs little), or equal as jsonb
 * ({"lambda": 1} and {"lambda": 1.0}).
 */
static bool
same_options(Jsonb *a, Jsonb *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0)
		return true;
	return DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(a),
											JsonbPGetDatum(b)));
}

static char *
options_text(Jsonb *opts)
{
	if (opts == NULL)
		return pstrdup("null");
	return JsonbToCString(NULL, &opts->root, VARSIZE(opts));
}

RowSet *
rowset_get(FunctionCallInfo fcinfo, int optarg, bool with_target,
		   const char *fname)
{
	MemoryContext aggctx = agg_context(fcinfo, fname);
	RowSet	   *rs;
	Jsonb	   *opts = NULL;

	if (PG_NARGS() > optarg && !PG_ARGISNULL(optarg))
		opts = PG_GETARG_JSONB_P(optarg);

	if (!PG_ARGISNULL(0))
	{
		rs = (RowSet *) PG_GETARG_POINTER(0);
		if (!same_options(rs->optjson, opts))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options must be the same for every row of an aggregate call"),
					 errdetail("Row " INT64_FORMAT " has options %s; the rows before it had %s.",
							   rs->seen + 1, options_text(opts),
							   options_text(rs->optjson)),
					 errhint("Pass the options as a constant or a query parameter.")));
		return rs;
	}

	rs = rowset_create(aggctx, with_target);
	rowset_set_options(rs, opts);
	return rs;
}

void
rowset_check_same_options(const RowSet *a, const RowSet *b, const char *fname)
{
	if (!same_options(a->optjson, b->optjson))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("One part of the %s call had options %s, another %s.",
						   fname, options_text(a->optjson),
						   options_text(b->optjson)),
				 errhint("Pass the options as a constant or a query parameter.")));
}
