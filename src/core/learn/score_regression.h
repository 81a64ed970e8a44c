/*
 * score_regression.h - a regression model's error sums over rows as one
 * pass: each side of the hold-out split's count, squared and absolute
 * errors and its targets' mean and squared deviations (metrics.h's
 * km_metrics), so that the aggregate host scores where the rows are
 * (parallel workers, Citus shards), each row's prediction computed once,
 * in blocks (score.h km_scorer_block).
 */
#ifndef KM_LEARN_SCORE_REGRESSION_H
#define KM_LEARN_SCORE_REGRESSION_H

#include "learn/pass.h"
#include "learn/point.h"
#include "metrics.h"
#include "pipeline_types.h"

/* The pass kind (learn/pass.h kind; 17 a classifier's scores, 18 cg's sample). */
#define KM_PASS_KIND_SCORE_REGRESSION 19

/*
 * The error sums of a model of one output (model: its encoded bytes, len)
 * on the rows host holds, each block carrying every row's target and side
 * (held): held-out rows into held, the others into train (NULL: held-out
 * rows only).  KM_ERR_INVALID for a model of more than one output, or
 * blocks without targets or sides.
 */
km_status	km_regression_score(const km_host *host, const uint8_t *model, size_t len,
								km_metrics *held, km_metrics *train,
								const km_train_env *env, km_error *err);

/* The pass from its point (km_pass_rebuild's), as untrusted bytes. */
km_status	km_regression_score_rebuild(km_point_reader *r, const km_train_env *env,
										km_pass **out, km_error *err);

#endif							/* KM_LEARN_SCORE_REGRESSION_H */
