/*
 * predict_matrix.c - kernel_predict_matrix, kernel_predict_class_matrix and
 * kernel_predict_proba_matrix: many rows, given as one 2-D float8 array
 * (one row per inner array), scored in one call, by model or by name.
 *
 * The rows are scored a panel at a time by km_scorer_block (score.h): the
 * kernel block between the panel and the model's rows (or centres) by one
 * GEMM and the kernel's element-wise map, then the outputs by a second
 * GEMM, where kernel_predict does one GEMV per row (an rbf model of one
 * output: the GEMM gives -gamma times the squared distances, and each
 * row's exp and its dot with the coefficients are one pass).  A panel
 * holds at most PANEL_BYTES of work (less when kernel_ml.max_memory leaves
 * less room), and interrupts are checked between panels.  The values agree
 * with kernel_predict's to rounding (another summation order), not bit
 * for bit.
 *
 * PostgreSQL does not tell float8[][] from float8[], so these have their
 * own names: a 1-D array is an error with a hint, not one row.  The by-name
 * forms are src/catalog/catalog_score.c's, which pass the catalog's lookup
 * down (KmNamedModel).
 */
#include "postgres.h"

#include <math.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/memutils.h"

#include "classify.h"
#include "gp.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "score.h"
#include "task.h"
#include "predict_matrix.h"
#include "predict_std.h"

PG_FUNCTION_INFO_V1(kernel_predict_matrix);
PG_FUNCTION_INFO_V1(kernel_predict_class_matrix);
PG_FUNCTION_INFO_V1(kernel_predict_proba_matrix);
PG_FUNCTION_INFO_V1(kernel_predict_std_matrix);

/*
 * Work of one panel: 4 MB holds 250 rows against 2,000 model rows of 100
 * features, a GEMM large enough to run near the BLAS peak and well under a
 * second; panels of 1 to 64 MB ran no faster (the kernel block stays in
 * cache).
 */
#define PANEL_BYTES		((double) 4 * 1024 * 1024)

/* What a call site keeps in fn_extra. */
typedef struct MatrixCall
{
	ModelCache *mc;				/* by model */
	void	   *named;			/* by name: catalog_predict_model's cache */
	KmProbBuffers pb;
} MatrixCall;

static MatrixCall *
matrix_call(FunctionCallInfo fcinfo, bool by_name)
{
	MatrixCall *call = fcinfo->flinfo->fn_extra;

	if (call == NULL)
	{
		call = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(MatrixCall));
		if (!by_name)
			call->mc = km_model_cache_for_call(fcinfo->flinfo);
		fcinfo->flinfo->fn_extra = call;
	}
	return call;
}

/*
 * The rows of a feature matrix for a model of d features: an error unless it
 * is a 2-D float8 array of d columns, without NULL, every value finite.
 * 0 for an empty array.
 */
static int
matrix_rows(ArrayType *arr, uint32 d, const char *fname)
{
	int			rows;
	int			cols;
	const double *v;

	if (ARR_ELEMTYPE(arr) != FLOAT8OID)
		elog(ERROR, "feature matrix has element type %u, expected float8",
			 ARR_ELEMTYPE(arr));
	if (ARR_NDIM(arr) == 0)
		return 0;
	if (ARR_NDIM(arr) != 2)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_EXCEPTION),
				 errmsg("feature matrix must be two-dimensional"),
				 ARR_NDIM(arr) == 1 ?
				 errdetail("%s was given a one-dimensional array of %d values.",
						   fname, ARR_DIMS(arr)[0]) :
				 errdetail("%s was given an array of %d dimensions.", fname, ARR_NDIM(arr)),
				 errhint("Pass one inner array per row, as ARRAY[[1, 2], [3, 4]] (or a 2-D list from a client); score a single row with %s.",
						 strncmp(fname, "kernel_predict_class", 20) == 0 ? "kernel_predict_class(model, features)" :
						 strncmp(fname, "kernel_predict_proba", 20) == 0 ? "kernel_predict_proba(model, features)" :
						 strncmp(fname, "kernel_predict_std", 18) == 0 ? "kernel_predict_std(model, features)" :
						 "kernel_predict(model, features)")));
	rows = ARR_DIMS(arr)[0];
	cols = ARR_DIMS(arr)[1];
	if ((uint32) cols != d)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("wrong number of features for this model"),
				 errdetail("The model expects %u features; the matrix has %d columns.",
						   d, cols)));
	if (array_contains_nulls(arr))
	{
		bits8	   *bitmap = ARR_NULLBITMAP(arr);
		Size		i;

		for (i = 0; i < (Size) rows * cols; i++)
			if (!(bitmap[i / 8] & (1 << (i % 8))))
				break;
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("feature matrix must not contain nulls"),
				 errdetail("Row %zu, column %zu of the feature matrix is null.",
						   i / cols + 1, i % cols + 1)));
	}
	v = (const double *) ARR_DATA_PTR(arr);
	for (Size i = 0; i < (Size) rows * cols; i++)
		if (!isfinite(v[i]))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_EXCEPTION),
					 errmsg("feature values must be finite"),
					 errdetail("Row %zu, column %zu of the feature matrix is %s.",
							   i / cols + 1, i % cols + 1, float8out_internal(v[i]))));
	return rows;
}

/* A float8 array of rows values (cols 0) or rows x cols values, not yet set. */
static ArrayType *
float8_result(int rows, int cols, const char *fname)
{
	int			ndim = cols > 0 ? 2 : 1;
	int			dims[2] = {rows, cols};
	int			lbs[2] = {1, 1};
	double		values = (double) rows * Max(cols, 1);
	Size		nbytes;
	ArrayType  *result;

	if (values * sizeof(double) + ARR_OVERHEAD_NONULLS(ndim) > MaxAllocSize)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("%s result is too large for an array", fname),
				 errdetail("An array of %.0f values would exceed 1 GB.", values),
				 errhint("Score fewer rows per call.")));
	nbytes = ARR_OVERHEAD_NONULLS(ndim) + (Size) values * sizeof(double);
	km_check_memory((double) nbytes, fname, false);
	result = (ArrayType *) palloc(nbytes);
	/* the header and its padding: the values are all written by the caller */
	memset(result, 0, ARR_OVERHEAD_NONULLS(ndim));
	SET_VARSIZE(result, nbytes);
	result->ndim = ndim;
	result->dataoffset = 0;
	result->elemtype = FLOAT8OID;
	memcpy(ARR_DIMS(result), dims, sizeof(int) * ndim);
	memcpy(ARR_LBOUND(result), lbs, sizeof(int) * ndim);
	return result;
}

/*
 * Rows per panel: PANEL_BYTES of scratch, or what the memory ceiling leaves
 * (half of it), at least one row; the scratch is checked against the ceiling.
 */
static size_t
panel_rows(const km_model *m, size_t rows, const char *fname)
{
	double		per_row = 8.0 * ((double) m->n_features + m->n_train + 1 + m->n_outputs);
	double		budget = Min(PANEL_BYTES, km_memory_room() / 2);
	size_t		panel = (size_t) Max(1.0, floor(budget / per_row));

	panel = Min(panel, rows);
	if (km_scorer_block_doubles(m, panel) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_ml model is too large to score"),
				 errdetail("Its %u rows of %u features do not fit in memory.",
						   m->n_train, m->n_features)));
	km_check_memory(per_row * panel, fname, false);
	return panel;
}

/*
 * A panel that failed: the first row that fails alone, scored as
 * kernel_predict scores it, named in the error (row numbers of the matrix).
 */
static void
raise_panel_failure(km_scorer *s, const double *X, size_t first, size_t nr,
					const km_error *block_err)
{
	const km_model *m = s->m;
	double	   *out = palloc(sizeof(double) * Max(m->n_outputs, 1));
	km_error	err;

	for (size_t r = 0; r < nr; r++)
	{
		if (km_scorer_decision(s, X + r * m->n_features, out, &err) == KM_OK)
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s", err.message),
				 errdetail("Row %zu of the feature matrix: %s", first + r + 1, err.detail),
				 errhint("Check the row for values far outside the range of the training data.")));
	}
	/* every row alone is fine: the block's own error */
	km_raise(block_err);
}

Datum
km_predict_matrix(FunctionCallInfo fcinfo, KmMatrixOutput what, const char *fname,
				  KmNamedModel by_name)
{
	MatrixCall *call = matrix_call(fcinfo, by_name != NULL);
	ModelCache *mc = call->mc;
	Datum		model;
	const km_model *m;
	km_scorer  *scorer;
	ArrayType  *features;
	km_prob_link link = KM_PROB_NONE;
	size_t		rows;
	size_t		panel;
	uint32		d;
	uint32		q;
	uint32		k = 0;
	double	   *work;
	double	   *F;
	ArrayType  *result = NULL;
	Datum	   *labels = NULL;
	bool		sign;

	if (by_name)
		model = by_name(fcinfo, PG_GETARG_TEXT_PP(0), &call->named, &mc);
	else
		model = PG_GETARG_DATUM(0);
	m = km_model_cache_model(mc, model);
	d = m->n_features;
	q = Max(m->n_outputs, 1);
	km_refuse_embedding(m, fname);
	if (what == KM_MATRIX_VALUE && q != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot score a multi-class model", fname),
				 errdetail("The model gives %u decision values per row (multi-class scheme \"%s\").",
						   m->n_outputs, km_multiclass_name(m->multiclass)),
				 errhint("Use kernel_predict_class_matrix(model, features) or kernel_predict_proba_matrix(model, features).")));
	/* a one-class model's classes are the signs of its decision values */
	sign = what == KM_MATRIX_CLASS && km_sign_label(m, 0.0) != NULL;
	if (what != KM_MATRIX_VALUE && !sign)
	{
		km_classifier_prepare(m, fname, fcinfo->flinfo->fn_mcxt, &call->pb);
		k = m->n_classes;
		if (what == KM_MATRIX_PROBA)
			link = (km_prob_link) km_model_prob_link_or_raise(m);
	}

	features = PG_GETARG_ARRAYTYPE_P(1);
	rows = (size_t) matrix_rows(features, d, fname);
	if (rows == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(what == KM_MATRIX_CLASS ? TEXTOID : FLOAT8OID));

	if (what == KM_MATRIX_VALUE)
		result = float8_result((int) rows, 0, fname);
	else if (what == KM_MATRIX_PROBA)
		result = float8_result((int) rows, (int) k, fname);
	else
	{
		km_check_memory(sizeof(Datum) * (double) rows, fname, false);
		labels = palloc_extended(sizeof(Datum) * rows, MCXT_ALLOC_HUGE);
	}

	scorer = km_model_cache_scorer(mc, model);
	panel = panel_rows(m, rows, fname);
	work = palloc_extended(km_scorer_block_doubles(m, panel) * sizeof(double), MCXT_ALLOC_HUGE);
	F = what == KM_MATRIX_VALUE ? NULL :
		palloc_extended(sizeof(double) * panel * q, MCXT_ALLOC_HUGE);

	km_blas_setup();
	for (size_t first = 0; first < rows; first += panel)
	{
		size_t		nr = Min(panel, rows - first);
		const double *X = (const double *) ARR_DATA_PTR(features) + first * d;
		double	   *out = what == KM_MATRIX_VALUE ?
			(double *) ARR_DATA_PTR(result) + first : F;
		km_error	err;

		CHECK_FOR_INTERRUPTS();
		if (km_scorer_block(scorer, X, nr, out, work, &err) != KM_OK)
			raise_panel_failure(scorer, X, first, nr, &err);
		if (what == KM_MATRIX_CLASS)
		{
			for (size_t r = 0; r < nr && sign; r++)
				labels[first + r] =
					PointerGetDatum(cstring_to_text(km_sign_label(m, F[r * q])));
			for (size_t r = 0; r < nr && !sign; r++)
			{
				uint32		c = km_classify_decide(m->multiclass, k, F + r * q);

				labels[first + r] =
					PointerGetDatum(cstring_to_text(km_classes_label(m->labels, m->labels_bytes,
																	 k, c)));
			}
		}
		else if (what == KM_MATRIX_PROBA)
		{
			double	   *P = (double *) ARR_DATA_PTR(result) + first * k;

			for (size_t r = 0; r < nr; r++)
			{
				/* the probabilities kernel_predict_proba gives a row */
				if (km_classify_proba(link, m->multiclass, k, F + r * q, m->prob_A,
									  m->prob_B, P + r * k, call->pb.pwork, &err) != KM_OK)
					km_raise(&err);
			}
		}
	}
	pfree(work);
	if (F != NULL)
		pfree(F);
	if (what == KM_MATRIX_CLASS)
		PG_RETURN_ARRAYTYPE_P(construct_array(labels, (int) rows, TEXTOID, -1, false,
											  TYPALIGN_INT));
	PG_RETURN_ARRAYTYPE_P(result);
}

/* kernel_predict_matrix(model bytea, features float8[]) RETURNS float8[] */
Datum
kernel_predict_matrix(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_VALUE, "kernel_predict_matrix", NULL);
}

/* kernel_predict_class_matrix(model bytea, features float8[]) RETURNS text[] */
Datum
kernel_predict_class_matrix(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_CLASS, "kernel_predict_class_matrix", NULL);
}

/* kernel_predict_proba_matrix(model bytea, features float8[]) RETURNS float8[] */
Datum
kernel_predict_proba_matrix(PG_FUNCTION_ARGS)
{
	return km_predict_matrix(fcinfo, KM_MATRIX_PROBA, "kernel_predict_proba_matrix", NULL);
}

/*
 * Work of one panel of kernel_predict_std_matrix: the kernel block of the
 * panel (rows x n) is solved in place by one dtrsm against the n x n
 * factor, so the panel should be wide enough for dtrsm to run as a GEMM
 * (a few hundred right-hand sides) and small enough to interrupt: 16 MB is
 * 2,000 rows at n = 1,000, about 0.1 s of dtrsm at 20 GFLOPS.
 */
#define STD_PANEL_BYTES	((double) 16 * 1024 * 1024)

/*
 * kernel_predict_std_matrix(model | name, features): kernel_predict_std of
 * every row of a 2-D array, a panel at a time (km_gp_std_block: one GEMM
 * for the kernel block, one triangular solve for the panel, the column
 * norms), the factor built once per call site and model as
 * kernel_predict_std builds it.  A panel that fails is rescored row by row
 * so that the error names the first row that fails alone.
 */
Datum
km_predict_std_matrix(FunctionCallInfo fcinfo, KmNamedModel by_name)
{
	const char *fname = "kernel_predict_std_matrix";
	km_gp	   *g = km_predict_std_block_gp(fcinfo, by_name, fname);
	const km_model *m = g->m;
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(1);
	uint32		d = m->n_features;
	size_t		rows = (size_t) matrix_rows(features, d, fname);
	double		per_row = 8.0 * ((double) d + g->n + 2);
	double		budget = Min(STD_PANEL_BYTES, km_memory_room() / 2);
	size_t		panel;
	ArrayType  *result;
	double	   *work;

	if (rows == 0)
		PG_RETURN_ARRAYTYPE_P(construct_empty_array(FLOAT8OID));
	result = float8_result((int) rows, 0, fname);
	panel = Min((size_t) Max(1.0, floor(budget / per_row)), rows);
	if (km_gp_block_doubles(g, panel) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("kernel_ml model is too large to score"),
				 errdetail("Its %u rows of %u features do not fit in memory.",
						   m->n_train, m->n_features)));
	km_check_memory(per_row * panel, fname, false);
	work = palloc_extended(km_gp_block_doubles(g, panel) * sizeof(double), MCXT_ALLOC_HUGE);
	km_blas_setup();
	for (size_t first = 0; first < rows; first += panel)
	{
		size_t		nr = Min(panel, rows - first);
		const double *X = (const double *) ARR_DATA_PTR(features) + first * d;
		double	   *out = (double *) ARR_DATA_PTR(result) + first;
		km_error	err;

		CHECK_FOR_INTERRUPTS();
		if (km_gp_std_block(g, X, nr, out, work, &err) == KM_OK)
			continue;
		for (size_t r = 0; r < nr; r++)
		{
			km_error	row_err;
			double		std;

			if (km_gp_std(g, X + r * d, &std, &row_err) == KM_OK)
				continue;
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("%s", row_err.message),
					 errdetail("Row %zu of the feature matrix: %s", first + r + 1, row_err.detail),
					 errhint("Check the row for values far outside the range of the training data.")));
		}
		km_raise(&err);
	}
	pfree(work);
	PG_RETURN_ARRAYTYPE_P(result);
}

/* kernel_predict_std_matrix(model bytea, features float8[]) RETURNS float8[] */
Datum
kernel_predict_std_matrix(PG_FUNCTION_ARGS)
{
	return km_predict_std_matrix(fcinfo, NULL);
}
