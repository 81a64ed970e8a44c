/*
 * predict_row.h - scoring a row by column names (predict_row.c); the by-name
 * forms pass the catalog's lookup (src/catalog/catalog_score.c).
 */
#ifndef KM_PREDICT_ROW_H
#define KM_PREDICT_ROW_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/* named: NULL for the model in argument 0, else the lookup of its name */
Datum		km_predict_row(FunctionCallInfo fcinfo, KmNamedModel named);
Datum		km_predict_class_row(FunctionCallInfo fcinfo, KmNamedModel named);
Datum		km_predict_proba_row(FunctionCallInfo fcinfo, KmNamedModel named);

#endif							/* KM_PREDICT_ROW_H */
