/*
 * primal.h - approximate kernel classifiers solved in the primal by Newton
 * on m-dimensional features z(x) (Nystrom or random Fourier features), one
 * pass over the rows per evaluation, with fixed-size additive statistics
 * (core: plain C99, no PostgreSQL header, no allocation).
 *
 * Objective, for rows with features z_i (m), y_i = +1 (class 1) or -1
 * (class 0), weights w_i > 0, W = sum w_i, f_i = z_i^T coef + b:
 *   J = (1/W) sum_i w_i L(f_i, y_i) + (lambda/2) coef^T R coef
 * with R m x m symmetric positive semi-definite given (K_mm for Nystrom
 * features k(x, c_j), I for random features or whitened Nystrom features)
 * and b unpenalized (0 without fit_intercept).  Losses:
 *   KM_PRIMAL_LOGISTIC  L = log(1 + exp(-y f)),   L' = -y s(-y f), L'' = p(1-p)
 *   KM_PRIMAL_SQHINGE   L = max(0, 1 - y f)^2 (the L2-SVM of LIBLINEAR's
 *                       primal Newton), L' = -2 y max(0, 1 - y f),
 *                       L'' = 2 where 1 - y f > 0 else 0 (the generalized
 *                       Hessian, as LIBLINEAR)
 *
 * STATISTICS ("state"): one pass over the rows at a point (coef, b) adds
 * every row into km_primal_state_doubles(m) doubles, laid out as
 *   [0] rows   [1] sum w   [2] sum w L   [3] sum w L'   [4] sum w L''
 *   [5, 5 + m)           sum w L' z                  (gradient)
 *   [5 + m, 5 + 2m)      sum w L'' z                 (Hessian, coef x b)
 *   [5 + 2m, + m(m+1)/2) sum w L'' z z^T, upper triangle packed column-major
 *                        as LAPACK's 'U': entry (i, j), i <= j, at
 *                        i + j (j + 1) / 2               (Hessian, coef x coef)
 * (KM_PRIMAL_* offsets below).  Sums only: two states of disjoint rows at the
 * same point combine by adding every double (km_primal_combine), so the
 * state is a fixed-size bytea aggregate state across parallel workers; the
 * glue adds its own header (magic, m, the point's identity) around it.
 * km_primal_add adds a block of rows with BLAS: one dgemv for f, one dsyrk
 * on the sqrt(w L'')-scaled rows, two dgemv for the vectors.
 *
 * SOLVER: km_primal_step reads a finished state (the rows' statistics at
 * the point the caller passed in coef, b) and moves (coef, b) to the next
 * point to evaluate, keeping its own small state in a km_primal_solver and
 * 2m doubles (vecs) that the caller keeps between passes.  Each accepted
 * point gets a Newton step: the (m+1) x (m+1) system
 *   [ H/W + lambda R   h_zb/W ] [dcoef]     [ g_z/W + lambda R coef ]
 *   [ h_zb^T/W         h_bb/W ] [ db  ] = - [ g_b/W                 ]
 * (without the last row and column without intercept) by a blocked
 * Cholesky (with one jittered retry, 1e-10 times the mean diagonal, when
 * L'' = 0 leaves it singular); the next pass evaluates coef + t dcoef,
 * t = 1, and the following step accepts it on Armijo (c = 1e-4) or halves t
 * (so a rejected trial costs one more pass; Newton needs few).  Stops when
 * the gradient norm is at most tol (<= 0: KM_PRIMAL_TOL) times its value at
 * the first point (converged), after max_iter Newton steps, or when three
 * accepted steps in a row lowered J by no more than rounding and did not
 * halve the gradient norm (stalled: the gradient's floor; not converged);
 * s->done then, with (coef, b) the last accepted point.
 *
 * Loop for the glue:
 *   km_primal_solver_init(&s, m); coef = 0, b = 0;
 *   do { state = init; for each block: km_primal_add(state, ..., coef, b);
 *        (combine workers' states);
 *        km_primal_step(&s, &p, state, R, coef, &b, vecs, work, ...); }
 *   while (!s.done);
 * Multi-class is one-vs-rest: one solver per class over the same features.
 */
#ifndef KM_PRIMAL_H
#define KM_PRIMAL_H

#include "core.h"

#define KM_PRIMAL_TOL 1e-8
#define KM_PRIMAL_MAX_ITER 50

/* Offsets into the statistics. */
#define KM_PRIMAL_ROWS 0
#define KM_PRIMAL_WSUM 1
#define KM_PRIMAL_LOSS 2
#define KM_PRIMAL_GB 3
#define KM_PRIMAL_HBB 4
#define KM_PRIMAL_GZ 5
#define KM_PRIMAL_HZB(m) (5 + (size_t) (m))
#define KM_PRIMAL_HZZ(m) (5 + 2 * (size_t) (m))

typedef enum km_primal_loss
{
	KM_PRIMAL_LOGISTIC = 1,
	KM_PRIMAL_SQHINGE = 2
} km_primal_loss;

typedef struct km_primal_params
{
	km_primal_loss loss;
	double		lambda;			/* > 0 */
	bool		fit_intercept;
	double		tol;			/* <= 0: KM_PRIMAL_TOL */
	int			max_iter;		/* Newton steps; <= 0: KM_PRIMAL_MAX_ITER */
} km_primal_params;

struct km_primal_solver;

/*
 * A step's direction by another solver (Newton-CG, learn/newton.h): rhs
 * (N = m + 1 with an intercept, else m: minus the gradient) := the
 * solution of the Newton system H d = rhs, from the sums of state at the
 * accepted point.
 */
typedef km_status (*km_primal_direction_fn) (void *arg, const struct km_primal_solver *s,
											 const double *state, double *rhs,
											 km_error *err);

typedef struct km_primal_solver
{
	uint32_t	m;
	int			iterations;		/* Newton steps taken */
	int			passes;			/* statistics read */
	bool		started;		/* a point was accepted */
	bool		converged;
	bool		stalled;		/* stopped at the rounding floor (km_primal_step) */
	int			flat_steps;		/* accepted steps in a row without progress */
	bool		done;			/* stop passing over the rows */
	double		objective;		/* J at the last accepted point */
	double		grad_norm;		/* at the last accepted point */
	double		grad_norm0;		/* at the first point */
	double		slope;			/* gradient . step at the accepted point */
	double		t;				/* step length of the trial */
	double		b_prev;
	double		db;
	/* NULL: the Newton system by Cholesky of the summed Hessian */
	km_primal_direction_fn direction;
	void	   *direction_arg;
	/*
	 * With direction: the caller solves several outputs' systems at once
	 * (Newton-CG in lockstep, learn/newton.h): km_primal_step stops where
	 * it would ask direction, pending set, work's first N doubles minus the
	 * gradient; km_primal_step_finish takes the direction.
	 */
	bool		defer;
	bool		pending;
	double		gb;				/* pending: the gradient's intercept entry */
} km_primal_solver;

/* Doubles of the statistics: 5 + 2m + m(m+1)/2 (0 for m = 0 or too big). */
size_t		km_primal_state_doubles(uint32_t m);
void		km_primal_state_init(double *state, uint32_t m);
/* a += b, both of dimension m. */
void		km_primal_combine(double *a, const double *b, uint32_t m);

/* Scratch for km_primal_add of up to rows rows: rows (m + 2) + m^2. */
size_t		km_primal_add_scratch_doubles(uint32_t m, size_t rows);

/*
 * Add rows rows of features Z (rows x m, row-major), classes cls (0 or 1)
 * and weights (or NULL: 1) at the point (coef, b) into state.  false if a
 * decision value is not finite (nothing added then).  The Hessian update
 * is split into pieces of bounded work with interrupt (may be NULL)
 * called between them.
 */
bool		km_primal_add(double *state, uint32_t m, km_primal_loss loss,
						  const double *Z, size_t rows, const uint32_t *cls,
						  const double *weights, const double *coef, double b,
						  double *scratch, km_interrupt_fn interrupt);

void		km_primal_solver_init(km_primal_solver *s, uint32_t m);

/* vecs: 2m doubles kept with the solver; work: (m + 1)^2 + m scratch. */
size_t		km_primal_step_work_doubles(uint32_t m);

/*
 * Read the statistics at (coef, b), set (coef, b) to the next point (see
 * above), s->done when no further pass is needed.  R: m x m column-major,
 * symmetric (upper triangle read), or NULL for I.  With s->direction the
 * step's system is its (state's Hessian triangle unread; work: m + 1).  KM_ERR_INVALID for an empty state or
 * bad parameters, KM_ERR_NOT_PD if the Newton system stays singular,
 * KM_ERR_DIVERGED on non-finite values.
 */
km_status	km_primal_step(km_primal_solver *s, const km_primal_params *p,
						   const double *state, const double *R, double *coef,
						   double *b, double *vecs, double *work,
						   km_error *err, km_interrupt_fn interrupt);

/*
 * A deferred step's end (s->pending, s->defer): the point moves along d
 * (N doubles: the solution of H d = minus the gradient) as km_primal_step
 * would have moved it with direction's answer d.
 */
km_status	km_primal_step_finish(km_primal_solver *s, const km_primal_params *p,
								  double *coef, double *b, double *vecs, const double *d,
								  km_error *err, km_interrupt_fn interrupt);

#endif							/* KM_PRIMAL_H */
