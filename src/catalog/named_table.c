/*
 * named_table.c - named models trained from a table (issue 30):
 * kernel_model_train(name, relation, target, options).
 *
 * The named road trains from a stored query of (features float8[], target)
 * rows and retrains by running it again (named_train.c).  A table model's
 * stored query is
 *
 *   SELECT features, target FROM <extschema>.kernel_table_rows(
 *       '"schema"."table"'::regclass, 'target', ARRAY['col', ...], '{table options}')
 *
 * kernel_table_rows reads those columns of the table (the list stored in
 * the query decides: columns added later are not read, a dropped one is an
 * error naming it), learns the encoder from every row with a target (its
 * imputation values and categories: the held-out rows of the named split
 * included, as the encoder is learned before the split), and returns the
 * encoded rows; rows without a target come back as NULLs, which the named
 * road counts as skipped.  It leaves the encoder in a slot of this backend,
 * and named training, once it has fitted the model, calls
 * km_named_table_model, which puts the encoder in the model it stores.
 *
 * The relation is stored by its qualified name, not its OID: the stored
 * query survives pg_dump and restore (kernel_models is dumped), and a table
 * renamed since is a clear "relation does not exist" at retrain.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "encoder.h"
#include "model.h"
#include "named_table.h"
#include "table_rows.h"

PG_FUNCTION_INFO_V1(kernel_table_rows);

/* The encoder kernel_table_rows learned last, in this transaction. */
static struct
{
	LocalTransactionId lxid;
	uint8	   *payload;		/* in TopMemoryContext */
	uint64		bytes;
	uint32		d;
} slot;

static void
slot_set(const uint8 *payload, uint64 bytes, uint32 d)
{
	if (slot.payload != NULL)
		pfree(slot.payload);
	slot.payload = MemoryContextAlloc(TopMemoryContext, bytes);
	memcpy(slot.payload, payload, bytes);
	slot.bytes = bytes;
	slot.d = d;
	slot.lxid = MyProc->lxid;
}

static char *
relation_name(Oid relid)
{
	char	   *rel = get_rel_name(relid);
	char	   *nsp = get_namespace_name(get_rel_namespace(relid));

	if (rel == NULL || nsp == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(nsp, rel);
}

/* The text[] argument as C strings; an error for NULL elements. */
static char **
column_names(ArrayType *arr, int *n)
{
	Datum	   *elems;
	bool	   *nulls;
	char	  **out;

	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, n);
	out = palloc(sizeof(char *) * Max(1, *n));
	for (int i = 0; i < *n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("column names must not be null")));
		out[i] = TextDatumGetCString(elems[i]);
	}
	return out;
}

/*
 * kernel_table_rows(relation regclass, target_column text, columns text[],
 * options jsonb) RETURNS TABLE (features float8[], target float8), and
 * kernel_table_label_rows, the same with a text target (a classifier's)
 */
Datum
kernel_table_rows(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	char	   *target = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Jsonb	   *opts = PG_ARGISNULL(3) ? NULL : PG_GETARG_JSONB_P(3);
	char	   *relname = relation_name(relid);
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	TableState *st;
	StringInfoData sql;
	char	  **cols;
	int			ncols;
	Portal		portal;
	bool		first = true;
	km_encoder	e;
	uint8	   *payload;
	uint64		bytes;
	km_encoder_value *vals;
	ArrayType  *row;

	cols = column_names(PG_GETARG_ARRAYTYPE_P(2), &ncols);
	/* the stored column list decides: a dropped column is named */
	for (int i = -1; i < ncols; i++)
	{
		const char *c = i < 0 ? target : cols[i];

		if (get_attnum(relid, c) == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" of relation %s does not exist", c, relname),
					 errdetail("The model was trained on %s %s of the table; it is gone.",
							   i < 0 ? "the target" : "the column", quote_identifier(c)),
					 errhint("Train a new version with kernel_model_train(name, table, target, options), which takes the table's columns as they are now.")));
	}
	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT ");
	for (int i = 0; i < ncols; i++)
		appendStringInfo(&sql, "%s, ", quote_identifier(cols[i]));
	appendStringInfo(&sql, "%s FROM %s", quote_identifier(target), relname);

	InitMaterializedSRF(fcinfo, 0);
	work = AllocSetContextCreate(caller, "kernel_table_rows", ALLOCSET_DEFAULT_SIZES);
	st = MemoryContextAllocZero(work, sizeof(TableState));
	st->ctx = work;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	portal = SPI_cursor_open_with_args(NULL, sql.data, 0, NULL, NULL, NULL, true, 0);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 1000);
		if (first)
		{
			MemoryContext old = MemoryContextSwitchTo(work);

			km_table_setup(st, SPI_tuptable->tupdesc, target, opts);
			MemoryContextSwitchTo(old);
			first = false;
		}
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			Datum	   *values = palloc(sizeof(Datum) * st->desc->natts);
			bool	   *nulls = palloc(sizeof(bool) * st->desc->natts);

			heap_deform_tuple(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, values, nulls);
			km_table_add(st, values, nulls);
			pfree(values);
			pfree(nulls);
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_finish();

	if (st->n == 0)
		return (Datum) 0;		/* the named road reports no usable rows */
	if ((TupleDescAttr(rsinfo->setDesc, 1)->atttypid == TEXTOID) != st->target_label)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("target column \"%s\" is %s", target,
						st->target_label ? "a label: use kernel_table_label_rows" :
						"a number: use kernel_table_rows")));
	km_table_learn(st, &e, &payload, &bytes);
	slot_set(payload, bytes, e.d);

	/* the encoded rows; rows without a target as NULLs (skipped) */
	vals = palloc(sizeof(km_encoder_value) * st->ncols);
	row = construct_array(palloc0(sizeof(Datum) * e.d), e.d, FLOAT8OID, 8,
						  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	for (int64 r = 0; r < st->n; r++)
	{
		Datum		values[2];
		bool		nulls[2] = {false, false};

		km_table_encode(st, &e, r, vals, (double *) ARR_DATA_PTR(row));
		values[0] = PointerGetDatum(row);
		values[1] = st->target_label ? CStringGetTextDatum(st->label[r]) :
			Float8GetDatum(st->y[r]);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		CHECK_FOR_INTERRUPTS();
	}
	for (int64 r = 0; r < st->skipped; r++)
	{
		Datum		values[2] = {0, 0};
		bool		nulls[2] = {true, true};

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	MemoryContextDelete(work);
	return (Datum) 0;
}

/*
 * The model named training fitted on query's rows, with the encoder of a
 * table's rows put in, when query is a table's (kernel_table_rows); any
 * other model unchanged.  Called once the model is fitted, in ctx.
 */
bytea *
km_named_table_model(const char *query, bytea *model, MemoryContext ctx)
{
	MemoryContext old;
	km_model_shape shape;
	km_error	err;
	bytea	   *result;

	if (strstr(query, ".kernel_table_rows(") == NULL &&
		strstr(query, ".kernel_table_label_rows(") == NULL)
		return model;
	if (slot.payload == NULL || slot.lxid != MyProc->lxid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("training query calls kernel_table_rows but no encoder was learned"),
				 errhint("Train a table model with kernel_model_train(name, table, target, options).")));
	if (km_model_peek((const uint8 *) VARDATA_ANY(model), VARSIZE_ANY_EXHDR(model),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	if (shape.d != slot.d)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("the table's categories changed while the model was being trained"),
				 errdetail("The rows had %u features; the last reading of the table gives %u.",
						   shape.d, slot.d),
				 errhint("Train it again.")));
	old = MemoryContextSwitchTo(ctx);
	result = km_table_add_encoder(model, slot.payload, slot.bytes);
	MemoryContextSwitchTo(old);
	pfree(slot.payload);
	slot.payload = NULL;
	return result;
}

/*
 * For kernel_model_train(name text, relation regclass, target text, options
 * jsonb) (catalog_sql.c): the stored query of the table's columns (those
 * "features" lists, or every column but the target) and, in *train_opts,
 * the options the named road knows (NULL for none).  nsp is the extension's
 * schema, which the query names.
 */
char *
km_named_table_query(Oid nsp, Oid relid, const char *target, Jsonb *opts,
					 Jsonb **train_opts)
{
	char	   *relname = relation_name(relid);
	Jsonb	   *table_opts;
	TableState	st;
	TupleDesc	desc;
	Relation	rel;
	StringInfoData query;
	bool		label;

	/* the columns and their kinds, checked now (the table options too) */
	rel = relation_open(relid, AccessShareLock);
	desc = CreateTupleDescCopy(RelationGetDescr(rel));
	relation_close(rel, AccessShareLock);
	memset(&st, 0, sizeof(st));
	st.ctx = CurrentMemoryContext;
	/* "refit" is named training's own (named_train.c takes it) */
	km_table_setup(&st, desc, target,
				   opts == NULL || !JB_ROOT_IS_OBJECT(opts) ? opts :
				   DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(opts),
													  CStringGetTextDatum("refit"))));
	label = st.target_label;

	/* the table's keys go to kernel_table_rows, the rest to the named road */
	*train_opts = km_table_training_options(opts);
	table_opts = opts;
	if (opts != NULL && JB_ROOT_IS_OBJECT(opts))
	{
		Datum		d = JsonbPGetDatum(opts);
		JsonbIterator *it = JsonbIteratorInit(&(*train_opts)->root);
		JsonbValue	k;
		JsonbIteratorToken tok;

		d = DirectFunctionCall2(jsonb_delete, d, CStringGetTextDatum("features"));
		while ((tok = JsonbIteratorNext(&it, &k, true)) != WJB_DONE)
			if (tok == WJB_KEY)
				d = DirectFunctionCall2(jsonb_delete, d,
										PointerGetDatum(cstring_to_text_with_len(k.val.string.val,
																				 k.val.string.len)));
		table_opts = DatumGetJsonbP(d);
	}

	initStringInfo(&query);
	appendStringInfo(&query, "SELECT features, target FROM %s.kernel_table_%s(%s::pg_catalog.regclass, %s, ARRAY[",
					 quote_identifier(get_namespace_name(nsp)), label ? "label_rows" : "rows",
					 quote_literal_cstr(relname), quote_literal_cstr(target));
	for (int i = 0; i < st.ncols; i++)
		appendStringInfo(&query, "%s%s", i ? ", " : "", quote_literal_cstr(st.cols[i].name));
	appendStringInfo(&query, "]::pg_catalog.text[], %s::pg_catalog.jsonb)",
					 quote_literal_cstr(table_opts ?
										JsonbToCString(NULL, &table_opts->root, VARSIZE(table_opts)) : "{}"));
	return query.data;
}
