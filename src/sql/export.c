/*
 * export.c - kernel_model_export: every number needed to score a model
 * outside the database, as jsonb.
 *
 *   x_std = (x - mean) / scale
 *   exact, nystrom:  f_j(x) = intercepts[j] + sum_i coef[j][i] K(centers[i], x_std)
 *   rff:             f_j(x) = intercepts[j] + sum_i coef[j][i] z_i(x_std),
 *                    z(x_std) = sqrt(2 / D) cos(x_std . weights + offsets)
 *                    (weights d arrays of D, so x_std . weights has D entries)
 *
 * With one output, "coef" is one array and "intercept" the number; with q
 * outputs "coef" holds q arrays and "intercepts" q numbers.  Numbers go
 * through km_json_num, float8out's shortest text that reads back as the
 * same double.
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/jsonb.h"

#include "classify.h"
#include "json.h"
#include "model.h"
#include "pgutil.h"

PG_FUNCTION_INFO_V1(kernel_model_export);

/* count doubles from v as a JSON array under key (NULL inside an array). */
static void
put_array(KmJson *j, const char *key, const double *v, size_t count, size_t stride)
{
	km_json_begin_array(j, key);
	for (size_t i = 0; i < count; i++)
		km_json_num(j, NULL, v[i * stride]);
	km_json_end(j);
}

/* rows arrays of cols doubles from row-major M. */
static void
put_matrix(KmJson *j, const char *key, const double *M, size_t rows, size_t cols)
{
	km_json_begin_array(j, key);
	for (size_t r = 0; r < rows; r++)
	{
		CHECK_FOR_INTERRUPTS();
		put_array(j, NULL, M + r * cols, cols, 1);
	}
	km_json_end(j);
}

/* The kernel and the parameters it uses. */
static void
put_kernel(KmJson *j, const km_model *m)
{
	unsigned	params = km_kernel_params(m->kernel.type);

	km_json_str(j, "kernel", km_kernel_name(m->kernel.type));
	if (params & KM_PARAM_GAMMA)
		km_json_num(j, "gamma", m->kernel.gamma);
	if (params & KM_PARAM_DEGREE)
		km_json_int(j, "degree", m->kernel.degree);
	if (params & KM_PARAM_COEF0)
		km_json_num(j, "coef0", m->kernel.coef0);
}

/* "classes" (labels in class order), "multiclass", Platt's A and B. */
static void
put_classes(KmJson *j, const km_model *m)
{
	const char *p = m->labels;

	km_json_begin_array(j, "classes");
	for (uint32_t c = 0; c < m->n_classes; c++)
	{
		if (m->label_type == KM_LABEL_FLOAT8)
		{
			char	   *end;
			double		v = strtod(p, &end);

			if (*end == '\0' && end != p)
				km_json_num(j, NULL, v);
			else
				km_json_str(j, NULL, p);
		}
		else
			km_json_str(j, NULL, p);
		p += strlen(p) + 1;
	}
	km_json_end(j);
	km_json_str(j, "multiclass", km_multiclass_name(m->multiclass));
	if (m->has_probability)
	{
		put_array(j, "probability_a", m->prob_A, m->n_outputs, 1);
		put_array(j, "probability_b", m->prob_B, m->n_outputs, 1);
	}
}

/* The expansion: intercept(s), coef, and centres or random features. */
static void
put_expansion(KmJson *j, const km_model *m)
{
	size_t		n = m->n_train;
	size_t		d = m->n_features;
	uint32_t	q = m->n_outputs;

	km_json_num(j, "intercept", m->intercept);
	if (q > 1)
		put_array(j, "intercepts", m->intercepts, q, 1);
	if (q == 1)
		put_array(j, "coef", m->alpha, n, 1);
	else
		put_matrix(j, "coef", m->alpha, q, n);	/* column-major n x q: q rows of n */
	/* what the decoded model keeps: drawn features (rff's section), or rows */
	if (m->rff_W != NULL)
	{
		put_matrix(j, "weights", m->rff_W, d, n);
		put_array(j, "offsets", m->rff_b, n, 1);
	}
	else
		put_matrix(j, "centers", m->X, n, d);
}

Datum
kernel_model_export(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
	Size		len = VARSIZE_ANY_EXHDR(b);
	km_model_shape shape;
	km_model	m;
	km_error	err;
	KmJson		j;
	double	   *storage;
	size_t		doubles;

	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		km_raise(&err);
	doubles = km_model_storage_doubles(&shape);
	/* the arrays, then about 64 bytes of jsonb per number */
	km_check_memory(72.0 * (double) doubles, "kernel_model_export", false);
	storage = palloc_extended(doubles * sizeof(double), MCXT_ALLOC_HUGE);
	if (km_model_decode(buf, len, &m, storage, &err) != KM_OK)
		km_raise(&err);

	km_json_begin(&j);
	km_json_int(&j, "format_version", m.format_version);
	km_json_str(&j, "task", km_task_name(m.task));
	km_json_str(&j, "method", km_method_name(m.method));
	km_json_str(&j, "approximation", km_approx_name(m.approximation));
	put_kernel(&j, &m);
	km_json_int(&j, "n_features", m.n_features);
	km_json_int(&j, "outputs", m.n_outputs);
	put_array(&j, "mean", m.mean, m.n_features, 1);
	put_array(&j, "scale", m.scale, m.n_features, 1);
	put_expansion(&j, &m);
	if (m.n_classes > 0)
		put_classes(&j, &m);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}
