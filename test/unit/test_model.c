/*
 * test_model.c - the binary model codec in format 1 (0.1.0's, still read;
 * format 2 is in test_model2.c): exact round trips, and a clean
 * error (never a crash or an over-read) for truncated, corrupted, newer,
 * random and forged input.  Every buffer handed to the decoder is malloc'd
 * at exactly its length so that valgrind sees any read past its end.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "model.h"
#include "unit.h"

void		test_model_roundtrip(void);
void		test_model_truncation(void);
void		test_model_bitflips(void);
void		test_model_newer_version(void);
void		test_model_random_bytes(void);
void		test_model_invalid_fields(void);

#define TN 7
#define TD 3

/* A valid model with arrays that exercise every byte of a double. */
typedef struct test_model
{
	km_model	m;
	double		mean[TD];
	double		scale[TD];
	double		alpha[TN];
	double		X[TN * TD];
} test_model;

static void
make_model(test_model *t)
{
	memset(t, 0, sizeof(*t));
	for (int j = 0; j < TD; j++)
	{
		t->mean[j] = -1.25 + j / 3.0;
		t->scale[j] = 0.5 + j * 1e-7;
	}
	for (int i = 0; i < TN; i++)
		t->alpha[i] = (i % 2 ? -1.0 : 1.0) * exp(i - 3.5);
	for (int k = 0; k < TN * TD; k++)
		t->X[k] = sin(k + 0.1) * 1e3;
	t->X[5] = -0.0;
	t->X[6] = 1e-310;			/* subnormal */

	t->m.format_version = 99;	/* ignored by the encoder */
	t->m.writer_version[0] = 1;
	t->m.writer_version[1] = 2;
	t->m.writer_version[2] = 3;
	t->m.kernel.type = KM_KERNEL_RBF;
	t->m.kernel.gamma = 0.5;
	t->m.kernel.degree = 3;
	t->m.kernel.coef0 = 1.0;
	t->m.method = KM_METHOD_RIDGE;
	t->m.standardize = true;
	t->m.fit_intercept = true;
	t->m.converged = true;
	t->m.max_iter = 0;
	t->m.iterations = 0;
	t->m.n_train = TN;
	t->m.n_features = TD;
	t->m.rows_skipped = 0x0102030405060708ULL;
	t->m.lambda = 1e-3;
	t->m.learning_rate = 0.0;
	t->m.tol = 0.0;
	t->m.final_change = 0.0;
	t->m.jitter = 2.5e-12;
	t->m.intercept = -42.125;
	t->m.train_rmse = 0.0625;
	t->m.mean = t->mean;
	t->m.scale = t->scale;
	t->m.alpha = t->alpha;
	t->m.X = t->X;
}

/* Encode m into a buffer of exactly its size, returned with that size. */
static uint8_t *
encode(const km_model *m, size_t *size)
{
	uint8_t    *buf;

	*size = km_model_v1_size(m->n_train, m->n_features, m->n_candidates);
	buf = malloc(*size);
	km_model_encode_v1(m, buf);
	return buf;
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

/* Recompute both checksums after a test patched the bytes by hand. */
static void
fix_checksums(uint8_t *buf, size_t len)
{
	put_u32(buf + 140, km_crc32c(buf, 140));
	if (len >= 148)
		put_u32(buf + len - 4, km_crc32c(buf + 144, len - 148));
}

static bool
same_bits(const double *a, const double *b, size_t count)
{
	return memcmp(a, b, count * sizeof(double)) == 0;
}

static void
check_same_model(const km_model *a, const km_model *b, bool arrays)
{
	CHECK(a->format_version == 1, "version %u", a->format_version);
	CHECK(memcmp(a->writer_version, b->writer_version, 3) == 0, "writer version");
	CHECK(a->kernel.type == b->kernel.type, "kernel %d", (int) a->kernel.type);
	CHECK(a->kernel.degree == b->kernel.degree, "degree %d", a->kernel.degree);
	CHECK(same_bits(&a->kernel.gamma, &b->kernel.gamma, 1), "gamma %.17g", a->kernel.gamma);
	CHECK(same_bits(&a->kernel.coef0, &b->kernel.coef0, 1), "coef0 %.17g", a->kernel.coef0);
	CHECK(a->method == b->method, "method %d", (int) a->method);
	CHECK(a->standardize == b->standardize, "standardize");
	CHECK(a->fit_intercept == b->fit_intercept, "fit_intercept");
	CHECK(a->converged == b->converged, "converged");
	CHECK(a->max_iter == b->max_iter, "max_iter %d", a->max_iter);
	CHECK(a->iterations == b->iterations, "iterations %d", a->iterations);
	CHECK(a->n_train == b->n_train, "n_train %u", a->n_train);
	CHECK(a->n_features == b->n_features, "n_features %u", a->n_features);
	CHECK(a->rows_skipped == b->rows_skipped, "rows_skipped");
	CHECK(same_bits(&a->lambda, &b->lambda, 1), "lambda");
	CHECK(same_bits(&a->learning_rate, &b->learning_rate, 1), "learning_rate");
	CHECK(same_bits(&a->tol, &b->tol, 1), "tol");
	CHECK(same_bits(&a->final_change, &b->final_change, 1), "final_change");
	CHECK(same_bits(&a->jitter, &b->jitter, 1), "jitter");
	CHECK(same_bits(&a->intercept, &b->intercept, 1), "intercept");
	CHECK(same_bits(&a->train_rmse, &b->train_rmse, 1), "train_rmse");
	if (!arrays)
	{
		CHECK(a->mean == NULL && a->scale == NULL && a->alpha == NULL &&
			  a->X == NULL, "arrays without storage");
		return;
	}
	CHECK(same_bits(a->mean, b->mean, b->n_features), "mean");
	CHECK(same_bits(a->scale, b->scale, b->n_features), "scale");
	CHECK(same_bits(a->alpha, b->alpha, b->n_train), "alpha");
	CHECK(same_bits(a->X, b->X, (size_t) b->n_train * b->n_features), "X");
}

static void
roundtrip_one(const km_model *m)
{
	size_t		size;
	uint8_t    *buf = encode(m, &size);
	km_model_shape want = km_model_shape_simple(m->method, m->n_train, m->n_features, 0);
	size_t		ns = km_model_storage_doubles(&want);
	double	   *storage = malloc(ns * sizeof(double));
	km_model_shape sh;
	size_t		n = m->n_train;
	size_t		d = m->n_features;
	km_model	out;
	km_error	err;
	km_status	st;

	/* storage holds the intercept as intercepts[0] too */
	CHECK(size == 144 + 8 * (ns - 1) + 4, "size %zu", size);
	CHECK(ns == 2 * m->n_features + m->n_train + 1 +
		  (size_t) m->n_train * m->n_features, "storage %zu", ns);
	CHECK(memcmp(buf, "KMLM\x01\x00\x90\x00", 8) == 0, "header prefix");

	st = km_model_peek(buf, size, &sh, &err);
	CHECK(st == KM_OK, "peek %d: %s: %s", (int) st, err.message, err.detail);
	CHECK(st == KM_OK && sh.n_train == m->n_train && sh.d == m->n_features &&
		  sh.q == 1 && sh.c == 0 && sh.approximation == KM_APPROX_EXACT,
		  "peek %u x %u", sh.n_train, sh.d);

	st = km_model_decode(buf, size, &out, storage, &err);
	CHECK(st == KM_OK, "decode %d: %s: %s", (int) st, err.message, err.detail);
	if (st == KM_OK)
	{
		check_same_model(&out, m, true);
		CHECK(out.mean == storage && out.scale == storage + d &&
			  out.alpha == storage + 2 * d && out.intercepts == storage + 2 * d + n &&
			  out.X == storage + 2 * d + n + 1 && out.n_outputs == 1 &&
			  out.intercepts[0] == m->intercept, "storage layout");
	}

	memset(&out, 0xAB, sizeof(out));
	st = km_model_decode(buf, size, &out, NULL, &err);
	CHECK(st == KM_OK, "decode without storage %d: %s", (int) st, err.detail);
	if (st == KM_OK)
		check_same_model(&out, m, false);

	free(storage);
	free(buf);
}

void
test_model_roundtrip(void)
{
	test_model t;

	make_model(&t);
	roundtrip_one(&t.m);

	/* Another kernel and method, flags clear, degree and max_iter in use. */
	t.m.kernel.type = KM_KERNEL_POLY;
	t.m.kernel.degree = 100;
	t.m.kernel.coef0 = -0.75;
	t.m.method = KM_METHOD_LMS;
	t.m.standardize = false;
	t.m.fit_intercept = false;
	t.m.converged = false;
	t.m.max_iter = 2147483647;
	t.m.iterations = 12345;
	t.m.learning_rate = 0.01;
	t.m.tol = 1e-9;
	t.m.final_change = 3e-4;
	t.m.rows_skipped = UINT64_MAX;
	roundtrip_one(&t.m);

	/* A parameter the kernel does not use is stored, not range-checked. */
	t.m.kernel.type = KM_KERNEL_LINEAR;
	t.m.kernel.degree = 0;
	t.m.kernel.gamma = -3.0;
	roundtrip_one(&t.m);

	/* Sizes: a single value, overflow, and the 1 GB varlena limit. */
	CHECK(km_model_v1_size(1, 1, 0) == 144 + 4 * 8 + 4, "size(1, 1) %zu", km_model_v1_size(1, 1, 0));
	CHECK(km_model_v1_size(UINT32_MAX, UINT32_MAX, 0) == 0, "overflow");
	{
		km_model_shape big = km_model_shape_simple(KM_METHOD_RIDGE, UINT32_MAX, UINT32_MAX, 0);

		CHECK(km_model_storage_doubles(&big) == 0, "storage overflow");
	}
	CHECK(km_model_v1_size(1u << 23, 16, 0) == 0, "over 1 GB");
	CHECK(km_model_v1_size(1u << 22, 16, 0) != 0, "under 1 GB");
	CHECK(km_model_v1_size(1, 0x3FFFFFFF / 8, 0) == 0, "wide model over 1 GB");
}

void
test_model_truncation(void)
{
	test_model t;
	size_t		size;
	uint8_t    *full;
	uint8_t    *longer;
	km_error	err;
	km_model	out;
	km_model_shape sh;
	double		storage[2 * TD + TN + 1 + TN * TD];

	make_model(&t);
	full = encode(&t.m, &size);

	for (size_t len = 0; len < size; len++)
	{
		uint8_t    *p = unit_copy_bytes(full, len);
		km_status	sp = km_model_peek(p, len, &sh, &err);
		km_status	sd = km_model_decode(p, len, &out, storage, &err);
		const char *want = len < 4 ? "not a kernel_ml model" : "truncated kernel_ml model";

		CHECK(sp == KM_ERR_FORMAT, "peek of %zu bytes gave %d", len, (int) sp);
		CHECK(sd == KM_ERR_FORMAT, "decode of %zu bytes gave %d", len, (int) sd);
		CHECK(err.status == sd && strcmp(err.message, want) == 0,
			  "%zu bytes: %s: %s", len, err.message, err.detail);
		free(p);
	}

	/* Trailing bytes are as wrong as missing ones. */
	longer = malloc(size + 1);
	memcpy(longer, full, size);
	longer[size] = 0;
	CHECK(km_model_decode(longer, size + 1, &out, NULL, &err) == KM_ERR_FORMAT,
		  "trailing byte: %s", err.message);
	CHECK(km_model_peek(longer, size + 1, &sh, &err) == KM_ERR_FORMAT,
		  "trailing byte (peek): %s", err.message);
	free(longer);
	free(full);
}

void
test_model_bitflips(void)
{
	test_model t;
	size_t		size;
	uint8_t    *full;
	double		storage[2 * TD + TN + 1 + TN * TD];

	make_model(&t);
	full = encode(&t.m, &size);

	for (size_t i = 0; i < size; i++)
	{
		for (int b = 0; b < 8; b++)
		{
			uint8_t    *p = unit_copy_bytes(full, size);
			km_status	want;
			km_status	st;
			km_status	sp;
			km_model	out;
			km_error	err;
					km_model_shape sh;

			p[i] ^= (uint8_t) (1u << b);
			if (i < 4 || i == 6 || i == 7)
				want = KM_ERR_FORMAT;
			else if (i < 6)
			{
				/* version 1 with one bit flipped: 0 is invalid, more is newer */
				unsigned	v = 1u ^ (1u << ((i - 4) * 8 + b));

				want = v == 0 ? KM_ERR_FORMAT : KM_ERR_VERSION;
			}
			else
				want = KM_ERR_CHECKSUM;

			st = km_model_decode(p, size, &out, storage, &err);
			CHECK(st == want, "byte %zu bit %d: got %d, want %d (%s)",
				  i, b, (int) st, (int) want, err.message);
			st = km_model_decode(p, size, &out, NULL, &err);
			CHECK(st == want, "byte %zu bit %d without storage: got %d",
				  i, b, (int) st);

			/* peek reads only the header, so a payload flip passes it. */
			sp = km_model_peek(p, size, &sh, &err);
			CHECK(sp == (i >= 144 ? KM_OK : want), "peek byte %zu bit %d: %d",
				  i, b, (int) sp);
			free(p);
		}
	}
	free(full);
}

void
test_model_newer_version(void)
{
	test_model t;
	size_t		size;
	uint8_t    *p;
	km_model	out;
	km_error	err;
	km_model_shape sh;
	km_status	st;

	make_model(&t);
	p = encode(&t.m, &size);

	p[4] = 3;
	p[5] = 0;
	fix_checksums(p, size);
	st = km_model_decode(p, size, &out, NULL, &err);
	CHECK(st == KM_ERR_VERSION, "version 3: %d", (int) st);
	CHECK(err.status == KM_ERR_VERSION, "err.status %d", (int) err.status);
	CHECK(strstr(err.detail, "version 3;") != NULL, "detail: %s", err.detail);
	CHECK(km_model_peek(p, size, &sh, &err) == KM_ERR_VERSION, "peek version 3");

	/* The version is read before any checksum. */
	p[140] ^= 0xFF;
	CHECK(km_model_decode(p, size, &out, NULL, &err) == KM_ERR_VERSION,
		  "version 3, bad checksum: %s", err.message);

	/* A newer format may have another header size; still VERSION. */
	p[4] = 0xFF;
	p[5] = 0xFF;
	p[6] = 0x10;
	CHECK(km_model_decode(p, size, &out, NULL, &err) == KM_ERR_VERSION,
		  "version 65535: %s", err.message);

	/* Just the first 8 bytes of a newer model are enough to tell. */
	CHECK(km_model_decode(p, 8, &out, NULL, &err) == KM_ERR_VERSION,
		  "8-byte prefix: %s", err.message);
	free(p);
}

static uint64_t
xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

void
test_model_random_bytes(void)
{
	uint64_t	seed = 0x9E3779B97F4A7C15ULL;
	int			counts[KM_ERR_CHECKSUM + 1] = {0};
	double		storage[400 / 8];

	for (int iter = 0; iter < 10000; iter++)
	{
		int			mode = (int) (xorshift64(&seed) % 4);
		size_t		len = (size_t) (xorshift64(&seed) % 401);
		uint8_t    *p;
		km_model	out;
		km_error	err;
		uint32_t	n = 0;
		uint32_t	d = 0;
		km_model_shape sh;
		km_status	st;

		/*
		 * Mode 0: pure noise.  1: a plausible start.  2: a header whose
		 * sizes agree and whose checksum is right.  3: both checksums right,
		 * so only the field checks stand between noise and KM_OK.
		 */
		if (mode >= 2)
		{
			d = 1 + (uint32_t) (xorshift64(&seed) % 3);
			n = 1 + (uint32_t) (xorshift64(&seed) % 10);
			len = km_model_v1_size(n, d, 0);
		}
		p = malloc(len);
		for (size_t i = 0; i < len; i++)
			p[i] = (uint8_t) xorshift64(&seed);
		if (mode >= 1 && len >= 8)
			memcpy(p, "KMLM\x01\x00\x90\x00", 8);
		if (mode >= 2)
		{
			put_u64(p + 8, len);
			put_u32(p + 36, n);
			put_u32(p + 40, d);
			put_u32(p + 128, 0);	/* no selection candidates */
			if (mode == 2)
				put_u32(p + 140, km_crc32c(p, 140));
			else
				fix_checksums(p, len);
		}

		st = km_model_peek(p, len, &sh, &err);
		CHECK(mode >= 2 ? st == KM_OK : st != KM_OK,
			  "peek, mode %d, %zu bytes: %d", mode, len, (int) st);
		st = km_model_decode(p, len, &out, storage, &err);
		CHECK(st == KM_ERR_FORMAT || st == KM_ERR_VERSION || st == KM_ERR_CHECKSUM,
			  "iteration %d, mode %d, %zu bytes: %d", iter, mode, len, (int) st);
		CHECK(err.status == st && err.message[0] != '\0', "error not filled");
		CHECK(mode != 2 || st == KM_ERR_CHECKSUM, "mode 2 gave %d", (int) st);
		if (st >= 0 && st <= KM_ERR_CHECKSUM)
			counts[st]++;
		free(p);
	}
	CHECK(counts[KM_OK] == 0, "%d random inputs decoded", counts[KM_OK]);
	CHECK(counts[KM_ERR_FORMAT] > 0 && counts[KM_ERR_CHECKSUM] > 0,
		  "format %d, checksum %d", counts[KM_ERR_FORMAT], counts[KM_ERR_CHECKSUM]);
}

/* Encode m, decode it both ways, and return the status (both must agree). */
static km_status
decode_status(const km_model *m, km_error *err)
{
	size_t		size;
	uint8_t    *buf = encode(m, &size);
	double		storage[2 * TD + TN + 1 + TN * TD];
	km_model	out;
	km_status	st = km_model_decode(buf, size, &out, storage, err);

	CHECK(km_model_decode(buf, size, &out, NULL, err) == st,
		  "decode with and without storage disagree");
	free(buf);
	return st;
}

/* Patch one byte of a valid model, fix the checksums, and decode. */
static km_status
patched_status(size_t offset, uint8_t value, km_error *err)
{
	test_model t;
	size_t		size;
	uint8_t    *buf;
	km_model	out;
	km_status	st;

	make_model(&t);
	buf = encode(&t.m, &size);
	buf[offset] = value;
	fix_checksums(buf, size);
	st = km_model_decode(buf, size, &out, NULL, err);
	free(buf);
	return st;
}

void
test_model_invalid_fields(void)
{
	test_model t;
	km_error	err;
	km_status	st;

#define EXPECT_INVALID(what, field_stmt) \
	do { \
		make_model(&t); \
		field_stmt; \
		st = decode_status(&t.m, &err); \
		CHECK(st == KM_ERR_FORMAT, "%s: got %d", what, (int) st); \
		CHECK(strcmp(err.message, "invalid kernel_ml model") == 0, \
			  "%s: %s", what, err.message); \
	} while (0)

	make_model(&t);
	CHECK(decode_status(&t.m, &err) == KM_OK, "control: %s", err.detail);

	EXPECT_INVALID("kernel 0", t.m.kernel.type = (km_kernel_type) 0);
	EXPECT_INVALID("kernel 99", t.m.kernel.type = (km_kernel_type) 99);
	EXPECT_INVALID("method 0", t.m.method = (km_method) 0);
	EXPECT_INVALID("method 99", t.m.method = (km_method) 99);
	EXPECT_INVALID("gamma -1", t.m.kernel.gamma = -1.0);
	EXPECT_INVALID("gamma 0", t.m.kernel.gamma = 0.0);
	EXPECT_INVALID("gamma nan", t.m.kernel.gamma = NAN);
	EXPECT_INVALID("coef0 inf", t.m.kernel.coef0 = INFINITY);
	EXPECT_INVALID("poly degree 0",
				   (t.m.kernel.type = KM_KERNEL_POLY, t.m.kernel.degree = 0));
	EXPECT_INVALID("polysum degree 101",
				   (t.m.kernel.type = KM_KERNEL_POLYSUM, t.m.kernel.degree = 101));
	EXPECT_INVALID("alpha nan", t.alpha[3] = NAN);
	EXPECT_INVALID("X -inf", t.X[TN * TD - 1] = -INFINITY);
	EXPECT_INVALID("mean inf", t.mean[0] = INFINITY);
	EXPECT_INVALID("scale 0", t.scale[1] = 0.0);
	EXPECT_INVALID("scale -1", t.scale[2] = -1.0);
	EXPECT_INVALID("lambda -1", t.m.lambda = -1.0);
	EXPECT_INVALID("lambda nan", t.m.lambda = NAN);
	EXPECT_INVALID("learning_rate -1", t.m.learning_rate = -1.0);
	EXPECT_INVALID("tol inf", t.m.tol = INFINITY);
	EXPECT_INVALID("final_change -1", t.m.final_change = -1.0);
	EXPECT_INVALID("jitter -1", t.m.jitter = -1.0);
	EXPECT_INVALID("intercept nan", t.m.intercept = NAN);
	EXPECT_INVALID("train_rmse inf", t.m.train_rmse = INFINITY);
	EXPECT_INVALID("max_iter -1", t.m.max_iter = -1);
	EXPECT_INVALID("iterations -1", t.m.iterations = -1);
#undef EXPECT_INVALID

	/* Reserved bytes and unknown flags, patched into the bytes by hand. */
	CHECK(patched_status(20, KM_KERNEL_RBF, &err) == KM_OK, "patch control: %s", err.detail);
	{
		static const size_t reserved[] = {22, 23, 47, 128, 135, 136, 139};

		for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		{
			st = patched_status(reserved[i], 0x01, &err);
			CHECK(st == KM_ERR_FORMAT, "reserved byte %zu: %d", reserved[i], (int) st);
		}
	}
	CHECK(patched_status(16, 0x07 | 0x08, &err) == KM_ERR_FORMAT, "flag 0x8");
	CHECK(patched_status(19, 0x80, &err) == KM_ERR_FORMAT, "flag 0x80000000");
	CHECK(strstr(err.detail, "flags") != NULL, "detail names the field: %s", err.detail);
	CHECK(patched_status(16, 0x00, &err) == KM_OK, "no flags: %s", err.detail);

	/* Sizes that pass the checksum but contradict each other. */
	{
		test_model t2;
		size_t		size;
		uint8_t    *buf;
		km_model	out;

		make_model(&t2);
		buf = encode(&t2.m, &size);
		put_u32(buf + 36, TN + 1);
		fix_checksums(buf, size);
		CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT,
			  "n_train + 1");
		put_u32(buf + 36, 0);
		fix_checksums(buf, size);
		CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT,
			  "n_train 0");
		put_u32(buf + 36, TN);
		put_u32(buf + 40, 0);
		fix_checksums(buf, size);
		CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT,
			  "n_features 0");
		free(buf);
	}
}

/* A model that carries a selection table: round trip, truncation, bit flips. */
void
test_model_selection(void)
{
	test_model	t;
	km_candidate cand[3] = {
		{0.5, 0.1, 0.25, 0.0}, {0.5, 1.0, NAN, 0.0}, {2.0, 0.1, 0.125, 0.0}
	};
	size_t		size;
	uint8_t    *buf;
	km_model	out;
	km_error	err;
	double	   *storage;
	int			bad = 0;

	make_model(&t);
	t.m.n_candidates = 3;
	t.m.cv = KM_CV_LOO;
	t.m.best = 2;
	t.m.candidates = cand;
	buf = encode(&t.m, &size);
	CHECK(size == km_model_v1_size(TN, TD, 0) + 3 * 4 * sizeof(double), "size %zu", size);
	{
		km_model_shape sh = km_model_shape_simple(KM_METHOD_RIDGE, TN, TD, 3);

		storage = malloc(km_model_storage_doubles(&sh) * sizeof(double));
	}
	CHECK(km_model_decode(buf, size, &out, storage, &err) == KM_OK, "decode: %s", err.detail);
	CHECK(out.n_candidates == 3 && out.cv == KM_CV_LOO && out.best == 2 && out.folds == 0,
		  "selection header");
	CHECK(out.candidates[2].gamma == 2.0 && isnan(out.candidates[1].score) &&
		  out.candidates[0].score == 0.25, "candidates");

	for (size_t len = 0; len < size; len++)
	{
		uint8_t    *p = unit_copy_bytes(buf, len);

		if (km_model_decode(p, len, &out, storage, &err) != KM_ERR_FORMAT)
			bad++;
		free(p);
	}
	CHECK(bad == 0, "%d truncations not reported as FORMAT", bad);
	for (size_t bit = 8 * 8; bit < 8 * size; bit++)
	{
		uint8_t    *p = unit_copy_bytes(buf, size);

		p[bit / 8] ^= (uint8_t) (1 << (bit % 8));
		if (km_model_decode(p, size, &out, storage, &err) != KM_ERR_CHECKSUM)
			bad++;
		free(p);
	}
	CHECK(bad == 0, "%d bit flips past byte 8 not reported as CHECKSUM", bad);

	/* best out of range, with the checksums made right: FORMAT */
	t.m.best = 3;
	free(buf);
	buf = encode(&t.m, &size);
	CHECK(km_model_decode(buf, size, &out, NULL, &err) == KM_ERR_FORMAT, "best 3 of 3");
	free(buf);
	free(storage);
}
