/*
 * catalog_owner.c - acting as the catalog's owner (catalog_owner.h): the
 * statements on the catalog's tables run as the role that owns them,
 * security-restricted, with search_path pinned when asked.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/guc.h"

#include "catalog_owner.h"

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
