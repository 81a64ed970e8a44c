/*
 * pipeline_types.h - what km_train takes (core, no PostgreSQL headers):
 * the rows, the plan, the glue's callbacks.  Apart from pipeline.h so that
 * km_train (pipeline.c) and its approximate branch (pipeline_approx.c)
 * share them without importing each other.
 */
#ifndef KM_PIPELINE_TYPES_H
#define KM_PIPELINE_TYPES_H

#include "approx.h"
#include "grid.h"
#include "learn/pass.h"
#include "method.h"
#include "model_types.h"
#include "options_core.h"

/*
 * A classifier's rows (km_train's classification branch, for now a task
 * branch inside km_train): classes, in the rows' order (the caller's hash
 * order), and the caller's copy of the rows, which km_train standardizes
 * in place.
 */
typedef struct km_class_rows
{
	double	   *X;				/* n x d, the same rows as km_rows.X, writable */
	uint32_t	k;
	const uint32_t *cls;		/* n class ids */
	const char *labels;			/* k NUL-terminated, in class order */
	uint32_t	labels_bytes;
	const uint64_t *counts;		/* k */
	km_label_type label_type;
	const double *class_w;		/* k (classify.h km_class_weights_resolve) */
	uint32_t	platt_folds;	/* internal folds of Platt scaling */
	km_class_fit_result *res;	/* out: the fit's result (convergence) */
	/*
	 * An approximate classifier's features, n x m doubles (m <= the
	 * components the plan counts: km_train_plan.cache_bytes), filled on the
	 * first pass and read by the others; NULL: computed on every pass.
	 */
	double	   *feature_cache;
} km_class_rows;

/* The rows to train on: plain arrays owned by the caller. */
typedef struct km_rows
{
	const km_class_rows *classes;	/* a classifier's; NULL: regression */
	size_t		n;
	int			d;
	const double *X;			/* n x d features, row-major, as given */
	const double *y;			/* n targets */
	const int  *fold;			/* k-fold selection: each row's fold; else NULL */
	const int64_t *gamma_order; /* default rbf gamma: rows ranked by hash
								 * (select.h km_gamma_sigest); NULL: X's order */
	uint64_t	rows_skipped;	/* rows the caller skipped (NULL values) */
	/*
	 * An approximate model's basis pass: each row's 64-bit hash, the key
	 * of its reservoir (basis.h km_basis_state_add), which only the glue
	 * computes (its hash of the row's bytes, -0.0 read as 0.0, seeded with
	 * the options' seed); NULL for the exact expansion.
	 */
	const uint64_t *hash;
} km_rows;

/* What a training will take, known before any row is touched. */
typedef struct km_train_plan
{
	km_options	opts;			/* resolved for n and d */
	const struct km_task_ops *task; /* the method's task, whose road km_train takes */
	int			ncand;			/* candidates of model selection, or 0 */
	size_t		nsel;			/* doubles of selection workspace (0: overflow) */
	size_t		nwork;			/* doubles of km_fit's workspace (0: overflow) */
	uint32_t	q;				/* a classifier's outputs */
	/* approximate models (pipeline_approx.c, pipeline_approx_classify.c) */
	bool		approximate;	/* the options' representation has a basis */
	size_t		basis_bytes;	/* the basis pass's state; 0: a size overflows */
	double		approx_bytes;	/* bytes the training holds besides the rows */
	/*
	 * Of approx_bytes, what is per row of a host that holds them (their
	 * hashes, a classifier's hash-ordered copy, k-fold's folds and
	 * ranking): a host that streams the rows (the cursor host) holds none.
	 */
	double		rows_bytes;
	double		cache_bytes;	/* a classifier's feature cache, if the glue keeps one */
} km_train_plan;

/* The workspaces km_train asks the glue for. */
typedef enum km_train_buffer
{
	KM_TRAIN_SELECT,			/* km_select's workspace, released after it */
	KM_TRAIN_FIT,				/* km_fit's workspace (fit.h km_fit_first_row) */
	KM_TRAIN_FIT_CLASSES		/* km_fit_classes' (classify_fit.h), released after it */
} km_train_buffer;

typedef struct km_train_env
{
	void	   *ctx;			/* passed back to every callback */
	/* bytes of memory that live as long as the model (never NULL) */
	void	   *(*alloc) (void *ctx, size_t bytes);
	void		(*release) (void *ctx, void *p);
	/* a workspace of doubles for n rows of d features (never NULL) */
	double	   *(*workspace) (void *ctx, km_train_buffer kind, size_t doubles,
							  size_t n, int d);
	void		(*release_workspace) (void *ctx, km_train_buffer kind, double *p);
	km_interrupt_fn interrupt;
	/* a line for the glue's debug log (may be NULL: none kept) */
	void		(*note) (void *ctx, const char *line);
} km_train_env;

/*
 * km_train's road for one task, under the task's id in pipeline.c's table
 * of roads (the task table's row, a layer down, points at nothing above it;
 * every task without a target takes one road, pipeline_rows.h): its sizes (opts resolved; k classes, 0 without) and its training from
 * rows in memory, exact or approximate (a representation with a basis).
 * Regression centres the target; classification weighs the classes.
 */
typedef struct km_task_train
{
	void		(*plan) (size_t n, int d, uint32_t k, km_train_plan *plan);
	void		(*plan_approx) (size_t n, int d, uint32_t k, km_train_plan *plan);
	km_status	(*train) (const km_rows *rows, const km_train_plan *plan,
						  const km_train_env *env, km_model *m, km_error *err);
	/* approximate: the learner's (learn/learner.h), rows (the shape) on a host */
	km_status	(*train_approx) (const km_rows *rows, const km_host *host,
								 const km_train_plan *plan,
								 const km_train_env *env, km_model *m,
								 km_error *err);
} km_task_train;

#endif							/* KM_PIPELINE_TYPES_H */
