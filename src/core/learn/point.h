/*
 * point.h - a pass's point as bytes (core, no PostgreSQL headers): a
 * writer that appends fixed-width values and a reader that takes them
 * back from untrusted bytes, never past their end (learn/pass.h kind,
 * learner.h km_pass_rebuild).  Values are in the writer's byte order: the
 * aggregate host's descriptor records it, and a reader of another order
 * refuses the descriptor before a point is read.
 */
#ifndef KM_LEARN_POINT_H
#define KM_LEARN_POINT_H

#include <string.h>

#include "core.h"

typedef struct km_point_writer
{
	unsigned char *p;			/* NULL: count only */
	size_t		len;
} km_point_writer;

typedef struct km_point_reader
{
	const unsigned char *p;
	size_t		left;
	bool		bad;			/* a read went past the end */
} km_point_reader;

static inline void
km_point_put(km_point_writer *w, const void *v, size_t bytes)
{
	if (w->p != NULL && bytes > 0)
		memcpy(w->p + w->len, v, bytes);
	w->len += bytes;
}

static inline void
km_point_put_u32(km_point_writer *w, uint32_t v)
{
	km_point_put(w, &v, sizeof(v));
}

static inline void
km_point_put_u64(km_point_writer *w, uint64_t v)
{
	km_point_put(w, &v, sizeof(v));
}

static inline void
km_point_put_f64(km_point_writer *w, double v)
{
	km_point_put(w, &v, sizeof(v));
}

/* n doubles, their count first */
static inline void
km_point_put_doubles(km_point_writer *w, const double *v, size_t n)
{
	km_point_put_u64(w, (uint64_t) n);
	km_point_put(w, v, n * sizeof(double));
}

static inline bool
km_point_get(km_point_reader *r, void *v, size_t bytes)
{
	if (r->bad || bytes > r->left)
	{
		r->bad = true;
		memset(v, 0, bytes);
		return false;
	}
	memcpy(v, r->p, bytes);
	r->p += bytes;
	r->left -= bytes;
	return true;
}

static inline uint32_t
km_point_get_u32(km_point_reader *r)
{
	uint32_t	v;

	km_point_get(r, &v, sizeof(v));
	return v;
}

static inline uint64_t
km_point_get_u64(km_point_reader *r)
{
	uint64_t	v;

	km_point_get(r, &v, sizeof(v));
	return v;
}

static inline double
km_point_get_f64(km_point_reader *r)
{
	double		v;

	km_point_get(r, &v, sizeof(v));
	return v;
}

/*
 * A run of doubles written by km_point_put_doubles: its count must be
 * want (else the reader goes bad); the values in place (unaligned: copy
 * them with km_point_copy_doubles).
 */
static inline const unsigned char *
km_point_get_doubles(km_point_reader *r, size_t want)
{
	const unsigned char *at;

	if (km_point_get_u64(r) != (uint64_t) want || r->bad ||
		want > r->left / sizeof(double))
	{
		r->bad = true;
		return NULL;
	}
	at = r->p;
	r->p += want * sizeof(double);
	r->left -= want * sizeof(double);
	return at;
}

/* n doubles of the reader into out; false when one is not finite */
static inline bool
km_point_copy_doubles(double *out, const unsigned char *at, size_t n)
{
	memcpy(out, at, n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		if (!(out[i] - out[i] == 0.0))
			return false;
	return true;
}

/*
 * The parts of points that more than one road writes (learn/point.c): a
 * method's fit parameters (the method by its registry id, its own options
 * checked against their ranges) and the one Newton's point (its outputs,
 * coefficients, intercepts, which outputs still solve, its loss's
 * parameters).  km_point_get_newton points nt's buffers at new memory of
 * alloc (block rows a chunk, extra doubles of the pass's tally after the
 * sums, as km_newton_buffers) and checks m against want_m.
 */
struct km_fit_params;
struct km_newton;

void		km_point_put_fit(km_point_writer *w, const struct km_fit_params *p);
km_status	km_point_get_fit(km_point_reader *r, struct km_fit_params *p, km_error *err);
void		km_point_put_newton(km_point_writer *w, const struct km_newton *nt);
km_status	km_point_get_newton(km_point_reader *r, struct km_newton *nt, uint32_t want_m,
								size_t block, size_t extra,
								void *(*alloc) (void *ctx, size_t bytes), void *ctx,
								km_error *err);

/* KM_ERR_FORMAT for a point that is not one (what names the pass's kind). */
km_status	km_point_bad(km_error *err, const char *what);

#endif							/* KM_LEARN_POINT_H */
