/*
 * pipeline_approx.c - the learner's approximate regression (pipeline.h,
 * learn/learner.h).
 *
 * Every walk over the rows is a pass asked of the host (learn/pass.h): a
 * basis pass (the centres of the smallest hashes, the scaler; rff's
 * features drawn from the seed), then the rows' features a chunk at a
 * time, standardized by the basis's scaler,
 * into what the method trains from: ridge's m x m sums (accum.h), solved in
 * closed form with GCV over the lambdas (km_learn_sums_model, which the
 * kernel_train(features, y, options, basis) aggregate asks too),
 * or a method's primal Newton passes (its primal_add .. primal_result
 * pieces, driven by the one Newton, learn/newton.h; nystrom's features
 * whitened by L^-1, so that the penalty is I), then the model.  The chunks
 * are 0.3.0's blocks, so that every model comes out bit for bit as before.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "basis.h"
#include "gp.h"
#include "learn/cg.h"
#include "learn/cg_sample.h"
#include "learn/newton.h"
#include "metrics.h"
#include "model.h"
#include "pipeline_approx.h"
#include "pipeline_approx_job.h"
#include "primal.h"
#include "primal_pass.h"
#include "progress.h"
#include "repr.h"
#include "select.h"
#include "solve.h"

/* Rows per chunk of ridge's sums (0.3.0's: the two-pass aggregate's states too). */
#define SUMS_BLOCK 256

/* The memory host's blocks hold whole chunks of every pass: no row is copied. */
KM_STATIC_ASSERT(KM_LEARN_SUMS_KIND == KM_PASS_KIND_SUMS, sums_kind_exported);
KM_STATIC_ASSERT(KM_LEARN_BASIS_KIND == KM_PASS_KIND_BASIS, basis_kind_exported);
KM_STATIC_ASSERT(KM_BLOCK_ROWS % PRIMAL_BLOCK == 0 && KM_BLOCK_ROWS % SUMS_BLOCK == 0,
				 host_blocks_hold_chunks);

/* Flops of one uninterruptible piece of features (about 0.1 s on one core). */
#define PIECE_FLOPS 1e9

uint32_t
km_approx_job_components(const km_options *o, size_t n)
{
	return km_repr_basis_components(km_repr_lookup(o->approximation),
									 (uint32_t) o->components, n);
}

void *
km_approx_job_alloc(approx_job *job, size_t doubles)
{
	return job->env->alloc(job->env->ctx, doubles * sizeof(double));
}

/*
 * Doubles of a primal fit's buffers (0.3.0's estimate of svr's in-memory
 * loop, kept so that the plan's memory is as before): the Newton's state,
 * add scratch, vectors and step work, the penalty, a chunk's decision values.
 */
static size_t
primal_fit_doubles(uint32_t m)
{
	size_t		mm = m;
	size_t		own = km_primal_state_doubles(m) + km_primal_add_scratch_doubles(m, PRIMAL_BLOCK)
		+ 2 * mm + km_primal_step_work_doubles(m) + mm * mm;

	return own == 0 || own > SIZE_MAX / 8 - PRIMAL_BLOCK ? 0 : own + PRIMAL_BLOCK;
}

/*
 * Doubles of a primal fit by Newton-CG (learn/newton.h, one output): its
 * O(m) buffers and a chunk's decision values; no m x m Hessian, step work
 * nor identity penalty (Falkon's R is one of the plan's 2 m^2 below).
 */
static size_t
newton_cg_fit_doubles(uint32_t m)
{
	size_t		bytes = km_newton_bytes(m, 1, PRIMAL_BLOCK, 0, true);

	return bytes == 0 ? 0 : bytes / sizeof(double) + 1 + PRIMAL_BLOCK;
}

/* Bytes of "solver": "cg"'s passes over basis shape for n rows (INFINITY: beyond a factor). */
static double
cg_bytes(const km_basis *shape, size_t n)
{
	uint32_t	m = shape->m;
	size_t		cgd = km_cg_doubles(m);
	size_t		fac = km_approx_factor_doubles(m);
	size_t		feat = km_approx_features_doubles(shape, PRIMAL_BLOCK);

	if (cgd == 0 || fac == 0 || feat == 0)
		return INFINITY;
	/* L, then the factor's work or (after it) R and the vectors; a chunk's features */
	return 8.0 * ((double) m * m + (double) (cgd > fac ? cgd : fac) + (double) feat +
				  PRIMAL_BLOCK * (double) m + (double) KM_CG_RHS_DOUBLES(m) +
				  (double) KM_XS_ROWS(n) * shape->d + 6.0 * m) +
		km_cg_sample_plan_bytes(m, shape->d, n);
}

void
km_train_plan_approx(size_t n, int d, uint32_t k, km_train_plan *plan)
{
	const km_options *o = &plan->opts;
	const km_method_ops *ops = km_method_get(o->fit.method);
	uint32_t	m = km_approx_job_components(o, n);
	size_t		sbytes = km_basis_state_bytes(o->approximation, (uint32_t) d,
											  (uint32_t) o->components);
	km_basis	shape = {.kind = o->approximation, .d = (uint32_t) d, .m = m};
	double		rest;

	plan->approximate = true;
	if (ops != NULL && ops->primal_add != NULL)
	{
		size_t		fit = o->fit.solver == KM_SOLVER_CG ? newton_cg_fit_doubles(m) :
			primal_fit_doubles(m);
		size_t		feat = km_approx_features_doubles(&shape, PRIMAL_BLOCK);

		if (fit == 0 || feat == 0)
			sbytes = 0;
		rest = 8.0 * ((double) fit + (double) feat + 2.0 * m * (double) m +
					  PRIMAL_BLOCK * (double) m + KM_XS_ROWS(n) * (double) d + m);
	}
	else if (o->fit.solver == KM_SOLVER_CG)
	{
		rest = cg_bytes(&shape, n);
		if (!isfinite(rest))
			sbytes = 0;
	}
	else
	{
		if (km_accum_bytes(KM_ACCUM_GRAM, m) == 0)
			sbytes = 0;
		rest = (double) km_accum_bytes(KM_ACCUM_GRAM, m) +
			8.0 * ((double) m * m + (double) km_approx_solve_doubles(m) + 2.0 * m) +
			8.0 * SUMS_BLOCK * ((double) m + 2.0 * d) +
			8.0 * (double) km_approx_features_doubles(&shape, SUMS_BLOCK);
	}
	if (ops != NULL && ops->primal_add != NULL && km_options_selects(o))
	{
		/* k-fold: the candidates, a block of training rows, the glue's folds and ranking */
		plan->ncand = o->gammas.n * o->lambdas.n;
		rest += 8.0 * ((double) PRIMAL_BLOCK * (m + 1.0) + m + o->folds +
					   4.0 * plan->ncand) + 12.0 * (double) n;
	}
	rest += km_approx_centres_bytes(o, &shape);
	plan->basis_bytes = sbytes;
	/* and the rows' hashes, which the glue computes for the basis pass */
	plan->approx_bytes = (double) sbytes + rest + 8.0 * (double) n;
	plan->rows_bytes = 8.0 * (double) n + (ops != NULL && ops->primal_add != NULL &&
										   km_options_selects(o) ? 12.0 * (double) n : 0.0);
}

void
km_approx_job_init(approx_job *job, const km_rows *rows, const km_host *host,
				   const km_train_env *env, const km_options *opts)
{
	memset(job, 0, sizeof(*job));
	job->rows = rows;
	job->host = host;
	job->env = env;
	job->opts = *opts;
	job->holdout = -1;
	job->Xs = km_approx_job_alloc(job, KM_XS_ROWS(rows->n) * rows->d);
	job->pass.alloc = env->alloc;
	job->pass.alloc_ctx = env->ctx;
}

km_pass *
km_approx_job_pass(approx_job *job, const char *what, size_t chunk,
				   size_t state_bytes, km_pass_add_fn add)
{
	km_pass    *p = &job->pass;

	snprintf(p->what, sizeof(p->what), "%s", what);
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = chunk;
	p->state_bytes = state_bytes;
	p->ordered = false;
	p->at = job;
	p->init = NULL;
	p->add = add;
	p->end = NULL;
	p->combine = NULL;
	p->interrupt = job->env->interrupt;
	p->kind = 0;
	p->point_bytes = NULL;
	p->point_write = NULL;
	return p;
}

void
km_env_note(const km_train_env *env, const char *fmt,...)
{
	char		line[512];
	va_list		ap;

	if (env->note == NULL)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	env->note(env->ctx, line);
}

/* A point's bytes: a pass's writer run once to count, once to write. */
typedef void (*point_fn) (const km_pass *pass, km_point_writer *w);

static size_t
point_count(const km_pass *pass, point_fn put)
{
	km_point_writer w = {NULL, 0};

	put(pass, &w);
	return w.len;
}

void
km_approx_point_put_job(km_point_writer *w, const approx_job *job)
{
	km_point_put_u64(w, (uint64_t) job->rows->n);
	km_point_put_u32(w, (uint32_t) job->rows->d);
	if (w->p != NULL)
		km_basis_reseal(job->basis_mem, job->basis_len);
	km_point_put_u64(w, (uint64_t) job->basis_len);
	km_point_put(w, job->basis_mem, job->basis_len);
}

/* The basis pass's point: the shape and what the state starts from. */
static void
basis_point(const km_pass *pass, km_point_writer *w)
{
	const approx_job *job = pass->at;
	const km_options *o = &job->opts;

	km_point_put_u64(w, (uint64_t) job->rows->n);
	km_point_put_u32(w, (uint32_t) job->rows->d);
	km_point_put_u32(w, (uint32_t) o->approximation);
	km_point_put_u32(w, (uint32_t) o->fit.kernel.type);
	km_point_put_u32(w, (uint32_t) o->fit.kernel.degree);
	km_point_put_f64(w, o->fit.kernel.gamma);
	km_point_put_f64(w, o->fit.kernel.coef0);
	km_point_put_u32(w, o->standardize ? 1 : 0);
	km_point_put_u32(w, (uint32_t) o->components);
	km_point_put_u64(w, (uint64_t) o->seed);
}

static size_t
basis_point_bytes(const km_pass *pass)
{
	return point_count(pass, basis_point);
}

static void
basis_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	basis_point(pass, &w);
}

/* The basis pass: every row into the reservoir by its hash, the scaler's sums. */
static km_status
basis_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	approx_job *job = pass->at;
	uint32_t	d = (uint32_t) rows->d;
	const km_basis_state *st = state;

	/* the block and the state as the pass aggregate hands them: untrusted */
	if (km_pass_rows_check(pass, rows, job->rows->d, false, 0, true, first, err) != KM_OK ||
		km_basis_state_check_header(st, pass->state_bytes, err) != KM_OK)
		return err->status;
	if (st->d != d || st->rows > INT64_MAX - (int64_t) rows->n)
		return km_fail(err, KM_ERR_INVALID, "basis state does not match its pass",
					   "The state has %u features and %lld rows; pass \"%s\" adds %zu rows of %u.",
					   (unsigned) st->d, (long long) st->rows, pass->what, rows->n, (unsigned) d);
	for (size_t i = 0; i < rows->n; i++)
	{
		for (uint32_t j = 0; j < d; j++)
			job->Xs[j] = rows->X[i * d + j] + 0.0;
		km_basis_state_add(state, job->Xs, rows->hash[i]);
	}
	return KM_OK;
}

static km_status
basis_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	const km_basis_state *a = into;
	const km_basis_state *b = from;

	if (km_basis_state_validate(a, pass->state_bytes, err) != KM_OK ||
		km_basis_state_validate(b, pass->state_bytes, err) != KM_OK)
		return err->status;
	if (a->rows > INT64_MAX - b->rows)
		return km_fail(err, KM_ERR_INVALID, "basis states do not match",
					   "The states count %lld and %lld rows.", (long long) a->rows,
					   (long long) b->rows);
	return km_basis_state_combine(into, from, err);
}

static void
basis_init(km_pass *pass, void *state)
{
	const approx_job *job = pass->at;
	const km_options *o = &job->opts;

	km_basis_state_init(state, o->approximation, &o->fit.kernel, o->standardize,
						(uint32_t) job->rows->d, (uint32_t) o->components,
						(uint64_t) o->seed);
}

/* The basis pass of the job's options, its state sbytes. */
static km_pass *
basis_pass(approx_job *job, size_t sbytes)
{
	km_pass    *pass = km_approx_job_pass(job, "basis", 0, sbytes, basis_add);

	snprintf(pass->what, sizeof(pass->what), "basis: %zu rows", job->rows->n);
	pass->combine = basis_combine;
	pass->init = basis_init;
	pass->kind = KM_PASS_KIND_BASIS;
	pass->point_bytes = basis_point_bytes;
	pass->point_write = basis_point_write;
	return pass;
}

/* The draw steps of the basis's list (approx.h km_basis_draw_into: no pass). */
static void
job_draw(approx_job *job)
{
	job->W = km_approx_job_alloc(job, km_basis_draw_doubles(&job->b));
	km_basis_draw_into(&job->b, job->W);
}

/* The sample step: the basis pass over the rows, finished and decoded into job->b. */
static km_status
job_sample(approx_job *job, size_t sbytes, km_error *err)
{
	const km_train_env *env = job->env;
	km_basis_state *st;
	char	   *basis;
	void	   *scratch;
	size_t		blen;
	size_t		rows;
	km_pass    *pass = basis_pass(job, sbytes);

	st = env->alloc(env->ctx, sbytes);
	if (km_pass_run(job->host, pass, st, &rows, err) != KM_OK)
		return err->status;
	blen = km_basis_final_bytes(st);
	basis = env->alloc(env->ctx, blen);
	job->basis_mem = basis;
	job->basis_len = blen;
	scratch = env->alloc(env->ctx, km_basis_finish_scratch_bytes(st) + 1);
	if (km_basis_finish(st, basis, scratch, err) != KM_OK)
		return err->status;
	env->release(env->ctx, scratch);
	env->release(env->ctx, st);
	return km_basis_decode(basis, blen, &job->b, err);
}

/*
 * The basis of the rows: the steps of the representation's list in order
 * (repr.h km_repr_basis_steps: the sample pass, the refine passes its
 * "centers" asks, the draw).
 */
km_status
km_approx_job_basis(approx_job *job, size_t sbytes, km_error *err)
{
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			n = km_repr_basis_steps(km_repr_lookup(job->opts.approximation),
										job->opts.centres, steps);

	for (int i = 0; i < n; i++)
	{
		km_status	st = KM_OK;

		switch (steps[i])
		{
			case KM_BASIS_SAMPLE:
				st = job_sample(job, sbytes, err);
				break;
			case KM_BASIS_DRAW:
				job_draw(job);
				break;
			case KM_BASIS_KMEANS:
			case KM_BASIS_LEVERAGE:
				st = km_approx_job_refine(job, steps[i], err);
				break;
			case KM_BASIS_GATHER:
				st = km_fail(err, KM_ERR_INVALID, "the basis has no such step",
							 "Step %d of representation %d is a gather.",
							 i + 1, (int) job->opts.approximation);
				break;
		}
		if (st != KM_OK)
			return st;
	}
	return KM_OK;
}

/*
 * Is state (untrusted: the pass aggregate's) one of the pass's sums, with
 * room for rows more rows?  O(1): its header against the pass's m.
 */
static km_status
sums_state_check(const km_pass *pass, const km_accum *acc, size_t rows, km_error *err)
{
	uint32_t	m = ((const approx_job *) pass->at)->b.m;

	if (acc->magic != KM_ACCUM_MAGIC || acc->version != KM_ACCUM_VERSION ||
		acc->kind != KM_ACCUM_GRAM || acc->dim != m ||
		acc->ndoubles != km_accum_payload_doubles(KM_ACCUM_GRAM, m) ||
		acc->rows < 0 || (uint64_t) acc->rows > (uint64_t) (INT64_MAX - (int64_t) rows))
		return km_fail(err, KM_ERR_INVALID, "sums state does not match its pass",
					   "The state has kind %u, dimension %u and %lld rows; pass \"%s\" has dimension %u.",
					   (unsigned) acc->kind, (unsigned) acc->dim, (long long) acc->rows,
					   pass->what, (unsigned) m);
	return KM_OK;
}

/* A chunk of ridge's sums: z(x) z(x)^T, z y, ... */
static km_status
sums_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		 km_error *err)
{
	approx_job *job = pass->at;

	if (km_pass_rows_check(pass, rows, job->rows->d, true, 0, false, first, err) != KM_OK ||
		sums_state_check(pass, state, rows->n, err) != KM_OK ||
		km_basis_standardize(&job->b, rows->X, first, rows->n, job->rows->d, job->Xs, err) != KM_OK ||
		km_approx_features(&job->b, job->Xs, rows->n, job->Z, job->fwork, err) != KM_OK)
		return err->status;
	/* the m x m scratch rides behind the chunk's features */
	km_accum_gram_add(state, job->Z, rows->y, rows->n, job->Zc, job->env->interrupt);
	return KM_OK;
}

static km_status
sums_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	const km_accum *b = from;

	if (km_accum_validate(into, pass->state_bytes, err) != KM_OK ||
		km_accum_validate(b, pass->state_bytes, err) != KM_OK ||
		sums_state_check(pass, into, 0, err) != KM_OK ||
		sums_state_check(pass, into, (size_t) b->rows, err) != KM_OK)
		return err->status;
	return km_accum_combine(into, from, err);
}

static void
sums_init(km_pass *pass, void *state)
{
	km_accum_init(state, KM_ACCUM_GRAM, ((const approx_job *) pass->at)->b.m);
}

static void
sums_point(const km_pass *pass, km_point_writer *w)
{
	km_approx_point_put_job(w, pass->at);
}

static size_t
sums_point_bytes(const km_pass *pass)
{
	return point_count(pass, sums_point);
}

static void
sums_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	sums_point(pass, &w);
}

/* Ridge's sums over the job's basis, and the buffers its add reads (once). */
static km_pass *
sums_pass(approx_job *job)
{
	uint32_t	m = job->b.m;
	km_pass    *pass = km_approx_job_pass(job, "statistics", SUMS_BLOCK,
										  km_accum_bytes(KM_ACCUM_GRAM, m), sums_add);

	snprintf(pass->what, sizeof(pass->what), "statistics: m = %u, %zu rows", m, job->rows->n);
	pass->combine = sums_combine;
	pass->init = sums_init;
	pass->kind = KM_PASS_KIND_SUMS;
	pass->point_bytes = sums_point_bytes;
	pass->point_write = sums_point_write;
	return pass;
}

/* The buffers sums_add reads: a chunk's features, the features' work, m x m scratch. */
static void
sums_buffers(approx_job *job)
{
	uint32_t	m = job->b.m;

	job->Z = km_approx_job_alloc(job, (size_t) SUMS_BLOCK * m);
	job->fwork = km_approx_job_alloc(job, km_approx_features_doubles(&job->b, SUMS_BLOCK) + 1);
	job->Zc = km_approx_job_alloc(job, (size_t) m * m);
}

/* Ridge's sums (pass 2), SUMS_BLOCK rows at a time. */
km_status
km_approx_job_sums(approx_job *job, km_accum **out, km_error *err)
{
	const km_train_env *env = job->env;
	uint32_t	m = job->b.m;
	size_t		bytes = km_accum_bytes(KM_ACCUM_GRAM, m);
	km_accum   *acc;
	size_t		rows;
	km_pass    *pass = sums_pass(job);

	acc = env->alloc(env->ctx, bytes);
	sums_buffers(job);
	if (km_pass_run(job->host, pass, acc, &rows, err) != KM_OK)
		return err->status;
	env->release(env->ctx, job->Z);
	env->release(env->ctx, job->fwork);
	env->release(env->ctx, job->Zc);
	job->Z = NULL;
	job->fwork = NULL;
	job->Zc = NULL;
	*out = acc;
	return KM_OK;
}

/*
 * A ridge model from the m x m sums of its features (accum.h, rows >= 1,
 * validated): km_approx_solve with GCV over the lambdas (1 ..
 * KM_APPROX_MAX_LAMBDAS, each > 0: the glue checks them), then the model
 * (model.h km_approx_model_fill; components: the number asked for).
 * keep_gp: keep the factor of the Gaussian-process reading (gp.h; the
 * "uncertainty" option), m(m+1)/2 doubles in the model.  evidence: the
 * lambdas are scored by minus the log marginal likelihood ("cv":
 * "evidence"), not GCV.  The learner reaches it by km_learn_sums_model
 * only, after its own sums pass or the two-pass form's.
 */
static km_status
sums_solve(const km_basis *b, uint32_t components, const km_accum *acc,
		   const double *lambdas, int n_lambdas, bool fit_intercept, bool keep_gp,
		   bool evidence, uint64_t rows_skipped, const km_train_env *env,
		   km_model *m, km_error *err)
{
	uint32_t	dim = b->m;
	double	   *work;
	double	   *coef;
	km_approx_result res;
	km_candidate *cand = NULL;
	bool		gp_ok;
	double		gp_s2 = 0.0;
	double		gp_logdet = 0.0;

	km_progress_phase("solve: m = %u, %lld rows", dim, (long long) acc->rows);
	work = env->alloc(env->ctx, km_approx_solve_doubles(dim) * sizeof(double));
	coef = env->alloc(env->ctx, sizeof(double) * dim);
	if (km_approx_solve(b, acc, lambdas, n_lambdas, fit_intercept, evidence, coef, &res,
						work, err, env->interrupt) != KM_OK)
		return err->status;
	/*
	 * The Gaussian-process reading (gp.h): its factor is packed at the
	 * start of the solve's work, kept for the model; none when A + lambda I
	 * does not factor (kernel_predict_std then refuses the model).
	 */
	{
		km_error	gp_err;

		gp_ok = keep_gp && km_method_approx_sums()->gp_reading &&
			km_gp_approx_fit(b, acc, &res, coef, work, &gp_s2, &gp_logdet,
							 &gp_err, env->interrupt) == KM_OK;
	}
	if (!gp_ok)
		env->release(env->ctx, work);
	if (n_lambdas > 1)
		cand = env->alloc(env->ctx, sizeof(km_candidate) * n_lambdas);
	memset(m, 0, sizeof(*m));
	/* one place builds an approximate model: the core's fill */
	km_approx_model_fill(b, components, lambdas, n_lambdas, fit_intercept, coef,
						 &res, cand, m);
	if (evidence && m->n_candidates > 0)
		m->cv = KM_CV_EVIDENCE;
	if (gp_ok)
	{
		m->gp_factor = work;
		m->gp_amplitude = gp_s2;
		m->gp_logdet_half = gp_logdet;
	}
	m->method = km_method_approx_sums()->id;
	m->task = km_method_approx_sums()->task;
	m->rows_skipped = rows_skipped;
	return KM_OK;
}

/*
 * The features of rows X (first numbered first) into Z: standardized,
 * mapped and, for nystrom, whitened, in pieces of at most PIECE_FLOPS with
 * an interrupt check after each.
 */
km_status
km_approx_job_features(approx_job *job, const double *X, size_t first,
					   size_t rows, double *Z, km_error *err)
{
	uint32_t	d = (uint32_t) job->rows->d;
	uint32_t	m = job->b.m;
	const double *L = job->unwhitened ? NULL : job->L;	/* Newton-CG whitens m-vectors */
	size_t		piece = km_primal_piece_rows(m, d, L != NULL, rows, PIECE_FLOPS);

	if (km_basis_standardize(&job->b, X, first, rows, job->rows->d, job->Xs, err) != KM_OK)
		return err->status;
	for (size_t p0 = 0; p0 < rows; p0 += piece)
	{
		size_t		r = rows - p0 < piece ? rows - p0 : piece;

		if (km_primal_block_features(&job->b, L, job->Xs + p0 * d, r,
									 Z + p0 * m, job->fwork, err) != KM_OK)
			return err->status;
		km_check_interrupts(job->env->interrupt);
	}
	return KM_OK;
}

/* The job's allocator and release, as the representation's set-up asks them. */
static void *
job_alloc(void *ctx, size_t doubles)
{
	return km_approx_job_alloc((approx_job *) ctx, doubles);
}

static void
job_release(void *ctx, void *p)
{
	approx_job *job = ctx;

	job->env->release(job->env->ctx, p);
}

/*
 * What the Newton passes over a basis need: nystrom's factor L of
 * K_mm + eps I (the features are whitened by it; *eps recorded) and the
 * block buffers (once).
 */
km_status
km_approx_job_setup(approx_job *job, double *eps, km_error *err)
{
	km_basis   *b = &job->b;

	/* the representation's set-up: nystrom whitens by its factor */
	if (km_basis_whitening(b, &job->L, eps, job_alloc, job_release, job, err,
						   job->env->interrupt) != KM_OK)
		return err->status;
	job->eps = *eps;
	if (job->Z == NULL)
	{
		job->Z = km_approx_job_alloc(job, (size_t) PRIMAL_BLOCK * b->m);
		job->fwork = km_approx_job_alloc(job, km_approx_features_doubles(b, PRIMAL_BLOCK) + 1);
	}
	return KM_OK;
}

/* The basis, its factor and its random features released (before another gamma's). */
void
km_approx_job_release(approx_job *job)
{
	const km_train_env *env = job->env;
	void	   *held[4] = {job->basis_mem, job->W, job->bv, job->L};

	for (int i = 0; i < 4; i++)
		if (held[i] != NULL)
			env->release(env->ctx, held[i]);
	job->basis_mem = NULL;
	job->W = NULL;
	job->bv = NULL;
	job->L = NULL;
}


static km_status job_on_basis(approx_job *job, km_rows *rows, size_t n, uint32_t d,
							  void *basis, size_t len, const km_train_env *env,
							  km_error *err);

km_status
km_approx_point_get_job(km_point_reader *r, approx_job *job, km_rows *rows,
						const km_train_env *env, km_error *err)
{
	uint64_t	n = km_point_get_u64(r);
	uint32_t	d = km_point_get_u32(r);
	uint64_t	len = km_point_get_u64(r);
	void	   *basis;

	if (r->bad || n == 0 || d == 0 || len == 0 || len > r->left || len % 8 != 0)
		return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
					   "The point gives %llu rows of %u features and a basis of %llu bytes.",
					   (unsigned long long) n, (unsigned) d, (unsigned long long) len);
	basis = env->alloc(env->ctx, (size_t) len);
	km_point_get(r, basis, (size_t) len);
	return job_on_basis(job, rows, (size_t) n, d, basis, (size_t) len, env, err);
}

/*
 * A job over basis (len bytes in env memory, kept) for rows of d features,
 * n of them (the point's count): as a pass aggregate's rebuilt job, its
 * chunk buffer for up to KM_BLOCK_ROWS rows, the basis decoded as
 * untrusted bytes and its draw done.
 */
static km_status
job_on_basis(approx_job *job, km_rows *rows, size_t n, uint32_t d, void *basis,
			 size_t len, const km_train_env *env, km_error *err)
{
	km_options	opts;

	memset(rows, 0, sizeof(*rows));
	rows->n = n;
	rows->d = (int) d;
	memset(&opts, 0, sizeof(opts));
	km_approx_job_init(job, rows, NULL, env, &opts);
	/* the pass aggregate's chunks: up to KM_BLOCK_ROWS rows, whatever n the point gives */
	job->Xs = km_approx_job_alloc(job, (size_t) KM_BLOCK_ROWS * d);
	job->basis_mem = basis;
	job->basis_len = (size_t) len;
	if (km_basis_decode(basis, (size_t) len, &job->b, err) != KM_OK)
		return err->status;
	if (job->b.d != d)
		return km_fail(err, KM_ERR_FORMAT, "pass point has an invalid shape",
					   "The basis has %u features; the point's rows have %u.",
					   (unsigned) job->b.d, (unsigned) d);
	job->opts.approximation = job->b.kind;
	job->opts.fit.kernel = job->b.kernel;
	job->opts.standardize = job->b.standardize;
	job->opts.components = (int) km_basis_components(basis);
	job->opts.seed = (int64_t) job->b.seed;
	/* the bytes hold the sampled and refined basis: only its draw is done again */
	job_draw(job);
	return KM_OK;
}

void
km_approx_point_put_setup(km_point_writer *w, const approx_job *job)
{
	km_approx_point_put_job(w, job);
	km_point_put_f64(w, job->eps);
}

km_status
km_approx_point_get_setup(km_point_reader *r, approx_job *job, km_rows *rows,
						  const km_train_env *env, km_error *err)
{
	double		eps;
	double		mine;

	if (km_approx_point_get_job(r, job, rows, env, err) != KM_OK)
		return err->status;
	eps = km_point_get_f64(r);
	if (r->bad || !isfinite(eps) || eps < 0.0)
		return km_point_bad(err, "job's");
	if (km_approx_job_setup(job, &mine, err) != KM_OK)
		return err->status;
	if (mine != eps)
		return km_fail(err, KM_ERR_FORMAT, "pass point's factor differs",
					   "The basis factors with eps %g here; the point was written with eps %g.",
					   mine, eps);
	return KM_OK;
}

/* The basis pass's point read back into a job of those options. */
static km_status
rebuild_basis(km_point_reader *r, approx_job *job, km_rows *rows,
			  const km_train_env *env, km_pass **out, km_error *err)
{
	km_options	o;
	uint64_t	n = km_point_get_u64(r);
	uint32_t	d = km_point_get_u32(r);
	size_t		sbytes;
	const km_repr_ops *repr;
	km_basis_step steps[KM_BASIS_MAX_STEPS];

	memset(&o, 0, sizeof(o));
	o.approximation = (km_approx) km_point_get_u32(r);
	o.fit.kernel.type = (km_kernel_type) km_point_get_u32(r);
	o.fit.kernel.degree = (int) km_point_get_u32(r);
	o.fit.kernel.gamma = km_point_get_f64(r);
	o.fit.kernel.coef0 = km_point_get_f64(r);
	o.standardize = km_point_get_u32(r) != 0;
	o.components = (int) km_point_get_u32(r);
	o.seed = (int64_t) km_point_get_u64(r);
	repr = km_repr_get(o.approximation);
	if (r->bad || r->left != 0 || n == 0 || d == 0 || d > (1u << 20) ||
		repr == NULL || km_repr_basis_steps(repr, KM_CENTRES_UNIFORM, steps) < 1 ||
		steps[0] != KM_BASIS_SAMPLE ||
		km_kernel_invalid(&o.fit.kernel) != NULL ||
		!km_repr_serves(repr, o.fit.kernel.type) ||
		o.components < 1 || o.components > KM_CG_MAX_COMPONENTS)
		return km_fail(err, KM_ERR_FORMAT, "pass point has invalid fields",
					   "The basis pass's point gives %llu rows of %u features, representation %u, kernel %u and %d components.",
					   (unsigned long long) n, (unsigned) d, (unsigned) o.approximation,
					   (unsigned) o.fit.kernel.type, o.components);
	sbytes = km_basis_state_bytes(o.approximation, d, (uint32_t) o.components);
	if (sbytes == 0)
		return km_fail(err, KM_ERR_FORMAT, "pass point has invalid fields",
					   "A basis state of %u features and %d components does not fit.",
					   (unsigned) d, o.components);
	memset(rows, 0, sizeof(*rows));
	rows->n = (size_t) n;
	rows->d = (int) d;
	km_approx_job_init(job, rows, NULL, env, &o);
	job->Xs = km_approx_job_alloc(job, (size_t) KM_BLOCK_ROWS * d);
	*out = basis_pass(job, sbytes);
	return KM_OK;
}

km_status
km_approx_pass_rebuild(uint16_t kind, km_point_reader *r, const km_train_env *env,
					   km_pass **out, km_error *err)
{
	approx_job *job = env->alloc(env->ctx, sizeof(approx_job));
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));

	*out = NULL;
	if (kind == KM_PASS_KIND_BASIS)
		return rebuild_basis(r, job, rows, env, out, err);
	if (kind == KM_PASS_KIND_SUMS)
	{
		if (km_approx_point_get_job(r, job, rows, env, err) != KM_OK)
			return err->status;
		if (r->left == 0)
		{
			sums_buffers(job);
			*out = sums_pass(job);
			return KM_OK;
		}
	}
	return km_fail(err, KM_ERR_FORMAT, "pass point has an unknown kind",
				   "Pass kind %u%s.", (unsigned) kind,
				   r->left != 0 ? " has bytes after its point" : " is not one this build runs");
}

km_status
km_learn_sums_pass(const void *basis, size_t len, const km_train_env *env, km_pass **out,
				   km_error *err)
{
	approx_job *job = env->alloc(env->ctx, sizeof(approx_job));
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));
	void	   *copy = env->alloc(env->ctx, len + 1);
	km_basis	b;

	*out = NULL;
	memcpy(copy, basis, len);
	if (km_basis_decode(copy, len, &b, err) != KM_OK ||
		job_on_basis(job, rows, 1, b.d, copy, len, env, err) != KM_OK)
		return err->status;
	sums_buffers(job);
	*out = sums_pass(job);
	return KM_OK;
}

km_status
km_learn_sums_model(const km_pass *sums, const void *state, const km_sums_fit *fit,
					const km_train_env *env, km_model *m, km_error *err)
{
	const approx_job *job = sums->at;

	if (sums->kind != KM_PASS_KIND_SUMS || sums->add != sums_add)
		return km_fail(err, KM_ERR_INVALID, "not a sums pass",
					   "Pass \"%s\" of kind %u has no ridge sums.", sums->what,
					   (unsigned) sums->kind);
	if (sums_state_check(sums, state, 0, err) != KM_OK)
		return err->status;
	return sums_solve(&job->b, (uint32_t) job->opts.components, state,
					  fit->lambdas, fit->n_lambdas, fit->fit_intercept,
					  fit->keep_gp, fit->evidence, fit->rows_skipped, env, m, err);
}

km_status
km_learn_basis_pass(const km_options *o, int d, const km_train_env *env, km_pass **out,
					km_error *err)
{
	approx_job *job = env->alloc(env->ctx, sizeof(approx_job));
	km_rows    *rows = env->alloc(env->ctx, sizeof(km_rows));
	size_t		sbytes = km_basis_state_bytes(o->approximation, (uint32_t) d,
											  (uint32_t) o->components);

	*out = NULL;
	if (sbytes == 0)
		return km_fail(err, KM_ERR_INVALID, "basis state is too large",
					   "A basis state of %d features and %d components does not fit.",
					   d, o->components);
	memset(rows, 0, sizeof(*rows));
	rows->n = 1;
	rows->d = d;
	km_approx_job_init(job, rows, NULL, env, o);
	/* the pass aggregate's chunks: up to KM_BLOCK_ROWS rows (rebuild_basis's) */
	job->Xs = km_approx_job_alloc(job, (size_t) KM_BLOCK_ROWS * d);
	*out = basis_pass(job, sbytes);
	return KM_OK;
}
