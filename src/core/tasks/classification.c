/*
 * classification.c - the classification task (task.h): class labels
 * (text or numbers) as targets, as many outputs as the method's
 * multi-class scheme, its CLASSES, PROBABILITY and METRICS sections;
 * kernel_predict's decision value, kernel_predict_class and _proba;
 * scored by accuracy.  Its labels, weights and decisions: classify.c.
 * Core: no PostgreSQL header.
 */
#include "task.h"

const km_task_ops km_task_classification = {
	.id = KM_TASK_CLASSIFICATION,
	.name = "classification", .classes = true,
	.score_metric = KM_SCORE_ACCURACY, .target = true,
	.verbs = KM_VERB_PREDICT | KM_VERB_CLASS,
};
