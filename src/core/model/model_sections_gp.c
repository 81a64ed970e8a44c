/*
 * model_sections_gp.c - the GP section (core, no PostgreSQL headers): the
 * Gaussian-process values of an exact ridge model (gp.h), s2 and
 * sum_i log L_ii of the Cholesky factor of K + lambda I, kept by the fit so
 * that kernel_model_info reads them instead of factoring K + lambda I
 * again.  Optional (an older build skips it; a model without it, such as
 * one 0.3.0 wrote, computes them from its rows as before), and validated
 * whenever a model is read: two finite doubles, the amplitude >= 0, in a
 * model with a GP reading (a method whose ops say so, exact, one output).
 */
#include <math.h>

#include "approx.h"
#include "model.h"
#include "model_section.h"

static const km_field gp_fields[] = {
	{"amplitude", KM_FIELD_F64, offsetof(km_model, gp_amplitude), KM_RULE_NONNEG, 0},
	{"half_log_det", KM_FIELD_F64, offsetof(km_model, gp_logdet_half), KM_RULE_FINITE, 0},
};

#define N_GP_FIELDS ((int) (sizeof(gp_fields) / sizeof(gp_fields[0])))

static bool
has_gp(const km_model_shape *s)
{
	return s->has_gp;
}

static uint64_t
gp_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(gp_fields, N_GP_FIELDS);
}

static uint8_t *
write_gp(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, gp_fields, N_GP_FIELDS, m);
}

static void
gp_shape(const km_section *self, km_model_shape *s)
{
	(void) self;
	s->has_gp = true;
}

/* Its fields, in a model that has a GP reading (gp.h km_gp_applies). */
static km_status
read_gp(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_GP];
	const km_method_ops *ops = km_method_get(r->method);
	bool		approximate = km_section_list_has(in->repr_sections, &km_gp_approx_section);
	km_status	st;

	if (ops == NULL || !ops->gp_reading || in->s->q != 1 || approximate)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model is a %s%s model but it has a gp section, which only exact models of a method with a Gaussian-process reading have.",
					   approximate ? "approximate " : "",
					   ops ? ops->name : "unknown");
	if ((st = get_fields(sec->payload, sec->length, gp_fields, N_GP_FIELDS, r,
						 "gp section", err)) != KM_OK)
		return st;
	r->has_gp = true;
	return KM_OK;
}

/* Read last (stage 4): a crafted model fails first as it always did. */
const km_section_ops km_gp_section = {
	.tag = KM_SECTION_GP, .flags = 0, .name = "gp",
	.stage = 4, .sized = true, .present = has_gp, .bytes = gp_bytes,
	.write = write_gp, .shape = gp_shape, .read = read_gp,
};

/*
 * The GP_APPROX section: the Gaussian-process reading of an approximate
 * ridge model (gp.h: nystrom's DTC variance, rff's Bayesian linear
 * regression), kept by the sums road's solve: s2 and 1/2 log det(Q +
 * lambda I) as the GP section's two fields, then the lower Cholesky factor
 * R of A + lambda I (m x m, packed by columns: m (m + 1) / 2 doubles, m the
 * model's components), A = L^-1 G L^-T.  Optional (a model the "cg" solver
 * or an older build wrote has none, and gives no variance); validated
 * whenever a model is read: the two fields as the GP section's, every
 * element of R finite and its diagonal > 0, in a single-output approximate
 * model of a method with a GP reading.
 */
static uint64_t
packed_count(const km_model_shape *s)
{
	return (uint64_t) s->n_train * ((uint64_t) s->n_train + 1) / 2;
}

static bool
has_gp_approx(const km_model_shape *s)
{
	return s->has_gp_approx;
}

static uint64_t
gp_approx_bytes(const km_model_shape *s)
{
	if (s->n_train > KM_CG_MAX_COMPONENTS)
		return 0;
	return fields_size(gp_fields, N_GP_FIELDS) + 8 * packed_count(s);
}

static uint8_t *
write_gp_approx(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = put_fields(p, gp_fields, N_GP_FIELDS, m);
	return store_doubles(p, m->gp_factor, (size_t) packed_count(s));
}

static void
gp_approx_shape(const km_section *self, km_model_shape *s)
{
	(void) self;
	s->has_gp_approx = true;
}

static km_status
read_gp_approx(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *sec = &in->found[KM_SECTION_GP_APPROX];
	const km_method_ops *ops = km_method_get(r->method);
	size_t		fixed = fields_size(gp_fields, N_GP_FIELDS);
	const uint8_t *p = sec->payload + fixed;
	size_t		m = in->s->n_train;
	bool		approximate = km_section_list_has(in->repr_sections, &km_gp_approx_section);
	km_status	st;

	if (ops == NULL || !ops->gp_reading || in->s->q != 1 || !approximate)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model is a%s %s model but it has a gp_approx section, which only approximate models of a method with a Gaussian-process reading have.",
					   approximate ?
					   "n approximate" : "n exact",
					   ops ? ops->name : "unknown");
	if ((st = get_fields(sec->payload, fixed, gp_fields, N_GP_FIELDS, r,
						 "gp_approx section", err)) != KM_OK)
		return st;
	for (size_t j = 0, at = 0; j < m; j++)
		for (size_t i = j; i < m; i++, at++)
		{
			double		v = load_f64(p);

			p += sizeof(double);
			if (!isfinite(v))
				return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
							   "Element (%zu, %zu) of the gp_approx factor is not finite.",
							   i + 1, j + 1);
			if (i == j && !(v > 0.0))
				return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
							   "Diagonal element %zu of the gp_approx factor is %g; it must be greater than 0.",
							   j + 1, v);
			if (in->mine)
				in->mine[at] = v;
		}
	return KM_OK;
}

static uint64_t
gp_approx_storage(const km_model_shape *s)
{
	return packed_count(s);
}

static void
gp_approx_attach(km_model *r, double *mine, const km_model_shape *s)
{
	(void) s;
	r->gp_factor = mine;
}

/* Read last (stage 4), as the GP section. */
const km_section_ops km_gp_approx_section = {
	.tag = KM_SECTION_GP_APPROX, .flags = 0, .name = "gp_approx",
	.stage = 4, .sized = true, .present = has_gp_approx,
	.bytes = gp_approx_bytes, .write = write_gp_approx,
	.shape = gp_approx_shape, .read = read_gp_approx,
	.storage = gp_approx_storage, .attach = gp_approx_attach,
};
