/*
 * memory_train.c - the one entry of the memory host for an aggregate's
 * rows (memory_train.h): kernel_train's final function (train.c), a
 * classifier's (float8 targets with a classification method, text and
 * boolean labels) and a named model's in-memory training
 * (km_train_rowset) hand their collected RowSet here.
 *
 * What the rows need before the learner runs, each from where it
 * belongs: the memory host's canonical order (host_memory.c: rows in the
 * order of a hash of their values and the seed, so that any input order
 * gives the same model bit for bit; k-fold's folds are the ranks in that
 * order modulo the folds), the classification task's class table and
 * class weights and the regression task's look at its target
 * (tasks/classification.c, tasks/regression.c, tasks/classify.c), and this
 * file's memory checks against kernel_ml.max_memory before anything is
 * allocated, with the errors' float8out digits; then the learner over
 * the memory host (host_memory.h km_memory_train) with the memory host's
 * env (train_rows.h km_memory_env), and the model encoded.
 */
#include "postgres.h"

#include <math.h>

#include "lib/stringinfo.h"
#include "portability/instr_time.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "classify.h"
#include "classify_fit.h"
#include "host_memory.h"
#include "memory_train.h"
#include "model.h"
#include "model_bytea.h"
#include "options.h"
#include "pipeline.h"
#include "pgutil.h"
#include "repr.h"
#include "rowset.h"
#include "select.h"
#include "solve.h"
#include "split.h"
#include "svm.h"
#include "task.h"
#include "train_rows.h"

/*
 * "solver": "cg" reads the rows once per iteration: an aggregate sees them
 * once, so it is refused there (the one-statement kernel_train, of a
 * classifier too, and the two-pass kernel_train with a basis).
 */
void
km_approx_refuse_cg(const km_options *opts, const char *what)
{
	if (opts->fit.solver == KM_SOLVER_CG)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s does not take solver \"cg\"", what),
				 errdetail("The conjugate gradient reads the rows once per iteration; an aggregate reads them once."),
				 errhint("Train by name, kernel_model_train(name, query, options), or over a query, kernel_train_query(query, options); or remove \"solver\" to solve in one pass.")));
}

/*
 * A numeric target the regression task finds label-like (2 to 20 distinct
 * whole numbers: a 0/1 column, or an int class code such as Glass's types
 * 1..7, tasks/regression.c) trained without "method" is most likely a
 * class label: kernel_train still regresses it (the options decide the
 * task, never the data), but says how to classify instead, and how to say
 * that a regression is meant.
 */
void
km_memory_notice_target(const RowSet *rs)
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

/* One exact regression over the memory host: what the learner is given, and when. */
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

static bytea *train_classifier(RowSet *rs);

/* The classes of the rows: labels in class order, cls[i], counts. */
typedef struct ClassTable
{
	uint32		k;
	char	   *labels;			/* k NUL-terminated, in class order */
	uint32		labels_bytes;
	uint64	   *counts;
	uint32	   *cls;			/* n */
} ClassTable;

/* Text labels: the task's table from the RowSet's dictionary (classify.h). */
static void
classes_from_text(const RowSet *rs, ClassTable *ct)
{
	uint32		m = rs->n_dict;
	const char **labels = palloc(sizeof(char *) * Max(1, m));

	for (uint32 id = 0; id < m; id++)
		labels[id] = rs->dict + rs->dict_off[id];
	ct->k = m;
	ct->labels = palloc(Max(1, rs->dict_bytes));
	ct->cls = palloc_extended(mul_size(Max(1, rs->n), sizeof(uint32)), MCXT_ALLOC_HUGE);
	km_classes_from_text(labels, m, rs->label_id, (size_t) rs->n, ct->labels,
						 &ct->labels_bytes, ct->cls,
						 palloc(km_classes_text_work_bytes(m)));
	Assert(ct->labels_bytes <= rs->dict_bytes);
}

/* float8 targets as labels (classify.h), stored as float8out's text. */
static void
classes_from_float8(const RowSet *rs, ClassTable *ct)
{
	double	   *v = palloc_extended(mul_size(Max(1, rs->n), sizeof(double)), MCXT_ALLOC_HUGE);
	uint32		m;
	StringInfoData buf;

	ct->cls = palloc_extended(mul_size(Max(1, rs->n), sizeof(uint32)), MCXT_ALLOC_HUGE);
	m = km_classes_from_float8(rs->y, (size_t) rs->n, v, ct->cls);
	if (m > KM_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct labels"),
				 errdetail("The float8 target has more than %d distinct values; a model may have at most %d classes.",
						   KM_MAX_CLASSES, KM_MAX_CLASSES),
				 errhint("A continuous target needs a regression method (\"ridge\" or \"lms\").")));
	initStringInfo(&buf);
	for (uint32 c = 0; c < m; c++)
	{
		char	   *s = float8out_internal(v[c]);

		appendBinaryStringInfo(&buf, s, strlen(s) + 1);
	}
	ct->k = m;
	ct->labels = buf.data;
	ct->labels_bytes = (uint32) buf.len;
}

static void
build_classes(const RowSet *rs, ClassTable *ct)
{
	if (rs->label_type == KM_LABEL_TEXT)
		classes_from_text(rs, ct);
	else
		classes_from_float8(rs, ct);
	ct->counts = palloc0(sizeof(uint64) * Max(1, ct->k));
	km_classes_count(ct->cls, (size_t) rs->n, ct->k, (uint64_t *) ct->counts);
	if (ct->k < 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("training set has a single class"),
				 errdetail("All " INT64_FORMAT " rows used have the label \"%s\"; a classifier needs at least two classes.",
						   rs->n, ct->k == 1 ? ct->labels : ""),
				 errhint("Check the query's WHERE clause, or train on rows of at least two labels.")));
}

/*
 * k-fold selection of a classifier, exact or approximate: no more folds
 * than rows (train_rows.h, the rule of every k-fold route).  The rows are
 * dealt round-robin by class then row-hash order (km_stratified_folds), so
 * that no fold is empty once there are as many rows as folds.
 */
static void
check_class_folds(const km_options *opts, size_t n)
{
	if (km_options_selects(opts) && opts->cv == KM_CV_KFOLD)
		km_check_folds(opts->folds, (int64) n, NULL, NULL);
}

/*
 * Before km_train selects a classifier: k-fold only, a workspace that
 * fits, as many rows as folds.
 */
static void
check_selection(const km_options *opts, const km_train_plan *plan, size_t n, int d)
{
	if (opts->cv != KM_CV_KFOLD)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("cv \"%s\" applies only to method \"ridge\"", km_cv_name(opts->cv)),
				 errhint("Use a number of folds, e.g. \"cv\": 5.")));
	check_class_folds(opts, n);
	if (plan->nsel == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for model selection"),
				 errdetail("%zu rows of %d features.", n, d)));
	km_check_exact_memory(8.0 * plan->nsel, "kernel_train model selection", false);
}

void
km_classifier_warn_not_converged(const km_fit_params *p, const km_class_fit_result *res)
{
	ereport(WARNING,
			(errcode(ERRCODE_WARNING),
			 errmsg("%s did not converge", km_method_name(p->method)),
			 errdetail("Solver \"%s\" stopped after %d iterations before reaching tol %g.",
					   km_solver_name(res->solver), res->iterations, p->tol),
			 errhint("Raise \"max_iter\" or \"tol\", or raise lambda.")));
}

static bytea *
train_classifier_in_context(RowSet *rs)
{
	/* everything but the result in a context deleted at the end */
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml classifier training",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	bytea	   *model = train_classifier(rs);
	bytea	   *result;

	MemoryContextSwitchTo(old);
	result = palloc_extended(VARSIZE(model), MCXT_ALLOC_HUGE);
	memcpy(result, model, VARSIZE(model));
	MemoryContextDelete(tmp);
	return result;
}

/* What an approximate classifier refuses: Platt scaling, and lambda <= 0. */
void
km_check_approx_classifier(const km_options *opts)
{
	if (km_method_get(opts->fit.method)->platt_probability && opts->fit.probability)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("approximate svm models give no probabilities"),
				 errdetail("Option \"probability\" asks for Platt scaling, which only exact svm models fit (on internal folds of the kernel matrix)."),
				 errhint("Use \"method\": \"logistic\" with the approximation for probabilities, or remove \"approximation\".")));
	for (int l = 0; l < opts->lambdas.n; l++)
		if (!(opts->lambdas.v[l] > 0.0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("approximate classifiers need lambda > 0"),
					 errdetail("Option \"lambda\" has the value %g.", opts->lambdas.v[l]),
					 errhint("The primal objective is regularised by (lambda/2) ||w||^2: give a lambda > 0 (C = 1 / (n lambda)).")));
}

/* One classifier training over the memory host: what the learner is given, and when. */
typedef struct ClassGlue
{
	km_train_plan plan;
	ClassTable	ct;
	km_class_rows c;
	km_class_fit_result res;
	km_rows		rows;
	KmMemoryTimes times;		/* the memory host's env: when the fit's workspace came */
	instr_time	t[6];
} ClassGlue;

/* Memory: the fit's workspace, the rows twice, the model. */
static void
check_classifier(const RowSet *rs, const ClassGlue *g)
{
	size_t		n = (size_t) rs->n;
	int			d = rs->d;

	if (g->plan.nwork == 0 || n > UINT32_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("training set is too large for a kernel_ml model"),
				 errdetail("%zu rows of %d features with %u classes.", n, d, g->ct.k)));
	km_check_exact_memory(8.0 * ((double) g->plan.nwork + 2.0 * n * d), "kernel_train", false);
}

/* The class weights of the options (km_class_weights_resolve), k. */
static double *
class_weights(const ClassGlue *g)
{
	double	   *class_w = palloc(sizeof(double) * g->ct.k);
	km_error	err;

	if (km_class_weights_resolve(&g->plan.opts.class_weight, g->ct.labels,
								 g->ct.labels_bytes, g->ct.k, g->ct.counts,
								 class_w, &err) != KM_OK)
		km_raise(&err);
	return class_w;
}

/* km_train's rows: X (hash order), classes, class weights, gamma's order. */
static void
classifier_rows(const RowSet *rs, ClassGlue *g, double *X, const double *class_w)
{
	km_class_rows *c = &g->c;

	g->rows.classes = c;
	g->rows.n = (size_t) rs->n;
	g->rows.d = rs->d;
	g->rows.X = X;
	g->rows.rows_skipped = (uint64) rs->skipped;
	g->rows.gamma_order = km_default_gamma_pairs(&g->plan.opts, X, g->rows.n, rs->d);
	c->X = X;
	c->k = g->ct.k;
	c->cls = g->ct.cls;
	c->labels = g->ct.labels;
	c->labels_bytes = g->ct.labels_bytes;
	c->counts = (const uint64_t *) g->ct.counts;
	c->label_type = rs->label_type;
	c->class_w = class_w;
	c->platt_folds = KM_PLATT_FOLDS;
	c->res = &g->res;
}

/* The model's writer version, then its bytes. */
static bytea *
encode_model(km_model *m)
{
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &m->writer_version[0],
		   &m->writer_version[1], &m->writer_version[2]);
	return km_model_to_bytea(m);
}

/* The learner over the memory host, then the model encoded (where the time went: DEBUG1). */
static bytea *
fit_classifier(ClassGlue *g)
{
	km_train_env env;
	km_model	m;
	km_error	err;
	bytea	   *result;
	instr_time *t = g->t;

	g->times.fit = &g->plan.opts.fit;
	km_memory_env(&env, &g->times);
	if (km_memory_train(&g->rows, &g->plan, &env, &m, &err) != KM_OK)
		km_raise(&err);
	if (!g->res.converged)
		km_classifier_warn_not_converged(&g->plan.opts.fit, &g->res);
	t[1] = g->times.asked;
	t[2] = g->times.got;
	t[3] = g->times.released;
	INSTR_TIME_SET_CURRENT(t[4]);
	result = encode_model(&m);
	INSTR_TIME_SET_CURRENT(t[5]);
	for (int i = 5; i > 0; i--)
		INSTR_TIME_SUBTRACT(t[i], t[i - 1]);
	elog(DEBUG1, "kernel_train: %s, %u classes, training accuracy %.6f, log-loss %g, %d iterations",
		 km_method_name(m.method), g->ct.k, g->res.train_accuracy,
		 g->res.train_log_loss, g->res.iterations);
	elog(DEBUG1, "kernel_train: %zu rows, %d features: prepare and select %.3f s, allocate %.3f s, "
		 "fit %.3f s, free and keep %u rows %.3f s, encode %.3f s",
		 g->rows.n, g->rows.d, INSTR_TIME_GET_DOUBLE(t[1]), INSTR_TIME_GET_DOUBLE(t[2]),
		 INSTR_TIME_GET_DOUBLE(t[3]), m.n_train, INSTR_TIME_GET_DOUBLE(t[4]),
		 INSTR_TIME_GET_DOUBLE(t[5]));
	return result;
}

/*
 * An approximate classifier's memory (refused beyond kernel_ml.max_memory)
 * and its feature cache, kept when the features take at most half of what
 * the backend's ceiling leaves free; reserved until the fit returns.
 */
static KmMemGrant *
approx_memory(ClassGlue *g, int d)
{
	const km_train_plan *plan = &g->plan;
	double		cache = plan->cache_bytes;
	KmMemGrant *grant;

	if (plan->basis_bytes == 0 || plan->basis_bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_train state is too large"),
				 errdetail("An approximate classifier of %d components of %u features is beyond %d components or 1 GB.",
						   plan->opts.components, (uint32) d, KM_APPROX_MAX_COMPONENTS),
				 errhint("Use fewer components.")));
	km_check_memory(plan->approx_bytes, "kernel_train", false);
	if (!km_memory_fits(2.0 * (plan->approx_bytes + cache)) || cache > (double) MaxAllocHugeSize)
		cache = 0.0;
	/* counted until the fit returns (or its context goes, on an error) */
	grant = km_mem_reserve(CurrentMemoryContext, plan->approx_bytes + cache,
						   "kernel_train", false);
	if (cache > 0.0)
		g->c.feature_cache = palloc_extended((Size) cache, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	return grant;
}

/* km_train_env.note: the core's lines for the debug log */
static void
note_debug(void *ctx, const char *line)
{
	elog(DEBUG1, "%s", line);
}

/*
 * An approximate classifier (pipeline_approx_classify.h): the learner over
 * the memory host (host_memory.h) on a
 * copy of the rows in hash order (as exact classifiers: the scaler's
 * moments and the Newton sums then add in the same order whatever the order
 * rows arrived in or the parallel plan) and their hashes for the basis.
 */
static bytea *
approx_classifier(RowSet *rs, ClassGlue *g)
{
	km_train_env env;
	KmMemGrant *grant;
	double	   *class_w;
	double	   *X;
	km_model	m;
	km_error	err;

	km_approx_refuse_cg(&g->plan.opts, "kernel_train");
	km_check_approx_classifier(&g->plan.opts);
	check_class_folds(&g->plan.opts, (size_t) rs->n);
	class_w = class_weights(g);
	/* the hash-ordered copy: rows, classes, and the memory host's order and keys */
	km_check_memory(8.0 * (double) rs->n * ((double) rs->d + 3.0), "kernel_train", false);
	km_memory_order_classes(rs->X, g->ct.cls, rs->n, rs->d, rs->opts.seed, &X, &g->ct.cls);
	grant = approx_memory(g, rs->d);
	classifier_rows(rs, g, X, class_w);
	g->rows.hash = km_row_hashes(X, rs->n, rs->d, (uint64) g->plan.opts.seed);
	km_train_env_palloc(&env);
	env.note = note_debug;
	km_blas_setup();
	if (km_memory_train(&g->rows, &g->plan, &env, &m, &err) != KM_OK)
		km_raise(&err);
	km_mem_release(grant);
	if (!g->res.converged)
		km_classifier_warn_not_converged(&g->plan.opts.fit, &g->res);
	return encode_model(&m);
}

static bytea *
train_classifier(RowSet *rs)
{
	ClassGlue	g;
	double	   *X;
	double	   *class_w;

	memset(&g, 0, sizeof(g));
	INSTR_TIME_SET_CURRENT(g.t[0]);
	build_classes(rs, &g.ct);
	km_train_plan_make(&rs->opts, (size_t) rs->n, rs->d, g.ct.k, &g.plan);
	if (g.plan.approximate)
		return approx_classifier(rs, &g);
	km_memory_order_classes(rs->X, g.ct.cls, rs->n, rs->d, rs->opts.seed, &X, &g.ct.cls);
	check_classifier(rs, &g);
	class_w = class_weights(&g);
	if (km_options_selects(&g.plan.opts))
		check_selection(&g.plan.opts, &g.plan, (size_t) rs->n, rs->d);
	classifier_rows(rs, &g, X, class_w);
	return fit_classifier(&g);
}

/* An approximate ridge's lambdas: at most KM_APPROX_MAX_LAMBDAS, each > 0. */
void
km_approx_check_lambdas(const km_options *opts)
{
	if (opts->lambdas.n > KM_APPROX_MAX_LAMBDAS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("too many lambdas for an approximate model"),
				 errdetail("Option \"lambda\" has %d candidates; at most %d may be given.",
						   opts->lambdas.n, KM_APPROX_MAX_LAMBDAS)));
	for (int i = 0; i < opts->lambdas.n; i++)
		if (!(opts->lambdas.v[i] > 0.0))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("approximate models need lambda > 0"),
					 errdetail("Option \"lambda\" has the value %g.", opts->lambdas.v[i]),
					 errhint("The m x m system is regularised by lambda K_mm: give a lambda > 0.")));
}

/*
 * What a memory refusal of plan hints to use fewer of (km_check_memory_fewer):
 * rows (NULL), but for "solver": "cg" the m x m factors' "components",
 * unless the rows' copy in memory is the most of it.
 */
static const char *
memory_fewer(const km_train_plan *plan)
{
	if (plan->opts.fit.solver != KM_SOLVER_CG)
		return NULL;
	return 2.0 * plan->rows_bytes < plan->approx_bytes ? KM_FEWER_CG_COMPONENTS :
		"fewer rows or fewer \"components\"";
}

/*
 * The one-statement form, kernel_train(f, y, '{"approximation": ...}'),
 * for every regression method (ridge's sums, a primal method's Newton
 * passes): sizes and options checked before anything is allocated (the
 * plan), the rows' hashes for the basis pass, then the learner over the
 * memory host (host_memory.h), on rows in the memory host's order.
 * km_approx_plan: the named path's too (src/catalog/passes.c, over the
 * cursor host) and kernel_fit's.
 */
void
km_approx_plan(const km_options *opts, int64 n, int d, const char *caller,
			   km_train_plan *plan)
{
	km_train_plan_make(opts, (size_t) n, d, 0, plan);
	if (plan->basis_bytes == 0 || plan->basis_bytes > MaxAllocSize)
		rowset_too_large(&plan->opts, (uint32) d);
	km_check_memory_fewer(plan->approx_bytes, caller, false, memory_fewer(plan));
	if (km_method_get(plan->opts.fit.method)->primal_add == NULL)
		km_approx_check_lambdas(&plan->opts);	/* ridge's grid: what the solve takes */
}

bytea *
km_memory_fit(RowSet *rs, const km_train_plan *plan)
{
	km_train_env env;
	km_rows		rows = {0};
	km_model	model;
	km_error	err;
	MemoryContext tmp;
	MemoryContext old;
	bytea	   *out;

	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml training in memory",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	rows.n = (size_t) rs->n;
	rows.d = rs->d;
	rows.X = rs->X;
	rows.y = rs->y;
	rows.rows_skipped = (uint64) rs->skipped;
	if (plan->approximate)		/* the basis samples rows by their hashes */
		rows.hash = km_row_hashes(rs->X, rs->n, rs->d, (uint64) plan->opts.seed);
	rows.fold = km_row_folds(rs, &plan->opts);	/* a primal method's k-fold */
	km_train_env_palloc(&env);
	km_blas_setup();
	if (km_memory_train(&rows, plan, &env, &model, &err) != KM_OK)
		km_raise(&err);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
		   &model.writer_version[1], &model.writer_version[2]);
	MemoryContextSwitchTo(old);
	out = km_model_to_bytea(&model);
	MemoryContextDelete(tmp);
	return out;
}

static bytea *
train_approx(RowSet *rs)
{
	km_train_plan plan;

	km_approx_refuse_cg(&rs->opts, "kernel_train");
	km_approx_plan(&rs->opts, rs->n, rs->d, "kernel_train", &plan);
	return km_memory_fit(rs, &plan);
}

bytea *
km_memory_train_rowset(RowSet *rs)
{
	const km_task_ops *task = km_task_lookup(km_method_task(rs->opts.fit.method));
	km_train_plan plan;
	km_error	err;

	if (km_task_check_training(task, true, km_method_name(rs->opts.fit.method),
							   "kernel_train", NULL, &err) != KM_OK)
		km_raise(&err);
	/* rows with classes (the task's rows step, task.h) train as classes */
	if (km_task_check_rows(task, true, &err) == KM_OK)
		return train_classifier_in_context(rs);	/* approximate ones too */
	km_memory_notice_target(rs);
	/* the plan's road follows its representation's basis list (learn/pipeline.c) */
	km_train_plan_make(&rs->opts, (size_t) rs->n, rs->d, 0, &plan);
	if (plan.approximate)
	{
		km_memory_order_rows(rs->X, rs->y, rs->n, rs->d, rs->opts.seed, "kernel_train");
		return train_approx(rs);
	}
	return train_exact(rs);
}
