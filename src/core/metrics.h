/*
 * metrics.h - error measures of predictions against targets, in one place:
 * the catalog's hold-out scores, k-fold cross-validation's fold scores.
 * Core: no PostgreSQL header.
 *
 * A km_metrics accumulates (prediction, target) pairs one at a time, so a
 * caller that predicts row by row needs no arrays, and two accumulators
 * over disjoint rows combine (parallel workers, folds).  Every measure is
 * read from the sums at the end:
 *
 *	km_metrics m;
 *	km_metrics_init(&m);
 *	for (each row)
 *		km_metrics_add(&m, prediction, target);
 *	rmse = km_metrics_rmse(&m);
 *
 * Classification measures join the same way: accuracy and log-loss are
 * sums over rows too (a count of correct labels, a sum of -log p of the
 * true label), added by a km_metrics_add_class next to km_metrics_add;
 * AUC ranks all the scores, so it will be a function over arrays
 * (scores, labels), not an accumulator.
 */
#ifndef KM_METRICS_H
#define KM_METRICS_H

#include <stddef.h>

typedef struct km_metrics
{
	size_t		n;				/* pairs added */
	double		sse;			/* sum of squared errors */
	double		sae;			/* sum of absolute errors */
	double		ymean;			/* mean of the targets (Welford) */
	double		yss;			/* sum of squared deviations from ymean */
} km_metrics;

void		km_metrics_init(km_metrics *m);

/* One prediction and its target. */
void		km_metrics_add(km_metrics *m, double prediction, double target);

/* a += b, for accumulators over disjoint rows (Chan et al.'s update). */
void		km_metrics_combine(km_metrics *a, const km_metrics *b);

/* Each is NaN when no pair was added; r2 also when the targets are constant. */
double		km_metrics_mse(const km_metrics *m);
double		km_metrics_rmse(const km_metrics *m);
double		km_metrics_mae(const km_metrics *m);
double		km_metrics_r2(const km_metrics *m);

#endif							/* KM_METRICS_H */
