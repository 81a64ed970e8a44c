/*
 * learner.h - the learner (core, no PostgreSQL headers; issue 28,
 * DESIGN-0.4.md step 1): composes the task, the representation and the
 * method from a training plan once, and asks a host for passes.
 *
 * A host (learn/pass.h km_host) holds the rows and knows no task, method
 * or representation: the memory host (src/pg/host_memory.c) walks the
 * aggregate's rows in blocks; the cursor and aggregate hosts are next.
 * The learner decides every pass (basis, sums, Newton steps, held-out
 * scores, folds, tallies) from the states the host hands back, then the
 * model.  Every model trains here: an approximate one (nystrom, rff;
 * every method and task) by its passes, the exact expansion by one
 * "gather" pass (the memory host hands its rows as they are; another
 * host's are appended) and then km_train's exact road (the dual fit).
 *
 * The learner asks, the host runs: km_host.run(pass, state) is called from
 * inside the learner, as PostgreSQL's index build hands its callback to
 * table_index_build_scan, so the roads keep their nested loops (grid,
 * folds, Newton steps) as plain code.  Every host of the design runs a
 * pass within that call (the memory host over its arrays; a cursor host
 * by one scan of the stored query; an aggregate host by one statement per
 * pass).  A pull form (begin / next / take / model) for a host that must
 * return between passes would turn the roads into state machines around
 * the same passes; km_pass_run is the one place a pass is asked.
 */
#ifndef KM_LEARN_LEARNER_H
#define KM_LEARN_LEARNER_H

#include "learn/pass.h"
#include "pipeline_types.h"

/*
 * Train plan (km_train_plan_make for shape->n and shape->d) on the rows
 * host holds into m (arrays from env->alloc).  shape: the rows' count,
 * width, skipped rows, the default gamma's ranking (gamma_order) and a
 * classifier's classes table; the learner reads none of its row arrays
 * (X, y, hashes, folds, class ids: the host hands them in blocks).
 * m->writer_version is the caller's.  A failure sets err.
 */
km_status	km_learn(const km_rows *shape, const km_host *host,
					 const km_train_plan *plan, const km_train_env *env,
					 km_model *m, km_error *err);

/*
 * A pass the learner asked for, rebuilt in another process from its kind
 * and point (learn/pass.h: what point_write wrote), as untrusted bytes:
 * the aggregate host's parallel workers and shards add their rows into
 * states of it, which the learner's process combines.  Memory from env
 * (the job, its basis, a chunk's buffers).  KM_ERR_FORMAT for bytes that
 * are not a point of that kind.
 */
km_status	km_pass_rebuild(uint16_t kind, const void *point, size_t len,
							const km_train_env *env, km_pass **out, km_error *err);

#endif							/* KM_LEARN_LEARNER_H */
