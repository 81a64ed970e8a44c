/*
 * approx.c - approximate kernel models in SQL (issue 12): the training
 * pass over a basis (approx_basis.c makes it).
 *
 *   kernel_train(features float8[], target float8, options jsonb, basis bytea) RETURNS bytea
 *
 * A road of the pass machinery (issue 28): the pass is the learner's own
 * sums pass over the given basis (learn/learner.h km_learn_sums_pass:
 * ridge's m x m sums of the features z(x), 256 rows a chunk, the pass
 * nystrom and rff ridge ask after their basis pass), its states the pass
 * aggregate's (pass_desc.h, pass_state.c: an expanded object whose flat
 * form ships no buffered row), its combine the pass aggregate's, and the
 * final asks the learner for the model from the combined sums
 * (km_learn_sums_model).  What this file keeps is the glue: the call
 * site's cache of (options, basis) and the run built from them, issue 29's
 * checks that every row has that basis and those options, and each row's
 * errors.
 *
 * A state carries its run (PassRun.carry): the solve's settings (the
 * lambdas, the intercept) and the sums pass's descriptor, so that a
 * process that runs no transition (a parallel leader that only combines,
 * a Citus coordinator) rebuilds the pass from a state, as untrusted bytes.
 */
#include "postgres.h"

#include <math.h>

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
#include "pass_desc.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "pipeline_approx.h"
#include "repr.h"
#include "rowset.h"
#include "train_paths.h"
#include "train_rows.h"
#include "model.h"
#include "model_bytea.h"
#include "solve.h"

PG_FUNCTION_INFO_V1(kernel_train_basis_sfunc);
PG_FUNCTION_INFO_V1(kernel_train_basis_combine);
PG_FUNCTION_INFO_V1(kernel_train_basis_final);

#define APPROX_CARRY_MAGIC 0x4B4D4133u	/* "KMA3": the settings, then the descriptor */
#define PROGRESS_ROWS 1000000

/*
 * What a run carries in front of its descriptor: the solve's settings (a
 * final function sees no argument but the state).
 */
typedef struct ApproxCarry
{
	uint32		magic;			/* APPROX_CARRY_MAGIC */
	int32		n_lambdas;
	uint32		fit_intercept;	/* 0 or 1 */
	uint32		pad;
	uint64		final_doubles;	/* the final's working memory as 0.3.0 counted it */
	uint64		state_grant;	/* bytes a state counts (approx_state_bytes) */
	double		lambdas[KM_APPROX_MAX_LAMBDAS];
} ApproxCarry;

static void
bad_state(const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
			 errmsg("aggregate state is not a kernel_train state"),
			 errdetail("%s", detail)));
}

/* Bytes of the solve besides the state: scratch m x m and km_approx_solve's work. */
static double
approx_solve_memory(uint32 m)
{
	return 8.0 * ((double) m * m + (double) km_approx_solve_doubles(m) + 2.0 * m);
}

/* What the training pass keeps between rows: a call cache entry. */
typedef struct TrainCall
{
	Jsonb	   *optjson;
	km_options	opts;
	ApproxCarry tail;			/* the lambdas and intercept a state must have */
	char	   *basis;			/* an aligned copy, validated */
	Size		basis_len;
	char		toast_ptr[32];	/* the basis's TOAST pointer, when it came as one */
	Size		toast_len;
	km_basis	b;				/* decoded (its scaler: each row's check) */
	double	   *x;				/* d: a row standardized, checked */
	PassRun    *run;			/* the learner's sums pass over the basis, carrying tail */
	MemoryContext cxt;			/* the entry's own; what it keeps is counted (pgutil.h) */
} TrainCall;

/* The lambdas to score: the options' grid, checked (memory_train.h), resolved. */
static void
approx_lambdas(const km_options *opts, ApproxCarry *t)
{
	km_approx_check_lambdas(opts);
	t->n_lambdas = opts->lambdas.n;
	for (int i = 0; i < opts->lambdas.n; i++)
		t->lambdas[i] = opts->lambdas.v[i];
	t->fit_intercept = opts->fit_intercept ? 1 : 0;
}

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

/* Rows of 0.3.0's state buffer, the chunk of the sums pass. */
#define APPROX_BLOCK 256
/* 0.3.0's state tail: its header fields and the lambdas. */
#define APPROX_TAIL_BYTES MAXALIGN(40 + 8 * KM_APPROX_MAX_LAMBDAS)

/*
 * Bytes a state counts against kernel_ml.max_memory: 0.3.0's (the m x m
 * sums, a tail, a chunk of rows, the basis), within a few kB of a pass
 * state's (its sums, a chunk of rows with their hash, class and fold
 * columns, the run it carries), so that the limits of a call are as before.
 */
static Size
approx_state_bytes(uint32 m, uint32 d, Size basis_bytes)
{
	Size		accb = km_accum_bytes(KM_ACCUM_GRAM, m);

	if (accb == 0)
		return 0;
	return add_size(add_size(accb, APPROX_TAIL_BYTES),
					add_size(mul_size(sizeof(double), mul_size(APPROX_BLOCK, (Size) d + 1)),
							 MAXALIGN(basis_bytes)));
}

/* Doubles of the sums pass's buffers: a chunk's features, their work, m x m scratch. */
static Size
flush_bufs_doubles(const km_basis *b)
{
	return add_size(add_size(mul_size(APPROX_BLOCK, b->m),
							 km_approx_features_doubles(b, APPROX_BLOCK) + 1),
					mul_size(b->m, b->m));
}

/*
 * The memory of a call's entry checked, and reserved in its context
 * (tc->cxt): a state, the pass's buffers and the solve, as 0.3.0 counted
 * them, and what the pass adds to 0.3.0's: its own and its carry's copies
 * of the basis and its KM_BLOCK_ROWS x d chunk of standardized rows (the
 * pass's other allocations are these buffers, not counted twice).
 */
static void
train_call_memory(TrainCall *tc)
{
	double		pass_extra = 2.0 * (double) tc->basis_len +
		8.0 * (double) KM_BLOCK_ROWS * tc->b.d;

	km_check_components_memory(tc->b.m, "kernel_train");
	km_check_memory((double) approx_state_bytes(tc->b.m, tc->b.d, tc->basis_len) +
					8.0 * (double) flush_bufs_doubles(&tc->b) +
					approx_solve_memory(tc->b.m) + pass_extra, "kernel_train", false);
	/* counted against kernel_ml.max_memory until the entry is evicted */
	(void) km_mem_reserve(tc->cxt, (double) tc->basis_len + pass_extra +
						  8.0 * ((double) flush_bufs_doubles(&tc->b) + (double) (tc->b.d + 1) * tc->b.m),
						  "kernel_train", false);
}

/*
 * The learner's sums pass over the entry's basis and its run, in the
 * entry's context: the pass's descriptor (pass_desc_build, as the
 * aggregate host writes one; built in a context of its own, gone once
 * copied) behind the settings is what its states carry.
 */
static PassRun *
train_run(TrainCall *tc)
{
	km_train_env *env = pass_env_make(tc->cxt, NULL);
	MemoryContext tmp;
	MemoryContext old;
	km_pass    *pass;
	km_error	err;
	PassRules	rules;
	bytea	   *desc;
	char	   *carry;
	Size		len;
	PassRun    *run;

	if (km_learn_sums_pass(tc->basis, tc->basis_len, env, &pass, &err) != KM_OK)
		km_raise(&err);
	memset(&rules, 0, sizeof(rules));
	rules.d = (int) tc->b.d;
	rules.target = PASS_VALUES;
	rules.all_rows = true;
	rules.side = KM_SIDE_ALL;
	tmp = AllocSetContextCreate(tc->cxt, "kernel_train descriptor", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);
	desc = pass_desc_build(pass, &rules);
	len = sizeof(ApproxCarry) + VARSIZE(desc);
	carry = palloc(len);
	memcpy(carry, &tc->tail, sizeof(ApproxCarry));
	memcpy(carry + sizeof(ApproxCarry), desc, VARSIZE(desc));
	MemoryContextSwitchTo(old);
	run = pass_run_make(pass, &rules, carry, len, sizeof(ApproxCarry), tc->cxt);
	MemoryContextDelete(tmp);
	run->what = "kernel_train";
	run->state_grant = (double) approx_state_bytes(tc->b.m, tc->b.d, tc->basis_len);
	return run;
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
	tc->tail.magic = APPROX_CARRY_MAGIC;
	tc->tail.final_doubles = (uint64) flush_bufs_doubles(&tc->b);
	tc->tail.state_grant = (uint64) approx_state_bytes(tc->b.m, tc->b.d, tc->basis_len);
	train_call_memory(tc);
	tc->x = palloc(sizeof(double) * tc->b.d);
	tc->run = train_run(tc);
	MemoryContextSwitchTo(old);
	return tc;
}

/*
 * The call's options and decoded basis, from the entry of the previous
 * row, another entry, or parsed anew.  has_state: the row has a state.
 */
static TrainCall *
train_call(FunctionCallInfo fcinfo, Jsonb *opts, int basis_arg, bool has_state)
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
		(!h->basis_scan || (has_state && h->own_states)) &&
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

/* The sums' dimension a state's header gives (untrusted: for a message only). */
static uint32
state_components(const PassStateHeader *st)
{
	const km_accum *acc = (const km_accum *) ((const char *) st + MAXALIGN(sizeof(PassStateHeader)));

	if (st->external || st->state_bytes < sizeof(km_accum) ||
		VARSIZE(st) < MAXALIGN(sizeof(PassStateHeader)) + sizeof(km_accum))
		return 0;
	return acc->dim;
}

/*
 * A state other than the one the call site used last (another group, an
 * INITCOND, a state reached through a fresh FmgrInfo, the state of a call
 * whose basis changed), checked against the call's run: its key (a hash
 * of the basis's descriptor and the settings) and, unless the call site
 * made it or checked it with this entry (!full), every byte it carries
 * (issue 29).  Another basis or other options: 22023; its layout is
 * checked by pass_state_arg (22P03).
 */
static void
approx_state_match(Datum d, const TrainCall *tc, bool full)
{
	PassStateHeader *st = pass_state_header(d);
	const PassRun *run = tc->run;
	const char *carry;
	Size		len;

	if (st->key == run->key && st->carry_len == run->carry_len && !full)
		return;
	carry = pass_state_carry(d, &len);
	if (carry == NULL || len < sizeof(ApproxCarry) ||
		((const ApproxCarry *) carry)->magic != APPROX_CARRY_MAGIC)
		bad_state("The state carries no kernel_train pass.");
	if (len == run->carry_len && memcmp(carry, run->carry, len) == 0)
		return;
	/* the same descriptor (basis) behind other settings: the options differ */
	if (carry != NULL && len == run->carry_len &&
		memcmp(carry + sizeof(ApproxCarry), run->carry + sizeof(ApproxCarry),
			   len - sizeof(ApproxCarry)) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("Row " INT64_FORMAT " of kernel_train has options that differ from the rows before it.",
						   st->rows + st->skipped + 1),
				 errhint("Pass the options as a constant or a query parameter.")));

	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the basis must be the same for every row of a kernel_train call"),
			 errdetail("Row " INT64_FORMAT " has a basis of %u features and %u components that differs from the basis of the rows before it (%u features, %u components).",
					   st->rows + st->skipped + 1, tc->b.d, tc->b.m,
					   st->d, state_components(st)),
			 errhint("Pass one basis, as a constant, a scalar subquery or a query parameter.")));
}

/*
 * The aggregate state of this call site: argument 0, or a new one for its
 * first row (*out: its datum).  Another state than the last one is
 * checked against the call's basis and options (approx_state_match)
 * unless this call site made it, or checked it, with this very entry
 * (km_call_state_entry).
 */
static PassStateHeader *
basis_call_state(FunctionCallInfo fcinfo, MemoryContext aggctx, TrainCall *tc, Datum *out)
{
	CallHolder *h = fcinfo->flinfo->fn_extra;
	PassStateHeader *st;
	Size		bytes;

	if (PG_ARGISNULL(0))
	{
		bytes = add_size(pass_state_size(tc->run, false, tc->run->chunk),
						 MAXALIGN(tc->run->carry_len));
		if (bytes > MaxAllocSize || approx_state_bytes(tc->b.m, tc->b.d, tc->basis_len) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("kernel_train state is too large"),
					 errdetail("A state of %u components would exceed 1 GB.", tc->b.m),
					 errhint("Use fewer components.")));
		st = pass_state_start(tc->run, aggctx, out);
		h->own_states = true;
	}
	else
	{
		Pointer		given = DatumGetPointer(PG_GETARG_DATUM(0));

		if (given != h->state)
			approx_state_match(PG_GETARG_DATUM(0), tc, km_call_state_entry(h, given) != h->id);
		st = pass_state_arg(PG_GETARG_DATUM(0), tc->run, aggctx, true, out);
		if (DatumGetPointer(*out) == given && given == h->state)
			return st;
	}
	h->state = DatumGetPointer(*out);
	km_call_state_seen(fcinfo, h->state);
	return st;
}

/*
 * The row of arguments 1 (features) and 2 (target), checked (its
 * standardization by the basis's scaler too), into the state's buffer;
 * a full buffer is added by the learner's sums pass.
 */
static void
approx_put_row(FunctionCallInfo fcinfo, TrainCall *tc, PassStateHeader *st)
{
	ArrayType  *arr;
	double		target;
	double	   *x;
	int			d;
	int			bad;
	int64		before = st->added;
	char		what[64];

	snprintf(what, sizeof(what), "row " INT64_FORMAT, st->rows + st->skipped + 1);
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
	x = pass_state_slot(tc->run, st);
	km_array_copy(arr, d, x, what);
	bad = km_standardize_row(x, d, tc->b.mean, tc->b.scale, tc->x);
	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("standardized feature is out of range for type double precision"),
				 errdetail("Feature %d of %s overflowed when standardized by the basis's scaler.",
						   bad + 1, what)));
	pass_state_commit(tc->run, st, target, 0);
	if (st->err.status != KM_OK)
		km_raise(&st->err);
	if (before / PROGRESS_ROWS != st->added / PROGRESS_ROWS)
		km_progress_step("kernel_train statistics: " INT64_FORMAT " rows", st->added);
}

/* kernel_train_basis_sfunc(state, features, target, options, basis) */
Datum
kernel_train_basis_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_basis_sfunc");
	TrainCall  *tc;
	PassStateHeader *st;
	Datum		out;

	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kernel_train needs a basis"),
				 errdetail("The basis argument is NULL."),
				 errhint("Pass (SELECT kernel_basis(features, options) FROM ...) as the fourth argument.")));
	tc = train_call(fcinfo, PG_ARGISNULL(3) ? NULL : PG_GETARG_JSONB_P(3), 4, !PG_ARGISNULL(0));
	st = basis_call_state(fcinfo, aggctx, tc, &out);
	basis_arg_seen(fcinfo, 4);
	if (PG_ARGISNULL(1) || PG_ARGISNULL(2))
		st->skipped++;
	else
		approx_put_row(fcinfo, tc, st);
	PG_RETURN_DATUM(out);
}

/*
 * The run of a state that reaches a combine or final function: this
 * process's (a call site's entry, or one rebuilt before) by the state's
 * key, else rebuilt from what the state carries, as untrusted bytes (the
 * settings checked here, the descriptor by pass_run_from_carry).
 */
static PassRun *
state_run(Datum d)
{
	PassStateHeader *st = pass_state_header(d);
	const char *carry;
	Size		len;
	ApproxCarry t;
	PassDescHeader dh;
	PassRun    *run;

	for (int slot = 0; slot < CALL_SLOTS; slot++)
	{
		TrainCall  *tc = km_call_slot(slot, CALL_TRAIN);

		if (tc != NULL && tc->run->key == st->key)
			return tc->run;
	}
	if ((run = pass_run_carried(st->key)) != NULL)
		return run;
	carry = pass_state_carry(d, &len);
	if (carry == NULL || len < sizeof(ApproxCarry) + sizeof(PassDescHeader))
		bad_state("The state carries no kernel_train pass.");
	memcpy(&t, carry, sizeof(t));
	memcpy(&dh, carry + sizeof(t), sizeof(dh));
	if (t.magic != APPROX_CARRY_MAGIC || t.n_lambdas < 1 || t.state_grant > MaxAllocSize ||
		t.n_lambdas > KM_APPROX_MAX_LAMBDAS || t.fit_intercept > 1 ||
		dh.kind != KM_LEARN_SUMS_KIND)
		bad_state("The state's settings or pass have invalid fields.");
	for (int i = 0; i < t.n_lambdas; i++)
		if (!isfinite(t.lambdas[i]) || !(t.lambdas[i] > 0.0))
			bad_state("A lambda of the state is not a finite number > 0.");
	return pass_run_keep_carried(carry, len, sizeof(ApproxCarry), "kernel_train",
								 (double) t.state_grant);
}

Datum
kernel_train_basis_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_train_basis_combine");
	PassRun    *run;

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	run = state_run(PG_GETARG_DATUM(1));
	if (!PG_ARGISNULL(0) && pass_state_header(PG_GETARG_DATUM(0))->key != run->key)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kernel_train states do not match"),
				 errdetail("Two parts of one kernel_train call have different bases or options."),
				 errhint("Pass one basis and one options value to every row.")));
	return pass_states_combine(run, fcinfo, aggctx);
}

Datum
kernel_train_basis_final(PG_FUNCTION_ARGS)
{
	PassRun    *run;
	PassStateHeader *st;
	ApproxCarry t;
	km_sums_fit fit;
	km_train_env env;
	km_error	err;
	km_model	model;
	const km_accum *acc;
	bytea	   *result = NULL;

	(void) agg_context(fcinfo, "kernel_train_basis_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	run = state_run(PG_GETARG_DATUM(0));
	/*
	 * Flushed in place (FINALFUNC_MODIFY = READ_WRITE; nodeAgg hands a final
	 * function its expanded state read-only all the same), not copied
	 */
	st = pass_state_arg(PG_GETARG_DATUM(0), run, CurrentMemoryContext, false, NULL);
	acc = pass_state_data(run, st);
	/* the sums of a state from elsewhere, whole, as 0.3.0 checked them */
	if (st->err.status == KM_OK && km_accum_validate(acc, run->pass->state_bytes, &err) != KM_OK)
		km_raise(&err);
	/*
	 * 0.3.0's check of the final's working memory where rows were still
	 * buffered (a chunk's features and an m x m scratch; the solve's work
	 * is of that size), so that a call's limits are what they were
	 */
	memcpy(&t, run->carry, sizeof(t));
	if (st->nbuf > 0)
		km_check_memory(8.0 * (double) t.final_doubles, "kernel_train", false);
	km_progress_begin("kernel_train");
	km_blas_setup();
	pass_state_flush(run, st, st);
	if (st->err.status != KM_OK)
		km_raise(&st->err);
	if (acc->rows > 0)
	{
		memset(&fit, 0, sizeof(fit));
		fit.lambdas = t.lambdas;
		fit.n_lambdas = t.n_lambdas;
		fit.fit_intercept = t.fit_intercept != 0;
		fit.rows_skipped = (uint64) st->skipped;
		km_train_env_palloc(&env);
		/* the learner's finish after its sums pass, over the combined sums */
		if (km_learn_sums_model(run->pass, acc, &fit, &env, &model, &err) != KM_OK)
			km_raise(&err);
		sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
			   &model.writer_version[1], &model.writer_version[2]);
		result = km_model_to_bytea(&model);
	}
	km_progress_end();
	km_notice_skipped(st->skipped, acc->rows);
	if (result == NULL)
		PG_RETURN_NULL();
	PG_RETURN_BYTEA_P(result);
}
