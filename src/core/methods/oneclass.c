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

#include "oneclass.h"

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
					   "The problem has %zu rows.", n);
	if (!(pr->nu > 0 && pr->nu <= 1))
		return km_fail(err, KM_ERR_INVALID, "oneclass nu must be in (0, 1]",
					   "nu is %g.", pr->nu);
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
