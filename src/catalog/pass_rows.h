/*
 * pass_rows.h - what the classifiers' pass driver (passes_classify.c)
 * keeps over the rows of one pass besides their reading (host_cursor.h):
 * the basis state's row, standardizing a training row into the block, and
 * the basis and nystrom factor between the passes (pass_rows.c).
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
#include "host_cursor.h"

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
