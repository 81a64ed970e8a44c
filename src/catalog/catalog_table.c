/*
 * catalog_table.c - every read and write of the rows of kernel_model_names
 * and kernel_models (catalog_table.h).  Each statement names the columns
 * in table order, so a result column or a parameter is addressed by its
 * Anum_* constant, and runs as the catalog's owner (catalog_owner.c's
 * catalog_query_name and catalog_elevate) with every name qualified.
 *
 * Between installing this library and ALTER EXTENSION kernel_ml UPDATE the
 * tables may still be 0.1.0's or 0.2.0's (see catalog.c): only the reads
 * of scoring (catalog_lookup_deployed) meet them, with the owner given by
 * cat->owner_expr and no search_path column in 0.1.0's.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "catalog_owner.h"
#include "catalog_table.h"

/* kernel_model_names' columns in table order (Anum_kernel_model_names_*). */
static const char *
names_columns(void)
{
	return "name, owner, owner_name, last_version, model_id, owner_role";
}

/*
 * kernel_models' columns in table order (Anum_kernel_models_*), the owner
 * as the name's OID (cat->owner_expr), search_path NULL where the table
 * has none (0.1.0).
 */
static char *
models_columns(const Catalog *cat)
{
	bool		has_path = get_attnum(cat->relid, "search_path") != InvalidAttrNumber;

	return psprintf("name, version, created_at, %s, source_query, options, model, "
					"metrics, n_train, n_features, deployed, %s",
					cat->owner_expr, has_path ? "search_path" : "NULL::pg_catalog.text");
}

/* Column anum of row i of SPI_tuptable (isnull set). */
static Datum
spi_col(uint64 i, int anum, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, anum, isnull);
}

/*
 * Whether a name exists and, if so, its owner, read without a lock (a check
 * before the work, repeated under the lock).  SPI connected.
 */
bool
catalog_name_owner(const Catalog *cat, const char *name, Oid *owner)
{
	bool		isnull;

	catalog_query_name(cat, psprintf("SELECT %s FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
									 names_columns(), cat->names),
					   name, true, false, 1, "owner lookup");
	if (SPI_processed == 0)
		return false;
	*owner = DatumGetObjectId(spi_col(0, Anum_kernel_model_names_owner, &isnull));
	return true;
}

/*
 * Lock the name's row (FOR UPDATE, as the table's owner: a role that may
 * not update the table cannot lock it) and read it.  In READ COMMITTED the
 * statement sees the row as the concurrent change that held the lock left
 * it, or that it is gone.  SPI connected.
 */
void
catalog_lock_name(const Catalog *cat, const char *name, NameRow *out)
{
	bool		isnull;

	catalog_query_name(cat, psprintf("SELECT %s FROM %s "
									 "WHERE name OPERATOR(pg_catalog.=) $1 FOR UPDATE",
									 names_columns(), cat->names),
					   name, true, false, 0, "name lock");
	memset(out, 0, sizeof(*out));
	if (SPI_processed == 0)
		return;
	out->exists = true;
	out->owner = DatumGetObjectId(spi_col(0, Anum_kernel_model_names_owner, &isnull));
	out->last_version = DatumGetInt32(spi_col(0, Anum_kernel_model_names_last_version, &isnull));
	out->model_id = DatumGetInt64(spi_col(0, Anum_kernel_model_names_model_id, &isnull));
}

/*
 * Lock name, creating its row for owner first if it has none, with a new
 * model_id.  A concurrent training that creates the same name first makes
 * the INSERT wait for it and then do nothing; the lock then reads its row
 * (and its owner, whom the caller checks).  SPI connected.
 */
void
catalog_claim_name(const Catalog *cat, const char *name, Oid owner, NameRow *out)
{
	Elevation	e;
	Oid			argtypes[Natts_kernel_model_names];
	Datum		args[Natts_kernel_model_names];

	argtypes[Anum_kernel_model_names_name - 1] = TEXTOID;
	args[Anum_kernel_model_names_name - 1] = CStringGetTextDatum(name);
	argtypes[Anum_kernel_model_names_owner - 1] = OIDOID;
	args[Anum_kernel_model_names_owner - 1] = ObjectIdGetDatum(owner);
	argtypes[Anum_kernel_model_names_owner_name - 1] = TEXTOID;
	args[Anum_kernel_model_names_owner_name - 1] =
		CStringGetTextDatum(GetUserNameFromId(owner, false));
	argtypes[Anum_kernel_model_names_last_version - 1] = INT4OID;
	args[Anum_kernel_model_names_last_version - 1] = Int32GetDatum(0);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s (%s) "
													 "VALUES ($1, $2, $3, $4, pg_catalog.nextval(%s), $2) "
													 "ON CONFLICT (name) DO NOTHING",
													 cat->names, names_columns(), cat->ids),
											Anum_kernel_model_names_last_version, argtypes, args,
											NULL, false, 0),
					  "name insert");
	catalog_unelevate(&e);
	catalog_lock_name(cat, name, out);
	if (!out->exists)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not create model \"%s\"", name),
				 errdetail("A concurrent transaction created and dropped the name meanwhile."),
				 errhint("Retry.")));
}

/*
 * The deployed version of a name, its model datum copied into ctx.  SPI
 * connected; read_only statements see the caller's snapshot, so a STABLE
 * caller gets the version its statement started with.  Every name is
 * qualified because search_path is not pinned here (see catalog_elevate).
 */
void
catalog_lookup_deployed(const Catalog *cat, const char *name, bool read_only,
						MemoryContext ctx, Deployed *out)
{
	MemoryContext old;
	bool		isnull;

	memset(out, 0, sizeof(*out));
	catalog_query_name(cat, psprintf("SELECT %s FROM %%s "
									 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
									 models_columns(cat)),
					   name, false, read_only, 1, "deployed model lookup");
	if (SPI_processed > 0)
	{
		Datum		model;

		out->name_exists = true;
		out->found = true;
		old = MemoryContextSwitchTo(ctx);
		out->owner = DatumGetObjectId(spi_col(0, Anum_kernel_models_owner, &isnull));
		out->version = DatumGetInt32(spi_col(0, Anum_kernel_models_version, &isnull));
		model = spi_col(0, Anum_kernel_models_model, &isnull);
		/* a TOAST pointer is copied as such: the cache knows it by its id */
		if (VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(model)))
			out->model = datumCopy(model, false, -1);
		else
			out->model = PointerGetDatum(pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model)));
		MemoryContextSwitchTo(old);
	}
	else
	{
		catalog_query_name(cat, psprintf("SELECT %s FROM %%s "
										 "WHERE name OPERATOR(pg_catalog.=) $1 LIMIT 1",
										 models_columns(cat)),
						   name, false, read_only, 1, "owner lookup");
		if (SPI_processed > 0)
		{
			out->name_exists = true;
			out->owner = DatumGetObjectId(spi_col(0, Anum_kernel_models_owner, &isnull));
		}
	}
}

bool
catalog_retrain_source(const Catalog *cat, const char *name, MemoryContext ctx,
					   ModelRow *out)
{
	MemoryContext old;
	bool		isnull;
	Datum		options;
	Datum		path;

	memset(out, 0, sizeof(*out));
	catalog_query_name(cat, psprintf("SELECT %s, (SELECT n.model_id FROM %s n "
									 "WHERE n.name OPERATOR(pg_catalog.=) $1), "
									 "s.rows_digest, s.digest_version "
									 "FROM %%s AS m LEFT JOIN LATERAL (SELECT l.version AS digest_version, "
									 "l.metrics OPERATOR(pg_catalog.->>) 'rows_digest' AS rows_digest FROM %s l "
									 "WHERE l.name OPERATOR(pg_catalog.=) $1 "
									 "AND l.source_query OPERATOR(pg_catalog.=) m.source_query "
									 "AND l.options OPERATOR(pg_catalog.=) m.options "
									 "AND (l.search_path OPERATOR(pg_catalog.=) m.search_path "
									 "OR (l.search_path IS NULL AND m.search_path IS NULL)) "
									 "ORDER BY l.version DESC LIMIT 1) s ON true "
									 "WHERE m.name OPERATOR(pg_catalog.=) $1 "
									 "ORDER BY m.deployed DESC, m.version DESC LIMIT 1",
									 models_columns(cat), cat->names, cat->qualified),
					   name, true, false, 1, "retrain source lookup");
	if (SPI_processed == 0)
		return false;
	old = MemoryContextSwitchTo(ctx);
	out->owner = DatumGetObjectId(spi_col(0, Anum_kernel_models_owner, &isnull));
	out->version = DatumGetInt32(spi_col(0, Anum_kernel_models_version, &isnull));
	out->model_id = DatumGetInt64(spi_col(0, Natts_kernel_models + 1, &isnull));
	if (isnull)
		out->model_id = -1;		/* no name row: never matches one */
	out->source_query = TextDatumGetCString(spi_col(0, Anum_kernel_models_source_query, &isnull));
	options = spi_col(0, Anum_kernel_models_options, &isnull);
	/* detoasted into ctx: SPI_finish() deletes the tuple's context */
	out->options = DatumGetJsonbPCopy(options);
	path = spi_col(0, Anum_kernel_models_search_path, &isnull);
	out->search_path = isnull ? NULL : TextDatumGetCString(path);
	out->deployed = DatumGetBool(spi_col(0, Anum_kernel_models_deployed, &isnull));
	path = spi_col(0, Natts_kernel_models + 2, &isnull);
	out->rows_digest = isnull ? NULL : TextDatumGetCString(path);
	out->digest_version = DatumGetInt32(spi_col(0, Natts_kernel_models + 3, &isnull));
	MemoryContextSwitchTo(old);
	return true;
}

uint64
catalog_prune_versions(const Catalog *cat, const char *name, int32 keep)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	uint64		pruned;

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(keep);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s m WHERE m.name OPERATOR(pg_catalog.=) $1 "
													 "AND NOT m.deployed AND m.version OPERATOR(pg_catalog.<) "
													 "(SELECT pg_catalog.min(k.version) FROM (SELECT version FROM %s "
													 "WHERE name OPERATOR(pg_catalog.=) $1 ORDER BY version DESC LIMIT $2) k)",
													 cat->qualified, cat->qualified),
											2, types, args, NULL, false, 0),
					  "retention");
	pruned = SPI_processed;
	catalog_unelevate(&e);
	return pruned;
}

/*
 * Insert a version (deployed or not: deploying undeploys the current one).
 * The name's row records the version as its highest and the owner (by OID,
 * and by name for a dump).  SPI connected, name locked.  Under a
 * transaction snapshot a concurrent training may have stored the same
 * version first: a serialization error.
 */
void
catalog_store_version(const Catalog *cat, const StoredVersion *v)
{
	Elevation	e;
	Oid			types[Natts_kernel_models];
	Datum		args[Natts_kernel_models];
	Oid			ntypes[Natts_kernel_model_names];
	Datum		nargs[Natts_kernel_model_names];
	uint64		named = 0;
	Datum		owner_name = CStringGetTextDatum(GetUserNameFromId(v->owner, false));
	uint64		inserted;

#define SET(anum, type, value) (types[(anum) - 1] = (type), args[(anum) - 1] = (value))
	SET(Anum_kernel_models_name, TEXTOID, CStringGetTextDatum(v->name));
	SET(Anum_kernel_models_version, INT4OID, Int32GetDatum(v->version));
	/* the column's default, now() */
	SET(Anum_kernel_models_created_at, TIMESTAMPTZOID,
		TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()));
	SET(Anum_kernel_models_owner, TEXTOID, owner_name);
	SET(Anum_kernel_models_source_query, TEXTOID, CStringGetTextDatum(v->query));
	SET(Anum_kernel_models_options, JSONBOID, JsonbPGetDatum(v->options));
	SET(Anum_kernel_models_model, BYTEAOID, PointerGetDatum(v->model));
	SET(Anum_kernel_models_metrics, JSONBOID, JsonbPGetDatum(v->metrics));
	SET(Anum_kernel_models_n_train, INT8OID, Int64GetDatum(v->n_train));
	SET(Anum_kernel_models_n_features, INT4OID, Int32GetDatum(v->n_features));
	SET(Anum_kernel_models_deployed, BOOLOID, BoolGetDatum(v->deployed));
	SET(Anum_kernel_models_search_path, TEXTOID, CStringGetTextDatum(v->search_path));
#undef SET
	ntypes[Anum_kernel_model_names_name - 1] = TEXTOID;
	nargs[Anum_kernel_model_names_name - 1] = args[Anum_kernel_models_name - 1];
	ntypes[Anum_kernel_model_names_owner - 1] = OIDOID;
	nargs[Anum_kernel_model_names_owner - 1] = ObjectIdGetDatum(v->owner);
	ntypes[Anum_kernel_model_names_owner_name - 1] = TEXTOID;
	nargs[Anum_kernel_model_names_owner_name - 1] = owner_name;
	ntypes[Anum_kernel_model_names_last_version - 1] = INT4OID;
	nargs[Anum_kernel_model_names_last_version - 1] = Int32GetDatum(v->version);
	ntypes[Anum_kernel_model_names_model_id - 1] = INT8OID;
	nargs[Anum_kernel_model_names_model_id - 1] = Int64GetDatum(v->model_id);

	catalog_elevate(cat, &e, true);
	if (v->deployed)
		catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
														 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
														 cat->qualified),
												1, types, args, NULL, false, 0),
						  "undeploy");
	catalog_check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s (name, version, created_at, owner, "
													 "source_query, options, model, metrics, n_train, "
													 "n_features, deployed, search_path) "
													 "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) "
													 "ON CONFLICT (name, version) DO NOTHING",
													 cat->qualified),
											Natts_kernel_models, types, args, NULL, false, 0),
					  "insert");
	inserted = SPI_processed;
	if (inserted == 1)
	{
		catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET owner = $2, owner_role = $2, owner_name = $3, "
														 "last_version = pg_catalog.int4larger(last_version, $4) "
														 "WHERE name OPERATOR(pg_catalog.=) $1 "
														 "AND model_id OPERATOR(pg_catalog.=) $5",
														 cat->names),
												Natts_kernel_model_names, ntypes, nargs,
												NULL, false, 0),
						  "name update");
		named = SPI_processed;
	}
	catalog_unelevate(&e);
	/* a version is never stored without its model's name row */
	if (inserted == 1 && named != 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("could not store version %d of model \"%s\"", v->version, v->name),
				 errdetail("The model the version was trained for (model_id " INT64_FORMAT ") no longer has the name \"%s\"; nothing was stored.",
						   v->model_id, v->name),
				 errhint("Train it again.")));
	if (inserted != 1)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not store version %d of model \"%s\"", v->version, v->name),
				 errdetail("A concurrent transaction stored that version first."),
				 errhint("Retry; training in READ COMMITTED waits for the other training instead.")));
}

/*
 * The latest version of name, and whether version is one of its versions.
 * SPI connected, name locked.
 */
int32
catalog_latest_of(const Catalog *cat, const char *name, int32 version, bool *exists)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	bool		isnull;
	int32		latest;

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("SELECT pg_catalog.count(*) FILTER (WHERE version OPERATOR(pg_catalog.=) $2), "
													 "pg_catalog.max(version) "
													 "FROM %s WHERE name OPERATOR(pg_catalog.=) $1", cat->qualified),
											2, types, args, NULL, false, 1),
					  "version lookup");
	catalog_unelevate(&e);
	latest = DatumGetInt32(spi_col(0, 2, &isnull));
	*exists = DatumGetInt64(spi_col(0, 1, &isnull)) > 0;
	return latest;
}

/* Deploy version of name, undeploying the deployed one.  SPI connected, name locked. */
void
catalog_deploy_version(const Catalog *cat, const char *name, int32 version)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	catalog_elevate(cat, &e, true);
	/* two statements: the unique index on deployed is checked row by row */
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = false "
													 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed "
													 "AND version OPERATOR(pg_catalog.<>) $2",
													 cat->qualified),
											2, types, args, NULL, false, 0),
					  "undeploy");
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s SET deployed = true "
													 "WHERE name OPERATOR(pg_catalog.=) $1 "
													 "AND version OPERATOR(pg_catalog.=) $2 AND NOT deployed",
													 cat->qualified),
											2, types, args, NULL, false, 0),
					  "deploy");
	catalog_unelevate(&e);
}

/* Whether version of name exists, and whether it is deployed.  SPI connected. */
bool
catalog_version_deployed(const Catalog *cat, const char *name, int32 version, bool *deployed)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	bool		isnull;

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("SELECT %s FROM %s "
													 "WHERE name OPERATOR(pg_catalog.=) $1 "
													 "AND version OPERATOR(pg_catalog.=) $2",
													 models_columns(cat), cat->qualified),
											2, types, args, NULL, false, 1),
					  "version lookup");
	catalog_unelevate(&e);
	if (SPI_processed == 0)
		return false;
	*deployed = DatumGetBool(spi_col(0, Anum_kernel_models_deployed, &isnull));
	return true;
}

/*
 * Delete every version of name and its name row (all), or one version;
 * the versions deleted.  SPI connected, name locked.
 */
int64
catalog_drop_versions(const Catalog *cat, const char *name, bool all, int32 version)
{
	Elevation	e;
	Oid			types[2] = {TEXTOID, INT4OID};
	Datum		args[2];
	int64		dropped;

	args[0] = CStringGetTextDatum(name);
	args[1] = Int32GetDatum(version);
	catalog_elevate(cat, &e, true);
	if (all)
	{
		catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
														 cat->qualified),
												1, types, args, NULL, false, 0),
						  "drop");
		dropped = (int64) SPI_processed;
		catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1",
														 cat->names),
												1, types, args, NULL, false, 0),
						  "name drop");
	}
	else
	{
		catalog_check_spi(SPI_execute_with_args(psprintf("DELETE FROM %s WHERE name OPERATOR(pg_catalog.=) $1 "
														 "AND version OPERATOR(pg_catalog.=) $2",
														 cat->qualified),
												2, types, args, NULL, false, 0),
						  "drop");
		dropped = (int64) SPI_processed;
	}
	catalog_unelevate(&e);
	return dropped;
}

/*
 * Give new_owner every name owned by old_owner (InvalidOid: no role of
 * that name) and, with orphans, every name left by a dropped role named
 * old_name; the names changed.  SPI connected.
 */
uint64
catalog_reassign_names(const Catalog *cat, Oid old_owner, const char *old_name,
					   bool orphans, Oid new_owner)
{
	Elevation	e;
	Oid			types[4] = {OIDOID, TEXTOID, BOOLOID, OIDOID};
	Datum		args[4];
	char		nulls[4] = {' ', ' ', ' ', ' '};
	uint64		count;

	/* no role of that name: no OID to match (0 would match every orphan) */
	args[0] = ObjectIdGetDatum(old_owner);
	nulls[0] = OidIsValid(old_owner) ? ' ' : 'n';
	args[1] = CStringGetTextDatum(old_name);
	args[2] = BoolGetDatum(orphans);
	args[3] = ObjectIdGetDatum(new_owner);
	catalog_elevate(cat, &e, true);
	catalog_check_spi(SPI_execute_with_args(psprintf("UPDATE %s AS n SET owner = $4, owner_role = $4, "
													 "owner_name = (SELECT r.rolname::pg_catalog.text FROM pg_catalog.pg_roles r "
													 "WHERE r.oid OPERATOR(pg_catalog.=) $4) "
													 "WHERE n.owner OPERATOR(pg_catalog.=) $1 "
													 "OR ($3 AND n.owner_name OPERATOR(pg_catalog.=) $2 "
													 "AND NOT EXISTS (SELECT FROM pg_catalog.pg_roles r "
													 "WHERE r.oid OPERATOR(pg_catalog.=) n.owner))",
													 cat->names),
											4, types, args, nulls, false, 0),
					  "reassign");
	count = SPI_processed;
	catalog_unelevate(&e);
	return count;
}

/*
 * The name row of a restored row (catalog_sql.c's restore trigger): made
 * if missing, its highest version raised to last_version; a restored name
 * row (replace_owner) also sets the owner.  SPI connected.
 */
void
catalog_restore_name(const Catalog *cat, Datum name, Oid owner, const char *owner_name,
					 int32 last_version, bool replace_owner)
{
	Elevation	e;
	Oid			types[Natts_kernel_model_names];
	Datum		args[Natts_kernel_model_names];
	char		nulls[Natts_kernel_model_names];

	memset(nulls, ' ', sizeof(nulls));
	types[Anum_kernel_model_names_name - 1] = TEXTOID;
	args[Anum_kernel_model_names_name - 1] = name;
	types[Anum_kernel_model_names_owner - 1] = OIDOID;
	args[Anum_kernel_model_names_owner - 1] = ObjectIdGetDatum(owner);
	types[Anum_kernel_model_names_owner_name - 1] = TEXTOID;
	args[Anum_kernel_model_names_owner_name - 1] = owner_name ? CStringGetTextDatum(owner_name) : (Datum) 0;
	nulls[Anum_kernel_model_names_owner_name - 1] = owner_name ? ' ' : 'n';
	types[Anum_kernel_model_names_last_version - 1] = INT4OID;
	args[Anum_kernel_model_names_last_version - 1] = Int32GetDatum(last_version);
	catalog_elevate(cat, &e, true);
	/* a model_id of this cluster, never the dump's */
	catalog_check_spi(SPI_execute_with_args(psprintf("INSERT INTO %s AS n (%s) "
													 "VALUES ($1, $2, $3, $4, pg_catalog.nextval(%s), $2) "
													 "ON CONFLICT (name) DO UPDATE SET "
													 "last_version = pg_catalog.int4larger(n.last_version, excluded.last_version)%s",
													 cat->names, names_columns(), cat->ids,
													 replace_owner ? ", owner = excluded.owner, owner_role = excluded.owner_role, "
													 "owner_name = excluded.owner_name" : ""),
											Anum_kernel_model_names_last_version, types, args, nulls, false, 0),
					  "restored name");
	catalog_unelevate(&e);
}
