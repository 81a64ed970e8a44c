/*
 * pca_info.c - kernel_model_info's kernel PCA keys (pca_info.h): the
 * eigenvalues of the PCA section (model_sections_pca.c) and the explained
 * variance, arrays the core's describer does not write.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "model.h"
#include "pca_info.h"
#include "pgutil.h"

void
km_pca_describe(KmJson *j, bytea *b)
{
	km_model_shape shape;
	km_model	m;
	km_error	err;
	double	   *storage;
	double		kept = 0.0;

	if (km_model_peek((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	if (!shape.has_pca)
		return;
	storage = palloc_extended(km_model_storage_doubles(&shape) * sizeof(double),
							  MCXT_ALLOC_HUGE);
	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						&m, storage, &err) != KM_OK)
		km_raise(&err);
	km_json_begin_array(j, "eigenvalues");
	for (uint32 c = 0; c < m.n_outputs; c++)
		km_json_num(j, NULL, m.eigenvalues[c]);
	km_json_end(j);
	km_json_begin_array(j, "explained_variance_ratio");
	for (uint32 c = 0; c < m.n_outputs; c++)
	{
		double		r = m.eigen_total > 0 ? m.eigenvalues[c] / m.eigen_total : 0.0;

		kept += r;
		km_json_num(j, NULL, r);
	}
	km_json_end(j);
	km_json_num(j, "explained_variance", kept);
	pfree(storage);
}
