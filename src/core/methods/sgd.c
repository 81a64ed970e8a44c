/*
 * sgd.c - kernelized stochastic gradient descent for the logistic and hinge
 * losses (sgd.h), and km_fit_sgd, the solver "sgd" of the classification
 * methods (method.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "method.h"
#include "progress.h"
#include "sgd.h"
#include "solve.h"

/* Below this the scale factor is folded back into the coefficients. */
#define KM_SGD_MIN_SCALE 1e-100

size_t
km_sgd_workspace_doubles(size_t n)
{
	return n;
}

/* dL/df at f for y = +1 (pos) or -1. */
static inline double
loss_derivative(km_sgd_loss loss, double f, bool pos)
{
	double		y = pos ? 1.0 : -1.0;

	if (loss == KM_SGD_HINGE)
		return y * f < 1.0 ? -y : 0.0;
	/* -y sigmoid(-y f) */
	if (y * f >= 0)
	{
		double		e = exp(-y * f);

		return -y * e / (1.0 + e);
	}
	return -y / (1.0 + exp(y * f));
}

/* K_i . v for K given by its lower triangle. */
static inline double
row_dot(const double *K, size_t n, size_t i, const double *v)
{
	double		left = i > 0 ? cblas_ddot((int) i, K + i, (int) n, v, 1) : 0.0;

	return left + cblas_ddot((int) (n - i), K + i + i * n, 1, v + i, 1);
}

double
km_sgd_objective(km_sgd_loss loss, const double *K, size_t n,
				 const uint32_t *cls, const double *weights, double lambda,
				 const double *alpha, double b, double *F,
				 km_interrupt_fn interrupt)
{
	double		W = 0.0;
	double		sum = 0.0;
	double		pen;

	km_symv_lower(K, n, n, alpha, F, interrupt);
	pen = cblas_ddot((int) n, alpha, 1, F, 1);
	for (size_t i = 0; i < n; i++)
	{
		double		wi = weights ? weights[i] : 1.0;
		double		z = (F[i] += b) * (cls[i] == 1 ? 1.0 : -1.0);

		W += wi;
		if (loss == KM_SGD_HINGE)
			sum += wi * fmax(0.0, 1.0 - z);
		else
			sum += wi * (z > 0 ? log1p(exp(-z)) : -z + log1p(exp(z)));
	}
	return sum / W + 0.5 * lambda * pen;
}

km_status
km_sgd_fit(const km_sgd_params *p, const double *K, size_t n,
		   const uint32_t *cls, const double *weights, double *alpha,
		   double *intercept, double *work, km_sgd_result *res,
		   km_error *err, km_interrupt_fn interrupt)
{
	double		eta0 = p->eta0 > 0.0 ? p->eta0 :
		(KM_SGD_ETA0 * p->lambda < 1.0 ? KM_SGD_ETA0 : 0.5 / p->lambda);
	int			epochs = p->epochs > 0 ? p->epochs : KM_SGD_EPOCHS;
	unsigned short xsubi[3];
	double		W = 0.0;
	double		scale = 1.0;
	double		b = 0.0;
	uint64_t	t = 0;
	size_t		check_every;
	size_t		since_check = 0;

	memset(res, 0, sizeof(*res));
	if (n == 0 || n > ((size_t) 1 << 28))
		return km_fail(err, KM_ERR_INVALID, "invalid sgd problem size",
					   "Stochastic gradient descent got %zu rows.", n);
	if (p->loss != KM_SGD_LOGISTIC && p->loss != KM_SGD_HINGE)
		return km_fail(err, KM_ERR_INVALID, "unknown sgd loss",
					   "Loss %d is neither logistic nor hinge.", (int) p->loss);
	if (!(p->lambda > 0.0) || !isfinite(p->lambda) || !(eta0 * p->lambda < 1.0) ||
		!isfinite(eta0))
		return km_fail(err, KM_ERR_INVALID, "invalid sgd step or penalty",
					   "lambda must be positive and eta0 * lambda below 1; lambda is %g and eta0 %g.",
					   p->lambda, eta0);
	for (size_t i = 0; i < n; i++)
	{
		if (cls[i] > 1)
			return km_fail(err, KM_ERR_INVALID, "class index out of range",
						   "Row %zu has class %u; binary sgd takes 0 or 1.", i + 1,
						   (unsigned) cls[i]);
		if (weights && !(weights[i] > 0.0 && isfinite(weights[i])))
			return km_fail(err, KM_ERR_INVALID, "invalid sample weight",
						   "Row %zu has weight %g; weights must be positive and finite.",
						   i + 1, weights[i]);
		W += weights ? weights[i] : 1.0;
	}
	/* the 48-bit state from the seed: its low 48 bits, mixed with the high */
	{
		uint64_t	s = p->seed ^ (p->seed >> 48) * 0x9E3779B97F4A7C15ull;

		xsubi[0] = (unsigned short) (s & 0xFFFF);
		xsubi[1] = (unsigned short) ((s >> 16) & 0xFFFF);
		xsubi[2] = (unsigned short) ((s >> 32) & 0xFFFF);
	}
	check_every = KM_SGD_CHECK_WORK / n + 1;
	memset(alpha, 0, n * sizeof(double));

	km_progress_phase("sgd: %s loss on %zu rows", p->loss == KM_SGD_HINGE ? "hinge" : "logistic", n);
	for (int e = 0; e < epochs; e++)
	{
		for (size_t s = 0; s < n; s++)
		{
			size_t		i;
			double		eta;
			double		u;
			double		f;

			/* uniform in 0..n-1 without modulo bias: reject the tail */
			{
				long		limit = (long) ((2147483648ul / n) * n);
				long		r;

				do
					r = nrand48(xsubi);
				while (r >= limit);
				i = (size_t) r % n;
			}
			t++;
			eta = eta0 / sqrt((double) t);
			f = scale * row_dot(K, n, i, alpha) + b;
			u = loss_derivative(p->loss, f, cls[i] == 1) *
				((double) n * (weights ? weights[i] : 1.0) / W);
			scale *= 1.0 - eta * p->lambda;
			alpha[i] -= eta * u / scale;
			if (p->fit_intercept)
				b -= eta * u;
			if (scale < KM_SGD_MIN_SCALE)
			{
				cblas_dscal((int) n, scale, alpha, 1);
				scale = 1.0;
			}
			if (++since_check >= check_every)
			{
				km_check_interrupts(interrupt);
				since_check = 0;
			}
		}
		res->epochs = e + 1;
		km_progress_step("epoch %d of %d", e + 1, epochs);
	}
	cblas_dscal((int) n, scale, alpha, 1);
	*intercept = b;
	res->steps = t;
	res->objective = km_sgd_objective(p->loss, K, n, cls, weights, p->lambda,
									  alpha, b, work, interrupt);
	if (!isfinite(res->objective) || !isfinite(b))
		return km_fail(err, KM_ERR_DIVERGED, "stochastic gradient descent diverged",
					   "The objective is not finite after %d epochs; lower eta0.",
					   res->epochs);
	return KM_OK;
}

size_t
km_fit_sgd_doubles(size_t n)
{
	size_t		own = km_sgd_workspace_doubles(n);

	return own == 0 ? 0 : own + n;
}

km_status
km_fit_sgd(const km_fit_params *p, bool hinge, const double *K, size_t n,
		   const uint32_t *cls, uint32_t k, const double *class_w,
		   double *alpha, double *intercepts, double *work,
		   km_class_fit_result *res, km_error *err, km_interrupt_fn interrupt)
{
	double	   *w = work + km_sgd_workspace_doubles(n);
	km_sgd_params sp;
	km_sgd_result sr;
	km_status	st;

	if (k != 2)
	{
		st = km_fail(err, KM_ERR_INVALID, "solver \"sgd\" fits two classes",
					 "The training rows have %u classes; the kernelized SGD of the notes is binary.", k);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Use the method's default solver for more than two classes.");
		return st;
	}
	for (size_t i = 0; i < n; i++)
		w[i] = class_w[cls[i]];
	memset(&sp, 0, sizeof(sp));
	sp.loss = hinge ? KM_SGD_HINGE : KM_SGD_LOGISTIC;
	sp.lambda = p->lambda;
	sp.fit_intercept = p->fit_intercept;
	sp.eta0 = p->learning_rate;
	sp.epochs = p->max_iter;
	sp.seed = (uint64_t) p->seed;
	st = km_sgd_fit(&sp, K, n, cls, w, alpha, &intercepts[0], work, &sr, err,
					interrupt);
	res->solver = KM_SOLVER_SGD;
	res->iterations = sr.epochs;
	res->objective = sr.objective;
	res->converged = st == KM_OK;
	return st;
}
