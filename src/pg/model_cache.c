/*
 * model_cache.c - decoded models kept across rows (model_cache.h).
 *
 * The scoring functions keep decoded models in fn_extra for the whole
 * query: a small cache per call site, so that rows scored with per-group
 * models (JOIN models USING (grp)) that are not sorted by group do not
 * decode a model on every row.
 *
 * What identifies a model:
 * - a model read from a table arrives as a TOAST pointer, which identifies
 *   the value without fetching it: the whole pointer (relation, value id,
 *   sizes) is the key.  A value id is not reused while the value exists,
 *   and a new one comes from the global OID counter, as before;
 * - a model given as a constant (a literal, or a query parameter in a custom
 *   plan) is the same value on every call of this expression: decoded once;
 * - any other in-line model is compared byte for byte with a copy of a
 *   cached one: a hash of its length and two samples of its bytes only finds
 *   the candidates.  A checksum is no identity, as two models with the same
 *   length, header and CRC are easy to make.  (A Param is not trusted:
 *   PL/pgSQL keeps an expression across calls while its variable changes.)
 * A row that brings a cached model costs neither a detoast nor a
 * re-validation.
 *
 * Bounds: at most KM_CACHE_ENTRIES models and KM_CACHE_BYTES of decoded
 * models (or a quarter of kernel_ml.max_memory if that is less), the least
 * recently used evicted first.  A larger model is still scored: alone.  Each
 * model has its own memory context under the call site's, deleted when it
 * is evicted.
 */
#include "postgres.h"

#include <math.h>

#include "access/detoast.h"
#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/ilist.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"
#include "compat.h"

#include "classify.h"
#include "model.h"
#include "model_cache.h"
#include "pgutil.h"
#include "score.h"
#include "task.h"

/*
 * 256 models: more groups than a GROUP BY of stores or regions usually has,
 * and a lookup is a hash probe, so the count costs nothing per row.  64 MB:
 * hundreds of typical per-group models (a 200-row, 5-feature exact ridge
 * model is about 30 kB decoded, a 2,000-row one of 20 features about
 * 700 kB), and about what one sort or hash node of a query may use
 * (work_mem-sized); each call site and each parallel worker has its own.
 */
#define KM_CACHE_ENTRIES	256
#define KM_CACHE_BUCKETS	512 /* a power of two */
#define KM_CACHE_BYTES		((Size) 64 * 1024 * 1024)
#define KM_CACHE_SAMPLE		64	/* bytes of an in-line model hashed, twice */

typedef struct CacheEntry
{
	dlist_node	lru;			/* in ModelCache.lru, most recent first */
	int			next;			/* next entry of its bucket, -1 at the end */
	int			index;			/* in ModelCache.entries */
	bool		valid;
	MemoryContext ctx;			/* everything below; deleted on eviction */
	Size		size;			/* bytes ctx holds */
	/* identity */
	uint32		hash;
	bool		toasted;
	struct varatt_external ptr; /* toasted: the whole pointer */
	Size		len;			/* in-line: its length and a copy */
	uint8	   *bytes;
	/* the decoded model, its scorer and scratch */
	km_model	model;
	km_scorer	scorer;
	double	   *x;				/* one raw feature row */
	double	   *out;			/* q decision values */
} CacheEntry;

struct ModelCache
{
	MemoryContext mcxt;			/* the call site's; the entries' parent */
	bool		arg_const;		/* the model argument is a Const */
	CacheEntry *cur;			/* what get_model last returned */
	int			n_entries;		/* allocated (valid or not) */
	int			n_valid;
	Size		total;			/* bytes the valid entries hold */
	dlist_head	lru;
	int			buckets[KM_CACHE_BUCKETS];
	CacheEntry *entries[KM_CACHE_ENTRIES];
};

static bool model_arg_is_const(FmgrInfo *flinfo);

/* The bytes of decoded models the cache keeps at most. */
static Size
cache_cap(void)
{
	double		quarter = (double) Min(km_max_memory_kb, km_max_memory_limit_kb) * 256.0;

	return quarter < (double) KM_CACHE_BYTES ? (Size) quarter : KM_CACHE_BYTES;
}

static uint32
toast_hash(const struct varatt_external *ptr)
{
	return hash_bytes((const unsigned char *) ptr, sizeof(*ptr));
}

/* Finds candidates only: a match is confirmed by comparing every byte. */
static uint32
inline_hash(const uint8 *buf, Size len)
{
	Size		k = Min(len, KM_CACHE_SAMPLE);
	uint32		h = hash_bytes_uint32((uint32) len);

	h = hash_combine(h, hash_bytes(buf + (len - k) / 2, (int) k));
	return hash_combine(h, hash_bytes(buf + len - k, (int) k));
}

static CacheEntry *
lookup_toasted(ModelCache *mc, const struct varatt_external *ptr, uint32 hash)
{
	for (int i = mc->buckets[hash & (KM_CACHE_BUCKETS - 1)]; i >= 0;)
	{
		CacheEntry *e = mc->entries[i];

		if (e->hash == hash && e->toasted && memcmp(&e->ptr, ptr, sizeof(*ptr)) == 0)
			return e;
		i = e->next;
	}
	return NULL;
}

/* Whether e holds the in-line value buf, byte for byte. */
static bool
holds_inline(const CacheEntry *e, const uint8 *buf, Size len)
{
	return !e->toasted && e->bytes != NULL && e->len == len &&
		memcmp(e->bytes, buf, len) == 0;
}

static CacheEntry *
lookup_inline(ModelCache *mc, const uint8 *buf, Size len, uint32 hash)
{
	for (int i = mc->buckets[hash & (KM_CACHE_BUCKETS - 1)]; i >= 0;)
	{
		CacheEntry *e = mc->entries[i];

		if (e->hash == hash && holds_inline(e, buf, len))
			return e;
		i = e->next;
	}
	return NULL;
}

/* Drop a valid entry: out of its bucket and the LRU list, memory freed. */
static void
cache_evict(ModelCache *mc, CacheEntry *e)
{
	int		   *link = &mc->buckets[e->hash & (KM_CACHE_BUCKETS - 1)];

	Assert(e->valid);
	while (*link != e->index)
	{
		Assert(*link >= 0);
		link = &mc->entries[*link]->next;
	}
	*link = e->next;
	dlist_delete(&e->lru);
	e->valid = false;
	mc->n_valid--;
	mc->total -= e->size;
	MemoryContextDelete(e->ctx);
	e->ctx = NULL;
	if (mc->cur == e)
		mc->cur = NULL;
	elog(DEBUG1, "kernel_ml model cache: evicted a model (%d cached)", mc->n_valid);
}

/*
 * Evict the least recently used entries other than keep until one more
 * entry of need bytes fits (keep == NULL), or until the entries fit (keep
 * the one just loaded).
 */
static void
cache_make_room(ModelCache *mc, Size need, CacheEntry *keep)
{
	Size		cap = cache_cap();

	while (mc->n_valid > (keep ? 1 : 0))
	{
		CacheEntry *lru = dlist_container(CacheEntry, lru, dlist_tail_node(&mc->lru));

		if (keep == NULL ? (mc->n_valid < KM_CACHE_ENTRIES && mc->total + need <= cap) :
			mc->total <= cap)
			break;
		if (lru == keep)
			lru = dlist_container(CacheEntry, lru,
								  dlist_prev_node(&mc->lru, &lru->lru));
		cache_evict(mc, lru);
	}
}

/* An entry not in use, with a fresh context; after cache_make_room. */
static CacheEntry *
cache_free_entry(ModelCache *mc)
{
	CacheEntry *e = NULL;

	for (int i = 0; i < mc->n_entries && e == NULL; i++)
		if (!mc->entries[i]->valid)
			e = mc->entries[i];
	if (e == NULL)
	{
		Assert(mc->n_entries < KM_CACHE_ENTRIES);
		e = MemoryContextAllocZero(mc->mcxt, sizeof(CacheEntry));
		e->index = mc->n_entries;
		mc->entries[mc->n_entries++] = e;
	}
	/* a load that failed left its context */
	if (e->ctx != NULL)
		MemoryContextDelete(e->ctx);
	e->ctx = AllocSetContextCreate(mc->mcxt, "kernel_ml model cache entry",
								   ALLOCSET_SMALL_SIZES);
	return e;
}

/* The scorer of e's decoded model and its row buffers, in e's context. */
static void
entry_prepare_scorer(CacheEntry *e)
{
	km_model   *m = &e->model;
	size_t		n = km_scorer_doubles(m);

	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_ml model is too large to score"),
				 errdetail("Its %u rows of %u features do not fit in memory.",
						   m->n_train, m->n_features)));
	km_check_memory(8.0 * (double) n, "kernel_predict model cache", false);
	km_scorer_prepare(&e->scorer, m,
					  MemoryContextAllocHuge(e->ctx, n * sizeof(double)));
	e->x = MemoryContextAlloc(e->ctx, (Size) m->n_features * sizeof(double));
	e->out = MemoryContextAlloc(e->ctx, (Size) m->n_outputs * sizeof(double));
}

/* What identifies e's model: its TOAST pointer, or its bytes (a copy if asked). */
static void
entry_set_key(CacheEntry *e, const uint8 *buf, Size len,
			  const struct varatt_external *ptr, bool copy)
{
	e->toasted = ptr != NULL;
	if (ptr != NULL)
		e->ptr = *ptr;
	e->len = len;
	e->bytes = NULL;
	if (copy)
	{
		e->bytes = MemoryContextAllocHuge(e->ctx, len);
		memcpy(e->bytes, buf, len);
	}
}

/* Make the loaded entry e valid, findable by hash, and the current one. */
static void
cache_insert(ModelCache *mc, CacheEntry *e, uint32 hash)
{
	e->hash = hash;
	e->size = MemoryContextMemAllocated(e->ctx, true);

	e->valid = true;
	e->next = mc->buckets[hash & (KM_CACHE_BUCKETS - 1)];
	mc->buckets[hash & (KM_CACHE_BUCKETS - 1)] = e->index;
	dlist_push_head(&mc->lru, &e->lru);
	mc->n_valid++;
	mc->total += e->size;
	/* the estimate left out the scorer */
	cache_make_room(mc, 0, e);
	mc->cur = e;
}

/*
 * Decode the detoasted model b into a new entry (evicting others to make
 * room) and make it the current one.  ptr: its TOAST pointer, or NULL for
 * an in-line value (then a copy of its bytes is kept, unless the argument
 * is a constant).
 */
static CacheEntry *
cache_load(ModelCache *mc, bytea *b, const struct varatt_external *ptr, uint32 hash)
{
	const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
	Size		len = VARSIZE_ANY_EXHDR(b);
	bool		copy = ptr == NULL && !mc->arg_const;
	km_model_shape shape;
	double	   *storage;
	km_error	err;
	CacheEntry *e;

	/* a malformed model leaves the cache as it was */
	if (km_model_peek(buf, len, &shape, &err) != KM_OK)
		km_raise(&err);
	cache_make_room(mc, add_size(mul_size(km_model_storage_doubles(&shape), sizeof(double)),
								 copy ? len : 0), NULL);
	e = cache_free_entry(mc);
	storage = MemoryContextAllocHuge(e->ctx,
									 km_model_storage_doubles(&shape) * sizeof(double));
	if (km_model_decode(buf, len, &e->model, storage, &err) != KM_OK)
		km_raise(&err);
	entry_prepare_scorer(e);
	entry_set_key(e, buf, len, ptr, copy);
	cache_insert(mc, e, hash);
	/* what a user can watch when scoring seems slow */
	elog(DEBUG1, "kernel_ml model cache: decoded a%s model (%d cached)",
		 ptr != NULL ? " TOASTed" : mc->arg_const ? " constant" : "n in-line", mc->n_valid);
	return e;
}

ModelCache *
km_model_cache_create(MemoryContext mcxt)
{
	ModelCache *mc = MemoryContextAllocZero(mcxt, sizeof(ModelCache));

	mc->mcxt = mcxt;
	dlist_init(&mc->lru);
	for (int i = 0; i < KM_CACHE_BUCKETS; i++)
		mc->buckets[i] = -1;
	return mc;
}

static CacheEntry *
cache_hit(ModelCache *mc, CacheEntry *e)
{
	dlist_move_head(&mc->lru, &e->lru);
	mc->cur = e;
	return e;
}

/* The cache entry of the model in a bytea datum, decoded if not cached. */
static CacheEntry *
get_entry(ModelCache *mc, Datum model)
{
	struct varlena *raw = (struct varlena *) DatumGetPointer(model);
	CacheEntry *cur = mc->cur;
	CacheEntry *e;

	if (mc->arg_const && cur != NULL)
		return cur;				/* the same constant on every call */
	if (VARATT_IS_EXTERNAL_ONDISK(raw))
	{
		struct varatt_external ptr;
		uint32		hash;

		VARATT_EXTERNAL_GET_POINTER(ptr, raw);
		/* rows sorted by model: the same as the last row */
		if (cur != NULL && cur->toasted && memcmp(&cur->ptr, &ptr, sizeof(ptr)) == 0)
			return cur;
		hash = toast_hash(&ptr);
		e = lookup_toasted(mc, &ptr, hash);
		if (e != NULL)
			return cache_hit(mc, e);
		return cache_load(mc, (bytea *) detoast_attr(raw), &ptr, hash);
	}
	else
	{
		/* in-line: compressed, short header or expanded ones detoasted */
		bytea	   *b = VARATT_IS_EXTENDED(raw) ? (bytea *) detoast_attr(raw) : (bytea *) raw;
		const uint8 *buf = (const uint8 *) VARDATA_ANY(b);
		Size		len = VARSIZE_ANY_EXHDR(b);
		uint32		hash;

		if (cur != NULL && holds_inline(cur, buf, len))
			return cur;
		hash = inline_hash(buf, len);
		e = lookup_inline(mc, buf, len, hash);
		if (e != NULL)
			return cache_hit(mc, e);
		return cache_load(mc, b, NULL, hash);
	}
}

/*
 * The q decision values of the raw feature row raw (d finite values) with
 * the model of e, into e->out.
 */
static const double *
score_loaded(CacheEntry *e, const double *raw)
{
	const km_model *m = &e->model;
	km_error	err;
	int			bad;

	km_blas_setup_scoring();
	if (km_scorer_decision(&e->scorer, raw, e->out, &err) == KM_OK)
		return e->out;
	bad = e->scorer.bad_feature;
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("standardized feature is out of range for type double precision"),
				 errdetail("Feature %d of the row, %s, standardized with the training mean %s and scale %s, overflowed.",
						   bad + 1, float8out_internal(raw[bad]),
						   float8out_internal(m->mean[bad]),
						   float8out_internal(m->scale[bad])),
				 errhint("Check the row for values far outside the range of the training data.")));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("prediction is out of range for type double precision"),
			 errdetail("Scoring the row with the %s kernel overflowed: a kernel value with a training row, or the sum of the coefficients times those values.",
					   km_kernel_name(m->kernel.type)),
			 errhint("Check the row for values far outside the range of the training data.")));
	return NULL;				/* not reached */
}

/* The single value kernel_predict returns: the model must have one output. */
void
km_refuse_embedding(const km_model *m, const char *fname)
{
	km_model_check_verb(m, KM_VERB_PREDICT, fname);
}

/* The model's task answers verb, or refuses it in its own words (task.c). */
void
km_model_check_verb(const km_model *m, km_verb verb, const char *fname)
{
	km_error	err;

	if (km_task_check_verb(km_task_lookup(m->task), verb, m->n_classes, m->n_outputs,
						   fname, km_method_name(m->method), &err) != KM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s", err.message),
				 errdetail("%s", err.detail),
				 errhint("%s", err.hint)));
}

static double
single_output(const km_model *m, const double *out)
{
	km_refuse_embedding(m, "kernel_predict");
	if (m->n_outputs != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("kernel_predict cannot score a multi-class model"),
				 errdetail("The model gives %u decision values per row (multi-class scheme \"%s\").",
						   m->n_outputs, km_multiclass_name(m->multiclass)),
				 errhint("Use kernel_predict_class(model, features) or kernel_predict_proba(model, features).")));
	return out[0];
}

static void
check_feature_count(const km_model *m, int d)
{
	if ((uint32) d != m->n_features)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("wrong number of features for this model"),
				 errdetail("The model expects %u features, got %d.", m->n_features, d)));
}

double
km_model_cache_predict(ModelCache *mc, Datum model, ArrayType *features)
{
	CacheEntry *e = get_entry(mc, model);

	check_feature_count(&e->model, km_array_length(features, "the row"));
	/* rejects NaN and infinity */
	km_array_copy(features, (int) e->model.n_features, e->x, "the row");
	return single_output(&e->model, score_loaded(e, e->x));
}

double
km_model_cache_predict_row(ModelCache *mc, Datum model, const double *x, int d)
{
	CacheEntry *e = get_entry(mc, model);

	check_feature_count(&e->model, d);
	return single_output(&e->model, score_loaded(e, x));
}

const double *
km_model_cache_decision_array(ModelCache *mc, ArrayType *features)
{
	CacheEntry *e = mc->cur;

	Assert(e != NULL && e->valid);
	check_feature_count(&e->model, km_array_length(features, "the row"));
	km_array_copy(features, (int) e->model.n_features, e->x, "the row");
	return score_loaded(e, e->x);
}

ModelCache *
km_model_cache_for_call(FmgrInfo *flinfo)
{
	ModelCache *mc = km_model_cache_create(flinfo->fn_mcxt);

	mc->arg_const = model_arg_is_const(flinfo);
	return mc;
}

const km_model *
km_model_cache_model(ModelCache *mc, Datum model)
{
	return &get_entry(mc, model)->model;
}

km_scorer *
km_model_cache_scorer(ModelCache *mc, Datum model)
{
	return &get_entry(mc, model)->scorer;
}

const double *
km_model_cache_decision(ModelCache *mc, Datum model, const double *x, int d)
{
	CacheEntry *e = get_entry(mc, model);

	check_feature_count(&e->model, d);
	return score_loaded(e, x);
}

/* Whether kernel_predict's model argument is a Const in its expression. */
static bool
model_arg_is_const(FmgrInfo *flinfo)
{
	Node	   *expr = flinfo->fn_expr;
	List	   *args;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	args = ((FuncExpr *) expr)->args;
	return list_length(args) >= 1 && IsA(linitial(args), Const);
}
