/*
 * select.c - model selection for kernel ridge and LMS.
 *
 * Closed form (ridge): for each gamma, one orthogonal reduction
 * K = H T H^T to a tridiagonal T (src/core/base/eigen.c, the first half of an
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
 *
 * Both are routes of the one grid loop (km_grid_search, grid.c, with the
 * tie rule between candidates), which the classifiers' selections, exact
 * (classify_fit.c) and approximate (pipeline_approx_classify.c), the
 * approximate svr's k-fold (pipeline_approx.c) and approximate ridge's
 * GCV (approx.c) drive too.  Also the defaults that selection shares:
 * stratified folds for classifiers, and the default gamma (kernlab's
 * sigest).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "metrics.h"
#include "progress.h"
#include "select.h"

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
 * Doubles of the largest panel of L^-1 for n rows: the panels shrink in
 * rows but widen as they do, so the largest is not the first.  m rows take
 * m * inverse_columns(m) doubles: INVERSE_PANEL m up to m = cap (where
 * KM_PIECE_FLOPS / m^2 falls below INVERSE_PANEL), then at most
 * max(KM_PIECE_FLOPS / m, 4 m) <= max(cap INVERSE_PANEL, 4 n).
 */
static size_t
inverse_panel_doubles(size_t n)
{
	size_t		cap = (size_t) sqrt(KM_PIECE_FLOPS / INVERSE_PANEL) + 1;
	size_t		first = (n < cap ? n : cap) * INVERSE_PANEL;

	return first > 4 * n ? first : 4 * n;
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
		/* K, norms, c, diagonal, the largest panel of L^-1 */
		return n * n + 3 * n + inverse_panel_doubles(n);
	/*
	 * K (then H^T), H; diag, sub, tau, u, norms, the two factors, ct;
	 * C and the diagonals (n x L each); a block of solves; the dlatrd panel
	 * or dormqr's workspace
	 */
	return 2 * n * n + 8 * n + 2 * n * L + n * solve_columns(n) +
		(n * KM_TRD_MAX_NB > km_back_transform_doubles(n) ?
		 n * KM_TRD_MAX_NB : km_back_transform_doubles(n));
}

/*
 * "cv": "evidence": minus the log marginal likelihood of the GP reading of
 * ridge (metrics.h), NaN (unsolvable) when it is not finite: a constant
 * target has no likelihood maximum.
 */
static double
evidence_score(double quad, double logdet_half, size_t n)
{
	double		v = km_neg_log_evidence(quad, logdet_half, n);

	return isfinite(v) ? v : NAN;
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

/* The Cholesky route's workspace, in the order km_select_workspace_doubles counts. */
typedef struct cholesky_work
{
	double	   *K;				/* K + lambda I, then its factor L */
	double	   *norms;
	double	   *c;				/* (K + lambda I)^-1 y */
	double	   *hdiag;			/* diagonal of (K + lambda I)^-1 */
	double	   *panel;			/* columns of L^-1 */
} cholesky_work;

static void
cholesky_layout(cholesky_work *w, double *work, size_t n)
{
	w->K = work;
	w->norms = w->K + n * n;
	w->c = w->norms + n;
	w->hdiag = w->c + n;
	w->panel = w->hdiag + n;
}

/* Score lambda number l with a Cholesky factorisation of K + lambda I. */
static km_status
cholesky_lambda(const km_select_params *p, size_t l, const km_kernel *kernel,
				const double *X, size_t n, int d, const double *y,
				const cholesky_work *w, km_candidate *cand, km_error *err,
				km_interrupt_fn interrupt)
{
	double		lambda = p->lambdas[l];
	double	   *K = w->K;

	cand->score_std = 0.0;
	if (!km_gram_lower(kernel, X, n, d, w->norms, K, n, interrupt))
		return km_gram_overflow(kernel, K, n, n, err);
	for (size_t i = 0; i < n; i++)
		K[i + i * n] += lambda;
	if (km_cholesky(K, n, n, interrupt) != 0)
	{
		cand->score = NAN;
		return KM_OK;
	}
	memcpy(w->c, y, n * sizeof(double));
	LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', (lapack_int) n, 1, K,
						(lapack_int) n, w->c, (lapack_int) n);
	if (p->cv == KM_CV_EVIDENCE)
	{
		/* y'(K + lambda I)^-1 y and sum_i log L_ii: no inverse diagonal */
		double		logdet_half = 0.0;

		for (size_t i = 0; i < n; i++)
			logdet_half += log(K[i + i * n]);
		cand->score = evidence_score(cblas_ddot((int) n, y, 1, w->c, 1),
									 logdet_half, n);
		return KM_OK;
	}

	/* column j of L^-1 solves L x = e_j and is zero above row j */
	km_progress_work_begin();
	for (size_t j0 = 0; j0 < n; j0 += inverse_columns(n - j0))
	{
		size_t		m = n - j0;
		size_t		jb = m < inverse_columns(m) ? m : inverse_columns(m);
		double	   *panel = w->panel;

		memset(panel, 0, m * jb * sizeof(double));
		for (size_t jj = 0; jj < jb; jj++)
			panel[jj + jj * m] = 1.0;
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) m, (int) jb, 1.0, K + j0 + j0 * n,
					(int) n, panel, (int) m);
		for (size_t jj = 0; jj < jb; jj++)
			w->hdiag[j0 + jj] = cblas_ddot((int) m, panel + jj * m, 1,
										   panel + jj * m, 1);
		km_check_interrupts(interrupt);
		/* a panel of m rows costs about m^2: left, the cube of the rest */
		km_progress_fraction(1.0 - pow((double) (m - jb) / (double) n, 3.0),
							 "leverages: columns %zu of %zu", j0 + jb, n);
	}
	cand->score = closed_form_score(p->cv, w->c, w->hdiag, n,
									p->loo_residuals ? p->loo_residuals + l * n : NULL);
	return KM_OK;
}

/*
 * The tridiagonal form of K, for scoring all lambdas of one gamma:
 *
 * K = H T H^T with H orthogonal and T tridiagonal (km_tridiagonalize, the
 * first step of dsyevd; the eigenvectors of T are not needed, and dstedc,
 * which finds them, is a single LAPACK call of seconds):
 *   c = (K + lambda I)^-1 y = H (T + lambda I)^-1 H^T y
 *   [(K + lambda I)^-1]_ii = h_i^T (T + lambda I)^-1 h_i,  h_i row i of H
 * T + lambda I is factored in O(n) (dpttrf), and the n solves for the
 * diagonal go in blocks of rows of H, an interrupt check after each.
 */
typedef struct tridiagonal_work
{
	double	   *A;				/* K, then its reflectors */
	double	   *H;
	double	   *diag;			/* T */
	double	   *sub;
	double	   *tau;
	double	   *u;				/* H^T y */
	double	   *norms;
	double	   *pd;				/* T + lambda I, factored */
	double	   *pe;
	double	   *ct;
	double	   *C;				/* c, a column per lambda */
	double	   *hd;				/* diagonal of (K + lambda I)^-1, per lambda */
	double	   *B;
	double	   *scratch;		/* dlatrd panel, then dormqr's */
	size_t		bcols;
} tridiagonal_work;

/* The layout that km_select_workspace_doubles counts. */
static void
tridiagonal_layout(tridiagonal_work *w, double *work, size_t n, size_t L)
{
	w->bcols = solve_columns(n);
	w->A = work;
	w->H = w->A + n * n;
	w->diag = w->H + n * n;
	w->sub = w->diag + n;
	w->tau = w->sub + n;
	w->u = w->tau + n;
	w->norms = w->u + n;
	w->pd = w->norms + n;
	w->pe = w->pd + n;
	w->ct = w->pe + n;
	w->C = w->ct + n;
	w->hd = w->C + n * L;
	w->B = w->hd + n * L;
	w->scratch = w->B + n * w->bcols;
}

/* K = H T H^T, then u = H^T y. */
static km_status
tridiagonal_form(const km_kernel *kernel, const double *X, size_t n, int d,
				 const double *y, tridiagonal_work *w, km_error *err,
				 km_interrupt_fn interrupt)
{
	km_row_norms(kernel, X, n, d, w->norms);
	km_progress_phase("kernel matrix of %zu rows", n);
	if (!km_gram_lower(kernel, X, n, d, w->norms, w->A, n, interrupt))
		return km_gram_overflow(kernel, w->A, n, n, err);
	km_progress_phase("tridiagonal reduction of %zu x %zu", n, n);
	km_tridiagonalize(w->A, n, 0, w->diag, w->sub, w->tau, w->scratch, interrupt);

	/* H = Q I; the first touch of n^2 doubles is slow too: in pieces */
	for (size_t j = 0; j < n; j++)
	{
		memset(w->H + j * n, 0, n * sizeof(double));
		w->H[j + j * n] = 1.0;
		if (j % 1024 == 1023)
			km_check_interrupts(interrupt);
	}
	km_progress_phase("back-transformation of %zu x %zu", n, n);
	km_back_transform(w->A, n, w->tau, w->H, w->scratch, interrupt);
	cblas_dgemv(CblasColMajor, CblasTrans, (int) n, (int) n, 1.0, w->H, (int) n,
				y, 1, 0.0, w->u, 1);
	return KM_OK;
}

/* Score lambda number l from the tridiagonal form. */
static void
tridiagonal_lambda(const km_select_params *p, size_t l, size_t n,
				   const tridiagonal_work *w, km_candidate *cand,
				   km_interrupt_fn interrupt)
{
	double		lambda = p->lambdas[l];
	double	   *c = w->C + l * n;
	double	   *h = w->hd + l * n;

	cand->score_std = 0.0;
	for (size_t i = 0; i < n; i++)
		w->pd[i] = w->diag[i] + lambda;
	memcpy(w->pe, w->sub, (n - 1) * sizeof(double));
	/* K + lambda I must be positive definite to be solved */
	if (LAPACKE_dpttrf_work((lapack_int) n, w->pd, w->pe) != 0)
	{
		cand->score = NAN;
		return;
	}
	memcpy(w->ct, w->u, n * sizeof(double));
	LAPACKE_dpttrs_work(LAPACK_COL_MAJOR, (lapack_int) n, 1, w->pd, w->pe, w->ct,
						(lapack_int) n);
	if (p->cv == KM_CV_EVIDENCE)
	{
		/*
		 * y'(K + lambda I)^-1 y = u'(T + lambda I)^-1 u, and det(K + lambda
		 * I) = det(T + lambda I) = prod d_i of its L D L^T
		 */
		double		logdet_half = 0.0;

		for (size_t i = 0; i < n; i++)
			logdet_half += 0.5 * log(w->pd[i]);
		cand->score = evidence_score(cblas_ddot((int) n, w->u, 1, w->ct, 1),
									 logdet_half, n);
		return;
	}
	/* c = H ct */
	cblas_dgemv(CblasColMajor, CblasNoTrans, (int) n, (int) n, 1.0, w->H,
				(int) n, w->ct, 1, 0.0, c, 1);

	for (size_t i0 = 0; i0 < n; i0 += w->bcols)
	{
		size_t		ib = n - i0 < w->bcols ? n - i0 : w->bcols;

		inverse_diagonal_block(w->H, n, i0, ib, w->pd, w->pe, w->B, h + i0);
		km_check_interrupts(interrupt);
	}
	cand->score = closed_form_score(p->cv, c, h, n,
									p->loo_residuals ? p->loo_residuals + l * n : NULL);
}

/*
 * What the routes of km_select share: the data, the workspace and the
 * kernel of the current gamma; the closed form's layout of the workspace.
 */
typedef struct select_route
{
	const km_select_params *p;
	const double *X;
	size_t		n;
	int			d;
	const double *y;
	const int  *fold;
	double	   *work;
	km_interrupt_fn interrupt;
	km_kernel	kernel;
	tridiagonal_work tw;
	cholesky_work cw;
} select_route;

/*
 * The closed form's setup for a gamma: the tridiagonal form of K
 * (use_eigen), else the row norms for a Cholesky factorisation per lambda.
 */
static km_status
closed_form_gamma(void *arg, int g, double gamma, km_error *err)
{
	select_route *r = arg;

	r->kernel.gamma = gamma;
	if (use_eigen(r->p))
	{
		tridiagonal_layout(&r->tw, r->work, r->n, (size_t) r->p->n_lambdas);
		return tridiagonal_form(&r->kernel, r->X, r->n, r->d, r->y, &r->tw,
								err, r->interrupt);
	}
	cholesky_layout(&r->cw, r->work, r->n);
	km_row_norms(&r->kernel, r->X, r->n, r->d, r->cw.norms);
	return KM_OK;
}

/* Score all lambdas of the current gamma by LOO or GCV in closed form. */
static km_status
closed_form_column(void *arg, int g, km_candidate *cand, km_error *err)
{
	select_route *r = arg;
	const km_select_params *p = r->p;
	km_status	st = KM_OK;

	for (size_t l = 0; l < (size_t) p->n_lambdas && st == KM_OK; l++)
	{
		km_progress_phase("lambda %zu of %d (%g)", l + 1, p->n_lambdas, p->lambdas[l]);
		if (use_eigen(p))
			tridiagonal_lambda(p, l, r->n, &r->tw, &cand[l], r->interrupt);
		else
			st = cholesky_lambda(p, l, &r->kernel, r->X, r->n, r->d, r->y,
								 &r->cw, &cand[l], err, r->interrupt);
	}
	return st;
}

/* k-fold's workspace, in the order km_select_workspace_doubles counts. */
typedef struct kfold_work
{
	double	   *Xtr;			/* the training rows of a fold */
	double	   *Xt;				/* Xtr transposed */
	double	   *ytr;
	double	   *alpha;
	double	   *row;
	double	   *fitwork;		/* km_fit's, then the training rows' norms */
	double	   *fold_mse;
} kfold_work;

static void
kfold_layout(kfold_work *w, double *work, size_t n, int d, km_method method)
{
	w->Xtr = work;
	w->Xt = w->Xtr + n * (size_t) d;
	w->ytr = w->Xt + n * (size_t) d;
	w->alpha = w->ytr + n;
	w->row = w->alpha + n;
	w->fitwork = w->row + n;
	w->fold_mse = w->fitwork + km_fit_workspace_doubles(method, n);
}

/* The rows outside fold f into w->Xtr and w->ytr; how many. */
static size_t
training_rows(const double *X, size_t n, int d, const double *y,
			  const int *fold, int f, kfold_work *w)
{
	size_t		ntr = 0;

	for (size_t i = 0; i < n; i++)
		if (fold[i] != f)
		{
			memcpy(w->Xtr + ntr * d, X + i * d, d * sizeof(double));
			w->ytr[ntr++] = y[i];
		}
	return ntr;
}

/*
 * The mean squared error on fold f of the model fitted on the ntr others
 * (b: the fit's own intercept, km_fit_result.intercept).
 */
static double
held_out_mse(const km_fit_params *fp, const double *X, size_t n, int d,
			 const double *y, const int *fold, int f, size_t ntr, double b,
			 kfold_work *w, km_interrupt_fn interrupt)
{
	km_metrics	fold_err;
	double		pending = 0.0;

	km_metrics_init(&fold_err);
	/* fitwork's first ntr doubles are scratch again: reuse for norms */
	km_row_norms(&fp->kernel, w->Xtr, ntr, d, w->fitwork);
	km_transpose(w->Xtr, ntr, d, w->Xt);
	for (size_t i = 0; i < n; i++)
		if (fold[i] == f)
		{
			const double *x = X + i * d;
			double		pred = km_kernel_row_dot(&fp->kernel, w->Xt, ntr, d,
												 w->fitwork, x,
												 km_vector_norm(&fp->kernel, x, d),
												 w->alpha, w->row) + b;

			km_metrics_add(&fold_err, pred, y[i]);
			/* each prediction is ntr x d: check by work, not per fold */
			pending += (double) ntr * (double) d;
			if (pending >= KM_PIECE_FLOPS / 10.0)
			{
				km_check_interrupts(interrupt);
				pending = 0.0;
			}
		}
	/* kfold_candidate refuses an empty fold: never score one as 0 */
	return fold_err.n > 0 ? km_metrics_mse(&fold_err) : NAN;
}

/* Score one candidate by k-fold cross-validation. */
static km_status
kfold_candidate(const km_select_params *p, const km_fit_params *fp,
				const double *X, size_t n, int d, const double *y,
				const int *fold, int index, km_candidate *cand, double *work,
				km_error *err, km_interrupt_fn interrupt)
{
	kfold_work	w;
	double		mean = 0.0;
	double		var = 0.0;

	kfold_layout(&w, work, n, d, p->base.method);
	for (int f = 0; f < p->folds; f++)
	{
		size_t		ntr = training_rows(X, n, d, y, fold, f, &w);
		km_fit_result res;
		km_error	fit_err;
		km_status	st;

		if (ntr == n)
			return km_fail(err, KM_ERR_INVALID, "fold has no rows to score",
						   "Fold %d of %d has none of the %zu rows.", f + 1, p->folds, n);
		km_grid_fold_stage(index, p->n_gammas * p->n_lambdas, cand, f, p->folds);

		st = km_fit(fp, w.Xtr, ntr, d, w.ytr, w.alpha, w.fitwork, &res, &fit_err,
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
		w.fold_mse[f] = held_out_mse(fp, X, n, d, y, fold, f, ntr, res.intercept,
									 &w, interrupt);
		km_check_interrupts(interrupt);
	}
	for (int f = 0; f < p->folds; f++)
		mean += w.fold_mse[f];
	mean /= p->folds;
	for (int f = 0; f < p->folds; f++)
		var += (w.fold_mse[f] - mean) * (w.fold_mse[f] - mean);
	cand->score = mean;
	cand->score_std = sqrt(var / p->folds);
	return KM_OK;
}

/* The method takes the route, and k-fold has its folds. */
static km_status
check_select(const km_select_params *p, size_t n, const int *fold, km_error *err)
{
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
	return KM_OK;
}

/* Score one candidate of the grid by k-fold. */
static km_status
kfold_score(void *arg, int index, km_candidate *cand, km_error *err)
{
	select_route *r = arg;
	km_fit_params fp = r->p->base;

	fp.kernel.gamma = cand->gamma;
	fp.lambda = cand->lambda;
	return kfold_candidate(r->p, &fp, r->X, r->n, r->d, r->y, r->fold, index,
						   cand, r->work, err, r->interrupt);
}

/* km_select's error when no candidate scores. */
static km_status
select_none(void *arg, int count, km_error *err)
{
	select_route *r = arg;

	km_fail(err, KM_ERR_NOT_PD, "no candidate could be fitted",
			"None of the %d (gamma, lambda) candidates gives a positive definite K + lambda I.",
			count);
	km_method_fill_hint(r->p->base.method, err);
	return KM_ERR_NOT_PD;
}

void
km_grid_fold_stage(int index, int count, const km_candidate *cand, int fold,
				   int folds)
{
	km_progress_stage("candidate %d of %d (gamma %g, lambda %g), fold %d of %d",
					  index + 1, count, cand->gamma, cand->lambda, fold + 1,
					  folds);
}

km_status
km_select(const km_select_params *p, const double *X, size_t n, int d,
		  const double *y, const int *fold, km_candidate *cand, int *best,
		  double *work, km_error *err, km_interrupt_fn interrupt)
{
	select_route r = {p, X, n, d, y, fold, work, interrupt, p->base.kernel};
	km_grid_route route = {.arg = &r, .none = select_none};
	char		stage[64];
	km_status	st;

	if ((st = check_select(p, n, fold, err)) != KM_OK)
		return st;
	if (p->cv == KM_CV_KFOLD)
		route.score = kfold_score;
	else
	{
		/* the method's closed-form shortcut: a whole lambda column per gamma */
		snprintf(stage, sizeof(stage), ": %d lambdas by %s", p->n_lambdas,
				 km_cv_name(p->cv));
		route.gamma = closed_form_gamma;
		route.column = closed_form_column;
		route.gamma_stage = stage;
	}
	return km_grid_search(p->gammas, p->n_gammas, p->lambdas, p->n_lambdas,
						  &route, cand, best, err);
}

void
km_stratified_folds(const uint32_t *cls, size_t n, uint32_t k, uint32_t folds,
					uint32_t *fold, size_t *seen)
{
	size_t		start = 0;

	/* class c's r-th row (in the given order) is dealt start_c + r */
	for (uint32_t c = 0; c < k; c++)
		seen[c] = 0;
	for (size_t i = 0; i < n; i++)
		seen[cls[i]]++;
	for (uint32_t c = 0; c < k; c++)
	{
		size_t		count = seen[c];

		seen[c] = start;
		start += count;
	}
	for (size_t i = 0; i < n; i++)
		fold[i] = (uint32_t) (seen[cls[i]]++ % folds);
}

/* R's quantile type 7 (its default) of sorted x[0 .. m-1], m >= 1. */
static double
quantile7(const double *x, size_t m, double p)
{
	double		h = (double) (m - 1) * p;
	size_t		lo = (size_t) floor(h);

	if (lo + 1 >= m)
		return x[m - 1];
	return x[lo] + (h - (double) lo) * (x[lo + 1] - x[lo]);
}

size_t
km_sigest_rows(size_t n, int d)
{
	/* the largest m with m (m - 1) / 2 pairs of d at most KM_SIGEST_FLOPS */
	double		r = floor((1.0 + sqrt(1.0 + 8.0 * KM_SIGEST_FLOPS / (d > 0 ? d : 1))) / 2.0);
	size_t		m = r > KM_SIGEST_ROWS ? KM_SIGEST_ROWS : r < 100 ? 100 : (size_t) r;

	return n < m ? n : m;
}

size_t
km_gamma_sigest_doubles(size_t n, int d)
{
	size_t		m = km_sigest_rows(n, d);

	return m * (m - (m > 0)) / 2 + 1;
}

double
km_gamma_sigest(const double *X, size_t n, int d, const int64_t *order,
				double *work)
{
	size_t		m = km_sigest_rows(n, d);
	size_t		count = 0;

	/* every pair once; (a - b)^2 == (b - a)^2, so no pair depends on row order */
	for (size_t i = 1; i < m; i++)
	{
		const double *a = X + (size_t) (order ? order[i] : (int64_t) i) * d;

		for (size_t j = 0; j < i; j++)
		{
			const double *b = X + (size_t) (order ? order[j] : (int64_t) j) * d;
			double		s = 0.0;

			for (int c = 0; c < d; c++)
				s += (a[c] - b[c]) * (a[c] - b[c]);
			if (s > 0.0 && isfinite(s))
				work[count++] = s;
		}
	}
	if (count == 0)
		return 1.0 / (double) (d > 0 ? d : 1);
	qsort(work, count, sizeof(double), km_cmp_double);
	return 0.5 * (1.0 / quantile7(work, count, 0.9) + 1.0 / quantile7(work, count, 0.1));
}
