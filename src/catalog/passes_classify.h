/*
 * passes_classify.h - named approximate classifiers by passes over the
 * stored query (passes_classify.c).
 */
#ifndef KM_PASSES_CLASSIFY_H
#define KM_PASSES_CLASSIFY_H

#include "postgres.h"

#include "named_common.h"

/* passes_classify.c: approximate classifiers by passes */
void		passes_classify_fit_and_score(NamedRun *run, MemoryContext work);
void		passes_class_score(const NamedRun *run, Datum model, bool holdout_only,
							   ClassScores *holdout, ClassScores *train, int64 *skipped);

#endif							/* KM_PASSES_CLASSIFY_H */
