/*
 * test_pca_section.c - kernel PCA through the learner (the road of a task
 * without a target, src/core/learn/pipeline_rows.c) and its PCA section
 * (model_sections_pca.c): the exact model is km_kpca_fit's, bit for bit,
 * and scores km_kpca_transform's coordinates; nystrom with every row a
 * centre gives the exact coordinates within 1e-6 (each component's sign
 * aside); the section survives encoding; crafted sections and a transform
 * model without one are refused.  (The numbers against scikit-learn:
 * test_kpca.c and test/crosscheck/crosscheck.py kpca.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "methods/kpca.h"
#include "model.h"
#include "options_core.h"
#include "pipeline.h"
#include "score.h"
#include "unit.h"
#include "unit_arena.h"
#include "unit_host.h"

void		test_pca_learner(void);
void		test_pca_section_crafted(void);

#define N 40
#define D 3
#define K 3

static km_options
pca_options(const char *approximation)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;
	const char *keys[] = {"method", "dimensions", "gamma", "standardize",
	"approximation", "components"};
	km_value	v[6];

	memset(v, 0, sizeof(v));
	v[0].type = KM_VALUE_STRING;
	v[0].string = v[0].text = "pca";
	v[1].type = KM_VALUE_NUMBER;
	v[1].number = K;
	v[1].text = "3";
	v[2].type = KM_VALUE_NUMBER;
	v[2].number = 0.5;
	v[2].text = "0.5";
	v[3].type = KM_VALUE_BOOL;
	v[3].text = "false";
	v[4].type = KM_VALUE_STRING;
	v[4].string = v[4].text = approximation;
	v[5].type = KM_VALUE_NUMBER;
	v[5].number = 100;
	v[5].text = "100";
	km_options_begin(&parser, &opts);
	for (int i = 0; i < (approximation ? 6 : 4); i++)
		CHECK(km_options_set(&parser, keys[i], &v[i], &oerr), "%s: %s", keys[i], oerr.message);
	CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	return opts;
}

static uint64_t *
hashes(size_t n)
{
	uint64_t   *h = malloc(n * sizeof(uint64_t));

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	z = (uint64_t) (i + 1) * UINT64_C(0x9E3779B97F4A7C15);

		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		h[i] = z ^ (z >> 31);
	}
	return h;
}

/* km_learn of opts on the rows; each row's K coordinates into Z. */
static km_model
learn(const km_options *o, const km_rows *rows, unit_arena *a, double *Z,
	  km_kernel *kern)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_model	m;
	km_error	err;
	km_scorer	s;

	km_train_plan_make(o, rows->n, rows->d, 0, &plan);
	if (kern)
		*kern = plan.opts.fit.kernel;	/* resolved */
	CHECK(unit_learn(rows, &plan, &env, &m, &err) == KM_OK, "%s: %s", err.message, err.detail);
	CHECK(m.n_outputs == K && m.eigenvalues != NULL, "%u outputs", m.n_outputs);
	km_scorer_prepare(&s, &m, unit_arena_alloc(a, km_scorer_doubles(&m) * sizeof(double)));
	for (size_t i = 0; i < rows->n; i++)
		CHECK(km_scorer_decision(&s, rows->X + i * rows->d, Z + i * K, &err) == KM_OK,
			  "%s", err.message);
	return m;
}

static uint8_t *
encode(const km_model *m, size_t *len)
{
	km_model_shape s = km_model_shape_of(m);
	uint8_t    *buf;

	*len = km_model_size(&s);
	CHECK(*len > 0, "size");
	buf = malloc(*len);
	km_model_encode(m, buf);
	return buf;
}

void
test_pca_learner(void)
{
	double	   *X = unit_rand_vec(N * D, 31);
	double	   *y = calloc(N, sizeof(double));
	uint64_t   *h = hashes(N);
	km_rows		rows = {NULL, N, D, X, y, NULL, NULL, 0, h};
	km_options	oe = pca_options(NULL);
	km_options	on = pca_options("nystrom");
	unit_arena	a = {0};
	double		Ze[N * K],
				Zn[N * K],
				Zd[N * K],
				z[K];
	double	   *Kg = malloc(N * N * sizeof(double));
	double	   *work = malloc(km_kpca_workspace_doubles(N) * sizeof(double));
	double	   *norms = malloc(N * sizeof(double));
	double		coef[N * K],
				icpt[K],
				eig[K],
				total;
	km_model	me,
				mn,
				back;
	km_error	err;
	uint8_t    *buf;
	size_t		len;
	double	   *storage;
	km_model_shape shape;
	km_scorer	s;
	km_kernel	kern;

	me = learn(&oe, &rows, &a, Ze, &kern);
	/* the exact model is km_kpca_fit's on the same rows (here: not standardized) */
	km_row_norms(&kern, X, N, D, norms);
	CHECK(km_kpca_fit(&kern, X, N, D, K, norms, Kg, work, coef, icpt, eig,
					  &total, &err, NULL) == KM_OK, "%s", err.message);
	CHECK(me.eigen_total == total, "total %.17g vs %.17g", me.eigen_total, total);
	for (int j = 0; j < K; j++)
		CHECK(me.eigenvalues[j] == eig[j] && me.intercepts[j] == icpt[j], "component %d", j);
	for (size_t i = 0; i < N; i++)
	{
		km_kpca_transform(&kern, X, N, D, K, coef, icpt, X + i * D, z);
		for (int j = 0; j < K; j++)
			CHECK_CLOSE(Ze[i * K + j], z[j], 1e-12);
	}
	/* nystrom, every row a centre: the same coordinates up to each sign */
	mn = learn(&on, &rows, &a, Zn, NULL);
	CHECK(mn.approximation != KM_APPROX_EXACT && mn.n_train == N, "nystrom of %u centres", mn.n_train);
	for (int j = 0; j < K; j++)
	{
		double		dot = 0;

		for (size_t i = 0; i < N; i++)
			dot += Ze[i * K + j] * Zn[i * K + j];
		for (size_t i = 0; i < N; i++)
			CHECK_CLOSE(Zn[i * K + j] * (dot < 0 ? -1.0 : 1.0), Ze[i * K + j], 1e-6);
		CHECK_CLOSE(mn.eigenvalues[j], me.eigenvalues[j], 1e-6 * me.eigenvalues[0]);
	}
	/* encoded and decoded: the section's values, the same coordinates */
	buf = encode(&me, &len);
	CHECK(km_model_peek(buf, len, &shape, &err) == KM_OK && shape.has_pca, "peek");
	storage = malloc(km_model_storage_doubles(&shape) * sizeof(double));
	CHECK(km_model_decode(buf, len, &back, storage, &err) == KM_OK, "%s", err.detail);
	CHECK(back.eigen_total == me.eigen_total && back.n_outputs == K, "total back");
	for (int j = 0; j < K; j++)
		CHECK(back.eigenvalues[j] == me.eigenvalues[j], "eigenvalue %d back", j);
	km_scorer_prepare(&s, &back, unit_arena_alloc(&a, km_scorer_doubles(&back) * sizeof(double)));
	for (size_t i = 0; i < N; i++)
		CHECK(km_scorer_decision(&s, X + i * D, Zd + i * K, &err) == KM_OK, "score");
	CHECK(memcmp(Zd, Ze, sizeof(Ze)) == 0, "decoded coordinates");
	free(buf);
	free(storage);
	free(X);
	free(y);
	free(h);
	free(Kg);
	free(work);
	free(norms);
	unit_arena_free(&a);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
put_f64(uint8_t *p, double v)
{
	uint64_t	u;

	memcpy(&u, &v, sizeof(u));
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (u >> (8 * i));
}

static uint64_t
get_u64(const uint8_t *p)
{
	uint64_t	v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* The offset of section tag's header in buf, or 0. */
static size_t
find_section(const uint8_t *buf, size_t len, uint16_t tag)
{
	for (size_t at = KM_MODEL_HEADER_SIZE; at + 16 <= len;)
	{
		uint64_t	length = get_u64(buf + at + 4);

		if ((uint16_t) (buf[at] | (buf[at + 1] << 8)) == tag)
			return at;
		at += 12 + length + 4;
	}
	return 0;
}

/* The CRC of the section at `at` again. */
static void
reseal(uint8_t *buf, size_t at)
{
	uint64_t	length = get_u64(buf + at + 4);

	put_u32(buf + at + 12 + length, km_crc32c(buf + at, 12 + length));
}

static void
reseal_header(uint8_t *buf)
{
	put_u32(buf + KM_MODEL_HEADER_SIZE - 4, km_crc32c(buf, KM_MODEL_HEADER_SIZE - 4));
}

void
test_pca_section_crafted(void)
{
	double	   *X = unit_rand_vec(N * D, 32);
	double	   *y = calloc(N, sizeof(double));
	uint64_t   *h = hashes(N);
	km_rows		rows = {NULL, N, D, X, y, NULL, NULL, 0, h};
	km_options	oe = pca_options(NULL);
	unit_arena	a = {0};
	double		Z[N * K];
	km_model	m,
				back;
	km_error	err;
	uint8_t    *buf,
			   *copy;
	size_t		len,
				at;
	/* payload: total, then eigenvalues; each case writes one double */
	struct
	{
		int			slot;		/* 0: total, 1 + j: eigenvalue j */
		double		v;
	}			bad[] = {{0, NAN}, {0, -1.0}, {0, 1e-3}, {1, INFINITY}, {1, -0.5},
	{2, 1e9}, {3, NAN}, {3, -1e-300}};

	m = learn(&oe, &rows, &a, Z, NULL);
	buf = encode(&m, &len);
	copy = malloc(len);
	at = find_section(buf, len, KM_SECTION_PCA);
	CHECK(at > 0 && get_u64(buf + at + 4) == 8 * (1 + K), "a pca section of %d doubles", 1 + K);
	CHECK(km_model_decode(buf, len, &back, NULL, &err) == KM_OK, "valid");
	for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++)
	{
		memcpy(copy, buf, len);
		put_f64(copy + at + 12 + 8 * bad[c].slot, bad[c].v);
		reseal(copy, at);
		CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_FORMAT,
			  "slot %d = %g accepted", bad[c].slot, bad[c].v);
	}
	/* ascending eigenvalues */
	memcpy(copy, buf, len);
	put_f64(copy + at + 12 + 8, m.eigenvalues[1]);
	put_f64(copy + at + 12 + 16, m.eigenvalues[0]);
	reseal(copy, at);
	CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_FORMAT, "ascending accepted");
	/* a flipped bit without a new CRC: corruption */
	memcpy(copy, buf, len);
	copy[at + 12] ^= 1;
	CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_CHECKSUM, "checksum");
	/* the task byte (offset 16) says regression: k outputs, a pca section */
	memcpy(copy, buf, len);
	copy[16] = 1;
	reseal_header(copy);
	CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_FORMAT, "regression with a pca section");
	free(buf);

	/* a one-component transform model, its task byte made regression: no pca section... */
	m.n_outputs = 1;
	buf = encode(&m, &len);
	copy = realloc(copy, len);
	memcpy(copy, buf, len);
	copy[16] = 1;
	reseal_header(copy);
	CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_FORMAT,
		  "a regression model with a pca section");
	free(buf);
	/* ...and a regression model whose task byte says transform: none */
	m.task = (km_task) 1;
	m.eigenvalues = NULL;
	buf = encode(&m, &len);
	CHECK(find_section(buf, len, KM_SECTION_PCA) == 0, "no pca section");
	copy = realloc(copy, len);
	memcpy(copy, buf, len);
	copy[16] = 3;
	reseal_header(copy);
	CHECK(km_model_decode(copy, len, &back, NULL, &err) == KM_ERR_FORMAT,
		  "a transform model without its pca section");
	free(buf);
	free(copy);
	free(X);
	free(y);
	free(h);
	unit_arena_free(&a);
}
