/*
 * drift_named.h - the drift test of a named model (drift_named.c): its
 * training side captured when a version is trained (one more pass, the
 * reference stored in kernel_models.drift_reference), kernel_model_drift,
 * and the "when": "drifted" option of kernel_model_retrain.
 */
#ifndef KM_DRIFT_NAMED_H
#define KM_DRIFT_NAMED_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "catalog.h"
#include "named_common.h"

/*
 * The training side of run's model: its basis (core drift.h) and the sums
 * of every usable row the query returned (both sides of the hold-out
 * split), from the rows kept in memory or, for a model trained by passes,
 * one pass over the stored query (as run_as, as training ran it); NULL
 * when the model has no basis.  In ctx.  SPI connected.
 */
bytea	   *drift_capture(const NamedRun *run, MemoryContext ctx);

/* Store ref (NULL: nothing) with version of name; SPI connected, name locked. */
void		drift_store(const Catalog *cat, const char *name, int32 version, bytea *ref);

/* kernel_model_retrain's options: "when" ("always", "drifted"), "alpha". */
typedef struct RetrainWhen
{
	bool		drifted;		/* retrain only on drift */
	double		alpha;			/* the test's level, (0, 1) */
} RetrainWhen;

void		drift_retrain_options(Jsonb *options, RetrainWhen *out);

/* The result of a drift test, as kernel_model_drift returns it. */
typedef struct DriftOutcome
{
	int32		version;		/* the version whose reference was used */
	double		statistic;
	double		p_value;
	int			dof;
	int			features;		/* J */
	const char *basis;			/* "kernel locations" or "random features" */
	int64		n_train;
	int64		n_new;
	int64		new_skipped;
} DriftOutcome;

/*
 * The drift test of version of name (its stored reference) against the
 * rows of query run as run_as with search_path (the rules of stored
 * queries: catalog_query.c; stored: the version's own query, for
 * errors); SPI not connected.
 */
void		drift_test_version(const Catalog *cat, const char *name, int32 version,
							   const char *query, Oid run_as, const char *search_path,
							   bool stored, DriftOutcome *out);

/* The outcome as jsonb, in the current memory context. */
Jsonb	   *drift_outcome_json(const DriftOutcome *o, const RetrainWhen *when);

#endif							/* KM_DRIFT_NAMED_H */
