/*
 * novelty.c - the novelty task (task.h): the one-class SVM's rows without
 * a target (kernel_fit); one output, a decision value, whose sign is the
 * class kernel_predict_class returns: "inlier" above 0, "outlier" at or
 * below (libsvm's and scikit-learn's rule).
 * Core: no PostgreSQL header.
 */
#include "task.h"

const km_task_ops km_task_novelty = {
	.id = KM_TASK_NOVELTY,
	.name = "novelty", .classes = false,
	.score_metric = KM_SCORE_MSE, .target = false,
	.sign_labels = {"outlier", "inlier"},
	.verbs = KM_VERB_PREDICT,
};
