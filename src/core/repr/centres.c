/*
 * centres.c - k-means and leverage centres of a nystrom basis (centres.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "centres.h"
#include "eigen.h"

static const char *const centres_names[] = {
	[KM_CENTRES_UNIFORM] = "uniform",
	[KM_CENTRES_KMEANS] = "kmeans",
	[KM_CENTRES_LEVERAGE] = "leverage",
};

const char *
km_centres_name(km_centres c)
{
	if ((int) c < KM_CENTRES_FIRST || (int) c > KM_CENTRES_LAST)
		return "unknown";
	return centres_names[c];
}

bool
km_centres_from_name(const char *name, km_centres *c)
{
	for (int i = KM_CENTRES_FIRST; i <= KM_CENTRES_LAST; i++)
		if (strcmp(name, centres_names[i]) == 0)
		{
			*c = (km_centres) i;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ */
/* k-means                                                            */
/* ------------------------------------------------------------------ */

size_t
km_kmeans_state_doubles(uint32_t m, uint32_t d)
{
	size_t		md = (size_t) m * d;

	if (d != 0 && md / d != m)
		return 0;
	return md + m + 1;
}

void
km_kmeans_add(const double *C, uint32_t m, uint32_t d, const double *X,
			  size_t rows, double *state)
{
	double	   *sums = state;
	double	   *counts = state + (size_t) m * d;
	double	   *inertia = counts + m;

	for (size_t i = 0; i < rows; i++)
	{
		const double *x = X + i * d;
		uint32_t	best = 0;
		double		best_d2 = INFINITY;

		for (uint32_t c = 0; c < m; c++)
		{
			const double *cc = C + (size_t) c * d;
			double		d2 = 0.0;

			for (uint32_t j = 0; j < d; j++)
			{
				double		t = x[j] - cc[j];

				d2 += t * t;
			}
			if (d2 < best_d2)
			{
				best_d2 = d2;
				best = c;
			}
		}
		for (uint32_t j = 0; j < d; j++)
			sums[(size_t) best * d + j] += x[j];
		counts[best] += 1.0;
		*inertia += best_d2;
	}
}

double
km_kmeans_update(double *C, uint32_t m, uint32_t d, const double *state)
{
	const double *sums = state;
	const double *counts = state + (size_t) m * d;

	for (uint32_t c = 0; c < m; c++)
		if (counts[c] > 0.0)
			for (uint32_t j = 0; j < d; j++)
				C[(size_t) c * d + j] = sums[(size_t) c * d + j] / counts[c];
	return counts[m];
}

bool
km_kmeans_converged(double prev, double now)
{
	return prev >= 0.0 && prev - now <= KM_KMEANS_TOL * now;
}

/* ------------------------------------------------------------------ */
/* leverage                                                           */
/* ------------------------------------------------------------------ */

double
km_leverage_uniform(uint64_t hash)
{
	/* splitmix64's finalizer of the hash and a constant of our own */
	uint64_t	z = hash ^ 0x6C65766572616765ULL;	/* "leverage" */

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	z ^= z >> 31;
	/* the top 53 bits, centred in their interval: never 0 nor 1 */
	return ((double) (z >> 11) + 0.5) / 9007199254740992.0;
}

size_t
km_leverage_eigen_doubles(uint32_t m)
{
	size_t		mm = (size_t) m * m;
	size_t		a = (size_t) m * KM_TRD_MAX_NB;
	size_t		b = km_back_transform_doubles(m);
	size_t		c = 1 + 4 * (size_t) m + mm;	/* dstedc, compz 'I' */

	if (m != 0 && mm / m != m)
		return 0;
	return 2 * (size_t) m + (a > b ? (a > c ? a : c) : (b > c ? b : c));
}

size_t
km_leverage_eigen_ints(uint32_t m)
{
	return 3 + 5 * (size_t) m;
}

km_status
km_leverage_eigen(double *K, uint32_t m, double mu, double *s, double *U,
				  double *work, int *iwork, km_interrupt_fn interrupt, km_error *err)
{
	double	   *e = work;
	double	   *tau = e + m;
	double	   *w = tau + m;
	size_t		wd = km_leverage_eigen_doubles(m) - 2 * (size_t) m;
	lapack_int	info;

	/* K = Q T Q' (interruptible), T = V diag(s) V', U = Q V (interruptible) */
	km_tridiagonalize(K, m, 0, s, e, tau, w, interrupt);
	info = LAPACKE_dstedc_work(LAPACK_COL_MAJOR, 'I', (lapack_int) m, s, e, U, (lapack_int) m,
							   w, (lapack_int) wd, iwork, (lapack_int) km_leverage_eigen_ints(m));
	km_check_interrupts(interrupt);
	if (info == 0)
		km_back_transform(K, m, tau, U, w, interrupt);
	/* s ascending: the smallest decides whether K_SS + mu I is positive definite */
	if (info != 0 || !(s[0] + mu > 0.0) || !isfinite(s[m - 1]))
	{
		km_fail(err, KM_ERR_DIVERGED, "leverage scores cannot be computed",
				"The kernel matrix of the %u rows of the uniform sketch plus %g I is not positive definite.",
				(unsigned) m, mu);
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "Use a kernel that is positive semi-definite on the data, a larger lambda, or \"centers\": \"uniform\" or \"kmeans\".");
		return err->status;
	}
	return KM_OK;
}

void
km_leverage_project(const km_kernel *k, const double *X, size_t rows, uint32_t d,
					const double *U, uint32_t m, const double *Kx, double *P,
					double *kii)
{
	size_t		all = rows * m;

	if (rows == 0)
		return;
	/* P := (Kx U) squared, U column-major (its columns the eigenvectors) */
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) m, (int) m,
				1.0, Kx, (int) m, U, (int) m, 0.0, P, (int) m);
	for (size_t i = 0; i < all; i++)
		P[i] *= P[i];
	for (size_t i = 0; i < rows; i++)
		kii[i] = km_kernel_eval(k, X + i * d, X + i * d, (int) d);
}

double
km_leverage_score(const double *p, const double *s, uint32_t m, double kii,
				  double lambda, double mu)
{
	double		q = 0.0;
	double		r;

	for (uint32_t j = 0; j < m; j++)
		q += p[j] / (s[j] + mu);
	r = (kii - q) / lambda;
	return isfinite(r) && r > KM_LEVERAGE_MIN_SCORE ? r : KM_LEVERAGE_MIN_SCORE;
}

double
km_leverage_grid_lambda(double lambda, int g)
{
	return lambda * pow(2.0, 0.5 * g);
}

void
km_leverage_grid_weights(const double *s, uint32_t m, double lambda, size_t n, double *W)
{
	for (uint32_t j = 0; j < m; j++)
		for (int g = 0; g < KM_LEVERAGE_GRID; g++)
			W[(size_t) j * KM_LEVERAGE_GRID + g] =
				1.0 / (s[j] + km_leverage_grid_lambda(lambda, g) * (double) m / (double) n);
}

void
km_leverage_grid_add(const double *P, const double *kii, size_t rows, const double *W,
					 uint32_t m, double lambda, double *Q, double *sums)
{
	if (rows == 0)
		return;
	/* Q (rows x grid) := k_i' (K_SS + mu_g I)^-1 k_i, one GEMM */
	cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int) rows, KM_LEVERAGE_GRID,
				(int) m, 1.0, P, (int) m, W, KM_LEVERAGE_GRID, 0.0, Q, KM_LEVERAGE_GRID);
	for (int g = 0; g < KM_LEVERAGE_GRID; g++)
	{
		double		lg = km_leverage_grid_lambda(lambda, g);

		for (size_t i = 0; i < rows; i++)
		{
			double		r = (kii[i] - Q[i * KM_LEVERAGE_GRID + g]) / lg;
			double		l = isfinite(r) && r > KM_LEVERAGE_MIN_SCORE ? r : KM_LEVERAGE_MIN_SCORE;

			sums[g] += l;
			sums[KM_LEVERAGE_GRID + g] += l * l;
		}
	}
}

void
km_leverage_choose(const double *sums, size_t n, uint32_t m, double lambda,
				   double *lambda_s, uint32_t *uniform)
{
	int			g = 0;
	double		ess;

	while (g < KM_LEVERAGE_GRID - 1 && sums[g] > (double) m)
		g++;
	*lambda_s = km_leverage_grid_lambda(lambda, g);
	ess = sums[KM_LEVERAGE_GRID + g] > 0.0 && n > 0 ?
		sums[g] * sums[g] / ((double) n * sums[KM_LEVERAGE_GRID + g]) : 1.0;
	if (!(ess >= 0.0))
		ess = 0.0;
	if (ess > 1.0)
		ess = 1.0;
	*uniform = (uint32_t) floor((double) m * ess);
	if (*uniform > m)
		*uniform = m;
}

static double *
lev_keys(const km_leverage_state *st)
{
	return (double *) st->data;
}

static uint64_t *
lev_hashes(const km_leverage_state *st)
{
	return (uint64_t *) (st->data + st->capacity);
}

static double *
lev_rows(const km_leverage_state *st)
{
	return (double *) st->data + 2 * (size_t) st->capacity;
}

size_t
km_leverage_state_bytes(uint32_t m, uint32_t d)
{
	size_t		per = (size_t) d + 2;

	if ((size_t) m > (SIZE_MAX / sizeof(double) - 16) / per)
		return 0;
	return sizeof(km_leverage_state) + sizeof(double) * per * m;
}

void
km_leverage_state_init(km_leverage_state *st, uint32_t m, uint32_t d)
{
	memset(st, 0, km_leverage_state_bytes(m, d));
	st->capacity = m;
	st->d = d;
}

/* Order of two candidates: key, hash, then the values. */
static int
lev_cmp(double ka, uint64_t ha, const double *a, double kb, uint64_t hb,
		const double *b, uint32_t d)
{
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (ha != hb)
		return ha < hb ? -1 : 1;
	for (uint32_t j = 0; j < d; j++)
		if (a[j] != b[j])
			return a[j] < b[j] ? -1 : 1;
	return 0;
}

static int
lev_cmp_slots(const km_leverage_state *st, uint32_t a, uint32_t b)
{
	return lev_cmp(lev_keys(st)[a], lev_hashes(st)[a], lev_rows(st) + (size_t) a * st->d,
				   lev_keys(st)[b], lev_hashes(st)[b], lev_rows(st) + (size_t) b * st->d,
				   st->d);
}

void
km_leverage_state_offer_key(km_leverage_state *st, const double *x, double key, uint64_t hash)
{
	double	   *keys = lev_keys(st);
	uint64_t   *hashes = lev_hashes(st);
	double	   *rows = lev_rows(st);
	uint32_t	d = st->d;
	uint32_t	slot;

	if (st->capacity == 0)
		return;
	if (st->n == st->capacity &&
		lev_cmp(key, hash, x, keys[st->max_slot], hashes[st->max_slot],
				rows + (size_t) st->max_slot * d, d) >= 0)
		return;
	for (uint32_t i = 0; i < st->n; i++)
		if (lev_cmp(key, hash, x, keys[i], hashes[i], rows + (size_t) i * d, d) == 0)
			return;				/* equal rows: kept once */
	slot = st->n < st->capacity ? st->n++ : st->max_slot;
	keys[slot] = key;
	hashes[slot] = hash;
	memcpy(rows + (size_t) slot * d, x, sizeof(double) * d);
	st->max_slot = 0;
	for (uint32_t i = 1; i < st->n; i++)
		if (lev_cmp_slots(st, i, st->max_slot) > 0)
			st->max_slot = i;
}

void
km_leverage_state_offer(km_leverage_state *st, const double *x, double score,
						uint64_t hash)
{
	km_leverage_state_offer_key(st, x, -log(km_leverage_uniform(hash)) / score, hash);
}

km_status
km_leverage_state_combine(km_leverage_state *a, const km_leverage_state *b,
						  km_error *err)
{
	if (a->capacity != b->capacity || a->d != b->d || b->n > b->capacity)
		return km_fail(err, KM_ERR_INVALID, "leverage samples do not match",
					   "One sample keeps %u rows of %u features, the other %u of %u.",
					   (unsigned) a->capacity, (unsigned) a->d,
					   (unsigned) b->capacity, (unsigned) b->d);
	for (uint32_t i = 0; i < b->n; i++)
		km_leverage_state_offer_key(a, lev_rows(b) + (size_t) i * b->d, lev_keys(b)[i],
					  lev_hashes(b)[i]);
	return KM_OK;
}

/* order := the slots of st sorted by key (insertion: m is at most a few thousand) */
static void
lev_sort(const km_leverage_state *st, uint32_t *order)
{
	for (uint32_t i = 0; i < st->n; i++)
	{
		uint32_t	j = i;

		while (j > 0 && lev_cmp_slots(st, order[j - 1], i) > 0)
		{
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

void
km_leverage_state_rows(const km_leverage_state *st, double *C, uint32_t *order)
{
	lev_sort(st, order);
	for (uint32_t i = 0; i < st->n; i++)
		memcpy(C + (size_t) i * st->d, lev_rows(st) + (size_t) order[i] * st->d,
			   sizeof(double) * st->d);
}

/* ------------------------------------------------------------------ */
/* the defensive sample: a uniform share, the rest by leverage        */
/* ------------------------------------------------------------------ */

/* the uniform half's state, then the leverage one's */
static km_leverage_state *
sample_uniform(const void *sample)
{
	return (km_leverage_state *) sample;
}

static km_leverage_state *
sample_leverage(const void *sample)
{
	const km_leverage_state *u = sample;

	return (km_leverage_state *) ((const char *) sample +
								  km_leverage_state_bytes(u->capacity, u->d));
}

size_t
km_leverage_sample_bytes(uint32_t m, uint32_t uniform, uint32_t d)
{
	size_t		a = km_leverage_state_bytes(uniform, d);
	size_t		b = km_leverage_state_bytes(m, d);

	return a == 0 || b == 0 || a > SIZE_MAX - b ? 0 : a + b;
}

void
km_leverage_sample_init(void *sample, uint32_t m, uint32_t uniform, uint32_t d)
{
	km_leverage_state_init(sample_uniform(sample), uniform, d);
	km_leverage_state_init(sample_leverage(sample), m, d);
}

void
km_leverage_sample_offer(void *sample, const double *x, double score, uint64_t hash)
{
	/* key 0 for all: ordered by hash, then values, as the basis's reservoir */
	km_leverage_state_offer_key(sample_uniform(sample), x, 0.0, hash);
	km_leverage_state_offer(sample_leverage(sample), x, score, hash);
}

km_status
km_leverage_sample_combine(void *into, const void *from, km_error *err)
{
	if (km_leverage_state_combine(sample_uniform(into), sample_uniform(from), err) != KM_OK)
		return err->status;
	return km_leverage_state_combine(sample_leverage(into), sample_leverage(from), err);
}

uint32_t
km_leverage_sample_rows(const void *sample, double *C, uint32_t *order)
{
	const km_leverage_state *u = sample_uniform(sample);
	const km_leverage_state *l = sample_leverage(sample);
	uint32_t	d = u->d;
	uint32_t	m = l->capacity;
	uint32_t	n = u->n;

	km_leverage_state_rows(u, C, order);
	/* then the leverage rows in key order */
	lev_sort(l, order);
	{
		uint32_t	w = n;

		for (uint32_t i = 0; i < l->n && w < m; i++)
		{
			uint32_t	slot = order[i];
			bool		dup = false;

			for (uint32_t j = 0; j < u->n && !dup; j++)
				dup = lev_hashes(u)[j] == lev_hashes(l)[slot] &&
					memcmp(lev_rows(u) + (size_t) j * d, lev_rows(l) + (size_t) slot * d,
						   sizeof(double) * d) == 0;
			if (!dup)
				memcpy(C + (size_t) w++ * d, lev_rows(l) + (size_t) slot * d,
					   sizeof(double) * d);
		}
		return w;
	}
}
