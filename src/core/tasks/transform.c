/*
 * transform.c - the transform task (task.h): kernel PCA's rows without a
 * target (kernel_fit); its outputs are the method's coordinates, which
 * kernel_transform returns, and its model has a PCA section.
 * Core: no PostgreSQL header.
 */
#include "task.h"

const km_task_ops km_task_transform = {
	.id = KM_TASK_TRANSFORM,
	.name = "transform", .classes = false,
	.score_metric = KM_SCORE_MSE, .target = false,
	.verbs = KM_VERB_TRANSFORM,
};
