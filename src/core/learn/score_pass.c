/*
 * score_pass.c - a classifier's scores over rows as passes (score_pass.h).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "classify.h"
#include "learn/score_pass.h"
#include "method.h"
#include "model.h"
#include "score.h"

/* Doubles of a side's sums: n, correct, n_proba, log-loss, unknown, k x k confusion. */
#define SIDE_HEAD 5

/* One interval of a side: keys [lo, hi] in b bins of width w. */
typedef struct score_iv
{
	uint64_t	lo;
	uint64_t	hi;
	uint32_t	b;
	size_t		first;			/* its first bin in the state */
} score_iv;

/* What the pass's add reads. */
typedef struct score_at
{
	km_model	m;
	km_scorer	sc;
	km_prob_link link;
	bool		proba;
	uint32_t	k;
	bool		metrics;		/* the sums too (the first pass) */
	bool		train;			/* the training side scored */
	double	   *f;				/* q decision values */
	double	   *p;				/* k probabilities */
	double	   *pwork;
	size_t		niv[2];			/* intervals of each side (0 training, 1 held out) */
	score_iv   *iv[2];
	size_t		nbins;
	const uint8_t *model;		/* the model's bytes (the point's) */
	size_t		model_len;
} score_at;

/* A score's key: its bits, ordered as the doubles (-0 as 0). */
static uint64_t
score_key(double s)
{
	uint64_t	u;

	s += 0.0;
	memcpy(&u, &s, sizeof(u));
	return (u >> 63) ? ~u : u | (UINT64_C(1) << 63);
}

static size_t
side_doubles(uint32_t k)
{
	return SIDE_HEAD + (size_t) k * k;
}

/* The bin of key in interval v. */
static size_t
iv_bin(const score_iv *v, uint64_t key)
{
	uint64_t	w;

	if (v->b <= 1)
		return v->first;
	w = (v->hi - v->lo) / v->b + 1;
	return v->first + (size_t) ((key - v->lo) / w);
}

/* The interval of a side holding key, or NULL. */
static const score_iv *
iv_find(const score_at *at, int side, uint64_t key)
{
	size_t		a = 0;
	size_t		b = at->niv[side];

	while (a < b)
	{
		size_t		mid = a + (b - a) / 2;
		const score_iv *v = &at->iv[side][mid];

		if (key < v->lo)
			b = mid;
		else if (key > v->hi)
			a = mid + 1;
		else
			return v;
	}
	return NULL;
}

static double *
bins_of(const km_pass *pass, void *state)
{
	return (double *) state + 2 * side_doubles(((const score_at *) pass->at)->k);
}

static void
score_init(km_pass *pass, void *state)
{
	const score_at *at = pass->at;
	double	   *bins = bins_of(pass, state);

	memset(state, 0, pass->state_bytes);
	for (size_t i = 0; i < at->nbins; i++)
	{
		uint64_t	lo = UINT64_MAX;

		memcpy(&bins[4 * i + 2], &lo, sizeof(lo));
	}
}

static km_status
score_add(km_pass *pass, const km_block *rows, size_t first, void *state,
		  km_error *err)
{
	score_at   *at = pass->at;
	uint32_t	k = at->k;
	double	   *bins = bins_of(pass, state);

	if (km_pass_rows_check(pass, rows, (int) at->m.n_features, false, k + 1, false,
						   first, err) != KM_OK)
		return err->status;
	if (rows->held == NULL)
		return km_fail(err, KM_ERR_INVALID, "the host handed rows without their side",
					   "Pass \"%s\" scores each side of the hold-out split apart.", pass->what);
	for (size_t i = 0; i < rows->n; i++)
	{
		int			side = rows->held[i] ? 1 : 0;
		double	   *s = (double *) state + side * side_doubles(k);
		uint32_t	truth = rows->cls[i];
		uint32_t	pred;

		if (side == 0 && !at->train)
			continue;
		if (truth == k)
		{
			if (at->metrics)
				s[4] += 1.0;
			continue;
		}
		if (km_scorer_decision(&at->sc, rows->X + i * (size_t) rows->d, at->f, err) != KM_OK)
			return err->status;
		pred = km_classify_decide(at->m.multiclass, k, at->f);
		if (at->proba &&
			km_classify_proba(at->link, at->m.multiclass, k, at->f, at->m.prob_A,
							  at->m.prob_B, at->p, at->pwork, err) != KM_OK)
			return err->status;
		if (at->metrics)
		{
			/* km_class_metrics_add's sums */
			s[0] += 1.0;
			s[1] += truth == pred;
			s[SIDE_HEAD + (size_t) truth * k + pred] += 1.0;
			if (at->proba)
			{
				double		pt = fmin(fmax(at->p[truth], DBL_EPSILON), 1.0 - DBL_EPSILON);

				s[2] += 1.0;
				s[3] -= log(pt);
			}
		}
		if (k == 2 && at->niv[side] > 0)
		{
			uint64_t	key = score_key(at->proba ? at->p[1] : at->f[0]);
			const score_iv *v = iv_find(at, side, key);
			double	   *bin;
			uint64_t	mm;

			if (v == NULL)
				continue;
			bin = bins + 4 * iv_bin(v, key);
			bin[truth == 1 ? 0 : 1] += 1.0;
			memcpy(&mm, &bin[2], sizeof(mm));
			if (key < mm)
				memcpy(&bin[2], &key, sizeof(key));
			memcpy(&mm, &bin[3], sizeof(mm));
			if (key > mm)
				memcpy(&bin[3], &key, sizeof(key));
		}
	}
	return KM_OK;
}

static km_status
score_combine(const km_pass *pass, void *into, const void *from, km_error *err)
{
	const score_at *at = pass->at;
	double	   *a = into;
	const double *b = from;
	size_t		head = 2 * side_doubles(at->k);

	for (size_t i = 0; i < head; i++)
		a[i] += b[i];
	for (size_t i = 0; i < at->nbins; i++)
	{
		double	   *x = a + head + 4 * i;
		const double *y = b + head + 4 * i;
		uint64_t	u;
		uint64_t	v;

		x[0] += y[0];
		x[1] += y[1];
		memcpy(&u, &x[2], sizeof(u));
		memcpy(&v, &y[2], sizeof(v));
		if (v < u)
			memcpy(&x[2], &v, sizeof(v));
		memcpy(&u, &x[3], sizeof(u));
		memcpy(&v, &y[3], sizeof(v));
		if (v > u)
			memcpy(&x[3], &v, sizeof(v));
	}
	return KM_OK;
}

static size_t
score_point_bytes(const km_pass *pass)
{
	const score_at *at = pass->at;
	km_point_writer w = {NULL, 0};

	km_point_put_u32(&w, 0);
	km_point_put_u64(&w, 0);
	w.len += at->model_len;
	for (int s = 0; s < 2; s++)
	{
		km_point_put_u64(&w, 0);
		w.len += at->niv[s] * (2 * sizeof(uint64_t) + sizeof(uint32_t));
	}
	return w.len;
}

static void
score_point_write(const km_pass *pass, unsigned char *out)
{
	const score_at *at = pass->at;
	km_point_writer w = {out, 0};

	km_point_put_u32(&w, (at->metrics ? 1u : 0u) | (at->train ? 2u : 0u));
	km_point_put_u64(&w, at->model_len);
	km_point_put(&w, at->model, at->model_len);
	for (int s = 0; s < 2; s++)
	{
		km_point_put_u64(&w, at->niv[s]);
		for (size_t j = 0; j < at->niv[s]; j++)
		{
			km_point_put_u64(&w, at->iv[s][j].lo);
			km_point_put_u64(&w, at->iv[s][j].hi);
			km_point_put_u32(&w, at->iv[s][j].b);
		}
	}
}

/* at's model decoded from its bytes, its scorer and buffers (env's memory). */
static km_status
score_at_model(score_at *at, const km_train_env *env, km_error *err)
{
	km_model_shape shape;
	const km_method_ops *ops;
	const char *hint = NULL;
	size_t		sd;

	if (km_model_peek(at->model, at->model_len, &shape, err) != KM_OK)
		return err->status;
	if (km_model_decode(at->model, at->model_len, &at->m,
						env->alloc(env->ctx, sizeof(double) * km_model_storage_doubles(&shape) + 1),
						err) != KM_OK)
		return err->status;
	if (at->m.n_classes < 2 || at->m.n_classes > 4096)
		return km_fail(err, KM_ERR_INVALID, "the model is not a classifier",
					   "A scoring pass scores a model of classes; this one has %u.",
					   (unsigned) at->m.n_classes);
	at->k = at->m.n_classes;
	sd = km_scorer_doubles(&at->m);
	if (sd == 0)
		return km_fail(err, KM_ERR_INVALID, "the model is too large to score",
					   "Its scorer would need more memory than can be counted.");
	km_scorer_prepare(&at->sc, &at->m, env->alloc(env->ctx, sizeof(double) * sd));
	ops = km_method_get(at->m.method);
	at->link = KM_PROB_NONE;
	if (ops != NULL && ops->prob_link != NULL)
		at->link = ops->prob_link(at->m.has_probability, at->m.multiclass, &hint);
	at->proba = at->link != KM_PROB_NONE;
	at->f = env->alloc(env->ctx, sizeof(double) * at->m.n_outputs + 1);
	at->p = env->alloc(env->ctx, sizeof(double) * at->k);
	at->pwork = env->alloc(env->ctx, sizeof(double) * (km_classify_proba_work_doubles(at->k) + 1));
	return KM_OK;
}

/* The pass over at (its intervals' bins numbered). */
static km_pass *
score_pass_of(score_at *at, const km_train_env *env)
{
	km_pass    *p = env->alloc(env->ctx, sizeof(km_pass));

	at->nbins = 0;
	for (int s = 0; s < 2; s++)
		for (size_t j = 0; j < at->niv[s]; j++)
		{
			at->iv[s][j].first = at->nbins;
			at->nbins += at->iv[s][j].b;
		}
	memset(p, 0, sizeof(*p));
	snprintf(p->what, sizeof(p->what), "score: %s%zu bins", at->metrics ? "sums, " : "", at->nbins);
	p->side = KM_SIDE_ALL;
	p->fold = -1;
	p->chunk = 0;
	p->state_bytes = sizeof(double) * (2 * side_doubles(at->k) + 4 * at->nbins);
	p->at = at;
	p->init = score_init;
	p->add = score_add;
	p->combine = score_combine;
	p->interrupt = env->interrupt;
	p->alloc = env->alloc;
	p->alloc_ctx = env->ctx;
	p->kind = KM_PASS_KIND_SCORE;
	p->point_bytes = score_point_bytes;
	p->point_write = score_point_write;
	return p;
}

km_status
km_score_pass_rebuild(km_point_reader *r, const km_train_env *env, km_pass **out,
					  km_error *err)
{
	score_at   *at = env->alloc(env->ctx, sizeof(score_at));
	uint32_t	flags = km_point_get_u32(r);
	uint64_t	len = km_point_get_u64(r);
	size_t		total = 0;

	*out = NULL;
	memset(at, 0, sizeof(*at));
	if (r->bad || flags > 3u || len > r->left)
		return km_point_bad(err, "scoring");
	at->metrics = (flags & 1u) != 0;
	at->train = (flags & 2u) != 0;
	at->model_len = (size_t) len;
	at->model = r->p;
	r->p += len;
	r->left -= len;
	for (int s = 0; s < 2; s++)
	{
		uint64_t	n = km_point_get_u64(r);

		if (r->bad || n > KM_SCORE_BINS || n > r->left / 20)
			return km_point_bad(err, "scoring");
		at->niv[s] = (size_t) n;
		at->iv[s] = env->alloc(env->ctx, sizeof(score_iv) * (n + 1));
		for (size_t j = 0; j < n; j++)
		{
			score_iv   *v = &at->iv[s][j];

			v->lo = km_point_get_u64(r);
			v->hi = km_point_get_u64(r);
			v->b = km_point_get_u32(r);
			/* sorted, disjoint, each of 1 to hi - lo + 1 bins, at most KM_SCORE_BINS in all */
			if (r->bad || v->lo > v->hi || v->b < 1 || v->b > KM_SCORE_BINS ||
				(uint64_t) (v->b - 1) > v->hi - v->lo ||
				(j > 0 && v->lo <= at->iv[s][j - 1].hi))
				return km_point_bad(err, "scoring");
			total += v->b;
			if (total > KM_SCORE_BINS)
				return km_point_bad(err, "scoring");
		}
	}
	if (r->left != 0)
		return km_point_bad(err, "scoring");
	if (score_at_model(at, env, err) != KM_OK)
		return err->status;
	if ((at->niv[0] > 0 || at->niv[1] > 0) && at->k != 2)
		return km_point_bad(err, "scoring");
	*out = score_pass_of(at, env);
	return KM_OK;
}

/* An interval of a side left to split: its keys and rows. */
typedef struct pending_iv
{
	uint64_t	lo;
	uint64_t	hi;
	double		rows;
} pending_iv;

/* A side's AUC work: its Mann-Whitney count (twice), its intervals left. */
typedef struct auc_side
{
	uint64_t	u2;
	double		npos;
	double		nneg;
	pending_iv *left;
	size_t		nleft;
	size_t		cap;
} auc_side;

static void
side_push(auc_side *a, const km_train_env *env, uint64_t lo, uint64_t hi, double rows)
{
	if (a->nleft == a->cap)
	{
		size_t		cap = a->cap ? 2 * a->cap : 64;
		pending_iv *n = env->alloc(env->ctx, sizeof(pending_iv) * cap);

		if (a->nleft > 0)
			memcpy(n, a->left, sizeof(pending_iv) * a->nleft);
		if (a->left != NULL)
			env->release(env->ctx, a->left);
		a->left = n;
		a->cap = cap;
	}
	a->left[a->nleft].lo = lo;
	a->left[a->nleft].hi = hi;
	a->left[a->nleft].rows = rows;
	a->nleft++;
}

static int
pending_cmp(const void *x, const void *y)
{
	uint64_t	a = ((const pending_iv *) x)->lo;
	uint64_t	b = ((const pending_iv *) y)->lo;

	return a < b ? -1 : a > b;
}

/* Is v a count a state may hold: finite, whole, from 0 to 2^53? */
static bool
is_count(double v)
{
	return v >= 0.0 && v <= 9007199254740992.0 && v == floor(v);
}

/*
 * The bins of interval v counted: pairs across bins, ties, and the bins
 * left to split.  false when a bin is not one of v's (its counts not
 * counts, its keys outside its own range): states come from other
 * processes.
 */
static bool
side_take(auc_side *a, const score_iv *v, const double *bins, pending_iv *next,
		  size_t *nnext)
{
	double		below = 0.0;
	uint64_t	w = v->b <= 1 ? 0 : (v->hi - v->lo) / v->b + 1;

	for (uint32_t t = 0; t < v->b; t++)
	{
		const double *bin = bins + 4 * (size_t) t;
		uint64_t	lo;
		uint64_t	hi;
		uint64_t	own_lo = v->b <= 1 ? v->lo : v->lo + (uint64_t) t * w;
		uint64_t	own_hi = v->b <= 1 || w - 1 >= v->hi - own_lo ? v->hi : own_lo + w - 1;

		if (!is_count(bin[0]) || !is_count(bin[1]))
			return false;
		a->u2 += 2 * (uint64_t) bin[0] * (uint64_t) below;
		below += bin[1];
		if (bin[0] + bin[1] == 0.0)
			continue;
		memcpy(&lo, &bin[2], sizeof(lo));
		memcpy(&hi, &bin[3], sizeof(hi));
		if (lo > hi || lo < own_lo || hi > own_hi)
			return false;
		if (bin[0] == 0.0 || bin[1] == 0.0)
			continue;
		if (lo == hi)
			a->u2 += (uint64_t) bin[0] * (uint64_t) bin[1];
		else
		{
			next[*nnext].lo = lo;
			next[*nnext].hi = hi;
			next[*nnext].rows = bin[0] + bin[1];
			(*nnext)++;
		}
	}
	return true;
}

/* The AUC from the exact count, in km_auc's arithmetic. */
static double
side_auc(const auc_side *a)
{
	double		n = a->npos + a->nneg;
	double		rank_sum;

	if (a->npos == 0.0 || a->nneg == 0.0)
		return NAN;
	rank_sum = (double) a->u2 / 2.0 + a->npos * (a->npos + 1.0) / 2.0;
	return (rank_sum - a->npos * (a->npos + 1.0) / 2.0) / (a->npos * (n - a->npos));
}

/* The sums of a side's state into its scores; false when they are not counts. */
static bool
side_metrics(const double *s, km_class_side_scores *out)
{
	km_class_metrics *cm = &out->cm;
	uint32_t	k = cm->k;

	for (size_t i = 0; i < SIDE_HEAD + (size_t) k * k; i++)
		if (i != 3 && !is_count(s[i]))
			return false;
	if (!(s[3] >= 0.0 && s[3] < HUGE_VAL))
		return false;

	cm->n = (size_t) s[0];
	cm->correct = (size_t) s[1];
	cm->n_proba = (size_t) s[2];
	cm->log_loss_sum = s[3];
	out->unknown = (uint64_t) s[4];
	for (size_t i = 0; i < (size_t) k * k; i++)
		cm->confusion[i] = (uint64_t) s[SIDE_HEAD + i];
	return true;
}

static km_status
bad_state(km_error *err)
{
	return km_fail(err, KM_ERR_INVALID, "a scoring pass returned a state that is not one",
				   "Its counts are not whole numbers, or a bin's scores lie outside the bin.");
}

km_status
km_class_score(const km_host *host, const uint8_t *model, size_t len,
			   km_class_side_scores *held, km_class_side_scores *train,
			   const km_train_env *env, int *passes, km_error *err)
{
	score_at   *at = env->alloc(env->ctx, sizeof(score_at));
	auc_side	auc[2];
	km_class_side_scores *out[2] = {train, held};
	bool		first = true;

	memset(at, 0, sizeof(*at));
	memset(auc, 0, sizeof(auc));
	*passes = 0;
	at->model = model;
	at->model_len = len;
	at->train = train != NULL;
	if (score_at_model(at, env, err) != KM_OK)
		return err->status;
	for (int s = 0; s < 2; s++)
	{
		at->iv[s] = env->alloc(env->ctx, sizeof(score_iv) * KM_SCORE_BINS);
		if (out[s] != NULL)
			out[s]->auc = NAN;
	}
	for (;;)
	{
		km_pass    *pass;
		double	   *state;
		double	   *bins;
		size_t		rows;
		size_t		budget = KM_SCORE_BINS;

		at->metrics = first;
		for (int s = 0; s < 2; s++)
		{
			at->niv[s] = 0;
			if (out[s] == NULL || at->k != 2)
				continue;
			if (first)
			{
				/* every key, one bin: the side's counts and range */
				at->iv[s][0].lo = 0;
				at->iv[s][0].hi = UINT64_MAX;
				at->iv[s][0].b = 1;
				at->niv[s] = 1;
				budget--;
				continue;
			}
			/* the intervals left, in key order, about two bins a row, while the budget lasts */
			while (at->niv[s] < auc[s].nleft && budget >= 2)
			{
				pending_iv *l = &auc[s].left[at->niv[s]];
				score_iv   *v = &at->iv[s][at->niv[s]];
				double		want = fmin(2.0 * l->rows, (double) budget);

				v->lo = l->lo;
				v->hi = l->hi;
				v->b = (uint32_t) want;
				if ((uint64_t) (v->b - 1) > l->hi - l->lo)
					v->b = (uint32_t) (l->hi - l->lo + 1);
				budget -= v->b;
				at->niv[s]++;
			}
		}
		if (!first && at->niv[0] == 0 && at->niv[1] == 0)
			break;
		pass = score_pass_of(at, env);
		state = env->alloc(env->ctx, pass->state_bytes);
		if (km_pass_run(host, pass, state, &rows, err) != KM_OK)
			return err->status;
		(*passes)++;
		bins = bins_of(pass, state);
		for (int s = 0; s < 2; s++)
		{
			auc_side   *a = &auc[s];
			size_t		nnext = 0;
			pending_iv *next;

			if (out[s] == NULL)
				continue;
			if (first && !side_metrics(state + s * side_doubles(at->k), out[s]))
				return bad_state(err);
			if (at->niv[s] == 0)
				continue;
			if (first)
			{
				a->npos = bins[4 * at->iv[s][0].first];
				a->nneg = bins[4 * at->iv[s][0].first + 1];
			}
			next = env->alloc(env->ctx, sizeof(pending_iv) * (at->nbins + 1));
			for (size_t j = 0; j < at->niv[s]; j++)
				if (!side_take(a, &at->iv[s][j], bins + 4 * at->iv[s][j].first, next, &nnext))
					return bad_state(err);
			/* the intervals not taken this pass stay first in line, the new ones after */
			{
				size_t		done = at->niv[s];
				size_t		rest = a->nleft - (first ? 0 : done);
				auc_side	b = {0};

				if (first)
					rest = 0;
				for (size_t j = 0; j < rest; j++)
					side_push(&b, env, a->left[done + j].lo, a->left[done + j].hi,
							  a->left[done + j].rows);
				for (size_t j = 0; j < nnext; j++)
					side_push(&b, env, next[j].lo, next[j].hi, next[j].rows);
				/* disjoint; sorted, so that a pass's intervals are in key order */
				if (b.nleft > 1)
					qsort(b.left, b.nleft, sizeof(pending_iv), pending_cmp);
				if (a->left != NULL)
					env->release(env->ctx, a->left);
				a->left = b.left;
				a->nleft = b.nleft;
				a->cap = b.cap;
			}
			env->release(env->ctx, next);
		}
		env->release(env->ctx, state);
		first = false;
	}
	for (int s = 0; s < 2; s++)
		if (out[s] != NULL && at->k == 2)
			out[s]->auc = side_auc(&auc[s]);
	return KM_OK;
}
