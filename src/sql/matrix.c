/*
 * matrix.c - the kernel_matrix and kernel_check aggregates: the Gram matrix
 * of the input rows, and its Mercer diagnostics.
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/memutils.h"

#include "json.h"
#include "kernels.h"
#include "pgutil.h"
#include "rowset.h"
#include "diagnostics.h"
#include "solve.h"

PG_FUNCTION_INFO_V1(kernel_matrix_sfunc);
PG_FUNCTION_INFO_V1(kernel_matrix_final);
PG_FUNCTION_INFO_V1(kernel_check_final);

/*
 * The final function's rows, or NULL when there are none, with their
 * options resolved for one kernel (no grid) on their feature count.
 */
static RowSet *
final_rows(FunctionCallInfo fcinfo, const char *agg, km_options *opts)
{
	RowSet	   *rs;

	agg_context(fcinfo, psprintf("%s_final", agg));
	if (PG_ARGISNULL(0))
		return NULL;
	rs = (RowSet *) PG_GETARG_POINTER(0);
	if (rs->n == 0)
		return NULL;
	*opts = rs->opts;
	km_options_require_single(opts, agg);
	km_options_resolve(opts, rs->d);
	return rs;
}

/* kernel_matrix_sfunc(state, features, options) */
Datum
kernel_matrix_sfunc(PG_FUNCTION_ARGS)
{
	RowSet	   *rs = rowset_get(fcinfo, 2, false, "kernel_matrix_sfunc");

	rs->seen++;
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kernel_matrix does not accept null feature arrays"),
				 errdetail("Row " INT64_FORMAT " has a null feature array.", rs->seen),
				 errhint("Filter the rows with WHERE features IS NOT NULL.")));
	rowset_add(rs, PG_GETARG_ARRAYTYPE_P(1), 0.0, "kernel_matrix");
	PG_RETURN_POINTER(rs);
}


/*
 * An n x n float8 array, its values not yet set: an error beyond 1 GB, and
 * memory checked against kernel_ml's limit first.
 */
static ArrayType *
square_float8_array(size_t n)
{
	ArrayType  *result;
	int			dims[2];
	int			lbs[2] = {1, 1};
	Size		nbytes;

	nbytes = ARR_OVERHEAD_NONULLS(2) + (double) n * n * sizeof(double);
	if ((double) n * n * sizeof(double) + ARR_OVERHEAD_NONULLS(2) > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel matrix is too large for an array"),
				 errdetail("An array of %zu x %zu values would exceed 1 GB.", n, n),
				 errhint("Use kernel_train, which keeps the matrix internal.")));
	km_check_memory((double) nbytes, "kernel_matrix", false);

	result = (ArrayType *) palloc(nbytes);
	SET_VARSIZE(result, nbytes);
	result->ndim = 2;
	result->dataoffset = 0;
	result->elemtype = FLOAT8OID;
	dims[0] = dims[1] = (int) n;
	memcpy(ARR_DIMS(result), dims, sizeof(dims));
	memcpy(ARR_LBOUND(result), lbs, sizeof(lbs));
	return result;
}

Datum
kernel_matrix_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	km_options	opts;
	size_t		n;
	double	   *norms;
	double	   *K;
	ArrayType  *result;

	rs = final_rows(fcinfo, "kernel_matrix", &opts);
	if (rs == NULL)
		PG_RETURN_NULL();
	n = (size_t) rs->n;

	/* Build the Gram matrix straight into the result array's data. */
	result = square_float8_array(n);
	K = (double *) ARR_DATA_PTR(result);

	norms = palloc(n * sizeof(double));
	km_blas_setup();
	km_row_norms(&opts.fit.kernel, rs->X, n, rs->d, norms);
	if (!km_gram_lower(&opts.fit.kernel, rs->X, n, rs->d, norms, K, n,
					   km_interrupt))
	{
		km_error	err;

		km_gram_overflow(&opts.fit.kernel, K, n, n, &err);
		km_raise(&err);
	}
	/* column-major lower == row-major upper; the matrix is symmetric */
	km_symmetrize(K, n, n, km_interrupt);
	pfree(norms);
	PG_RETURN_ARRAYTYPE_P(result);
}

/*
 * The rows kernel_check diagnoses: the state's, or a standardized copy
 * (the state stays as it was: a window aggregate calls us again).
 */
static double *
check_rows(const RowSet *rs, const km_options *opts)
{
	size_t		n = (size_t) rs->n;
	double	   *mean;
	double	   *scale;
	double	   *X;

	if (!opts->standardize)
		return rs->X;
	mean = palloc(sizeof(double) * rs->d);
	scale = palloc(sizeof(double) * rs->d);
	X = palloc_extended(mul_size(n, mul_size(rs->d, sizeof(double))), MCXT_ALLOC_HUGE);
	km_standardize(rs->X, n, rs->d, mean, scale, X);
	return X;
}

/* A finite Gram matrix can still have eigenvalues beyond a double: an error. */
static void
check_spectrum_finite(const km_spectrum *sp, const km_options *opts, size_t n)
{
	if (!isfinite(sp->min_eigenvalue) || !isfinite(sp->max_eigenvalue) ||
		!isfinite(sp->max_asymmetry) || !isfinite(sp->tolerance))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("kernel matrix diagnostics are out of range for type double precision"),
				 errdetail("The eigenvalues of the %s kernel matrix of %zu rows range from %s to %s, and its largest asymmetry is %s.",
						   km_kernel_name(opts->fit.kernel.type), n,
						   float8out_internal(sp->min_eigenvalue),
						   float8out_internal(sp->max_eigenvalue),
						   float8out_internal(sp->max_asymmetry)),
				 errhint("Standardize the features, or use a smaller gamma or degree.")));
}

/* kernel_check's result: the options and the spectrum's diagnostics. */
static Jsonb *
check_json(const km_spectrum *sp, const km_options *opts, size_t n)
{
	KmJson		j;

	km_json_begin(&j);
	km_json_int(&j, "n", (int64) n);
	km_json_str(&j, "kernel", km_kernel_name(opts->fit.kernel.type));
	if (km_kernel_params(opts->fit.kernel.type) & KM_PARAM_GAMMA)
		km_json_num(&j, "gamma", opts->fit.kernel.gamma);
	km_json_bool(&j, "standardize", opts->standardize);
	km_json_bool(&j, "symmetric", sp->max_asymmetry <= 1e-12 * Max(sp->max_abs, 1.0));
	km_json_num(&j, "max_asymmetry", sp->max_asymmetry);
	km_json_num(&j, "min_eigenvalue", sp->min_eigenvalue);
	km_json_num(&j, "max_eigenvalue", sp->max_eigenvalue);
	/* null when singular (or when the ratio overflows) */
	km_json_num(&j, "condition_number", sp->min_eigenvalue > sp->tolerance ?
				sp->max_eigenvalue / sp->min_eigenvalue : NAN);
	km_json_bool(&j, "is_psd", sp->min_eigenvalue >= -sp->tolerance);
	km_json_num(&j, "tolerance", sp->tolerance);
	km_json_int(&j, "effective_rank", (int64) sp->rank);
	return km_json_finish(&j);
}

/*
 * kernel_check: the kernel_matrix state, diagnosed instead of returned.
 * It diagnoses the matrix kernel_train would factor with the same options:
 * of the rows standardized as training standardizes them ("standardize",
 * true by default), so that is_psd true never precedes a "not positive
 * definite" from kernel_train.
 */
Datum
kernel_check_final(PG_FUNCTION_ARGS)
{
	RowSet	   *rs;
	km_options	opts;
	size_t		n;
	size_t		nwork;
	double	   *work;
	km_spectrum sp;
	km_error	err;
	double	   *X;

	rs = final_rows(fcinfo, "kernel_check", &opts);
	if (rs == NULL)
		PG_RETURN_NULL();
	n = (size_t) rs->n;
	nwork = km_spectrum_workspace_doubles(n);
	km_check_memory(8.0 * nwork + (opts.standardize ? 8.0 * n * rs->d : 0.0),
					"kernel_check", false);
	if (nwork == 0)
		elog(ERROR, "kernel_check workspace overflows");
	X = check_rows(rs, &opts);
	work = km_alloc_prefaulted(mul_size(nwork, sizeof(double)));

	km_blas_setup();
	if (km_gram_spectrum(&opts.fit.kernel, X, n, rs->d, work, &sp, &err,
						 km_interrupt) != KM_OK)
		km_raise(&err);
	km_free_prefaulted(work);
	if (X != rs->X)
		pfree(X);
	check_spectrum_finite(&sp, &opts, n);
	PG_RETURN_JSONB_P(check_json(&sp, &opts, n));
}
