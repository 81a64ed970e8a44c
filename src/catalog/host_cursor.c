/*
 * host_cursor.c - the cursor host (host_cursor.h): a named model's stored
 * query read once per pass the learner asks for, its rows handed in blocks
 * to km_pass_feed; and the row reading it shares with the classifiers'
 * scoring pass (passes_classify.c).
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"
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
							  q->fn, false);
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
	return km_row_fold(pr->x, pr->d, key, seed, folds, pr->hbuf);
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
	bool		labels = h->target != CURSOR_VALUES;
	km_block	b = {.n = h->nblock, .d = h->d, .X = h->X,
		.y = labels ? NULL : h->y, .cls = labels ? h->cls : NULL,
		.hash = (const uint64_t *) h->hash, .fold = h->folds > 0 ? h->fold : NULL};

	if (h->nblock == 0 || h->status != KM_OK)
		return;
	h->nblock = 0;
	h->status = km_pass_feed(h->pass, &b, h->state, h->err);
}

/* The side's row in pr->x (target y or class cls): counted, and into the block (pass). */
static void
host_row(CursorHost *h, double y, uint32 cls, int fold)
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
	h->cls[h->nblock] = cls;
	h->fold[h->nblock] = fold;
	if (++h->nblock == h->block_rows)
		host_flush(h);
}

/* The value a row's label or target is hashed by for the split and folds. */
static double
row_key(const CursorHost *h, Datum y)
{
	if (h->target == CURSOR_TEXT_LABELS)
	{
		text	   *t = DatumGetTextPP(y);

		return (double) hash_bytes((const unsigned char *) VARDATA_ANY(t),
								   (int) VARSIZE_ANY_EXHDR(t));
	}
	return DatumGetFloat8(y);
}

/*
 * The index of a row's label among those met (the counting scan adds a new
 * one; a pass fails on it).
 */
static int
row_label(CursorHost *h, Datum y)
{
	const char *s = NULL;
	int			len = 0;
	double		v = 0.0;
	int			l;

	if (h->target == CURSOR_TEXT_LABELS)
	{
		text	   *t = DatumGetTextPP(y);

		s = VARDATA_ANY(t);
		len = (int) VARSIZE_ANY_EXHDR(t);
		for (l = 0; l < h->nlab; l++)
			if (strncmp(h->lab_text[l], s, len) == 0 && h->lab_text[l][len] == '\0')
				break;
	}
	else
	{
		v = DatumGetFloat8(y) == 0.0 ? 0.0 : DatumGetFloat8(y);
		for (l = 0; l < h->nlab; l++)
			if (h->lab_value[l] == v)
				break;
	}
	if (l < h->nlab)
		return l;
	if (h->pass != NULL)
		passes_rows_changed(psprintf("A training row of the %s pass has the label \"%s\", which the counting pass did not read.",
									 pnstrdup(h->pass->what, strcspn(h->pass->what, ":")),
									 s != NULL ? pnstrdup(s, len) : float8out_internal(v)));
	if (l == KM_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct labels"),
				 errdetail("The training rows have more than %d distinct labels; a model may have at most %d classes.",
						   KM_MAX_CLASSES, KM_MAX_CLASSES),
				 errhint("A continuous target needs a regression method (\"ridge\" or \"lms\").")));
	if (s != NULL)
		h->lab_text[l] = MemoryContextStrdup(h->cxt, pnstrdup(s, len));
	else
		h->lab_value[l] = v;
	h->nlab++;
	return l;
}

static void
host_batch(void *arg, SPITupleTable *tt, uint64 n)
{
	CursorHost *h = arg;

	for (uint64 i = 0; i < n && h->status == KM_OK; i++)
	{
		Datum		yd;
		double		key;
		int			fold = 0;

		if (!pass_row_read(&h->pr, tt, i, false, &yd))
			continue;
		if (h->target != CURSOR_TEXT_LABELS)
			pass_row_check_target(&h->pr, DatumGetFloat8(yd));
		key = row_key(h, yd);
		if (pass_row_held(&h->pr, key, h->seed) && !h->all_rows)
			continue;
		if (h->folds > 0)
			fold = pass_row_fold(&h->pr, key, h->seed, h->folds);
		if (h->target == CURSOR_VALUES)
			host_row(h, DatumGetFloat8(yd), 0, fold);
		else
		{
			int			l = row_label(h, yd);

			if (h->pass == NULL)
				h->lab_count[l]++;
			host_row(h, 0.0, h->class_of != NULL ? h->class_of[l] : 0, fold);
		}
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

/* Rows of the host's block: KM_BLOCK_ROWS, or every row when there are fewer. */
static size_t
block_rows(int64 rows)
{
	return rows < KM_BLOCK_ROWS ? (size_t) Max(rows, 1) : KM_BLOCK_ROWS;
}

double
cursor_host_bytes(int d, int64 rows)
{
	double		w = (double) Max(d, 1);

	/* the block (features, target, class, key, fold), the key's row, a batch of one row */
	return (double) block_rows(rows) * (8.0 * w + 28.0) + 8.0 * w + pass_batch_min_bytes(d);
}

void
cursor_host_count(CursorHost *h, const CatalogQuery *query, int d, CursorTarget target,
				  bool all_rows, int64 seed, double test_fraction, int folds,
				  MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);

	memset(h, 0, sizeof(*h));
	h->query = query;
	h->cxt = cxt;
	h->all_rows = all_rows;
	h->seed = seed;
	h->basis_seed = (uint64) seed;	/* the options' seed, as km_row_hashes's */
	h->test_fraction = test_fraction;
	h->folds = folds;
	h->target = target;
	if (target != CURSOR_VALUES)
	{
		h->lab_text = palloc0(sizeof(char *) * KM_MAX_CLASSES);
		h->lab_value = palloc0(sizeof(double) * KM_MAX_CLASSES);
		h->lab_count = palloc0(sizeof(uint64) * KM_MAX_CLASSES);
	}
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
	MemoryContextSwitchTo(old);
}

km_host
cursor_host(CursorHost *h)
{
	km_host		host = {.ctx = h, .rows = (size_t) h->rows, .folds = h->folds > 0,
	.run = cursor_run};
	MemoryContext old = MemoryContextSwitchTo(h->cxt);
	size_t		w;

	/*
	 * The block a pass fills, counted: KM_BLOCK_ROWS rows (the learner's
	 * chunks fall on its edges), or every row when there are fewer
	 */
	w = (size_t) Max(h->d, 1);
	h->block_rows = block_rows(h->rows);
	h->grant = km_mem_reserve(h->cxt, (double) h->block_rows * (8.0 * w + 28.0) + 8.0 * w,
							  h->query->fn, false);
	h->X = palloc_extended(sizeof(double) * h->block_rows * w, MCXT_ALLOC_HUGE);
	h->y = palloc(sizeof(double) * h->block_rows);
	h->cls = palloc0(sizeof(uint32) * h->block_rows);
	h->hash = palloc(sizeof(uint64) * h->block_rows);
	h->fold = palloc0(sizeof(int) * h->block_rows);
	h->kbuf = palloc(sizeof(double) * w);
	MemoryContextSwitchTo(old);
	return host;
}
