/*
 * train.c - the kernel_train aggregate.
 *
 * Rows are collected in a RowSet (rowset.c); the final function standardizes
 * them, runs model selection if asked, fits and encodes the model.
 * kernel_train can be split by parallel query (and Citus): its state
 * serializes to bytea and two states combine by appending rows.
 *
 * The result must not depend on the order rows arrive in (a parallel plan,
 * ORDER BY ... DESC, a named model's query).  The rows are put in the order
 * of a hash of each row's values and the seed (split.c) before anything is
 * computed, so that even rounding is the same: the selection table and the
 * model come out bit for bit the same.  k-fold's folds are the ranks in
 * that order modulo the folds.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "host_memory.h"
#include "model.h"
#include "model_bytea.h"
#include "options.h"
#include "pipeline.h"
#include "select.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "repr.h"
#include "rowset.h"
#include "solve.h"
#include "split.h"
#include "task.h"
#include "train.h"
#include "train_paths.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_train_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_bool_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_final);
PG_FUNCTION_INFO_V1(kernel_train_combine);
PG_FUNCTION_INFO_V1(kernel_train_serialize);
PG_FUNCTION_INFO_V1(kernel_train_deserialize);

/* kernel_train_sfunc(state, features, target [, options]) */
Datum
kernel_train_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get(fcinfo, 3, true, "kernel_train_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add(rs, PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_FLOAT8(2),
				   "kernel_train");
	PG_RETURN_POINTER(rs);
}

/*
 * kernel_train_bool_sfunc(state, features, label boolean [, options]): a
 * boolean label column is a classifier's labels, as the text 'false' and
 * 'true' (what ::text gives): kernel_predict_class returns them as text.
 */
Datum
kernel_train_bool_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get_labels(fcinfo, 3, "kernel_train_bool_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add_label(rs, PG_GETARG_ARRAYTYPE_P(1),
						 cstring_to_text(PG_GETARG_BOOL(2) ? "true" : "false"),
						 "kernel_train");
	PG_RETURN_POINTER(rs);
}

/*
 * A numeric target the regression task finds label-like (2 to 20 distinct
 * whole numbers: a 0/1 column, or an int class code such as Glass's types
 * 1..7, tasks/regression.c) trained without "method" is most likely a
 * class label: kernel_train still regresses it (the options decide the
 * task, never the data), but says how to classify instead, and how to say
 * that a regression is meant.
 */
static void
notice_binary_target(const RowSet *rs)
{
	double		lo;
	double		hi;
	uint32		k;

	if (!rs->opts.method_default || rs->label_type == KM_LABEL_TEXT)
		return;
	k = km_regression_label_like(rs->y, (size_t) rs->n, &lo, &hi);
	if (k == 0)
		return;
	if (k == 2)
		ereport(NOTICE,
				(errmsg("the target has two distinct values, %s and %s: training a regression",
						float8out_internal(lo), float8out_internal(hi)),
				 errdetail("Without \"method\", a numeric target is regressed (method \"ridge\"); kernel_predict then returns a number, not a class."),
				 errhint("To classify, add \"method\": \"svm\" (or \"logistic\") to the options, or pass the label as text, e.g. kernel_train(features, label::text).")));
	else
		ereport(NOTICE,
				(errmsg("the target has %d distinct whole values, from %s to %s: training a regression",
						(int) k, float8out_internal(lo), float8out_internal(hi)),
				 errdetail("Without \"method\", a numeric target is regressed (method \"ridge\"); kernel_predict then returns a number between the values, not a class."),
				 errhint("To classify, add \"method\": \"svm\" (or \"logistic\") to the options, or pass the label as text, e.g. kernel_train(features, label::text); to regress, add \"method\": \"ridge\", which also ends this notice.")));
}

/* One training run in the glue: what km_train is given, and when. */
typedef struct TrainGlue
{
	km_train_plan plan;
	size_t		size;			/* bytes of the encoded model */
	km_rows		rows;
	KmMemoryTimes t;			/* the memory host's env: when km_fit's workspace came */
} TrainGlue;

/*
 * Resolve the options (core), and check memory and the model's size
 * before anything is allocated.
 */
static void
plan_training(const RowSet *rs, TrainGlue *g)
{
	size_t		n = (size_t) rs->n;
	int			d = rs->d;
	km_model_shape shape;

	km_train_plan_make(&rs->opts, n, d, 0, &g->plan);
	km_check_exact_memory(km_train_memory((double) n, (double) d), "kernel_train", false);
	if (g->plan.ncand > 0)
		km_check_exact_memory(8.0 * g->plan.nsel +
						km_train_memory((double) n, (double) d) - 8.0 * n * n,
						"kernel_train model selection", false);
	shape = km_model_shape_simple(g->plan.opts.fit.method, (uint32_t) n,
								  (uint32_t) d, (uint32_t) g->plan.ncand);
	g->size = km_model_size(&shape);
	if (n > UINT32_MAX || g->size == 0 || g->plan.nwork == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for a kernel_ml model"),
				 errdetail("A model of %zu rows of %d features would exceed 1 GB.", n, d)));
	if (g->plan.ncand > 0 && g->plan.nsel == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for model selection"),
				 errdetail("%zu rows of %d features.", n, d)));
}

/* The target centred by km_train: raise here, with float8out's digits. */
static void
check_centred_target(const RowSet *rs, const km_options *opts)
{
	double		ymean;
	size_t		bad = km_train_centre(rs->y, (size_t) rs->n, opts->fit_intercept, &ymean);

	if (bad < (size_t) rs->n)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("centred target is out of range for type double precision"),
				 errdetail("The target of row %zu, %s, minus the mean target %s overflowed.",
						   bad + 1, float8out_internal(rs->y[bad]),
						   float8out_internal(ymean)),
				 errhint("Scale the target down, or set \"fit_intercept\": false.")));
}

/* The rows of rs as km_train takes them: k-fold's folds, gamma's order. */
static void
train_rows(const RowSet *rs, TrainGlue *g)
{
	km_rows    *r = &g->rows;

	r->n = (size_t) rs->n;
	r->d = rs->d;
	r->X = rs->X;
	r->y = rs->y;
	r->rows_skipped = (uint64_t) rs->skipped;
	r->fold = km_row_folds(rs, &g->plan.opts);
	r->gamma_order = km_default_gamma_pairs(&g->plan.opts, rs->X, r->n, r->d);
}

/* Where the time went: SET client_min_messages = debug1. */
static void
log_training_time(size_t n, int d, instr_time t_start, instr_time t_alloc,
				  instr_time t_fit, instr_time t_end)
{
	INSTR_TIME_SUBTRACT(t_end, t_fit);
	INSTR_TIME_SUBTRACT(t_fit, t_alloc);
	INSTR_TIME_SUBTRACT(t_alloc, t_start);
	elog(DEBUG1, "kernel_train: %zu rows, %d features: prepare and select %.3f s, "
		 "allocate %.3f s, fit, encode and free %.3f s",
		 n, d, INSTR_TIME_GET_DOUBLE(t_alloc), INSTR_TIME_GET_DOUBLE(t_fit),
		 INSTR_TIME_GET_DOUBLE(t_end));
}

/* Exact regression: plan, check, the learner over the memory host (core), encode. */
static bytea *
train_exact(RowSet *rs)
{
	TrainGlue	g;
	km_train_env env;
	MemoryContext tmp;
	MemoryContext old;
	km_model	m;
	km_model_shape shape;
	km_error	err;
	bytea	   *result;
	instr_time	t_start;
	instr_time	t_end;

	INSTR_TIME_SET_CURRENT(t_start);
	memset(&g, 0, sizeof(g));
	plan_training(rs, &g);
	check_centred_target(rs, &g.plan.opts);
	km_memory_order_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, "kernel_train");
	g.t.fit = &g.plan.opts.fit;
	km_memory_env(&env, &g.t);
	/* Everything but the result goes in a context deleted at the end. */
	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml training",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	train_rows(rs, &g);
	km_blas_setup();
	if (km_memory_train(&g.rows, &g.plan, &env, &m, &err) != KM_OK)
		km_raise(&err);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &m.writer_version[0],
		   &m.writer_version[1], &m.writer_version[2]);
	MemoryContextSwitchTo(old);
	/* the fit decides whether the model has a GP section (model.h) */
	shape = km_model_shape_of(&m);
	g.size = km_model_size(&shape);
	if (g.size == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for a kernel_ml model"),
				 errdetail("A model of %u rows of %u features would exceed 1 GB.",
						   m.n_train, m.n_features)));
	result = km_model_encode_bytea(&m, g.size);
	MemoryContextDelete(tmp);
	km_model_check_bytea(result, g.size);
	INSTR_TIME_SET_CURRENT(t_end);
	log_training_time(g.rows.n, g.rows.d, t_start, g.t.asked, g.t.got, t_end);
	return result;
}

/* Fit on the collected rows and encode the model into a new bytea. */
static bytea *
train_model_reported(RowSet *rs)
{
	const km_task_ops *task = km_task_lookup(km_method_task(rs->opts.fit.method));
	km_train_plan plan;
	km_error	err;

	if (km_task_check_training(task, true, km_method_name(rs->opts.fit.method),
							   "kernel_train", NULL, &err) != KM_OK)
		km_raise(&err);
	/* rows with classes (the task's rows step, task.h) train as classes */
	if (km_task_check_rows(task, true, &err) == KM_OK)
		return km_train_classifier(rs);	/* classify.c, approximate ones too */
	notice_binary_target(rs);
	/* the plan's road follows its representation's basis list (learn/pipeline.c) */
	km_train_plan_make(&rs->opts, (size_t) rs->n, rs->d, 0, &plan);
	if (plan.approximate)
	{
		km_memory_order_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, "kernel_train");
		return km_approx_train_rowset(rs);	/* approx.c: km_train too */
	}
	return train_exact(rs);
}

/* train_model_reported as a kernel_ml.progress training */
static bytea *
train_model(RowSet *rs)
{
	bytea	   *result;

	/* an error ends it at the end of the (sub)transaction (pgprogress.h) */
	km_progress_begin("kernel_train");
	result = train_model_reported(rs);
	km_progress_end();
	return result;
}

Datum
kernel_train_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	bytea	   *model;

	agg_context(fcinfo, "kernel_train_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	rs = (RowSet *) PG_GETARG_POINTER(0);
	rowset_check_kept(rs, "kernel_train");
	if (rs->n == 0)
	{
		km_notice_skipped(rs->skipped, 0);
		PG_RETURN_NULL();
	}
	model = train_model(rs);
	/* after the training, so that no NOTICE comes before its error */
	km_notice_skipped(rs->skipped, rs->n);
	PG_RETURN_BYTEA_P(model);
}

bytea *
km_train_rowset(RowSet *rs)
{
	rowset_check_kept(rs, "kernel_train");
	return train_model(rs);
}

/* Parallel query: the state is a RowSet (rowset.c), combined by appending. */
Datum
kernel_train_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_combine");

	PG_RETURN_POINTER(rowset_combine(aggctx,
									 PG_ARGISNULL(0) ? NULL : (RowSet *) PG_GETARG_POINTER(0),
									 PG_ARGISNULL(1) ? NULL : (RowSet *) PG_GETARG_POINTER(1),
									 "kernel_train"));
}

Datum
kernel_train_serialize(PG_FUNCTION_ARGS)
{
	agg_context(fcinfo, "kernel_train_serialize");
	PG_RETURN_BYTEA_P(rowset_serialize((RowSet *) PG_GETARG_POINTER(0)));
}

Datum
kernel_train_deserialize(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_deserialize");

	PG_RETURN_POINTER(rowset_deserialize(aggctx, PG_GETARG_BYTEA_PP(0),
											   "kernel_train"));
}
