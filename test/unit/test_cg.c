/*
 * test_cg.c - "solver": "cg" for nystrom ridge (learn/cg.c,
 * pipeline_approx_cg.c; issue 31): the conjugate gradient over the
 * learner's passes predicts as the direct one-pass solve (LAPACK's
 * Cholesky and tridiagonal reduction of the m x m sums) within 1e-6
 * relative, whatever blocks the host hands; its options and stopping rule;
 * and Newton-CG, the primal Newton's steps solved by the same CG
 * (learn/newton.h), as the direct Newton within 1e-6 relative.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "learn/cg.h"
#include "learn/cg_sample.h"
#include "method.h"
#include "options_core.h"
#include "pipeline.h"
#include "score.h"
#include "unit.h"
#include "unit_arena.h"
#include "unit_host.h"

void		test_cg_matches_direct(void);
void		test_cg_stops_at_max_iter(void);
void		test_cg_options(void);
void		test_newton_cg_matches_direct(void);
void		test_cg_sample_state(void);
void		test_cg_precondition_sample(void);
void		test_cg_sample_matches_direct(void);

/* Options from "key", value pairs (numbers as numbers, else text); NULL err: must parse. */
static bool
cg_options(const char *const *kv, int pairs, km_options *out, km_option_error *oerr)
{
	km_options_parser parser;

	km_options_begin(&parser, out);
	for (int i = 0; i < pairs; i++)
	{
		km_value	v;
		char	   *end;

		memset(&v, 0, sizeof(v));
		v.text = kv[2 * i + 1];
		v.number = strtod(v.text, &end);
		v.type = *end == '\0' ? KM_VALUE_NUMBER : KM_VALUE_STRING;
		v.string = v.text;
		if (!km_options_set(&parser, kv[2 * i], &v, oerr))
			return false;
	}
	return km_options_finish(&parser, oerr);
}

/* splitmix64 of the row number: the basis's reservoir keys */
static uint64_t *
cg_hashes(size_t n)
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

/* Train o on rows (host blocks of block rows, 0: the memory host's); predictions of P (np rows). */
static km_model
cg_train(const km_options *o, const km_rows *rows, size_t block, unit_arena *a,
		 const double *P, size_t np, double *pred)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_model	m;
	km_error	err;
	km_scorer	s;
	double	   *mem;

	memset(&m, 0, sizeof(m));
	km_train_plan_make(o, rows->n, rows->d, 0, &plan);
	CHECK(unit_learn_blocks(rows, &plan, &env, &m, &err, block) == KM_OK,
		  "%s: %s", err.message, err.detail);
	mem = unit_arena_alloc(a, km_scorer_doubles(&m) * sizeof(double));
	km_scorer_prepare(&s, &m, mem);
	for (size_t i = 0; i < np; i++)
		CHECK(km_scorer_decision(&s, P + i * rows->d, pred + i, &err) == KM_OK,
			  "%s", err.message);
	return m;
}

/* A smooth target of 5 features, offset so that predictions are far from 0. */
static void
cg_data(size_t n, int d, double **X, double **y, unsigned long long seed)
{
	*X = unit_rand_vec(n * (size_t) d, seed);
	*y = malloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
	{
		const double *x = *X + i * (size_t) d;

		(*y)[i] = 3.0 + sin(4.0 * x[0]) + x[1] * x[2] + 0.5 * cos(3.0 * x[3] + x[4]);
	}
}

/*
 * m = 150 centres of 12,000 rows: CG (default tol 1e-7) and the direct
 * one-pass solve predict 300 fresh points within 1e-6 relative; the same
 * eps of K_mm + eps I, the same training RMSE; CG over blocks of 100 rows
 * (regrouped into its chunks) gives the same bits.  The preconditioner
 * samples 9,600 rows (64 m): CG iterates (of 3,000 rows it would sample
 * every row, and its start would be the solution).
 */
void
test_cg_matches_direct(void)
{
	size_t		n = 12000,
				np = 300;
	int			d = 5;
	double	   *X;
	double	   *y;
	double	   *P = unit_rand_vec(np * (size_t) d, 77);
	uint64_t   *h = cg_hashes(n);
	km_rows		rows = {NULL, n, d, NULL, NULL, NULL, NULL, 0, NULL};
	const char *const direct_kv[] = {"approximation", "nystrom", "components", "150", "lambda", "0.01"};
	const char *const cg_kv[] = {"approximation", "nystrom", "components", "150", "lambda", "0.01",
	"solver", "cg"};
	km_options	od,
				oc;
	km_option_error oerr;
	unit_arena	ad = {{0}, 0},
				ac = {{0}, 0},
				ab = {{0}, 0};
	double	   *pd = malloc(np * sizeof(double));
	double	   *pc = malloc(np * sizeof(double));
	double	   *pb = malloc(np * sizeof(double));
	double		worst = 0.0;
	km_model	md,
				mc,
				mb;

	cg_data(n, d, &X, &y, 71);
	rows.X = X;
	rows.y = y;
	rows.hash = h;
	CHECK(cg_options(direct_kv, 3, &od, &oerr), "%s", oerr.message);
	CHECK(cg_options(cg_kv, 4, &oc, &oerr), "%s", oerr.message);
	CHECK(oc.fit.solver == KM_SOLVER_CG && oc.fit.tol == KM_CG_DEFAULT_TOL &&
		  oc.fit.max_iter == KM_CG_DEFAULT_MAX_ITER, "cg defaults: tol %g, max_iter %d",
		  oc.fit.tol, oc.fit.max_iter);
	md = cg_train(&od, &rows, 0, &ad, P, np, pd);
	mc = cg_train(&oc, &rows, 0, &ac, P, np, pc);
	mb = cg_train(&oc, &rows, 100, &ab, P, np, pb);
	for (size_t i = 0; i < np; i++)
	{
		double		rel = fabs(pc[i] - pd[i]) / fabs(pd[i]);

		worst = rel > worst ? rel : worst;
		CHECK(pb[i] == pc[i], "row %zu: blocks of 100 %.17g, of 512 %.17g", i, pb[i], pc[i]);
	}
	CHECK(worst <= 1e-6, "cg vs direct: worst relative difference %g", worst);
	CHECK(mc.converged && mc.iterations >= 1 && mc.iterations < KM_CG_DEFAULT_MAX_ITER,
		  "converged %d in %d iterations", (int) mc.converged, mc.iterations);
	CHECK(mc.approx_eps == md.approx_eps, "eps %g vs %g", mc.approx_eps, md.approx_eps);
	CHECK(fabs(mc.train_rmse - md.train_rmse) <= 1e-6 * md.train_rmse, "train rmse %.12g vs %.12g",
		  mc.train_rmse, md.train_rmse);
	CHECK_CLOSE(mc.intercept, md.intercept, 1e-12);
	CHECK(mb.iterations == mc.iterations && mc.method == md.method && mc.rows_seen == n && mc.components == 150,
		  "method %d rows %llu", (int) mc.method, (unsigned long long) mc.rows_seen);
	unit_arena_free(&ab);
	unit_arena_free(&ac);
	unit_arena_free(&ad);
	free(pb);
	free(pc);
	free(pd);
	free(h);
	free(y);
	free(X);
	free(P);
}

/*
 * "max_iter": 2 stops after two passes, the model not converged; a tighter
 * tol takes more.  8,000 rows, m = 80: the preconditioner samples 5,120
 * (64 m; of 1,200 rows it would sample every row, and its start would be
 * the solution).
 */
void
test_cg_stops_at_max_iter(void)
{
	size_t		n = 8000;
	int			d = 5;
	double	   *X;
	double	   *y;
	uint64_t   *h = cg_hashes(n);
	km_rows		rows = {NULL, n, d, NULL, NULL, NULL, NULL, 0, NULL};
	const char *const kv2[] = {"approximation", "nystrom", "components", "80", "lambda", "0.001",
	"solver", "cg", "max_iter", "2"};
	const char *const kv9[] = {"approximation", "nystrom", "components", "80", "lambda", "0.001",
	"solver", "cg", "tol", "1e-3"};
	const char *const kv12[] = {"approximation", "nystrom", "components", "80", "lambda", "0.001",
	"solver", "cg", "tol", "1e-12"};
	km_options	o;
	km_option_error oerr;
	unit_arena	a = {{0}, 0};
	double		p;
	km_model	m;
	int			loose;

	cg_data(n, d, &X, &y, 81);
	rows.X = X;
	rows.y = y;
	rows.hash = h;
	CHECK(cg_options(kv2, 5, &o, &oerr), "%s", oerr.message);
	m = cg_train(&o, &rows, 0, &a, X, 1, &p);
	CHECK(!m.converged && m.iterations == 2, "converged %d iterations %d",
		  (int) m.converged, m.iterations);
	CHECK(cg_options(kv9, 5, &o, &oerr), "%s", oerr.message);
	m = cg_train(&o, &rows, 0, &a, X, 1, &p);
	loose = m.iterations;
	CHECK(m.converged, "tol 1e-3 converged");
	CHECK(cg_options(kv12, 5, &o, &oerr), "%s", oerr.message);
	m = cg_train(&o, &rows, 0, &a, X, 1, &p);
	CHECK(m.iterations > loose, "tol 1e-12: %d iterations, tol 1e-3: %d", m.iterations, loose);
	unit_arena_free(&a);
	free(h);
	free(y);
	free(X);
}

/* Where "solver": "cg" applies, and what tol and max_iter mean without it. */
void
test_cg_options(void)
{
	static const struct
	{
		const char *kv[8];
		int			pairs;
		const char *message;	/* NULL: parses */
	}			cases[] = {
		{{"solver", "cg", "approximation", "nystrom"}, 2, NULL},
		{{"solver", "cg"}, 1, "solver \"cg\" applies only to nystrom models"},
		{{"solver", "cg", "approximation", "rff"}, 2, "solver \"cg\" applies only to nystrom models"},
		/* Newton-CG of the methods fitted in the primal (learn/newton.h) */
		{{"solver", "cg", "approximation", "nystrom", "method", "svr"}, 3, NULL},
		{{"solver", "cg", "approximation", "rff", "method", "logistic"}, 3, NULL},
		{{"solver", "cg", "method", "svr"}, 2, "solver \"cg\" applies only to approximate models"},
		{{"solver", "cg", "method", "lms", "approximation", "nystrom"}, 3,
		"solver \"cg\" does not apply to method \"lms\""},
		{{"solver", "cg", "method", "svm"}, 2, "solver \"cg\" applies only to approximate models"},
		{{"tol", "1e-9", "approximation", "nystrom"}, 2, "option \"tol\" applies only to method \"lms\""},
		{{"solver", "cg", "approximation", "nystrom", "tol", "1e-9", "max_iter", "7"}, 4, NULL},
		/* beyond the one-pass solve's 8192 components: cg only */
		{{"solver", "cg", "approximation", "nystrom", "components", "9000"}, 3, NULL},
		{{"approximation", "nystrom", "components", "9000"}, 2, "invalid value for option \"components\""},
		{{"solver", "cg", "approximation", "nystrom", "components", "40000"}, 3,
		"invalid value for option \"components\""},
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
	{
		km_options	o;
		km_option_error oerr;
		bool		ok;

		memset(&oerr, 0, sizeof(oerr));
		ok = cg_options(cases[c].kv, cases[c].pairs, &o, &oerr);
		if (cases[c].message == NULL)
			CHECK(ok, "case %zu: %s", c, oerr.message);
		else
			CHECK(!ok && strcmp(oerr.message, cases[c].message) == 0,
				  "case %zu: \"%s\"", c, ok ? "(parsed)" : oerr.message);
	}
	{
		const char *const kv[] = {"solver", "cg", "approximation", "nystrom", "tol", "1e-9",
		"max_iter", "7"};
		km_options	o;
		km_option_error oerr;

		CHECK(cg_options(kv, 4, &o, &oerr) && o.fit.tol == 1e-9 && o.fit.max_iter == 7,
			  "tol %g max_iter %d", o.fit.tol, o.fit.max_iter);
	}
}

/* A two-, three- or four-class problem over cg_data's features: classes of its smooth target. */
static void
newton_cg_classes(size_t n, const double *y, uint32_t k, uint32_t *cls, uint64_t *counts)
{
	memset(counts, 0, sizeof(uint64_t) * k);
	for (size_t i = 0; i < n; i++)
	{
		cls[i] = k == 2 ? (y[i] > 3.1 ? 1 : 0) :
			k == 3 ? (y[i] < 2.6 ? 0 : y[i] < 3.4 ? 1 : 2) :
			(y[i] < 2.4 ? 0 : y[i] < 3.0 ? 1 : y[i] < 3.6 ? 2 : 3);
		counts[cls[i]]++;
	}
}

/* Train o on rows (k classes, or regression) by host blocks of block rows; decisions of P (np x q). */
static km_status
newton_cg_train(const km_options *o, const km_rows *rows, uint32_t k, size_t block,
				unit_arena *a, const double *P, size_t np, double *pred, km_model *m,
				km_error *err)
{
	km_train_env env = unit_arena_env(a);
	km_train_plan plan;
	km_scorer	s;

	memset(m, 0, sizeof(*m));
	km_train_plan_make(o, rows->n, rows->d, k, &plan);
	if (unit_learn_blocks(rows, &plan, &env, m, err, block) != KM_OK)
		return err->status;
	km_scorer_prepare(&s, m, unit_arena_alloc(a, km_scorer_doubles(m) * sizeof(double)));
	for (size_t i = 0; i < np; i++)
		CHECK(km_scorer_decision(&s, P + i * rows->d, pred + i * (m->n_outputs ? m->n_outputs : 1), err) == KM_OK, "%s",
			  err->message);
	return KM_OK;
}

/*
 * Newton-CG ("solver": "cg", learn/newton.h) of logistic over nystrom, svm
 * (squared hinge) over rff and svr over nystrom, 2,000 rows, m = 60: the
 * same model as the direct Newton's Cholesky steps, its decisions on 300
 * fresh points within 1e-6 relative (floor 1) at tol 1e-10; over blocks of
 * 100 rows bit for bit the memory host's.  One-vs-rest of three and four
 * classes by logistic and svm over nystrom (the outputs' CGs in lockstep):
 * the q decisions of the 300 points as the direct Newton's within 1e-6
 * relative (floor 1) at tol 1e-8, blocks of 100 rows bit for bit.
 */
void
test_newton_cg_matches_direct(void)
{
	size_t		n = 2000,
				np = 300;
	int			d = 5;
	double	   *X;
	double	   *y;
	double	   *P = unit_rand_vec(np * (size_t) d, 91);
	uint64_t   *h = cg_hashes(n);
	uint32_t   *cls = malloc(n * sizeof(uint32_t));
	uint64_t	counts[4];
	double		class_w[4] = {1, 1, 1, 1};
	km_class_fit_result res;
	km_class_rows c = {0};
	km_rows		rows = {NULL, n, d, NULL, NULL, NULL, NULL, 0, NULL};
	static const char *const cases[3][12] = {
		{"method", "logistic", "approximation", "nystrom", "components", "60",
		"lambda", "0.001", "tol", "1e-10", "solver", "cg"},
		{"method", "svm", "approximation", "rff", "components", "60",
		"lambda", "0.001", "tol", "1e-10", "solver", "cg"},
		{"method", "svr", "approximation", "nystrom", "components", "60",
		"lambda", "0.001", "tol", "1e-10", "solver", "cg"},
	};
	double	   *pd = malloc(4 * np * sizeof(double));
	double	   *pc = malloc(4 * np * sizeof(double));
	double	   *pb = malloc(4 * np * sizeof(double));

	cg_data(n, d, &X, &y, 5);
	rows.X = X;
	rows.hash = h;
	newton_cg_classes(n, y, 2, cls, counts);
	c.X = X;
	c.k = 2;
	c.cls = cls;
	c.labels = "a\0b\0c";
	c.labels_bytes = 4;
	c.counts = counts;
	c.label_type = KM_LABEL_TEXT;
	c.class_w = class_w;
	c.platt_folds = 5;
	c.res = &res;
	for (int t = 0; t < 3; t++)
	{
		km_options	direct;
		km_options	cg;
		km_option_error oerr;
		km_model	md;
		km_model	mc;
		km_model	mb;
		km_error	err;
		uint32_t	k = t < 2 ? 2 : 0;
		unit_arena	a = {{0}, 0};
		double		worst = 0.0;

		rows.classes = k > 0 ? &c : NULL;
		rows.y = k > 0 ? NULL : y;
		CHECK(cg_options(cases[t], 5, &direct, &oerr) && cg_options(cases[t], 6, &cg, &oerr),
			  "case %d: %s", t, oerr.message);
		CHECK(newton_cg_train(&direct, &rows, k, 0, &a, P, np, pd, &md, &err) == KM_OK &&
			  newton_cg_train(&cg, &rows, k, 0, &a, P, np, pc, &mc, &err) == KM_OK &&
			  newton_cg_train(&cg, &rows, k, 100, &a, P, np, pb, &mb, &err) == KM_OK,
			  "case %d: %s: %s", t, err.message, err.detail);
		for (size_t i = 0; i < np; i++)
		{
			double		rel = fabs(pc[i] - pd[i]) / fmax(fabs(pd[i]), 1.0);

			worst = fmax(worst, rel);
		}
		CHECK(worst < 1e-6, "case %d: cg and direct differ by %g relative", t, worst);
		CHECK(memcmp(pb, pc, np * sizeof(double)) == 0,
			  "case %d: blocks of 100 rows changed the model", t);
		unit_arena_free(&a);
	}
	/* three and four classes: one-vs-rest's outputs are the direct Newton's */
	for (int t = 0; t < 4; t++)
	{
		static const char *const multi[2][12] = {
			{"method", "logistic", "approximation", "nystrom", "components", "60",
			"lambda", "0.001", "tol", "1e-8", "solver", "cg"},
			{"method", "svm", "approximation", "nystrom", "components", "60",
			"lambda", "0.001", "tol", "1e-8", "solver", "cg"},
		};
		uint32_t	k = t < 2 ? 3 : 4;
		km_options	direct;
		km_options	cg;
		km_option_error oerr;
		km_model	md;
		km_model	mc;
		km_model	mb;
		km_error	err;
		unit_arena	a = {{0}, 0};
		double		worst = 0.0;

		newton_cg_classes(n, y, k, cls, counts);
		for (uint32_t j = 0; j < k; j++)
			CHECK(counts[j] > n / 10, "%u classes: class %u has %llu rows", k, j,
				  (unsigned long long) counts[j]);
		c.k = k;
		c.labels = "a\0b\0c\0d";
		c.labels_bytes = 2 * k;
		rows.classes = &c;
		rows.y = NULL;
		CHECK(cg_options(multi[t % 2], 5, &direct, &oerr) && cg_options(multi[t % 2], 6, &cg, &oerr),
			  "%u classes: %s", k, oerr.message);
		CHECK(newton_cg_train(&direct, &rows, k, 0, &a, P, np, pd, &md, &err) == KM_OK &&
			  newton_cg_train(&cg, &rows, k, 0, &a, P, np, pc, &mc, &err) == KM_OK &&
			  newton_cg_train(&cg, &rows, k, 100, &a, P, np, pb, &mb, &err) == KM_OK,
			  "%u classes (%s): %s: %s", k, multi[t % 2][1], err.message, err.detail);
		CHECK(mc.n_outputs == k && md.n_outputs == k && mc.converged, "%u classes (%s): q %u, converged %d",
			  k, multi[t % 2][1], mc.n_outputs, (int) mc.converged);
		for (size_t i = 0; i < np * k; i++)
			worst = fmax(worst, fabs(pc[i] - pd[i]) / fmax(fabs(pd[i]), 1.0));
		CHECK(worst < 1e-6, "%u classes (%s): cg and direct differ by %g relative", k,
			  multi[t % 2][1], worst);
		CHECK(memcmp(pb, pc, np * k * sizeof(double)) == 0,
			  "%u classes (%s): blocks of 100 rows changed the model", k, multi[t % 2][1]);
		unit_arena_free(&a);
	}
	free(pb);
	free(pc);
	free(pd);
	free(cls);
	free(h);
	free(y);
	free(X);
	free(P);
}

/*
 * The preconditioner's row sample (learn/cg_sample.h): the same rows,
 * sorted the same, whatever the order they are offered in and however the
 * rows are split into combined states; its size rule; past its capacity
 * overflowed (whole or split, and by copies of one row); a state of another
 * shape refused.
 */
void
test_cg_sample_state(void)
{
	size_t		n = 5000;
	uint32_t	d = 3;
	uint32_t	e = 500;
	uint32_t	cap = km_cg_sample_capacity(e);
	uint64_t	t = km_cg_sample_threshold(e, n);
	size_t		bytes = km_cg_sample_bytes(cap, d);
	double	   *X = unit_rand_vec(n * d, 91);
	uint64_t   *h = cg_hashes(n);
	km_cg_sample *a = malloc(bytes);
	km_cg_sample *b = malloc(bytes);
	km_cg_sample *parts[3];
	double	   *Sa = malloc(sizeof(double) * cap * d);
	double	   *Sb = malloc(sizeof(double) * cap * d);
	double	   *ya = malloc(sizeof(double) * cap);
	double	   *yb = malloc(sizeof(double) * cap);
	void	   *scratch = malloc(km_cg_sample_sort_bytes(cap));
	uint32_t	na,
				nb;
	size_t		below = 0;
	km_error	err;

	CHECK(km_cg_sample_rows(300, 5, 2000) == 0, "a few rows: no sample");
	/* four passes' cost: (4 80 n m - 2 m^3) / m^2 */
	CHECK(km_cg_sample_rows(3000, 20, 1000000) == 100666, "1M rows, m = 3000: %u",
		  km_cg_sample_rows(3000, 20, 1000000));
	/* one m x m factor's memory: 8 m^2 / (24 d + 72), below 64 m and the cost's 792,000 */
	CHECK(km_cg_sample_rows(4000, 20, 10000000) == 231884, "10M rows, m = 4000: %u",
		  km_cg_sample_rows(4000, 20, 10000000));
	CHECK(km_cg_sample_rows(1000, 20, 100000000) == 64000, "100M rows, m = 1000: 64 m (in 64 MiB)");
	CHECK(km_cg_sample_rows(1000, 200, 100000000) == 13774, "d = 200: %u rows in 64 MiB",
		  km_cg_sample_rows(1000, 200, 100000000));
	CHECK(km_cg_sample_rows(300, 5, 6000) >= 4 * 300, "6,000 rows, m = 300");
	CHECK(km_cg_sample_threshold(10, 5) == UINT64_MAX, "more than the rows: every row");
	for (size_t i = 0; i < n; i++)
		below += h[i] <= t;
	km_cg_sample_init(a, cap, d, t);
	km_cg_sample_init(b, cap, d, t);
	for (int p = 0; p < 3; p++)
	{
		parts[p] = malloc(bytes);
		km_cg_sample_init(parts[p], cap, d, t);
	}
	for (size_t i = 0; i < n; i++)
	{
		km_cg_sample_offer(a, X + i * d, 3.0 * X[i * d] + 1.0, h[i]);
		km_cg_sample_offer(parts[(i * 7) % 3], X + (n - 1 - i) * d,
						   3.0 * X[(n - 1 - i) * d] + 1.0, h[n - 1 - i]);
	}
	for (int p = 0; p < 3; p++)
	{
		CHECK(km_cg_sample_check(parts[p], bytes, cap, d, t, &err) == KM_OK, "%s", err.detail);
		km_cg_sample_combine(b, parts[p]);
		free(parts[p]);
	}
	CHECK(a->n == below && b->n == below, "kept %u and %u of the %zu rows below the threshold",
		  a->n, b->n, below);
	CHECK(fabs((double) below - e) <= 8.0 * sqrt((double) e), "%zu rows for %u expected", below, e);
	na = km_cg_sample_sorted(a, Sa, ya, scratch);
	nb = km_cg_sample_sorted(b, Sb, yb, scratch);
	CHECK(na == nb && memcmp(Sa, Sb, sizeof(double) * na * d) == 0 &&
		  memcmp(ya, yb, sizeof(double) * na) == 0,
		  "the same sorted rows and targets in any order and split");
	for (uint32_t i = 0; i < na; i++)
		CHECK(ya[i] == 3.0 * Sa[(size_t) i * d] + 1.0, "row %u keeps its own target", i);
	/* a crafted target that is not finite is found before the rows are used */
	CHECK(km_cg_sample_first_nonfinite(a) == a->n, "every kept value finite");
	{
		double		bad[3] = {0.1, 0.2, 0.3};

		km_cg_sample_init(b, cap, d, UINT64_MAX);
		km_cg_sample_offer(b, X, 1.0, h[0]);
		km_cg_sample_offer(b, bad, NAN, h[1]);
		CHECK(km_cg_sample_first_nonfinite(b) == 1, "row 2's target: %u",
			  km_cg_sample_first_nonfinite(b));
	}
	/* more rows below the threshold than the capacity: overflowed, whole or split */
	{
		uint32_t	c = 10;
		size_t		cb = km_cg_sample_bytes(c, d);
		km_cg_sample *s = malloc(cb);
		km_cg_sample *h1 = malloc(cb);
		km_cg_sample *h2 = malloc(cb);

		km_cg_sample_init(s, c, d, UINT64_MAX);
		km_cg_sample_init(h1, c, d, UINT64_MAX);
		km_cg_sample_init(h2, c, d, UINT64_MAX);
		for (size_t i = 0; i < 11; i++)
		{
			km_cg_sample_offer(s, X + i * d, 0.0, h[i]);
			km_cg_sample_offer(i % 2 ? h1 : h2, X + i * d, 0.0, h[i]);
		}
		CHECK(s->overflowed == 1 && s->n == c, "11 rows into 10: overflowed %u, %u kept",
			  s->overflowed, s->n);
		CHECK(h1->overflowed == 0 && h2->overflowed == 0, "5 and 6 rows fit");
		km_cg_sample_combine(h1, h2);
		CHECK(h1->overflowed == 1, "their union does not");
		/* copies of one row: in or out together, and past the capacity overflowed */
		km_cg_sample_init(h2, c, d, h[0]);
		for (int k = 0; k < 20; k++)
			km_cg_sample_offer(h2, X, 0.0, h[0]);
		CHECK(h2->overflowed == 1, "20 copies of a row below the threshold");
		/* refused: another capacity, threshold, a count past the capacity, a bad flag or magic */
		CHECK(km_cg_sample_check(s, cb, c + 1, d, UINT64_MAX, &err) == KM_ERR_INVALID, "capacity");
		CHECK(km_cg_sample_check(s, cb, c, d, 7, &err) == KM_ERR_INVALID, "threshold");
		s->n = c + 1;
		CHECK(km_cg_sample_check(s, cb, c, d, UINT64_MAX, &err) == KM_ERR_INVALID, "count");
		s->n = c;
		s->overflowed = 2;
		CHECK(km_cg_sample_check(s, cb, c, d, UINT64_MAX, &err) == KM_ERR_INVALID, "flag");
		s->overflowed = 1;
		CHECK(km_cg_sample_check(s, cb, c, d, UINT64_MAX, &err) == KM_OK, "%s", err.detail);
		s->magic ^= 1;
		CHECK(km_cg_sample_check(s, cb, c, d, UINT64_MAX, &err) == KM_ERR_INVALID, "magic");
		CHECK(km_cg_sample_check(s, cb - 8, c, d, UINT64_MAX, &err) == KM_ERR_INVALID, "length");
		free(h2);
		free(h1);
		free(s);
	}
	free(scratch);
	free(yb);
	free(ya);
	free(Sb);
	free(Sa);
	free(b);
	free(a);
	free(h);
	free(X);
}

/*
 * km_cg_precondition_sample: R R^T = n / s L^-1 G L^-T + lambda I, against
 * LAPACK's triangular solves of the same L and G, within 1e-10 relative.
 */
void
test_cg_precondition_sample(void)
{
	uint32_t	m = 40;
	size_t		k = 3 * m;
	double	   *A = unit_rand_vec(k * m, 5);	/* k x m, column-major */
	double	   *B = unit_rand_vec(m * m, 6);
	double	   *L = calloc((size_t) m * m, sizeof(double));
	double	   *G = calloc((size_t) m * m, sizeof(double));
	double	   *W = malloc(sizeof(double) * m * m);
	double	   *mem = malloc(sizeof(double) * km_cg_doubles(m));
	double		n = 1e6,
				s = 977.0,
				worst = 0.0,
				big = 0.0;
	km_cg		cg = {.lambda = 0.1, .tol = 1e-7, .max_iter = 10};
	km_error	err;

	/* L: the Cholesky factor of B B^T + I; G = A^T A */
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) m, (int) m, (int) m, 1.0, B,
				(int) m, B, (int) m, 0.0, L, (int) m);
	for (uint32_t i = 0; i < m; i++)
		L[i + i * m] += 1.0;
	CHECK(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', (int) m, L, (int) m) == 0, "chol");
	for (uint32_t j = 0; j < m; j++)
		for (uint32_t i = 0; i < j; i++)
			L[i + j * m] = 0.0;
	cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) m, (int) m, (int) k, 1.0, A,
				(int) k, A, (int) k, 0.0, G, (int) m);
	/* the reference: W = L^-1 G L^-T by two LAPACK solves */
	memcpy(W, G, sizeof(double) * m * m);
	CHECK(LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', (int) m, (int) m, L, (int) m, W,
						 (int) m) == 0, "trtrs");
	for (uint32_t j = 0; j < m; j++)
		for (uint32_t i = j + 1; i < m; i++)
		{
			double		t = W[i + j * m];

			W[i + j * m] = W[j + i * m];
			W[j + i * m] = t;
		}
	CHECK(LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', (int) m, (int) m, L, (int) m, W,
						 (int) m) == 0, "trtrs");
	for (uint32_t j = 0; j < m; j++)
	{
		for (uint32_t i = 0; i < m; i++)
			W[i + j * m] *= n / s;
		W[j + j * m] += cg.lambda;
	}
	km_cg_buffers(&cg, m, L, mem);
	for (uint32_t j = 0; j < m; j++)
		for (uint32_t i = j; i < m; i++)
			cg.R[i + j * m] = G[i + j * m];
	CHECK(km_cg_precondition_sample(&cg, n, s, &err) == KM_OK, "%s", err.detail);
	for (uint32_t j = 0; j < m; j++)
		for (uint32_t i = j; i < m; i++)
		{
			double		rr = 0.0;

			for (uint32_t l = 0; l <= j; l++)
				rr += cg.R[i + l * m] * cg.R[j + l * m];
			worst = fmax(worst, fabs(rr - W[i + j * m]));
			big = fmax(big, fabs(W[i + j * m]));
		}
	CHECK(worst <= 1e-10 * big, "R R^T against LAPACK: %g of %g", worst, big);
	CHECK(km_cg_precondition_sample(&cg, n, 0.0, &err) == KM_ERR_INVALID, "an empty sample");
	free(mem);
	free(W);
	free(G);
	free(L);
	free(B);
	free(A);
}

/*
 * 8,000 rows, m = 300: the preconditioner from the row sample (km_cg_sample_rows
 * > 0 here), CG predicts as the direct solve within 1e-6 relative, the same
 * bits over blocks of 100 rows, converged well within max_iter.
 */
void
test_cg_sample_matches_direct(void)
{
	size_t		n = 8000,
				np = 300;
	int			d = 5;
	double	   *X;
	double	   *y;
	double	   *P = unit_rand_vec(np * (size_t) d, 78);
	uint64_t   *h = cg_hashes(n);
	km_rows		rows = {NULL, n, d, NULL, NULL, NULL, NULL, 0, NULL};
	const char *const direct_kv[] = {"approximation", "nystrom", "components", "300", "lambda", "0.001"};
	const char *const cg_kv[] = {"approximation", "nystrom", "components", "300", "lambda", "0.001",
	"solver", "cg"};
	km_options	od,
				oc;
	km_option_error oerr;
	unit_arena	ad = {{0}, 0},
				ac = {{0}, 0},
				ab = {{0}, 0};
	double	   *pd = malloc(np * sizeof(double));
	double	   *pc = malloc(np * sizeof(double));
	double	   *pb = malloc(np * sizeof(double));
	double		worst = 0.0;
	km_model	mc,
				mb;

	CHECK(km_cg_sample_rows(300, (uint32_t) d, n) >= 1200, "the sample road: %u rows",
		  km_cg_sample_rows(300, (uint32_t) d, n));
	cg_data(n, d, &X, &y, 72);
	rows.X = X;
	rows.y = y;
	rows.hash = h;
	CHECK(cg_options(direct_kv, 3, &od, &oerr), "%s", oerr.message);
	CHECK(cg_options(cg_kv, 4, &oc, &oerr), "%s", oerr.message);
	(void) cg_train(&od, &rows, 0, &ad, P, np, pd);
	mc = cg_train(&oc, &rows, 0, &ac, P, np, pc);
	mb = cg_train(&oc, &rows, 100, &ab, P, np, pb);
	for (size_t i = 0; i < np; i++)
	{
		worst = fmax(worst, fabs(pc[i] - pd[i]) / fabs(pd[i]));
		CHECK(pb[i] == pc[i], "row %zu: blocks of 100 %.17g, of 512 %.17g", i, pb[i], pc[i]);
	}
	CHECK(worst <= 1e-6, "cg vs direct: worst relative difference %g", worst);
	CHECK(mc.converged && mc.iterations <= 30 && mb.iterations == mc.iterations,
		  "converged %d in %d iterations", (int) mc.converged, mc.iterations);
	unit_arena_free(&ab);
	unit_arena_free(&ac);
	unit_arena_free(&ad);
	free(pb);
	free(pc);
	free(pd);
	free(h);
	free(y);
	free(X);
	free(P);
}
