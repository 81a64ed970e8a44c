/*
 * train_paths.h - the training paths km_train_rowset (train.c)
 * dispatches to, declared apart from train.h so that the files defining
 * them do not import the dispatcher (issue 23: no import circle).
 */
#ifndef KM_TRAIN_PATHS_H
#define KM_TRAIN_PATHS_H

#include "postgres.h"

#include "rowset.h"

/*
 * Approximate regression (approx.c): the collected rows through km_train
 * (the basis pass, then ridge's sums or a primal method's Newton passes).
 */
bytea	   *km_approx_train_rowset(RowSet *rs);
/*
 * The same for a classification method (classify.c): text labels, or the
 * distinct float8 targets as labels.  km_train_rowset calls it.
 */
bytea	   *km_train_classifier(RowSet *rs);

#endif							/* KM_TRAIN_PATHS_H */
