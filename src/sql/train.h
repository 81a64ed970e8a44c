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
 * The default gamma of an exact rbf model (gamma not given): kernlab's
 * sigest (select.h km_gamma_sigest) over the standardized rows.  Up to
 * km_sigest_rows(n, d) rows (1000 for d <= 67) every pair counts; beyond,
 * the pairs of that many rows of lowest hash of their raw features
 * (split.h, with the options' seed), so that the same rows in any order
 * give the same gamma.  Other kernels, approximate models (whose basis pass fixes the
 * kernel before all rows are seen) and a given gamma keep theirs (1 / d by
 * default).  km_default_gamma_pairs ranks the raw rows X (n x d) when that
 * is needed (NULL otherwise); km_default_gamma then sets opts->gammas.v[0]
 * and opts->fit.kernel.gamma from the same rows standardized (Xs, in the
 * same order) and frees the ranking.
 */
int64	   *km_default_gamma_pairs(const km_options *opts, const double *X,
								   size_t n, int d);
void		km_default_gamma(km_options *opts, const double *Xs, size_t n, int d,
							 int64 *pairs);

/* Approximate models (approx.c): both passes over the collected rows. */
bytea	   *km_approx_train_rowset(RowSet *rs);
/* The same for a method fitted in the primal (approx_primal.c; km_method_ops.primal_fit). */
bytea	   *km_approx_primal_train_rowset(RowSet *rs);
/*
 * The same for a classification method (classify.c): text labels, or the
 * distinct float8 targets as labels.  km_train_rowset calls it.
 */
bytea	   *km_train_classifier(RowSet *rs);

#endif							/* KM_TRAIN_H */
