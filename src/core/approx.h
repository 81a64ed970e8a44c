/*
 * approx.h - approximate kernel models: Nystrom and random Fourier
 * features (core, no PostgreSQL headers).
 *
 * Both replace the n x n kernel system by an m x m one over a feature map
 * z(x) of m components, whose training statistics are sums over rows
 * (accum.h, KM_ACCUM_GRAM), so they split across parallel workers and
 * shards:
 *   nystrom: z(x) = (K(c_1, x), ..., K(c_m, x)) over m centres c_j (rows
 *            of the table, standardized), f(x) = b + sum_j alpha_j K(c_j, x),
 *            alpha solving (Z^T Z + lambda K_mm) alpha = Z^T (y - b);
 *   rff:     z(x) = sqrt(2 / D) cos(W^T x + b_rff), W ~ N(0, 2 gamma I),
 *            b_rff ~ U(0, 2 pi) drawn from the seed (scikit-learn's
 *            RBFSampler), f(x) = b + coef^T z(x), coef solving
 *            (Z^T Z + lambda I) coef = Z^T (y - b).
 * Rows x are standardized by the basis's scaler first, when it has one.
 */
#ifndef KM_APPROX_H
#define KM_APPROX_H

#include "kernels.h"

/* Stored in models and bases as one byte: never renumber. */
typedef enum km_approx
{
	KM_APPROX_EXACT = 0,		/* no approximation: the exact kernel expansion */
	KM_APPROX_NYSTROM = 1,
	KM_APPROX_RFF = 2
} km_approx;

#define KM_APPROX_FIRST KM_APPROX_EXACT
#define KM_APPROX_LAST KM_APPROX_RFF

/* "exact", "nystrom", "rff"; "unknown" for a value that names none. */
const char *km_approx_name(km_approx a);
bool		km_approx_from_name(const char *name, km_approx *a);

/*
 * The feature basis of an approximate model, decoded (what kernel_basis
 * returns, and what an approximate model keeps to score a row).
 */
typedef struct km_basis
{
	km_approx	kind;			/* NYSTROM or RFF */
	km_kernel	kernel;
	uint32_t	d;				/* features */
	uint32_t	m;				/* components: centres, or random features D */
	uint64_t	seed;
	uint64_t	rows;			/* rows the scaler saw */
	bool		standardize;
	const double *mean;			/* d (0 when not standardizing) */
	const double *scale;		/* d, > 0 (1 when not standardizing) */
	const double *centres;		/* nystrom: m x d row-major, standardized; rff: NULL */
	const double *W;			/* rff: d x m row-major; nystrom: NULL */
	const double *b;			/* rff: m; nystrom: NULL */
} km_basis;

/*
 * Draw the random features of an rff basis from seed: W (d x D,
 * row-major) with N(0, 2 gamma) entries and b (D) uniform on [0, 2 pi),
 * from libc's erand48 seeded by the seed, W first, row by row.  Only the
 * rbf kernel has a random-feature map here.
 */
void		km_rff_draw(double gamma, uint64_t seed, uint32_t d, uint32_t D,
						double *W, double *b);

/*
 * Z (rows x D, row-major) = sqrt(2 / D) cos(X W + b) for standardized rows
 * X (rows x d, row-major): one GEMM and an element-wise map.
 */
void		km_rff_map(const double *W, const double *b, uint32_t d, uint32_t D,
					   const double *X, size_t rows, double *Z);

#endif							/* KM_APPROX_H */
