/*
 * task.h - the task table: what a model predicts (core, no PostgreSQL
 * headers).
 *
 * One km_task_ops row per task, one file each (regression.c,
 * classification.c, transform.c: kernel PCA, novelty.c: the one-class SVM),
 * listed once in the registry (task.c) with the steps every task answers
 * from its row (the rows a task takes, its outputs, its verbs).  The ids are
 * method.h's km_task values (stored in models as one byte; a method
 * declares the task it serves in its km_method_ops).  Code above this
 * file asks the row what it needs instead of naming a task.
 */
#ifndef KM_TASK_H
#define KM_TASK_H

#include "core.h"
#include "kernel_types.h"
#include "metrics.h"

/* What a method predicts.  Stored in format 2 models as one byte. */
typedef enum km_task
{
	KM_TASK_REGRESSION = 1,
	KM_TASK_CLASSIFICATION = 2,
	KM_TASK_TRANSFORM = 3,		/* no target: kernel_fit; outputs are coordinates */
	KM_TASK_NOVELTY = 4			/* no target: kernel_fit; the output is a decision value */
} km_task;

#define KM_TASK_FIRST KM_TASK_REGRESSION
#define KM_TASK_LAST KM_TASK_NOVELTY

const char *km_task_name(km_task task);

/*
 * The scoring verbs a task's model answers (scikit-learn's mixins: a
 * regressor predicts, a classifier predicts a class and its probabilities,
 * a transformer transforms).  km_task_check_verb refuses the others.
 */
typedef enum km_verb
{
	KM_VERB_PREDICT = 1,		/* kernel_predict: one value per row */
	KM_VERB_CLASS = 2,			/* kernel_predict_class / _proba: a class of its CLASSES */
	KM_VERB_TRANSFORM = 4		/* kernel_transform: the coordinates */
} km_verb;

typedef struct km_task_ops
{
	km_task		id;
	const char *name;			/* km_task_name */

	/*
	 * Targets are class labels (text or numbers): the model has a classes
	 * and a metrics section (and a probability section when it has Platt
	 * scaling), and as many outputs as its multi-class scheme; a text
	 * target column is accepted.  false: one numeric output and none of
	 * these sections.
	 */
	bool		classes;

	/*
	 * Its model sections and its road through km_train live with their code,
	 * a layer up, in tables of their own that find the task they extend by
	 * its row's id, so that this row points at nothing above it: the sections a
	 * model of the task has besides the common ones in model_sections_task.c
	 * (km_task_sections, model_section.h: classification has CLASSES,
	 * PROBABILITY and METRICS), its plan and trainings in pipeline.c
	 * (km_task_road, pipeline_types.h).  A new task (transform: kernel PCA;
	 * novelty: one-class SVM) adds its row here, its road there under its row
	 * (a task without a target: the one road of pipeline_rows.h) and, if it
	 * stores something of its own, its sections (the next free tag of
	 * model.h's list); model_format.c and km_train are not edited.
	 */

	/* What k-fold selection scores by when the method names no metric of its own. */
	km_score_metric score_metric;

	/*
	 * Its rows come with a target (kernel_train, kernel_model_train's
	 * two-column query); false: without one (kernel_fit, a one-column
	 * query), its model's outputs are its method's (ops->outputs) and its
	 * road (pipeline_rows.h) asks the method's fit_rows / fit_sums.
	 */
	bool		target;

	/*
	 * Its one output is a decision value whose sign is the class the class
	 * verb (kernel_predict_class) returns: sign_labels[1] above 0,
	 * sign_labels[0] at or below (novelty: "outlier", "inlier", libsvm's
	 * and scikit-learn's rule); NULL: the task has no such verb (the
	 * classes of a classification model are its CLASSES section).
	 */
	const char *sign_labels[2];

	/*
	 * The km_verb values its models answer (km_task_check_verb): a
	 * transform model's outputs are coordinates that kernel_transform
	 * returns; kernel_predict and the other scorers of a target refuse it
	 * with a hint to kernel_transform.
	 */
	unsigned	verbs;
} km_task_ops;

/* The row of id, or NULL when it names no task. */
const km_task_ops *km_task_get(long long id);

/* The row of id, or the default task's when it names none. */
const km_task_ops *km_task_lookup(long long id);

/* The task of a method that names none: regression. */
const km_task_ops *km_task_default(void);

/* The rows of each task, one file each (regression.c, classification.c, transform.c, novelty.c). */
extern const km_task_ops km_task_regression;
extern const km_task_ops km_task_classification;
extern const km_task_ops km_task_transform;
extern const km_task_ops km_task_novelty;

/* The task a text label column asks for: the first whose targets are classes. */
const km_task_ops *km_task_for_labels(void);

/*
 * Rows fit the task t: with classes (has_classes) for a task whose targets
 * are classes, without for the others.  KM_OK, or KM_ERR_INVALID naming both.
 */
km_status	km_task_check_rows(const km_task_ops *t, bool has_classes, km_error *err);

/*
 * A model of task t has q outputs: one for a task with a numeric target
 * (a classifier's are checked with its CLASSES section), its method's for
 * a task without a target.  KM_OK, or KM_ERR_FORMAT.
 */
km_status	km_task_check_outputs(const km_task_ops *t, uint32_t q, km_error *err);

/*
 * Whether a model of task t (n_classes classes, method "method") answers
 * verb, called by fname: KM_OK, or KM_ERR_INVALID with the task's own
 * message, detail and hint (the glue raises it as a wrong object type).
 */
km_status	km_task_check_verb(const km_task_ops *t, km_verb verb, uint32_t n_classes,
							   uint32_t n_outputs, const char *fname,
							   const char *method, km_error *err);

/*
 * The training call a model of task t takes: kernel_train's rows with a
 * target (with_target) or kernel_fit's features alone (what: the caller,
 * others: the methods fitted without a target, both for the message).
 * KM_OK, or KM_ERR_INVALID with the task's words.
 */
km_status	km_task_check_training(const km_task_ops *t, bool with_target,
								   const char *method, const char *what,
								   const char *others, km_error *err);

/*
 * The class a task's class verb gives the decision value f of a model with
 * n_outputs outputs (novelty: "inlier" above 0, "outlier" at or below), or
 * NULL when its classes are a CLASSES section or it has none.
 */
const char *km_task_sign_label(const km_task_ops *t, uint32_t n_outputs, double f);

/*
 * The default gamma rule of a model of task t (gamma_default: no gamma
 * given) over n rows of a kernel of type kernel: true when its gamma is
 * kernlab's sigest over the standardized rows (a task with a numeric
 * target, an rbf kernel, two rows or more); false when it keeps the
 * options' 1 / d, scikit-learn's SVC() default for classifiers (it held
 * against both SVC() and kernlab's ksvm() on 15 real data sets where sigest
 * did not: test/bench/defaults_datasets.py).  Both the exact road
 * (pipeline.c) and the glue's row order for sigest (train_rows.c) ask it.
 */
bool		km_task_gamma_sigest(const km_task_ops *t, bool gamma_default,
								 km_kernel_type kernel, size_t n);

/*
 * The regression task's look at its target (regression.c): when the n
 * targets y are 2 to KM_LABEL_LIKE_VALUES distinct whole numbers in int4's
 * range (two always; more only when each repeats twice on average: class
 * codes, not a few measurements), the number of them, their least and
 * greatest in *lo and *hi: most likely class labels, which the glue says
 * when no "method" was given.  0 otherwise.
 */
#define KM_LABEL_LIKE_VALUES 20
uint32_t	km_regression_label_like(const double *y, size_t n, double *lo, double *hi);

#endif							/* KM_TASK_H */
