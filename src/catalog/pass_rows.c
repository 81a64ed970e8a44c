/*
 * pass_rows.c - the rows of one pass of the approximate pass drivers
 * (pass_rows.h): what passes_classify.c and passes_primal.c read, split
 * and standardize alike.
 */
#include "postgres.h"

#include <math.h>

#include "common/hashfn.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "pgutil.h"
#include "primal.h"
#include "repr.h"
#include "solve.h"
#include "train_rows.h"
#include "pass_rows.h"

/* Rows a cursor fetch returns at most, and the bytes a batch aims at. */
#define PASS_FETCH_ROWS 1000
#define PASS_BATCH_BYTES (4.0 * 1024 * 1024)
/* A row's bytes besides its features: tuple and array headers, target or label. */
#define PASS_ROW_OVERHEAD 128.0

/* The bytes of one fetched row of d features. */
static double
row_bytes(int d)
{
	return 8.0 * Max(d, 1) + PASS_ROW_OVERHEAD;
}

/* A batch's bytes besides its fetched rows: a row's detoasted copy, x and hbuf. */
static double
batch_extra_bytes(int d)
{
	return row_bytes(d) + 16.0 * (Max(d, 1) + 1);
}

void
pass_rows_scan(const NamedRun *run, PassRows *pr, PassBatchFn batch, void *arg)
{
	int			d = pr->d > 0 ? pr->d : pr->width;
	double		room = Min(PASS_BATCH_BYTES, km_memory_room() / 4.0);
	long		fetch = (long) Max(1.0, Min((double) PASS_FETCH_ROWS, floor(room / row_bytes(d))));

	pr->seen = pr->skipped = pr->ntrain = pr->ntest = 0;
	/* the batch, its rows' arrays read one at a time (pass_row_read) */
	pr->batch = km_mem_resize(pr->batch, pr->cxt,
							  (double) fetch * row_bytes(d) + batch_extra_bytes(d),
							  "kernel_model_train", false);
	catalog_query_scan(&run->query,
					   psprintf("SELECT s.f, s.y FROM %s", run->query.source),
					   0, NULL, NULL, fetch, batch, arg);
	km_mem_release(pr->batch);
}

double
pass_basis_bytes(km_approx kind, uint32 d, uint32 m)
{
	/* the final basis, and km_basis_finish's scratch: a centre_ref per centre */
	double		b = (double) km_basis_bytes(kind, d, m) + 32.0 * m + 1.0;

	if (km_repr_lookup(kind)->drawn)
		b += 8.0 * ((double) d * m + m);	/* W and b */
	return b;
}

double
pass_factor_bytes(km_approx kind, uint32 m)
{
	double		mm = (double) m * m;
	double		b = 8.0 * mm;	/* R */

	if (km_repr_lookup(kind)->centres)
		b += 8.0 * (mm + (double) km_approx_factor_doubles(m) + 1.0);	/* L, its work */
	return b;
}

double
pass_features_bytes(km_approx kind, uint32 d, uint32 m, int block)
{
	km_basis	b;

	memset(&b, 0, sizeof(b));
	b.kind = kind;
	b.d = d;
	b.m = m;
	return 8.0 * ((double) km_approx_features_doubles(&b, (size_t) block) + 1.0);
}

double
pass_newton_bytes(km_approx kind, int d, uint32 m, uint32 q, int block, int folds)
{
	return pass_factor_bytes(kind, m) +
		8.0 * q * ((double) km_primal_state_doubles(m) + 3.0 * m + 1.0) +	/* states, coef, vecs */
		8.0 * ((double) km_primal_step_work_doubles(m) + m + 1.0) +	/* the step's work, before */
		8.0 * block * ((double) d + m + q + 3.0) +	/* rows, features, decisions, targets */
		pass_features_bytes(kind, (uint32) d, m, block) +
		8.0 * ((double) km_primal_add_scratch_doubles(m, (size_t) block) + block) +
		(double) sizeof(km_primal_solver) * q + 16.0 * KM_MAX_CLASSES +
		(folds > 0 ? 4.0 * block : 0.0);
}

void
pass_check_memory(const km_options *opts, int d, double newton)
{
	km_approx	kind = opts->approximation;
	uint32		m = (uint32) opts->components;
	double		need = (double) km_basis_state_bytes(kind, (uint32) d, m) +
		row_bytes(d) + batch_extra_bytes(d);	/* a batch of one row: pass_rows_scan's */

	if (km_repr_lookup(kind)->drawn)
		need += pass_basis_bytes(kind, (uint32) d, m) + newton;
	km_check_memory_fewer(need, "kernel_model_train", true, "fewer components or features");
}

km_basis_state *
pass_basis_state_new(const km_options *opts, int d, KmMemGrant **grant)
{
	Size		sbytes = km_basis_state_bytes(opts->approximation, (uint32) d,
											  (uint32) opts->components);
	km_basis_state *st;

	if (sbytes == 0 || sbytes > MaxAllocSize)
		rowset_too_large(opts, (uint32) d);
	*grant = km_mem_reserve(CurrentMemoryContext, (double) sbytes, "kernel_model_train", false);
	st = km_alloc0_interruptible(CurrentMemoryContext, sbytes);
	SET_VARSIZE(st, sbytes);
	km_basis_state_init_zeroed(st, opts->approximation, &opts->fit.kernel, opts->standardize,
							   (uint32) d, (uint32) opts->components, (uint64) opts->seed);
	return st;
}

int64
pass_rows_fit(const PassRows *pr, bool all_rows)
{
	return all_rows ? pr->ntrain + pr->ntest : pr->ntrain;
}

int
pass_rows_first_d(const NamedRun *run)
{
	int			d = -1;
	bool		isnull;

	catalog_query_run(&run->query,
					  psprintf("SELECT pg_catalog.array_length(s.f, 1) FROM %s "
							   "WHERE s.f IS NOT NULL AND s.y IS NOT NULL LIMIT 1",
							   run->query.source), 0, NULL, NULL);
	if (SPI_processed == 1)
	{
		Datum		v = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		d = isnull ? 0 : DatumGetInt32(v);
	}
	SPI_freetuptable(SPI_tuptable);
	return d;
}

bool
pass_row_read(PassRows *pr, SPITupleTable *tt, uint64 i, bool basis_pass, Datum *y)
{
	bool		fnull;
	bool		ynull;
	Datum		f = SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &fnull);
	ArrayType  *arr;
	char		where[64];
	int			len;

	*y = SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &ynull);
	pr->seen++;
	if (fnull || ynull)
	{
		pr->skipped++;
		return false;
	}
	arr = DatumGetArrayTypeP(f);	/* detoasted: freed below */
	snprintf(where, sizeof(where), "row " INT64_FORMAT, pr->seen);
	len = km_array_length(arr, where);
	if (pr->d < 0)
	{
		pr->d = len;
		if (basis_pass)
			passes_rows_changed("The basis pass read a usable row where the statement before it found none.");
		pr->x = MemoryContextAlloc(pr->cxt, sizeof(double) * (len + 1));
		pr->hbuf = MemoryContextAlloc(pr->cxt, sizeof(double) * (len + 1));
	}
	else if (len != pr->d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("feature arrays must all have the same length"),
				 errdetail("Row " INT64_FORMAT " has %d features; the first row had %d.",
						   pr->seen, len, pr->d)));
	km_array_copy(arr, pr->d, pr->x, where);
	if ((Pointer) arr != DatumGetPointer(f))
		pfree(arr);				/* a batch holds one detoasted array at a time */
	return true;
}

void
pass_row_check_target(const PassRows *pr, double y)
{
	if (!isfinite(y))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("target values must be finite"),
				 errdetail("The target of row " INT64_FORMAT " is %s.",
						   pr->seen, float8out_internal(y))));
}

bool
pass_row_held(PassRows *pr, double key, int64 seed)
{
	bool		held = km_row_held_out(pr->x, pr->d, key, seed, pr->thr, pr->hbuf);

	if (held)
		pr->ntest++;
	else
		pr->ntrain++;
	return held;
}

int
pass_row_fold(PassRows *pr, double key, int64 seed, int folds)
{
	uint64		h;

	/* the hash of km_row_held_out: -0.0 is 0.0 */
	for (int j = 0; j < pr->d; j++)
		pr->hbuf[j] = pr->x[j] + 0.0;
	pr->hbuf[pr->d] = key + 0.0;
	h = hash_bytes_extended((const unsigned char *) pr->hbuf,
							(int) (sizeof(double) * (pr->d + 1)), (uint64) seed);
	return (int) (h % (uint64) folds);
}

void
pass_row_basis_add(PassRows *pr, km_basis_state *st)
{
	for (int j = 0; j < pr->d; j++)
		pr->x[j] += 0.0;		/* -0 hashes as 0 */
	km_basis_state_add(st, pr->x,
					   hash_bytes_extended((const unsigned char *) pr->x,
										   (int) (sizeof(double) * pr->d), st->seed));
}

int64
pass_row_standardize(PassRows *pr, const km_basis *basis)
{
	int			bad = km_standardize_row(pr->x, pr->d, basis->mean, basis->scale,
										 pr->Xs + pr->nblock * pr->d);

	if (bad >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("standardized feature is out of range for type double precision"),
				 errdetail("Feature %d of training row " INT64_FORMAT " overflowed when standardized.",
						   bad + 1, pr->block_first + pr->nblock + 1)));
	return pr->nblock++;
}

void
pass_basis_finish(km_basis_state *st, KmMemGrant *st_grant, km_basis *basis)
{
	Size		blen = km_basis_final_bytes(st);
	Size		slen = km_basis_finish_scratch_bytes(st) + 1;
	bool		drawn = km_repr_lookup((km_approx) st->kind)->drawn;
	double		rff = drawn ? 8.0 * ((double) st->d * st->components + st->components) : 0.0;
	KmMemGrant *g = km_mem_reserve(CurrentMemoryContext, (double) blen + slen + rff,
								   "kernel_model_train", false);
	char	   *buf = palloc_extended(blen, MCXT_ALLOC_HUGE);
	void	   *scratch = palloc_extended(slen, MCXT_ALLOC_HUGE);
	km_error	err;

	if (km_basis_finish(st, buf, scratch, &err) != KM_OK)
		km_raise(&err);
	SET_VARSIZE(buf, blen);
	pfree(scratch);
	pfree(st);
	km_mem_release(st_grant);
	(void) km_mem_resize(g, CurrentMemoryContext, (double) blen + rff, "kernel_model_train", false);
	if (km_basis_decode(buf, blen, basis, &err) != KM_OK)
		km_raise(&err);
	if (drawn)
	{
		/* km_basis_draw's, interruptible: d x m normals */
		double	   *W = palloc_extended(mul_size(sizeof(double), mul_size(basis->d, basis->m)),
										MCXT_ALLOC_HUGE);
		double	   *bv = palloc(sizeof(double) * basis->m);

		km_rff_draw_interruptible(basis->kernel.gamma, basis->seed, basis->d, basis->m,
								  W, bv, km_interrupt);
		basis->W = W;
		basis->b = bv;
	}
}

void
pass_factor_setup(const km_basis *basis, double **L, double **R, double *eps)
{
	uint32		m = basis->m;
	km_error	err;

	*R = km_alloc0_interruptible(CurrentMemoryContext,
								 mul_size(sizeof(double), mul_size(m, m)));	/* 512 MB at 8192 */
	for (uint32 j = 0; j < m; j++)
		(*R)[j + (size_t) j * m] = 1.0;
	if (km_repr_lookup(basis->kind)->centres)
	{
		double	   *fwork = palloc_extended(mul_size(sizeof(double), km_approx_factor_doubles(m) + 1),
											MCXT_ALLOC_HUGE);

		*L = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE);
		if (km_approx_factor(basis, *L, eps, fwork, &err, km_interrupt) != KM_OK)
			km_raise(&err);
		pfree(fwork);
	}
}
