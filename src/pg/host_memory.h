/*
 * host_memory.h - the memory host (issue 28, DESIGN-0.4.md): runs the
 * learner's passes (learn/pass.h) over rows an aggregate holds in memory.
 */
#ifndef KM_HOST_MEMORY_H
#define KM_HOST_MEMORY_H

#include "postgres.h"

#include "learn/learner.h"

/*
 * Train plan on rows (arrays in memory: X, y or rows->classes->cls, hash,
 * fold; in the order the passes add them; rows->gamma_order and the
 * classes' table as km_train takes them) by the learner (km_learn), the
 * memory host handing the rows in blocks of KM_BLOCK_ROWS (a gather: in
 * one).  As km_train: the model in m, err on failure.  An approximate
 * plan needs rows->hash.
 */
km_status	km_memory_train(const km_rows *rows, const km_train_plan *plan,
							const km_train_env *env, km_model *m, km_error *err);

/*
 * How the memory host presents rows: in the order of a hash of each row's
 * values and the seed (split.c km_rank_rows), whatever order they came in
 * (a parallel plan, ORDER BY ... DESC, a named model's query), so that
 * rounding, an online method's path and the rows an exact model keeps are
 * the same bit for bit.  The same for every task:
 *   km_memory_order_rows    n rows of X and y (targets, or NULL) in place
 *                           (the aggregate's state keeps the same rows:
 *                           a later final or transition call sees a valid
 *                           state); 24 bytes a row counted against
 *                           kernel_ml.max_memory first (what: the caller).
 *   km_memory_order_classes a copy of the rows (*X, n x d) and of their
 *                           class ids (*cls) in the order of a hash of the
 *                           features and the class; the caller's stay as
 *                           they were.
 */
void		km_memory_order_rows(double *X, double *y, int64 n, int d, int64 seed,
								 const char *what);
void		km_memory_order_classes(const double *X, const uint32 *cls, int64 n, int d,
									int64 seed, double **Xout, uint32 **clsout);

#endif							/* KM_HOST_MEMORY_H */
