/*
 * predict.c - kernel_predict, kernel_eval and kernel_model_info.
 *
 * kernel_predict keeps the decoded model in fn_extra for the whole query.
 * A model read from a table arrives as a TOAST pointer, which identifies the
 * value without fetching it.  A model given as a constant (a literal, or a
 * query parameter in a custom plan) is the same value on every call of
 * this expression.  Any other in-line model is compared byte for byte with
 * a copy of the cached one: a checksum is no identity, as two models with
 * the same length, header and CRC are easy to make.  (A Param is not
 * trusted: PL/pgSQL keeps an expression across calls while its variable
 * changes.)  A row that brings the same model costs neither a detoast nor
 * a re-validation.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "compat.h"

#include "json.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "score.h"
#include "train.h"

PG_FUNCTION_INFO_V1(kernel_predict);
PG_FUNCTION_INFO_V1(kernel_eval);
PG_FUNCTION_INFO_V1(kernel_model_info);

struct ModelCache
{
	MemoryContext ctx;			/* holds the decoded arrays; reset on change */
	bool		valid;
	/* identity of the cached value */
	bool		toasted;
	Oid			toastrelid;
	Oid			valueid;
	Size		len;
	uint8	   *bytes;			/* in-line value: a copy, to compare with */
	bool		arg_const;		/* the model argument is a Const */
	/* the decoded model, its scorer and per-query scratch */
	km_model	model;
	km_scorer	scorer;
	double	   *x;				/* one raw feature row */
	double	   *out;			/* q decision values */
};

static bool model_arg_is_const(FmgrInfo *flinfo);

/* Decode a detoasted model into the cache's context, replacing the old one. */
static void
cache_load(ModelCache *mc, bytea *b)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
	Size		len = VARSIZE_ANY_EXHDR(b);
	km_model_shape shape;
	size_t		n;
	double	   *storage;
	km_error	err;
	km_model   *m = &mc->model;

	mc->valid = false;
	MemoryContextReset(mc->ctx);
	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		km_raise(&err);
	storage = MemoryContextAllocHuge(mc->ctx,
									 km_model_storage_doubles(&shape) * sizeof(double));
	if (km_model_decode(buf, len, m, storage, &err) != KM_OK)
		km_raise(&err);
	n = km_scorer_doubles(m);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_ml model is too large to score"),
				 errdetail("Its %u rows of %u features do not fit in memory.",
						   m->n_train, m->n_features)));
	km_check_memory(8.0 * (double) n, "kernel_predict model cache", false);
	km_scorer_prepare(&mc->scorer, m,
					  MemoryContextAllocHuge(mc->ctx, n * sizeof(double)));
	mc->x = MemoryContextAlloc(mc->ctx, (Size) m->n_features * sizeof(double));
	mc->out = MemoryContextAlloc(mc->ctx, (Size) m->n_outputs * sizeof(double));

	mc->len = len;
	mc->bytes = NULL;
	mc->valid = true;
}

ModelCache *
km_model_cache_create(MemoryContext mcxt)
{
	ModelCache *mc = MemoryContextAllocZero(mcxt, sizeof(ModelCache));

	mc->ctx = AllocSetContextCreate(mcxt, "kernel_ml model cache",
									ALLOCSET_DEFAULT_SIZES);
	return mc;
}

/* Whether an in-line value is the cached model, byte for byte. */
static bool
cached_inline(const ModelCache *mc, const uint8 *buf, Size len)
{
	if (!mc->valid || mc->toasted || mc->len != len || mc->bytes == NULL)
		return false;
	return memcmp(mc->bytes, buf, len) == 0;
}

/* Decode an in-line value and keep a copy of its bytes to compare with. */
static void
cache_load_inline(ModelCache *mc, bytea *b)
{
	cache_load(mc, b);
	mc->toasted = false;
	if (!mc->arg_const)
	{
		mc->bytes = MemoryContextAllocHuge(mc->ctx, mc->len);
		memcpy(mc->bytes, VARDATA_ANY(b), mc->len);
	}
}

/* The decoded model of a bytea datum, decoded only when it changes. */
static km_model *
get_model(ModelCache *mc, Datum model)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(model);

	if (mc->arg_const && mc->valid)
		return &mc->model;		/* the same constant on every call */
	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		struct varatt_external ptr;

		VARATT_EXTERNAL_GET_POINTER(ptr, raw);
		if (!(mc->valid && mc->toasted && mc->toastrelid == ptr.va_toastrelid &&
			  mc->valueid == ptr.va_valueid))
		{
			cache_load(mc, (bytea *) detoast_attr(raw));
			mc->toasted = true;
			mc->toastrelid = ptr.va_toastrelid;
			mc->valueid = ptr.va_valueid;
		}
	}
	else if (!VARATT_IS_EXTENDED(raw))
	{
		/* plain in-line value */
		if (!cached_inline(mc, (const uint8 *) VARDATA(raw), VARSIZE(raw) - VARHDRSZ))
			cache_load_inline(mc, (bytea *) raw);
	}
	else
	{
		/* compressed, short header or expanded: detoast, then compare */
		bytea	   *b = (bytea *) detoast_attr(raw);

		if (!cached_inline(mc, (const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b)))
			cache_load_inline(mc, b);
	}
	return &mc->model;
}

/*
 * The q decision values of the raw feature row raw (d finite values) with
 * the loaded model m, into mc->out.
 */
static const double *
score_loaded(ModelCache *mc, km_model *m, const double *raw)
{
	km_error	err;
	int			bad;

	km_blas_setup_scoring();
	if (km_scorer_decision(&mc->scorer, raw, mc->out, &err) == KM_OK)
		return mc->out;
	bad = mc->scorer.bad_feature;
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("standardized feature is out of range for type double precision"),
				 errdetail("Feature %d of the row, %s, standardized with the training mean %s and scale %s, overflowed.",
						   bad + 1, float8out_internal(raw[bad]),
						   float8out_internal(m->mean[bad]),
						   float8out_internal(m->scale[bad])),
				 errhint("Check the row for values far outside the range of the training data.")));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("prediction is out of range for type double precision"),
			 errdetail("Scoring the row with the %s kernel overflowed: a kernel value with a training row, or the sum of the coefficients times those values.",
					   km_kernel_name(m->kernel.type)),
			 errhint("Check the row for values far outside the range of the training data.")));
	return NULL;				/* not reached */
}

/* The single value kernel_predict returns: the model must have one output. */
static double
single_output(const km_model *m, const double *out)
{
	if (m->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("kernel_predict cannot score a multi-class model"),
				 errdetail("The model gives %u decision values per row (multi-class scheme \"%s\").",
						   m->n_outputs, km_multiclass_name(m->multiclass)),
				 errhint("Use kernel_predict_class(model, features) or kernel_predict_proba(model, features).")));
	return out[0];
}

static void
check_feature_count(const km_model *m, int d)
{
	if ((uint32) d != m->n_features)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("wrong number of features for this model"),
				 errdetail("The model expects %u features, got %d.", m->n_features, d)));
}

double
km_model_cache_predict(ModelCache *mc, Datum model, ArrayType *features)
{
	km_model   *m = get_model(mc, model);

	check_feature_count(m, km_array_length(features, "the row"));
	/* rejects NaN and infinity */
	km_array_copy(features, (int) m->n_features, mc->x, "the row");
	return single_output(m, score_loaded(mc, m, mc->x));
}

double
km_model_cache_predict_row(ModelCache *mc, Datum model, const double *x, int d)
{
	km_model   *m = get_model(mc, model);

	check_feature_count(m, d);
	return single_output(m, score_loaded(mc, m, x));
}

const double *
km_model_cache_decision_array(ModelCache *mc, ArrayType *features)
{
	km_model   *m = &mc->model;

	Assert(mc->valid);

	check_feature_count(m, km_array_length(features, "the row"));
	km_array_copy(features, (int) m->n_features, mc->x, "the row");
	return score_loaded(mc, m, mc->x);
}

ModelCache *
km_model_cache_for_call(FmgrInfo *flinfo)
{
	ModelCache *mc = km_model_cache_create(flinfo->fn_mcxt);

	mc->arg_const = model_arg_is_const(flinfo);
	return mc;
}

const km_model *
km_model_cache_model(ModelCache *mc, Datum model)
{
	return get_model(mc, model);
}

const double *
km_model_cache_decision(ModelCache *mc, Datum model, const double *x, int d)
{
	km_model   *m = get_model(mc, model);

	check_feature_count(m, d);
	return score_loaded(mc, m, x);
}

/* Whether kernel_predict's model argument is a Const in its expression. */
static bool
model_arg_is_const(FmgrInfo *flinfo)
{
	Node	   *expr = flinfo->fn_expr;
	List	   *args;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	args = ((FuncExpr *) expr)->args;
	return list_length(args) >= 1 && IsA(linitial(args), Const);
}

Datum
kernel_predict(PG_FUNCTION_ARGS)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = km_model_cache_for_call(fcinfo->flinfo);
	PG_RETURN_FLOAT8(km_model_cache_predict((ModelCache *) fcinfo->flinfo->fn_extra,
											PG_GETARG_DATUM(0),
											PG_GETARG_ARRAYTYPE_P(1)));
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
	{
		km_kernel	lin = {KM_KERNEL_LINEAR, 0, 0.0, 0.0};
		double		ip;
		const char *what;

		switch (opts.fit.kernel.type)
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
						   what, km_kernel_name(opts.fit.kernel.type)),
				 errhint("Use smaller feature values (standardize them), or a smaller gamma or degree.")));
	}
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
	km_json_str(j, "score", m.cv == KM_CV_GCV ? "gcv" : km_score_metric_name(metric));
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
	km_json_int(&j, "n_train", m.n_train);
	if (m.task == KM_TASK_CLASSIFICATION)
	{
		/* the labels and counts are arrays: decode again, with storage */
		km_model	full;

		(void) decode_with_storage(b, &full);
		km_classifier_info(&full, &j);	/* classes, probability */
	}
	else
		km_json_num(&j, "train_rmse", m.train_rmse);
	km_json_int(&j, "size_bytes", (int64) VARSIZE_ANY_EXHDR(b));
	if (m.n_candidates > 0)
		describe_selection(&j, b);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}
