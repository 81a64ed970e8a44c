/*
 * tasks.c - the task registry: regression, classification, transform and
 * novelty (task.h, one file each), and the steps every task answers from
 * its row: the rows it takes, its outputs, its scoring verbs.
 * Core: no PostgreSQL header.
 */
#include "task.h"

#include <stddef.h>
#include <stdio.h>

/* Indexed by id - 1: km_task's values, stored in models. */
static const km_task_ops *const tasks[] = {
	&km_task_regression,
	&km_task_classification,
	&km_task_transform,
	&km_task_novelty,
};

#define N_TASKS ((long long) (sizeof(tasks) / sizeof(tasks[0])))

const km_task_ops *
km_task_get(long long id)
{
	return id >= 1 && id <= N_TASKS ? tasks[id - 1] : NULL;
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
	return tasks[0];
}

const char *
km_task_name(km_task task)
{
	const km_task_ops *t = km_task_get(task);

	return t ? t->name : "unknown";
}

const km_task_ops *
km_task_for_labels(void)
{
	long long	t = KM_TASK_FIRST;

	while (t < KM_TASK_LAST && !km_task_get(t)->classes)
		t++;
	return km_task_get(t);
}

km_status
km_task_check_rows(const km_task_ops *t, bool has_classes, km_error *err)
{
	if (t != NULL && has_classes == t->classes)
		return KM_OK;
	return km_fail(err, KM_ERR_INVALID, "the rows do not fit the plan's task",
				   "The rows have %s classes; the plan's task is %s.",
				   has_classes ? "their" : "no", t != NULL ? t->name : "none");
}

km_status
km_task_check_outputs(const km_task_ops *t, uint32_t q, km_error *err)
{
	/* a task without a target has its method's outputs (kernel PCA's components) */
	if (q != 1 && t->target)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A regression model has %u outputs; it must have 1.",
					   (unsigned) q);
	return KM_OK;
}

/* A refusal's hint: km_fail sets the message and detail. */
static km_status
refuse(km_error *err, const char *hint)
{
	snprintf(err->hint, sizeof(err->hint), "%s", hint);
	return err->status;
}

km_status
km_task_check_verb(const km_task_ops *t, km_verb verb, uint32_t n_classes,
				   uint32_t n_outputs, const char *fname, const char *method,
				   km_error *err)
{
	bool		serves = (t->verbs & verb) != 0;

	if (verb == KM_VERB_CLASS)
		serves = serves && n_classes >= 2;
	if (serves)
		return KM_OK;
	switch (verb)
	{
		case KM_VERB_PREDICT:
			km_fail(err, KM_ERR_INVALID, "", "Method \"%s\" gives %u coordinates per row, not a prediction.",
					method, (unsigned) n_outputs);
			snprintf(err->message, sizeof(err->message), "%s cannot score a %s model",
					 fname, t->name);
			return refuse(err, "Use kernel_transform(model, features) for the coordinates.");
		case KM_VERB_CLASS:
			km_fail(err, KM_ERR_INVALID, "", "The model is a %s model of method \"%s\".",
					t->name, method);
			snprintf(err->message, sizeof(err->message), "%s needs a classifier", fname);
			return refuse(err, "Use kernel_predict for a regression model.");
		case KM_VERB_TRANSFORM:
			km_fail(err, KM_ERR_INVALID, "kernel_transform needs a kernel PCA model",
					"The model's task is %s (method \"%s\"): its outputs are predictions, not coordinates.",
					t->name, method);
			return refuse(err, "Score it with kernel_predict(model, features); fit embeddings with kernel_fit(features, '{\"method\": \"pca\"}').");
	}
	return km_fail(err, KM_ERR_INVALID, "unknown scoring verb", "Verb %d is none of km_verb's.",
				   (int) verb);
}

km_status
km_task_check_training(const km_task_ops *t, bool with_target, const char *method,
					   const char *what, const char *others, km_error *err)
{
	if (with_target == t->target)
		return KM_OK;
	if (with_target)
	{
		km_fail(err, KM_ERR_INVALID, "", "Method \"%s\" is fitted on rows without a target (task %s).",
				method, t->name);
		snprintf(err->message, sizeof(err->message), "method \"%s\" takes no target", method);
		return refuse(err, "Use kernel_fit(features, options).");
	}
	km_fail(err, KM_ERR_INVALID, "", "Method \"%s\" predicts a target; %s fits only the methods without one (%s).",
			method, what, others);
	snprintf(err->message, sizeof(err->message), "method \"%s\" needs a target", method);
	return refuse(err, "Train it with kernel_train(features, target, options).");
}

const char *
km_task_sign_label(const km_task_ops *t, uint32_t n_outputs, double f)
{
	if (t->sign_labels[0] == NULL || n_outputs != 1)
		return NULL;
	return t->sign_labels[f > 0 ? 1 : 0];
}

bool
km_task_gamma_sigest(const km_task_ops *t, bool gamma_default,
					 km_kernel_type kernel, size_t n)
{
	return gamma_default && kernel == KM_KERNEL_RBF && !t->classes && n >= 2;
}
