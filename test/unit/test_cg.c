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
 * m = 150 centres of 3,000 rows: CG (default tol 1e-7) and the direct
 * one-pass solve predict the rows and 300 fresh points within 1e-6
 * relative; the same eps of K_mm + eps I, the same training RMSE; CG over
 * blocks of 100 rows (regrouped into its chunks) gives the same bits.
 */
void
test_cg_matches_direct(void)
{
	size_t		n = 3000,
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

/* "max_iter": 2 stops after two passes, the model not converged; a tighter tol takes more. */
void
test_cg_stops_at_max_iter(void)
{
	size_t		n = 1200;
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
