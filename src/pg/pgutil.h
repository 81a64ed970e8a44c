/*
 * pgutil.h - PostgreSQL glue shared by the SQL entry points: GUCs, error
 * reporting for core failures, feature arrays, memory limits.
 */
#ifndef KM_PGUTIL_H
#define KM_PGUTIL_H

#include "postgres.h"

#include "utils/array.h"

#include "core.h"

/* GUCs (kernel_ml.c) */
#define KM_DEFAULT_MAX_MEMORY_KB (4 * 1024 * 1024)	/* 4 GB, in kB */

/* The settings (kernel_ml.c defines them as GUCs; defined in pgutil.c) */
extern int	km_max_memory_kb;
extern int	km_max_memory_limit_kb;
extern int	km_blas_threads;
extern int	km_blas_threads_limit;

/* Online cores (sysconf), at least 1. */
int			km_online_cores(void);

/* Most BLAS threads: kernel_ml.blas_threads_limit (0: the cores), at most the cores. */
int			km_blas_threads_ceiling(void);

/* BLAS threads kernel_ml work uses: kernel_ml.blas_threads, capped. */
int			km_blas_threads_effective(void);

/* Raise err as an ERROR with the SQLSTATE that fits its status. */
pg_attribute_noreturn() void km_raise(const km_error *err);

/*
 * The probability link of a classifier (method.h's prob_link); raises
 * 0A000 "model gives no probabilities", with the method's hint, when it has
 * none.  Shared by the scoring functions that take a model and by name.
 */
struct km_model;
int			km_model_prob_link_or_raise(const struct km_model *m);

/* CHECK_FOR_INTERRUPTS() as a core callback. */
void		km_interrupt(void);

/* Apply kernel_ml.blas_threads before a block of BLAS work. */
void		km_blas_setup(void);
void		km_blas_setup_scoring(void);
void		km_blas_setup_chunk(void);

/*
 * Length of a feature array after checking it is one-dimensional, float8
 * and free of NULL elements; what names the array in errors ("row 7").
 */
int			km_array_length(ArrayType *arr, const char *what);

/* Copy d features out of arr into out, rejecting NaN and infinity. */
void		km_array_copy(ArrayType *arr, int d, double *out, const char *what);

/*
 * Memory ceilings hold per backend (each parallel worker is one): the
 * smaller of kernel_ml.max_memory and kernel_ml.max_memory_limit bounds
 * what every kernel_ml allocation of significant size in this process holds
 * at once, not one call.  Aggregate states, row buffers, per-call caches
 * and kernel matrices register a grant when they are allocated and give it
 * back when their memory context is reset or deleted (a
 * MemoryContextCallback), so an error or an abort returns the count to
 * what the surviving contexts hold.
 */
typedef struct KmMemGrant KmMemGrant;

/*
 * Refuse, before allocating, work that needs bytes more than this backend's
 * kernel_ml allocations already hold allows under the ceiling; what says
 * what needs it, at_least that more rows may still come.  Nothing is
 * counted: for temporary work freed before the call returns.
 */
void		km_check_memory(double bytes, const char *what, bool at_least);

/* The same, the hint naming fewer (say "fewer components") instead of fewer rows (NULL: rows). */
void		km_check_memory_fewer(double bytes, const char *what, bool at_least,
								  const char *fewer);

/* fewer for a size driven by "components": "solver": "cg"'s m x m factors. */
#define KM_FEWER_CG_COMPONENTS \
	"fewer \"components\" (a \"solver\": \"cg\" training holds m x m factors, not its rows)"

/* Whether bytes more would fit under the ceiling now (no error). */
bool		km_memory_fits(double bytes);

/* Bytes still free under the ceiling (negative when above it). */
double		km_memory_room(void);

/* Bytes this backend's kernel_ml grants hold now. */
double		km_memory_held(void);

/*
 * Check bytes as km_check_memory, then count them as held until ctx is
 * reset or deleted (or km_mem_release).  The grant lives in ctx.
 */
KmMemGrant *km_mem_reserve(MemoryContext ctx, double bytes, const char *what,
						   bool at_least);

/*
 * Change what a grant holds to bytes (g NULL: a new grant in ctx); growth
 * is checked against the ceiling, less what g held already.  Returns g.
 */
KmMemGrant *km_mem_resize(KmMemGrant *g, MemoryContext ctx, double bytes,
						  const char *what, bool at_least);

/* Give a grant's bytes back before its context goes. */
void		km_mem_release(KmMemGrant *g);

/*
 * The same for exact training, whose n x n matrix grows with the rows:
 * the hint also names "approximation": "nystrom" with an example.
 */
void		km_check_exact_memory(double bytes, const char *what, bool at_least);

/*
 * Refuse an exact training of n rows that needs bytes in all (the plan's
 * formula for the whole input, known once every row is counted): the
 * whole need, and "approximation" first when no setting or no machine
 * holds it.
 */
void		km_refuse_exact_rows(double bytes, double n, const char *what)
			pg_attribute_noreturn();

/*
 * Refuse m components (option "components") whose m x m work alone cannot
 * fit under the ceiling, before any row is read; the hint gives how many
 * would.
 */
void		km_check_components_memory(uint32 m, const char *what);

/* The virtual memory page size, from sysconf(_SC_PAGESIZE). */
Size		km_page_size(void);

/*
 * A large zeroed buffer whose pages are mapped up front, freed (unmapped)
 * when CurrentMemoryContext is reset or deleted, ERROR included.
 */
void	   *km_alloc_prefaulted(Size bytes);

/*
 * The same split in two: km_alloc_reserved maps the buffer without
 * populating it, km_populate maps the pages of part of it up front
 * (rounded out to whole pages).  Populate a part before writing to it.
 */
void	   *km_alloc_reserved(Size bytes);
void		km_populate(void *addr, Size len);

/* Several parts at once, rounded out to pages (the array is updated). */
typedef struct KmRange
{
	char	   *start;
	char	   *end;
} KmRange;
void		km_populate_ranges(KmRange *ranges, int count);

/* Release such a buffer before its context goes. */
void		km_free_prefaulted(void *addr);

/*
 * Zero len bytes at p in pieces of at most 16 MB, CHECK_FOR_INTERRUPTS()
 * before each: the set-up of a large buffer (hundreds of megabytes of
 * fresh pages faulted in) stays cancellable.
 */
void		km_zero_interruptible(void *p, Size len);

/*
 * A zeroed buffer of bytes (huge allowed) in ctx, zeroed by
 * km_zero_interruptible; count it first (km_mem_reserve).
 */
void	   *km_alloc0_interruptible(MemoryContext ctx, Size bytes);

/* Human-readable size, as pg_size_pretty prints it. */
char	   *km_size_pretty(double bytes);

#endif							/* KM_PGUTIL_H */
