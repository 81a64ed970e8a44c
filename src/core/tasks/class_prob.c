/*
 * class_prob.c - Platt's sigmoid and the pairwise coupling of one-vs-one
 * probabilities (class_prob.h).
 */
#include <math.h>

#include "class_prob.h"

double
km_platt_prob(double f, double A, double B)
{
	double		fApB = f * A + B;

	if (fApB >= 0)
	{
		double		e = exp(-fApB);

		return e / (1.0 + e);
	}
	return 1.0 / (1.0 + exp(fApB));
}

size_t
km_svm_proba_doubles(uint32_t k)
{
	return 2 * (size_t) k * k + k;
}

void
km_svm_couple(uint32_t k, const double *r, double *p, double *work)
{
	double	   *Q = work;		/* k x k */
	double	   *Qp = work + (size_t) k * k;
	int			max_iter = k > 100 ? (int) k : 100;
	double		eps = 0.005 / k;
	double		sum = 0;

	for (uint32_t t = 0; t < k; t++)
	{
		p[t] = 1.0 / k;
		Q[t * k + t] = 0;
		for (uint32_t j = 0; j < t; j++)
		{
			Q[t * k + t] += r[j * k + t] * r[j * k + t];
			Q[t * k + j] = Q[j * k + t];
		}
		for (uint32_t j = t + 1; j < k; j++)
		{
			Q[t * k + t] += r[j * k + t] * r[j * k + t];
			Q[t * k + j] = -r[j * k + t] * r[t * k + j];
		}
	}
	for (int it = 0; it < max_iter; it++)
	{
		double		pQp = 0,
					max_error = 0;

		for (uint32_t t = 0; t < k; t++)
		{
			Qp[t] = 0;
			for (uint32_t j = 0; j < k; j++)
				Qp[t] += Q[t * k + j] * p[j];
			pQp += p[t] * Qp[t];
		}
		for (uint32_t t = 0; t < k; t++)
		{
			double		e = fabs(Qp[t] - pQp);

			if (e > max_error)
				max_error = e;
		}
		if (max_error < eps)
			break;
		for (uint32_t t = 0; t < k; t++)
		{
			double		diff = (-Qp[t] + pQp) / Q[t * k + t];

			p[t] += diff;
			pQp = (pQp + diff * (diff * Q[t * k + t] + 2 * Qp[t])) / (1 + diff) / (1 + diff);
			for (uint32_t j = 0; j < k; j++)
			{
				Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1 + diff);
				p[j] /= (1 + diff);
			}
		}
	}
	for (uint32_t t = 0; t < k; t++)
		sum += p[t];
	for (uint32_t t = 0; t < k; t++)
		p[t] /= sum;
}

void
km_svm_proba(uint32_t k, const double *dec, const double *A, const double *B,
			 double *p, double *work)
{
	const double min_prob = 1e-7;
	double	   *r = work + (size_t) k * k + k;
	uint32_t	q = 0;

	if (k == 2)
	{
		double		r1 = fmin(fmax(km_platt_prob(dec[0], A[0], B[0]), min_prob), 1 - min_prob);

		p[1] = r1;
		p[0] = 1 - r1;
		return;
	}
	for (uint32_t s = 0; s < k; s++)
		for (uint32_t t = s + 1; t < k; t++)
		{
			double		v = fmin(fmax(km_platt_prob(dec[q], A[q], B[q]), min_prob), 1 - min_prob);

			r[s * k + t] = v;
			r[t * k + s] = 1 - v;
			q++;
		}
	km_svm_couple(k, r, p, work);
}
