/*
 * approx_basis.c - approximate kernel models in SQL (issue 12): the basis
 * pass.
 *
 *   kernel_basis(features float8[], options jsonb) RETURNS bytea
 *
 * A road of the pass machinery (issue 28): the pass is the learner's own
 * basis pass (pipeline_approx.h km_learn_basis_pass: the scaler's moments
 * and, for nystrom, the m rows of smallest (hash, row) key, basis.h) for
 * the options resolved for the rows' d, its states the pass aggregate's
 * (pass_desc.h: an expanded object whose flat form ships no buffered row,
 * carrying its pass so that a process that runs no transition rebuilds
 * it), its combine the pass aggregate's.  The hash of a row is
 * hash_bytes_extended over its float8 bytes (-0.0 read as 0.0) seeded with
 * "seed", so the centres do not depend on the order of the rows or on the
 * plan.  The training pass that takes its basis is approx.c's.
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
#include "pass_desc.h"
#include "pgutil.h"
#include "pipeline_approx.h"
#include "repr.h"
#include "rowset.h"

PG_FUNCTION_INFO_V1(kernel_basis_sfunc);
PG_FUNCTION_INFO_V1(kernel_basis_combine);
PG_FUNCTION_INFO_V1(kernel_basis_final);

/*
 * What the basis pass keeps between rows: the options, as jsonb and
 * parsed, resolved for the d of the last run built, and that run: the
 * learner's basis pass for them (pipeline_approx.h km_learn_basis_pass).
 */
typedef struct BasisCall
{
	Jsonb	   *optjson;		/* NULL: none given */
	km_options	opts;
	int			resolved_d;		/* 0: not resolved yet */
	km_options	resolved;
	PassRun    *run;			/* the basis pass for resolved_d, or NULL */
	MemoryContext run_cxt;		/* its memory (a child of cxt) */
	MemoryContext cxt;
} BasisCall;

#define BASIS_CARRY_MAGIC 0x4B4D4233u	/* "KMB3": the grant, then the descriptor */

/* What a basis run carries in front of its descriptor. */
typedef struct BasisCarry
{
	uint32		magic;			/* BASIS_CARRY_MAGIC */
	uint32		pad;
	uint64		state_grant;	/* bytes a state counts: its km_basis_state's */
} BasisCarry;



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

/* The options resolved for d features: the kernel the basis is drawn for. */
static const km_options *
basis_call_resolved(BasisCall *bc, int d)
{
	if (bc->resolved_d != d)
	{
		bc->resolved = bc->opts;
		km_options_resolve(&bc->resolved, d);
		bc->resolved_d = d;
		if (bc->run_cxt != NULL)
			MemoryContextDelete(bc->run_cxt);
		bc->run_cxt = NULL;
		bc->run = NULL;
	}
	return &bc->resolved;
}

/*
 * The learner's basis pass for the options resolved for d features and
 * its run (made once per d, in the entry's memory): its descriptor
 * (pass_desc_build, as the aggregate host writes one) behind the grant
 * is what its states carry.
 */
static PassRun *
basis_run(BasisCall *bc, int d)
{
	const km_options *opts = basis_call_resolved(bc, d);
	Size		bytes;
	MemoryContext cxt;
	MemoryContext tmp;
	MemoryContext old;
	km_pass    *pass;
	km_error	err;
	PassRules	rules;
	bytea	   *desc;
	BasisCarry	head;
	char	   *carry;
	Size		len;

	if (bc->run != NULL)
		return bc->run;
	bytes = km_basis_state_bytes(opts->approximation, (uint32) d,
								 (uint32) opts->components);
	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_basis state is too large"),
				 errdetail("A basis of %d components of %d features would exceed 1 GB.",
						   opts->components, d),
				 errhint("Use fewer components.")));
	/* under the current context until complete (an error frees it) */
	cxt = AllocSetContextCreate(CurrentMemoryContext, "kernel_basis pass", ALLOCSET_SMALL_SIZES);
	if (km_learn_basis_pass(opts, d, pass_env_make(cxt, NULL), &pass, &err) != KM_OK)
		km_raise(&err);
	memset(&rules, 0, sizeof(rules));
	rules.d = d;
	rules.target = PASS_ANY;
	rules.all_rows = true;
	rules.seed = opts->seed;
	rules.side = KM_SIDE_ALL;
	tmp = AllocSetContextCreate(cxt, "kernel_basis descriptor", ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(tmp);
	desc = pass_desc_build(pass, &rules);
	memset(&head, 0, sizeof(head));
	head.magic = BASIS_CARRY_MAGIC;
	head.state_grant = (uint64) bytes;
	len = sizeof(BasisCarry) + VARSIZE(desc);
	carry = palloc(len);
	memcpy(carry, &head, sizeof(head));
	memcpy(carry + sizeof(head), desc, VARSIZE(desc));
	MemoryContextSwitchTo(old);
	bc->run = pass_run_make(pass, &rules, carry, len, sizeof(BasisCarry), cxt);
	MemoryContextDelete(tmp);
	bc->run->what = "kernel_basis";
	bc->run->state_grant = (double) bytes;
	MemoryContextSetParent(cxt, bc->cxt);
	bc->run_cxt = cxt;
	return bc->run;
}

static PassRun *basis_state_run(Datum d);

/* The km_basis_state of a pass state: its header (O(1)) or whole, as untrusted input: 22P03. */
static km_basis_state *
basis_state_of(PassRun *run, PassStateHeader *st, bool whole)
{
	km_basis_state *bs = pass_state_data(run, st);
	km_error	err;

	if ((whole ? km_basis_state_validate(bs, run->pass->state_bytes, &err) :
		 km_basis_state_check_header(bs, run->pass->state_bytes, &err)) != KM_OK)
		km_raise(&err);
	return bs;
}

/*
 * A state this call site did not make (an INITCOND, a state reached
 * through a fresh FmgrInfo), against the call's options: made with other
 * options, 22023; not a state of this pass, 22P03 (pass_state_arg).
 */
static void
basis_state_match(Datum d, BasisCall *bc)
{
	PassStateHeader *st = pass_state_header(d);
	PassRun    *run;
	const char *carry;
	Size		len;

	if (st->d < 1 || st->d > (1 << 20))
		return;					/* pass_state_arg refuses it */
	run = basis_run(bc, (int) st->d);
	if (st->key == run->key)
		return;
	carry = pass_state_carry(d, &len);
	if (carry != NULL && len >= sizeof(BasisCarry) &&
		((const BasisCarry *) carry)->magic == BASIS_CARRY_MAGIC)
	{
		/* its own pass's layout and header first, as 0.3.0 checked them (22P03) */
		PassRun    *own = basis_state_run(d);

		(void) basis_state_of(own, pass_state_arg(d, own, CurrentMemoryContext, false, NULL),
							  false);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("options must be the same for every row of an aggregate call"),
				 errdetail("Row " INT64_FORMAT " of kernel_basis has options that differ from the rows before it.",
						   st->rows + 1),
				 errhint("Pass the options as a constant or a query parameter.")));
	}
}

/*
 * kernel_basis_sfunc(state bytea, features float8[], options jsonb)
 *
 * The row into the state of the learner's basis pass (pass_desc.h): its
 * features copied into the state's buffer, -0.0 read as 0.0 so that equal
 * rows hash equal, its hash (hash_bytes_extended over its float8 bytes,
 * seeded with "seed"); a full chunk is added by the pass.  A state this
 * call site did not make is checked once, when first seen: its key
 * against the options, its pass state's header (all that adding a row
 * relies on); its values are checked whole by the final function.
 */
Datum
kernel_basis_sfunc(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_basis_sfunc");
	Jsonb	   *opts = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	BasisCall  *bc;
	CallHolder *h;
	PassRun    *run;
	PassStateHeader *st;
	ArrayType  *arr;
	double	   *x;
	Datum		out;
	int			d;
	char		what[64];

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		(void) pass_state_header(PG_GETARG_DATUM(0));
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	bc = basis_call(fcinfo, opts);
	h = fcinfo->flinfo->fn_extra;
	arr = PG_GETARG_ARRAYTYPE_P(1);
	if (PG_ARGISNULL(0))
	{
		snprintf(what, sizeof(what), "row 1");
		d = km_array_length(arr, what);
		run = basis_run(bc, d);
		st = pass_state_start(run, aggctx, &out);
		h->state = DatumGetPointer(out);
	}
	else
	{
		Pointer		given = DatumGetPointer(PG_GETARG_DATUM(0));

		if (given != h->state)
			basis_state_match(PG_GETARG_DATUM(0), bc);
		/* the call site's own state: made with the run of its entry */
		run = given == h->state && bc->run != NULL ? bc->run :
			basis_run(bc, (int) pass_state_header(PG_GETARG_DATUM(0))->d);
		st = pass_state_arg(PG_GETARG_DATUM(0), run, aggctx, true, &out);
		if (given != h->state)
		{
			(void) basis_state_of(run, st, false);
			h->state = DatumGetPointer(out);
		}
		snprintf(what, sizeof(what), "row " INT64_FORMAT, st->rows + 1);
		d = km_array_length(arr, what);
		if ((uint32) d != st->d)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("feature arrays must all have the same length"),
					 errdetail("Row " INT64_FORMAT " has %d features; the first row had %u.",
							   st->rows + 1, d, st->d)));
	}
	x = pass_state_slot(run, st);
	km_array_copy(arr, d, x, what);
	for (int j = 0; j < d; j++)
		x[j] += 0.0;			/* -0.0 is 0.0: equal rows hash equal */
	pass_state_commit(run, st, 0.0,
					  hash_bytes_extended((const unsigned char *) x,
										  (int) (sizeof(double) * d), (uint64) run->rules.seed));
	if (st->err.status != KM_OK)
		km_raise(&st->err);
	PG_RETURN_DATUM(out);
}

/*
 * The run of a state that reaches a combine or final function: this
 * process's (a call site's entry, or one rebuilt before) by the state's
 * key, else rebuilt from what the state carries, as untrusted bytes.
 */
static PassRun *
basis_state_run(Datum d)
{
	PassStateHeader *st = pass_state_header(d);
	const char *carry;
	Size		len;
	BasisCarry	head;
	PassDescHeader dh;
	PassRun    *run;

	for (int slot = 0; slot < CALL_SLOTS; slot++)
	{
		BasisCall  *bc = km_call_slot(slot, CALL_BASIS);

		if (bc != NULL && bc->run != NULL && bc->run->key == st->key)
			return bc->run;
	}
	if ((run = pass_run_carried(st->key)) != NULL)
		return run;
	carry = pass_state_carry(d, &len);
	if (carry == NULL || len < sizeof(BasisCarry) + sizeof(PassDescHeader))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("basis state is not a valid kernel_basis state"),
				 errdetail("The state carries no kernel_basis pass.")));
	memcpy(&head, carry, sizeof(head));
	memcpy(&dh, carry + sizeof(head), sizeof(dh));
	if (head.magic != BASIS_CARRY_MAGIC || head.state_grant > MaxAllocSize ||
		dh.kind != KM_LEARN_BASIS_KIND)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_BINARY_REPRESENTATION),
				 errmsg("basis state is not a valid kernel_basis state"),
				 errdetail("The state's settings or pass have invalid fields.")));
	return pass_run_keep_carried(carry, len, sizeof(BasisCarry), "kernel_basis",
								 (double) head.state_grant);
}

Datum
kernel_basis_combine(PG_FUNCTION_ARGS)
{
	MemoryContext aggctx = agg_context(fcinfo, "kernel_basis_combine");

	if (PG_ARGISNULL(1))
	{
		if (PG_ARGISNULL(0))
			PG_RETURN_NULL();
		PG_RETURN_DATUM(PG_GETARG_DATUM(0));
	}
	return pass_states_combine(basis_state_run(PG_GETARG_DATUM(1)), fcinfo, aggctx);
}

Datum
kernel_basis_final(PG_FUNCTION_ARGS)
{
	PassRun    *run;
	PassStateHeader *st;
	km_basis_state *bs;
	Size		bytes;
	bytea	   *out;
	void	   *scratch;
	km_basis	check;
	km_error	err;

	(void) agg_context(fcinfo, "kernel_basis_final");
	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	run = basis_state_run(PG_GETARG_DATUM(0));
	/* flushed in place (FINALFUNC_MODIFY = READ_WRITE), not copied */
	st = pass_state_arg(PG_GETARG_DATUM(0), run, CurrentMemoryContext, false, NULL);
	(void) basis_state_of(run, st, false);
	pass_state_flush(run, st, st);
	if (st->err.status != KM_OK)
		km_raise(&st->err);
	bs = basis_state_of(run, st, true);
	if (bs->rows == 0)
		PG_RETURN_NULL();
	bytes = km_basis_final_bytes(bs);
	if (bytes == 0 || bytes > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_basis result is too large"),
				 errdetail("A basis of %u components of %u features would exceed 1 GB.",
						   bs->components, bs->d),
				 errhint("Use fewer components.")));
	out = palloc(bytes);
	scratch = palloc(km_basis_finish_scratch_bytes(bs) + 1);
	if (km_basis_finish(bs, out, scratch, &err) != KM_OK)
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
