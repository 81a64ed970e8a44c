/*
 * logistic.c - exact kernel logistic regression, binary and multinomial,
 * by Newton's method on the dual coefficients (logistic.h has the algebra).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "logistic.h"
#include "progress.h"
#include "solve.h"

/* Armijo constant and the most halvings of a step. */
#define KM_ARMIJO_C 1e-4
#define KM_MAX_HALVINGS 50

uint32_t
km_logistic_outputs(uint32_t n_classes)
{
	if (n_classes < 2)
		return 0;
	return n_classes == 2 ? 1 : n_classes;
}

size_t
km_logistic_workspace_doubles(size_t n, uint32_t n_classes)
{
	size_t		q = km_logistic_outputs(n_classes);

	if (n == 0 || q == 0 || n > ((size_t) 1 << 28))
		return 0;
	if (q == 1)
		return n * n + n * (q + 12);
	/* multinomial: no n x n matrix; 10 n x q blocks and 8 q-vectors */
	if (q > (size_t) INT_MAX / n)
		return 0;
	return 10 * n * q + 8 * q;
}

void
km_symm_lower(const double *K, size_t n, const double *V, size_t q, double *U,
			  km_interrupt_fn interrupt)
{
	memset(U, 0, n * q * sizeof(double));
	for (size_t j = 0; j < n; j += KM_LOGISTIC_PANEL)
	{
		size_t		jb = n - j < KM_LOGISTIC_PANEL ? n - j : KM_LOGISTIC_PANEL;
		size_t		rest = n - j - jb;
		const double *Ajj = K + j + j * n;

		cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, (int) jb, (int) q, 1.0,
					Ajj, (int) n, V + j, (int) n, 1.0, U + j, (int) n);
		if (rest > 0)
		{
			/* U[below] += A21 V[panel]; U[panel] += A21^T V[below] */
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) rest, (int) q,
						(int) jb, 1.0, Ajj + jb, (int) n, V + j, (int) n, 1.0,
						U + j + jb, (int) n);
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) jb, (int) q,
						(int) rest, 1.0, Ajj + jb, (int) n, V + j + jb, (int) n, 1.0,
						U + j, (int) n);
		}
		km_check_interrupts(interrupt);
	}
}

/* log(1 + exp(-z)) without overflow or loss for large |z|. */
static inline double
log1pexp_neg(double z)
{
	return z > 0 ? log1p(exp(-z)) : -z + log1p(exp(z));
}

static inline double
sigmoid(double f)
{
	if (f >= 0)
		return 1.0 / (1.0 + exp(-f));
	else
	{
		double		e = exp(f);

		return e / (1.0 + e);
	}
}

void
km_logistic_proba(const double *f, uint32_t n_classes, double *out)
{
	if (n_classes == 2)
	{
		out[1] = sigmoid(f[0]);
		out[0] = sigmoid(-f[0]);
		return;
	}
	else
	{
		double		top = f[0];
		double		sum = 0.0;

		for (uint32_t c = 1; c < n_classes; c++)
			top = fmax(top, f[c]);
		for (uint32_t c = 0; c < n_classes; c++)
			sum += out[c] = exp(f[c] - top);
		for (uint32_t c = 0; c < n_classes; c++)
			out[c] /= sum;
	}
}

/* log sum_c exp(f_c) of one row of F (n x q, column-major). */
static inline double
row_lse(const double *F, size_t n, size_t i, uint32_t q, uint32_t c_trial,
		double f_trial)
{
	double		top = -INFINITY;
	double		sum = 0.0;

	for (uint32_t c = 0; c < q; c++)
		top = fmax(top, c == c_trial ? f_trial : F[i + c * n]);
	for (uint32_t c = 0; c < q; c++)
		sum += exp((c == c_trial ? f_trial : F[i + c * n]) - top);
	return top + log(sum);
}

/*
 * (1/W) sum_i w_i L_i with output ct of F replaced by F_ct + t df (ct = q:
 * no replacement).
 */
static double
mean_loss(const double *F, size_t n, uint32_t q, const uint32_t *cls,
		  const double *weights, double W, uint32_t ct, double t,
		  const double *df)
{
	double		sum = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		wi = weights ? weights[i] : 1.0;
		double		L;

		if (q == 1)
		{
			double		f = F[i] + (ct == 0 ? t * df[i] : 0.0);

			L = log1pexp_neg(cls[i] == 1 ? f : -f);
		}
		else
		{
			double		ft = ct < q ? F[i + ct * n] + t * df[i] : 0.0;
			double		fy = cls[i] == ct ? ft : F[i + cls[i] * n];

			L = row_lse(F, n, i, q, ct, ft) - fy;
		}
		sum += wi * L;
	}
	return sum / W;
}

/* g = (w/W) dL/df_c and d = (w/W) d2L/df_c^2 at F, for output c. */
static void
loss_derivatives(const double *F, size_t n, uint32_t q, uint32_t c,
				 const uint32_t *cls, const double *weights, double W,
				 double *g, double *d)
{
	for (size_t i = 0; i < n; i++)
	{
		double		wi = (weights ? weights[i] : 1.0) / W;
		double		p;

		if (q == 1)
			p = sigmoid(F[i]);
		else
			p = exp(F[i + c * n] - row_lse(F, n, i, q, q, 0.0));
		g[i] = wi * (p - (cls[i] == (q == 1 ? 1u : c) ? 1.0 : 0.0));
		d[i] = wi * p * (1.0 - p);
	}
}

double
km_logistic_objective(const double *K, size_t n, const uint32_t *cls,
					  uint32_t n_classes, const double *weights, double lambda,
					  const double *alpha, const double *intercepts, double *F,
					  km_interrupt_fn interrupt)
{
	uint32_t	q = km_logistic_outputs(n_classes);
	double		W = 0.0;
	double		pen = 0.0;

	for (size_t i = 0; i < n; i++)
		W += weights ? weights[i] : 1.0;
	for (uint32_t c = 0; c < q; c++)
	{
		double	   *Fc = F + c * n;

		km_symv_lower(K, n, n, alpha + c * n, Fc, interrupt);
		pen += cblas_ddot((int) n, alpha + c * n, 1, Fc, 1);
		for (size_t i = 0; i < n; i++)
			Fc[i] += intercepts[c];
	}
	return mean_loss(F, n, q, cls, weights, W, q, 0.0, NULL) + 0.5 * lambda * pen;
}

/*
 * Solve (L L^T) X = X for nrhs columns (n x nrhs, leading dimension n) with
 * the lower Cholesky factor L in panels of KM_LOGISTIC_PANEL rows, an
 * interrupt check between: one dpotrs reads all of L without one.
 */
static void
chol_solve_blocked(const double *L, size_t n, double *X, int nrhs,
				   km_interrupt_fn interrupt)
{
	size_t		last = (n - 1) / KM_LOGISTIC_PANEL * KM_LOGISTIC_PANEL;

	/* forward: L y = x, panel by panel, updating the rows below */
	for (size_t j = 0; j < n; j += KM_LOGISTIC_PANEL)
	{
		size_t		jb = n - j < KM_LOGISTIC_PANEL ? n - j : KM_LOGISTIC_PANEL;
		size_t		rest = n - j - jb;

		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
					(int) jb, nrhs, 1.0, L + j + j * n, (int) n, X + j, (int) n);
		if (rest > 0)
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) rest, nrhs,
						(int) jb, -1.0, L + j + jb + j * n, (int) n, X + j, (int) n,
						1.0, X + j + jb, (int) n);
		km_check_interrupts(interrupt);
	}
	/* backward: L^T x = y, from the last panel up */
	for (size_t j = last;; j -= KM_LOGISTIC_PANEL)
	{
		size_t		jb = n - j < KM_LOGISTIC_PANEL ? n - j : KM_LOGISTIC_PANEL;
		size_t		rest = n - j - jb;

		if (rest > 0)
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) jb, nrhs,
						(int) rest, -1.0, L + j + jb + j * n, (int) n, X + j + jb,
						(int) n, 1.0, X + j, (int) n);
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
					(int) jb, nrhs, 1.0, L + j + j * n, (int) n, X + j, (int) n);
		km_check_interrupts(interrupt);
		if (j == 0)
			break;
	}
}

/* The fit's state and scratch, carved from work. */
typedef struct fit_state
{
	const km_logistic_params *p;
	const double *K;
	size_t		n;
	uint32_t	q;
	const uint32_t *cls;
	const double *weights;
	double		W;
	double		lambda;
	double	   *alpha;
	double	   *b;
	double	   *pen;			/* q: a_c^T K a_c */
	double	   *B;				/* n x n */
	double	   *F;				/* n x q */
	double	   *g, *d, *s, *r, *z, *da, *df, *Kg;	/* n each; z is 2n */
	km_interrupt_fn interrupt;
} fit_state;

/* ||(K (g + lambda a_c), 1^T g)||^2 of output c at the current F. */
static double
grad_norm2(fit_state *st, uint32_t c)
{
	size_t		n = st->n;
	const double *Fc = st->F + c * n;
	double		sum = 0.0;
	double		gb = 0.0;

	loss_derivatives(st->F, n, st->q, c, st->cls, st->weights, st->W, st->g, st->d);
	km_symv_lower(st->K, n, n, st->g, st->Kg, st->interrupt);
	for (size_t i = 0; i < n; i++)
	{
		/* K a_c = F_c - b_c */
		double		ga = st->Kg[i] + st->lambda * (Fc[i] - st->b[c]);

		sum += ga * ga;
		gb += st->g[i];
	}
	if (st->p->fit_intercept)
		sum += gb * gb;
	return sum;
}

/*
 * One Newton step with line search on output c (logistic.h).  *moved is
 * false when no step decreased J (the optimum to rounding).
 */
static km_status
newton_step(fit_state *st, uint32_t c, bool *moved, km_error *err)
{
	size_t		n = st->n;
	double		lambda = st->lambda;
	double	   *a = st->alpha + c * n;
	double	   *Fc = st->F + c * n;
	double	   *z1 = st->z;
	double	   *z2 = st->z + n;
	double		gsum = 0.0;
	double		db = 0.0;
	double		slope = 0.0;
	double		Kda_Ka = 0.0;
	double		Kda_da = 0.0;
	double		J0;
	double		pen_other = 0.0;
	double		t = 1.0;
	size_t		bad;

	*moved = false;
	loss_derivatives(st->F, n, st->q, c, st->cls, st->weights, st->W, st->g, st->d);
	for (size_t i = 0; i < n; i++)
	{
		st->s[i] = sqrt(st->d[i]);
		st->r[i] = -(st->g[i] + lambda * a[i]);
		gsum += st->g[i];
	}

	/* z1 := S K r; z2 := s */
	km_symv_lower(st->K, n, n, st->r, z1, st->interrupt);
	for (size_t i = 0; i < n; i++)
	{
		z1[i] *= st->s[i];
		z2[i] = st->s[i];
	}

	/* lower triangle of B = S K S + lambda I, a panel of columns at a time */
	for (size_t j = 0; j < n; j++)
	{
		const double *Kj = st->K + j * n;
		double	   *Bj = st->B + j * n;
		double		sj = st->s[j];

		for (size_t i = j; i < n; i++)
			Bj[i] = st->s[i] * Kj[i] * sj;
		Bj[j] += lambda;
		if ((j + 1) % KM_LOGISTIC_PANEL == 0)
			km_check_interrupts(st->interrupt);
	}
	bad = km_cholesky(st->B, n, n, st->interrupt);
	if (bad != 0)
		return km_fail(err, KM_ERR_NOT_PD, "logistic newton system is not positive definite",
					   "The Cholesky factorisation of D^1/2 K D^1/2 + lambda I failed at order %zu of %zu; the kernel matrix is not positive semi-definite.",
					   bad, n);
	chol_solve_blocked(st->B, n, st->z, 2, st->interrupt);

	if (st->p->fit_intercept)
	{
		double		num = -(gsum + cblas_ddot((int) n, st->s, 1, z1, 1));
		double		den = lambda * cblas_ddot((int) n, st->s, 1, z2, 1);

		db = den > 0.0 ? num / den : 0.0;
	}
	for (size_t i = 0; i < n; i++)
		st->da[i] = (st->r[i] - st->s[i] * z1[i]) / lambda - db * st->s[i] * z2[i];

	/* df := K da + db */
	km_symv_lower(st->K, n, n, st->da, st->df, st->interrupt);
	for (size_t i = 0; i < n; i++)
	{
		double		Ka = Fc[i] - st->b[c];

		/* the directional derivative: (g + lambda a)^T K da + 1^T g db */
		slope += (st->g[i] + lambda * a[i]) * st->df[i];
		Kda_Ka += st->da[i] * Ka;
		Kda_da += st->da[i] * st->df[i];
		st->df[i] += db;
	}
	slope += gsum * db;
	if (!isfinite(slope) || !isfinite(Kda_da) || !isfinite(db))
		return km_fail(err, KM_ERR_DIVERGED, "logistic newton step is not finite",
					   "The Newton step of output %u has a non-finite value.", (unsigned) c);
	if (slope >= 0.0)
		return KM_OK;			/* no descent left: the optimum to rounding */

	for (uint32_t o = 0; o < st->q; o++)
		if (o != c)
			pen_other += st->pen[o];
	J0 = mean_loss(st->F, n, st->q, st->cls, st->weights, st->W, st->q, 0.0, NULL) +
		0.5 * lambda * (pen_other + st->pen[c]);
	for (int h = 0; h < KM_MAX_HALVINGS; h++, t *= 0.5)
	{
		double		pen_t = st->pen[c] + 2.0 * t * Kda_Ka + t * t * Kda_da;
		double		Jt = mean_loss(st->F, n, st->q, st->cls, st->weights, st->W, c, t,
								   st->df) + 0.5 * lambda * (pen_other + pen_t);

		if (Jt <= J0 + KM_ARMIJO_C * t * slope ||
			(h == 0 && fabs(Jt - J0) <= 8 * DBL_EPSILON * fabs(J0)))
		{
			cblas_daxpy((int) n, t, st->da, 1, a, 1);
			cblas_daxpy((int) n, t, st->df, 1, Fc, 1);
			st->b[c] += t * db;
			st->pen[c] = pen_t;
			*moved = true;
			return KM_OK;
		}
	}
	return KM_OK;
}

/*
 * Record the gradient norm of iteration it; true when the loop stops: the
 * norm fell to tol times its start (converged), max_iter was reached, or it
 * is not finite (*st = KM_ERR_DIVERGED, err filled; else *st = KM_OK).
 */
static bool
gradient_done(km_logistic_result *res, double grad_norm, int it, double tol,
			  int max_iter, km_status *st, km_error *err)
{
	*st = KM_OK;
	res->grad_norm = grad_norm;
	if (it == 0)
		res->grad_norm0 = grad_norm;
	res->iterations = it;
	if (!isfinite(grad_norm))
	{
		*st = km_fail(err, KM_ERR_DIVERGED, "logistic regression diverged",
					  "The gradient is not finite after %d iterations.", it);
		return true;
	}
	if (grad_norm <= tol * res->grad_norm0)
	{
		res->converged = true;
		return true;
	}
	if (it < max_iter)
		km_progress_phase("logistic: Newton step %d of at most %d, gradient %.3g of %.3g",
						  it + 1, max_iter, grad_norm, res->grad_norm0);
	return it >= max_iter;
}

/*
 * Multinomial: softmax probabilities P (n x q) at F and the mean loss
 * (1/W) sum_i w_i (log sum_c exp(F_ic) - F_i,cls_i), or at F + t (DF + 1 db^T)
 * when DF is not NULL (P is not written then).
 */
static double
mn_loss(const double *F, const double *DF, const double *db, double t, size_t n,
		uint32_t q, const uint32_t *cls, const double *weights, double W,
		double *P)
{
	double		sum = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		top = -INFINITY;
		double		z = 0.0;
		double		fy = 0.0;

		for (uint32_t c = 0; c < q; c++)
		{
			double		f = F[i + c * n] + (DF ? t * (DF[i + c * n] + db[c]) : 0.0);

			top = fmax(top, f);
			if (c == cls[i])
				fy = f;
		}
		for (uint32_t c = 0; c < q; c++)
		{
			double		f = F[i + c * n] + (DF ? t * (DF[i + c * n] + db[c]) : 0.0);
			double		e = exp(f - top);

			z += e;
			if (!DF)
				P[i + c * n] = e;
		}
		if (!DF)
			for (uint32_t c = 0; c < q; c++)
				P[i + c * n] /= z;
		sum += (weights ? weights[i] : 1.0) * (top + log(z) - fy);
	}
	return sum / W;
}

/* x^T y over m <= INT_MAX values (the workspace bound keeps n q there). */
static double
dot(const double *x, const double *y, size_t m)
{
	return cblas_ddot((int) m, x, 1, y, 1);
}

/*
 * The multinomial fit by truncated Newton (logistic.h: "Multinomial"): an
 * inexact Newton step by conjugate gradients in the K inner product, one
 * blocked K times n x q product per CG iteration, then a backtracking line
 * search.
 */
static km_status
fit_multinomial(const km_logistic_params *p, const double *K, size_t n,
				uint32_t q, const uint32_t *cls, const double *weights,
				double W, double *alpha, double *b, double *work, double tol,
				int max_iter, km_logistic_result *res, km_error *err,
				km_interrupt_fn interrupt)
{
	size_t		nq = n * q;
	double		lambda = p->lambda;
	bool		icpt = p->fit_intercept;
	double	   *F = work;		/* K alpha + 1 b^T */
	double	   *P = F + nq;		/* softmax of F */
	double	   *X = P + nq;		/* the step in alpha */
	double	   *Z = X + nq;		/* reduced residual (a part) */
	double	   *R = Z + nq;		/* full residual K Z (a part) */
	double	   *D = R + nq;		/* CG direction (a part) */
	double	   *KD = D + nq;	/* K D */
	double	   *U = KD + nq;	/* H (K D + 1 Db^T) */
	double	   *KU = U + nq;	/* K U */
	double	   *DF = KU + nq;	/* K X, exact */
	double	   *xb = DF + nq;	/* q-vectors: the step in b, */
	double	   *zb = xb + q;	/* the residual in b (reduced = full), */
	double	   *Db = zb + q;	/* the direction in b, */
	double	   *ub = Db + q;	/* 1^T U, */
	double	   *gb = ub + q;	/* 1^T g at the step's start */
	double		pen = 0.0;		/* sum_c a_c^T K a_c */
	double		loss;

	memset(alpha, 0, nq * sizeof(double));
	memset(b, 0, q * sizeof(double));
	memset(F, 0, nq * sizeof(double));

	for (int it = 0;; it++)
	{
		double		gnorm2 = 0.0;
		double		target,
					rho,
					slope = 0.0,
					Ka_Kx = 0.0,
					x_Kx = 0.0,
					J0,
					t = 1.0;
		bool		moved = false;
		km_status	st_done;

		/* P, the loss; Z := -(g + lambda a), zb := -1^T g; R := K Z */
		loss = mn_loss(F, NULL, NULL, 0.0, n, q, cls, weights, W, P);
		memset(gb, 0, q * sizeof(double));
		for (uint32_t c = 0; c < q; c++)
			for (size_t i = 0; i < n; i++)
			{
				size_t		ic = i + c * n;
				double		g = (weights ? weights[i] : 1.0) / W *
					(P[ic] - (cls[i] == c ? 1.0 : 0.0));

				Z[ic] = -(g + lambda * alpha[ic]);
				gb[c] += g;
			}
		for (uint32_t c = 0; c < q; c++)
		{
			zb[c] = icpt ? -gb[c] : 0.0;
			gnorm2 += zb[c] * zb[c];
		}
		km_symm_lower(K, n, Z, q, R, interrupt);
		gnorm2 += dot(R, R, nq);
		if (gradient_done(res, sqrt(gnorm2), it, tol, max_iter, &st_done, err))
		{
			if (st_done != KM_OK)
				return st_done;
			break;
		}

		/*
		 * CG on the reduced system from X = 0 to a relative residual of
		 * min(0.5, sqrt(||grad|| / ||grad0||)) (superlinear near the optimum).
		 */
		target = fmin(0.5, sqrt(res->grad_norm / res->grad_norm0)) * res->grad_norm;
		memset(X, 0, nq * sizeof(double));
		memset(xb, 0, q * sizeof(double));
		memcpy(D, Z, nq * sizeof(double));
		memcpy(KD, R, nq * sizeof(double));
		memcpy(Db, zb, q * sizeof(double));
		rho = dot(Z, R, nq) + dot(zb, zb, q);
		for (int j = 0; j < KM_LOGISTIC_MAX_CG; j++)
		{
			double		curv,
						step,
						rho_new,
						beta,
						rnorm2;

			/* U := H (K D + 1 Db^T), row by row: w_i/W (p o v - p (p^T v)) */
			memset(ub, 0, q * sizeof(double));
			for (size_t i = 0; i < n; i++)
			{
				double		wi = (weights ? weights[i] : 1.0) / W;
				double		pv = 0.0;

				for (uint32_t c = 0; c < q; c++)
					pv += P[i + c * n] * (KD[i + c * n] + Db[c]);
				for (uint32_t c = 0; c < q; c++)
				{
					size_t		ic = i + c * n;

					U[ic] = wi * P[ic] * (KD[ic] + Db[c] - pv);
				}
			}
			if (icpt)
			{
				for (uint32_t c = 0; c < q; c++)
				{
					double		sum = 0.0;

					for (size_t i = 0; i < n; i++)
						sum += U[i + c * n];
					ub[c] = sum;
				}
			}
			km_symm_lower(K, n, U, q, KU, interrupt);
			/* <D, A D>_M = D^T K U + lambda D^T K D + Db^T ub */
			curv = dot(D, KU, nq) + lambda * dot(D, KD, nq) + dot(Db, ub, q);
			res->cg_iterations++;
			if (!(curv > 0.0) || !(rho > 0.0))
				break;
			step = rho / curv;
			rnorm2 = 0.0;
			for (size_t ic = 0; ic < nq; ic++)
			{
				X[ic] += step * D[ic];
				Z[ic] -= step * (U[ic] + lambda * D[ic]);
				R[ic] -= step * (KU[ic] + lambda * KD[ic]);
				rnorm2 += R[ic] * R[ic];
			}
			if (icpt)
			{
				double		mean = 0.0;

				for (uint32_t c = 0; c < q; c++)
				{
					xb[c] += step * Db[c];
					zb[c] -= step * ub[c];
					mean += zb[c] / q;
				}
				/* 1^T H = 0 along the classes: keep zb off that null space */
				for (uint32_t c = 0; c < q; c++)
				{
					zb[c] -= mean;
					rnorm2 += zb[c] * zb[c];
				}
			}
			if (sqrt(rnorm2) <= target)
				break;
			rho_new = dot(Z, R, nq) + dot(zb, zb, q);
			beta = rho_new / rho;
			rho = rho_new;
			for (size_t ic = 0; ic < nq; ic++)
			{
				D[ic] = Z[ic] + beta * D[ic];
				KD[ic] = R[ic] + beta * KD[ic];
			}
			for (uint32_t c = 0; c < q; c++)
				Db[c] = zb[c] + beta * Db[c];
			km_check_interrupts(interrupt);
		}

		/* DF := K X exactly; slope = (g + lambda a)^T K X + gb^T xb */
		km_symm_lower(K, n, X, q, DF, interrupt);
		for (uint32_t c = 0; c < q; c++)
		{
			for (size_t i = 0; i < n; i++)
			{
				size_t		ic = i + c * n;
				double		g = (weights ? weights[i] : 1.0) / W *
					(P[ic] - (cls[i] == c ? 1.0 : 0.0));

				slope += (g + lambda * alpha[ic]) * DF[ic];
				Ka_Kx += (F[ic] - b[c]) * X[ic];
				x_Kx += X[ic] * DF[ic];
			}
			slope += gb[c] * xb[c];
		}
		if (!isfinite(slope) || !isfinite(x_Kx))
			return km_fail(err, KM_ERR_DIVERGED, "logistic newton step is not finite",
						   "The Newton step after %d iterations has a non-finite value.", it);
		if (slope >= 0.0)
		{
			/* no descent left: the optimum to rounding */
			res->iterations = it + 1;
			break;
		}
		J0 = loss + 0.5 * lambda * pen;
		for (int h = 0; h < KM_MAX_HALVINGS; h++, t *= 0.5)
		{
			double		pen_t = pen + 2.0 * t * Ka_Kx + t * t * x_Kx;
			double		Jt = mn_loss(F, DF, xb, t, n, q, cls, weights, W, NULL) +
				0.5 * lambda * pen_t;

			if (Jt <= J0 + KM_ARMIJO_C * t * slope ||
				(h == 0 && fabs(Jt - J0) <= 8 * DBL_EPSILON * fabs(J0)))
			{
				for (uint32_t c = 0; c < q; c++)
					for (size_t i = 0; i < n; i++)
					{
						size_t		ic = i + c * n;

						alpha[ic] += t * X[ic];
						F[ic] += t * (DF[ic] + xb[c]);
					}
				for (uint32_t c = 0; c < q; c++)
					b[c] += t * xb[c];
				pen = pen_t;
				moved = true;
				break;
			}
		}
		if (!moved)
		{
			/* no step decreases J: the optimum to rounding */
			res->iterations = it + 1;
			break;
		}
	}

	/* softmax is unchanged by a common shift: intercepts summing to 0 */
	{
		double		mean = 0.0;

		for (uint32_t c = 0; c < q; c++)
			mean += b[c] / q;
		for (uint32_t c = 0; c < q; c++)
		{
			b[c] -= mean;
			for (size_t i = 0; i < n; i++)
				F[i + c * n] -= mean;
		}
	}
	res->objective = mn_loss(F, NULL, NULL, 0.0, n, q, cls, weights, W, P) +
		0.5 * lambda * pen;
	if (!isfinite(res->objective) || !km_all_finite(alpha, nq) || !km_all_finite(b, q))
		return km_fail(err, KM_ERR_DIVERGED, "logistic regression diverged",
					   "The coefficients are not finite after %d iterations.", res->iterations);
	return KM_OK;
}

km_status
km_logistic_fit(const km_logistic_params *p, const double *K, size_t n,
				const uint32_t *cls, uint32_t n_classes, const double *weights,
				double *alpha, double *intercepts, double *work,
				km_logistic_result *res, km_error *err,
				km_interrupt_fn interrupt)
{
	fit_state	st;
	uint32_t	q = km_logistic_outputs(n_classes);
	double		tol = p->tol > 0.0 ? p->tol : KM_LOGISTIC_TOL;
	int			max_iter = p->max_iter > 0 ? p->max_iter : KM_LOGISTIC_MAX_ITER;
	double		pens[1];		/* q == 1 */
	double	   *v;

	memset(res, 0, sizeof(*res));
	if (q == 0 || n == 0 || km_logistic_workspace_doubles(n, n_classes) == 0)
		return km_fail(err, KM_ERR_INVALID, "invalid logistic problem size",
					   "Logistic regression needs at least one row and two classes; it got %zu rows and %u classes.",
					   n, (unsigned) n_classes);
	if (!(p->lambda > 0.0) || !isfinite(p->lambda))
		return km_fail(err, KM_ERR_INVALID, "invalid lambda for logistic regression",
					   "The penalty lambda must be a positive finite number, not %g.", p->lambda);
	memset(&st, 0, sizeof(st));
	st.W = 0.0;
	for (size_t i = 0; i < n; i++)
	{
		if (cls[i] >= n_classes)
			return km_fail(err, KM_ERR_INVALID, "class index out of range",
						   "Row %zu has class %u of %u classes.", i + 1,
						   (unsigned) cls[i], (unsigned) n_classes);
		if (weights && !(weights[i] > 0.0 && isfinite(weights[i])))
			return km_fail(err, KM_ERR_INVALID, "invalid sample weight",
						   "Row %zu has weight %g; weights must be positive and finite.",
						   i + 1, weights[i]);
		st.W += weights ? weights[i] : 1.0;
	}
	if (q > 1)
		return fit_multinomial(p, K, n, q, cls, weights, st.W, alpha, intercepts, work,
							   tol, max_iter, res, err, interrupt);
	st.p = p;
	st.K = K;
	st.n = n;
	st.q = q;
	st.cls = cls;
	st.weights = weights;
	st.lambda = p->lambda;
	st.alpha = alpha;
	st.b = intercepts;
	st.interrupt = interrupt;
	st.B = work;
	st.F = work + n * n;
	v = st.F + n * q;
	st.g = v;
	st.d = v + n;
	st.s = v + 2 * n;
	st.r = v + 3 * n;
	st.z = v + 4 * n;			/* 2n */
	st.da = v + 6 * n;
	st.df = v + 7 * n;
	st.Kg = v + 8 * n;
	st.pen = q == 1 ? pens : v + 9 * n;	/* q <= n is not assumed: see below */
	if (q > 1 && q > 3 * n)
		return km_fail(err, KM_ERR_INVALID, "too many classes for the rows",
					   "There are %u classes for %zu rows.", (unsigned) q, n);

	memset(alpha, 0, n * q * sizeof(double));
	memset(intercepts, 0, q * sizeof(double));
	memset(st.F, 0, n * q * sizeof(double));
	memset(st.pen, 0, q * sizeof(double));

	for (int it = 0;; it++)
	{
		double		norm2 = 0.0;
		bool		any_moved = false;
		km_status	st_done;

		for (uint32_t c = 0; c < q; c++)
			norm2 += grad_norm2(&st, c);
		if (gradient_done(res, sqrt(norm2), it, tol, max_iter, &st_done, err))
		{
			if (st_done != KM_OK)
				return st_done;
			break;
		}
		for (uint32_t c = 0; c < q; c++)
		{
			bool		moved;
			km_status	s = newton_step(&st, c, &moved, err);

			if (s != KM_OK)
				return s;
			any_moved |= moved;
		}
		if (!any_moved)
		{
			/* no step decreases J: the optimum to rounding */
			res->iterations = it + 1;
			res->converged = false;
			break;
		}
	}

	{
		double		pen = 0.0;

		for (uint32_t c = 0; c < q; c++)
			pen += st.pen[c];
		res->objective = mean_loss(st.F, n, q, cls, weights, st.W, q, 0.0, NULL) +
			0.5 * st.lambda * pen;
	}
	if (!isfinite(res->objective) || !km_all_finite(alpha, n * q) ||
		!km_all_finite(intercepts, q))
		return km_fail(err, KM_ERR_DIVERGED, "logistic regression diverged",
					   "The coefficients are not finite after %d iterations.", res->iterations);
	return KM_OK;
}
