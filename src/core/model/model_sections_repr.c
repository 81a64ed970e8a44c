/*
 * model_sections_repr.c - the sections of format 2 of each
 * representation, from the steps of its row (km_repr_sections): APPROXIMATION
 * (nystrom and rff) and RFF (rff).  Core, no PostgreSQL headers; the
 * layout of each is documented in model.h, the descriptor in
 * model_section.h.
 */
#include <string.h>

#include "model.h"
#include "model_section.h"

/* The representation a shape names (the exact expansion when unknown). */
static const km_repr_ops *
repr_of(const km_model_shape *s)
{
	return km_repr_lookup(s->approximation);
}

/* ------------------------------------------------------------------ */
/* APPROXIMATION (32 bytes)                                           */
/* ------------------------------------------------------------------ */

static const km_field approx_fields[] = {
	{"approximation", KM_FIELD_ENUM, offsetof(km_model, approximation), KM_RULE_APPROX, 0},
	/* 0.3.0's reserved byte: 0 is "uniform", so older models read as before */
	{"centers", KM_FIELD_ENUM, offsetof(km_model, centers), KM_RULE_CENTRES, 0},
	{NULL, KM_FIELD_U16, 0, KM_RULE_ZERO, 0},
	{"components", KM_FIELD_U32, offsetof(km_model, components), KM_RULE_ANY, 0},
	{"rank", KM_FIELD_U32, offsetof(km_model, rank), KM_RULE_POSITIVE, 0},
	{NULL, KM_FIELD_U32, 0, KM_RULE_ZERO, 0},
	{"approximation_eps", KM_FIELD_F64, offsetof(km_model, approx_eps), KM_RULE_NONNEG, 0},
	{"approximation_seed", KM_FIELD_U64, offsetof(km_model, approx_seed), KM_RULE_ANY, 0},
};

#define N_APPROX_FIELDS ((int) (sizeof(approx_fields) / sizeof(approx_fields[0])))

static const km_section_ops approximation;
static const km_section_ops rff;

/* A section of the representation's own: present when its row lists it. */
static bool
approx_present(const km_model_shape *s)
{
	return km_section_list_has(km_repr_sections(repr_of(s)), &approximation);
}

static uint64_t
approx_bytes(const km_model_shape *s)
{
	(void) s;
	return fields_size(approx_fields, N_APPROX_FIELDS);
}

static uint8_t *
approx_write(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	(void) s;
	return put_fields(p, approx_fields, N_APPROX_FIELDS, m);
}

/* The section names the representation (its first byte). */
static void
approx_shape(const km_section *self, km_model_shape *s)
{
	if (self->length >= 1)
		s->approximation = (km_approx) self->payload[0];
}

/* It names a representation that has it. */
static km_status
approx_check_shape(const km_section *found, const km_model_shape *s,
				   km_error *err)
{
	const km_repr_ops *r = km_repr_get(s->approximation);

	if (found[approximation.tag].payload &&
		(r == NULL || !km_section_list_has(km_repr_sections(r), &approximation)))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The approximation section names approximation %u; it must be nystrom (1) or rff (2).",
					   (unsigned) s->approximation);
	return KM_OK;
}

/*
 * Its fields and their rules: rank at most the components kept; drawn
 * features (rff) have rank D and eps 0; the representation serves the
 * kernel.
 */
/*
 * Whether centres chosen by c are what rep's basis list makes: "uniform"
 * is the sample's; the others are a refine step of the list for c.
 */
static bool
list_makes_centres(const km_repr_ops *rep, km_centres c)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(rep, c, steps);

	if (c == KM_CENTRES_UNIFORM)
		return true;
	for (int i = 0; i < n; i++)
		if (steps[i] == KM_BASIS_KMEANS || steps[i] == KM_BASIS_LEVERAGE)
			return true;
	return false;
}

static km_status
approx_read(const km_section_in *in, km_model *r, km_error *err)
{
	const km_section *apx = &in->found[approximation.tag];
	const km_repr_ops *rep;
	km_basis	shape = {0};
	km_basis_kept kept;
	km_status	st;

	if ((st = get_fields(apx->payload, apx->length, approx_fields,
						 N_APPROX_FIELDS, r, "approximation section",
						 err)) != KM_OK)
		return st;
	rep = km_repr_lookup(r->approximation);
	if (!list_makes_centres(rep, r->centers))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %s approximation has centres \"%s\"; it keeps no centres.",
					   km_approx_name(r->approximation), km_centres_name(r->centers));
	/* the rank and eps its representation keeps of a basis of n_train (approx.h) */
	shape.kind = r->approximation;
	shape.m = r->n_train;
	km_basis_kept_of(&shape, r->rank, r->approx_eps, &kept);
	if (r->rank > r->n_train || kept.rank != r->rank || kept.eps != r->approx_eps)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The %s approximation has rank %u and eps %g for %u components.",
					   km_approx_name(r->approximation), (unsigned) r->rank,
					   r->approx_eps, (unsigned) r->n_train);
	if (!km_repr_serves(rep, r->kernel.type))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The model uses random Fourier features with the %s kernel; they exist for rbf only.",
					   km_kernel_name(r->kernel.type));
	return KM_OK;
}

/*
 * What an approximate model keeps, in kernel_model_info's words: the rows
 * of its expansion (nystrom's centres: n_centers, as many as its n_train;
 * rff keeps none), and for a classifier the loss its primal Newton
 * minimized.
 */
static void
describe_kept(const km_model *m, const km_describer *out)
{
	const km_method_ops *ops = km_method_get(m->method);

	if (km_repr_kept_doubles(km_repr_lookup(m->approximation), m->n_train, 1) > 0)
		out->integer(out->ctx, "n_centers", m->n_train);
	if (m->n_classes >= 2 && ops != NULL && ops->primal_loss_name != NULL)
		out->string(out->ctx, "loss", ops->primal_loss_name);
}

/* "centers" only for a representation whose basis list it chooses a step of (nystrom) */
static void
approx_describe(const km_model *m, const km_describer *out)
{
	km_model_describe_fields(m, approx_fields, 1, out);
	if (list_makes_centres(km_repr_lookup(m->approximation), KM_CENTRES_KMEANS))
		km_model_describe_fields(m, approx_fields + 1, 1, out);
	km_model_describe_fields(m, approx_fields + 2, N_APPROX_FIELDS - 2, out);
	describe_kept(m, out);
}

static const km_section_ops approximation = {
	.tag = KM_SECTION_APPROXIMATION, .flags = KM_SECTION_REQUIRED,
	.name = "approximation", .stage = 0,
	.present = approx_present, .bytes = approx_bytes, .write = approx_write,
	.shape = approx_shape, .check_shape = approx_check_shape,
	.read = approx_read, .describe = approx_describe,
};

/* ------------------------------------------------------------------ */
/* RFF: W[d * D], b[D]                                                */
/* ------------------------------------------------------------------ */

static bool
rff_present(const km_model_shape *s)
{
	return km_section_list_has(km_repr_sections(repr_of(s)), &rff);
}

static uint64_t
rff_bytes(const km_model_shape *s)
{
	uint64_t	dD = (uint64_t) s->d * s->n_train;

	if (dD > KM_MODEL_MAX_SIZE / sizeof(double))
		return 0;
	return 8 * (dD + s->n_train);
}

static uint8_t *
rff_write(uint8_t *p, const km_model *m, const km_model_shape *s)
{
	p = store_doubles(p, m->rff_W, (size_t) s->d * s->n_train);
	return store_doubles(p, m->rff_b, s->n_train);
}

/* Found exactly when the representation has it. */
static km_status
rff_check_presence(const km_section *found, const km_model_shape *s,
				km_error *err)
{
	bool		want = rff_present(s);

	if ((found[rff.tag].payload != NULL) != want)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   want ? "The model uses random Fourier features but has no RFF section." :
					   "The model has an RFF section but does not use random Fourier features.");
	return KM_OK;
}

/* W and b, finite. */
static km_status
rff_read(const km_section_in *in, km_model *r, km_error *err)
{
	const uint8_t *p = in->found[rff.tag].payload;
	const km_model_shape *s = in->s;
	km_status	st;

	(void) r;
	if ((st = read_array(&p, (size_t) s->d * s->n_train, "rff W", false,
						 in->mine, err)) != KM_OK)
		return st;
	return read_array(&p, s->n_train, "rff b", false,
					  in->mine ? in->mine + (size_t) s->d * s->n_train : NULL, err);
}

/* W (d x D), then b (D) */
static uint64_t
rff_storage(const km_model_shape *s)
{
	return (uint64_t) s->d * s->n_train + s->n_train;
}

static void
rff_attach(km_model *r, double *mine, const km_model_shape *s)
{
	r->rff_W = mine;
	r->rff_b = mine + (size_t) s->d * s->n_train;
}

static const km_section_ops rff = {
	.tag = KM_SECTION_RFF, .flags = KM_SECTION_REQUIRED, .name = "RFF",
	.stage = 1, .sized = true,
	.present = rff_present, .bytes = rff_bytes, .write = rff_write,
	.check_presence = rff_check_presence, .read = rff_read,
	.storage = rff_storage, .attach = rff_attach,
};

static const km_section_ops *const nystrom_sections[] = {&approximation, &km_gp_approx_section, NULL};
static const km_section_ops *const rff_sections[] = {&approximation, &rff, &km_gp_approx_section, NULL};

/*
 * The sections of a representation, from what its model keeps: a
 * representation with a feature map (a basis: repr.h features) keeps its
 * basis's description (APPROXIMATION) and its GP reading's factor
 * (GP_APPROX); one whose basis has a draw step (repr.h KM_BASIS_DRAW) keeps
 * what it drew (RFF, between them).  No table joins the rows by name: a new
 * representation is served by the steps it lists.
 */
const km_section_ops *const *
km_repr_sections(const km_repr_ops *r)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n;

	if (r == NULL || r->features == NULL)
		return NULL;
	n = km_repr_basis_steps(r, 0, steps);
	for (int i = 0; i < n; i++)
		if (steps[i] == KM_BASIS_DRAW)
			return rff_sections;
	return nystrom_sections;
}
