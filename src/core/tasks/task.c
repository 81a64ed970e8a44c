/*
 * task.c - the task registry: regression, classification, transform and
 * novelty (task.h).
 * Core: no PostgreSQL header.
 */
#include "task.h"

/* Indexed by id - 1: km_task's values (method.h), stored in models. */
static const km_task_ops tasks[] = {
	{.id = KM_TASK_REGRESSION, .name = "regression", .classes = false,
	.score_metric = KM_SCORE_MSE, .solvers = false, .approx_gcv = true,
	.target = true},
	{.id = KM_TASK_CLASSIFICATION, .name = "classification", .classes = true,
	.score_metric = KM_SCORE_ACCURACY, .solvers = true, .approx_gcv = false,
	.target = true},
	/* kernel PCA: rows without a target, the coordinates of kernel_transform */
	{.id = KM_TASK_TRANSFORM, .name = "transform", .classes = false,
	.score_metric = KM_SCORE_MSE, .solvers = false, .approx_gcv = false,
	.target = false, .embeds = true},
	/* the one-class SVM: rows without a target, a decision value, inlier or outlier */
	{.id = KM_TASK_NOVELTY, .name = "novelty", .classes = false,
	.score_metric = KM_SCORE_MSE, .solvers = false, .approx_gcv = false,
	.target = false, .embeds = false,
	.sign_labels = {"outlier", "inlier"}},
};

#define N_TASKS ((long long) (sizeof(tasks) / sizeof(tasks[0])))

const km_task_ops *
km_task_get(long long id)
{
	return id >= 1 && id <= N_TASKS ? &tasks[id - 1] : NULL;
}

const km_task_ops *
km_task_lookup(long long id)
{
	const km_task_ops *t = km_task_get(id);

	return t ? t : km_task_default();
}

const km_task_ops *
km_task_default(void)
{
	return &tasks[0];
}

const char *
km_task_name(km_task task)
{
	const km_task_ops *t = km_task_get(task);

	return t ? t->name : "unknown";
}
