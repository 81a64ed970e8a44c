/*
 * catalog.h - the catalog of named models (table kernel_models), its
 * storage and privileges (catalog.c): finding it, acting as its owner, the
 * owner and privilege checks shared by training (named_train.c), scoring
 * by name (catalog_predict.c) and the SQL functions (catalog_sql.c).  The
 * rows of its tables are read and written by catalog_table.c only.
 */
#ifndef KM_CATALOG_H
#define KM_CATALOG_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/jsonb.h"

#include "catalog_table.h"

/* Longest model name, in bytes: as long as a PostgreSQL identifier. */
#define MODEL_NAME_MAX (NAMEDATALEN - 1)

/* The catalog table of the extension these functions belong to. */
typedef struct Catalog
{
	Oid			relid;
	Oid			owner;			/* the table's owner: who writes it */
	char	   *qualified;		/* "schema".kernel_models, quoted */
	char	   *names;			/* "schema".kernel_model_names, quoted */
	const char *schema;			/* the extension's schema, quoted */
	bool		legacy;			/* a 0.1.0 or 0.2.0 catalog: read only */
	const char *owner_expr;		/* SQL yielding the owner's OID ($1 the name) */
} Catalog;

/* Saved identity while acting as the catalog's owner. */
typedef struct Elevation
{
	Oid			userid;
	int			sec_context;
	int			guc_level;
} Elevation;

/* The deployed version of a name, as the lookup found it. */
typedef struct Deployed
{
	bool		name_exists;
	bool		found;
	Oid			owner;
	int32		version;
	Datum		model;			/* as stored: possibly a TOAST pointer */
} Deployed;

void		catalog_open(FunctionCallInfo fcinfo, Catalog *cat);

/*
 * Refuse to change a catalog of an older version (before ALTER EXTENSION
 * UPDATE): models can be read and scored, not trained, deployed or dropped.
 */
void		catalog_require_current(const Catalog *cat, const char *fname);

/*
 * Act as the catalog's owner (with pin_path, search_path pinned to
 * pg_catalog) until catalog_unelevate, which rolls back any setting.
 */
void		catalog_elevate(const Catalog *cat, Elevation *e, bool pin_path);
void		catalog_unelevate(Elevation *e);
void		catalog_check_spi(int rc, const char *what);

/*
 * Run sql_fmt (its %s the qualified table, $1 the name) as the catalog's
 * owner, rows left in SPI_tuptable; what names it in an error.
 */
void		catalog_query_name(const Catalog *cat, const char *sql_fmt,
							   const char *name, bool pin_path, bool read_only,
							   long limit, const char *what);

/* A role for messages: its name, or its OID if it was dropped. */
char	   *catalog_role_label(Oid role);

/* Errors unless the caller has the privileges of the owner (by OID). */
void		catalog_check_owner(const char *name, Oid owner);
void		catalog_no_such_model(const char *name) pg_attribute_noreturn();

/* A name a new version may be stored under: 1 to MODEL_NAME_MAX bytes. */
void		catalog_check_name(const char *name);

/* A writable transaction, checked before any work. */
void		catalog_check_writable(const char *fname);

/* Whether a role of this OID exists. */
bool		catalog_role_exists(Oid role);

/* The same, connecting to SPI, with the errors a reader of the model wants. */
void		catalog_find_deployed(const Catalog *cat, const char *name,
								  MemoryContext ctx, Deployed *out);

/*
 * Begin changing the versions of name: SPI connected, name locked, an
 * error unless it exists and the caller has its owner's privileges (checked
 * before the lock too, so a role without them never takes it).
 */
void		catalog_begin_change(const Catalog *cat, const char *name, NameRow *nr);

#endif							/* KM_CATALOG_H */
