/*
 * catalog_predict.c - kernel_predict(name, features) and the other by-name
 * twins of the functions that take a model as bytea: the deployed version
 * of a named model, cached per snapshot and current user.
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/plancache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "compat.h"

#include "classify.h"
#include "json.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "catalog.h"
#include "catalog_predict.h"

PG_FUNCTION_INFO_V1(kernel_predict_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_class_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_proba_by_name);
PG_FUNCTION_INFO_V1(kernel_predict_proba_label_by_name);
PG_FUNCTION_INFO_V1(kernel_model_info_by_name);
PG_FUNCTION_INFO_V1(kernel_model_export_by_name);

/* The bytea forms (src/sql/predict.c, export.c) the by-name forms call. */
extern Datum kernel_model_info(PG_FUNCTION_ARGS);
extern Datum kernel_model_export(PG_FUNCTION_ARGS);

/* ---------------------------------------------------------------------
 * kernel_predict(name, features)
 *
 * The deployed version is looked up, and the caller's read permission
 * checked, once per snapshot and current user, and kept, with its decoded
 * model, in fn_extra.  Within one SQL statement the snapshot does
 * not change, so the statement keeps the version it started with even if
 * another session deploys a new one meanwhile.  A FmgrInfo that outlives a
 * statement (a PL/pgSQL expression evaluated in a loop) sees a new
 * snapshot and looks again; an unchanged model is recognised by its TOAST
 * pointer or its bytes and is not decoded again.
 *
 * Every function that takes a model as bytea has this twin that takes its
 * name: kernel_predict_class(name, features), kernel_predict_proba(name,
 * features[, label]), kernel_model_info(name) and kernel_model_export(name)
 * share this cache: the same lookup, permission check and
 * decoded model, then the classifier's q decision values from one kernel
 * row, as their bytea forms (classify.c) compute them.
 * ---------------------------------------------------------------------
 */

/* What identifies the visibility a snapshot gives. */
typedef struct SnapKey
{
	bool		valid;
	TransactionId xmin;
	TransactionId xmax;
	CommandId	curcid;
	uint32		xcnt;
	int32		subxcnt;
	bool		suboverflowed;
	bool		takenDuringRecovery;
	TransactionId *xip;			/* xcnt, then subxcnt ids */
	int			cap;
} SnapKey;

typedef struct NamedEntry
{
	struct NamedEntry *next;
	text	   *name;			/* as given, untoasted */
	char	   *cname;
	uint64		generation;		/* of the snapshot it was looked up under */
	Datum		model;			/* in the cache's context */
	ModelCache *mc;
	KmProbBuffers pb;			/* the probabilities of a row */
} NamedEntry;

typedef struct NamedCache
{
	MemoryContext ctx;
	SnapKey		key;
	Oid			userid;			/* whose read permission was checked */
	uint64		generation;
	NamedEntry *entries;
} NamedCache;

static bool
snapshot_matches(const SnapKey *k, Snapshot s)
{
	return k->valid && k->xmin == s->xmin && k->xmax == s->xmax &&
		k->curcid == s->curcid && k->xcnt == s->xcnt &&
		k->subxcnt == s->subxcnt && k->suboverflowed == s->suboverflowed &&
		k->takenDuringRecovery == s->takenDuringRecovery &&
		(s->xcnt == 0 ||
		 memcmp(k->xip, s->xip, sizeof(TransactionId) * s->xcnt) == 0) &&
		(s->subxcnt <= 0 ||
		 memcmp(k->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt) == 0);
}

static void
snapshot_remember(MemoryContext ctx, SnapKey *k, Snapshot s)
{
	int			need = (int) s->xcnt + Max(s->subxcnt, 0);

	if (need > k->cap)
	{
		if (k->xip)
			pfree(k->xip);
		k->xip = MemoryContextAlloc(ctx, sizeof(TransactionId) * Max(need, 1));
		k->cap = need;
	}
	k->xmin = s->xmin;
	k->xmax = s->xmax;
	k->curcid = s->curcid;
	k->xcnt = s->xcnt;
	k->subxcnt = s->subxcnt;
	k->suboverflowed = s->suboverflowed;
	k->takenDuringRecovery = s->takenDuringRecovery;
	if (s->xcnt > 0)
		memcpy(k->xip, s->xip, sizeof(TransactionId) * s->xcnt);
	if (s->subxcnt > 0)
		memcpy(k->xip + s->xcnt, s->subxip, sizeof(TransactionId) * s->subxcnt);
	k->valid = true;
}

static bool
same_text(const text *a, const text *b)
{
	return a == b ||
		(VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		 memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0);
}

/*
 * The cache entry of name in the cache at *slot (created in fn_mcxt), its
 * deployed version looked up (and read access checked) again when the
 * snapshot or the user changed.
 */
static NamedEntry *
lookup_entry(FunctionCallInfo fcinfo, text *name, void **slot)
{
	NamedCache *cache = (NamedCache *) *slot;
	NamedEntry *entry;
	Snapshot	snap = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(NamedCache));
		cache->ctx = fcinfo->flinfo->fn_mcxt;
		cache->generation = 1;
		*slot = cache;
	}
	/* SET ROLE within a statement or a PL/pgSQL loop: look and check again */
	if (snap == NULL || !snapshot_matches(&cache->key, snap) ||
		cache->userid != GetUserId())
	{
		cache->generation++;
		cache->userid = GetUserId();
		if (snap != NULL)
			snapshot_remember(cache->ctx, &cache->key, snap);
		else
			cache->key.valid = false;
	}

	for (entry = cache->entries; entry != NULL; entry = entry->next)
		if (same_text(entry->name, name))
			break;
	if (entry == NULL)
	{
		entry = MemoryContextAllocZero(cache->ctx, sizeof(NamedEntry));
		entry->name = (text *) MemoryContextAlloc(cache->ctx, VARSIZE_ANY(name));
		memcpy(entry->name, name, VARSIZE_ANY(name));
		entry->cname = MemoryContextStrdup(cache->ctx, text_to_cstring(name));
		entry->mc = km_model_cache_create(cache->ctx);
		entry->next = cache->entries;
		cache->entries = entry;
	}
	if (entry->generation != cache->generation)
	{
		Catalog		cat;
		Deployed	dep;

		catalog_open(fcinfo, &cat);
		catalog_find_deployed(&cat, entry->cname, cache->ctx, &dep);
		if (entry->model != (Datum) 0)
			pfree(DatumGetPointer(entry->model));
		entry->model = dep.model;
		entry->generation = cache->generation;
	}
	return entry;
}

/* The entry of the name in argument 0, cached in fn_extra. */
static NamedEntry *
named_entry(FunctionCallInfo fcinfo)
{
	return lookup_entry(fcinfo, PG_GETARG_TEXT_PP(0), &fcinfo->flinfo->fn_extra);
}

Datum
catalog_predict_model(FunctionCallInfo fcinfo, text *name, void **slot,
					  ModelCache **mc)
{
	NamedEntry *entry = lookup_entry(fcinfo, name, slot);

	*mc = entry->mc;
	return entry->model;
}

Datum
kernel_predict_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);

	PG_RETURN_FLOAT8(km_model_cache_predict(entry->mc, entry->model,
											PG_GETARG_ARRAYTYPE_P(1)));
}

/*
 * The decoded classifier of the entry (the errors of the bytea forms for a
 * regression model), with room for its probabilities.
 */
static const km_model *
named_classifier(FunctionCallInfo fcinfo, NamedEntry *entry, const char *fname)
{
	const km_model *m = km_model_cache_model(entry->mc, entry->model);

	km_classifier_prepare(m, fname, fcinfo->flinfo->fn_mcxt, &entry->pb);
	return m;
}

/* kernel_predict_class(name text, features float8[]) RETURNS text */
Datum
kernel_predict_class_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);
	const km_model *m = km_model_cache_model(entry->mc, entry->model);
	const double *f;
	uint32		c;

	if (km_sign_label(m, 0.0) != NULL)	/* novelty: the sign of the decision value */
	{
		f = km_model_cache_decision_array(entry->mc, PG_GETARG_ARRAYTYPE_P(1));
		PG_RETURN_TEXT_P(cstring_to_text(km_sign_label(m, f[0])));
	}
	m = named_classifier(fcinfo, entry, "kernel_predict_class");
	f = km_model_cache_decision_array(entry->mc, PG_GETARG_ARRAYTYPE_P(1));
	c = km_classify_decide(m->multiclass, m->n_classes, f);

	PG_RETURN_TEXT_P(cstring_to_text(km_classes_label(m->labels, m->labels_bytes,
													  m->n_classes, c)));
}

/* kernel_predict_proba(name text, features float8[]) RETURNS jsonb */
Datum
kernel_predict_proba_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);
	const km_model *m = named_classifier(fcinfo, entry, "kernel_predict_proba");
	km_prob_link link = (km_prob_link) km_model_prob_link_or_raise(m);
	const double *f;
	km_error	err;
	KmJson		j;

	f = km_model_cache_decision_array(entry->mc, PG_GETARG_ARRAYTYPE_P(1));
	if (km_classify_proba(link, m->multiclass, m->n_classes, f, m->prob_A,
						  m->prob_B, entry->pb.p, entry->pb.pwork, &err) != KM_OK)
		km_raise(&err);
	km_json_begin(&j);
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_num(&j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c),
					entry->pb.p[c]);
	PG_RETURN_JSONB_P(km_json_finish(&j));
}


/* kernel_predict_proba(name text, features float8[], label text) RETURNS float8 */
Datum
kernel_predict_proba_label_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);
	const km_model *m = named_classifier(fcinfo, entry, "kernel_predict_proba");
	km_prob_link link = (km_prob_link) km_model_prob_link_or_raise(m);
	int			c = km_class_of_label(m, text_to_cstring(PG_GETARG_TEXT_PP(2)), "name");
	const double *f;
	km_error	err;

	f = km_model_cache_decision_array(entry->mc, PG_GETARG_ARRAYTYPE_P(1));
	if (km_classify_proba(link, m->multiclass, m->n_classes, f, m->prob_A,
						  m->prob_B, entry->pb.p, entry->pb.pwork, &err) != KM_OK)
		km_raise(&err);
	PG_RETURN_FLOAT8(entry->pb.p[c]);
}

/* kernel_model_info(name text) RETURNS jsonb: the deployed version's */
Datum
kernel_model_info_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);

	return DirectFunctionCall1(kernel_model_info, entry->model);
}

/* kernel_model_export(name text) RETURNS jsonb: the deployed version's */
Datum
kernel_model_export_by_name(PG_FUNCTION_ARGS)
{
	NamedEntry *entry = named_entry(fcinfo);

	return DirectFunctionCall1(kernel_model_export, entry->model);
}
