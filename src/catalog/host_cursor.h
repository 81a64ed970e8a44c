/*
 * host_cursor.h - the cursor host (issue 28 step 2, DESIGN-0.4.md): the
 * rows of a named model's stored query, read through a cursor once per
 * pass the learner asks for (learn/pass.h km_host), and the row reading
 * the classifiers' scoring pass (passes_classify.c) shares with it
 * (host_cursor.c).
 *
 * The query runs as catalog_query.c runs it (as its owner, security-
 * restricted, search_path pinned), a batch at a time (bounded in bytes and
 * rows, counted against kernel_ml.max_memory); a row with a null feature
 * array or target is skipped; a row is held out when the hash of its
 * values and the seed says so (split.h km_row_held_out, as the SQL
 * function _kernel_ml_holdout); its k-fold fold is the same hash modulo
 * the folds; its reservoir key is the hash of its features (the memory
 * host's, train_rows.h km_row_hashes).  The host hands the side's rows
 * (the training rows, or every usable row) in blocks of KM_BLOCK_ROWS to
 * km_pass_feed, in the query's order.  It knows no task, method or
 * representation: a row is features, a target (a value, or a label and
 * the class the caller gave it), a hash and a fold.
 */
#ifndef KM_HOST_CURSOR_H
#define KM_HOST_CURSOR_H

#include "postgres.h"

#include "executor/spi.h"

#include "class_types.h"
#include "learn/pass.h"
#include "pgutil.h"
#include "split.h"
#include "catalog_query.h"

/* One pass's rows: the row buffers, the counts, the block being filled. */
typedef struct PassRows
{
	MemoryContext cxt;			/* where x and hbuf go when a pass sizes them */
	KmHoldoutThreshold thr;
	int			d;				/* -1 until the first row */
	int			width;			/* features a row has when d is -1 (0: unknown) */
	KmMemGrant *batch;			/* a scan's batch, counted (in cxt) */
	double	   *x;				/* d + 1: a row */
	double	   *hbuf;			/* d + 1: km_row_held_out's */
	int64		seen;			/* rows of this pass */
	int64		skipped;
	int64		ntrain;
	int64		ntest;
} PassRows;

typedef void (*PassBatchFn) (void *arg, SPITupleTable *tt, uint64 n);

/*
 * One pass over every row of the query (SELECT s.f, s.y), counts reset.
 * The cursor fetches rows by the bytes of a row of d (or width) features,
 * a batch of at most 4 MB (less when kernel_ml.max_memory leaves less) and
 * 1000 rows, counted against kernel_ml.max_memory while the scan runs.
 */
extern void pass_rows_scan(const CatalogQuery *q, PassRows *pr, PassBatchFn batch, void *arg);

/* The bytes of a batch of one row of d features (the least a scan takes). */
extern double pass_batch_min_bytes(int d);

/* The first usable row's length (0: an empty array), -1 when there is none. */
extern int	pass_rows_first_d(const CatalogQuery *q);

/*
 * Row i of the batch: counted, its features into x (false: a null, skipped);
 * the first row's length sizes x when d is -1 (an error in the basis pass).
 */
extern bool pass_row_read(PassRows *pr, SPITupleTable *tt, uint64 i, bool basis_pass,
						  Datum *y);

/* The "target values must be finite" error for a non-finite y. */
extern void pass_row_check_target(const PassRows *pr, double y);

/* Whether the row is held out (km_row_held_out over x and key), counted. */
extern bool pass_row_held(PassRows *pr, double key, int64 seed);

/*
 * The k-fold fold of a training row (named model selection by passes):
 * the hash km_row_held_out takes (features and key, -0.0 as 0.0, seed)
 * modulo folds, from the row alone; not the in-memory rank rule
 * (km_folds_by_rank), so folds sizes differ by chance, as the hold-out's.
 */
extern int	pass_row_fold(PassRows *pr, double key, int64 seed, int folds);

/* How pass_row_fold deals rows, for km_check_folds's detail (train_rows.h). */
#define KM_PASS_FOLD_RULE "A named model reads its rows in passes, and each row's fold is its row hash modulo cv"

/* What a row's second column is: a value, or a label (float8 or text). */
typedef enum CursorTarget
{
	CURSOR_VALUES = 0,			/* km_block.y */
	CURSOR_FLOAT8_LABELS,		/* km_block.cls, a label's class */
	CURSOR_TEXT_LABELS
} CursorTarget;

/* The cursor host of one training: which rows, how they split, the counts. */
typedef struct CursorHost
{
	const CatalogQuery *query;
	MemoryContext cxt;			/* the host's buffers */
	bool		all_rows;		/* every usable row, else the training side */
	int64		seed;			/* the split's and folds' hash seed */
	double		test_fraction;
	int			folds;			/* k-fold: each row's fold (0: none) */
	uint64		basis_seed;		/* the reservoir key's seed: seed's */
	CursorTarget target;
	/*
	 * Labels: those the counting scan met on the side, in the order met,
	 * with their counts (float8 labels: -0 as 0); class_of (the caller's,
	 * before the first pass) maps each to its class.  A pass that meets
	 * another label fails: the query returned other rows.
	 */
	int			nlab;
	char	  **lab_text;
	double	   *lab_value;
	uint64	   *lab_count;
	const uint32 *class_of;
	/* the counting scan's (cursor_host_count) */
	int			d;
	int64		seen;			/* every row the query returned */
	int64		usable;			/* rows without a null */
	int64		rows;			/* the side's rows: what every pass must read */
	int64		skipped;
	int64	   *fold_n;			/* folds: the side's rows per fold */
	/* a pass's */
	PassRows	pr;
	km_pass    *pass;
	void	   *state;
	km_error   *err;
	km_status	status;
	int64		fed;			/* the side's rows fed this pass */
	size_t		nblock;
	size_t		block_rows;		/* KM_BLOCK_ROWS, or rows when fewer */
	double	   *X;				/* block_rows x d */
	double	   *y;
	uint32	   *cls;
	uint64	   *hash;
	int		   *fold;
	double	   *kbuf;			/* d: a reservoir key's row */
	KmMemGrant *grant;			/* the block, counted */
} CursorHost;

/*
 * The bytes the host holds besides the learner's, for rows of d features
 * (rows of them): a block of KM_BLOCK_ROWS rows (or of every row, when
 * there are fewer) and a batch of one row.
 */
extern double cursor_host_bytes(int d, int64 rows);

/*
 * Set up h over query's rows of d features (pass_rows_first_d's probe; -1:
 * none was found) (all_rows: every usable row, else the training side of
 * the split by seed and test_fraction; folds: each row's fold, 0 none) and
 * count them in one scan: d, the side's rows and their folds, a target of
 * labels its labels (at most KM_MAX_CLASSES); nothing is kept per row.  The reservoir keys are seeded with seed too (the
 * options' seed, as km_row_hashes).
 */
extern void cursor_host_count(CursorHost *h, const CatalogQuery *query, int d,
							  CursorTarget target, bool all_rows, int64 seed,
							  double test_fraction, int folds, MemoryContext cxt);

/*
 * The learner's host over h (counted first): its block allocated, counted
 * against kernel_ml.max_memory (cursor_host_bytes: check it first).
 */
extern km_host cursor_host(CursorHost *h);

#endif							/* KM_HOST_CURSOR_H */
