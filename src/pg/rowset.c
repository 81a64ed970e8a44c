/*
 * rowset.c - rows collected by the kernel_ml aggregates.
 */
#include "postgres.h"

#include <limits.h>
#include <math.h>

#include "libpq/pqformat.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "classify.h"
#include "classify_fit.h"
#include "common/hashfn.h"
#include "method.h"
#include "pgutil.h"
#include "pipeline.h"
#include "repr.h"
#include "rowset.h"
#include "task.h"

#define KM_INITIAL_ROWS 1024
/* ... but no more than about this many bytes for wide rows */
#define KM_INITIAL_BYTES (1024.0 * 1024.0)

double
km_train_memory(double n, double d)
{
	return 8.0 * (n * n + 3.0 * n * d + 8.0 * n);
}

double
km_exact_train_memory(const km_options *opts, double n, double d, uint32 k)
{
	const km_fit_params *p = &opts->fit;
	km_error	err;

	k = Max(k, 2);
	/* rows with classes (the task's rows step, task.h) train as classes */
	if (km_task_check_rows(km_task_lookup(km_method_task(p->method)), true, &err) == KM_OK &&
		n >= 1.0 &&
		n <= (double) ((size_t) 1 << 27))
	{
		/* what km_fit_classes (and selection first) allocate: classify.c checks the same */
		size_t		nwork = km_fit_classes_doubles(p, (size_t) n, k);

		if (nwork > 0 && km_options_selects(opts))
			nwork = Max(nwork, km_classify_select_doubles(p, (size_t) n, k));
		if (nwork > 0)
			return 8.0 * ((double) nwork + 2.0 * n * d + 2.0 * n);
	}
	else if (n >= 1.0 && n <= (double) ((size_t) 1 << 27) && d >= 1.0 && d <= (double) INT_MAX)
	{
		/* the fit and, where the plan selects (the default ridge grid too), its selection: train.c checks the same */
		km_train_plan plan;
		double		need = km_train_memory(n, d);

		km_train_plan_make(opts, (size_t) n, (int) d, 0, &plan);
		if (plan.ncand > 0)
			need = Max(need, 8.0 * (double) plan.nsel + need - 8.0 * n * n);
		return need;
	}
	return km_train_memory(n, d);
}

RowSet *
rowset_create(MemoryContext ctx, bool with_target)
{
	RowSet	   *rs = MemoryContextAllocZero(ctx, sizeof(RowSet));

	rs->ctx = ctx;
	rs->d = -1;
	km_options_parse(NULL, &rs->opts);
	rs->has_target = with_target;
	return rs;
}

/* Bytes a row takes in the buffers: its features, target or label id. */
static double
row_bytes(const RowSet *rs)
{
	return 8.0 * (double) Max(rs->d, 0) +
		(rs->has_target && rs->label_type == 0 ? 8.0 : 0.0) +
		(rs->label_type == KM_LABEL_TEXT ? 4.0 : 0.0);
}

/* Bytes the buffers hold with room for cap rows (the dictionary too). */
static double
buffer_bytes(const RowSet *rs, int64 cap)
{
	return (double) cap * row_bytes(rs) + (double) rs->dict_capacity +
		4.0 * ((double) rs->dict_slots_cap + (double) rs->hash_size);
}

/* Count the buffers as they will be once cap rows fit (checked first). */
static void
account(RowSet *rs, int64 cap, const char *what, bool at_least)
{
	rs->grant = km_mem_resize(rs->grant, rs->ctx, buffer_bytes(rs, cap),
							  what, at_least);
}

/* The dictionary grows by extra bytes: checked and counted first. */
static void
grow_grant(RowSet *rs, double extra)
{
	rs->grant = km_mem_resize(rs->grant, rs->ctx,
							  buffer_bytes(rs, rs->capacity) + extra,
							  "kernel_train", true);
}

/*
 * Whether an exact training of need rows would not fit: then the rows are
 * counted, not kept, and the whole need is reported at the end.
 */
static bool
exact_over_limit(const RowSet *rs, int64 need)
{
	return rs->has_target &&
		km_repr_memory_plan(km_repr_lookup(rs->opts.approximation), (double) need,
							(uint32) rs->opts.components).rows_squared > 0.0 &&
		!km_memory_fits(km_exact_train_memory(&rs->opts, (double) need,
											  (double) rs->d, rs->n_dict));
}

void
rowset_check_kept(const RowSet *rs, const char *what)
{
	double		n;

	if (rs->unkept == 0)
		return;
	n = (double) rs->n + (double) rs->unkept;
	/* the plan's formula (as the check at the end of the rows), and the rows held */
	km_refuse_exact_rows(km_exact_train_memory(&rs->opts, n, (double) Max(rs->d, 1),
											   rs->n_dict) + n * row_bytes(rs), n, what);
}

void
rowset_reserve(RowSet *rs, int64 more, const char *what)
{
	int64		need = rs->n + more;
	int64		cap;
	double		held = rs->grant != NULL ? buffer_bytes(rs, rs->capacity) : 0.0;
	km_repr_memory plan;

	if (need <= rs->capacity)
		return;
	/*
	 * An exact model needs its kernel matrix (or, for an svm that reads
	 * columns on demand, its column cache) later: refuse as the rows
	 * arrive, with the buffers this backend holds (these included)
	 * counted.  Approximate models keep only the rows.
	 */
	plan = km_repr_memory_plan(km_repr_lookup(rs->opts.approximation), (double) need,
							   (uint32) rs->opts.components);
	/* an approximate model's m x m work, refused before the rows are read */
	if (plan.components > 0 && rs->capacity == 0)
		km_check_components_memory(plan.components, what);
	if (plan.rows_squared > 0.0 && rs->has_target)
		km_check_exact_memory(km_exact_train_memory(&rs->opts, (double) need,
													(double) rs->d, rs->n_dict),
							  what, true);
	else if (plan.rows_squared > 0.0)
		km_check_memory(km_train_memory((double) need, (double) rs->d), what, true);

	/*
	 * The capacity actually allocated is what is checked and counted:
	 * doubling, or as many rows as still fit when the doubled buffer would
	 * not (at least need).
	 */
	cap = Max(rs->capacity * 2,
			  Max(need, (int64) Max(1.0, Min((double) KM_INITIAL_ROWS,
											 KM_INITIAL_BYTES / Max(row_bytes(rs), 1.0)))));
	if (!km_memory_fits(buffer_bytes(rs, cap) - held) && row_bytes(rs) > 0.0)
	{
		double		fit = (km_memory_room() + held - buffer_bytes(rs, 0)) / row_bytes(rs);

		cap = Max(need, (int64) Min(fit, (double) cap));
	}
	account(rs, cap, what, true);

	if (rs->X == NULL)
	{
		rs->X = MemoryContextAllocHuge(rs->ctx, mul_size(cap, mul_size(rs->d, sizeof(double))));
		if (rs->has_target && rs->label_type == 0)
			rs->y = MemoryContextAllocHuge(rs->ctx, mul_size(cap, sizeof(double)));
		if (rs->label_type == KM_LABEL_TEXT)
			rs->label_id = MemoryContextAllocHuge(rs->ctx, mul_size(cap, sizeof(uint32)));
	}
	else
	{
		rs->X = repalloc_huge(rs->X, mul_size(cap, mul_size(rs->d, sizeof(double))));
		if (rs->has_target && rs->label_type == 0)
			rs->y = repalloc_huge(rs->y, mul_size(cap, sizeof(double)));
		if (rs->label_type == KM_LABEL_TEXT)
			rs->label_id = repalloc_huge(rs->label_id, mul_size(cap, sizeof(uint32)));
	}
	rs->capacity = cap;
}

/*
 * The dictionary id of a label (len bytes, no NUL inside: text has none),
 * added if new.  Open addressing over hash_bytes of the label.
 */
static uint32
dict_id(RowSet *rs, const char *label, int len)
{
	uint32		h;
	uint32		slot;

	if ((Size) rs->n_dict * 2 + 2 > rs->hash_size)
	{
		/* grow the table and re-insert every label */
		uint32		size = Max(64, rs->hash_size * 2);
		uint32	   *table;

		grow_grant(rs, 4.0 * (size - rs->hash_size));
		table = MemoryContextAllocZero(rs->ctx, sizeof(uint32) * size);

		for (uint32 id = 0; id < rs->n_dict; id++)
		{
			const char *s = rs->dict + rs->dict_off[id];

			slot = hash_bytes((const unsigned char *) s, (int) strlen(s)) & (size - 1);
			while (table[slot] != 0)
				slot = (slot + 1) & (size - 1);
			table[slot] = id + 1;
		}
		if (rs->dict_hash)
			pfree(rs->dict_hash);
		rs->dict_hash = table;
		rs->hash_size = size;
	}
	h = hash_bytes((const unsigned char *) label, len);
	for (slot = h & (rs->hash_size - 1); rs->dict_hash[slot] != 0;
		 slot = (slot + 1) & (rs->hash_size - 1))
	{
		const char *s = rs->dict + rs->dict_off[rs->dict_hash[slot] - 1];

		if (strncmp(s, label, len) == 0 && s[len] == '\0')
			return rs->dict_hash[slot] - 1;
	}
	if (rs->n_dict >= KM_MAX_CLASSES)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("too many distinct labels"),
				 errdetail("Row " INT64_FORMAT " brings label %u; a model may have at most %d classes.",
						   rs->seen, rs->n_dict + 1, KM_MAX_CLASSES)));
	if (rs->dict_bytes + len + 1 > rs->dict_capacity)
	{
		Size		cap = Max(rs->dict_capacity * 2, rs->dict_bytes + len + 1 + 1024);

		grow_grant(rs, (double) (cap - rs->dict_capacity));
		rs->dict = rs->dict ? repalloc_huge(rs->dict, cap) : MemoryContextAllocHuge(rs->ctx, cap);
		rs->dict_capacity = cap;
	}
	if (rs->n_dict == rs->dict_slots_cap)
	{
		uint32		cap = Max(64, rs->dict_slots_cap * 2);

		grow_grant(rs, 4.0 * (cap - rs->dict_slots_cap));
		rs->dict_off = rs->dict_off ? repalloc(rs->dict_off, sizeof(uint32) * cap) :
			MemoryContextAlloc(rs->ctx, sizeof(uint32) * cap);
		rs->dict_slots_cap = cap;
	}
	memcpy(rs->dict + rs->dict_bytes, label, len);
	rs->dict[rs->dict_bytes + len] = '\0';
	rs->dict_off[rs->n_dict] = (uint32) rs->dict_bytes;
	rs->dict_bytes += len + 1;
	rs->dict_hash[slot] = rs->n_dict + 1;
	return rs->n_dict++;
}

/* The row an error is about, for its CONTEXT line. */
typedef struct RowErrorArg
{
	const RowSet *rs;
	ArrayType  *features;
	double		target;
	text	   *label;			/* NULL: a float8 target, or none */
	const char *what;
} RowErrorArg;

/* At most this many characters of a feature array in an error's CONTEXT. */
#define ROW_CONTEXT_CHARS 60

/*
 * "kernel_train input row 7: features {1,2,NaN}, target 2.5": the row's
 * values, which a user can search for (its position in the aggregate's
 * input is not stable under another plan or a parallel one).
 */
static void
row_error_context(void *arg)
{
	const RowErrorArg *a = (const RowErrorArg *) arg;
	char	   *f;

	/* running out of kernel_ml.max_memory is not this row's fault */
	if (geterrcode() == ERRCODE_PROGRAM_LIMIT_EXCEEDED)
		return;
	f = OidOutputFunctionCall(F_ARRAY_OUT, PointerGetDatum(a->features));
	if (strlen(f) > ROW_CONTEXT_CHARS)
	{
		/* cut at a whole number */
		char	   *comma = memrchr(f, ',', ROW_CONTEXT_CHARS);

		strcpy(comma ? comma + 1 : f + ROW_CONTEXT_CHARS, "...}");
	}
	if (a->label != NULL)
		errcontext("%s input row " INT64_FORMAT ": features %s, label '%s'",
				   a->what, a->rs->seen, f, text_to_cstring(a->label));
	else if (a->rs->has_target)
		errcontext("%s input row " INT64_FORMAT ": features %s, target %s",
				   a->what, a->rs->seen, f, float8out_internal(a->target));
	else
		errcontext("%s input row " INT64_FORMAT ": features %s",
				   a->what, a->rs->seen, f);
}

static bool add_row(RowSet *rs, ArrayType *features, double target,
					const char *what);

/* Append one row, an error about it naming its values (row_error_context). */
static void
add_row_reported(RowSet *rs, ArrayType *features, double target, text *label,
				 const char *what)
{
	RowErrorArg arg = {rs, features, target, label, what};
	ErrorContextCallback cb;

	cb.callback = row_error_context;
	cb.arg = &arg;
	cb.previous = error_context_stack;
	error_context_stack = &cb;
	if (add_row(rs, features, target, what) && label != NULL)
		rs->label_id[rs->n - 1] = dict_id(rs, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));
	else if (label != NULL)
		(void) dict_id(rs, VARDATA_ANY(label), VARSIZE_ANY_EXHDR(label));	/* classes count */
	error_context_stack = cb.previous;
}

void
rowset_add_label(RowSet *rs, ArrayType *features, text *label, const char *what)
{
	add_row_reported(rs, features, 0.0, label, what);
}

void
rowset_add(RowSet *rs, ArrayType *features, double target, const char *what)
{
	add_row_reported(rs, features, target, NULL, what);
}

/* Validate and keep a row; false when it is only counted (unkept). */
static bool
add_row(RowSet *rs, ArrayType *features, double target, const char *what)
{
	char		where[64];
	int			len;

	snprintf(where, sizeof(where), "row " INT64_FORMAT, rs->seen);
	len = km_array_length(features, where);
	if (rs->d < 0)
		rs->d = len;
	else if (len != rs->d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("Row " INT64_FORMAT " has %d features; the first row had %d.",
						   rs->seen, len, rs->d)));
	if (rs->has_target && rs->label_type == 0 && !isfinite(target))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("target values must be finite"),
				 errdetail("The target of row " INT64_FORMAT " is %s.",
						   rs->seen, float8out_internal(target))));

	if (rs->unkept > 0 || (rs->n + 1 > rs->capacity && exact_over_limit(rs, rs->n + 1)))
	{
		rs->unkept++;
		return false;
	}
	rowset_reserve(rs, 1, what);
	km_array_copy(features, rs->d, rs->X + rs->n * rs->d, where);
	if (rs->has_target && rs->label_type == 0)
		rs->y[rs->n] = target;
	rs->n++;
	return true;
}

MemoryContext
agg_context(FunctionCallInfo fcinfo, const char *fname)
{
	MemoryContext aggctx;

	if (!AggCheckCallContext(fcinfo, &aggctx))
		elog(ERROR, "%s called in non-aggregate context", fname);
	return aggctx;
}

void
rowset_set_options(RowSet *rs, Jsonb *opts)
{
	MemoryContext old = MemoryContextSwitchTo(rs->ctx);

	if (rs->optjson != NULL)
		pfree(rs->optjson);
	rs->optjson = NULL;
	if (opts != NULL)
	{
		rs->optjson = palloc(VARSIZE(opts));
		memcpy(rs->optjson, opts, VARSIZE(opts));
	}
	km_options_parse_labels(rs->optjson, &rs->opts, rs->label_type == KM_LABEL_TEXT);
	MemoryContextSwitchTo(old);
}

/*
 * Whether two option values are the same: equal bytes (options are small,
 * so comparing them on every row costs little), or equal as jsonb
 * ({"lambda": 1} and {"lambda": 1.0}).
 */
static bool
same_options(Jsonb *a, Jsonb *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0)
		return true;
	return DatumGetBool(DirectFunctionCall2(jsonb_eq, JsonbPGetDatum(a),
											JsonbPGetDatum(b)));
}

static char *
options_text(Jsonb *opts)
{
	if (opts == NULL)
		return pstrdup("null");
	return JsonbToCString(NULL, &opts->root, VARSIZE(opts));
}

static RowSet *get_state(FunctionCallInfo fcinfo, int optarg, bool with_target,
						 int label_type, const char *fname);

RowSet *
rowset_get(FunctionCallInfo fcinfo, int optarg, bool with_target,
		   const char *fname)
{
	return get_state(fcinfo, optarg, with_target, 0, fname);
}

RowSet *
rowset_get_labels(FunctionCallInfo fcinfo, int optarg, const char *fname)
{
	return get_state(fcinfo, optarg, true, KM_LABEL_TEXT, fname);
}

static RowSet *
get_state(FunctionCallInfo fcinfo, int optarg, bool with_target,
		  int label_type, const char *fname)
{
	MemoryContext aggctx = agg_context(fcinfo, fname);
	RowSet	   *rs;
	Jsonb	   *opts = NULL;

	if (PG_NARGS() > optarg && !PG_ARGISNULL(optarg))
		opts = PG_GETARG_JSONB_P(optarg);

	if (!PG_ARGISNULL(0))
	{
		rs = (RowSet *) PG_GETARG_POINTER(0);
		if (!same_options(rs->optjson, opts))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("options must be the same for every row of an aggregate call"),
					 errdetail("Row " INT64_FORMAT " has options %s; the rows before it had %s.",
							   rs->seen + 1, options_text(opts),
							   options_text(rs->optjson)),
					 errhint("Pass the options as a constant or a query parameter.")));
		return rs;
	}

	rs = rowset_create(aggctx, with_target);
	rs->label_type = label_type;
	rowset_set_options(rs, opts);
	return rs;
}

static void
check_same_options(const RowSet *a, const RowSet *b, const char *fname)
{
	if (!same_options(a->optjson, b->optjson))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("One part of the %s call had options %s, another %s.",
						   fname, options_text(a->optjson),
						   options_text(b->optjson)),
				 errhint("Pass the options as a constant or a query parameter.")));
}

/*
 * a and b are states of one aggregate call over disjoint rows (parallel
 * workers): b's rows appended to a's (a created in aggctx if NULL).
 */
RowSet *
rowset_combine(MemoryContext aggctx, RowSet *a, const RowSet *b, const char *fname)
{
	if (b == NULL)
		return a;
	if (a == NULL)
	{
		a = rowset_create(aggctx, b->has_target);
		a->label_type = b->label_type;
		rowset_set_options(a, b->optjson);
	}
	else
		check_same_options(a, b, fname);
	if (b->d >= 0)
	{
		if (a->d < 0)
			a->d = b->d;
		else if (a->d != b->d)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("feature arrays must all have the same length"),
					 errdetail("One parallel worker saw %d features per row, another %d.",
							   a->d, b->d)));
	}
	if ((b->n > 0 || b->unkept > 0) &&
		(a->unkept > 0 || b->unkept > 0 || exact_over_limit(a, a->n + b->n)))
	{
		/* counted only: b's labels still count as classes */
		for (uint32 id = 0; a->label_type == KM_LABEL_TEXT && id < b->n_dict; id++)
			(void) dict_id(a, b->dict + b->dict_off[id], (int) strlen(b->dict + b->dict_off[id]));
		a->unkept += b->n;
	}
	else if (b->n > 0)
	{
		rowset_reserve(a, b->n, fname);
		memcpy(a->X + (Size) a->n * a->d, b->X, (Size) b->n * b->d * sizeof(double));
		if (a->has_target && a->label_type == 0)
			memcpy(a->y + a->n, b->y, (Size) b->n * sizeof(double));
		if (a->label_type == KM_LABEL_TEXT)
		{
			/* b's dictionary ids as a's */
			uint32	   *map = palloc(sizeof(uint32) * Max(1, b->n_dict));

			for (uint32 id = 0; id < b->n_dict; id++)
			{
				const char *l = b->dict + b->dict_off[id];

				map[id] = dict_id(a, l, (int) strlen(l));
			}
			for (int64 i = 0; i < b->n; i++)
				a->label_id[a->n + i] = map[b->label_id[i]];
			pfree(map);
		}
		a->n += b->n;
	}
	a->seen += b->seen;
	a->skipped += b->skipped;
	a->unkept += b->unkept;
	return a;
}

/*
 * Serialized state: format byte, whether rows have targets, d, n, seen,
 * skipped, unkept, the label type, the options as their jsonb (int32 length, -1
 * for none, then the jsonb's bytes), then X and y, or for text labels X,
 * the dictionary (count, bytes, the labels) and the rows' ids.  Only exchanged between processes of one
 * build.
 */
#define ROWSET_SERIAL_FORMAT 5

bytea *
rowset_serialize(const RowSet *rs)
{
	StringInfoData buf;

	pq_begintypsend(&buf);
	pq_sendbyte(&buf, ROWSET_SERIAL_FORMAT);
	pq_sendbyte(&buf, rs->has_target ? 1 : 0);
	pq_sendint32(&buf, rs->d);
	pq_sendint64(&buf, rs->n);
	pq_sendint64(&buf, rs->seen);
	pq_sendint64(&buf, rs->skipped);
	pq_sendint64(&buf, rs->unkept);
	pq_sendbyte(&buf, (uint8) rs->label_type);
	if (rs->optjson == NULL)
		pq_sendint32(&buf, -1);
	else
	{
		pq_sendint32(&buf, (int32) VARSIZE(rs->optjson));
		pq_sendbytes(&buf, (const char *) rs->optjson, VARSIZE(rs->optjson));
	}
	if (rs->n > 0)
	{
		pq_sendbytes(&buf, (const char *) rs->X, (Size) rs->n * rs->d * sizeof(double));
		if (rs->has_target && rs->label_type == 0)
			pq_sendbytes(&buf, (const char *) rs->y, (Size) rs->n * sizeof(double));
		if (rs->label_type == KM_LABEL_TEXT)
		{
			pq_sendint32(&buf, rs->n_dict);
			pq_sendint64(&buf, (int64) rs->dict_bytes);
			pq_sendbytes(&buf, rs->dict, rs->dict_bytes);
			pq_sendbytes(&buf, (const char *) rs->label_id, (Size) rs->n * sizeof(uint32));
		}
	}
	return pq_endtypsend(&buf);
}

/* The options of a serialized state: NULL, or a jsonb of its stated length. */
static void
deserialize_options(StringInfo buf, RowSet *rs)
{
	int32		optlen = (int32) pq_getmsgint(buf, 4);
	Jsonb	   *opts;

	if (optlen == -1)
	{
		rowset_set_options(rs, NULL);
		return;
	}
	if (optlen < (int32) VARHDRSZ || optlen > buf->len - buf->cursor)
		elog(ERROR, "unexpected kernel_ml state options length %d", optlen);
	opts = palloc(optlen);
	pq_copymsgbytes(buf, (char *) opts, optlen);
	if (VARSIZE(opts) != (Size) optlen)
		elog(ERROR, "unexpected kernel_ml state options length %d", optlen);
	rowset_set_options(rs, opts);
	pfree(opts);
}

/*
 * The dictionary and the n rows' ids of a serialized state with text
 * labels (the ids skipped unless keep: rows only counted).
 */
static void
deserialize_labels(StringInfo buf, RowSet *rs, int64 n, bool keep)
{
	uint32		n_dict = (uint32) pq_getmsgint(buf, 4);
	int64		bytes = pq_getmsgint64(buf);
	const char *dict;
	const char *p;

	if (bytes < 0 || bytes > buf->len - buf->cursor || n_dict > KM_MAX_CLASSES ||
		(bytes > 0 && ((const char *) buf->data)[buf->cursor + bytes - 1] != '\0'))
		elog(ERROR, "unexpected kernel_ml state labels");
	dict = pq_getmsgbytes(buf, (int) bytes);
	p = dict;
	for (uint32 id = 0; id < n_dict; id++)
	{
		size_t		len;

		if (p >= dict + bytes)
			elog(ERROR, "unexpected kernel_ml state labels");
		len = strlen(p);
		if (dict_id(rs, p, (int) len) != id)
			elog(ERROR, "unexpected kernel_ml state labels");
		p += len + 1;
	}
	if (!keep)
	{
		(void) pq_getmsgbytes(buf, (int) ((Size) n * sizeof(uint32)));
		return;
	}
	pq_copymsgbytes(buf, (char *) rs->label_id, (Size) n * sizeof(uint32));
	for (int64 i = 0; i < n; i++)
		if (rs->label_id[i] >= n_dict)
			elog(ERROR, "unexpected kernel_ml state label id");
}

/* A state written by rowset_serialize, into aggctx; fname for errors. */
RowSet *
rowset_deserialize(MemoryContext aggctx, bytea *b, const char *fname)
{
	StringInfoData buf;
	RowSet	   *rs;
	int64		n;

	buf.data = VARDATA_ANY(b);
	buf.len = VARSIZE_ANY_EXHDR(b);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	if (pq_getmsgbyte(&buf) != ROWSET_SERIAL_FORMAT)
		elog(ERROR, "unexpected kernel_ml state format");
	rs = rowset_create(aggctx, pq_getmsgbyte(&buf) != 0);
	rs->d = (int) pq_getmsgint(&buf, 4);
	n = pq_getmsgint64(&buf);
	rs->seen = pq_getmsgint64(&buf);
	rs->skipped = pq_getmsgint64(&buf);
	rs->unkept = pq_getmsgint64(&buf);
	rs->label_type = pq_getmsgbyte(&buf);
	if (rs->label_type != 0 && rs->label_type != KM_LABEL_TEXT)
		elog(ERROR, "unexpected kernel_ml state label type %d", rs->label_type);
	deserialize_options(&buf, rs);
	if (n < 0 || (n > 0 && rs->d < 1) ||
		(double) n * (rs->d + (rs->has_target && rs->label_type == 0 ? 1 : 0)) * sizeof(double) >
		(double) (buf.len - buf.cursor))
		elog(ERROR, "unexpected kernel_ml state size: " INT64_FORMAT " rows of %d features",
			 n, rs->d);
	if (n > 0 && exact_over_limit(rs, n))
	{
		/* counted only, as the rows that come after them */
		(void) pq_getmsgbytes(&buf, (int) ((Size) n * rs->d * sizeof(double)));
		if (rs->has_target && rs->label_type == 0)
			(void) pq_getmsgbytes(&buf, (int) ((Size) n * sizeof(double)));
		if (rs->label_type == KM_LABEL_TEXT)
			deserialize_labels(&buf, rs, n, false);
		rs->unkept += n;
	}
	else if (n > 0)
	{
		rowset_reserve(rs, n, fname);
		pq_copymsgbytes(&buf, (char *) rs->X, (Size) n * rs->d * sizeof(double));
		if (rs->has_target && rs->label_type == 0)
			pq_copymsgbytes(&buf, (char *) rs->y, (Size) n * sizeof(double));
		if (rs->label_type == KM_LABEL_TEXT)
			deserialize_labels(&buf, rs, n, true);
		rs->n = n;
	}
	pq_getmsgend(&buf);
	return rs;
}
