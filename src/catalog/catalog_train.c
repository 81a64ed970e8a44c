/*
 * catalog_train.c - named training, the work behind kernel_model_train and
 * kernel_model_retrain (catalog_sql.c): collect the rows of the stored
 * query (catalog_query.c), split them, train, score, decide whether to
 * deploy, and store a version (catalog.c).
 *
 * Training keeps the query's rows in memory, splits them by a hash of each
 * row's values and the seed, and trains with kernel_train's own code on the
 * chosen rows, so a named model is exactly what kernel_train would give on
 * the same rows and options.  Approximate regression models (issue 12) are
 * the exception: their rows are never collected; SQL passes over the
 * stored query, each of which may run in parallel, build the basis, the
 * model and its scores (see "Named approximate regression models" below).
 *
 * Versions of one name are serialised by the lock on the name's row of
 * kernel_model_names, taken after training, so that concurrent trainings of
 * one name overlap and then each get the next version number in turn.
 * Whatever was checked before training (the owner) is checked again under
 * that lock, where the decision to store is made.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "classify.h"
#include "json.h"
#include "method.h"
#include "metrics.h"
#include "model.h"
#include "options.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "split.h"
#include "train.h"
#include "catalog_query.h"
#include "catalog_train.h"

/*
 * Classification scores of a model on some rows: the counts of
 * km_class_metrics over the model's classes, log-loss when the model gives
 * probabilities, AUC for two classes.
 */
typedef struct ClassScores
{
	bool		classifier;		/* the model is a classifier */
	uint32		k;
	const char *labels;			/* the model's k labels, in class order */
	uint32		labels_bytes;
	bool		proba;			/* the model gives probabilities */
	km_class_metrics cm;		/* its confusion in the caller's context */
	double		auc;			/* binary: of p(classes[1]), else of f; NaN otherwise */
	int64		unknown;		/* rows whose label is not a class of the model */
} ClassScores;

/* One named training: its rows, the split, the model kept and its scores. */
typedef struct NamedRun
{
	km_options	opts;
	bool		refit;			/* refitted on every row after scoring */
	bool		classify;		/* a classification method */
	Jsonb	   *optjson;		/* the options without "refit" */
	bool		passes;			/* approximate regression: SQL passes, no rs */
	CatalogQuery query;			/* passes: the stored query */
	const char *schema;			/* passes: the extension's schema, quoted */
	int64		rows;			/* usable rows (both sides of the split) */
	int64		skipped;		/* rows with a NULL feature array or target */
	int			d;				/* features */
	RowSet	   *rs;				/* in memory: the rows */
	const char **row_label;		/* classify: each row's label as text */
	int64	   *order;			/* held-out rows first, then training rows */
	int64		ntest;
	int64		ntrain;
	bytea	   *model;			/* the model to store */
	km_metrics	train_scores;	/* of the model fitted on the training rows */
	km_metrics	test_scores;	/* of the same, on the held-out rows */
	ClassScores train_class;	/* classify: the same as classification scores */
	ClassScores test_class;
} NamedRun;

static int	model_features(Datum model);

/* Whether the new version is deployed, and why. */
typedef struct Decision
{
	bool		deploy;
	const char *reason;
	Deployed	prev;			/* the deployed version before this one */
	km_metrics	prev_scores;	/* its scores on the held-out rows, if compared */
	ClassScores prev_class;		/* classify: the same */
	const char *criterion;		/* classify: "log_loss" or "accuracy", if compared */
} Decision;

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
split_rows(const RowSet *rs, int64 seed, double fraction, int64 *order)
{
	int64	   *ranked = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	int64		ntest;

	km_rank_rows(rs->X, rs->y, rs->n, rs->d, seed, ranked);
	ntest = km_holdout_by_rank(ranked, rs->n, fraction, order);
	pfree(ranked);
	return ntest;
}

/*
 * The stratified split of a classifier's rows: ranked by a hash of the
 * features and the label (text: a hash of its bytes, which does not
 * depend on the other labels; float8: its value), then within each class
 * the first floor(fraction * n_c) ranks held out (split.c).
 */
static int64
split_rows_stratified(const RowSet *rs, int64 seed, double fraction,
					  int64 *order)
{
	int64	   *ranked = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);
	double	   *key = palloc_extended(mul_size(Max(1, rs->n), sizeof(double)), MCXT_ALLOC_HUGE);
	double	   *stratum = palloc_extended(mul_size(Max(1, rs->n), sizeof(double)), MCXT_ALLOC_HUGE);
	int64		ntest;

	for (int64 i = 0; i < rs->n; i++)
	{
		if (rs->label_type == KM_LABEL_TEXT)
		{
			const char *l = rs->dict + rs->dict_off[rs->label_id[i]];

			key[i] = (double) hash_bytes((const unsigned char *) l, (int) strlen(l));
			stratum[i] = (double) rs->label_id[i];
		}
		else
			key[i] = stratum[i] = rs->y[i] == 0.0 ? 0.0 : rs->y[i];
	}
	km_rank_rows(rs->X, key, rs->n, rs->d, seed, ranked);
	ntest = km_holdout_stratified(ranked, stratum, rs->n, fraction, order);
	pfree(ranked);
	pfree(key);
	pfree(stratum);
	return ntest;
}

/* Each row's label as text (float8 labels as the model stores them). */
static const char **
row_labels(const RowSet *rs)
{
	const char **out = palloc_extended(mul_size(Max(1, rs->n), sizeof(char *)), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < rs->n; i++)
		out[i] = rs->label_type == KM_LABEL_TEXT ?
			rs->dict + rs->dict_off[rs->label_id[i]] :
			float8out_internal(rs->y[i] == 0.0 ? 0.0 : rs->y[i]);
	return out;
}

/*
 * Train on the given rows, in this order, with opts: the training code of
 * the kernel_train aggregate, called directly, so the model is the one
 * kernel_train gives on exactly these rows.  The result is copied into ctx.
 */
static bytea *
train_rows(const RowSet *rs, const int64 *rows, int64 count,
		   const km_options *opts, MemoryContext ctx)
{
	int			d = rs->d;
	RowSet		sub;
	bytea	   *model;
	MemoryContext old;

	memset(&sub, 0, sizeof(sub));
	sub.ctx = CurrentMemoryContext;
	sub.opts = *opts;
	sub.d = d;
	sub.n = sub.capacity = sub.seen = count;
	sub.has_target = true;
	sub.X = palloc_extended(mul_size((Size) count, mul_size((Size) d, sizeof(double))),
							MCXT_ALLOC_HUGE);
	if (rs->label_type == KM_LABEL_TEXT)
	{
		/* the labels' dictionary is shared; every label must have rows here */
		int64	   *count_of = palloc0(sizeof(int64) * Max(1, rs->n_dict));

		sub.label_type = KM_LABEL_TEXT;
		sub.dict = rs->dict;
		sub.dict_bytes = rs->dict_bytes;
		sub.dict_off = rs->dict_off;
		sub.n_dict = rs->n_dict;
		sub.label_id = palloc_extended(mul_size((Size) Max(1, count), sizeof(uint32)),
									   MCXT_ALLOC_HUGE);
		for (int64 i = 0; i < count; i++)
		{
			sub.label_id[i] = rs->label_id[rows[i]];
			count_of[sub.label_id[i]]++;
		}
		for (uint32 id = 0; id < rs->n_dict; id++)
			if (count_of[id] == 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("no training rows left for label \"%s\"",
								rs->dict + rs->dict_off[id]),
						 errdetail("The hold-out split (test_fraction %g) took every row of the label.",
								   opts->test_fraction),
						 errhint("Lower \"test_fraction\".")));
		pfree(count_of);
	}
	else
		sub.y = palloc_extended(mul_size((Size) count, sizeof(double)), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < count; i++)
	{
		memcpy(sub.X + (Size) i * d, rs->X + (Size) rows[i] * d, sizeof(double) * d);
		if (sub.y != NULL)
			sub.y[i] = rs->y[rows[i]];
	}
	old = MemoryContextSwitchTo(ctx);
	model = km_train_rowset(&sub);
	MemoryContextSwitchTo(old);
	pfree(sub.X);
	if (sub.y != NULL)
		pfree(sub.y);
	if (sub.label_id != NULL)
		pfree(sub.label_id);
	return model;
}

/* The error measures of a model on the given rows. */
static void
score_rows(Datum model, const RowSet *rs, const int64 *rows, int64 count,
		   km_metrics *out)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml scoring",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ModelCache *mc = km_model_cache_create(tmp);
	int			d = rs->d;

	km_metrics_init(out);
	for (int64 i = 0; i < count; i++)
	{
		double		pred = km_model_cache_predict_row(mc, model,
													  rs->X + (Size) rows[i] * d, d);

		km_metrics_add(out, pred, rs->y[rows[i]]);
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/*
 * The classification scores of a model on the given rows of a classifier's
 * run; out->classifier false (and nothing else) for a regression model.
 * The confusion matrix and labels are allocated in the caller's context.
 */
static void
score_class_rows(Datum model, const NamedRun *run, const int64 *rows,
				 int64 count, ClassScores *out)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext tmp = AllocSetContextCreate(caller, "kernel_ml scoring",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	ModelCache *mc = km_model_cache_create(tmp);
	const km_model *m = km_model_cache_model(mc, model);
	const RowSet *rs = run->rs;
	int			d = rs->d;
	const km_method_ops *ops;
	km_prob_link link = KM_PROB_NONE;
	const char *hint = NULL;
	double	   *p;
	double	   *pwork;
	double	   *scores;
	bool	   *positive;
	size_t		nb = 0;
	km_error	err;

	memset(out, 0, sizeof(*out));
	out->auc = get_float8_nan();
	if (m->task != KM_TASK_CLASSIFICATION || m->n_classes < 2)
	{
		MemoryContextSwitchTo(old);
		MemoryContextDelete(tmp);
		return;
	}
	out->classifier = true;
	out->k = m->n_classes;
	out->labels = MemoryContextAlloc(caller, m->labels_bytes);
	memcpy((char *) out->labels, m->labels, m->labels_bytes);
	out->labels_bytes = m->labels_bytes;
	ops = km_method_get(m->method);
	if (ops != NULL && ops->prob_link != NULL)
		link = ops->prob_link(m->has_probability, m->multiclass, &hint);
	out->proba = link != KM_PROB_NONE;
	km_class_metrics_init(&out->cm, out->k,
						  MemoryContextAllocZero(caller, sizeof(uint64) * out->k * out->k));
	p = palloc(sizeof(double) * out->k);
	pwork = palloc(sizeof(double) * Max(1, km_classify_proba_work_doubles(out->k)));
	scores = palloc_extended(mul_size(Max(1, count), sizeof(double)), MCXT_ALLOC_HUGE);
	positive = palloc_extended(Max(1, count), MCXT_ALLOC_HUGE);

	for (int64 i = 0; i < count; i++)
	{
		int64		row = rows[i];
		int			truth = km_classes_find(out->labels, out->labels_bytes, out->k,
											run->row_label[row]);
		const double *f;
		uint32		pred;

		if (truth < 0)
		{
			out->unknown++;
			continue;
		}
		f = km_model_cache_decision(mc, model, rs->X + (Size) row * d, d);
		pred = km_classify_decide(m->multiclass, out->k, f);
		if (out->proba &&
			km_classify_proba(link, m->multiclass, out->k, f, m->prob_A,
							  m->prob_B, p, pwork, &err) != KM_OK)
			km_raise(&err);
		km_class_metrics_add(&out->cm, (uint32) truth, pred, out->proba ? p : NULL);
		if (out->k == 2)
		{
			scores[nb] = out->proba ? p[1] : f[0];
			positive[nb] = truth == 1;
			nb++;
		}
		if ((i & 1023) == 1023)
			CHECK_FOR_INTERRUPTS();
	}
	if (out->k == 2 && nb > 0)
	{
		void	   *work = palloc_extended(Max(1, km_auc_work_bytes(nb)), MCXT_ALLOC_HUGE);

		out->auc = km_auc(scores, positive, nb, work);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

/* Classification scores as a json object, or null when there were no rows. */
static void
json_class_scores(KmJson *j, const char *key, const ClassScores *s)
{
	if (!s->classifier || s->cm.n == 0)
	{
		km_json_null(j, key);
		return;
	}
	km_json_begin_object(j, key);
	km_json_num(j, "accuracy", km_class_metrics_accuracy(&s->cm));
	km_json_num(j, "balanced_accuracy", km_class_metrics_balanced_accuracy(&s->cm));
	if (s->proba)
		km_json_num(j, "log_loss", km_class_metrics_log_loss(&s->cm));
	else
		km_json_null(j, "log_loss");
	if (s->k == 2)
		km_json_num(j, "auc", s->auc);
	km_json_begin_object(j, "confusion");
	km_json_begin_array(j, "labels");
	for (uint32 c = 0; c < s->k; c++)
		km_json_str(j, NULL, km_classes_label(s->labels, s->labels_bytes, s->k, c));
	km_json_end(j);
	km_json_begin_array(j, "matrix");
	for (uint32 t = 0; t < s->k; t++)
	{
		km_json_begin_array(j, NULL);
		for (uint32 c = 0; c < s->k; c++)
			km_json_int(j, NULL, (int64) s->cm.confusion[(Size) t * s->k + c]);
		km_json_end(j);
	}
	km_json_end(j);
	km_json_end(j);
	km_json_end(j);
}

/* Scores as a json object, or null when there were no rows. */
static void
json_scores(KmJson *j, const char *key, const km_metrics *s)
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

/* The "refit" option belongs to named training only; read and strip it. */
static Jsonb *
take_refit(Jsonb *options, bool *refit)
{
	JsonbValue *v;

	*refit = false;
	if (!JB_ROOT_IS_OBJECT(options))
		return options;			/* km_options_parse reports it */
	v = getKeyJsonValueFromContainer(&options->root, "refit", 5, NULL);
	if (v == NULL)
		return options;
	if (v->type != jbvBool)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for option \"refit\""),
				 errdetail("Option \"refit\" must be true or false.")));
	*refit = v->val.boolean;
	return DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(options),
											  CStringGetTextDatum("refit")));
}

/*
 * Split the rows, fit on the training part and score it on both parts;
 * with refit (and a hold-out), fit again on every row for the stored model.
 */
static void
fit_and_score(NamedRun *run, MemoryContext work)
{
	RowSet	   *rs = run->rs;
	bytea	   *split_model;

	run->order = MemoryContextAllocExtended(work, mul_size(rs->n, sizeof(int64)),
											MCXT_ALLOC_HUGE);
	if (run->classify)
		run->ntest = split_rows_stratified(rs, run->opts.seed, run->opts.test_fraction,
										   run->order);
	else
		run->ntest = split_rows(rs, run->opts.seed, run->opts.test_fraction, run->order);
	run->ntrain = rs->n - run->ntest;

	km_progress_stage("fit: " INT64_FORMAT " training rows", run->ntrain);
	split_model = train_rows(rs, run->order + run->ntest, run->ntrain, &run->opts, work);
	km_metrics_init(&run->train_scores);
	km_metrics_init(&run->test_scores);
	km_progress_stage("score: " INT64_FORMAT " training and " INT64_FORMAT " held-out rows",
					  run->ntrain, run->ntest);
	if (run->classify)
	{
		MemoryContext old = MemoryContextSwitchTo(work);

		run->row_label = row_labels(rs);
		score_class_rows(PointerGetDatum(split_model), run, run->order + run->ntest,
						 run->ntrain, &run->train_class);
		score_class_rows(PointerGetDatum(split_model), run, run->order, run->ntest,
						 &run->test_class);
		MemoryContextSwitchTo(old);
	}
	else
	{
		score_rows(PointerGetDatum(split_model), rs, run->order + run->ntest, run->ntrain,
				   &run->train_scores);
		score_rows(PointerGetDatum(split_model), rs, run->order, run->ntest,
				   &run->test_scores);
	}
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		int64	   *all = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);

		for (int64 i = 0; i < rs->n; i++)
			all[i] = i;
		km_progress_stage("refit: all " INT64_FORMAT " rows", rs->n);
		run->model = train_rows(rs, all, rs->n, &run->opts, work);
		pfree(all);
	}
}

/*
 * Named approximate regression models (issue 12): the rows of the stored
 * query are never collected.  Each step is one SQL statement over the
 * query (catalog_query.c: as run_as, security-restricted, search_path
 * pinned), planned so that it may run in parallel:
 *   1. SELECT kernel_basis(f, options) over the training rows;
 *   2. SELECT kernel_train(f, y, options, basis) over the same rows (the
 *      basis a parameter, computed once and handed to every worker);
 *   3. the error sums of that model on both sides of the split, one
 *      aggregate grouped by side, read into km_metrics;
 *   (refit: 1 and 2 again over every row; if_better: 3 for the deployed
 *   version over the held-out rows).
 * The split is per row (split.h, _kernel_ml_holdout): a row is held out
 * iff the hash of its values and the seed is below test_fraction * 2^64,
 * so the held-out count is about test_fraction * rows rather than exactly
 * floor(test_fraction * rows) as the ranked split of in-memory models.
 * Every row must be usable by every pass: the query should return the
 * same rows each time; all passes read the calling statement's snapshot.
 */

/*
 * if_better with SQL passes: a new hold-out RMSE within this relative
 * distance of the deployed version's is a tie (summation order).
 */
#define PASSES_RMSE_TIE 1e-9

/* Whether this training runs as SQL passes; if so, the query is opened. */
static bool
use_passes(NamedRun *run, const Catalog *cat, const char *query, Oid run_as,
		   const char *search_path)
{
	if (run->opts.approximation == KM_APPROX_EXACT ||
		km_method_task(run->opts.fit.method) != KM_TASK_REGRESSION)
		return false;
	catalog_query_open(&run->query, query, run_as, search_path);
	/* text labels: a classifier (or an error), trained in memory */
	if (run->query.text_label)
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

/* The rows a pass reads: the training side of the split, or every usable row. */
static char *
pass_rows(const NamedRun *run, bool all_rows)
{
	if (all_rows)
		return pstrdup("s.f IS NOT NULL AND s.y IS NOT NULL");
	return psprintf("NOT %s._kernel_ml_holdout(s.f, s.y, $2, $3)", run->schema);
}

/*
 * The one bytea a pass returned (copied into ctx), or NULL, and the number
 * of rows it read (its second column).
 */
static bytea *
pass_result(MemoryContext ctx, int64 *rows)
{
	bool		isnull;
	Datum		v;
	MemoryContext old;
	bytea	   *out;

	if (SPI_processed != 1)
		elog(ERROR, "training pass returned " UINT64_FORMAT " rows", (uint64) SPI_processed);
	*rows = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return NULL;
	old = MemoryContextSwitchTo(ctx);
	out = DatumGetByteaPCopy(v);
	MemoryContextSwitchTo(old);
	SPI_freetuptable(SPI_tuptable);
	return out;
}

/* Why pass 1 found no row: no usable row at all, or none left to train on. */
static void
no_training_rows(const NamedRun *run) pg_attribute_noreturn();

static void
no_training_rows(const NamedRun *run)
{
	PassArgs	a = pass_args(run, (Datum) 0, INT4OID, (Datum) 0);
	bool		isnull;
	int64		seen;
	int64		usable;

	catalog_query_run(&run->query,
					  psprintf("SELECT pg_catalog.count(*), pg_catalog.count(*) "
							   "FILTER (WHERE s.f IS NOT NULL AND s.y IS NOT NULL) FROM %s",
							   run->query.source),
					  0, a.types, a.values);
	seen = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	usable = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (usable == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("training query returned no usable rows"),
				 seen == 0 ?
				 errdetail("The query returned no rows.") :
				 errdetail("All %lld rows have a null feature array or target.",
						   (long long) seen)));
	ereport(ERROR,
			(errcode(ERRCODE_NO_DATA_FOUND),
			 errmsg("no training rows left after the hold-out split"),
			 errdetail("The per-row hold-out split (test_fraction %g, seed %lld) took all %lld usable rows.",
					   run->opts.test_fraction, (long long) run->opts.seed, (long long) usable),
			 errhint("Lower \"test_fraction\" or train on more rows.")));
}

/*
 * The passes over a query must see the same rows: an error, before anything
 * is stored, when two passes counted different numbers of rows on the same
 * side of the split.
 */
static void
check_pass_rows(const char *pass_a, int64 rows_a, const char *pass_b, int64 rows_b,
				const char *side)
{
	if (rows_a == rows_b)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("training query returned different rows on different passes"),
			 errdetail("The %s pass read %lld %s rows, the %s pass %lld; an approximate model reads the query once per pass (basis, statistics, scoring, refit), and every pass must see the same rows.",
					   pass_a, (long long) rows_a, side, pass_b, (long long) rows_b),
			 errhint("Make the query repeatable: no random(), nextval() or other volatile filter; for a sample, use TABLESAMPLE ... REPEATABLE (seed).")));
}

/*
 * Passes 1 and 2: the approximate model of the training rows (or every
 * row), the two passes checked to read the same number of rows, returned in
 * *rows.
 */
static bytea *
passes_train(const NamedRun *run, bool all_rows, MemoryContext ctx, int64 *rows_read)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "kernel_ml training passes",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	char	   *rows = pass_rows(run, all_rows);
	PassArgs	a;
	bytea	   *basis;
	bytea	   *model;
	int64		basis_rows;
	int64		stats_rows;

	km_progress_stage("fit: basis pass over the %s rows", all_rows ? "usable" : "training");
	a = pass_args(run, JsonbPGetDatum(run->optjson), JSONBOID, (Datum) 0);
	catalog_query_run(&run->query,
					  psprintf("SELECT %s.kernel_basis(s.f, $1), pg_catalog.count(*) FROM %s WHERE %s",
							   run->schema, run->query.source, rows),
					  3, a.types, a.values);
	basis = pass_result(tmp, &basis_rows);
	if (basis == NULL)
		no_training_rows(run);

	km_progress_stage("fit: statistics pass over the %s rows", all_rows ? "usable" : "training");
	a = pass_args(run, JsonbPGetDatum(run->optjson), JSONBOID, PointerGetDatum(basis));
	catalog_query_run(&run->query,
					  psprintf("SELECT %s.kernel_train(s.f, s.y, $1, $4), pg_catalog.count(*) FROM %s WHERE %s",
							   run->schema, run->query.source, rows),
					  4, a.types, a.values);
	model = pass_result(ctx, &stats_rows);
	check_pass_rows("basis", basis_rows, "statistics", stats_rows,
					all_rows ? "usable" : "training");
	if (model == NULL)
		elog(ERROR, "kernel_train returned no model over the rows kernel_basis saw");
	*rows_read = stats_rows;
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
	return model;
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
static void
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
static void
passes_fit_and_score(NamedRun *run, MemoryContext work)
{
	int64		fit_rows;
	bytea	   *split_model;

	/* m x m sums that cannot fit: refused before the first pass */
	km_check_components_memory((uint32) run->opts.components, "kernel_model_train");
	split_model = passes_train(run, false, work, &fit_rows);

	run->d = model_features(PointerGetDatum(split_model));
	passes_score(run, PointerGetDatum(split_model), false, &run->test_scores,
				 &run->train_scores, &run->skipped);
	run->ntest = (int64) run->test_scores.n;
	run->ntrain = (int64) run->train_scores.n;
	run->rows = run->ntest + run->ntrain;
	/* the metrics and n_train describe the rows the model was fitted on */
	check_pass_rows("statistics", fit_rows, "scoring", run->ntrain, "training");
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		run->model = passes_train(run, true, work, &fit_rows);
		check_pass_rows("scoring", run->rows, "refit", fit_rows, "usable");
	}
}

/*
 * Lock the name and return the owner of the new version, checked under the
 * lock.  A retrain ran the query as run_as, the owner when it started: the
 * name must still exist and still be run_as's, or nothing is stored (a
 * drop meanwhile would otherwise make the version a new name of the
 * caller's, and a new owner would get a model of the old owner's rows).  A
 * training by name stores under the name's owner now, after checking the
 * caller against it; a new name (or one dropped meanwhile) becomes the
 * caller's, as does a dropped role's name taken over by a superuser.
 */
static Oid
lock_version_owner(const Catalog *cat, const char *name, Oid run_as, bool retrain,
				   NameRow *nr)
{
	catalog_lock_name(cat, name, nr);
	if (retrain)
	{
		if (!nr->exists || nr->owner != run_as)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("model was dropped or changed owner while it was being retrained"),
					 !nr->exists ?
					 errdetail("Model \"%s\" was dropped after its retraining had started as %s; nothing was stored.",
							   name, catalog_role_label(run_as)) :
					 errdetail("Model \"%s\" belongs to %s now; its retraining ran the query as %s; nothing was stored.",
							   name, catalog_role_label(nr->owner), catalog_role_label(run_as)),
					 errhint("Retrain it again if it still exists.")));
		return run_as;
	}
	if (!nr->exists)
		catalog_claim_name(cat, name, GetUserId(), nr);
	catalog_check_owner(name, nr->owner);
	return catalog_role_exists(nr->owner) ? nr->owner : GetUserId();
}

/* The shape of a stored model (its header, checked). */
static km_model_shape
stored_shape(Datum model)
{
	bytea	   *pm = (bytea *) pg_detoast_datum((struct varlena *) DatumGetPointer(model));
	km_model_shape shape;
	km_error	err;

	if (km_model_peek((const uint8 *) VARDATA_ANY(pm), VARSIZE_ANY_EXHDR(pm),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	return shape;
}

/* Whether a stored model is a classifier. */
static bool
model_is_classifier(Datum model)
{
	return stored_shape(model).n_classes > 0;
}

/* The number of features of a stored model. */
static int
model_features(Datum model)
{
	return (int) stored_shape(model).d;
}

/*
 * "if_better" between two classifiers on the same held-out rows: log-loss
 * (lower wins) when both give probabilities, else accuracy (higher wins);
 * a tie keeps the deployed version.  A deployed version that does not know
 * one of the held-out labels cannot be scored on them: the new one is
 * deployed.
 */
static void
decide_if_better_class(const NamedRun *run, Decision *d)
{
	const ClassScores *now = &run->test_class;
	const ClassScores *prev = &d->prev_class;

	score_class_rows(d->prev.model, run, run->order, run->ntest, &d->prev_class);
	if (prev->unknown > 0)
	{
		d->deploy = true;
		d->reason = "the deployed version does not know every held-out label";
	}
	else if (now->proba && prev->proba)
	{
		d->criterion = "log_loss";
		d->deploy = km_class_metrics_log_loss(&now->cm) < km_class_metrics_log_loss(&prev->cm);
		d->reason = d->deploy ? "lower hold-out log-loss than the deployed version" :
			"hold-out log-loss not lower than the deployed version's";
	}
	else
	{
		d->criterion = "accuracy";
		d->deploy = km_class_metrics_accuracy(&now->cm) > km_class_metrics_accuracy(&prev->cm);
		d->reason = d->deploy ? "higher hold-out accuracy than the deployed version" :
			"hold-out accuracy not higher than the deployed version's";
	}
}

/*
 * Whether a classifier's hold-out scores are no better than a constant
 * predictor's: balanced accuracy (the mean recall over the classes present)
 * at most 1 / classes present, which predicting any one class, the
 * majority class too, gets.
 */
static bool
no_better_than_constant(const ClassScores *s, double *bar)
{
	double		ba;
	uint32		present = 0;

	if (!s->classifier || s->cm.n == 0)
		return false;
	for (uint32 t = 0; t < s->k; t++)
		for (uint32 c = 0; c < s->k; c++)
			if (s->cm.confusion[(Size) t * s->k + c] > 0)
			{
				present++;
				break;
			}
	if (present < 2)
		return false;			/* one class held out: nothing to tell */
	*bar = 1.0 / present;
	ba = km_class_metrics_balanced_accuracy(&s->cm);
	return ba <= *bar + 1e-12;
}

/*
 * The "if_better" policy: deploy unless a deployed version of the same
 * shape scores a hold-out RMSE at least as low on the same held-out rows
 * (classifiers: decide_if_better_class).  Never compared, so deployed only
 * with "always": a change of task (regression to classification or back),
 * a change of the number of features (every scorer that sends the old
 * number would fail), and a classifier no better than a constant
 * predictor on its hold-out rows.
 */
static void
decide_if_better(const NamedRun *run, Decision *d)
{
	if (!d->prev.found)
	{
		d->deploy = true;
		d->reason = "no version was deployed";
	}
	else if (model_features(d->prev.model) != run->d)
	{
		d->deploy = false;
		d->reason = psprintf("the deployed version takes %d features, this one %d: a change of the number of features deploys only with \"always\"",
							 model_features(d->prev.model), run->d);
	}
	else if (model_is_classifier(d->prev.model) != run->classify)
	{
		d->deploy = false;
		d->reason = run->classify ?
			"the deployed version is a regression model: a change of task deploys only with \"always\"" :
			"the deployed version is a classifier: a change of task deploys only with \"always\"";
	}
	else if (run->ntest == 0)
	{
		d->deploy = false;
		d->reason = "no hold-out rows to compare on";
	}
	else if (run->classify)
		decide_if_better_class(run, d);
	else
	{
		double		bar;

		if (run->passes)
		{
			passes_score(run, d->prev.model, true, &d->prev_scores, NULL, NULL);
			check_pass_rows("scoring", run->ntest, "comparison", (int64) d->prev_scores.n,
							"held-out");
		}
		else
			score_rows(d->prev.model, run->rs, run->order, run->ntest, &d->prev_scores);
		bar = km_metrics_rmse(&d->prev_scores);

		/*
		 * SQL passes sum in the order a parallel plan gives: the same rows
		 * may score a few ulps apart.  Lower must then mean lower by more
		 * than that rounding, so a tie still keeps the deployed version.
		 */
		if (run->passes)
			bar *= 1.0 - PASSES_RMSE_TIE;
		d->deploy = km_metrics_rmse(&run->test_scores) < bar;
		d->reason = d->deploy ? "lower hold-out RMSE than the deployed version" :
			"hold-out RMSE not lower than the deployed version's";
	}
}

/*
 * if_better never deploys a classifier no better than a constant predictor
 * on its hold-out rows, whatever it was compared with.
 */
static void
decide_if_better_or_constant(const NamedRun *run, Decision *d)
{
	double		chance;

	decide_if_better(run, d);
	if (d->deploy && run->classify && run->ntest > 0 &&
		no_better_than_constant(&run->test_class, &chance))
	{
		d->deploy = false;
		d->reason = psprintf("hold-out balanced accuracy %.4f is no better than a constant predictor's (%.4f): a model no better than predicting one class deploys only with \"always\"",
							 km_class_metrics_balanced_accuracy(&run->test_class.cm), chance);
	}
}

/* Deploy or not, per the policy; SPI connected, name locked. */
static void
decide_deployment(const Catalog *cat, const char *name, const NamedRun *run,
				  MemoryContext work, Decision *d)
{
	catalog_lookup_deployed(cat, name, false, work, &d->prev);
	km_metrics_init(&d->prev_scores);
	memset(&d->prev_class, 0, sizeof(d->prev_class));
	d->criterion = NULL;
	switch (run->opts.deploy)
	{
		case KM_DEPLOY_ALWAYS:
			d->deploy = true;
			d->reason = "deploy is \"always\"";
			break;
		case KM_DEPLOY_NEVER:
			d->deploy = false;
			d->reason = "deploy is \"never\"";
			break;
		case KM_DEPLOY_IF_BETTER:
			decide_if_better_or_constant(run, d);
			break;
	}
}

/* The metrics stored with the version and returned to the caller. */
static Jsonb *
metrics_json(const NamedRun *run, const Decision *d)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_int(&j, "rows", run->rows);
	km_json_int(&j, "rows_skipped", run->skipped);
	km_json_int(&j, "train_rows", run->ntrain);
	km_json_int(&j, "holdout_rows", run->ntest);
	km_json_num(&j, "test_fraction", run->opts.test_fraction);
	km_json_int(&j, "seed", run->opts.seed);
	km_json_bool(&j, "refit", run->refit && run->ntest > 0);
	km_json_str(&j, "task", run->classify ? "classification" : "regression");
	if (run->passes)
		km_json_str(&j, "split", "row_hash");
	if (run->classify)
	{
		km_json_bool(&j, "stratified", true);
		json_class_scores(&j, "train", &run->train_class);
		json_class_scores(&j, "holdout", &run->test_class);
	}
	else
	{
		json_scores(&j, "train", &run->train_scores);
		json_scores(&j, "holdout", &run->test_scores);
	}
	km_json_begin_object(&j, "deploy");
	km_json_str(&j, "policy", km_deploy_name(run->opts.deploy));
	km_json_bool(&j, "deployed", d->deploy);
	km_json_str(&j, "reason", d->reason);
	if (d->prev.found)
		km_json_int(&j, "previous_version", d->prev.version);
	else
		km_json_null(&j, "previous_version");
	if (!run->classify)
	{
		km_json_num(&j, "previous_holdout_rmse", km_metrics_rmse(&d->prev_scores));
		km_json_num(&j, "new_holdout_rmse", km_metrics_rmse(&run->test_scores));
	}
	else if (d->criterion != NULL)
	{
		bool		ll = strcmp(d->criterion, "log_loss") == 0;

		km_json_str(&j, "criterion", d->criterion);
		km_json_num(&j, "previous_holdout",
					ll ? km_class_metrics_log_loss(&d->prev_class.cm) :
					km_class_metrics_accuracy(&d->prev_class.cm));
		km_json_num(&j, "new_holdout",
					ll ? km_class_metrics_log_loss(&run->test_class.cm) :
					km_class_metrics_accuracy(&run->test_class.cm));
	}
	else
		km_json_null(&j, "criterion");
	km_json_end(&j);
	return km_json_finish(&j);
}

/* Collect the query's rows into run->rs; an error when none is usable. */
static void
collect_training_rows(NamedRun *run, const char *query, Oid run_as,
					  const char *search_path, MemoryContext work)
{
	RowSet	   *rs = catalog_collect_rows(query, run_as, search_path, work);

	if (rs->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("training query returned no usable rows"),
				 rs->seen == 0 ?
				 errdetail("The query returned no rows.") :
				 errdetail("All %lld rows have a null feature array or target.",
						   (long long) rs->seen)));
	run->rs = rs;
	run->rows = rs->n;
	run->skipped = rs->skipped;
	run->d = rs->d;
	/* a text label column: svm by default, a regression method an error */
	if (rs->label_type == KM_LABEL_TEXT)
		km_options_parse_labels(run->optjson, &run->opts, true);
	run->classify = km_method_task(run->opts.fit.method) == KM_TASK_CLASSIFICATION;
	rs->opts = run->opts;
}

/*
 * Train a new version of name from query and options, store it, and deploy
 * it per the policy.  The query runs as run_as with search_path (see
 * catalog_query.c), and that search_path is stored with the version for
 * the next retrain.
 */
void
catalog_train_named(const Catalog *cat, const char *name, const char *query,
					Jsonb *options, Oid run_as, bool retrain,
					const char *search_path, TrainedVersion *out)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	NamedRun	run;
	Decision	decision;
	StoredVersion v;
	Oid			owner;
	NameRow		nr;

	catalog_check_name(name);
	memset(&run, 0, sizeof(run));
	run.optjson = take_refit(options, &run.refit);
	km_options_parse(run.optjson, &run.opts);

	work = AllocSetContextCreate(caller, "kernel_ml named training",
								 ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* refuse early, before the work; checked again under the lock */
	if (catalog_name_owner(cat, name, &owner))
		catalog_check_owner(name, owner);

	km_progress_begin("kernel_model_train");
	if (use_passes(&run, cat, query, run_as, search_path))
		passes_fit_and_score(&run, work);
	else
	{
		km_progress_stage("split: reading the query's rows");
		collect_training_rows(&run, query, run_as, search_path, work);
		fit_and_score(&run, work);
	}

	/* From here on, one training of this name at a time. */
	km_progress_stage("deploy: storing version and deciding");
	v.owner = lock_version_owner(cat, name, run_as, retrain, &nr);
	/* never reused: one past the highest the name has had */
	v.version = nr.last_version + 1;
	decide_deployment(cat, name, &run, work, &decision);
	/*
	 * Returned to the caller after SPI_finish(), which deletes the SPI
	 * procedure context that is current here: build it in the caller's.
	 */
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		v.metrics = metrics_json(&run, &decision);
		MemoryContextSwitchTo(spi);
	}

	v.name = name;
	v.query = query;
	v.options = options;
	v.model = run.model;
	v.n_train = (run.refit && run.ntest > 0) ? run.rows : run.ntrain;
	v.n_features = run.d;
	v.deployed = decision.deploy;
	v.search_path = search_path;
	catalog_store_version(cat, &v);
	km_progress_end();
	SPI_finish();
	MemoryContextDelete(work);

	out->version = v.version;
	out->deployed = decision.deploy;
	out->metrics = v.metrics;
}
