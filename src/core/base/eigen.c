/*
 * eigen.c - symmetric eigensolver that checks for interrupts between
 * pieces of bounded work.
 *
 * dsyevd = dsytrd (tridiagonalise) + dsterf or dstedc (tridiagonal
 * eigenproblem) + dormtr (back-transformation).  dsytrd and dormtr are
 * loops over blocks; we run those loops ourselves:
 *
 * - dsytrd('L') reduces nb columns at a time with dlatrd, then updates the
 *   trailing matrix with dsyr2k.  dlatrd does nb matrix-vector products
 *   with the whole trailing matrix (memory bound), so nb shrinks as n grows;
 *   the dsyr2k is split into column panels.
 * - dormtr = dormqr on the reflectors; we apply them in groups of
 *   KM_BACK_GROUP to column blocks of Z, as many columns as keep one call
 *   within the flop budget.
 *
 * The tridiagonal's own eigensolvers cannot be split: dsterf is O(n^2)
 * (0.3 s at n = 5,000, 5 s at 22,000) and dstedc takes seconds from
 * n = 3,000 on (test/bench/eig.c).  So we do without them: single
 * eigenvalues by bisection (dstebz, O(n) each), counts by Sturm sequences,
 * and solves with T + lambda I in O(n) (select.c).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "eigen.h"
#include "progress.h"

/*
 * Bytes one dlatrd call may stream (its nb DSYMVs each read the lower
 * triangle of the trailing matrix, 4 m^2 bytes), and flops one BLAS-3
 * piece may do.  On one core of the (loaded) test machine, about 12 GB/s
 * and 10 GFLOP/s: 0.2 s and 0.1 s; see test/bench/eig.c.
 */
#ifndef KM_TRD_BYTES
#define KM_TRD_BYTES 2.4e9
#endif
#ifndef KM_PIECE_FLOPS
#define KM_PIECE_FLOPS 1e9
#endif

/* Below this trailing size the rest goes to LAPACK dsytrd in one call. */
#define KM_TRD_TAIL 64
/* Reflectors applied per dormqr call in the back-transformation. */
#define KM_BACK_GROUP 64
/* dormqr's own workspace besides ncols x nb: its T matrices (LAPACK 3.7+). */
#define KM_ORMQR_TSIZE (65 * 64)

/* LAPACK's dlatrd has no LAPACKE wrapper; gfortran passes string lengths last. */
extern void dlatrd_(const char *uplo, const lapack_int *n, const lapack_int *nb,
					double *a, const lapack_int *lda, double *e, double *tau,
					double *w, const lapack_int *ldw, size_t uplo_len);

int
km_tridiag_panel_width(size_t n)
{
	double		nb = KM_TRD_BYTES / (4.0 * (double) n * (double) n);

	if (nb >= KM_TRD_MAX_NB)
		return KM_TRD_MAX_NB;
	if (nb < 1.0)
		return 1;
	return (int) nb;
}

/* Columns per piece when a piece costs flops_per_column each, at least minimum. */
static size_t
piece_columns(double flops_per_column, size_t minimum)
{
	double		c = KM_PIECE_FLOPS / (flops_per_column > 1.0 ? flops_per_column : 1.0);

	return c < (double) minimum ? minimum : (size_t) c;
}

/*
 * C := C - A B^T - B A^T, lower triangle of the m x m C, A and B m x k,
 * in column panels with an interrupt check after each.
 */
static void
syr2k_lower(size_t m, size_t k, const double *A, size_t lda, const double *B,
			size_t ldb, double *C, size_t ldc, km_interrupt_fn interrupt)
{
	size_t		cols = piece_columns(4.0 * (double) m * (double) k, 16);

	for (size_t c0 = 0; c0 < m; c0 += cols)
	{
		size_t		cb = m - c0 < cols ? m - c0 : cols;
		size_t		below = m - c0 - cb;

		cblas_dsyr2k(CblasColMajor, CblasLower, CblasNoTrans, (int) cb, (int) k,
					 -1.0, A + c0, (int) lda, B + c0, (int) ldb, 1.0,
					 C + c0 + c0 * ldc, (int) ldc);
		if (below > 0)
		{
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) below,
						(int) cb, (int) k, -1.0, A + c0 + cb, (int) lda,
						B + c0, (int) ldb, 1.0, C + (c0 + cb) + c0 * ldc, (int) ldc);
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, (int) below,
						(int) cb, (int) k, -1.0, B + c0 + cb, (int) ldb,
						A + c0, (int) lda, 1.0, C + (c0 + cb) + c0 * ldc, (int) ldc);
		}
		km_check_interrupts(interrupt);
	}
}

void
km_tridiagonalize(double *A, size_t n, int panel, double *d, double *e,
				  double *tau, double *W, km_interrupt_fn interrupt)
{
	size_t		nb = (size_t) (panel > 0 && panel <= KM_TRD_MAX_NB ? panel :
							   km_tridiag_panel_width(n));
	size_t		tail = nb > KM_TRD_TAIL ? nb : KM_TRD_TAIL;
	size_t		i = 0;
	lapack_int	ln = (lapack_int) n;
	lapack_int	lnb = (lapack_int) nb;

	km_progress_work_begin();
	/* dsytrd('L'): the same loop, with a check after every piece */
	for (; n > tail && i < n - tail; i += nb)
	{
		lapack_int	m = (lapack_int) (n - i);
		double	   *Aii = A + i + i * n;

		dlatrd_("L", &m, &lnb, Aii, &ln, e + i, tau + i, W, &ln, 1);
		km_check_interrupts(interrupt);
		syr2k_lower(n - i - nb, nb, Aii + nb, n, W + nb, n,
					Aii + nb + nb * n, n, interrupt);
		for (size_t j = i; j < i + nb; j++)
		{
			A[(j + 1) + j * n] = e[j];
			d[j] = A[j + j * n];
		}
		/* left: the trailing matrix's reduction, about (n - i - nb)^3 */
		km_progress_fraction(1.0 - pow((double) (n - i - nb) / (double) n, 3.0),
							 "tridiagonal panel %zu of %zu", i / nb + 1, (n - tail + nb - 1) / nb);
	}
	/* the last few columns, unblocked: small */
	LAPACKE_dsytrd_work(LAPACK_COL_MAJOR, 'L', (lapack_int) (n - i),
						A + i + i * n, ln, d + i, e + i, tau + i, W,
						(lapack_int) (n * KM_TRD_MAX_NB));
	km_check_interrupts(interrupt);
}

size_t
km_back_transform_doubles(size_t n)
{
	return n * KM_BACK_GROUP + KM_ORMQR_TSIZE;
}

void
km_back_transform(const double *A, size_t n, const double *tau, double *Z,
				  double *work, km_interrupt_fn interrupt)
{
	size_t		groups;

	if (n < 2)
		return;
	/*
	 * dormtr('L', 'L', 'N') is dormqr on the n - 1 reflectors stored from
	 * row 1: reflector j acts on rows j + 1 .. n - 1.  Q Z = H(0) (H(1) (...
	 * Z)), so the last group goes first; columns of Z are independent.
	 */
	groups = (n - 1 + KM_BACK_GROUP - 1) / KM_BACK_GROUP;
	km_progress_work_begin();
	for (size_t g = groups; g-- > 0;)
	{
		size_t		j0 = g * KM_BACK_GROUP;
		size_t		k = n - 1 - j0 < KM_BACK_GROUP ? n - 1 - j0 : KM_BACK_GROUP;
		size_t		m = n - 1 - j0;
		size_t		cols = piece_columns(4.0 * (double) m * (double) k, 32);

		for (size_t c0 = 0; c0 < n; c0 += cols)
		{
			size_t		cb = n - c0 < cols ? n - c0 : cols;

			LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'N', (lapack_int) m,
								(lapack_int) cb, (lapack_int) k,
								A + (j0 + 1) + j0 * n, (lapack_int) n, tau + j0,
								Z + (j0 + 1) + c0 * n, (lapack_int) n, work,
								(lapack_int) km_back_transform_doubles(n));
			km_check_interrupts(interrupt);
		}
		/* done: the groups from j0 on, reflectors of n - 1 - j0 rows at most */
		km_progress_fraction(pow((double) (n - j0) / (double) n, 2.0),
							 "reflector group %zu of %zu", groups - g, groups);
	}
}

double
km_tridiag_eigenvalue(const double *d, const double *e, size_t n, size_t k,
					  double *work, int *iwork)
{
	lapack_int	il = (lapack_int) k + 1;
	lapack_int	m = 0;
	lapack_int	nsplit = 0;
	lapack_int	info;

	/* abstol 0: dstebz bisects to the accuracy dsterf reaches */
	info = LAPACKE_dstebz_work('I', 'E', (lapack_int) n, 0.0, 0.0, il, il,
							   0.0, d, e, &m, &nsplit, work, iwork, iwork + n,
							   work + n, iwork + 2 * n);
	if (info != 0 || m < 1)
		return NAN;
	return work[0];
}

size_t
km_tridiag_count_below(const double *d, const double *e, size_t n, double x)
{
	/* the Sturm count of LAPACK's dlaebz: negative pivots of T - x I = L D L^T */
	double		pivmin = DBL_MIN;
	double		q = d[0] - x;
	size_t		count = 0;

	for (size_t i = 0; i < n; i++)
	{
		if (i > 0)
			q = d[i] - x - e[i - 1] * e[i - 1] / q;
		if (fabs(q) < pivmin)
			q = -pivmin;
		if (q < 0.0)
			count++;
	}
	return count;
}
