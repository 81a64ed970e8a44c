/*
 * oneclass.c - the "oneclass" method: libsvm's nu one-class SVM
 * (scikit-learn's OneClassSVM), exact by libsvm's Solver (km_smo_solve_from
 * from libsvm's one-class start), and on Nystrom / random Fourier features
 * by the same dual on their linear kernel (oneclass.h).  The method's ops
 * are at the end of this file.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>

#include "model_types.h"
#include "oneclass.h"
#include "options_core.h"
#include "progress.h"

/* ---- the dual ---- */

size_t
km_oneclass_dual_doubles(size_t n)
{
	/* the Solver's, then signs, bounds, the start, the linear term */
	return km_smo_doubles(n) + 4 * n;
}

/* nu = 1: the only feasible point, every a_i = 1; rho the largest (K a)_i. */
static km_status
all_bounded(const km_oneclass_problem *pr, double *alpha, km_svm_result *res,
			km_interrupt_fn interrupt)
{
	size_t		n = pr->n;
	double		rho = -INFINITY;
	double		total = 0;

	for (size_t j = 0; j < n; j++)
	{
		const double *col = pr->cols ? km_gram_cols_get(pr->cols, j)
			: pr->K + j * pr->ld;
		double		s = 0;

		for (size_t i = 0; i < n; i++)
			s += col[i];
		total += s;
		if (s > rho)
			rho = s;
		alpha[j] = 1.0;
		if ((j & 255) == 255)
			km_check_interrupts(interrupt);
	}
	res->b = -rho;
	res->objective = total / 2;
	res->violation = 0;
	res->converged = true;
	res->n_sv = (uint32_t) n;
	res->n_bounded_sv = (uint32_t) n;
	return KM_OK;
}

km_status
km_oneclass_dual(const km_oneclass_problem *pr, const km_svm_params *par,
				 double *alpha, km_svm_result *res, double *work,
				 km_error *err, km_interrupt_fn interrupt)
{
	size_t		n = pr->n;
	double	   *smo_work = work;
	double	   *sign = smo_work + km_smo_doubles(n);
	double	   *Cv = sign + n;
	double	   *a0 = Cv + n;
	double	   *zero = a0 + n;
	double		total;
	size_t		whole;
	km_smo_problem sp;

	memset(res, 0, sizeof(*res));
	if (n < 2 || n > UINT32_MAX)
		return km_fail(err, KM_ERR_INVALID, "oneclass needs at least two rows",
					   "The fit has %zu row(s).", n);
	if (!(pr->nu > 0 && pr->nu <= 1))
		return km_fail(err, KM_ERR_INVALID, "oneclass nu must be in (0, 1]",
					   "nu is %g.", pr->nu);
	/*
	 * Columns computed on demand: a diagonal that overflowed is refused
	 * before SMO reads it (|K_ij| <= sqrt(K_ii K_jj) bounds the rest for
	 * the positive semi-definite kernels; rbf's entries are at most 1).
	 */
	for (size_t i = 0; pr->cols != NULL && i < n; i++)
		if (!isfinite(km_gram_cols_diag(pr->cols, i)))
			return km_fail(err, KM_ERR_OVERFLOW,
						   "kernel matrix entry is out of range for type double precision",
						   "The %s kernel of row %zu with itself overflowed.",
						   km_kernel_name(pr->cols->k->type), i + 1);
	if (pr->nu == 1.0)
		return all_bounded(pr, alpha, res, interrupt);

	/* libsvm's solve_one_class: floor(nu n) variables at 1, the remainder next */
	total = pr->nu * (double) n;
	whole = (size_t) total;
	for (size_t i = 0; i < n; i++)
	{
		sign[i] = 1.0;
		Cv[i] = 1.0;
		a0[i] = i < whole ? 1.0 : 0.0;
		zero[i] = 0.0;
	}
	if (whole < n)
		a0[whole] = total - (double) whole;

	sp.K = pr->K;
	sp.ld = pr->ld;
	sp.cols = pr->cols;
	sp.rows = NULL;
	sp.l = n;
	sp.y = sign;
	/* no linear term: p = 0 (NULL would be C-SVC's -1) */
	sp.p = zero;
	sp.C = Cv;
	return km_smo_solve_from(&sp, a0, par, alpha, res, smo_work, err, interrupt);
}

/* ---- on m features: the same dual on their linear kernel ---- */

size_t
km_oneclass_features_doubles(size_t n, uint32_t m, size_t slots)
{
	if (slots < 2)
		slots = 2;
	/* alpha, the cache's columns and tables, the dual's */
	return n + slots * n + km_gram_cols_table_doubles(n, slots) +
		km_oneclass_dual_doubles(n);
}

km_status
km_oneclass_features(const double *Z, size_t n, uint32_t m, double nu,
					 const km_svm_params *par, size_t slots, double *w,
					 double *b, km_svm_result *res, double *work,
					 km_error *err, km_interrupt_fn interrupt)
{
	static const km_kernel linear = {KM_KERNEL_LINEAR, 0, 0, 0};
	double	   *alpha = work;
	double	   *cache;
	double	   *tables;
	double	   *dual;
	km_gram_cols cols;
	km_oneclass_problem pr;
	km_status	st;

	if (slots < 2)
		slots = 2;
	if (slots > n)
		slots = n;
	cache = alpha + n;
	tables = cache + slots * n;
	dual = tables + km_gram_cols_table_doubles(n, slots);
	memset(res, 0, sizeof(*res));
	if (n < 2 || m == 0)
		return km_fail(err, KM_ERR_INVALID, "oneclass needs at least two rows",
					   "The problem has %zu rows of %u features.", n, m);
	km_gram_cols_init(&cols, &linear, Z, n, (int) m, NULL, cache, n, slots, tables);
	pr.K = NULL;
	pr.ld = n;
	pr.cols = &cols;
	pr.n = n;
	pr.nu = nu;
	st = km_oneclass_dual(&pr, par, alpha, res, dual, err, interrupt);
	if (st != KM_OK && st != KM_ERR_INACCURATE)
		return st;
	/* w = Z^T a */
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) n, (int) m, 1.0, Z, (int) m,
				alpha, 1, 0.0, w, 1);
	*b = res->b;
	return st;
}

/* ---- the method: registry entry km_oneclass_ops (methods.def) ---- */

/* Its own options (km_fit_params.method_params). */
typedef struct oneclass_params
{
	double		nu;				/* the bound on the outliers' fraction, (0, 1] */
} oneclass_params;

KM_STATIC_ASSERT(sizeof(oneclass_params) <= KM_METHOD_BLOB_SIZE, oneclass_params);

/* What its fits return beyond km_fit_result (km_fit_result.method_result). */
typedef struct oneclass_result
{
	double		objective;		/* the dual objective 1/2 a^T K a at the end */
	uint32_t	n_support;		/* rows with a_i > 0 */
} oneclass_result;

KM_STATIC_ASSERT(sizeof(oneclass_result) <= KM_METHOD_BLOB_SIZE, oneclass_result);

/* Its model fields (km_model.method_data; METHOD section). */
typedef struct oneclass_fields
{
	double		nu;
	uint32_t	n_support;
	double		objective;
} oneclass_fields;

KM_STATIC_ASSERT(sizeof(oneclass_fields) <= KM_METHOD_BLOB_SIZE, oneclass_fields);

static const km_method_option oneclass_options[] = {
	{{"nu", KM_OPTTYPE_NUMBER, 0, 1, true, false,
	  "a number in (0, 1]", "0.5", KM_FN_TRAINING, 0},
	 offsetof(oneclass_params, nu), KM_ONECLASS_NU},
};

/* One output: the decision value. */
static uint32_t
oneclass_outputs(const km_fit_params *p, size_t n)
{
	(void) p;
	(void) n;
	return 1;
}

/* Columns of the cache: as the exact svm's (kernels.h KM_GRAM_COLS_BYTES). */
static size_t
cache_slots(size_t n)
{
	return km_gram_cols_slots(n, KM_GRAM_COLS_BYTES);
}

/* The cache's columns and tables, then the dual's; 0 on overflow. */
static size_t
oneclass_rows_doubles(size_t n)
{
	size_t		slots = cache_slots(n);

	/* about (slots + 12) n doubles: 0 where n is beyond any allocation */
	if (n == 0 || n > (SIZE_MAX / sizeof(double)) / (slots + 16))
		return 0;
	return slots * n + km_gram_cols_table_doubles(n, slots) + km_oneclass_dual_doubles(n);
}

/* The Solver's settings from the fit's: tol, max_iter (0: libsvm's limit). */
static km_svm_params
solver_params(const km_fit_params *p)
{
	km_svm_params par = km_svm_params_default();

	par.tol = p->tol;
	par.max_iter = p->max_iter > 0 ? (uint64_t) p->max_iter : 0;
	return par;
}

/* A fit's outcome into f: max_iter reached is an error with the hint (ops->hint). */
static km_status
finish_fit(const km_svm_result *r, km_status st, const km_svm_params *par,
		   km_rows_fit *f, km_error *err)
{
	oneclass_result *or = KM_METHOD_BLOB(&f->res.method_result, oneclass_result);

	f->res.iterations = r->iterations > INT32_MAX ? INT32_MAX : (int) r->iterations;
	f->res.converged = st == KM_OK;
	or->objective = r->objective;
	or->n_support = r->n_sv;
	if (st == KM_ERR_INACCURATE)
		return km_fail(err, KM_ERR_INACCURATE, "oneclass did not converge",
					   "SMO stopped after %llu iterations with a KKT violation of %g above tol %g.",
					   (unsigned long long) r->iterations, r->violation, par->tol);
	if (st != KM_OK)
		return st;
	f->intercepts[0] = r->b;
	f->values[0] = -r->b;		/* rho */
	return KM_OK;
}

/*
 * The exact dual on standardized rows, the kernel's columns computed on
 * demand through a cache in work (K is NULL: rows_gram_cols), so a fit of
 * n rows holds a few columns, not n x n.
 */
static km_status
oneclass_fit_rows(const km_fit_params *p, const double *X, size_t n, int d,
				  const double *norms, double *K, double *work, km_rows_fit *f,
				  km_error *err, km_interrupt_fn interrupt)
{
	const oneclass_params *op = KM_METHOD_BLOB_CONST(&p->method_params, oneclass_params);
	size_t		slots = cache_slots(n);
	double	   *cache = work;
	double	   *tables = cache + slots * n;
	double	   *dual = tables + km_gram_cols_table_doubles(n, slots);
	km_svm_params par = solver_params(p);
	km_gram_cols cols;
	km_oneclass_problem pr;
	km_svm_result r;
	km_status	st;

	(void) K;
	km_gram_cols_init(&cols, &p->kernel, X, n, d, norms, cache, n, slots, tables);
	pr.K = NULL;
	pr.ld = n;
	pr.cols = &cols;
	pr.n = n;
	pr.nu = op->nu;
	km_progress_phase("oneclass: SMO on %zu rows", n);
	st = km_oneclass_dual(&pr, &par, f->coef, &r, dual, err, interrupt);
	return finish_fit(&r, st, &par, f, err);
}

static size_t
oneclass_features_doubles(size_t n, uint32_t m)
{
	size_t		slots = cache_slots(n);

	if (n == 0 || n > (SIZE_MAX / sizeof(double)) / (slots + 16))
		return 0;
	return km_oneclass_features_doubles(n, m, slots);
}

/* On every row's m features: the same dual on their linear kernel. */
static km_status
oneclass_fit_features(const km_fit_params *p, const double *Z, size_t n,
					  uint32_t m, double *work, km_rows_fit *f, km_error *err,
					  km_interrupt_fn interrupt)
{
	const oneclass_params *op = KM_METHOD_BLOB_CONST(&p->method_params, oneclass_params);
	km_svm_params par = solver_params(p);
	km_svm_result r;
	km_status	st;
	double		b;

	km_progress_phase("oneclass: SMO on %zu rows of %u features", n, m);
	st = km_oneclass_features(Z, n, m, op->nu, &par, cache_slots(n), f->coef, &b,
							  &r, work, err, interrupt);
	return finish_fit(&r, st, &par, f, err);
}

/* m arrives filled by the road: the fields oneclass has a value for. */
static void
oneclass_store_rows(const km_fit_params *p, const km_rows_fit *f, km_model *m)
{
	const oneclass_params *op = KM_METHOD_BLOB_CONST(&p->method_params, oneclass_params);
	const oneclass_result *or = KM_METHOD_BLOB_CONST(&f->res.method_result, oneclass_result);
	oneclass_fields *of = KM_METHOD_BLOB(&m->method_data, oneclass_fields);

	m->tol = p->tol;
	m->max_iter = p->max_iter;
	m->iterations = f->res.iterations;
	m->converged = f->res.converged;
	/* its value (rho) is no eigenvalue: a novelty model has no PCA section */
	m->eigenvalues = NULL;
	m->eigen_total = 0;
	of->nu = op->nu;
	of->n_support = or->n_support;
	of->objective = or->objective;
}

static size_t
oneclass_no_workspace(size_t n)
{
	(void) n;
	return 1;
}

static km_status
oneclass_no_fit(const km_fit_params *p, const double *X, size_t n, int d,
				const double *y, double *alpha, double *K, const double *norms,
				double *work, km_fit_result *res, km_error *err,
				km_interrupt_fn interrupt)
{
	return km_fail(err, KM_ERR_INVALID, "method \"oneclass\" takes no target",
				   "The one-class SVM is fitted on rows without a target.");
}

static void
oneclass_no_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
}

static const char *
oneclass_hint(km_status status)
{
	return km_method_hint(status,
						  "Standardize the features (\"standardize\": true) or use the rbf kernel.",
						  "Raise \"tol\" or \"max_iter\".");
}

static const km_field oneclass_model_fields[] = {
	{"nu", KM_FIELD_F64, KM_METHOD_FIELD(oneclass_fields, nu), KM_RULE_FRACTION, 0},
	{"tol", KM_FIELD_F64, offsetof(km_model, tol), KM_RULE_NONNEG, 0},
	{"max_iter", KM_FIELD_I32, offsetof(km_model, max_iter), KM_RULE_NONNEG, 0},
	{"iterations", KM_FIELD_I32, offsetof(km_model, iterations), KM_RULE_NONNEG, 0},
	{"converged", KM_FIELD_BOOL, offsetof(km_model, converged), KM_RULE_ANY, 0},
	{"n_support", KM_FIELD_U32, KM_METHOD_FIELD(oneclass_fields, n_support), KM_RULE_ANY, 0},
	{"objective", KM_FIELD_F64, KM_METHOD_FIELD(oneclass_fields, objective), KM_RULE_NONNEG, 0},
};

const km_method_ops km_oneclass_ops = {
	.id = KM_METHOD_ONECLASS,
	.name = "oneclass",
	.task = KM_TASK_NOVELTY,
	.summary = "finds the smallest region holding a fraction 1 - nu of the rows (libsvm's one-class SVM)",
	.options = KM_OPTION_BIT(KM_OPT_MAX_ITER) | KM_OPTION_BIT(KM_OPT_TOL),
	.own_options = oneclass_options,
	.n_own_options = sizeof(oneclass_options) / sizeof(oneclass_options[0]),
	.params_size = sizeof(oneclass_params),
	.routes = KM_ROUTE(KM_CV_NONE),
	.default_route = KM_CV_NONE,
	.workspace_doubles = oneclass_no_workspace,
	.fit = oneclass_no_fit,
	.store = oneclass_no_store,
	.fields = oneclass_model_fields,
	.n_fields = sizeof(oneclass_model_fields) / sizeof(oneclass_model_fields[0]),
	.hint = oneclass_hint,
	/* scikit-learn's OneClassSVM(): tol 1e-3, no iteration limit but libsvm's */
	.default_tol = 1e-3,
	.solver_max_iter = true,
	.support_vectors = true,
	.task_default = true,
	.outputs = oneclass_outputs,
	.rows_workspace_doubles = oneclass_rows_doubles,
	.fit_rows = oneclass_fit_rows,
	.store_rows = oneclass_store_rows,
	.rows_gram_cols = true,
	.features_workspace_doubles = oneclass_features_doubles,
	.fit_features = oneclass_fit_features,
};
