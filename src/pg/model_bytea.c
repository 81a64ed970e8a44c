/*
 * model_bytea.c - a core km_model as a bytea and back to the reader: the
 * glue between the model format (src/core/model/model.c) and PostgreSQL's
 * varlena and memory contexts.
 */
#include "postgres.h"

#include "model.h"
#include "model_bytea.h"
#include "pgutil.h"

bytea *
km_model_encode_bytea(const km_model *m, size_t size)
{
	bytea	   *result = palloc_extended(VARHDRSZ + size, MCXT_ALLOC_HUGE);

	SET_VARSIZE(result, VARHDRSZ + size);
	km_model_encode(m, (uint8_t *) VARDATA(result));
	return result;
}

void
km_model_check_bytea(const bytea *result, size_t size)
{
	km_model	check;
	km_error	err;

	if (km_model_decode((const uint8_t *) VARDATA(result), size, &check,
						NULL, &err) != KM_OK)
		elog(ERROR, "kernel_train produced a model its reader rejects: %s",
			 err.detail);
}

bytea *
km_model_to_bytea(const km_model *m)
{
	km_model_shape shape = km_model_shape_of(m);
	size_t		size = km_model_size(&shape);
	bytea	   *result;

	if (size == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("model is too large"),
				 errdetail("A model of %u expansion rows of %u features and %u outputs would exceed 1 GB.",
						   m->n_train, m->n_features, Max(m->n_outputs, 1))));
	result = km_model_encode_bytea(m, size);
	km_model_check_bytea(result, size);
	return result;
}

/*
 * b decoded into *m, its arrays in a palloc'd block of the current context
 * (returned, for the caller to free or leave to the context); a malformed
 * model is an error (the decoder's SQLSTATE and detail).
 */
double *
km_model_decode_bytea(const bytea *b, km_model *m)
{
	const uint8_t *buf = (const uint8_t *) VARDATA_ANY(b);
	size_t		len = VARSIZE_ANY_EXHDR(b);
	km_model_shape shape;
	km_error	err;
	double	   *storage;

	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		km_raise(&err);
	storage = palloc_extended(km_model_storage_doubles(&shape) * sizeof(double),
							  MCXT_ALLOC_HUGE);
	if (km_model_decode(buf, len, m, storage, &err) != KM_OK)
		km_raise(&err);
	return storage;
}
