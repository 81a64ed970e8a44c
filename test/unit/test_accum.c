/*
 * test_accum.c - fixed-size additive states: sums against their
 * definitions, combining, and validation of untrusted bytes.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "unit.h"

static km_accum *
new_gram(uint32_t m)
{
	size_t		bytes = km_accum_bytes(KM_ACCUM_GRAM, m);
	void	   *mem = NULL;
	km_accum   *acc;

	if (posix_memalign(&mem, 8, bytes) != 0)
		abort();
	acc = mem;
	acc->vl_len_ = 0;
	km_accum_init(acc, KM_ACCUM_GRAM, m);
	return acc;
}

/* Layout: the payload is double-aligned behind a 4-byte varlena header. */
void
test_accum_layout(void)
{
	CHECK(offsetof(km_accum, data) == 32, "payload at %zu", offsetof(km_accum, data));
	CHECK(km_accum_payload_doubles(KM_ACCUM_GRAM, 3) == 6 + 6 + 2, "m = 3");
	CHECK(km_accum_bytes(KM_ACCUM_GRAM, 3) == 32 + 14 * 8, "bytes");
	CHECK(km_accum_bytes(KM_ACCUM_GRAM, 0) == 0, "dimension 0 refused");
	CHECK(km_accum_payload_doubles((km_accum_kind) 99, 3) == 0, "unknown kind");
	/* sizes beyond a size_t are refused, not wrapped */
	CHECK(km_accum_bytes(KM_ACCUM_GRAM, UINT32_MAX) == 0, "dimension 2^32 - 1");
	CHECK(km_accum_bytes(KM_ACCUM_GRAM, 100000) ==
		  32 + 8 * ((size_t) 100000 * 100001 / 2 + 200002), "dimension 1e5");
}

/* Rows added in blocks give the sums of the definition; combining adds. */
void
test_accum_gram_sums(void)
{
	enum
	{
		M = 4, N = 23
	};
	double		Z[N * M];
	double		y[N];
	double		scratch[M * M];
	km_accum   *whole = new_gram(M);
	km_accum   *part[2] = {new_gram(M), new_gram(M)};
	km_accum_gram g;
	km_error	err;

	for (int r = 0; r < N; r++)
	{
		for (int i = 0; i < M; i++)
			Z[r * M + i] = sin(1.0 + r * M + i);
		y[r] = cos(0.5 * r);
	}
	/* blocks of 10, 10, 3 into one state; 7 and 16 rows into two */
	km_accum_gram_add(whole, Z, y, 10, scratch, NULL);
	km_accum_gram_add(whole, Z + 10 * M, y + 10, 10, scratch, NULL);
	km_accum_gram_add(whole, Z + 20 * M, y + 20, 3, scratch, NULL);
	km_accum_gram_add(part[0], Z, y, 7, scratch, NULL);
	km_accum_gram_add(part[1], Z + 7 * M, y + 7, N - 7, scratch, NULL);
	CHECK(whole->rows == N, "rows %lld", (long long) whole->rows);

	g = km_accum_gram_parts(whole);
	for (int j = 0; j < M; j++)
	{
		double		zy = 0.0;
		double		zs = 0.0;

		for (int i = 0; i <= j; i++)
		{
			double		s = 0.0;

			for (int r = 0; r < N; r++)
				s += Z[r * M + i] * Z[r * M + j];
			CHECK_CLOSE(g.zz[i + j * (j + 1) / 2], s, 1e-13);
		}
		for (int r = 0; r < N; r++)
		{
			zy += Z[r * M + j] * y[r];
			zs += Z[r * M + j];
		}
		CHECK_CLOSE(g.zy[j], zy, 1e-13);
		CHECK_CLOSE(g.zsum[j], zs, 1e-13);
	}
	{
		double		ys = 0.0;
		double		yss = 0.0;

		for (int r = 0; r < N; r++)
		{
			ys += y[r];
			yss += y[r] * y[r];
		}
		CHECK_CLOSE(*g.ysum, ys, 1e-13);
		CHECK_CLOSE(*g.yss, yss, 1e-13);
	}

	CHECK(km_accum_combine(part[0], part[1], &err) == KM_OK, "combine");
	CHECK(part[0]->rows == N, "combined rows");
	for (size_t i = 0; i < whole->ndoubles; i++)
		CHECK_CLOSE(part[0]->data[i], whole->data[i], 1e-13);
	CHECK(km_accum_validate(part[0], km_accum_bytes(KM_ACCUM_GRAM, M), &err) == KM_OK,
		  "a state it made validates: %s", err.detail);
	free(whole);
	free(part[0]);
	free(part[1]);
}

/* Untrusted bytes: every header field and the length are checked. */
void
test_accum_validate(void)
{
	size_t		len = km_accum_bytes(KM_ACCUM_GRAM, 3);
	km_accum   *a = new_gram(3);
	km_accum   *b = new_gram(2);
	km_error	err;

	CHECK(km_accum_validate(a, len, &err) == KM_OK, "valid");
	CHECK(km_accum_validate(a, len - 8, &err) == KM_ERR_FORMAT, "short");
	CHECK(km_accum_validate(a, 16, &err) == KM_ERR_FORMAT, "header cut");
	a->magic ^= 1;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_FORMAT, "magic");
	a->magic ^= 1;
	a->version = 2;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_VERSION, "version");
	a->version = KM_ACCUM_VERSION;
	a->kind = 7;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_FORMAT, "kind");
	a->kind = KM_ACCUM_GRAM;
	a->dim = 4;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_FORMAT, "dimension");
	a->dim = 3;
	a->ndoubles++;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_FORMAT, "payload length");
	a->ndoubles--;
	a->rows = -1;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_FORMAT, "rows");
	a->rows = 0;
	a->data[5] = NAN;
	CHECK(km_accum_validate(a, len, &err) == KM_ERR_OVERFLOW, "finite");
	a->data[5] = 0.0;
	/* states of different shapes do not combine, and a is left alone */
	b->data[0] = 1.0;
	CHECK(km_accum_combine(a, b, &err) == KM_ERR_INVALID, "shapes");
	CHECK(a->data[0] == 0.0, "unchanged");
	free(a);
	free(b);
}
