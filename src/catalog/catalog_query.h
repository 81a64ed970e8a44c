/*
 * catalog_query.h - running a named model's training query the way
 * PostgreSQL runs user code during maintenance, and keeping its rows.
 */
#ifndef KM_CATALOG_QUERY_H
#define KM_CATALOG_QUERY_H

#include "postgres.h"

#include "executor/spi.h"

#include "options.h"
#include "rowset.h"

/*
 * The caller's effective search_path as schema names that mean the same in
 * any session and as any role (stored with a version for its retraining).
 */
char	   *catalog_search_path(void);

/*
 * Check that query is one statement returning (float8[], float8) or types
 * that convert to them, or a second column of a string type (text labels:
 * rs->label_type KM_LABEL_TEXT), or the features alone (a target of 0 per
 * row: kernel_fit's methods), run it as run_as with search_path, and collect its
 * rows into a RowSet in ctx.  SPI connected.
 */
RowSet	   *catalog_collect_rows(const char *query, Oid run_as,
								 const char *search_path, MemoryContext ctx);

/*
 * The first temporary relation query reads, run as run_as with
 * search_path, or InvalidOid (a model trained from one cannot be retrained
 * in another session).  SPI connected.
 */
Oid			catalog_query_temp_relation(const char *query, Oid run_as,
										const char *search_path);

/*
 * A stored query run by SQL passes (named approximate regression models,
 * whose rows are never collected): checked once by catalog_query_open,
 * then each pass is one statement over q->source, the query's rows as
 * (f float8[], y float8) (y text for text labels) under the alias s, run
 * by catalog_query_run as run_as with search_path (as above; pg_temp
 * last).  The statement must name everything else schema-qualified
 * (pg_catalog., the extension's schema) and use OPERATOR(pg_catalog.x).
 * SPI connected.
 */
/*
 * The kind of the query's label column (options.h: class labels for a
 * string or boolean type), the query planned as run_as with search_path
 * and its columns checked: what named training parses its options for.
 * *features_only: the query returns one column, the features (a method
 * without a target, kernel_fit's), numeric labels then.
 */
KmLabelKind catalog_query_label_kind(const char *query, Oid run_as,
									 const char *search_path, bool *features_only);

typedef struct CatalogQuery
{
	char	   *body;			/* the query, trailing ';' and blanks removed */
	Oid			run_as;
	char	   *path;			/* the search_path pinned */
	bool		text_label;		/* its second column is a string type */
	char	   *source;			/* "(SELECT ... FROM (body) ...) AS s" */
	const char *fn;				/* the SQL function it runs for, in messages */
} CatalogQuery;

void		catalog_query_open(CatalogQuery *q, const char *query, Oid run_as,
							   const char *search_path);

/*
 * Run one SELECT (parameters $1 .. $nargs, none NULL) as the query runs;
 * its rows are left in SPI_tuptable.  A parallel plan is allowed.
 */
int			catalog_query_run(const CatalogQuery *q, const char *sql, int nargs,
							  Oid *argtypes, Datum *values);

/*
 * Run one SELECT over the query's rows (parameters as catalog_query_run)
 * through a cursor, a batch of at most fetch rows at a time: batch(arg,
 * tuptable, n) is called for each, in a memory context reset after it, and
 * must run no SQL (the query's role and settings are in effect for the
 * whole scan).  Its memory is one batch, whatever the rows: the caller
 * sizes fetch by the bytes of a row.  Not parallel.
 */
/*
 * The relations sql depends on (views expanded), analyzed (not planned)
 * as the query runs: its role, security-restricted, its search_path.
 */
List	   *catalog_query_relations(const CatalogQuery *q, const char *sql, int nargs,
									Oid *argtypes);

/*
 * One statement that may change state outside the tables (Citus's
 * intermediate results), run as the query runs (its role,
 * security-restricted, its search_path): the SPI result code.
 */
int			catalog_query_call(const CatalogQuery *q, const char *sql, int nargs,
							   Oid *argtypes, Datum *values);

typedef void (*CatalogBatchFn) (void *arg, SPITupleTable *tuptable, uint64 n);

void		catalog_query_scan(const CatalogQuery *q, const char *sql, int nargs,
							   Oid *argtypes, Datum *values, long fetch,
							   CatalogBatchFn batch, void *arg);

#endif							/* KM_CATALOG_QUERY_H */
