/*
 * pipeline_approx_job.h - what km_train's approximate trainings share
 * (core, no PostgreSQL headers): one training's rows, basis and block
 * buffers, and the pieces over them that pipeline_approx.c defines (the
 * basis pass over the rows and their hashes, a chunk's features, nystrom's
 * factor), asked of a host as passes (learn/pass.h), so that the regression (pipeline_approx.c) and the classifiers
 * (pipeline_approx_classify.c) walk the rows the same way.
 */
#ifndef KM_PIPELINE_APPROX_JOB_H
#define KM_PIPELINE_APPROX_JOB_H

#include "learn/newton.h"
#include "learn/pass.h"
#include "learn/point.h"
#include "pipeline_types.h"

/* Rows per chunk of a primal method's passes (0.3.0's blocks: bit for bit). */
#define PRIMAL_BLOCK 512

/*
 * Rows of a chunk's standardized copy (job->Xs): a chunk, or every row when
 * there are fewer (a host of few wide rows holds no more than them).
 */
#define KM_XS_ROWS(n) ((size_t) (n) < PRIMAL_BLOCK ? ((size_t) (n) > 0 ? (size_t) (n) : 1) : PRIMAL_BLOCK)

/*
 * One approximate training: the rows' shape (n, d, rows skipped, a
 * classifier's classes: km_learn hands the job no row array), the host
 * that holds the rows, the basis, a chunk's buffers.
 */
typedef struct approx_job
{
	const km_rows *rows;		/* the shape only: no array (learner.h) */
	const km_host *host;
	const km_train_env *env;
	km_options	opts;
	km_basis	b;
	km_pass		pass;			/* the pass being asked for */
	double	   *Xs;				/* block x d standardized rows */
	double	   *Z;				/* block x m features */
	double	   *fwork;			/* km_approx_features_doubles(b, block) + 1 */
	double	   *L;				/* primal, nystrom: chol(K_mm + eps I); else NULL */
	bool		unwhitened;		/* km_approx_job_features leaves them unwhitened (Newton-CG's passes) */
	double		eps;			/* its eps (km_approx_job_setup's) */
	/* k-fold selection of a primal method (the host's row folds) */
	int			holdout;		/* the fold left out of the fit; -1: none */
	double	   *Zc;				/* block x m: the training rows' features */
	double	   *yc;				/* block: their targets */
	/* what a basis holds, released before the next one (another gamma) */
	void	   *basis_mem;
	size_t		basis_len;		/* its bytes (km_basis_decode's len) */
	double	   *W;
	double	   *bv;
} approx_job;

/* Components of the model at most: a basis keeps at most n rows as centres. */
uint32_t	km_approx_job_components(const km_options *o, size_t n);

/* doubles of memory from the job's env (as long as the model) */
void	   *km_approx_job_alloc(approx_job *job, size_t doubles);

/*
 * The job of rows (the shape) on host with opts: job->Xs (PRIMAL_BLOCK x
 * d) allocated, its pass's chunk buffer from env when a host needs it.
 */
void		km_approx_job_init(approx_job *job, const km_rows *rows,
							   const km_host *host, const km_train_env *env,
							   const km_options *opts);

/*
 * The pass job->pass reset for a new ask: its text, chunk, state size,
 * add, side (KM_SIDE_ALL) and the job as its point.
 */
km_pass    *km_approx_job_pass(approx_job *job, const char *what, size_t chunk,
							   size_t state_bytes, km_pass_add_fn add);

/*
 * The basis of the rows for job->opts (its gamma): the steps of its
 * representation's list (repr.h km_repr_basis_steps) in order: the sample
 * pass over the rows keyed by their hashes (sbytes: the basis state's,
 * plan->basis_bytes), the refine passes, rff's draw.
 */
km_status	km_approx_job_basis(approx_job *job, size_t sbytes, km_error *err);

/*
 * A refine step of the basis's list (KM_BASIS_KMEANS or KM_BASIS_LEVERAGE)
 * over its centres, in place: Lloyd's k-means iterations or a leverage
 * sample (centres.h), pipeline_centres.c.
 */
km_status	km_approx_job_refine(approx_job *job, km_basis_step step, km_error *err);

/* Bytes the refine steps of o's basis list hold at most over basis shape (its kind, d, m). */
double		km_approx_centres_bytes(const km_options *o, const km_basis *shape);

/*
 * What the Newton passes over a basis need: nystrom's factor L of
 * K_mm + eps I (*eps recorded) and, once, job->Z and job->fwork for
 * blocks of PRIMAL_BLOCK rows.
 */
km_status	km_approx_job_setup(approx_job *job, double *eps, km_error *err);

/*
 * Z (rows x m) := the features of the rows X (rows <= PRIMAL_BLOCK, raw;
 * first: the first one's number in the pass, for errors): standardized by
 * the basis's scaler, mapped and, for nystrom, whitened by L^-1, in
 * interruptible pieces.
 */
km_status	km_approx_job_features(approx_job *job, const double *X, size_t first,
								   size_t rows, double *Z, km_error *err);

/* The basis, its factor and its random features released (before another gamma's). */
void		km_approx_job_release(approx_job *job);

/* A line for env's debug log, when it takes one (env->note). */
void		km_env_note(const km_train_env *env, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* Ridge's m x m sums over the job's basis (one pass), into *out (env memory). */
km_status	km_approx_job_sums(approx_job *job, km_accum **out, km_error *err);

/*
 * The approximate roads' passes that travel to other processes (learn/pass.h
 * kind, learner.h km_pass_rebuild): their numbers, stored in the aggregate
 * host's descriptors (never renumber).
 */
typedef enum km_approx_pass_kind
{
	KM_PASS_KIND_BASIS = 1,		/* the basis pass: reservoir and scaler */
	KM_PASS_KIND_SUMS = 2,		/* ridge's m x m sums over a basis */
	KM_PASS_KIND_PRIMAL_NEWTON = 3,	/* a regression method's Newton sums */
	KM_PASS_KIND_PRIMAL_TALLY = 4,	/* its training error at the final point */
	KM_PASS_KIND_HELD_OUT = 5,	/* a fold's squared errors at a fit */
	KM_PASS_KIND_STANDARDIZE = 6,	/* every row standardized (its check) */
	KM_PASS_KIND_CLASS_NEWTON = 7,	/* the classifiers' Newton sums, every output */
	KM_PASS_KIND_CLASS_METRICS = 8, /* their training accuracy and log-loss */
	KM_PASS_KIND_CLASS_HOLDOUT = 9, /* a fold's loss at a fit */
	KM_PASS_KIND_CLASS_FOLDS = 10,	/* the host's folds counted per class */
	KM_PASS_KIND_CG_RHS = 11,	/* "solver": "cg": Z^T y, Z^T 1, sum y, sum y^2 */
	KM_PASS_KIND_CG_HV = 12,	/* "solver": "cg": Z^T (Z v) at the point v */
	KM_PASS_KIND_ROWS_SUMS = 14,	/* a task without a target: z z', z of every row (13: drift) */
	KM_PASS_KIND_PRIMAL_HV = 15,	/* Newton-CG: a regression method's Hessian times v */
	KM_PASS_KIND_CLASS_HV = 16,	/* Newton-CG: a binary classifier's Hessian times v */
	KM_PASS_KIND_CG_SAMPLE = 18 /* "solver": "cg": its preconditioner's row sample (17: score) */
} km_approx_pass_kind;

/*
 * The job image of km_approx_point_put_job and, after setup (the factor),
 * its eps: read back, the job set up with the same factor (recomputed: the
 * same eps or the point is refused).
 */
void		km_approx_point_put_setup(km_point_writer *w, const approx_job *job);
km_status	km_approx_point_get_setup(km_point_reader *r, approx_job *job, km_rows *rows,
									  const km_train_env *env, km_error *err);

/*
 * The job's shape and basis as a point (w->p NULL: counted only): the rows
 * and features, the basis's bytes (resealed: refine passes move its
 * centres in place).  km_approx_point_get_job reads them back into a new
 * job (rows: its shape's memory) over env, the basis decoded as untrusted
 * input and rff's features drawn.
 */
void		km_approx_point_put_job(km_point_writer *w, const approx_job *job);
km_status	km_approx_point_get_job(km_point_reader *r, approx_job *job, km_rows *rows,
									const km_train_env *env, km_error *err);

/*
 * The pass of kind whose point (after its kind) r holds, rebuilt over env
 * (its job and buffers from env->alloc) as the road asks it: the same add,
 * init, combine, state size and chunk.  KM_ERR_FORMAT for bytes that are
 * not such a point.
 */
km_status	km_approx_pass_rebuild(uint16_t kind, km_point_reader *r,
								   const km_train_env *env, km_pass **out,
								   km_error *err);

/*
 * "solver": "cg" (pipeline_approx_cg.c, learn/cg.h): nystrom ridge's model
 * by its passes after the basis; and its passes (KM_PASS_KIND_CG_*)
 * rebuilt from their points, as km_approx_pass_rebuild.
 */
km_status	km_approx_job_cg(approx_job *job, struct km_model *m, km_error *err);
km_status	km_cg_pass_rebuild(uint16_t kind, km_point_reader *r,
							   const km_train_env *env, km_pass **out, km_error *err);

#endif							/* KM_PIPELINE_APPROX_JOB_H */
