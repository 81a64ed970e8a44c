/*
 * catalog_score.c - the by-name forms of the scorers of many rows:
 * kernel_evaluate(name, ...) (float8[] and record forms) and kernel_predict_matrix(name, ...) with its
 * class and probability twins.  Each passes the catalog's lookup of the
 * deployed version (catalog_predict_model: once per statement snapshot and
 * user, with kernel_predict(name, ...)'s read-permission check) down to
 * the scorer in src/sql, which does the rest as for a bytea model.
 */
#include "postgres.h"

#include "fmgr.h"

#include "evaluate.h"
#include "predict_matrix.h"
#include "predict_literal.h"
#include "predict_row.h"
#include "predict_std.h"
#include "transform.h"
#include "catalog_predict.h"

PG_FUNCTION_INFO_V1(kernel_evaluate_by_name_sfunc);
PG_FUNCTION_INFO_V1(kernel_evaluate_label_by_name_sfunc);
PG_FUNCTION_INFO_V1(kernel_predict_matrix_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_class_matrix_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_proba_matrix_by_name);

/* kernel_evaluate_sfunc(internal, name text, features float8[], target float8) */
Datum
kernel_evaluate_by_name_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_FLOAT8, catalog_predict_model);
}

/* kernel_evaluate_sfunc(internal, name text, features float8[], target text) */
Datum
kernel_evaluate_label_by_name_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_TEXT, catalog_predict_model);
}

/* kernel_evaluate_sfunc(internal, name text, row record) */
PG_FUNCTION_INFO_V1(kernel_evaluate_row_by_name_sfunc);

Datum
kernel_evaluate_row_by_name_sfunc(PG_FUNCTION_ARGS)
{
	return km_evaluate_trans(fcinfo, KM_EVAL_ROW, catalog_predict_model);
}

/* kernel_predict_matrix(name text, features float8[]) RETURNS float8[] */
Datum
kernel_predict_matrix_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_VALUE, "kernel_predict_matrix",
							 catalog_predict_model);
}

/* kernel_predict_class_matrix(name text, features float8[]) RETURNS text[] */
Datum
kernel_predict_class_matrix_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_CLASS, "kernel_predict_class_matrix",
							 catalog_predict_model);
}

/* kernel_predict_proba_matrix(name text, features float8[]) RETURNS float8[] */
Datum
kernel_predict_proba_matrix_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_PROBA, "kernel_predict_proba_matrix",
							 catalog_predict_model);
}

/* kernel_predict, kernel_predict_class, kernel_predict_proba (name, row record) */
PG_FUNCTION_INFO_V1(kernel_predict_row_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_class_row_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_proba_row_by_name);

Datum
kernel_predict_row_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_row(fcinfo, catalog_predict_model);
}

Datum
kernel_predict_class_row_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_class_row(fcinfo, catalog_predict_model);
}

Datum
kernel_predict_proba_row_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_proba_row(fcinfo, catalog_predict_model);
}

/* the same (name, features text): an untyped literal read as float8[] */
PG_FUNCTION_INFO_V1(kernel_predict_text_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_class_text_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_proba_text_by_name);

Datum
kernel_predict_text_by_name(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict_by_name);
}

Datum
kernel_predict_class_text_by_name(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict_class_by_name);
}

Datum
kernel_predict_proba_text_by_name(PG_FUNCTION_ARGS)
{
	return km_with_array(fcinfo, kernel_predict_proba_by_name);
}

/* kernel_predict_std(name text, features float8[]) RETURNS float8 */
PG_FUNCTION_INFO_V1(kernel_predict_std_by_name);

Datum
kernel_predict_std_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_std(fcinfo, catalog_predict_model);
}

/* kernel_predict_std_matrix(name text, features float8[]) RETURNS float8[] */
PG_FUNCTION_INFO_V1(kernel_predict_std_matrix_by_name);

Datum
kernel_predict_std_matrix_by_name(PG_FUNCTION_ARGS)
{
	return km_predict_std_matrix(fcinfo, catalog_predict_model);
}

/* kernel_transform(name text, features float8[]) RETURNS float8[] */
PG_FUNCTION_INFO_V1(kernel_transform_by_name);

Datum
kernel_transform_by_name(PG_FUNCTION_ARGS)
{
	return km_transform(fcinfo, catalog_predict_model);
}
