/*
 * gp_info.c - kernel_model_info's Gaussian-process keys of a kernel ridge
 * model: "amplitude" and "log_marginal_likelihood" (src/core/model/gp.h), of an
 * exact model, or of a nystrom / rff one that keeps its GP_APPROX section
 * (the DTC likelihood; rff's that of Bayesian linear regression on z).
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "gp.h"
#include "gp_info.h"
#include "model.h"
#include "pgutil.h"

/*
 * kernel_model_info's "amplitude" (s2) and "log_marginal_likelihood" of a
 * model with a GP reading (nothing for others): the values its fit kept
 * (its GP section: no factor, no arrays decoded); for a model without
 * them (written before 0.4.0), computed here from the training rows, as
 * kernel_predict_std does, in a context freed before returning, and null
 * when that factor would not fit under kernel_ml.max_memory.  The
 * likelihood is null when it is unbounded (a constant target).
 */
void
km_gp_describe(KmJson *j, bytea *b)
{
	MemoryContext cxt;
	MemoryContext old;
	km_model_shape shape;
	km_model	m;
	km_error	err;
	km_gp		gp;
	double	   *storage;
	double	   *mem;
	size_t		doubles;
	double		lml;
	bool		have_lml = false;
	bool		have_s2 = false;
	double		s2 = 0.0;

	if (km_model_peek((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	/* kept by the fit (its GP or GP_APPROX section): read, without the arrays */
	if (shape.has_gp || shape.has_gp_approx)
	{
		if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
							&m, NULL, &err) != KM_OK)
			km_raise(&err);
		if (shape.has_gp_approx)
		{
			/* the factor is not decoded here: s2, the determinant, the rows */
			memset(&gp, 0, sizeof(gp));
			gp.s2 = m.gp_amplitude;
			gp.logdet_half = m.gp_logdet_half;
			gp.rows = (size_t) m.rows_seen;
		}
		if (shape.has_gp_approx || km_gp_stored(&gp, &m))
		{
			km_json_num(j, "amplitude", gp.s2);
			if (km_gp_log_marginal_likelihood(&gp, &lml))
				km_json_num(j, "log_marginal_likelihood", lml);
			else
				km_json_null(j, "log_marginal_likelihood");
			return;
		}
	}
	/* a model without them (before 0.4.0): from its rows, as the fit did */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "kernel_model_info GP",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	storage = palloc_extended(km_model_storage_doubles(&shape) * sizeof(double),
							  MCXT_ALLOC_HUGE);
	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						&m, storage, &err) != KM_OK)
		km_raise(&err);
	if (!km_gp_applies(&m, NULL))
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(cxt);
		return;
	}
	doubles = km_gp_doubles(&m);
	if (doubles > 0 && km_memory_fits(8.0 * (double) doubles))
	{
		(void) km_mem_reserve(cxt, 8.0 * (double) doubles,
							  "kernel_model_info's factor of K + lambda I", false);
		mem = palloc_extended(sizeof(double) * doubles, MCXT_ALLOC_HUGE);
		km_blas_setup();
		if (km_gp_prepare(&gp, &m, mem, &err, km_interrupt) == KM_OK)
		{
			s2 = gp.s2;
			have_s2 = true;
			have_lml = km_gp_log_marginal_likelihood(&gp, &lml);
		}
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(cxt);
	if (have_s2)
		km_json_num(j, "amplitude", s2);
	else
		km_json_null(j, "amplitude");
	if (have_lml)
		km_json_num(j, "log_marginal_likelihood", lml);
	else
		km_json_null(j, "log_marginal_likelihood");
}
