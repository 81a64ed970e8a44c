/*
 * newton.h - the one Newton that drives every primal loss (core, no
 * PostgreSQL headers; issue 28).
 *
 * LIBLINEAR's shape (newton.h there): one driver, and a loss that adds a
 * block of rows into fixed-size sums at the current point.  The driver
 * holds q outputs (primal_pass.h: one for regression and binary
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
#include "primal_pass.h"

typedef struct km_newton
{
	km_primal_pass ps;			/* the outputs' sums, solvers and point */
	/* a regression method's own loss (q = 1), or NULL: primal.h's over classes */
	const km_method_ops *ops;
	const km_fit_params *fit;
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

/*
 * Add a chunk of rows' features Z (rows x m) into the sums of every output
 * still solving: real targets y (a method's loss) or class ids cls with row
 * weights w (NULL: 1).  false (nothing added for that output; *bad its
 * number) when a decision value is not finite.
 */
bool		km_newton_add(km_newton *nt, const double *Z, size_t rows,
						  const double *y, const uint32_t *cls, const double *w,
						  uint32_t *bad);

/*
 * The Newton passes: while an output solves, zero its sums, run pass on
 * host (pass->add calls km_newton_add; its state is nt->ps.states) and
 * step.  An error of the pass is returned as it is; *step_failed tells a
 * step's failure (the candidate's, in model selection) from the pass's.
 */
km_status	km_newton_run(km_newton *nt, const km_host *host, km_pass *pass,
						  bool *step_failed, km_error *err);

#endif							/* KM_LEARN_NEWTON_H */
