/*
 * test_proba_extreme.c - probabilities and log-probabilities of decision
 * values far from 0 (issue 29, point 2: a row far from the data): every
 * link and scheme gives finite probabilities in [0, 1] summing to 1 within
 * 1e-12 and finite log-probabilities, against closed forms.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "classify.h"
#include "svm.h"
#include "unit.h"

#define MAXK 6

/* p finite, in [0, 1], summing to 1 within 1e-12; logp finite and log p where p is normal. */
static void
check_valid(const char *what, uint32_t k, const double *p, const double *logp)
{
	double		s = 0.0;

	for (uint32_t c = 0; c < k; c++)
	{
		CHECK(isfinite(p[c]) && p[c] >= 0.0 && p[c] <= 1.0, "%s: p[%u] = %g", what, c, p[c]);
		s += p[c];
		if (logp == NULL)
			continue;
		CHECK(isfinite(logp[c]) && logp[c] <= 0.0, "%s: logp[%u] = %g", what, c, logp[c]);
		if (p[c] >= DBL_MIN)
			CHECK(fabs(logp[c] - log(p[c])) <= 1e-12 * fmax(1.0, fabs(logp[c])),
				  "%s: logp[%u] = %.17g, log p = %.17g", what, c, logp[c], log(p[c]));
	}
	CHECK(fabs(s - 1.0) <= 1e-12, "%s: sum %.17g", what, s);
}

/* log(1 / (1 + e^-t)): exact at the extremes, the definition in between. */
void
test_proba_log_sigmoid(void)
{
	const double ts[] = {-1e300, -1e6, -1000.0, -745.0, -40.0, -1.0, 0.0, 1.0, 40.0, 1000.0, 1e6, 1e300};

	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++)
	{
		double		t = ts[i];
		double		l = km_log_sigmoid(t);

		CHECK(isfinite(l) && l <= 0.0, "log_sigmoid(%g) = %g", t, l);
		if (fabs(t) <= 40.0)
			CHECK_CLOSE(l, log(1.0 / (1.0 + exp(-t))), 1e-15);
		else if (t < 0.0)
			CHECK(l == t, "log_sigmoid(%g) = %.17g", t, l);	/* t - log1p(e^t), e^t < eps */
		else
			CHECK(l == -exp(-t), "log_sigmoid(%g) = %.17g", t, l);	/* -log1p(e^-t) */
		/* the sigmoid itself stays in [0, 1] */
		CHECK(km_sigmoid(t) >= 0.0 && km_sigmoid(t) <= 1.0, "sigmoid(%g)", t);
	}
	CHECK_CLOSE(km_log_sigmoid(0.0), -log(2.0), 1e-16);
	CHECK_CLOSE(km_log_sigmoid(-40.0), -40.0 - log1p(exp(-40.0)), 1e-16);
}

/*
 * One-vs-rest logistic where every sigmoid underflows (the 0 / 0 of the
 * issue): s(f) = e^f / (1 + e^f) = e^f to a factor far below a double's
 * precision, so p is the softmax of f.
 */
void
test_proba_ovr_underflow(void)
{
	const double f1[3] = {-800.0, -801.0, -805.0};
	const double f2[3] = {-1e6, -1e6 + 2.0, -1e6 - 3.0};
	const double f3[3] = {-1000.0, 5.0, -3.0};
	const double f4[3] = {1e6, 1e6, -1e6};
	const double f5[4] = {-1e300, -1e6, -2e6, -1e300};
	double		p[MAXK];
	double		lp[MAXK];
	double		work[2 * MAXK * MAXK + MAXK];
	km_error	err;
	double		z;

	/* p from the existing entry point: no NaN (was 0 / 0) */
	CHECK(km_classify_proba(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 3, f1, NULL, NULL, p,
							work, &err) == KM_OK, "ovr");
	check_valid("ovr -800", 3, p, NULL);
	z = 1.0 + exp(-1.0) + exp(-5.0);
	CHECK_CLOSE(p[0], 1.0 / z, 1e-15);
	CHECK_CLOSE(p[1], exp(-1.0) / z, 1e-15);
	CHECK_CLOSE(p[2], exp(-5.0) / z, 1e-15);

	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 3, f1, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr log");
	check_valid("ovr -800 log", 3, p, lp);
	CHECK_CLOSE(lp[0], -log(z), 1e-15);
	CHECK_CLOSE(lp[2], -5.0 - log(z), 1e-15);

	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 3, f2, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr -1e6");
	check_valid("ovr -1e6", 3, p, lp);
	z = exp(-2.0) + 1.0 + exp(-5.0);
	CHECK_CLOSE(p[0], exp(-2.0) / z, 1e-12);
	CHECK_CLOSE(p[1], 1.0 / z, 1e-12);
	CHECK_CLOSE(lp[2], -5.0 - log(z), 1e-9);

	/* one sigmoid underflows, the others do not: its log-probability is exact */
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 3, f3, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr mixed");
	check_valid("ovr mixed", 3, p, lp);
	z = 1.0 / (1.0 + exp(-5.0)) + 1.0 / (1.0 + exp(3.0));
	CHECK(p[0] == 0.0, "p[0] = %g", p[0]);
	CHECK_CLOSE(lp[0], -1000.0 - log(z), 1e-15);
	CHECK_CLOSE(p[1], 1.0 / (1.0 + exp(-5.0)) / z, 1e-15);

	/* two sigmoids round to 1 */
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 3, f4, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr saturated");
	check_valid("ovr saturated", 3, p, lp);
	CHECK(p[0] == 0.5 && p[1] == 0.5 && p[2] == 0.0, "p %g %g %g", p[0], p[1], p[2]);
	CHECK_CLOSE(lp[2], -1e6 - log(2.0), 1e-15);

	/* the largest decision value a double holds, and more than 3 classes */
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 4, f5, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr -1e300");
	check_valid("ovr -1e300", 4, p, lp);
	CHECK(p[1] == 1.0 && lp[1] == 0.0 && lp[0] == -1e300 + 1e6, "p[1] %g lp[0] %g", p[1], lp[0]);
}

/*
 * Ordinary decision values keep the earlier releases' probabilities bit
 * for bit: sigmoids divided by their sum, the shifted softmax.
 */
void
test_proba_ordinary_unchanged(void)
{
	const double f[4] = {0.3, -1.2, 2.0, -699.0};
	double		p[MAXK];
	double		lp[MAXK];
	double		ref[MAXK];
	double		work[2 * MAXK * MAXK + MAXK];
	double		s = 0.0;
	double		top = 2.0;
	km_error	err;

	for (int c = 0; c < 4; c++)
		s += ref[c] = km_sigmoid(f[c]);
	for (int c = 0; c < 4; c++)
		ref[c] /= s;
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 4, f, NULL, NULL, p,
								lp, work, &err) == KM_OK, "ovr");
	for (int c = 0; c < 4; c++)
		CHECK(p[c] == ref[c], "ovr class %d: %.17g vs %.17g", c, p[c], ref[c]);
	check_valid("ovr ordinary", 4, p, lp);
	CHECK(km_classify_proba(KM_PROB_LOGISTIC, KM_MULTICLASS_OVR, 4, f, NULL, NULL, p,
							work, &err) == KM_OK, "ovr p only");
	for (int c = 0; c < 4; c++)
		CHECK(p[c] == ref[c], "ovr p only class %d", c);

	s = 0.0;
	for (int c = 0; c < 4; c++)
		s += ref[c] = exp(f[c] - top);
	for (int c = 0; c < 4; c++)
		ref[c] /= s;
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_MULTINOMIAL, 4, f, NULL, NULL,
								p, lp, work, &err) == KM_OK, "softmax");
	for (int c = 0; c < 4; c++)
	{
		CHECK(p[c] == ref[c], "softmax class %d: %.17g vs %.17g", c, p[c], ref[c]);
		CHECK_CLOSE(lp[c], f[c] - top - log(s), 1e-15);
	}
}

/* Binary sigmoid and multinomial softmax at +-1e6 and +-1e300. */
void
test_proba_logistic_extreme(void)
{
	const double fb[4] = {1e6, -1e6, 1e300, -1e300};
	const double fm[3] = {1e6, -1e6, 0.0};
	const double fm2[3] = {-1e300, 1e300, 1e300};
	double		p[MAXK];
	double		lp[MAXK];
	double		work[2 * MAXK * MAXK + MAXK];
	km_error	err;

	for (int i = 0; i < 4; i++)
	{
		CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_BINARY, 2, &fb[i], NULL,
									NULL, p, lp, work, &err) == KM_OK, "binary");
		check_valid("binary", 2, p, lp);
		CHECK(p[fb[i] > 0] == 1.0 && p[fb[i] < 0] == 0.0, "binary %g", fb[i]);
		CHECK(lp[fb[i] > 0] == 0.0 && lp[fb[i] < 0] == -fabs(fb[i]), "binary log %g: %g",
			  fb[i], lp[fb[i] < 0]);
	}
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_MULTINOMIAL, 3, fm, NULL, NULL,
								p, lp, work, &err) == KM_OK, "softmax");
	check_valid("softmax", 3, p, lp);
	CHECK(p[0] == 1.0 && lp[0] == 0.0 && lp[1] == -2e6 && lp[2] == -1e6, "softmax log");
	/* ties at the top share */
	CHECK(km_classify_proba_log(KM_PROB_LOGISTIC, KM_MULTICLASS_MULTINOMIAL, 3, fm2, NULL, NULL,
								p, lp, work, &err) == KM_OK, "softmax tie");
	check_valid("softmax tie", 3, p, lp);
	CHECK(p[1] == 0.5 && p[2] == 0.5, "softmax tie %g %g", p[1], p[2]);
}

/*
 * Platt: binary, one-vs-rest and one-vs-one coupling at huge decision
 * values, and the coupling over every pattern of clipped pairwise
 * probabilities (1e-7 or 1 - 1e-7, as far rows give) for 3 to 5 classes.
 */
void
test_proba_platt_extreme(void)
{
	double		f[MAXK * (MAXK - 1) / 2];
	double		A[MAXK * (MAXK - 1) / 2];
	double		B[MAXK * (MAXK - 1) / 2];
	double		p[MAXK];
	double		lp[MAXK];
	double		r[MAXK * MAXK];
	double		work[2 * MAXK * MAXK + MAXK];
	km_error	err;
	const double big[3] = {1e6, -1e6, 1e300};

	for (int i = 0; i < MAXK * (MAXK - 1) / 2; i++)
	{
		A[i] = i % 2 ? -3.0 : -0.5;
		B[i] = 0.25;
	}
	for (int b = 0; b < 3; b++)
	{
		for (int i = 0; i < MAXK * (MAXK - 1) / 2; i++)
			f[i] = (i % 3 ? big[b] : -big[b]);
		CHECK(km_classify_proba_log(KM_PROB_PLATT, KM_MULTICLASS_BINARY, 2, f, A, B, p, lp,
									work, &err) == KM_OK, "platt binary");
		check_valid("platt binary", 2, p, lp);
		CHECK(km_classify_proba_log(KM_PROB_PLATT, KM_MULTICLASS_OVR, 4, f, A, B, p, lp,
									work, &err) == KM_OK, "platt ovr");
		check_valid("platt ovr", 4, p, lp);
		CHECK(km_classify_proba_log(KM_PROB_PLATT, KM_MULTICLASS_OVO, 4, f, A, B, p, lp,
									work, &err) == KM_OK, "platt ovo");
		check_valid("platt ovo", 4, p, lp);
	}
	for (uint32_t k = 3; k <= 5; k++)
	{
		uint32_t	np = k * (k - 1) / 2;

		for (uint32_t mask = 0; mask < (1u << np); mask++)
		{
			uint32_t	q = 0;
			char		what[64];

			for (uint32_t s = 0; s < k; s++)
				for (uint32_t t = s + 1; t < k; t++, q++)
				{
					double		v = (mask >> q) & 1 ? 1.0 - KM_PLATT_MIN_PROB : KM_PLATT_MIN_PROB;

					r[s * k + t] = v;
					r[t * k + s] = 1.0 - v;
				}
			km_svm_couple(k, r, p, work);
			snprintf(what, sizeof(what), "coupling k = %u, pattern %u", k, mask);
			for (uint32_t c = 0; c < k; c++)
				lp[c] = log(p[c]);
			check_valid(what, k, p, lp);
		}
	}
}
