/*
 * pipeline_approx.h - km_train's approximate regression (core, no
 * PostgreSQL headers): a representation with a basis (repr.h), rows in
 * memory (pipeline_approx.c), and the solve from ridge's sums that the
 * kernel_train(features, y, basis) aggregate shares with it.
 */
#ifndef KM_PIPELINE_APPROX_H
#define KM_PIPELINE_APPROX_H

#include "pipeline_types.h"

/*
 * Approximate regression (pipeline_approx.c; the regression task's road
 * in km_train): its sizes into plan (opts resolved; k is 0), and the
 * training itself, the learner's over a host (learn/learner.h km_learn;
 * rows: the shape).
 */
void		km_train_plan_approx(size_t n, int d, uint32_t k, km_train_plan *plan);


/*
 * A ridge model from the m x m sums of its features (accum.h, rows >= 1,
 * validated): km_approx_solve with GCV over the lambdas (1 ..
 * KM_APPROX_MAX_LAMBDAS, each > 0: the glue checks them), then the model
 * (model.h km_approx_model_fill; components: the number asked for).  The
 * one place both forms solve: the rows in memory (km_train) and the
 * kernel_train(features, y, basis) aggregate's final function.  keep_gp:
 * keep the factor of the Gaussian-process reading (gp.h; the
 * "uncertainty" option), m(m+1)/2 doubles in the model.  evidence: the
 * lambdas are scored by minus the log marginal likelihood ("cv":
 * "evidence"), not GCV.
 */
km_status	km_train_approx_solve(const km_basis *b, uint32_t components,
								  const km_accum *acc, const double *lambdas,
								  int n_lambdas, bool fit_intercept, bool keep_gp,
								  bool evidence, uint64_t rows_skipped, const km_train_env *env,
								  km_model *m, km_error *err);

#endif							/* KM_PIPELINE_APPROX_H */
