/*
 * grid.c - the names of the cross-validation routes, the one grid loop and
 * its tie rule (core, no PostgreSQL headers; grid.h).
 */
#include <math.h>

#include "grid.h"
#include "progress.h"

const char *
km_cv_name(km_cv cv)
{
	switch (cv)
	{
		case KM_CV_NONE:
			return "none";
		case KM_CV_LOO:
			return "loo";
		case KM_CV_GCV:
			return "gcv";
		case KM_CV_KFOLD:
			return "kfold";
		case KM_CV_EVIDENCE:
			return "evidence";
	}
	return "unknown";
}

int
km_best_candidate(const km_candidate *cand, int count)
{
	int			best = -1;

	for (int i = 0; i < count; i++)
	{
		const km_candidate *c = &cand[i];
		const km_candidate *b = best >= 0 ? &cand[best] : NULL;

		if (!isfinite(c->score))
			continue;
		if (b == NULL || c->score < b->score ||
			(c->score == b->score &&
			 (c->lambda > b->lambda ||
			  (c->lambda == b->lambda && c->gamma < b->gamma))))
			best = i;
	}
	return best;
}

km_status
km_grid_search(const double *gammas, int n_gammas, const double *lambdas,
			   int n_lambdas, const km_grid_route *route, km_candidate *cand,
			   int *best, km_error *err)
{
	km_status	st = KM_OK;

	*best = -1;
	for (int g = 0; g < n_gammas; g++)
	{
		km_candidate *column = cand + (size_t) g * (size_t) n_lambdas;

		if (route->gamma_stage != NULL)
			km_progress_stage("gamma %d of %d (%g)%s", g + 1, n_gammas,
							  gammas[g], route->gamma_stage);
		for (int l = 0; l < n_lambdas; l++)
		{
			column[l].gamma = gammas[g];
			column[l].lambda = lambdas[l];
		}
		if (route->gamma != NULL)
			st = route->gamma(route->arg, g, gammas[g], err);
		if (st == KM_OK && route->column != NULL)
			st = route->column(route->arg, g, column, err);
		for (int l = 0; l < n_lambdas && st == KM_OK && route->column == NULL; l++)
			st = route->score(route->arg, g * n_lambdas + l, &column[l], err);
		if (st != KM_OK)
			return st;
	}
	if (!route->keep_stage)
		km_progress_stage(NULL);
	*best = km_best_candidate(cand, n_gammas * n_lambdas);
	if (*best < 0)
		return route->none(route->arg, n_gammas * n_lambdas, err);
	return KM_OK;
}
