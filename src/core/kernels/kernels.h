/*
 * kernels.h - kernel functions, Gram matrices and kernel rows (core, no
 * PostgreSQL headers).
 *
 * Feature matrices are row-major: row i of an n x d matrix X is X + i * d.
 * Gram matrices are column-major (LAPACK order) with leading dimension ld.
 */
#ifndef KM_KERNELS_H
#define KM_KERNELS_H

#include "core.h"
#include "kernel_types.h"

/*
 * Columns of the Gram matrix computed per BLAS call and interrupt check:
 * km_gram_panel_width(n, d), at most KM_GRAM_PANEL, fewer when rows are
 * long (the work of a panel is rows x features x columns).  km_gram_lower
 * writes column j from row (j / width) * width down, a few rows above the
 * diagonal included.
 */
#define KM_GRAM_PANEL 256
size_t		km_gram_panel_width(size_t n, int d);

/* Name <-> type; km_kernel_from_name returns false for an unknown name. */
const char *km_kernel_name(km_kernel_type type);
bool		km_kernel_from_name(const char *name, km_kernel_type *type);

/* Bit mask of KM_PARAM_* that the kernel uses. */
unsigned	km_kernel_params(km_kernel_type type);

/*
 * The one rule of a kernel's parameters, for every reader of stored bytes
 * (model, basis, pass point, drift reference) and the options: a known
 * type, a degree from 1 to KM_MAX_DEGREE where the kernel uses one (the
 * polynomial maps cost O(degree) per entry), a finite gamma > 0 where it
 * uses one, a finite coef0 (and gamma) always.  NULL when k holds, else
 * the name of the first field that does not.
 */
#define KM_MAX_DEGREE 100
const char *km_kernel_invalid(const km_kernel *k);

/* K(x, z) for two d-vectors, straight from the definition. */
double		km_kernel_eval(const km_kernel *k, const double *x, const double *z,
						   int d);

/*
 * The same, returning false when the value or an intermediate (inner
 * product, distance) is not finite; *out is then that non-finite value.
 * cosine scales both vectors first, so it never overflows.
 */
bool		km_kernel_eval_finite(const km_kernel *k, const double *x,
								  const double *z, int d, double *out);

/*
 * Per-row quantity that the Gram and row routines reuse: the squared norm
 * for rbf (infinite if it overflows), the norm for cosine (scaled, never
 * overflows), nothing (norms may be NULL) otherwise.
 */
bool		km_kernel_uses_norms(km_kernel_type type);
void		km_row_norms(const km_kernel *k, const double *X, size_t n, int d,
						 double *norms);

/*
 * Lower triangle (diagonal included) of the n x n Gram matrix of the rows
 * of X, written into column-major K with leading dimension ld >= n.  Built
 * in column panels (BLAS level 3 for inner-product kernels), calling
 * interrupt between panels.  Entries above the diagonal are unspecified.
 * Returns false if an entry (or the intermediate it came from, which the
 * entry then holds) is not finite: km_gram_overflow names it.  Entries
 * whose fast form would lose range (rbf of rows with huge norms, cosine of
 * huge or tiny rows) are computed from the definition instead.
 */
bool		km_gram_lower(const km_kernel *k, const double *X, size_t n, int d,
						  const double *norms, double *K, size_t ld,
						  km_interrupt_fn interrupt);

/*
 * u := K w for the n x n Gram matrix K of the rows of X, without storing
 * K: blocks of KM_TIMES_ROWS x KM_TIMES_COLS are built into B (that many
 * doubles) and used at once, each block below the diagonal twice (K is
 * symmetric), so this costs half a Gram matrix.  false if an entry is not
 * finite.
 */
#define KM_TIMES_COLS 256
#define KM_TIMES_ROWS 1024
bool		km_gram_times(const km_kernel *k, const double *X, size_t n, int d,
						  const double *norms, const double *w, double *u,
						  double *B, km_interrupt_fn interrupt);

/*
 * km_gram_times that also sets colabs[j] := sum_i |K_ij| (n doubles), in
 * the same pass: the largest is the 1-norm of K, for a condition estimate.
 * With BLAS on two threads or more, a second thread maps half of each
 * large block (signals blocked, joined before interrupt is called).
 */
bool		km_gram_times_norm(const km_kernel *k, const double *X, size_t n,
							   int d, const double *norms, const double *w,
							   double *u, double *colabs, double *B,
							   km_interrupt_fn interrupt);

/* KM_ERR_OVERFLOW naming the first non-finite entry of K's lower triangle. */
km_status	km_gram_overflow(const km_kernel *k, const double *K, size_t n,
							 size_t ld, km_error *err);

/*
 * Copy the lower triangle of column-major K onto the upper one, calling
 * interrupt between column tiles.
 */
void		km_symmetrize(double *K, size_t n, size_t ld,
						  km_interrupt_fn interrupt);

/*
 * A cache of Gram matrix columns computed when asked for (the exact SVM's
 * SMO reads two columns per iteration and, with shrinking, never needs
 * most of them), as libsvm's kernel cache: at most `slots` columns are kept
 * (the least recently used one is recomputed when needed again).  On
 * virtual machines that back memory lazily a fresh page costs more than
 * computing the kernel values it holds (a column of 10,000 rows: about
 * 0.3 ms to touch, 0.05 ms to compute), so a bounded cache that reuses its
 * pages beats the full n x n matrix.  A column, all n rows, is computed as
 * km_gram_lower computes its part (one DGEMV, then the same map: equal to
 * the full matrix's column to rounding) into slot space K + slot * ld, its
 * pages populated first on a slot's first use (MADV_POPULATE_WRITE where
 * Linux has it).  The same column always gets the same bits.  Only for
 * kernels whose entries cannot overflow from finite rows
 * (km_gram_cols_supported: rbf).
 */
typedef struct km_gram_cols
{
	const km_kernel *k;
	const double *X;			/* n x d, row-major */
	size_t		n;
	int			d;
	const double *norms;		/* km_row_norms */
	double	   *K;				/* slots x ld */
	size_t		ld;
	size_t		slots;
	size_t		used;			/* slots holding a column */
	uint32_t   *slot_of;		/* n: the column's slot, or UINT32_MAX */
	uint32_t   *col_of;			/* slots: the slot's column */
	uint64_t   *stamp;			/* slots: last use */
	uint64_t	clock;
	size_t		computed;		/* columns computed so far (misses) */
	bool		direct;			/* entries from the definition (huge norms) */
} km_gram_cols;

/*
 * Default bytes of a column cache (the slots are at least 2 and at most n).
 * n = 10,000 exact svm fit (test/bench/svm_core, columns on demand): 0.74 s
 * with 64 MB (3,301 columns computed), 0.73-0.86 s with 48 MB (5,009),
 * 0.78-1.18 s with 96 MB, 1.2-1.8 s with 256 MB (2,883): beyond ~64 MB the
 * fresh pages cost more than recomputing the columns they would keep.
 */
#define KM_GRAM_COLS_BYTES ((size_t) 64 << 20)

bool		km_gram_cols_supported(const km_kernel *k);

/* Slots of a cache of `bytes` for n rows: within [2, n]. */
size_t		km_gram_cols_slots(size_t n, size_t bytes);

/* Doubles of workspace besides K: the slot tables. */
size_t		km_gram_cols_table_doubles(size_t n, size_t slots);

void		km_gram_cols_init(km_gram_cols *c, const km_kernel *k,
							  const double *X, size_t n, int d,
							  const double *norms, double *K, size_t ld,
							  size_t slots, double *tables);

/*
 * Column j of K (n entries), computed if not cached.  The pointer stays
 * valid until two other columns have been asked for since.
 */
const double *km_gram_cols_get(km_gram_cols *c, size_t j);

/* K(x_j, x_j) as column j holds it, without computing the column. */
double		km_gram_cols_diag(const km_gram_cols *c, size_t j);

/* Xt := X^T: from n rows of d features to d rows of n values. */
void		km_transpose(const double *X, size_t n, int d, double *Xt);

/*
 * sum_i w[i] K(X_i, x) for n training rows stored feature-major (Xt as from
 * km_transpose), the layout in which the kernel row is a single DGEMV for
 * inner-product kernels and d vectorised passes for laplacian and min.
 * norms as from km_row_norms on the rows, xnorm as from km_vector_norm;
 * work has n doubles.  Not finite (HUGE_VAL) if an intermediate overflows.
 */
double		km_kernel_row_dot(const km_kernel *k, const double *Xt, size_t n,
							  int d, const double *norms, const double *x,
							  double xnorm, const double *w, double *work);

/* The per-row quantity of km_row_norms for a single vector. */
double		km_vector_norm(const km_kernel *k, const double *x, int d);

/*
 * The rectangular cross Gram matrix Z (rows x m, row-major: row i at
 * Z + i * m) with Z[i][j] = K(X_i, C_j) for rows X (rows x d) and centres
 * C (m x d), both row-major: one DGEMM and the element-wise map of
 * kernel_maps.c for the inner-product kernels (xnorms, cnorms as from
 * km_row_norms on X and C, NULL for kernels without norms), a vectorised
 * pass per feature over the transposed centres Ct (d x m, as from
 * km_transpose(C, m, d, Ct)) for laplacian and min (Ct may be NULL for
 * the others).  The same range rules as km_gram_lower: entries whose fast
 * form would lose range are computed from the definition.  Returns false
 * if an entry (or its intermediate, which the entry then holds) is not
 * finite.  No interrupt check: callers pass blocks of bounded work.
 */
bool		km_gram_cross(const km_kernel *k, const double *X, size_t rows,
						  const double *xnorms, const double *C,
						  const double *Ct, size_t m, int d,
						  const double *cnorms, double *Z);

#endif							/* KM_KERNELS_H */
