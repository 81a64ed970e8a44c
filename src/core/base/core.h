/*
 * core.h - definitions shared by the numerical core of kernel_ml.
 *
 * The core (kernels.c, solve.c, methods.c and a file per method, model.c) is plain C99: it includes no
 * PostgreSQL header, allocates nothing, and reports failures through a
 * km_error.  The PostgreSQL glue supplies all memory and an interrupt
 * callback, so an ERROR raised from that callback frees everything.
 */
#ifndef KM_CORE_H
#define KM_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum km_status
{
	KM_OK = 0,
	KM_ERR_INVALID,				/* bad argument or option value */
	KM_ERR_NOT_PD,				/* matrix not positive definite even with jitter */
	KM_ERR_DIVERGED,			/* iteration produced non-finite values */
	KM_ERR_FORMAT,				/* model bytes malformed or truncated */
	KM_ERR_VERSION,				/* model written by a newer format */
	KM_ERR_CHECKSUM,			/* model bytes fail their checksum */
	KM_ERR_OVERFLOW,			/* a value went beyond the range of a double */
	KM_ERR_INACCURATE			/* the solution does not solve its equations */
} km_status;

typedef struct km_error
{
	km_status	status;
	char		message[128];	/* short, lowercase, no final period */
	char		detail[256];	/* a full sentence */
	char		hint[192];		/* what to do; empty: the glue's hint for the status */
} km_error;

/*
 * Called between blocks of heavy work.  The glue passes a function that
 * runs CHECK_FOR_INTERRUPTS(); it may not return.
 */
typedef void (*km_interrupt_fn) (void);

/* Sets err and returns err->status; message and detail are printf formats. */
km_status	km_fail(km_error *err, km_status status, const char *message,
					const char *detailfmt,...)
			__attribute__((format(printf, 4, 5)));

/* qsort/bsearch order of doubles, ascending (no NaN: callers check). */
int			km_cmp_double(const void *a, const void *b);

static inline void
km_check_interrupts(km_interrupt_fn fn)
{
	if (fn)
		fn();
}

/*
 * Zero bytes at p in pieces of 64 MB, fn checked between them: a large
 * buffer's pages are touched no faster than a cancel is noticed.
 */
void		km_zero_pieces(void *p, size_t bytes, km_interrupt_fn fn);

/* Whether every v[i] is finite (an integer test, safe under -ffast-math). */
bool		km_all_finite(const double *v, size_t count);

/* The first row of Z (rows x m, row-major) with a value that is not finite; rows if none. */
size_t		km_first_nonfinite_row(const double *Z, size_t rows, size_t m);

#endif							/* KM_CORE_H */
