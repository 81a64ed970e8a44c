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
#include "repr.h"
#include "solve.h"
#include "train_rows.h"
#include "pass_rows.h"

void
pass_rows_scan(const NamedRun *run, PassRows *pr, PassBatchFn batch, void *arg)
{
	pr->seen = pr->skipped = pr->ntrain = pr->ntest = 0;
	catalog_query_scan(&run->query,
					   psprintf("SELECT s.f, s.y FROM %s", run->query.source),
					   0, NULL, NULL, batch, arg);
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
	arr = DatumGetArrayTypeP(f);
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
pass_basis_finish(km_basis_state *st, km_basis *basis)
{
	Size		blen = km_basis_final_bytes(st);
	char	   *buf = palloc_extended(blen, MCXT_ALLOC_HUGE);
	km_error	err;

	if (km_basis_finish(st, buf, palloc(km_basis_finish_scratch_bytes(st) + 1),
						&err) != KM_OK)
		km_raise(&err);
	SET_VARSIZE(buf, blen);
	pfree(st);
	if (km_basis_decode(buf, blen, basis, &err) != KM_OK)
		km_raise(&err);
	km_basis_draw(basis);
}

void
pass_factor_setup(const km_basis *basis, double **L, double **R, double *eps)
{
	uint32		m = basis->m;
	km_error	err;

	*R = palloc_extended(mul_size(sizeof(double), mul_size(m, m)), MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
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
