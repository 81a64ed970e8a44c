/*
 * pass.h - a pass over the rows, as the learner asks for it and a host runs
 * it (core, no PostgreSQL headers; issue 28, DESIGN-0.4.md step 1).
 *
 * The learner (learner.h) knows the task, the representation and the
 * method; a host (the memory host, src/pg/host_memory.c; later the cursor
 * and the aggregate hosts) holds the rows and knows none of them.  The
 * learner asks for a pass: what it is (a progress text), which side of the
 * rows it reads, a state of a fixed size and the functions that start it and
 * add a block of rows into it; the host hands every row of the pass, a
 * block at a time, to km_pass_feed, in its order (the memory host: the
 * aggregate's rows in the order the glue gives them, blocks of
 * KM_BLOCK_ROWS).  The learner then reads the state and decides the next
 * pass or the model.  A state is fixed-size and combines with another of
 * the same pass over other rows (km_pass_combine: by addition, or the
 * pass's own rule), except an ordered pass's (the classifiers' stratified
 * folds, an exact method's gather), which takes every row in order.
 *
 * Bit for bit: a pass's sums group rows as 0.3.0 did (ridge's sums 256 rows
 * at a time, a Newton pass 512), so a pass names its chunk and km_pass_feed
 * regroups the host's blocks into chunks of the pass's rows counted from
 * the pass's first row (a block that starts at a chunk's edge and holds
 * whole chunks is passed on in place, and so is the last, partial chunk
 * when the block ends the rows the host holds; other rows are copied into
 * a buffer first).  The sums then come out the same whatever blocks the host hands.
 * A gather pass (whole; an exact method's one pass, learner.h) takes every
 * row: a host that holds them in one piece hands them as one block, which
 * the learner keeps as they are; another's blocks are appended.
 * The side: the memory host hands every row and the pass keeps those of its
 * side inside each chunk, as 0.3.0 did (a host that can split the rows
 * itself may hand the side's rows only: the pass's keep test then passes
 * them all).
 */
#ifndef KM_LEARN_PASS_H
#define KM_LEARN_PASS_H

#include "core.h"

/* Rows per block the memory host hands (a multiple of every pass's chunk). */
#define KM_BLOCK_ROWS 512

/* One block of rows, as every host hands it. */
typedef struct km_block
{
	size_t		n;				/* rows */
	int			d;				/* features per row */
	const double *X;			/* n x d raw features, row-major */
	const double *y;			/* n targets, or NULL (classifiers) */
	const uint32_t *cls;		/* n class ids, or NULL (regression) */
	const uint64_t *hash;		/* n row hashes (the basis's reservoir keys) */
	const int  *fold;			/* n folds of k-fold selection, or NULL */
	const uint8_t *held;		/* n: 1 for a row the hold-out split holds out, or NULL
								 * (a host that hands one side only) */
} km_block;

/* Which rows a pass reads. */
typedef enum km_rows_side
{
	KM_SIDE_ALL = 0,			/* every row */
	KM_SIDE_FOLD,				/* the rows of fold `fold` (held out) */
	KM_SIDE_NOT_FOLD			/* every row but those of fold `fold` */
} km_rows_side;

struct km_pass;

/*
 * Add a chunk of rows (first: the pass's number of its first row, from 0)
 * into state; an error stops the pass.
 */
typedef km_status (*km_pass_add_fn) (struct km_pass *pass, const km_block *rows,
									 size_t first, void *state, km_error *err);

/* One pass the learner asks for. */
typedef struct km_pass
{
	char		what[96];		/* progress text: "basis", "newton 3", ... */
	km_rows_side side;
	int			fold;			/* the side's fold */
	size_t		state_bytes;	/* fixed: the state could travel as a bytea */
	size_t		chunk;			/* rows the pass adds at once (<= KM_BLOCK_ROWS); 0: any */
	bool		ordered;		/* rows in the host's order, in one state (no combine) */
	bool		whole;			/* a gather: every row in one block if the host can */
	void	   *at;				/* the learner's point: what add reads */
	void		(*init) (struct km_pass *pass, void *state);
	km_pass_add_fn add;
	void		(*end) (struct km_pass *pass, void *state);	/* after every row, or NULL */
	/* into += from, two states of disjoint rows; NULL: add every double */
	km_status	(*combine) (const struct km_pass *pass, void *into, const void *from,
							km_error *err);
	km_interrupt_fn interrupt;
	/*
	 * Its point as bytes, for a host whose rows other processes read (the
	 * aggregate host: parallel workers, Citus shards): kind names how
	 * learner.h's km_pass_rebuild builds the same pass from them there
	 * (every state it starts then comes from init alone); point_bytes and
	 * point_write give the bytes.  kind 0: the pass runs only where the
	 * learner is (an ordered pass, a pass over the learner's own arrays).
	 */
	uint16_t	kind;
	size_t		(*point_bytes) (const struct km_pass *pass);
	void		(*point_write) (const struct km_pass *pass, unsigned char *out);
	/* km_pass_feed's: rows fed, the chunk being filled */
	size_t		rows_done;
	size_t		rows_all;		/* rows the host holds, 0: unknown (progress) */
	size_t		buffered;
	km_block	like;			/* the last block fed: which arrays blocks have */
	/*
	 * Memory for the chunk buffer (KM_BLOCK_ROWS rows), taken the first
	 * time a host's blocks do not fall on the pass's chunks (never with
	 * the memory host's blocks); the learner's env.
	 */
	void	   *(*alloc) (void *ctx, size_t bytes);
	void	   *alloc_ctx;
	double	   *buf_X;			/* KM_BLOCK_ROWS x d, NULL until needed */
	double	   *buf_y;
	uint32_t   *buf_cls;
	uint64_t   *buf_hash;
	int		   *buf_fold;
	uint8_t    *buf_held;
} km_pass;

/*
 * A host: runs a pass over every row it holds, a block at a time through
 * km_pass_feed, into state (pass->init'ed by the learner).  rows: how many
 * it holds (0: unknown until a pass ends).
 */
typedef struct km_host
{
	void	   *ctx;
	size_t		rows;
	bool		folds;			/* its blocks carry each row's fold (km_block.fold) */
	km_status	(*run) (void *ctx, km_pass *pass, void *state, km_error *err);
} km_host;

/* The host's call: the rows of a block into the pass (regrouped into chunks). */
km_status	km_pass_feed(km_pass *pass, const km_block *rows, void *state,
						 km_error *err);

/*
 * Run pass on host into state: init, the host's run, the last partial
 * chunk, progress ("what: rows of rows").  *rows: the rows the pass read.
 */
km_status	km_pass_run(const km_host *host, km_pass *pass, void *state,
						size_t *rows, km_error *err);

/*
 * into += from: the states of one pass over disjoint rows (parallel
 * workers, shards), by the pass's combine or by adding every double of
 * state_bytes.  KM_ERR_INVALID for an ordered pass, whose rows must all go
 * into one state in the host's order.
 */
km_status	km_pass_combine(const km_pass *pass, void *into, const void *from,
							km_error *err);

/*
 * Does a block fit a pass's add: at most a chunk of rows (the pass's
 * buffers hold that many), of d features, and the arrays the add reads (y:
 * targets; k > 0: class ids, each below k; hash: the row hashes)?  The pass aggregate hands a rebuilt pass blocks whose shape its
 * descriptor's rules give and whose values a state may carry, untrusted
 * both (src/pg/pass_desc.c): KM_ERR_INVALID, naming the block's first row.
 */
km_status	km_pass_rows_check(const km_pass *pass, const km_block *rows, int d,
							   bool y, uint32_t k, bool hash, size_t first,
							   km_error *err);

/* Does the pass keep row i of a block (its side)? */
static inline bool
km_pass_keeps(const km_pass *pass, const km_block *rows, size_t i)
{
	if (pass->side == KM_SIDE_ALL || rows->fold == NULL)
		return true;
	return (rows->fold[i] == pass->fold) == (pass->side == KM_SIDE_FOLD);
}

#endif							/* KM_LEARN_PASS_H */
