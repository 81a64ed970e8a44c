/*
 * predict_literal.c - kernel_predict(model | name, features text) and its
 * class and proba twins: the features of an untyped literal.
 *
 * With kernel_predict(model, rec record) beside kernel_predict(model,
 * features float8[]), a call with an untyped literal, kernel_predict(m,
 * '{1, 2}'), would fit both and be ambiguous (an unknown literal converts
 * to any type).  PostgreSQL resolves an unknown argument to the string
 * category when a candidate takes it, so these text forms catch such
 * calls: the text is read as float8[] (float8[]'s input function: the same
 * errors as the cast), and the float8[] form scores it on the same call site.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "predict_literal.h"

PG_FUNCTION_INFO_V1(kernel_predict_text);
PG_FUNCTION_INFO_V1(kernel_predict_class_text);
PG_FUNCTION_INFO_V1(kernel_predict_proba_text);

/* the float8[] forms (predict.c, classify.c, catalog_predict.c) */
extern Datum kernel_predict(PG_FUNCTION_ARGS);
extern Datum kernel_predict_class(PG_FUNCTION_ARGS);
extern Datum kernel_predict_proba(PG_FUNCTION_ARGS);

/*
 * Argument 1 read as float8[], then fn on a call of its own that shares
 * this one's FmgrInfo (its fn_extra cache).  A copy: the executor keeps a
 * constant argument in fcinfo->args across rows.
 */
Datum
km_with_array(FunctionCallInfo fcinfo, PGFunction fn)
{
	LOCAL_FCINFO(call, 2);
	char	   *s = text_to_cstring(PG_GETARG_TEXT_PP(1));
	Datum		result;
	Oid			in;
	Oid			ioparam;

	InitFunctionCallInfoData(*call, fcinfo->flinfo, 2, fcinfo->fncollation,
							 fcinfo->context, fcinfo->resultinfo);
	call->args[0] = fcinfo->args[0];
	getTypeInputInfo(FLOAT8ARRAYOID, &in, &ioparam);
	call->args[1].value = OidInputFunctionCall(in, s, ioparam, -1);
	call->args[1].isnull = false;
	result = fn(call);
	fcinfo->isnull = call->isnull;
	return result;
}

Datum
kernel_predict_text(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict);
}


Datum
kernel_predict_class_text(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict_class);
}


Datum
kernel_predict_proba_text(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict_proba);
}

