/*
 * catalog_train.h - named training: a new version of a named model from its
 * query and options, stored and deployed per its policy.
 */
#ifndef KM_CATALOG_TRAIN_H
#define KM_CATALOG_TRAIN_H

#include "postgres.h"

#include "utils/jsonb.h"

#include "catalog.h"

/* What a training stored. */
typedef struct TrainedVersion
{
	int32		version;
	bool		deployed;
	Jsonb	   *metrics;		/* in the caller's memory context */
} TrainedVersion;

/* What a retrain starts from (kernel_model_retrain; NULL for a training). */
typedef struct RetrainSource
{
	int64		model_id;		/* the model's identity when it started */
	int32		version;		/* the version whose query and options it reuses */
	bool		deployed;		/* that version was the deployed one */
	const char *rows_digest;	/* the rows' digest of digest_version, NULL: none */
	int32		digest_version; /* the latest version with its query and options */
	Jsonb	   *drift;			/* "when": "drifted": the test that found drift, else NULL */
} RetrainSource;

/*
 * Train a new version of name: run query as run_as with search_path
 * (stored with the version for retraining), split, train, score, decide,
 * store.  options are stored as given.  from (a retrain): run_as is the
 * name's owner and from->model_id the model's identity
 * (kernel_model_names.model_id) when the retrain started; the version is
 * stored only if both still are under the name lock; its metrics say
 * whether the rows are those from->digest_version was trained on.
 */
/* kernel_train_query(query, options): the model of every usable row (named_train.c). */
bytea	   *catalog_train_query(const Catalog *cat, const char *query, Jsonb *options);

void		catalog_train_named(const Catalog *cat, const char *name,
								const char *query, Jsonb *options, Oid run_as,
								const RetrainSource *from, const char *search_path,
								TrainedVersion *out);

#endif							/* KM_CATALOG_TRAIN_H */
