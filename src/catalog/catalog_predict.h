/*
 * catalog_predict.h - the deployed version of a named model as the scoring
 * functions by name find it (catalog_predict.c), for the scorers by name in
 * other files (catalog_score.c: kernel_evaluate, kernel_predict_matrix),
 * which pass it down to src/sql as a KmNamedModel (predict.h).
 */
#ifndef KM_CATALOG_PREDICT_H
#define KM_CATALOG_PREDICT_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/*
 * The deployed model of name (a bytea datum) and the ModelCache that
 * decodes it, from a cache kept at *slot (NULL at first; allocated in
 * fcinfo's fn_mcxt): looked up, and read access checked, again only when
 * the snapshot or the current user changed, as kernel_predict(name, ...)
 * does.  Both stay valid until the next call with the same slot.
 */
Datum		catalog_predict_model(FunctionCallInfo fcinfo, text *name, void **slot,
								  ModelCache **mc);

/* the by-name scoring verbs (SQL entry points), for their text-literal forms */
Datum		kernel_predict_by_name(PG_FUNCTION_ARGS);
Datum		kernel_predict_class_by_name(PG_FUNCTION_ARGS);
Datum		kernel_predict_proba_by_name(PG_FUNCTION_ARGS);

#endif							/* KM_CATALOG_PREDICT_H */
