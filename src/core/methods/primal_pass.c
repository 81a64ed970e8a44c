/*
 * primal_pass.c - a block's features and decision values for the primal
 * Newton of the approximate models (primal_pass.h).
 */
#include <math.h>
#include <string.h>

#include <cblas.h>

#include "kernels.h"
#include "primal_pass.h"

uint32_t
km_primal_outputs(uint32_t k)
{
	return k == 2 ? 1 : k;
}

size_t
km_primal_piece_rows(uint32_t m, uint32_t d, bool whitened, size_t rows,
					 double max_flops)
{
	double		piece = max_flops / ((double) m * (2.0 * d + (whitened ? m : 0.0)));

	piece = fmin((double) rows, piece);
	return (size_t) fmax(1.0, piece);
}

km_status
km_primal_block_features(const km_basis *b, const double *L, const double *Xs,
						 size_t rows, double *Z, double *work, km_error *err)
{
	uint32_t	m = b->m;
	km_status	st = km_approx_features(b, Xs, rows, Z, work, err);

	if (st != KM_OK)
		return st;
	if (L != NULL)
		/* rows of Z are the columns of a column-major m x rows matrix: L^-1 Z^T */
		cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
					CblasNonUnit, (int) m, (int) rows, 1.0, L, (int) m, Z, (int) m);
	return KM_OK;
}

void
km_primal_unwhiten(const double *L, uint32_t m, uint32_t q, double *coef)
{
	cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
				(int) m, (int) q, 1.0, L, (int) m, coef, (int) m);
}

void
km_primal_decisions(const double *Z, size_t rows, uint32_t m, uint32_t q,
					const double *coef, const double *intercepts, double *F)
{
	for (size_t i = 0; i < rows; i++)
		memcpy(F + i * q, intercepts, sizeof(double) * q);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) q,
				(int) m, 1.0, Z, (int) m, coef, (int) m, 1.0, F, (int) q);
}
