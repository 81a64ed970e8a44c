/*
 * task.h - the task table: what a model predicts (core, no PostgreSQL
 * headers).
 *
 * One km_task_ops row per task in one registry (task.c): regression and
 * classification, with room for transform and novelty.  The ids are
 * method.h's km_task values (stored in models as one byte; a method
 * declares the task it serves in its km_method_ops).  Code above this
 * file asks the row what it needs instead of naming a task.
 */
#ifndef KM_TASK_H
#define KM_TASK_H

#include "method.h"

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

	/* ---- the model format: this task's sections (model_section.h) ---- */

	/*
	 * The sections a model of this task has besides the common ones
	 * (SCALER, EXPANSION, METHOD, TRAINING, SELECTION), NULL-terminated, or
	 * NULL for none: classification has CLASSES, PROBABILITY (when the
	 * shape has Platt scaling) and METRICS, regression none.  Each is a
	 * km_section_ops (tag, flags, presence, size, writer, reader and
	 * validator, its arrays' storage, kernel_model_info describer) defined
	 * beside its codec in the model layer (model_sections_task.c); this
	 * table only holds their addresses, and model_format.c walks them
	 * without naming a task.  A reader refuses a model with a section that
	 * neither its task nor its representation declares.
	 *
	 * A new task (transform: kernel PCA; novelty: one-class SVM) that
	 * needs a section of its own: pick the next free tag in model.h's list,
	 * write its km_section_ops in a model-layer file (as
	 * model_sections_task.c does), declare its list below and point its
	 * row here.  model_format.c is not edited; a reader that does not know
	 * the tag refuses the model (required) or skips it (not required).
	 */
	const struct km_section_ops *const *sections;

	/* ---- end of the model format's block ---- */

	/* What k-fold selection scores by when the method names no metric of its own. */
	km_score_metric score_metric;
	/*
	 * Its methods choose among solvers (the "solver" option, checked
	 * against km_method_ops.solvers).
	 */
	bool		solvers;
	/*
	 * An approximate fit selects its lambda by GCV from the m x m sums (a
	 * squared loss, one solve per grid); false: primal Newton passes over
	 * the rows at one lambda and gamma (approximate classifiers).
	 */
	bool		approx_gcv;

	/*
	 * km_train's road for this task (pipeline_types.h km_task_train: its
	 * plan and its exact and approximate trainings), defined in the train
	 * layer (pipeline.c); this table only holds its address, and km_train
	 * asks it instead of naming a task.
	 */
	const struct km_task_train *train;
} km_task_ops;

/* The section lists of the tasks that have sections (model_sections_task.c). */
struct km_section_ops;
extern const struct km_section_ops *const km_classification_sections[];

/* The roads of km_train (pipeline.c). */
struct km_task_train;
extern const struct km_task_train km_regression_train;
extern const struct km_task_train km_classification_train;

/* The row of id, or NULL when it names no task. */
const km_task_ops *km_task_get(long long id);

/* The row of id, or the default task's when it names none. */
const km_task_ops *km_task_lookup(long long id);

/* The task of a method that names none: regression. */
const km_task_ops *km_task_default(void);

#endif							/* KM_TASK_H */
