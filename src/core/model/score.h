/*
 * score.h - scoring a decoded model (core, no PostgreSQL headers).
 *
 * A km_scorer is prepared once per model: the expansion rows transposed
 * (feature-major, the layout km_kernel_row_dot wants) with their kernel
 * norms for exact and nystrom models, nothing more for rff (W and b are
 * the model's).  It then gives the q decision values of a raw feature row
 * (standardized with the model's scaler first):
 *   exact, nystrom: f_j(x) = b_j + sum_i alpha_ij K(x_i, x)
 *                   (x_i the training rows, or the nystrom centres);
 *   rff:            f_j(x) = b_j + sum_i alpha_ij z_i(x),
 *                   z(x) = sqrt(2 / D) cos(W^T x + b_rff) (km_rff_map).
 * One output of an exact model is the same double, bit for bit, as
 * kernel_predict computed before the scorer existed (and as format 1
 * models predicted in 0.1.0).
 */
#ifndef KM_SCORE_H
#define KM_SCORE_H

#include "model.h"

typedef struct km_scorer
{
	const km_model *m;
	double	   *Xt;				/* exact, nystrom: d x n, feature-major */
	double	   *norms;			/* n kernel norms of the rows (if used) */
	double	   *x;				/* d: the row being scored, standardized */
	double	   *work;			/* n: a kernel row; rff: the D features */
	int			bad_feature;	/* after KM_ERR_OVERFLOW: the feature whose
								 * standardized value overflowed, or -1 if
								 * the decision value did */
} km_scorer;

/* Doubles km_scorer_prepare needs for m; 0 on overflow. */
size_t		km_scorer_doubles(const km_model *m);

/*
 * Prepare s for m (which must outlive it) in mem, km_scorer_doubles(m)
 * doubles.  Costs one pass over the expansion.
 */
void		km_scorer_prepare(km_scorer *s, const km_model *m, double *mem);

/*
 * The q decision values of the raw row x (d == n_features finite values)
 * into out.  KM_ERR_OVERFLOW if a standardized feature or a decision value
 * is not finite (s->bad_feature says which).
 */
km_status	km_scorer_decision(km_scorer *s, const double *x, double *out,
							   km_error *err);

/* Doubles of scratch km_scorer_block needs for rows rows; 0 on overflow. */
size_t		km_scorer_block_doubles(const km_model *m, size_t rows);

/*
 * The decision values of rows raw rows X (rows x d, row-major) into out
 * (rows x q, row-major): the features of the block by one GEMM and the
 * kernel's element-wise map (km_gram_cross; rff km_rff_map), the outputs
 * by a second GEMM (rbf of one output: the GEMM gives -gamma times the
 * squared distances, then the exp and the dot with the coefficients are
 * one pass per row, km_rbf_exp_dot).  work has km_scorer_block_doubles(m, rows) doubles
 * (about rows x (n + d)).  The values agree with km_scorer_decision's to
 * rounding, not bit for bit (another summation order).  KM_ERR_OVERFLOW
 * names the row that failed.  No interrupt check: pass bounded blocks.
 */
km_status	km_scorer_block(km_scorer *s, const double *X, size_t rows,
							double *out, double *work, km_error *err);

#endif							/* KM_SCORE_H */
