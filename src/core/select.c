/*
 * select.c - model selection for kernel ridge and LMS.
 *
 * Closed form (ridge): for each gamma, one orthogonal reduction
 * K = H T H^T to a tridiagonal T (src/core/eigen.c, the first half of an
 * eigendecomposition, interruptible) gives every lambda at O(n^2) cost:
 *   c = (K + lambda I)^-1 y = H (T + lambda I)^-1 H^T y
 *   [(K + lambda I)^-1]_ii = h_i^T (T + lambda I)^-1 h_i, h_i row i of H
 *   leave-one-out residual e_i = c_i / [(K + lambda I)^-1]_ii
 *   GCV(lambda) = n ||c||^2 / (trace (K + lambda I)^-1)^2
 * with T + lambda I factored in O(n).  For a few lambdas a
 * Cholesky factorisation per lambda is cheaper: c by dpotrs, and
 * [(K + lambda I)^-1]_ii as the squared norm of column i of L^-1, found
 * panel by panel with dtrsm.  k-fold refits each candidate k times and
 * works for any method.
 */
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "metrics.h"
#include "select.h"

const char *
km_cv_name(km_cv cv)
{
	switch (cv)
	{
		case KM_CV_NONE:
			return "none";
		case KM_CV_LOO:
			return "loo";
		case KM_CV_GCV:
			return "gcv";
		case KM_CV_KFOLD:
			return "kfold";
	}
	return "unknown";
}

/*
 * Flops one uninterruptible piece may take (about 0.1 s on one loaded core), and
 * at most how many columns of L^-1 the Cholesky route finds per dtrsm call
 * (m^2 flops per column of an m-row panel).
 */
#define KM_PIECE_FLOPS 1e9
#define INVERSE_PANEL 512

static size_t
inverse_columns(size_t m)
{
	double		c = KM_PIECE_FLOPS / ((double) m * (double) m);

	if (c >= INVERSE_PANEL)
		return INVERSE_PANEL;
	return c < 4.0 ? 4 : (size_t) c;
}

/*
 * Rows of H whose tridiagonal solves go together in the closed form: the
 * solves run across the block, one BLAS vector operation per row of T.
 */
#define SOLVE_BLOCK 256

static size_t
solve_columns(size_t n)
{
	return n < SOLVE_BLOCK ? n : SOLVE_BLOCK;
}

/*
 * hd[i] := h_i^T (T + lambda I)^-1 h_i for the b rows h_i of H from row i0
 * (H n x n, column-major), T + lambda I = L D L^T as from dpttrf (D in pd, L's
 * subdiagonal in pe).  dpttrs does the same solves one right-hand side at a
 * time, each a chain of dependent operations; here B holds the block
 * transposed (b x n), so every step of the recurrences is a vector operation
 * across the b right-hand sides.
 */
static void
inverse_diagonal_block(const double *H, size_t n, size_t i0, size_t b,
					   const double *pd, const double *pe, double *B,
					   double *hd)
{
	for (size_t k = 0; k < n; k++)
		memcpy(B + k * b, H + i0 + k * n, b * sizeof(double));
	/* L z = h, then D w = z, then L^T x = w */
	for (size_t k = 1; k < n; k++)
		cblas_daxpy((int) b, -pe[k - 1], B + (k - 1) * b, 1, B + k * b, 1);
	for (size_t k = 0; k < n; k++)
		cblas_dscal((int) b, 1.0 / pd[k], B + k * b, 1);
	for (size_t k = n - 1; k-- > 0;)
		cblas_daxpy((int) b, -pe[k], B + (k + 1) * b, 1, B + k * b, 1);
	for (size_t i = 0; i < b; i++)
		hd[i] = 0.0;
	for (size_t k = 0; k < n; k++)
	{
		const double *hk = H + i0 + k * n;
		const double *xk = B + k * b;

		for (size_t i = 0; i < b; i++)
			hd[i] += hk[i] * xk[i];
	}
}

static bool
use_eigen(const km_select_params *p)
{
	return p->n_lambdas >= KM_EIGEN_MIN_LAMBDAS;
}

size_t
km_select_workspace_doubles(const km_select_params *p, size_t n, int d)
{
	size_t		L = (size_t) p->n_lambdas;

	if (n == 0 || n > ((size_t) 1 << 26))
		return 0;
	if (p->cv == KM_CV_KFOLD)
	{
		size_t		fit = km_fit_workspace_doubles(p->base.method, n);

		/* training rows, their transpose, y, alpha, fit workspace, fold scores */
		return fit == 0 ? 0 : 2 * n * (size_t) d + 3 * n + fit + (size_t) p->folds;
	}
	if (!use_eigen(p))
		/* K, norms, c, diagonal, one panel of L^-1 */
		return n * n + 3 * n + n * inverse_columns(n);
	/*
	 * K (then H^T), H; diag, sub, tau, u, norms, the two factors, ct;
	 * C and the diagonals (n x L each); a block of solves; the dlatrd panel
	 * or dormqr's workspace
	 */
	return 2 * n * n + 8 * n + 2 * n * L + n * solve_columns(n) +
		(n * KM_TRD_MAX_NB > km_back_transform_doubles(n) ?
		 n * KM_TRD_MAX_NB : km_back_transform_doubles(n));
}

/* Score one candidate from c = (K + lambda I)^-1 y and the diagonal of the inverse. */
static double
closed_form_score(km_cv cv, const double *c, const double *hdiag, size_t n,
				  double *residuals)
{
	double		sum = 0.0;

	if (cv == KM_CV_GCV)
	{
		double		trace = 0.0;

		for (size_t i = 0; i < n; i++)
		{
			sum += c[i] * c[i];
			trace += hdiag[i];
		}
		return (double) n * sum / (trace * trace);
	}
	for (size_t i = 0; i < n; i++)
	{
		double		e = c[i] / hdiag[i];

		if (residuals)
			residuals[i] = e;
		sum += e * e;
	}
	return sum / (double) n;
}

/* Score all lambdas of one gamma with a Cholesky factorisation each. */
static km_status
cholesky_gamma(const km_select_params *p, const km_kernel *kernel,
			   const double *X, size_t n, int d, const double *y,
			   km_candidate *cand, double *work, km_error *err,
			   km_interrupt_fn interrupt)
{
	double	   *K = work;
	double	   *norms = K + n * n;
	double	   *c = norms + n;
	double	   *hdiag = c + n;
	double	   *panel = hdiag + n;

	km_row_norms(kernel, X, n, d, norms);
	for (int l = 0; l < p->n_lambdas; l++)
	{
		double		lambda = p->lambdas[l];

		cand[l].gamma = kernel->gamma;
		cand[l].lambda = lambda;
		cand[l].score_std = 0.0;

		if (!km_gram_lower(kernel, X, n, d, norms, K, n, interrupt))
			return km_gram_overflow(kernel, K, n, n, err);
		for (size_t i = 0; i < n; i++)
			K[i + i * n] += lambda;
		if (km_cholesky(K, n, n, interrupt) != 0)
		{
			cand[l].score = NAN;
			continue;
		}
		memcpy(c, y, n * sizeof(double));
		LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, 1, K,
							(lapack_int) n, c, (lapack_int) n);

		/* column j of L^-1 solves L x = e_j and is zero above row j */
		for (size_t j0 = 0; j0 < n; j0 += inverse_columns(n - j0))
		{
			size_t		m = n - j0;
			size_t		jb = m < inverse_columns(m) ? m : inverse_columns(m);

			memset(panel, 0, m * jb * sizeof(double));
			for (size_t jj = 0; jj < jb; jj++)
				panel[jj + jj * m] = 1.0;
			cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
						CblasNonUnit, (int) m, (int) jb, 1.0, K + j0 + j0 * n,
						(int) n, panel, (int) m);
			for (size_t jj = 0; jj < jb; jj++)
				hdiag[j0 + jj] = cblas_ddot((int) m, panel + jj * m, 1,
											panel + jj * m, 1);
			km_check_interrupts(interrupt);
		}
		cand[l].score = closed_form_score(p->cv, c, hdiag, n,
										  p->loo_residuals ? p->loo_residuals + l * n : NULL);
	}
	return KM_OK;
}

/*
 * Score all lambdas of one gamma from the tridiagonal form of K.
 *
 * K = H T H^T with H orthogonal and T tridiagonal (km_tridiagonalize, the
 * first step of dsyevd; the eigenvectors of T are not needed, and dstedc,
 * which finds them, is a single LAPACK call of seconds):
 *   c = (K + lambda I)^-1 y = H (T + lambda I)^-1 H^T y
 *   [(K + lambda I)^-1]_ii = h_i^T (T + lambda I)^-1 h_i,  h_i row i of H
 * T + lambda I is factored in O(n) (dpttrf), and the n solves for the
 * diagonal go in blocks of rows of H, an interrupt check after each.
 */
static km_status
closed_form_gamma(const km_select_params *p, const km_kernel *kernel,
				  const double *X, size_t n, int d, const double *y,
				  km_candidate *cand, double *work, km_error *err,
				  km_interrupt_fn interrupt)
{
	size_t		L = (size_t) p->n_lambdas;
	size_t		bcols = solve_columns(n);
	double	   *A = work;		/* K, then its reflectors */
	double	   *H = A + n * n;
	double	   *diag = H + n * n;
	double	   *sub = diag + n;
	double	   *tau = sub + n;
	double	   *u = tau + n;
	double	   *norms = u + n;
	double	   *pd = norms + n;
	double	   *pe = pd + n;
	double	   *ct = pe + n;
	double	   *C = ct + n;
	double	   *hd = C + n * L;
	double	   *B = hd + n * L;
	double	   *scratch = B + n * bcols;	/* dlatrd panel, then dormqr's */

	km_row_norms(kernel, X, n, d, norms);
	if (!km_gram_lower(kernel, X, n, d, norms, A, n, interrupt))
		return km_gram_overflow(kernel, A, n, n, err);
	km_tridiagonalize(A, n, 0, diag, sub, tau, scratch, interrupt);

	/* H = Q I; the first touch of n^2 doubles is slow too: in pieces */
	for (size_t j = 0; j < n; j++)
	{
		memset(H + j * n, 0, n * sizeof(double));
		H[j + j * n] = 1.0;
		if (j % 1024 == 1023)
			km_check_interrupts(interrupt);
	}
	km_back_transform(A, n, tau, H, scratch, interrupt);
	/* u = H^T y */
	cblas_dgemv(CblasColMajor, CblasTrans, (int) n, (int) n, 1.0, H, (int) n,
				y, 1, 0.0, u, 1);

	for (size_t l = 0; l < L; l++)
	{
		double		lambda = p->lambdas[l];
		double	   *c = C + l * n;
		double	   *h = hd + l * n;

		cand[l].gamma = kernel->gamma;
		cand[l].lambda = lambda;
		cand[l].score_std = 0.0;
		for (size_t i = 0; i < n; i++)
			pd[i] = diag[i] + lambda;
		memcpy(pe, sub, (n - 1) * sizeof(double));
		/* K + lambda I must be positive definite to be solved */
		if (LAPACKE_dpttrf_work((lapack_int) n, pd, pe) != 0)
		{
			cand[l].score = NAN;
			continue;
		}
		memcpy(ct, u, n * sizeof(double));
		LAPACKE_dpttrs_work(LAPACK_COL_MAJOR, (lapack_int) n, 1, pd, pe, ct,
							(lapack_int) n);
		/* c = H ct */
		cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, H,
					(int) n, ct, 1, 0.0, c, 1);

		for (size_t i0 = 0; i0 < n; i0 += bcols)
		{
			size_t		ib = n - i0 < bcols ? n - i0 : bcols;

			inverse_diagonal_block(H, n, i0, ib, pd, pe, B, h + i0);
			km_check_interrupts(interrupt);
		}
		cand[l].score = closed_form_score(p->cv, c, h, n,
										  p->loo_residuals ? p->loo_residuals + l * n : NULL);
	}
	return KM_OK;
}

/* Score one candidate by k-fold cross-validation. */
static km_status
kfold_candidate(const km_select_params *p, const km_fit_params *fp,
				const double *X, size_t n, int d, const double *y,
				const int *fold, km_candidate *cand, double *work,
				km_error *err, km_interrupt_fn interrupt)
{
	double	   *Xtr = work;
	double	   *Xt = Xtr + n * (size_t) d;
	double	   *ytr = Xt + n * (size_t) d;
	double	   *alpha = ytr + n;
	double	   *row = alpha + n;
	double	   *fitwork = row + n;
	double	   *fold_mse = fitwork + km_fit_workspace_doubles(p->base.method, n);
	double		mean = 0.0;
	double		var = 0.0;

	for (int f = 0; f < p->folds; f++)
	{
		size_t		ntr = 0;
		km_metrics	fold_err;
		double		pending = 0.0;
		km_fit_result res;
		km_error	fit_err;
		km_status	st;

		km_metrics_init(&fold_err);
		for (size_t i = 0; i < n; i++)
			if (fold[i] != f)
			{
				memcpy(Xtr + ntr * d, X + i * d, d * sizeof(double));
				ytr[ntr++] = y[i];
			}
		st = km_fit(fp, Xtr, ntr, d, ytr, alpha, fitwork, &res, &fit_err,
					interrupt);
		if (st == KM_ERR_NOT_PD || st == KM_ERR_DIVERGED || st == KM_ERR_INACCURATE)
		{
			/* this candidate cannot be fitted: it loses, the search goes on */
			cand->score = NAN;
			cand->score_std = 0.0;
			return KM_OK;
		}
		if (st != KM_OK)
		{
			*err = fit_err;
			return st;
		}

		/* fitwork's first ntr doubles are scratch again: reuse for norms */
		km_row_norms(&fp->kernel, Xtr, ntr, d, fitwork);
		km_transpose(Xtr, ntr, d, Xt);
		for (size_t i = 0; i < n; i++)
			if (fold[i] == f)
			{
				const double *x = X + i * d;
				double		pred = km_kernel_row_dot(&fp->kernel, Xt, ntr, d,
													 fitwork, x,
													 km_vector_norm(&fp->kernel, x, d),
													 alpha, row);

				km_metrics_add(&fold_err, pred, y[i]);
				/* each prediction is ntr x d: check by work, not per fold */
				pending += (double) ntr * (double) d;
				if (pending >= KM_PIECE_FLOPS / 10.0)
				{
					km_check_interrupts(interrupt);
					pending = 0.0;
				}
			}
		fold_mse[f] = fold_err.n > 0 ? km_metrics_mse(&fold_err) : 0.0;
		km_check_interrupts(interrupt);
	}
	for (int f = 0; f < p->folds; f++)
		mean += fold_mse[f];
	mean /= p->folds;
	for (int f = 0; f < p->folds; f++)
		var += (fold_mse[f] - mean) * (fold_mse[f] - mean);
	cand->score = mean;
	cand->score_std = sqrt(var / p->folds);
	return KM_OK;
}

km_status
km_select(const km_select_params *p, const double *X, size_t n, int d,
		  const double *y, const int *fold, km_candidate *cand, int *best,
		  double *work, km_error *err, km_interrupt_fn interrupt)
{
	int			L = p->n_lambdas;
	const km_method_ops *ops = km_method_get(p->base.method);

	if (ops == NULL)
		return km_fail(err, KM_ERR_INVALID, "unknown training method",
					   "Method %d is not a method of this build of kernel_ml.",
					   (int) p->base.method);
	if (p->cv == KM_CV_NONE || !(ops->routes & KM_ROUTE(p->cv)))
		return km_fail(err, KM_ERR_INVALID, "selection route does not apply to the method",
					   "Method \"%s\" does not support cv \"%s\".",
					   ops->name, km_cv_name(p->cv));
	if (p->cv == KM_CV_KFOLD && (p->folds < 2 || (size_t) p->folds > n))
		return km_fail(err, KM_ERR_INVALID, "too few rows for the number of folds",
					   "Cross-validation with %d folds needs at least %d rows; there are %zu.",
					   p->folds, p->folds, n);
	if (p->cv == KM_CV_KFOLD)
		for (size_t i = 0; i < n; i++)
			if (fold == NULL || fold[i] < 0 || fold[i] >= p->folds)
				return km_fail(err, KM_ERR_INVALID, "invalid fold assignment",
							   "Row %zu has no fold from 0 to %d.", i, p->folds - 1);

	for (int g = 0; g < p->n_gammas; g++)
	{
		km_kernel	kernel = p->base.kernel;
		km_status	st = KM_OK;

		kernel.gamma = p->gammas[g];
		if (p->cv == KM_CV_KFOLD)
		{
			for (int l = 0; l < L && st == KM_OK; l++)
			{
				km_fit_params fp = p->base;
				km_candidate *c = &cand[g * L + l];

				fp.kernel = kernel;
				fp.lambda = p->lambdas[l];
				c->gamma = kernel.gamma;
				c->lambda = fp.lambda;
				st = kfold_candidate(p, &fp, X, n, d, y, fold, c, work, err,
									 interrupt);
			}
		}
		else if (use_eigen(p))
			st = closed_form_gamma(p, &kernel, X, n, d, y, &cand[g * L], work,
								   err, interrupt);
		else
			st = cholesky_gamma(p, &kernel, X, n, d, y, &cand[g * L], work,
								err, interrupt);
		if (st != KM_OK)
			return st;
	}

	*best = -1;
	for (int i = 0; i < p->n_gammas * L; i++)
	{
		const km_candidate *c = &cand[i];
		const km_candidate *b = *best >= 0 ? &cand[*best] : NULL;

		if (!isfinite(c->score))
			continue;
		if (b == NULL || c->score < b->score ||
			(c->score == b->score &&
			 (c->lambda > b->lambda ||
			  (c->lambda == b->lambda && c->gamma < b->gamma))))
			*best = i;
	}
	if (*best < 0)
	{
		km_fail(err, KM_ERR_NOT_PD, "no candidate could be fitted",
				"None of the %d (gamma, lambda) candidates gives a positive definite K + lambda I.",
				p->n_gammas * L);
		km_method_fill_hint(p->base.method, err);
		return KM_ERR_NOT_PD;
	}
	return KM_OK;
}
