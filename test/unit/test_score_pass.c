/*
 * test_score_pass.c - a classifier's scores as passes (learn/score_pass.h):
 * on rows with many tied scores, the confusion counts, log-loss and AUC of
 * each side of the split equal those of the row-at-a-time scorer and
 * km_auc (metrics.h) to the bit, and equal again when the rows come in
 * another order, in other blocks, and in three states combined (shards).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "learn/score_pass.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "options_core.h"
#include "pipeline.h"
#include "score.h"
#include "unit.h"
#include "unit_arena.h"
#include "unit_host.h"

void		test_score_pass_exact(void);

#define N 1500
#define DIM 3

/* Rows handed in blocks of `block`, in the order of perm, over `parts` states combined. */
typedef struct score_host
{
	const double *X;
	const uint32_t *cls;
	const uint8_t *held;
	const size_t *perm;
	size_t		block;
	int			parts;
} score_host;

static km_status
score_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	const score_host *h = ctx;
	static double X[KM_BLOCK_ROWS * DIM];
	static uint32_t cls[KM_BLOCK_ROWS];
	static uint8_t held[KM_BLOCK_ROWS];
	void	   *part = malloc(pass->state_bytes);

	for (int p = 0; p < h->parts; p++)
	{
		size_t		lo = (size_t) N * p / h->parts;
		size_t		hi = (size_t) N * (p + 1) / h->parts;
		void	   *into = p == 0 ? state : part;

		if (p > 0)
		{
			pass->init(pass, part);
			pass->rows_done = 0;
		}
		for (size_t i0 = lo; i0 < hi; i0 += h->block)
		{
			size_t		n = hi - i0 < h->block ? hi - i0 : h->block;
			km_block	b = {.n = n, .d = DIM, .X = X, .cls = cls, .held = held};

			for (size_t i = 0; i < n; i++)
			{
				size_t		r = h->perm[i0 + i];

				memcpy(X + i * DIM, h->X + r * DIM, sizeof(double) * DIM);
				cls[i] = h->cls[r];
				held[i] = h->held[r];
			}
			if (pass->add(pass, &b, i0, into, err) != KM_OK)
			{
				free(part);
				return err->status;
			}
			pass->rows_done += n;
		}
		if (p > 0 && km_pass_combine(pass, state, part, err) != KM_OK)
		{
			free(part);
			return err->status;
		}
	}
	free(part);
	return KM_OK;
}

void
test_score_pass_exact(void)
{
	double	   *X = malloc(sizeof(double) * N * DIM);
	uint32_t   *cls = malloc(sizeof(uint32_t) * N);
	uint32_t   *host_cls = malloc(sizeof(uint32_t) * N);
	uint8_t    *held = malloc(N);
	uint64_t   *hash = malloc(sizeof(uint64_t) * N);
	size_t	   *perm = malloc(sizeof(size_t) * N);
	size_t	   *rev = malloc(sizeof(size_t) * N);
	double	   *sc[2];
	bool	   *pos[2];
	size_t		nsc[2] = {0, 0};
	uint64_t	counts[2] = {0, 0};
	double		class_w[2] = {1, 1};
	unsigned long long s = 99;
	km_class_rows c;
	km_class_fit_result res;
	km_rows		rows = {0};
	km_options	o;
	km_train_plan plan;
	km_model	m;
	km_model	dm;
	km_scorer	scorer;
	km_error	err;
	unit_arena	a = {0};
	unit_arena	b = {0};
	km_train_env env = unit_arena_env(&a);
	km_train_env env2 = unit_arena_env(&b);
	km_model_shape shape;
	uint8_t    *bytes;
	size_t		len;
	uint64_t	conf_ref[2][4] = {{0}};
	km_class_metrics ref[2];
	double		f[2];
	double		p[2];
	double		pwork[64];
	const km_method_ops *ops;
	const char *hint = NULL;
	km_prob_link link;

	for (size_t i = 0; i < N; i++)
	{
		uint64_t	z = (uint64_t) (i + 1) * UINT64_C(0x9E3779B97F4A7C15);

		for (int j = 0; j < DIM; j++)
			X[i * DIM + j] = unit_urand(&s);
		/* a third of the rows on a coarse grid: identical rows, tied scores */
		if (i % 3 == 0)
			for (int j = 0; j < DIM; j++)
				X[i * DIM + j] = round(X[i * DIM + j] * 4.0) / 4.0;
		cls[i] = X[i * DIM] + 0.3 * unit_urand(&s) > 0.0 ? 1 : 0;
		counts[cls[i]]++;
		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		hash[i] = z ^ (z >> 31);
		held[i] = hash[i] % 10 < 3;
		/* every 50th row's label is one the model lacks */
		host_cls[i] = i % 50 == 7 ? 2 : cls[i];
		perm[i] = i;
		rev[i] = (i * 7919) % N;	/* a permutation: 7919 is prime to 1500 */
	}
	memset(&c, 0, sizeof(c));
	c.X = X;
	c.k = 2;
	c.cls = cls;
	c.labels = "no\0yes";
	c.labels_bytes = 7;
	c.counts = counts;
	c.label_type = KM_LABEL_TEXT;
	c.class_w = class_w;
	c.platt_folds = 5;
	c.res = &res;
	{
		const char *const kv[] = {"method", "logistic", "approximation", "rff",
		"components", "12", "gamma", "2"};
		km_options_parser parser;
		km_option_error oerr;

		km_options_begin(&parser, &o);
		for (int i = 0; i < 4; i++)
		{
			km_value	v;
			char	   *end;

			memset(&v, 0, sizeof(v));
			v.text = kv[2 * i + 1];
			v.number = strtod(v.text, &end);
			v.type = *end == '\0' ? KM_VALUE_NUMBER : KM_VALUE_STRING;
			v.string = v.text;
			CHECK(km_options_set(&parser, kv[2 * i], &v, &oerr), "%s", oerr.message);
		}
		CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	}
	rows.classes = &c;
	rows.n = N;
	rows.d = DIM;
	rows.X = X;
	rows.hash = hash;
	km_train_plan_make(&o, N, DIM, 2, &plan);
	CHECK(unit_learn(&rows, &plan, &env, &m, &err) == KM_OK, "%s: %s", err.message, err.detail);
	shape = km_model_shape_of(&m);
	len = km_model_size(&shape);
	bytes = unit_arena_alloc(&a, len);
	km_model_encode(&m, bytes);
	CHECK(km_model_decode(bytes, len, &dm,
						  unit_arena_alloc(&a, sizeof(double) * km_model_storage_doubles(&shape)),
						  &err) == KM_OK, "%s", err.message);
	km_scorer_prepare(&scorer, &dm, unit_arena_alloc(&a, sizeof(double) * km_scorer_doubles(&dm)));
	ops = km_method_get(dm.method);
	link = ops->prob_link(dm.has_probability, dm.multiclass, &hint);
	CHECK(link != KM_PROB_NONE, "logistic gives probabilities");

	/* the reference: a row at a time, in order (class_scorer_add's) */
	for (int side = 0; side < 2; side++)
	{
		km_class_metrics_init(&ref[side], 2, conf_ref[side]);
		sc[side] = malloc(sizeof(double) * N);
		pos[side] = malloc(N);
	}
	for (size_t i = 0; i < N; i++)
	{
		int			side = held[i];
		uint32_t	pred;

		if (host_cls[i] == 2)
			continue;
		CHECK(km_scorer_decision(&scorer, X + i * DIM, f, &err) == KM_OK, "%s", err.message);
		pred = km_classify_decide(dm.multiclass, 2, f);
		CHECK(km_classify_proba(link, dm.multiclass, 2, f, dm.prob_A, dm.prob_B, p, pwork,
								&err) == KM_OK, "%s", err.message);
		km_class_metrics_add(&ref[side], host_cls[i], pred, p);
		sc[side][nsc[side]] = p[1];
		pos[side][nsc[side]++] = host_cls[i] == 1;
	}

	for (int run = 0; run < 3; run++)
	{
		score_host h = {X, host_cls, held, run == 0 ? perm : rev,
		run == 0 ? KM_BLOCK_ROWS : run == 1 ? 97 : 13, run == 2 ? 3 : 1};
		km_host		host = {.ctx = &h, .rows = N, .run = score_run};
		uint64_t	conf[2][4];
		km_class_side_scores out[2];
		int			passes = 0;

		for (int side = 0; side < 2; side++)
			km_class_metrics_init(&out[side].cm, 2, conf[side]);
		CHECK(km_class_score(&host, bytes, len, &out[1], &out[0], &env2, &passes, &err) == KM_OK,
			  "%s: %s", err.message, err.detail);
		CHECK(passes > 1, "run %d: %d passes", run, passes);
		for (int side = 0; side < 2; side++)
		{
			void	   *work = malloc(km_auc_work_bytes(nsc[side]));
			double		want = km_auc(sc[side], pos[side], nsc[side], work);

			free(work);

			CHECK(out[side].auc == want, "run %d side %d: auc %.17g, km_auc %.17g",
				  run, side, out[side].auc, want);
			CHECK(out[side].cm.n == ref[side].n && out[side].cm.correct == ref[side].correct &&
				  out[side].cm.n_proba == ref[side].n_proba,
				  "run %d side %d: %zu rows", run, side, out[side].cm.n);
			CHECK(memcmp(conf[side], conf_ref[side], sizeof(conf[side])) == 0,
				  "run %d side %d: confusion", run, side);
			if (run == 0)
				CHECK(out[side].cm.log_loss_sum == ref[side].log_loss_sum,
					  "side %d: log-loss sum %.17g vs %.17g", side,
					  out[side].cm.log_loss_sum, ref[side].log_loss_sum);
			else
				CHECK_CLOSE(out[side].cm.log_loss_sum, ref[side].log_loss_sum, 1e-12);
			CHECK(out[side].unknown > 0,
				  "side %d: %llu unknown", side, (unsigned long long) out[side].unknown);
		}
		unit_arena_free(&b);
	}
	for (int side = 0; side < 2; side++)
	{
		free(sc[side]);
		free(pos[side]);
	}
	unit_arena_free(&a);
	free(X);
	free(cls);
	free(host_cls);
	free(held);
	free(hash);
	free(perm);
	free(rev);
}
