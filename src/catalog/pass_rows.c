/*
 * pass_rows.c - the basis, factor and standardized block of the
 * classifiers' pass driver (pass_rows.h); the rows' reading is the cursor
 * host's (host_cursor.c).
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
		pass_batch_min_bytes(d);	/* a batch of one row: pass_rows_scan's */

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
