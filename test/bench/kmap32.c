/*
 * A float32 rbf kernel map with float64 sums (issue 31): what it buys in a
 * CG pass (K_nm v, then K_nm' u) and in the one-pass sums (K_nm'K_nm by
 * DSYRK), and what it costs in predictions, against the float64 map of
 * src/core (km_gram_cross: DGEMM for x.c, then kernel_maps.c's exp).
 *
 * Maps (kmap32_maps.c, built as kernel_maps.c is):
 *   f64     km_gram_cross, today's
 *   expf    DGEMM as today, the exponent rounded to float and expf
 *           (libmvec's 8-wide vector variant), widened to double
 *   sgemm   rows and centres rounded to float, SGEMM for x.c, the distance
 *           and expf in float, widened to double
 *   sgemv   sgemm's map kept in float, the block's K v and K' u by SGEMV,
 *           added into float64 totals per block (timing only)
 * Every map is followed by the same float64 work: DGEMV twice (a CG pass)
 * or DSYRK + DGEMV (the one-pass sums).  Passes are timed in process CPU
 * time on one BLAS thread, the maps alternating block by block (side by
 * side, so the machine's load falls on all alike); medians of REPS passes.
 *
 * Accuracy: the one-pass normal equations (Z'Z + lambda (K_mm + eps I)) a
 * = Z'(y - mean y) (what CG converges to as well: its passes add the same
 * Z'(Z v)) solved by Cholesky with Z from each map, K_mm in float64; held-
 * out predictions from the float64 map (train32/pred64) and from the same
 * float32 map (train32/pred32), against float64's: the largest |difference|
 * over the largest |prediction|, and the largest per-row relative one.
 *
 * Data sets (standardized on the training rows; centres: the first m
 * training rows, which are i.i.d.):
 *   friedman   Friedman #1, d = 10, noise sd 1, rbf gamma 0.05, lambda 0.1
 *   mixture    12 Gaussian clusters of unequal size and spread, d = 6
 *              (test/bench/centres.py's), gamma 0.5, lambda 0.1
 *   smooth20   uniform [0, 1]^20, test/bench/big_rows.py's target, noise sd
 *              0.1, gamma 1/20, lambda 0.1 (the 1M-row benchmark set)
 * Usage (make test/bench/kmap32):
 *   test/bench/kmap32 SET N_TRAIN N_TEST M [REPS]
 * e.g. test/bench/kmap32 smooth20 1000000 20000 1000
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <lapacke.h>

#include "bench.h"
#include "kernels.h"
#include "kmap32_maps.h"

#define BLOCK 512				/* rows per block, as KM_BLOCK_ROWS */
#define NMAPS 4

enum
{
	MAP_F64, MAP_EXPF, MAP_SGEMM, MAP_SGEMV
};
static const char *map_names[NMAPS] = {"f64", "expf", "sgemm", "sgemv"};

extern void openblas_set_num_threads(int);

static unsigned long long rng_state = 88172645463325252ULL;

static double
urand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return ((double) (rng_state >> 11) + 0.5) / 9007199254740992.0;
}

static double
nrand(void)
{
	return sqrt(-2.0 * log(urand())) * cos(2.0 * M_PI * urand());
}

/* rows of a data set: X (n x d), y (n); returns d, sets gamma */
static int
make_rows(const char *set, size_t n, double **Xo, double **yo, double *gamma)
{
	int			d;
	double	   *X,
			   *y;

	if (strcmp(set, "friedman") == 0)
		d = 10;
	else if (strcmp(set, "mixture") == 0)
		d = 6;
	else if (strcmp(set, "smooth20") == 0)
		d = 20;
	else
	{
		fprintf(stderr, "unknown set %s (friedman, mixture, smooth20)\n", set);
		exit(2);
	}
	X = xmalloc(n * d * sizeof(double));
	y = xmalloc(n * sizeof(double));
	if (d == 6)
	{
		double		cen[12][6],
					spread[12],
					w[12],
					tot = 0.0;

		for (int k = 0; k < 12; k++)
		{
			for (int j = 0; j < 6; j++)
				cen[k][j] = 3.0 * nrand();
			spread[k] = 0.1 + 0.5 * ((k * 5) % 12) / 11.0;
			w[k] = (k + 1.0) * (k + 1.0);
			tot += w[k];
		}
		for (size_t i = 0; i < n; i++)
		{
			double		u = urand() * tot;
			int			k = 0;
			double	   *x = X + i * d;

			while (k < 11 && u > w[k])
				u -= w[k++];
			for (int j = 0; j < 6; j++)
				x[j] = cen[k][j] + spread[k] * nrand();
			y[i] = sin(x[0]) + 0.5 * cos(0.7 * x[1]) * x[2] / 3.0 +
				0.3 * sin(x[3] * x[4] / 4.0) + 0.1 * nrand();
		}
		*gamma = 0.5;
	}
	else
	{
		for (size_t i = 0; i < n; i++)
		{
			double	   *x = X + i * d;
			double		f;

			for (int j = 0; j < d; j++)
				x[j] = urand();
			f = 10 * sin(M_PI * x[0] * x[1]) + 20 * (x[2] - 0.5) * (x[2] - 0.5) +
				10 * x[3] + 5 * x[4];
			if (d == 20)
			{
				double		s = 0.0;

				for (int j = 5; j < 20; j++)
					s += x[j];
				y[i] = f + 2 * sin(2 * M_PI * s / 15.0) + 0.1 * nrand();
			}
			else
				y[i] = f + nrand();
		}
		*gamma = d == 20 ? 1.0 / 20 : 0.05;
	}
	*Xo = X;
	*yo = y;
	return d;
}

/* standardize all rows by the first ntrain's mean and sd */
static void
standardize(double *X, size_t n, size_t ntrain, int d)
{
	for (int j = 0; j < d; j++)
	{
		double		s = 0.0,
					ss = 0.0,
					mu,
					sd;

		for (size_t i = 0; i < ntrain; i++)
			s += X[i * d + j];
		mu = s / ntrain;
		for (size_t i = 0; i < ntrain; i++)
			ss += (X[i * d + j] - mu) * (X[i * d + j] - mu);
		sd = sqrt(ss / ntrain);
		for (size_t i = 0; i < n; i++)
			X[i * d + j] = (X[i * d + j] - mu) / (sd > 0 ? sd : 1.0);
	}
}

typedef struct ctx
{
	km_kernel	k;
	int			d;
	size_t		m;
	const double *C;			/* m x d */
	double	   *cn;				/* m: squared norms */
	float	   *Cf;				/* m x d */
	float	   *cnf;
	double	   *xn;				/* BLOCK */
	float	   *Xf;				/* BLOCK x d */
	float	   *S;				/* BLOCK x m */
	float	   *uf;				/* BLOCK */
	float	   *vf;				/* m */
	float	   *wf;				/* m */
} ctx;

/* Z (rows x m, row-major, double) := the kernel block of rows X by map */
static void
kernel_block(ctx *c, int map, const double *X, size_t rows, double *Z)
{
	size_t		m = c->m;
	int			d = c->d;

	for (size_t i = 0; i < rows; i++)
	{
		const double *x = X + i * d;
		double		s = 0.0;

		for (int j = 0; j < d; j++)
			s += x[j] * x[j];
		c->xn[i] = s;
	}
	if (map == MAP_F64)
	{
		km_gram_cross(&c->k, X, rows, c->xn, c->C, NULL, m, d, c->cn, Z);
		return;
	}
	if (map == MAP_EXPF)
	{
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) m, d,
					1.0, X, d, c->C, d, 0.0, Z, (int) m);
		for (size_t i = 0; i < rows; i++)
			kmap32_rbf_expf(Z + i * m, m, c->cn, c->xn[i], c->k.gamma);
		return;
	}
	kmap32_narrow(c->Xf, X, rows * d);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows, (int) m, d,
				1.0f, c->Xf, d, c->Cf, d, 0.0f, c->S, (int) m);
	if (map == MAP_SGEMM)
		for (size_t i = 0; i < rows; i++)
			kmap32_rbf_float(c->S + i * m, Z + i * m, m, c->cnf, (float) c->xn[i],
							 (float) c->k.gamma);
	else
		for (size_t i = 0; i < rows; i++)
			kmap32_rbf_float_inplace(c->S + i * m, m, c->cnf, (float) c->xn[i],
									 (float) c->k.gamma);
}

/* w += Z'(Z v) over the block (the CG pass's work) */
static void
cg_block(ctx *c, int map, size_t rows, const double *Z, const double *v, double *u,
		 double *w)
{
	int			m = (int) c->m;

	if (map == MAP_SGEMV)
	{
		cblas_sgemv(CblasRowMajor, CblasNoTrans, (int) rows, m, 1.0f, c->S, m, c->vf, 1,
					0.0f, c->uf, 1);
		cblas_sgemv(CblasRowMajor, CblasTrans, (int) rows, m, 1.0f, c->S, m, c->uf, 1,
					0.0f, c->wf, 1);
		for (int j = 0; j < m; j++)
			w[j] += c->wf[j];
		return;
	}
	cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, m, 1.0, Z, m, v, 1, 0.0, u, 1);
	cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, m, 1.0, Z, m, u, 1, 1.0, w, 1);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Time maps side by side: per 1M rows, map and CG gemvs, or map and SYRK. */
static void
time_passes(ctx *c, const double *X, size_t n, int reps, int syrk)
{
	size_t		m = c->m;
	double	   *Z = xmalloc(BLOCK * m * sizeof(double));
	double	   *v = xmalloc(m * sizeof(double));
	double	   *u = xmalloc(BLOCK * sizeof(double));
	double	   *w = xmalloc(m * sizeof(double));
	double	   *G = syrk ? xmalloc(m * m * sizeof(double)) : NULL;
	double		tmap[NMAPS][16],
				tsum[NMAPS][16];
	int			nmaps = syrk ? 3 : NMAPS;	/* sgemv has no SYRK form */

	for (size_t j = 0; j < m; j++)
		v[j] = 1.0 / (1.0 + j);
	for (size_t j = 0; j < m; j++)
		c->vf[j] = (float) v[j];
	if (reps > 16)
		reps = 16;
	for (int r = 0; r < reps; r++)
	{
		double		am[NMAPS] = {0},
					as[NMAPS] = {0};

		for (size_t i0 = 0; i0 < n; i0 += BLOCK)
		{
			size_t		rows = n - i0 < BLOCK ? n - i0 : BLOCK;

			for (int map = 0; map < nmaps; map++)
			{
				double		t0 = cpu_now(),
							t1;

				kernel_block(c, map, X + i0 * c->d, rows, Z);
				t1 = cpu_now();
				if (syrk)
				{
					cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) m, (int) rows,
								1.0, Z, (int) m, 1.0, G, (int) m);
					cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z,
								(int) m, u, 1, 1.0, w, 1);
				}
				else
					cg_block(c, map, rows, Z, v, u, w);
				am[map] += t1 - t0;
				as[map] += cpu_now() - t1;
			}
		}
		for (int map = 0; map < nmaps; map++)
		{
			tmap[map][r] = am[map] * 1e6 / n;
			tsum[map][r] = as[map] * 1e6 / n;
		}
	}
	printf("  %s, m = %zu, s per 1M rows (median of %d, CPU time, 1 thread):\n",
		   syrk ? "one-pass sums (map + DSYRK + DGEMV)" : "CG pass (map + Z v + Z'u)", m, reps);
	{
		double		base = 0.0;

		for (int map = 0; map < nmaps; map++)
		{
			double		a = median(tmap[map], reps),
						b = median(tsum[map], reps);

			if (map == 0)
				base = a + b;
			printf("    %-6s map %7.3f  sums %7.3f  total %7.3f  (%.2fx f64's)\n",
				   map_names[map], a, b, a + b, (a + b) / base);
		}
	}
	free(Z);
	free(v);
	free(u);
	free(w);
	free(G);
}

/* one-pass normal equations from map; a (m) := the solution; returns mean y */
static double
fit(ctx *c, int map, const double *X, const double *y, size_t n, double lambda,
	double *a)
{
	size_t		m = c->m;
	double	   *G = calloc(m * m, sizeof(double));
	double	   *Z = xmalloc(BLOCK * m * sizeof(double));
	double	   *yc = xmalloc(BLOCK * sizeof(double));
	double	   *K = xmalloc(m * m * sizeof(double));
	double		ym = 0.0;
	lapack_int	info;

	for (size_t i = 0; i < n; i++)
		ym += y[i];
	ym /= n;
	memset(a, 0, m * sizeof(double));
	for (size_t i0 = 0; i0 < n; i0 += BLOCK)
	{
		size_t		rows = n - i0 < BLOCK ? n - i0 : BLOCK;

		kernel_block(c, map, X + i0 * c->d, rows, Z);
		for (size_t i = 0; i < rows; i++)
			yc[i] = y[i0 + i] - ym;
		cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, (int) m, (int) rows, 1.0, Z,
					(int) m, 1.0, G, (int) m);
		cblas_dgemv(CblasRowMajor, CblasTrans, (int) rows, (int) m, 1.0, Z, (int) m, yc, 1,
					1.0, a, 1);
	}
	/* K_mm in float64 whatever the map */
	for (size_t i0 = 0; i0 < m; i0 += BLOCK)
	{
		size_t		rows = m - i0 < BLOCK ? m - i0 : BLOCK;

		kernel_block(c, MAP_F64, c->C + i0 * c->d, rows, K + i0 * m);
	}
	for (size_t j = 0; j < m; j++)
		for (size_t i = j; i < m; i++)
			G[i + j * m] += lambda * (K[i * m + j] + (i == j ? 1e-10 : 0.0));
	info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', (lapack_int) m, 1, G, (lapack_int) m, a,
						 (lapack_int) m);
	if (info != 0)
		printf("    (%s: dposv info %d)\n", map_names[map], (int) info);
	free(G);
	free(Z);
	free(yc);
	free(K);
	return ym;
}

static void
predict(ctx *c, int map, const double *X, size_t n, const double *a, double ym, double *p)
{
	size_t		m = c->m;
	double	   *Z = xmalloc(BLOCK * m * sizeof(double));

	for (size_t i0 = 0; i0 < n; i0 += BLOCK)
	{
		size_t		rows = n - i0 < BLOCK ? n - i0 : BLOCK;

		kernel_block(c, map, X + i0 * c->d, rows, Z);
		cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) rows, (int) m, 1.0, Z, (int) m, a, 1,
					0.0, p + i0, 1);
		for (size_t i = 0; i < rows; i++)
			p[i0 + i] += ym;
	}
	free(Z);
}

static void
compare(const char *what, const double *p, const double *ref, const double *y, size_t n)
{
	double		dmax = 0.0,
				pmax = 0.0,
				rmax = 0.0,
				se = 0.0,
				se_ref = 0.0;

	for (size_t i = 0; i < n; i++)
	{
		double		dd = fabs(p[i] - ref[i]);

		dmax = fmax(dmax, dd);
		pmax = fmax(pmax, fabs(ref[i]));
		if (ref[i] != 0.0)
			rmax = fmax(rmax, dd / fabs(ref[i]));
		se += (p[i] - y[i]) * (p[i] - y[i]);
		se_ref += (ref[i] - y[i]) * (ref[i] - y[i]);
	}
	printf("    %-22s max|diff|/max|p| %.2e  max per-row rel %.2e  RMSE %.6f (f64 %.6f)  %s\n",
		   what, dmax / pmax, rmax, sqrt(se / n), sqrt(se_ref / n),
		   dmax / pmax <= 1e-6 ? "within 1e-6" : "NOT within 1e-6");
}

int
main(int argc, char **argv)
{
	size_t		ntrain,
				ntest,
				m;
	int			reps,
				d;
	double	   *X,
			   *y,
				gamma;
	ctx			c;
	double	   *a64,
			   *a32,
			   *p64,
			   *p;
	double		ym64,
				ym32;

	if (argc < 5)
	{
		fprintf(stderr, "usage: %s SET N_TRAIN N_TEST M [REPS]\n", argv[0]);
		return 2;
	}
	ntrain = strtoull(argv[2], NULL, 10);
	ntest = strtoull(argv[3], NULL, 10);
	m = strtoull(argv[4], NULL, 10);
	reps = argc > 5 ? atoi(argv[5]) : 3;
	if (m == 0 || m > ntrain || reps < 1)
		return 2;
	openblas_set_num_threads(1);
	d = make_rows(argv[1], ntrain + ntest, &X, &y, &gamma);
	standardize(X, ntrain + ntest, ntrain, d);
	memset(&c, 0, sizeof(c));
	c.k.type = KM_KERNEL_RBF;
	c.k.gamma = gamma;
	c.d = d;
	c.m = m;
	c.C = X;					/* the first m training rows */
	c.cn = xmalloc(m * sizeof(double));
	c.Cf = xmalloc(m * d * sizeof(float));
	c.cnf = xmalloc(m * sizeof(float));
	c.xn = xmalloc(BLOCK * sizeof(double));
	c.Xf = xmalloc(BLOCK * d * sizeof(float));
	c.S = xmalloc(BLOCK * m * sizeof(float));
	c.uf = xmalloc(BLOCK * sizeof(float));
	c.vf = xmalloc(m * sizeof(float));
	c.wf = xmalloc(m * sizeof(float));
	kmap32_narrow(c.Cf, c.C, m * d);
	for (size_t j = 0; j < m; j++)
	{
		double		s = 0.0;

		for (int f = 0; f < d; f++)
			s += c.C[j * d + f] * c.C[j * d + f];
		c.cn[j] = s;
		c.cnf[j] = (float) s;
	}
	printf("kmap32 %s: %zu training rows, %zu held out, d = %d, m = %zu, rbf gamma %g, "
		   "lambda 0.1\n", argv[1], ntrain, ntest, d, m, gamma);
	time_passes(&c, X, ntrain < 200000 ? ntrain : 200000, reps, 0);
	{
		/* the SYRK's rows: about 2.5e10 flops a map, at least 4 blocks */
		size_t		rs = (size_t) (2.5e10 / ((double) m * m));

		rs = rs < 4 * BLOCK ? 4 * BLOCK : rs;
		time_passes(&c, X, ntrain < rs ? ntrain : rs, reps, 1);
	}
	if (getenv("KM_KMAP32_NOFIT"))
		return 0;
	a64 = xmalloc(m * sizeof(double));
	a32 = xmalloc(m * sizeof(double));
	p64 = xmalloc(ntest * sizeof(double));
	p = xmalloc(ntest * sizeof(double));
	ym64 = fit(&c, MAP_F64, X, y, ntrain, 0.1, a64);
	predict(&c, MAP_F64, X + ntrain * d, ntest, a64, ym64, p64);
	printf("  predictions against float64's (%zu held-out rows; a solve of the one-pass "
		   "normal equations with each map):\n", ntest);
	for (int map = MAP_EXPF; map <= MAP_SGEMM; map++)
	{
		char		what[64];

		ym32 = fit(&c, map, X, y, ntrain, 0.1, a32);
		predict(&c, MAP_F64, X + ntrain * d, ntest, a32, ym32, p);
		snprintf(what, sizeof(what), "%s train/f64 predict", map_names[map]);
		compare(what, p, p64, y + ntrain, ntest);
		predict(&c, map, X + ntrain * d, ntest, a32, ym32, p);
		snprintf(what, sizeof(what), "%s train and predict", map_names[map]);
		compare(what, p, p64, y + ntrain, ntest);
		/* the map alone: float64's model, predictions through this map */
		predict(&c, map, X + ntrain * d, ntest, a64, ym64, p);
		snprintf(what, sizeof(what), "f64 train/%s predict", map_names[map]);
		compare(what, p, p64, y + ntrain, ntest);
	}
	return 0;
}
