/*
 * model_sections_task.c - the sections of format 2 of each task, by the
 * id of its row (km_task_sections, model_section.h): CLASSES, PROBABILITY and METRICS, a
 * classifier's; PCA, the transform task's (model_sections_pca.c).  Core, no PostgreSQL headers; the layout of each is
 * documented in model.h, the descriptor in model_section.h.
 *
 * Their presence follows the shape (classes when it has classes, Platt
 * scaling when it has it), whatever the method's task, so that a crafted
 * model with classes and a regression method is written as it is and
 * refused by the reader's ownership check (model_format.c).
 */
#include <string.h>

#include "classify.h"
#include "model.h"
#include "model_section.h"
#include "task.h"

static const km_section_ops classes;
static const km_section_ops probability;
static const km_section_ops metrics;

/* ------------------------------------------------------------------ */
/* CLASSES: fixed part (8 bytes), counts u64[k], k labels             */
/* ------------------------------------------------------------------ */

static const km_field class_fields[] = {
	{"n_classes", KM_FIELD_U32, offsetof(km_model, n_classes), KM_RULE_POSITIVE, 0},
	{"label_type", KM_FIELD_ENUM, offsetof(km_model, label_type), KM_RULE_LABEL_TYPE, 0},
	{"multiclass", KM_FIELD_ENUM, offsetof(km_model, multiclass), KM_RULE_MULTICLASS, 0},
	{NULL, KM_FIELD_U16, 0, KM_RULE_ZERO, 0},
};

#define N_CLASS_FIELDS ((int) (sizeof(class_fields) / sizeof(class_fields[0])))

static bool
is_classifier(const km_model_shape *s)
{
	return s->n_classes > 0;
}

static uint64_t
classes_bytes(const km_model_shape *s)
{
	return fields_size(class_fields, N_CLASS_FIELDS) +
		8 * (uint64_t) s->n_classes + s->labels_bytes;
}

static uint8_t *
classes_write(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = put_fields(p, class_fields, N_CLASS_FIELDS, m);
	for (uint32_t i = 0; i < s->n_classes; i++, p += 8)
		store_u64(p, m->class_counts[i]);
	memcpy(p, m->labels, s->labels_bytes);
	return p + s->labels_bytes;
}

/* k, and the labels' bytes: what the counts leave of the payload. */
static void
classes_shape(const km_section *cls, km_model_shape *s)
{
	uint64_t	fixed = fields_size(class_fields, N_CLASS_FIELDS);

	if (cls->length < fixed)
		return;
	s->n_classes = load_u32(cls->payload);
	if (cls->length - fixed >= 8 * (uint64_t) s->n_classes &&
		cls->length - fixed - 8 * (uint64_t) s->n_classes <= UINT32_MAX)
		s->labels_bytes = (uint32_t) (cls->length - fixed - 8 * (uint64_t) s->n_classes);
}

/*
 * The labels: exactly k NUL-terminated strings filling the bytes (their
 * encoding and order are the writer's and the glue's business).
 */
static km_status
check_labels(const uint8_t *p, uint32_t bytes, uint32_t k, km_error *err)
{
	uint32_t	nuls = 0;

	for (uint32_t i = 0; i < bytes; i++)
		nuls += p[i] == 0;
	if (nuls != k || bytes == 0 || p[bytes - 1] != 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %u bytes of labels hold %u NUL-terminated strings%s; the model has %u classes.",
					   (unsigned) bytes, (unsigned) nuls,
					   bytes > 0 && p[bytes - 1] != 0 ? " and an unterminated one" : "",
					   (unsigned) k);
	return KM_OK;
}

/*
 * The fields, counts and labels; with its METRICS section, and as many
 * outputs as the multi-class scheme gives k classes.
 */
static km_status
classes_read(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *cls = &in->found[classes.tag];
	const km_model_shape *s = in->s;
	size_t		fixed = fields_size(class_fields, N_CLASS_FIELDS);
	const uint8_t *p;
	km_status	st;

	if (in->found[metrics.tag].payload == NULL)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has classes but no metrics section.");
	if ((st = get_fields(cls->payload, fixed, class_fields, N_CLASS_FIELDS,
						 r, "classes section", err)) != KM_OK)
		return st;
	if (r->n_classes < 2 || km_multiclass_outputs(r->multiclass, r->n_classes) != s->q)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "A %s classifier of %u classes has %u outputs, which do not fit together.",
					   km_multiclass_name(r->multiclass), (unsigned) r->n_classes,
					   (unsigned) s->q);
	p = cls->payload + fixed + 8 * (size_t) r->n_classes;
	if ((st = check_labels(p, s->labels_bytes, r->n_classes, err)) != KM_OK)
		return st;
	r->labels_bytes = s->labels_bytes;
	if (in->mine)
	{
		uint64_t   *counts = (uint64_t *) in->mine;

		for (uint32_t i = 0; i < r->n_classes; i++)
			counts[i] = load_u64(cls->payload + fixed + 8 * (size_t) i);
		memcpy(in->mine + r->n_classes, p, s->labels_bytes);
	}
	return KM_OK;
}

/* The counts (u64 in double-sized slots), then the labels' bytes. */
static uint64_t
classes_storage(const km_model_shape *s)
{
	return s->n_classes +
		((uint64_t) s->labels_bytes + sizeof(double) - 1) / sizeof(double);
}

static void
classes_attach(km_model *r, double *mine, const km_model_shape *s)
{
	r->class_counts = (const uint64_t *) mine;
	r->labels = (const char *) (mine + s->n_classes);
}

/*
 * No classes: then no metrics either, a task that has classes is missing
 * them, and the model has one output.
 */
static km_status
classes_absent(const km_section_in *in, km_model *r, km_error *err)
{
	if (in->found[metrics.tag].payload != NULL)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has a metrics section but no classes.");
	if (km_section_list_has(km_task_sections(km_task_lookup(r->task)), &classes))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's task is %s but it has no classes section.",
					   km_task_name(r->task));
	/* the outputs the task gives: one, or its method's (kernel PCA's components) */
	return km_task_check_outputs(km_task_lookup(r->task), in->s->q, err);
}

static void
classes_describe(const km_model *m, const km_describer *out)
{
	km_model_describe_fields(m, class_fields, N_CLASS_FIELDS, out);
}

/* Read after the representation's arrays (stage 2), as 0.2.0 did. */
static const km_section_ops classes = {
	.tag = KM_SECTION_CLASSES, .flags = KM_SECTION_REQUIRED, .name = "classes",
	.stage = 2, .sized = true,
	.present = is_classifier, .bytes = classes_bytes, .write = classes_write,
	.shape = classes_shape, .read = classes_read, .absent = classes_absent,
	.storage = classes_storage, .attach = classes_attach,
	.describe = classes_describe,
};

/* ------------------------------------------------------------------ */
/* PROBABILITY: Platt's A[q], B[q]                                    */
/* ------------------------------------------------------------------ */

static bool
has_probability(const km_model_shape *s)
{
	return s->has_probability;
}

static uint64_t
probability_bytes(const km_model_shape *s)
{
	return 16 * (uint64_t) s->q;
}

static uint8_t *
probability_write(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = store_doubles(p, m->prob_A, s->q);
	return store_doubles(p, m->prob_B, s->q);
}

static void
probability_shape(const km_section *self, km_model_shape *s)
{
	(void) self;
	s->has_probability = true;
}

/* Calibration needs classes. */
static km_status
probability_check_presence(const km_section *found, const km_model_shape *s,
						km_error *err)
{
	if (found[probability.tag].payload && s->n_classes == 0)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model has probability calibration but no classes.");
	return KM_OK;
}

static km_status
probability_read(const km_section_in *in, km_model *r, km_error *err)
{
	const uint8_t *p = in->found[probability.tag].payload;
	km_status	st;

	r->has_probability = true;
	if ((st = read_array(&p, in->s->q, "probability A", false, in->mine,
						 err)) != KM_OK)
		return st;
	return read_array(&p, in->s->q, "probability B", false,
					  in->mine ? in->mine + in->s->q : NULL, err);
}

/* A[q], then B[q] */
static uint64_t
probability_storage(const km_model_shape *s)
{
	return 2 * (uint64_t) s->q;
}

static void
probability_attach(km_model *r, double *mine, const km_model_shape *s)
{
	r->prob_A = mine;
	r->prob_B = mine + s->q;
}

/* Read last (stage 4): after the metrics, as 0.2.0 did. */
static const km_section_ops probability = {
	.tag = KM_SECTION_PROBABILITY, .flags = KM_SECTION_REQUIRED,
	.name = "probability", .stage = 4, .sized = true,
	.present = has_probability, .bytes = probability_bytes,
	.write = probability_write, .shape = probability_shape,
	.check_presence = probability_check_presence, .read = probability_read,
	.storage = probability_storage, .attach = probability_attach,
};

/* ------------------------------------------------------------------ */
/* METRICS (16 bytes): a classifier's training metrics                */
/* ------------------------------------------------------------------ */

static const km_field metrics_fields[] = {
	{"train_accuracy", KM_FIELD_F64, offsetof(km_model, train_accuracy), KM_RULE_NONNEG, 0},
	{"train_log_loss", KM_FIELD_F64, offsetof(km_model, train_log_loss), KM_RULE_NONNEG, 0},
};

#define N_METRICS_FIELDS ((int) (sizeof(metrics_fields) / sizeof(metrics_fields[0])))

static uint64_t
metrics_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(metrics_fields, N_METRICS_FIELDS);
}

static uint8_t *
metrics_write(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, metrics_fields, N_METRICS_FIELDS, m);
}

/* Its length, fields and an accuracy of at most 1 (a pair with CLASSES). */
static km_status
metrics_read(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *met = &in->found[metrics.tag];
	km_status	st;

	if ((st = get_fields(met->payload, met->length, metrics_fields,
						 N_METRICS_FIELDS, r, "metrics section", err)) != KM_OK)
		return st;
	if (r->train_accuracy > 1.0)
		return bad_field(err, "train_accuracy", r->train_accuracy, "between 0 and 1");
	return KM_OK;
}

/* The accuracy, and the log-loss only when the model gives probabilities. */
static void
metrics_describe(const km_model *m, const km_describer *out)
{
	const km_method_ops *ops = km_method_get(m->method);
	const char *hint = NULL;

	km_model_describe_fields(m, metrics_fields, 1, out);
	if (ops && ops->prob_link &&
		ops->prob_link(m->has_probability, m->multiclass, &hint) != KM_PROB_NONE)
		km_model_describe_fields(m, metrics_fields + 1, 1, out);
}

/* Read after CLASSES (stage 3), which checks that both are there. */
static const km_section_ops metrics = {
	.tag = KM_SECTION_METRICS, .flags = KM_SECTION_REQUIRED, .name = "metrics",
	.stage = 3,
	.present = is_classifier, .bytes = metrics_bytes, .write = metrics_write,
	.read = metrics_read, .describe = metrics_describe,
};

static const km_section_ops *const classification_sections[] = {
	&classes, &probability, &metrics, NULL
};

static const km_section_ops *const transform_sections[] = {&km_pca_section, NULL};

/*
 * The sections of each task that has some, found by the id of the task's
 * row (task.h), never by a name; a task not listed has none of its own.
 */
static const struct
{
	const km_task_ops *task;
	const km_section_ops *const *sections;
}			task_sections[] = {
	{&km_task_classification, classification_sections},
	{&km_task_transform, transform_sections},
};

const km_section_ops *const *
km_task_sections(const km_task_ops *t)
{
	for (size_t i = 0; t != NULL && i < sizeof(task_sections) / sizeof(task_sections[0]); i++)
		if (task_sections[i].task->id == t->id)
			return task_sections[i].sections;
	return NULL;
}
