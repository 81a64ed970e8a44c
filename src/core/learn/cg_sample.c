/*
 * cg_sample.c - the row sample of "solver": "cg"'s preconditioner
 * (cg_sample.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "basis.h"
#include "learn/cg_sample.h"

/*
 * Rows sampled at most, in multiples of m: the preconditioned system's
 * condition number falls with s / m (near 3 at 16 m), PCG's iterations to
 * a relative residual of 1e-7 with it (500,000 rows, m = 1,000: 13, 10, 8
 * and 7 at 16, 32, 64 and 128 m).
 */
#define SAMPLE_MAX_PER_CENTRE 64.0
/* ... and at least (below it the centres themselves do as well). */
#define SAMPLE_MIN_PER_CENTRE 4.0
/*
 * The passes' worth of work the sample's sums may cost: from 16 m rows each
 * doubling saves two or three iterations (1M rows, m = 4,000: at two
 * passes' cost 8 m rows and 14 iterations).
 */
#define SAMPLE_PASSES 4.0
/* Its memory at least (below it, one m x m factor's): 64 MiB. */
#define SAMPLE_MIN_BYTES 67108864.0

static uint64_t *
sample_hashes(km_cg_sample *s)
{
	return (uint64_t *) s->data;
}

/* row i at sample_rows(s) + i * (d + 1): its d features, then its target */
static double *
sample_rows(km_cg_sample *s)
{
	return s->data + s->capacity;
}

#define CSAMPLE(s) ((km_cg_sample *) (uintptr_t) (s))

uint32_t
km_cg_sample_rows(uint32_t m, uint32_t d, size_t n)
{
	double		mm = (double) m;
	/* a pass: per row and centre d products and adds, an exp, two gemv terms */
	double		pass = (2.0 * d + 40.0) * (double) n * mm;
	double		e = SAMPLE_MAX_PER_CENTRE * mm;
	double		by_cost = (SAMPLE_PASSES * pass - 2.0 * mm * mm * mm) / (mm * mm);
	/*
	 * a row's bytes: the state and a host's copy (8 (d + 2) each), its
	 * sorted copy (8 (d + 1)), its sort key (24): one m x m factor in all,
	 * or SAMPLE_MIN_BYTES
	 */
	double		by_memory = fmax(8.0 * mm * mm, SAMPLE_MIN_BYTES) / (24.0 * (double) d + 72.0);

	if (m == 0 || n == 0)
		return 0;
	if (by_cost < e)
		e = by_cost;
	if (by_memory < e)
		e = by_memory;
	if (e < SAMPLE_MIN_PER_CENTRE * mm)
		return 0;
	if (e > (double) n)
		e = (double) n;
	return e >= (double) (UINT32_MAX / 2) ? UINT32_MAX / 2 : (uint32_t) e;
}

uint32_t
km_cg_sample_capacity(uint32_t e)
{
	/* the count is binomial: 8 standard deviations over its mean, and some (past it: overflowed) */
	double		c = (double) e + 8.0 * sqrt((double) e) + 64.0;

	return c >= (double) UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t) c;
}

uint64_t
km_cg_sample_threshold(uint32_t e, size_t n)
{
	double		t;

	if (n == 0 || (size_t) e >= n)
		return UINT64_MAX;
	t = ldexp((double) e / (double) n, 64);
	return t >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t) t;
}

double
km_cg_sample_plan_bytes(uint32_t m, uint32_t d, size_t n)
{
	uint32_t	e = km_cg_sample_rows(m, d, n);
	uint32_t	cap = km_cg_sample_capacity(e);

	if (e == 0)
		return 0.0;
	/* the state and a host's copy, the sorted rows and targets, the sort's keys */
	return 2.0 * (double) km_cg_sample_bytes(cap, d) + 8.0 * (double) cap * (d + 1.0) +
		(double) km_cg_sample_sort_bytes(cap);
}

size_t
km_cg_sample_bytes(uint32_t capacity, uint32_t d)
{
	size_t		per = (size_t) d + 2;	/* hash, features, target */

	if (capacity == 0 || d == 0 ||
		(size_t) capacity > (SIZE_MAX / sizeof(double) - 64) / per)
		return 0;
	return sizeof(km_cg_sample) + sizeof(double) * per * capacity;
}

void
km_cg_sample_init(km_cg_sample *s, uint32_t capacity, uint32_t d, uint64_t threshold)
{
	memset(s, 0, km_cg_sample_bytes(capacity, d));
	s->magic = KM_CG_SAMPLE_MAGIC;
	s->capacity = capacity;
	s->d = d;
	s->threshold = threshold;
}

km_status
km_cg_sample_check(const km_cg_sample *s, size_t bytes, uint32_t capacity, uint32_t d,
				   uint64_t threshold, km_error *err)
{
	size_t		want = km_cg_sample_bytes(capacity, d);

	if (want == 0 || bytes != want || s->magic != KM_CG_SAMPLE_MAGIC ||
		s->capacity != capacity || s->d != d || s->threshold != threshold ||
		s->n > s->capacity || s->overflowed > 1 || s->pad != 0)
		return km_fail(err, KM_ERR_INVALID, "preconditioner sample does not match its pass",
					   "The state (%zu bytes) keeps %u of %u rows of %u features below hash %llu; the pass keeps %u rows of %u below %llu in %zu bytes.",
					   bytes, bytes >= sizeof(km_cg_sample) ? (unsigned) s->n : 0U,
					   bytes >= sizeof(km_cg_sample) ? (unsigned) s->capacity : 0U,
					   bytes >= sizeof(km_cg_sample) ? (unsigned) s->d : 0U,
					   bytes >= sizeof(km_cg_sample) ? (unsigned long long) s->threshold : 0ULL,
					   (unsigned) capacity, (unsigned) d, (unsigned long long) threshold, want);
	return KM_OK;
}

uint32_t
km_cg_sample_first_nonfinite(const km_cg_sample *s)
{
	const double *rows = sample_rows(CSAMPLE(s));
	size_t		w = (size_t) s->d + 1;

	for (uint32_t i = 0; i < s->n; i++)
		for (size_t j = 0; j < w; j++)
			if (!isfinite(rows[i * w + j]))
				return i;
	return s->n;
}

void
km_cg_sample_offer(km_cg_sample *s, const double *x, double y, uint64_t hash)
{
	double	   *row;

	if (hash > s->threshold || s->overflowed)
		return;
	if (s->n == s->capacity)
	{
		s->overflowed = 1;
		return;
	}
	sample_hashes(s)[s->n] = hash;
	row = sample_rows(s) + (size_t) s->n * (s->d + 1);
	memcpy(row, x, sizeof(double) * s->d);
	row[s->d] = y;
	s->n++;
}

void
km_cg_sample_combine(km_cg_sample *a, const km_cg_sample *b)
{
	const uint64_t *h = sample_hashes(CSAMPLE(b));
	const double *rows = sample_rows(CSAMPLE(b));

	if (b->overflowed)
		a->overflowed = 1;
	for (uint32_t i = 0; i < b->n; i++)
	{
		const double *row = rows + (size_t) i * (b->d + 1);

		km_cg_sample_offer(a, row, row[b->d], h[i]);
	}
}

size_t
km_cg_sample_sort_bytes(uint32_t capacity)
{
	return sizeof(km_row_ref) * ((size_t) capacity + 1);
}

uint32_t
km_cg_sample_sorted(const km_cg_sample *s, double *X, double *y, void *scratch)
{
	const uint64_t *h = sample_hashes(CSAMPLE(s));
	const double *rows = sample_rows(CSAMPLE(s));
	uint32_t	d = s->d;
	km_row_ref *keys = scratch;

	/* the key: the hash, then the features, then the target (a total order) */
	for (uint32_t i = 0; i < s->n; i++)
		keys[i] = (km_row_ref)
	{
		h[i], rows + (size_t) i * (d + 1), d + 1
	};
	qsort(keys, s->n, sizeof(km_row_ref), km_row_ref_cmp);
	for (uint32_t i = 0; i < s->n; i++)
	{
		memcpy(X + (size_t) i * d, keys[i].row, sizeof(double) * d);
		y[i] = keys[i].row[d];
	}
	return s->n;
}
