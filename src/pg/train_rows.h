/*
 * train_rows.h - what the one-statement trainings (src/sql: train.c,
 * approx.c, classify.c) and the catalog's passes share
 * over their rows: the NOTICE for skipped rows, the default gamma, the
 * rows' hashes and folds, and a block's features in interruptible pieces.  Below every src/sql file, so that
 * none of them imports another for these (issue 23: no import circle).
 */
#ifndef KM_TRAIN_ROWS_H
#define KM_TRAIN_ROWS_H

#include "postgres.h"

#include "portability/instr_time.h"

#include "approx.h"
#include "options.h"
#include "pipeline.h"
#include "rowset.h"

/*
 * The one NOTICE of an aggregate's final function when it skipped rows
 * with a NULL feature array or target (skipped > 0), used rows trained.
 */
void		km_notice_skipped(int64 skipped, int64 used);

/*
 * The default gamma of an exact rbf model (gamma not given): kernlab's
 * sigest (select.h km_gamma_sigest) over the standardized rows.  Up to
 * km_sigest_rows(n, d) rows (1000 for d <= 67) every pair counts; beyond,
 * the pairs of that many rows of lowest hash of their raw features
 * (split.h, with the options' seed), so that the same rows in any order
 * give the same gamma.  Other kernels, approximate models (whose basis pass fixes the
 * kernel before all rows are seen) and a given gamma keep theirs (1 / d by
 * default).  km_default_gamma_pairs ranks the raw rows X (n x d) when that
 * is needed (NULL otherwise); km_default_gamma then sets opts->gammas.v[0]
 * and opts->fit.kernel.gamma from the same rows standardized (Xs, in the
 * same order) and frees the ranking.
 */
int64	   *km_default_gamma_pairs(const km_options *opts, const double *X,
								   size_t n, int d);
void		km_default_gamma(km_options *opts, const double *Xs, size_t n, int d,
							 int64 *pairs);

/* rff: the random features of b drawn from its seed (b->W, b->b set). */
void		km_basis_draw(km_basis *b);

/* Raises "kernel_train state is too large" for a basis of opts->components. */
pg_attribute_noreturn() void rowset_too_large(const km_options *opts, uint32 d);

/*
 * Each of n rows' (X, n x d row-major) reservoir key for a basis of seed
 * (pipeline.h km_rows.hash), as kernel_basis hashes a row:
 * hash_bytes_extended over its float8 bytes, -0.0 read as 0.0.
 */
uint64_t   *km_row_hashes(const double *X, int64 n, int d, uint64 seed);

/*
 * The rule of every k-fold route (issue 29): no more folds than training
 * rows n, and no fold without a row to score (fold_n: the rows of each of
 * the folds, or NULL when the assignment leaves none empty once
 * folds <= n, as the rank rule does).  rule: how rows were dealt to folds,
 * a sentence for the error's detail.  Errors 22023 naming cv and n.
 */
void		km_check_folds(int folds, int64 n, const int64 *fold_n, const char *rule);

/*
 * k-fold selection (cv "kfold" in opts, resolved): each row's fold by its
 * rank in hash order (split.c), so that the folds do not depend on the
 * order of the rows; NULL without k-fold.
 */
int		   *km_row_folds(const RowSet *rs, const km_options *opts);

/* A km_train_env whose memory is palloc'd in CurrentMemoryContext. */
void		km_train_env_palloc(km_train_env *env);

/*
 * The km_train_env of the memory host (host_memory.h), one set for every
 * exact training over it (regression and classification): memory in CurrentMemoryContext,
 * and the workspaces by kind: selection's mapped up front; km_fit's, the
 * pages it will write (the columns from km_fit_first_row down, about half
 * the matrix); km_fit_classes', its columns on demand (one DGEMV each, on
 * one thread) or mapped up front (km_fit_classes_gram_on_demand).  times:
 * when the fit's workspace was asked for, got and released (DEBUG1 logs);
 * fit: the resolved fit parameters (read when the classes' workspace is
 * asked for).
 */
typedef struct KmMemoryTimes
{
	const km_fit_params *fit;
	instr_time	asked;
	instr_time	got;
	instr_time	released;
} KmMemoryTimes;

void		km_memory_env(km_train_env *env, KmMemoryTimes *times);

#endif							/* KM_TRAIN_ROWS_H */
