/*
 * split.h - assigning rows by their values, not their position: row hashes
 * seeded with a seed, a ranking by hash, and the two assignments by rank:
 * k-fold (kernel_train's cross-validation) and the hold-out split (named
 * training).
 * The same rows in any order (a parallel plan, ORDER BY ... DESC) rank the
 * same way, so folds and hold-out splits do not depend on the query plan.
 */
#ifndef KM_SPLIT_H
#define KM_SPLIT_H

#include "postgres.h"

/*
 * Hash of one row: its d features followed by its target (if y is not
 * NULL), as hash_bytes_extended over those d (+ 1) doubles, seeded with
 * seed.  buf has room for d + 1 doubles.
 */
uint64		km_row_hash(const double *x, int d, const double *y, int64 seed,
						double *buf);

/*
 * order[rank] = row for the n rows of X (n x d, row-major) and y (n
 * targets, or NULL): ascending hash, ties by the bytes of the rows' values,
 * so only identical rows keep their relative input order.
 */
void		km_rank_rows(const double *X, const double *y, int64 n, int d,
						 int64 seed, int64 *order);

/*
 * Put the n rows of X (n x d, row-major) and y (n targets, or NULL) in
 * place in the order order[] lists (row i takes row order[i]), without a
 * second copy of the rows; order[] is consumed (left as the identity).
 */
void		km_permute_rows(double *X, double *y, int64 n, int d, int64 *order);

/*
 * The rows of X and y (may be NULL) in place in the order of km_rank_rows
 * with seed: ascending row hash, ties by the rows' bytes.  Every training
 * that holds its rows in memory fits them in this order, so that the same
 * rows in any order (ORDER BY ... DESC, a parallel plan, a named model's
 * query) give the same model bit for bit; identical rows are
 * interchangeable.  Temporary memory: 24 bytes a row (the keys of the sort).
 */
void		km_hash_order_rows(double *X, double *y, int64 n, int d, int64 seed);

/*
 * fold[row] = rank % folds, from an order of km_rank_rows: fold sizes
 * differ by at most one.
 */
void		km_folds_by_rank(const int64 *order, int64 n, int folds, int *fold);

/*
 * The hold-out split from an order of km_rank_rows: the first
 * floor(fraction * n) ranks are held out.  order[] lists the held-out rows
 * first, then the rest, each part in row order; returns the held-out count.
 */
int64		km_holdout_by_rank(const int64 *ranked, int64 n, double fraction,
							   int64 *order);

/*
 * The stratified hold-out split (named classifiers): within each stratum
 * (rows with equal stratum[row], e.g. a class), the rows in the rank order
 * of km_rank_rows, the first floor(fraction * n_c) of the stratum's n_c
 * rows held out.  order[] as km_holdout_by_rank; returns the held-out
 * count.  A class of n_c rows keeps n_c - floor(fraction n_c) >= 1
 * training rows for fraction < 1.
 */
int64		km_holdout_stratified(const int64 *ranked, const double *stratum,
								  int64 n, double fraction, int64 *order);

/*
 * The per-row hold-out split (named approximate models, whose rows are
 * never all in memory): a row is held out iff km_row_hash of its features
 * and target (-0.0 read as 0.0) with seed is below
 * km_holdout_threshold(fraction) = fraction * 2^64, so each row's side
 * depends on its values only and the held-out count is about fraction * n
 * (binomial), not floor(fraction * n) as km_holdout_by_rank gives.
 * fraction 0 holds out nothing; 1 everything.
 */
typedef struct KmHoldoutThreshold
{
	bool		all;			/* fraction >= 1 */
	uint64		below;			/* held out iff hash < below */
} KmHoldoutThreshold;

KmHoldoutThreshold km_holdout_threshold(double fraction);
bool		km_row_held_out(const double *x, int d, double y, int64 seed,
							KmHoldoutThreshold t, double *buf);

/*
 * A row's fold of folds: the hash of km_row_held_out (its values and key,
 * -0 as 0, and seed) modulo folds; buf d + 1 doubles.  The named models'
 * k-fold (the cursor host, the pass aggregate).
 */
int			km_row_fold(const double *x, int d, double key, int64 seed, int folds,
						double *buf);

#endif							/* KM_SPLIT_H */
