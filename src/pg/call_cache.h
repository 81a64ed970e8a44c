/*
 * call_cache.h - what the basis and training passes of approximate models
 * keep between rows (call_cache.c): parsed options and decoded bases in a
 * small backend cache of entries, found from a call site's fn_extra.
 */
#ifndef KM_CALL_CACHE_H
#define KM_CALL_CACHE_H

#include "postgres.h"

#include "fmgr.h"
#include "utils/jsonb.h"

#define CALL_SLOTS 4

typedef enum CallKind
{
	CALL_BASIS = 1,
	CALL_TRAIN
} CallKind;

/*
 * What fn_extra holds: an entry, the state last checked against it, and
 * for the training pass the basis argument compared in full with the
 * entry's (a constant's or parameter's Datum, kept while it cannot change)
 * and whether this call site made a state itself (so that the aggregate
 * has no INITCOND: every state it sees is one this call site returned).
 */
typedef struct CallHolder
{
	int			slot;			/* -1: none yet */
	uint64		id;
	const void *state;
	const void *basis;			/* NULL: none */
	bool		basis_scan;		/* an executor parameter: until the next new state */
	bool		own_states;
	struct HTAB *states;		/* state -> entry id it was made or checked with */
} CallHolder;

/* The call site's holder (made on first use, in fn_mcxt). */
extern CallHolder *km_call_holder(FunctionCallInfo fcinfo);

/* The entry h names, or NULL when it has none of this kind or it was evicted. */
extern void *km_call_bound(const CallHolder *h, CallKind kind);

/* The entry of slot for h (its state and basis forgotten). */
extern void *km_call_bind(CallHolder *h, int slot);

/*
 * The states of an aggregate without INITCOND (own_states: each one made
 * by this call site from NULL) and the entry each was made or last checked
 * with: so that groups whose states alternate row by row (a hashed GROUP
 * BY) need not compare their bases in full on every row.  A state is
 * recorded when made or checked (in fn_mcxt); the entry id of a state, 0
 * when unknown or when the aggregate has an INITCOND.
 */
extern void km_call_state_seen(FunctionCallInfo fcinfo, const void *state);
extern uint64 km_call_state_entry(const CallHolder *h, const void *state);

/* The entry in slot when it is of kind, else NULL. */
extern void *km_call_slot(int slot, CallKind kind);

/*
 * A context for an entry being built: under the current context, so that
 * an error while building frees it; km_call_insert moves it into the cache.
 */
extern MemoryContext km_call_entry_context(void);

/* A complete entry into the cache; its slot. */
extern int	km_call_insert(CallKind kind, MemoryContext cxt, void *call);

/* A copy of a jsonb (NULL for none) in the current memory context. */
extern Jsonb *km_jsonb_copy(const Jsonb *j);

/* Whether two jsonb values (NULL for none) have the same bytes. */
extern bool km_jsonb_same(const Jsonb *a, const Jsonb *b);

#endif							/* KM_CALL_CACHE_H */
