/*
 * libFuzzer target for the pass points the aggregate host's descriptors
 * carry (learner.h km_pass_rebuild; src/pg/pass_desc.c): any role can call
 * the pass aggregate, so a point, the rows' shape its rules give (d,
 * labels or values, folds) and every state are untrusted input.  Built
 * with AddressSanitizer and UBSan by "make fuzz-pass".
 *
 * Input: the kind in 2 bytes (little-endian), then the point.  A point
 * must rebuild into a pass or fail (KM_ERR_FORMAT),
 * within a memory cap: the env's alloc refuses a request beyond CAP_BYTES
 * in all (as kernel_ml.max_memory's reservation does in the server: an
 * error that leaves the rebuild) and the target returns.  A rebuilt pass
 * then runs as the pass aggregate runs it: states of state_bytes,
 * init'ed, small blocks of rows added (the pass's d and others, values or
 * class ids in and out of range, folds or none, the side and fold the
 * rules give, some non-finite features as a crafted state's buffer may
 * hold; blocks of a few rows, or now and then of a whole chunk and of
 * one row more), a combine of two states, and a state of arbitrary bytes
 * (a crafted initial state) added into and combined.  Those may fail; none
 * may crash, read or write out of bounds, or reach undefined behaviour.
 * The block parameters come from a hash of the input.
 */
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "crc32c.h"
#include "learn/learner.h"

/*
 * The memory a rebuild and its states may take, in all: small, so that a
 * point's work (a factor of m x m centres, m^3 / 3 flops) stays well under
 * a second and the fuzzer tries many points.
 */
#define CAP_BYTES ((size_t) 16 << 20)
/* Rows per block (a pass adds at most a chunk of them). */
#define MAX_ROWS 9
/* The features the seeds' rows have (make_pass_seeds.c). */
#define SEED_D 3
#define MAX_D 8

typedef struct fuzz_arena
{
	void	  **p;
	size_t		count;
	size_t		cap;
	size_t		bytes;
	jmp_buf		refused;
} fuzz_arena;

static fuzz_arena arena;

static void *
fuzz_alloc(void *ctx, size_t bytes)
{
	fuzz_arena *a = ctx;
	void	   *p;

	if (bytes > CAP_BYTES || a->bytes + bytes > CAP_BYTES)
		longjmp(a->refused, 1);
	if (a->count == a->cap)
	{
		a->cap = a->cap ? 2 * a->cap : 64;
		a->p = realloc(a->p, a->cap * sizeof(void *));
	}
	/* not zeroed, as palloc's: a pass must not read what it did not write */
	p = malloc(bytes ? bytes : 1);
	if (p == NULL)
		abort();
	memset(p, 0xa5, bytes < 65536 ? bytes : 65536);
	a->bytes += bytes;
	return a->p[a->count++] = p;
}

static void
fuzz_release(void *ctx, void *p)
{
}

static double *
fuzz_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	if (doubles > CAP_BYTES / sizeof(double))
		longjmp(((fuzz_arena *) ctx)->refused, 1);
	return fuzz_alloc(ctx, doubles * sizeof(double));
}

static void
fuzz_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
}

static void
arena_reset(fuzz_arena *a)
{
	while (a->count > 0)
		free(a->p[--a->count]);
	a->bytes = 0;
}

/* splitmix64 */
static uint64_t
next(uint64_t *s)
{
	uint64_t	z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* uniform in [-1, 1) */
static double
unit(uint64_t *s)
{
	return (double) (next(s) >> 11) / 4503599627370496.0 - 1.0;
}

/* The rows of one block (up to a whole chunk), in arena memory. */
typedef struct rows_mem
{
	double		X[KM_BLOCK_ROWS * MAX_D];
	double		y[KM_BLOCK_ROWS];
	uint32_t	cls[KM_BLOCK_ROWS];
	uint64_t	hash[KM_BLOCK_ROWS];
	int			fold[KM_BLOCK_ROWS];
	uint8_t		held[KM_BLOCK_ROWS];
} rows_mem;

/* A block of n rows of d features as a host's rules would hand it (flags from s). */
static km_block
make_block(rows_mem *r, size_t n, int d, bool labels, uint32_t k, bool folds, int nfolds,
		   uint64_t *s)
{
	uint64_t	flags = next(s);
	km_block	b;

	for (size_t i = 0; i < n * (size_t) d; i++)
	{
		r->X[i] = 2.0 * unit(s);
		if ((flags & 7) == 0 && (next(s) & 15) == 0)
		{
			/* a crafted state's buffered rows */
			static const double odd[] = {NAN, INFINITY, -INFINITY, 1e308, -1e308, 5e-324};

			r->X[i] = odd[next(s) % 6];
		}
	}
	for (size_t i = 0; i < n; i++)
	{
		r->y[i] = 3.0 * unit(s);
		r->cls[i] = (uint32_t) (next(s) % k);
		if ((flags & 0x18) == 0 && (next(s) & 3) == 0)
			r->cls[i] = (next(s) & 1) ? k + (uint32_t) (next(s) % 4) : UINT32_MAX;
		r->hash[i] = next(s);
		r->fold[i] = (int) (next(s) % (uint64_t) nfolds);
		if ((flags & 0x60) == 0 && (next(s) & 3) == 0)
			r->fold[i] = (next(s) & 1) ? -1 : INT32_MAX;
		r->held[i] = (uint8_t) (next(s) % ((flags & 0x100) ? 256 : 2));
	}
	memset(&b, 0, sizeof(b));
	b.n = n;
	b.d = d;
	b.X = r->X;
	b.y = labels ? NULL : r->y;
	b.cls = labels ? r->cls : NULL;
	b.hash = r->hash;
	b.fold = folds ? r->fold : NULL;
	b.held = (flags & 0x80) ? NULL : r->held;
	return b;
}

/* A state of the pass: init'ed, or (crafted) arbitrary bytes. */
static void *
new_state(km_pass *pass, bool crafted, uint64_t *s)
{
	unsigned char *st = fuzz_alloc(&arena, pass->state_bytes);

	memset(st, 0, pass->state_bytes);
	if (crafted)
	{
		for (size_t i = 0; i + 8 <= pass->state_bytes; i += 8)
		{
			uint64_t	v = next(s);
			double		x = unit(s) * 100.0;

			if (v & 1)
				memcpy(st + i, &v, 8);
			else
				memcpy(st + i, &x, 8);
		}
	}
	else if (pass->init != NULL)
		pass->init(pass, st);
	return st;
}

/* Blocks of rows into the states a, b and c as the aggregate adds them; then combines. */
static void
run_pass(km_pass *pass, uint64_t seed)
{
	uint64_t	s = seed;
	uint64_t	f = next(&s);
	bool		labels = (f & 1) != 0;
	uint32_t	k = 2 + (uint32_t) ((f >> 1) % 3);
	bool		folds = (f & 8) != 0;
	int			nfolds = 2 + (int) ((f >> 4) % 4);
	int			dd[2] = {SEED_D, 1 + (int) ((f >> 8) % MAX_D)};
	size_t		first[3] = {0, 0, 0};
	bool		ok[3] = {true, true, true};
	void	   *st[3];
	rows_mem   *r = fuzz_alloc(&arena, sizeof(rows_mem));
	km_error	err;
	size_t		maxn = pass->chunk > 0 && pass->chunk < MAX_ROWS ? pass->chunk : MAX_ROWS;
	/* now and then blocks of a whole chunk, as the aggregate adds them, and one more row */
	bool		whole = (f & 0x1e0000) == 0;
	size_t		chunk = pass->chunk > 0 ? pass->chunk : KM_BLOCK_ROWS;

	if (pass->ordered || pass->add == NULL)
		return;					/* refused by the pass aggregate (pass_desc.c) */
	/* the rules' side and fold (pass_desc.c sets them on the rebuilt pass) */
	pass->side = folds ? (km_rows_side) ((f >> 12) % 3) : KM_SIDE_ALL;
	pass->fold = pass->side == KM_SIDE_ALL ? -1 : (int) ((f >> 14) % (uint64_t) nfolds);
	if (f & 0x10000)
		first[2] = (size_t) next(&s);	/* a crafted state's count of rows added */
	st[0] = new_state(pass, false, &s);
	st[1] = new_state(pass, false, &s);
	st[2] = new_state(pass, true, &s);
	for (int t = 0; t < 2; t++)
	{
		int			d = dd[t];

		if (t == 1 && d == dd[0])
			break;
		for (int blk = 0; blk < 3; blk++)
		{
			size_t		n = 1 + (size_t) (next(&s) % maxn);

			if (whole)
				n = blk == 1 && chunk < KM_BLOCK_ROWS ? chunk + 1 : chunk;
			int			which = blk % 3;
			km_block	b = make_block(r, n, d, labels, k, folds, nfolds, &s);

			if (!ok[which])
				continue;
			if (pass->add(pass, &b, first[which], st[which], &err) != KM_OK)
				ok[which] = false;
			first[which] += n;
		}
	}
	(void) km_pass_combine(pass, st[0], st[1], &err);
	(void) km_pass_combine(pass, st[2], st[0], &err);
	(void) km_pass_combine(pass, st[0], st[2], &err);
}

/* The pass of kind from point (len bytes), run; any memory of it freed. */
static void
rebuild_and_run(uint16_t kind, const uint8_t *point, size_t len, uint64_t seed)
{
	km_train_env env = {&arena, fuzz_alloc, fuzz_release, fuzz_workspace,
	fuzz_release_workspace, NULL, NULL};
	km_pass    *volatile pass = NULL;
	km_pass    *out = NULL;
	km_error	err;

	if (setjmp(arena.refused) == 0)
	{
		if (km_pass_rebuild(kind, point, len, &env, &out, &err) == KM_OK)
		{
			pass = out;
			if (pass == NULL || pass->add == NULL || pass->chunk > KM_BLOCK_ROWS)
				abort();
			run_pass(pass, seed);
		}
		else if (err.status != KM_ERR_FORMAT)
			abort();			/* learner.h: every refused point */
	}
	arena_reset(&arena);
}

static void
put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t	kind;
	uint8_t    *point;
	size_t		len;
	uint64_t	seed = UINT64_C(1469598103934665603);

	if (size < 2)
		return 0;
	kind = (uint16_t) (data[0] | (data[1] << 8));
	len = size - 2;
	for (size_t i = 0; i < size; i++)
		seed = (seed ^ data[i]) * UINT64_C(1099511628211);
	/* an exact-size copy, so that ASan sees a read past the point's end */
	point = malloc(len ? len : 1);
	memcpy(point, data + 2, len);
	rebuild_and_run(kind, point, len, seed);

	/*
	 * Random bytes almost never pass the checksums inside a point: again
	 * with them recomputed, which lets the fuzzer reach the fields behind
	 * them.  Kinds 2 to 12 start with the job (rows, d, the basis's length
	 * and bytes: pipeline_approx.c km_approx_point_put_job); kind 13 is a
	 * drift encoding whose last 4 bytes are its CRC-32C.
	 */
	if (kind >= 2 && kind <= 12 && len >= 20)
	{
		uint64_t	blen = 0;

		for (int i = 0; i < 8; i++)
			blen |= (uint64_t) point[12 + i] << (8 * i);
		if (blen <= len - 20 && blen % 8 == 0)
		{
			/* resealed where it is aligned, as the learner's basis is */
			double	   *b = malloc(blen ? (size_t) blen : 1);

			memcpy(b, point + 20, (size_t) blen);
			km_basis_reseal(b, (size_t) blen);
			memcpy(point + 20, b, (size_t) blen);
			free(b);
			rebuild_and_run(kind, point, len, seed);
		}
	}
	else if (kind == 13 && len >= 4)
	{
		put_u32(point + len - 4, km_crc32c(point, len - 4));
		rebuild_and_run(kind, point, len, seed);
	}
	free(point);
	return 0;
}
