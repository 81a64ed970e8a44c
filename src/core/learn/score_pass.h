/*
 * score_pass.h - a classifier's scores over rows as passes (issue 33):
 * the confusion matrix, the log-loss and the exact AUC of a model on the
 * rows a host holds, each side of the hold-out split apart, so that the
 * aggregate host scores where the rows are (parallel workers, Citus
 * shards) and no row travels.
 *
 * The confusion counts and the log-loss are sums (one pass).  The AUC
 * ranks every score; here it comes from fixed-size additive states too:
 * each pass counts the positives and negatives of each bin of a list of
 * score intervals (a score's key: its bits, ordered as the doubles), with
 * each bin's smallest and largest key.  Pairs in different bins are
 * ordered by their bins; a bin of one label, or of one value (its pairs
 * ties, one half each), is settled; every other bin becomes an interval
 * of the next pass, [its smallest key, its largest], split into about two
 * bins a row (at most KM_SCORE_BINS bins a pass).  When no interval is
 * left the Mann-Whitney count is exact, whatever the row order, plan or
 * shards, and the AUC is km_auc's (metrics.h) to the bit as long as
 * km_auc's own sums are exact (fewer than 2^26 rows a side).
 */
#ifndef KM_LEARN_SCORE_PASS_H
#define KM_LEARN_SCORE_PASS_H

#include "learn/pass.h"
#include "learn/point.h"
#include "metrics.h"
#include "pipeline_types.h"

/* The pass kind (learn/pass.h kind; 13 drift, 14 the rows' sums). */
#define KM_PASS_KIND_SCORE 17

/* Bins of the AUC's intervals one pass counts at most (32 bytes each). */
#define KM_SCORE_BINS 65536

/* One side's scores. */
typedef struct km_class_side_scores
{
	km_class_metrics cm;		/* confusion in the caller's k x k counts */
	uint64_t	unknown;		/* rows whose class id is k: a label the model lacks */
	double		auc;			/* binary: of p(class 1), else of f; NaN otherwise */
} km_class_side_scores;

/*
 * The scores of a classifier (model: its encoded bytes, len) on the rows
 * host holds: each block carries every row's class id (cls: the model's
 * class, or k for a label it does not know) and its side (held); held-out
 * rows into held, the others into train (NULL: held-out rows only, the
 * others not scored).  held->cm and train->cm are init'ed by the caller
 * with the model's k.  *passes: the passes run.  KM_ERR_INVALID for a
 * model that is not a classifier, or blocks without class ids or sides.
 */
km_status	km_class_score(const km_host *host, const uint8_t *model, size_t len,
						   km_class_side_scores *held, km_class_side_scores *train,
						   const km_train_env *env, int *passes, km_error *err);

/* The pass from its point (km_pass_rebuild's), as untrusted bytes. */
km_status	km_score_pass_rebuild(km_point_reader *r, const km_train_env *env,
								  km_pass **out, km_error *err);

#endif							/* KM_LEARN_SCORE_PASS_H */
