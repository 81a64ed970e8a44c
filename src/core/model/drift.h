/*
 * drift.h - a linear-time kernel two-sample test between the rows a model
 * was trained on and new rows (core, no PostgreSQL headers).
 *
 * The test is the mean-embedding (ME) test of Chwialkowski et al. (2015)
 * and Jitkrittum et al. (2016) on J <= KM_DRIFT_MAX_J features of the
 * model's own basis, each row standardized by the model's scaler first:
 *   - a model that keeps rows (exact: its training rows; nystrom: its
 *     centres) gives J test locations v_1..v_J, every floor(i n / J)-th of
 *     its n rows, and z_j(x) = k(x, v_j) with the model's kernel;
 *   - an rff model gives J of its random features (every floor(i D / J)-th),
 *     z_j(x) = cos(w_j' x + b_j).
 * J = min(rows of the basis, KM_DRIFT_MAX_J): small and fixed, so that the
 * chi-square null holds at realistic sizes.
 *
 * Each side is kept as additive sums over its rows (n, sum z, sum z z'),
 * one pass, any table size, combinable.  With the means mu and the sample
 * covariances S (denominator n - 1) of the two sides,
 *   delta = mu_train - mu_new,  C = S_train / n_train + S_new / n_new,
 *   statistic = delta' C^+ delta,
 * asymptotically chi-square with dof = rank(C) degrees of freedom when both
 * samples come from one distribution (for n_train = n_new = n it is the ME
 * statistic n delta' (S_train + S_new)^-1 delta).  C^+ is the
 * pseudo-inverse: eigen-directions of C with an eigenvalue at most
 * KM_DRIFT_RANK_TOL times the largest are left out (they carry no
 * variance on either side: a feature constant on both), and dof counts
 * the rest.
 *
 * A reference (the training side: basis and sums) is stored as bytes:
 *
 *   offset size  field
 *        0    4  magic "KMDR"
 *        4    2  format version 1
 *        6    1  kind (1 kernel locations, 2 random features)
 *        7    1  kernel type (km_kernel_type)
 *        8    4  J (1..KM_DRIFT_MAX_J)
 *       12    4  d (>= 1)
 *       16    4  degree
 *       20    4  reserved, 0
 *       24    8  gamma
 *       32    8  coef0
 *       40    8  n (rows summed)
 *       48    8  skipped (rows with a null feature array or target)
 *       56       mean[d], scale[d] (> 0), V[J * d] (row-major: locations,
 *                standardized, or the frequencies w_j), b[J] (0 for
 *                kernel locations), sum[J], cross[J * J] (sum z z', full)
 *   total-4    4  CRC-32C of every byte before it
 * All little-endian; every double finite.
 */
#ifndef KM_DRIFT_H
#define KM_DRIFT_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"
#include "kernel_types.h"
#include "model_types.h"

#define KM_DRIFT_MAX_J 10
#define KM_DRIFT_RANK_TOL 1e-10
#define KM_DRIFT_HEADER_SIZE 56

typedef enum km_drift_kind
{
	KM_DRIFT_LOCATIONS = 1,		/* z_j = k(x, v_j) */
	KM_DRIFT_FOURIER = 2		/* z_j = cos(w_j' x + b_j) */
} km_drift_kind;

/* A basis and the sums of one side's rows over it. */
typedef struct km_drift
{
	km_drift_kind kind;
	km_kernel	kernel;
	uint32_t	J;
	uint32_t	d;
	uint64_t	n;				/* rows summed */
	uint64_t	skipped;		/* rows left out for a null (counted by the host) */
	double	   *mean;			/* d */
	double	   *scale;			/* d */
	double	   *V;				/* J x d */
	double	   *b;				/* J */
	double	   *sum;			/* J */
	double	   *cross;			/* J x J */
} km_drift;

/* The test's result. */
typedef struct km_drift_result
{
	double		statistic;
	double		p_value;
	int			dof;
	uint64_t	n_train;
	uint64_t	n_new;
} km_drift_result;

/* Doubles of storage a km_drift of J features of d-vectors points into. */
size_t		km_drift_doubles(uint32_t d, uint32_t J);

/* Doubles of scratch km_drift_add needs. */
size_t		km_drift_scratch_doubles(uint32_t d, uint32_t J);

/*
 * The basis of model m (sums zero), J chosen as above, its arrays in
 * storage (km_drift_doubles(m->n_features, km_drift_features_of(m))).
 * KM_ERR_INVALID for a model with neither rows nor random features.
 */
uint32_t	km_drift_features_of(const km_model *m);
km_status	km_drift_from_model(const km_model *m, km_drift *r, double *storage,
								km_error *err);

/* A copy of src's basis into dst (its storage as above), sums zero. */
void		km_drift_copy_basis(const km_drift *src, km_drift *dst, double *storage);

/* Add n rows of X (n x d, raw features, finite) to the sums. */
void		km_drift_add(km_drift *r, const double *X, size_t n, double *scratch);

/* Bytes of the encoded reference; encode into a buffer of that size. */
size_t		km_drift_encoded_size(uint32_t d, uint32_t J);
void		km_drift_encode(const km_drift *r, uint8_t *buf);

/* J and d of an encoded reference, its size and checksum checked. */
km_status	km_drift_peek(const uint8_t *buf, size_t len, uint32_t *d, uint32_t *J,
						  km_error *err);

/* Decode (after km_drift_peek) into r, its arrays in storage. */
km_status	km_drift_decode(const uint8_t *buf, size_t len, km_drift *r,
							double *storage, km_error *err);

/*
 * The test of the training sums against the new sums (the same basis):
 * KM_ERR_INVALID when a side has fewer than 2 rows.
 */
km_status	km_drift_test(const km_drift *train, const km_drift *fresh,
						  km_drift_result *out, km_error *err);

/* P(X > x) for X chi-square with k > 0 degrees of freedom (1 for k = 0). */
double		km_chi2_sf(double x, int k);

#endif							/* KM_DRIFT_H */
