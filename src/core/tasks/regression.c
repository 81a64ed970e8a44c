/*
 * regression.c - the regression task (task.h): a numeric target, centred
 * before the fit; one output, kernel_predict's value; scored by MSE.
 * Core: no PostgreSQL header.
 */
#include "task.h"

const km_task_ops km_task_regression = {
	.id = KM_TASK_REGRESSION,
	.name = "regression", .classes = false,
	.score_metric = KM_SCORE_MSE, .target = true,
	.verbs = KM_VERB_PREDICT,
};
