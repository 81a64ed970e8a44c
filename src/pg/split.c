/*
 * split.c - row hashes, rankings and fold assignment by row values.
 *
 * The hash is the one the named-model hold-out split uses (catalog.c):
 * hash_bytes_extended over the row's features and target, seeded with the
 * seed option.
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/memutils.h"

#include "split.h"

typedef struct RankKey
{
	uint64		hash;
	int64		row;
} RankKey;

typedef struct RankArg
{
	const double *X;
	const double *y;
	int			d;
} RankArg;

uint64
km_row_hash(const double *x, int d, const double *y, int64 seed, double *buf)
{
	int			len = d + (y != NULL ? 1 : 0);

	memcpy(buf, x, sizeof(double) * d);
	if (y != NULL)
		buf[d] = *y;
	return hash_bytes_extended((const unsigned char *) buf,
							   (int) (sizeof(double) * len), (uint64) seed);
}

static int
rank_key_cmp(const void *a, const void *b, void *arg)
{
	const RankKey *p = a;
	const RankKey *q = b;
	const RankArg *r = arg;
	int			c;

	if (p->hash != q->hash)
		return p->hash < q->hash ? -1 : 1;
	/* a collision: order by value, so that input order still does not matter */
	c = memcmp(r->X + p->row * r->d, r->X + q->row * r->d, sizeof(double) * r->d);
	if (c == 0 && r->y != NULL)
		c = memcmp(r->y + p->row, r->y + q->row, sizeof(double));
	if (c != 0)
		return c;
	/* identical rows: either order gives the same result */
	return p->row < q->row ? -1 : p->row > q->row;
}

void
km_rank_rows(const double *X, const double *y, int64 n, int d, int64 seed,
			 int64 *order)
{
	RankKey    *keys = palloc_extended(mul_size((Size) n, sizeof(RankKey)),
									   MCXT_ALLOC_HUGE);
	double	   *buf = palloc(sizeof(double) * (d + 1));
	RankArg		arg = {X, y, d};

	for (int64 i = 0; i < n; i++)
	{
		keys[i].hash = km_row_hash(X + i * d, d, y != NULL ? y + i : NULL,
								   seed, buf);
		keys[i].row = i;
	}
	qsort_arg(keys, (size_t) n, sizeof(RankKey), rank_key_cmp, &arg);
	for (int64 i = 0; i < n; i++)
		order[i] = keys[i].row;
	pfree(keys);
	pfree(buf);
}

void
km_permute_rows(double *X, double *y, int64 n, int d, int64 *order)
{
	double	   *row = palloc(sizeof(double) * Max(d, 1));

	for (int64 i = 0; i < n; i++)
	{
		int64		j = i;
		double		yi;

		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
		if (order[i] == i)
			continue;
		/* follow the cycle through i: row j takes row order[j] */
		memcpy(row, X + (Size) i * d, sizeof(double) * d);
		yi = y != NULL ? y[i] : 0.0;
		while (order[j] != i)
		{
			int64		k = order[j];

			memcpy(X + (Size) j * d, X + (Size) k * d, sizeof(double) * d);
			if (y != NULL)
				y[j] = y[k];
			order[j] = j;
			j = k;
		}
		memcpy(X + (Size) j * d, row, sizeof(double) * d);
		if (y != NULL)
			y[j] = yi;
		order[j] = j;
	}
	pfree(row);
}

void
km_hash_order_rows(double *X, double *y, int64 n, int d, int64 seed)
{
	int64	   *order;

	if (n < 2)
		return;
	order = palloc_extended(mul_size((Size) n, sizeof(int64)), MCXT_ALLOC_HUGE);
	km_rank_rows(X, y, n, d, seed, order);
	km_permute_rows(X, y, n, d, order);
	pfree(order);
}

void
km_folds_by_rank(const int64 *order, int64 n, int folds, int *fold)
{
	for (int64 rank = 0; rank < n; rank++)
		fold[order[rank]] = (int) (rank % folds);
}

/* order: the rows marked held, then the others, each in row order. */
static void
held_first(const bool *held, int64 n, int64 *order)
{
	int64		k = 0;

	for (int64 i = 0; i < n; i++)
		if (held[i])
			order[k++] = i;
	for (int64 i = 0; i < n; i++)
		if (!held[i])
			order[k++] = i;
}

int64
km_holdout_by_rank(const int64 *ranked, int64 n, double fraction, int64 *order)
{
	int64		ntest = (int64) floor(fraction * (double) n);
	bool	   *held = palloc_extended(n, MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);

	for (int64 i = 0; i < ntest; i++)
		held[ranked[i]] = true;
	held_first(held, n, order);
	pfree(held);
	return ntest;
}

KmHoldoutThreshold
km_holdout_threshold(double fraction)
{
	KmHoldoutThreshold t = {false, 0};
	double		v;

	if (!(fraction > 0.0))
		return t;
	v = ldexp(fraction, 64);
	if (v >= 18446744073709551616.0)
		t.all = true;
	else
		t.below = (uint64) v;
	return t;
}

bool
km_row_held_out(const double *x, int d, double y, int64 seed,
				KmHoldoutThreshold t, double *buf)
{
	uint64		h;

	if (t.all)
		return true;
	if (t.below == 0)
		return false;
	/* -0.0 is 0.0: rows equal in SQL fall on the same side */
	for (int j = 0; j < d; j++)
		buf[j] = x[j] + 0.0;
	buf[d] = y + 0.0;
	h = hash_bytes_extended((const unsigned char *) buf,
							(int) (sizeof(double) * (d + 1)), (uint64) seed);
	return h < t.below;
}

int
km_row_fold(const double *x, int d, double key, int64 seed, int folds, double *buf)
{
	uint64		h;

	for (int j = 0; j < d; j++)
		buf[j] = x[j] + 0.0;
	buf[d] = key + 0.0;
	h = hash_bytes_extended((const unsigned char *) buf,
							(int) (sizeof(double) * (d + 1)), (uint64) seed);
	return (int) (h % (uint64) folds);
}

typedef struct StratKey
{
	double		stratum;
	int64		rank;
	int64		row;
} StratKey;

static int
strat_key_cmp(const void *a, const void *b)
{
	const StratKey *p = a;
	const StratKey *q = b;

	if (p->stratum != q->stratum)
		return p->stratum < q->stratum ? -1 : 1;
	return p->rank < q->rank ? -1 : p->rank > q->rank;
}

int64
km_holdout_stratified(const int64 *ranked, const double *stratum, int64 n,
					  double fraction, int64 *order)
{
	StratKey   *keys = palloc_extended(mul_size(Max(1, n), sizeof(StratKey)),
									   MCXT_ALLOC_HUGE);
	bool	   *held = palloc_extended(Max(1, n), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	int64		ntest = 0;

	for (int64 rank = 0; rank < n; rank++)
	{
		keys[rank].stratum = stratum[ranked[rank]];
		keys[rank].rank = rank;
		keys[rank].row = ranked[rank];
	}
	qsort(keys, (size_t) n, sizeof(StratKey), strat_key_cmp);
	for (int64 start = 0; start < n;)
	{
		int64		end = start;
		int64		take;

		while (end < n && keys[end].stratum == keys[start].stratum)
			end++;
		take = (int64) floor(fraction * (double) (end - start));
		for (int64 i = start; i < start + take; i++)
			held[keys[i].row] = true;
		ntest += take;
		start = end;
	}
	held_first(held, n, order);
	pfree(keys);
	pfree(held);
	return ntest;
}
