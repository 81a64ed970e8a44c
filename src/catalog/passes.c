/*
 * passes.c - named approximate models trained by passes over the stored
 * query (the rows are never collected): the learner over
 * the cursor host (learn/learner.h, host_cursor.h), as kernel_train's
 * in-memory training over the memory host, for every method and task but
 * ridge (two SQL aggregates that may run in parallel); the scoring, the
 * plan and the classes are the task's steps (named_regression.c,
 * named_classification.c).
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
#include "named_task.h"
#include "passes.h"
#include "host_agg.h"
#include "host_cursor.h"
#include "learn/learner.h"
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
 * pinned) over the training side of the split; then the task's scoring
 * passes score the model on both sides; refit: the learner again over every usable
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
	/* a basis that gathers every row is fitted where the rows are held */
	if (km_repr_basis_takes(km_repr_lookup(run->opts.approximation), run->opts.centres,
							KM_BASIS_GATHER))
		return false;
	catalog_query_open(&run->query, query, run_as, search_path);
	run->query.fn = run->fn;
	/* a text label column: svm by default, a regression method an error */
	if (run->query.text_label)
		km_options_parse_labels(run->optjson, &run->opts, true);
	/* the task's steps (named_tasks.c), and whether they run by passes */
	run->task = named_task_of(&run->opts);
	if (!run->task->by_passes(run))
		return false;
	run->passes = true;
	run->schema = cat->schema;
	return true;
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
	CursorTarget target = run->task->target_kind(run);
	CursorHost	h;
	AggHost		ah;
	km_host		host;
	km_train_plan plan;
	km_train_env env;
	km_rows		shape = {0};
	km_model	model;
	km_error	err;
	bytea	   *out;
	int			d = pass_rows_first_d(&run->query);

	/* the rows stay in the table: cg's size is its m x m factors, the others' their rows' */
	const char *fewer = run->opts.fit.solver == KM_SOLVER_CG ? KM_FEWER_CG_COMPONENTS : NULL;

	/*
	 * Refused before a row is read (the length probe, one row, aside) when
	 * the passes cannot fit: the learner's plan at its largest basis (m the
	 * components, two classes: its state does not grow with the rows, which
	 * no host holds) and the host's block
	 */
	if (d > 0)
	{
		run->task->plan(run, Max(run->opts.components, 1), d, 2, &plan);
		km_check_memory_fewer(plan.approx_bytes - plan.rows_bytes +
							  cursor_host_bytes(d, Max(run->opts.components, 1)),
							  run->fn, false, fewer);
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
	run->task->shape(run, &h, &shape, &plan);
	km_check_memory_fewer(plan.approx_bytes - plan.rows_bytes + cursor_host_bytes(h.d, h.rows),
						  run->fn, false, fewer);
	host = agg_host(&ah, &h, run->schema);
	km_train_env_palloc(&env);
	km_blas_setup();
	km_progress_stage("fit: passes over the %s rows", all_rows ? "usable" : "training");
	if (km_learn(&shape, &host, &plan, &env, &model, &err) != KM_OK)
	{
		km_method_fill_hint(plan.opts.fit.method, &err);
		km_raise(&err);
	}
	run->task->learnt(run, &shape, &plan);
	/* a classifier's own warning (its task's learnt) names the solver and its stop */
	if (plan.opts.fit.solver == KM_SOLVER_CG && !model.converged && shape.classes == NULL)
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
		km_check_components_memory((uint32) run->opts.components, run->fn);
	split_model = cursor_train(run, false, work, &fit_rows);
	run->d = model_features(PointerGetDatum(split_model));
	run->task->score_passes(run, PointerGetDatum(split_model));
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
