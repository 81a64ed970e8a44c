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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/*
 * Minus the log marginal likelihood of a Gaussian process with covariance
 * s2 (K + lambda I), the amplitude s2 profiled out (s2 = quad / n), from
 * quad = y'(K + lambda I)^-1 y and logdet_half = log det(K + lambda I) / 2
 * (sum_i log L_ii of its Cholesky factor):
 *     n/2 (1 + log(2 pi) + log(quad / n)) + logdet_half.
 * Not finite when quad is 0 (a constant target) or not finite.
 */
double		km_neg_log_evidence(double quad, double logdet_half, size_t n);

/*
 * Classification: a confusion matrix (rows the true class, columns the
 * predicted one) in the caller's storage of k * k counts, and the sum of
 * -log p(true class) over the rows that came with probabilities.  Two
 * accumulators over disjoint rows with the same k combine by addition.
 * Log-loss clips p to [eps, 1 - eps] with eps = DBL_EPSILON, as
 * scikit-learn's log_loss does for float64.
 */
typedef struct km_class_metrics
{
	uint32_t	k;				/* classes */
	size_t		n;				/* rows added */
	size_t		correct;
	size_t		n_proba;		/* rows added with probabilities */
	double		log_loss_sum;
	uint64_t   *confusion;		/* k x k, row-major: [truth * k + predicted] */
} km_class_metrics;

void		km_class_metrics_init(km_class_metrics *m, uint32_t k,
								  uint64_t *confusion);

/* One row: its true class, the predicted class, p[k] or NULL. */
void		km_class_metrics_add(km_class_metrics *m, uint32_t truth,
								 uint32_t predicted, const double *p);

/* a += b (same k). */
void		km_class_metrics_combine(km_class_metrics *a, const km_class_metrics *b);

/* NaN without rows. */
double		km_class_metrics_accuracy(const km_class_metrics *m);

/* Mean recall over the classes with rows (scikit-learn's balanced_accuracy_score). */
double		km_class_metrics_balanced_accuracy(const km_class_metrics *m);

/* Mean -log p(true class); NaN unless every row came with probabilities. */
double		km_class_metrics_log_loss(const km_class_metrics *m);

/*
 * Class c's precision, recall and F1 from the confusion matrix, as
 * scikit-learn's precision_recall_fscore_support(average=None): 0 where a
 * ratio has a zero denominator (its zero_division default); and its
 * support, the rows of class c.
 */
typedef struct km_class_scores
{
	double		precision;
	double		recall;
	double		f1;
	uint64_t	support;
} km_class_scores;

km_class_scores km_class_metrics_class(const km_class_metrics *m, uint32_t c);

/*
 * Area under the ROC curve of scores for the rows with positive[i] true:
 * the Mann-Whitney statistic with tied scores counted one half (as
 * scikit-learn's roc_auc_score).  NaN unless both kinds of row occur.
 * work: km_auc_work_bytes(n).
 */
size_t		km_auc_work_bytes(size_t n);
double		km_auc(const double *scores, const bool *positive, size_t n, void *work);

/* What k-fold cross-validation scores a candidate by (lower is better after km_score_loss). */
typedef enum km_score_metric
{
	KM_SCORE_MSE = 0,			/* regression (the zero value: regression ops leave it unset) */
	KM_SCORE_ACCURACY = 2,		/* svm: higher is better */
	KM_SCORE_LOG_LOSS = 3		/* logistic */
} km_score_metric;

const char *km_score_metric_name(km_score_metric metric);

#endif							/* KM_METRICS_H */
