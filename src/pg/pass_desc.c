/*
 * pass_desc.c - the pass aggregate's descriptor, its states and the pass
 * of a statement in this process (pass_desc.h).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/expandeddatum.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "class_types.h"
#include "learn/learner.h"
#include "pass_desc.h"
#include "pgutil.h"
#include "progress.h"

/* The seed of a descriptor's key. */
#define KEY_SEED UINT64CONST(0x6b65726e656c6d6c)
/* Folds a descriptor may name at most (options allow far fewer). */
#define MAX_FOLDS 1000000

/* The learner's pass of the statement this backend runs, and one rebuilt pass. */
static PassRun *live_run = NULL;
static PassRun *rebuilt_run = NULL;

static void
bad_desc(const char *detail) pg_attribute_noreturn();

static void
bad_desc(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("invalid pass descriptor"),
			 errdetail("%s", detail),
			 errhint("Pass descriptors are written by kernel_model_train and kernel_train_query for their own statements; do not build or change one.")));
}

static uint64
desc_key(const bytea *desc)
{
	Size		len = VARSIZE(desc);

	return hash_bytes_extended((const unsigned char *) desc + sizeof(PassDescHeader),
							   (int) (len - sizeof(PassDescHeader)), KEY_SEED);
}

bytea *
pass_desc_build(const km_pass *pass, const PassRules *rules)
{
	size_t		point_len = pass->point_bytes(pass);
	size_t		labels_len = 0;
	Size		total;
	bytea	   *desc;
	PassDescHeader *h;
	char	   *p;

	for (int l = 0; l < rules->nlabels; l++)
		labels_len += 2 * sizeof(uint32) +
			(rules->target == PASS_TEXT_LABELS ? (size_t) rules->lab_len[l] : sizeof(double));
	total = add_size(add_size(sizeof(PassDescHeader), labels_len), point_len);
	if (total > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("pass descriptor is too large"),
				 errdetail("Pass \"%s\" needs a descriptor of %s; a value holds at most 1 GB.",
						   pass->what, km_size_pretty((double) total)),
				 errhint("Lower \"components\".")));
	(void) km_mem_reserve(CurrentMemoryContext, (double) total, "kernel_model_train", false);
	desc = palloc0(total);
	SET_VARSIZE(desc, total);
	h = (PassDescHeader *) desc;
	h->magic = KM_PASS_DESC_MAGIC;
	h->version = KM_PASS_DESC_VERSION;
	h->kind = pass->kind;
	h->order = KM_PASS_BYTE_ORDER;
	h->state_bytes = pass->state_bytes;
	h->chunk = (uint32) pass->chunk;
	h->d = rules->d;
	h->target = (uint32) rules->target;
	h->all_rows = rules->all_rows ? (rules->sides ? 3 : 1) : 0;
	h->seed = rules->seed;
	h->test_fraction = rules->test_fraction;
	h->folds = rules->folds;
	h->side = (int32) pass->side;
	h->fold = pass->fold;
	h->nlabels = (uint32) rules->nlabels;
	h->labels_len = labels_len;
	h->point_len = point_len;
	p = (char *) desc + sizeof(PassDescHeader);
	for (int l = 0; l < rules->nlabels; l++)
	{
		uint32		c = rules->lab_class[l];
		uint32		len = rules->target == PASS_TEXT_LABELS ? (uint32) rules->lab_len[l] : 0;

		memcpy(p, &c, sizeof(c));
		memcpy(p + sizeof(c), &len, sizeof(len));
		p += 2 * sizeof(uint32);
		if (rules->target == PASS_TEXT_LABELS)
		{
			memcpy(p, rules->lab_text[l], len);
			p += len;
		}
		else
		{
			memcpy(p, &rules->lab_value[l], sizeof(double));
			p += sizeof(double);
		}
	}
	pass->point_write(pass, (unsigned char *) p);
	h->key = desc_key(desc);
	return desc;
}

/* The rules of a descriptor (checked as untrusted), labels in cxt. */
static void
desc_decode(bytea *desc, PassRules *rules, MemoryContext cxt)
{
	Size		len = VARSIZE_ANY(desc);
	PassDescHeader *h = (PassDescHeader *) desc;
	const char *p;
	const char *end;

	if (VARATT_IS_EXTENDED(desc) || len < sizeof(PassDescHeader))
		bad_desc("The descriptor is shorter than its header.");
	if (h->magic != KM_PASS_DESC_MAGIC)
		bad_desc("Its first bytes are not the kernel_ml pass descriptor's magic number.");
	if (h->version != KM_PASS_DESC_VERSION || h->order != KM_PASS_BYTE_ORDER)
		bad_desc(psprintf("The descriptor has version %u in byte order %08x; this build reads version %d in %08x.",
						  (unsigned) h->version, (unsigned) h->order,
						  KM_PASS_DESC_VERSION, KM_PASS_BYTE_ORDER));
	if (h->labels_len > len || h->point_len > len ||
		sizeof(PassDescHeader) + h->labels_len + h->point_len != len)
		bad_desc(psprintf("The descriptor has %zu bytes; its header gives %llu of labels and %llu of point.",
						  (size_t) len, (unsigned long long) h->labels_len,
						  (unsigned long long) h->point_len));
	if (h->key != desc_key(desc))
		bad_desc("The descriptor fails its key: its bytes were changed after they were written.");
	if (h->d < 1 || h->d > (1 << 20) || h->target > PASS_ANY ||
		(h->all_rows != 0 && h->all_rows != 1 && h->all_rows != 3) ||
		!(h->test_fraction >= 0.0 && h->test_fraction <= 1.0) ||
		h->folds < 0 || h->folds > MAX_FOLDS || h->side < KM_SIDE_ALL ||
		h->side > KM_SIDE_NOT_FOLD || (h->side != KM_SIDE_ALL && (h->folds == 0 || h->fold < 0 || h->fold >= h->folds)) ||
		h->nlabels > KM_MAX_CLASSES ||
		(h->target == PASS_FLOAT8_LABELS || h->target == PASS_TEXT_LABELS) != (h->nlabels > 0) ||
		h->state_bytes > MaxAllocHugeSize || h->chunk > KM_BLOCK_ROWS)
		bad_desc(psprintf("The descriptor gives %d features, target kind %u, fraction %g, %d folds (side %d, fold %d), %u labels, a state of %llu bytes and chunks of %u rows.",
						  h->d, (unsigned) h->target, h->test_fraction, h->folds,
						  h->side, h->fold, (unsigned) h->nlabels,
						  (unsigned long long) h->state_bytes, (unsigned) h->chunk));
	memset(rules, 0, sizeof(*rules));
	rules->d = h->d;
	rules->target = (PassTarget) h->target;
	rules->all_rows = h->all_rows != 0;
	rules->sides = h->all_rows == 3;
	rules->seed = h->seed;
	rules->test_fraction = h->test_fraction;
	rules->folds = h->folds;
	rules->side = (km_rows_side) h->side;
	rules->fold = h->fold;
	rules->nlabels = (int) h->nlabels;
	if (h->nlabels == 0)
		return;
	rules->lab_text = MemoryContextAllocZero(cxt, sizeof(char *) * h->nlabels);
	rules->lab_len = MemoryContextAllocZero(cxt, sizeof(int) * h->nlabels);
	rules->lab_value = MemoryContextAllocZero(cxt, sizeof(double) * h->nlabels);
	rules->lab_class = MemoryContextAllocZero(cxt, sizeof(uint32) * h->nlabels);
	p = (const char *) desc + sizeof(PassDescHeader);
	end = p + h->labels_len;
	for (uint32 l = 0; l < h->nlabels; l++)
	{
		uint32		c;
		uint32		n;

		if (end - p < (ptrdiff_t) (2 * sizeof(uint32)))
			bad_desc("The descriptor's labels are truncated.");
		memcpy(&c, p, sizeof(c));
		memcpy(&n, p + sizeof(c), sizeof(n));
		p += 2 * sizeof(uint32);
		/* a scoring pass's label the model lacks: class k (each pass checks its ids) */
		if (c > KM_MAX_CLASSES)
			bad_desc(psprintf("Label %u has class %u of at most %d.", l + 1, c, KM_MAX_CLASSES));
		rules->lab_class[l] = c;
		if (rules->target == PASS_TEXT_LABELS)
		{
			char	   *t;

			if (n > (uint32) (end - p))
				bad_desc("The descriptor's labels are truncated.");
			t = MemoryContextAlloc(cxt, n + 1);
			memcpy(t, p, n);
			t[n] = '\0';
			rules->lab_text[l] = t;
			rules->lab_len[l] = (int) n;
			p += n;
		}
		else
		{
			if (n != 0 || end - p < (ptrdiff_t) sizeof(double))
				bad_desc("The descriptor's labels are truncated.");
			memcpy(&rules->lab_value[l], p, sizeof(double));
			if (!isfinite(rules->lab_value[l]))
				bad_desc(psprintf("Label %u is not finite.", l + 1));
			p += sizeof(double);
		}
	}
	if (p != end)
		bad_desc("The descriptor's labels do not fill their bytes.");
}

void
pass_desc_live_begin(bytea *desc, const PassRules *rules, km_pass *pass, void *state)
{
	PassRun    *run = palloc0(sizeof(PassRun));

	run->key = ((PassDescHeader *) desc)->key;
	run->desc = desc;
	run->rules = *rules;
	run->pass = pass;
	run->chunk = pass->chunk > 0 ? pass->chunk : KM_BLOCK_ROWS;
	run->live = true;
	run->thr = km_holdout_threshold(rules->test_fraction);
	run->hbuf = palloc(sizeof(double) * (rules->d + 1));
	run->live_state = state;
	live_run = run;
}

void
pass_desc_live_end(void)
{
	live_run = NULL;
}

bytea *
pass_desc_ref(const bytea *desc, const char *name)
{
	const PassDescHeader *h = (const PassDescHeader *) desc;
	PassDescRef *r = palloc0(sizeof(PassDescRef));

	Assert(strlen(name) < KM_PASS_REF_NAME);
	SET_VARSIZE(r, sizeof(PassDescRef));
	r->magic = KM_PASS_REF_MAGIC;
	r->version = KM_PASS_DESC_VERSION;
	r->kind = h->kind;
	r->order = KM_PASS_BYTE_ORDER;
	r->key = h->key;
	r->full_len = VARSIZE(desc);
	strlcpy(r->name, name, KM_PASS_REF_NAME);
	return (bytea *) r;
}

/* Is desc a short descriptor (its size and magic; the rest checked by ref_check)? */
static bool
is_ref(bytea *desc)
{
	return !VARATT_IS_EXTENDED(desc) && VARSIZE(desc) == sizeof(PassDescRef) &&
		((PassDescRef *) desc)->magic == KM_PASS_REF_MAGIC;
}

/* A short descriptor as untrusted bytes: version, order, length, name. */
static const PassDescRef *
ref_check(bytea *desc)
{
	const PassDescRef *r = (const PassDescRef *) desc;
	size_t		n = strnlen(r->name, KM_PASS_REF_NAME);

	if (r->version != KM_PASS_DESC_VERSION || r->order != KM_PASS_BYTE_ORDER)
		bad_desc(psprintf("The short descriptor has version %u in byte order %08x; this build reads version %d in %08x.",
						  (unsigned) r->version, (unsigned) r->order,
						  KM_PASS_DESC_VERSION, KM_PASS_BYTE_ORDER));
	if (r->full_len < sizeof(PassDescHeader) || r->full_len > MaxAllocSize)
		bad_desc(psprintf("The short descriptor names a descriptor of %llu bytes.",
						  (unsigned long long) r->full_len));
	if (n == 0 || n == KM_PASS_REF_NAME || strspn(r->name, "abcdefghijklmnopqrstuvwxyz0123456789_") != n)
		bad_desc("The short descriptor's intermediate result name is empty, unterminated or not of [a-z0-9_].");
	return r;
}

/* errcontext of reading a short descriptor's full bytes */
static void
ref_context(void *arg)
{
	errcontext("reading the pass descriptor of intermediate result \"%s\"",
			   ((const PassDescRef *) arg)->name);
}

/*
 * The full descriptor of a short one, read once from its intermediate
 * result (Citus's read_intermediate_result, binary) into cxt, checked: a
 * descriptor of its length whose key, recomputed, is the short one's.
 */
static bytea *
read_ref(const PassDescRef *ref, MemoryContext cxt)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	ErrorContextCallback ecb;
	bytea	   *full = NULL;
	bool		isnull = true;
	Datum		v = (Datum) 0;
	int			rc;

	values[0] = CStringGetTextDatum(ref->name);
	(void) km_mem_reserve(cxt, (double) ref->full_len, "kernel_ml pass", false);
	ecb.callback = ref_context;
	ecb.arg = (void *) ref;
	ecb.previous = error_context_stack;
	error_context_stack = &ecb;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rc = SPI_execute_with_args("SELECT r.d FROM pg_catalog.read_intermediate_result($1, "
							   "'binary'::pg_catalog.citus_copy_format) AS r(d pg_catalog.bytea)",
							   1, types, values, NULL, true, 2);
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);

		full = (bytea *) PG_DETOAST_DATUM_COPY(v);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	if (full == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pass descriptor \"%s\" was not found", ref->name),
				 errdetail("Its intermediate result does not hold one descriptor."),
				 errhint("Let kernel_model_train or kernel_train_query run the pass aggregate.")));
	if (VARSIZE(full) != ref->full_len || VARSIZE(full) < sizeof(PassDescHeader) ||
		((PassDescHeader *) full)->key != ref->key || ((PassDescHeader *) full)->kind != ref->kind)
		bad_desc(psprintf("Intermediate result \"%s\" holds %zu bytes; its short descriptor names a descriptor of %llu bytes with another key or kind.",
						  ref->name, (size_t) VARSIZE(full), (unsigned long long) ref->full_len));
	error_context_stack = ecb.previous;
	return full;
}

/* Is run the pass of desc (the same bytes, or a short descriptor of them)? */
static bool
run_is(const PassRun *run, bytea *desc)
{
	if (run == NULL || VARATT_IS_EXTENDED(desc))
		return false;
	if (is_ref(desc))
		return ((PassDescRef *) desc)->key == run->key &&
			((PassDescRef *) desc)->full_len == VARSIZE(run->desc);
	if (VARSIZE(desc) < sizeof(PassDescHeader))
		return false;
	if (run->desc == desc)
		return true;

	/*
	 * Another copy (Citus packs the argument into a record per row): the
	 * same size and key.  A descriptor crafted to collide reaches only the
	 * pass of its own statement, whose states are checked as any state.
	 */
	return VARSIZE(run->desc) == VARSIZE(desc) &&
		((PassDescHeader *) desc)->magic == KM_PASS_DESC_MAGIC &&
		((PassDescHeader *) desc)->key == run->key;
}

/* The rebuilt pass's context is going: forget it. */
static void
forget_rebuilt(void *arg)
{
	if (rebuilt_run == arg)
		rebuilt_run = NULL;
}

/* km_train_env of a rebuilt pass: memory in its context, counted */
static void *
rebuilt_alloc(void *ctx, size_t bytes)
{
	(void) km_mem_reserve((MemoryContext) ctx, (double) bytes, "kernel_ml pass", false);
	return MemoryContextAllocExtended((MemoryContext) ctx, Max(bytes, 1), MCXT_ALLOC_HUGE);
}

static void
rebuilt_release(void *ctx, void *p)
{
}

PassRun *
pass_desc_run(bytea *desc)
{
	MemoryContext cxt;
	MemoryContext old;
	MemoryContextCallback *cb;
	PassDescHeader *h;
	PassRun    *run;
	km_train_env *env;
	km_error	err;
	km_pass    *pass;
	const PassDescRef *ref = NULL;

	if (run_is(live_run, desc))
		return live_run;
	if (run_is(rebuilt_run, desc))
		return rebuilt_run;
	if (is_ref(desc))
		ref = ref_check(desc);

	/*
	 * One rebuilt pass per process, for the transaction: Citus calls the
	 * transition through a new FmgrInfo for every row (its fn_mcxt may not
	 * outlive the row), so the pass lives in TopTransactionContext and the
	 * one of an earlier statement goes when another replaces it
	 */
	if (rebuilt_run != NULL)
		MemoryContextDelete(rebuilt_run->cxt);
	cxt = AllocSetContextCreate(TopTransactionContext, "kernel_ml pass", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(cxt);
	run = palloc0(sizeof(PassRun));
	if (ref != NULL)
		run->desc = read_ref(ref, cxt);
	else
	{
		run->desc = palloc(VARSIZE(desc));
		memcpy(run->desc, desc, VARSIZE(desc));
	}
	desc_decode(run->desc, &run->rules, cxt);
	h = (PassDescHeader *) run->desc;
	run->key = h->key;
	run->cxt = cxt;
	/* the rebuilt job keeps its env: it lives in cxt too */
	env = palloc0(sizeof(km_train_env));
	env->ctx = cxt;
	env->alloc = rebuilt_alloc;
	env->release = rebuilt_release;
	env->interrupt = km_interrupt;
	if (km_pass_rebuild(h->kind, (const char *) run->desc + sizeof(PassDescHeader) + h->labels_len,
						h->point_len, env, &pass, &err) != KM_OK)
	{
		err.status = KM_ERR_FORMAT;
		km_raise(&err);
	}
	if (pass->state_bytes != h->state_bytes || pass->chunk != h->chunk || pass->ordered)
		bad_desc(psprintf("Its pass \"%s\" has a state of %zu bytes and chunks of %zu rows; the descriptor gives %llu and %u.",
						  pass->what, pass->state_bytes, pass->chunk,
						  (unsigned long long) h->state_bytes, (unsigned) h->chunk));
	pass->side = run->rules.side;
	pass->fold = run->rules.fold;
	run->pass = pass;
	run->chunk = pass->chunk > 0 ? pass->chunk : KM_BLOCK_ROWS;
	run->thr = km_holdout_threshold(run->rules.test_fraction);
	run->hbuf = palloc(sizeof(double) * (run->rules.d + 1));
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = forget_rebuilt;
	cb->arg = run;
	MemoryContextRegisterResetCallback(cxt, cb);
	MemoryContextSwitchTo(old);
	/* the one before goes with its statement's context; this one is kept */
	rebuilt_run = run;
	return run;
}

PassRun *
pass_desc_run_of_key(uint64 key)
{
	if (live_run != NULL && live_run->key == key)
		return live_run;
	if (rebuilt_run != NULL && rebuilt_run->key == key)
		return rebuilt_run;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("pass aggregate state has no pass in this process"),
			 errdetail("A state of the pass with key %016llx reached a combine or final function of a process that neither runs that pass nor read its descriptor.",
					   (unsigned long long) key),
			 errhint("Let kernel_model_train or kernel_train_query run the pass aggregate.")));
}

/* Bytes of one buffered row of d features: x, y, hash, class, fold, held. */
static Size
buf_row_bytes(int d)
{
	return sizeof(double) * (Size) d + sizeof(double) + sizeof(uint64) +
		sizeof(uint32) + sizeof(int32) + sizeof(uint8);
}

/* Where a state's buffer starts: after its header and its pass state. */
static Size
buf_offset(bool external, uint64 state_bytes)
{
	Size		bo = MAXALIGN(sizeof(PassStateHeader));

	if (!external)
		bo = add_size(bo, MAXALIGN((Size) state_bytes));
	return bo;
}

Size
pass_state_size(const PassRun *run, bool external, Size cap)
{
	return add_size(buf_offset(external, run->pass->state_bytes),
					mul_size(cap, buf_row_bytes(run->rules.d)));
}

PassStateHeader *
pass_state_check(bytea *s, const PassRun *run)
{
	PassStateHeader *st = (PassStateHeader *) s;

	if (VARATT_IS_EXTENDED(s) || VARSIZE(s) < sizeof(PassStateHeader) ||
		st->magic != KM_PASS_STATE_MAGIC || st->key != run->key || st->external > 1 ||
		(st->external && !(run->live && run->live_state_taken)) ||
		st->state_bytes != run->pass->state_bytes || st->d != (uint32) run->rules.d ||
		st->cap > run->chunk || st->nbuf > st->cap || st->rows < 0 ||
		VARSIZE(s) != pass_state_size(run, st->external != 0, st->cap))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid pass aggregate state"),
				 errdetail("The state of %zu bytes is not one of pass \"%s\" (key %016llx).",
						   (size_t) VARSIZE_ANY(s), run->pass->what,
						   (unsigned long long) run->key),
				 errhint("Pass states are written by the pass aggregate for its own statement; do not build or change one.")));
	return st;
}

void *
pass_state_data(const PassRun *run, PassStateHeader *st)
{
	if (st->external)
		return run->live_state;
	return (char *) st + MAXALIGN(sizeof(PassStateHeader));
}

/* The buffer's arrays of a state (cap rows each, laid out by its header). */
typedef struct BufView
{
	double	   *X;
	double	   *y;
	uint64	   *hash;
	uint32	   *cls;
	int32	   *fold;
	uint8	   *held;
} BufView;

static BufView
buf_view(PassStateHeader *st)
{
	BufView		v;
	Size		cap = st->cap;

	v.X = (double *) ((char *) st + buf_offset(st->external != 0, st->state_bytes));
	v.y = v.X + cap * (Size) st->d;
	v.hash = (uint64 *) (v.y + cap);
	v.cls = (uint32 *) (v.hash + cap);
	v.fold = (int32 *) (v.cls + cap);
	v.held = (uint8 *) (v.fold + cap);
	return v;
}

/*
 * The state in memory is an expanded object (utils/expandeddatum.h): its
 * allocation holds a full chunk of rows, while its flat form, what a
 * parallel worker's tuple or Citus's worker_partial_agg ships, holds the
 * rows buffered only (cap = nbuf in the flat header).  nodeAgg and Citus
 * keep a read-write expanded state of the aggregate context's child in
 * place, so the transition fills the buffer without a copy per row.
 */
typedef struct PassStateX
{
	ExpandedObjectHeader hdr;
	PassStateHeader *st;		/* cap: a full chunk */
	PassRun    *run;			/* its pass, in this process */
} PassStateX;

/*
 * The flat form's size.  A state is flattened when it leaves its process
 * (a parallel worker's tuple, Citus's worker_partial_agg text), after its
 * last row: the rows still buffered are added into its pass state first,
 * as the combine would add them (a partial chunk of the same rows), so
 * that no row travels, whatever the size of the pass state.
 */
static Size
psx_flat_size(ExpandedObjectHeader *eohptr)
{
	PassStateX *x = (PassStateX *) eohptr;
	PassStateHeader *st = x->st;

	/* its pass still this process's (live_run, rebuilt_run: this file's) */
	if (st->nbuf > 0 && x->run != NULL && (x->run == live_run || x->run == rebuilt_run) &&
		x->run->key == st->key)
		pass_state_flush(x->run, st, st);

	return add_size(buf_offset(st->external != 0, st->state_bytes),
					mul_size(st->nbuf, buf_row_bytes((int) st->d)));
}

/* from's header, pass state and nbuf buffered rows into to (laid out for to->cap rows). */
static void
state_copy_into(PassStateHeader *to, PassStateHeader *from)
{
	BufView		a;
	BufView		b;
	Size		n = from->nbuf;
	uint32		cap = to->cap;
	int32		size = VARSIZE(to);

	memcpy(to, from, sizeof(PassStateHeader));
	to->cap = cap;
	SET_VARSIZE(to, size);
	if (!from->external && from->state_bytes > 0)
		memcpy((char *) to + MAXALIGN(sizeof(PassStateHeader)),
			   (char *) from + MAXALIGN(sizeof(PassStateHeader)), from->state_bytes);
	a = buf_view(to);
	b = buf_view(from);
	memcpy(a.X, b.X, sizeof(double) * n * to->d);
	memcpy(a.y, b.y, sizeof(double) * n);
	memcpy(a.hash, b.hash, sizeof(uint64) * n);
	memcpy(a.cls, b.cls, sizeof(uint32) * n);
	memcpy(a.fold, b.fold, sizeof(int32) * n);
	memcpy(a.held, b.held, n);
}

static void
psx_flatten(ExpandedObjectHeader *eohptr, void *result, Size allocated_size)
{
	PassStateHeader *st = ((PassStateX *) eohptr)->st;
	PassStateHeader *to = result;

	Assert(allocated_size == psx_flat_size(eohptr));
	memset(to, 0, MAXALIGN(sizeof(PassStateHeader)));
	SET_VARSIZE(to, allocated_size);
	to->cap = st->nbuf;
	state_copy_into(to, st);
}

static const ExpandedObjectMethods pass_state_methods = {psx_flat_size, psx_flatten};

/* The expanded state of a datum, or NULL when it is not one. */
static PassStateX *
state_expanded(Datum d)
{
	ExpandedObjectHeader *eoh;

	if (!VARATT_IS_EXTERNAL_EXPANDED(DatumGetPointer(d)))
		return NULL;
	eoh = DatumGetEOHP(d);
	return eoh->eoh_methods == &pass_state_methods ? (PassStateX *) eoh : NULL;
}

PassStateHeader *
pass_state_new(PassRun *run, MemoryContext aggcxt, bool external, Datum *out)
{
	Size		size = pass_state_size(run, external, run->chunk);
	MemoryContext objcxt;
	PassStateX *x;
	PassStateHeader *st;

	(void) km_mem_reserve(aggcxt, (double) size, "kernel_ml pass", false);
	objcxt = AllocSetContextCreate(aggcxt, "kernel_ml pass state", ALLOCSET_SMALL_SIZES);
	x = MemoryContextAlloc(objcxt, sizeof(PassStateX));
	EOH_init_header(&x->hdr, &pass_state_methods, objcxt);
	st = km_alloc0_interruptible(objcxt, size);
	SET_VARSIZE(st, size);
	st->magic = KM_PASS_STATE_MAGIC;
	st->key = run->key;
	st->state_bytes = run->pass->state_bytes;
	st->d = (uint32) run->rules.d;
	st->cap = (uint32) run->chunk;
	st->err.status = KM_OK;
	st->external = external ? 1 : 0;
	x->st = st;
	x->run = run;
	if (out != NULL)
		*out = EOHPGetRWDatum(&x->hdr);
	return st;
}

uint64
pass_state_key(Datum d)
{
	PassStateX *x = state_expanded(d);
	bytea	   *s;

	if (x != NULL)
		return x->st->key;
	s = (bytea *) PG_DETOAST_DATUM(d);
	if (VARSIZE(s) < sizeof(PassStateHeader) ||
		((PassStateHeader *) s)->magic != KM_PASS_STATE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid pass aggregate state"),
				 errdetail("The value of %zu bytes is not a kernel_ml pass state.",
						   (size_t) VARSIZE(s)),
				 errhint("Pass states are written by the pass aggregate for its own statement; do not build or change one.")));
	return ((PassStateHeader *) s)->key;
}

PassStateHeader *
pass_state_arg(Datum d, PassRun *run, MemoryContext cxt, bool writable, Datum *out)
{
	PassStateX *x = state_expanded(d);
	PassStateHeader *st;
	PassStateHeader *w;

	if (x != NULL && x->st->key == run->key && x->st->cap == run->chunk &&
		x->st->state_bytes == run->pass->state_bytes && x->st->d == (uint32) run->rules.d &&
		(!writable || VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d))))
	{
		/* ours, in place (a read-only one is read only) */
		if (out != NULL)
			*out = d;
		return x->st;
	}
	st = pass_state_check((bytea *) PG_DETOAST_DATUM(d), run);
	if (!writable)
		return st;
	/* a flat state (shipped, or copied): into a new one of a full chunk */
	w = pass_state_new(run, cxt, st->external != 0, out);
	state_copy_into(w, st);
	return w;
}

void
pass_state_flush(PassRun *run, PassStateHeader *st, PassStateHeader *from)
{
	km_pass    *pass = run->pass;
	BufView		v = buf_view(from);
	bool		labels = run->rules.target == PASS_FLOAT8_LABELS ||
		run->rules.target == PASS_TEXT_LABELS;
	km_block	b = {.n = from->nbuf, .d = run->rules.d, .X = v.X,
		.y = labels ? NULL : v.y, .cls = labels ? v.cls : NULL,
		.hash = v.hash, .fold = run->rules.folds > 0 ? v.fold : NULL,
	.held = run->rules.sides ? v.held : NULL};
	km_error	err;

	if (from->nbuf == 0)
		return;
	if (from == st)
		st->nbuf = 0;
	if (st->err.status != KM_OK)
		return;
	if (pass->add(pass, &b, (size_t) st->added, pass_state_data(run, st), &err) != KM_OK)
		st->err = err;
	st->added += (int64) b.n;
	if (run->live)
	{
		pass->rows_done += b.n;
		if (pass->rows_all > 0)
			km_progress_step("%zu of %zu rows", pass->rows_done, pass->rows_all);
	}
	CHECK_FOR_INTERRUPTS();
}

/* The class of a label (the descriptor's), or -1. */
static int
label_class(const PassRun *run, Datum y, double *key)
{
	const PassRules *r = &run->rules;

	if (r->target == PASS_TEXT_LABELS)
	{
		text	   *t = DatumGetTextPP(y);
		const char *s = VARDATA_ANY(t);
		int			len = (int) VARSIZE_ANY_EXHDR(t);

		*key = (double) hash_bytes((const unsigned char *) s, len);
		for (int l = 0; l < r->nlabels; l++)
			if (r->lab_len[l] == len && memcmp(r->lab_text[l], s, len) == 0)
				return (int) r->lab_class[l];
	}
	else
	{
		double		v = DatumGetFloat8(y);

		*key = v;
		if (v == 0.0)
			v = 0.0;
		for (int l = 0; l < r->nlabels; l++)
			if (r->lab_value[l] == v)
				return (int) r->lab_class[l];
	}
	return -1;
}

void
pass_state_row(PassRun *run, PassStateHeader *st, ArrayType *f, Datum y, bool ynull)
{
	const PassRules *r = &run->rules;
	int			d = r->d;
	BufView		v;
	double	   *x;
	double	   *hbuf = run->hbuf;
	double		key;
	int			cls = 0;
	int			len;
	bool		held;

	if (f == NULL || ynull || st->err.status != KM_OK)
		return;
	/* a full buffer (a state handed in whole) is added before a row goes in */
	if (st->nbuf >= st->cap)
		pass_state_flush(run, st, st);
	len = km_array_length(f, "a row of the pass");
	if (len != d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("A row has %d features; the pass reads rows of %d.", len, d),
				 errhint("Make the query return arrays of one length.")));
	v = buf_view(st);
	x = v.X + (Size) st->nbuf * d;
	km_array_copy(f, d, x, "a row of the pass");
	if (r->target == PASS_ANY)
		key = 0.0;
	else if (r->target == PASS_VALUES)
	{
		key = DatumGetFloat8(y);
		if (!isfinite(key))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("target values must be finite"),
					 errdetail("A target of the pass is %s.", float8out_internal(key)),
					 errhint("Filter the rows with a non-finite target out of the query.")));
	}
	else if ((cls = label_class(run, y, &key)) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("training query returned different rows on different passes"),
				 errdetail("A training row of the %s pass has a label the counting pass did not read.",
						   pnstrdup(run->pass->what, strcspn(run->pass->what, ":"))),
				 errhint("Make the query repeatable: no random(), nextval() or other volatile filter; for a sample, use TABLESAMPLE ... REPEATABLE (seed).")));
	held = km_row_held_out(x, d, key, r->seed, run->thr, hbuf);
	if (held && !r->all_rows)
		return;
	v.held[st->nbuf] = held ? 1 : 0;
	v.fold[st->nbuf] = r->folds > 0 ? km_row_fold(x, d, key, r->seed, r->folds, hbuf) : 0;
	for (int j = 0; j < d; j++)
		hbuf[j] = x[j] + 0.0;	/* -0 hashes as 0 (km_row_hashes) */
	v.hash[st->nbuf] = hash_bytes_extended((const unsigned char *) hbuf,
										   (int) (sizeof(double) * d), (uint64) r->seed);
	v.y[st->nbuf] = r->target == PASS_VALUES ? key : 0.0;
	v.cls[st->nbuf] = (uint32) cls;
	st->nbuf++;
	st->rows++;
	if (st->nbuf == st->cap)
		pass_state_flush(run, st, st);
}
