/*
 * deploy.c - the deploy policy of a named training: "always", "never", or
 * "if_better" against the deployed version on the same held-out rows.
 */
#include "postgres.h"

#include "fmgr.h"

#include "metrics.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "deploy.h"
#include "named_common.h"
#include "passes.h"
#include "passes_classify.h"

/* Whether a stored model is a classifier. */
static bool
model_is_classifier(Datum model)
{
	return model_stored_shape(model).n_classes > 0;
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
		if (run->passes)
		{
			passes_score(run, d->prev.model, true, &d->prev_scores, NULL, NULL);
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
void
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
