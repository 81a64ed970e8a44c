/*
 * call_cache.c - what the basis and training passes of approximate
 * models (approx_basis.c, approx.c) keep between rows (call_cache.h).
 */
#include "postgres.h"

#include "access/xact.h"
#include "fmgr.h"
#include "utils/jsonb.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "call_cache.h"

/*
 * Parsed options and decoded bases, kept between rows.
 *
 * A call site keeps a CallHolder in fn_extra naming one entry of a small
 * backend cache (call_slots).  PostgreSQL's own aggregation keeps the
 * FmgrInfo, so the holder finds its entry on every row; Citus's
 * worker_partial_agg calls fmgr_info for every row, so fn_extra is always
 * empty there, and the cache is what saves parsing the options, decoding
 * the basis and drawing rff's random features once per row.  An entry is
 * keyed by the options' bytes and, for the training pass, the basis's
 * bytes (all of them, or its TOAST pointer, or a constant's Datum compared
 * in full on an earlier row: approx.c); it does not
 * change once built, scratch buffers aside.  Entries live under
 * TopTransactionContext, so the cache empties at the end of every
 * transaction, and a new entry first evicts those no statement since the
 * current one began has used (bases and random features can be large).
 * A holder finds its entry by slot and id, so an evicted entry is rebuilt,
 * never read.
 */
typedef struct CallSlot
{
	uint64		id;				/* 0: empty */
	CallKind	kind;
	MemoryContext cxt;			/* the entry's own, under call_cache_cxt */
	void	   *call;			/* BasisCall or TrainCall, in cxt */
	uint64		used;			/* LRU clock */
	TimestampTz stmt;			/* start of the statement that used it last */
} CallSlot;

static CallSlot call_slots[CALL_SLOTS];
static MemoryContext call_cache_cxt = NULL;
static uint64 call_next_id = 1;
static uint64 call_clock = 0;

/* call_cache_cxt is going away with its transaction: so are the entries */
static void
call_cache_gone(void *arg)
{
	memset(call_slots, 0, sizeof(call_slots));
	call_cache_cxt = NULL;
}

CallHolder *
km_call_holder(FunctionCallInfo fcinfo)
{
	CallHolder *h = fcinfo->flinfo->fn_extra;

	if (h == NULL)
	{
		h = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(CallHolder));
		h->slot = -1;
		fcinfo->flinfo->fn_extra = h;
	}
	return h;
}

static void *
call_touch(int slot)
{
	call_slots[slot].used = ++call_clock;
	call_slots[slot].stmt = GetCurrentStatementStartTimestamp();
	return call_slots[slot].call;
}

/* The entry h names, or NULL when it has none of this kind or it was evicted. */
void *
km_call_bound(const CallHolder *h, CallKind kind)
{
	if (h->slot < 0 || call_slots[h->slot].id != h->id ||
		call_slots[h->slot].kind != kind)
		return NULL;
	return call_touch(h->slot);
}

void *
km_call_bind(CallHolder *h, int slot)
{
	h->slot = slot;
	h->id = call_slots[slot].id;
	h->state = NULL;
	h->basis = NULL;
	return call_touch(slot);
}

/*
 * A context for an entry being built: under the current context, so that
 * an error while building frees it; call_insert moves it into the cache.
 */
MemoryContext
km_call_entry_context(void)
{
	return AllocSetContextCreate(CurrentMemoryContext, "kernel_ml call",
								 ALLOCSET_SMALL_SIZES);
}

static void
call_evict(CallSlot *s)
{
	MemoryContextDelete(s->cxt);
	memset(s, 0, sizeof(*s));
}

/* A complete entry into the cache; its slot. */
int
km_call_insert(CallKind kind, MemoryContext cxt, void *call)
{
	TimestampTz now = GetCurrentStatementStartTimestamp();
	int			victim = -1;

	if (call_cache_cxt == NULL)
	{
		MemoryContextCallback *cb;

		call_cache_cxt = AllocSetContextCreate(TopTransactionContext, "kernel_ml call cache",
											   ALLOCSET_SMALL_SIZES);
		cb = MemoryContextAlloc(call_cache_cxt, sizeof(MemoryContextCallback));
		cb->func = call_cache_gone;
		cb->arg = NULL;
		MemoryContextRegisterResetCallback(call_cache_cxt, cb);
	}
	for (int i = 0; i < CALL_SLOTS; i++)
	{
		if (call_slots[i].id != 0 && call_slots[i].stmt != now)
			call_evict(&call_slots[i]);
		if (victim < 0 ||
			(call_slots[victim].id != 0 &&
			 (call_slots[i].id == 0 || call_slots[i].used < call_slots[victim].used)))
			victim = i;
	}
	if (call_slots[victim].id != 0)
		call_evict(&call_slots[victim]);
	MemoryContextSetParent(cxt, call_cache_cxt);
	call_slots[victim].id = call_next_id++;
	call_slots[victim].kind = kind;
	call_slots[victim].cxt = cxt;
	call_slots[victim].call = call;
	return victim;
}

typedef struct StateEntry
{
	const void *state;			/* the key */
	uint64		id;
} StateEntry;

void
km_call_state_seen(FunctionCallInfo fcinfo, const void *state)
{
	CallHolder *h = fcinfo->flinfo->fn_extra;
	StateEntry *e;

	if (!h->own_states)
		return;
	if (h->states == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(const void *);
		ctl.entrysize = sizeof(StateEntry);
		ctl.hcxt = fcinfo->flinfo->fn_mcxt;
		h->states = hash_create("kernel_ml aggregate states", 16, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(h->states, &state, HASH_ENTER, NULL);
	e->id = h->id;
}

uint64
km_call_state_entry(const CallHolder *h, const void *state)
{
	StateEntry *e;

	if (!h->own_states || h->states == NULL)
		return 0;
	e = hash_search(h->states, &state, HASH_FIND, NULL);
	return e != NULL ? e->id : 0;
}

void *
km_call_slot(int slot, CallKind kind)
{
	if (call_slots[slot].id == 0 || call_slots[slot].kind != kind)
		return NULL;
	return call_slots[slot].call;
}

/* A copy of a jsonb (NULL for none) in the current memory context. */
Jsonb *
km_jsonb_copy(const Jsonb *j)
{
	Jsonb	   *c;

	if (j == NULL)
		return NULL;
	c = palloc(VARSIZE(j));
	memcpy(c, j, VARSIZE(j));
	return c;
}

bool
km_jsonb_same(const Jsonb *a, const Jsonb *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return VARSIZE(a) == VARSIZE(b) && memcmp(a, b, VARSIZE(a)) == 0;
}
