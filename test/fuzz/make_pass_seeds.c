/*
 * Writes real pass points (learn/pass.h kind and point_write) to the
 * directory given as argv[1], as test/fuzz/fuzz_pass.c reads them: the
 * kind in 2 bytes (little-endian), then the point.  Small models are
 * trained through the learner (learner.h km_learn) over a host of plain
 * arrays that records the point of every pass it is asked to run (at
 * most PER_KIND per kind and case): nystrom and rff ridge (kinds 1, 2),
 * ridge by "solver": "cg" (11, 12; 18 with m = 80 of 400 rows), svr with k-fold (3 to 6), a 3-class
 * logistic with k-fold, its folds the learner's and the host's (7, 9,
 * 10; kind 8's points are kind 7's, the same fields), the drift sums of a
 * model (13), Newton-CG ("solver": "cg") of svr (3, 15, 4) and of a
 * binary logistic (7, 16, 8), a binary classifier's scoring passes (17) and
 * a regression model's (19).
 * Rows have D features, so that the fuzzer's blocks of D features reach
 * the adds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drift.h"
#include "learn/drift_pass.h"
#include "learn/learner.h"
#include "learn/score_pass.h"
#include "learn/score_regression.h"
#include "model.h"
#include "options_core.h"
#include "pipeline.h"

#define D 3
#define PER_KIND 3
#define MAX_KIND 64

static const char *out_dir;
static const char *case_name;
static int	written[MAX_KIND];
static int	case_written[MAX_KIND];	/* this case's */

/* memory of one training, freed together */
typedef struct arena
{
	void	  **p;
	size_t		count;
	size_t		cap;
} arena;

static void *
arena_alloc(void *ctx, size_t bytes)
{
	arena	   *a = ctx;

	if (a->count == a->cap)
	{
		a->cap = a->cap ? 2 * a->cap : 64;
		a->p = realloc(a->p, a->cap * sizeof(void *));
	}
	a->p[a->count] = calloc(1, bytes ? bytes : 1);
	if (a->p[a->count] == NULL)
		abort();
	return a->p[a->count++];
}

static void
arena_release(void *ctx, void *p)
{
}

static double *
arena_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	return arena_alloc(ctx, doubles * sizeof(double));
}

static void
arena_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
}

static void
arena_free(arena *a)
{
	while (a->count > 0)
		free(a->p[--a->count]);
	free(a->p);
	memset(a, 0, sizeof(*a));
}

static km_train_env
arena_env(arena *a)
{
	km_train_env env = {a, arena_alloc, arena_release, arena_workspace,
	arena_release_workspace, NULL, NULL};

	return env;
}

static void
record(const km_pass *pass)
{
	char		path[4096];
	size_t		len;
	unsigned char *buf;
	FILE	   *f;

	if (pass->kind == 0 || pass->kind >= MAX_KIND || pass->point_bytes == NULL ||
		case_written[pass->kind] >= PER_KIND)
		return;
	case_written[pass->kind]++;
	len = pass->point_bytes(pass);
	buf = malloc(len + 2);
	buf[0] = (unsigned char) (pass->kind & 0xff);
	buf[1] = (unsigned char) (pass->kind >> 8);
	pass->point_write(pass, buf + 2);
	snprintf(path, sizeof(path), "%s/kind%02u_%s_%d", out_dir, (unsigned) pass->kind,
			 case_name, written[pass->kind]);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, len + 2, f) != len + 2)
	{
		perror(path);
		exit(1);
	}
	fclose(f);
	written[pass->kind]++;
	if (pass->kind == 7 && case_written[8] < PER_KIND)
	{
		case_written[8]++;
		/* the metrics pass's point is the Newton pass's (class_point_put) */
		buf[0] = 8;
		snprintf(path, sizeof(path), "%s/kind08_%s_%d", out_dir, case_name, written[8]++);
		f = fopen(path, "wb");
		if (f == NULL || fwrite(buf, 1, len + 2, f) != len + 2)
		{
			perror(path);
			exit(1);
		}
		fclose(f);
	}
	free(buf);
}

/* the unit tests' array host (test/unit/unit_host.c), recording each pass's point */
static km_status
array_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	const km_rows *r = ctx;
	const uint32_t *cls = r->classes ? r->classes->cls : NULL;

	record(pass);
	for (size_t i0 = 0; i0 < r->n; i0 += KM_BLOCK_ROWS)
	{
		km_block	b = {.n = r->n - i0 < KM_BLOCK_ROWS ? r->n - i0 : KM_BLOCK_ROWS,
			.d = r->d, .X = r->X + i0 * (size_t) r->d,
			.y = r->y ? r->y + i0 : NULL, .cls = cls ? cls + i0 : NULL,
			.hash = r->hash ? r->hash + i0 : NULL,
		.fold = r->fold ? r->fold + i0 : NULL};

		if (km_pass_feed(pass, &b, state, err) != KM_OK)
			return err->status;
	}
	return KM_OK;
}

/* the scoring passes' host: the rows with their class ids and sides (every fifth held out) */
static const km_rows *score_rows;

static km_status
score_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	(void) ctx;
	const km_rows *r = score_rows;
	static uint8_t held[KM_BLOCK_ROWS];

	record(pass);
	for (size_t i0 = 0; i0 < r->n; i0 += KM_BLOCK_ROWS)
	{
		km_block	b = {.n = r->n - i0 < KM_BLOCK_ROWS ? r->n - i0 : KM_BLOCK_ROWS,
			.d = r->d, .X = r->X + i0 * (size_t) r->d, .cls = r->classes->cls + i0,
		.held = held};

		for (size_t i = 0; i < b.n; i++)
			held[i] = (i0 + i) % 5 == 0;
		if (km_pass_feed(pass, &b, state, err) != KM_OK)
			return err->status;
	}
	return KM_OK;
}

static km_options
options(const char *const *kv, int pairs)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;

	km_options_begin(&parser, &opts);
	for (int i = 0; i < pairs; i++)
	{
		km_value	v;
		char	   *end;

		memset(&v, 0, sizeof(v));
		v.text = kv[2 * i + 1];
		v.number = strtod(v.text, &end);
		v.type = *end == '\0' ? KM_VALUE_NUMBER : KM_VALUE_STRING;
		v.string = v.text;
		if (!km_options_set(&parser, kv[2 * i], &v, &oerr))
		{
			fprintf(stderr, "%s: %s\n", kv[2 * i], oerr.message);
			exit(1);
		}
	}
	if (!km_options_finish(&parser, &oerr))
	{
		fprintf(stderr, "%s\n", oerr.message);
		exit(1);
	}
	return opts;
}

/* Train o on rows (k classes or 0) into m, recording passes as name. */
static void
learn(const char *name, const km_options *o, const km_rows *rows, uint32_t k,
	  arena *a, km_model *m)
{
	km_train_env env = arena_env(a);
	km_train_plan plan;
	km_error	err;
	km_host		host = {.ctx = (void *) rows, .rows = rows->n, .folds = rows->fold != NULL,
	.run = array_run};

	case_name = name;
	memset(case_written, 0, sizeof(case_written));
	memset(m, 0, sizeof(*m));
	km_train_plan_make(o, rows->n, rows->d, k, &plan);
	if (km_learn(rows, &host, &plan, &env, m, &err) != KM_OK)
	{
		fprintf(stderr, "%s: %s: %s\n", name, err.message, err.detail);
		exit(1);
	}
}

int
main(int argc, char **argv)
{
	size_t		n = 120;
	double	   *X = malloc(sizeof(double) * n * D);
	double	   *y = malloc(sizeof(double) * n);
	int		   *fold = malloc(sizeof(int) * n);
	uint32_t   *cls = malloc(sizeof(uint32_t) * n);
	uint64_t   *hash = malloc(sizeof(uint64_t) * n);
	uint64_t	counts[3] = {0, 0, 0};
	double		class_w[3] = {1, 1, 1};
	km_class_fit_result res;
	km_class_rows c;
	km_rows		rows = {NULL, n, D, X, y, NULL, NULL, 0, hash};
	unsigned long long s = 12345;
	const char *const ridge_kv[] = {"approximation", "nystrom", "components", "6",
	"gamma", "0.5", "lambda", "0.01"};
	const char *const rff_kv[] = {"approximation", "rff", "components", "5", "gamma", "0.5"};
	const char *const cg_kv[] = {"approximation", "nystrom", "components", "6",
	"lambda", "0.01", "solver", "cg"};
	const char *const svr_kv[] = {"method", "svr", "approximation", "nystrom",
	"components", "5", "gamma", "0.5", "cv", "3"};
	const char *const log_kv[] = {"method", "logistic", "approximation", "rff",
	"components", "5", "gamma", "0.5", "cv", "3"};
	const char *const svr_cg_kv[] = {"method", "svr", "approximation", "nystrom",
	"components", "5", "gamma", "0.5", "lambda", "0.01", "solver", "cg"};
	const char *const log_cg_kv[] = {"method", "logistic", "approximation", "rff",
	"components", "5", "gamma", "0.5", "lambda", "0.01", "solver", "cg"};
	uint32_t   *cls2 = malloc(sizeof(uint32_t) * n);
	uint64_t	counts2[2] = {0, 0};
	km_options	o;
	km_model	m;
	arena		a = {0};

	if (argc != 2)
	{
		fprintf(stderr, "usage: %s directory\n", argv[0]);
		return 2;
	}
	out_dir = argv[1];
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	z = (uint64_t) (i + 1) * UINT64_C(0x9E3779B97F4A7C15);

		cls[i] = (uint32_t) ((i * 7) % 3);
		counts[cls[i]]++;
		for (int j = 0; j < D; j++)
		{
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
			X[i * D + j] = (double) (s >> 11) / 9007199254740992.0 - 0.5 +
				(j == 0 ? (double) cls[i] : 0.0);
		}
		y[i] = sin(3.0 * X[i * D]) + 0.5 * X[i * D + 1];
		fold[i] = (int) ((i * 5) % 3);
		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		hash[i] = z ^ (z >> 31);
	}

	o = options(ridge_kv, 4);
	learn("ridge_nystrom", &o, &rows, 0, &a, &m);
	{
		/* the drift sums of the nystrom model (kind 13) */
		km_train_env env = arena_env(&a);
		uint32_t	J = km_drift_features_of(&m);
		double	   *storage = arena_alloc(&a, sizeof(double) * km_drift_doubles(m.n_features, J));
		km_drift	r;
		km_error	err;

		if (km_drift_from_model(&m, &r, storage, &err) != KM_OK)
		{
			fprintf(stderr, "drift: %s\n", err.message);
			return 1;
		}
		case_name = "drift";
		record(km_drift_pass(&r, &env));
	}
	{
		/* a regression model's scoring pass (kind 19): flags, the model's bytes */
		km_model_shape shape = km_model_shape_of(&m);
		size_t		len = km_model_size(&shape);
		unsigned char *buf = malloc(len + 14);
		char		path[4096];
		FILE	   *f;
		uint32_t	flags = 1;
		uint64_t	len64 = len;

		buf[0] = KM_PASS_KIND_SCORE_REGRESSION;
		buf[1] = 0;
		memcpy(buf + 2, &flags, sizeof(flags));
		memcpy(buf + 6, &len64, sizeof(len64));
		km_model_encode(&m, buf + 14);
		snprintf(path, sizeof(path), "%s/kind%02u_score_regression_0", out_dir,
				 (unsigned) KM_PASS_KIND_SCORE_REGRESSION);
		f = fopen(path, "wb");
		if (f == NULL || fwrite(buf, 1, len + 14, f) != len + 14)
		{
			perror(path);
			return 1;
		}
		fclose(f);
		free(buf);
	}
	arena_free(&a);

	o = options(rff_kv, 3);
	learn("ridge_rff", &o, &rows, 0, &a, &m);
	arena_free(&a);

	o = options(cg_kv, 4);
	learn("ridge_cg", &o, &rows, 0, &a, &m);
	arena_free(&a);

	{
		/* 4,000 rows, m = 40: the preconditioner's row sample (kind 18), 2,560 rows */
		size_t		n2 = 4000;
		double	   *X2 = malloc(sizeof(double) * n2 * D);
		double	   *y2 = malloc(sizeof(double) * n2);
		uint64_t   *hash2 = malloc(sizeof(uint64_t) * n2);
		km_rows		rows2 = {NULL, n2, D, X2, y2, NULL, NULL, 0, hash2};
		const char *const cgs_kv[] = {"approximation", "nystrom", "components", "40",
		"lambda", "0.01", "solver", "cg"};

		for (size_t i = 0; i < n2; i++)
		{
			uint64_t	z = (uint64_t) (i + 7) * UINT64_C(0x9E3779B97F4A7C15);

			for (int j = 0; j < D; j++)
			{
				s ^= s << 13;
				s ^= s >> 7;
				s ^= s << 17;
				X2[i * D + j] = (double) (s >> 11) / 9007199254740992.0 - 0.5;
			}
			y2[i] = sin(3.0 * X2[i * D]) + 0.5 * X2[i * D + 1];
			z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
			z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
			hash2[i] = z ^ (z >> 31);
		}
		o = options(cgs_kv, 4);
		learn("ridge_cg_sample", &o, &rows2, 0, &a, &m);
		arena_free(&a);
		free(hash2);
		free(y2);
		free(X2);
	}

	o = options(svr_kv, 5);
	o.lambdas.n = 2;
	o.lambdas.per_row = false;
	o.lambdas.v[0] = 1e-3;
	o.lambdas.v[1] = 1e-1;
	rows.fold = fold;
	learn("svr_cv", &o, &rows, 0, &a, &m);
	arena_free(&a);

	memset(&c, 0, sizeof(c));
	c.X = X;
	c.k = 3;
	c.cls = cls;
	c.labels = "a\0b\0c";
	c.labels_bytes = 6;
	c.counts = counts;
	c.label_type = KM_LABEL_TEXT;
	c.class_w = class_w;
	c.platt_folds = 5;
	c.res = &res;
	o = options(log_kv, 5);
	o.lambdas.n = 2;
	o.lambdas.v[1] = 0.1;
	rows.classes = &c;
	rows.fold = NULL;
	learn("logistic_cv", &o, &rows, 3, &a, &m);
	arena_free(&a);
	/* the host's folds (kind 10), unordered passes; each fold of every class */
	for (size_t i = 0; i < n; i++)
		fold[i] = (int) ((i / 3) % 3);
	rows.fold = fold;
	learn("logistic_folds", &o, &rows, 3, &a, &m);
	arena_free(&a);

	/* Newton-CG: svr (kinds 3, 15, 4), a binary logistic (7, 16, 8) */
	rows.classes = NULL;
	rows.fold = NULL;
	o = options(svr_cg_kv, 6);
	learn("svr_cg", &o, &rows, 0, &a, &m);
	arena_free(&a);
	for (size_t i = 0; i < n; i++)
	{
		cls2[i] = cls[i] == 0 ? 0 : 1;
		counts2[cls2[i]]++;
	}
	c.k = 2;
	c.cls = cls2;
	c.labels = "a\0b";
	c.labels_bytes = 4;
	c.counts = counts2;
	rows.classes = &c;
	o = options(log_cg_kv, 6);
	learn("logistic_cg", &o, &rows, 2, &a, &m);
	arena_free(&a);
	/* a binary classifier's scoring passes (kind 17): the sums, then the AUC's bins */
	{
		uint32_t   *cls2 = malloc(sizeof(uint32_t) * n);
		uint64_t	counts2[2] = {0, 0};
		km_train_env env = arena_env(&a);
		km_host		host = {.ctx = NULL, .rows = n, .run = score_run};
		km_model_shape shape;
		uint8_t    *bytes;
		uint64_t	conf[2][4];
		km_class_side_scores out[2];
		int			passes;
		km_error	err;

		for (size_t i = 0; i < n; i++)
		{
			cls2[i] = cls[i] > 0;
			counts2[cls2[i]]++;
			if (i % 4 == 0)
				for (int j = 0; j < D; j++)
					X[i * D + j] = round(X[i * D + j] * 2.0) / 2.0;	/* ties */
		}
		c.k = 2;
		c.cls = cls2;
		c.labels = "a\0b";
		c.labels_bytes = 4;
		c.counts = counts2;
		rows.fold = NULL;
		o = options(log_kv, 4);
		learn("logistic_binary", &o, &rows, 2, &a, &m);
		shape = km_model_shape_of(&m);
		bytes = arena_alloc(&a, km_model_size(&shape));
		km_model_encode(&m, bytes);
		score_rows = &rows;
		case_name = "score";
		for (int s2 = 0; s2 < 2; s2++)
			km_class_metrics_init(&out[s2].cm, 2, conf[s2]);
		if (km_class_score(&host, bytes, km_model_size(&shape), &out[1], &out[0], &env,
						   &passes, &err) != KM_OK)
		{
			fprintf(stderr, "score: %s: %s\n", err.message, err.detail);
			return 1;
		}
		arena_free(&a);
		free(cls2);
	}

	for (int k = 1; k < MAX_KIND; k++)
		if (written[k] > 0)
			printf("kind %d: %d points\n", k, written[k]);
	return 0;
}
