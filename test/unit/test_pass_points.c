/*
 * test_pass_points.c - a pass's point as untrusted bytes (learner.h
 * km_pass_rebuild; the pass aggregate's descriptors, src/pg/pass_desc.c):
 * every real point of test/fuzz/pass_seeds (test/fuzz/make_pass_seeds.c:
 * the kind in 2 bytes, then the point) rebuilds; truncated at every
 * length it is refused with KM_ERR_FORMAT; with any one byte flipped it
 * is refused with KM_ERR_FORMAT or rebuilds into a pass whose adds and
 * combine run (refusing what does not fit).  Memory comes from an arena
 * with a cap, which a point that asks for more leaves as the server's
 * reservation does (an error out of the rebuild): bounded, never
 * unbounded.  Run under ASan and UBSan too (make unittest-asan).
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "approx.h"
#include "basis.h"
#include "learn/learner.h"
#include "unit.h"

void		test_pass_points_rebuild(void);
void		test_pass_points_truncated(void);
void		test_pass_points_bitflips(void);
void		test_pass_points_tiny_trace(void);
void		test_pass_points_findings(void);
void		test_pass_points_score_state(void);

#define SEEDS_DIR "test/fuzz/pass_seeds"
/* inputs the fuzzer once found (each must now be refused) */
#define FINDINGS_DIR "test/fuzz/pass_findings"
#define CAP_BYTES ((size_t) 256 << 20)
/* more than the directories hold: a test that read only some would pass by readdir's order */
#define MAX_SEEDS 512
#define ROWS 5
#define D 3

typedef struct cap_arena
{
	void	  **p;
	size_t		count;
	size_t		cap;
	size_t		bytes;
	jmp_buf		refused;
} cap_arena;

static cap_arena arena;

static void *
cap_alloc(void *ctx, size_t bytes)
{
	cap_arena  *a = ctx;

	if (bytes > CAP_BYTES || a->bytes + bytes > CAP_BYTES)
		longjmp(a->refused, 1);
	if (a->count == a->cap)
	{
		a->cap = a->cap ? 2 * a->cap : 64;
		a->p = realloc(a->p, a->cap * sizeof(void *));
	}
	a->bytes += bytes;
	return a->p[a->count++] = calloc(1, bytes ? bytes : 1);
}

static void
cap_release(void *ctx, void *p)
{
}

static double *
cap_workspace(void *ctx, km_train_buffer kind, size_t doubles, size_t n, int d)
{
	if (doubles > CAP_BYTES / sizeof(double))
		longjmp(((cap_arena *) ctx)->refused, 1);
	return cap_alloc(ctx, doubles * sizeof(double));
}

static void
cap_release_workspace(void *ctx, km_train_buffer kind, double *p)
{
}

static void
cap_reset(void)
{
	while (arena.count > 0)
		free(arena.p[--arena.count]);
	arena.bytes = 0;
}

typedef struct seed
{
	char		name[256];
	unsigned char *bytes;
	size_t		len;
} seed;

static int
seed_cmp(const void *a, const void *b)
{
	return strcmp(((const seed *) a)->name, ((const seed *) b)->name);
}

/* The files of dirname (sorted by name); 0 when the directory cannot be read. */
static int
read_dir(const char *dirname, seed *out)
{
	DIR		   *dir = opendir(dirname);
	struct dirent *e;
	int			n = 0;

	if (dir == NULL)
		return 0;
	while ((e = readdir(dir)) != NULL && n < MAX_SEEDS)
	{
		char		path[512];
		FILE	   *f;
		long		len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirname, e->d_name);
		f = fopen(path, "rb");
		if (f == NULL)
			continue;
		fseek(f, 0, SEEK_END);
		len = ftell(f);
		fseek(f, 0, SEEK_SET);
		snprintf(out[n].name, sizeof(out[n].name), "%s", e->d_name);
		out[n].bytes = malloc(len > 0 ? (size_t) len : 1);
		out[n].len = fread(out[n].bytes, 1, (size_t) len, f);
		fclose(f);
		if (out[n].len >= 2)
			n++;
		else
			free(out[n].bytes);
	}
	closedir(dir);
	qsort(out, n, sizeof(seed), seed_cmp);
	return n;
}

static int
read_seeds(seed *out)
{
	return read_dir(SEEDS_DIR, out);
}

static void
free_seeds(seed *s, int n)
{
	for (int i = 0; i < n; i++)
		free(s[i].bytes);
}

/*
 * A pass's adds over rows of D features (values, or class ids below 3), a
 * combine; whole: blocks of a whole chunk, as the pass aggregate adds them.
 */
static void
exercise(km_pass *pass, bool whole)
{
	static double X[KM_BLOCK_ROWS * D];
	static double y[KM_BLOCK_ROWS];
	static uint32_t cls[KM_BLOCK_ROWS];
	static uint64_t hash[KM_BLOCK_ROWS];
	static int	fold[KM_BLOCK_ROWS];
	static uint8_t held[KM_BLOCK_ROWS];
	size_t		n = whole ? (pass->chunk > 0 ? pass->chunk : KM_BLOCK_ROWS) : ROWS;
	void	   *a;
	void	   *b;
	km_error	err;

	if (pass->ordered)
		return;
	for (size_t i = 0; i < n; i++)
	{
		for (int j = 0; j < D; j++)
			X[i * D + j] = 0.25 * ((double) (i % 7) - 2.0) + 0.5 * j + 0.01 * (double) i;
		y[i] = (double) (i % 5) - 1.5;
		cls[i] = (uint32_t) (i % 3);
		hash[i] = UINT64_C(0x9E3779B97F4A7C15) * (uint64_t) (i + 1);
		fold[i] = (int) (i % 3);
		held[i] = (uint8_t) (i % 4 == 1);
	}
	a = cap_alloc(&arena, pass->state_bytes);
	b = cap_alloc(&arena, pass->state_bytes);
	if (pass->init != NULL)
	{
		pass->init(pass, a);
		pass->init(pass, b);
	}
	for (int labels = 0; labels < 2; labels++)
	{
		km_block	blk = {.n = n, .d = D, .X = X, .y = labels ? NULL : y,
			.cls = labels ? cls : NULL, .hash = hash, .fold = fold, .held = held};

		(void) pass->add(pass, &blk, 0, labels ? b : a, &err);
	}
	(void) km_pass_combine(pass, a, b, &err);
}

/*
 * Rebuild kind from bytes (exact-size copy); *refused when the arena's
 * cap stopped it.  A pass that rebuilds is exercised.
 */
static km_status
rebuild(uint16_t kind, const unsigned char *bytes, size_t len, bool whole, bool *refused,
		km_error *err)
{
	km_train_env env = {&arena, cap_alloc, cap_release, cap_workspace,
	cap_release_workspace, NULL, NULL};
	unsigned char *copy = unit_copy_bytes(bytes, len);
	km_pass    *pass = NULL;
	volatile km_status st = KM_OK;

	*refused = false;
	if (setjmp(arena.refused) == 0)
	{
		st = km_pass_rebuild(kind, copy, len, &env, &pass, err);
		if (st == KM_OK)
			exercise(pass, whole);
	}
	else
		*refused = true;
	cap_reset();
	free(copy);
	return st;
}

static uint16_t
seed_kind(const seed *s)
{
	return (uint16_t) (s->bytes[0] | (s->bytes[1] << 8));
}

/*
 * Every seed rebuilds as it is and adds blocks of a whole chunk (a point
 * of fewer rows once overflowed its job's buffer); every kind 1 to 13
 * and 15 to 19 has a seed.
 */
void
test_pass_points_rebuild(void)
{
	seed	   *s = calloc(MAX_SEEDS, sizeof(seed));
	int			n = read_seeds(s);
	bool		kinds[20] = {false};
	km_error	err;
	bool		refused;

	CHECK(n > 0, "no seeds in %s (run from the source tree)", SEEDS_DIR);
	CHECK(n < MAX_SEEDS, "%s holds %d seeds or more: raise MAX_SEEDS", SEEDS_DIR, MAX_SEEDS);
	for (int i = 0; i < n; i++)
	{
		uint16_t	kind = seed_kind(&s[i]);

		CHECK(rebuild(kind, s[i].bytes + 2, s[i].len - 2, true, &refused, &err) == KM_OK && !refused,
			  "%s: %s: %s", s[i].name, err.message, err.detail);
		if (kind < 20)
			kinds[kind] = true;
	}
	for (int k = 1; k < 20; k++)
		CHECK(kinds[k] || k == 14, "no seed of kind %d", k);
	free_seeds(s, n);
	free(s);
}

/* Each seed cut at every length, and with a byte after its end, is refused as KM_ERR_FORMAT. */
void
test_pass_points_truncated(void)
{
	seed	   *s = calloc(MAX_SEEDS, sizeof(seed));
	int			n = read_seeds(s);
	km_error	err;
	bool		refused;

	CHECK(n > 0, "no seeds in %s", SEEDS_DIR);
	for (int i = 0; i < n; i++)
	{
		uint16_t	kind = seed_kind(&s[i]);
		size_t		len = s[i].len - 2;
		unsigned char *longer = malloc(len + 1);

		for (size_t t = 0; t < len; t++)
		{
			km_status	st = rebuild(kind, s[i].bytes + 2, t, false, &refused, &err);

			CHECK(!refused && st == KM_ERR_FORMAT, "%s cut at %zu of %zu: status %d%s",
				  s[i].name, t, len, (int) st, refused ? " (memory cap)" : "");
		}
		memcpy(longer, s[i].bytes + 2, len);
		longer[len] = 0;
		CHECK(rebuild(kind, longer, len + 1, false, &refused, &err) == KM_ERR_FORMAT,
			  "%s with a byte more: status %d", s[i].name, (int) err.status);
		free(longer);
	}
	free_seeds(s, n);
	free(s);
}

/*
 * Each seed with one byte flipped (every byte, every bit and all bits):
 * refused with KM_ERR_FORMAT, stopped by the memory cap, or rebuilt into a
 * pass whose adds and combine run; so is each seed under every other
 * kind.  ASan and UBSan (make unittest-asan) report any read out of
 * bounds or undefined behaviour on the way.
 */
void
test_pass_points_bitflips(void)
{
	seed	   *s = calloc(MAX_SEEDS, sizeof(seed));
	int			n = read_seeds(s);
	km_error	err;
	bool		refused;
	size_t		tried = 0;
	size_t		rebuilt = 0;

	CHECK(n > 0, "no seeds in %s", SEEDS_DIR);
	for (int i = 0; i < n; i++)
	{
		uint16_t	kind = seed_kind(&s[i]);
		size_t		len = s[i].len - 2;
		unsigned char *p = malloc(len ? len : 1);

		for (size_t at = 0; at < len; at++)
			for (int bit = 0; bit <= 8; bit++)
			{
				km_status	st;

				memcpy(p, s[i].bytes + 2, len);
				p[at] ^= (unsigned char) (bit == 8 ? 0xff : 1 << bit);
				st = rebuild(kind, p, len, false, &refused, &err);
				tried++;
				if (st == KM_OK && !refused)
					rebuilt++;
				CHECK(refused || st == KM_OK || st == KM_ERR_FORMAT,
					  "%s, byte %zu ^ %d: status %d: %s: %s", s[i].name, at,
					  bit == 8 ? 0xff : 1 << bit, (int) st, err.message, err.detail);
			}
		for (uint16_t other = 0; other <= 14; other++)
		{
			km_status	st = rebuild(other, s[i].bytes + 2, len, false, &refused, &err);

			CHECK(refused || other == kind || st == KM_OK || st == KM_ERR_FORMAT,
				  "%s as kind %u: status %d", s[i].name, (unsigned) other, (int) st);
		}
		free(p);
	}
	/* most flips are refused; some (a value in range) rebuild */
	CHECK(tried > 0 && rebuilt > 0 && rebuilt < tried, "%zu of %zu rebuilt", rebuilt, tried);
	free_seeds(s, n);
	free(s);
}

/*
 * Nystrom centres whose kernel matrix has a trace so small that the
 * jitter eps (1e-12 trace / m) underflows to 0: the factor is refused
 * (KM_ERR_NOT_PD) instead of multiplying eps = 0 by 10 for ever, without
 * an interrupt check while each Cholesky fails (fuzz_pass found it hung on
 * a point with such centres; the pass aggregate's backend could not be
 * cancelled).
 */
void
test_pass_points_tiny_trace(void)
{
	static const double centres[2] = {1e-160, -3e-160};
	double		L[4];
	double		work[4 + 6];
	double		eps = -1.0;
	km_basis	b;
	km_error	err;

	memset(&b, 0, sizeof(b));
	b.kind = KM_APPROX_NYSTROM;
	b.kernel.type = KM_KERNEL_LINEAR;
	b.d = 1;
	b.m = 2;
	b.centres = centres;
	CHECK(km_approx_factor(&b, L, &eps, work, &err, NULL) == KM_ERR_NOT_PD,
		  "status %d, eps %g", (int) err.status, eps);
}

/*
 * Each finding of the pass fuzzer, resealed as fuzz_pass.c reseals an
 * input (the basis of kinds 2 to 12 resealed in place), is refused as a
 * format error, at once: kind02_polysum_degree_2e24 is a basis pass whose
 * polysum kernel had a degree of 2^24 (every kernel map entry then cost
 * 2^24 steps: a minute a block), before km_kernel_invalid.
 */
void
test_pass_points_findings(void)
{
	seed	   *s = calloc(MAX_SEEDS, sizeof(seed));
	int			n = read_dir(FINDINGS_DIR, s);
	km_error	err;
	bool		refused;

	CHECK(n > 0, "no findings in %s (run from the source tree)", FINDINGS_DIR);
	for (int i = 0; i < n; i++)
	{
		uint16_t	kind = seed_kind(&s[i]);
		unsigned char *point = s[i].bytes + 2;
		size_t		len = s[i].len - 2;
		km_status	st;

		if (kind >= 2 && kind <= 12 && len >= 20)
		{
			uint64_t	blen = 0;

			for (int b = 0; b < 8; b++)
				blen |= (uint64_t) point[12 + b] << (8 * b);
			if (blen <= len - 20 && blen % 8 == 0)
			{
				double	   *basis = malloc(blen ? (size_t) blen : 1);

				memcpy(basis, point + 20, (size_t) blen);
				km_basis_reseal(basis, (size_t) blen);
				memcpy(point + 20, basis, (size_t) blen);
				free(basis);
			}
		}
		st = rebuild(kind, point, len, false, &refused, &err);
		CHECK(st == KM_ERR_FORMAT && !refused, "%s: status %d (%s)", s[i].name, (int) st,
			  st == KM_OK ? "rebuilt" : err.message);
	}
	free_seeds(s, n);
	free(s);
}

/*
 * A regression scoring pass (kind 19) handed a state whose count is not a
 * whole number (a crafted state: the pass fuzzer's count of -5.8e82, once
 * converted to size_t) refuses it in its add and its combine.
 */
void
test_pass_points_score_state(void)
{
	seed	   *s = calloc(MAX_SEEDS, sizeof(seed));
	int			n = read_seeds(s);
	int			tried = 0;

	for (int i = 0; i < n; i++)
	{
		km_train_env env = {&arena, cap_alloc, cap_release, cap_workspace,
		cap_release_workspace, NULL, NULL};
		static double X[4 * D];
		static double y[4];
		static uint64_t hash[4];
		static uint8_t held[4];
		km_block	blk = {.n = 4, .d = D, .X = X, .y = y, .hash = hash, .held = held};
		km_pass    *pass = NULL;
		unsigned char *copy;
		double	   *a;
		double	   *b;
		km_error	err;

		if (seed_kind(&s[i]) != 19)
			continue;
		tried++;
		copy = unit_copy_bytes(s[i].bytes + 2, s[i].len - 2);
		CHECK(km_pass_rebuild(19, copy, s[i].len - 2, &env, &pass, &err) == KM_OK,
			  "%s: %s", s[i].name, err.message);
		a = cap_alloc(&arena, pass->state_bytes);
		b = cap_alloc(&arena, pass->state_bytes);
		pass->init(pass, a);
		pass->init(pass, b);
		a[0] = -5.77033e82;
		CHECK(pass->add(pass, &blk, 0, a, &err) == KM_ERR_INVALID, "add took a count of %g", a[0]);
		CHECK(km_pass_combine(pass, b, a, &err) == KM_ERR_INVALID, "combine took it");
		a[0] = 2.5;
		CHECK(pass->add(pass, &blk, 0, a, &err) == KM_ERR_INVALID, "add took a count of 2.5");
		cap_reset();
		free(copy);
	}
	CHECK(tried > 0, "no seed of kind 19 in %s", SEEDS_DIR);
	free_seeds(s, n);
	free(s);
}
