/*
 * predict_matrix.h - scoring the rows of a 2-D float8 array in one call
 * (predict_matrix.c): kernel_predict_matrix and its class and probability
 * twins, whose by-name forms are src/catalog/catalog_score.c's.
 */
#ifndef KM_PREDICT_MATRIX_H
#define KM_PREDICT_MATRIX_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

typedef enum KmMatrixOutput
{
	KM_MATRIX_VALUE,			/* kernel_predict's value per row */
	KM_MATRIX_CLASS,			/* the class label per row */
	KM_MATRIX_PROBA				/* the k probabilities per row */
} KmMatrixOutput;

/*
 * The body of the six entry points: argument 0 the model (by_name NULL) or
 * its name (found by by_name), argument 1 the 2-D array; the result as the
 * SQL function returns it.  fname names the function in errors.
 */
Datum		km_predict_matrix(FunctionCallInfo fcinfo, KmMatrixOutput what,
							  const char *fname, KmNamedModel by_name);

/*
 * kernel_predict_std_matrix(model | name, features): the predictive
 * standard deviation of every row (kernel_predict_std's), by model
 * (by_name NULL) or by name.
 */
Datum		km_predict_std_matrix(FunctionCallInfo fcinfo, KmNamedModel by_name);

#endif							/* KM_PREDICT_MATRIX_H */
