/*
 * svm_method.c - the "svm" method: libsvm's C-SVC with C = 1 / (n lambda)
 * (method.h km_svm_C), hinge loss, solved by SMO (svm.h, branch svm-core)
 * or SGD; one-vs-one for more than two classes; Platt probabilities with
 * "probability": true (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "class_types.h"
#include "options_core.h"
#include "primal.h"
#include "svm.h"

static int
svm_multiclass(uint32_t k)
{
	return k == 2 ? KM_MULTICLASS_BINARY : KM_MULTICLASS_OVO;
}

static size_t
svm_class_workspace_doubles(size_t n, uint32_t k, const km_fit_params *p)
{
	size_t		own = km_method_solver(&km_svm_ops, p->solver) == KM_SOLVER_SGD ?
		km_fit_sgd_doubles(n) : km_svm_train_doubles(n, k, p->probability);

	/* the per-class C after the solver's own */
	return own == 0 ? 0 : own + k;
}

static km_status
svm_fit_classes(const km_fit_params *p, const double *X, size_t n, int d,
				const uint32_t *cls, uint32_t k, const double *class_w,
				const uint32_t *fold, uint32_t n_folds, double *alpha,
				double *intercepts, double *prob_A, double *prob_B,
				const double *K, double *work, km_class_fit_result *res,
				km_error *err, km_interrupt_fn interrupt)
{
	double	   *C = work + km_svm_train_doubles(n, k, p->probability);
	km_svm_params par = km_svm_params_default();
	km_svm_multi_problem pr;
	km_svm_multi_result mr;
	km_status	st;

	if (!(p->lambda > 0.0))
		return km_fail(err, KM_ERR_INVALID, "svm needs lambda > 0",
					   "Method \"svm\" has C = 1 / (n lambda); lambda = %g gives no finite C.",
					   p->lambda);
	if (km_method_solver(&km_svm_ops, p->solver) == KM_SOLVER_SGD)
	{
		if (p->probability)
			return km_fail(err, KM_ERR_INVALID, "solver \"sgd\" gives no probabilities",
						   "Option \"probability\" needs the SMO solver, whose fits Platt scaling repeats on internal folds.");
		return km_fit_sgd(p, true, K, n, cls, k, class_w, alpha, intercepts,
						  work, res, err, interrupt);
	}
	for (uint32_t c = 0; c < k; c++)
		C[c] = km_svm_C(p->lambda, n) * class_w[c];
	par.tol = p->tol;
	par.max_iter = p->max_iter > 0 ? (uint64_t) p->max_iter : 0;
	memset(&pr, 0, sizeof(pr));
	pr.K = K;
	pr.ld = n;
	pr.n = n;
	pr.cls = cls;
	pr.k = k;
	pr.C = C;
	pr.fold = p->probability ? fold : NULL;
	pr.n_folds = p->probability ? n_folds : 0;
	pr.cols = p->gram_cols;
	st = km_svm_train(&pr, &par, alpha, intercepts, prob_A, prob_B, &mr, work,
					  err, interrupt);
	res->solver = KM_SOLVER_SMO;
	res->iterations = mr.iterations > INT32_MAX ? INT32_MAX : (int) mr.iterations;
	res->objective = mr.objective;
	res->n_support = mr.n_sv;
	res->has_probability = p->probability;
	res->converged = st == KM_OK;
	if (st == KM_ERR_INACCURATE)
		return KM_OK;			/* kept, as libsvm; the glue warns */
	return st;
}

static km_prob_link
svm_prob_link(bool has_probability, int mc, const char **hint)
{
	if (has_probability)
		return KM_PROB_PLATT;
	*hint = "Train with \"probability\": true (Platt scaling on internal folds), or use kernel_predict_class.";
	return KM_PROB_NONE;
}

static const char *
svm_hint(km_status status)
{
	return km_method_hint(status,
						  "Raise lambda (a smaller C), or standardize the features (\"standardize\": true).",
						  "Raise \"tol\" or \"max_iter\", or raise lambda.");
}

const km_method_ops km_svm_ops = {
	.id = KM_METHOD_SVM,
	.name = "svm",
	KM_CLASSIFIER_OPS,
	.summary = "maximizes the margin (hinge loss)",
	.options = KM_OPTION_BIT(KM_OPT_SOLVER) | KM_OPTION_BIT(KM_OPT_PROBABILITY) |
		KM_OPTION_BIT(KM_OPT_CLASS_WEIGHT) | KM_OPTION_BIT(KM_OPT_MAX_ITER) |
		KM_OPTION_BIT(KM_OPT_TOL),
	.hint = svm_hint,
	.score_metric = KM_SCORE_ACCURACY,
	.default_solver = KM_SOLVER_SMO,
	.solvers = (1u << KM_SOLVER_SMO) | (1u << KM_SOLVER_SGD),
	.default_tol = 1e-3,
	.multiclass = svm_multiclass,
	.class_workspace_doubles = svm_class_workspace_doubles,
	.fit_classes = svm_fit_classes,
	.prob_link = svm_prob_link,
	.task_default = true,
	.platt_probability = true,
	.support_vectors = true,
	.gram_cols = true,
	.primal_loss = KM_PRIMAL_SQHINGE,
	.primal_loss_name = "squared_hinge (L2-SVM)",
};
