/*
 * evaluate.h - the kernel_evaluate aggregates (evaluate.c), whose by-name
 * transition functions are src/catalog/catalog_score.c's.
 */
#ifndef KM_EVALUATE_H
#define KM_EVALUATE_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/*
 * The transition function of the four forms: argument 1 the model (bytea,
 * by_name NULL) or its name (text, found by by_name), 2 the features, 3 the
 * target (text_target: text, else float8).
 */
Datum		km_evaluate_trans(FunctionCallInfo fcinfo, bool text_target,
							  KmNamedModel by_name);

#endif							/* KM_EVALUATE_H */
