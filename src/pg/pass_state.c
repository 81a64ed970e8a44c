/*
 * pass_state.c - the pass aggregate's states (pass_desc.h): the bytea
 * state and its expanded form, a row into its buffer, a chunk into its
 * pass state, two states combined, the bytes a state carries.  Split from
 * pass_desc.c (the descriptor and the pass of a statement in a process).
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/expandeddatum.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "pass_desc.h"
#include "pgutil.h"
#include "progress.h"

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
		st->cap > run->chunk || st->nbuf > st->cap || st->rows < 0 || st->skipped < 0 ||
		st->carry_len != run->carry_len ||
		VARSIZE(s) != add_size(pass_state_size(run, st->external != 0, st->cap),
							   MAXALIGN(run->carry_len)) ||
		(run->carry_len > 0 &&
		 memcmp((char *) s + VARSIZE(s) - MAXALIGN(run->carry_len), run->carry,
				run->carry_len) != 0))
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
	char	   *carry;			/* a copy of its run's carry (st->carry_len), or NULL */
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

	/* its pass still this process's (pass_desc.c's live, rebuilt and owned runs) */
	if (st->nbuf > 0 && pass_run_known(x->run) && x->run->key == st->key)
		pass_state_flush(x->run, st, st);

	return add_size(add_size(buf_offset(st->external != 0, st->state_bytes),
							 mul_size(st->nbuf, buf_row_bytes((int) st->d))),
					MAXALIGN(st->carry_len));
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
	if (st->carry_len > 0)
	{
		Size		at = allocated_size - MAXALIGN(st->carry_len);

		memset((char *) to + at, 0, MAXALIGN(st->carry_len));
		memcpy((char *) to + at, ((PassStateX *) eohptr)->carry, st->carry_len);
	}
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

	/* counted: its size and carry, or what its owner says a state counts */
	(void) km_mem_reserve(aggcxt, run->state_grant > 0 ? run->state_grant :
						  (double) size + (double) run->carry_len,
						  run->what != NULL ? run->what : "kernel_ml pass", false);
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
	x->carry = NULL;
	st->carry_len = run->carry_len;
	if (run->carry_len > 0)
	{
		/* the state can leave the process after its run is gone: its own copy */
		x->carry = MemoryContextAlloc(objcxt, run->carry_len);
		memcpy(x->carry, run->carry, run->carry_len);
	}
	if (out != NULL)
		*out = EOHPGetRWDatum(&x->hdr);
	return st;
}

/*
 * A flat state's bytes, detoasted, at an address its header may be read at:
 * a bytea in a table's row (or any tuple) is only int-aligned, and the
 * header holds 64-bit fields, so such a value is copied (counted) first.
 */
static bytea *
state_flat(Datum d)
{
	bytea	   *s = (bytea *) PG_DETOAST_DATUM(d);
	bytea	   *c;

	if ((uintptr_t) s % MAXIMUM_ALIGNOF == 0)
		return s;
	(void) km_mem_reserve(CurrentMemoryContext, (double) VARSIZE(s), "kernel_ml pass", false);
	c = MemoryContextAllocExtended(CurrentMemoryContext, VARSIZE(s), MCXT_ALLOC_HUGE);
	memcpy(c, s, VARSIZE(s));
	return c;
}

PassStateHeader *
pass_state_header(Datum d)
{
	PassStateX *x = state_expanded(d);
	bytea	   *s;

	if (x != NULL)
		return x->st;
	s = state_flat(d);
	if (VARSIZE(s) < sizeof(PassStateHeader) ||
		((PassStateHeader *) s)->magic != KM_PASS_STATE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid pass aggregate state"),
				 errdetail("The value of %zu bytes is not a kernel_ml pass state.",
						   (size_t) VARSIZE(s)),
				 errhint("Pass states are written by the pass aggregate for its own statement; do not build or change one.")));
	return (PassStateHeader *) s;
}

uint64
pass_state_key(Datum d)
{
	return pass_state_header(d)->key;
}

PassStateHeader *
pass_state_arg(Datum d, PassRun *run, MemoryContext cxt, bool writable, Datum *out)
{
	PassStateX *x = state_expanded(d);
	PassStateHeader *st;
	PassStateHeader *w;

	if (x != NULL && x->st->key == run->key && x->st->cap == run->chunk &&
		x->st->state_bytes == run->pass->state_bytes && x->st->d == (uint32) run->rules.d &&
		x->st->carry_len == run->carry_len &&
		(!writable || VARATT_IS_EXTERNAL_EXPANDED_RW(DatumGetPointer(d))))
	{
		/* ours, in place (a read-only one is read only) */
		if (out != NULL)
			*out = d;
		return x->st;
	}
	st = pass_state_check(state_flat(d), run);
	if (!writable)
		return st;
	/* a flat state (shipped, or copied): into a new one of a full chunk (its carry: run's) */
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
	km_blas_setup_chunk();
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

	if (f == NULL || ynull)
		st->skipped++;
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

double *
pass_state_slot(PassRun *run, PassStateHeader *st)
{
	if (st->nbuf >= st->cap)
		pass_state_flush(run, st, st);
	return buf_view(st).X + (Size) st->nbuf * st->d;
}

void
pass_state_commit(PassRun *run, PassStateHeader *st, double y, uint64 hash)
{
	BufView		v = buf_view(st);

	Assert((run->rules.target == PASS_VALUES || run->rules.target == PASS_ANY) &&
		   run->rules.all_rows && !run->rules.sides && run->rules.folds == 0);
	v.y[st->nbuf] = y;
	v.hash[st->nbuf] = hash;
	v.cls[st->nbuf] = 0;
	v.fold[st->nbuf] = 0;
	v.held[st->nbuf] = 0;
	st->nbuf++;
	st->rows++;
	if (st->nbuf == st->cap)
		pass_state_flush(run, st, st);
}

const char *
pass_state_carry(Datum d, Size *len)
{
	PassStateX *x = state_expanded(d);
	PassStateHeader *st;
	Size		size;
	Size		rows;

	*len = 0;
	if (x != NULL)
	{
		*len = x->st->carry_len;
		return x->carry;
	}
	st = (PassStateHeader *) state_flat(d);
	size = VARSIZE(st);
	/* untrusted: every field bounded before the sizes are added */
	if (size < sizeof(PassStateHeader) || st->magic != KM_PASS_STATE_MAGIC ||
		st->external != 0 || st->state_bytes > MaxAllocSize || st->d < 1 ||
		st->d > (1 << 20) || st->nbuf > KM_BLOCK_ROWS || st->carry_len > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid pass aggregate state"),
				 errdetail("The value of %zu bytes is not a kernel_ml pass state that carries its pass.",
						   (size_t) size),
				 errhint("Pass states are written by the pass aggregate for its own statement; do not build or change one.")));
	rows = buf_offset(false, st->state_bytes) + (Size) st->nbuf * buf_row_bytes((int) st->d);
	if (st->carry_len == 0)
		return NULL;
	if (rows + MAXALIGN(st->carry_len) != size)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("invalid pass aggregate state"),
				 errdetail("The state of %zu bytes does not hold the %llu bytes it carries behind its rows.",
						   (size_t) size, (unsigned long long) st->carry_len),
				 errhint("Pass states are written by the pass aggregate for its own statement; do not build or change one.")));
	*len = st->carry_len;
	return (const char *) st + rows;
}

PassStateHeader *
pass_state_start(PassRun *run, MemoryContext cxt, Datum *out)
{
	bool		external = run->live && run->live_state != NULL && !run->live_state_taken;
	PassStateHeader *st = pass_state_new(run, cxt, external, out);

	if (external)
		run->live_state_taken = true;
	else if (run->pass->init != NULL)
		run->pass->init(run->pass, pass_state_data(run, st));
	return st;
}

Datum
pass_states_combine(PassRun *run, FunctionCallInfo fcinfo, MemoryContext aggcxt)
{
	PassStateHeader *a;
	PassStateHeader *b;
	km_error	err;
	Datum		out;

	b = pass_state_arg(PG_GETARG_DATUM(1), run, aggcxt, false, NULL);
	if (PG_ARGISNULL(0))
	{
		/* the learner's backend adds the first state into its own */
		if (!(run->live && run->live_state != NULL && !run->live_state_taken))
		{
			(void) pass_state_arg(PG_GETARG_DATUM(1), run, aggcxt, true, &out);
			PG_RETURN_DATUM(out);
		}
		a = pass_state_start(run, aggcxt, &out);
	}
	else
		a = pass_state_arg(PG_GETARG_DATUM(0), run, aggcxt, true, &out);
	if (b->external && !a->external)
	{
		/* the one that adds into the learner's state takes the other */
		PassStateHeader *t;

		t = pass_state_arg(PG_GETARG_DATUM(1), run, aggcxt, true, &out);
		b = a;
		a = t;
	}
	/* b's rows not added yet go into a's pass state, then the two add */
	km_blas_setup_chunk();
	pass_state_flush(run, a, b);
	if (a->err.status == KM_OK && b->err.status != KM_OK)
		a->err = b->err;
	if (a->err.status == KM_OK &&
		km_pass_combine(run->pass, pass_state_data(run, a), pass_state_data(run, b), &err) != KM_OK)
		a->err = err;
	a->rows += b->rows;
	a->skipped += b->skipped;
	PG_RETURN_DATUM(out);
}
