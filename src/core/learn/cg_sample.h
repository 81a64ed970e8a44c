/*
 * cg_sample.h - the row sample of "solver": "cg"'s preconditioner (issue
 * 31): the rows whose hash is at most a threshold (a Bernoulli sample by
 * the row's hash, so the same rows in any order, any parallel plan and any
 * shard count), each with its target, handed out sorted by hash, then
 * values.  Identical rows
 * share a hash, so they are in or out together; where more rows than the
 * capacity fall below the threshold (many copies of a few rows) the state
 * says it overflowed and keeps no more: whether it overflows depends only
 * on the rows, and the caller then uses Falkon's preconditioner instead of
 * a sample that would over-represent the copied rows.  The state of the
 * pass "cg: preconditioner sample" (pipeline_approx_cg.c), untrusted when
 * a host hands it back: checked before every use.
 */
#ifndef KM_LEARN_CG_SAMPLE_H
#define KM_LEARN_CG_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core.h"

#define KM_CG_SAMPLE_MAGIC 0x53474D4BU	/* "KMGS" */

typedef struct km_cg_sample
{
	uint32_t	magic;
	uint32_t	capacity;		/* rows kept at most */
	uint32_t	d;
	uint32_t	n;				/* rows kept */
	uint64_t	threshold;		/* rows of hash <= threshold are offered */
	uint32_t	overflowed;		/* 1: more rows than capacity fell below threshold */
	uint32_t	pad;
	double		data[];			/* hashes[capacity] (uint64), rows[capacity][d + 1] (features, target) */
} km_cg_sample;

/*
 * The rows to sample of n for a preconditioner of m centres and d features
 * (0: none, Falkon's own preconditioner): up to 64 m, as many as cost at
 * most about four passes over the n rows (the sample's m^2 sums and the
 * two triangular solves) and one m x m factor's memory (64 MiB at least); 0 below 4 m,
 * where a sample is no better than the centres themselves.
 */
uint32_t	km_cg_sample_rows(uint32_t m, uint32_t d, size_t n);

/* Bytes the sample's pass and sort hold at most (0: no sample), for a plan. */
double		km_cg_sample_plan_bytes(uint32_t m, uint32_t d, size_t n);

/* The state's capacity for an expected count e (room for the count's spread). */
uint32_t	km_cg_sample_capacity(uint32_t e);

/* The hash threshold that keeps e of n rows in expectation. */
uint64_t	km_cg_sample_threshold(uint32_t e, size_t n);

/* Bytes of a state of capacity rows of d features; 0 on overflow. */
size_t		km_cg_sample_bytes(uint32_t capacity, uint32_t d);

void		km_cg_sample_init(km_cg_sample *s, uint32_t capacity, uint32_t d,
							  uint64_t threshold);

/*
 * Is s (bytes long, from a host) a state of this capacity, d and threshold,
 * its count within its capacity?  KM_ERR_INVALID with the difference if not.
 */
km_status	km_cg_sample_check(const km_cg_sample *s, size_t bytes, uint32_t capacity,
							   uint32_t d, uint64_t threshold, km_error *err);

/*
 * The first kept row with a feature or target not finite (s->n: none): a
 * state from a host is checked once, whole, before its rows are used.
 */
uint32_t	km_cg_sample_first_nonfinite(const km_cg_sample *s);

/* Offer row x (d values), target y, of hash: kept if hash <= threshold and it fits, else overflowed. */
void		km_cg_sample_offer(km_cg_sample *s, const double *x, double y, uint64_t hash);

/* a += b (both checked): b's rows offered to a, overflowed if either is. */
void		km_cg_sample_combine(km_cg_sample *a, const km_cg_sample *b);

/*
 * X (s->n x d), y (s->n) := the rows kept and their targets, sorted by
 * hash, then features, then target; scratch of
 * km_cg_sample_sort_bytes(s->capacity) bytes.  Returns s->n.
 */
size_t		km_cg_sample_sort_bytes(uint32_t capacity);
uint32_t	km_cg_sample_sorted(const km_cg_sample *s, double *X, double *y, void *scratch);

#endif							/* KM_LEARN_CG_SAMPLE_H */
