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
/* The runs their owners made (pass_run_make), while their contexts live. */
static List *owned_runs = NIL;

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

/* What a pass's env allocates in: its context, and the label it is counted under (NULL: not). */
typedef struct PassEnvCtx
{
	MemoryContext cxt;
	const char *what;
} PassEnvCtx;

/* km_train_env of a rebuilt or owned pass: memory in its context, counted */
static void *
rebuilt_alloc(void *ctx, size_t bytes)
{
	PassEnvCtx *e = ctx;

	if (e->what != NULL)
		(void) km_mem_reserve(e->cxt, (double) bytes, e->what, false);
	return MemoryContextAllocExtended(e->cxt, Max(bytes, 1), MCXT_ALLOC_HUGE);
}

static void
rebuilt_release(void *ctx, void *p)
{
}

km_train_env *
pass_env_make(MemoryContext cxt, const char *what)
{
	km_train_env *env = MemoryContextAllocZero(cxt, sizeof(km_train_env));
	PassEnvCtx *e = MemoryContextAlloc(cxt, sizeof(PassEnvCtx));

	e->cxt = cxt;
	e->what = what;
	env->ctx = e;
	env->alloc = rebuilt_alloc;
	env->release = rebuilt_release;
	env->interrupt = km_interrupt;
	return env;
}

/*
 * The pass of run->desc (a copy in cxt, its rules decoded as untrusted
 * bytes into run->rules), rebuilt in cxt by the core from its point.
 */
static km_pass *
rebuild_pass(PassRun *run, MemoryContext cxt)
{
	PassDescHeader *h;
	km_error	err;
	km_pass    *pass;

	desc_decode(run->desc, &run->rules, cxt);
	h = (PassDescHeader *) run->desc;
	if (km_pass_rebuild(h->kind, (const char *) run->desc + sizeof(PassDescHeader) + h->labels_len,
						h->point_len, pass_env_make(cxt, "kernel_ml pass"), &pass, &err) != KM_OK)
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
	return pass;
}

PassRun *
pass_desc_run(bytea *desc)
{
	MemoryContext cxt;
	MemoryContext old;
	MemoryContextCallback *cb;
	PassRun    *run;
	const PassDescRef *ref = NULL;

	/*
	 * A bytea inside a tuple (a table's row, or the record Citus packs a
	 * pushed-down aggregate's arguments into) is only int-aligned, and the
	 * header holds 64-bit fields: read such a value from an aligned copy
	 * (in the row's context)
	 */
	if ((uintptr_t) desc % MAXIMUM_ALIGNOF != 0)
	{
		bytea	   *c = palloc(VARSIZE(desc));

		memcpy(c, desc, VARSIZE(desc));
		desc = c;
	}
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
	/* the rebuilt job keeps its env: it lives in cxt too */
	run->pass = rebuild_pass(run, cxt);
	run->key = ((PassDescHeader *) run->desc)->key;
	run->cxt = cxt;
	run->chunk = run->pass->chunk > 0 ? run->pass->chunk : KM_BLOCK_ROWS;
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

/* An owned run's context is going: forget it. */
static void
forget_owned(void *arg)
{
	owned_runs = list_delete_ptr(owned_runs, arg);
}

bool
pass_run_known(const PassRun *run)
{
	return run != NULL && (run == live_run || run == rebuilt_run ||
						   list_member_ptr(owned_runs, run));
}

PassRun *
pass_run_make(km_pass *pass, const PassRules *rules, const void *carry, Size carry_len,
			  Size desc_off, MemoryContext cxt)
{
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PassRun    *run = palloc0(sizeof(PassRun));
	MemoryContextCallback *cb;
	char	   *copy = palloc(carry_len);

	Assert(desc_off + sizeof(PassDescHeader) <= carry_len && desc_off % MAXIMUM_ALIGNOF == 0);
	memcpy(copy, carry, carry_len);
	run->carry = copy;
	run->carry_len = carry_len;
	run->desc = (bytea *) (copy + desc_off);
	run->rules = *rules;
	run->pass = pass;
	run->chunk = pass->chunk > 0 ? pass->chunk : KM_BLOCK_ROWS;
	run->cxt = cxt;
	run->thr = km_holdout_threshold(rules->test_fraction);
	run->hbuf = palloc(sizeof(double) * (rules->d + 1));
	run->key = hash_bytes_extended((const unsigned char *) copy, (int) carry_len, KEY_SEED);
	cb = palloc(sizeof(MemoryContextCallback));
	cb->func = forget_owned;
	cb->arg = run;
	MemoryContextRegisterResetCallback(cxt, cb);
	MemoryContextSwitchTo(TopMemoryContext);
	owned_runs = lappend(owned_runs, run);
	MemoryContextSwitchTo(old);
	return run;
}

PassRun *
pass_run_from_carry(const char *carry, Size carry_len, Size desc_off, MemoryContext cxt)
{
	Size		len = desc_off < carry_len ? carry_len - desc_off : 0;
	PassRun		tmp;
	PassRun    *run;
	bytea	   *desc;
	uint32		vl;

	if (len < sizeof(PassDescHeader) || len > MaxAllocSize || desc_off % MAXIMUM_ALIGNOF != 0)
		bad_desc("The state carries a descriptor shorter than its header.");
	memcpy(&vl, carry + desc_off, sizeof(vl));
	if (VARATT_IS_EXTENDED((bytea *) &vl) || VARSIZE(&vl) != len)
		bad_desc(psprintf("The state carries %zu bytes of descriptor; its length word gives another length.",
						  (size_t) len));
	(void) km_mem_reserve(cxt, 2.0 * (double) carry_len, "kernel_ml pass", false);
	desc = MemoryContextAlloc(cxt, len);
	memcpy(desc, carry + desc_off, len);
	memset(&tmp, 0, sizeof(tmp));
	tmp.desc = desc;
	tmp.pass = rebuild_pass(&tmp, cxt);
	run = pass_run_make(tmp.pass, &tmp.rules, carry, carry_len, desc_off, cxt);
	pfree(desc);
	return run;
}

/*
 * Runs rebuilt from carried bytes, for the transaction (their contexts
 * under TopTransactionContext, as the rebuilt pass's): the two-pass
 * aggregates' combine and final functions in a process that ran none of
 * their transitions.
 */
#define CARRIED_RUNS 4
static PassRun *carried[CARRIED_RUNS];
static int	carried_next = 0;

/* A carried run's context is going: forget it. */
static void
forget_carried(void *arg)
{
	for (int i = 0; i < CARRIED_RUNS; i++)
		if (carried[i] == arg)
			carried[i] = NULL;
}

PassRun *
pass_run_carried(uint64 key)
{
	for (int i = 0; i < CARRIED_RUNS; i++)
		if (carried[i] != NULL && carried[i]->key == key)
			return carried[i];
	return NULL;
}

PassRun *
pass_run_keep_carried(const char *carry, Size carry_len, Size desc_off, const char *what,
					  double state_grant)
{
	/* built under the current context (an error frees it), then kept for the transaction */
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml carried pass",
											  ALLOCSET_SMALL_SIZES);
	MemoryContextCallback *cb;
	PassRun    *run = pass_run_from_carry(carry, carry_len, desc_off, cxt);

	run->what = what;
	run->state_grant = state_grant;
	cb = MemoryContextAlloc(cxt, sizeof(MemoryContextCallback));
	cb->func = forget_carried;
	cb->arg = run;
	MemoryContextRegisterResetCallback(cxt, cb);
	MemoryContextSetParent(cxt, TopTransactionContext);
	if (carried[carried_next] != NULL)
		MemoryContextDelete(carried[carried_next]->cxt);
	carried[carried_next] = run;
	carried_next = (carried_next + 1) % CARRIED_RUNS;
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
