/*
 * catalog_versions.c - the SQL functions that manage stored versions:
 * kernel_model_deploy, kernel_model_drop and kernel_model_get.  They check
 * the caller against the model's owner and then act on the catalog as its
 * owner (catalog.c).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/builtins.h"

#include "catalog.h"

PG_FUNCTION_INFO_V1(kernel_model_deploy);
PG_FUNCTION_INFO_V1(kernel_model_drop);
PG_FUNCTION_INFO_V1(kernel_model_get);

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

