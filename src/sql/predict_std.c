/*
 * predict_std.c - kernel_predict_std(model, features): the predictive
 * standard deviation of the Gaussian-process reading of a kernel ridge
 * model (src/core/model/gp.h): exact, or nystrom / rff with the factor their fit
 * kept (an approximate model rebuilds only chol(K_mm + eps I) of its
 * centres here, m^2 doubles; rff nothing).
 *
 * The model keeps its training rows and alpha but no factor of K + lambda
 * I: storing one would add n^2 / 2 doubles to every model (400 MB at 10,000
 * rows) whether or not it is ever asked for a variance.  The call site
 * builds the factor instead, once per backend and model, on the first row
 * it scores, in a memory context of its own counted against
 * kernel_ml.max_memory (refused beyond it), interruptible; later rows of
 * the same model cost one triangular solve (n^2) each.  The factor is kept
 * for the model last seen: a model changes it only when its decoded
 * arrays' checksum changes.  kernel_predict_std_matrix (predict_matrix.c)
 * shares the factor and the cache (km_predict_std_block_gp) and scores a
 * panel of rows by one triangular solve (gp.h, km_gp_std_block).
 */
#include "postgres.h"

#include <math.h>

#include "fmgr.h"
#include "utils/array.h"
#include "utils/memutils.h"

#include "crc32c.h"
#include "gp.h"
#include "model.h"
#include "pgutil.h"
#include "predict.h"
#include "predict_std.h"

PG_FUNCTION_INFO_V1(kernel_predict_std);

/* What a call site keeps in fn_extra. */
typedef struct StdCall
{
	ModelCache *mc;				/* by bytea */
	void	   *named;			/* by name: catalog_predict_model's cache */
	MemoryContext cxt;			/* the factor and the row, reset per model */
	const km_model *key;		/* the decoded model the factor is of */
	uint32		key_crc;		/* of its alpha and rows */
	bool		ready;
	km_gp		gp;
	double	   *row;			/* d raw features */
} StdCall;

static uint32
model_crc(const km_model *m)
{
	uint32		a = km_crc32c(m->alpha, sizeof(double) * m->n_train);
	uint32		x = m->X ? km_crc32c(m->X, sizeof(double) * m->n_train * m->n_features) : 0;

	return a ^ (x * 0x9e3779b1u);
}

static void
refuse_model(const km_model *m, const char *why)
{
	if (strcmp(why, "approximation") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("kernel_predict_std needs a kernel ridge model with a Gaussian-process factor"),
				 errdetail("The model is approximate (\"approximation\": \"%s\") and keeps no Gaussian-process factor: an approximate model keeps one (m(m+1)/2 numbers) only when trained with \"uncertainty\": true and the default solver (\"solver\": \"cg\" never forms the m x m statistics it comes from).",
						   km_approx_name(m->approximation)),
				 errhint("Retrain it with \"uncertainty\": true in its options (and without \"solver\": \"cg\").")));
	ereport(ERROR,
			(errcode(ERRCODE_WRONG_OBJECT_TYPE),
			 errmsg("kernel_predict_std needs a kernel ridge model"),
			 errdetail("The model's method is %s: only kernel ridge, (K + lambda I) alpha = y, is the posterior mean of a Gaussian process.",
					   km_method_name(m->method)),
			 errhint("Train the model with \"method\": \"ridge\" to get predictive standard deviations.")));
}

/* Build the factor of m into call->cxt (emptied first). */
static void
prepare_factor(StdCall *call, const km_model *m)
{
	const char *why;
	size_t		doubles;
	double	   *mem;
	km_error	err;

	if (!km_gp_applies(m, &why))
		refuse_model(m, why);
	call->ready = false;
	call->gp.block_ready = false;
	MemoryContextReset(call->cxt);
	doubles = km_gp_doubles(m);
	if (doubles == 0 && m->n_train > 0)
		km_check_memory(HUGE_VAL, "kernel_predict_std's factor of K + lambda I", false);
	(void) km_mem_reserve(call->cxt, 8.0 * (double) (doubles + m->n_features),
						  "kernel_predict_std's factor of K + lambda I", false);
	mem = MemoryContextAllocExtended(call->cxt, sizeof(double) * doubles,
									 MCXT_ALLOC_HUGE);
	call->row = MemoryContextAlloc(call->cxt, sizeof(double) * Max(m->n_features, 1));
	km_blas_setup();
	if (km_gp_prepare(&call->gp, m, mem, &err, km_interrupt) != KM_OK)
		km_raise(&err);
	call->key = m;
	call->key_crc = model_crc(m);
	call->ready = true;
}

/*
 * The call site's model (argument 0, by bytea or by_name) with its factor
 * built (once per model), for the row and matrix forms.
 */
static StdCall *
std_call(FunctionCallInfo fcinfo, KmNamedModel by_name)
{
	StdCall    *call = fcinfo->flinfo->fn_extra;
	ModelCache *mc;
	Datum		model;
	const km_model *m;

	if (call == NULL)
	{
		call = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(StdCall));
		call->cxt = AllocSetContextCreate(fcinfo->flinfo->fn_mcxt,
										  "kernel_predict_std factor",
										  ALLOCSET_DEFAULT_SIZES);
		if (by_name == NULL)
			call->mc = km_model_cache_for_call(fcinfo->flinfo);
		fcinfo->flinfo->fn_extra = call;
	}
	if (by_name != NULL)
		model = by_name(fcinfo, PG_GETARG_TEXT_PP(0), &call->named, &mc);
	else
	{
		model = PG_GETARG_DATUM(0);
		mc = call->mc;
	}
	m = km_model_cache_model(mc, model);
	if (!call->ready || call->key != m || call->key_crc != model_crc(m))
		prepare_factor(call, m);
	call->gp.m = m;
	call->gp.R = m->gp_factor;
	return call;
}

Datum
km_predict_std(FunctionCallInfo fcinfo, KmNamedModel by_name)
{
	StdCall    *call = std_call(fcinfo, by_name);
	const km_model *m = call->gp.m;
	ArrayType  *features = PG_GETARG_ARRAYTYPE_P(1);
	double		std;
	km_error	err;
	int			d;

	d = km_array_length(features, "the row");
	if ((uint32) d != m->n_features)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("wrong number of features for this model"),
				 errdetail("The model expects %u features, got %d.", m->n_features, d)));
	km_array_copy(features, d, call->row, "the row");	/* rejects NaN, infinity */
	km_blas_setup_scoring();
	if (km_gp_std(&call->gp, call->row, &std, &err) != KM_OK)
		km_raise(&err);
	PG_RETURN_FLOAT8(std);
}

/* kernel_predict_std(model bytea, features float8[]) RETURNS float8 */
Datum
kernel_predict_std(PG_FUNCTION_ARGS)
{
	return km_predict_std(fcinfo, NULL);
}

/*
 * Many rows (kernel_predict_std_matrix, predict_matrix.c): the call site's
 * factor as km_predict_std builds it, and once per model the block's extras
 * (km_gp_block_prepare: the rows' norms and transpose, an approximate
 * model's R unpacked, (d + 1) n (+ m^2) doubles) in the same context,
 * counted against kernel_ml.max_memory.
 */
km_gp *
km_predict_std_block_gp(FunctionCallInfo fcinfo, KmNamedModel by_name,
						const char *fname)
{
	StdCall    *call = std_call(fcinfo, by_name);
	size_t		doubles;

	if (!call->gp.block_ready)
	{
		doubles = km_gp_block_prepare_doubles(&call->gp);
		if (doubles == 0)
			km_check_memory(HUGE_VAL, "kernel_predict_std_matrix's copy of the model's rows", false);
		(void) km_mem_reserve(call->cxt, 8.0 * (double) doubles,
							  "kernel_predict_std_matrix's copy of the model's rows", false);
		km_gp_block_prepare(&call->gp,
							MemoryContextAllocExtended(call->cxt, sizeof(double) * doubles,
													   MCXT_ALLOC_HUGE));
	}
	return &call->gp;
}
