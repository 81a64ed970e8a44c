/*
 * test_basis.c - the basis pass: order independence, combining, the
 * scaler against a two-pass definition, and the final basis as untrusted
 * input.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "unit.h"

static km_basis_state *
new_state(km_approx kind, uint32_t d, uint32_t m)
{
	size_t		bytes = km_basis_state_bytes(kind, d, m);
	void	   *mem = NULL;
	km_kernel	k = {KM_KERNEL_RBF, 3, 0.5, 1.0};

	if (bytes == 0 || posix_memalign(&mem, 8, bytes) != 0)
		abort();
	((km_basis_state *) mem)->vl_len_ = 0;
	km_basis_state_init(mem, kind, &k, true, d, m, 42);
	return mem;
}

/* a stand-in for the glue's row hash: FNV-1a over the bytes and the seed */
static uint64_t
row_hash(const double *x, uint32_t d, uint64_t seed)
{
	const unsigned char *p = (const unsigned char *) x;
	uint64_t	h = 1469598103934665603ull ^ seed;

	for (size_t i = 0; i < d * sizeof(double); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

/* The final basis of st in a malloc'd aligned buffer. */
static void *
finish(const km_basis_state *st, size_t *len)
{
	void	   *out = NULL;
	void	   *scratch = malloc(km_basis_finish_scratch_bytes(st) + 1);
	km_error	err;

	*len = km_basis_final_bytes(st);
	if (posix_memalign(&out, 8, *len) != 0)
		abort();
	CHECK(km_basis_finish(st, out, scratch, &err) == KM_OK, "%s", err.message);
	free(scratch);
	return out;
}

#define N 500
#define D 3
#define M 20

void
test_basis_order_and_combine(void)
{
	double	   *X = unit_rand_vec((size_t) N * D, 7);
	km_basis_state *fwd = new_state(KM_APPROX_NYSTROM, D, M);
	km_basis_state *rev = new_state(KM_APPROX_NYSTROM, D, M);
	km_basis_state *p1 = new_state(KM_APPROX_NYSTROM, D, M);
	km_basis_state *p2 = new_state(KM_APPROX_NYSTROM, D, M);
	size_t		lf, lr, lc;
	void	   *bf, *br, *bc;
	km_basis	a, b, c;
	km_error	err;
	double		mean[D] = {0}, ss[D] = {0};

	/* duplicate rows: row 2i+1 repeats row 2i in the first 100 */
	for (int i = 0; i < 50; i++)
		memcpy(X + (2 * i + 1) * D, X + 2 * i * D, sizeof(double) * D);
	for (int i = 0; i < N; i++)
	{
		km_basis_state_add(fwd, X + i * D, row_hash(X + i * D, D, 42));
		km_basis_state_add(rev, X + (N - 1 - i) * D, row_hash(X + (N - 1 - i) * D, D, 42));
		km_basis_state_add(i % 3 == 0 ? p1 : p2, X + i * D, row_hash(X + i * D, D, 42));
	}
	CHECK(km_basis_state_validate(p2, km_basis_state_bytes(KM_APPROX_NYSTROM, D, M), &err) == KM_OK,
		  "%s", err.detail);
	CHECK(km_basis_state_combine(p1, p2, &err) == KM_OK, "%s", err.message);
	bf = finish(fwd, &lf);
	br = finish(rev, &lr);
	bc = finish(p1, &lc);
	CHECK(km_basis_decode(bf, lf, &a, &err) == KM_OK, "%s", err.detail);
	CHECK(km_basis_decode(br, lr, &b, &err) == KM_OK, "%s", err.detail);
	CHECK(km_basis_decode(bc, lc, &c, &err) == KM_OK, "%s", err.detail);
	CHECK(a.m == M && b.m == M && c.m == M && a.rows == N && c.rows == N, "m %u", a.m);
	/* the same centres in the same order; the scaler to rounding */
	for (int j = 0; j < D; j++)
	{
		CHECK_CLOSE(a.mean[j], b.mean[j], 1e-14);
		CHECK_CLOSE(a.mean[j], c.mean[j], 1e-14);
		CHECK_CLOSE(a.scale[j], b.scale[j], 1e-14);
		CHECK_CLOSE(a.scale[j], c.scale[j], 1e-14);
	}
	for (int i = 0; i < M * D; i++)
	{
		CHECK_CLOSE(a.centres[i], b.centres[i], 1e-13);
		CHECK_CLOSE(a.centres[i], c.centres[i], 1e-13);
	}
	/* the centres are distinct */
	for (int i = 0; i < M; i++)
		for (int k = i + 1; k < M; k++)
			CHECK(memcmp(a.centres + i * D, a.centres + k * D, sizeof(double) * D) != 0,
				  "centres %d and %d equal", i, k);
	/* the scaler against the two-pass definition */
	for (int i = 0; i < N; i++)
		for (int j = 0; j < D; j++)
			mean[j] += X[i * D + j] / N;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < D; j++)
			ss[j] += (X[i * D + j] - mean[j]) * (X[i * D + j] - mean[j]);
	for (int j = 0; j < D; j++)
	{
		CHECK_CLOSE(a.mean[j], mean[j], 1e-14);
		CHECK_CLOSE(a.scale[j], sqrt(ss[j] / N), 1e-14);
	}
	/* the centres are the M smallest keys of the distinct rows */
	{
		uint64_t	keys[N];
		int			nk = 0;
		uint64_t	limit;

		for (int i = 0; i < N; i++)
			if (!(i < 100 && i % 2 == 1))
				keys[nk++] = row_hash(X + i * D, D, 42);
		for (int i = 0; i < nk; i++)
			for (int k = i + 1; k < nk; k++)
				if (keys[k] < keys[i])
				{
					uint64_t	t = keys[i];

					keys[i] = keys[k];
					keys[k] = t;
				}
		limit = keys[M - 1];
		/* the state's keys (behind mean and M2) are exactly those */
		{
			const uint64_t *kept = (const uint64_t *) (fwd->data + 2 * D);
			int			below = 0;

			for (int i = 0; i < M; i++)
				below += kept[i] <= limit;
			CHECK(below == M && fwd->n_centres == M, "%d of %d keys are the smallest", below, M);
		}

	}
	free(X);
	free(fwd);
	free(rev);
	free(p1);
	free(p2);
	free(bf);
	free(br);
	free(bc);
}

void
test_basis_untrusted(void)
{
	double	   *X = unit_rand_vec((size_t) N * D, 9);
	km_basis_state *st = new_state(KM_APPROX_NYSTROM, D, M);
	km_basis_state *rff = new_state(KM_APPROX_RFF, D, 64);
	size_t		len, lr;
	unsigned char *good;
	unsigned char *gr;
	km_basis	b;
	km_error	err;
	size_t		sbytes = km_basis_state_bytes(KM_APPROX_NYSTROM, D, M);

	for (int i = 0; i < N; i++)
	{
		km_basis_state_add(st, X + i * D, row_hash(X + i * D, D, 42));
		km_basis_state_add(rff, X + i * D, 0);
	}
	good = finish(st, &len);
	gr = finish(rff, &lr);
	CHECK(km_basis_decode(gr, lr, &b, &err) == KM_OK && b.m == 64 && b.centres == NULL &&
		  b.W == NULL, "rff %s", err.detail);
	/* every truncation is refused, inside the bytes given */
	for (size_t cut = 0; cut < len; cut++)
	{
		unsigned char *p = unit_copy_bytes(good, cut);

		if (cut >= 8 && ((uintptr_t) p) % 8 == 0)
			CHECK(km_basis_decode(p, cut, &b, &err) != KM_OK, "cut %zu", cut);
		free(p);
	}
	/* every single bit flip after the length word is refused */
	for (size_t i = 4; i < len; i++)
		for (int bit = 0; bit < 8; bit++)
		{
			good[i] ^= (unsigned char) (1u << bit);
			CHECK(km_basis_decode(good, len, &b, &err) != KM_OK, "byte %zu bit %d", i, bit);
			good[i] ^= (unsigned char) (1u << bit);
		}
	CHECK(km_basis_decode(good, len, &b, &err) == KM_OK, "%s", err.detail);
	/* states: a bad count or a wrong max slot is refused */
	CHECK(km_basis_state_validate(st, sbytes, &err) == KM_OK, "%s", err.detail);
	st->max_slot = (st->max_slot + 1) % M;
	CHECK(km_basis_state_validate(st, sbytes, &err) != KM_OK, "max slot");
	st->max_slot = (st->max_slot + M - 1) % M;
	st->n_centres = M + 1;
	CHECK(km_basis_state_validate(st, sbytes, &err) != KM_OK, "centres");
	st->n_centres = M;
	CHECK(km_basis_state_validate(st, sbytes - 8, &err) != KM_OK, "length");
	CHECK(km_basis_state_bytes(KM_APPROX_NYSTROM, UINT32_MAX, UINT32_MAX) == 0, "overflow");
	CHECK(km_basis_state_bytes(KM_APPROX_EXACT, 3, 3) == 0, "exact");
	/* combining mismatched states fails and changes nothing */
	CHECK(km_basis_state_combine(st, rff, &err) == KM_ERR_INVALID, "mismatch");
	/* an rff state over a kernel rff does not serve: refused by its header (issue 29) */
	CHECK(km_basis_state_check_header(rff, km_basis_state_bytes(KM_APPROX_RFF, D, 64), &err) == KM_OK,
		  "%s", err.detail);
	rff->kernel_type = KM_KERNEL_LINEAR;
	CHECK(km_basis_state_check_header(rff, km_basis_state_bytes(KM_APPROX_RFF, D, 64), &err) ==
		  KM_ERR_FORMAT, "rff over linear");
	rff->kernel_type = KM_KERNEL_RBF;
	/* the size of a final basis, before its rows are read, is the finished one's */
	CHECK(km_basis_bytes(KM_APPROX_NYSTROM, D, M) == len && km_basis_bytes(KM_APPROX_RFF, D, 64) == lr &&
		  km_basis_bytes(KM_APPROX_EXACT, D, M) == 0, "km_basis_bytes");
	free(X);
	free(st);
	free(rff);
	free(good);
	free(gr);
}
