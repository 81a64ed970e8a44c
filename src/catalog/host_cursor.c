/*
 * host_cursor.c - the cursor host (host_cursor.h): a named model's stored
 * query read once per pass the learner asks for, its rows handed in blocks
 * to km_pass_feed; and the row reading it shares with passes_classify.c.
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "named_common.h"
#include "host_cursor.h"

/* Rows a cursor fetch returns at most, and the bytes a batch aims at. */
#define PASS_FETCH_ROWS 1000
#define PASS_BATCH_BYTES (4.0 * 1024 * 1024)
/* A row's bytes besides its features: tuple and array headers, target or label. */
#define PASS_ROW_OVERHEAD 128.0

/* The bytes of one fetched row of d features. */
static double
row_bytes(int d)
{
	return 8.0 * Max(d, 1) + PASS_ROW_OVERHEAD;
}

/* A batch's bytes besides its fetched rows: a row's detoasted copy, x and hbuf. */
static double
batch_extra_bytes(int d)
{
	return row_bytes(d) + 16.0 * (Max(d, 1) + 1);
}

void
pass_rows_scan(const CatalogQuery *q, PassRows *pr, PassBatchFn batch, void *arg)
{
	int			d = pr->d > 0 ? pr->d : pr->width;
	double		room = Min(PASS_BATCH_BYTES, km_memory_room() / 4.0);
	long		fetch = (long) Max(1.0, Min((double) PASS_FETCH_ROWS, floor(room / row_bytes(d))));

	pr->seen = pr->skipped = pr->ntrain = pr->ntest = 0;
	/* the batch, its rows' arrays read one at a time (pass_row_read) */
	pr->batch = km_mem_resize(pr->batch, pr->cxt,
							  (double) fetch * row_bytes(d) + batch_extra_bytes(d),
							  "kernel_model_train", false);
	catalog_query_scan(q,
					   psprintf("SELECT s.f, s.y FROM %s", q->source),
					   0, NULL, NULL, fetch, batch, arg);
	km_mem_release(pr->batch);
}


int
pass_rows_first_d(const CatalogQuery *q)
{
	int			d = -1;
	bool		isnull;

	catalog_query_run(q,
					  psprintf("SELECT pg_catalog.array_length(s.f, 1) FROM %s "
							   "WHERE s.f IS NOT NULL AND s.y IS NOT NULL LIMIT 1",
							   q->source), 0, NULL, NULL);
	if (SPI_processed == 1)
	{
		Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		d = isnull ? 0 : DatumGetInt32(v);
	}
	SPI_freetuptable(SPI_tuptable);
	return d;
}

bool
pass_row_read(PassRows *pr, SPITupleTable *tt, uint64 i, bool basis_pass, Datum *y)
{
	bool		fnull;
	bool		ynull;
	Datum		f = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &fnull);
	ArrayType  *arr;
	char		where[64];
	int			len;

	*y = SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &ynull);
	pr->seen++;
	if (fnull || ynull)
	{
		pr->skipped++;
		return false;
	}
	arr = DatumGetArrayTypeP(f);	/* detoasted: freed below */
	snprintf(where, sizeof(where), "row " INT64_FORMAT, pr->seen);
	len = km_array_length(arr, where);
	if (pr->d < 0)
	{
		pr->d = len;
		if (basis_pass)
			passes_rows_changed("The basis pass read a usable row where the statement before it found none.");
		pr->x = MemoryContextAlloc(pr->cxt, sizeof(double) * (len + 1));
		pr->hbuf = MemoryContextAlloc(pr->cxt, sizeof(double) * (len + 1));
	}
	else if (len != pr->d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("Row " INT64_FORMAT " has %d features; the first row had %d.",
						   pr->seen, len, pr->d)));
	km_array_copy(arr, pr->d, pr->x, where);
	if ((Pointer) arr != DatumGetPointer(f))
		pfree(arr);				/* a batch holds one detoasted array at a time */
	return true;
}

void
pass_row_check_target(const PassRows *pr, double y)
{
	if (!isfinite(y))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("target values must be finite"),
				 errdetail("The target of row " INT64_FORMAT " is %s.",
						   pr->seen, float8out_internal(y))));
}

bool
pass_row_held(PassRows *pr, double key, int64 seed)
{
	bool		held = km_row_held_out(pr->x, pr->d, key, seed, pr->thr, pr->hbuf);

	if (held)
		pr->ntest++;
	else
		pr->ntrain++;
	return held;
}

int
pass_row_fold(PassRows *pr, double key, int64 seed, int folds)
{
	uint64		h;

	/* the hash of km_row_held_out: -0.0 is 0.0 */
	for (int j = 0; j < pr->d; j++)
		pr->hbuf[j] = pr->x[j] + 0.0;
	pr->hbuf[pr->d] = key + 0.0;
	h = hash_bytes_extended((const unsigned char *) pr->hbuf,
							(int) (sizeof(double) * (pr->d + 1)), (uint64) seed);
	return (int) (h % (uint64) folds);
}


double
pass_batch_min_bytes(int d)
{
	return row_bytes(d) + batch_extra_bytes(d);
}

/*
 * The cursor host.  A row of the pass's side goes into the block with its
 * target, its reservoir key and its fold; a full block (or the last one)
 * goes to km_pass_feed.  An error of the pass (err) ends the scan at the
 * next batch and is raised by the learner's caller.
 */
static void
host_flush(CursorHost *h)
{
	km_block	b = {.n = h->nblock, .d = h->d, .X = h->X, .y = h->y,
		.hash = (const uint64_t *) h->hash, .fold = h->folds > 0 ? h->fold : NULL};

	if (h->nblock == 0 || h->status != KM_OK)
		return;
	h->nblock = 0;
	h->status = km_pass_feed(h->pass, &b, h->state, h->err);
}

/* The side's row in pr->x (target y): counted, and into the block (pass). */
static void
host_row(CursorHost *h, double y, int fold)
{
	PassRows   *pr = &h->pr;
	size_t		d = (size_t) h->d;

	if (h->folds > 0)
		h->fold_n[fold]++;
	h->fed++;
	if (h->pass == NULL)
		return;
	memcpy(h->X + h->nblock * d, pr->x, sizeof(double) * d);
	for (size_t j = 0; j < d; j++)
		h->kbuf[j] = pr->x[j] + 0.0;	/* -0 hashes as 0 (km_row_hashes) */
	h->hash[h->nblock] = hash_bytes_extended((const unsigned char *) h->kbuf,
											 (int) (sizeof(double) * d), h->basis_seed);
	h->y[h->nblock] = y;
	h->fold[h->nblock] = fold;
	if (++h->nblock == KM_BLOCK_ROWS)
		host_flush(h);
}

static void
host_batch(void *arg, SPITupleTable *tt, uint64 n)
{
	CursorHost *h = arg;

	for (uint64 i = 0; i < n && h->status == KM_OK; i++)
	{
		Datum		yd;
		double		y;
		int			fold = 0;

		if (!pass_row_read(&h->pr, tt, i, false, &yd))
			continue;
		y = DatumGetFloat8(yd);
		pass_row_check_target(&h->pr, y);
		if (pass_row_held(&h->pr, y, h->seed) && !h->all_rows)
			continue;
		if (h->folds > 0)
			fold = pass_row_fold(&h->pr, y, h->seed, h->folds);
		host_row(h, y, fold);
	}
	CHECK_FOR_INTERRUPTS();
}

static km_status
cursor_run(void *ctx, km_pass *pass, void *state, km_error *err)
{
	CursorHost *h = ctx;
	MemoryContext old = MemoryContextSwitchTo(h->cxt);

	h->pass = pass;
	h->state = state;
	h->err = err;
	h->status = KM_OK;
	h->fed = 0;
	h->nblock = 0;
	if (h->folds > 0)
		memset(h->fold_n, 0, sizeof(int64) * h->folds);
	pass_rows_scan(h->query, &h->pr, host_batch, h);
	host_flush(h);
	MemoryContextSwitchTo(old);
	h->pass = NULL;
	if (h->status != KM_OK)
		return h->status;
	/* every pass reads the rows the counting scan read; the pass by name */
	if (h->fed != h->rows)
		check_pass_rows("counting", h->rows,
						pnstrdup(pass->what, strcspn(pass->what, ":")), h->fed,
						h->all_rows ? "usable" : "training");
	return KM_OK;
}

double
cursor_host_bytes(int d)
{
	double		w = (double) Max(d, 1);

	/* the block (features, target, key, fold), the key's row, a batch of one row */
	return (double) KM_BLOCK_ROWS * (8.0 * w + 24.0) + 8.0 * w + pass_batch_min_bytes(d);
}

void
cursor_host_count(CursorHost *h, const CatalogQuery *query, int d, bool all_rows,
				  int64 seed, double test_fraction, int folds, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	size_t		w;

	memset(h, 0, sizeof(*h));
	h->query = query;
	h->cxt = cxt;
	h->all_rows = all_rows;
	h->seed = seed;
	h->basis_seed = (uint64) seed;	/* the options' seed, as km_row_hashes's */
	h->test_fraction = test_fraction;
	h->folds = folds;
	h->pr.cxt = cxt;
	h->pr.thr = km_holdout_threshold(test_fraction);
	/* the probed length sizes the batches; -1: the first row's (pass_row_read) */
	h->pr.d = d;
	if (d >= 0)
	{
		h->pr.x = palloc(sizeof(double) * (d + 1));
		h->pr.hbuf = palloc(sizeof(double) * (d + 1));
	}
	if (folds > 0)
		h->fold_n = palloc0(sizeof(int64) * folds);
	h->status = KM_OK;
	pass_rows_scan(query, &h->pr, host_batch, h);
	h->d = h->pr.d;
	h->seen = h->pr.seen;
	h->skipped = h->pr.skipped;
	h->usable = h->pr.ntrain + h->pr.ntest;
	h->rows = h->fed;
	/* the block a pass fills: KM_BLOCK_ROWS rows, counted */
	w = (size_t) Max(h->d, 1);
	h->grant = km_mem_reserve(cxt, (double) KM_BLOCK_ROWS * (8.0 * w + 24.0) + 8.0 * w,
							  "kernel_model_train", false);
	h->X = palloc_extended(sizeof(double) * KM_BLOCK_ROWS * w, MCXT_ALLOC_HUGE);
	h->y = palloc(sizeof(double) * KM_BLOCK_ROWS);
	h->hash = palloc(sizeof(uint64) * KM_BLOCK_ROWS);
	h->fold = palloc0(sizeof(int) * KM_BLOCK_ROWS);
	h->kbuf = palloc(sizeof(double) * w);
	MemoryContextSwitchTo(old);
}

km_host
cursor_host(CursorHost *h)
{
	km_host		host = {.ctx = h, .rows = (size_t) h->rows, .folds = h->folds > 0,
	.run = cursor_run};

	return host;
}
