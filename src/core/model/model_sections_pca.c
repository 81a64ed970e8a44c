/*
 * model_sections_pca.c - the PCA section of format 2 (core, no PostgreSQL
 * headers): the transform task's (km_task_sections, model_sections_task.c
 * lists it for the row named "transform").  A kernel PCA model's q outputs
 * are its components, a kernel expansion each (EXPANSION); this section
 * keeps what kernel_model_info shows of them: the eigenvalue of each
 * (descending) and their total over all components (the trace of the
 * centred matrix), whose ratio is the explained variance.
 *
 * Payload: total f64 (finite, >= 0), then eigenvalues[q] (finite, >= 0,
 * non-increasing, none above the total by more than rounding).  Required:
 * a reader that does not know it cannot use the model.
 */
#include <math.h>

#include "model.h"
#include "model_section.h"
#include "task.h"

static const km_field pca_fields[] = {
	{"eigenvalue_total", KM_FIELD_F64, offsetof(km_model, eigen_total), KM_RULE_NONNEG, 0},
};

#define N_PCA_FIELDS ((int) (sizeof(pca_fields) / sizeof(pca_fields[0])))

static bool
has_pca(const km_model_shape *s)
{
	return s->has_pca;
}

static uint64_t
pca_bytes(const km_model_shape *s)
{
	return fields_size(pca_fields, N_PCA_FIELDS) + 8 * (uint64_t) s->q;
}

static uint8_t *
write_pca(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = put_fields(p, pca_fields, N_PCA_FIELDS, m);
	return store_doubles(p, m->eigenvalues, s->q);
}

static void
pca_shape(const km_section *self, km_model_shape *s)
{
	(void) self;
	s->has_pca = true;
}

/* The total, then each eigenvalue against it and the one before. */
static km_status
read_pca(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_PCA];
	size_t		fixed = fields_size(pca_fields, N_PCA_FIELDS);
	const uint8_t *p = sec->payload + fixed;
	double		prev = INFINITY;
	km_status	st;

	if ((st = get_fields(sec->payload, fixed, pca_fields, N_PCA_FIELDS, r,
						 "pca section", err)) != KM_OK)
		return st;
	for (uint32_t j = 0; j < in->s->q; j++)
	{
		double		v;

		if ((st = read_array(&p, 1, "the pca eigenvalues", false, &v, err)) != KM_OK)
			return st;
		if (!(v >= 0) || v > prev || v > r->eigen_total * (1.0 + 1e-9) + 1e-300)
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Eigenvalue %u of the pca section is %g; eigenvalues are >= 0, descending and at most their total %g.",
						   (unsigned) j + 1, v, r->eigen_total);
		prev = v;
		if (in->mine)
			in->mine[j] = v;
	}
	return KM_OK;
}

/* A model that answers kernel_transform (coordinates) without it cannot be read. */
static km_status
absent_pca(const km_section_in *in, km_model *r, km_error *err)
{
	km_error	verb;

	(void) in;
	if (km_task_check_verb(km_task_lookup(r->task), KM_VERB_TRANSFORM, r->n_classes,
						   r->n_outputs, "kernel_transform", "", &verb) == KM_OK)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model's task is %s but it has no pca section.",
					   km_task_name(r->task));
	return KM_OK;
}

static uint64_t
pca_storage(const km_model_shape *s)
{
	return s->q;
}

static void
pca_attach(km_model *r, double *mine, const km_model_shape *s)
{
	(void) s;
	r->eigenvalues = mine;
}

/*
 * The total; the eigenvalues and explained variance are arrays, the glue's
 * to show (src/sql/transform.c km_pca_describe).
 */
static void
pca_describe(const km_model *m, const km_describer *out)
{
	km_model_describe_fields(m, pca_fields, N_PCA_FIELDS, out);
}

/* Read after the classes (stage 3): a crafted model fails first as it did. */
const km_section_ops km_pca_section = {
	.tag = KM_SECTION_PCA, .flags = KM_SECTION_REQUIRED, .name = "pca",
	.stage = 3, .sized = true, .present = has_pca, .bytes = pca_bytes,
	.write = write_pca, .shape = pca_shape, .read = read_pca,
	.absent = absent_pca, .storage = pca_storage, .attach = pca_attach,
	.describe = pca_describe,
};
