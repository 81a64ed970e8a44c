/*
 * pipeline_rows.h - the road of a task without a target (core, no
 * PostgreSQL headers): rows without a target (kernel_fit), fitted by the
 * method's fit_rows (exact: one gather pass, then the n x n Gram matrix)
 * or its fit_sums (nystrom, rff: the basis pass, then one pass of the
 * additive sums of the features z z' and z).  pipeline.c's table of roads
 * names it for each such task (transform: kernel PCA); it asks the
 * method's ops (method.h, "tasks without a target") and never names one.
 */
#ifndef KM_PIPELINE_ROWS_H
#define KM_PIPELINE_ROWS_H

#include "learn/point.h"
#include "pipeline_types.h"

/* Its sizes (opts resolved; k is 0): exact, approximate. */
void		km_train_plan_rows(size_t n, int d, uint32_t k, km_train_plan *plan);
void		km_train_plan_rows_approx(size_t n, int d, uint32_t k, km_train_plan *plan);

/* The exact fit on rows in memory (after the learner's gather pass). */
km_status	km_train_rows(const km_rows *rows, const km_train_plan *plan,
						  const km_train_env *env, km_model *m, km_error *err);

/* The approximate fit over a host (learn/learner.h km_learn; rows: the shape). */
km_status	km_train_rows_approx(const km_rows *rows, const km_host *host,
								 const km_train_plan *plan,
								 const km_train_env *env, km_model *m,
								 km_error *err);

/*
 * The rows road's travelling pass (learn/pass.h kind): its sums of every
 * row's features, rebuilt from its point in another process (learner.h
 * km_pass_rebuild); *out NULL for another kind.
 */
km_status	km_rows_pass_rebuild(uint16_t kind, km_point_reader *r,
								 const km_train_env *env, km_pass **out, km_error *err);

#endif							/* KM_PIPELINE_ROWS_H */
