/*
 * pipeline_class_fill.h - what the classifiers' roads size and fill
 * besides their passes (pipeline_class_fill.c).
 */
#ifndef KM_PIPELINE_CLASS_FILL_H
#define KM_PIPELINE_CLASS_FILL_H

#include "pipeline_types.h"

/*
 * An approximate classifier's sizes into plan (opts resolved; k classes):
 * q, the candidates of k-fold selection, basis_bytes (0 when a size
 * overflows or the components are beyond km_components_max, the cap of
 * the options' check too),
 * approx_bytes (what the training holds, the caller's hash-ordered copy of
 * the rows counted) and cache_bytes (the n x m features, kept when the
 * glue can spare them: km_class_rows.feature_cache).
 */
void		km_train_plan_approx_classes(size_t n, int d, uint32_t k,
										 km_train_plan *plan);

/*
 * The rest of a classifier's model (exact, and the approximate path's
 * too): kernel, method and settings, classes (c; c->res the fit's result),
 * probabilities, training metrics, selection.  The caller has set the sizes
 * and the arrays (prob_A and prob_B are dropped without probabilities).
 */
void		km_train_fill_classes(km_model *m, const km_options *opts,
								  const km_class_rows *c, int ncand, int best,
								  km_candidate *cand);

/*
 * The approximate classifiers' errors (pipeline_approx_classify.c): a
 * decision value of output c of q not finite in the block from row i0;
 * no candidate of count scored (its grid route's none).
 */
km_status	km_class_fail_nonfinite(km_error *err, uint32_t c, uint32_t q, size_t i0);
km_status	km_class_grid_none(void *arg, int count, km_error *err);

#endif							/* KM_PIPELINE_CLASS_FILL_H */
