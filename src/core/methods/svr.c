/*
 * svr.c - the "svr" method: libsvm's epsilon-SVR (scikit-learn's SVR),
 * C = 1 / (n lambda) (method.h km_svm_C), the exact dual by libsvm's Solver
 * (km_smo_solve), and LIBLINEAR's L2-loss primal: its additive pass and
 * its step (svr.h), which the learner's one Newton drives over a host's
 * passes (learn/newton.h).  The method's ops are at the end of this file.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>

#include "accum.h"
#include "model_types.h"
#include "options_core.h"
#include "progress.h"
#include "svr.h"

/* ---- exact: the dual by SMO ---- */

/* Doubles holding l uint32_t. */
static size_t
u32_doubles(size_t l)
{
	return (l + 1) / 2;
}

size_t
km_svr_dual_doubles(size_t n)
{
	size_t		l = 2 * n;

	return km_smo_doubles(l) + 4 * l + u32_doubles(l);
}

km_status
km_svr_dual(const km_svr_problem *pr, const km_svm_params *par, double *coef,
			km_svm_result *res, double *work, km_error *err,
			km_interrupt_fn interrupt)
{
	size_t		n = pr->n;
	size_t		l = 2 * n;
	double	   *smo_work = work;
	double	   *alpha = smo_work + km_smo_doubles(l);
	double	   *sign = alpha + l;
	double	   *p = sign + l;
	double	   *Cv = p + l;
	uint32_t   *rows = (uint32_t *) (Cv + l);
	km_smo_problem sp;
	km_status	st;

	memset(res, 0, sizeof(*res));
	if (n == 0 || n > UINT32_MAX / 2)
		return km_fail(err, KM_ERR_INVALID, "svr needs at least one row",
					   "The problem has %zu rows.", n);
	if (!(pr->C > 0) || !isfinite(pr->C))
		return km_fail(err, KM_ERR_INVALID, "svr bound C must be positive and finite",
					   "C is %g.", pr->C);
	if (!(pr->epsilon >= 0) || !isfinite(pr->epsilon))
		return km_fail(err, KM_ERR_INVALID, "svr epsilon must be a finite number >= 0",
					   "epsilon is %g.", pr->epsilon);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(pr->y[i]))
			return km_fail(err, KM_ERR_INVALID, "svr targets must be finite",
						   "Row %zu has target %g.", i, pr->y[i]);

	/* libsvm's solve_epsilon_svr: a+ first, then a- */
	for (size_t i = 0; i < n; i++)
	{
		sign[i] = 1.0;
		sign[n + i] = -1.0;
		p[i] = pr->epsilon - pr->y[i];
		p[n + i] = pr->epsilon + pr->y[i];
		Cv[i] = Cv[n + i] = pr->C;
		rows[i] = rows[n + i] = (uint32_t) i;
	}
	sp.K = pr->K;
	sp.ld = pr->ld;
	sp.cols = pr->cols;
	sp.rows = rows;
	sp.l = l;
	sp.y = sign;
	sp.p = p;
	sp.C = Cv;
	st = km_smo_solve(&sp, par, alpha, res, smo_work, err, interrupt);
	if (st != KM_OK && st != KM_ERR_INACCURATE)
		return st;
	res->n_sv = 0;
	res->n_bounded_sv = 0;
	for (size_t i = 0; i < n; i++)
	{
		coef[i] = alpha[i] - alpha[n + i];
		if (coef[i] != 0)
		{
			res->n_sv++;
			if (fabs(coef[i]) >= pr->C)
				res->n_bounded_sv++;
		}
	}
	return st;
}

/* ---- approximate: L2-loss primal by Newton over passes ---- */

bool
km_svr_primal_add(double *state, uint32_t m, const double *Z, size_t rows,
				  const double *y, const double *weights, double epsilon,
				  const double *coef, double b, double *scratch,
				  km_interrupt_fn interrupt)
{
	/* f then w h: one rows x 2 column-major block, the dgemm's right operand */
	double	   *f = scratch;
	double	   *wh = f + rows;
	double	   *Zs = wh + rows;		/* rows x m: sqrt(w L'') z of the active rows */
	double	   *S = Zs + rows * m;	/* m x m */
	/* rows, sum w, sum w L, sum w L', sum w L'': the state's first five */
	double		sums[KM_PRIMAL_GZ] = {(double) rows, 0, 0, 0, 0};
	size_t		active = 0;

	if (!(epsilon >= 0) || !isfinite(epsilon))
		return false;
	if (rows == 0)
		return true;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m,
				coef, 1, 0.0, f, 1);
	/* the state changes only after this loop: a false return adds nothing */
	for (size_t i = 0; i < rows; i++)
	{
		double		w = weights ? weights[i] : 1.0;
		double		r = y[i] - (f[i] + b);
		double		a = fabs(r) - epsilon;

		if (!isfinite(r))
			return false;		/* a target or a decision value */
		sums[KM_PRIMAL_WSUM] += w;
		f[i] = 0.0;
		wh[i] = 0.0;
		if (a > 0.0 && w > 0.0)
		{
			/* inside the tube a row adds nothing, not even to H */
			f[i] = w * (r > 0 ? -2.0 * a : 2.0 * a);
			wh[i] = 2.0 * w;
			sums[KM_PRIMAL_LOSS] += w * a * a;
			sums[KM_PRIMAL_GB] += f[i];
			sums[KM_PRIMAL_HBB] += wh[i];
			cblas_dcopy((int) m, Z + i * m, 1, Zs + active * m, 1);
			cblas_dscal((int) m, sqrt(wh[i]), Zs + active * m, 1);
			active++;
		}
	}
	for (int k = 0; k < KM_PRIMAL_GZ; k++)
		state[k] += sums[k];
	/* the gradient and the Hessian's coef x b column, adjacent in the state */
	cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) m, 2, (int) rows, 1.0,
				Z, (int) m, f, (int) rows, 1.0, state + KM_PRIMAL_GZ, (int) m);
	if (active > 0)
		km_packed_syrk_add(state + KM_PRIMAL_HZZ(m), Zs, m, active, S, interrupt);
	return true;
}

km_status
km_svr_primal_step(km_primal_solver *s, const km_primal_params *p,
				   const double *state, const double *R, double *coef,
				   double *b, double *vecs, double *work, km_error *err,
				   km_interrupt_fn interrupt)
{
	km_primal_params q = *p;

	/* the step is loss-agnostic; km_primal_step only checks the name */
	q.loss = KM_PRIMAL_SQHINGE;
	return km_primal_step(s, &q, state, R, coef, b, vecs, work, err, interrupt);
}

/* ---- the method: registry entry km_svr_ops (methods.def) ---- */

/* Its own options (km_fit_params.method_params). */
typedef struct svr_params
{
	double		epsilon;		/* the half-width of the insensitive tube */
} svr_params;

KM_STATIC_ASSERT(sizeof(svr_params) <= KM_METHOD_BLOB_SIZE, svr_params);

/* What its fit returns beyond km_fit_result (km_fit_result.method_result). */
typedef struct svr_result
{
	double		objective;		/* the dual objective at the end */
	uint32_t	n_support;		/* rows with coef != 0 */
} svr_result;

KM_STATIC_ASSERT(sizeof(svr_result) <= KM_METHOD_BLOB_SIZE, svr_result);

/* Its model fields (km_model.method_data; METHOD section below). */
typedef struct svr_fields
{
	double		epsilon;
	uint32_t	n_support;
} svr_fields;

KM_STATIC_ASSERT(sizeof(svr_fields) <= KM_METHOD_BLOB_SIZE, svr_fields);

static const km_method_option svr_options[] = {
	{{"epsilon", KM_OPTTYPE_NUMBER, 0, INFINITY, false, false,
	  "a number >= 0", "0.1", KM_FN_TRAINING, 0},
	 offsetof(svr_params, epsilon), KM_SVR_EPSILON},
};

static size_t
svr_workspace_doubles(size_t n)
{
	/* the dual's workspace; afterwards its first n doubles hold the residual */
	return km_svr_dual_doubles(n);
}

/*
 * The dual on the full Gram matrix (km_gram_lower, then km_symmetrize: the
 * Solver reads whole columns), y centred by the trainer when it fits an
 * intercept; b, the dual's bias, goes to res->intercept (the trainer adds
 * it to the model's intercept, k-fold to its held-out predictions).  SVR is
 * translation-equivariant, so b + mean(y) is the bias of the fit on y.
 */
static km_status
svr_fit(const km_fit_params *p, const double *X, size_t n, int d,
		const double *y, double *coef, double *K, const double *norms,
		double *work, km_fit_result *res, km_error *err,
		km_interrupt_fn interrupt)
{
	const svr_params *sp = KM_METHOD_BLOB_CONST(&p->method_params, svr_params);
	svr_result *sr = KM_METHOD_BLOB(&res->method_result, svr_result);
	km_svm_params par = km_svm_params_default();
	km_svr_problem pr;
	km_svm_result r;
	km_status	st;
	double	   *resid = work;

	if (!(p->lambda > 0.0))
		return km_fail(err, KM_ERR_INVALID, "svr needs lambda > 0",
					   "Method \"svr\" has C = 1 / (n lambda); lambda = %g gives no finite C.",
					   p->lambda);
	km_progress_phase("svr: kernel matrix of %zu rows", n);
	if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(&p->kernel, K, n, n, err);
	km_symmetrize(K, n, n, interrupt);

	par.tol = p->tol;
	par.max_iter = p->max_iter > 0 ? (uint64_t) p->max_iter : 0;
	memset(&pr, 0, sizeof(pr));
	pr.K = K;
	pr.ld = n;
	pr.cols = NULL;
	pr.n = n;
	pr.y = y;
	pr.C = km_svm_C(p->lambda, n);
	pr.epsilon = sp->epsilon;
	km_progress_phase("svr: SMO on %zu rows", n);
	st = km_svr_dual(&pr, &par, coef, &r, work, err, interrupt);
	res->iterations = r.iterations > INT32_MAX ? INT32_MAX : (int) r.iterations;
	res->converged = st == KM_OK;
	sr->objective = r.objective;
	sr->n_support = r.n_sv;
	/*
	 * max_iter reached is an error with the hint (ops->hint), not a warning:
	 * the regression pipeline keeps no unconverged fit, and k-fold drops
	 * the candidate (select.c), as it does an lms that diverged
	 */
	if (st == KM_ERR_INACCURATE)
		return km_fail(err, KM_ERR_INACCURATE, "svr did not converge",
					   "SMO stopped after %llu iterations with a KKT violation of %g above tol %g.",
					   (unsigned long long) r.iterations, r.violation, par.tol);
	if (st != KM_OK)
		return st;
	res->intercept = r.b;

	/* training residual y - K coef - b */
	memcpy(resid, y, n * sizeof(double));
	cblas_dsymv(CblasColMajor, CblasLower, (int) n, -1.0, K, (int) n, coef, 1,
				1.0, resid, 1);
	for (size_t i = 0; i < n; i++)
		resid[i] -= r.b;
	res->train_rmse = cblas_dnrm2((int) n, resid, 1) / sqrt((double) n);
	if (!isfinite(res->train_rmse))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "svr training error is out of range for type double precision",
					   "The training residual y - K coef - b of the %s kernel overflowed.",
					   km_kernel_name(p->kernel.type));
	return KM_OK;
}

/* m arrives zeroed (the common fields set): the fields svr has a value for */
static void
svr_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
	const svr_params *sp = KM_METHOD_BLOB_CONST(&p->method_params, svr_params);
	const svr_result *sr = KM_METHOD_BLOB_CONST(&res->method_result, svr_result);
	svr_fields *f = KM_METHOD_BLOB(&m->method_data, svr_fields);

	m->lambda = p->lambda;
	m->tol = p->tol;
	m->max_iter = p->max_iter;
	m->iterations = res->iterations;
	m->converged = res->converged;
	f->epsilon = sp->epsilon;
	f->n_support = sr->n_support;
}

/* The primal's parameters from the fit's (the loss is not read by the step, svr.h). */
static km_status
svr_primal_params(const km_fit_params *p, km_primal_params *pp, km_error *err)
{
	if (!(p->lambda > 0.0))
		return km_fail(err, KM_ERR_INVALID, "svr needs lambda > 0",
					   "Method \"svr\" minimizes the mean loss plus lambda / 2 ||w||^2; lambda = %g leaves it unbounded below.",
					   p->lambda);
	memset(pp, 0, sizeof(*pp));
	pp->loss = KM_PRIMAL_SQHINGE;
	pp->lambda = p->lambda;
	pp->fit_intercept = p->fit_intercept;
	pp->tol = p->tol;
	pp->max_iter = p->max_iter;
	return KM_OK;
}

/* ops.primal_add: km_svr_primal_add at the method's epsilon, every weight 1. */
static bool
svr_primal_add_op(const km_fit_params *p, double *state, uint32_t m,
				  const double *Z, size_t rows, const double *y,
				  const double *coef, double b, double *scratch,
				  km_interrupt_fn interrupt)
{
	const svr_params *sp = KM_METHOD_BLOB_CONST(&p->method_params, svr_params);

	return km_svr_primal_add(state, m, Z, rows, y, NULL, sp->epsilon, coef, b,
							 scratch, interrupt);
}

/* ops.primal_step: km_svr_primal_step. */
static km_status
svr_primal_step_op(const km_fit_params *p, struct km_primal_solver *s,
				   const double *state, const double *R, double *coef,
				   double *b, double *vecs, double *work, km_error *err,
				   km_interrupt_fn interrupt)
{
	km_primal_params pp;
	km_status	st = svr_primal_params(p, &pp, err);

	if (st != KM_OK)
		return st;
	return km_svr_primal_step(s, &pp, state, R, coef, b, vecs, work, err,
							  interrupt);
}

/*
 * ops.primal_tally: tally[0] += the squared residuals of the rows,
 * tally[1] += the rows outside the tube (the rows whose loss is not 0).
 */
static void
svr_primal_tally(const km_fit_params *p, const double *Z, size_t rows,
				 uint32_t m, const double *y, const double *coef, double b,
				 double *tally, double *f)
{
	const svr_params *sp = KM_METHOD_BLOB_CONST(&p->method_params, svr_params);

	if (rows == 0)
		return;
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z,
				(int) m, coef, 1, 0.0, f, 1);
	for (size_t i = 0; i < rows; i++)
	{
		double		r = y[i] - f[i] - b;

		tally[0] += r * r;
		tally[1] += fabs(r) > sp->epsilon;
	}
}

/* ops.primal_result: the training RMSE and n_support of the tally. */
static km_status
svr_primal_result(const km_fit_params *p, const struct km_primal_solver *s,
				  const double *tally, size_t n, km_fit_result *res,
				  km_error *err)
{
	svr_result *sr = KM_METHOD_BLOB(&res->method_result, svr_result);

	res->iterations = s->iterations;
	res->converged = s->converged;
	sr->objective = s->objective;
	if (!s->converged)
		return km_fail(err, KM_ERR_INACCURATE, "svr primal newton did not converge",
					   "The solver stopped after %d Newton steps with a gradient norm of %g (%g at the start).",
					   s->iterations, s->grad_norm, s->grad_norm0);
	res->train_rmse = n > 0 ? sqrt(tally[0] / (double) n) : 0.0;
	sr->n_support = tally[1] >= (double) UINT32_MAX ? UINT32_MAX : (uint32_t) tally[1];
	if (!isfinite(res->train_rmse))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "svr training error is out of range for type double precision",
					   "The training residual y - z coef - b overflowed after %d Newton steps.",
					   s->iterations);
	return KM_OK;
}

static const char *
svr_hint(km_status status)
{
	return km_method_hint(status,
						  "Raise lambda (a smaller C), or standardize the features (\"standardize\": true).",
						  "Raise \"tol\" or \"max_iter\", or raise lambda.");
}

static const km_field svr_model_fields[] = {
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_POSITIVE, 0},
	{"epsilon", KM_FIELD_F64, KM_METHOD_FIELD(svr_fields, epsilon), KM_RULE_NONNEG, 0},
	{"tol", KM_FIELD_F64, offsetof(km_model, tol), KM_RULE_NONNEG, 0},
	{"max_iter", KM_FIELD_I32, offsetof(km_model, max_iter), KM_RULE_NONNEG, 0},
	{"iterations", KM_FIELD_I32, offsetof(km_model, iterations), KM_RULE_NONNEG, 0},
	{"converged", KM_FIELD_BOOL, offsetof(km_model, converged), KM_RULE_ANY, 0},
	{"n_support", KM_FIELD_U32, KM_METHOD_FIELD(svr_fields, n_support), KM_RULE_ANY, 0},
};

const km_method_ops km_svr_ops = {
	.id = KM_METHOD_SVR,
	.name = "svr",
	.task = KM_TASK_REGRESSION,
	.summary = "fits an epsilon-insensitive tube (libsvm's epsilon-SVR)",
	.options = KM_OPTION_BIT(KM_OPT_MAX_ITER) | KM_OPTION_BIT(KM_OPT_TOL),
	.own_options = svr_options,
	.n_own_options = sizeof(svr_options) / sizeof(svr_options[0]),
	.params_size = sizeof(svr_params),
	/* LOO and GCV have a closed form only for ridge */
	.routes = KM_ROUTE(KM_CV_KFOLD),
	.default_route = KM_CV_KFOLD,
	.default_folds = 5,
	.workspace_doubles = svr_workspace_doubles,
	.fit = svr_fit,
	.store = svr_store,
	.fields = svr_model_fields,
	.n_fields = sizeof(svr_model_fields) / sizeof(svr_model_fields[0]),
	.hint = svr_hint,
	/* scikit-learn's SVR(): C = 1, tol 1e-3, no iteration limit but libsvm's */
	.lambda_per_row = true,
	.default_tol = 1e-3,
	.solver_max_iter = true,
	/* nystrom, rff: the L2-loss primal by the learner's Newton passes (learn/newton.h) */
	.primal_add = svr_primal_add_op,
	.primal_step = svr_primal_step_op,
	.primal_tally = svr_primal_tally,
	.primal_result = svr_primal_result,
	/* the exact dual always fits b: no "fit_intercept": false there */
	.exact_bias = true,
};
