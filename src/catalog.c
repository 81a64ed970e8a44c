/*
 * catalog.c - named models: kernel_model_train, kernel_model_retrain,
 * kernel_model_deploy, kernel_model_drop, kernel_model_get and
 * kernel_predict(name, features).
 *
 * Versions live in the table kernel_models, in the extension's schema.
 * Nobody but its owner (the role that created the extension) may write the
 * table directly; these functions check that the caller has the privileges
 * of the role that owns a model name, then read and write the table as the
 * table's owner with search_path pinned, like a SECURITY DEFINER function.
 * The user's training query always runs as the caller.
 *
 * Training runs the query once, keeps its rows in memory, splits them by a
 * hash of each row's values and the seed, and trains with the kernel_train
 * aggregate itself (over the kept rows, through SPI), so a named model is
 * exactly what kernel_train would give on the same rows and options.
 *
 * Versions of one name are serialised by a transaction-level advisory lock
 * taken after training, so that concurrent trainings of one name overlap
 * and then each get the next version number in turn.
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "compat.h"

#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"

PG_FUNCTION_INFO_V1(kernel_model_train);
PG_FUNCTION_INFO_V1(kernel_model_retrain);
PG_FUNCTION_INFO_V1(kernel_model_deploy);
PG_FUNCTION_INFO_V1(kernel_model_drop);
PG_FUNCTION_INFO_V1(kernel_model_get);
PG_FUNCTION_INFO_V1(kernel_predict_by_name);

/* First key of the advisory lock on a name ("KML1"); the second is its hash. */
#define NAME_LOCK_KEY 0x4B4D4C31

/* The catalog table of the extension these functions belong to. */
typedef struct Catalog
{
	Oid			relid;
	Oid			owner;			/* the table's owner: who writes it */
	char	   *qualified;		/* "schema".kernel_models, quoted */
	char	   *schema;			/* quoted schema name, for kernel_train */
} Catalog;

/* Saved identity while acting as the catalog's owner. */
typedef struct Elevation
{
	Oid			userid;
	int			sec_context;
	int			guc_level;
} Elevation;

/* Error measures of a model on a set of rows (NaN when there are none). */
typedef struct Scores
{
	int64		n;
	double		rmse;
	double		mae;
	double		r2;
} Scores;

/* The deployed version of a name, as the lookup found it. */
typedef struct Deployed
{
	bool		name_exists;
	bool		found;
	char	   *owner;
	int32		version;
	Datum		model;			/* as stored: possibly a TOAST pointer */
} Deployed;

/*
 * The catalog of the schema that holds the function being called: the
 * extension's schema, wherever it was installed.
 */
static void
catalog_open(FunctionCallInfo fcinfo, Catalog *cat)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	char	   *nspname = get_namespace_name(nsp);
	HeapTuple	tup;

	cat->relid = get_relname_relid("kernel_models", nsp);
	if (!OidIsValid(cat->relid) || nspname == NULL)
		elog(ERROR, "kernel_ml catalog table kernel_models not found");
	tup = SearchSysCache1(RELOID, ObjectIdGetDatum(cat->relid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for relation %u", cat->relid);
	cat->owner = ((Form_pg_class) GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	cat->qualified = quote_qualified_identifier(nspname, "kernel_models");
	cat->schema = pstrdup(quote_identifier(nspname));
}

/*
 * Act as the catalog's owner.  With pin_path, also pin search_path so the
 * statements run here resolve operators and functions in pg_catalog only;
 * the lookup done per statement by kernel_predict qualifies its operator
 * instead, since parallel workers may not change settings.  An ERROR
 * restores both, as it does for a SECURITY DEFINER function.
 */
static void
elevate(const Catalog *cat, Elevation *e, bool pin_path)
{
	GetUserIdAndSecContext(&e->userid, &e->sec_context);
	SetUserIdAndSecContext(cat->owner, e->sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	e->guc_level = -1;
	if (pin_path)
	{
		e->guc_level = NewGUCNestLevel();
		(void) set_config_option("search_path", "pg_catalog, pg_temp",
								 PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	}
}

static void
unelevate(Elevation *e)
{
	if (e->guc_level >= 0)
		AtEOXact_GUC(true, e->guc_level);
	SetUserIdAndSecContext(e->userid, e->sec_context);
}

static void
check_spi(int rc, const char *what)
{
	if (rc < 0)
		elog(ERROR, "%s failed: %s", what, SPI_result_code_string(rc));
}

/* Whether the caller has the privileges of the role named owner. */
static bool
owns(const char *owner)
{
	Oid			role = get_role_oid(owner, true);

	if (!OidIsValid(role))
		return superuser();
	return has_privs_of_role(GetUserId(), role);
}

static void
check_owner(const char *name, const char *owner)
{
	if (!owns(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for model \"%s\"", name),
				 errdetail("Model \"%s\" belongs to role \"%s\".", name, owner),
				 errhint("Only roles with the privileges of its owner can train, deploy or drop a model; choose another name.")));
}

static void
check_reader(const Catalog *cat, const char *name, const char *owner)
{
	if (!owns(owner) &&
		pg_class_aclcheck(cat->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for model \"%s\"", name),
				 errdetail("Model \"%s\" belongs to role \"%s\".", name, owner),
				 errhint("Its owner or an administrator can GRANT SELECT ON kernel_models to this role.")));
}

static void pg_attribute_noreturn()
no_such_model(const char *name)
{
	/* an untyped '\x...' literal resolves to the text (by-name) variant */
	if (name[0] == '\\' && name[1] == 'x')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%.*s%s\" does not exist",
						pg_mbcliplen(name, strlen(name), 40), name,
						strlen(name) > 40 ? "..." : ""),
				 errhint("To score with a model value, cast it: kernel_predict('\\x...'::bytea, features).")));
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("model \"%s\" does not exist", name),
			 errhint("kernel_model_train creates a model; kernel_models_overview lists them.")));
}

static void
check_name(const char *name)
{
	if (name[0] == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model name must not be empty")));
}

/* The owner of a name, or NULL when it has no version; SPI connected. */
static char *
name_owner(const Catalog *cat, const char *name)
{
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char	   *owner = NULL;

	args[0] = CStringGetTextDatum(name);
	elevate(cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT owner::text FROM %s WHERE name = $1 LIMIT 1",
											 cat->qualified),
									1, argtypes, args, NULL, false, 1),
			  "owner lookup");
	unelevate(&e);
	if (SPI_processed > 0)
		owner = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	return owner;
}

/* Serialise the versions of one name until the end of the transaction. */
static void
lock_name(const char *name)
{
	int32		h = (int32) hash_bytes((const unsigned char *) name, (int) strlen(name));

	DirectFunctionCall2(pg_advisory_xact_lock_int4,
						Int32GetDatum(NAME_LOCK_KEY), Int32GetDatum(h));
}

/*
 * The deployed version of a name, its model datum copied into ctx.  SPI
 * connected; read_only statements see the caller's snapshot, so a STABLE
 * caller gets the version its statement started with.  The operator is
 * qualified because search_path is not pinned here (see elevate).
 */
static void
lookup_deployed(const Catalog *cat, const char *name, bool read_only,
				MemoryContext ctx, Deployed *out)
{
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	MemoryContext old;

	memset(out, 0, sizeof(*out));
	args[0] = CStringGetTextDatum(name);
	elevate(cat, &e, false);
	check_spi(SPI_execute_with_args(psprintf("SELECT owner, version, model FROM %s "
											 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
											 cat->qualified),
									1, argtypes, args, NULL, read_only, 1),
			  "deployed model lookup");
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		Datum		model;

		out->name_exists = true;
		out->found = true;
		old = MemoryContextSwitchTo(ctx);
		out->owner = SPI_getvalue(tup, desc, 1);
		out->version = DatumGetInt32(SPI_getbinval(tup, desc, 2, &isnull));
		model = SPI_getbinval(tup, desc, 3, &isnull);
		/* a TOAST pointer is copied as such: the cache knows it by its id */
		if (VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(model)))
			out->model = datumCopy(model, false, -1);
		else
			out->model = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model)));
		MemoryContextSwitchTo(old);
	}
	else
	{
		check_spi(SPI_execute_with_args(psprintf("SELECT owner FROM %s "
												 "WHERE name OPERATOR(pg_catalog.=) $1 LIMIT 1",
												 cat->qualified),
										1, argtypes, args, NULL, read_only, 1),
				  "owner lookup");
		if (SPI_processed > 0)
		{
			out->name_exists = true;
			out->owner = MemoryContextStrdup(ctx, SPI_getvalue(SPI_tuptable->vals[0],
															   SPI_tuptable->tupdesc, 1));
		}
	}
	unelevate(&e);
}

/* Like lookup_deployed, with the errors a caller that needs the model wants. */
static void
find_deployed(const Catalog *cat, const char *name, MemoryContext ctx,
			  Deployed *out)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	lookup_deployed(cat, name, true, ctx, out);
	SPI_finish();
	if (!out->name_exists)
		no_such_model(name);
	check_reader(cat, name, out->owner);
	if (!out->found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" has no deployed version", name),
				 errhint("Deploy one with kernel_model_deploy(name, version).")));
}

/* ---------------------------------------------------------------------
 * Training
 * ---------------------------------------------------------------------
 */

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
 * Check that the query is one statement returning two columns that convert
 * to float8[] and float8, then run it and collect its rows: as the role
 * run_as if valid, else as the caller.  SPI connected.
 */
static RowSet *
collect_rows(const char *query, Oid run_as, MemoryContext ctx)
{
	Oid			save_userid;
	int			save_sec_context;
	SPIPlanPtr	plan;
	List	   *sources;
	TupleDesc	desc;
	Oid			want[2] = {FLOAT8ARRAYOID, FLOAT8OID};
	Portal		portal;
	RowSet	   *rs;
	char	   *body = query_body(query);

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	if (OidIsValid(run_as))
		SetUserIdAndSecContext(run_as, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);

	plan = SPI_prepare(body, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	sources = SPI_plan_get_plan_sources(plan);
	if (list_length(sources) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("training query must be a single statement"),
				 errdetail("The query has %d statements.", list_length(sources))));
	desc = ((CachedPlanSource *) linitial(sources))->resultDesc;
	if (desc == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("training query must return rows"),
				 errdetail("The query is a utility statement."),
				 errhint("Give a query that yields (features float8[], target float8).")));
	if (desc->natts != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("training query must return two columns"),
				 errdetail_plural("The query returns %d column.",
								  "The query returns %d columns.",
								  desc->natts, desc->natts),
				 errhint("Give a query that yields (features float8[], target float8).")));
	for (int i = 0; i < 2; i++)
	{
		Oid			got = TupleDescAttr(desc, i)->atttypid;

		if (!can_coerce_type(1, &got, &want[i], COERCION_ASSIGNMENT))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("training query column %d has type %s", i + 1,
							format_type_be(got)),
					 errdetail("The %s column must be of a type that converts to %s.",
							   i == 0 ? "first (features)" : "second (target)",
							   format_type_be(want[i])),
					 errhint("Give a query that yields (features float8[], target float8).")));
	}
	SPI_freeplan(plan);

	plan = SPI_prepare(psprintf("SELECT q.f::pg_catalog.float8[], q.t::pg_catalog.float8 "
								"FROM (\n%s\n) AS q (f, t)", body), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, false);

	rs = rowset_create(ctx, true);
	for (;;)
	{
		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
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
			else
				rowset_add(rs, DatumGetArrayTypeP(f), DatumGetFloat8(t),
						   "kernel_model_train");
		}
		SPI_freetuptable(SPI_tuptable);
		CHECK_FOR_INTERRUPTS();
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	return rs;
}

typedef struct SplitKey
{
	uint64		hash;
	int64		row;
} SplitKey;

static int
split_key_cmp(const void *a, const void *b)
{
	const SplitKey *x = a;
	const SplitKey *y = b;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/*
 * Deterministic split: rank the rows by a hash of their values (features
 * and target) seeded with seed, and hold out the first floor(fraction * n).
 * A row's side depends on its values, not on the order the query returned
 * it in, so an unordered query splits the same way every time, and rows
 * that stay in the table mostly stay on their side as rows are added.
 * Returns the held-out count; order[] lists held-out rows first, each part
 * in the original row order.
 */
static int64
split_rows(const RowSet *rs, int64 seed, double fraction, int64 *order)
{
	int64		n = rs->n;
	int			d = rs->d;
	int64		ntest = (int64) floor(fraction * (double) n);
	SplitKey   *keys = palloc_extended(mul_size(n, sizeof(SplitKey)), MCXT_ALLOC_HUGE);
	double	   *buf = palloc(sizeof(double) * (d + 1));
	bool	   *held = palloc_extended(n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	int64		k = 0;

	for (int64 i = 0; i < n; i++)
	{
		memcpy(buf, rs->X + i * d, sizeof(double) * d);
		buf[d] = rs->y[i];
		keys[i].hash = hash_bytes_extended((const unsigned char *) buf,
										   (int) (sizeof(double) * (d + 1)),
										   (uint64) seed);
		keys[i].row = i;
	}
	qsort(keys, n, sizeof(SplitKey), split_key_cmp);
	for (int64 i = 0; i < ntest; i++)
		held[keys[i].row] = true;
	for (int64 i = 0; i < n; i++)
		if (held[i])
			order[k++] = i;
	for (int64 i = 0; i < n; i++)
		if (!held[i])
			order[k++] = i;
	pfree(keys);
	pfree(buf);
	pfree(held);
	return ntest;
}

/*
 * Train with the kernel_train aggregate on the given rows, the options
 * given as jsonb.  Rows are passed as one flat array and sliced back, so
 * the model is the aggregate's own on exactly these rows in this order.
 * SPI connected; the result is copied into ctx.
 */
static bytea *
train_rows(const Catalog *cat, const RowSet *rs, const int64 *rows, int64 count,
		   Jsonb *options, MemoryContext ctx)
{
	int			d = rs->d;
	Size		total = mul_size((Size) count, (Size) d);
	Datum	   *fv;
	Datum	   *tv;
	Oid			argtypes[5] = {FLOAT8ARRAYOID, INT4OID, FLOAT8ARRAYOID, JSONBOID, INT4OID};
	Datum		args[5];
	bool		isnull;
	Datum		result;
	bytea	   *model;
	MemoryContext old;

	if (count > INT_MAX / 2 || total > MaxAllocSize / sizeof(Datum))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for a named model"),
				 errdetail("%lld rows of %d features.", (long long) count, d)));
	fv = palloc(total * sizeof(Datum));
	tv = palloc((Size) count * sizeof(Datum));
	for (int64 i = 0; i < count; i++)
	{
		const double *x = rs->X + rows[i] * d;

		for (int j = 0; j < d; j++)
			fv[i * d + j] = Float8GetDatum(x[j]);
		tv[i] = Float8GetDatum(rs->y[rows[i]]);
	}
	args[0] = PointerGetDatum(construct_array(fv, (int) total, FLOAT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[1] = Int32GetDatum(d);
	args[2] = PointerGetDatum(construct_array(tv, (int) count, FLOAT8OID, 8,
											  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	args[3] = JsonbPGetDatum(options);
	args[4] = Int32GetDatum((int32) count);
	pfree(fv);
	pfree(tv);

	check_spi(SPI_execute_with_args(psprintf("SELECT %s.kernel_train($1[(i - 1) * $2 + 1 : i * $2], $3[i], $4) "
											 "FROM pg_catalog.generate_series(1, $5) AS i",
											 cat->schema),
									5, argtypes, args, NULL, false, 1),
			  "kernel_train");
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		elog(ERROR, "kernel_train returned no model for %lld rows", (long long) count);
	old = MemoryContextSwitchTo(ctx);
	model = pg_detoast_datum_copy((struct varlena *) DatumGetPointer(result));
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);
	pfree(DatumGetPointer(args[0]));
	pfree(DatumGetPointer(args[2]));
	return model;
}

/* RMSE, MAE and R^2 of a model on the given rows. */
static void
score_rows(Datum model, const RowSet *rs, const int64 *rows, int64 count,
		   Scores *out)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml scoring",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ModelCache *mc = km_model_cache_create(tmp);
	int			d = rs->d;
	Datum	   *zeros = palloc0(sizeof(Datum) * d);
	ArrayType  *row;
	double		sse = 0.0;
	double		sae = 0.0;
	double		ymean = 0.0;
	double		sst = 0.0;

	out->n = count;
	out->rmse = out->mae = out->r2 = NAN;
	if (count == 0)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(tmp);
		return;
	}
	for (int j = 0; j < d; j++)
		zeros[j] = Float8GetDatum(0.0);
	/* one feature array, refilled for every row */
	row = construct_array(zeros, d, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	for (int64 i = 0; i < count; i++)
		ymean += rs->y[rows[i]];
	ymean /= (double) count;
	for (int64 i = 0; i < count; i++)
	{
		double		y = rs->y[rows[i]];
		double		e;

		memcpy(ARR_DATA_PTR(row), rs->X + rows[i] * d, sizeof(double) * d);
		e = km_model_cache_predict(mc, model, row) - y;
		sse += e * e;
		sae += fabs(e);
		sst += (y - ymean) * (y - ymean);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	out->rmse = sqrt(sse / (double) count);
	out->mae = sae / (double) count;
	out->r2 = sst > 0.0 ? 1.0 - sse / sst : NAN;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/* ---- metrics as json ---- */

static void
json_sep(StringInfo buf)
{
	char		last = buf->len > 0 ? buf->data[buf->len - 1] : '{';

	if (last != '{' && last != '[')
		appendStringInfoString(buf, ", ");
}

static void
json_num(StringInfo buf, const char *key, double v)
{
	json_sep(buf);
	escape_json(buf, key);
	appendStringInfo(buf, ": %s", isfinite(v) ? float8out_internal(v) : "null");
}

static void
json_i64(StringInfo buf, const char *key, int64 v)
{
	json_sep(buf);
	escape_json(buf, key);
	appendStringInfo(buf, ": " INT64_FORMAT, v);
}

static void
json_str(StringInfo buf, const char *key, const char *v)
{
	json_sep(buf);
	escape_json(buf, key);
	appendStringInfoString(buf, ": ");
	if (v)
		escape_json(buf, v);
	else
		appendStringInfoString(buf, "null");
}

static void
json_bool(StringInfo buf, const char *key, bool v)
{
	json_sep(buf);
	escape_json(buf, key);
	appendStringInfo(buf, ": %s", v ? "true" : "false");
}

static void
json_scores(StringInfo buf, const char *key, const Scores *s)
{
	json_sep(buf);
	escape_json(buf, key);
	if (s->n == 0)
	{
		appendStringInfoString(buf, ": null");
		return;
	}
	appendStringInfoString(buf, ": {");
	json_num(buf, "rmse", s->rmse);
	json_num(buf, "mae", s->mae);
	json_num(buf, "r2", s->r2);
	appendStringInfoChar(buf, '}');
}

static const char *
deploy_name(km_deploy d)
{
	return d == KM_DEPLOY_ALWAYS ? "always" : d == KM_DEPLOY_NEVER ? "never" : "if_better";
}

/* The "refit" option belongs to named training only; read and strip it. */
static Jsonb *
take_refit(Jsonb *options, bool *refit)
{
	JsonbValue *v;

	*refit = false;
	if (!JB_ROOT_IS_OBJECT(options))
		return options;			/* km_options_parse reports it */
	v = getKeyJsonValueFromContainer(&options->root, "refit", 5, NULL);
	if (v == NULL)
		return options;
	if (v->type != jbvBool)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"refit\""),
				 errdetail("Option \"refit\" must be true or false.")));
	*refit = v->val.boolean;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(options),
											  CStringGetTextDatum("refit")));
}

/*
 * Train a new version of name from query and options, store it, deploy it
 * per the policy, and append the result row to the function's tuplestore.
 * The query runs as run_as if valid, else as the caller.
 */
static void
train_named(FunctionCallInfo fcinfo, const Catalog *cat, const char *name,
			const char *query, Jsonb *options, Oid run_as)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext work;
	MemoryContext old;
	km_options	opts;
	bool		refit;
	Jsonb	   *train_options;
	char	   *owner;
	RowSet	   *rs;
	int64	   *order;
	int64		ntest;
	int64		ntrain;
	bytea	   *split_model;
	bytea	   *model;
	Scores		train_scores;
	Scores		test_scores;
	Scores		prev_scores;
	Deployed	prev;
	int32		version;
	bool		deploy;
	const char *reason;
	StringInfoData mbuf;
	Jsonb	   *metrics;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	uint32		pn,
				pd,
				pc;
	km_error	err;

	check_name(name);
	train_options = take_refit(options, &refit);
	km_options_parse(train_options, &opts);

	work = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml named training",
								 ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* refuse early, before the work; checked again under the lock */
	owner = name_owner(cat, name);
	if (owner != NULL)
		check_owner(name, owner);

	rs = collect_rows(query, run_as, work);
	if (rs->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("training query returned no usable rows"),
				 rs->seen == 0 ?
				 errdetail("The query returned no rows.") :
				 errdetail("All %lld rows have a null feature array or target.",
						   (long long) rs->seen)));

	old = MemoryContextSwitchTo(work);
	order = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	MemoryContextSwitchTo(old);
	ntest = split_rows(rs, opts.seed, opts.test_fraction, order);
	ntrain = rs->n - ntest;

	split_model = train_rows(cat, rs, order + ntest, ntrain, train_options, work);
	score_rows(PointerGetDatum(split_model), rs, order + ntest, ntrain, &train_scores);
	score_rows(PointerGetDatum(split_model), rs, order, ntest, &test_scores);
	model = split_model;
	if (refit && ntest > 0)
	{
		int64	   *all = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);

		for (int64 i = 0; i < rs->n; i++)
			all[i] = i;
		model = train_rows(cat, rs, all, rs->n, train_options, work);
		pfree(all);
	}

	/* From here on, one training of this name at a time. */
	lock_name(name);
	owner = name_owner(cat, name);
	if (owner != NULL)
		check_owner(name, owner);
	else
		owner = GetUserNameFromId(GetUserId(), false);
	{
		Elevation	e;
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(name)};
		bool		isnull;
		Datum		v;

		elevate(cat, &e, true);
		check_spi(SPI_execute_with_args(psprintf("SELECT max(version) FROM %s WHERE name = $1",
												 cat->qualified),
										1, argtypes, args, NULL, false, 1),
				  "version lookup");
		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		version = isnull ? 1 : DatumGetInt32(v) + 1;
		unelevate(&e);
	}
	lookup_deployed(cat, name, false, work, &prev);

	/* the deployment decision */
	prev_scores.n = 0;
	prev_scores.rmse = prev_scores.mae = prev_scores.r2 = NAN;
	if (prev.found && opts.deploy == KM_DEPLOY_IF_BETTER)
	{
		bytea	   *pm = (bytea *) pg_detoast_datum((struct varlena *) DatumGetPointer(prev.model));

		if (km_model_peek((const uint8 *) VARDATA_ANY(pm), VARSIZE_ANY_EXHDR(pm),
						  &pn, &pd, &pc, &err) != KM_OK)
			km_raise(&err);
	}
	switch (opts.deploy)
	{
		case KM_DEPLOY_ALWAYS:
			deploy = true;
			reason = "deploy is \"always\"";
			break;
		case KM_DEPLOY_NEVER:
			deploy = false;
			reason = "deploy is \"never\"";
			break;
		default:
			if (!prev.found)
			{
				deploy = true;
				reason = "no version was deployed";
			}
			else if ((int) pd != rs->d)
			{
				deploy = true;
				reason = "the deployed version takes a different number of features";
			}
			else if (ntest == 0)
			{
				deploy = false;
				reason = "no hold-out rows to compare on";
			}
			else
			{
				score_rows(prev.model, rs, order, ntest, &prev_scores);
				deploy = test_scores.rmse < prev_scores.rmse;
				reason = deploy ? "lower hold-out RMSE than the deployed version" :
					"hold-out RMSE not lower than the deployed version's";
			}
			break;
	}

	initStringInfo(&mbuf);
	appendStringInfoChar(&mbuf, '{');
	json_i64(&mbuf, "rows", rs->n);
	json_i64(&mbuf, "rows_skipped", rs->skipped);
	json_i64(&mbuf, "train_rows", ntrain);
	json_i64(&mbuf, "holdout_rows", ntest);
	json_num(&mbuf, "test_fraction", opts.test_fraction);
	json_i64(&mbuf, "seed", opts.seed);
	json_bool(&mbuf, "refit", refit && ntest > 0);
	json_scores(&mbuf, "train", &train_scores);
	json_scores(&mbuf, "holdout", &test_scores);
	json_sep(&mbuf);
	appendStringInfoString(&mbuf, "\"deploy\": {");
	json_str(&mbuf, "policy", deploy_name(opts.deploy));
	json_bool(&mbuf, "deployed", deploy);
	json_str(&mbuf, "reason", reason);
	if (prev.found)
		json_i64(&mbuf, "previous_version", prev.version);
	else
		json_str(&mbuf, "previous_version", NULL);
	json_num(&mbuf, "previous_holdout_rmse", prev_scores.rmse);
	json_num(&mbuf, "new_holdout_rmse", test_scores.rmse);
	appendStringInfoString(&mbuf, "}}");
	old = MemoryContextSwitchTo(work);
	metrics = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(mbuf.data)));
	MemoryContextSwitchTo(old);

	/* store, and deploy */
	{
		Elevation	e;
		Oid			argtypes[10] = {TEXTOID, INT4OID, TEXTOID, TEXTOID, JSONBOID,
		BYTEAOID, JSONBOID, INT8OID, INT4OID, BOOLOID};
		Datum		args[10];
		int64		fitted = (refit && ntest > 0) ? rs->n : ntrain;

		args[0] = CStringGetTextDatum(name);
		args[1] = Int32GetDatum(version);
		args[2] = CStringGetTextDatum(owner);
		args[3] = CStringGetTextDatum(query);
		args[4] = JsonbPGetDatum(options);
		args[5] = PointerGetDatum(model);
		args[6] = JsonbPGetDatum(metrics);
		args[7] = Int64GetDatum(fitted);
		args[8] = Int32GetDatum(rs->d);
		args[9] = BoolGetDatum(deploy);

		elevate(cat, &e, true);
		if (deploy)
			check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
													 "WHERE name = $1 AND deployed",
													 cat->qualified),
											1, argtypes, args, NULL, false, 0),
					  "undeploy");
		check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s (name, version, owner, source_query, "
												 "options, model, metrics, n_train, n_features, deployed) "
												 "VALUES ($1, $2, $3::name, $4, $5, $6, $7, $8, $9, $10) "
												 "ON CONFLICT (name, version) DO NOTHING",
												 cat->qualified),
										10, argtypes, args, NULL, false, 0),
				  "insert");
		unelevate(&e);
		/* only under a transaction snapshot can a newer version be invisible */
		if (SPI_processed != 1)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("could not store version %d of model \"%s\"", version, name),
					 errdetail("A concurrent transaction stored that version first."),
					 errhint("Retry; training in READ COMMITTED waits for the other training instead.")));
	}
	SPI_finish();

	values[0] = CStringGetTextDatum(name);
	values[1] = Int32GetDatum(version);
	values[2] = BoolGetDatum(deploy);
	values[3] = JsonbPGetDatum(metrics);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	MemoryContextDelete(work);
}

/* kernel_model_train(name, query, options) */
Datum
kernel_model_train(PG_FUNCTION_ARGS)
{
	Catalog		cat;
	Jsonb	   *options;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", PG_ARGISNULL(0) ? "name" : "query")));
	options = PG_ARGISNULL(2) ?
		DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"))) :
		PG_GETARG_JSONB_P(2);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	train_named(fcinfo, &cat, text_to_cstring(PG_GETARG_TEXT_PP(0)),
				text_to_cstring(PG_GETARG_TEXT_PP(1)), options, InvalidOid);
	return (Datum) 0;
}

/*
 * kernel_model_retrain(name): the query and options of the latest version,
 * the query run as the model's owner.
 */
Datum
kernel_model_retrain(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Catalog		cat;
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	char	   *owner;
	char	   *query;
	Jsonb	   *options;
	Datum		options_datum;
	bool		isnull;
	MemoryContext caller = CurrentMemoryContext;

	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	args[0] = CStringGetTextDatum(name);
	elevate(&cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT owner::text, source_query, options FROM %s "
											 "WHERE name = $1 ORDER BY version DESC LIMIT 1",
											 cat.qualified),
									1, argtypes, args, NULL, false, 1),
			  "latest version lookup");
	unelevate(&e);
	if (SPI_processed == 0)
		no_such_model(name);
	owner = MemoryContextStrdup(caller, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));
	query = MemoryContextStrdup(caller, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
	options_datum = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 3, &isnull),
									  false, -1);
	SPI_finish();
	/* detoast only now, into the caller's context */
	options = DatumGetJsonbP(options_datum);
	check_owner(name, owner);

	/*
	 * The stored query runs as the model's owner, so that a superuser's
	 * scheduled job does not run another role's query with its own rights.
	 */
	train_named(fcinfo, &cat, name, query, options, get_role_oid(owner, true));
	return (Datum) 0;
}

/* kernel_model_deploy(name, version) */
Datum
kernel_model_deploy(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		version = PG_GETARG_INT32(1);
	Catalog		cat;
	Elevation	e;
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	char	   *owner;
	bool		isnull;
	int32		latest;

	catalog_open(fcinfo, &cat);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	lock_name(name);
	owner = name_owner(&cat, name);
	if (owner == NULL)
		no_such_model(name);
	check_owner(name, owner);

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	elevate(&cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT count(*) FILTER (WHERE version = $2), max(version) "
											 "FROM %s WHERE name = $1", cat.qualified),
									2, argtypes, args, NULL, false, 1),
			  "version lookup");
	latest = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("version %d of model \"%s\" does not exist", version, name),
				 errdetail("The latest version of model \"%s\" is %d.", name, latest),
				 errhint("kernel_models lists the versions.")));
	/* two statements: the unique index on deployed is checked row by row */
	check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
											 "WHERE name = $1 AND deployed AND version <> $2",
											 cat.qualified),
									2, argtypes, args, NULL, false, 0),
			  "undeploy");
	check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = true "
											 "WHERE name = $1 AND version = $2 AND NOT deployed",
											 cat.qualified),
									2, argtypes, args, NULL, false, 0),
			  "deploy");
	unelevate(&e);
	SPI_finish();
	PG_RETURN_VOID();
}

/* kernel_model_drop(name, version DEFAULT NULL) */
Datum
kernel_model_drop(PG_FUNCTION_ARGS)
{
	char	   *name;
	Catalog		cat;
	Elevation	e;
	Oid			argtypes[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	char	   *owner;
	int64		dropped;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	catalog_open(fcinfo, &cat);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	lock_name(name);
	owner = name_owner(&cat, name);
	if (owner == NULL)
		no_such_model(name);
	check_owner(name, owner);

	args[0] = CStringGetTextDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	elevate(&cat, &e, true);
	if (PG_ARGISNULL(1))
		check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name = $1",
												 cat.qualified),
										1, argtypes, args, NULL, false, 0),
				  "drop");
	else
	{
		int32		version = PG_GETARG_INT32(1);
		bool		isnull;
		HeapTuple	tup;

		check_spi(SPI_execute_with_args(psprintf("SELECT deployed FROM %s "
												 "WHERE name = $1 AND version = $2",
												 cat.qualified),
										2, argtypes, args, NULL, false, 1),
				  "version lookup");
		if (SPI_processed == 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("version %d of model \"%s\" does not exist", version, name),
					 errhint("kernel_models lists the versions.")));
		tup = SPI_tuptable->vals[0];
		if (DatumGetBool(SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull)))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("cannot drop the deployed version of model \"%s\"", name),
					 errdetail("Version %d is deployed.", version),
					 errhint("Deploy another version with kernel_model_deploy first, or drop every version with kernel_model_drop(name).")));
		check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name = $1 AND version = $2",
												 cat.qualified),
										2, argtypes, args, NULL, false, 0),
				  "drop");
	}
	dropped = (int64) SPI_processed;
	unelevate(&e);
	SPI_finish();
	PG_RETURN_INT32((int32) dropped);
}

/* kernel_model_get(name): the deployed model, detoasted */
Datum
kernel_model_get(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Catalog		cat;
	Deployed	dep;

	catalog_open(fcinfo, &cat);
	find_deployed(&cat, name, CurrentMemoryContext, &dep);
	PG_RETURN_BYTEA_P(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(dep.model)));
}

/* ---------------------------------------------------------------------
 * kernel_predict(name, features)
 *
 * The deployed version is looked up once per snapshot and kept, with its
 * decoded model, in fn_extra.  Within one SQL statement the snapshot does
 * not change, so the statement keeps the version it started with even if
 * another session deploys a new one meanwhile.  A FmgrInfo that outlives a
 * statement (a PL/pgSQL expression evaluated in a loop) sees a new
 * snapshot and looks again; an unchanged model is recognised by its TOAST
 * pointer or its bytes and is not decoded again.
 * ---------------------------------------------------------------------
 */

/* What identifies the visibility a snapshot gives. */
typedef struct SnapKey
{
	bool		valid;
	TransactionId xmin;
	TransactionId xmax;
	CommandId	curcid;
	uint32		xcnt;
	int32		subxcnt;
	bool		suboverflowed;
	bool		takenDuringRecovery;
	TransactionId *xip;			/* xcnt, then subxcnt ids */
	int			cap;
} SnapKey;

typedef struct NamedEntry
{
	struct NamedEntry *next;
	text	   *name;			/* as given, untoasted */
	char	   *cname;
	uint64		generation;		/* of the snapshot it was looked up under */
	Datum		model;			/* in the cache's context */
	ModelCache *mc;
} NamedEntry;

typedef struct NamedCache
{
	MemoryContext ctx;
	SnapKey		key;
	uint64		generation;
	NamedEntry *entries;
} NamedCache;

static bool
snapshot_matches(const SnapKey *k, Snapshot s)
{
	return k->valid && k->xmin == s->xmin && k->xmax == s->xmax &&
		k->curcid == s->curcid && k->xcnt == s->xcnt &&
		k->subxcnt == s->subxcnt && k->suboverflowed == s->suboverflowed &&
		k->takenDuringRecovery == s->takenDuringRecovery &&
		(s->xcnt == 0 ||
		 memcmp(k->xip, s->xip, sizeof(TransactionId) * s->xcnt) == 0) &&
		(s->subxcnt <= 0 ||
		 memcmp(k->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt) == 0);
}

static void
snapshot_remember(MemoryContext ctx, SnapKey *k, Snapshot s)
{
	int			need = (int) s->xcnt + Max(s->subxcnt, 0);

	if (need > k->cap)
	{
		if (k->xip)
			pfree(k->xip);
		k->xip = MemoryContextAlloc(ctx, sizeof(TransactionId) * Max(need, 1));
		k->cap = need;
	}
	k->xmin = s->xmin;
	k->xmax = s->xmax;
	k->curcid = s->curcid;
	k->xcnt = s->xcnt;
	k->subxcnt = s->subxcnt;
	k->suboverflowed = s->suboverflowed;
	k->takenDuringRecovery = s->takenDuringRecovery;
	if (s->xcnt > 0)
		memcpy(k->xip, s->xip, sizeof(TransactionId) * s->xcnt);
	if (s->subxcnt > 0)
		memcpy(k->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt);
	k->valid = true;
}

static bool
same_text(const text *a, const text *b)
{
	return a == b ||
		(VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		 memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0);
}

Datum
kernel_predict_by_name(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	NamedCache *cache = (NamedCache *) fcinfo->flinfo->fn_extra;
	NamedEntry *entry;
	Snapshot	snap = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(NamedCache));
		cache->ctx = fcinfo->flinfo->fn_mcxt;
		cache->generation = 1;
		fcinfo->flinfo->fn_extra = cache;
	}
	if (snap == NULL || !snapshot_matches(&cache->key, snap))
	{
		cache->generation++;
		if (snap != NULL)
			snapshot_remember(cache->ctx, &cache->key, snap);
		else
			cache->key.valid = false;
	}

	for (entry = cache->entries; entry != NULL; entry = entry->next)
		if (same_text(entry->name, name))
			break;
	if (entry == NULL)
	{
		entry = MemoryContextAllocZero(cache->ctx, sizeof(NamedEntry));
		entry->name = (text *) MemoryContextAlloc(cache->ctx, VARSIZE_ANY(name));
		memcpy(entry->name, name, VARSIZE_ANY(name));
		entry->cname = MemoryContextStrdup(cache->ctx, text_to_cstring(name));
		entry->mc = km_model_cache_create(cache->ctx);
		entry->next = cache->entries;
		cache->entries = entry;
	}
	if (entry->generation != cache->generation)
	{
		Catalog		cat;
		Deployed	dep;

		catalog_open(fcinfo, &cat);
		find_deployed(&cat, entry->cname, cache->ctx, &dep);
		pfree(dep.owner);
		if (entry->model != (Datum) 0)
			pfree(DatumGetPointer(entry->model));
		entry->model = dep.model;
		entry->generation = cache->generation;
	}
	PG_RETURN_FLOAT8(km_model_cache_predict(entry->mc, entry->model,
											PG_GETARG_ARRAYTYPE_P(1)));
}
