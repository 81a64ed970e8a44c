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

/*
 * The Gaussian-process reading of the model in argument 0 (as
 * km_predict_std finds it), factored and ready for km_gp_std_block, kept
 * by the call site across calls; fname names the function in errors.
 */
struct km_gp;
struct km_gp *km_predict_std_block_gp(FunctionCallInfo fcinfo,
									  KmNamedModel by_name, const char *fname);

#endif							/* KM_PREDICT_STD_H */
