/*
 * pipeline_primal.h - the approximate regression road (pipeline_primal.c):
 * the regression task's approximate training in km_train, the learner's
 * over a host (learn/learner.h km_learn; rows: the shape).
 */
#ifndef KM_PIPELINE_PRIMAL_H
#define KM_PIPELINE_PRIMAL_H

#include "learn/point.h"
#include "pipeline_types.h"

km_status	km_train_approx(const km_rows *rows, const km_host *host,
							const km_train_plan *plan, const km_train_env *env,
							km_model *m, km_error *err);

/*
 * A pass of the primal road (its kind, learn/pass.h) rebuilt from its
 * point in another process (learner.h km_pass_rebuild); *out NULL when
 * kind is not one of its kinds.
 */
km_status	km_primal_pass_rebuild(uint16_t kind, km_point_reader *r,
								   const km_train_env *env, km_pass **out,
								   km_error *err);

#endif							/* KM_PIPELINE_PRIMAL_H */
