/*
 * host_agg.c - the aggregate host (host_agg.h).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "host_agg.h"
#include "named_common.h"

/* The pass's state from the aggregate's result (NULL: no row), its rows. */
static km_status
take_result(AggHost *a, km_pass *pass, void *state, int64 *rows, km_error *err)
{
	bool		isnull;
	Datum		v;
	PassStateHeader *st;

	*rows = 0;
	if (SPI_processed != 1)
		elog(ERROR, "pass statement returned " UINT64_FORMAT " rows", (uint64) SPI_processed);
	v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return KM_OK;			/* no row of the side: the state as init left it */
	st = (PassStateHeader *) PG_DETOAST_DATUM(v);
	if (VARSIZE(st) < MAXALIGN(sizeof(PassStateHeader)) + (st->external ? 0 : pass->state_bytes) ||
		st->magic != KM_PASS_STATE_MAGIC || st->state_bytes != pass->state_bytes)
		elog(ERROR, "pass aggregate returned a state of another pass");
	*rows = st->rows;
	if (st->err.status != KM_OK)
	{
		/* its texts as written by km_fail, terminated whatever the bytes after them */
		*err = st->err;
		err->message[sizeof(err->message) - 1] = '\0';
		err->detail[sizeof(err->detail) - 1] = '\0';
		err->hint[sizeof(err->hint) - 1] = '\0';
		if (err->status < KM_ERR_INVALID || err->status > KM_ERR_INACCURATE)
			err->status = KM_ERR_INVALID;
		return err->status;
	}
	/* an external state added into the learner's state in place */
	if (!st->external && pass->state_bytes > 0)
		memcpy(state, (char *) st + MAXALIGN(sizeof(PassStateHeader)), pass->state_bytes);
	return KM_OK;
}

/*
 * Does the pass statement sql read a Citus table (the citus extension
 * created, a relation it depends on in pg_dist_partition)?  Asked once per
 * host: every pass reads the same query.
 */
static bool
agg_citus(AggHost *a, const char *sql)
{
	List	   *rels;
	Datum	   *oids;
	int			n = 0;
	ListCell   *lc;
	Oid			types[1] = {OIDARRAYOID};
	Datum		values[1];
	bool		isnull;

	if (a->citus >= 0)
		return a->citus > 0;
	a->citus = 0;
	if (!OidIsValid(get_extension_oid("citus", true)))
		return false;
	rels = catalog_query_relations(a->cursor->query, sql, 1, (Oid[]) {BYTEAOID});
	if (rels == NIL)
		return false;
	oids = palloc(sizeof(Datum) * list_length(rels));
	foreach(lc, rels)
		oids[n++] = ObjectIdGetDatum(lfirst_oid(lc));
	values[0] = PointerGetDatum(construct_array(oids, n, OIDOID, sizeof(Oid), true, TYPALIGN_INT));
	if (SPI_execute_with_args("SELECT pg_catalog.count(*) OPERATOR(pg_catalog.>) 0 "
							  "FROM pg_catalog.pg_dist_partition p "
							  "WHERE p.logicalrelid::pg_catalog.oid OPERATOR(pg_catalog.=) ANY ($1)",
							  1, types, values, NULL, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "could not read pg_dist_partition");
	a->citus = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) ? 1 : 0;
	SPI_freetuptable(SPI_tuptable);
	return a->citus > 0;
}

/*
 * desc sent to every node once, as a Citus intermediate result of this
 * transaction (broadcast_intermediate_result to the workers,
 * create_intermediate_result on this node, for a shard it reaches through
 * a connection), and its short descriptor, which the shards read it by.
 */
static bytea *
agg_broadcast(AggHost *a, bytea *desc)
{
	char		name[KM_PASS_REF_NAME];
	StringInfoData q;
	Size		len = VARSIZE(desc) - VARHDRSZ;
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		values[2];
	int			rc;

	/* the statement's text and its text datum: twice the descriptor in hex */
	(void) km_mem_reserve(CurrentMemoryContext, 4.0 * (double) len + 256.0,
						  a->cursor->query->fn, false);
	snprintf(name, sizeof(name), "kernel_ml_pass_%016llx_%d",
			 (unsigned long long) ((PassDescHeader *) desc)->key, ++a->broadcasts);
	initStringInfo(&q);
	enlargeStringInfo(&q, (int) (2 * len + 64));
	appendStringInfoString(&q, "SELECT E'\\\\x");
	q.len += (int) hex_encode(VARDATA(desc), len, q.data + q.len);
	q.data[q.len] = '\0';
	appendStringInfoString(&q, "'::pg_catalog.bytea");
	values[0] = CStringGetTextDatum(name);
	values[1] = CStringGetTextDatum(q.data);
	pfree(q.data);
	/*
	 * As the role the pass statement runs as: Citus keeps a transaction's
	 * intermediate results per role, and the shards read them as that role
	 * (the model's owner in kernel_model_retrain)
	 */
	rc = catalog_query_call(a->cursor->query,
							"SELECT pg_catalog.broadcast_intermediate_result($1, $2), "
							"pg_catalog.create_intermediate_result($1, $2)",
							2, types, values);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not send the pass descriptor to the worker nodes");
	SPI_freetuptable(SPI_tuptable);
	pfree(DatumGetPointer(values[1]));
	return pass_desc_ref(desc, name);
}

static km_status
agg_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	AggHost    *a = ctx;
	CursorHost *h = a->cursor;
	MemoryContext tmp;
	MemoryContext old;
	bytea	   *desc;
	char	   *sql;
	Oid			types[1] = {BYTEAOID};
	Datum		values[1];
	int64		rows = 0;
	km_status	st;

	if (pass->kind == 0 || pass->ordered || pass->point_bytes == NULL)
	{
		a->scans++;
		return a->cursor_host.run(a->cursor_host.ctx, pass, state, err);
	}
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml pass statement",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	desc = pass_desc_build(pass, &a->rules);
	sql = psprintf("SELECT %s._kernel_ml_pass(s.f, s.y, $1) FROM %s",
				   a->schema, h->query->source);
	/*
	 * Under Citus a large descriptor goes to the workers once, the shards
	 * get its short form (not a copy of the point per row); this backend
	 * runs the live pass either way
	 */
	if (VARSIZE(desc) > KM_PASS_REF_MIN_BYTES && (Size) VARSIZE(desc) < MaxAllocSize / 2 - 64 &&
		agg_citus(a, sql))
		values[0] = PointerGetDatum(agg_broadcast(a, desc));
	else
		values[0] = PointerGetDatum(desc);
	pass_desc_live_begin(desc, &a->rules, pass, state);
	PG_TRY();
	{
		catalog_query_run(h->query, sql, 1, types, values);
	}
	PG_FINALLY();
	{
		pass_desc_live_end();
	}
	PG_END_TRY();
	st = take_result(a, pass, state, &rows, err);
	SPI_freetuptable(SPI_tuptable);
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	a->statements++;
	pass->rows_done = (size_t) rows;
	if (st != KM_OK)
		return st;
	/* every pass reads the rows the counting scan read; the pass by name */
	if (rows != h->rows)
		check_pass_rows("counting", h->rows,
						pnstrdup(pass->what, strcspn(pass->what, ":")), rows,
						h->all_rows ? "usable" : "training");
	return KM_OK;
}

km_host
agg_host(AggHost *a, CursorHost *h, const char *schema)
{
	km_host		host;
	PassRules  *r = &a->rules;
	MemoryContext old = MemoryContextSwitchTo(h->cxt);

	memset(a, 0, sizeof(*a));
	a->citus = -1;
	a->cursor = h;
	a->cursor_host = cursor_host(h);
	a->schema = schema;
	r->d = h->d;
	r->target = (PassTarget) h->target;
	r->all_rows = h->all_rows;
	r->seed = h->seed;
	r->test_fraction = h->test_fraction;
	r->folds = h->folds;
	r->nlabels = h->target == CURSOR_VALUES ? 0 : h->nlab;
	if (r->nlabels > 0)
	{
		r->lab_text = palloc0(sizeof(char *) * r->nlabels);
		r->lab_len = palloc0(sizeof(int) * r->nlabels);
		r->lab_value = palloc0(sizeof(double) * r->nlabels);
		r->lab_class = palloc0(sizeof(uint32) * r->nlabels);
		for (int l = 0; l < r->nlabels; l++)
		{
			r->lab_class[l] = h->class_of[l];
			if (h->target == CURSOR_TEXT_LABELS)
			{
				r->lab_text[l] = h->lab_text[l];
				r->lab_len[l] = (int) strlen(h->lab_text[l]);
			}
			else
				r->lab_value[l] = h->lab_value[l];
		}
	}
	MemoryContextSwitchTo(old);
	host = a->cursor_host;
	host.ctx = a;
	host.run = agg_run;
	return host;
}

PG_FUNCTION_INFO_V1(kernel_ml_row_side);

/*
 * _kernel_ml_row_side(features, target or label, seed, fraction, folds):
 * where the host's rules put a row, as the counting statement groups the
 * rows: NULL for a row with a NULL feature array or target; else 2 fold +
 * held (held: 1 when the split holds it out; fold: its row hash modulo
 * folds, 0 without folds).  The cursor host's rules (host_cursor.c): a
 * text label is hashed, a number must be finite.
 */
Datum
kernel_ml_row_side(PG_FUNCTION_ARGS)
{
	ArrayType  *arr;
	int64		seed = PG_GETARG_INT64(2);
	double		fraction = PG_GETARG_FLOAT8(3);
	int32		folds = PG_GETARG_INT32(4);
	double		key;
	double	   *buf;
	int			d;
	bool		held;
	int			fold = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		PG_RETURN_NULL();
	if (!(fraction >= 0.0 && fraction <= 1.0) || folds < 0 || folds > 1000000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid row side rules"),
				 errdetail("The fraction is %g and the folds %d.", fraction, folds),
				 errhint("Give a fraction between 0 and 1 and from 0 to 1000000 folds.")));
	if (get_fn_expr_argtype(fcinfo->flinfo, 1) == TEXTOID)
	{
		text	   *t = PG_GETARG_TEXT_PP(1);

		key = (double) hash_bytes((const unsigned char *) VARDATA_ANY(t),
								  (int) VARSIZE_ANY_EXHDR(t));
	}
	else
	{
		key = PG_GETARG_FLOAT8(1);
		if (!isfinite(key))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("target values must be finite"),
					 errdetail("A target of the query is %s.", float8out_internal(key)),
					 errhint("Filter the rows with a non-finite target out of the query.")));
	}
	arr = PG_GETARG_ARRAYTYPE_P(0);
	d = km_array_length(arr, "a row of the query");
	buf = palloc(sizeof(double) * ((Size) d + 1));
	km_array_copy(arr, d, buf, "a row of the query");
	held = km_row_held_out(buf, d, key, seed, km_holdout_threshold(fraction), buf + 0);
	if (folds > 0)
	{
		km_array_copy(arr, d, buf, "a row of the query");
		fold = km_row_fold(buf, d, key, seed, folds, buf);
	}
	pfree(buf);
	PG_RETURN_INT32(2 * fold + (held ? 1 : 0));
}

/* Does label l (text or value) of the counting statement's row i match one met? */
static int
count_label(CursorHost *h, SPITupleTable *tt, uint64 i)
{
	bool		isnull;
	Datum		y = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull);
	int			l;

	if (h->target == CURSOR_TEXT_LABELS)
	{
		char	   *s = TextDatumGetCString(y);

		for (l = 0; l < h->nlab; l++)
			if (strcmp(h->lab_text[l], s) == 0)
				return l;
		if (l == KM_MAX_CLASSES)
			return -1;
		h->lab_text[l] = MemoryContextStrdup(h->cxt, s);
	}
	else
	{
		double		v = DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y);

		for (l = 0; l < h->nlab; l++)
			if (h->lab_value[l] == v)
				return l;
		if (l == KM_MAX_CLASSES)
			return -1;
		h->lab_value[l] = v;
	}
	h->nlab++;
	return l;
}

void
agg_host_count(CursorHost *h, const CatalogQuery *query, const char *schema, int d,
			   CursorTarget target, bool all_rows, int64 seed, double test_fraction,
			   int folds, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	bool		labels = target != CURSOR_VALUES;
	Oid			types[3] = {INT8OID, FLOAT8OID, INT4OID};
	Datum		values[3] = {Int64GetDatum(seed), Float8GetDatum(test_fraction),
	Int32GetDatum(folds)};
	int			dmin = -1;
	int			dmax = -1;

	memset(h, 0, sizeof(*h));
	h->query = query;
	h->cxt = cxt;
	h->all_rows = all_rows;
	h->seed = seed;
	h->basis_seed = (uint64) seed;
	h->test_fraction = test_fraction;
	h->folds = folds;
	h->target = target;
	if (labels)
	{
		h->lab_text = palloc0(sizeof(char *) * KM_MAX_CLASSES);
		h->lab_value = palloc0(sizeof(double) * KM_MAX_CLASSES);
		h->lab_count = palloc0(sizeof(uint64) * KM_MAX_CLASSES);
	}
	if (folds > 0)
		h->fold_n = palloc0(sizeof(int64) * folds);
	h->pr.cxt = cxt;
	h->pr.thr = km_holdout_threshold(test_fraction);

	/*
	 * One aggregate statement (grouped by label for a classifier: a few
	 * groups, so the planner aggregates partially), each side and fold a
	 * filtered count: parallel workers and Citus shards count where the
	 * rows are, as the passes after it
	 */
	{
		StringInfoData sql;
		const char *kept = all_rows ? "z.side IS NOT NULL" :
			"z.side OPERATOR(pg_catalog.%) 2 OPERATOR(pg_catalog.=) 0";

		initStringInfo(&sql);
		appendStringInfo(&sql, "SELECT %s, pg_catalog.count(*), "
						 "pg_catalog.count(*) FILTER (WHERE z.side IS NULL), "
						 "pg_catalog.count(*) FILTER (WHERE %s), "
						 "pg_catalog.min(z.d) FILTER (WHERE z.side IS NOT NULL), "
						 "pg_catalog.max(z.d) FILTER (WHERE z.side IS NOT NULL)",
						 labels ? "z.y" : "NULL::pg_catalog.float8", kept);
		for (int f = 0; f < folds; f++)
			appendStringInfo(&sql, ", pg_catalog.count(*) FILTER (WHERE %s AND "
							 "z.side OPERATOR(pg_catalog./) 2 OPERATOR(pg_catalog.=) %d)", kept, f);
		appendStringInfo(&sql, " FROM (SELECT s.y, %s._kernel_ml_row_side(s.f, s.y, $1, $2, $3) AS side, "
						 "pg_catalog.array_length(s.f, 1) AS d FROM %s) AS z%s",
						 schema, query->source, labels ? " GROUP BY 1" : "");
		catalog_query_run(query, sql.data, 3, types, values);
	}
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		ynull;
		bool		dnull;
		bool		isnull;
		int64		n = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));
		int64		skipped = DatumGetInt64(SPI_getbinval(tup, desc, 3, &isnull));
		int64		kept_n = DatumGetInt64(SPI_getbinval(tup, desc, 4, &isnull));
		int32		lo = DatumGetInt32(SPI_getbinval(tup, desc, 5, &dnull));
		int32		hi = DatumGetInt32(SPI_getbinval(tup, desc, 6, &isnull));
		int			l;

		(void) SPI_getbinval(tup, desc, 1, &ynull);
		h->seen += n;
		h->skipped += skipped;
		h->usable += n - skipped;
		if (!dnull)
		{
			dmin = dmin < 0 ? lo : Min(dmin, lo);
			dmax = Max(dmax, hi);
		}
		h->rows += kept_n;
		for (int f = 0; f < folds; f++)
			h->fold_n[f] += DatumGetInt64(SPI_getbinval(tup, desc, 7 + f, &isnull));
		if (!labels || kept_n == 0 || (labels && ynull))
			continue;
		if ((l = count_label(h, SPI_tuptable, i)) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("too many distinct labels"),
					 errdetail("The training rows have more than %d distinct labels; a model may have at most %d classes.",
							   KM_MAX_CLASSES, KM_MAX_CLASSES),
					 errhint("A continuous target needs a regression method (\"ridge\" or \"lms\").")));
		h->lab_count[l] += (uint64) kept_n;
	}
	SPI_freetuptable(SPI_tuptable);
	if (dmin != dmax)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("The usable rows have between %d and %d features.", dmin, dmax),
				 errhint("Make the query return arrays of one length.")));
	h->d = dmax < 0 ? (d >= 0 ? d : 0) : dmax;
	h->pr.d = h->d;
	h->pr.x = palloc(sizeof(double) * (h->d + 1));
	h->pr.hbuf = palloc(sizeof(double) * (h->d + 1));
	MemoryContextSwitchTo(old);
}

km_host
agg_host_all(AggHost *a, CursorHost *h, const CatalogQuery *query, const char *schema,
			 int d, int64 *rows, int64 *skipped, MemoryContext cxt)
{
	km_host		host;

	agg_host_count(h, query, schema, d, CURSOR_VALUES, true, 0, 0.0, 0, cxt);
	*rows = h->rows;
	*skipped = h->skipped;
	if (h->rows > 0 && h->d != d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature array length does not match the model"),
				 errdetail("The query's rows have %d features; the model takes %d.", h->d, d),
				 errhint("Give a query whose first column is a feature array of the model's %d values.", d)));
	host = agg_host(a, h, schema);
	a->rules.target = PASS_ANY;
	return host;
}
