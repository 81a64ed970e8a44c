/*
 * grid.h - what the options, the selection and the model format say of a
 * selection grid (core, no PostgreSQL headers): its largest size, the
 * cross-validation routes, a scored candidate.  A leaf of the core: it
 * includes nothing, so the model format need not import the selection.
 */
#ifndef KM_GRID_H
#define KM_GRID_H

/* Most candidates one grid (gamma or lambda) may have. */
#define KM_MAX_GRID 64

typedef enum km_cv
{
	KM_CV_NONE = 0,
	KM_CV_LOO = 1,				/* ridge: exact leave-one-out, closed form */
	KM_CV_GCV = 2,				/* ridge: generalized cross-validation */
	KM_CV_KFOLD = 3				/* any method: k refits per candidate */
} km_cv;

const char *km_cv_name(km_cv cv);

typedef struct km_candidate
{
	double		gamma;
	double		lambda;
	double		score;			/* mean squared error (GCV: its value); NaN if unsolvable */
	double		score_std;		/* k-fold: standard deviation over folds, else 0 */
} km_candidate;

#endif							/* KM_GRID_H */
