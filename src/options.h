/*
 * options.h - the jsonb options object shared by every kernel_ml function.
 */
#ifndef KM_OPTIONS_H
#define KM_OPTIONS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "solve.h"

typedef struct km_options
{
	km_fit_params fit;			/* kernel, method, lambda, lms settings */
	bool		gamma_set;		/* else 1 / n_features once d is known */
	bool		standardize;
	bool		fit_intercept;
} km_options;

/* Defaults, then the keys of opts (NULL for none), validated strictly. */
void		km_options_parse(Jsonb *opts, km_options *out);

/* Fill what depends on the number of features (the default gamma). */
void		km_options_resolve(km_options *opts, int d);

#endif							/* KM_OPTIONS_H */
