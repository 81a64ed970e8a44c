/*
 * kernels.c - kernel functions, Gram matrices and kernel rows.
 *
 * Inner-product kernels (linear, poly, rbf, sigmoid, cosine, polysum) get
 * their inner products from BLAS (DGEMM for a Gram panel, DGEMV for a row)
 * and then apply an element-wise map; rbf and cosine reuse per-row norms.
 * laplacian and min are not functions of inner products and are computed
 * pair by pair.
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14; older kernels: EINVAL, ignored */
#endif
#endif

#include <cblas.h>

#include "kernel_maps.h"
#include "kernels.h"
#include "progress.h"

static const struct
{
	const char *name;
	km_kernel_type type;
	unsigned	params;
}			kernel_table[] =
{
	{"linear", KM_KERNEL_LINEAR, 0},
	{"poly", KM_KERNEL_POLY, KM_PARAM_GAMMA | KM_PARAM_DEGREE | KM_PARAM_COEF0},
	{"rbf", KM_KERNEL_RBF, KM_PARAM_GAMMA},
	{"laplacian", KM_KERNEL_LAPLACIAN, KM_PARAM_GAMMA},
	{"sigmoid", KM_KERNEL_SIGMOID, KM_PARAM_GAMMA | KM_PARAM_COEF0},
	{"cosine", KM_KERNEL_COSINE, 0},
	{"min", KM_KERNEL_MIN, 0},
	{"polysum", KM_KERNEL_POLYSUM, KM_PARAM_DEGREE},
};

#define N_KERNELS (sizeof(kernel_table) / sizeof(kernel_table[0]))

const char *
km_kernel_name(km_kernel_type type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (kernel_table[i].type == type)
			return kernel_table[i].name;
	return "unknown";
}

bool
km_kernel_from_name(const char *name, km_kernel_type *type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (strcmp(kernel_table[i].name, name) == 0)
		{
			*type = kernel_table[i].type;
			return true;
		}
	return false;
}

unsigned
km_kernel_params(km_kernel_type type)
{
	for (size_t i = 0; i < N_KERNELS; i++)
		if (kernel_table[i].type == type)
			return kernel_table[i].params;
	return 0;
}

const char *
km_kernel_invalid(const km_kernel *k)
{
	unsigned	params;

	if (k->type < KM_KERNEL_FIRST || k->type > KM_KERNEL_LAST)
		return "kernel";
	params = km_kernel_params(k->type);
	if ((params & KM_PARAM_DEGREE) && (k->degree < 1 || k->degree > KM_MAX_DEGREE))
		return "degree";
	if (!isfinite(k->gamma) || ((params & KM_PARAM_GAMMA) && !(k->gamma > 0.0)))
		return "gamma";
	if (!isfinite(k->coef0))
		return "coef0";
	return NULL;
}

bool
km_kernel_uses_norms(km_kernel_type type)
{
	return type == KM_KERNEL_RBF || type == KM_KERNEL_COSINE;
}

static inline bool
is_inner_product_kernel(km_kernel_type type)
{
	return type != KM_KERNEL_LAPLACIAN && type != KM_KERNEL_MIN;
}

static inline double
dot(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += x[i] * z[i];
	return s;
}

static inline double
l1_distance(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += fabs(x[i] - z[i]);
	return s;
}

static inline double
min_sum(const double *x, const double *z, int d)
{
	double		s = 0.0;

	for (int i = 0; i < d; i++)
		s += fmin(x[i], z[i]);
	return s;
}

/* Largest |x_i| (0 for a zero vector). */
static double
max_abs(const double *x, int d)
{
	double		m = 0.0;

	for (int i = 0; i < d; i++)
		m = fmax(m, fabs(x[i]));
	return m;
}

/*
 * Euclidean norm without overflow or underflow: the plain sum of squares
 * when it is safely inside the range of a double, else the sum of squares
 * of x / max |x_i|, as LAPACK's dnrm2 scales.
 */
static double
safe_norm(const double *x, int d)
{
	double		sq = dot(x, x, d);
	double		m;
	double		s = 0.0;

	if (sq > 1e-280 && sq < 1e280)
		return sqrt(sq);
	m = max_abs(x, d);
	if (m == 0.0)
		return 0.0;
	for (int i = 0; i < d; i++)
	{
		double		t = x[i] / m;

		s += t * t;
	}
	return m * sqrt(s);
}

/* Cosine of x and z with both scaled to a largest element of 1. */
static double
scaled_cosine(const double *x, const double *z, int d)
{
	double		mx = max_abs(x, d);
	double		mz = max_abs(z, d);
	double		xz = 0.0;
	double		xx = 0.0;
	double		zz = 0.0;

	/* scikit-learn's normalize() leaves zero vectors at zero */
	if (mx == 0.0 || mz == 0.0)
		return 0.0;
	for (int i = 0; i < d; i++)
	{
		double		a = x[i] / mx;
		double		b = z[i] / mz;

		xz += a * b;
		xx += a * a;
		zz += b * b;
	}
	/* xx, zz <= d: the product cannot overflow, and sqrt(4) is exact */
	return xz / sqrt(xx * zz);
}

/* Cosine norms inside this range keep inner products and their quotients exact enough. */
#define COSINE_NORM_MIN 1e-100
#define COSINE_NORM_MAX 1e100

static inline bool
cosine_norm_safe(double v)
{
	return v == 0.0 || (v >= COSINE_NORM_MIN && v <= COSINE_NORM_MAX);
}

double
km_vector_norm(const km_kernel *k, const double *x, int d)
{
	if (k->type == KM_KERNEL_COSINE)
		return safe_norm(x, d);
	return dot(x, x, d);
}

void
km_row_norms(const km_kernel *k, const double *X, size_t n, int d,
			 double *norms)
{
	if (!km_kernel_uses_norms(k->type))
		return;
	for (size_t i = 0; i < n; i++)
		norms[i] = km_vector_norm(k, X + i * (size_t) d, d);
}

bool
km_kernel_eval_finite(const km_kernel *k, const double *x, const double *z,
					  int d, double *out)
{
	double		t;				/* the intermediate: inner product or distance */
	double		v;

	switch (k->type)
	{
		case KM_KERNEL_LINEAR:
			v = t = dot(x, z, d);
			break;
		case KM_KERNEL_POLY:
			t = dot(x, z, d);
			v = km_ipow(k->gamma * t + k->coef0, k->degree);
			break;
		case KM_KERNEL_RBF:
			t = 0.0;
			for (int i = 0; i < d; i++)
				t += (x[i] - z[i]) * (x[i] - z[i]);
			v = exp(-k->gamma * t);
			break;
		case KM_KERNEL_LAPLACIAN:
			t = l1_distance(x, z, d);
			v = exp(-k->gamma * t);
			break;
		case KM_KERNEL_SIGMOID:
			t = dot(x, z, d);
			v = tanh(k->gamma * t + k->coef0);
			break;
		case KM_KERNEL_COSINE:
			t = 0.0;
			v = scaled_cosine(x, z, d);
			break;
		case KM_KERNEL_MIN:
			v = t = min_sum(x, z, d);
			break;
		case KM_KERNEL_POLYSUM:
			t = dot(x, z, d);
			v = km_polysum(t, k->degree);
			break;
		default:
			t = v = NAN;
			break;
	}
	*out = isfinite(t) ? v : t;
	return isfinite(t) && isfinite(v);
}

double
km_kernel_eval(const km_kernel *k, const double *x, const double *z, int d)
{
	double		v;

	(void) km_kernel_eval_finite(k, x, z, d, &v);
	return v;
}

/*
 * v[i] = K(a_i, b) for the count rows a_i of A, pair by pair, every
 * intermediate checked: an entry whose intermediate is not finite keeps
 * that non-finite intermediate.  Returns whether all are finite.
 */
static bool
pairwise_direct(const km_kernel *k, const double *A, size_t count, int d,
				const double *b, double *v)
{
	bool		ok = true;

	for (size_t i = 0; i < count; i++)
		ok &= km_kernel_eval_finite(k, A + i * (size_t) d, b, d, &v[i]);
	return ok;
}

/*
 * How the inner-product kernels can go wrong in BLAS form, decided once
 * per matrix from the row norms: whether some inner product may overflow
 * (then each raw column is checked before its map, which -ffast-math
 * could make finite), and whether the expanded form of rbf or the
 * quotient of cosine is unsafe (then the entries are computed pair by
 * pair from the definition).
 */
typedef struct gram_plan
{
	bool		inner;
	bool		direct;
	bool		check_raw;
} gram_plan;

static gram_plan
plan_gram(const km_kernel *k, const double *X, size_t n, int d,
		  const double *norms)
{
	gram_plan	g = {is_inner_product_kernel(k->type), false, false};
	double		top = 0.0;

	if (!g.inner)
	{
		g.direct = true;
		return g;
	}
	for (size_t i = 0; i < n; i++)
	{
		double		sq;

		if (k->type == KM_KERNEL_COSINE)
		{
			if (!cosine_norm_safe(norms[i]))
				g.direct = true;
			continue;
		}
		sq = k->type == KM_KERNEL_RBF ? norms[i] : dot(X + i * (size_t) d, X + i * (size_t) d, d);
		top = isfinite(sq) ? fmax(top, sq) : HUGE_VAL;
	}
	/* |<x, z>| <= max ||x||^2; rbf adds two norms and twice the product */
	if (k->type == KM_KERNEL_RBF)
		g.direct = !(top <= DBL_MAX / 8);
	else
		g.check_raw = !(top <= DBL_MAX / 2);
	return g;
}

/*
 * Column j of the Gram matrix, rows first..first+count-1, given their raw
 * inner products in col (inner-product kernels).  Returns whether every
 * entry is finite.
 */
static bool
gram_column(const km_kernel *k, const gram_plan *g, const double *X,
			size_t first, size_t count, int d, const double *norms,
			size_t j, double *col)
{
	const double *xj = X + j * (size_t) d;

	if (g->direct)
		return pairwise_direct(k, X + first * (size_t) d, count, d, xj, col);
	if (g->check_raw && !km_all_finite(col, count))
	{
		if (k->type != KM_KERNEL_COSINE)
			return false;		/* an inner product overflowed: keep it */
		return pairwise_direct(k, X + first * (size_t) d, count, d, xj, col);
	}
	km_map_inner(k, col, count, norms ? norms + first : NULL,
				 norms ? norms[j] : 0.0);
	/* the distance of a row to itself is exactly 0 */
	if (k->type == KM_KERNEL_RBF && j >= first && j < first + count)
		col[j - first] = 1.0;
	/* only the polynomial maps can overflow from finite inner products */
	if (k->type == KM_KERNEL_POLY || k->type == KM_KERNEL_POLYSUM)
		return km_all_finite(col, count);
	return true;
}

/* Multiply-adds one Gram panel may take: about 0.1 s on one core. */
#define KM_GRAM_PANEL_WORK 5e8

size_t
km_gram_panel_width(size_t n, int d)
{
	double		w = KM_GRAM_PANEL_WORK / ((double) n * (double) (d > 0 ? d : 1));

	if (w >= KM_GRAM_PANEL)
		return KM_GRAM_PANEL;
	return w < 1.0 ? 1 : (size_t) w;
}

/*
 * Columns [c0, c1) of a part of a Gram matrix to map to kernel entries
 * (raw inner products in out for inner-product kernels), in plain C (no
 * BLAS, no callback), so that half of them can go to a second thread:
 * - a panel of km_gram_lower: column j of K (leading dimension ld) from
 *   row j to n, at out + j + j * ld;
 * - a block of km_gram_times: rows i0 .. i0 + ib - 1 and columns j0 + c of
 *   out (leading dimension ib), with the column sums of |out| added to
 *   colabs[j0 + c] and its row sums to rowabs[0 .. ib), each when not NULL.
 */
typedef struct map_job
{
	const km_kernel *k;
	const gram_plan *g;
	const double *X;
	const double *norms;
	double	   *out;
	double	   *colabs;
	double	   *rowabs;
	size_t		n,
				ld,
				i0,
				ib,
				j0,
				c0,
				c1;
	int			d;
	bool		ok;
} map_job;

static void *
map_panel_columns(void *arg)
{
	map_job    *t = arg;

	t->ok = true;
	for (size_t j = t->c0; j < t->c1; j++)
		t->ok &= gram_column(t->k, t->g, t->X, j, t->n - j, t->d, t->norms, j,
							 t->out + j + j * t->ld);
	return NULL;
}

/* Entries a panel or block must have before a second thread maps half of it. */
#define KM_MAP_THREAD_MIN 32768

/*
 * Run fn(a) on this thread and fn(b) on a helper thread when BLAS may use
 * two threads, else both here.  The helper blocks every signal and is
 * joined before this returns, so no interrupt callback (which may longjmp)
 * runs while it lives: the element-wise maps are the single-threaded part
 * of building Gram entries, and the second core is otherwise idle then.
 */
static void
run_beside(void *(*fn) (void *), void *a, void *b, size_t entries)
{
	pthread_t	thread;
	sigset_t	all;
	sigset_t	old;
	bool		started = false;

	if (entries >= KM_MAP_THREAD_MIN && openblas_get_num_threads() >= 2)
	{
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		started = pthread_create(&thread, NULL, fn, b) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	fn(a);
	if (started)
		pthread_join(thread, NULL);
	else
		fn(b);
}

/* Map the columns j0 .. j0 + jb - 1 of a Gram panel, on two threads if worth it. */
static bool
map_panel(const km_kernel *k, const gram_plan *g, const double *X, size_t n,
		  int d, const double *norms, size_t j0, size_t jb, double *K,
		  size_t ld)
{
	map_job		a = {k, g, X, norms, K, NULL, NULL, n, ld, 0, 0, j0, j0, j0 + jb / 2, d, true};
	map_job		b = a;

	/* half the columns each (the right half is a little shorter) */
	b.c0 = a.c1;
	b.c1 = j0 + jb;
	run_beside(map_panel_columns, &a, &b, (n - j0) * jb);
	return a.ok && b.ok;
}

bool
km_gram_cols_supported(const km_kernel *k)
{
	return k->type == KM_KERNEL_RBF;
}

size_t
km_gram_cols_slots(size_t n, size_t bytes)
{
	size_t		slots = n > 0 ? bytes / (n * sizeof(double)) : 0;

	if (slots < 2)
		slots = 2;
	return slots < n ? slots : n;
}

size_t
km_gram_cols_table_doubles(size_t n, size_t slots)
{
	/* slot_of (n uint32), col_of (slots uint32), stamp (slots uint64) */
	return (n + 1) / 2 + (slots + 1) / 2 + slots;
}

void
km_gram_cols_init(km_gram_cols *c, const km_kernel *k, const double *X,
				  size_t n, int d, const double *norms, double *K, size_t ld,
				  size_t slots, double *tables)
{
	gram_plan	g = plan_gram(k, X, n, d, norms);

	c->k = k;
	c->X = X;
	c->n = n;
	c->d = d;
	c->norms = norms;
	c->K = K;
	c->ld = ld;
	c->slots = slots < 2 ? 2 : slots;
	c->used = 0;
	c->stamp = (uint64_t *) tables;
	c->slot_of = (uint32_t *) (tables + c->slots);
	c->col_of = (uint32_t *) (tables + c->slots + (n + 1) / 2);
	c->clock = 0;
	c->computed = 0;
	c->direct = g.direct;
	for (size_t i = 0; i < n; i++)
		c->slot_of[i] = UINT32_MAX;
}

/* Populate [p, p + bytes) in one call rather than page fault by page fault. */
static void
populate_pages(void *p, size_t bytes)
{
#ifdef __linux__
	uintptr_t	page = 4096;
	uintptr_t	a = (uintptr_t) p & ~(page - 1);

	(void) madvise((void *) a, (uintptr_t) p + bytes - a, MADV_POPULATE_WRITE);
#else
	(void) p;
	(void) bytes;
#endif
}

const double *
km_gram_cols_get(km_gram_cols *c, size_t j)
{
	uint32_t	s = c->slot_of[j];
	double	   *col;

	if (s == UINT32_MAX)
	{
		gram_plan	g = {is_inner_product_kernel(c->k->type), c->direct, false};

		if (c->used < c->slots)
		{
			s = (uint32_t) c->used++;
			populate_pages(c->K + (size_t) s * c->ld, c->n * sizeof(double));
		}
		else
		{
			/* the least recently used slot */
			s = 0;
			for (uint32_t t = 1; t < c->slots; t++)
				if (c->stamp[t] < c->stamp[s])
					s = t;
			c->slot_of[c->col_of[s]] = UINT32_MAX;
		}
		col = c->K + (size_t) s * c->ld;
		if (g.inner && !g.direct)
			cblas_dgemv(CblasRowMajor, CblasNoTrans, (int) c->n, c->d, 1.0,
						c->X, c->d, c->X + j * (size_t) c->d, 1, 0.0, col, 1);
		(void) gram_column(c->k, &g, c->X, 0, c->n, c->d, c->norms, j, col);
		c->slot_of[j] = s;
		c->col_of[s] = (uint32_t) j;
		c->computed++;
	}
	c->stamp[s] = ++c->clock;
	return c->K + (size_t) s * c->ld;
}

double
km_gram_cols_diag(const km_gram_cols *c, size_t j)
{
	/* gram_column sets the rbf diagonal to exactly 1 */
	if (c->k->type == KM_KERNEL_RBF)
		return 1.0;
	return c->slot_of[j] != UINT32_MAX ? c->K[j + c->slot_of[j] * c->ld] :
		km_kernel_eval(c->k, c->X + j * (size_t) c->d, c->X + j * (size_t) c->d, c->d);
}

bool
km_gram_lower(const km_kernel *k, const double *X, size_t n, int d,
			  const double *norms, double *K, size_t ld,
			  km_interrupt_fn interrupt)
{
	gram_plan	g = plan_gram(k, X, n, d, norms);
	bool		ok = true;
	size_t		width = km_gram_panel_width(n, d);

	km_progress_work_begin();

	for (size_t j0 = 0; j0 < n; j0 += width)
	{
		size_t		jb = n - j0 < width ? n - j0 : width;
		const double *Xj = X + j0 * (size_t) d;

		/*
		 * Panel K[j0:n, j0:j0+jb] = X[j0:n] X[j0:j0+jb]^T.  X is row-major
		 * n x d, i.e. column-major d x n, hence the transposes.
		 */
		if (g.inner && !g.direct)
			cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans,
						(int) (n - j0), (int) jb, d, 1.0, Xj, d, Xj, d,
						0.0, K + j0 + j0 * ld, (int) ld);

		ok &= map_panel(k, &g, X, n, d, norms, j0, jb, K, ld);
		km_check_interrupts(interrupt);
		/* the lower triangle: what is left is the square below the panel, halved */
		km_progress_fraction(1.0 - pow((double) (n - j0 - jb) / (double) n, 2.0),
							 "kernel rows %zu of %zu", j0 + jb, n);
	}
	return ok;
}

static void *
map_times_block(void *arg)
{
	map_job    *t = arg;

	t->ok = true;
	for (size_t c = t->c0; c < t->c1; c++)
	{
		double	   *col = t->out + c * t->ib;

		t->ok &= gram_column(t->k, t->g, t->X, t->i0, t->ib, t->d, t->norms,
							 t->j0 + c, col);
		if (t->colabs != NULL)
		{
			double		s = 0.0;

			for (size_t r = 0; r < t->ib; r++)
				s += fabs(col[r]);
			t->colabs[t->j0 + c] += s;
		}
		if (t->rowabs != NULL)
			for (size_t r = 0; r < t->ib; r++)
				t->rowabs[r] += fabs(col[r]);
	}
	return NULL;
}

/*
 * Map the block, on two threads if worth it; the helper's row sums go to
 * rowabs2 and are added to t->rowabs.
 */
static bool
map_block(map_job *t, double *rowabs2)
{
	map_job		h = *t;

	t->c1 = (t->c0 + t->c1) / 2;
	h.c0 = t->c1;
	h.rowabs = rowabs2;
	if (rowabs2 != NULL)
		memset(rowabs2, 0, t->ib * sizeof(double));
	run_beside(map_times_block, t, &h, t->ib * (h.c1 - t->c0));
	if (t->rowabs != NULL)
		for (size_t r = 0; r < t->ib; r++)
			t->rowabs[r] += rowabs2[r];
	return t->ok && h.ok;
}

/*
 * u := K w and, when colabs is not NULL, colabs[j] := sum_i |K_ij| (the
 * column sums whose largest is the 1-norm of K), in one pass over blocks
 * of K built into B.
 */
static bool
gram_times_abs(const km_kernel *k, const double *X, size_t n, int d,
			   const double *norms, const double *w, double *u,
			   double *colabs, double *B, km_interrupt_fn interrupt)
{
	gram_plan	g = plan_gram(k, X, n, d, norms);
	size_t		width = km_gram_panel_width(n, d);
	double		rowabs[2][KM_TIMES_ROWS];

	/* B holds KM_TIMES_ROWS x KM_TIMES_COLS; panels are at most that wide */
	if (width > KM_TIMES_COLS)
		width = KM_TIMES_COLS;
	memset(u, 0, n * sizeof(double));
	if (colabs != NULL)
		memset(colabs, 0, n * sizeof(double));
	for (size_t j0 = 0; j0 < n; j0 += width)
	{
		size_t		jb = n - j0 < width ? n - j0 : width;

		/*
		 * Blocks of rows of this column panel, small enough to stay in
		 * cache between the DGEMM that builds them and the two DGEMVs
		 * that use them: the diagonal block first (in full), then the
		 * blocks below it, which also serve transposed for the rows
		 * above the diagonal.
		 */
		for (size_t i0 = j0; i0 < n;)
		{
			size_t		ib = i0 == j0 ? jb : (n - i0 < KM_TIMES_ROWS ? n - i0 : KM_TIMES_ROWS);
			bool		below = i0 != j0;
			map_job		t = {k, &g, X, norms, B, colabs,
							 colabs != NULL && below ? rowabs[0] : NULL,
							 n, ib, i0, ib, j0, 0, jb, d, true};

			if (g.inner && !g.direct)
				cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, (int) ib,
							(int) jb, d, 1.0, X + i0 * (size_t) d, d,
							X + j0 * (size_t) d, d, 0.0, B, (int) ib);
			if (t.rowabs != NULL)
				memset(rowabs[0], 0, ib * sizeof(double));
			if (!map_block(&t, t.rowabs != NULL ? rowabs[1] : NULL))
				return false;
			/* the diagonal block is whole: its column sums are complete */
			if (t.rowabs != NULL)
				for (size_t r = 0; r < ib; r++)
					colabs[i0 + r] += rowabs[0][r];
			/* u[i0:i0+ib] += B w[j0:j0+jb] */
			cblas_dgemv(CblasColMajor, CblasNoTrans, (int) ib, (int) jb, 1.0, B,
						(int) ib, w + j0, 1, 1.0, u + i0, 1);
			/* below the diagonal block: u[j0:j0+jb] += B^T w[i0:i0+ib] */
			if (below)
				cblas_dgemv(CblasColMajor, CblasTrans, (int) ib, (int) jb, 1.0, B,
							(int) ib, w + i0, 1, 1.0, u + j0, 1);
			i0 += ib;
			km_check_interrupts(interrupt);
		}
	}
	return true;
}

bool
km_gram_times(const km_kernel *k, const double *X, size_t n, int d,
			  const double *norms, const double *w, double *u, double *B,
			  km_interrupt_fn interrupt)
{
	return gram_times_abs(k, X, n, d, norms, w, u, NULL, B, interrupt);
}

bool
km_gram_times_norm(const km_kernel *k, const double *X, size_t n, int d,
				   const double *norms, const double *w, double *u,
				   double *colabs, double *B, km_interrupt_fn interrupt)
{
	return gram_times_abs(k, X, n, d, norms, w, u, colabs, B, interrupt);
}

km_status
km_gram_overflow(const km_kernel *k, const double *K, size_t n, size_t ld,
				 km_error *err)
{
	for (size_t j = 0; j < n; j++)
		for (size_t i = j; i < n; i++)
			if (!isfinite(K[i + j * ld]))
				return km_fail(err, KM_ERR_OVERFLOW,
							   "kernel matrix entry is out of range for type double precision",
							   "The %s kernel of rows %zu and %zu (matrix entry (%zu, %zu)) overflowed.",
							   km_kernel_name(k->type), i + 1, j + 1, i + 1, j + 1);
	return km_fail(err, KM_ERR_OVERFLOW,
				   "kernel matrix entry is out of range for type double precision",
				   "An intermediate value of the %s kernel overflowed.",
				   km_kernel_name(k->type));
}

void
km_symmetrize(double *K, size_t n, size_t ld, km_interrupt_fn interrupt)
{
	/* tiles, so that both the reads and the strided writes stay in cache */
	const size_t tile = 64;

	for (size_t j0 = 0; j0 < n; j0 += tile)
	{
		size_t		j1 = j0 + tile < n ? j0 + tile : n;

		for (size_t i0 = j0; i0 < n; i0 += tile)
		{
			size_t		i1 = i0 + tile < n ? i0 + tile : n;

			for (size_t j = j0; j < j1; j++)
				for (size_t i = i0 > j + 1 ? i0 : j + 1; i < i1; i++)
					K[j + i * ld] = K[i + j * ld];
		}
		km_check_interrupts(interrupt);
	}
}

void
km_transpose(const double *X, size_t n, int d, double *Xt)
{
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < d; j++)
			Xt[(size_t) j * n + i] = X[i * (size_t) d + j];
}

/*
 * K(x_i, x) from the definition for rbf or cosine, training row i read
 * with stride n from feature-major Xt; false if an intermediate overflows.
 */
static bool
strided_eval(const km_kernel *k, const double *Xt, size_t n, int d, size_t i,
			 const double *x, double *out)
{
	if (k->type == KM_KERNEL_COSINE)
	{
		double		mx = 0.0;
		double		mz = max_abs(x, d);
		double		xz = 0.0;
		double		xx = 0.0;
		double		zz = 0.0;

		for (int j = 0; j < d; j++)
			mx = fmax(mx, fabs(Xt[(size_t) j * n + i]));
		if (mx == 0.0 || mz == 0.0)
		{
			*out = 0.0;
			return true;
		}
		for (int j = 0; j < d; j++)
		{
			double		a = Xt[(size_t) j * n + i] / mx;
			double		b = x[j] / mz;

			xz += a * b;
			xx += a * a;
			zz += b * b;
		}
		*out = xz / sqrt(xx * zz);
	}
	else
	{
		double		t = 0.0;

		for (int j = 0; j < d; j++)
		{
			double		e = Xt[(size_t) j * n + i] - x[j];

			t += e * e;
		}
		*out = exp(-k->gamma * t);
		if (!isfinite(t))
			return false;
	}
	return isfinite(*out);
}

/* km_kernel_row_dot for inner-product kernels: one DGEMV, then the map. */
static double
row_dot_inner(const km_kernel *k, const double *Xt, size_t n, int d,
			  const double *norms, const double *x, double xnorm,
			  const double *w, double *work)
{
	bool		direct = false;
	double		s = 0.0;

	/* the same safety rules as the Gram matrix (plan_gram) */
	if (k->type == KM_KERNEL_COSINE)
	{
		direct = !cosine_norm_safe(xnorm);
		for (size_t i = 0; i < n && !direct; i++)
			direct = !cosine_norm_safe(norms[i]);
	}
	else if (k->type == KM_KERNEL_RBF)
		direct = !(xnorm <= DBL_MAX / 8);

	if (!direct)
	{
		/* work = X x: Xt is d x n row-major, so this is X^T-free DGEMV */
		cblas_dgemv(CblasRowMajor, CblasTrans, d, (int) n, 1.0, Xt, (int) n,
					x, 1, 0.0, work, 1);
		/* an overflowed inner product must not reach the fast maps */
		if (!km_all_finite(work, n))
			return HUGE_VAL;
		s = km_map_inner_dot(k, work, n, norms, xnorm, w);
		/* rbf: training norms too large for the expanded form */
		if (isfinite(s) || k->type != KM_KERNEL_RBF)
			return s;
		s = 0.0;
	}

	for (size_t i = 0; i < n; i++)
	{
		double		v;

		if (!strided_eval(k, Xt, n, d, i, x, &v))
			return HUGE_VAL;
		s += w[i] * v;
	}
	return s;
}

double
km_kernel_row_dot(const km_kernel *k, const double *Xt, size_t n, int d,
				  const double *norms, const double *x, double xnorm,
				  const double *w, double *work)
{
	if (is_inner_product_kernel(k->type))
		return row_dot_inner(k, Xt, n, d, norms, x, xnorm, w, work);

	/* laplacian and min: one vectorised pass over the rows per feature */
	for (size_t i = 0; i < n; i++)
		work[i] = 0.0;
	for (int j = 0; j < d; j++)
	{
		if (k->type == KM_KERNEL_LAPLACIAN)
			km_accumulate_l1(work, Xt + (size_t) j * n, x[j], n);
		else
			km_accumulate_min(work, Xt + (size_t) j * n, x[j], n);
	}
	/* an overflowed distance or sum must not reach the fast maps */
	if (!km_all_finite(work, n))
		return HUGE_VAL;
	if (k->type == KM_KERNEL_LAPLACIAN)
		return km_exp_dot(work, n, k->gamma, w);
	return cblas_ddot((int) n, w, 1, work, 1);
}

/* The plan of a cross Gram matrix: the stricter of the plans of its two sides. */
static gram_plan
plan_cross(const km_kernel *k, const double *X, size_t rows,
		   const double *xnorms, const double *C, size_t m, int d,
		   const double *cnorms)
{
	gram_plan	a = plan_gram(k, X, rows, d, xnorms);
	gram_plan	b = plan_gram(k, C, m, d, cnorms);

	a.direct |= b.direct;
	a.check_raw |= b.check_raw;
	return a;
}

/* Row i of a cross Gram matrix, given its raw inner products in v (m). */
static bool
cross_row(const km_kernel *k, const gram_plan *g, const double *x,
		  double xnorm, const double *C, const double *Ct, size_t m, int d,
		  const double *cnorms, double *v)
{
	if (!g->inner)
	{
		memset(v, 0, m * sizeof(double));
		for (int f = 0; f < d; f++)
		{
			if (k->type == KM_KERNEL_LAPLACIAN)
				km_accumulate_l1(v, Ct + (size_t) f * m, x[f], m);
			else
				km_accumulate_min(v, Ct + (size_t) f * m, x[f], m);
		}
		/* an overflowed distance or sum must not reach the fast maps */
		if (!km_all_finite(v, m))
			return false;
		if (k->type == KM_KERNEL_LAPLACIAN)
			km_map_exp(v, m, k->gamma);
		return true;
	}
	if (g->direct)
		return pairwise_direct(k, C, m, d, x, v);
	if (g->check_raw && !km_all_finite(v, m))
	{
		if (k->type != KM_KERNEL_COSINE)
			return false;		/* an inner product overflowed: keep it */
		return pairwise_direct(k, C, m, d, x, v);
	}
	km_map_inner(k, v, m, cnorms, xnorm);
	/* only the polynomial maps can overflow from finite inner products */
	if (k->type == KM_KERNEL_POLY || k->type == KM_KERNEL_POLYSUM)
		return km_all_finite(v, m);
	return true;
}

bool
km_gram_cross(const km_kernel *k, const double *X, size_t rows,
			  const double *xnorms, const double *C, const double *Ct,
			  size_t m, int d, const double *cnorms, double *Z)
{
	gram_plan	g = plan_cross(k, X, rows, xnorms, C, m, d, cnorms);
	bool		ok = true;

	if (rows == 0 || m == 0)
		return true;
	/* Z = X C^T: rows x m, row-major */
	if (g.inner && !g.direct)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int) rows,
					(int) m, d, 1.0, X, d, C, d, 0.0, Z, (int) m);
	for (size_t i = 0; i < rows; i++)
		ok &= cross_row(k, &g, X + i * (size_t) d,
						xnorms ? xnorms[i] : 0.0, C, Ct, m, d, cnorms,
						Z + i * m);
	return ok;
}
