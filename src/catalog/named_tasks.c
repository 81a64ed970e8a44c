/*
 * named_tasks.c - which NamedTask row a named training takes
 * (named_common.h): each task row (task.h) with the file of its steps in a
 * named training, as the learner's roads are found (pipeline.c
 * km_task_road): by the task's row, not its name.  A new task adds a line
 * here and a file of its steps, or shares a row.
 */
#include "postgres.h"

#include "method.h"
#include "task.h"
#include "named_common.h"
#include "named_task.h"

static const struct
{
	const km_task_ops *task;
	const NamedTask *steps;
}			named_tasks[] = {
	{&km_task_regression, &named_regression},
	{&km_task_classification, &named_classification},
	/* no target: nothing held out, scored or compared (named_regression.c) */
	{&km_task_transform, &named_regression},
	{&km_task_novelty, &named_regression},
};

const NamedTask *
named_task_of(const km_options *opts)
{
	const km_task_ops *t = km_task_lookup(km_method_task(opts->fit.method));

	for (int i = 0; i < (int) lengthof(named_tasks); i++)
		if (named_tasks[i].task == t)
			return named_tasks[i].steps;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("method \"%s\" cannot be trained by name", km_method_name(opts->fit.method)),
			 errdetail("Its task has no steps for a named training in this build."),
			 errhint("Train it with kernel_train or kernel_fit.")));
	pg_unreachable();
}
