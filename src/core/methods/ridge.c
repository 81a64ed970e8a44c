/*
 * ridge.c - kernel ridge regression: alpha = (K + lambda I)^-1 y by
 * blocked Cholesky, with one jittered retry, and a check of the residual
 * of the equations solved (core, no PostgreSQL headers).
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "model_types.h"
#include "options_core.h"
#include "progress.h"
#include "solve.h"

/*
 * What ridge returns besides the shared results (km_fit_result's
 * method_result): its Gaussian-process values (gp.h), from the factor
 * the fit has, kept in the model's GP section so that kernel_model_info
 * need not factor K + lambda I again.
 */
typedef struct ridge_result
{
	bool		has_gp;			/* finite, so kept */
	double		amplitude;		/* alpha'(K + shift I) alpha / n = ||L' alpha||^2 / n */
	double		logdet_half;	/* sum_i log L_ii */
} ridge_result;

KM_STATIC_ASSERT(sizeof(ridge_result) <= KM_METHOD_BLOB_SIZE, ridge_result);

static void
add_to_diagonal(double *K, size_t n, size_t ld, double value)
{
	for (size_t i = 0; i < n; i++)
		K[i + i * ld] += value;
}

/*
 * Build K + shift I (lower triangle), keeping the diagonal of K in diag
 * (n doubles): the factor overwrites it, and the 1-norm of K + shift I
 * (for the condition estimate) is taken later, in the residual pass.
 */
static km_status
shifted_gram(const km_fit_params *p, const double *X, size_t n, int d,
			 const double *norms, double *K, double shift, double *diag,
			 km_error *err, km_interrupt_fn interrupt)
{
	if (!km_gram_lower(&p->kernel, X, n, d, norms, K, n, interrupt))
		return km_gram_overflow(&p->kernel, K, n, n, err);
	for (size_t i = 0; i < n; i++)
		diag[i] = K[i + i * n];
	add_to_diagonal(K, n, n, shift);
	return KM_OK;
}

/*
 * Build K + lambda I and factor it in place (lower Cholesky); if that
 * fails, rebuild it with jitter added (res->jitter) and factor once more.
 * *shift is the diagonal shift of the factor; diag receives K's diagonal.
 */
static km_status
factor_ridge_matrix(const km_fit_params *p, const double *X, size_t n, int d,
					const double *norms, double *K, double *diag,
					double *shift, km_fit_result *res,
					km_error *err, km_interrupt_fn interrupt)
{
	double		mean_diag = 0.0;
	size_t		minor;
	km_status	st;

	*shift = p->lambda;
	km_progress_phase("ridge: kernel matrix of %zu rows", n);
	st = shifted_gram(p, X, n, d, norms, K, *shift, diag, err, interrupt);
	if (st != KM_OK)
		return st;
	for (size_t i = 0; i < n; i++)
		mean_diag += diag[i];
	mean_diag /= (double) n;

	km_progress_phase("ridge: Cholesky factorization of %zu x %zu", n, n);
	minor = km_cholesky(K, n, n, interrupt);
	if (minor == 0)
		return KM_OK;

	/* The factor overwrote K: rebuild it rather than keep a second copy. */
	res->jitter = fmax(KM_JITTER_REL * fabs(mean_diag), KM_JITTER_ABS);
	*shift = p->lambda + res->jitter;
	km_progress_phase("ridge: kernel matrix of %zu rows again, jitter %g", n, res->jitter);
	st = shifted_gram(p, X, n, d, norms, K, *shift, diag, err, interrupt);
	if (st != KM_OK)
		return st;
	km_progress_phase("ridge: Cholesky factorization of %zu x %zu with jitter", n, n);
	minor = km_cholesky(K, n, n, interrupt);
	if (minor != 0)
		return km_fail(err, KM_ERR_NOT_PD,
					   "kernel matrix is not positive definite",
					   "The Cholesky factorisation of K + lambda I failed at row %zu of %zu with lambda = %g, and again with jitter %g added.",
					   minor, n, p->lambda, res->jitter);
	return KM_OK;
}

/*
 * The 1-norm of K + shift I from the column sums of |K| (colabs) and K's
 * diagonal; KM_ERR_OVERFLOW if it is out of range.
 */
static km_status
shifted_norm(const km_fit_params *p, const double *colabs, const double *diag,
			 size_t n, double shift, double *anorm, km_error *err)
{
	double		top = 0.0;

	for (size_t j = 0; j < n; j++)
		top = fmax(top, colabs[j] - fabs(diag[j]) + fabs(diag[j] + shift));
	*anorm = top;
	if (!isfinite(top))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel matrix norm is out of range for type double precision",
					   "A column sum of |K + lambda I| with lambda = %g and the %s kernel overflowed.",
					   shift, km_kernel_name(p->kernel.type));
	return KM_OK;
}

/*
 * The real training error of the coefficients returned, and the residual
 * of the equations they were meant to solve: in exact arithmetic
 * y - K alpha = shift alpha, in floating point only when the solve was
 * accurate.  A relative residual above KM_MAX_RELATIVE_RESIDUAL is
 * KM_ERR_INACCURATE, with the condition estimate (dpocon on the factor K,
 * with the 1-norm taken in the same pass as K alpha) in its detail.
 * work: the ridge workspace after the matrix, K's diagonal at work + 2n.
 */
static km_status
check_ridge_accuracy(const km_fit_params *p, const double *X, size_t n, int d,
					 const double *norms, const double *y, const double *alpha,
					 const double *K, double shift, double *work,
					 km_fit_result *res, km_error *err,
					 km_interrupt_fn interrupt)
{
	double	   *u = work;		/* K alpha, then the training residual */
	double	   *r = u + n;		/* column sums of |K|, then the residual of
								 * the ridge equations */
	double	   *lwork = r + n;	/* K's diagonal, then 3n for dpocon */
	lapack_int *iwork = (lapack_int *) (lwork + 3 * n);	/* n */
	double	   *panel = lwork + 4 * n;
	double		ynorm;
	double		relres;
	double		anorm;
	double		rcond = 0.0;
	km_status	st;

	if (!km_gram_times_norm(&p->kernel, X, n, d, norms, alpha, u, r, panel,
							interrupt))
		return km_fail(err, KM_ERR_OVERFLOW,
					   "kernel matrix entry is out of range for type double precision",
					   "Rebuilding the %s kernel matrix for the training residual overflowed.",
					   km_kernel_name(p->kernel.type));
	st = shifted_norm(p, r, lwork, n, shift, &anorm, err);
	if (st != KM_OK)
		return st;
	ynorm = cblas_dnrm2((int) n, y, 1);
	if (km_all_finite(alpha, n))
	{
		for (size_t i = 0; i < n; i++)
		{
			u[i] = y[i] - u[i];
			r[i] = u[i] - shift * alpha[i];
		}
		res->train_rmse = cblas_dnrm2((int) n, u, 1) / sqrt((double) n);
		relres = cblas_dnrm2((int) n, r, 1);
		relres = ynorm > 0.0 ? relres / ynorm : (relres > 0.0 ? HUGE_VAL : 0.0);
	}
	else
		res->train_rmse = relres = HUGE_VAL;

	res->relative_residual = relres;
	if (relres <= KM_MAX_RELATIVE_RESIDUAL && isfinite(res->train_rmse))
		return KM_OK;
	if (LAPACKE_dpocon_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, K,
							(lapack_int) n, anorm, &rcond, lwork, iwork) != 0)
		rcond = NAN;
	return km_fail(err, KM_ERR_INACCURATE,
				   "kernel ridge solution is not accurate",
				   "The coefficients leave a relative residual ||y - (K + lambda I) alpha|| / ||y|| of %.3g with lambda = %g (at most %g is accepted); the reciprocal condition number of K + lambda I is about %.3g (1-norm %.3g).",
				   relres, shift, KM_MAX_RELATIVE_RESIDUAL, rcond, anorm);
}

/*
 * The amplitude and half log determinant of gp.h from the factor L (lower,
 * in K) and alpha, exactly as km_gp_prepare computes them from a model's
 * rows (the same factor, the same operations: the same bits); scratch: n
 * doubles.  Not kept when not finite (kernel_model_info then computes them,
 * and fails, as for a model without them).
 */
static void
gp_values(const double *L, size_t n, const double *alpha, double *scratch,
		  km_fit_result *res)
{
	ridge_result *rr = KM_METHOD_BLOB(&res->method_result, ridge_result);
	double		quad;
	double		logdet_half = 0.0;

	memcpy(scratch, alpha, n * sizeof(double));
	cblas_dtrmv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit,
				(int) n, L, (int) n, scratch, 1);
	quad = cblas_ddot((int) n, scratch, 1, scratch, 1);
	for (size_t i = 0; i < n; i++)
		logdet_half += log(L[i + i * n]);
	rr->amplitude = n > 0 ? quad / (double) n : 0.0;
	rr->logdet_half = logdet_half;
	rr->has_gp = isfinite(rr->amplitude) && rr->amplitude >= 0.0 &&
		isfinite(logdet_half);
}

static km_status
ridge_fit(const km_fit_params *p, const double *X, size_t n, int d,
		  const double *y, double *alpha, double *K, const double *norms,
		  double *work, km_fit_result *res, km_error *err,
		  km_interrupt_fn interrupt)
{
	double	   *diag = work + 2 * n;	/* after u and r */
	double		shift;
	km_status	st;

	st = factor_ridge_matrix(p, X, n, d, norms, K, diag, &shift, res, err,
							 interrupt);
	if (st != KM_OK)
		return st;

	memcpy(alpha, y, n * sizeof(double));
	LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, 1, K,
						(lapack_int) n, alpha, (lapack_int) n);
	res->converged = true;
	gp_values(K, n, alpha, work, res);

	km_progress_phase("ridge: residual check of %zu rows", n);
	return check_ridge_accuracy(p, X, n, d, norms, y, alpha, K, shift, work,
								res, err, interrupt);
}

static size_t
ridge_workspace_doubles(size_t n)
{
	/* u, r, 3n for dpocon, n ints for dpocon, one block of km_gram_times */
	return 6 * n + (size_t) KM_TIMES_COLS * KM_TIMES_ROWS;
}

/* m arrives zeroed (the common fields set): the fields ridge has a value for */
static void
ridge_store(const km_fit_params *p, const km_fit_result *res, km_model *m)
{
	const ridge_result *rr = KM_METHOD_BLOB_CONST(&res->method_result, ridge_result);

	m->lambda = p->lambda;
	m->jitter = res->jitter;
	m->converged = true;
	/* an exact fit's GP values (the GP section); an approximate one's are 0 */
	m->has_gp = rr->has_gp;
	m->gp_amplitude = rr->amplitude;
	m->gp_logdet_half = rr->logdet_half;
}

static const char *
ridge_hint(km_status status)
{
	return km_method_hint(status, NULL,
						  "Raise lambda, use a smaller degree or gamma, or standardize the features (\"standardize\": true).");
}

static const km_field ridge_fields[] = {
	{"lambda", KM_FIELD_F64, offsetof(km_model, lambda), KM_RULE_NONNEG, 0},
	{"jitter", KM_FIELD_F64, offsetof(km_model, jitter), KM_RULE_NONNEG, 0},
};

const km_method_ops km_ridge_ops = {
	.id = KM_METHOD_RIDGE,
	.name = "ridge",
	.task = KM_TASK_REGRESSION,
	.summary = "solves in closed form",
	.options = 0,
	.routes = KM_ROUTE(KM_CV_LOO) | KM_ROUTE(KM_CV_GCV) | KM_ROUTE(KM_CV_KFOLD) |
	KM_ROUTE(KM_CV_EVIDENCE),
	.default_route = KM_CV_LOO,
	.default_folds = 0,
	.workspace_doubles = ridge_workspace_doubles,
	.fit = ridge_fit,
	.store = ridge_store,
	.fields = ridge_fields,
	.n_fields = sizeof(ridge_fields) / sizeof(ridge_fields[0]),
	.hint = ridge_hint,
	.task_default = true,
	.approx_sums = true,
	.gp_reading = true,
};
