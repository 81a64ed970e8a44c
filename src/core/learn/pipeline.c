/*
 * pipeline.c - km_train: rows to a km_model (pipeline.h).
 *
 * Moved from the kernel_train aggregate's final function (src/sql/train.c)
 * step for step, so that every model comes out bit for bit as before.
 */
#include <math.h>
#include <string.h>

#include "classify.h"
#include "classify_fit.h"
#include "method.h"
#include "pipeline.h"
#include "pipeline_approx.h"
#include "pipeline_primal.h"
#include "pipeline_approx_classify.h"
#include "pipeline_class_fill.h"
#include "pipeline_rows.h"
#include "repr.h"
#include "select.h"
#include "solve.h"
#include "svm.h"
#include "task.h"

/* The selection parameters of resolved options (they point into opts). */
static void
selection_params(const km_options *opts, km_select_params *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->base = opts->fit;
	sp->gammas = opts->gammas.v;
	sp->n_gammas = opts->gammas.n;
	sp->lambdas = opts->lambdas.v;
	sp->n_lambdas = opts->lambdas.n;
	sp->cv = opts->cv;
	sp->folds = opts->folds;
}

/* A classifier's sizes: its fit, its selection, its outputs. */
static void
plan_classes(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_options *o = &plan->opts;

	plan->nwork = km_fit_classes_doubles(&o->fit, n, k);
	plan->q = km_multiclass_outputs((km_multiclass)
									km_method_get(o->fit.method)->multiclass(k), k);
	if (km_options_selects(o))
	{
		plan->ncand = o->gammas.n * o->lambdas.n;
		plan->nsel = km_classify_select_doubles(&o->fit, n, k);
	}
}

/* A regression's sizes: its selection, its fit. */
static void
plan_regression(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	if (km_options_selects(&plan->opts))
	{
		km_select_params sp;

		selection_params(&plan->opts, &sp);
		plan->ncand = sp.n_gammas * sp.n_lambdas;
		plan->nsel = km_select_workspace_doubles(&sp, n, d);
	}
	plan->nwork = km_fit_workspace_doubles(plan->opts.fit.method, n);
}

/*
 * The default of an exact rbf model given neither gamma nor lambda (nor cv)
 * whose method scores a grid by closed-form leave-one-out (ridge):
 * leave-one-out over gamma 1 / (4d), 1 / d and kernlab's sigest (the last,
 * filled in by default_gamma on the standardized rows) and lambda 0.01, 0.1
 * and 1.  On 12 real regression sets (test/bench/defaults_datasets.py) no
 * single pair held against all of SVR(), KernelRidge() and kernlab's ksvm().
 */
static const double default_ridge_gammas[] = {0.25, 1.0, 1.0};	/* x 1 / d */
static const double default_ridge_lambdas[] = {0.01, 0.1, 1.0};

static bool
default_ridge_grid(const km_options *o, size_t n)
{
	return o->gammas.n == 0 && o->lambdas.n == 0 && o->cv == KM_CV_NONE &&
		(km_method_get(o->fit.method)->routes & KM_ROUTE(KM_CV_LOO)) &&
		o->fit.kernel.type == KM_KERNEL_RBF && n >= 2;
}

void
km_train_plan_make(const km_options *o, size_t n, int d, uint32_t k,
				   km_train_plan *plan)
{
	const km_task_train *road;
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	/* the representation's basis list: the exact expansion's is one gather */
	bool		gathers = km_repr_basis_steps(km_repr_lookup(o->approximation), o->centres,
											  steps) == 1 && steps[0] == KM_BASIS_GATHER;
	/* the default grid is the exact expansion's (LOO, its closed form) */
	bool		grid = gathers && default_ridge_grid(o, n);

	memset(plan, 0, sizeof(*plan));
	plan->opts = *o;
	if (grid)
	{
		plan->opts.gammas.n = (int) (sizeof(default_ridge_gammas) / sizeof(double));
		plan->opts.gammas.per_feature = true;
		memcpy(plan->opts.gammas.v, default_ridge_gammas, sizeof(default_ridge_gammas));
		plan->opts.lambdas.n = (int) (sizeof(default_ridge_lambdas) / sizeof(double));
		memcpy(plan->opts.lambdas.v, default_ridge_lambdas, sizeof(default_ridge_lambdas));
		plan->opts.cv = KM_CV_LOO;
	}
	km_options_resolve(&plan->opts, d);
	if (grid)
		plan->opts.gamma_default = true;
	km_options_resolve_rows(&plan->opts, n);	/* a lambda_per_row method's 1 / n */
	plan->task = km_task_lookup(km_method_task(plan->opts.fit.method));
	road = km_task_road(plan->task);
	if (gathers)
		road->plan(n, d, k, plan);
	else
		road->plan_approx(n, d, k, plan);
}

size_t
km_train_centre(const double *y, size_t n, bool fit_intercept, double *ymean)
{
	double		mean = 0.0;

	if (fit_intercept)
	{
		for (size_t i = 0; i < n; i++)
			mean += y[i];
		if (!isfinite(mean))
		{
			/* the sum overflowed: sum the targets divided by n */
			mean = 0.0;
			for (size_t i = 0; i < n; i++)
				mean += y[i] / (double) n;
		}
		else
			mean /= (double) n;
	}
	*ymean = mean;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(y[i] - mean))
			return i;
	return n;
}

/* One training run: the options, the prepared rows, the fit. */
typedef struct train_job
{
	size_t		n;
	int			d;
	km_options	opts;
	int			ncand;
	int			best;
	km_candidate *cand;
	double	   *Xs;				/* the rows, standardized if asked */
	double	   *mean;
	double	   *scale;
	double		ymean;			/* the intercept */
	double	   *yc;				/* the target minus ymean */
	double	   *alpha;
	km_fit_result res;
} train_job;

/* mean, scale, and job->Xs = Xs: X standardized into Xs (in place when Xs is X), or copied. */
static void
standardize_rows(const double *X, double *Xs, train_job *job, const km_train_env *env)
{
	size_t		n = job->n;
	int			d = job->d;

	job->mean = env->alloc(env->ctx, sizeof(double) * d);
	job->scale = env->alloc(env->ctx, sizeof(double) * d);
	job->Xs = Xs;
	if (job->opts.standardize)
		km_standardize(X, n, d, job->mean, job->scale, Xs);
	else
	{
		for (int j = 0; j < d; j++)
		{
			job->mean[j] = 0.0;
			job->scale[j] = 1.0;
		}
		if (Xs != X)
			memcpy(Xs, X, n * d * sizeof(double));
	}
}

/*
 * The default gamma of an exact rbf regression (gamma not given): kernlab's
 * sigest over the standardized rows, in rows->gamma_order, when the task's
 * rule says so (task.h km_task_gamma_sigest: classifiers keep 1 / d).
 */
static void
default_gamma(const km_rows *rows, train_job *job, const km_train_env *env)
{
	km_options *o = &job->opts;
	double	   *work;
	double		gamma;

	/* an exact road's (the plan's basis list gathers: km_learn, km_train) */
	if (!km_task_gamma_sigest(km_task_lookup(km_method_task(o->fit.method)),
							  o->gamma_default, o->fit.kernel.type, job->n))
		return;
	work = env->alloc(env->ctx, km_gamma_sigest_doubles(job->n, job->d) * sizeof(double));
	gamma = km_gamma_sigest(job->Xs, job->n, job->d, rows->gamma_order, work);
	env->release(env->ctx, work);
	o->gammas.v[o->gammas.n - 1] = gamma;	/* the single gamma or the grid's last */
	if (o->gammas.n == 1)
		o->fit.kernel.gamma = gamma;
}

/* ymean (0 without an intercept) and yc, the target minus it. */
static km_status
centre_target(const km_rows *rows, train_job *job, const km_train_env *env,
			  km_error *err)
{
	size_t		n = job->n;
	size_t		bad = km_train_centre(rows->y, n, job->opts.fit_intercept, &job->ymean);

	if (bad < n)
		return km_fail(err, KM_ERR_OVERFLOW,
					   "centred target is out of range for type double precision",
					   "The target of row %zu, %.17g, minus the mean target %.17g overflowed.",
					   bad + 1, rows->y[bad], job->ymean);
	job->yc = env->alloc(env->ctx, n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		job->yc[i] = rows->y[i] - job->ymean;
	return KM_OK;
}

/* Score every candidate; the winner's gamma and lambda become the fit's. */
static km_status
run_selection(const km_rows *rows, const km_train_plan *plan, train_job *job,
			  const km_train_env *env, km_error *err)
{
	km_select_params sp;
	double	   *selwork;
	km_candidate *cand;

	selection_params(&job->opts, &sp);
	selwork = env->workspace(env->ctx, KM_TRAIN_SELECT, plan->nsel, job->n, job->d);
	cand = env->alloc(env->ctx, sizeof(km_candidate) * job->ncand);
	if (km_select(&sp, job->Xs, job->n, job->d, job->yc, rows->fold,
				  cand, &job->best, selwork, err, env->interrupt) != KM_OK)
		return err->status;
	env->release_workspace(env->ctx, KM_TRAIN_SELECT, selwork);
	/* a score that overflowed did not score the candidate: NaN, as unsolvable */
	for (int i = 0; i < job->ncand; i++)
		if (!isfinite(cand[i].score) || !isfinite(cand[i].score_std))
		{
			cand[i].score = NAN;
			cand[i].score_std = 0.0;
		}
	job->cand = cand;
	job->opts.fit.kernel.gamma = cand[job->best].gamma;
	job->opts.fit.lambda = cand[job->best].lambda;
	return KM_OK;
}

/* The model's fields from the fit; the method fills its own (ops->store). */
static void
assemble_model(const km_rows *rows, const train_job *job, km_model *m)
{
	const km_options *opts = &job->opts;

	memset(m, 0, sizeof(*m));
	m->kernel = opts->fit.kernel;
	m->method = opts->fit.method;
	m->task = km_method_task(opts->fit.method);
	m->standardize = opts->standardize;
	m->fit_intercept = opts->fit_intercept;
	m->n_train = (uint32_t) job->n;
	m->n_features = (uint32_t) job->d;
	m->rows_seen = (uint64_t) job->n;
	m->rows_skipped = rows->rows_skipped;
	m->intercept = job->ymean;
	/* a fit's own bias (epsilon-SVR's b) on the centred target; ridge and lms: 0 */
	if (job->res.intercept != 0.0)
		m->intercept = job->ymean + job->res.intercept;
	m->train_rmse = job->res.train_rmse;
	/* km_fit succeeded, so the method is known: it fills its own fields */
	km_method_get(opts->fit.method)->store(&opts->fit, &job->res, m);
	m->mean = job->mean;
	m->scale = job->scale;
	m->alpha = job->alpha;
	m->X = job->Xs;
	m->n_candidates = (uint32_t) job->ncand;
	m->cv = job->ncand > 0 ? opts->cv : KM_CV_NONE;
	m->folds = job->ncand > 0 && opts->cv == KM_CV_KFOLD ? opts->folds : 0;
	m->best = (uint32_t) job->best;
	m->candidates = job->cand;
}

/* zeroed memory from the glue */
static void *
alloc_zero(const km_train_env *env, size_t bytes)
{
	void	   *p = env->alloc(env->ctx, bytes);

	memset(p, 0, bytes);
	return p;
}

/*
 * A classifier's k-fold selection over the gamma and lambda grids (folds
 * stratified by class over the rows in their order), scored by the
 * method's metric; the winner's gamma and lambda become the refit's.
 */
static km_status
select_classes(const km_class_rows *c, const km_train_plan *plan,
			   train_job *job, uint32_t *fold, const km_train_env *env,
			   km_error *err)
{
	km_options *o = &job->opts;
	double	   *work;

	km_stratified_folds(c->cls, job->n, c->k, (uint32_t) o->folds, fold,
						env->alloc(env->ctx, sizeof(size_t) * c->k));
	job->cand = alloc_zero(env, sizeof(km_candidate) * job->ncand);
	work = env->workspace(env->ctx, KM_TRAIN_SELECT, plan->nsel, job->n, job->d);
	if (km_classify_select(&o->fit, o->gammas.v, o->gammas.n, o->lambdas.v,
						   o->lambdas.n, job->Xs, job->n, job->d, c->cls, c->k,
						   c->class_w, fold, (uint32_t) o->folds, job->cand,
						   &job->best, work, err, env->interrupt) != KM_OK)
		return err->status;
	env->release_workspace(env->ctx, KM_TRAIN_SELECT, work);
	o->fit.kernel.gamma = job->cand[job->best].gamma;
	o->fit.lambda = job->cand[job->best].lambda;
	return KM_OK;
}

/*
 * The rows the model keeps (n_keep x d, copied): an svm only its support
 * vectors, alpha compacted to them in place; other methods every row.
 */
static double *
expansion_rows(const train_job *job, uint32_t q, size_t *n_keep,
			   const km_train_env *env)
{
	size_t		n = job->n;
	int			d = job->d;
	uint32_t   *keep = env->alloc(env->ctx, n * sizeof(uint32_t));
	double	   *Xk;

	if (km_method_get(job->opts.fit.method)->support_vectors)
		*n_keep = km_svm_compact(job->alpha, n, q, keep);
	else
	{
		*n_keep = n;
		for (size_t i = 0; i < n; i++)
			keep[i] = (uint32_t) i;
	}
	if (*n_keep == 0)
	{
		/* every coefficient 0: keep one row so that the expansion is not empty */
		*n_keep = 1;
		keep[0] = 0;
	}
	Xk = env->alloc(env->ctx, *n_keep * d * sizeof(double));
	for (size_t i = 0; i < *n_keep; i++)
		memcpy(Xk + i * d, job->Xs + (size_t) keep[i] * d, sizeof(double) * d);
	env->release(env->ctx, keep);
	return Xk;
}

/* Fit every output on all rows (Platt's folds by row), then the model. */
static km_status
fit_classes(const km_rows *rows, const km_train_plan *plan, train_job *job,
			uint32_t *fold, const km_train_env *env, km_model *m, km_error *err)
{
	const km_class_rows *c = rows->classes;
	size_t		n = job->n;
	uint32_t	q = plan->q;
	double	   *work;
	size_t		n_keep;

	for (size_t i = 0; i < n; i++)
		fold[i] = (uint32_t) (i % c->platt_folds);
	memset(m, 0, sizeof(*m));
	job->alpha = env->alloc(env->ctx, n * q * sizeof(double));
	m->intercepts = alloc_zero(env, sizeof(double) * q);
	m->prob_A = alloc_zero(env, sizeof(double) * q);
	m->prob_B = alloc_zero(env, sizeof(double) * q);
	work = env->workspace(env->ctx, KM_TRAIN_FIT_CLASSES, plan->nwork, n, job->d);
	if (km_fit_classes(&job->opts.fit, job->Xs, n, job->d, c->cls, c->k,
					   c->class_w, fold, c->platt_folds, job->alpha,
					   (double *) m->intercepts, (double *) m->prob_A,
					   (double *) m->prob_B, work, c->res, err,
					   env->interrupt) != KM_OK)
		return err->status;
	env->release_workspace(env->ctx, KM_TRAIN_FIT_CLASSES, work);
	m->X = expansion_rows(job, q, &n_keep, env);
	m->n_train = (uint32_t) n_keep;
	m->n_features = (uint32_t) job->d;
	m->n_outputs = q;
	m->rows_seen = (uint64_t) n;
	m->rows_skipped = rows->rows_skipped;
	m->mean = job->mean;
	m->scale = job->scale;
	m->alpha = job->alpha;
	km_train_fill_classes(m, &job->opts, c, job->ncand, job->best, job->cand);
	return KM_OK;
}

/* km_train's classification branch: the rows standardized in place. */
static km_status
train_classes(const km_rows *rows, const km_train_plan *plan,
			  const km_train_env *env, km_model *m, km_error *err)
{
	train_job	job;
	uint32_t   *fold;

	memset(&job, 0, sizeof(job));
	job.n = rows->n;
	job.d = rows->d;
	job.opts = plan->opts;
	job.ncand = plan->ncand;
	standardize_rows(rows->classes->X, rows->classes->X, &job, env);	/* in place */
	default_gamma(rows, &job, env);
	fold = env->alloc(env->ctx, job.n * sizeof(uint32_t));
	if (job.ncand > 0 && select_classes(rows->classes, plan, &job, fold, env, err) != KM_OK)
		return err->status;
	return fit_classes(rows, plan, &job, fold, env, m, err);
}

/* km_train's regression road: the rows standardized into a copy, the target centred. */
static km_status
train_regression(const km_rows *rows, const km_train_plan *plan,
				 const km_train_env *env, km_model *m, km_error *err)
{
	train_job	job;
	double	   *work;

	memset(&job, 0, sizeof(job));
	job.n = rows->n;
	job.d = rows->d;
	job.opts = plan->opts;
	job.ncand = plan->ncand;
	standardize_rows(rows->X, env->alloc(env->ctx, job.n * job.d * sizeof(double)), &job, env);
	default_gamma(rows, &job, env);
	if (centre_target(rows, &job, env, err) != KM_OK)
		return err->status;
	if (job.ncand > 0 && run_selection(rows, plan, &job, env, err) != KM_OK)
		return err->status;		/* else refit the winner on all rows */
	work = env->workspace(env->ctx, KM_TRAIN_FIT, plan->nwork, job.n, job.d);
	job.alpha = env->alloc(env->ctx, job.n * sizeof(double));
	if (km_fit(&job.opts.fit, job.Xs, job.n, job.d, job.yc, job.alpha,
			   work, &job.res, err, env->interrupt) != KM_OK)
		return err->status;
	assemble_model(rows, &job, m);
	return KM_OK;
}

/*
 * The roads, one per task with a target: a new task adds its road here and
 * names it under its row in roads below; its row points at nothing above it.
 */
static const km_task_train regression_road = {
	.plan = plan_regression, .plan_approx = km_train_plan_approx,
	.train = train_regression, .train_approx = km_train_approx,
};

static const km_task_train classification_road = {
	.plan = plan_classes, .plan_approx = km_train_plan_approx_classes,
	.train = train_classes, .train_approx = km_train_approx_classes,
};

/*
 * Every task without a target (task.h km_task_ops.target false: transform,
 * kernel PCA; novelty) takes one road that asks its method's fit_rows and
 * fit_sums (pipeline_rows.h): a new such task names this road under its
 * row in roads below.
 */
static const km_task_train rows_road = {
	.plan = km_train_plan_rows, .plan_approx = km_train_plan_rows_approx,
	.train = km_train_rows, .train_approx = km_train_rows_approx,
};

/* Each task's road, found by the id of the task's row (task.h), never by a name. */
static const struct
{
	const km_task_ops *task;
	const km_task_train *road;
}			roads[] = {
	{&km_task_regression, &regression_road},
	{&km_task_classification, &classification_road},
	{&km_task_transform, &rows_road},
	{&km_task_novelty, &rows_road},
};

const km_task_train *
km_task_road(const km_task_ops *t)
{
	for (size_t i = 0; t != NULL && i < sizeof(roads) / sizeof(roads[0]); i++)
		if (roads[i].task->id == t->id)
			return roads[i].road;
	return NULL;
}

km_status
km_train(const km_rows *rows, const km_train_plan *plan,
		 const km_train_env *env, km_model *m, km_error *err)
{
	const km_task_train *road = km_task_road(plan->task);

	if (km_task_check_rows(road != NULL ? plan->task : NULL, rows->classes != NULL,
						   err) != KM_OK)
		return err->status;
	if (plan->approximate)
		return km_fail(err, KM_ERR_INVALID, "approximate training runs over a host",
					   "The plan's representation has a basis: train it with km_learn (learn/learner.h).");
	return road->train(rows, plan, env, m, err);
}
