/*
 * approx_pass.h - the block numerics a named approximate classifier needs
 * between the rows of a pass and primal.h's Newton statistics: whitened
 * features of a block and its decision values (approx_pass.c).  A stand-in
 * for the core's pass interface (init / accumulate a block / combine /
 * step) that approx_classify.c's numerics are moving behind (issue 23):
 * once the core exports "the features of a block, whitened" and "the
 * decision values of a block", this file goes.
 */
#ifndef KM_APPROX_PASS_H
#define KM_APPROX_PASS_H

#include "postgres.h"

#include "approx.h"

/*
 * The features of r standardized rows Xs (r x d, row-major) into Z
 * (r x m, row-major), whitened by L (nystrom: z = L^-1 k(C, x); NULL for
 * rff), in pieces of bounded work with interrupt checks.  fwork:
 * km_approx_features_doubles(b, r).  Raises on a feature that is not
 * finite, naming row first_row + i.
 */
void		km_pass_features(const km_basis *b, const double *L, const double *Xs,
							 int64 r, double *Z, double *fwork, int64 first_row);

/* F (r x q, row-major) = Z coef^T + intercepts: coef q x m, one row per output. */
void		km_pass_decisions(const double *Z, int64 r, uint32 m, uint32 q,
							  const double *coef, const double *intercepts, double *F);

/* coef (m x q, column-major) := L^-T coef: the model's alpha over the centres. */
void		km_pass_unwhiten(const double *L, uint32 m, uint32 q, double *coef);

#endif							/* KM_APPROX_PASS_H */
