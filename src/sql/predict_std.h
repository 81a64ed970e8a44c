/*
 * predict_std.h - kernel_predict_std: the Gaussian-process reading of an
 * exact kernel ridge model (src/core/model/gp.h), by bytea here and by name in
 * src/catalog/catalog_score.c.
 */
#ifndef KM_PREDICT_STD_H
#define KM_PREDICT_STD_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/*
 * kernel_predict_std(model, features) with the model in argument 0 as a
 * bytea (by_name NULL) or as the name by_name looks up.
 */
Datum		km_predict_std(FunctionCallInfo fcinfo, KmNamedModel by_name);

#endif							/* KM_PREDICT_STD_H */
