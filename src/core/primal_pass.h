/*
 * primal_pass.h - the passes of an approximate classifier's primal Newton
 * (primal.h) over blocks of rows, for every class at once (one-vs-rest),
 * and the feature and decision-value work of a block (core: plain C99, no
 * PostgreSQL header, no allocation).
 *
 * A driver (the one-statement aggregates in src/sql, the catalog's SQL
 * passes) owns the rows and the memory; this file owns the numbers:
 *
 *   km_primal_pass_start(&ps, &params, coef, intercepts);  coef = 0, b = 0
 *   while (km_primal_pass_begin(&ps))            zero the active sums
 *   {
 *       for each block of rows (any split, any process):
 *           km_primal_block_features(...)        z, whitened (nystrom)
 *           km_primal_pass_add(&ps, Z, rows, cls, weights, ...)
 *       (a worker's ps.states into the leader's: km_primal_pass_combine)
 *       km_primal_pass_step(&ps, err, interrupt) every active class's step
 *   }
 *   km_primal_pass_totals(&ps, ...)
 *
 * The sums of a pass are additive (primal.h): two blocks added into one
 * state, or each into its own state and the states combined, give the
 * same doubles bit for bit.  Outputs: q = 1 for two classes (class ids 0 /
 * 1 are the targets), else q = k, output c solving class c against the
 * rest; every output shares the rows' features.
 */
#ifndef KM_PRIMAL_PASS_H
#define KM_PRIMAL_PASS_H

#include "approx.h"
#include "primal.h"

/*
 * The passes' state.  The caller sets m, k, q, block and R and points the
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
	/* optional: called after each output's step (e.g. to log it) */
	void		(*on_step) (void *arg, uint32_t c, const km_primal_solver *s);
	void	   *on_step_arg;
} km_primal_pass;

/* Outputs for k classes: 1 (binary) or k (one-vs-rest). */
uint32_t	km_primal_outputs(uint32_t k);

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
 * (< k) and row weights (NULL: 1) into the sums of every output still
 * solving, at the current point.  KM_ERR_DIVERGED with *bad_output set
 * (and nothing added for it) when a decision value is not finite.
 */
km_status	km_primal_pass_add(km_primal_pass *ps, const double *Z, size_t rows,
							   const uint32_t *cls, const double *weights,
							   uint32_t *bad_output, km_interrupt_fn interrupt);

/* ps's sums += states (q x km_primal_state_doubles(m), another's sums). */
void		km_primal_pass_combine(km_primal_pass *ps, const double *states);

/*
 * One step of every output still solving from the pass's sums (primal.h's
 * km_primal_step): the point moves; ps->current says whether no output
 * moved.  An error of a step is returned at once.
 */
km_status	km_primal_pass_step(km_primal_pass *ps, km_error *err,
								km_interrupt_fn interrupt);

/* Sum of the objectives, most Newton steps, every output converged. */
void		km_primal_pass_totals(const km_primal_pass *ps, double *objective,
								  int *iterations, bool *converged);

/*
 * Rows per piece of a block's features so that one piece is at most
 * max_flops (2 m d per row, and m^2 more when whitened); 1 .. rows.
 */
size_t		km_primal_piece_rows(uint32_t m, uint32_t d, bool whitened,
								 size_t rows, double max_flops);

/*
 * Z (rows x m, row-major) := the features of standardized rows Xs (rows x
 * d) under b (km_approx_features, work as there), whitened by L^-1 when L
 * (m x m column-major lower, km_approx_factor) is not NULL.
 */
km_status	km_primal_block_features(const km_basis *b, const double *L,
									 const double *Xs, size_t rows, double *Z,
									 double *work, km_error *err);

/* alpha := L^-T w for the q columns of coef (m x q column-major), in place. */
void		km_primal_unwhiten(const double *L, uint32_t m, uint32_t q,
							   double *coef);

/* F (rows x q, row-major) := Z coef + intercepts. */
void		km_primal_decisions(const double *Z, size_t rows, uint32_t m,
								uint32_t q, const double *coef,
								const double *intercepts, double *F);

#endif							/* KM_PRIMAL_PASS_H */
