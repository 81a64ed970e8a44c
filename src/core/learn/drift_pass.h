/*
 * drift_pass.h - the drift test's sums over rows as a pass (issue 32 item
 * 4, issue 33): the rows' count, the sum of their J features and of their
 * products (drift.h), an additive state, so that the aggregate host runs it
 * where the rows are (parallel workers, Citus shards).  Its point is the
 * drift basis's encoding (drift.h km_drift_encode: scaler, locations or
 * random features), rebuilt in another process by km_drift_pass_rebuild.
 */
#ifndef KM_LEARN_DRIFT_PASS_H
#define KM_LEARN_DRIFT_PASS_H

#include "drift.h"
#include "learn/pass.h"
#include "learn/point.h"
#include "pipeline_types.h"

/* The pass kind (learn/pass.h kind; the approximate roads take 1 to 12). */
#define KM_PASS_KIND_DRIFT 13

/* Doubles of the pass's state: the count, J sums, J x J products. */
size_t		km_drift_pass_doubles(uint32_t J);

/*
 * The pass of drift basis r (its sums are not read) over env's memory:
 * what, chunk and the point set.  After the run, km_drift_pass_take adds
 * the state into r (n, sum, cross).
 */
km_pass    *km_drift_pass(const km_drift *r, const km_train_env *env);
void		km_drift_pass_take(km_drift *r, const double *state);

/*
 * r's sums += the drift features of every row host holds (one pass over
 * env's memory); a failure sets err.
 */
km_status	km_drift_sum(const km_host *host, km_drift *r, const km_train_env *env,
						 km_error *err);

/* The pass from its point (km_pass_rebuild's), as untrusted bytes. */
km_status	km_drift_pass_rebuild(km_point_reader *r, const km_train_env *env,
								  km_pass **out, km_error *err);

#endif							/* KM_LEARN_DRIFT_PASS_H */
