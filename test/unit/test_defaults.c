/*
 * test_defaults.c - the defaults of issue 22: stratified folds for
 * classifiers, the tie rule between candidates, kernlab's sigest for the
 * default gamma, and the classifiers' default lambda 1 / n (C = 1).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options_core.h"
#include "select.h"
#include "unit.h"

void		test_defaults_stratified_folds(void);
void		test_defaults_tie_rule(void);
void		test_defaults_sigest(void);
void		test_defaults_classifier_lambda(void);

/* Per-fold class counts of fold[] into counts (folds x k). */
static void
fold_counts(const uint32_t *cls, const uint32_t *fold, size_t n, uint32_t k,
			uint32_t folds, size_t *counts)
{
	memset(counts, 0, sizeof(size_t) * folds * k);
	for (size_t i = 0; i < n; i++)
		counts[fold[i] * k + cls[i]]++;
}

void
test_defaults_stratified_folds(void)
{
	/*
	 * Classes alternate in hash order: folds by rank alone (i mod 2) put
	 * every row of class 0 in fold 0 and of class 1 in fold 1, so each
	 * fold's training rows miss a class.  Stratified: class 0's rows are
	 * dealt 0,1,0,1,0 and class 1's, starting after class 0's five, 1,0,1,0,1.
	 */
	uint32_t	cls[10] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
	uint32_t	want[10] = {0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
	uint32_t	fold[10];
	size_t		seen[3];
	size_t		counts[5 * 3];
	size_t		n = 997;
	uint32_t   *c2 = malloc(sizeof(uint32_t) * n);
	uint32_t   *f2 = malloc(sizeof(uint32_t) * n);
	unsigned long long st = 7;

	km_stratified_folds(cls, 10, 2, 2, fold, seen);
	for (int i = 0; i < 10; i++)
		CHECK(fold[i] == want[i], "row %d: fold %u, want %u", i, fold[i], want[i]);
	fold_counts(cls, fold, 10, 2, 2, counts);
	CHECK(counts[0] == 3 && counts[1] == 2 && counts[2] == 2 && counts[3] == 3,
		  "per-fold class counts %zu %zu / %zu %zu", counts[0], counts[1], counts[2], counts[3]);
	for (int i = 0; i < 10; i++)
		CHECK(i % 2 == (int) cls[i], "by rank alone, fold %d would hold class %d only", i % 2, i % 2);

	/* imbalanced, shuffled classes (70 / 25 / 5 %), 5 folds */
	for (size_t i = 0; i < n; i++)
	{
		double		u = unit_urand(&st) + 0.5;

		c2[i] = u < 0.70 ? 0 : u < 0.95 ? 1 : 2;
	}
	km_stratified_folds(c2, n, 3, 5, f2, seen);
	fold_counts(c2, f2, n, 3, 5, counts);
	for (uint32_t c = 0; c < 3; c++)
	{
		size_t		lo = (size_t) -1,
					hi = 0;

		for (uint32_t v = 0; v < 5; v++)
		{
			lo = counts[v * 3 + c] < lo ? counts[v * 3 + c] : lo;
			hi = counts[v * 3 + c] > hi ? counts[v * 3 + c] : hi;
		}
		CHECK(hi - lo <= 1, "class %u: fold counts from %zu to %zu", c, lo, hi);
	}
	{
		size_t		lo = (size_t) -1,
					hi = 0;

		for (uint32_t v = 0; v < 5; v++)
		{
			size_t		s = counts[v * 3] + counts[v * 3 + 1] + counts[v * 3 + 2];

			lo = s < lo ? s : lo;
			hi = s > hi ? s : hi;
		}
		CHECK(hi - lo <= 1, "fold sizes from %zu to %zu", lo, hi);
	}
	free(c2);
	free(f2);
}

void
test_defaults_tie_rule(void)
{
	km_candidate c[4] = {
		{.gamma = 0.5, .lambda = 0.1, .score = 0.2},
		{.gamma = 0.5, .lambda = 1.0, .score = 0.2},
		{.gamma = 0.1, .lambda = 1.0, .score = 0.2},
		{.gamma = 0.1, .lambda = 10.0, .score = NAN},
	};
	km_candidate r[4];

	/* a tie goes to the larger lambda, then the smaller gamma; NaN never wins */
	CHECK(km_best_candidate(c, 4) == 2, "best %d", km_best_candidate(c, 4));
	/* whatever the grid's order */
	for (int i = 0; i < 4; i++)
		r[i] = c[3 - i];
	CHECK(km_best_candidate(r, 4) == 1, "reversed: best %d", km_best_candidate(r, 4));
	/* a lower score wins over any tie rule */
	c[0].score = 0.19;
	CHECK(km_best_candidate(c, 4) == 0, "best %d", km_best_candidate(c, 4));
	c[0].score = c[1].score = c[2].score = NAN;
	CHECK(km_best_candidate(c, 4) == -1, "all NaN: best %d", km_best_candidate(c, 4));
}

void
test_defaults_sigest(void)
{
	/*
	 * Rows 0, 1, 3 (d = 1): squared distances 1, 4, 9; R's type 7
	 * quantiles (np.quantile's default) q(0.9) = 8, q(0.1) = 1.6, so gamma
	 * = (1/8 + 1/1.6) / 2 = 0.375.  A duplicate row adds a zero distance,
	 * which kernlab drops, and pairs equal to those already there.
	 */
	double		X[4] = {3.0, 0.0, 1.0, 0.0};
	double		P[4] = {0.0, 1.0, 0.0, 3.0};
	double		work[16];
	size_t		n = 1500;
	int			d = 3;
	double	   *Y = unit_rand_vec(n * d, 11);
	int64_t    *order = malloc(sizeof(int64_t) * n);
	double	   *w = malloc(sizeof(double) * km_gamma_sigest_doubles(n, d));
	double		all,
				first;

	CHECK(km_gamma_sigest_doubles(3, 1) >= 3, "workspace %zu", km_gamma_sigest_doubles(3, 1));
	/* the rows that take part: 1000 up to d = 67, fewer for wide rows, at least 100 */
	CHECK(km_sigest_rows(5000, 30) == 1000 && km_sigest_rows(500, 30) == 500,
		  "%zu %zu", km_sigest_rows(5000, 30), km_sigest_rows(500, 30));
	CHECK(km_sigest_rows(5000, 784) < 300 && km_sigest_rows(5000, 784) > 250 &&
		  km_sigest_rows(5000, 1000000) == 100, "%zu %zu", km_sigest_rows(5000, 784),
		  km_sigest_rows(5000, 1000000));
	CHECK_CLOSE(km_gamma_sigest(X, 3, 1, NULL, work), 0.375, 1e-15);
	/* with the duplicate: distances 1, 1, 4, 9, 9 -> q(0.9) = 9, q(0.1) = 1 */
	CHECK_CLOSE(km_gamma_sigest(X, 4, 1, NULL, work), 0.5 * (1.0 / 9.0 + 1.0), 1e-15);
	/* the same rows in another order: the same bits */
	CHECK(km_gamma_sigest(X, 4, 1, NULL, work) == km_gamma_sigest(P, 4, 1, NULL, work),
		  "row order changed gamma");
	/* no nonzero distance: 1 / d */
	CHECK(km_gamma_sigest(X + 1, 1, 1, NULL, work) == 1.0, "one row");
	{
		double		Z[6] = {1, 2, 1, 2, 1, 2};

		CHECK(km_gamma_sigest(Z, 3, 2, NULL, work) == 0.5, "identical rows: 1 / d");
	}

	/*
	 * Beyond KM_SIGEST_ROWS rows only the first KM_SIGEST_ROWS of order
	 * take part: reversing the order picks other rows (a different but
	 * close value for uniform data), and the identity order equals the
	 * first rows alone.
	 */
	for (size_t i = 0; i < n; i++)
		order[i] = (int64_t) i;
	first = km_gamma_sigest(Y, KM_SIGEST_ROWS, d, NULL, w);
	CHECK(km_gamma_sigest(Y, n, d, order, w) == first, "identity order");
	for (size_t i = 0; i < n; i++)
		order[i] = (int64_t) (n - 1 - i);
	all = km_gamma_sigest(Y, n, d, order, w);
	CHECK(all != first && fabs(all / first - 1.0) < 0.1, "reversed %g vs %g", all, first);
	free(Y);
	free(order);
	free(w);
}

/* Options {"method": method} (and "lambda" if lambda >= 0), resolved for n rows of d features. */
static km_options
parse(const char *method, double lambda, size_t n, int d)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;
	km_value	v;
	char		text[64];

	memset(&v, 0, sizeof(v));
	km_options_begin(&parser, &opts);
	v.type = KM_VALUE_STRING;
	v.string = method;
	snprintf(text, sizeof(text), "\"%s\"", method);
	v.text = text;
	CHECK(km_options_set(&parser, "method", &v, &oerr), "%s", oerr.message);
	if (lambda >= 0.0)
	{
		v.type = KM_VALUE_NUMBER;
		v.number = lambda;
		v.text = "lambda";
		CHECK(km_options_set(&parser, "lambda", &v, &oerr), "%s", oerr.message);
	}
	CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	km_options_resolve(&opts, d);
	km_options_resolve_rows(&opts, n);
	return opts;
}

void
test_defaults_classifier_lambda(void)
{
	km_options	o;

	/* svm and logistic without lambda: 1 / n, C = 1 / (n lambda) = 1 */
	o = parse("svm", -1.0, 200, 4);
	CHECK(o.fit.lambda == 1.0 / 200 && o.lambdas.n == 1 && o.lambdas.v[0] == 1.0 / 200,
		  "svm lambda %g", o.fit.lambda);
	CHECK(km_svm_C(o.fit.lambda, 200) == 1.0, "C %g", km_svm_C(o.fit.lambda, 200));
	CHECK(o.gamma_default && o.fit.kernel.gamma == 0.25, "gamma %g", o.fit.kernel.gamma);
	o = parse("logistic", -1.0, 50, 4);
	CHECK(o.fit.lambda == 1.0 / 50, "logistic lambda %g", o.fit.lambda);
	/* given, it stays; ridge and lms keep lambda 1 */
	o = parse("svm", 0.5, 200, 4);
	CHECK(o.fit.lambda == 0.5, "given lambda %g", o.fit.lambda);
	o = parse("ridge", -1.0, 200, 4);
	CHECK(o.fit.lambda == 1.0 && o.method_default == false, "ridge lambda %g", o.fit.lambda);
	o = parse("lms", -1.0, 200, 4);
	CHECK(o.fit.lambda == 1.0, "lms lambda %g", o.fit.lambda);
}
