/*
 * train_paths.h - the training paths of the one-statement trainings and
 * the named paths: today all in the memory host's entry and the checks
 * it shares (memory_train.h, src/pg), included here so that the callers
 * (train.c, classify.c, kernel_fit.c, src/catalog/passes.c) keep one
 * name for them.
 */
#ifndef KM_TRAIN_PATHS_H
#define KM_TRAIN_PATHS_H

#include "postgres.h"

#include "memory_train.h"
#include "rowset.h"

#endif							/* KM_TRAIN_PATHS_H */
