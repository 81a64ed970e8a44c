/*
 * unit_host.h - a host of the learner's passes (learn/pass.h) over rows in
 * plain arrays, for the unit tests: the memory host's walk
 * (src/pg/host_memory.c) without PostgreSQL, with a block size of choice.
 */
#ifndef KM_UNIT_HOST_H
#define KM_UNIT_HOST_H

#include "learn/learner.h"

/*
 * km_learn over rows (X, y or rows->classes->cls, hash, fold) handed in
 * blocks of block rows (0: KM_BLOCK_ROWS); KM_ERR_INVALID without hashes.
 */
km_status	unit_learn_blocks(const km_rows *rows, const km_train_plan *plan,
							  const km_train_env *env, km_model *m, km_error *err,
							  size_t block);

/* unit_learn_blocks with the memory host's blocks. */
km_status	unit_learn(const km_rows *rows, const km_train_plan *plan,
					   const km_train_env *env, km_model *m, km_error *err);

#endif							/* KM_UNIT_HOST_H */
