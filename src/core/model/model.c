/*
 * model.c - the shape of a model and where a decoded model's arrays lie
 * (core, no PostgreSQL headers), and the readers that fill them, shared
 * by both formats.  The format itself is model_format.c (format 2 and the
 * entry points), model_fields.c (the field codec) and model_v1.c (format
 * 1); the layout is documented in model.h, and model_internal.h lists what
 * the pieces share.  This file is the bottom of them: it calls none.
 *
 * A model arrives as a bytea that anyone can craft: every size is computed
 * with overflow checks before it is trusted, and every array is read from
 * bytes its caller has proved to lie within the model.
 */
#include <math.h>
#include <string.h>

#include "model.h"
#include "model_internal.h"
#include "task.h"

/* A candidate is stored and held in memory as four doubles. */
typedef char candidate_is_four_doubles[sizeof(km_candidate) == 4 * sizeof(double) ? 1 : -1];

/* The layout of shape s; false if it overflows or is not a shape. */
bool
layout_of(const km_model_shape *s, layout *l)
{
	uint64_t	n = s->n_train;
	uint64_t	d = s->d;
	uint64_t	q = s->q;
	const km_repr_ops *r = km_repr_lookup(s->approximation);
	uint64_t	at = 0;
	const uint64_t big = KM_MODEL_MAX_SIZE / sizeof(double);

	/* each product of two u32 fits; bounding each keeps the sums exact */
	if (q == 0 || n * q > big || n * d > big || s->c > KM_MODEL_MAX_CANDIDATES)
		return false;
#define PLACE(field, count) (l->field = (size_t) at, at += (count))
	PLACE(mean, d);
	PLACE(scale, d);
	PLACE(alpha, n * q);
	PLACE(intercepts, q);
	PLACE(X, km_repr_kept_doubles(r, n, d));
	PLACE(candidates, 4 * (uint64_t) s->c);
#undef PLACE
	l->total = (size_t) at;
	/* the caller multiplies by sizeof(double); that must not wrap */
	return at <= SIZE_MAX / sizeof(double);
}

km_model_shape
km_model_shape_simple(km_method method, uint32_t n, uint32_t d, uint32_t c)
{
	km_model_shape s;

	memset(&s, 0, sizeof(s));
	s.method = method;
	s.approximation = (km_approx) km_repr_default()->id;
	s.n_train = n;
	s.d = d;
	s.q = 1;
	s.c = c;
	return s;
}

km_model_shape
km_model_shape_of(const km_model *m)
{
	km_model_shape s = km_model_shape_simple(m->method, m->n_train,
											 m->n_features, m->n_candidates);
	km_error	err;

	s.approximation = m->approximation;
	s.q = m->n_outputs ? m->n_outputs : 1;
	s.n_classes = m->n_classes;
	s.labels_bytes = m->labels_bytes;
	s.has_probability = m->has_probability;
	s.encoder_bytes = m->encoder ? m->encoder_bytes : 0;
	s.has_gp = m->has_gp;
	s.has_gp_approx = m->gp_factor != NULL;
	/* a model that answers kernel_transform (its outputs are coordinates) keeps their eigenvalues */
	s.has_pca = km_task_check_verb(km_task_lookup(m->task), KM_VERB_TRANSFORM, m->n_classes,
								   s.q, "kernel_transform", "", &err) == KM_OK;
	return s;
}

uint8_t *
store_doubles(uint8_t *p, const double *v, size_t count)
{
	for (size_t i = 0; i < count; i++, p += sizeof(double))
		store_f64(p, v[i]);
	return p;
}

km_status
bad_field(km_error *err, const char *field, double value, const char *rule)
{
	return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
				   "Field %s is %g; it must be %s.", field, value, rule);
}

/*
 * Read count doubles of one payload array, each of which must be finite
 * (and > 0 if positive), into out unless out is NULL.
 */
km_status
read_array(const uint8_t **pp, size_t count, const char *name, bool positive,
		   double *out, km_error *err)
{
	const uint8_t *p = *pp;

	for (size_t i = 0; i < count; i++, p += sizeof(double))
	{
		double		v = load_f64(p);

		if (!isfinite(v))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Element %zu of %s is not finite.", i, name);
		if (positive && !(v > 0.0))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Element %zu of %s is %g; it must be greater than 0.",
						   i, name, v);
		if (out)
			out[i] = v;
	}
	*pp = p;
	return KM_OK;
}

/* The selection fields of r fit together (cv as stored: raw). */
km_status
check_selection(const km_model *r, unsigned raw_cv, km_error *err)
{
	uint32_t	c = r->n_candidates;

	if (c == 0 ? (raw_cv != KM_CV_NONE || r->folds != 0 || r->best != 0) :
		(raw_cv < KM_CV_LOO || raw_cv > KM_CV_EVIDENCE || r->best >= c ||
		 (raw_cv == KM_CV_KFOLD) != (r->folds >= 2) ||
		 (raw_cv != KM_CV_KFOLD && r->folds != 0)))
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The selection fields (cv %u, folds %d, best %u of %u candidates) do not fit together.",
					   raw_cv, r->folds, (unsigned) r->best, (unsigned) c);
	return KM_OK;
}

/*
 * c candidates at p: gamma > 0, lambda >= 0, score >= 0 or NaN (any finite
 * score when signed_scores: "cv": "evidence" scores minus a log likelihood),
 * std >= 0.
 */
static km_status
read_candidates(const uint8_t *p, uint32_t c, bool signed_scores, double *out,
				km_error *err)
{
	for (uint32_t i = 0; i < c; i++, p += 4 * sizeof(double))
	{
		double		v[4];

		for (int j = 0; j < 4; j++)
			v[j] = load_f64(p + j * sizeof(double));
		if (!(isfinite(v[0]) && v[0] > 0.0) || !(isfinite(v[1]) && v[1] >= 0.0) ||
			!(isnan(v[2]) || (isfinite(v[2]) && (signed_scores || v[2] >= 0.0))) ||
			!(isfinite(v[3]) && v[3] >= 0.0))
			return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
						   "Selection candidate %u has gamma %g, lambda %g, score %g, std %g.",
						   (unsigned) i, v[0], v[1], v[2], v[3]);
		if (out)
			memcpy(out + 4 * (size_t) i, v, sizeof(v));
	}
	return KM_OK;
}

/* storage + offset, or NULL (validate only) when storage is NULL. */
double *
storage_at(double *storage, size_t offset)
{
	return storage ? storage + offset : NULL;
}

/* The scaler: mean and scale, d doubles each. */
km_status
read_scaler(const uint8_t **pp, uint32_t d, double *storage, const layout *l,
			km_error *err)
{
	km_status	st;

	if ((st = read_array(pp, d, "mean", false, storage_at(storage, l->mean), err)) != KM_OK)
		return st;
	return read_array(pp, d, "scale", true, storage_at(storage, l->scale), err);
}

/*
 * The expansion: alpha (n x q doubles), then X (n * d) unless rff, then
 * the intercepts if q > 1.  With one output, the intercept r->intercept
 * (already decoded) is stored as intercepts[0].
 */
km_status
read_expansion(const uint8_t **pp, const km_model_shape *s, const km_model *r,
			   double *storage, const layout *l, km_error *err)
{
	km_status	st;

	if ((st = read_array(pp, (size_t) s->n_train * s->q, "alpha", false,
						 storage_at(storage, l->alpha), err)) != KM_OK)
		return st;
	/* the rows the representation keeps: none for rff */
	if ((st = read_array(pp, (size_t) km_repr_kept_doubles(km_repr_lookup(s->approximation),
														  s->n_train, s->d),
						 "X", false, storage_at(storage, l->X), err)) != KM_OK)
		return st;
	if (s->q == 1)
	{
		if (storage)
			storage[l->intercepts] = r->intercept;
		return KM_OK;
	}
	if ((st = read_array(pp, s->q, "intercepts", false,
						 storage_at(storage, l->intercepts), err)) != KM_OK)
		return st;
	/* the header's intercept is the first output's */
	if (load_f64(*pp - s->q * sizeof(double)) != r->intercept)
		return km_fail(err, KM_ERR_FORMAT, "invalid kernel_ml model",
					   "The first of the %u intercepts is %g; the header says %g.",
					   (unsigned) s->q, load_f64(*pp - s->q * sizeof(double)),
					   r->intercept);
	return KM_OK;
}

/* The c candidates. */
km_status
read_selection(const uint8_t *p, uint32_t c, km_cv cv, double *storage,
			   const layout *l, km_error *err)
{
	return read_candidates(p, c, cv == KM_CV_EVIDENCE,
						   storage_at(storage, l->candidates), err);
}

/* Point r's common arrays into storage as the readers filled it. */
void
attach_storage(km_model *r, double *storage, const km_model_shape *s,
			   const layout *l)
{
	if (storage == NULL)
		return;
	r->mean = storage + l->mean;
	r->scale = storage + l->scale;
	r->alpha = storage + l->alpha;
	r->intercepts = storage + l->intercepts;
	/* n_train and d are at least 1 (the shape's check): none kept is rff's */
	r->X = km_repr_kept_doubles(km_repr_lookup(s->approximation), s->n_train, s->d) > 0 ?
		storage + l->X : NULL;
	r->candidates = (const km_candidate *) (storage + l->candidates);
}
