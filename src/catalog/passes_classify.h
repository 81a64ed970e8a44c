/*
 * passes_classify.h - the scoring pass of named approximate classifiers
 * over the stored query (passes_classify.c).
 */
#ifndef KM_PASSES_CLASSIFY_H
#define KM_PASSES_CLASSIFY_H

#include "postgres.h"

#include "named_common.h"

/*
 * The classification scores of model on the held-out rows (into holdout)
 * and, unless holdout_only, on the training rows (into train) and the
 * count of rows with a NULL feature array or label (into *skipped).
 */
void		passes_class_score(const NamedRun *run, Datum model, bool holdout_only,
							   ClassScores *holdout, ClassScores *train, int64 *skipped);

#endif							/* KM_PASSES_CLASSIFY_H */
