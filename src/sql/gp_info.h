/*
 * gp_info.h - kernel_model_info's Gaussian-process keys (gp_info.c).
 */
#ifndef KM_GP_INFO_H
#define KM_GP_INFO_H

#include "postgres.h"

#include "json.h"

/*
 * "amplitude" and "log_marginal_likelihood" of the model b into j: nothing
 * for a model without a GP reading (gp.h km_gp_applies).  A model trained
 * since 0.4.0 keeps them (its GP section): one validating read, no
 * factor.  An older one costs a Cholesky factorisation of the n training
 * rows' K + lambda I, and reports null when that does not fit under
 * kernel_ml.max_memory.  The likelihood is null when unbounded (a
 * constant target).
 */
void		km_gp_describe(KmJson *j, bytea *b);

#endif							/* KM_GP_INFO_H */
