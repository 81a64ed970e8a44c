/*
 * train_paths.h - the training paths km_train_rowset (train.c)
 * dispatches to, declared apart from train.h so that the files defining
 * them do not import the dispatcher (issue 23: no import circle).
 */
#ifndef KM_TRAIN_PATHS_H
#define KM_TRAIN_PATHS_H

#include "postgres.h"

#include "memory_train.h"
#include "rowset.h"

/*
 * Approximate regression (approx.c): the collected rows through km_train
 * (the basis pass, then ridge's sums or a primal method's Newton passes).
 */
bytea	   *km_approx_train_rowset(RowSet *rs);

/*
 * The plan of an approximate regression over n rows of d features, its
 * sizes and lambdas checked (caller names the refusals), before a row is
 * read: the one-statement form's and the named path's.
 */
void		km_approx_plan(const km_options *opts, int64 n, int d, const char *caller,
						   km_train_plan *plan);

#endif							/* KM_TRAIN_PATHS_H */
