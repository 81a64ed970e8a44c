/*
 * options.h - the jsonb options object shared by every kernel_ml function.
 */
#ifndef KM_OPTIONS_H
#define KM_OPTIONS_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "select.h"

/* A grid of candidate values for gamma or lambda. */
typedef struct km_grid
{
	int			n;				/* 0: not given */
	bool		per_feature;	/* values are multiples of 1 / n_features */
	double		v[KM_MAX_GRID];
} km_grid;

typedef enum km_deploy
{
	KM_DEPLOY_IF_BETTER = 0,
	KM_DEPLOY_ALWAYS,
	KM_DEPLOY_NEVER
} km_deploy;

/*
 * Parsed options.  A plain struct without pointers, so that aggregate
 * states can copy and serialize it as it is.
 */
typedef struct km_options
{
	km_fit_params fit;			/* kernel, method, lambda, lms settings */
	km_grid		gammas;			/* candidates; resolved once d is known */
	km_grid		lambdas;
	km_cv		cv;				/* KM_CV_NONE: no selection */
	int			folds;			/* cv = KM_CV_KFOLD */
	int64		seed;
	bool		standardize;
	bool		fit_intercept;
	/* catalog keys (kernel_model_train); validated here, used there */
	double		test_fraction;
	km_deploy	deploy;
} km_options;

/* Defaults, then the keys of opts (NULL for none), validated strictly. */
void		km_options_parse(Jsonb *opts, km_options *out);

/*
 * Fill what depends on the number of features: the default gamma (1 / d)
 * and grids given relative to it.
 */
void		km_options_resolve(km_options *opts, int d);

/* Whether the options ask for more than one candidate, or for cv. */
bool		km_options_selects(const km_options *opts);

/* Error unless gamma and lambda are single values; fname names the caller. */
void		km_options_require_single(const km_options *opts, const char *fname);

#endif							/* KM_OPTIONS_H */
