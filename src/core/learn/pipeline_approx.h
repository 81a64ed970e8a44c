/*
 * pipeline_approx.h - km_train's approximate regression (core, no
 * PostgreSQL headers): a representation with a basis (repr.h), rows in
 * memory (pipeline_approx.c); its sums pass over a given basis and its
 * solve from ridge's sums (km_learn_sums_pass, km_learn_sums_model), which
 * the kernel_train(features, y, options, basis) aggregate asks too.
 */
#ifndef KM_PIPELINE_APPROX_H
#define KM_PIPELINE_APPROX_H

#include "learn/pass.h"
#include "pipeline_types.h"

/*
 * Approximate regression (pipeline_approx.c; the regression task's road
 * in km_train): its sizes into plan (opts resolved; k is 0), and the
 * training itself, the learner's over a host (learn/learner.h km_learn;
 * rows: the shape).
 */
void		km_train_plan_approx(size_t n, int d, uint32_t k, km_train_plan *plan);

/*
 * Ridge's sums pass (nystrom or rff, "statistics") over a given basis:
 * the pass the learner asks after its own basis pass, here over the bytes
 * of a basis from kernel_basis (copied, decoded as untrusted input, its
 * draw done), for the kernel_train(features, y, options, basis)
 * aggregate.  Its kind, point, state, chunks (256 rows) and add are the
 * learner's, so the aggregate's states are its states.  Memory from env.
 */
km_status	km_learn_sums_pass(const void *basis, size_t len, const km_train_env *env,
							   km_pass **out, km_error *err);

/*
 * The learner's basis pass (the sample step: every row into a reservoir
 * by its hash, the scaler's sums) for options o resolved for rows of d
 * features: the pass km_train's approximate roads ask first, here for the
 * kernel_basis(features, options) aggregate, whose states are its states
 * (basis.h km_basis_state; the rows' hashes the host's).  Memory from env.
 */
km_status	km_learn_basis_pass(const km_options *o, int d, const km_train_env *env,
								km_pass **out, km_error *err);

/* The kind of the sums pass (learn/pass.h kind), as its descriptors store it. */
#define KM_LEARN_SUMS_KIND 2
/* The kind of the basis pass. */
#define KM_LEARN_BASIS_KIND 1

/* What the solve from ridge's sums takes besides them. */
typedef struct km_sums_fit
{
	const double *lambdas;		/* 1 .. KM_APPROX_MAX_LAMBDAS, each > 0 */
	int			n_lambdas;
	bool		fit_intercept;
	bool		keep_gp;		/* the "uncertainty" option's factor */
	bool		evidence;		/* "cv": "evidence" */
	uint64_t	rows_skipped;
} km_sums_fit;

/*
 * The model from a sums pass's state (its rows all added; its header
 * checked against the pass, its values the caller's: the learner's own,
 * or validated by the glue, accum.h km_accum_validate): the closed-form ridge with GCV over the
 * lambdas, the learner's finish after its sums pass, over the pass's
 * basis.  The two-pass form's final function asks it with the sums its
 * states combined.
 */
km_status	km_learn_sums_model(const km_pass *sums, const void *state,
								const km_sums_fit *fit, const km_train_env *env,
								km_model *m, km_error *err);

#endif							/* KM_PIPELINE_APPROX_H */
