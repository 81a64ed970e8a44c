/*
 * passes_primal.h - named approximate regression methods fitted in the
 * primal (km_method_ops.primal_add .. primal_result, e.g. svr) trained by
 * passes over the stored query (passes_primal.c).
 */
#ifndef KM_PASSES_PRIMAL_H
#define KM_PASSES_PRIMAL_H

#include "postgres.h"

#include "named_common.h"

/* Whether method has the pieces of a primal fit that passes_primal.c drives. */
bool		passes_primal_method(int method);

/*
 * The passes of one named training: the model of the training rows, scored
 * on both sides by score (passes.c's SQL scoring pass); with refit (and a
 * hold-out), the model of every usable row is the one stored.
 */
typedef void (*PassesScoreFn) (const NamedRun *run, Datum model, bool holdout_only,
							   km_metrics *holdout, km_metrics *train, int64 *skipped);
void		passes_primal_fit_and_score(NamedRun *run, MemoryContext work,
										PassesScoreFn score);

#endif							/* KM_PASSES_PRIMAL_H */
