/*
 * train_paths.h - the training paths km_train_rowset (train.c)
 * dispatches to, declared apart from train.h so that the files defining
 * them do not import the dispatcher (issue 23: no import circle).
 */
#ifndef KM_TRAIN_PATHS_H
#define KM_TRAIN_PATHS_H

#include "postgres.h"

#include "rowset.h"

/* Approximate models (approx.c): both passes over the collected rows. */
bytea	   *km_approx_train_rowset(RowSet *rs);
/* The same for a method fitted in the primal (approx_primal.c; km_method_ops.primal_fit). */
bytea	   *km_approx_primal_train_rowset(RowSet *rs);
/*
 * The same for a classification method (classify.c): text labels, or the
 * distinct float8 targets as labels.  km_train_rowset calls it.
 */
bytea	   *km_train_classifier(RowSet *rs);

#endif							/* KM_TRAIN_PATHS_H */
