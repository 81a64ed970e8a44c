/*
 * named_train.c - named training, the work behind kernel_model_train and
 * kernel_model_retrain (catalog_sql.c): collect the rows of the stored
 * query (catalog_query.c), split them, train, score, decide whether to
 * deploy (deploy.c), and store a version (catalog_table.c).
 *
 * Training keeps the query's rows in memory, splits them by a hash of each
 * row's values and the seed, and trains with kernel_train's own code on the
 * chosen rows, so a named model is exactly what kernel_train would give on
 * the same rows and options.  Approximate models are the exception: their
 * rows are never collected; passes over the stored query build the basis,
 * the model and its scores (passes.c: the learner over the cursor host,
 * host_cursor.c, issues 12, 23 and 28; ridge by two SQL aggregates).
 *
 * Versions of one name are serialised by the lock on the name's row of
 * kernel_model_names, taken after training, so that concurrent trainings of
 * one name overlap and then each get the next version number in turn.
 * Whatever was checked before training (the owner) is checked again under
 * that lock, where the decision to store is made.
 */
#include "postgres.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/lsyscache.h"
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
#include "kernel_fit.h"
#include "rowset.h"
#include "split.h"
#include "task.h"
#include "train.h"
#include "catalog_query.h"
#include "catalog_train.h"
#include "deploy.h"
#include "drift_named.h"
#include "named_common.h"
#include "named_task.h"
#include "named_table.h"
#include "passes.h"

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

/*
 * The options of named training only, "refit" and "keep" (retention: the
 * number of versions kept, the deployed one aside); read and strip them.
 */
static Jsonb *
take_named_options(Jsonb *options, bool *refit, int32 *keep)
{
	JsonbValue *v;

	*refit = false;
	*keep = 0;
	if (!JB_ROOT_IS_OBJECT(options))
		return options;			/* km_options_parse reports it */
	v = getKeyJsonValueFromContainer(&options->root, "refit", 5, NULL);
	if (v != NULL)
	{
		if (v->type != jbvBool)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for option \"refit\""),
					 errdetail("Option \"refit\" must be true or false.")));
		*refit = v->val.boolean;
		options = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(options),
													 CStringGetTextDatum("refit")));
	}
	v = getKeyJsonValueFromContainer(&options->root, "keep", 4, NULL);
	if (v != NULL)
	{
		double		k = v->type == jbvNumeric ?
			DatumGetFloat8(DirectFunctionCall1(numeric_float8, NumericGetDatum(v->val.numeric))) : 0.0;

		if (!(k >= 1.0 && k <= 1e6 && k == floor(k)))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for option \"keep\""),
					 errdetail("Option \"keep\" must be a whole number of versions from 1 to 1000000."),
					 errhint("Leave \"keep\" out to keep every version.")));
		*keep = (int32) k;
		options = DatumGetJsonbP(DirectFunctionCall2(jsonb_delete, JsonbPGetDatum(options),
													 CStringGetTextDatum("keep")));
	}
	return options;
}

/*
 * A digest of the rows a training read (issue 30): the same for the same
 * rows in any order (a sum over rows of two seeded 64-bit hashes of each
 * row's features and target or label), so a retrain can tell that nothing
 * changed since the version it started from.  32 hex digits.
 */
static char *
rows_digest(const RowSet *rs)
{
	Size		width = (Size) rs->d + 1;
	double	   *buf = palloc(sizeof(double) * width);
	uint64		sum1 = 0;
	uint64		sum2 = 0;

	for (int64 i = 0; i < rs->n; i++)
	{
		for (int j = 0; j < rs->d; j++)
		{
			double		x = rs->X[(Size) i * rs->d + j];

			buf[j] = x == 0.0 ? 0.0 : x;	/* -0 and 0 alike */
		}
		if (rs->label_type == KM_LABEL_TEXT)
		{
			const char *l = rs->dict + rs->dict_off[rs->label_id[i]];
			uint64		h = hash_bytes_extended((const unsigned char *) l, (int) strlen(l),
												UINT64CONST(0x4B4D4C6162656C31));

			memcpy(&buf[rs->d], &h, sizeof(double));
		}
		else
			buf[rs->d] = rs->y[i] == 0.0 ? 0.0 : rs->y[i];
		sum1 += hash_bytes_extended((const unsigned char *) buf, (int) (sizeof(double) * width),
									UINT64CONST(0x9E3779B97F4A7C15));
		sum2 += hash_bytes_extended((const unsigned char *) buf, (int) (sizeof(double) * width),
									UINT64CONST(0xC2B2AE3D27D4EB4F));
		if ((i & 0xFFFF) == 0)
			CHECK_FOR_INTERRUPTS();
	}
	pfree(buf);
	return psprintf("%016llx%016llx", (unsigned long long) sum1, (unsigned long long) sum2);
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
	run->ntest = run->task->split(rs, run->opts.seed, run->opts.test_fraction, run->order);
	run->ntrain = rs->n - run->ntest;

	km_progress_stage("fit: " INT64_FORMAT " training rows", run->ntrain);
	split_model = train_rows(rs, run->order + run->ntest, run->ntrain, &run->opts, work);
	km_metrics_init(&run->train_scores);
	km_metrics_init(&run->test_scores);
	km_progress_stage("score: " INT64_FORMAT " training and " INT64_FORMAT " held-out rows",
					  run->ntrain, run->ntest);
	run->task->score_rows(run, PointerGetDatum(split_model), work);
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
 * Lock the name and return the owner of the new version, checked under the
 * lock.  A retrain ran the query as run_as, the owner when it started, of
 * the model model_id: the name must still be that model's (a drop and a
 * new training of the name make another model, even of the same owner) and
 * still be run_as's, or nothing is stored (a drop meanwhile would otherwise
 * make the version a new name of the caller's, a new model would get a
 * version of the old one's query, and a new owner a model of the old
 * owner's rows).  A training by name stores under the name's owner now,
 * after checking the caller against it; a new name (or one dropped
 * meanwhile) becomes the caller's, as does a dropped role's name taken over
 * by a superuser.
 */
static Oid
lock_version_owner(const Catalog *cat, const char *name, Oid run_as, bool retrain,
				   int64 model_id, NameRow *nr)
{
	catalog_lock_name(cat, name, nr);
	if (retrain)
	{
		if (!nr->exists || nr->model_id != model_id || nr->owner != run_as)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("model was dropped, re-created or changed owner while it was being retrained"),
					 !nr->exists ?
					 errdetail("Model \"%s\" was dropped after its retraining had started as %s; nothing was stored.",
							   name, catalog_role_label(run_as)) :
					 nr->model_id != model_id ?
					 errdetail("Model \"%s\" was dropped and trained again after its retraining had started (model_id " INT64_FORMAT " then, " INT64_FORMAT " now); nothing was stored.",
							   name, model_id, nr->model_id) :
					 errdetail("Model \"%s\" belongs to %s now; its retraining ran the query as %s; nothing was stored.",
							   name, catalog_role_label(nr->owner), catalog_role_label(run_as)),
					 errhint("Retrain it again if it still exists: a retrain starts from the model the name has then.")));
		return run_as;
	}
	if (!nr->exists)
		catalog_claim_name(cat, name, GetUserId(), nr);
	catalog_check_owner(name, nr->owner);
	return catalog_role_exists(nr->owner) ? nr->owner : GetUserId();
}

/*
 * After the deploy decision, under the name lock: the name row and the
 * deployed version must be those the decision was made with.  The
 * comparison of an approximate model runs the stored query again (one more
 * SQL pass, under the lock, with the version number chosen), and that
 * query may call the catalog functions itself: a drop there would leave
 * the new version without a name row, a deployment make the decision
 * stale.  Nothing is stored then, and the error undoes what the query did.
 */
static void
recheck_after_decision(const Catalog *cat, const char *name, const NameRow *before,
					   const Decision *d, MemoryContext work)
{
	NameRow		now;
	Deployed	dep;

	memset(&dep, 0, sizeof(dep));
	catalog_lock_name(cat, name, &now);
	if (now.exists)
		catalog_lookup_deployed(cat, name, false, work, &dep);
	if (!now.exists || now.model_id != before->model_id || now.owner != before->owner ||
		now.last_version != before->last_version ||
		dep.found != d->prev.found || (dep.found && dep.version != d->prev.version))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("model \"%s\" was changed while its new version was compared", name),
				 errdetail(!now.exists ?
						   "The training query, run again to score the deployed version on the held-out rows, dropped the model; nothing was stored." :
						   "The training query, run again to score the deployed version on the held-out rows, trained, deployed, reassigned or re-created the model; nothing was stored."),
				 errhint("A training query must not change named models.")));
}


/*
 * What a retrain started from, as metrics->'retrain', and whether its rows
 * are those of the latest version trained with the same query and options
 * (same rows_digest): then it trained that model again, and says so.
 */
static void
json_retrain(KmJson *j, const RetrainSource *from, const char *digest)
{
	bool		unchanged = digest != NULL && from->rows_digest != NULL &&
		strcmp(digest, from->rows_digest) == 0;

	km_json_begin_object(j, "retrain");
	km_json_int(j, "from_version", from->version);
	km_json_str(j, "from", from->deployed ? "deployed" : "latest");
	km_json_str(j, "why", from->deployed ?
				"a retrain reuses the query and options of the deployed version" :
				"no version is deployed: a retrain reuses the query and options of the latest");
	if (unchanged)
		km_json_int(j, "rows_unchanged_since", from->digest_version);
	else
		km_json_null(j, "rows_unchanged_since");
	if (from->drift != NULL)
		km_json_jsonb(j, "drift", from->drift);
	km_json_end(j);
}

/* The metrics stored with the version and returned to the caller. */
static Jsonb *
metrics_json(const NamedRun *run, const Decision *d, const RetrainSource *from)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_int(&j, "rows", run->rows);
	if (run->rows_digest)
		km_json_str(&j, "rows_digest", run->rows_digest);
	else
		km_json_null(&j, "rows_digest");
	if (from != NULL)
		json_retrain(&j, from, run->rows_digest);
	km_json_int(&j, "rows_skipped", run->skipped);
	km_json_int(&j, "train_rows", run->ntrain);
	km_json_int(&j, "holdout_rows", run->ntest);
	km_json_num(&j, "test_fraction", run->opts.test_fraction);
	km_json_int(&j, "seed", run->opts.seed);
	km_json_bool(&j, "refit", run->refit && run->ntest > 0);
	km_json_str(&j, "task", km_task_name(km_method_task(run->opts.fit.method)));
	if (run->passes)
		km_json_str(&j, "split", "row_hash");
	run->task->json_scores(&j, run);
	km_json_begin_object(&j, "deploy");
	km_json_str(&j, "policy", km_deploy_name(run->opts.deploy));
	km_json_bool(&j, "deployed", d->deploy);
	km_json_str(&j, "reason", d->reason);
	if (d->prev.found)
		km_json_int(&j, "previous_version", d->prev.version);
	else
		km_json_null(&j, "previous_version");
	run->task->json_compare(&j, run, d);
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
						   (long long) rs->seen),
				 errhint("Check the query's WHERE clause and the NULLs of its columns: it must return rows with features and a target.")));
	run->rs = rs;
	run->rows = rs->n;
	run->skipped = rs->skipped;
	run->d = rs->d;
	/* the label column's kind decides (options.h): text labels svm by default */
	km_options_parse_for_label(run->optjson, &run->opts, rs->label_type == KM_LABEL_TEXT ?
							   KM_LABELS_CLASSES : KM_LABELS_NUMERIC);
	/* the task's steps (named_tasks.c) */
	run->task = named_task_of(&run->opts);
	rs->opts = run->opts;
}

/*
 * A model trained from a temporary table trains now, but its retrain in
 * another session (a pg_cron job is one) finds no such table: say so now.
 */
static void
notice_temporary_source(const char *name, const char *query, Oid run_as,
						const char *search_path)
{
	Oid			rel = catalog_query_temp_relation(query, run_as, search_path);

	if (OidIsValid(rel))
		ereport(NOTICE,
				(errmsg("model \"%s\" was trained from temporary %s \"%s\"",
						name, get_rel_relkind(rel) == RELKIND_VIEW ? "view" : "table",
						get_rel_name(rel)),
				 errdetail("It lasts only as long as this session: kernel_model_retrain('%s') in another session, such as a pg_cron job, will not find it.",
						   name),
				 errhint("Train from a regular or unlogged table, or a view over one, to retrain the model later.")));
}

/*
 * A one-column query (the features) for a method without a target
 * (kernel_fit's, task.h target false), two columns for the others.
 */
static void
check_query_target(const NamedRun *run, bool features_only)
{
	char		names[128];
	km_error	err;

	/* the training call the method's task takes (task.h), before the message of its own */
	if (km_task_check_training(km_task_lookup(km_method_task(run->opts.fit.method)),
							   !features_only, km_method_name(run->opts.fit.method),
							   run->fn, "", &err) == KM_OK)
		return;
	km_fit_method_names(names, sizeof(names));
	if (features_only && run->opts.method_default)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("training query must return two columns"),
				 errdetail("The query returns 1 column; only a method without a target (%s) is fitted on the features alone.",
						   names),
				 errhint("Give a query that yields (features float8[], target float8), or name such a method, e.g. \"method\": \"pca\".")));
	if (features_only)
		km_fit_check_method(&run->opts, "a one-column training query");
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("method \"%s\" takes no target column", km_method_name(run->opts.fit.method)),
			 errdetail("The training query returns two columns; method \"%s\" is fitted on the features alone.",
					   km_method_name(run->opts.fit.method)),
			 errhint("Give a query that yields (features float8[]).")));
}

/*
 * The model of a method without a target on every row (no split, no
 * score: kernel_fit's on these rows); kernel_model_info describes it.
 */
static void
fit_all_rows(NamedRun *run, MemoryContext work)
{
	MemoryContext old = MemoryContextSwitchTo(work);

	run->ntest = 0;
	run->ntrain = run->rs->n;
	km_metrics_init(&run->train_scores);
	km_metrics_init(&run->test_scores);
	km_progress_stage("fit: " INT64_FORMAT " rows", run->ntrain);
	run->rs->opts = run->opts;
	run->model = km_fit_rowset(run->rs, run->fn);
	MemoryContextSwitchTo(old);
}

/*
 * Train a new version of name from query and options, store it, and deploy
 * it per the policy.  The query runs as run_as with search_path (see
 * catalog_query.c), and that search_path is stored with the version for
 * the next retrain.
 */
void
catalog_train_named(const Catalog *cat, const char *name, const char *query,
					Jsonb *options, Oid run_as, const RetrainSource *from,
					const char *search_path, TrainedVersion *out)
{
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	NamedRun	run;
	Decision	decision;
	StoredVersion v;
	Oid			owner;
	NameRow		nr;
	bytea	   *drift_ref;
	bool		features_only;

	catalog_check_name(name);
	memset(&run, 0, sizeof(run));
	run.fn = "kernel_model_train";
	run.optjson = take_named_options(options, &run.refit, &run.keep);
	km_options_parse_for_label(run.optjson, &run.opts,
							   catalog_query_label_kind(query, run_as, search_path,
														&features_only));
	check_query_target(&run, features_only);

	work = AllocSetContextCreate(caller, "kernel_ml named training",
								 ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");

	/* refuse early, before the work; checked again under the lock */
	if (catalog_name_owner(cat, name, &owner))
		catalog_check_owner(name, owner);

	km_progress_begin("kernel_model_train");
	if (use_passes(&run, cat, query, run_as, search_path))
	{
		/* the query's shape is the method's (check_query_target) */
		if (!features_only)
			passes_fit_and_score(&run, work);
		else
		{
			/* a method without a target: every row, no split, no score (fit_all_rows's) */
			run.model = passes_train_every_row(&run, work);
			run.ntrain = run.rows;
			run.ntest = 0;
			km_metrics_init(&run.train_scores);
			km_metrics_init(&run.test_scores);
		}
	}
	else
	{
		km_progress_stage("split: reading the query's rows");
		collect_training_rows(&run, query, run_as, search_path, work);
		run.rows_digest = rows_digest(run.rs);
		if (!features_only)
			fit_and_score(&run, work);
		else
			fit_all_rows(&run, work);
	}
	/* a table's model keeps its columns (named_table.c) */
	run.model = km_named_table_model(query, run.model, work);
	/* the training side of the drift test, before the lock (drift_named.c) */
	drift_ref = drift_capture(&run, work);

	/* From here on, one training of this name at a time. */
	km_progress_stage("deploy: storing version and deciding");
	v.owner = lock_version_owner(cat, name, run_as, from != NULL,
								 from ? from->model_id : 0, &nr);
	v.model_id = nr.model_id;
	/* never reused: one past the highest the name has had */
	v.version = nr.last_version + 1;
	decide_deployment(cat, name, &run, work, &decision);
	recheck_after_decision(cat, name, &nr, &decision, work);
	/*
	 * Returned to the caller after SPI_finish(), which deletes the SPI
	 * procedure context that is current here: build it in the caller's.
	 */
	{
		MemoryContext spi = MemoryContextSwitchTo(caller);

		v.metrics = metrics_json(&run, &decision, from);
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
	drift_store(cat, name, v.version, drift_ref);
	if (run.keep > 0)
		(void) catalog_prune_versions(cat, name, run.keep);
	notice_temporary_source(name, query, run_as, search_path);
	km_progress_end();
	SPI_finish();
	MemoryContextDelete(work);

	out->version = v.version;
	out->deployed = decision.deploy;
	out->metrics = v.metrics;
}

/*
 * kernel_train_query(query, options): the model of every usable row the
 * query returns, as kernel_train(features, target, options) would give over
 * them, without collecting the rows of an approximate model: the learner's
 * passes run as statements over the pass aggregate (the query as the
 * caller, security-restricted, search_path pinned: catalog_query.c), so
 * parallel workers and Citus shards compute them; an exact model gathers
 * the rows, as kernel_train does.  Options of named models only (a split,
 * a deploy policy, retention, refit) are refused.  The model in the
 * caller's memory context.
 */
bytea *
catalog_train_query(const Catalog *cat, const char *query, Jsonb *options)
{
	static const char *const named_only[] = {"refit", "keep", "deploy", "test_fraction", "when", "alpha"};
	MemoryContext caller = CurrentMemoryContext;
	MemoryContext work;
	NamedRun	run;
	bool		features_only;
	Oid			run_as = GetUserId();
	char	   *search_path = catalog_search_path();
	bytea	   *out;

	if (JB_ROOT_IS_OBJECT(options))
		for (int i = 0; i < (int) lengthof(named_only); i++)
			if (getKeyJsonValueFromContainer(&options->root, named_only[i],
											 (int) strlen(named_only[i]), NULL) != NULL)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("option \"%s\" applies only to named models", named_only[i]),
						 errdetail("kernel_train_query trains one model on every usable row the query returns; it holds no rows out and stores nothing."),
						 errhint("Remove \"%s\", or train a named model with kernel_model_train(name, query, options).",
								 named_only[i])));
	memset(&run, 0, sizeof(run));
	run.fn = "kernel_train_query";
	run.optjson = options;
	km_options_parse_for_label(run.optjson, &run.opts,
							   catalog_query_label_kind(query, run_as, search_path,
														&features_only));
	check_query_target(&run, features_only);
	run.opts.test_fraction = 0.0;
	work = AllocSetContextCreate(caller, "kernel_ml query training", ALLOCSET_DEFAULT_SIZES);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	km_progress_begin("kernel_train_query");
	if (use_passes(&run, cat, query, run_as, search_path))
		run.model = passes_train_every_row(&run, work);
	else
	{
		km_progress_stage("fit: reading the query's rows");
		collect_training_rows(&run, query, run_as, search_path, work);
		if (!features_only)
		{
			/* the kernel_train aggregate's training, on every row in the query's order */
			MemoryContext old = MemoryContextSwitchTo(work);

			km_progress_stage("fit: " INT64_FORMAT " rows", run.rs->n);
			run.model = km_train_rowset(run.rs);
			MemoryContextSwitchTo(old);
		}
		else
			fit_all_rows(&run, work);
	}
	km_progress_end();
	out = (bytea *) MemoryContextAlloc(caller, VARSIZE(run.model));
	memcpy(out, run.model, VARSIZE(run.model));
	SPI_finish();
	MemoryContextDelete(work);
	return out;
}
