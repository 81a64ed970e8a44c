/*
 * evaluate.c - the kernel_evaluate aggregates: a model's error measures on
 * rows in one call, as jsonb.
 *
 *	kernel_evaluate(model bytea, features float8[], target float8 | text)
 *	kernel_evaluate(name text, features float8[], target float8 | text)
 *	kernel_evaluate(model bytea | name text, row record)
 *
 * Each row is scored as kernel_predict (regression), kernel_predict_class
 * and kernel_predict_proba (classification) score it, through the same
 * model cache and the same core probability function (km_classify_proba),
 * and the pairs are summed into the measures of metrics.h:
 *   regression      n, rmse, mae, r2 (null for constant targets)
 *   classification  n, accuracy, balanced_accuracy, log_loss (null without
 *                   probabilities; p clipped to [eps, 1 - eps], eps =
 *                   DBL_EPSILON, as scikit-learn's log_loss for float64),
 *                   auc (two classes: of p(classes[1]) when the model gives
 *                   probabilities, else of the decision value, as named
 *                   training scores a hold-out), the confusion matrix, and
 *                   per class precision, recall, F1 and support
 * Classification labels are text, as kernel_train's; a float8 target is
 * taken as the label float8out gives it (the labels of a classifier trained
 * on a float8 column).  A regression model needs a float8 target.
 *
 * Rows with a NULL model, name, feature array or target are skipped and
 * counted ("skipped"), as kernel_train skips them; a NULL or non-finite
 * element of a feature array is an error, as for kernel_predict.  A label
 * that is not a class of the model is an error (scikit-learn's log_loss
 * refuses it too).  No scored row: NULL.
 *
 * The model (or the name) must be the same on every row of a group: a
 * group's state keeps a fingerprint of its model (its length and a 64-bit
 * hash of its bytes; by name, the name), and a row or a partial state that
 * brings another is an error.  A group keeps the TOAST pointer of its model
 * too, and the call site the fingerprint of the last model datum seen, so
 * rows that bring their group's TOAST pointer (or the in-line bytes seen
 * last) do not hash the model again, in whatever order the groups' rows
 * come.  The decoded models are
 * the call site's model cache's (predict.h), shared by every group.  By
 * name, the deployed version is looked up once per statement snapshot and
 * user, with kernel_predict(name, ...)'s lookup and read-permission check,
 * which the by-name transition functions (src/catalog/catalog_score.c) pass
 * down (KmNamedModel).
 *
 * Parallel query: every measure but the AUC is a sum (km_metrics_combine,
 * km_class_metrics_combine); for the AUC the state keeps each row's score
 * (9 bytes a row, within kernel_ml.max_memory), partial states concatenate
 * them, and the final function ranks them all (exact AUC, km_auc).  The
 * state is internal with serialize and deserialize functions.
 *
 * The record forms take a row of a table model's columns: the features
 * encoded by column names as kernel_predict(model, row) encodes them (the
 * mapping of predict_row.c, KmRowMap), the target read from the column the
 * model was trained on (its encoder records it): a number for a regression
 * model; for a classifier a text, enum or boolean label ('true' / 'false')
 * as kernel_train read it, or a number as float8out writes it.  A NULL row
 * or target is skipped and counted; the state is the other forms' state.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "libpq/pqformat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "classify.h"
#include "json.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "task.h"
#include "evaluate.h"
#include "predict_row.h"

PG_FUNCTION_INFO_V1(kernel_evaluate_sfunc);
PG_FUNCTION_INFO_V1(kernel_evaluate_label_sfunc);
PG_FUNCTION_INFO_V1(kernel_evaluate_row_sfunc);
PG_FUNCTION_INFO_V1(kernel_evaluate_final);
PG_FUNCTION_INFO_V1(kernel_evaluate_combine);
PG_FUNCTION_INFO_V1(kernel_evaluate_serialize);
PG_FUNCTION_INFO_V1(kernel_evaluate_deserialize);

#define EVAL_SERIAL_FORMAT 1

/* What identifies a group's model. */
typedef struct Fingerprint
{
	uint64		len;
	uint64		hash;
} Fingerprint;

/* The transition function's call site (fn_extra). */
typedef struct EvalCall
{
	ModelCache *mc;				/* by model */
	void	   *named;			/* by name: catalog_predict_model's cache */
	KmProbBuffers pb;
	double	   *x;				/* one feature row */
	int			x_cap;
	KmRowMap   *rmap;			/* record forms */
	/* the last model datum seen and its fingerprint */
	bool		memo_valid;
	bool		memo_toasted;
	struct varatt_external memo_ptr;
	uint8	   *memo_bytes;		/* in-line: a copy */
	Fingerprint memo_fp;
} EvalCall;

/* One group's state, in the aggregate context. */
typedef struct EvalState
{
	MemoryContext ctx;
	int64		seen;			/* rows, skipped ones included */
	int64		skipped;
	bool		bound;			/* the model (or name) is known */
	bool		by_name;
	char	   *name;			/* by name */
	Fingerprint fp;				/* by model */
	bool		has_ptr;		/* by model: a TOAST pointer to it, known */
	struct varatt_external ptr;
	bool		classify;
	bool		proba;			/* the model gives probabilities */
	km_metrics	reg;
	uint32		k;
	char	   *labels;			/* the k labels back to back */
	uint32		labels_bytes;
	km_class_metrics cm;
	double	   *scores;			/* two classes: each row's score for the AUC */
	bool	   *positive;
	size_t		nb;
	size_t		cap;
	KmMemGrant *grant;			/* the confusion matrix and the scores */
} EvalState;

static EvalState *
state_create(MemoryContext aggctx, bool by_name)
{
	EvalState  *st = MemoryContextAllocZero(aggctx, sizeof(EvalState));

	st->ctx = aggctx;
	st->by_name = by_name;
	km_metrics_init(&st->reg);
	return st;
}

/* The bytes a state holds beyond its struct. */
static double
state_bytes(const EvalState *st)
{
	return (double) st->k * st->k * sizeof(uint64) + st->labels_bytes +
		(double) st->cap * (sizeof(double) + sizeof(bool));
}

/*
 * Bind a state to its model's kind: regression, or a classifier of k labels
 * (labels_bytes of them), with or without probabilities.
 */
static void
state_bind_kind(EvalState *st, bool classify, bool proba, uint32 k,
				const char *labels, uint32 labels_bytes)
{
	st->bound = true;
	st->classify = classify;
	if (!classify)
		return;
	st->proba = proba;
	st->k = k;
	st->labels_bytes = labels_bytes;
	st->grant = km_mem_resize(st->grant, st->ctx,
							  (double) k * k * sizeof(uint64) + labels_bytes,
							  "kernel_evaluate", false);
	st->labels = MemoryContextAlloc(st->ctx, labels_bytes);
	memcpy(st->labels, labels, labels_bytes);
	km_class_metrics_init(&st->cm, k,
						  MemoryContextAllocHuge(st->ctx, sizeof(uint64) * k * k));
}

/* Bind a state to the model m scored its first row (the target's type checked). */
static void
state_bind(EvalState *st, const km_model *m, bool text_target)
{
	/* the classes of its CLASSES section, which only its task's models have (model_format.c) */
	bool		classify = m->n_classes >= 2;
	const km_method_ops *ops = km_method_get(m->method);
	const char *hint = NULL;
	bool		proba;

	if (!classify)
	{
		if (text_target)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("kernel_evaluate needs a float8 target for a %s model",
							km_task_name(m->task)),
					 errdetail("The model is a %s model of method \"%s\", and the target is text.",
							   km_task_name(m->task), km_method_name(m->method)),
					 errhint("Cast the target to float8, or evaluate a classifier.")));
		km_refuse_embedding(m, "kernel_evaluate");
		if (m->n_outputs > 1)
			elog(ERROR, "kernel_evaluate: a regression model with %u outputs", m->n_outputs);
		state_bind_kind(st, false, false, 0, NULL, 0);
		return;
	}
	proba = ops != NULL && ops->prob_link != NULL &&
		ops->prob_link(m->has_probability, m->multiclass, &hint) != KM_PROB_NONE;
	state_bind_kind(st, true, proba, m->n_classes, m->labels, m->labels_bytes);
}

/* Room for one more AUC score, the scores counted against the ceiling. */
static void
state_grow_scores(EvalState *st, size_t need)
{
	size_t		cap;

	if (need <= st->cap)
		return;
	cap = Max(Max((size_t) 1024, st->cap * 2), need);
	st->grant = km_mem_resize(st->grant, st->ctx,
							  state_bytes(st) + (double) (cap - st->cap) *
							  (sizeof(double) + sizeof(bool)),
							  "kernel_evaluate", true);
	if (st->scores == NULL)
	{
		st->scores = MemoryContextAllocHuge(st->ctx, mul_size(cap, sizeof(double)));
		st->positive = MemoryContextAllocHuge(st->ctx, cap);
	}
	else
	{
		st->scores = repalloc_huge(st->scores, mul_size(cap, sizeof(double)));
		st->positive = repalloc_huge(st->positive, cap);
	}
	st->cap = cap;
}

static bool
same_fp(const Fingerprint *a, const Fingerprint *b)
{
	return a->len == b->len && a->hash == b->hash;
}

static Fingerprint
fingerprint_of(const uint8 *buf, Size len)
{
	Fingerprint fp;

	fp.len = len;
	fp.hash = DatumGetUInt64(hash_any_extended(buf, (int) len, 0));
	return fp;
}

/*
 * The fingerprint of the model datum of this row: the call site's memo when
 * the row brings the TOAST pointer or the in-line bytes seen last.
 */
static Fingerprint
model_fingerprint(FunctionCallInfo fcinfo, EvalCall *call, Datum model)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(model);
	MemoryContext mcxt = fcinfo->flinfo->fn_mcxt;

	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		struct varatt_external ptr;
		bytea	   *b;

		VARATT_EXTERNAL_GET_POINTER(ptr, raw);
		if (call->memo_valid && call->memo_toasted &&
			memcmp(&call->memo_ptr, &ptr, sizeof(ptr)) == 0)
			return call->memo_fp;
		b = (bytea *) detoast_attr(raw);
		call->memo_fp = fingerprint_of((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b));
		pfree(b);
		if (call->memo_bytes != NULL)
			pfree(call->memo_bytes);
		call->memo_bytes = NULL;
		call->memo_toasted = true;
		call->memo_ptr = ptr;
	}
	else
	{
		bytea	   *b = (bytea *) pg_detoast_datum_packed(raw);
		const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
		Size		len = VARSIZE_ANY_EXHDR(b);

		if (call->memo_valid && !call->memo_toasted && call->memo_fp.len == len &&
			memcmp(call->memo_bytes, buf, len) == 0)
			return call->memo_fp;
		call->memo_fp = fingerprint_of(buf, len);
		if (call->memo_bytes != NULL)
			pfree(call->memo_bytes);
		call->memo_bytes = MemoryContextAllocHuge(mcxt, Max(len, 1));
		memcpy(call->memo_bytes, buf, len);
		call->memo_toasted = false;
	}
	call->memo_valid = true;
	return call->memo_fp;
}

static pg_attribute_noreturn() void
raise_model_changed(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("kernel_evaluate's model changed within a group"),
			 errdetail("%s", detail),
			 errhint("Evaluate one model per group: GROUP BY the model (or its name), or pass the model as a scalar subquery.")));
}

static EvalCall *
eval_call(FunctionCallInfo fcinfo, bool by_name)
{
	EvalCall   *call = fcinfo->flinfo->fn_extra;

	if (call == NULL)
	{
		call = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(EvalCall));
		if (!by_name)
			call->mc = km_model_cache_create(fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = call;
	}
	return call;
}

/* The label of a number target, as float8out writes it (-0 is 0). */
static char *
number_label(double y)
{
	return float8out_internal(y == 0.0 ? 0.0 : y);
}

/* One classified row into the state. */
static void
add_class_row(FunctionCallInfo fcinfo, EvalState *st, EvalCall *call,
			  const km_model *m, const double *f, char *label)
{
	int			truth = km_classes_find(st->labels, st->labels_bytes, st->k, label);
	uint32		pred;
	const double *p = NULL;

	if (truth < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("label \"%s\" is not a class of this model", label),
				 errdetail("Row " INT64_FORMAT " of the group has the label \"%s\"; the model has %u classes, from \"%s\" to \"%s\".",
						   st->seen, label, st->k,
						   km_classes_label(st->labels, st->labels_bytes, st->k, 0),
						   km_classes_label(st->labels, st->labels_bytes, st->k, st->k - 1)),
				 errhint("Evaluate on rows of the model's classes (WHERE target IN (...)), or train with every label.")));
	pred = km_classify_decide(m->multiclass, st->k, f);
	if (st->proba)
	{
		km_prob_link link = (km_prob_link) km_model_prob_link_or_raise(m);
		km_error	err;

		km_classifier_prepare(m, "kernel_evaluate", fcinfo->flinfo->fn_mcxt, &call->pb);
		/* the probabilities kernel_predict_proba gives the row */
		if (km_classify_proba(link, m->multiclass, st->k, f, m->prob_A, m->prob_B,
							  call->pb.p, call->pb.pwork, &err) != KM_OK)
			km_raise(&err);
		p = call->pb.p;
	}
	km_class_metrics_add(&st->cm, (uint32) truth, pred, p);
	if (st->k == 2)
	{
		state_grow_scores(st, st->nb + 1);
		st->scores[st->nb] = p != NULL ? p[1] : f[0];
		st->positive[st->nb] = truth == 1;
		st->nb++;
	}
	pfree(label);
}

Datum
km_evaluate_trans(FunctionCallInfo fcinfo, KmEvalForm form, KmNamedModel by_name)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_evaluate_sfunc");
	EvalState  *st = PG_ARGISNULL(0) ? state_create(aggctx, by_name != NULL) :
		(EvalState *) PG_GETARG_POINTER(0);
	EvalCall   *call;
	ModelCache *mc;
	Datum		model;
	const km_model *m;
	ArrayType  *features;
	int			d;
	const double *f;
	double		y = 0.0;
	char	   *label = NULL;

	st->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2) || (form != KM_EVAL_ROW && PG_ARGISNULL(3)))
	{
		st->skipped++;
		PG_RETURN_POINTER(st);
	}
	call = eval_call(fcinfo, by_name != NULL);
	if (by_name)
	{
		text	   *name = PG_GETARG_TEXT_PP(1);
		char	   *cname = text_to_cstring(name);

		if (st->name == NULL)
			st->name = MemoryContextStrdup(st->ctx, cname);
		else if (strcmp(st->name, cname) != 0)
			raise_model_changed(psprintf("Row " INT64_FORMAT " of the group names the model \"%s\", the group's first row \"%s\".",
										 st->seen, cname, st->name));
		pfree(cname);
		model = by_name(fcinfo, name, &call->named, &mc);
	}
	else
	{
		struct varlena *raw = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(1));
		struct varatt_external ptr;
		bool		toasted = VARATT_IS_EXTERNAL_ONDISK(raw);

		model = PG_GETARG_DATUM(1);
		mc = call->mc;
		if (toasted)
			VARATT_EXTERNAL_GET_POINTER(ptr, raw);
		/*
		 * The group's own TOAST pointer: no hashing, even when the rows of
		 * several groups come interleaved (hash aggregation of a join).
		 */
		if (!(toasted && st->has_ptr && memcmp(&st->ptr, &ptr, sizeof(ptr)) == 0))
		{
			Fingerprint fp = model_fingerprint(fcinfo, call, model);

			if (st->fp.len == 0)
				st->fp = fp;
			else if (!same_fp(&st->fp, &fp))
				raise_model_changed(psprintf("Row " INT64_FORMAT " of the group brings a model of " UINT64_FORMAT " bytes other than the model of its first row (" UINT64_FORMAT " bytes).",
											 st->seen, fp.len, st->fp.len));
			if (toasted)
			{
				st->ptr = ptr;
				st->has_ptr = true;
			}
		}
	}
	m = km_model_cache_model(mc, model);
	if (form == KM_EVAL_ROW)
	{
		HeapTupleHeader rec = PG_GETARG_HEAPTUPLEHEADER(2);
		km_encoder_value tv;
		km_column_kind tkind;
		const char *tname;

		if (call->rmap == NULL)
			call->rmap = km_row_map_create(fcinfo->flinfo->fn_mcxt, true);
		km_row_map_prepare(call->rmap, m, rec, "kernel_evaluate");
		tname = km_row_map_target(call->rmap, rec, &tv, &tkind);
		if (tv.isnull)
		{
			st->skipped++;
			PG_RETURN_POINTER(st);
		}
		if (!st->bound)
			state_bind(st, m, false);
		if (!st->classify && tkind != KM_COLUMN_NUMBER)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("target column \"%s\" of the row is not a number", tname),
					 errdetail("The model is a %s model; the row's column \"%s\" holds %s.",
							   km_task_name(m->task), tname,
							   tkind == KM_COLUMN_BOOL ? "booleans" : "text or enum labels"),
					 errhint("Evaluate rows whose column \"%s\" has a numeric type, as in training.",
							 tname)));
		if (tkind == KM_COLUMN_CATEGORY)
			label = pnstrdup(tv.str, tv.len);
		else if (tkind == KM_COLUMN_BOOL)
			label = pstrdup(tv.number != 0.0 ? "true" : "false");
		else
			y = tv.number;
		f = km_model_cache_decision(mc, model,
									km_row_map_encode(call->rmap, rec, "The row"),
									(int) m->n_features);
	}
	else
	{
		if (!st->bound)
			state_bind(st, m, form == KM_EVAL_TEXT);
		features = PG_GETARG_ARRAYTYPE_P(2);
		d = km_array_length(features, "the row");
		if (d > call->x_cap)
		{
			call->x = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, sizeof(double) * d);
			call->x_cap = d;
		}
		km_array_copy(features, d, call->x, "the row");
		f = km_model_cache_decision(mc, model, call->x, d);
		if (form == KM_EVAL_TEXT)
			label = text_to_cstring(PG_GETARG_TEXT_PP(3));
		else
			y = PG_GETARG_FLOAT8(3);
	}
	if (!st->classify)
	{
		if (!isfinite(y))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("target values must be finite"),
					 errdetail("Row " INT64_FORMAT " of the group has the target %s.",
							   st->seen, float8out_internal(y))));
		/* the value kernel_predict returns for the row */
		km_metrics_add(&st->reg, f[0], y);
	}
	else
		add_class_row(fcinfo, st, call, m, f, label != NULL ? label : number_label(y));
	PG_RETURN_POINTER(st);
}

/* kernel_evaluate_sfunc(internal, model bytea, features float8[], target float8) */
Datum
kernel_evaluate_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_FLOAT8, NULL);
}

/* kernel_evaluate_sfunc(internal, model bytea, features float8[], target text) */
Datum
kernel_evaluate_label_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_TEXT, NULL);
}

/* kernel_evaluate_sfunc(internal, model bytea, row record) */
Datum
kernel_evaluate_row_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_ROW, NULL);
}

/* ---- combine, serialize, deserialize ---- */

/* a += b: b's rows added into a, which takes b's model if it had none. */
static void
state_merge(EvalState *a, const EvalState *b)
{
	a->seen += b->seen;
	a->skipped += b->skipped;
	if (!b->bound)
		return;
	if (!a->bound)
	{
		if (b->by_name)
			a->name = MemoryContextStrdup(a->ctx, b->name);
		a->fp = b->fp;
		state_bind_kind(a, b->classify, b->proba, b->k, b->labels, b->labels_bytes);
	}
	else if (a->by_name ? strcmp(a->name, b->name) != 0 : !same_fp(&a->fp, &b->fp))
		raise_model_changed("Two parallel workers scored rows of one group with different models.");
	if (!a->classify)
	{
		km_metrics_combine(&a->reg, &b->reg);
		return;
	}
	if (a->k != b->k || a->labels_bytes != b->labels_bytes ||
		memcmp(a->labels, b->labels, a->labels_bytes) != 0)
		elog(ERROR, "kernel_evaluate: partial states of one model with different classes");
	km_class_metrics_combine(&a->cm, &b->cm);
	if (b->nb > 0)
	{
		state_grow_scores(a, a->nb + b->nb);
		memcpy(a->scores + a->nb, b->scores, b->nb * sizeof(double));
		memcpy(a->positive + a->nb, b->positive, b->nb);
		a->nb += b->nb;
	}
}

Datum
kernel_evaluate_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_evaluate_combine");
	EvalState  *a = PG_ARGISNULL(0) ? NULL : (EvalState *) PG_GETARG_POINTER(0);
	EvalState  *b = PG_ARGISNULL(1) ? NULL : (EvalState *) PG_GETARG_POINTER(1);

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_POINTER(a);
	}
	if (a == NULL)
		a = state_create(aggctx, b->by_name);
	state_merge(a, b);
	PG_RETURN_POINTER(a);
}

Datum
kernel_evaluate_serialize(PG_FUNCTION_ARGS)
{
	EvalState  *st = (EvalState *) PG_GETARG_POINTER(0);
	StringInfoData buf;

	if (!AggCheckCallContext(fcinfo, NULL))
		elog(ERROR, "kernel_evaluate_serialize called in non-aggregate context");
	pq_begintypsend(&buf);
	pq_sendbyte(&buf, EVAL_SERIAL_FORMAT);
	pq_sendbyte(&buf, (st->bound ? 1 : 0) | (st->by_name ? 2 : 0) |
				(st->classify ? 4 : 0) | (st->proba ? 8 : 0) | (st->name ? 16 : 0));
	pq_sendint64(&buf, st->seen);
	pq_sendint64(&buf, st->skipped);
	pq_sendint64(&buf, (int64) st->fp.len);
	pq_sendint64(&buf, (int64) st->fp.hash);
	if (st->name != NULL)
		pq_sendstring(&buf, st->name);
	if (!st->bound)
		PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
	if (!st->classify)
	{
		pq_sendint64(&buf, (int64) st->reg.n);
		pq_sendfloat8(&buf, st->reg.sse);
		pq_sendfloat8(&buf, st->reg.sae);
		pq_sendfloat8(&buf, st->reg.ymean);
		pq_sendfloat8(&buf, st->reg.yss);
		PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
	}
	pq_sendint32(&buf, st->k);
	pq_sendint32(&buf, st->labels_bytes);
	pq_sendbytes(&buf, st->labels, st->labels_bytes);
	pq_sendint64(&buf, (int64) st->cm.n);
	pq_sendint64(&buf, (int64) st->cm.correct);
	pq_sendint64(&buf, (int64) st->cm.n_proba);
	pq_sendfloat8(&buf, st->cm.log_loss_sum);
	for (Size i = 0; i < (Size) st->k * st->k; i++)
		pq_sendint64(&buf, (int64) st->cm.confusion[i]);
	pq_sendint64(&buf, (int64) st->nb);
	if (st->nb > 0)
	{
		pq_sendbytes(&buf, (const char *) st->scores, st->nb * sizeof(double));
		pq_sendbytes(&buf, (const char *) st->positive, st->nb);
	}
	PG_RETURN_BYTEA_P(pq_endtypsend(&buf));
}

/* A count read from a serialized state, refused if negative or beyond limit. */
static int64
get_count(StringInfo buf, int64 limit)
{
	int64		v = pq_getmsgint64(buf);

	if (v < 0 || v > limit)
		elog(ERROR, "kernel_evaluate: malformed serialized state");
	return v;
}

Datum
kernel_evaluate_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx;
	bytea	   *sstate = PG_GETARG_BYTEA_PP(0);
	StringInfoData buf;
	EvalState  *st;
	int			flags;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "kernel_evaluate_deserialize called in non-aggregate context");
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, VARDATA_ANY(sstate), VARSIZE_ANY_EXHDR(sstate));
	if (pq_getmsgbyte(&buf) != EVAL_SERIAL_FORMAT)
		elog(ERROR, "kernel_evaluate: serialized state of an unknown format");
	flags = pq_getmsgbyte(&buf);
	st = state_create(aggctx, (flags & 2) != 0);
	st->seen = get_count(&buf, PG_INT64_MAX);
	st->skipped = get_count(&buf, st->seen);
	st->fp.len = (uint64) pq_getmsgint64(&buf);
	st->fp.hash = (uint64) pq_getmsgint64(&buf);
	if (flags & 16)
		st->name = MemoryContextStrdup(aggctx, pq_getmsgstring(&buf));
	if (flags & 1)
	{
		if (!(flags & 4))
		{
			state_bind_kind(st, false, false, 0, NULL, 0);
			st->reg.n = (size_t) get_count(&buf, PG_INT64_MAX);
			st->reg.sse = pq_getmsgfloat8(&buf);
			st->reg.sae = pq_getmsgfloat8(&buf);
			st->reg.ymean = pq_getmsgfloat8(&buf);
			st->reg.yss = pq_getmsgfloat8(&buf);
		}
		else
		{
			uint32		k = (uint32) pq_getmsgint(&buf, 4);
			uint32		labels_bytes = (uint32) pq_getmsgint(&buf, 4);
			const char *labels;
			size_t		nb;

			if (k < 2 || k > KM_MAX_CLASSES || labels_bytes > (uint32) (buf.len - buf.cursor))
				elog(ERROR, "kernel_evaluate: malformed serialized state");
			labels = pq_getmsgbytes(&buf, (int) labels_bytes);
			if (km_classes_label(labels, labels_bytes, k, k - 1) == NULL)
				elog(ERROR, "kernel_evaluate: malformed serialized state");
			state_bind_kind(st, true, (flags & 8) != 0, k, labels, labels_bytes);
			st->cm.n = (size_t) get_count(&buf, PG_INT64_MAX);
			st->cm.correct = (size_t) get_count(&buf, (int64) st->cm.n);
			st->cm.n_proba = (size_t) get_count(&buf, (int64) st->cm.n);
			st->cm.log_loss_sum = pq_getmsgfloat8(&buf);
			for (Size i = 0; i < (Size) k * k; i++)
				st->cm.confusion[i] = (uint64) get_count(&buf, (int64) st->cm.n);
			nb = (size_t) get_count(&buf, (int64) st->cm.n);
			if (nb > 0)
			{
				if ((Size) (buf.len - buf.cursor) != nb * (sizeof(double) + 1))
					elog(ERROR, "kernel_evaluate: malformed serialized state");
				state_grow_scores(st, nb);
				pq_copymsgbytes(&buf, (char *) st->scores, (int) (nb * sizeof(double)));
				pq_copymsgbytes(&buf, (char *) st->positive, (int) nb);
				st->nb = nb;
			}
		}
	}
	pq_getmsgend(&buf);
	PG_RETURN_POINTER(st);
}

/* ---- the result ---- */

static Jsonb *
regression_json(const EvalState *st)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_str(&j, "task", "regression");
	km_json_int(&j, "n", (int64) st->reg.n);
	km_json_num(&j, "rmse", km_metrics_rmse(&st->reg));
	km_json_num(&j, "mae", km_metrics_mae(&st->reg));
	/* null when the targets are constant */
	km_json_num(&j, "r2", km_metrics_r2(&st->reg));
	km_json_int(&j, "skipped", st->skipped);
	return km_json_finish(&j);
}

static Jsonb *
classification_json(const EvalState *st)
{
	KmJson		j;
	uint32		k = st->k;

	km_json_begin(&j);
	km_json_str(&j, "task", "classification");
	km_json_int(&j, "n", (int64) st->cm.n);
	km_json_num(&j, "accuracy", km_class_metrics_accuracy(&st->cm));
	km_json_num(&j, "balanced_accuracy", km_class_metrics_balanced_accuracy(&st->cm));
	if (st->proba)
		km_json_num(&j, "log_loss", km_class_metrics_log_loss(&st->cm));
	else
		km_json_null(&j, "log_loss");
	if (k == 2)
	{
		double		auc = get_float8_nan();

		if (st->nb > 0)
		{
			void	   *work;

			km_check_memory((double) km_auc_work_bytes(st->nb), "kernel_evaluate", false);
			work = palloc_extended(Max(1, km_auc_work_bytes(st->nb)), MCXT_ALLOC_HUGE);
			auc = km_auc(st->scores, st->positive, st->nb, work);
			pfree(work);
		}
		/* null when the rows have one class only */
		km_json_num(&j, "auc", auc);
	}
	km_json_begin_object(&j, "confusion");
	km_json_begin_array(&j, "labels");
	for (uint32 c = 0; c < k; c++)
		km_json_str(&j, NULL, km_classes_label(st->labels, st->labels_bytes, k, c));
	km_json_end(&j);
	km_json_begin_array(&j, "matrix");
	for (uint32 t = 0; t < k; t++)
	{
		km_json_begin_array(&j, NULL);
		for (uint32 c = 0; c < k; c++)
			km_json_int(&j, NULL, (int64) st->cm.confusion[(Size) t * k + c]);
		km_json_end(&j);
	}
	km_json_end(&j);
	km_json_end(&j);
	km_json_begin_object(&j, "classes");
	for (uint32 c = 0; c < k; c++)
	{
		km_class_scores s = km_class_metrics_class(&st->cm, c);

		km_json_begin_object(&j, km_classes_label(st->labels, st->labels_bytes, k, c));
		km_json_num(&j, "precision", s.precision);
		km_json_num(&j, "recall", s.recall);
		km_json_num(&j, "f1", s.f1);
		km_json_int(&j, "support", (int64) s.support);
		km_json_end(&j);
	}
	km_json_end(&j);
	km_json_int(&j, "skipped", st->skipped);
	return km_json_finish(&j);
}

Datum
kernel_evaluate_final(PG_FUNCTION_ARGS)
{
	EvalState  *st;

	agg_context(fcinfo, "kernel_evaluate_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	st = (EvalState *) PG_GETARG_POINTER(0);
	if (!st->bound || (st->classify ? st->cm.n : st->reg.n) == 0)
		PG_RETURN_NULL();
	PG_RETURN_JSONB_P(st->classify ? classification_json(st) : regression_json(st));
}
