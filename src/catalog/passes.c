/*
 * passes.c - named approximate models trained by passes over the stored
 * query (the rows are never collected): the learner over
 * the cursor host (learn/learner.h, host_cursor.h), as kernel_train's
 * in-memory training over the memory host, for every method and task but
 * ridge (two SQL aggregates that may run in parallel); scoring by one SQL
 * statement (regression) or one scan (classifiers, passes_classify.c).
 * Still in memory (the rows collected, O(rows)): model selection by
 * another cv than k-fold and the probabilities of an approximate svm
 * (use_passes).
 */
#include "postgres.h"

#include "access/detoast.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "method.h"
#include "metrics.h"
#include "options.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "named_common.h"
#include "passes.h"
#include "passes_classify.h"
#include "host_agg.h"
#include "host_cursor.h"
#include "learn/learner.h"
#include "classify.h"
#include "lib/stringinfo.h"
#include "utils/float.h"
#include "model_bytea.h"
#include "train_paths.h"
#include "train_rows.h"
#include "repr.h"
#include "task.h"

/*
 * Named approximate regression models (issues 12, 28): the rows of the
 * stored query are never collected.  The learner asks for its passes
 * (basis, sums, Newton steps, k-fold candidates, each one scan of the
 * query by the cursor host: as run_as, security-restricted, search_path
 * pinned) over the training side of the split; then one SQL statement
 * scores the model on both sides (passes_score: an aggregate grouped by
 * side, read into km_metrics); refit: the learner again over every usable
 * row; if_better: the scoring for the deployed version over the held-out
 * rows.  The split is per row (split.h, _kernel_ml_holdout): a row is
 * held out iff the hash of its values and the seed is below test_fraction
 * * 2^64, so the held-out count is about test_fraction * rows rather than
 * exactly floor(test_fraction * rows) as the ranked split of in-memory
 * models; a k-fold fold is the same hash modulo cv.  Every row must be
 * usable by every pass: the query should return the same rows each time
 * (checked: every pass reads the rows the counting scan read); all passes
 * read the calling statement's snapshot.
 */

/* Whether this training runs as SQL passes; if so, the query is opened. */
bool
use_passes(NamedRun *run, const Catalog *cat, const char *query, Oid run_as,
		   const char *search_path)
{
	km_error	err;

	/* a basis that gathers every row is fitted where the rows are held */
	if (km_repr_basis_takes(km_repr_lookup(run->opts.approximation), run->opts.centres,
							KM_BASIS_GATHER))
		return false;
	catalog_query_open(&run->query, query, run_as, search_path);
	/* a text label column: svm by default, a regression method an error */
	if (run->query.text_label)
		km_options_parse_labels(run->optjson, &run->opts, true);
	/* rows with classes: the task's rows step (task.h) */
	run->classify = km_task_check_rows(km_task_lookup(km_method_task(run->opts.fit.method)),
									   true, &err) == KM_OK;

	/*
	 * Approximate classifiers by passes (the learner over the cursor
	 * host), model selection (k-fold) too, over folds of the row hash; the
	 * fallback in memory (src/core/learn/pipeline_approx_classify.c, as
	 * kernel_train) stays only for the probabilities an approximate svm
	 * cannot give (refused there, as before) and another cross-validation
	 * than k-fold (none today for an approximate classifier).
	 */
	if (run->classify && ((km_options_selects(&run->opts) && run->opts.cv != KM_CV_KFOLD) ||
						  (run->opts.fit.probability &&
						   km_method_get(run->opts.fit.method)->platt_probability)))
	{
		run->classify = false;
		return false;
	}
	/*
	 * A regression method fitted in the primal (svr): model selection by
	 * k-fold over folds of the row hash; another cross-validation (none
	 * today for a primal method): in memory, as kernel_train
	 */
	if (!run->classify && km_method_get(run->opts.fit.method)->primal_add != NULL &&
		km_options_selects(&run->opts) && run->opts.cv != KM_CV_KFOLD)
		return false;
	run->passes = true;
	run->schema = cat->schema;
	return true;
}

/* The parameters of every pass: $1 options or model, $2 seed, $3 fraction, $4 basis. */
typedef struct PassArgs
{
	Oid			types[4];
	Datum		values[4];
} PassArgs;

static PassArgs
pass_args(const NamedRun *run, Datum first, Oid first_type, Datum basis)
{
	PassArgs	a;

	a.types[0] = first_type;
	a.values[0] = first;
	a.types[1] = INT8OID;
	a.values[1] = Int64GetDatum(run->opts.seed);
	a.types[2] = FLOAT8OID;
	a.values[2] = Float8GetDatum(run->opts.test_fraction);
	a.types[3] = BYTEAOID;
	a.values[3] = basis;
	return a;
}

/*
 * The plan of an approximate model over n rows of d features and k
 * classes (0: regression), its sizes and lambdas checked.
 */
static void
cursor_plan(const NamedRun *run, int64 n, int d, uint32 k, km_train_plan *plan)
{
	if (!run->classify)
	{
		km_approx_plan(&run->opts, n, d, "kernel_model_train", plan);
		return;
	}
	km_train_plan_make(&run->opts, (size_t) n, d, k, plan);
	if (plan->basis_bytes == 0 || plan->basis_bytes > MaxAllocSize)
		rowset_too_large(&plan->opts, (uint32) d);
	km_check_approx_classifier(&plan->opts);
}

/*
 * A classifier's classes: the labels the counting scan met, in class order
 * (as the kernel_train aggregate orders them), their counts, and the
 * host's map from a label to its class.
 */
static void
cursor_classes(CursorHost *h, km_class_rows *c)
{
	uint32		k = (uint32) h->nlab;
	bool		text = h->target == CURSOR_TEXT_LABELS;
	uint32	   *order = palloc(sizeof(uint32) * Max(1, k));
	uint32	   *class_of = palloc(sizeof(uint32) * Max(1, k));
	void	   *work = palloc(Max(1, km_classes_sort_work_bytes(k)));
	uint64	   *counts = palloc0(sizeof(uint64) * Max(1, k));
	StringInfoData buf;

	if (text)
		km_classes_sort_text((const char *const *) h->lab_text, k, order, class_of, work);
	else
		km_classes_sort_float8(h->lab_value, k, order, class_of, work);
	initStringInfo(&buf);
	for (uint32 i = 0; i < k; i++)
	{
		const char *s = text ? h->lab_text[order[i]] : float8out_internal(h->lab_value[order[i]]);

		appendBinaryStringInfo(&buf, s, strlen(s) + 1);
		counts[i] = h->lab_count[order[i]];
	}
	if (k < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("training set has a single class"),
				 errdetail("All " INT64_FORMAT " training rows have the label \"%s\"; a classifier needs at least two classes.",
						   h->rows, buf.data),
				 errhint("Check the query's WHERE clause, or train on rows of at least two labels.")));
	memset(c, 0, sizeof(*c));
	c->k = k;
	c->labels = buf.data;
	c->labels_bytes = (uint32) buf.len;
	c->counts = (const uint64_t *) counts;
	c->label_type = text ? KM_LABEL_TEXT : KM_LABEL_FLOAT8;
	c->platt_folds = KM_PLATT_FOLDS;
	h->class_of = class_of;
}

/*
 * The model of the training rows (or every usable row) by the learner over
 * the cursor host (host_cursor.h): the rows counted in one scan (a
 * classifier's labels too), then every pass the learner asks for (basis,
 * sums, Newton steps of every class, k-fold candidates) one scan of the
 * query; the model in ctx, the rows it read in *rows.  Memory: the
 * learner's plan but for what a host holding the rows would add
 * (plan.rows_bytes), O(m^2) per class, and the host's block of rows.
 */
static bytea *
cursor_train(NamedRun *run, bool all_rows, MemoryContext ctx, int64 *rows)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml training passes",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	int			folds = km_options_selects(&run->opts) && run->opts.cv == KM_CV_KFOLD ?
		run->opts.folds : 0;
	CursorTarget target = !run->classify ? CURSOR_VALUES :
		run->query.text_label ? CURSOR_TEXT_LABELS : CURSOR_FLOAT8_LABELS;
	CursorHost	h;
	AggHost		ah;
	km_host		host;
	km_train_plan plan;
	km_train_env env;
	km_rows		shape = {0};
	km_class_rows classes;
	km_class_fit_result res;
	double	   *class_w;
	km_model	model;
	km_error	err;
	bytea	   *out;
	int			d = pass_rows_first_d(&run->query);

	/*
	 * Refused before a row is read (the length probe, one row, aside) when
	 * the passes cannot fit: the learner's plan at its largest basis (m the
	 * components, two classes: its state does not grow with the rows, which
	 * no host holds) and the host's block
	 */
	if (d > 0)
	{
		cursor_plan(run, Max(run->opts.components, 1), d, 2, &plan);
		km_check_memory(plan.approx_bytes - plan.rows_bytes +
						cursor_host_bytes(d, Max(run->opts.components, 1)),
						"kernel_model_train", false);
	}
	km_progress_stage("fit: counting the %s rows", all_rows ? "usable" : "training");
	agg_host_count(&h, &run->query, run->schema, d, target, all_rows, run->opts.seed,
				   run->opts.test_fraction, folds, tmp);
	if (h.rows == 0)
		passes_no_rows(run, h.seen, h.usable);
	if (folds > 0)
		km_check_folds(folds, h.rows, h.fold_n, KM_PASS_FOLD_RULE);
	shape.n = (size_t) h.rows;
	shape.d = h.d;
	shape.rows_skipped = (uint64) h.skipped;
	if (run->classify)
	{
		cursor_classes(&h, &classes);
		cursor_plan(run, h.rows, h.d, classes.k, &plan);
		class_w = palloc(sizeof(double) * classes.k);
		if (km_class_weights_resolve(&plan.opts.class_weight, classes.labels,
									 classes.labels_bytes, classes.k, classes.counts,
									 class_w, &err) != KM_OK)
			km_raise(&err);
		classes.class_w = class_w;
		memset(&res, 0, sizeof(res));
		classes.res = &res;
		shape.classes = &classes;
	}
	else
		cursor_plan(run, h.rows, h.d, 0, &plan);
	km_check_memory(plan.approx_bytes - plan.rows_bytes + cursor_host_bytes(h.d, h.rows),
					"kernel_model_train", false);
	host = agg_host(&ah, &h, run->schema);
	km_train_env_palloc(&env);
	km_blas_setup();
	km_progress_stage("fit: passes over the %s rows", all_rows ? "usable" : "training");
	if (km_learn(&shape, &host, &plan, &env, &model, &err) != KM_OK)
	{
		km_method_fill_hint(plan.opts.fit.method, &err);
		km_raise(&err);
	}
	if (run->classify && !res.converged)
		km_classifier_warn_not_converged(&plan.opts.fit, &res);
	if (plan.opts.fit.solver == KM_SOLVER_CG && !model.converged)
		ereport(WARNING,
				(errcode(ERRCODE_WARNING),
				 errmsg("conjugate gradient did not converge"),
				 errdetail("After %d iterations (\"max_iter\") the relative residual is above \"tol\" %g; the model is stored as it is.",
						   model.iterations, plan.opts.fit.tol),
				 errhint("Raise \"max_iter\" or \"tol\", or raise \"lambda\".")));
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
		   &model.writer_version[1], &model.writer_version[2]);
	MemoryContextSwitchTo(ctx);
	out = km_model_to_bytea(&model);
	MemoryContextSwitchTo(old);
	*rows = h.rows;
	MemoryContextDelete(tmp);
	return out;
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
 * Pass 3: the error sums of model on the held-out rows (into holdout) and,
 * unless holdout_only, on the training rows (into train) and the count of
 * rows with a NULL feature array or target (into *skipped).
 */
void
passes_score(const NamedRun *run, Datum model, bool holdout_only,
			 km_metrics *holdout, km_metrics *train, int64 *skipped)
{
	PassArgs	a = pass_args(run, model, BYTEAOID, (Datum) 0);
	char	   *sql;

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
	catalog_query_run(&run->query, sql, 3, a.types, a.values);
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
 * The passes of one named approximate training: the model of the training
 * rows, scored on both sides; with refit (and a hold-out), the model of
 * every row is the one stored.
 */
void
passes_fit_and_score(NamedRun *run, MemoryContext work)
{
	int64		fit_rows;
	bytea	   *split_model;

	/* m x m sums that cannot fit: refused before the first pass (cg: its plan, cursor_train) */
	if (run->opts.fit.solver != KM_SOLVER_CG)
		km_check_components_memory((uint32) run->opts.components, "kernel_model_train");
	split_model = cursor_train(run, false, work, &fit_rows);
	run->d = model_features(PointerGetDatum(split_model));
	if (run->classify)
	{
		passes_class_score(run, PointerGetDatum(split_model), false, &run->test_class,
						   &run->train_class, &run->skipped);
		run->ntest = (int64) run->test_class.cm.n + run->test_class.unknown;
		run->ntrain = (int64) run->train_class.cm.n + run->train_class.unknown;
	}
	else
	{
		passes_score(run, PointerGetDatum(split_model), false, &run->test_scores,
					 &run->train_scores, &run->skipped);
		run->ntest = (int64) run->test_scores.n;
		run->ntrain = (int64) run->train_scores.n;
	}
	run->rows = run->ntest + run->ntrain;
	/* the metrics and n_train describe the rows the model was fitted on */
	check_pass_rows("counting", fit_rows, "scoring",
					run->ntrain, "training");
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		/* every usable row, with the same options: the in-memory refit's */
		run->model = cursor_train(run, true, work, &fit_rows);
		check_pass_rows("scoring", run->rows, "refit", fit_rows, "usable");
	}
}

bytea *
passes_train_every_row(NamedRun *run, MemoryContext work)
{
	int64		rows;
	bytea	   *model = cursor_train(run, true, work, &rows);

	run->rows = rows;
	run->d = model_features(PointerGetDatum(model));
	return model;
}
