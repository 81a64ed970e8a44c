/*
 * primal_pass.h - the feature and decision-value work of a block of rows
 * for the approximate models' primal Newton (core: plain C99, no
 * PostgreSQL header, no allocation): a block's features in pieces,
 * whitened for nystrom, the coefficients unwhitened, the decision values,
 * and the outputs of k classes.  The Newton passes themselves, every
 * output at once, are the learner's one Newton (learn/newton.h).
 */
#ifndef KM_PRIMAL_PASS_H
#define KM_PRIMAL_PASS_H

#include "approx.h"
#include "primal.h"

/* Outputs for k classes: 1 (binary) or k (one-vs-rest). */
uint32_t	km_primal_outputs(uint32_t k);

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
