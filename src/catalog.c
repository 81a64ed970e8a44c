/*
 * catalog.c - named models: kernel_model_train, kernel_model_retrain,
 * kernel_model_deploy, kernel_model_drop, kernel_model_get and
 * kernel_predict(name, features).
 *
 * Versions live in the table kernel_models, in the extension's schema.
 * Nobody but its owner (the role that created the extension) may write the
 * table directly; these functions check that the caller has the privileges
 * of the role that owns a model name (stored by OID), then read and write
 * the table as the table's owner with search_path pinned and every name
 * qualified, like a SECURITY DEFINER function.
 *
 * The user's training query runs as ANALYZE runs a user's index
 * expressions: as one role (the caller training, the owner retraining), in
 * a security-restricted operation, with search_path pinned to the one
 * stored with the version inside a GUC nest level that is rolled back after
 * it.  No other SQL runs while its settings are in effect, and no SQL is
 * run with the caller's rights on rows it produced: the training code is
 * called directly on the kept rows.
 *
 * Training runs the query once, keeps its rows in memory, splits them by a
 * hash of each row's values and the seed, and trains with kernel_train's
 * own code on the chosen rows, so a named model is exactly what
 * kernel_train would give on the same rows and options.
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
#include "access/xact.h"
#include "catalog/namespace.h"
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
#include "tcop/utility.h"
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
#include "train.h"

PG_FUNCTION_INFO_V1(kernel_model_train);
PG_FUNCTION_INFO_V1(kernel_model_retrain);
PG_FUNCTION_INFO_V1(kernel_model_deploy);
PG_FUNCTION_INFO_V1(kernel_model_drop);
PG_FUNCTION_INFO_V1(kernel_model_get);
PG_FUNCTION_INFO_V1(kernel_predict_by_name);

/* First key of the advisory lock on a name ("KML1"); the second is its hash. */
#define NAME_LOCK_KEY 0x4B4D4C31

/* Longest model name, in bytes: as long as a PostgreSQL identifier. */
#define MODEL_NAME_MAX (NAMEDATALEN - 1)

/* The search_path a version from 0.1.0 (none stored) is retrained with. */
#define LEGACY_SEARCH_PATH "\"$user\", public"

/* The catalog table of the extension these functions belong to. */
typedef struct Catalog
{
	Oid			relid;
	Oid			owner;			/* the table's owner: who writes it */
	char	   *qualified;		/* "schema".kernel_models, quoted */
	bool		legacy;			/* a 0.1.0 table: owner by name, no search_path */
	const char *owner_expr;		/* SQL yielding the owner's OID */
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
	Oid			owner;
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

	/*
	 * Between installing this library and ALTER EXTENSION kernel_ml UPDATE
	 * the table is still 0.1.0's: models can be read, deployed and dropped,
	 * the owner found by name, but not trained (see require_current).
	 */
	cat->legacy = get_attnum(cat->relid, "search_path") == InvalidAttrNumber;
	cat->owner_expr = cat->legacy ?
		"COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(owner::pg_catalog.text))::pg_catalog.oid, 0::pg_catalog.oid)" :
		"owner::pg_catalog.oid";
}

static void
require_current(const Catalog *cat, const char *fname)
{
	if (cat->legacy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs the kernel_ml 0.2.0 catalog", fname),
				 errdetail("Table kernel_models is still the one of kernel_ml 0.1.0."),
				 errhint("Run ALTER EXTENSION kernel_ml UPDATE.")));
}

/*
 * Act as the catalog's owner.  With pin_path, also pin search_path so the
 * statements run here resolve nothing through the caller's schemas (they
 * qualify every name anyway); the lookup done per statement by
 * kernel_predict does not pin it, since parallel workers may not change
 * settings.  An ERROR restores both, as it does for a SECURITY DEFINER
 * function; unelevate rolls back any setting changed meanwhile.
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
		AtEOXact_GUC(false, e->guc_level);
	SetUserIdAndSecContext(e->userid, e->sec_context);
}

static void
check_spi(int rc, const char *what)
{
	if (rc < 0)
		elog(ERROR, "%s failed: %s", what, SPI_result_code_string(rc));
}

/* A role for messages: its name, or its OID if it was dropped. */
static char *
role_label(Oid role)
{
	char	   *rolname = OidIsValid(role) ? GetUserNameFromId(role, true) : NULL;

	return rolname ? psprintf("role \"%s\"", rolname) :
		psprintf("a dropped role (OID %u)", role);
}

/*
 * Whether the caller has the privileges of the owner (by OID: a new role
 * that takes a dropped owner's name gets nothing).  Only superusers have
 * the privileges of a dropped role.
 */
static bool
owns(Oid owner)
{
	return has_privs_of_role(GetUserId(), owner);
}

static void
check_owner(const char *name, Oid owner)
{
	if (!owns(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for model \"%s\"", name),
				 errdetail("Model \"%s\" belongs to %s.", name, role_label(owner)),
				 errhint("Only roles with the privileges of its owner can train, retrain, deploy or drop a model; choose another name.")));
}

static void
check_reader(const Catalog *cat, const char *name, Oid owner)
{
	if (!owns(owner) &&
		pg_class_aclcheck(cat->relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for model \"%s\"", name),
				 errdetail("Model \"%s\" belongs to %s.", name, role_label(owner)),
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

/* A name a new version may be stored under: 1 to MODEL_NAME_MAX bytes. */
static void
check_name(const char *name)
{
	size_t		len = strlen(name);

	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("model name must not be empty")));
	if (len > MODEL_NAME_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("model name is too long"),
				 errdetail("The name is %zu bytes long; at most %d bytes are allowed.",
						   len, MODEL_NAME_MAX),
				 errhint("Choose a shorter name.")));
}

/*
 * What every function that writes the catalog checks first, before any
 * work: a writable transaction.
 */
static void
check_writable(const char *fname)
{
	PreventCommandIfReadOnly(fname);
	PreventCommandIfParallelMode(fname);
}

/*
 * Whether a name has a version and, if so, the owner of its latest one.
 * SPI connected.
 */
static bool
name_owner(const Catalog *cat, const char *name, Oid *owner)
{
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	bool		isnull;

	args[0] = CStringGetTextDatum(name);
	elevate(cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT %s FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
											 "ORDER BY version DESC LIMIT 1",
											 cat->owner_expr, cat->qualified),
									1, argtypes, args, NULL, false, 1),
			  "owner lookup");
	unelevate(&e);
	if (SPI_processed == 0)
		return false;
	*owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											1, &isnull));
	return true;
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
 * caller gets the version its statement started with.  Every name is
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
	bool		isnull;

	memset(out, 0, sizeof(*out));
	args[0] = CStringGetTextDatum(name);
	elevate(cat, &e, false);
	check_spi(SPI_execute_with_args(psprintf("SELECT %s, version, model FROM %s "
											 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
											 cat->owner_expr, cat->qualified),
									1, argtypes, args, NULL, read_only, 1),
			  "deployed model lookup");
	if (SPI_processed > 0)
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		Datum		model;

		out->name_exists = true;
		out->found = true;
		old = MemoryContextSwitchTo(ctx);
		out->owner = DatumGetObjectId(SPI_getbinval(tup, desc, 1, &isnull));
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
		check_spi(SPI_execute_with_args(psprintf("SELECT %s FROM %s "
												 "WHERE name OPERATOR(pg_catalog.=) $1 LIMIT 1",
												 cat->owner_expr, cat->qualified),
										1, argtypes, args, NULL, read_only, 1),
				  "owner lookup");
		if (SPI_processed > 0)
		{
			out->name_exists = true;
			out->owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 1, &isnull));
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
 * The caller's effective search_path as a list of schema names that means
 * the same in any session and as any role: the schemas it resolves to now
 * ("$user" expanded, missing schemas dropped), without the session's
 * temporary schema.  pg_catalog is listed only where the caller put it
 * explicitly; otherwise it is searched first, as always.
 */
static char *
current_search_path(void)
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
 * Check that the query is one statement returning two columns that convert
 * to float8[] and float8, then run it and collect its rows.  It runs the
 * way PostgreSQL runs user code during maintenance (ANALYZE, index builds):
 * as the role run_as (the caller training, or the model's owner
 * retraining), in a security-restricted operation, with search_path set
 * to search_path (then pg_temp, last) inside a GUC nest level that is
 * rolled back afterwards, so nothing the query sets outlives it.  On an
 * error, the (sub)transaction abort restores the user and the settings.
 * SPI connected.
 */
static RowSet *
collect_rows(const char *query, Oid run_as, const char *search_path,
			 MemoryContext ctx)
{
	Oid			save_userid;
	int			save_sec_context;
	int			guc_level;
	SPIPlanPtr	plan;
	List	   *sources;
	TupleDesc	desc;
	Oid			want[2] = {FLOAT8ARRAYOID, FLOAT8OID};
	Portal		portal;
	RowSet	   *rs;
	char	   *body = query_body(query);
	char	   *path = search_path[0] != '\0' ?
		psprintf("%s, pg_temp", search_path) : pstrdup("pg_temp");

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(run_as, save_sec_context | SECURITY_RESTRICTED_OPERATION);
	guc_level = NewGUCNestLevel();
	(void) set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);

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
	AtEOXact_GUC(false, guc_level);
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
 * Train on the given rows, in this order, with opts: the training code of
 * the kernel_train aggregate, called directly, so the model is the one
 * kernel_train gives on exactly these rows.  The result is copied into ctx.
 */
static bytea *
train_rows(const RowSet *rs, const int64 *rows, int64 count,
		   const km_options *opts, MemoryContext ctx)
{
	int			d = rs->d;
	RowSet		sub;
	bytea	   *model;
	MemoryContext old;

	memset(&sub, 0, sizeof(sub));
	sub.ctx = CurrentMemoryContext;
	sub.opts = *opts;
	sub.d = d;
	sub.n = sub.capacity = sub.seen = count;
	sub.has_target = true;
	sub.X = palloc_extended(mul_size((Size) count, mul_size((Size) d, sizeof(double))),
							MCXT_ALLOC_HUGE);
	sub.y = palloc_extended(mul_size((Size) count, sizeof(double)), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < count; i++)
	{
		memcpy(sub.X + (Size) i * d, rs->X + (Size) rows[i] * d, sizeof(double) * d);
		sub.y[i] = rs->y[rows[i]];
	}
	old = MemoryContextSwitchTo(ctx);
	model = km_train_rowset(&sub);
	MemoryContextSwitchTo(old);
	pfree(sub.X);
	pfree(sub.y);
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
	for (int64 i = 0; i < count; i++)
		ymean += rs->y[rows[i]];
	ymean /= (double) count;
	for (int64 i = 0; i < count; i++)
	{
		double		y = rs->y[rows[i]];
		double		e;

		e = km_model_cache_predict_row(mc, model, rs->X + (Size) rows[i] * d, d) - y;
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
 * The query runs as run_as with search_path (see collect_rows), and that
 * search_path is stored with the version for the next retrain.
 */
static void
train_named(FunctionCallInfo fcinfo, const Catalog *cat, const char *name,
			const char *query, Jsonb *options, Oid run_as,
			const char *search_path)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext work;
	MemoryContext old;
	km_options	opts;
	bool		refit;
	Jsonb	   *train_options;
	Oid			owner;
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
	if (name_owner(cat, name, &owner))
		check_owner(name, owner);

	rs = collect_rows(query, run_as, search_path, work);
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

	split_model = train_rows(rs, order + ntest, ntrain, &opts, work);
	score_rows(PointerGetDatum(split_model), rs, order + ntest, ntrain, &train_scores);
	score_rows(PointerGetDatum(split_model), rs, order, ntest, &test_scores);
	model = split_model;
	if (refit && ntest > 0)
	{
		int64	   *all = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);

		for (int64 i = 0; i < rs->n; i++)
			all[i] = i;
		model = train_rows(rs, all, rs->n, &opts, work);
		pfree(all);
	}

	/* From here on, one training of this name at a time. */
	lock_name(name);
	if (name_owner(cat, name, &owner))
	{
		check_owner(name, owner);
		/* a superuser training a dropped role's name takes it over */
		if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
			owner = GetUserId();
	}
	else
		owner = GetUserId();
	{
		Elevation	e;
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1] = {CStringGetTextDatum(name)};
		bool		isnull;
		Datum		v;

		elevate(cat, &e, true);
		check_spi(SPI_execute_with_args(psprintf("SELECT pg_catalog.max(version) FROM %s "
												 "WHERE name OPERATOR(pg_catalog.=) $1",
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
		Oid			argtypes[11] = {TEXTOID, INT4OID, REGROLEOID, TEXTOID, JSONBOID,
		BYTEAOID, JSONBOID, INT8OID, INT4OID, BOOLOID, TEXTOID};
		Datum		args[11];
		int64		fitted = (refit && ntest > 0) ? rs->n : ntrain;

		args[0] = CStringGetTextDatum(name);
		args[1] = Int32GetDatum(version);
		args[2] = ObjectIdGetDatum(owner);
		args[3] = CStringGetTextDatum(query);
		args[4] = JsonbPGetDatum(options);
		args[5] = PointerGetDatum(model);
		args[6] = JsonbPGetDatum(metrics);
		args[7] = Int64GetDatum(fitted);
		args[8] = Int32GetDatum(rs->d);
		args[9] = BoolGetDatum(deploy);
		args[10] = CStringGetTextDatum(search_path);

		elevate(cat, &e, true);
		if (deploy)
			check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
													 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
													 cat->qualified),
											1, argtypes, args, NULL, false, 0),
					  "undeploy");
		check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s (name, version, owner, source_query, "
												 "options, model, metrics, n_train, n_features, deployed, "
												 "search_path) "
												 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
												 "ON CONFLICT (name, version) DO NOTHING",
												 cat->qualified),
										11, argtypes, args, NULL, false, 0),
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

/*
 * kernel_model_train(name, query, options): the query runs as the caller,
 * who owns a new name, with the caller's search_path, which is stored.
 */
Datum
kernel_model_train(PG_FUNCTION_ARGS)
{
	Catalog		cat;
	Jsonb	   *options;
	char	   *name;

	check_writable("kernel_model_train()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", PG_ARGISNULL(0) ? "name" : "query")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	check_name(name);
	options = PG_ARGISNULL(2) ?
		DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"))) :
		PG_GETARG_JSONB_P(2);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	require_current(&cat, "kernel_model_train");
	train_named(fcinfo, &cat, name, text_to_cstring(PG_GETARG_TEXT_PP(1)), options,
				GetUserId(), current_search_path());
	return (Datum) 0;
}

/*
 * kernel_model_retrain(name): the query, options and search_path of the
 * latest version, the query run as the model's owner (never as the caller:
 * a scheduled job is often a superuser's).
 */
Datum
kernel_model_retrain(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Catalog		cat;
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	Oid			owner;
	char	   *query;
	char	   *search_path;
	Jsonb	   *options;
	Datum		options_datum;
	bool		isnull;
	MemoryContext caller = CurrentMemoryContext;

	check_writable("kernel_model_retrain()");
	check_name(name);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	require_current(&cat, "kernel_model_retrain");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	args[0] = CStringGetTextDatum(name);
	elevate(&cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT owner::pg_catalog.oid, source_query, options, search_path "
											 "FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
											 "ORDER BY version DESC LIMIT 1",
											 cat.qualified),
									1, argtypes, args, NULL, false, 1),
			  "latest version lookup");
	unelevate(&e);
	if (SPI_processed == 0)
		no_such_model(name);
	owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	query = MemoryContextStrdup(caller, SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2));
	options_datum = SPI_datumTransfer(SPI_getbinval(SPI_tuptable->vals[0],
													SPI_tuptable->tupdesc, 3, &isnull),
									  false, -1);
	search_path = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
	/* versions from 0.1.0 stored none: the default path, "$user" the owner */
	search_path = MemoryContextStrdup(caller, search_path ? search_path : LEGACY_SEARCH_PATH);
	SPI_finish();
	/* detoast only now, into the caller's context */
	options = DatumGetJsonbP(options_datum);
	check_owner(name, owner);
	if (!OidIsValid(owner) || !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("owner of model \"%s\" does not exist", name),
				 errdetail("Model \"%s\" belongs to %s; its query runs only as its owner.",
						   name, role_label(owner)),
				 errhint("Train a new version with kernel_model_train, which makes the caller its owner, or drop the model with kernel_model_drop.")));

	train_named(fcinfo, &cat, name, query, options, owner, search_path);
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
	Oid			owner;
	bool		isnull;
	int32		latest;

	check_writable("kernel_model_deploy()");
	catalog_open(fcinfo, &cat);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	lock_name(name);
	if (!name_owner(&cat, name, &owner))
		no_such_model(name);
	check_owner(name, owner);

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	elevate(&cat, &e, true);
	check_spi(SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FILTER (WHERE version OPERATOR(pg_catalog.=) $2), "
											 "pg_catalog.max(version) "
											 "FROM %s WHERE name OPERATOR(pg_catalog.=) $1", cat.qualified),
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
											 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed "
											 "AND version OPERATOR(pg_catalog.<>) $2",
											 cat.qualified),
									2, argtypes, args, NULL, false, 0),
			  "undeploy");
	check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = true "
											 "WHERE name OPERATOR(pg_catalog.=) $1 "
											 "AND version OPERATOR(pg_catalog.=) $2 AND NOT deployed",
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
	Oid			owner;
	int64		dropped;

	check_writable("kernel_model_drop()");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	catalog_open(fcinfo, &cat);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	lock_name(name);
	if (!name_owner(&cat, name, &owner))
		no_such_model(name);
	check_owner(name, owner);

	args[0] = CStringGetTextDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	elevate(&cat, &e, true);
	if (PG_ARGISNULL(1))
		check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
												 cat.qualified),
										1, argtypes, args, NULL, false, 0),
				  "drop");
	else
	{
		int32		version = PG_GETARG_INT32(1);
		bool		isnull;
		HeapTuple	tup;

		check_spi(SPI_execute_with_args(psprintf("SELECT deployed FROM %s "
												 "WHERE name OPERATOR(pg_catalog.=) $1 "
												 "AND version OPERATOR(pg_catalog.=) $2",
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
		check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
												 "AND version OPERATOR(pg_catalog.=) $2",
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
 * The deployed version is looked up, and the caller's read permission
 * checked, once per snapshot and current user, and kept, with its decoded
 * model, in fn_extra.  Within one SQL statement the snapshot does
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
	Oid			userid;			/* whose read permission was checked */
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
	/* SET ROLE within a statement or a PL/pgSQL loop: look and check again */
	if (snap == NULL || !snapshot_matches(&cache->key, snap) ||
		cache->userid != GetUserId())
	{
		cache->generation++;
		cache->userid = GetUserId();
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
		if (entry->model != (Datum) 0)
			pfree(DatumGetPointer(entry->model));
		entry->model = dep.model;
		entry->generation = cache->generation;
	}
	PG_RETURN_FLOAT8(km_model_cache_predict(entry->mc, entry->model,
											PG_GETARG_ARRAYTYPE_P(1)));
}
