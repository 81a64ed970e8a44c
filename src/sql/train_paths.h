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

/* "solver": "cg" refused by an aggregate (what: its name), with a hint to the named paths. */
void		km_approx_refuse_cg(const km_options *opts, const char *what);

/*
 * The plan of an approximate regression over n rows of d features, its
 * sizes and lambdas checked (caller names the refusals), before a row is
 * read: the one-statement form's and the named path's.
 */
void		km_approx_plan(const km_options *opts, int64 n, int d, const char *caller,
						   km_train_plan *plan);
/*
 * The same for a classification method (classify.c): text labels, or the
 * distinct float8 targets as labels.  km_train_rowset calls it.
 */
bytea	   *km_train_classifier(RowSet *rs);

/* Internal folds of Platt scaling (libsvm uses 5). */
#define KM_PLATT_FOLDS 5

/*
 * What an approximate classifier refuses (Platt scaling, lambda <= 0), and
 * the warning of a fit that did not converge: the one-statement form's and
 * the named path's (src/catalog/passes.c).
 */
void		km_check_approx_classifier(const km_options *opts);
void		km_classifier_warn_not_converged(const km_fit_params *p,
											 const km_class_fit_result *res);

#endif							/* KM_TRAIN_PATHS_H */
