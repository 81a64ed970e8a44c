/*
 * svm.h - C-support vector classification on a precomputed Gram matrix
 * (core, no PostgreSQL headers, no allocation: the caller passes workspace).
 *
 *   km_smo_solve    libsvm's Solver: the dual min 1/2 a^T Q a + p^T a,
 *                   0 <= a_t <= C_t, y^T a = 0 by SMO with second-order
 *                   working set selection (Fan, Chen & Lin 2005), shrinking
 *                   and gradient reconstruction; C-SVC and epsilon-SVR
 *                   (svr.h) are instances
 *   km_svm_binary   the binary C-SVC dual (km_smo_solve with p = -1)
 *   km_platt_fit    Platt scaling (Lin, Lin & Weng 2007, as libsvm's
 *                   sigmoid_train); km_platt_prob evaluates it
 *   km_svm_binary_probability  out-of-fold decision values on caller-given
 *                   folds, then Platt (as libsvm's svm_binary_svc_probability)
 *   km_svm_train    k >= 2 classes: binary, or one-vs-one as libsvm, written
 *                   in the model layout (alpha n x q column-major, intercepts q)
 *   km_svm_vote, km_svm_proba  a class and class probabilities from the q
 *                   decision values of one row (pairwise coupling, Wu, Lin &
 *                   Weng 2004 method 2, as libsvm's multiclass_probability)
 *
 * The Gram matrix K is FULL and symmetric (both triangles: km_gram_lower then
 * km_symmetrize), column-major with leading dimension ld; a problem names the
 * rows of K it uses, so one-vs-one and the internal folds train on sub-blocks
 * of one matrix without copying it.
 *
 * The dual: min 1/2 a^T Q a - e^T a, 0 <= a_i <= C_i, y^T a = 0, with
 * Q_ij = y_i y_j K_ij.  The decision function is
 *   f(x) = sum_i coef_i K(x_i, x) + b,  coef_i = y_i a_i,  b = -rho,
 * rho by libsvm's rule (the mean of y_i G_i over free support vectors, else
 * the middle of the feasible interval).  Issue 13's objective
 * (1/n) sum hinge + (lambda/2) ||f||^2 is this dual with C = 1 / (n lambda).
 *
 * Convergence: stops when the maximal KKT violation m(a) - M(a) <= tol
 * (libsvm's eps, default 1e-3).  If max_iter iterations pass first, every
 * output is still written (the last iterate, rho from it) and the function
 * returns KM_ERR_INACCURATE with err filled: the glue turns it into a
 * WARNING and keeps the model (libsvm's behaviour), or into ERROR 22000.
 * KM_ERR_DIVERGED: a gradient became non-finite (K was not finite).
 * KM_ERR_INVALID: bad arguments (labels not +-1, C <= 0, tol <= 0 ...).
 */
#ifndef KM_SVM_H
#define KM_SVM_H

#include "core.h"
#include "class_prob.h"
#include "kernels.h"

typedef struct km_svm_params
{
	double		tol;			/* max KKT violation at the end; 1e-3 as libsvm */
	uint64_t	max_iter;		/* 0: libsvm's max(10^7, 100 m) for m rows */
	bool		shrinking;		/* libsvm's shrinking heuristic (default true) */
} km_svm_params;

/* tol 1e-3, max_iter 0 (libsvm's default), shrinking true. */
km_svm_params km_svm_params_default(void);

/* A binary problem on rows of a Gram matrix. */
typedef struct km_svm_problem
{
	const double *K;			/* full symmetric Gram matrix, column-major */
	size_t		ld;				/* its leading dimension */
	const uint32_t *rows;		/* m rows (and columns) of K used, or NULL: 0..m-1 */
	size_t		m;				/* >= 2, both labels present */
	const double *y;			/* m labels, +1 or -1, in the order of rows */
	const double *C;			/* m upper bounds C_i > 0 (C times the class weight) */
	km_gram_cols *cols;			/* or NULL: K is full; else K's columns on demand */
} km_svm_problem;

typedef struct km_svm_result
{
	double		b;				/* intercept, -rho */
	double		objective;		/* 1/2 a^T Q a - e^T a at the end */
	double		violation;		/* max KKT violation m(a) - M(a) at the end */
	uint64_t	iterations;
	uint32_t	n_sv;			/* a_i > 0 */
	uint32_t	n_bounded_sv;	/* a_i == C_i */
	bool		converged;		/* violation <= tol within max_iter */
} km_svm_result;

/*
 * libsvm's general Solver problem over l variables: variable t has sign
 * y_t = +-1, linear term p_t, bound C_t and reads row rows[t] of K (rows may
 * repeat: epsilon-SVR's variables t and t + n both read row t), so
 *   Q_st = y_s y_t K(rows[s], rows[t]).
 * C-SVC: rows = its rows, y = labels, p = -1 (p NULL).  epsilon-SVR (svr.c):
 * l = 2n, rows t mod n, y = +1 then -1, p = eps - y_i then eps + y_i.
 */
typedef struct km_smo_problem
{
	const double *K;			/* full symmetric Gram matrix, column-major */
	size_t		ld;				/* its leading dimension */
	km_gram_cols *cols;			/* or NULL: K is full; else K's columns on demand */
	const uint32_t *rows;		/* l rows of K, or NULL: variable t reads row t */
	size_t		l;				/* >= 2 variables */
	const double *y;			/* l signs, +1 or -1 */
	const double *p;			/* l finite linear terms, or NULL: -1 each */
	const double *C;			/* l upper bounds C_t > 0 */
} km_smo_problem;

/* Doubles of workspace km_smo_solve needs for l variables. */
size_t		km_smo_doubles(size_t l);

/*
 * Solves the dual from a = 0: alpha (l, problem order) gets a (not y a), res
 * the intercept b = -rho (libsvm's rule), the objective 1/2 a^T Q a + p^T a,
 * the iterations and the counts of variables with a_t > 0 and a_t == C_t.
 * Stopping, max_iter (default max(10^7, 100 l)), interrupts and statuses as
 * km_svm_binary (KM_ERR_INACCURATE with every output written).
 * KM_ERR_INVALID: l < 2, tol <= 0, a sign not +-1, C_t not positive and
 * finite, p_t not finite.  The row map needs no check: rows[t] < the
 * columns of K is the caller's promise.
 */
km_status	km_smo_solve(const km_smo_problem *prob, const km_svm_params *par,
						 double *alpha, km_svm_result *res, double *work,
						 km_error *err, km_interrupt_fn interrupt);

/*
 * km_smo_solve from a feasible a0 (l, problem order; 0 <= a0_t <= C_t, and
 * y^T a0 the equality's right-hand side, which SMO keeps): libsvm's
 * one-class start (oneclass.h).  a0 NULL: km_smo_solve.  KM_ERR_INVALID
 * also when an a0_t lies outside [0, C_t].
 */
km_status	km_smo_solve_from(const km_smo_problem *prob, const double *alpha0,
							  const km_svm_params *par, double *alpha,
							  km_svm_result *res, double *work, km_error *err,
							  km_interrupt_fn interrupt);

/* Doubles of workspace km_svm_binary needs for m rows. */
size_t		km_svm_binary_doubles(size_t m);

/*
 * Solves the dual; coef (m, in the order of prob->rows) gets y_i a_i and res
 * the intercept and counts.  Calls interrupt after every 2^22 kernel entries
 * read (tens of ms), inside gradient reconstruction too.
 */
km_status	km_svm_binary(const km_svm_problem *prob, const km_svm_params *par,
						  double *coef, km_svm_result *res, double *work,
						  km_error *err, km_interrupt_fn interrupt);

/*
 * Platt scaling: P(y = +1 | f) = 1 / (1 + exp(A f + B)) fitted to m decision
 * values dec and labels y (+1 / -1) by Newton with backtracking on the
 * cross-entropy with libsvm's prior-corrected targets (N+ + 1) / (N+ + 2)
 * and 1 / (N- + 2); stops when the gradient is below 1e-11 per row (tighter
 * than libsvm's 1e-5) or after 100 iterations.  KM_ERR_INVALID if m == 0;
 * KM_ERR_INACCURATE (A, B still written) if the line search fails before
 * the gradient is below 1e-5 (libsvm's own criterion).
 */
km_status	km_platt_fit(const double *dec, const double *y, size_t m,
						 double *A, double *B, km_error *err);


/*
 * Out-of-fold decision values: for each fold id v < n_folds, fits the binary
 * SVM on the rows with fold[i] != v (same y, C) and evaluates it on the rows
 * with fold[i] == v (a fold whose training part misses a label gives +1 or
 * -1, as libsvm); then km_platt_fit on all m values.  fold: m ids in the
 * order of prob->rows (the glue derives them from row hashes).  dec (m, may
 * be NULL) receives the out-of-fold values.  A fold fit that does not
 * converge is kept (libsvm's behaviour) and counted in *not_converged (may
 * be NULL).
 */
size_t		km_svm_binary_probability_doubles(size_t m);
km_status	km_svm_binary_probability(const km_svm_problem *prob,
									  const km_svm_params *par,
									  const uint32_t *fold, uint32_t n_folds,
									  double *A, double *B, double *dec,
									  uint32_t *not_converged, double *work,
									  km_error *err, km_interrupt_fn interrupt);

/* k classes: q decision values per row. */
static inline uint32_t
km_svm_outputs(uint32_t k)
{
	return k == 2 ? 1 : k * (k - 1) / 2;
}

/*
 * A k-class problem on all n rows of K.  k == 2 is binary in the model's
 * KM_MULTICLASS_BINARY convention: one output, f > 0 means class 1 (y = +1
 * for class 1).  k >= 3 is one-vs-one as libsvm: q = k(k-1)/2 machines in the
 * order (0,1),(0,2)..(0,k-1),(1,2)..; machine (s,t) trains on the rows of
 * classes s and t (in row order) with y = +1 for s, so f > 0 votes for s
 * (KM_MULTICLASS_OVO).
 */
typedef struct km_svm_multi_problem
{
	const double *K;			/* full symmetric n x n Gram matrix, column-major */
	size_t		ld;
	size_t		n;
	const uint32_t *cls;		/* n class indices < k */
	uint32_t	k;				/* >= 2, every class present */
	const double *C;			/* k: C_c = C * weight of class c, > 0 */
	const uint32_t *fold;		/* n fold ids < n_folds for Platt, or NULL: no probability */
	uint32_t	n_folds;		/* >= 2 when fold is given (libsvm uses 5) */
	km_gram_cols *cols;			/* or NULL: K is full; else K's columns on demand */
} km_svm_multi_problem;

typedef struct km_svm_multi_result
{
	uint64_t	iterations;		/* sum over machines (final fits only) */
	double		objective;		/* sum of the machines' dual objectives */
	double		violation;		/* largest final KKT violation of a machine */
	uint32_t	n_sv;			/* rows with a nonzero coefficient in some machine */
	uint32_t	n_bounded_sv;	/* sum over machines of a_i == C_i */
	uint32_t	not_converged;	/* final machines stopped by max_iter */
	uint32_t	folds_not_converged;	/* Platt fold fits stopped by max_iter */
} km_svm_multi_result;

/* Doubles of workspace km_svm_train needs (with probability: fold given). */
size_t		km_svm_train_doubles(size_t n, uint32_t k, bool probability);

/*
 * Trains the q machines.  alpha: n x q column-major, alpha[i + p n] = y_i a_i
 * of row i in machine p, 0 where row i is not in machine p or not a support
 * vector; intercepts: q.  prob_A, prob_B: q each when pr->fold is given
 * (Platt per machine on out-of-fold values), else unused (may be NULL).
 * Returns KM_ERR_INACCURATE, every output written, if a final machine
 * stopped at max_iter (res->not_converged says how many); fold fits that stop
 * at max_iter only count in res->folds_not_converged.
 */
km_status	km_svm_train(const km_svm_multi_problem *pr, const km_svm_params *par,
						 double *alpha, double *intercepts, double *prob_A,
						 double *prob_B, km_svm_multi_result *res, double *work,
						 km_error *err, km_interrupt_fn interrupt);

/*
 * Keeps only the rows with a nonzero coefficient in some output: writes their
 * indices (increasing) to keep (n entries of room) and moves alpha in place
 * to n_keep x q column-major.  Returns n_keep.  The glue then keeps the same
 * rows of X.
 */
size_t		km_svm_compact(double *alpha, size_t n, uint32_t q, uint32_t *keep);

/*
 * The class of a row from its q decision values: k == 2, class 1 if
 * dec[0] > 0 else 0; k >= 3, one-vs-one votes (dec > 0 votes for s, else t,
 * as libsvm), the most votes, ties to the smaller class index.  votes: k.
 */
uint32_t	km_svm_vote(uint32_t k, const double *dec, uint32_t *votes);


#endif							/* KM_SVM_H */
