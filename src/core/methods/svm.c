/*
 * svm.c - libsvm's SMO Solver (C-SVC; epsilon-SVR through svr.c) on a
 * * precomputed Gram matrix and one-vs-one training (see svm.h; Platt scaling
 * and the probabilities in svm_prob.c).  Written after libsvm's Solver (svm.cpp, Chang &
 * Lin): the same working-set selection (WSS 2 of Fan, Chen & Lin 2005), the
 * same two-variable update, shrinking rule, gradient reconstruction and rho;
 * the Gram matrix is given, so a "column of Q" is a column of K read through
 * the row map and multiplied by the signs; the linear term p is read through
 * the same map (NULL: C-SVC's -1).
 */
#include <math.h>
#include <string.h>

#include "progress.h"
#include "svm.h"

#define TAU 1e-12
/*
 * Kernel entries touched between two interrupt checks: 2^22, at a few ns
 * each (a gathered read from a Gram matrix far larger than the caches) a few
 * tens of ms.
 */
#define WORK_PER_CHECK ((uint64_t) 1 << 22)

km_svm_params
km_svm_params_default(void)
{
	km_svm_params p;

	p.tol = 1e-3;
	p.max_iter = 0;
	p.shrinking = true;
	return p;
}

/* Doubles holding m uint32_t. */
static size_t
u32_doubles(size_t m)
{
	return (m + 1) / 2;
}

/*
 * Solver state.  Positions 0..m-1 are permuted as libsvm does (active ones
 * first); perm[t] is the row of K of position t, loc[t] its index in the
 * problem.
 */
typedef struct smo
{
	const double *K;
	km_gram_cols *cols;			/* NULL: K full */
	size_t		ld;
	size_t		m;
	size_t		active;
	bool		contig;			/* perm[t] == t for all t */
	double	   *alpha;
	double	   *G;
	double	   *G_bar;
	double	   *y;
	double	   *C;
	double	   *QD;
	const double *p;			/* linear term in problem order, or NULL: -1 */
	uint32_t   *perm;
	uint32_t   *loc;
	double		tol;
	bool		unshrink;
	uint64_t	work;
	km_interrupt_fn interrupt;
} smo;

static inline bool
is_upper(const smo *s, size_t t)
{
	return s->alpha[t] >= s->C[t];
}

static inline bool
is_lower(const smo *s, size_t t)
{
	return s->alpha[t] <= 0.0;
}

/* The linear term of position t: p of its variable, -1 for C-SVC. */
static inline double
lin(const smo *s, size_t t)
{
	return s->p ? s->p[s->loc[t]] : -1.0;
}

static inline const double *
kcol(const smo *s, size_t t)
{
	if (s->cols)
		return km_gram_cols_get(s->cols, s->perm[t]);
	return s->K + (size_t) s->perm[t] * s->ld;
}

static void
count_work(smo *s, size_t units)
{
	s->work += units;
	if (s->work >= WORK_PER_CHECK)
	{
		s->work = 0;
		km_check_interrupts(s->interrupt);
	}
}

#define SWAP(type, a, i, j) do { type tmp_ = (a)[i]; (a)[i] = (a)[j]; (a)[j] = tmp_; } while (0)

static void
swap_positions(smo *s, size_t i, size_t j)
{
	SWAP(double, s->alpha, i, j);
	SWAP(double, s->G, i, j);
	SWAP(double, s->G_bar, i, j);
	SWAP(double, s->y, i, j);
	SWAP(double, s->C, i, j);
	SWAP(double, s->QD, i, j);
	SWAP(uint32_t, s->perm, i, j);
	SWAP(uint32_t, s->loc, i, j);
	s->contig = false;
}

/*
 * G = G_bar + p + sum over free j of Q_.j alpha_j for the inactive positions
 * (libsvm's reconstruct_gradient); the active ones are up to date.
 */
static void
reconstruct_gradient(smo *s)
{
	size_t		m = s->m;
	size_t		act = s->active;

	if (act == m)
		return;
	for (size_t t = act; t < m; t++)
		s->G[t] = s->G_bar[t] + lin(s, t);
	for (size_t i = 0; i < act; i++)
	{
		const double *col;
		double		c;

		if (is_upper(s, i) || is_lower(s, i))
			continue;
		col = kcol(s, i);
		c = s->y[i] * s->alpha[i];
		for (size_t t = act; t < m; t++)
			s->G[t] += s->y[t] * c * col[s->perm[t]];
		count_work(s, m - act);
	}
	count_work(s, m);
}

/*
 * WSS 2: i maximises -y_t G_t over I_up, j minimises the second-order
 * decrease among t in I_low with -y_t G_t < that maximum.  Returns false when
 * the maximal violation is below tol (optimal on the active set).
 */
static bool
select_working_set(smo *s, size_t *out_i, size_t *out_j, double *viol)
{
	double		Gmax = -INFINITY;
	double		Gmax2 = -INFINITY;
	double		obj_min = INFINITY;
	ptrdiff_t	imax = -1;
	ptrdiff_t	jmin = -1;
	size_t		act = s->active;
	const double *G = s->G;
	const double *y = s->y;

	for (size_t t = 0; t < act; t++)
	{
		if (y[t] > 0)
		{
			if (!is_upper(s, t) && -G[t] >= Gmax)
			{
				Gmax = -G[t];
				imax = (ptrdiff_t) t;
			}
		}
		else if (!is_lower(s, t) && G[t] >= Gmax)
		{
			Gmax = G[t];
			imax = (ptrdiff_t) t;
		}
	}
	if (imax >= 0)
	{
		const double *Ki = kcol(s, (size_t) imax);
		double		QDi = s->QD[imax];

		for (size_t t = 0; t < act; t++)
		{
			double		grad_diff;

			if (y[t] > 0)
			{
				if (is_lower(s, t))
					continue;
				grad_diff = Gmax + G[t];
				if (G[t] >= Gmax2)
					Gmax2 = G[t];
			}
			else
			{
				if (is_upper(s, t))
					continue;
				grad_diff = Gmax - G[t];
				if (-G[t] >= Gmax2)
					Gmax2 = -G[t];
			}
			if (grad_diff > 0)
			{
				double		kit = s->contig ? Ki[t] : Ki[s->perm[t]];
				double		quad = QDi + s->QD[t] - 2.0 * kit;
				double		obj = -(grad_diff * grad_diff) / (quad > 0 ? quad : TAU);

				if (obj <= obj_min)
				{
					obj_min = obj;
					jmin = (ptrdiff_t) t;
				}
			}
		}
	}
	count_work(s, 2 * act);
	*viol = Gmax + Gmax2;
	if (Gmax + Gmax2 < s->tol || jmin < 0)
		return false;
	*out_i = (size_t) imax;
	*out_j = (size_t) jmin;
	return true;
}

static bool
be_shrunk(const smo *s, size_t t, double Gmax1, double Gmax2)
{
	if (is_upper(s, t))
		return s->y[t] > 0 ? -s->G[t] > Gmax1 : -s->G[t] > Gmax2;
	if (is_lower(s, t))
		return s->y[t] > 0 ? s->G[t] > Gmax2 : s->G[t] > Gmax1;
	return false;
}

static void
do_shrinking(smo *s)
{
	double		Gmax1 = -INFINITY;	/* max -y G over I_up */
	double		Gmax2 = -INFINITY;	/* max y G over I_low */

	for (size_t t = 0; t < s->active; t++)
	{
		if (s->y[t] > 0)
		{
			if (!is_upper(s, t) && -s->G[t] >= Gmax1)
				Gmax1 = -s->G[t];
			if (!is_lower(s, t) && s->G[t] >= Gmax2)
				Gmax2 = s->G[t];
		}
		else
		{
			if (!is_upper(s, t) && -s->G[t] >= Gmax2)
				Gmax2 = -s->G[t];
			if (!is_lower(s, t) && s->G[t] >= Gmax1)
				Gmax1 = s->G[t];
		}
	}
	if (!s->unshrink && Gmax1 + Gmax2 <= s->tol * 10)
	{
		s->unshrink = true;
		reconstruct_gradient(s);
		s->active = s->m;
	}
	for (size_t t = 0; t < s->active; t++)
	{
		if (!be_shrunk(s, t, Gmax1, Gmax2))
			continue;
		s->active--;
		while (s->active > t)
		{
			if (!be_shrunk(s, s->active, Gmax1, Gmax2))
			{
				swap_positions(s, t, s->active);
				break;
			}
			s->active--;
		}
	}
}

/* The two-variable subproblem on (i, j) and the gradient updates. */
static void
update_pair(smo *s, size_t i, size_t j)
{
	double	   *alpha = s->alpha;
	const double *Ki = kcol(s, i);
	const double *Kj = kcol(s, j);
	double		Ci = s->C[i];
	double		Cj = s->C[j];
	double		old_ai = alpha[i];
	double		old_aj = alpha[j];
	double		kij = Ki[s->perm[j]];
	double		quad = s->QD[i] + s->QD[j] - 2.0 * kij;
	bool		ui = is_upper(s, i);
	bool		uj = is_upper(s, j);
	double		dai,
				daj,
				ci,
				cj;
	size_t		act = s->active;

	if (quad <= 0)
		quad = TAU;
	if (s->y[i] != s->y[j])
	{
		double		delta = (-s->G[i] - s->G[j]) / quad;
		double		diff = alpha[i] - alpha[j];

		alpha[i] += delta;
		alpha[j] += delta;
		if (diff > 0)
		{
			if (alpha[j] < 0)
			{
				alpha[j] = 0;
				alpha[i] = diff;
			}
		}
		else if (alpha[i] < 0)
		{
			alpha[i] = 0;
			alpha[j] = -diff;
		}
		if (diff > Ci - Cj)
		{
			if (alpha[i] > Ci)
			{
				alpha[i] = Ci;
				alpha[j] = Ci - diff;
			}
		}
		else if (alpha[j] > Cj)
		{
			alpha[j] = Cj;
			alpha[i] = Cj + diff;
		}
	}
	else
	{
		double		delta = (s->G[i] - s->G[j]) / quad;
		double		sum = alpha[i] + alpha[j];

		alpha[i] -= delta;
		alpha[j] += delta;
		if (sum > Ci)
		{
			if (alpha[i] > Ci)
			{
				alpha[i] = Ci;
				alpha[j] = sum - Ci;
			}
		}
		else if (alpha[j] < 0)
		{
			alpha[j] = 0;
			alpha[i] = sum;
		}
		if (sum > Cj)
		{
			if (alpha[j] > Cj)
			{
				alpha[j] = Cj;
				alpha[i] = sum - Cj;
			}
		}
		else if (alpha[i] < 0)
		{
			alpha[i] = 0;
			alpha[j] = sum;
		}
	}

	dai = alpha[i] - old_ai;
	daj = alpha[j] - old_aj;
	ci = s->y[i] * dai;
	cj = s->y[j] * daj;
	if (s->contig)
	{
		double	   *restrict G = s->G;
		const double *restrict y = s->y;

		for (size_t t = 0; t < act; t++)
			G[t] += y[t] * (ci * Ki[t] + cj * Kj[t]);
	}
	else
	{
		double	   *restrict G = s->G;
		const double *restrict y = s->y;
		const uint32_t *restrict perm = s->perm;

		for (size_t t = 0; t < act; t++)
		{
			uint32_t	r = perm[t];

			G[t] += y[t] * (ci * Ki[r] + cj * Kj[r]);
		}
	}

	/* G_bar over all positions when a bound status changes */
	if (ui != is_upper(s, i))
	{
		double		c = (ui ? -Ci : Ci) * s->y[i];

		for (size_t t = 0; t < s->m; t++)
			s->G_bar[t] += c * s->y[t] * Ki[s->perm[t]];
		count_work(s, s->m);
	}
	if (uj != is_upper(s, j))
	{
		double		c = (uj ? -Cj : Cj) * s->y[j];

		for (size_t t = 0; t < s->m; t++)
			s->G_bar[t] += c * s->y[t] * Kj[s->perm[t]];
		count_work(s, s->m);
	}
	count_work(s, 2 * act);
}

/* libsvm's calculate_rho. */
static double
calculate_rho(const smo *s)
{
	double		ub = INFINITY;
	double		lb = -INFINITY;
	double		sum_free = 0;
	size_t		nr_free = 0;

	for (size_t t = 0; t < s->active; t++)
	{
		double		yG = s->y[t] * s->G[t];

		if (is_upper(s, t))
		{
			if (s->y[t] < 0)
				ub = fmin(ub, yG);
			else
				lb = fmax(lb, yG);
		}
		else if (is_lower(s, t))
		{
			if (s->y[t] > 0)
				ub = fmin(ub, yG);
			else
				lb = fmax(lb, yG);
		}
		else
		{
			nr_free++;
			sum_free += yG;
		}
	}
	return nr_free > 0 ? sum_free / (double) nr_free : (ub + lb) / 2;
}

/*
 * A feasible start a0 instead of 0 (libsvm's one-class start): G = p + Q a0
 * and G_bar = sum over a0_j == C_j of C_j Q_.j, one column of K per nonzero
 * a0_j, as libsvm's Solver initializes them.
 */
static void
start_from(smo *s, const double *alpha0)
{
	size_t		m = s->m;

	for (size_t j = 0; j < m; j++)
	{
		const double *col;

		s->alpha[j] = alpha0[j];
		if (is_lower(s, j))
			continue;
		col = kcol(s, j);
		for (size_t t = 0; t < m; t++)
		{
			double		q = s->y[t] * s->y[j] * col[s->perm[t]];

			s->G[t] += s->alpha[j] * q;
			if (is_upper(s, j))
				s->G_bar[t] += s->C[j] * q;
		}
		count_work(s, m);
	}
}

size_t
km_smo_doubles(size_t l)
{
	return 6 * l + 2 * u32_doubles(l);
}

/*
 * The solver proper on a validated problem: alpha (l, problem order) gets the
 * dual variables, res everything else (n_sv and n_bounded_sv count
 * variables).
 */
static km_status
smo_solve(const km_smo_problem *prob, const double *alpha0,
		  const km_svm_params *par, double *alpha, km_svm_result *res,
		  double *work, km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = prob->l;
	smo			s;
	uint64_t	max_iter;
	uint64_t	iter = 0;
	size_t		counter;
	double		viol = INFINITY;
	bool		converged = false;

	s.K = prob->K;
	s.cols = prob->cols;
	s.ld = prob->ld;
	s.m = m;
	s.active = m;
	s.contig = prob->rows == NULL;
	s.alpha = work;
	s.G = work + m;
	s.G_bar = work + 2 * m;
	s.y = work + 3 * m;
	s.C = work + 4 * m;
	s.QD = work + 5 * m;
	s.p = prob->p;
	s.perm = (uint32_t *) (work + 6 * m);
	s.loc = (uint32_t *) (work + 6 * m + u32_doubles(m));
	s.tol = par->tol;
	s.unshrink = false;
	s.work = 0;
	s.interrupt = interrupt;
	for (size_t t = 0; t < m; t++)
	{
		uint32_t	r = prob->rows ? prob->rows[t] : (uint32_t) t;

		s.alpha[t] = 0;
		s.G[t] = prob->p ? prob->p[t] : -1.0;
		s.G_bar[t] = 0;
		s.y[t] = prob->y[t];
		s.C[t] = prob->C[t];
		s.QD[t] = s.cols ? km_gram_cols_diag(s.cols, r) : s.K[r + (size_t) r * s.ld];
		s.perm[t] = r;
		s.loc[t] = (uint32_t) t;
	}
	if (alpha0)
		start_from(&s, alpha0);

	max_iter = par->max_iter;
	if (max_iter == 0)
		max_iter = 100 * (uint64_t) m > 10000000 ? 100 * (uint64_t) m : 10000000;
	counter = (m < 1000 ? m : 1000) + 1;
	while (iter < max_iter)
	{
		size_t		i,
					j;

		if (--counter == 0)
		{
			counter = m < 1000 ? m : 1000;
			if (par->shrinking)
				do_shrinking(&s);
		}
		if (!select_working_set(&s, &i, &j, &viol))
		{
			reconstruct_gradient(&s);
			s.active = m;
			if (!select_working_set(&s, &i, &j, &viol))
			{
				converged = true;
				break;
			}
			counter = 1;		/* shrink at the next iteration */
		}
		iter++;
		update_pair(&s, i, j);
		/* a large problem's iterations are slow (columns of m rows): each may report */
		if ((iter & 1023) == 0 || m >= 4096)
			km_progress_step("SMO iteration %llu of at most %llu, KKT violation %.3g (tol %g)",
							 (unsigned long long) iter, (unsigned long long) max_iter,
							 viol, par->tol);
	}
	if (s.active < m)
	{
		reconstruct_gradient(&s);
		s.active = m;
	}
	if (!converged)
	{
		size_t		i,
					j;

		if (!select_working_set(&s, &i, &j, &viol))
			converged = true;	/* max_iter hit exactly at the optimum */
	}

	res->b = -calculate_rho(&s);
	res->iterations = iter;
	res->violation = viol;
	res->converged = converged;
	{
		double		obj = 0;

		for (size_t t = 0; t < m; t++)
		{
			obj += s.alpha[t] * (s.G[t] + lin(&s, t));
			alpha[s.loc[t]] = s.alpha[t];
			if (s.alpha[t] > 0)
			{
				res->n_sv++;
				if (s.alpha[t] >= s.C[t])
					res->n_bounded_sv++;
			}
		}
		res->objective = obj / 2;
	}
	if (!isfinite(res->objective) || !isfinite(res->b))
		return km_fail(err, KM_ERR_DIVERGED, "svm solver produced non-finite values",
					   "The dual objective is %g and the intercept %g after %llu iterations.",
					   res->objective, res->b, (unsigned long long) iter);
	if (!converged)
		return km_fail(err, KM_ERR_INACCURATE, "svm solver did not converge",
					   "SMO stopped after max_iter = %llu iterations with a KKT violation of %g above the tolerance %g.",
					   (unsigned long long) max_iter, viol, par->tol);
	return KM_OK;
}

km_status
km_smo_solve(const km_smo_problem *prob, const km_svm_params *par,
			 double *alpha, km_svm_result *res, double *work,
			 km_error *err, km_interrupt_fn interrupt)
{
	return km_smo_solve_from(prob, NULL, par, alpha, res, work, err, interrupt);
}

km_status
km_smo_solve_from(const km_smo_problem *prob, const double *alpha0,
				  const km_svm_params *par, double *alpha, km_svm_result *res,
				  double *work, km_error *err, km_interrupt_fn interrupt)
{
	size_t		l = prob->l;

	memset(res, 0, sizeof(*res));
	if (l < 2 || l > UINT32_MAX)
		return km_fail(err, KM_ERR_INVALID, "smo needs at least two variables",
					   "The problem has %zu variables.", l);
	if (!(par->tol > 0) || !isfinite(par->tol))
		return km_fail(err, KM_ERR_INVALID, "svm tolerance must be positive",
					   "The tolerance is %g.", par->tol);
	for (size_t t = 0; t < l; t++)
	{
		if (prob->y[t] != 1.0 && prob->y[t] != -1.0)
			return km_fail(err, KM_ERR_INVALID, "smo signs must be +1 or -1",
						   "Variable %zu has sign %g.", t, prob->y[t]);
		if (!(prob->C[t] > 0) || !isfinite(prob->C[t]))
			return km_fail(err, KM_ERR_INVALID, "svm bound C must be positive and finite",
						   "Variable %zu has C = %g.", t, prob->C[t]);
		if (prob->p && !isfinite(prob->p[t]))
			return km_fail(err, KM_ERR_INVALID, "smo linear term must be finite",
						   "Variable %zu has p = %g.", t, prob->p[t]);
		if (alpha0 && !(alpha0[t] >= 0 && alpha0[t] <= prob->C[t]))
			return km_fail(err, KM_ERR_INVALID, "smo start must lie in its bounds",
						   "Variable %zu starts at %g with C = %g.", t, alpha0[t], prob->C[t]);
	}
	return smo_solve(prob, alpha0, par, alpha, res, work, err, interrupt);
}

size_t
km_svm_binary_doubles(size_t m)
{
	return km_smo_doubles(m);
}

km_status
km_svm_binary(const km_svm_problem *prob, const km_svm_params *par,
			  double *coef, km_svm_result *res, double *work,
			  km_error *err, km_interrupt_fn interrupt)
{
	size_t		m = prob->m;
	size_t		npos = 0;
	km_smo_problem sp;
	km_status	st;

	memset(res, 0, sizeof(*res));
	if (m < 2 || m > UINT32_MAX)
		return km_fail(err, KM_ERR_INVALID, "svm needs at least two rows",
					   "The binary problem has %zu rows.", m);
	if (!(par->tol > 0) || !isfinite(par->tol))
		return km_fail(err, KM_ERR_INVALID, "svm tolerance must be positive",
					   "The tolerance is %g.", par->tol);
	for (size_t t = 0; t < m; t++)
	{
		if (prob->y[t] != 1.0 && prob->y[t] != -1.0)
			return km_fail(err, KM_ERR_INVALID, "svm labels must be +1 or -1",
						   "Row %zu of the binary problem has label %g.", t, prob->y[t]);
		if (!(prob->C[t] > 0) || !isfinite(prob->C[t]))
			return km_fail(err, KM_ERR_INVALID, "svm bound C must be positive and finite",
						   "Row %zu of the binary problem has C = %g.", t, prob->C[t]);
		npos += prob->y[t] > 0;
	}
	if (npos == 0 || npos == m)
		return km_fail(err, KM_ERR_INVALID, "svm needs rows of both labels",
					   "All %zu rows of the binary problem have label %d.", m,
					   npos ? 1 : -1);

	sp.K = prob->K;
	sp.ld = prob->ld;
	sp.cols = prob->cols;
	sp.rows = prob->rows;
	sp.l = m;
	sp.y = prob->y;
	sp.p = NULL;
	sp.C = prob->C;
	st = smo_solve(&sp, NULL, par, coef, res, work, err, interrupt);
	for (size_t t = 0; t < m; t++)
		coef[t] *= prob->y[t];
	return st;
}

/* ---- k classes ---- */

size_t
km_svm_train_doubles(size_t n, uint32_t k, bool probability)
{
	size_t		inner = probability ? km_svm_binary_probability_doubles(n)
		: km_svm_binary_doubles(n);

	(void) k;
	return 3 * n + 2 * u32_doubles(n) + inner;
}

km_status
km_svm_train(const km_svm_multi_problem *pr, const km_svm_params *par,
			 double *alpha, double *intercepts, double *prob_A,
			 double *prob_B, km_svm_multi_result *res, double *work,
			 km_error *err, km_interrupt_fn interrupt)
{
	size_t		n = pr->n;
	uint32_t	k = pr->k;
	uint32_t	q;
	double	   *y = work;
	double	   *Cv = y + n;
	double	   *coef = Cv + n;
	uint32_t   *rows = (uint32_t *) (coef + n);
	uint32_t   *fsub = (uint32_t *) (coef + n + u32_doubles(n));
	double	   *inner = coef + n + 2 * u32_doubles(n);
	uint32_t	p = 0;
	bool		inaccurate = false;

	memset(res, 0, sizeof(*res));
	if (k < 2 || n < 2 || n > UINT32_MAX)
		return km_fail(err, KM_ERR_INVALID, "svm needs at least two classes",
					   "The problem has %u classes and %zu rows.", k, n);
	q = km_svm_outputs(k);
	for (uint32_t c = 0; c < k; c++)
		if (!(pr->C[c] > 0) || !isfinite(pr->C[c]))
			return km_fail(err, KM_ERR_INVALID, "svm bound C must be positive and finite",
						   "Class %u has C = %g.", c, pr->C[c]);
	for (size_t i = 0; i < n; i++)
		if (pr->cls[i] >= k)
			return km_fail(err, KM_ERR_INVALID, "class index out of range",
						   "Row %zu has class %u of %u.", i, pr->cls[i], k);
	memset(alpha, 0, n * q * sizeof(double));

	for (uint32_t s = 0; s < k; s++)
		for (uint32_t t = s + 1; t < k; t++)
		{
			km_svm_problem bp;
			km_svm_result r;
			km_status	st;
			size_t		m = 0;

			if (k == 2)
			{
				/* binary convention: y = +1 for class 1 */
				for (size_t i = 0; i < n; i++)
				{
					rows[i] = (uint32_t) i;
					y[i] = pr->cls[i] == 1 ? 1.0 : -1.0;
					Cv[i] = pr->C[pr->cls[i]];
					if (pr->fold)
						fsub[i] = pr->fold[i];
				}
				m = n;
			}
			else
				for (size_t i = 0; i < n; i++)
				{
					if (pr->cls[i] != s && pr->cls[i] != t)
						continue;
					rows[m] = (uint32_t) i;
					y[m] = pr->cls[i] == s ? 1.0 : -1.0;
					Cv[m] = pr->C[pr->cls[i]];
					if (pr->fold)
						fsub[m] = pr->fold[i];
					m++;
				}
			bp.K = pr->K;
			bp.ld = pr->ld;
			bp.cols = pr->cols;
			bp.rows = k == 2 ? NULL : rows;
			bp.m = m;
			bp.y = y;
			bp.C = Cv;
			if (k == 2)
				km_progress_phase("svm: %zu rows", m);
			else
				km_progress_phase("svm: class pair %u of %u, %zu rows", p + 1, q, m);
			if (pr->fold)
			{
				uint32_t	nc = 0;

				st = km_svm_binary_probability(&bp, par, fsub, pr->n_folds,
											   &prob_A[p], &prob_B[p], NULL, &nc,
											   inner, err, interrupt);
				if (st != KM_OK)
					return st;
				res->folds_not_converged += nc;
			}
			st = km_svm_binary(&bp, par, coef, &r, inner, err, interrupt);
			if (st == KM_ERR_INACCURATE)
			{
				inaccurate = true;
				res->not_converged++;
			}
			else if (st != KM_OK)
				return st;
			for (size_t r2 = 0; r2 < m; r2++)
				alpha[rows[r2] + (size_t) p * n] = coef[r2];
			intercepts[p] = r.b;
			res->iterations += r.iterations;
			res->objective += r.objective;
			if (r.violation > res->violation)
				res->violation = r.violation;
			res->n_bounded_sv += r.n_bounded_sv;
			p++;
			if (k == 2)
				break;
		}
	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < q; j++)
			if (alpha[i + (size_t) j * n] != 0)
			{
				res->n_sv++;
				break;
			}
	if (inaccurate)
		return km_fail(err, KM_ERR_INACCURATE, "svm solver did not converge",
					   "%u of the %u binary machines stopped at max_iter with a KKT violation above the tolerance %g.",
					   res->not_converged, q, par->tol);
	return KM_OK;
}

size_t
km_svm_compact(double *alpha, size_t n, uint32_t q, uint32_t *keep)
{
	size_t		nk = 0;

	for (size_t i = 0; i < n; i++)
		for (uint32_t j = 0; j < q; j++)
			if (alpha[i + (size_t) j * n] != 0)
			{
				keep[nk++] = (uint32_t) i;
				break;
			}
	/* destinations never pass the sources still to be read */
	for (uint32_t j = 0; j < q; j++)
		for (size_t r = 0; r < nk; r++)
			alpha[r + (size_t) j * nk] = alpha[keep[r] + (size_t) j * n];
	return nk;
}

uint32_t
km_svm_vote(uint32_t k, const double *dec, uint32_t *votes)
{
	uint32_t	p = 0,
				best = 0;

	if (k == 2)
		return dec[0] > 0 ? 1 : 0;
	memset(votes, 0, k * sizeof(uint32_t));
	for (uint32_t s = 0; s < k; s++)
		for (uint32_t t = s + 1; t < k; t++)
			votes[dec[p++] > 0 ? s : t]++;
	for (uint32_t c = 1; c < k; c++)
		if (votes[c] > votes[best])
			best = c;
	return best;
}
