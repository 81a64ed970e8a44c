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
	double	   *L;				/* leverage: chol(K_SS + mu I) */
	double	   *Z;				/* leverage: PRIMAL_BLOCK x m */
	double	   *fwork;
	double	   *score;			/* leverage: PRIMAL_BLOCK */
	double		lambda;
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

static km_status
leverage_add(km_pass *pass, const km_block *rows, size_t first, void *state,
			 km_error *err)
{
	refine_at  *at = pass->at;
	approx_job *job = at->job;
	km_basis   *b = &job->b;

	km_check_interrupts(pass->interrupt);
	if (km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err) != KM_OK ||
		km_approx_features(b, job->Xs, rows->n, at->Z, at->fwork, err) != KM_OK)
		return err->status;
	km_leverage_scores(&b->kernel, job->Xs, rows->n, b->d, at->L, b->m, at->lambda,
					   at->Z, at->score);
	for (size_t i = 0; i < rows->n; i++)
		km_leverage_sample_offer(state, job->Xs + i * b->d, at->score[i], rows->hash[i]);
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

/* A leverage sample of m rows (half uniform) from the uniform sketch's scores, one pass. */
static km_status
refine_leverage(approx_job *job, refine_at *at, km_error *err)
{
	const km_train_env *env = job->env;
	km_basis   *b = &job->b;
	uint32_t	m = b->m;
	size_t		n = job->rows->n;
	size_t		sbytes = km_leverage_sample_bytes(m, b->d);
	void	   *st;
	km_pass    *pass;
	size_t		rows;
	uint32_t   *order;
	uint32_t	kept;
	double	   *kwork;

	at->lambda = leverage_lambda(&job->opts, n);
	at->L = alloc_doubles(job, (size_t) m * m);
	kwork = alloc_doubles(job, km_approx_features_doubles(b, m) + 1);
	if (km_approx_features(b, b->centres, m, at->L, kwork, err) != KM_OK)
		return err->status;
	env->release(env->ctx, kwork);
	if (km_leverage_factor(at->L, m, at->lambda * (double) m / (double) n, err) != KM_OK)
		return err->status;
	at->Z = alloc_doubles(job, (size_t) PRIMAL_BLOCK * m);
	at->fwork = alloc_doubles(job, km_approx_features_doubles(b, PRIMAL_BLOCK) + 1);
	at->score = alloc_doubles(job, PRIMAL_BLOCK);
	st = env->alloc(env->ctx, sbytes);
	km_leverage_sample_init(st, m, b->d);

	pass = refine_pass(job, at, sbytes, leverage_add,
					   (double) m * m + 2.0 * (double) m * b->d);
	snprintf(pass->what, sizeof(pass->what), "leverage: m = %u, %zu rows", m, n);
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
	env->release(env->ctx, at->L);
	env->release(env->ctx, at->Z);
	env->release(env->ctx, at->fwork);
	env->release(env->ctx, at->score);
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
			/* K_SS's factor and its features' work, a chunk's k_i, work and scores, the sample */
			bytes = 8.0 * ((double) m * m + (double) km_approx_features_doubles(shape, m) +
						   PRIMAL_BLOCK * (m + 1.0) +
						   (double) km_approx_features_doubles(shape, PRIMAL_BLOCK) + m) +
				(double) km_leverage_sample_bytes(m, d);
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
