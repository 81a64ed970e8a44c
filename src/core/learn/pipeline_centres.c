/*
 * pipeline_centres.c - the refine steps of a basis's list (repr.h
 * km_basis_step, centres.h): Lloyd's k-means iterations or a leverage
 * sample, asked of the host after the sample pass (pipeline_approx_job.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "centres.h"
#include "pipeline_approx_job.h"
#include "repr.h"
#include "solve.h"

/* What a refine pass's add reads. */
typedef struct refine_at
{
	approx_job *job;
	double	   *C;				/* m x d: the centres being refined */
	double	   *U;				/* leverage: K_SS's eigenvectors (m x m) */
	double	   *s;				/* leverage: K_SS's eigenvalues (m) */
	double	   *Z;				/* leverage: PRIMAL_BLOCK x m, k_i */
	double	   *P;				/* leverage: PRIMAL_BLOCK x m, (U' k_i)^2 */
	double	   *fwork;
	double	   *kii;			/* leverage: PRIMAL_BLOCK */
	double	   *W;				/* leverage: m x the grid, 1 / (s_j + mu_g) */
	double	   *Q;				/* leverage: PRIMAL_BLOCK x the grid */
	double		lambda;			/* leverage: the grid's first (the model's smallest) */
	double		lambda_s;		/* leverage: the sampling's */
} refine_at;

/* doubles of memory from the job's env */
static double *
alloc_doubles(approx_job *job, size_t doubles)
{
	return job->env->alloc(job->env->ctx, doubles * sizeof(double));
}

/* Flops of one uninterruptible chunk of a refine pass (about 0.1 s on one core). */
#define REFINE_CHUNK_FLOPS 1e9

/*
 * job->pass reset for a refine pass (as km_approx_job_pass, a layer over
 * this file), its chunk of rows halved from PRIMAL_BLOCK until one costs at
 * most REFINE_CHUNK_FLOPS at flops_per_row (the adds check interrupts
 * before each chunk).
 */
static km_pass *
refine_pass(approx_job *job, refine_at *at, size_t state_bytes, km_pass_add_fn add,
			double flops_per_row)
{
	km_pass    *p = &job->pass;
	size_t		chunk = PRIMAL_BLOCK;

	while (chunk > 1 && (double) chunk * flops_per_row > REFINE_CHUNK_FLOPS)
		chunk /= 2;
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = chunk;
	p->state_bytes = state_bytes;
	p->ordered = false;
	p->whole = false;
	p->at = at;
	p->init = NULL;
	p->add = add;
	p->end = NULL;
	p->combine = NULL;
	p->interrupt = job->env->interrupt;
	/* its point does not travel (yet): it runs where the learner is */
	p->kind = 0;
	p->point_bytes = NULL;
	p->point_write = NULL;
	return p;
}

static km_status
kmeans_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		   km_error *err)
{
	refine_at  *at = pass->at;
	approx_job *job = at->job;

	km_check_interrupts(pass->interrupt);
	if (km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err) != KM_OK)
		return err->status;
	km_kmeans_add(at->C, job->b.m, job->b.d, job->Xs, rows->n, state);
	return KM_OK;
}

/* Lloyd's iterations from the uniform centres, one pass each. */
static km_status
refine_kmeans(approx_job *job, refine_at *at, km_error *err)
{
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	uint32_t	d = job->b.d;
	size_t		doubles = km_kmeans_state_doubles(m, d);
	double	   *state = alloc_doubles(job, doubles);
	double		prev = -1.0;

	for (int it = 1; it <= KM_KMEANS_MAX_ITER; it++)
	{
		km_pass    *pass = refine_pass(job, at, doubles * sizeof(double), kmeans_add,
									   3.0 * (double) m * d);
		size_t		rows;
		double		inertia;

		snprintf(pass->what, sizeof(pass->what), "kmeans %d: m = %u, %zu rows",
				 it, m, job->rows->n);
		memset(state, 0, doubles * sizeof(double));
		if (km_pass_run(job->host, pass, state, &rows, err) != KM_OK)
			return err->status;
		inertia = km_kmeans_update(at->C, m, d, state);
		if (km_kmeans_converged(prev, inertia))
			break;
		prev = inertia;
	}
	env->release(env->ctx, state);
	return KM_OK;
}

/* A chunk's k_i against the sketch, squared in the sketch's eigenbasis. */
static km_status
leverage_project(refine_at *at, const km_block *rows, size_t first, km_error *err)
{
	approx_job *job = at->job;
	km_basis   *b = &job->b;

	if (km_basis_standardize(b, rows->X, first, rows->n, job->rows->d, job->Xs, err) != KM_OK ||
		km_approx_features(b, job->Xs, rows->n, at->Z, at->fwork, err) != KM_OK)
		return err->status;
	km_leverage_project(&b->kernel, job->Xs, rows->n, b->d, at->U, b->m, at->Z, at->P,
						at->kii);
	return KM_OK;
}

/* The first pass: the sums of the scores and of their squares over the grid. */
static km_status
leverage_grid_add(km_pass *pass, const km_block *rows, size_t first, void *state,
				  km_error *err)
{
	refine_at  *at = pass->at;
	approx_job *job = at->job;

	km_check_interrupts(pass->interrupt);
	if (leverage_project(at, rows, first, err) != KM_OK)
		return err->status;
	km_leverage_grid_add(at->P, at->kii, rows->n, at->W, job->b.m, at->lambda, at->Q, state);
	return KM_OK;
}

static km_status
leverage_grid_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	double	   *a = into;
	const double *b = from;

	for (int i = 0; i < 2 * KM_LEVERAGE_GRID; i++)
		a[i] += b[i];
	return KM_OK;
}

/* The second pass: the sample by the scores at lambda_s. */
static km_status
leverage_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			 km_error *err)
{
	refine_at  *at = pass->at;
	approx_job *job = at->job;
	km_basis   *b = &job->b;
	double		mu = at->lambda_s * (double) b->m / (double) job->rows->n;

	km_check_interrupts(pass->interrupt);
	if (leverage_project(at, rows, first, err) != KM_OK)
		return err->status;
	for (size_t i = 0; i < rows->n; i++)
		km_leverage_sample_offer(state, job->Xs + i * b->d,
								 km_leverage_score(at->P + i * b->m, at->s, b->m, at->kii[i],
												   at->lambda_s, mu),
								 rows->hash[i]);
	return KM_OK;
}

static km_status
leverage_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	return km_leverage_sample_combine(into, from, err);
}

/*
 * The ridge leverage's lambda: the smallest positive lambda asked for
 * (1e-6 when none is positive), per row when the method's lambda is.
 */
static double
leverage_lambda(const km_options *o, size_t n)
{
	double		best = 0.0;

	for (int i = 0; i < o->lambdas.n; i++)
	{
		double		v = o->lambdas.v[i] / (o->lambdas.per_row ? (double) n : 1.0);

		if (v > 0.0 && (best == 0.0 || v < best))
			best = v;
	}
	if (best == 0.0 && o->lambdas.n == 0 && o->fit.lambda > 0.0)
		best = o->fit.lambda;
	return best > 0.0 ? best : 1e-6;
}

/*
 * A leverage sample of m rows from the uniform sketch's scores (centres.h):
 * one pass for the grid's sums, one for the sample.
 */
static km_status
refine_leverage(approx_job *job, refine_at *at, km_error *err)
{
	const km_train_env *env = job->env;
	km_basis   *b = &job->b;
	uint32_t	m = b->m;
	size_t		n = job->rows->n;
	double		sums[2 * KM_LEVERAGE_GRID];
	size_t		sbytes;
	void	   *st;
	km_pass    *pass;
	size_t		rows;
	uint32_t   *order;
	uint32_t	kept;
	uint32_t	uniform;
	double	   *K;
	double	   *ework;
	int		   *iwork;
	double		flops = 2.0 * (double) m * m + 2.0 * (double) m * b->d;

	at->lambda = leverage_lambda(&job->opts, n);
	K = alloc_doubles(job, (size_t) m * m);
	ework = alloc_doubles(job, km_approx_features_doubles(b, m) + 1);
	if (km_approx_features(b, b->centres, m, K, ework, err) != KM_OK)
		return err->status;
	env->release(env->ctx, ework);
	at->U = alloc_doubles(job, (size_t) m * m);
	at->s = alloc_doubles(job, m);
	ework = alloc_doubles(job, km_leverage_eigen_doubles(m));
	iwork = env->alloc(env->ctx, sizeof(int) * km_leverage_eigen_ints(m));
	if (km_leverage_eigen(K, m, at->lambda * (double) m / (double) n, at->s, at->U,
						  ework, iwork, env->interrupt, err) != KM_OK)
		return err->status;
	env->release(env->ctx, iwork);
	env->release(env->ctx, ework);
	env->release(env->ctx, K);
	at->Z = alloc_doubles(job, (size_t) PRIMAL_BLOCK * m);
	at->P = alloc_doubles(job, (size_t) PRIMAL_BLOCK * m);
	at->fwork = alloc_doubles(job, km_approx_features_doubles(b, PRIMAL_BLOCK) + 1);
	at->kii = alloc_doubles(job, PRIMAL_BLOCK);
	at->W = alloc_doubles(job, (size_t) m * KM_LEVERAGE_GRID);
	at->Q = alloc_doubles(job, (size_t) PRIMAL_BLOCK * KM_LEVERAGE_GRID);
	km_leverage_grid_weights(at->s, m, at->lambda, n, at->W);

	pass = refine_pass(job, at, sizeof(sums), leverage_grid_add,
					   flops + 2.0 * KM_LEVERAGE_GRID * (double) m);
	snprintf(pass->what, sizeof(pass->what), "leverage scale: m = %u, %zu rows", m, n);
	pass->combine = leverage_grid_combine;
	memset(sums, 0, sizeof(sums));
	if (km_pass_run(job->host, pass, sums, &rows, err) != KM_OK)
		return err->status;
	km_leverage_choose(sums, n, m, at->lambda, &at->lambda_s, &uniform);
	env->release(env->ctx, at->W);
	env->release(env->ctx, at->Q);

	sbytes = km_leverage_sample_bytes(m, uniform, b->d);
	st = env->alloc(env->ctx, sbytes);
	km_leverage_sample_init(st, m, uniform, b->d);
	pass = refine_pass(job, at, sbytes, leverage_add, flops + 2.0 * (double) m);
	snprintf(pass->what, sizeof(pass->what), "leverage sample: m = %u (%u uniform), %zu rows",
			 m, (unsigned) uniform, n);
	pass->combine = leverage_combine;
	if (km_pass_run(job->host, pass, st, &rows, err) != KM_OK)
		return err->status;
	order = env->alloc(env->ctx, sizeof(uint32_t) * ((size_t) m + 1));
	kept = km_leverage_sample_rows(st, at->C, order);
	if (kept != m)
		return km_fail(err, KM_ERR_INVALID, "leverage sample is short",
					   "The sample kept %u of %u rows.", (unsigned) kept, (unsigned) m);
	env->release(env->ctx, order);
	env->release(env->ctx, st);
	env->release(env->ctx, at->U);
	env->release(env->ctx, at->s);
	env->release(env->ctx, at->Z);
	env->release(env->ctx, at->P);
	env->release(env->ctx, at->fwork);
	env->release(env->ctx, at->kii);
	return KM_OK;
}

double
km_approx_centres_bytes(const km_options *o, const km_basis *shape)
{
	uint32_t	m = shape->m;
	uint32_t	d = shape->d;
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(km_repr_lookup(o->approximation), o->centres, steps);
	double		most = 0.0;

	for (int i = 0; i < n; i++)
	{
		double		bytes = 0.0;

		if (steps[i] == KM_BASIS_KMEANS)
			bytes = 8.0 * (double) km_kmeans_state_doubles(m, d);
		else if (steps[i] == KM_BASIS_LEVERAGE)
			/*
			 * K_SS and its eigenvectors, the eigensolver's work (or the
			 * features' of K_SS), then a chunk's k_i, their squares, work
			 * and k(x, x), the sample (its uniform share at most m)
			 */
			bytes = 8.0 * (2.0 * (double) m * m + m +
						   fmax((double) km_leverage_eigen_doubles(m) +
								(double) km_leverage_eigen_ints(m) / 2.0,
								(double) km_approx_features_doubles(shape, m))) +
				8.0 * (PRIMAL_BLOCK * (2.0 * m + 1.0 + KM_LEVERAGE_GRID) +
					   (double) m * KM_LEVERAGE_GRID +
					   (double) km_approx_features_doubles(shape, PRIMAL_BLOCK)) +
				(double) km_leverage_sample_bytes(m, m, d);
		if (bytes > most)
			most = bytes;
	}
	return most;
}

km_status
km_approx_job_refine(approx_job *job, km_basis_step step, km_error *err)
{
	km_basis   *b = &job->b;
	refine_at	at;
	km_status	st;

	memset(&at, 0, sizeof(at));
	at.job = job;
	/* the basis's bytes are the job's own: refine them in place */
	at.C = (double *) b->centres;
	if (step == KM_BASIS_KMEANS)
	{
		st = refine_kmeans(job, &at, err);
		b->centres_kind = KM_CENTRES_KMEANS;
	}
	else
	{
		st = refine_leverage(job, &at, err);
		b->centres_kind = KM_CENTRES_LEVERAGE;
	}
	return st;
}
