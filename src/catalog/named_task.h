/*
 * named_task.h - what a named training does that depends on its task
 * (issue 28: the task is its steps, not a boolean of the run): one row per
 * task, each in a file of its own (named_regression.c: a numeric target,
 * and the tasks without one, which hold nothing out;
 * named_classification.c: class labels), chosen once from the method's
 * task row (named_tasks.c, as the learner finds a task's road).  The
 * catalog's shared code (named_train.c, passes.c, deploy.c) calls the
 * run's row and never asks which task it is.  Every step is set.
 */
#ifndef KM_NAMED_TASK_H
#define KM_NAMED_TASK_H

#include "postgres.h"

#include "json.h"
#include "learn/pipeline_types.h"
#include "host_cursor.h"
#include "named_common.h"

typedef struct NamedTask
{
	/*
	 * By passes over the stored query (passes.c) rather than in memory:
	 * false for what the learner's passes do not do for this task (another
	 * cross-validation than k-fold; an approximate svm's probabilities).
	 */
	bool		(*by_passes) (const struct NamedRun *run);

	/* In memory: the held-out rows first into order; returns their count. */
	int64		(*split) (const RowSet *rs, int64 seed, double fraction, int64 *order);

	/* In memory: the split model's scores on both sides (run->order). */
	void		(*score_rows) (struct NamedRun *run, Datum model, MemoryContext work);

	/*
	 * By passes: the split model's scores on both sides, the rows of each
	 * side (ntest, ntrain) and the rows skipped.
	 */
	void		(*score_passes) (struct NamedRun *run, Datum model);

	/* By passes: the learner's plan over n rows of d features, k classes. */
	void		(*plan) (const struct NamedRun *run, int64 n, int d, uint32 k,
						 km_train_plan *plan);

	/* By passes: what the query's second column is. */
	CursorTarget (*target_kind) (const struct NamedRun *run);

	/*
	 * By passes, the rows counted: the shape's classes (their storage in
	 * the current context) and the plan over h's rows.
	 */
	void		(*shape) (const struct NamedRun *run, CursorHost *h, km_rows *shape,
						  km_train_plan *plan);

	/* By passes, the model learnt: what to say of its fit (a warning). */
	void		(*learnt) (const struct NamedRun *run, const km_rows *shape,
						   const km_train_plan *plan);

	/*
	 * "if_better": whether the deployed model is of this task (false:
	 * *reason says why it is not compared).
	 */
	bool		(*same_task) (Datum deployed, const char **reason);

	/* "if_better", both of this task, rows held out: the comparison. */
	void		(*compare) (const struct NamedRun *run, struct Decision *d);

	/* "if_better", decided to deploy: a rule that still refuses (or none). */
	void		(*veto) (const struct NamedRun *run, struct Decision *d);

	/* The metrics: the scores of both sides, and the deploy comparison's. */
	void		(*json_scores) (KmJson *j, const struct NamedRun *run);
	void		(*json_compare) (KmJson *j, const struct NamedRun *run,
								 const struct Decision *d);
} NamedTask;

/* The row of the task of opts's method (named_tasks.c). */
const NamedTask *named_task_of(const km_options *opts);

/* The rows, one file each. */
extern const NamedTask named_regression;
extern const NamedTask named_classification;

#endif							/* KM_NAMED_TASK_H */
