/*
 * train.h - the training pipeline behind the kernel_train aggregate,
 * callable from C (named models train on rows they collected themselves).
 */
#ifndef KM_TRAIN_H
#define KM_TRAIN_H

#include "postgres.h"

#include "rowset.h"

/*
 * Fit on the rows of rs with rs->opts and return the encoded model in a new
 * bytea in CurrentMemoryContext: exactly what kernel_train returns for the
 * same rows, in the same order, with the same options.
 */
bytea	   *km_train_rowset(RowSet *rs);

/*
 * The one NOTICE of an aggregate's final function when it skipped rows
 * with a NULL feature array or target (skipped > 0), used rows trained.
 */
void		km_notice_skipped(int64 skipped, int64 used);

/*
 * A filled km_model as a new bytea, decoded once more to prove its reader
 * accepts it (54000 when it would exceed 1 GB).
 */
struct km_model;
bytea	   *km_model_to_bytea(const struct km_model *m);

/* Approximate models (approx.c): both passes over the collected rows. */
bytea	   *km_approx_train_rowset(RowSet *rs);
/*
 * The same for a classification method (classify.c): text labels, or the
 * distinct float8 targets as labels.  km_train_rowset calls it.
 */
bytea	   *km_train_classifier(RowSet *rs);

/*
 * kernel_model_info's classification keys (classify.c), for the caller to
 * add to its object: "classes" {"label": training rows, ...} in class order,
 * and "probability" (the solver is a METHOD field).  Nothing for a regression model.
 */
struct KmJson;
void		km_classifier_info(const struct km_model *m, struct KmJson *j);

#endif							/* KM_TRAIN_H */
