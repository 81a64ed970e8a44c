/*
 * evaluate.h - the kernel_evaluate aggregates (evaluate.c), whose by-name
 * transition functions are src/catalog/catalog_score.c's.
 */
#ifndef KM_EVALUATE_H
#define KM_EVALUATE_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/* What a form of kernel_evaluate takes after the model (or its name). */
typedef enum KmEvalForm
{
	KM_EVAL_FLOAT8,				/* features float8[], target float8 */
	KM_EVAL_TEXT,				/* features float8[], target text */
	KM_EVAL_ROW					/* row record: columns by name, the target column */
} KmEvalForm;

/*
 * The transition function of the six forms: argument 1 the model (bytea,
 * by_name NULL) or its name (text, found by by_name), then the features and
 * the target, or the row.
 */
Datum		km_evaluate_trans(FunctionCallInfo fcinfo, KmEvalForm form,
							  KmNamedModel by_name);

#endif							/* KM_EVALUATE_H */
