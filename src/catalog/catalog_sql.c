/*
 * catalog_sql.c - the SQL functions of the catalog of named models:
 * kernel_model_train and kernel_model_retrain (the work in
 * catalog_train.c), kernel_model_deploy, kernel_model_drop and
 * kernel_model_get.  They check the caller against the model's owner and
 * then act on the catalog as its owner (catalog.c).  Scoring by name,
 * kernel_predict(name, features), is in catalog_predict.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "json.h"
#include "pgutil.h"
#include "split.h"
#include "catalog.h"
#include "catalog_query.h"
#include "catalog_train.h"

PG_FUNCTION_INFO_V1(kernel_model_train);
PG_FUNCTION_INFO_V1(kernel_model_retrain);
PG_FUNCTION_INFO_V1(kernel_model_deploy);
PG_FUNCTION_INFO_V1(kernel_model_drop);
PG_FUNCTION_INFO_V1(kernel_model_get);
PG_FUNCTION_INFO_V1(kernel_ml_holdout);

/* The search_path a version from 0.1.0 (none stored) is retrained with. */
#define LEGACY_SEARCH_PATH "\"$user\", public"

/* The row (name, version, deployed, metrics) of a training. */
static void
return_trained(FunctionCallInfo fcinfo, const char *name, const TrainedVersion *tv)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	values[0] = CStringGetTextDatum(name);
	values[1] = Int32GetDatum(tv->version);
	values[2] = BoolGetDatum(tv->deployed);
	values[3] = JsonbPGetDatum(tv->metrics);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
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
	TrainedVersion tv;

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
	catalog_train_named(&cat, name, text_to_cstring(PG_GETARG_TEXT_PP(1)), options,
						GetUserId(), catalog_search_path(), &tv);
	return_trained(fcinfo, name, &tv);
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
	Oid			owner;
	char	   *query;
	char	   *search_path;
	Jsonb	   *options;
	Datum		options_datum;
	bool		isnull;
	MemoryContext caller = CurrentMemoryContext;
	TrainedVersion tv;

	catalog_check_writable("kernel_model_retrain()");
	catalog_check_name(name);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_retrain");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_query_name(&cat, "SELECT owner::pg_catalog.oid, source_query, options, search_path "
					   "FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
					   "ORDER BY version DESC LIMIT 1",
					   name, true, false, 1, "latest version lookup");
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

	catalog_train_named(&cat, name, query, options, owner, search_path, &tv);
	return_trained(fcinfo, name, &tv);
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
	bool		isnull;
	int32		latest;

	catalog_check_writable("kernel_model_deploy()");
	catalog_open(fcinfo, &cat);
	catalog_begin_change(&cat, name);

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	catalog_elevate(&cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FILTER (WHERE version OPERATOR(pg_catalog.=) $2), "
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
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
											 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed "
											 "AND version OPERATOR(pg_catalog.<>) $2",
											 cat.qualified),
									2, argtypes, args, NULL, false, 0),
			  "undeploy");
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = true "
											 "WHERE name OPERATOR(pg_catalog.=) $1 "
											 "AND version OPERATOR(pg_catalog.=) $2 AND NOT deployed",
											 cat.qualified),
									2, argtypes, args, NULL, false, 0),
			  "deploy");
	catalog_unelevate(&e);
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
	int64		dropped;

	catalog_check_writable("kernel_model_drop()");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	catalog_open(fcinfo, &cat);
	catalog_begin_change(&cat, name);

	args[0] = CStringGetTextDatum(name);
	args[1] = PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1);
	catalog_elevate(&cat, &e, true);
	if (PG_ARGISNULL(1))
		catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
												 cat.qualified),
										1, argtypes, args, NULL, false, 0),
				  "drop");
	else
	{
		int32		version = PG_GETARG_INT32(1);
		bool		isnull;
		HeapTuple	tup;

		catalog_check_spi(SPI_execute_with_args(psprintf("SELECT deployed FROM %s "
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
		catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
												 "AND version OPERATOR(pg_catalog.=) $2",
												 cat.qualified),
										2, argtypes, args, NULL, false, 0),
				  "drop");
	}
	dropped = (int64) SPI_processed;
	catalog_unelevate(&e);
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
	catalog_find_deployed(&cat, name, CurrentMemoryContext, &dep);
	PG_RETURN_BYTEA_P(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(dep.model)));
}


/*
 * _kernel_ml_holdout(features, target, seed, fraction): whether a row is
 * held out by the per-row split of named approximate models (split.h):
 * the predicate their SQL passes filter on, so each pass, run in parallel
 * or not, sees the same rows on each side.
 */
Datum
kernel_ml_holdout(PG_FUNCTION_ARGS)
{
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
	double		y = PG_GETARG_FLOAT8(1);
	int64		seed = PG_GETARG_INT64(2);
	double		fraction = PG_GETARG_FLOAT8(3);
	int			d = km_array_length(arr, "row");
	double	   *buf = palloc(sizeof(double) * ((Size) d + 1));
	bool		held;

	if (!(fraction >= 0.0 && fraction <= 1.0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold-out fraction must be between 0 and 1"),
				 errdetail("The fraction is %g.", fraction)));
	km_array_copy(arr, d, buf, "row");
	held = km_row_held_out(buf, d, y, seed, km_holdout_threshold(fraction), buf);
	pfree(buf);
	PG_RETURN_BOOL(held);
}
