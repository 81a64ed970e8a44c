/*
 * learner.c - the learner's entry (learner.h): the task's road over a host.
 */
#include "learn/learner.h"
#include "pipeline.h"
#include "task.h"

km_status
km_learn(const km_rows *shape, const km_host *host, const km_train_plan *plan,
		 const km_train_env *env, km_model *m, km_error *err)
{
	const km_task_train *road = km_task_road(plan->task);
	km_rows		rows = {0};
	km_class_rows classes;

	if (road == NULL || (shape->classes != NULL) != plan->task->classes)
		return km_fail(err, KM_ERR_INVALID, "the rows do not fit the plan's task",
					   "The rows have %s classes; the plan's task is %s.",
					   shape->classes != NULL ? "their" : "no",
					   plan->task != NULL ? plan->task->name : "none");
	if (!plan->approximate || road->train_approx == NULL)
		return km_fail(err, KM_ERR_INVALID, "the learner trains approximate models only",
					   "The plan's representation has no basis; km_train fits the exact expansion.");
	/* the shape without a row array: every row comes from the host */
	rows.n = shape->n;
	rows.d = shape->d;
	rows.rows_skipped = shape->rows_skipped;
	if (shape->classes != NULL)
	{
		classes = *shape->classes;
		classes.X = NULL;
		classes.cls = NULL;
		rows.classes = &classes;
	}
	return road->train_approx(&rows, host, plan, env, m, err);
}
