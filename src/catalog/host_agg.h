/*
 * host_agg.h - the aggregate host (issue 28, DESIGN-0.4.md step 5): each
 * pass the learner asks for is one statement over the named model's
 * stored query, SELECT _kernel_ml_pass(s.f, s.y, $1) FROM (query) s, with
 * the pass's descriptor (src/pg/pass_desc.h) as $1; parallel workers and
 * Citus shards run the pass where the rows are, and this backend combines
 * their states.  The rows, split, folds and labels are the cursor host's
 * (host_cursor.h: its counting scan comes first); a pass that cannot
 * travel (learn/pass.h kind 0: an ordered pass, one over the learner's own
 * arrays) runs on the cursor host, as before.  Under Citus a large
 * descriptor is not the statement's argument (Citus would copy it into a
 * record for every row): it is broadcast to the workers once, and $1 is
 * its short form.
 */
#ifndef KM_HOST_AGG_H
#define KM_HOST_AGG_H

#include "host_cursor.h"
#include "pass_desc.h"

typedef struct AggHost
{
	CursorHost *cursor;
	km_host		cursor_host;	/* the passes that do not travel */
	const char *schema;			/* the extension's, quoted */
	PassRules	rules;
	int			statements;		/* passes run as a statement */
	int			scans;			/* passes run on the cursor host */
	/*
	 * The statement reads a Citus table (-1: not asked yet): a descriptor
	 * longer than KM_PASS_REF_MIN_BYTES then goes to the worker nodes once
	 * per statement as an intermediate result, the aggregate gets its
	 * short form (pass_desc.h PassDescRef)
	 */
	int			citus;
	int			broadcasts;		/* descriptors sent so */
} AggHost;

/*
 * Count the rows of query as cursor_host_count does (the same fields of h:
 * rows per side, fold and label, d, skipped), by one aggregate statement
 * grouped by label and side (the SQL function _kernel_ml_row_side applies
 * the host's rules), so that parallel workers and Citus shards count them.
 */
extern void agg_host_count(CursorHost *h, const CatalogQuery *query, const char *schema,
						   int d, CursorTarget target, bool all_rows, int64 seed,
						   double test_fraction, int folds, MemoryContext cxt);

/*
 * The aggregate host over every row of query with a feature array of d
 * values and a second column not null (the drift test's sums, asked by
 * the core: learn/drift_pass.h km_drift_sum): counted by one statement
 * first, *rows and *skipped (rows with a NULL) set.
 */
extern km_host agg_host_all(AggHost *a, CursorHost *h, const CatalogQuery *query,
							const char *schema, int d, int64 *rows, int64 *skipped,
							MemoryContext cxt);

/* The aggregate host over a counted cursor host (cursor_host_count, class_of set). */
extern km_host agg_host(AggHost *a, CursorHost *h, const char *schema);

#endif							/* KM_HOST_AGG_H */
