/*
 * logistic_method.c - the "logistic" method: kernel logistic regression,
 * (1/n) sum_i w_i log(1 + exp(-y_i f(x_i))) + (lambda/2) ||f||^2 with an
 * unpenalized intercept, solved by Newton on the dual (logistic.h, branch
 * logistic-core) or SGD; the multinomial (softmax) loss for more than two
 * classes; probabilities always (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>

#include "model.h"
#include "options_core.h"

static km_multiclass
logistic_multiclass(uint32_t k)
{
	return k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_MULTINOMIAL;
}

static size_t
logistic_class_workspace_doubles(size_t n, uint32_t k, const km_fit_params *p)
{
	/* the SMO's gradient, alpha status and the pair's rows: a few n per output */
	if (n > SIZE_MAX / 16)
		return 0;
	return 8 * n + (size_t) k;
}

static km_status
logistic_fit_classes(const km_fit_params *p, const double *X, size_t n, int d,
					 const uint32_t *cls, uint32_t k, const double *class_w,
					 const uint32_t *fold, uint32_t n_folds, double *alpha,
					 double *intercepts, double *prob_A, double *prob_B,
					 const double *K, double *work, km_class_fit_result *res,
					 km_error *err, km_interrupt_fn interrupt)
{
	/* C2's Newton (src/core/logistic.h) is wired here once branch logistic-core is merged. */
	return km_fail(err, KM_ERR_INVALID, "method \"logistic\" is not available in this build",
				   "The Newton solver (src/core/logistic.c) is not part of this build yet.");
}

static km_prob_link
logistic_prob_link(bool has_probability, km_multiclass mc, const char **hint)
{
	return KM_PROB_LOGISTIC;
}

static const char *
logistic_hint(km_status status)
{
	return km_method_hint(status,
						  "Raise lambda, or standardize the features (\"standardize\": true).",
						  "Raise \"tol\" or \"max_iter\", or raise lambda.");
}

static size_t
no_regression_workspace(size_t n)
{
	return 0;
}

static km_status
no_regression_fit(const km_fit_params *p, const double *X, size_t n, int d,
				  const double *y, double *alpha, double *K,
				  const double *norms, double *work, km_fit_result *res,
				  km_error *err, km_interrupt_fn interrupt)
{
	return km_fail(err, KM_ERR_INVALID, "method \"svm\" classifies",
				   "Method \"svm\" fits class labels, not a numeric target.");
}

static void
no_regression_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
}

static void
logistic_store_classes(const km_fit_params *p, const km_class_fit_result *res,
				  km_model *m)
{
	m->lambda = p->lambda;
	m->jitter = 0.0;
	m->tol = p->tol;
	m->max_iter = p->max_iter;
	m->iterations = res->iterations;
	m->converged = res->converged;
	m->learning_rate = 0.0;
	m->final_change = 0.0;
}

static const km_field logistic_fields[] = {
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_POSITIVE, 0},
	{"tol", KM_FIELD_F64, offsetof(km_model, tol), KM_RULE_NONNEG, 0},
	{"max_iter", KM_FIELD_I32, offsetof(km_model, max_iter), KM_RULE_NONNEG, 0},
	{"iterations", KM_FIELD_I32, offsetof(km_model, iterations), KM_RULE_NONNEG, 0},
	{"converged", KM_FIELD_BOOL, offsetof(km_model, converged), KM_RULE_ANY, 0},
};

const km_method_ops km_logistic_ops = {
	.id = KM_METHOD_LOGISTIC,
	.name = "logistic",
	.task = KM_TASK_CLASSIFICATION,
	.summary = "minimizes the logistic loss",
	.options = KM_OPTION_BIT(KM_OPT_SOLVER) |
		KM_OPTION_BIT(KM_OPT_CLASS_WEIGHT) | KM_OPTION_BIT(KM_OPT_MAX_ITER) |
		KM_OPTION_BIT(KM_OPT_TOL),
	.routes = KM_ROUTE(KM_CV_KFOLD),
	.default_route = KM_CV_KFOLD,
	.default_folds = 5,
	.workspace_doubles = no_regression_workspace,
	.fit = no_regression_fit,
	.store = no_regression_store,
	.fields = logistic_fields,
	.n_fields = sizeof(logistic_fields) / sizeof(logistic_fields[0]),
	.hint = logistic_hint,
	.score_metric = KM_SCORE_LOG_LOSS,
	.default_solver = KM_SOLVER_NEWTON,
	.solvers = (1u << KM_SOLVER_NEWTON) | (1u << KM_SOLVER_SGD),
	.default_tol = 0.0,		/* the shared 1e-6 on the gradient norm */
	.multiclass = logistic_multiclass,
	.class_workspace_doubles = logistic_class_workspace_doubles,
	.fit_classes = logistic_fit_classes,
	.prob_link = logistic_prob_link,
	.store_classes = logistic_store_classes,
};
