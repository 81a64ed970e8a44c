/*
 * const.c - a throwaway method that proves the seam: f(x) = mean + shift,
 * alpha = 0 (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model.h"
#include "options_core.h"

typedef struct const_params
{
	double		shift;
} const_params;

typedef struct const_fields
{
	double		shift;
	int32_t		calls;
} const_fields;

KM_STATIC_ASSERT(sizeof(const_params) <= KM_METHOD_BLOB_SIZE, const_params);
KM_STATIC_ASSERT(sizeof(const_fields) <= KM_METHOD_BLOB_SIZE, const_fields);

static const km_method_option const_options[] = {
	{{"shift", KM_OPTTYPE_NUMBER, 0, INFINITY, false, false, "a number >= 0", "0.5",
	KM_FN_TRAINING, 0}, offsetof(const_params, shift), 0.5},
};

static size_t
const_workspace_doubles(size_t n)
{
	return 1;
}

static km_status
const_fit(const km_fit_params *p, const double *X, size_t n, int d,
		  const double *y, double *alpha, double *K, const double *norms,
		  double *work, km_fit_result *res, km_error *err,
		  km_interrupt_fn interrupt)
{
	const const_params *cp = KM_METHOD_BLOB_CONST(&p->method_params, const_params);
	const_fields *out = KM_METHOD_BLOB(&res->method_result, const_fields);
	double		ss = 0.0;

	memset(alpha, 0, n * sizeof(double));
	res->intercept = cp->shift;
	for (size_t i = 0; i < n; i++)
		ss += (y[i] - cp->shift) * (y[i] - cp->shift);
	res->train_rmse = sqrt(ss / (double) n);
	res->converged = true;
	out->shift = cp->shift;
	out->calls = 1;
	return KM_OK;
}

static void
const_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
	m->lambda = p->lambda;
	m->converged = true;
	memcpy(m->method_data.bytes, res->method_result.bytes, sizeof(const_fields));
}

static const km_field const_model_fields[] = {
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_NONNEG, 0},
	{"shift", KM_FIELD_F64, KM_METHOD_FIELD(const_fields, shift), KM_RULE_NONNEG, 0},
	{"calls", KM_FIELD_I32, KM_METHOD_FIELD(const_fields, calls), KM_RULE_POSITIVE, 0},
};

const km_method_ops km_const_ops = {
	.id = KM_METHOD_CONST,
	.name = "const",
	.task = KM_TASK_REGRESSION,
	.summary = "predicts a constant",
	.own_options = const_options,
	.n_own_options = 1,
	.params_size = sizeof(const_params),
	.routes = KM_ROUTE(KM_CV_KFOLD),
	.default_route = KM_CV_KFOLD,
	.default_folds = 5,
	.workspace_doubles = const_workspace_doubles,
	.fit = const_fit,
	.store = const_store,
	.fields = const_model_fields,
	.n_fields = 3,
};
