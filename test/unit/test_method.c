/*
 * test_method.c - the method registry (src/core/methods/methods.c): every method is
 * reachable by id and name, fills every hook, and an unknown method is an
 * error everywhere instead of ridge (0.1.0 trained ridge for it).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "model.h"
#include "options_core.h"
#include "primal.h"
#include "task.h"
#include "unit.h"

void		test_method_registry(void);
void		test_method_unknown_is_an_error(void);
void		test_method_task_table(void);
void		test_method_answers(void);

/* A method's own options (method.h own_options), on a method made up here. */
typedef struct fake_params
{
	double		epsilon;
	int			steps;
	bool		shrink;
} fake_params;

KM_STATIC_ASSERT(sizeof(fake_params) <= KM_METHOD_BLOB_SIZE, fake_params);

static const km_method_option fake_options[] = {
	{{"epsilon", KM_OPTTYPE_NUMBER, 0, INFINITY, false, false, "a number >= 0", "0.1",
	KM_FN_TRAINING, 0}, offsetof(fake_params, epsilon), 0.1},
	{{"steps", KM_OPTTYPE_INTEGER, 1, 100, false, false, "an integer from 1 to 100", "7",
	KM_FN_TRAINING, 0}, offsetof(fake_params, steps), 7},
	{{"shrink", KM_OPTTYPE_BOOL, 0, 0, false, false, "true or false", "true",
	KM_FN_TRAINING, 0}, offsetof(fake_params, shrink), 1},
};

static void
check_own_options(void)
{
	km_method_ops fake = {0};
	km_own_value given[3];
	km_method_blob blob;
	km_option_error err;
	const fake_params *fp = KM_METHOD_BLOB_CONST(&blob, fake_params);

	fake.name = "fake";
	fake.own_options = fake_options;
	fake.n_own_options = 3;
	fake.params_size = sizeof(fake_params);

	/* nothing given: the defaults */
	memset(&blob, 0xff, sizeof(blob));
	CHECK(km_method_params_fill(&fake, NULL, 0, &blob, &err), "%s", err.detail);
	CHECK(fp->epsilon == 0.1 && fp->steps == 7 && fp->shrink, "defaults %g %d %d",
		  fp->epsilon, fp->steps, (int) fp->shrink);
	CHECK(blob.bytes[KM_METHOD_BLOB_SIZE - 1] == 0, "the rest of the blob zeroed");

	/* given values over the defaults; a key of another method is left alone */
	memset(given, 0, sizeof(given));
	given[0].key = "epsilon";
	given[0].type = KM_VALUE_NUMBER;
	given[0].number = 0.25;
	given[1].key = "shrink";
	given[1].type = KM_VALUE_BOOL;
	given[1].boolean = false;
	given[2].key = "learning_rate";
	given[2].type = KM_VALUE_NUMBER;
	given[2].number = 3;
	CHECK(km_method_params_fill(&fake, given, 3, &blob, &err), "%s", err.detail);
	CHECK(fp->epsilon == 0.25 && fp->steps == 7 && !fp->shrink, "given %g %d %d",
		  fp->epsilon, fp->steps, (int) fp->shrink);

	/* out of the row's range, and of the wrong type: the shared messages */
	given[0].number = -1;
	snprintf(given[0].text, sizeof(given[0].text), "-1");
	CHECK(!km_method_params_fill(&fake, given, 1, &blob, &err), "epsilon -1 passed");
	CHECK(strcmp(err.message, "invalid value for option \"epsilon\"") == 0 &&
		  strcmp(err.detail, "Option \"epsilon\" must be a number >= 0, got -1.") == 0,
		  "%s: %s", err.message, err.detail);
	given[0].key = "steps";
	given[0].number = 2.5;
	snprintf(given[0].text, sizeof(given[0].text), "2.5");
	CHECK(!km_method_params_fill(&fake, given, 1, &blob, &err), "steps 2.5 passed");
	CHECK(strcmp(err.detail, "Option \"steps\" must be an integer from 1 to 100, got 2.5.") == 0,
		  "%s", err.detail);

	/* every registered method's own options fit its params, and those the blob */
	for (int id = KM_METHOD_FIRST; id <= KM_METHOD_LAST; id++)
	{
		const km_method_ops *ops = km_method_get((km_method) id);

		CHECK(ops->params_size <= KM_METHOD_BLOB_SIZE, "%s params_size %zu",
			  ops->name, ops->params_size);
		for (int i = 0; i < ops->n_own_options; i++)
			CHECK(ops->own_options[i].offset < ops->params_size &&
				  km_options_valid_keys() != NULL &&
				  strstr(km_options_valid_keys(), ops->own_options[i].def.key) != NULL,
				  "%s option %s", ops->name, ops->own_options[i].def.key);
		CHECK(ops->n_own_options == 0 || ops->own_options != NULL, "%s rows", ops->name);
	}
}

void
test_method_registry(void)
{
	for (int id = KM_METHOD_FIRST; id <= KM_METHOD_LAST; id++)
	{
		const km_method_ops *ops = km_method_get((km_method) id);
		km_method	back;

		CHECK(ops != NULL, "method %d has no ops", id);
		if (ops == NULL)
			continue;
		CHECK((int) ops->id == id, "method %d says it is %d", id, (int) ops->id);
		CHECK(km_method_by_name(ops->name) == ops, "name %s", ops->name);
		CHECK(km_method_from_name(ops->name, &back) && (int) back == id, "%s", ops->name);
		CHECK(ops->task >= KM_TASK_FIRST && ops->task <= KM_TASK_LAST, "%s task", ops->name);
		CHECK(ops->fit && ops->store && ops->workspace_doubles && ops->summary &&
			  ops->fields && ops->n_fields > 0, "%s hooks", ops->name);
		CHECK(ops->routes & KM_ROUTE(ops->default_route), "%s default route", ops->name);
		CHECK(ops->default_route != KM_CV_KFOLD || ops->default_folds >= 2,
			  "%s default folds", ops->name);
		if (ops->task == KM_TASK_REGRESSION)
			CHECK(km_fit_workspace_doubles((km_method) id, 10) >= 10 * 10 + 10,
				  "%s workspace", ops->name);
		else if (!km_task_lookup(ops->task)->target)
			CHECK(ops->outputs && ops->fit_rows && ops->rows_workspace_doubles &&
				  ops->store_rows && (ops->fit_sums == NULL) == (ops->sums_workspace_doubles == NULL),
				  "%s hooks of a task without a target", ops->name);
		else
			CHECK(ops->fit_classes && ops->multiclass && ops->prob_link &&
				  ops->class_workspace_doubles && ops->store_classes &&
				  ops->score_metric != KM_SCORE_MSE &&
				  (ops->solvers & (1u << ops->default_solver)),
				  "%s classification hooks", ops->name);
	}
	CHECK(km_method_get((km_method) 0) == NULL, "method 0");
	CHECK(km_method_get((km_method) (KM_METHOD_LAST + 1)) == NULL, "method past the last");
	CHECK(km_method_by_name("svm") == &km_svm_ops &&
		  km_method_task(KM_METHOD_SVM) == KM_TASK_CLASSIFICATION, "svm classifies");
	CHECK(km_method_get(KM_METHOD_LOGISTIC)->score_metric == KM_SCORE_LOG_LOSS &&
		  km_method_get(KM_METHOD_SVM)->score_metric == KM_SCORE_ACCURACY &&
		  km_method_get(KM_METHOD_RIDGE)->score_metric == KM_SCORE_MSE, "score metrics");
	CHECK(km_method_by_name("nope") == NULL, "unknown name");
	CHECK(strcmp(km_method_name((km_method) 99), "unknown") == 0, "name of 99");
	CHECK(km_method_task(KM_METHOD_LMS) == KM_TASK_REGRESSION, "lms is regression");
	/* the task-specific catalog metrics ask this */
	CHECK(strcmp(km_task_name(KM_TASK_CLASSIFICATION), "classification") == 0, "task name");
	check_own_options();
}

void
test_method_unknown_is_an_error(void)
{
	size_t		n = 4;
	int			d = 1;
	double		X[4] = {0, 1, 2, 3};
	double		y[4] = {1, -1, 1, -1};
	double		alpha[4];
	double	   *work = malloc(km_fit_workspace_doubles(KM_METHOD_RIDGE, n) * sizeof(double));
	km_fit_params p = {0};
	km_fit_result res;
	km_error	err;
	km_options	opts;
	km_options_parser parser;
	km_option_error oerr;
	km_value	v = {0};

	p.kernel.type = KM_KERNEL_RBF;
	p.kernel.gamma = 1.0;
	p.method = (km_method) (KM_METHOD_LAST + 1);
	p.lambda = 1.0;
	CHECK(km_fit_workspace_doubles(p.method, n) == 0, "workspace of an unknown method");
	CHECK(km_fit(&p, X, n, d, y, alpha, work, &res, &err, NULL) == KM_ERR_INVALID,
		  "fit with an unknown method gave %d", (int) err.status);

	/* a method's hint travels with its failure: lms diverges */
	p.method = KM_METHOD_LMS;
	p.learning_rate = 1e6;
	p.max_iter = 1000;
	p.tol = 0.0;
	CHECK(km_fit(&p, X, n, d, y, alpha, work, &res, &err, NULL) == KM_ERR_DIVERGED,
		  "lms with a huge step gave %d", (int) err.status);
	CHECK(strstr(err.hint, "learning_rate") != NULL, "hint: %s", err.hint);

	/* options: the method's own keys, and its routes */
	km_options_begin(&parser, &opts);
	v.type = KM_VALUE_NUMBER;
	v.number = 0.1;
	v.text = "0.1";
	CHECK(km_options_set(&parser, "learning_rate", &v, &oerr), "%s", oerr.message);
	CHECK(!km_options_finish(&parser, &oerr), "learning_rate with ridge passed");
	CHECK(strcmp(oerr.message, "option \"learning_rate\" applies only to method \"lms\"") == 0,
		  "%s", oerr.message);

	km_options_begin(&parser, &opts);
	v.type = KM_VALUE_STRING;
	v.string = "lms";
	v.text = "\"lms\"";
	CHECK(km_options_set(&parser, "method", &v, &oerr), "%s", oerr.message);
	v.string = "gcv";
	v.text = "\"gcv\"";
	CHECK(km_options_set(&parser, "cv", &v, &oerr), "%s", oerr.message);
	CHECK(!km_options_finish(&parser, &oerr), "gcv with lms passed");
	CHECK(strcmp(oerr.message, "cv \"gcv\" applies only to method \"ridge\"") == 0,
		  "%s", oerr.message);

	km_options_begin(&parser, &opts);
	opts.fit.method = (km_method) (KM_METHOD_LAST + 1);
	CHECK(!km_options_finish(&parser, &oerr), "an unknown method passed the options check");
	free(work);
}

/*
 * The task table (tasks.c, a file per task): one row per km_task value, stored in models;
 * every method's task has a row, and its answers match the method's kind.
 */
void
test_method_task_table(void)
{
	const km_task_ops *reg = km_task_get(KM_TASK_REGRESSION);
	const km_task_ops *cls = km_task_get(KM_TASK_CLASSIFICATION);

	CHECK(reg != NULL && reg->id == KM_TASK_REGRESSION && strcmp(reg->name, "regression") == 0, "regression");
	CHECK(cls != NULL && cls->id == KM_TASK_CLASSIFICATION && strcmp(cls->name, "classification") == 0, "classification");
	if (reg == NULL || cls == NULL)
		return;
	CHECK(!reg->classes && reg->target && reg->score_metric == KM_SCORE_MSE, "regression answers");
	CHECK(cls->classes && cls->target && cls->score_metric == KM_SCORE_ACCURACY, "classification answers");
	{
		const km_task_ops *tr = km_task_get(KM_TASK_TRANSFORM);
		const km_task_ops *nov = km_task_get(KM_TASK_NOVELTY);
		km_error	err;

		CHECK(km_task_for_labels() == cls, "text labels: classification");
		CHECK(km_task_check_rows(cls, true, &err) == KM_OK &&
			  km_task_check_rows(reg, false, &err) == KM_OK, "rows fit");
		CHECK(km_task_check_rows(reg, true, &err) == KM_ERR_INVALID &&
			  strcmp(err.detail, "The rows have their classes; the plan's task is regression.") == 0,
			  "rows with classes refused by regression: %s", err.detail);
		CHECK(km_task_check_rows(NULL, false, &err) == KM_ERR_INVALID, "no task");
		/* the default gamma rule: sigest for a numeric target's rbf, 1 / d for classifiers */
		CHECK(km_task_gamma_sigest(reg, true, KM_KERNEL_RBF, 2) &&
			  !km_task_gamma_sigest(cls, true, KM_KERNEL_RBF, 100) &&
			  !km_task_gamma_sigest(reg, false, KM_KERNEL_RBF, 100) &&
			  !km_task_gamma_sigest(reg, true, KM_KERNEL_LAPLACIAN, 100) &&
			  !km_task_gamma_sigest(reg, true, KM_KERNEL_RBF, 1), "default gamma rule");
		CHECK(km_task_check_outputs(reg, 1, &err) == KM_OK &&
			  km_task_check_outputs(tr, 3, &err) == KM_OK &&
			  km_task_check_outputs(reg, 2, &err) == KM_ERR_FORMAT, "outputs");
		CHECK(km_task_check_verb(cls, KM_VERB_CLASS, 3, 3, "f", "svm", &err) == KM_OK &&
			  km_task_check_verb(cls, KM_VERB_CLASS, 1, 1, "f", "svm", &err) == KM_ERR_INVALID &&
			  km_task_check_verb(reg, KM_VERB_PREDICT, 0, 1, "f", "ridge", &err) == KM_OK &&
			  km_task_check_verb(nov, KM_VERB_PREDICT, 0, 1, "f", "oneclass", &err) == KM_OK &&
			  km_task_check_verb(tr, KM_VERB_TRANSFORM, 0, 2, "f", "pca", &err) == KM_OK, "verbs served");
		CHECK(km_task_check_verb(tr, KM_VERB_PREDICT, 0, 2, "kernel_predict", "pca", &err) == KM_ERR_INVALID &&
			  strcmp(err.message, "kernel_predict cannot score a transform model") == 0 &&
			  strcmp(err.hint, "Use kernel_transform(model, features) for the coordinates.") == 0,
			  "transform refuses kernel_predict: %s", err.message);
		CHECK(km_task_check_verb(reg, KM_VERB_CLASS, 0, 1, "kernel_predict_class", "ridge", &err) == KM_ERR_INVALID &&
			  strcmp(err.message, "kernel_predict_class needs a classifier") == 0 &&
			  strcmp(err.detail, "The model is a regression model of method \"ridge\".") == 0,
			  "regression refuses the class verb: %s", err.detail);
		CHECK(km_task_check_verb(reg, KM_VERB_TRANSFORM, 0, 1, "kernel_transform", "ridge", &err) == KM_ERR_INVALID &&
			  strcmp(err.message, "kernel_transform needs a kernel PCA model") == 0, "transform verb");
		CHECK(km_task_check_training(reg, true, "ridge", "kernel_train", NULL, &err) == KM_OK &&
			  km_task_check_training(tr, false, "pca", "kernel_fit", "\"pca\"", &err) == KM_OK, "training calls");
		CHECK(km_task_check_training(nov, true, "oneclass", "kernel_train", NULL, &err) == KM_ERR_INVALID &&
			  strcmp(err.message, "method \"oneclass\" takes no target") == 0 &&
			  strcmp(err.detail, "Method \"oneclass\" is fitted on rows without a target (task novelty).") == 0,
			  "kernel_train refused by novelty: %s", err.detail);
		CHECK(km_task_check_training(cls, false, "svm", "kernel_fit", "\"pca\"", &err) == KM_ERR_INVALID &&
			  strcmp(err.detail, "Method \"svm\" predicts a target; kernel_fit fits only the methods without one (\"pca\").") == 0 &&
			  strcmp(err.hint, "Train it with kernel_train(features, target, options).") == 0,
			  "kernel_fit refused by classification: %s", err.detail);
		CHECK(km_task_sign_label(nov, 1, 0.5) != NULL && strcmp(km_task_sign_label(nov, 1, 0.5), "inlier") == 0 &&
			  strcmp(km_task_sign_label(nov, 1, 0.0), "outlier") == 0 &&
			  km_task_sign_label(nov, 2, 0.5) == NULL && km_task_sign_label(cls, 1, 0.5) == NULL, "sign labels");
	}
	CHECK(km_task_get(0) == NULL && km_task_get(KM_TASK_LAST + 1) == NULL && km_task_get(-1) == NULL, "out of range");
	CHECK(km_task_default() == reg && km_task_lookup(9) == reg, "default");
	CHECK(strcmp(km_task_name(KM_TASK_CLASSIFICATION), "classification") == 0, "name");
	CHECK(strcmp(km_task_name((km_task) 0), "unknown") == 0, "unknown");
	for (int i = KM_METHOD_FIRST; i <= KM_METHOD_LAST; i++)
	{
		const km_method_ops *ops = km_method_get((km_method) i);

		if (ops == NULL)
			continue;
		CHECK(km_task_get(ops->task) != NULL, "method %s has task %d", ops->name, (int) ops->task);
		CHECK(km_task_lookup(ops->task)->classes == (ops->multiclass != NULL),
			  "method %s: classes and multiclass", ops->name);
		CHECK(km_method_task((km_method) i) == ops->task, "km_method_task %s", ops->name);
	}
}

/* A classifier's answers to the code that used to name it (method.h, the last entries). */
static void
check_classifier_answers(const km_method_ops *ops)
{
	CHECK(ops->primal_loss == KM_PRIMAL_LOGISTIC || ops->primal_loss == KM_PRIMAL_SQHINGE,
		  "%s primal loss %d", ops->name, ops->primal_loss);
	CHECK(ops->primal_loss_name != NULL && ops->primal_loss_name[0] != '\0',
		  "%s primal loss name", ops->name);
	/* the approximate form scores its candidates by log-loss exactly when its loss is logistic */
	CHECK((ops->primal_loss == KM_PRIMAL_LOGISTIC) == (ops->score_metric == KM_SCORE_LOG_LOSS),
		  "%s primal loss and score metric", ops->name);
	CHECK((ops->primal_solvers & ~ops->solvers) == 0 &&
		  !(ops->primal_solvers & (1u << KM_SOLVER_DEFAULT)), "%s primal solvers", ops->name);
	CHECK(ops->platt_probability == ((ops->options & KM_OPTION_BIT(KM_OPT_PROBABILITY)) != 0),
		  "%s: Platt scaling and the probability option", ops->name);
	CHECK(!ops->gram_cols || (ops->solvers & (1u << KM_SOLVER_SMO)),
		  "%s reads Gram columns but has no SMO", ops->name);
}

/*
 * The entries the rest of the code asks instead of naming a method: one
 * default method per task, one method solved from the approximate sums,
 * classification answers only on classifiers, and each consistent.
 */
void
test_method_answers(void)
{
	int			n_sums = 0;

	for (long long t = KM_TASK_FIRST; t <= KM_TASK_LAST; t++)
	{
		int			n_default = 0;

		for (int i = KM_METHOD_FIRST; i <= KM_METHOD_LAST; i++)
		{
			const km_method_ops *ops = km_method_get((km_method) i);

			if (ops != NULL && ops->task == t && ops->task_default)
			{
				n_default++;
				CHECK(km_method_default((km_task) t) == ops, "km_method_default(%lld)", t);
			}
		}
		CHECK(n_default == 1, "task %lld has %d default methods", t, n_default);
	}
	CHECK(km_method_default(km_task_default()->id) == &km_ridge_ops, "ridge by default");
	CHECK(km_method_default(KM_TASK_CLASSIFICATION) == &km_svm_ops, "svm for text labels");
	CHECK(km_method_default((km_task) 0) == NULL, "no default of task 0");
	for (int i = KM_METHOD_FIRST; i <= KM_METHOD_LAST; i++)
	{
		const km_method_ops *ops = km_method_get((km_method) i);

		if (ops == NULL)
			continue;
		if (ops->approx_sums)
		{
			n_sums++;
			CHECK(!km_task_lookup(ops->task)->classes && km_task_lookup(ops->task)->target &&
				  ops->primal_add == NULL && ops->primal_loss == 0 &&
				  km_method_approx_sums() == ops, "%s solves from the sums", ops->name);
		}
		if (km_task_lookup(ops->task)->classes)
			check_classifier_answers(ops);
		else
			/* a task without a target may keep only its support vectors (oneclass) */
			CHECK(!ops->platt_probability &&
				  (!ops->support_vectors || !km_task_lookup(ops->task)->target) &&
				  !ops->gram_cols &&
				  ops->primal_loss == 0 && ops->primal_loss_name == NULL &&
				  ops->primal_solvers == 0, "%s: classification answers on a regression method",
				  ops->name);
	}
	CHECK(n_sums == 1 && km_method_approx_sums() == &km_ridge_ops, "%d methods solve from the sums", n_sums);
	CHECK(km_method_get(KM_METHOD_SVM)->platt_probability &&
		  km_method_get(KM_METHOD_SVM)->support_vectors &&
		  !km_method_get(KM_METHOD_LOGISTIC)->platt_probability &&
		  km_method_get(KM_METHOD_LOGISTIC)->primal_solvers == (1u << KM_SOLVER_NEWTON),
		  "svm and logistic answers");
}
