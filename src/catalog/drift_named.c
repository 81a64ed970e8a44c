/*
 * drift_named.c - the drift test of a named model (issue 32, item 4).
 *
 * When a version is trained, the training side of the test (core drift.h:
 * the model's basis cut to J <= 10 features and the additive sums of the
 * features of every usable row the query returned) is kept in
 * kernel_models.drift_reference: the stored query may return other rows
 * later, so it is captured then, from the rows training kept in memory or,
 * for a model trained by passes, by one more pass over the stored query.
 * kernel_model_drift(name, query) runs query as the caller, under the
 * rules of stored queries (catalog_query.c: a security-restricted
 * operation, search_path pinned), sums the same features of its rows in
 * one pass, and tests the two sides; kernel_model_retrain(name, '{"when":
 * "drifted"}') runs the same test on the stored query, as the model's
 * owner, and retrains only when its p-value is below alpha.
 */
#include "postgres.h"

#include <ctype.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"

#include "drift.h"
#include "json.h"
#include "model.h"
#include "model_bytea.h"
#include "pgutil.h"
#include "catalog_query.h"
#include "drift_named.h"
#include "host_agg.h"
#include "learn/drift_pass.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_model_drift);

/*
 * One pass over q's rows into side, SPI connected: the drift sums as a
 * pass of the aggregate host (learn/drift_pass.h), counted and summed by
 * two aggregate statements, so that parallel workers and Citus shards read
 * the rows.
 */
static void
sum_query(const CatalogQuery *q, const char *schema, km_drift *side)
{
	km_train_env env;
	CursorHost	h;
	AggHost		a;
	km_host		host;
	km_error	err;
	int64		rows;
	int64		skipped;

	km_train_env_palloc(&env);
	host = agg_host_all(&a, &h, q, schema, (int) side->d, &rows, &skipped, CurrentMemoryContext);
	if (rows > 0 && km_drift_sum(&host, side, &env, &err) != KM_OK)
		km_raise(&err);
	side->skipped += (uint64) skipped;
}

bytea *
drift_capture(const NamedRun *run, MemoryContext ctx)
{
	km_model	m;
	km_drift	ref;
	km_error	err;
	double	   *storage;
	bytea	   *out;
	size_t		size;

	double	   *model_storage = km_model_decode_bytea(run->model, &m);

	if (km_drift_features_of(&m) == 0 || (m.X == NULL && m.rff_W == NULL))
	{
		pfree(model_storage);
		return NULL;
	}
	storage = palloc(sizeof(double) * km_drift_doubles(m.n_features, km_drift_features_of(&m)));
	if (km_drift_from_model(&m, &ref, storage, &err) != KM_OK)
		km_raise(&err);
	pfree(model_storage);		/* the basis is copied out */
	if (run->rs != NULL)
	{
		double	   *scratch = palloc(sizeof(double) * km_drift_scratch_doubles(ref.d, ref.J));

		for (int64 i = 0; i < run->rs->n; i += 8192)
		{
			km_drift_add(&ref, run->rs->X + (Size) i * ref.d, Min(8192, run->rs->n - i),
						 scratch);
			CHECK_FOR_INTERRUPTS();
		}
		ref.skipped = run->rs->skipped;
	}
	else
	{
		sum_query(&run->query, run->schema, &ref);
		check_pass_rows("counting", run->rows, "drift reference", (int64) ref.n, "usable");
	}
	size = km_drift_encoded_size(ref.d, ref.J);
	out = MemoryContextAlloc(ctx, VARHDRSZ + size);
	SET_VARSIZE(out, VARHDRSZ + size);
	km_drift_encode(&ref, (uint8_t *) VARDATA(out));
	return out;
}

void
drift_store(const Catalog *cat, const char *name, int32 version, bytea *ref)
{
	Elevation	e;
	Oid			types[3] = {TEXTOID, INT4OID, BYTEAOID};
	Datum		args[3];

	/* a catalog not yet updated to 0.4.0 has no column for it */
	if (ref == NULL || get_attnum(cat->relid, "drift_reference") == InvalidAttrNumber)
		return;
	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	args[2] = PointerGetDatum(ref);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET drift_reference = $3 "
													 "WHERE name OPERATOR(pg_catalog.=) $1 "
													 "AND version OPERATOR(pg_catalog.=) $2",
													 cat->qualified),
											3, types, args, NULL, false, 0),
					  "drift reference update");
	catalog_unelevate(&e);
}

/* The reference stored with version of name, decoded into ref. SPI connected. */
static void
load_reference(const Catalog *cat, const char *name, int32 version, km_drift *ref)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	bool		isnull = true;
	bytea	   *b = NULL;
	bool		has_column = get_attnum(cat->relid, "drift_reference") != InvalidAttrNumber;
	uint32		d;
	uint32		J;
	km_error	err;

	if (has_column)
	{
		args[0] = CStringGetTextDatum(name);
		args[1] = Int32GetDatum(version);
		catalog_elevate(cat, &e, true);
		catalog_check_spi(SPI_execute_with_args(psprintf("SELECT drift_reference FROM %s "
														 "WHERE name OPERATOR(pg_catalog.=) $1 "
														 "AND version OPERATOR(pg_catalog.=) $2",
														 cat->qualified),
												2, types, args, NULL, true, 1),
						  "drift reference lookup");
		catalog_unelevate(&e);
		if (SPI_processed == 1)
		{
			Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
										  &isnull);

			if (!isnull)
				b = DatumGetByteaPCopy(v);
		}
	}
	if (!has_column)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" version %d has no drift reference", name, version),
				 errdetail("The catalog is of a version before 0.4.0, which records no training side of the drift test."),
				 errhint("Run ALTER EXTENSION kernel_ml UPDATE, then retrain the model with kernel_model_retrain('%s').",
						 name)));
	if (b == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" version %d has no drift reference", name, version),
				 errdetail("The training side of the drift test is recorded when a version is trained by kernel_ml 0.4.0 or later with a model that keeps rows, centres or random features; version %d was not.",
						   version),
				 errhint("Retrain it with kernel_model_retrain('%s') to record one.", name)));
	if (km_drift_peek((const uint8_t *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), &d, &J, &err) != KM_OK ||
		km_drift_decode((const uint8_t *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b), ref,
						palloc(sizeof(double) * km_drift_doubles(d, J)), &err) != KM_OK)
		ereport(ERROR,
				(errcode(err.status == KM_ERR_CHECKSUM ? ERRCODE_DATA_CORRUPTED :
						 ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("%s", err.message),
				 errdetail("%s It is the reference of version %d of model \"%s\".",
						   err.detail, version, name),
				 errhint("Retrain the model with kernel_model_retrain('%s') to record a new one.",
						 name)));
}

/* Trailing blanks and semicolons cut, as catalog_query.c does. */
static char *
trimmed(const char *query)
{
	char	   *q = pstrdup(query);
	int			len = strlen(q);

	while (len > 0 && (q[len - 1] == ';' || isspace((unsigned char) q[len - 1])))
		q[--len] = '\0';
	return q;
}

void
drift_test_version(const Catalog *cat, const char *name, int32 version,
				   const char *query, Oid run_as, const char *search_path,
				   bool stored, DriftOutcome *out)
{
	km_drift	ref;
	km_drift	fresh;
	km_drift_result res;
	km_error	err;
	CatalogQuery q;
	char	   *wrapped;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	load_reference(cat, name, version, &ref);
	km_drift_copy_basis(&ref, &fresh, palloc(sizeof(double) * km_drift_doubles(ref.d, ref.J)));
	/*
	 * Only the first column is read: the model's own training query (its
	 * second column a target or a label) and a query of feature arrays
	 * alone both serve; the target of the wrapper is never null.
	 */
	wrapped = psprintf("SELECT d.f, 0::pg_catalog.float8 FROM (\n%s\n) AS d (f)", trimmed(query));
	catalog_query_open(&q, wrapped, run_as, search_path);
	q.fn = "kernel_model_drift";
	sum_query(&q, cat->schema, &fresh);
	if (fresh.n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("drift query returned no usable rows"),
				 fresh.skipped == 0 ?
				 errdetail("The query returned no rows.") :
				 errdetail("All " INT64_FORMAT " rows have a null feature array.",
						   (int64) fresh.skipped),
				 errhint("Give a query that returns the feature arrays of the new rows.")));
	if (km_drift_test(&ref, &fresh, &res, &err) != KM_OK)
	{
		if (err.status == KM_ERR_INVALID)
			ereport(ERROR,
					(errcode(ERRCODE_NO_DATA_FOUND),
					 errmsg("%s", err.message),
					 errdetail("%s", err.detail),
					 errhint("Test at least 2 new rows (the chi-square null needs many: hundreds or more).")));
		km_raise(&err);
	}
	out->version = version;
	out->statistic = res.statistic;
	out->p_value = res.p_value;
	out->dof = res.dof;
	out->features = (int) ref.J;
	out->basis = ref.kind == KM_DRIFT_LOCATIONS ? "kernel locations" : "random features";
	out->n_train = (int64) res.n_train;
	out->n_new = (int64) res.n_new;
	out->new_skipped = (int64) fresh.skipped;
	/* the two sides are read above, before SPI_finish() frees what they hold */
	SPI_finish();
}

Jsonb *
drift_outcome_json(const DriftOutcome *o, const RetrainWhen *when)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_num(&j, "statistic", o->statistic);
	km_json_num(&j, "p_value", o->p_value);
	km_json_int(&j, "dof", o->dof);
	km_json_int(&j, "n_train", o->n_train);
	km_json_int(&j, "n_new", o->n_new);
	km_json_int(&j, "new_rows_skipped", o->new_skipped);
	km_json_int(&j, "version", o->version);
	km_json_int(&j, "features", o->features);
	km_json_str(&j, "basis", o->basis);
	km_json_str(&j, "test", "mean embedding, chi-square null");
	if (when != NULL)
	{
		km_json_num(&j, "alpha", when->alpha);
		km_json_bool(&j, "drifted", o->p_value < when->alpha);
	}
	return km_json_finish(&j);
}

/*
 * kernel_model_drift(name, query): the deployed version's reference against
 * the rows of query, run as the caller with the caller's search_path.
 */
Datum
kernel_model_drift(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Catalog		cat;
	Deployed	dep;
	DriftOutcome o;

	catalog_check_name(name);
	catalog_open(fcinfo, &cat);
	catalog_find_deployed(&cat, name, CurrentMemoryContext, &dep);
	drift_test_version(&cat, name, dep.version, query, GetUserId(), catalog_search_path(),
					   false, &o);
	PG_RETURN_JSONB_P(drift_outcome_json(&o, NULL));
}

/* An option's value as a double, or an error naming it. */
static double
option_number(JsonbValue *v, const char *key)
{
	if (v->type != jbvNumeric)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"%s\"", key),
				 errdetail("Option \"%s\" must be a number.", key),
				 errhint("Give a level such as {\"when\": \"drifted\", \"alpha\": 0.01}.")));
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric)));
}

void
drift_retrain_options(Jsonb *options, RetrainWhen *out)
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		alpha_given = false;

	out->drifted = false;
	out->alpha = 0.01;
	if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kernel_model_retrain options must be a json object"),
				 errdetail("The options given are not an object."),
				 errhint("Give an object such as {\"when\": \"drifted\", \"alpha\": 0.01}.")));
	it = JsonbIteratorInit(&options->root);
	while ((tok = JsonbIteratorNext(&it, &v, true)) != WJB_DONE)
	{
		char	   *key;
		JsonbValue	val;

		if (tok != WJB_KEY)
			continue;
		key = pnstrdup(v.val.string.val, v.val.string.len);
		tok = JsonbIteratorNext(&it, &val, true);
		if (strcmp(key, "when") == 0)
		{
			char	   *s = val.type == jbvString ?
				pnstrdup(val.val.string.val, val.val.string.len) : NULL;

			if (s == NULL || (strcmp(s, "always") != 0 && strcmp(s, "drifted") != 0))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"when\""),
						 errdetail("Option \"when\" must be \"always\" or \"drifted\"."),
						 errhint("Give {\"when\": \"drifted\"} to retrain only when kernel_model_drift finds drift in the stored query's rows.")));
			out->drifted = strcmp(s, "drifted") == 0;
		}
		else if (strcmp(key, "alpha") == 0)
		{
			double		a = option_number(&val, key);

			if (!(a > 0.0 && a < 1.0))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("invalid value for option \"alpha\""),
						 errdetail("Option \"alpha\" must be a level strictly between 0 and 1, not %g.", a),
						 errhint("Give a level such as 0.01.")));
			out->alpha = a;
			alpha_given = true;
		}
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown option \"%s\" for kernel_model_retrain", key),
					 errdetail("Valid options are \"when\" and \"alpha\"."),
					 errhint("Give {\"when\": \"drifted\", \"alpha\": 0.01} or leave the options out.")));
	}
	if (alpha_given && !out->drifted)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("option \"alpha\" needs \"when\": \"drifted\""),
				 errdetail("Option \"alpha\" is the level of the drift test, which runs only with \"when\": \"drifted\"."),
				 errhint("Add \"when\": \"drifted\", or leave \"alpha\" out.")));
}
