/*
 * lms.c - kernel least mean squares: the Richardson iteration
 * beta := beta + a (y - (K + lambda I) beta) from 0, with the step chosen
 * from the largest eigenvalue unless given (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>

#include "model_types.h"
#include "options_core.h"
#include "progress.h"
#include "solve.h"

/*
 * The step a: p->learning_rate if given, else 1 / the largest eigenvalue of
 * K + lambda I (work: 2n doubles for the power iteration).
 */
static km_status
lms_learning_rate(const km_fit_params *p, const double *K, size_t n,
				  double *work, double *a, km_error *err,
				  km_interrupt_fn interrupt)
{
	double		top;

	*a = p->learning_rate;
	if (*a > 0.0)
		return KM_OK;
	top = km_largest_eigenvalue(K, n, n, p->lambda, work, interrupt);
	if (!(top > 0.0) || !isfinite(top))
		return km_fail(err, KM_ERR_NOT_PD,
					   "cannot choose a learning rate for lms",
					   "The largest eigenvalue of K + lambda I is %g; it must be positive.",
					   top);
	/* converges for 0 < a < 2 / lambda_max; 1 / lambda_max leaves a margin */
	*a = 1.0 / top;
	return KM_OK;
}

/*
 * beta := beta + a (y - (K + lambda I) beta) from 0, until the relative
 * change is below p->tol or p->max_iter iterations (r: n doubles).
 */
static km_status
lms_iterate(const km_fit_params *p, const double *K, size_t n,
			const double *y, double a, double *beta, double *r,
			km_fit_result *res, km_error *err, km_interrupt_fn interrupt)
{
	memset(beta, 0, n * sizeof(double));
	res->iterations = 0;
	res->converged = false;
	res->final_change = 0.0;
	for (int it = 1; it <= p->max_iter; it++)
	{
		double		step_norm;
		double		beta_norm;

		/* r := y - (K + lambda I) beta;  beta := beta + a r */
		memcpy(r, y, n * sizeof(double));
		cblas_dsymv(CblasColMajor, CblasLower, (int) n, -1.0, K, (int) n,
					beta, 1, 1.0, r, 1);
		if (p->lambda != 0.0)
			cblas_daxpy((int) n, -p->lambda, beta, 1, r, 1);
		cblas_daxpy((int) n, a, r, 1, beta, 1);

		step_norm = a * cblas_dnrm2((int) n, r, 1);
		beta_norm = cblas_dnrm2((int) n, beta, 1);
		res->iterations = it;
		res->final_change = beta_norm > 0.0 ? step_norm / beta_norm : 0.0;
		if (!isfinite(beta_norm) || !isfinite(step_norm))
			return km_fail(err, KM_ERR_DIVERGED, "lms diverged",
						   "The coefficients became non-finite at iteration %d with learning_rate %g.",
						   it, a);
		km_check_interrupts(interrupt);
		km_progress_step("iteration %d of at most %d, relative change %.3g",
						 it, p->max_iter, res->final_change);
		if (res->final_change < p->tol)
		{
			res->converged = true;
			break;
		}
	}
	return KM_OK;
}

static km_status
lms_fit(const km_fit_params *p, const double *X, size_t n, int d,
		const double *y, double *beta, double *K, const double *norms,
		double *work, km_fit_result *res, km_error *err,
		km_interrupt_fn interrupt)
{
	double	   *r = work;
	double		a;
	km_status	st;

	km_progress_phase("lms: kernel matrix of %zu rows", n);
	if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(&p->kernel, K, n, n, err);
	if (p->learning_rate <= 0.0)
		km_progress_phase("lms: largest eigenvalue of %zu x %zu", n, n);
	st = lms_learning_rate(p, K, n, work, &a, err, interrupt);
	if (st != KM_OK)
		return st;
	res->learning_rate = a;
	km_progress_phase("lms: iterations on %zu rows", n);
	st = lms_iterate(p, K, n, y, a, beta, r, res, err, interrupt);
	if (st != KM_OK)
		return st;

	/* training residual y - K beta */
	memcpy(r, y, n * sizeof(double));
	cblas_dsymv(CblasColMajor, CblasLower, (int) n, -1.0, K, (int) n, beta, 1,
				1.0, r, 1);
	res->train_rmse = cblas_dnrm2((int) n, r, 1) / sqrt((double) n);
	if (!isfinite(res->train_rmse))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "lms training error is out of range for type double precision",
					   "The training residual y - K beta of the %s kernel overflowed after %d iterations.",
					   km_kernel_name(p->kernel.type), res->iterations);
	return KM_OK;
}

static size_t
lms_workspace_doubles(size_t n)
{
	/* the residual, or the two vectors of the power iteration */
	return 2 * n;
}

/* m arrives zeroed (the common fields set): the fields lms has a value for */
static void
lms_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
	m->lambda = p->lambda;
	m->converged = res->converged;
	m->learning_rate = res->learning_rate;
	m->max_iter = p->max_iter;
	m->tol = p->tol;
	m->iterations = res->iterations;
	m->final_change = res->final_change;
}

static const char *
lms_hint(km_status status)
{
	return km_method_hint(status,
						  "Use a smaller learning_rate, or leave it out to have it chosen automatically.",
						  NULL);
}

static const km_field lms_fields[] = {
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_NONNEG, 0},
	{"learning_rate", KM_FIELD_F64, offsetof(km_model, learning_rate), KM_RULE_NONNEG, 0},
	{"max_iter", KM_FIELD_I32, offsetof(km_model, max_iter), KM_RULE_NONNEG, 0},
	{"tol", KM_FIELD_F64, offsetof(km_model, tol), KM_RULE_NONNEG, 0},
	{"iterations", KM_FIELD_I32, offsetof(km_model, iterations), KM_RULE_NONNEG, 0},
	{"converged", KM_FIELD_BOOL, offsetof(km_model, converged), KM_RULE_ANY, 0},
	{"final_change", KM_FIELD_F64, offsetof(km_model, final_change), KM_RULE_NONNEG, 0},
};

const km_method_ops km_lms_ops = {
	.id = KM_METHOD_LMS,
	.name = "lms",
	.task = KM_TASK_REGRESSION,
	.summary = "iterates",
	.options = KM_OPTION_BIT(KM_OPT_LEARNING_RATE) | KM_OPTION_BIT(KM_OPT_MAX_ITER) |
		KM_OPTION_BIT(KM_OPT_TOL),
	/* LOO and GCV have a closed form only for ridge */
	.routes = KM_ROUTE(KM_CV_KFOLD),
	.default_route = KM_CV_KFOLD,
	.default_folds = 5,
	.workspace_doubles = lms_workspace_doubles,
	.fit = lms_fit,
	.store = lms_store,
	.fields = lms_fields,
	.n_fields = sizeof(lms_fields) / sizeof(lms_fields[0]),
	.hint = lms_hint,
};
