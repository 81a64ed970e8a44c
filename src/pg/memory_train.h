/*
 * memory_train.h - the memory host's one entry for an aggregate's rows
 * (memory_train.c): an exact regression or any classifier (exact or
 * approximate) from a RowSet, the model as a new bytea in the caller's
 * context.  Below src/sql and src/catalog, which call it.
 */
#ifndef KM_MEMORY_TRAIN_H
#define KM_MEMORY_TRAIN_H

#include "postgres.h"

#include "options.h"
#include "pipeline.h"
#include "rowset.h"

/* Internal folds of Platt scaling (libsvm uses 5). */
#define KM_PLATT_FOLDS 5

/*
 * Train on rs's rows (a regression, or the classes of its labels, text or
 * float8; exact or approximate), its order canonical first, once the
 * method is found to train (km_task_check_training, "kernel_train").
 */
bytea	   *km_memory_train_rowset(RowSet *rs);

/*
 * The rows of rs (in the memory host's order already) through the learner
 * over the memory host under plan, checked and sized by the caller; the
 * model as a bytea.  Its work lives in a memory context of its own,
 * deleted before the return.
 */
bytea	   *km_memory_fit(RowSet *rs, const km_train_plan *plan);

/*
 * A numeric target the regression task finds label-like
 * (km_regression_label_like) trained without "method": a NOTICE saying how
 * to classify instead, or to say that a regression is meant.
 */
void		km_memory_notice_target(const RowSet *rs);

/*
 * The plan of an approximate regression over n rows of d features, its
 * sizes and lambdas checked (caller names the refusals), before a row is
 * read: the one-statement form's, the named path's and kernel_fit's.
 */
void		km_approx_plan(const km_options *opts, int64 n, int d, const char *caller,
						   km_train_plan *plan);

/* An approximate ridge's lambdas: at most KM_APPROX_MAX_LAMBDAS, each > 0. */
void		km_approx_check_lambdas(const km_options *opts);

/* "solver": "cg" refused by an aggregate (what: its name), with a hint to the named paths. */
void		km_approx_refuse_cg(const km_options *opts, const char *what);

/*
 * What an approximate classifier refuses (Platt scaling, lambda <= 0), and
 * the warning of a fit that did not converge: the one-statement form's and
 * the named path's (src/catalog/passes.c).
 */
void		km_check_approx_classifier(const km_options *opts);
void		km_classifier_warn_not_converged(const km_fit_params *p,
											 const km_class_fit_result *res);

#endif							/* KM_MEMORY_TRAIN_H */
