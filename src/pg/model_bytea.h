/*
 * model_bytea.h - a core km_model as a bytea (glue).
 */
#ifndef KM_MODEL_BYTEA_H
#define KM_MODEL_BYTEA_H

#include "postgres.h"

struct km_model;

/*
 * A filled km_model as a new bytea, decoded once more to prove its reader
 * accepts it (54000 when it would exceed 1 GB).
 */
struct km_model;
bytea	   *km_model_to_bytea(const struct km_model *m);

/*
 * The two halves of km_model_to_bytea, for a caller that frees its
 * training memory in between: the model encoded into a new bytea of size
 * (km_model_size) bytes in CurrentMemoryContext; then the check that it
 * decodes.  Every path that could produce a value the reader rejects
 * raises 22003 before encoding; a model that still fails to decode is a
 * bug, never a result.
 */
bytea	   *km_model_encode_bytea(const struct km_model *m, size_t size);
void		km_model_check_bytea(const bytea *result, size_t size);

/* b decoded into *m; returns the palloc'd block holding its arrays */
double	   *km_model_decode_bytea(const bytea *b, struct km_model *m);

#endif							/* KM_MODEL_BYTEA_H */
