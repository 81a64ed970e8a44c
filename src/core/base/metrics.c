/*
 * metrics.c - error measures of predictions against targets (metrics.h).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

void
km_metrics_init(km_metrics *m)
{
	m->n = 0;
	m->sse = 0.0;
	m->sae = 0.0;
	m->ymean = 0.0;
	m->yss = 0.0;
}

void
km_metrics_add(km_metrics *m, double prediction, double target)
{
	double		e = prediction - target;
	double		dev = target - m->ymean;

	m->n++;
	m->sse += e * e;
	m->sae += fabs(e);
	/* Welford: the variance of the targets in one pass, without cancellation */
	m->ymean += dev / (double) m->n;
	m->yss += dev * (target - m->ymean);
}

void
km_metrics_combine(km_metrics *a, const km_metrics *b)
{
	double		n;
	double		delta;

	if (b->n == 0)
		return;
	if (a->n == 0)
	{
		*a = *b;
		return;
	}
	n = (double) a->n + (double) b->n;
	delta = b->ymean - a->ymean;
	a->yss += b->yss + delta * delta * (double) a->n * (double) b->n / n;
	a->ymean += delta * (double) b->n / n;
	a->n += b->n;
	a->sse += b->sse;
	a->sae += b->sae;
}

double
km_metrics_mse(const km_metrics *m)
{
	return m->n > 0 ? m->sse / (double) m->n : NAN;
}

double
km_metrics_rmse(const km_metrics *m)
{
	return sqrt(km_metrics_mse(m));
}

double
km_metrics_mae(const km_metrics *m)
{
	return m->n > 0 ? m->sae / (double) m->n : NAN;
}

double
km_metrics_r2(const km_metrics *m)
{
	return m->n > 0 && m->yss > 0.0 ? 1.0 - m->sse / m->yss : NAN;
}

/* ---- classification ---- */

void
km_class_metrics_init(km_class_metrics *m, uint32_t k, uint64_t *confusion)
{
	m->k = k;
	m->n = 0;
	m->correct = 0;
	m->n_proba = 0;
	m->log_loss_sum = 0.0;
	m->confusion = confusion;
	memset(confusion, 0, sizeof(uint64_t) * k * k);
}

void
km_class_metrics_add(km_class_metrics *m, uint32_t truth, uint32_t predicted,
					 const double *p)
{
	m->n++;
	m->correct += truth == predicted;
	m->confusion[(size_t) truth * m->k + predicted]++;
	if (p != NULL)
	{
		double		pt = fmin(fmax(p[truth], DBL_EPSILON), 1.0 - DBL_EPSILON);

		m->n_proba++;
		m->log_loss_sum -= log(pt);
	}
}

void
km_class_metrics_combine(km_class_metrics *a, const km_class_metrics *b)
{
	a->n += b->n;
	a->correct += b->correct;
	a->n_proba += b->n_proba;
	a->log_loss_sum += b->log_loss_sum;
	for (size_t i = 0; i < (size_t) a->k * a->k; i++)
		a->confusion[i] += b->confusion[i];
}

double
km_class_metrics_accuracy(const km_class_metrics *m)
{
	return m->n > 0 ? (double) m->correct / (double) m->n : NAN;
}

double
km_class_metrics_balanced_accuracy(const km_class_metrics *m)
{
	double		sum = 0.0;
	int			present = 0;

	for (uint32_t t = 0; t < m->k; t++)
	{
		uint64_t	row = 0;

		for (uint32_t c = 0; c < m->k; c++)
			row += m->confusion[(size_t) t * m->k + c];
		if (row == 0)
			continue;
		sum += (double) m->confusion[(size_t) t * m->k + t] / (double) row;
		present++;
	}
	return present > 0 ? sum / present : NAN;
}

double
km_class_metrics_log_loss(const km_class_metrics *m)
{
	return m->n > 0 && m->n_proba == m->n ? m->log_loss_sum / (double) m->n : NAN;
}

km_class_scores
km_class_metrics_class(const km_class_metrics *m, uint32_t c)
{
	km_class_scores s;
	uint64_t	predicted = 0;
	uint64_t	tp = m->confusion[(size_t) c * m->k + c];

	s.support = 0;
	for (uint32_t i = 0; i < m->k; i++)
	{
		s.support += m->confusion[(size_t) c * m->k + i];
		predicted += m->confusion[(size_t) i * m->k + c];
	}
	s.precision = predicted > 0 ? (double) tp / (double) predicted : 0.0;
	s.recall = s.support > 0 ? (double) tp / (double) s.support : 0.0;
	/* scikit-learn's form, 0 when both are 0 */
	s.f1 = s.precision + s.recall > 0.0 ?
		2.0 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
	return s;
}

typedef struct auc_key
{
	double		score;
	bool		positive;
} auc_key;

static int
auc_key_cmp(const void *a, const void *b)
{
	double		x = ((const auc_key *) a)->score;
	double		y = ((const auc_key *) b)->score;

	return x < y ? -1 : x > y;
}

size_t
km_auc_work_bytes(size_t n)
{
	return n * sizeof(auc_key);
}

double
km_auc(const double *scores, const bool *positive, size_t n, void *work)
{
	auc_key    *keys = work;
	double		npos = 0.0;
	double		rank_sum = 0.0;		/* of the positives, 1-based, ties averaged */
	size_t		i = 0;

	for (size_t r = 0; r < n; r++)
	{
		keys[r].score = scores[r];
		keys[r].positive = positive[r];
		npos += positive[r];
	}
	if (npos == 0.0 || npos == (double) n)
		return NAN;
	qsort(keys, n, sizeof(auc_key), auc_key_cmp);
	while (i < n)
	{
		size_t		j = i;
		double		pos_in_tie = 0.0;

		while (j < n && keys[j].score == keys[i].score)
			pos_in_tie += keys[j++].positive;
		/* ranks i+1 .. j share their mean */
		rank_sum += pos_in_tie * ((double) (i + 1) + (double) j) / 2.0;
		i = j;
	}
	return (rank_sum - npos * (npos + 1.0) / 2.0) / (npos * ((double) n - npos));
}

double
km_neg_log_evidence(double quad, double logdet_half, size_t n)
{
	/* log(2 pi) */
	const double log_2pi = 1.8378770664093454835606594728112;
	double		dn = (double) n;

	if (!(quad > 0.0) || !isfinite(quad) || n == 0)
		return HUGE_VAL;
	return 0.5 * dn * (1.0 + log_2pi + log(quad / dn)) + logdet_half;
}

const char *
km_score_metric_name(km_score_metric metric)
{
	switch (metric)
	{
		case KM_SCORE_MSE:
			return "mse";
		case KM_SCORE_ACCURACY:
			return "accuracy";
		case KM_SCORE_LOG_LOSS:
			return "log_loss";
	}
	return "unknown";
}
