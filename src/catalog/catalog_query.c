/*
 * catalog_query.c - a named model's training query, run safely, its rows
 * kept: the one place user SQL runs inside kernel_model_train and
 * kernel_model_retrain.
 *
 * The query runs as ANALYZE runs a user's index expressions: as one role
 * (the caller training, the owner retraining), in a security-restricted
 * operation, with search_path pinned to the one stored with the version
 * inside a GUC nest level that is rolled back after it.  No other SQL runs
 * while its settings are in effect, and no SQL is run with the caller's
 * rights on rows it produced: training is called directly on the kept rows.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"

#include "model.h"
#include "options.h"

#include "catalog_query.h"

/* The query without trailing semicolons and blanks, for a subquery. */
static char *
query_body(const char *query)
{
	char	   *q = pstrdup(query);
	int			len = strlen(q);

	while (len > 0 && (q[len - 1] == ';' || isspace((unsigned char) q[len - 1])))
		q[--len] = '\0';
	return q;
}

/*
 * The caller's effective search_path as a list of schema names that means
 * the same in any session and as any role: the schemas it resolves to now
 * ("$user" expanded, missing schemas dropped), without the session's
 * temporary schema.  pg_catalog is listed only where the caller put it
 * explicitly; otherwise it is searched first, as always.
 */
char *
catalog_search_path(void)
{
	List	   *path = fetch_search_path(false);
	ListCell   *lc;
	StringInfoData buf;

	initStringInfo(&buf);
	foreach(lc, path)
	{
		Oid			nsp = lfirst_oid(lc);
		char	   *nspname;

		if (isAnyTempNamespace(nsp))
			continue;
		nspname = get_namespace_name(nsp);
		if (nspname == NULL)
			continue;
		if (buf.len > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(nspname));
	}
	list_free(path);
	return buf.data;
}

/*
 * Whether the second column holds class labels, read as text: a type of
 * the string category (text, varchar, char, name, ...) or a boolean ('false'
 * and 'true'), by the inference kernel_train's signatures follow
 * (km_label_kind_of_type).  Any other type must convert to float8, a
 * regression target (or labels for a classification method).
 */
static bool
label_column_is_text(Oid type)
{
	return km_label_kind_of_type(type) == KM_LABELS_CLASSES;
}

/*
 * The query's result columns must convert to (float8[], float8), or the
 * second be text; returns whether it is text.  One column, the features
 * alone, is the query of a method without a target (kernel_fit's, whose
 * options named training checks against it): *features_only.
 */
static bool
check_query_columns(TupleDesc desc, bool *features_only)
{
	Oid			want[2] = {FLOAT8ARRAYOID, FLOAT8OID};

	if (desc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("training query must return rows"),
				 errdetail("The query is a utility statement."),
				 errhint("Give a query that yields (features float8[], target float8).")));
	*features_only = desc->natts == 1;
	if (desc->natts == 1)
	{
		Oid			got = TupleDescAttr(desc, 0)->atttypid;
		Oid			want = FLOAT8ARRAYOID;

		if (!can_coerce_type(1, &got, &want, COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("training query column 1 has type %s", format_type_be(got)),
					 errdetail("The first (features) column must be of a type that converts to %s.",
							   format_type_be(want)),
					 errhint("Give a query that yields (features float8[]) for a method without a target, such as \"pca\".")));
		return false;
	}
	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("training query must return one or two columns"),
				 errdetail_plural("The query returns %d column.",
								  "The query returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("Give a query that yields (features float8[], target float8).")));
	for (int i = 0; i < 2; i++)
	{
		Oid			got = TupleDescAttr(desc, i)->atttypid;

		if (i == 1 && label_column_is_text(got))
			return true;
		if (!can_coerce_type(1, &got, &want[i], COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("training query column %d has type %s", i + 1,
							format_type_be(got)),
					 i == 0 ?
					 errdetail("The first (features) column must be of a type that converts to %s.",
							   format_type_be(want[i])) :
					 errdetail("The second (target) column must be of a string type (labels) or a type that converts to %s.",
							   format_type_be(want[i])),
					 i == 0 ?
					 errhint("Give a query that yields (features float8[], target float8).") :
					 errhint("Give a query that yields (features float8[], target float8) or (features float8[], label text).")));
	}
	return false;
}

/*
 * Plan body as a single statement and check its columns; whether labels
 * are text, and whether it returns the features alone (*features_only).
 */
static bool
check_query(const char *body, bool *features_only)
{
	SPIPlanPtr	plan = SPI_prepare(body, 0, NULL);
	List	   *sources;
	bool		text_label;

	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("training query must be a single statement"),
				 errdetail("The query has %d statements.", list_length(sources))));
	text_label = check_query_columns(((CachedPlanSource *) linitial(sources))->resultDesc,
									 features_only);
	SPI_freeplan(plan);
	return text_label;
}

/*
 * Run body (checked) cast to (float8[], float8), or (float8[], text) for
 * text labels, its rows into a new RowSet.
 */
static RowSet *
fetch_rows(const char *body, bool text_label, bool features_only, MemoryContext ctx)
{
	SPIPlanPtr	plan;
	Portal		portal;
	RowSet	   *rs;
	MemoryContext batch;

	/* the features alone: a target of 0 per row, as kernel_fit's state */
	plan = SPI_prepare(features_only ?
					   psprintf("SELECT q.f::pg_catalog.float8[], 0::pg_catalog.float8 "
								"FROM (\n%s\n) AS q (f)", body) :
					   psprintf("SELECT q.f::pg_catalog.float8[], q.t::pg_catalog.%s "
								"FROM (\n%s\n) AS q (f, t)",
								text_label ? "text" : "float8", body), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);

	rs = rowset_create(ctx, true);
	if (text_label)
		rs->label_type = KM_LABEL_TEXT;
	/*
	 * A feature array stored with a short header or compressed is detoasted
	 * into a copy: made in a context reset after each batch, or every row's
	 * copy would stay in the SPI procedure context until SPI_finish().
	 */
	batch = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml row batch",
								  ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		MemoryContext old;

		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		old = MemoryContextSwitchTo(batch);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			HeapTuple	tup = SPI_tuptable->vals[i];
			bool		fnull;
			bool		tnull;
			Datum		f = SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &fnull);
			Datum		t = SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &tnull);

			rs->seen++;
			if (fnull || tnull)
				rs->skipped++;
			else if (text_label)
				rowset_add_label(rs, DatumGetArrayTypeP(f), DatumGetTextPP(t),
								 "kernel_model_train");
			else
				rowset_add(rs, DatumGetArrayTypeP(f), DatumGetFloat8(t),
						   "kernel_model_train");
		}
		MemoryContextSwitchTo(old);
		MemoryContextReset(batch);
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextDelete(batch);
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	/* rows only counted (an exact model of them would not fit): the whole need */
	rowset_check_kept(rs, "kernel_model_train");
	return rs;
}

/* The identity and settings saved while the query's SQL runs. */
typedef struct QueryRun
{
	Oid			save_userid;
	int			save_sec_context;
	int			guc_level;
} QueryRun;

/*
 * From here until query_leave, SQL runs as the role run_as (the caller
 * training, or the model's owner retraining), in a security-restricted
 * operation, with search_path set to path (search_path, then pg_temp,
 * last) inside a GUC nest level that is rolled back afterwards, so nothing
 * the query sets outlives it.  On an error, the (sub)transaction abort
 * restores the user and the settings.  Parallel workers of a query run
 * meanwhile take the same user, security context and settings from the
 * leader.
 */
static void
query_enter(Oid run_as, const char *path, QueryRun *qr)
{
	GetUserIdAndSecContext(&qr->save_userid, &qr->save_sec_context);
	SetUserIdAndSecContext(run_as, qr->save_sec_context | SECURITY_RESTRICTED_OPERATION);
	qr->guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
}

static void
query_leave(QueryRun *qr)
{
	AtEOXact_GUC(false, qr->guc_level);
	SetUserIdAndSecContext(qr->save_userid, qr->save_sec_context);
}

static char *
pinned_path(const char *search_path)
{
	return search_path[0] != '\0' ?
		psprintf("%s, pg_temp", search_path) : pstrdup("pg_temp");
}

RowSet *
catalog_collect_rows(const char *query, Oid run_as, const char *search_path,
					 MemoryContext ctx)
{
	QueryRun	qr;
	RowSet	   *rs;
	bool		text_label;
	bool		features_only;
	char	   *body = query_body(query);

	query_enter(run_as, pinned_path(search_path), &qr);
	text_label = check_query(body, &features_only);
	rs = fetch_rows(body, text_label, features_only, ctx);
	query_leave(&qr);
	return rs;
}

/*
 * A temporary relation the query reads (through views too: the rewritten
 * query's dependencies), or InvalidOid: parsed as run_as with search_path,
 * as it runs.  Relations read only inside functions it calls are not seen.
 */
Oid
catalog_query_temp_relation(const char *query, Oid run_as, const char *search_path)
{
	QueryRun	qr;
	SPIPlanPtr	plan;
	ListCell   *lc;
	Oid			found = InvalidOid;

	query_enter(run_as, pinned_path(search_path), &qr);
	plan = SPI_prepare(query_body(query), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	foreach(lc, SPI_plan_get_plan_sources(plan))
	{
		CachedPlanSource *ps = (CachedPlanSource *) lfirst(lc);
		ListCell   *rc;

		foreach(rc, ps->relationOids)
		{
			if (!OidIsValid(found) &&
				get_rel_persistence(lfirst_oid(rc)) == RELPERSISTENCE_TEMP)
				found = lfirst_oid(rc);
		}
	}
	SPI_freeplan(plan);
	query_leave(&qr);
	return found;
}

KmLabelKind
catalog_query_label_kind(const char *query, Oid run_as, const char *search_path,
						 bool *features_only)
{
	QueryRun	qr;
	bool		text_label;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	query_enter(run_as, pinned_path(search_path), &qr);
	text_label = check_query(query_body(query), features_only);
	query_leave(&qr);
	SPI_finish();
	return text_label ? KM_LABELS_CLASSES : KM_LABELS_NUMERIC;
}

void
catalog_query_open(CatalogQuery *q, const char *query, Oid run_as,
				   const char *search_path)
{
	QueryRun	qr;
	bool		features_only;

	q->body = query_body(query);
	q->fn = "kernel_model_train";
	q->run_as = run_as;
	q->path = pinned_path(search_path);
	query_enter(run_as, q->path, &qr);
	q->text_label = check_query(q->body, &features_only);
	query_leave(&qr);
	/* the features alone (a method without a target): a target of 0 for every row */
	if (features_only)
		q->source = psprintf("(SELECT q.f::pg_catalog.float8[] AS f, 0::pg_catalog.float8 AS y "
							 "FROM (\n%s\n) AS q (f)) AS s", q->body);
	else
		q->source = psprintf("(SELECT q.f::pg_catalog.float8[] AS f, q.t::pg_catalog.%s AS y "
							 "FROM (\n%s\n) AS q (f, t)) AS s",
							 q->text_label ? "text" : "float8", q->body);
}

/*
 * One statement over the query's rows, planned with CURSOR_OPT_PARALLEL_OK
 * (SPI_execute_with_args does): read-only, so every pass of one training
 * sees the rows of the same snapshot, the calling statement's.
 */
int
catalog_query_run(const CatalogQuery *q, const char *sql, int nargs,
				  Oid *argtypes, Datum *values)
{
	QueryRun	qr;
	int			rc;

	query_enter(q->run_as, q->path, &qr);
	rc = SPI_execute_with_args(sql, nargs, argtypes, values, NULL, true, 0);
	query_leave(&qr);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %s", SPI_result_code_string(rc));
	return rc;
}

List *
catalog_query_relations(const CatalogQuery *q, const char *sql, int nargs, Oid *argtypes)
{
	QueryRun	qr;
	SPIPlanPtr	plan;
	List	   *rels = NIL;
	ListCell   *lc;

	query_enter(q->run_as, q->path, &qr);
	plan = SPI_prepare(sql, nargs, argtypes);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	foreach(lc, SPI_plan_get_plan_sources(plan))
		rels = list_concat(rels, ((CachedPlanSource *) lfirst(lc))->relationOids);
	rels = list_copy(rels);
	SPI_freeplan(plan);
	query_leave(&qr);
	return rels;
}

int
catalog_query_call(const CatalogQuery *q, const char *sql, int nargs,
				   Oid *argtypes, Datum *values)
{
	QueryRun	qr;
	int			rc;

	query_enter(q->run_as, q->path, &qr);
	rc = SPI_execute_with_args(sql, nargs, argtypes, values, NULL, false, 1);
	query_leave(&qr);
	return rc;
}

void
catalog_query_scan(const CatalogQuery *q, const char *sql, int nargs,
				   Oid *argtypes, Datum *values, long fetch,
				   CatalogBatchFn batch, void *arg)
{
	QueryRun	qr;
	Portal		portal;
	MemoryContext batch_cxt = AllocSetContextCreate(CurrentMemoryContext,
													"kernel_ml pass batch",
													ALLOCSET_DEFAULT_SIZES);

	query_enter(q->run_as, q->path, &qr);
	portal = SPI_cursor_open_with_args(NULL, sql, nargs, argtypes, values, NULL,
									   true, 0);
	if (portal == NULL)
		elog(ERROR, "SPI_cursor_open_with_args failed: %s", SPI_result_code_string(SPI_result));
	for (;;)
	{
		MemoryContext old;

		SPI_cursor_fetch(portal, true, Max(fetch, 1));
		if (SPI_processed == 0)
			break;
		/* detoasted feature arrays go into the batch context (as fetch_rows) */
		old = MemoryContextSwitchTo(batch_cxt);
		batch(arg, SPI_tuptable, SPI_processed);
		MemoryContextSwitchTo(old);
		MemoryContextReset(batch_cxt);
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	query_leave(&qr);
	MemoryContextDelete(batch_cxt);
}
