/*
 * newton.h - the one Newton that drives every primal loss (core, no
 * PostgreSQL headers; issue 28).
 *
 * LIBLINEAR's shape (newton.h there): one driver, and a loss that adds a
 * block of rows into fixed-size sums at the current point.  The driver
 * holds q outputs (one for regression and binary
 * classification, k for one-vs-rest), asks the host for one pass per step
 * (km_pass_run) and moves the point by primal.h's Newton step.  The losses:
 * primal.h's logistic and squared hinge over class ids and row weights, or
 * a regression method's own (its ops' primal_add and primal_step over real
 * targets: svr's L2-loss epsilon-insensitive tube).
 *
 * Newton-CG ("solver": "cg"): the Newton pass then adds O(m) sums per
 * output only, the gradient and the Hessian's diagonal (no m x m Hessian:
 * the state's packed triangle is replaced by the m diagonal entries
 * sum w L'' z_j^2), and the step's system is solved by learn/cg.h's
 * conjugate gradient, each iteration one more pass (a Hessian-vector pass:
 * Z^T (D (Z v + v_b)) and sum D (Z v + v_b), D = w L'' at the Newton point;
 * N = m + 1 doubles with an intercept, else m), preconditioned by the
 * Hessian's diagonal (Jacobi).  Over nystrom features (nt->Lw: the factor
 * L of K_mm + eps I that whitens them, z = L^-1 k) the passes read the
 * unwhitened k and the m-vectors are whitened instead, once per pass (the
 * point L^-T coef, L^-T v at the pass's init; the sums K^T g, K^T (D u)
 * whitened by L^-1 after it), so that a pass costs O(n m), not the n m^2
 * of whitening every row; its preconditioner is then Falkon's in whitened
 * coordinates, R R^T = (sum w L'' / (W m)) L^T L + lambda I (the Hessian
 * when the rows are drawn like the centres and L'' were constant; the
 * intercept's own diagonal entry).  The line search, the outer stopping rule
 * (gradient norm at most tol times its first value) and max_iter are the
 * direct Newton's (primal.h); the inner CG stops when its preconditioned
 * residual is at most eta = min(0.1, sqrt(|g| / |g0|)) of its start (a
 * forcing term: loose far from the optimum, tight near it, so the outer
 * steps converge superlinearly) or after KM_CG_MAX_ITER passes (the
 * truncated direction is still one of descent).  The loss's derivatives
 * at a row are read from the loss's own add over that row with one
 * feature 1 at coef 0 and b = its decision value, so any loss (primal.h's
 * or a method's primal_add) serves.
 *
 * One-vs-rest (q > 1 outputs, Newton-CG): every output's Newton step is
 * deferred where it would solve (primal.h defer), and the waiting outputs'
 * CGs run in lockstep (km_cg_begin / want / advance / end): each iteration
 * is ONE Hessian-vector pass whose state is q x N doubles, output c's
 * products at c N (each at its own Newton point and D, with its own v),
 * still additive and fixed-size; an output whose CG stopped (its own
 * forcing term or KM_CG_MAX_ITER) or whose Newton is done is not multiplied
 * (no flops; its N sums stay 0), and the pass's point carries which outputs
 * it multiplies and their v (learn/point.h).  Over nystrom features the
 * outputs share one Falkon factor R per Newton round, at the mean of their
 * Hessian scales sum w L'' / W (one m x m factor, not q; each output's own
 * intercept entry and forcing term).  With q = 1 the step asks its
 * direction at once (newton_cg_direction), as before.
 */
#ifndef KM_LEARN_NEWTON_H
#define KM_LEARN_NEWTON_H

#include "learn/cg.h"
#include "learn/pass.h"
#include "method.h"
#include "primal.h"

/*
 * The outputs' passes (every class at once, one-vs-rest; q = 1 for
 * regression and two classes).  The caller sets m, k, q, block and R and points the
 * buffers at memory of the sizes below (km_primal_pass_doubles sums them);
 * the functions below fill the rest.
 */
typedef struct km_primal_pass
{
	uint32_t	m;				/* features */
	uint32_t	k;				/* classes, >= 2 */
	uint32_t	q;				/* outputs: 1 when k = 2, else k */
	bool		cg;				/* Newton-CG: O(m) sums (km_primal_pass_state_doubles) */
	size_t		block;			/* most rows of one km_primal_pass_add */
	const double *R;			/* m x m penalty, column-major (upper read); NULL: I */
	double	   *states;			/* q x km_primal_state_doubles(m): the sums */
	double	   *vecs;			/* q x 2m: the solvers' vectors */
	double	   *swork;			/* km_primal_step_work_doubles(m) */
	double	   *scratch;		/* km_primal_add_scratch_doubles(m, block) */
	double	   *before;			/* m + 1 */
	uint32_t   *yc;				/* block: the 0 / 1 targets of one output */
	km_primal_solver *solvers;	/* q */
	/* set by km_primal_pass_start */
	km_primal_params params;
	double	   *coef;			/* m x q, column c at c m: the point */
	double	   *intercepts;		/* q */
	bool		current;		/* the last step left every output where the
								 * pass evaluated it */
	/*
	 * A regression method's own loss (q = 1): its ops' primal_add over real
	 * targets (km_newton_add) and primal_step; NULL: primal.h's losses over
	 * class ids and row weights, params.loss.
	 */
	const struct km_method_ops *ops;
	const km_fit_params *fit;
	/* Newton-CG: each solver's direction (primal.h km_primal_solver) */
	km_primal_direction_fn direction;
	void	   *direction_arg;
	/*
	 * Newton-CG of q > 1 outputs: the solvers defer their directions
	 * (primal.h defer); after every output's step, lockstep solves the
	 * pending ones' systems at once, from rhs (q x N, output c at c N:
	 * minus its gradient) into rhs (its direction), and their steps end.
	 */
	km_status	(*lockstep) (void *arg, km_error *err);
	double	   *rhs;
	/* optional: called after each output's step (e.g. to log it) */
	void		(*on_step) (void *arg, uint32_t c, const km_primal_solver *s);
	void	   *on_step_arg;
} km_primal_pass;

/*
 * Doubles of the double buffers of a pass (states, vecs, swork, scratch,
 * before) of q outputs over blocks of block rows; 0 on overflow.  yc
 * (block uint32_t) and solvers (q) besides.  cg: Newton-CG's (O(m)).
 */
size_t		km_primal_pass_doubles(uint32_t m, uint32_t q, size_t block, bool cg);

/* Doubles of one output's sums: primal.h's, or Newton-CG's 5 + 3m. */
size_t		km_primal_pass_state_doubles(const km_primal_pass *ps);

/* coef and intercepts := 0, every solver fresh, params kept. */
void		km_primal_pass_start(km_primal_pass *ps, const km_primal_params *p,
								 double *coef, double *intercepts);

/* Zero the sums of the outputs still solving; false when none is. */
bool		km_primal_pass_begin(km_primal_pass *ps);

/*
 * Add rows (<= block) of features Z (rows x m, row-major), class ids cls
 * (< k) and row weights (NULL: 1) into states (q x km_primal_state_doubles(m):
 * ps->states, or a worker's) for every output still solving, at the
 * current point.  KM_ERR_DIVERGED with *bad_output set
 * (and nothing added for it) when a decision value is not finite.
 */
km_status	km_primal_pass_add(km_primal_pass *ps, double *states, const double *Z,
							   size_t rows, const uint32_t *cls, const double *weights,
							   uint32_t *bad_output, km_interrupt_fn interrupt);

/* ps's sums += states (q x km_primal_state_doubles(m), another's sums). */
void		km_primal_pass_combine(km_primal_pass *ps, const double *states);

/*
 * One step of every output still solving from the pass's sums (primal.h's
 * km_primal_step, or the method's own primal_step): the point moves;
 * ps->current says whether no output moved.  An error of a step is
 * returned at once.
 */
km_status	km_primal_pass_step(km_primal_pass *ps, km_error *err,
								km_interrupt_fn interrupt);

/* Sum of the objectives, most Newton steps, every output converged. */
void		km_primal_pass_totals(const km_primal_pass *ps, double *objective,
								  int *iterations, bool *converged);


typedef struct km_newton
{
	km_primal_pass ps;			/* the outputs' sums, solvers, point and loss */
	km_interrupt_fn interrupt;
	size_t		extra;			/* doubles of the pass's tallies after the sums */
	int			passes;			/* Newton passes run */
	/*
	 * Newton-CG (ps.cg): the inner solvers and their Hessian-vector passes,
	 * one per output (q); output c's vectors at c N (c 2m for raw)
	 */
	km_cg	   *cgs;			/* q: output c's CG, its point cgs[c].v (N) */
	bool		hv;				/* the passes asked now are Hessian-vector passes */
	bool	   *on;				/* q: the outputs a Hessian-vector pass multiplies (q > 1) */
	uint32_t	cur;			/* the output whose CG applies its operator */
	bool		no_precondition;	/* CG without Jacobi's preconditioner (measurements) */
	double	   *diag;			/* q x N */
	double	   *dir;			/* q x N: the steps the CGs return (q = 1) */
	double	   *hvout;			/* q x N: a Hessian-vector pass's sums (q > 1) */
	const double *Lw;			/* nystrom: m x m lower L, the passes' features unwhitened; else NULL */
	double	   *raw;			/* q x 2m: L^-T coef and L^-T v, the pass's (its init's) */
	double	   *Rf;				/* with Lw: m x m, Falkon's R (the caller's memory) */
	double	   *W;				/* q: the gradient pass's sums of weights */
	km_pass    *hv_pass;		/* the caller's: its add calls km_newton_hv_add */
	const km_host *host;		/* km_newton_run's */
	int			cg_iterations;	/* Hessian-vector passes run */
} km_newton;

/* Unknowns of a Newton-CG step: m, and the intercept. */
uint32_t	km_newton_unknowns(const km_newton *nt);

/*
 * Bytes of the buffers of q outputs of m features over chunks of block
 * rows (states, vecs, step work, add scratch, before, class targets,
 * solvers), which km_newton_buffers points into (0: overflow).  extra:
 * doubles of the pass's own tallies after the outputs' sums (the pass's
 * state is both: km_newton_state_bytes).
 */
size_t		km_newton_bytes(uint32_t m, uint32_t q, size_t block, size_t extra, bool cg);
void		km_newton_buffers(km_newton *nt, uint32_t m, uint32_t q, size_t block,
							  size_t extra, bool cg, const double *R, void *mem);

/*
 * Bytes of a Newton pass's state: the q outputs' sums and the extra
 * doubles; of a Hessian-vector pass (nt->hv): N doubles.
 */
size_t		km_newton_state_bytes(const km_newton *nt);

/* coef (m x q) and intercepts (q) := 0, every solver fresh. */
void		km_newton_start(km_newton *nt, const km_primal_params *p, double *coef,
							double *intercepts);

/* A Newton pass's init: the sums of the outputs still solving in states zeroed. */
void		km_newton_init_state(const km_newton *nt, double *states);

/*
 * Add a chunk of rows' features Z (rows x m) into states (the pass's
 * state: the q outputs' sums first) for every output still solving: real
 * targets y (a method's loss) or class ids cls with row weights w (NULL:
 * 1).  false (nothing added for that output; *bad its number) when a
 * decision value is not finite.
 */
bool		km_newton_add(km_newton *nt, double *states, const double *Z,
						  size_t rows, const double *y, const uint32_t *cls,
						  const double *w, uint32_t *bad);

/*
 * A Hessian-vector pass's add (Newton-CG, nt->hv): state (N) += Z^T (D u),
 * and sum D u with an intercept, u = Z v + v_b, D = w L'' at the current
 * point.  false when a decision value is not finite.
 */
bool		km_newton_hv_add(km_newton *nt, double *state, const double *Z,
							 size_t rows, const double *y, const uint32_t *cls,
							 const double *w);

/*
 * The Newton passes: while an output solves, zero its sums, run pass on
 * host into nt->ps.states (pass->add calls km_newton_add with the state it
 * is given) and step; Newton-CG's steps run nt->hv_pass on host (nt->hv
 * set: its add calls km_newton_hv_add), progress "newton k, cg j: residual r".  An error of the pass is returned as it is; *step_failed tells a
 * step's failure (the candidate's, in model selection) from the pass's.
 */
km_status	km_newton_run(km_newton *nt, const km_host *host, km_pass *pass,
						  bool *step_failed, km_error *err);

#endif							/* KM_LEARN_NEWTON_H */
