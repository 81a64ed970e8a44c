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

/* ---- the top eigenpairs: thick-restart block Lanczos (eigen.h) ---- */

/*
 * Block size b = k + max(k, KM_TOP_EXTRA); basis and restart sizes in
 * blocks.  Wider blocks converged in fewer passes and less time at 10,000
 * rows of the benchmark's data (k = 2: b = 4, 6, 10, 16 took 40, 27, 14,
 * 11 passes; k = 16: b = 24, 32 took 9, 7), and a pass of 16 or more
 * columns is bound by flops, not by reading the matrix.
 */
#ifndef KM_TOP_EXTRA
#define KM_TOP_EXTRA 14
#endif
#ifndef KM_TOP_BASIS_BLOCKS
#define KM_TOP_BASIS_BLOCKS 6
#endif
#ifndef KM_TOP_KEEP_BLOCKS
#define KM_TOP_KEEP_BLOCKS 3
#endif
/* The start block's seed ("kmtop", any fixed value) */
#define KM_TOP_SEED UINT64_C(0x6b6d746f70)
/* Beyond this k the sizes could overflow (and dsyevr is the better tool). */
#define KM_TOP_MAX_K (1 << 20)
/* A column that keeps less than this share of its norm is rebuilt from the seed. */
#define KM_TOP_DEPENDENT 1e-10

int
km_eigen_top_block(int k)
{
	if (k < 1 || k > KM_TOP_MAX_K)
		return 0;
	return k + (k > KM_TOP_EXTRA ? k : KM_TOP_EXTRA);
}

size_t
km_eigen_top_basis(int k)
{
	return (size_t) KM_TOP_BASIS_BLOCKS * (size_t) km_eigen_top_block(k);
}

/* restart size: at least k + 1 Ritz pairs and one block */
static size_t
top_keep(int k)
{
	return (size_t) KM_TOP_KEEP_BLOCKS * (size_t) km_eigen_top_block(k);
}

size_t
km_eigen_top_doubles(size_t n, int k)
{
	size_t		mm,
				cols;

	if (k < 1 || k > KM_TOP_MAX_K)
		return 0;
	mm = km_eigen_top_basis(k);
	cols = 2 * mm + top_keep(k);
	if (n > (SIZE_MAX / sizeof(double) - 80 * mm * mm) / cols)
		return 0;
	/* Q, W, the restart's n x keep; H, its eigenvectors, theta, dsyev's work, a block's Q'P */
	return n * cols + 2 * mm * mm + mm + 66 * mm + mm * mm;
}

/* splitmix64: uniform in [-1, 1) */
static double
top_random(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (double) (z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/*
 * Y := A X for the n x n symmetric A (lower triangle) and n x b blocks, in
 * column panels of A: the diagonal block by DSYMM, the panel below it by
 * two DGEMMs (once as A[below, panel], once transposed).
 */
static void
symm_panels(const double *A, size_t n, size_t b, const double *X, size_t ldx,
			double *Y, size_t ldy, km_interrupt_fn interrupt)
{
	size_t		cols = piece_columns(4.0 * (double) n * (double) b, 64);

	for (size_t j = 0; j < b; j++)
		memset(Y + j * ldy, 0, n * sizeof(double));
	for (size_t c0 = 0; c0 < n; c0 += cols)
	{
		size_t		cb = n - c0 < cols ? n - c0 : cols;
		size_t		below = n - c0 - cb;
		const double *P = A + c0 + c0 * n;

		cblas_dsymm(CblasColMajor, CblasLeft, CblasLower, (int) cb, (int) b, 1.0,
					P, (int) n, X + c0, (int) ldx, 1.0, Y + c0, (int) ldy);
		if (below > 0)
		{
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) below,
						(int) b, (int) cb, 1.0, P + cb, (int) n, X + c0, (int) ldx,
						1.0, Y + c0 + cb, (int) ldy);
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) cb,
						(int) b, (int) below, 1.0, P + cb, (int) n, X + c0 + cb,
						(int) ldx, 1.0, Y + c0, (int) ldy);
		}
		km_check_interrupts(interrupt);
	}
}

/*
 * Orthonormalize the n x b block P (leading dimension n) against the m
 * orthonormal columns of Q and within itself: block Gram-Schmidt against Q
 * then modified Gram-Schmidt inside, twice; a column that loses all but
 * KM_TOP_DEPENDENT of its norm (the residual of an exact eigenpair, a rank
 * deficient matrix) is replaced by a random one and two more rounds run.
 * G: m x b doubles.  false if a replaced column still depends on the rest.
 */
static bool
orthonormalize(const double *Q, size_t n, size_t m, double *P, size_t b,
			   double *G, uint64_t *rng)
{
	bool		replaced = false;

	for (int round = 0; round < 4; round++)
	{
		replaced = false;
		for (int twice = 0; twice < 2 && m > 0; twice++)
		{
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) m, (int) b,
						(int) n, 1.0, Q, (int) n, P, (int) n, 0.0, G, (int) m);
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n, (int) b,
						(int) m, -1.0, Q, (int) n, G, (int) m, 1.0, P, (int) n);
		}
		for (size_t c = 0; c < b; c++)
		{
			double	   *p = P + c * n;
			double		before = cblas_dnrm2((int) n, p, 1);
			double		after;

			for (int twice = 0; twice < 2; twice++)
				for (size_t e = 0; e < c; e++)
					cblas_daxpy((int) n, -cblas_ddot((int) n, P + e * n, 1, p, 1),
								P + e * n, 1, p, 1);
			after = cblas_dnrm2((int) n, p, 1);
			if (!(after > KM_TOP_DEPENDENT * before) || !(after > 0) || !isfinite(after))
			{
				for (size_t i = 0; i < n; i++)
					p[i] = top_random(rng);
				after = cblas_dnrm2((int) n, p, 1);
				replaced = true;
			}
			cblas_dscal((int) n, 1.0 / after, p, 1);
		}
		if (round >= 1 && !replaced)
			return true;
	}
	return !replaced;
}

bool
km_eigen_top(const double *A, size_t n, int k, double tol, int max_passes,
			 double *theta, double *V, double *work, int *passes,
			 km_interrupt_fn interrupt)
{
	size_t		b = (size_t) km_eigen_top_block(k);
	size_t		mm = km_eigen_top_basis(k);
	size_t		keep = top_keep(k);
	double	   *Q = work;
	double	   *W = Q + n * mm;
	double	   *T = W + n * mm;
	double	   *H = T + n * keep;
	double	   *S = H + mm * mm;
	double	   *ev = S + mm * mm;
	double	   *lw = ev + mm;
	double	   *G = lw + 66 * mm;
	uint64_t	rng = KM_TOP_SEED;
	size_t		m = 0;			/* columns of Q with their A Q in W */
	size_t		nb = b;			/* the block at Q + m n waiting for its product */

	*passes = 0;
	if (k < 1 || k > KM_TOP_MAX_K || n < 2 * mm)
		return false;
	for (size_t i = 0; i < n * b; i++)
		Q[i] = top_random(&rng);
	if (!orthonormalize(Q, n, 0, Q, b, G, &rng))
		return false;
	km_progress_work_begin();
	while (*passes < max_passes)
	{
		double	   *U = S;
		double		worst = 0;
		bool		restarted = false;

		/* W's next block, then H's new columns (and rows: H is symmetric) */
		symm_panels(A, n, nb, Q + m * n, n, W + m * n, n, interrupt);
		(*passes)++;
		cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) (m + nb),
					(int) nb, (int) n, 1.0, Q, (int) n, W + m * n, (int) n, 0.0,
					G, (int) (m + nb));
		for (size_t j = 0; j < nb; j++)
			for (size_t i = 0; i < m + nb; i++)
			{
				double		h = G[i + j * (m + nb)];

				if (i >= m)		/* the new block's own square: symmetrize */
					h = 0.5 * (h + G[(m + j) + (i - m) * (m + nb)]);
				H[i + (m + j) * mm] = h;
				H[(m + j) + i * mm] = h;
			}
		m += nb;

		/* Rayleigh-Ritz: the eigenpairs of H, largest first */
		for (size_t j = 0; j < m; j++)
			memcpy(S + j * m, H + j * mm, m * sizeof(double));
		if (LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'V', 'L', (lapack_int) m, S,
							   (lapack_int) m, ev, lw, (lapack_int) (66 * mm)) != 0)
			return false;
		for (size_t a = 0, z = m - 1; a < z; a++, z--)
		{
			double		t = ev[a];

			ev[a] = ev[z];
			ev[z] = t;
			cblas_dswap((int) m, S + a * m, 1, S + z * m, 1);
		}

		if (m + b > mm)
		{
			/* thick restart: Q := Q U, W := W U on the leading keep Ritz vectors */
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n,
						(int) keep, (int) m, 1.0, Q, (int) n, U, (int) m, 0.0, T, (int) n);
			memcpy(Q, T, n * keep * sizeof(double));
			cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n,
						(int) keep, (int) m, 1.0, W, (int) n, U, (int) m, 0.0, T, (int) n);
			memcpy(W, T, n * keep * sizeof(double));
			memset(H, 0, mm * mm * sizeof(double));
			for (size_t j = 0; j < keep; j++)
				H[j + j * mm] = ev[j];
			m = keep;
			restarted = true;
			km_check_interrupts(interrupt);
		}

		/* the residuals of the leading b Ritz pairs, W u - theta Q u, into the next block */
		{
			double	   *R = Q + m * n;

			if (restarted)
			{
				for (size_t j = 0; j < b; j++)
					for (size_t i = 0; i < n; i++)
						R[i + j * n] = W[i + j * n] - ev[j] * Q[i + j * n];
			}
			else
			{
				for (size_t j = 0; j < b; j++)
					for (size_t i = 0; i < m; i++)
						G[i + j * m] = ev[j] * U[i + j * m];
				cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n,
							(int) b, (int) m, 1.0, W, (int) n, U, (int) m, 0.0, R, (int) n);
				cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n,
							(int) b, (int) m, -1.0, Q, (int) n, G, (int) m, 1.0, R, (int) n);
			}
			for (int j = 0; j < k; j++)
			{
				double		r = cblas_dnrm2((int) n, R + (size_t) j * n, 1);

				if (!(r <= worst))
					worst = r;
			}
			if (worst <= tol * fabs(ev[0]) || (worst == 0 && ev[0] == 0))
			{
				for (int j = 0; j < k; j++)
					theta[j] = ev[j];
				if (restarted)
					memcpy(V, Q, n * (size_t) k * sizeof(double));
				else
					cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, (int) n,
								k, (int) m, 1.0, Q, (int) n, U, (int) m, 0.0, V, (int) n);
				return true;
			}
			if (!isfinite(worst) || !orthonormalize(Q, n, m, R, b, G, &rng))
				return false;
			nb = b;
		}
		km_progress_fraction((double) *passes / (double) max_passes,
							 "block Lanczos pass %d, residual %.1e", *passes,
							 worst / (fabs(ev[0]) > 0 ? fabs(ev[0]) : 1.0));
		km_check_interrupts(interrupt);
	}
	return false;
}
