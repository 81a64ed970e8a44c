/*
 * pass_desc.h - the pass aggregate's descriptor and states (issue 28,
 * DESIGN-0.4.md step 5): what the aggregate host (src/catalog/host_agg.c)
 * hands the pass aggregate (src/sql/pass_agg.c) as its one constant
 * argument, and the fixed-size bytea state the aggregate's transition,
 * combine and final functions pass along.
 *
 * A descriptor is a bytea: a header (magic, version, byte order, the
 * pass's kind, state size and chunk, a 64-bit key over every byte after
 * the header), the host's row rules (features per row, what the second
 * column is, the split's seed and fraction, the folds, the pass's side,
 * the labels and their classes) and the learner's point of the pass
 * (learn/pass.h point_write: its basis, its coefficients).  Any role can
 * call the pass aggregate, so a descriptor is untrusted input: decoded
 * once per statement and process, bounds-checked, its key recomputed,
 * its point rebuilt by the core as untrusted bytes (learner.h
 * km_pass_rebuild).
 *
 * Where the pass comes from: in the learner's own backend the host
 * registers the live pass (pass_desc_live) before the statement runs, so
 * the transitions it runs itself and every combine and final use the
 * learner's pass as it is; a parallel worker (or a Citus shard) rebuilds
 * the pass from the descriptor once, keyed by the descriptor's key.
 *
 * A state is a bytea: a header (magic,
 * the descriptor's key, so that a state is never taken for another pass's;
 * the rows it read; the first error of its adds), the pass's state
 * (state_bytes) and a buffer of up to one chunk of rows not yet added.  In
 * memory it is an expanded object whose buffer holds a full chunk; its
 * flat form, what travels (a parallel worker's tuple, Citus's
 * worker_partial_agg text), holds only the rows buffered (issue 33: an
 * empty buffer ships nothing).
 * The transition fills the buffer and adds a full chunk; combine adds the
 * other state's buffered rows into its own state, then combines the two
 * pass states (learn/pass.h km_pass_combine); final adds what is
 * buffered.
 */
#ifndef KM_PASS_DESC_H
#define KM_PASS_DESC_H

#include "postgres.h"

#include "fmgr.h"

#include "learn/pass.h"
#include "split.h"

#define KM_PASS_DESC_MAGIC 0x44504d4bu	/* "KMPD" */
#define KM_PASS_STATE_MAGIC 0x53504d4bu /* "KMPS" */
#define KM_PASS_DESC_VERSION 1
#define KM_PASS_BYTE_ORDER 0x01020304u

/* What a row's second column is (host_cursor.h CursorTarget's values). */
typedef enum PassTarget
{
	PASS_VALUES = 0,
	PASS_FLOAT8_LABELS,
	PASS_TEXT_LABELS,
	PASS_ANY					/* the second column only needs to be not null (drift's sums) */
} PassTarget;

/* The host's rules of which rows a pass reads, and how. */
typedef struct PassRules
{
	int			d;				/* features per row */
	PassTarget	target;
	bool		all_rows;		/* every usable row, else the training side */
	bool		sides;			/* all_rows, each with its side (km_block.held) */
	int64		seed;			/* split, folds and reservoir keys */
	double		test_fraction;
	int			folds;			/* 0: none */
	km_rows_side side;			/* the pass's */
	int			fold;
	int			nlabels;
	/* labels: text (bytes, len) or float8 values, and each one's class */
	const char **lab_text;
	int		   *lab_len;
	double	   *lab_value;
	uint32	   *lab_class;
} PassRules;

/* A descriptor's fixed header (then the rules' labels and the point). */
typedef struct PassDescHeader
{
	int32		vl_len_;
	uint32		magic;
	uint16		version;
	uint16		kind;			/* learn/pass.h kind */
	uint32		order;			/* KM_PASS_BYTE_ORDER as written */
	uint64		key;			/* hash of every byte after the header */
	uint64		state_bytes;
	uint32		chunk;
	int32		d;
	uint32		target;
	uint32		all_rows;		/* 1: all_rows; 3: and sides */
	int64		seed;
	double		test_fraction;
	int32		folds;
	int32		side;
	int32		fold;
	uint32		nlabels;
	uint64		labels_len;		/* bytes of the labels after the header */
	uint64		point_len;		/* bytes of the point after the labels */
} PassDescHeader;

/*
 * A short descriptor (issue 33 point 3): where a descriptor would be copied
 * into every row (Citus packs a pushed-down aggregate's arguments into a
 * record per row), the host sends the full one to the worker nodes once
 * per statement as a Citus intermediate result and passes the aggregate
 * only this: the full descriptor's key and length and the result's name.
 * A process meeting it reads the full descriptor once
 * (read_intermediate_result, binary), checks its length and key (the key
 * recomputed over its bytes) and keeps the pass as for a full one.  As
 * untrusted as a full one: the name is bounded and of [a-z0-9_] only.
 */
#define KM_PASS_REF_MAGIC 0x52504d4bu	/* "KMPR" */
#define KM_PASS_REF_NAME 64
/* a descriptor longer than this goes by intermediate result under Citus */
#define KM_PASS_REF_MIN_BYTES 1024

typedef struct PassDescRef
{
	int32		vl_len_;
	uint32		magic;
	uint16		version;
	uint16		kind;
	uint32		order;
	uint64		key;			/* the full descriptor's */
	uint64		full_len;		/* its bytes, VARSIZE */
	char		name[KM_PASS_REF_NAME]; /* the intermediate result's, NUL-terminated */
} PassDescRef;

/* A state's header (then the pass state, then the buffer), MAXALIGNed parts. */
typedef struct PassStateHeader
{
	int32		vl_len_;
	uint32		magic;
	uint64		key;			/* its descriptor's */
	uint64		state_bytes;
	uint32		d;
	uint32		cap;			/* rows the buffer has room for: a chunk in memory, nbuf flat */
	uint32		nbuf;			/* rows in it */
	uint32		external;		/* 1: its pass state is the learner's own (pass_desc_live) */
	int64		added;			/* rows added into the pass state (the next add's first) */
	int64		rows;			/* rows of the host's side read into it */
	int64		skipped;		/* rows with a NULL feature array or target */
	uint64		carry_len;		/* bytes its run carries (PassRun.carry), behind the rows when flat */
	km_error	err;			/* the first failed add's (status KM_OK: none) */
} PassStateHeader;

/* One pass of a statement: its descriptor, rules and pass. */
typedef struct PassRun
{
	uint64		key;
	bytea	   *desc;			/* a copy (the live one: the host's) */
	PassRules	rules;
	km_pass    *pass;
	size_t		chunk;			/* rows per add */
	bool		live;			/* the learner's own pass (its backend) */
	MemoryContext cxt;			/* a rebuilt one's memory */
	KmHoldoutThreshold thr;		/* the rules' split */
	double	   *hbuf;			/* d + 1: a row's hash buffer */
	/*
	 * The live pass's: the learner's state (init'ed), which one aggregate
	 * state of this backend adds into in place (external), so that a
	 * serial pass holds no second copy of a large state and the workers'
	 * states combine into it
	 */
	void	   *live_state;
	bool		live_state_taken;
	/*
	 * A run its owner made (pass_run_make): bytes every flat state of it
	 * carries behind its rows, so that a process that runs no transition
	 * (a parallel leader that only combines, a Citus coordinator) can
	 * rebuild the run from a state alone (pass_run_from_carry); they hold
	 * its descriptor, and the run is keyed by all of them.  NULL: none.
	 */
	const char *carry;
	Size		carry_len;
	const char *what;			/* label of its memory errors; NULL: "kernel_ml pass" */
	double		state_grant;	/* bytes a new state counts; 0: its size and carry */
} PassRun;

/*
 * The descriptor of pass (its point written, rules as given) in
 * CurrentMemoryContext; the learner's live pass registered with it until
 * pass_desc_live_end.
 */
extern bytea *pass_desc_build(const km_pass *pass, const PassRules *rules);
extern void pass_desc_live_begin(bytea *desc, const PassRules *rules, km_pass *pass,
								 void *state);
extern void pass_desc_live_end(void);

/*
 * The short descriptor of desc whose full bytes are the intermediate
 * result name (of at most KM_PASS_REF_NAME - 1 characters of [a-z0-9_]),
 * in CurrentMemoryContext.
 */
extern bytea *pass_desc_ref(const bytea *desc, const char *name);

/*
 * The pass of a descriptor (full or short) in this process: the live one,
 * the one rebuilt already, or rebuilt now (in TopTransactionContext; a
 * short descriptor's full bytes read once from its intermediate result);
 * an invalid descriptor or point is an error (22P03 / 22023).
 */
extern PassRun *pass_desc_run(bytea *desc);

/*
 * A run of pass, which its owner built, in cxt and for as long as cxt
 * lives: carry (copied, uncounted: its owner counts it) holds at desc_off
 * (MAXALIGNed) the pass's descriptor (pass_desc_build's, with rules); every
 * state carries it, and the run is keyed by a hash of all of it.  Neither
 * live nor the rebuilt one: found by its owner, not by
 * pass_desc_run_of_key.
 */
extern PassRun *pass_run_make(km_pass *pass, const PassRules *rules, const void *carry,
							  Size carry_len, Size desc_off, MemoryContext cxt);

/*
 * The run of a state's carried bytes (pass_state_carry) whose descriptor
 * starts at desc_off, as untrusted input: the descriptor checked as
 * pass_desc_run checks one and its pass rebuilt, in cxt (a new run).
 */
extern PassRun *pass_run_from_carry(const char *carry, Size carry_len, Size desc_off,
									MemoryContext cxt);

/*
 * Runs rebuilt in this process from the carried bytes of states that came
 * from elsewhere (a parallel leader's or a Citus coordinator's combine and
 * final), kept for the transaction, a few at once: the one of key, or
 * NULL; and a new one from carry (pass_run_from_carry; what names its
 * caller, state_grant the bytes each of its states counts), kept.
 */
extern PassRun *pass_run_carried(uint64 key);
extern PassRun *pass_run_keep_carried(const char *carry, Size carry_len, Size desc_off,
									  const char *what, double state_grant);

/*
 * The bytes a state datum carries (expanded or flat, bounds-checked as
 * untrusted: 22P03), NULL with *len 0 when none.
 */
extern const char *pass_state_carry(Datum d, Size *len);

/*
 * The memory of a rebuilt or owned pass: from cxt, counted against
 * kernel_ml.max_memory under what (NULL: not counted, its owner counts it).
 */
struct km_train_env;
extern struct km_train_env *pass_env_make(MemoryContext cxt, const char *what);

/* Is run one of this process's passes still (live, rebuilt or owned; its memory not freed)? */
extern bool pass_run_known(const PassRun *run);

/* The pass a state's key names in this process, or an error. */
extern PassRun *pass_desc_run_of_key(uint64 key);

/* Bytes of a flat state of run's pass (external: without its pass state) buffering cap rows. */
extern Size pass_state_size(const PassRun *run, bool external, Size cap);

/*
 * A flat state as untrusted bytes: the header's magic, key and sizes
 * checked against run's, its bytes those of its header's cap rows, at
 * most a chunk (22P03 otherwise).
 */
extern PassStateHeader *pass_state_check(bytea *s, const PassRun *run);

/*
 * A new state of run's pass in cxt (an expanded object in a child context
 * of cxt, its buffer a full chunk), counted, zeroed (not init'ed); *out
 * its read-write datum when out is not NULL.
 */
extern PassStateHeader *pass_state_new(PassRun *run, MemoryContext cxt, bool external,
									   Datum *out);

/* The key of a state datum (expanded or flat; 22P03 when it is not a state). */
extern uint64 pass_state_key(Datum d);

/*
 * The header of a state datum (expanded, or flat and detoasted), its size
 * and magic checked only (22P03): the rest is untrusted until
 * pass_state_arg checks it against a run.
 */
extern PassStateHeader *pass_state_header(Datum d);

/*
 * The state of datum d for run: an expanded one of ours in place (its
 * datum in *out), or a flat one checked (pass_state_check), read in place
 * or, when writable, copied into a new expanded state in cxt (*out).
 */
extern PassStateHeader *pass_state_arg(Datum d, PassRun *run, MemoryContext cxt,
									   bool writable, Datum *out);

/*
 * One row (f: the feature array, y: the target or label datum, ynull) into
 * the state: the host's rules (null rows skipped, the split, the fold,
 * the label's class, the reservoir key), buffered; a full buffer added.
 */
extern void pass_state_row(PassRun *run, PassStateHeader *st, ArrayType *f,
						   Datum y, bool ynull);

/*
 * A row its caller checked itself (its own errors): where its d features
 * go in st's buffer (a full buffer added first), then, once written, the
 * row taken with target y and hash (pass_state_commit: a full buffer
 * added).  For a run of PASS_VALUES or PASS_ANY over every row, no folds:
 * no split or fold.
 */
extern double *pass_state_slot(PassRun *run, PassStateHeader *st);
extern void pass_state_commit(PassRun *run, PassStateHeader *st, double y, uint64 hash);

/*
 * A new state of run in cxt for a transition's first row: in the
 * learner's backend the first one adds into the learner's state in place
 * (external), any other has its own pass state, initialized by the pass.
 */
extern PassStateHeader *pass_state_start(PassRun *run, MemoryContext cxt, Datum *out);

/*
 * The combine function of run's states: argument 1's rows into argument
 * 0's (either may be NULL), in aggcxt; the result datum.
 */
extern Datum pass_states_combine(PassRun *run, FunctionCallInfo fcinfo, MemoryContext aggcxt);

/* The buffered rows of from added into st's pass state (from's own when st == from). */
extern void pass_state_flush(PassRun *run, PassStateHeader *st, PassStateHeader *from);

/* The pass state of st: after its header, or the learner's (external). */
extern void *pass_state_data(const PassRun *run, PassStateHeader *st);

#endif							/* KM_PASS_DESC_H */
