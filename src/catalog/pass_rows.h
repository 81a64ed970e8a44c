/*
 * pass_rows.h - what the approximate pass drivers (passes_classify.c,
 * passes_primal.c) share over the rows of one pass (internal to
 * src/catalog): reading a row's features, the hold-out split, the basis
 * state's row, standardizing a training row into the block, and the basis
 * and nystrom factor between the passes (pass_rows.c).  Each driver keeps
 * its targets (class ids or float8 values) and its Newton block.
 */
#ifndef KM_PASS_ROWS_H
#define KM_PASS_ROWS_H

#include "postgres.h"

#include "executor/spi.h"

#include "approx.h"
#include "basis.h"
#include "split.h"
#include "named_common.h"
#include "options.h"
#include "pgutil.h"

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
	int64		nblock;			/* rows in the block buffers */
	int64		block_first;	/* training row number of its first row */
	double	   *Xs;				/* block x d standardized */
} PassRows;

typedef void (*PassBatchFn) (void *arg, SPITupleTable *tt, uint64 n);

/*
 * One pass over every row of the query (SELECT s.f, s.y), counts reset.
 * The cursor fetches rows by the bytes of a row of d (or width) features,
 * a batch of at most 4 MB (less when kernel_ml.max_memory leaves less) and
 * 1000 rows, counted against kernel_ml.max_memory while the scan runs.
 */
extern void pass_rows_scan(const NamedRun *run, PassRows *pr, PassBatchFn batch, void *arg);

/*
 * What the drivers allocate, in bytes, so that they count it first
 * (kernel_ml.max_memory): what pass_basis_finish allocates for a basis of
 * kind over d features with m centres or random features (the final
 * basis, its sort's scratch, rff's random features); pass_factor_setup's
 * buffers; km_rows_features' work for block rows.
 */
extern double pass_basis_bytes(km_approx kind, uint32 d, uint32 m);
extern double pass_factor_bytes(km_approx kind, uint32 m);
extern double pass_features_bytes(km_approx kind, uint32 d, uint32 m, int block);

/*
 * The bytes of a driver's Newton buffers for m features of d inputs and q
 * outputs in blocks of block rows (folds > 0: k-fold's too): the factor,
 * the statistics, solver and vectors of each output, the block's rows,
 * features, decisions and scratch.  O(m^2) per output, nothing per row.
 */
extern double pass_newton_bytes(km_approx kind, int d, uint32 m, uint32 q, int block,
								int folds);

/*
 * Before the basis pass, with d and the options known: its state and a
 * batch and, for a drawn basis (rff: m is the components), the basis after
 * it and newton, the driver's Newton set-up for m with one output; refused
 * (54000) before a row is read when they cannot fit.
 */
extern void pass_check_memory(const km_options *opts, int d, double newton);

/*
 * A basis state for opts over d features, refused beyond 1 GB, counted
 * (*grant, in the current context) before it is allocated, zeroed in
 * interruptible pieces.
 */
extern km_basis_state *pass_basis_state_new(const km_options *opts, int d, KmMemGrant **grant);

/* The fit's rows: the training side, or every usable row. */
extern int64 pass_rows_fit(const PassRows *pr, bool all_rows);

/* The first usable row's length (0: an empty array), -1 when there is none. */
extern int	pass_rows_first_d(const NamedRun *run);

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

/* The row into the basis state (-0 hashed as 0). */
extern void pass_row_basis_add(PassRows *pr, km_basis_state *st);

/* The row standardized into the block; its slot there (nblock counts it). */
extern int64 pass_row_standardize(PassRows *pr, const km_basis *basis);

/*
 * The basis state finished (and freed, its grant given back) into basis,
 * its rff features drawn: each counted before it is allocated.
 */
extern void pass_basis_finish(km_basis_state *st, KmMemGrant *st_grant, km_basis *basis);

/*
 * The identity R, and nystrom's factor L (else NULL) with its eps (counted
 * by the caller: pass_factor_bytes); R zeroed in interruptible pieces.
 */
extern void pass_factor_setup(const km_basis *basis, double **L, double **R, double *eps);

#endif							/* KM_PASS_ROWS_H */
