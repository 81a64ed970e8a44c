/*
 * classify.c - classification in SQL: kernel_train over (features, label
 * text), the classifier branch of the kernel_train final function (also
 * for float8 targets with a classification method), kernel_predict_class
 * and kernel_predict_proba.
 *
 * Classes are sorted as classify.h says (text by bytes, float8 by value).
 * Rows are put in an order given by a hash of their values and class (as
 * k-fold does for regression, train.c), so SMO's ties and the Platt folds
 * do not depend on the order rows arrive in.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "access/detoast.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "portability/instr_time.h"

#include "classify.h"
#include "classify_fit.h"
#include "host_memory.h"
#include "json.h"
#include "model.h"
#include "model_bytea.h"
#include "options.h"
#include "pipeline.h"
#include "pgutil.h"
#include "predict.h"
#include "repr.h"
#include "rowset.h"
#include "task.h"
#include "select.h"
#include "solve.h"
#include "split.h"
#include "svm.h"
#include "train_paths.h"
#include "train_rows.h"

PG_FUNCTION_INFO_V1(kernel_train_label_sfunc);
PG_FUNCTION_INFO_V1(kernel_predict_class);
PG_FUNCTION_INFO_V1(kernel_predict_proba);
PG_FUNCTION_INFO_V1(kernel_predict_proba_label);

/* kernel_train_label_sfunc(state, features, label text [, options]) */
Datum
kernel_train_label_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get_labels(fcinfo, 3, "kernel_train_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		rs->skipped++;
	else
		rowset_add_label(rs, PG_GETARG_ARRAYTYPE_P(1), PG_GETARG_TEXT_PP(2),
						 "kernel_train");
	PG_RETURN_POINTER(rs);
}

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

static bytea *train_classifier(RowSet *rs);

bytea *
km_train_classifier(RowSet *rs)
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

/* One exact classifier training in the glue: what km_train is given, and when. */
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
/* ---- scoring ---- */

/*
 * The scoring state of a call site (fn_extra): predict.c's model cache
 * (a few decoded models, recognized by their TOAST pointer, as a constant,
 * or by their bytes, each with its scorer, which gives all q decision
 * values from one kernel row), and the probabilities of a row.
 */
typedef struct ClassCache
{
	ModelCache *mc;
	KmProbBuffers pb;
} ClassCache;

static ClassCache *
class_cache(FunctionCallInfo fcinfo)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;

	if (cc == NULL)
	{
		cc = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(ClassCache));
		cc->mc = km_model_cache_for_call(fcinfo->flinfo);
		fcinfo->flinfo->fn_extra = cc;
	}
	return cc;
}

/*
 * The decoded classifier of the model argument (argument 0), decoded only
 * when the argument brings another model.
 */
static const km_model *
class_model(FunctionCallInfo fcinfo, const char *fname)
{
	ClassCache *cc = class_cache(fcinfo);
	const km_model *m = km_model_cache_model(cc->mc, PG_GETARG_DATUM(0));

	km_classifier_prepare(m, fname, fcinfo->flinfo->fn_mcxt, &cc->pb);
	return m;
}

void
km_classifier_prepare(const km_model *m, const char *fname, MemoryContext mcxt,
					  KmProbBuffers *pb)
{
	km_refuse_embedding(m, fname);
	km_model_check_verb(m, KM_VERB_CLASS, fname);
	if (m->n_classes > pb->k)
	{
		pb->p = MemoryContextAlloc(mcxt, sizeof(double) * m->n_classes);
		pb->pwork = MemoryContextAllocHuge(mcxt,
										   km_classify_proba_work_doubles(m->n_classes) * sizeof(double));
		pb->k = m->n_classes;
	}
}

/* The q decision values of a feature row with m, class_model's result. */
static const double *
decision(FunctionCallInfo fcinfo, const km_model *m, ArrayType *features)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;

	Assert(km_model_cache_model(cc->mc, PG_GETARG_DATUM(0)) == m);
	return km_model_cache_decision_array(cc->mc, features);
}

/* p (k) of a row; an error with the method's hint if the model gives none. */
static const double *
probabilities(FunctionCallInfo fcinfo, const km_model *m, const double *f)
{
	ClassCache *cc = fcinfo->flinfo->fn_extra;
	km_prob_link link = (km_prob_link) km_model_prob_link_or_raise(m);
	km_error	err;

	if (km_classify_proba(link, m->multiclass, m->n_classes, f, m->prob_A,
						  m->prob_B, cc->pb.p, cc->pb.pwork, &err) != KM_OK)
		km_raise(&err);
	return cc->pb.p;
}

const char *
km_sign_label(const km_model *m, double f)
{
	return km_task_sign_label(km_task_lookup(m->task), m->n_outputs, f);
}

/* kernel_predict_class(model bytea, features float8[]) RETURNS text */
Datum
kernel_predict_class(PG_FUNCTION_ARGS)
{
	ClassCache *cc = class_cache(fcinfo);
	const km_model *m = km_model_cache_model(cc->mc, PG_GETARG_DATUM(0));
	const double *f;
	uint32		c;

	if (km_sign_label(m, 0.0) != NULL)	/* novelty: the sign of the decision value */
	{
		f = km_model_cache_decision_array(cc->mc, PG_GETARG_ARRAYTYPE_P(1));
		PG_RETURN_TEXT_P(cstring_to_text(km_sign_label(m, f[0])));
	}
	m = class_model(fcinfo, "kernel_predict_class");
	f = decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1));
	c = km_classify_decide(m->multiclass, m->n_classes, f);

	PG_RETURN_TEXT_P(cstring_to_text(km_classes_label(m->labels, m->labels_bytes,
													  m->n_classes, c)));
}

/* kernel_predict_proba(model bytea, features float8[]) RETURNS jsonb */
Datum
kernel_predict_proba(PG_FUNCTION_ARGS)
{
	const km_model *m = class_model(fcinfo, "kernel_predict_proba");
	const double *p = probabilities(fcinfo, m, decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1)));
	KmJson		j;

	km_json_begin(&j);
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_num(&j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c), p[c]);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}

/*
 * The index of label among m's classes, or an error that names the classes;
 * by: "model" or "name", the first argument of the call the hint names.
 */
int
km_class_of_label(const km_model *m, const char *label, const char *by)
{
	int			c = km_classes_find(m->labels, m->labels_bytes, m->n_classes, label);

	if (c < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("label \"%s\" is not a class of this model", label),
				 errdetail("The model has %u classes, from \"%s\" to \"%s\".", m->n_classes,
						   km_classes_label(m->labels, m->labels_bytes, m->n_classes, 0),
						   km_classes_label(m->labels, m->labels_bytes, m->n_classes,
											m->n_classes - 1)),
				 errhint("kernel_predict_proba(%s, features) returns every class's probability.", by)));
	return c;
}

/* kernel_predict_proba(model bytea, features float8[], label text) RETURNS float8 */
Datum
kernel_predict_proba_label(PG_FUNCTION_ARGS)
{
	const km_model *m = class_model(fcinfo, "kernel_predict_proba");
	int			c = km_class_of_label(m, text_to_cstring(PG_GETARG_TEXT_PP(2)), "model");
	const double *p;

	p = probabilities(fcinfo, m, decision(fcinfo, m, PG_GETARG_ARRAYTYPE_P(1)));
	PG_RETURN_FLOAT8(p[c]);
}
