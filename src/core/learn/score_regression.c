/*
 * score_regression.c - a regression model's error sums over rows as one
 * pass (score_regression.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "learn/score_regression.h"
#include "model.h"
#include "score.h"

/* Doubles of a side's sums: n, sse, sae, the targets' mean and squared deviations. */
#define SIDE_DOUBLES 5
/* Scratch of one block at most (km_scorer_block's rows x (n + d)): 8 MB. */
#define BLOCK_DOUBLES (1u << 20)

/* What the pass's add reads. */
typedef struct reg_at
{
	km_model	m;
	km_scorer	sc;
	bool		train;			/* the training side scored */
	size_t		chunk;			/* rows a block scores at once */
	double	   *out;			/* chunk predictions */
	double	   *work;			/* km_scorer_block's scratch */
	const uint8_t *model;		/* the model's bytes (the point's) */
	size_t		model_len;
} reg_at;

static void
side_get(const double *s, km_metrics *m)
{
	m->n = (size_t) s[0];
	m->sse = s[1];
	m->sae = s[2];
	m->ymean = s[3];
	m->yss = s[4];
}

static void
side_put(const km_metrics *m, double *s)
{
	s[0] = (double) m->n;
	s[1] = m->sse;
	s[2] = m->sae;
	s[3] = m->ymean;
	s[4] = m->yss;
}

/* A side's sums as a host hands them back: a whole count, the rest finite and not negative where they must not be. */
static bool
side_valid(const double *s)
{
	return isfinite(s[0]) && s[0] >= 0.0 && s[0] <= 9007199254740992.0 && s[0] == floor(s[0]) &&
		isfinite(s[1]) && s[1] >= 0.0 && isfinite(s[2]) && s[2] >= 0.0 &&
		isfinite(s[3]) && isfinite(s[4]) && s[4] >= 0.0;
}

static void
reg_init(km_pass *pass, void *state)
{
	memset(state, 0, pass->state_bytes);
}

static km_status
reg_add(km_pass *pass, const km_block *rows, size_t first, void *state, km_error *err)
{
	reg_at	   *at = pass->at;
	km_metrics	side[2];

	if (km_pass_rows_check(pass, rows, (int) at->m.n_features, true, 0, false, first,
						   err) != KM_OK)
		return err->status;
	if (rows->held == NULL)
		return km_fail(err, KM_ERR_INVALID, "the host handed rows without their side",
					   "Pass \"%s\" scores each side of the hold-out split apart.", pass->what);
	/* the state as the pass aggregate hands it: untrusted */
	for (int s = 0; s < 2; s++)
	{
		if (!side_valid((double *) state + s * SIDE_DOUBLES))
			return km_fail(err, KM_ERR_INVALID, "scoring state is not valid",
						   "A side's error sums are not a whole count and finite sums.");
		side_get((double *) state + s * SIDE_DOUBLES, &side[s]);
	}
	for (size_t i0 = 0; i0 < rows->n; i0 += at->chunk)
	{
		size_t		r = rows->n - i0 < at->chunk ? rows->n - i0 : at->chunk;

		if (km_scorer_block(&at->sc, rows->X + i0 * (size_t) rows->d, r, at->out, at->work,
							err) != KM_OK)
			return err->status;
		for (size_t i = 0; i < r; i++)
		{
			int			s = rows->held[i0 + i] ? 1 : 0;

			if (s == 0 && !at->train)
				continue;
			km_metrics_add(&side[s], at->out[i], rows->y[i0 + i]);
		}
		km_check_interrupts(pass->interrupt);
	}
	for (int s = 0; s < 2; s++)
		side_put(&side[s], (double *) state + s * SIDE_DOUBLES);
	return KM_OK;
}

static km_status
reg_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	for (int s = 0; s < 2; s++)
	{
		double	   *a = (double *) into + s * SIDE_DOUBLES;
		const double *b = (const double *) from + s * SIDE_DOUBLES;
		km_metrics	ma;
		km_metrics	mb;

		if (!side_valid(a) || !side_valid(b))
			return km_fail(err, KM_ERR_INVALID, "scoring state is not valid",
						   "A side's error sums are not a whole count and finite sums.");
		side_get(a, &ma);
		side_get(b, &mb);
		km_metrics_combine(&ma, &mb);
		side_put(&ma, a);
	}
	return KM_OK;
}

static void
reg_point(const reg_at *at, km_point_writer *w)
{
	km_point_put_u32(w, at->train ? 1u : 0u);
	km_point_put_u64(w, at->model_len);
	km_point_put(w, at->model, at->model_len);
}

static size_t
reg_point_bytes(const km_pass *pass)
{
	km_point_writer w = {NULL, 0};

	reg_point(pass->at, &w);
	return w.len;
}

static void
reg_point_write(const km_pass *pass, unsigned char *out)
{
	km_point_writer w = {out, 0};

	reg_point(pass->at, &w);
}

/* at's model decoded from its bytes, its scorer and block buffers (env's memory). */
static km_status
reg_at_model(reg_at *at, const km_train_env *env, km_error *err)
{
	km_model_shape shape;
	size_t		sd;
	size_t		per;

	if (km_model_peek(at->model, at->model_len, &shape, err) != KM_OK)
		return err->status;
	if (km_model_decode(at->model, at->model_len, &at->m,
						env->alloc(env->ctx, sizeof(double) * km_model_storage_doubles(&shape) + 1),
						err) != KM_OK)
		return err->status;
	if (at->m.n_outputs != 1 || at->m.n_classes != 0)
		return km_fail(err, KM_ERR_INVALID, "the model is not a regression model",
					   "A regression scoring pass scores a model of one output; this one has %u outputs and %u classes.",
					   (unsigned) at->m.n_outputs, (unsigned) at->m.n_classes);
	sd = km_scorer_doubles(&at->m);
	per = km_scorer_block_doubles(&at->m, 1);
	if (sd == 0 || per == 0)
		return km_fail(err, KM_ERR_INVALID, "the model is too large to score",
					   "Its scorer would need more memory than can be counted.");
	km_scorer_prepare(&at->sc, &at->m, env->alloc(env->ctx, sizeof(double) * sd));
	at->chunk = BLOCK_DOUBLES / per;
	if (at->chunk < 1)
		at->chunk = 1;
	if (at->chunk > KM_BLOCK_ROWS)
		at->chunk = KM_BLOCK_ROWS;
	at->out = env->alloc(env->ctx, sizeof(double) * at->chunk);
	at->work = env->alloc(env->ctx, sizeof(double) * (km_scorer_block_doubles(&at->m, at->chunk) + 1));
	return KM_OK;
}

static km_pass *
reg_pass_of(reg_at *at, const km_train_env *env)
{
	km_pass    *p = env->alloc(env->ctx, sizeof(km_pass));

	memset(p, 0, sizeof(*p));
	snprintf(p->what, sizeof(p->what), "score: error sums");
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = 0;
	p->state_bytes = sizeof(double) * 2 * SIDE_DOUBLES;
	p->at = at;
	p->init = reg_init;
	p->add = reg_add;
	p->combine = reg_combine;
	p->interrupt = env->interrupt;
	p->alloc = env->alloc;
	p->alloc_ctx = env->ctx;
	p->kind = KM_PASS_KIND_SCORE_REGRESSION;
	p->point_bytes = reg_point_bytes;
	p->point_write = reg_point_write;
	return p;
}

km_status
km_regression_score_rebuild(km_point_reader *r, const km_train_env *env, km_pass **out,
							km_error *err)
{
	reg_at	   *at = env->alloc(env->ctx, sizeof(reg_at));
	uint32_t	flags = km_point_get_u32(r);
	uint64_t	len = km_point_get_u64(r);

	*out = NULL;
	memset(at, 0, sizeof(*at));
	if (r->bad || flags > 1u || len != r->left)
		return km_point_bad(err, "regression scoring");
	at->train = flags == 1u;
	at->model_len = (size_t) len;
	at->model = r->p;
	r->p += len;
	r->left = 0;
	if (reg_at_model(at, env, err) != KM_OK)
		return err->status;
	*out = reg_pass_of(at, env);
	return KM_OK;
}

km_status
km_regression_score(const km_host *host, const uint8_t *model, size_t len,
					km_metrics *held, km_metrics *train, const km_train_env *env,
					km_error *err)
{
	reg_at	   *at = env->alloc(env->ctx, sizeof(reg_at));
	km_pass    *pass;
	double		state[2 * SIDE_DOUBLES];
	size_t		rows;

	memset(at, 0, sizeof(*at));
	at->model = model;
	at->model_len = len;
	at->train = train != NULL;
	if (reg_at_model(at, env, err) != KM_OK)
		return err->status;
	pass = reg_pass_of(at, env);
	memset(state, 0, sizeof(state));
	if (km_pass_run(host, pass, state, &rows, err) != KM_OK)
		return err->status;
	if (!side_valid(state) || !side_valid(state + SIDE_DOUBLES))
		return km_fail(err, KM_ERR_INVALID, "scoring state is not valid",
					   "A side's error sums are not a whole count and finite sums.");
	side_get(state + SIDE_DOUBLES, held);
	if (train != NULL)
		side_get(state, train);
	return KM_OK;
}
