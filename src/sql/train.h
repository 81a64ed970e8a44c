/*
 * train.h - the training pipeline behind the kernel_train aggregate,
 * callable from C (named models train on rows they collected themselves).
 */
#ifndef KM_TRAIN_H
#define KM_TRAIN_H

#include "postgres.h"

#include "rowset.h"

/*
 * Fit on the rows of rs with rs->opts and return the encoded model in a new
 * bytea in CurrentMemoryContext: exactly what kernel_train returns for the
 * same rows, in the same order, with the same options.
 */
bytea	   *km_train_rowset(RowSet *rs);

#endif							/* KM_TRAIN_H */
