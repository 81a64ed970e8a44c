/*
 * point.c - the parts of a pass's point that several roads write
 * (learn/point.h): a method's fit parameters and the one Newton's point.
 */
#include <math.h>
#include <string.h>

#include "learn/newton.h"
#include "learn/point.h"
#include "method.h"
#include "options_core.h"

km_status
km_point_bad(km_error *err, const char *what)
{
	return km_fail(err, KM_ERR_FORMAT, "pass point has invalid fields",
				   "The point of a %s pass is truncated, has bytes after its end, or holds a value out of its range.",
				   what);
}

void
km_point_put_fit(km_point_writer *w, const km_fit_params *p)
{
	km_point_put_u32(w, (uint32_t) p->kernel.type);
	km_point_put_u32(w, (uint32_t) p->kernel.degree);
	km_point_put_f64(w, p->kernel.gamma);
	km_point_put_f64(w, p->kernel.coef0);
	km_point_put_u32(w, (uint32_t) p->method);
	km_point_put_f64(w, p->lambda);
	km_point_put_f64(w, p->learning_rate);
	km_point_put_u32(w, (uint32_t) p->max_iter);
	km_point_put_f64(w, p->tol);
	km_point_put_u32(w, (uint32_t) p->solver);
	km_point_put_u32(w, (p->probability ? 1u : 0u) | (p->fit_intercept ? 2u : 0u));
	km_point_put_u64(w, (uint64_t) p->seed);
	km_point_put(w, p->method_params.bytes, KM_METHOD_BLOB_SIZE);
}

/* Is the method's own option row o's value in p's blob within its range? */
static bool
own_option_ok(const km_method_option *o, const km_fit_params *p)
{
	const unsigned char *at = p->method_params.bytes + o->offset;
	double		v;

	switch (o->def.type)
	{
		case KM_OPTTYPE_NUMBER:
			memcpy(&v, at, sizeof(v));
			break;
		case KM_OPTTYPE_INTEGER:
			{
				int			i;

				memcpy(&i, at, sizeof(i));
				v = i;
			}
			break;
		case KM_OPTTYPE_BOOL:
			return *at <= 1;
		default:
			return true;
	}
	return isfinite(v) && (o->def.min_exclusive ? v > o->def.min : v >= o->def.min) &&
		(o->def.max_exclusive ? v < o->def.max : v <= o->def.max);
}

km_status
km_point_get_fit(km_point_reader *r, km_fit_params *p, km_error *err)
{
	const km_method_ops *ops;
	uint32_t	flags;

	memset(p, 0, sizeof(*p));
	p->kernel.type = (km_kernel_type) km_point_get_u32(r);
	p->kernel.degree = (int) km_point_get_u32(r);
	p->kernel.gamma = km_point_get_f64(r);
	p->kernel.coef0 = km_point_get_f64(r);
	p->method = (km_method) km_point_get_u32(r);
	p->lambda = km_point_get_f64(r);
	p->learning_rate = km_point_get_f64(r);
	p->max_iter = (int) km_point_get_u32(r);
	p->tol = km_point_get_f64(r);
	p->solver = (km_solver) km_point_get_u32(r);
	flags = km_point_get_u32(r);
	p->probability = (flags & 1u) != 0;
	p->fit_intercept = (flags & 2u) != 0;
	p->seed = (int64_t) km_point_get_u64(r);
	km_point_get(r, p->method_params.bytes, KM_METHOD_BLOB_SIZE);
	p->gram_cols = NULL;
	ops = km_method_get(p->method);
	if (r->bad || ops == NULL || flags > 3u || km_kernel_invalid(&p->kernel) != NULL ||
		!(p->lambda >= 0.0) || !isfinite(p->lambda) || !isfinite(p->learning_rate) ||
		!isfinite(p->tol) || p->max_iter < 0 || (unsigned) p->solver > 64u)
		return km_point_bad(err, "method's");
	for (int i = 0; i < ops->n_own_options; i++)
		if (!own_option_ok(&ops->own_options[i], p))
			return km_point_bad(err, "method's");
	return KM_OK;
}

void
km_point_put_newton(km_point_writer *w, const km_newton *nt)
{
	const km_primal_pass *ps = &nt->ps;

	km_point_put_u32(w, ps->m);
	km_point_put_u32(w, ps->q);
	km_point_put_u32(w, ps->k);
	km_point_put_u32(w, (uint32_t) ps->params.loss);
	km_point_put_f64(w, ps->params.lambda);
	km_point_put_u32(w, ps->params.fit_intercept ? 1 : 0);
	km_point_put_f64(w, ps->params.tol);
	km_point_put_u32(w, (uint32_t) ps->params.max_iter);
	km_point_put_doubles(w, ps->coef, (size_t) ps->m * ps->q);
	km_point_put_doubles(w, ps->intercepts, ps->q);
	for (uint32_t c = 0; c < ps->q; c++)
		km_point_put_u32(w, ps->solvers[c].done ? 1 : 0);
	/*
	 * Newton-CG: its flag, and a Hessian-vector pass's v (q > 1: which
	 * outputs it multiplies, and their v)
	 */
	km_point_put_u32(w, (ps->cg ? 1 : 0) | (nt->hv ? 2 : 0));
	if (!nt->hv)
		return;
	if (ps->q == 1)
	{
		km_point_put_doubles(w, nt->cgs[0].v, km_newton_unknowns(nt));
		return;
	}
	for (uint32_t c = 0; c < ps->q; c++)
		km_point_put_u32(w, nt->on[c] ? 1 : 0);
	for (uint32_t c = 0; c < ps->q; c++)
		if (nt->on[c])
			km_point_put_doubles(w, nt->cgs[c].v, km_newton_unknowns(nt));
}

km_status
km_point_get_newton(km_point_reader *r, km_newton *nt, uint32_t want_m, size_t block,
					size_t extra, void *(*alloc) (void *ctx, size_t bytes), void *ctx,
					km_error *err)
{
	uint32_t	m = km_point_get_u32(r);
	uint32_t	q = km_point_get_u32(r);
	uint32_t	k = km_point_get_u32(r);
	km_primal_params pp;
	const unsigned char *coef;
	const unsigned char *b;
	const unsigned char *v;
	size_t		bytes;
	uint32_t	flags;
	km_primal_pass *ps = &nt->ps;

	pp.loss = (km_primal_loss) km_point_get_u32(r);
	pp.lambda = km_point_get_f64(r);
	pp.fit_intercept = km_point_get_u32(r) != 0;
	pp.tol = km_point_get_f64(r);
	pp.max_iter = (int) km_point_get_u32(r);
	if (r->bad || m != want_m || m == 0 || q == 0 || q > 1024 || k > 1024 ||
		!isfinite(pp.lambda) || !isfinite(pp.tol))
		return km_point_bad(err, "Newton");
	coef = km_point_get_doubles(r, (size_t) m * q);
	b = km_point_get_doubles(r, q);
	/* the flags come after the solvers' q words */
	flags = 4;
	if (!r->bad && r->left >= 4 * (size_t) q + 4)
		memcpy(&flags, r->p + 4 * (size_t) q, sizeof(flags));
	bytes = km_newton_bytes(m, q, block, extra, (flags & 1) != 0);
	if (coef == NULL || b == NULL || bytes == 0 || flags > 3 || flags == 2)
		return km_point_bad(err, "Newton");
	km_newton_buffers(nt, m, q, block, extra, (flags & 1) != 0, NULL, alloc(ctx, bytes));
	ps->k = k;
	ps->params = pp;
	ps->coef = alloc(ctx, sizeof(double) * (size_t) m * q);
	ps->intercepts = alloc(ctx, sizeof(double) * q);
	if (!km_point_copy_doubles(ps->coef, coef, (size_t) m * q) ||
		!km_point_copy_doubles(ps->intercepts, b, q))
		return km_point_bad(err, "Newton");
	for (uint32_t c = 0; c < q; c++)
	{
		km_primal_solver_init(&ps->solvers[c], m);
		ps->solvers[c].done = km_point_get_u32(r) != 0;
	}
	(void) km_point_get_u32(r);	/* the flags, read above */
	nt->hv = (flags & 2) != 0;
	if (nt->hv && q > 1)
		for (uint32_t c = 0; c < q; c++)
		{
			uint32_t	on = km_point_get_u32(r);

			if (on > 1 || (on != 0 && ps->solvers[c].done))
				return km_point_bad(err, "Newton");
			nt->on[c] = on != 0;
		}
	for (uint32_t c = 0; nt->hv && c < q; c++)
	{
		if (q > 1 && !nt->on[c])
			continue;
		v = km_point_get_doubles(r, km_newton_unknowns(nt));
		if (v == NULL || !km_point_copy_doubles(nt->cgs[c].v, v, km_newton_unknowns(nt)))
			return km_point_bad(err, "Newton");
	}
	return r->bad ? km_point_bad(err, "Newton") : KM_OK;
}
