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
#include "named_task.h"

/*
 * The "if_better" policy: deploy unless a deployed version of the same
 * shape scores at least as well on the same held-out rows, by the task's
 * comparison (named_regression.c: the RMSE; named_classification.c:
 * log-loss or accuracy).  Never compared, so deployed only
 * with "always": a change of task (regression to classification or back),
 * a change of the number of features (every scorer that sends the old
 * number would fail), and a classifier no better than a constant
 * predictor on its hold-out rows.
 */
static void
decide_if_better(const NamedRun *run, Decision *d)
{
	const char *reason;

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
	else if (!run->task->same_task(d->prev.model, &reason))
	{
		d->deploy = false;
		d->reason = reason;
	}
	else if (run->ntest == 0)
	{
		d->deploy = false;
		d->reason = "no hold-out rows to compare on";
	}
	else
		run->task->compare(run, d);
	/* a rule of the task that refuses what it would deploy (a classifier no better than a constant) */
	if (d->deploy)
		run->task->veto(run, d);
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
			decide_if_better(run, d);
			break;
	}
}
