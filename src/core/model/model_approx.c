/*
 * model_approx.c - the fields of a regression model that an approximate
 * fit (approx.c) decides (core, no PostgreSQL headers).  It fills a
 * km_model, so it lives with the model, above the representations.
 */
#include <math.h>

#include "model.h"

void
km_approx_model_fill(const km_basis *b, uint32_t components_asked,
					 const double *lambdas, int n_lambdas, bool fit_intercept,
					 const double *coef, const km_approx_result *res,
					 km_candidate *cand, km_model *m)
{
	km_basis_kept kept;

	km_basis_kept_of(b, res->rank, res->eps, &kept);

	m->kernel = b->kernel;
	m->n_features = b->d;
	m->standardize = b->standardize;
	m->mean = b->mean;
	m->scale = b->scale;
	m->fit_intercept = fit_intercept;

	m->approximation = b->kind;
	m->components = components_asked != 0 ? components_asked : b->m;
	m->rank = kept.rank;
	m->approx_eps = kept.eps;
	m->approx_seed = b->seed;
	m->centers = b->centres_kind;
	m->n_train = b->m;
	m->n_outputs = 1;
	m->alpha = coef;
	m->intercept = res->intercept;
	m->intercepts = NULL;
	m->X = kept.X;
	m->rff_W = kept.W;
	m->rff_b = kept.b;

	m->lambda = res->lambda;
	m->jitter = 0.0;
	m->converged = true;
	m->train_rmse = res->train_rmse;
	m->rows_seen = res->rows;

	if (cand != NULL && n_lambdas > 0)
	{
		for (int l = 0; l < n_lambdas; l++)
		{
			/* as km_select's grid: kernels without gamma score at gamma 1 */
			cand[l].gamma = (km_kernel_params(b->kernel.type) & KM_PARAM_GAMMA) ?
				b->kernel.gamma : 1.0;
			cand[l].lambda = lambdas[l];
			cand[l].score = isfinite(res->gcv[l]) ? res->gcv[l] : NAN;
			cand[l].score_std = 0.0;
		}
		m->n_candidates = (uint32_t) n_lambdas;
		m->cv = KM_CV_GCV;
		m->folds = 0;
		m->best = (uint32_t) res->best;
		m->candidates = cand;
	}
}
