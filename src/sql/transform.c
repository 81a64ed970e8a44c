/*
 * transform.c - kernel_transform(model, features) RETURNS float8[]: the k
 * coordinates of a row under a kernel PCA model (scikit-learn's
 * KernelPCA.transform), decoded once per call site (the model cache of
 * predict.c, whose scorer gives the model's q outputs of a row).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "task.h"
#include "transform.h"

PG_FUNCTION_INFO_V1(kernel_transform);

/* What a call site keeps in fn_extra. */
typedef struct TransformCall
{
	ModelCache *mc;				/* by bytea */
	void	   *named;			/* by name: catalog_predict_model's cache */
} TransformCall;

Datum
km_transform(FunctionCallInfo fcinfo, KmNamedModel by_name)
{
	TransformCall *call = fcinfo->flinfo->fn_extra;
	ModelCache *mc;
	Datum		model;
	const km_model *m;
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(1);
	const double *out;
	Datum	   *elems;
	uint32		q;

	if (call == NULL)
	{
		call = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(TransformCall));
		if (by_name == NULL)
			call->mc = km_model_cache_for_call(fcinfo->flinfo);
		fcinfo->flinfo->fn_extra = call;
	}
	if (by_name != NULL)
		model = by_name(fcinfo, PG_GETARG_TEXT_PP(0), &call->named, &mc);
	else
	{
		model = PG_GETARG_DATUM(0);
		mc = call->mc;
	}
	m = km_model_cache_model(mc, model);
	km_model_check_verb(m, KM_VERB_TRANSFORM, "kernel_transform");
	q = m->n_outputs > 0 ? m->n_outputs : 1;
	/* checks the row's length and values; the model km_model_cache_model returned */
	out = km_model_cache_decision_array(mc, features);
	elems = palloc(sizeof(Datum) * q);
	for (uint32 j = 0; j < q; j++)
		elems[j] = Float8GetDatum(out[j]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, (int) q, FLOAT8OID, 8,
										  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* kernel_transform(model bytea, features float8[]) RETURNS float8[] */
Datum
kernel_transform(PG_FUNCTION_ARGS)
{
	return km_transform(fcinfo, NULL);
}
