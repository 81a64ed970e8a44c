/*
 * approx.c - approximate kernel models in SQL (issue 12): the training
 * pass over a basis (approx_basis.c makes it), and the one-statement form.
 *
 * The training pass:
 *
 *   kernel_train(features float8[], target float8, options jsonb, basis bytea) RETURNS bytea
 *
 * Its state is the KM_ACCUM_GRAM state of the features z(x) (accum.h:
 * sum z z^T, sum z y, sum z, sum y, sum y^2, rows), followed in the same
 * bytea by a tail: a block of buffered standardized rows and targets
 * (so that each update of the sums is one GEMM + map for the features of
 * APPROX_BLOCK rows, km_approx_features, and one dsyrk + dgemv), the
 * settings the final function needs, and a copy of the basis (a final
 * function sees no argument but the state; the combine and final
 * functions compute the features of a buffer from it).  The size depends
 * on m, d and the basis only.
 */
#include "postgres.h"

#include <math.h>

#include "access/xact.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "basis.h"
#include "call_cache.h"
#include "host_memory.h"
#include "options.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "repr.h"
#include "rowset.h"
#include "train_paths.h"
#include "train_rows.h"
#include "model.h"
#include "model_bytea.h"
#include "pipeline_approx.h"
#include "solve.h"

PG_FUNCTION_INFO_V1(kernel_train_basis_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_basis_combine);
PG_FUNCTION_INFO_V1(kernel_train_basis_final);

#define APPROX_BLOCK 256
#define APPROX_TAIL_MAGIC 0x4B4D4132u	/* "KMA2": rows, not features, buffered */
#define PROGRESS_ROWS 1000000

typedef struct ApproxTail
{
	uint32		magic;			/* APPROX_TAIL_MAGIC */
	uint32		block;			/* APPROX_BLOCK */
	uint32		pending;		/* rows buffered, not yet in the sums */
	uint32		basis_bytes;	/* the basis copied behind the buffers */
	uint32		d;				/* features of a buffered row */
	uint32		pad;
	int64		skipped;		/* rows with a NULL feature array or target */
	int32		n_lambdas;
	uint32		fit_intercept;	/* 0 or 1 */
	double		lambdas[KM_APPROX_MAX_LAMBDAS];
} ApproxTail;

/* Pointers into a state. */
typedef struct ApproxParts
{
	km_accum   *acc;
	ApproxTail *t;
	double	   *X;				/* block x d standardized rows, row-major */
	double	   *y;				/* block */
	char	   *basis;			/* basis_bytes */
} ApproxParts;

static Size
approx_state_bytes(uint32 m, uint32 d, uint32 basis_bytes)
{
	Size		accb = km_accum_bytes(KM_ACCUM_GRAM, m);

	if (accb == 0)
		return 0;
	return add_size(add_size(accb, MAXALIGN(sizeof(ApproxTail))),
					add_size(mul_size(sizeof(double), mul_size(APPROX_BLOCK, (Size) d + 1)),
							 MAXALIGN(basis_bytes)));
}

static ApproxParts
approx_parts(km_accum *acc)
{
	ApproxParts p;
	char	   *tail = (char *) acc + km_accum_bytes(KM_ACCUM_GRAM, acc->dim);

	p.acc = acc;
	p.t = (ApproxTail *) tail;
	p.X = (double *) (tail + MAXALIGN(sizeof(ApproxTail)));
	p.y = p.X + (Size) APPROX_BLOCK * p.t->d;
	p.basis = (char *) (p.y + APPROX_BLOCK);
	return p;
}

static void
bad_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("aggregate state is not a kernel_train state"),
			 errdetail("%s", detail)));
}

/*
 * A state from elsewhere (a parallel worker, a shard, a caller's bytea),
 * checked as untrusted input: the sums, the tail, the basis.  Its basis
 * decoded into b.
 */
static ApproxParts
approx_check(km_accum *acc, Size len, km_basis *b)
{
	km_error	err;
	Size		accb;
	ApproxParts p;

	if (len < sizeof(km_accum) + MAXALIGN(sizeof(ApproxTail)))
		bad_state("The state is shorter than its header.");
	accb = km_accum_bytes((km_accum_kind) acc->kind, acc->dim);
	if (acc->kind != KM_ACCUM_GRAM || accb == 0 ||
		len < accb + MAXALIGN(sizeof(ApproxTail)))
		bad_state("The state's sums have an unknown kind or a wrong length.");
	if (km_accum_validate(acc, accb, &err) != KM_OK)
		km_raise(&err);
	p.t = (ApproxTail *) ((char *) acc + accb);
	if (p.t->magic != APPROX_TAIL_MAGIC || p.t->block != APPROX_BLOCK ||
		p.t->d < 1 || p.t->d > (uint32) MaxAllocSize / sizeof(double) ||
		p.t->pending > APPROX_BLOCK || p.t->skipped < 0 ||
		p.t->n_lambdas < 1 || p.t->n_lambdas > KM_APPROX_MAX_LAMBDAS ||
		p.t->fit_intercept > 1 ||
		approx_state_bytes(acc->dim, p.t->d, p.t->basis_bytes) != len)
		bad_state("The state's buffer has invalid fields.");
	p = approx_parts(acc);
	for (int i = 0; i < p.t->n_lambdas; i++)
		if (!isfinite(p.t->lambdas[i]) || !(p.t->lambdas[i] > 0.0))
			bad_state("A lambda of the state is not a finite number > 0.");
	if (!km_all_finite(p.X, (Size) p.t->pending * p.t->d) ||
		!km_all_finite(p.y, p.t->pending))
		bad_state("A buffered row of the state is not finite.");
	if (km_basis_decode(p.basis, p.t->basis_bytes, b, &err) != KM_OK)
		km_raise(&err);
	if (b->m != acc->dim || b->d != p.t->d)
		bad_state("The state's basis and sums have different dimensions.");
	return p;
}

/* Buffers of a flush: features (block x m), their work, m x m scratch. */
typedef struct FlushBufs
{
	double	   *Z;
	double	   *work;
	double	   *scratch;
} FlushBufs;

static Size
flush_bufs_doubles(const km_basis *b)
{
	return add_size(add_size(mul_size(APPROX_BLOCK, b->m),
							 km_approx_features_doubles(b, APPROX_BLOCK) + 1),
					mul_size(b->m, b->m));
}

/* The buffers in the current memory context. */
static FlushBufs
flush_bufs_make(const km_basis *b)
{
	FlushBufs	f;

	f.Z = palloc_extended(mul_size(sizeof(double), mul_size(APPROX_BLOCK, b->m)), MCXT_ALLOC_HUGE);
	f.work = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(b, APPROX_BLOCK) + 1),
							 MCXT_ALLOC_HUGE);
	f.scratch = palloc_extended(mul_size(sizeof(double), mul_size(b->m, b->m)), MCXT_ALLOC_HUGE);
	return f;
}

/* flush_bufs_make, checked against max_memory first. */
static FlushBufs
flush_bufs_alloc(const km_basis *b)
{
	km_check_memory(8.0 * (double) flush_bufs_doubles(b), "kernel_train", false);
	return flush_bufs_make(b);
}

static void
flush_bufs_free(FlushBufs *f)
{
	pfree(f->Z);
	pfree(f->work);
	pfree(f->scratch);
}

/*
 * rows buffered standardized rows X with targets y into the sums of acc:
 * their features in one km_approx_features call, then one dsyrk + dgemv.
 */
static void
add_rows(km_accum *acc, const km_basis *b, const double *X, const double *y,
		 uint32 rows, FlushBufs *f)
{
	km_error	err;

	if (rows == 0)
		return;
	if (km_approx_features(b, X, rows, f->Z, f->work, &err) != KM_OK)
		km_raise(&err);
	km_accum_gram_add(acc, f->Z, y, rows, f->scratch, km_interrupt);
}

/* Buffered rows into the sums. */
static void
approx_flush(ApproxParts *p, const km_basis *b, FlushBufs *f)
{
	int64		before = p->acc->rows;

	if (p->t->pending == 0)
		return;
	add_rows(p->acc, b, p->X, p->y, p->t->pending, f);
	p->t->pending = 0;
	CHECK_FOR_INTERRUPTS();
	if (before / PROGRESS_ROWS != p->acc->rows / PROGRESS_ROWS)
		km_progress_step("kernel_train statistics: " INT64_FORMAT " rows", p->acc->rows);
}

/* The lambdas to score: the options' grid, checked (memory_train.h), resolved. */
static void
approx_lambdas(const km_options *opts, ApproxTail *t)
{
	km_approx_check_lambdas(opts);
	t->n_lambdas = opts->lambdas.n;
	for (int i = 0; i < opts->lambdas.n; i++)
		t->lambdas[i] = opts->lambdas.v[i];
	t->fit_intercept = opts->fit_intercept ? 1 : 0;
}

/* Bytes of the solve besides the state: scratch m x m and km_approx_solve's work. */
static double
approx_solve_memory(uint32 m)
{
	return 8.0 * ((double) m * m + (double) km_approx_solve_doubles(m) + 2.0 * m);
}

/*
 * The model from the sums (the core's solve and fill, km_train's too),
 * encoded into a new bytea; NULL when no row was added.
 */
static bytea *
approx_model(km_basis *b, uint32 components, km_accum *acc,
			 const ApproxTail *t)
{
	km_train_env env;
	km_error	err;
	km_model	model;

	if (acc->rows == 0)
		return NULL;
	km_train_env_palloc(&env);
	km_blas_setup();
	if (km_train_approx_solve(b, components, acc, t->lambdas, t->n_lambdas,
							  t->fit_intercept != 0, false, false, (uint64) t->skipped, &env,
							  &model, &err) != KM_OK)
		km_raise(&err);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
		   &model.writer_version[1], &model.writer_version[2]);
	return km_model_to_bytea(&model);
}

/* What the training pass keeps between rows: a call cache entry. */
typedef struct TrainCall
{
	Jsonb	   *optjson;
	km_options	opts;
	ApproxTail	tail;			/* the lambdas and intercept a state must have */
	char	   *basis;			/* an aligned copy, validated */
	Size		basis_len;
	char		toast_ptr[32];	/* the basis's TOAST pointer, when it came as one */
	Size		toast_len;
	km_basis	b;				/* its draw's W and b: km_basis_draw */
	double	   *x;				/* d */
	FlushBufs	f;				/* a block's features and scratch */
	MemoryContext cxt;			/* the entry's own; what it keeps is counted (pgutil.h) */
} TrainCall;

/*
 * Whether the basis at raw is the entry's: every byte (issue 29: a basis
 * with other centres and a forged checksum has the same length, header
 * and trailer).  O(size) per row only where the basis is a value of each
 * row (a column, an expression); a constant or parameter is compared once
 * (basis_arg_stable), a basis stored in a table by its TOAST pointer.
 */
static bool
same_basis(const TrainCall *tc, const bytea *raw)
{
	return tc->basis_len == VARSIZE(raw) &&
		memcmp(tc->basis + VARHDRSZ, (const char *) raw + VARHDRSZ,
			   tc->basis_len - VARHDRSZ) == 0;
}

/*
 * Whether tc is the entry for these options and this basis.  A basis
 * stored in a table arrives as a TOAST pointer: that pointer identifies
 * it, so it is not fetched and decompressed per row.  *raw: the basis
 * detoasted, when it had to be.
 */
static bool
train_call_matches(TrainCall *tc, FunctionCallInfo fcinfo, Jsonb *opts,
				   int basis_arg, bytea **raw)
{
	struct varlena *datum = (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(basis_arg));
	bool		ondisk = VARATT_IS_EXTERNAL_ONDISK(datum) && VARSIZE_ANY(datum) <= sizeof(tc->toast_ptr);

	if (!km_jsonb_same(tc->optjson, opts))
		return false;
	if (ondisk && tc->toast_len == VARSIZE_ANY(datum) &&
		memcmp(tc->toast_ptr, datum, tc->toast_len) == 0)
		return true;
	if (!VARATT_IS_EXTENDED(datum))
		return same_basis(tc, (bytea *) datum);
	if (*raw == NULL)
		*raw = PG_GETARG_BYTEA_P(basis_arg);
	if (!same_basis(tc, *raw))
		return false;
	tc->toast_len = ondisk ? VARSIZE_ANY(datum) : 0;
	if (ondisk)
		memcpy(tc->toast_ptr, datum, tc->toast_len);
	return true;
}

/* How long the basis argument of a call site keeps its value. */
typedef enum BasisArgLife
{
	BASIS_PER_ROW,				/* a column or an expression: any row may differ */
	BASIS_PER_SCAN,				/* an executor parameter (a scalar subquery's
								 * InitPlan, an outer reference): fixed while one
								 * aggregate state lives, may change on a rescan */
	BASIS_PER_CALL				/* a constant or a query parameter ($n): fixed for
								 * the call site's whole execution */
} BasisArgLife;

/*
 * The basis argument's expression in the Aggref (none under Citus's
 * worker_partial_agg or a window: per row).  A value that does not change
 * keeps its Datum: the pointer identifies it once compared in full.
 */
static BasisArgLife
basis_arg_life(FunctionCallInfo fcinfo, int basis_arg)
{
	Aggref	   *ag = AggGetAggref(fcinfo);
	TargetEntry *te;

	if (ag == NULL || list_length(ag->args) < basis_arg)
		return BASIS_PER_ROW;
	te = list_nth_node(TargetEntry, ag->args, basis_arg - 1);
	if (IsA(te->expr, Const) ||
		(IsA(te->expr, Param) && ((Param *) te->expr)->paramkind == PARAM_EXTERN))
		return BASIS_PER_CALL;
	if (IsA(te->expr, Param) && ((Param *) te->expr)->paramkind == PARAM_EXEC)
		return BASIS_PER_SCAN;
	return BASIS_PER_ROW;
}

/* Options (parsed) that a basis cannot train: another approximation, a classifier. */
static void
train_call_check_options(const km_options *opts, const km_basis *b)
{
	km_approx_refuse_cg(opts, "kernel_train");
	if (opts->centres != KM_CENTRES_UNIFORM)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("kernel_train with a basis keeps its uniform centres"),
				 errdetail("The options give \"centers\": \"%s\"; a basis from kernel_basis holds the uniform sample.",
						   km_centres_name(opts->centres)),
				 errhint("Train in one statement, kernel_train(features, y, options) with \"centers\" in the options, or remove \"centers\".")));
	if (opts->approximation != b->kind)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options and basis disagree on the approximation"),
				 errdetail("The options give approximation \"%s\"; the basis is \"%s\".",
						   km_approx_name(opts->approximation), km_approx_name(b->kind)),
				 errhint("Pass the same options to kernel_basis and kernel_train.")));
	if (km_method_get(opts->fit.method)->primal_loss != 0)	/* a classifier's primal Newton */
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("kernel_train with a basis trains kernel ridge regression only"),
				 errdetail("The options give method \"%s\", a classifier; its primal Newton needs several passes over the rows.",
						   km_method_name(opts->fit.method)),
				 errhint("Train an approximate classifier in one statement: kernel_train(features, label, options) with \"approximation\" in the options.")));
	if (km_method_get(opts->fit.method)->primal_add != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("kernel_train with a basis trains kernel ridge regression only"),
				 errdetail("The options give method \"%s\", fitted in the primal by Newton steps of a pass over the rows each.",
						   km_method_name(opts->fit.method)),
				 errhint("Train it in one statement, kernel_train(features, y, options) with \"approximation\" in the options, or by name with kernel_model_train.")));
}

/* The memory of a call's entry checked, and reserved in its context (tc->cxt). */
static void
train_call_memory(TrainCall *tc)
{
	km_check_components_memory(tc->b.m, "kernel_train");
	km_check_memory((double) approx_state_bytes(tc->b.m, tc->b.d, (uint32) tc->basis_len) +
					8.0 * (double) flush_bufs_doubles(&tc->b) +
					approx_solve_memory(tc->b.m), "kernel_train", false);
	/* counted against kernel_ml.max_memory until the entry is evicted */
	(void) km_mem_reserve(tc->cxt, (double) tc->basis_len +
						  8.0 * ((double) flush_bufs_doubles(&tc->b) + (double) (tc->b.d + 1) * tc->b.m),
						  "kernel_train", false);
}

static TrainCall *
train_call_build(Jsonb *opts, const bytea *raw, struct varlena *datum)
{
	MemoryContext cxt = km_call_entry_context();
	MemoryContext old = MemoryContextSwitchTo(cxt);
	TrainCall  *tc = palloc0(sizeof(TrainCall));
	bool		ondisk = VARATT_IS_EXTERNAL_ONDISK(datum) && VARSIZE_ANY(datum) <= sizeof(tc->toast_ptr);
	km_error	err;
	km_options	o;

	tc->cxt = cxt;
	km_options_parse(opts, &o);
	tc->optjson = km_jsonb_copy(opts);
	tc->toast_len = ondisk ? VARSIZE_ANY(datum) : 0;
	if (ondisk)
		memcpy(tc->toast_ptr, datum, tc->toast_len);
	tc->basis_len = VARSIZE(raw);
	tc->basis = palloc(tc->basis_len);
	memcpy(tc->basis, raw, tc->basis_len);
	if (km_basis_decode(tc->basis, tc->basis_len, &tc->b, &err) != KM_OK)
		km_raise(&err);
	train_call_check_options(&o, &tc->b);
	km_options_resolve(&o, (int) tc->b.d);
	tc->opts = o;
	approx_lambdas(&tc->opts, &tc->tail);
	train_call_memory(tc);
	km_basis_draw(&tc->b);
	tc->x = palloc(sizeof(double) * tc->b.d);
	tc->f = flush_bufs_alloc(&tc->b);
	MemoryContextSwitchTo(old);
	return tc;
}

/*
 * The call's options and decoded basis, from the entry of the previous
 * row, another entry, or parsed anew.
 */
static TrainCall *
train_call(FunctionCallInfo fcinfo, Jsonb *opts, int basis_arg, const km_accum *acc)
{
	CallHolder *h = km_call_holder(fcinfo);
	TrainCall  *tc = km_call_bound(h, CALL_TRAIN);
	bytea	   *raw = NULL;
	int			slot;

	/*
	 * The constant or parameter compared in full on an earlier row
	 * (basis_arg_seen).  An executor parameter changes only on a rescan,
	 * which starts every aggregate state anew (NULL: no INITCOND), and a
	 * new state's row compares in full again.
	 */
	if (tc != NULL && h->basis != NULL &&
		h->basis == DatumGetPointer(PG_GETARG_DATUM(basis_arg)) &&
		(!h->basis_scan || (acc != NULL && h->own_states)) &&
		km_jsonb_same(tc->optjson, opts))
		return tc;
	if (tc != NULL && train_call_matches(tc, fcinfo, opts, basis_arg, &raw))
		return tc;
	for (slot = 0; slot < CALL_SLOTS; slot++)
	{
		TrainCall  *other = km_call_slot(slot, CALL_TRAIN);

		if (other != NULL && train_call_matches(other, fcinfo, opts, basis_arg, &raw))
			return km_call_bind(h, slot);
	}
	if (raw == NULL)
		raw = PG_GETARG_BYTEA_P(basis_arg);
	tc = train_call_build(opts, raw, (struct varlena *) DatumGetPointer(PG_GETARG_DATUM(basis_arg)));
	return km_call_bind(h, km_call_insert(CALL_TRAIN, tc->cxt, tc));
}

static km_accum *
approx_state_create(MemoryContext aggctx, TrainCall *tc)
{
	Size		bytes = approx_state_bytes(tc->b.m, tc->b.d, (uint32) tc->basis_len);
	km_accum   *acc;
	ApproxParts p;

	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_train state is too large"),
				 errdetail("A state of %u components would exceed 1 GB.", tc->b.m),
				 errhint("Use fewer components.")));
	km_mem_reserve(aggctx, (double) bytes, "kernel_train", false);
	acc = km_alloc0_interruptible(aggctx, bytes);	/* m^2 / 2 sums: 268 MB at 8192 */
	SET_VARSIZE(acc, bytes);
	km_accum_init(acc, KM_ACCUM_GRAM, tc->b.m);
	((ApproxTail *) ((char *) acc + km_accum_bytes(KM_ACCUM_GRAM, acc->dim)))->d = tc->b.d;
	p = approx_parts(acc);
	*p.t = tc->tail;
	p.t->magic = APPROX_TAIL_MAGIC;
	p.t->block = APPROX_BLOCK;
	p.t->basis_bytes = (uint32) tc->basis_len;
	p.t->d = tc->b.d;
	memcpy(p.basis, tc->basis, tc->basis_len);
	return acc;
}

/*
 * A state other than the one the call site used last (another group, an
 * INITCOND, a state reached through a fresh FmgrInfo, the state of a call
 * whose basis changed), checked in O(1) against the layout the
 * transition relies on (22P03), then against the call's basis and
 * options (22023): every byte of its basis, unless the call site made it
 * with this entry (!full).  The values of the sums are checked whole by
 * the combine and final functions.
 */
static void
approx_state_match(km_accum *acc, Size len, const TrainCall *tc, bool full)
{
	Size		accb;
	ApproxParts p;

	if (len < sizeof(km_accum) + MAXALIGN(sizeof(ApproxTail)) ||
		acc->magic != KM_ACCUM_MAGIC || acc->version != KM_ACCUM_VERSION ||
		acc->kind != KM_ACCUM_GRAM)
		bad_state("The state's header is not that of a kernel_train state.");
	accb = km_accum_bytes(KM_ACCUM_GRAM, acc->dim);
	if (accb == 0 || acc->ndoubles != km_accum_payload_doubles(KM_ACCUM_GRAM, acc->dim) ||
		acc->rows < 0 || len < accb + MAXALIGN(sizeof(ApproxTail)))
		bad_state("The state's sums have a wrong dimension or length.");
	p.t = (ApproxTail *) ((char *) acc + accb);
	if (p.t->magic != APPROX_TAIL_MAGIC || p.t->block != APPROX_BLOCK ||
		p.t->d < 1 || p.t->d > (uint32) MaxAllocSize / sizeof(double) ||
		p.t->pending >= APPROX_BLOCK || p.t->skipped < 0 ||
		approx_state_bytes(acc->dim, p.t->d, p.t->basis_bytes) != len)
		bad_state("The state's buffer has invalid fields.");
	p = approx_parts(acc);
	if (acc->dim != tc->b.m || p.t->d != tc->b.d || p.t->basis_bytes != tc->basis_len ||
		(full && memcmp(p.basis + VARHDRSZ, tc->basis + VARHDRSZ, tc->basis_len - VARHDRSZ) != 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the basis must be the same for every row of a kernel_train call"),
				 errdetail("Row " INT64_FORMAT " has a basis of %u features and %u components that differs from the basis of the rows before it (%u features, %u components).",
						   acc->rows + p.t->pending + p.t->skipped + 1, tc->b.d, tc->b.m,
						   p.t->d, acc->dim),
				 errhint("Pass one basis, as a constant, a scalar subquery or a query parameter.")));
	if (p.t->n_lambdas != tc->tail.n_lambdas || p.t->fit_intercept != tc->tail.fit_intercept ||
		p.t->n_lambdas < 1 || p.t->n_lambdas > KM_APPROX_MAX_LAMBDAS ||
		memcmp(p.t->lambdas, tc->tail.lambdas, sizeof(double) * p.t->n_lambdas) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("Row " INT64_FORMAT " of kernel_train has options that differ from the rows before it.",
						   acc->rows + p.t->pending + p.t->skipped + 1),
				 errhint("Pass the options as a constant or a query parameter.")));
}

/* The state argument, aligned for doubles. */
static km_accum *
approx_state_arg(FunctionCallInfo fcinfo, int argno, MemoryContext aggctx)
{
	bytea	   *raw;
	km_accum   *acc;

	if (PG_ARGISNULL(argno))
		return NULL;
	raw = PG_GETARG_BYTEA_P(argno);
	acc = (km_accum *) raw;
	if (((uintptr_t) acc) % MAXIMUM_ALIGNOF != 0)
	{
		acc = MemoryContextAlloc(aggctx, VARSIZE(raw));
		memcpy(acc, raw, VARSIZE(raw));
	}
	return acc;
}

/*
 * The row of arguments 1 (features) and 2 (target), checked and
 * standardized by the basis's scaler, into the state's buffer.
 */
static void
approx_buffer_row(FunctionCallInfo fcinfo, TrainCall *tc, ApproxParts *p)
{
	km_accum   *acc = p->acc;
	ArrayType  *arr;
	double		target;
	int			d;
	int			bad;
	char		what[64];

	snprintf(what, sizeof(what), "row " INT64_FORMAT,
			 acc->rows + p->t->pending + p->t->skipped + 1);
	arr = PG_GETARG_ARRAYTYPE_P(1);
	d = km_array_length(arr, what);
	if ((uint32) d != tc->b.d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("The %s has %d features; the basis has %u.", what, d, tc->b.d)));
	target = PG_GETARG_FLOAT8(2);
	if (!isfinite(target))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("target values must be finite"),
				 errdetail("The target of %s is not finite.", what)));
	km_array_copy(arr, d, tc->x, what);
	bad = km_standardize_row(tc->x, d, tc->b.mean, tc->b.scale,
							 p->X + (Size) p->t->pending * d);
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("standardized feature is out of range for type double precision"),
				 errdetail("Feature %d of %s overflowed when standardized by the basis's scaler.",
						   bad + 1, what)));
	p->y[p->t->pending++] = target;
}

/*
 * The aggregate state of this call site: acc, or a new one for its first
 * row.  Another state than the last one (another group, an INITCOND, a
 * state reached through a fresh FmgrInfo) is checked against the call's
 * basis and options (approx_state_match, every byte of the basis) unless
 * this call site made it, or checked it, with this very entry
 * (km_call_state_entry).
 */
static km_accum *
basis_call_state(FunctionCallInfo fcinfo, MemoryContext aggctx, km_accum *acc,
				 TrainCall *tc)
{
	CallHolder *h = fcinfo->flinfo->fn_extra;

	if (acc == NULL)
	{
		h->state = acc = approx_state_create(aggctx, tc);
		h->own_states = true;
		km_call_state_seen(fcinfo, acc);
	}
	else if (acc != h->state)
	{
		approx_state_match(acc, VARSIZE(acc), tc, km_call_state_entry(h, acc) != h->id);
		h->state = acc;
		km_call_state_seen(fcinfo, acc);
	}
	return acc;
}

/*
 * The basis argument of this row was compared in full with the entry's
 * (or found by its Datum): a constant's or parameter's Datum is kept, so
 * that the next rows compare the pointer only (basis_arg_life).
 */
static void
basis_arg_seen(FunctionCallInfo fcinfo, int basis_arg)
{
	CallHolder *h = fcinfo->flinfo->fn_extra;
	BasisArgLife life = basis_arg_life(fcinfo, basis_arg);

	h->basis = life == BASIS_PER_ROW ? NULL : DatumGetPointer(PG_GETARG_DATUM(basis_arg));
	h->basis_scan = life == BASIS_PER_SCAN;
}

/* A full block of buffered rows into the sums. */
static void
basis_flush_block(ApproxParts *p, TrainCall *tc)
{
	/*
	 * In a parallel plan the leader and each worker are one of several
	 * processes sharing the cores: one BLAS thread each (two threads in
	 * the leader beside two workers oversubscribe a 2-core machine).
	 */
	if (IsInParallelMode())
		km_blas_setup_scoring();
	else
		km_blas_setup();
	approx_flush(p, &tc->b, &tc->f);
}

/* kernel_train_basis_sfunc(state, features, target, options, basis) */
Datum
kernel_train_basis_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_basis_sfunc");
	km_accum   *acc = approx_state_arg(fcinfo, 0, aggctx);
	TrainCall  *tc;
	ApproxParts p;

	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kernel_train needs a basis"),
				 errdetail("The basis argument is NULL."),
				 errhint("Pass (SELECT kernel_basis(features, options) FROM ...) as the fourth argument.")));
	tc = train_call(fcinfo, PG_ARGISNULL(3) ? NULL : PG_GETARG_JSONB_P(3), 4, acc);
	acc = basis_call_state(fcinfo, aggctx, acc, tc);
	basis_arg_seen(fcinfo, 4);
	p = approx_parts(acc);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
	{
		p.t->skipped++;
		PG_RETURN_BYTEA_P((bytea *) acc);
	}
	approx_buffer_row(fcinfo, tc, &p);
	if (p.t->pending == APPROX_BLOCK)
		basis_flush_block(&p, tc);
	PG_RETURN_BYTEA_P((bytea *) acc);
}

/* Two parts of one kernel_train call: the same basis and options, or an error. */
static void
check_states_match(const km_accum *a, const km_accum *b, const ApproxParts *pa,
				   const ApproxParts *pb)
{
	if (VARSIZE(a) != VARSIZE(b) || pa->t->basis_bytes != pb->t->basis_bytes ||
		memcmp(pa->basis, pb->basis, pa->t->basis_bytes) != 0 ||
		pa->t->n_lambdas != pb->t->n_lambdas || pa->t->fit_intercept != pb->t->fit_intercept ||
		memcmp(pa->t->lambdas, pb->t->lambdas, sizeof(double) * pa->t->n_lambdas) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kernel_train states do not match"),
				 errdetail("Two parts of one kernel_train call have different bases or options."),
				 errhint("Pass one basis and one options value to every row.")));
}

/* b's buffered rows (pb, over its basis bb) into a's sums; a's own buffer stays buffered. */
static void
add_pending_rows(km_accum *a, km_basis *bb, const ApproxParts *pb)
{
	FlushBufs	f = flush_bufs_alloc(bb);

	km_basis_draw(bb);
	km_blas_setup();
	add_rows(a, bb, pb->X, pb->y, pb->t->pending, &f);
	flush_bufs_free(&f);
}

Datum
kernel_train_basis_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_basis_combine");
	km_accum   *a = approx_state_arg(fcinfo, 0, aggctx);
	km_accum   *b = approx_state_arg(fcinfo, 1, aggctx);
	km_basis	ba;
	km_basis	bb;
	ApproxParts pa;
	ApproxParts pb;
	km_error	err;

	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_BYTEA_P((bytea *) a);
	}
	pb = approx_check(b, VARSIZE(b), &bb);
	if (a == NULL)
	{
		km_mem_reserve(aggctx, (double) VARSIZE(b), "kernel_train", false);
		a = MemoryContextAlloc(aggctx, VARSIZE(b));
		memcpy(a, b, VARSIZE(b));
		PG_RETURN_BYTEA_P((bytea *) a);
	}
	pa = approx_check(a, VARSIZE(a), &ba);
	check_states_match(a, b, &pa, &pb);
	if (km_accum_combine(a, b, &err) != KM_OK)
		km_raise(&err);
	pa.t->skipped += pb.t->skipped;
	if (pb.t->pending > 0)
		add_pending_rows(a, &bb, &pb);
	PG_RETURN_BYTEA_P((bytea *) a);
}

Datum
kernel_train_basis_final(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_basis_final");
	km_accum   *acc = approx_state_arg(fcinfo, 0, aggctx);
	km_basis	b;
	ApproxParts p;
	bytea	   *result;

	if (acc == NULL)
		PG_RETURN_NULL();
	p = approx_check(acc, VARSIZE(acc), &b);
	km_progress_begin("kernel_train");
	km_basis_draw(&b);
	if (p.t->pending > 0)
	{
		/* FINALFUNC_MODIFY = READ_WRITE: the buffer goes into the sums */
		FlushBufs	f = flush_bufs_alloc(&b);

		km_blas_setup();
		approx_flush(&p, &b, &f);
		flush_bufs_free(&f);
	}
	result = approx_model(&b, km_basis_components(p.basis), acc, p.t);
	km_progress_end();
	km_notice_skipped(p.t->skipped, acc->rows);
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_BYTEA_P(result);
}
