/*
 * approx_primal.c - approximate regression in the primal (a method's
 * km_method_ops.primal_fit, e.g. svr's L2-loss epsilon-SVR) over the rows
 * kernel_train collected: the basis pass (approx.c's rowset_basis), then
 * the method's Newton passes (its primal_add .. primal_result pieces, as
 * the named models' passes drive them, else its primal_fit), which ask for
 * the features a block at a time
 * (standardized, mapped and, for nystrom, whitened by L^-1 here).  No BLAS
 * here: the numbers are the core's (primal_pass.h, the method's file).
 */
#include "postgres.h"

#include <math.h>

#include "miscadmin.h"
#include "utils/memutils.h"

#include "basis.h"
#include "model.h"
#include "model_bytea.h"
#include "pgprogress.h"
#include "pgutil.h"
#include "primal.h"
#include "primal_pass.h"
#include "repr.h"
#include "train_paths.h"
#include "train_rows.h"

/* Rows per block of features. */
#define AP_BLOCK 512

/* Flops of one uninterruptible piece of features (about 0.1 s on one core). */
#define AP_PIECE_FLOPS 1e9

/* The rows as the method's passes read them (km_row_blocks.arg). */
typedef struct PrimalRows
{
	RowSet	   *rs;
	const km_basis *b;
	const double *L;			/* nystrom: chol(K_mm + eps I); rff: NULL */
	double	   *Xs;				/* AP_BLOCK x d */
	double	   *Z;				/* AP_BLOCK x m */
	double	   *fwork;			/* km_approx_features_doubles(b, AP_BLOCK) */
} PrimalRows;

static const double *
primal_rows_features(void *arg, size_t i0, size_t rows)
{
	PrimalRows *pr = arg;
	uint32		d = (uint32) pr->rs->d;
	uint32		m = pr->b->m;
	size_t		piece = km_primal_piece_rows(m, d, pr->L != NULL, rows, AP_PIECE_FLOPS);
	km_error	err;

	rowset_standardize(pr->rs, pr->b, (int64) i0, (int64) rows, pr->Xs);
	for (size_t p0 = 0; p0 < rows; p0 += piece)
	{
		size_t		r = Min(piece, rows - p0);

		if (km_primal_block_features(pr->b, pr->L, pr->Xs + p0 * d, r,
									 pr->Z + p0 * m, pr->fwork, &err) != KM_OK)
			km_raise(&err);
		CHECK_FOR_INTERRUPTS();
	}
	return pr->Z;
}

/*
 * The method's fit by its pieces (km_method_ops.primal_add .. primal_result,
 * as the named models' passes drive them, src/catalog/passes_primal.c):
 * Newton passes over the rows' blocks from coef = 0, b = 0, then one pass
 * for the training tally at the final point.  R: the m x m penalty.
 */
static km_status
primal_fit_by_pieces(const km_method_ops *ops, const km_fit_params *p,
					 const km_row_blocks *rows, uint32 m, const double *R,
					 double *coef, double *b, km_fit_result *res, km_error *err)
{
	km_primal_solver s;
	double	   *state = palloc_extended(mul_size(sizeof(double), km_primal_state_doubles(m)),
										MCXT_ALLOC_HUGE);
	double	   *scratch = palloc_extended(mul_size(sizeof(double),
												  Max(km_primal_add_scratch_doubles(m, rows->block),
													  rows->block)),
										  MCXT_ALLOC_HUGE);
	double	   *vecs = palloc(sizeof(double) * 2 * (Size) m);
	double	   *swork = palloc_extended(mul_size(sizeof(double), km_primal_step_work_doubles(m)),
										MCXT_ALLOC_HUGE);
	double		tally[KM_PRIMAL_TALLY_DOUBLES] = {0};
	km_status	st;

	km_primal_solver_init(&s, m);
	memset(coef, 0, sizeof(double) * m);
	*b = 0.0;
	while (!s.done)
	{
		km_primal_state_init(state, m);
		for (size_t i0 = 0; i0 < rows->n; i0 += rows->block)
		{
			size_t		nb = Min(rows->block, rows->n - i0);

			if (!ops->primal_add(p, state, m, rows->features(rows->arg, i0, nb), nb,
								 rows->y + i0, coef, *b, scratch, km_interrupt))
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("decision value is out of range for type double precision"),
						 errdetail("A decision value in the block of rows from %zu is not finite after %d Newton steps.",
								   i0 + 1, s.iterations),
						 errhint("Raise lambda, or standardize the features (\"standardize\": true).")));
		}
		st = ops->primal_step(p, &s, state, R, coef, b, vecs, swork, err, km_interrupt);
		if (st != KM_OK)
			return st;
	}
	for (size_t i0 = 0; i0 < rows->n; i0 += rows->block)
	{
		size_t		nb = Min(rows->block, rows->n - i0);

		ops->primal_tally(p, rows->features(rows->arg, i0, nb), nb, m, rows->y + i0,
						  coef, *b, tally, scratch);
	}
	return ops->primal_result(p, &s, tally, rows->n, res, err);
}

/* The basis state's bytes; raises when the fit would not fit kernel_ml.max_memory. */
static Size
primal_check_memory(const km_options *opts, const km_method_ops *ops, uint32 d,
					int64 n)
{
	Size		sbytes = km_basis_state_bytes(opts->approximation, d, (uint32) opts->components);
	uint32		m = km_repr_lookup(opts->approximation)->centres ?
		(uint32) Min((int64) opts->components, n) : (uint32) opts->components;
	size_t		fit = ops->primal_fit_doubles(m, AP_BLOCK);
	size_t		feat = km_approx_features_doubles(&(km_basis) {.kind = opts->approximation, .d = d, .m = m}, AP_BLOCK);

	if (sbytes == 0 || sbytes > MaxAllocSize || fit == 0 || feat == 0)
		rowset_too_large(opts, d);
	km_check_memory((double) sbytes + 8.0 * ((double) fit + (double) feat +
											 2.0 * m * (double) m +
											 AP_BLOCK * ((double) m + d) + m),
					"kernel_train", false);
	return sbytes;
}

/*
 * kernel_train(f, y, '{"method": ..., "approximation": ...}') for a method
 * with a primal_fit: the model as bytea (in the caller's context).
 */
bytea *
km_approx_primal_train_rowset(RowSet *rs)
{
	km_options	opts = rs->opts;
	const km_method_ops *ops = km_method_get(opts.fit.method);
	uint32		d = (uint32) rs->d;
	Size		sbytes;
	km_basis	b;
	PrimalRows	pr;
	km_row_blocks rows;
	km_approx_result ar;
	km_fit_result res;
	km_model	model;
	km_error	err;
	double	   *L = NULL;
	double	   *coef;
	double	   *work;
	double		bias = 0.0;
	double		eps = 0.0;
	MemoryContext tmp;
	MemoryContext old;
	bytea	   *result;
	bytea	   *out;

	Assert(ops != NULL && ops->primal_fit != NULL);
	km_options_resolve(&opts, (int) d);
	km_options_resolve_rows(&opts, (size_t) rs->n);
	sbytes = primal_check_memory(&opts, ops, d, rs->n);

	tmp = AllocSetContextCreate(CurrentMemoryContext, "kernel_ml approximate primal training",
								ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(tmp);

	memset(&pr, 0, sizeof(pr));
	pr.rs = rs;
	pr.Xs = palloc_extended(mul_size(sizeof(double), mul_size(AP_BLOCK, d)), MCXT_ALLOC_HUGE);
	rowset_basis(rs, &opts, sbytes, pr.Xs, &b);
	pr.b = &b;
	if (km_repr_lookup(b.kind)->centres)
	{
		double	   *fwork = palloc_extended(mul_size(sizeof(double), km_approx_factor_doubles(b.m) + 1),
											MCXT_ALLOC_HUGE);

		L = palloc_extended(mul_size(sizeof(double), mul_size(b.m, b.m)), MCXT_ALLOC_HUGE);
		if (km_approx_factor(&b, L, &eps, fwork, &err, km_interrupt) != KM_OK)
			km_raise(&err);
		pfree(fwork);
	}
	pr.L = L;
	pr.Z = palloc_extended(mul_size(sizeof(double), mul_size(AP_BLOCK, b.m)), MCXT_ALLOC_HUGE);
	pr.fwork = palloc_extended(mul_size(sizeof(double), km_approx_features_doubles(&b, AP_BLOCK) + 1),
							   MCXT_ALLOC_HUGE);
	rows.n = (size_t) rs->n;
	rows.block = AP_BLOCK;
	rows.y = rs->y;
	rows.features = primal_rows_features;
	rows.arg = &pr;

	coef = palloc(sizeof(double) * b.m);
	work = ops->primal_add != NULL ? NULL :
		palloc_extended(mul_size(sizeof(double), ops->primal_fit_doubles(b.m, AP_BLOCK)),
						MCXT_ALLOC_HUGE);
	memset(&res, 0, sizeof(res));
	km_progress_phase("%s: newton passes, m = %u, " INT64_FORMAT " rows",
					  ops->name, b.m, rs->n);
	km_blas_setup();
	/*
	 * the features are whitened (nystrom) or rff's: the penalty is I; by the
	 * pieces the named models' passes use when the method has them
	 */
	if (ops->primal_add != NULL)
	{
		double	   *eye = palloc0_array(double, (Size) b.m * b.m);

		for (uint32 j = 0; j < b.m; j++)
			eye[j + (size_t) j * b.m] = 1.0;
		if (primal_fit_by_pieces(ops, &opts.fit, &rows, b.m, eye, coef, &bias, &res,
								 &err) != KM_OK)
		{
			km_method_fill_hint(opts.fit.method, &err);
			km_raise(&err);
		}
	}
	else if (ops->primal_fit(&opts.fit, &rows, b.m, NULL, coef, &bias, &res, work,
							 &err, km_interrupt) != KM_OK)
	{
		km_method_fill_hint(opts.fit.method, &err);
		km_raise(&err);
	}
	if (L != NULL)
		km_primal_unwhiten(L, b.m, 1, coef);	/* coefficients of k(c_j, x) */

	/* one place builds an approximate model: the core's fill, then the method's fields */
	memset(&ar, 0, sizeof(ar));
	ar.lambda = opts.fit.lambda;
	ar.intercept = bias;
	ar.eps = eps;
	ar.rank = b.m;
	ar.train_rmse = res.train_rmse;
	ar.rows = (uint64) rs->n;
	memset(&model, 0, sizeof(model));
	km_approx_model_fill(&b, (uint32) opts.components, &ar.lambda, 1,
						 opts.fit_intercept, coef, &ar, NULL, &model);
	model.method = opts.fit.method;
	model.task = ops->task;
	model.rows_skipped = (uint64) rs->skipped;
	ops->store(&opts.fit, &res, &model);
	sscanf(KM_VERSION_STRING, "%hhu.%hhu.%hhu", &model.writer_version[0],
		   &model.writer_version[1], &model.writer_version[2]);
	result = km_model_to_bytea(&model);

	MemoryContextSwitchTo(old);
	out = palloc_extended(VARSIZE(result), MCXT_ALLOC_HUGE);
	memcpy(out, result, VARSIZE(result));
	MemoryContextDelete(tmp);
	return out;
}
