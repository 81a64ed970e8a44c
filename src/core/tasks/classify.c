/*
 * classify.c - class tables, class weights, decision rules and
 * probabilities (classify.h; core, no PostgreSQL headers).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "class_prob.h"

uint32_t
km_ovo_pair_index(uint32_t i, uint32_t j, uint32_t k)
{
	/* pairs before row i: (k-1) + (k-2) + ... + (k-i) */
	return i * (2 * k - i - 1) / 2 + (j - i - 1);
}

/* ---- class order ---- */

typedef struct text_key
{
	const char *s;
	uint32_t	id;
} text_key;

typedef struct num_key
{
	double		v;
	uint32_t	id;
} num_key;

static int
text_key_cmp(const void *a, const void *b)
{
	return strcmp(((const text_key *) a)->s, ((const text_key *) b)->s);
}

static int
num_key_cmp(const void *a, const void *b)
{
	double		x = ((const num_key *) a)->v;
	double		y = ((const num_key *) b)->v;

	return x < y ? -1 : x > y;
}

size_t
km_classes_sort_work_bytes(uint32_t m)
{
	size_t		t = sizeof(text_key) > sizeof(num_key) ? sizeof(text_key) : sizeof(num_key);

	return (size_t) m * t;
}

void
km_classes_sort_text(const char *const *labels, uint32_t m, uint32_t *order,
					 uint32_t *class_of, void *work)
{
	text_key   *keys = work;

	for (uint32_t i = 0; i < m; i++)
	{
		keys[i].s = labels[i];
		keys[i].id = i;
	}
	qsort(keys, m, sizeof(text_key), text_key_cmp);
	for (uint32_t c = 0; c < m; c++)
	{
		order[c] = keys[c].id;
		class_of[keys[c].id] = c;
	}
}

void
km_classes_sort_float8(const double *values, uint32_t m, uint32_t *order,
					   uint32_t *class_of, void *work)
{
	num_key    *keys = work;

	for (uint32_t i = 0; i < m; i++)
	{
		keys[i].v = values[i];
		keys[i].id = i;
	}
	qsort(keys, m, sizeof(num_key), num_key_cmp);
	for (uint32_t c = 0; c < m; c++)
	{
		order[c] = keys[c].id;
		class_of[keys[c].id] = c;
	}
}

const char *
km_classes_label(const char *labels, uint32_t labels_bytes, uint32_t k,
				 uint32_t c)
{
	const char *s = labels;
	const char *end = labels + labels_bytes;

	if (c >= k)
		return NULL;
	for (uint32_t i = 0; i < c; i++)
	{
		const char *z = memchr(s, '\0', (size_t) (end - s));

		if (z == NULL)
			return NULL;
		s = z + 1;
	}
	if (s >= end || memchr(s, '\0', (size_t) (end - s)) == NULL)
		return NULL;
	return s;
}

int
km_classes_find(const char *labels, uint32_t labels_bytes, uint32_t k,
				const char *label)
{
	const char *s = labels;
	const char *end = labels + labels_bytes;

	for (uint32_t c = 0; c < k && s < end; c++)
	{
		const char *z = memchr(s, '\0', (size_t) (end - s));

		if (z == NULL)
			return -1;
		if (strcmp(s, label) == 0)
			return (int) c;
		s = z + 1;
	}
	return -1;
}

/* ---- class weights ---- */

km_status
km_class_weights_resolve(const km_class_weights *cw, const char *labels,
						 uint32_t labels_bytes, uint32_t k,
						 const uint64_t *counts, double *weights,
						 km_error *err)
{
	double		n = 0.0;

	for (uint32_t c = 0; c < k; c++)
	{
		weights[c] = 1.0;
		n += (double) counts[c];
	}
	switch (cw->mode)
	{
		case KM_CLASS_WEIGHT_NONE:
			return KM_OK;
		case KM_CLASS_WEIGHT_BALANCED:
			for (uint32_t c = 0; c < k; c++)
				weights[c] = counts[c] > 0 ? n / ((double) k * (double) counts[c]) : 1.0;
			return KM_OK;
		case KM_CLASS_WEIGHT_TABLE:
			for (int i = 0; i < cw->n; i++)
			{
				int			c = km_classes_find(labels, labels_bytes, k, cw->label[i]);

				if (c < 0)
					return km_fail(err, KM_ERR_INVALID,
								   "class_weight names a label that is not a class",
								   "Option \"class_weight\" gives a weight to \"%.64s\", which no training row has as its label.",
								   cw->label[i]);
				weights[c] = cw->weight[i];
			}
			return KM_OK;
	}
	return KM_OK;
}

/* ---- decisions ---- */

static uint32_t
argmax(const double *f, uint32_t k)
{
	uint32_t	best = 0;

	for (uint32_t c = 1; c < k; c++)
		if (f[c] > f[best])
			best = c;
	return best;
}

uint32_t
km_classify_decide(km_multiclass mc, uint32_t k, const double *f)
{
	switch (mc)
	{
		case KM_MULTICLASS_BINARY:
			return f[0] > 0.0 ? 1 : 0;
		case KM_MULTICLASS_OVO:
			{
				uint32_t	best = 0;
				uint32_t	best_votes = 0;
				uint32_t	votes[KM_MAX_CLASSES];
				uint32_t	t = 0;

				memset(votes, 0, sizeof(uint32_t) * k);
				for (uint32_t i = 0; i < k; i++)
					for (uint32_t j = i + 1; j < k; j++, t++)
						votes[f[t] > 0.0 ? i : j]++;
				for (uint32_t c = 0; c < k; c++)
					if (votes[c] > best_votes)
					{
						best = c;
						best_votes = votes[c];
					}
				return best;
			}
		case KM_MULTICLASS_OVR:
		case KM_MULTICLASS_MULTINOMIAL:
			return argmax(f, k);
	}
	return 0;
}

/* ---- probabilities ---- */

double
km_sigmoid(double t)
{
	if (t >= 0.0)
		return 1.0 / (1.0 + exp(-t));
	else
	{
		double		e = exp(t);

		return e / (1.0 + e);
	}
}

double
km_log_sigmoid(double t)
{
	/* -log(1 + e^-t); for t < 0, t - log(1 + e^t): no overflow, no log(0) */
	if (t >= 0.0)
		return -log1p(exp(-t));
	return t - log1p(exp(t));
}

/* libsvm's sigmoid_predict: 1 / (1 + exp(A f + B)), without overflow. */
static double
platt(double f, double A, double B)
{
	double		t = f * A + B;
	double		p;

	if (t >= 0.0)
		p = exp(-t) / (1.0 + exp(-t));
	else
		p = 1.0 / (1.0 + exp(t));
	return fmin(fmax(p, KM_PLATT_MIN_PROB), 1.0 - KM_PLATT_MIN_PROB);
}

size_t
km_classify_proba_work_doubles(uint32_t k)
{
	return km_svm_proba_doubles(k);
}

/* p := p / sum(p) (the sum of positive terms is > 0). */
static void
normalize(double *p, uint32_t k)
{
	double		s = 0.0;

	for (uint32_t c = 0; c < k; c++)
		s += p[c];
	for (uint32_t c = 0; c < k; c++)
		p[c] /= s;
}

/*
 * p_c = exp(w_c) / sum_j exp(w_j) and logp_c = w_c - log sum_j exp(w_j)
 * (logp may be NULL) from log-weights w, shifted by the largest: the
 * largest term is exp(0) = 1, so the sum is in [1, k] and nothing divides
 * 0 by 0 however small the weights are.  Weights of -inf get p = 0; if
 * the largest is +inf (or every weight -inf, a limit with no value), the
 * classes at the largest share the probability equally.
 */
static void
normalize_log(const double *w, uint32_t k, double *p, double *logp)
{
	double		top = w[argmax(w, k)];
	double		s = 0.0;
	double		log_s;

	if (isinf(top))
	{
		uint32_t	ties = 0;

		for (uint32_t c = 0; c < k; c++)
			ties += w[c] == top;
		for (uint32_t c = 0; c < k; c++)
		{
			p[c] = w[c] == top ? 1.0 / ties : 0.0;
			if (logp)
				logp[c] = log(p[c]);
		}
		return;
	}
	for (uint32_t c = 0; c < k; c++)
		s += p[c] = exp(w[c] - top);
	for (uint32_t c = 0; c < k; c++)
		p[c] /= s;
	if (logp)
	{
		log_s = log(s);
		for (uint32_t c = 0; c < k; c++)
			logp[c] = (w[c] - top) - log_s;
	}
}

/*
 * The decision value below which a sigmoid is no longer a normal double
 * with its full precision (e^-708 is about 3.3e-308, DBL_MIN 2.2e-308):
 * one-vs-rest sigmoids at or above it are normalized as they are, below
 * it in the log domain.
 */
#define KM_SIGMOID_NORMAL_MIN (-700.0)

/*
 * One-vs-rest logistic: p_c = s(f_c) / sum_j s(f_j), scikit-learn's rule.
 * When every sigmoid is a normal double the quotient is taken as it is
 * (the result of earlier releases, bit for bit); else (a row far from
 * the data, where every sigmoid may underflow to 0 and the quotient
 * would be 0 / 0) the same quotient in the log domain:
 * exp(log s(f_c) - log sum_j s(f_j)).  logp is always from the log
 * domain.  w: k doubles of work.
 */
static void
ovr_logistic(const double *f, uint32_t k, double *p, double *logp, double *w)
{
	bool		direct = true;

	for (uint32_t c = 0; c < k; c++)
		direct = direct && f[c] >= KM_SIGMOID_NORMAL_MIN;
	if (logp != NULL || !direct)
	{
		for (uint32_t c = 0; c < k; c++)
			w[c] = km_log_sigmoid(f[c]);
		normalize_log(w, k, p, logp);
	}
	if (direct)
	{
		for (uint32_t c = 0; c < k; c++)
			p[c] = km_sigmoid(f[c]);
		normalize(p, k);
	}
}

static km_status
no_probability(km_error *err, km_prob_link link, km_multiclass mc)
{
	return km_fail(err, KM_ERR_INVALID, "model gives no probabilities",
				   "Probability link %d with the %s scheme gives no probabilities.",
				   (int) link, km_multiclass_name(mc));
}

/* logp_c = log p_c of probabilities bounded away from 0 (Platt's). */
static void
log_of(const double *p, uint32_t k, double *logp)
{
	if (logp)
		for (uint32_t c = 0; c < k; c++)
			logp[c] = log(p[c]);
}

km_status
km_classify_proba_log(km_prob_link link, km_multiclass mc, uint32_t k,
					  const double *f, const double *A, const double *B,
					  double *p, double *logp, double *work, km_error *err)
{
	if (link == KM_PROB_NONE)
		return no_probability(err, link, mc);
	switch (mc)
	{
		case KM_MULTICLASS_BINARY:
			if (link == KM_PROB_PLATT)
			{
				km_svm_proba(k, f, A, B, p, work);
				log_of(p, k, logp);
				return KM_OK;
			}
			p[1] = km_sigmoid(f[0]);
			p[0] = km_sigmoid(-f[0]);
			if (logp)
			{
				logp[1] = km_log_sigmoid(f[0]);
				logp[0] = km_log_sigmoid(-f[0]);
			}
			return KM_OK;
		case KM_MULTICLASS_MULTINOMIAL:
			if (link != KM_PROB_LOGISTIC)
				return no_probability(err, link, mc);
			normalize_log(f, k, p, logp);
			return KM_OK;
		case KM_MULTICLASS_OVR:
			if (link == KM_PROB_LOGISTIC)
			{
				ovr_logistic(f, k, p, logp, work);
				return KM_OK;
			}
			/* Platt's sigmoids are clipped to [1e-7, 1 - 1e-7]: the sum is >= k 1e-7 */
			for (uint32_t c = 0; c < k; c++)
				p[c] = platt(f[c], A[c], B[c]);
			normalize(p, k);
			log_of(p, k, logp);
			return KM_OK;
		case KM_MULTICLASS_OVO:
			if (link != KM_PROB_PLATT)
				return no_probability(err, link, mc);
			/* pairwise coupling: svm.c's, the one implementation */
			km_svm_proba(k, f, A, B, p, work);
			log_of(p, k, logp);
			return KM_OK;
	}
	return no_probability(err, link, mc);
}

km_status
km_classify_proba(km_prob_link link, km_multiclass mc, uint32_t k,
				  const double *f, const double *A, const double *B,
				  double *p, double *work, km_error *err)
{
	return km_classify_proba_log(link, mc, k, f, A, B, p, NULL, work, err);
}

const char *
km_label_type_name(km_label_type t)
{
	switch (t)
	{
		case KM_LABEL_TEXT:
			return "text";
		case KM_LABEL_FLOAT8:
			return "float8";
	}
	return "unknown";
}

const char *
km_multiclass_name(km_multiclass mc)
{
	switch (mc)
	{
		case KM_MULTICLASS_BINARY:
			return "binary";
		case KM_MULTICLASS_OVO:
			return "ovo";
		case KM_MULTICLASS_OVR:
			return "ovr";
		case KM_MULTICLASS_MULTINOMIAL:
			return "multinomial";
	}
	return "unknown";
}

uint32_t
km_multiclass_outputs(km_multiclass mc, uint32_t k)
{
	if (k < 2 || k > 65536)
		return 0;
	switch (mc)
	{
		case KM_MULTICLASS_BINARY:
			return k == 2 ? 1 : 0;
		case KM_MULTICLASS_OVO:
			return k * (k - 1) / 2;
		case KM_MULTICLASS_OVR:
		case KM_MULTICLASS_MULTINOMIAL:
			return k;
	}
	return 0;
}

/*
 * The metrics of the approximate classifiers' passes (primal_pass.h's
 * outputs: q = 1 binary, else one-vs-rest), by the decision rules above.
 */
static km_multiclass
pass_multiclass(uint32_t q)
{
	return q == 1 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVR;
}

km_status
km_primal_block_metrics(const double *F, size_t rows, uint32_t q, uint32_t k,
						bool logistic, const uint32_t *cls, double *p,
						double *pwork, double *correct, double *logloss,
						size_t *bad_row, km_error *err)
{
	km_multiclass mc = pass_multiclass(q);

	*bad_row = SIZE_MAX;
	for (size_t i = 0; i < rows; i++)
	{
		const double *f = F + i * q;
		uint32_t	y = cls[i];

		if (!km_all_finite(f, q))
		{
			*bad_row = i;
			return KM_ERR_DIVERGED;
		}
		if (km_classify_decide(mc, k, f) == y)
			*correct += 1.0;
		if (logistic)
		{
			km_status	st = km_classify_proba(KM_PROB_LOGISTIC, mc, k, f, NULL,
											   NULL, p, pwork, err);

			if (st != KM_OK)
				return st;
			*logloss -= log(fmax(p[y], 1e-300));
		}
	}
	return KM_OK;
}

bool
km_primal_block_holdout(const double *F, size_t rows, uint32_t q, uint32_t k,
						bool logistic, const uint32_t *cls,
						const uint32_t *fold, uint32_t v, double *p,
						double *pwork, double *sum, int64_t *count)
{
	km_multiclass mc = pass_multiclass(q);
	km_error	err;

	for (size_t i = 0; i < rows; i++)
	{
		const double *f = F + i * q;
		uint32_t	y = cls[i];

		if (fold[i] != v)
			continue;
		if (!km_all_finite(f, q))
			return false;
		(*count)++;
		if (logistic)
		{
			if (km_classify_proba(KM_PROB_LOGISTIC, mc, k, f, NULL, NULL, p,
								  pwork, &err) != KM_OK)
				return false;
			*sum -= log(fmin(fmax(p[y], DBL_EPSILON), 1.0 - DBL_EPSILON));
		}
		else
			*sum += km_classify_decide(mc, k, f) != y;
	}
	return true;
}
