/*
 * pipeline_approx_job.h - what km_train's approximate trainings share
 * (core, no PostgreSQL headers): one training's rows, basis and block
 * buffers, and the pieces over them that pipeline_approx.c defines (the
 * basis pass over the rows and their hashes, a block's features, nystrom's
 * factor), so that the regression (pipeline_approx.c) and the classifiers
 * (pipeline_approx_classify.c) walk the rows the same way.
 */
#ifndef KM_PIPELINE_APPROX_JOB_H
#define KM_PIPELINE_APPROX_JOB_H

#include "pipeline_types.h"

/* Rows per block of a primal method's features. */
#define PRIMAL_BLOCK 512

/* One approximate training: the rows, the basis, a block's buffers. */
typedef struct approx_job
{
	const km_rows *rows;
	const km_train_env *env;
	km_options	opts;
	km_basis	b;
	double	   *Xs;				/* block x d standardized rows */
	double	   *Z;				/* block x m features */
	double	   *fwork;			/* km_approx_features_doubles(b, block) + 1 */
	double	   *L;				/* primal, nystrom: chol(K_mm + eps I); else NULL */
	km_error	deferred;		/* a primal_fit's failed block (status KM_OK: none) */
	/* k-fold selection of a primal method (rows->fold) */
	int			holdout;		/* the fold left out of the fit; -1: none */
	double	   *Zc;				/* block x m: the training rows' features */
	double	   *yc;				/* block: their targets */
	/* what a basis holds, released before the next one (another gamma) */
	void	   *basis_mem;
	double	   *W;
	double	   *bv;
} approx_job;

/* Components of the model at most: a basis keeps at most n rows as centres. */
uint32_t	km_approx_job_components(const km_options *o, size_t n);

/* doubles of memory from the job's env (as long as the model) */
void	   *km_approx_job_alloc(approx_job *job, size_t doubles);

/*
 * The basis of the rows (a pass in their order, keyed by rows->hash) for
 * job->opts (its gamma), with rff's random features drawn; sbytes: the
 * basis state's (plan->basis_bytes).  job->Xs holds at least d doubles.
 */
km_status	km_approx_job_basis(approx_job *job, size_t sbytes, km_error *err);

/*
 * What the Newton passes over a basis need: nystrom's factor L of
 * K_mm + eps I (*eps recorded) and, once, job->Z and job->fwork for
 * blocks of PRIMAL_BLOCK rows.
 */
km_status	km_approx_job_setup(approx_job *job, double *eps, km_error *err);

/*
 * Z (rows x m) := the features of rows [i0, i0 + rows) (rows <=
 * PRIMAL_BLOCK): standardized by the basis's scaler, mapped and, for
 * nystrom, whitened by L^-1, in interruptible pieces.
 */
km_status	km_approx_job_features(approx_job *job, size_t i0, size_t rows,
								   double *Z, km_error *err);

/* The basis, its factor and its random features released (before another gamma's). */
void		km_approx_job_release(approx_job *job);

#endif							/* KM_PIPELINE_APPROX_JOB_H */
