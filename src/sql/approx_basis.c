/*
 * approx_basis.c - approximate kernel models in SQL (issue 12): the basis
 * pass.
 *
 *   kernel_basis(features float8[], options jsonb) RETURNS bytea
 *
 * An aggregate whose state is a fixed-size bytea (basis.h: the scaler's
 * moments and, for nystrom, the m rows of smallest (hash, row) key),
 * updated in place in the aggregate context and combined by parallel
 * workers (and Citus shards) without a serial function: the bytea is its
 * own serialized form.  The hash of a row is hash_bytes_extended over its
 * float8 bytes (-0.0 read as 0.0) seeded with "seed", so the centres do not
 * depend on the order of the rows or on the plan.  The training pass that
 * takes its basis is approx.c's.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "basis.h"
#include "call_cache.h"
#include "json.h"
#include "options.h"
#include "pgutil.h"
#include "repr.h"
#include "rowset.h"

PG_FUNCTION_INFO_V1(kernel_basis_sfunc);
PG_FUNCTION_INFO_V1(kernel_basis_combine);
PG_FUNCTION_INFO_V1(kernel_basis_final);

/*
 * What the basis pass keeps between rows: the options, as jsonb and
 * parsed, resolved for the d of the last state checked, and a row buffer.
 */
typedef struct BasisCall
{
	Jsonb	   *optjson;		/* NULL: none given */
	km_options	opts;
	int			resolved_d;		/* 0: not resolved yet */
	km_options	resolved;
	int			d;				/* length of row */
	double	   *row;
	MemoryContext cxt;
} BasisCall;


static BasisCall *
basis_call_build(Jsonb *opts)
{
	MemoryContext cxt = km_call_entry_context();
	MemoryContext old = MemoryContextSwitchTo(cxt);
	BasisCall  *bc = palloc0(sizeof(BasisCall));
	km_basis_step steps[KM_BASIS_MAX_STEPS];
	int			nsteps;

	bc->cxt = cxt;
	km_options_parse(opts, &bc->opts);

	/*
	 * kernel_basis is the sample step of the representation's basis list,
	 * one aggregate pass; kernel_train(..., basis) takes the steps without
	 * a pass (rff's draw).  A list without a sample has no basis.
	 */
	nsteps = km_repr_basis_steps(km_repr_lookup(bc->opts.approximation),
								 bc->opts.centres, steps);
	if (steps[0] != KM_BASIS_SAMPLE)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kernel_basis needs an approximation"),
				 errdetail("The options give no \"approximation\"; only approximate models have a basis."),
				 errhint("Add \"approximation\": \"nystrom\" or \"rff\".")));
	/* refine passes read every row again: not one aggregate pass */
	for (int i = 1; i < nsteps; i++)
		if (steps[i] != KM_BASIS_DRAW)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("kernel_basis keeps uniform centres only"),
					 errdetail("The options give \"centers\": \"%s\", which refines the centres by more passes over the rows; kernel_basis is one aggregate pass.",
							   km_centres_name(bc->opts.centres)),
					 errhint("Train in one statement, kernel_train(features, y, options) with \"centers\" in the options, or remove \"centers\".")));
	bc->optjson = km_jsonb_copy(opts);
	MemoryContextSwitchTo(old);
	return bc;
}

/* The call's options, parsed again only when no entry has them. */
static BasisCall *
basis_call(FunctionCallInfo fcinfo, Jsonb *opts)
{
	CallHolder *h = km_call_holder(fcinfo);
	BasisCall  *bc = km_call_bound(h, CALL_BASIS);
	int			slot;

	if (bc != NULL && km_jsonb_same(bc->optjson, opts))
		return bc;
	for (slot = 0; slot < CALL_SLOTS; slot++)
	{
		BasisCall  *other = km_call_slot(slot, CALL_BASIS);

		if (other != NULL && km_jsonb_same(other->optjson, opts))
			return km_call_bind(h, slot);
	}
	bc = basis_call_build(opts);
	return km_call_bind(h, km_call_insert(CALL_BASIS, bc->cxt, bc));
}

/* The state's header (O(1)) or the whole state, as untrusted input: 22P03. */
static void
basis_state_check(const km_basis_state *st, Size len, bool whole)
{
	km_error	err;

	if ((whole ? km_basis_state_validate(st, len, &err) :
		 km_basis_state_check_header(st, len, &err)) != KM_OK)
		km_raise(&err);
}

/* The options resolved for d features: the kernel the basis is drawn for. */
static const km_options *
basis_call_resolved(BasisCall *bc, int d)
{
	if (bc->resolved_d != d)
	{
		bc->resolved = bc->opts;
		km_options_resolve(&bc->resolved, d);
		bc->resolved_d = d;
	}
	return &bc->resolved;
}

static km_basis_state *
basis_state_create(MemoryContext aggctx, BasisCall *bc, int d)
{
	const km_options *opts = basis_call_resolved(bc, d);
	Size		bytes;
	km_basis_state *st;

	bytes = km_basis_state_bytes(opts->approximation, (uint32) d,
								 (uint32) opts->components);
	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_basis state is too large"),
				 errdetail("A basis of %d components of %d features would exceed 1 GB.",
						   opts->components, d),
				 errhint("Use fewer components.")));
	km_mem_reserve(aggctx, (double) bytes, "kernel_basis", false);
	st = km_alloc0_interruptible(aggctx, bytes);
	SET_VARSIZE(st, bytes);
	km_basis_state_init_zeroed(st, opts->approximation, &opts->fit.kernel, opts->standardize,
							   (uint32) d, (uint32) opts->components, (uint64) opts->seed);
	return st;
}

/* The settings of a state made with other options: an error. */
static void
check_same_settings(const km_basis_state *st, BasisCall *bc)
{
	const km_options *opts = basis_call_resolved(bc, (int) st->d);

	if (st->kind != (uint8) opts->approximation ||
		st->components != (uint32) opts->components ||
		st->seed != (uint64) opts->seed ||
		st->kernel_type != (uint32) opts->fit.kernel.type ||
		st->gamma != opts->fit.kernel.gamma ||
		st->degree != opts->fit.kernel.degree ||
		st->coef0 != opts->fit.kernel.coef0 ||
		st->standardize != (opts->standardize ? 1 : 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("Row " INT64_FORMAT " of kernel_basis has options that differ from the rows before it.",
						   st->rows + 1),
				 errhint("Pass the options as a constant or a query parameter.")));
}

/* The state argument, aligned for doubles (copied into aggctx if not). */
static km_basis_state *
basis_state_arg(FunctionCallInfo fcinfo, int argno, MemoryContext aggctx)
{
	bytea	   *b;
	km_basis_state *st;

	if (PG_ARGISNULL(argno))
		return NULL;
	b = PG_GETARG_BYTEA_P(argno);
	st = (km_basis_state *) b;
	if (((uintptr_t) st) % MAXIMUM_ALIGNOF != 0)
	{
		st = MemoryContextAlloc(aggctx, VARSIZE(b));
		memcpy(st, b, VARSIZE(b));
	}
	return st;
}

/*
 * The row's d features (arr) into bc->row, -0.0 read as 0.0 so that equal
 * rows hash equal; an error unless d is the state's length.
 */
static void
basis_call_row(BasisCall *bc, const km_basis_state *st, ArrayType *arr, int d,
			   const char *what)
{
	if ((uint32) d != st->d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("Row " INT64_FORMAT " has %d features; the first row had %u.",
						   st->rows + 1, d, st->d)));
	if (bc->d != d)
	{
		if (bc->row)
			pfree(bc->row);
		bc->row = MemoryContextAlloc(bc->cxt, sizeof(double) * d);
		bc->d = d;
	}
	km_array_copy(arr, d, bc->row, what);
	for (int j = 0; j < d; j++)
		bc->row[j] += 0.0;		/* -0.0 is 0.0: equal rows hash equal */
}

/*
 * kernel_basis_sfunc(state bytea, features float8[], options jsonb)
 *
 * A state this call site did not create (an INITCOND, a state reached
 * through a fresh FmgrInfo) is checked once, when first seen: its header,
 * which is all that adding a row relies on, and its settings against the
 * options.  Its values are checked whole by the combine and final
 * functions.
 */
Datum
kernel_basis_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_basis_sfunc");
	km_basis_state *st = basis_state_arg(fcinfo, 0, aggctx);
	Jsonb	   *opts = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	BasisCall  *bc;
	CallHolder *h;
	ArrayType  *arr;
	int			d;
	char		what[64];

	if (PG_ARGISNULL(1))
	{
		if (st == NULL)
			PG_RETURN_NULL();
		basis_state_check(st, VARSIZE(st), false);
		PG_RETURN_BYTEA_P((bytea *) st);
	}
	bc = basis_call(fcinfo, opts);
	h = fcinfo->flinfo->fn_extra;
	if (st != NULL && st != h->state)
	{
		basis_state_check(st, VARSIZE(st), false);
		check_same_settings(st, bc);
		h->state = st;
	}
	arr = PG_GETARG_ARRAYTYPE_P(1);
	snprintf(what, sizeof(what), "row " INT64_FORMAT, st ? st->rows + 1 : (int64) 1);
	d = km_array_length(arr, what);
	if (st == NULL)
		h->state = st = basis_state_create(aggctx, bc, d);
	basis_call_row(bc, st, arr, d, what);
	km_basis_state_add(st, bc->row,
					   hash_bytes_extended((const unsigned char *) bc->row,
										   (int) (sizeof(double) * d), st->seed));
	if ((st->rows & 0x3FF) == 0)
		CHECK_FOR_INTERRUPTS();
	PG_RETURN_BYTEA_P((bytea *) st);
}

Datum
kernel_basis_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_basis_combine");
	km_basis_state *a = basis_state_arg(fcinfo, 0, aggctx);
	km_basis_state *b = basis_state_arg(fcinfo, 1, aggctx);
	km_error	err;

	if (a != NULL)
		basis_state_check(a, VARSIZE(a), true);
	if (b == NULL)
	{
		if (a == NULL)
			PG_RETURN_NULL();
		PG_RETURN_BYTEA_P((bytea *) a);
	}
	basis_state_check(b, VARSIZE(b), true);
	if (a == NULL)
	{
		/* the result is the transition value: it must live in aggctx */
		km_mem_reserve(aggctx, (double) VARSIZE(b), "kernel_basis", false);
		a = MemoryContextAlloc(aggctx, VARSIZE(b));
		memcpy(a, b, VARSIZE(b));
		PG_RETURN_BYTEA_P((bytea *) a);
	}
	if (km_basis_state_combine(a, b, &err) != KM_OK)
		km_raise(&err);
	PG_RETURN_BYTEA_P((bytea *) a);
}

Datum
kernel_basis_final(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_basis_final");
	km_basis_state *st = basis_state_arg(fcinfo, 0, aggctx);
	Size		bytes;
	bytea	   *out;
	void	   *scratch;
	km_basis	check;
	km_error	err;

	if (st == NULL)
		PG_RETURN_NULL();
	basis_state_check(st, VARSIZE(st), true);
	if (st->rows == 0)
		PG_RETURN_NULL();
	bytes = km_basis_final_bytes(st);
	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_basis result is too large"),
				 errdetail("A basis of %u components of %u features would exceed 1 GB.",
						   st->components, st->d),
				 errhint("Use fewer components.")));
	out = palloc(bytes);
	scratch = palloc(km_basis_finish_scratch_bytes(st) + 1);
	if (km_basis_finish(st, out, scratch, &err) != KM_OK)
		km_raise(&err);
	SET_VARSIZE(out, bytes);
	pfree(scratch);
	/*
	 * Never return what the reader refuses.  The state's checks refuse what
	 * would make it refuse (km_basis_state_check_header), so this is a
	 * state that came from elsewhere: input, not an internal error.
	 */
	if (km_basis_decode(out, bytes, &check, &err) != KM_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("basis state is not a valid kernel_basis state"),
				 errdetail("Its basis would be refused: %s: %s", err.message, err.detail)));
	PG_RETURN_BYTEA_P(out);
}

/*
 * kernel_basis_info(basis bytea) RETURNS jsonb: what a basis holds, every
 * number included (the scaler and the standardized centres), for
 * inspection and tests.
 */
PG_FUNCTION_INFO_V1(kernel_basis_info);

static void
json_array(KmJson *j, const char *key, const double *v, uint32 n)
{
	km_json_begin_array(j, key);
	for (uint32 i = 0; i < n; i++)
		km_json_num(j, NULL, v[i]);
	km_json_end(j);
}

/* The basis argument decoded; bytes are copied when not double-aligned. */
static void
basis_arg(FunctionCallInfo fcinfo, int argno, km_basis *b)
{
	bytea	   *raw = PG_GETARG_BYTEA_P(argno);
	void	   *p = raw;
	km_error	err;

	if (((uintptr_t) p) % MAXIMUM_ALIGNOF != 0)
	{
		p = palloc(VARSIZE(raw));
		memcpy(p, raw, VARSIZE(raw));
	}
	if (km_basis_decode(p, VARSIZE(raw), b, &err) != KM_OK)
		km_raise(&err);
}

Datum
kernel_basis_info(PG_FUNCTION_ARGS)
{
	km_basis	b;
	KmJson		j;

	basis_arg(fcinfo, 0, &b);
	km_json_begin(&j);
	km_json_str(&j, "approximation", km_approx_name(b.kind));
	km_json_str(&j, "kernel", km_kernel_name(b.kernel.type));
	km_json_num(&j, "gamma", b.kernel.gamma);
	km_json_int(&j, "features", b.d);
	km_json_int(&j, "components", b.m);
	km_json_int(&j, "rows", (int64) b.rows);
	km_json_str(&j, "seed", psprintf(UINT64_FORMAT, b.seed));
	km_json_bool(&j, "standardize", b.standardize);
	json_array(&j, "mean", b.mean, b.d);
	json_array(&j, "scale", b.scale, b.d);
	if (b.centres)
	{
		km_json_begin_array(&j, "centers");
		for (uint32 i = 0; i < b.m; i++)
			json_array(&j, NULL, b.centres + (size_t) i * b.d, b.d);
		km_json_end(&j);
	}
	PG_RETURN_JSONB_P(km_json_finish(&j));
}
