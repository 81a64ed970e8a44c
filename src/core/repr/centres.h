/*
 * centres.h - how a nystrom basis chooses its centres (issue 31; core, no
 * PostgreSQL headers, no allocation).
 *
 * "centers": "uniform" (the default, 0.3.0's): the m distinct rows of the
 * smallest hashes (basis.h).  The other two start from that uniform sample
 * and refine it by passes over every row (the learner asks them,
 * pipeline_centres.c); each pass's state has a fixed size and combines:
 *
 *   kmeans:   Lloyd's iterations over the standardized rows, seeded with
 *             the uniform sample.  One pass per iteration: per centre the
 *             sum of its rows and their count, and the inertia (the sum of
 *             squared distances to the nearest centre), all added up.  A
 *             row goes to its nearest centre (the first on a tie); a
 *             centre becomes the mean of its rows, and a centre that no
 *             row chose keeps its place.  At most KM_KMEANS_MAX_ITER
 *             iterations; stop after the iteration whose inertia fell by
 *             at most KM_KMEANS_TOL of itself from the previous one's.
 *   leverage: approximate ridge leverage scores from the uniform sketch S
 *             (Alaoui and Mahoney 2015; Rudi et al. 2018, BLESS):
 *               l_i(lam) = (k(x_i, x_i) - k_i' (K_SS + mu I)^-1 k_i) / lam,
 *               mu = lam m / n,
 *             k_i = (k(x_i, s_1), ..., k(x_i, s_m)), from K_SS = U diag(s) U'
 *             (so that every lam costs O(m) a row).  Two passes.  The
 *             first adds up, for lam on the grid lambda 2^(g/2), g = 0 ..
 *             KM_LEVERAGE_GRID - 1 (lambda: the model's smallest), the sum
 *             of the scores (the effective dimension d_eff(lam), which a
 *             sketch overestimates) and of their squares.  The scores are
 *             taken at lam_s, the first lam of the grid with d_eff(lam) <=
 *             m: the finest scale m centres can resolve (BLESS samples at
 *             a lam whose d_eff the sample covers; at a smaller lam the
 *             sketch's scores favour rows no m centres reach, and the
 *             sample crowds on them), so lam_s = lambda when m >= d_eff.
 *             The second pass samples: the floor(m ess) rows of the
 *             smallest hashes (the first of the uniform sample), ess =
 *             (sum l)^2 / (n sum l^2) at lam_s, the efficiency of uniform
 *             draws for the leverage distribution (Kish's effective sample
 *             size: 1 when the scores are flat, where leverage sampling
 *             only adds variance, small when a few rows carry the scores),
 *             and for the rest the distinct rows of the smallest keys
 *             -log(u_i) / l_i(lam_s) among the others, u_i in (0, 1) from
 *             the row's hash (exponential clocks, Efraimidis and
 *             Spirakis's weighted sampling without replacement).  The same
 *             rows in any order or plan: two states combine by keeping the
 *             smallest keys of both (test/bench/centres.py measures the
 *             rule against 0.3's half-and-half sample at lam = lambda).
 */
#ifndef KM_CENTRES_H
#define KM_CENTRES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "kernels.h"

/* Stored in models as one byte (the approximation section): never renumber. */
typedef enum km_centres
{
	KM_CENTRES_UNIFORM = 0,
	KM_CENTRES_KMEANS = 1,
	KM_CENTRES_LEVERAGE = 2
} km_centres;

#define KM_CENTRES_FIRST KM_CENTRES_UNIFORM
#define KM_CENTRES_LAST KM_CENTRES_LEVERAGE

#define KM_KMEANS_MAX_ITER 10
#define KM_KMEANS_TOL 1e-4
/* a leverage score is at least this (a row the sketch spans exactly) */
#define KM_LEVERAGE_MIN_SCORE 1e-300

/* "uniform", "kmeans", "leverage"; "unknown" for a value that names none. */
const char *km_centres_name(km_centres c);
bool		km_centres_from_name(const char *name, km_centres *c);

/* ---- k-means: state = sums[m][d], counts[m], inertia ---- */

/* Doubles of a Lloyd pass's state (0 on overflow); zeroed, it is empty. */
size_t		km_kmeans_state_doubles(uint32_t m, uint32_t d);

/* Rows X (rows x d, standardized) into state, against centres C (m x d). */
void		km_kmeans_add(const double *C, uint32_t m, uint32_t d,
						  const double *X, size_t rows, double *state);

/*
 * C := the means of the state's clusters (empty ones keep their centre);
 * returns the state's inertia (of the centres the pass assigned to).
 */
double		km_kmeans_update(double *C, uint32_t m, uint32_t d,
							 const double *state);

/* Whether Lloyd stops after an iteration of inertia now (prev: the one before, < 0 for none). */
bool		km_kmeans_converged(double prev, double now);

/* ---- leverage ---- */

/* u in (0, 1) of a row's hash (remixed: the uniform sample's order is not reused). */
double		km_leverage_uniform(uint64_t hash);

/* The grid of the first pass (lambda 2^(g/2): up to 2^19.5 lambda). */
#define KM_LEVERAGE_GRID 40

/* Work of km_leverage_eigen: doubles (0 on overflow) and ints. */
size_t		km_leverage_eigen_doubles(uint32_t m);
size_t		km_leverage_eigen_ints(uint32_t m);

/*
 * s (m, ascending) and U (m x m, column-major, its columns orthonormal):
 * K_SS = U diag(s) U', from K (m x m, symmetric, overwritten; reduced
 * with interrupts checked between pieces, eigen.h); KM_ERR_DIVERGED when
 * K_SS + mu I is not positive definite.
 */
km_status	km_leverage_eigen(double *K, uint32_t m, double mu, double *s, double *U,
							  double *work, int *iwork, km_interrupt_fn interrupt,
							  km_error *err);

/*
 * P (rows x m) := (U' k_i)^2 element-wise for rows X (rows x d,
 * standardized) whose k_i against the sketch are the rows of Kx;
 * kii[rows] := k(x_i, x_i).
 */
void		km_leverage_project(const km_kernel *k, const double *X, size_t rows,
								uint32_t d, const double *U, uint32_t m,
								const double *Kx, double *P, double *kii);

/* l(lambda) of a row from its P row p, at least KM_LEVERAGE_MIN_SCORE. */
double		km_leverage_score(const double *p, const double *s, uint32_t m,
							  double kii, double lambda, double mu);

/* lambda 2^(g / 2) */
double		km_leverage_grid_lambda(double lambda, int g);

/* W (m x KM_LEVERAGE_GRID) := 1 / (s_j + mu_g), mu_g = lambda_g m / n */
void		km_leverage_grid_weights(const double *s, uint32_t m, double lambda, size_t n,
									 double *W);

/*
 * sums[g] += l_i(lambda_g), sums[KM_LEVERAGE_GRID + g] += l_i(lambda_g)^2
 * over the rows of P (km_leverage_project), W from km_leverage_grid_weights,
 * Q (rows x KM_LEVERAGE_GRID) work: the first pass's state, 2
 * KM_LEVERAGE_GRID doubles, zeroed when empty.
 */
void		km_leverage_grid_add(const double *P, const double *kii, size_t rows,
								 const double *W, uint32_t m, double lambda, double *Q,
								 double *sums);

/* lam_s and the uniform share floor(m ess) from the first pass's sums (above). */
void		km_leverage_choose(const double *sums, size_t n, uint32_t m, double lambda,
							   double *lambda_s, uint32_t *uniform);

/* The sample: m keys, m hashes, m rows of d; fixed size, combinable. */
typedef struct km_leverage_state
{
	uint32_t	capacity;
	uint32_t	d;
	uint32_t	n;				/* rows kept */
	uint32_t	max_slot;		/* the slot of the largest key kept */
	double		data[];			/* keys[capacity], hashes[capacity] (uint64),
								 * rows[capacity][d] */
} km_leverage_state;

size_t		km_leverage_state_bytes(uint32_t m, uint32_t d);
/* over km_leverage_state_bytes(m, d) bytes */
void		km_leverage_state_init(km_leverage_state *st, uint32_t m, uint32_t d);
/* Offer row x of hash with score l (its key -log(u) / l). */
void		km_leverage_state_offer(km_leverage_state *st, const double *x,
									double score, uint64_t hash);
/* a += b: the capacity smallest keys of both */
km_status	km_leverage_state_combine(km_leverage_state *a, const km_leverage_state *b,
									  km_error *err);

/* Offer row x of hash with its key (the order: key, hash, values). */
void		km_leverage_state_offer_key(km_leverage_state *st, const double *x,
										double key, uint64_t hash);

/*
 * C (st->n x d) := the rows kept, in the order of their keys; order
 * (st->n uint32) is scratch.
 */
void		km_leverage_state_rows(const km_leverage_state *st, double *C,
								   uint32_t *order);

/*
 * The defensive sample of m rows (above): two states back to back, the
 * uniform (<= m) smallest hashes and the m smallest leverage keys.
 */
size_t		km_leverage_sample_bytes(uint32_t m, uint32_t uniform, uint32_t d);
void		km_leverage_sample_init(void *sample, uint32_t m, uint32_t uniform, uint32_t d);
void		km_leverage_sample_offer(void *sample, const double *x, double score,
									 uint64_t hash);
km_status	km_leverage_sample_combine(void *into, const void *from, km_error *err);

/*
 * C (m x d) := the sample: its uniform share in hash order, then the
 * leverage rows not in it in key order; order (m uint32) is scratch.
 * Returns the rows written (m unless fewer distinct rows were offered).
 */
uint32_t	km_leverage_sample_rows(const void *sample, double *C, uint32_t *order);

#endif							/* KM_CENTRES_H */
