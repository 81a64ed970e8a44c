/*
 * predict.c - kernel_predict, kernel_eval and kernel_model_info, over the
 * decoded models of src/pg/model_cache.c.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/ilist.h"
#include "lib/stringinfo.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "compat.h"

#include "centres.h"
#include "classify.h"
#include "gp_info.h"
#include "json.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "pca_info.h"
#include "repr.h"
#include "score.h"
#include "table_columns.h"
#include "task.h"

PG_FUNCTION_INFO_V1(kernel_predict);
PG_FUNCTION_INFO_V1(kernel_eval);
PG_FUNCTION_INFO_V1(kernel_model_info);

Datum
kernel_predict(PG_FUNCTION_ARGS)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = km_model_cache_for_call(fcinfo->flinfo);
	PG_RETURN_FLOAT8(km_model_cache_predict((ModelCache *) fcinfo->flinfo->fn_extra,
											PG_GETARG_DATUM(0),
											PG_GETARG_ARRAYTYPE_P(1)));
}

/* kernel_eval's error when the kernel value of x and z overflowed: what overflowed. */
static void
raise_kernel_overflow(const km_kernel *kernel, const double *x, const double *z, int d)
{
	km_kernel	lin = {KM_KERNEL_LINEAR, 0, 0.0, 0.0};
	double		ip;
	const char *what;

	switch (kernel->type)
	{
		case KM_KERNEL_RBF:
			what = "squared distance";
			break;
		case KM_KERNEL_LAPLACIAN:
			what = "L1 distance";
			break;
		case KM_KERNEL_MIN:
			what = "sum of minima";
			break;
		default:
			what = km_kernel_eval_finite(&lin, x, z, d, &ip) ? "kernel value" : "inner product";
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("kernel value is out of range for type double precision"),
			 errdetail("The %s of x and z under the %s kernel overflowed.",
					   what, km_kernel_name(kernel->type)),
			 errhint("Use smaller feature values (standardize them), or a smaller gamma or degree.")));
}

Datum
kernel_eval(PG_FUNCTION_ARGS)
{
	ArrayType  *xa = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *za = PG_GETARG_ARRAYTYPE_P(1);
	km_options	opts;
	int			d;
	double	   *x;
	double	   *z;
	double		value;

	km_options_parse(PG_GETARG_JSONB_P(2), &opts);
	km_options_require_single(&opts, "kernel_eval");
	d = km_array_length(xa, "x");
	if (km_array_length(za, "z") != d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("x and z must have the same length"),
				 errdetail("x has %d elements and z has %d.", d,
						   ARR_DIMS(za)[0])));
	x = palloc(sizeof(double) * d);
	z = palloc(sizeof(double) * d);
	km_array_copy(xa, d, x, "x");
	km_array_copy(za, d, z, "z");
	km_options_resolve(&opts, d);
	if (!km_kernel_eval_finite(&opts.fit.kernel, x, z, d, &value))
		raise_kernel_overflow(&opts.fit.kernel, x, z, d);
	PG_RETURN_FLOAT8(value);
}

/* km_describer callbacks (method.h) writing into a KmJson */
static void
describe_number(void *ctx, const char *key, double v)
{
	km_json_num((KmJson *) ctx, key, v);
}

static void
describe_integer(void *ctx, const char *key, int64_t v)
{
	km_json_int((KmJson *) ctx, key, v);
}

static void
describe_boolean(void *ctx, const char *key, bool v)
{
	km_json_bool((KmJson *) ctx, key, v);
}

static void
describe_string(void *ctx, const char *key, const char *v)
{
	/* the writer keeps the pointer until km_json_finish: copy */
	km_json_str((KmJson *) ctx, key, pstrdup(v));
}

/* Decode b with its arrays into storage palloc'd here (returned). */
static double *
decode_with_storage(bytea *b, km_model *m)
{
	km_model_shape shape;
	km_error	err;
	double	   *storage;

	if (km_model_peek((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	storage = palloc_extended(km_model_storage_doubles(&shape) * sizeof(double),
							  MCXT_ALLOC_HUGE);
	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						m, storage, &err) != KM_OK)
		km_raise(&err);
	return storage;
}

/* The selection block: needs the candidate array, so decodes with storage. */
static void
describe_selection(KmJson *j, bytea *b)
{
	km_model	m;
	double	   *storage = decode_with_storage(b, &m);
	const km_method_ops *ops;
	km_score_metric metric;

	ops = km_method_get(m.method);
	metric = ops ? ops->score_metric : KM_SCORE_MSE;
	km_json_begin_object(j, "selection");
	km_json_str(j, "cv", km_cv_name(m.cv));
	if (m.cv == KM_CV_KFOLD)
		km_json_int(j, "folds", m.folds);
	km_json_str(j, "score", m.cv == KM_CV_GCV ? "gcv" :
				m.cv == KM_CV_EVIDENCE ? "neg_log_marginal_likelihood" :
				km_score_metric_name(metric));
	km_json_int(j, "best", m.best);
	km_json_begin_array(j, "candidates");
	for (uint32_t i = 0; i < m.n_candidates; i++)
	{
		const km_candidate *k = &m.candidates[i];

		km_json_begin_object(j, NULL);
		km_json_num(j, "gamma", k->gamma);
		km_json_num(j, "lambda", k->lambda);
		/* NaN (unsolvable): null; accuracy is stored as the loss 1 - accuracy */
		km_json_num(j, "score", metric == KM_SCORE_ACCURACY ? 1.0 - k->score : k->score);
		if (m.cv == KM_CV_KFOLD)
			km_json_num(j, "score_std", k->score_std);
		km_json_end(j);
	}
	km_json_end(j);
	km_json_end(j);
	pfree(storage);
}

/*
 * kernel_model_info's classification keys: "classes" {"label": training
 * rows, ...} in class order, "probability" (the solver is a METHOD field)
 * and, approximate, "loss".  Nothing for a regression model.
 */
static void
km_classifier_info(const km_model *m, KmJson *j)
{
	const km_method_ops *ops = km_method_get(m->method);
	const char *hint = NULL;

	if (m->n_classes < 2)		/* no CLASSES section */
		return;
	km_json_begin_object(j, "classes");
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_int(j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c),
					m->class_counts ? (int64) m->class_counts[c] : -1);
	km_json_end(j);
	/* the model's probabilities: Platt's stored, or the method's link */
	km_json_bool(j, "probability", m->has_probability ||
				 (ops && ops->prob_link(m->has_probability, m->multiclass,
										&hint) != KM_PROB_NONE));
	/* approximate classifiers' loss: their APPROXIMATION section's description */
}

/*
 * One meaning per word (issue 30): n_train is the rows the model was fitted
 * on, as in the catalog's kernel_models.n_train; what the model keeps of
 * them is n_support (an exact classifier's rows of nonzero coefficient;
 * svr reports its own) or n_centers (Nystrom).  Beside lambda, the methods
 * of libsvm's C give scikit-learn's C = 1 / (n lambda).
 */
static void
describe_sizes(KmJson *j, const km_model *m, const km_method_ops *ops)
{
	const km_repr_ops *repr = km_repr_lookup(m->approximation);
	km_error	err;

	km_json_int(j, "n_train", (int64) m->rows_seen);
	/* n_centers: the APPROXIMATION section's description (model_sections_repr.c) */
	if (km_repr_basis_takes(repr, KM_CENTRES_FIRST, KM_BASIS_GATHER) &&
		km_task_check_rows(km_task_lookup(m->task), true, &err) == KM_OK)
		km_json_int(j, "n_support", m->n_train);	/* an exact classifier's rows kept */
	if (ops->lambda_per_row && m->lambda > 0.0 && m->rows_seen > 0)
		km_json_num(j, "C", 1.0 / ((double) m->rows_seen * m->lambda));
}

Datum
kernel_model_info(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	km_model	m;
	km_error	err;
	KmJson		j;
	km_describer out = {describe_number, describe_integer, describe_boolean,
	describe_string, &j};
	const km_method_ops *ops;

	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						&m, NULL, &err) != KM_OK)
		km_raise(&err);
	/* decode accepts only known methods */
	ops = km_method_get(m.method);
	Assert(ops != NULL);

	km_json_begin(&j);
	km_json_int(&j, "format_version", m.format_version);
	/* the header's fields by its table (model.c), then the method's by its own */
	km_model_describe_header(&m, &out);
	km_model_describe_fields(&m, ops->fields, ops->n_fields, &out);
	describe_sizes(&j, &m, ops);
	if (m.n_classes > 0)
	{
		/* its CLASSES section: the labels and counts are arrays, decode again, with storage */
		km_model	full;

		(void) decode_with_storage(b, &full);
		km_classifier_info(&full, &j);	/* classes, probability */
	}
	else if (km_task_check_training(km_task_lookup(m.task), true, ops->name,
									"kernel_train", "", &err) == KM_OK)
		km_json_num(&j, "train_rmse", m.train_rmse);	/* trained with a target */
	km_pca_describe(&j, b);		/* kernel PCA: eigenvalues, explained variance */
	km_gp_describe(&j, b);		/* exact ridge: amplitude, log likelihood */
	km_json_int(&j, "size_bytes", (int64) VARSIZE_ANY_EXHDR(b));
	if (m.n_candidates > 0)
		describe_selection(&j, b);
	km_table_describe(b, &j);	/* a table's columns (table_columns.c) */
	PG_RETURN_JSONB_P(km_json_finish(&j));
}
