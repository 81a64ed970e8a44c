/*
 * catalog_owner.h - the catalog's handle (struct Catalog, found by
 * catalog.c's catalog_open) and acting as its owner (catalog_owner.c):
 * what both catalog.c and catalog_table.c need, below both of them
 * (issue 23: no import circle).
 */
#ifndef KM_CATALOG_OWNER_H
#define KM_CATALOG_OWNER_H

#include "postgres.h"

/* The catalog table of the extension these functions belong to. */
typedef struct Catalog
{
	Oid			relid;
	Oid			owner;			/* the table's owner: who writes it */
	char	   *qualified;		/* "schema".kernel_models, quoted */
	char	   *names;			/* "schema".kernel_model_names, quoted */
	char	   *ids;			/* 'schema.kernel_model_ids'::regclass, for nextval */
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

#endif							/* KM_CATALOG_OWNER_H */
