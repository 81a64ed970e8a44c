/*
 * catalog_query.h - running a named model's training query the way
 * PostgreSQL runs user code during maintenance, and keeping its rows.
 */
#ifndef KM_CATALOG_QUERY_H
#define KM_CATALOG_QUERY_H

#include "postgres.h"

#include "rowset.h"

/*
 * The caller's effective search_path as schema names that mean the same in
 * any session and as any role (stored with a version for its retraining).
 */
char	   *catalog_search_path(void);

/*
 * Check that query is one statement returning (float8[], float8) or types
 * that convert to them, or a second column of a string type (text labels:
 * rs->label_type KM_LABEL_TEXT), run it as run_as with search_path, and collect its
 * rows into a RowSet in ctx.  SPI connected.
 */
RowSet	   *catalog_collect_rows(const char *query, Oid run_as,
								 const char *search_path, MemoryContext ctx);

#endif							/* KM_CATALOG_QUERY_H */
