/*
 * catalog.c - the catalog of named models, its storage and privileges:
 * finding the table, acting as its owner, the owner checks, the name lock,
 * and reading and writing versions (see catalog.h).  The SQL functions are
 * in catalog_sql.c, the work of training in catalog_train.c (its query
 * runs in catalog_query.c), scoring by name in catalog_predict.c.
 *
 * Versions live in the table kernel_models, in the extension's schema.
 * Nobody but its owner (the role that created the extension) may write the
 * table directly; these functions check that the caller has the privileges
 * of the role that owns a model name (stored by OID), then read and write
 * the table as the table's owner with search_path pinned and every name
 * qualified, like a SECURITY DEFINER function.  Between installing this
 * library and ALTER EXTENSION kernel_ml UPDATE, the table may still be
 * 0.1.0's (owner by name, no search_path): it can be read, deployed from
 * and dropped from, not trained into.
 *
 * Versions of one name are serialised by a transaction-level advisory lock
 * (catalog_lock_name).
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "catalog.h"

/* First key of the advisory lock on a name ("KML1"); the second is its hash. */
#define NAME_LOCK_KEY 0x4B4D4C31

/*
 * The catalog of the schema that holds the function being called: the
 * extension's schema, wherever it was installed.
 */
void
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
	cat->schema = quote_identifier(nspname);

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

void
catalog_require_current(const Catalog *cat, const char *fname)
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
void
catalog_elevate(const Catalog *cat, Elevation *e, bool pin_path)
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

void
catalog_unelevate(Elevation *e)
{
	if (e->guc_level >= 0)
		AtEOXact_GUC(false, e->guc_level);
	SetUserIdAndSecContext(e->userid, e->sec_context);
}

void
catalog_check_spi(int rc, const char *what)
{
	if (rc < 0)
		elog(ERROR, "%s failed: %s", what, SPI_result_code_string(rc));
}

/*
 * Run a statement about one name ($1) as the catalog's owner (with
 * pin_path, search_path pinned); its rows are left in SPI_tuptable.
 * sql_fmt has one %s, the qualified table name.  SPI connected.
 */
void
catalog_query_name(const Catalog *cat, const char *sql_fmt, const char *name,
				   bool pin_path, bool read_only, long limit, const char *what)
{
	Elevation	e;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1] = {CStringGetTextDatum(name)};

	catalog_elevate(cat, &e, pin_path);
	catalog_check_spi(SPI_execute_with_args(psprintf(sql_fmt, cat->qualified),
											1, argtypes, args, NULL, read_only, limit),
					  what);
	catalog_unelevate(&e);
}

/* A role for messages: its name, or its OID if it was dropped. */
char *
catalog_role_label(Oid role)
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

void
catalog_check_owner(const char *name, Oid owner)
{
	if (!owns(owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for model \"%s\"", name),
				 errdetail("Model \"%s\" belongs to %s.", name, catalog_role_label(owner)),
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
				 errdetail("Model \"%s\" belongs to %s.", name, catalog_role_label(owner)),
				 errhint("Its owner or an administrator can GRANT SELECT ON kernel_models to this role.")));
}

void
catalog_no_such_model(const char *name)
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
void
catalog_check_name(const char *name)
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
void
catalog_check_writable(const char *fname)
{
	PreventCommandIfReadOnly(fname);
	PreventCommandIfParallelMode(fname);
}

/*
 * Whether a name has a version and, if so, the owner of its latest one.
 * SPI connected.
 */
bool
catalog_name_owner(const Catalog *cat, const char *name, Oid *owner)
{
	bool		isnull;

	catalog_query_name(cat, psprintf("SELECT %s FROM %%s WHERE name OPERATOR(pg_catalog.=) $1 "
									 "ORDER BY version DESC LIMIT 1", cat->owner_expr),
					   name, true, false, 1, "owner lookup");
	if (SPI_processed == 0)
		return false;
	*owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc,
											1, &isnull));
	return true;
}

/* Serialise the versions of one name until the end of the transaction. */
void
catalog_lock_name(const char *name)
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
void
catalog_lookup_deployed(const Catalog *cat, const char *name, bool read_only,
				MemoryContext ctx, Deployed *out)
{
	MemoryContext old;
	bool		isnull;

	memset(out, 0, sizeof(*out));
	catalog_query_name(cat, psprintf("SELECT %s, version, model FROM %%s "
									 "WHERE name OPERATOR(pg_catalog.=) $1 AND deployed",
									 cat->owner_expr),
					   name, false, read_only, 1, "deployed model lookup");
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
		catalog_query_name(cat, psprintf("SELECT %s FROM %%s "
										 "WHERE name OPERATOR(pg_catalog.=) $1 LIMIT 1",
										 cat->owner_expr),
						   name, false, read_only, 1, "owner lookup");
		if (SPI_processed > 0)
		{
			out->name_exists = true;
			out->owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0],
														SPI_tuptable->tupdesc, 1, &isnull));
		}
	}
}

/* Like lookup_deployed, with the errors a caller that needs the model wants. */
void
catalog_find_deployed(const Catalog *cat, const char *name, MemoryContext ctx,
			  Deployed *out)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_lookup_deployed(cat, name, true, ctx, out);
	SPI_finish();
	if (!out->name_exists)
		catalog_no_such_model(name);
	check_reader(cat, name, out->owner);
	if (!out->found)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" has no deployed version", name),
				 errhint("Deploy one with kernel_model_deploy(name, version).")));
}

/*
 * Begin changing the versions of name: SPI connected, the name locked, and
 * an error unless it exists and the caller has its owner's privileges.
 */
void
catalog_begin_change(const Catalog *cat, const char *name)
{
	Oid			owner;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_lock_name(name);
	if (!catalog_name_owner(cat, name, &owner))
		catalog_no_such_model(name);
	catalog_check_owner(name, owner);
}

/* The number the next version of name gets; SPI connected, name locked. */
int32
catalog_next_version(const Catalog *cat, const char *name)
{
	bool		isnull;
	Datum		v;

	catalog_query_name(cat, "SELECT pg_catalog.max(version) FROM %s "
					   "WHERE name OPERATOR(pg_catalog.=) $1",
					   name, true, false, 1, "version lookup");
	v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	return isnull ? 1 : DatumGetInt32(v) + 1;
}

/*
 * Insert a version (deployed or not: deploying undeploys the current one).
 * SPI connected, name locked.  Under a transaction snapshot a concurrent
 * training may have stored the same version first: a serialization error.
 */
void
catalog_store_version(const Catalog *cat, const StoredVersion *v)
{
	Elevation	e;
	Oid			argtypes[11] = {TEXTOID, INT4OID, REGROLEOID, TEXTOID, JSONBOID,
	BYTEAOID, JSONBOID, INT8OID, INT4OID, BOOLOID, TEXTOID};
	Datum		args[11];

	args[0] = CStringGetTextDatum(v->name);
	args[1] = Int32GetDatum(v->version);
	args[2] = ObjectIdGetDatum(v->owner);
	args[3] = CStringGetTextDatum(v->query);
	args[4] = JsonbPGetDatum(v->options);
	args[5] = PointerGetDatum(v->model);
	args[6] = JsonbPGetDatum(v->metrics);
	args[7] = Int64GetDatum(v->n_train);
	args[8] = Int32GetDatum(v->n_features);
	args[9] = BoolGetDatum(v->deployed);
	args[10] = CStringGetTextDatum(v->search_path);

	catalog_elevate(cat, &e, true);
	if (v->deployed)
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
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
				 errmsg("could not store version %d of model \"%s\"", v->version, v->name),
				 errdetail("A concurrent transaction stored that version first."),
				 errhint("Retry; training in READ COMMITTED waits for the other training instead.")));
}
