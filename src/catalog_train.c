/*
 * catalog_train.c - kernel_model_train and kernel_model_retrain: run the
 * stored query safely, split, train, score, decide and store a version.
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

#include "json.h"
#include "metrics.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "split.h"
#include "train.h"
#include "catalog.h"

PG_FUNCTION_INFO_V1(kernel_model_train);
PG_FUNCTION_INFO_V1(kernel_model_retrain);

/* The search_path a version from 0.1.0 (none stored) is retrained with. */
#define LEGACY_SEARCH_PATH "\"$user\", public"


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

/*
 * Deterministic split: rank the rows by a hash of their values (features
 * and target) seeded with seed (split.c, as k-fold does), and hold out the
 * first floor(fraction * n).  A row's side depends on its values, not on
 * the order the query returned it in, so an unordered query splits the
 * same way every time, and rows that stay in the table mostly stay on
 * their side as rows are added.  Returns the held-out count; order[] lists
 * held-out rows first, each part in the original row order.
 */
static int64
split_rows(const RowSet *rs, int64 seed, double fraction, int64 *order)
{
	int64		n = rs->n;
	int64		ntest = (int64) floor(fraction * (double) n);
	int64	   *ranked = palloc_extended(mul_size(n, sizeof(int64)), MCXT_ALLOC_HUGE);
	bool	   *held = palloc_extended(n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	int64		k = 0;

	km_rank_rows(rs->X, rs->y, n, rs->d, seed, ranked);
	for (int64 i = 0; i < ntest; i++)
		held[ranked[i]] = true;
	for (int64 i = 0; i < n; i++)
		if (held[i])
			order[k++] = i;
	for (int64 i = 0; i < n; i++)
		if (!held[i])
			order[k++] = i;
	pfree(ranked);
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

/* The error measures of a model on the given rows. */
static void
score_rows(Datum model, const RowSet *rs, const int64 *rows, int64 count,
		   km_metrics *out)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml scoring",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ModelCache *mc = km_model_cache_create(tmp);
	int			d = rs->d;

	km_metrics_init(out);
	for (int64 i = 0; i < count; i++)
	{
		double		pred = km_model_cache_predict_row(mc, model,
													  rs->X + (Size) rows[i] * d, d);

		km_metrics_add(out, pred, rs->y[rows[i]]);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/* Scores as a json object, or null when there were no rows. */
static void
json_scores(KmJson *j, const char *key, const km_metrics *s)
{
	if (s->n == 0)
	{
		km_json_null(j, key);
		return;
	}
	km_json_begin_object(j, key);
	km_json_num(j, "rmse", km_metrics_rmse(s));
	km_json_num(j, "mae", km_metrics_mae(s));
	km_json_num(j, "r2", km_metrics_r2(s));
	km_json_end(j);
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
	km_metrics	train_scores;
	km_metrics	test_scores;
	km_metrics	prev_scores;
	Deployed	prev;
	int32		version;
	bool		deploy;
	const char *reason;
	KmJson		mj;
	Jsonb	   *metrics;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	uint32		pn,
				pd,
				pc;
	km_error	err;

	catalog_check_name(name);
	train_options = take_refit(options, &refit);
	km_options_parse(train_options, &opts);

	work = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml named training",
								 ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* refuse early, before the work; checked again under the lock */
	if (catalog_name_owner(cat, name, &owner))
		catalog_check_owner(name, owner);

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
	catalog_lock_name(name);
	if (catalog_name_owner(cat, name, &owner))
	{
		catalog_check_owner(name, owner);
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

		catalog_elevate(cat, &e, true);
		catalog_check_spi(SPI_execute_with_args(psprintf("SELECT pg_catalog.max(version) FROM %s "
												 "WHERE name OPERATOR(pg_catalog.=) $1",
												 cat->qualified),
										1, argtypes, args, NULL, false, 1),
				  "version lookup");
		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		version = isnull ? 1 : DatumGetInt32(v) + 1;
		catalog_unelevate(&e);
	}
	catalog_lookup_deployed(cat, name, false, work, &prev);

	/* the deployment decision */
	km_metrics_init(&prev_scores);
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
				deploy = km_metrics_rmse(&test_scores) < km_metrics_rmse(&prev_scores);
				reason = deploy ? "lower hold-out RMSE than the deployed version" :
					"hold-out RMSE not lower than the deployed version's";
			}
			break;
	}

	old = MemoryContextSwitchTo(work);
	km_json_begin(&mj);
	km_json_int(&mj, "rows", rs->n);
	km_json_int(&mj, "rows_skipped", rs->skipped);
	km_json_int(&mj, "train_rows", ntrain);
	km_json_int(&mj, "holdout_rows", ntest);
	km_json_num(&mj, "test_fraction", opts.test_fraction);
	km_json_int(&mj, "seed", opts.seed);
	km_json_bool(&mj, "refit", refit && ntest > 0);
	json_scores(&mj, "train", &train_scores);
	json_scores(&mj, "holdout", &test_scores);
	km_json_begin_object(&mj, "deploy");
	km_json_str(&mj, "policy", deploy_name(opts.deploy));
	km_json_bool(&mj, "deployed", deploy);
	km_json_str(&mj, "reason", reason);
	if (prev.found)
		km_json_int(&mj, "previous_version", prev.version);
	else
		km_json_null(&mj, "previous_version");
	km_json_num(&mj, "previous_holdout_rmse", km_metrics_rmse(&prev_scores));
	km_json_num(&mj, "new_holdout_rmse", km_metrics_rmse(&test_scores));
	km_json_end(&mj);
	metrics = km_json_finish(&mj);
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

		catalog_elevate(cat, &e, true);
		if (deploy)
			catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
													 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
													 cat->qualified),
											1, argtypes, args, NULL, false, 0),
					  "undeploy");
		catalog_check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s (name, version, owner, source_query, "
												 "options, model, metrics, n_train, n_features, deployed, "
												 "search_path) "
												 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) "
												 "ON CONFLICT (name, version) DO NOTHING",
												 cat->qualified),
										11, argtypes, args, NULL, false, 0),
				  "insert");
		catalog_unelevate(&e);
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

	catalog_check_writable("kernel_model_train()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", PG_ARGISNULL(0) ? "name" : "query")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	catalog_check_name(name);
	if (PG_ARGISNULL(2))
	{
		KmJson		empty;

		km_json_begin(&empty);
		options = km_json_finish(&empty);
	}
	else
		options = PG_GETARG_JSONB_P(2);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_train");
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

	catalog_check_writable("kernel_model_retrain()");
	catalog_check_name(name);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_retrain");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	args[0] = CStringGetTextDatum(name);
	catalog_elevate(&cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("SELECT owner::pg_catalog.oid, source_query, options, search_path "
											 "FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
											 "ORDER BY version DESC LIMIT 1",
											 cat.qualified),
									1, argtypes, args, NULL, false, 1),
			  "latest version lookup");
	catalog_unelevate(&e);
	if (SPI_processed == 0)
		catalog_no_such_model(name);
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
	catalog_check_owner(name, owner);
	if (!OidIsValid(owner) || !SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("owner of model \"%s\" does not exist", name),
				 errdetail("Model \"%s\" belongs to %s; its query runs only as its owner.",
						   name, catalog_role_label(owner)),
				 errhint("Train a new version with kernel_model_train, which makes the caller its owner, or drop the model with kernel_model_drop.")));

	train_named(fcinfo, &cat, name, query, options, owner, search_path);
	return (Datum) 0;
}

