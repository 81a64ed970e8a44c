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

#include "accum.h"
#include "centres.h"
#include "kernels.h"
#include "repr.h"

/* Stored in models and bases as one byte: never renumber. */
typedef enum km_approx
{
	KM_APPROX_EXACT = 0,		/* no approximation: the exact kernel expansion */
	KM_APPROX_NYSTROM = 1,
	KM_APPROX_RFF = 2
} km_approx;

#define KM_APPROX_FIRST KM_APPROX_EXACT
#define KM_APPROX_LAST KM_APPROX_RFF

/*
 * "exact", "nystrom", "rff" (the representation table's names, repr.h);
 * "unknown" for a value that names none.
 */
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
	km_centres	centres_kind;	/* how the centres were chosen (centres.h) */
} km_basis;

/* km_rff_draw and km_rff_map: repr.h */

/*
 * Features of rows.  Z (rows x m, row-major) := z(x_i) for standardized
 * rows X_std (rows x d, row-major): nystrom K(x_i, c_j) by one GEMM and
 * the kernel's element-wise map (km_gram_cross), rff km_rff_map.  work
 * has km_approx_features_doubles(b, rows) doubles (0 on overflow).  No
 * interrupt check: the caller passes blocks (a block of r rows costs
 * about 2 r m d flops).  A feature that is not finite (an overflowed
 * inner product or distance) is KM_ERR_OVERFLOW naming the row of the
 * block; Z is then unspecified.
 */
size_t		km_approx_features_doubles(const km_basis *b, size_t rows);
km_status	km_approx_features(const km_basis *b, const double *X_std,
							   size_t rows, double *Z, double *work,
							   km_error *err);

/*
 * Most components a solve takes: its one uninterruptible LAPACK call,
 * dsterf on the m x m tridiagonal matrix, takes 0.7 s of CPU at m = 8000
 * (0.05 s at 2000), and its workspace is 2 m^2 doubles (1 GB at 8192).
 */
#define KM_APPROX_MAX_COMPONENTS 8192

/*
 * Most components of nystrom ridge by "solver": "cg" (learn/cg.h), which
 * never forms the m x m sums: its factors of K_mm + eps I and of the
 * preconditioner are 2 m^2 doubles (16 GB here), bounded in practice by
 * kernel_ml.max_memory (the plan counts them).
 */
#define KM_CG_MAX_COMPONENTS 32768

/* Most lambdas one km_approx_solve may score (select.h's KM_MAX_GRID). */
#define KM_APPROX_MAX_LAMBDAS 64

/*
 * The eps of chol(K_mm + eps I): a rung of the ladder KM_APPROX_EPS_REL *
 * trace(K_mm) / m times 1, 10, 100 .. up to KM_APPROX_EPS_MAX_REL *
 * trace / m.  A rung is used when its factor L reproduces K_mm + eps I on
 * a probe vector v to within a tenth of eps (||L L^T v - (K_mm + eps I) v||
 * <= 0.1 eps ||v||) AND the whitened problem it gives is solvable: every
 * T + lambda I of the grid positive definite and the winner passing the
 * residual check below.  A badly conditioned K_mm (many centres, a large
 * gamma) makes L^-1 huge at a small eps, and the rounding of
 * A = L^-1 G L^-T (PSD in exact arithmetic) then exceeds lambda: the solve
 * goes up the ladder (from the rung that failed, by 10x or by the factor
 * the most negative eigenvalue of T asks for) until it is solvable, and
 * records the eps used.  If no rung solves every lambda of the grid, the
 * largest rung whose winner passed is used (the others score NaN).
 */
#define KM_APPROX_EPS_REL 1e-12
#define KM_APPROX_EPS_MAX_REL 1e-2

/*
 * The normal equations solved leave a relative residual
 * ||(G + lambda (K_mm + eps I)) coef - r|| / ||r|| of at most this
 * (G = sum z z^T, r = sum z (y - b)), else KM_ERR_INACCURATE.
 */
#define KM_APPROX_MAX_RELATIVE_RESIDUAL 1e-6

typedef struct km_approx_result
{
	double		lambda;			/* the lambda chosen */
	int			best;			/* its index in the grid */
	double		intercept;		/* mean(y) with fit_intercept, else 0 */
	double		gcv[KM_APPROX_MAX_LAMBDAS];	/* GCV (evidence: minus the log
												 * marginal likelihood) per
												 * lambda; NaN: unsolvable */
	double		eps;			/* nystrom: chol(K_mm + eps I); rff: 0 */
	uint32_t	rank;			/* eigenvalues of the whitened G above
								 * m * DBL_EPSILON * the largest */
	double		train_rmse;		/* sqrt(RSS / rows) at lambda, from the sums */
	double		relative_residual;	/* of the normal equations solved */
	double		trace_hat;		/* tr H at lambda: effective degrees of freedom */
	uint64_t	rows;			/* rows the statistics saw */
} km_approx_result;

/*
 * Solve an approximate model from its statistics: stats is a KM_ACCUM_GRAM
 * state of dimension b->m over the features z(x) of km_approx_features,
 * validated by the caller (km_accum_validate), with rows >= 1.  With
 * G = sum z z^T, r = sum z (y - ybar) (ybar = mean(y) with fit_intercept,
 * else 0), K = K_mm + eps I (nystrom; the centres' Gram matrix) or I (rff):
 *   L = chol(K), A = L^-1 G L^-T = Q T Q^T (tridiagonal T, reduced in
 *   interruptible pieces, src/core/base/eigen.c), w = Q^T L^-1 r, and per lambda
 *   p = (T + lambda I)^-1 w (O(m)), coef = L^-T Q p,
 *   RSS = sum (y - ybar)^2 - w^T p - lambda ||p||^2, tr H = sum s / (s + lambda)
 *   over the eigenvalues s of T (dsterf), GCV = rows RSS / (rows - tr H)^2
 * (the definition of select.c's GCV for exact ridge, whose hat matrix is
 * Z (G + lambda K)^-1 Z^T: the intercept's degree of freedom is not
 * counted).  The lambdas are scored as a representation's closed-form
 * route of the one grid loop (grid.h, km_grid_search: the setup the
 * factor, whitening and reduction, the column every lambda's GCV), once
 * per rung of the eps ladder; the lowest GCV wins (km_best_candidate: ties
 * to the larger lambda), or with evidence the lowest minus log marginal
 * likelihood of the GP reading (gp.h), from the same O(m) per lambda: the
 * scores go to res->gcv either way; coef (m) solves
 * (G + lambda K) coef = r for it.  lambdas: n_lambdas (1 ..
 * KM_APPROX_MAX_LAMBDAS) values > 0.  m at most KM_APPROX_MAX_COMPONENTS.
 * work has km_approx_solve_doubles(m) doubles (0 beyond that m).  Errors: KM_ERR_INVALID (arguments), KM_ERR_OVERFLOW (a value
 * not finite), KM_ERR_NOT_PD (K_mm not positive semi-definite on the
 * centres: no eps up to the cap gives a trustworthy factor),
 * KM_ERR_INACCURATE (no rung of the eps ladder gives a solvable lambda
 * that passes the relative residual check; the last rung's failure is
 * reported).  The solve costs O(m^3) per rung tried.
 */
size_t		km_approx_solve_doubles(uint32_t m);

/*
 * A lower bound of the bytes any approximate model of m components needs
 * whatever its rows: the m x m sums and the solve (INFINITY beyond the
 * largest m), so that a size that cannot fit is refused before a pass.
 */
double		km_approx_work_bytes(uint32_t m);
km_status	km_approx_solve(const km_basis *b, const km_accum *stats,
							const double *lambdas, int n_lambdas,
							bool fit_intercept, bool evidence, double *coef,
							km_approx_result *res, double *work,
							km_error *err, km_interrupt_fn interrupt);

/*
 * L (m x m column-major, lower) = chol(K_mm + eps I) of a nystrom basis's
 * centres at the first rung of the eps ladder above whose factor passes
 * the probe check (the approximate classifiers whiten their features by
 * it: z = L^-1 k(C, x)); *eps is recorded.  work: km_approx_factor_doubles(m)
 * (0 beyond KM_APPROX_MAX_COMPONENTS).  KM_ERR_NOT_PD as km_approx_solve.
 */
size_t		km_approx_factor_doubles(uint32_t m);
km_status	km_approx_factor(const km_basis *b, double *L, double *eps,
							 double *work, km_error *err,
							 km_interrupt_fn interrupt);

/*
 * The set-up of b's features before the approximate classifiers' passes:
 * a basis of centres (nystrom) whitens them by L = chol(K_mm + eps I)
 * (km_approx_factor: *L set, *eps recorded), a drawn one (rff) uses them
 * as they are (*L left NULL, *eps 0).  alloc(ctx, doubles) gives L and the
 * factor's work; release(ctx, p) frees the work once L is known.
 */
km_status	km_basis_whitening(const km_basis *b, double **L, double *eps,
							   void *(*alloc) (void *ctx, size_t doubles),
							   void (*release) (void *ctx, void *p), void *ctx,
							   km_error *err, km_interrupt_fn interrupt);

/*
 * What a model keeps of basis b (its representation's export): the rows of
 * its expansion (nystrom's centres; NULL when it keeps none), its drawn
 * features W and b (rff; else NULL), and its rank and eps: the solve's
 * (rank at least 1), or a drawn basis's m and 0.
 */
typedef struct km_basis_kept
{
	const double *X;
	const double *W;
	const double *b;
	uint32_t	rank;
	double		eps;
} km_basis_kept;

void		km_basis_kept_of(const km_basis *b, uint32_t solve_rank, double solve_eps,
							 km_basis_kept *out);

/*
 * The steps of b's list (repr.h km_repr_basis_steps) that run no pass over
 * rows, done again on a decoded basis (its bytes keep no drawn features):
 * rff's draw.  km_basis_draw_doubles: the doubles they need (at least 1);
 * km_basis_draw_into: W (d x m) and b (m) drawn from the basis's seed into
 * work, b->W and b->b pointing there; nothing for a basis without a draw.
 */
size_t		km_basis_draw_doubles(const km_basis *b);
void		km_basis_draw_into(km_basis *b, double *work);

/*
 * Rows X (r of them, of d raw features, the first numbered first) standardized
 * by b's scaler into Xs; a row that overflows is an error naming it.
 */
km_status	km_basis_standardize(const km_basis *b, const double *X, size_t first, size_t r,
								 int d, double *Xs, km_error *err);

/*
 * A := L^-1 A L^-T for the m x m lower Cholesky factor L (column-major), by
 * triangular solves in pieces of bounded work, interrupt checked between
 * them: the whitened statistics of a nystrom basis (also the GP reading's).
 */
void		km_approx_whiten(const double *L, double *A, size_t m,
							 km_interrupt_fn interrupt);

#endif							/* KM_APPROX_H */
