/*
 * catalog_table.h - the rows of the catalog's tables (kernel_model_names,
 * kernel_models: sql/kernel_ml.sql), read and written in one place
 * (catalog_table.c), as pg_cron keeps job_metadata.c apart from its
 * scheduler.  Column numbers are named (Anum_*); every read returns a
 * struct per row.  The statements run as the table's owner with
 * search_path pinned (catalog_owner.c's catalog_elevate), every name
 * qualified.  struct Catalog and struct Deployed: catalog_owner.h.
 */
#ifndef KM_CATALOG_TABLE_H
#define KM_CATALOG_TABLE_H

#include "postgres.h"

#include "utils/jsonb.h"

struct Catalog;
struct Deployed;

/* kernel_model_names: one row per name. */
#define Natts_kernel_model_names				6
#define Anum_kernel_model_names_name			1
#define Anum_kernel_model_names_owner			2
#define Anum_kernel_model_names_owner_name		3
#define Anum_kernel_model_names_last_version	4
#define Anum_kernel_model_names_model_id		5
#define Anum_kernel_model_names_owner_role		6	/* owner again, as dumped */

/* kernel_models: one row per version. */
#define Natts_kernel_models						12
#define Anum_kernel_models_name					1
#define Anum_kernel_models_version				2
#define Anum_kernel_models_created_at			3
#define Anum_kernel_models_owner				4
#define Anum_kernel_models_source_query			5
#define Anum_kernel_models_options				6
#define Anum_kernel_models_model				7
#define Anum_kernel_models_metrics				8
#define Anum_kernel_models_n_train				9
#define Anum_kernel_models_n_features			10
#define Anum_kernel_models_deployed				11
#define Anum_kernel_models_search_path			12

/* A name's row of kernel_model_names, as locked. */
typedef struct NameRow
{
	bool		exists;
	Oid			owner;
	int32		last_version;	/* the highest version the name has had */
	int64		model_id;		/* the model's identity: new when the name is */
} NameRow;

/*
 * A version's row of kernel_models as read back: the owner is the name's
 * (kernel_model_names.owner; a legacy catalog's per-version owner), not
 * the owner_name text column.
 */
typedef struct ModelRow
{
	Oid			owner;
	int64		model_id;		/* kernel_model_names.model_id, same snapshot */
	int32		version;
	char	   *source_query;
	Jsonb	   *options;		/* detoasted in the caller's context */
	char	   *search_path;	/* NULL: stored by 0.1.0 */
	bool		deployed;
	/*
	 * The rows digest of the latest version with the same query, options
	 * and search_path (this one or a later retrain of it), and its number;
	 * NULL: none recorded.
	 */
	char	   *rows_digest;
	int32		digest_version;
} ModelRow;

/* A version to store. */
typedef struct StoredVersion
{
	const char *name;
	int32		version;
	int64		model_id;		/* the name row stored into: must still be it */
	Oid			owner;
	const char *query;
	Jsonb	   *options;		/* as given, "refit" included */
	bytea	   *model;
	Jsonb	   *metrics;
	int64		n_train;		/* rows the stored model was fitted on */
	int32		n_features;
	bool		deployed;
	const char *search_path;	/* the query's, for retraining */
} StoredVersion;

/* Whether name exists, and its owner (not locked); SPI connected. */
bool		catalog_name_owner(const struct Catalog *cat, const char *name, Oid *owner);

/*
 * Lock the row of name in kernel_model_names until the end of the
 * transaction (serialising every change of the name), and read it; SPI
 * connected.  Only the table's owner can lock it: no other role can block
 * the changes of a name.
 */
void		catalog_lock_name(const struct Catalog *cat, const char *name, NameRow *out);

/* Lock name, first creating its row for owner if it has none; SPI connected. */
void		catalog_claim_name(const struct Catalog *cat, const char *name, Oid owner,
							   NameRow *out);

/* The deployed version of name (model copied into ctx); SPI connected. */
void		catalog_lookup_deployed(const struct Catalog *cat, const char *name,
									bool read_only, MemoryContext ctx,
									struct Deployed *out);

/*
 * The version of name a retrain starts from: the deployed one, or the
 * latest (highest number) when none is deployed, with the rows digest of
 * its latest retrain; into ctx; false when the name has none.  Not locked.
 * SPI connected.
 */
bool		catalog_retrain_source(const struct Catalog *cat, const char *name,
								   MemoryContext ctx, ModelRow *out);

/*
 * Retention ("keep"): delete the versions of name that are neither
 * deployed nor among its keep highest; returns how many.  SPI connected,
 * name locked.
 */
uint64		catalog_prune_versions(const struct Catalog *cat, const char *name, int32 keep);

/*
 * Store v, undeploying the deployed version if v is deployed, and record
 * v->version as the name's highest and v->owner as its owner; an error
 * unless the name row is still the one of v->model_id.  SPI connected,
 * name locked.
 */
void		catalog_store_version(const struct Catalog *cat, const StoredVersion *v);

/*
 * The latest version of name, and whether version is one of its versions;
 * SPI connected, name locked.
 */
int32		catalog_latest_of(const struct Catalog *cat, const char *name, int32 version,
							  bool *exists);

/* Deploy version of name, undeploying the deployed one; SPI connected, name locked. */
void		catalog_deploy_version(const struct Catalog *cat, const char *name, int32 version);

/* Whether version of name exists, and whether it is deployed; SPI connected. */
bool		catalog_version_deployed(const struct Catalog *cat, const char *name,
									 int32 version, bool *deployed);

/*
 * Delete every version of name and its name row (all), or one version;
 * returns the versions deleted.  SPI connected, name locked.
 */
int64		catalog_drop_versions(const struct Catalog *cat, const char *name, bool all,
								  int32 version);

/*
 * Give new_owner the names of old_owner (InvalidOid: none) and, with
 * orphans, those left by a dropped role named old_name; returns how many.
 * SPI connected.
 */
uint64		catalog_reassign_names(const struct Catalog *cat, Oid old_owner,
								   const char *old_name, bool orphans, Oid new_owner);

/*
 * The name row of a restored row: made if missing, its highest version
 * raised to last_version; replace_owner (a restored name row) sets the
 * owner too.  SPI connected.
 */
void		catalog_restore_name(const struct Catalog *cat, Datum name, Oid owner,
								 const char *owner_name, int32 last_version,
								 bool replace_owner);

#endif							/* KM_CATALOG_TABLE_H */
