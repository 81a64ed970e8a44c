/*
 * pipeline.h - km_train, the road from rows to a model (core, no
 * PostgreSQL headers; issue 23 point 2).
 *
 * Exact regression today (ridge, lms, svr): standardize the rows, the
 * default rbf gamma, centre the target, select gamma and lambda if asked,
 * fit, assemble the km_model.  Like every core function it allocates
 * nothing itself: the glue supplies memory, workspaces and interrupts
 * through a km_train_env, and checks memory before it calls (from the
 * sizes of km_train_plan_make), so that its errors come first and keep
 * their text.  Encoding the model (model.h) is the caller's.
 */
#ifndef KM_PIPELINE_H
#define KM_PIPELINE_H

#include "grid.h"
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
} km_rows;

/* What a training will take, known before any row is touched. */
typedef struct km_train_plan
{
	km_options	opts;			/* resolved for n and d */
	int			ncand;			/* candidates of model selection, or 0 */
	size_t		nsel;			/* doubles of selection workspace (0: overflow) */
	size_t		nwork;			/* doubles of km_fit's workspace (0: overflow) */
	uint32_t	q;				/* a classifier's outputs */
} km_train_plan;

/* k: a classifier's classes; 0: regression. */
void		km_train_plan_make(const km_options *o, size_t n, int d, uint32_t k,
							   km_train_plan *plan);

/*
 * ymean := the mean of y (0 without an intercept; a sum that overflows is
 * taken over y[i] / n).  Returns the first row whose y - ymean is not
 * finite, or n: the glue checks it before km_train to raise its error.
 */
size_t		km_train_centre(const double *y, size_t n, bool fit_intercept,
							double *ymean);

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
} km_train_env;

/*
 * Train on rows with plan (km_train_plan_make for rows->n and rows->d) into
 * m, whose arrays live in memory from env->alloc.  m->writer_version is
 * the caller's.  A failure sets err.
 */
km_status	km_train(const km_rows *rows, const km_train_plan *plan,
					 const km_train_env *env, km_model *m, km_error *err);

/*
 * The rest of a classifier's model (exact, and the approximate path's
 * too): kernel, method and settings, classes (c; c->res the fit's result),
 * probabilities, training metrics, selection.  The caller has set the sizes
 * and the arrays (prob_A and prob_B are dropped without probabilities).
 */
void		km_train_fill_classes(km_model *m, const km_options *opts,
								  const km_class_rows *c, int ncand, int best,
								  km_candidate *cand);

#endif							/* KM_PIPELINE_H */
