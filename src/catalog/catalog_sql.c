/*
 * catalog_sql.c - the SQL functions of the catalog of named models:
 * kernel_model_train and kernel_model_retrain (the work in
 * named_train.c), kernel_model_deploy, kernel_model_drop,
 * kernel_model_reassign and kernel_model_get, and the trigger that completes
 * restored rows.  They check the caller against the model's owner and
 * then act on the catalog as its owner (catalog.c; the rows through
 * catalog_table.c).  Scoring by name, kernel_predict(name, features), is in
 * catalog_predict.c.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "json.h"
#include "pgutil.h"
#include "split.h"
#include "catalog.h"
#include "catalog_query.h"
#include "catalog_train.h"
#include "drift_named.h"
#include "named_table.h"

PG_FUNCTION_INFO_V1(kernel_model_train);
PG_FUNCTION_INFO_V1(kernel_model_train_table);
PG_FUNCTION_INFO_V1(kernel_train_query);
PG_FUNCTION_INFO_V1(kernel_model_retrain);
PG_FUNCTION_INFO_V1(kernel_model_deploy);
PG_FUNCTION_INFO_V1(kernel_model_drop);
PG_FUNCTION_INFO_V1(kernel_model_reassign);
PG_FUNCTION_INFO_V1(kernel_ml_catalog_restore);
PG_FUNCTION_INFO_V1(kernel_model_get);
PG_FUNCTION_INFO_V1(kernel_ml_holdout);
PG_FUNCTION_INFO_V1(kernel_model_owner_in);
PG_FUNCTION_INFO_V1(kernel_model_owner_out);

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

	static const char *const args[] = {"name", "query", "options"};

	catalog_check_not_null(fcinfo, "kernel_model_train(name, query, options)", args, 3);
	catalog_check_writable("kernel_model_train()");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	catalog_check_name(name);
	options = PG_GETARG_JSONB_P(2);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_train");
	catalog_train_named(&cat, name, text_to_cstring(PG_GETARG_TEXT_PP(1)), options,
						GetUserId(), NULL, catalog_search_path(), &tv);
	return_trained(fcinfo, name, &tv);
	return (Datum) 0;
}

/*
 * kernel_train_query(query text, options jsonb) RETURNS bytea: one model of
 * the query's rows, its passes run as statements (named_train.c).
 */
Datum
kernel_train_query(PG_FUNCTION_ARGS)
{
	Catalog		cat;

	static const char *const args[] = {"query", "options"};

	catalog_check_not_null(fcinfo, "kernel_train_query(query, options)", args, 2);
	catalog_open(fcinfo, &cat);
	PG_RETURN_BYTEA_P(catalog_train_query(&cat, text_to_cstring(PG_GETARG_TEXT_PP(0)),
										  PG_GETARG_JSONB_P(1)));
}

/*
 * kernel_model_train(name text, relation regclass, target text, options
 * jsonb): the stored query of the table's columns (named_table.c), then the
 * named road as kernel_model_train(name, query, options) with the options it
 * knows.
 */
Datum
kernel_model_train_table(PG_FUNCTION_ARGS)
{
	LOCAL_FCINFO(train, 3);
	Jsonb	   *train_opts;
	char	   *query;

	static const char *const args[] = {"name", "relation", "target", "options"};

	catalog_check_not_null(fcinfo, "kernel_model_train(name, relation, target, options)", args, 4);
	query = km_named_table_query(get_func_namespace(fcinfo->flinfo->fn_oid), PG_GETARG_OID(1),
								 text_to_cstring(PG_GETARG_TEXT_PP(2)),
								 PG_GETARG_JSONB_P(3), &train_opts);
	InitFunctionCallInfoData(*train, fcinfo->flinfo, 3, fcinfo->fncollation,
							 fcinfo->context, fcinfo->resultinfo);
	train->args[0] = fcinfo->args[0];
	train->args[1].value = CStringGetTextDatum(query);
	train->args[1].isnull = false;
	train->args[2].value = train_opts ? JsonbPGetDatum(train_opts) : (Datum) 0;
	train->args[2].isnull = train_opts == NULL;
	return kernel_model_train(train);
}

/*
 * kernel_model_retrain(name): the query, options and search_path of the
 * deployed version (of the latest when none is deployed: an experiment
 * stored with "deploy": "never" does not become what every scheduled run
 * trains), the query run as the model's owner (never as the caller: a
 * scheduled job is often a superuser's).  The version is stored only if
 * the name is still that model and still belongs to that owner under the
 * name lock (see catalog_train_named); metrics->'retrain' says which
 * version it started from and whether the rows changed since.
 * kernel_model_retrain(name, options) too: with {"when": "drifted"} it
 * first tests the rows the stored query returns now (as the owner) against
 * the version's drift reference (drift_named.c) and retrains only when the
 * p-value is below "alpha" (0.01); otherwise it stores nothing, returns no
 * row and says so in a NOTICE.
 */
Datum
kernel_model_retrain(PG_FUNCTION_ARGS)
{
	static const char *const args[] = {"name", "options"};
	char	   *name;
	Catalog		cat;
	Oid			owner;
	char	   *query;
	char	   *search_path;
	Jsonb	   *options;
	ModelRow	latest;
	MemoryContext caller = CurrentMemoryContext;
	RetrainSource from;
	TrainedVersion tv;
	RetrainWhen when = {false, 0.01};

	catalog_check_not_null(fcinfo, PG_NARGS() > 1 ? "kernel_model_retrain(name, options)" :
						   "kernel_model_retrain(name)", args, PG_NARGS());
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	if (PG_NARGS() > 1)
		drift_retrain_options(PG_GETARG_JSONB_P(1), &when);
	catalog_check_writable("kernel_model_retrain()");
	catalog_check_name(name);
	InitMaterializedSRF(fcinfo, 0);
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_retrain");
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!catalog_retrain_source(&cat, name, caller, &latest))
		catalog_no_such_model(name);
	SPI_finish();
	owner = latest.owner;
	query = latest.source_query;
	options = latest.options;
	/* versions from 0.1.0 stored none: the default path, "$user" the owner */
	search_path = latest.search_path ? latest.search_path : pstrdup(LEGACY_SEARCH_PATH);
	catalog_check_owner(name, owner);
	if (!catalog_role_exists(owner))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("owner of model \"%s\" does not exist", name),
				 errdetail("Model \"%s\" belongs to %s; its query runs only as its owner.",
						   name, catalog_role_label(owner)),
				 errhint("Train a new version with kernel_model_train, which makes the caller its owner, or drop the model with kernel_model_drop.")));

	from.model_id = latest.model_id;
	from.version = latest.version;
	from.deployed = latest.deployed;
	from.rows_digest = latest.rows_digest;
	from.digest_version = latest.digest_version;
	from.drift = NULL;
	if (when.drifted)
	{
		/* the stored query's rows now against the version's (drift_named.c) */
		DriftOutcome o;

		drift_test_version(&cat, name, latest.version, query, owner, search_path, true, &o);
		if (!(o.p_value < when.alpha))
		{
			ereport(NOTICE,
					(errmsg("model \"%s\" has not drifted: not retrained", name),
					 errdetail("The drift test of version %d against the %lld rows its query returns now gives p-value %g (statistic %g, %d degrees of freedom), not below alpha %g.",
							   o.version, (long long) o.n_new, o.p_value, o.statistic, o.dof,
							   when.alpha)));
			return (Datum) 0;
		}
		from.drift = drift_outcome_json(&o, &when);
	}
	catalog_train_named(&cat, name, query, options, owner, &from, search_path, &tv);
	return_trained(fcinfo, name, &tv);
	return (Datum) 0;
}

/* kernel_model_deploy(name, version) */
Datum
kernel_model_deploy(PG_FUNCTION_ARGS)
{
	static const char *const args[] = {"name", "version"};
	char	   *name;
	int32		version;
	Catalog		cat;
	bool		exists;
	int32		latest;
	NameRow		nr;

	catalog_check_not_null(fcinfo, "kernel_model_deploy(name, version)", args, 2);
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	version = PG_GETARG_INT32(1);
	catalog_check_writable("kernel_model_deploy()");
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_deploy");
	catalog_begin_change(&cat, name, &nr);

	latest = catalog_latest_of(&cat, name, version, &exists);
	if (!exists)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("version %d of model \"%s\" does not exist", version, name),
				 errdetail("The latest version of model \"%s\" is %d.", name, latest),
				 errhint("kernel_models lists the versions.")));
	catalog_deploy_version(&cat, name, version);
	SPI_finish();
	PG_RETURN_VOID();
}

/*
 * kernel_model_drop(name): every version and the name itself (the name is
 * free again; a new model of that name starts at version 1).
 * kernel_model_drop(name, version): one version, not the deployed one; the
 * name keeps its highest version number, so the number is never reused.  A
 * NULL version (say, from a clean-up subquery that found nothing) is an
 * error: never "every version".
 */
Datum
kernel_model_drop(PG_FUNCTION_ARGS)
{
	char	   *name;
	Catalog		cat;
	int64		dropped;
	bool		all = PG_NARGS() == 1;
	NameRow		nr;

	static const char *const args[] = {"name"};

	/* the name here; a null version below, with what to call instead */
	catalog_check_not_null(fcinfo, all ? "kernel_model_drop(name)" : "kernel_model_drop(name, version)",
						   args, 1);
	catalog_check_writable("kernel_model_drop()");
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));

	/*
	 * The catalog first: under 0.2.0's SQL, still in place before ALTER
	 * EXTENSION UPDATE, kernel_model_drop(name) is this two-argument form
	 * with a default NULL version (drop every version), which the error
	 * below would refuse with a hint to do just that.
	 */
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_drop");
	if (!all && PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("version must not be null"),
				 errdetail("kernel_model_drop(name, version) drops one version; the version given for model \"%s\" is null.", name),
				 errhint("To drop every version of the model, call kernel_model_drop(name) with the name alone.")));
	catalog_begin_change(&cat, name, &nr);

	if (!all)
	{
		int32		version = PG_GETARG_INT32(1);
		bool		deployed;

		if (!catalog_version_deployed(&cat, name, version, &deployed))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_OBJECT),
					 errmsg("version %d of model \"%s\" does not exist", version, name),
					 errhint("kernel_models lists the versions.")));
		if (deployed)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_IN_USE),
					 errmsg("cannot drop the deployed version of model \"%s\"", name),
					 errdetail("Version %d is deployed.", version),
					 errhint("Deploy another version with kernel_model_deploy first, or drop every version with kernel_model_drop(name).")));
	}
	dropped = catalog_drop_versions(&cat, name, all, all ? 0 : PG_GETARG_INT32(1));
	SPI_finish();
	PG_RETURN_INT32((int32) dropped);
}

/*
 * kernel_model_reassign(old_owner, new_owner): what REASSIGN OWNED does for
 * database objects, for model names, which it does not know: every name
 * owned by the role named old_owner, and (superusers only) every name left
 * by a dropped role of that name, now belongs to new_owner.  The caller
 * needs the privileges of both roles, as REASSIGN OWNED requires.  Versions
 * keep the owner they were stored with (kernel_models.owner); retraining
 * runs as the new owner.  Each name's row is locked as any change of the
 * name locks it.
 */
Datum
kernel_model_reassign(PG_FUNCTION_ARGS)
{
	static const char *const args[] = {"old_owner", "new_owner"};
	char	   *old_name;
	Oid			new_owner;
	Oid			old_owner;
	bool		orphans = superuser();
	Catalog		cat;
	uint64		count;

	catalog_check_not_null(fcinfo, "kernel_model_reassign(old_owner, new_owner)", args, 2);
	old_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	new_owner = PG_GETARG_OID(1);
	old_owner = get_role_oid(old_name, true);
	catalog_check_writable("kernel_model_reassign()");
	catalog_open(fcinfo, &cat);
	catalog_require_current(&cat, "kernel_model_reassign");
	if (!catalog_role_exists(new_owner))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("role with OID %u does not exist", new_owner)));
	if (OidIsValid(old_owner) && !has_privs_of_role(GetUserId(), old_owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to reassign the models of role \"%s\"", old_name),
				 errdetail("Only roles with the privileges of role \"%s\" can reassign its models.", old_name)));
	if (!OidIsValid(old_owner) && !orphans)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to reassign the models of role \"%s\"", old_name),
				 errdetail("Role \"%s\" does not exist; only a superuser can reassign the models a dropped role left.", old_name)));
	if (!has_privs_of_role(GetUserId(), new_owner))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to reassign models to role \"%s\"", GetUserNameFromId(new_owner, false)),
				 errdetail("Only roles with the privileges of the new owner can give it models.")));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	count = catalog_reassign_names(&cat, old_owner, old_name, orphans, new_owner);
	SPI_finish();
	PG_RETURN_INT32((int32) count);
}

/*
 * A role's OID from a name as a dump carries it: the role's name, or, from
 * a dump of 0.2.0 (regrole), the name quoted as an identifier or a dropped
 * role's bare OID.  InvalidOid when no role has that name.
 */
static Oid
restored_role(const char *rolname)
{
	Oid			role = get_role_oid(rolname, true);
	size_t		len = strlen(rolname);

	if (!OidIsValid(role) && len >= 2 && rolname[0] == '"' && rolname[len - 1] == '"')
	{
		/* "a""b" -> a"b */
		char	   *raw = palloc(len);
		size_t		n = 0;

		for (size_t i = 1; i < len - 1; i++)
		{
			raw[n++] = rolname[i];
			if (rolname[i] == '"' && rolname[i + 1] == '"')
				i++;
		}
		raw[n] = '\0';
		role = get_role_oid(raw, true);
	}
	return role;
}

/* A column of a trigger's row by name; isnull when the table has none. */
static Datum
trigger_col(HeapTuple tup, TupleDesc desc, const char *col, bool *isnull)
{
	int			att = SPI_fnumber(desc, col);

	if (att <= 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	return heap_getattr(tup, att, desc, isnull);
}

/*
 * The trigger BEFORE INSERT on kernel_model_names and kernel_models for rows
 * that do not come from the catalog functions, which write as the tables'
 * owner in a security-restricted operation: rows restored by pg_restore
 * (or inserted by a superuser).  The OID a dump carries means another
 * role, or none, in another cluster.  A name row of a dump of 0.4.0 on
 * carries its owner as owner_role (kernel_model_owner), written out as the
 * role's name by the source cluster at dump time ("-" for a role dropped
 * by then, or none) and read back as the role of that name here (none when
 * missing): a model without an owner stays without one, whatever roles the
 * target has (issue 29, point 5), and owner_name stays as dumped, for
 * display only.  A dump of 0.3.0 (no owner_role) and a version row give the
 * owner by role name, as before.  A role missing here makes the name no
 * one's (owner 0: only a superuser can deploy, drop, reassign or train over
 * it), without failing the restore of any other row.  A restored version
 * whose name has no row (a dump of 0.2.0, or versions restored before the
 * names) gets one, its highest version the version's number; a name row
 * restored after its versions replaces the one they made.  model_id is
 * always drawn anew: it is this cluster's.
 */
Datum
kernel_ml_catalog_restore(PG_FUNCTION_ARGS)
{
	TriggerData *td = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	desc;
	HeapTuple	tup;
	Catalog		cat;
	bool		is_names;
	bool		isnull;
	Datum		v;
	char	   *owner_name = NULL;
	Oid			owner;
	Datum		name;
	Datum		last_version;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("_kernel_ml_catalog_restore() was not called by the trigger manager"),
				 errdetail("It is the internal trigger of the tables kernel_models and kernel_model_names for rows that do not come from the catalog functions."),
				 errhint("Train, deploy and drop models with kernel_model_train, kernel_model_deploy and kernel_model_drop; restored rows go through the trigger by themselves.")));
	if (!TRIGGER_FIRED_BEFORE(td->tg_event) || !TRIGGER_FIRED_FOR_ROW(td->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(td->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("_kernel_ml_catalog_restore() must be fired BEFORE INSERT FOR EACH ROW"),
				 errdetail("Trigger \"%s\" on table \"%s\" fires it otherwise.",
						   td->tg_trigger->tgname, RelationGetRelationName(td->tg_relation)),
				 errhint("Drop trigger \"%s\": the extension's own triggers on kernel_models and kernel_model_names are the only ones it serves.",
						 td->tg_trigger->tgname)));
	rel = td->tg_relation;
	tup = td->tg_trigtuple;
	desc = RelationGetDescr(rel);
	catalog_open(fcinfo, &cat);

	/*
	 * Only the two catalog tables: on any other table, rows of the caller's
	 * choosing would be written into kernel_model_names as its owner.
	 */
	is_names = RelationGetRelid(rel) != cat.relid;
	if (is_names &&
		RelationGetRelid(rel) != get_relname_relid("kernel_model_names", get_rel_namespace(cat.relid)))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("_kernel_ml_catalog_restore() must be fired for kernel_models or kernel_model_names"),
				 errdetail("Trigger \"%s\" fires it for table \"%s\".",
						   td->tg_trigger->tgname, RelationGetRelationName(rel)),
				 errhint("Drop trigger \"%s\": the function serves only the extension's own triggers on kernel_models and kernel_model_names.",
						 td->tg_trigger->tgname)));
	/* the catalog functions' own rows */
	if (InSecurityRestrictedOperation() && GetUserId() == cat.owner)
		return PointerGetDatum(tup);

	v = trigger_col(tup, desc, is_names ? "owner_name" : "owner", &isnull);
	if (!isnull)
		owner_name = TextDatumGetCString(v);
	v = is_names ? trigger_col(tup, desc, "owner_role", &isnull) : (Datum) 0;
	if (is_names && !isnull)
	{
		/* resolved by name by kernel_model_owner's input, at the COPY */
		owner = DatumGetObjectId(v);
		if (!catalog_role_exists(owner))
			owner = InvalidOid;
	}
	else
		owner = owner_name ? restored_role(owner_name) : InvalidOid;
	if (OidIsValid(owner))
		owner_name = GetUserNameFromId(owner, false);
	else if (owner_name && strspn(owner_name, "0123456789") == strlen(owner_name))
		owner_name = NULL;		/* a dropped role's OID, from a dump of 0.2.0 */

	name = trigger_col(tup, desc, "name", &isnull);
	if (isnull)
		return PointerGetDatum(tup);	/* the NOT NULL constraint refuses it */
	last_version = trigger_col(tup, desc, is_names ? "last_version" : "version", &isnull);
	if (isnull)
		return PointerGetDatum(tup);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	catalog_restore_name(&cat, name, owner, owner_name, DatumGetInt32(last_version), is_names);
	SPI_finish();

	if (is_names)
		return PointerGetDatum(NULL);	/* stored above */
	{
		int			col = SPI_fnumber(desc, "owner");
		Datum		val = owner_name ? CStringGetTextDatum(owner_name) : (Datum) 0;
		bool		null = owner_name == NULL;

		return PointerGetDatum(heap_modify_tuple_by_cols(tup, desc, 1, &col, &val, &null));
	}
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

/*
 * kernel_model_owner (kernel_model_names.owner_role): a role's OID whose
 * text is the role's name, so that what a dump writes is decided when it
 * is written (issue 29, point 5).  Output: the name, quoted as an
 * identifier where needed (as regrole does), or "-" for no owner and for a
 * role that no longer exists.  Input: an identifier is the role of that
 * name in this cluster, or no owner (0) when there is none (a restore into
 * a cluster without the role never fails); "-" and a bare number (never a
 * role's name as output writes it) are no owner: an OID from elsewhere
 * names no role here.
 */
Datum
kernel_model_owner_in(PG_FUNCTION_ARGS)
{
	const char *s = PG_GETARG_CSTRING(0);
	size_t		len = strlen(s);

	if (len == 0 || strcmp(s, "-") == 0 || strspn(s, "0123456789") == len)
		PG_RETURN_OID(InvalidOid);
	PG_RETURN_OID(restored_role(s));
}

Datum
kernel_model_owner_out(PG_FUNCTION_ARGS)
{
	Oid			role = PG_GETARG_OID(0);
	char	   *rolname = OidIsValid(role) ? GetUserNameFromId(role, true) : NULL;

	PG_RETURN_CSTRING(rolname ? pstrdup(quote_identifier(rolname)) : pstrdup("-"));
}
