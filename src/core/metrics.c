/*
 * metrics.c - error measures of predictions against targets (metrics.h).
 */
#include <math.h>

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
