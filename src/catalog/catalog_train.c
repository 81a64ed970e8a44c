/*
 * catalog_train.c - named training, the work behind kernel_model_train and
 * kernel_model_retrain (catalog_sql.c): collect the rows of the stored
 * query (catalog_query.c), split them, train, score, decide whether to
 * deploy, and store a version (catalog.c).
 *
 * Training keeps the query's rows in memory, splits them by a hash of each
 * row's values and the seed, and trains with kernel_train's own code on the
 * chosen rows, so a named model is exactly what kernel_train would give on
 * the same rows and options.
 *
 * Versions of one name are serialised by a transaction-level advisory lock
 * taken after training, so that concurrent trainings of one name overlap
 * and then each get the next version number in turn.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "json.h"
#include "metrics.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "split.h"
#include "train.h"
#include "catalog_query.h"
#include "catalog_train.h"

/* One named training: its rows, the split, the model kept and its scores. */
typedef struct NamedRun
{
	km_options	opts;
	bool		refit;			/* refitted on every row after scoring */
	RowSet	   *rs;
	int64	   *order;			/* held-out rows first, then training rows */
	int64		ntest;
	int64		ntrain;
	bytea	   *model;			/* the model to store */
	km_metrics	train_scores;	/* of the model fitted on the training rows */
	km_metrics	test_scores;	/* of the same, on the held-out rows */
} NamedRun;

/* Whether the new version is deployed, and why. */
typedef struct Decision
{
	bool		deploy;
	const char *reason;
	Deployed	prev;			/* the deployed version before this one */
	km_metrics	prev_scores;	/* its scores on the held-out rows, if compared */
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
	sub.y = palloc_extended(mul_size((Size) count, sizeof(double)), MCXT_ALLOC_HUGE);
	for (int64 i = 0; i < count; i++)
	{
		memcpy(sub.X + (Size) i * d, rs->X + (Size) rows[i] * d, sizeof(double) * d);
		sub.y[i] = rs->y[rows[i]];
	}
	old = MemoryContextSwitchTo(ctx);
	model = km_train_rowset(&sub);
	MemoryContextSwitchTo(old);
	pfree(sub.X);
	pfree(sub.y);
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
	run->ntest = split_rows(rs, run->opts.seed, run->opts.test_fraction, run->order);
	run->ntrain = rs->n - run->ntest;

	split_model = train_rows(rs, run->order + run->ntest, run->ntrain, &run->opts, work);
	score_rows(PointerGetDatum(split_model), rs, run->order + run->ntest, run->ntrain,
			   &run->train_scores);
	score_rows(PointerGetDatum(split_model), rs, run->order, run->ntest,
			   &run->test_scores);
	run->model = split_model;
	if (run->refit && run->ntest > 0)
	{
		int64	   *all = palloc_extended(mul_size(rs->n, sizeof(int64)), MCXT_ALLOC_HUGE);

		for (int64 i = 0; i < rs->n; i++)
			all[i] = i;
		run->model = train_rows(rs, all, rs->n, &run->opts, work);
		pfree(all);
	}
}

/*
 * The owner of the new version, checked again under the name lock: the
 * name's owner, or the caller for a new name (or a superuser taking over a
 * dropped role's name).
 */
static Oid
version_owner(const Catalog *cat, const char *name)
{
	Oid			owner;

	if (!catalog_name_owner(cat, name, &owner))
		return GetUserId();
	catalog_check_owner(name, owner);
	if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(owner)))
		return GetUserId();
	return owner;
}

/* The number of features of a stored model. */
static int
model_features(Datum model)
{
	bytea	   *pm = (bytea *) pg_detoast_datum((struct varlena *) DatumGetPointer(model));
	km_model_shape shape;
	km_error	err;

	if (km_model_peek((const uint8 *) VARDATA_ANY(pm), VARSIZE_ANY_EXHDR(pm),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	return (int) shape.d;
}

/*
 * The "if_better" policy: deploy unless a deployed version of the same
 * shape scores a hold-out RMSE at least as low on the same held-out rows.
 */
static void
decide_if_better(const NamedRun *run, Decision *d)
{
	if (!d->prev.found)
	{
		d->deploy = true;
		d->reason = "no version was deployed";
	}
	else if (model_features(d->prev.model) != run->rs->d)
	{
		d->deploy = true;
		d->reason = "the deployed version takes a different number of features";
	}
	else if (run->ntest == 0)
	{
		d->deploy = false;
		d->reason = "no hold-out rows to compare on";
	}
	else
	{
		score_rows(d->prev.model, run->rs, run->order, run->ntest, &d->prev_scores);
		d->deploy = km_metrics_rmse(&run->test_scores) < km_metrics_rmse(&d->prev_scores);
		d->reason = d->deploy ? "lower hold-out RMSE than the deployed version" :
			"hold-out RMSE not lower than the deployed version's";
	}
}

/* Deploy or not, per the policy; SPI connected, name locked. */
static void
decide_deployment(const Catalog *cat, const char *name, const NamedRun *run,
				  MemoryContext work, Decision *d)
{
	catalog_lookup_deployed(cat, name, false, work, &d->prev);
	km_metrics_init(&d->prev_scores);
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

/* The metrics stored with the version and returned to the caller. */
static Jsonb *
metrics_json(const NamedRun *run, const Decision *d)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_int(&j, "rows", run->rs->n);
	km_json_int(&j, "rows_skipped", run->rs->skipped);
	km_json_int(&j, "train_rows", run->ntrain);
	km_json_int(&j, "holdout_rows", run->ntest);
	km_json_num(&j, "test_fraction", run->opts.test_fraction);
	km_json_int(&j, "seed", run->opts.seed);
	km_json_bool(&j, "refit", run->refit && run->ntest > 0);
	json_scores(&j, "train", &run->train_scores);
	json_scores(&j, "holdout", &run->test_scores);
	km_json_begin_object(&j, "deploy");
	km_json_str(&j, "policy", km_deploy_name(run->opts.deploy));
	km_json_bool(&j, "deployed", d->deploy);
	km_json_str(&j, "reason", d->reason);
	if (d->prev.found)
		km_json_int(&j, "previous_version", d->prev.version);
	else
		km_json_null(&j, "previous_version");
	km_json_num(&j, "previous_holdout_rmse", km_metrics_rmse(&d->prev_scores));
	km_json_num(&j, "new_holdout_rmse", km_metrics_rmse(&run->test_scores));
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
}

/*
 * Train a new version of name from query and options, store it, and deploy
 * it per the policy.  The query runs as run_as with search_path (see
 * catalog_query.c), and that search_path is stored with the version for
 * the next retrain.
 */
void
catalog_train_named(const Catalog *cat, const char *name, const char *query,
					Jsonb *options, Oid run_as, const char *search_path,
					TrainedVersion *out)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	NamedRun	run;
	Decision	decision;
	StoredVersion v;
	Oid			owner;

	catalog_check_name(name);
	memset(&run, 0, sizeof(run));
	km_options_parse(take_refit(options, &run.refit), &run.opts);

	work = AllocSetContextCreate(caller, "kernel_ml named training",
								 ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* refuse early, before the work; checked again under the lock */
	if (catalog_name_owner(cat, name, &owner))
		catalog_check_owner(name, owner);

	collect_training_rows(&run, query, run_as, search_path, work);
	fit_and_score(&run, work);

	/* From here on, one training of this name at a time. */
	catalog_lock_name(name);
	v.owner = version_owner(cat, name);
	v.version = catalog_next_version(cat, name);
	decide_deployment(cat, name, &run, work, &decision);
	/* in the caller's context: returned */
	v.metrics = metrics_json(&run, &decision);

	v.name = name;
	v.query = query;
	v.options = options;
	v.model = run.model;
	v.n_train = (run.refit && run.ntest > 0) ? run.rs->n : run.ntrain;
	v.n_features = run.rs->d;
	v.deployed = decision.deploy;
	v.search_path = search_path;
	catalog_store_version(cat, &v);
	SPI_finish();
	MemoryContextDelete(work);

	out->version = v.version;
	out->deployed = decision.deploy;
	out->metrics = v.metrics;
}
