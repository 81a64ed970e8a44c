/*
 * options_suggest.c - the hints of an unknown option key or value: the
 * closest valid spelling, and scikit-learn's names translated
 * (options_suggest.h).  Core: no PostgreSQL header.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "options_suggest.h"

/* Names compared by edit distance, at most (longer ones are not close). */
#define KM_SUGGEST_MAX_LEN 64

int
km_edit_distance(const char *a, const char *b, int limit)
{
	size_t		na = strlen(a);
	size_t		nb = strlen(b);
	int			d[KM_SUGGEST_MAX_LEN + 1][KM_SUGGEST_MAX_LEN + 1];

	if (na > KM_SUGGEST_MAX_LEN || nb > KM_SUGGEST_MAX_LEN)
		return limit + 1;
	for (size_t i = 0; i <= na; i++)
		d[i][0] = (int) i;
	for (size_t j = 0; j <= nb; j++)
		d[0][j] = (int) j;
	for (size_t i = 1; i <= na; i++)
	{
		int			row_min = limit + 1;

		for (size_t j = 1; j <= nb; j++)
		{
			int			ca = tolower((unsigned char) a[i - 1]);
			int			cb = tolower((unsigned char) b[j - 1]);
			int			v = d[i - 1][j - 1] + (ca != cb);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 &&
				ca == tolower((unsigned char) b[j - 2]) &&
				tolower((unsigned char) a[i - 2]) == cb &&
				d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
			if (v < row_min)
				row_min = v;
		}
		if (row_min > limit)
			return limit + 1;
	}
	return d[na][nb] > limit ? limit + 1 : d[na][nb];
}

const char *
km_closest_name(const char *got, const char *const *names, int n)
{
	size_t		len = strlen(got);
	int			limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	const char *best = NULL;
	int			best_d = limit + 1;

	for (int i = 0; i < n; i++)
	{
		int			dist = km_edit_distance(got, names[i], limit);

		/* one or two letters are close to too much: only by case */
		if ((len <= 2 || strlen(names[i]) <= 2) && dist > 0)
			continue;
		if (dist < best_d)
		{
			best = names[i];
			best_d = dist;
		}
	}
	return best;
}

/* ASCII case ignored. */
static bool
same_name(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char) *a) != tolower((unsigned char) *b))
			return false;
	return *a == *b;
}

/* The written value, or nothing when it is a container. */
static const char *
value_text(const km_value *v)
{
	return v != NULL && v->text != NULL &&
		v->type != KM_VALUE_ARRAY && v->type != KM_VALUE_OBJECT ? v->text : NULL;
}

/*
 * scikit-learn's parameters (SVC, SVR, KernelRidge, LogisticRegression,
 * Nystroem, RBFSampler, train_test_split) under kernel_ml's keys.
 */
static bool
sklearn_key(const char *key, const km_value *v, char *hint, size_t len)
{
	const char *val = value_text(v);

	if (same_name(key, "C"))
	{
		if (v != NULL && v->type == KM_VALUE_NUMBER && v->number > 0.0)
			snprintf(hint, len,
					 "scikit-learn's C is 1 / (n lambda) for n training rows: write \"lambda\": 1 / (n C), e.g. \"lambda\": %g for \"C\": %s and 1000 rows; without \"lambda\", svm, svr and logistic take C = 1.",
					 1.0 / (1000.0 * v->number), val);
		else
			snprintf(hint, len,
					 "scikit-learn's C is 1 / (n lambda) for n training rows: write \"lambda\": 1 / (n C); without \"lambda\", svm, svr and logistic take C = 1.");
		return true;
	}
	if (strcmp(key, "alpha") == 0)
	{
		snprintf(hint, len,
				 "scikit-learn's alpha (KernelRidge) is kernel_ml's lambda: write \"lambda\": %s.",
				 val ? val : "alpha");
		return true;
	}
	if (strcmp(key, "n_components") == 0)
	{
		snprintf(hint, len,
				 "Write \"components\": %s with \"approximation\": \"nystrom\" (scikit-learn's Nystroem) or \"rff\" (RBFSampler).",
				 val ? val : "m");
		return true;
	}
	if (strcmp(key, "random_state") == 0)
	{
		snprintf(hint, len, "Write \"seed\": %s.", val ? val : "an integer");
		return true;
	}
	if (strcmp(key, "test_size") == 0)
	{
		snprintf(hint, len, "Write \"test_fraction\": %s (kernel_model_train's held-out share).",
				 val ? val : "a number from 0 to 1");
		return true;
	}
	return false;
}

bool
km_suggest_key(const char *key, const km_value *v, const char *const *keys,
			   int n, char *hint, size_t len)
{
	const char *close;
	const char *val = value_text(v);

	hint[0] = '\0';
	if (sklearn_key(key, v, hint, len))
		return true;
	if ((close = km_closest_name(key, keys, n)) == NULL)
		return false;
	if (val)
		snprintf(hint, len, "Perhaps you meant \"%s\": %s.", close, val);
	else
		snprintf(hint, len, "Perhaps you meant \"%s\".", close);
	return true;
}

/* scikit-learn's (and common) spellings of a value under kernel_ml's. */
typedef struct value_alias
{
	const char *key;
	const char *from;			/* compared with case ignored */
	const char *to;
	const char *whose;			/* for the hint */
} value_alias;

static const value_alias value_aliases[] = {
	{"kernel", "polynomial", "poly", "scikit-learn's pairwise kernel"},
	{"kernel", "gaussian", "rbf", "the Gaussian kernel"},
	{"method", "svc", "svm", "scikit-learn's SVC"},
	{"method", "kernelridge", "ridge", "scikit-learn's KernelRidge"},
	{"method", "krr", "ridge", "kernel ridge regression"},
	{"method", "logisticregression", "logistic", "scikit-learn's LogisticRegression"},
	{"approximation", "rbfsampler", "rff", "scikit-learn's RBFSampler"},
};

bool
km_suggest_value(const char *key, const char *got, const char *const *names,
				 int n, char *hint, size_t len)
{
	const char *close;

	hint[0] = '\0';
	for (size_t i = 0; i < sizeof(value_aliases) / sizeof(value_aliases[0]); i++)
		if (strcmp(value_aliases[i].key, key) == 0 &&
			same_name(value_aliases[i].from, got))
		{
			snprintf(hint, len, "Write \"%s\": \"%s\" (%s).", key,
					 value_aliases[i].to, value_aliases[i].whose);
			return true;
		}
	if (strcmp(key, "gamma") == 0 &&
		same_name(got, "scale"))
	{
		snprintf(hint, len,
				 "scikit-learn's \"scale\" is 1 / (n_features var(X)), which is 1 / n_features on standardized features: remove \"gamma\" for the default (for exact rbf models, kernlab's sigest), or give a number; \"auto\" here is a grid.");
		return true;
	}
	if ((close = km_closest_name(got, names, n)) == NULL)
		return false;
	snprintf(hint, len, "Perhaps you meant \"%s\": \"%s\".", key, close);
	return true;
}
