/*
 * grid.h - what the options, the selection and the model format say of a
 * selection grid (core, no PostgreSQL headers): its largest size, the
 * cross-validation routes, a scored candidate, and the one loop over a
 * grid (km_grid_search) with its tie rule, which every selection drives
 * (select.c, classify_fit.c, the approximate classifiers) and a
 * representation's closed form too (approximate ridge's GCV, approx.c).
 * Near a leaf of the core: it includes only core.h, so the model format
 * need not import the selection, nor a representation the learning layer.
 */
#ifndef KM_GRID_H
#define KM_GRID_H

#include "core.h"

/* Most candidates one grid (gamma or lambda) may have. */
#define KM_MAX_GRID 64

typedef enum km_cv
{
	KM_CV_NONE = 0,
	KM_CV_LOO = 1,				/* ridge: exact leave-one-out, closed form */
	KM_CV_GCV = 2,				/* ridge: generalized cross-validation */
	KM_CV_KFOLD = 3,			/* any method: k refits per candidate */
	KM_CV_EVIDENCE = 4			/* ridge: the Gaussian-process log marginal
								 * likelihood, amplitude profiled (gp.h) */
} km_cv;

const char *km_cv_name(km_cv cv);

typedef struct km_candidate
{
	double		gamma;
	double		lambda;
	double		score;			/* mean squared error (GCV: its value; evidence:
								 * minus the log marginal likelihood); NaN if
								 * unsolvable */
	double		score_std;		/* k-fold: standard deviation over folds, else 0 */
} km_candidate;

/*
 * The best of count scored candidates: the lowest finite score; on an exact
 * tie the larger lambda (the more regularized model), then the smaller gamma
 * (the smoother one), whatever their order in the grid; -1 if none is
 * finite.  Every route (loo, gcv, k-fold, classifiers exact and approximate)
 * breaks ties by it.
 */
int			km_best_candidate(const km_candidate *cand, int count);

/*
 * The one grid loop of every selection (exact regression and classifiers,
 * approximate classifiers and svr, approximate ridge's GCV): gammas x lambdas in the one candidate order,
 * gamma major (candidate i = g * n_lambdas + l), each candidate's gamma and
 * lambda filled before it is scored, the winner km_best_candidate's.  The
 * work is the route's:
 *   gamma   before gamma number g's candidates (may be NULL): the row norms,
 *           the Gram matrix, an approximate basis, a tridiagonal reduction;
 *   score   one candidate (k-fold): its score and score_std, NaN when it
 *           cannot be fitted; index is i;
 *   column  or all the lambdas of gamma g at once, column[0 .. n_lambdas),
 *           the closed-form shortcut a method or representation declares
 *           (ridge's leave-one-out and GCV, approximate ridge's GCV);
 *           column wins when both are set;
 *   none    the error when no candidate scores (count candidates): fills err
 *           and returns its status, so that each route keeps its text.
 * A route's failure (not KM_OK) ends the search with it.  Progress: the
 * stage "gamma g of G (gamma)" plus gamma_stage before each gamma when
 * gamma_stage is not NULL; the stage is cleared when every candidate is
 * scored (unless keep_stage).  *best: -1 until a winner.
 */
typedef struct km_grid_route
{
	void	   *arg;
	km_status	(*gamma) (void *arg, int g, double gamma, km_error *err);
	km_status	(*score) (void *arg, int index, km_candidate *cand, km_error *err);
	km_status	(*column) (void *arg, int g, km_candidate *column, km_error *err);
	km_status	(*none) (void *arg, int count, km_error *err);
	const char *gamma_stage;
	bool		keep_stage;		/* the route sets no stage and runs within its
								 * caller's phase (approximate ridge's GCV,
								 * approx.c): the loop leaves the stage, and
								 * so the phase, as they are at the end */
} km_grid_route;

km_status	km_grid_search(const double *gammas, int n_gammas,
						   const double *lambdas, int n_lambdas,
						   const km_grid_route *route, km_candidate *cand,
						   int *best, km_error *err);

#endif							/* KM_GRID_H */
