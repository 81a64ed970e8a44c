/*
 * test_pipeline_approx.c - the learner's approximate regression
 * (pipeline_approx.c) and classifiers (pipeline_approx_classify.c) with
 * memory from malloc and made-up row hashes: the core trains nystrom, rff,
 * svr, logistic and svm models with no glue at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "classify.h"
#include "method.h"
#include "pipeline.h"
#include "pipeline_approx.h"
#include "score.h"
#include "task.h"
#include "unit.h"
#include "unit_arena.h"
#include "unit_host.h"

void		test_pipeline_approx_nystrom_is_exact(void);
void		test_pipeline_approx_primal(void);
void		test_pipeline_approx_needs_hashes(void);
void		test_pipeline_approx_kfold(void);
void		test_pipeline_approx_classes(void);
void		test_pipeline_approx_classes_kfold(void);
void		test_pipeline_approx_blocks(void);
void		test_pipeline_learn_gather(void);
void		test_pipeline_pass_combine(void);

/* Options from "key", value pairs: a value that parses as a number is one, "true"/"false" bools, else text. */
static km_options
parse_options(const char *const *kv, int pairs)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;

	km_options_begin(&parser, &opts);
	for (int i = 0; i < pairs; i++)
	{
		km_value	v;
		char	   *end;

		memset(&v, 0, sizeof(v));
		v.text = kv[2 * i + 1];
		v.number = strtod(v.text, &end);
		if (*end == '\0')
			v.type = KM_VALUE_NUMBER;
		else if (strcmp(v.text, "true") == 0 || strcmp(v.text, "false") == 0)
		{
			v.type = KM_VALUE_BOOL;
			v.boolean = v.text[0] == 't';
		}
		else
		{
			v.type = KM_VALUE_STRING;
			v.string = v.text;
		}
		CHECK(km_options_set(&parser, kv[2 * i], &v, &oerr), "%s: %s", kv[2 * i], oerr.message);
	}
	CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	return opts;
}

/* distinct keys for the basis reservoir (splitmix64 of the row number) */
static uint64_t *
made_up_hashes(size_t n)
{
	uint64_t   *h = malloc(n * sizeof(uint64_t));

	for (size_t i = 0; i < n; i++)
	{
		uint64_t	z = (uint64_t) (i + 1) * UINT64_C(0x9E3779B97F4A7C15);

		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		h[i] = z ^ (z >> 31);
	}
	return h;
}

/* Train o on the rows; the model's predictions of the rows into pred. */
static km_model
train_and_predict(const km_options *o, const km_rows *rows, unit_arena *a,
				  double *pred)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_model	m;
	km_error	err;
	km_scorer	s;
	double	   *mem;

	km_train_plan_make(o, rows->n, rows->d, 0, &plan);
	CHECK((plan.approximate ? unit_learn(rows, &plan, &env, &m, &err) :
		   km_train(rows, &plan, &env, &m, &err)) == KM_OK, "%s: %s", err.message, err.detail);
	mem = unit_arena_alloc(a, km_scorer_doubles(&m) * sizeof(double));
	km_scorer_prepare(&s, &m, mem);
	for (size_t i = 0; i < rows->n; i++)
		CHECK(km_scorer_decision(&s, rows->X + i * rows->d, pred + i, &err) == KM_OK,
			  "%s", err.message);
	return m;
}

/*
 * Nystrom with every row a centre and the penalty lambda K solves
 * K (K + lambda I) a = K y: its fit on the rows is exact kernel ridge's,
 * K (K + lambda I)^-1 y, up to the eps of chol(K + eps I).
 */
void
test_pipeline_approx_nystrom_is_exact(void)
{
	size_t		n = 50;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 21);
	double	   *y = unit_rand_vec(n, 22);
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, d, X, y, NULL, NULL, 3, h};
	const char *const exact_kv[] = {"lambda", "0.1", "gamma", "0.5", "standardize", "false"};
	const char *const approx_kv[] = {"lambda", "0.1", "gamma", "0.5", "standardize", "false",
	"approximation", "nystrom", "components", "50"};
	km_options	oe = parse_options(exact_kv, 3);
	km_options	oa = parse_options(approx_kv, 5);
	unit_arena ae = {{0}, 0};
	unit_arena aa = {{0}, 0};
	double	   *pe = malloc(n * sizeof(double));
	double	   *pa = malloc(n * sizeof(double));
	km_model	me = train_and_predict(&oe, &rows, &ae, pe);
	km_model	ma = train_and_predict(&oa, &rows, &aa, pa);

	CHECK(ma.approximation == KM_APPROX_NYSTROM && ma.n_train == n && ma.rows_skipped == 3,
		  "approximation %d n_train %u skipped %llu", (int) ma.approximation, ma.n_train,
		  (unsigned long long) ma.rows_skipped);
	CHECK(ma.method == KM_METHOD_RIDGE && ma.rows_seen == n, "method %d", (int) ma.method);
	CHECK(me.approximation == KM_APPROX_EXACT, "exact %d", (int) me.approximation);
	for (size_t i = 0; i < n; i++)
		CHECK_CLOSE(pa[i], pe[i], 1e-6);
	unit_arena_free(&aa);
	unit_arena_free(&ae);
	free(pa);
	free(pe);
	free(h);
	free(y);
	free(X);
}

/*
 * svr on rff and nystrom features (the primal Newton passes, over more
 * than one block of rows): a converged fit whose training RMSE is the
 * model's predictions'; a lambda grid for ridge scores every lambda (GCV).
 */
void
test_pipeline_approx_primal(void)
{
	size_t		n = 1100;
	int			d = 2;
	double	   *X = unit_rand_vec(n * d, 31);
	double	   *y = malloc(n * sizeof(double));
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, d, X, y, NULL, NULL, 0, h};
	const char *const kv[][10] = {
		{"method", "svr", "approximation", "rff", "components", "40", "gamma", "0.5", "epsilon", "0.05"},
		{"method", "svr", "approximation", "nystrom", "components", "30", "gamma", "0.5", "epsilon", "0.05"},
	};
	double	   *pred = malloc(n * sizeof(double));

	for (size_t i = 0; i < n; i++)
		y[i] = sin(3.0 * X[2 * i]) + 0.5 * X[2 * i + 1];
	for (int k = 0; k < 2; k++)
	{
		km_options	o = parse_options(kv[k], 5);
		unit_arena a = {{0}, 0};
		km_model	m = train_and_predict(&o, &rows, &a, pred);
		double		rss = 0.0;

		for (size_t i = 0; i < n; i++)
			rss += (pred[i] - y[i]) * (pred[i] - y[i]);
		CHECK(m.method == KM_METHOD_SVR && m.converged, "method %d converged %d",
			  (int) m.method, (int) m.converged);
		CHECK_CLOSE(sqrt(rss / n), m.train_rmse, 1e-6);
		CHECK(m.train_rmse < 0.2, "rmse %g", m.train_rmse);
		unit_arena_free(&a);
	}
	{
		const char *const gkv[] = {"approximation", "rff", "components", "40", "lambda", "0.001"};
		km_options	o = parse_options(gkv, 3);
		unit_arena a = {{0}, 0};
		km_model	m;

		o.lambdas.n = 3;
		o.lambdas.v[1] = 0.1;
		o.lambdas.v[2] = 10.0;
		m = train_and_predict(&o, &rows, &a, pred);
		CHECK(m.n_candidates == 3 && m.best < 3 && m.candidates != NULL, "candidates %u",
			  m.n_candidates);
		for (int c = 0; c < 3; c++)
			CHECK(isfinite(m.candidates[c].score), "score %d", c);
		unit_arena_free(&a);
	}
	free(pred);
	free(h);
	free(y);
	free(X);
}

/* Without the glue's hashes there is no basis pass: an error, not a crash. */
void
test_pipeline_approx_needs_hashes(void)
{
	double		X[4] = {0.0, 1.0, 2.0, 3.0};
	double		y[4] = {1.0, 2.0, 3.0, 5.0};
	km_rows		rows = {NULL, 4, 1, X, y, NULL, NULL, 0, NULL};
	const char *const kv[] = {"approximation", "nystrom", "components", "3"};
	km_options	o = parse_options(kv, 2);
	unit_arena a = {{0}, 0};
	km_train_env env = unit_arena_env(&a);
	km_train_plan plan;
	km_model	m;
	km_error	err;

	km_train_plan_make(&o, 4, 1, 0, &plan);
	CHECK(plan.approximate && plan.basis_bytes > 0 && plan.approx_bytes > 0, "plan");
	CHECK(unit_learn(&rows, &plan, &env, &m, &err) == KM_ERR_INVALID, "status %d", (int) err.status);
	unit_arena_free(&a);
}

/*
 * k-fold selection of svr over a lambda grid (folds given, as the glue's
 * row-hash folds): every candidate scored, the lowest mean wins, and the
 * refit is the model the winner trains alone.
 */
void
test_pipeline_approx_kfold(void)
{
	size_t		n = 300;
	int			d = 2;
	double	   *X = unit_rand_vec(n * d, 41);
	double	   *y = malloc(n * sizeof(double));
	int		   *fold = malloc(n * sizeof(int));
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, d, X, y, fold, NULL, 0, h};
	const char *const kv[] = {"method", "svr", "approximation", "rff", "components", "30",
	"gamma", "0.5", "cv", "3"};
	km_options	o = parse_options(kv, 5);
	unit_arena a = {{0}, 0};
	unit_arena b = {{0}, 0};
	double	   *pred = malloc(n * sizeof(double));
	double	   *pwin = malloc(n * sizeof(double));
	km_model	m;
	km_model	w;
	km_options	ow;

	for (size_t i = 0; i < n; i++)
	{
		y[i] = sin(3.0 * X[2 * i]) + 0.5 * X[2 * i + 1];
		fold[i] = (int) (i % 3);
	}
	o.lambdas.n = 3;
	o.lambdas.per_row = false;	/* the grid as given, not times 1 / n */
	o.lambdas.v[0] = 1e-4;
	o.lambdas.v[1] = 1e-2;
	o.lambdas.v[2] = 1.0;
	m = train_and_predict(&o, &rows, &a, pred);
	CHECK(m.n_candidates == 3 && m.cv == KM_CV_KFOLD && m.folds == 3, "candidates %u cv %d folds %u",
		  m.n_candidates, (int) m.cv, m.folds);
	for (int c = 0; c < 3; c++)
		CHECK(isfinite(m.candidates[c].score) && m.candidates[c].score >= m.candidates[m.best].score,
			  "score %d %g", c, m.candidates[c].score);
	CHECK(m.lambda == m.candidates[m.best].lambda, "lambda %g", m.lambda);
	/* the winner alone: the same coefficients */
	ow = o;
	ow.lambdas.n = 1;
	ow.cv = KM_CV_NONE;
	ow.fit.lambda = m.lambda;
	ow.lambdas.v[0] = m.lambda;
	rows.fold = NULL;
	w = train_and_predict(&ow, &rows, &b, pwin);
	CHECK(w.n_candidates == 0 && memcmp(w.alpha, m.alpha, sizeof(double) * m.n_train) == 0 &&
		  w.intercept == m.intercept, "refit differs from the winner's model");
	unit_arena_free(&b);
	unit_arena_free(&a);
	free(pwin);
	free(pred);
	free(h);
	free(fold);
	free(y);
	free(X);
}

/* Two or three classes in the plane: blobs around k points on a circle. */
static void
class_blobs(size_t n, uint32_t k, double *X, uint32_t *cls, uint64_t *counts)
{
	double	   *noise = unit_rand_vec(2 * n, 51);

	memset(counts, 0, sizeof(uint64_t) * k);
	for (size_t i = 0; i < n; i++)
	{
		uint32_t	c = (uint32_t) ((i * 7) % k);

		cls[i] = c;
		counts[c]++;
		X[2 * i] = 2.0 * cos(2.0 * M_PI * c / k) + noise[2 * i];
		X[2 * i + 1] = 2.0 * sin(2.0 * M_PI * c / k) + noise[2 * i + 1];
	}
	free(noise);
}

/* The classifier's rows: classes, labels "a", "b", "c", weights 1. */
static km_class_rows
class_rows(double *X, uint32_t k, const uint32_t *cls, const uint64_t *counts,
		   double *class_w, km_class_fit_result *res)
{
	km_class_rows c = {0};

	for (uint32_t j = 0; j < k; j++)
		class_w[j] = 1.0;
	c.X = X;
	c.k = k;
	c.cls = cls;
	c.labels = "a\0b\0c";
	c.labels_bytes = 2 * k;
	c.counts = counts;
	c.label_type = KM_LABEL_TEXT;
	c.class_w = class_w;
	c.platt_folds = 5;
	c.res = res;
	return c;
}

/* km_train of an approximate classifier (must succeed) into m. */
static void
train_classes(const km_options *o, const km_rows *rows, unit_arena *a, km_model *m)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_error	err;

	km_train_plan_make(o, rows->n, rows->d, rows->classes->k, &plan);
	CHECK(plan.approximate && plan.basis_bytes > 0 && plan.approx_bytes > 0 &&
		  plan.cache_bytes > 0, "plan");
	CHECK(unit_learn(rows, &plan, &env, m, &err) == KM_OK, "%s: %s", err.message, err.detail);
}

/*
 * Logistic over nystrom features, two classes, over more than one block of
 * rows: a converged fit whose training accuracy is that of the model's own
 * decisions, with a log-loss; the feature cache changes no bit.
 */
void
test_pipeline_approx_classes(void)
{
	size_t		n = 1100;
	double	   *X = malloc(2 * n * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	uint64_t	counts[2];
	double		class_w[2];
	km_class_fit_result res;
	km_class_rows c;
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, 2, X, NULL, NULL, NULL, 4, h};
	const char *const kv[] = {"method", "logistic", "approximation", "nystrom",
	"components", "30", "gamma", "0.5", "lambda", "0.001"};
	km_options	o = parse_options(kv, 5);
	unit_arena a = {{0}, 0};
	unit_arena b = {{0}, 0};
	km_model	m;
	km_model	mc;
	km_scorer	s;
	double	   *cache = malloc(n * 30 * sizeof(double));
	size_t		right = 0;

	class_blobs(n, 2, X, cls, counts);
	c = class_rows(X, 2, cls, counts, class_w, &res);
	rows.classes = &c;
	train_classes(&o, &rows, &a, &m);
	CHECK(km_task_lookup(m.task)->classes && m.n_classes == 2 && m.n_outputs == 1 &&
		  m.approximation == KM_APPROX_NYSTROM && m.n_train == 30 && m.rank == 30,
		  "classes %u outputs %u n_train %u", m.n_classes, m.n_outputs, m.n_train);
	CHECK(res.has_probability && res.converged && m.rows_seen == n && m.rows_skipped == 4 &&
		  m.n_candidates == 0, "probability %d converged %d", (int) res.has_probability,
		  (int) res.converged);
	km_scorer_prepare(&s, &m, unit_arena_alloc(&a, km_scorer_doubles(&m) * sizeof(double)));
	for (size_t i = 0; i < n; i++)
	{
		double		f;
		km_error	err;

		CHECK(km_scorer_decision(&s, X + 2 * i, &f, &err) == KM_OK, "%s", err.message);
		right += (f > 0.0 ? 1u : 0u) == cls[i];
	}
	CHECK_CLOSE(m.train_accuracy, (double) right / n, 1e-12);
	CHECK(m.train_accuracy > 0.95 && m.train_log_loss > 0.0, "accuracy %g", m.train_accuracy);
	/* the features cached: the same model, bit for bit */
	c.feature_cache = cache;
	train_classes(&o, &rows, &b, &mc);
	CHECK(memcmp(mc.alpha, m.alpha, sizeof(double) * 30) == 0 &&
		  mc.intercepts[0] == m.intercepts[0] && mc.train_accuracy == m.train_accuracy,
		  "the feature cache changed the model");
	unit_arena_free(&b);
	unit_arena_free(&a);
	free(cache);
	free(h);
	free(cls);
	free(X);
}

/*
 * svm over rff features, three classes (one-vs-rest), k-fold over a lambda
 * grid: every candidate scored, the lowest wins, the refit is bit for bit
 * the winner trained alone; more folds than rows is an error, and so are
 * rows without classes for svm's task.
 */
void
test_pipeline_approx_classes_kfold(void)
{
	size_t		n = 300;
	double	   *X = malloc(2 * n * sizeof(double));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	uint64_t	counts[3];
	double		class_w[3];
	km_class_fit_result res;
	km_class_rows c;
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, 2, X, NULL, NULL, NULL, 0, h};
	const char *const kv[] = {"method", "svm", "approximation", "rff", "components", "40",
	"gamma", "0.5", "cv", "3"};
	km_options	o = parse_options(kv, 5);
	unit_arena a = {{0}, 0};
	unit_arena b = {{0}, 0};
	km_train_env env = unit_arena_env(&b);
	km_train_plan plan;
	km_error	err;
	km_model	m;
	km_model	w;

	class_blobs(n, 3, X, cls, counts);
	c = class_rows(X, 3, cls, counts, class_w, &res);
	rows.classes = &c;
	o.lambdas.n = 3;
	o.lambdas.per_row = false;
	o.lambdas.v[0] = 1e-4;
	o.lambdas.v[1] = 1e-2;
	o.lambdas.v[2] = 10.0;
	train_classes(&o, &rows, &a, &m);
	CHECK(m.n_outputs == 3 && m.n_classes == 3 && !res.has_probability &&
		  m.approximation == KM_APPROX_RFF, "outputs %u", m.n_outputs);
	CHECK(m.n_candidates == 3 && m.cv == KM_CV_KFOLD && m.folds == 3 && m.best < 3,
		  "candidates %u cv %d folds %u", m.n_candidates, (int) m.cv, m.folds);
	for (int j = 0; j < 3; j++)
		CHECK(isfinite(m.candidates[j].score) &&
			  m.candidates[j].score >= m.candidates[m.best].score, "score %d %g", j,
			  m.candidates[j].score);
	CHECK(m.lambda == m.candidates[m.best].lambda, "lambda %g", m.lambda);
	o.lambdas.n = 1;
	o.cv = KM_CV_NONE;
	o.fit.lambda = m.lambda;
	o.lambdas.v[0] = m.lambda;
	train_classes(&o, &rows, &b, &w);
	CHECK(w.n_candidates == 0 && memcmp(w.alpha, m.alpha, sizeof(double) * 40 * 3) == 0 &&
		  memcmp(w.intercepts, m.intercepts, sizeof(double) * 3) == 0,
		  "refit differs from the winner's model");
	/* more folds than rows */
	o = parse_options(kv, 5);
	o.lambdas.n = 2;
	o.lambdas.v[1] = 0.1;
	o.folds = 301;
	km_train_plan_make(&o, n, 2, 3, &plan);
	CHECK(unit_learn(&rows, &plan, &env, &w, &err) == KM_ERR_INVALID &&
		  strstr(err.message, "cv needs") != NULL, "status %d: %s", (int) err.status,
		  err.message);
	/* km_train asks the plan's task (the method's): svm's rows need classes */
	rows.classes = NULL;
	CHECK(plan.task != NULL && plan.task->classes &&
		  unit_learn(&rows, &plan, &env, &w, &err) == KM_ERR_INVALID, "status %d: %s",
		  (int) err.status, err.message);
	unit_arena_free(&b);
	unit_arena_free(&a);
	free(h);
	free(cls);
	free(X);
}

/* One model of plan on rows handed in blocks of block rows (must succeed). */
static km_model
learn_in_blocks(const km_options *o, const km_rows *rows, uint32_t k, unit_arena *a,
				size_t block)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_model	m;
	km_error	err;

	km_train_plan_make(o, rows->n, rows->d, k, &plan);
	CHECK(unit_learn_blocks(rows, &plan, &env, &m, &err, block) == KM_OK, "block %zu: %s: %s",
		  block, err.message, err.detail);
	return m;
}

/*
 * A pass groups its sums by its own chunks (ridge's 256 rows, a Newton
 * pass's 512), whatever blocks the host hands: blocks of 1, 7, 300 and
 * 1000 rows give the models of the memory host's 512 bit for bit (ridge's
 * sums, svr's k-fold Newton passes, a 3-class logistic's grid with its
 * stratified folds and feature cache).
 */
void
test_pipeline_approx_blocks(void)
{
	size_t		n = 1100;
	int			d = 2;
	double	   *X = unit_rand_vec(n * d, 61);
	double	   *y = malloc(n * sizeof(double));
	int		   *fold = malloc(n * sizeof(int));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	uint64_t	counts[3];
	double		class_w[3];
	km_class_fit_result res;
	uint64_t   *h = made_up_hashes(n);
	km_rows		rows = {NULL, n, d, X, y, fold, NULL, 0, h};
	km_class_rows c;
	const char *const ridge_kv[] = {"approximation", "nystrom", "components", "40",
	"gamma", "0.5", "lambda", "0.01"};
	const char *const svr_kv[] = {"method", "svr", "approximation", "rff", "components", "30",
	"gamma", "0.5", "cv", "3"};
	const char *const cls_kv[] = {"method", "logistic", "approximation", "nystrom",
	"components", "20", "gamma", "0.5", "lambda", "0.001", "cv", "3"};
	const size_t blocks[] = {1, 7, 300, 1000};
	km_options	o[3];
	double	   *cache = malloc(sizeof(double) * n * 20);

	o[0] = parse_options(ridge_kv, 4);
	o[1] = parse_options(svr_kv, 5);
	o[1].lambdas.n = 2;
	o[1].lambdas.per_row = false;
	o[1].lambdas.v[0] = 1e-3;
	o[1].lambdas.v[1] = 1e-1;
	o[2] = parse_options(cls_kv, 6);
	o[2].lambdas.n = 2;
	o[2].lambdas.v[1] = 0.1;
	class_blobs(n, 3, X, cls, counts);
	for (size_t i = 0; i < n; i++)
	{
		y[i] = sin(3.0 * X[2 * i]) + 0.5 * X[2 * i + 1];
		fold[i] = (int) ((i * 5) % 3);
	}
	c = class_rows(X, 3, cls, counts, class_w, &res);
	for (int t = 0; t < 3; t++)
	{
		unit_arena a = {{0}, 0};
		km_model	ref;

		rows.classes = t == 2 ? &c : NULL;
		rows.fold = t == 1 ? fold : NULL;
		c.feature_cache = t == 2 ? cache : NULL;
		ref = learn_in_blocks(&o[t], &rows, t == 2 ? 3 : 0, &a, KM_BLOCK_ROWS);
		for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++)
		{
			unit_arena ab = {{0}, 0};
			km_model	m = learn_in_blocks(&o[t], &rows, t == 2 ? 3 : 0, &ab, blocks[b]);
			size_t		q = t == 2 ? 3 : 1;

			CHECK(m.n_train == ref.n_train && m.n_candidates == ref.n_candidates &&
				  memcmp(m.alpha, ref.alpha, sizeof(double) * ref.n_train * q) == 0 &&
				  m.intercept == ref.intercept && m.train_rmse == ref.train_rmse &&
				  m.train_accuracy == ref.train_accuracy,
				  "case %d: blocks of %zu rows change the model", t, blocks[b]);
			for (uint32_t j = 0; j < ref.n_candidates; j++)
				CHECK(memcmp(&m.candidates[j].score, &ref.candidates[j].score, sizeof(double)) == 0,
					  "case %d: blocks of %zu rows change candidate %u", t, blocks[b], j);
			unit_arena_free(&ab);
		}
		CHECK(t != 1 || ref.n_candidates == 2, "svr candidates %u", ref.n_candidates);
		CHECK(t != 2 || ref.n_candidates == 2, "logistic candidates %u", ref.n_candidates);
		unit_arena_free(&a);
	}
	free(cache);
	free(h);
	free(cls);
	free(fold);
	free(y);
	free(X);
}

/*
 * The exact expansion through the learner: one gather pass, then
 * km_train's road.  Rows handed in one block (kept as the host holds
 * them) or in blocks of 7 (appended to the learner's copies) give
 * km_train's model bit for bit: svr with k-fold over given folds, and a
 * 3-class svm (whose rows are standardized in place: each run its own copy).
 */
void
test_pipeline_learn_gather(void)
{
	size_t		n = 90;
	int			d = 2;
	double	   *X0 = unit_rand_vec(n * d, 71);
	double	   *X = malloc(n * d * sizeof(double));
	double	   *y = malloc(n * sizeof(double));
	int		   *fold = malloc(n * sizeof(int));
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	uint64_t	counts[3];
	double		class_w[3];
	km_class_fit_result res;
	km_rows		rows = {NULL, n, d, X, y, fold, NULL, 0, NULL};
	km_class_rows c;
	const char *const svr_kv[] = {"method", "svr", "gamma", "0.5", "cv", "3"};
	const char *const svm_kv[] = {"method", "svm", "gamma", "0.5", "lambda", "0.01"};
	const size_t blocks[] = {KM_BLOCK_ROWS, 7};
	km_options	o[2];

	o[0] = parse_options(svr_kv, 3);
	o[0].lambdas.n = 2;
	o[0].lambdas.per_row = false;
	o[0].lambdas.v[0] = 1e-3;
	o[0].lambdas.v[1] = 1e-1;
	o[1] = parse_options(svm_kv, 3);
	class_blobs(n, 3, X0, cls, counts);
	for (size_t i = 0; i < n; i++)
	{
		y[i] = sin(3.0 * X0[2 * i]) + 0.5 * X0[2 * i + 1];
		fold[i] = (int) ((i * 5) % 3);
	}
	for (int t = 0; t < 2; t++)
	{
		unit_arena a = {{0}, 0};
		km_train_env env = unit_arena_env(&a);
		km_train_plan plan;
		km_model	ref;
		km_error	err;
		uint32_t	k = t == 1 ? 3 : 0;
		size_t		q = t == 1 ? 3 : 1;

		memcpy(X, X0, n * d * sizeof(double));
		c = class_rows(X, 3, cls, counts, class_w, &res);
		rows.classes = t == 1 ? &c : NULL;
		rows.fold = t == 0 ? fold : NULL;
		km_train_plan_make(&o[t], n, d, k, &plan);
		CHECK(km_train(&rows, &plan, &env, &ref, &err) == KM_OK, "case %d: %s", t, err.message);
		for (size_t b = 0; b < 2; b++)
		{
			unit_arena ab = {{0}, 0};
			km_train_env envb = unit_arena_env(&ab);
			km_model	m;

			memcpy(X, X0, n * d * sizeof(double));
			CHECK(unit_learn_blocks(&rows, &plan, &envb, &m, &err, blocks[b]) == KM_OK,
				  "case %d blocks %zu: %s", t, blocks[b], err.message);
			CHECK(m.n_train == ref.n_train && m.n_candidates == ref.n_candidates &&
				  memcmp(m.alpha, ref.alpha, sizeof(double) * ref.n_train * q) == 0 &&
				  memcmp(m.X, ref.X, sizeof(double) * ref.n_train * d) == 0 &&
				  m.intercept == ref.intercept,
				  "case %d: the gather in blocks of %zu rows changes the model", t, blocks[b]);
			unit_arena_free(&ab);
		}
		CHECK(t != 0 || ref.n_candidates == 2, "svr candidates %u", ref.n_candidates);
		unit_arena_free(&a);
	}
	free(cls);
	free(fold);
	free(y);
	free(X);
	free(X0);
}

/* Two states of a pass over disjoint rows combine by addition; an ordered pass's do not. */
void
test_pipeline_pass_combine(void)
{
	km_pass		pass;
	double		a[3] = {1.0, 2.0, 3.0};
	double		b[3] = {4.0, 5.0, 6.0};
	km_error	err;

	memset(&pass, 0, sizeof(pass));
	pass.state_bytes = sizeof(a);
	CHECK(km_pass_combine(&pass, a, b, &err) == KM_OK && a[0] == 5.0 && a[1] == 7.0 &&
		  a[2] == 9.0, "combined %g %g %g", a[0], a[1], a[2]);
	pass.ordered = true;
	CHECK(km_pass_combine(&pass, a, b, &err) == KM_ERR_INVALID && a[0] == 5.0,
		  "an ordered pass combined");
}
