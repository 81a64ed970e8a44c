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

#include "catalog_owner.h"
#include "catalog_table.h"

/* Longest model name, in bytes: as long as a PostgreSQL identifier. */
#define MODEL_NAME_MAX (NAMEDATALEN - 1)

void		catalog_open(FunctionCallInfo fcinfo, Catalog *cat);

/*
 * Refuse to change a catalog of an older version (before ALTER EXTENSION
 * UPDATE): models can be read and scored, not trained, deployed or dropped.
 */
void		catalog_require_current(const Catalog *cat, const char *fname);

/* A role for messages: its name, or its OID if it was dropped. */
char	   *catalog_role_label(Oid role);

/* Errors unless the caller has the privileges of the owner (by OID). */
void		catalog_check_owner(const char *name, Oid owner);
void		catalog_no_such_model(const char *name) pg_attribute_noreturn();

/* A name a new version may be stored under: 1 to MODEL_NAME_MAX bytes. */
void		catalog_check_name(const char *name);

/*
 * The one rule for null arguments of the verbs that change the catalog
 * (train, retrain, deploy, drop, reassign): any null argument is an error
 * (22004) naming it, before any other check.  argnames: the SQL names of
 * the first nargs arguments, those checked.
 */
void		catalog_check_not_null(FunctionCallInfo fcinfo, const char *fname,
								   const char *const *argnames, int nargs);

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
