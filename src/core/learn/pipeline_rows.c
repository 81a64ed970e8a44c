/*
 * pipeline_rows.c - the road of a task without a target (pipeline_rows.h).
 */
#include <stdio.h>
#include <string.h>

#include <cblas.h>

#include "basis.h"
#include "kernels.h"
#include "model.h"
#include "pipeline_approx_job.h"
#include "pipeline_rows.h"
#include "primal_pass.h"
#include "repr.h"
#include "solve.h"
#include "svm.h"

/* n x n + w doubles, or 0 when the count overflows */
static size_t
gram_plus(size_t n, size_t w)
{
	if (n != 0 && n > (SIZE_MAX / sizeof(double)) / n)
		return 0;
	if (w == 0 || n * n > SIZE_MAX / sizeof(double) - w)
		return 0;
	return n * n + w;
}

void
km_train_plan_rows(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_method_ops *ops = km_method_get(plan->opts.fit.method);

	(void) d;
	(void) k;
	if (ops != NULL && ops->rows_workspace_doubles != NULL && ops->rows_gram_cols)
		plan->nwork = ops->rows_workspace_doubles(n);	/* its own column cache */
	else
		plan->nwork = ops != NULL && ops->rows_workspace_doubles != NULL ?
			gram_plus(n, ops->rows_workspace_doubles(n)) : 0;
}

void
km_train_plan_rows_approx(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_options *o = &plan->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	uint32_t	m = km_approx_job_components(o, n);
	size_t		sbytes = km_basis_state_bytes(o->approximation, (uint32_t) d,
											  (uint32_t) o->components);
	km_basis	shape = {.kind = o->approximation, .d = (uint32_t) d, .m = m};
	size_t		feat = km_approx_features_doubles(&shape, PRIMAL_BLOCK);
	double		mm = (double) m;

	(void) k;
	plan->approximate = true;
	if (ops == NULL || (ops->fit_sums == NULL && ops->fit_features == NULL) || feat == 0)
		sbytes = 0;
	plan->basis_bytes = sbytes;
	/* the factor, the sums, the fit's work and outputs, a block's features */
	plan->approx_bytes = (double) sbytes + km_approx_centres_bytes(o, &shape) +
		8.0 * (3.0 * mm * mm + 8.0 * mm + (double) feat +
			   PRIMAL_BLOCK * (mm + (double) d)) + 8.0 * (double) n;
	plan->rows_bytes = 8.0 * (double) n;
	if (ops != NULL && ops->fit_sums == NULL && ops->fit_features != NULL)
	{
		/* every row's features and the fit's work, held by any host */
		size_t		fw = ops->features_workspace_doubles(n, m);

		plan->approx_bytes += 8.0 * ((double) n * mm + (double) fw);
		if (fw == 0)
			plan->basis_bytes = 0;
	}
}

/* zeroed doubles from the env */
static double *
zeros(const km_train_env *env, size_t count)
{
	double	   *p = env->alloc(env->ctx, count * sizeof(double) + 1);

	memset(p, 0, count * sizeof(double));
	return p;
}

/* The outputs' arrays of f for rows (exact) or features (approximate) */
static void
fit_arrays(const km_train_env *env, const km_method_ops *ops,
		   const km_fit_params *p, size_t rows, km_rows_fit *f)
{
	memset(f, 0, sizeof(*f));
	f->q = ops->outputs(p, rows);
	f->coef = zeros(env, rows * f->q);
	f->intercepts = zeros(env, f->q);
	f->values = zeros(env, f->q);
}

/* What every model of the road has, the method's fields by its store_rows. */
static void
finish_model(const km_method_ops *ops, const km_options *o, const km_rows_fit *f,
			 uint64_t rows_skipped, km_model *m)
{
	m->method = o->fit.method;
	m->task = ops->task;
	m->n_outputs = f->q;
	m->alpha = f->coef;
	m->intercepts = f->intercepts;
	m->intercept = f->intercepts[0];
	m->eigenvalues = f->values;
	m->eigen_total = f->total;
	m->fit_intercept = false;
	m->rows_skipped = rows_skipped;
	ops->store_rows(&o->fit, f, m);
}

/*
 * Only the rows with a nonzero coefficient in some output, in order: f's
 * coefficients and the rows Xs moved in place.  Returns their number.
 */
static size_t
keep_support(const km_train_env *env, km_rows_fit *f, size_t n, int d, double *Xs)
{
	uint32_t   *keep = env->alloc(env->ctx, n * sizeof(uint32_t));
	size_t		nk = km_svm_compact(f->coef, n, f->q, keep);

	for (size_t r = 0; r < nk; r++)
		memmove(Xs + r * d, Xs + (size_t) keep[r] * d, d * sizeof(double));
	env->release(env->ctx, keep);
	return nk;
}

static km_status
no_fit(const km_method_ops *ops, const char *form, km_error *err)
{
	return km_fail(err, KM_ERR_INVALID, "the method has no fit without a target",
				   "Method \"%s\" has no %s fit of rows without a target.",
				   ops ? ops->name : "unknown", form);
}

km_status
km_train_rows(const km_rows *rows, const km_train_plan *plan,
			  const km_train_env *env, km_model *m, km_error *err)
{
	const km_options *o = &plan->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	size_t		n = rows->n;
	size_t		kept = n;		/* the rows the model keeps */
	int			d = rows->d;
	double	   *mean,
			   *scale,
			   *Xs,
			   *norms = NULL,
			   *work;
	km_rows_fit f;

	if (ops == NULL || ops->fit_rows == NULL || ops->outputs == NULL)
		return no_fit(ops, "exact", err);
	if (n == 0 || plan->nwork == 0)
		return km_fail(err, KM_ERR_INVALID, "the fit needs rows",
					   "The fit has %zu rows and a workspace of %zu doubles.",
					   n, plan->nwork);
	mean = env->alloc(env->ctx, sizeof(double) * d);
	scale = env->alloc(env->ctx, sizeof(double) * d);
	Xs = env->alloc(env->ctx, n * d * sizeof(double));
	if (o->standardize)
		km_standardize(rows->X, n, d, mean, scale, Xs);
	else
	{
		for (int j = 0; j < d; j++)
		{
			mean[j] = 0.0;
			scale[j] = 1.0;
		}
		memcpy(Xs, rows->X, n * d * sizeof(double));
	}
	if (km_kernel_uses_norms(o->fit.kernel.type))
	{
		norms = env->alloc(env->ctx, n * sizeof(double));
		km_row_norms(&o->fit.kernel, Xs, n, d, norms);
	}
	fit_arrays(env, ops, &o->fit, n, &f);
	work = env->workspace(env->ctx, KM_TRAIN_FIT, plan->nwork, n, d);
	if (ops->fit_rows(&o->fit, Xs, n, d, norms, ops->rows_gram_cols ? NULL : work,
					  ops->rows_gram_cols ? work : work + n * n, &f, err,
					  env->interrupt) != KM_OK)
		return err->status;
	env->release_workspace(env->ctx, KM_TRAIN_FIT, work);
	if (ops->support_vectors)
		kept = keep_support(env, &f, n, d, Xs);
	memset(m, 0, sizeof(*m));
	m->kernel = o->fit.kernel;
	m->standardize = o->standardize;
	m->mean = mean;
	m->scale = scale;
	m->X = Xs;
	m->n_train = (uint32_t) kept;
	m->n_features = (uint32_t) d;
	m->rows_seen = (uint64_t) n;
	finish_model(ops, o, &f, rows->rows_skipped, m);
	return KM_OK;
}

/* S += Z'Z (lower triangle, m x m column-major), s += Z'1, for rows x m row-major Z. */
static void
sums_of(const double *Z, size_t rows, uint32_t m, double *S, double *s)
{
	if (rows == 0)
		return;
	cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) m, (int) rows,
				1.0, Z, (int) m, 1.0, S, (int) m);
	for (size_t r = 0; r < rows; r++)
		for (uint32_t j = 0; j < m; j++)
			s[j] += Z[r * m + j];
}

/* The sums of a chunk's features: S += Z'Z (lower), s += Z'1, count. */
static km_status
sums_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		 km_error *err)
{
	approx_job *job = pass->at;
	uint32_t	m = job->b.m;
	double	   *S = state;

	if (km_pass_rows_check(pass, rows, job->rows->d, false, 0, false, first, err) != KM_OK ||
		km_approx_job_features(job, rows->X, first, rows->n, job->Z, err) != KM_OK)
		return err->status;
	sums_of(job->Z, rows->n, m, S, S + (size_t) m * m);
	S[(size_t) m * m + m] += (double) rows->n;
	return KM_OK;
}

/* The sums pass's point: the job set up (its basis, nystrom's factor). */
static void
sums_point_put(const km_pass *pass, km_point_writer *w)
{
	km_approx_point_put_setup(w, pass->at);
}

static size_t
sums_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	sums_point_put(pass, &w);
	return w.len;
}

static void
sums_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	sums_point_put(pass, &w);
}

/* The sums of every row's features (z z', z, the count), the state zeroed. */
static km_pass *
sums_pass(approx_job *job)
{
	uint32_t	mm = job->b.m;
	km_pass    *pass = km_approx_job_pass(job, "statistics", PRIMAL_BLOCK,
										  sizeof(double) * ((size_t) mm * mm + mm + 1), sums_add);

	snprintf(pass->what, sizeof(pass->what), "statistics: m = %u, %zu rows", mm, job->rows->n);
	pass->kind = KM_PASS_KIND_ROWS_SUMS;
	pass->point_bytes = sums_point_bytes;
	pass->point_write = sums_point_write;
	return pass;
}

km_status
km_rows_pass_rebuild(uint16_t kind, km_point_reader *r, const km_train_env *env,
					 km_pass **out, km_error *err)
{
	approx_job *job;
	km_rows    *rows;

	*out = NULL;
	if (kind != KM_PASS_KIND_ROWS_SUMS)
		return KM_OK;
	job = env->alloc(env->ctx, sizeof(approx_job));
	rows = env->alloc(env->ctx, sizeof(km_rows));
	if (km_approx_point_get_setup(r, job, rows, env, err) != KM_OK)
		return err->status;
	if (r->bad || r->left != 0)
		return km_point_bad(err, "statistics");
	*out = sums_pass(job);
	return KM_OK;
}

/* A gather of every row's features: rows [first, first + n) of the state. */
static km_status
features_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			 km_error *err)
{
	approx_job *job = pass->at;
	uint32_t	m = job->b.m;
	double	   *Zall = state;

	if (first + rows->n > job->rows->n)
		return km_fail(err, KM_ERR_INVALID, "the rows changed during the fit",
					   "The features pass reads row %zu of the %zu rows counted before.",
					   first + rows->n, job->rows->n);
	return km_approx_job_features(job, rows->X, first, rows->n,
								  Zall + first * (size_t) m, err);
}

/*
 * The method's fit_features on every row's features, gathered by one
 * ordered pass (the one-class SVM's: its hinge needs each row, not sums).
 */
static km_status
gather_fit(approx_job *job, const km_method_ops *ops, size_t n,
		   km_rows_fit *f, uint64_t *count, km_error *err)
{
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	double	   *Zall = env->alloc(env->ctx, n * (size_t) m * sizeof(double) + 1);
	double	   *work = env->alloc(env->ctx, ops->features_workspace_doubles(n, m) *
									sizeof(double));
	km_pass    *pass;
	size_t		read;

	pass = km_approx_job_pass(job, "features", PRIMAL_BLOCK, sizeof(double) * n * m,
							  features_add);
	pass->ordered = true;
	pass->init = NULL;
	snprintf(pass->what, sizeof(pass->what), "features: m = %u, %zu rows", m, n);
	if (km_pass_run(job->host, pass, Zall, &read, err) != KM_OK)
		return err->status;
	if (read != n)
		return km_fail(err, KM_ERR_INVALID, "the rows changed during the fit",
					   "The features pass read %zu rows of the %zu counted before.", read, n);
	fit_arrays(env, ops, &job->opts.fit, m, f);
	if (ops->fit_features(&job->opts.fit, Zall, n, m, work, f, err,
						  env->interrupt) != KM_OK)
		return err->status;
	env->release(env->ctx, work);
	env->release(env->ctx, Zall);
	*count = n;
	return KM_OK;
}

km_status
km_train_rows_approx(const km_rows *rows, const km_host *host,
					 const km_train_plan *plan, const km_train_env *env,
					 km_model *m, km_error *err)
{
	const km_options *o = &plan->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	approx_job	job;
	km_pass    *pass;
	km_rows_fit f;
	km_approx_result ar;
	double	   *S,
			   *work;
	double		eps = 0.0;
	double		lambda = 0.0;
	size_t		read;
	uint32_t	mm;
	uint64_t	count = 0;

	if (ops == NULL || (ops->fit_sums == NULL && ops->fit_features == NULL) ||
		ops->outputs == NULL)
		return no_fit(ops, "approximate", err);
	if (rows->n == 0 || plan->basis_bytes == 0)
		return km_fail(err, KM_ERR_INVALID, "approximate training needs rows and their hashes",
					   "The training has %zu rows and a basis state of %zu bytes.",
					   rows->n, plan->basis_bytes);
	km_approx_job_init(&job, rows, host, env, o);
	if (km_approx_job_basis(&job, plan->basis_bytes, err) != KM_OK ||
		km_approx_job_setup(&job, &eps, err) != KM_OK)
		return err->status;
	mm = job.b.m;
	if (ops->fit_sums == NULL)
	{
		if (gather_fit(&job, ops, rows->n, &f, &count, err) != KM_OK)
			return err->status;
		goto fitted;
	}
	S = zeros(env, (size_t) mm * mm + mm + 1);
	pass = sums_pass(&job);
	if (km_pass_run(host, pass, S, &read, err) != KM_OK)
		return err->status;
	count = (uint64_t) S[(size_t) mm * mm + mm];
	fit_arrays(env, ops, &o->fit, mm, &f);
	work = zeros(env, ops->sums_workspace_doubles(mm));
	if (ops->fit_sums(&o->fit, S, S + (size_t) mm * mm, count, mm, work, &f,
					  err) != KM_OK)
		return err->status;
fitted:
	if (job.L != NULL)
		km_primal_unwhiten(job.L, mm, f.q, f.coef);	/* coefficients of k(c_j, x) */
	memset(&ar, 0, sizeof(ar));
	ar.eps = eps;
	ar.rank = mm;
	ar.rows = count;
	memset(m, 0, sizeof(*m));
	km_approx_model_fill(&job.b, (uint32_t) o->components, &lambda, 1, false,
						 f.coef, &ar, NULL, m);
	m->lambda = 0.0;
	finish_model(ops, o, &f, rows->rows_skipped, m);
	return KM_OK;
}
