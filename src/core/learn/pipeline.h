/*
 * pipeline.h - km_train, the road from rows to a model (core, no
 * PostgreSQL headers; issue 23 point 2).
 *
 * The learner (learn/learner.h km_learn) takes the road of the plan's task
 * (pipeline_types.h km_task_train, found by the task's name) over a host:
 * an approximate one by its passes, an exact one after one gather pass by
 * km_train, the exact road over rows in memory.  Exact regression
 * (ridge, lms, svr): standardize the rows, the default rbf gamma, centre
 * the target, select gamma and lambda if asked, fit, assemble the
 * km_model; exact classifiers weigh the classes instead of centring.
 * Approximate regression (a representation with a basis, repr.h;
 * pipeline_approx.c): the basis pass over the rows, their features a block
 * at a time into ridge's m x m sums (solved in closed form with GCV over
 * the lambdas) or a method's primal Newton passes (svr), the model;
 * approximate classifiers (pipeline_approx_classify.c): the Newton passes
 * of every class at once.  Like every core function it allocates
 * nothing itself: the glue supplies memory, workspaces and interrupts
 * through a km_train_env, and checks memory before it calls (from the
 * sizes of km_train_plan_make), so that its errors come first and keep
 * their text.  Encoding the model (model.h) is the caller's.
 */
#ifndef KM_PIPELINE_H
#define KM_PIPELINE_H

#include "pipeline_types.h"

/* The road of task t (test_pipeline.c: every task has one), or NULL. */
const km_task_train *km_task_road(const struct km_task_ops *t);

/* k: a classifier's classes; 0: regression. */
void		km_train_plan_make(const km_options *o, size_t n, int d, uint32_t k,
							   km_train_plan *plan);

/*
 * ymean := the mean of y (0 without an intercept; a sum that overflows is
 * taken over y[i] / n).  Returns the first row whose y - ymean is not
 * finite, or n: the glue checks it before km_train to raise its error.
 */
size_t		km_train_centre(const double *y, size_t n, bool fit_intercept,
							double *ymean);

/*
 * Train on rows in memory with plan (km_train_plan_make for rows->n and
 * rows->d; the exact expansion: an approximate plan runs over a host, by
 * km_learn) into m, whose arrays live in memory from env->alloc.
 * m->writer_version is the caller's.  A failure sets err.
 */
km_status	km_train(const km_rows *rows, const km_train_plan *plan,
					 const km_train_env *env, km_model *m, km_error *err);

#endif							/* KM_PIPELINE_H */
