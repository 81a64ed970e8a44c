/*
 * named_regression.c - the regression task's steps in a named training
 * (named_common.h NamedTask): its split, its scores in memory and by a
 * pass over the stored query, its plan by passes, and "if_better" by the
 * hold-out RMSE.  The tasks without a target (kernel PCA, the one-class
 * SVM) take the same row: they hold nothing out, so nothing is scored or
 * compared (their metrics print null scores, as since 0.4.0's first
 * draft).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/memutils.h"

#include "method.h"
#include "metrics.h"
#include "options.h"
#include "pgprogress.h"
#include "split.h"
#include "train_paths.h"
#include "host_agg.h"
#include "host_cursor.h"
#include "learn/score_regression.h"
#include "pgutil.h"
#include "task.h"
#include "train_rows.h"
#include "named_common.h"
#include "named_task.h"

/* Whether a model stored is a classifier. */
static bool
is_classifier(Datum model)
{
	return model_stored_shape(model).n_classes > 0;
}

/*
 * A method fitted in the primal (svr) selects by k-fold over folds of the
 * row hash; another cross-validation (none today for a primal method) in
 * memory, as kernel_train.
 */
static bool
regression_by_passes(const NamedRun *run)
{
	return !(km_method_get(run->opts.fit.method)->primal_add != NULL &&
			 km_options_selects(&run->opts) && run->opts.cv != KM_CV_KFOLD);
}

/*
 * Deterministic split: rank the rows by a hash of their values (features
 * and target) seeded with seed (split.c, as k-fold does), and hold out the
 * first floor(fraction * n).  A row's side depends on its values, not on
 * the order the query returned it in, so an unordered query splits the
 * same way every time, and rows that stay in the table mostly stay on
 * their side as rows are added.  Returns the held-out count; order[] lists
 * held-out rows first, each part in the original row order.
 */
static int64
regression_split(const RowSet *rs, int64 seed, double fraction, int64 *order)
{
	int64	   *ranked = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	int64		ntest;

	km_rank_rows(rs->X, rs->y, rs->n, rs->d, seed, ranked);
	ntest = km_holdout_by_rank(ranked, rs->n, fraction, order);
	pfree(ranked);
	return ntest;
}

static void
regression_score_rows(NamedRun *run, Datum model, MemoryContext work)
{
	score_rows(model, run->rs, run->order + run->ntest, run->ntrain, &run->train_scores);
	score_rows(model, run->rs, run->order, run->ntest, &run->test_scores);
}

/* The km_metrics of one group of the scoring pass (n 0 when absent). */
static void
metrics_from_row(HeapTuple tup, TupleDesc desc, km_metrics *m)
{
	bool		isnull;
	int64		n = DatumGetInt64(SPI_getbinval(tup, desc, 2, &isnull));

	km_metrics_init(m);
	if (n == 0)
		return;
	m->n = (size_t) n;
	m->sse = DatumGetFloat8(SPI_getbinval(tup, desc, 3, &isnull));
	m->sae = DatumGetFloat8(SPI_getbinval(tup, desc, 4, &isnull));
	m->ymean = DatumGetFloat8(SPI_getbinval(tup, desc, 5, &isnull));
	/* var_pop is Youngs-Cramer's sum of squared deviations over n */
	m->yss = DatumGetFloat8(SPI_getbinval(tup, desc, 6, &isnull)) * (double) n;
}

/*
 * The scoring statement of a model without a regression pass (a task
 * without a target): the error sums of model on the held-out rows (into
 * holdout) and, unless holdout_only, on the training rows (into train) and
 * the count of rows with a NULL feature array or target (into *skipped),
 * one aggregate statement grouped by side (its sums push down).
 */
static void
score_statement(const NamedRun *run, Datum model, bool holdout_only,
				km_metrics *holdout, km_metrics *train, int64 *skipped)
{
	Oid			types[3] = {BYTEAOID, INT8OID, FLOAT8OID};
	Datum		values[3];
	char	   *sql;

	values[0] = model;
	values[1] = Int64GetDatum(run->opts.seed);
	values[2] = Float8GetDatum(run->opts.test_fraction);
	km_progress_stage("score: pass over the %s rows", holdout_only ? "held-out" : "usable");
	sql = psprintf("SELECT z.h, pg_catalog.count(*), "
				   "pg_catalog.sum(z.e OPERATOR(pg_catalog.*) z.e), "
				   "pg_catalog.sum(pg_catalog.abs(z.e)), "
				   "pg_catalog.avg(z.y), pg_catalog.var_pop(z.y) "
				   "FROM (SELECT %s._kernel_ml_holdout(s.f, s.y, $2, $3) AS h, "
				   "%s.kernel_predict($1, s.f) OPERATOR(pg_catalog.-) s.y AS e, s.y "
				   "FROM %s%s) AS z GROUP BY z.h",
				   run->schema, run->schema, run->query.source,
				   holdout_only ?
				   psprintf(" WHERE %s._kernel_ml_holdout(s.f, s.y, $2, $3)", run->schema) : "");
	catalog_query_run(&run->query, sql, 3, types, values);
	km_metrics_init(holdout);
	if (train != NULL)
	{
		km_metrics_init(train);
		*skipped = 0;
	}
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		bool		isnull;
		Datum		side = SPI_getbinval(tup, SPI_tuptable->tupdesc, 1, &isnull);

		if (isnull)
		{
			/* rows with a NULL feature array or target */
			if (train != NULL)
				*skipped = DatumGetInt64(SPI_getbinval(tup, SPI_tuptable->tupdesc, 2, &isnull));
		}
		else if (DatumGetBool(side))
			metrics_from_row(tup, SPI_tuptable->tupdesc, holdout);
		else if (train != NULL)
			metrics_from_row(tup, SPI_tuptable->tupdesc, train);
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * The scoring pass: the error sums of model on the held-out rows (into
 * holdout) and, unless holdout_only, on the training rows (into train) and
 * the count of rows with a NULL feature array or target (into *skipped).
 * A regression model is scored by the learner's pass over the aggregate
 * host (learn/score_regression.h: each row's prediction once, in blocks,
 * the model decoded once per process; parallel workers and Citus shards
 * score where the rows are), after one statement that counts the rows of
 * each side; others by score_statement.
 */
static void
score_pass(const NamedRun *run, Datum model, bool holdout_only,
		   km_metrics *holdout, km_metrics *train, int64 *skipped)
{
	km_model_shape shape = model_stored_shape(model);
	MemoryContext tmp;
	MemoryContext old;
	CursorHost	h;
	AggHost		ah;
	km_host		host;
	km_train_env env;
	km_error	err;
	bytea	   *mb;

	if (shape.n_classes != 0 || shape.q != 1 || shape.has_pca ||
		km_task_lookup(km_method_task(shape.method)) != &km_task_regression)
	{
		score_statement(run, model, holdout_only, holdout, train, skipped);
		return;
	}
	/* in line before the scan: no TOAST read while the query's role is in effect */
	mb = (bytea *) pg_detoast_datum_copy((struct varlena *) DatumGetPointer(model));
	km_metrics_init(holdout);
	if (train != NULL)
	{
		km_metrics_init(train);
		*skipped = 0;
	}
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml scoring pass",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	km_progress_stage("score: counting the %s rows", holdout_only ? "held-out" : "usable");
	agg_host_count(&h, &run->query, run->schema, (int) shape.d, CURSOR_VALUES, true,
				   run->opts.seed, run->opts.test_fraction, 0, tmp);
	if (train != NULL)
		*skipped = h.skipped;
	if (h.rows > 0)
	{
		host = agg_host(&ah, &h, run->schema);
		ah.rules.sides = true;
		km_train_env_palloc(&env);
		km_blas_setup_scoring();
		km_progress_stage("score: pass over the %s rows", holdout_only ? "held-out" : "usable");
		if (km_regression_score(&host, (const uint8_t *) VARDATA_ANY(mb),
								VARSIZE_ANY_EXHDR(mb), holdout, train, &env, &err) != KM_OK)
			km_raise(&err);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

static void
regression_score_passes(NamedRun *run, Datum model)
{
	score_pass(run, model, false, &run->test_scores, &run->train_scores, &run->skipped);
	run->ntest = (int64) run->test_scores.n;
	run->ntrain = (int64) run->train_scores.n;
}

/* The plan of an approximate model over n rows of d features, its sizes and lambdas checked. */
static void
regression_plan(const NamedRun *run, int64 n, int d, uint32 k, km_train_plan *plan)
{
	km_approx_plan(&run->opts, n, d, run->fn, plan);
}

static CursorTarget
regression_target(const NamedRun *run)
{
	return CURSOR_VALUES;
}

static void
regression_shape(const NamedRun *run, CursorHost *h, km_rows *shape, km_train_plan *plan)
{
	regression_plan(run, h->rows, h->d, 0, plan);
}

static void
regression_learnt(const NamedRun *run, const km_rows *shape, const km_train_plan *plan)
{
}

static bool
regression_same_task(Datum deployed, const char **reason)
{
	if (!is_classifier(deployed))
		return true;
	*reason = "the deployed version is a classifier: a change of task deploys only with \"always\"";
	return false;
}

/* "if_better": the deployed version's hold-out RMSE on the same rows, a lower one wins. */
static void
regression_compare(const NamedRun *run, Decision *d)
{
	if (run->passes)
	{
		score_pass(run, d->prev.model, true, &d->prev_scores, NULL, NULL);
		check_pass_rows("scoring", run->ntest, "comparison", (int64) d->prev_scores.n,
						"held-out");
	}
	else
		score_rows(d->prev.model, run->rs, run->order, run->ntest, &d->prev_scores);
	d->deploy = score_better(km_metrics_rmse(&run->test_scores),
							 km_metrics_rmse(&d->prev_scores), true);
	d->reason = d->deploy ? "lower hold-out RMSE than the deployed version" :
		"hold-out RMSE not lower than the deployed version's";
}

static void
regression_veto(const NamedRun *run, Decision *d)
{
}

/* Scores as a json object, or null when there were no rows. */
static void
json_side(KmJson *j, const char *key, const km_metrics *s)
{
	if (s->n == 0)
	{
		km_json_null(j, key);
		return;
	}
	km_json_begin_object(j, key);
	km_json_num(j, "rmse", km_metrics_rmse(s));
	km_json_num(j, "mae", km_metrics_mae(s));
	km_json_num(j, "r2", km_metrics_r2(s));
	km_json_end(j);
}

static void
regression_json_scores(KmJson *j, const NamedRun *run)
{
	json_side(j, "train", &run->train_scores);
	json_side(j, "holdout", &run->test_scores);
}

static void
regression_json_compare(KmJson *j, const NamedRun *run, const Decision *d)
{
	km_json_num(j, "previous_holdout_rmse", km_metrics_rmse(&d->prev_scores));
	km_json_num(j, "new_holdout_rmse", km_metrics_rmse(&run->test_scores));
}

const NamedTask named_regression = {
	.by_passes = regression_by_passes,
	.split = regression_split,
	.score_rows = regression_score_rows,
	.score_passes = regression_score_passes,
	.plan = regression_plan,
	.target_kind = regression_target,
	.shape = regression_shape,
	.learnt = regression_learnt,
	.same_task = regression_same_task,
	.compare = regression_compare,
	.veto = regression_veto,
	.json_scores = regression_json_scores,
	.json_compare = regression_json_compare,
};
