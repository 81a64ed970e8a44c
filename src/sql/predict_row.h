/*
 * predict_row.h - scoring a row by column names (predict_row.c); the by-name
 * forms pass the catalog's lookup (src/catalog/catalog_score.c).
 */
#ifndef KM_PREDICT_ROW_H
#define KM_PREDICT_ROW_H

#include "postgres.h"

#include "access/htup.h"
#include "fmgr.h"

#include "encoder.h"
#include "model.h"
#include "predict.h"

/* named: NULL for the model in argument 0, else the lookup of its name */
Datum		km_predict_row(FunctionCallInfo fcinfo, KmNamedModel named);
Datum		km_predict_class_row(FunctionCallInfo fcinfo, KmNamedModel named);
Datum		km_predict_proba_row(FunctionCallInfo fcinfo, KmNamedModel named);

/*
 * The mapping of a table model's encoder to a row type, for scorers of
 * their own (kernel_evaluate(model, row), evaluate.c): allocated in ctx,
 * kept across rows; with_target: the encoder's target column is mapped
 * too, a model without one refused.
 */
typedef struct KmRowMap KmRowMap;

KmRowMap   *km_row_map_create(MemoryContext ctx, bool with_target);

/*
 * Parse m's encoder (unless parsed already; a model without one is an
 * error naming fname) and map it to rec's row type (unless mapped already;
 * a missing column is an error naming it).
 */
void		km_row_map_prepare(KmRowMap *rm, const km_model *m, HeapTupleHeader rec,
							   const char *fname);

/*
 * After km_row_map_prepare, with_target: the value of rec's target column
 * (*v, as km_table_value reads it; *kind, how its type is read); returns
 * the column's name.
 */
const char *km_row_map_target(KmRowMap *rm, HeapTupleHeader rec, km_encoder_value *v,
							  km_column_kind *kind);

/*
 * After km_row_map_prepare: rec's encoded features (the model's d), or an
 * error (where: "The row", ...) naming the column that cannot be encoded.
 */
const double *km_row_map_encode(KmRowMap *rm, HeapTupleHeader rec, const char *where);

#endif							/* KM_PREDICT_ROW_H */
