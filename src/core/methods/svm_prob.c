/*
 * svm_prob.c - an SVM's probabilities (see svm.h): Platt scaling of the
 * decision values (Lin, Lin & Weng's version of Platt's fit, as libsvm)
 * and the out-of-fold decision values it is fitted on.  The solver itself
 * is svm.c; Platt's sigmoid and the pairwise coupling that turn decision
 * values into class probabilities are the classification task's
 * (tasks/class_prob.c).
 */
#include <math.h>
#include <string.h>

#include "progress.h"
#include "svm.h"

/* Doubles holding m uint32_t (as svm.c counts them). */
static size_t
u32_doubles(size_t m)
{
	return (m + 1) / 2;
}

/* ---- Platt scaling ---- */

km_status
km_platt_fit(const double *dec, const double *y, size_t m, double *A,
			 double *B, km_error *err)
{
	double		prior1 = 0,
				prior0 = 0;
	double		hi,
				lo,
				a,
				bb,
				fval;
	const double sigma = 1e-12;
	const double min_step = 1e-10;
	double		eps_stop;
	bool		done = false;
	double		g1 = 0,
				g2 = 0;

	if (m == 0)
		return km_fail(err, KM_ERR_INVALID, "platt scaling needs decision values",
					   "No decision values were given.");
	for (size_t i = 0; i < m; i++)
	{
		if (y[i] > 0)
			prior1++;
		else
			prior0++;
	}
	hi = (prior1 + 1) / (prior1 + 2);
	lo = 1 / (prior0 + 2);
	a = 0;
	bb = log((prior0 + 1) / (prior1 + 1));
	eps_stop = 1e-11 * (double) m;

	/* targets are recomputed from y on the fly: t_i = y_i > 0 ? hi : lo */
#define TGT(i) (y[i] > 0 ? hi : lo)
	fval = 0;
	for (size_t i = 0; i < m; i++)
	{
		double		fApB = dec[i] * a + bb;
		double		t = TGT(i);

		fval += fApB >= 0 ? t * fApB + log1p(exp(-fApB))
			: (t - 1) * fApB + log1p(exp(fApB));
	}
	for (int it = 0; it < 100; it++)
	{
		double		h11 = sigma,
					h22 = sigma,
					h21 = 0;
		double		det,
					dA,
					dB,
					gd,
					step;

		g1 = g2 = 0;
		for (size_t i = 0; i < m; i++)
		{
			double		fApB = dec[i] * a + bb;
			double		p,
						q,
						d2,
						d1;

			if (fApB >= 0)
			{
				double		e = exp(-fApB);

				p = e / (1.0 + e);
				q = 1.0 / (1.0 + e);
			}
			else
			{
				double		e = exp(fApB);

				p = 1.0 / (1.0 + e);
				q = e / (1.0 + e);
			}
			d2 = p * q;
			h11 += dec[i] * dec[i] * d2;
			h22 += d2;
			h21 += dec[i] * d2;
			d1 = TGT(i) - p;
			g1 += dec[i] * d1;
			g2 += d1;
		}
		if (fabs(g1) < eps_stop && fabs(g2) < eps_stop)
		{
			done = true;
			break;
		}
		det = h11 * h22 - h21 * h21;
		dA = -(h22 * g1 - h21 * g2) / det;
		dB = -(-h21 * g1 + h11 * g2) / det;
		gd = g1 * dA + g2 * dB;
		step = 1;
		while (step >= min_step)
		{
			double		na = a + step * dA;
			double		nb = bb + step * dB;
			double		nf = 0;

			for (size_t i = 0; i < m; i++)
			{
				double		fApB = dec[i] * na + nb;
				double		t = TGT(i);

				nf += fApB >= 0 ? t * fApB + log1p(exp(-fApB))
					: (t - 1) * fApB + log1p(exp(fApB));
			}
			if (nf < fval + 0.0001 * step * gd)
			{
				a = na;
				bb = nb;
				fval = nf;
				break;
			}
			step /= 2;
		}
		if (step < min_step)
			break;				/* no more decrease in double precision */
	}
#undef TGT
	*A = a;
	*B = bb;
	if (!done && !(fabs(g1) < 1e-5 && fabs(g2) < 1e-5))
		return km_fail(err, KM_ERR_INACCURATE, "platt scaling did not converge",
					   "The gradient of the sigmoid fit is (%g, %g) after its Newton iterations.",
					   g1, g2);
	return KM_OK;
}

/* ---- out-of-fold decision values ---- */

size_t
km_svm_binary_probability_doubles(size_t m)
{
	return km_svm_binary_doubles(m) + 4 * m + u32_doubles(m);
}

km_status
km_svm_binary_probability(const km_svm_problem *prob, const km_svm_params *par,
						  const uint32_t *fold, uint32_t n_folds,
						  double *A, double *B, double *dec,
						  uint32_t *not_converged, double *work,
						  km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = prob->m;
	double	   *bin_work = work;
	double	   *ysub = bin_work + km_svm_binary_doubles(m);
	double	   *Csub = ysub + m;
	double	   *coef = Csub + m;
	double	   *decv = coef + m;
	uint32_t   *rows = (uint32_t *) (decv + m);
	uint32_t	nc = 0;
	km_status	st;

	if (n_folds < 2)
		return km_fail(err, KM_ERR_INVALID, "platt scaling needs at least two folds",
					   "The number of internal folds is %u.", n_folds);
	if (dec == NULL)
		dec = decv;
	for (size_t i = 0; i < m; i++)
		if (fold[i] >= n_folds)
			return km_fail(err, KM_ERR_INVALID, "fold id out of range",
						   "Row %zu has fold %u of %u.", i, fold[i], n_folds);

	for (uint32_t v = 0; v < n_folds; v++)
	{
		size_t		ms = 0,
					npos = 0;
		km_svm_problem sub;
		km_svm_result r;

		for (size_t i = 0; i < m; i++)
		{
			if (fold[i] == v)
				continue;
			rows[ms] = prob->rows ? prob->rows[i] : (uint32_t) i;
			ysub[ms] = prob->y[i];
			Csub[ms] = prob->C[i];
			npos += prob->y[i] > 0;
			ms++;
		}
		if (ms == m)
			continue;			/* an empty fold */
		if (npos == 0 || npos == ms)
		{
			/* one label (or none) in the training part: libsvm's +-1 (0) */
			double		val = ms == 0 ? 0 : (npos ? 1.0 : -1.0);

			for (size_t i = 0; i < m; i++)
				if (fold[i] == v)
					dec[i] = val;
			continue;
		}
		sub.K = prob->K;
		sub.ld = prob->ld;
		sub.cols = prob->cols;
		sub.rows = rows;
		sub.m = ms;
		sub.y = ysub;
		sub.C = Csub;
		st = km_svm_binary(&sub, par, coef, &r, bin_work, err, interrupt);
		if (st == KM_ERR_INACCURATE)
			nc++;
		else if (st != KM_OK)
			return st;
		/* compact to the support vectors, then one column per held-out row */
		{
			size_t		nsv = 0;

			for (size_t k = 0; k < ms; k++)
				if (coef[k] != 0)
				{
					coef[nsv] = coef[k];
					rows[nsv] = rows[k];
					nsv++;
				}
			for (size_t i = 0; i < m; i++)
			{
				const double *col;
				double		f = r.b;

				if (fold[i] != v)
					continue;
				col = prob->cols ?
					km_gram_cols_get(prob->cols, prob->rows ? prob->rows[i] : i) :
					prob->K + (size_t) (prob->rows ? prob->rows[i] : i) * prob->ld;
				for (size_t k = 0; k < nsv; k++)
					f += coef[k] * col[rows[k]];
				dec[i] = f;
			}
		}
		km_check_interrupts(interrupt);
	}
	if (not_converged)
		*not_converged = nc;
	st = km_platt_fit(dec, prob->y, m, A, B, err);
	if (st == KM_ERR_INACCURATE)
		return KM_OK;			/* libsvm warns "line search fails" and keeps A, B */
	return st;
}
