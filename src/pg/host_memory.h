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

#endif							/* KM_HOST_MEMORY_H */
