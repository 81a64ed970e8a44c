/*
 * catalog_predict.c - kernel_predict(name, features): the deployed version
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

#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "rowset.h"
#include "train.h"
#include "catalog.h"

PG_FUNCTION_INFO_V1(kernel_predict_by_name);

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

Datum
kernel_predict_by_name(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	NamedCache *cache = (NamedCache *) fcinfo->flinfo->fn_extra;
	NamedEntry *entry;
	Snapshot	snap = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;

	if (cache == NULL)
	{
		cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(NamedCache));
		cache->ctx = fcinfo->flinfo->fn_mcxt;
		cache->generation = 1;
		fcinfo->flinfo->fn_extra = cache;
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
	PG_RETURN_FLOAT8(km_model_cache_predict(entry->mc, entry->model,
											PG_GETARG_ARRAYTYPE_P(1)));
}

