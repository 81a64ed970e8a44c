/*
 * approx_pass.c - the block numerics of a named approximate classifier
 * trained by passes (approx_pass.h): what approx_classify.c does to a block
 * of collected rows, for a block of rows read from the stored query.
 */
#include "postgres.h"

#include <cblas.h>

#include "miscadmin.h"

#include "approx_pass.h"
#include "pgutil.h"

/* Flops of one uninterruptible BLAS piece (about 0.1 s on one core), as approx_classify.c. */
#define PASS_PIECE_FLOPS 1e9

void
km_pass_features(const km_basis *b, const double *L, const double *Xs, int64 r,
				 double *Z, double *fwork, int64 first_row)
{
	uint32		d = b->d;
	uint32		m = b->m;
	int64		piece;
	km_error	err;

	piece = (int64) Max(1.0, Min((double) r, PASS_PIECE_FLOPS /
								 ((double) m * (2.0 * d + (L != NULL ? m : 0.0)))));
	for (int64 p0 = 0; p0 < r; p0 += piece)
	{
		int64		pr = Min(piece, r - p0);
		double	   *Zp = Z + (size_t) p0 * m;

		if (km_approx_features(b, Xs + (size_t) p0 * d, (size_t) pr, Zp, fwork,
							   &err) != KM_OK)
		{
			elog(DEBUG1, "features of the block from row " INT64_FORMAT, first_row + p0 + 1);
			km_raise(&err);
		}
		if (L != NULL)
			/* rows of Z are the columns of a column-major m x pr matrix: L^-1 Z^T */
			cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
						CblasNonUnit, (int) m, (int) pr, 1.0, L, (int) m, Zp, (int) m);
		CHECK_FOR_INTERRUPTS();
	}
}

void
km_pass_decisions(const double *Z, int64 r, uint32 m, uint32 q, const double *coef,
				  const double *intercepts, double *F)
{
	for (int64 i = 0; i < r; i++)
		memcpy(F + i * q, intercepts, sizeof(double) * q);
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) r, (int) q,
				(int) m, 1.0, Z, (int) m, coef, (int) m, 1.0, F, (int) q);
}

void
km_pass_unwhiten(const double *L, uint32 m, uint32 q, double *coef)
{
	cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasTrans, CblasNonUnit,
				(int) m, (int) q, 1.0, L, (int) m, coef, (int) m);
}
