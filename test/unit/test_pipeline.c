/*
 * test_pipeline.c - km_train (pipeline.h) against its steps done by hand,
 * with memory from malloc: the core trains with no glue at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "method.h"
#include "pipeline.h"
#include "select.h"
#include "solve.h"
#include "task.h"
#include "unit.h"
#include "unit_arena.h"

void		test_pipeline_matches_steps(void);
void		test_pipeline_centre_overflow(void);
void		test_pipeline_every_task_has_a_road(void);

/* {"lambda": 0.1}, not yet resolved: rbf with the default gamma */
static km_options
ridge_options(void)
{
	km_options_parser parser;
	km_options	opts;
	km_option_error oerr;
	km_value	v;

	memset(&v, 0, sizeof(v));
	km_options_begin(&parser, &opts);
	v.type = KM_VALUE_NUMBER;
	v.number = 0.1;
	v.text = "0.1";
	CHECK(km_options_set(&parser, "lambda", &v, &oerr), "%s", oerr.message);
	CHECK(km_options_finish(&parser, &oerr), "%s", oerr.message);
	return opts;
}

void
test_pipeline_matches_steps(void)
{
	size_t		n = 60;
	int			d = 3;
	double	   *X = unit_rand_vec(n * d, 11);
	double	   *y = unit_rand_vec(n, 12);
	unit_arena	a = {{0}, 0};
	km_train_env env = unit_arena_env(&a);
	km_rows		rows = {NULL, n, d, X, y, NULL, NULL, 7};
	km_options	o = ridge_options();
	km_train_plan plan;
	km_model	m;
	km_error	err;
	double	   *Xs = malloc(n * d * sizeof(double));
	double	   *mean = malloc(d * sizeof(double));
	double	   *scale = malloc(d * sizeof(double));
	double	   *yc = malloc(n * sizeof(double));
	double	   *alpha = malloc(n * sizeof(double));
	double	   *work;
	double		ymean = 0.0;
	km_fit_params p;
	km_fit_result res;

	km_train_plan_make(&o, n, d, 0, &plan);
	CHECK(plan.ncand == 0 && plan.nwork > 0, "ncand %d nwork %zu", plan.ncand, plan.nwork);
	CHECK(km_train(&rows, &plan, &env, &m, &err) == KM_OK, "%s", err.message);

	/* the same steps by hand */
	km_standardize(X, n, d, mean, scale, Xs);
	work = malloc(km_gamma_sigest_doubles(n, d) * sizeof(double));
	p = plan.opts.fit;
	p.kernel.gamma = km_gamma_sigest(Xs, n, d, NULL, work);
	free(work);
	for (size_t i = 0; i < n; i++)
		ymean += y[i];
	ymean /= (double) n;
	for (size_t i = 0; i < n; i++)
		yc[i] = y[i] - ymean;
	work = malloc(plan.nwork * sizeof(double));
	CHECK(km_fit(&p, Xs, n, d, yc, alpha, work, &res, &err, NULL) == KM_OK, "%s", err.message);

	CHECK(m.kernel.gamma == p.kernel.gamma, "gamma %.17g vs %.17g", m.kernel.gamma, p.kernel.gamma);
	CHECK(m.intercept == ymean, "intercept %.17g vs %.17g", m.intercept, ymean);
	CHECK(memcmp(m.alpha, alpha, n * sizeof(double)) == 0, "alpha differs");
	CHECK(memcmp(m.X, Xs, n * d * sizeof(double)) == 0, "rows differ");
	CHECK(m.n_train == n && m.n_features == (uint32_t) d && m.rows_skipped == 7,
		  "n_train %u n_features %u skipped %llu", m.n_train, m.n_features,
		  (unsigned long long) m.rows_skipped);
	CHECK(m.task == KM_TASK_REGRESSION && m.n_candidates == 0, "task %d", (int) m.task);
	free(work);
	free(alpha);
	free(yc);
	free(scale);
	free(mean);
	free(Xs);
	unit_arena_free(&a);
	free(y);
	free(X);
}

void
test_pipeline_centre_overflow(void)
{
	double		X[3] = {0.0, 1.0, 2.0};
	double		y[3] = {1.7e308, 1.7e308, -1.7e308};
	unit_arena	a = {{0}, 0};
	km_train_env env = unit_arena_env(&a);
	km_rows		rows = {NULL, 3, 1, X, y, NULL, NULL, 0};
	km_options	o = ridge_options();
	km_train_plan plan;
	km_model	m;
	km_error	err;
	double		ymean;

	/* the sum overflows: the mean of y / n, and -1.7e308 minus it overflows */
	CHECK(km_train_centre(y, 3, true, &ymean) == 2, "first bad row");
	CHECK(isfinite(ymean) && ymean > 5e307, "ymean %g", ymean);
	CHECK(km_train_centre(y, 3, false, &ymean) == 3 && ymean == 0.0, "no intercept");
	km_train_plan_make(&o, 3, 1, 0, &plan);
	CHECK(km_train(&rows, &plan, &env, &m, &err) == KM_ERR_OVERFLOW, "status %d", (int) err.status);
	CHECK(strstr(err.detail, "row 3") != NULL, "%s", err.detail);
	unit_arena_free(&a);
}

/*
 * Every row of the task table has a road through km_train, found by its id
 * (pipeline.c): its own for a task with a target, the one road of the tasks
 * without a target (pipeline_rows.h) for the others.
 */
void
test_pipeline_every_task_has_a_road(void)
{
	const km_task_train *seen[KM_TASK_LAST + 1] = {0};
	const km_task_train *without = NULL;

	for (int t = KM_TASK_FIRST; t <= KM_TASK_LAST; t++)
	{
		const km_task_ops *task = km_task_get(t);
		const km_task_train *road = km_task_road(task);

		CHECK(task != NULL && road != NULL, "task %d has no road", t);
		if (road == NULL)
			continue;
		CHECK(road->plan != NULL && road->plan_approx != NULL &&
			  road->train != NULL && road->train_approx != NULL, "road of task %s incomplete", task->name);
		if (!task->target)
		{
			CHECK(without == NULL || without == road, "task %s: a second road without a target", task->name);
			without = road;
			continue;
		}
		for (int u = KM_TASK_FIRST; u < t; u++)
			CHECK(seen[u] != road, "tasks %d and %d share a road", u, t);
		seen[t] = road;
	}
	for (int t = KM_TASK_FIRST; t <= KM_TASK_LAST; t++)
		CHECK(seen[t] == NULL || seen[t] != without, "task %d takes the road without a target", t);
	CHECK(km_task_road(NULL) == NULL, "a road for no task");
}
