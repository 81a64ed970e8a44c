/*
 * logistic_method.c - the "logistic" method: kernel logistic regression,
 * (1/n) sum_i w_i log(1 + exp(-y_i f(x_i))) + (lambda/2) ||f||^2 with an
 * unpenalized intercept, solved by Newton on the dual (logistic.h, branch
 * logistic-core) or SGD; the multinomial (softmax) loss for more than two
 * classes; probabilities always (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>

#include "class_types.h"
#include "logistic.h"
#include "options_core.h"
#include "primal.h"

static int
logistic_multiclass(uint32_t k)
{
	return k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_MULTINOMIAL;
}

static size_t
logistic_class_workspace_doubles(size_t n, uint32_t k, const km_fit_params *p)
{
	size_t		own = km_method_solver(&km_logistic_ops, p->solver) == KM_SOLVER_SGD ?
		km_fit_sgd_doubles(n) : km_logistic_workspace_doubles(n, k);

	/* the row weights after the solver's own */
	return own == 0 ? 0 : own + n;
}

static km_status
logistic_fit_classes(const km_fit_params *p, const double *X, size_t n, int d,
					 const uint32_t *cls, uint32_t k, const double *class_w,
					 const uint32_t *fold, uint32_t n_folds, double *alpha,
					 double *intercepts, double *prob_A, double *prob_B,
					 const double *K, double *work, km_class_fit_result *res,
					 km_error *err, km_interrupt_fn interrupt)
{
	double	   *w = work + km_logistic_workspace_doubles(n, k);
	km_logistic_params lp;
	km_logistic_result lr;
	km_status	st;

	if (!(p->lambda > 0.0))
		return km_fail(err, KM_ERR_INVALID, "logistic needs lambda > 0",
					   "Kernel logistic regression with lambda = %g has no minimum on separable rows.",
					   p->lambda);
	if (km_method_solver(&km_logistic_ops, p->solver) == KM_SOLVER_SGD)
		return km_fit_sgd(p, false, K, n, cls, k, class_w, alpha, intercepts,
						  work, res, err, interrupt);
	for (size_t i = 0; i < n; i++)
		w[i] = class_w[cls[i]];
	lp.lambda = p->lambda;
	lp.fit_intercept = p->fit_intercept;
	lp.tol = p->tol;
	lp.max_iter = p->max_iter;
	st = km_logistic_fit(&lp, K, n, cls, k, w, alpha, intercepts, work, &lr,
						 err, interrupt);
	res->solver = KM_SOLVER_NEWTON;
	res->iterations = lr.iterations;
	res->objective = lr.objective;
	res->converged = lr.converged;
	res->has_probability = true;
	return st;
}

static km_prob_link
logistic_prob_link(bool has_probability, int mc, const char **hint)
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

const km_method_ops km_logistic_ops = {
	.id = KM_METHOD_LOGISTIC,
	.name = "logistic",
	KM_CLASSIFIER_OPS,
	.summary = "minimizes the logistic loss",
	.options = KM_OPTION_BIT(KM_OPT_SOLVER) |
		KM_OPTION_BIT(KM_OPT_CLASS_WEIGHT) | KM_OPTION_BIT(KM_OPT_MAX_ITER) |
		KM_OPTION_BIT(KM_OPT_TOL),
	.hint = logistic_hint,
	.score_metric = KM_SCORE_LOG_LOSS,
	.default_solver = KM_SOLVER_NEWTON,
	.solvers = (1u << KM_SOLVER_NEWTON) | (1u << KM_SOLVER_SGD),
	.default_tol = 1e-8,		/* KM_LOGISTIC_TOL: the gradient norm relative to its start */
	.multiclass = logistic_multiclass,
	.class_workspace_doubles = logistic_class_workspace_doubles,
	.fit_classes = logistic_fit_classes,
	.prob_link = logistic_prob_link,
	.primal_loss = KM_PRIMAL_LOGISTIC,
	.primal_loss_name = "logistic",
	/* "newton" names primal Newton's steps as well */
	.primal_solvers = 1u << KM_SOLVER_NEWTON,
};
