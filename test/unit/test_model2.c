/*
 * test_model2.c - model format 2 (src/core/model/model.c): exact round trips for each
 * method with and without selection; a clean error for every truncation,
 * every flipped bit, forged fields behind valid checksums; unknown
 * sections: required ones are KM_ERR_VERSION, optional ones skipped.
 * Every buffer is malloc'd at exactly its length (valgrind, ASan).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"
#include "unit.h"

void		test_model2_roundtrip(void);
void		test_model2_truncation(void);
void		test_model2_bitflips(void);
void		test_model2_sections(void);
void		test_model2_invalid_fields(void);

#define TN 5
#define TD 2
#define TC 3

typedef struct t2
{
	km_model	m;
	double		mean[TD];
	double		scale[TD];
	double		alpha[TN];
	double		X[TN * TD];
	km_candidate cand[TC];
} t2;

static void
make2(t2 *t, km_method method, bool selection)
{
	memset(t, 0, sizeof(*t));
	for (int j = 0; j < TD; j++)
	{
		t->mean[j] = 0.25 - j;
		t->scale[j] = 1.5 + j;
	}
	for (int i = 0; i < TN; i++)
		t->alpha[i] = sin(i + 0.5) * 7.0;
	for (int k = 0; k < TN * TD; k++)
		t->X[k] = cos(k * 1.3) * 1e2;
	t->X[1] = -0.0;
	for (int i = 0; i < TC; i++)
	{
		t->cand[i].gamma = 0.5 * (i + 1);
		t->cand[i].lambda = 0.1 * i;
		t->cand[i].score = i == 1 ? NAN : 1.0 / (i + 1);
		t->cand[i].score_std = 0.0;
	}
	t->m.writer_version[1] = 2;
	t->m.kernel.type = KM_KERNEL_RBF;
	t->m.kernel.gamma = 0.5;
	t->m.kernel.degree = 3;
	t->m.kernel.coef0 = 1.0;
	t->m.method = method;
	t->m.task = km_method_task(method);
	t->m.standardize = true;
	t->m.fit_intercept = true;
	t->m.n_train = TN;
	t->m.n_features = TD;
	t->m.rows_seen = TN + 3;
	t->m.rows_skipped = 0x0102030405060708ULL;
	t->m.lambda = 1e-3;
	t->m.intercept = -4.5;
	t->m.train_rmse = 0.0625;
	if (method == KM_METHOD_LMS)
	{
		t->m.learning_rate = 0.01;
		t->m.max_iter = 100;
		t->m.tol = 1e-6;
		t->m.iterations = 37;
		t->m.converged = true;
		t->m.final_change = 5e-7;
	}
	else
		t->m.jitter = 1e-12;
	t->m.mean = t->mean;
	t->m.scale = t->scale;
	t->m.alpha = t->alpha;
	t->m.X = t->X;
	if (selection)
	{
		t->m.n_candidates = TC;
		t->m.cv = KM_CV_KFOLD;
		t->m.folds = 3;
		t->m.best = 2;
		t->m.candidates = t->cand;
	}
}

static uint8_t *
encode2(const km_model *m, size_t *size)
{
	uint8_t    *buf;

	km_model_shape sh = km_model_shape_of(m);

	*size = km_model_size(&sh);
	buf = malloc(*size);
	km_model_encode(m, buf);
	return buf;
}

static bool
same(const void *a, const void *b, size_t bytes)
{
	return memcmp(a, b, bytes) == 0;
}

static void
roundtrip2(km_method method, bool selection)
{
	t2			t;
	size_t		size;
	uint8_t    *buf;
	uint8_t    *again;
	double		storage[2 * TD + TN + 1 + TN * TD + 4 * TC];
	km_model	out;
	km_error	err;
	km_model_shape sh;
	km_status	st;

	make2(&t, method, selection);
	buf = encode2(&t.m, &size);
	CHECK(size > 0 && memcmp(buf, "KMLM\x02\x00\x50\x00", 8) == 0, "header prefix");
	st = km_model_peek(buf, size, &sh, &err);
	CHECK(st == KM_OK && sh.n_train == TN && sh.d == TD && sh.q == 1 &&
		  sh.c == (selection ? TC : 0) && sh.n_classes == 0,
		  "peek %d: %s", (int) st, err.detail);
	st = km_model_decode(buf, size, &out, storage, &err);
	CHECK(st == KM_OK, "decode %d: %s", (int) st, err.detail);
	if (st != KM_OK)
	{
		free(buf);
		return;
	}
	CHECK(out.format_version == 2 && out.method == method &&
		  out.task == KM_TASK_REGRESSION, "version, method, task");
	CHECK(out.kernel.type == t.m.kernel.type && out.kernel.gamma == t.m.kernel.gamma &&
		  out.kernel.degree == t.m.kernel.degree && out.kernel.coef0 == t.m.kernel.coef0,
		  "kernel");
	CHECK(out.standardize && out.fit_intercept, "flags");
	CHECK(out.rows_seen == TN + 3 && out.rows_skipped == t.m.rows_skipped, "rows");
	CHECK(out.intercept == t.m.intercept && out.train_rmse == t.m.train_rmse, "intercept, rmse");
	CHECK(out.lambda == t.m.lambda && out.jitter == t.m.jitter &&
		  out.learning_rate == t.m.learning_rate && out.max_iter == t.m.max_iter &&
		  out.tol == t.m.tol && out.iterations == t.m.iterations &&
		  out.final_change == t.m.final_change, "method fields");
	CHECK(method != KM_METHOD_LMS || out.converged, "converged");
	CHECK(same(out.mean, t.mean, sizeof(t.mean)) && same(out.scale, t.scale, sizeof(t.scale)) &&
		  same(out.alpha, t.alpha, sizeof(t.alpha)) && same(out.X, t.X, sizeof(t.X)),
		  "arrays bit for bit");
	if (selection)
		CHECK(out.n_candidates == TC && out.cv == KM_CV_KFOLD && out.folds == 3 &&
			  out.best == 2 && same(out.candidates, t.cand, sizeof(t.cand)), "selection");
	/* re-encoding the decoded model gives the same bytes */
	again = malloc(size);
	km_model_encode(&out, again);
	CHECK(same(again, buf, size), "re-encoding differs");
	free(again);
	free(buf);
}

void
test_model2_roundtrip(void)
{
	roundtrip2(KM_METHOD_RIDGE, false);
	roundtrip2(KM_METHOD_RIDGE, true);
	roundtrip2(KM_METHOD_LMS, false);
	roundtrip2(KM_METHOD_LMS, true);
	{
		km_model_shape s1 = km_model_shape_simple((km_method) 9, 1, 1, 0);
		km_model_shape s2 = km_model_shape_simple(KM_METHOD_RIDGE, UINT32_MAX, UINT32_MAX, 0);
		km_model_shape s3 = km_model_shape_simple(KM_METHOD_RIDGE, 1u << 23, 16, 0);
		km_model_shape s4 = km_model_shape_simple(KM_METHOD_RIDGE, 1u << 22, 16, 0);
		km_model_shape s5 = km_model_shape_simple(KM_METHOD_RIDGE, 1, 1, 0);

		CHECK(km_model_size(&s1) == 0, "unknown method has no size");
		CHECK(km_model_size(&s2) == 0, "overflow");
		CHECK(km_model_size(&s3) == 0, "over 1 GB");
		CHECK(km_model_size(&s4) != 0, "under 1 GB");
		s5.q = 0;
		CHECK(km_model_size(&s5) == 0, "no outputs");
		s5.q = UINT32_MAX;
		s5.n_train = UINT32_MAX;
		CHECK(km_model_size(&s5) == 0, "n x q overflow");
	}
}

void
test_model2_truncation(void)
{
	t2			t;
	size_t		size;
	uint8_t    *full;

	make2(&t, KM_METHOD_LMS, true);
	full = encode2(&t.m, &size);
	for (size_t len = 0; len < size; len++)
	{
		uint8_t    *p = unit_copy_bytes(full, len);
		km_model	out;
		km_error	err;
		km_model_shape sh;
		double		storage[2 * TD + TN + 1 + TN * TD + 4 * TC];
		km_status	sp = km_model_peek(p, len, &sh, &err);
		km_status	sd = km_model_decode(p, len, &out, storage, &err);

		CHECK(sp == KM_ERR_FORMAT && sd == KM_ERR_FORMAT,
			  "%zu of %zu bytes: peek %d decode %d (%s)", len, size, (int) sp, (int) sd,
			  err.detail);
		free(p);
	}
	free(full);
}

void
test_model2_bitflips(void)
{
	t2			t;
	size_t		size;
	uint8_t    *full;

	make2(&t, KM_METHOD_RIDGE, true);
	full = encode2(&t.m, &size);
	for (size_t i = 0; i < size; i++)
		for (int b = 0; b < 8; b++)
		{
			uint8_t    *p = unit_copy_bytes(full, size);
			double		storage[2 * TD + TN + 1 + TN * TD + 4 * TC];
			km_model	out;
			km_error	err;
			km_status	st;

			p[i] ^= (uint8_t) (1u << b);
			st = km_model_decode(p, size, &out, storage, &err);
			if (i < 4 || i == 6 || i == 7)
				CHECK(st == KM_ERR_FORMAT, "byte %zu bit %d: %d", i, b, (int) st);
			else if (i < 6)
				CHECK(st == KM_ERR_FORMAT || st == KM_ERR_VERSION || st == KM_ERR_CHECKSUM,
					  "byte %zu bit %d: %d", i, b, (int) st);
			else if (i < KM_MODEL_HEADER_SIZE)
				CHECK(st == KM_ERR_CHECKSUM, "header byte %zu bit %d: %d", i, b, (int) st);
			else
				/* a section: its length may now overrun (format), else its CRC fails */
				CHECK(st == KM_ERR_CHECKSUM || st == KM_ERR_FORMAT,
					  "section byte %zu bit %d: %d", i, b, (int) st);
			CHECK(km_model_decode(p, size, &out, NULL, &err) == st,
				  "byte %zu bit %d without storage", i, b);
			free(p);
		}
	free(full);
}

static void
put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

static void
put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* The model with one more section (tag, flags, 4 payload bytes) at the end. */
static uint8_t *
with_section(const uint8_t *buf, size_t size, uint16_t tag, uint16_t flags,
			 size_t *newsize)
{
	uint8_t    *p;
	uint8_t    *s;

	*newsize = size + KM_SECTION_OVERHEAD + 4;
	p = malloc(*newsize);
	memcpy(p, buf, size);
	s = p + size;
	put_u16(s, tag);
	put_u16(s + 2, flags);
	put_u64(s + 4, 4);
	put_u32(s + 12, 0xDEADBEEF);
	put_u32(s + 16, km_crc32c(s, 16));
	put_u64(p + 8, *newsize);
	put_u32(p + 72, p[72] + 1u);
	put_u32(p + 76, km_crc32c(p, 76));
	return p;
}

void
test_model2_sections(void)
{
	t2			t;
	size_t		size;
	size_t		bigger;
	uint8_t    *full;
	uint8_t    *p;
	km_model	out;
	km_error	err;
	km_model_shape sh;

	make2(&t, KM_METHOD_LMS, false);
	full = encode2(&t.m, &size);

	/* an optional section of a newer writer is skipped */
	p = with_section(full, size, 40, 0, &bigger);
	CHECK(km_model_decode(p, bigger, &out, NULL, &err) == KM_OK, "optional: %s", err.detail);
	CHECK(km_model_peek(p, bigger, &sh, &err) == KM_OK, "optional (peek)");
	CHECK(out.iterations == 37, "fields still read");
	free(p);

	/* a required one cannot be ignored: a newer library is needed */
	p = with_section(full, size, 40, KM_SECTION_REQUIRED, &bigger);
	CHECK(km_model_decode(p, bigger, &out, NULL, &err) == KM_ERR_VERSION,
		  "required: %d %s", (int) err.status, err.detail);
	free(p);

	/* unknown flags, and tags out of order, are malformed */
	p = with_section(full, size, 40, 0x2, &bigger);
	CHECK(km_model_decode(p, bigger, &out, NULL, &err) == KM_ERR_FORMAT, "flags 0x2");
	free(p);
	p = with_section(full, size, KM_SECTION_TRAINING, 0, &bigger);
	CHECK(km_model_decode(p, bigger, &out, NULL, &err) == KM_ERR_FORMAT,
		  "a second training section: %s", err.detail);
	free(p);

	/* every required section must be there: drop the last (training) */
	{
		size_t		at = KM_MODEL_HEADER_SIZE;
		uint8_t    *q;

		for (int i = 0; i < 3; i++)
		{
			uint64_t	len = 0;

			for (int k = 0; k < 8; k++)
				len |= (uint64_t) full[at + 4 + k] << (8 * k);
			at += KM_SECTION_OVERHEAD + (size_t) len;
		}
		q = unit_copy_bytes(full, at);
		put_u64(q + 8, at);
		put_u32(q + 72, 3);
		put_u32(q + 76, km_crc32c(q, 76));
		CHECK(km_model_decode(q, at, &out, NULL, &err) == KM_ERR_FORMAT,
			  "no training section: %d %s", (int) err.status, err.detail);
		CHECK(strstr(err.detail, "tag 4") != NULL, "%s", err.detail);
		free(q);
	}
	free(full);
}

/* Encode, then decode: the status. */
static km_status
status2(const km_model *m, km_error *err)
{
	size_t		size;
	uint8_t    *buf = encode2(m, &size);
	km_model	out;
	km_status	st = km_model_decode(buf, size, &out, NULL, err);

	free(buf);
	return st;
}

void
test_model2_invalid_fields(void)
{
	t2			t;
	km_error	err;

#define EXPECT_INVALID2(method, what, stmt) \
	do { \
		make2(&t, method, true); \
		stmt; \
		CHECK(status2(&t.m, &err) == KM_ERR_FORMAT, "%s: %d %s", what, (int) err.status, err.detail); \
	} while (0)

	make2(&t, KM_METHOD_RIDGE, true);
	CHECK(status2(&t.m, &err) == KM_OK, "control: %s", err.detail);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "kernel 0", t.m.kernel.type = (km_kernel_type) 0);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "gamma 0", t.m.kernel.gamma = 0.0);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "coef0 nan", t.m.kernel.coef0 = NAN);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "poly degree 101",
					(t.m.kernel.type = KM_KERNEL_POLY, t.m.kernel.degree = 101));
	EXPECT_INVALID2(KM_METHOD_RIDGE, "intercept inf", t.m.intercept = INFINITY);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "lambda -1", t.m.lambda = -1.0);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "jitter nan", t.m.jitter = NAN);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "train_rmse inf", t.m.train_rmse = INFINITY);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "scale 0", t.scale[1] = 0.0);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "alpha nan", t.alpha[2] = NAN);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "best 3 of 3", t.m.best = 3);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "k-fold with 1 fold", t.m.folds = 1);
	EXPECT_INVALID2(KM_METHOD_RIDGE, "candidate gamma 0", t.cand[0].gamma = 0.0);
	EXPECT_INVALID2(KM_METHOD_LMS, "max_iter -1", t.m.max_iter = -1);
	EXPECT_INVALID2(KM_METHOD_LMS, "learning_rate -1", t.m.learning_rate = -1.0);
	EXPECT_INVALID2(KM_METHOD_LMS, "final_change inf", t.m.final_change = INFINITY);
	/* unused kernel parameters are stored, not range-checked (finite doubles) */
	make2(&t, KM_METHOD_RIDGE, false);
	t.m.kernel.type = KM_KERNEL_LINEAR;
	t.m.kernel.gamma = -3.0;
	t.m.kernel.degree = 0;
	CHECK(status2(&t.m, &err) == KM_OK, "linear with gamma -3: %s", err.detail);
#undef EXPECT_INVALID2

	/* forged bytes behind valid checksums: task, method, flags, reserved */
	{
		size_t		size;
		uint8_t    *buf;
		km_model	out;
		static const struct
		{
			size_t		at;
			uint8_t		v;
		}			forged[] = {{16, 2}, {16, 0}, {17, 0}, {17, 9}, {19, 2}, {20, 7}};

		make2(&t, KM_METHOD_RIDGE, false);
		for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++)
		{
			buf = encode2(&t.m, &size);
			buf[forged[i].at] = forged[i].v;
			put_u32(buf + 76, km_crc32c(buf, 76));
			CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT,
				  "byte %zu = %u: %d %s", forged[i].at, forged[i].v, (int) err.status, err.detail);
			free(buf);
		}
	}
}
