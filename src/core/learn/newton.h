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
 * targets: svr's L2-loss epsilon-insensitive tube).  Room for a PCG inner
 * solver: it would replace the step, not the passes.
 */
#ifndef KM_LEARN_NEWTON_H
#define KM_LEARN_NEWTON_H

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
	size_t		block;			/* most rows of one km_primal_pass_add */
	const double *R;			/* m x m penalty, column-major (upper read) */
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
	/* optional: called after each output's step (e.g. to log it) */
	void		(*on_step) (void *arg, uint32_t c, const km_primal_solver *s);
	void	   *on_step_arg;
} km_primal_pass;

/*
 * Doubles of the double buffers of a pass (states, vecs, swork, scratch,
 * before) of q outputs over blocks of block rows; 0 on overflow.  yc
 * (block uint32_t) and solvers (q) besides.
 */
size_t		km_primal_pass_doubles(uint32_t m, uint32_t q, size_t block);

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
} km_newton;

/*
 * Bytes of the buffers of q outputs of m features over chunks of block
 * rows (states, vecs, step work, add scratch, before, class targets,
 * solvers), which km_newton_buffers points into (0: overflow).  extra:
 * doubles of the pass's own tallies after the outputs' sums (the pass's
 * state is both: km_newton_state_bytes).
 */
size_t		km_newton_bytes(uint32_t m, uint32_t q, size_t block, size_t extra);
void		km_newton_buffers(km_newton *nt, uint32_t m, uint32_t q, size_t block,
							  size_t extra, const double *R, void *mem);

/* Bytes of a Newton pass's state: the q outputs' sums and the extra doubles. */
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
 * The Newton passes: while an output solves, zero its sums, run pass on
 * host into nt->ps.states (pass->add calls km_newton_add with the state it
 * is given) and step.  An error of the pass is returned as it is; *step_failed tells a
 * step's failure (the candidate's, in model selection) from the pass's.
 */
km_status	km_newton_run(km_newton *nt, const km_host *host, km_pass *pass,
						  bool *step_failed, km_error *err);

#endif							/* KM_LEARN_NEWTON_H */
