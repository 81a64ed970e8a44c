/*
 * named_classification.c - the classification task's steps in a named
 * training (named_common.h NamedTask): a split stratified by label, the
 * classification scores in memory and by the scoring passes
 * (passes_classify.c), the classes the counting scan met, and "if_better"
 * by log-loss or accuracy, never deploying a model no better than a
 * constant predictor.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "classify.h"
#include "memory_train.h"
#include "method.h"
#include "metrics.h"
#include "options.h"
#include "rowset.h"
#include "split.h"
#include "train_paths.h"
#include "train_rows.h"
#include "named_common.h"
#include "named_task.h"
#include "passes_classify.h"

/* Whether a model stored is a classifier. */
static bool
is_classifier(Datum model)
{
	return model_stored_shape(model).n_classes > 0;
}

/*
 * Approximate classifiers by passes (the learner over the aggregate host),
 * model selection (k-fold) too, over folds of the row hash; in memory
 * (src/core/learn/pipeline_approx_classify.c, as kernel_train) only the
 * probabilities an approximate svm cannot give (refused there, as before)
 * and another cross-validation than k-fold (none today for an approximate
 * classifier).
 */
static bool
class_by_passes(const NamedRun *run)
{
	return !((km_options_selects(&run->opts) && run->opts.cv != KM_CV_KFOLD) ||
			 (run->opts.fit.probability &&
			  km_method_get(run->opts.fit.method)->platt_probability));
}

/*
 * The stratified split of a classifier's rows: ranked by a hash of the
 * features and the label (text: a hash of its bytes, which does not
 * depend on the other labels; float8: its value), then within each class
 * the first floor(fraction * n_c) ranks held out (split.c).
 */
static int64
class_split(const RowSet *rs, int64 seed, double fraction, int64 *order)
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

static void
class_score_rows(NamedRun *run, Datum model, MemoryContext work)
{
	MemoryContext old = MemoryContextSwitchTo(work);

	run->row_label = row_labels(run->rs);
	score_class_rows(model, run, run->order + run->ntest, run->ntrain, &run->train_class);
	score_class_rows(model, run, run->order, run->ntest, &run->test_class);
	MemoryContextSwitchTo(old);
}

static void
class_score_passes(NamedRun *run, Datum model)
{
	passes_class_score(run, model, false, &run->test_class, &run->train_class, &run->skipped);
	run->ntest = (int64) run->test_class.cm.n + run->test_class.unknown;
	run->ntrain = (int64) run->train_class.cm.n + run->train_class.unknown;
}

/* The plan of an approximate classifier over n rows of d features and k classes, checked. */
static void
class_plan(const NamedRun *run, int64 n, int d, uint32 k, km_train_plan *plan)
{
	km_train_plan_make(&run->opts, (size_t) n, d, k, plan);
	if (plan->basis_bytes == 0 || plan->basis_bytes > MaxAllocSize)
		rowset_too_large(&plan->opts, (uint32) d);
	km_check_approx_classifier(&plan->opts);
}

static CursorTarget
class_target(const NamedRun *run)
{
	return run->query.text_label ? CURSOR_TEXT_LABELS : CURSOR_FLOAT8_LABELS;
}

/*
 * A classifier's classes: the labels the counting scan met, in class order
 * (as the kernel_train aggregate orders them), their counts, their
 * weights, and the host's map from a label to its class; then the plan
 * over k classes.
 */
static void
class_shape(const NamedRun *run, CursorHost *h, km_rows *shape, km_train_plan *plan)
{
	uint32		k = (uint32) h->nlab;
	bool		text = h->target == CURSOR_TEXT_LABELS;
	uint32	   *order = palloc(sizeof(uint32) * Max(1, k));
	uint32	   *class_of = palloc(sizeof(uint32) * Max(1, k));
	void	   *work = palloc(Max(1, km_classes_sort_work_bytes(k)));
	uint64	   *counts = palloc0(sizeof(uint64) * Max(1, k));
	km_class_rows *c = palloc0(sizeof(km_class_rows));
	km_class_fit_result *res = palloc0(sizeof(km_class_fit_result));
	double	   *class_w;
	StringInfoData buf;
	km_error	err;

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
	c->k = k;
	c->labels = buf.data;
	c->labels_bytes = (uint32) buf.len;
	c->counts = (const uint64_t *) counts;
	c->label_type = text ? KM_LABEL_TEXT : KM_LABEL_FLOAT8;
	c->platt_folds = KM_PLATT_FOLDS;
	h->class_of = class_of;

	class_plan(run, h->rows, h->d, k, plan);
	class_w = palloc(sizeof(double) * k);
	if (km_class_weights_resolve(&plan->opts.class_weight, c->labels, c->labels_bytes, k,
								 c->counts, class_w, &err) != KM_OK)
		km_raise(&err);
	c->class_w = class_w;
	c->res = res;
	shape->classes = c;
}

static void
class_learnt(const NamedRun *run, const km_rows *shape, const km_train_plan *plan)
{
	if (!shape->classes->res->converged)
		km_classifier_warn_not_converged(&plan->opts.fit, shape->classes->res);
}

static bool
class_same_task(Datum deployed, const char **reason)
{
	if (is_classifier(deployed))
		return true;
	*reason = "the deployed version is a regression model: a change of task deploys only with \"always\"";
	return false;
}

/*
 * "if_better" between two classifiers on the same held-out rows: log-loss
 * (lower wins) when both give probabilities, else accuracy (higher wins);
 * a tie keeps the deployed version.  A deployed version that does not know
 * one of the held-out labels cannot be scored on them: the new one is
 * deployed.
 */
static void
class_compare(const NamedRun *run, Decision *d)
{
	const ClassScores *now = &run->test_class;
	const ClassScores *prev = &d->prev_class;

	if (run->passes)
	{
		passes_class_score(run, d->prev.model, true, &d->prev_class, NULL, NULL);
		check_pass_rows("scoring", run->ntest, "comparison",
						(int64) prev->cm.n + prev->unknown, "held-out");
	}
	else
		score_class_rows(d->prev.model, run, run->order, run->ntest, &d->prev_class);
	if (prev->unknown > 0)
	{
		d->deploy = true;
		d->reason = "the deployed version does not know every held-out label";
	}
	else if (now->proba && prev->proba)
	{
		d->criterion = "log_loss";
		d->deploy = score_better(km_class_metrics_log_loss(&now->cm),
								 km_class_metrics_log_loss(&prev->cm), true);
		d->reason = d->deploy ? "lower hold-out log-loss than the deployed version" :
			"hold-out log-loss not lower than the deployed version's";
	}
	else
	{
		d->criterion = "accuracy";
		d->deploy = score_better(km_class_metrics_accuracy(&now->cm),
								 km_class_metrics_accuracy(&prev->cm), false);
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
	return !score_better(ba, *bar, false);
}

/*
 * "if_better" never deploys a classifier no better than a constant
 * predictor on its hold-out rows, whatever it was compared with.
 */
static void
class_veto(const NamedRun *run, Decision *d)
{
	double		chance;

	if (run->ntest > 0 && no_better_than_constant(&run->test_class, &chance))
	{
		d->deploy = false;
		d->reason = psprintf("hold-out balanced accuracy %.4f is no better than a constant predictor's (%.4f): a model no better than predicting one class deploys only with \"always\"",
							 km_class_metrics_balanced_accuracy(&run->test_class.cm), chance);
	}
}

/* Classification scores as a json object, or null when there were no rows. */
static void
json_side(KmJson *j, const char *key, const ClassScores *s)
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

static void
class_json_scores(KmJson *j, const NamedRun *run)
{
	km_json_bool(j, "stratified", !run->passes);
	json_side(j, "train", &run->train_class);
	json_side(j, "holdout", &run->test_class);
}

static void
class_json_compare(KmJson *j, const NamedRun *run, const Decision *d)
{
	bool		ll;

	if (d->criterion == NULL)
	{
		km_json_null(j, "criterion");
		return;
	}
	ll = strcmp(d->criterion, "log_loss") == 0;
	km_json_str(j, "criterion", d->criterion);
	km_json_num(j, "previous_holdout",
				ll ? km_class_metrics_log_loss(&d->prev_class.cm) :
				km_class_metrics_accuracy(&d->prev_class.cm));
	km_json_num(j, "new_holdout",
				ll ? km_class_metrics_log_loss(&run->test_class.cm) :
				km_class_metrics_accuracy(&run->test_class.cm));
}

const NamedTask named_classification = {
	.by_passes = class_by_passes,
	.split = class_split,
	.score_rows = class_score_rows,
	.score_passes = class_score_passes,
	.plan = class_plan,
	.target_kind = class_target,
	.shape = class_shape,
	.learnt = class_learnt,
	.same_task = class_same_task,
	.compare = class_compare,
	.veto = class_veto,
	.json_scores = class_json_scores,
	.json_compare = class_json_compare,
};
