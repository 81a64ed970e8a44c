/*
 * catalog.c - the catalog of named models, its storage and privileges:
 * finding the table, acting as its owner, the owner checks
 * (see catalog.h); the rows of its tables are read and written by
 * catalog_table.c.  The SQL functions are in catalog_sql.c, the work of
 * training in named_train.c, passes.c, passes_classify.c and deploy.c (its
 * query runs in catalog_query.c), scoring by name in catalog_predict.c.
 *
 * Versions live in the table kernel_models, in the extension's schema.
 * Nobody but its owner (the role that created the extension) may write the
 * table directly; these functions check that the caller has the privileges
 * of the role that owns a model name (kernel_model_names.owner, an OID),
 * then read and write the tables as their owner with search_path pinned and
 * every name qualified, like a SECURITY DEFINER function.  Between
 * installing this library and ALTER EXTENSION kernel_ml UPDATE, the catalog
 * may still be 0.1.0's (owner by name, no search_path), 0.2.0's (owner a
 * regrole per version, no kernel_model_names) or that of another version
 * with kernel_model_names (0.3.0's): its models can be read and scored, not
 * changed.
 *
 * The changes of one name are serialised by a lock on its row of
 * kernel_model_names (catalog_lock_name), which no other role can read, let
 * alone lock.  Rows of either table that do not come from these functions
 * (a pg_restore) are completed by a trigger (catalog_restore below): owners
 * resolved by role name, a name row for every restored version.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
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
#include "utils/fmgroids.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "catalog.h"
#include "catalog_table.h"

/*
 * The catalog of the schema that holds the function being called: the
 * extension's schema, wherever it was installed.
 */
void
catalog_open(FunctionCallInfo fcinfo, Catalog *cat)
{
	Oid			nsp = get_func_namespace(fcinfo->flinfo->fn_oid);
	char	   *nspname = get_namespace_name(nsp);
	Oid			names;
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

	cat->names = quote_qualified_identifier(nspname, "kernel_model_names");
	cat->ids = psprintf("%s::pg_catalog.regclass",
						quote_literal_cstr(quote_qualified_identifier(nspname, "kernel_model_ids")));

	/*
	 * Between installing this library and ALTER EXTENSION kernel_ml UPDATE
	 * the catalog is still 0.1.0's (owner by name) or 0.2.0's (owner a
	 * regrole per version): models can be read and scored, not changed (see
	 * require_current).
	 */
	names = get_relname_relid("kernel_model_names", nsp);
	cat->legacy = !OidIsValid(names);
	if (!cat->legacy)
		cat->owner_expr = psprintf("COALESCE((SELECT n.owner FROM %s n "
								   "WHERE n.name OPERATOR(pg_catalog.=) $1), 0::pg_catalog.oid)",
								   cat->names);
	else if (get_attnum(cat->relid, "search_path") == InvalidAttrNumber)
		cat->owner_expr = "COALESCE(pg_catalog.to_regrole(pg_catalog.quote_ident(owner::pg_catalog.text))::pg_catalog.oid, 0::pg_catalog.oid)";
	else
		cat->owner_expr = "owner::pg_catalog.oid";
	/* 0.3.0's kernel_model_names, without model_id: read only as well */
	if (!cat->legacy && get_attnum(names, "model_id") == InvalidAttrNumber)
		cat->legacy = true;
}

/*
 * The version of the extension's SQL objects (pg_extension.extversion), or
 * NULL: what its catalog is until ALTER EXTENSION kernel_ml UPDATE, while
 * this library may already be a newer one.
 */
static char *
installed_version(void)
{
	Oid			ext = get_extension_oid("kernel_ml", true);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	char	   *version = NULL;

	if (!OidIsValid(ext))
		return NULL;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		bool		isnull;
		Datum		v = heap_getattr(tup, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);

		if (!isnull)
			version = TextDatumGetCString(v);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return version;
}

void
catalog_require_current(const Catalog *cat, const char *fname)
{
	char	   *version = installed_version();

	/*
	 * A catalog of another version (0.3.0's, before the update to this
	 * library's): this library writes only the catalog of its own version.
	 * The shape check below is for a catalog whose version cannot be read.
	 */
	if (version != NULL && strcmp(version, KM_VERSION_STRING) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs the kernel_ml %s catalog", fname, KM_VERSION_STRING),
				 errdetail("The extension's SQL objects, the catalog of named models among them, are still those of kernel_ml %s.",
						   version),
				 errhint("Run ALTER EXTENSION kernel_ml UPDATE.")));
	if (cat->legacy)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("%s needs the kernel_ml %s catalog", fname, KM_VERSION_STRING),
				 errdetail("The catalog of named models is still the one of an older kernel_ml: it has no table kernel_model_names, or no column model_id in it."),
				 errhint("Run ALTER EXTENSION kernel_ml UPDATE.")));
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
	/*
	 * A shard statement on a Citus worker, which has no catalog: the
	 * coordinator gives the workers the model's bytes only for a constant
	 * name (predict_citus.c).
	 */
	if (strncmp(application_name ? application_name : "", "citus_internal gpid=", 20) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("model \"%s\" does not exist", name),
				 errdetail("This is a Citus worker running a shard statement: named models live on the coordinator."),
				 errhint("Score by name with a constant name, with kernel_ml loaded on the coordinator before the statement is planned (shared_preload_libraries = 'citus,kernel_ml'), or by the model's bytes: kernel_predict((SELECT kernel_model_get(%s)), features).",
						 quote_literal_cstr(name))));
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
 * Null arguments of the catalog's verbs (issue 30): one rule for all of
 * them, an error naming the argument.  STRICT would make a null argument
 * "nothing to do" (no row, no error), which a scheduled job or a clean-up
 * subquery that found nothing would take for success; a null that meant
 * "every version" or "the default" would be worse.  Readers
 * (kernel_model_get, kernel_predict) stay STRICT: a null in, a null out.
 */
void
catalog_check_not_null(FunctionCallInfo fcinfo, const char *fname,
					   const char *const *argnames, int nargs)
{
	for (int i = 0; i < nargs && i < PG_NARGS(); i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null", argnames[i]),
					 errdetail("Argument %d of %s is null; the functions that change named models take no null argument.",
							   i + 1, fname),
					 errhint("Pass a value, or leave an argument that has a default out.")));
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

bool
catalog_role_exists(Oid role)
{
	return OidIsValid(role) && SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(role));
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
 * an error unless it exists and the caller has its owner's privileges.  The
 * owner is checked before the lock, so that a role that may not change the
 * name never holds its lock, and again under it, where it counts.
 */
void
catalog_begin_change(const Catalog *cat, const char *name, NameRow *nr)
{
	Oid			owner;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!catalog_name_owner(cat, name, &owner))
		catalog_no_such_model(name);
	catalog_check_owner(name, owner);
	catalog_lock_name(cat, name, nr);
	if (!nr->exists)
		catalog_no_such_model(name);
	catalog_check_owner(name, nr->owner);
}
