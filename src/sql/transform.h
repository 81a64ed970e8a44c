/*
 * transform.h - kernel_transform: the coordinates of a row under a model
 * whose outputs are coordinates (a task row with embeds, task.h: kernel
 * PCA), by bytea here and by name in src/catalog/catalog_score.c.
 */
#ifndef KM_TRANSFORM_H
#define KM_TRANSFORM_H

#include "postgres.h"

#include "fmgr.h"

#include "predict.h"

/*
 * kernel_transform(model, features) with the model in argument 0 as a
 * bytea (by_name NULL) or as the name by_name looks up.
 */
Datum		km_transform(FunctionCallInfo fcinfo, KmNamedModel by_name);

#endif							/* KM_TRANSFORM_H */
