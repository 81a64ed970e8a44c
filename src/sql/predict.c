/*
 * predict.c - kernel_predict, kernel_eval and kernel_model_info.
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
#include "lib/stringinfo.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"
#include "compat.h"

#include "classify.h"
#include "gp_info.h"
#include "json.h"
#include "model.h"
#include "options.h"
#include "pgutil.h"
#include "predict.h"
#include "pca_info.h"
#include "repr.h"
#include "score.h"
#include "table_columns.h"
#include "task.h"

PG_FUNCTION_INFO_V1(kernel_predict);
PG_FUNCTION_INFO_V1(kernel_eval);
PG_FUNCTION_INFO_V1(kernel_model_info);

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

Datum
kernel_predict(PG_FUNCTION_ARGS)
{
	if (fcinfo->flinfo->fn_extra == NULL)
		fcinfo->flinfo->fn_extra = km_model_cache_for_call(fcinfo->flinfo);
	PG_RETURN_FLOAT8(km_model_cache_predict((ModelCache *) fcinfo->flinfo->fn_extra,
											PG_GETARG_DATUM(0),
											PG_GETARG_ARRAYTYPE_P(1)));
}

/* kernel_eval's error when the kernel value of x and z overflowed: what overflowed. */
static void
raise_kernel_overflow(const km_kernel *kernel, const double *x, const double *z, int d)
{
	km_kernel	lin = {KM_KERNEL_LINEAR, 0, 0.0, 0.0};
	double		ip;
	const char *what;

	switch (kernel->type)
	{
		case KM_KERNEL_RBF:
			what = "squared distance";
			break;
		case KM_KERNEL_LAPLACIAN:
			what = "L1 distance";
			break;
		case KM_KERNEL_MIN:
			what = "sum of minima";
			break;
		default:
			what = km_kernel_eval_finite(&lin, x, z, d, &ip) ? "kernel value" : "inner product";
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("kernel value is out of range for type double precision"),
			 errdetail("The %s of x and z under the %s kernel overflowed.",
					   what, km_kernel_name(kernel->type)),
			 errhint("Use smaller feature values (standardize them), or a smaller gamma or degree.")));
}

Datum
kernel_eval(PG_FUNCTION_ARGS)
{
	ArrayType  *xa = PG_GETARG_ARRAYTYPE_P(0);
	ArrayType  *za = PG_GETARG_ARRAYTYPE_P(1);
	km_options	opts;
	int			d;
	double	   *x;
	double	   *z;
	double		value;

	km_options_parse(PG_GETARG_JSONB_P(2), &opts);
	km_options_require_single(&opts, "kernel_eval");
	d = km_array_length(xa, "x");
	if (km_array_length(za, "z") != d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("x and z must have the same length"),
				 errdetail("x has %d elements and z has %d.", d,
						   ARR_DIMS(za)[0])));
	x = palloc(sizeof(double) * d);
	z = palloc(sizeof(double) * d);
	km_array_copy(xa, d, x, "x");
	km_array_copy(za, d, z, "z");
	km_options_resolve(&opts, d);
	if (!km_kernel_eval_finite(&opts.fit.kernel, x, z, d, &value))
		raise_kernel_overflow(&opts.fit.kernel, x, z, d);
	PG_RETURN_FLOAT8(value);
}

/* km_describer callbacks (method.h) writing into a KmJson */
static void
describe_number(void *ctx, const char *key, double v)
{
	km_json_num((KmJson *) ctx, key, v);
}

static void
describe_integer(void *ctx, const char *key, int64_t v)
{
	km_json_int((KmJson *) ctx, key, v);
}

static void
describe_boolean(void *ctx, const char *key, bool v)
{
	km_json_bool((KmJson *) ctx, key, v);
}

static void
describe_string(void *ctx, const char *key, const char *v)
{
	/* the writer keeps the pointer until km_json_finish: copy */
	km_json_str((KmJson *) ctx, key, pstrdup(v));
}

/* Decode b with its arrays into storage palloc'd here (returned). */
static double *
decode_with_storage(bytea *b, km_model *m)
{
	km_model_shape shape;
	km_error	err;
	double	   *storage;

	if (km_model_peek((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
					  &shape, &err) != KM_OK)
		km_raise(&err);
	storage = palloc_extended(km_model_storage_doubles(&shape) * sizeof(double),
							  MCXT_ALLOC_HUGE);
	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						m, storage, &err) != KM_OK)
		km_raise(&err);
	return storage;
}

/* The selection block: needs the candidate array, so decodes with storage. */
static void
describe_selection(KmJson *j, bytea *b)
{
	km_model	m;
	double	   *storage = decode_with_storage(b, &m);
	const km_method_ops *ops;
	km_score_metric metric;

	ops = km_method_get(m.method);
	metric = ops ? ops->score_metric : KM_SCORE_MSE;
	km_json_begin_object(j, "selection");
	km_json_str(j, "cv", km_cv_name(m.cv));
	if (m.cv == KM_CV_KFOLD)
		km_json_int(j, "folds", m.folds);
	km_json_str(j, "score", m.cv == KM_CV_GCV ? "gcv" :
				m.cv == KM_CV_EVIDENCE ? "neg_log_marginal_likelihood" :
				km_score_metric_name(metric));
	km_json_int(j, "best", m.best);
	km_json_begin_array(j, "candidates");
	for (uint32_t i = 0; i < m.n_candidates; i++)
	{
		const km_candidate *k = &m.candidates[i];

		km_json_begin_object(j, NULL);
		km_json_num(j, "gamma", k->gamma);
		km_json_num(j, "lambda", k->lambda);
		/* NaN (unsolvable): null; accuracy is stored as the loss 1 - accuracy */
		km_json_num(j, "score", metric == KM_SCORE_ACCURACY ? 1.0 - k->score : k->score);
		if (m.cv == KM_CV_KFOLD)
			km_json_num(j, "score_std", k->score_std);
		km_json_end(j);
	}
	km_json_end(j);
	km_json_end(j);
	pfree(storage);
}

/*
 * kernel_model_info's classification keys: "classes" {"label": training
 * rows, ...} in class order, "probability" (the solver is a METHOD field)
 * and, approximate, "loss".  Nothing for a regression model.
 */
static void
km_classifier_info(const km_model *m, KmJson *j)
{
	const km_method_ops *ops = km_method_get(m->method);
	const char *hint = NULL;

	if (m->n_classes < 2)		/* no CLASSES section */
		return;
	km_json_begin_object(j, "classes");
	for (uint32 c = 0; c < m->n_classes; c++)
		km_json_int(j, km_classes_label(m->labels, m->labels_bytes, m->n_classes, c),
					m->class_counts ? (int64) m->class_counts[c] : -1);
	km_json_end(j);
	/* the model's probabilities: Platt's stored, or the method's link */
	km_json_bool(j, "probability", m->has_probability ||
				 (ops && ops->prob_link(m->has_probability, m->multiclass,
										&hint) != KM_PROB_NONE));
	/* approximate classifiers: the loss primal Newton minimized */
	if (ops && km_repr_lookup(m->approximation)->approximate)
		km_json_str(j, "loss", ops->primal_loss_name);
}

/*
 * One meaning per word (issue 30): n_train is the rows the model was fitted
 * on, as in the catalog's kernel_models.n_train; what the model keeps of
 * them is n_support (an exact classifier's rows of nonzero coefficient;
 * svr reports its own) or n_centers (Nystrom).  Beside lambda, the methods
 * of libsvm's C give scikit-learn's C = 1 / (n lambda).
 */
static void
describe_sizes(KmJson *j, const km_model *m, const km_method_ops *ops)
{
	const km_repr_ops *repr = km_repr_lookup(m->approximation);

	km_json_int(j, "n_train", (int64) m->rows_seen);
	if (repr->approximate && !repr->drawn)
		km_json_int(j, "n_centers", m->n_train);
	else if (!repr->approximate && km_task_lookup(m->task)->classes)
		km_json_int(j, "n_support", m->n_train);
	if (ops->lambda_per_row && m->lambda > 0.0 && m->rows_seen > 0)
		km_json_num(j, "C", 1.0 / ((double) m->rows_seen * m->lambda));
}

Datum
kernel_model_info(PG_FUNCTION_ARGS)
{
	bytea	   *b = PG_GETARG_BYTEA_PP(0);
	km_model	m;
	km_error	err;
	KmJson		j;
	km_describer out = {describe_number, describe_integer, describe_boolean,
	describe_string, &j};
	const km_method_ops *ops;

	if (km_model_decode((const uint8 *) VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b),
						&m, NULL, &err) != KM_OK)
		km_raise(&err);
	/* decode accepts only known methods */
	ops = km_method_get(m.method);
	Assert(ops != NULL);

	km_json_begin(&j);
	km_json_int(&j, "format_version", m.format_version);
	/* the header's fields by its table (model.c), then the method's by its own */
	km_model_describe_header(&m, &out);
	km_model_describe_fields(&m, ops->fields, ops->n_fields, &out);
	describe_sizes(&j, &m, ops);
	if (m.n_classes > 0)
	{
		/* its CLASSES section: the labels and counts are arrays, decode again, with storage */
		km_model	full;

		(void) decode_with_storage(b, &full);
		km_classifier_info(&full, &j);	/* classes, probability */
	}
	else if (km_task_lookup(m.task)->target)
		km_json_num(&j, "train_rmse", m.train_rmse);
	km_pca_describe(&j, b);		/* kernel PCA: eigenvalues, explained variance */
	km_gp_describe(&j, b);		/* exact ridge: amplitude, log likelihood */
	km_json_int(&j, "size_bytes", (int64) VARSIZE_ANY_EXHDR(b));
	if (m.n_candidates > 0)
		describe_selection(&j, b);
	km_table_describe(b, &j);	/* a table's columns (table_columns.c) */
	PG_RETURN_JSONB_P(km_json_finish(&j));
}
