/*
 * classify.c - classification in SQL: kernel_train's transition function
 * over (features, label text) (its final function is train.c's, which
 * hands a classifier's rows to the memory host's entry, memory_train.c:
 * the class table, weights and checks), kernel_predict_class and
 * kernel_predict_proba.
 *
 * Classes are sorted as classify.h says (text by bytes, float8 by value).
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "classify.h"
#include "json.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "task.h"
#include "train_paths.h"

PG_FUNCTION_INFO_V1(kernel_train_label_sfunc);
PG_FUNCTION_INFO_V1(kernel_predict_class);
PG_FUNCTION_INFO_V1(kernel_predict_proba);
PG_FUNCTION_INFO_V1(kernel_predict_proba_label);

/* kernel_train_label_sfunc(state, features, label text [, options]) */
Datum
kernel_train_label_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get_labels(fcinfo, 3, "kernel_train_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add_label(rs, PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_TEXT_PP(2),
						 "kernel_train");
	PG_RETURN_POINTER(rs);
}

/* ---- scoring ---- */

/*
 * The scoring state of a call site (fn_extra): predict.c's model cache
 * (a few decoded models, recognized by their TOAST pointer, as a constant,
 * or by their bytes, each with its scorer, which gives all q decision
 * values from one kernel row), and the probabilities of a row.
 */
typedef struct ClassCache
{
	ModelCache *mc;
	KmProbBuffers pb;
} ClassCache;

static ClassCache *
class_cache(FunctionCallInfo fcinfo)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;

	if (cc == NULL)
	{
		cc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ClassCache));
		cc->mc = km_model_cache_for_call(fcinfo->flinfo);
		fcinfo->flinfo->fn_extra = cc;
	}
	return cc;
}

/*
 * The decoded classifier of the model argument (argument 0), decoded only
 * when the argument brings another model.
 */
static const km_model *
class_model(FunctionCallInfo fcinfo, const char *fname)
{
	ClassCache *cc = class_cache(fcinfo);
	const km_model *m = km_model_cache_model(cc->mc, PG_GETARG_DATUM(0));

	km_classifier_prepare(m, fname, fcinfo->flinfo->fn_mcxt, &cc->pb);
	return m;
}

void
km_classifier_prepare(const km_model *m, const char *fname, MemoryContext mcxt,
					  KmProbBuffers *pb)
{
	km_refuse_embedding(m, fname);
	km_model_check_verb(m, KM_VERB_CLASS, fname);
	if (m->n_classes > pb->k)
	{
		pb->p = MemoryContextAlloc(mcxt, sizeof(double) * m->n_classes);
		pb->pwork = MemoryContextAllocHuge(mcxt,
										   km_classify_proba_work_doubles(m->n_classes) * sizeof(double));
		pb->k = m->n_classes;
	}
}

/* The q decision values of a feature row with m, class_model's result. */
static const double *
decision(FunctionCallInfo fcinfo, const km_model *m, ArrayType *features)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;

	Assert(km_model_cache_model(cc->mc, PG_GETARG_DATUM(0)) == m);
	return km_model_cache_decision_array(cc->mc, features);
}

/* p (k) of a row; an error with the method's hint if the model gives none. */
static const double *
probabilities(FunctionCallInfo fcinfo, const km_model *m, const double *f)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;
	km_prob_link link = (km_prob_link) km_model_prob_link_or_raise(m);
	km_error	err;

	if (km_classify_proba(link, m->multiclass, m->n_classes, f, m->prob_A,
						  m->prob_B, cc->pb.p, cc->pb.pwork, &err) != KM_OK)
		km_raise(&err);
	return cc->pb.p;
}

const char *
km_sign_label(const km_model *m, double f)
{
	return km_task_sign_label(km_task_lookup(m->task), m->n_outputs, f);
}

/* kernel_predict_class(model bytea, features float8[]) RETURNS text */
Datum
kernel_predict_class(PG_FUNCTION_ARGS)
{
	ClassCache *cc = class_cache(fcinfo);
	const km_model *m = km_model_cache_model(cc->mc, PG_GETARG_DATUM(0));
	const double *f;
	uint32		c;

	if (km_sign_label(m, 0.0) != NULL)	/* novelty: the sign of the decision value */
	{
		f = km_model_cache_decision_array(cc->mc, PG_GETARG_ARRAYTYPE_P(1));
		PG_RETURN_TEXT_P(cstring_to_text(km_sign_label(m, f[0])));
	}
	m = class_model(fcinfo, "kernel_predict_class");
	f = decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1));
	c = km_classify_decide(m->multiclass, m->n_classes, f);

	PG_RETURN_TEXT_P(cstring_to_text(km_classes_label(m->labels, m->labels_bytes,
													  m->n_classes, c)));
}

/* kernel_predict_proba(model bytea, features float8[]) RETURNS jsonb */
Datum
kernel_predict_proba(PG_FUNCTION_ARGS)
{
	const km_model *m = class_model(fcinfo, "kernel_predict_proba");
	const double *p = probabilities(fcinfo, m, decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1)));
	KmJson		j;

	km_json_begin(&j);
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_num(&j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c), p[c]);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}

/*
 * The index of label among m's classes, or an error that names the classes;
 * by: "model" or "name", the first argument of the call the hint names.
 */
int
km_class_of_label(const km_model *m, const char *label, const char *by)
{
	int			c = km_classes_find(m->labels, m->labels_bytes, m->n_classes, label);

	if (c < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("label \"%s\" is not a class of this model", label),
				 errdetail("The model has %u classes, from \"%s\" to \"%s\".", m->n_classes,
						   km_classes_label(m->labels, m->labels_bytes, m->n_classes, 0),
						   km_classes_label(m->labels, m->labels_bytes, m->n_classes,
											m->n_classes - 1)),
				 errhint("kernel_predict_proba(%s, features) returns every class's probability.", by)));
	return c;
}

/* kernel_predict_proba(model bytea, features float8[], label text) RETURNS float8 */
Datum
kernel_predict_proba_label(PG_FUNCTION_ARGS)
{
	const km_model *m = class_model(fcinfo, "kernel_predict_proba");
	int			c = km_class_of_label(m, text_to_cstring(PG_GETARG_TEXT_PP(2)), "model");
	const double *p;

	p = probabilities(fcinfo, m, decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1)));
	PG_RETURN_FLOAT8(p[c]);
}
