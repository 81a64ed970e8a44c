/*
 * drift_pass.c - the drift test's sums as a pass (drift_pass.h).
 */
#include <stdio.h>
#include <string.h>

#include "learn/drift_pass.h"

/* What the pass's add reads: the basis (its own sums unused), scratch. */
typedef struct drift_at
{
	km_drift	basis;
	double	   *storage;
	double	   *scratch;
	unsigned char *point;		/* the basis's encoding */
	size_t		point_len;
} drift_at;

size_t
km_drift_pass_doubles(uint32_t J)
{
	return 1 + (size_t) J + (size_t) J * J;
}

static km_status
drift_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	drift_at   *at = pass->at;
	double	   *s = state;
	km_drift	view = at->basis;

	if (km_pass_rows_check(pass, rows, (int) view.d, false, 0, false, first, err) != KM_OK)
		return err->status;
	view.n = 0;
	view.sum = s + 1;
	view.cross = s + 1 + view.J;
	km_drift_add(&view, rows->X, rows->n, at->scratch);
	s[0] += (double) view.n;
	return KM_OK;
}

static void
drift_init(km_pass *pass, void *state)
{
	memset(state, 0, pass->state_bytes);
}

static size_t
drift_point_bytes(const km_pass *pass)
{
	return ((const drift_at *) pass->at)->point_len;
}

static void
drift_point_write(const km_pass *pass, unsigned char *out)
{
	const drift_at *at = pass->at;

	memcpy(out, at->point, at->point_len);
}

/* The pass over at (its basis set, its point encoded). */
static km_pass *
drift_pass_of(drift_at *at, const km_train_env *env)
{
	km_pass    *p = env->alloc(env->ctx, sizeof(km_pass));

	memset(p, 0, sizeof(*p));
	snprintf(p->what, sizeof(p->what), "drift sums: J = %u", (unsigned) at->basis.J);
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = 0;
	p->state_bytes = sizeof(double) * km_drift_pass_doubles(at->basis.J);
	p->at = at;
	p->init = drift_init;
	p->add = drift_add;
	p->interrupt = env->interrupt;
	p->alloc = env->alloc;
	p->alloc_ctx = env->ctx;
	p->kind = KM_PASS_KIND_DRIFT;
	p->point_bytes = drift_point_bytes;
	p->point_write = drift_point_write;
	return p;
}

/* at's storage, scratch and basis for d features and J locations. */
static drift_at *
drift_at_new(uint32_t d, uint32_t J, const km_train_env *env)
{
	drift_at   *at = env->alloc(env->ctx, sizeof(drift_at));

	memset(at, 0, sizeof(*at));
	at->storage = env->alloc(env->ctx, sizeof(double) * km_drift_doubles(d, J));
	at->scratch = env->alloc(env->ctx, sizeof(double) * km_drift_scratch_doubles(d, J));
	return at;
}

km_pass *
km_drift_pass(const km_drift *r, const km_train_env *env)
{
	drift_at   *at = drift_at_new(r->d, r->J, env);

	km_drift_copy_basis(r, &at->basis, at->storage);
	memset(at->basis.sum, 0, sizeof(double) * r->J);
	memset(at->basis.cross, 0, sizeof(double) * r->J * r->J);
	at->basis.n = 0;
	at->basis.skipped = 0;
	at->point_len = km_drift_encoded_size(r->d, r->J);
	at->point = env->alloc(env->ctx, at->point_len);
	km_drift_encode(&at->basis, at->point);
	return drift_pass_of(at, env);
}

void
km_drift_pass_take(km_drift *r, const double *state)
{
	r->n += (uint64_t) state[0];
	for (uint32_t j = 0; j < r->J; j++)
		r->sum[j] += state[1 + j];
	for (size_t i = 0; i < (size_t) r->J * r->J; i++)
		r->cross[i] += state[1 + r->J + i];
}

km_status
km_drift_pass_rebuild(km_point_reader *r, const km_train_env *env, km_pass **out,
					  km_error *err)
{
	uint32_t	d;
	uint32_t	J;
	drift_at   *at;

	*out = NULL;
	if (km_drift_peek(r->p, r->left, &d, &J, err) != KM_OK)
		return err->status;
	at = drift_at_new(d, J, env);
	at->point_len = r->left;
	at->point = env->alloc(env->ctx, r->left);
	memcpy(at->point, r->p, r->left);
	if (km_drift_decode(at->point, at->point_len, &at->basis, at->storage, err) != KM_OK)
		return err->status;
	r->p += r->left;
	r->left = 0;
	*out = drift_pass_of(at, env);
	return KM_OK;
}

km_status
km_drift_sum(const km_host *host, km_drift *r, const km_train_env *env, km_error *err)
{
	km_pass    *pass = km_drift_pass(r, env);
	double	   *state = env->alloc(env->ctx, pass->state_bytes);
	size_t		rows;

	if (km_pass_run(host, pass, state, &rows, err) != KM_OK)
		return err->status;
	km_drift_pass_take(r, state);
	env->release(env->ctx, state);
	return KM_OK;
}
